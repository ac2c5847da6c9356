/* libcuda.so.1 loader: the one list of driver symbols tessera uses, each
 * under the exported name that CUDA 13's cuda.h maps it to (e.g. cuMemAlloc
 * → cuMemAlloc_v2, cuEventElapsedTime → cuEventElapsedTime_v2). */
#include "backend/cuda/loader_cuda.h"

#include <stdio.h>

#include "sys/dl.h"

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
    SYM(LaunchKernelEx, "cuLaunchKernelEx"),
    SYM(TensorMapEncodeTiled, "cuTensorMapEncodeTiled"),
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

static const tsr__dl_lib cu_lib = {
    .names = cu_names,
    .env = "TSR_LIBCUDA",
    .syms = cu_syms,
    .nsyms = sizeof cu_syms / sizeof cu_syms[0],
    .api_size = sizeof(tsr__cu_api),
    .status = TSR_ERR_NO_CUDA,
    .not_found = "no CUDA driver found",
    .not_usable = "no CUDA driver found",
};

tsr_status tsr__cu_load_path(const char *path, tsr__cu_api *api, void **handle, char *msg,
                             size_t cap) {
  return (tsr_status)tsr__dl_load_path(&cu_lib, path, api, handle, msg, cap);
}

static tsr__dl_once cu_once = TSR__DL_ONCE_INIT;
static tsr__cu_api cu_api;

const tsr__cu_api *tsr__cu_load(char *msg, size_t cap) {
  return tsr__dl_load(&cu_lib, &cu_once, &cu_api, msg, cap);
}

void tsr__cu_errstr(const tsr__cu_api *cu, tsr__cu_result r, char *buf, size_t cap) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->GetErrorName(r, &name) != TSR__CU_SUCCESS) name = NULL;
  if (cu && cu->GetErrorString(r, &text) != TSR__CU_SUCCESS) text = NULL;
  if (name && text) snprintf(buf, cap, "%s (%s)", name, text);
  else snprintf(buf, cap, "CUresult %d", (int)r);
}
