/* The auditor's own recomputation pieces on hand-built values: median, row
 * p50 of ns/calls, spread, paired same-round ratios, tolerance and printed
 * comparison, the order design and its balance; then the whole check on the
 * committed CPU results directory and on in-memory corruptions of it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "source_dir.h"

static void test_median(void **state) {
  double odd[] = {5, 1, 3};
  assert_true(tsr__audit_median(odd, 3) == 3.0);
  double even[] = {4, 1, 3, 2};
  assert_true(tsr__audit_median(even, 4) == 2.5);
  double gaps[] = {NAN, 7, NAN, 1, 4};
  assert_true(tsr__audit_median(gaps, 5) == 4.0);
  double none[] = {NAN, NAN};
  assert_true(isnan(tsr__audit_median(none, 2)));
  assert_true(isnan(tsr__audit_median(NULL, 0)));
  double one[] = {42.5};
  assert_true(tsr__audit_median(one, 1) == 42.5);
  double dup[] = {2, 2, 9, 2};
  assert_true(tsr__audit_median(dup, 4) == 2.0);
}

static void test_row_p50_is_per_call(void **state) {
  /* per call 100, 50, 200, 75, 60 → sorted 50 60 75 100 200 → 75 */
  int64_t ns[] = {1000, 500, 200, 750, 600};
  int64_t calls[] = {10, 10, 1, 10, 10};
  assert_true(tsr__audit_row_p50(ns, calls, 5) == 75.0);
  /* even count: mean of the two middle per-call values: 3/2 and 7/4 → 1.625 */
  int64_t ns2[] = {3, 7, 100, 1}, calls2[] = {2, 4, 1, 1};
  assert_true(tsr__audit_row_p50(ns2, calls2, 4) == (1.5 + 1.75) / 2);
  /* invalid samples (ns or calls <= 0) are not values */
  int64_t ns3[] = {0, 10, 20}, calls3[] = {1, 0, 2};
  assert_true(tsr__audit_row_p50(ns3, calls3, 3) == 10.0);
  int64_t ns4[] = {-5}, calls4[] = {1};
  assert_true(isnan(tsr__audit_row_p50(ns4, calls4, 1)));
}

static void test_spread(void **state) {
  double v[] = {100, NAN, 150, 120};
  assert_true(tsr__audit_spread(v, 4) == 0.5);
  double one[] = {3};
  assert_true(tsr__audit_spread(one, 1) == 0.0);
  double none[] = {NAN};
  assert_true(isnan(tsr__audit_spread(none, 1)));
  double zero[] = {0, 5};
  assert_true(isnan(tsr__audit_spread(zero, 2)));
}

static void test_pairs_are_same_round(void **state) {
  /* Same-round ratios 2, 0.5, 1, (missing), 3 → sorted 0.5 1 2 3 → median 1.5;
   * the ratio of the medians (2.5/2 = 1.25 here) would differ. */
  double ref[] = {4, 1, 5, NAN, 9};
  double peer[] = {2, 2, 5, 7, 3};
  double q[5];
  tsr__audit_pair p;
  tsr__audit_pairs(ref, peer, 5, q, &p);
  assert_int_equal(p.count, 4);
  assert_true(p.median == 1.5);
  assert_true(p.min == 0.5 && p.max == 3.0);
  assert_int_equal(p.slower, 2); /* 2 and 3; exactly 1 is not slower */
  assert_true(q[0] == 2.0 && q[1] == 0.5 && q[2] == 1.0 && isnan(q[3]) && q[4] == 3.0);
  double z[] = {0, NAN}, w[] = {1, 1};
  tsr__audit_pairs(z, w, 2, NULL, &p);
  assert_int_equal(p.count, 0);
  assert_true(isnan(p.median) && isnan(p.min) && isnan(p.max));
}

static void test_tolerance(void **state) {
  assert_true(tsr__audit_close(1.0, 1.0 + 5e-10));
  assert_false(tsr__audit_close(1.0, 1.0 + 2e-9));
  assert_true(tsr__audit_close(1e12, 1e12 * (1 + 9e-10)));
  assert_true(tsr__audit_close(NAN, NAN));
  assert_false(tsr__audit_close(NAN, 1.0));
  assert_false(tsr__audit_close(0.0, 1e-300));
  assert_true(tsr__audit_printed_equal("219.532", "%.3f", 219.532));
  assert_true(tsr__audit_printed_equal("0.500", "%.3f", 0.4995)); /* rounds as printf does */
  assert_false(tsr__audit_printed_equal("219.533", "%.3f", 219.532));
  /* a value on a rounding edge may print either way within 1e-9 relative */
  assert_true(tsr__audit_printed_equal("1.000", "%.3f", 1.0005 - 1e-13) ||
              tsr__audit_printed_equal("1.001", "%.3f", 1.0005 - 1e-13));
}

static void test_design_exact(void **state) {
  /* R = 3, S = 2, 6 rounds: rotate by floor(r/2), odd rounds reverse. */
  int ro[6 * 3], so[6 * 2];
  tsr__audit_design(3, 2, 6, ro, so);
  const int want[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
  for (int r = 0; r < 6; r++)
    for (int p = 0; p < 3; p++) assert_int_equal(ro[r * 3 + p], want[r][p]);
  for (int r = 0; r < 6; r++)
    for (int j = 0; j < 2; j++) assert_int_equal(so[r * 2 + j], (j + r) % 2);
}

static void fill_pos(const int *ro, int R, int S, int rounds, int *pos) {
  for (int r = 0; r < rounds; r++)
    for (int s = 0; s < S; s++)
      for (int p = 0; p < R; p++) pos[((size_t)r * S + s) * R + ro[r * R + p]] = p;
}

static void test_balance(void **state) {
  enum { R = 4, S = 3, ROUNDS = 8 };
  int ro[ROUNDS * R], so[ROUNDS * S], pos[ROUNDS * S * R], pc[S * R * R], pp[S * R * R];
  tsr__audit_design(R, S, ROUNDS, ro, so);
  fill_pos(ro, R, S, ROUNDS, pos);
  assert_int_equal(tsr__audit_balance(pos, R, S, ROUNDS, pc, pp), 0);
  for (int s = 0; s < S; s++)
    for (int x = 0; x < R; x++)
      for (int y = 0; y < R; y++) {
        assert_int_equal(pc[(s * R + x) * R + y], 2); /* every position twice */
        if (x != y) assert_int_equal(pp[(s * R + x) * R + y], R); /* R times each precedence */
      }
  /* Half the rounds: positions no longer equal. */
  assert_true(tsr__audit_balance(pos, R, S, ROUNDS / 2 + 1, pc, pp) > 0);
  /* Swap two routes in one round and shape. */
  int t = pos[R + 0];
  pos[R + 0] = pos[R + 1];
  pos[R + 1] = t;
  assert_true(tsr__audit_balance(pos, R, S, ROUNDS, pc, pp) > 0);
  /* A missing route. */
  fill_pos(ro, R, S, ROUNDS, pos);
  pos[5] = -1;
  assert_true(tsr__audit_balance(pos, R, S, ROUNDS, pc, pp) > 0);
}

/* ---- the whole check on the committed directory ---------------------------- */
static const char *dir(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/docs/results/2026-11-29-cpu-tiny", test_source_dir());
  return path;
}

static tsr__audit_result audit_of(const tsr__audit_input *in) {
  tsr__audit_result r;
  tsr__audit_result_init(&r);
  tsr__audit_options o = {0};
  tsr__audit_check(in, &o, &r);
  return r;
}

static void test_committed_dir_passes(void **state) {
  tsr__audit_input in;
  char msg[1024];
  assert_int_equal(tsr__audit_load_dir(dir(), &in, msg, sizeof msg), 0);
  tsr__audit_result r = audit_of(&in);
  for (size_t i = 0; i < r.n; i++)
    print_message("%s: %s: %s\n", tsr__audit_reason_name(r.items[i].reason), r.items[i].where, r.items[i].detail);
  assert_int_equal(r.total, 0);
  assert_int_equal(r.rows, 16);
  assert_int_equal(r.samples, 16 * 2 * 3);
  assert_int_equal(r.receipts, 32);
  assert_int_equal(r.elements, 2 * 4 * 2 * (64 * 64 + 96 * 80));
  assert_int_equal(r.cells, 2 * 2 * 2);
  assert_int_equal(r.ratios, 2 * 2);
  assert_true(r.report_numbers >= 8 + 4 * 3);
  assert_true(r.order_balanced);
  tsr__audit_result_free(&r);
  tsr__audit_input_free(&in);
}

static void test_in_memory_corruptions(void **state) {
  tsr__audit_input in;
  char msg[1024];
  assert_int_equal(tsr__audit_load_dir(dir(), &in, msg, sizeof msg), 0);
  json_t *pristine = in.results;
  json_t *rows = json_object_get(pristine, "rows");

  /* Every sample of one row tripled (so its p50 moves): tables.json and
   * report.md no longer match, though each sample is still valid. */
  in.results = json_deep_copy(pristine);
  json_t *arr = json_object_get(json_object_get(json_object_get(json_array_get(json_object_get(in.results, "rows"), 0), "result"), "metrics"), "wall_single");
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *s = json_array_get(arr, i);
    json_object_set_new(s, "ns", json_integer(json_integer_value(json_object_get(s, "ns")) * 3));
  }
  tsr__audit_result r = audit_of(&in);
  assert_true(tsr__audit_has(&r, TSR__AR_TABLE_MISMATCH));
  assert_false(tsr__audit_has(&r, TSR__AR_SAMPLE_VALUE));
  tsr__audit_result_free(&r);
  json_decref(in.results);

  /* An unknown route in a row. */
  in.results = json_deep_copy(pristine);
  json_object_set_new(json_array_get(json_object_get(in.results, "rows"), 4), "route", json_string("mkl"));
  r = audit_of(&in);
  assert_true(tsr__audit_has(&r, TSR__AR_ROW_UNEXPECTED));
  assert_true(tsr__audit_has(&r, TSR__AR_ROW_MISSING));
  tsr__audit_result_free(&r);
  json_decref(in.results);

  /* The design recorded differently from the rule. */
  in.results = json_deep_copy(pristine);
  json_t *planned = json_object_get(json_object_get(in.results, "order"), "planned");
  json_array_remove(json_object_get(json_array_get(planned, 1), "routes"), 0);
  r = audit_of(&in);
  assert_true(tsr__audit_has(&r, TSR__AR_ORDER_RECORD));
  tsr__audit_result_free(&r);
  json_decref(in.results);

  /* Instrumented marker without the flag still counts. */
  in.results = json_deep_copy(pristine);
  json_t *ins = json_object_get(json_object_get(json_array_get(json_object_get(in.results, "rows"), 2), "result"), "instrumentation");
  json_array_append_new(json_object_get(ins, "markers"), json_string("env LD_PRELOAD=libprof.so"));
  r = audit_of(&in);
  assert_true(tsr__audit_has(&r, TSR__AR_INSTRUMENTED));
  assert_int_equal(r.counts[TSR__AR_INSTRUMENTED], 1);
  tsr__audit_result_free(&r);
  json_decref(in.results);

  /* Without tables.json and report.md (the fuzz harness's partial input). */
  in.results = pristine;
  json_t *tables = in.tables;
  char *report = in.report;
  in.tables = NULL;
  in.report = NULL;
  r = audit_of(&in);
  assert_true(tsr__audit_has(&r, TSR__AR_TABLE_MISMATCH));
  assert_true(tsr__audit_has(&r, TSR__AR_REPORT_MISMATCH));
  assert_int_equal(r.total, 2);
  tsr__audit_result_free(&r);
  in.tables = tables;
  in.report = report;
  assert_true(json_array_size(rows) == 16);
  tsr__audit_input_free(&in);
}

static void test_reason_names(void **state) {
  for (int i = 0; i < TSR__AR_COUNT; i++) {
    const char *n = tsr__audit_reason_name((tsr__audit_reason)i);
    assert_int_equal(tsr__audit_reason_find(n), i);
    assert_true(strlen(tsr__audit_reason_text((tsr__audit_reason)i)) > 10);
  }
  assert_int_equal(tsr__audit_reason_find("no_such_reason"), -1);
  assert_string_equal(tsr__audit_reason_name(TSR__AR_ROW_MISSING), "row_missing");
}

static void test_load_buffers_rejects(void **state) {
  tsr__audit_input in;
  char msg[256];
  const char *trunc = "{\"schema\": \"tessera-bench/1\", \"rows\": [";
  assert_int_equal(tsr__audit_load_buffers(trunc, strlen(trunc), NULL, 0, NULL, 0, &in, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "results.json: truncated or not JSON"));
  const char *arr = "[1, 2]";
  assert_int_equal(tsr__audit_load_buffers(arr, strlen(arr), NULL, 0, NULL, 0, &in, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "not a tessera-bench/3 document"));
  const char *dup = "{\"schema\": \"tessera-bench/1\", \"schema\": \"tessera-bench/1\"}";
  assert_int_equal(tsr__audit_load_buffers(dup, strlen(dup), NULL, 0, NULL, 0, &in, msg, sizeof msg), -1);
  const char *other = "{\"schema\": \"tessera-bench/4\"}";
  assert_int_equal(tsr__audit_load_buffers(other, strlen(other), NULL, 0, NULL, 0, &in, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "'tessera-bench/4'"));
  const char *min = "{\"schema\": \"tessera-bench/1\"}"; /* the previous schema still loads */
  assert_int_equal(tsr__audit_load_buffers(min, strlen(min), NULL, 0, NULL, 0, &in, msg, sizeof msg), 0);
  tsr__audit_result r = audit_of(&in);
  assert_true(r.total > 0);
  assert_true(tsr__audit_has(&r, TSR__AR_SCHEMA));
  assert_true(tsr__audit_has(&r, TSR__AR_INCOMPLETE));
  tsr__audit_result_free(&r);
  tsr__audit_input_free(&in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_median),           cmocka_unit_test(test_row_p50_is_per_call),
      cmocka_unit_test(test_spread),           cmocka_unit_test(test_pairs_are_same_round),
      cmocka_unit_test(test_tolerance),        cmocka_unit_test(test_design_exact),
      cmocka_unit_test(test_balance),          cmocka_unit_test(test_committed_dir_passes),
      cmocka_unit_test(test_in_memory_corruptions), cmocka_unit_test(test_reason_names),
      cmocka_unit_test(test_load_buffers_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
