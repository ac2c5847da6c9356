/* The bench orchestrator: discovers routes, runs every (round, shape, route)
 * measurement in its own child process (/proc/self/exe with the hidden verb
 * bench-run, started by sys/spawn.h) under a timeout, records the realized
 * order and every row, and writes the raw document atomically after each
 * row. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "sys/clock.h"
#include "sys/spawn.h"
#include "core/hash.h"
#include "measure/zoo.h"


typedef struct {
  json_t *result; /* parsed JSON from fd 3, NULL if none */
  int exited, code, signaled, sig, timed_out;
  int64_t wall_ns;
} child_out;

/* Runs `/proc/self/exe argv...` in its own process group (dying with this
 * process) with fd 3 as the result pipe, stdin from /dev/null and
 * stdout/stderr appended to log_path. On timeout the whole group is killed;
 * whatever the child left in its group is killed when it exits. */
static void run_child(char *const argv[], int timeout_s, const char *log_path, child_out *co) {
  memset(co, 0, sizeof *co);
  int64_t t0 = tsr__now_ns();
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) return;
  int logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
  tsr__spawn_fd fds[4];
  int nfds = 0;
  if (nul >= 0) fds[nfds++] = (tsr__spawn_fd){nul, 0};
  if (logfd >= 0) { /* else the child writes where this process does */
    fds[nfds++] = (tsr__spawn_fd){logfd, 1};
    fds[nfds++] = (tsr__spawn_fd){logfd, 2};
  }
  fds[nfds++] = (tsr__spawn_fd){pfd[1], 3};
  tsr__spawn_opts o = {.file = "/proc/self/exe", .argv = argv, .fds = fds, .nfds = nfds,
                       .new_group = 1, .die_with_parent = 1};
  tsr__proc proc;
  char msg[512];
  int sp = tsr__spawn(&o, &proc, msg, sizeof msg);
  close(pfd[1]);
  if (nul >= 0) close(nul);
  if (logfd >= 0) close(logfd);
  if (sp != TSR__SPAWN_OK) {
    close(pfd[0]);
    if (sp == TSR__SPAWN_NOEXEC) { /* recorded as the child's _exit(127) was */
      co->exited = 1;
      co->code = 127;
      co->wall_ns = tsr__now_ns() - t0;
    }
    return;
  }
  tsr__spawn_capture cap = {.fd = pfd[0]};
  tsr__spawn_result r;
  tsr__spawn_wait(&proc, proc.t0_ns + (int64_t)timeout_s * 1000000000, 0, &cap, &r);
  co->exited = r.exited;
  co->code = r.code;
  co->signaled = r.signaled;
  co->sig = r.sig;
  co->timed_out = r.timed_out;
  co->wall_ns = r.wall_ns;
  json_error_t jerr;
  if (cap.len) co->result = json_loads(cap.buf, 0, &jerr);
  free(cap.buf);
}

/* Keep only logs that say something. Returns 1 when the log was kept. */
static int drop_empty_log(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && st.st_size == 0) {
    unlink(path);
    return 0;
  }
  return 1;
}

static json_t *tail_of_file(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return json_string("");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  long from = size > (long)max ? size - (long)max : 0;
  fseek(f, from, SEEK_SET);
  char *buf = calloc(max + 1, 1);
  size_t got = fread(buf, 1, max, f);
  fclose(f);
  buf[got] = '\0';
  for (size_t i = 0; i < got; i++) { /* logs are ASCII; keep the JSON valid anyway */
    unsigned char ch = (unsigned char)buf[i];
    if (ch >= 0x80 || (ch < 0x20 && ch != '\n' && ch != '\t')) buf[i] = '?';
  }
  json_t *s = json_stringn(buf, got);
  free(buf);
  return s;
}

static int mkdir_parents(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  char *last = strrchr(tmp, '/');
  if (!last || last == tmp) return 0;
  *last = '\0';
  for (char *s = tmp + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
      *s = '/';
    }
  return (mkdir(tmp, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

/* One run's state, shared by its phases (tsr__bench_run). */
typedef struct {
  const tsr__bench_config *cfg;
  json_t *doc;
  char results_path[4200];
  char logs[4200], work[4200];
  json_t *proto, *art, *jexe; /* parts of doc that later phases fill in */
  char exe[4096], exe_sha[65];
  const tsr__route *measured[TSR_BENCH_MAX_ROUTES];
  int R, S, rounds;
  int rounds_run; /* rounds measured: rounds, or fewer when --max-seconds stopped the run */
  int64_t t_start; /* the run's start (--max-seconds counts from it) */
  int *ro, *so; /* the design: each round's route and shape order */
  json_t *order, *realized;
  tsr__torch_zygote zy;
  const char *zsock;
  char link[65]; /* the hash chain's head */
  tsr__order_entry *seq;
  size_t nseq;
  int failed;
  int64_t t0;
} run_state;

static void save(run_state *s) {
  char msg[512];
  if (tsr__json_write_atomic(s->doc, s->results_path, msg, sizeof msg))
    fprintf(stderr, "tessera bench: %s\n", msg);
}

enum { CHILD_MEASURE = 0, CHILD_PROBE = 1, CHILD_ORACLE = 2 };

int tsr__bench_shape_problem(const tsr__bench_config *cfg, int i, tsr_problem *p, char *msg,
                             size_t cap) {
  tsr__shape_token t;
  if (tsr__shape_token_parse(cfg->shapes[i], &t, msg, cap)) return -1;
  tsr_problem_init(p, t.m, t.n, t.k);
  p->batch = t.has_batch ? t.batch : cfg->batch;
  p->op_a = t.has_ops ? t.op_a : cfg->trans_a ? TSR_OP_T : TSR_OP_N;
  p->op_b = t.has_ops ? t.op_b : cfg->trans_b ? TSR_OP_T : TSR_OP_N;
  p->alpha = cfg->alpha;
  p->beta = cfg->beta;
  return tsr_problem_check(p, msg, cap) ? -1 : 0;
}

/* The child's command line; shape is the index of the shape in cfg (-1 for
 * a probe): its token, and its resolved batch and ops, which the child's
 * own parse of the token agrees with. */
static char **child_argv(const tsr__bench_config *cfg, const char *route, int si,
                         const char *work_dir, int mode, const char *zygote) {
  int probe = mode == CHILD_PROBE;
  char **v = calloc(64, sizeof *v);
  int i = 0;
  v[i++] = strdup("tessera");
  v[i++] = strdup("bench-run");
  if (probe) {
    v[i++] = strdup("--probe");
    v[i++] = strdup(route);
  } else {
    if (mode == CHILD_ORACLE) {
      v[i++] = strdup("--oracle-only");
    } else {
      v[i++] = strdup("--route");
      v[i++] = strdup(route);
    }
    tsr_problem p;
    tsr_problem_init(&p, 1, 1, 1);
    tsr__bench_shape_problem(cfg, si, &p, NULL, 0); /* checked before any child */
    v[i++] = strdup("--shape");
    v[i++] = strdup(cfg->shapes[si]);
    v[i++] = strdup("--batch");
    v[i++] = fmt("%lld", (long long)p.batch);
    if (p.op_a == TSR_OP_T) v[i++] = strdup("--trans-a");
    if (p.op_b == TSR_OP_T) v[i++] = strdup("--trans-b");
    v[i++] = strdup("--alpha");
    v[i++] = fmt("%.9g", (double)cfg->alpha);
    v[i++] = strdup("--beta");
    v[i++] = fmt("%.9g", (double)cfg->beta);
    v[i++] = strdup("--inputs");
    v[i++] = strdup(tsr_inputs_name(cfg->inputs));
    v[i++] = strdup("--precision");
    v[i++] = strdup(tsr_precision_name(cfg->precision));
    v[i++] = strdup("--accuracy");
    v[i++] = strdup(cfg->accuracy >= 0 ? tsr_inputs_name((tsr_inputs)cfg->accuracy) : "off");
    v[i++] = strdup("--seed");
    v[i++] = fmt("%" PRIu64, cfg->seed);
    v[i++] = strdup("--samples");
    v[i++] = fmt("%d", cfg->samples);
    v[i++] = strdup("--sample-ms");
    v[i++] = fmt("%d", cfg->sample_ms);
    v[i++] = strdup("--warmup-ms");
    v[i++] = fmt("%d", cfg->warmup_ms);
    v[i++] = strdup("--threads");
    v[i++] = fmt("%d", cfg->threads);
    v[i++] = strdup("--atol");
    v[i++] = fmt("%.17g", cfg->atol);
    v[i++] = strdup("--rtol");
    v[i++] = fmt("%.17g", cfg->rtol);
    v[i++] = strdup("--oracle-cache");
    v[i++] = strdup(cfg->oracle_cache ? cfg->oracle_cache : "none");
    v[i++] = strdup("--work-dir");
    v[i++] = strdup(work_dir);
  }
  v[i++] = strdup("--torch-script");
  v[i++] = strdup(cfg->torch_script);
  if (zygote && route && tsr__route_find(route)->kind == TSR_ROUTE_TORCH) {
    v[i++] = strdup("--torch-zygote");
    v[i++] = strdup(zygote);
  }
  v[i++] = strdup("--result-fd");
  v[i++] = strdup("3");
  v[i] = NULL;
  return v;
}

static void free_argv(char **v) {
  for (int i = 0; v[i]; i++) free(v[i]);
  free(v);
}

static json_t *argv_json(char **v) {
  json_t *a = json_array();
  for (int i = 0; v[i]; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

static const char *row_status(const child_out *co, char *detail, size_t cap) {
  if (co->timed_out) {
    snprintf(detail, cap, "killed after the timeout");
    return "timeout";
  }
  if (co->signaled) {
    snprintf(detail, cap, "child died from signal %d (%s)", co->sig, strsignal(co->sig));
    return "crashed";
  }
  if (!json_is_object(co->result)) {
    snprintf(detail, cap, "child exited with code %d without a result", co->code);
    return "error";
  }
  const char *st = json_string_value(json_object_get(co->result, "status"));
  const char *err = json_string_value(json_object_get(co->result, "error"));
  snprintf(detail, cap, "%s", err ? err : "");
  if (!st) return "error";
  if (co->exited && co->code != 0 && !strcmp(st, "ok")) {
    snprintf(detail, cap, "child exited with code %d", co->code);
    return "error";
  }
  return st;
}

static void hash_into(json_t *arr, const char *path) {
  for (size_t i = 0; i < json_array_size(arr); i++)
    if (!strcmp(json_string_value(json_object_get(json_array_get(arr, i), "path")), path)) return;
  char sha[65];
  json_t *o = json_object();
  json_object_set_new(o, "path", json_string(path));
  json_object_set_new(o, "sha256", tsr__sha256_file(path, sha) ? json_null() : json_string(sha));
  json_array_append_new(arr, o);
}

/* Tamper evidence (docs/protocol.md, "Hash chain and digest"): the chain
 * starts from the fields fixed before the first row; every row is linked to
 * the previous link as it is appended; the finished document gets a digest. */
static void chain_start(json_t *doc, char link[65]) {
  if (tsr__chain_genesis(doc, link)) snprintf(link, 65, "%s", "");
  json_t *ch = json_object();
  json_object_set_new(ch, "algorithm", json_string("sha256"));
  json_object_set_new(ch, "canonical", json_string(TSR_BENCH_CANONICAL_TEXT));
  json_object_set_new(ch, "genesis", json_string(link));
  json_object_set_new(ch, "head", json_string(link));
  json_object_set_new(ch, "rows", json_integer(0));
  json_object_set_new(doc, "chain", ch);
}

static void chain_append(json_t *doc, json_t *row, char link[65]) {
  char next[65] = "";
  tsr__chain_link(link, row, next);
  memcpy(link, next, 65);
  json_object_set_new(row, "chain", json_string(link));
  json_t *ch = json_object_get(doc, "chain");
  json_object_set_new(ch, "head", json_string(link));
  json_object_set_new(ch, "rows", json_integer(json_integer_value(json_object_get(ch, "rows")) + 1));
}

/* The digest of the finished document (everything but itself). */
static void chain_finish(json_t *doc, char digest[65]) {
  if (tsr__chain_digest(doc, digest)) digest[0] = '\0';
  json_object_set_new(doc, "digest", json_string(digest));
}

/* The up-front memory check of every shape × batch: the largest need of a
 * requested route's child, which holds one workload at a time with the
 * timing and accuracy calls prepared (runner.c). 0, or 2 after one line. */
static int memory_check(const tsr__bench_config *cfg) {
  const tsr__route *req[TSR_BENCH_MAX_ROUTES];
  int nreq = 0;
  if (cfg->routes) {
    char *copy = strdup(cfg->routes), *save_p = NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save_p) : NULL; t && nreq < TSR_BENCH_MAX_ROUTES;
         t = strtok_r(NULL, ",", &save_p))
      if (tsr__route_find(t)) req[nreq++] = tsr__route_find(t);
    free(copy);
  } else {
    for (int i = 0; i < tsr__route_count && nreq < TSR_BENCH_MAX_ROUTES; i++)
      if (!tsr__routes[i].named_only) req[nreq++] = &tsr__routes[i];
  }
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) {
    fprintf(stderr, "tessera bench: out of memory\n");
    return 2;
  }
  int rc = 0;
  for (int s = 0; s < cfg->nshapes && !rc; s++) {
    tsr_problem p;
    if (tsr__bench_shape_problem(cfg, s, &p, NULL, 0)) continue; /* checked by the CLI */
    double need = 0.0;
    for (int r = 0; r < nreq; r++) {
      tsr_backend_kind b = req[r]->is_gpu ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU;
      tsr_plan plan;
      tsr_plan_info info;
      const tsr_plan_info *ip = NULL;
      if (req[r]->kind == TSR_ROUTE_BACKEND && b == TSR_BACKEND_CPU) {
        tsr_plan_builtin(ctx, b, &p, &plan);
        plan.threads = cfg->threads;
        if (tsr_plan_realize(ctx, b, &p, &plan, &info) == TSR_OK) ip = &info;
      }
      need = fmax(need, tsr__measure_host_bytes(&p, b, ip, 1, cfg->accuracy >= 0 ? 2 : 1));
    }
    char msg[256];
    if (tsr__host_memory_check(need, cfg->max_memory, msg, sizeof msg)) {
      fprintf(stderr, "tessera bench: %s batch %lld: %s\n", cfg->shapes[s], (long long)p.batch, msg);
      rc = 2;
    }
  }
  tsr_context_destroy(ctx);
  return rc;
}

int tsr__bench_preflight(const tsr__bench_config *cfg) { return memory_check(cfg); }

/* The devices the requested routes run on (docs/protocol.md, "Under MPI"):
 * the GPU as a probe child of tessera-gpu sees it (this process never
 * touches CUDA), the CPU as /proc/cpuinfo names it. */
json_t *tsr__bench_device_key(const tsr__bench_config *cfg) {
  int want_gpu = 0, want_cpu = 0;
  char *copy = cfg->routes ? strdup(cfg->routes) : NULL, *save_p = NULL;
  if (cfg->routes) {
    for (char *t = copy ? strtok_r(copy, ",", &save_p) : NULL; t; t = strtok_r(NULL, ",", &save_p)) {
      const tsr__route *rt = tsr__route_find(t);
      if (rt) *(rt->is_gpu ? &want_gpu : &want_cpu) = 1;
    }
  } else {
    want_gpu = want_cpu = 1;
  }
  free(copy);
  json_t *key = json_object();
  json_object_set_new(key, "tessera_version", json_string(TSR_VERSION));
  if (want_gpu) {
    char **av = child_argv(cfg, "tessera-gpu", -1, NULL, CHILD_PROBE, NULL);
    child_out co;
    run_child(av, cfg->timeout_s < 120 ? cfg->timeout_s : 120, "/dev/null", &co);
    free_argv(av);
    const json_t *v = json_object_get(co.result, "versions");
    json_t *gpu = json_null();
    if (json_is_true(json_object_get(co.result, "available")) && json_object_get(v, "device")) {
      static const char *const keys[] = {"device", "sm_count", "compute_capability",
                                         "cuda_driver_version", "nvrtc_version"};
      gpu = json_object();
      for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *x = json_object_get(v, keys[i]);
        json_object_set(gpu, keys[i], x ? x : json_null());
      }
    }
    json_object_set_new(key, "gpu", gpu);
    json_decref(co.result);
  }
  if (want_cpu) {
    json_t *host = tsr__host_json(), *cpu = json_object();
    json_t *model = json_object_get(host, "cpu_model");
    json_object_set(cpu, "cpu_model", model ? model : json_null());
    json_object_set(cpu, "ncpu_online", json_object_get(host, "ncpu_online"));
    json_object_set_new(key, "cpu", cpu);
    json_decref(host);
  }
  return key;
}

/* --out: refused when it exists; created with its parents. 0, or 2 after one line. */
static int make_out_dir(const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0 || errno != ENOENT) {
    fprintf(stderr, "tessera bench: --out: '%s' already exists; refusing to touch it\n", dir);
    return 2;
  }
  if (mkdir_parents(dir) != 0 || mkdir(dir, 0755) != 0) {
    int e = errno;
    fprintf(stderr, "tessera bench: --out: cannot create '%s': %s\n", dir, strerror(e));
    return 2;
  }
  return 0;
}

/* Protocol parameters (rounds are added once the routes are known). */
static json_t *protocol_json(const tsr__bench_config *cfg) {
  json_t *proto = json_object();
  json_object_set_new(proto, "preset", cfg->preset ? json_string(cfg->preset) : json_null());
  json_object_set_new(proto, "samples", json_integer(cfg->samples));
  json_object_set_new(proto, "sample_ms", json_integer(cfg->sample_ms));
  json_object_set_new(proto, "warmup_ms", json_integer(cfg->warmup_ms));
  json_object_set_new(proto, "timeout_s", json_integer(cfg->timeout_s));
  json_object_set_new(proto, "threads", json_integer(cfg->threads));
  json_object_set_new(proto, "inputs", json_string(tsr_inputs_name(cfg->inputs)));
  json_object_set_new(proto, "precision", json_string(tsr_precision_name(cfg->precision)));
  json_object_set_new(proto, "accuracy_inputs",
                      cfg->accuracy >= 0 ? json_string(tsr_inputs_name((tsr_inputs)cfg->accuracy))
                                         : json_null());
  json_object_set_new(proto, "accuracy_seed", json_integer(1));
  json_object_set_new(proto, "seed", json_integer((json_int_t)cfg->seed));
  json_object_set_new(proto, "atol", json_real(cfg->atol));
  json_object_set_new(proto, "rtol", json_real(cfg->rtol));
  json_object_set_new(proto, "unstable_threshold", json_real(cfg->unstable_threshold));
  json_object_set_new(proto, "batch", json_integer(cfg->batch));
  json_object_set_new(proto, "op_a", json_string(cfg->trans_a ? "T" : "N"));
  json_object_set_new(proto, "op_b", json_string(cfg->trans_b ? "T" : "N"));
  json_object_set_new(proto, "alpha", json_real(cfg->alpha));
  json_object_set_new(proto, "beta", json_real(cfg->beta));
  json_object_set_new(proto, "oracle_cache", cfg->oracle_cache ? json_string(cfg->oracle_cache) : json_null());
  json_t *shapes = json_array();
  for (int i = 0; i < cfg->nshapes; i++) {
    tsr_problem p;
    tsr_problem_init(&p, 0, 0, 0);
    tsr__bench_shape_problem(cfg, i, &p, NULL, 0);
    json_t *o = json_object();
    json_object_set_new(o, "label", json_string(cfg->shapes[i]));
    json_object_set_new(o, "m", json_integer(p.m));
    json_object_set_new(o, "n", json_integer(p.n));
    json_object_set_new(o, "k", json_integer(p.k));
    /* each shape's own problem kind: its token's, or the defaults above */
    json_object_set_new(o, "batch", json_integer(p.batch));
    json_object_set_new(o, "op_a", json_string(p.op_a == TSR_OP_T ? "T" : "N"));
    json_object_set_new(o, "op_b", json_string(p.op_b == TSR_OP_T ? "T" : "N"));
    json_array_append_new(shapes, o);
  }
  json_object_set_new(proto, "shapes", shapes);
  json_t *mg = json_array(), *mc = json_array();
  for (int m = 0; m < TSR_METRIC_COUNT; m++)
    json_array_append_new(tsr__metric_is_gpu((tsr__metric)m) ? mg : mc,
                          json_string(tsr__metric_name((tsr__metric)m)));
  json_object_set_new(proto, "metrics_gpu", mg);
  json_object_set_new(proto, "metrics_cpu", mc);
  return proto;
}

/* The fields fixed before any child: identity, protocol, host, device. */
static void doc_header(run_state *s) {
  const tsr__bench_config *cfg = s->cfg;
  json_t *doc = s->doc;
  char when[64];
  tsr__utc_now(when, sizeof when);
  json_object_set_new(doc, "schema", json_string(TSR_BENCH_SCHEMA));
  json_object_set_new(doc, "complete", json_false());
  json_object_set_new(doc, "tessera_version", json_string(TSR_VERSION));
  json_object_set_new(doc, "started_utc", json_string(when));
  json_t *cmd = json_array();
  for (int i = 0; i < cfg->argc; i++) json_array_append_new(cmd, json_string(cfg->argv[i]));
  json_object_set_new(doc, "command_line", cmd);
  s->proto = protocol_json(cfg);
  json_object_set_new(doc, "protocol", s->proto);
  json_object_set_new(doc, "host", tsr__host_json());
  json_object_set_new(doc, "device", tsr__device_json());

  /* Executable identity, checked again at the end. */
  ssize_t el = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
  if (el > 0) s->exe[el] = '\0';
  s->art = json_object();
  s->jexe = json_object();
  json_object_set_new(s->jexe, "path", json_string(s->exe));
  json_object_set_new(s->jexe, "sha256", tsr__sha256_file(s->exe, s->exe_sha) ? json_null() : json_string(s->exe_sha));
  json_object_set_new(s->art, "executable", s->jexe);
  json_object_set_new(s->art, "libraries", json_array());
  json_object_set_new(doc, "artifacts", s->art);
}

/* One route's record from its probe child's result. Returns 1 when it is available. */
static int probe_route(run_state *s, const tsr__route *rt, json_t *jroutes) {
  const tsr__bench_config *cfg = s->cfg;
  char **av = child_argv(cfg, rt->name, -1, s->work, CHILD_PROBE, NULL);
  char log[4400];
  snprintf(log, sizeof log, "%s/probe-%s.log", s->logs, rt->name);
  child_out co;
  run_child(av, cfg->timeout_s < 120 ? cfg->timeout_s : 120, log, &co);
  drop_empty_log(log);
  free_argv(av);
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(rt->name));
  json_object_set_new(o, "kind", json_string(rt->is_gpu ? "gpu" : "cpu"));
  json_object_set_new(o, "runner", json_string(rt->kind == TSR_ROUTE_TORCH      ? "torch"
                                               : rt->kind == TSR_ROUTE_OPENBLAS ? "openblas"
                                                                                : "backend"));
  if (rt->kind == TSR_ROUTE_BACKEND)
    json_object_set_new(o, "backend", json_string(tsr_backend_name(rt->backend)));
  int avail = json_is_true(json_object_get(co.result, "available"));
  json_object_set_new(o, "available", json_boolean(avail));
  if (avail) {
    json_object_set_new(o, "reason", json_null());
  } else {
    const char *why = json_string_value(json_object_get(co.result, "reason"));
    char buf[512];
    if (!why) {
      snprintf(buf, sizeof buf, "probe %s", co.timed_out ? "timed out" : co.signaled ? "crashed" : "gave no result");
      why = buf;
    }
    json_object_set_new(o, "reason", json_string(why));
    fprintf(stderr, "tessera bench: route %s skipped: %s\n", rt->name, why);
  }
  json_t *ver = json_object_get(co.result, "versions");
  json_object_set(o, "versions", ver ? ver : json_object());
  json_array_append_new(jroutes, o);
  json_decref(co.result);
  return avail;
}

/* Route discovery, each probe in its own child too. Fills s->measured and
 * s->R; returns the base order (the measured routes' names). */
static json_t *discover_routes(run_state *s) {
  const tsr__bench_config *cfg = s->cfg;
  const char *req[TSR_BENCH_MAX_ROUTES];
  int nreq = 0;
  if (cfg->routes) {
    char *copy = strdup(cfg->routes), *save_p = NULL;
    for (char *t = strtok_r(copy, ",", &save_p); t && nreq < TSR_BENCH_MAX_ROUTES;
         t = strtok_r(NULL, ",", &save_p))
      req[nreq++] = tsr__route_find(t)->name; /* validated by the CLI */
    free(copy);
  } else {
    for (int i = 0; i < tsr__route_count; i++)
      if (!tsr__routes[i].named_only) req[nreq++] = tsr__routes[i].name;
  }
  json_t *jroutes = json_array(), *base = json_array();
  s->R = 0;
  for (int i = 0; i < nreq; i++) {
    const tsr__route *rt = tsr__route_find(req[i]);
    if (probe_route(s, rt, jroutes) && s->R < TSR_BENCH_MAX_ROUTES) {
      s->measured[s->R++] = rt;
      json_array_append_new(base, json_string(rt->name));
    }
  }
  json_object_set_new(s->doc, "routes", jroutes);
  if (cfg->torch_script) {
    json_t *ts = json_object();
    char sha[65];
    json_object_set_new(ts, "path", json_string(cfg->torch_script));
    json_object_set_new(ts, "sha256", tsr__sha256_file(cfg->torch_script, sha) ? json_null() : json_string(sha));
    json_object_set_new(s->art, "torch_script", ts);
  }
  return base;
}

/* Row (round r, j-th shape, p-th route) of the design: which shape and route. */
static tsr__order_entry order_at(const run_state *s, int r, int j, int p) {
  return (tsr__order_entry){r, s->so[r * s->S + j], s->ro[r * s->R + p]};
}

/* The order design of every round, recorded as planned; the realized
 * order is appended row by row. */
static void plan_order(run_state *s) {
  int R = s->R, S = s->S, rounds = s->rounds;
  s->ro = malloc((size_t)rounds * R * sizeof *s->ro);
  s->so = malloc((size_t)rounds * S * sizeof *s->so);
  tsr__order_design(R, S, rounds, s->ro, s->so);
  json_t *planned = json_array();
  for (int r = 0; r < rounds; r++) {
    json_t *o = json_object(), *rr = json_array(), *ss = json_array();
    for (int p = 0; p < R; p++) json_array_append_new(rr, json_string(s->measured[s->ro[r * R + p]]->name));
    for (int j = 0; j < S; j++) json_array_append_new(ss, json_string(s->cfg->shapes[s->so[r * S + j]]));
    json_object_set_new(o, "round", json_integer(r));
    json_object_set_new(o, "routes", rr);
    json_object_set_new(o, "shapes", ss);
    json_array_append_new(planned, o);
  }
  json_object_set_new(s->order, "design", json_string("route order rotated by floor(r/2), odd rounds reverse the preceding round; shape order rotated by r"));
  json_object_set_new(s->order, "planned", planned);
  /* the planned order through the check the realized one meets at the end
   * (and the audit after): say before the run spends its time that it will
   * not balance (e.g. 4 rounds of 3 routes; a multiple of 2R rounds does) */
  tsr__order_entry *seq = malloc((size_t)rounds * S * R * sizeof *seq);
  size_t n = 0;
  for (int r = 0; r < rounds; r++)
    for (int j = 0; j < S; j++)
      for (int p = 0; p < R; p++) seq[n++] = order_at(s, r, j, p);
  json_t *check = tsr__order_check(seq, n, R, S, rounds);
  if (!json_is_true(json_object_get(check, "balanced")))
    fprintf(stderr,
            "tessera bench: WARNING: --rounds %d with %d routes cannot balance the route and shape "
            "order (a multiple of %d rounds can); tessera audit will reject this run's order\n",
            rounds, R, 2 * R);
  json_decref(check);
  free(seq);
  s->realized = json_array();
  json_object_set_new(s->order, "realized", s->realized);
}

/* Warm the oracle cache outside every measurement's budget, each in its
 * own child too (the GPU oracle must not leave a CUDA context in this
 * process). A failure here only means each child computes its own. */
static void precompute_oracles(run_state *s) {
  const tsr__bench_config *cfg = s->cfg;
  json_t *pre = json_array();
  json_object_set_new(s->doc, "oracle_precompute", pre);
  if (!cfg->oracle_cache) return;
  for (int j = 0; j < s->S; j++) {
    if (cfg->progress) fprintf(stderr, "\r\033[Koracle %s ...", cfg->shapes[j]);
    char **av = child_argv(cfg, NULL, j, s->work, CHILD_ORACLE, NULL);
    char log[4400];
    snprintf(log, sizeof log, "%s/oracle-%s.log", s->logs, cfg->shapes[j]);
    child_out co;
    run_child(av, cfg->timeout_s, log, &co);
    drop_empty_log(log);
    free_argv(av);
    json_t *o = json_object();
    json_object_set_new(o, "shape", json_string(cfg->shapes[j]));
    json_object_set_new(o, "wall_ns", json_integer(co.wall_ns));
    json_object_set_new(o, "result", co.result ? co.result : json_null());
    if (!co.result || strcmp(json_string_value(json_object_get(co.result, "status")) ? json_string_value(json_object_get(co.result, "status")) : "", "ok")) {
      char detail[512];
      const char *st = row_status(&co, detail, sizeof detail);
      fprintf(stderr, "%stessera bench: oracle precompute for %s failed after %.0f s (--timeout %d): %s; each child computes its own\n",
              cfg->progress ? "\r\033[K" : "", cfg->shapes[j], (double)co.wall_ns * 1e-9, cfg->timeout_s,
              detail[0] ? detail : st);
    }
    json_array_append_new(pre, o);
  }
}

/* The torch zygote, when torch is measured: started after the oracle
 * precompute (which may use the GPU) and before the first row. */
static void start_torch_zygote(run_state *s) {
  const tsr__bench_config *cfg = s->cfg;
  int torch_measured = 0;
  for (int i = 0; i < s->R; i++) torch_measured |= s->measured[i]->kind == TSR_ROUTE_TORCH;
  if (!torch_measured) return;
  json_t *tz = json_object();
  json_object_set_new(tz, "mode", json_string(cfg->torch_exec ? "exec" : "fork"));
  if (!cfg->torch_exec) {
    char log[4400], zmsg[512];
    snprintf(log, sizeof log, "%s/torch-zygote.log", s->logs);
    json_t *ready = NULL;
    if (tsr__torch_zygote_start(&s->zy, cfg->torch_script, log, cfg->timeout_s < 120 ? cfg->timeout_s : 120,
                                &ready, zmsg, sizeof zmsg) == 0) {
      s->zsock = s->zy.sock;
      json_object_set_new(tz, "socket", json_string(s->zy.sock));
      json_object_set_new(tz, "ready", ready);
    } else {
      /* Every torch row then runs its own python3, as with exec. */
      json_object_set_new(tz, "mode", json_string("exec"));
      json_object_set_new(tz, "fallback_reason", json_string(zmsg));
      fprintf(stderr, "tessera bench: %s; torch rows run a fresh python3 each\n", zmsg);
    }
    drop_empty_log(log);
  }
  json_object_set_new(s->doc, "torch_process", tz);
}

/* Round r's measurement at shape position j and route position p, in its
 * own child: the row is chained, appended and saved. */
static void measure_row(run_state *s, int r, int j, int p) {
  const tsr__bench_config *cfg = s->cfg;
  const tsr__order_entry at = order_at(s, r, j, p);
  int si = at.shape, ri = at.route;
  const char *shape = cfg->shapes[si], *route = s->measured[ri]->name;
  int seqno = (int)s->nseq;
  if (cfg->progress) {
    double el = (double)(tsr__now_ns() - s->t0) * 1e-9;
    fprintf(stderr, "\r\033[K[%d/%d] %.0fs round %d/%d  %s  %s", seqno + 1, s->rounds * s->S * s->R, el,
            r + 1, s->rounds, shape, route);
  }
  char log[4400], rel[256];
  snprintf(rel, sizeof rel, "logs/%04d-r%02d-%s-%s.log", seqno, r, shape, route);
  snprintf(log, sizeof log, "%s/%s", cfg->out_dir, rel);
  char **av = child_argv(cfg, route, si, s->work, CHILD_MEASURE, s->zsock);
  child_out co;
  run_child(av, cfg->timeout_s, log, &co);
  char detail[1024];
  const char *st = row_status(&co, detail, sizeof detail);
  json_t *row = json_object();
  json_object_set_new(row, "seq", json_integer(seqno));
  json_object_set_new(row, "round", json_integer(r));
  json_object_set_new(row, "shape", json_string(shape));
  json_object_set_new(row, "route", json_string(route));
  {
    /* the row's own problem kind (the shape's), also when the child gave no result */
    tsr_problem pb;
    tsr_problem_init(&pb, 1, 1, 1);
    tsr__bench_shape_problem(cfg, si, &pb, NULL, 0);
    json_object_set_new(row, "batch", json_integer(pb.batch));
    json_object_set_new(row, "op_a", json_string(pb.op_a == TSR_OP_T ? "T" : "N"));
    json_object_set_new(row, "op_b", json_string(pb.op_b == TSR_OP_T ? "T" : "N"));
  }
  json_object_set_new(row, "position", json_integer(p));
  json_object_set_new(row, "shape_position", json_integer(j));
  json_object_set_new(row, "status", json_string(st));
  json_object_set_new(row, "detail", json_string(detail));
  json_t *ex = json_object();
  json_object_set_new(ex, "code", co.exited ? json_integer(co.code) : json_null());
  json_object_set_new(ex, "signal", co.signaled ? json_integer(co.sig) : json_null());
  json_object_set_new(ex, "timed_out", json_boolean(co.timed_out));
  json_object_set_new(ex, "wall_ns", json_integer(co.wall_ns));
  json_object_set_new(row, "exit", ex);
  json_object_set_new(row, "argv", argv_json(av));
  if (strcmp(st, "ok")) json_object_set_new(row, "stderr_tail", tail_of_file(log, 2000));
  json_object_set_new(row, "log", drop_empty_log(log) ? json_string(rel) : json_null());
  json_object_set_new(row, "result", co.result ? co.result : json_null());
  if (strcmp(st, "ok")) {
    s->failed++;
    fprintf(stderr, "%stessera bench: FAILED round %d %s %s: %s: %s\n",
            cfg->progress ? "\r\033[K" : "", r, shape, route, st, detail);
  }
  json_t *libs = json_object_get(s->art, "libraries");
  json_t *jl = json_object_get(co.result, "libraries");
  for (size_t i = 0; i < json_array_size(jl); i++)
    hash_into(libs, json_string_value(json_array_get(jl, i)));
  free_argv(av);
  chain_append(s->doc, row, s->link);
  json_array_append_new(json_object_get(s->doc, "rows"), row);
  json_t *re = json_object();
  json_object_set_new(re, "seq", json_integer(seqno));
  json_object_set_new(re, "round", json_integer(r));
  json_object_set_new(re, "shape", json_string(shape));
  json_object_set_new(re, "route", json_string(route));
  json_array_append_new(s->realized, re);
  s->seq[s->nseq++] = (tsr__order_entry){r, si, ri};
  save(s);
}

/* --max-seconds: whether round r (r > 0) should not start: it would end past
 * the deadline if it took as long as the longest round so far, and the r
 * rounds done balance the order (a cut never leaves an unbalanced run; until
 * the order balances the rounds go on, with the per-child --timeout and any
 * outer limit as backstops). */
static int past_deadline(const run_state *s, int r, double longest) {
  double el = (double)(tsr__now_ns() - s->t_start) * 1e-9;
  if (el + longest <= s->cfg->max_seconds) return 0;
  json_t *check = tsr__order_check(s->seq, s->nseq, s->R, s->S, r);
  int balanced = json_is_true(json_object_get(check, "balanced"));
  json_decref(check);
  return balanced;
}

/* After the last row: the realized order's check, the executable's
 * identity again, the summary and the digest. */
static void finish_doc(run_state *s, char digest[65]) {
  json_t *doc = s->doc;
  json_t *check = tsr__order_check(s->seq, s->nseq, s->R, s->S, s->rounds_run);
  json_object_set_new(s->order, "check", check);
  if (!json_is_true(json_object_get(check, "balanced")))
    fprintf(stderr, "tessera bench: WARNING: the realized order is not balanced (%zu problems; "
                    "use a multiple of 2R rounds)\n",
            json_array_size(json_object_get(check, "problems")));
  char exe_sha2[65] = "";
  tsr__sha256_file(s->exe, exe_sha2);
  json_object_set_new(s->jexe, "sha256_at_end", json_string(exe_sha2));
  json_object_set_new(s->jexe, "unchanged", json_boolean(!strcmp(s->exe_sha, exe_sha2)));
  char when[64];
  tsr__utc_now(when, sizeof when);
  json_object_set_new(doc, "finished_utc", json_string(when));
  json_t *sum = json_object();
  json_object_set_new(sum, "rows", json_integer((json_int_t)s->nseq));
  json_object_set_new(sum, "failed_rows", json_integer(s->failed));
  json_object_set_new(sum, "wall_ns", json_integer(tsr__now_ns() - s->t0));
  json_object_set_new(doc, "summary", sum);
  if (s->rounds_run < s->rounds) {
    /* --max-seconds: the rounds run are the run's rounds (tables, audit); the
     * protocol and the planned order keep what was asked */
    json_t *st = json_object();
    json_object_set_new(st, "reason", json_string("max-seconds"));
    json_object_set_new(st, "rounds_run", json_integer(s->rounds_run));
    json_object_set_new(st, "rounds_planned", json_integer(s->rounds));
    json_object_set_new(doc, "stopped", st);
  }
  json_object_set_new(doc, "complete", json_true());
  chain_finish(doc, digest);
  save(s);
}

/* The report files, and the tables on stdout. Returns the exit code. */
static int print_report(run_state *s, const char *digest) {
  const char *dir = s->cfg->out_dir;
  char msg[512], *md = NULL;
  int rc = s->failed ? 1 : 0;
  if (tsr__bench_report(s->doc, dir, -1.0, &md, msg, sizeof msg)) {
    fprintf(stderr, "tessera bench: report: %s\n", msg);
    rc = 1;
  } else {
    if (!s->cfg->quiet_tables) fputs(md, stdout);
    printf("\nraw results: %s\nreport: %s/report.md\n", s->results_path, dir);
    /* to quote in a commit message or docs/perf.md; `tessera audit --digest` checks it */
    printf("digest: sha256:%s\n", digest);
  }
  if (s->failed)
    fprintf(stderr, "tessera bench: %d of %zu rows FAILED (crash, timeout, error or invalid output); see report.md\n",
            s->failed, s->nseq);
  free(md);
  return rc;
}

int tsr__bench_run(const tsr__bench_config *cfg) {
  const char *dir = cfg->out_dir;
  if (memory_check(cfg)) return 2;
  if (make_out_dir(dir)) return 2;
  run_state st, *s = &st;
  memset(s, 0, sizeof *s);
  s->cfg = cfg;
  s->t_start = tsr__now_ns();
  s->doc = json_object();
  snprintf(s->results_path, sizeof s->results_path, "%s/results.json", dir);
  snprintf(s->logs, sizeof s->logs, "%s/logs", dir);
  snprintf(s->work, sizeof s->work, "%s/tmp", dir);
  mkdir(s->logs, 0755);
  mkdir(s->work, 0755);
  json_t *doc = s->doc;
  doc_header(s);
  json_t *base = discover_routes(s);

  s->S = cfg->nshapes;
  s->rounds = cfg->rounds > 0 ? cfg->rounds : 2 * s->R;
  json_object_set_new(s->proto, "rounds", json_integer(s->rounds));
  if (cfg->max_seconds > 0) json_object_set_new(s->proto, "max_seconds", json_real(cfg->max_seconds));
  s->order = json_object();
  json_object_set_new(s->order, "base_routes", base);
  json_object_set_new(doc, "order", s->order);
  json_object_set_new(doc, "rows", json_array());
  save(s);
  if (s->R == 0) {
    fprintf(stderr, "tessera bench: no requested route is available here (see %s)\n", s->results_path);
    char digest[65];
    chain_start(doc, s->link);
    json_object_set_new(doc, "complete", json_true());
    chain_finish(doc, digest);
    save(s);
    rmdir(s->work);
    json_decref(doc);
    return 2;
  }

  plan_order(s);
  precompute_oracles(s);
  start_torch_zygote(s);
  chain_start(doc, s->link);
  s->seq = malloc((size_t)s->rounds * s->S * s->R * sizeof *s->seq);
  s->t0 = tsr__now_ns();
  s->rounds_run = s->rounds;
  double longest = 0; /* the longest round so far, seconds */
  for (int r = 0; r < s->rounds; r++) {
    if (cfg->max_seconds > 0 && r > 0 && past_deadline(s, r, longest)) {
      s->rounds_run = r;
      break;
    }
    int64_t t_round = tsr__now_ns();
    for (int j = 0; j < s->S; j++)
      for (int p = 0; p < s->R; p++) measure_row(s, r, j, p);
    double d = (double)(tsr__now_ns() - t_round) * 1e-9;
    if (d > longest) longest = d;
  }
  if (cfg->progress) fprintf(stderr, "\r\033[K");
  if (s->rounds_run < s->rounds)
    fprintf(stderr, "tessera bench: stopped after %d of %d rounds (--max-seconds %g: another round "
                    "would end past it)\n",
            s->rounds_run, s->rounds, cfg->max_seconds);
  tsr__torch_zygote_stop(&s->zy);

  char digest[65];
  finish_doc(s, digest);
  rmdir(s->work);
  free(s->seq);
  free(s->ro);
  free(s->so);
  int rc = print_report(s, digest);
  json_decref(doc);
  return rc;
}
