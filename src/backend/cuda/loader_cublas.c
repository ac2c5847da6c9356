/* libcublas loader: the one list of cuBLAS symbols tessera uses (the _v2
 * names that cublas_v2.h maps the plain names to). */
#include "backend/cuda/loader_cublas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "sys/dl.h"
#include "core/context.h"

#define SYM(field, exported) {exported, offsetof(tsr__cublas_api, field)}
static const tsr__dl_sym cublas_syms[] = {
    SYM(Create, "cublasCreate_v2"),
    SYM(Destroy, "cublasDestroy_v2"),
    SYM(SetStream, "cublasSetStream_v2"),
    SYM(SetMathMode, "cublasSetMathMode"),
    SYM(GetVersion, "cublasGetVersion_v2"),
    SYM(Sgemm, "cublasSgemm_v2"),
    SYM(SgemmStridedBatched, "cublasSgemmStridedBatched"),
    SYM(GetStatusString, "cublasGetStatusString"),
};
#undef SYM

static const char *const cublas_names[] = {"libcublas.so.13", "libcublas.so", NULL};

static tsr_status finish_load(void *h, const char *where, tsr__cublas_api *api, char *msg,
                              size_t cap) {
  const char *missing =
      tsr__dl_resolve(h, cublas_syms, sizeof cublas_syms / sizeof cublas_syms[0], api);
  if (missing) {
    dlclose(h);
    return tsr__failbuf(msg, cap, TSR_ERR_CUBLAS, "cuBLAS not usable (%s: missing symbol %s)",
                        where, missing);
  }
  return TSR_OK;
}

tsr_status tsr__cublas_load_path(const char *path, tsr__cublas_api *api, void **handle,
                                 char *msg, size_t cap) {
  memset(api, 0, sizeof *api);
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    const char *e = dlerror();
    return tsr__failbuf(msg, cap, TSR_ERR_CUBLAS, "cuBLAS not found (%s: %s)", path,
                        e ? e : "cannot open");
  }
  tsr_status st = finish_load(*handle, path, api, msg, cap);
  if (st) *handle = NULL;
  return st;
}

void tsr__cublas_unload(void *handle) {
  if (handle) dlclose(handle);
}

static pthread_mutex_t cublas_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr__cublas_api cublas_api;
static int cublas_loaded;

const tsr__cublas_api *tsr__cublas_load(char *msg, size_t cap) {
  pthread_mutex_lock(&cublas_lock);
  if (!cublas_loaded) {
    char err[768], where[512];
    void *h = tsr__dl_open("TSR_LIBCUBLAS", cublas_names, where, sizeof where, err, sizeof err);
    if (!h) {
      tsr__failbuf(msg, cap, TSR_ERR_CUBLAS, "cuBLAS not found (%s)", err);
    } else {
      tsr__cublas_api api;
      if (finish_load(h, where, &api, msg, cap) == TSR_OK) {
        cublas_api = api;
        cublas_loaded = 1;
      }
    }
  }
  pthread_mutex_unlock(&cublas_lock);
  return cublas_loaded ? &cublas_api : NULL;
}
