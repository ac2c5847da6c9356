/* The OpenBLAS peer route as the bench runs it: its own entry points before
 * any input exists (available, default plan, the LP64 realize), then its
 * vtable prepared through tsr__exec_create_vt and measured by the measure
 * layer like any backend. Skips when no OpenBLAS is installed. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/routes/openblas.h"
#include "measure/measure.h"

static tsr_context *ctx;

static int setup(void **state) { return tsr_context_create(&ctx) == TSR_OK ? 0 : -1; }
static int teardown(void **state) {
  tsr_context_destroy(ctx);
  return 0;
}

static void need_openblas(void) {
  if (tsr__openblas_available(ctx) != TSR_OK) {
    printf("# openblas unavailable: %s\n", tsr_context_message(ctx));
    skip();
  }
}

/* An extent over LP64 CBLAS's int is refused by realize, before inputs. */
static void test_realize_lp64(void **state) {
  tsr_problem p;
  tsr_problem_init(&p, 2, 3, (int64_t)INT_MAX + 1);
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  tsr_plan plan;
  tsr__openblas_default_plan(NULL, &p, &plan);
  assert_int_equal(plan.threads, 0);
  tsr_plan_info info;
  assert_int_equal(tsr__openblas_realize(ctx, &p, &plan, &info), TSR_ERR_OVERFLOW);
  assert_non_null(strstr(tsr_context_message(ctx), "k=2147483648 exceeds the LP64 int range"));
  tsr_problem_init(&p, 2, 3, 4);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  plan.threads = 3;
  assert_int_equal(tsr__openblas_realize(ctx, &p, &plan, &info), TSR_OK);
  assert_int_equal(info.precision, TSR_PREC_STRICT);
  assert_int_equal(info.threads, 3);
  assert_int_equal(info.regs, -1);
}

/* Transposes, a batch and beta through the prepared execution: exact on
 * dyadic inputs, a corrupted output fails, C is restored between calls. */
static void test_exec(void **state) {
  need_openblas();
  tsr_problem p;
  tsr_problem_init(&p, 19, 23, 17);
  p.op_a = TSR_OP_T;
  p.batch = 2;
  p.alpha = 0.5f;
  p.beta = -2.0f;
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  tsr__workload *w = NULL;
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg),
                   TSR_OK);
  tsr_plan plan;
  tsr__openblas_default_plan(NULL, &p, &plan);
  plan.threads = 1;
  tsr_exec *e = NULL;
  assert_int_equal(
      tsr__exec_create_vt(ctx, &tsr__route_openblas, &w->p, &plan, w->a, w->b, w->c0, 0, &e),
      TSR_OK);
  assert_int_equal(tsr__exec_is_gpu(e), 0);
  const tsr_plan_info *info = tsr_exec_info(e);
  assert_int_equal(info->precision, TSR_PREC_STRICT);
  assert_int_equal(info->threads, 1); /* as OpenBLAS reports it once prepared */
  assert_int_equal(tsr__openblas_threads(), 1);
  float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
  tsr_receipt r;
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_true(r.passed);
  assert_int_equal(r.checked, 2 * 19 * 23);
  assert_true(r.max_abs_err == 0.0);
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 1, &r), TSR_OK);
  assert_false(r.passed);
  assert_int_equal(r.first_fail, 0);
  /* samples apply beta many times; the next validated call restores C0 */
  int64_t ns = 0;
  assert_int_equal(tsr__sample(e, TSR__TIMER_HOST, 5, &ns), TSR_OK);
  assert_true(ns > 0);
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_true(r.passed);
  tsr_exec_destroy(e);
  free(c);
  tsr__workload_destroy(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realize_lp64),
      cmocka_unit_test(test_exec),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
