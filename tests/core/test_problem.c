/* Shapes and problems: parsing, layout checks, element counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tessera.h"

static void test_shapes_ok(void **state) {
  int64_t m, n, k;
  char msg[256];
  assert_int_equal(tsr_shape_parse("1x1x1", &m, &n, &k, msg, sizeof msg), TSR_OK);
  assert_true(m == 1 && n == 1 && k == 1);
  assert_int_equal(tsr_shape_parse("2049x4097x1025", &m, &n, &k, msg, sizeof msg), TSR_OK);
  assert_true(m == 2049 && n == 4097 && k == 1025);
  assert_int_equal(tsr_shape_parse("2147483647x1x1", &m, &n, &k, msg, sizeof msg), TSR_OK);
}

static void expect_bad(const char *shape, tsr_status want, const char *needle) {
  int64_t m = -7, n = -7, k = -7;
  char msg[256] = "";
  assert_int_equal(tsr_shape_parse(shape, &m, &n, &k, msg, sizeof msg), want);
  if (!strstr(msg, needle)) fail_msg("'%s' → '%s' does not name '%s'", shape, msg, needle);
  assert_true(m == -7 && n == -7 && k == -7);
}

static void test_shapes_bad(void **state) {
  expect_bad("0x5x5", TSR_ERR_PARSE, "M extent 0");
  expect_bad("5x0x5", TSR_ERR_PARSE, "N extent 0");
  expect_bad("-1x2x3", TSR_ERR_PARSE, "M extent '-1'");
  expect_bad("4096x4096", TSR_ERR_PARSE, "2 extents");
  expect_bad("99999999999x2x2", TSR_ERR_OVERFLOW, "M extent 99999999999 exceeds");
  expect_bad("2x2x99999999999999999999999", TSR_ERR_PARSE, "K extent");
  expect_bad("", TSR_ERR_PARSE, "empty");
  expect_bad("4x4x4x4", TSR_ERR_PARSE, "trailing");
  expect_bad("ax4x4", TSR_ERR_PARSE, "not a number");
  expect_bad("4x4x", TSR_ERR_PARSE, "K extent");
  expect_bad(" 4x4x4", TSR_ERR_PARSE, "not a number");
}

static void test_problem_check(void **state) {
  tsr_problem p;
  char msg[256];
  tsr_problem_init(&p, 3, 5, 7);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  assert_int_equal(p.lda, 7);
  assert_int_equal(p.ldb, 5);
  assert_int_equal(p.ldc, 5);
  assert_int_equal(tsr_problem_elems_a(&p), 21);
  p.op_a = TSR_OP_T; /* A stored K×M */
  p.lda = 0;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  assert_int_equal(p.lda, 3);
  p.batch = 4; /* compact strides filled in */
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  assert_int_equal(p.stride_c, 15);
  assert_int_equal(tsr_problem_elems_c(&p), 60);
  p.ldc = 4;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_ERR_INVALID);
  assert_non_null(strstr(msg, "ldc: 4"));
  p.ldc = 6;
  p.stride_c = 10; /* overlaps: needs 3*6 = 18 */
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_ERR_INVALID);
  assert_non_null(strstr(msg, "stride_c"));
  p.stride_c = 0;
  p.batch = 0;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_ERR_INVALID);
  assert_non_null(strstr(msg, "batch"));
  tsr_problem_init(&p, 1, 1, 1);
  p.batch = INT64_MAX / 2;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  tsr_problem_init(&p, 2000000000, 2000000000, 4);
  p.batch = 8;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_ERR_OVERFLOW);
  tsr_problem_init(&p, 2, 2, 2);
  p.beta = 0.0f / 0.0f;
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_ERR_INVALID);
  assert_non_null(strstr(msg, "beta"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes_ok),
      cmocka_unit_test(test_shapes_bad),
      cmocka_unit_test(test_problem_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
