/* The shape zoo (docs/zoo.md): the problem shapes users have, as data. Named
 * classes of real workloads (LLM training and inference GEMMs, attention-like
 * batched products, GEMV, small outputs with long K, tall-skinny panels,
 * squares) plus a seeded generator of log-uniform shapes with aligned and
 * unaligned draws, transposes and batch. A seeded quarter of the zoo is held
 * back (for checking that tuned plans carry over to unseen shapes). The same
 * seed gives the same zoo on every machine. */
#ifndef TSR_MEASURE_ZOO_H
#define TSR_MEASURE_ZOO_H

#include <stdint.h>

#include "tessera.h"

typedef struct {
  const char *cls;   /* class name (static) */
  char label[48];    /* "[B*]MxNxK[:OP]", e.g. "96*512x512x64:NT"; ops shown unless NN */
  int64_t m, n, k, batch;
  tsr_op op_a, op_b;
  int held_back;     /* 1: in the held-back part of this seed */
} tsr__zoo_shape;

/* The class names, in zoo order, NULL-terminated. */
extern const char *const tsr__zoo_classes[];

/* Writes the zoo of `seed` (quick: the zoo-quick subset, at most two shapes
 * of each class, the smaller ones) to out, at most cap entries; returns how
 * many the zoo has (call with cap 0 to size it). */
int tsr__zoo(uint64_t seed, int quick, tsr__zoo_shape *out, int cap);

#endif
