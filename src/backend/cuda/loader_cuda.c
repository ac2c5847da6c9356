/* libcuda.so.1 loader: the one list of driver symbols tessera uses, each
 * under the exported name that CUDA 13's cuda.h maps it to (e.g. cuMemAlloc
 * → cuMemAlloc_v2, cuEventElapsedTime → cuEventElapsedTime_v2). */
#include "backend/cuda/loader_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sys/dl.h"
#include "core/context.h"

#define SYM(field, exported) {exported, offsetof(tsr__cu_api, field)}
static const tsr__dl_sym cu_syms[] = {
    SYM(Init, "cuInit"),
    SYM(DriverGetVersion, "cuDriverGetVersion"),
    SYM(DeviceGetCount, "cuDeviceGetCount"),
    SYM(DeviceGet, "cuDeviceGet"),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
    SYM(DeviceGetName, "cuDeviceGetName"),
    SYM(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    SYM(CtxSetCurrent, "cuCtxSetCurrent"),
    SYM(CtxSynchronize, "cuCtxSynchronize"),
    SYM(ModuleLoadData, "cuModuleLoadData"),
    SYM(ModuleUnload, "cuModuleUnload"),
    SYM(ModuleGetFunction, "cuModuleGetFunction"),
    SYM(FuncGetAttribute, "cuFuncGetAttribute"),
    SYM(FuncSetAttribute, "cuFuncSetAttribute"),
    SYM(LaunchKernel, "cuLaunchKernel"),
    SYM(MemAlloc, "cuMemAlloc_v2"),
    SYM(MemFree, "cuMemFree_v2"),
    SYM(MemGetInfo, "cuMemGetInfo_v2"),
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    SYM(MemsetD32, "cuMemsetD32_v2"),
    SYM(MemsetD32Async, "cuMemsetD32Async"),
    SYM(StreamCreate, "cuStreamCreate"),
    SYM(StreamDestroy, "cuStreamDestroy_v2"),
    SYM(StreamSynchronize, "cuStreamSynchronize"),
    SYM(EventCreate, "cuEventCreate"),
    SYM(EventDestroy, "cuEventDestroy_v2"),
    SYM(EventRecord, "cuEventRecord"),
    SYM(EventSynchronize, "cuEventSynchronize"),
    SYM(EventElapsedTime, "cuEventElapsedTime_v2"),
    SYM(GetErrorName, "cuGetErrorName"),
    SYM(GetErrorString, "cuGetErrorString"),
};
#undef SYM

static const char *const cu_names[] = {"libcuda.so.1", NULL};

static tsr_status finish_load(void *h, const char *where, tsr__cu_api *api, char *msg,
                              size_t cap) {
  const char *missing =
      tsr__dl_resolve(h, cu_syms, sizeof cu_syms / sizeof cu_syms[0], api);
  if (missing) {
    dlclose(h);
    return tsr__failbuf(msg, cap, TSR_ERR_NO_CUDA,
                        "no CUDA driver found (%s: missing symbol %s)", where, missing);
  }
  return TSR_OK;
}

tsr_status tsr__cu_load_path(const char *path, tsr__cu_api *api, void **handle, char *msg,
                             size_t cap) {
  memset(api, 0, sizeof *api);
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    const char *e = dlerror();
    return tsr__failbuf(msg, cap, TSR_ERR_NO_CUDA, "no CUDA driver found (%s: %s)", path,
                        e ? e : "cannot open");
  }
  tsr_status st = finish_load(*handle, path, api, msg, cap);
  if (st) *handle = NULL;
  return st;
}

void tsr__cu_unload(void *handle) {
  if (handle) dlclose(handle);
}

static pthread_mutex_t cu_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr__cu_api cu_api;
static int cu_loaded;

const tsr__cu_api *tsr__cu_load(char *msg, size_t cap) {
  pthread_mutex_lock(&cu_lock);
  if (!cu_loaded) {
    char err[768], where[512];
    void *h = tsr__dl_open("TSR_LIBCUDA", cu_names, where, sizeof where, err, sizeof err);
    if (!h) {
      tsr__failbuf(msg, cap, TSR_ERR_NO_CUDA, "no CUDA driver found (%s)", err);
    } else {
      tsr__cu_api api;
      if (finish_load(h, where, &api, msg, cap) == TSR_OK) {
        cu_api = api;
        cu_loaded = 1; /* kept for the life of the process */
      }
    }
  }
  pthread_mutex_unlock(&cu_lock);
  return cu_loaded ? &cu_api : NULL;
}

void tsr__cu_errstr(const tsr__cu_api *cu, tsr__cu_result r, char *buf, size_t cap) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->GetErrorName(r, &name) != TSR__CU_SUCCESS) name = NULL;
  if (cu && cu->GetErrorString(r, &text) != TSR__CU_SUCCESS) text = NULL;
  if (name && text) snprintf(buf, cap, "%s (%s)", name, text);
  else snprintf(buf, cap, "CUresult %d", (int)r);
}
