/* The shape zoo (src/measure/zoo.c): at least 60 shapes in at least 6
 * classes, every one a valid problem of bounded work, the same zoo for the
 * same seed, the fixed workloads independent of the seed, a held-back
 * quarter chosen by the seed, zoo-quick a subset with every class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/zoo.h"

static int zoo(uint64_t seed, int quick, tsr__zoo_shape **out) {
  int n = tsr__zoo(seed, quick, NULL, 0);
  *out = calloc((size_t)n, sizeof **out);
  assert_non_null(*out);
  assert_int_equal(tsr__zoo(seed, quick, *out, n), n);
  return n;
}

static int class_index(const char *cls) {
  for (int c = 0; tsr__zoo_classes[c]; c++)
    if (!strcmp(tsr__zoo_classes[c], cls)) return c;
  return -1;
}

static void test_classes_and_problems(void **state) {
  tsr__zoo_shape *z;
  int n = zoo(1, 0, &z), per[16] = {0}, nclasses = 0, held = 0;
  assert_true(n >= 60);
  for (int c = 0; tsr__zoo_classes[c]; c++) nclasses++;
  assert_true(nclasses >= 6);
  for (int i = 0; i < n; i++) {
    int c = class_index(z[i].cls);
    assert_true(c >= 0);
    per[c]++;
    held += z[i].held_back;
    tsr_problem p;
    tsr_problem_init(&p, z[i].m, z[i].n, z[i].k);
    p.batch = z[i].batch;
    p.op_a = z[i].op_a;
    p.op_b = z[i].op_b;
    char msg[256];
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    assert_true(2.0 * (double)z[i].m * (double)z[i].n * (double)z[i].k * (double)z[i].batch <= 0x1p40);
    for (int j = 0; j < i; j++) assert_string_not_equal(z[i].label, z[j].label); /* unique */
  }
  for (int c = 0; c < nclasses; c++) assert_true(per[c] >= 5);
  /* the held-back part is about a quarter, never none or most */
  assert_true(held >= n / 10 && held <= n / 2);
  /* labels spell the problem */
  for (int i = 0; i < n; i++)
    if (z[i].batch == 64 && z[i].m == 256) assert_string_equal(z[i].label, "64*256x256x256");
  free(z);
}

static void test_seeds(void **state) {
  tsr__zoo_shape *a, *b, *c;
  int na = zoo(1, 0, &a), nb = zoo(1, 0, &b), nc = zoo(2, 0, &c);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, (size_t)na * sizeof *a);
  /* another seed: the same fixed workloads, other random draws */
  int fixed = 0, diff = 0;
  for (int i = 0; i < na && i < nc; i++) {
    if (strcmp(a[i].cls, "random")) {
      assert_string_equal(a[i].label, c[i].label);
      fixed++;
    } else {
      diff += strcmp(a[i].label, c[i].label) != 0;
    }
  }
  assert_true(fixed >= 48);
  assert_true(diff > 0);
  free(a), free(b), free(c);
}

static void test_quick(void **state) {
  tsr__zoo_shape *z, *q;
  int n = zoo(1, 0, &z), nq = zoo(1, 1, &q), seen[16] = {0};
  assert_true(nq >= 12 && nq < n);
  for (int i = 0; i < nq; i++) {
    seen[class_index(q[i].cls)] = 1;
    if (!strcmp(q[i].cls, "random")) continue; /* drawn with a smaller work cap */
    int found = 0;
    for (int j = 0; j < n; j++) found |= !strcmp(q[i].label, z[j].label);
    assert_true(found);
    assert_true(2.0 * (double)q[i].m * (double)q[i].n * (double)q[i].k * (double)q[i].batch <= 0x1p40);
  }
  for (int c = 0; tsr__zoo_classes[c]; c++) assert_true(seen[c]);
  /* a short buffer gets what fits and the full count */
  tsr__zoo_shape two[2];
  assert_int_equal(tsr__zoo(1, 0, two, 2), n);
  assert_string_equal(two[0].label, z[0].label);
  free(z), free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classes_and_problems),
      cmocka_unit_test(test_seeds),
      cmocka_unit_test(test_quick),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
