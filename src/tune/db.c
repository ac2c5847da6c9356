/* The SQLite tuning database (schema in docs/tune.md).
 *
 * Concurrency: WAL journal, busy_timeout, every write inside BEGIN IMMEDIATE
 * so two tuners on one file serialize instead of failing or corrupting it.
 * Safety: a file that is not a tessera tuning database (garbage, another
 * application's database, a newer schema) is refused and never written;
 * read-only opens (the runtime lookup) never write at all. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "core/context.h"
#include "sys/file.h"
#include "tune/tune.h"

struct tsr__tune_db {
  sqlite3 *h;
  int writable;
  int version; /* schema version of the file (read-only opens also accept 2 and 3) */
  char path[1024];
};

#define BUSY_MS 30000

int tsr__tune_db_default_path(char *buf, size_t cap) {
  const char *env = getenv("TESSERA_TUNE_DB");
  if (env && !strcmp(env, "off")) {
    if (cap) buf[0] = '\0';
    return 1;
  }
  int n;
  if (env && *env) n = snprintf(buf, cap, "%s", env);
  else {
    char dir[4096];
    if (tsr__cache_dir(NULL, dir, sizeof dir)) return -1;
    n = snprintf(buf, cap, "%s/tune.db", dir);
  }
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

void *tsr__tune_db_handle(tsr__tune_db *db) { return db ? db->h : NULL; }

void tsr__tune_db_close(tsr__tune_db *db) {
  if (!db) return;
  sqlite3_close_v2(db->h);
  free(db);
}

/* ---- schema ------------------------------------------------------------- */
/* Columns of the key, in order, shared by runs and tuned. */
#define KEY_COLS                                                                        \
  "device TEXT NOT NULL, arch TEXT NOT NULL, driver TEXT NOT NULL, nvrtc TEXT NOT NULL, " \
  "tessera_version TEXT NOT NULL, backend TEXT NOT NULL, m INTEGER NOT NULL, "          \
  "n INTEGER NOT NULL, k INTEGER NOT NULL, op_a TEXT NOT NULL, op_b TEXT NOT NULL, "     \
  "batch INTEGER NOT NULL, precision TEXT NOT NULL"
#define KEY_NAMES \
  "device, arch, driver, nvrtc, tessera_version, backend, m, n, k, op_a, op_b, batch, precision"

/* v3 = v2 plus the provenance of each run (host, rank of ranks: MPI rank or
 * shard; NULL for a plain run), its candidate block, and origin_id, the
 * run's id in the file that measured it (kept through merges, which
 * renumber runs). */
#define RUNS_V3_COLS \
  ", host TEXT, rank INTEGER, ranks INTEGER, block INTEGER NOT NULL DEFAULT 0, " \
  "nblocks INTEGER NOT NULL DEFAULT 1, origin_id INTEGER"
/* v4 = v3 plus what compiling ahead did in the run's search (prefetch.c,
 * tsr__tune_prefetch_stats; the summary's `prefetch` line): the compile
 * threads started (0: off), the compiles dispatched and how many of them a
 * thread compiled, found in the on-disk cache or failed; the measured
 * candidates whose compile was ready, waited for (and the seconds waited)
 * or not done ahead; the compiles never measured; the seconds joining the
 * threads. NULL: not recorded (a run from before v4, or one that never
 * finished). */
#define RUNS_V4_COLS                                                                         \
  ", prefetch_threads INTEGER, prefetch_dispatched INTEGER, prefetch_compiled INTEGER, "    \
  "prefetch_found_on_disk INTEGER, prefetch_failed INTEGER, prefetch_measured_ready "       \
  "INTEGER, prefetch_measured_after_wait INTEGER, prefetch_wait_seconds REAL, "             \
  "prefetch_measured_not_precompiled INTEGER, prefetch_unused INTEGER, "                    \
  "prefetch_join_seconds REAL"
static const char schema_v4[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, " KEY_COLS
    ", started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL, max_candidates INTEGER, "
    "max_seconds REAL, space_size INTEGER, planner_rejected INTEGER, measured INTEGER, "
    "rejected INTEGER, unmeasured INTEGER, oracle_seconds REAL, search_seconds REAL, "
    "replay_seconds REAL, total_seconds REAL, incumbent_plan TEXT, best_plan TEXT, "
    "decision TEXT, replay TEXT, tie_set TEXT, command TEXT" RUNS_V3_COLS RUNS_V4_COLS ");"
    "CREATE TABLE candidates(run_id INTEGER NOT NULL REFERENCES runs(id), ordinal INTEGER NOT "
    "NULL, plan TEXT NOT NULL, realized TEXT, role TEXT NOT NULL, prior REAL, status TEXT NOT "
    "NULL, reason TEXT, source_sha256 TEXT, regs INTEGER, local_bytes INTEGER, time_ns REAL, "
    "samples_ns TEXT, calls INTEGER, seconds REAL, PRIMARY KEY(run_id, ordinal));"
    "CREATE TABLE tuned(" KEY_COLS
    ", plan TEXT NOT NULL, source_sha256 TEXT, decision TEXT NOT NULL, time_ns REAL, "
    "incumbent_plan TEXT, incumbent_ns REAL, ratio_median REAL, ratio_min REAL, ratio_max "
    "REAL, tie_set TEXT, run_id INTEGER, updated TEXT NOT NULL, PRIMARY KEY(" KEY_NAMES "));";

const char *tsr__tune_schema_sql(void) { return schema_v4; }

/* v2 → v3: the new run columns appended (a v2 run is a plain run). */
static const char migrate_v2_v3[] =
    "ALTER TABLE runs ADD COLUMN host TEXT;"
    "ALTER TABLE runs ADD COLUMN rank INTEGER;"
    "ALTER TABLE runs ADD COLUMN ranks INTEGER;"
    "ALTER TABLE runs ADD COLUMN block INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE runs ADD COLUMN nblocks INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE runs ADD COLUMN origin_id INTEGER;"
    "UPDATE runs SET origin_id = id;";

/* v3 → v4: the prefetch columns appended, NULL for the runs already there
 * (their compiling ahead was not recorded). */
static const char migrate_v3_v4[] =
    "ALTER TABLE runs ADD COLUMN prefetch_threads INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_dispatched INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_compiled INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_found_on_disk INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_failed INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_measured_ready INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_measured_after_wait INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_wait_seconds REAL;"
    "ALTER TABLE runs ADD COLUMN prefetch_measured_not_precompiled INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_unused INTEGER;"
    "ALTER TABLE runs ADD COLUMN prefetch_join_seconds REAL;";

/* v1 (the first prototype's single table) → the current schema. Old rows
 * keep their plan and time; unknown key parts become '' / 'v1', op N/N,
 * batch 1, fp32, and decision 'migrated-v1' (never matched by the lookup,
 * listed by --show). */
static const char migrate_v1[] =
    "ALTER TABLE tuned RENAME TO tuned_v1;"
    "%s"
    "INSERT INTO tuned(" KEY_NAMES
    ", plan, decision, time_ns, updated) SELECT device, '', '', '', 'v1', backend, m, n, k, "
    "'N', 'N', 1, 'fp32', plan, 'migrated-v1', time_ns, COALESCE(created, '') FROM tuned_v1;"
    "DROP TABLE tuned_v1;"
    "INSERT OR REPLACE INTO meta VALUES('migrated_from', '1');";

static void utc_now(char *buf, size_t cap) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static tsr_status db_fail(sqlite3 *h, char *msg, size_t cap, const char *path, const char *what) {
  return tsr__failbuf(msg, cap, TSR_ERR_DB, "tuning database %s: %s: %s", path, what,
                      h ? sqlite3_errmsg(h) : "out of memory");
}

static int exec_sql(sqlite3 *h, const char *sql) {
  return sqlite3_exec(h, sql, NULL, NULL, NULL);
}

/* Ends a write transaction: COMMIT when rc is 0, else (or when the commit
 * fails) ROLLBACK and the error, named by `what`. */
static tsr_status end_tx(sqlite3 *h, int rc, char *msg, size_t cap, const char *path,
                         const char *what) {
  if (!rc && !exec_sql(h, "COMMIT")) return TSR_OK;
  tsr_status st = db_fail(h, msg, cap, path, what);
  exec_sql(h, "ROLLBACK");
  return st;
}

/* The first column of the first row of a one-value query. */
static int query_int(sqlite3 *h, const char *sql, int *out) {
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(h, sql, -1, &s, NULL);
  if (rc) return rc;
  rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    *out = sqlite3_column_int(s, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(s);
  return rc;
}

static int table_count(sqlite3 *h, int *n) {
  return query_int(h, "SELECT count(*) FROM sqlite_master", n);
}

static int user_version(sqlite3 *h, int *v) { return query_int(h, "PRAGMA user_version", v); }

/* user_version and the object count from one read snapshot: read as two
 * autocommit statements, a concurrent creator committing in between gives
 * "version 0 with tables", which looks like a foreign file. */
static int read_header(sqlite3 *h, int *v, int *ntab) {
  int rc = exec_sql(h, "BEGIN");
  if (rc) return rc;
  /* on failure the transaction stays open so sqlite3_errmsg still names the
   * cause; the caller closes the handle, which rolls it back */
  if ((rc = user_version(h, v)) || (rc = table_count(h, ntab))) return rc;
  return exec_sql(h, "COMMIT");
}

static int has_table(sqlite3 *h, const char *name) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &s,
                         NULL))
    return 0;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  int r = sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return r;
}

/* mkdir -p of the folder that holds path. */
static int make_parent_dirs(const char *path) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path) return 0;
  if ((size_t)(slash - path) >= sizeof dir) return -1;
  memcpy(dir, path, (size_t)(slash - path));
  dir[slash - path] = '\0';
  return tsr__mkdirs(dir) ? -1 : 0;
}

/* Brings a writable database to the current schema inside one IMMEDIATE
 * transaction (a concurrent tuner waits on the lock, then sees the work done). */
static tsr_status ensure_schema(tsr__tune_db *db, char *msg, size_t cap) {
  sqlite3 *h = db->h;
  if (exec_sql(h, "BEGIN IMMEDIATE")) return db_fail(h, msg, cap, db->path, "lock");
  int v = 0, ntab = 0;
  tsr_status st = TSR_OK;
  if (user_version(h, &v) || table_count(h, &ntab)) {
    st = db_fail(h, msg, cap, db->path, "read schema");
  } else if (v == TSR__TUNE_SCHEMA_VERSION) {
    /* current */
  } else if (v == 0 && ntab == 0) {
    char sql[4096];
    snprintf(sql, sizeof sql, "%sPRAGMA user_version=%d;", schema_v4, TSR__TUNE_SCHEMA_VERSION);
    if (exec_sql(h, sql)) st = db_fail(h, msg, cap, db->path, "create schema");
    else {
      char now[32], ins[128];
      utc_now(now, sizeof now);
      snprintf(ins, sizeof ins, "INSERT INTO meta VALUES('created', '%s')", now);
      if (exec_sql(h, ins)) st = db_fail(h, msg, cap, db->path, "create schema");
    }
  } else if (v == 1 && has_table(h, "tuned")) {
    char *sql = malloc(sizeof migrate_v1 + sizeof schema_v4 + 64);
    if (!sql) st = tsr__failbuf(msg, cap, TSR_ERR_NOMEM, "tuning database: out of memory");
    else {
      /* meta is new since v2: no collision with the v1 file's tables */
      sprintf(sql, migrate_v1, schema_v4);
      char tail[64];
      snprintf(tail, sizeof tail, "PRAGMA user_version=%d;", TSR__TUNE_SCHEMA_VERSION);
      strcat(sql, tail);
      if (exec_sql(h, sql)) st = db_fail(h, msg, cap, db->path, "migrate schema v1 to v4");
      free(sql);
    }
  } else if ((v == 2 || v == 3) && has_table(h, "runs")) {
    /* each step's columns in order, then where the file came from */
    char sql[sizeof migrate_v2_v3 + sizeof migrate_v3_v4 + 128], what[40];
    snprintf(sql, sizeof sql,
             "%s%sINSERT OR REPLACE INTO meta VALUES('migrated_from', '%d');"
             "PRAGMA user_version=%d;",
             v == 2 ? migrate_v2_v3 : "", migrate_v3_v4, v, TSR__TUNE_SCHEMA_VERSION);
    snprintf(what, sizeof what, "migrate schema v%d to v%d", v, TSR__TUNE_SCHEMA_VERSION);
    if (exec_sql(h, sql)) st = db_fail(h, msg, cap, db->path, what);
  } else if (v > TSR__TUNE_SCHEMA_VERSION) {
    st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                      "tuning database %s: schema version %d is newer than this tessera's %d; "
                      "left untouched (use --db to choose another file)",
                      db->path, v, TSR__TUNE_SCHEMA_VERSION);
  } else {
    st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                      "tuning database %s: not a tessera tuning database (user_version %d, %d "
                      "schema objects); left untouched (use --db to choose another file)",
                      db->path, v, ntab);
  }
  if (st) {
    exec_sql(h, "ROLLBACK");
    return st;
  }
  return end_tx(h, 0, msg, cap, db->path, "commit schema");
}

/* SQLite's answer when a connection could not create or write what it
 * needs: the file, or the -wal / -shm files beside it (a read-only folder). */
static int cannot_write(int rc) {
  rc &= 0xff;
  return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN || rc == SQLITE_PERM;
}

/* A non-empty PATH-wal or PATH-journal (changes only a writer can merge):
 * 1 with its name in side, else 0. */
int tsr__tune_db_busy_side(const char *path, char *side, size_t cap) {
  static const char *const sides[] = {"-wal", "-journal"};
  struct stat sb;
  for (int i = 0; i < 2; i++) {
    snprintf(side, cap, "%s%s", path, sides[i]);
    if (stat(side, &sb) == 0 && sb.st_size > 0) return 1;
  }
  return 0;
}

/* "file:PATH?QUERY" with PATH percent-encoded except for unreserved
 * characters and '/' (an SQLite URI). 0, or -1 when it does not fit. */
int tsr__tune_db_uri(const char *path, const char *query, char *buf, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = (size_t)snprintf(buf, cap, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("/-._~", *p);
    if (n + 4 >= cap) return -1;
    if (plain) buf[n++] = (char)*p;
    else {
      buf[n++] = '%';
      buf[n++] = hex[*p >> 4];
      buf[n++] = hex[*p & 15];
    }
  }
  int w = snprintf(buf + n, cap - n, "?%s", query);
  return w > 0 && (size_t)w < cap - n ? 0 : -1;
}

/* A read-only open of a WAL database needs its -shm file, created beside it
 * when missing; in a read-only folder (or for a user who cannot write the
 * file's side files) that fails. The file is then read as immutable: no
 * locks, no -shm, the -wal and any rollback journal ignored, which is right
 * only when they hold nothing, so a non-empty one refuses instead. Leaves
 * db->h open with the header read, or returns the refusal. */
static tsr_status open_immutable(tsr__tune_db *db, int *v, int *ntab, char *msg, size_t cap) {
  const char *path = db->path;
  char side[1100], uri[3200];
  if (tsr__tune_db_busy_side(path, side, sizeof side))
    return tsr__failbuf(msg, cap, TSR_ERR_DB,
                        "tuning database %s: unreadable (read-only here, and %s holds changes "
                        "that only a writer can merge); the file was left untouched",
                        path, side);
  if (tsr__tune_db_uri(path, "immutable=1", uri, sizeof uri))
    return tsr__failbuf(msg, cap, TSR_ERR_DB, "tuning database %s: path too long", path);
  int rc = sqlite3_open_v2(uri, &db->h,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, NULL);
  if (!rc) rc = read_header(db->h, v, ntab);
  if (rc)
    return tsr__failbuf(msg, cap, TSR_ERR_DB,
                        "tuning database %s: unreadable (%s); the file was left untouched", path,
                        db->h ? sqlite3_errmsg(db->h) : "out of memory");
  return TSR_OK;
}

/* On success msg is empty, or (read-only opens) holds a note for the user:
 * the file could only be opened as an unchanging file (open_immutable). */
tsr_status tsr__tune_db_open(const char *path, int writable, tsr__tune_db **out, char *msg,
                             size_t cap) {
  *out = NULL;
  if (cap) msg[0] = '\0';
  if (!path || !*path) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "tuning database: no path");
  struct stat sb;
  int exists = stat(path, &sb) == 0;
  if (!writable && !exists)
    return tsr__failbuf(msg, cap, TSR_ERR_IO, "tuning database %s: does not exist", path);
  if (exists && !S_ISREG(sb.st_mode))
    return tsr__failbuf(msg, cap, TSR_ERR_DB, "tuning database %s: not a regular file", path);
  if (writable && !exists && make_parent_dirs(path))
    return tsr__failbuf(msg, cap, TSR_ERR_IO, "tuning database %s: cannot create its folder: %s",
                        path, strerror(errno));
  tsr__tune_db *db = calloc(1, sizeof *db);
  if (!db) return tsr__failbuf(msg, cap, TSR_ERR_NOMEM, "tuning database: out of memory");
  snprintf(db->path, sizeof db->path, "%s", path);
  db->writable = writable;
  int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  int rc = sqlite3_open_v2(path, &db->h, flags | SQLITE_OPEN_FULLMUTEX, NULL);
  tsr_status st = TSR_OK;
  if (rc) {
    st = db_fail(db->h, msg, cap, path, "open");
    goto fail;
  }
  sqlite3_busy_timeout(db->h, BUSY_MS);
  /* A file the user cannot write is opened read-only by SQLite: say so
   * before any write fails with a less direct message. */
  if (writable && sqlite3_db_readonly(db->h, "main") == 1) {
    st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                      "tuning database %s: read-only (no write permission on the file); the "
                      "file was left untouched (use --db to choose another file)",
                      path);
    goto fail;
  }
  /* Read the header before anything else: garbage fails here (SQLITE_NOTADB)
   * and nothing has been written. */
  int v = 0, ntab = 0;
  int immutable = 0;
  if ((rc = read_header(db->h, &v, &ntab))) {
    if (cannot_write(sqlite3_extended_errcode(db->h))) {
      if (writable) {
        st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                          "tuning database %s: cannot be written here (%s; its folder must be "
                          "writable for the -wal and -shm files); the file was left untouched "
                          "(use --db to choose another file)",
                          path, sqlite3_errmsg(db->h));
        goto fail;
      }
      sqlite3_close_v2(db->h);
      db->h = NULL;
      if ((st = open_immutable(db, &v, &ntab, msg, cap))) goto fail;
      immutable = 1;
    } else {
      st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                        "tuning database %s: unreadable (%s); the file was left untouched", path,
                        sqlite3_errmsg(db->h));
      goto fail;
    }
  }
  if (!writable) {
    /* v2 and v3 differ only by runs columns (v3 added the provenance, v4
     * the prefetch counts): lookups, --show and --merge read them as they
     * are (a writer migrates them). */
    if (v != TSR__TUNE_SCHEMA_VERSION && v != 2 && v != 3) {
      st = tsr__failbuf(msg, cap, TSR_ERR_DB,
                        v == 1 ? "tuning database %s: schema version %d is older than %d "
                                 "(`tessera tune` migrates it)"
                               : "tuning database %s: schema version %d is not %d",
                        path, v, TSR__TUNE_SCHEMA_VERSION);
      goto fail;
    }
    db->version = v;
    if (immutable)
      snprintf(msg, cap,
               "tuning database %s is read-only here (its -shm file cannot be created); its "
               "plans are used read-only, and `tessera tune` cannot update it",
               path);
    *out = db;
    return TSR_OK;
  }
  /* Refuse foreign files before switching the journal mode (which writes). */
  if (!(v == 0 && ntab == 0) && !(v == 1 && has_table(db->h, "tuned")) &&
      !((v == 2 || v == 3) && has_table(db->h, "runs")) && v != TSR__TUNE_SCHEMA_VERSION) {
    /* ensure_schema re-reads under the write lock: it produces the precise
     * refusal, or succeeds when a concurrent tuner finished creating it. */
    if ((st = ensure_schema(db, msg, cap))) goto fail;
  }
  {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "PRAGMA journal_mode=WAL", -1, &s, NULL) == SQLITE_OK) {
      sqlite3_step(s);
      sqlite3_finalize(s);
    }
    exec_sql(db->h, "PRAGMA synchronous=NORMAL");
  }
  if ((st = ensure_schema(db, msg, cap))) goto fail;
  db->version = TSR__TUNE_SCHEMA_VERSION;
  *out = db;
  return TSR_OK;
fail:
  sqlite3_close_v2(db->h);
  free(db);
  return st;
}

/* ---- writes ------------------------------------------------------------ */
static void bind_key(sqlite3_stmt *s, int first, const tsr__tune_target *t, const tsr_problem *p) {
  sqlite3_bind_text(s, first + 0, t->device, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, first + 1, t->arch, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, first + 2, t->driver, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, first + 3, t->nvrtc, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, first + 4, t->version, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, first + 5, t->backend, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, first + 6, p->m);
  sqlite3_bind_int64(s, first + 7, p->n);
  sqlite3_bind_int64(s, first + 8, p->k);
  sqlite3_bind_text(s, first + 9, p->op_a == TSR_OP_T ? "T" : "N", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, first + 10, p->op_b == TSR_OP_T ? "T" : "N", -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, first + 11, p->batch);
  /* the requested mode ("auto" included): entries from before the accuracy
   * contract say "fp32" and never match */
  sqlite3_bind_text(s, first + 12, tsr_precision_name(p->precision), -1, SQLITE_STATIC);
}

static void bind_real(sqlite3_stmt *s, int i, double v) {
  if (isfinite(v)) sqlite3_bind_double(s, i, v);
  else sqlite3_bind_null(s, i);
}

tsr_status tsr__tune_db_begin_run(tsr__tune_db *db, const tsr__tune_target *t,
                                  const tsr__tune_config *cfg, const char *started,
                                  int64_t *run_id, char *msg, size_t cap) {
  sqlite3 *h = db->h;
  if (exec_sql(h, "BEGIN IMMEDIATE")) return db_fail(h, msg, cap, db->path, "lock");
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(
      h,
      "INSERT INTO runs(" KEY_NAMES ", started, status, max_candidates, max_seconds, command, "
      "host, rank, ranks, block, nblocks) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
      -1, &s, NULL);
  if (rc == SQLITE_OK) {
    bind_key(s, 1, t, &cfg->problem);
    sqlite3_bind_text(s, 14, started, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 15, cfg->max_candidates);
    sqlite3_bind_double(s, 16, cfg->max_seconds);
    sqlite3_bind_text(s, 17, cfg->command ? cfg->command : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 18, cfg->host ? cfg->host : "", -1, SQLITE_TRANSIENT);
    if (cfg->rank >= 0) {
      sqlite3_bind_int(s, 19, cfg->rank);
      sqlite3_bind_int(s, 20, cfg->ranks);
    }
    sqlite3_bind_int(s, 21, cfg->nblocks > 1 ? cfg->block : 0);
    sqlite3_bind_int(s, 22, cfg->nblocks > 1 ? cfg->nblocks : 1);
    rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(s);
  }
  if (rc == SQLITE_OK) {
    *run_id = sqlite3_last_insert_rowid(h);
    char sql[96];
    snprintf(sql, sizeof sql, "UPDATE runs SET origin_id=id WHERE id=%lld", (long long)*run_id);
    rc = exec_sql(h, sql);
  }
  return end_tx(h, rc, msg, cap, db->path, "insert run");
}

tsr_status tsr__tune_db_add_candidates(tsr__tune_db *db, int64_t run_id, const tsr__tune_cand *c,
                                       const size_t *idx, size_t n, char *msg, size_t cap) {
  sqlite3 *h = db->h;
  if (!n) return TSR_OK;
  if (exec_sql(h, "BEGIN IMMEDIATE")) return db_fail(h, msg, cap, db->path, "lock");
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(h,
                              "INSERT OR REPLACE INTO candidates(run_id, ordinal, plan, realized, "
                              "role, prior, status, reason, source_sha256, regs, local_bytes, "
                              "time_ns, samples_ns, calls, seconds) "
                              "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                              -1, &s, NULL);
  for (size_t j = 0; rc == SQLITE_OK && j < n; j++) {
    const tsr__tune_cand *x = &c[idx[j]];
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)idx[j]);
    sqlite3_bind_text(s, 3, x->text, -1, SQLITE_TRANSIENT);
    if (x->realized[0]) sqlite3_bind_text(s, 4, x->realized, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 5, tsr__cand_role_name(x->role), -1, SQLITE_STATIC);
    bind_real(s, 6, x->prior);
    sqlite3_bind_text(s, 7, tsr__cand_status_name(x->status), -1, SQLITE_STATIC);
    if (x->reason[0]) sqlite3_bind_text(s, 8, x->reason, -1, SQLITE_TRANSIENT);
    if (x->sha256[0]) sqlite3_bind_text(s, 9, x->sha256, -1, SQLITE_TRANSIENT);
    if (x->regs >= 0) sqlite3_bind_int(s, 10, x->regs);
    if (x->local_bytes >= 0) sqlite3_bind_int(s, 11, x->local_bytes);
    if (x->status == TSR__CAND_OK) {
      bind_real(s, 12, x->time_ns);
      json_t *a = json_array();
      for (int i = 0; i < x->nsamples; i++) json_array_append_new(a, json_real(x->samples_ns[i]));
      char *txt = json_dumps(a, JSON_COMPACT);
      json_decref(a);
      if (txt) sqlite3_bind_text(s, 13, txt, -1, SQLITE_TRANSIENT);
      free(txt);
      sqlite3_bind_int(s, 14, x->calls);
    }
    bind_real(s, 15, x->seconds);
    if (sqlite3_step(s) != SQLITE_DONE) rc = SQLITE_ERROR;
  }
  sqlite3_finalize(s);
  return end_tx(h, rc, msg, cap, db->path, "insert candidates");
}

static char *tie_json(const tsr__tune_result *r) {
  json_t *a = json_array();
  for (size_t i = 0; i < r->ntie; i++) {
    const tsr__tune_cand *c = &r->cands[r->tie[i]];
    json_array_append_new(a, json_pack("{s:s, s:f}", "plan", c->text, "time_ns",
                                       isfinite(c->time_ns) ? c->time_ns : -1.0));
  }
  char *t = json_dumps(a, JSON_COMPACT);
  json_decref(a);
  return t;
}

static char *replay_json(const tsr__tune_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "rounds", json_integer(r->rounds));
  json_object_set_new(o, "replayed", json_boolean(r->replayed));
  json_object_set_new(o, "in_process", json_boolean(r->replay_in_process));
  json_t *rows = json_array();
  for (int i = 0; i < r->rounds && r->replayed; i++) {
    json_t *ord = json_array();
    for (int j = 0; j < 2; j++)
      json_array_append_new(ord, json_string(r->order[i][j] ? "best" : "incumbent"));
    json_array_append_new(rows, json_pack("{s:o, s:f, s:f, s:f}", "order", ord, "incumbent_ns",
                                          isfinite(r->inc_ns[i]) ? r->inc_ns[i] : -1.0,
                                          "best_ns", isfinite(r->best_ns[i]) ? r->best_ns[i] : -1.0,
                                          "ratio", isfinite(r->ratio[i]) ? r->ratio[i] : -1.0));
  }
  json_object_set_new(o, "per_round", rows);
  if (r->replay_note[0]) json_object_set_new(o, "note", json_string(r->replay_note));
  char *t = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return t;
}

tsr_status tsr__tune_db_finish_run(tsr__tune_db *db, const tsr__tune_target *t,
                                   const tsr__tune_config *cfg, const tsr__tune_result *r,
                                   char *msg, size_t cap) {
  sqlite3 *h = db->h;
  if (exec_sql(h, "BEGIN IMMEDIATE")) return db_fail(h, msg, cap, db->path, "lock");
  char *tie = tie_json(r), *rep = replay_json(r);
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(
      h,
      "UPDATE runs SET finished=?, status='done', space_size=?, planner_rejected=?, measured=?, "
      "rejected=?, unmeasured=?, oracle_seconds=?, search_seconds=?, replay_seconds=?, "
      "total_seconds=?, incumbent_plan=?, best_plan=?, decision=?, replay=?, tie_set=?, "
      "prefetch_threads=?, prefetch_dispatched=?, prefetch_compiled=?, prefetch_found_on_disk=?, "
      "prefetch_failed=?, prefetch_measured_ready=?, prefetch_measured_after_wait=?, "
      "prefetch_wait_seconds=?, prefetch_measured_not_precompiled=?, prefetch_unused=?, "
      "prefetch_join_seconds=? WHERE id=?",
      -1, &s, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(s, 1, r->finished, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)r->n);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)r->planner_rejected);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)r->measured);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)r->rejected);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)r->unmeasured);
    bind_real(s, 7, r->oracle_s);
    bind_real(s, 8, r->search_s);
    bind_real(s, 9, r->replay_s);
    bind_real(s, 10, r->total_s);
    if (r->incumbent >= 0) sqlite3_bind_text(s, 11, r->cands[r->incumbent].text, -1, SQLITE_TRANSIENT);
    if (r->best >= 0) sqlite3_bind_text(s, 12, r->cands[r->best].text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 13, r->decision, -1, SQLITE_TRANSIENT);
    if (rep) sqlite3_bind_text(s, 14, rep, -1, SQLITE_TRANSIENT);
    if (tie) sqlite3_bind_text(s, 15, tie, -1, SQLITE_TRANSIENT);
    /* the counts of the summary's prefetch line (all zero but
     * not-precompiled when nothing was compiled ahead) */
    const tsr__tune_prefetch_stats *pf = &r->prefetch;
    sqlite3_bind_int(s, 16, pf->threads);
    sqlite3_bind_int64(s, 17, (sqlite3_int64)pf->dispatched);
    sqlite3_bind_int64(s, 18, (sqlite3_int64)pf->compiled);
    sqlite3_bind_int64(s, 19, (sqlite3_int64)pf->found_on_disk);
    sqlite3_bind_int64(s, 20, (sqlite3_int64)pf->failed);
    sqlite3_bind_int64(s, 21, (sqlite3_int64)pf->measured_ready);
    sqlite3_bind_int64(s, 22, (sqlite3_int64)pf->measured_after_wait);
    bind_real(s, 23, pf->seconds_waited);
    sqlite3_bind_int64(s, 24, (sqlite3_int64)pf->measured_not_precompiled);
    sqlite3_bind_int64(s, 25, (sqlite3_int64)pf->unused);
    bind_real(s, 26, pf->seconds_join);
    sqlite3_bind_int64(s, 27, r->run_id);
    rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(s);
  }
  /* The tuned entry: only when something valid was chosen. */
  if (rc == SQLITE_OK && r->chosen >= 0) {
    const tsr__tune_cand *ch = &r->cands[r->chosen];
    const tsr__tune_cand *inc = r->incumbent >= 0 ? &r->cands[r->incumbent] : NULL;
    /* A scale-out run (several candidate blocks of one key may land in
     * this file) keeps the better entry by the merge rule: the faster
     * stored time, ties by plan text. */
    static const char insert_sql[] =
        "INSERT INTO tuned(" KEY_NAMES
        ", plan, source_sha256, decision, time_ns, incumbent_plan, incumbent_ns, ratio_median, "
        "ratio_min, ratio_max, tie_set, run_id, updated) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    static const char upsert_tail[] =
        " ON CONFLICT(" KEY_NAMES
        ") DO UPDATE SET plan=excluded.plan, source_sha256=excluded.source_sha256, "
        "decision=excluded.decision, time_ns=excluded.time_ns, "
        "incumbent_plan=excluded.incumbent_plan, incumbent_ns=excluded.incumbent_ns, "
        "ratio_median=excluded.ratio_median, ratio_min=excluded.ratio_min, "
        "ratio_max=excluded.ratio_max, tie_set=excluded.tie_set, run_id=excluded.run_id, "
        "updated=excluded.updated WHERE " TSR__TUNE_BETTER("excluded", "tuned");
    char sql[sizeof insert_sql + sizeof upsert_tail + 32];
    if (cfg->rank >= 0) snprintf(sql, sizeof sql, "%s%s", insert_sql, upsert_tail);
    else snprintf(sql, sizeof sql, "INSERT OR REPLACE%s", insert_sql + strlen("INSERT"));
    rc = sqlite3_prepare_v2(h, sql, -1, &s, NULL);
    if (rc == SQLITE_OK) {
      bind_key(s, 1, t, &cfg->problem);
      sqlite3_bind_text(s, 14, ch->realized[0] ? ch->realized : ch->text, -1, SQLITE_TRANSIENT);
      if (ch->sha256[0]) sqlite3_bind_text(s, 15, ch->sha256, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(s, 16, r->decision, -1, SQLITE_TRANSIENT);
      double chosen_ns = r->replayed ? tsr__tune_replay_median(r, r->accepted) : ch->time_ns;
      bind_real(s, 17, chosen_ns);
      if (inc) sqlite3_bind_text(s, 18, inc->text, -1, SQLITE_TRANSIENT);
      bind_real(s, 19, r->replayed ? tsr__tune_replay_median(r, 0) : inc ? inc->time_ns : NAN);
      bind_real(s, 20, r->replayed ? r->ratio_median : NAN);
      bind_real(s, 21, r->replayed ? r->ratio_min : NAN);
      bind_real(s, 22, r->replayed ? r->ratio_max : NAN);
      if (tie) sqlite3_bind_text(s, 23, tie, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 24, r->run_id);
      sqlite3_bind_text(s, 25, r->finished, -1, SQLITE_TRANSIENT);
      rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
      sqlite3_finalize(s);
    }
  }
  free(tie);
  free(rep);
  return end_tx(h, rc, msg, cap, db->path, "store result");
}

int tsr__tune_db_item_done(tsr__tune_db *db, const tsr__tune_target *t, const tsr_problem *p,
                           int block, int nblocks, char *msg, size_t cap) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT 1 FROM runs WHERE device=?1 AND arch=?2 AND driver=?3 AND "
                         "nvrtc=?4 AND tessera_version=?5 AND backend=?6 AND m=?7 AND n=?8 AND "
                         "k=?9 AND op_a=?10 AND op_b=?11 AND batch=?12 AND precision=?13 AND "
                         "status='done' AND block=?14 AND nblocks=?15 LIMIT 1",
                         -1, &s, NULL)) {
    snprintf(msg, cap, "tuning database %s: %s", db->path, sqlite3_errmsg(db->h));
    return -1;
  }
  bind_key(s, 1, t, p);
  sqlite3_bind_int(s, 14, nblocks > 1 ? block : 0);
  sqlite3_bind_int(s, 15, nblocks > 1 ? nblocks : 1);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc == SQLITE_ROW) return 1;
  if (rc == SQLITE_DONE) return 0;
  snprintf(msg, cap, "tuning database %s: %s", db->path, sqlite3_errmsg(db->h));
  return -1;
}

/* ---- lookup ------------------------------------------------------------ */
void tsr__tune_stored_problem(const tsr_problem *p, int64_t m, int64_t n, int64_t k,
                              tsr_problem *q) {
  tsr_problem_init(q, m, n, k);
  q->op_a = p->op_a, q->op_b = p->op_b, q->batch = p->batch, q->precision = p->precision;
  q->alpha = p->alpha, q->beta = p->beta;
}

/* The planner class of a stored shape (tsr__tune_stored_problem). */
static const char *stored_class(const char *(*plan_class)(const tsr_problem *), const tsr_problem *p,
                                int64_t m, int64_t n, int64_t k) {
  tsr_problem q;
  tsr__tune_stored_problem(p, m, n, k, &q);
  char qmsg[256];
  return tsr_problem_check(&q, qmsg, sizeof qmsg) == TSR_OK ? plan_class(&q) : NULL;
}

int tsr__tune_db_lookup(tsr__tune_db *db, const tsr__tune_target *t, const tsr_problem *p,
                        const char *(*plan_class)(const tsr_problem *),
                        int (*check)(void *arg, const tsr_plan *plan, int pass, int64_t m,
                                     int64_t n, int64_t k),
                        void *arg, tsr_plan *out, char *source, size_t cap, char *msg,
                        size_t msgcap, FILE *explain) {
  sqlite3 *h = db->h;
  sqlite3_stmt *s;
  /* Exact: the whole key. Nearest: the key without m, n, k, accepted
   * winners only, each axis within one octave; closest first by the sum of
   * |log2| distances, then the most recent. */
  static const char exact_sql[] =
      "SELECT plan, decision, m, n, k FROM tuned WHERE device=?1 AND arch=?2 AND driver=?3 AND "
      "nvrtc=?4 AND tessera_version=?5 AND backend=?6 AND m=?7 AND n=?8 AND k=?9 AND op_a=?10 "
      "AND op_b=?11 AND batch=?12 AND precision=?13";
  static const char near_sql[] =
      "SELECT plan, decision, m, n, k FROM tuned WHERE device=?1 AND arch=?2 AND driver=?3 AND "
      "nvrtc=?4 AND tessera_version=?5 AND backend=?6 AND op_a=?10 AND op_b=?11 AND batch=?12 "
      "AND precision=?13 AND decision='winner' AND m*2>=?7 AND m<=?7*2 AND n*2>=?8 AND n<=?8*2 "
      "AND k*2>=?9 AND k<=?9*2 AND NOT (m=?7 AND n=?8 AND k=?9) ORDER BY updated DESC";
  /* Class: the key without m, n, k, accepted winners of the same planner
   * class at any distance; closest first, then the most recent. */
  static const char class_sql[] =
      "SELECT plan, decision, m, n, k FROM tuned WHERE device=?1 AND arch=?2 AND driver=?3 AND "
      "nvrtc=?4 AND tessera_version=?5 AND backend=?6 AND op_a=?10 AND op_b=?11 AND batch=?12 "
      "AND precision=?13 AND decision='winner' AND NOT (m=?7 AND n=?8 AND k=?9) "
      "ORDER BY updated DESC";
  const char *cls = plan_class ? plan_class(p) : NULL;
  static const char *const sql[] = {exact_sql, near_sql, class_sql};
  static const char *const pass_names[] = {
      "exact: this problem's own entry",
      "nearest bucket: winners of the same ops, batch and precision within one octave on "
      "every axis, nearest first (sum of |log2| distances)",
      "class: winners of the same ops, batch and precision whose shape falls in the asked "
      "one's planner class"};
  for (int pass = 0; pass < (cls ? 3 : 2); pass++) {
    if (sqlite3_prepare_v2(h, sql[pass], -1, &s, NULL)) {
      snprintf(msg, msgcap, "tuning database %s: %s", db->path, sqlite3_errmsg(h));
      return -1;
    }
    bind_key(s, 1, t, p);
    if (explain)
      fprintf(explain, "  %s%s%s%s\n", pass_names[pass], pass == 2 ? " (" : "",
              pass == 2 ? cls : "", pass == 2 ? ") and depth (K/sqrt(MN) within 4x)" : "");
    double best_d = INFINITY;
    int found = 0, rc, rows = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const char *txt = (const char *)sqlite3_column_text(s, 0);
      const char *dec = (const char *)sqlite3_column_text(s, 1);
      int64_t m = sqlite3_column_int64(s, 2), n = sqlite3_column_int64(s, 3),
              k = sqlite3_column_int64(s, 4);
      double d = fabs(log2((double)m / p->m)) + fabs(log2((double)n / p->n)) +
                 fabs(log2((double)k / p->k));
      rows++;
      if (explain)
        fprintf(explain, "    %lldx%lldx%lld, %s, distance %.2f: ", (long long)m, (long long)n,
                (long long)k, dec ? dec : "?", d);
      if (pass && d >= best_d) { /* ties keep the most recent (ORDER BY) */
        if (explain) fputs("not nearer than the one already taken\n", explain);
        continue;
      }
      if (pass == 2) {
        const char *sc = stored_class(plan_class, p, m, n, k);
        if (!sc || strcmp(sc, cls)) {
          if (explain) fprintf(explain, "class %s\n", sc ? sc : "(none)");
          continue;
        }
        /* and the same depth, K over sqrt(M N), within a factor 4: 256^3's
         * winner (no split-K) served to 128x128x16384 ran 12.6x that
         * shape's default time on the H200 (session 6, held-back replay) */
        double depth = log2((double)k / p->k) - 0.5 * log2((double)m * n / ((double)p->m * p->n));
        if (fabs(depth) > 2.0) {
          if (explain)
            fprintf(explain, "depth (K/sqrt(MN)) %.3g, the asked one's %.3g: more than 4x apart\n",
                    (double)k / sqrt((double)m * n), (double)p->k / sqrt((double)p->m * p->n));
          continue;
        }
      }
      tsr_plan pl = *out;
      char pmsg[256];
      if (!txt || tsr_plan_parse(txt, &pl, pmsg, sizeof pmsg)) {
        if (explain) fprintf(explain, "plan text unreadable (%s)\n", txt ? pmsg : "none");
        continue;
      }
      if (check && !check(arg, &pl, pass, m, n, k)) continue; /* check explains itself */
      if (!check && explain) fputs("taken\n", explain);
      *out = pl;
      found = 1;
      best_d = d;
      if (!pass)
        snprintf(source, cap, "%s", dec && strcmp(dec, "winner") ? "tuned (exact, incumbent kept)"
                                                                 : "tuned (exact)");
      else if (pass == 1)
        snprintf(source, cap, "tuned (nearest %lldx%lldx%lld)", (long long)m, (long long)n,
                 (long long)k);
      else
        snprintf(source, cap, "tuned (class %s, from %lldx%lldx%lld)", cls, (long long)m,
                 (long long)n, (long long)k);
      if (!pass) break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      snprintf(msg, msgcap, "tuning database %s: %s", db->path, sqlite3_errmsg(h));
      sqlite3_finalize(s);
      return -1;
    }
    sqlite3_finalize(s);
    if (explain && !rows) fputs("    (no entry)\n", explain);
    if (found) {
      if (explain) fprintf(explain, "  served: %s\n", source);
      return 1;
    }
  }
  return 0;
}

/* ---- show -------------------------------------------------------------- */
int tsr__tune_db_show(tsr__tune_db *db, FILE *f, int json, char *msg, size_t cap) {
  sqlite3 *h = db->h;
  sqlite3_stmt *s;
  char integrity[256] = "?";
  if (sqlite3_prepare_v2(h, "PRAGMA quick_check", -1, &s, NULL) == SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW)
      snprintf(integrity, sizeof integrity, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
  }
  /* Each entry with the provenance of the run that measured it (a v2 file
   * has none: NULLs). Ordered by the whole key, so equal databases list
   * equally. */
  const int v3 = db->version >= 3;
  const char *tuned_sql =
      v3 ? "SELECT t.device, t.arch, t.driver, t.nvrtc, t.tessera_version, t.backend, t.m, t.n, "
           "t.k, t.op_a, t.op_b, t.batch, t.precision, t.decision, t.plan, t.time_ns, "
           "t.incumbent_ns, t.ratio_median, t.ratio_min, t.ratio_max, t.run_id, t.updated, "
           "t.tie_set, r.host, r.rank, r.ranks, r.block, r.nblocks FROM tuned t LEFT JOIN runs r "
           "ON r.id = t.run_id ORDER BY t.backend, t.device, t.m, t.n, t.k, t.op_a, t.op_b, "
           "t.batch, t.precision, t.arch, t.driver, t.nvrtc, t.tessera_version"
         : "SELECT device, arch, driver, nvrtc, tessera_version, backend, m, n, k, op_a, op_b, "
           "batch, precision, decision, plan, time_ns, incumbent_ns, ratio_median, ratio_min, "
           "ratio_max, run_id, updated, tie_set, NULL, NULL, NULL, NULL, NULL FROM tuned ORDER "
           "BY backend, device, m, n, k, op_a, op_b, batch, precision, arch, driver, nvrtc, "
           "tessera_version";
  /* Runs with their provenance (NULL before v3) and prefetch counts (NULL
   * before v4). */
  char runs_sql[1024];
  snprintf(runs_sql, sizeof runs_sql,
           "SELECT id, backend, m, n, k, op_a, op_b, batch, started, status, measured, rejected, "
           "planner_rejected, unmeasured, search_seconds, total_seconds, max_candidates, "
           "max_seconds, decision, %s, precision, %s FROM runs ORDER BY id",
           v3 ? "host, rank, ranks, block, nblocks" : "NULL, NULL, NULL, NULL, NULL",
           db->version >= 4
               ? "prefetch_threads, prefetch_dispatched, prefetch_compiled, "
                 "prefetch_found_on_disk, prefetch_failed, prefetch_measured_ready, "
                 "prefetch_measured_after_wait, prefetch_wait_seconds, "
                 "prefetch_measured_not_precompiled, prefetch_unused, prefetch_join_seconds"
               : "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL");
  json_t *root = json ? json_object() : NULL;
  json_t *jt = json ? json_array() : NULL, *jr = json ? json_array() : NULL;
  if (!json) fprintf(f, "database  %s (schema v%d, integrity %s)\n", db->path, db->version,
                     integrity);
  if (sqlite3_prepare_v2(h, tuned_sql, -1, &s, NULL)) goto fail;
  if (!json) fprintf(f, "\ntuned entries:\n");
  int count = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    count++;
    const char *c[28];
    for (int i = 0; i < 28; i++) c[i] = (const char *)sqlite3_column_text(s, i);
    if (json) {
      json_t *o = json_object();
      static const char *const names[] = {
          "device", "arch", "driver", "nvrtc", "tessera_version", "backend", "m", "n", "k",
          "op_a", "op_b", "batch", "precision", "decision", "plan", "time_ns", "incumbent_ns",
          "ratio_median", "ratio_min", "ratio_max", "run_id", "updated", "tie_set", "host",
          "rank", "ranks", "block", "nblocks"};
      for (int i = 0; i < 28; i++) {
        int ty = sqlite3_column_type(s, i);
        json_t *v = ty == SQLITE_NULL     ? json_null()
                    : ty == SQLITE_INTEGER ? json_integer(sqlite3_column_int64(s, i))
                    : ty == SQLITE_FLOAT   ? json_real(sqlite3_column_double(s, i))
                                           : json_string(c[i]);
        if (i == 22 && c[i]) {
          json_decref(v);
          v = json_loads(c[i], 0, NULL);
          if (!v) v = json_string(c[i]);
        }
        json_object_set_new(o, names[i], v);
      }
      json_array_append_new(jt, o);
    } else {
      fprintf(f, "  %s %sx%sx%s op %s%s batch %s %s | %s %s %s | tessera %s\n", c[5], c[6], c[7],
              c[8], c[9], c[10], c[11], c[12], c[0], c[1], c[2][0] ? c[2] : "", c[4]);
      fprintf(f, "    %s: %s\n", c[13], c[14]);
      double d[5];
      for (int i = 0; i < 5; i++)
        d[i] = sqlite3_column_type(s, 15 + i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 15 + i);
      fprintf(f, "    %.3f us (incumbent %.3f us), paired ratio best/incumbent median %.4f "
                 "[%.4f, %.4f], run %s, %s\n",
              d[0] / 1e3, d[1] / 1e3, d[2], d[3], d[4], c[20] ? c[20] : "-", c[21] ? c[21] : "-");
      if (c[22]) fprintf(f, "    tie set: %s\n", c[22]);
      if (c[23] || c[24]) {
        char rank[64] = "a single process";
        if (c[24]) snprintf(rank, sizeof rank, "rank %s of %s", c[24], c[25] ? c[25] : "?");
        char block[64] = "";
        if (c[27] && strcmp(c[27], "1"))
          snprintf(block, sizeof block, ", candidate block %s of %s", c[26] ? c[26] : "?", c[27]);
        fprintf(f, "    measured on %s, %s%s\n", c[23] && c[23][0] ? c[23] : "(unknown host)",
                rank, block);
      }
    }
  }
  sqlite3_finalize(s);
  if (!json && !count) fprintf(f, "  (none)\n");
  if (sqlite3_prepare_v2(h, runs_sql, -1, &s, NULL)) goto fail;
  if (!json) fprintf(f, "\nruns:\n");
  count = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    count++;
    enum { NCOL = 36 };
    const char *c[NCOL];
    for (int i = 0; i < NCOL; i++) c[i] = (const char *)sqlite3_column_text(s, i);
#define S(i) (c[i] ? c[i] : "-")
    if (json) {
      static const char *const names[NCOL] = {
          "id", "backend", "m", "n", "k", "op_a", "op_b", "batch", "started", "status",
          "measured", "rejected", "planner_rejected", "unmeasured", "search_seconds",
          "total_seconds", "max_candidates", "max_seconds", "decision", "host", "rank",
          "ranks", "block", "nblocks", "precision", "prefetch_threads", "prefetch_dispatched",
          "prefetch_compiled", "prefetch_found_on_disk", "prefetch_failed",
          "prefetch_measured_ready", "prefetch_measured_after_wait", "prefetch_wait_seconds",
          "prefetch_measured_not_precompiled", "prefetch_unused", "prefetch_join_seconds"};
      json_t *o = json_object();
      for (int i = 0; i < NCOL; i++) {
        int ty = sqlite3_column_type(s, i);
        json_object_set_new(o, names[i],
                            ty == SQLITE_NULL      ? json_null()
                            : ty == SQLITE_INTEGER ? json_integer(sqlite3_column_int64(s, i))
                            : ty == SQLITE_FLOAT   ? json_real(sqlite3_column_double(s, i))
                                                   : json_string(c[i]));
      }
      json_array_append_new(jr, o);
    } else {
      char sec[2][32];
      for (int i = 0; i < 2; i++)
        snprintf(sec[i], sizeof sec[i], "%.1f", sqlite3_column_double(s, 14 + i));
      char where[160] = "";
      if (c[19] && c[19][0])
        snprintf(where, sizeof where, " on %s%s%s%s%s", c[19], c[20] ? ", rank " : "",
                 c[20] ? c[20] : "", c[20] ? " of " : "", c[20] ? S(21) : "");
      char block[64] = "";
      if (c[23] && strcmp(c[23], "1"))
        snprintf(block, sizeof block, ", block %s of %s", S(22), c[23]);
      fprintf(f,
              "  #%s %s %sx%sx%s op %s%s batch %s %s%s%s, %s %s: measured %s, rejected %s (+%s "
              "by the planner), unmeasured %s; search %s s of %s s total (budget %s candidates, "
              "%s s): %s\n",
              S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(24), block, where, S(8), S(9),
              S(10), S(11), S(12), S(13), sec[0], sec[1], S(16), S(17), S(18));
      /* compiling ahead, as the tune's summary printed it (runs with no
       * compile thread, or from before v4, show nothing) */
      if (sqlite3_column_type(s, 25) != SQLITE_NULL && sqlite3_column_int(s, 25) > 0)
        fprintf(f,
                "      prefetch %s compile threads: %s dispatched, %s compiled, %s found on disk, "
                "%s failed; measured %s ready, %s after a wait (%.1f s), %s not precompiled; %s "
                "unused; join %.1f s\n",
                S(25), S(26), S(27), S(28), S(29), S(30), S(31), sqlite3_column_double(s, 32),
                S(33), S(34), sqlite3_column_double(s, 35));
    }
#undef S
  }
  sqlite3_finalize(s);
  if (!json && !count) fprintf(f, "  (none)\n");
  if (json) {
    json_object_set_new(root, "database", json_string(db->path));
    json_object_set_new(root, "schema_version", json_integer(db->version));
    json_object_set_new(root, "integrity", json_string(integrity));
    json_object_set_new(root, "tuned", jt);
    json_object_set_new(root, "runs", jr);
    json_dumpf(root, f, JSON_INDENT(2));
    fputc('\n', f);
    json_decref(root);
  }
  return 0;
fail:
  snprintf(msg, cap, "tuning database %s: %s", db->path, sqlite3_errmsg(h));
  json_decref(root);
  json_decref(jt);
  json_decref(jr);
  return -1;
}
