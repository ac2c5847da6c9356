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
#include "core/backend.h"
#include "core/clock.h"

static void print_help(void) {
  printf("usage: tessera gemm --shape MxNxK [options]\n"
         "\n"
         "Runs C = alpha*op(A)*op(B) + beta*C once on deterministic inputs, checks every\n"
         "output element against an FP64 oracle (C is poisoned with NaN first, so an\n"
         "unwritten element fails), prints the receipt, then times repeated calls.\n\n%s"
         "  --inputs I      dyadic (default: exact, any correct kernel has max error 0)\n"
         "                  or random (uniform [-1,1), tolerance atol=rtol=1e-4)\n"
         "  --seed S        seed of the random inputs (default 1)\n"
         "  --atol X --rtol X  tolerances (default 1e-4 each; dyadic demands 0 error)\n"
         "  --samples N     timed samples (default 5; 0 skips timing)\n"
         "  --sample-ms T   calls per sample fill about T ms (default 20)\n"
         "  --warmup-ms T   warm-up before timing (default 100)\n"
         "  --json          machine-readable output\n"
         "\n"
         "exit: 0 valid, 1 validation failed, 2 bad input or backend unusable\n",
         tsr_cli_problem_help);
}


static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Host bytes this run needs: A, B, C (+ C0) in FP32 and the FP64 reference. */
static double host_bytes(const tsr_problem *p) {
  return 4.0 * ((double)tsr_problem_elems_a(p) + (double)tsr_problem_elems_b(p) +
                2.0 * (double)tsr_problem_elems_c(p)) +
         8.0 * (double)p->batch * (double)p->m * (double)p->n;
}

int tsr_cli_gemm(int argc, char **argv) {
  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "auto");
  const char *inputs_text = "dyadic";
  long long seed = 1, samples = 5, sample_ms = 20, warmup_ms = 100;
  float atol = 1e-4f, rtol = 1e-4f;
  int json = 0, tol_given = 0;
  for (int i = 1; i < argc; i++) {
    int r = tsr_cli_problem_option("gemm", argc, argv, &i, &o);
    if (r < 0) return TSR_EXIT_USAGE;
    if (r) continue;
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      print_help();
      return TSR_EXIT_OK;
    } else if (!strcmp(a, "--json")) {
      json = 1;
      continue;
    }
    static const char *const valued[] = {"--inputs", "--seed",      "--atol",     "--rtol",
                                         "--samples", "--sample-ms", "--warmup-ms"};
    int k = tsr_cli_option_index(a, valued, 7);
    if (k < 0) return tsr_cli_usage_error("gemm", "unknown option '%s' (see --help)", a);
    if (!v) return tsr_cli_usage_error("gemm", "%s: needs a value", a);
    i++;
    int bad = 0;
    switch (k) {
      case 0: inputs_text = v; break;
      case 1: bad = tsr_cli_parse_int("gemm", a, v, 0, INT64_MAX, &seed); break;
      case 2: bad = tsr_cli_parse_float("gemm", a, v, &atol) || atol < 0; tol_given = 1; break;
      case 3: bad = tsr_cli_parse_float("gemm", a, v, &rtol) || rtol < 0; tol_given = 1; break;
      case 4: bad = tsr_cli_parse_int("gemm", a, v, 0, 1000, &samples); break;
      case 5: bad = tsr_cli_parse_int("gemm", a, v, 1, 60000, &sample_ms); break;
      default: bad = tsr_cli_parse_int("gemm", a, v, 0, 600000, &warmup_ms); break;
    }
    if (bad) {
      if ((k == 2 || k == 3)) tsr_cli_usage_error("gemm", "%s: '%s' must be >= 0", a, v);
      return TSR_EXIT_USAGE;
    }
  }
  tsr_inputs inputs;
  if (tsr_cli_parse_inputs("gemm", inputs_text, &inputs)) return TSR_EXIT_USAGE;
  /* Dyadic inputs are exact: any correct kernel reproduces the oracle. */
  if (inputs == TSR_INPUTS_DYADIC && !tol_given) atol = rtol = 0.0f;

  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return tsr_cli_usage_error("gemm", "out of memory");
  int rc = TSR_EXIT_USAGE;
  float *A = NULL, *B = NULL, *C = NULL, *C0 = NULL;
  double *ref = NULL;
  void *ex = NULL;
  const tsr__backend *be = NULL;
  tsr_problem p;
  tsr_backend_kind bk;
  tsr_plan plan;
  char plan_source[128] = "";
  if ((rc = tsr_cli_problem_finish("gemm", ctx, &o, &p, &bk, &plan, plan_source, sizeof plan_source))) goto done;
  rc = TSR_EXIT_USAGE;
  be = tsr__backend_get(bk);
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
  /* Refuse before allocating what cannot fit. */
  double need = host_bytes(&p);
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psize > 0 && need > 0.9 * (double)pages * (double)psize) {
    tsr_cli_usage_error("gemm", "shape: %s needs %.1f GiB of host memory, more than this machine has",
                        o.shape, need / 1073741824.0);
    goto done;
  }
  size_t na = (size_t)tsr_problem_elems_a(&p), nb = (size_t)tsr_problem_elems_b(&p),
         nc = (size_t)tsr_problem_elems_c(&p);
  A = malloc(na * sizeof *A);
  B = malloc(nb * sizeof *B);
  C = malloc(nc * sizeof *C);
  C0 = p.beta != 0.0f ? malloc(nc * sizeof *C0) : NULL;
  ref = malloc((size_t)(p.batch * p.m * p.n) * sizeof *ref);
  if (!A || !B || !C || !ref || (p.beta != 0.0f && !C0)) {
    tsr_cli_usage_error("gemm", "shape: %s: out of host memory", o.shape);
    goto done;
  }
  tsr_fill(&p, TSR_TENSOR_A, inputs, (uint64_t)seed, A);
  tsr_fill(&p, TSR_TENSOR_B, inputs, (uint64_t)seed, B);
  if (C0) tsr_fill(&p, TSR_TENSOR_C, inputs, (uint64_t)seed, C0);
  tsr_status st;
  const char *oracle = "cpu";
  /* The FP64 oracle runs on the GPU when the route does (large shapes would
   * take minutes on the host); it shares no code with any kernel under test. */
  if (be->is_gpu && tsr_oracle_gpu(ctx, &p, A, B, C0, ref) == TSR_OK) oracle = "gpu";
  else if ((st = tsr_oracle_cpu(&p, A, B, C0, ref))) {
    tsr_cli_usage_error("gemm", "oracle: %s", tsr_status_str(st));
    goto done;
  }
  if ((st = be->prepare(ctx, &p, &info.plan, A, B, C0, &ex))) {
    tsr_cli_usage_error("gemm", "%s: %s", tsr_status_str(st), tsr_context_message(ctx));
    goto done;
  }
  if (be->exec_info) be->exec_info(ex, &info);
  tsr_poison(&p, C);
  if ((st = be->launch(ex, 1)) || (st = be->sync(ex)) || (st = be->download(ex, C))) {
    fprintf(stderr, "tessera gemm: run failed: %s: %s\n", tsr_status_str(st),
            tsr_context_message(ctx));
    rc = TSR_EXIT_FAIL;
    goto done;
  }
  tsr_receipt rec;
  tsr_validate(&p, C, ref, atol, rtol, &rec);

  /* Timing: batch samples of n calls after warm-up (C keeps being updated
   * when beta != 0; the values are irrelevant to the time). */
  int64_t *wall = calloc((size_t)(samples ? samples : 1), sizeof *wall);
  int64_t *gpu = calloc((size_t)(samples ? samples : 1), sizeof *gpu);
  int calls = 1;
  if (samples > 0 && rec.passed && wall && gpu) {
    int64_t t0 = tsr__now_ns(), t1;
    int warm = 0;
    do {
      if ((st = be->launch(ex, 1)) || (st = be->sync(ex))) break;
      warm++;
      t1 = tsr__now_ns();
    } while (t1 - t0 < warmup_ms * 1000000 || warm < 2);
    if (!st) {
      double per = (double)(t1 - t0) / warm;
      calls = (int)fmax(1.0, fmin(1e6, sample_ms * 1e6 / per));
      for (long long s = 0; s < samples && !st; s++) {
        if (be->event_time) {
          st = be->event_time(ex, calls, &gpu[s]);
          if (st) break;
        }
        int64_t a0 = tsr__now_ns();
        if ((st = be->launch(ex, calls)) || (st = be->sync(ex))) break;
        wall[s] = tsr__now_ns() - a0;
      }
    }
    if (st) {
      fprintf(stderr, "tessera gemm: timing failed: %s: %s\n", tsr_status_str(st),
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
  double wall_s = samples && rec.passed ? wall[samples / 2] / 1e9 / calls : NAN;
  double gpu_s = samples && rec.passed && be->event_time ? gpu[samples / 2] / 1e9 / calls : NAN;
  char text[512];
  tsr_plan_format(&info.plan, text, sizeof text);
  if (json) {
    json_t *j = json_pack(
        "{s:s, s:{s:I, s:I, s:I, s:I, s:s, s:s, s:f, s:f}, s:s, s:s, s:s, s:{s:b, s:I, s:I, "
        "s:I, s:f, s:f, s:f, s:f, s:f}, s:{s:I, s:I, s:f, s:f}, s:i, s:i}",
        "backend", tsr_backend_name(bk), "problem", "m", (json_int_t)p.m, "n", (json_int_t)p.n,
        "k", (json_int_t)p.k, "batch", (json_int_t)p.batch, "op_a", p.op_a ? "T" : "N", "op_b",
        p.op_b ? "T" : "N", "alpha", (double)p.alpha, "beta", (double)p.beta, "plan", text,
        "inputs", inputs_text, "oracle", oracle, "receipt", "passed", rec.passed, "checked",
        (json_int_t)rec.checked, "failed", (json_int_t)rec.failed, "first_fail",
        (json_int_t)rec.first_fail, "max_abs_err", rec.max_abs_err, "max_rel_err",
        rec.max_rel_err, "rel_fro_err", rec.rel_fro_err, "atol", rec.atol, "rtol", rec.rtol,
        "timing", "samples", (json_int_t)samples, "calls_per_sample", (json_int_t)calls,
        "wall_s_per_call", isfinite(wall_s) ? wall_s : -1.0, "gpu_s_per_call",
        isfinite(gpu_s) ? gpu_s : -1.0, "regs", info.regs, "local_bytes", info.local_bytes);
    if (info.source_sha256[0]) json_object_set_new(j, "source_sha256", json_string(info.source_sha256));
    json_dumpf(j, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(j);
  } else {
    printf("backend   %s\n", tsr_backend_name(bk));
    printf("problem   %lldx%lldx%lld batch %lld op(A)=%c op(B)=%c alpha %g beta %g, %s inputs\n",
           (long long)p.m, (long long)p.n, (long long)p.k, (long long)p.batch,
           p.op_a ? 'T' : 'N', p.op_b ? 'T' : 'N', p.alpha, p.beta, inputs_text);
    printf("plan      %s\n", text);
    printf("plan from %s%s\n", plan_source, o.plan ? ", overridden by --plan" : "");
    if (info.regs >= 0)
      printf("kernel    %d registers, %d local (spill) bytes, %llu B shared, source sha256 %s\n",
             info.regs, info.local_bytes, (unsigned long long)info.smem_bytes,
             info.source_sha256[0] ? info.source_sha256 : "-");
    printf("receipt   %s: %lld elements checked against the FP64 %s oracle, %lld failed",
           rec.passed ? "PASS" : "FAIL", (long long)rec.checked, oracle, (long long)rec.failed);
    if (rec.first_fail >= 0) printf(" (first at index %lld)", (long long)rec.first_fail);
    printf("\n          max abs err %.3g, max rel err %.3g, rel Frobenius err %.3g (atol %g, rtol %g)\n",
           rec.max_abs_err, rec.max_rel_err, rec.rel_fro_err, rec.atol, rec.rtol);
    if (samples > 0 && rec.passed) {
      printf("time      %.3f us/call wall", wall_s * 1e6);
      if (isfinite(gpu_s)) printf(", %.3f us/call GPU events", gpu_s * 1e6);
      double t = isfinite(gpu_s) ? gpu_s : wall_s;
      printf("  (median of %lld samples x %d calls)  %.2f %s\n", samples, calls,
             flops / t / (t > 0 ? 1e9 : 1), "GFLOP/s");
    }
  }
  free(wall);
  free(gpu);
  rc = rec.passed ? TSR_EXIT_OK : TSR_EXIT_FAIL;
done:
  if (be && ex) be->destroy(ex);
  free(A);
  free(B);
  free(C);
  free(C0);
  free(ref);
  tsr_context_destroy(ctx);
  return rc;
}
