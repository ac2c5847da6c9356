/* bench_cpu: tessera's CPU backend paired against OpenBLAS cblas_sgemm.
 *
 * One process, same thread count for both (openblas_set_num_threads). For
 * each shape: validate tessera once outside timing (dyadic inputs: max error
 * exactly 0 against OpenBLAS, and against the FP64 oracle where that is
 * affordable), then `rounds` rounds alternating the order of the two (ABBA).
 * A sample is the median over `repeats` timed batches (each batch a number of
 * back-to-back calls filling about --batch-ms) after a warm-up. Reported:
 * median over rounds of each side's GFLOP/s and the median over rounds of the
 * same-round ratio tessera/OpenBLAS with its [min, max].
 *
 *   bench_cpu [--threads T] [--rounds R] [--repeats N] [--batch-ms MS]
 *             [--gap-ms MS] [--shapes MxNxK[:XY],...] [--plan TEXT] [--clock wall|cpu]
 *
 * Each side's sample starts after --gap-ms (200) of sleep, so that the other
 * library's spinning idle threads have gone to sleep.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure/measure.h"
#include "measure/stats.h"
#include "measure/zoo.h"
#include "tool_args.h"
#include "tessera.h"

/* OpenBLAS (linked directly; no header dependency beyond these). */
enum { CblasRowMajor = 101 };
enum { CblasNoTrans = 111, CblasTrans = 112 };
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int n);
char *openblas_get_corename(void);
char *openblas_get_config(void);

/* Wall clock by default; --clock cpu uses the process CPU time instead, which
 * ignores time slices lost to other jobs on a loaded machine (meaningful at
 * --threads 1 only: with more threads it sums the threads and counts
 * OpenBLAS's spinning idle workers). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  tsr_context *ctx;
  const tsr_problem *p;
  const tsr_plan *plan;
  const float *a, *b;
  float *c;
} side;

static int run_tessera(const side *s) {
  return tsr_gemm(s->ctx, TSR_BACKEND_CPU, s->p, s->plan, s->a, s->b, s->c) != TSR_OK;
}

static int run_openblas(const side *s) {
  const tsr_problem *p = s->p;
  cblas_sgemm(CblasRowMajor, p->op_a == TSR_OP_N ? CblasNoTrans : CblasTrans,
              p->op_b == TSR_OP_N ? CblasNoTrans : CblasTrans, (int)p->m, (int)p->n, (int)p->k,
              p->alpha, s->a, (int)p->lda, s->b, (int)p->ldb, p->beta, s->c, (int)p->ldc);
  return 0;
}

/* Seconds per call: median over `repeats` batches of `calls` calls. */
/* Quiet time before each side's sample (--gap-ms): OpenBLAS's idle workers
 * busy-wait about 2^28 cycles (~0.1 s) after their last job, tessera's 50 µs.
 * Without the gap a side measured right after OpenBLAS shares the 2 cores
 * with its spinning threads (docs/log/perf-notebook.md, CPU step 12). */
static double gap_ms = 200.0;

static double sample(int (*fn)(const side *), const side *s, int calls, int repeats) {
  double t[64];
  if (gap_ms > 0) {
    struct timespec ts = {(time_t)(gap_ms / 1000), (long)(fmod(gap_ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
  }
  for (int w = 0; w < 2; w++) fn(s); /* warm-up: caches, pool, page faults */
  for (int r = 0; r < repeats; r++) {
    double t0 = now_s();
    for (int i = 0; i < calls; i++)
      if (fn(s)) {
        fprintf(stderr, "bench_cpu: tessera failed: %s\n", tsr_context_message(s->ctx));
        exit(1);
      }
    t[r] = (now_s() - t0) / calls;
  }
  return tsr__median(t, (size_t)repeats);
}

typedef struct {
  int threads, rounds, repeats;
  double batch_ms;
  const char *shapes, *plan;
} options;

const char *const tool_name = "bench_cpu";

/* argv → o (and the clock, the gap); 0, or exit code 2 after one line. */
static int parse_options(int argc, char **argv, options *o) {
  double threads = (double)sysconf(_SC_NPROCESSORS_ONLN), rounds = 6, repeats = 5;
  *o = (options){.batch_ms = 30.0,
                 .shapes = "512x512x512,1024x1024x1024,1024x1024x1537,2049x4097x1025,4096x4096x4096"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!v) return usage_error("%s needs a value", a);
    if (!strcmp(a, "--threads")) bad = parse_number(a, v, 1, 1024, &threads);
    else if (!strcmp(a, "--rounds")) bad = parse_number(a, v, 1, 64, &rounds);
    else if (!strcmp(a, "--repeats")) bad = parse_number(a, v, 1, 64, &repeats);
    else if (!strcmp(a, "--batch-ms")) bad = parse_number(a, v, 0.01, 1e5, &o->batch_ms);
    else if (!strcmp(a, "--gap-ms")) bad = parse_number(a, v, 0, 10000, &gap_ms);
    else if (!strcmp(a, "--shapes")) o->shapes = v;
    else if (!strcmp(a, "--plan")) o->plan = v;
    else if (!strcmp(a, "--clock") && (!strcmp(v, "wall") || !strcmp(v, "cpu")))
      bench_clock = !strcmp(v, "cpu") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
    else if (!strcmp(a, "--clock")) return usage_error("--clock must be wall or cpu, not '%s'", v);
    else return usage_error("unknown option '%s'", a);
    if (bad) return bad;
    i++;
  }
  o->threads = (int)threads;
  o->rounds = (int)rounds;
  o->repeats = (int)repeats;
  return 0;
}

static void print_header(const options *o) {
  double load[3] = {0};
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) {
    if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    fclose(lf);
  }
  time_t tnow = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&tnow));
  printf("# bench_cpu %s\n", date);
  printf("# openblas: core %s | %s\n", openblas_get_corename(), openblas_get_config());
  printf("# threads %d, rounds %d (ABBA), repeats %d, batch %.0f ms, gap %.0f ms, clock %s, "
         "load avg %.2f %.2f %.2f\n",
         o->threads, o->rounds, o->repeats, o->batch_ms, gap_ms,
         bench_clock == CLOCK_MONOTONIC ? "wall" : "process-cpu", load[0], load[1], load[2]);
  printf("\n| shape (MxNxK) | tessera GFLOP/s | OpenBLAS GFLOP/s | ratio median | [min, max] | "
         "rounds slower | max err (dyadic) | rel. Frobenius err (random): tessera, OpenBLAS | plan |\n"
         "|---|---:|---:|---:|---|---:|---:|---:|---|\n");
  fflush(stdout);
}

/* Outside timing, through the measurement layer: dyadic inputs exact against
 * the FP64 oracle and against OpenBLAS (*err: the larger max error, 0 when
 * exact), and the strict contract on random inputs (acc_err[0]: tessera's
 * relative Frobenius error, acc_err[1]: OpenBLAS's on the same inputs, the
 * peer's figure beside ours; docs/accuracy.md). Returns 0, 1 when a
 * contract failed, -1 when tessera failed to run. */
static int validate(const char *shape, side *st, side *so, const tsr__workload *w,
                    const tsr__workload *wacc, double *err, double acc_err[2]) {
  const tsr_problem *p = st->p;
  tsr_poison(p, st->c);
  tsr_poison(p, so->c);
  if (run_tessera(st)) return -1;
  run_openblas(so);
  *err = 0.0;
  for (int64_t i = 0; i < p->m * p->n; i++) {
    double e = fabs((double)st->c[i] - (double)so->c[i]);
    if (!(e <= *err)) *err = isnan(e) ? INFINITY : e;
  }
  tsr_receipt r;
  tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, st->c, &r);
  if (!r.passed || r.max_abs_err > *err) *err = r.passed ? r.max_abs_err : INFINITY;
  side sacc = *st;
  sacc.a = wacc->a;
  sacc.b = wacc->b;
  tsr_poison(p, st->c);
  if (run_tessera(&sacc)) return -1;
  side soacc = *so;
  soacc.a = wacc->a;
  soacc.b = wacc->b;
  tsr_poison(p, so->c);
  run_openblas(&soacc);
  tsr_receipt peer;
  tsr__workload_check(wacc, TSR_PREC_STRICT, 0.0, 0.0, so->c, &peer);
  acc_err[1] = peer.rel_fro_err;
  tsr__workload_check(wacc, TSR_PREC_STRICT, 0.0, 0.0, st->c, &r);
  acc_err[0] = r.rel_fro_err;
  if (!r.passed) {
    char sum[512];
    tsr__receipt_summary(&r, sum, sizeof sum);
    fprintf(stderr, "bench_cpu: %s: accuracy FAILED: %s\n", shape, sum);
  }
  return !r.passed || *err != 0.0;
}

/* o->rounds ABBA rounds; gt, go: GFLOP/s per round, ratio: tessera speed /
 * OpenBLAS speed per round. */
static void time_rounds(const options *o, const side *st, const side *so, double flops,
                        double *gt, double *go, double *ratio) {
  /* Calls per timed batch from one timed call of tessera. */
  double t1 = now_s();
  run_tessera(st);
  double one = now_s() - t1;
  int calls = (int)(o->batch_ms * 1e-3 / (one > 1e-6 ? one : 1e-6));
  if (calls < 1) calls = 1;
  if (calls > 1000) calls = 1000;
  for (int r = 0; r < o->rounds; r++) {
    double tt, to;
    if (r % 2 == 0) { /* A B */
      tt = sample(run_tessera, st, calls, o->repeats);
      to = sample(run_openblas, so, calls, o->repeats);
    } else { /* B A */
      to = sample(run_openblas, so, calls, o->repeats);
      tt = sample(run_tessera, st, calls, o->repeats);
    }
    gt[r] = flops / tt * 1e-9;
    go[r] = flops / to * 1e-9;
    ratio[r] = to / tt;
  }
}

/* One shape: plan, validate, time, print its row. Returns 0, 1 (a failure),
 * or 2 (bad shape or plan). */
static int bench_shape(tsr_context *ctx, const options *o, const char *tok) {
  char msg[256];
  tsr__shape_token st0;
  if (tsr__shape_token_parse(tok, &st0, msg, sizeof msg))
    return usage_error("--shapes: '%s': %s", tok, msg);
  /* cblas_sgemm has no batch: a batched token would compare unlike work. */
  if (st0.batch > 1)
    return usage_error("--shapes: '%s': a batch is not supported here (tessera bench runs it)",
                       tok);
  tsr_problem p;
  tsr_problem_init(&p, st0.m, st0.n, st0.k);
  p.op_a = st0.op_a;
  p.op_b = st0.op_b;
  if (tsr_problem_check(&p, msg, sizeof msg) != TSR_OK) return usage_error("%s", msg);
  tsr_plan plan;
  tsr_plan_default(ctx, TSR_BACKEND_CPU, &p, &plan);
  if (o->plan && tsr_plan_parse(o->plan, &plan, msg, sizeof msg) != TSR_OK)
    return usage_error("%s", msg);
  /* --threads is what both libraries are offered; a plan that asks for
   * fewer (the default for small problems) keeps its own count. */
  if (plan.threads == 0 || plan.threads > o->threads) plan.threads = o->threads;
  tsr_plan_info info;
  if (tsr_plan_realize(ctx, TSR_BACKEND_CPU, &p, &plan, &info) != TSR_OK)
    return usage_error("%s", tsr_context_message(ctx));
  tsr__workload *w = NULL, *wacc = NULL;
  if (tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg) ||
      tsr__workload_create(&p, TSR_INPUTS_RANDOM, 1, NULL, 0, &wacc, msg, sizeof msg)) {
    fprintf(stderr, "bench_cpu: %s\n", msg);
    tsr__workload_destroy(w);
    return 1;
  }
  float *ct = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *ct);
  float *co = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *co);
  int rc = 1;
  side st = {ctx, &p, &plan, w->a, w->b, ct}, so = {ctx, &p, &plan, w->a, w->b, co};
  double err = 0, acc_err[2] = {0, 0};
  int v = ct && co ? validate(tok, &st, &so, w, wacc, &err, acc_err) : -1;
  if (v < 0) {
    fprintf(stderr, "bench_cpu: %s: tessera failed: %s\n", tok,
            ct && co ? tsr_context_message(ctx) : "out of host memory");
  } else {
    double gt[64], go[64], ratio[64];
    time_rounds(o, &st, &so, 2.0 * (double)p.m * (double)p.n * (double)p.k, gt, go, ratio);
    double rmin = ratio[0], rmax = ratio[0];
    int slower = 0;
    for (int r = 0; r < o->rounds; r++) {
      rmin = fmin(rmin, ratio[r]);
      rmax = fmax(rmax, ratio[r]);
      slower += ratio[r] < 1.0;
    }
    char ptxt[512];
    tsr_plan_format(&info.plan, ptxt, sizeof ptxt);
    printf("| %s | %.1f | %.1f | %.3f | [%.3f, %.3f] | %d/%d | %g | %.3g, %.3g | `%s` |\n", tok,
           tsr__median(gt, (size_t)o->rounds), tsr__median(go, (size_t)o->rounds),
           tsr__median(ratio, (size_t)o->rounds), rmin, rmax,
           slower, o->rounds, err, acc_err[0], acc_err[1], ptxt);
    fflush(stdout);
    rc = v;
  }
  tsr__workload_destroy(w);
  tsr__workload_destroy(wacc);
  free(ct);
  free(co);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc;
  openblas_set_num_threads(o.threads);
  tsr_context *ctx;
  if (tsr_context_create(&ctx) != TSR_OK) return 1;
  print_header(&o);
  char *list = strdup(o.shapes);
  int failed = 0;
  for (char *tok = strtok(list, ","); tok && rc != 2; tok = strtok(NULL, ",")) {
    rc = bench_shape(ctx, &o, tok);
    failed |= rc == 1;
  }
  free(list);
  tsr_context_destroy(ctx);
  if (rc == 2) return 2;
  if (failed) {
    fprintf(stderr, "bench_cpu: validation FAILED (max err != 0 or the strict contract)\n");
    return 1;
  }
  return 0;
}
