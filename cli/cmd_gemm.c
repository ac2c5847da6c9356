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
#include "core/clock.h"
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

int tsr_cli_gemm(int argc, char **argv) {
  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "auto");
  tsr_inputs inputs = TSR_INPUTS_DYADIC;
  int accuracy = TSR_INPUTS_RANDOM; /* -1: off */
  long long seed = 1, samples = 5, sample_ms = 20, warmup_ms = 100;
  float atol = 0.0f, rtol = 0.0f;
  double max_memory = 0.0;
  int json = 0, atol_given = 0, rtol_given = 0;
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + 10];
  size_t n = tsr_cli_problem_table(&o, opts);
  const tsr_cli_opt own[] = {
      TSR_CLI_OPT_CUSTOM("--inputs", tsr_cli_opt_inputs, &inputs, "I",
                         "timing inputs: dyadic (default: exact, any correct kernel has\n"
                         "max error 0), or random | normal | wide (checked against the\n"
                         "precision mode's contract)"),
      TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &accuracy, "I",
                         "input family of the accuracy check: random (default, uniform\n"
                         "[-1,1)), normal, wide, or off"),
      TSR_CLI_OPT_INT("--seed", &seed, 0, INT64_MAX, "S", "seed of the non-dyadic inputs (default 1)"),
      {.name = "--atol", .kind = TSR_CLI_FLOAT, .dest = TSR_CLI_PTR_(float, &atol), .rlo = 0,
       .rhi = TSR_CLI_FLT_MAX, .metavar = "X", .seen = &atol_given,
       .help = "absolute tolerance of dyadic inputs (default 0: exact)"},
      {.name = "--rtol", .kind = TSR_CLI_FLOAT, .dest = TSR_CLI_PTR_(float, &rtol), .rlo = 0,
       .rhi = TSR_CLI_FLT_MAX, .metavar = "X", .seen = &rtol_given,
       .help = "relative tolerance of dyadic inputs (default 0: exact)"},
      TSR_CLI_OPT_INT("--samples", &samples, 0, 1000, "N", "timed samples (default 5; 0 skips timing)"),
      TSR_CLI_OPT_INT("--sample-ms", &sample_ms, 1, 60000, "T",
                      "calls per sample fill about T ms (default 20)"),
      TSR_CLI_OPT_INT("--warmup-ms", &warmup_ms, 0, 600000, "T", "warm-up before timing (default 100)"),
      TSR_CLI_OPT_CUSTOM("--max-memory", tsr_cli_opt_gib, &max_memory, "GIB", TSR_CLI_MAX_MEMORY_HELP),
      TSR_CLI_OPT_FLAG("--json", &json, "machine-readable output"),
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
  int prc = tsr_cli_parse(&spec, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  const char *inputs_text = tsr_inputs_name(inputs);
  int check_accuracy = accuracy >= 0;
  /* A non-dyadic timing workload is itself the accuracy check. */
  if (inputs != TSR_INPUTS_DYADIC) check_accuracy = 0;
  if ((atol_given || rtol_given) && inputs != TSR_INPUTS_DYADIC)
    return tsr_cli_usage_error("gemm",
                               "--atol/--rtol: apply to dyadic inputs only; %s inputs are checked "
                               "against the precision mode's contract",
                               inputs_text);

  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return tsr_cli_usage_error("gemm", "out of memory");
  int rc = TSR_EXIT_USAGE;
  float *C = NULL;
  tsr__workload *w = NULL, *wacc = NULL;
  tsr_exec *e = NULL, *eacc = NULL;
  tsr_problem p;
  tsr_backend_kind bk;
  tsr_plan plan;
  char plan_source[128] = "", msg[512];
  if ((rc = tsr_cli_problem_finish("gemm", ctx, &o, &p, &bk, &plan, plan_source, sizeof plan_source))) goto done;
  rc = TSR_EXIT_USAGE;
  if (tsr_backend_available(ctx, bk)) {
    tsr_cli_usage_error("gemm", "backend %s unusable: %s", tsr_backend_name(bk),
                        tsr_context_message(ctx));
    goto done;
  }
  tsr_plan_info info;
  if (tsr_plan_realize(ctx, bk, &p, &plan, &info)) {
    tsr_cli_usage_error("gemm", "plan rejected (%s): %s", tsr_backend_name(bk),
                        tsr_context_message(ctx));
    goto done;
  }
  /* Refuse before allocating what cannot fit: the timing workload and
   * call, and the accuracy workload and call beside them. */
  int nw = check_accuracy ? 2 : 1;
  if (tsr__host_memory_check(tsr__measure_host_bytes(&p, bk, &info, nw, nw), max_memory, msg,
                             sizeof msg)) {
    tsr_cli_usage_error("gemm", "--shape %s batch %lld: %s", o.shape, (long long)p.batch, msg);
    goto done;
  }
  C = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *C);
  tsr_status st;
  if (!C || (st = tsr__workload_create(&p, inputs, (uint64_t)seed, NULL, 0, &w, msg, sizeof msg))) {
    tsr_cli_usage_error("gemm", "shape: %s: %s", o.shape, C ? msg : "out of host memory");
    goto done;
  }
  if ((st = tsr__exec_create(ctx, bk, &p, &plan, w->a, w->b, w->c0, 0, &e))) {
    tsr_cli_usage_error("gemm", "%s: %s", tsr_status_str(st), tsr_context_message(ctx));
    goto done;
  }
  info = *tsr_exec_info(e);
  tsr_receipt rec, racc;
  if ((st = tsr__validated_call(e, w, info.precision, atol, rtol, C, 0, &rec))) {
    tsr_cli_error("gemm", "run failed: %s: %s", tsr_status_str(st),
            tsr_context_message(ctx));
    rc = TSR_EXIT_FAIL;
    goto done;
  }
  int ok = rec.passed;
  if (check_accuracy) {
    if ((st = tsr__workload_create(&p, (tsr_inputs)accuracy, (uint64_t)seed, NULL, 0, &wacc, msg,
                                   sizeof msg))) {
      tsr_cli_usage_error("gemm", "accuracy workload: %s", msg);
      goto done;
    }
    if ((st = tsr__exec_create(ctx, bk, &p, &plan, wacc->a, wacc->b, wacc->c0, 0, &eacc)) ||
        (st = tsr__validated_call(eacc, wacc, info.precision, 0.0, 0.0, C, 0, &racc))) {
      tsr_cli_error("gemm", "accuracy run failed: %s: %s", tsr_status_str(st),
              tsr_context_message(ctx));
      rc = TSR_EXIT_FAIL;
      goto done;
    }
    ok = ok && racc.passed;
  }

  /* Timing through the measurement layer: warm-up, then batch samples of n
   * calls (device events on a GPU, host clock around the same calls). */
  int64_t *wall = calloc((size_t)(samples ? samples : 1), sizeof *wall);
  int64_t *gpu = calloc((size_t)(samples ? samples : 1), sizeof *gpu);
  int64_t calls = 1;
  int gpu_events = tsr__exec_is_gpu(e); /* device events exist on a GPU only */
  if (samples > 0 && ok && wall && gpu) {
    tsr__calibration cal;
    st = tsr__calibrate(e, (int)warmup_ms, (int)sample_ms, &cal);
    calls = cal.calls_per_batch > 1000000 ? 1000000 : cal.calls_per_batch;
    for (long long s = 0; s < samples && !st; s++) {
      if (gpu_events && (st = tsr__sample(e, TSR__TIMER_EVENT, calls, &gpu[s]))) break;
      st = tsr__sample(e, TSR__TIMER_HOST, calls, &wall[s]);
    }
    if (st) {
      tsr_cli_error("gemm", "timing failed: %s: %s", tsr_status_str(st),
              tsr_context_message(ctx));
      rc = TSR_EXIT_FAIL;
      free(wall);
      free(gpu);
      goto done;
    }
    qsort(wall, (size_t)samples, sizeof *wall, cmp_i64);
    qsort(gpu, (size_t)samples, sizeof *gpu, cmp_i64);
  }
  double flops = 2.0 * (double)p.m * (double)p.n * (double)p.k * (double)p.batch;
  double wall_s = samples && ok ? wall[samples / 2] / 1e9 / calls : NAN;
  double gpu_s = samples && ok && gpu_events ? gpu[samples / 2] / 1e9 / calls : NAN;
  char text[512];
  tsr_plan_format(&info.plan, text, sizeof text);
  if (json) {
    json_t *j = json_pack(
        "{s:s, s:{s:I, s:I, s:I, s:I, s:s, s:s, s:f, s:f, s:s}, s:s, s:s, s:s, s:s, "
        "s:{s:I, s:I, s:f, s:f}, s:i, s:i, s:b}",
        "backend", tsr_backend_name(bk), "problem", "m", (json_int_t)p.m, "n", (json_int_t)p.n,
        "k", (json_int_t)p.k, "batch", (json_int_t)p.batch, "op_a", p.op_a ? "T" : "N", "op_b",
        p.op_b ? "T" : "N", "alpha", (double)p.alpha, "beta", (double)p.beta, "precision",
        tsr_precision_name(p.precision), "precision_ran", tsr_precision_name(info.precision),
        "plan", text, "inputs", inputs_text, "oracle", w->oracle_source, "timing", "samples",
        (json_int_t)samples, "calls_per_sample", (json_int_t)calls, "wall_s_per_call",
        isfinite(wall_s) ? wall_s : -1.0, "gpu_s_per_call", isfinite(gpu_s) ? gpu_s : -1.0,
        "regs", info.regs, "local_bytes", info.local_bytes, "passed", ok);
    json_object_set_new(j, "receipt", receipt_obj(&rec, w));
    if (check_accuracy) json_object_set_new(j, "accuracy", receipt_obj(&racc, wacc));
    if (info.source_sha256[0]) json_object_set_new(j, "source_sha256", json_string(info.source_sha256));
    json_dumpf(j, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(j);
  } else {
    printf("backend   %s\n", tsr_backend_name(bk));
    printf("problem   %lldx%lldx%lld batch %lld op(A)=%c op(B)=%c alpha %g beta %g, %s inputs\n",
           (long long)p.m, (long long)p.n, (long long)p.k, (long long)p.batch,
           p.op_a ? 'T' : 'N', p.op_b ? 'T' : 'N', p.alpha, p.beta, inputs_text);
    printf("precision %s ran (asked: %s)\n", tsr_precision_name(info.precision),
           tsr_precision_name(p.precision));
    printf("plan      %s\n", text);
    printf("plan from %s%s\n", plan_source, o.plan ? ", overridden by --plan" : "");
    if (info.regs >= 0)
      printf("kernel    %d registers, %d local (spill) bytes, %llu B shared, source sha256 %s\n",
             info.regs, info.local_bytes, (unsigned long long)info.smem_bytes,
             info.source_sha256[0] ? info.source_sha256 : "-");
    print_receipt("receipt", &rec, w);
    if (check_accuracy) print_receipt("accuracy", &racc, wacc);
    if (samples > 0 && ok) {
      printf("time      %.3f us/call wall", wall_s * 1e6);
      if (isfinite(gpu_s)) printf(", %.3f us/call GPU events", gpu_s * 1e6);
      double t = isfinite(gpu_s) ? gpu_s : wall_s;
      printf("  (median of %lld samples x %lld calls)  %.2f %s\n", samples, (long long)calls,
             flops / t / (t > 0 ? 1e9 : 1), "GFLOP/s");
    }
  }
  free(wall);
  free(gpu);
  rc = ok ? TSR_EXIT_OK : TSR_EXIT_FAIL;
done:
  tsr_exec_destroy(e);
  tsr_exec_destroy(eacc);
  free(C);
  tsr__workload_destroy(w);
  tsr__workload_destroy(wacc);
  tsr_context_destroy(ctx);
  return rc;
}
