/* FP64 reference GEMM. Deliberately plain: it shares no code with any
 * backend under test. Blocked over K-rows of B only for cache reuse, and
 * split over output rows across threads for speed on large shapes. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/context.h"
#include "core/inputs.h"

typedef struct {
  const tsr_problem *p;
  const float *a, *b, *c0;
  double *ref;
  int64_t row0, row1; /* global rows over batch*m */
} oracle_job;

static void *oracle_rows(void *arg) {
  oracle_job *j = arg;
  const tsr_problem *p = j->p;
  int64_t ar, ac, lda, sa, br, bc, ldb, sb, cr, cc, ldc, sc;
  tsr__stored_dims(p, TSR_TENSOR_A, &ar, &ac, &lda, &sa);
  tsr__stored_dims(p, TSR_TENSOR_B, &br, &bc, &ldb, &sb);
  tsr__stored_dims(p, TSR_TENSOR_C, &cr, &cc, &ldc, &sc);
  double *acc = malloc((size_t)p->n * sizeof *acc);
  if (!acc) return (void *)1;
  for (int64_t g = j->row0; g < j->row1; g++) {
    int64_t bt = g / p->m, i = g % p->m;
    const float *A = j->a + bt * sa;
    const float *B = j->b + bt * sb;
    for (int64_t x = 0; x < p->n; x++) acc[x] = 0.0;
    for (int64_t kk = 0; kk < p->k; kk++) {
      double av = p->op_a == TSR_OP_N ? A[i * lda + kk] : A[kk * lda + i];
      if (p->op_b == TSR_OP_N) {
        const float *brow = B + kk * ldb;
        for (int64_t x = 0; x < p->n; x++) acc[x] += av * (double)brow[x];
      } else {
        for (int64_t x = 0; x < p->n; x++) acc[x] += av * (double)B[x * ldb + kk];
      }
    }
    double *out = j->ref + bt * p->m * p->n + i * p->n;
    for (int64_t x = 0; x < p->n; x++) {
      double v = (double)p->alpha * acc[x];
      if (p->beta != 0.0f) v += (double)p->beta * (double)j->c0[bt * sc + i * ldc + x];
      out[x] = v;
    }
  }
  free(acc);
  return NULL;
}

tsr_status tsr_oracle_cpu(const tsr_problem *p, const float *a, const float *b, const float *c0,
                          double *ref) {
  if (!p || !a || !b || !ref || (p->beta != 0.0f && !c0)) return TSR_ERR_INVALID;
  int64_t rows = p->batch * p->m;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nt = ncpu > 0 ? (int)(ncpu > 64 ? 64 : ncpu) : 1;
  if (rows < 64 || (double)p->m * p->n * p->k * p->batch < 1e6) nt = 1;
  if (nt > rows) nt = (int)rows;
  pthread_t th[64];
  oracle_job jobs[64];
  int joinable[64] = {0};
  tsr_status st = TSR_OK;
  for (int t = 0; t < nt - 1; t++) {
    jobs[t] = (oracle_job){p, a, b, c0, ref, rows * t / nt, rows * (t + 1) / nt};
    if (pthread_create(&th[t], NULL, oracle_rows, &jobs[t]) == 0) joinable[t] = 1;
    else if (oracle_rows(&jobs[t])) st = TSR_ERR_NOMEM; /* no thread: run it here */
  }
  jobs[nt - 1] = (oracle_job){p, a, b, c0, ref, rows * (nt - 1) / nt, rows};
  if (oracle_rows(&jobs[nt - 1])) st = TSR_ERR_NOMEM;
  for (int t = 0; t < nt - 1; t++) {
    void *r = NULL;
    if (joinable[t]) pthread_join(th[t], &r);
    if (r) st = TSR_ERR_NOMEM;
  }
  return st;
}
