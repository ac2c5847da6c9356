/* Internal GPU layer shared by the three GPU backends (cuda, cublas, hand)
 * and the GPU oracle: per-context device state, NVRTC compilation with the
 * in-memory and on-disk module caches, device buffers, and one exec type
 * with a shared launcher for the kernel ABI of src/emit/emit.h. */
#ifndef TSR_BACKEND_CUDA_GPU_H
#define TSR_BACKEND_CUDA_GPU_H

#include <stdint.h>

#include "backend/cuda/loader_cuda.h"
#include "backend/cuda/loader_nvrtc.h"
#include "core/backend.h"
#include "emit/emit.h"
#include "tessera.h"

/* Default local-memory (spill) bytes per thread above which a compiled
 * generated kernel is rejected at prepare (env TSR_SPILL_LIMIT overrides). */
#define TSR__LOCAL_BYTES_LIMIT 512

typedef struct tsr__module_entry {
  char key[65];
  tsr__cu_module mod;
  struct tsr__module_entry *next;
} tsr__module_entry;

/* One per GPU backend slot of a context (ctx->backend_state[kind]). Each slot
 * retains the device's primary context (reference counted by the driver), so
 * slots are released independently. */
typedef struct tsr__gpu {
  const tsr__cu_api *cu;
  tsr__cu_device dev;
  tsr__cu_ctx cuctx;
  tsr__cu_stream stream;
  int cc_major, cc_minor;
  int sm_count;
  int smem_block, regs_per_block;
  /* The limits the emitter and the launcher check: the device's opt-in
   * shared memory per block, threads per block and grid limits, sm_90's
   * values for the per-SM resources (not queried). */
  tsr__gpu_target target;
  int driver_version;
  size_t total_mem;
  char name[128];
  tsr__module_entry *modules; /* in-memory module cache, keyed by CUBIN key */
  void *blas;                 /* cuBLAS handle (cublas slot only) */
  void (*blas_destroy)(void *);
} tsr__gpu;

/* ---- device state -------------------------------------------------------- */
/* The slot's state, created on first use (loads libcuda, cuInit, device 0,
 * primary context, stream). TSR_ERR_NO_CUDA / TSR_ERR_NO_DEVICE when none. */
tsr_status tsr__gpu_get(tsr_context *ctx, tsr_backend_kind slot, tsr__gpu **out);
/* context_release of every GPU backend. */
void tsr__gpu_release(tsr_context *ctx, tsr_backend_kind slot);
/* Makes the slot's context current on the calling thread. */
tsr_status tsr__gpu_bind(tsr_context *ctx, tsr__gpu *g);
/* Maps a failed driver call to a status and message: OOM → TSR_ERR_NOMEM,
 * others → TSR_ERR_CUDA; the message names the call and the CUDA error. */
tsr_status tsr__cu_fail(tsr_context *ctx, const tsr__cu_api *cu, tsr__cu_result r,
                        const char *what);
/* The target of the device (g->target), or tsr__target_sm90 when no device
 * is usable (so that `tessera plan` works without a GPU; the context
 * message is left clear in that case). */
void tsr__gpu_target_get(tsr_context *ctx, tsr__gpu_target *out);
/* The compute capability (major * 10 + minor) of the device this process
 * opened last, 0 before any: the default plan table keeps its sm_90a-only
 * families off other devices. */
/* The compute capability (e.g. 90) of the device ctx has opened in slot, 0
 * when none (or ctx is NULL): never opens one. */
unsigned tsr__gpu_opened_cc(tsr_context *ctx, tsr_backend_kind slot);

/* ---- NVRTC + module caches ---------------------------------------------- */
enum {
  TSR__COMPILE_BYPASS_CACHE = 1, /* tuner: never read a cached module (still writes) */
};

typedef struct {
  char key[65];     /* SHA-256 of (source, arch, NVRTC version, options) */
  int from_disk;    /* 1 when the CUBIN came from the disk cache */
  int disk_written; /* 1 when the CUBIN was stored in the disk cache */
} tsr__cubin_meta;

/* Compiles source for sm_<cc_major><cc_minor> with NVRTC (no device
 * needed; sm_XYa when the source has the line "// tsr:arch-specific", as
 * the wgmma kernels do): options "--gpu-architecture=sm_XY -default-device --std=c++17
 * --ptxas-options=--verbose" (+ "--no-cache" on NVRTC 12.9+, + "-lineinfo"
 * when env TSR_NVRTC_LINEINFO=1).
 * Returns the malloc'd CUBIN and, when log is non-NULL, the malloc'd
 * compiler log (ptxas resource lines included). Compile errors →
 * TSR_ERR_NVRTC with the log in the context message. */
tsr_status tsr__nvrtc_compile(tsr_context *ctx, const char *source, int cc_major, int cc_minor,
                              void **cubin, size_t *size, char **log);
/* Like tsr__nvrtc_compile but through the on-disk cache
 * ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/modules/<key>.cubin (log is NULL
 * on a cache hit). A cache that cannot be read or written is not an error. */
tsr_status tsr__cubin_get(tsr_context *ctx, const char *source, int cc_major, int cc_minor,
                          int flags, void **cubin, size_t *size, char **log,
                          tsr__cubin_meta *meta);
/* The cache folder (without trailing '/'); 0 on success. */
int tsr__cubin_cache_dir(char *buf, size_t cap);
/* Module for the source on the slot's device through both caches. */
tsr_status tsr__gpu_module(tsr_context *ctx, tsr__gpu *g, const char *source, int flags,
                           tsr__cu_module *out);

/* ptxas --verbose resources of one entry function in an NVRTC log; 0 when
 * found. Any pointer may be NULL. */
int tsr__ptxas_parse(const char *log, const char *func, int *regs, int *stack_bytes,
                     int *spill_stores, int *spill_loads);

/* ---- device buffers ------------------------------------------------------ */
typedef struct {
  tsr__cu_ptr a, b, c, c0, w;
  size_t na, nb, nc; /* stored elements of A, B, C (all batch items) */
  size_t w_bytes;
} tsr__dbufs;

/* Allocates every buffer first (so an absurd problem fails with
 * TSR_ERR_NOMEM before host data is read), then uploads A, B and C0 and
 * initializes C (C0, or NaN poison when c0 is NULL). */
tsr_status tsr__dbufs_create(tsr_context *ctx, tsr__gpu *g, const tsr_problem *p, const float *a,
                             const float *b, const float *c0, size_t w_bytes, tsr__dbufs *out);
void tsr__dbufs_free(tsr__gpu *g, tsr__dbufs *d);

/* ---- exec (all three GPU backends) --------------------------------------- */
typedef struct tsr__gexec tsr__gexec;
struct tsr__gexec {
  tsr_context *ctx;
  tsr__gpu *g;
  tsr_problem p;
  tsr__dbufs buf;
  tsr__cu_event ev0, ev1;
  tsr_status (*launch_one)(tsr__gexec *e); /* enqueue one call on g->stream */
  /* kernel-ABI routes (cuda, hand) */
  tsr__cu_function fmain, freduce;
  int npre; /* pack prologue kernels, launched before fmain */
  tsr__cu_function fpre[2];
  uint32_t pgrid[2][3], pblock[2][3];
  char pre_name[2][64];
  uint32_t grid[3], block[3], rgrid[3], rblock[3], smem;
  int regs, local_bytes, static_smem, max_threads;
  char sha256[65];
  /* split=producer-tma: the main kernel's trailing tensor-map parameters
   * (CUtensorMap bytes), encoded against buf at attach */
  int ntmap;
  uint64_t tmap[2][16];
  /* lazy=P: the claim flags (lazy_n uint32 at float offset lazy_off of W),
   * zeroed at attach, and the main kernel's last parameter, the calls
   * launched since (docs/emit.md "Lazy pack") */
  uint64_t lazy_off, lazy_n;
  uint32_t epoch;
  int pdl; /* lazyk: fmain launched as a programmatic dependent of the last prologue */
};

/* Creates the exec shell: events, buffers (with w_bytes of workspace). */
tsr_status tsr__gexec_create(tsr_context *ctx, tsr_backend_kind slot, const tsr_problem *p,
                             const float *a, const float *b, const float *c0, size_t w_bytes,
                             tsr__gexec **out);
/* Compiles and attaches a kernel-ABI source (main + optional reduce kernel),
 * reads registers/local/static smem and raises the dynamic smem limit. */
tsr_status tsr__gexec_attach_kernel(tsr__gexec *e, const tsr__kernel_src *k, int flags);
/* Launch limits of the attached kernel: threads per block against the
 * registers it uses, local bytes against local_limit (< 0: no limit). */
tsr_status tsr__gexec_check_limits(tsr__gexec *e, int local_limit);

/* Vtable members shared by the GPU backends. */
tsr_status tsr__gexec_reset_c(void *exec);
tsr_status tsr__gexec_launch(void *exec, int n);
tsr_status tsr__gexec_sync(void *exec);
tsr_status tsr__gexec_event_time(void *exec, int n, int64_t *ns);
tsr_status tsr__gexec_download(void *exec, float *c);
void tsr__gexec_info(void *exec, tsr_plan_info *info);
void tsr__gexec_destroy(void *exec);

/* The shared half of every GPU backend's vtable: the generic exec does the
 * allocation, poisoning, launches, events and downloads for all of them. */
#define TSR__GEXEC_OPS                                                          \
  .reset_c = tsr__gexec_reset_c, .launch = tsr__gexec_launch, .sync = tsr__gexec_sync, \
  .event_time = tsr__gexec_event_time, .download = tsr__gexec_download,          \
  .exec_info = tsr__gexec_info, .destroy = tsr__gexec_destroy

/* ---- plans of the fixed routes ------------------------------------------ */
/* TSR_ERR_UNSUPPORTED naming the first field where plan differs from def. */
tsr_status tsr__plan_require_default(tsr_context *ctx, const char *route, const tsr_plan *plan,
                                     const tsr_plan *def);

#endif
