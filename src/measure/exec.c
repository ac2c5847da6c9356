/* The prepared execution (measure/exec.h, tessera.h's tsr_exec): the one
 * place above the backends that holds a vtable and its prepared call. */
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/context.h"
#include "measure/exec.h"
#include "measure/measure.h"

struct tsr_exec {
  tsr_context *ctx;
  const tsr__backend *be;
  void *ex;
  tsr_problem p;
  tsr_plan_info info;
};

tsr_status tsr__exec_create_vt(tsr_context *ctx, const tsr__backend *be, const tsr_problem *p,
                               const tsr_plan *plan, const float *a, const float *bmat,
                               const float *c0, int flags, tsr_exec **out) {
  if (!out) return tsr__fail(ctx, TSR_ERR_INVALID, "exec: NULL output");
  *out = NULL;
  if (!ctx || !be || !p || !plan || !a || !bmat)
    return tsr__fail(ctx, TSR_ERR_INVALID, "exec: NULL argument");
  tsr__clear(ctx);
  tsr_exec *e = calloc(1, sizeof *e);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "exec: out of host memory");
  e->ctx = ctx;
  e->be = be;
  e->p = *p;
  char msg[512];
  tsr_status st = be->available(ctx);
  if (!st && (st = tsr_problem_check(&e->p, msg, sizeof msg))) tsr__fail(ctx, st, "%s", msg);
  if (!st) st = be->realize(ctx, &e->p, plan, &e->info);
  if (!st) {
    const float *c = e->p.beta != 0.0f ? c0 : NULL;
    if (e->p.beta != 0.0f && !c0)
      st = tsr__fail(ctx, TSR_ERR_INVALID, "exec: beta=%g needs C0", (double)e->p.beta);
    else if ((flags & TSR__EXEC_BYPASS_CACHE) && be->prepare_flags)
      st = be->prepare_flags(ctx, &e->p, &e->info.plan, a, bmat, c, TSR__PREPARE_BYPASS_CACHE,
                             &e->ex);
    else
      st = be->prepare(ctx, &e->p, &e->info.plan, a, bmat, c, &e->ex);
  }
  if (st) {
    tsr_exec_destroy(e);
    return st;
  }
  if (be->exec_info) be->exec_info(e->ex, &e->info);
  *out = e;
  return TSR_OK;
}

tsr_status tsr__exec_check(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           const tsr_plan *plan, tsr_plan_info *info) {
  return tsr__backend_check(ctx, b, p, plan, info);
}

int tsr__exec_can_precompile(tsr_backend_kind b) {
  if (b == TSR_BACKEND_AUTO) return 0;
  const tsr__backend *be = tsr__backend_get(b);
  return be && be->precompile;
}

tsr_status tsr__exec_precompile(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                                const tsr_plan *plan, int cc_major, int cc_minor, int *cached) {
  int dummy;
  if (!cached) cached = &dummy;
  *cached = 0;
  if (!p || !plan) return tsr__fail(ctx, TSR_ERR_INVALID, "precompile: NULL argument");
  /* AUTO is not resolved here: resolving opens the device */
  const tsr__backend *be = b == TSR_BACKEND_AUTO ? NULL : tsr__backend_get(b);
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "precompile: backend %d is not a backend", (int)b);
  if (!be->precompile)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "precompile: backend %s compiles nothing ahead",
                     be->name);
  /* the problem as tsr__exec_create prepares it */
  tsr_problem q = *p;
  char msg[512];
  tsr_status st = tsr_problem_check(&q, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  return be->precompile(ctx, &q, plan, cc_major, cc_minor, cached);
}

tsr_status tsr__exec_create(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            const tsr_plan *plan, const float *a, const float *bmat,
                            const float *c0, int flags, tsr_exec **out) {
  if (out) *out = NULL;
  b = tsr__backend_resolve(ctx, b);
  const tsr__backend *be = tsr__backend_get(b);
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  return tsr__exec_create_vt(ctx, be, p, plan, a, bmat, c0, flags, out);
}

void tsr_exec_destroy(tsr_exec *e) {
  if (!e) return;
  if (e->ex) e->be->destroy(e->ex);
  free(e);
}

const tsr_plan_info *tsr_exec_info(const tsr_exec *e) { return &e->info; }
int tsr__exec_is_gpu(const tsr_exec *e) { return e->be->is_gpu; }
const tsr_problem *tsr__exec_problem(const tsr_exec *e) { return &e->p; }

/* A count the vtable's int takes. */
static tsr_status check_n(tsr_exec *e, int64_t n) {
  if (n < 1 || n > (1 << 30))
    return tsr__fail(e->ctx, TSR_ERR_INVALID, "exec: %lld calls is outside 1..2^30", (long long)n);
  return TSR_OK;
}

tsr_status tsr__exec_reset(tsr_exec *e) { return e->be->reset_c(e->ex); }
tsr_status tsr__exec_launch(tsr_exec *e, int64_t n) {
  tsr_status st = check_n(e, n);
  return st ? st : e->be->launch(e->ex, (int)n);
}
tsr_status tsr__exec_sync(tsr_exec *e) { return e->be->sync(e->ex); }
tsr_status tsr__exec_event_time(tsr_exec *e, int64_t n, int64_t *ns) {
  if (!e->be->event_time)
    return tsr__fail(e->ctx, TSR_ERR_UNSUPPORTED, "exec: backend %s has no device events",
                     e->be->name);
  tsr_status st = check_n(e, n);
  return st ? st : e->be->event_time(e->ex, (int)n, ns);
}
tsr_status tsr__exec_download(tsr_exec *e, float *c) { return e->be->download(e->ex, c); }

tsr_status tsr_exec_run(tsr_exec *e, float *c) {
  if (!e || !c) return TSR_ERR_INVALID;
  tsr_status st = tsr__exec_reset(e);
  if (!st) st = tsr__exec_launch(e, 1);
  if (!st) st = tsr__exec_sync(e);
  if (!st) st = tsr__exec_download(e, c);
  return st;
}

tsr_status tsr_exec_time(tsr_exec *e, int64_t calls, int64_t *ns) {
  if (!e || !ns) return TSR_ERR_INVALID;
  /* the measure layer's one sample: device events on a GPU, else the clock */
  return tsr__sample(e, e->be->is_gpu ? TSR__TIMER_EVENT : TSR__TIMER_HOST, calls, ns);
}
