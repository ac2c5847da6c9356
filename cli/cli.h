/* The tessera command: one function per verb, each with its own --help.
 * Exit codes: 0 ok, 1 validation/audit failure, 2 bad input or unusable
 * environment for the request. */
#ifndef TSR_CLI_H
#define TSR_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tessera.h"

#define TSR_EXIT_OK 0
#define TSR_EXIT_FAIL 1
#define TSR_EXIT_USAGE 2

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv); /* argv[0] is the verb */
} tsr_cli_verb;

int tsr_cli_gemm(int argc, char **argv);
int tsr_cli_plan(int argc, char **argv);
int tsr_cli_walk(int argc, char **argv);
int tsr_cli_emit(int argc, char **argv);
int tsr_cli_tune(int argc, char **argv);
int tsr_cli_bench(int argc, char **argv);
int tsr_cli_report(int argc, char **argv);
int tsr_cli_audit(int argc, char **argv);
int tsr_cli_zoo(int argc, char **argv);
/* Hidden: one bench measurement in its own process (run by tsr_cli_bench). */
int tsr_cli_bench_run(int argc, char **argv);

/* Prints "tessera <verb>: <msg>" (verb NULL: "tessera: <msg>") as exactly
 * one line on stderr, control characters of the message escaped (\n, \t,
 * \xHH), and returns TSR_EXIT_USAGE. Every usage error goes through it. */
int tsr_cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same line for an error of another exit code (a failed run). */
void tsr_cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the option tables (cli/options.c) -----------------------------------
 * Each verb declares its options in one table; parsing, range checks and the
 * --help option list are generated from it. Rules: an unknown option is one
 * line naming it; a valued option at the end of the line, or followed by an
 * argument starting with "--", "needs a value" (so "--alpha -2" works);
 * numbers are parsed whole, range-checked and named with their range in the
 * error; reals must be finite; the last of a repeated option wins; "--"
 * ends the options. */
typedef enum {
  TSR_CLI_FLAG,   /* int *: set to 1 */
  TSR_CLI_INT,    /* long long *: an integer in [lo, hi] */
  TSR_CLI_REAL,   /* double *: a finite number in [rlo, rhi] */
  TSR_CLI_FLOAT,  /* float *: a finite FP32 number in [rlo, rhi] */
  TSR_CLI_STRING, /* const char **: the text */
  TSR_CLI_CHOICE, /* int *: index of the text in choices (NULL-terminated) */
  TSR_CLI_CUSTOM  /* parse(verb, opt, text) stores into opt->dest */
} tsr_cli_kind;

enum {
  TSR_CLI_HIDDEN = 1u,   /* not listed by --help (internal) */
  TSR_CLI_NONEMPTY = 2u, /* STRING: '' is refused */
  TSR_CLI_ABOVE = 4u     /* REAL/FLOAT: rlo itself is refused (x > rlo) */
};

typedef struct tsr_cli_opt tsr_cli_opt;
struct tsr_cli_opt {
  const char *name; /* "--samples" */
  tsr_cli_kind kind;
  void *dest;
  long long lo, hi;           /* INT */
  double rlo, rhi;            /* REAL, FLOAT */
  const char *const *choices; /* CHOICE */
  /* CUSTOM: 0 when stored, else -1 after one tsr_cli_usage_error line. */
  int (*parse)(const char *verb, const tsr_cli_opt *opt, const char *text);
  const char *metavar; /* "N"; valued options only */
  const char *help;    /* lines separated by '\n' */
  unsigned flags;
  int *seen; /* optional: set to 1 when the option is given */
};

/* Typed table entries: the pointer's type is checked at compile time. */
#define TSR_CLI_PTR_(T, p) ((void *)(1 ? (p) : (T *)0))
#define TSR_CLI_OPT_FLAG(n, p, h) {.name = (n), .kind = TSR_CLI_FLAG, .dest = TSR_CLI_PTR_(int, p), .help = (h)}
#define TSR_CLI_OPT_INT(n, p, l, u, mv, h)                                                       \
  {.name = (n), .kind = TSR_CLI_INT, .dest = TSR_CLI_PTR_(long long, p), .lo = (l), .hi = (u),  \
   .metavar = (mv), .help = (h)}
#define TSR_CLI_OPT_REAL(n, p, l, u, mv, h)                                                      \
  {.name = (n), .kind = TSR_CLI_REAL, .dest = TSR_CLI_PTR_(double, p), .rlo = (l), .rhi = (u),  \
   .metavar = (mv), .help = (h)}
#define TSR_CLI_OPT_FLOAT(n, p, l, u, mv, h)                                                     \
  {.name = (n), .kind = TSR_CLI_FLOAT, .dest = TSR_CLI_PTR_(float, p), .rlo = (l), .rhi = (u),  \
   .metavar = (mv), .help = (h)}
#define TSR_CLI_OPT_STRING(n, p, mv, h)                                                          \
  {.name = (n), .kind = TSR_CLI_STRING, .dest = TSR_CLI_PTR_(const char *, p), .metavar = (mv), \
   .help = (h)}
#define TSR_CLI_OPT_CHOICE(n, p, ch, mv, h)                                                      \
  {.name = (n), .kind = TSR_CLI_CHOICE, .dest = TSR_CLI_PTR_(int, p), .choices = (ch),          \
   .metavar = (mv), .help = (h)}
#define TSR_CLI_OPT_CUSTOM(n, fn, p, mv, h)                                                      \
  {.name = (n), .kind = TSR_CLI_CUSTOM, .parse = (fn), .dest = (p), .metavar = (mv), .help = (h)}

/* Largest finite float, the range of FLOAT options without other limits. */
#define TSR_CLI_FLT_MAX 3.4028234663852886e38

typedef struct {
  const char *verb;
  const char *usage;  /* usage lines and description, printed before the options */
  const char *footer; /* printed after the options (exit codes), may be NULL */
  const tsr_cli_opt *opts;
  size_t nopts;
  /* Operands (arguments that are not options): at most max_operands, stored
   * in operands[]; their name for messages, e.g. "DIR". */
  const char **operands;
  int max_operands;
  const char *operand_name;
} tsr_cli_spec;

/* Parses argv[1..argc) against the table. Returns TSR_CLI_CONTINUE when the
 * verb should go on, TSR_EXIT_OK after printing --help (-h), or
 * TSR_EXIT_USAGE after one usage line. */
#define TSR_CLI_CONTINUE (-1)
int tsr_cli_parse(const tsr_cli_spec *s, int argc, char **argv);
/* The generated help: usage, the option list, footer. */
void tsr_cli_print_help(const tsr_cli_spec *s, FILE *f);

/* Custom parsers shared by the verbs. */
int tsr_cli_opt_inputs(const char *verb, const tsr_cli_opt *o, const char *text);    /* tsr_inputs * */
int tsr_cli_opt_precision(const char *verb, const tsr_cli_opt *o, const char *text); /* tsr_precision * */
/* int *: a non-dyadic input family, or -1 for "off". */
int tsr_cli_opt_accuracy(const char *verb, const tsr_cli_opt *o, const char *text);

/* Splits a comma list for option `name` (at most max items): every item
 * non-empty. Returns the count with *items malloc'd (each item malloc'd;
 * free with tsr_cli_list_free), or -1 after one usage line. */
int tsr_cli_split_list(const char *verb, const char *name, const char *text, int max,
                       char ***items);
void tsr_cli_list_free(char **items, int n);

/* --max-memory GIB of gemm, tune and bench: host bytes (0: not given, the
 * default applies). */
#define TSR_CLI_MAX_MEMORY_HELP                                                           \
  "refuse a shape whose estimated host memory exceeds GIB GiB\n"                          \
  "(default: 80% of physical memory)"
int tsr_cli_opt_gib(const char *verb, const tsr_cli_opt *o, const char *text); /* double * bytes */

/* ---- problem options shared by gemm, plan, emit, tune (cli/common.c) ---- */
typedef struct {
  const char *shape;       /* --shape MxNxK (required) */
  const char *plan;        /* --plan TEXT over the backend's default plan (a whole text: as it is) */
  const char *backend;     /* --backend auto|cpu|cuda|cublas|hand */
  long long batch;         /* --batch */
  int trans_a, trans_b;    /* --trans-a, --trans-b */
  float alpha, beta;       /* --alpha, --beta */
  tsr_precision precision; /* --precision */
} tsr_cli_problem_opts;

#define TSR_CLI_PROBLEM_NOPTS 9
void tsr_cli_problem_defaults(tsr_cli_problem_opts *o, const char *backend);
/* Writes the TSR_CLI_PROBLEM_NOPTS table entries of the shared problem
 * options (bound to o) to out; returns their count. */
size_t tsr_cli_problem_table(tsr_cli_problem_opts *o, tsr_cli_opt *out);
/* Build and check the problem; resolve the backend (auto → cuda when usable,
 * else cpu); default plan (tuning database, else built-in) overlaid by
 * --plan; source (may be NULL) receives where the plan came from, as
 * tsr_plan_lookup says it. Prints one usage line and returns TSR_EXIT_USAGE
 * on bad input. */
int tsr_cli_problem_finish(const char *verb, tsr_context *ctx, const tsr_cli_problem_opts *o,
                           tsr_problem *p, tsr_backend_kind *backend, tsr_plan *plan,
                           char *source, size_t cap);

#ifdef TSR_WITH_MPI
/* ---- tessera-mpi (cli/tune_mpi.c; docs/tune.md, "Scale-out") ----------
 * tessera tune's work items run by the ranks of an MPI job from one
 * dynamic queue. */
typedef struct {
  int nitems;
  /* Runs item i into db_path with the provenance rank of ranks: 0, 1 (no
   * valid candidate), 2 (refused). */
  int (*run)(void *arg, int item, const char *db_path, int rank, int ranks);
  /* 1 when item i has a finished run in db_path, 0 when not (or no file),
   * -1 after printing why the file is unusable. */
  int (*done)(void *arg, int item, const char *db_path);
  /* This process's tuning key (device, arch, driver, NVRTC, version). */
  int (*target)(void *arg, char *buf, size_t cap);
  void *arg;
  const char *db_path; /* the merged database, on each rank's local disk */
} tsr_cli_tune_queue;

/* ---- the shared MPI plumbing (cli/mpi.c) ---- */
/* MPI_Init (threads: serialized at least) and the local rank's GPU
 * (CUDA_VISIBLE_DEVICES), before any device is touched. 0 or an exit code
 * (messages name verb). */
int tsr_cli_mpi_begin(const char *verb);
/* Runs the queue when every rank's rc is 0 (else returns the largest rc):
 * the mixed-device check, resume, the queue, the merge on rank 0 and its
 * broadcast. Returns the job's exit code (the largest of the ranks'). */
int tsr_cli_tune_mpi(const tsr_cli_tune_queue *q, int rc);
/* tessera-mpi bench (cli/bench_mpi.c; docs/protocol.md, "Under MPI"): c
 * parsed and checked as for tessera bench (preset defaults applied, out_dir
 * NULL for the default). MPI starts and ends inside. The job's exit code. */
#include "bench/bench.h"
int tsr_cli_bench_mpi(tsr__bench_config *c);
/* MPI_Finalize; returns rc. */
int tsr_cli_mpi_end(int rc);
int tsr_cli_mpi_rank(void);
int tsr_cli_mpi_size(void);
int tsr_cli_mpi_local(void);         /* rank among the ranks of this host */
int tsr_cli_mpi_node_has_root(void); /* 1 when rank 0 runs on this host */
/* The largest v over all ranks (collective). */
int tsr_cli_mpi_agree_max(int v);
/* path's bytes (malloc'd) and length: 0 (len -1 when there is no such
 * file), or -1 when it cannot be read. */
int tsr_cli_mpi_read_file(const char *path, char **buf, int64_t *len);
/* path written whole or not at all: temporary file, fsync, rename. 0 or -1. */
int tsr_cli_mpi_write_atomic(const char *path, const char *buf, int64_t len);
/* A length (negative: no bytes follow) then the bytes, in chunks. */
void tsr_cli_mpi_send_bytes(const char *buf, int64_t len, int dest, int tag);
/* What tsr_cli_mpi_send_bytes sent (NULL when the length is negative). */
char *tsr_cli_mpi_recv_bytes(int src, int tag, int64_t *len);
/* malloc, or MPI_Abort: out of memory mid-transfer leaves the peers waiting. */
void *tsr_cli_mpi_xmalloc(size_t n);
#endif

#endif
