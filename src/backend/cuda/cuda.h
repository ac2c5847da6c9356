/* Internal entry points of the GPU backends, shared between the files of
 * src/backend/cuda/ (and the backend tests); other modules reach the GPU
 * backends through the vtable (src/core/backend.h) only. */
#ifndef TSR_BACKEND_CUDA_CUDA_H
#define TSR_BACKEND_CUDA_CUDA_H

#include "tessera.h"

/* Device and library versions for results files. */
typedef struct {
  char name[128];
  int cc_major, cc_minor, sm_count;
  int driver_version;            /* e.g. 13000 */
  int nvrtc_major, nvrtc_minor;  /* 0 when NVRTC is absent */
  int cublas_version;            /* 0 when cuBLAS is absent */
  uint32_t smem_optin;
  uint64_t total_mem;
} tsr__cuda_device;

tsr_status tsr__cuda_describe(tsr_context *ctx, tsr__cuda_device *out);

/* prepare of the generated backend with flags (TSR__COMPILE_BYPASS_CACHE:
 * compile from scratch for the tuner's final replay). */
tsr_status tsr__cuda_prepare_ex(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                const float *a, const float *b, const float *c0, int flags,
                                void **exec);

/* The hand route's kernel source specialized to a problem (malloc'd; NULL on
 * out of memory); exposed for the CI compile check. */
char *tsr__hand_source(const tsr_problem *p);
#define TSR__HAND_KERNEL_NAME "tsr_hand_sgemm"

/* The vtables' describe slot for the GPU backends (cuda, cublas, hand). */
#include "core/backend.h"
tsr_status tsr__gpu_backend_describe(tsr_context *ctx, tsr__backend_desc *out);

#endif
