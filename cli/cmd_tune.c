/* tessera tune: search a backend's plan space for a shape under budgets,
 * validate every candidate, replay the best against the incumbent, store
 * the outcome in the tuning database (docs/tune.md). */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bench/bench.h"
#include "cli.h"
#include "tune/tune.h"

/* ---- --replay-child: one validated, timed measurement in this process ---- */
static int replay_child(const tsr_cli_problem_opts *o, const char *oracle_cache,
                        const tsr__measure_opts *mo) {
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return TSR_EXIT_USAGE;
  tsr_problem p;
  tsr_backend_kind b;
  tsr_plan plan;
  int rc = tsr_cli_problem_finish("tune", ctx, o, &p, &b, &plan, NULL, 0);
  if (rc) {
    tsr_context_destroy(ctx);
    return rc;
  }
  json_t *out = json_object();
  tsr__tune_cand c;
  memset(&c, 0, sizeof c);
  c.plan = plan;
  c.regs = c.local_bytes = -1;
  tsr_plan_format(&plan, c.text, sizeof c.text);
  float *C = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *C);
  tsr__workload *w = NULL;
  char msg[512];
  if (!C) {
    json_object_set_new(out, "status", json_string("rejected-run"));
    json_object_set_new(out, "reason", json_string("out of host memory"));
  } else if (tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, oracle_cache, 0, &w, msg, sizeof msg)) {
    json_object_set_new(out, "status", json_string("rejected-run"));
    json_object_set_new(out, "reason", json_string(msg));
  } else {
    /* a replay measures a plan the search already held to its contract */
    tsr__tune_measure(ctx, b, &p, w, NULL, C, mo, &c);
    json_object_set_new(out, "status", json_string(tsr__cand_status_name(c.status)));
    json_object_set_new(out, "reason", json_string(c.reason));
    json_object_set_new(out, "plan", json_string(c.text));
    json_object_set_new(out, "oracle", json_string(w->oracle_source));
    if (c.status == TSR__CAND_OK) {
      json_object_set_new(out, "time_ns", json_real(c.time_ns));
      json_t *a = json_array();
      for (int i = 0; i < c.nsamples; i++) json_array_append_new(a, json_real(c.samples_ns[i]));
      json_object_set_new(out, "samples_ns", a);
      json_object_set_new(out, "calls", json_integer(c.calls));
    }
    json_object_set_new(out, "source_sha256", json_string(c.sha256));
    json_object_set_new(out, "regs", json_integer(c.regs));
    json_object_set_new(out, "local_bytes", json_integer(c.local_bytes));
  }
  json_dumpf(out, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
  putchar('\n');
  json_decref(out);
  free(C);
  tsr__workload_destroy(w);
  tsr_context_destroy(ctx);
  return TSR_EXIT_OK;
}

/* ---- summary -------------------------------------------------------------- */
static void print_summary(const tsr__tune_config *cfg, const tsr__tune_result *r,
                          const tsr__tune_target *t, const char *shape) {
  printf("tune      %s %s batch %lld op(A)=%c op(B)=%c on %s, %s%s%s\n", t->backend, shape,
         (long long)cfg->problem.batch, cfg->problem.op_a ? 'T' : 'N',
         cfg->problem.op_b ? 'T' : 'N', t->device, t->arch, t->driver[0] ? ", driver " : "",
         t->driver);
  printf("space     %zu generated, %zu planner-legal, %zu rejected by the planner\n",
         r->generated, r->legal, r->planner_rejected);
  size_t by[TSR__CAND_STATUS_COUNT] = {0};
  for (size_t i = 0; i < r->n; i++) by[r->cands[i].status]++;
  printf("budget    max %ld candidates, max %.0f s: measured %zu (%zu ok, %zu rejected: %zu "
         "compile, %zu spill, %zu validation, %zu accuracy, %zu run), %zu unmeasured\n",
         cfg->max_candidates, cfg->max_seconds, r->measured, by[TSR__CAND_OK], r->rejected,
         by[TSR__CAND_REJ_COMPILE], by[TSR__CAND_REJ_SPILL], by[TSR__CAND_REJ_VALIDATION],
         by[TSR__CAND_REJ_ACCURACY], by[TSR__CAND_REJ_RUN], r->unmeasured);
  printf("time      oracle %.1f s, search %.1f s, replay %.1f s, total %.1f s\n", r->oracle_s,
         r->search_s, r->replay_s, r->total_s);
  const tsr__tune_prefetch_stats *pf = &r->prefetch;
  if (pf->threads)
    printf("prefetch  %d compile threads: %zu dispatched, %zu compiled, %zu found on disk, %zu "
           "failed; measured %zu ready, %zu after a wait (%.1f s), %zu not precompiled; %zu "
           "unused; join %.1f s\n",
           pf->threads, pf->dispatched, pf->compiled, pf->found_on_disk, pf->failed,
           pf->measured_ready, pf->measured_after_wait, pf->seconds_waited,
           pf->measured_not_precompiled, pf->unused, pf->seconds_join);
  else if (cfg->compile_threads > 0 && cfg->backend != TSR_BACKEND_CPU)
    printf("prefetch  off: %s\n", pf->off);
  /* A budget the replay reserve nearly fills searches almost nothing: say so. */
  if (cfg->max_seconds > 0 && r->reserve_s > 0.5 * cfg->max_seconds)
    printf("note      the replay reserve, %.1f s (2 x %d rounds of the incumbent's measurement), is "
           "%.0f%% of --max-seconds %.3g: the search stopped after %zu candidate(s); a larger "
           "budget searches more\n",
           r->reserve_s, cfg->rounds, 100.0 * r->reserve_s / cfg->max_seconds, cfg->max_seconds,
           r->measured);
  int shown = 0;
  for (size_t i = 0; i < r->n && shown < 5; i++) {
    const tsr__tune_cand *c = &r->cands[i];
    if (c->status == TSR__CAND_OK || c->status == TSR__CAND_UNMEASURED) continue;
    printf("%s %s\n          %s\n", shown ? "         " : "rejected ", c->text, c->reason);
    shown++;
  }
  if (r->incumbent >= 0) {
    const tsr__tune_cand *c = &r->cands[r->incumbent];
    if (c->status == TSR__CAND_OK)
      printf("incumbent %s\n          %.3f us/call (search median)\n", c->text, c->time_ns / 1e3);
    else
      printf("incumbent %s\n          %s: %s\n", c->text, tsr__cand_status_name(c->status), c->reason);
  }
  if (r->best >= 0) {
    const tsr__tune_cand *c = &r->cands[r->best];
    printf("best      %s\n          %.3f us/call (search median, %.2f GFLOP/s)\n", c->text,
           c->time_ns / 1e3,
           2.0 * cfg->problem.m * cfg->problem.n * cfg->problem.k * cfg->problem.batch /
               c->time_ns);
  }
  if (r->replayed) {
    printf("replay    %d rounds (%s), best/incumbent same-round ratios:", r->rounds,
           r->replay_in_process ? "in process, fresh prepare each" : "fresh process each");
    for (int i = 0; i < r->rounds; i++) printf(" %.4f", r->ratio[i]);
    printf("\n          median %.4f [min %.4f, max %.4f]; incumbent %.3f us, best %.3f us "
           "(medians of rounds)\n",
           r->ratio_median, r->ratio_min, r->ratio_max, tsr__tune_replay_median(r, 0) / 1e3,
           tsr__tune_replay_median(r, 1) / 1e3);
  } else if (r->replay_note[0]) {
    printf("replay    %s\n", r->replay_note);
  }
  printf("decision  %s%s%s\n", r->decision, r->chosen >= 0 ? ": " : "",
         r->chosen >= 0 ? r->cands[r->chosen].text : "");
  if (r->ntie) {
    printf("tie set   %zu plan(s) within %.1f%% of the search best:\n", r->ntie, 100 * r->noise);
    for (size_t i = 0; i < r->ntie && i < 8; i++)
      printf("          %.3f us  %s\n", r->cands[r->tie[i]].time_ns / 1e3, r->cands[r->tie[i]].text);
    if (r->ntie > 8) printf("          ... (%zu more)\n", r->ntie - 8);
  }
}

static int write_new_file(const char *path, const char *text, char *msg, size_t cap) {
  char tmp[PATH_MAX + 16];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wx");
  if (!f) {
    snprintf(msg, cap, "cannot create %s: %s", tmp, strerror(errno));
    return -1;
  }
  int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  /* link() refuses an existing target: an earlier result is never replaced */
  if (!ok || link(tmp, path) != 0) {
    snprintf(msg, cap, "cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  unlink(tmp);
  return 0;
}

/* A shape token's '*' and ':' ("96*512x512x64:NT") become '_' in the file
 * name (tune_cuda_96_512x512x64_NT.json), so it needs no shell quoting. */
static void out_name(const char *dir, const char *backend, const char *shape, char *buf, size_t cap) {
  char name[192];
  size_t i = 0;
  for (; shape[i] && i + 1 < sizeof name; i++)
    name[i] = shape[i] == '*' || shape[i] == ':' ? '_' : shape[i];
  name[i] = '\0';
  snprintf(buf, cap, "%s/tune_%s_%s.json", dir, backend, name);
}

static const char *const presets[] = {"seed", NULL};

/* What the command line asked for. */
#define TUNE_OWN_OPTS 32 /* room for tune's own options beside the problem's */
#define MAX_SHAPES 64
#define MAX_PRECISIONS 4
#define MAX_INPUTS 4096

typedef struct {
  tsr_cli_problem_opts o;
  const char *db_opt, *out_dir, *oracle_opt;
  int preset, accuracy; /* accuracy -1: off */
  int order;            /* tsr__tune_order */
  long long max_cand, samples, sample_ms, warmup_ms, rounds, spill, blocks;
  long long compile_threads; /* -1 until given: online CPUs - 1, at most 8 */
  double max_seconds, max_memory;
  int show, loo, json, quiet, no_db, in_process, child;
  const char *precision_text; /* --precision: one mode or a comma list */
  const char *shard_text;     /* --shard I/N */
  int shard, nshards;         /* parsed; nshards 0: no --shard */
  const char *merge_out;      /* --merge OUT */
  const char *inputs[MAX_INPUTS]; /* --merge's input databases, --loo's folders (operands) */
  int ninputs;
} tune_args;

/* argv → a; TSR_CLI_CONTINUE, or the exit code (help, a usage error). */
static int parse_args(int argc, char **argv, tune_args *a) {
  memset(a, 0, sizeof *a);
  a->preset = -1;
  a->accuracy = TSR_INPUTS_RANDOM;
  a->samples = 5;
  a->sample_ms = 10;
  a->warmup_ms = 30;
  a->rounds = 4;
  a->blocks = 1;
  a->max_seconds = 60.0;
  a->compile_threads = -1;
  tsr_cli_problem_defaults(&a->o, "auto");
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + TUNE_OWN_OPTS];
  size_t n = tsr_cli_problem_table(&a->o, opts);
  for (size_t i = 0; i < n; i++) { /* the same options, a different meaning here */
    if (!strcmp(opts[i].name, "--plan"))
      opts[i].help = "an extra candidate (key=value,... over the built-in default plan)";
    if (!strcmp(opts[i].name, "--shape"))
      opts[i].help = "problem MxNxK or shape token [B*]MxNxK[:XY] (its own batch\n"
                     "and ops win), or a comma list of them (one tune each)";
    if (!strcmp(opts[i].name, "--precision")) /* a list here: parsed in tsr_cli_tune */
      opts[i] = (tsr_cli_opt)TSR_CLI_OPT_STRING(
          "--precision", &a->precision_text, "P",
          "auto (default), strict, fp32x3, ozaki, tf32 (docs/accuracy.md), or a\n"
          "comma list of them (one tune per mode)");
  }
  const tsr_cli_opt own[] = {
      TSR_CLI_OPT_CHOICE("--preset", &a->preset, presets, "seed",
                         "tune the seed shapes one after another (instead of --shape)"),
      TSR_CLI_OPT_CHOICE("--order", &a->order, tsr__tune_order_names, "O",
                         "the search candidates' order: prior (default: ascending prior,\n"
                         "a tie nearest the incumbent first) or interleave (each tie\n"
                         "alternately nearest first and farthest from all before it)"),
      TSR_CLI_OPT_INT("--max-candidates", &a->max_cand, 1, 100000000, "N",
                      "measure at most N candidates (incumbent included; default: no limit)"),
      {.name = "--max-seconds", .kind = TSR_CLI_REAL, .dest = TSR_CLI_PTR_(double, &a->max_seconds),
       .rlo = 0, .rhi = 1e7, .flags = TSR_CLI_ABOVE, .metavar = "S",
       .help = "wall budget for search + replay per shape (default 60); a shape\n"
               "whose inputs and uncached FP64 oracles alone are estimated to take\n"
               "longer is refused before any work (docs/tune.md)"},
      TSR_CLI_OPT_CUSTOM("--max-memory", tsr_cli_opt_gib, &a->max_memory, "GIB", TSR_CLI_MAX_MEMORY_HELP),
      TSR_CLI_OPT_INT("--samples", &a->samples, 5, TSR__TUNE_MAX_SAMPLES, "N",
                      "timed samples per candidate (default 5)"),
      TSR_CLI_OPT_INT("--sample-ms", &a->sample_ms, 1, 60000, "T",
                      "calls per sample fill about T ms (default 10)"),
      TSR_CLI_OPT_INT("--warmup-ms", &a->warmup_ms, 0, 600000, "T", "warm-up per candidate (default 30)"),
      TSR_CLI_OPT_INT("--rounds", &a->rounds, 2, TSR__TUNE_MAX_ROUNDS, "R", "replay rounds, even (default 4)"),
      TSR_CLI_OPT_INT("--spill-limit", &a->spill, 0, 1 << 24, "B",
                      "GPU: reject candidates with more than B local bytes per thread\n"
                      "(default 0: any spill rejects; the incumbent, the default plan\n"
                      "that runs anyway, is measured whatever it spills)"),
      {.name = "--db", .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, &a->db_opt),
       .flags = TSR_CLI_NONEMPTY, .metavar = "PATH",
       .help = "tuning database (default $TESSERA_TUNE_DB, else\n"
               "${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tune.db)"},
      TSR_CLI_OPT_FLAG("--no-db", &a->no_db, "do not read or write a database"),
      {.name = "--oracle-cache", .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, &a->oracle_opt),
       .flags = TSR_CLI_NONEMPTY, .metavar = "DIR",
       .help = "FP64 oracle cache (default ${XDG_CACHE_HOME:-~/.cache}/tessera/oracle;\n"
               "'off' disables; replay children then recompute the oracle)"},
      TSR_CLI_OPT_INT("--compile-threads", &a->compile_threads, 0, 64, "N",
                      "GPU: compile the next candidates' kernels on N background\n"
                      "threads into the module cache while one is measured (default:\n"
                      "online CPUs - 1, at most 8; 0: off)"),
      TSR_CLI_OPT_FLAG("--in-process", &a->in_process, "replay in this process (fresh prepare/compile each time)"),
      {.name = "--out", .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, &a->out_dir),
       .flags = TSR_CLI_NONEMPTY, .metavar = "DIR",
       .help = "write tune_<backend>_<shape>.json per shape (never overwrites)"},
      TSR_CLI_OPT_FLAG("--json", &a->json, "print the result document(s) on stdout"),
      TSR_CLI_OPT_FLAG("--quiet", &a->quiet, "no progress display on stderr"),
      TSR_CLI_OPT_FLAG("--show", &a->show, "list the tuning database"),
      TSR_CLI_OPT_FLAG("--loo", &a->loo,
                       "leave-one-out: look up every database entry's shape as unseen\n"
                       "(the nearest and class passes over the other entries) and price\n"
                       "the plan served by the entry's tune document (tune_*.json in the\n"
                       "folders given as arguments) where its search measured it"),
      TSR_CLI_OPT_INT("--blocks", &a->blocks, 1, 1024, "B",
                      "split each shape's search candidates into B blocks, one\n"
                      "work item each (every block also measures and replays against\n"
                      "the incumbent; the fastest replayed entry wins; default 1)"),
      TSR_CLI_OPT_STRING("--shard", &a->shard_text, "I/N",
                         "tune only work item j with j % N == I (items: shapes x precision\n"
                         "modes x blocks, in that order); resumes: items finished in --db\n"
                         "are skipped; merge the shards' databases with --merge"),
      {.name = "--merge", .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, &a->merge_out),
       .flags = TSR_CLI_NONEMPTY, .metavar = "OUT",
       .help = "merge the databases given as arguments into OUT (written anew;\n"
               "OUT may be one of them): per key the fastest stored entry, ties\n"
               "by plan text; runs and candidates kept"},
      TSR_CLI_OPT_CUSTOM("--accuracy", tsr_cli_opt_accuracy, &a->accuracy, "I",
                         "input family of every candidate's accuracy check against its\n"
                         "precision mode's contract: random (default), normal, wide;\n"
                         "'off' skips it (then less accurate plans can win)"),
      /* internal: one replay measurement in this process (search.c) */
      {.name = "--replay-child", .kind = TSR_CLI_FLAG, .dest = TSR_CLI_PTR_(int, &a->child),
       .flags = TSR_CLI_HIDDEN},
  };
  /* the table's room, checked when it is compiled (session 39: a 25th option
   * overflowed a room of 24, found by AddressSanitizer) */
  _Static_assert(sizeof own / sizeof own[0] <= TUNE_OWN_OPTS, "raise TUNE_OWN_OPTS");
  assert(n <= TSR_CLI_PROBLEM_NOPTS);
  memcpy(opts + n, own, sizeof own);
  n += sizeof own / sizeof own[0];
  const tsr_cli_spec spec = {
      .verb = "tune",
      .usage =
          "usage: tessera tune --shape MxNxK [options]      tune one problem\n"
          "       tessera tune --preset seed [options]      tune the seed shapes one after another\n"
          "       tessera tune --show [--db PATH] [--json]  list the tuning database\n"
          "       tessera tune --shard I/N [options]        one of N separate jobs (docs/tune.md)\n"
          "       tessera tune --merge OUT IN.db...         merge tuning databases into OUT\n"
          "       tessera tune --loo [--db PATH] DIR...     the lookup on shapes left out, priced\n"
          "                                                 by the tune documents in DIR...\n"
          "       mpirun -np R tessera-mpi tune [options]   R ranks, one work queue (MPI build)\n"
          "\n"
          "Measures planner-legal plans of the joint search space in the order of an\n"
          "analytic prior (incumbent default first), each compiled, resource-checked,\n"
          "validated on every element against the FP64 oracle (dyadic inputs: exact), then\n"
          "timed; replays the best against the incumbent in balanced paired rounds, each\n"
          "measurement in a fresh process, and stores the outcome (docs/tune.md). Every\n"
          "shape is first checked against --max-memory and --max-seconds.\n\n",
      .footer = "exit: 0 done (a result was stored, or no valid candidate: see output), 1 no valid\n"
                "candidate, 2 bad input, unusable backend or database, or a shape over a limit\n",
      .opts = opts,
      .nopts = n,
      .operands = a->inputs,
      .max_operands = MAX_INPUTS,
      .operand_name = "input database or folder list (at most 4096)",
  };
  int rc = tsr_cli_parse(&spec, argc, argv);
  while (a->ninputs < MAX_INPUTS && a->inputs[a->ninputs]) a->ninputs++;
  return rc;
}

/* --show: the database listed. */
static int show_db(const char *db_path, int json) {
  tsr__tune_db *db = NULL;
  char msg[1200];
  if (tsr__tune_db_open(db_path, 0, &db, msg, sizeof msg))
    return tsr_cli_usage_error("tune", "%s", msg);
  int rc = tsr__tune_db_show(db, stdout, json, msg, sizeof msg);
  tsr__tune_db_close(db);
  if (rc) return tsr_cli_usage_error("tune", "%s", msg);
  return TSR_EXIT_OK;
}

/* Every shape's problem (and --plan's extra candidate) and the backend,
 * checked before any work; 0 or the exit code. */
static int check_shapes(tsr_context *ctx, const tune_args *a, char *const *shapes, int nshapes,
                        tsr_problem *probs, tsr_plan *extra, tsr_backend_kind *bk) {
  *bk = TSR_BACKEND_AUTO;
  for (int s = 0; s < nshapes; s++) {
    tsr_cli_problem_opts os = a->o;
    os.shape = shapes[s];
    tsr_plan plan;
    int rc = tsr_cli_problem_finish("tune", ctx, &os, &probs[s], bk, &plan, NULL, 0);
    if (rc) return rc;
    if (a->o.plan) {
      /* --plan is over the built-in default (not the database's plan). */
      tsr_plan_builtin(ctx, *bk, &probs[s], &extra[s]);
      char m2[256];
      tsr_plan_parse(a->o.plan, &extra[s], m2, sizeof m2);
    }
  }
  if (*bk != TSR_BACKEND_CPU && *bk != TSR_BACKEND_CUDA)
    return tsr_cli_usage_error("tune", "--backend: %s has no tunable plans (cpu, cuda)",
                               tsr_backend_name(*bk));
  if (tsr_backend_available(ctx, *bk))
    return tsr_cli_usage_error("tune", "backend %s unusable: %s", tsr_backend_name(*bk),
                               tsr_context_message(ctx));
  return TSR_EXIT_OK;
}

/* The work items: shapes x precision modes x candidate blocks, in that
 * order (the partition of --shard and the queue of the MPI build follow
 * it). label names the item in output and in --out's file names:
 * the shape, then _<mode> when several modes are tuned, then _b<b>of<B>
 * with blocks. */
typedef struct {
  tsr__tune_config cfg;
  char label[160];
} tune_item;

typedef struct {
  const tune_args *a;
  tsr_context *ctx;
  tune_item *items;
  int nitems;
  char host[256];
} tune_work;

/* --out: the directory exists and no result file would be replaced. */
static int check_out_dir(const char *out_dir, tsr_backend_kind bk, const tune_item *items,
                         int nitems, const unsigned char *skip) {
  if (mkdir(out_dir, 0755) && errno != EEXIST)
    return tsr_cli_usage_error("tune", "--out: cannot create %s: %s", out_dir, strerror(errno));
  for (int i = 0; i < nitems; i++) {
    if (skip && skip[i]) continue;
    char path[PATH_MAX];
    out_name(out_dir, tsr_backend_name(bk), items[i].label, path, sizeof path);
    if (access(path, F_OK) == 0)
      return tsr_cli_usage_error("tune", "--out: %s exists; results are never overwritten", path);
  }
  return TSR_EXIT_OK;
}

/* One item tuned, printed and written; 0, 1 (no valid candidate or the
 * result file not written) or the exit code of a refused tune (2). */
static int tune_shape(tsr_context *ctx, const tune_args *a, const tsr__tune_config *cfg,
                      const char *shape, const char *db_path, int several) {
  tsr__tune_result r;
  if (tsr__tune_run(ctx, cfg, &r))
    return tsr_cli_usage_error("tune", "%s: %s", shape, tsr_context_message(ctx));
  int fail = 0;
  tsr__tune_target t;
  tsr__tune_target_get(ctx, cfg->backend, &t);
  char *doc = tsr__tune_result_json(cfg, &r);
  if (a->json) printf("%s\n", doc ? doc : "null");
  else {
    print_summary(cfg, &r, &t, shape);
    printf("database  %s%s\n", cfg->db_path ? db_path : "(none)",
           cfg->db_path && r.chosen >= 0 ? " (tuned entry stored)" : "");
  }
  if (a->out_dir && doc) {
    char path[PATH_MAX], msg[PATH_MAX + 128];
    out_name(a->out_dir, tsr_backend_name(cfg->backend), shape, path, sizeof path);
    if (write_new_file(path, doc, msg, sizeof msg)) {
      tsr_cli_error("tune", "%s", msg);
      fail = 1;
    } else if (!a->json) {
      printf("results   %s\n", path);
    }
  }
  free(doc);
  if (r.chosen < 0) fail = 1;
  tsr__tune_result_free(&r);
  if (several && !a->json) putchar('\n');
  fflush(stdout);
  return fail;
}

/* Item i into db_path (NULL: no database) with the provenance rank of
 * ranks (-1: a plain run). */
static int run_item(void *arg, int i, const char *db_path, int rank, int ranks) {
  tune_work *w = arg;
  tsr__tune_config cfg = w->items[i].cfg;
  cfg.db_path = db_path;
  cfg.rank = rank;
  cfg.ranks = ranks;
  cfg.host = w->host;
  if (rank >= 0 && !w->a->json)
    printf("item      %d of %d: %s, %s %d of %d on %s\n", i + 1, w->nitems, w->items[i].label,
           w->a->nshards ? "shard" : "rank", rank, ranks, w->host);
  return tune_shape(w->ctx, w->a, &cfg, w->items[i].label, db_path, w->nitems > 1);
}

/* 1 when item i has a finished run in db_path (the resume rule), 0 when
 * not or when the file does not exist, -1 (message printed) on an
 * unusable file. */
static int item_done(void *arg, int i, const char *db_path) {
  tune_work *w = arg;
  if (access(db_path, F_OK)) return 0;
  tsr__tune_db *db = NULL;
  char msg[1400];
  if (tsr__tune_db_open(db_path, 0, &db, msg, sizeof msg)) {
    tsr_cli_usage_error("tune", "%s", msg);
    return -1;
  }
  tsr__tune_target t;
  const tsr__tune_config *c = &w->items[i].cfg;
  int r = -1;
  if (tsr__tune_target_get(w->ctx, c->backend, &t) == TSR_OK)
    r = tsr__tune_db_item_done(db, &t, &c->problem, c->block, c->nblocks, msg, sizeof msg);
  else snprintf(msg, sizeof msg, "%s", tsr_context_message(w->ctx));
  tsr__tune_db_close(db);
  if (r < 0) tsr_cli_usage_error("tune", "%s", msg);
  return r;
}

/* This process's target key (docs/tune.md) as one line, for the check
 * that every rank of a job runs the same device model. */
static int target_text(void *arg, char *buf, size_t cap) {
  tune_work *w = arg;
  tsr__tune_target t;
  if (tsr__tune_target_get(w->ctx, w->items[0].cfg.backend, &t)) {
    snprintf(buf, cap, "(no device: %s)", tsr_context_message(w->ctx));
    return -1;
  }
  snprintf(buf, cap, "%s | %s | driver %s | nvrtc %s | tessera %s", t.device, t.arch, t.driver,
           t.nvrtc, t.version);
  return 0;
}

/* The items checked against every limit (all before the first starts),
 * then run: all of them, the shard's, or the MPI queue's. */
static int tune_items(const tune_args *a, char *const *shapes, int nshapes,
                      const tsr_precision *precs, int nprecs, const tsr__measure_opts *mo,
                      const char *oracle_cache, int no_db, const char *db_path, int db_off_note,
                      int argc, char **argv, int mpi) {
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return tsr_cli_usage_error("tune", "out of memory");
  tsr_problem probs[MAX_SHAPES];
  tsr_plan extra[MAX_SHAPES];
  tsr_backend_kind bk;
  int rc = check_shapes(ctx, a, shapes, nshapes, probs, extra, &bk);
  char self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl > 0) self[sl] = '\0';
  char command[2048] = "";
  for (int i = 0; i < argc; i++) {
    size_t len = strlen(command);
    snprintf(command + len, sizeof command - len, "%s%s", i ? " " : "tessera ", argv[i]);
  }
  int nb = (int)a->blocks;
  /* --compile-threads' default: the cores the search's own thread leaves */
  int compile_threads = (int)a->compile_threads;
  if (compile_threads < 0) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    compile_threads = ncpu > 9 ? 8 : ncpu > 1 ? (int)ncpu - 1 : 0;
  }
  tune_work w = {.a = a, .ctx = ctx, .nitems = nshapes * nprecs * nb};
  if (gethostname(w.host, sizeof w.host - 1)) snprintf(w.host, sizeof w.host, "unknown");
  w.items = calloc((size_t)w.nitems, sizeof *w.items);
  if (!w.items && !rc) rc = tsr_cli_usage_error("tune", "out of memory");
  for (int s = 0, i = 0; s < nshapes && !rc; s++)
    for (int q = 0; q < nprecs && !rc; q++)
      for (int b = 0; b < nb && !rc; b++, i++) {
        tune_item *it = &w.items[i];
        it->cfg = (tsr__tune_config){
            .backend = bk,
            .problem = probs[s],
            .max_candidates = (long)a->max_cand,
            .order = (tsr__tune_order)a->order,
            .compile_threads = compile_threads,
            .max_seconds = a->max_seconds,
            .measure = *mo,
            .rounds = (int)a->rounds,
            .db_path = no_db ? NULL : db_path,
            .child_exe = a->in_process || sl <= 0 ? NULL : self,
            .oracle_cache = oracle_cache,
            .accuracy = a->accuracy,
            .extra = a->o.plan ? &extra[s] : NULL,
            .nextra = a->o.plan ? 1 : 0,
            .progress = !a->quiet,
            .command = command,
            .max_memory = a->max_memory,
            .block = b,
            .nblocks = nb,
            .rank = -1,
        };
        it->cfg.problem.precision = precs[q];
        int n = snprintf(it->label, sizeof it->label, "%s", shapes[s]);
        if (nprecs > 1)
          n += snprintf(it->label + n, sizeof it->label - (size_t)n, "_%s",
                        tsr_precision_name(precs[q]));
        if (nb > 1) snprintf(it->label + n, sizeof it->label - (size_t)n, "_b%dof%d", b, nb);
        /* memory and time limits of every item before the first one starts */
        if (b == 0 && tsr__tune_check(ctx, &it->cfg))
          rc = tsr_cli_usage_error("tune", "--shape %s batch %lld: %s", shapes[s],
                                   (long long)probs[s].batch, tsr_context_message(ctx));
      }
  /* The shard's items, less those already finished in its database. */
  unsigned char *skip = calloc((size_t)w.nitems + 1, 1);
  if (!skip && !rc) rc = tsr_cli_usage_error("tune", "out of memory");
  int nskip = 0, nmine = 0;
  if (!rc && a->nshards) {
    for (int i = 0; i < w.nitems && !rc; i++) {
      skip[i] = i % a->nshards != a->shard;
      if (!skip[i] && !no_db) {
        int d = item_done(&w, i, db_path);
        if (d < 0) rc = TSR_EXIT_USAGE;
        else if (d) {
          skip[i] = 1;
          nskip++;
        }
      }
      nmine += !skip[i];
    }
  }
  if (!rc && a->out_dir) rc = check_out_dir(a->out_dir, bk, w.items, w.nitems, skip);
  if (!rc && db_off_note)
    fprintf(stderr, "tessera tune: TESSERA_TUNE_DB=off: results are not stored\n");
  int any_fail = 0;
#ifdef TSR_WITH_MPI
  if (mpi) {
    tsr_cli_tune_queue q = {.nitems = w.nitems, .run = run_item, .done = item_done,
                            .target = target_text, .arg = &w, .db_path = db_path};
    rc = tsr_cli_tune_mpi(&q, rc);
    free(skip);
    free(w.items);
    tsr_context_destroy(ctx);
    return rc;
  }
#else
  (void)mpi;
  (void)target_text;
#endif
  if (!rc && a->nshards && !a->json)
    printf("shard     %d/%d: %d of %d work items here, %d of them already finished in %s\n\n",
           a->shard, a->nshards, nmine + nskip, w.nitems, nskip, no_db ? "(no database)" : db_path);
  for (int i = 0; i < w.nitems && !rc; i++) {
    if (skip[i]) continue;
    int r = run_item(&w, i, no_db ? NULL : db_path, a->nshards ? a->shard : -1,
                     a->nshards ? a->nshards : 0);
    if (r == TSR_EXIT_USAGE) rc = r;
    else any_fail |= r;
  }
  free(skip);
  free(w.items);
  tsr_context_destroy(ctx);
  return rc ? rc : any_fail ? TSR_EXIT_FAIL : TSR_EXIT_OK;
}

/* --merge OUT IN...: one database from several (merge.c). */
static int merge_dbs(const tune_args *a) {
  if (a->ninputs < 1)
    return tsr_cli_usage_error("tune", "--merge %s: no input database given", a->merge_out);
  char msg[2400];
  if (tsr__tune_db_merge(a->merge_out, a->inputs, a->ninputs, msg, sizeof msg))
    return tsr_cli_usage_error("tune", "%s", msg);
  if (!a->quiet)
    printf("merged    %d database(s) into %s (tessera tune --show --db %s lists it)\n", a->ninputs,
           a->merge_out, a->merge_out);
  return TSR_EXIT_OK;
}

/* --loo DIR...: the lookup's leave-one-out estimate (loo.c). */
static int loo_db(const tune_args *a, const char *db_path) {
  if (a->ninputs < 1)
    return tsr_cli_usage_error("tune", "--loo: no folder of tune documents given");
  tsr__tune_db *db = NULL;
  char msg[1200];
  if (tsr__tune_db_open(db_path, 0, &db, msg, sizeof msg))
    return tsr_cli_usage_error("tune", "%s", msg);
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) {
    tsr__tune_db_close(db);
    return tsr_cli_usage_error("tune", "out of memory");
  }
  tsr__tune_loo_summary sum;
  tsr_status st = tsr__tune_loo(ctx, db, a->inputs, a->ninputs, stdout, &sum);
  int rc = st ? tsr_cli_usage_error("tune", "%s", tsr_context_message(ctx)) : TSR_EXIT_OK;
  tsr_context_destroy(ctx);
  tsr__tune_db_close(db);
  return rc;
}

/* "I/N" with 0 <= I < N. */
static int parse_shard(tune_args *a) {
  const char *t = a->shard_text;
  char *end;
  errno = 0;
  long i = strtol(t, &end, 10);
  if (end != t && *end == '/' && !errno) {
    const char *t2 = end + 1;
    long n = strtol(t2, &end, 10);
    if (end != t2 && !*end && !errno && n >= 1 && n <= 1000000 && i >= 0 && i < n &&
        t[0] != '+' && t2[0] != '+' && t2[0] != '-') {
      a->shard = (int)i;
      a->nshards = (int)n;
      return 0;
    }
  }
  return tsr_cli_usage_error("tune", "--shard: '%s' is not I/N with 0 <= I < N (e.g. 0/4)", t);
}

int tsr_cli_tune(int argc, char **argv) {
  tune_args a;
  int prc = parse_args(argc, argv, &a);
  if (prc != TSR_CLI_CONTINUE) return prc;
  if (a.rounds % 2) return tsr_cli_usage_error("tune", "--rounds: '%lld' must be even", a.rounds);
  if (a.shard_text && parse_shard(&a)) return TSR_EXIT_USAGE;
  if (a.ninputs && !a.merge_out && !a.loo)
    return tsr_cli_usage_error("tune",
                               "unexpected argument '%s' (input databases go with --merge OUT, "
                               "folders with --loo)",
                               a.inputs[0]);
  if (a.merge_out && a.loo) return tsr_cli_usage_error("tune", "--merge and --loo: give one of them");
  if (a.merge_out) return merge_dbs(&a);
  /* --precision: one mode or a list, each tuned as its own key */
  tsr_precision precs[MAX_PRECISIONS] = {a.o.precision};
  int nprecs = 1;
  if (a.precision_text) {
    char **items = NULL;
    nprecs = tsr_cli_split_list("tune", "--precision", a.precision_text, MAX_PRECISIONS, &items);
    if (nprecs < 0) return TSR_EXIT_USAGE;
    for (int i = 0; i < nprecs; i++) {
      char msg[256];
      if (tsr_precision_parse(items[i], &precs[i], msg, sizeof msg)) {
        tsr_cli_list_free(items, nprecs);
        return tsr_cli_usage_error("tune", "--%s", msg);
      }
      for (int j = 0; j < i; j++)
        if (precs[j] == precs[i]) {
          tsr_cli_list_free(items, nprecs);
          return tsr_cli_usage_error("tune", "--precision: '%s' is given twice", items[i]);
        }
    }
    tsr_cli_list_free(items, nprecs);
    a.o.precision = precs[0];
  }
  tsr__measure_opts mo = {(int)a.samples, (int)a.sample_ms, (int)a.warmup_ms, (int)a.spill, 0};
  const char *oracle_cache = a.oracle_opt ? (strcmp(a.oracle_opt, "off") ? a.oracle_opt : NULL)
                                          : tsr__oracle_cache_default();
  if (a.child) {
    mo.bypass_cache = 1;
    return replay_child(&a.o, oracle_cache, &mo);
  }

  char db_path[1024] = "";
  int db_off_note = 0, no_db = a.no_db;
  if (!no_db) {
    if (a.db_opt) snprintf(db_path, sizeof db_path, "%s", a.db_opt);
    else {
      int pr = tsr__tune_db_default_path(db_path, sizeof db_path);
      if (pr == 1 && !a.show && !a.loo) {
        db_off_note = 1; /* said once every check has passed */
        no_db = 1;
      } else if (pr) {
        return tsr_cli_usage_error("tune", "--db: no default path (set HOME or TESSERA_TUNE_DB)");
      }
    }
  }
  if (a.show) {
    if (no_db || !db_path[0]) return tsr_cli_usage_error("tune", "--show: no database (use --db PATH)");
    return show_db(db_path, a.json);
  }
  if (a.loo) {
    if (no_db || !db_path[0]) return tsr_cli_usage_error("tune", "--loo: no database (use --db PATH)");
    return loo_db(&a, db_path);
  }

  /* The shapes: the preset's, or --shape's list. */
  char *shapes[MAX_SHAPES];
  char **list = NULL;
  int nshapes = 0;
  if (a.preset >= 0) {
    if (a.o.shape) return tsr_cli_usage_error("tune", "--preset and --shape: give one of them");
    for (int i = 0; i < tsr__tune_seed_shape_count; i++)
      shapes[nshapes++] = (char *)tsr__tune_seed_shapes[i];
  } else {
    if (!a.o.shape) return tsr_cli_usage_error("tune", "--shape: required (MxNxK), or --preset seed");
    nshapes = tsr_cli_split_list("tune", "--shape", a.o.shape, MAX_SHAPES, &list);
    if (nshapes < 0) return TSR_EXIT_USAGE;
    for (int i = 0; i < nshapes; i++) shapes[i] = list[i];
  }
  int mpi = 0, rc;
#ifdef TSR_WITH_MPI
  /* Under MPI before any device is touched: the local rank picks the GPU. */
  if (a.nshards) {
    rc = tsr_cli_usage_error("tune", "--shard: not with the MPI build's queue (use tessera)");
    tsr_cli_list_free(list, list ? nshapes : 0);
    return rc;
  }
  if (no_db) {
    rc = tsr_cli_usage_error("tune", "--no-db: the MPI build's tune needs a database (--db PATH)");
    tsr_cli_list_free(list, list ? nshapes : 0);
    return rc;
  }
  if ((rc = tsr_cli_mpi_begin("tune"))) {
    tsr_cli_list_free(list, list ? nshapes : 0);
    return rc;
  }
  mpi = 1;
#endif
  rc = tune_items(&a, shapes, nshapes, precs, nprecs, &mo, oracle_cache, no_db, db_path,
                  db_off_note, argc, argv, mpi);
  tsr_cli_list_free(list, list ? nshapes : 0);
#ifdef TSR_WITH_MPI
  rc = tsr_cli_mpi_end(rc);
#endif
  return rc;
}
