/* Compiling ahead through the measure layer (tsr__exec_precompile, the
 * backends' optional precompile slot), without a GPU: a real FFMA plan
 * whose walk the realize step normalizes lands in the on-disk CUBIN cache
 * under the key the prepare of its realized plan looks up (tsr__cubin_get
 * then reports from_disk, and the bytes are an ELF image), opening no
 * device on the context; a second call finds it there; a cache that cannot
 * be written is a failure; backends without the slot refuse. Skips the
 * compiling tests when NVRTC is not installed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/cuda/gpu.h"
#include "core/context.h"
#include "measure/exec.h"
#include "tessera.h"
#include "test_cubin_cache.h"

static int have_nvrtc;

static int setup(void **state) {
  char msg[1024];
  have_nvrtc = tsr__nvrtc_load(msg, sizeof msg) != NULL;
  if (!have_nvrtc) printf("# NVRTC absent: %s\n", msg);
  return cubin_cache_make("/tmp/tsr-precompile");
}
static int teardown(void **state) {
  (void)state;
  return cubin_cache_remove();
}

/* 256^3 with a 64x32 tile: a 4x8 grid, on which rect:4x8 is the linear
 * walk; prepare compiles the realized (linear) plan's source. */
static void ffma_case(tsr_problem *p, tsr_plan *plan) {
  char msg[256];
  tsr_problem_init(p, 256, 256, 256);
  assert_int_equal(tsr_problem_check(p, msg, sizeof msg), TSR_OK);
  tsr_plan_builtin(NULL, TSR_BACKEND_CUDA, p, plan);
  assert_int_equal(tsr_plan_parse("mma=ffma,bm=64,bn=32,bk=8,wm=32,wn=16,tm=4,tn=4,walk=rect:4x8",
                                  plan, msg, sizeof msg),
                   TSR_OK);
}

static void test_ffma_plan_lands_in_cache(void **state) {
  if (!have_nvrtc) skip();
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_plan plan;
  ffma_case(&p, &plan);
  assert_int_equal(cubins_on_disk(), 0);
  int cached = -1;
  tsr_status st = tsr__exec_precompile(ctx, TSR_BACKEND_CUDA, &p, &plan, 9, 0, &cached);
  if (st) printf("%s\n", tsr_context_message(ctx));
  assert_int_equal(st, TSR_OK);
  assert_int_equal(cached, 0);
  assert_int_equal(cubins_on_disk(), 1);
  /* nothing of the context was opened: no device state */
  assert_null(ctx->backend_state[TSR_BACKEND_CUDA]);

  /* the source prepare compiles: the realized plan's (walk normalized) */
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(ctx, TSR_BACKEND_CUDA, &p, &plan, &info), TSR_OK);
  assert_int_equal(info.plan.walk.kind, TSR_WALK_LINEAR);
  assert_int_not_equal(plan.walk.kind, TSR_WALK_LINEAR);
  char *src = tsr_plan_source(TSR_BACKEND_CUDA, &p, &info.plan);
  assert_non_null(src);
  void *bin = NULL;
  size_t n = 0;
  tsr__cubin_meta meta;
  assert_int_equal(tsr__cubin_get(ctx, src, 9, 0, 0, &bin, &n, NULL, &meta), TSR_OK);
  assert_int_equal(meta.from_disk, 1);
  assert_true(n > 64);
  assert_memory_equal(bin, "\x7f" "ELF", 4);
  free(bin);
  free(src);
  assert_int_equal(cubins_on_disk(), 1);

  /* again: found on disk, nothing compiled */
  assert_int_equal(tsr__exec_precompile(ctx, TSR_BACKEND_CUDA, &p, &plan, 9, 0, &cached), TSR_OK);
  assert_int_equal(cached, 1);
  assert_int_equal(cubins_on_disk(), 1);
  tsr_context_destroy(ctx);
}

/* A compile the cache cannot keep is no precompile: the caller compiles. */
static void test_unwritable_cache_fails(void **state) {
  if (!have_nvrtc) skip();
  char file[300];
  snprintf(file, sizeof file, "%s/not-a-dir", cache_root);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  setenv("XDG_CACHE_HOME", file, 1);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_plan plan;
  ffma_case(&p, &plan);
  plan.bk = 16; /* another source: not in any cache */
  int cached = -1;
  assert_int_equal(tsr__exec_precompile(ctx, TSR_BACKEND_CUDA, &p, &plan, 9, 0, &cached),
                   TSR_ERR_IO);
  assert_non_null(strstr(tsr_context_message(ctx), "module cache"));
  assert_int_equal(cached, 0);
  tsr_context_destroy(ctx);
  setenv("XDG_CACHE_HOME", cache_root, 1);
}

/* Only the cuda backend compiles ahead; the others refuse without work. */
static void test_backends_without_slot(void **state) {
  assert_int_equal(tsr__exec_can_precompile(TSR_BACKEND_CUDA), 1);
  assert_int_equal(tsr__exec_can_precompile(TSR_BACKEND_CPU), 0);
  assert_int_equal(tsr__exec_can_precompile(TSR_BACKEND_CUBLAS), 0);
  assert_int_equal(tsr__exec_can_precompile(TSR_BACKEND_HAND), 0);
  assert_int_equal(tsr__exec_can_precompile(TSR_BACKEND_AUTO), 0);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  char msg[256];
  tsr_problem_init(&p, 64, 64, 64);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  tsr_plan plan;
  tsr_plan_builtin(NULL, TSR_BACKEND_CPU, &p, &plan);
  int cached = -1;
  assert_int_equal(tsr__exec_precompile(ctx, TSR_BACKEND_CPU, &p, &plan, 9, 0, &cached),
                   TSR_ERR_UNSUPPORTED);
  assert_non_null(strstr(tsr_context_message(ctx), "cpu compiles nothing ahead"));
  assert_int_equal(cached, 0);
  assert_int_equal(tsr__exec_precompile(ctx, TSR_BACKEND_AUTO, &p, &plan, 9, 0, &cached),
                   TSR_ERR_INVALID);
  tsr_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ffma_plan_lands_in_cache),
      cmocka_unit_test(test_unwritable_cache_fails),
      cmocka_unit_test(test_backends_without_slot),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
