/* mma=wgmma-s8: the Ozaki family's generator (docs/emit.md "Ozaki"), beside
 * the other families' in src/emit/emit.c, whose string builder, walk and
 * strict fix-up it shares (emit_internal.h).
 *
 * Ozaki scheme II on INT8 tensor cores. The pack prologue scales each row of
 * op(A) (column of op(B)) by a power of two so that its largest magnitude is
 * below 2^(BITS - 1), rounds to integers a' (b'), and writes their balanced
 * residues modulo each modulus m_j as int8 planes, tile by tile in the
 * shared-memory core-matrix layout (8 rows x 16 bytes). The main kernel
 * (one modulus per blockIdx.y) moves the tiles with bulk copies and sums
 * a'b' mod m_j exactly on wgmma m64nNk32 .s32.s8.s8 (int32 sums never
 * overflow: K * 2^14 < 2^31), and stores the residue. The reconstruction
 * recovers the integer a'b' in [-P/2, P/2), P the moduli's product, by
 * Garner's mixed-radix algorithm with balanced digits (small integer
 * arithmetic), evaluates it in FP64 and scales back. The bits per operand
 * keep |a'b'| <= K 2^(BITS_A + BITS_B - 2) < P / 2, so the integer product
 * is exact and the only errors are the operands' rounding to BITS bits and
 * the final FP64 -> FP32 rounding. A row or column holding a NaN or an
 * infinity has no scale (TSR_NOSCALE): its outputs are recomputed strictly
 * (tsr_fix). */

#include <stdarg.h>
#include <stdio.h>

#include "sys/assert.h"
#include "emit/emit_internal.h"
#include "emit/ptx_src.h"

typedef tsr__sb sb_t;

static void put(sb_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tsr__sb_vput(s, fmt, ap);
  va_end(ap);
}

/* x^-1 mod m (x and m coprime), by the extended Euclid algorithm */
static int oz_inv(int x, int m) {
  int a = ((x % m) + m) % m, b = m, u = 1, v = 0;
  while (b) {
    int q = a / b, t = a - q * b;
    a = b;
    b = t;
    t = u - q * v;
    u = v;
    v = t;
  }
  TSR_ASSERT(a == 1);
  return ((u % m) + m) % m;
}

static void emit_oz_constants(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const tsr_plan *pl = &g->plan;
  put(s, "typedef %s tsr_idx;\n", tsr__emit_idx_t(g));
  put(s, "static constexpr int M = %lld, N = %lld, K = %lld, BATCH = %lld;\n", (long long)p->m,
      (long long)p->n, (long long)p->k, (long long)p->batch);
  put(s, "static constexpr tsr_idx LDC = %lld, SC = %lld;\n", (long long)p->ldc,
      (long long)p->stride_c);
  for (int i = 0; i < 2; i++) {
    const tsr__emit_operand *o = i ? &g->b : &g->a;
    char U = (char)(o->name - 32);
    put(s, "static constexpr tsr_idx SRC_LD%c = %lld, SRC_S%c = %lld; // the user's %c (op %s)\n", U,
        (long long)o->src_ld, U, (long long)o->src_stride, U,
        o->src_kmajor == (o->name == 'a') ? "N" : "T");
  }
  put(s, "static constexpr int BM = %d, BN = %d, BK = %d, WM = %d, WN = %d; // BK: k values = bytes\n",
      pl->bm, pl->bn, pl->bk, pl->wm, pl->wn);
  put(s, "static constexpr int NT = %d, STAGES = %d, NKB = %lld, WGS = %d, MW = %d, NC = %d;\n",
      g->nthreads, pl->stages, (long long)g->nkb, g->wgs, g->mw, g->nc);
  put(s, "static constexpr unsigned GRID_H = %uu, GRID_W = %uu;\n", g->h, g->w);
  put(s, "static constexpr int A_STAGE = BM * BK, B_STAGE = BN * BK; // bytes of a stage's tiles\n");
  put(s,
      "static constexpr int NMOD = %d, BITS_A = %d, BITS_B = %d; // moduli; bits of the scaled "
      "integers (sign included)\n",
      g->nmod, g->bits_a, g->bits_b);
  if (g->gstride > 1)
    put(s, "static constexpr int GSTRIDE = %d; // the magnitudes' GEMM: K blocks 0, GSTRIDE, ...\n",
        g->gstride);
  put(s,
      "static constexpr long long KP = %lld, PRA = %lld, PRB = %lld; // k padded to BK; rows "
      "padded to the tiles\n",
      (long long)g->kp, (long long)g->a.prows, (long long)g->b.prows);
  put(s,
      "// W, bytes: residue planes of A and B (plane j of batch item z at (j * BATCH + z) *\n"
      "// PLANE_x), the row / column scale exponents (int32), the product residues (uint8,\n"
      "// batch x modulus x M rows of NP bytes: N rounded up to 16, for 16-byte rows)\n"
      "static constexpr long long PLANE_A = PRA * KP, PLANE_B = PRB * KP, NP = %lld;\n"
      "static constexpr long long WB_PA = %lldll, WB_PB = %lldll, WB_SA = %lldll, WB_SB = %lldll, "
      "WB_R = %lldll;\n"
      "// ... plane NMOD: the magnitudes floor(|v| 2^(sh - BITS + 8)) (<= 127); the rows' /\n"
      "// columns' 1-norms (double) and the magnitudes' int32 product (the guard)\n"
      "static constexpr long long WB_NA = %lldll, WB_NB = %lldll, WB_L = %lldll;\n",
      (long long)((p->n + 15) / 16 * 16), (long long)g->wb_pa, (long long)g->wb_pb, (long long)g->wb_sa, (long long)g->wb_sb,
      (long long)g->wb_r, (long long)g->wb_na, (long long)g->wb_nb, (long long)g->wb_l);
  put(s, "static constexpr int TSR_NOSCALE = -1000000; // a row / column with a NaN or an infinity\n");
  put(s, "// moduli:");
  for (int j = 0; j < g->nmod; j++) put(s, " %d", tsr__ozaki_moduli[j]);
  put(s, "\n__device__ __forceinline__ int tsr_modulus(int j) {\n  switch (j) {\n");
  for (int j = 0; j < g->nmod; j++) put(s, "    case %d: return %d;\n", j, tsr__ozaki_moduli[j]);
  put(s, "    default: return 1;\n  }\n}\n");
  put(s,
      "// balanced residue: v mod m in [-(m / 2), m - 1 - m / 2]\n"
      "__device__ __forceinline__ int tsr_bal(int v, int m) {\n"
      "  int r = v %% m;\n"
      "  if (r > m - 1 - m / 2) r -= m;\n"
      "  else if (r < -(m / 2)) r += m;\n"
      "  return r;\n"
      "}\n\n");
}

/* Inside the PTX section: shared memory, mbarriers, bulk copies, setmaxnreg,
 * and the .s8 wgmma. */
static void emit_oz_ptx(sb_t *s, const tsr__emit_geo *g) {
  int nr = g->plan.wn / 2;
  put(s,
      "// tsr:ptx-begin\n"
      "__device__ __forceinline__ float *tsr_dynamic_smem() {\n"
      "  extern __shared__ float4 tsr_smem4[]; // float4: 16-byte aligned base\n"
      "  return reinterpret_cast<float *>(tsr_smem4);\n"
      "}\n"
      "__device__ __forceinline__ unsigned tsr_smem_addr(const void *p) {\n"
      "  unsigned a;\n"
      "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %%1; cvt.u32.u64 %%0, t; }\" : \"=r\"(a) : \"l\"(p));\n"
      "  return a;\n"
      "}\n");
  put(s, WG_SYNC_SRC);
  put(s, "__device__ __forceinline__ void tsr_wg_pin_i(int &x) { asm volatile(\"\" : \"+r\"(x) :: \"memory\"); }\n");
  put(s, MBAR_SRC);
  put(s, BULK_SRC);
  if (g->maxnreg) put(s, SETMAXNREG_BULK_FMT, TSR__WG_BULK_PRODUCER_REGS, TSR__WG_BULK_CONSUMER_REGS);
  else
    put(s,
        "__device__ __forceinline__ void tsr_producer_regs() {} // within the even share\n"
        "__device__ __forceinline__ void tsr_consumer_regs() {}\n");
  put(s,
      "// 2^e as a double (|e| <= 1022: the exponent field)\n"
      "__device__ __forceinline__ double tsr_p2d(int e) { return __longlong_as_double((long long)(e + 1023) << 52); }\n"
      "// the consumer warpgroups' own barrier (named barrier 1; the producer has left)\n"
      "__device__ __forceinline__ void tsr_consumer_sync() { asm volatile(\"bar.sync 1, %%0;\\n\" :: \"n\"(128 * WGS) : \"memory\"); }\n");
  put(s,
      "// d (%d registers, int32) += A(64 x 32, s8) * B(32 x %d, s8), exact; A, B by descriptor\n"
      "__device__ __forceinline__ void tsr_wgmma_s8(int (&d)[%d], unsigned long long da,\n"
      "                                             unsigned long long db) {\n"
      "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n%dk32.s32.s8.s8 {",
      nr, g->plan.wn, nr, g->plan.wn);
  for (int i = 0; i < nr; i++) put(s, "%s%%%d", i ? (i % 16 ? ", " : ",\"\n               \" ") : "", i);
  put(s, "}, %%%d, %%%d, 1;\\n\"\n               : ", nr, nr + 1);
  for (int i = 0; i < nr; i++) put(s, "%s\"+r\"(d[%d])", i ? (i % 8 ? ", " : ",\n                 ") : "", i);
  put(s, "\n               : \"l\"(da), \"l\"(db));\n}\n");
  put(s, "// tsr:ptx-end\n\n");
}

/* Pack prologue of one operand: one CTA per 8 rows (of op(A) along m, of
 * op(B) along n) of a batch item. Phase 1: each row's largest magnitude over
 * k and whether it holds a NaN or an infinity; phase 2: every 16-k chunk of
 * the rows scaled, rounded and reduced modulo each modulus into one 16-byte
 * chunk per plane, at its place in the tile layout. */
static void emit_oz_pack(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g,
                         const tsr__emit_operand *o) {
  char U = (char)(o->name - 32);
  const char *EXT = o->name == 'a' ? "M" : "N", *BMN = o->name == 'a' ? "BM" : "BN";
  int kc = o->src_kmajor;
  char at[96], loads[1024];
  if (kc) snprintf(at, sizeof at, "(tsr_idx)x * SRC_LD%c + k", U);
  else snprintf(at, sizeof at, "(tsr_idx)k * SRC_LD%c + x", U);
  /* the chunk's 16 values: four float4 loads where the rows are 16-byte aligned
   * and the chunk is whole, else one by one */
  int v4 = kc && o->src_ld % 4 == 0 && (p->batch == 1 || o->src_stride % 4 == 0);
  if (v4)
    snprintf(loads, sizeof loads,
             "    if (live && c16 * 16 + 16 <= K) {\n"
             "      const float4 *p4 = reinterpret_cast<const float4 *>(src + (tsr_idx)x * SRC_LD%c + c16 * 16);\n"
             "#pragma unroll\n"
             "      for (int u = 0; u < 4; ++u) {\n"
             "        const float4 f = p4[u];\n"
             "        v[4 * u] = f.x; v[4 * u + 1] = f.y; v[4 * u + 2] = f.z; v[4 * u + 3] = f.w;\n"
             "      }\n"
             "    } else\n"
             "#pragma unroll\n"
             "      for (int q = 0; q < 16; ++q) {\n"
             "        const int k = c16 * 16 + q;\n"
             "        v[q] = live && k < K ? src[%s] : 0.0f;\n"
             "      }\n",
             U, at);
  else
    snprintf(loads, sizeof loads,
             "#pragma unroll\n"
             "    for (int q = 0; q < 16; ++q) {\n"
             "      const int k = c16 * 16 + q;\n"
             "      v[q] = live && k < K ? src[%s] : 0.0f;\n"
             "    }\n",
             at);
  put(s,
      "// Pack prologue: %c (op %s, %s) -> its scale exponents at W + WB_S%c and its\n"
      "// residue planes at W + WB_P%c; the threads run along %s.\n"
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_pack_%c(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
      "                float *__restrict__ W, float alpha, float beta) {\n"
      "  __shared__ float pmax[256];\n"
      "  __shared__ double pnorm[256];\n"
      "  __shared__ int pbad[256], pshift[8];\n"
      "  const int t = (int)threadIdx.x, bz = (int)blockIdx.y;\n"
      "  const int x0 = (int)blockIdx.x * 8;\n"
      "  const float *__restrict__ src = %c + (tsr_idx)bz * SRC_S%c;\n"
      "  { // phase 1: row r's largest magnitude and 1-norm over its k values l, l + 32, ...\n"
      "    const int r = %s, l = %s, x = x0 + r;\n"
      "    float mx = 0.0f;\n"
      "    double nrm = 0.0;\n"
      "    int bad = 0;\n"
      "    if (x < %s)\n"
      "      for (int k = l; k < K; k += 32) {\n"
      "        const float v = fabsf(src[%s]);\n"
      "        if (!(v <= 3.402823466e+38f)) bad = 1;\n"
      "        else mx = fmaxf(mx, v), nrm += (double)v;\n"
      "      }\n"
      "    pmax[r * 32 + l] = mx;\n"
      "    pnorm[r * 32 + l] = nrm;\n"
      "    pbad[r * 32 + l] = bad;\n"
      "  }\n"
      "  __syncthreads();\n"
      "  if (t < 8) { // scale exponent: |v| 2^sh < 2^(BITS - 1) for every v of the row\n"
      "    float mx = 0.0f;\n"
      "    double nrm = 0.0;\n"
      "    int bad = 0;\n"
      "    for (int l = 0; l < 32; ++l) {\n"
      "      mx = fmaxf(mx, pmax[t * 32 + l]);\n"
      "      nrm += pnorm[t * 32 + l];\n"
      "      bad |= pbad[t * 32 + l];\n"
      "    }\n"
      "    int e = 0;\n"
      "    if (mx > 0.0f) frexpf(mx, &e); // mx < 2^e\n"
      "    const int sh = bad ? TSR_NOSCALE : mx > 0.0f ? BITS_%c - 1 - e : 0;\n"
      "    pshift[t] = sh;\n"
      "    reinterpret_cast<int *>(reinterpret_cast<char *>(W) + WB_S%c)[(long long)bz * PR%c + x0 + t] = sh;\n"
      "    // the 1-norm, rounded up (FP64 sums of at most 2^17 FP32 magnitudes)\n"
      "    reinterpret_cast<double *>(reinterpret_cast<char *>(W) + WB_N%c)[(long long)bz * PR%c + x0 + t] =\n"
      "        nrm * (1.0 + 0x1p-35);\n"
      "  }\n"
      "  __syncthreads();\n"
      "  constexpr int CPR = (int)(KP / 16); // 16-byte chunks per packed row\n"
      "  char *planes = reinterpret_cast<char *>(W) + WB_P%c + (long long)bz * PLANE_%c;\n"
      "  // phase 2: thread ch takes row ch %% 8 of chunk ch / 8: 8 consecutive threads write\n"
      "  // the 128 contiguous bytes of a core matrix\n"
      "  for (int ch = t; ch < 8 * CPR; ch += 256) {\n"
      "    const int r = ch & 7, c16 = ch >> 3;\n"
      "    const int x = x0 + r, sh = pshift[r];\n"
      "    // v 2^sh = (v f1) f2 exactly: 2^sh is a float for sh <= 127; below, the row is\n"
      "    // tiny (max < 2^-96) and v 2^64 is exact\n"
      "    const float f1 = sh > 127 ? 0x1p64f : 1.0f, f2 = ldexpf(1.0f, sh > 127 ? sh - 64 : sh);\n"
      "    float v[16];\n"
      "    const bool live = x < %s && sh != TSR_NOSCALE;\n"
      "%s"
      "    int iv[16], mg[16];\n"
      "#pragma unroll\n"
      "    for (int q = 0; q < 16; ++q) {\n"
      "      const float sv = (v[q] * f1) * f2;  // exact scaling: |sv| < 2^(BITS - 1)\n"
      "      iv[q] = (int)rintf(sv);\n"
      "      mg[q] = (int)(fabsf(sv) * 0x1p-%d); // floor(|v| 2^(sh - BITS + 8)) <= 127\n"
      "    }\n"
      "    // the chunk's place: tile (x / %s, k block), core matrix, row\n"
      "    const int xr = x %% %s, kr = (c16 * 16) %% BK;\n"
      "    const long long off = (long long)(x / %s) * %s * KP + (long long)((c16 * 16) / BK) * %s * BK +\n"
      "                          ((xr >> 3) * (BK / 16) + (kr >> 4)) * 128 + (xr & 7) * 16;\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < NMOD; ++j) {\n"
      "      const int md = tsr_modulus(j);\n"
      "      unsigned w4[4];\n"
      "#pragma unroll\n"
      "      for (int u = 0; u < 4; ++u)\n"
      "        w4[u] = ((unsigned)tsr_bal(iv[4 * u], md) & 0xffu) |\n"
      "                (((unsigned)tsr_bal(iv[4 * u + 1], md) & 0xffu) << 8) |\n"
      "                (((unsigned)tsr_bal(iv[4 * u + 2], md) & 0xffu) << 16) |\n"
      "                (((unsigned)tsr_bal(iv[4 * u + 3], md) & 0xffu) << 24);\n"
      "      uint4 o4;\n"
      "      o4.x = w4[0]; o4.y = w4[1]; o4.z = w4[2]; o4.w = w4[3];\n"
      "      *reinterpret_cast<uint4 *>(planes + (long long)j * BATCH * PLANE_%c + off) = o4;\n"
      "    }\n"
      "    unsigned m4[4]; // plane NMOD: the magnitudes\n"
      "#pragma unroll\n"
      "    for (int u = 0; u < 4; ++u)\n"
      "      m4[u] = (unsigned)mg[4 * u] | ((unsigned)mg[4 * u + 1] << 8) | ((unsigned)mg[4 * u + 2] << 16) |\n"
      "              ((unsigned)mg[4 * u + 3] << 24);\n"
      "    uint4 q4;\n"
      "    q4.x = m4[0]; q4.y = m4[1]; q4.z = m4[2]; q4.w = m4[3];\n"
      "    *reinterpret_cast<uint4 *>(planes + (long long)NMOD * BATCH * PLANE_%c + off) = q4;\n"
      "  }\n"
      "}\n\n",
      U, o->src_kmajor == (o->name == 'a') ? "N" : "T", kc ? "k-contiguous" : "x-contiguous", U, U,
      kc ? "k" : "x (8 rows per k)", o->name, U, U, kc ? "t >> 5" : "t & 7", kc ? "t & 31" : "t >> 3",
      EXT, at, U, U, U, U, U, U, U, EXT, loads, o->name == 'a' ? g->bits_a - 8 : g->bits_b - 8, BMN,
      BMN, BMN, BMN, BMN, U, U);
}

/* The main kernel: producer-bulk's warp specialization on INT8 planes, and
 * persistent: each CTA takes work items blockIdx.x, + gridDim.x, ... (item
 * = modulus-major, then the walk's tile ordinal; the runtime launches at
 * most one CTA per SM), so the producer fills the next item's stages while
 * the consumers store the last one's residues. The consumers issue each K
 * block's wgmmas into the same int32 accumulators and keep one commit group
 * in flight: once block it-1's group completed (wait_group 1) its stage is
 * released. Epilogue: the residues go through a staging tile in shared
 * memory (its own, beside the stages) and leave as 16-byte rows. */
static void emit_oz_main(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  const char *guard = g->tail_m && g->tail_n ? "row < M && col < N"
                      : g->tail_m            ? "row < M"
                      : g->tail_n            ? "col < N"
                                             : "true";
  /* the K loops of the producer and the consumers: with gstride, the
   * magnitudes' item (the guard's lower bound) takes every GSTRIDE-th block */
  const char *ploop = g->gstride > 1
                          ? "        const int ks = w / TILES == NMOD ? GSTRIDE : 1;\n"
                            "        for (int kb = 0; kb < NKB; kb += ks, ++it) {\n"
                          : "        for (int kb = 0; kb < NKB; ++kb, ++it) {\n";
  const char *cloop = g->gstride > 1 ? "    const int ks = mod == NMOD ? GSTRIDE : 1;\n"
                                       "    for (int kb = 0; kb < NKB; kb += ks, ++it) {\n"
                                     : "    for (int kb = 0; kb < NKB; ++kb, ++it) {\n";
  put(s,
      "static constexpr int LST = BN + 16; // staging row, bytes (rows 4 banks apart)\n"
      "// the residues of this thread's accumulators, modulo MD, into the staging tile\n"
      "template <int MD>\n"
      "__device__ __forceinline__ void tsr_stage_res(unsigned char *stg, const int (&acc)[MW][NC][WN / 2], int rl,\n"
      "                                              int cl) {\n"
      "#pragma unroll\n  for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n    for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n      for (int r = 0; r < WN / 2; r += 2) {\n"
      "        int v0 = acc[i][j][r] %% MD, v1 = acc[i][j][r + 1] %% MD;\n"
      "        v0 += v0 < 0 ? MD : 0;\n"
      "        v1 += v1 < 0 ? MD : 0;\n"
      "        const int row = rl + i * 64 + 8 * ((r & 3) >> 1), col = cl + j * WN + 8 * (r >> 2);\n"
      "        *reinterpret_cast<unsigned short *>(stg + row * LST + col) = (unsigned short)(v0 | (v1 << 8));\n"
      "      }\n"
      "}\n");
  put(s,
      "extern \"C\" __global__ void __launch_bounds__(NT)\n"
      "tsr_gemm_main(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,\n"
      "              float *__restrict__ W, float alpha, float beta) {\n"
      "  constexpr int TILES = (int)(GRID_H * GRID_W), ITEMS = (NMOD + 1) * TILES;\n"
      "  const int bz = %s; // batch item\n"
      "  const char *Pa = reinterpret_cast<const char *>(W) + WB_PA + (long long)bz * PLANE_A;\n"
      "  const char *Pb = reinterpret_cast<const char *>(W) + WB_PB + (long long)bz * PLANE_B;\n"
      "  char *smem = reinterpret_cast<char *>(tsr_dynamic_smem());\n"
      "  char *As = smem, *Bs = smem + STAGES * A_STAGE;\n"
      "  unsigned char *stg = reinterpret_cast<unsigned char *>(smem + STAGES * (A_STAGE + B_STAGE));\n"
      "  const unsigned sa = tsr_smem_addr(As), sb = tsr_smem_addr(Bs);\n"
      "  // mbarriers: full[st] at bars + 8 st (one producer thread arrives, and the stage's\n"
      "  // bulk copies complete), empty[st] at bars + 8 (STAGES + st) (the consumers arrive)\n"
      "  const unsigned bars = tsr_smem_addr(stg + BM * LST);\n"
      "  const int wg = (int)threadIdx.x >> 7;\n"
      "  if (threadIdx.x == 0) {\n"
      "    for (int st = 0; st < STAGES; ++st) {\n"
      "      tsr_mbar_init(bars + 8u * st, 1u);\n"
      "      tsr_mbar_init(bars + 8u * (STAGES + st), 128u * WGS);\n"
      "    }\n"
      "    tsr_mbar_init_fence(); // the bulk copies complete on them\n"
      "  }\n"
      "  __syncthreads(); // the mbarriers are initialized (the last CTA-wide barrier)\n"
      "  if (wg == WGS) { // producer warpgroup: one thread moves the tiles of every item\n"
      "    tsr_producer_regs();\n"
      "    if ((int)threadIdx.x == 128 * WGS) {\n"
      "      int it = 0; // K blocks so far (all items): the stage ring's position\n"
      "      for (int w = (int)blockIdx.x; w < ITEMS; w += (int)gridDim.x) {\n"
      "        unsigned tr, tc;\n"
      "        tsr_walk((unsigned)(w %% TILES), tr, tc);\n"
      "        const long long pl = (long long)(w / TILES) * BATCH;\n"
      "        const char *at = Pa + pl * PLANE_A + (long long)tr * BM * KP;\n"
      "        const char *bt = Pb + pl * PLANE_B + (long long)tc * BN * KP;\n"
      "%s"
      "          const int st = it %% STAGES;\n"
      "          tsr_mbar_wait(bars + 8u * (STAGES + st), ((it / STAGES) & 1) ^ 1); // stage free\n"
      "          tsr_mbar_arrive_tx(bars + 8u * st, (unsigned)(A_STAGE + B_STAGE));\n"
      "          tsr_bulk(reinterpret_cast<float *>(As + st * A_STAGE),\n"
      "                   reinterpret_cast<const float *>(at + (long long)kb * A_STAGE), A_STAGE, bars + 8u * st);\n"
      "          tsr_bulk(reinterpret_cast<float *>(Bs + st * B_STAGE),\n"
      "                   reinterpret_cast<const float *>(bt + (long long)kb * B_STAGE), B_STAGE, bars + 8u * st);\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "    return;\n"
      "  }\n"
      "  tsr_consumer_regs();\n"
      "  const int tid = (int)threadIdx.x, lane = tid & 31, wq = (tid >> 5) & 3;\n"
      "  // D fragment (as .f32): register 4j + r of lane (g, t) in warp q of the warpgroup\n"
      "  // holds row 16q + g + 8 (r >> 1), column 8j + 2t + (r & 1) of the m64 x WN chunk\n"
      "  const int rl = wg * WM + wq * 16 + (lane >> 2), cl = 2 * (lane & 3);\n"
      "  int it = 0;\n"
      "  for (int w = (int)blockIdx.x; w < ITEMS; w += (int)gridDim.x) {\n"
      "    const int mod = w / TILES;\n"
      "    unsigned tr, tc;\n"
      "    tsr_walk((unsigned)(w %% TILES), tr, tc);\n"
      "    const int m0 = (int)tr * BM, n0 = (int)tc * BN;\n"
      "    int acc[MW][NC][WN / 2];\n"
      "#pragma unroll\n    for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n      for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n        for (int r = 0; r < WN / 2; ++r) acc[i][j][r] = 0;\n"
      "%s"
      "      const int cur = it %% STAGES;\n"
      "      tsr_mbar_wait(bars + 8u * cur, (it / STAGES) & 1); // block kb's tiles landed\n"
      "      const unsigned a0 = sa + (unsigned)(cur * A_STAGE + wg * WM * BK);\n"
      "      const unsigned b0 = sb + (unsigned)(cur * B_STAGE);\n"
      "      tsr_wg_fence();\n"
      "#pragma unroll\n"
      "      for (int kk = 0; kk < BK / 32; ++kk)\n"
      "#pragma unroll\n"
      "        for (int c = 0; c < MW * NC; ++c) {\n"
      "          const int i = c / NC, j = c %% NC;\n"
      "          // K step kk: two core matrices along k, 256 bytes further\n"
      "          tsr_wgmma_s8(acc[i][j], tsr_desc(a0 + (unsigned)(i * 64 * BK) + 256u * kk),\n"
      "                       tsr_desc(b0 + (unsigned)(j * WN * BK) + 256u * kk));\n"
      "        }\n"
      "      tsr_wg_commit();\n"
      "      if (kb > 0) { // block kb-1's wgmmas done: its stage is free\n"
      "        tsr_wg_wait<1>();\n"
      "        tsr_mbar_arrive(bars + 8u * (STAGES + (it - 1) %% STAGES));\n"
      "      }\n"
      "    }\n"
      "    tsr_wg_wait<0>();\n"
      "    tsr_mbar_arrive(bars + 8u * (STAGES + (it - 1) %% STAGES)); // the item's last stage\n"
      "#pragma unroll\n    for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n      for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n        for (int r = 0; r < WN / 2; ++r) tsr_wg_pin_i(acc[i][j][r]);\n"
      "    if (mod == NMOD) { // the magnitudes' product: the int32 sums themselves\n"
      "      int *lb = reinterpret_cast<int *>(reinterpret_cast<char *>(W) + WB_L) + (long long)bz * M * N;\n"
      "#pragma unroll\n      for (int i = 0; i < MW; ++i)\n"
      "#pragma unroll\n        for (int j = 0; j < NC; ++j)\n"
      "#pragma unroll\n          for (int r = 0; r < WN / 2; ++r) {\n"
      "            const int row = m0 + rl + i * 64 + 8 * ((r & 3) >> 1), col = n0 + cl + j * WN + 8 * (r >> 2) + (r & 1);\n"
      "            if (%s) lb[(long long)row * N + col] = acc[i][j][r];\n"
      "          }\n"
      "      continue;\n"
      "    }\n"
      "    tsr_consumer_sync(); // the last item's staging tile is out\n"
      "    switch (mod) { // a constant modulus per case: the remainders are multiplications\n",
      p->batch > 1 ? "(int)blockIdx.z" : "0", ploop, cloop, guard);
  for (int j = 0; j < g->nmod; j++)
    put(s, "      case %d: tsr_stage_res<%d>(stg, acc, rl, cl); break;\n", j, tsr__ozaki_moduli[j]);
  put(s,
      "      default: break;\n"
      "    }\n"
      "    tsr_consumer_sync(); // the staging tile is complete\n"
      "    unsigned char *res = reinterpret_cast<unsigned char *>(W) + WB_R + ((long long)bz * NMOD + mod) * M * NP;\n"
      "    for (int e = tid; e < BM * (BN / 16); e += 128 * WGS) {\n"
      "      const int r = e / (BN / 16), c = (e %% (BN / 16)) * 16, row = m0 + r, col = n0 + c;\n");
  /* 16-byte rows always: the planes' pitch NP is N rounded up to 16 and a
   * chunk starts at a multiple of 16, so it lies wholly inside [0, NP) or
   * wholly past it (byte stores where N % 16 != 0 cost 2049x4097x1025 its
   * copy-out: 653 us against ~250 predicted, session 7) */
  put(s,
      "      %s*reinterpret_cast<uint4 *>(res + (long long)row * NP + col) =\n"
      "          *reinterpret_cast<const uint4 *>(stg + r * LST + c);\n",
      g->tail_m && g->tail_n ? "if (row < M && col < NP) "
      : g->tail_m            ? "if (row < M) "
      : g->tail_n            ? "if (col < NP) "
                             : "");
  put(s, "    }\n  }\n}\n\n");
}

/* The reconstruction's value of one output from its residues (res: a format
 * naming residue j, v0 already set): Garner's balanced digits v_j, X in FP64,
 * alpha X 2^-(sa + sb) (+ beta C), rounded once; an overflow recomputed
 * strictly. Ends the enclosing function. */
static void put_oz_value(sb_t *s, const tsr__emit_geo *g, int beta0, const char *fix, const char *res) {
  int n = g->nmod;
  TSR_ASSERT(tsr__ozaki_moduli[0] == 256);
  for (int j = 1; j < n; j++) {
    int mj = tsr__ozaki_moduli[j];
    long long pm = 1; /* P_i mod m_j */
    long long off = ((long long)j * 128 * 255 / mj + 1) * mj;
    put(s, "  const unsigned t%d = (unsigned)((int)", j);
    put(s, res, j);
    put(s, " + %lld", off);
    for (int i = 0; i < j; i++) {
      if (pm) put(s, " - v%d * %lld", i, pm);
      pm = pm * tsr__ozaki_moduli[i] % mj;
    }
    put(s,
        ");\n  const int d%d = (int)((t%d %% %du) * %du %% %du), v%d = d%d > %d ? d%d - %d : d%d;\n", j,
        j, mj, oz_inv((int)pm, mj), mj, j, j, mj - 1 - mj / 2, j, mj, j);
  }
  put(s, "  double x = (double)v%d;\n", n - 1);
  for (int j = n - 2; j >= 0; j--) put(s, "  x = (double)v%d + %d.0 * x;\n", j, tsr__ozaki_moduli[j]);
  put(s,
      "  const double y = (double)alpha * x * tsr_p2d(-(sa + sb));\n"
      "  const float f = (float)(%s);\n"
      "  // an overflow, where the operands' rounding may have crossed FLT_MAX: strictly\n"
      "  *c = tsr_finite(f) ? f : %s;\n"
      "}\n",
      beta0 ? "y" : "y + (double)beta * (double)*c", fix);
}

/* The reconstruction (the reduction slot of the kernel ABI): one thread per
 * output. Garner's digits v_j (balanced) from the residues r_j, with the
 * constants P_i mod m_j (P_i the product of the first i moduli) and
 * (P_j mod m_j)^-1 baked in; X = v_0 + m_0 (v_1 + m_1 (v_2 + ...)) in FP64. */
static void emit_oz_recon4(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g);

static void emit_oz_recon(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  if (g->rvec == 4) {
    emit_oz_recon4(s, p, g);
    return;
  }
  int beta0 = p->beta == 0.0f;
  int small = (double)p->batch * (double)p->m * (double)p->n < 2147483648.0 - 256.0;
  const char *fix = beta0 ? "alpha * tsr_fix(A, B, bz, row, col, 0, K)"
                          : "alpha * tsr_fix(A, B, bz, row, col, 0, K) + beta * *c";
  put(s,
      "// Reconstruction: the residues of a'b' -> X = a'b' (Garner, balanced digits) ->\n"
      "// alpha X 2^-(sa + sb) (+ beta C) in FP64, rounded once to FP32.\n"
      "typedef %s tsr_ridx; // outputs of all batch items\n"
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_reduce(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                float *__restrict__ C, const float *__restrict__ W, float alpha, float beta) {\n"
      "  constexpr tsr_ridx MN = (tsr_ridx)M * N;\n"
      "  const tsr_ridx i = (tsr_ridx)blockIdx.x * 256 + (tsr_ridx)threadIdx.x;\n"
      "  if (i >= MN * BATCH) return;\n"
      "  const int bz = (int)(i / MN);\n"
      "  const tsr_ridx e = i - (tsr_ridx)bz * MN;\n"
      "  const int row = (int)(e / N), col = (int)(e - (tsr_ridx)row * N);\n"
      "  const char *w = reinterpret_cast<const char *>(W);\n"
      "  const int sa = reinterpret_cast<const int *>(w + WB_SA)[(long long)bz * PRA + row];\n"
      "  const int sb = reinterpret_cast<const int *>(w + WB_SB)[(long long)bz * PRB + col];\n"
      "  float *c = C + (tsr_idx)bz * SC + (tsr_idx)row * LDC + col;\n"
      "  if (sa == TSR_NOSCALE || sb == TSR_NOSCALE) { // a NaN or an infinity: strictly\n"
      "    *c = %s;\n"
      "    return;\n"
      "  }\n",
      small ? "int" : "long long", fix);
  /* the guard (docs/accuracy.md "ozaki"): the operands' rounding error
   * bound E = eps_a |B|_j + eps_b |A|_i + K eps_a eps_b (eps = 2^-(sh+1), 0
   * for a zero row or column) against the FP32 contract's (K + 64) u |A||B|,
   * with the magnitudes' product L <= (|A||B|)_ij; (K + 32) leaves the final
   * rounding to FP32 its share. A breach: the output is recomputed strictly. */
  put(s,
      "  const double na = reinterpret_cast<const double *>(w + WB_NA)[(long long)bz * PRA + row];\n"
      "  const double nb = reinterpret_cast<const double *>(w + WB_NB)[(long long)bz * PRB + col];\n"
      "  const double ea = na > 0.0 ? tsr_p2d(-(sa + 1)) : 0.0, eb = nb > 0.0 ? tsr_p2d(-(sb + 1)) : 0.0;\n"
      "  const double err = ea * nb + eb * na + (double)K * ea * eb;\n"
      "  const int lq = reinterpret_cast<const int *>(w + WB_L)[(long long)bz * MN + e];\n"
      "  const double low = (double)lq * tsr_p2d(-(sa + sb - BITS_A - BITS_B + 16));\n"
      "  if (err > ((double)K + 32.0) * 0x1p-24 * low) {\n"
      "    *c = %s;\n"
      "    return;\n"
      "  }\n"
      "  constexpr long long RPL = (long long)M * NP; // a residue plane, bytes\n"
      "  const unsigned char *r =\n"
      "      reinterpret_cast<const unsigned char *>(w + WB_R) + bz * NMOD * RPL + (long long)row * NP + col;\n"
      "  // digits: v_j = (r_j - sum_i<j v_i P_i) / P_j mod m_j, balanced; t_j kept >= 0 by a\n"
      "  // multiple of m_j, so the remainders are unsigned\n"
      "  const int v0 = (int)(signed char)r[0]; // m_0 = 256\n",
      fix);
  put_oz_value(s, g, beta0, fix, "r[%d * RPL]");
}

/* rvec=4: four outputs of one row per thread, columns 4q .. 4q + 3 of the
 * residue planes' NP-byte rows (NP % 16 == 0, so every row holds whole
 * quads; the outputs past N are skipped). The row's scale exponent and
 * 1-norm are read once, each modulus's four residues as one 32-bit word;
 * each output then takes the rvec=1 path (tsr_recon_out): the specials, the
 * guard, Garner's digits, one rounding. */
static void emit_oz_recon4(sb_t *s, const tsr_problem *p, const tsr__emit_geo *g) {
  int beta0 = p->beta == 0.0f;
  int small = (double)p->batch * (double)p->m * (double)((p->n + 15) / 16 * 16) < 2147483648.0 - 256.0;
  const char *fix = beta0 ? "alpha * tsr_fix(A, B, bz, row, col, 0, K)"
                          : "alpha * tsr_fix(A, B, bz, row, col, 0, K) + beta * *c";
  put(s,
      "// Reconstruction, four outputs of one row per thread (rvec=4): the residues of a'b'\n"
      "// -> X = a'b' (Garner, balanced digits) -> alpha X 2^-(sa + sb) (+ beta C) in FP64,\n"
      "// rounded once to FP32.\n"
      "typedef %s tsr_ridx; // outputs of all batch items\n"
      "__device__ __forceinline__ void tsr_recon_out(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                                              float *c, int bz, int row, int col, int sa, int sb,\n"
      "                                              double na, double nb, int lq, const int (&rr)[NMOD],\n"
      "                                              float alpha, float beta) {\n"
      "  if (sa == TSR_NOSCALE || sb == TSR_NOSCALE) { // a NaN or an infinity: strictly\n"
      "    *c = %s;\n"
      "    return;\n"
      "  }\n"
      "  // the guard (docs/accuracy.md \"ozaki\"), as with rvec=1\n"
      "  const double ea = na > 0.0 ? tsr_p2d(-(sa + 1)) : 0.0, eb = nb > 0.0 ? tsr_p2d(-(sb + 1)) : 0.0;\n"
      "  const double err = ea * nb + eb * na + (double)K * ea * eb;\n"
      "  const double low = (double)lq * tsr_p2d(-(sa + sb - BITS_A - BITS_B + 16));\n"
      "  if (err > ((double)K + 32.0) * 0x1p-24 * low) {\n"
      "    *c = %s;\n"
      "    return;\n"
      "  }\n"
      "  const int v0 = (int)(signed char)rr[0]; // m_0 = 256\n",
      small ? "int" : "long long", fix, fix);
  put_oz_value(s, g, beta0, fix, "rr[%d]");
  put(s,
      "extern \"C\" __global__ void __launch_bounds__(256)\n"
      "tsr_gemm_reduce(const float *__restrict__ A, const float *__restrict__ B,\n"
      "                float *__restrict__ C, const float *__restrict__ W, float alpha, float beta) {\n"
      "  constexpr int NQ = (int)(NP / 4); // quads of a residue row\n"
      "  constexpr tsr_ridx MQ = (tsr_ridx)M * NQ;\n"
      "  const tsr_ridx i = (tsr_ridx)blockIdx.x * 256 + (tsr_ridx)threadIdx.x;\n"
      "  if (i >= MQ * BATCH) return;\n"
      "  const int bz = (int)(i / MQ);\n"
      "  const tsr_ridx e4 = i - (tsr_ridx)bz * MQ;\n"
      "  const int row = (int)(e4 / NQ), col = 4 * (int)(e4 - (tsr_ridx)row * NQ);\n"
      "  const long long e = (long long)row * N + col; // the first output's index in its item\n"
      "  const char *w = reinterpret_cast<const char *>(W);\n"
      "  const int sa = reinterpret_cast<const int *>(w + WB_SA)[(long long)bz * PRA + row];\n"
      "  const double na = reinterpret_cast<const double *>(w + WB_NA)[(long long)bz * PRA + row];\n"
      "  const int *sbp = reinterpret_cast<const int *>(w + WB_SB) + (long long)bz * PRB + col;\n"
      "  const double *nbp = reinterpret_cast<const double *>(w + WB_NB) + (long long)bz * PRB + col;\n"
      "  const int *lqp = reinterpret_cast<const int *>(w + WB_L) + (long long)bz * M * N + e;\n"
      "  constexpr long long RPL = (long long)M * NP; // a residue plane, bytes\n"
      "  const unsigned char *r =\n"
      "      reinterpret_cast<const unsigned char *>(w + WB_R) + bz * NMOD * RPL + (long long)row * NP + col;\n"
      "  unsigned rw[NMOD]; // residue j of outputs col .. col + 3, a byte each\n"
      "#pragma unroll\n"
      "  for (int j = 0; j < NMOD; ++j) rw[j] = *reinterpret_cast<const unsigned *>(r + j * RPL);\n"
      "  float *c = C + (tsr_idx)bz * SC + (tsr_idx)row * LDC + col;\n"
      "#pragma unroll\n"
      "  for (int q = 0; q < 4; ++q) {\n"
      "    if (col + q >= N) break; // past the row's end (N %% 4 != 0)\n"
      "    int rr[NMOD];\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < NMOD; ++j) rr[j] = (int)((rw[j] >> (8 * q)) & 255u);\n"
      "    tsr_recon_out(A, B, c + q, bz, row, col + q, sa, sbp[q], na, nbp[q], lqp[q], rr, alpha, beta);\n"
      "  }\n"
      "}\n");
}

void tsr__emit_ozaki(tsr__sb *s, const tsr_problem *p, const tsr__emit_geo *g) {
  emit_oz_constants(s, p, g);
  emit_oz_ptx(s, g);
  tsr__emit_walk(s, g);
  put(s,
      "// shared-memory matrix descriptor (no swizzle): start >> 4, LBO = 128 bytes (the\n"
      "// next core matrix along k), SBO = BK * 8 bytes (the next 8 rows)\n"
      "__device__ __forceinline__ unsigned long long tsr_desc(unsigned saddr) {\n"
      "  return (unsigned long long)((saddr & 0x3FFFFu) >> 4) | ((unsigned long long)(128u >> 4) << 16) |\n"
      "         ((unsigned long long)((BK * 8u) >> 4) << 32);\n"
      "}\n\n");
  tsr__emit_fix(s, g);
  emit_oz_pack(s, p, g, &g->a);
  emit_oz_pack(s, p, g, &g->b);
  emit_oz_main(s, p, g);
  emit_oz_recon(s, p, g);
}
