/* Compiling ahead (src/tune/prefetch.c): the look-ahead window on plain
 * data (exact index lists: the search's order, its statuses, the block's
 * mine[] deal, the window and the --max-candidates budget), and, without a
 * GPU, one compile thread working through real FFMA candidates into a
 * temporary module cache: the window queues exactly the candidates the
 * search will measure, finished compiles are found on disk under the key
 * their prepare looks up, the deadline stops new compiles, a queued compile
 * the search reaches first is taken back, and the accounting adds up. The
 * threaded test skips when NVRTC is not installed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/cuda/gpu.h"
#include "sys/clock.h"
#include "tune/tune.h"
#include "test_cubin_cache.h"

static int setup(void **state) {
  (void)state;
  return cubin_cache_make("/tmp/tsr-prefetch");
}
static int teardown(void **state) {
  (void)state;
  return cubin_cache_remove();
}

/* ---- the window ----------------------------------------------------------- */
/* 0 measured (the incumbent), 1..8 planner-legal, 9..11 planner rejections;
 * 3 and 6 belong to another candidate block. */
#define NC 12
static tsr__tune_cand cands[NC];
static const unsigned char mine[NC] = {1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1};

static void reset_cands(void) {
  memset(cands, 0, sizeof cands);
  cands[0].status = TSR__CAND_OK;
  cands[0].role = TSR__ROLE_INCUMBENT;
  for (int i = 9; i < NC; i++) cands[i].status = TSR__CAND_REJ_PLANNER;
}

static void expect(size_t pos, size_t window, long left, const unsigned char *m,
                   const size_t *want, size_t nwant) {
  size_t out[NC];
  size_t k = tsr__tune_lookahead(cands, m, NC, pos, window, left, out);
  if (k != nwant) printf("pos %zu window %zu left %ld: %zu indices, want %zu\n", pos, window, left, k, nwant);
  assert_int_equal(k, nwant);
  for (size_t i = 0; i < k; i++) assert_int_equal(out[i], want[i]);
}

static void test_lookahead_window(void **state) {
  reset_cands();
  /* the next four the search measures: not 3 (another block's) */
  expect(0, 4, -1, mine, (size_t[]){1, 2, 4, 5}, 4);
  /* --max-candidates leaves two after this one, or none */
  expect(0, 4, 2, mine, (size_t[]){1, 2}, 2);
  expect(0, 4, 0, mine, NULL, 0);
  /* later in the order: not 6; never the planner's rejections */
  expect(4, 4, -1, mine, (size_t[]){5, 7, 8}, 3);
  expect(7, 4, -1, mine, (size_t[]){8}, 1);
  expect(8, 4, -1, mine, NULL, 0);
  /* without a block deal every legal candidate is the search's */
  expect(4, 4, -1, NULL, (size_t[]){5, 6, 7, 8}, 4);
  /* a window of one: just the next */
  expect(2, 1, -1, mine, (size_t[]){4}, 1);
  /* a candidate already classified (e.g. measured) is not looked at again */
  cands[5].status = TSR__CAND_REJ_COMPILE;
  expect(0, 4, -1, mine, (size_t[]){1, 2, 4, 7}, 4);
  expect(0, 8, -1, mine, (size_t[]){1, 2, 4, 7, 8}, 5);
}

/* Nothing starts where nothing can be compiled ahead. */
static void test_prefetch_off(void **state) {
  reset_cands();
  tsr_problem p;
  tsr_problem_init(&p, 64, 64, 64);
  tsr__tune_prefetch_stats st;
  assert_null(tsr__tune_prefetch_start(TSR_BACKEND_CUDA, &p, cands, NC, 0, 9, 0, &st));
  assert_int_equal(st.threads, 0);
  assert_string_equal(st.off, "--compile-threads 0");
  assert_null(tsr__tune_prefetch_start(TSR_BACKEND_CPU, &p, cands, NC, 4, 0, 0, &st));
  assert_string_equal(st.off, "backend cpu compiles nothing ahead");
  assert_null(tsr__tune_prefetch_start(TSR_BACKEND_HAND, &p, cands, NC, 4, 9, 0, &st));
  /* a NULL prefetcher is a no-op for the search */
  assert_true(tsr__tune_prefetch_next(NULL, mine, 0, -1) == 0.0);
  tsr__tune_prefetch_deadline(NULL, 1.0);
  tsr__tune_prefetch_stop(NULL, &st);
}

/* ---- one compile thread, real kernels ------------------------------------- */

/* 1 when candidate i's realized source is in the disk cache for sm_90. */
static int on_disk(tsr_context *ctx, const tsr_problem *p, const tsr__tune_cand *c) {
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(ctx, TSR_BACKEND_CUDA, p, &c->plan, &info), TSR_OK);
  char *src = tsr_plan_source(TSR_BACKEND_CUDA, p, &info.plan);
  assert_non_null(src);
  void *bin = NULL;
  size_t n = 0;
  tsr__cubin_meta meta;
  assert_int_equal(tsr__cubin_get(ctx, src, 9, 0, 0, &bin, &n, NULL, &meta), TSR_OK);
  int hit = meta.from_disk && n > 4 && !memcmp(bin, "\x7f" "ELF", 4);
  free(bin);
  free(src);
  return hit;
}

static void test_prefetch_thread(void **state) {
  char msg[1024];
  if (!tsr__nvrtc_load(msg, sizeof msg)) {
    printf("# NVRTC absent: %s\n", msg);
    skip();
  }
  /* six FFMA candidates of 256^3: 0 the incumbent, 3 another block's */
  static const char *const plans[6] = {
      NULL, /* the built-in default */
      "bm=64,bn=64,bk=16,wm=32,wn=32,tm=4,tn=8",
      "bm=64,bn=32,bk=8,wm=32,wn=16,tm=4,tn=4,walk=rect:4x8",
      "bm=32,bn=64,bk=16,wm=16,wn=32,tm=4,tn=4,stages=1",
      "bm=64,bn=64,bk=32,wm=32,wn=32,tm=8,tn=4,vec=2",
      "bm=32,bn=32,bk=8,wm=16,wn=32,tm=4,tn=4,stages=3",
  };
  static const unsigned char mine6[6] = {1, 1, 1, 0, 1, 1};
  tsr_problem p;
  tsr_problem_init(&p, 256, 256, 256);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  memset(cands, 0, sizeof cands);
  for (int i = 0; i < 6; i++) {
    tsr_plan_builtin(NULL, TSR_BACKEND_CUDA, &p, &cands[i].plan);
    if (i) assert_int_equal(tsr_plan_parse(plans[i], &cands[i].plan, msg, sizeof msg), TSR_OK);
    cands[i].role = i ? TSR__ROLE_SEARCH : TSR__ROLE_INCUMBENT;
  }
  assert_int_equal(cubins_on_disk(), 0);

  tsr__tune_prefetch_stats st;
  tsr__tune_prefetch *pf = tsr__tune_prefetch_start(TSR_BACKEND_CUDA, &p, cands, 6, 1, 9, 0, &st);
  assert_non_null(pf);
  assert_int_equal(st.threads, 1);
  assert_int_equal(st.window, 2);
  /* measuring the incumbent: 1 and 2 queued; the incumbent compiles itself */
  assert_true(tsr__tune_prefetch_next(pf, mine6, 0, -1) == 0.0);
  cands[0].status = TSR__CAND_OK;
  /* the thread compiles 1, then 2 (the search would be measuring meanwhile) */
  int64_t t0 = tsr__now_ns();
  while (cubins_on_disk() < 2 && tsr__now_ns() - t0 < (int64_t)120e9) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  assert_int_equal(cubins_on_disk(), 2);
  /* the budget's end: nothing starts after it */
  tsr__tune_prefetch_deadline(pf, (double)tsr__now_ns() * 1e-9);
  tsr__tune_prefetch_next(pf, mine6, 1, -1); /* queues 4 (3 is not ours) */
  cands[1].status = TSR__CAND_OK;
  tsr__tune_prefetch_next(pf, mine6, 2, -1); /* queues 5 */
  cands[2].status = TSR__CAND_OK;
  /* 4 is still queued: the search takes it back and compiles it itself;
   * --max-candidates leaves nothing after it */
  assert_true(tsr__tune_prefetch_next(pf, mine6, 4, 0) == 0.0);
  cands[4].status = TSR__CAND_OK;
  tsr__tune_prefetch_stop(pf, &st);

  assert_int_equal(st.threads, 1);
  assert_int_equal(st.dispatched, 4); /* 1, 2, 4, 5 */
  assert_int_equal(st.compiled, 2);   /* 1, 2 */
  assert_int_equal(st.found_on_disk, 0);
  assert_int_equal(st.failed, 0);
  assert_int_equal(st.taken_by_search, 1); /* 4 */
  assert_int_equal(st.not_started, 1);     /* 5 */
  assert_int_equal(st.unused, 0);
  /* 1 ready; 2 ready, or waited for if its thread had not yet said so */
  assert_int_equal(st.measured_ready + st.measured_after_wait, 2);
  assert_true(st.measured_ready >= 1);
  assert_int_equal(st.measured_not_precompiled, 2); /* 0 and 4 */
  assert_true(st.seconds_join >= 0.0);
  /* what the thread compiled is what prepare looks up; 4 and 5 never were */
  assert_int_equal(cubins_on_disk(), 2);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  assert_int_equal(on_disk(ctx, &p, &cands[1]), 1);
  assert_int_equal(on_disk(ctx, &p, &cands[2]), 1);
  tsr_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookahead_window),
      cmocka_unit_test(test_prefetch_off),
      cmocka_unit_test(test_prefetch_thread),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
