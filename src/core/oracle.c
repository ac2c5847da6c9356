/* FP64 reference GEMM. Deliberately plain: it shares no code with any
 * backend under test. Blocked over K-rows of B only for cache reuse (op(B) =
 * B^T through a k-major copy, kmajor_b), and split over output rows across
 * threads for speed on large shapes.
 *
 * The same pass yields the two other inputs of the accuracy contract
 * (docs/accuracy.md): the scale |alpha||A||B| + |beta||C0| of the
 * componentwise bound, and the strict FP32 reference (a k-ascending FMA sum
 * per element, the FFMA path's error on these inputs), reduced to its
 * relative Frobenius error. The FMA loop is compiled for AVX2+FMA when the
 * CPU has it (same results as fmaf: an FMA is exactly rounded either way). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/context.h"
#include "core/inputs.h"

typedef struct {
  const tsr_problem *p;
  const float *a, *b, *c0;
  int b_kmajor; /* b is op(B) copied k-major (kmajor_b), not the stored B */
  double *ref;
  float *scale;
  int strict;
  int64_t row0, row1; /* global rows over batch*m */
  double err2, ref2;  /* strict reference: sum of squared errors, of squared ref */
  int nomem;
} oracle_job;

/* One K step of a row: acc += av*b and, when sacc (then also facc) is given,
 * sacc += |av||b| and facc = fma(av, b, facc). Branches outside the loops
 * so that each loop vectorizes. */
#define ORACLE_STEP_BODY                                                                     \
  double av = (double)avf, aav = fabs(av);                                                    \
  if (!sacc) {                                                                                \
    if (bstep == 1)                                                                           \
      for (int64_t x = 0; x < n; x++) acc[x] += av * (double)brow[x];                         \
    else                                                                                      \
      for (int64_t x = 0; x < n; x++) acc[x] += av * (double)brow[x * bstep];                 \
  } else if (bstep == 1) {                                                                    \
    for (int64_t x = 0; x < n; x++) {                                                         \
      acc[x] += av * (double)brow[x];                                                         \
      sacc[x] += aav * fabs((double)brow[x]);                                                 \
      facc[x] = __builtin_fmaf(avf, brow[x], facc[x]);                                        \
    }                                                                                         \
  } else {                                                                                    \
    for (int64_t x = 0; x < n; x++) {                                                         \
      acc[x] += av * (double)brow[x * bstep];                                                 \
      sacc[x] += aav * fabs((double)brow[x * bstep]);                                         \
      facc[x] = __builtin_fmaf(avf, brow[x * bstep], facc[x]);                                \
    }                                                                                         \
  }

static void step_generic(int64_t n, const float *brow, int64_t bstep, float avf, double *acc,
                         double *sacc, float *facc) {
  ORACLE_STEP_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void step_fma(int64_t n, const float *brow,
                                                         int64_t bstep, float avf, double *acc,
                                                         double *sacc, float *facc) {
  ORACLE_STEP_BODY
}
static int have_fma(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
#define step_fma step_generic
static int have_fma(void) { return 0; }
#endif

static void *oracle_rows(void *arg) {
  oracle_job *j = arg;
  const tsr_problem *p = j->p;
  int64_t ar, ac, lda, sa, br, bc, ldb, sb, cr, cc, ldc, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &ar, &ac, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &br, &bc, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &ldc, &sc);
  int b_rows = p->op_b == TSR_OP_N; /* op(B)'s row kk contiguous at B + kk * ldb */
  if (j->b_kmajor) {
    ldb = p->n;
    sb = p->k * p->n;
    b_rows = 1;
  }
  void (*step)(int64_t, const float *, int64_t, float, double *, double *, float *) =
      have_fma() ? step_fma : step_generic;
  double *acc = malloc((size_t)p->n * sizeof *acc);
  /* scale and strict come from one loop: both are computed when either is asked */
  int extra = j->scale || j->strict;
  double *sacc = extra ? malloc((size_t)p->n * sizeof *sacc) : NULL;
  float *facc = extra ? malloc((size_t)p->n * sizeof *facc) : NULL;
  if (!acc || (extra && (!sacc || !facc))) {
    free(acc);
    free(sacc);
    free(facc);
    j->nomem = 1;
    return NULL;
  }
  for (int64_t g = j->row0; g < j->row1; g++) {
    int64_t bt = g / p->m, i = g % p->m;
    const float *A = j->a + bt * sa;
    const float *B = j->b + bt * sb;
    for (int64_t x = 0; x < p->n; x++) {
      acc[x] = 0.0;
      if (sacc) sacc[x] = 0.0;
      if (facc) facc[x] = 0.0f;
    }
    for (int64_t kk = 0; kk < p->k; kk++) {
      float av = p->op_a == TSR_OP_N ? A[i * lda + kk] : A[kk * lda + i];
      if (b_rows) step(p->n, B + kk * ldb, 1, av, acc, sacc, facc);
      else step(p->n, B + kk, ldb, av, acc, sacc, facc);
    }
    double *out = j->ref + bt * p->m * p->n + i * p->n;
    float *sout = j->scale ? j->scale + bt * p->m * p->n + i * p->n : NULL;
    for (int64_t x = 0; x < p->n; x++) {
      double cv = p->beta != 0.0f ? (double)j->c0[bt * sc + i * ldc + x] : 0.0;
      double v = (double)p->alpha * acc[x];
      if (p->beta != 0.0f) v += (double)p->beta * cv;
      out[x] = v;
      if (sout) sout[x] = (float)(fabs((double)p->alpha) * sacc[x] + fabs((double)p->beta) * fabs(cv));
      if (j->strict) {
        float s = p->beta != 0.0f ? __builtin_fmaf(p->alpha, facc[x], p->beta * (float)cv)
                                  : p->alpha * facc[x];
        if (isfinite(s) && isfinite(v)) {
          double e = (double)s - v;
          j->err2 += e * e;
          j->ref2 += v * v;
        }
      }
    }
  }
  free(acc);
  free(sacc);
  free(facc);
  return NULL;
}

/* op(B) = B^T read in place walks B's rows for every k of every output row: one
 * cache line and, without huge pages, one TLB entry per element (on a 2-core Zen
 * guest with transparent huge pages on madvise, 512x4096x11008:NT's oracle took
 * 240 s against 3.3 s for 512x4096x4096 NN). A k-major copy of op(B), made in
 * 64x64 blocks, turns that walk into the contiguous one of op(B) = B. Every sum
 * keeps its k-ascending sequence of the same products: the results are
 * bit-identical. NULL when there is no memory for it (the strided walk then). */
static float *kmajor_b(const tsr_problem *p, const float *b) {
  int64_t br, bc, ldb, sb;
  tsr__stored_dims(p, TSR_TENSOR_B, &br, &bc, &ldb, &sb);
  const int64_t n = p->n, k = p->k, kn = k * n;
  if ((uint64_t)kn > SIZE_MAX / sizeof(float) / (uint64_t)p->batch) return NULL;
  float *t = malloc((size_t)(kn * p->batch) * sizeof *t);
  if (!t) return NULL;
  enum { TB = 64 };
  for (int64_t bt = 0; bt < p->batch; bt++)       /* batch items */
    for (int64_t x0 = 0; x0 < n; x0 += TB)         /* 64-column blocks of op(B) */
      for (int64_t k0 = 0; k0 < k; k0 += TB) {     /* 64-row blocks of op(B) */
        int64_t x1 = x0 + TB < n ? x0 + TB : n, k1 = k0 + TB < k ? k0 + TB : k;
        for (int64_t x = x0; x < x1; x++)
          for (int64_t kk = k0; kk < k1; kk++) t[bt * kn + kk * n + x] = b[bt * sb + x * ldb + kk];
      }
  return t;
}

tsr_status tsr_oracle_cpu(const tsr_problem *p, const float *a, const float *b, const float *c0,
                          double *ref, float *scale, double *strict_rel_fro) {
  if (!p || !a || !b || !ref || (p->beta != 0.0f && !c0)) return TSR_ERR_INVALID;
  int64_t rows = p->batch * p->m;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nt = ncpu > 0 ? (int)(ncpu > 64 ? 64 : ncpu) : 1;
  if (rows < 64 || (double)p->m * p->n * p->k * p->batch < 1e6) nt = 1;
  if (nt > rows) nt = (int)rows;
  pthread_t th[64];
  oracle_job jobs[64];
  int joinable[64] = {0};
  int strict = strict_rel_fro != NULL;
  float *bk = p->op_b == TSR_OP_T && p->n > 1 ? kmajor_b(p, b) : NULL;
  for (int t = 0; t < nt; t++)
    jobs[t] = (oracle_job){p, a, bk ? bk : b, c0, bk != NULL, ref, scale, strict, rows * t / nt,
                           rows * (t + 1) / nt, 0.0, 0.0, 0};
  for (int t = 0; t < nt - 1; t++) {
    if (pthread_create(&th[t], NULL, oracle_rows, &jobs[t]) == 0) joinable[t] = 1;
    else oracle_rows(&jobs[t]); /* no thread: run it here */
  }
  oracle_rows(&jobs[nt - 1]);
  for (int t = 0; t < nt - 1; t++)
    if (joinable[t]) pthread_join(th[t], NULL);
  free(bk);
  tsr_status st = TSR_OK;
  double err2 = 0.0, ref2 = 0.0;
  for (int t = 0; t < nt; t++) { /* job order: deterministic sum */
    if (jobs[t].nomem) st = TSR_ERR_NOMEM;
    err2 += jobs[t].err2;
    ref2 += jobs[t].ref2;
  }
  if (strict_rel_fro) *strict_rel_fro = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
  return st;
}
