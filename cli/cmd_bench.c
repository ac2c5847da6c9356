/* tessera bench: the measurement protocol over every available route, and the
 * hidden child verb bench-run that performs one (route, shape) measurement. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench/bench.h"
#include "cli.h"
#include "measure/zoo.h"

static const char *const preset_seed[] = {
    "128x128x61",   "512x512x512",    "1024x1024x1024", "1024x1024x1537", "2049x4097x1025",
    "4096x4096x4096", "4096x4096x11008", "8192x8192x8192", "32x32x32",       "128x128x128",
    "256x1024x128", "1024x128x256",   "127x193x61",     "513x257x129"};
static const char *const preset_quick[] = {"128x128x61", "256x256x256", "513x257x129",
                                           "1024x1024x1024"};

static const char *const preset_names[] = {"seed", "quick", "zoo", "zoo-quick", NULL};
enum { PRESET_SEED = 0, PRESET_QUICK, PRESET_ZOO, PRESET_ZOO_QUICK };
static const char *const torch_process_names[] = {"fork", "exec", NULL};

/* --routes: 1..TSR_BENCH_MAX_ROUTES known routes, none empty or named twice. */
static int opt_routes(const char *verb, const tsr_cli_opt *o, const char *text) {
  char **names;
  int n = tsr_cli_split_list(verb, o->name, text, TSR_BENCH_MAX_ROUTES, &names);
  if (n < 0) return -1;
  int bad = 0;
  for (int j = 0; j < n && !bad; j++) {
    if (!tsr__route_find(names[j])) {
      bad = 1;
      tsr_cli_usage_error(verb, "%s: '%s' is not one of tessera-gpu, hand, cublas, torch, "
                                "tessera-cpu, openblas, tessera-gpu-default, tessera-cpu-default, "
                                "cublas-tf32, torch-tf32", o->name, names[j]);
    }
    for (int k = 0; k < j && !bad; k++)
      if (!strcmp(names[j], names[k])) {
        bad = 1;
        tsr_cli_usage_error(verb, "%s: '%s' is named twice", o->name, names[j]);
      }
  }
  tsr_cli_list_free(names, n);
  if (bad) return -1;
  *(const char **)o->dest = text;
  return 0;
}

/* --shapes: a list of at most 1024 non-empty items (each checked later). */
static int opt_shapes(const char *verb, const tsr_cli_opt *o, const char *text) {
  char **items;
  int n = tsr_cli_split_list(verb, o->name, text, 1024, &items);
  if (n < 0) return -1;
  tsr_cli_list_free(items, n);
  *(const char **)o->dest = text;
  return 0;
}

/* --oracle-cache DIR|none (bench) or DIR|none (bench-run): NULL for none. */
static int opt_oracle_cache(const char *verb, const tsr_cli_opt *o, const char *text) {
  if (!*text) {
    tsr_cli_usage_error(verb, "%s: '' is not a directory (use none)", o->name);
    return -1;
  }
  *(const char **)o->dest = strcmp(text, "none") ? text : NULL;
  return 0;
}

static const char bench_usage[] =
    "usage: tessera bench (--preset seed|quick|zoo|zoo-quick | --shapes SHAPE,...) [options]\n"
    "\n"
    "Runs the measurement protocol (docs/protocol.md): every (round, shape, route)\n"
    "in its own process with a timeout; 2R rounds for R routes, rotated and\n"
    "reversed so every route holds every position equally often; every output of\n"
    "every round validated against the FP64 oracle. Writes DIR/results.json (raw,\n"
    "schema tessera-bench/3), DIR/report.md, DIR/tables.json and DIR/ratios_*.svg,\n"
    "then prints the tables.\n"
    "\n"
    "routes: tessera-gpu, hand, cublas, torch (GPU); tessera-cpu, openblas (CPU);\n"
    "cublas-tf32 and torch-tf32 (the TF32 class's peers, only when named).\n"
    "tessera-gpu and tessera-cpu take the tuning database's plan when it has one;\n"
    "tessera-gpu-default and tessera-cpu-default (only when named) take the built-in\n"
    "default plan, so one run replays tuned against default plans.\n"
    "Routes unavailable here are skipped with the reason recorded.\n"
    "\n";
static const char bench_footer[] =
    "test hooks (environment): TSR_BENCH_TEST_CRASH=route, TSR_BENCH_TEST_HANG=route,\n"
    "TSR_BENCH_TEST_CORRUPT=route make that route's child crash, hang, or return a wrong\n"
    "element; each must show up as a failed row while the run completes.\n"
    "\n"
    "exit: 0 every row valid, 1 some row failed (crash, timeout, error, invalid output),\n"
    "2 bad input, existing --out, a shape over --max-memory, or no route available\n";

/* tessera bench's options as parsed, before they become the run's config. */
typedef struct {
  tsr__bench_config c;
  const char *shapes;
  int preset, torch_process, no_progress, set_samples, set_sample_ms, set_warmup, set_batch;
  long long samples, sample_ms, warmup_ms, rounds, timeout, seed, threads, batch;
  double unstable;
} bench_args;

static void bench_defaults(bench_args *a) {
  memset(a, 0, sizeof *a);
  a->c.inputs = TSR_INPUTS_DYADIC;
  a->c.precision = TSR_PREC_AUTO;
  a->c.accuracy = TSR_INPUTS_RANDOM;
  a->c.oracle_cache = tsr__oracle_cache_default();
  a->c.progress = isatty(2);
  a->preset = -1;
  a->samples = 5;
  a->sample_ms = 20;
  a->warmup_ms = 100;
  a->timeout = 300;
  a->seed = 1;
  a->threads = (long long)sysconf(_SC_NPROCESSORS_ONLN);
  a->batch = 1;
  if (a->threads < 1) a->threads = 1;
  if (a->threads > 1024) a->threads = 1024;
  a->unstable = 0.10;
  a->c.alpha = 1.0f;
  a->c.beta = 0.0f;
}

/* argv against the option table, into a. TSR_CLI_CONTINUE or an exit code. */
static int bench_parse(bench_args *a, int argc, char **argv) {
  tsr__bench_config *c = &a->c;
  const tsr_cli_opt opts[] = {
      TSR_CLI_OPT_CUSTOM("--routes", opt_routes, &c->routes, "a,b,c",
                         "routes in base order (default: every route of the table)"),
      TSR_CLI_OPT_CHOICE("--preset", &a->preset, preset_names, "P",
                         "seed: the 14 seed shapes (128x128x61 ... 8192^3);\n"
                         "quick: 128x128x61, 256^3, 513x257x129, 1024^3 with\n"
                         "--samples 3 --sample-ms 10 --warmup-ms 50;\n"
                         "zoo: the 71 shapes of the shape zoo (tessera zoo, seed 1,\n"
                         "held-back part included), each with its own ops and batch;\n"
                         "zoo-quick: its 16-shape subset (tessera zoo --quick)"),
      TSR_CLI_OPT_CUSTOM("--shapes", opt_shapes, &a->shapes, "a,b,c",
                         "explicit shapes (instead of a preset), each [B*]MxNxK[:XY]:\n"
                         "B* its batch, :XY its op(A) op(B) (N or T each), e.g.\n"
                         "1024x1024x1024,96*512x512x64:NT,8x4096x4096:NT; a shape\n"
                         "without them takes --batch, --trans-a, --trans-b"),
      {.name = "--samples", .kind = TSR_CLI_INT, .dest = TSR_CLI_PTR_(long long, &a->samples), .lo = 1,
       .hi = 100000, .metavar = "N", .seen = &a->set_samples,
       .help = "samples per metric per row (default 5)"},
      {.name = "--sample-ms", .kind = TSR_CLI_INT, .dest = TSR_CLI_PTR_(long long, &a->sample_ms),
       .lo = 1, .hi = 600000, .metavar = "T", .seen = &a->set_sample_ms,
       .help = "batch samples fill about T ms (default 20)"},
      {.name = "--warmup-ms", .kind = TSR_CLI_INT, .dest = TSR_CLI_PTR_(long long, &a->warmup_ms),
       .lo = 0, .hi = 600000, .metavar = "T", .seen = &a->set_warmup,
       .help = "warm-up before timing (default 100)"},
      TSR_CLI_OPT_INT("--rounds", &a->rounds, 1, 10000, "N",
                      "rounds (default 2R; a multiple of 2R keeps the order balanced)"),
      TSR_CLI_OPT_INT("--timeout", &a->timeout, 1, 86400, "S",
                      "seconds per child process before it is killed (default 300)"),
      TSR_CLI_OPT_REAL("--max-seconds", &c->max_seconds, 0, 1e7, "S",
                       "start no round that would end past S seconds after the\n"
                       "run's start (as long as the longest round so far); the run\n"
                       "ends with the rounds done, recorded as stopped, once they\n"
                       "balance the order (default 0: every round)"),
      TSR_CLI_OPT_CUSTOM("--inputs", tsr_cli_opt_inputs, &c->inputs, "I",
                         "timing inputs: dyadic (default; exact), or random, normal,\n"
                         "wide (each route held to its precision mode's contract)"),
      TSR_CLI_OPT_INT("--seed", &a->seed, 0, 1LL << 53, "S", "seed of non-dyadic inputs (default 1)"),
      TSR_CLI_OPT_CUSTOM("--precision", tsr_cli_opt_precision, &c->precision, "P",
                         "mode of the tessera routes: auto (default), strict, fp32x3,\n"
                         "ozaki, tf32; peers keep their own (cublas and torch strict,\n"
                         "cublas-tf32 and torch-tf32 tf32)"),
      TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &c->accuracy, "I",
                         "each row's accuracy receipt: the route's contract on this\n"
                         "input family (random (default), normal, wide) or off;\n"
                         "a row that breaks it fails (docs/accuracy.md)"),
      TSR_CLI_OPT_REAL("--atol", &c->atol, 0, HUGE_VAL, "X",
                       "absolute tolerance of dyadic inputs (default 0: exact)"),
      TSR_CLI_OPT_REAL("--rtol", &c->rtol, 0, HUGE_VAL, "X",
                       "relative tolerance of dyadic inputs (default 0: exact)"),
      TSR_CLI_OPT_INT("--threads", &a->threads, 1, 1024, "N",
                      "CPU threads for tessera-cpu and openblas (default: online CPUs)"),
      {.name = "--batch", .kind = TSR_CLI_INT, .dest = TSR_CLI_PTR_(long long, &a->batch), .lo = 1,
       .hi = 65535, .metavar = "B", .seen = &a->set_batch,
       .help = "independent batch items of shapes without their own B* (default 1)"},
      TSR_CLI_OPT_FLAG("--trans-a", &c->trans_a, "op(A) = A^T for shapes without their own :XY"),
      TSR_CLI_OPT_FLAG("--trans-b", &c->trans_b, "op(B) = B^T for shapes without their own :XY"),
      TSR_CLI_OPT_FLOAT("--alpha", &c->alpha, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "A", "scalar (default 1)"),
      TSR_CLI_OPT_FLOAT("--beta", &c->beta, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "B", "scalar (default 0)"),
      TSR_CLI_OPT_REAL("--unstable-threshold", &a->unstable, 0, HUGE_VAL, "X",
                       "flag per-round p50 spread max/min-1 above X (default 0.10)"),
      TSR_CLI_OPT_CUSTOM("--max-memory", tsr_cli_opt_gib, &c->max_memory, "GIB",
                         "refuse (before any child) a shape × batch whose estimated host\n"
                         "memory in a measuring child exceeds GIB GiB (default: 80% of\n"
                         "physical memory; docs/protocol.md)"),
      {.name = "--out", .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, &c->out_dir),
       .flags = TSR_CLI_NONEMPTY, .metavar = "DIR",
       .help = "results directory (default results/<UTC timestamp>); refused\n"
               "with exit 2 when it already exists"},
      TSR_CLI_OPT_CUSTOM("--oracle-cache", opt_oracle_cache, &c->oracle_cache, "DIR",
                         "oracle cache (default ${XDG_CACHE_HOME:-~/.cache}/tessera/oracle;\n"
                         "'none' disables it)"),
      TSR_CLI_OPT_STRING("--torch-script", &c->torch_script, "PATH",
                         "torch_route.py (default: found from the executable / source tree)"),
      TSR_CLI_OPT_CHOICE("--torch-process", &a->torch_process, torch_process_names, "P",
                         "fork (default): one python3 imports torch once, without CUDA,\n"
                         "and forks a fresh process per torch row (own CUDA context);\n"
                         "exec: a new python3 per row (seconds more per row)"),
      TSR_CLI_OPT_FLAG("--no-progress", &a->no_progress,
                       "no progress line (it is shown only when stderr is a terminal)"),
  };
  const tsr_cli_spec spec = {
      .verb = "bench",
      .usage = bench_usage,
      .footer = bench_footer,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
  };
  return tsr_cli_parse(&spec, argc, argv);
}

/* The shapes of a preset (with its protocol defaults where not given) or of
 * --shapes into the config. 0, or an exit code after one usage line. */
static int bench_shapes(bench_args *a) {
  tsr__bench_config *c = &a->c;
  if (a->preset == PRESET_ZOO || a->preset == PRESET_ZOO_QUICK) {
    /* the zoo (seed 1, held-back part included; docs/zoo.md): every token
     * carries its own batch and ops, so the global ones do not apply */
    if (a->set_batch || c->trans_a || c->trans_b)
      return tsr_cli_usage_error("bench", "--preset %s: its shapes carry their own batch and ops; "
                                 "--batch, --trans-a and --trans-b do not apply",
                                 preset_names[a->preset]);
    int quick = a->preset == PRESET_ZOO_QUICK;
    c->preset = preset_names[a->preset];
    int n = tsr__zoo(1, quick, NULL, 0);
    tsr__zoo_shape *zs = calloc((size_t)n, sizeof *zs);
    c->shapes = calloc((size_t)n, sizeof *c->shapes);
    if (!zs || !c->shapes) {
      free(zs);
      return tsr_cli_usage_error("bench", "out of memory");
    }
    tsr__zoo(1, quick, zs, n);
    for (int i = 0; i < n; i++) c->shapes[c->nshapes++] = strdup(zs[i].label);
    free(zs);
  } else if (a->preset >= 0) {
    int quick = a->preset == PRESET_QUICK;
    c->preset = preset_names[a->preset];
    const char *const *list = quick ? preset_quick : preset_seed;
    c->nshapes = quick ? 4 : 14;
    c->shapes = malloc((size_t)c->nshapes * sizeof *c->shapes);
    for (int i = 0; i < c->nshapes; i++) c->shapes[i] = strdup(list[i]);
    if (quick) {
      if (!a->set_samples) c->samples = 3;
      if (!a->set_sample_ms) c->sample_ms = 10;
      if (!a->set_warmup) c->warmup_ms = 50;
    }
  } else {
    c->nshapes = tsr_cli_split_list("bench", "--shapes", a->shapes, 1024, &c->shapes);
    if (c->nshapes < 0) return TSR_EXIT_USAGE;
  }
  return 0;
}

/* Every shape a valid problem with the run's batch and ops, none named
 * twice. TSR_EXIT_OK, or TSR_EXIT_USAGE after one usage line. */
static int check_shapes(const tsr__bench_config *c) {
  const char *V = "bench";
  tsr_problem *ps = calloc((size_t)c->nshapes + 1, sizeof *ps);
  if (!ps) return tsr_cli_usage_error(V, "out of memory");
  int rc = TSR_EXIT_OK;
  for (int i = 0; i < c->nshapes && !rc; i++) {
    char msg[256];
    if (tsr__bench_shape_problem(c, i, &ps[i], msg, sizeof msg)) {
      rc = tsr_cli_usage_error(V, "--shapes: '%s': %s", c->shapes[i], msg);
      break;
    }
    /* the same problem twice, whether or not spelled alike ("64x64x64"
     * under --trans-a is "64x64x64:TN") */
    for (int j = 0; j < i && !rc; j++)
      if (ps[i].m == ps[j].m && ps[i].n == ps[j].n && ps[i].k == ps[j].k &&
          ps[i].batch == ps[j].batch && ps[i].op_a == ps[j].op_a && ps[i].op_b == ps[j].op_b)
        rc = !strcmp(c->shapes[i], c->shapes[j])
                 ? tsr_cli_usage_error(V, "--shapes: '%s' is named twice", c->shapes[i])
                 : tsr_cli_usage_error(V, "--shapes: '%s' is the problem of '%s'", c->shapes[i],
                                       c->shapes[j]);
  }
  free(ps);
  return rc;
}

int tsr_cli_bench(int argc, char **argv) {
  const char *V = "bench";
  bench_args a;
  bench_defaults(&a);
  int prc = bench_parse(&a, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  tsr__bench_config *c = &a.c;
  c->samples = (int)a.samples;
  c->sample_ms = (int)a.sample_ms;
  c->warmup_ms = (int)a.warmup_ms;
  c->rounds = (int)a.rounds;
  c->timeout_s = (int)a.timeout;
  c->seed = (uint64_t)a.seed;
  c->threads = (int)a.threads;
  c->batch = (int)a.batch;
  c->unstable_threshold = a.unstable;
  c->torch_exec = a.torch_process == 1;
  if (a.no_progress) c->progress = 0;
  if ((c->atol != 0.0 || c->rtol != 0.0) && c->inputs != TSR_INPUTS_DYADIC)
    return tsr_cli_usage_error(V, "--atol/--rtol: apply to dyadic inputs only; %s inputs are "
                                  "checked against each route's precision contract",
                               tsr_inputs_name(c->inputs));
  if (a.shapes && a.preset >= 0) return tsr_cli_usage_error(V, "--shapes: give either --shapes or --preset, not both");
  if (!a.shapes && a.preset < 0)
    return tsr_cli_usage_error(V, "no shapes: give --preset seed|quick|zoo|zoo-quick or --shapes MxNxK,...");
  if (bench_shapes(&a)) return TSR_EXIT_USAGE;
  int rc = check_shapes(c);
  if (rc) goto done;
#ifdef TSR_WITH_MPI
  /* every rank parsed the same line; the job deals the shapes out */
  if (!c->torch_script) c->torch_script = tsr__torch_script_default();
  c->argc = argc + 1;
  c->argv = argv - 1;
  rc = tsr_cli_bench_mpi(c);
  goto done;
#endif
  char defdir[128];
  if (!c->out_dir) {
    char ts[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(defdir, sizeof defdir, "results/%s", ts);
    c->out_dir = defdir;
  }
  if (!c->torch_script) c->torch_script = tsr__torch_script_default();
  c->argc = argc + 1;
  c->argv = argv - 1; /* include the program name */
  rc = tsr__bench_run(c);
done:
  for (int i = 0; i < c->nshapes; i++) free(c->shapes[i]);
  free(c->shapes);
  return rc;
}

/* ---- hidden child verb -------------------------------------------------- */
int tsr_cli_bench_run(int argc, char **argv) {
  const char *V = "bench-run";
  tsr__run_params rp;
  memset(&rp, 0, sizeof rp);
  tsr_problem_init(&rp.problem, 1, 1, 1);
  rp.inputs = TSR_INPUTS_DYADIC;
  rp.seed = 1;
  rp.samples = 5;
  rp.sample_ms = 20;
  rp.warmup_ms = 100;
  rp.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  rp.atol = rp.rtol = 0.0;
  rp.precision = TSR_PREC_AUTO;
  rp.accuracy = TSR_INPUTS_RANDOM;
  rp.accuracy_seed = 1;
  rp.oracle_cache = NULL;
  rp.work_dir = "/tmp";
  const char *probe = NULL, *route = NULL, *shape = NULL;
  int oracle_only = 0;
  long long fd = -1, batch = 1, seed = 1, samples = 5, sample_ms = 20, warmup_ms = 100,
            threads = (long long)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 1) threads = 1;
  if (threads > 1024) threads = 1024;
  int ta = 0, tb = 0;
  const tsr_cli_opt opts[] = {
      TSR_CLI_OPT_STRING("--probe", &probe, "ROUTE", "report whether ROUTE is available here"),
      TSR_CLI_OPT_STRING("--route", &route, "ROUTE", "the route to measure"),
      TSR_CLI_OPT_FLAG("--oracle-only", &oracle_only,
                       "compute (or verify) the cached oracles of the shape only"),
      TSR_CLI_OPT_STRING("--shape", &shape, "[B*]MxNxK[:XY]",
                         "the problem's extents (a bench shape token; its batch and ops,\n"
                         "when it has them, must match --batch/--trans-a/--trans-b)"),
      TSR_CLI_OPT_INT("--batch", &batch, 1, 65535, "B", "independent batch items (default 1)"),
      TSR_CLI_OPT_FLAG("--trans-a", &ta, "op(A) = A^T"),
      TSR_CLI_OPT_FLAG("--trans-b", &tb, "op(B) = B^T"),
      TSR_CLI_OPT_FLOAT("--alpha", &rp.problem.alpha, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "A",
                        "scalar (default 1)"),
      TSR_CLI_OPT_FLOAT("--beta", &rp.problem.beta, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "B",
                        "scalar (default 0)"),
      TSR_CLI_OPT_CUSTOM("--inputs", tsr_cli_opt_inputs, &rp.inputs, "I",
                         "timing inputs (default dyadic)"),
      TSR_CLI_OPT_INT("--seed", &seed, 0, 1LL << 53, "S", "seed of non-dyadic inputs (default 1)"),
      TSR_CLI_OPT_CUSTOM("--precision", tsr_cli_opt_precision, &rp.precision, "P",
                         "mode of the routes that follow the bench's (default auto)"),
      TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &rp.accuracy, "I",
                         "family of the accuracy receipt (default random), or off"),
      TSR_CLI_OPT_INT("--samples", &samples, 1, 100000, "N", "samples per metric (default 5)"),
      TSR_CLI_OPT_INT("--sample-ms", &sample_ms, 1, 600000, "T",
                      "batch samples fill about T ms (default 20)"),
      TSR_CLI_OPT_INT("--warmup-ms", &warmup_ms, 0, 600000, "T", "warm-up (default 100)"),
      TSR_CLI_OPT_INT("--threads", &threads, 1, 1024, "N", "CPU threads (default: online CPUs)"),
      TSR_CLI_OPT_REAL("--atol", &rp.atol, 0, HUGE_VAL, "X", "absolute tolerance of dyadic inputs"),
      TSR_CLI_OPT_REAL("--rtol", &rp.rtol, 0, HUGE_VAL, "X", "relative tolerance of dyadic inputs"),
      TSR_CLI_OPT_CUSTOM("--oracle-cache", opt_oracle_cache, &rp.oracle_cache, "DIR",
                         "oracle cache, or none (default none)"),
      TSR_CLI_OPT_STRING("--work-dir", &rp.work_dir, "DIR", "scratch files (default /tmp)"),
      TSR_CLI_OPT_STRING("--torch-script", &rp.torch_script, "PATH", "torch_route.py"),
      TSR_CLI_OPT_STRING("--torch-zygote", &rp.torch_zygote, "SOCKET",
                         "fork torch rows from this zygote (default: exec python3)"),
      TSR_CLI_OPT_INT("--result-fd", &fd, 0, 1 << 20, "FD",
                      "write the result to this open descriptor (default stdout)"),
  };
  const tsr_cli_spec spec = {
      .verb = V,
      .usage = "usage: tessera bench-run (--probe ROUTE | --route ROUTE --shape MxNxK [options] |\n"
               "                          --oracle-only --shape MxNxK [options])\n"
               "Internal: one measurement of `tessera bench` in its own process; writes one JSON\n"
               "object (schema tessera-bench-row/3) to --result-fd (default stdout).\n\n",
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
  };
  int prc = tsr_cli_parse(&spec, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  rp.seed = (uint64_t)seed;
  rp.samples = (int)samples;
  rp.sample_ms = (int)sample_ms;
  rp.warmup_ms = (int)warmup_ms;
  rp.threads = (int)threads;
  if (!rp.torch_script) rp.torch_script = tsr__torch_script_default();
  int out = fd >= 0 ? (int)fd : 1;
  /* Nothing this process starts (python3) may hold the result pipe open. */
  if (fd >= 0 && fcntl(out, F_SETFD, FD_CLOEXEC) != 0)
    return tsr_cli_usage_error(V, "--result-fd: '%lld' is not an open descriptor", fd);
  json_t *res;
  if (probe) {
    const tsr__route *rt = tsr__route_find(probe);
    if (!rt) return tsr_cli_usage_error(V, "--probe: '%s' is not a route", probe);
    res = tsr__run_probe(rt, rp.torch_script);
  } else {
    if (!shape || (!route && !oracle_only))
      return tsr_cli_usage_error(V, "--shape and --route (or --oracle-only) are required");
    rp.route = route ? tsr__route_find(route) : NULL;
    if (route && !rp.route) return tsr_cli_usage_error(V, "--route: '%s' is not a route", route);
    tsr__shape_token t;
    char msg[256];
    if (tsr__shape_token_parse(shape, &t, msg, sizeof msg))
      return tsr_cli_usage_error(V, "--shape: '%s': %s", shape, msg);
    /* the token's own batch and ops must be what the flags say */
    if ((t.has_batch && t.batch != batch) ||
        (t.has_ops && (t.op_a != (ta ? TSR_OP_T : TSR_OP_N) || t.op_b != (tb ? TSR_OP_T : TSR_OP_N))))
      return tsr_cli_usage_error(V, "--shape: '%s' disagrees with --batch/--trans-a/--trans-b", shape);
    float alpha = rp.problem.alpha, beta = rp.problem.beta;
    tsr_problem_init(&rp.problem, t.m, t.n, t.k);
    rp.problem.batch = batch;
    rp.problem.op_a = ta ? TSR_OP_T : TSR_OP_N;
    rp.problem.op_b = tb ? TSR_OP_T : TSR_OP_N;
    rp.problem.alpha = alpha;
    rp.problem.beta = beta;
    snprintf(rp.shape_label, sizeof rp.shape_label, "%s", shape);
    if (oracle_only) {
      res = tsr__run_oracle(&rp.problem, rp.inputs, rp.seed, rp.oracle_cache);
      if (rp.accuracy >= 0) /* the accuracy receipts' oracle too */
        json_object_set_new(res, "accuracy",
                            tsr__run_oracle(&rp.problem, (tsr_inputs)rp.accuracy,
                                            rp.accuracy_seed, rp.oracle_cache));
    } else {
      res = tsr__run_measure(&rp);
    }
  }
  int rc = json_dumpfd(res, out, JSON_COMPACT | JSON_REAL_PRECISION(17)) == 0 ? TSR_EXIT_OK : TSR_EXIT_FAIL;
  json_decref(res);
  return rc;
}
