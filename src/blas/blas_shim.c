/* The BLAS shim: reference-contract sgemm_ / cblas_sgemm over tessera
 * (contract and environment in src/blas/blas.h).
 *
 * Column-major onto row-major without copies: a column-major r×c matrix with
 * leading dimension ld is, read row-major, its transpose (c×r, same ld).
 * So column-major C = op(A)·op(B) is row-major C^T = op(B)^T·op(A)^T: the
 * row-major problem is m' = N, n' = M, k' = K with A' = B (op transb,
 * lda' = ldb), B' = A (op transa, ldb' = lda), and C as given. The CBLAS
 * row-major entry is the reference's own reduction onto the Fortran one
 * (swap A/B, M/N), which the mapping above then swaps back. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas/blas.h"
#include "core/backend.h"
#include "tessera.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- weak error handlers ------------------------------------------------ */

/* The reference message; the reference XERBLA then STOPs, this one returns
 * (see blas.h for why). */
EXPORT __attribute__((weak)) void xerbla_(const char *srname, const int *info,
                                          size_t srname_len) {
  fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n",
          (int)srname_len, srname, *info);
}

/* The reference CBLAS message; the reference then calls exit(-1). */
EXPORT __attribute__((weak)) void cblas_xerbla(int p, const char *rout, const char *form, ...) {
  if (p) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", p, rout);
  va_list ap;
  va_start(ap, form);
  vfprintf(stderr, form, ap);
  va_end(ap);
}

/* ---- the process-wide context ------------------------------------------- */

static pthread_once_t shim_once = PTHREAD_ONCE_INIT;
/* tsr_context is not safe for concurrent calls (one message buffer, GPU
 * backend state), so calls into it are serialized; the CPU backend
 * parallelizes inside one call. */
static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr_context *shim_ctx;
static tsr_backend_kind shim_backend = TSR_BACKEND_CPU;
/* TESSERA_PRECISION (docs/accuracy.md): auto (default), strict, fp32x3, ozaki, tf32 */
static tsr_precision shim_precision = TSR_PREC_AUTO;
static int shim_verbose;

/* In a child of fork only the forking thread exists: a call that another
 * thread had in flight holds shim_lock forever there. (The CPU pool and the
 * plan memo recover their own state; see src/backend/cpu/pool.c.) */
static void shim_after_fork_child(void) { pthread_mutex_init(&shim_lock, NULL); }

static void shim_init(void) {
  pthread_atfork(NULL, NULL, shim_after_fork_child);
  const char *v = getenv("TESSERA_BLAS_VERBOSE");
  shim_verbose = v && *v && strcmp(v, "0") != 0;
  if (tsr_context_create(&shim_ctx) != TSR_OK) {
    shim_ctx = NULL; /* reported by the first call that needs it */
    return;
  }
  const char *prec = getenv("TESSERA_PRECISION");
  if (prec && *prec) {
    char pmsg[256];
    if (tsr_precision_parse(prec, &shim_precision, pmsg, sizeof pmsg) != TSR_OK) {
      fprintf(stderr, "tessera_blas: TESSERA_PRECISION %s; using auto\n", pmsg);
      shim_precision = TSR_PREC_AUTO;
    }
  }
  const char *text = getenv("TESSERA_BACKEND");
  if (!text || !*text) return; /* cpu */
  char msg[256];
  tsr_backend_kind k;
  if (tsr_backend_parse(text, &k, msg, sizeof msg) != TSR_OK) {
    fprintf(stderr, "tessera_blas: TESSERA_BACKEND %s; using cpu\n", msg);
    return;
  }
  k = tsr__backend_resolve(shim_ctx, k); /* auto: the GPU when usable, else cpu */
  if (tsr__backend_get(k)->available(shim_ctx) != TSR_OK) {
    fprintf(stderr, "tessera_blas: TESSERA_BACKEND=%s is not usable here (%s); using cpu\n",
            text, tsr_context_message(shim_ctx));
    return;
  }
  shim_backend = k;
}

/* ---- argument checks ------------------------------------------------------ */

/* 'N' or 'T' for a legal Fortran TRANS character, 0 otherwise. */
static char trans_char(char t) {
  switch (t) {
    case 'N': case 'n': return 'N';
    case 'T': case 't': case 'C': case 'c': return 'T';
    default: return 0;
  }
}

static int max1(int v) { return v > 1 ? v : 1; }

/* The reference SGEMM checks, in its order; returns INFO (0 = legal). */
static int sgemm_info(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
  int nrowa = ta == 'N' ? m : k;
  int nrowb = tb == 'N' ? k : n;
  if (!ta) return 1;
  if (!tb) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < max1(nrowa)) return 8;
  if (ldb < max1(nrowb)) return 10;
  if (ldc < max1(m)) return 13;
  return 0;
}

/* ---- execution ------------------------------------------------------------- */

/* One line per call when TESSERA_BLAS_VERBOSE is set, in the caller's terms
 * (a row-major CBLAS call arrives here with A/B and M/N swapped). */
static void say(const char *entry, int rowmajor, char ta, char tb, int m, int n, int k,
                const char *path) {
  if (!shim_verbose) return;
  if (rowmajor)
    fprintf(stderr, "tessera_blas: tessera %s %s row-major M=%d N=%d K=%d transa=%c transb=%c -> %s\n",
            TSR_VERSION, entry, n, m, k, tb, ta, path);
  else
    fprintf(stderr, "tessera_blas: tessera %s %s col-major M=%d N=%d K=%d transa=%c transb=%c -> %s\n",
            TSR_VERSION, entry, m, n, k, ta, tb, path);
}

/* Column-major GEMM on checked arguments (ta, tb are 'N' or 'T'). */
static void gemm_colmajor(const char *entry, int rowmajor, char ta, char tb, int m, int n,
                          int k, float alpha, const float *a, int lda, const float *b, int ldb,
                          float beta, float *c, int ldc) {
  pthread_once(&shim_once, shim_init);
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) {
    say(entry, rowmajor, ta, tb, m, n, k, "quick return");
    return;
  }
  if (alpha == 0.0f || k == 0) {
    /* No product: C = beta*C, and beta == 0 writes zeros without reading C;
     * A and B are not read, so a NaN alpha (or NaN in A or B) leaves no
     * trace. This is OpenBLAS, and the reference's loops for op(A) = A; its
     * loops for op(A) = A^T compute alpha*0 + beta*C when K == 0, which a
     * NaN or infinite alpha turns into NaN. */
    say(entry, rowmajor, ta, tb, m, n, k, "scale");
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        float *e = &c[j * (int64_t)ldc + i];
        *e = beta == 0.0f ? 0.0f : beta * *e;
      }
    return;
  }
  if (alpha != alpha || beta != beta) {
    /* With a product to form, the reference multiplies every element by the
     * NaN (alpha*B(l,j) or beta*C(i,j)); tessera rejects NaN scalars. */
    say(entry, rowmajor, ta, tb, m, n, k, "NaN scalar");
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) c[j * (int64_t)ldc + i] = NAN;
    return;
  }

  tsr_problem p;
  tsr_problem_init(&p, n, m, k);
  p.op_a = tb == 'N' ? TSR_OP_N : TSR_OP_T;
  p.op_b = ta == 'N' ? TSR_OP_N : TSR_OP_T;
  p.lda = ldb;
  p.ldb = lda;
  p.ldc = ldc;
  p.alpha = alpha;
  p.beta = beta;
  p.precision = shim_precision;

  if (!shim_ctx) {
    fprintf(stderr, "tessera_blas: %s: cannot create the tessera context (out of memory)\n",
            entry);
    abort(); /* no status to return, and no result is worse than a wrong one */
  }
  pthread_mutex_lock(&shim_lock);
  tsr_backend_kind used = shim_backend;
  tsr_status st = tsr_gemm(shim_ctx, used, &p, NULL, b, a, c);
  if (st != TSR_OK && used != TSR_BACKEND_CPU) {
    fprintf(stderr, "tessera_blas: %s on %s failed: %s: %s; running it on cpu\n", entry,
            tsr_backend_name(used), tsr_status_name(st), tsr_context_message(shim_ctx));
    used = TSR_BACKEND_CPU;
    st = tsr_gemm(shim_ctx, used, &p, NULL, b, a, c);
  }
  if (st == TSR_ERR_UNSUPPORTED && p.precision != TSR_PREC_AUTO) {
    /* the backend does not run the mode asked for (e.g. fp32x3 on the
     * cpu): the FP32 contract's default instead, said once */
    static int warned;
    if (!warned++)
      fprintf(stderr, "tessera_blas: %s; using precision auto\n", tsr_context_message(shim_ctx));
    p.precision = TSR_PREC_AUTO;
    st = tsr_gemm(shim_ctx, used, &p, NULL, b, a, c);
  }
  if (st != TSR_OK) {
    fprintf(stderr, "tessera_blas: %s M=%d N=%d K=%d on cpu failed: %s: %s\n", entry, m, n, k,
            tsr_status_name(st), tsr_context_message(shim_ctx));
    abort();
  }
  pthread_mutex_unlock(&shim_lock);
  say(entry, rowmajor, ta, tb, m, n, k, tsr_backend_name(used));
}

/* ---- entry points ---------------------------------------------------------- */

EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                   const int *k, const float *alpha, const float *a, const int *lda,
                   const float *b, const int *ldb, const float *beta, float *c, const int *ldc) {
  char ta = trans_char(*transa), tb = trans_char(*transb);
  int info = sgemm_info(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info) {
    xerbla_("SGEMM ", &info, 6);
    return;
  }
  gemm_colmajor("sgemm_", 0, ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c,
                *ldc);
}

static char cblas_trans_char(int t) {
  switch (t) {
    case TSR_CBLAS_NO_TRANS: return 'N';
    case TSR_CBLAS_TRANS: case TSR_CBLAS_CONJ_TRANS: return 'T';
    default: return 0;
  }
}

EXPORT void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc) {
  static const char rout[] = "cblas_sgemm";
  if (order != TSR_CBLAS_ROW_MAJOR && order != TSR_CBLAS_COL_MAJOR) {
    cblas_xerbla(1, rout, "Illegal layout setting, %d\n", order);
    return;
  }
  char ta = cblas_trans_char(transa), tb = cblas_trans_char(transb);
  if (!ta) {
    cblas_xerbla(2, rout, "Illegal TransA setting, %d\n", transa);
    return;
  }
  if (!tb) {
    cblas_xerbla(3, rout, "Illegal TransB setting, %d\n", transb);
    return;
  }
  if (order == TSR_CBLAS_COL_MAJOR) {
    /* Fortran argument i is CBLAS parameter i + 1 (Order comes first). */
    int info = sgemm_info(ta, tb, m, n, k, lda, ldb, ldc);
    if (info) {
      cblas_xerbla(info + 1, rout, "");
      return;
    }
    gemm_colmajor(rout, 0, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    /* The reference reduces row-major to SGEMM(transb, transa, N, M, K,
     * alpha, B, ldb, A, lda, beta, C, ldc), checks in that order, and maps
     * the Fortran INFO back onto the caller's parameters. */
    int info = sgemm_info(tb, ta, n, m, k, ldb, lda, ldc);
    if (info) {
      int p;
      switch (info) {
        case 3: p = 5; break;   /* N */
        case 4: p = 4; break;   /* M */
        case 5: p = 6; break;   /* K */
        case 8: p = 11; break;  /* ldb */
        case 10: p = 9; break;  /* lda */
        default: p = 14; break; /* ldc (13) */
      }
      cblas_xerbla(p, rout, "");
      return;
    }
    gemm_colmajor(rout, 1, tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
  }
}
