/* Placeholder GPU backends until the CUDA backend lands: each reports that
 * no CUDA driver is available. */
#include <string.h>

#include "core/backend.h"
#include "core/context.h"

static tsr_status none_available(tsr_context *ctx) {
  return tsr__fail(ctx, TSR_ERR_NO_CUDA, "no CUDA driver found (CUDA backend not built)");
}
static void none_default_plan(const tsr_problem *p, tsr_plan *out) { memset(out, 0, sizeof *out); }
static tsr_status none_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               tsr_plan_info *info) {
  return none_available(ctx);
}
static tsr_status none_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               const float *a, const float *b, const float *c0, void **exec) {
  return none_available(ctx);
}
static void none_destroy(void *exec) {}

#define NONE_BACKEND(var, nm)                                                         \
  const tsr__backend var = {.name = nm, .is_gpu = 1, .available = none_available,     \
                            .default_plan = none_default_plan, .realize = none_realize, \
                            .prepare = none_prepare, .destroy = none_destroy}
NONE_BACKEND(tsr__backend_cuda, "cuda");
NONE_BACKEND(tsr__backend_cublas, "cublas");
NONE_BACKEND(tsr__backend_hand, "hand");
