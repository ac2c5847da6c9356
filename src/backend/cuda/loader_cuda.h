/* Loader for the CUDA driver API (libcuda.so.1), resolved with dlopen at run
 * time so that tessera runs where no driver is installed. The types below are
 * tessera's own declarations of the few driver types we use (ABI-compatible
 * with cuda.h); no CUDA header is included outside loader_*.c. */
#ifndef TSR_BACKEND_CUDA_LOADER_CUDA_H
#define TSR_BACKEND_CUDA_LOADER_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

typedef int tsr__cu_result;
typedef int tsr__cu_device;
typedef unsigned long long tsr__cu_ptr; /* CUdeviceptr (64-bit) */
typedef struct tsr__cu_ctx_st *tsr__cu_ctx;
typedef struct tsr__cu_module_st *tsr__cu_module;
typedef struct tsr__cu_func_st *tsr__cu_function;
typedef struct tsr__cu_stream_st *tsr__cu_stream;
typedef struct tsr__cu_event_st *tsr__cu_event;

/* CUresult values we act on. */
enum {
  TSR__CU_SUCCESS = 0,
  TSR__CU_ERROR_OUT_OF_MEMORY = 2,
  TSR__CU_ERROR_NOT_INITIALIZED = 3,
  TSR__CU_ERROR_STUB_LIBRARY = 34,
  TSR__CU_ERROR_INSUFFICIENT_DRIVER = 35,
  TSR__CU_ERROR_DEVICE_UNAVAILABLE = 46,
  TSR__CU_ERROR_NO_DEVICE = 100,
  TSR__CU_ERROR_INVALID_DEVICE = 101,
  TSR__CU_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
};

/* CUdevice_attribute values. */
enum {
  TSR__CU_DEV_MAX_THREADS_PER_BLOCK = 1,
  TSR__CU_DEV_MAX_GRID_DIM_X = 5,
  TSR__CU_DEV_MAX_GRID_DIM_Y = 6,
  TSR__CU_DEV_MAX_GRID_DIM_Z = 7,
  TSR__CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  TSR__CU_DEV_MAX_REGISTERS_PER_BLOCK = 12,
  TSR__CU_DEV_CLOCK_RATE = 13,
  TSR__CU_DEV_MULTIPROCESSOR_COUNT = 16,
  TSR__CU_DEV_COMPUTE_CAPABILITY_MAJOR = 75,
  TSR__CU_DEV_COMPUTE_CAPABILITY_MINOR = 76,
  TSR__CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute values. */
enum {
  TSR__CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
  TSR__CU_FUNC_SHARED_SIZE_BYTES = 1,
  TSR__CU_FUNC_LOCAL_SIZE_BYTES = 3,
  TSR__CU_FUNC_NUM_REGS = 4,
  TSR__CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* Flags. */
enum { TSR__CU_STREAM_DEFAULT = 0, TSR__CU_EVENT_DEFAULT = 0 };

/* Tensor maps (cuTensorMapEncodeTiled's enums and the opaque 128-byte
 * CUtensorMap, 128-byte aligned as cuda.h declares it; the encoder needs
 * 64). */
enum {
  TSR__CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  TSR__CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  TSR__CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  TSR__CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  TSR__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0, /* out-of-bounds elements read as zeros */
};
typedef struct {
  _Alignas(128) uint64_t opaque[16]; /* as cuda.h's CUtensorMap */
} tsr__cu_tensor_map;

/* cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute with
 * its 64-byte value union) and the one attribute tessera sets: programmatic
 * stream serialization, which lets a kernel start while the one before it in
 * the stream still runs, once every CTA of that one has called
 * griddepcontrol.launch_dependents (lazyk's pack kernel). */
enum { TSR__CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct {
  int id;
  char pad[4];
  union {
    _Alignas(8) char bytes[64];
    int programmatic_stream_serialization_allowed;
  } value;
} tsr__cu_launch_attribute;
typedef struct {
  unsigned grid[3], block[3], smem;
  tsr__cu_stream stream;
  tsr__cu_launch_attribute *attrs;
  unsigned nattrs;
} tsr__cu_launch_config;

/* The driver entry points tessera uses. Field names drop the "cu" prefix;
 * the exported (versioned) symbol of each is listed once in loader_cuda.c. */
typedef struct {
  tsr__cu_result (*Init)(unsigned flags);
  tsr__cu_result (*DriverGetVersion)(int *version);
  tsr__cu_result (*DeviceGetCount)(int *count);
  tsr__cu_result (*DeviceGet)(tsr__cu_device *dev, int ordinal);
  tsr__cu_result (*DeviceGetAttribute)(int *value, int attrib, tsr__cu_device dev);
  tsr__cu_result (*DeviceGetName)(char *name, int len, tsr__cu_device dev);
  tsr__cu_result (*DeviceTotalMem)(size_t *bytes, tsr__cu_device dev);
  tsr__cu_result (*DevicePrimaryCtxRetain)(tsr__cu_ctx *ctx, tsr__cu_device dev);
  tsr__cu_result (*DevicePrimaryCtxRelease)(tsr__cu_device dev);
  tsr__cu_result (*CtxSetCurrent)(tsr__cu_ctx ctx);
  tsr__cu_result (*CtxSynchronize)(void);
  tsr__cu_result (*ModuleLoadData)(tsr__cu_module *mod, const void *image);
  tsr__cu_result (*ModuleUnload)(tsr__cu_module mod);
  tsr__cu_result (*ModuleGetFunction)(tsr__cu_function *fn, tsr__cu_module mod, const char *name);
  tsr__cu_result (*FuncGetAttribute)(int *value, int attrib, tsr__cu_function fn);
  tsr__cu_result (*FuncSetAttribute)(tsr__cu_function fn, int attrib, int value);
  tsr__cu_result (*LaunchKernel)(tsr__cu_function fn, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                 tsr__cu_stream stream, void **params, void **extra);
  tsr__cu_result (*LaunchKernelEx)(const tsr__cu_launch_config *config, tsr__cu_function fn,
                                   void **params, void **extra);
  tsr__cu_result (*TensorMapEncodeTiled)(tsr__cu_tensor_map *map, int dtype, unsigned rank,
                                         void *addr, const uint64_t *dim,
                                         const uint64_t *strides, const uint32_t *box,
                                         const uint32_t *elem_strides, int interleave,
                                         int swizzle, int l2_promotion, int oob_fill);
  tsr__cu_result (*MemAlloc)(tsr__cu_ptr *ptr, size_t bytes);
  tsr__cu_result (*MemFree)(tsr__cu_ptr ptr);
  tsr__cu_result (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
  tsr__cu_result (*MemcpyHtoD)(tsr__cu_ptr dst, const void *src, size_t bytes);
  tsr__cu_result (*MemcpyDtoH)(void *dst, tsr__cu_ptr src, size_t bytes);
  tsr__cu_result (*MemcpyDtoDAsync)(tsr__cu_ptr dst, tsr__cu_ptr src, size_t bytes,
                                    tsr__cu_stream stream);
  tsr__cu_result (*MemsetD32)(tsr__cu_ptr dst, unsigned value, size_t count);
  tsr__cu_result (*MemsetD32Async)(tsr__cu_ptr dst, unsigned value, size_t count,
                                   tsr__cu_stream stream);
  tsr__cu_result (*StreamCreate)(tsr__cu_stream *stream, unsigned flags);
  tsr__cu_result (*StreamDestroy)(tsr__cu_stream stream);
  tsr__cu_result (*StreamSynchronize)(tsr__cu_stream stream);
  tsr__cu_result (*EventCreate)(tsr__cu_event *ev, unsigned flags);
  tsr__cu_result (*EventDestroy)(tsr__cu_event ev);
  tsr__cu_result (*EventRecord)(tsr__cu_event ev, tsr__cu_stream stream);
  tsr__cu_result (*EventSynchronize)(tsr__cu_event ev);
  tsr__cu_result (*EventElapsedTime)(float *ms, tsr__cu_event start, tsr__cu_event end);
  tsr__cu_result (*GetErrorName)(tsr__cu_result r, const char **s);
  tsr__cu_result (*GetErrorString)(tsr__cu_result r, const char **s);
} tsr__cu_api;

/* The process-wide driver table, loaded on first use by the one loader body
 * (src/sys/dl.h: thread-safe; a failure is retried on the next call, a
 * success is kept). NULL on failure with TSR_ERR_NO_CUDA and "no CUDA
 * driver found (libcuda.so.1: <dlerror>)" or the first missing symbol in
 * msg. Env TSR_LIBCUDA overrides the path. Does not call cuInit. */
const tsr__cu_api *tsr__cu_load(char *msg, size_t cap);

/* Loads into a caller table from one explicit path (tests). *handle gets the
 * dlopen handle (close with tsr__dl_close). */
tsr_status tsr__cu_load_path(const char *path, tsr__cu_api *api, void **handle, char *msg,
                             size_t cap);

/* "CUDA_ERROR_X (text)" for r, via the loaded table when it has one. */
void tsr__cu_errstr(const tsr__cu_api *cu, tsr__cu_result r, char *buf, size_t cap);

#endif
