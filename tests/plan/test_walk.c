/* Program walks: exact orders, exhaustive bijection against the independent
 * constructive enumeration, uint32/int32 boundaries, malformed requests,
 * identity normalization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plan/walk_enum.h"
#include "tessera.h"

static tsr_walk W(const char *text) {
  tsr_walk w;
  char msg[256];
  assert_int_equal(tsr_walk_parse(text, &w, msg, sizeof msg), TSR_OK);
  return w;
}

static void exact_order(const char *walk, uint32_t h, uint32_t wd, const uint32_t *expect) {
  tsr_walk w = W(walk);
  char msg[256];
  assert_int_equal(tsr_walk_check(&w, h, wd, msg, sizeof msg), TSR_OK);
  for (uint32_t i = 0; i < h * wd; i++) {
    uint32_t r, c;
    tsr_walk_map(&w, h, wd, i, &r, &c);
    assert_int_equal(r * wd + c, expect[i]);
  }
}

/* Orders written out by hand from BRIEF §4 (cells as row*W + col). */
static void test_exact_orders(void **state) {
  /* rect:2x3 on 5x7: 2-row stripes, 3-column rectangles, last stripe and
   * last rectangle partial. */
  static const uint32_t rect[] = {0,  1,  2,  7,  8,  9,  3,  4,  5,  10, 11, 12,
                                  6,  13, 14, 15, 16, 21, 22, 23, 17, 18, 19, 24,
                                  25, 26, 20, 27, 28, 29, 30, 31, 32, 33, 34};
  exact_order("rect:2x3", 5, 7, rect);
  /* stripe:2 on 3x4: column-first inside 2-row stripes, then the last row. */
  static const uint32_t stripe[] = {0, 4, 1, 5, 2, 6, 3, 7, 8, 9, 10, 11};
  exact_order("stripe:2", 3, 4, stripe);
  static const uint32_t lin[] = {0, 1, 2, 3, 4, 5};
  exact_order("linear", 2, 3, lin);
}

/* At least 2,688 grid/request combinations (the seed's count): all H, W in
 * 1..16 and R, C in 1..9, partial stripes and rectangles included. */
static void test_exhaustive_bijection(void **state) {
  tsr__walk_check_report rep;
  tsr__walk_check_all(16, 9, &rep);
  assert_true(rep.combinations >= 2688);
  assert_int_equal(rep.combinations, 16 * 16 * (1 + 9 + 81));
  if (rep.failures) fail_msg("%s", rep.first_failure);
  /* Requests far larger than the grid clamp. */
  tsr__walk_check_all(5, 40, &rep);
  if (rep.failures) fail_msg("%s", rep.first_failure);
}

/* Detects a broken map: the checker must be able to fail. */
static void test_checker_detects_mismatch(void **state) {
  /* A rect that is not the identity, on a grid where it differs from linear:
   * enumerating it as linear must disagree. */
  tsr_walk rect = W("rect:2x2");
  uint32_t rows[16], cols[16];
  tsr__walk_enumerate(&(tsr_walk){TSR_WALK_LINEAR, 1, 1}, 4, 4, rows, cols);
  int differs = 0;
  for (uint32_t i = 0; i < 16; i++) {
    uint32_t r, c;
    tsr_walk_map(&rect, 4, 4, i, &r, &c);
    differs |= r != rows[i] || c != cols[i];
  }
  assert_true(differs);
}

/* 64-bit reference of the rect formula for the boundary tests. */
static void rect_ref64(uint64_t R, uint64_t C, uint64_t H, uint64_t Wd, uint64_t i, uint64_t *row,
                       uint64_t *col) {
  if (C > Wd) C = Wd;
  if (R > H) R = H;
  uint64_t ss = i / (R * Wd) * R, h = R < H - ss ? R : H - ss, local = i % (R * Wd);
  uint64_t cs = local / (h * C) * C, w = C < Wd - cs ? C : Wd - cs, in = local % (h * C);
  *row = ss + in / w;
  *col = cs + in % w;
}

static void test_uint32_boundaries(void **state) {
  char msg[256];
  /* H*W = 4294901760 > INT32_MAX, fits uint32. */
  uint32_t h = 65536, wd = 65535;
  tsr_walk w = W("rect:40000x3"); /* R*W = 2,621,400,000 > INT32_MAX */
  assert_int_equal(tsr_walk_check(&w, h, wd, msg, sizeof msg), TSR_OK);
  const uint64_t n = (uint64_t)h * wd;
  const uint64_t probes[] = {0, 1, 2147483647ull, 2147483648ull, 2621399999ull, 2621400000ull,
                             3000000000ull, n - 65535, n - 2, n - 1};
  for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
    uint32_t r, c;
    uint64_t er, ec;
    tsr_walk_map(&w, h, wd, (uint32_t)probes[k], &r, &c);
    rect_ref64(40000, 3, h, wd, probes[k], &er, &ec);
    assert_int_equal(r, er);
    assert_int_equal(c, ec);
  }
  uint32_t r, c;
  tsr_walk_map(&w, h, wd, (uint32_t)(n - 1), &r, &c);
  assert_int_equal(r, h - 1);
  assert_int_equal(c, wd - 1);
  /* stripe and linear at the same boundary: the last ordinal is the last tile. */
  tsr_walk s = W("stripe:3");
  tsr_walk_map(&s, h, wd, (uint32_t)(n - 1), &r, &c);
  assert_int_equal(r, h - 1);
  assert_int_equal(c, wd - 1);
  tsr_walk l = W("linear");
  tsr_walk_map(&l, h, wd, 2147483648u, &r, &c);
  assert_int_equal((uint64_t)r * wd + c, 2147483648ull);
  /* One more row overflows the uint32 launch index: rejected. */
  assert_int_equal(tsr_walk_check(&l, 65537, 65537, msg, sizeof msg), TSR_ERR_OVERFLOW);
  assert_non_null(strstr(msg, "uint32"));
  assert_int_equal(tsr_walk_check(&w, 0, 5, msg, sizeof msg), TSR_ERR_INVALID);
}

static void test_malformed(void **state) {
  static const char *const bad[] = {"", "rect:0x3", "rect:3x0", "rect:-1x2", "rect:2x-1",
                                    "rect:4294967296x1", "rect:1x99999999999", "stripe:0",
                                    "stripe:", "stripe:-3", "rect:3", "rect:3x", "rect:x3",
                                    "rect:3x4x5", "diag", "linear:2", "Linear", "rect:3x4 ",
                                    "stripe:2.5", "rect:+3x4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tsr_walk w = {TSR_WALK_LINEAR, 1, 1};
    char msg[256] = "";
    assert_int_equal(tsr_walk_parse(bad[i], &w, msg, sizeof msg), TSR_ERR_PARSE);
    assert_non_null(strstr(msg, "walk"));
  }
  /* Hand-built zero requests are rejected by the check as well. */
  char msg[256];
  tsr_walk z = {TSR_WALK_RECT, 0, 3};
  assert_int_equal(tsr_walk_check(&z, 4, 4, msg, sizeof msg), TSR_ERR_INVALID);
  z = (tsr_walk){TSR_WALK_STRIPE, 0, 1};
  assert_int_equal(tsr_walk_check(&z, 4, 4, msg, sizeof msg), TSR_ERR_INVALID);
  z = (tsr_walk){(tsr_walk_kind)7, 1, 1};
  assert_int_equal(tsr_walk_check(&z, 4, 4, msg, sizeof msg), TSR_ERR_INVALID);
}

static void test_format_round_trip(void **state) {
  static const char *const ok[] = {"linear", "rect:4x8", "stripe:3", "rect:4294967295x1"};
  for (size_t i = 0; i < 4; i++) {
    char buf[64];
    tsr_walk w = W(ok[i]);
    tsr_walk_format(&w, buf, sizeof buf);
    assert_string_equal(buf, ok[i]);
  }
}

static int same_order(const tsr_walk *a, const tsr_walk *b, uint32_t h, uint32_t wd) {
  for (uint32_t i = 0; i < h * wd; i++) {
    uint32_t r1, c1, r2, c2;
    tsr_walk_map(a, h, wd, i, &r1, &c1);
    tsr_walk_map(b, h, wd, i, &r2, &c2);
    if (r1 != r2 || c1 != c2) return 0;
  }
  return 1;
}

static int same_walk(const tsr_walk *a, const tsr_walk *b) {
  return a->kind == b->kind && (a->kind == TSR_WALK_LINEAR || a->r == b->r) &&
         (a->kind != TSR_WALK_RECT || a->c == b->c);
}

static void test_identity_normalization(void **state) {
  tsr_walk w;
  w = W("rect:1x5");
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_LINEAR);
  w = W("rect:3x9");
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_LINEAR);
  w = W("rect:3x100"); /* C >= W clamps to W: whole rows → linear */
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_LINEAR);
  w = W("rect:4x1");
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_STRIPE);
  assert_int_equal(w.r, 4);
  w = W("stripe:1");
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_LINEAR);
  w = W("stripe:4");
  tsr_walk_normalize(&w, 6, 1);
  assert_int_equal(w.kind, TSR_WALK_LINEAR);
  w = W("rect:100x3"); /* R clamps to H */
  tsr_walk_normalize(&w, 6, 9);
  assert_int_equal(w.kind, TSR_WALK_RECT);
  assert_int_equal(w.r, 6);
  assert_int_equal(w.c, 3);
  /* Property, exhaustively on small grids: two walks visit in the same order
   * exactly when they normalize equal. */
  tsr_walk all[1 + 6 + 36];
  int n = 0;
  all[n++] = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
  for (uint32_t r = 1; r <= 6; r++) {
    all[n++] = (tsr_walk){TSR_WALK_STRIPE, r, 1};
    for (uint32_t c = 1; c <= 6; c++) all[n++] = (tsr_walk){TSR_WALK_RECT, r, c};
  }
  for (uint32_t h = 1; h <= 6; h++)
    for (uint32_t wd = 1; wd <= 6; wd++)
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          tsr_walk a = all[i], b = all[j];
          int order = same_order(&a, &b, h, wd);
          tsr_walk_normalize(&a, h, wd);
          tsr_walk_normalize(&b, h, wd);
          if (order != same_walk(&a, &b))
            fail_msg("grid %ux%u walks %d and %d: same order %d but normalized equal %d", h, wd,
                     i, j, order, same_walk(&a, &b));
        }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_orders),
      cmocka_unit_test(test_exhaustive_bijection),
      cmocka_unit_test(test_checker_detects_mismatch),
      cmocka_unit_test(test_uint32_boundaries),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_format_round_trip),
      cmocka_unit_test(test_identity_normalization),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
