/* Inputs, the FP64 oracle and validation assert on real values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/inputs.h"
#include "tessera.h"

static void test_dyadic_values(void **state) {
  tsr_problem p;
  char msg[128];
  tsr_problem_init(&p, 37, 29, 41);
  p.batch = 2;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  float *a = malloc(sizeof(float) * (size_t)tsr_problem_elems_a(&p));
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_DYADIC, 0, a);
  int distinct[17] = {0};
  for (int64_t i = 0; i < tsr_problem_elems_a(&p); i++) {
    float v = a[i] * 8.0f;
    assert_true(v == floorf(v) && fabsf(a[i]) <= 1.0f);
    distinct[(int)v + 8]++;
  }
  int used = 0;
  for (int i = 0; i < 17; i++) used += distinct[i] > 0;
  assert_int_equal(used, 17);
  /* The documented formula, batch item 1, row 2, column 3. */
  assert_true(a[p.stride_a + 2 * p.lda + 3] == (float)(((2 * 7 + 3 * 3 + 1 * 5) % 17) - 8) / 8.0f);
  free(a);
}

static void test_random_values(void **state) {
  tsr_problem p;
  char msg[128];
  tsr_problem_init(&p, 64, 64, 64);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  float *x = malloc(sizeof(float) * 4096), *y = malloc(sizeof(float) * 4096);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 42, x);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 42, y);
  assert_memory_equal(x, y, sizeof(float) * 4096);
  double sum = 0;
  for (int i = 0; i < 4096; i++) {
    assert_true(x[i] >= -1.0f && x[i] < 1.0f);
    sum += x[i];
  }
  assert_true(fabs(sum / 4096) < 0.05);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 43, y);
  assert_true(memcmp(x, y, sizeof(float) * 4096) != 0);
  /* Leading-dimension padding does not change the values. */
  tsr_problem q = p;
  q.ldb = 70;
  float *z = malloc(sizeof(float) * (size_t)tsr_problem_elems_b(&q));
  tsr_fill(&q, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 42, z);
  for (int r = 0; r < 64; r++) {
    assert_memory_equal(z + r * 70, x + r * 64, 64 * sizeof(float));
    for (int c = 64; c < 70 && r < 63; c++) assert_true(z[r * 70 + c] == 0.0f);
  }
  free(x);
  free(y);
  free(z);
}

/* A 2×2×3 product, transposed A, alpha/beta, computed by hand. */
static void test_oracle_by_hand(void **state) {
  tsr_problem p;
  char msg[128];
  tsr_problem_init(&p, 2, 2, 3);
  p.op_a = TSR_OP_T;
  p.alpha = 2.0f;
  p.beta = -1.0f;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  const float at[6] = {1, 2, 3, 4, 5, 6}; /* stored 3×2: op(A) = [[1,3,5],[2,4,6]] */
  const float b[6] = {1, 0, 0, 1, 1, 1};  /* 3×2 */
  const float c0[4] = {10, 20, 30, 40};
  double ref[4];
  assert_int_equal(tsr_oracle_cpu(&p, at, b, c0, ref, NULL, NULL), TSR_OK);
  /* op(A)·B = [[6, 8], [8, 10]] */
  assert_true(ref[0] == 2 * 6 - 10);
  assert_true(ref[1] == 2 * 8 - 20);
  assert_true(ref[2] == 2 * 8 - 30);
  assert_true(ref[3] == 2 * 10 - 40);
  /* beta = 0 never reads C: NULL is fine. */
  p.beta = 0.0f;
  assert_int_equal(tsr_oracle_cpu(&p, at, b, NULL, ref, NULL, NULL), TSR_OK);
  assert_true(ref[3] == 20);
}

/* op(B) = B^T (read through a k-major copy of op(B)) against op(B) = B over that
 * same matrix stored k-major by hand: every reference value, every scale and the
 * strict reference's error bit-identical (the same products summed in the same
 * order). Padded leading dimensions, batch 2, alpha/beta, and enough rows for
 * the oracle's threads. */
static void test_oracle_nt_matches_nn(void **state) {
  (void)state;
  char msg[128];
  tsr_problem nt;
  tsr_problem_init(&nt, 70, 45, 203);
  nt.batch = 2;
  nt.op_b = TSR_OP_T;
  nt.ldb = 211; /* B stored 45×203, rows 211 apart */
  nt.alpha = 1.5f;
  nt.beta = -0.75f;
  assert_int_equal(tsr_problem_check(&nt, msg, sizeof msg), TSR_OK);
  tsr_problem nn = nt;
  nn.op_b = TSR_OP_N;
  nn.ldb = 0;
  nn.stride_b = 0;
  assert_int_equal(tsr_problem_check(&nn, msg, sizeof msg), TSR_OK);
  assert_int_equal(nn.ldb, 45);
  float *a = malloc(sizeof(float) * (size_t)tsr_problem_elems_a(&nt));
  float *b = malloc(sizeof(float) * (size_t)tsr_problem_elems_b(&nt));
  float *bt = malloc(sizeof(float) * (size_t)tsr_problem_elems_b(&nn));
  float *c0 = malloc(sizeof(float) * (size_t)tsr_problem_elems_c(&nt));
  size_t outs = (size_t)(nt.batch * nt.m * nt.n);
  double *ref_nt = malloc(sizeof(double) * outs), *ref_nn = malloc(sizeof(double) * outs);
  float *sc_nt = malloc(sizeof(float) * outs), *sc_nn = malloc(sizeof(float) * outs);
  tsr_fill(&nt, TSR_TENSOR_A, TSR_INPUTS_RANDOM, 7, a);
  tsr_fill(&nt, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 8, b);
  tsr_fill(&nt, TSR_TENSOR_C, TSR_INPUTS_RANDOM, 9, c0);
  for (int64_t z = 0; z < nt.batch; z++)
    for (int64_t x = 0; x < nt.n; x++)
      for (int64_t kk = 0; kk < nt.k; kk++)
        bt[z * nn.stride_b + kk * nn.ldb + x] = b[z * nt.stride_b + x * nt.ldb + kk];
  double fro_nt = -1.0, fro_nn = -2.0;
  assert_int_equal(tsr_oracle_cpu(&nt, a, b, c0, ref_nt, sc_nt, &fro_nt), TSR_OK);
  assert_int_equal(tsr_oracle_cpu(&nn, a, bt, c0, ref_nn, sc_nn, &fro_nn), TSR_OK);
  assert_memory_equal(ref_nt, ref_nn, sizeof(double) * outs);
  assert_memory_equal(sc_nt, sc_nn, sizeof(float) * outs);
  assert_true(fro_nt == fro_nn && fro_nt > 0.0);
  /* and one element by its definition: batch item 1, row 69, column 44 */
  double want = 0.0;
  for (int64_t kk = 0; kk < nt.k; kk++)
    want += (double)a[nt.stride_a + 69 * nt.lda + kk] * (double)b[nt.stride_b + 44 * nt.ldb + kk];
  want = 1.5 * want - 0.75 * (double)c0[nt.stride_c + 69 * nt.ldc + 44];
  assert_true(ref_nt[(size_t)(nt.m * nt.n + 69 * nt.n + 44)] == want);
  free(a);
  free(b);
  free(bt);
  free(c0);
  free(ref_nt);
  free(ref_nn);
  free(sc_nt);
  free(sc_nn);
}

static void test_validate(void **state) {
  tsr_problem p;
  char msg[128];
  tsr_problem_init(&p, 3, 4, 1);
  p.ldc = 6;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  double ref[12];
  float c[18];
  tsr_poison(&p, c);
  assert_int_equal(tsr_problem_elems_c(&p), 16); /* (3-1)*6 + 4 */
  for (int i = 0; i < 16; i++) assert_true(isnan(c[i]));
  tsr_receipt r;
  for (int i = 0; i < 12; i++) ref[i] = i * 0.5;
  tsr_validate(&p, c, ref, 1e-4, 1e-4, &r);
  assert_false(r.passed);
  assert_int_equal(r.failed, 12);
  assert_int_equal(r.first_fail, 0);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) c[i * 6 + j] = (float)ref[i * 4 + j];
  tsr_validate(&p, c, ref, 0, 0, &r); /* padding stays NaN and is not checked */
  assert_true(r.passed);
  assert_int_equal(r.checked, 12);
  assert_true(r.max_abs_err == 0 && r.rel_fro_err == 0);
  c[2 * 6 + 1] += 0.25f;
  tsr_validate(&p, c, ref, 0.1, 0.0, &r);
  assert_false(r.passed);
  assert_int_equal(r.failed, 1);
  assert_int_equal(r.first_fail, 9);
  assert_true(fabs(r.max_abs_err - 0.25) < 1e-12);
  c[2 * 6 + 1] = INFINITY;
  tsr_validate(&p, c, ref, 1e9, 1e9, &r);
  assert_false(r.passed);
}

/* Large enough to be filled and validated in parallel chunks: every stored
 * element (padding and batch gaps included) and the merged receipt must be
 * exactly what the one-thread definition gives. */
static void test_parallel_fill_validate(void **state) {
  tsr_problem p;
  char msg[128];
  tsr_problem_init(&p, 700, 2000, 3);
  p.batch = 3;
  p.ldc = 2003;
  p.stride_c = 700 * 2003 + 5;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  int64_t n = tsr_problem_elems_c(&p);
  float *c = malloc((size_t)n * sizeof *c);
  for (int64_t i = 0; i < n; i++) c[i] = 99.0f;
  tsr_poison(&p, c); /* in parallel blocks: every element, the last block's tail too */
  for (int64_t i = 0; i < n; i++)
    if (!isnan(c[i])) fail_msg("element %lld of %lld not poisoned", (long long)i, (long long)n);
  tsr_fill(&p, TSR_TENSOR_C, TSR_INPUTS_DYADIC, 0, c);
  for (int64_t i = 0; i < n; i++) {
    int64_t b = i / p.stride_c, in = i % p.stride_c, r = in / p.ldc, col = in % p.ldc;
    float want = (r < p.m && col < p.n)
                     ? (float)((((r * 3 + col * 7 + b * 11) % 9) - 4)) / 8.0f
                     : 0.0f;
    if (c[i] != want) fail_msg("element %lld: %g, want %g", (long long)i, c[i], want);
  }
  double *ref = malloc((size_t)(p.batch * p.m * p.n) * sizeof *ref);
  for (int64_t b = 0; b < p.batch; b++)
    for (int64_t i = 0; i < p.m; i++)
      for (int64_t j = 0; j < p.n; j++) ref[(b * p.m + i) * p.n + j] = c[b * p.stride_c + i * p.ldc + j];
  tsr_receipt r;
  tsr_validate(&p, c, ref, 0, 0, &r);
  assert_true(r.passed);
  assert_int_equal(r.checked, 3 * 700 * 2000);
  c[2 * p.stride_c + 600 * p.ldc + 7] += 1.0f; /* late chunk */
  c[0 * p.stride_c + 10 * p.ldc + 3] = NAN;     /* early chunk */
  tsr_validate(&p, c, ref, 0, 0, &r);
  assert_false(r.passed);
  assert_int_equal(r.failed, 2);
  assert_int_equal(r.first_fail, 10 * 2000 + 3);
  assert_true(isinf(r.max_abs_err));
  free(c);
  free(ref);
}

/* tsr_fill's row loops (the per-row hoisting, the vectorized clone)
 * against the definition, tsr__input_value, bit for bit: every family and
 * tensor, transposed and padded layouts, batch items with gaps, seeds with
 * high bits. */
static void test_fill_matches_definition(void **state) {
  static const uint64_t seeds[] = {1, 42, 0xfedcba9876543210ull};
  for (int kind = 0; kind < TSR_INPUTS_COUNT; kind++)
    for (int s = 0; s < 3; s++)
      for (int lay = 0; lay < 2; lay++) {
        tsr_problem p;
        char msg[128];
        tsr_problem_init(&p, 19 + lay * 40, 45, 33 + lay * 2);
        p.batch = 3;
        if (lay) {
          p.op_a = TSR_OP_T;
          p.op_b = TSR_OP_T;
          p.lda = p.m + 3;
          p.ldb = p.k + 1;
          p.ldc = p.n + 5;
          p.stride_a = p.k * p.lda + 7;
        }
        p.beta = 1.0f;
        assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
        for (int t = 0; t < 3; t++) {
          int64_t rows, cols, ld, stride;
          tsr__stored_dims(&p, (tsr_tensor)t, &rows, &cols, &ld, &stride);
          int64_t n = t == 0 ? tsr_problem_elems_a(&p) : t == 1 ? tsr_problem_elems_b(&p) : tsr_problem_elems_c(&p);
          float *buf = malloc((size_t)n * sizeof *buf);
          tsr_fill(&p, (tsr_tensor)t, (tsr_inputs)kind, seeds[s], buf);
          for (int64_t b = 0; b < p.batch; b++)
            for (int64_t r = 0; r < rows; r++)
              for (int64_t c = 0; c < cols; c++) {
                float want = tsr__input_value((tsr_tensor)t, (tsr_inputs)kind, seeds[s], b, r, c, cols);
                float got = buf[b * stride + r * ld + c];
                if (memcmp(&got, &want, sizeof got))
                  fail_msg("%s tensor %d seed %d batch %lld (%lld, %lld): %a, want %a",
                           tsr_inputs_name((tsr_inputs)kind), t, s, (long long)b, (long long)r,
                           (long long)c, got, want);
              }
          free(buf);
        }
      }
}

/* The one-thread, element-by-element definition of both receipts (the
 * validator before its vectorized fast path): the library must match it bit
 * for bit on every field, whichever path each row takes. */
static int ref_class(float x) { return isnan(x) ? 3 : isinf(x) ? (x > 0 ? 1 : 2) : 0; }

static void ref_receipt(const tsr_problem *p, const float *c, const double *ref, const float *scale,
                        double atol, double rtol, double coef, double under, tsr_receipt *r) {
  memset(r, 0, sizeof *r);
  r->first_fail = -1;
  double err2 = 0, ref2 = 0;
  int64_t ldc = p->ldc ? p->ldc : p->n, sc = p->stride_c ? p->stride_c : p->m * ldc;
  for (int64_t g = 0; g < p->batch * p->m; g++)
    for (int64_t x = 0; x < p->n; x++) {
      double want = ref[g * p->n + x];
      float got = c[(g / p->m) * sc + (g % p->m) * ldc + x];
      int wc = ref_class((float)want), gc = ref_class(got), ok;
      r->checked++;
      if (wc) {
        ok = gc == wc;
        r->class_failed += !ok;
      } else if (gc) {
        ok = 0;
        r->class_failed++;
        r->max_abs_err = r->max_rel_err = err2 = INFINITY;
        ref2 += want * want;
      } else {
        double err = fabs((double)got - want);
        if (scale) {
          double bound = coef * (double)scale[g * p->n + x] + under;
          double ratio = bound > 0 ? err / bound : (err <= bound ? 0.0 : INFINITY);
          ok = err <= bound;
          r->bound_failed += !ok;
          if (ratio > r->worst_bound_ratio) r->worst_bound_ratio = ratio;
        } else {
          ok = err <= atol + rtol * fabs(want);
        }
        if (err > r->max_abs_err) r->max_abs_err = err;
        double rel = want != 0.0 ? err / fabs(want) : (err == 0.0 ? 0.0 : INFINITY);
        if (rel > r->max_rel_err) r->max_rel_err = rel;
        err2 += err * err;
        ref2 += want * want;
      }
      if (!ok) {
        if (!r->failed) r->first_fail = g * p->n + x;
        r->failed++;
      }
    }
  r->rel_fro_err = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
}

static void same_receipt(const tsr_receipt *got, const tsr_receipt *want, int trial) {
#define SAME_I(f) \
  if (got->f != want->f) fail_msg("trial %d: " #f " %lld, want %lld", trial, (long long)got->f, (long long)want->f)
#define SAME_D(f) \
  if (memcmp(&got->f, &want->f, sizeof got->f)) fail_msg("trial %d: " #f " %a, want %a", trial, got->f, want->f)
  SAME_I(checked);
  SAME_I(failed);
  SAME_I(first_fail);
  SAME_I(bound_failed);
  SAME_I(class_failed);
  SAME_D(max_abs_err);
  SAME_D(max_rel_err);
  SAME_D(worst_bound_ratio);
  SAME_D(rel_fro_err);
  if (got->passed != (want->failed == 0)) fail_msg("trial %d: passed %d", trial, got->passed);
#undef SAME_I
#undef SAME_D
}

/* Rows of many widths (a lone tail lane, several 256-element blocks, the
 * last one partial), padded C, batches; outputs near the reference, with
 * NaN/Inf outputs and references, references that overflow as floats (the
 * half-way point 0x1.ffffffp127 included), zero references, elements just
 * past the tolerance or the bound, each in random rows: the fast path and
 * the element-by-element path give the same receipt bit for bit. */
static void test_validate_fast_path(void **state) {
  static const int64_t widths[] = {1, 2, 3, 7, 255, 256, 257, 600, 1001};
  static const double specials[] = {NAN, INFINITY, -INFINITY, 0x1.ffffffp127, -0x1.ffffffp127,
                                    0x1.fffffep127, 0x1.ffffff8p127, 1e300, 0.0};
  uint64_t x = 12345;
#define RND() (x = x * 6364136223846793005ull + 1442695040888963407ull, (double)(x >> 11) * 0x1p-53)
  for (int trial = 0; trial < 300; trial++) {
    tsr_problem p;
    char msg[128];
    int64_t n = widths[trial % 9], m = 1 + (int64_t)(RND() * 9);
    tsr_problem_init(&p, m, n, 5);
    p.batch = 1 + trial % 2;
    p.ldc = n + (trial % 3);
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    int64_t nc = tsr_problem_elems_c(&p), nout = p.batch * m * n;
    float *c = malloc((size_t)nc * sizeof *c), *scale = malloc((size_t)nout * sizeof *scale);
    double *ref = malloc((size_t)nout * sizeof *ref);
    tsr_poison(&p, c); /* padding: NaN, never read */
    int64_t ldc = p.ldc, sc = p.stride_c ? p.stride_c : m * ldc;
    for (int64_t i = 0; i < nout; i++) {
      ref[i] = (RND() - 0.5) * 64.0 * (i % 11 == 0 ? 0x1p-20 : 1.0);
      scale[i] = (float)(fabs(ref[i]) + 1.0);
      float *ci = &c[(i / n / m) * sc + (i / n % m) * ldc + i % n];
      *ci = (float)ref[i] + (float)((RND() - 0.5) * 1e-6);
    }
    int bad = trial % 4 == 0 ? 0 : 1 + (int)(RND() * 4);
    for (int k = 0; k < bad; k++) { /* damage a few random elements */
      int64_t i = (int64_t)(RND() * (double)nout);
      float *ci = &c[(i / n / m) * sc + (i / n % m) * ldc + i % n];
      int what = (int)(RND() * 5);
      if (what == 0) *ci = (float)specials[(int)(RND() * 3)];
      else if (what == 1) ref[i] = specials[(int)(RND() * 9)];
      else if (what == 2) *ci += 0.5f; /* past the tolerance and the bound */
      else if (what == 3) ref[i] = *ci = 0.0f;
      else {
        ref[i] = 0.0;
        *ci = 1e-30f;
      }
    }
    tsr_receipt got, want;
    double tol = trial % 3 ? 1e-5 : 0.0;
    tsr_validate(&p, c, ref, tol, tol, &got);
    ref_receipt(&p, c, ref, NULL, tol, tol, 0, 0, &want);
    same_receipt(&got, &want, trial);
    /* the strict contract's bound: (K + C0) u scale + (K + 2) 2^-149 */
    tsr_validate_contract(&p, c, ref, scale, 1e-7, TSR_PREC_STRICT, &got);
    ref_receipt(&p, c, ref, scale, 0, 0, (5.0 + TSR_CONTRACT_C0) * 0x1p-24, 7.0 * 0x1p-149, &want);
    same_receipt(&got, &want, trial);
    free(c);
    free(scale);
    free(ref);
  }
#undef RND
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dyadic_values),
      cmocka_unit_test(test_random_values),
      cmocka_unit_test(test_oracle_by_hand),
      cmocka_unit_test(test_oracle_nt_matches_nn),
      cmocka_unit_test(test_validate),
      cmocka_unit_test(test_parallel_fill_validate),
      cmocka_unit_test(test_validate_fast_path),
      cmocka_unit_test(test_fill_matches_definition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
