/* The GPU FP64 oracle: a plain FP64 kernel (its own source, independent of
 * the emitter and the hand kernel), one thread per output element, summing
 * over k in ascending order with explicitly rounded FP64 multiply and add
 * (no contraction), exactly like tsr_oracle_cpu; the tests check the two
 * agree. Output layout as tsr_oracle_cpu: ref[b*m*n + i*n + j]. */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/gpu.h"
#include "core/context.h"
#include "core/inputs.h"

static const char oracle_src[] =
    "extern \"C\" __global__ void tsr_oracle_f64(\n"
    "    const float *A, const float *B, const float *C0, double *R, long long m, long long n,\n"
    "    long long k, long long lda, long long ldb, long long ldc, long long sa, long long sb,\n"
    "    long long sc, int opa, int opb, double alpha, double beta, int has_c) {\n"
    "  const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  const long long bt = blockIdx.z;\n"
    "  if (i >= m || j >= n) return;\n"
    "  const float *Ab = A + bt * sa;\n"
    "  const float *Bb = B + bt * sb;\n"
    "  double acc = 0.0;\n"
    "  for (long long kk = 0; kk < k; kk++) {\n"
    "    const double av = (double)(opa ? Ab[kk * lda + i] : Ab[i * lda + kk]);\n"
    "    const double bv = (double)(opb ? Bb[j * ldb + kk] : Bb[kk * ldb + j]);\n"
    "    acc = __dadd_rn(acc, __dmul_rn(av, bv));\n"
    "  }\n"
    "  double v = __dmul_rn(alpha, acc);\n"
    "  if (has_c) v = __dadd_rn(v, __dmul_rn(beta, (double)C0[bt * sc + i * ldc + j]));\n"
    "  R[(bt * m + i) * n + j] = v;\n"
    "}\n";

#define ORACLE_TILE 16

tsr_status tsr_oracle_gpu(tsr_context *ctx, const tsr_problem *p, const float *a, const float *b,
                          const float *c0, double *ref) {
  if (!ctx) return TSR_ERR_INVALID;
  tsr__clear(ctx);
  if (!p || !a || !b || !ref || (p->beta != 0.0f && !c0))
    return tsr__fail(ctx, TSR_ERR_INVALID, "oracle_gpu: NULL argument");
  tsr_problem q = *p;
  char msg[512];
  tsr_status st = tsr_problem_check(&q, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  uint64_t gx = ((uint64_t)q.n + ORACLE_TILE - 1) / ORACLE_TILE;
  uint64_t gy = ((uint64_t)q.m + ORACLE_TILE - 1) / ORACLE_TILE;
  if (gx > 2147483647u || gy > 65535u || (uint64_t)q.batch > 65535u)
    return tsr__fail(ctx, TSR_ERR_OVERFLOW,
                     "oracle_gpu: grid %llux%llux%lld exceeds 2147483647x65535x65535",
                     (unsigned long long)gx, (unsigned long long)gy, (long long)q.batch);
  uint64_t nref = (uint64_t)q.batch * (uint64_t)q.m * (uint64_t)q.n;
  if (nref > SIZE_MAX / sizeof(double))
    return tsr__fail(ctx, TSR_ERR_OVERFLOW, "oracle_gpu: output exceeds the address space");

  tsr__gpu *g;
  if ((st = tsr__gpu_get(ctx, TSR_BACKEND_CUDA, &g))) return st;
  tsr__cu_module mod;
  if ((st = tsr__gpu_module(ctx, g, oracle_src, 0, &mod))) return st;
  const tsr__cu_api *cu = g->cu;
  tsr__cu_function fn;
  tsr__cu_result r = cu->ModuleGetFunction(&fn, mod, "tsr_oracle_f64");
  if (r != TSR__CU_SUCCESS) return tsr__cu_fail(ctx, cu, r, "cuModuleGetFunction(tsr_oracle_f64)");

  tsr__dbufs d;
  if ((st = tsr__dbufs_create(ctx, g, &q, a, b, q.beta != 0.0f ? c0 : NULL, 0, &d))) return st;
  tsr__cu_ptr dref = 0;
  size_t ref_bytes = (size_t)nref * sizeof(double);
  if ((r = cu->MemAlloc(&dref, ref_bytes)) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, cu, r, "cuMemAlloc(oracle output)");
    goto done;
  }
  int64_t rows, cols, lda, ldb, ldc, sa, sb, sc;
  tsr__stored_dims(&q, TSR_TENSOR_A, &rows, &cols, &lda, &sa);
  tsr__stored_dims(&q, TSR_TENSOR_B, &rows, &cols, &ldb, &sb);
  tsr__stored_dims(&q, TSR_TENSOR_C, &rows, &cols, &ldc, &sc);
  long long m = q.m, n = q.n, k = q.k;
  long long llda = lda, lldb = ldb, lldc = ldc, lsa = sa, lsb = sb, lsc = sc;
  int opa = q.op_a == TSR_OP_T, opb = q.op_b == TSR_OP_T, has_c = q.beta != 0.0f;
  double alpha = q.alpha, beta = q.beta;
  tsr__cu_ptr c0p = has_c ? d.c0 : d.c; /* never read when has_c == 0 */
  void *args[] = {&d.a, &d.b,  &c0p, &dref, &m,   &n,   &k,     &llda,  &lldb,
                  &lldc, &lsa, &lsb, &lsc,  &opa, &opb, &alpha, &beta, &has_c};
  r = cu->LaunchKernel(fn, (unsigned)gx, (unsigned)gy, (unsigned)q.batch, ORACLE_TILE,
                       ORACLE_TILE, 1, 0, g->stream, args, NULL);
  if (r != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, cu, r, "cuLaunchKernel(tsr_oracle_f64)");
    goto done;
  }
  if ((r = cu->StreamSynchronize(g->stream)) != TSR__CU_SUCCESS) {
    st = tsr__cu_fail(ctx, cu, r, "cuStreamSynchronize(oracle)");
    goto done;
  }
  if ((r = cu->MemcpyDtoH(ref, dref, ref_bytes)) != TSR__CU_SUCCESS)
    st = tsr__cu_fail(ctx, cu, r, "cuMemcpyDtoH(oracle output)");
done:
  if (dref) cu->MemFree(dref);
  tsr__dbufs_free(g, &d);
  return st;
}
