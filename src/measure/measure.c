/* The measurement layer (measure.h): workload, validated call,
 * calibration, samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/clock.h"
#include "backend/cpu/cpu_kernels.h" /* the CPU backend's prepack limits */
#include "core/context.h"
#include "core/par.h"
#include "measure/measure.h"

/* ---- estimates ------------------------------------------------------------- */
double tsr__workload_bytes(const tsr_problem *p) {
  double na = (double)tsr_problem_elems_a(p), nb = (double)tsr_problem_elems_b(p);
  double nc = p->beta != 0.0f ? (double)tsr_problem_elems_c(p) : 0.0;
  double out = (double)p->batch * (double)p->m * (double)p->n;
  /* A, B, C0 (floats); ref (double), scale and the GPU oracle's strict
   * FP32 staging (floats); the CPU oracle's k-major copy of op(B) = B^T */
  double bt = p->op_b == TSR_OP_T && p->n > 1 ? (double)p->batch * (double)p->k * (double)p->n : 0.0;
  return 4.0 * (na + nb + nc + bt) + 16.0 * out;
}


double tsr__exec_host_bytes(const tsr_problem *p, tsr_backend_kind b, const tsr_plan_info *info) {
  double nc = (double)tsr_problem_elems_c(p);
  if (b != TSR_BACKEND_CPU) return 4.0 * nc; /* GPU: download staging of C */
  double bytes = 4.0 * nc * (p->beta != 0.0f ? 2.0 : 1.0); /* the call's C (and C0) */
  if (info) bytes += (double)info->smem_bytes;             /* packing buffers, all workers */
  double tn = info && info->plan.tn > 0 ? (double)info->plan.tn : 64.0;
  double packed_b = 4.0 * (double)p->batch * (double)p->k * ceil((double)p->n / tn) * tn;
  double tm = info && info->plan.tm > 0 ? (double)info->plan.tm : 1.0;
  double packed_a = 4.0 * (double)p->batch * (double)p->k * ceil((double)p->m / tm) * tm;
  return bytes + fmin(packed_b, (double)TSR__CPU_PREPACK_MAX_BYTES) +
         fmin(packed_a, (double)TSR__CPU_PREPACK_A_MAX_BYTES);
}

double tsr__measure_host_bytes(const tsr_problem *p, tsr_backend_kind b,
                               const tsr_plan_info *info, int workloads, int execs) {
  return workloads * tsr__workload_bytes(p) + execs * tsr__exec_host_bytes(p, b, info) +
         4.0 * (double)tsr_problem_elems_c(p) + /* the host output buffer */
         (b != TSR_BACKEND_CPU ? TSR__GPU_HOST_OVERHEAD : 0.0);
}

double tsr__host_memory_default(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  return pages > 0 && psize > 0 ? 0.8 * (double)pages * (double)psize : 0.0;
}

static const char *human_bytes(double x, char *buf, size_t cap) {
  if (x >= 1073741824.0) snprintf(buf, cap, "%.2f GiB", x / 1073741824.0);
  else snprintf(buf, cap, "%.2f MiB", x / 1048576.0);
  return buf;
}

int tsr__host_memory_check(double need, double limit, char *msg, size_t cap) {
  int dflt = !(limit > 0);
  if (dflt) limit = tsr__host_memory_default();
  if (!(limit > 0) || need <= limit) return 0;
  char a[32], b[32];
  snprintf(msg, cap, "needs about %s of host memory (estimate), more than the limit of %s (%s)",
           human_bytes(need, a, sizeof a), human_bytes(limit, b, sizeof b),
           dflt ? "80% of physical memory; --max-memory GIB sets it" : "--max-memory");
  return -1;
}

int tsr__oracle_prefers_gpu(const tsr_problem *p) {
  /* the threshold of tsr__oracle_cached */
  return (double)p->m * (double)p->n * (double)p->k * (double)p->batch >= 1e8;
}

double tsr__oracle_seconds(const tsr_problem *p, int gpu) {
  double flops = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
  if (gpu) return flops / TSR__ORACLE_GPU_FLOPS;
  /* tsr_oracle_cpu's threads: online CPUs up to 64, one row each at least */
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  double threads = ncpu > 0 ? (double)(ncpu > 64 ? 64 : ncpu) : 1.0;
  double rows = (double)p->batch * (double)p->m;
  if (rows < 64 || flops < 2e6) threads = 1.0;
  if (threads > rows) threads = rows;
  return flops / (TSR__ORACLE_CPU_FLOPS_PER_CORE * threads);
}

/* tsr_fill of one tensor: tsr__parallel_rows' threads (one below 4e6
 * elements, else the online CPUs up to TSR__PAR_MAX). */
static double fill_seconds(double elems) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  double threads = ncpu > 0 ? (double)(ncpu < TSR__PAR_MAX ? ncpu : TSR__PAR_MAX) : 1.0;
  if (elems < 4e6) threads = 1.0;
  return elems / (TSR__INPUT_ELEMS_PER_S * threads);
}

double tsr__inputs_seconds(const tsr_problem *p) {
  double out = (double)p->batch * (double)p->m * (double)p->n;
  return fill_seconds((double)tsr_problem_elems_a(p)) + fill_seconds((double)tsr_problem_elems_b(p)) +
         (p->beta != 0.0f ? fill_seconds((double)tsr_problem_elems_c(p)) : 0.0) +
         12.0 * out / TSR__ORACLE_HASH_BYTES_PER_S;
}

/* ---- workload ------------------------------------------------------------ */

void tsr__workload_destroy(tsr__workload *w) {
  if (!w) return;
  free(w->a);
  free(w->b);
  free(w->c0);
  free(w->ref);
  free(w->scale);
  free(w);
}

tsr_status tsr__workload_create(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                                const char *cache_dir, int oracle_only, tsr__workload **out,
                                char *msg, size_t cap) {
  *out = NULL;
  tsr__workload *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(msg, cap, "workload: out of host memory");
    return TSR_ERR_NOMEM;
  }
  w->p = *p;
  tsr_status st = tsr_problem_check(&w->p, msg, cap);
  if (st) {
    free(w);
    return st;
  }
  if ((unsigned)inputs >= TSR_INPUTS_COUNT) {
    free(w);
    snprintf(msg, cap, "inputs: %d is not an input family", (int)inputs);
    return TSR_ERR_INVALID;
  }
  w->inputs = inputs;
  w->seed = seed;
  w->strict_rel_fro = NAN;
  const tsr_problem *q = &w->p;
  size_t na = (size_t)tsr_problem_elems_a(q), nb = (size_t)tsr_problem_elems_b(q),
         nc = (size_t)tsr_problem_elems_c(q), nout = (size_t)(q->batch * q->m * q->n);
  w->ref = malloc(nout * sizeof *w->ref);
  w->scale = malloc(nout * sizeof *w->scale);
  const char *src = "";
  if (oracle_only && w->ref && w->scale) {
    /* a cached oracle needs no inputs: none are generated (a torch row
     * loads two 8192^2 entries and makes its own inputs) */
    int64_t t0 = tsr__now_ns();
    int hit = !tsr__oracle_cache_load(q, inputs, seed, cache_dir, w->ref, w->scale,
                                      &w->strict_rel_fro, &src, w->key_sha);
    w->oracle_ns = tsr__now_ns() - t0;
    if (hit) {
      snprintf(w->oracle_source, sizeof w->oracle_source, "%s", src);
      tsr__oracle_key(q, inputs, seed, w->key, sizeof w->key);
      *out = w;
      return TSR_OK;
    }
    w->strict_rel_fro = NAN;
  }
  w->a = malloc(na * sizeof *w->a);
  w->b = malloc(nb * sizeof *w->b);
  w->c0 = q->beta != 0.0f ? malloc(nc * sizeof *w->c0) : NULL;
  if (!w->a || !w->b || (q->beta != 0.0f && !w->c0) || !w->ref || !w->scale) {
    snprintf(msg, cap, "workload: cannot allocate %.1f MiB of host memory for %lldx%lldx%lld",
             tsr__workload_bytes(q) / 1048576.0, (long long)q->m, (long long)q->n,
             (long long)q->k);
    tsr__workload_destroy(w);
    return TSR_ERR_NOMEM;
  }
  int64_t t0 = tsr__now_ns();
  tsr_fill(q, TSR_TENSOR_A, inputs, seed, w->a);
  tsr_fill(q, TSR_TENSOR_B, inputs, seed, w->b);
  if (w->c0) tsr_fill(q, TSR_TENSOR_C, inputs, seed, w->c0);
  int64_t t1 = tsr__now_ns();
  st = tsr__oracle_cached(q, inputs, seed, w->a, w->b, w->c0, cache_dir, w->ref, w->scale,
                          &w->strict_rel_fro, &src, w->key_sha, msg, cap);
  w->inputs_ns = t1 - t0;
  w->oracle_ns += tsr__now_ns() - t1; /* (a missed cache-only load counts too) */
  if (st) {
    tsr__workload_destroy(w);
    return st;
  }
  snprintf(w->oracle_source, sizeof w->oracle_source, "%s", src);
  tsr__oracle_key(q, inputs, seed, w->key, sizeof w->key);
  if (oracle_only) {
    free(w->a);
    free(w->b);
    free(w->c0);
    w->a = w->b = w->c0 = NULL;
  }
  *out = w;
  return TSR_OK;
}

void tsr__workload_check(const tsr__workload *w, tsr_precision mode, double atol, double rtol,
                         const float *c, tsr_receipt *r) {
  if (w->inputs == TSR_INPUTS_DYADIC) tsr_validate(&w->p, c, w->ref, atol, rtol, r);
  else tsr_validate_contract(&w->p, c, w->ref, w->scale, w->strict_rel_fro, mode, r);
}

void tsr__receipt_summary(const tsr_receipt *r, char *buf, size_t cap) {
  size_t n = 0;
#define ADD(...)                                                         \
  do {                                                                   \
    int k_ = snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__);      \
    if (k_ > 0) n += (size_t)k_;                                         \
  } while (0)
  if (cap) buf[0] = '\0';
  if (r->contract == TSR_PREC_AUTO) {
    ADD("%lld of %lld elements outside atol=%g rtol=%g", (long long)r->failed,
        (long long)r->checked, r->atol, r->rtol);
  } else {
    ADD("%s contract: %lld of %lld elements fail", tsr_precision_name(r->contract),
        (long long)r->failed, (long long)r->checked);
    if (r->bound_failed)
      ADD(", %lld over the componentwise bound (worst %.3gx)", (long long)r->bound_failed,
          r->worst_bound_ratio);
    if (!(r->rel_fro_err <= r->fro_limit) && !isnan(r->fro_limit))
      ADD(", rel. Frobenius %.3g > limit %.3g", r->rel_fro_err, r->fro_limit);
  }
  if (r->class_failed) ADD(", %lld of the wrong NaN/Inf class", (long long)r->class_failed);
  if (r->first_fail >= 0) ADD(", first at %lld", (long long)r->first_fail);
  ADD(", max abs err %.3g", r->max_abs_err);
#undef ADD
}

/* ---- the validated call -------------------------------------------------- */
tsr_status tsr__validated_call_ns(tsr_exec *e, const tsr__workload *w, tsr_precision mode,
                                  double atol, double rtol, float *host_c, int corrupt,
                                  tsr_receipt *r, int64_t *call_ns, int64_t *check_ns) {
  int64_t t0 = tsr__now_ns();
  tsr_status st = tsr__exec_reset(e);
  if (!st) st = tsr__exec_launch(e, 1);
  if (!st) st = tsr__exec_sync(e);
  if (!st) {
    tsr_poison(&w->p, host_c);
    st = tsr__exec_download(e, host_c);
  }
  int64_t t1 = tsr__now_ns();
  *call_ns += t1 - t0;
  if (st) return st;
  if (corrupt) host_c[0] += 1.0f;
  tsr__workload_check(w, mode, atol, rtol, host_c, r);
  *check_ns += tsr__now_ns() - t1;
  return TSR_OK;
}

tsr_status tsr__validated_call(tsr_exec *e, const tsr__workload *w, tsr_precision mode,
                               double atol, double rtol, float *host_c, int corrupt,
                               tsr_receipt *r) {
  int64_t call_ns = 0, check_ns = 0;
  return tsr__validated_call_ns(e, w, mode, atol, rtol, host_c, corrupt, r, &call_ns, &check_ns);
}

/* ---- calibration and samples --------------------------------------------- */
tsr_status tsr__calibrate(tsr_exec *e, int warmup_ms, int sample_ms, tsr__calibration *cal) {
  const int64_t warm_ns = (int64_t)warmup_ms * 1000000, win_ns = (int64_t)sample_ms * 1000000;
  int64_t start = tsr__now_ns(), calls = 0, k = 1, per_call = 0, batches = 0;
  for (;;) {
    int64_t t0 = tsr__now_ns();
    tsr_status st = tsr__exec_launch(e, k);
    if (!st) st = tsr__exec_sync(e);
    if (st) return st;
    int64_t t1 = tsr__now_ns();
    calls += k;
    batches++;
    per_call = (t1 - t0) / k;
    if (per_call < 1) per_call = 1;
    if (t1 - start >= warm_ns && calls >= 2) break;
    int64_t fit = (warm_ns - (t1 - start)) / per_call;
    k = k * 2 < fit ? k * 2 : fit;
    if (k < 1) k = 1;
    if (k > (1 << 24)) k = 1 << 24;
  }
  int64_t n = (win_ns + per_call - 1) / per_call;
  if (n < 1) n = 1;
  if (n > (1 << 24)) n = 1 << 24;
  cal->warmup_calls = calls;
  cal->warmup_batches = batches;
  cal->warmup_ns = tsr__now_ns() - start;
  cal->est_call_ns = per_call;
  cal->calls_per_batch = n;
  return TSR_OK;
}

tsr_status tsr__sample(tsr_exec *e, tsr__timer timer, int64_t calls, int64_t *ns) {
  /* Restoring C and draining the queue are outside the timed region. */
  tsr_status st = tsr__exec_reset(e);
  if (!st) st = tsr__exec_sync(e);
  if (st) return st;
  if (timer == TSR__TIMER_EVENT) return tsr__exec_event_time(e, calls, ns);
  int64_t t0 = tsr__now_ns();
  st = tsr__exec_launch(e, calls);
  if (!st) st = tsr__exec_sync(e);
  *ns = tsr__now_ns() - t0;
  return st;
}
