/* The GPU FP64 oracle: a plain FP64 kernel (its own source, independent of
 * the emitter and the hand kernel), one thread per output element, summing
 * over k in ascending order with explicitly rounded FP64 multiply and add
 * (no contraction), exactly like tsr_oracle_cpu; the tests check the two
 * agree. Output layout as tsr_oracle_cpu: ref[b*m*n + i*n + j]. The same
 * thread also forms the accuracy contract's inputs (docs/accuracy.md): the
 * componentwise scale |alpha||A||B| + |beta||C0| and the strict FP32
 * reference (k-ascending fmaf), whose Frobenius error the host reduces. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/gpu.h"
#include "core/context.h"
#include "core/inputs.h"

static const char oracle_src[] =
    "extern \"C\" __global__ void tsr_oracle_f64(\n"
    "    const float *A, const float *B, const float *C0, double *R, float *S, float *F,\n"
    "    long long m, long long n,\n"
    "    long long k, long long lda, long long ldb, long long ldc, long long sa, long long sb,\n"
    "    long long sc, int opa, int opb, double alpha, double beta, int has_c, int extra) {\n"
    "  const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  const long long bt = blockIdx.z;\n"
    "  if (i >= m || j >= n) return;\n"
    "  const float *Ab = A + bt * sa;\n"
    "  const float *Bb = B + bt * sb;\n"
    "  double acc = 0.0, sacc = 0.0;\n"
    "  float facc = 0.0f;\n"
    "  for (long long kk = 0; kk < k; kk++) {\n"
    "    const float af = opa ? Ab[kk * lda + i] : Ab[i * lda + kk];\n"
    "    const float bf = opb ? Bb[j * ldb + kk] : Bb[kk * ldb + j];\n"
    "    const double av = (double)af, bv = (double)bf;\n"
    "    acc = __dadd_rn(acc, __dmul_rn(av, bv));\n"
    "    if (extra) {\n"
    "      sacc = __dadd_rn(sacc, __dmul_rn(fabs(av), fabs(bv)));\n"
    "      facc = __fmaf_rn(af, bf, facc);\n"
    "    }\n"
    "  }\n"
    "  const double cv = has_c ? (double)C0[bt * sc + i * ldc + j] : 0.0;\n"
    "  double v = __dmul_rn(alpha, acc);\n"
    "  if (has_c) v = __dadd_rn(v, __dmul_rn(beta, cv));\n"
    "  const long long e = (bt * m + i) * n + j;\n"
    "  R[e] = v;\n"
    "  if (extra) {\n"
    "    S[e] = (float)__dadd_rn(__dmul_rn(fabs(alpha), sacc), __dmul_rn(fabs(beta), fabs(cv)));\n"
    "    F[e] = has_c ? __fmaf_rn((float)alpha, facc, __fmul_rn((float)beta, (float)cv))\n"
    "                 : __fmul_rn((float)alpha, facc);\n"
    "  }\n"
    "}\n";

#define ORACLE_TILE 16

tsr_status tsr_oracle_gpu(tsr_context *ctx, const tsr_problem *p, const float *a, const float *b,
                          const float *c0, double *ref, float *scale, double *strict_rel_fro) {
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
  tsr__cu_ptr dref = 0, dscale = 0, dstrict = 0;
  float *strict = NULL;
  int extra = scale || strict_rel_fro;
  size_t ref_bytes = (size_t)nref * sizeof(double), f_bytes = (size_t)nref * sizeof(float);
  if ((r = cu->MemAlloc(&dref, ref_bytes)) != TSR__CU_SUCCESS ||
      (extra && (r = cu->MemAlloc(&dscale, f_bytes)) != TSR__CU_SUCCESS) ||
      (extra && (r = cu->MemAlloc(&dstrict, f_bytes)) != TSR__CU_SUCCESS)) {
    st = tsr__cu_fail(ctx, cu, r, "cuMemAlloc(oracle output)");
    goto done;
  }
  if (strict_rel_fro && !(strict = malloc(f_bytes))) {
    st = tsr__fail(ctx, TSR_ERR_NOMEM, "oracle_gpu: cannot allocate %zu bytes", f_bytes);
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
  tsr__cu_ptr sp = extra ? dscale : dref, fp = extra ? dstrict : dref; /* unused when !extra */
  void *args[] = {&d.a, &d.b, &c0p, &dref, &sp,  &fp,    &m,    &n,     &k,     &llda,
                  &lldb, &lldc, &lsa, &lsb, &lsc, &opa, &opb, &alpha, &beta, &has_c, &extra};
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
  if ((r = cu->MemcpyDtoH(ref, dref, ref_bytes)) != TSR__CU_SUCCESS ||
      (scale && (r = cu->MemcpyDtoH(scale, dscale, f_bytes)) != TSR__CU_SUCCESS) ||
      (strict && (r = cu->MemcpyDtoH(strict, dstrict, f_bytes)) != TSR__CU_SUCCESS)) {
    st = tsr__cu_fail(ctx, cu, r, "cuMemcpyDtoH(oracle output)");
    goto done;
  }
  if (strict) { /* in element order: the same sum as tsr_oracle_cpu's up to association */
    double err2 = 0.0, ref2 = 0.0;
    for (uint64_t e = 0; e < nref; e++)
      if (isfinite(strict[e]) && isfinite(ref[e])) {
        double d = (double)strict[e] - ref[e];
        err2 += d * d;
        ref2 += ref[e] * ref[e];
      }
    *strict_rel_fro = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  }
done:
  free(strict);
  if (dref) cu->MemFree(dref);
  if (dscale) cu->MemFree(dscale);
  if (dstrict) cu->MemFree(dstrict);
  tsr__dbufs_free(g, &d);
  return st;
}
