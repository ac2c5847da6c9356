/* CPU backend vtable. (Placeholder compute: a plain loop; replaced by the
 * packed micro-kernel implementation.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/context.h"
#include "core/inputs.h"

static tsr_status cpu_available(tsr_context *ctx) { return TSR_OK; }

static void cpu_default_plan(const tsr_problem *p, tsr_plan *out) {
  *out = (tsr_plan){.bm = 128, .bn = 128, .bk = 256, .wm = 1, .wn = 1, .tm = 1, .tn = 1,
                    .stages = 1, .vec = 1, .a = TSR_IN_STAGED, .b = TSR_IN_STAGED, .pad = 0,
                    .walk = {TSR_WALK_LINEAR, 1, 1}, .splitk = 1, .threads = 0,
                    .isa = TSR_ISA_AUTO};
}

static tsr_status cpu_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  uint64_t h = (uint64_t)((p->m + plan->bm - 1) / plan->bm);
  uint64_t w = (uint64_t)((p->n + plan->bn - 1) / plan->bn);
  if (h > UINT32_MAX || w > UINT32_MAX)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "plan: tile grid %llux%llu exceeds uint32",
                     (unsigned long long)h, (unsigned long long)w);
  char msg[256];
  tsr_status st = tsr_walk_check(&plan->walk, (uint32_t)h, (uint32_t)w, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  tsr_walk_normalize(&info->plan.walk, (uint32_t)h, (uint32_t)w);
  info->grid_rows = (uint32_t)h;
  info->grid_cols = (uint32_t)w;
  info->grid_batch = (uint32_t)p->batch;
  info->threads = 1;
  info->regs = info->local_bytes = -1;
  info->tail_m = p->m % plan->bm != 0;
  info->tail_n = p->n % plan->bn != 0;
  info->tail_k = p->k % plan->bk != 0;
  return TSR_OK;
}

tsr_status tsr__cpu_gemm(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                         const float *a, const float *b, float *c) {
  int64_t ar, ac, lda, sa, br, bc, ldb, sb, cr, cc, ldc, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &ar, &ac, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &br, &bc, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &ldc, &sc);
  for (int64_t bt = 0; bt < p->batch; bt++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        float acc = 0.0f;
        for (int64_t k = 0; k < p->k; k++) {
          float av = p->op_a == TSR_OP_N ? a[bt * sa + i * lda + k] : a[bt * sa + k * lda + i];
          float bv = p->op_b == TSR_OP_N ? b[bt * sb + k * ldb + j] : b[bt * sb + j * ldb + k];
          acc += av * bv;
        }
        float *out = &c[bt * sc + i * ldc + j];
        *out = p->beta == 0.0f ? p->alpha * acc : p->alpha * acc + p->beta * *out;
      }
  return TSR_OK;
}

typedef struct {
  tsr_context *ctx;
  tsr_problem p;
  tsr_plan plan;
  const float *a, *b;
  float *c, *c0;
} cpu_exec;

static tsr_status cpu_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              const float *a, const float *b, const float *c0, void **exec) {
  cpu_exec *e = calloc(1, sizeof *e);
  int64_t nc = tsr_problem_elems_c(p);
  if (!e) return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of host memory");
  e->c = malloc((size_t)nc * sizeof(float));
  e->c0 = c0 ? malloc((size_t)nc * sizeof(float)) : NULL;
  if (!e->c || (c0 && !e->c0)) {
    free(e->c);
    free(e->c0);
    free(e);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "cpu: out of host memory for C");
  }
  if (c0) memcpy(e->c0, c0, (size_t)nc * sizeof(float));
  e->ctx = ctx;
  e->p = *p;
  e->plan = *plan;
  e->a = a;
  e->b = b;
  *exec = e;
  if (c0) memcpy(e->c, c0, (size_t)nc * sizeof(float));
  else tsr_poison(p, e->c);
  return TSR_OK;
}

static tsr_status cpu_reset_c(void *exec) {
  cpu_exec *e = exec;
  if (e->c0) memcpy(e->c, e->c0, (size_t)tsr_problem_elems_c(&e->p) * sizeof(float));
  else tsr_poison(&e->p, e->c);
  return TSR_OK;
}

static tsr_status cpu_launch(void *exec, int n) {
  cpu_exec *e = exec;
  for (int i = 0; i < n; i++) {
    tsr_status st = tsr__cpu_gemm(e->ctx, &e->p, &e->plan, e->a, e->b, e->c);
    if (st) return st;
  }
  return TSR_OK;
}

static tsr_status cpu_sync(void *exec) { return TSR_OK; }

static tsr_status cpu_download(void *exec, float *c) {
  cpu_exec *e = exec;
  int64_t r, cols, ld, stride;
  tsr__stored_dims(&e->p, TSR_TENSOR_C, &r, &cols, &ld, &stride);
  for (int64_t b = 0; b < e->p.batch; b++)
    for (int64_t i = 0; i < e->p.m; i++)
      memcpy(c + b * stride + i * ld, e->c + b * stride + i * ld, (size_t)e->p.n * sizeof(float));
  return TSR_OK;
}

static void cpu_exec_info(void *exec, tsr_plan_info *info) {}

static void cpu_destroy(void *exec) {
  cpu_exec *e = exec;
  if (!e) return;
  free(e->c);
  free(e->c0);
  free(e);
}

const tsr__backend tsr__backend_cpu = {
    .name = "cpu",
    .is_gpu = 0,
    .available = cpu_available,
    .default_plan = cpu_default_plan,
    .realize = cpu_realize,
    .prepare = cpu_prepare,
    .reset_c = cpu_reset_c,
    .launch = cpu_launch,
    .sync = cpu_sync,
    .event_time = NULL,
    .download = cpu_download,
    .exec_info = cpu_exec_info,
    .destroy = cpu_destroy,
    .context_release = NULL,
};
