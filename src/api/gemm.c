/* The library's entry points above the layers (docs/CONTRIBUTING.md): the
 * default plan (the tuning database's, else the backend's built-in one) and
 * one GEMM on host buffers. They sit here, above
 * bench, tune and measure, because the default plan comes from the tuner's
 * lookup: core stays below everything that uses it. */
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/context.h"

tsr_status tsr_plan_default(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                            tsr_plan *out) {
  return tsr_plan_lookup(ctx, b, p, out, NULL, 0); /* tuning DB, else built-in (src/tune) */
}

tsr_status tsr_gemm(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                    const tsr_plan *plan, const float *a, const float *bmat, float *c) {
  if (!ctx || !p || !a || !bmat || !c) return tsr__fail(ctx, TSR_ERR_INVALID, "gemm: NULL argument");
  tsr__clear(ctx);
  b = tsr__backend_resolve(ctx, b);
  const tsr__backend *be = tsr__backend_get(b);
  if (!be) return tsr__fail(ctx, TSR_ERR_INVALID, "backend: %d unknown", (int)b);
  tsr_status st = be->available(ctx);
  if (st) return st;
  tsr_problem q = *p;
  char msg[512];
  st = tsr_problem_check(&q, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  tsr_plan pl;
  if (plan) pl = *plan;
  else if ((st = tsr_plan_default(ctx, b, &q, &pl))) return st; /* tuning DB, else built-in */
  /* The CPU executor makes realize's checks itself: no second pass per call. */
  if (b == TSR_BACKEND_CPU) return tsr__cpu_gemm(ctx, &q, &pl, a, bmat, c);
  tsr_plan_info info;
  st = be->realize(ctx, &q, &pl, &info);
  if (st) return st;
  void *ex = NULL;
  st = be->prepare(ctx, &q, &info.plan, a, bmat, q.beta != 0.0f ? c : NULL, &ex);
  if (!st) st = be->launch(ex, 1);
  if (!st) st = be->sync(ex);
  if (!st) st = be->download(ex, c);
  be->destroy(ex);
  return st;
}
