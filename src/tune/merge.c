/* Merging tuning databases (docs/tune.md, "Scale-out"): the per-rank files
 * of an MPI tune and the shard files of separate jobs become one database
 * by one deterministic rule, whatever the order of the inputs.
 *
 * The output is built from scratch in a temporary file beside it, then
 * renamed over it, so a reader sees the old file or the whole new one. The
 * inputs are attached read-only (mode=ro) after each was opened and checked
 * like any read-only database: a garbage, foreign or newer file is refused
 * by name before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/context.h"
#include "tune/tune.h"

#define KEYS \
  "device, arch, driver, nvrtc, tessera_version, backend, m, n, k, op_a, op_b, batch, precision"
/* runs columns of v2 (after id), then those v3 and v4 added */
#define RUNS_V2                                                                                 \
  KEYS ", started, finished, status, max_candidates, max_seconds, space_size, "                 \
       "planner_rejected, measured, rejected, unmeasured, oracle_seconds, search_seconds, "     \
       "replay_seconds, total_seconds, incumbent_plan, best_plan, decision, replay, tie_set, " \
       "command"
#define RUNS_V3 RUNS_V2 ", host, rank, ranks, block, nblocks, origin_id"
#define PREFETCH                                                                            \
  "prefetch_threads, prefetch_dispatched, prefetch_compiled, prefetch_found_on_disk, "      \
  "prefetch_failed, prefetch_measured_ready, prefetch_measured_after_wait, "                \
  "prefetch_wait_seconds, prefetch_measured_not_precompiled, prefetch_unused, "             \
  "prefetch_join_seconds"
#define NO_PREFETCH ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
#define RUNS_V4 RUNS_V3 ", " PREFETCH
#define CANDS                                                                                  \
  "ordinal, plan, realized, role, prior, status, reason, source_sha256, regs, local_bytes, " \
  "time_ns, samples_ns, calls, seconds"
#define TUNED                                                                                   \
  KEYS ", plan, source_sha256, decision, time_ns, incumbent_plan, incumbent_ns, ratio_median, " \
       "ratio_min, ratio_max, tie_set, run_id, updated"
/* The identity of a run across files: where and when it started, its id
 * there, and what it tuned. Copies of one run (a file merged again, or an
 * input given twice) share it and are kept once. */
#define RUN_IDENTITY                                                                      \
  "started, host, rank, origin_id, " KEYS ", block, nblocks, ranks, max_candidates, "     \
  "max_seconds, command"

static tsr_status fail_sql(sqlite3 *h, char *msg, size_t cap, const char *out, const char *what) {
  return tsr__failbuf(msg, cap, TSR_ERR_DB, "tune --merge: %s: %s: %s", out, what,
                      h ? sqlite3_errmsg(h) : "out of memory");
}

static int schema_version(sqlite3 *h, const char *schema, int *v) {
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA %s.user_version", schema);
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(h, sql, -1, &s, NULL);
  if (rc) return rc;
  rc = sqlite3_step(s) == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
  *v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return rc;
}

/* Every row of input i into the temp tables. */
static tsr_status load_input(sqlite3 *h, int i, const char *path, const char *out, char *msg,
                             size_t cap) {
  char uri[PATH_MAX * 3 + 32];
  if (tsr__tune_db_uri(path, "mode=ro", uri, sizeof uri))
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "tune --merge: %s: path too long", path);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h, "ATTACH ?1 AS src", -1, &s, NULL))
    return fail_sql(h, msg, cap, out, "attach");
  sqlite3_bind_text(s, 1, uri, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE)
    return tsr__failbuf(msg, cap, TSR_ERR_DB, "tune --merge: %s: unreadable: %s", path,
                        sqlite3_errmsg(h));
  int v = 0;
  tsr_status st = TSR_OK;
  if (schema_version(h, "src", &v)) {
    st = tsr__failbuf(msg, cap, TSR_ERR_DB, "tune --merge: %s: unreadable: %s", path,
                      sqlite3_errmsg(h));
  } else {
    char sql[4096];
    /* a v2 run is a plain run: no provenance, the whole space; before v4
     * a run's compiling ahead was not recorded */
    snprintf(sql, sizeof sql,
             "INSERT INTO temp.r_all(src, id, " RUNS_V4 ") SELECT %d, id, %s FROM src.runs;"
             "INSERT INTO temp.c_all(src, run_id, " CANDS ") SELECT %d, run_id, " CANDS
             " FROM src.candidates;"
             "INSERT INTO temp.t_all(src, " TUNED ") SELECT %d, " TUNED " FROM src.tuned;",
             i,
             v >= 4   ? RUNS_V4
             : v == 3 ? RUNS_V3 NO_PREFETCH
                      : RUNS_V2 ", NULL, NULL, NULL, 0, 1, id" NO_PREFETCH,
             i, i);
    if (sqlite3_exec(h, sql, NULL, NULL, NULL))
      st = tsr__failbuf(msg, cap, TSR_ERR_DB, "tune --merge: %s: cannot read: %s", path,
                        sqlite3_errmsg(h));
  }
  sqlite3_exec(h, "DETACH src", NULL, NULL, NULL);
  return st;
}

/* The merged tables from the temp tables: runs renumbered 1.. in the order
 * of their identity, each run's candidates from the copy kept, and per key
 * the best tuned entry by TSR__TUNE_BETTER's order (time, plan), then the
 * run it came from. */
static const char merge_sql[] =
    "CREATE TEMP TABLE r_new AS SELECT " RUN_IDENTITY
    ", row_number() OVER (ORDER BY " RUN_IDENTITY ") AS new_id FROM (SELECT DISTINCT " RUN_IDENTITY
    " FROM temp.r_all);"
    /* every copy of a run maps to its new id; the kept copy: finished first */
    "CREATE TEMP TABLE r_map AS SELECT a.src, a.id, n.new_id, row_number() OVER (PARTITION BY "
    "n.new_id ORDER BY a.status = 'done' DESC, a.finished DESC, a.src) AS copy FROM temp.r_all a "
    "JOIN temp.r_new n ON a.started IS n.started AND a.host IS n.host AND a.rank IS n.rank AND "
    "a.origin_id IS n.origin_id AND a.device IS n.device AND a.arch IS n.arch AND a.driver IS "
    "n.driver AND a.nvrtc IS n.nvrtc AND a.tessera_version IS n.tessera_version AND a.backend IS "
    "n.backend AND a.m IS n.m AND a.n IS n.n AND a.k IS n.k AND a.op_a IS n.op_a AND a.op_b IS "
    "n.op_b AND a.batch IS n.batch AND a.precision IS n.precision AND a.block IS n.block AND "
    "a.nblocks IS n.nblocks AND a.ranks IS n.ranks AND a.max_candidates IS n.max_candidates AND "
    "a.max_seconds IS n.max_seconds AND a.command IS n.command;"
    "INSERT INTO main.runs(id, " RUNS_V4 ") SELECT m.new_id, " RUNS_V4
    " FROM temp.r_all a JOIN temp.r_map m ON m.src = a.src AND m.id = a.id WHERE m.copy = 1 "
    "ORDER BY m.new_id;"
    "INSERT INTO main.candidates(run_id, " CANDS ") SELECT m.new_id, " CANDS
    " FROM temp.c_all c JOIN temp.r_map m ON m.src = c.src AND m.id = c.run_id WHERE m.copy = 1 "
    "ORDER BY m.new_id, c.ordinal;"
    /* an entry whose run is in no input (a v1 migration's) keeps no run id */
    "CREATE TEMP TABLE t_rank AS SELECT t.*, m.new_id AS new_run, row_number() OVER (PARTITION "
    "BY " KEYS " ORDER BY t.time_ns IS NULL, t.time_ns, t.plan, m.new_id IS NULL, m.new_id, "
    "t.decision, t.updated, t.source_sha256, t.tie_set) AS pos FROM temp.t_all t LEFT JOIN "
    "temp.r_map m ON m.src = t.src AND m.id = t.run_id;"
    "INSERT INTO main.tuned(" TUNED ") SELECT " KEYS
    ", plan, source_sha256, decision, time_ns, incumbent_plan, incumbent_ns, ratio_median, "
    "ratio_min, ratio_max, tie_set, new_run, updated FROM temp.t_rank WHERE pos = 1 ORDER BY " KEYS
    ";"
    "INSERT INTO main.meta VALUES('merged', 'yes');";

/* Same file (device and inode), for "out is one of the inputs". */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int fsync_path(const char *path, int dir) {
  int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

tsr_status tsr__tune_db_settle(const char *out, char *msg, size_t cap) {
  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(out, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL);
  if (!rc) {
    sqlite3_busy_timeout(h, 30000);
    rc = sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", NULL,
                      NULL, NULL);
  }
  tsr_status st = TSR_OK;
  if (rc)
    st = tsr__failbuf(msg, cap, TSR_ERR_DB, "tuning database %s: cannot fold its journal in: %s",
                      out, h ? sqlite3_errmsg(h) : "out of memory");
  sqlite3_close(h);
  return st;
}

tsr_status tsr__tune_db_merge(const char *out, const char *const *in, int nin, char *msg,
                              size_t cap) {
  if (cap) msg[0] = '\0';
  if (!out || !*out) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "tune --merge: no output path");
  if (nin < 1)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "tune --merge: %s: no input database", out);
  /* Every input checked as a tessera tuning database before any write. */
  int out_is_input = 0;
  tsr_status st0;
  for (int i = 0; i < nin; i++) {
    tsr__tune_db *db = NULL;
    char m2[1400];
    tsr_status st = tsr__tune_db_open(in[i], 0, &db, m2, sizeof m2);
    tsr__tune_db_close(db);
    if (st) return tsr__failbuf(msg, cap, st, "tune --merge: input %s", m2);
    out_is_input |= same_file(out, in[i]);
  }
  struct stat sb;
  if (!out_is_input && stat(out, &sb) == 0)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID,
                        "tune --merge: %s exists and is not one of the inputs; it is never "
                        "replaced (name it as an input to merge into it)",
                        out);
  st0 = out_is_input ? tsr__tune_db_settle(out, msg, cap) : TSR_OK;
  if (st0) return st0;
  /* SQLite would apply a journal left beside out to the new file */
  char side[PATH_MAX + 16];
  if (tsr__tune_db_busy_side(out, side, sizeof side))
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID,
                        "tune --merge: %s exists (a writer is using %s, or crashed); not "
                        "replacing it",
                        side, out);
  char dir[PATH_MAX], tmp[PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s", out);
  char *slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
  else snprintf(dir, sizeof dir, ".");
  int n = snprintf(tmp, sizeof tmp, "%s.merge.%ld.tmp", out, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "tune --merge: %s: path too long", out);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return tsr__failbuf(msg, cap, TSR_ERR_IO, "tune --merge: cannot create %s: %s", tmp,
                        strerror(errno));
  close(fd);
  sqlite3 *h = NULL;
  tsr_status st = TSR_OK;
  if (sqlite3_open_v2(tmp, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX,
                      NULL)) {
    st = fail_sql(h, msg, cap, out, "open");
    goto done;
  }
  sqlite3_busy_timeout(h, 30000);
  char head[256];
  snprintf(head, sizeof head,
           "PRAGMA synchronous=FULL; PRAGMA temp_store=MEMORY; BEGIN; PRAGMA user_version=%d;",
           TSR__TUNE_SCHEMA_VERSION);
  if (sqlite3_exec(h, head, NULL, NULL, NULL) ||
      sqlite3_exec(h, tsr__tune_schema_sql(), NULL, NULL, NULL) ||
      sqlite3_exec(h,
                   "CREATE TEMP TABLE r_all(src, id, " RUNS_V4 ");"
                   "CREATE TEMP TABLE c_all(src, run_id, " CANDS ");"
                   "CREATE TEMP TABLE t_all(src, " TUNED ");",
                   NULL, NULL, NULL)) {
    st = fail_sql(h, msg, cap, out, "create schema");
    goto done;
  }
  /* ATTACH cannot run inside a transaction: the inputs are read first, into
   * temp tables, and the main database written in one transaction after. */
  sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
  for (int i = 0; i < nin && !st; i++) st = load_input(h, i, in[i], out, msg, cap);
  if (st) goto done;
  if (sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) || sqlite3_exec(h, merge_sql, NULL, NULL, NULL) ||
      sqlite3_exec(h, "COMMIT", NULL, NULL, NULL)) {
    st = fail_sql(h, msg, cap, out, "merge");
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    goto done;
  }
  int v = 0;
  if (schema_version(h, "main", &v) || v != TSR__TUNE_SCHEMA_VERSION) {
    st = fail_sql(h, msg, cap, out, "schema version");
    goto done;
  }
done:
  if (h && sqlite3_close(h) != SQLITE_OK && !st) st = fail_sql(NULL, msg, cap, out, "close");
  if (!st && (fsync_path(tmp, 0) || rename(tmp, out) || fsync_path(dir, 1)))
    st = tsr__failbuf(msg, cap, TSR_ERR_IO, "tune --merge: cannot write %s: %s", out,
                      strerror(errno));
  if (st) unlink(tmp);
  return st;
}
