/* The tuner (docs/tune.md): the joint search space of a backend's plans,
 * the measured search under budgets, the balanced paired replay of the
 * winner against the incumbent, and the SQLite tuning database with the
 * lookup the runtime uses (tsr_plan_lookup / tsr_plan_default). */
#ifndef TSR_TUNE_TUNE_H
#define TSR_TUNE_TUNE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/measure.h"
#include "tessera.h"

#define TSR__TUNE_SCHEMA_VERSION 4
#define TSR__TUNE_MAX_ROUNDS 16
/* Host memory held by one NVRTC compile in flight (compiling ahead), a bound
 * over the measured 54-124 MiB (src/tune/search.c, tsr__tune_check). */
#define TSR__TUNE_COMPILE_BYTES (128.0 * 1024 * 1024)
#define TSR__TUNE_MAX_SAMPLES 32
#define TSR__TUNE_PLAN_CAP 256

/* ---- target key (target.c) ---------------------------------------------- */
/* What a tuned plan is valid for, besides the problem signature. CPU:
 * device = CPU model + " (N cores)", arch = best micro-kernel ISA, driver and
 * nvrtc empty. CUDA: device name, "sm_XY", driver and NVRTC versions. */
typedef struct {
  char device[192];
  char arch[32];
  char driver[32];
  char nvrtc[32];
  char version[32]; /* tessera version */
  char backend[16];
} tsr__tune_target;

/* The key as one line: "backend, device, arch[, driver D][, nvrtc N], tessera V"
 * (tessera plan --explain, tessera tune --loo). */
void tsr__tune_target_format(const tsr__tune_target *t, char *buf, size_t cap);
/* b must be resolved (cpu or cuda). */
tsr_status tsr__tune_target_get(tsr_context *ctx, tsr_backend_kind b, tsr__tune_target *t);

/* ---- database (db.c) ----------------------------------------------------- */
typedef struct tsr__tune_db tsr__tune_db;

/* The database path: env TESSERA_TUNE_DB ("off" disables: returns 1 and
 * leaves buf ""), else ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tune.db.
 * Returns 0 when a path was written, 1 when off, -1 when no path can be
 * formed (no HOME). */
int tsr__tune_db_default_path(char *buf, size_t cap);

/* Opens the database. writable: creates it (and its folder) when missing,
 * migrates an older schema, sets WAL mode. Read-only: never writes the file;
 * a missing file is TSR_ERR_IO, an older/newer schema or a file that is not
 * a database is TSR_ERR_DB; msg says why. A file that is not a tessera
 * tuning database is never modified. */
tsr_status tsr__tune_db_open(const char *path, int writable, tsr__tune_db **out, char *msg,
                             size_t cap);
void tsr__tune_db_close(tsr__tune_db *db); /* NULL is a no-op */
/* The raw sqlite3 handle (tests, --show). */
void *tsr__tune_db_handle(tsr__tune_db *db);

/* "file:PATH?QUERY": PATH as an SQLite URI (percent-encoded), e.g. query
 * "mode=ro" or "immutable=1". 0, or -1 when it does not fit in cap. */
int tsr__tune_db_uri(const char *path, const char *query, char *buf, size_t cap);
/* A non-empty PATH-wal or PATH-journal: 1 with its name in side, else 0. */
int tsr__tune_db_busy_side(const char *path, char *side, size_t cap);

/* Lookup of a plan for (target, problem): exact signature, else the nearest
 * accepted winner within one octave on every axis, else (plan_class given)
 * the nearest accepted winner of the same planner class at any distance
 * (docs/tune.md). Returns 1 with *out and source ("tuned (exact)", "tuned
 * (nearest MxNxK)", "tuned (class C, from MxNxK)"), 0 when nothing
 * matches, -1 on a database error (msg). check(plan, pass, m, n, k) is
 * consulted for each candidate row (m, n, k: the row's stored extents), pass
 * 0 exact, 1 nearest, 2 class (the lookup's is tsr__tune_serve_ok); rows it
 * refuses are skipped. explain (not NULL): every pass and every row it
 * considers with what decided it; check then prints its own verdict and
 * newline for the rows it is given. */
int tsr__tune_db_lookup(tsr__tune_db *db, const tsr__tune_target *t, const tsr_problem *p,
                        const char *(*plan_class)(const tsr_problem *),
                        int (*check)(void *arg, const tsr_plan *plan, int pass, int64_t m,
                                     int64_t n, int64_t k),
                        void *arg, tsr_plan *out, char *source, size_t cap, char *msg,
                        size_t msgcap, FILE *explain);
/* tsr_plan_lookup, printing to explain every step it takes: the database and
 * target key, each pass, each entry considered and the rule that took or
 * refused it (tessera plan --explain). Never reads or fills the lookup memo. */
tsr_status tsr__plan_lookup_explain(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                                    tsr_plan *out, char *source, size_t cap, FILE *explain);
/* The plan the lookup's nearest and class passes serve p from db's entries
 * for target t other than p's own (its exact entry left out), under the
 * lookup's rules: 1 with *out (p's default parsed under it) and source, 0
 * when none, -1 on a database error (msg). The leave-one-out (loo.c) and
 * the tuner's neighbour candidate. */
int tsr__tune_lookup_unseen(tsr_context *ctx, tsr__tune_db *db, const tsr__tune_target *t,
                            tsr_backend_kind b, const tsr_problem *p, tsr_plan *out,
                            char *source, size_t cap, char *msg, size_t msgcap);
/* A row's stored shape as a problem: p's kind (ops, batch, precision,
 * alpha, beta) with the extents m x n x k, compact (leading dimensions and
 * batch strides tight). */
void tsr__tune_stored_problem(const tsr_problem *p, int64_t m, int64_t n, int64_t k,
                              tsr_problem *q);
/* Whether a winner tuned on m x n x k (p's ops, batch and precision) may be
 * served to p by the nearest or the class pass: the planner accepts it on
 * both shapes, and on p it has a partial tile along no axis where it had none
 * on the stored shape (its tuned measurement never ran the tail code it
 * would run here). On the H100 (sessions 28 and 32) the nearest pass, then
 * with this rule there the class pass (medium), served 1024^3's winner (no
 * pack: whole tiles there) to 1000^3, where its copies guard every axis'
 * tail, and it ran 1.112, 1.122 and 1.118x the default's time (the default
 * packs both operands); on the H200 (session 13) another 1024^3 winner ran
 * 0.929 there: the rule refuses both. */
int tsr__tune_tails_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, int64_t m, int64_t n, int64_t k);
/* Whether a winner tuned on m x n x k that splits K (split-K > 1) may be
 * served to p by the nearest or the class pass: only where it tiles p's
 * output in the same grid of tiles as the stored shape's (a split-K count is
 * tuned for that grid's fill and that K). On the H100 (session 33) the
 * nearest pass served 64x64x8192's winner (32x64 tiles, 128 slices; 0.939 of
 * its default there) to the held-back 128x128x16384 (4x2 tiles against 2x1):
 * 1.177 and 1.149x the default's time; of three such transfers screened on
 * training shapes two lost 20 and 57 % (one won 2.4 %), and keeping the
 * tuned program count instead of the split-K count won back only part
 * (scripts/device/s33-transfer.txt). Plans without split-K: 1. */
int tsr__tune_split_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, int64_t m, int64_t n, int64_t k);
/* The lookup's test of a database row tuned on m x n x k for p (def: p's
 * built-in default): pass 0 (exact) the planner accepts it on p; pass 1
 * (nearest) tsr__tune_tails_ok, tsr__tune_split_ok and the family rule (def
 * of the family, GEMV or tile, of the stored shape's default; session 39: the
 * 8-row GEMV winners ran 2.0-2.4x the 16-row NT tiles' time); pass 2 (class)
 * those and tsr__tune_transfer_ok. */
int tsr__tune_serve_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, const tsr_plan *def, int pass, int64_t m, int64_t n,
                       int64_t k);
/* Whether a plan tuned on another shape may be served to p (the class
 * pass): the planner accepts it on p, its grid gives work to no fewer of the
 * GPU's SMs than the built-in default def's does (tsr__tune_sm_fill), and the
 * tuner's prior does not predict it slower there than def. On the H200
 * (session 10) the class pass served 16384x64x4096's winner (128x128, 128
 * tiles) to 1000^3 and 64x4096x4096, where it filled half and a quarter of
 * the SMs and ran 2.98x and 3.70x the default's time; in session 28 it served
 * 512x4096x11008 NT's winner (no split-K) to 64x11008x4096 NT: 86 programs on
 * 132 SMs against the default's 258 (split-K 3), 1.94x the default's time,
 * which the prior rated no slower than the default. */
int tsr__tune_transfer_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                          const tsr_plan *plan, const tsr_plan *def);

/* SQL condition: tuned row x is better than tuned row y under the merge
 * rule (a stored time beats none, then the faster time, then the smaller
 * plan text). */
#define TSR__TUNE_BETTER(x, y)                                                             \
  "(" x ".time_ns IS NOT NULL AND (" y ".time_ns IS NULL OR " x ".time_ns < " y ".time_ns" \
  " OR (" x ".time_ns = " y ".time_ns AND " x ".plan < " y ".plan)))"

/* 1 when the database holds a finished run (status done) of this key and
 * candidate block, 0 when not, -1 on a database error (msg): the resume
 * rule of scale-out runs (docs/tune.md). */
int tsr__tune_db_item_done(tsr__tune_db *db, const tsr__tune_target *t, const tsr_problem *p,
                           int block, int nblocks, char *msg, size_t cap);

/* Merges tuning databases (merge.c): out is written from scratch (a
 * temporary file beside it, renamed over it at the end); the inputs are
 * opened read-only and never modified. out may be one of the inputs; an
 * existing out that is not an input is refused. Runs and their candidates
 * are kept (renumbered in a deterministic order, duplicates of one run
 * kept once); per key the tuned entry with the best stored time wins (ties:
 * plan text, then the run's provenance). The result does not depend on the
 * order of the inputs. TSR_ERR_INVALID / TSR_ERR_DB / TSR_ERR_IO with msg
 * naming the file. */
tsr_status tsr__tune_db_merge(const char *out, const char *const *in, int nin, char *msg,
                              size_t cap);
/* Folds a database's WAL into its file and sets the rollback journal
 * (DELETE), so the file alone holds everything (to copy it, or to replace
 * it without a stale -wal beside the new file). Writes the file. */
tsr_status tsr__tune_db_settle(const char *path, char *msg, size_t cap);
/* The current schema's CREATE statements (db.c; merge.c builds with it). */
const char *tsr__tune_schema_sql(void);

/* Lists runs and tuned entries (text, or JSON when json). 0 on success. */
int tsr__tune_db_show(tsr__tune_db *db, FILE *f, int json, char *msg, size_t cap);

/* Leave-one-out over db (loo.c, tessera tune --loo): each cpu or cuda
 * entry's shape looked up as unseen under the entry's own target key — the
 * nearest and class passes over the other entries with the lookup's rules
 * (tsr__tune_serve_ok) — one line each on out, then a summary; a served
 * plan is priced by the entry's tune document (tune_*.json in dirs, the
 * latest "finished" per problem) where its search measured that plan: time
 * over the incumbent's. TSR_ERR_IO / TSR_ERR_INVALID name the folder or
 * document, TSR_ERR_DB the database. */
typedef struct {
  int entries, served, measured, slower;
  double geomean, worst; /* of the measured ratios (1 and 0 when none) */
  char worst_shape[96];
} tsr__tune_loo_summary;
tsr_status tsr__tune_loo(tsr_context *ctx, tsr__tune_db *db, const char *const *dirs, int ndirs,
                         FILE *out, tsr__tune_loo_summary *sum);

/* Clears the process-wide lookup memo (tests). */
void tsr__tune_lookup_reset(void);

/* ---- candidates and results ------------------------------------------- */
typedef enum {
  TSR__CAND_UNMEASURED = 0, /* planner-legal, not reached within the budget */
  TSR__CAND_OK,             /* validated and timed */
  TSR__CAND_REJ_PLANNER,    /* tsr_plan_realize refused it */
  TSR__CAND_REJ_COMPILE,    /* backend prepare (emit/NVRTC/load/limits) failed */
  TSR__CAND_REJ_SPILL,      /* local (spill) bytes above the tuner's limit */
  TSR__CAND_REJ_VALIDATION, /* an output element differs from the FP64 oracle */
  TSR__CAND_REJ_RUN,        /* launch/sync/download/timing failed */
  TSR__CAND_REJ_ACCURACY,   /* breaks its precision mode's contract on random inputs */
  TSR__CAND_STATUS_COUNT
} tsr__cand_status;

const char *tsr__cand_status_name(tsr__cand_status s);

/* NEIGHBOUR: the plan the lookup would serve the shape from the database's
 * other entries (tsr__tune_lookup_unseen), measured early as a candidate. */
typedef enum {
  TSR__ROLE_SEARCH = 0,
  TSR__ROLE_INCUMBENT,
  TSR__ROLE_PREVIOUS,
  TSR__ROLE_USER,
  TSR__ROLE_NEIGHBOUR
} tsr__cand_role;
const char *tsr__cand_role_name(tsr__cand_role r);

typedef struct {
  tsr_plan plan;                       /* as generated */
  char text[TSR__TUNE_PLAN_CAP];       /* tsr_plan_format(plan) */
  char realized[TSR__TUNE_PLAN_CAP];   /* realized (normalized) plan text, "" if rejected */
  tsr__cand_role role;
  double prior;                        /* estimated relative time (lower first) */
  tsr__cand_status status;
  char reason[384];
  int regs, local_bytes;
  char sha256[65];
  int nsamples, calls;
  double samples_ns[TSR__TUNE_MAX_SAMPLES]; /* per call */
  double time_ns;                      /* median per call of the samples */
  double rel_fro_err, fro_limit;       /* the accuracy receipt's (NaN: not checked) */
  double seconds;                      /* wall time spent on this candidate */
} tsr__tune_cand;

/* Space of a backend for a problem (space.c): incumbents first (the
 * built-in default, then extra plans given), then planner-legal candidates
 * in ascending prior, then planner rejections (status REJ_PLANNER with the
 * planner's reason). Duplicates (same realized plan) are dropped. */
typedef struct {
  tsr__tune_cand *cands;
  size_t n;
  size_t generated, legal, planner_rejected;
} tsr__tune_space_t;
/* At most TSR__TUNE_KEEP_LEGAL legal candidates (best prior) and
 * TSR__TUNE_KEEP_REJECTED planner rejections are kept as candidates; the
 * counts cover all of them. */
#define TSR__TUNE_KEEP_LEGAL 3000
#define TSR__TUNE_KEEP_REJECTED 400
/* The order of the search candidates (docs/tune.md "Order"): PRIOR, ascending
 * prior, a tie (PRIOR_TIE) nearest the incumbent first; INTERLEAVE, the same
 * ties taken alternately in that order and farthest first (the plan whose
 * fewest differing plan keys from every plan ordered before it are the most),
 * so a short budget also measures remote plans of the prior's estimate. */
typedef enum { TSR__ORDER_PRIOR = 0, TSR__ORDER_INTERLEAVE } tsr__tune_order;
/* Their names, in enum order, NULL-terminated (the CLI's --order, the documents'
 * space.order). */
extern const char *const tsr__tune_order_names[];
tsr_status tsr__tune_space(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           const tsr_plan *extra, const tsr__cand_role *extra_roles, int nextra,
                           tsr__tune_order order, tsr__tune_space_t *out);
/* The analytic prior of a realized plan (lower = expected faster). */
double tsr__tune_prior(tsr_backend_kind b, const tsr_problem *p, const tsr_plan_info *info);
/* The share of the GPU's SMs a plan's grid gives work to (0..1; the CPU: 1). */
double tsr__tune_sm_fill(tsr_backend_kind b, const tsr_plan_info *info);

/* Index of the fastest candidate with status OK, -1 when none. Candidates
 * of any other status never win, whatever their recorded time. */
long tsr__tune_select(const tsr__tune_cand *c, size_t n);

/* ---- measurement (search.c) ------------------------------------------- */
typedef struct {
  int samples;   /* >= 5 */
  int sample_ms; /* calls per sample fill about this */
  int warmup_ms;
  int spill_limit;  /* GPU: local bytes per thread above this reject (0: any spill) */
  int bypass_cache; /* GPU: compile from scratch */
} tsr__measure_opts;

/* Realize, prepare (compile), resource check, validation of every element
 * of w (dyadic inputs, zero tolerance), the contract of the plan's
 * precision mode on wacc (random inputs; NULL: skipped, e.g. in a replay of
 * an already checked plan), then timing through the measurement layer.
 * Fills c's status, reason, resources, samples and time. host_c is scratch
 * of tsr_problem_elems_c(p) floats. Returns TSR_OK whenever c was
 * classified. */
tsr_status tsr__tune_measure(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                             const tsr__workload *w, const tsr__workload *wacc, float *host_c,
                             const tsr__measure_opts *o, tsr__tune_cand *c);

/* ---- the whole tune --------------------------------------------------- */
typedef struct {
  tsr_backend_kind backend; /* cpu or cuda (resolved) */
  tsr_problem problem;
  long max_candidates; /* measured candidates, incumbent included; 0 = no limit */
  double max_seconds;  /* wall budget of search + replay; 0 = no limit */
  tsr__measure_opts measure;
  int rounds;              /* replay rounds, even, 2..TSR__TUNE_MAX_ROUNDS */
  const char *db_path;     /* NULL: no database */
  const char *child_exe;   /* replay children: "<exe> tune --replay-child"; NULL: in-process */
  const char *oracle_cache; /* oracle cache folder (NULL: none) */
  int accuracy;             /* input family of the contract check, -1: none */
  const tsr_plan *extra;   /* additional candidates (--plan) */
  int nextra;
  int progress;            /* progress display on stderr */
  const char *command;     /* recorded */
  double max_memory;       /* host bytes the tune may need; 0: 80% of physical memory */
  /* Candidate block b of nblocks (a scale-out work item): the search
   * candidates of prior rank j with j % nblocks == block, plus the
   * incumbent, previous and user plans, which every block measures and
   * replays against. nblocks 0 or 1: the whole space. */
  int block, nblocks;
  /* Provenance, stored with the run: the host, and the rank of ranks (MPI
   * rank or shard) of a scale-out run; rank -1: a plain run. A scale-out
   * run's tuned entry only replaces a slower one (the merge rule), a plain
   * run's replaces any. */
  const char *host;
  int rank, ranks;
  /* Background compile threads (prefetch.c): while one candidate is
   * measured, the next ones' kernels are compiled into the on-disk module
   * cache; 0: off (the default of a zeroed config; the CLI's is online
   * CPUs - 1, at most 8). Backends without a precompile slot ignore it. */
  int compile_threads;
  tsr__tune_order order; /* the search candidates' order (the zeroed config's: PRIOR) */
} tsr__tune_config;

/* ---- compiling ahead (prefetch.c) --------------------------------------- */
/* The look-ahead window: the indices of the next candidates after pos that
 * the search will measure in its order (status UNMEASURED and, with mine,
 * mine[j]), at most window of them and at most left (< 0: no limit; the
 * --max-candidates measurements left after pos), written to out (room for
 * window). Returns how many. */
size_t tsr__tune_lookahead(const tsr__tune_cand *c, const unsigned char *mine, size_t n,
                           size_t pos, size_t window, long left, size_t *out);

/* What compiling ahead did in one search (the result JSON's "prefetch").
 * Every dispatched candidate ends in exactly one of compiled, found_on_disk,
 * failed, taken_by_search (the search reached it before a thread had
 * started on it and compiled it itself) and not_started (queued when the
 * search stopped). Every measured candidate counts in exactly one of
 * measured_ready (its compile had finished when its measurement began),
 * measured_after_wait (a thread was compiling it: the search waited for
 * that compile, seconds_waited in all, which its `seconds` include) and
 * measured_not_precompiled (its own prepare compiled it, or found it in the
 * cache by itself). unused: compiled or found ahead but never measured. */
typedef struct {
  int threads;       /* threads started (0: off) */
  int window;        /* look-ahead window (2 x threads) */
  char off[160];     /* why it is off ("" when on) */
  size_t dispatched, compiled, found_on_disk, failed, taken_by_search, not_started, unused;
  size_t measured_ready, measured_after_wait, measured_not_precompiled;
  double seconds_waited; /* the search waiting for in-flight compiles */
  double seconds_join;   /* stopping: waiting for the compiles still running */
} tsr__tune_prefetch_stats;

typedef struct tsr__tune_prefetch tsr__tune_prefetch;
/* Starts `threads` compile threads for the candidates of one search (cands
 * must stay in place until stop) of backend b on p, compiling for compute
 * capability cc_major.cc_minor. Each thread has a context of its own; none
 * opens the device. Returns NULL (nothing started, stats->off says why)
 * when threads < 1, b compiles nothing ahead or no thread could start. */
tsr__tune_prefetch *tsr__tune_prefetch_start(tsr_backend_kind b, const tsr_problem *p,
                                             const tsr__tune_cand *cands, size_t n, int threads,
                                             int cc_major, int cc_minor,
                                             tsr__tune_prefetch_stats *stats);
/* Called by the search right before it measures candidate pos (left: as
 * for tsr__tune_lookahead): queues the look-ahead window after pos (those
 * not queued before), then settles pos itself: a queued compile not yet
 * started is taken back (the search compiles it), one in flight is waited
 * for. Returns the seconds waited. NULL pf: nothing, 0. */
double tsr__tune_prefetch_next(tsr__tune_prefetch *pf, const unsigned char *mine, size_t pos,
                               long left);
/* No compile starts after time t (tsr__now_ns seconds): the search starts
 * no candidate after it either. */
void tsr__tune_prefetch_deadline(tsr__tune_prefetch *pf, double t);
/* Stops: queued compiles are dropped, running ones finish, every thread is
 * joined, everything freed; the counts go to stats. NULL is a no-op. */
void tsr__tune_prefetch_stop(tsr__tune_prefetch *pf, tsr__tune_prefetch_stats *stats);

typedef struct {
  tsr__tune_cand *cands;
  size_t n;
  size_t generated;        /* raw joint product before the planner */
  size_t legal;            /* planner-legal (kept ones are in cands) */
  size_t planner_rejected; /* all planner rejections (the first ones are in cands) */
  size_t measured, rejected, unmeasured;
  size_t other_blocks; /* search candidates left to the other candidate blocks */
  long incumbent; /* index of the built-in default */
  long best;      /* search best (tsr__tune_select) */
  /* replay */
  int rounds, replayed;
  int order[TSR__TUNE_MAX_ROUNDS][2]; /* 0 = incumbent, 1 = best */
  double inc_ns[TSR__TUNE_MAX_ROUNDS], best_ns[TSR__TUNE_MAX_ROUNDS];
  double ratio[TSR__TUNE_MAX_ROUNDS]; /* best / incumbent, same round */
  double ratio_median, ratio_min, ratio_max;
  int replay_in_process;
  char replay_note[448]; /* "round R, incumbent: " + a candidate's whole reason */
  int accepted;          /* best replaced the incumbent */
  long chosen;           /* index stored as the tuned plan */
  char decision[64];     /* "winner", "incumbent (search best)", "incumbent (tie)", ... */
  double noise;          /* tie band used */
  long *tie;             /* indices of the tie set */
  size_t ntie;
  double oracle_s, search_s, replay_s, total_s;
  double reserve_s;      /* replay reserve the search kept out of max_seconds */
  int64_t run_id;        /* database row, 0 without a database */
  char started[32], finished[32];
  tsr__tune_prefetch_stats prefetch; /* compiling ahead */
} tsr__tune_result;

/* The up-front refusals, before any database, input or oracle work (also
 * the first thing tsr__tune_run does): the estimated peak host memory of
 * the tuner and one replay child over cfg->max_memory, and, with a time
 * budget, the inputs and the FP64 oracles not already in the oracle cache
 * estimated to take longer than max_seconds on their own (conservative
 * rates of measure.h: TSR__ORACLE_*_FLOPS, TSR__INPUT_ELEMS_PER_S). Returns
 * TSR_ERR_NOMEM / TSR_ERR_INVALID with the estimate in ctx's message. */
tsr_status tsr__tune_check(tsr_context *ctx, const tsr__tune_config *cfg);

/* Runs the tune. Returns TSR_OK with res filled (even when no candidate
 * was valid: then res->best < 0), or a status for a refused request (bad
 * backend, database unusable, out of memory) with the reason in ctx. */
tsr_status tsr__tune_run(tsr_context *ctx, const tsr__tune_config *cfg, tsr__tune_result *res);
void tsr__tune_result_free(tsr__tune_result *res);
/* Median over replay rounds of the best (which=1) or incumbent (0) per-call ns. */
double tsr__tune_replay_median(const tsr__tune_result *res, int which);

/* Result as JSON text (malloc'd; schema "tessera-tune/1"). */
char *tsr__tune_result_json(const tsr__tune_config *cfg, const tsr__tune_result *res);

/* The shapes of --preset seed (BRIEF §9). */
extern const char *const tsr__tune_seed_shapes[];
extern const int tsr__tune_seed_shape_count;

/* Database writes of a run (db.c). */
tsr_status tsr__tune_db_begin_run(tsr__tune_db *db, const tsr__tune_target *t,
                                  const tsr__tune_config *cfg, const char *started,
                                  int64_t *run_id, char *msg, size_t cap);
tsr_status tsr__tune_db_add_candidates(tsr__tune_db *db, int64_t run_id,
                                       const tsr__tune_cand *c, const size_t *idx, size_t n,
                                       char *msg, size_t cap);
tsr_status tsr__tune_db_finish_run(tsr__tune_db *db, const tsr__tune_target *t,
                                   const tsr__tune_config *cfg, const tsr__tune_result *res,
                                   char *msg, size_t cap);

#endif
