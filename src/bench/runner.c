/* One (route, shape) measurement inside its own process (the hidden
 * `tessera bench-run` verb). Order of work: inputs, oracle, prepare
 * (compile/alloc/upload), a validated call, warm-up + calibration, the timed
 * samples of every metric, a second validated call. Only launch/sync/event
 * calls are ever inside a timed region. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "sys/assert.h"
#include "sys/clock.h"
#include "sys/spawn.h"
#include "core/context.h"
#include "core/hash.h"
#include "measure/measure.h"
#include "bench/routes/openblas.h"


/* ---- test hooks --------------------------------------------------------- */
/* TSR_BENCH_TEST_{CRASH,HANG,CORRUPT}=route[,route...]: make a route crash
 * (SIGSEGV), hang, or return one wrong output element, so that the tests can
 * prove each is recorded as a failed row without stopping the run. */
static int hook(const char *var, const char *route) {
  const char *v = getenv(var);
  if (!v || !*v) return 0;
  size_t n = strlen(route);
  for (const char *s = v; *s;) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == n && !strncmp(s, route, n)) return 1;
    if (!e) break;
    s = e + 1;
  }
  return 0;
}

static void apply_crash_hang_hooks(const char *route) {
  if (hook("TSR_BENCH_TEST_CRASH", route)) {
    fprintf(stderr, "bench-run: TSR_BENCH_TEST_CRASH: raising SIGSEGV for %s\n", route);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (hook("TSR_BENCH_TEST_HANG", route)) {
    fprintf(stderr, "bench-run: TSR_BENCH_TEST_HANG: hanging in %s\n", route);
    for (;;) pause();
  }
}

/* ---- shared pieces ------------------------------------------------------ */
static json_t *problem_json(const tsr_problem *p) {
  json_t *o = json_object();
  json_object_set_new(o, "m", json_integer(p->m));
  json_object_set_new(o, "n", json_integer(p->n));
  json_object_set_new(o, "k", json_integer(p->k));
  json_object_set_new(o, "batch", json_integer(p->batch));
  json_object_set_new(o, "op_a", json_string(p->op_a == TSR_OP_T ? "T" : "N"));
  json_object_set_new(o, "op_b", json_string(p->op_b == TSR_OP_T ? "T" : "N"));
  json_object_set_new(o, "alpha", json_real(p->alpha));
  json_object_set_new(o, "beta", json_real(p->beta));
  return o;
}

static json_t *plan_info_json(const tsr_plan_info *info) {
  char text[512];
  tsr_plan_format(&info->plan, text, sizeof text);
  json_t *o = json_object();
  json_object_set_new(o, "plan", json_string(text));
  json_object_set_new(o, "grid_rows", json_integer(info->grid_rows));
  json_object_set_new(o, "grid_cols", json_integer(info->grid_cols));
  json_object_set_new(o, "grid_batch", json_integer(info->grid_batch));
  json_object_set_new(o, "threads", json_integer(info->threads));
  json_object_set_new(o, "smem_bytes", json_integer((json_int_t)info->smem_bytes));
  json_object_set_new(o, "regs", json_integer(info->regs));
  json_object_set_new(o, "local_bytes", json_integer(info->local_bytes));
  json_object_set_new(o, "tail_m", json_integer(info->tail_m));
  json_object_set_new(o, "tail_n", json_integer(info->tail_n));
  json_object_set_new(o, "tail_k", json_integer(info->tail_k));
  json_object_set_new(o, "source_sha256",
                      info->source_sha256[0] ? json_string(info->source_sha256) : json_null());
  return o;
}

static void set_error(json_t *row, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(json_t *row, const char *status, const char *fmt, ...) {
  char buf[TSR__MSG_CAP + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  json_object_set_new(row, "status", json_string(status));
  json_object_set_new(row, "error", json_string(buf));
}

static json_t *sample_json(int64_t ns, int64_t calls) {
  json_t *s = json_object();
  json_object_set_new(s, "ns", json_integer(ns));
  json_object_set_new(s, "calls", json_integer(calls));
  return s;
}

/* ---- per-phase wall times (row.phase_ns, docs/protocol.md) --------------- */
/* Where a row's child time goes outside the timed samples: each phase's
 * total over the row (both workloads, every validated call), so a slow row
 * shows which host-side step to cut. A phase that did not run is absent. */
typedef enum {
  PH_PLAN,       /* plan lookup and realization */
  PH_INPUTS,     /* input generation (timing and accuracy workloads) */
  PH_ORACLE,     /* oracle cache load or computation (both workloads) */
  PH_PREPARE,    /* prepared calls: compile, allocate, upload */
  PH_CALL,       /* validated calls: reset, call, synchronize, poison, download */
  PH_CHECK,      /* validation of every output element */
  PH_OUTPUT_SHA, /* the receipts' output SHA-256 */
  PH_TIMING,     /* warm-up, calibration and the timed samples */
  PH_TORCH,      /* torch rows: the python3 process, reading its outputs */
  PH_TEARDOWN,   /* freeing buffers, prepared calls and the context */
  PH_COUNT
} row_phase;

static const char *const phase_names[PH_COUNT] = {
    "plan", "inputs", "oracle", "prepare", "call", "check", "output_sha", "timing", "torch",
    "teardown"};

typedef struct {
  int64_t ns[PH_COUNT]; /* -1: did not run */
} row_phases;

/* Adds the time since *t0 to phase ph and restarts *t0. */
static void phase_add(row_phases *ph, row_phase k, int64_t *t0) {
  int64_t now = tsr__now_ns();
  ph->ns[k] = (ph->ns[k] < 0 ? 0 : ph->ns[k]) + (now - *t0);
  *t0 = now;
}

static void phase_add_workload(row_phases *ph, const tsr__workload *w) {
  if (!w) return;
  ph->ns[PH_INPUTS] = (ph->ns[PH_INPUTS] < 0 ? 0 : ph->ns[PH_INPUTS]) + w->inputs_ns;
  ph->ns[PH_ORACLE] = (ph->ns[PH_ORACLE] < 0 ? 0 : ph->ns[PH_ORACLE]) + w->oracle_ns;
}

static json_t *phases_json(const row_phases *ph) {
  json_t *o = json_object();
  for (int k = 0; k < PH_COUNT; k++)
    if (ph->ns[k] >= 0) json_object_set_new(o, phase_names[k], json_integer(ph->ns[k]));
  return o;
}

/* SHA-256 of the output C that a receipt judged: the downloaded buffer,
 * count floats as stored in memory (little-endian IEEE binary32, row-major
 * batch x M x N), so two runs can be compared bit for bit. */
static void add_output_hash(json_t *receipt, const float *c, size_t count, row_phases *ph) {
  char sha[65];
  int64_t t0 = tsr__now_ns();
  int ok = c && !tsr__sha256_hex(c, count * sizeof *c, sha);
  phase_add(ph, PH_OUTPUT_SHA, &t0);
  json_object_set_new(receipt, "output_sha256", ok ? json_string(sha) : json_null());
}

/* Appends the receipt to row.validation; a failure marks the row. */
static int add_receipt(json_t *row, const tsr_problem *p, const tsr_receipt *r, const char *phase,
                       const float *c, size_t count, row_phases *ph) {
  int64_t expected = p->batch * p->m * p->n;
  json_t *o = tsr__receipt_json(r, phase, expected);
  add_output_hash(o, c, count, ph);
  json_array_append_new(json_object_get(row, "validation"), o);
  int ok = r->passed && r->checked == expected;
  if (!ok) {
    char sum[512];
    tsr__receipt_summary(r, sum, sizeof sum);
    set_error(row, "failed_validation", "%s: %s", phase, sum);
    fprintf(stderr, "bench-run: VALIDATION FAILED %s: %s\n", phase, sum);
  }
  return ok;
}

/* The oracle record of a workload. */
static json_t *oracle_json(const tsr__workload *w) {
  json_t *o = json_object();
  json_object_set_new(o, "source", json_string(w->oracle_source));
  json_object_set_new(o, "key", json_string(w->key));
  json_object_set_new(o, "key_sha256", json_string(w->key_sha));
  json_object_set_new(o, "strict_rel_fro", tsr__json_real(w->strict_rel_fro));
  return o;
}

/* row.accuracy: the route's contract receipt on the accuracy family's
 * inputs (docs/accuracy.md). A route that breaks its mode's contract is a
 * failed row: no route is ever faster by being less accurate. */
static int add_accuracy(json_t *row, const tsr__workload *w, tsr_precision mode,
                        const tsr_receipt *r, const float *c, size_t count, row_phases *ph) {
  int64_t expected = w->p.batch * w->p.m * w->p.n;
  json_t *o = tsr__receipt_json(r, "accuracy", expected);
  add_output_hash(o, c, count, ph);
  json_object_set_new(o, "inputs", json_string(tsr_inputs_name(w->inputs)));
  json_object_set_new(o, "seed", json_integer((json_int_t)w->seed));
  json_object_set_new(o, "oracle", oracle_json(w));
  json_object_set_new(row, "accuracy", o);
  int ok = r->passed && r->checked == expected;
  if (!ok) {
    char sum[512];
    tsr__receipt_summary(r, sum, sizeof sum);
    set_error(row, "failed_accuracy", "accuracy (%s inputs, precision %s): %s",
              tsr_inputs_name(w->inputs), tsr_precision_name(mode), sum);
    fprintf(stderr, "bench-run: ACCURACY FAILED (%s): %s\n", tsr_precision_name(mode), sum);
  }
  return ok;
}

/* Device, driver, NVRTC and cuBLAS versions (GPU backends). */
static void cuda_versions(tsr_context *ctx, tsr_backend_kind b, json_t *v) {
  tsr_device_info d;
  if (tsr_backend_describe(ctx, b, &d) != TSR_OK) return;
  char buf[32];
  json_object_set_new(v, "device", json_string(d.device));
  snprintf(buf, sizeof buf, "%d.%d", d.cc_major, d.cc_minor);
  json_object_set_new(v, "compute_capability", json_string(buf));
  json_object_set_new(v, "sm_count", json_integer(d.sm_count));
  json_object_set_new(v, "cuda_driver_version", json_integer(d.driver_version));
  json_object_set_new(v, "nvrtc_version", d.nvrtc[0] ? json_string(d.nvrtc) : json_null());
  json_object_set_new(v, "cublas_version", d.cublas_version ? json_integer(d.cublas_version) : json_null());
  json_object_set_new(v, "total_mem", json_integer((json_int_t)d.total_mem));
}

/* ---- the route's backend ------------------------------------------------ */
/* A tessera backend through the public API; the OpenBLAS peer through its
 * entry points (routes/openblas.h). Both run as a prepared execution. */
static tsr_status route_available(tsr_context *ctx, const tsr__route *route) {
  return route->kind == TSR_ROUTE_OPENBLAS ? tsr__openblas_available(ctx)
                                           : tsr_backend_available(ctx, route->backend);
}

static tsr_status route_realize(tsr_context *ctx, const tsr__route *route, const tsr_problem *p,
                                const tsr_plan *plan, tsr_plan_info *info) {
  return route->kind == TSR_ROUTE_OPENBLAS ? tsr__openblas_realize(ctx, p, plan, info)
                                           : tsr_plan_realize(ctx, route->backend, p, plan, info);
}

/* Realize plan on p and prepare it with w's inputs. */
static tsr_status route_exec(tsr_context *ctx, const tsr__route *route, const tsr_problem *p,
                             const tsr_plan *plan, const tsr__workload *w, tsr_exec **e) {
  if (route->kind == TSR_ROUTE_OPENBLAS)
    return tsr__exec_create_vt(ctx, &tsr__route_openblas, p, plan, w->a, w->b, w->c0, 0, e);
  return tsr__exec_create(ctx, route->backend, p, plan, w->a, w->b, w->c0, 0, e);
}

/* ---- backend-shaped routes (tessera backends and openblas) -------------- */
static const tsr__metric gpu_metrics[] = {TSR_METRIC_GPU_BATCH, TSR_METRIC_E2E_BATCH,
                                          TSR_METRIC_GPU_SINGLE, TSR_METRIC_E2E_SINGLE};
static const tsr__metric cpu_metrics[] = {TSR_METRIC_WALL_BATCH, TSR_METRIC_WALL_SINGLE};

/* One metric's samples through the measurement layer's sample loop. */
static tsr_status time_metric(tsr_exec *e, tsr__metric m, int64_t n, int samples, json_t *arr) {
  int batch = m == TSR_METRIC_GPU_BATCH || m == TSR_METRIC_E2E_BATCH || m == TSR_METRIC_WALL_BATCH;
  tsr__timer timer = m == TSR_METRIC_GPU_BATCH || m == TSR_METRIC_GPU_SINGLE ? TSR__TIMER_EVENT
                                                                             : TSR__TIMER_HOST;
  int64_t calls = batch ? n : 1;
  for (int s = 0; s < samples; s++) {
    int64_t ns = 0;
    tsr_status st = tsr__sample(e, timer, calls, &ns);
    if (st) return st;
    json_array_append_new(arr, sample_json(ns, calls));
  }
  return TSR_OK;
}

static json_t *calibration_json(const tsr__calibration *c) {
  json_t *cal = json_object();
  json_object_set_new(cal, "warmup_calls", json_integer(c->warmup_calls));
  json_object_set_new(cal, "warmup_batches", json_integer(c->warmup_batches));
  json_object_set_new(cal, "warmup_ns", json_integer(c->warmup_ns));
  json_object_set_new(cal, "est_call_ns", json_integer(c->est_call_ns));
  json_object_set_new(cal, "calls_per_batch", json_integer(c->calls_per_batch));
  return cal;
}

/* The problem a route runs: the bench's, with the route's own precision
 * mode when it has one. */
static tsr_problem route_problem(const tsr__run_params *rp) {
  tsr_problem p = rp->problem;
  p.precision = rp->route->precision != TSR_PREC_AUTO ? rp->route->precision : rp->precision;
  return p;
}

/* One backend-shaped measurement, carried through its phases. Each phase
 * returns 0, or -1 once it has set the row's error. */
typedef struct {
  const tsr__run_params *rp;
  json_t *row;
  tsr_context *ctx;
  tsr_problem p;
  tsr_plan plan; /* as looked up, threads set: each prepared call realizes it */
  char plan_source[256];
  tsr_plan_info info;
  tsr__workload *w, *wacc;
  tsr_exec *e, *eacc;
  float *host_c;
  size_t nc; /* floats of host_c */
  row_phases *ph;
} backend_run;

/* A failed step: its status and the context's message. */
static int fail_status(backend_run *m, tsr_status st) {
  set_error(m->row, "error", "%s: %s", tsr_status_str(st), tsr_context_message(m->ctx));
  return -1;
}

/* The plan first: a rejection costs no inputs and no oracle. */
static int backend_plan(backend_run *m) {
  const tsr__route *route = m->rp->route;
  char msg[512];
  if (route_available(m->ctx, route)) {
    set_error(m->row, "error", "route unavailable: %s", tsr_context_message(m->ctx));
    return -1;
  }
  if (tsr_problem_check(&m->p, msg, sizeof msg)) {
    set_error(m->row, "error", "%s", msg);
    return -1;
  }
  snprintf(m->plan_source, sizeof m->plan_source, "built-in default (tuning database bypassed)");
  if (route->kind == TSR_ROUTE_OPENBLAS) {
    tsr__openblas_default_plan(m->ctx, &m->p, &m->plan);
    snprintf(m->plan_source, sizeof m->plan_source, "route's own");
  } else if (route->builtin_plan) {
    tsr_plan_builtin(m->ctx, route->backend, &m->p, &m->plan); /* the device's table */
  } else if (tsr_plan_lookup(m->ctx, route->backend, &m->p, &m->plan, m->plan_source,
                             sizeof m->plan_source)) {
    set_error(m->row, "error", "default plan: %s", tsr_context_message(m->ctx));
    return -1;
  }
  if (!route->is_gpu) m->plan.threads = m->rp->threads;
  if (route_realize(m->ctx, route, &m->p, &m->plan, &m->info)) {
    set_error(m->row, "error", "plan rejected: %s", tsr_context_message(m->ctx));
    return -1;
  }
  json_object_set_new(m->row, "precision", json_string(tsr_precision_name(m->info.precision)));
  return 0;
}

/* Inputs and oracle, the prepared call (compile, allocate, upload), and
 * what the row records of them. */
static int backend_prepare(backend_run *m) {
  const tsr__run_params *rp = m->rp;
  const tsr__route *route = rp->route;
  json_t *row = m->row;
  char msg[512];
  tsr_status st;
  if ((st = tsr__workload_create(&m->p, rp->inputs, rp->seed, rp->oracle_cache, 0, &m->w, msg,
                                 sizeof msg))) {
    set_error(row, "error", "%s", msg);
    return -1;
  }
  phase_add_workload(m->ph, m->w);
  int64_t t0 = tsr__now_ns();
  json_object_set_new(row, "oracle", oracle_json(m->w));
  m->nc = (size_t)tsr_problem_elems_c(&m->p);
  m->host_c = malloc(m->nc * sizeof *m->host_c);
  if (!m->host_c) {
    set_error(row, "error", "out of host memory for the output");
    return -1;
  }
  st = route_exec(m->ctx, route, &m->p, &m->plan, m->w, &m->e);
  phase_add(m->ph, PH_PREPARE, &t0);
  if (st) {
    set_error(row, "error", "prepare: %s: %s", tsr_status_str(st), tsr_context_message(m->ctx));
    return -1;
  }
  TSR_ASSERT(tsr__exec_is_gpu(m->e) == route->is_gpu); /* the route table says which */
  m->info = *tsr_exec_info(m->e);
  json_object_set_new(row, "plan_info", plan_info_json(&m->info));
  json_object_set_new(json_object_get(row, "plan_info"), "plan_source",
                      json_string(m->plan_source));
  if (route->is_gpu) cuda_versions(m->ctx, route->backend, json_object_get(row, "versions"));
  if (route->kind == TSR_ROUTE_OPENBLAS) {
    char text[128];
    snprintf(text, sizeof text, "cblas_sgemm (OpenBLAS), threads=%d", tsr__openblas_threads());
    json_object_set_new(json_object_get(row, "plan_info"), "plan", json_string(text));
    json_t *v = json_object_get(row, "versions");
    json_object_set_new(v, "openblas_config", json_string(tsr__openblas_config()));
    json_object_set_new(v, "openblas_path", json_string(tsr__openblas_path()));
    json_object_set_new(v, "openblas_threads", json_integer(tsr__openblas_threads()));
    /* set in the environment, these pin OpenBLAS below its best kernels: the
     * report says so next to the peer */
    const char *pin[] = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"};
    for (size_t i = 0; i < sizeof pin / sizeof *pin; i++) {
      const char *val = getenv(pin[i]);
      if (val && *val) json_object_set_new(v, pin[i], json_string(val));
    }
  }
  return 0;
}

/* A validated call, warm-up + calibration, the samples of every metric, a
 * second validated call. */
static int backend_time(backend_run *m) {
  const tsr__run_params *rp = m->rp;
  row_phases *ph = m->ph;
  int corrupt = hook("TSR_BENCH_TEST_CORRUPT", rp->route->name);
  tsr_receipt rec;
  ph->ns[PH_CALL] = ph->ns[PH_CHECK] = 0;
  tsr_status st = tsr__validated_call_ns(m->e, m->w, m->info.precision, rp->atol, rp->rtol,
                                         m->host_c, corrupt, &rec, &ph->ns[PH_CALL],
                                         &ph->ns[PH_CHECK]);
  if (st) return fail_status(m, st);
  if (!add_receipt(m->row, &m->p, &rec, "before_timing", m->host_c, m->nc, ph)) return -1;
  int64_t t0 = tsr__now_ns();
  tsr__calibration cal;
  if ((st = tsr__calibrate(m->e, rp->warmup_ms, rp->sample_ms, &cal))) {
    phase_add(ph, PH_TIMING, &t0);
    return fail_status(m, st);
  }
  json_object_set_new(m->row, "calibration", calibration_json(&cal));
  json_t *metrics = json_object_get(m->row, "metrics");
  int gpu = tsr__exec_is_gpu(m->e);
  const tsr__metric *ms = gpu ? gpu_metrics : cpu_metrics;
  int nm = gpu ? 4 : 2;
  for (int i = 0; i < nm && !st; i++) {
    json_t *arr = json_array();
    json_object_set_new(metrics, tsr__metric_name(ms[i]), arr);
    st = time_metric(m->e, ms[i], cal.calls_per_batch, rp->samples, arr);
  }
  phase_add(ph, PH_TIMING, &t0);
  if (st) return fail_status(m, st);
  if ((st = tsr__validated_call_ns(m->e, m->w, m->info.precision, rp->atol, rp->rtol, m->host_c,
                                   corrupt, &rec, &ph->ns[PH_CALL], &ph->ns[PH_CHECK])))
    return fail_status(m, st);
  if (!add_receipt(m->row, &m->p, &rec, "after_timing", m->host_c, m->nc, ph)) return -1;
  return 0;
}

/* Accuracy: the same plan on the accuracy family's inputs, a second
 * prepared call (the kernel comes from the module cache). */
static int backend_accuracy(backend_run *m) {
  const tsr__run_params *rp = m->rp;
  char msg[512];
  tsr__workload_destroy(m->w); /* the timing inputs are done with */
  m->w = NULL;
  tsr_status st;
  if ((st = tsr__workload_create(&m->p, (tsr_inputs)rp->accuracy, rp->accuracy_seed,
                                 rp->oracle_cache, 0, &m->wacc, msg, sizeof msg))) {
    set_error(m->row, "error", "accuracy workload: %s", msg);
    return -1;
  }
  phase_add_workload(m->ph, m->wacc);
  int64_t t0 = tsr__now_ns();
  st = route_exec(m->ctx, rp->route, &m->p, &m->plan, m->wacc, &m->eacc);
  phase_add(m->ph, PH_PREPARE, &t0);
  if (st) return fail_status(m, st);
  tsr_receipt rec;
  if ((st = tsr__validated_call_ns(m->eacc, m->wacc, m->info.precision, 0.0, 0.0, m->host_c,
                                   hook("TSR_BENCH_TEST_INACCURATE", rp->route->name), &rec,
                                   &m->ph->ns[PH_CALL], &m->ph->ns[PH_CHECK])))
    return fail_status(m, st);
  add_accuracy(m->row, m->wacc, m->info.precision, &rec, m->host_c, m->nc, m->ph);
  return 0;
}

static void measure_backend(const tsr__run_params *rp, json_t *row, row_phases *ph) {
  backend_run m = {.rp = rp, .row = row, .p = route_problem(rp), .ph = ph};
  int64_t t0 = tsr__now_ns();
  if (tsr_context_create(&m.ctx)) {
    set_error(row, "error", "cannot create a context");
    return;
  }
  int planned = !backend_plan(&m);
  phase_add(ph, PH_PLAN, &t0);
  if (planned && !backend_prepare(&m) && !backend_time(&m) && rp->accuracy >= 0)
    backend_accuracy(&m);
  t0 = tsr__now_ns();
  tsr_exec_destroy(m.e);
  tsr_exec_destroy(m.eacc);
  free(m.host_c);
  tsr__workload_destroy(m.w);
  tsr__workload_destroy(m.wacc);
  tsr_context_destroy(m.ctx);
  phase_add(ph, PH_TEARDOWN, &t0);
}

/* ---- torch: a python3 process produces samples and outputs -------------- */
/* Everything fd delivers until EOF, NUL-terminated (malloc'ed); closes fd. */
static char *read_all(int fd) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
    ssize_t r = read(fd, buf + len, cap - len - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  buf[len] = '\0';
  close(fd);
  return buf;
}

/* Runs argv with stdout captured (NUL-terminated, malloc'ed); stderr is
 * inherited. python3 stays in this process's group, so the orchestrator's
 * kill of the row's group reaches it. Returns the wait status (127 when
 * argv[0] cannot be run, with the line a failed exec printed before), or -1
 * when it could not start. */
static int run_capture(char *const argv[], char **out) {
  *out = NULL;
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) return -1;
  tsr__spawn_fd fds[] = {{pfd[1], 1}};
  tsr__spawn_opts o = {.file = argv[0], .argv = argv, .fds = fds, .nfds = 1};
  tsr__proc proc;
  char msg[512];
  int sp = tsr__spawn(&o, &proc, msg, sizeof msg);
  close(pfd[1]);
  if (sp != TSR__SPAWN_OK) {
    close(pfd[0]);
    if (sp == TSR__SPAWN_FAILED) return -1;
    fprintf(stderr, "bench-run: %s\n", msg);
    *out = strdup("");
    return W_EXITCODE(127, 0);
  }
  tsr__spawn_capture cap = {.fd = pfd[0]};
  tsr__spawn_result r;
  tsr__spawn_wait(&proc, 0, 0, &cap, &r);
  *out = cap.buf;
  return r.status;
}

/* The same request through a torch zygote (torch_zygote.c): argv (without
 * "python3") as one JSON line with this process's stderr attached, stdout of
 * the forked child captured until EOF, then the zygote's trailer line with
 * the child's exit. Returns a wait status like run_capture (synthesized from
 * the trailer), or -1 when the zygote could not be reached; *proc receives
 * the trailer's {pid, child_pid, ...}. */
static int zygote_capture(const char *sock, char *const argv[], char **out, json_t **proc) {
  *out = NULL;
  *proc = NULL;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(sock) >= sizeof sa.sun_path) return -1;
  strcpy(sa.sun_path, sock);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  json_t *req = json_object(), *av = json_array();
  for (int i = 0; argv[i]; i++) json_array_append_new(av, json_string(argv[i]));
  json_object_set_new(req, "argv", av);
  char *line = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  size_t ll = strlen(line);
  line = realloc(line, ll + 2);
  line[ll++] = '\n';
  line[ll] = '\0';
  /* first chunk carries fd 2 (SCM_RIGHTS); the rest, if any, plainly */
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct iovec io = {line, ll};
  struct msghdr mh = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl.buf,
                      .msg_controllen = sizeof ctl.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  int errfd = 2;
  memcpy(CMSG_DATA(c), &errfd, sizeof errfd);
  ssize_t sent = sendmsg(fd, &mh, MSG_NOSIGNAL);
  size_t off = sent > 0 ? (size_t)sent : 0;
  while (sent >= 0 && off < ll) {
    sent = send(fd, line + off, ll - off, MSG_NOSIGNAL);
    if (sent > 0) off += (size_t)sent;
    else if (sent < 0 && errno == EINTR) sent = 0;
  }
  free(line);
  if (off < ll) {
    close(fd);
    return -1;
  }
  /* Never shut down our write side: the zygote reads EOF as "the client is
   * gone" and kills the child. */
  char *buf = read_all(fd);
  char *tr = strstr(buf, "\n{\"zygote\"");
  for (char *q = tr; q; q = strstr(q + 1, "\n{\"zygote\"")) tr = q; /* the last one */
  json_error_t jerr;
  json_t *t = tr ? json_loads(tr + 1, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
  json_t *z = json_object_get(t, "zygote");
  if (!json_is_object(z)) {
    json_decref(t);
    *out = buf;
    return -1;
  }
  *tr = '\0';
  *out = buf;
  *proc = json_incref(z);
  json_decref(t);
  json_t *code = json_object_get(z, "exit_code"), *sig = json_object_get(z, "signal");
  if (json_is_integer(code)) return (int)(json_integer_value(code) & 0xff) << 8;
  if (json_is_integer(sig)) return (int)(json_integer_value(sig) & 0x7f);
  return -1;
}

const char *tsr__torch_script_default(void) {
  static char buf[4096];
  const char *env = getenv("TSR_TORCH_SCRIPT");
  if (env && *env) return env;
  /* <build>/tessera with the build dir inside the source tree. */
  char exe[4096];
  ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (l > 0) {
    exe[l] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      static const char *const rel[] = {"../src/bench/routes/torch_route.py",
                                        "../share/tessera/torch_route.py"};
      for (int i = 0; i < 2; i++) {
        char cand[8192];
        snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
        if (realpath(cand, buf)) return buf;
      }
    }
  }
  /* The source tree this file was compiled from (CMake passes absolute
   * paths): src/bench/runner.c → src/bench/routes/torch_route.py. */
  snprintf(buf, sizeof buf, "%s", __FILE__);
  char *slash = strrchr(buf, '/');
  if (slash) snprintf(slash, sizeof buf - (size_t)(slash - buf), "/routes/torch_route.py");
  return buf;
}

static int read_floats(const char *path, float *out, size_t count) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  int ok = fread(out, sizeof *out, count, f) == count && fgetc(f) == EOF;
  fclose(f);
  return ok ? 0 : -1;
}

/* The torch route's limits: compact layouts, strict or tf32. 0, or -1 with
 * the row's error set. */
static int torch_check(const tsr__run_params *rp, tsr_problem *p, json_t *row) {
  char msg[512];
  if (tsr_problem_check(p, msg, sizeof msg)) {
    set_error(row, "error", "%s", msg);
    return -1;
  }
  if (p->lda != (p->op_a == TSR_OP_N ? p->k : p->m) ||
      p->ldb != (p->op_b == TSR_OP_N ? p->n : p->k) || p->ldc != p->n) {
    set_error(row, "error", "torch route: only compact layouts");
    return -1;
  }
  if (p->precision != TSR_PREC_STRICT && p->precision != TSR_PREC_TF32) {
    set_error(row, "error", "precision: %s is not available on route %s (strict, tf32)",
              tsr_precision_name(p->precision), rp->route->name);
    return -1;
  }
  json_object_set_new(row, "precision", json_string(tsr_precision_name(p->precision)));
  return 0;
}

/* torch_route.py's command line and the output files it writes (before
 * timing, after timing, accuracy: paths[0..2]). */
typedef struct {
  char paths[3][4200];
  char sm[32], sn[32], sk[32], sb[32], sal[64], sbe[64], sseed[32], ssam[16], sms[16], swm[16],
      saseed[32];
  char *argv[48];
} torch_args;

static void torch_argv(const tsr__run_params *rp, const tsr_problem *p, const tsr__workload *wacc,
                       torch_args *t) {
  const char *wd = rp->work_dir ? rp->work_dir : "/tmp";
  static const char *const kind[3] = {"before", "after", "accuracy"};
  for (int i = 0; i < 3; i++)
    snprintf(t->paths[i], sizeof t->paths[i], "%s/torch-%ld-%s.f32", wd, (long)getpid(), kind[i]);
  snprintf(t->sm, sizeof t->sm, "%" PRId64, p->m);
  snprintf(t->sn, sizeof t->sn, "%" PRId64, p->n);
  snprintf(t->sk, sizeof t->sk, "%" PRId64, p->k);
  snprintf(t->sb, sizeof t->sb, "%" PRId64, p->batch);
  snprintf(t->sal, sizeof t->sal, "%.9g", (double)p->alpha);
  snprintf(t->sbe, sizeof t->sbe, "%.9g", (double)p->beta);
  snprintf(t->sseed, sizeof t->sseed, "%" PRIu64, rp->seed);
  snprintf(t->ssam, sizeof t->ssam, "%d", rp->samples);
  snprintf(t->sms, sizeof t->sms, "%d", rp->sample_ms);
  snprintf(t->swm, sizeof t->swm, "%d", rp->warmup_ms);
  snprintf(t->saseed, sizeof t->saseed, "%" PRIu64, rp->accuracy_seed);
  char *const head[] = {"python3", (char *)rp->torch_script, "--m", t->sm, "--n", t->sn, "--k",
                        t->sk, "--batch", t->sb, "--op-a", p->op_a == TSR_OP_T ? "T" : "N",
                        "--op-b", p->op_b == TSR_OP_T ? "T" : "N", "--alpha", t->sal, "--beta",
                        t->sbe, "--inputs", (char *)tsr_inputs_name(rp->inputs), "--seed",
                        t->sseed, "--samples", t->ssam, "--sample-ms", t->sms, "--warmup-ms",
                        t->swm, "--out-before", t->paths[0], "--out-after", t->paths[1]};
  int na = 0;
  for (size_t i = 0; i < sizeof head / sizeof *head; i++) t->argv[na++] = head[i];
  if (p->precision == TSR_PREC_TF32) t->argv[na++] = "--tf32";
  if (wacc) {
    t->argv[na++] = "--accuracy-inputs";
    t->argv[na++] = (char *)tsr_inputs_name(wacc->inputs);
    t->argv[na++] = "--accuracy-seed";
    t->argv[na++] = t->saseed;
    t->argv[na++] = "--out-accuracy";
    t->argv[na++] = t->paths[2];
  }
  t->argv[na] = NULL;
}

/* Runs torch_route.py (through the zygote when there is one), recording
 * row.torch_process; its JSON result, or NULL with the row's error set. */
static json_t *torch_run(const tsr__run_params *rp, char **argv, json_t *row) {
  char *out = NULL;
  json_t *proc = json_object(), *zproc = NULL;
  int status;
  if (rp->torch_zygote) {
    status = zygote_capture(rp->torch_zygote, argv + 2, &out, &zproc); /* no python3, script */
    json_object_set_new(proc, "mode", json_string("zygote-fork"));
    json_object_set_new(proc, "socket", json_string(rp->torch_zygote));
    if (zproc) json_object_update(proc, zproc);
    json_decref(zproc);
  } else {
    status = run_capture(argv, &out);
    json_object_set_new(proc, "mode", json_string("exec"));
  }
  json_object_set_new(row, "torch_process", proc);
  json_error_t jerr;
  json_t *res = out ? json_loads(out, 0, &jerr) : NULL;
  free(out);
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !json_is_object(res)) {
    const char *why = res ? json_string_value(json_object_get(res, "error")) : NULL;
    set_error(row, "error", "torch_route.py failed (%s, wait status %d): %s",
              rp->torch_zygote ? "forked by the zygote" : "exec", status,
              why ? why : status == -1 && rp->torch_zygote ? "zygote unreachable or no trailer"
                                                           : "no JSON result on stdout");
    json_decref(res);
    return NULL;
  }
  return res;
}

/* The receipts of the outputs torch wrote (before and after timing against
 * w, accuracy against wacc when there is one); 1 when every one passed. */
static int torch_receipts(const tsr__run_params *rp, const tsr_problem *p, const torch_args *t,
                          const tsr__workload *w, const tsr__workload *wacc, json_t *row,
                          row_phases *ph) {
  size_t count = (size_t)(p->batch * p->m * p->n);
  float *c = malloc(count * sizeof *c);
  int ok = c != NULL;
  static const char *const phases[3] = {"before_timing", "after_timing", "accuracy"};
  for (int i = 0; i < (wacc ? 3 : 2) && ok; i++) {
    int64_t t0 = tsr__now_ns();
    int got = read_floats(t->paths[i], c, count);
    phase_add(ph, PH_TORCH, &t0);
    if (got != 0) {
      set_error(row, "error", "torch output %s missing or of the wrong size", t->paths[i]);
      ok = 0;
      break;
    }
    int corrupt =
        hook(i < 2 ? "TSR_BENCH_TEST_CORRUPT" : "TSR_BENCH_TEST_INACCURATE", rp->route->name);
    if (corrupt) c[0] += 1.0f;
    tsr_receipt r;
    tsr__workload_check(i < 2 ? w : wacc, p->precision, rp->atol, rp->rtol, c, &r);
    phase_add(ph, PH_CHECK, &t0);
    ok = i < 2 ? add_receipt(row, p, &r, phases[i], c, count, ph)
               : add_accuracy(row, wacc, p->precision, &r, c, count, ph);
  }
  free(c);
  return ok;
}

static void measure_torch(const tsr__run_params *rp, json_t *row, row_phases *ph) {
  tsr_problem p = route_problem(rp);
  char msg[512];
  if (torch_check(rp, &p, row)) return;
  tsr__workload *w = NULL, *wacc = NULL;
  tsr_status st = tsr__workload_create(&p, rp->inputs, rp->seed, rp->oracle_cache, 1, &w, msg,
                                       sizeof msg);
  if (!st && rp->accuracy >= 0)
    st = tsr__workload_create(&p, (tsr_inputs)rp->accuracy, rp->accuracy_seed, rp->oracle_cache, 1,
                              &wacc, msg, sizeof msg);
  phase_add_workload(ph, w);
  phase_add_workload(ph, wacc);
  if (st) {
    set_error(row, "error", "%s", msg);
    tsr__workload_destroy(w);
    return;
  }
  json_object_set_new(row, "oracle", oracle_json(w));
  torch_args t;
  torch_argv(rp, &p, wacc, &t);
  int64_t t0 = tsr__now_ns();
  json_t *res = torch_run(rp, t.argv, row);
  phase_add(ph, PH_TORCH, &t0);
  if (res) {
    json_object_set(row, "calibration", json_object_get(res, "calibration"));
    json_object_update(json_object_get(row, "versions"), json_object_get(res, "versions"));
    json_t *plan_info = json_object();
    json_object_set_new(plan_info, "plan",
                        json_string(p.precision == TSR_PREC_TF32
                                        ? "torch.mm(out=) allow_tf32=True"
                                        : "torch.mm(out=) allow_tf32=False"));
    json_object_set_new(plan_info, "source_sha256", json_null());
    json_object_set_new(row, "plan_info", plan_info);
    /* Samples count only when every output validated. */
    if (torch_receipts(rp, &p, &t, w, wacc, row, ph))
      json_object_set(row, "metrics", json_object_get(res, "metrics"));
  }
  t0 = tsr__now_ns();
  for (int i = 0; i < 3; i++) unlink(t.paths[i]);
  json_decref(res);
  tsr__workload_destroy(w);
  tsr__workload_destroy(wacc);
  phase_add(ph, PH_TEARDOWN, &t0);
}

/* ---- instrumentation markers --------------------------------------------- */
/* A profiled or instrumented child is not a control: record what would make
 * it one, so that an auditor can reject the row (docs/audit.md). Markers:
 * profiler/tool injection and preload variables in the environment, tool
 * libraries mapped into this process, and a sanitizer build. */
static json_t *instrumentation_json(void) {
  static const char *const vars[] = {"CUDA_INJECTION64_PATH", "CUDA_INJECTION32_PATH",
                                     "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH",
                                     "LD_PRELOAD", "CUDA_LAUNCH_BLOCKING"};
  static const char *const libs[] = {"libcupti", "libnvperf", "libToolsInjection",
                                     "libnvtx3interop", "libcuda-gdb"};
  json_t *markers = json_array();
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (!v || !*v || (!strcmp(vars[i], "CUDA_LAUNCH_BLOCKING") && !strcmp(v, "0"))) continue;
    char buf[4200];
    snprintf(buf, sizeof buf, "env %s=%s", vars[i], v);
    json_array_append_new(markers, json_string(buf));
  }
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4600];
  while (f && fgets(line, sizeof line, f)) {
    char *path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = '\0';
    const char *base = strrchr(path, '/') + 1;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
      if (strncmp(base, libs[i], strlen(libs[i]))) continue;
      char buf[4700];
      snprintf(buf, sizeof buf, "mapped %s", path);
      int seen = 0;
      for (size_t j = 0; j < json_array_size(markers); j++)
        seen |= !strcmp(json_string_value(json_array_get(markers, j)), buf);
      if (!seen) json_array_append_new(markers, json_string(buf));
    }
  }
  if (f) fclose(f);
#if defined(__SANITIZE_ADDRESS__)
  json_array_append_new(markers, json_string("build AddressSanitizer"));
#elif defined(__SANITIZE_THREAD__)
  json_array_append_new(markers, json_string("build ThreadSanitizer"));
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  json_array_append_new(markers, json_string("build AddressSanitizer"));
#elif __has_feature(thread_sanitizer)
  json_array_append_new(markers, json_string("build ThreadSanitizer"));
#endif
#endif
  json_t *o = json_object();
  json_object_set_new(o, "instrumented", json_boolean(json_array_size(markers) > 0));
  json_object_set_new(o, "markers", markers);
  return o;
}

/* ---- entry points ------------------------------------------------------ */
json_t *tsr__run_oracle(const tsr_problem *problem, tsr_inputs inputs, uint64_t seed,
                        const char *cache_dir) {
  json_t *o = json_object();
  char msg[512];
  int64_t t0 = tsr__now_ns();
  tsr__workload *w = NULL;
  tsr_status st = tsr__workload_create(problem, inputs, seed, cache_dir, 1, &w, msg, sizeof msg);
  json_object_set_new(o, "status", json_string(st ? "error" : "ok"));
  json_object_set_new(o, "error", st ? json_string(msg) : json_null());
  json_object_set_new(o, "source", json_string(w ? w->oracle_source : ""));
  json_object_set_new(o, "key_sha256", json_string(w ? w->key_sha : ""));
  json_object_set_new(o, "ns", json_integer(tsr__now_ns() - t0));
  tsr__workload_destroy(w);
  return o;
}

json_t *tsr__run_measure(const tsr__run_params *rp) {
  json_t *row = json_object();
  json_object_set_new(row, "schema", json_string(TSR_BENCH_ROW_SCHEMA));
  json_object_set_new(row, "route", json_string(rp->route->name));
  json_object_set_new(row, "shape", json_string(rp->shape_label));
  json_object_set_new(row, "problem", problem_json(&rp->problem));
  json_object_set_new(row, "pid", json_integer(getpid()));
  json_object_set_new(row, "status", json_string("ok"));
  json_object_set_new(row, "validation", json_array());
  json_object_set_new(row, "metrics", json_object());
  json_object_set_new(row, "versions", json_object());
  json_object_set_new(row, "threads_requested", json_integer(rp->threads));
  apply_crash_hang_hooks(rp->route->name);
  row_phases ph;
  for (int k = 0; k < PH_COUNT; k++) ph.ns[k] = -1;
  int64_t t0 = tsr__now_ns();
  if (rp->route->kind == TSR_ROUTE_TORCH) measure_torch(rp, row, &ph);
  else measure_backend(rp, row, &ph);
  json_object_set_new(row, "child_ns", json_integer(tsr__now_ns() - t0));
  json_object_set_new(row, "phase_ns", phases_json(&ph));
  if (strcmp(json_string_value(json_object_get(row, "status")), "ok"))
    json_object_set_new(row, "metrics", json_object()); /* a failed row never has a time */
  json_object_set_new(row, "libraries", tsr__mapped_libraries());
  json_object_set_new(row, "instrumentation", instrumentation_json());
  return row;
}

json_t *tsr__run_probe(const tsr__route *route, const char *torch_script) {
  json_t *o = json_object(), *v = json_object();
  json_object_set_new(o, "route", json_string(route->name));
  json_object_set_new(o, "versions", v);
  int ok = 0;
  char reason[TSR__MSG_CAP + 64] = "";
  if (route->kind == TSR_ROUTE_TORCH) {
    if (access(torch_script, R_OK) != 0) {
      snprintf(reason, sizeof reason, "torch_route.py not found at %s", torch_script);
    } else {
      char *argv[] = {"python3", (char *)torch_script, "--probe", NULL};
      char *out = NULL;
      int status = run_capture(argv, &out);
      json_error_t jerr;
      json_t *res = out ? json_loads(out, 0, &jerr) : NULL;
      if (status < 0) snprintf(reason, sizeof reason, "cannot start python3");
      else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(reason, sizeof reason, "python3 not found");
      else if (!json_is_object(res))
        snprintf(reason, sizeof reason, "torch_route.py --probe gave no JSON (wait status %d)",
                 status);
      else if (!json_is_true(json_object_get(res, "available"))) {
        const char *r = json_string_value(json_object_get(res, "reason"));
        snprintf(reason, sizeof reason, "%s", r ? r : "torch unavailable");
      } else
        ok = 1;
      if (res) json_object_update(v, json_object_get(res, "versions"));
      json_decref(res);
      free(out);
    }
  } else {
    tsr_context *ctx = NULL;
    tsr_context_create(&ctx);
    tsr_status st = route_available(ctx, route);
    if (st) snprintf(reason, sizeof reason, "%s: %s", tsr_status_name(st), tsr_context_message(ctx));
    else ok = 1;
    if (ok && route->is_gpu) cuda_versions(ctx, route->backend, v);
    if (ok && route->kind == TSR_ROUTE_OPENBLAS) {
      json_object_set_new(v, "openblas_config", json_string(tsr__openblas_config()));
      json_object_set_new(v, "openblas_path", json_string(tsr__openblas_path()));
    }
    tsr_context_destroy(ctx);
  }
  json_object_set_new(o, "available", json_boolean(ok));
  json_object_set_new(o, "reason", ok ? json_null() : json_string(reason));
  return o;
}
