/* The public prepared execution (tsr_exec_*) and the backend facts
 * (tsr_backend_describe, tsr_plan_builtin) on the CPU backend: a run equals
 * the FP64 oracle exactly on dyadic inputs, every call after a timing run
 * starts again from C0 (which the handle copies), and bad input is a
 * status naming the problem. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tessera.h"

static tsr_context *ctx;
static int setup(void **state) { return tsr_context_create(&ctx) == TSR_OK ? 0 : -1; }
static int teardown(void **state) {
  tsr_context_destroy(ctx);
  return 0;
}

typedef struct {
  tsr_problem p;
  float *a, *b, *c0, *c;
  double *ref;
} fixture;

static void make(fixture *f, int64_t m, int64_t n, int64_t k, float beta) {
  tsr_problem_init(&f->p, m, n, k);
  f->p.beta = beta;
  f->p.alpha = beta != 0.0f ? 0.5f : 1.0f;
  char msg[256];
  assert_int_equal(tsr_problem_check(&f->p, msg, sizeof msg), TSR_OK);
  int64_t nc = tsr_problem_elems_c(&f->p);
  f->a = malloc((size_t)tsr_problem_elems_a(&f->p) * 4);
  f->b = malloc((size_t)tsr_problem_elems_b(&f->p) * 4);
  f->c0 = malloc((size_t)nc * 4);
  f->c = malloc((size_t)nc * 4);
  f->ref = malloc((size_t)nc * 8);
  tsr_fill(&f->p, TSR_TENSOR_A, TSR_INPUTS_DYADIC, 3, f->a);
  tsr_fill(&f->p, TSR_TENSOR_B, TSR_INPUTS_DYADIC, 3, f->b);
  tsr_fill(&f->p, TSR_TENSOR_C, TSR_INPUTS_DYADIC, 3, f->c0);
  float *scale = malloc((size_t)nc * 4);
  double strict;
  assert_int_equal(tsr_oracle_cpu(&f->p, f->a, f->b, beta != 0.0f ? f->c0 : NULL, f->ref, scale,
                                  &strict),
                   TSR_OK);
  free(scale);
}
static void release(fixture *f) {
  free(f->a), free(f->b), free(f->c0), free(f->c), free(f->ref);
}
static void expect_exact(fixture *f) {
  tsr_receipt r;
  tsr_validate(&f->p, f->c, f->ref, 0, 0, &r);
  assert_true(r.passed);
  assert_int_equal(r.checked, f->p.m * f->p.n);
}

static void test_run_and_time(void **state) {
  fixture f;
  make(&f, 67, 45, 33, 0.5f);
  tsr_exec *e = NULL;
  assert_int_equal(tsr_exec_create(ctx, TSR_BACKEND_CPU, &f.p, NULL, f.a, f.b, f.c0, &e), TSR_OK);
  /* C0 is copied: changing the caller's changes nothing */
  float keep = f.c0[0];
  f.c0[0] = NAN;
  tsr_poison(&f.p, f.c);
  assert_int_equal(tsr_exec_run(e, f.c), TSR_OK);
  f.c0[0] = keep;
  expect_exact(&f);
  const tsr_plan_info *info = tsr_exec_info(e);
  assert_int_equal(info->precision, TSR_PREC_STRICT);
  tsr_plan def;
  tsr_plan_builtin(NULL, TSR_BACKEND_CPU, &f.p, &def);
  assert_true(def.bm > 0 && def.bn > 0 && def.bk > 0);
  /* timing: positive total; beta != 0 accumulates during it, yet the next
   * run starts again from C0 */
  int64_t ns = 0;
  assert_int_equal(tsr_exec_time(e, 5, &ns), TSR_OK);
  assert_true(ns > 0);
  tsr_poison(&f.p, f.c);
  assert_int_equal(tsr_exec_run(e, f.c), TSR_OK);
  expect_exact(&f);
  assert_int_equal(tsr_exec_time(e, 0, &ns), TSR_ERR_INVALID);
  assert_non_null(strstr(tsr_context_message(ctx), "0 calls"));
  tsr_exec_destroy(e);
  tsr_exec_destroy(NULL);
  release(&f);
}

static void test_bad_input(void **state) {
  fixture f;
  make(&f, 16, 16, 16, 1.0f);
  tsr_exec *e = (tsr_exec *)&f; /* must come back NULL */
  /* beta != 0 without C0 */
  assert_int_equal(tsr_exec_create(ctx, TSR_BACKEND_CPU, &f.p, NULL, f.a, f.b, NULL, &e),
                   TSR_ERR_INVALID);
  assert_null(e);
  assert_non_null(strstr(tsr_context_message(ctx), "C0"));
  /* a plan the backend rejects names the field */
  tsr_plan pl;
  tsr_plan_builtin(NULL, TSR_BACKEND_CPU, &f.p, &pl);
  pl.splitk = 2;
  assert_int_equal(tsr_exec_create(ctx, TSR_BACKEND_CPU, &f.p, &pl, f.a, f.b, f.c0, &e),
                   TSR_ERR_REJECTED);
  assert_null(e);
  assert_non_null(strstr(tsr_context_message(ctx), "splitk=2"));
  /* a bad problem */
  tsr_problem bad = f.p;
  bad.lda = 1;
  assert_int_not_equal(tsr_exec_create(ctx, TSR_BACKEND_CPU, &bad, NULL, f.a, f.b, f.c0, &e),
                       TSR_OK);
  assert_null(e);
  assert_non_null(strstr(tsr_context_message(ctx), "lda"));
  assert_int_equal(tsr_exec_create(ctx, TSR_BACKEND_CPU, &f.p, NULL, NULL, f.b, f.c0, &e),
                   TSR_ERR_INVALID);
  release(&f);
}

static void test_describe(void **state) {
  tsr_device_info d;
  assert_int_equal(tsr_backend_describe(ctx, TSR_BACKEND_CPU, &d), TSR_OK);
  assert_true(d.device[0] != '\0');
  assert_true(d.arch[0] != '\0');
  assert_int_equal(d.sm_count, 0);
  /* without a GPU the CUDA backends say why; with one, they name it */
  tsr_status st = tsr_backend_describe(ctx, TSR_BACKEND_CUDA, &d);
  if (st == TSR_OK) assert_true(d.sm_count > 0 && d.cc_major > 0);
  else assert_non_null(strstr(tsr_context_message(ctx), "CUDA"));
}

/* Generated source without a device: the cuda backend's emitter output,
 * identical on every call; nothing for the CPU or for a rejected plan. */
static void test_plan_source(void **state) {
  tsr_problem p;
  tsr_problem_init(&p, 300, 200, 100);
  tsr_plan plan;
  tsr_plan_builtin(NULL, TSR_BACKEND_CUDA, &p, &plan);
  {
    /* without a context (or before a device is open) the GPU table is
     * sm_90's: a large aligned NN problem gets the Ozaki (wgmma .s8) plan */
    tsr_problem big;
    tsr_problem_init(&big, 4096, 4096, 4096);
    tsr_plan bp;
    tsr_plan_builtin(NULL, TSR_BACKEND_CUDA, &big, &bp);
    assert_int_equal(bp.mma, TSR_MMA_WGMMA_S8);
  }
  char *s1 = tsr_plan_source(TSR_BACKEND_CUDA, &p, &plan), *s2 = tsr_plan_source(TSR_BACKEND_CUDA, &p, &plan);
  assert_non_null(s1);
  assert_non_null(s2);
  assert_non_null(strstr(s1, "__global__"));
  assert_string_equal(s1, s2);
  free(s1);
  free(s2);
  assert_null(tsr_plan_source(TSR_BACKEND_CPU, &p, &plan));
  plan.bm = 7; /* not a multiple of wm */
  assert_null(tsr_plan_source(TSR_BACKEND_CUDA, &p, &plan));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_run_and_time, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
      cmocka_unit_test_setup_teardown(test_describe, setup, teardown),
      cmocka_unit_test(test_plan_source),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
