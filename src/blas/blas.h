/* The BLAS shim (build/libtessera_blas.so): Fortran sgemm_ and cblas_sgemm
 * over tessera, with the reference BLAS / CBLAS contract, so that existing
 * BLAS clients run on tessera through LD_PRELOAD or plain linking.
 *
 * ABI: LP64 (Fortran INTEGER is a C int). Fortran CHARACTER arguments are
 * read through their first byte only; the hidden string-length arguments
 * that gfortran passes after the last argument are accepted and never read.
 *
 * Errors: argument checks, their order and the INFO / parameter numbers are
 * those of the reference SGEMM and cblas_sgemm. An illegal argument is
 * reported through xerbla_ (Fortran entry) or cblas_xerbla (CBLAS entry) and
 * the call returns with C untouched. The shim's own xerbla_ and cblas_xerbla
 * are weak: a client's definition replaces them. Unlike the reference ones,
 * which STOP / exit(-1), the defaults print the reference message to stderr
 * and return: a library injected with LD_PRELOAD must not terminate its host
 * process over an argument error the caller can observe.
 *
 * Scalars: M == 0, N == 0, or (alpha == 0 or K == 0) with beta == 1 return
 * at once; otherwise alpha == 0 or K == 0 gives C = beta*C without reading
 * A or B (beta == 0 writes zeros without reading C), whatever alpha is:
 * NaN and infinities too, as in OpenBLAS and the reference's loops for
 * op(A) = A (its loops for op(A) = A^T form alpha*0 there, NaN). A NaN
 * alpha or beta with a product to form makes every element NaN.
 *
 * Fork: a child process may call the shim (Python multiprocessing's fork
 * start method, for one): the CPU pool's threads are re-created there on
 * the first call that needs them, and the locks of the shim, the pool and
 * the plan memo are fresh, so a call another thread of the parent had in
 * flight at the fork does not block the child's calls (SQLite's own locks,
 * held while a tuning database is read, are not covered).
 *
 * Environment (read once, on the first call):
 *   TESSERA_BACKEND       cpu (default), auto (the GPU when one is usable,
 *                         else cpu), cuda, cublas, hand.
 *   TESSERA_BLAS_VERBOSE  when set to a non-empty value other than "0",
 *                         every call prints one line to stderr naming
 *                         tessera and the problem; otherwise a successful
 *                         call prints nothing. */
#ifndef TSR_BLAS_BLAS_H
#define TSR_BLAS_BLAS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reference CBLAS enumerators (cblas.h is not required). */
enum tsr_cblas_order { TSR_CBLAS_ROW_MAJOR = 101, TSR_CBLAS_COL_MAJOR = 102 };
enum tsr_cblas_transpose {
  TSR_CBLAS_NO_TRANS = 111,
  TSR_CBLAS_TRANS = 112,
  TSR_CBLAS_CONJ_TRANS = 113
};

/* Column-major C = alpha*op(A)*op(B) + beta*C, op from 'N'/'n', 'T'/'t',
 * 'C'/'c' (conjugate transpose is the transpose for real data). */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc);

/* Order/TransA/TransB take the values of the enums above; they are int, as
 * the C ABI passes the reference CBLAS enum types. */
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* Weak defaults; see above. srname is blank-padded, srname_len long. */
void xerbla_(const char *srname, const int *info, size_t srname_len);
void cblas_xerbla(int p, const char *rout, const char *form, ...);

#ifdef __cplusplus
}
#endif
#endif
