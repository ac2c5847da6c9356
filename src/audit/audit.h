/* The independent auditor of a bench results directory (BRIEF §7,
 * docs/audit.md). It reloads results.json (tessera-bench/3, /2, /1),
 * tables.json (tessera-bench-tables/1), report.md, the SVG charts and the
 * row logs and re-derives everything from the raw nanoseconds and call
 * counts: rows, samples, receipts, every field that has a second source,
 * the design implied by the recorded command line, the order and its
 * balance, every table value, ratio and reported number, the hash chain and
 * digest, and the artifact hashes. It shares only jansson and the file
 * format definition with the bench: none of src/bench/ (statistics, order,
 * validation) is used. The derived files are regenerated, for a whole-file
 * comparison, by a renderer the caller passes in (the CLI passes the
 * bench's): the numbers inside them are recomputed here independently. */
#ifndef TSR_AUDIT_AUDIT_H
#define TSR_AUDIT_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define TSR_AUDIT_SCHEMA "tessera-audit/1"
/* The format definition (docs/protocol.md). */
#define TSR_AUDIT_BENCH_SCHEMA "tessera-bench/3"
#define TSR_AUDIT_ROW_SCHEMA "tessera-bench-row/3"
/* Written before tamper evidence (no hash chain, digest or output hashes):
 * audited on what they record, with a note saying so. */
#define TSR_AUDIT_BENCH_SCHEMA_V2 "tessera-bench/2"
#define TSR_AUDIT_ROW_SCHEMA_V2 "tessera-bench-row/2"
/* Written before the accuracy contract as well: no accuracy figures. */
#define TSR_AUDIT_BENCH_SCHEMA_V1 "tessera-bench/1"
#define TSR_AUDIT_ROW_SCHEMA_V1 "tessera-bench-row/1"
/* The canonical form the hash chain is computed over (docs/protocol.md):
 * jansson, compact, keys sorted, reals with 17 significant digits. */
#define TSR_AUDIT_CANONICAL_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)
#define TSR_AUDIT_CANONICAL_TEXT "jansson JSON_COMPACT|JSON_SORT_KEYS|JSON_REAL_PRECISION(17), UTF-8"
/* Largest row log read (logs/NNNN-...log): a larger one is a finding. */
#define TSR_AUDIT_MAX_LOG_BYTES ((size_t)64 << 20)
#define TSR_AUDIT_TABLES_SCHEMA "tessera-bench-tables/1"
/* Relative tolerance of every recomputed value. */
#define TSR_AUDIT_RTOL 1e-9
/* rounds × shapes × routes above this is refused as implausible. */
#define TSR_AUDIT_MAX_SLOTS (1u << 20)
#define TSR_AUDIT_MAX_ROUTES 10
/* Largest results.json, tables.json or report.md read (docs/audit.md): a
 * larger file, or anything but a regular file, is unusable input. */
#define TSR_AUDIT_MAX_FILE_BYTES ((size_t)1 << 30)

/* Reasons: one token per kind of finding (name, meaning). */
#define TSR__AUDIT_REASONS(X)                                                                    \
  X(SCHEMA, "schema", "a required field is missing or has the wrong type")                       \
  X(INCOMPLETE, "incomplete", "results.json is not marked complete")                             \
  X(PROTOCOL, "protocol", "a protocol parameter is missing, out of range or inconsistent")       \
  X(ROUTE, "route", "the route list or base order is inconsistent with the format")              \
  X(ROW_MISSING, "row_missing", "a (round, shape, route) row is absent")                         \
  X(ROW_DUPLICATE, "row_duplicate", "a (round, shape, route) row occurs more than once")         \
  X(ROW_UNEXPECTED, "row_unexpected", "a row names an unknown round, shape or route")            \
  X(ROW_IDENTITY, "row_identity", "a row's child result names another route or shape")           \
  X(ROW_STATUS, "row_status", "a row's status contradicts its exit, result or samples")          \
  X(SAMPLE_COUNT, "sample_count", "a valid row lacks a metric or has not `samples` samples")     \
  X(SAMPLE_VALUE, "sample_value", "a sample's ns is not a finite positive integer")              \
  X(CALL_COUNT, "call_count", "a sample's call count is not a positive integer (1 for single)")  \
  X(ELEMENT_COUNT, "element_count", "M×N×batch of a row or receipt differs from its shape")      \
  X(PROBLEM, "problem", "a row's K, ops, alpha or beta differ from the protocol")                \
  X(VALIDATION, "validation", "a valid row lacks two passed receipts")                           \
  X(ACCURACY, "accuracy",                                                                        \
    "a row's accuracy receipt is missing, breaks or misstates its precision mode's contract")    \
  X(INSTRUMENTED, "instrumented", "a row ran under a profiler, tool injection or sanitizer")     \
  X(INSTRUMENTATION_UNRECORDED, "instrumentation_unrecorded",                                     \
    "a row's child result has no instrumentation record")                                        \
  X(ISOLATION, "isolation", "a torch row's process record contradicts one process per row")     \
  X(SOURCE_HASH, "source_hash", "a generated-source SHA-256 is missing, varies or differs")      \
  X(ARTIFACT_HASH, "artifact_hash", "an executable/library/script hash is missing or malformed") \
  X(ARTIFACT_CHANGED, "artifact_changed", "an artifact changed during the run or differs on disk") \
  X(ORDER_DESIGN, "order_design", "the realized order differs from the documented design")       \
  X(ORDER_BALANCE, "order_balance", "the realized order is not balanced")                        \
  X(ORDER_RECORD, "order_record", "the recorded order (realized/planned/check) is inconsistent") \
  X(SUMMARY, "summary", "the summary counts differ from the rows")                               \
  X(TABLE_MISMATCH, "table_mismatch", "a tables.json value differs from the recomputation")      \
  X(REPORT_MISMATCH, "report_mismatch", "a report.md number differs from the recomputation")     \
  X(FAILURE_UNREPORTED, "failure_unreported", "a failed row is not listed as failed")            \
  X(SEQUENCE, "sequence", "the rows' seq is not 0, 1, 2, ... in file order (a gap: a hidden re-run)") \
  X(TIMESTAMPS, "timestamps", "start, finish and the recorded durations contradict each other")  \
  X(CALIBRATION, "calibration",                                                                  \
    "a batch sample's calls or the calibration record contradict the calibration rule")          \
  X(CHILD_TIME, "child_time", "a row's samples and warm-up take longer than its child process ran") \
  X(ROW_ARGV, "row_argv", "a row's child command line names another route, shape or protocol value") \
  X(ROW_DEVICE, "row_device", "a row reports another device or library version than its route's probe") \
  X(ROW_THREADS, "row_threads", "a row's thread count differs from the protocol's")               \
  X(ROW_ORACLE, "row_oracle", "a row's oracle key or key hash does not name its problem and inputs") \
  X(ROW_PLAN, "row_plan", "a route's plan differs between the rounds of a shape")                \
  X(RECEIPT_TOLERANCE, "receipt_tolerance",                                                      \
    "a receipt's tolerance, contract or reference error is not the protocol's")                  \
  X(RECEIPT_LOGIC, "receipt_logic", "a receipt's own figures contradict each other")             \
  X(OUTPUT_HASH, "output_hash",                                                                  \
    "an output SHA-256 is missing, or a deterministic route's outputs differ")                   \
  X(LOG, "log", "a row log contradicts the row's status or record")                              \
  X(COMMAND_LINE, "command_line",                                                                \
    "the recorded command line implies another design (shapes, routes, rounds, samples, ...)")   \
  X(ORACLE_LIST, "oracle_list", "the oracle precompute list differs from the protocol's shapes")  \
  X(SVG_MISMATCH, "svg_mismatch", "a chart differs from the one regenerated from results.json")  \
  X(CHAIN, "chain", "the hash chain over the rows is missing or broken")                         \
  X(DIGEST, "digest", "the run's digest differs from the recomputation or from --digest")        \
  X(RANK_DIR, "rank_dir", "a rank directory that combined.json lists is missing or unusable")    \
  X(RANK_RECORD, "rank_record",                                                                  \
    "a rank's results differ from what combined.json records (hash, digest, shapes, command)")   \
  X(SHAPE_COVERAGE, "shape_coverage",                                                            \
    "a shape of the command is measured twice, lost, extra, or not where the division deals it") \
  X(DEVICE_MIX, "device_mix", "ranks ran on different device models, or contradict their key")  \
  X(COMBINED_REPORT, "combined_report",                                                          \
    "the combined report.md differs from the one regenerated from the rank results")

typedef enum {
#define TSR__AR_ENUM(id, name, text) TSR__AR_##id,
  TSR__AUDIT_REASONS(TSR__AR_ENUM)
#undef TSR__AR_ENUM
      TSR__AR_COUNT
} tsr__audit_reason;

const char *tsr__audit_reason_name(tsr__audit_reason r);
const char *tsr__audit_reason_text(tsr__audit_reason r);
/* -1 when unknown. */
int tsr__audit_reason_find(const char *name);
/* 1 for the reasons that make a results.json unusable for tabulation (its
 * structure: schema, protocol, route, row_unexpected, row_duplicate,
 * sample_count, sample_value, call_count), as opposed to findings about
 * what the well-formed document records. */
int tsr__audit_reason_is_structural(tsr__audit_reason r);

typedef struct {
  tsr__audit_reason reason;
  char where[192];  /* the failing row or field */
  char detail[384]; /* what was found and what was expected */
} tsr__audit_finding;

/* Findings plus what was covered. At most TSR_AUDIT_MAX_FINDINGS are kept;
 * `total` and `counts` count all of them. */
#define TSR_AUDIT_MAX_FINDINGS 2000
typedef struct {
  tsr__audit_finding *items;
  size_t n, cap, total;
  size_t counts[TSR__AR_COUNT];
  /* coverage */
  size_t rows, rows_ok, rows_failed, samples, receipts;
  int64_t elements;
  int rounds, shapes, routes;
  int order_balanced; /* recomputed */
  size_t cells, ratios, report_numbers, artifacts_hashed, sources_regenerated;
  size_t svg_numbers, files_compared, output_hashes, chain_links, logs_checked;
  int schema_version; /* 3, 2 (before tamper evidence) or 1 (before the accuracy contract too) */
  int legacy_schema;  /* schema_version < 3 */
  char digest[65];    /* recomputed digest of results.json ("" when none) */
  int digest_verified; /* --digest given and equal to the recomputation */
  /* What the audit could not check and why (printed as "note:" lines). */
#define TSR_AUDIT_MAX_NOTES 8
  char notes[TSR_AUDIT_MAX_NOTES][320];
  int nnotes;
} tsr__audit_result;

void tsr__audit_result_init(tsr__audit_result *r);
void tsr__audit_result_free(tsr__audit_result *r);
void tsr__audit_fail(tsr__audit_result *r, tsr__audit_reason reason, const char *where,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* 1 when some finding has this reason. */
int tsr__audit_has(const tsr__audit_result *r, tsr__audit_reason reason);
void tsr__audit_note(tsr__audit_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- input (load.c) ----------------------------------------------------- */
typedef struct {
  json_t *results; /* tessera-bench/3, /2 or /1 */
  json_t *tables;  /* tessera-bench-tables/1 */
  char *tables_text; /* tables.json as read (the whole-file comparison) */
  size_t tables_len;
  char *report;    /* report.md, NUL-terminated */
  size_t report_len;
  /* From the directory (tsr__audit_load_dir; NULL from buffers): the SVG
   * charts {name: text} and the row logs {name: text}, logs NULL when DIR
   * has no logs/. */
  json_t *svgs, *logs;
  char *dir;
} tsr__audit_input;

/* Loads DIR/results.json, DIR/tables.json and DIR/report.md. Returns 0, or
 * -1 with one line in msg when the input is unusable (missing directory or
 * file, not a regular file, over TSR_AUDIT_MAX_FILE_BYTES, unreadable,
 * truncated or not JSON, duplicate keys, not a tessera-bench/1 object). */
int tsr__audit_load_dir(const char *dir, tsr__audit_input *in, char *msg, size_t cap);
/* The three file names, and the two halves of tsr__audit_load_dir: the raw
 * bytes of DIR's files (malloc'd, NUL-terminated; nothing kept on failure),
 * then their parse (the self-test keeps the bytes for exact copies). */
extern const char *const tsr__audit_files[3];
/* Names a row in findings: "row seq N (round r, SHAPE, ROUTE)", or
 * "rows[index] (...)" when it has no seq. */
void tsr__audit_row_where(const json_t *row, size_t index, char *buf, size_t cap);
int tsr__audit_read_dir(const char *dir, char *text[3], size_t len[3], char *msg, size_t cap);
int tsr__audit_load_raw(const char *dir, char *const text[3], const size_t len[3],
                        tsr__audit_input *in, char *msg, size_t cap);
/* Same from memory (the fuzz harness); tables/report may be NULL (their
 * checks then report them missing). */
int tsr__audit_load_buffers(const char *results, size_t results_len, const char *tables,
                            size_t tables_len, const char *report, size_t report_len,
                            tsr__audit_input *in, char *msg, size_t cap);
/* DIR's ratios_*.svg into in->svgs and logs/ into in->logs (regular files,
 * capped); 0, or -1 with one line in msg. */
int tsr__audit_load_extras(const char *dir, tsr__audit_input *in, char *msg, size_t cap);
void tsr__audit_input_free(tsr__audit_input *in);

/* The structural validation of a results document, shared by the audit
 * and `tessera report`: the audit's own checks of results.json alone. 0 when
 * no finding has a structural reason, else -1 with the first as one line
 * "<reason>: <field or row>: <detail>" in msg. An incomplete run (complete
 * false, rows missing) is usable. */
int tsr__audit_results_usable(const json_t *results, char *msg, size_t cap);
/* DIR/results.json for `tessera report`: read and parsed exactly as the
 * audit does (a regular file of at most TSR_AUDIT_MAX_FILE_BYTES, no
 * duplicate keys, tessera-bench/1), then tsr__audit_results_usable. 0 with
 * *out (new reference), or -1 with one line in msg. */
int tsr__audit_load_results(const char *dir, json_t **out, char *msg, size_t cap);

/* ---- the audit (check.c) ------------------------------------------------ */
/* Renders the derived files of a results document in memory: *files =
 * {name: text} (new reference), byte for byte what `tessera report` writes
 * with this unstable threshold. 0, or nonzero with msg. */
typedef int (*tsr__audit_render_fn)(const json_t *results, double threshold, json_t **files,
                                    char *msg, size_t cap);

typedef struct {
  int current_artifacts; /* hash the recorded artifacts on disk, regenerate sources */
  int results_only;      /* results.json alone: no tables.json / report.md comparison */
  /* The digest quoted elsewhere (64 lowercase hex): the run must have it. */
  const char *digest;
  /* NULL: the derived files are not regenerated (their numbers still are). */
  tsr__audit_render_fn render;
} tsr__audit_options;

/* "HEX" or "sha256:HEX" (64 hex digits, any case) into 64 lowercase hex;
 * 0, or -1 when it is not one. */
int tsr__audit_parse_digest(const char *text, char out[65]);
/* The chain's pieces as docs/protocol.md defines them, restated here (the
 * audit does not call the bench's): hex SHA-256 in out, 0 on success. */
int tsr__audit_chain_genesis(const json_t *doc, char out[65]);
int tsr__audit_chain_link(const char *prev, const json_t *row, char out[65]);
int tsr__audit_chain_digest(const json_t *doc, char out[65]);

void tsr__audit_check(const tsr__audit_input *in, const tsr__audit_options *opt,
                      tsr__audit_result *res);

/* ---- a combined directory of `tessera-mpi bench` (combined.c) ----------- */
#define TSR_AUDIT_MPI_SCHEMA "tessera-bench-mpi/1"
/* 1 when DIR holds a combined.json (then DIR is audited as a combination). */
int tsr__audit_is_combined(const char *dir);
/* The shapes a recorded bench command line names (--shapes, or the preset's
 * list), as a new array of labels; NULL when it names none. */
json_t *tsr__audit_command_shapes(const json_t *command_line);
/* Renders a combined directory's report.md from combined.json and the rank
 * documents (NULL for a missing one); passed in by the caller, as render. */
typedef int (*tsr__audit_render_combined_fn)(const json_t *combined, json_t *const *docs, size_t n,
                                             char **md, char *msg, size_t cap);
typedef struct {
  size_t nranks;
  char (*dirs)[4200];        /* DIR/rank<R> */
  int *loaded;               /* the rank directory could be read as a results directory */
  tsr__audit_result *ranks;  /* each rank directory's own audit */
  tsr__audit_result comb;    /* the combination's findings */
  size_t shapes;             /* shapes of the command */
  int report_compared;       /* report.md regenerated and compared whole */
} tsr__audit_combined;
/* Audits every rank directory combined.json lists (tsr__audit_check) and
 * the combination (docs/audit.md, "Combined directories"). 0, or -1 with
 * one line in msg when combined.json itself is unusable (exit 2). */
int tsr__audit_combined_check(const char *dir, const tsr__audit_options *opt,
                              tsr__audit_render_combined_fn render, tsr__audit_combined *out,
                              char *msg, size_t cap);
void tsr__audit_combined_free(tsr__audit_combined *c);
/* The verdict document (schema tessera-audit/1; new reference). */
json_t *tsr__audit_result_json(const tsr__audit_result *r, const char *dir);

/* ---- recomputation pieces (recompute.c) --------------------------------- */
/* Median of the finite values of v (odd count: middle; even: mean of the
 * two middle values); NaN when none. */
double tsr__audit_median(const double *v, size_t n);
/* p50 of one row's samples, each ns[i] / calls[i]; samples with ns <= 0 or
 * calls <= 0 are skipped; NaN when none remain. */
double tsr__audit_row_p50(const int64_t *ns, const int64_t *calls, size_t n);
/* max/min − 1 over the finite values; NaN when none or min <= 0. */
double tsr__audit_spread(const double *v, size_t n);
typedef struct {
  size_t count, slower;
  double median, min, max;
} tsr__audit_pair;
/* Same-round ratios ref[r]/peer[r] where both are finite and > 0 (ratios[r]
 * NaN elsewhere); median/min/max over them, slower = ratios > 1. */
void tsr__audit_pairs(const double *ref, const double *peer, size_t rounds, double *ratios,
                      tsr__audit_pair *out);
/* |a − b| <= TSR_AUDIT_RTOL · max(|a|, |b|); two NaNs are equal. */
int tsr__audit_close(double a, double b);
/* Printed text equals v rendered with fmt (one double conversion), allowing
 * v to move by TSR_AUDIT_RTOL relative. */
int tsr__audit_printed_equal(const char *text, const char *fmt, double v);

/* ---- order (order_design.c) ---------------------------------------------- */
/* Documented rule: route_at[r*R + p] = base index at position p of round r
 * = (q + floor(r/2)) mod R, q = p (even r) or R−1−p (odd r);
 * shape_at[r*S + j] = (j + r) mod S. */
void tsr__audit_design(int R, int S, int rounds, int *route_at, int *shape_at);
/* Balance of realized positions pos[(r*S + s)*R + route] (−1: did not run).
 * Fills position_counts[(s*R + route)*R + position] and
 * pair_counts[(s*R + x)*R + y] (x ran before y in the same round and
 * shape). Returns the number of problems: a missing route in a (round,
 * shape), unequal position counts within a shape, or an ordered pair more
 * often in one precedence than the other. */
int tsr__audit_balance(const int *pos, int R, int S, int rounds, int *position_counts,
                       int *pair_counts);

/* ---- self-test (selftest.c) ---------------------------------------------- */
/* Copies DIR into a temporary directory, audits the pristine copy and each
 * corrupted copy; prints one line per case to out (may be NULL) and appends
 * {case, expected, rejected, reasons} objects to cases (may be NULL).
 * Returns 0 when the pristine copy passes and every corruption is rejected
 * with its expected reason, 1 when not, 2 (msg set) when DIR is unusable or
 * the temporary copies cannot be made. */
int tsr__audit_self_test(const char *dir, const tsr__audit_options *opt, FILE *out,
                         json_t *cases, char *msg, size_t cap);

#endif
