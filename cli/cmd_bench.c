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

static const char *const preset_seed[] = {
    "128x128x61",   "512x512x512",    "1024x1024x1024", "1024x1024x1537", "2049x4097x1025",
    "4096x4096x4096", "4096x4096x11008", "8192x8192x8192", "32x32x32",       "128x128x128",
    "256x1024x128", "1024x128x256",   "127x193x61",     "513x257x129"};
static const char *const preset_quick[] = {"128x128x61", "256x256x256", "513x257x129",
                                           "1024x1024x1024"};

static void print_help(void) {
  printf(
      "usage: tessera bench (--preset seed|quick | --shapes MxNxK,...) [options]\n"
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
      "\n"
      "  --routes a,b,c        routes in base order (default: every route of the table)\n"
      "  --preset P            seed: the 14 seed shapes (128x128x61 ... 8192^3);\n"
      "                        quick: 128x128x61, 256^3, 513x257x129, 1024^3 with\n"
      "                        --samples 3 --sample-ms 10 --warmup-ms 50\n"
      "  --shapes a,b,c        explicit MxNxK shapes (instead of a preset)\n"
      "  --samples N           samples per metric per row (default 5)\n"
      "  --sample-ms T         batch samples fill about T ms (default 20)\n"
      "  --warmup-ms T         warm-up before timing (default 100)\n"
      "  --rounds N            rounds (default 2R; a multiple of 2R keeps the order balanced)\n"
      "  --timeout S           seconds per child process before it is killed (default 300)\n"
      "  --inputs I            timing inputs: dyadic (default; exact), or random, normal,\n"
      "                        wide (each route held to its precision mode's contract)\n"
      "  --seed S              seed of non-dyadic inputs (default 1)\n"
      "  --precision P         mode of the tessera routes: auto (default), strict, fp32x3,\n"
      "                        tf32; peers keep their own (cublas and torch strict,\n"
      "                        cublas-tf32 and torch-tf32 tf32)\n"
      "  --accuracy I          each row's accuracy receipt: the route's contract on this\n"
      "                        input family (random (default), normal, wide) or off;\n"
      "                        a row that breaks it fails (docs/accuracy.md)\n"
      "  --atol X --rtol X     tolerances of dyadic inputs (default 0: exact)\n"
      "  --threads N           CPU threads for tessera-cpu and openblas (default: online CPUs)\n"
      "  --batch B --trans-a --trans-b --alpha A --beta B   the problem (default 1, N, N, 1, 0)\n"
      "  --unstable-threshold X  flag per-round p50 spread max/min-1 above X (default 0.10)\n"
      "  --out DIR             results directory (default results/<UTC timestamp>); refused\n"
      "                        with exit 2 when it already exists\n"
      "  --oracle-cache DIR    oracle cache (default ${XDG_CACHE_HOME:-~/.cache}/tessera/oracle;\n"
      "                        'none' disables it)\n"
      "  --torch-script PATH   torch_route.py (default: found from the executable / source tree)\n"
      "  --torch-process P     fork (default): one python3 imports torch once, without CUDA,\n"
      "                        and forks a fresh process per torch row (own CUDA context);\n"
      "                        exec: a new python3 per row (seconds more per row)\n"
      "  --no-progress         no progress line (it is shown only when stderr is a terminal)\n"
      "\n"
      "test hooks (environment): TSR_BENCH_TEST_CRASH=route, TSR_BENCH_TEST_HANG=route,\n"
      "TSR_BENCH_TEST_CORRUPT=route make that route's child crash, hang, or return a wrong\n"
      "element; each must show up as a failed row while the run completes.\n"
      "\n"
      "exit: 0 every row valid, 1 some row failed (crash, timeout, error, invalid output),\n"
      "2 bad input, existing --out, or no route available\n");
}

static int parse_double(const char *verb, const char *name, const char *text, double lo,
                        double *out) {
  char *end;
  double v = strtod(text, &end);
  if (!*text || *end || !isfinite(v) || v < lo) {
    tsr_cli_usage_error(verb, "%s: '%s' is not a finite number >= %g", name, text, lo);
    return -1;
  }
  *out = v;
  return 0;
}

/* --accuracy: a non-dyadic family, or off (-1); -2 after a usage error. */
static int parse_accuracy(const char *verb, const char *text) {
  if (!strcmp(text, "off")) return -1;
  tsr_inputs k;
  char msg[256];
  if (tsr_inputs_parse(text, &k, msg, sizeof msg) || k == TSR_INPUTS_DYADIC) {
    tsr_cli_usage_error(verb, "--accuracy: '%s' is not random, normal, wide or off", text);
    return -2;
  }
  return (int)k;
}

static int split_list(const char *text, char ***out) {
  char *copy = strdup(text), *save = NULL;
  int n = 0;
  char **v = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    v = realloc(v, (size_t)(n + 1) * sizeof *v);
    v[n++] = strdup(t);
  }
  free(copy);
  *out = v;
  return n;
}

int tsr_cli_bench(int argc, char **argv) {
  const char *V = "bench";
  tsr__bench_config c;
  memset(&c, 0, sizeof c);
  c.batch = 1;
  c.alpha = 1.0f;
  c.inputs = TSR_INPUTS_DYADIC;
  c.seed = 1;
  c.samples = 5;
  c.sample_ms = 20;
  c.warmup_ms = 100;
  c.timeout_s = 300;
  c.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  c.atol = c.rtol = 0.0;
  c.accuracy = TSR_INPUTS_RANDOM;
  c.unstable_threshold = 0.10;
  c.oracle_cache = tsr__oracle_cache_default();
  c.progress = isatty(2);
  const char *shapes = NULL, *preset = NULL;
  int set_samples = 0, set_sample_ms = 0, set_warmup = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      print_help();
      return TSR_EXIT_OK;
    }
    if (!strcmp(a, "--trans-a")) { c.trans_a = 1; continue; }
    if (!strcmp(a, "--trans-b")) { c.trans_b = 1; continue; }
    if (!strcmp(a, "--no-progress")) { c.progress = 0; continue; }
    if (strncmp(a, "--", 2)) return tsr_cli_usage_error(V, "unexpected argument '%s'", a);
    if (i + 1 >= argc) return tsr_cli_usage_error(V, "%s: needs a value", a);
    const char *v = argv[++i];
    long long x;
    double d;
    if (!strcmp(a, "--routes")) {
      char **names;
      int n = split_list(v, &names);
      int bad = n == 0 || n > TSR_BENCH_MAX_ROUTES;
      for (int j = 0; j < n; j++) {
        if (!bad && !tsr__route_find(names[j])) {
          bad = 1;
          tsr_cli_usage_error(V, "--routes: '%s' is not one of tessera-gpu, hand, cublas, torch, "
                                 "tessera-cpu, openblas, tessera-gpu-default, tessera-cpu-default, "
                                 "cublas-tf32, torch-tf32", names[j]);
        }
        for (int k = 0; k < j && !bad; k++)
          if (!strcmp(names[j], names[k])) {
            bad = 1;
            tsr_cli_usage_error(V, "--routes: '%s' is named twice", names[j]);
          }
      }
      for (int j = 0; j < n; j++) free(names[j]);
      free(names);
      if (bad) {
        if (n == 0 || n > TSR_BENCH_MAX_ROUTES) tsr_cli_usage_error(V, "--routes: '%s' is not a list of 1..%d routes", v, TSR_BENCH_MAX_ROUTES);
        return TSR_EXIT_USAGE;
      }
      c.routes = v;
    } else if (!strcmp(a, "--preset")) {
      if (strcmp(v, "seed") && strcmp(v, "quick"))
        return tsr_cli_usage_error(V, "--preset: '%s' is not seed or quick", v);
      preset = v;
    } else if (!strcmp(a, "--shapes")) {
      shapes = v;
    } else if (!strcmp(a, "--samples")) {
      if (tsr_cli_parse_int(V, a, v, 1, 100000, &x)) return TSR_EXIT_USAGE;
      c.samples = (int)x, set_samples = 1;
    } else if (!strcmp(a, "--sample-ms")) {
      if (tsr_cli_parse_int(V, a, v, 1, 600000, &x)) return TSR_EXIT_USAGE;
      c.sample_ms = (int)x, set_sample_ms = 1;
    } else if (!strcmp(a, "--warmup-ms")) {
      if (tsr_cli_parse_int(V, a, v, 0, 600000, &x)) return TSR_EXIT_USAGE;
      c.warmup_ms = (int)x, set_warmup = 1;
    } else if (!strcmp(a, "--rounds")) {
      if (tsr_cli_parse_int(V, a, v, 1, 10000, &x)) return TSR_EXIT_USAGE;
      c.rounds = (int)x;
    } else if (!strcmp(a, "--timeout")) {
      if (tsr_cli_parse_int(V, a, v, 1, 86400, &x)) return TSR_EXIT_USAGE;
      c.timeout_s = (int)x;
    } else if (!strcmp(a, "--inputs")) {
      if (tsr_cli_parse_inputs(V, v, &c.inputs)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--precision")) {
      if (tsr_cli_parse_precision(V, v, &c.precision)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--accuracy")) {
      if ((c.accuracy = parse_accuracy(V, v)) == -2) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--seed")) {
      if (tsr_cli_parse_int(V, a, v, 0, (1LL << 53), &x)) return TSR_EXIT_USAGE;
      c.seed = (uint64_t)x;
    } else if (!strcmp(a, "--threads")) {
      if (tsr_cli_parse_int(V, a, v, 1, 1024, &x)) return TSR_EXIT_USAGE;
      c.threads = (int)x;
    } else if (!strcmp(a, "--batch")) {
      if (tsr_cli_parse_int(V, a, v, 1, 1 << 20, &x)) return TSR_EXIT_USAGE;
      c.batch = (int)x;
    } else if (!strcmp(a, "--alpha")) {
      if (tsr_cli_parse_float(V, a, v, &c.alpha)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--beta")) {
      if (tsr_cli_parse_float(V, a, v, &c.beta)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--atol")) {
      if (parse_double(V, a, v, 0, &c.atol)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--rtol")) {
      if (parse_double(V, a, v, 0, &c.rtol)) return TSR_EXIT_USAGE;
    } else if (!strcmp(a, "--unstable-threshold")) {
      if (parse_double(V, a, v, 0, &d)) return TSR_EXIT_USAGE;
      c.unstable_threshold = d;
    } else if (!strcmp(a, "--out")) {
      if (!*v) return tsr_cli_usage_error(V, "--out: '' is not a directory name");
      c.out_dir = v;
    } else if (!strcmp(a, "--oracle-cache")) {
      if (!*v) return tsr_cli_usage_error(V, "--oracle-cache: '' is not a directory (use none)");
      c.oracle_cache = strcmp(v, "none") ? v : NULL;
    } else if (!strcmp(a, "--torch-script")) {
      c.torch_script = v;
    } else if (!strcmp(a, "--torch-process")) {
      if (strcmp(v, "fork") && strcmp(v, "exec"))
        return tsr_cli_usage_error(V, "--torch-process: '%s' is not fork or exec", v);
      c.torch_exec = !strcmp(v, "exec");
    } else {
      return tsr_cli_usage_error(V, "unknown option '%s' (tessera bench --help)", a);
    }
  }
  if ((c.atol != 0.0 || c.rtol != 0.0) && c.inputs != TSR_INPUTS_DYADIC)
    return tsr_cli_usage_error(V, "--atol/--rtol: apply to dyadic inputs only; %s inputs are "
                                  "checked against each route's precision contract",
                               tsr_inputs_name(c.inputs));
  if (shapes && preset) return tsr_cli_usage_error(V, "--shapes: give either --shapes or --preset, not both");
  if (!shapes && !preset)
    return tsr_cli_usage_error(V, "no shapes: give --preset seed|quick or --shapes MxNxK,...");
  if (preset) {
    int quick = !strcmp(preset, "quick");
    c.preset = preset;
    const char *const *list = quick ? preset_quick : preset_seed;
    c.nshapes = quick ? 4 : 14;
    c.shapes = malloc((size_t)c.nshapes * sizeof *c.shapes);
    for (int i = 0; i < c.nshapes; i++) c.shapes[i] = strdup(list[i]);
    if (quick) {
      if (!set_samples) c.samples = 3;
      if (!set_sample_ms) c.sample_ms = 10;
      if (!set_warmup) c.warmup_ms = 50;
    }
  } else {
    c.nshapes = split_list(shapes, &c.shapes);
    if (c.nshapes == 0) return tsr_cli_usage_error(V, "--shapes: '%s' names no shape", shapes);
  }
  int rc = TSR_EXIT_OK;
  for (int i = 0; i < c.nshapes; i++) {
    int64_t m, n, k;
    char msg[256];
    if (tsr_shape_parse(c.shapes[i], &m, &n, &k, msg, sizeof msg))
      { rc = tsr_cli_usage_error(V, "--shapes: '%s': %s", c.shapes[i], msg); goto done; }
    tsr_problem p;
    tsr_problem_init(&p, m, n, k);
    p.batch = c.batch;
    p.op_a = c.trans_a ? TSR_OP_T : TSR_OP_N;
    p.op_b = c.trans_b ? TSR_OP_T : TSR_OP_N;
    if (tsr_problem_check(&p, msg, sizeof msg))
      { rc = tsr_cli_usage_error(V, "--shapes: '%s': %s", c.shapes[i], msg); goto done; }
    for (int j = 0; j < i; j++)
      if (!strcmp(c.shapes[i], c.shapes[j]))
        { rc = tsr_cli_usage_error(V, "--shapes: '%s' is named twice", c.shapes[i]); goto done; }
  }
  char defdir[128];
  if (!c.out_dir) {
    char ts[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(defdir, sizeof defdir, "results/%s", ts);
    c.out_dir = defdir;
  }
  if (!c.torch_script) c.torch_script = tsr__torch_script_default();
  c.argc = argc + 1;
  c.argv = argv - 1; /* include the program name */
  rc = tsr__bench_run(&c);
done:
  for (int i = 0; i < c.nshapes; i++) free(c.shapes[i]);
  free(c.shapes);
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
  long long fd = -1, batch = 1;
  int ta = 0, tb = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long long x;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: tessera bench-run (--probe ROUTE | --route ROUTE --shape MxNxK [options] |\n"
             "                          --oracle-only --shape MxNxK [options])\n"
             "Internal: one measurement of `tessera bench` in its own process; writes one JSON\n"
             "object (schema tessera-bench-row/2) to --result-fd (default stdout). Options as\n"
             "tessera bench: --batch --trans-a --trans-b --alpha --beta --inputs --seed\n"
             "--precision --accuracy --samples\n"
             "--sample-ms --warmup-ms --threads --atol --rtol --oracle-cache DIR|none --work-dir DIR\n"
             "--torch-script PATH --torch-zygote SOCKET.\n");
      return TSR_EXIT_OK;
    }
    if (!strcmp(a, "--trans-a")) { ta = 1; continue; }
    if (!strcmp(a, "--trans-b")) { tb = 1; continue; }
    if (!strcmp(a, "--oracle-only")) { oracle_only = 1; continue; }
    if (i + 1 >= argc) return tsr_cli_usage_error(V, "%s: needs a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--probe")) probe = v;
    else if (!strcmp(a, "--route")) route = v;
    else if (!strcmp(a, "--shape")) shape = v;
    else if (!strcmp(a, "--batch")) { if (tsr_cli_parse_int(V, a, v, 1, 1 << 20, &batch)) return 2; }
    else if (!strcmp(a, "--alpha")) { if (tsr_cli_parse_float(V, a, v, &rp.problem.alpha)) return 2; }
    else if (!strcmp(a, "--beta")) { if (tsr_cli_parse_float(V, a, v, &rp.problem.beta)) return 2; }
    else if (!strcmp(a, "--inputs")) { if (tsr_cli_parse_inputs(V, v, &rp.inputs)) return 2; }
    else if (!strcmp(a, "--precision")) { if (tsr_cli_parse_precision(V, v, &rp.precision)) return 2; }
    else if (!strcmp(a, "--accuracy")) { if ((rp.accuracy = parse_accuracy(V, v)) == -2) return 2; }
    else if (!strcmp(a, "--seed")) { if (tsr_cli_parse_int(V, a, v, 0, 1LL << 53, &x)) return 2; rp.seed = (uint64_t)x; }
    else if (!strcmp(a, "--samples")) { if (tsr_cli_parse_int(V, a, v, 1, 100000, &x)) return 2; rp.samples = (int)x; }
    else if (!strcmp(a, "--sample-ms")) { if (tsr_cli_parse_int(V, a, v, 1, 600000, &x)) return 2; rp.sample_ms = (int)x; }
    else if (!strcmp(a, "--warmup-ms")) { if (tsr_cli_parse_int(V, a, v, 0, 600000, &x)) return 2; rp.warmup_ms = (int)x; }
    else if (!strcmp(a, "--threads")) { if (tsr_cli_parse_int(V, a, v, 1, 1024, &x)) return 2; rp.threads = (int)x; }
    else if (!strcmp(a, "--atol")) { if (parse_double(V, a, v, 0, &rp.atol)) return 2; }
    else if (!strcmp(a, "--rtol")) { if (parse_double(V, a, v, 0, &rp.rtol)) return 2; }
    else if (!strcmp(a, "--oracle-cache")) rp.oracle_cache = strcmp(v, "none") ? v : NULL;
    else if (!strcmp(a, "--work-dir")) rp.work_dir = v;
    else if (!strcmp(a, "--torch-script")) rp.torch_script = v;
    else if (!strcmp(a, "--torch-zygote")) rp.torch_zygote = v;
    else if (!strcmp(a, "--result-fd")) { if (tsr_cli_parse_int(V, a, v, 0, 1 << 20, &fd)) return 2; }
    else return tsr_cli_usage_error(V, "unknown option '%s'", a);
  }
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
    int64_t m, n, k;
    char msg[256];
    if (tsr_shape_parse(shape, &m, &n, &k, msg, sizeof msg))
      return tsr_cli_usage_error(V, "--shape: '%s': %s", shape, msg);
    float alpha = rp.problem.alpha, beta = rp.problem.beta;
    tsr_problem_init(&rp.problem, m, n, k);
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
