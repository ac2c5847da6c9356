/* Tuning database: schema creation, v1 → v2 migration, refusal of foreign,
 * newer and garbage files (bytes unchanged), lookup rule (exact, nearest
 * bucket, defaults), concurrent writers, and "rejected never wins". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/backend.h"
#include "test_tmpdir.h"
#include "tune/tune.h"

static int setup(void **state) {
  if (test_tmpdir_make("/tmp/tsr_tune_db")) return -1;
  unsetenv("TSR_TUNE_TEST_CORRUPT_PLAN");
  tsr__tune_lookup_reset();
  return 0;
}

static int teardown(void **state) { return test_tmpdir_remove(); }

static void assert_unchanged(const char *path, const unsigned char *before, size_t n) {
  size_t m;
  unsigned char *after = read_all(path, &m);
  assert_int_equal(m, n);
  assert_memory_equal(after, before, n);
  free(after);
  char side[600];
  snprintf(side, sizeof side, "%s-wal", path);
  assert_int_not_equal(access(side, F_OK), 0);
  snprintf(side, sizeof side, "%s-journal", path);
  assert_int_not_equal(access(side, F_OK), 0);
}

static int64_t query_int(sqlite3 *h, const char *sql) {
  sqlite3_stmt *s;
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

static void query_text(sqlite3 *h, const char *sql, char *out, size_t cap) {
  sqlite3_stmt *s;
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  const char *t = (const char *)sqlite3_column_text(s, 0);
  snprintf(out, cap, "%s", t ? t : "(null)");
  sqlite3_finalize(s);
}

static void test_fresh_schema(void **state) {
  char path[512], msg[1200], txt[64];
  path_in(path, sizeof path, "sub/dir/tune.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  sqlite3 *h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  query_text(h, "PRAGMA journal_mode", txt, sizeof txt);
  assert_string_equal(txt, "wal");
  assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
                                "name IN ('meta','runs','candidates','tuned')"),
                   4);
  tsr__tune_db_close(db);
  /* Reopening read-only works and writes nothing new. */
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_OK);
  tsr__tune_db_close(db);
}

static void make_v1(const char *path) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(
      sqlite3_exec(h,
                   "CREATE TABLE tuned(device TEXT NOT NULL, backend TEXT NOT NULL, m INTEGER, "
                   "n INTEGER, k INTEGER, plan TEXT NOT NULL, time_ns REAL, created TEXT, "
                   "PRIMARY KEY(device, backend, m, n, k));"
                   "INSERT INTO tuned VALUES('AMD EPYC (2 cores)', 'cpu', 1024, 1024, 1024, "
                   "'bm=96,bn=256,bk=128,tm=12,tn=32', 12345.5, '2026-11-01T00:00:00Z');"
                   "INSERT INTO tuned VALUES('NVIDIA H200', 'cuda', 4096, 4096, 4096, "
                   "'bm=128,bn=128,bk=16', 2686000, NULL);"
                   "PRAGMA user_version=1;",
                   NULL, NULL, NULL),
      SQLITE_OK);
  sqlite3_close(h);
}

static void test_migration_v1(void **state) {
  char path[512], msg[1200], txt[256];
  path_in(path, sizeof path, "v1.db");
  make_v1(path);
  size_t n;
  unsigned char *before = read_all(path, &n);
  /* The runtime's read-only open refuses the old schema and writes nothing. */
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_ERR_DB);
  assert_non_null(strstr(msg, "older"));
  assert_unchanged(path, before, n);
  free(before);
  /* The tuner's writable open migrates. */
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  sqlite3 *h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 2);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned WHERE decision='migrated-v1' AND "
                                "tessera_version='v1' AND op_a='N' AND op_b='N' AND batch=1 AND "
                                "precision='fp32'"),
                   2);
  query_text(h, "SELECT plan FROM tuned WHERE backend='cpu'", txt, sizeof txt);
  assert_string_equal(txt, "bm=96,bn=256,bk=128,tm=12,tn=32");
  query_text(h, "SELECT time_ns FROM tuned WHERE backend='cpu'", txt, sizeof txt);
  assert_string_equal(txt, "12345.5");
  query_text(h, "SELECT updated FROM tuned WHERE backend='cpu'", txt, sizeof txt);
  assert_string_equal(txt, "2026-11-01T00:00:00Z");
  query_text(h, "SELECT value FROM meta WHERE key='migrated_from'", txt, sizeof txt);
  assert_string_equal(txt, "1");
  assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE name='tuned_v1'"), 0);
  query_text(h, "PRAGMA integrity_check", txt, sizeof txt);
  assert_string_equal(txt, "ok");
  tsr__tune_db_close(db);
  /* Opening again is a no-op (already v2). */
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  assert_int_equal(query_int(tsr__tune_db_handle(db), "SELECT count(*) FROM tuned"), 2);
  tsr__tune_db_close(db);
}

static void lookup(const char *dbpath, int64_t m, int64_t n, int64_t k, int trans_a,
                   tsr_plan *out, char *src, size_t cap) {
  if (dbpath) setenv("TESSERA_TUNE_DB", dbpath, 1);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, m, n, k);
  p.op_a = trans_a ? TSR_OP_T : TSR_OP_N;
  assert_int_equal(tsr_plan_lookup(ctx, TSR_BACKEND_CPU, &p, out, src, cap), TSR_OK);
  tsr_context_destroy(ctx);
}

static void default_of(int64_t m, int64_t n, int64_t k, tsr_plan *out) {
  tsr_problem p;
  tsr_problem_init(&p, m, n, k);
  tsr__backend_get(TSR_BACKEND_CPU)->default_plan(NULL, &p, out);
}

static void test_garbage_file(void **state) {
  char path[512], msg[1200], src[128];
  path_in(path, sizeof path, "garbage.db");
  unsigned char junk[8192];
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof junk; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    junk[i] = (unsigned char)x;
  }
  FILE *f = fopen(path, "wb");
  fwrite(junk, 1, sizeof junk, f);
  fclose(f);
  tsr_plan got, def;
  lookup(path, 128, 128, 128, 0, &got, src, sizeof src);
  default_of(128, 128, 128, &def);
  assert_string_equal(src, "default (tuning database unreadable)");
  assert_true(tsr_plan_equal(&got, &def));
  assert_unchanged(path, junk, sizeof junk);
  /* A second lookup in this process: same answer (the warning is once). */
  lookup(path, 256, 128, 128, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (tuning database unreadable)");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_ERR_DB);
  assert_null(db);
  assert_non_null(strstr(msg, "not a database"));
  assert_non_null(strstr(msg, "untouched"));
  assert_unchanged(path, junk, sizeof junk);
  /* A valid SQLite header over zeroes is refused the same way. */
  path_in(path, sizeof path, "header.db");
  unsigned char hdr[4096] = "SQLite format 3";
  f = fopen(path, "wb");
  fwrite(hdr, 1, sizeof hdr, f);
  fclose(f);
  assert_int_not_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  assert_unchanged(path, hdr, sizeof hdr);
  unsetenv("TESSERA_TUNE_DB");
}

static void test_foreign_and_newer(void **state) {
  char path[512], msg[1200];
  const char *const setups[] = {
      "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT);", /* another application's */
      "CREATE TABLE tuned(x); PRAGMA user_version=99;",          /* a newer tessera's */
  };
  for (int i = 0; i < 2; i++) {
    char name[32];
    snprintf(name, sizeof name, "foreign%d.db", i);
    path_in(path, sizeof path, name);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, setups[i], NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    size_t n;
    unsigned char *before = read_all(path, &n);
    tsr__tune_db *db = NULL;
    assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_ERR_DB);
    assert_non_null(strstr(msg, i ? "newer" : "not a tessera tuning database"));
    assert_unchanged(path, before, n);
    free(before);
  }
}

static void insert_tuned(sqlite3 *h, const tsr__tune_target *t, int64_t m, int64_t n, int64_t k,
                         const char *opa, const char *plan, const char *decision,
                         const char *updated) {
  sqlite3_stmt *s;
  assert_int_equal(
      sqlite3_prepare_v2(h,
                         "INSERT INTO tuned(device, arch, driver, nvrtc, tessera_version, backend, "
                         "m, n, k, op_a, op_b, batch, precision, plan, decision, updated) "
                         "VALUES(?,?,?,?,?,?,?,?,?,?,'N',1,'auto',?,?,?)",
                         -1, &s, NULL),
      SQLITE_OK);
  sqlite3_bind_text(s, 1, t->device, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, t->arch, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, t->driver, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, t->nvrtc, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 5, t->version, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 6, t->backend, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 7, m);
  sqlite3_bind_int64(s, 8, n);
  sqlite3_bind_int64(s, 9, k);
  sqlite3_bind_text(s, 10, opa, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 11, plan, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 12, decision, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 13, updated, -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(s), SQLITE_DONE);
  sqlite3_finalize(s);
}

static void test_lookup_rule(void **state) {
  char path[512], msg[1200], src[128];
  path_in(path, sizeof path, "lookup.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__tune_target t;
  assert_int_equal(tsr__tune_target_get(ctx, TSR_BACKEND_CPU, &t), TSR_OK);
  tsr_context_destroy(ctx);
  /* generic micro-kernels exist on every x86-64 host */
  const char *px = "bm=64,bn=64,bk=64,wm=1,wn=1,tm=4,tn=8,stages=1,vec=1,a=staged,b=staged,pad=0,"
                   "walk=linear,splitk=1,threads=1,isa=generic,mma=ffma";
  const char *pnear = "bm=32,bn=64,bk=32,wm=1,wn=1,tm=4,tn=8,stages=1,vec=1,a=staged,b=staged,"
                      "pad=0,walk=stripe:2,splitk=1,threads=1,isa=generic,mma=ffma";
  const char *py = "bm=48,bn=32,bk=16,wm=1,wn=1,tm=4,tn=4,stages=1,vec=1,a=staged,b=staged,pad=0,"
                   "walk=linear,splitk=1,threads=1,isa=generic,mma=ffma";
  sqlite3 *h = tsr__tune_db_handle(db);
  insert_tuned(h, &t, 1024, 1024, 1024, "N", px, "winner", "2026-11-29T10:00:00Z");
  insert_tuned(h, &t, 700, 1024, 1024, "N", pnear, "winner", "2026-11-29T09:00:00Z");
  insert_tuned(h, &t, 256, 256, 256, "N", py, "incumbent (replay: not faster in every round)",
               "2026-11-29T10:00:00Z");
  tsr__tune_db_close(db);
  tsr_plan x, near, y, got, def;
  default_of(1, 1, 1, &x);
  near = y = x;
  assert_int_equal(tsr_plan_parse(px, &x, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr_plan_parse(pnear, &near, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr_plan_parse(py, &y, msg, sizeof msg), TSR_OK);

  lookup(path, 1024, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (exact)");
  assert_true(tsr_plan_equal(&got, &x));
  /* nearest: 1500 is within an octave of 1024 (distance 0.55) and of 700
   * (1.10): the closer bucket wins */
  lookup(path, 1500, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (nearest 1024x1024x1024)");
  assert_true(tsr_plan_equal(&got, &x));
  lookup(path, 600, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (nearest 700x1024x1024)");
  assert_true(tsr_plan_equal(&got, &near));
  /* beyond one octave on one axis: default */
  lookup(path, 1024, 1024, 2049, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (no tuned entry)");
  default_of(1024, 1024, 2049, &def);
  assert_true(tsr_plan_equal(&got, &def));
  /* exact incumbent entry; its neighbours do not inherit it */
  lookup(path, 256, 256, 256, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (exact, incumbent kept)");
  assert_true(tsr_plan_equal(&got, &y));
  lookup(path, 300, 256, 256, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (no tuned entry)");
  /* a transpose is another signature */
  lookup(path, 1024, 1024, 1024, 1, &got, src, sizeof src);
  assert_string_equal(src, "default (no tuned entry)");
  /* tsr_plan_default is the same lookup */
  setenv("TESSERA_TUNE_DB", path, 1);
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, 1024, 1024, 1024);
  assert_int_equal(tsr_plan_default(ctx, TSR_BACKEND_CPU, &p, &got), TSR_OK);
  assert_true(tsr_plan_equal(&got, &x));
  tsr_context_destroy(ctx);
  /* off / missing file */
  setenv("TESSERA_TUNE_DB", "off", 1);
  lookup(NULL, 1024, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (tuning database off)");
  default_of(1024, 1024, 1024, &def);
  assert_true(tsr_plan_equal(&got, &def));
  path_in(path, sizeof path, "missing.db");
  lookup(path, 1024, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (no tuning database)");
  assert_int_not_equal(access(path, F_OK), 0); /* lookups never create it */
  unsetenv("TESSERA_TUNE_DB");
}

/* The class pass: an unseen shape beyond an octave inherits the nearest
 * winner of its planner class (the cuda backend's classes), never one of
 * another class; without a class function there is no third pass. */
static void test_lookup_class(void **state) {
  char path[512], msg[1200], src[128];
  path_in(path, sizeof path, "class.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  tsr__tune_target t;
  memset(&t, 0, sizeof t);
  snprintf(t.device, sizeof t.device, "test device");
  snprintf(t.backend, sizeof t.backend, "cuda");
  const char *pskinny = "bm=4,bn=128,bk=16,wm=4,wn=32,tm=1,tn=4,stages=2,splitk=32";
  const char *pskinny2 = "bm=8,bn=128,bk=16,wm=8,wn=32,tm=2,tn=4,stages=4,splitk=16";
  const char *plarge = "bm=128,bn=256,bk=8,wm=64,wn=64,tm=1,tn=1,stages=4,mma=tf32x3,pad=0";
  sqlite3 *h = tsr__tune_db_handle(db);
  insert_tuned(h, &t, 1, 4096, 4096, "N", pskinny, "winner", "2026-11-30T10:00:00Z");
  insert_tuned(h, &t, 8, 1024, 1024, "N", pskinny2, "winner", "2026-11-30T11:00:00Z");
  insert_tuned(h, &t, 4096, 4096, 4096, "N", plarge, "winner", "2026-11-30T10:00:00Z");
  const char *psmall = "bm=32,bn=32,bk=32,wm=16,wn=32,tm=4,tn=4,stages=4";
  insert_tuned(h, &t, 256, 256, 256, "N", psmall, "winner", "2026-11-30T10:00:00Z");
  const char *(*cls)(const tsr_problem *) = tsr__backend_get(TSR_BACKEND_CUDA)->plan_class;
  assert_non_null(cls);
  struct { int64_t m, n, k; const char *src, *plan; } q[] = {
      /* 16384 is two octaves from 4096: the class pass, the nearer skinny entry */
      {2, 16384, 3000, "tuned (class skinny-m, from 1x4096x4096)", pskinny},
      {16, 2048, 2048, "tuned (nearest 8x1024x1024)", pskinny2}, /* within an octave */
      {16384, 16384, 16384, "tuned (class large, from 4096x4096x4096)", plarge},
      /* class small, but K / sqrt(M N) = 128 against 256^3's 1: not served */
      {64, 64, 8192, NULL, NULL},
      {128, 128, 16384, NULL, NULL},
      {64, 64, 70, "tuned (class small, from 256x256x256)", psmall}, /* two octaves off, the same depth */
      {100, 8000, 100, NULL, NULL}, /* 100 rows is not skinny; 800K outputs: class medium */
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    tsr_problem p;
    tsr_problem_init(&p, q[i].m, q[i].n, q[i].k);
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    tsr_plan got, want;
    tsr__backend_get(TSR_BACKEND_CUDA)->default_plan(NULL, &p, &got);
    want = got;
    snprintf(src, sizeof src, "none");
    int r = tsr__tune_db_lookup(db, &t, &p, cls, NULL, NULL, &got, src, sizeof src, msg, sizeof msg);
    if (!q[i].src) {
      assert_int_equal(r, 0);
      continue;
    }
    assert_int_equal(r, 1);
    assert_string_equal(src, q[i].src);
    assert_int_equal(tsr_plan_parse(q[i].plan, &want, msg, sizeof msg), TSR_OK);
    assert_true(tsr_plan_equal(&got, &want));
  }
  /* no class function: the two-pass rule */
  tsr_problem p;
  tsr_problem_init(&p, 2, 16384, 3000);
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  tsr_plan got;
  tsr__backend_get(TSR_BACKEND_CUDA)->default_plan(NULL, &p, &got);
  assert_int_equal(tsr__tune_db_lookup(db, &t, &p, NULL, NULL, NULL, &got, src, sizeof src, msg,
                                       sizeof msg),
                   0);
  tsr__tune_db_close(db);
}

/* One writer: `runs` tune results, each with 5 candidates, one tuned row. */
static int writer(const char *path, int id, int runs) {
  char msg[1200];
  tsr__tune_db *db = NULL;
  if (tsr__tune_db_open(path, 1, &db, msg, sizeof msg)) {
    fprintf(stderr, "writer %d: %s\n", id, msg);
    return 1;
  }
  tsr__tune_target t;
  memset(&t, 0, sizeof t);
  snprintf(t.device, sizeof t.device, "test device");
  snprintf(t.arch, sizeof t.arch, "avx512");
  snprintf(t.version, sizeof t.version, "test");
  snprintf(t.backend, sizeof t.backend, "cpu");
  tsr__tune_cand c[5];
  memset(c, 0, sizeof c);
  for (int i = 0; i < 5; i++) {
    snprintf(c[i].text, sizeof c[i].text, "bm=%d", 8 * (i + 1));
    c[i].status = i == 4 ? TSR__CAND_REJ_VALIDATION : TSR__CAND_OK;
    c[i].time_ns = 1000.0 + i;
    c[i].nsamples = 5;
    c[i].regs = c[i].local_bytes = -1;
  }
  size_t idx[5] = {0, 1, 2, 3, 4};
  for (int r = 0; r < runs; r++) {
    tsr__tune_config cfg;
    memset(&cfg, 0, sizeof cfg);
    tsr_problem_init(&cfg.problem, 64 + r, 64, 64 + id);
    tsr__tune_result res;
    memset(&res, 0, sizeof res);
    res.cands = c;
    res.n = 5;
    res.incumbent = 0;
    res.best = res.chosen = 1;
    res.rounds = 2;
    snprintf(res.decision, sizeof res.decision, "winner");
    snprintf(res.finished, sizeof res.finished, "2026-11-29T00:00:00Z");
    if (tsr__tune_db_begin_run(db, &t, &cfg, "2026-11-29T00:00:00Z", &res.run_id, msg,
                               sizeof msg) ||
        tsr__tune_db_add_candidates(db, res.run_id, c, idx, 5, msg, sizeof msg) ||
        tsr__tune_db_finish_run(db, &t, &cfg, &res, msg, sizeof msg)) {
      fprintf(stderr, "writer %d run %d: %s\n", id, r, msg);
      tsr__tune_db_close(db);
      return 1;
    }
  }
  tsr__tune_db_close(db);
  return 0;
}

static void test_concurrent_writers(void **state) {
  char path[512], txt[64];
  path_in(path, sizeof path, "concurrent.db"); /* both also race to create it */
  const int runs = 200;
  pid_t pids[2];
  for (int i = 0; i < 2; i++) {
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) _exit(writer(path, i, runs));
  }
  for (int i = 0; i < 2; i++) {
    int st;
    assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
  }
  sqlite3 *h;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  query_text(h, "PRAGMA integrity_check", txt, sizeof txt);
  assert_string_equal(txt, "ok");
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE status='done'"), 2 * runs);
  assert_int_equal(query_int(h, "SELECT count(*) FROM candidates"), 2 * runs * 5);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 2 * runs);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned WHERE plan='bm=16'"), 2 * runs);
  sqlite3_close(h);
}

static void test_rejected_never_wins(void **state) {
  tsr__tune_cand c[5];
  memset(c, 0, sizeof c);
  const tsr__cand_status st[5] = {TSR__CAND_REJ_VALIDATION, TSR__CAND_OK, TSR__CAND_REJ_SPILL,
                                  TSR__CAND_UNMEASURED, TSR__CAND_OK};
  const double t[5] = {1.0, 100.0, 0.5, 0.1, 150.0};
  for (int i = 0; i < 5; i++) {
    c[i].status = st[i];
    c[i].time_ns = t[i];
  }
  assert_int_equal(tsr__tune_select(c, 5), 1);
  c[1].status = TSR__CAND_REJ_COMPILE;
  assert_int_equal(tsr__tune_select(c, 5), 4);
  c[4].status = TSR__CAND_REJ_RUN;
  assert_int_equal(tsr__tune_select(c, 5), -1);
  c[4].status = TSR__CAND_OK;
  c[4].time_ns = NAN; /* an OK status without a finite time cannot win either */
  assert_int_equal(tsr__tune_select(c, 5), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fresh_schema, setup, teardown),
      cmocka_unit_test_setup_teardown(test_migration_v1, setup, teardown),
      cmocka_unit_test_setup_teardown(test_garbage_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_and_newer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookup_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookup_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejected_never_wins, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
