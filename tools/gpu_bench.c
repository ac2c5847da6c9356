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
 *             [--accuracy off|FAMILY,...] [--json FILE] [[B*]MxNxK[:XY] ...]
 *
 * Shapes are the bench's tokens: an optional batch B and ops XY of their
 * own (else --ops).
 *
 * Routes: cublas (pedantic, strict), cublas-tf32, auto (tessera default),
 * strict, fp32x3, fp32x3-pack (split=pack: the TF32 parts made once by the
 * pack prologue), chain (fp32x3 with acc=chain: the pre-contract scheme),
 * tf32, tf32-pack, hand, ozaki (the INT8 residue family, precision ozaki). --plan
 * applies TEXT over each tessera route's default plan.
 * --check-only validates every route once without timing or accuracy (for
 * compute-sanitizer). Exit 1 when a route failed, was invalid or broke its
 * contract (chain's breach is expected and reported, not an error). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "measure/measure.h"
#include "measure/zoo.h"
#include "tool_args.h"
#include "sys/file.h"
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
    {"fp32x3-pack", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "split=pack", 0},
    {"chain", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "acc=chain", 1},
    {"tf32", TSR_BACKEND_CUDA, TSR_PREC_TF32, NULL, 0},
    {"tf32-pack", TSR_BACKEND_CUDA, TSR_PREC_TF32, "split=pack", 0},
    {"hand", TSR_BACKEND_HAND, TSR_PREC_STRICT, NULL, 0},
    {"ozaki", TSR_BACKEND_CUDA, TSR_PREC_OZAKI, NULL, 0},
};
#define NDEF (int)(sizeof route_table / sizeof route_table[0])
#define MAXR 10
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
  tsr_problem p; /* with the route's precision */
  tsr_plan_info info;
  tsr_exec *ex;
  int ok, invalid;
  int64_t n;  /* calls per sample */
  double per_call[MAXS];
  char plan[420];
  char note[600];
} route_run;

/* Realize and prepare route x on workload w (x->info: the realized plan,
 * kept when the compile fails). */
static tsr_status prepare(tsr_context *ctx, route_run *x, const tsr__workload *w,
                          const char *plan_text, tsr_exec **ex, char *msg, size_t cap) {
  tsr_plan plan;
  tsr_status st = tsr_plan_lookup(ctx, x->def->backend, &x->p, &plan, NULL, 0);
  if (!st && x->def->overlay) st = tsr_plan_parse(x->def->overlay, &plan, msg, cap);
  if (!st && plan_text && x->def->backend == TSR_BACKEND_CUDA)
    st = tsr_plan_parse(plan_text, &plan, msg, cap);
  if (st) return st;
  if ((st = tsr_plan_realize(ctx, x->def->backend, &x->p, &plan, &x->info)) ||
      (st = tsr__exec_create(ctx, x->def->backend, &x->p, &plan, w->a, w->b, w->c0, 0, ex))) {
    snprintf(msg, cap, "%s", tsr_context_message(ctx));
    return st;
  }
  x->info = *tsr_exec_info(*ex);
  return TSR_OK;
}

typedef struct {
  int samples, check_only;
  const char *plan_text, *ops, *json_path;
  float beta;
  double sample_ms, warmup_ms;
  const route_def *defs[MAXR];
  int nr;
  tsr_inputs fams[3];
  int nf;
  const char *shapes[64];
  int nshapes;
} options;

/* The markdown tables of one shape, printed when the shape is done. */
typedef struct {
  char speed[1 << 16], acc[1 << 16];
  size_t sl, al;
} tables;
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (*len < cap) *len += (size_t)vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
}
#define SP(t, ...) append((t)->speed, sizeof (t)->speed, &(t)->sl, __VA_ARGS__)
#define AC(t, ...) append((t)->acc, sizeof (t)->acc, &(t)->al, __VA_ARGS__)

const char *const tool_name = "gpu_bench";

/* argv → o; 0, or the exit code 2 after a one-line message. */
static int parse_options(int argc, char **argv, options *o) {
  const char *routes_text = "cublas,auto,hand", *acc_text = "random";
  double samples = 5, beta = 0;
  *o = (options){.ops = "NN", .sample_ms = 20.0, .warmup_ms = 100.0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(a, "--check-only")) {
      o->check_only = 1;
      continue;
    }
    if (a[0] != '-') {
      if (o->nshapes == 64) return usage_error("at most 64 shapes");
      o->shapes[o->nshapes++] = a;
      continue;
    }
    if (!v) return usage_error("%s needs a value", a);
    i++;
    if (!strcmp(a, "--samples")) bad = parse_number(a, v, 1, MAXS, &samples);
    else if (!strcmp(a, "--sample-ms")) bad = parse_number(a, v, 0.01, 1e5, &o->sample_ms);
    else if (!strcmp(a, "--warmup-ms")) bad = parse_number(a, v, 0, 1e5, &o->warmup_ms);
    else if (!strcmp(a, "--beta")) bad = parse_number(a, v, -1e30, 1e30, &beta);
    else if (!strcmp(a, "--plan")) o->plan_text = v;
    else if (!strcmp(a, "--ops")) o->ops = v;
    else if (!strcmp(a, "--routes")) routes_text = v;
    else if (!strcmp(a, "--accuracy")) acc_text = v;
    else if (!strcmp(a, "--json")) o->json_path = v;
    else return usage_error("unknown option '%s'", a);
    if (bad) return bad;
  }
  o->samples = (int)samples;
  o->beta = (float)beta;
  if (strlen(o->ops) != 2 || !strchr("NT", o->ops[0]) || !strchr("NT", o->ops[1]))
    return usage_error("--ops: '%s' is not NN, NT, TN or TT", o->ops);
  char *list = strdup(routes_text);
  for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
    int f = -1;
    for (int d = 0; d < NDEF; d++)
      if (!strcmp(t, route_table[d].name)) f = d;
    if (f < 0 || o->nr == MAXR) {
      usage_error("--routes: '%s' is not one of cublas, cublas-tf32, auto, strict, fp32x3, "
                  "fp32x3-pack, chain, tf32, tf32-pack, hand, ozaki (at most %d)", t, MAXR);
      free(list);
      return 2;
    }
    o->defs[o->nr++] = &route_table[f];
  }
  free(list);
  if (!o->nr) return usage_error("--routes: no route");
  if (strcmp(acc_text, "off") && !o->check_only) {
    list = strdup(acc_text);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      char m[256];
      if (o->nf == 3 || tsr_inputs_parse(t, &o->fams[o->nf], m, sizeof m) ||
          o->fams[o->nf] == TSR_INPUTS_DYADIC) {
        usage_error("--accuracy: '%s' is not random, normal or wide", t);
        free(list);
        return 2;
      }
      o->nf++;
    }
    free(list);
  }
  if (!o->nshapes)
    for (size_t i = 0; i < sizeof default_shapes / sizeof default_shapes[0]; i++)
      o->shapes[o->nshapes++] = default_shapes[i];
  return 0;
}

/* Prepare, validate exactly and calibrate each route on the dyadic workload
 * w; returns 1 if any route failed. */
static int prepare_routes(tsr_context *ctx, const options *o, const char *shape,
                          const tsr__workload *w, route_run *rr, float *c) {
  int bad = 0;
  for (int r = 0; r < o->nr; r++) {
    route_run *x = &rr[r];
    char msg[512];
    tsr_status st;
    x->def = o->defs[r];
    x->p = w->p;
    x->p.precision = x->def->precision;
    if ((st = prepare(ctx, x, w, o->plan_text, &x->ex, msg, sizeof msg))) {
      snprintf(x->note, sizeof x->note, "%s: %s", tsr_status_name(st), msg);
      fprintf(stderr, "# %s %s: %s\n", shape, x->def->name, x->note);
      bad = 1;
      continue;
    }
    int len = tsr_plan_format(&x->info.plan, x->plan, sizeof x->plan);
    if (x->info.regs >= 0)
      snprintf(x->plan + len, sizeof x->plan - (size_t)len, " (%d regs, %d local)",
               x->info.regs, x->info.local_bytes);
    tsr_receipt rc;
    if ((st = tsr__validated_call(x->ex, w, x->info.precision, 0.0, 0.0, c, 0, &rc)) ||
        !rc.passed) {
      char sum[400] = "";
      if (!st) tsr__receipt_summary(&rc, sum, sizeof sum);
      snprintf(x->note, sizeof x->note, "%s", st ? tsr_context_message(ctx) : sum);
      fprintf(stderr, "# %s %s: INVALID: %s\n", shape, x->def->name, x->note);
      x->invalid = 1;
      bad = 1;
      continue;
    }
    if (o->check_only) {
      printf("# %s %c%c %s beta %g: valid (exact), precision %s\n", shape,
             x->p.op_a == TSR_OP_T ? 'T' : 'N', x->p.op_b == TSR_OP_T ? 'T' : 'N', x->def->name, o->beta, tsr_precision_name(x->info.precision));
      continue;
    }
    tsr__calibration cal;
    if ((st = tsr__calibrate(x->ex, (int)o->warmup_ms, (int)o->sample_ms, &cal))) {
      snprintf(x->note, sizeof x->note, "%s", tsr_context_message(ctx));
      fprintf(stderr, "# %s %s warm-up: %s\n", shape, x->def->name, x->note);
      bad = 1;
      continue;
    }
    x->n = cal.calls_per_batch > 1000000 ? 1000000 : cal.calls_per_batch;
    x->ok = 1;
  }
  return bad;
}

/* The samples, route order rotated each sample, then one speed row per
 * route; returns 1 if a sample failed. */
static int time_routes(tsr_context *ctx, const options *o, const char *shape, double flops,
                       route_run *rr, json_t *jshape, tables *t) {
  int bad = 0;
  for (int i = 0; i < o->samples; i++)
    for (int j = 0; j < o->nr; j++) {
      route_run *x = &rr[(i + j) % o->nr];
      if (!x->ok) continue;
      int64_t ns = 0;
      if (tsr__sample(x->ex, TSR__TIMER_EVENT, x->n, &ns)) {
        snprintf(x->note, sizeof x->note, "%s", tsr_context_message(ctx));
        fprintf(stderr, "# %s %s sample: %s\n", shape, x->def->name, x->note);
        x->ok = 0;
        bad = 1;
        continue;
      }
      x->per_call[i] = (double)ns / (double)x->n;
    }
  for (int r = 0; r < o->nr; r++) {
    route_run *x = &rr[r];
    json_t *jr = json_pack("{s:s, s:s, s:s}", "route", x->def->name, "precision",
                           tsr_precision_name(x->info.precision), "plan", x->plan);
    json_array_append_new(json_object_get(jshape, "routes"), jr);
    if (!x->ok) {
      SP(t, "| %s | %s | %s | %s | - | - | %s |\n", shape, x->def->name,
         tsr_precision_name(x->def->precision), x->invalid ? "INVALID" : "ERROR", x->note);
      json_object_set_new(jr, "error", json_string(x->note));
      continue;
    }
    double med = median(x->per_call, o->samples);
    json_t *js = json_array();
    for (int i = 0; i < o->samples; i++) json_array_append_new(js, json_real(x->per_call[i]));
    json_object_set_new(jr, "ns_per_call", js);
    json_object_set_new(jr, "median_ns", json_real(med));
    char ratio_txt[96] = "-";
    if (r > 0 && rr[0].ok) {
      double ratio[MAXS], lo = INFINITY, hi = 0;
      for (int i = 0; i < o->samples; i++) {
        ratio[i] = x->per_call[i] / rr[0].per_call[i];
        lo = fmin(lo, ratio[i]);
        hi = fmax(hi, ratio[i]);
      }
      double rm = median(ratio, o->samples);
      snprintf(ratio_txt, sizeof ratio_txt, "%.3f [%.3f, %.3f]", rm, lo, hi);
      json_object_set_new(jr, "ratio_median", json_real(rm));
      json_object_set_new(jr, "ratio_min", json_real(lo));
      json_object_set_new(jr, "ratio_max", json_real(hi));
    }
    SP(t, "| %s | %s | %s | %.2f | %.2f | %s | `%s` |\n", shape, x->def->name,
       tsr_precision_name(x->info.precision), med / 1e3, flops / med / 1e3, ratio_txt, x->plan);
  }
  return bad;
}

/* Every usable route on one input family's workload, held to its contract;
 * returns 1 on an error or an unexpected breach. */
static int accuracy_family(tsr_context *ctx, const options *o, const char *shape,
                           const tsr_problem *p, tsr_inputs fam, route_run *rr, float *c,
                           json_t *jshape, tables *t) {
  char msg[512];
  tsr__workload *wa = NULL;
  if (tsr__workload_create(p, fam, 1, NULL, 0, &wa, msg, sizeof msg)) {
    fprintf(stderr, "gpu_bench: %s %s: %s\n", shape, tsr_inputs_name(fam), msg);
    return 1;
  }
  int bad = 0;
  for (int r = 0; r < o->nr; r++) {
    route_run *x = &rr[r];
    if (x->invalid || (x->note[0] && !x->ok)) continue;
    tsr_exec *ex = NULL;
    tsr_receipt rc;
    if (prepare(ctx, x, wa, o->plan_text, &ex, msg, sizeof msg) ||
        tsr__validated_call(ex, wa, x->info.precision, 0.0, 0.0, c, 0, &rc)) {
      fprintf(stderr, "# %s %s accuracy: %s\n", shape, x->def->name, tsr_context_message(ctx));
      tsr_exec_destroy(ex);
      bad = 1;
      continue;
    }
    tsr_exec_destroy(ex);
    const char *verdict = rc.passed ? "met" : x->def->expect_breach ? "BROKEN (expected)" : "BROKEN";
    if (!rc.passed && !x->def->expect_breach) bad = 1;
    AC(t, "| %s | %s | %.3g | %s | %s | %.3g | %.3f | %.3g | %.3g | %s |\n", shape,
       tsr_inputs_name(fam), wa->strict_rel_fro, x->def->name,
       tsr_precision_name(x->info.precision), rc.rel_fro_err, rc.rel_fro_err / wa->strict_rel_fro,
       rc.fro_limit, rc.worst_bound_ratio, verdict);
    json_array_append_new(
        json_object_get(jshape, "accuracy"),
        json_pack("{s:s, s:s, s:s, s:f, s:f, s:o, s:f, s:I, s:I, s:b}", "inputs",
                  tsr_inputs_name(fam), "route", x->def->name, "precision",
                  tsr_precision_name(x->info.precision), "strict_rel_fro", wa->strict_rel_fro,
                  "rel_fro_err", rc.rel_fro_err, "fro_limit",
                  isfinite(rc.fro_limit) ? json_real(rc.fro_limit) : json_null(),
                  "worst_bound_ratio", rc.worst_bound_ratio, "bound_failed",
                  (json_int_t)rc.bound_failed, "class_failed", (json_int_t)rc.class_failed,
                  "passed", rc.passed));
  }
  tsr__workload_destroy(wa);
  return bad;
}

/* The JSON document so far, replacing the file atomically (a run cut short
 * leaves the shapes done). */
static int write_json(const char *path, const json_t *doc) {
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(9)), msg[600];
  if (!text) {
    fprintf(stderr, "gpu_bench: --json: out of memory\n");
    return 1;
  }
  tsr__span parts[2] = {{text, strlen(text)}, {"\n", 1}};
  int e = tsr__write_atomic(path, parts, 2, msg, sizeof msg);
  free(text);
  if (e) fprintf(stderr, "gpu_bench: --json: %s\n", msg);
  return e ? 1 : 0;
}

/* One shape: time every route on dyadic inputs, then the accuracy families.
 * Returns the exit code contribution (0, 1) or 2 for a bad shape. */
static int run_shape(tsr_context *ctx, const options *o, const char *shape, json_t *jdoc,
                     tables *t) {
  char msg[512];
  /* the bench's shape token "[B*]MxNxK[:XY]": its own batch and ops, else --ops */
  tsr__shape_token tok;
  if (tsr__shape_token_parse(shape, &tok, msg, sizeof msg))
    return usage_error("shape '%s': %s", shape, msg);
  int64_t m = tok.m, n = tok.n, k = tok.k;
  tsr_problem p;
  tsr_problem_init(&p, m, n, k);
  p.batch = tok.batch;
  p.op_a = tok.has_ops ? tok.op_a : o->ops[0] == 'T' ? TSR_OP_T : TSR_OP_N;
  p.op_b = tok.has_ops ? tok.op_b : o->ops[1] == 'T' ? TSR_OP_T : TSR_OP_N;
  p.beta = o->beta;
  tsr__workload *w = NULL;
  if (tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg)) {
    fprintf(stderr, "gpu_bench: %s: %s\n", shape, msg);
    return 1;
  }
  float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
  route_run *rr = calloc((size_t)o->nr, sizeof *rr);
  if (!c || !rr) {
    fprintf(stderr, "gpu_bench: %s: out of host memory\n", shape);
    free(c), free(rr), tsr__workload_destroy(w);
    return 1;
  }
  json_t *jshape = json_pack("{s:s, s:s, s:[], s:[]}", "shape", shape, "ops", o->ops, "routes",
                             "accuracy");
  json_array_append_new(json_object_get(jdoc, "shapes"), jshape);
  int bad = prepare_routes(ctx, o, shape, w, rr, c);
  if (!o->check_only) bad |= time_routes(ctx, o, shape, 2.0 * (double)tok.batch * (double)m * (double)n * (double)k, rr, jshape, t);
  for (int r = 0; r < o->nr; r++)
    if (rr[r].ex) {
      tsr_exec_destroy(rr[r].ex);
      rr[r].ex = NULL;
    }
  tsr__workload_destroy(w);
  for (int f = 0; f < o->nf; f++) bad |= accuracy_family(ctx, o, shape, &p, o->fams[f], rr, c, jshape, t);
  free(rr);
  free(c);
  return bad;
}

int main(int argc, char **argv) {
  static options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc;
  tsr_context *ctx;
  if (tsr_context_create(&ctx)) return 1;
  tsr_device_info d;
  if (tsr_backend_describe(ctx, TSR_BACKEND_CUDA, &d)) {
    fprintf(stderr, "gpu_bench: %s\n", tsr_context_message(ctx));
    tsr_context_destroy(ctx);
    return 1;
  }
  printf("# %s sm_%d%d, %d SMs, driver %d, NVRTC %d.%d, cuBLAS %d; %d samples x ~%.0f ms after "
         "%.0f ms warm-up; ratios vs %s\n",
         d.device, d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.nvrtc_major,
         d.nvrtc_minor, d.cublas_version, o.samples, o.sample_ms, o.warmup_ms, o.defs[0]->name);
  json_t *jdoc = json_pack("{s:s, s:s, s:i, s:f, s:f, s:[]}", "schema", "tessera-gpu-bench/1",
                           "device", d.device, "samples", o.samples, "sample_ms", o.sample_ms,
                           "warmup_ms", o.warmup_ms, "shapes");
  static tables t;
  char speed_head[256];
  snprintf(speed_head, sizeof speed_head,
           "| shape | route | precision | µs | TFLOP/s | time / %s [min, max] | plan (regs) |\n"
           "|---|---|---|---:|---:|---|---|\n", o.defs[0]->name);
  const char *acc_head =
      "| shape | inputs | strict FP32 ref. | route | precision | rel. Frobenius | / strict | "
      "limit | worst elem / bound | contract |\n|---|---|---:|---|---|---:|---:|---:|---:|---|\n";
  int exit_code = 0;
  for (int s = 0; s < o.nshapes && exit_code != 2; s++) {
    t.sl = t.al = 0;
    SP(&t, "%s", speed_head);
    AC(&t, "%s", acc_head);
    int r = run_shape(ctx, &o, o.shapes[s], jdoc, &t);
    exit_code = r == 2 ? 2 : exit_code | r;
    if (r == 2) break;
    fprintf(stderr, "# %s done\n", o.shapes[s]);
    /* each shape's tables as soon as they exist (a run cut short keeps them) */
    if (!o.check_only) {
      printf("\n### %s: speed (device events; ratio = time / %s time, median of per-sample "
             "paired ratios [min, max])\n\n%s",
             o.shapes[s], o.defs[0]->name, t.speed);
      if (o.nf)
        printf("\n### %s: accuracy (relative Frobenius error vs the FP64 oracle; contract: "
               "docs/accuracy.md)\n\n%s",
               o.shapes[s], t.acc);
      fflush(stdout);
    }
    if (o.json_path) exit_code |= write_json(o.json_path, jdoc);
  }
  json_decref(jdoc);
  tsr_context_destroy(ctx);
  return exit_code;
}
