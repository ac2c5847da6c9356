/* The torch route regenerates the inputs on the device from the formulas of
 * src/core/inputs.c. Its element formula (element_values in
 * src/bench/routes/torch_route.py, run here through its int64-wrapping scalar
 * self-check, without torch) must agree bit for bit with tsr__input_value. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/inputs.h"
#include "source_dir.h"

typedef struct {
  int t;
  tsr_inputs kind;
  uint64_t seed;
  int64_t b, r, c, cols;
} elem;

static void test_generator_matches_c(void **state) {
  if (system("python3 -c 1 >/dev/null 2>&1") != 0) skip();
  static const uint64_t seeds[] = {1, 12345, UINT64_C(1) << 53, UINT64_C(0xfedcba9876543210)};
  static const int64_t pos[][4] = {{0, 0, 0, 1},       {0, 3, 5, 64},         {2, 5, 9, 33},
                                   {1, 127, 192, 193}, {7, 4095, 4095, 4096}, {3, 70000, 12345, 20000},
                                   {0, 8191, 11007, 11008}, {65535, 1, 2, 3}};
  enum { N = 3 * 4 * 4 * 8 };
  elem e[N];
  int n = 0;
  char path[] = "/tmp/tsr-torch-inputs-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < 4; k++)
      for (int s = 0; s < 4; s++)
        for (int p = 0; p < 8; p++) {
          e[n] = (elem){t, (tsr_inputs)k, seeds[s], pos[p][0], pos[p][1], pos[p][2], pos[p][3]};
          fprintf(f, "%d %s %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", t,
                  tsr_inputs_name((tsr_inputs)k), seeds[s], pos[p][0], pos[p][1], pos[p][2], pos[p][3]);
          n++;
        }
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 '%s/src/bench/routes/torch_route.py' --self-check-values < %s",
           test_source_dir(), path);
  FILE *py = popen(cmd, "r");
  assert_non_null(py);
  char line[128];
  int got = 0, random_seen = 0;
  while (fgets(line, sizeof line, py) && got < n) {
    double want = (double)tsr__input_value((tsr_tensor)e[got].t, e[got].kind, e[got].seed, e[got].b,
                                           e[got].r, e[got].c, e[got].cols);
    double have = strtod(line, NULL);
    if (have != want)
      fail_msg("element %d (t=%d kind=%d seed=%" PRIu64 " b=%" PRId64 " r=%" PRId64 " c=%" PRId64
               "): python %a, C %a",
               got, e[got].t, e[got].kind, e[got].seed, e[got].b, e[got].r, e[got].c, have, want);
    if (e[got].kind != TSR_INPUTS_DYADIC && want != 0.0) random_seen++;
    got++;
  }
  assert_int_equal(pclose(py), 0);
  unlink(path);
  assert_int_equal(got, n);
  assert_true(random_seen > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_generator_matches_c)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
