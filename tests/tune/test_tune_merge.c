/* tessera tune --merge (src/tune/merge.c): the winner rule (fastest stored
 * time, ties by plan text), device keys kept apart, runs and candidates
 * carried with consistent ids, the same bytes whatever the input order and
 * when a merged file is merged again, inputs never modified, refusals of
 * bad inputs and of an existing output, v2 inputs and the v2 → v4
 * migration, the prefetch counts carried (NULL from a v3 input). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmpdir.h"
#include "tune/tune.h"

static int setup(void **state) {
  if (test_tmpdir_make("/tmp/tsr_tune_merge")) return -1;
  return 0;
}

static int teardown(void **state) { return test_tmpdir_remove(); }

static int same_bytes(const char *a, const char *b) {
  size_t na, nb;
  unsigned char *x = read_all(a, &na), *y = read_all(b, &nb);
  int same = na == nb && !memcmp(x, y, na);
  free(x);
  free(y);
  return same;
}

static void copy_file(const char *from, const char *to) {
  size_t n;
  unsigned char *b = read_all(from, &n);
  FILE *f = fopen(to, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
}

/* --show --json of a database (its path printed as given). */
static char *show_json(const char *path) {
  tsr__tune_db *db = NULL;
  char msg[1200];
  assert_int_equal(tsr__tune_db_open(path, 0, &db, msg, sizeof msg), TSR_OK);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(tsr__tune_db_show(db, f, 1, msg, sizeof msg), 0);
  fclose(f);
  tsr__tune_db_close(db);
  return buf;
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
  const unsigned char *t = sqlite3_column_text(s, 0);
  snprintf(out, cap, "%s", t ? (const char *)t : "(null)");
  sqlite3_finalize(s);
}

/* One finished run with one candidate and its tuned entry, as a tune on
 * host/rank would leave them (rank < 0: a plain run). */
static void add_entry(sqlite3 *h, const char *device, int m, const char *plan, double time_ns,
                      const char *host, int rank, const char *started) {
  char sql[2048];
  char rk[32] = "NULL", rks[32] = "NULL";
  if (rank >= 0) {
    snprintf(rk, sizeof rk, "%d", rank);
    snprintf(rks, sizeof rks, "2");
  }
  snprintf(sql, sizeof sql,
           "INSERT INTO runs(device, arch, driver, nvrtc, tessera_version, backend, m, n, k, "
           "op_a, op_b, batch, precision, started, finished, status, decision, host, rank, ranks) "
           "VALUES('%s','avx512','','','0.1.0','cpu',%d,64,64,'N','N',1,'auto','%s','%s','done',"
           "'winner','%s',%s,%s);"
           "UPDATE runs SET origin_id=id WHERE id=last_insert_rowid();"
           "INSERT INTO candidates(run_id, ordinal, plan, role, status, time_ns) "
           "VALUES(last_insert_rowid(), 0, '%s', 'incumbent', 'ok', %.17g);"
           "INSERT INTO tuned(device, arch, driver, nvrtc, tessera_version, backend, m, n, k, "
           "op_a, op_b, batch, precision, plan, decision, time_ns, run_id, updated) "
           "VALUES('%s','avx512','','','0.1.0','cpu',%d,64,64,'N','N',1,'auto','%s','winner',"
           "%.17g,(SELECT max(id) FROM runs),'%s');",
           device, m, started, started, host, rk, rks, plan, time_ns, device, m, plan, time_ns,
           started);
  assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
}

static void make_db(const char *path, void (*fill)(sqlite3 *)) {
  tsr__tune_db *db = NULL;
  char msg[1200];
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  fill(tsr__tune_db_handle(db));
  tsr__tune_db_close(db);
}

/* rank 0 on host a: 64 (P1, 100 ns) and 32 (p-b, 50 ns) */
static void fill_a(sqlite3 *h) {
  add_entry(h, "CPU X (2 cores)", 64, "P1", 100.0, "a", 0, "2026-01-01T00:00:00Z");
  add_entry(h, "CPU X (2 cores)", 32, "p-b", 50.0, "a", 0, "2026-01-01T00:00:01Z");
}
/* rank 1 on host b: 64 faster (P2, 90 ns); 32 equally fast (p-a) */
static void fill_b(sqlite3 *h) {
  add_entry(h, "CPU X (2 cores)", 64, "P2", 90.0, "b", 1, "2026-01-01T00:00:00Z");
  add_entry(h, "CPU X (2 cores)", 32, "p-a", 50.0, "b", 1, "2026-01-01T00:00:02Z");
}
/* another device model: far faster, but its own keys */
static void fill_c(sqlite3 *h) {
  add_entry(h, "CPU Y (64 cores)", 64, "P9", 10.0, "c", -1, "2026-01-02T00:00:00Z");
}

static void test_merge_rule_and_order(void **state) {
  char a[512], b[512], c[512], m1[512], m2[512], m3[512], msg[2400], txt[256];
  path_in(a, sizeof a, "a.db");
  path_in(b, sizeof b, "b.db");
  path_in(c, sizeof c, "c.db");
  path_in(m1, sizeof m1, "m1.db");
  path_in(m2, sizeof m2, "m2.db");
  path_in(m3, sizeof m3, "m3.db");
  make_db(a, fill_a);
  make_db(b, fill_b);
  make_db(c, fill_c);
  size_t na;
  unsigned char *a_before = read_all(a, &na);

  const char *abc[] = {a, b, c}, *cab[] = {c, a, b};
  assert_int_equal(tsr__tune_db_merge(m1, abc, 3, msg, sizeof msg), TSR_OK);
  /* same path for both listings: --show --json names the file */
  char *j1 = show_json(m1);
  copy_file(m1, m3);
  unlink(m1);
  assert_int_equal(tsr__tune_db_merge(m1, cab, 3, msg, sizeof msg), TSR_OK);
  char *j2 = show_json(m1);
  assert_string_equal(j1, j2);
  assert_true(same_bytes(m1, m3));
  assert_int_equal(tsr__tune_db_merge(m2, cab, 3, msg, sizeof msg), TSR_OK);
  assert_true(same_bytes(m1, m2));

  /* the input is byte for byte what it was */
  size_t na2;
  unsigned char *a_after = read_all(a, &na2);
  assert_int_equal(na, na2);
  assert_memory_equal(a_before, a_after, na);
  free(a_before);
  free(a_after);

  sqlite3 *h;
  assert_int_equal(sqlite3_open_v2(m1, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  /* one entry per key: X 64, X 32, Y 64 (models never mix) */
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 3);
  query_text(h, "SELECT plan FROM tuned WHERE device='CPU X (2 cores)' AND m=64", txt, sizeof txt);
  assert_string_equal(txt, "P2"); /* faster */
  query_text(h, "SELECT plan FROM tuned WHERE device='CPU X (2 cores)' AND m=32", txt, sizeof txt);
  assert_string_equal(txt, "p-a"); /* same time: smaller plan text */
  query_text(h, "SELECT plan FROM tuned WHERE device='CPU Y (64 cores)' AND m=64", txt, sizeof txt);
  assert_string_equal(txt, "P9");
  /* provenance follows the winner through the renumbered run ids */
  query_text(h,
             "SELECT r.host || ' ' || r.rank || '/' || r.ranks FROM tuned t JOIN runs r ON r.id = "
             "t.run_id WHERE t.device='CPU X (2 cores)' AND t.m=64",
             txt, sizeof txt);
  assert_string_equal(txt, "b 1/2");
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned t JOIN runs r ON r.id = t.run_id AND "
                                "r.device = t.device AND r.m = t.m"),
                   3);
  /* every run and candidate kept once, candidates under their own run */
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs"), 5);
  assert_int_equal(query_int(h, "SELECT count(*) FROM candidates c JOIN runs r ON r.id = "
                                "c.run_id JOIN tuned t ON t.run_id = r.id AND t.plan = c.plan"),
                   3);
  assert_int_equal(query_int(h, "SELECT count(*) FROM candidates"), 5);
  sqlite3_close(h);

  /* merging again with an input already in it changes nothing (copies of
   * a run are kept once), and the output may be one of the inputs */
  copy_file(m1, m3);
  const char *again[] = {m3, b, a};
  assert_int_equal(tsr__tune_db_merge(m3, again, 3, msg, sizeof msg), TSR_OK);
  assert_true(same_bytes(m1, m3));
  free(j1);
  free(j2);
}

static void test_merge_refusals(void **state) {
  char a[512], bad[512], out[512], msg[2400], side[600];
  path_in(a, sizeof a, "a.db");
  path_in(bad, sizeof bad, "garbage.db");
  path_in(out, sizeof out, "out.db");
  make_db(a, fill_a);
  FILE *f = fopen(bad, "wb");
  for (int i = 0; i < 8192; i++) fputc((i * 7919) & 0xff, f);
  fclose(f);
  size_t nb;
  unsigned char *before = read_all(bad, &nb);

  const char *in1[] = {a, bad};
  assert_int_equal(tsr__tune_db_merge(out, in1, 2, msg, sizeof msg), TSR_ERR_DB);
  assert_non_null(strstr(msg, bad));
  assert_int_not_equal(access(out, F_OK), 0);
  size_t nb2;
  unsigned char *after = read_all(bad, &nb2);
  assert_int_equal(nb, nb2);
  assert_memory_equal(before, after, nb);
  free(before);
  free(after);
  snprintf(side, sizeof side, "%s-wal", bad);
  assert_int_not_equal(access(side, F_OK), 0);

  char missing[512];
  path_in(missing, sizeof missing, "nope.db");
  const char *in2[] = {missing};
  assert_int_not_equal(tsr__tune_db_merge(out, in2, 1, msg, sizeof msg), TSR_OK);
  assert_non_null(strstr(msg, missing));

  /* an existing output that is not an input is never replaced */
  const char *in3[] = {a};
  copy_file(a, out);
  size_t no;
  unsigned char *ob = read_all(out, &no);
  char b[512];
  path_in(b, sizeof b, "b.db");
  make_db(b, fill_b);
  const char *in4[] = {b};
  assert_int_equal(tsr__tune_db_merge(out, in4, 1, msg, sizeof msg), TSR_ERR_INVALID);
  assert_non_null(strstr(msg, "never replaced"));
  size_t no2;
  unsigned char *oa = read_all(out, &no2);
  assert_int_equal(no, no2);
  assert_memory_equal(ob, oa, no);
  free(ob);
  free(oa);
  assert_int_equal(tsr__tune_db_merge(out, in3, 0, msg, sizeof msg), TSR_ERR_INVALID);

  /* no temporary file is left behind by a refusal */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp", tmpdir);
  assert_int_not_equal(system(cmd), 0);
}

/* The runs columns v4 added (the prefetch counts), dropped: back to v3. */
#define V4_DROP                                                                                 \
  "ALTER TABLE runs DROP COLUMN prefetch_threads; ALTER TABLE runs DROP COLUMN "               \
  "prefetch_dispatched; ALTER TABLE runs DROP COLUMN prefetch_compiled; ALTER TABLE runs DROP " \
  "COLUMN prefetch_found_on_disk; ALTER TABLE runs DROP COLUMN prefetch_failed; ALTER TABLE "  \
  "runs DROP COLUMN prefetch_measured_ready; ALTER TABLE runs DROP COLUMN "                    \
  "prefetch_measured_after_wait; ALTER TABLE runs DROP COLUMN prefetch_wait_seconds; ALTER "   \
  "TABLE runs DROP COLUMN prefetch_measured_not_precompiled; ALTER TABLE runs DROP COLUMN "    \
  "prefetch_unused; ALTER TABLE runs DROP COLUMN prefetch_join_seconds;"

/* A v2 file (before provenance): merged as plain runs; a writer migrates it. */
static void test_v2_input(void **state) {
  char v2[512], out[512], msg[2400], txt[128];
  path_in(v2, sizeof v2, "v2.db");
  path_in(out, sizeof out, "out.db");
  make_db(v2, fill_a);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(v2, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h,
                                "PRAGMA journal_mode=DELETE; ALTER TABLE runs DROP COLUMN host; "
                                "ALTER TABLE runs DROP COLUMN rank; ALTER TABLE runs DROP COLUMN "
                                "ranks; ALTER TABLE runs DROP COLUMN block; ALTER TABLE runs DROP "
                                "COLUMN nblocks; ALTER TABLE runs DROP COLUMN origin_id; " V4_DROP
                                "PRAGMA user_version=2;",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(h);
  const char *in[] = {v2};
  assert_int_equal(tsr__tune_db_merge(out, in, 1, msg, sizeof msg), TSR_OK);
  assert_int_equal(sqlite3_open_v2(out, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 2);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE host IS NULL AND rank IS NULL "
                                "AND nblocks = 1 AND origin_id = id AND prefetch_threads IS NULL"),
                   2);
  sqlite3_close(h);
  /* read-only: listed as it is */
  char *j = show_json(v2);
  assert_non_null(strstr(j, "\"schema_version\": 2"));
  free(j);
  /* writable: migrated in place, runs keep their ids as origin */
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(v2, 1, &db, msg, sizeof msg), TSR_OK);
  h = tsr__tune_db_handle(db);
  assert_int_equal(query_int(h, "PRAGMA user_version"), TSR__TUNE_SCHEMA_VERSION);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE origin_id = id AND nblocks = 1"), 2);
  /* straight through v3 to v4: the prefetch counts were not recorded */
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE prefetch_threads IS NULL AND "
                                "prefetch_join_seconds IS NULL"),
                   2);
  query_text(h, "SELECT value FROM meta WHERE key='migrated_from'", txt, sizeof txt);
  assert_string_equal(txt, "2");
  tsr__tune_db_close(db);
}

/* fill_a, with host a's 64 run's prefetch counts */
static void fill_a_prefetch(sqlite3 *h) {
  fill_a(h);
  assert_int_equal(sqlite3_exec(h,
                                "UPDATE runs SET prefetch_threads=8, prefetch_dispatched=34, "
                                "prefetch_compiled=25, prefetch_found_on_disk=3, "
                                "prefetch_failed=2, prefetch_measured_ready=14, "
                                "prefetch_measured_after_wait=4, prefetch_wait_seconds=1.125, "
                                "prefetch_measured_not_precompiled=1, prefetch_unused=7, "
                                "prefetch_join_seconds=0.0625 WHERE m=64",
                                NULL, NULL, NULL),
                   SQLITE_OK);
}

/* The prefetch counts travel with their run through a merge, whatever the
 * input order; a v3 input's runs (from before them) have none. */
static void test_prefetch_carried(void **state) {
  char a[512], b3[512], m1[512], m2[512], msg[2400];
  path_in(a, sizeof a, "a.db");
  path_in(b3, sizeof b3, "b3.db");
  path_in(m1, sizeof m1, "m1.db");
  path_in(m2, sizeof m2, "m2.db");
  make_db(a, fill_a_prefetch);
  make_db(b3, fill_b);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(b3, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=DELETE; " V4_DROP "PRAGMA user_version=3;",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(h);
  const char *in1[] = {a, b3}, *in2[] = {b3, a};
  assert_int_equal(tsr__tune_db_merge(m1, in1, 2, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr__tune_db_merge(m2, in2, 2, msg, sizeof msg), TSR_OK);
  assert_true(same_bytes(m1, m2));
  assert_int_equal(sqlite3_open_v2(m1, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs"), 4);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE host='a' AND m=64 AND "
                                "prefetch_threads=8 AND prefetch_dispatched=34 AND "
                                "prefetch_compiled=25 AND prefetch_found_on_disk=3 AND "
                                "prefetch_failed=2 AND prefetch_measured_ready=14 AND "
                                "prefetch_measured_after_wait=4 AND prefetch_wait_seconds=1.125 "
                                "AND prefetch_measured_not_precompiled=1 AND prefetch_unused=7 "
                                "AND prefetch_join_seconds=0.0625"),
                   1);
  /* a's other run was stored without counts; b's from a v3 file */
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE prefetch_threads IS NULL AND "
                                "prefetch_join_seconds IS NULL"),
                   3);
  sqlite3_close(h);
}

/* A stored entry as tsr__tune_db_finish_run writes it, from a result whose
 * chosen candidate took time_ns (no replay: the search median). */
static void store(tsr__tune_db *db, const tsr__tune_target *t, const char *plan, double time_ns,
                  int rank) {
  tsr__tune_config cfg = {.backend = TSR_BACKEND_CPU, .rank = rank, .ranks = 2, .host = "h",
                          .block = rank >= 0 ? rank : 0, .nblocks = 2, .rounds = 2};
  tsr_problem_init(&cfg.problem, 64, 64, 64);
  tsr__tune_cand c;
  memset(&c, 0, sizeof c);
  snprintf(c.text, sizeof c.text, "%s", plan);
  snprintf(c.realized, sizeof c.realized, "%s", plan);
  c.status = TSR__CAND_OK;
  c.time_ns = time_ns;
  c.regs = c.local_bytes = -1;
  tsr__tune_result r;
  memset(&r, 0, sizeof r);
  r.cands = &c;
  r.n = 1;
  r.incumbent = r.best = r.chosen = 0;
  snprintf(r.decision, sizeof r.decision, "incumbent (search best)");
  snprintf(r.started, sizeof r.started, "2026-01-01T00:00:00Z");
  snprintf(r.finished, sizeof r.finished, "2026-01-01T00:00:01Z");
  char msg[1200];
  assert_int_equal(tsr__tune_db_begin_run(db, t, &cfg, r.started, &r.run_id, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr__tune_db_finish_run(db, t, &cfg, &r, msg, sizeof msg), TSR_OK);
}

/* In one file, a scale-out run's entry (a candidate block of a key) only
 * replaces a worse one by the merge rule; a plain run's replaces any. */
static void test_scaleout_entry_rule(void **state) {
  char path[512], msg[1200], txt[64];
  path_in(path, sizeof path, "rank0.db");
  tsr__tune_db *db = NULL;
  assert_int_equal(tsr__tune_db_open(path, 1, &db, msg, sizeof msg), TSR_OK);
  tsr__tune_target t = {.device = "CPU X (2 cores)", .arch = "avx512", .version = "0.1.0",
                        .backend = "cpu"};
  sqlite3 *h = tsr__tune_db_handle(db);
  store(db, &t, "B", 100.0, 0);
  store(db, &t, "C", 90.0, 1); /* faster: replaces */
  query_text(h, "SELECT plan FROM tuned", txt, sizeof txt);
  assert_string_equal(txt, "C");
  store(db, &t, "D", 95.0, 0); /* slower: stays out */
  query_text(h, "SELECT plan FROM tuned", txt, sizeof txt);
  assert_string_equal(txt, "C");
  store(db, &t, "A", 90.0, 1); /* as fast, smaller plan text: replaces */
  query_text(h, "SELECT plan FROM tuned", txt, sizeof txt);
  assert_string_equal(txt, "A");
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE status='done' AND origin_id=id"), 4);
  assert_int_equal(query_int(h, "SELECT count(*) FROM runs WHERE block=1 AND nblocks=2 AND rank=1 "
                                "AND ranks=2 AND host='h'"),
                   2);
  store(db, &t, "E", 120.0, -1); /* a plain run: newest wins */
  query_text(h, "SELECT plan FROM tuned", txt, sizeof txt);
  assert_string_equal(txt, "E");
  assert_int_equal(query_int(h, "SELECT count(*) FROM tuned"), 1);
  tsr_problem p;
  tsr_problem_init(&p, 64, 64, 64);
  assert_int_equal(tsr__tune_db_item_done(db, &t, &p, 1, 2, msg, sizeof msg), 1);
  assert_int_equal(tsr__tune_db_item_done(db, &t, &p, 0, 3, msg, sizeof msg), 0);
  tsr_problem_init(&p, 64, 64, 32);
  assert_int_equal(tsr__tune_db_item_done(db, &t, &p, 1, 2, msg, sizeof msg), 0);
  tsr__tune_db_close(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_merge_rule_and_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_merge_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_v2_input, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prefetch_carried, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scaleout_entry_rule, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
