/* The generated-kernel GPU backend ("cuda"): plan → emitter source → NVRTC
 * CUBIN (cached) → launch through the shared kernel-ABI launcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/cuda/gpu.h"
#include "backend/cuda/loader_cublas.h"
#include "core/backend.h"
#include "core/context.h"

static tsr_status cuda_available(tsr_context *ctx) {
  tsr__gpu *g;
  tsr_status st = tsr__gpu_get(ctx, TSR_BACKEND_CUDA, &g);
  if (st) return st;
  char msg[1024];
  if (!tsr__nvrtc_load(msg, sizeof msg)) return tsr__fail(ctx, TSR_ERR_NVRTC, "%s", msg);
  return TSR_OK;
}

static void cuda_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  unsigned cc = tsr__gpu_opened_cc(ctx, TSR_BACKEND_CUDA);
  tsr__emit_default_plan_cc(p, cc ? cc : 90, out); /* before any device: the sm_90 table */
}

/* The plan's tile grid (h rows by w columns of blocks). */
static tsr_status tile_grid(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                            uint64_t *h, uint64_t *w) {
  if (plan->bm < 1 || plan->bn < 1 || plan->bk < 1 || plan->splitk < 1)
    return tsr__fail(ctx, TSR_ERR_REJECTED, "plan: bm, bn, bk and splitk must be at least 1");
  *h = ((uint64_t)p->m + (uint64_t)plan->bm - 1) / (uint64_t)plan->bm;
  *w = ((uint64_t)p->n + (uint64_t)plan->bn - 1) / (uint64_t)plan->bn;
  if (*h > UINT32_MAX || *w > UINT32_MAX)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: tile grid %llux%llu exceeds uint32",
                     (unsigned long long)*h, (unsigned long long)*w);
  return TSR_OK;
}

static tsr_status realize_ex(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                             tsr_plan_info *info, int with_source) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  info->regs = info->local_bytes = -1;
  uint64_t h = 0, w = 0;
  tsr_status st = tile_grid(ctx, p, plan, &h, &w);
  if (st) return st;
  uint64_t zb = (uint64_t)p->batch * (uint64_t)plan->splitk;
  if (zb > UINT32_MAX)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: batch %lld × splitk %d exceeds uint32",
                     (long long)p->batch, plan->splitk);
  char msg[512];
  if ((st = tsr_walk_check(&plan->walk, (uint32_t)h, (uint32_t)w, msg, sizeof msg)))
    return tsr__fail(ctx, st, "%s", msg);
  tsr_walk_normalize(&info->plan.walk, (uint32_t)h, (uint32_t)w);
  /* the device's limits, sm_90's when no device is present */
  tsr__gpu_target t;
  tsr__gpu_target_get(ctx, &t);
  tsr__kernel_src k;
  memset(&k, 0, sizeof k);
  st = with_source ? tsr__emit_gemm(p, &info->plan, &t, &k, msg, sizeof msg)
                   : tsr__emit_gemm_launch(p, &info->plan, &t, &k, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  info->grid_rows = (uint32_t)h;
  info->grid_cols = (uint32_t)w;
  info->grid_batch = (uint32_t)zb;
  uint64_t threads = (uint64_t)k.block[0] * k.block[1] * k.block[2];
  info->threads = (uint32_t)threads;
  info->smem_bytes = k.smem_bytes;
  info->tail_m = p->m % plan->bm != 0;
  info->tail_n = p->n % plan->bn != 0;
  info->tail_k = p->k % ((int64_t)plan->bk * plan->splitk) != 0;
  memcpy(info->source_sha256, k.sha256, sizeof info->source_sha256);
  info->precision = tsr__emit_plan_precision(&info->plan);
  /* Launch limits of the target, for every kernel of the launch. */
  const uint32_t *mg = t.grid;
  st = TSR_OK;
  if (threads == 0 || threads > t.threads_block)
    st = tsr__fail(ctx, TSR_ERR_REJECTED, "threads: %llu per block outside 1..%u",
                   (unsigned long long)threads, t.threads_block);
  for (int i = 0; !st && i < 3; i++)
    if (k.grid[i] == 0 || k.grid[i] > mg[i])
      st = tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: dimension %c = %u outside 1..%u", "xyz"[i],
                     k.grid[i], mg[i]);
  for (int i = 0; !st && k.reduce_name[0] && i < 3; i++)
    if (k.reduce_grid[i] == 0 || k.reduce_grid[i] > mg[i])
      st = tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: reduction dimension %c = %u outside 1..%u",
                     "xyz"[i], k.reduce_grid[i], mg[i]);
  for (int q = 0; !st && q < k.npre; q++)
    for (int i = 0; !st && i < 3; i++)
      if (k.pre[q].grid[i] == 0 || k.pre[q].grid[i] > mg[i])
        st = tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: %s dimension %c = %u outside 1..%u",
                       k.pre[q].name, "xyz"[i], k.pre[q].grid[i], mg[i]);
  tsr__kernel_src_free(&k);
  return st;
}

static tsr_status cuda_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               tsr_plan_info *info) {
  return realize_ex(ctx, p, plan, info, 1);
}

static tsr_status cuda_check(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                             tsr_plan_info *info) {
  return realize_ex(ctx, p, plan, info, 0);
}

static int local_limit(void) {
  const char *s = getenv("TSR_SPILL_LIMIT");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*end && v >= 0 && v < (1 << 24)) return (int)v;
  }
  return TSR__LOCAL_BYTES_LIMIT;
}

tsr_status tsr__cuda_prepare_ex(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                const float *a, const float *b, const float *c0, int flags,
                                void **exec) {
  *exec = NULL;
  if (p->beta != 0.0f && !c0)
    return tsr__fail(ctx, TSR_ERR_INVALID, "cuda: beta != 0 needs C0");
  tsr_status st = cuda_available(ctx);
  if (st) return st;
  tsr__gpu *g;
  if ((st = tsr__gpu_get(ctx, TSR_BACKEND_CUDA, &g))) return st;
  tsr__kernel_src k;
  memset(&k, 0, sizeof k);
  char msg[512];
  st = tsr__emit_gemm(p, plan, &g->target, &k, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  tsr__gexec *e = NULL;
  /* a persistent kernel: one CTA per SM (each holds an SM's shared memory) */
  if (k.persistent && g->sm_count > 0 && k.grid[0] > (uint32_t)g->sm_count) k.grid[0] = (uint32_t)g->sm_count;
  st = tsr__gexec_create(ctx, TSR_BACKEND_CUDA, p, a, b, c0, (size_t)k.workspace_bytes, &e);
  if (!st) st = tsr__gexec_attach_kernel(e, &k, flags);
  if (!st) st = tsr__gexec_check_limits(e, local_limit());
  if (!st && k.regs_exact && e->regs != k.regs_exact)
    st = tsr__fail(ctx, TSR_ERR_REJECTED,
                   "registers: the kernel was compiled for %d per thread; its setmaxnreg split "
                   "between the producer and consumer warpgroups needs exactly %d",
                   e->regs, k.regs_exact);
  tsr__kernel_src_free(&k);
  if (st) {
    tsr__gexec_destroy(e);
    return st;
  }
  *exec = e;
  return TSR_OK;
}

static tsr_status cuda_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               const float *a, const float *b, const float *c0, void **exec) {
  return tsr__cuda_prepare_ex(ctx, p, plan, a, b, c0, 0, exec);
}

static void cuda_release(tsr_context *ctx) { tsr__gpu_release(ctx, TSR_BACKEND_CUDA); }

static tsr_status cuda_prepare_flags(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                     const float *a, const float *b, const float *c0, int flags,
                                     void **exec) {
  return tsr__cuda_prepare_ex(ctx, p, plan, a, b, c0,
                              flags & TSR__PREPARE_BYPASS_CACHE ? TSR__COMPILE_BYPASS_CACHE : 0,
                              exec);
}

/* The emitter's source for the plan (no device: the shared-memory limit per
 * block is not checked here, the realize step does that; the other limits
 * are sm_90's). */
static char *cuda_source(const tsr_problem *p, const tsr_plan *plan) {
  tsr__kernel_src k;
  char msg[256];
  memset(&k, 0, sizeof k);
  tsr__gpu_target t = tsr__target_sm90;
  t.smem_block_optin = UINT32_MAX;
  if (tsr__emit_gemm(p, plan, &t, &k, msg, sizeof msg) != TSR_OK) return NULL;
  return k.source; /* ownership passes to the caller */
}

/* The kernels of a plan compiled ahead into the disk cache (the optional
 * precompile slot): the source prepare would emit, the key prepare would
 * look up. The walk is normalized as realize normalizes it (prepare gets
 * the realized plan). The emitter's target only decides acceptance (an
 * accepted plan's source does not depend on it, emit.h): sm_90's limits
 * with the device's compute capability, any shared memory (realize on the
 * owning thread checked the device's). Nothing here touches the device or
 * the context's state, only its message. */
static tsr_status cuda_precompile(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                  int cc_major, int cc_minor, int *cached) {
  *cached = 0;
  if (cc_major < 1 || cc_major > 99 || cc_minor < 0 || cc_minor > 9)
    return tsr__fail(ctx, TSR_ERR_INVALID, "precompile: compute capability %d.%d", cc_major,
                     cc_minor);
  uint64_t h = 0, w = 0;
  tsr_status st = tile_grid(ctx, p, plan, &h, &w);
  if (st) return st;
  char msg[512];
  tsr_plan rp = *plan;
  if ((st = tsr_walk_check(&rp.walk, (uint32_t)h, (uint32_t)w, msg, sizeof msg)))
    return tsr__fail(ctx, st, "%s", msg);
  tsr_walk_normalize(&rp.walk, (uint32_t)h, (uint32_t)w);
  tsr__gpu_target t = tsr__target_sm90;
  t.cc = (uint32_t)(cc_major * 10 + cc_minor);
  t.smem_block_optin = UINT32_MAX;
  tsr__kernel_src k;
  memset(&k, 0, sizeof k);
  if ((st = tsr__emit_gemm(p, &rp, &t, &k, msg, sizeof msg))) return tsr__fail(ctx, st, "%s", msg);
  void *bin = NULL;
  size_t n = 0;
  tsr__cubin_meta meta;
  st = tsr__cubin_get(ctx, k.source, cc_major, cc_minor, 0, &bin, &n, NULL, &meta);
  free(bin);
  tsr__kernel_src_free(&k);
  if (st) return st;
  if (!meta.from_disk && !meta.disk_written)
    return tsr__fail(ctx, TSR_ERR_IO, "precompile: the module cache could not store the CUBIN");
  *cached = meta.from_disk;
  return TSR_OK;
}

tsr_status tsr__gpu_backend_describe(tsr_context *ctx, tsr__backend_desc *out) {
  memset(out, 0, sizeof *out);
  tsr__cuda_device d;
  tsr_status st = tsr__cuda_describe(ctx, &d);
  if (st) return st;
  snprintf(out->device, sizeof out->device, "%s", d.name);
  snprintf(out->arch, sizeof out->arch, "sm_%d%d", d.cc_major, d.cc_minor);
  snprintf(out->driver, sizeof out->driver, "%d", d.driver_version);
  if (d.nvrtc_major) snprintf(out->nvrtc, sizeof out->nvrtc, "%d.%d", d.nvrtc_major, d.nvrtc_minor);
  out->cc_major = d.cc_major;
  out->cc_minor = d.cc_minor;
  out->sm_count = d.sm_count;
  out->driver_version = d.driver_version;
  out->nvrtc_major = d.nvrtc_major;
  out->nvrtc_minor = d.nvrtc_minor;
  out->cublas_version = d.cublas_version;
  out->total_mem = d.total_mem;
  return TSR_OK;
}

const tsr__backend tsr__backend_cuda = {
    .api = TSR__BACKEND_API,
    .name = "cuda",
    .is_gpu = 1,
    .available = cuda_available,
    .default_plan = cuda_default_plan,
    .realize = cuda_realize,
    .check = cuda_check,
    .prepare = cuda_prepare,
    TSR__GEXEC_OPS,
    .context_release = cuda_release,
    .describe = tsr__gpu_backend_describe,
    .prepare_flags = cuda_prepare_flags,
    .source = cuda_source,
    .plan_class = tsr__emit_plan_class,
    .precompile = cuda_precompile,
};

tsr_status tsr__cuda_describe(tsr_context *ctx, tsr__cuda_device *out) {
  memset(out, 0, sizeof *out);
  tsr__gpu *g;
  tsr_status st = tsr__gpu_get(ctx, TSR_BACKEND_CUDA, &g);
  if (st) return st;
  memcpy(out->name, g->name, sizeof out->name);
  out->cc_major = g->cc_major;
  out->cc_minor = g->cc_minor;
  out->sm_count = g->sm_count;
  out->driver_version = g->driver_version;
  out->smem_optin = g->target.smem_block_optin;
  out->total_mem = g->total_mem;
  char msg[1024];
  const tsr__nvrtc_api *nv = tsr__nvrtc_load(msg, sizeof msg);
  if (nv) nv->Version(&out->nvrtc_major, &out->nvrtc_minor);
  const tsr__cublas_api *bl = tsr__cublas_load(msg, sizeof msg);
  if (bl) {
    int v = 0;
    if (bl->GetVersion(NULL, &v) == TSR__CUBLAS_SUCCESS) out->cublas_version = v;
  }
  return TSR_OK;
}
