/* The benchmark protocol (BRIEF §6, docs/protocol.md): routes,
 * per-process measurements, the raw results document ("tessera-bench/1")
 * and the report derived from it alone. The balanced round orders and the
 * statistics are the measure layer's (measure/stats.h), shared with the
 * tuner. */
#ifndef TSR_BENCH_BENCH_H
#define TSR_BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "measure/measure.h"
#include "measure/stats.h" /* the balanced orders and statistics the protocol uses */
#include "measure/zoo.h"
#include "tessera.h"

#define TSR_BENCH_SCHEMA "tessera-bench/3"
#define TSR_BENCH_ROW_SCHEMA "tessera-bench-row/3"
#define TSR_BENCH_TABLES_SCHEMA "tessera-bench-tables/1"
#define TSR_BENCH_MAX_ROUTES 10

/* ---- routes ------------------------------------------------------------ */
typedef enum {
  TSR_ROUTE_BACKEND = 0, /* a tessera backend through the vtable */
  TSR_ROUTE_OPENBLAS,    /* dlopen'ed cblas_sgemm (src/bench/routes/openblas.c) */
  TSR_ROUTE_TORCH        /* python3 src/bench/routes/torch_route.py */
} tsr__route_kind;

typedef struct {
  const char *name;
  tsr__route_kind kind;
  tsr_backend_kind backend; /* for TSR_ROUTE_BACKEND */
  int is_gpu;
  /* 1: the backend's built-in default plan, the tuning database bypassed
   * (the held-out "default" side of a tuned-vs-default replay). */
  int builtin_plan;
  /* The precision mode the route runs: AUTO follows the bench's --precision
   * (tessera's routes); peers have their own (cublas strict, cublas-tf32
   * tf32, ...). */
  tsr_precision precision;
  /* 1: runs only when --routes names it */
  int named_only;
} tsr__route;

/* The route table in its default base order. */
extern const tsr__route tsr__routes[];
extern const int tsr__route_count;
const tsr__route *tsr__route_find(const char *name);

/* ---- metrics ----------------------------------------------------------- */
/* GPU routes record the four GPU metrics, CPU routes the two wall metrics. */
typedef enum {
  TSR_METRIC_GPU_BATCH = 0,
  TSR_METRIC_GPU_SINGLE,
  TSR_METRIC_E2E_BATCH,
  TSR_METRIC_E2E_SINGLE,
  TSR_METRIC_WALL_BATCH,
  TSR_METRIC_WALL_SINGLE,
  TSR_METRIC_COUNT
} tsr__metric;

const char *tsr__metric_name(tsr__metric m);
/* 1 when metric m belongs to GPU routes, 0 for CPU routes. */
int tsr__metric_is_gpu(tsr__metric m);

/* ---- results document (results.c) ------------------------------------- */
/* jansson cannot store NaN/Inf: finite doubles become reals, others the
 * strings "nan", "inf", "-inf". */
json_t *tsr__json_real(double v);
/* Inverse of tsr__json_real (also accepts integers); NaN when absent. */
double tsr__json_to_double(const json_t *v);
/* Receipt as JSON (with phase label). */
json_t *tsr__receipt_json(const tsr_receipt *r, const char *phase, int64_t expected);
/* Tamper evidence (docs/protocol.md, "Hash chain and digest"). The
 * canonical form of a JSON value: jansson, compact, keys sorted, reals with
 * 17 significant digits (what results.json stores, so a value read back
 * canonicalizes to the same bytes). */
#define TSR_BENCH_CANONICAL_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)
#define TSR_BENCH_CANONICAL_TEXT "jansson JSON_COMPACT|JSON_SORT_KEYS|JSON_REAL_PRECISION(17), UTF-8"
char *tsr__canonical_json(const json_t *v); /* malloc'd, NULL on failure */
/* genesis = SHA-256("tessera-bench/3 genesis\n" || canon(the fields fixed
 * before the first row)); link = SHA-256("tessera-bench/3 row\n" || prev ||
 * "\n" || canon(row without "chain")); digest = SHA-256("tessera-bench/3
 * digest\n" || canon(document without "digest")). Hex in out; 0 on success. */
int tsr__chain_genesis(const json_t *doc, char out[65]);
int tsr__chain_link(const char prev[65], const json_t *row, char out[65]);
int tsr__chain_digest(const json_t *doc, char out[65]);
/* Serialize doc to path atomically (temp file in the same directory,
 * fsync, rename). 0 on success; msg names the failing step. */
int tsr__json_write_atomic(const json_t *doc, const char *path, char *msg, size_t cap);
/* The bytes tsr__json_write_atomic writes (indented, keys sorted, 17
 * digits, a final newline); malloc'd, NULL on failure. */
char *tsr__json_file_text(const json_t *doc, size_t *len);

/* ---- system facts (sysinfo.c) ------------------------------------------ */
json_t *tsr__host_json(void);   /* hostname, cpu_model, ncpu, kernel */
json_t *tsr__device_json(void); /* NVIDIA driver / GPUs from /proc/driver/nvidia */
/* Paths of mapped shared objects of this process whose basename matches a
 * benchmark-relevant library (libtessera, libcuda, libnvrtc, libcublas,
 * libopenblas, libtorch, libc10). */
json_t *tsr__mapped_libraries(void);
void tsr__utc_now(char *buf, size_t cap); /* ISO 8601 "2026-11-29T12:00:00Z" */

/* ---- the child measurement (runner.c) ---------------------------------- */
typedef struct {
  const tsr__route *route;
  tsr_problem problem;
  char shape_label[64];
  tsr_inputs inputs;
  uint64_t seed;
  int samples;
  int sample_ms, warmup_ms;
  int threads;
  double atol, rtol;        /* dyadic inputs (exact when 0); others: the contract */
  tsr_precision precision;  /* for routes that follow the bench's mode */
  int accuracy;             /* input family of the accuracy receipt, -1: none */
  uint64_t accuracy_seed;
  const char *oracle_cache; /* NULL: none */
  const char *work_dir;     /* scratch files (torch outputs) */
  const char *torch_script;
  const char *torch_zygote; /* socket of a torch_route.py --zygote, NULL: exec python3 */
} tsr__run_params;

/* Measures one (route, shape) in this process and returns the row result
 * object (schema tessera-bench-row/3); never NULL. */
json_t *tsr__run_measure(const tsr__run_params *rp);
/* Compute (or verify) the cached oracle of a problem: {status, error,
 * source, key_sha256, ns}. */
json_t *tsr__run_oracle(const tsr_problem *p, tsr_inputs inputs, uint64_t seed,
                        const char *cache_dir);
/* Availability of a route in this process: {route, available, reason,
 * versions{}}. */
json_t *tsr__run_probe(const tsr__route *route, const char *torch_script);
/* Default location of torch_route.py: $TSR_TORCH_SCRIPT, then next to the
 * executable's source tree, then the source tree this file was compiled
 * from. Static buffer. */
const char *tsr__torch_script_default(void);

/* ---- the torch zygote (torch_zygote.c) --------------------------------- */
/* A `python3 torch_route.py --zygote SOCKET` that has imported torch (never
 * CUDA) and forks one fresh process per torch row (docs/protocol.md). */
typedef struct {
  int pid;      /* 0: not running */
  int stdin_fd; /* closing it ends the zygote */
  char sock[108];
} tsr__torch_zygote;
/* Starts it and waits (up to timeout_s) for its ready line, returned in
 * *ready (parsed JSON, caller owns). Nonzero with msg on failure. */
int tsr__torch_zygote_start(tsr__torch_zygote *z, const char *script, const char *log_path,
                            int timeout_s, json_t **ready, char *msg, size_t cap);
void tsr__torch_zygote_stop(tsr__torch_zygote *z);

/* ---- the orchestrator (orchestrate.c) ---------------------------------- */
typedef struct {
  const char *routes;  /* comma list, NULL: every route of the table */
  char **shapes;       /* tokens "[B*]MxNxK[:XY]" (measure/zoo.h), the rows' labels */
  int nshapes;
  int batch, trans_a, trans_b; /* defaults of tokens without their own batch / ops */
  float alpha, beta;
  tsr_inputs inputs;
  uint64_t seed;
  tsr_precision precision; /* mode of the routes that follow the bench's */
  int accuracy;            /* family of each row's accuracy receipt, -1: none */
  int samples, sample_ms, warmup_ms;
  int rounds; /* 0: 2R */
  int timeout_s;
  /* > 0: no round starts that would end past this many seconds after the
   * run's start (each round estimated as long as the longest so far), once the
   * rounds done balance the order; the run then ends early, recorded in
   * doc.stopped (docs/protocol.md "Deadline") */
  double max_seconds;
  int threads;
  double atol, rtol;
  double unstable_threshold;
  const char *preset; /* label, may be NULL */
  const char *out_dir;
  const char *oracle_cache; /* NULL: none */
  const char *torch_script;
  int torch_exec; /* 1: a fresh python3 per torch row; 0: fork from a zygote */
  int progress; /* progress line on stderr */
  double max_memory; /* host bytes one measurement may need; 0: 80% of physical memory */
  int quiet_tables;  /* 1: the tables are not printed (a rank of an MPI job) */
  int argc;
  char **argv; /* full command line for the record */
} tsr__bench_config;

/* Shape i of cfg as the problem it measures: the token's extents, its
 * batch and ops or else cfg's --batch/--trans-a/--trans-b, cfg's alpha and
 * beta. 0, or nonzero with msg (not naming the token). */
int tsr__bench_shape_problem(const tsr__bench_config *cfg, int i, tsr_problem *p, char *msg,
                             size_t cap);

/* Runs the whole protocol; returns a CLI exit code (0 all rows valid,
 * 1 some row failed/crashed/timed out, 2 refused or nothing to run). First
 * of all, before any child or directory exists, every shape × batch is
 * refused (exit 2, one line) whose estimated host memory in a measuring
 * child (tsr__measure_host_bytes over the requested routes) exceeds
 * max_memory. */
int tsr__bench_run(const tsr__bench_config *cfg);
/* The up-front memory check of tsr__bench_run alone: 0, or 2 after one line. */
int tsr__bench_preflight(const tsr__bench_config *cfg);
/* The devices the requested routes of cfg run on, for the check that every
 * rank of an MPI job runs the same model (docs/protocol.md, "Under MPI"):
 * {tessera_version, gpu: {device, sm_count, compute_capability,
 * cuda_driver_version, nvrtc_version} | null (no usable GPU), cpu:
 * {cpu_model, ncpu_online}}; gpu only when a GPU route is requested, cpu
 * only when a CPU route is. The GPU is probed in a child process. */
json_t *tsr__bench_device_key(const tsr__bench_config *cfg);

/* ---- the bench under MPI (combine.c; docs/protocol.md, "Under MPI") ---- */
#define TSR_BENCH_MPI_SCHEMA "tessera-bench-mpi/1"
/* SHA-256("tessera-bench-mpi/1 digest\n" || canon(combined without
 * "digest")), hex; 0 on success. */
int tsr__bench_combined_digest(const json_t *combined, char out[65]);
/* report.md of a combined directory from combined.json and the ranks'
 * results.json documents (docs[i] for per_rank[i]; NULL when missing):
 * per shape of the command, the table of the rank that measured it. *md
 * malloc'd; 0, or -1 with msg. */
int tsr__bench_combined_render(const json_t *combined, json_t *const *docs, size_t n, char **md,
                               char *msg, size_t cap);
/* Completes combined (its per_rank[] name each rank's directory under dir)
 * from each DIR/<rank dir>/results.json: the file's SHA-256, the run's
 * digest, rows and failed rows; sets finished_utc and the digest; writes
 * DIR/report.md and then DIR/combined.json atomically. digest receives the
 * combined digest, *md (optional) report.md. 0, or -1 with msg. */
int tsr__bench_combine(const char *dir, json_t *combined, char digest[65], char **md, char *msg,
                       size_t cap);

/* ---- report (report.c) -------------------------------------------------- */
/* Tables computed from the raw document alone (schema
 * tessera-bench-tables/1). threshold < 0 takes the document's own. */
json_t *tsr__bench_tables(const json_t *doc, double threshold, char *msg, size_t cap);
/* Writes report.md, tables.json and ratios_<metric>.svg into dir from the
 * raw document; md_out (optional) receives the table text for printing.
 * 0 on success. */
int tsr__bench_report(const json_t *doc, const char *dir, double threshold, char **md_tables,
                      char *msg, size_t cap);
/* The same files in memory: *files = {name: text} (new reference), byte for
 * byte what tsr__bench_report writes. 0 on success. The audit regenerates a
 * directory's derived files through this (passed in by the CLI). */
int tsr__bench_render(const json_t *doc, double threshold, json_t **files, char *msg, size_t cap);

/* ---- standings by zoo class (zoo_summary.c; docs/zoo.md) --------------- */
typedef struct {
  const tsr__zoo_shape *z; /* the zoo entry (NULL: not in the zoo) */
  char label[64];          /* the canonical token: extents, batch and ops */
  double ratio, lo, hi;    /* ref / peer time: median of same-round ratios [min, max] */
  double err_ref, err_peer; /* median relative Frobenius errors (NaN: none) */
  int met, checked;        /* accuracy rounds met / checked, reference route */
  int kernels;             /* 1: every measured row of both routes ran one and the same
                            * kernel (plan_info's source_sha256, else its plan: the CPU
                            * backend), 0: they differ (between the routes or across one's
                            * rounds), -1: unknown (a vendor's route) */
} tsr__zoo_row;
/* How many of doc's shapes are in the zoo zs[0..nz) (extents, batch and
 * ops: the shape's own, else the protocol's); their classes' bits (1 << the
 * index in tsr__zoo_classes) are or'ed into *classes. */
int tsr__bench_zoo_shapes(const json_t *doc, const tsr__zoo_shape *zs, int nz, unsigned *classes);
/* Appends to *rows one row per shape of doc with a paired ref / peer ratio
 * (at least one paired round) in metric of tables (tsr__bench_tables of doc), each shape found in the
 * zoo zs[0..nz) by its extents, batch and ops (the shape's own, else the
 * protocol's). Returns how many it appended, or -1 with msg (no such
 * metric, out of memory). */
int tsr__bench_zoo_rows(const json_t *doc, const json_t *tables, const char *metric,
                        const char *ref, const char *peer, const tsr__zoo_shape *zs, int nz,
                        tsr__zoo_row **rows, int *nrows, char *msg, size_t cap);
/* Markdown: a heading, per class (then the shapes of no class) the shapes,
 * the geometric mean of the ratios, the worst shape with its ratio [min,
 * max], the reference's accuracy rounds met and its largest error relative
 * to the peer's; then one line per shape. Where some row's kernels are known
 * (two tessera routes, as a tuned/default replay), each shape line says
 * whether both ran the same kernel, and a line counts them: a ratio there is
 * the protocol's noise, not a plan's effect. malloc'd, NULL when out of memory. */
char *tsr__bench_zoo_summary_md(const tsr__zoo_row *r, int n, const char *ref, const char *peer,
                                const char *metric);
/* The reports' standings by zoo class: {route, peer, metric} per backend
 * (tessera-gpu vs cublas on gpu_batch, tessera-cpu vs openblas on wall_batch) */
#define TSR__ZOO_PAIRS 2
extern const char *const tsr__zoo_pairs[TSR__ZOO_PAIRS][3];

#endif
