/* The search on the CPU backend with tiny shapes and budgets: the incumbent
 * is always a measured member, budgets (count and seconds) hold and are
 * recorded, a candidate corrupted by construction (test hook) is rejected by
 * validation and never wins even when it was the fastest, and the database
 * records what happened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"
#include "measure/exec.h"
#include "tune/tune.h"

static char tmpdir[256], dbpath[400];

static int setup(void **state) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/tsr_tune_search_XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  snprintf(dbpath, sizeof dbpath, "%s/tune.db", tmpdir);
  unsetenv("TSR_TUNE_TEST_CORRUPT_PLAN");
  setenv("TESSERA_TUNE_DB", "off", 1);
  return 0;
}

static int teardown(void **state) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  unsetenv("TSR_TUNE_TEST_CORRUPT_PLAN");
  return system(cmd) == 0 ? 0 : -1;
}

static void config(tsr__tune_config *cfg, int64_t m, int64_t n, int64_t k) {
  memset(cfg, 0, sizeof *cfg);
  cfg->backend = TSR_BACKEND_CPU;
  tsr_problem_init(&cfg->problem, m, n, k);
  cfg->measure = (tsr__measure_opts){.samples = 5, .sample_ms = 1, .warmup_ms = 2};
  cfg->rounds = 2;
  cfg->db_path = dbpath;
  cfg->child_exe = NULL; /* replay in process */
  cfg->oracle_cache = NULL;
  cfg->accuracy = TSR_INPUTS_RANDOM;
  cfg->command = "test";
}

static int64_t query_int(const char *sql) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open_v2(dbpath, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *s;
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return v;
}

static void check_invariants(const tsr__tune_result *r) {
  /* The built-in default is the first candidate and was measured. */
  assert_true(r->n > 0);
  assert_int_equal(r->incumbent, 0);
  assert_int_equal(r->cands[0].role, TSR__ROLE_INCUMBENT);
  tsr_plan def;
  tsr_problem p;
  tsr_problem_init(&p, 1, 1, 1);
  assert_int_not_equal(r->cands[0].status, TSR__CAND_UNMEASURED);
  /* Every timed candidate passed validation; rejected ones have a reason
   * and no time. */
  for (size_t i = 0; i < r->n; i++) {
    const tsr__tune_cand *c = &r->cands[i];
    if (c->status == TSR__CAND_OK) {
      assert_true(isfinite(c->time_ns) && c->time_ns > 0);
      assert_true(c->nsamples >= 5);
    } else if (c->status != TSR__CAND_UNMEASURED) {
      assert_true(c->reason[0] != '\0');
    }
  }
  (void)def;
  if (r->best >= 0) assert_int_equal(r->cands[r->best].status, TSR__CAND_OK);
  if (r->chosen >= 0) assert_int_equal(r->cands[r->chosen].status, TSR__CAND_OK);
  for (size_t i = 0; i < r->ntie; i++) assert_int_equal(r->cands[r->tie[i]].status, TSR__CAND_OK);
}

static void test_max_candidates(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 96, 80, 64);
  cfg.max_candidates = 4;
  cfg.compile_threads = 3; /* the CPU backend compiles nothing ahead: no thread starts */
  tsr__tune_result r;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  check_invariants(&r);
  assert_int_equal(r.measured, 4);
  assert_int_equal(r.prefetch.threads, 0);
  assert_string_equal(r.prefetch.off, "backend cpu compiles nothing ahead");
  assert_int_equal(r.prefetch.dispatched, 0);
  assert_int_equal(r.prefetch.measured_ready + r.prefetch.measured_after_wait, 0);
  assert_int_equal(r.prefetch.measured_not_precompiled, 4);
  char *doc = tsr__tune_result_json(&cfg, &r);
  assert_non_null(doc);
  assert_non_null(strstr(doc, "\"prefetch\""));
  assert_non_null(strstr(doc, "\"measured_not_precompiled\": 4"));
  free(doc);
  assert_true(r.legal > 4);
  size_t measured = 0;
  for (size_t i = 0; i < r.n; i++)
    measured += r.cands[i].status != TSR__CAND_UNMEASURED && r.cands[i].status != TSR__CAND_REJ_PLANNER;
  assert_int_equal(measured, 4);
  assert_int_equal(r.unmeasured, r.legal - 4);
  /* recorded */
  assert_int_equal(query_int("SELECT measured FROM runs"), 4);
  assert_int_equal(query_int("SELECT max_candidates FROM runs"), 4);
  assert_int_equal(query_int("SELECT count(*) FROM candidates WHERE status NOT IN "
                             "('unmeasured','rejected-planner')"),
                   4);
  assert_int_equal(query_int("SELECT count(*) FROM candidates WHERE status='rejected-planner'"),
                   (int64_t)(r.planner_rejected < TSR__TUNE_KEEP_REJECTED ? r.planner_rejected
                                                                         : TSR__TUNE_KEEP_REJECTED));
  assert_true(r.planner_rejected > 0); /* MC/NC not divisible by the micro-tile */
  assert_int_equal(query_int("SELECT count(*) FROM runs WHERE status='done' AND "
                             "search_seconds IS NOT NULL AND total_seconds IS NOT NULL"),
                   1);
  assert_int_equal(query_int("SELECT count(*) FROM tuned"), r.chosen >= 0 ? 1 : 0);
  /* the CPU backend's compiling ahead as recorded: no thread, nothing
   * dispatched, every measured candidate compiled by its own prepare */
  assert_int_equal(query_int("SELECT count(*) FROM runs WHERE prefetch_threads=0 AND "
                             "prefetch_dispatched=0 AND prefetch_compiled=0 AND "
                             "prefetch_found_on_disk=0 AND prefetch_failed=0 AND "
                             "prefetch_measured_ready=0 AND prefetch_measured_after_wait=0 AND "
                             "prefetch_wait_seconds=0 AND prefetch_unused=0 AND "
                             "prefetch_join_seconds=0"),
                   1);
  assert_int_equal(query_int("SELECT prefetch_measured_not_precompiled FROM runs"), 4);
  tsr__tune_result_free(&r);
  tsr_context_destroy(ctx);
}

/* The neighbour candidate: a tune measures, right after the incumbent, the plan
 * the lookup would serve its shape from the database's other entries (here a
 * 64^3 winner, within an octave of 96x64x64), so every tune document prices the
 * transfer (tessera tune --loo) and the search starts from it. */
static void test_neighbour_candidate(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  char msg[1200];
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(dbpath, 1, &db, msg, sizeof msg), TSR_OK);
  tsr__tune_target t;
  assert_int_equal(tsr__tune_target_get(ctx, TSR_BACKEND_CPU, &t), TSR_OK);
  const char *pn = "bm=32,bn=64,bk=32,wm=1,wn=1,tm=4,tn=8,stages=1,vec=1,a=staged,b=staged,"
                   "pad=0,walk=stripe:2,splitk=1,threads=1,isa=generic,mma=ffma";
  sqlite3_stmt *st;
  assert_int_equal(
      sqlite3_prepare_v2(tsr__tune_db_handle(db),
                         "INSERT INTO tuned(device, arch, driver, nvrtc, tessera_version, backend, "
                         "m, n, k, op_a, op_b, batch, precision, plan, decision, updated) "
                         "VALUES(?,?,?,?,?,?,64,64,64,'N','N',1,'auto',?,'winner',"
                         "'2026-12-06T00:00:00Z')",
                         -1, &st, NULL),
      SQLITE_OK);
  const char *key[] = {t.device, t.arch, t.driver, t.nvrtc, t.version, t.backend, pn};
  for (int i = 0; i < 7; i++) sqlite3_bind_text(st, i + 1, key[i], -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  tsr__tune_db_close(db);
  tsr__tune_config cfg;
  config(&cfg, 96, 64, 64);
  cfg.max_candidates = 3;
  tsr__tune_result r;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  check_invariants(&r);
  /* the stored text read over 96x64x64's default, as the lookup reads it */
  tsr_plan want;
  tsr_plan_builtin(ctx, TSR_BACKEND_CPU, &cfg.problem, &want);
  assert_int_equal(tsr_plan_parse(pn, &want, msg, sizeof msg), TSR_OK);
  int found = 0;
  for (size_t i = 0; i < r.n; i++) {
    if (r.cands[i].role != TSR__ROLE_NEIGHBOUR) continue;
    found++;
    assert_true(tsr_plan_equal(&r.cands[i].plan, &want));
    assert_int_equal(i, 1); /* measured right after the incumbent */
    assert_int_not_equal(r.cands[i].status, TSR__CAND_UNMEASURED);
  }
  assert_int_equal(found, 1);
  char *doc = tsr__tune_result_json(&cfg, &r);
  assert_non_null(strstr(doc, "\"role\": \"neighbour\""));
  free(doc);
  tsr__tune_result_free(&r);
  /* no entry within reach (256 rows: 4x away; the cpu backend has no class pass) */
  config(&cfg, 256, 64, 64);
  cfg.max_candidates = 2;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  for (size_t i = 0; i < r.n; i++) assert_int_not_equal(r.cands[i].role, TSR__ROLE_NEIGHBOUR);
  tsr__tune_result_free(&r);
  tsr_context_destroy(ctx);
}

static void test_max_seconds(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 128, 128, 128);
  cfg.max_seconds = 1.5;
  cfg.measure.warmup_ms = 20; /* each candidate costs at least ~25 ms */
  tsr__tune_result r;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  check_invariants(&r);
  assert_true(r.measured >= 1);
  assert_true(r.measured < r.legal); /* stopped by the clock, not by the space */
  assert_true(r.unmeasured > 0);
  /* The search stops starting candidates at the deadline minus the replay
   * reserve; one candidate and the replay estimate may overshoot a little. */
  assert_true(r.total_s < cfg.max_seconds + 2.0);
  assert_true(r.search_s <= r.total_s);
  assert_int_equal(query_int("SELECT count(*) FROM runs WHERE max_seconds = 1.5 AND "
                             "total_seconds < 3.5"),
                   1);
  tsr__tune_result_free(&r);
  tsr_context_destroy(ctx);
}

static void test_corrupted_fastest_never_wins(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 64, 96, 48);
  cfg.max_candidates = 6;
  cfg.db_path = NULL; /* the second run must see the same space and order */
  tsr__tune_result r1;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r1), TSR_OK);
  check_invariants(&r1);
  assert_true(r1.best >= 0);
  char fastest[TSR__TUNE_PLAN_CAP];
  snprintf(fastest, sizeof fastest, "%s", r1.cands[r1.best].text);
  tsr__tune_result_free(&r1);

  /* Same space and order; now the fastest plan's output is corrupted. */
  setenv("TSR_TUNE_TEST_CORRUPT_PLAN", fastest, 1);
  cfg.db_path = dbpath;
  tsr__tune_result r2;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r2), TSR_OK);
  unsetenv("TSR_TUNE_TEST_CORRUPT_PLAN");
  check_invariants(&r2);
  long hit = -1;
  for (size_t i = 0; i < r2.n; i++)
    if (!strcmp(r2.cands[i].text, fastest)) hit = (long)i;
  assert_true(hit >= 0);
  assert_int_equal(r2.cands[hit].status, TSR__CAND_REJ_VALIDATION);
  assert_non_null(strstr(r2.cands[hit].reason, "validation: 1 of 6144 elements outside atol=0 rtol=0"));
  assert_false(isfinite(r2.cands[hit].time_ns));
  assert_int_not_equal(r2.best, hit);
  assert_int_not_equal(r2.chosen, hit);
  for (size_t i = 0; i < r2.ntie; i++) assert_int_not_equal(r2.tie[i], hit);
  assert_true(r2.rejected >= 1);
  /* The stored entry is not the corrupted plan, and the rejection is on
   * record with its reason. */
  char sql[800];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM candidates WHERE run_id=%lld AND plan='%s' AND "
           "status='rejected-validation' AND reason LIKE 'validation:%%'",
           (long long)r2.run_id, fastest);
  assert_int_equal(query_int(sql), 1);
  if (r2.chosen >= 0) {
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tuned WHERE run_id=%lld AND plan='%s'",
             (long long)r2.run_id, r2.cands[hit].realized);
    assert_int_equal(query_int(sql), 0);
  }
  tsr__tune_result_free(&r2);
  tsr_context_destroy(ctx);
}

/* A plan that breaks its precision mode's contract on random inputs (made
 * so by the test hook: a TF32-sized relative error) is rejected with reason
 * accuracy, is never the best, never chosen, never in the tie set, and the
 * rejection is on record with its figures. */
static void test_inaccurate_fastest_never_wins(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 64, 96, 48);
  cfg.max_candidates = 6;
  cfg.db_path = NULL;
  tsr__tune_result r1;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r1), TSR_OK);
  assert_true(r1.best >= 0);
  /* every measured candidate carries its accuracy figure */
  for (size_t i = 0; i < r1.n; i++)
    if (r1.cands[i].status == TSR__CAND_OK) {
      assert_true(r1.cands[i].rel_fro_err > 0 && r1.cands[i].rel_fro_err <= r1.cands[i].fro_limit);
    }
  char fastest[TSR__TUNE_PLAN_CAP];
  snprintf(fastest, sizeof fastest, "%s", r1.cands[r1.best].text);
  tsr__tune_result_free(&r1);
  setenv("TSR_TUNE_TEST_INACCURATE_PLAN", fastest, 1);
  cfg.db_path = dbpath;
  tsr__tune_result r2;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r2), TSR_OK);
  unsetenv("TSR_TUNE_TEST_INACCURATE_PLAN");
  check_invariants(&r2);
  long hit = -1;
  for (size_t i = 0; i < r2.n; i++)
    if (!strcmp(r2.cands[i].text, fastest)) hit = (long)i;
  assert_true(hit >= 0);
  assert_int_equal(r2.cands[hit].status, TSR__CAND_REJ_ACCURACY);
  assert_non_null(strstr(r2.cands[hit].reason, "accuracy (random inputs): strict contract"));
  assert_true(r2.cands[hit].rel_fro_err > r2.cands[hit].fro_limit);
  assert_int_not_equal(r2.best, hit);
  assert_int_not_equal(r2.chosen, hit);
  for (size_t i = 0; i < r2.ntie; i++) assert_int_not_equal(r2.tie[i], hit);
  char sql[800];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM candidates WHERE run_id=%lld AND plan='%s' AND "
           "status='rejected-accuracy' AND reason LIKE 'accuracy (random inputs)%%'",
           (long long)r2.run_id, fastest);
  assert_int_equal(query_int(sql), 1);
  tsr__tune_result_free(&r2);
  tsr_context_destroy(ctx);
}

static void test_refusals(void **state) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 32, 32, 32);
  tsr__tune_result r;
  cfg.rounds = 3;
  assert_int_equal(tsr__tune_run(ctx, &cfg, &r), TSR_ERR_INVALID);
  assert_non_null(strstr(tsr_context_message(ctx), "--rounds"));
  cfg.rounds = 2;
  cfg.backend = TSR_BACKEND_CUBLAS;
  assert_int_not_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  cfg.backend = TSR_BACKEND_CPU;
  cfg.problem.m = 0;
  assert_int_not_equal(tsr__tune_run(ctx, &cfg, &r), TSR_OK);
  assert_non_null(strstr(tsr_context_message(ctx), "m"));
  tsr_context_destroy(ctx);
}

/* The memory check counts the NVRTC compiles that run ahead (up to
 * --compile-threads at once, TSR__TUNE_COMPILE_BYTES each) on a backend that
 * compiles, and none on the CPU backend: the smallest limit that passes
 * without compile threads, found by bisection, plus 8 compiles' worth passes
 * with 8 threads and fails with 9. */
static void test_memory_counts_compiles(void **state) {
  (void)state;
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_config cfg;
  config(&cfg, 256, 256, 256);
  cfg.max_seconds = 0;
  cfg.backend = TSR_BACKEND_CUDA;
  cfg.compile_threads = 0;
  double lo = 1024, hi = 64.0 * 1024 * 1024 * 1024; /* lo fails, hi passes */
  cfg.max_memory = hi;
  assert_int_equal(tsr__tune_check(ctx, &cfg), TSR_OK);
  while (hi - lo > 4096) {
    cfg.max_memory = 0.5 * (lo + hi);
    if (tsr__tune_check(ctx, &cfg) == TSR_OK) hi = cfg.max_memory;
    else lo = cfg.max_memory;
  }
  cfg.max_memory = hi + 8 * TSR__TUNE_COMPILE_BYTES;
  cfg.compile_threads = 8;
  assert_int_equal(tsr__tune_check(ctx, &cfg), TSR_OK);
  cfg.compile_threads = 9;
  assert_int_equal(tsr__tune_check(ctx, &cfg), TSR_ERR_NOMEM);
  assert_non_null(strstr(tsr_context_message(ctx), "--max-memory"));
  cfg.backend = TSR_BACKEND_CPU; /* compiles nothing ahead */
  cfg.max_memory = 64.0 * 1024 * 1024 * 1024;
  cfg.compile_threads = 1000;
  assert_int_equal(tsr__tune_check(ctx, &cfg), TSR_OK);
  tsr_context_destroy(ctx);
}

/* The CUDA space (planned without a GPU, against sm_90's limits) holds the
 * wgmma families for a large fp32x3 problem, and no wgmma-tf32 plan there
 * (that family is below the fp32x3 contract) nor the Ozaki family (another
 * mode); precision ozaki's space is that family's. */
static void test_cuda_space_has_wgmma(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, 4096, 4096, 4096);
  p.precision = TSR_PREC_FP32X3;
  tsr__tune_space_t sp;
  assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, &p, NULL, NULL, 0, TSR__ORDER_PRIOR, &sp), TSR_OK);
  int legal_modes[6] = {0}, tf32 = 0;
  for (size_t i = 0; i < sp.n; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (c->plan.mma == TSR_MMA_WGMMA_TF32) tf32++;
    if (c->plan.mma == TSR_MMA_WGMMA_TF32X3 && c->realized[0] && (unsigned)c->plan.split < 6)
      legal_modes[c->plan.split]++;
  }
  assert_int_equal(tf32, 0);
  assert_true(legal_modes[TSR_SPLIT_INLINE] > 0);
  assert_true(legal_modes[TSR_SPLIT_PRODUCER] > 0);
  assert_true(legal_modes[TSR_SPLIT_PRODUCER_REG] > 0);
  assert_true(legal_modes[TSR_SPLIT_PRODUCER_PACK] > 0);
  assert_true(legal_modes[TSR_SPLIT_PRODUCER_BULK] > 0);
  for (size_t i = 0; i < sp.n; i++) assert_int_not_equal(sp.cands[i].plan.mma, TSR_MMA_WGMMA_S8);
  free(sp.cands);
  /* precision ozaki: only the Ozaki family, legal plans with 8 and 9 moduli
   * (25 bits per operand at K = 4096, and one more). (auto's space holds it
   * too: realizing that whole space took 9 s, too long for this label) */
  p.precision = TSR_PREC_OZAKI;
  assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, &p, NULL, NULL, 0, TSR__ORDER_PRIOR, &sp), TSR_OK);
  int oz[13] = {0};
  for (size_t i = 0; i < sp.n; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    assert_int_equal(c->plan.mma, TSR_MMA_WGMMA_S8);
    if (c->realized[0] && c->plan.moduli >= 0 && c->plan.moduli <= 12) oz[c->plan.moduli]++;
  }
  assert_true(oz[8] > 0);
  assert_true(oz[9] > 0);
  assert_int_equal(oz[7], 0);
  free(sp.cands);
  tsr_context_destroy(ctx);
}

/* The strict CUDA search space of M x N x K (op(B) = T when nt). */
static void strict_space(tsr_context *ctx, int64_t m, int64_t n, int64_t k, int nt, tsr_problem *p,
                         tsr__tune_space_t *sp) {
  tsr_problem_init(p, m, n, k);
  if (nt) {
    p->op_b = TSR_OP_T;
    p->ldb = k;
  }
  p->precision = TSR_PREC_STRICT;
  char msg[256];
  assert_int_equal(tsr_problem_check(p, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, p, NULL, NULL, 0, TSR__ORDER_PRIOR, sp), TSR_OK);
}

/* The strict CUDA space of M x 4096 x 4096, B transposed or not */
static void strict_decode_space(tsr_context *ctx, int64_t m, int trans_b, tsr__tune_space_t *sp) {
  tsr_problem p;
  strict_space(ctx, m, 4096, 4096, trans_b, &p, sp);
}

/* comma-separated key=value items in which two plan texts differ */
static int key_distance(const char *a, const char *b) {
  int d = 0;
  while (*a || *b) {
    size_t la = strcspn(a, ","), lb = strcspn(b, ",");
    d += la != lb || strncmp(a, b, la) != 0;
    a += la + (a[la] == ',');
    b += lb + (b[lb] == ',');
  }
  return d;
}

/* A plan text as the values of the plan keys met so far (a table shared by
 * the plans compared; NULL: the key is absent), for a key-aware distance:
 * the keys in which two plans differ, a key absent from one of them
 * counting as a difference. */
#define SPLIT_KEYS 48
typedef struct {
  char name[SPLIT_KEYS][24];
  int n;
} split_keys;
typedef struct {
  char buf[TSR__TUNE_PLAN_CAP];
  const char *val[SPLIT_KEYS];
} split_plan;

static void split_text(const char *text, split_keys *k, split_plan *s) {
  snprintf(s->buf, sizeof s->buf, "%s", text);
  memset(s->val, 0, sizeof s->val);
  for (char *save = NULL, *it = strtok_r(s->buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(it, '=');
    assert_non_null(eq);
    *eq = '\0';
    int j = 0;
    while (j < k->n && strcmp(k->name[j], it)) j++;
    if (j == k->n) {
      assert_true(k->n < SPLIT_KEYS && strlen(it) < sizeof k->name[0]);
      snprintf(k->name[k->n++], sizeof k->name[0], "%s", it);
    }
    s->val[j] = eq + 1;
  }
}

static int split_distance(const split_plan *a, const split_plan *b) {
  int d = 0;
  for (int j = 0; j < SPLIT_KEYS; j++)
    d += (a->val[j] == NULL) != (b->val[j] == NULL) || (a->val[j] && strcmp(a->val[j], b->val[j]));
  return d;
}

static int cmp_text(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --order interleave (strict 256^3): the same candidates as the prior order,
 * every position in the same prior tie (PRIOR_TIE, 0.5 %) as the prior
 * order's, the incumbent and the planner rejections where they were; inside
 * a tie the even steps keep the prior order's tie-break order and each odd
 * step takes a plan whose fewest differing keys from every plan before it
 * are the most of that tie's remaining ones (checked over the first tie's
 * first 24 odd steps, distances recomputed here from the texts). */
static void test_cuda_space_interleave(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, 256, 256, 256);
  p.precision = TSR_PREC_STRICT;
  tsr__tune_space_t a, b;
  assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, &p, NULL, NULL, 0, TSR__ORDER_PRIOR, &a), TSR_OK);
  assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, &p, NULL, NULL, 0, TSR__ORDER_INTERLEAVE, &b),
                   TSR_OK);
  assert_int_equal(a.n, b.n);
  assert_int_equal(a.legal, b.legal);
  size_t nl = 0; /* legal (kept) candidates: a realized text */
  while (nl < a.n && a.cands[nl].realized[0]) nl++;
  assert_true(nl > 1000);
  const char **ta = calloc(nl, sizeof *ta), **tb = calloc(nl, sizeof *tb);
  long *bucket = calloc(nl, sizeof *bucket);
  assert_non_null(ta);
  assert_non_null(tb);
  assert_non_null(bucket);
  for (size_t i = 0; i < a.n; i++) {
    assert_int_equal(a.cands[i].role, b.cands[i].role);
    if (i >= nl) { /* the planner rejections: unchanged, in place */
      assert_string_equal(a.cands[i].text, b.cands[i].text);
      continue;
    }
    assert_true(b.cands[i].realized[0] != '\0');
    ta[i] = a.cands[i].realized;
    tb[i] = b.cands[i].realized;
    long ba = lround(floor(log(a.cands[i].prior) / log(1.005)));
    assert_int_equal(ba, lround(floor(log(b.cands[i].prior) / log(1.005))));
    bucket[i] = ba;
  }
  assert_string_equal(a.cands[0].realized, b.cands[0].realized); /* the incumbent */
  qsort(ta, nl, sizeof *ta, cmp_text);
  qsort(tb, nl, sizeof *tb, cmp_text);
  for (size_t i = 0; i < nl; i++) assert_string_equal(ta[i], tb[i]);
  int moved = 0;
  for (size_t i = 0; i < nl; i++) moved += strcmp(a.cands[i].realized, b.cands[i].realized) != 0;
  assert_true(moved > 100);
  /* the even steps of every tie: the prior order's tie-break order */
  for (size_t s = 1, e; s < nl; s = e) {
    e = s + 1;
    while (e < nl && bucket[e] == bucket[s]) e++;
    if (e - s < 3) continue;
    size_t last = 0;
    for (size_t i = s; i < e; i += 2) {
      size_t j = s;
      while (j < e && strcmp(a.cands[j].realized, b.cands[i].realized)) j++;
      assert_true(j < e);
      if (i > s) assert_true(j > last);
      last = j;
    }
  }
  /* the first tie's odd steps: farthest from everything before */
  size_t e1 = 2;
  while (e1 < nl && bucket[e1] == bucket[1]) e1++;
  assert_true(e1 - 1 >= 100);
  split_plan *sp = calloc(e1, sizeof *sp);
  split_keys *keys = calloc(1, sizeof *keys);
  assert_non_null(sp);
  assert_non_null(keys);
  for (size_t i = 0; i < e1; i++) split_text(b.cands[i].realized, keys, &sp[i]);
  for (size_t pos = 2, odd = 0; pos < e1 && odd < 24; pos += 2, odd++) {
    int best = -1, picked = INT_MAX;
    for (size_t j = pos; j < e1; j++) {
      int md = INT_MAX;
      for (size_t q = 0; q < pos; q++) {
        int d = split_distance(&sp[j], &sp[q]);
        if (d < md) md = d;
      }
      if (j == pos) picked = md;
      if (md > best) best = md;
    }
    assert_int_equal(picked, best);
    assert_true(best >= 1);
  }
  free(sp);
  free(keys);
  free(ta);
  free(tb);
  free(bucket);
  free(a.cands);
  free(b.cands);
  tsr_context_destroy(ctx);
}

/* Long K, small output (strict 64x64x8192: the default splits K 128 ways):
 * the FFMA search holds the incumbent's split-K count and the counts half
 * and twice it beside 1, 2 and 4, and no other count (session 28's tune
 * measured 22 plans there, every one split 4 ways). A square problem's
 * incumbent (no split) adds none. */
static void test_cuda_space_splitk(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr__tune_space_t sp;
  strict_space(ctx, 64, 64, 8192, 0, &p, &sp);
  assert_int_equal(sp.cands[0].plan.splitk, 128); /* the incumbent */
  int by[5] = {0}; /* 64, 128, 256, 1-4, other counts */
  for (size_t i = 1; i < sp.n; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (!c->realized[0] || c->plan.mma != TSR_MMA_FFMA) continue;
    int sk = c->plan.splitk;
    by[sk == 64 ? 0 : sk == 128 ? 1 : sk == 256 ? 2 : sk <= 4 ? 3 : 4]++;
  }
  /* kept by the prior (best 3000 of ~186 000 legal): the incumbent's 128
   * ways and a neighbour (256 with the padded-work prior; 64 without it) */
  assert_true(by[1] >= 20);
  assert_true(by[0] + by[2] >= 20);
  assert_int_equal(by[4], 0);
  /* the kept candidates begin with the incumbent's neighbourhood: the first
   * 20 after it split at least 64 ways (a 4-way split of a 64x64 output
   * leaves 128 of 132 SMs idle) */
  for (size_t i = 1; i <= 20 && i < sp.n; i++) assert_true(sp.cands[i].plan.splitk >= 64);
  free(sp.cands);
  /* a 3-way default (64x10944x4928 NT, the decode rows' split): 3 and 6 join
   * 1, 2 and 4 */
  strict_space(ctx, 64, 10944, 4928, 1, &p, &sp);
  assert_int_equal(sp.cands[0].plan.splitk, 3);
  int three = 0, six = 0;
  for (size_t i = 1; i < sp.n; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (!c->realized[0] || c->plan.mma != TSR_MMA_FFMA) continue;
    three += c->plan.splitk == 3;
    six += c->plan.splitk == 6;
    assert_true(c->plan.splitk <= 4 || c->plan.splitk == 6);
  }
  assert_true(three >= 20);
  assert_true(six >= 1);
  free(sp.cands);
  strict_space(ctx, 1024, 1024, 1024, 0, &p, &sp);
  for (size_t i = 0; i < sp.n; i++)
    if (sp.cands[i].plan.mma == TSR_MMA_FFMA) assert_true(sp.cands[i].plan.splitk <= 4);
  free(sp.cands);
  tsr_context_destroy(ctx);
}

/* The prior's view penalty (session 34): at 64x10944x4928 NT, where the
 * compute time binds and the traffic factor alone tied every view with the
 * staged plans (session 33 run 7: 136 of 725 measured candidates were views,
 * none within 1.05x of the winner), the first 300 FFMA candidates after the
 * incumbent are all staged, and a view rates above the same plan staged. */
static void test_cuda_space_views_last(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr__tune_space_t sp;
  strict_space(ctx, 64, 10944, 4928, 1, &p, &sp);
  size_t ffma = 0, views = 0;
  for (size_t i = 1; i < sp.n && ffma < 300; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (!c->realized[0] || c->plan.mma != TSR_MMA_FFMA) continue;
    ffma++;
    views += c->plan.a == TSR_IN_VIEW || c->plan.b == TSR_IN_VIEW;
  }
  assert_int_equal(ffma, 300);
  assert_int_equal(views, 0);
  /* the same plan with B read in place rates slower than staged: the first
   * staged FFMA candidate whose B may be read in place (an inline split) */
  int compared = 0;
  for (size_t i = 1; i < sp.n && !compared; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (!c->realized[0] || c->plan.mma != TSR_MMA_FFMA || c->plan.b != TSR_IN_STAGED) continue;
    tsr_plan_info si, vi;
    tsr_plan v = c->plan;
    v.b = TSR_IN_VIEW;
    if (tsr_plan_realize(ctx, TSR_BACKEND_CUDA, &p, &v, &vi) != TSR_OK) continue;
    assert_int_equal(tsr_plan_realize(ctx, TSR_BACKEND_CUDA, &p, &c->plan, &si), TSR_OK);
    assert_true(tsr__tune_prior(TSR_BACKEND_CUDA, &p, &vi) > 1.4 * tsr__tune_prior(TSR_BACKEND_CUDA, &p, &si));
    compared = 1;
  }
  assert_true(compared);
  free(sp.cands);
  tsr_context_destroy(ctx);
}

/* Every family's candidates start from the default with the other families'
 * keys cleared: a GEMV default (threads=256) and an Ozaki default (moduli)
 * once left 11 and 18 planner-legal candidates of 364064 (session 9). The
 * GEMV family is searched where a side is at most 16. */
static void test_cuda_space_families(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr__tune_space_t sp;
  strict_space(ctx, 8, 4096, 4096, 1, &p, &sp);
  assert_int_equal(sp.cands[0].plan.mma, TSR_MMA_GEMV); /* the incumbent */
  int gemv = 0, ffma = 0;
  for (size_t i = 1; i < sp.n; i++) {
    const tsr__tune_cand *c = &sp.cands[i];
    if (!c->realized[0]) continue;
    if (c->plan.mma == TSR_MMA_GEMV) gemv++;
    if (c->plan.mma == TSR_MMA_FFMA) {
      ffma++;
      assert_int_equal(c->plan.threads, 0);
    }
  }
  assert_true(gemv >= 20);
  assert_true(ffma >= 100);
  free(sp.cands);
  /* NT: FFMA candidates with both operands as [x][k] rows (kfrag=ab, the
   * 64-row decode default's kind) among the kept ones; NN: A's rows only
   * (kfrag=a, session 33), never B's */
  for (int tb = 1; tb >= 0; tb--) {
    strict_decode_space(ctx, 64, tb, &sp);
    int kf = 0, kfa = 0, kfb = 0, prod[4] = {0};
    for (size_t i = 1; i < sp.n; i++) {
      const tsr__tune_cand *c = &sp.cands[i];
      kf += c->realized[0] && c->plan.kfrag == TSR_PACK_AB && c->plan.kloop == 1;
      kfa += c->realized[0] && c->plan.kfrag == TSR_PACK_A && c->plan.kloop == 1;
      kfb += c->plan.kfrag == TSR_PACK_B;
      /* the FFMA producer (session 21): 4-warp plans at 2 and 3 blocks an SM */
      if (c->realized[0] && c->plan.mma == TSR_MMA_FFMA && c->plan.split == TSR_SPLIT_PRODUCER) {
        assert_int_equal(c->plan.kloop, 2);
        assert_int_equal((c->plan.bm / c->plan.wm) * (c->plan.bn / c->plan.wn), 4);
        prod[c->plan.minblocks & 3]++;
      }
    }
    if (tb) assert_true(kf >= 20);
    else assert_int_equal(kf, 0);
    if (tb) assert_int_equal(kfa, 0);
    else assert_true(kfa >= 20);
    assert_int_equal(kfb, 0);
    assert_true(prod[0] >= 20);
    assert_true(prod[3] >= 20);
    free(sp.cands);
  }
  /* session 22: the three-block producer candidates in serpentine FMAs, and
   * with the defaults' tail slices where their rule applies (4096^3: 2048
   * tiles of 64x128 = 5 whole waves of 396 + 68); no tail split elsewhere */
  {
    tsr_problem q;
    tsr_problem_init(&q, 4096, 4096, 4096);
    q.precision = TSR_PREC_STRICT;
    char msg[256];
    assert_int_equal(tsr_problem_check(&q, msg, sizeof msg), TSR_OK);
    assert_int_equal(tsr__tune_space(ctx, TSR_BACKEND_CUDA, &q, NULL, NULL, 0, TSR__ORDER_PRIOR, &sp), TSR_OK);
    int three = 0, tail = 0, tma = 0, self = 0;
    for (size_t i = 1; i < sp.n; i++) {
      const tsr_plan *c = &sp.cands[i].plan;
      if (!sp.cands[i].realized[0]) continue;
      if ((c->split == TSR_SPLIT_PRODUCER || c->split == TSR_SPLIT_PRODUCER_TMA) &&
          c->minblocks == 3) {
        three++;
        assert_int_equal(c->forder, 1);
      } else if (c->split == TSR_SPLIT_TMA) {
        /* session 24: the TMA ring without a producer, 4 blocks an SM
         * (4096^3: 464 tiles past 3 waves of 528, no tail slices) */
        self++;
        assert_int_equal(c->forder, 1);
        assert_int_equal(c->minblocks, 4);
        assert_int_equal(c->pad, 0);
        assert_int_equal(c->pack, TSR_PACK_A);
        assert_int_equal(c->tailk, 0);
      } else {
        assert_int_equal(c->forder, 0);
      }
      /* session 23: the same with TMA tensor copies (dense rows, A packed) */
      if (c->split == TSR_SPLIT_PRODUCER_TMA) {
        tma++;
        assert_int_equal(c->pad, 0);
        assert_int_equal(c->pack, TSR_PACK_A);
        assert_int_equal(c->minblocks, 3);
      }
      if (c->tailk) {
        tail++;
        assert_int_equal(c->minblocks, 3);
        assert_int_equal(c->wave, 396);
        assert_int_equal(c->splitk, 1);
        assert_int_equal(c->bm * c->bn, 64 * 128); /* 2048 tiles: the rule applies */
      }
    }
    assert_true(three >= 20);
    assert_true(tail >= 4);
    assert_true(tma >= 4);
    assert_true(self >= 2);
    /* ties of the prior go nearest the incumbent first: among equal priors
     * the count of plan keys that differ from the incumbent never falls; the
     * incumbent's own walk (rect:8x16) is in the space, so a one-key variant
     * exists (pack=none: the space does not vary the FFMA pack) */
    int ties = 0, one_key = 0;
    for (size_t i = 2; i < sp.n && sp.cands[i].realized[0]; i++) {
      const tsr__tune_cand *a = &sp.cands[i - 1], *b = &sp.cands[i];
      one_key += key_distance(b->realized, sp.cands[0].realized) == 1;
      if (a->role != TSR__ROLE_SEARCH || a->prior != b->prior) continue;
      ties++;
      assert_true(key_distance(a->realized, sp.cands[0].realized) <=
                  key_distance(b->realized, sp.cands[0].realized));
    }
    assert_true(ties >= 100);
    assert_true(one_key >= 1);
    free(sp.cands);
  }
  /* lane per row (lanerows) where the big operand runs along k: 16 short
   * rows, B transposed; none where B runs along n */
  for (int tb = 1; tb >= 0; tb--) {
    strict_decode_space(ctx, 16, tb, &sp);
    int lr = 0;
    for (size_t i = 1; i < sp.n; i++)
      lr += sp.cands[i].realized[0] && sp.cands[i].plan.mma == TSR_MMA_GEMV && sp.cands[i].plan.lanerows;
    if (tb) assert_true(lr >= 8);
    else assert_int_equal(lr, 0);
    free(sp.cands);
  }
  tsr_context_destroy(ctx);
}

/* The class pass's guard (tsr__tune_transfer_ok): session 10's H200 replay
 * served 16384x64x4096's winner (128x128 tiles, 128 of them there) to
 * 1000^3 (64 tiles) and 64x4096x4096 (32), which ran 2.98x and 3.70x their
 * defaults' time; the prior predicts both slower than the default, and
 * still takes the plan where it fills the GPU (32768x128x4096; at a side
 * of 64 auto's default is strict FFMA since session 12) and a GEMV
 * winner at another decode shape. */
/* The problem m x n x k (op(B) = B^T when trans_b) in precision prec, its
 * built-in cuda default def, and pl = text over def: a lookup guard's case. */
static void guard_case(tsr_context *ctx, int64_t m, int64_t n, int64_t k, int trans_b,
                       tsr_precision prec, const char *text, tsr_problem *p, tsr_plan *pl,
                       tsr_plan *def) {
  tsr_problem_init(p, m, n, k);
  p->precision = prec;
  if (trans_b) {
    p->op_b = TSR_OP_T;
    p->ldb = k;
  }
  char msg[256];
  assert_int_equal(tsr_problem_check(p, msg, sizeof msg), TSR_OK);
  tsr_plan_builtin(ctx, TSR_BACKEND_CUDA, p, def);
  *pl = *def;
  assert_int_equal(tsr_plan_parse(text, pl, msg, sizeof msg), TSR_OK);
}

static int transfer_ok_in(tsr_context *ctx, int64_t m, int64_t n, int64_t k, int trans_b,
                          tsr_precision prec, const char *text) {
  tsr_problem p;
  tsr_plan def, pl;
  guard_case(ctx, m, n, k, trans_b, prec, text, &p, &pl, &def);
  return tsr__tune_transfer_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, &def);
}

static int transfer_ok(tsr_context *ctx, int64_t m, int64_t n, int64_t k, int trans_b,
                       const char *text) {
  return transfer_ok_in(ctx, m, n, k, trans_b, TSR_PREC_AUTO, text);
}

static void test_transfer_guard(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  const char *tall = "bm=128,bn=128,bk=16,wm=64,wn=128,tm=1,tn=1,stages=4,vec=4,pad=0,"
                     "walk=linear,splitk=1,mma=wgmma-tf32x3,acc=step,pack=none,split=inline";
  const char *gemv = "bm=16,bn=4,bk=512,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,pad=0,walk=linear,"
                     "splitk=1,threads=64,mma=gemv,pack=none,split=inline";
  assert_false(transfer_ok(ctx, 1000, 1000, 1000, 0, tall));
  assert_false(transfer_ok(ctx, 64, 4096, 4096, 0, tall));
  assert_true(transfer_ok(ctx, 32768, 128, 4096, 0, tall));
  assert_true(transfer_ok(ctx, 8, 4096, 11008, 1, gemv));
  /* session 28's H200 replay: 512x4096x11008 NT's winner (64x128 tiles, no split-K,
   * three blocks an SM) served by class to 64x11008x4096 NT ran 1.94x its default's
   * time: 86 tiles leave 46 of 132 SMs idle where the default's split-K 3 (258
   * units) keeps every SM busy; the prior's per-slot wave efficiency rates both 0.65
   * and the prior rates the plan no slower, so only the fill rule refuses it */
  const char *medium = "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=4,"
                       "walk=linear,splitk=1,mma=ffma,acc=step,minblocks=3,pack=none,"
                       "split=producer,kfrag=ab,kloop=2,forder=1";
  assert_false(transfer_ok_in(ctx, 64, 11008, 4096, 1, TSR_PREC_STRICT, medium));
  /* at 128 rows its 172 programs reach every SM: the fill rule passes it and the
   * prior (no slower than the default there) decides */
  assert_true(transfer_ok_in(ctx, 128, 11008, 4096, 1, TSR_PREC_STRICT, medium));
  /* a plan the planner refuses on the asked shape is never served */
  assert_false(transfer_ok(ctx, 32, 4096, 4096, 1, gemv));
  tsr_context_destroy(ctx);
}

/* The class pass's fill slack and prior margin (session 36, tessera tune --loo over
 * the H200's 47-shape database): a grid leaving 4 of 132 SMs idle (fill 0.97 of
 * the default's 1.00) with a predicted gain is served — 100x100x8000's winner
 * (128 programs) at 128x128x16384 ran 0.803 of the default's time on the H200,
 * 8x4096x11008 NT's GEMV winner at 8x4096x4096 NT 0.880 in that shape's tune —
 * and a prior tie is not: 1x32000x4096 NT's GEMV winner at 1x11008x4096 NT
 * (1.000 predicted, 1.016 measured in its tune). */
/* text over the strict default of m x n x k realized there (a), and the default (d). */
static void realized_pair(tsr_context *ctx, int64_t m, int64_t n, int64_t k, const char *text,
                          tsr_problem *p, tsr_plan_info *a, tsr_plan_info *d) {
  tsr_plan pl, def;
  guard_case(ctx, m, n, k, 0, TSR_PREC_STRICT, text, p, &pl, &def);
  assert_int_equal(tsr__exec_check(ctx, TSR_BACKEND_CUDA, p, &pl, a), TSR_OK);
  assert_int_equal(tsr__exec_check(ctx, TSR_BACKEND_CUDA, p, &def, d), TSR_OK);
}

static void test_transfer_slack(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  const char *w100 = "bm=64,bn=128,bk=16,wm=16,wn=128,tm=8,tn=8,stages=2,vec=4,a=staged,b=staged,"
                     "pad=4,walk=linear,splitk=64,threads=0,isa=auto,mma=ffma,acc=step,"
                     "minblocks=0,pack=none,split=producer,kloop=2";
  const char *w8 = "bm=16,bn=32,bk=128,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,a=staged,b=staged,"
                   "pad=0,walk=linear,splitk=1,threads=512,isa=auto,mma=gemv,acc=step,"
                   "minblocks=0,pack=none,split=inline";
  const char *w1 = "bm=16,bn=8,bk=1024,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,a=staged,b=staged,"
                   "pad=0,walk=linear,splitk=1,threads=128,isa=auto,mma=gemv,acc=step,"
                   "minblocks=0,pack=none,split=inline";
  /* the figures the rule reads: fill 0.97 against 1.00, a predicted gain */
  tsr_problem p;
  tsr_plan_info a, d;
  realized_pair(ctx, 128, 128, 16384, w100, &p, &a, &d);
  assert_int_equal(a.grid_rows * a.grid_cols * a.grid_batch, 128);
  assert_true(tsr__tune_sm_fill(TSR_BACKEND_CUDA, &a) < tsr__tune_sm_fill(TSR_BACKEND_CUDA, &d));
  assert_true(tsr__tune_prior(TSR_BACKEND_CUDA, &p, &a) < tsr__tune_prior(TSR_BACKEND_CUDA, &p, &d));
  assert_true(transfer_ok_in(ctx, 128, 128, 16384, 0, TSR_PREC_STRICT, w100));
  assert_true(transfer_ok_in(ctx, 8, 4096, 4096, 1, TSR_PREC_STRICT, w8));
  assert_false(transfer_ok_in(ctx, 1, 11008, 4096, 1, TSR_PREC_STRICT, w1));
  /* under 0.9 of the default's fill it stays refused: the same plan on a 64-row
   * output, 64 programs (session 28's 1.94x transfer had 0.65) */
  realized_pair(ctx, 64, 128, 16384, w100, &p, &a, &d);
  assert_true(tsr__tune_sm_fill(TSR_BACKEND_CUDA, &a) < 0.9 * tsr__tune_sm_fill(TSR_BACKEND_CUDA, &d));
  assert_false(transfer_ok_in(ctx, 64, 128, 16384, 0, TSR_PREC_STRICT, w100));
  tsr_context_destroy(ctx);
}

/* The transfer passes' tails rule (tsr__tune_serve_ok, tsr__tune_tails_ok): on
 * the H100 (sessions 28 and 32) 1024^3's strict winner (the LDGSTS producer
 * without a pack: whole tiles there) was served to the held-back 1000^3, where
 * its copies guard the M, N and K tails that the default's pack=ab prologue
 * pads away, and it ran 1.112 and 1.122x the default's time by the nearest
 * pass, then 1.118x by the class pass (medium) once the nearest pass refused
 * it. A winner keeps its transfers where the asked shape has no partial tile
 * its stored shape did not have. */
/* text over the strict default of m x n x k (B transposed when trans_b), served
 * by the pass from a row stored for sm x sn x sk; def: that default. */
static int serve_case(tsr_context *ctx, int pass, int64_t m, int64_t n, int64_t k, int trans_b,
                      const char *text, int64_t sm, int64_t sn, int64_t sk, tsr_plan *def) {
  tsr_problem p;
  tsr_plan pl;
  guard_case(ctx, m, n, k, trans_b, TSR_PREC_STRICT, text, &p, &pl, def);
  int r = tsr__tune_serve_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, def, pass, sm, sn, sk);
  if (pass) assert_true(!r || tsr__tune_tails_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, sm, sn, sk));
  return r;
}

static int serve_ok(tsr_context *ctx, int pass, int64_t m, int64_t n, int64_t k, const char *text,
                    int64_t sm, int64_t sn, int64_t sk) {
  tsr_plan def;
  return serve_case(ctx, pass, m, n, k, 0, text, sm, sn, sk, &def);
}

static void test_tails_guard(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  const char *w1024 = "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=2,pad=4,walk=linear,"
                      "splitk=1,threads=0,mma=ffma,acc=step,minblocks=3,pack=none,split=producer,"
                      "kloop=2,forder=1";
  for (int pass = 1; pass <= 2; pass++) { /* nearest, class */
    assert_false(serve_ok(ctx, pass, 1000, 1000, 1000, w1024, 1024, 1024, 1024));
    assert_false(serve_ok(ctx, pass, 1024, 1024, 1000, w1024, 1024, 1024, 1024)); /* a K tail alone */
    /* tails only stored: the nearest pass serves it; the class pass's prior
     * rates it the 1024^3 default's equal, no gain, and refuses it */
    assert_int_equal(serve_ok(ctx, pass, 1024, 1024, 1024, w1024, 1000, 1000, 1000), pass == 1);
  }
  /* the class pass's fill rule passes it; its prior rates it the default's
   * equal there (no gain predicted), which the transfer rule refuses since
   * session 36 (test_transfer_slack): in the nearest pass the tails rule alone */
  assert_false(transfer_ok_in(ctx, 1000, 1000, 1000, 0, TSR_PREC_STRICT, w1024));
  /* exact: the stored shape is the asked one, the planner decides */
  assert_true(serve_ok(ctx, 0, 1000, 1000, 1000, w1024, 1000, 1000, 1000));
  assert_true(serve_ok(ctx, 1, 2048, 1024, 1024, w1024, 1024, 1024, 1024)); /* whole tiles both */
  assert_true(serve_ok(ctx, 1, 1000, 1000, 1000, w1024, 1100, 1100, 1100)); /* tails on both */
  /* a plan the planner refuses on the stored shape is not served either
   * (vec=4 needs a row stride that is a multiple of 4: N = 1022) */
  const char *v4 = "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,walk=linear,"
                   "splitk=1,threads=0,mma=ffma,acc=step,minblocks=3,pack=none,split=producer,"
                   "kloop=2,forder=1";
  assert_true(serve_ok(ctx, 1, 1100, 1100, 1100, v4, 1000, 1000, 1000));
  assert_false(serve_ok(ctx, 1, 1100, 1100, 1100, v4, 1022, 1022, 1022));
  /* the GEMV family (session 33): its K block only bounds the slices, so a K
   * that bk does not divide runs no tail code; K % VEC does (the k-contiguous
   * lanes' last values). 1x4096x4096 NT's winner (bk 1024) on 1x4096x11008 NT */
  const char *gv = "bm=16,bn=8,bk=1024,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,pad=0,walk=linear,"
                   "splitk=1,threads=256,mma=gemv,pack=none,split=inline";
  tsr_problem p;
  tsr_plan pl, def;
  guard_case(ctx, 1, 4096, 11008, 1, TSR_PREC_STRICT, gv, &p, &pl, &def);
  tsr_plan_info info;
  assert_int_equal(tsr__exec_check(ctx, TSR_BACKEND_CUDA, &p, &pl, &info), TSR_OK);
  assert_int_equal(info.tail_k, 1); /* 11008 = 10.75 K blocks of 1024 */
  assert_true(tsr__tune_tails_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 1, 4096, 4096));
  guard_case(ctx, 1, 4096, 11002, 1, TSR_PREC_STRICT, gv, &p, &pl, &def); /* 11002 % 4 = 2 */
  p.ldb = 11004;                                                          /* rows of 16 bytes */
  assert_int_equal(tsr__exec_check(ctx, TSR_BACKEND_CUDA, &p, &pl, &info), TSR_OK);
  assert_false(tsr__tune_tails_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 1, 4096, 4096));
  tsr_context_destroy(ctx);
}

/* The transfer passes' split-K rule (tsr__tune_split_ok): on the H100
 * (session 33) 64x64x8192's winner (32x64 tiles, split-K 128) served by the
 * nearest pass to the held-back 128x128x16384 ran 1.177 and 1.149x the
 * default's time. A split-K winner is served only where it tiles the output
 * in the same grid as its stored shape's; a winner without split-K keeps its
 * transfers. */
static void test_split_guard(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  const char *w64 = "bm=32,bn=64,bk=16,wm=16,wn=32,tm=4,tn=4,stages=3,vec=4,pad=4,walk=linear,"
                    "splitk=128,threads=0,mma=ffma,acc=step,minblocks=0,pack=none,split=producer,"
                    "kloop=2";
  for (int pass = 1; pass <= 2; pass++) { /* nearest, class */
    assert_false(serve_ok(ctx, pass, 128, 128, 16384, w64, 64, 64, 8192)); /* 4x2 tiles vs 2x1 */
    assert_false(serve_ok(ctx, pass, 256, 256, 32768, w64, 64, 64, 8192));
    assert_true(serve_ok(ctx, pass, 64, 64, 16384, w64, 64, 64, 8192)); /* the same 2x1 grid */
  }
  /* exact: the planner decides */
  assert_true(serve_ok(ctx, 0, 128, 128, 16384, w64, 128, 128, 16384));
  /* the rule itself: no split-K, no grid test */
  tsr_problem p;
  tsr_plan pl, def;
  guard_case(ctx, 128, 128, 16384, 0, TSR_PREC_STRICT, w64, &p, &pl, &def);
  assert_false(tsr__tune_split_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 64, 64, 8192));
  pl.splitk = 1;
  assert_true(tsr__tune_split_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 64, 64, 8192));
  tsr_context_destroy(ctx);
}

/* The transfer passes' family rule (tsr__tune_serve_ok): session 39's
 * leave-one-out over the H100's neighbour-priced database served 8x4096x4096
 * NT's GEMV winner (the class pass) and 8x4096x11008 NT's (the nearest) to the
 * 16-row NT shapes, whose defaults are tiles: 2.400 and 2.049x the default's
 * time in those shapes' own tunes, where the prior had predicted 0.65x. A
 * stored plan goes only where the asked shape's default is of the family
 * (GEMV or tile) of its stored shape's default, the one its tune beat: the
 * 8-row shapes serve each other's winners (0.890 and 0.964 there), the 16-row
 * shapes' GEMV winners (a lane per row, 0.953 and 0.959 of their tiles) may
 * serve other 16-row shapes. */
static int serve_nt_ok(tsr_context *ctx, int pass, int64_t m, int64_t n, int64_t k, const char *text,
                       int64_t sm, int64_t sn, int64_t sk, tsr_plan *def) {
  return serve_case(ctx, pass, m, n, k, 1, text, sm, sn, sk, def);
}

static void test_family_guard(void **state) {
  (void)state;
  tsr_context *ctx = NULL;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  /* the H100's winners: 8x4096x4096 NT's and 8x4096x11008 NT's */
  const char *g8 = "bm=16,bn=32,bk=512,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,a=staged,b=staged,pad=0,"
                   "walk=linear,splitk=1,threads=512,isa=auto,mma=gemv,acc=step,minblocks=0,"
                   "pack=none,split=inline";
  const char *g8k = "bm=16,bn=32,bk=64,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,a=staged,b=staged,pad=0,"
                    "walk=linear,splitk=1,threads=512,isa=auto,mma=gemv,acc=step,minblocks=0,"
                    "pack=none,split=inline";
  tsr_plan def;
  for (int pass = 1; pass <= 2; pass++) { /* nearest, class */
    assert_false(serve_nt_ok(ctx, pass, 16, 14336, 4096, g8, 8, 4096, 4096, &def));
    assert_int_not_equal(def.mma, TSR_MMA_GEMV); /* the 16-row default: a tile */
    assert_false(serve_nt_ok(ctx, pass, 16, 4096, 14336, g8k, 8, 4096, 11008, &def));
    /* between the 8-row shapes, whose defaults are GEMV plans: served */
    assert_true(serve_nt_ok(ctx, pass, 8, 4096, 11008, g8, 8, 4096, 4096, &def));
    assert_int_equal(def.mma, TSR_MMA_GEMV);
  }
  /* without the family rule these two were served: every other rule passes */
  tsr_problem p;
  tsr_plan pl;
  guard_case(ctx, 16, 14336, 4096, 1, TSR_PREC_STRICT, g8, &p, &pl, &def);
  assert_true(tsr__tune_tails_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 8, 4096, 4096));
  assert_true(tsr__tune_split_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, 8, 4096, 4096));
  assert_true(tsr__tune_transfer_ok(ctx, TSR_BACKEND_CUDA, &p, &pl, &def));
  /* 16x4096x14336 NT's winner, a GEMV plan beside a tile default, to 16x4096x12288
   * NT (a tile default too; K slices of whole 32-blocks): every rule passes it */
  const char *g16 = "bm=16,bn=256,bk=32,wm=1,wn=1,tm=1,tn=1,stages=1,vec=4,a=staged,b=staged,"
                    "pad=0,walk=linear,splitk=32,threads=128,isa=auto,mma=gemv,acc=step,"
                    "minblocks=0,pack=none,split=inline,lanerows=2";
  for (int pass = 1; pass <= 2; pass++)
    assert_true(serve_nt_ok(ctx, pass, 16, 4096, 12288, g16, 16, 4096, 14336, &def));
  assert_int_not_equal(def.mma, TSR_MMA_GEMV);
  /* (not to an 8-row shape: a GEMV default there, and a partial 16-row tile) */
  assert_false(serve_nt_ok(ctx, 1, 8, 4096, 12288, g16, 16, 4096, 14336, &def));
  /* the reverse: the 16-row default tile is not served to an 8-row shape */
  const char *t16 = "bm=16,bn=128,bk=16,wm=16,wn=32,tm=4,tn=4,stages=4,vec=4,a=staged,b=staged,"
                    "pad=4,walk=linear,splitk=32,threads=0,isa=auto,mma=ffma,acc=step,"
                    "minblocks=0,pack=none,split=inline,kfrag=ab";
  assert_false(serve_nt_ok(ctx, 1, 8, 4096, 4096, t16, 16, 4096, 4096, &def));
  /* exact (pass 0): its own entry, whatever the family */
  assert_true(serve_nt_ok(ctx, 0, 16, 14336, 4096, g8, 16, 14336, 4096, &def));
  tsr_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_max_candidates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_neighbour_candidate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_max_seconds, setup, teardown),
      cmocka_unit_test_setup_teardown(test_corrupted_fastest_never_wins, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inaccurate_fastest_never_wins, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_counts_compiles, setup, teardown),
      cmocka_unit_test(test_cuda_space_has_wgmma),
      cmocka_unit_test(test_cuda_space_splitk),
      cmocka_unit_test(test_cuda_space_interleave),
      cmocka_unit_test(test_cuda_space_views_last),
      cmocka_unit_test(test_cuda_space_families),
      cmocka_unit_test(test_transfer_guard),
      cmocka_unit_test(test_transfer_slack),
      cmocka_unit_test(test_tails_guard),
      cmocka_unit_test(test_split_guard),
      cmocka_unit_test(test_family_guard),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
