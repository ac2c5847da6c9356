/* The raw results writer: atomic JSON round-trip with integer nanoseconds and
 * non-finite reals, receipts, and the on-disk oracle cache. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/bench.h"

static char dir[256];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/tsr-bench-test-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int count_entries(const char *d) {
  DIR *h = opendir(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(h)))
    if (e->d_name[0] != '.') n++;
  closedir(h);
  return n;
}

static void test_round_trip(void **state) {
  json_t *doc = json_object(), *samples = json_array();
  int64_t big = (INT64_C(1) << 53) + 1; /* not representable as a double */
  for (int i = 0; i < 3; i++)
    json_array_append_new(samples, json_pack("{s:I, s:I}", "ns", (json_int_t)(big + i), "calls", (json_int_t)7));
  json_object_set_new(doc, "schema", json_string(TSR_BENCH_SCHEMA));
  json_object_set_new(doc, "samples", samples);
  json_object_set_new(doc, "third", tsr__json_real(1.0 / 3.0));
  json_object_set_new(doc, "nan", tsr__json_real(NAN));
  json_object_set_new(doc, "inf", tsr__json_real(INFINITY));
  json_object_set_new(doc, "ninf", tsr__json_real(-INFINITY));
  tsr_receipt r = {.checked = 12, .failed = 1, .first_fail = 5, .max_abs_err = INFINITY,
                   .max_rel_err = 0.25, .rel_fro_err = 1e-9, .atol = 1e-4, .rtol = 1e-4, .passed = 0};
  json_object_set_new(doc, "receipt", tsr__receipt_json(&r, "after_timing", 12));

  char path[512], msg[256];
  snprintf(path, sizeof path, "%s/results.json", dir);
  assert_int_equal(tsr__json_write_atomic(doc, path, msg, sizeof msg), 0);
  assert_int_equal(count_entries(dir), 1); /* no temp file left behind */
  json_error_t err;
  json_t *back = json_load_file(path, 0, &err);
  assert_non_null(back);
  assert_true(json_equal(doc, back));
  json_t *s0 = json_array_get(json_object_get(back, "samples"), 0);
  assert_true(json_integer_value(json_object_get(s0, "ns")) == big);
  assert_true(tsr__json_to_double(json_object_get(back, "third")) == 1.0 / 3.0);
  assert_true(isnan(tsr__json_to_double(json_object_get(back, "nan"))));
  assert_true(tsr__json_to_double(json_object_get(back, "inf")) == INFINITY);
  assert_true(tsr__json_to_double(json_object_get(back, "ninf")) == -INFINITY);
  json_t *rc = json_object_get(back, "receipt");
  assert_string_equal(json_string_value(json_object_get(rc, "phase")), "after_timing");
  assert_int_equal(json_integer_value(json_object_get(rc, "first_fail")), 5);
  assert_true(json_is_false(json_object_get(rc, "passed")));
  assert_true(tsr__json_to_double(json_object_get(rc, "max_abs_err")) == INFINITY);

  /* overwrite is atomic too: the new content replaces the old whole */
  json_object_set_new(doc, "extra", json_true());
  assert_int_equal(tsr__json_write_atomic(doc, path, msg, sizeof msg), 0);
  json_decref(back);
  back = json_load_file(path, 0, &err);
  assert_true(json_equal(doc, back));
  json_decref(back);

  /* an unwritable target fails with a message and leaves nothing */
  snprintf(path, sizeof path, "%s/missing/results.json", dir);
  assert_int_not_equal(tsr__json_write_atomic(doc, path, msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "missing"));
  assert_int_equal(count_entries(dir), 1);
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
