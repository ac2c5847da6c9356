/* tsr_exec_create (tessera.h): the public prepared execution, with the
 * default plan (tuning database, else built-in) when none is given. The rest
 * of the handle lives in the measure layer (src/measure/exec.c). */
#include "core/context.h"
#include "measure/exec.h"

tsr_status tsr_exec_create(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                           const tsr_plan *plan, const float *a, const float *bmat,
                           const float *c0, tsr_exec **out) {
  if (out) *out = NULL;
  if (!ctx || !p || !out) return tsr__fail(ctx, TSR_ERR_INVALID, "exec: NULL argument");
  tsr_plan pl;
  if (!plan) {
    tsr_problem q = *p;
    char msg[512];
    tsr_status st = tsr_problem_check(&q, msg, sizeof msg);
    if (st) return tsr__fail(ctx, st, "%s", msg);
    if ((st = tsr_plan_default(ctx, b, &q, &pl))) return st;
    plan = &pl;
  }
  return tsr__exec_create(ctx, b, p, plan, a, bmat, c0, 0, out);
}
