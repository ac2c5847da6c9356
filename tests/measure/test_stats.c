/* Statistics of the protocol on hand-built samples: p50 per round, median of
 * round p50s, paired same-round ratios with [min, max] and slower counts,
 * spread. (The report's tables over a raw document: tests/bench/test_bench_tables.c.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "measure/stats.h"

static void test_median(void **state) {
  double odd[] = {5, 1, 3};
  assert_true(tsr__median(odd, 3) == 3.0);
  double even[] = {4, 1, 3, 2};
  assert_true(tsr__median(even, 4) == 2.5);
  double gaps[] = {NAN, 7, NAN, 1, 4};
  assert_true(tsr__median(gaps, 5) == 4.0);
  double none[] = {NAN, NAN};
  assert_true(isnan(tsr__median(none, 2)));
}

static void test_sample_p50_is_per_call(void **state) {
  /* per-call values 100, 50, 200, 75, 60 → sorted 50 60 75 100 200 → 75 */
  int64_t ns[] = {1000, 500, 200, 750, 600};
  int64_t calls[] = {10, 10, 1, 10, 10};
  assert_true(tsr__sample_p50(ns, calls, 5) == 75.0);
  int64_t ns2[] = {3, 5};
  int64_t c2[] = {1, 1};
  assert_true(tsr__sample_p50(ns2, c2, 2) == 4.0);
}

static void test_paired_ratios(void **state) {
  double x[] = {10, 12, 9, 11, 10};
  double y[] = {10, 10, 10, 10, NAN}; /* last round: peer failed */
  double q[5];
  tsr__paired p;
  tsr__paired_ratios(x, y, 5, q, &p);
  assert_int_equal(p.count, 4);
  assert_true(fabs(p.median - 1.05) < 1e-15); /* ratios 1.0 1.2 0.9 1.1 */
  assert_true(p.min == 0.9);
  assert_true(p.max == 1.2);
  assert_int_equal(p.slower, 2); /* 1.2 and 1.1; exactly 1.0 is not slower */
  assert_true(isnan(q[4]));
  assert_true(q[1] == 1.2);
}

/* The paired statistic differs from a ratio of medians: here tessera is
 * faster in the same round every time, yet the medians alone would say 1. */
static void test_not_a_ratio_of_medians(void **state) {
  double x[] = {1, 2, 3}, y[] = {2, 3, 1.5};
  tsr__paired p;
  tsr__paired_ratios(x, y, 3, NULL, &p);
  assert_true(tsr__median(x, 3) / tsr__median(y, 3) == 1.0);
  assert_true(fabs(p.median - 2.0 / 3.0) < 1e-15); /* ratios 0.5, 0.667, 2 */
  assert_int_equal(p.slower, 1);
}

static void test_spread(void **state) {
  double v[] = {100, 110, NAN, 105};
  assert_true(fabs(tsr__spread(v, 4) - 0.10) < 1e-12);
  double one[] = {5};
  assert_true(tsr__spread(one, 1) == 0.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_median),
      cmocka_unit_test(test_sample_p50_is_per_call),
      cmocka_unit_test(test_paired_ratios),
      cmocka_unit_test(test_not_a_ratio_of_medians),
      cmocka_unit_test(test_spread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
