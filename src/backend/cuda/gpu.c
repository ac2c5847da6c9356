/* Per-context device state of the GPU backends: driver load, cuInit, the
 * device's primary context and one stream per backend slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/gpu.h"
#include "core/context.h"

unsigned tsr__gpu_opened_cc(tsr_context *ctx, tsr_backend_kind slot) {
  const tsr__gpu *g = ctx ? ctx->backend_state[slot] : NULL;
  return g ? g->target.cc : 0;
}

tsr_status tsr__cu_fail(tsr_context *ctx, const tsr__cu_api *cu, tsr__cu_result r,
                        const char *what) {
  char e[256];
  tsr__cu_errstr(cu, r, e, sizeof e);
  tsr_status st = r == TSR__CU_ERROR_OUT_OF_MEMORY ? TSR_ERR_NOMEM : TSR_ERR_CUDA;
  return tsr__fail(ctx, st, "cuda: %s: %s", what, e);
}

/* cuInit's failure: no usable driver vs no usable device. */
static tsr_status init_fail(tsr_context *ctx, const tsr__cu_api *cu, tsr__cu_result r) {
  char e[256];
  tsr__cu_errstr(cu, r, e, sizeof e);
  switch (r) {
    case TSR__CU_ERROR_NO_DEVICE:
    case TSR__CU_ERROR_INVALID_DEVICE:
    case TSR__CU_ERROR_DEVICE_UNAVAILABLE:
      return tsr__fail(ctx, TSR_ERR_NO_DEVICE, "no CUDA device (cuInit: %s)", e);
    default:
      return tsr__fail(ctx, TSR_ERR_NO_CUDA, "no CUDA driver found (cuInit: %s)", e);
  }
}

#define CU_TRY(call, what)                                   \
  do {                                                       \
    tsr__cu_result r_ = (call);                              \
    if (r_ != TSR__CU_SUCCESS) {                             \
      st = tsr__cu_fail(ctx, cu, r_, what);                  \
      goto fail;                                             \
    }                                                        \
  } while (0)

tsr_status tsr__gpu_get(tsr_context *ctx, tsr_backend_kind slot, tsr__gpu **out) {
  if (ctx->backend_state[slot]) {
    *out = ctx->backend_state[slot];
    return TSR_OK;
  }
  char msg[1024];
  const tsr__cu_api *cu = tsr__cu_load(msg, sizeof msg);
  if (!cu) return tsr__fail(ctx, TSR_ERR_NO_CUDA, "%s", msg);
  tsr__cu_result r = cu->Init(0);
  if (r != TSR__CU_SUCCESS) return init_fail(ctx, cu, r);
  int count = 0;
  r = cu->DeviceGetCount(&count);
  if (r != TSR__CU_SUCCESS) return init_fail(ctx, cu, r);
  if (count < 1) return tsr__fail(ctx, TSR_ERR_NO_DEVICE, "no CUDA device (cuDeviceGetCount: 0)");

  tsr__gpu *g = calloc(1, sizeof *g);
  if (!g) return tsr__fail(ctx, TSR_ERR_NOMEM, "cuda: out of host memory");
  g->cu = cu;
  tsr_status st = TSR_OK;
  int retained = 0;
  CU_TRY(cu->DeviceGet(&g->dev, 0), "cuDeviceGet(0)");
  int max_threads, max_grid[3], smem_optin;
  struct { int attr; int *dst; const char *name; } attrs[] = {
      {TSR__CU_DEV_COMPUTE_CAPABILITY_MAJOR, &g->cc_major, "compute capability major"},
      {TSR__CU_DEV_COMPUTE_CAPABILITY_MINOR, &g->cc_minor, "compute capability minor"},
      {TSR__CU_DEV_MULTIPROCESSOR_COUNT, &g->sm_count, "multiprocessor count"},
      {TSR__CU_DEV_MAX_THREADS_PER_BLOCK, &max_threads, "max threads per block"},
      {TSR__CU_DEV_MAX_GRID_DIM_X, &max_grid[0], "max grid x"},
      {TSR__CU_DEV_MAX_GRID_DIM_Y, &max_grid[1], "max grid y"},
      {TSR__CU_DEV_MAX_GRID_DIM_Z, &max_grid[2], "max grid z"},
      {TSR__CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK, &g->smem_block, "shared memory per block"},
      {TSR__CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &smem_optin, "opt-in shared memory"},
      {TSR__CU_DEV_MAX_REGISTERS_PER_BLOCK, &g->regs_per_block, "registers per block"},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    char what[96];
    snprintf(what, sizeof what, "cuDeviceGetAttribute(%s)", attrs[i].name);
    CU_TRY(cu->DeviceGetAttribute(attrs[i].dst, attrs[i].attr, g->dev), what);
  }
  /* the device's values where it reports them (a value <= 0 is none) */
  g->target = tsr__target_sm90;
  g->target.cc = (uint32_t)(g->cc_major * 10 + g->cc_minor);
  if (smem_optin > 0) g->target.smem_block_optin = (uint32_t)smem_optin;
  if (max_threads > 0) g->target.threads_block = (uint32_t)max_threads;
  for (int d = 0; d < 3; d++)
    if (max_grid[d] > 0) g->target.grid[d] = (uint32_t)max_grid[d];
  CU_TRY(cu->DeviceGetName(g->name, (int)sizeof g->name - 1, g->dev), "cuDeviceGetName");
  CU_TRY(cu->DriverGetVersion(&g->driver_version), "cuDriverGetVersion");
  CU_TRY(cu->DeviceTotalMem(&g->total_mem, g->dev), "cuDeviceTotalMem");
  CU_TRY(cu->DevicePrimaryCtxRetain(&g->cuctx, g->dev), "cuDevicePrimaryCtxRetain");
  retained = 1;
  CU_TRY(cu->CtxSetCurrent(g->cuctx), "cuCtxSetCurrent");
  /* A blocking stream: it orders with the legacy default stream that the
   * synchronous cuMemcpy calls use. */
  CU_TRY(cu->StreamCreate(&g->stream, TSR__CU_STREAM_DEFAULT), "cuStreamCreate");
  ctx->backend_state[slot] = g;
  *out = g;
  return TSR_OK;
fail:
  if (retained) cu->DevicePrimaryCtxRelease(g->dev);
  free(g);
  return st;
}

void tsr__gpu_release(tsr_context *ctx, tsr_backend_kind slot) {
  tsr__gpu *g = ctx->backend_state[slot];
  if (!g) return;
  const tsr__cu_api *cu = g->cu;
  cu->CtxSetCurrent(g->cuctx);
  if (g->blas && g->blas_destroy) g->blas_destroy(g->blas);
  for (tsr__module_entry *m = g->modules, *next; m; m = next) {
    next = m->next;
    cu->ModuleUnload(m->mod);
    free(m);
  }
  if (g->stream) cu->StreamDestroy(g->stream);
  cu->DevicePrimaryCtxRelease(g->dev);
  free(g);
  ctx->backend_state[slot] = NULL;
}

tsr_status tsr__gpu_bind(tsr_context *ctx, tsr__gpu *g) {
  tsr__cu_result r = g->cu->CtxSetCurrent(g->cuctx);
  return r == TSR__CU_SUCCESS ? TSR_OK : tsr__cu_fail(ctx, g->cu, r, "cuCtxSetCurrent");
}

void tsr__gpu_target_get(tsr_context *ctx, tsr__gpu_target *out) {
  tsr__gpu *g;
  *out = tsr__target_sm90;
  if (ctx && ctx->device_absent[TSR_BACKEND_CUDA]) return;
  tsr_status st = tsr__gpu_get(ctx, TSR_BACKEND_CUDA, &g);
  if (st == TSR_OK) {
    *out = g->target;
    return;
  }
  if (ctx && (st == TSR_ERR_NO_CUDA || st == TSR_ERR_NO_DEVICE))
    ctx->device_absent[TSR_BACKEND_CUDA] = 1;
  tsr__clear(ctx);
}

static const char *const field_names[] = {"bm", "bn", "bk", "wm", "wn", "tm", "tn", "stages",
                                          "vec", "a", "b", "pad", "walk", "splitk", "threads",
                                          "isa", "mma", "minblocks", "pack", "acc", "split",
                                          "kfrag", "kloop", "kunroll", "lanerows",
                                          "tailk", "wave", "forder", "kwait", "pelect", "krel",
                                          "kinner", "lazy", "lazyk"};

tsr_status tsr__plan_require_default(tsr_context *ctx, const char *route, const tsr_plan *plan,
                                     const tsr_plan *def) {
  if (tsr_plan_equal(plan, def)) return TSR_OK;
  int diff[] = {plan->bm != def->bm, plan->bn != def->bn, plan->bk != def->bk,
                plan->wm != def->wm, plan->wn != def->wn, plan->tm != def->tm,
                plan->tn != def->tn, plan->stages != def->stages, plan->vec != def->vec,
                plan->a != def->a, plan->b != def->b, plan->pad != def->pad, 1,
                plan->splitk != def->splitk, plan->threads != def->threads,
                plan->isa != def->isa, plan->mma != def->mma,
                plan->minblocks != def->minblocks, plan->pack != def->pack,
                plan->acc != def->acc, plan->split != def->split,
                plan->kfrag != def->kfrag, plan->kloop != def->kloop,
                plan->kunroll != def->kunroll, plan->lanerows != def->lanerows,
                plan->tailk != def->tailk, plan->wave != def->wave,
                plan->forder != def->forder, plan->kwait != def->kwait,
                plan->pelect != def->pelect, plan->krel != def->krel,
                plan->kinner != def->kinner, plan->lazy != def->lazy,
                plan->lazyk != def->lazyk};
  /* walk is the only field left when every scalar matches */
  size_t i = 0;
  for (; i < sizeof diff / sizeof diff[0]; i++)
    if (diff[i] && i != 12) break;
  if (i == sizeof diff / sizeof diff[0]) i = 12;
  char want[512];
  tsr_plan_format(def, want, sizeof want);
  return tsr__fail(ctx, TSR_ERR_UNSUPPORTED,
                   "plan: %s differs from the %s route's fixed plan (%s runs only %s)",
                   field_names[i], route, route, want);
}
