/* Complete-output validation against the FP64 oracle (docs/accuracy.md):
 * tolerance receipts (exact for dyadic inputs) and contract receipts (the
 * precision mode's componentwise bound and Frobenius limit). Both compare
 * NaN/Inf classes with the reference rounded to float, so special inputs are
 * judged by class and a non-finite output never passes a finite reference.
 * Rows are checked in parallel chunks on large outputs; partial receipts
 * merge in chunk order, so the result does not depend on thread timing.
 * A row that is all finite and all passing (the common case) takes a
 * vectorized path with the same arithmetic and the same order of the
 * Frobenius sums: the receipt is bit-identical either way
 * (tests/core/test_oracle.c). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/inputs.h"
#include "core/par.h"

typedef struct {
  const tsr_problem *p;
  const float *c;
  const double *ref;
  const float *scale; /* contract receipts only */
  double atol, rtol;
  double coef, under; /* contract: bound = coef * scale + under */
  int contract;
  int64_t ldc, sc;
  tsr_receipt part[TSR__PAR_MAX];
  double err2[TSR__PAR_MAX], ref2[TSR__PAR_MAX];
} validate_job;

/* 0 finite, 1 +Inf, 2 -Inf, 3 NaN. */
static int fclass(float x) {
  if (isnan(x)) return 3;
  if (isinf(x)) return x > 0 ? 1 : 2;
  return 0;
}

/* One output row, element by element: every case (special references,
 * non-finite outputs, failures). */
static void slow_row(const validate_job *j, int64_t g, const float *crow, const double *rrow,
                     tsr_receipt *r, double *err2, double *ref2) {
  const tsr_problem *p = j->p;
  for (int64_t x = 0; x < p->n; x++) {
    double want = rrow[x];
    float gotf = crow[x];
    int want_class = fclass((float)want), got_class = fclass(gotf);
    int ok;
    r->checked++;
    if (want_class != 0) { /* a special reference: judged by class alone */
      ok = got_class == want_class;
      if (!ok) r->class_failed++;
    } else if (got_class != 0) {
      ok = 0;
      r->class_failed++;
      r->max_abs_err = INFINITY;
      r->max_rel_err = INFINITY;
      *err2 = INFINITY;
      *ref2 += want * want;
    } else {
      double err = fabs((double)gotf - want);
      if (j->contract) {
        double bound = j->coef * (double)j->scale[g * p->n + x] + j->under;
        double ratio = err <= bound ? (bound > 0 ? err / bound : 0.0) : (bound > 0 ? err / bound : INFINITY);
        ok = err <= bound;
        if (!ok) r->bound_failed++;
        if (ratio > r->worst_bound_ratio) r->worst_bound_ratio = ratio;
      } else {
        ok = err <= j->atol + j->rtol * fabs(want);
      }
      if (err > r->max_abs_err) r->max_abs_err = err;
      double rel = want != 0.0 ? err / fabs(want) : (err == 0.0 ? 0.0 : INFINITY);
      if (rel > r->max_rel_err) r->max_rel_err = rel;
      *err2 += err * err;
      *ref2 += want * want;
    }
    if (!ok) {
      if (r->failed == 0) r->first_fail = g * p->n + x;
      r->failed++;
    }
  }
}

/* Two lanes of GCC/clang vector extensions, one SSE2 register on any
 * x86-64 (wider types spill there): the compiler does not vectorize the
 * scalar loop itself, as its max reductions are not IEEE-safe to reorder in
 * general. Here they are: every value compared is finite. */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2l __attribute__((vector_size(16)));

static inline v2d sel(v2l m, v2d a, v2d b) { return (v2d)((m & (v2l)a) | (~m & (v2l)b)); }
static inline v2d vabs(v2d x) { return (v2d)((v2l)x & (v2l){INT64_MAX, INT64_MAX}); }
static inline v2d vmax(v2d m, v2d x) { return sel(x > m, x, m); }
static inline double hmax(v2d v, double m) {
  m = v[0] > m ? v[0] : m;
  return v[1] > m ? v[1] : m;
}

/* (float)x is finite exactly when |x| is below FLT_MAX + half its ulp
 * (ties round to even: the half-way point itself rounds to infinity). */
#define FLOAT_FINITE_BELOW 0x1.ffffffp127

/* The common case of a row: every reference finite as a float, every output
 * finite and every element passing. Element by element slow_row's
 * arithmetic, two lanes at a time; the Frobenius sums then run in element
 * order as there, so the receipt is bit-identical. Returns 0, changing
 * nothing, when any element needs slow_row. */
#define FAST_BLOCK 256
static int fast_row(const validate_job *j, const float *crow, const double *rrow,
                    const float *srow, int64_t n, tsr_receipt *r, double *err2, double *ref2) {
  double e[FAST_BLOCK];
  double max_abs = r->max_abs_err, max_rel = r->max_rel_err, worst = r->worst_bound_ratio;
  double s_err = *err2, s_ref = *ref2;
  const v2d zero = {0, 0}, inf = {INFINITY, INFINITY}, big = {FLOAT_FINITE_BELOW, FLOAT_FINITE_BELOW};
  const v2d atol = {j->atol, j->atol}, rtol = {j->rtol, j->rtol}, coef = {j->coef, j->coef},
            under = {j->under, j->under};
  for (int64_t x0 = 0; x0 < n; x0 += FAST_BLOCK) {
    int len = n - x0 < FAST_BLOCK ? (int)(n - x0) : FAST_BLOCK, i = 0;
    const float *c = crow + x0, *sc = j->contract ? srow + x0 : NULL;
    const double *w = rrow + x0;
    v2l good = {-1, -1};
    v2d vabs_m = zero, vrel_m = zero, vworst = zero; /* errors are >= 0 */
    for (; i + 2 <= len; i += 2) {
      v2d wd, gd = {c[i], c[i + 1]};
      memcpy(&wd, w + i, sizeof wd);
      v2d err = vabs(gd - wd), aw = vabs(wd);
      good &= (aw < big) & (gd - gd == zero); /* x - x == 0: x finite */
      if (sc) {
        v2d bound = coef * (v2d){sc[i], sc[i + 1]} + under;
        good &= err <= bound;
        vworst = vmax(vworst, sel(bound > zero, err / bound, zero));
      } else {
        good &= err <= atol + rtol * aw;
      }
      v2d rel = sel(wd != zero, err / aw, sel(err == zero, zero, inf));
      vabs_m = vmax(vabs_m, err);
      vrel_m = vmax(vrel_m, rel);
      memcpy(e + i, &err, sizeof err);
    }
    int any = (good[0] & good[1]) != -1;
    for (; i < len; i++) { /* the odd element, as one lane */
      double err = fabs((double)c[i] - w[i]), aw = fabs(w[i]);
      any |= !(aw < FLOAT_FINITE_BELOW) | !((double)c[i] - (double)c[i] == 0.0);
      if (sc) {
        double bound = j->coef * (double)sc[i] + j->under;
        any |= !(err <= bound);
        if (bound > 0 && err / bound > worst) worst = err / bound;
      } else {
        any |= !(err <= j->atol + j->rtol * aw);
      }
      double rel = w[i] != 0.0 ? err / aw : (err == 0.0 ? 0.0 : INFINITY);
      if (err > max_abs) max_abs = err;
      if (rel > max_rel) max_rel = rel;
      e[i] = err;
    }
    if (any) return 0;
    max_abs = hmax(vabs_m, max_abs);
    max_rel = hmax(vrel_m, max_rel);
    worst = hmax(vworst, worst);
    for (i = 0; i < len; i++) { /* element order, as slow_row */
      s_err += e[i] * e[i];
      s_ref += w[i] * w[i];
    }
  }
  r->checked += n;
  r->max_abs_err = max_abs;
  r->max_rel_err = max_rel;
  r->worst_bound_ratio = worst;
  *err2 = s_err;
  *ref2 = s_ref;
  return 1;
}

/* Output rows g in [g0, g1) of batch*m. */
static void validate_rows(void *arg, int chunk, int64_t g0, int64_t g1) {
  validate_job *j = arg;
  const tsr_problem *p = j->p;
  tsr_receipt *r = &j->part[chunk];
  *r = (tsr_receipt){0};
  r->first_fail = -1;
  double err2 = 0.0, ref2 = 0.0;
  for (int64_t g = g0; g < g1; g++) {
    int64_t b = g / p->m, i = g % p->m;
    const float *crow = j->c + b * j->sc + i * j->ldc;
    const double *rrow = j->ref + g * p->n;
    const float *srow = j->contract ? j->scale + g * p->n : NULL;
    if (!fast_row(j, crow, rrow, srow, p->n, r, &err2, &ref2))
      slow_row(j, g, crow, rrow, r, &err2, &ref2);
  }
  j->err2[chunk] = err2;
  j->ref2[chunk] = ref2;
}

static void run(validate_job *j, tsr_receipt *r) {
  const tsr_problem *p = j->p;
  int64_t cr, cc;
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &j->ldc, &j->sc);
  int n = tsr__parallel_rows(p->batch * p->m, (double)(p->batch * p->m) * (double)p->n,
                             validate_rows, j);
  double err2 = 0.0, ref2 = 0.0;
  for (int k = 0; k < n; k++) { /* chunk order: deterministic merge */
    const tsr_receipt *q = &j->part[k];
    if (q->failed && r->failed == 0) r->first_fail = q->first_fail;
    r->failed += q->failed;
    r->checked += q->checked;
    r->bound_failed += q->bound_failed;
    r->class_failed += q->class_failed;
    if (q->max_abs_err > r->max_abs_err) r->max_abs_err = q->max_abs_err;
    if (q->max_rel_err > r->max_rel_err) r->max_rel_err = q->max_rel_err;
    if (q->worst_bound_ratio > r->worst_bound_ratio) r->worst_bound_ratio = q->worst_bound_ratio;
    err2 += j->err2[k];
    ref2 += j->ref2[k];
  }
  r->rel_fro_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  r->passed = r->failed == 0 && r->checked == p->batch * p->m * p->n;
}

static validate_job *job_new(const tsr_problem *p, const float *c, const double *ref,
                             tsr_receipt *r) {
  static validate_job zero;
  *r = (tsr_receipt){0};
  r->first_fail = -1;
  r->contract = TSR_PREC_AUTO;
  r->strict_rel_fro = NAN;
  r->fro_limit = NAN;
  validate_job *j = malloc(sizeof *j);
  if (!j) { /* cannot check: never pass */
    r->failed = 1;
    return NULL;
  }
  *j = zero;
  j->p = p;
  j->c = c;
  j->ref = ref;
  return j;
}

void tsr_validate(const tsr_problem *p, const float *c, const double *ref, double atol,
                  double rtol, tsr_receipt *r) {
  validate_job *j = job_new(p, c, ref, r);
  r->atol = atol;
  r->rtol = rtol;
  if (!j) return;
  j->atol = atol;
  j->rtol = rtol;
  run(j, r);
  free(j);
}

void tsr_validate_contract(const tsr_problem *p, const float *c, const double *ref,
                           const float *scale, double strict_rel_fro, tsr_precision mode,
                           tsr_receipt *r) {
  validate_job *j = job_new(p, c, ref, r);
  r->atol = r->rtol = NAN;
  r->contract = mode == TSR_PREC_TF32     ? TSR_PREC_TF32
                : mode == TSR_PREC_FP32X3 ? TSR_PREC_FP32X3
                : mode == TSR_PREC_OZAKI  ? TSR_PREC_OZAKI
                                          : TSR_PREC_STRICT;
  r->strict_rel_fro = strict_rel_fro;
  if (!j) return;
  if (!scale) { /* no bound to check against: never pass */
    free(j);
    r->failed = 1;
    return;
  }
  const double u = 0x1p-24, kc = (double)p->k + TSR_CONTRACT_C0;
  j->contract = 1;
  j->scale = scale;
  /* Higham-form bound (K + C0) u |alpha||A||B| + ..., plus TF32's operand
   * rounding, plus an underflow allowance of K + 2 smallest subnormals. */
  j->coef = r->contract == TSR_PREC_TF32 ? TSR_CONTRACT_TF32_ELEM + kc * u : kc * u;
  j->under = ((double)p->k + 2.0) * 0x1p-149;
  run(j, r);
  free(j);
  /* The Frobenius clause: against the strict reference's error (FP32), or
   * TF32's fixed limit; not applied to fewer than MIN_ELEMS outputs, whose
   * Frobenius ratio is a handful of roundings, not a statistic. */
  if (r->checked >= TSR_CONTRACT_FRO_MIN_ELEMS) {
    if (r->contract == TSR_PREC_TF32) r->fro_limit = TSR_CONTRACT_TF32_FRO;
    else if (isfinite(strict_rel_fro)) r->fro_limit = TSR_CONTRACT_FRO_SLACK * strict_rel_fro;
    else r->fro_limit = NAN; /* unknown strict error: cannot be met */
    if (!(r->rel_fro_err <= r->fro_limit)) r->passed = 0;
  }
}
