/* The "cublas" route: cublasSgemm / cublasSgemmStridedBatched with
 * CUBLAS_PEDANTIC_MATH (strict FP32: no TF32, no reduced-precision
 * emulation), or CUBLAS_TF32_TENSOR_OP_MATH for precision tf32 (the TF32
 * class's peer). Row-major C = op(A)·op(B) is computed as the column-major
 * C^T = op(B)^T·op(A)^T: a row-major matrix with leading dimension ld is the
 * column-major transpose with the same ld, so B and A swap places and keep
 * their own op. beta == 0 never reads C (cuBLAS guarantees it), so the NaN
 * poison stays a valid check. The plan is a fixed token (cuBLAS chooses its
 * own kernel). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/cuda/gpu.h"
#include "backend/cuda/loader_cublas.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/inputs.h"

static void cublas_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  (void)ctx;
  *out = (tsr_plan){.bm = 1, .bn = 1, .bk = 1, .wm = 1, .wn = 1, .tm = 1, .tn = 1, .stages = 1,
                    .vec = 1, .a = TSR_IN_STAGED, .b = TSR_IN_STAGED, .pad = 0,
                    .walk = {TSR_WALK_LINEAR, 1, 1}, .splitk = 1, .threads = 0,
                    .isa = TSR_ISA_AUTO, .mma = TSR_MMA_FFMA};
}

static tsr_status blas_fail(tsr_context *ctx, const tsr__cublas_api *bl, tsr__cublas_status s,
                            const char *what) {
  return tsr__fail(ctx, s == TSR__CUBLAS_ALLOC_FAILED ? TSR_ERR_NOMEM : TSR_ERR_CUBLAS,
                   "cublas: %s: %s (status %d)", what, bl->GetStatusString(s), (int)s);
}

static const tsr__cublas_api *blas_api;

static void blas_destroy(void *h) { blas_api->Destroy((tsr__cublas_handle)h); }

/* The slot's GPU state with a cuBLAS handle bound to its stream. */
static tsr_status blas_get(tsr_context *ctx, tsr__gpu **out) {
  char msg[1024];
  const tsr__cublas_api *bl = tsr__cublas_load(msg, sizeof msg);
  tsr__gpu *g;
  tsr_status st = tsr__gpu_get(ctx, TSR_BACKEND_CUBLAS, &g);
  if (st) return st;
  if (!bl) return tsr__fail(ctx, TSR_ERR_CUBLAS, "%s", msg);
  blas_api = bl;
  if (!g->blas) {
    if ((st = tsr__gpu_bind(ctx, g))) return st;
    tsr__cublas_handle h = NULL;
    tsr__cublas_status s = bl->Create(&h);
    if (s != TSR__CUBLAS_SUCCESS) return blas_fail(ctx, bl, s, "cublasCreate");
    if ((s = bl->SetStream(h, g->stream)) != TSR__CUBLAS_SUCCESS ||
        (s = bl->SetMathMode(h, TSR__CUBLAS_PEDANTIC_MATH)) != TSR__CUBLAS_SUCCESS) {
      bl->Destroy(h);
      return blas_fail(ctx, bl, s, "cublasSetStream/cublasSetMathMode(PEDANTIC)");
    }
    g->blas = h;
    g->blas_destroy = blas_destroy;
  }
  *out = g;
  return TSR_OK;
}

static tsr_status cublas_available(tsr_context *ctx) {
  tsr__gpu *g;
  return blas_get(ctx, &g);
}

static tsr_status cublas_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                 tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  info->regs = info->local_bytes = -1;
  tsr_plan def;
  cublas_default_plan(ctx, p, &def);
  tsr_status st = tsr__plan_require_default(ctx, "cublas", plan, &def);
  if (st) return st;
  /* strict: CUBLAS_PEDANTIC_MATH; tf32: CUBLAS_TF32_TENSOR_OP_MATH (cuBLAS has
   * no FP32-accurate tensor-core mode on sm_90) */
  if ((st = tsr__precision_require(ctx, "cublas", p, (1u << TSR_PREC_STRICT) | (1u << TSR_PREC_TF32),
                                   TSR_PREC_STRICT, &info->precision)))
    return st;
  int64_t r, c, lda, ldb, ldc, sa, sb, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &r, &c, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &r, &c, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &r, &c, &ldc, &sc);
  const struct { const char *name; int64_t v; } ints[] = {
      {"m", p->m}, {"n", p->n}, {"k", p->k}, {"batch", p->batch},
      {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (ints[i].v > INT_MAX)
      return tsr__fail(ctx, TSR_ERR_OVERFLOW, "%s: %lld exceeds cuBLAS's int limit %d",
                       ints[i].name, (long long)ints[i].v, INT_MAX);
  info->grid_batch = (uint32_t)p->batch;
  info->tail_m = info->tail_n = info->tail_k = 0;
  return TSR_OK;
}

static tsr_status launch_cublas(tsr__gexec *e) {
  const tsr__cublas_api *bl = blas_api;
  const tsr_problem *p = &e->p;
  int64_t r, c, lda, ldb, ldc, sa, sb, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &r, &c, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &r, &c, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &r, &c, &ldc, &sc);
  int ta = p->op_b == TSR_OP_T ? TSR__CUBLAS_OP_T : TSR__CUBLAS_OP_N; /* B^T first */
  int tb = p->op_a == TSR_OP_T ? TSR__CUBLAS_OP_T : TSR__CUBLAS_OP_N;
  const float *A = (const float *)(uintptr_t)e->buf.a;
  const float *B = (const float *)(uintptr_t)e->buf.b;
  float *C = (float *)(uintptr_t)e->buf.c;
  tsr__cublas_status s;
  int math = p->precision == TSR_PREC_TF32 ? TSR__CUBLAS_TF32_TENSOR_OP_MATH : TSR__CUBLAS_PEDANTIC_MATH;
  if ((s = bl->SetMathMode((tsr__cublas_handle)e->g->blas, math)) != TSR__CUBLAS_SUCCESS)
    return blas_fail(e->ctx, bl, s, "cublasSetMathMode");
  if (p->batch == 1)
    s = bl->Sgemm((tsr__cublas_handle)e->g->blas, ta, tb, (int)p->n, (int)p->m, (int)p->k,
                  &p->alpha, B, (int)ldb, A, (int)lda, &p->beta, C, (int)ldc);
  else
    s = bl->SgemmStridedBatched((tsr__cublas_handle)e->g->blas, ta, tb, (int)p->n, (int)p->m,
                                (int)p->k, &p->alpha, B, (int)ldb, (long long)sb, A, (int)lda,
                                (long long)sa, &p->beta, C, (int)ldc, (long long)sc,
                                (int)p->batch);
  return s == TSR__CUBLAS_SUCCESS ? TSR_OK
                                  : blas_fail(e->ctx, bl, s, p->batch == 1
                                                                 ? "cublasSgemm"
                                                                 : "cublasSgemmStridedBatched");
}

static tsr_status cublas_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                 const float *a, const float *b, const float *c0, void **exec) {
  *exec = NULL;
  if (p->beta != 0.0f && !c0)
    return tsr__fail(ctx, TSR_ERR_INVALID, "cublas: beta != 0 needs C0");
  tsr_plan_info info;
  tsr_status st = cublas_realize(ctx, p, plan, &info);
  if (st) return st;
  tsr__gpu *g;
  if ((st = blas_get(ctx, &g))) return st;
  tsr__gexec *e = NULL;
  if ((st = tsr__gexec_create(ctx, TSR_BACKEND_CUBLAS, p, a, b, c0, 0, &e))) return st;
  e->launch_one = launch_cublas;
  *exec = e;
  return TSR_OK;
}

static void cublas_release(tsr_context *ctx) { tsr__gpu_release(ctx, TSR_BACKEND_CUBLAS); }

const tsr__backend tsr__backend_cublas = {
    .api = TSR__BACKEND_API,
    .name = "cublas",
    .is_gpu = 1,
    .available = cublas_available,
    .default_plan = cublas_default_plan,
    .realize = cublas_realize,
    .prepare = cublas_prepare,
    TSR__GEXEC_OPS,
    .context_release = cublas_release,
    .describe = tsr__gpu_backend_describe,
};
