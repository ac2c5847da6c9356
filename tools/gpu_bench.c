/* gpu_bench: the paired GPU table of scripts/device/check, with accuracy.
 *
 * For each shape, in one process, through the measurement layer
 * (src/measure): every route is validated exactly on dyadic inputs, timed
 * (warm-up calibration, then `samples` samples of device-event time around
 * n back-to-back calls filling ~sample_ms, the route order rotated every
 * sample), and held to its precision mode's accuracy contract on each
 * --accuracy input family (docs/accuracy.md). Reports per route the median
 * per-call time, TFLOP/s, the median [min, max] of the per-sample time
 * ratio vs the first route (cuBLAS pedantic by default), and per input
 * family the relative Frobenius error, the contract's limit and verdict.
 *
 *   gpu_bench [--samples N] [--sample-ms MS] [--warmup-ms MS] [--check-only]
 *             [--routes R,...] [--plan TEXT] [--ops NN|NT|TN|TT] [--beta B]
 *             [--accuracy off|FAMILY,...] [--json FILE] [MxNxK ...]
 *
 * Routes: cublas (pedantic, strict), cublas-tf32, auto (tessera default),
 * strict, fp32x3, chain (fp32x3 with acc=chain: the pre-contract scheme),
 * tf32, hand. --plan applies TEXT over each tessera route's default plan.
 * --check-only validates every route once without timing or accuracy (for
 * compute-sanitizer). Exit 1 when a route failed, was invalid or broke its
 * contract (chain's breach is expected and reported, not an error). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/backend.h"
#include "measure/measure.h"
#include "tessera.h"

typedef struct {
  const char *name;
  tsr_backend_kind backend;
  tsr_precision precision;
  const char *overlay; /* plan text over the default, or NULL */
  int expect_breach;   /* the contract is expected to fail (the test hook) */
} route_def;

static const route_def route_table[] = {
    {"cublas", TSR_BACKEND_CUBLAS, TSR_PREC_STRICT, NULL, 0},
    {"cublas-tf32", TSR_BACKEND_CUBLAS, TSR_PREC_TF32, NULL, 0},
    {"auto", TSR_BACKEND_CUDA, TSR_PREC_AUTO, NULL, 0},
    {"strict", TSR_BACKEND_CUDA, TSR_PREC_STRICT, NULL, 0},
    {"fp32x3", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, NULL, 0},
    {"chain", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "acc=chain", 1},
    {"tf32", TSR_BACKEND_CUDA, TSR_PREC_TF32, NULL, 0},
    {"hand", TSR_BACKEND_HAND, TSR_PREC_STRICT, NULL, 0},
};
#define NDEF (int)(sizeof route_table / sizeof route_table[0])
#define MAXR 8
#define MAXS 1000

static const char *const default_shapes[] = {
    "128x128x61", "127x193x61",  "513x257x129",  "32x32x32",        "1024x1024x1024",
    "1024x1024x1537", "2049x4097x1025", "4096x4096x4096", "4096x4096x11008", "8192x8192x8192"};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(const double *v, int n) {
  double t[MAXS];
  memcpy(t, v, (size_t)n * sizeof *t);
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef struct {
  const route_def *def;
  const tsr__backend *be;
  tsr_problem p; /* with the route's precision */
  tsr_plan_info info;
  void *ex;
  int ok, invalid;
  int64_t n;  /* calls per sample */
  double per_call[MAXS];
  char plan[420];
  char note[600];
} route_run;

/* Realize and prepare route x on workload w. */
static tsr_status prepare(tsr_context *ctx, route_run *x, const tsr__workload *w,
                          const char *plan_text, void **ex, char *msg, size_t cap) {
  tsr_plan plan;
  tsr_status st = tsr_plan_lookup(ctx, x->def->backend, &x->p, &plan, NULL, 0);
  if (!st && x->def->overlay) st = tsr_plan_parse(x->def->overlay, &plan, msg, cap);
  if (!st && plan_text && x->def->backend == TSR_BACKEND_CUDA)
    st = tsr_plan_parse(plan_text, &plan, msg, cap);
  if (st) return st;
  if ((st = x->be->realize(ctx, &x->p, &plan, &x->info))) {
    snprintf(msg, cap, "%s", tsr_context_message(ctx));
    return st;
  }
  if ((st = x->be->prepare(ctx, &x->p, &x->info.plan, w->a, w->b, w->c0, ex))) {
    snprintf(msg, cap, "%s", tsr_context_message(ctx));
    return st;
  }
  if (x->be->exec_info) x->be->exec_info(*ex, &x->info);
  return TSR_OK;
}

int main(int argc, char **argv) {
  int samples = 5, check_only = 0;
  const char *plan_text = NULL, *ops = "NN", *routes_text = "cublas,auto,hand",
             *acc_text = "random", *json_path = NULL;
  float beta = 0.0f;
  double sample_ms = 20.0, warmup_ms = 100.0;
  const char *shape_list[64];
  int nshapes = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--check-only")) check_only = 1;
    else if (a[0] == '-' && !v) {
      fprintf(stderr, "gpu_bench: %s needs a value\n", a);
      return 2;
    } else if (!strcmp(a, "--samples")) samples = atoi(argv[++i]);
    else if (!strcmp(a, "--sample-ms")) sample_ms = atof(argv[++i]);
    else if (!strcmp(a, "--warmup-ms")) warmup_ms = atof(argv[++i]);
    else if (!strcmp(a, "--plan")) plan_text = argv[++i];
    else if (!strcmp(a, "--ops")) ops = argv[++i];
    else if (!strcmp(a, "--beta")) beta = (float)atof(argv[++i]);
    else if (!strcmp(a, "--routes")) routes_text = argv[++i];
    else if (!strcmp(a, "--accuracy")) acc_text = argv[++i];
    else if (!strcmp(a, "--json")) json_path = argv[++i];
    else if (a[0] == '-') {
      fprintf(stderr, "gpu_bench: unknown option '%s'\n", a);
      return 2;
    } else if (nshapes < 64) shape_list[nshapes++] = a;
  }
  if (samples < 1 || samples > MAXS || sample_ms <= 0 || warmup_ms < 0 || strlen(ops) != 2 ||
      !strchr("NT", ops[0]) || !strchr("NT", ops[1])) {
    fprintf(stderr, "gpu_bench: bad --samples/--sample-ms/--warmup-ms/--ops\n");
    return 2;
  }
  /* routes */
  const route_def *defs[MAXR];
  int nr = 0;
  {
    char *list = strdup(routes_text);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      int f = -1;
      for (int d = 0; d < NDEF; d++)
        if (!strcmp(t, route_table[d].name)) f = d;
      if (f < 0 || nr == MAXR) {
        fprintf(stderr, "gpu_bench: --routes: '%s' is not one of cublas, cublas-tf32, auto, "
                        "strict, fp32x3, chain, tf32, hand (at most %d)\n", t, MAXR);
        return 2;
      }
      defs[nr++] = &route_table[f];
    }
    free(list);
  }
  /* accuracy families */
  tsr_inputs fams[3];
  int nf = 0;
  if (strcmp(acc_text, "off") && !check_only) {
    char *list = strdup(acc_text);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      char m[256];
      if (nf == 3 || tsr_inputs_parse(t, &fams[nf], m, sizeof m) || fams[nf] == TSR_INPUTS_DYADIC) {
        fprintf(stderr, "gpu_bench: --accuracy: '%s' is not random, normal or wide\n", t);
        return 2;
      }
      nf++;
    }
    free(list);
  }
  if (!nshapes)
    for (size_t i = 0; i < sizeof default_shapes / sizeof default_shapes[0]; i++)
      shape_list[nshapes++] = default_shapes[i];

  tsr_context *ctx;
  if (tsr_context_create(&ctx)) return 1;
  tsr__backend_desc d;
  tsr_status st = tsr__backend_cuda.describe(ctx, &d);
  if (st) {
    fprintf(stderr, "gpu_bench: %s\n", tsr_context_message(ctx));
    return 1;
  }
  printf("# %s sm_%d%d, %d SMs, driver %d, NVRTC %d.%d, cuBLAS %d; %d samples x ~%.0f ms after "
         "%.0f ms warm-up; ratios vs %s\n",
         d.device, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.nvrtc_major,
         d.nvrtc_minor, d.cublas_version, samples, sample_ms, warmup_ms, defs[0]->name);
  json_t *jdoc = json_pack("{s:s, s:s, s:i, s:f, s:f, s:[]}", "schema", "tessera-gpu-bench/1",
                           "device", d.device, "samples", samples, "sample_ms", sample_ms,
                           "warmup_ms", warmup_ms, "shapes");
  int exit_code = 0;
  char speed_md[1 << 16] = "", acc_md[1 << 16] = "";
  size_t sl = 0, al = 0;
#define SP(...) (sl += (size_t)snprintf(speed_md + sl, sl < sizeof speed_md ? sizeof speed_md - sl : 0, __VA_ARGS__))
#define AC(...) (al += (size_t)snprintf(acc_md + al, al < sizeof acc_md ? sizeof acc_md - al : 0, __VA_ARGS__))
  char speed_head[256], acc_head[256];
  snprintf(speed_head, sizeof speed_head,
           "| shape | route | precision | µs | TFLOP/s | time / %s [min, max] | plan (regs) |\n"
           "|---|---|---|---:|---:|---|---|\n", defs[0]->name);
  snprintf(acc_head, sizeof acc_head,
           "| shape | inputs | strict FP32 ref. | route | precision | rel. Frobenius | / strict | "
           "limit | worst elem / bound | contract |\n|---|---|---:|---|---|---:|---:|---:|---:|---|\n");
  SP("%s", speed_head);
  AC("%s", acc_head);
  for (int s = 0; s < nshapes; s++) {
    char msg[512];
    int64_t m, n, k;
    if (tsr_shape_parse(shape_list[s], &m, &n, &k, msg, sizeof msg)) {
      fprintf(stderr, "gpu_bench: %s\n", msg);
      return 2;
    }
    tsr_problem p;
    tsr_problem_init(&p, m, n, k);
    p.op_a = ops[0] == 'T' ? TSR_OP_T : TSR_OP_N;
    p.op_b = ops[1] == 'T' ? TSR_OP_T : TSR_OP_N;
    p.beta = beta;
    tsr__workload *w = NULL;
    if ((st = tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg))) {
      fprintf(stderr, "gpu_bench: %s: %s\n", shape_list[s], msg);
      return 1;
    }
    float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
    json_t *jshape = json_pack("{s:s, s:s, s:[], s:[]}", "shape", shape_list[s], "ops", ops,
                               "routes", "accuracy");
    json_array_append_new(json_object_get(jdoc, "shapes"), jshape);
    route_run *rr = calloc((size_t)nr, sizeof *rr);
    for (int r = 0; r < nr; r++) {
      route_run *x = &rr[r];
      x->def = defs[r];
      x->be = tsr__backend_get(x->def->backend);
      x->p = w->p;
      x->p.precision = x->def->precision;
      if ((st = prepare(ctx, x, w, plan_text, &x->ex, msg, sizeof msg))) {
        snprintf(x->note, sizeof x->note, "%s: %s", tsr_status_name(st), msg);
        fprintf(stderr, "# %s %s: %s\n", shape_list[s], x->def->name, x->note);
        exit_code = 1;
        continue;
      }
      int len = tsr_plan_format(&x->info.plan, x->plan, sizeof x->plan);
      if (x->info.regs >= 0)
        snprintf(x->plan + len, sizeof x->plan - (size_t)len, " (%d regs, %d local)",
                 x->info.regs, x->info.local_bytes);
      tsr_receipt rc;
      if ((st = tsr__validated_call(x->be, x->ex, w, x->info.precision, 0.0, 0.0, c, 0, &rc)) ||
          !rc.passed) {
        char sum[400] = "";
        if (!st) tsr__receipt_summary(&rc, sum, sizeof sum);
        snprintf(x->note, sizeof x->note, "%s", st ? tsr_context_message(ctx) : sum);
        fprintf(stderr, "# %s %s: INVALID: %s\n", shape_list[s], x->def->name, x->note);
        x->invalid = 1;
        exit_code = 1;
        continue;
      }
      if (check_only) {
        printf("# %s %s %s beta %g: valid (exact), precision %s\n", shape_list[s], ops,
               x->def->name, p.beta, tsr_precision_name(x->info.precision));
        continue;
      }
      tsr__calibration cal;
      if ((st = tsr__calibrate(x->be, x->ex, (int)warmup_ms, (int)sample_ms, &cal))) {
        snprintf(x->note, sizeof x->note, "%s", tsr_context_message(ctx));
        fprintf(stderr, "# %s %s warm-up: %s\n", shape_list[s], x->def->name, x->note);
        exit_code = 1;
        continue;
      }
      x->n = cal.calls_per_batch > 1000000 ? 1000000 : cal.calls_per_batch;
      x->ok = 1;
    }
    /* samples, route order rotated each sample */
    for (int i = 0; i < samples && !check_only; i++)
      for (int j = 0; j < nr; j++) {
        route_run *x = &rr[(i + j) % nr];
        if (!x->ok) continue;
        int64_t ns = 0;
        if ((st = tsr__sample(x->be, x->ex, TSR__TIMER_EVENT, x->n, &ns))) {
          snprintf(x->note, sizeof x->note, "%s", tsr_context_message(ctx));
          fprintf(stderr, "# %s %s sample: %s\n", shape_list[s], x->def->name, x->note);
          x->ok = 0;
          exit_code = 1;
          continue;
        }
        x->per_call[i] = (double)ns / (double)x->n;
      }
    double flops = 2.0 * (double)m * (double)n * (double)k;
    for (int r = 0; r < nr && !check_only; r++) {
      route_run *x = &rr[r];
      json_t *jr = json_pack("{s:s, s:s, s:s}", "route", x->def->name, "precision",
                             tsr_precision_name(x->info.precision), "plan", x->plan);
      json_array_append_new(json_object_get(jshape, "routes"), jr);
      if (!x->ok) {
        SP("| %s | %s | %s | %s | - | - | %s |\n", shape_list[s], x->def->name,
           tsr_precision_name(x->def->precision), x->invalid ? "INVALID" : "ERROR", x->note);
        json_object_set_new(jr, "error", json_string(x->note));
        continue;
      }
      double med = median(x->per_call, samples);
      json_t *js = json_array();
      for (int i = 0; i < samples; i++) json_array_append_new(js, json_real(x->per_call[i]));
      json_object_set_new(jr, "ns_per_call", js);
      json_object_set_new(jr, "median_ns", json_real(med));
      char ratio_txt[96] = "-";
      if (r > 0 && rr[0].ok) {
        double ratio[MAXS], lo = INFINITY, hi = 0;
        for (int i = 0; i < samples; i++) {
          ratio[i] = x->per_call[i] / rr[0].per_call[i];
          lo = fmin(lo, ratio[i]);
          hi = fmax(hi, ratio[i]);
        }
        double rm = median(ratio, samples);
        snprintf(ratio_txt, sizeof ratio_txt, "%.3f [%.3f, %.3f]", rm, lo, hi);
        json_object_set_new(jr, "ratio_median", json_real(rm));
        json_object_set_new(jr, "ratio_min", json_real(lo));
        json_object_set_new(jr, "ratio_max", json_real(hi));
      }
      SP("| %s | %s | %s | %.2f | %.2f | %s | `%s` |\n", shape_list[s], x->def->name,
         tsr_precision_name(x->info.precision), med / 1e3, flops / med / 1e3, ratio_txt, x->plan);
    }
    for (int r = 0; r < nr; r++)
      if (rr[r].ex) {
        rr[r].be->destroy(rr[r].ex);
        rr[r].ex = NULL;
      }
    tsr__workload_destroy(w);
    /* accuracy: every route on every family's inputs, one workload at a time */
    for (int f = 0; f < nf; f++) {
      tsr__workload *wa = NULL;
      if ((st = tsr__workload_create(&p, fams[f], 1, NULL, 0, &wa, msg, sizeof msg))) {
        fprintf(stderr, "gpu_bench: %s %s: %s\n", shape_list[s], tsr_inputs_name(fams[f]), msg);
        exit_code = 1;
        continue;
      }
      for (int r = 0; r < nr; r++) {
        route_run *x = &rr[r];
        if (x->invalid || (x->note[0] && !x->ok)) continue;
        void *ex = NULL;
        tsr_receipt rc;
        if ((st = prepare(ctx, x, wa, plan_text, &ex, msg, sizeof msg)) ||
            (st = tsr__validated_call(x->be, ex, wa, x->info.precision, 0.0, 0.0, c, 0, &rc))) {
          fprintf(stderr, "# %s %s accuracy: %s\n", shape_list[s], x->def->name,
                  tsr_context_message(ctx));
          if (ex) x->be->destroy(ex);
          exit_code = 1;
          continue;
        }
        x->be->destroy(ex);
        const char *verdict = rc.passed ? "met" : x->def->expect_breach ? "BROKEN (expected)" : "BROKEN";
        if (!rc.passed && !x->def->expect_breach) exit_code = 1;
        AC("| %s | %s | %.3g | %s | %s | %.3g | %.3f | %.3g | %.3g | %s |\n", shape_list[s],
           tsr_inputs_name(fams[f]), wa->strict_rel_fro, x->def->name,
           tsr_precision_name(x->info.precision), rc.rel_fro_err,
           rc.rel_fro_err / wa->strict_rel_fro, rc.fro_limit, rc.worst_bound_ratio, verdict);
        json_array_append_new(
            json_object_get(jshape, "accuracy"),
            json_pack("{s:s, s:s, s:s, s:f, s:f, s:o, s:f, s:I, s:I, s:b}", "inputs",
                      tsr_inputs_name(fams[f]), "route", x->def->name, "precision",
                      tsr_precision_name(x->info.precision), "strict_rel_fro", wa->strict_rel_fro,
                      "rel_fro_err", rc.rel_fro_err, "fro_limit",
                      isfinite(rc.fro_limit) ? json_real(rc.fro_limit) : json_null(),
                      "worst_bound_ratio", rc.worst_bound_ratio, "bound_failed",
                      (json_int_t)rc.bound_failed, "class_failed", (json_int_t)rc.class_failed,
                      "passed", rc.passed));
      }
      tsr__workload_destroy(wa);
    }
    free(rr);
    free(c);
    fprintf(stderr, "# %s done\n", shape_list[s]);
    /* each shape's tables as soon as they exist (a run cut short keeps them) */
    if (!check_only) {
      printf("\n### %s: speed (device events; ratio = time / %s time, median of per-sample "
             "paired ratios [min, max])\n\n%s",
             shape_list[s], defs[0]->name, speed_md);
      if (nf)
        printf("\n### %s: accuracy (relative Frobenius error vs the FP64 oracle; contract: "
               "docs/accuracy.md)\n\n%s",
               shape_list[s], acc_md);
      fflush(stdout);
      sl = (size_t)snprintf(speed_md, sizeof speed_md, "%s", speed_head);
      al = (size_t)snprintf(acc_md, sizeof acc_md, "%s", acc_head);
    }
    if (json_path) json_dump_file(jdoc, json_path, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
  }
  if (json_path) json_dump_file(jdoc, json_path, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
  json_decref(jdoc);
  tsr_context_destroy(ctx);
  return exit_code;
}
