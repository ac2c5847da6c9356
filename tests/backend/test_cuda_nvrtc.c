/* NVRTC compilation (no GPU needed) and the on-disk CUBIN cache: a good
 * kernel becomes an sm_90 CUBIN with its ptxas resources in the log, a
 * broken one is TSR_ERR_NVRTC with the compiler log, the cache round-trips,
 * a bypass recompiles, a damaged entry is ignored and an unwritable cache is
 * not fatal. The hand kernel compiles without spills in every variant.
 * Skips when NVRTC is not installed. */
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

#include "backend/cuda/cuda.h"
#include "backend/cuda/gpu.h"
#include "core/context.h"
#include "tessera.h"

static const char good_src[] =
    "extern \"C\" __global__ void tsr_test_axpy(const float *x, float *y, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";
static const char bad_src[] =
    "extern \"C\" __global__ void tsr_test_broken(float *y) {\n"
    "  y[0] = tessera_undeclared_identifier;\n"
    "}\n";

static tsr_context *ctx;
static char cache_root[256];

static int setup(void **state) {
  char msg[1024];
  if (!tsr__nvrtc_load(msg, sizeof msg)) {
    printf("# NVRTC absent: %s\n", msg);
    return 0; /* every test skips */
  }
  snprintf(cache_root, sizeof cache_root, "/tmp/tessera-test-cache-XXXXXX");
  if (!mkdtemp(cache_root)) return -1;
  setenv("XDG_CACHE_HOME", cache_root, 1);
  return tsr_context_create(&ctx) ? -1 : 0;
}
static int teardown(void **state) {
  tsr_context_destroy(ctx);
  if (cache_root[0]) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_root);
    if (system(cmd) != 0) return -1;
  }
  return 0;
}
#define NEED_NVRTC() \
  do {               \
    if (!ctx) skip(); \
  } while (0)

static void test_compile_good(void **state) {
  NEED_NVRTC();
  void *bin = NULL;
  size_t n = 0;
  char *log = NULL;
  tsr_status st = tsr__nvrtc_compile(ctx, good_src, 9, 0, &bin, &n, &log);
  if (st) printf("%s\n", tsr_context_message(ctx));
  assert_int_equal(st, TSR_OK);
  assert_true(n > 64);
  assert_memory_equal(bin, "\x7f" "ELF", 4);
  assert_non_null(log);
  assert_non_null(strstr(log, "sm_90"));
  int regs = -1, stack = -1, ss = -1, sl = -1;
  assert_int_equal(tsr__ptxas_parse(log, "tsr_test_axpy", &regs, &stack, &ss, &sl), 0);
  assert_true(regs > 0 && regs <= 255);
  assert_int_equal(ss, 0);
  assert_int_equal(sl, 0);
  assert_int_equal(tsr__ptxas_parse(log, "no_such_kernel", &regs, NULL, NULL, NULL), -1);
  free(bin);
  free(log);
}

static void test_compile_broken(void **state) {
  NEED_NVRTC();
  void *bin = (void *)1;
  size_t n = 7;
  tsr_status st = tsr__nvrtc_compile(ctx, bad_src, 9, 0, &bin, &n, NULL);
  assert_int_equal(st, TSR_ERR_NVRTC);
  assert_null(bin);
  assert_int_equal(n, 0);
  const char *m = tsr_context_message(ctx);
  assert_non_null(strstr(m, "compile for sm_90 failed"));
  assert_non_null(strstr(m, "tessera_undeclared_identifier")); /* the compiler log */
}

static int file_exists(const char *key) {
  char dir[512], path[700];
  assert_int_equal(tsr__cubin_cache_dir(dir, sizeof dir), 0);
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  return access(path, R_OK) == 0;
}

static void test_disk_cache_round_trip(void **state) {
  NEED_NVRTC();
  char dir[512];
  assert_int_equal(tsr__cubin_cache_dir(dir, sizeof dir), 0);
  assert_non_null(strstr(dir, cache_root));
  void *b1, *b2, *b3;
  size_t n1, n2, n3;
  char *log = NULL;
  tsr__cubin_meta m1, m2, m3;
  assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b1, &n1, &log, &m1), TSR_OK);
  assert_int_equal(m1.from_disk, 0);
  assert_int_equal(m1.disk_written, 1);
  assert_non_null(log);
  free(log);
  assert_true(file_exists(m1.key));
  assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b2, &n2, &log, &m2), TSR_OK);
  assert_int_equal(m2.from_disk, 1);
  assert_null(log);
  assert_string_equal(m1.key, m2.key);
  assert_int_equal(n1, n2);
  assert_memory_equal(b1, b2, n1);
  /* bypass: never read, compile afresh */
  assert_int_equal(
      tsr__cubin_get(ctx, good_src, 9, 0, TSR__COMPILE_BYPASS_CACHE, &b3, &n3, NULL, &m3), TSR_OK);
  assert_int_equal(m3.from_disk, 0);
  assert_string_equal(m3.key, m1.key);
  free(b3);
  /* another arch or another source is another key */
  assert_int_equal(tsr__cubin_get(ctx, good_src, 8, 0, 0, &b3, &n3, NULL, &m3), TSR_OK);
  assert_string_not_equal(m3.key, m1.key);
  free(b3);
  /* a damaged entry is ignored (recompiled and rewritten) */
  char path[700];
  snprintf(path, sizeof path, "%s/%s.cubin", dir, m1.key);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs("garbage", f);
  fclose(f);
  assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b3, &n3, NULL, &m3), TSR_OK);
  assert_int_equal(m3.from_disk, 0);
  assert_int_equal(m3.disk_written, 1);
  assert_memory_equal(b3, "\x7f" "ELF", 4);
  free(b3);
  free(b1);
  free(b2);
}

/* A cache folder that cannot be created (a regular file is in the way; this
 * works even as root) or written is not fatal. */
static void test_unwritable_cache_not_fatal(void **state) {
  NEED_NVRTC();
  char blocker[400];
  snprintf(blocker, sizeof blocker, "%s/blocker", cache_root);
  FILE *f = fopen(blocker, "w");
  assert_non_null(f);
  fclose(f);
  setenv("XDG_CACHE_HOME", blocker, 1); /* <file>/tessera/modules cannot exist */
  void *b;
  size_t n;
  tsr__cubin_meta m;
  assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b, &n, NULL, &m), TSR_OK);
  assert_int_equal(m.from_disk, 0);
  assert_int_equal(m.disk_written, 0);
  free(b);
  if (geteuid() != 0) { /* permissions only bind non-root users */
    char ro[400];
    snprintf(ro, sizeof ro, "%s/ro", cache_root);
    assert_int_equal(mkdir(ro, 0555), 0);
    setenv("XDG_CACHE_HOME", ro, 1);
    assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b, &n, NULL, &m), TSR_OK);
    assert_int_equal(m.disk_written, 0);
    free(b);
    chmod(ro, 0755);
  }
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", blocker, 1); /* no XDG: $HOME/.cache/... under a file */
  assert_int_equal(tsr__cubin_get(ctx, good_src, 9, 0, 0, &b, &n, NULL, &m), TSR_OK);
  assert_int_equal(m.disk_written, 0);
  free(b);
  setenv("XDG_CACHE_HOME", cache_root, 1);
}

/* The hand kernel in every op/beta variant: compiles for sm_90 with no
 * stack and no spills (registers fit 256 threads per block). */
static void test_hand_kernel_compiles_clean(void **state) {
  NEED_NVRTC();
  for (int v = 0; v < 8; v++) {
    tsr_problem p;
    tsr_problem_init(&p, 127, 193, 61);
    p.op_a = (tsr_op)(v & 1);
    p.op_b = (tsr_op)((v >> 1) & 1);
    p.beta = (v & 4) ? 0.5f : 0.0f;
    p.batch = 2;
    assert_int_equal(tsr_problem_check(&p, NULL, 0), TSR_OK);
    char *src = tsr__hand_source(&p);
    assert_non_null(src);
    void *bin;
    size_t n;
    char *log = NULL;
    tsr_status st = tsr__nvrtc_compile(ctx, src, 9, 0, &bin, &n, &log);
    if (st) printf("%s\n", tsr_context_message(ctx));
    assert_int_equal(st, TSR_OK);
    int regs, stack, ss, sl;
    assert_int_equal(tsr__ptxas_parse(log, TSR__HAND_KERNEL_NAME, &regs, &stack, &ss, &sl), 0);
    printf("# hand op %c%c beta %g: %d registers, %d stack, %d/%d spill bytes\n",
           p.op_a ? 'T' : 'N', p.op_b ? 'T' : 'N', p.beta, regs, stack, ss, sl);
    assert_int_equal(stack, 0);
    assert_int_equal(ss + sl, 0);
    assert_true(regs <= 255);
    free(bin);
    free(log);
    free(src);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compile_good),
      cmocka_unit_test(test_compile_broken),
      cmocka_unit_test(test_disk_cache_round_trip),
      cmocka_unit_test(test_unwritable_cache_not_fatal),
      cmocka_unit_test(test_hand_kernel_compiles_clean),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
