/* tessera gemm: one GEMM on a backend, every output element validated
 * against the FP64 oracle, then timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "sys/clock.h"
#include "measure/measure.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static json_t *receipt_obj(const tsr_receipt *r, const tsr__workload *w) {
  json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:f, s:f, s:f}", "inputs",
                        tsr_inputs_name(w->inputs), "oracle", w->oracle_source, "passed",
                        r->passed, "checked", (json_int_t)r->checked, "failed",
                        (json_int_t)r->failed, "first_fail", (json_int_t)r->first_fail,
                        "max_abs_err", isfinite(r->max_abs_err) ? r->max_abs_err : -1.0,
                        "max_rel_err", isfinite(r->max_rel_err) ? r->max_rel_err : -1.0,
                        "rel_fro_err", isfinite(r->rel_fro_err) ? r->rel_fro_err : -1.0);
  if (r->contract == TSR_PREC_AUTO) {
    json_object_set_new(o, "atol", json_real(r->atol));
    json_object_set_new(o, "rtol", json_real(r->rtol));
  } else {
    json_object_set_new(o, "contract", json_string(tsr_precision_name(r->contract)));
    json_object_set_new(o, "strict_rel_fro", isfinite(r->strict_rel_fro) ? json_real(r->strict_rel_fro) : json_null());
    json_object_set_new(o, "fro_limit", isfinite(r->fro_limit) ? json_real(r->fro_limit) : json_null());
    json_object_set_new(o, "worst_bound_ratio", isfinite(r->worst_bound_ratio) ? json_real(r->worst_bound_ratio) : json_null());
    json_object_set_new(o, "bound_failed", json_integer(r->bound_failed));
    json_object_set_new(o, "class_failed", json_integer(r->class_failed));
  }
  return o;
}

static void print_receipt(const char *label, const tsr_receipt *r, const tsr__workload *w) {
  printf("%-9s %s: %lld elements (%s inputs) against the FP64 %s oracle, %lld failed",
         label, r->passed ? "PASS" : "FAIL", (long long)r->checked, tsr_inputs_name(w->inputs),
         w->oracle_source, (long long)r->failed);
  if (r->first_fail >= 0) printf(" (first at index %lld)", (long long)r->first_fail);
  printf("\n          max abs err %.3g, max rel err %.3g, rel Frobenius err %.3g", r->max_abs_err,
         r->max_rel_err, r->rel_fro_err);
  if (r->contract == TSR_PREC_AUTO) {
    printf(" (atol %g, rtol %g)\n", r->atol, r->rtol);
  } else {
    printf("\n          %s contract: rel. Frobenius limit %.3g (strict FP32 reference %.3g), "
           "worst element %.3g of its bound, %lld over, %lld of the wrong class\n",
           tsr_precision_name(r->contract), r->fro_limit, r->strict_rel_fro, r->worst_bound_ratio,
           (long long)r->bound_failed, (long long)r->class_failed);
  }
}

/* What the command line asked for. */
typedef struct {
  tsr_cli_problem_opts o;
  tsr_inputs inputs;
  int accuracy; /* -1: off */
  long long seed, samples, sample_ms, warmup_ms;
  float atol, rtol;
  double max_memory;
  int json, atol_given, rtol_given;
} gemm_args;

/* argv → a; TSR_CLI_CONTINUE, or the exit code (help, a usage error). */
static int parse_args(int argc, char **argv, gemm_args *a) {
  *a = (gemm_args){.inputs = TSR_INPUTS_DYADIC, .accuracy = TSR_INPUTS_RANDOM, .seed = 1,
                   .samples = 5, .sample_ms = 20, .warmup_ms = 100};
  tsr_cli_problem_defaults(&a->o, "auto");
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + 10];
  size_t n = tsr_cli_problem_table(&a->o, opts);
  const tsr_cli_opt own[] = {
      TSR_CLI_OPT_CUSTOM("--inputs", tsr_cli_opt_inputs, &a->inputs, "I",
                         "timing inputs: dyadic (default: exact, any correct kernel has\n"
                         "max error 0), or random | normal | wide (checked against the\n"
                         "precision mode's contract)"),
      TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &a->accuracy, "I",
                         "input family of the accuracy check: random (default, uniform\n"
                         "[-1,1)), normal, wide, or off"),
      TSR_CLI_OPT_INT("--seed", &a->seed, 0, INT64_MAX, "S", "seed of the non-dyadic inputs (default 1)"),
      {.name = "--atol", .kind = TSR_CLI_FLOAT, .dest = TSR_CLI_PTR_(float, &a->atol), .rlo = 0,
       .rhi = TSR_CLI_FLT_MAX, .metavar = "X", .seen = &a->atol_given,
       .help = "absolute tolerance of dyadic inputs (default 0: exact)"},
      {.name = "--rtol", .kind = TSR_CLI_FLOAT, .dest = TSR_CLI_PTR_(float, &a->rtol), .rlo = 0,
       .rhi = TSR_CLI_FLT_MAX, .metavar = "X", .seen = &a->rtol_given,
       .help = "relative tolerance of dyadic inputs (default 0: exact)"},
      TSR_CLI_OPT_INT("--samples", &a->samples, 0, 1000, "N", "timed samples (default 5; 0 skips timing)"),
      TSR_CLI_OPT_INT("--sample-ms", &a->sample_ms, 1, 60000, "T",
                      "calls per sample fill about T ms (default 20)"),
      TSR_CLI_OPT_INT("--warmup-ms", &a->warmup_ms, 0, 600000, "T", "warm-up before timing (default 100)"),
      TSR_CLI_OPT_CUSTOM("--max-memory", tsr_cli_opt_gib, &a->max_memory, "GIB", TSR_CLI_MAX_MEMORY_HELP),
      TSR_CLI_OPT_FLAG("--json", &a->json, "machine-readable output"),
  };
  memcpy(opts + n, own, sizeof own);
  n += sizeof own / sizeof own[0];
  const tsr_cli_spec spec = {
      .verb = "gemm",
      .usage = "usage: tessera gemm --shape MxNxK [options]\n"
               "\n"
               "Runs C = alpha*op(A)*op(B) + beta*C once on deterministic inputs, checks every\n"
               "output element against an FP64 oracle (C is poisoned with NaN first, so an\n"
               "unwritten element fails), checks the precision mode's accuracy contract on\n"
               "random inputs (docs/accuracy.md), prints both receipts and the mode that ran,\n"
               "then times repeated calls. A shape whose estimated host memory (inputs, FP64\n"
               "oracle, output copies, accuracy workload) exceeds --max-memory is refused\n"
               "before anything is allocated.\n\n",
      .footer = "exit: 0 valid, 1 validation or accuracy failed, 2 bad input or backend unusable\n",
      .opts = opts,
      .nopts = n,
  };
  return tsr_cli_parse(&spec, argc, argv);
}

/* One `tessera gemm`, carried through its phases. */
typedef struct {
  const gemm_args *a;
  int check_accuracy;
  tsr_context *ctx;
  tsr_problem p;
  tsr_backend_kind bk;
  tsr_plan plan;
  char plan_source[128];
  tsr_plan_info info;
  tsr__workload *w, *wacc;
  tsr_exec *e, *eacc;
  float *C;
  tsr_receipt rec, racc;
  int ok;              /* both receipts passed */
  int64_t calls;       /* per timed sample */
  double wall_s, gpu_s; /* per call, median of the samples; NAN when not timed */
} gemm_run;

/* The problem, backend and plan checked, refused early when it cannot fit,
 * prepared, and validated: exact (or contract) receipt and accuracy receipt.
 * 0, or the exit code. */
static int gemm_validate(gemm_run *g) {
  const gemm_args *a = g->a;
  tsr_context *ctx = g->ctx;
  char msg[512];
  int rc = tsr_cli_problem_finish("gemm", ctx, &a->o, &g->p, &g->bk, &g->plan, g->plan_source,
                                  sizeof g->plan_source);
  if (rc) return rc;
  if (tsr_backend_available(ctx, g->bk))
    return tsr_cli_usage_error("gemm", "backend %s unusable: %s", tsr_backend_name(g->bk),
                               tsr_context_message(ctx));
  if (tsr_plan_realize(ctx, g->bk, &g->p, &g->plan, &g->info))
    return tsr_cli_usage_error("gemm", "plan rejected (%s): %s", tsr_backend_name(g->bk),
                               tsr_context_message(ctx));
  /* Refuse before allocating what cannot fit: the timing workload and
   * call, and the accuracy workload and call beside them. */
  int nw = g->check_accuracy ? 2 : 1;
  if (tsr__host_memory_check(tsr__measure_host_bytes(&g->p, g->bk, &g->info, nw, nw),
                             a->max_memory, msg, sizeof msg))
    return tsr_cli_usage_error("gemm", "--shape %s batch %lld: %s", a->o.shape,
                               (long long)g->p.batch, msg);
  g->C = malloc((size_t)tsr_problem_elems_c(&g->p) * sizeof *g->C);
  tsr_status st;
  if (!g->C ||
      (st = tsr__workload_create(&g->p, a->inputs, (uint64_t)a->seed, NULL, 0, &g->w, msg,
                                 sizeof msg)))
    return tsr_cli_usage_error("gemm", "shape: %s: %s", a->o.shape,
                               g->C ? msg : "out of host memory");
  if ((st = tsr__exec_create(ctx, g->bk, &g->p, &g->plan, g->w->a, g->w->b, g->w->c0, 0, &g->e)))
    return tsr_cli_usage_error("gemm", "%s: %s", tsr_status_str(st), tsr_context_message(ctx));
  g->info = *tsr_exec_info(g->e);
  if ((st = tsr__validated_call(g->e, g->w, g->info.precision, a->atol, a->rtol, g->C, 0,
                                &g->rec))) {
    tsr_cli_error("gemm", "run failed: %s: %s", tsr_status_str(st), tsr_context_message(ctx));
    return TSR_EXIT_FAIL;
  }
  g->ok = g->rec.passed;
  if (!g->check_accuracy) return 0;
  if ((st = tsr__workload_create(&g->p, (tsr_inputs)a->accuracy, (uint64_t)a->seed, NULL, 0,
                                 &g->wacc, msg, sizeof msg)))
    return tsr_cli_usage_error("gemm", "accuracy workload: %s", msg);
  if ((st = tsr__exec_create(ctx, g->bk, &g->p, &g->plan, g->wacc->a, g->wacc->b, g->wacc->c0, 0,
                             &g->eacc)) ||
      (st = tsr__validated_call(g->eacc, g->wacc, g->info.precision, 0.0, 0.0, g->C, 0,
                                &g->racc))) {
    tsr_cli_error("gemm", "accuracy run failed: %s: %s", tsr_status_str(st),
                  tsr_context_message(ctx));
    return TSR_EXIT_FAIL;
  }
  g->ok = g->ok && g->racc.passed;
  return 0;
}

/* Timing through the measurement layer: warm-up, then batch samples of n
 * calls (device events on a GPU, host clock around the same calls). Only a
 * valid run is timed. 0, or the exit code. */
static int gemm_time(gemm_run *g) {
  long long samples = g->a->samples;
  g->calls = 1;
  g->wall_s = g->gpu_s = NAN;
  if (!(samples > 0 && g->ok)) return 0;
  int64_t *wall = calloc((size_t)samples, sizeof *wall);
  int64_t *gpu = calloc((size_t)samples, sizeof *gpu);
  int gpu_events = tsr__exec_is_gpu(g->e); /* device events exist on a GPU only */
  int nomem = !wall || !gpu;
  tsr_status st = nomem ? TSR_ERR_NOMEM : TSR_OK;
  tsr__calibration cal;
  if (!st) st = tsr__calibrate(g->e, (int)g->a->warmup_ms, (int)g->a->sample_ms, &cal);
  if (!st) g->calls = cal.calls_per_batch > 1000000 ? 1000000 : cal.calls_per_batch;
  for (long long s = 0; s < samples && !st; s++) {
    if (gpu_events && (st = tsr__sample(g->e, TSR__TIMER_EVENT, g->calls, &gpu[s]))) break;
    st = tsr__sample(g->e, TSR__TIMER_HOST, g->calls, &wall[s]);
  }
  if (!st) {
    qsort(wall, (size_t)samples, sizeof *wall, cmp_i64);
    qsort(gpu, (size_t)samples, sizeof *gpu, cmp_i64);
    g->wall_s = wall[samples / 2] / 1e9 / g->calls;
    if (gpu_events) g->gpu_s = gpu[samples / 2] / 1e9 / g->calls;
  }
  free(wall);
  free(gpu);
  if (!st) return 0;
  tsr_cli_error("gemm", "timing failed: %s: %s", tsr_status_str(st),
                nomem ? "out of host memory" : tsr_context_message(g->ctx));
  return TSR_EXIT_FAIL;
}

static void print_json(const gemm_run *g, const char *plan_text) {
  const tsr_problem *p = &g->p;
  const char *inputs_text = tsr_inputs_name(g->a->inputs);
  json_t *j = json_pack(
      "{s:s, s:{s:I, s:I, s:I, s:I, s:s, s:s, s:f, s:f, s:s}, s:s, s:s, s:s, s:s, "
      "s:{s:I, s:I, s:f, s:f}, s:i, s:i, s:b}",
      "backend", tsr_backend_name(g->bk), "problem", "m", (json_int_t)p->m, "n", (json_int_t)p->n,
      "k", (json_int_t)p->k, "batch", (json_int_t)p->batch, "op_a", p->op_a ? "T" : "N", "op_b",
      p->op_b ? "T" : "N", "alpha", (double)p->alpha, "beta", (double)p->beta, "precision",
      tsr_precision_name(p->precision), "precision_ran", tsr_precision_name(g->info.precision),
      "plan", plan_text, "inputs", inputs_text, "oracle", g->w->oracle_source, "timing", "samples",
      (json_int_t)g->a->samples, "calls_per_sample", (json_int_t)g->calls, "wall_s_per_call",
      isfinite(g->wall_s) ? g->wall_s : -1.0, "gpu_s_per_call",
      isfinite(g->gpu_s) ? g->gpu_s : -1.0, "regs", g->info.regs, "local_bytes",
      g->info.local_bytes, "passed", g->ok);
  json_object_set_new(j, "receipt", receipt_obj(&g->rec, g->w));
  if (g->check_accuracy) json_object_set_new(j, "accuracy", receipt_obj(&g->racc, g->wacc));
  if (g->info.source_sha256[0])
    json_object_set_new(j, "source_sha256", json_string(g->info.source_sha256));
  json_dumpf(j, stdout, JSON_INDENT(2));
  putchar('\n');
  json_decref(j);
}

static void print_text(const gemm_run *g, const char *plan_text) {
  const tsr_problem *p = &g->p;
  const tsr_plan_info *info = &g->info;
  printf("backend   %s\n", tsr_backend_name(g->bk));
  printf("problem   %lldx%lldx%lld batch %lld op(A)=%c op(B)=%c alpha %g beta %g, %s inputs\n",
         (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch,
         p->op_a ? 'T' : 'N', p->op_b ? 'T' : 'N', p->alpha, p->beta,
         tsr_inputs_name(g->a->inputs));
  printf("precision %s ran (asked: %s)\n", tsr_precision_name(info->precision),
         tsr_precision_name(p->precision));
  printf("plan      %s\n", plan_text);
  printf("plan from %s%s\n", g->plan_source, g->a->o.plan ? ", overridden by --plan" : "");
  if (info->regs >= 0)
    printf("kernel    %d registers, %d local (spill) bytes, %llu B shared, source sha256 %s\n",
           info->regs, info->local_bytes, (unsigned long long)info->smem_bytes,
           info->source_sha256[0] ? info->source_sha256 : "-");
  print_receipt("receipt", &g->rec, g->w);
  if (g->check_accuracy) print_receipt("accuracy", &g->racc, g->wacc);
  if (g->a->samples > 0 && g->ok) {
    double flops = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    printf("time      %.3f us/call wall", g->wall_s * 1e6);
    if (isfinite(g->gpu_s)) printf(", %.3f us/call GPU events", g->gpu_s * 1e6);
    double t = isfinite(g->gpu_s) ? g->gpu_s : g->wall_s;
    printf("  (median of %lld samples x %lld calls)  %.2f %s\n", g->a->samples,
           (long long)g->calls, flops / t / (t > 0 ? 1e9 : 1), "GFLOP/s");
  }
}

int tsr_cli_gemm(int argc, char **argv) {
  gemm_args a;
  int prc = parse_args(argc, argv, &a);
  if (prc != TSR_CLI_CONTINUE) return prc;
  /* A non-dyadic timing workload is itself the accuracy check. */
  gemm_run g = {.a = &a, .check_accuracy = a.accuracy >= 0 && a.inputs == TSR_INPUTS_DYADIC};
  if ((a.atol_given || a.rtol_given) && a.inputs != TSR_INPUTS_DYADIC)
    return tsr_cli_usage_error("gemm",
                               "--atol/--rtol: apply to dyadic inputs only; %s inputs are checked "
                               "against the precision mode's contract",
                               tsr_inputs_name(a.inputs));
  if (tsr_context_create(&g.ctx)) return tsr_cli_usage_error("gemm", "out of memory");
  int rc = gemm_validate(&g);
  if (!rc) rc = gemm_time(&g);
  if (!rc) {
    char text[512];
    tsr_plan_format(&g.info.plan, text, sizeof text);
    if (a.json) print_json(&g, text);
    else print_text(&g, text);
    rc = g.ok ? TSR_EXIT_OK : TSR_EXIT_FAIL;
  }
  tsr_exec_destroy(g.e);
  tsr_exec_destroy(g.eacc);
  free(g.C);
  tsr__workload_destroy(g.w);
  tsr__workload_destroy(g.wacc);
  tsr_context_destroy(g.ctx);
  return rc;
}
