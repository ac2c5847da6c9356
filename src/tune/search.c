/* The measured search and the paired replay (docs/tune.md).
 *
 * Order: incumbents first (the built-in default is always measured), then
 * planner-legal candidates by ascending prior, while the budget lasts. Each
 * candidate: realize → prepare (compile) → resources (spills) → one run
 * validated element by element against the FP64 oracle → timing. Only
 * candidates that pass everything get a time, and only those can win.
 * The search best is then recompiled from scratch (CUDA: module caches
 * bypassed) and replayed against the incumbent in balanced paired rounds. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "measure/exec.h"
#include "measure/stats.h"
#include "sys/clock.h"
#include "sys/spawn.h"
#include "core/context.h"
#include "tune/tune.h"

static double now_s(void) { return (double)tsr__now_ns() * 1e-9; }

static void utc_now(char *buf, size_t cap) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- one candidate --------------------------------------------------------- */
/* Test-only hooks: env TSR_TUNE_TEST_CORRUPT_PLAN=<plan text> corrupts that
 * candidate's downloaded output (one element) so validation must reject it;
 * TSR_TUNE_TEST_INACCURATE_PLAN=<plan text> scales its accuracy output by
 * 1 + 2^-10 (a TF32-sized error) so the contract must reject it. */
static int plan_hook(const char *var, const tsr__tune_cand *c) {
  const char *s = getenv(var);
  return s && *s && (!strcmp(s, c->text) || (c->realized[0] && !strcmp(s, c->realized)));
}
static int corrupt_hook(const tsr__tune_cand *c) { return plan_hook("TSR_TUNE_TEST_CORRUPT_PLAN", c); }

tsr_status tsr__tune_measure(tsr_context *ctx, tsr_backend_kind b, const tsr_problem *p,
                             const tsr__workload *w, const tsr__workload *wacc, float *host_c,
                             const tsr__measure_opts *o, tsr__tune_cand *c) {
  double t0 = now_s();
  tsr_exec *e = NULL, *eacc = NULL;
  tsr_status st;
  tsr_plan_info info;
  c->nsamples = 0;
  c->time_ns = NAN;
  if ((st = tsr_plan_realize(ctx, b, p, &c->plan, &info))) {
    c->status = TSR__CAND_REJ_PLANNER;
    snprintf(c->reason, sizeof c->reason, "planner: %s", tsr_context_message(ctx));
    goto out;
  }
  tsr_plan_format(&info.plan, c->realized, sizeof c->realized);
  if ((st = tsr__exec_create(ctx, b, p, &c->plan, w->a, w->b, w->c0,
                             o->bypass_cache ? TSR__EXEC_BYPASS_CACHE : 0, &e))) {
    c->status = TSR__CAND_REJ_COMPILE;
    snprintf(c->reason, sizeof c->reason, "compile: %s: %s", tsr_status_str(st),
             tsr_context_message(ctx));
    goto out;
  }
  info = *tsr_exec_info(e);
  c->regs = info.regs;
  c->local_bytes = info.local_bytes;
  snprintf(c->sha256, sizeof c->sha256, "%s", info.source_sha256);
  /* The incumbent is exempt: the runtime runs the default plan spills and
   * all, so it is measured; rejecting it let a search plan 8x slower win
   * (16x14336x4096 NT, session 9: the gemv default spills 8 bytes) */
  if (tsr__exec_is_gpu(e) && info.local_bytes > o->spill_limit &&
      c->role != TSR__ROLE_INCUMBENT) {
    c->status = TSR__CAND_REJ_SPILL;
    snprintf(c->reason, sizeof c->reason,
             "spill: %d local bytes per thread (%d registers), limit %d", info.local_bytes,
             info.regs, o->spill_limit);
    goto out;
  }
  /* Validated run on the dyadic inputs: every element exact. */
  tsr_receipt rec;
  char sum[320];
  if ((st = tsr__validated_call(e, w, info.precision, 0.0, 0.0, host_c, corrupt_hook(c), &rec))) {
    c->status = TSR__CAND_REJ_RUN;
    snprintf(c->reason, sizeof c->reason, "run: %s: %s", tsr_status_str(st),
             tsr_context_message(ctx));
    goto out;
  }
  if (!rec.passed) {
    c->status = TSR__CAND_REJ_VALIDATION;
    tsr__receipt_summary(&rec, sum, sizeof sum);
    snprintf(c->reason, sizeof c->reason, "validation: %s", sum);
    goto out;
  }
  /* The precision mode's contract on random inputs (docs/accuracy.md): a
   * plan that is faster by being less accurate never wins. */
  if (wacc) {
    if ((st = tsr__exec_create(ctx, b, p, &c->plan, wacc->a, wacc->b, wacc->c0, 0, &eacc)) ||
        (st = tsr__validated_call(eacc, wacc, info.precision, 0.0, 0.0, host_c, 0, &rec))) {
      c->status = TSR__CAND_REJ_RUN;
      snprintf(c->reason, sizeof c->reason, "accuracy run: %s: %s", tsr_status_str(st),
               tsr_context_message(ctx));
      goto out;
    }
    if (plan_hook("TSR_TUNE_TEST_INACCURATE_PLAN", c)) {
      for (int64_t e = 0; e < tsr_problem_elems_c(p); e++) host_c[e] *= 1.0f + 0x1p-10f;
      tsr__workload_check(wacc, info.precision, 0.0, 0.0, host_c, &rec);
    }
    c->rel_fro_err = rec.rel_fro_err;
    c->fro_limit = rec.fro_limit;
    if (!rec.passed) {
      c->status = TSR__CAND_REJ_ACCURACY;
      tsr__receipt_summary(&rec, sum, sizeof sum);
      snprintf(c->reason, sizeof c->reason, "accuracy (%s inputs): %s",
               tsr_inputs_name(wacc->inputs), sum);
      goto out;
    }
  }
  /* Timing through the measurement layer: warm-up, then samples of
   * `calls` back-to-back calls (device events on a GPU). */
  tsr__calibration cal;
  if (!(st = tsr__calibrate(e, o->warmup_ms, o->sample_ms, &cal))) {
    int calls = (int)(cal.calls_per_batch > 1000000 ? 1000000 : cal.calls_per_batch);
    int ns = o->samples < 5 ? 5 : o->samples > TSR__TUNE_MAX_SAMPLES ? TSR__TUNE_MAX_SAMPLES : o->samples;
    tsr__timer timer = tsr__exec_is_gpu(e) ? TSR__TIMER_EVENT : TSR__TIMER_HOST;
    for (int s = 0; !st && s < ns; s++) {
      int64_t t;
      if (!(st = tsr__sample(e, timer, calls, &t))) c->samples_ns[c->nsamples++] = (double)t / calls;
    }
    c->calls = calls;
  }
  if (st) {
    c->status = TSR__CAND_REJ_RUN;
    snprintf(c->reason, sizeof c->reason, "timing: %s: %s", tsr_status_str(st),
             tsr_context_message(ctx));
    c->nsamples = 0;
    goto out;
  }
  double sorted[TSR__TUNE_MAX_SAMPLES];
  memcpy(sorted, c->samples_ns, (size_t)c->nsamples * sizeof *sorted);
  qsort(sorted, (size_t)c->nsamples, sizeof *sorted, cmp_double);
  c->time_ns = c->nsamples % 2 ? sorted[c->nsamples / 2]
                               : 0.5 * (sorted[c->nsamples / 2 - 1] + sorted[c->nsamples / 2]);
  c->status = TSR__CAND_OK;
  c->reason[0] = '\0';
out:
  tsr_exec_destroy(e);
  tsr_exec_destroy(eacc);
  tsr__clear(ctx);
  c->seconds = now_s() - t0;
  return TSR_OK;
}

/* ---- replay children ----------------------------------------------------- */
/* Runs argv (argv[0] a path), collects stdout (at most cap-1 bytes), kills
 * it after timeout_s. It stays in this process's group (an interrupt at the
 * terminal reaches it too) and starts nothing of its own. Returns the exit
 * status (>= 0), or -1 when it could not be started / was killed. */
static int run_child(char *const argv[], char *out, size_t cap, double timeout_s) {
  out[0] = '\0';
  int fd[2];
  if (pipe2(fd, O_CLOEXEC)) return -1;
  tsr__spawn_fd fds[] = {{fd[1], 1}};
  tsr__spawn_opts o = {.file = argv[0], .argv = argv, .fds = fds, .nfds = 1};
  tsr__proc proc;
  char msg[512];
  int sp = tsr__spawn(&o, &proc, msg, sizeof msg);
  close(fd[1]);
  if (sp != TSR__SPAWN_OK) {
    close(fd[0]);
    return -1;
  }
  tsr__spawn_capture c = {.fd = fd[0], .max = cap - 1};
  tsr__spawn_result r;
  tsr__spawn_wait(&proc, proc.t0_ns + (int64_t)(timeout_s * 1e9), 0, &c, &r);
  if (c.buf) memcpy(out, c.buf, c.len + 1);
  free(c.buf);
  if (r.timed_out || !r.exited) return -1;
  return r.code;
}

static void shape_text(const tsr_problem *p, char *buf, size_t cap) {
  snprintf(buf, cap, "%lldx%lldx%lld", (long long)p->m, (long long)p->n, (long long)p->k);
}

/* Replay measurements use longer samples than the search (at least 50 ms
 * each, at least 7 of them): fewer, more careful measurements. */
static tsr__measure_opts replay_opts(const tsr__tune_config *cfg) {
  tsr__measure_opts mo = cfg->measure;
  mo.bypass_cache = 1;
  if (mo.sample_ms < 50) mo.sample_ms = 50;
  if (mo.samples < 7) mo.samples = 7;
  return mo;
}

/* One replay measurement of plan c in a fresh process: "<exe> tune
 * --replay-child ..." prints one JSON object (cmd_tune.c). */
static void replay_child(const tsr__tune_config *cfg, const tsr__tune_cand *src, double timeout_s,
                         tsr__tune_cand *c) {
  *c = *src;
  c->status = TSR__CAND_REJ_RUN;
  c->time_ns = NAN;
  c->nsamples = 0;
  char shape[96], batch[32], samples[16], sms[16], wms[16], alpha[32], beta[32], spill[16];
  shape_text(&cfg->problem, shape, sizeof shape);
  snprintf(batch, sizeof batch, "%lld", (long long)cfg->problem.batch);
  tsr__measure_opts mo = replay_opts(cfg);
  snprintf(samples, sizeof samples, "%d", mo.samples);
  snprintf(sms, sizeof sms, "%d", mo.sample_ms);
  snprintf(wms, sizeof wms, "%d", cfg->measure.warmup_ms);
  snprintf(alpha, sizeof alpha, "%.9g", cfg->problem.alpha);
  snprintf(beta, sizeof beta, "%.9g", cfg->problem.beta);
  /* the incumbent is exempt from the spill limit (tsr__tune_measure) */
  snprintf(spill, sizeof spill, "%d",
           src->role == TSR__ROLE_INCUMBENT ? 1 << 20 : cfg->measure.spill_limit);
  char *argv[40];
  int a = 0;
  argv[a++] = (char *)cfg->child_exe;
  argv[a++] = "tune";
  argv[a++] = "--replay-child";
  argv[a++] = "--backend";
  argv[a++] = (char *)tsr_backend_name(cfg->backend);
  argv[a++] = "--shape";
  argv[a++] = shape;
  argv[a++] = "--batch";
  argv[a++] = batch;
  argv[a++] = "--alpha";
  argv[a++] = alpha;
  argv[a++] = "--beta";
  argv[a++] = beta;
  if (cfg->problem.op_a == TSR_OP_T) argv[a++] = "--trans-a";
  if (cfg->problem.op_b == TSR_OP_T) argv[a++] = "--trans-b";
  argv[a++] = "--precision";
  argv[a++] = (char *)tsr_precision_name(cfg->problem.precision);
  argv[a++] = "--plan";
  argv[a++] = (char *)src->text;
  argv[a++] = "--samples";
  argv[a++] = samples;
  argv[a++] = "--sample-ms";
  argv[a++] = sms;
  argv[a++] = "--warmup-ms";
  argv[a++] = wms;
  argv[a++] = "--spill-limit";
  argv[a++] = spill;
  if (cfg->oracle_cache) {
    argv[a++] = "--oracle-cache";
    argv[a++] = (char *)cfg->oracle_cache;
  }
  argv[a] = NULL;
  char out[16384];
  int rc = run_child(argv, out, sizeof out, timeout_s);
  json_error_t err;
  json_t *j = rc >= 0 ? json_loads(out, JSON_DECODE_ANY, &err) : NULL;
  if (!j) {
    snprintf(c->reason, sizeof c->reason, "replay child %s (exit %d)",
             rc < 0 ? "failed or timed out" : "printed no result", rc);
    return;
  }
  const char *status = json_string_value(json_object_get(j, "status"));
  const char *reason = json_string_value(json_object_get(j, "reason"));
  const char *ran = json_string_value(json_object_get(j, "plan"));
  json_t *smp = json_object_get(j, "samples_ns");
  if (ran && strcmp(ran, src->text)) {
    /* the child built another plan from the candidate's text: its time is
     * not the candidate's (session 35: texts parsed over the default's
     * optional keys) */
    snprintf(c->reason, sizeof c->reason, "replay: the child ran another plan (%.150s) than %.150s",
             ran, src->text);
  } else if (status && !strcmp(status, "ok") && json_is_array(smp)) {
    c->status = TSR__CAND_OK;
    c->time_ns = json_number_value(json_object_get(j, "time_ns"));
    c->calls = (int)json_integer_value(json_object_get(j, "calls"));
    size_t i;
    json_t *v;
    json_array_foreach(smp, i, v) if (c->nsamples < TSR__TUNE_MAX_SAMPLES)
        c->samples_ns[c->nsamples++] = json_number_value(v);
    const char *sha = json_string_value(json_object_get(j, "source_sha256"));
    if (sha) snprintf(c->sha256, sizeof c->sha256, "%s", sha);
    c->reason[0] = '\0';
  } else {
    for (int s = 0; s < TSR__CAND_STATUS_COUNT; s++)
      if (status && !strcmp(status, tsr__cand_status_name((tsr__cand_status)s)))
        c->status = (tsr__cand_status)s;
    if (c->status == TSR__CAND_OK) c->status = TSR__CAND_REJ_RUN;
    snprintf(c->reason, sizeof c->reason, "replay: %s", reason ? reason : "failed");
  }
  json_decref(j);
}

double tsr__tune_replay_median(const tsr__tune_result *r, int which) {
  return tsr__median(which ? r->best_ns : r->inc_ns, (size_t)r->rounds);
}

/* ---- progress -------------------------------------------------------------- */
static void progress(const tsr__tune_config *cfg, const tsr__tune_result *r, size_t done,
                     size_t todo, double t_start, int final) {
  if (!cfg->progress) return;
  static double last;
  double t = now_s();
  int tty = isatty(2);
  if (!final && t - last < (tty ? 0.2 : 5.0)) return;
  last = t;
  char best[128] = "none valid yet";
  long bi = tsr__tune_select(r->cands, r->n);
  if (bi >= 0) {
    double inc = r->incumbent >= 0 && r->cands[r->incumbent].status == TSR__CAND_OK
                     ? r->cands[r->incumbent].time_ns
                     : NAN;
    snprintf(best, sizeof best, "best %.3f us%s", r->cands[bi].time_ns / 1e3, "");
    if (isfinite(inc))
      snprintf(best + strlen(best), sizeof best - strlen(best), " (%.3fx the incumbent)",
               r->cands[bi].time_ns / inc);
  }
  char left[48] = "";
  if (cfg->max_seconds > 0)
    snprintf(left, sizeof left, ", %.0f s left", fmax(0.0, cfg->max_seconds - (t - t_start)));
  fprintf(stderr, "%stune: %zu/%zu candidates, %zu rejected, %s%s%s", tty ? "\r\033[K" : "",
          done, todo, r->rejected, best, left, tty && !final ? "" : "\n");
  fflush(stderr);
}

/* ---- the tune ----------------------------------------------------------- */
void tsr__tune_result_free(tsr__tune_result *res) {
  if (!res) return;
  free(res->cands);
  free(res->tie);
  memset(res, 0, sizeof *res);
}

tsr_status tsr__tune_check(tsr_context *ctx, const tsr__tune_config *cfg) {
  tsr_problem p = cfg->problem;
  tsr_backend_kind b = cfg->backend;
  char msg[512];
  tsr_status st = tsr_problem_check(&p, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  if (b != TSR_BACKEND_CPU && b != TSR_BACKEND_CUDA)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "--backend: %s has no tunable plans (cpu, cuda)",
                     tsr_backend_name(b));
  /* Memory: the tuner holds the timing and accuracy workloads with one
   * prepared call each; a replay child holds one more beside it. The
   * incumbent's realized plan stands for the candidates' packing buffers. */
  tsr_plan plan;
  tsr_plan_info info;
  tsr_plan_builtin(ctx, b, &p, &plan); /* the device's table (opens it) */
  const tsr_plan_info *ip = tsr_plan_realize(ctx, b, &p, &plan, &info) == TSR_OK ? &info : NULL;
  int nw = cfg->accuracy >= 0 ? 2 : 1;
  double need = tsr__measure_host_bytes(&p, b, ip, nw, nw);
  if (cfg->child_exe) need += tsr__measure_host_bytes(&p, b, ip, 1, 1);
  /* Compiling ahead: each NVRTC compile in flight holds its own memory.
   * Peak RSS over the process's, one compile to SASS with NVRTC 13.0 (this
   * project's sources at 4096^3, session 13): strict FFMA 54 MiB, wgmma
   * 3xTF32 64 MiB, Ozaki 124 MiB; eight Ozaki compiles at once 713 MiB. */
  if (cfg->compile_threads > 0 && tsr__exec_can_precompile(b))
    need += (double)cfg->compile_threads * TSR__TUNE_COMPILE_BYTES;
  if (tsr__host_memory_check(need, cfg->max_memory, msg, sizeof msg))
    return tsr__fail(ctx, TSR_ERR_NOMEM, "%s", msg);
  if (!(cfg->max_seconds > 0)) return TSR_OK;
  /* Time: inputs are always generated; an oracle found in the cache costs
   * nothing, any other is computed before the first candidate. */
  int noracle = !tsr__oracle_cache_has(&p, TSR_INPUTS_DYADIC, 1, cfg->oracle_cache) +
                (cfg->accuracy >= 0 &&
                 !tsr__oracle_cache_has(&p, (tsr_inputs)cfg->accuracy, 1, cfg->oracle_cache));
  double inputs_s = nw * tsr__inputs_seconds(&p);
  double oracle_s = noracle * tsr__oracle_seconds(&p, 0);
  const char *where = "the CPU";
  if (inputs_s + oracle_s > cfg->max_seconds && noracle && tsr__oracle_prefers_gpu(&p) &&
      tsr_backend_available(ctx, TSR_BACKEND_CUDA) == TSR_OK) {
    oracle_s = noracle * tsr__oracle_seconds(&p, 1);
    where = "the GPU";
  }
  if (inputs_s + oracle_s > cfg->max_seconds)
    return tsr__fail(ctx, TSR_ERR_INVALID,
                     "inputs and FP64 oracle alone take about %.3g s (estimate: %.3g s for %d "
                     "uncached oracle(s) of %.3g flop on %s, %.3g s for the inputs), more than "
                     "--max-seconds %g",
                     inputs_s + oracle_s, oracle_s, noracle,
                     2.0 * (double)p.m * (double)p.n * (double)p.k * (double)p.batch, where,
                     inputs_s, cfg->max_seconds);
  return TSR_OK;
}

/* The space: built-in default, previous tuned plan (exact), the neighbour
 * (the plan the lookup would serve this shape from the other entries: its
 * price here is the leave-one-out's, and a search that starts from what a
 * similar shape learned), user plans; fills r's candidates and counts and
 * finds the incumbent. */
static tsr_status tune_space(tsr_context *ctx, const tsr__tune_config *cfg, tsr__tune_db *db,
                             const tsr__tune_target *target, const tsr_problem *p,
                             tsr__tune_result *r) {
  tsr_backend_kind b = cfg->backend;
  tsr_plan *extra = calloc((size_t)cfg->nextra + 2, sizeof *extra);
  tsr__cand_role *roles = calloc((size_t)cfg->nextra + 2, sizeof *roles);
  int nextra = 0;
  if (!extra || !roles) {
    free(extra);
    free(roles);
    return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory");
  }
  if (db) {
    tsr_plan prev;
    tsr_plan_builtin(ctx, b, p, &prev);
    char src[128], m2[256];
    if (tsr__tune_db_lookup(db, target, p, NULL, NULL, NULL, &prev, src, sizeof src, m2, sizeof m2,
                            NULL) == 1 &&
        !strncmp(src, "tuned (exact", 12)) {
      extra[nextra] = prev;
      roles[nextra++] = TSR__ROLE_PREVIOUS;
    }
    tsr_plan nb;
    if (tsr__tune_lookup_unseen(ctx, db, target, b, p, &nb, src, sizeof src, m2, sizeof m2) == 1) {
      extra[nextra] = nb;
      roles[nextra++] = TSR__ROLE_NEIGHBOUR;
    }
  }
  for (int i = 0; i < cfg->nextra; i++) {
    extra[nextra] = cfg->extra[i];
    roles[nextra++] = TSR__ROLE_USER;
  }
  tsr__tune_space_t sp;
  tsr_status st = tsr__tune_space(ctx, b, p, extra, roles, nextra, cfg->order, &sp);
  free(extra);
  free(roles);
  if (st) return st;
  r->cands = sp.cands;
  r->n = sp.n;
  r->generated = sp.generated;
  r->legal = sp.legal;
  r->planner_rejected = sp.planner_rejected;
  for (size_t i = 0; i < r->n; i++)
    if (r->cands[i].role == TSR__ROLE_INCUMBENT) r->incumbent = (long)i;
  return TSR_OK;
}

/* The database's run row and the candidates the planner rejected. */
static tsr_status tune_db_begin(tsr_context *ctx, const tsr__tune_config *cfg, tsr__tune_db *db,
                                const tsr__tune_target *target, tsr__tune_result *r) {
  char msg[1024];
  tsr_status st;
  if ((st = tsr__tune_db_begin_run(db, target, cfg, r->started, &r->run_id, msg, sizeof msg)))
    return tsr__fail(ctx, st, "%s", msg);
  size_t *idx = malloc((r->n + 1) * sizeof *idx), k = 0;
  if (!idx) return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory");
  for (size_t i = 0; i < r->n; i++)
    if (r->cands[i].status == TSR__CAND_REJ_PLANNER) idx[k++] = i;
  st = tsr__tune_db_add_candidates(db, r->run_id, r->cands, idx, k, msg, sizeof msg);
  free(idx);
  return st ? tsr__fail(ctx, st, "%s", msg) : TSR_OK;
}

/* Workloads (measure layer): dyadic inputs for the exact check and the
 * timing, random inputs for the accuracy contract; oracles cached on disk
 * so replay children reuse them. *C: the host output buffer. */
static tsr_status tune_workloads(tsr_context *ctx, const tsr__tune_config *cfg,
                                 const tsr_problem *p, tsr__workload **w, tsr__workload **wacc,
                                 float **C, tsr__tune_result *r) {
  double t0 = now_s();
  char msg[1024];
  *C = malloc((size_t)tsr_problem_elems_c(p) * sizeof **C);
  if (!*C) return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of host memory for the output");
  tsr_status st =
      tsr__workload_create(p, TSR_INPUTS_DYADIC, 1, cfg->oracle_cache, 0, w, msg, sizeof msg);
  if (!st && cfg->accuracy >= 0)
    st = tsr__workload_create(p, (tsr_inputs)cfg->accuracy, 1, cfg->oracle_cache, 0, wacc, msg,
                              sizeof msg);
  r->oracle_s = now_s() - t0;
  return st ? tsr__fail(ctx, st, "tune: %s", msg) : TSR_OK;
}

/* Compiling ahead for the search (prefetch.c), or NULL with r->prefetch.off
 * saying why not. The device's compute capability is read here, on the
 * tuner's thread; the compile threads never touch ctx. */
static tsr__tune_prefetch *search_prefetch(tsr_context *ctx, const tsr__tune_config *cfg,
                                           const tsr_problem *p, tsr__tune_result *r) {
  tsr__tune_prefetch_stats *st = &r->prefetch;
  int cc_major = 0, cc_minor = 0;
  if (cfg->compile_threads > 0 && tsr__exec_can_precompile(cfg->backend)) {
    memset(st, 0, sizeof *st);
    if (cfg->measure.bypass_cache) {
      snprintf(st->off, sizeof st->off, "the search compiles from scratch (module caches bypassed)");
      return NULL;
    }
    tsr_device_info dev;
    if (tsr_backend_describe(ctx, cfg->backend, &dev)) {
      snprintf(st->off, sizeof st->off, "no device facts: %.120s", tsr_context_message(ctx));
      tsr__clear(ctx);
      return NULL;
    }
    cc_major = dev.cc_major;
    cc_minor = dev.cc_minor;
  }
  return tsr__tune_prefetch_start(cfg->backend, p, r->cands, r->n, cfg->compile_threads, cc_major,
                                  cc_minor, st);
}

/* The search: candidates in prior order while the budget lasts. The replay
 * is reserved out of max_seconds once the incumbent's cost is known (2R
 * measurements, each about one candidate's cost plus process start-up when
 * children are used). */
static tsr_status tune_search(tsr_context *ctx, const tsr__tune_config *cfg, const tsr_problem *p,
                              const tsr__workload *w, const tsr__workload *wacc, float *C,
                              tsr__tune_db *db, double t_start, tsr__tune_result *r) {
  /* A candidate block (cfg->block of cfg->nblocks) keeps every role but
   * search, and the search candidates whose realized plan text hashes to
   * it (FNV-1a mod nblocks). The deal depends on the plan alone: dealt by
   * prior rank, a block's share shifted whenever another item's winner came
   * back as this item's previous plan (no longer a search candidate), and
   * two blocks measured the same plan. The others belong to other blocks. */
  int nb = cfg->nblocks > 1 ? cfg->nblocks : 1;
  unsigned char *mine = malloc(r->n + 1);
  if (!mine) return tsr__fail(ctx, TSR_ERR_NOMEM, "tune: out of memory");
  size_t nlegal_kept = 0;
  for (size_t i = 0; i < r->n; i++) {
    mine[i] = 1;
    if (r->cands[i].status != TSR__CAND_UNMEASURED) continue;
    uint64_t h = 1469598103934665603ull;
    for (const char *q = r->cands[i].realized; *q; q++) h = (h ^ (unsigned char)*q) * 1099511628211ull;
    if (r->cands[i].role == TSR__ROLE_SEARCH && (int)(h % (uint64_t)nb) != cfg->block % nb) {
      mine[i] = 0;
      r->other_blocks++;
      continue;
    }
    nlegal_kept++;
  }
  double reserve = 0.0;
  size_t done = 0;
  double t_search = now_s();
  tsr__tune_prefetch *pf = search_prefetch(ctx, cfg, p, r);
  tsr_status st = TSR_OK;
  for (size_t i = 0; i < r->n; i++) {
    tsr__tune_cand *c = &r->cands[i];
    if (c->status != TSR__CAND_UNMEASURED || !mine[i]) continue;
    int must = c->role == TSR__ROLE_INCUMBENT;
    if (!must) {
      if (cfg->max_candidates > 0 && (long)r->measured >= cfg->max_candidates) break;
      if (cfg->max_seconds > 0 && now_s() - t_start + reserve >= cfg->max_seconds) break;
    }
    /* the next candidates compile in the background while this one is
     * measured; a wait for this one's own compile counts in its seconds */
    double waited = tsr__tune_prefetch_next(
        pf, mine, i, cfg->max_candidates > 0 ? cfg->max_candidates - (long)r->measured - 1 : -1);
    tsr__tune_measure(ctx, cfg->backend, p, w, wacc, C, &cfg->measure, c);
    c->seconds += waited;
    r->measured++;
    done++;
    if (c->status != TSR__CAND_OK) r->rejected++;
    if (must) {
      tsr__measure_opts ro = replay_opts(cfg);
      double per_call = c->status == TSR__CAND_OK ? c->time_ns * 1e-9 : 0.0;
      reserve = 2.0 * cfg->rounds *
                (c->seconds + ro.samples * fmax(ro.sample_ms * 1e-3, per_call) +
                 (cfg->child_exe ? 0.3 + 0.1 * r->oracle_s : 0.0));
      /* no compile starts that would end after the search's last start:
       * the threads are joined before the replay, so a compile still
       * running there spends the replay's reserve (H200, session 12: a
       * 3.3 s join at 512x4096x4096 with the stop alone). The incumbent's
       * own cost stands for one compile. */
      if (cfg->max_seconds > 0)
        tsr__tune_prefetch_deadline(pf, t_start + cfg->max_seconds - reserve - c->seconds);
    }
    if (db) {
      size_t one = i;
      char msg[1024];
      if ((st = tsr__tune_db_add_candidates(db, r->run_id, r->cands, &one, 1, msg, sizeof msg))) {
        st = tsr__fail(ctx, st, "%s", msg);
        break;
      }
    }
    progress(cfg, r, done, nlegal_kept, t_start, 0);
  }
  /* every compile thread joined before the replay (or the error return) */
  if (pf) tsr__tune_prefetch_stop(pf, &r->prefetch);
  else r->prefetch.measured_not_precompiled = r->measured; /* off: every one compiled itself */
  if (st) {
    free(mine);
    return st;
  }
  r->search_s = now_s() - t_search;
  r->reserve_s = reserve;
  progress(cfg, r, done, nlegal_kept, t_start, 1);
  for (size_t i = 0; i < r->n; i++)
    r->unmeasured += r->cands[i].status == TSR__CAND_UNMEASURED && mine[i];
  free(mine);
  /* beyond the kept list (their share of this block) */
  r->unmeasured += (r->legal - (nlegal_kept + r->other_blocks)) / (size_t)nb;
  return TSR_OK;
}

/* Replay: best vs incumbent in balanced paired rounds; sets the decision. */
static void tune_replay(tsr_context *ctx, const tsr__tune_config *cfg, const tsr_problem *p,
                        const tsr__workload *w, float *C, tsr__tune_result *r) {
  r->best = tsr__tune_select(r->cands, r->n);
  r->rounds = cfg->rounds;
  double t_replay = now_s();
  long inc = r->incumbent;
  int inc_ok = inc >= 0 && r->cands[inc].status == TSR__CAND_OK;
  if (r->best < 0) {
    snprintf(r->decision, sizeof r->decision, "none valid");
  } else if (!inc_ok) {
    /* The incumbent failed: nothing to replay against; the best valid plan
     * is stored but flagged. */
    r->chosen = r->best;
    r->accepted = 1;
    snprintf(r->decision, sizeof r->decision, "winner (incumbent invalid)");
  } else if (r->best == inc) {
    r->chosen = inc;
    snprintf(r->decision, sizeof r->decision, "incumbent (search best)");
  } else {
    int route_order[TSR__TUNE_MAX_ROUNDS * 2], shape_order[TSR__TUNE_MAX_ROUNDS];
    tsr__order_design(2, 1, r->rounds, route_order, shape_order);
    r->replay_in_process = cfg->child_exe == NULL;
    double timeout = 60.0 + 20.0 * (r->cands[inc].seconds + r->cands[r->best].seconds);
    int failed = 0;
    for (int round = 0; round < r->rounds && !failed; round++)
      for (int pos = 0; pos < 2 && !failed; pos++) {
        int which = route_order[round * 2 + pos];
        r->order[round][pos] = which;
        const tsr__tune_cand *src = &r->cands[which ? r->best : inc];
        tsr__tune_cand m;
        if (cfg->child_exe) {
          replay_child(cfg, src, timeout, &m);
        } else {
          /* In-process: a fresh prepare (and, on CUDA, a compile that
           * bypasses the module caches) for every measurement. */
          tsr__measure_opts mo = replay_opts(cfg);
          m = *src;
          tsr__tune_measure(ctx, cfg->backend, p, w, NULL, C, &mo, &m); /* accuracy already checked */
        }
        if (m.status != TSR__CAND_OK) {
          failed = 1;
          snprintf(r->replay_note, sizeof r->replay_note, "round %d, %s: %s", round,
                   which ? "best" : "incumbent", m.reason);
          break;
        }
        (which ? r->best_ns : r->inc_ns)[round] = m.time_ns;
      }
    if (!failed) {
      r->replayed = 1;
      tsr__paired pr;
      tsr__paired_ratios(r->best_ns, r->inc_ns, (size_t)r->rounds, r->ratio, &pr);
      r->ratio_median = pr.median;
      r->ratio_min = pr.min;
      r->ratio_max = pr.max;
      /* Accept only when the best is faster in every round: the largest
       * same-round ratio best/incumbent is below 1. */
      r->accepted = pr.count == (size_t)r->rounds && pr.max < 1.0;
      r->chosen = r->accepted ? r->best : inc;
      snprintf(r->decision, sizeof r->decision, "%s",
               r->accepted ? "winner" : "incumbent (replay: not faster in every round)");
    } else {
      r->chosen = inc;
      snprintf(r->decision, sizeof r->decision, "incumbent (replay failed)");
    }
  }
  r->replay_s = now_s() - t_replay;
}

/* Tie set: valid candidates whose search time is within the noise band of
 * the search best. Band = the replay's own ratio spread (max/min - 1),
 * at least 1%; without a replay, the spread of the best's samples. */
static void tune_tie_set(tsr__tune_result *r) {
  if (r->best < 0) return;
  double band = 0.01;
  if (r->replayed && r->ratio_min > 0) band = fmax(band, r->ratio_max / r->ratio_min - 1.0);
  else {
    const tsr__tune_cand *bc = &r->cands[r->best];
    double lo = INFINITY, hi = 0;
    for (int s = 0; s < bc->nsamples; s++) {
      lo = fmin(lo, bc->samples_ns[s]);
      hi = fmax(hi, bc->samples_ns[s]);
    }
    if (lo > 0 && isfinite(lo)) band = fmax(band, hi / lo - 1.0);
  }
  r->noise = band;
  r->tie = calloc(r->n, sizeof *r->tie);
  double lim = r->cands[r->best].time_ns * (1.0 + band);
  for (size_t i = 0; r->tie && i < r->n; i++)
    if (r->cands[i].status == TSR__CAND_OK && r->cands[i].time_ns <= lim) r->tie[r->ntie++] = (long)i;
}

tsr_status tsr__tune_run(tsr_context *ctx, const tsr__tune_config *cfg, tsr__tune_result *r) {
  memset(r, 0, sizeof *r);
  r->incumbent = r->best = r->chosen = -1;
  double t_start = now_s();
  utc_now(r->started, sizeof r->started);
  tsr_problem p = cfg->problem;
  char msg[1024];
  tsr_status st = tsr_problem_check(&p, msg, sizeof msg);
  if (st) return tsr__fail(ctx, st, "%s", msg);
  tsr_backend_kind b = cfg->backend;
  if (b != TSR_BACKEND_CPU && b != TSR_BACKEND_CUDA)
    return tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "--backend: %s has no tunable plans (cpu, cuda)",
                     tsr_backend_name(b));
  if ((st = tsr_backend_available(ctx, b))) return st;
  if (cfg->rounds < 2 || cfg->rounds % 2 || cfg->rounds > TSR__TUNE_MAX_ROUNDS)
    return tsr__fail(ctx, TSR_ERR_INVALID, "--rounds: %d is not an even number in 2..%d",
                     cfg->rounds, TSR__TUNE_MAX_ROUNDS);
  if ((st = tsr__tune_check(ctx, cfg))) return st;
  tsr__tune_target target;
  if ((st = tsr__tune_target_get(ctx, b, &target))) return st;

  /* Database first: an unusable file refuses the tune before any work. */
  tsr__tune_db *db = NULL;
  if (cfg->db_path && (st = tsr__tune_db_open(cfg->db_path, 1, &db, msg, sizeof msg)))
    return tsr__fail(ctx, st, "%s", msg);
  if ((st = tune_space(ctx, cfg, db, &target, &p, r))) {
    tsr__tune_db_close(db);
    return st;
  }
  if (db && (st = tune_db_begin(ctx, cfg, db, &target, r))) goto fail;
  tsr__workload *w = NULL, *wacc = NULL;
  float *C = NULL;
  st = tune_workloads(ctx, cfg, &p, &w, &wacc, &C, r);
  if (!st) st = tune_search(ctx, cfg, &p, w, wacc, C, db, t_start, r);
  if (!st) {
    tune_replay(ctx, cfg, &p, w, C, r);
    tune_tie_set(r);
  }
  free(C);
  tsr__workload_destroy(w);
  tsr__workload_destroy(wacc);
  if (st) goto fail;
  r->total_s = now_s() - t_start;
  utc_now(r->finished, sizeof r->finished);
  if (db && (st = tsr__tune_db_finish_run(db, &target, cfg, r, msg, sizeof msg))) {
    st = tsr__fail(ctx, st, "%s", msg);
    goto fail;
  }
  tsr__tune_db_close(db);
  return TSR_OK;
fail:
  tsr__tune_db_close(db);
  tsr__tune_result_free(r);
  return st;
}

/* ---- result document ------------------------------------------------------ */
static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *cand_json(const tsr__tune_cand *c) {
  json_t *o = json_pack("{s:s, s:s, s:s}", "plan", c->text, "role", tsr__cand_role_name(c->role),
                        "status", tsr__cand_status_name(c->status));
  if (c->realized[0]) json_object_set_new(o, "realized", json_string(c->realized));
  json_object_set_new(o, "prior", jreal(c->prior));
  if (c->reason[0]) json_object_set_new(o, "reason", json_string(c->reason));
  if (c->status == TSR__CAND_OK) {
    json_object_set_new(o, "time_ns", jreal(c->time_ns));
    json_t *a = json_array();
    for (int i = 0; i < c->nsamples; i++) json_array_append_new(a, json_real(c->samples_ns[i]));
    json_object_set_new(o, "samples_ns", a);
    json_object_set_new(o, "calls_per_sample", json_integer(c->calls));
  }
  if (isfinite(c->rel_fro_err)) {
    json_object_set_new(o, "rel_fro_err", json_real(c->rel_fro_err));
    json_object_set_new(o, "fro_limit", jreal(c->fro_limit));
  }
  if (c->regs >= 0) json_object_set_new(o, "regs", json_integer(c->regs));
  if (c->local_bytes >= 0) json_object_set_new(o, "local_bytes", json_integer(c->local_bytes));
  if (c->sha256[0]) json_object_set_new(o, "source_sha256", json_string(c->sha256));
  if (c->status != TSR__CAND_UNMEASURED && c->status != TSR__CAND_REJ_PLANNER)
    json_object_set_new(o, "seconds", jreal(c->seconds));
  return o;
}

char *tsr__tune_result_json(const tsr__tune_config *cfg, const tsr__tune_result *r) {
  json_t *o = json_object();
  char shape[96];
  shape_text(&cfg->problem, shape, sizeof shape);
  json_object_set_new(o, "schema", json_string("tessera-tune/1"));
  json_object_set_new(o, "backend", json_string(tsr_backend_name(cfg->backend)));
  json_object_set_new(
      o, "problem",
      json_pack("{s:s, s:I, s:s, s:s, s:f, s:f, s:s}", "shape", shape, "batch",
                (json_int_t)cfg->problem.batch, "op_a", cfg->problem.op_a ? "T" : "N", "op_b",
                cfg->problem.op_b ? "T" : "N", "alpha", (double)cfg->problem.alpha, "beta",
                (double)cfg->problem.beta, "precision", tsr_precision_name(cfg->problem.precision)));
  json_object_set_new(o, "accuracy_inputs",
                      cfg->accuracy >= 0 ? json_string(tsr_inputs_name((tsr_inputs)cfg->accuracy))
                                         : json_null());
  json_object_set_new(
      o, "budget",
      json_pack("{s:I, s:o, s:I, s:f, s:o, s:o, s:o, s:o, s:o}", "max_candidates",
                (json_int_t)cfg->max_candidates, "max_seconds", jreal(cfg->max_seconds),
                "measured", (json_int_t)r->measured, "seconds_total", r->total_s,
                "seconds_oracle", jreal(r->oracle_s), "seconds_search", jreal(r->search_s),
                "seconds_replay", jreal(r->replay_s), "seconds_replay_reserve",
                jreal(r->reserve_s), "unmeasured",
                json_integer((json_int_t)r->unmeasured)));
  const tsr__tune_prefetch_stats *pf = &r->prefetch;
  json_t *jp = json_pack(
      "{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
      "compile_threads", cfg->compile_threads, "threads", pf->threads, "window", pf->window,
      "dispatched", (json_int_t)pf->dispatched, "compiled", (json_int_t)pf->compiled,
      "found_on_disk", (json_int_t)pf->found_on_disk, "failed", (json_int_t)pf->failed,
      "taken_by_search", (json_int_t)pf->taken_by_search, "not_started",
      (json_int_t)pf->not_started, "unused", (json_int_t)pf->unused, "measured_ready",
      (json_int_t)pf->measured_ready, "measured_after_wait", (json_int_t)pf->measured_after_wait,
      "measured_not_precompiled", (json_int_t)pf->measured_not_precompiled, "seconds_waited",
      pf->seconds_waited, "seconds_join", pf->seconds_join);
  if (pf->off[0]) json_object_set_new(jp, "off", json_string(pf->off));
  json_object_set_new(o, "prefetch", jp);
  json_object_set_new(o, "space",
                      json_pack("{s:I, s:I, s:I, s:I, s:s}", "generated", (json_int_t)r->generated,
                                "planner_legal", (json_int_t)r->legal, "planner_rejected",
                                (json_int_t)r->planner_rejected, "rejected_after_planner",
                                (json_int_t)r->rejected, "order",
                                tsr__tune_order_names[cfg->order]));
  if (cfg->nblocks > 1)
    json_object_set_new(o, "candidate_block",
                        json_pack("{s:i, s:i, s:I}", "block", cfg->block, "blocks", cfg->nblocks,
                                  "left_to_other_blocks", (json_int_t)r->other_blocks));
  json_object_set_new(o, "started", json_string(r->started));
  json_object_set_new(o, "finished", json_string(r->finished));
  json_object_set_new(o, "decision", json_string(r->decision));
  if (r->incumbent >= 0) json_object_set_new(o, "incumbent", cand_json(&r->cands[r->incumbent]));
  if (r->best >= 0) json_object_set_new(o, "search_best", cand_json(&r->cands[r->best]));
  if (r->chosen >= 0) json_object_set_new(o, "chosen", json_string(r->cands[r->chosen].text));
  json_t *rep = json_object();
  json_object_set_new(rep, "rounds", json_integer(r->rounds));
  json_object_set_new(rep, "replayed", json_boolean(r->replayed));
  json_object_set_new(rep, "fresh_process_per_measurement", json_boolean(!r->replay_in_process));
  if (r->replayed) {
    json_t *rows = json_array();
    for (int i = 0; i < r->rounds; i++)
      json_array_append_new(
          rows, json_pack("{s:[s,s], s:o, s:o, s:o}", "order", r->order[i][0] ? "best" : "incumbent",
                          r->order[i][1] ? "best" : "incumbent", "incumbent_ns", jreal(r->inc_ns[i]),
                          "best_ns", jreal(r->best_ns[i]), "ratio_best_over_incumbent",
                          jreal(r->ratio[i])));
    json_object_set_new(rep, "per_round", rows);
    json_object_set_new(rep, "ratio_median", jreal(r->ratio_median));
    json_object_set_new(rep, "ratio_min", jreal(r->ratio_min));
    json_object_set_new(rep, "ratio_max", jreal(r->ratio_max));
  }
  if (r->replay_note[0]) json_object_set_new(rep, "note", json_string(r->replay_note));
  json_object_set_new(o, "replay", rep);
  json_object_set_new(o, "tie_band", jreal(r->noise));
  json_t *tie = json_array();
  for (size_t i = 0; i < r->ntie; i++) json_array_append_new(tie, cand_json(&r->cands[r->tie[i]]));
  json_object_set_new(o, "tie_set", tie);
  json_t *all = json_array();
  for (size_t i = 0; i < r->n; i++)
    if (r->cands[i].status != TSR__CAND_UNMEASURED) json_array_append_new(all, cand_json(&r->cands[i]));
  json_object_set_new(o, "candidates", all);
  if (r->run_id) json_object_set_new(o, "db_run_id", json_integer(r->run_id));
  char *txt = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
  json_decref(o);
  return txt;
}
