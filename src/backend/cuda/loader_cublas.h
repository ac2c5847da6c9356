/* Loader for cuBLAS (libcublas.so.13, else libcublas.so), resolved at run
 * time. Types are tessera's own ABI-compatible declarations. */
#ifndef TSR_BACKEND_CUDA_LOADER_CUBLAS_H
#define TSR_BACKEND_CUDA_LOADER_CUBLAS_H

#include <stddef.h>

#include "backend/cuda/loader_cuda.h"
#include "tessera.h"

typedef int tsr__cublas_status;
typedef struct tsr__cublas_ctx_st *tsr__cublas_handle;

enum { TSR__CUBLAS_SUCCESS = 0, TSR__CUBLAS_NOT_INITIALIZED = 1, TSR__CUBLAS_ALLOC_FAILED = 3 };
enum { TSR__CUBLAS_OP_N = 0, TSR__CUBLAS_OP_T = 1 };
/* cublasMath_t: tessera uses PEDANTIC (strict FP32, never TF32). */
enum { TSR__CUBLAS_DEFAULT_MATH = 0, TSR__CUBLAS_PEDANTIC_MATH = 2, TSR__CUBLAS_TF32_TENSOR_OP_MATH = 3 };

typedef struct {
  tsr__cublas_status (*Create)(tsr__cublas_handle *h);
  tsr__cublas_status (*Destroy)(tsr__cublas_handle h);
  tsr__cublas_status (*SetStream)(tsr__cublas_handle h, tsr__cu_stream s);
  tsr__cublas_status (*SetMathMode)(tsr__cublas_handle h, int mode);
  tsr__cublas_status (*GetVersion)(tsr__cublas_handle h, int *version);
  tsr__cublas_status (*Sgemm)(tsr__cublas_handle h, int transa, int transb, int m, int n, int k,
                              const float *alpha, const float *a, int lda, const float *b,
                              int ldb, const float *beta, float *c, int ldc);
  tsr__cublas_status (*SgemmStridedBatched)(tsr__cublas_handle h, int transa, int transb, int m,
                                            int n, int k, const float *alpha, const float *a,
                                            int lda, long long stride_a, const float *b, int ldb,
                                            long long stride_b, const float *beta, float *c,
                                            int ldc, long long stride_c, int batch);
  const char *(*GetStatusString)(tsr__cublas_status s);
} tsr__cublas_api;

/* Process-wide table (success kept, failure retried). NULL on failure with
 * TSR_ERR_CUBLAS and "cuBLAS not found (libcublas.so.13: <dlerror>)" or the
 * missing symbol in msg. Env TSR_LIBCUBLAS overrides the path. */
const tsr__cublas_api *tsr__cublas_load(char *msg, size_t cap);
/* Explicit path into a caller table (tests); close with tsr__dl_close. */
tsr_status tsr__cublas_load_path(const char *path, tsr__cublas_api *api, void **handle,
                                 char *msg, size_t cap);

#endif
