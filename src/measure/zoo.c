/* The shape zoo (zoo.h, docs/zoo.md). */
#include "measure/zoo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const tsr__zoo_classes[] = {"square",  "llm-train", "llm-decode", "gemv", "long-k",
                                        "batched", "tall-skinny", "random", NULL};

/* The fixed workloads: class, M, N, K, batch, op(A), op(B). LLM layers use
 * the weight shapes of 7B/8B-class models (hidden 4096, MLP 11008 and
 * 14336, vocabulary 32000); training at 8192 tokens, with the backward
 * products' transposes (weight gradient: op(A)=T over the tokens). */
typedef struct {
  int cls;
  int64_t m, n, k, batch;
  char opa, opb;
  int quick; /* in zoo-quick */
} fixed_shape;

static const fixed_shape fixed[] = {
    /* square: aligned powers of two and unaligned neighbours */
    {0, 256, 256, 256, 1, 'N', 'N', 1}, {0, 1024, 1024, 1024, 1, 'N', 'N', 1},
    {0, 2048, 2048, 2048, 1, 'N', 'N', 0}, {0, 4096, 4096, 4096, 1, 'N', 'N', 0},
    {0, 8192, 8192, 8192, 1, 'N', 'N', 0}, {0, 1000, 1000, 1000, 1, 'N', 'N', 0},
    {0, 3000, 3000, 3000, 1, 'N', 'N', 0}, {0, 4095, 4097, 4093, 1, 'N', 'N', 0},
    /* llm-train: forward (NN), input gradient (NT), weight gradient (TN) */
    {1, 8192, 4096, 4096, 1, 'N', 'N', 0}, {1, 8192, 11008, 4096, 1, 'N', 'N', 0},
    {1, 8192, 4096, 11008, 1, 'N', 'N', 0}, {1, 8192, 14336, 4096, 1, 'N', 'N', 0},
    {1, 8192, 4096, 4096, 1, 'N', 'T', 0}, {1, 8192, 4096, 11008, 1, 'N', 'T', 0},
    {1, 4096, 4096, 8192, 1, 'T', 'N', 0}, {1, 4096, 11008, 8192, 1, 'T', 'N', 0},
    {1, 2048, 32000, 4096, 1, 'N', 'N', 0}, {1, 2048, 4096, 4096, 1, 'N', 'N', 0},
    {1, 512, 4096, 4096, 1, 'N', 'N', 1}, {1, 512, 4096, 11008, 1, 'N', 'T', 1},
    /* llm-decode: a few tokens against the weights (op(B)=T: weights stored
     * out-features x in-features, as most frameworks keep them) */
    {2, 8, 4096, 4096, 1, 'N', 'T', 1}, {2, 8, 11008, 4096, 1, 'N', 'T', 0},
    {2, 8, 4096, 11008, 1, 'N', 'T', 0}, {2, 16, 14336, 4096, 1, 'N', 'T', 0},
    {2, 16, 4096, 14336, 1, 'N', 'T', 0}, {2, 32, 4096, 4096, 1, 'N', 'T', 1},
    {2, 32, 32000, 4096, 1, 'N', 'T', 0}, {2, 64, 11008, 4096, 1, 'N', 'T', 0},
    {2, 64, 4096, 4096, 1, 'N', 'N', 0},
    /* gemv: one row or one column of output */
    {3, 1, 4096, 4096, 1, 'N', 'N', 1}, {3, 1, 4096, 4096, 1, 'N', 'T', 0},
    {3, 1, 11008, 4096, 1, 'N', 'T', 0}, {3, 1, 4096, 11008, 1, 'N', 'T', 0},
    {3, 1, 32000, 4096, 1, 'N', 'T', 0}, {3, 4096, 1, 4096, 1, 'N', 'N', 1},
    {3, 16384, 1, 2048, 1, 'T', 'N', 0}, {3, 1, 16384, 16384, 1, 'N', 'N', 0},
    /* long-k: small outputs, long reductions */
    {4, 64, 64, 8192, 1, 'N', 'N', 1}, {4, 100, 100, 8000, 1, 'N', 'N', 0},
    {4, 128, 128, 16384, 1, 'N', 'N', 0}, {4, 96, 160, 12288, 1, 'T', 'N', 0},
    {4, 32, 32, 16384, 1, 'N', 'N', 1}, {4, 256, 256, 32768, 1, 'N', 'N', 0},
    {4, 128, 64, 65536, 1, 'N', 'T', 0},
    /* batched: small problems and attention-like products (QK^T: K = head
     * dim, op(B)=T; PV: N = head dim) */
    {5, 256, 256, 256, 64, 'N', 'N', 1}, {5, 64, 64, 64, 256, 'N', 'N', 1},
    {5, 128, 128, 128, 128, 'N', 'N', 0}, {5, 512, 512, 64, 96, 'N', 'T', 0},
    {5, 512, 64, 512, 96, 'N', 'N', 0}, {5, 1024, 1024, 128, 32, 'N', 'T', 0},
    {5, 1024, 128, 1024, 32, 'N', 'N', 0}, {5, 33, 47, 29, 200, 'N', 'N', 0},
    /* tall-skinny: panels and short-K updates */
    {6, 16384, 64, 4096, 1, 'N', 'N', 0}, {6, 65536, 32, 1024, 1, 'N', 'N', 0},
    {6, 4096, 16, 16384, 1, 'N', 'N', 1}, {6, 32768, 128, 128, 1, 'N', 'N', 1},
    {6, 8192, 8192, 64, 1, 'N', 'N', 0}, {6, 64, 16384, 4096, 1, 'T', 'N', 0},
    {6, 8192, 8192, 16, 1, 'N', 'T', 0},
};
#define NFIXED (int)(sizeof fixed / sizeof fixed[0])
#define RANDOM_CLASS 7
#define NRANDOM 12

/* splitmix64: the same stream on every machine. */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* Uniform in [0, 1) with 53 bits. */
static double unit(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }

/* Log-uniform over [1, 16384]; aligned draws are rounded up to a multiple
 * of 64 (capped at 16384), unaligned ones kept odd-ish as drawn. */
static int64_t extent(uint64_t *s, int aligned) {
  int64_t x = (int64_t)floor(exp(unit(s) * log(16384.0)));
  if (x < 1) x = 1;
  if (x > 16384) x = 16384;
  if (aligned) x = (x + 63) / 64 * 64;
  return x > 16384 ? 16384 : x;
}

void tsr__shape_token_format(int64_t m, int64_t n, int64_t k, int64_t batch, tsr_op op_a,
                             tsr_op op_b, char *buf, size_t cap) {
  char b[24] = "", o[8] = "";
  if (batch > 1) snprintf(b, sizeof b, "%lld*", (long long)batch);
  if (op_a == TSR_OP_T || op_b == TSR_OP_T)
    snprintf(o, sizeof o, ":%c%c", op_a == TSR_OP_T ? 'T' : 'N', op_b == TSR_OP_T ? 'T' : 'N');
  snprintf(buf, cap, "%s%lldx%lldx%lld%s", b, (long long)m, (long long)n, (long long)k, o);
}

int tsr__shape_token_parse(const char *text, tsr__shape_token *out, char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  out->batch = 1;
  out->op_a = out->op_b = TSR_OP_N;
  if (!text || !*text) {
    if (msg && cap) snprintf(msg, cap, "empty, expected [B*]MxNxK[:XY]");
    return -1;
  }
  char dims[128];
  const char *s = text, *star = strchr(text, '*'), *colon = strchr(text, ':');
  if (star && (!colon || star < colon)) {
    /* the batch: digits only, 1..65535 (the bench's --batch range) */
    long long b = 0;
    const char *p = text;
    for (; p < star && *p >= '0' && *p <= '9' && b <= 65535; p++) b = b * 10 + (*p - '0');
    /* written as the bench writes it back (the label): no leading zero */
    if (p != star || p == text || b < 1 || b > 65535 || *text == '0') {
      if (msg && cap)
        snprintf(msg, cap, "batch '%.*s' is not an integer in [1, 65535] (expected [B*]MxNxK[:XY])",
                 (int)(star - text < 32 ? star - text : 32), text);
      return -1;
    }
    out->batch = b;
    out->has_batch = 1;
    s = star + 1;
  }
  /* one batch at the front, ops at the end, nothing else */
  if (strchr(s, '*') || (colon && colon < s) || (colon && strchr(colon + 1, ':'))) {
    if (msg && cap) snprintf(msg, cap, "expected [B*]MxNxK[:XY], e.g. 96*512x512x64:NT");
    return -1;
  }
  size_t len = colon ? (size_t)(colon - s) : strlen(s);
  if (!len || len >= sizeof dims) {
    if (msg && cap) snprintf(msg, cap, "extents %s (expected [B*]MxNxK[:XY])", len ? "too long" : "missing");
    return -1;
  }
  memcpy(dims, s, len);
  dims[len] = '\0';
  char m2[256];
  if (tsr_shape_parse(dims, &out->m, &out->n, &out->k, m2, sizeof m2)) {
    if (msg && cap) snprintf(msg, cap, "%s", m2);
    return -1;
  }
  if (colon) {
    const char *o = colon + 1;
    if (strlen(o) != 2 || (o[0] != 'N' && o[0] != 'T') || (o[1] != 'N' && o[1] != 'T')) {
      if (msg && cap)
        snprintf(msg, cap, "ops ':%.8s' are not two of N and T (op(A) op(B), e.g. :NT)", o);
      return -1;
    }
    out->op_a = o[0] == 'T' ? TSR_OP_T : TSR_OP_N;
    out->op_b = o[1] == 'T' ? TSR_OP_T : TSR_OP_N;
    out->has_ops = 1;
  }
  return 0;
}

static void fill_label(tsr__zoo_shape *z) {
  tsr__shape_token_format(z->m, z->n, z->k, z->batch, z->op_a, z->op_b, z->label, sizeof z->label);
}

const tsr__zoo_shape *tsr__zoo_find(const tsr__zoo_shape *zs, int n, int64_t m, int64_t nn,
                                    int64_t k, int64_t batch, tsr_op op_a, tsr_op op_b) {
  for (int i = 0; i < n; i++)
    if (zs[i].m == m && zs[i].n == nn && zs[i].k == k && zs[i].batch == batch &&
        zs[i].op_a == op_a && zs[i].op_b == op_b)
      return &zs[i];
  return NULL;
}

/* Held back: a quarter of the shapes, chosen by the seed and the label. */
static int held_back(uint64_t seed, const char *label) {
  uint64_t h = seed ^ 0x5a4f4f5a4f4f5a4full;
  for (const char *p = label; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
  return (next(&h) & 3) == 0;
}

static int put(tsr__zoo_shape *out, int cap, int n, const tsr__zoo_shape *z, uint64_t seed) {
  if (n < cap) {
    out[n] = *z;
    fill_label(&out[n]);
    out[n].held_back = held_back(seed, out[n].label);
  }
  return n + 1;
}

int tsr__zoo(uint64_t seed, int quick, tsr__zoo_shape *out, int cap) {
  int n = 0;
  for (int i = 0; i < NFIXED; i++) {
    const fixed_shape *f = &fixed[i];
    if (quick && !f->quick) continue;
    tsr__zoo_shape z = {.cls = tsr__zoo_classes[f->cls], .m = f->m, .n = f->n, .k = f->k,
                        .batch = f->batch, .op_a = f->opa == 'T' ? TSR_OP_T : TSR_OP_N,
                        .op_b = f->opb == 'T' ? TSR_OP_T : TSR_OP_N};
    n = put(out, cap, n, &z, seed);
  }
  /* random: log-uniform extents, half aligned, random transposes, a batch
   * now and then; work capped at 2^36 flops so that a draw stays runnable */
  uint64_t s = seed;
  for (int i = 0, made = 0; made < (quick ? 2 : NRANDOM) && i < 10000; i++) {
    int aligned = (int)(next(&s) & 1);
    tsr__zoo_shape z = {.cls = tsr__zoo_classes[RANDOM_CLASS]};
    z.m = extent(&s, aligned);
    z.n = extent(&s, aligned);
    z.k = extent(&s, aligned);
    z.op_a = next(&s) & 1 ? TSR_OP_T : TSR_OP_N;
    z.op_b = next(&s) & 1 ? TSR_OP_T : TSR_OP_N;
    z.batch = (next(&s) & 7) == 0 ? 1 + (int64_t)(next(&s) % 16) : 1;
    double work = 2.0 * (double)z.m * (double)z.n * (double)z.k * (double)z.batch;
    if (work > 0x1p36 || (quick && work > 0x1p31)) continue;
    n = put(out, cap, n, &z, seed);
    made++;
  }
  return n;
}
