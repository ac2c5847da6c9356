/* Deterministic inputs (BRIEF §5). The formulas here are the contract that
 * the torch route and every other route reproduce; change them only with a
 * version bump of the results schema. */
#include <math.h>
#include <string.h>

#include "core/context.h"
#include "core/inputs.h"
#include "core/par.h"

/* Dyadic constants per tensor: value = (((r*ca + c*cb + batch*cd) mod q) - o) / 8.
 * |value| <= 1 and a multiple of 1/8, so products are multiples of 1/64 and
 * every partial sum of up to 2^18 of them is exact in FP32. */
static const struct { int64_t ca, cb, cd, q, o; } dyadic[3] = {
    {7, 3, 5, 17, 8},  /* A */
    {5, 11, 3, 13, 6}, /* B */
    {3, 7, 11, 9, 4},  /* C (used when beta != 0) */
};

uint64_t tsr__splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Stream of draws for element idx of tensor t: draw(i) for i = 0, 1, ...
 * Family tags keep the families' streams apart (RANDOM keeps the original
 * stream of tessera-bench/1 results). */
static uint64_t draw(uint64_t seed, tsr_tensor t, uint64_t idx, uint64_t family, uint64_t i) {
  uint64_t base = tsr__splitmix64(idx ^ ((uint64_t)(t + 1) << 60));
  if (family == 0 && i == 0) return tsr__splitmix64(seed ^ base);
  return tsr__splitmix64(seed ^ base ^ (family << 56) ^ (i * 0x9e3779b97f4a7c15ull));
}

float tsr__input_value(tsr_tensor t, tsr_inputs kind, uint64_t seed, int64_t batch, int64_t r,
                       int64_t c, int64_t cols) {
  if (kind == TSR_INPUTS_DYADIC) {
    int64_t v = (r * dyadic[t].ca + c * dyadic[t].cb + batch * dyadic[t].cd) % dyadic[t].q;
    return (float)(v - dyadic[t].o) / 8.0f;
  }
  /* Element index within the logical (compact) tensor, independent of the
   * leading dimension, so padding never changes the values. */
  uint64_t idx = ((uint64_t)batch * 0x100000000ull + (uint64_t)r) * (uint64_t)cols + (uint64_t)c;
  switch (kind) {
    case TSR_INPUTS_NORMAL: {
      /* Irwin-Hall: the sum of 12 uniforms of 24 bits, minus 6 (mean 0,
       * variance 1). The integer sum is exact; one rounding to float. */
      uint64_t sum = 0;
      for (uint64_t i = 0; i < 12; i++) sum += draw(seed, t, idx, 2, i) >> 40;
      return (float)((double)sum * (1.0 / 16777216.0) - 6.0);
    }
    case TSR_INPUTS_WIDE: {
      /* uniform [-1, 1) of 24 bits times 2^e, e uniform in [-20, 20]: exact */
      double u = (double)(draw(seed, t, idx, 3, 0) >> 40) * (1.0 / 8388608.0) - 1.0;
      int e = (int)((draw(seed, t, idx, 3, 1) >> 32) % 41u) - 20;
      return (float)ldexp(u, e);
    }
    default: {
      /* 24 random bits → [-1, 1) exactly representable. */
      uint64_t x = draw(seed, t, idx, 0, 0);
      return (float)((double)(x >> 40) * (1.0 / 8388608.0) - 1.0);
    }
  }
}

static const char *const inputs_names[TSR_INPUTS_COUNT] = {"dyadic", "random", "normal", "wide"};

const char *tsr_inputs_name(tsr_inputs k) {
  return (unsigned)k < TSR_INPUTS_COUNT ? inputs_names[k] : "unknown";
}

tsr_status tsr_inputs_parse(const char *text, tsr_inputs *k, char *msg, size_t cap) {
  for (int i = 0; i < TSR_INPUTS_COUNT; i++)
    if (text && !strcmp(text, inputs_names[i])) {
      *k = (tsr_inputs)i;
      return TSR_OK;
    }
  return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                      "inputs: '%s' is not one of dyadic, random, normal, wide", text ? text : "");
}

void tsr__stored_dims(const tsr_problem *p, tsr_tensor t, int64_t *rows, int64_t *cols,
                      int64_t *ld, int64_t *stride) {
  switch (t) {
    case TSR_TENSOR_A:
      *rows = p->op_a == TSR_OP_N ? p->m : p->k;
      *cols = p->op_a == TSR_OP_N ? p->k : p->m;
      *ld = p->lda ? p->lda : *cols;
      *stride = p->stride_a;
      break;
    case TSR_TENSOR_B:
      *rows = p->op_b == TSR_OP_N ? p->k : p->n;
      *cols = p->op_b == TSR_OP_N ? p->n : p->k;
      *ld = p->ldb ? p->ldb : *cols;
      *stride = p->stride_b;
      break;
    default:
      *rows = p->m;
      *cols = p->n;
      *ld = p->ldc ? p->ldc : *cols;
      *stride = p->stride_c;
      break;
  }
  if (*stride == 0) *stride = *rows * *ld;
}

typedef struct fill_job {
  tsr_tensor t;
  tsr_inputs kind;
  uint64_t seed;
  int64_t rows, cols, ld, stride, total_rows;
  float *buf;
  void (*fill_row)(const struct fill_job *, int64_t, int64_t, float *); /* fill_row_pick's */
} fill_job;

/* Stored row r of batch item b, cols values: tsr__input_value's formulas
 * with what is the same along a row hoisted out of the column loop (one
 * call per value, its switch and the dyadic family's division cost more
 * than the values themselves). Bit-identical to tsr__input_value
 * (tests/core/test_oracle.c checks every family). */
static inline __attribute__((always_inline)) void fill_row_body(const fill_job *j, int64_t b,
                                                                int64_t r, float *row) {
  const int64_t cols = j->cols;
  const uint64_t seed = j->seed, tag = (uint64_t)(j->t + 1) << 60;
  const uint64_t idx0 = ((uint64_t)b * 0x100000000ull + (uint64_t)r) * (uint64_t)cols;
  switch (j->kind) {
    case TSR_INPUTS_DYADIC: {
      /* the residue steps by cb mod q along the row; its q values tabled */
      const int64_t q = dyadic[j->t].q, step = dyadic[j->t].cb % q;
      float value[32];
      for (int64_t v = 0; v < q; v++) value[v] = (float)(v - dyadic[j->t].o) / 8.0f;
      int64_t v = (r * dyadic[j->t].ca + b * dyadic[j->t].cd) % q;
      for (int64_t c = 0; c < cols; c++) {
        row[c] = value[v];
        v += step;
        if (v >= q) v -= q;
      }
      break;
    }
    case TSR_INPUTS_NORMAL:
      for (int64_t c = 0; c < cols; c++) {
        uint64_t base = tsr__splitmix64((idx0 + (uint64_t)c) ^ tag), sum = 0;
        for (uint64_t i = 0; i < 12; i++)
          sum += tsr__splitmix64(seed ^ base ^ (2ull << 56) ^ (i * 0x9e3779b97f4a7c15ull)) >> 40;
        row[c] = (float)((double)sum * (1.0 / 16777216.0) - 6.0);
      }
      break;
    case TSR_INPUTS_WIDE:
      for (int64_t c = 0; c < cols; c++) {
        uint64_t base = tsr__splitmix64((idx0 + (uint64_t)c) ^ tag);
        uint64_t d0 = tsr__splitmix64(seed ^ base ^ (3ull << 56));
        uint64_t d1 = tsr__splitmix64(seed ^ base ^ (3ull << 56) ^ 0x9e3779b97f4a7c15ull);
        double u = (double)(d0 >> 40) * (1.0 / 8388608.0) - 1.0;
        int e = (int)((d1 >> 32) % 41u) - 20;
        /* u * 2^e is exact (24 significant bits, |e| <= 20): ldexp's value */
        double pow2;
        uint64_t bits = (uint64_t)(1023 + e) << 52;
        memcpy(&pow2, &bits, sizeof pow2);
        row[c] = (float)(u * pow2);
      }
      break;
    default:
      for (int64_t c = 0; c < cols; c++) {
        uint64_t x = tsr__splitmix64(seed ^ tsr__splitmix64((idx0 + (uint64_t)c) ^ tag));
        row[c] = (float)((double)(x >> 40) * (1.0 / 8388608.0) - 1.0);
      }
      break;
  }
}

/* fill_row_body compiled twice: baseline ISA and x86-64-v4. The 64-bit
 * multiplies of splitmix64 vectorize with AVX-512DQ (8 lanes); integer
 * arithmetic and exact conversions: the same values on either. This was
 * target_clones, whose GNU ifunc resolver runs during relocation, before a
 * sanitizer runtime (ThreadSanitizer) is initialized, and crashes there; the
 * choice is now made on first use instead (fill_row_pick). */
static void fill_row_base(const fill_job *j, int64_t b, int64_t r, float *row) {
  fill_row_body(j, b, r, row);
}

typedef void (*fill_row_fn)(const fill_job *, int64_t, int64_t, float *);

#if defined(__x86_64__) && defined(__GNUC__)
/* clang keeps a target("arch=...") function to 256-bit vectors unless told
 * (target_clones' clone was not) */
#if defined(__clang__)
#define FILL_V4_TARGET __attribute__((target("arch=x86-64-v4"), min_vector_width(512)))
#else
#define FILL_V4_TARGET __attribute__((target("arch=x86-64-v4")))
#endif
FILL_V4_TARGET static void fill_row_v4(const fill_job *j, int64_t b, int64_t r, float *row) {
  fill_row_body(j, b, r, row);
}

/* The check target_clones' resolver made: every feature of x86-64-v4.
 * clang 14 has no "x86-64-v4" for __builtin_cpu_supports (and its own
 * target_clones resolver tested the CPU vendor instead), so there the
 * level's features it can name are tested one by one. */
static int have_x86_64_v4(void) {
  __builtin_cpu_init();
#if defined(__clang__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
         __builtin_cpu_supports("sse4.2");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}
#endif

/* The variant for this CPU, chosen once per process: the first callers may
 * race to choose, but they choose the same and publish it atomically. */
static fill_row_fn fill_row_pick(void) {
  static fill_row_fn chosen;
  fill_row_fn f = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
  if (f) return f;
#if defined(__x86_64__) && defined(__GNUC__)
  f = have_x86_64_v4() ? fill_row_v4 : fill_row_base;
#else
  f = fill_row_base;
#endif
  __atomic_store_n(&chosen, f, __ATOMIC_RELEASE);
  return f;
}

/* Rows g in [g0, g1) of the batch*rows stored rows; padding set to 0. */
static void fill_rows(void *arg, int chunk, int64_t g0, int64_t g1) {
  const fill_job *j = arg;
  for (int64_t g = g0; g < g1; g++) {
    int64_t b = g / j->rows, r = g % j->rows;
    float *row = j->buf + b * j->stride + r * j->ld;
    j->fill_row(j, b, r, row);
    /* ld padding; the stored tensor ends right after the last row's data */
    int64_t end = g + 1 == j->total_rows ? j->cols : j->ld;
    for (int64_t c = j->cols; c < end; c++) row[c] = 0.0f;
  }
}

void tsr_fill(const tsr_problem *p, tsr_tensor t, tsr_inputs kind, uint64_t seed, float *buf) {
  fill_job j = {t, kind, seed, 0, 0, 0, 0, 0, buf, fill_row_pick()};
  tsr__stored_dims(p, t, &j.rows, &j.cols, &j.ld, &j.stride);
  j.total_rows = p->batch * j.rows;
  /* Gaps between batch items (stride beyond rows*ld) are zeroed here. */
  for (int64_t b = 0; b + 1 < p->batch; b++)
    if (j.stride > j.rows * j.ld)
      memset(buf + b * j.stride + j.rows * j.ld, 0,
             (size_t)(j.stride - j.rows * j.ld) * sizeof *buf);
  tsr__parallel_rows(p->batch * j.rows, (double)(p->batch * j.rows) * (double)j.cols, fill_rows,
                     &j);
}

typedef struct {
  float *c;
  int64_t total;
} poison_job;

#define POISON_BLOCK 65536 /* floats a thread's share is counted in */

static void poison_blocks(void *arg, int chunk, int64_t b0, int64_t b1) {
  const poison_job *j = arg;
  int64_t end = b1 * POISON_BLOCK < j->total ? b1 * POISON_BLOCK : j->total;
  for (int64_t i = b0 * POISON_BLOCK; i < end; i++) j->c[i] = NAN;
}

/* In parallel: a fresh 8192^2 host buffer is 256 MiB of first touches. */
void tsr_poison(const tsr_problem *p, float *c) {
  poison_job j = {c, tsr_problem_elems_c(p)};
  tsr__parallel_rows((j.total + POISON_BLOCK - 1) / POISON_BLOCK, (double)j.total, poison_blocks, &j);
}
