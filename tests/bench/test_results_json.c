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

static void test_oracle_cache(void **state) {
  tsr_problem p;
  tsr_problem_init(&p, 7, 5, 3);
  p.beta = 0.5f;
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  char cache[300], key_sha[65], key_sha2[65];
  snprintf(cache, sizeof cache, "%s/oracle", dir);
  double *ref = NULL, *ref2 = NULL;
  const char *src = NULL;
  assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 9, cache, &ref, &src, key_sha, msg, sizeof msg), TSR_OK);
  assert_string_equal(src, "cpu");
  assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 9, cache, &ref2, &src, key_sha2, msg, sizeof msg), TSR_OK);
  assert_string_equal(src, "cache:cpu");
  assert_string_equal(key_sha, key_sha2);
  assert_memory_equal(ref, ref2, 35 * sizeof(double));
  /* independent check of one element against the definition */
  float a[21], b[15], c0[35];
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_RANDOM, 9, a);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 9, b);
  tsr_fill(&p, TSR_TENSOR_C, TSR_INPUTS_RANDOM, 9, c0);
  double want = 0.5 * c0[2 * 5 + 3];
  for (int k = 0; k < 3; k++) want += (double)a[2 * 3 + k] * (double)b[k * 5 + 3];
  assert_true(fabs(ref2[2 * 5 + 3] - want) < 1e-12);
  free(ref2);
  /* a different seed is a different key */
  assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 10, cache, &ref2, &src, key_sha2, msg, sizeof msg), TSR_OK);
  assert_string_equal(src, "cpu");
  assert_string_not_equal(key_sha, key_sha2);
  free(ref2);
  /* a damaged entry is never trusted: recomputed, same values */
  char path[600];
  snprintf(path, sizeof path, "%s/%s.f64", cache, key_sha);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, -3, SEEK_END);
  fputc('X', f);
  fclose(f);
  assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 9, cache, &ref2, &src, key_sha2, msg, sizeof msg), TSR_OK);
  assert_string_equal(src, "cpu");
  assert_memory_equal(ref, ref2, 35 * sizeof(double));
  free(ref2);
  /* Anything but a regular file of an entry's size at the entry's path is
   * a miss (recomputed, then stored over it), never a hang or a read
   * without end: a FIFO nobody writes, a link to /dev/zero, a file longer
   * than any entry of this problem. */
  for (int kind = 0; kind < 3; kind++) {
    assert_int_equal(unlink(path), 0);
    if (kind == 0) assert_int_equal(mkfifo(path, 0644), 0);
    if (kind == 1) assert_int_equal(symlink("/dev/zero", path), 0);
    if (kind == 2) {
      f = fopen(path, "wb");
      assert_non_null(f);
      for (int i = 0; i < 4096; i++) fputc('x', f);
      fclose(f);
    }
    assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 9, cache, &ref2, &src, key_sha2, msg, sizeof msg), TSR_OK);
    assert_string_equal(src, "cpu");
    assert_memory_equal(ref, ref2, 35 * sizeof(double));
    free(ref2);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode)); /* the recomputed entry replaced it */
    assert_int_equal(tsr__oracle_cached(&p, TSR_INPUTS_RANDOM, 9, cache, &ref2, &src, key_sha2, msg, sizeof msg), TSR_OK);
    assert_string_equal(src, "cache:cpu");
    free(ref2);
  }
  free(ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oracle_cache, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
