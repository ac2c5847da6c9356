/* Inputs, the FP64 oracle and validation assert on real values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dyadic_values),
      cmocka_unit_test(test_random_values),
      cmocka_unit_test(test_oracle_by_hand),
      cmocka_unit_test(test_validate),
      cmocka_unit_test(test_parallel_fill_validate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
