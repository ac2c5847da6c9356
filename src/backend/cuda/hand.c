/* The "hand" route: the handwritten fixed-geometry SGEMM (hand_kernel.c)
 * specialized to the problem by a block of #defines, compiled with NVRTC and
 * run through the shared kernel-ABI launcher. It shares no code with the
 * emitter. Its plan is fixed (hand_default_plan); any other plan is
 * TSR_ERR_UNSUPPORTED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/cuda/gpu.h"
#include "core/backend.h"
#include "core/context.h"
#include "core/hash.h"
#include "core/inputs.h"

extern const char tsr__hand_kernel_body[];

#define HAND_BM 128
#define HAND_BN 128
#define HAND_THREADS 256

/* The plan that describes the kernel (documented in docs/cuda.md). */
static void hand_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  (void)ctx;
  *out = (tsr_plan){.bm = HAND_BM, .bn = HAND_BN, .bk = 8, .wm = 32, .wn = 64, .tm = 8, .tn = 8,
                    .stages = 2, .vec = 1, .a = TSR_IN_STAGED, .b = TSR_IN_STAGED, .pad = 0,
                    .walk = {TSR_WALK_LINEAR, 1, 1}, .splitk = 1, .threads = 0,
                    .isa = TSR_ISA_AUTO, .mma = TSR_MMA_FFMA};
}

char *tsr__hand_source(const tsr_problem *p) {
  int64_t rows, cols, lda, ldb, ldc, sa, sb, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &rows, &cols, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &rows, &cols, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &rows, &cols, &ldc, &sc);
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "/* tessera hand route */\n"
                   "#define TSR_M %lldLL\n#define TSR_N %lldLL\n#define TSR_K %lldLL\n"
                   "#define TSR_LDA %lldLL\n#define TSR_LDB %lldLL\n#define TSR_LDC %lldLL\n"
                   "#define TSR_SA %lldLL\n#define TSR_SB %lldLL\n#define TSR_SC %lldLL\n"
                   "#define TSR_OPA %d\n#define TSR_OPB %d\n#define TSR_BETA0 %d\n",
                   (long long)p->m, (long long)p->n, (long long)p->k, (long long)lda,
                   (long long)ldb, (long long)ldc, (long long)sa, (long long)sb, (long long)sc,
                   p->op_a == TSR_OP_T, p->op_b == TSR_OP_T, p->beta == 0.0f);
  size_t blen = strlen(tsr__hand_kernel_body);
  char *src = malloc((size_t)n + blen + 1);
  if (!src) return NULL;
  memcpy(src, head, (size_t)n);
  memcpy(src + n, tsr__hand_kernel_body, blen + 1);
  return src;
}

static tsr_status hand_available(tsr_context *ctx) {
  tsr__gpu *g;
  tsr_status st = tsr__gpu_get(ctx, TSR_BACKEND_HAND, &g);
  if (st) return st;
  char msg[1024];
  if (!tsr__nvrtc_load(msg, sizeof msg)) return tsr__fail(ctx, TSR_ERR_NVRTC, "%s", msg);
  return TSR_OK;
}

static char *hand_source(const tsr_problem *p, const tsr_plan *plan) {
  (void)plan; /* the hand kernel has one fixed geometry */
  return tsr__hand_source(p);
}

static tsr_status hand_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  info->regs = info->local_bytes = -1;
  tsr_plan def;
  hand_default_plan(ctx, p, &def);
  tsr_status st = tsr__plan_require_default(ctx, "hand", plan, &def);
  if (st) return st;
  if ((st = tsr__precision_require(ctx, "hand", p, 1u << TSR_PREC_STRICT, TSR_PREC_STRICT,
                                   &info->precision)))
    return st;
  uint64_t h = ((uint64_t)p->m + HAND_BM - 1) / HAND_BM;
  uint64_t w = ((uint64_t)p->n + HAND_BN - 1) / HAND_BN;
  /* grid: x = column tiles (2^31-1), y = row tiles and z = batch (65535) */
  if (w > 2147483647u)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: %llu column tiles exceed 2147483647",
                     (unsigned long long)w);
  if (h > 65535u)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: %llu row tiles exceed 65535 (grid y)",
                     (unsigned long long)h);
  if ((uint64_t)p->batch > 65535u)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "grid: batch %lld exceeds 65535 (grid z)",
                     (long long)p->batch);
  info->grid_rows = (uint32_t)h;
  info->grid_cols = (uint32_t)w;
  info->grid_batch = (uint32_t)p->batch;
  info->threads = HAND_THREADS;
  info->smem_bytes = 2u * 2u * 8u * 128u * sizeof(float); /* static, two K steps of A and B */
  info->tail_m = p->m % HAND_BM != 0;
  info->tail_n = p->n % HAND_BN != 0;
  info->tail_k = p->k % 8 != 0;
  char *src = tsr__hand_source(p);
  if (!src) return tsr__fail(ctx, TSR_ERR_NOMEM, "hand: out of host memory");
  tsr__sha256_hex(src, strlen(src), info->source_sha256);
  free(src);
  return TSR_OK;
}

static tsr_status hand_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                               const float *a, const float *b, const float *c0, void **exec) {
  *exec = NULL;
  if (p->beta != 0.0f && !c0) return tsr__fail(ctx, TSR_ERR_INVALID, "hand: beta != 0 needs C0");
  tsr_plan_info info;
  tsr_status st = hand_realize(ctx, p, plan, &info);
  if (st) return st;
  if ((st = hand_available(ctx))) return st;
  tsr__kernel_src k;
  memset(&k, 0, sizeof k);
  k.source = tsr__hand_source(p);
  if (!k.source) return tsr__fail(ctx, TSR_ERR_NOMEM, "hand: out of host memory");
  k.len = strlen(k.source);
  memcpy(k.sha256, info.source_sha256, sizeof k.sha256);
  snprintf(k.main_name, sizeof k.main_name, "%s", TSR__HAND_KERNEL_NAME);
  k.grid[0] = info.grid_cols;
  k.grid[1] = info.grid_rows;
  k.grid[2] = info.grid_batch;
  k.block[0] = HAND_THREADS;
  k.block[1] = k.block[2] = 1;
  tsr__gexec *e = NULL;
  st = tsr__gexec_create(ctx, TSR_BACKEND_HAND, p, a, b, c0, 0, &e);
  if (!st) st = tsr__gexec_attach_kernel(e, &k, 0);
  if (!st) st = tsr__gexec_check_limits(e, 0); /* the hand kernel must not spill */
  free(k.source);
  if (st) {
    tsr__gexec_destroy(e);
    return st;
  }
  *exec = e;
  return TSR_OK;
}

static void hand_release(tsr_context *ctx) { tsr__gpu_release(ctx, TSR_BACKEND_HAND); }

const tsr__backend tsr__backend_hand = {
    .api = TSR__BACKEND_API,
    .name = "hand",
    .is_gpu = 1,
    .available = hand_available,
    .default_plan = hand_default_plan,
    .realize = hand_realize,
    .prepare = hand_prepare,
    TSR__GEXEC_OPS,
    .context_release = hand_release,
    .describe = tsr__gpu_backend_describe,
    .source = hand_source,
};
