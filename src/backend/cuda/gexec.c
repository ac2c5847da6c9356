/* Device buffers and the exec shared by the GPU backends: upload, NaN
 * poison, reset, the kernel-ABI launcher (pack prologue + main + reduce), event timing and
 * download. Every driver call's result is checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/gpu.h"
#include "sys/assert.h"
#include "core/context.h"
#include "core/inputs.h"

#define POISON_BITS 0x7fc00000u /* quiet NaN */

#define CU_CHECK(ctx, cu, call, what)                             \
  do {                                                            \
    tsr__cu_result r_ = (call);                                   \
    if (r_ != TSR__CU_SUCCESS) return tsr__cu_fail(ctx, cu, r_, what); \
  } while (0)

static tsr_status alloc_one(tsr_context *ctx, tsr__gpu *g, tsr__cu_ptr *out, size_t bytes,
                            const char *name) {
  tsr__cu_result r = g->cu->MemAlloc(out, bytes ? bytes : 4);
  if (r == TSR__CU_SUCCESS) return TSR_OK;
  *out = 0;
  char what[96];
  snprintf(what, sizeof what, "cuMemAlloc(%s, %zu bytes)", name, bytes);
  return tsr__cu_fail(ctx, g->cu, r, what);
}

void tsr__dbufs_free(tsr__gpu *g, tsr__dbufs *d) {
  tsr__cu_ptr *all[] = {&d->a, &d->b, &d->c, &d->c0, &d->w};
  for (size_t i = 0; i < 5; i++)
    if (*all[i]) {
      g->cu->MemFree(*all[i]);
      *all[i] = 0;
    }
}

static tsr_status c_initial(tsr_context *ctx, tsr__gpu *g, const tsr__dbufs *d) {
  if (d->c0)
    CU_CHECK(ctx, g->cu, g->cu->MemcpyDtoDAsync(d->c, d->c0, d->nc * sizeof(float), g->stream),
             "cuMemcpyDtoDAsync(C0 → C)");
  else
    CU_CHECK(ctx, g->cu, g->cu->MemsetD32Async(d->c, POISON_BITS, d->nc, g->stream),
             "cuMemsetD32Async(C, NaN)");
  return TSR_OK;
}

tsr_status tsr__dbufs_create(tsr_context *ctx, tsr__gpu *g, const tsr_problem *p, const float *a,
                             const float *b, const float *c0, size_t w_bytes, tsr__dbufs *out) {
  tsr__dbufs d = {0};
  int64_t na = tsr_problem_elems_a(p), nb = tsr_problem_elems_b(p), nc = tsr_problem_elems_c(p);
  if (na <= 0 || nb <= 0 || nc <= 0 || (uint64_t)na > SIZE_MAX / 8 || (uint64_t)nb > SIZE_MAX / 8 ||
      (uint64_t)nc > SIZE_MAX / 8)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "cuda: tensor sizes exceed the address space");
  d.na = (size_t)na;
  d.nb = (size_t)nb;
  d.nc = (size_t)nc;
  d.w_bytes = w_bytes;
  tsr_status st = tsr__gpu_bind(ctx, g);
  if (st) return st;
  /* Allocate everything before touching host data. */
  if ((st = alloc_one(ctx, g, &d.a, d.na * sizeof(float), "A")) ||
      (st = alloc_one(ctx, g, &d.b, d.nb * sizeof(float), "B")) ||
      (st = alloc_one(ctx, g, &d.c, d.nc * sizeof(float), "C")) ||
      (c0 && (st = alloc_one(ctx, g, &d.c0, d.nc * sizeof(float), "C0"))) ||
      (w_bytes && (st = alloc_one(ctx, g, &d.w, w_bytes, "split-K workspace"))))
    goto fail;
  tsr__cu_result r;
  if ((r = g->cu->MemcpyHtoD(d.a, a, d.na * sizeof(float))) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuMemcpyHtoD(A)");
    goto fail;
  }
  if ((r = g->cu->MemcpyHtoD(d.b, b, d.nb * sizeof(float))) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuMemcpyHtoD(B)");
    goto fail;
  }
  if (c0 && (r = g->cu->MemcpyHtoD(d.c0, c0, d.nc * sizeof(float))) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuMemcpyHtoD(C0)");
    goto fail;
  }
  if ((st = c_initial(ctx, g, &d))) goto fail;
  if ((r = g->cu->StreamSynchronize(g->stream)) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuStreamSynchronize(after upload)");
    goto fail;
  }
  *out = d;
  return TSR_OK;
fail:
  tsr__dbufs_free(g, &d);
  return st;
}

/* ---- exec ----------------------------------------------------------------- */
tsr_status tsr__gexec_create(tsr_context *ctx, tsr_backend_kind slot, const tsr_problem *p,
                             const float *a, const float *b, const float *c0, size_t w_bytes,
                             tsr__gexec **out) {
  *out = NULL;
  tsr__gpu *g;
  tsr_status st = tsr__gpu_get(ctx, slot, &g);
  if (st) return st;
  tsr__gexec *e = calloc(1, sizeof *e);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "cuda: out of host memory");
  e->ctx = ctx;
  e->g = g;
  e->p = *p;
  e->regs = e->local_bytes = e->static_smem = -1;
  if ((st = tsr__gpu_bind(ctx, g))) goto fail;
  tsr__cu_result r;
  if ((r = g->cu->EventCreate(&e->ev0, TSR__CU_EVENT_DEFAULT)) != TSR__CU_SUCCESS ||
      (r = g->cu->EventCreate(&e->ev1, TSR__CU_EVENT_DEFAULT)) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, g->cu, r, "cuEventCreate");
    goto fail;
  }
  if ((st = tsr__dbufs_create(ctx, g, p, a, b, p->beta != 0.0f ? c0 : NULL, w_bytes, &e->buf)))
    goto fail;
  *out = e;
  return TSR_OK;
fail:
  tsr__gexec_destroy(e);
  return st;
}

static tsr_status func_attr(tsr__gexec *e, tsr__cu_function f, int attr, int *v,
                            const char *what) {
  tsr__cu_result r = e->g->cu->FuncGetAttribute(v, attr, f);
  return r == TSR__CU_SUCCESS ? TSR_OK : tsr__cu_fail(e->ctx, e->g->cu, r, what);
}

/* lazy: the claim flags zeroed in stream order (after every call enqueued
 * before, before every call after), the call count with them */
static tsr_status lazy_zero(tsr__gexec *e) {
  tsr__cu_result r = e->g->cu->MemsetD32Async(e->buf.w + 4u * e->lazy_off, 0u, e->lazy_n, e->g->stream);
  if (r != TSR__CU_SUCCESS) return tsr__cu_fail(e->ctx, e->g->cu, r, "cuMemsetD32Async(lazy flags)");
  e->epoch = 0;
  return TSR_OK;
}

/* One kernel-ABI call: pack prologue kernels, main kernel, then the split-K
 * reduction. */
static tsr_status launch_abi(tsr__gexec *e) {
  const tsr__cu_api *cu = e->g->cu;
  float alpha = e->p.alpha, beta = e->p.beta;
  /* split=producer-tma kernels take two tensor maps more, and with lazy=P
   * the call count after them; the others (and the prologue and reduction
   * kernels) read only their six parameters */
  void *main_args[] = {&e->buf.a, &e->buf.b, &e->buf.c, &e->buf.w, &alpha, &beta,
                       e->tmap[0], e->tmap[1], &e->epoch};
  tsr__cu_result r;
  /* lazy: the flags count calls as 2 epoch + 2 in 32 bits; long before they
   * wrap, zero them again */
  tsr_status st;
  if (e->lazy_n && e->epoch >= (1u << 30) && (st = lazy_zero(e))) return st;
  for (int i = 0; i < e->npre; i++) {
    r = cu->LaunchKernel(e->fpre[i], e->pgrid[i][0], e->pgrid[i][1], e->pgrid[i][2],
                         e->pblock[i][0], e->pblock[i][1], e->pblock[i][2], 0, e->g->stream,
                         main_args, NULL);
    if (r != TSR__CU_SUCCESS) {
      char what[128];
      snprintf(what, sizeof what, "cuLaunchKernel(%s)", e->pre_name[i]);
      return tsr__cu_fail(e->ctx, cu, r, what);
    }
  }
  if (e->pdl) {
    /* lazyk: the main kernel may start while the pack kernel before it runs
     * (every pack CTA is resident by then: it triggers at its start); it
     * waits for each piece of A through the flags, not for the kernel */
    tsr__cu_launch_attribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = TSR__CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmatic_stream_serialization_allowed = 1;
    tsr__cu_launch_config cfg = {{e->grid[0], e->grid[1], e->grid[2]},
                                 {e->block[0], e->block[1], e->block[2]},
                                 e->smem,
                                 e->g->stream,
                                 &attr,
                                 1};
    r = cu->LaunchKernelEx(&cfg, e->fmain, main_args, NULL);
    if (r != TSR__CU_SUCCESS) return tsr__cu_fail(e->ctx, cu, r, "cuLaunchKernelEx(main)");
  } else {
    r = cu->LaunchKernel(e->fmain, e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1],
                         e->block[2], e->smem, e->g->stream, main_args, NULL);
    if (r != TSR__CU_SUCCESS) return tsr__cu_fail(e->ctx, cu, r, "cuLaunchKernel(main)");
  }
  e->epoch++;
  if (e->freduce) {
    /* the reduction takes the main kernel's arguments (A, B, C, W, alpha, beta) */
    r = cu->LaunchKernel(e->freduce, e->rgrid[0], e->rgrid[1], e->rgrid[2], e->rblock[0],
                         e->rblock[1], e->rblock[2], 0, e->g->stream, main_args, NULL);
    if (r != TSR__CU_SUCCESS) return tsr__cu_fail(e->ctx, cu, r, "cuLaunchKernel(reduce)");
  }
  return TSR_OK;
}

/* split=producer-tma: k's tensor maps over this exec's buffers (A, B, or a
 * packed copy in W), 3D floats, zeros outside; once per attach, since the
 * buffers live as long as the exec. */
static tsr_status encode_tmaps(tsr__gexec *e, const tsr__kernel_src *k) {
  const tsr__cu_api *cu = e->g->cu;
  TSR_ASSERT(k->ntmap >= 0 && k->ntmap <= 2);
  e->ntmap = 0;
  for (int i = 0; i < k->ntmap; i++) {
    tsr__cu_ptr base = k->tmap[i].packed ? e->buf.w + 4u * k->tmap[i].off : i ? e->buf.b : e->buf.a;
    uint64_t dim[3] = {k->tmap[i].dim[0], k->tmap[i].dim[1], k->tmap[i].dim[2]};
    uint64_t strides[2] = {4u * k->tmap[i].stride[0], 4u * k->tmap[i].stride[1]};
    uint32_t box[3] = {k->tmap[i].box[0], k->tmap[i].box[1], 1}, unit[3] = {1, 1, 1};
    tsr__cu_tensor_map m;
    tsr__cu_result r = cu->TensorMapEncodeTiled(
        &m, TSR__CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)(uintptr_t)base, dim, strides, box,
        unit, TSR__CU_TENSOR_MAP_INTERLEAVE_NONE, TSR__CU_TENSOR_MAP_SWIZZLE_NONE,
        TSR__CU_TENSOR_MAP_L2_PROMOTION_L2_128B, TSR__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != TSR__CU_SUCCESS) {
      char what[160];
      snprintf(what, sizeof what,
               "cuTensorMapEncodeTiled(%c: %llu x %llu x %llu floats, rows %llu bytes apart, "
               "box %u x %u)",
               i ? 'B' : 'A', (unsigned long long)dim[0], (unsigned long long)dim[1],
               (unsigned long long)dim[2], (unsigned long long)strides[0], box[0], box[1]);
      return tsr__cu_fail(e->ctx, cu, r, what);
    }
    memcpy(e->tmap[i], &m, sizeof e->tmap[i]);
    e->ntmap = i + 1;
  }
  return TSR_OK;
}

tsr_status tsr__gexec_attach_kernel(tsr__gexec *e, const tsr__kernel_src *k, int flags) {
  tsr_context *ctx = e->ctx;
  const tsr__cu_api *cu = e->g->cu;
  tsr__cu_module mod;
  tsr_status st = tsr__gpu_module(ctx, e->g, k->source, flags, &mod);
  if (st) return st;
  tsr__cu_result r = cu->ModuleGetFunction(&e->fmain, mod, k->main_name);
  if (r != TSR__CU_SUCCESS) {
    char what[128];
    snprintf(what, sizeof what, "cuModuleGetFunction(%s)", k->main_name);
    return tsr__cu_fail(ctx, cu, r, what);
  }
  e->npre = 0;
  TSR_ASSERT(k->npre >= 0 && k->npre <= 2); /* the emitter's prologue: pack A, pack B */
  for (int i = 0; i < k->npre; i++) {
    r = cu->ModuleGetFunction(&e->fpre[i], mod, k->pre[i].name);
    if (r != TSR__CU_SUCCESS) {
      char what[128];
      snprintf(what, sizeof what, "cuModuleGetFunction(%s)", k->pre[i].name);
      return tsr__cu_fail(ctx, cu, r, what);
    }
    memcpy(e->pgrid[i], k->pre[i].grid, sizeof e->pgrid[i]);
    memcpy(e->pblock[i], k->pre[i].block, sizeof e->pblock[i]);
    snprintf(e->pre_name[i], sizeof e->pre_name[i], "%s", k->pre[i].name);
    /* the prologue's own limits: no spills, its block fits its registers */
    int regs, local, maxt;
    if ((st = func_attr(e, e->fpre[i], TSR__CU_FUNC_NUM_REGS, &regs,
                        "cuFuncGetAttribute(NUM_REGS, pack)")) ||
        (st = func_attr(e, e->fpre[i], TSR__CU_FUNC_LOCAL_SIZE_BYTES, &local,
                        "cuFuncGetAttribute(LOCAL_SIZE_BYTES, pack)")) ||
        (st = func_attr(e, e->fpre[i], TSR__CU_FUNC_MAX_THREADS_PER_BLOCK, &maxt,
                        "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK, pack)")))
      return st;
    if (local > 0 || (uint32_t)maxt < k->pre[i].block[0])
      return tsr__fail(ctx, TSR_ERR_REJECTED,
                       "%s: %d registers, %d local bytes per thread, at most %d threads per "
                       "block (launch needs %u, no spills)",
                       k->pre[i].name, regs, local, maxt, k->pre[i].block[0]);
    const uint32_t *mg = e->g->target.grid;
    for (int d = 0; d < 3; d++)
      if (k->pre[i].grid[d] == 0 || k->pre[i].grid[d] > mg[d])
        return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: %s dimension %c = %u outside 1..%u",
                         k->pre[i].name, "xyz"[d], k->pre[i].grid[d], mg[d]);
    e->npre = i + 1;
  }
  e->freduce = NULL;
  if (k->reduce_name[0]) {
    r = cu->ModuleGetFunction(&e->freduce, mod, k->reduce_name);
    if (r != TSR__CU_SUCCESS) {
      char what[128];
      snprintf(what, sizeof what, "cuModuleGetFunction(%s)", k->reduce_name);
      return tsr__cu_fail(ctx, cu, r, what);
    }
  }
  memcpy(e->grid, k->grid, sizeof e->grid);
  memcpy(e->block, k->block, sizeof e->block);
  memcpy(e->rgrid, k->reduce_grid, sizeof e->rgrid);
  memcpy(e->rblock, k->reduce_block, sizeof e->rblock);
  e->smem = k->smem_bytes;
  memcpy(e->sha256, k->sha256, sizeof e->sha256);
  if ((st = encode_tmaps(e, k))) return st;
  /* lazy: the claim flags start at zero, the call count with them */
  e->lazy_off = k->lazy_off;
  e->lazy_n = k->lazy_n;
  e->epoch = 0;
  e->pdl = k->pdl;
  TSR_ASSERT(!e->pdl || (e->lazy_n && e->npre >= 1));
  TSR_ASSERT(!e->lazy_n || 4u * (e->lazy_off + e->lazy_n) <= e->buf.w_bytes);
  if (e->lazy_n && (st = lazy_zero(e))) return st;
  if ((st = func_attr(e, e->fmain, TSR__CU_FUNC_NUM_REGS, &e->regs, "cuFuncGetAttribute(NUM_REGS)")) ||
      (st = func_attr(e, e->fmain, TSR__CU_FUNC_LOCAL_SIZE_BYTES, &e->local_bytes,
                      "cuFuncGetAttribute(LOCAL_SIZE_BYTES)")) ||
      (st = func_attr(e, e->fmain, TSR__CU_FUNC_SHARED_SIZE_BYTES, &e->static_smem,
                      "cuFuncGetAttribute(SHARED_SIZE_BYTES)")) ||
      (st = func_attr(e, e->fmain, TSR__CU_FUNC_MAX_THREADS_PER_BLOCK, &e->max_threads,
                      "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)")))
    return st;
  /* Dynamic shared memory beyond the default 48 KiB must be opted into. */
  if (e->smem > 48u * 1024u) {
    if ((uint64_t)e->smem + (uint64_t)e->static_smem > (uint64_t)e->g->target.smem_block_optin)
      return tsr__fail(ctx, TSR_ERR_REJECTED,
                       "shared memory: %u dynamic + %d static bytes exceed the device's "
                       "%u-byte opt-in limit",
                       e->smem, e->static_smem, e->g->target.smem_block_optin);
    r = cu->FuncSetAttribute(e->fmain, TSR__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)e->smem);
    if (r != TSR__CU_SUCCESS)
      return tsr__cu_fail(ctx, cu, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  e->launch_one = launch_abi;
  return TSR_OK;
}

tsr_status tsr__gexec_check_limits(tsr__gexec *e, int local_limit) {
  uint64_t threads = (uint64_t)e->block[0] * e->block[1] * e->block[2];
  if (threads > (uint64_t)e->max_threads)
    return tsr__fail(e->ctx, TSR_ERR_REJECTED,
                     "registers: %d per thread allow at most %d threads per block, the plan "
                     "needs %llu",
                     e->regs, e->max_threads, (unsigned long long)threads);
  const uint32_t *mg = e->g->target.grid;
  for (int i = 0; i < 3; i++)
    if (e->grid[i] == 0 || e->grid[i] > mg[i])
      return tsr__fail(e->ctx, TSR_ERR_OVERFLOW, "grid: dimension %c = %u outside 1..%u",
                       "xyz"[i], e->grid[i], mg[i]);
  if (local_limit >= 0 && e->local_bytes > local_limit)
    return tsr__fail(e->ctx, TSR_ERR_REJECTED,
                     "spills: %d local bytes per thread exceed the limit of %d (%d registers)",
                     e->local_bytes, local_limit, e->regs);
  return TSR_OK;
}

tsr_status tsr__gexec_reset_c(void *exec) {
  tsr__gexec *e = exec;
  tsr_status st = tsr__gpu_bind(e->ctx, e->g);
  return st ? st : c_initial(e->ctx, e->g, &e->buf);
}

tsr_status tsr__gexec_launch(void *exec, int n) {
  tsr__gexec *e = exec;
  tsr_status st = tsr__gpu_bind(e->ctx, e->g);
  for (int i = 0; !st && i < n; i++) st = e->launch_one(e);
  return st;
}

tsr_status tsr__gexec_sync(void *exec) {
  tsr__gexec *e = exec;
  tsr_status st = tsr__gpu_bind(e->ctx, e->g);
  if (st) return st;
  tsr__cu_result r = e->g->cu->StreamSynchronize(e->g->stream);
  return r == TSR__CU_SUCCESS ? TSR_OK
                              : tsr__cu_fail(e->ctx, e->g->cu, r, "cuStreamSynchronize (a "
                                                                  "launched kernel failed)");
}

tsr_status tsr__gexec_event_time(void *exec, int n, int64_t *ns) {
  tsr__gexec *e = exec;
  const tsr__cu_api *cu = e->g->cu;
  tsr_status st = tsr__gpu_bind(e->ctx, e->g);
  if (st) return st;
  CU_CHECK(e->ctx, cu, cu->EventRecord(e->ev0, e->g->stream), "cuEventRecord(start)");
  for (int i = 0; i < n; i++)
    if ((st = e->launch_one(e))) return st;
  CU_CHECK(e->ctx, cu, cu->EventRecord(e->ev1, e->g->stream), "cuEventRecord(end)");
  CU_CHECK(e->ctx, cu, cu->EventSynchronize(e->ev1), "cuEventSynchronize (a launched kernel failed)");
  float ms = 0.0f;
  CU_CHECK(e->ctx, cu, cu->EventElapsedTime(&ms, e->ev0, e->ev1), "cuEventElapsedTime");
  *ns = (int64_t)((double)ms * 1e6 + 0.5);
  return TSR_OK;
}

tsr_status tsr__gexec_download(void *exec, float *c) {
  tsr__gexec *e = exec;
  const tsr__cu_api *cu = e->g->cu;
  tsr_status st = tsr__gexec_sync(e);
  if (st) return st;
  int64_t rows, cols, ld, stride;
  tsr__stored_dims(&e->p, TSR_TENSOR_C, &rows, &cols, &ld, &stride);
  if (ld == cols && stride == rows * ld) {
    /* Compact C: no padding to leave untouched, so straight into c (a
     * fresh staging buffer cost page faults and a copy of 256 MiB per
     * 8192^2 download) */
    tsr__cu_result r = cu->MemcpyDtoH(c, e->buf.c, e->buf.nc * sizeof(float));
    return r == TSR__CU_SUCCESS ? TSR_OK : tsr__cu_fail(e->ctx, cu, r, "cuMemcpyDtoH(C)");
  }
  float *host = malloc(e->buf.nc * sizeof(float));
  if (!host) return tsr__fail(e->ctx, TSR_ERR_NOMEM, "cuda: out of host memory for C");
  tsr__cu_result r = cu->MemcpyDtoH(host, e->buf.c, e->buf.nc * sizeof(float));
  if (r != TSR__CU_SUCCESS) {
    free(host);
    return tsr__cu_fail(e->ctx, cu, r, "cuMemcpyDtoH(C)");
  }
  /* Only the logical m×n elements of each batch item; padding untouched. */
  for (int64_t bt = 0; bt < e->p.batch; bt++)
    for (int64_t i = 0; i < e->p.m; i++)
      memcpy(c + bt * stride + i * ld, host + bt * stride + i * ld, (size_t)e->p.n * sizeof(float));
  free(host);
  return TSR_OK;
}

void tsr__gexec_info(void *exec, tsr_plan_info *info) {
  tsr__gexec *e = exec;
  info->regs = e->regs;
  info->local_bytes = e->local_bytes;
  if (e->fmain) {
    info->smem_bytes = (uint64_t)e->smem + (uint64_t)(e->static_smem > 0 ? e->static_smem : 0);
    info->threads = e->block[0] * e->block[1] * e->block[2];
  }
  if (e->sha256[0]) memcpy(info->source_sha256, e->sha256, sizeof info->source_sha256);
}

void tsr__gexec_destroy(void *exec) {
  tsr__gexec *e = exec;
  if (!e) return;
  const tsr__cu_api *cu = e->g->cu;
  if (cu->CtxSetCurrent(e->g->cuctx) == TSR__CU_SUCCESS) {
    cu->StreamSynchronize(e->g->stream); /* nothing may still use the buffers */
    tsr__dbufs_free(e->g, &e->buf);
    if (e->ev0) cu->EventDestroy(e->ev0);
    if (e->ev1) cu->EventDestroy(e->ev1);
  }
  free(e);
}
