/* The shape zoo (src/measure/zoo.c): at least 60 shapes in at least 6
 * classes, every one a valid problem of bounded work, the same zoo for the
 * same seed, the fixed workloads independent of the seed, a held-back
 * quarter chosen by the seed, zoo-quick a subset with every class; the
 * bench's shape tokens, which are the zoo's labels. */
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

/* The bench's shape tokens "[B*]MxNxK[:XY]": every zoo label parses back
 * to its entry and formats to itself; the parts a token leaves out are
 * reported as not given; bad tokens are refused with a message. */
static void test_shape_tokens(void **state) {
  (void)state;
  tsr__zoo_shape *z;
  int n = zoo(1, 0, &z);
  for (int i = 0; i < n; i++) {
    tsr__shape_token t;
    char msg[256] = "", back[64];
    assert_int_equal(tsr__shape_token_parse(z[i].label, &t, msg, sizeof msg), 0);
    assert_true(t.m == z[i].m && t.n == z[i].n && t.k == z[i].k && t.batch == z[i].batch);
    assert_true(t.op_a == z[i].op_a && t.op_b == z[i].op_b);
    assert_int_equal(t.has_batch, z[i].batch > 1);
    assert_int_equal(t.has_ops, z[i].op_a == TSR_OP_T || z[i].op_b == TSR_OP_T);
    tsr__shape_token_format(t.m, t.n, t.k, t.batch, t.op_a, t.op_b, back, sizeof back);
    assert_string_equal(back, z[i].label);
    assert_ptr_equal(tsr__zoo_find(z, n, t.m, t.n, t.k, t.batch, t.op_a, t.op_b), &z[i]);
  }
  free(z);
  static const struct {
    const char *text;
    long long m, n, k, batch;
    int opa, opb, has_batch, has_ops;
  } good[] = {
      {"8x9x10", 8, 9, 10, 1, 0, 0, 0, 0},
      {"1*8x9x10", 8, 9, 10, 1, 0, 0, 1, 0},     /* given, even when 1 */
      {"8x9x10:NN", 8, 9, 10, 1, 0, 0, 0, 1},    /* given, even when NN */
      {"65535*1x2x3:TT", 1, 2, 3, 65535, 1, 1, 1, 1},
      {"96*512x512x64:NT", 512, 512, 64, 96, 0, 1, 1, 1},
      {"4X5X6:TN", 4, 5, 6, 1, 1, 0, 0, 1},     /* 'X' as tsr_shape_parse takes it */
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    tsr__shape_token t;
    char msg[256] = "";
    assert_int_equal(tsr__shape_token_parse(good[i].text, &t, msg, sizeof msg), 0);
    assert_true(t.m == good[i].m && t.n == good[i].n && t.k == good[i].k && t.batch == good[i].batch);
    assert_int_equal(t.op_a == TSR_OP_T, good[i].opa);
    assert_int_equal(t.op_b == TSR_OP_T, good[i].opb);
    assert_int_equal(t.has_batch, good[i].has_batch);
    assert_int_equal(t.has_ops, good[i].has_ops);
  }
  static const struct {
    const char *text, *needle;
  } bad[] = {
      {"", "empty"},
      {"0*8x8x8", "batch '0'"},
      {"02*8x8x8", "batch '02'"},
      {"65536*8x8x8", "batch '65536'"},
      {"-2*8x8x8", "batch '-2'"},
      {"*8x8x8", "batch ''"},
      {"b2*8x8x8", "batch 'b2'"},
      {"2*3*8x8x8", "expected [B*]MxNxK[:XY]"},
      {"8x8x8*2", "expected [B*]MxNxK[:XY]"},
      {"8x8x8:nt", "ops ':nt'"},
      {"8x8x8:NTN", "ops ':NTN'"},
      {"8x8x8:N", "ops ':N'"},
      {"8x8x8:", "ops ':'"},
      {"8x8x8:NT:NT", "expected [B*]MxNxK[:XY]"},
      {":NT8x8x8", "expected [B*]MxNxK[:XY]"},
      {"2*:NT", "expected"},
      {"8x8:NT", "2 extents"},
      {"2*0x8x8", "M extent 0"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tsr__shape_token t;
    char msg[256] = "";
    assert_int_not_equal(tsr__shape_token_parse(bad[i].text, &t, msg, sizeof msg), 0);
    if (!strstr(msg, bad[i].needle)) fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, msg, bad[i].needle);
  }
  /* the format leaves out what is the default */
  char buf[64];
  tsr__shape_token_format(7, 8, 9, 1, TSR_OP_N, TSR_OP_N, buf, sizeof buf);
  assert_string_equal(buf, "7x8x9");
  tsr__shape_token_format(7, 8, 9, 3, TSR_OP_N, TSR_OP_T, buf, sizeof buf);
  assert_string_equal(buf, "3*7x8x9:NT");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classes_and_problems),
      cmocka_unit_test(test_seeds),
      cmocka_unit_test(test_quick),
      cmocka_unit_test(test_shape_tokens),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
