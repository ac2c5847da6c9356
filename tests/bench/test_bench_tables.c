/* The report's tables computed from a hand-built raw document: per-round
 * p50s, median of round p50s, spread / unstable flag, paired ratios against
 * a peer with a failed round, the failures list and a foreign schema. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"

static json_t *row(int round, const char *route, const char *status, const int64_t *ns, int n,
                   int64_t calls) {
  json_t *r = json_object(), *res = json_object(), *m = json_object(), *arr = json_array();
  for (int i = 0; i < n; i++) {
    json_t *s = json_object();
    json_object_set_new(s, "ns", json_integer(ns[i]));
    json_object_set_new(s, "calls", json_integer(calls));
    json_array_append_new(arr, s);
  }
  json_object_set_new(m, "wall_batch", arr);
  json_object_set_new(res, "metrics", m);
  json_object_set_new(res, "status", json_string(status));
  json_object_set_new(r, "round", json_integer(round));
  json_object_set_new(r, "shape", json_string("8x8x8"));
  json_object_set_new(r, "route", json_string(route));
  json_object_set_new(r, "status", json_string(status));
  json_object_set_new(r, "result", res);
  return r;
}

static void test_tables_from_doc(void **state) {
  json_t *doc = json_pack("{s:s, s:b, s:{s:i, s:f, s:[{s:s}]}, s:{s:[s,s]}, s:[{s:s,s:s,s:b},{s:s,s:s,s:b}]}",
                          "schema", TSR_BENCH_SCHEMA, "complete", 1, "protocol", "rounds", 4,
                          "unstable_threshold", 0.10, "shapes", "label", "8x8x8", "order",
                          "base_routes", "tessera-cpu", "openblas", "routes", "name", "tessera-cpu",
                          "kind", "cpu", "available", 1, "name", "openblas", "kind", "cpu",
                          "available", 1);
  assert_non_null(doc);
  json_t *rows = json_array();
  /* tessera-cpu per-round p50 (calls 2): 50, 60, 55, 100 ns/call */
  const int64_t t0[] = {100, 90, 110}, t1[] = {120, 130, 110}, t2[] = {110, 110, 110},
                t3[] = {200, 200, 190};
  /* openblas per-round p50: 50, 50, —(failed), 80 */
  const int64_t o0[] = {100, 100, 100}, o1[] = {90, 100, 110}, o3[] = {160, 160, 170};
  json_array_append_new(rows, row(0, "tessera-cpu", "ok", t0, 3, 2));
  json_array_append_new(rows, row(0, "openblas", "ok", o0, 3, 2));
  json_array_append_new(rows, row(1, "openblas", "ok", o1, 3, 2));
  json_array_append_new(rows, row(1, "tessera-cpu", "ok", t1, 3, 2));
  json_array_append_new(rows, row(2, "tessera-cpu", "ok", t2, 3, 2));
  json_array_append_new(rows, row(2, "openblas", "failed_validation", o1, 3, 2));
  json_array_append_new(rows, row(3, "openblas", "ok", o3, 3, 2));
  json_array_append_new(rows, row(3, "tessera-cpu", "ok", t3, 3, 2));
  json_object_set_new(doc, "rows", rows);
  char msg[256];
  json_t *t = tsr__bench_tables(doc, -1, msg, sizeof msg);
  assert_non_null(t);
  json_t *ms = json_object_get(t, "metrics");
  /* the two CPU metrics (no GPU route); wall_single has no samples at all,
   * so none of its rounds is valid and it has no value */
  assert_int_equal(json_array_size(ms), 2);
  json_t *ws = json_array_get(json_object_get(json_array_get(ms, 1), "cells"), 0);
  assert_int_equal(json_integer_value(json_object_get(ws, "rounds_valid")), 0);
  assert_true(json_is_null(json_object_get(ws, "median_of_p50")));
  json_t *m = json_array_get(ms, 0);
  assert_string_equal(json_string_value(json_object_get(m, "metric")), "wall_batch");
  json_t *cells = json_object_get(m, "cells");
  json_t *tc = json_array_get(cells, 0), *oc = json_array_get(cells, 1);
  assert_string_equal(json_string_value(json_object_get(tc, "route")), "tessera-cpu");
  /* median of 50, 60, 55, 100 = 57.5; spread 100/50-1 = 1.0 → unstable */
  assert_true(json_real_value(json_object_get(tc, "median_of_p50")) == 57.5);
  assert_true(json_is_true(json_object_get(tc, "unstable")));
  assert_true(json_real_value(json_object_get(tc, "spread")) == 1.0);
  /* openblas: 50, 50, 80 (3 valid of 4) → 50; failed round is null */
  assert_true(json_real_value(json_object_get(oc, "median_of_p50")) == 50.0);
  assert_int_equal(json_integer_value(json_object_get(oc, "rounds_valid")), 3);
  assert_true(json_is_null(json_array_get(json_object_get(oc, "p50_by_round"), 2)));
  /* ratios 50/50=1, 60/50=1.2, —, 100/80=1.25 → median 1.2, [1, 1.25], slower 2 of 3 */
  json_t *rt = json_array_get(json_object_get(m, "ratios"), 0);
  assert_string_equal(json_string_value(json_object_get(rt, "peer")), "openblas");
  assert_int_equal(json_integer_value(json_object_get(rt, "count")), 3);
  assert_true(fabs(json_real_value(json_object_get(rt, "median")) - 1.2) < 1e-15);
  assert_true(json_real_value(json_object_get(rt, "min")) == 1.0);
  assert_true(json_real_value(json_object_get(rt, "max")) == 1.25);
  assert_int_equal(json_integer_value(json_object_get(rt, "slower")), 2);
  /* the failed row is listed */
  json_t *f = json_object_get(t, "failures");
  assert_int_equal(json_array_size(f), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "status")), "failed_validation");
  json_decref(t);
  /* a higher threshold clears the flag */
  t = tsr__bench_tables(doc, 1.5, msg, sizeof msg);
  tc = json_array_get(json_object_get(json_array_get(json_object_get(t, "metrics"), 0), "cells"), 0);
  assert_true(json_is_false(json_object_get(tc, "unstable")));
  json_decref(t);
  /* a foreign schema is refused */
  json_object_set_new(doc, "schema", json_string("other/1"));
  assert_null(tsr__bench_tables(doc, -1, msg, sizeof msg));
  assert_non_null(strstr(msg, "other/1"));
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tables_from_doc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
