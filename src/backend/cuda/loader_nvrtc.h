/* Loader for NVRTC (libnvrtc.so.13, else libnvrtc.so), resolved at run
 * time. Types are tessera's own ABI-compatible declarations. */
#ifndef TSR_BACKEND_CUDA_LOADER_NVRTC_H
#define TSR_BACKEND_CUDA_LOADER_NVRTC_H

#include <stddef.h>

#include "tessera.h"

typedef int tsr__nvrtc_result;
typedef struct tsr__nvrtc_prog_st *tsr__nvrtc_program;

enum { TSR__NVRTC_SUCCESS = 0, TSR__NVRTC_ERROR_COMPILATION = 6 };

typedef struct {
  tsr__nvrtc_result (*Version)(int *major, int *minor);
  tsr__nvrtc_result (*CreateProgram)(tsr__nvrtc_program *prog, const char *src, const char *name,
                                     int num_headers, const char *const *headers,
                                     const char *const *include_names);
  tsr__nvrtc_result (*DestroyProgram)(tsr__nvrtc_program *prog);
  tsr__nvrtc_result (*CompileProgram)(tsr__nvrtc_program prog, int num_options,
                                      const char *const *options);
  tsr__nvrtc_result (*GetProgramLogSize)(tsr__nvrtc_program prog, size_t *size);
  tsr__nvrtc_result (*GetProgramLog)(tsr__nvrtc_program prog, char *log);
  tsr__nvrtc_result (*GetCUBINSize)(tsr__nvrtc_program prog, size_t *size);
  tsr__nvrtc_result (*GetCUBIN)(tsr__nvrtc_program prog, char *cubin);
  const char *(*GetErrorString)(tsr__nvrtc_result r);
} tsr__nvrtc_api;

/* Process-wide table, loaded on first use (a success is kept, a failure
 * retried). NULL on failure with TSR_ERR_NVRTC and "NVRTC not found
 * (libnvrtc.so.13: <dlerror>)" or the missing symbol in msg. Env
 * TSR_LIBNVRTC overrides the path. */
const tsr__nvrtc_api *tsr__nvrtc_load(char *msg, size_t cap);
/* Explicit path into a caller table (tests); close with tsr__dl_close. */
tsr_status tsr__nvrtc_load_path(const char *path, tsr__nvrtc_api *api, void **handle, char *msg,
                                size_t cap);

#endif
