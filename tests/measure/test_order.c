/* Order design and the balance check of realized orders (BRIEF §6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/stats.h"

/* Execution order of the design: round-major, then shapes in the round's
 * shape order, then routes in the round's route order. */
static tsr__order_entry *realize(int R, int S, int rounds, const int *ro, const int *so, size_t *n) {
  tsr__order_entry *seq = malloc((size_t)rounds * S * R * sizeof *seq);
  size_t k = 0;
  for (int r = 0; r < rounds; r++)
    for (int j = 0; j < S; j++)
      for (int p = 0; p < R; p++) seq[k++] = (tsr__order_entry){r, so[r * S + j], ro[r * R + p]};
  *n = k;
  return seq;
}

static void test_exact_orders_r3(void **state) {
  int ro[6 * 3], so[6 * 2];
  tsr__order_design(3, 2, 6, ro, so);
  static const int want[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
  for (int r = 0; r < 6; r++)
    for (int p = 0; p < 3; p++) assert_int_equal(ro[r * 3 + p], want[r][p]);
  static const int wshape[6][2] = {{0, 1}, {1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}};
  for (int r = 0; r < 6; r++)
    for (int j = 0; j < 2; j++) assert_int_equal(so[r * 2 + j], wshape[r][j]);
}

/* Balance properties computed directly from the design, independently of
 * tsr__order_check, then the check itself, for R = 2..8. */
static void test_balance_r2_to_r8(void **state) {
  for (int R = 2; R <= 8; R++) {
    int S = 3, rounds = 2 * R;
    int *ro = malloc((size_t)rounds * R * sizeof *ro), *so = malloc((size_t)rounds * S * sizeof *so);
    tsr__order_design(R, S, rounds, ro, so);
    /* permutation per round; odd round = exact reverse of the preceding */
    for (int r = 0; r < rounds; r++) {
      int seen[8] = {0};
      for (int p = 0; p < R; p++) seen[ro[r * R + p]]++;
      for (int x = 0; x < R; x++) assert_int_equal(seen[x], 1);
      if (r % 2)
        for (int p = 0; p < R; p++) assert_int_equal(ro[r * R + p], ro[(r - 1) * R + R - 1 - p]);
      else
        assert_int_equal(ro[r * R], (r / 2) % R); /* rotated by floor(r/2) */
    }
    /* every route in every position exactly twice; each ordered pair R times */
    int pos[8][8] = {{0}}, pair[8][8] = {{0}};
    for (int r = 0; r < rounds; r++)
      for (int p = 0; p < R; p++) {
        pos[ro[r * R + p]][p]++;
        for (int q = p + 1; q < R; q++) pair[ro[r * R + p]][ro[r * R + q]]++;
      }
    for (int x = 0; x < R; x++)
      for (int y = 0; y < R; y++) {
        assert_int_equal(pos[x][y], 2);
        if (x != y) assert_int_equal(pair[x][y], R);
      }
    size_t n;
    tsr__order_entry *seq = realize(R, S, rounds, ro, so, &n);
    json_t *c = tsr__order_check(seq, n, R, S, rounds);
    assert_true(json_is_true(json_object_get(c, "balanced")));
    assert_int_equal(json_array_size(json_object_get(c, "problems")), 0);
    /* position_counts[shape][route][pos] == 2 */
    json_t *pc = json_array_get(json_array_get(json_object_get(c, "position_counts"), 1), R - 1);
    for (int p = 0; p < R; p++) assert_int_equal(json_integer_value(json_array_get(pc, p)), 2);
    json_decref(c);
    free(seq);
    free(ro);
    free(so);
  }
}

static json_t *check_mutated(int R, int S, int rounds, void (*mutate)(tsr__order_entry *, size_t *)) {
  int *ro = malloc((size_t)rounds * R * sizeof *ro), *so = malloc((size_t)rounds * S * sizeof *so);
  tsr__order_design(R, S, rounds, ro, so);
  size_t n;
  tsr__order_entry *seq = realize(R, S, rounds, ro, so, &n);
  if (mutate) mutate(seq, &n);
  json_t *c = tsr__order_check(seq, n, R, S, rounds);
  free(seq);
  free(ro);
  free(so);
  return c;
}

static void swap_first_two(tsr__order_entry *s, size_t *n) {
  int t = s[0].route;
  s[0].route = s[1].route;
  s[1].route = t;
}
static void drop_last(tsr__order_entry *s, size_t *n) { (*n)--; }
static void duplicate(tsr__order_entry *s, size_t *n) { s[1].route = s[0].route; }

static void test_unbalanced_orders_rejected(void **state) {
  json_t *c = check_mutated(4, 2, 8, swap_first_two);
  assert_true(json_is_false(json_object_get(c, "balanced")));
  json_decref(c);
  c = check_mutated(4, 2, 8, drop_last);
  assert_true(json_is_false(json_object_get(c, "balanced")));
  assert_non_null(strstr(json_string_value(json_array_get(json_object_get(c, "problems"), 0)), "missing"));
  json_decref(c);
  c = check_mutated(3, 1, 6, duplicate);
  assert_true(json_is_false(json_object_get(c, "balanced")));
  json_decref(c);
  /* a round count that is not a multiple of 2R cannot balance */
  c = check_mutated(3, 2, 5, NULL);
  assert_true(json_is_false(json_object_get(c, "balanced")));
  json_decref(c);
  /* the pristine design passes with the same sizes */
  c = check_mutated(3, 2, 6, NULL);
  assert_true(json_is_true(json_object_get(c, "balanced")));
  json_decref(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact_orders_r3),
      cmocka_unit_test(test_balance_r2_to_r8),
      cmocka_unit_test(test_unbalanced_orders_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
