/* The shape zoo (docs/zoo.md): the problem shapes users have, as data. Named
 * classes of real workloads (LLM training and inference GEMMs, attention-like
 * batched products, GEMV, small outputs with long K, tall-skinny panels,
 * squares) plus a seeded generator of log-uniform shapes with aligned and
 * unaligned draws, transposes and batch. A seeded quarter of the zoo is held
 * back (for checking that tuned plans carry over to unseen shapes). The same
 * seed gives the same zoo on every machine. */
#ifndef TSR_MEASURE_ZOO_H
#define TSR_MEASURE_ZOO_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

typedef struct {
  const char *cls;   /* class name (static) */
  char label[48];    /* "[B*]MxNxK[:OP]", e.g. "96*512x512x64:NT"; ops shown unless NN */
  int64_t m, n, k, batch;
  tsr_op op_a, op_b;
  int held_back;     /* 1: in the held-back part of this seed */
} tsr__zoo_shape;

/* A shape token of the bench (docs/protocol.md, "Shapes"): "[B*]MxNxK[:XY]",
 * the zoo's label form. B, the batch, and XY, op(A) op(B) each N or T, are
 * optional; has_batch/has_ops say whether the token gave them (else the
 * bench's --batch/--trans-a/--trans-b apply). */
typedef struct {
  int64_t m, n, k, batch; /* batch 1 when not given */
  tsr_op op_a, op_b;      /* N when not given */
  int has_batch, has_ops;
} tsr__shape_token;

/* Parses one token; 0, or nonzero with a message (not naming the token) in
 * msg. The batch is 1..65535, the extents as tsr_shape_parse takes them. */
int tsr__shape_token_parse(const char *text, tsr__shape_token *out, char *msg, size_t cap);
/* The canonical token of a problem: "B*" only when batch > 1, ":XY" only
 * when an op is T (the zoo's labels). */
void tsr__shape_token_format(int64_t m, int64_t n, int64_t k, int64_t batch, tsr_op op_a,
                             tsr_op op_b, char *buf, size_t cap);

/* The class names, in zoo order, NULL-terminated. */
extern const char *const tsr__zoo_classes[];

/* Writes the zoo of `seed` (quick: the zoo-quick subset, at most two shapes
 * of each class, the smaller ones) to out, at most cap entries; returns how
 * many the zoo has (call with cap 0 to size it). */
int tsr__zoo(uint64_t seed, int quick, tsr__zoo_shape *out, int cap);
/* The zoo entry (of zs[0..n)) with these extents, batch and ops; NULL when
 * none. */
const tsr__zoo_shape *tsr__zoo_find(const tsr__zoo_shape *zs, int n, int64_t m, int64_t nn,
                                    int64_t k, int64_t batch, tsr_op op_a, tsr_op op_b);

#endif
