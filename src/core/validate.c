/* Complete-output validation against the FP64 oracle; NaN/Inf never pass.
 * Rows are checked in parallel chunks on large outputs; partial receipts
 * merge in chunk order, so the result does not depend on thread timing. */
#include <math.h>
#include <stdlib.h>

#include "core/context.h"
#include "core/inputs.h"
#include "core/par.h"

typedef struct {
  const tsr_problem *p;
  const float *c;
  const double *ref;
  double atol, rtol;
  int64_t ldc, sc;
  tsr_receipt part[TSR__PAR_MAX];
  double err2[TSR__PAR_MAX], ref2[TSR__PAR_MAX];
} validate_job;

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
    for (int64_t x = 0; x < p->n; x++) {
      double want = rrow[x];
      double got = (double)crow[x];
      double err = fabs(got - want);
      int ok = isfinite(got) && err <= j->atol + j->rtol * fabs(want);
      if (!isfinite(got)) err = INFINITY;
      r->checked++;
      if (!ok) {
        if (r->failed == 0) r->first_fail = g * p->n + x;
        r->failed++;
      }
      if (err > r->max_abs_err) r->max_abs_err = err;
      double rel = want != 0.0 ? err / fabs(want) : (err == 0.0 ? 0.0 : INFINITY);
      if (rel > r->max_rel_err) r->max_rel_err = rel;
      err2 += err * err;
      ref2 += want * want;
    }
  }
  j->err2[chunk] = err2;
  j->ref2[chunk] = ref2;
}

void tsr_validate(const tsr_problem *p, const float *c, const double *ref, double atol,
                  double rtol, tsr_receipt *r) {
  static validate_job zero;
  validate_job *j = malloc(sizeof *j);
  int64_t cr, cc;
  *r = (tsr_receipt){0};
  r->first_fail = -1;
  r->atol = atol;
  r->rtol = rtol;
  if (!j) { /* cannot check: never pass */
    r->failed = 1;
    return;
  }
  *j = zero;
  j->p = p;
  j->c = c;
  j->ref = ref;
  j->atol = atol;
  j->rtol = rtol;
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &j->ldc, &j->sc);
  int n = tsr__parallel_rows(p->batch * p->m, (double)(p->batch * p->m) * (double)p->n,
                             validate_rows, j);
  double err2 = 0.0, ref2 = 0.0;
  for (int k = 0; k < n; k++) { /* chunk order: deterministic merge */
    const tsr_receipt *q = &j->part[k];
    if (q->failed && r->failed == 0) r->first_fail = q->first_fail;
    r->failed += q->failed;
    r->checked += q->checked;
    if (q->max_abs_err > r->max_abs_err) r->max_abs_err = q->max_abs_err;
    if (q->max_rel_err > r->max_rel_err) r->max_rel_err = q->max_rel_err;
    err2 += j->err2[k];
    ref2 += j->ref2[k];
  }
  r->rel_fro_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  r->passed = r->failed == 0 && r->checked == p->batch * p->m * p->n;
  free(j);
}
