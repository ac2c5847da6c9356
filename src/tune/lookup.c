/* The target key of a tuned plan and the runtime lookup behind
 * tsr_plan_default: database (exact, then nearest bucket), else the
 * backend's built-in default. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/context.h"
#include "measure/exec.h"
#include "sys/assert.h"
#include "tune/tune.h"

/* ---- target ------------------------------------------------------------ */
tsr_status tsr__tune_target_get(tsr_context *ctx, tsr_backend_kind b, tsr__tune_target *t) {
  memset(t, 0, sizeof *t);
  snprintf(t->version, sizeof t->version, "%s", TSR_VERSION);
  snprintf(t->backend, sizeof t->backend, "%s", tsr_backend_name(b));
  if (b != TSR_BACKEND_CPU && b != TSR_BACKEND_CUDA)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "tune: backend %s has no tunable plans",
                     tsr_backend_name(b));
  tsr_device_info d;
  tsr_status st = tsr_backend_describe(ctx, b, &d);
  if (st) return st;
  /* The SM count belongs to the key: a MIG slice or a cut-down part of the
   * same name is another target (docs/tune.md, "Keys and invalidation"). */
  if (d.sm_count > 0) snprintf(t->device, sizeof t->device, "%.160s (%d SMs)", d.device, d.sm_count);
  else snprintf(t->device, sizeof t->device, "%s", d.device);
  snprintf(t->arch, sizeof t->arch, "%s", d.arch);
  snprintf(t->driver, sizeof t->driver, "%s", d.driver);
  snprintf(t->nvrtc, sizeof t->nvrtc, "%s", d.nvrtc);
  return TSR_OK;
}

void tsr__tune_target_format(const tsr__tune_target *t, char *buf, size_t cap) {
  snprintf(buf, cap, "%s, %s, %s%s%s%s%s, tessera %s", t->backend, t->device, t->arch,
           t->driver[0] ? ", driver " : "", t->driver, t->nvrtc[0] ? ", nvrtc " : "", t->nvrtc,
           t->version);
}

/* ---- lookup memo --------------------------------------------------------- */
/* The BLAS shim asks for a plan on every call: remember answers per
 * (database file state, target, signature). The file state is the size and
 * mtime of the database and its WAL, so a later tune is seen at once. */
typedef struct {
  int used;
  char path[1024];
  struct timespec mt, wmt;
  off_t size, wsize;
  tsr_backend_kind b;
  int64_t m, n, k, batch;
  int op_a, op_b;
  tsr_precision precision;
  int found;
  tsr_plan plan;
  char source[128];
} memo_entry;

#define MEMO_N 32
static memo_entry memo[MEMO_N];
static int memo_next;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static int warned; /* one warning per process for an unreadable database */
static int noted;  /* one note per process for a database read as unchanging */
static pthread_once_t memo_atfork_once = PTHREAD_ONCE_INIT;

/* In a child of fork a thread of the parent may have held memo_lock (gone
 * with it, the entry it was writing possibly torn): a fresh lock, and the
 * memo forgotten in that case. */
static void memo_after_fork_child(void) {
  if (pthread_mutex_trylock(&memo_lock) != 0) {
    memset(memo, 0, sizeof memo);
    memo_next = 0;
  }
  pthread_mutex_init(&memo_lock, NULL);
}

static void memo_register_atfork(void) { pthread_atfork(NULL, NULL, memo_after_fork_child); }

void tsr__tune_lookup_reset(void) {
  pthread_mutex_lock(&memo_lock);
  memset(memo, 0, sizeof memo);
  memo_next = 0;
  warned = noted = 0;
  pthread_mutex_unlock(&memo_lock);
}

static void file_state(const char *path, memo_entry *e) {
  struct stat sb;
  char wal[1100];
  e->size = e->wsize = -1;
  memset(&e->mt, 0, sizeof e->mt);
  memset(&e->wmt, 0, sizeof e->wmt);
  if (stat(path, &sb) == 0) {
    e->size = sb.st_size;
    e->mt = sb.st_mtim;
  }
  snprintf(wal, sizeof wal, "%s-wal", path);
  if (stat(wal, &sb) == 0) {
    e->wsize = sb.st_size;
    e->wmt = sb.st_mtim;
  }
}

static int memo_match(const memo_entry *a, const memo_entry *q) {
  return a->used && !strcmp(a->path, q->path) && a->size == q->size && a->wsize == q->wsize &&
         a->mt.tv_sec == q->mt.tv_sec && a->mt.tv_nsec == q->mt.tv_nsec &&
         a->wmt.tv_sec == q->wmt.tv_sec && a->wmt.tv_nsec == q->wmt.tv_nsec && a->b == q->b &&
         a->m == q->m && a->n == q->n && a->k == q->k && a->batch == q->batch &&
         a->op_a == q->op_a && a->op_b == q->op_b && a->precision == q->precision;
}

typedef struct {
  tsr_context *ctx;
  tsr_backend_kind b;
  const tsr_problem *p;
  const tsr_plan *def;
  FILE *explain; /* not NULL: print each verdict (tsr__plan_lookup_explain) */
} check_arg;

/* A verdict's reason, one line on why (tsr__plan_lookup_explain), when not NULL. */
static void say(FILE *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *why, const char *fmt, ...) {
  if (!why) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(why, fmt, ap);
  va_end(ap);
  fputc('\n', why);
}

/* The class pass's guard on a plan realized on p as info: it keeps the SMs the
 * default keeps busy (within TRANSFER_FILL_SLACK) and the prior predicts it
 * faster than the default. Session 36's leave-one-out over the H200's
 * 47-shape database (tessera tune --loo, docs/tune.md): with "fill at least
 * the default's" and "prior no slower", the class pass served five training
 * shapes plans their own tunes had measured at 1.014-1.514x their defaults'
 * time — three prior ties (1.000 predicted, 1.014-1.055 measured) and a far
 * 1-row GEMV winner to 8 rows (1.274, 1.514) served because the nearer 8-row
 * winners left 4 of 132 SMs idle (0.97). Since: those five on their
 * defaults, the two 8-row winners served each other's shapes (0.880, 0.990);
 * the H100's database: one tie (1.012) gone. The 0.65 fill of session 28's
 * 1.94x transfer (below) is still refused. */
#define TRANSFER_FILL_SLACK 0.9
static int transfer_verdict(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            const tsr_plan_info *info, const tsr_plan *def, FILE *why) {
  tsr_plan_info dinfo;
  if (!def || tsr__exec_check(ctx, b, p, def, &dinfo) != TSR_OK)
    return say(why, "fits (the default does not realize here)"), 1;
  double fill = tsr__tune_sm_fill(b, info), dfill = tsr__tune_sm_fill(b, &dinfo);
  if (fill < TRANSFER_FILL_SLACK * dfill)
    return say(why, "refused: SM fill %.2f, under %.1f of the default's %.2f", fill,
               TRANSFER_FILL_SLACK, dfill),
           0;
  double pr = tsr__tune_prior(b, p, info), dpr = tsr__tune_prior(b, p, &dinfo);
  if (pr >= dpr)
    return say(why, "refused: the prior predicts %.3fx the default's time (no gain)", pr / dpr), 0;
  return say(why, "fits (the prior predicts %.3fx the default's time)", pr / dpr), 1;
}

int tsr__tune_transfer_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                          const tsr_plan *plan, const tsr_plan *def) {
  tsr_plan_info info;
  return tsr__exec_check(ctx, b, p, plan, &info) == TSR_OK &&
         transfer_verdict(ctx, b, p, &info, def, NULL);
}

/* Whether a realized plan runs K-tail code on p. The GEMV family's K block
 * only bounds its slices (each loop stops at min(slice end, K)): its one
 * K-tail path is the k-contiguous lanes' last K % VEC values (none along a
 * strided big operand); a lane per row (lanerows) stages K blocks and guards
 * the last one, as the tiles do. Session 33: 1x4096x4096 NT's GEMV winner
 * (bk 1024) was refused for 1x4096x11008 NT on a K "tail" it has no code
 * for (session 28's H200 ran that transfer at 0.993). */
static int tail_k_code(const tsr_problem *p, const tsr_plan_info *info) {
  if (info->plan.mma == TSR_MMA_GEMV && !info->plan.lanerows)
    return info->plan.vec > 1 && p->k % info->plan.vec != 0;
  return info->tail_k;
}

/* The plan realized on p and on the stored shape m x n x k (p's ops, batch
 * and precision): 0 when the planner refuses either. */
static int realize_both(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                        const tsr_plan *plan, int64_t m, int64_t n, int64_t k, tsr_problem *q,
                        tsr_plan_info *info, tsr_plan_info *sinfo) {
  tsr__tune_stored_problem(p, m, n, k, q);
  return tsr__exec_check(ctx, b, p, plan, info) == TSR_OK &&
         tsr__exec_check(ctx, b, q, plan, sinfo) == TSR_OK;
}

static int tails_rule(const tsr_problem *p, const tsr_problem *q, const tsr_plan_info *info,
                      const tsr_plan_info *sinfo) {
  return info->tail_m <= sinfo->tail_m && info->tail_n <= sinfo->tail_n &&
         tail_k_code(p, info) <= tail_k_code(q, sinfo);
}

/* The family rule (nearest and class passes): a stored plan is served only
 * where the asked shape's built-in default is of the family (GEMV, mma=gemv,
 * or tile) of its stored shape's default — the family its tune measured it
 * against. The prior prices the GEMV family at the big operand's bytes at
 * 4.5 TB/s, where 16 short rows measured 1.0-1.6 TB/s (session 11), so across
 * the families it cannot vouch for a transfer. Session 39's leave-one-out over
 * the H100's neighbour-priced 47-shape database: the 8-row GEMV winners (beside
 * GEMV defaults) served to the 16-row NT shapes, whose defaults are 16x128
 * split-K tiles, measured 2.049x (16x4096x14336 NT, nearest) and 2.400x
 * (16x14336x4096 NT, class; the prior predicted 0.65x) the default's time in
 * those shapes' own tunes; those shapes' own winners are GEMV plans (a lane per
 * row, 0.953 and 0.959 of their tiles) and may serve each other. */
static int family_rule(const tsr_plan *def, const tsr_plan *sdef) {
  return (def->mma == TSR_MMA_GEMV) == (sdef->mma == TSR_MMA_GEMV);
}

static int split_rule(const tsr_plan_info *info, const tsr_plan_info *sinfo) {
  return info->plan.splitk <= 1 ||
         (info->grid_rows == sinfo->grid_rows && info->grid_cols == sinfo->grid_cols);
}

int tsr__tune_tails_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, int64_t m, int64_t n, int64_t k) {
  tsr_problem q;
  tsr_plan_info info, sinfo;
  return realize_both(ctx, b, p, plan, m, n, k, &q, &info, &sinfo) &&
         tails_rule(p, &q, &info, &sinfo);
}

int tsr__tune_split_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, int64_t m, int64_t n, int64_t k) {
  tsr_problem q;
  tsr_plan_info info, sinfo;
  return realize_both(ctx, b, p, plan, m, n, k, &q, &info, &sinfo) && split_rule(&info, &sinfo);
}

/* Whether the pass may serve a plan stored for m x n x k on p, each rule in
 * turn; why (not NULL): the deciding rule, one line. Both transfer rules from
 * one realization of each shape. */
static int serve_verdict(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                         const tsr_plan *plan, const tsr_plan *def, int pass, int64_t m,
                         int64_t n, int64_t k, FILE *why) {
  tsr_problem q;
  tsr_plan_info info, sinfo;
  if (tsr__exec_check(ctx, b, p, plan, &info) != TSR_OK)
    return say(why, "refused: the planner here (%s)", tsr_context_message(ctx)), 0;
  if (pass == 0) return say(why, "fits"), 1;
  tsr__tune_stored_problem(p, m, n, k, &q);
  if (tsr__exec_check(ctx, b, &q, plan, &sinfo) != TSR_OK)
    return say(why, "refused: the planner on its own shape (%s)", tsr_context_message(ctx)), 0;
  if (!tails_rule(p, &q, &info, &sinfo))
    return say(why,
               "refused: tails rule (a partial tile along %s here, none on its own shape: its "
               "tune never ran that tail code)",
               info.tail_m > sinfo.tail_m ? "M" : info.tail_n > sinfo.tail_n ? "N" : "K"),
           0;
  if (!split_rule(&info, &sinfo))
    return say(why, "refused: split-K rule (split-K %d tuned on %ux%u tiles, here %ux%u)",
               info.plan.splitk, sinfo.grid_rows, sinfo.grid_cols, info.grid_rows, info.grid_cols),
           0;
  if (def) {
    tsr_plan sdef; /* the stored shape's built-in default: what its tune measured against */
    tsr_plan_builtin(ctx, b, &q, &sdef);
    if (!family_rule(def, &sdef))
      return say(why, "refused: family rule (tuned against a %s default, here a %s one)",
                 sdef.mma == TSR_MMA_GEMV ? "GEMV" : "tile", def->mma == TSR_MMA_GEMV ? "GEMV" : "tile"),
             0;
  }
  if (pass == 1) return say(why, "fits"), 1;
  return transfer_verdict(ctx, b, p, &info, def, why);
}

int tsr__tune_serve_ok(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                       const tsr_plan *plan, const tsr_plan *def, int pass, int64_t m, int64_t n,
                       int64_t k) {
  return serve_verdict(ctx, b, p, plan, def, pass, m, n, k, NULL);
}

static int plan_fits(void *arg, const tsr_plan *plan, int pass, int64_t m, int64_t n,
                     int64_t k) {
  check_arg *c = arg;
  return serve_verdict(c->ctx, c->b, c->p, plan, c->def, pass, m, n, k, c->explain);
}

/* The class lookup's classifier (only the cuda backend has planner classes). */
static const char *cuda_class(const tsr_problem *p) { return tsr_plan_class(TSR_BACKEND_CUDA, p); }

/* The lookup's rules with the exact pass (p's own entry) left out. */
static int unseen_fits(void *arg, const tsr_plan *plan, int pass, int64_t m, int64_t n,
                       int64_t k) {
  return pass > 0 && plan_fits(arg, plan, pass, m, n, k);
}

int tsr__tune_lookup_unseen(tsr_context *ctx, tsr__tune_db *db, const tsr__tune_target *t,
                            tsr_backend_kind b, const tsr_problem *p, tsr_plan *out,
                            char *source, size_t cap, char *msg, size_t msgcap) {
  tsr_plan def;
  tsr_plan_builtin(ctx, b, p, &def);
  *out = def; /* a partial stored text is read over the asked shape's default */
  check_arg ca = {ctx, b, p, &def, NULL};
  int r = tsr__tune_db_lookup(db, t, p, b == TSR_BACKEND_CUDA ? cuda_class : NULL, unseen_fits,
                              &ca, out, source, cap, msg, msgcap, NULL);
  tsr__clear(ctx);
  return r;
}

static tsr_status lookup(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                         tsr_plan *out, char *source, size_t cap, FILE *explain);

tsr_status tsr_plan_lookup(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           tsr_plan *out, char *source, size_t cap) {
  return lookup(ctx, b, p, out, source, cap, NULL);
}

tsr_status tsr__plan_lookup_explain(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                                    tsr_plan *out, char *source, size_t cap, FILE *explain) {
  TSR_ASSERT(explain);
  return lookup(ctx, b, p, out, source, cap, explain);
}

/* The lookup; explain (not NULL): the memo is neither read nor written, and
 * every step is printed there. */
static tsr_status lookup(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                         tsr_plan *out, char *source, size_t cap, FILE *explain) {
  char dummy[8];
  if (!source) {
    source = dummy;
    cap = sizeof dummy;
  }
  if (cap) source[0] = '\0';
  if (!p || !out) return tsr__fail(ctx, TSR_ERR_INVALID, "plan lookup: NULL argument");
  b = tsr_backend_resolve(ctx, b);
  if ((unsigned)b >= TSR_BACKEND_COUNT || b == TSR_BACKEND_AUTO)
    return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  tsr_plan_builtin(ctx, b, p, out); /* a GPU's: its device's table (opens it) */
  snprintf(source, cap, "default");
  if (b != TSR_BACKEND_CPU && b != TSR_BACKEND_CUDA) { /* fixed routes */
    if (explain) fprintf(explain, "  backend %s: a fixed route, no tuned plans\n", tsr_backend_name(b));
    return TSR_OK;
  }
  char path[1024];
  int pr = tsr__tune_db_default_path(path, sizeof path);
  if (pr == 1) {
    snprintf(source, cap, "default (tuning database off)");
    if (explain) fputs("  tuning database off (TESSERA_TUNE_DB=off)\n", explain);
    return TSR_OK;
  }
  if (pr < 0) {
    if (explain) fputs("  no tuning database path (TESSERA_TUNE_DB and HOME unset)\n", explain);
    return TSR_OK;
  }
  pthread_once(&memo_atfork_once, memo_register_atfork);
  memo_entry q = {.used = 1, .b = b, .m = p->m, .n = p->n, .k = p->k, .batch = p->batch,
                  .op_a = p->op_a, .op_b = p->op_b, .precision = p->precision};
  snprintf(q.path, sizeof q.path, "%s", path);
  file_state(path, &q);
  if (q.size < 0) {
    snprintf(source, cap, "default (no tuning database)");
    if (explain) fprintf(explain, "  no tuning database at %s\n", path);
    return TSR_OK;
  }
  pthread_mutex_lock(&memo_lock);
  for (int i = 0; explain == NULL && i < MEMO_N; i++)
    if (memo_match(&memo[i], &q)) {
      if (memo[i].found) *out = memo[i].plan;
      snprintf(source, cap, "%s", memo[i].source);
      pthread_mutex_unlock(&memo_lock);
      return TSR_OK;
    }
  pthread_mutex_unlock(&memo_lock);

  tsr_plan def = *out;
  char msg[1200], src[128] = "default (no tuned entry)";
  int found = 0, broken = 0;
  tsr__tune_target t;
  tsr__tune_db *db = NULL;
  if (tsr__tune_target_get(ctx, b, &t) != TSR_OK) {
    if (explain) fprintf(explain, "  no target key (%s): no entry can match\n", tsr_context_message(ctx));
  } else {
    if (explain) {
      char key[400];
      tsr__tune_target_format(&t, key, sizeof key);
      fprintf(explain, "  database %s\n  target %s\n", path, key);
    }
    if (tsr__tune_db_open(path, 0, &db, msg, sizeof msg) == TSR_OK) {
      if (msg[0]) { /* read-only here: served, with a note */
        pthread_mutex_lock(&memo_lock);
        int first = !noted;
        noted = 1;
        pthread_mutex_unlock(&memo_lock);
        if (first) fprintf(stderr, "tessera: note: %s\n", msg);
      }
      tsr_problem q2 = *p;
      check_arg ca = {ctx, b, &q2, &def, explain};
      int r = tsr__tune_db_lookup(db, &t, p, b == TSR_BACKEND_CUDA ? cuda_class : NULL, plan_fits,
                                  &ca, out, src, sizeof src, msg, sizeof msg, explain);
      if (r < 0) broken = 1;
      found = r == 1;
    } else {
      broken = 1; /* msg says why */
    }
  }
  tsr__tune_db_close(db);
  tsr__clear(ctx);
  if (!found) *out = def;
  if (broken) {
    snprintf(src, sizeof src, "default (tuning database unreadable)");
    pthread_mutex_lock(&memo_lock);
    int first = !warned;
    warned = 1;
    pthread_mutex_unlock(&memo_lock);
    if (first)
      fprintf(stderr,
              "tessera: warning: %s; using built-in default plans (TESSERA_TUNE_DB=off "
              "silences this)\n",
              msg);
  }
  snprintf(source, cap, "%s", src);
  if (explain) {
    if (broken) fprintf(explain, "  database unreadable: %s\n", msg);
    if (!found) fprintf(explain, "  served: %s\n", src);
    return TSR_OK;
  }
  pthread_mutex_lock(&memo_lock);
  q.found = found;
  q.plan = *out;
  snprintf(q.source, sizeof q.source, "%s", src);
  memo[memo_next] = q;
  memo_next = (memo_next + 1) % MEMO_N;
  pthread_mutex_unlock(&memo_lock);
  return TSR_OK;
}
