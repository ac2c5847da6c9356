/* The one measurement layer (docs/accuracy.md, docs/protocol.md): the
 * workload (generated inputs and the FP64 oracle with the accuracy
 * contract's inputs, cached on disk), the validated call, the warm-up
 * calibration and the sample loop. `tessera gemm`, the bench child, the
 * tuner, tools/gpu_bench and the CPU bench tool all measure through it, so
 * they measure the same thing and the contract is enforced in one place.
 * They run a prepared execution (tsr_exec, measure/exec.h), never the
 * backend vtable, so nothing above this layer needs src/core/backend.h.
 * Layering: used by bench, tune, cli and tools; uses backend and core. */
#ifndef TSR_MEASURE_MEASURE_H
#define TSR_MEASURE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "measure/exec.h"
#include "tessera.h"

/* ---- workload ------------------------------------------------------------ */
typedef struct {
  tsr_problem p;       /* checked */
  tsr_inputs inputs;
  uint64_t seed;
  float *a, *b, *c0;   /* stored tensors (c0 NULL when beta == 0); NULL when oracle_only */
  double *ref;         /* FP64 result, compact batch x m x n */
  float *scale;        /* componentwise scale |alpha||A||B| + |beta||C0| */
  double strict_rel_fro; /* the strict FP32 reference's rel. Frobenius error */
  char oracle_source[16]; /* "gpu", "cpu", "cache:gpu", "cache:cpu" */
  char key[512], key_sha[65];
  int64_t inputs_ns, oracle_ns; /* wall time of generating the inputs, of the oracle */
} tsr__workload;

/* Generates the inputs and loads or computes the oracle (cache_dir NULL: no
 * cache; the GPU FP64 kernel for large problems when a GPU is usable, else
 * the CPU reference). oracle_only: the inputs are freed once the oracle
 * exists (a route that makes its own inputs, e.g. torch). msg names the
 * failing step; TSR_ERR_NOMEM when a buffer cannot be allocated. */
tsr_status tsr__workload_create(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                                const char *cache_dir, int oracle_only, tsr__workload **out,
                                char *msg, size_t cap);
void tsr__workload_destroy(tsr__workload *w); /* NULL is a no-op */

/* ---- estimates: refusing what cannot fit or finish, before any work ------ */
/* Host bytes of one workload of p: A, B, C0 (beta != 0), the oracle's ref
 * (double) and scale (float), and the GPU oracle's host staging (float). */
double tsr__workload_bytes(const tsr_problem *p);
/* Host bytes of one prepared call of p on backend b (info: its realized
 * plan, NULL when unknown). CPU: the call's own C and C0 copies, the packing
 * buffers (info), the prepacked op(B) (at most 512 MiB) and op(A) (at most
 * 16 MiB); GPU backends:
 * the staging copy of C a download makes. Device memory is not counted: a
 * device allocation that fails is an error status, never host exhaustion. */
double tsr__exec_host_bytes(const tsr_problem *p, tsr_backend_kind b, const tsr_plan_info *info);
/* Peak host bytes of one process measuring p: `workloads` workloads alive at
 * once, `execs` prepared calls and the host output buffer; on a GPU backend
 * also TSR__GPU_HOST_OVERHEAD for the driver, NVRTC and module state (about
 * 140 MiB measured on the H200 host). */
#define TSR__GPU_HOST_OVERHEAD (256.0 * 1048576.0)
double tsr__measure_host_bytes(const tsr_problem *p, tsr_backend_kind b,
                               const tsr_plan_info *info, int workloads, int execs);
/* The default host-memory limit: 80% of physical memory (sysconf); 0 when
 * unknown. */
double tsr__host_memory_default(void);
/* 0 when need <= limit (limit 0: the default); else -1 with msg "needs about
 * X GiB of host memory (estimate), more than the limit of Y GiB (...)". */
int tsr__host_memory_check(double need, double limit, char *msg, size_t cap);

/* Conservative rates of the work done before any measurement (no
 * measurement of this machine: they must hold on a loaded one). */
#define TSR__ORACLE_CPU_FLOPS_PER_CORE 1e9 /* tsr_oracle_cpu, per thread it runs */
#define TSR__ORACLE_GPU_FLOPS 1e11         /* tsr_oracle_gpu (plain FP64 kernel) */
#define TSR__INPUT_ELEMS_PER_S 2e7         /* tsr_fill, per thread it runs */
#define TSR__ORACLE_HASH_BYTES_PER_S 2.5e8 /* SHA-256 + I/O of an oracle cache entry */
/* Seconds to compute the FP64 oracle of p (2*M*N*K*batch flops): on the GPU
 * when gpu, else on the CPU with as many threads as tsr_oracle_cpu uses. */
double tsr__oracle_seconds(const tsr_problem *p, int gpu);
/* 1 when tsr__workload_create would use the GPU oracle for p (work >= 1e8)
 * given a usable GPU. */
int tsr__oracle_prefers_gpu(const tsr_problem *p);
/* Seconds to generate one workload's inputs (A, B, C0 with as many threads
 * as tsr_fill uses) and hash its oracle (12 bytes per output element, the
 * cache entry's SHA-256 on store and on load). */
double tsr__inputs_seconds(const tsr_problem *p);

/* The receipt of output c (stored layout) for a run in precision `mode`
 * (the mode the plan ran, never AUTO): dyadic inputs get the exact
 * tolerance receipt (atol = rtol = 0 unless given), every other family the
 * mode's contract receipt. */
void tsr__workload_check(const tsr__workload *w, tsr_precision mode, double atol, double rtol,
                         const float *c, tsr_receipt *r);

/* One-line summary of a failed receipt ("12 of 4096 elements over the
 * componentwise bound (worst 3.1x), rel. Frobenius 2.9e-05 > limit
 * 1.4e-06, first at 17"). */
void tsr__receipt_summary(const tsr_receipt *r, char *buf, size_t cap);

/* ---- the validated call -------------------------------------------------- */
/* Outside any timed region: restore C, one call, synchronize, download into
 * host_c after poisoning it with NaN, then tsr__workload_check. corrupt: add
 * 1 to host_c[0] first (the test hooks that prove a wrong output fails). */
tsr_status tsr__validated_call(tsr_exec *e, const tsr__workload *w, tsr_precision mode,
                               double atol, double rtol, float *host_c, int corrupt,
                               tsr_receipt *r);
/* The same, adding its wall time to *call_ns (reset, call, synchronize,
 * poison, download) and *check_ns (the receipt). */
tsr_status tsr__validated_call_ns(tsr_exec *e, const tsr__workload *w, tsr_precision mode,
                                  double atol, double rtol, float *host_c, int corrupt,
                                  tsr_receipt *r, int64_t *call_ns, int64_t *check_ns);

/* ---- calibration and samples --------------------------------------------- */
typedef struct {
  int64_t warmup_calls, warmup_batches, warmup_ns;
  int64_t est_call_ns;     /* host time per call of the last warm-up batch */
  int64_t calls_per_batch; /* calls filling one sample window */
} tsr__calibration;

/* Warm-up for warmup_ms with doubling batches (at least two calls); the last
 * batch's per-call host time sets the calls per batch sample filling
 * sample_ms (1 .. 2^24). */
tsr_status tsr__calibrate(tsr_exec *e, int warmup_ms, int sample_ms, tsr__calibration *cal);

typedef enum {
  TSR__TIMER_EVENT = 0, /* device events around the calls, synchronized (GPU only) */
  TSR__TIMER_HOST = 1   /* host monotonic clock around the calls + synchronize */
} tsr__timer;

/* One sample: ns for `calls` back-to-back calls. C is restored and the
 * queue drained first, outside the timed region. TSR__TIMER_EVENT on a
 * backend without device events: TSR_ERR_UNSUPPORTED (the context says so). */
tsr_status tsr__sample(tsr_exec *e, tsr__timer timer, int64_t calls, int64_t *ns);

/* ---- oracle cache (oracle_cache.c) --------------------------------------- */
/* The oracle of problem p over the generated inputs a, b, c0: loaded from
 * cache_dir (NULL: no cache) when a verified entry exists, else computed and
 * stored atomically. ref (batch*m*n doubles) and scale (floats) are
 * caller-allocated. source receives "gpu", "cpu", "cache:gpu" or
 * "cache:cpu"; key_sha the key's SHA-256. */
tsr_status tsr__oracle_cached(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                              const float *a, const float *b, const float *c0,
                              const char *cache_dir, double *ref, float *scale,
                              double *strict_rel_fro, const char **source, char key_sha[65],
                              char *msg, size_t cap);
/* Only the cache: 0 when cache_dir holds a verified entry for (p, inputs,
 * seed), loaded into ref and scale as tsr__oracle_cached does; else -1
 * (ref and scale then hold anything). key_sha is set either way. */
int tsr__oracle_cache_load(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                           const char *cache_dir, double *ref, float *scale,
                           double *strict_rel_fro, const char **source, char key_sha[65]);
/* Canonical key text of (shape, ops, alpha, beta, batch, inputs, seed). */
void tsr__oracle_key(const tsr_problem *p, tsr_inputs inputs, uint64_t seed, char *buf,
                     size_t cap);
/* 1 when cache_dir holds an entry for (p, inputs, seed) whose header (key,
 * element count) and size match, i.e. a load costs no computation; the
 * payload's hash is verified only by the load itself. */
int tsr__oracle_cache_has(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                          const char *cache_dir);
/* ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/oracle (static buffer). */
const char *tsr__oracle_cache_default(void);

#endif
