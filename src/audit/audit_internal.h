/* Shared state of one audit run (check.c, tables.c, report_md.c). */
#ifndef TSR_AUDIT_INTERNAL_H
#define TSR_AUDIT_INTERNAL_H

#include "audit/audit.h"

#define TSR__AUDIT_METRICS 6
/* The format definition: metric names in table order, GPU first. */
extern const char *const tsr__audit_metric_names[TSR__AUDIT_METRICS];
int tsr__audit_metric_is_gpu(int m);

typedef struct {
  const char *label;
  int64_t m, n, k;
  int64_t batch;    /* the shape's own (protocol.shapes[i]) or the protocol's */
  char op_a, op_b;  /* 'N' or 'T', likewise */
} tsr__audit_shape;

typedef struct {
  const tsr__audit_input *in;
  const tsr__audit_options *opt;
  tsr__audit_result *res;
  const json_t *doc, *proto;
  int samples, rounds, S, R;
  int rounds_planned;              /* protocol.rounds; rounds is fewer when --max-seconds stopped the run */
  int64_t batch;
  tsr__audit_shape *shapes;        /* S */
  json_t *shape_ix;                /* label → index of the first shape with it */
  json_t *lib_ix;                  /* artifacts.libraries paths (a set) */
  const char *base[TSR_AUDIT_MAX_ROUTES];
  int base_gpu[TSR_AUDIT_MAX_ROUTES];
  int usable;                      /* rounds, shapes and routes are usable for indexing */
  const json_t **slot;             /* [(r*S + s)*R + route] → row or NULL */
  double *p50;                     /* [((m*S + s)*R + route)*rounds + r], NaN: not valid */
  int balanced;                    /* recomputed */
  double threshold;                /* unstable threshold: the protocol's */
  int version;                     /* schema: 3, 2 or 1 */
  int v2;                          /* version >= 2: precision modes and accuracy receipts */
  int v3;                          /* version >= 3: hash chain, digest, output hashes */
  const char *accuracy_inputs;     /* protocol.accuracy_inputs (v2), NULL: none */
  const char *work_dir;            /* the first row's --work-dir, for the others */
  char out_dir[4096];              /* --out of the recorded command line ("" when absent) */
} tsr__audit_ctx;

/* Index of the (first) shape with this label, -1 when none. */
int tsr__audit_shape_index(const tsr__audit_ctx *c, const char *label);

/* Helpers. */
const char *tsr__audit_str(const json_t *o, const char *key);
/* 1 when o[key] is the string value. */
int tsr__audit_is(const json_t *o, const char *key, const char *value);
int tsr__audit_int(const json_t *o, const char *key, json_int_t *out);
/* Integer or real (finite or not, incl. the "nan"/"inf"/"-inf" strings). */
int tsr__audit_num(const json_t *v, double *out);

void tsr__audit_check_tables(tsr__audit_ctx *c);
void tsr__audit_check_report(tsr__audit_ctx *c);

/* Route facts of the format definition (check.c). */
int tsr__audit_route_is_cpu_backend(const char *name); /* tessera-cpu, tessera-cpu-default */
int tsr__audit_route_deterministic(const char *name);  /* tessera's own kernels */
int tsr__audit_route_is_torch(const char *name);
int tsr__audit_is_hex64(const char *s);

/* The raw document against itself (evidence.c): every field with a second
 * source. Per row (after the row's own checks), then over the run. */
void tsr__audit_check_row_evidence(tsr__audit_ctx *c, const json_t *row, const char *where, int si,
                                   int ri);
void tsr__audit_check_run_evidence(tsr__audit_ctx *c);
/* The recorded command line against the protocol (before the rows). */
void tsr__audit_check_command_line(tsr__audit_ctx *c);
/* Hash chain and digest (chain.c). */
void tsr__audit_check_chain(tsr__audit_ctx *c);
/* Whole derived files regenerated and compared, SVG numbers (outputs.c). */
void tsr__audit_check_outputs(tsr__audit_ctx *c);

#endif
