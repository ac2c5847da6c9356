/* gpu_bench: the paired GPU table of scripts/device/check. For each shape,
 * in one process: generated (cuda, default plan) vs cuBLAS (pedantic FP32)
 * vs hand. Each route is validated first (dyadic inputs, exact against the
 * GPU FP64 oracle), then timed: ≥ warm-up ms of calls, then `samples`
 * samples of CUDA-event time around n back-to-back calls filling ~sample_ms,
 * with the route order rotated every sample. Reports the median per-call
 * time, TFLOP/s and the median of the per-sample paired ratio vs cuBLAS.
 *
 *   gpu_bench [--samples N] [--sample-ms MS] [--warmup-ms MS] [--check-only]
 *             [--plan TEXT] [--ops NN|NT|TN|TT] [--beta B] [MxNxK ...]
 * --check-only validates every route once without timing (for
 * compute-sanitizer); --plan applies TEXT over the generated route's default
 * plan; --ops/--beta change the problem (beta != 0 uses dyadic C0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "core/backend.h"
#include "tessera.h"

#define NR 3
static const tsr_backend_kind routes[NR] = {TSR_BACKEND_CUBLAS, TSR_BACKEND_CUDA, TSR_BACKEND_HAND};
static const char *const default_shapes[] = {
    "128x128x61", "127x193x61",  "513x257x129",  "32x32x32",        "1024x1024x1024",
    "1024x1024x1537", "2049x4097x1025", "4096x4096x4096", "4096x4096x11008", "8192x8192x8192"};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  const tsr__backend *be;
  void *ex;
  int ok;
  int invalid;      /* output differed from the oracle */
  int n;            /* calls per sample */
  double *per_call; /* ns per call, per sample */
  char note[160];
} route_run;

int main(int argc, char **argv) {
  int samples = 5, check_only = 0;
  const char *plan_text = NULL, *ops = "NN";
  float beta = 0.0f;
  double sample_ms = 20.0, warmup_ms = 100.0;
  const char *shape_list[64];
  int nshapes = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sample-ms") && i + 1 < argc) sample_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--warmup-ms") && i + 1 < argc) warmup_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--check-only")) check_only = 1;
    else if (!strcmp(argv[i], "--plan") && i + 1 < argc) plan_text = argv[++i];
    else if (!strcmp(argv[i], "--ops") && i + 1 < argc) ops = argv[++i];
    else if (!strcmp(argv[i], "--beta") && i + 1 < argc) beta = (float)atof(argv[++i]);
    else if (argv[i][0] == '-') {
      fprintf(stderr, "gpu_bench: unknown option '%s'\n", argv[i]);
      return 2;
    }
    else if (nshapes < 64) shape_list[nshapes++] = argv[i];
  }
  if (samples < 1 || samples > 1000 || sample_ms <= 0 || warmup_ms < 0 || strlen(ops) != 2 ||
      !strchr("NT", ops[0]) || !strchr("NT", ops[1])) {
    fprintf(stderr, "gpu_bench: bad --samples/--sample-ms/--warmup-ms/--ops\n");
    return 2;
  }
  if (!nshapes)
    for (size_t i = 0; i < sizeof default_shapes / sizeof default_shapes[0]; i++)
      shape_list[nshapes++] = default_shapes[i];

  tsr_context *ctx;
  if (tsr_context_create(&ctx)) return 1;
  tsr__cuda_device d;
  tsr_status st = tsr__cuda_describe(ctx, &d);
  if (st) {
    fprintf(stderr, "gpu_bench: %s\n", tsr_context_message(ctx));
    return 1;
  }
  printf("# %s sm_%d%d, %d SMs, driver %d, NVRTC %d.%d, cuBLAS %d; %d samples x ~%.0f ms after "
         "%.0f ms warm-up; cuBLAS in PEDANTIC math (strict FP32)\n",
         d.name, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.nvrtc_major,
         d.nvrtc_minor, d.cublas_version, samples, sample_ms, warmup_ms);
  if (!check_only) {
    printf("| shape | cuBLAS µs | TFLOP/s | generated µs | TFLOP/s | gen/cuBLAS | hand µs | TFLOP/s "
           "| hand/cuBLAS | generated plan (regs) |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  }
  fflush(stdout);
  int exit_code = 0;
  for (int s = 0; s < nshapes; s++) {
    tsr_problem p;
    char msg[512];
    int64_t m, n, k;
    if (tsr_shape_parse(shape_list[s], &m, &n, &k, msg, sizeof msg)) {
      fprintf(stderr, "gpu_bench: %s\n", msg);
      return 2;
    }
    tsr_problem_init(&p, m, n, k);
    p.op_a = ops[0] == 'T' ? TSR_OP_T : TSR_OP_N;
    p.op_b = ops[1] == 'T' ? TSR_OP_T : TSR_OP_N;
    p.beta = beta;
    if (tsr_problem_check(&p, msg, sizeof msg)) {
      fprintf(stderr, "gpu_bench: %s\n", msg);
      return 2;
    }
    size_t na = (size_t)tsr_problem_elems_a(&p), nb = (size_t)tsr_problem_elems_b(&p),
           nc = (size_t)tsr_problem_elems_c(&p);
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *c0 = malloc(nc * 4);
    double *ref = malloc((size_t)(m * n) * sizeof(double));
    if (!a || !b || !c || !c0 || !ref) {
      fprintf(stderr, "gpu_bench: out of host memory\n");
      return 1;
    }
    tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_DYADIC, 1, a);
    tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_DYADIC, 1, b);
    tsr_fill(&p, TSR_TENSOR_C, TSR_INPUTS_DYADIC, 1, c0);
    const float *c0p = p.beta != 0.0f ? c0 : NULL;
    int have_ref = tsr_oracle_gpu(ctx, &p, a, b, c0p, ref) == TSR_OK;
    if (!have_ref) fprintf(stderr, "# %s: GPU oracle: %s\n", shape_list[s], tsr_context_message(ctx));
    route_run rr[NR];
    char plan_txt[400] = "";
    for (int r = 0; r < NR; r++) {
      route_run *x = &rr[r];
      memset(x, 0, sizeof *x);
      x->be = tsr__backend_get(routes[r]);
      x->per_call = calloc((size_t)samples, sizeof(double));
      tsr_plan plan;
      tsr_plan_info info;
      x->be->default_plan(&p, &plan);
      st = TSR_OK;
      if (plan_text && routes[r] == TSR_BACKEND_CUDA &&
          tsr_plan_parse(plan_text, &plan, msg, sizeof msg) != TSR_OK) {
        fprintf(stderr, "gpu_bench: %s\n", msg);
        return 2;
      }
      if (!st) st = x->be->realize(ctx, &p, &plan, &info);
      if (!st) st = x->be->prepare(ctx, &p, &info.plan, a, b, c0p, &x->ex);
      if (!st) st = x->be->launch(x->ex, 1);
      if (!st) st = x->be->download(x->ex, c);
      if (st) {
        snprintf(x->note, sizeof x->note, "%s: %s", tsr_status_name(st), tsr_context_message(ctx));
        fprintf(stderr, "# %s %s: %s\n", shape_list[s], x->be->name, x->note);
        exit_code = 1;
        continue;
      }
      if (routes[r] == TSR_BACKEND_CUDA) {
        x->be->exec_info(x->ex, &info);
        int len = tsr_plan_format(&info.plan, plan_txt, sizeof plan_txt);
        snprintf(plan_txt + len, sizeof plan_txt - (size_t)len, " (%d regs, %d local)", info.regs,
                 info.local_bytes);
      }
      if (have_ref) {
        tsr_receipt rc;
        tsr_validate(&p, c, ref, 0.0, 0.0, &rc);
        if (!rc.passed) {
          x->invalid = 1;
          fprintf(stderr, "# %s %s: INVALID: %lld wrong, max abs err %g\n", shape_list[s],
                  x->be->name, (long long)rc.failed, rc.max_abs_err);
          exit_code = 1;
        }
      }
      if (check_only) {
        printf("# %s %s %s beta %g: %s\n", shape_list[s], ops, x->be->name, p.beta,
               !have_ref ? "ran (no oracle)" : x->invalid ? "INVALID" : "valid (exact)");
        continue;
      }
      /* warm-up (at least one timed batch), then calls per sample from the
       * measured rate of the last warm-up batch */
      int64_t ns = 0, total = 0;
      int calls = 1, used = 1;
      do {
        st = x->be->event_time(x->ex, calls, &ns);
        total += ns;
        used = calls;
        if (ns < 2000000 && calls < (1 << 20)) calls *= 2;
      } while (!st && total < (int64_t)(warmup_ms * 1e6));
      if (st) {
        snprintf(x->note, sizeof x->note, "%s: %s", tsr_status_name(st), tsr_context_message(ctx));
        fprintf(stderr, "# %s %s warm-up: %s\n", shape_list[s], x->be->name, x->note);
        exit_code = 1;
        continue;
      }
      double per = (double)ns / used;
      x->n = (int)fmin(fmax(sample_ms * 1e6 / fmax(per, 1.0), 1.0), 1e6);
      x->ok = 1;
    }
    /* samples, route order rotated each sample */
    for (int i = 0; i < samples && !check_only; i++)
      for (int j = 0; j < NR; j++) {
        route_run *x = &rr[(i + j) % NR];
        if (!x->ok) continue;
        int64_t ns = 0;
        st = x->be->event_time(x->ex, x->n, &ns);
        if (st) {
          snprintf(x->note, sizeof x->note, "%s: %s", tsr_status_name(st),
                   tsr_context_message(ctx));
          fprintf(stderr, "# %s %s sample: %s\n", shape_list[s], x->be->name, x->note);
          x->ok = 0;
          exit_code = 1;
          continue;
        }
        x->per_call[i] = (double)ns / x->n;
      }
    double flops = 2.0 * (double)m * (double)n * (double)k;
    if (!check_only) printf("| %s |", shape_list[s]);
    double base[1000];
    for (int r = 0; r < NR && !check_only; r++) {
      route_run *x = &rr[r];
      if (!x->ok) {
        printf(" ERROR | - |%s", r ? " - |" : "");
        continue;
      }
      double tmp[1000];
      memcpy(tmp, x->per_call, (size_t)samples * sizeof(double));
      double med = median(tmp, samples);
      printf(" %.2f%s | %.2f |", med / 1e3, x->invalid ? " INVALID" : "", flops / med / 1e3);
      if (r == 0) {
        memcpy(base, x->per_call, (size_t)samples * sizeof(double));
      } else if (rr[0].ok) {
        double ratio[1000];
        for (int i = 0; i < samples; i++) ratio[i] = x->per_call[i] / base[i];
        double lo = ratio[0], hi = ratio[0];
        for (int i = 1; i < samples; i++) lo = fmin(lo, ratio[i]), hi = fmax(hi, ratio[i]);
        printf(" %.3f [%.3f, %.3f] |", median(ratio, samples), lo, hi);
      } else {
        printf(" - |");
      }
    }
    if (!check_only) printf(" %s |\n", plan_txt);
    fflush(stdout);
    for (int r = 0; r < NR; r++) {
      if (rr[r].ex) rr[r].be->destroy(rr[r].ex);
      free(rr[r].per_call);
    }
    free(a);
    free(b);
    free(c);
    free(c0);
    free(ref);
  }
  if (!check_only)
    printf("# ratio = time / cuBLAS time (< 1: faster), median of per-sample paired ratios "
         "[min, max]; ERROR/INVALID details on stderr\n");
  tsr_context_destroy(ctx);
  return exit_code;
}
