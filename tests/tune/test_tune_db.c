/* Tuning database: schema creation, v1 → v4 and v3 → v4 migrations, the
 * prefetch counts of a run stored and listed exactly, refusal of foreign,
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

/* the text of the one value SQL selects is WANT */
static void expect_text(sqlite3 *h, const char *sql, const char *want) {
  char txt[256];
  query_text(h, sql, txt, sizeof txt);
  assert_string_equal(txt, want);
}

static void test_fresh_schema(void **state) {
  char path[512], msg[1200];
  path_in(path, sizeof path, "sub/dir/tune.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  sqlite3 *h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  expect_text(h, "PRAGMA journal_mode", "wal");
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
  char path[512], msg[1200];
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
  expect_text(h, "SELECT plan FROM tuned WHERE backend='cpu'", "bm=96,bn=256,bk=128,tm=12,tn=32");
  expect_text(h, "SELECT time_ns FROM tuned WHERE backend='cpu'", "12345.5");
  expect_text(h, "SELECT updated FROM tuned WHERE backend='cpu'", "2026-11-01T00:00:00Z");
  expect_text(h, "SELECT value FROM meta WHERE key='migrated_from'", "1");
  assert_int_equal(query_int(h, "SELECT count(*) FROM sqlite_master WHERE name='tuned_v1'"), 0);
  expect_text(h, "PRAGMA integrity_check", "ok");
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

/* The CPU lookup database of the rule and explain tests, under this machine's
 * own target key (t): 1024^3 and 700x1024x1024 winners, 256^3 an incumbent.
 * Generic micro-kernels exist on every x86-64 host. */
static const char *const px = "bm=64,bn=64,bk=64,wm=1,wn=1,tm=4,tn=8,stages=1,vec=1,a=staged,"
                              "b=staged,pad=0,walk=linear,splitk=1,threads=1,isa=generic,mma=ffma";
static const char *const pnear = "bm=32,bn=64,bk=32,wm=1,wn=1,tm=4,tn=8,stages=1,vec=1,a=staged,"
                                 "b=staged,pad=0,walk=stripe:2,splitk=1,threads=1,isa=generic,"
                                 "mma=ffma";
static const char *const py = "bm=48,bn=32,bk=16,wm=1,wn=1,tm=4,tn=4,stages=1,vec=1,a=staged,"
                              "b=staged,pad=0,walk=linear,splitk=1,threads=1,isa=generic,mma=ffma";

static void cpu_lookup_db(const char *name, char *path, size_t cap, tsr__tune_target *t) {
  char msg[1200];
  path_in(path, cap, name);
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  assert_int_equal(tsr__tune_target_get(ctx, TSR_BACKEND_CPU, t), TSR_OK);
  tsr_context_destroy(ctx);
  sqlite3 *h = tsr__tune_db_handle(db);
  insert_tuned(h, t, 1024, 1024, 1024, "N", px, "winner", "2026-11-29T10:00:00Z");
  insert_tuned(h, t, 700, 1024, 1024, "N", pnear, "winner", "2026-11-29T09:00:00Z");
  insert_tuned(h, t, 256, 256, 256, "N", py, "incumbent (replay: not faster in every round)",
               "2026-11-29T10:00:00Z");
  tsr__tune_db_close(db);
}

static void test_lookup_rule(void **state) {
  char path[512], msg[1200], src[128];
  tsr__tune_target t;
  cpu_lookup_db("lookup.db", path, sizeof path, &t);
  tsr_plan x, near, y, got, def;
  default_of(1, 1, 1, &x);
  near = y = x;
  assert_int_equal(tsr_plan_parse(px, &x, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr_plan_parse(pnear, &near, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr_plan_parse(py, &y, msg, sizeof msg), TSR_OK);

  lookup(path, 1024, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (exact)");
  assert_true(tsr_plan_equal(&got, &x));
  /* nearest: 1536 is within an octave of 1024 (distance 0.58) and of 700
   * (1.13): the closer bucket wins */
  lookup(path, 1536, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "tuned (nearest 1024x1024x1024)");
  assert_true(tsr_plan_equal(&got, &x));
  /* but not at 1500 rows: 1024^3's winner ran whole 64-row tiles, 1500
   * leaves a partial one (tsr__tune_nearest_ok), and 700 is over an octave
   * away */
  lookup(path, 1500, 1024, 1024, 0, &got, src, sizeof src);
  assert_string_equal(src, "default (no tuned entry)");
  /* 600 rows: 700x1024x1024's winner had a partial 32-row tile there too */
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
  tsr_context *ctx;
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

/* The lookup explained (tessera plan --explain): the text of explain_at on a
 * CPU problem, the source it serves beside. */
static char *explain_at(int64_t m, int64_t n, int64_t k, char *src, size_t cap) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr_problem p;
  tsr_problem_init(&p, m, n, k);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  tsr_plan got;
  assert_int_equal(tsr__plan_lookup_explain(ctx, TSR_BACKEND_CPU, &p, &got, src, cap, f), TSR_OK);
  fclose(f);
  tsr_context_destroy(ctx);
  return buf;
}

static void expect_in(const char *text, const char *needle) {
  if (!strstr(text, needle)) fail_msg("missing '%s' in:\n%s", needle, text);
}

/* Each pass, each entry it considers and the rule that decides it, and the
 * source served (the same as tsr_plan_lookup's). */
static void test_lookup_explain(void **state) {
  char path[512], src[128], src2[128];
  tsr__tune_target t;
  cpu_lookup_db("explain.db", path, sizeof path, &t);
  setenv("TESSERA_TUNE_DB", path, 1);
  char want[1200];
  /* 600 rows: 1024^3's winner (newer: considered first) leaves a partial
   * 64-row tile; 700x1024x1024's fits and is served */
  char *e = explain_at(600, 1024, 1024, src, sizeof src);
  snprintf(want, sizeof want, "  database %s\n  target cpu, %s, %s, tessera %s\n", path, t.device,
           t.arch, t.version);
  expect_in(e, want);
  expect_in(e, "  exact: this problem's own entry\n    (no entry)\n  nearest bucket: ");
  expect_in(e, "    1024x1024x1024, winner, distance 0.77: refused: tails rule (a partial tile "
               "along M here, none on its own shape: its tune never ran that tail code)\n"
               "    700x1024x1024, winner, distance 0.22: fits\n"
               "  served: tuned (nearest 700x1024x1024)\n");
  assert_string_equal(src, "tuned (nearest 700x1024x1024)");
  tsr_plan got;
  lookup(path, 600, 1024, 1024, 0, &got, src2, sizeof src2);
  assert_string_equal(src2, src);
  free(e);
  /* 1536 rows: 700 is beyond an octave, not listed */
  e = explain_at(1536, 1024, 1024, src, sizeof src);
  expect_in(e, "    1024x1024x1024, winner, distance 0.58: fits\n"
               "  served: tuned (nearest 1024x1024x1024)\n");
  assert_null(strstr(e, "700x"));
  free(e);
  /* exact, an incumbent entry */
  e = explain_at(256, 256, 256, src, sizeof src);
  expect_in(e, "  exact: this problem's own entry\n    256x256x256, incumbent (replay: not faster "
               "in every round), distance 0.00: fits\n  served: tuned (exact, incumbent kept)\n");
  assert_null(strstr(e, "nearest bucket"));
  free(e);
  /* nothing near: both passes empty, the default */
  e = explain_at(100, 100, 100, src, sizeof src);
  expect_in(e, "  nearest bucket: winners of the same ops, batch and precision within one octave "
               "on every axis, nearest first (sum of |log2| distances)\n    (no entry)\n"
               "  served: default (no tuned entry)\n");
  assert_string_equal(src, "default (no tuned entry)");
  free(e);
  /* no database, or the database off */
  path_in(path, sizeof path, "missing.db");
  setenv("TESSERA_TUNE_DB", path, 1);
  e = explain_at(100, 100, 100, src, sizeof src);
  snprintf(want, sizeof want, "  no tuning database at %s\n", path);
  assert_string_equal(e, want);
  free(e);
  setenv("TESSERA_TUNE_DB", "off", 1);
  e = explain_at(100, 100, 100, src, sizeof src);
  assert_string_equal(e, "  tuning database off (TESSERA_TUNE_DB=off)\n");
  free(e);
  unsetenv("TESSERA_TUNE_DB");
}

/* A tune document for the leave-one-out test: dir/tune_cpu_<shape>.json with the
 * incumbent's time and one more measured candidate (plan, time). */
static void write_doc(const char *dir, const char *shape, const char *finished, double inc_ns,
                      const char *plan, double ns) {
  char path[700];
  snprintf(path, sizeof path, "%s/tune_cpu_%s.json", dir, shape);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "{\"schema\": \"tessera-tune/1\", \"backend\": \"cpu\", \"problem\": {\"shape\": "
          "\"%s\", \"batch\": 1, \"op_a\": \"N\", \"op_b\": \"N\", \"precision\": "
          "\"auto\"}, \"finished\": \"%s\", \"incumbent\": {\"plan\": \"x\", \"status\": "
          "\"ok\", \"time_ns\": %g}, \"candidates\": [{\"plan\": \"x\", \"status\": "
          "\"ok\", \"time_ns\": %g}, {\"plan\": \"%s\", \"status\": \"ok\", \"time_ns\": "
          "%g}, {\"plan\": \"%s\", \"status\": \"rejected-planner\", \"time_ns\": 1}]}\n",
          shape, finished, inc_ns, inc_ns, plan, ns, plan);
  fclose(f);
}

static char *run_loo(const char *dbpath, const char *const *dirs, int ndirs, tsr_status want,
                     tsr__tune_loo_summary *sum, char *msg, size_t cap) {
  char m[1200];
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(dbpath, 0, &db, m, sizeof m), TSR_OK);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(tsr__tune_loo(ctx, db, dirs, ndirs, f, sum), want);
  fclose(f);
  snprintf(msg, cap, "%s", tsr_context_message(ctx));
  tsr_context_destroy(ctx);
  tsr__tune_db_close(db);
  return buf;
}

/* Leave-one-out (tessera tune --loo): each entry looked up as unseen. 1024^3
 * is served 700x1024x1024's winner by the nearest pass (the exact pass, its
 * own entry, left out) and priced by its latest tune document; 700x1024x1024
 * is refused 1024^3's (the tails rule) and 256^3 has no neighbour: defaults. */
static void test_loo(void **state) {
  char path[512], d1[512], d2[512], msg[1200];
  tsr__tune_target t;
  cpu_lookup_db("loo.db", path, sizeof path, &t);
  /* the text the lookup makes of 700x1024x1024's stored plan at 1024^3: a
   * partial text, read over 1024^3's default */
  tsr_plan near;
  default_of(1024, 1024, 1024, &near);
  assert_int_equal(tsr_plan_parse(pnear, &near, msg, sizeof msg), TSR_OK);
  char text[512];
  tsr_plan_format(&near, text, sizeof text);
  path_in(d1, sizeof d1, "docs1");
  path_in(d2, sizeof d2, "docs2");
  assert_int_equal(mkdir(d1, 0755), 0);
  assert_int_equal(mkdir(d2, 0755), 0);
  write_doc(d1, "1024x1024x1024", "2026-11-29T10:00:00Z", 2000, text, 1800);
  write_doc(d2, "1024x1024x1024", "2026-11-28T10:00:00Z", 2000, text, 500); /* older: ignored */
  write_doc(d2, "256x256x256", "2026-11-29T10:00:00Z", 100, text, 50);
  const char *dirs[] = {d2, d1};
  tsr__tune_loo_summary sum;
  char *out = run_loo(path, dirs, 2, TSR_OK, &sum, msg, sizeof msg);
  expect_in(out, "  1024x1024x1024           auto    tuned (nearest 700x1024x1024): 0.900 of the "
                 "incumbent's time in its tune\n");
  assert_int_equal(sum.entries, 3);
  assert_int_equal(sum.served, 1);
  assert_int_equal(sum.measured, 1);
  assert_int_equal(sum.slower, 0);
  assert_true(fabs(sum.geomean - 0.9) < 1e-12);
  assert_string_equal(sum.worst_shape, "1024x1024x1024");
  expect_in(out, "2 tune documents (the latest of each problem) priced the plans served\n");
  char want[700];
  snprintf(want, sizeof want, "target cpu, %s, %s, tessera %s\n", t.device, t.arch, t.version);
  expect_in(out, want);
  expect_in(out, "  1024x1024x1024           auto    tuned (nearest 700x1024x1024): 0.900 of the "
                 "incumbent's time in its tune\n");
  expect_in(out, "  700x1024x1024            auto    default\n");
  expect_in(out, "  256x256x256              auto    default\n");
  expect_in(out, "summary: 3 entries, 1 served another entry's plan, 1 of those measured in their "
                 "own tune: geomean 0.900 of the incumbent's time, 0 slower (worst 0.900 at "
                 "1024x1024x1024)\n");
  free(out);
  /* the plan not among the document's measured candidates: served, not priced */
  write_doc(d1, "1024x1024x1024", "2026-11-30T10:00:00Z", 2000, "bm=1", 10);
  out = run_loo(path, dirs, 2, TSR_OK, &sum, msg, sizeof msg);
  expect_in(out, "tuned (nearest 700x1024x1024): not measured in its tune\n");
  assert_int_equal(sum.served, 1);
  assert_int_equal(sum.measured, 0);
  assert_true(sum.geomean == 1.0);
  free(out);
  /* a document that is not one, and a folder that is not there: named */
  char bad[700];
  snprintf(bad, sizeof bad, "%s/tune_cpu_bad.json", d2);
  FILE *f = fopen(bad, "w");
  fputs("{\"schema\": \"tessera-tune/1\"", f);
  fclose(f);
  out = run_loo(path, dirs, 2, TSR_ERR_INVALID, &sum, msg, sizeof msg);
  expect_in(msg, bad);
  free(out);
  const char *missing[] = {"/nonexistent/folder"};
  out = run_loo(path, missing, 1, TSR_ERR_IO, &sum, msg, sizeof msg);
  expect_in(msg, "/nonexistent/folder");
  free(out);
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
    int r = tsr__tune_db_lookup(db, &t, &p, cls, NULL, NULL, &got, src, sizeof src, msg, sizeof msg,
                                NULL);
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
                                       sizeof msg, NULL),
                   0);
  tsr__tune_db_close(db);
}

/* The key's target part shared by the writer and store_run: a CPU device. */
static void cpu_target(tsr__tune_target *t) {
  memset(t, 0, sizeof *t);
  snprintf(t->device, sizeof t->device, "test device");
  snprintf(t->arch, sizeof t->arch, "avx512");
  snprintf(t->version, sizeof t->version, "test");
  snprintf(t->backend, sizeof t->backend, "cpu");
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
  cpu_target(&t);
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
  char path[512];
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
  expect_text(h, "PRAGMA integrity_check", "ok");
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE status='done'"), 2 * runs);
  assert_int_equal(query_int(h, "SELECT count(*) FROM candidates"), 2 * runs * 5);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 2 * runs);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned WHERE plan='bm=16'"), 2 * runs);
  sqlite3_close(h);
}

/* One finished CPU run of m x 64 x 64 with two candidates, stored the way
 * tsr__tune_run stores it, with the given prefetch counts. Its run id. */
static int64_t store_run(tsr__tune_db *db, int64_t m, const tsr__tune_prefetch_stats *pf) {
  char msg[1200];
  tsr__tune_target t;
  cpu_target(&t);
  tsr__tune_cand c[2];
  memset(c, 0, sizeof c);
  for (int i = 0; i < 2; i++) {
    snprintf(c[i].text, sizeof c[i].text, "bm=%d", 8 * (i + 1));
    c[i].role = i ? TSR__ROLE_SEARCH : TSR__ROLE_INCUMBENT;
    c[i].status = TSR__CAND_OK;
    c[i].time_ns = 1000.0 - i;
    c[i].nsamples = 5;
    c[i].regs = c[i].local_bytes = -1;
  }
  size_t idx[2] = {0, 1};
  tsr__tune_config cfg;
  memset(&cfg, 0, sizeof cfg);
  tsr_problem_init(&cfg.problem, m, 64, 64);
  cfg.rank = -1;
  tsr__tune_result res;
  memset(&res, 0, sizeof res);
  res.cands = c;
  res.n = 2;
  res.measured = 2;
  res.incumbent = 0;
  res.best = res.chosen = 1;
  res.rounds = 2;
  res.prefetch = *pf;
  snprintf(res.decision, sizeof res.decision, "winner");
  snprintf(res.finished, sizeof res.finished, "2026-12-02T00:00:01Z");
  assert_int_equal(tsr__tune_db_begin_run(db, &t, &cfg, "2026-12-02T00:00:00Z", &res.run_id, msg,
                                          sizeof msg),
                   TSR_OK);
  assert_int_equal(tsr__tune_db_add_candidates(db, res.run_id, c, idx, 2, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr__tune_db_finish_run(db, &t, &cfg, &res, msg, sizeof msg), TSR_OK);
  return res.run_id;
}

/* The counts of a summary's prefetch line (consistent: dispatched = compiled
 * + found + failed + taken back + not started), with wait and join seconds
 * that are exact in binary. */
static tsr__tune_prefetch_stats known_prefetch(void) {
  tsr__tune_prefetch_stats pf;
  memset(&pf, 0, sizeof pf);
  pf.threads = 8;
  pf.window = 16;
  pf.dispatched = 34;
  pf.compiled = 25;
  pf.found_on_disk = 3;
  pf.failed = 2;
  pf.taken_by_search = 3;
  pf.not_started = 1;
  pf.unused = 7;
  pf.measured_ready = 14;
  pf.measured_after_wait = 4;
  pf.measured_not_precompiled = 1;
  pf.seconds_waited = 1.125;
  pf.seconds_join = 0.0625;
  return pf;
}

/* What tsr__tune_db_show prints (text or JSON). */
static char *show(tsr__tune_db *db, int json) {
  char msg[1200];
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  assert_int_equal(tsr__tune_db_show(db, f, json, msg, sizeof msg), 0);
  fclose(f);
  /* a copy: GCC 12 takes open_memstream's buffer for the local variable
   * (-Wdangling-pointer) */
  char *text = strdup(buf);
  free(buf);
  assert_non_null(text);
  return text;
}

/* How often needle occurs in text. */
static int count_of(const char *text, const char *needle) {
  int k = 0;
  for (const char *q = strstr(text, needle); q; q = strstr(q + 1, needle)) k++;
  return k;
}

/* A run's prefetch counts go into its row exactly (types included) and
 * --show lists them. */
static void test_prefetch_counts_stored(void **state) {
  char path[512], msg[1200], sql[256];
  path_in(path, sizeof path, "prefetch.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  tsr__tune_prefetch_stats pf = known_prefetch(), off;
  memset(&off, 0, sizeof off);
  off.measured_not_precompiled = 2; /* nothing compiled ahead: every one compiled itself */
  snprintf(off.off, sizeof off.off, "backend cpu compiles nothing ahead");
  int64_t id = store_run(db, 64, &pf), id_off = store_run(db, 96, &off);
  sqlite3 *h = tsr__tune_db_handle(db);
  static const struct {
    const char *col, *type;
    int64_t want, want_off;
  } ints[] = {
      {"prefetch_threads", "integer", 8, 0},
      {"prefetch_dispatched", "integer", 34, 0},
      {"prefetch_compiled", "integer", 25, 0},
      {"prefetch_found_on_disk", "integer", 3, 0},
      {"prefetch_failed", "integer", 2, 0},
      {"prefetch_measured_ready", "integer", 14, 0},
      {"prefetch_measured_after_wait", "integer", 4, 0},
      {"prefetch_measured_not_precompiled", "integer", 1, 2},
      {"prefetch_unused", "integer", 7, 0},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id=%lld", ints[i].col, (long long)id);
    assert_int_equal(query_int(h, sql), ints[i].want);
    snprintf(sql, sizeof sql, "SELECT typeof(%s) FROM runs WHERE id=%lld", ints[i].col,
             (long long)id);
    expect_text(h, sql, ints[i].type);
    /* off is zeros, not NULL: the run recorded that nothing was compiled ahead */
    snprintf(sql, sizeof sql, "SELECT %s FROM runs WHERE id=%lld", ints[i].col, (long long)id_off);
    assert_int_equal(query_int(h, sql), ints[i].want_off);
    snprintf(sql, sizeof sql, "SELECT typeof(%s) FROM runs WHERE id=%lld", ints[i].col,
             (long long)id_off);
    expect_text(h, sql, "integer");
  }
  sqlite3_stmt *s;
  snprintf(sql, sizeof sql,
           "SELECT prefetch_wait_seconds, prefetch_join_seconds FROM runs WHERE id IN (%lld, "
           "%lld) ORDER BY id",
           (long long)id, (long long)id_off);
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  assert_int_equal(sqlite3_column_type(s, 0), SQLITE_FLOAT);
  assert_true(sqlite3_column_double(s, 0) == 1.125);
  assert_true(sqlite3_column_double(s, 1) == 0.0625);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  assert_int_equal(sqlite3_column_type(s, 0), SQLITE_FLOAT);
  assert_true(sqlite3_column_double(s, 0) == 0.0);
  assert_true(sqlite3_column_double(s, 1) == 0.0);
  sqlite3_finalize(s);
  tsr__tune_db_close(db);
  /* --show, read-only as the CLI opens it: the summary's line for the run
   * with threads, none for the one without; every column in JSON */
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_OK);
  char *text = show(db, 0);
  assert_non_null(strstr(text, "      prefetch 8 compile threads: 34 dispatched, 25 compiled, 3 "
                               "found on disk, 2 failed; measured 14 ready, 4 after a wait (1.1 "
                               "s), 1 not precompiled; 7 unused; join 0.1 s\n"));
  assert_int_equal(count_of(text, "prefetch "), 1);
  free(text);
  char *js = show(db, 1);
  static const char *const want[] = {
      "\"prefetch_threads\": 8",        "\"prefetch_dispatched\": 34",
      "\"prefetch_compiled\": 25",      "\"prefetch_found_on_disk\": 3",
      "\"prefetch_failed\": 2",         "\"prefetch_measured_ready\": 14",
      "\"prefetch_measured_after_wait\": 4", "\"prefetch_wait_seconds\": 1.125",
      "\"prefetch_measured_not_precompiled\": 1", "\"prefetch_unused\": 7",
      "\"prefetch_join_seconds\": 0.0625", "\"prefetch_measured_not_precompiled\": 2",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    if (!strstr(js, want[i])) fprintf(stderr, "--show --json lacks %s\n", want[i]);
    assert_non_null(strstr(js, want[i]));
  }
  free(js);
  tsr__tune_db_close(db);
}

/* Schema v3 as it was (before the prefetch columns), verbatim. */
static const char schema_v3_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, device TEXT NOT NULL, arch TEXT NOT NULL, "
    "driver TEXT NOT NULL, nvrtc TEXT NOT NULL, tessera_version TEXT NOT NULL, backend TEXT NOT "
    "NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, op_a TEXT NOT NULL, op_b "
    "TEXT NOT NULL, batch INTEGER NOT NULL, precision TEXT NOT NULL, started TEXT NOT NULL, "
    "finished TEXT, status TEXT NOT NULL, max_candidates INTEGER, max_seconds REAL, space_size "
    "INTEGER, planner_rejected INTEGER, measured INTEGER, rejected INTEGER, unmeasured INTEGER, "
    "oracle_seconds REAL, search_seconds REAL, replay_seconds REAL, total_seconds REAL, "
    "incumbent_plan TEXT, best_plan TEXT, decision TEXT, replay TEXT, tie_set TEXT, command "
    "TEXT, host TEXT, rank INTEGER, ranks INTEGER, block INTEGER NOT NULL DEFAULT 0, nblocks "
    "INTEGER NOT NULL DEFAULT 1, origin_id INTEGER);"
    "CREATE TABLE candidates(run_id INTEGER NOT NULL REFERENCES runs(id), ordinal INTEGER NOT "
    "NULL, plan TEXT NOT NULL, realized TEXT, role TEXT NOT NULL, prior REAL, status TEXT NOT "
    "NULL, reason TEXT, source_sha256 TEXT, regs INTEGER, local_bytes INTEGER, time_ns REAL, "
    "samples_ns TEXT, calls INTEGER, seconds REAL, PRIMARY KEY(run_id, ordinal));"
    "CREATE TABLE tuned(device TEXT NOT NULL, arch TEXT NOT NULL, driver TEXT NOT NULL, nvrtc "
    "TEXT NOT NULL, tessera_version TEXT NOT NULL, backend TEXT NOT NULL, m INTEGER NOT NULL, n "
    "INTEGER NOT NULL, k INTEGER NOT NULL, op_a TEXT NOT NULL, op_b TEXT NOT NULL, batch INTEGER "
    "NOT NULL, precision TEXT NOT NULL, plan TEXT NOT NULL, source_sha256 TEXT, decision TEXT NOT "
    "NULL, time_ns REAL, incumbent_plan TEXT, incumbent_ns REAL, ratio_median REAL, ratio_min "
    "REAL, ratio_max REAL, tie_set TEXT, run_id INTEGER, updated TEXT NOT NULL, PRIMARY "
    "KEY(device, arch, driver, nvrtc, tessera_version, backend, m, n, k, op_a, op_b, batch, "
    "precision));";

/* A v3 file: one finished run (rank 1 of 2 on host h, block 1 of 2) and one
 * left running, three candidates, one tuned entry. */
static void make_v3(const char *path) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, schema_v3_sql, NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(
      sqlite3_exec(
          h,
          "INSERT INTO meta VALUES('created', '2026-11-30T00:00:00Z');"
          "INSERT INTO runs(id, device, arch, driver, nvrtc, tessera_version, backend, m, n, k, "
          "op_a, op_b, batch, precision, started, finished, status, max_candidates, max_seconds, "
          "space_size, planner_rejected, measured, rejected, unmeasured, oracle_seconds, "
          "search_seconds, replay_seconds, total_seconds, incumbent_plan, best_plan, decision, "
          "command, host, rank, ranks, block, nblocks, origin_id) VALUES(1, 'NVIDIA H200 (132 "
          "SMs)', 'sm_90', '12.4', '12.6', '0.9.0', 'cuda', 4096, 4096, 4096, 'N', 'N', 1, "
          "'auto', '2026-11-30T00:00:00Z', '2026-11-30T00:00:12Z', 'done', 0, 12.0, 3000, 360000, "
          "17, 2, 2983, 1.5, 9.25, 1.0, 12.0, 'bm=128', 'bm=256', 'winner', 'tessera tune', 'h', "
          "1, 2, 1, 2, 7);"
          "INSERT INTO runs(id, device, arch, driver, nvrtc, tessera_version, backend, m, n, k, "
          "op_a, op_b, batch, precision, started, status, host) VALUES(2, 'NVIDIA H200 (132 "
          "SMs)', 'sm_90', '12.4', '12.6', '0.9.0', 'cuda', 64, 64, 8192, 'N', 'N', 1, 'auto', "
          "'2026-11-30T00:01:00Z', 'running', 'h');"
          "INSERT INTO candidates(run_id, ordinal, plan, role, status, time_ns) VALUES(1, 0, "
          "'bm=128', 'incumbent', 'ok', 2686000), (1, 1, 'bm=256', 'search', 'ok', 2500000), "
          "(2, 0, 'bm=32', 'incumbent', 'ok', 90000);"
          "INSERT INTO tuned(device, arch, driver, nvrtc, tessera_version, backend, m, n, k, op_a, "
          "op_b, batch, precision, plan, decision, time_ns, run_id, updated) VALUES('NVIDIA H200 "
          "(132 SMs)', 'sm_90', '12.4', '12.6', '0.9.0', 'cuda', 4096, 4096, 4096, 'N', 'N', 1, "
          "'auto', 'bm=256', 'winner', 2500000, 1, '2026-11-30T00:00:12Z');"
          "PRAGMA user_version=3;",
          NULL, NULL, NULL),
      SQLITE_OK);
  sqlite3_close(h);
}

static const char all_prefetch_null[] =
    "prefetch_threads IS NULL AND prefetch_dispatched IS NULL AND prefetch_compiled IS NULL AND "
    "prefetch_found_on_disk IS NULL AND prefetch_failed IS NULL AND prefetch_measured_ready IS "
    "NULL AND prefetch_measured_after_wait IS NULL AND prefetch_wait_seconds IS NULL AND "
    "prefetch_measured_not_precompiled IS NULL AND prefetch_unused IS NULL AND "
    "prefetch_join_seconds IS NULL";

/* v3 → v4: read-only opens read the v3 file as it is (bytes unchanged);
 * the tuner's writable open adds the prefetch columns in place, keeping
 * every row and value, with NULL (not recorded) in the new columns; runs
 * stored afterwards carry their counts. */
static void test_migration_v3(void **state) {
  char path[512], msg[1200], sql[1024];
  path_in(path, sizeof path, "v3.db");
  make_v3(path);
  size_t n;
  unsigned char *before = read_all(path, &n);
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_OK);
  char *js = show(db, 1);
  assert_non_null(strstr(js, "\"schema_version\": 3"));
  assert_non_null(strstr(js, "\"prefetch_threads\": null"));
  assert_non_null(strstr(js, "\"host\": \"h\""));
  free(js);
  char *text = show(db, 0);
  assert_non_null(strstr(text, "schema v3"));
  assert_null(strstr(text, "prefetch"));
  free(text);
  tsr__tune_db_close(db);
  assert_unchanged(path, before, n);
  free(before);
  /* the runtime lookup still serves its entry */
  tsr__tune_target t;
  memset(&t, 0, sizeof t);
  snprintf(t.device, sizeof t.device, "NVIDIA H200 (132 SMs)");
  snprintf(t.arch, sizeof t.arch, "sm_90");
  snprintf(t.driver, sizeof t.driver, "12.4");
  snprintf(t.nvrtc, sizeof t.nvrtc, "12.6");
  snprintf(t.version, sizeof t.version, "0.9.0");
  snprintf(t.backend, sizeof t.backend, "cuda");
  tsr_problem p;
  tsr_problem_init(&p, 4096, 4096, 4096);
  tsr_plan got;
  tsr__backend_get(TSR_BACKEND_CUDA)->default_plan(NULL, &p, &got);
  char src[128];
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_OK);
  assert_int_equal(
      tsr__tune_db_lookup(db, &t, &p, NULL, NULL, NULL, &got, src, sizeof src, msg, sizeof msg, NULL),
      1);
  assert_string_equal(src, "tuned (exact)");
  assert_int_equal(got.bm, 256);
  tsr__tune_db_close(db);

  /* The tuner's open migrates. */
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  sqlite3 *h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  assert_int_equal(TSR__TUNE_SCHEMA_VERSION, 4);
  expect_text(h, "SELECT value FROM meta WHERE key='migrated_from'", "3");
  expect_text(h, "SELECT value FROM meta WHERE key='created'", "2026-11-30T00:00:00Z");
  expect_text(h, "PRAGMA integrity_check", "ok");
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs"), 2);
  assert_int_equal(query_int(h, "SELECT count(*) FROM candidates"), 3);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 1);
  /* every old value kept */
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE id=1 AND status='done' AND "
                                "measured=17 AND rejected=2 AND unmeasured=2983 AND "
                                "planner_rejected=360000 AND search_seconds=9.25 AND "
                                "decision='winner' AND host='h' AND rank=1 AND ranks=2 AND "
                                "block=1 AND nblocks=2 AND origin_id=7"),
                   1);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE id=2 AND status='running' AND "
                                "finished IS NULL AND block=0 AND nblocks=1"),
                   1);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned WHERE plan='bm=256' AND run_id=1 AND "
                                "time_ns=2500000"),
                   1);
  /* the new columns: not recorded */
  snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE %s", all_prefetch_null);
  assert_int_equal(query_int(h, sql), 2);
  /* a run stored now carries its counts; the old ones stay NULL */
  tsr__tune_prefetch_stats pf = known_prefetch();
  int64_t id = store_run(db, 128, &pf);
  assert_int_equal(id, 3);
  assert_int_equal(query_int(h, "SELECT prefetch_dispatched FROM runs WHERE id=3"), 34);
  assert_int_equal(query_int(h, "SELECT prefetch_measured_ready FROM runs WHERE id=3"), 14);
  assert_int_equal(query_int(h, sql), 2);
  tsr__tune_db_close(db);
  /* opening again changes nothing */
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs"), 3);
  assert_int_equal(query_int(h, "SELECT prefetch_unused FROM runs WHERE id=3"), 7);
  tsr__tune_db_close(db);
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
      cmocka_unit_test_setup_teardown(test_migration_v3, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prefetch_counts_stored, setup, teardown),
      cmocka_unit_test_setup_teardown(test_garbage_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_and_newer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookup_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookup_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookup_explain, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loo, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejected_never_wins, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
