/* Input generator internals shared by the oracle, validation and routes. */
#ifndef TSR_CORE_INPUTS_H
#define TSR_CORE_INPUTS_H

#include "tessera.h"

uint64_t tsr__splitmix64(uint64_t x);
/* Value of stored element (r, c) of batch item `batch` of tensor t, whose
 * stored rows have `cols` logical columns. */
float tsr__input_value(tsr_tensor t, tsr_inputs kind, uint64_t seed, int64_t batch, int64_t r,
                       int64_t c, int64_t cols);
/* Stored rows, columns, leading dimension and batch stride (compact
 * defaults filled in). */
void tsr__stored_dims(const tsr_problem *p, tsr_tensor t, int64_t *rows, int64_t *cols,
                      int64_t *ld, int64_t *stride);

#endif
