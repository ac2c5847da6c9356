/* CPU backend: every output element against the FP64 oracle (exact on
 * dyadic inputs, 1e-4 on random ones) over shapes, transposes, alpha/beta,
 * batches, padded leading dimensions, every available ISA and micro-kernel,
 * every walk kind, 1 and 2 threads; plan rejections name the field. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/cpu/cpu_kernels.h"
#include "core/backend.h"
#include "core/inputs.h"
#include "measure/measure.h"
#include "tessera.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TSR_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TSR_TEST_SANITIZED 1
#endif
#endif
#ifndef TSR_TEST_SANITIZED
#define TSR_TEST_SANITIZED 0
#endif
/* Largest extent of the big case: smaller under the sanitizers. */
#define BIG (TSR_TEST_SANITIZED ? 131 : 513)

static const float PAD_SENTINEL = 777.25f;

typedef struct {
  int64_t m, n, k, batch;
  tsr_op oa, ob;
  float alpha, beta;
  int64_t pad_a, pad_b, pad_c;       /* extra leading-dimension elements */
  int64_t gap_a, gap_b, gap_c;       /* extra batch-stride elements */
  tsr_inputs inputs;
} gemm_case;

static tsr_problem make_problem(const gemm_case *g) {
  tsr_problem p;
  tsr_problem_init(&p, g->m, g->n, g->k);
  p.batch = g->batch ? g->batch : 1;
  p.op_a = g->oa;
  p.op_b = g->ob;
  p.alpha = g->alpha;
  p.beta = g->beta;
  int64_t acols = g->oa == TSR_OP_N ? g->k : g->m, arows = g->oa == TSR_OP_N ? g->m : g->k;
  int64_t bcols = g->ob == TSR_OP_N ? g->n : g->k, brows = g->ob == TSR_OP_N ? g->k : g->n;
  if (g->pad_a || g->gap_a) p.lda = acols + g->pad_a;
  if (g->pad_b || g->gap_b) p.ldb = bcols + g->pad_b;
  if (g->pad_c || g->gap_c) p.ldc = g->n + g->pad_c;
  if (g->gap_a) p.stride_a = arows * p.lda + g->gap_a;
  if (g->gap_b) p.stride_b = brows * p.ldb + g->gap_b;
  if (g->gap_c) p.stride_c = g->m * p.ldc + g->gap_c;
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  return p;
}

/* 1 when stored element idx of C lies inside the logical m×n of its batch. */
static int c_is_logical(const tsr_problem *p, int64_t idx) {
  int64_t rows, cols, ld, stride;
  tsr__stored_dims(p, TSR_TENSOR_C, &rows, &cols, &ld, &stride);
  int64_t b = idx / stride, r = (idx % stride) / ld, c = (idx % stride) % ld;
  return b < p->batch && r < p->m && c < p->n;
}

/* Runs one case through tsr_gemm (plan NULL: the default) or tsr__cpu_gemm
 * and checks every element and that no padding element changed. */
static void run_case_with(const gemm_case *g, const tsr_plan *plan, tsr_context *ctx, int direct) {
  tsr_problem p = make_problem(g);
  int64_t na = tsr_problem_elems_a(&p), nb = tsr_problem_elems_b(&p), nc = tsr_problem_elems_c(&p);
  float *a = malloc((size_t)na * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
  float *c = malloc((size_t)nc * sizeof *c), *c0 = malloc((size_t)nc * sizeof *c0);
  double *ref = malloc((size_t)(p.batch * p.m * p.n) * sizeof *ref);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_non_null(c0);
  assert_non_null(ref);
  tsr_fill(&p, TSR_TENSOR_A, g->inputs, 11, a);
  tsr_fill(&p, TSR_TENSOR_B, g->inputs, 11, b);
  if (g->beta != 0.0f) tsr_fill(&p, TSR_TENSOR_C, g->inputs, 11, c);
  else tsr_poison(&p, c); /* beta == 0 must never read C */
  for (int64_t i = 0; i < nc; i++)
    if (!c_is_logical(&p, i)) c[i] = PAD_SENTINEL;
  memcpy(c0, c, (size_t)nc * sizeof *c);
  assert_int_equal(tsr_oracle_cpu(&p, a, b, g->beta != 0.0f ? c0 : NULL, ref, NULL, NULL), TSR_OK);

  tsr_status st;
  if (direct) {
    tsr_plan_info info;
    assert_int_equal(tsr_plan_realize(ctx, TSR_BACKEND_CPU, &p, plan, &info), TSR_OK);
    st = tsr__cpu_gemm(ctx, &p, &info.plan, a, b, c);
  } else {
    st = tsr_gemm(ctx, TSR_BACKEND_CPU, &p, plan, a, b, c);
  }
  if (st) fail_msg("gemm failed: %s", tsr_context_message(ctx));

  tsr_receipt r;
  int exact = g->inputs == TSR_INPUTS_DYADIC;
  tsr_validate(&p, c, ref, exact ? 0.0 : 1e-4, exact ? 0.0 : 1e-4, &r);
  if (!r.passed || (exact && r.max_abs_err != 0.0))
    fail_msg("%lldx%lldx%lld op=%d%d batch=%lld alpha=%g beta=%g: %lld of %lld failed, first "
             "%lld, max abs err %g",
             (long long)p.m, (long long)p.n, (long long)p.k, (int)p.op_a, (int)p.op_b,
             (long long)p.batch, p.alpha, p.beta, (long long)r.failed, (long long)r.checked,
             (long long)r.first_fail, r.max_abs_err);
  assert_int_equal(r.checked, p.batch * p.m * p.n);
  for (int64_t i = 0; i < nc; i++)
    if (!c_is_logical(&p, i) && memcmp(&c[i], &c0[i], sizeof *c) != 0)
      fail_msg("padding element %lld of C changed", (long long)i);
  free(a);
  free(b);
  free(c);
  free(c0);
  free(ref);
}

static tsr_context *g_ctx;

static void run_case(const gemm_case *g, const tsr_plan *plan) { run_case_with(g, plan, g_ctx, 0); }

static int setup(void **state) {
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
  return tsr_context_create(&g_ctx) == TSR_OK ? 0 : -1;
}

static int teardown(void **state) {
  tsr_context_destroy(g_ctx);
  g_ctx = NULL;
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
  tsr__cpu_l3_override(0);
  return 0;
}

static tsr_plan default_plan_for(const gemm_case *g) {
  tsr_problem p = make_problem(g);
  tsr_plan pl;
  assert_int_equal(tsr_plan_default(g_ctx, TSR_BACKEND_CPU, &p, &pl), TSR_OK);
  return pl;
}

/* ---- shapes × transposes with the default plan -------------------------- */

static const int64_t shapes[][3] = {
    {1, 1, 1}, {127, 193, 61}, {BIG, 257, 129}, {64, 80, 1}, {3, 300, 17}, {200, 5, 40}};

static void test_shapes_transposes_dyadic(void **state) {
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++) {
      gemm_case g = {.m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                     .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1), .alpha = 1.0f,
                     .beta = 0.0f, .inputs = TSR_INPUTS_DYADIC};
      run_case(&g, NULL);
    }
}

static void test_alpha_beta(void **state) {
  for (int t = 0; t < 4; t++) {
    /* beta != 0 on finite C, dyadic alpha/beta keep the result exact. */
    gemm_case g = {.m = 127, .n = 193, .k = 61, .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1),
                   .alpha = -1.5f, .beta = 0.5f, .inputs = TSR_INPUTS_DYADIC};
    run_case(&g, NULL);
    g.beta = 1.0f;
    g.alpha = 2.0f;
    run_case(&g, NULL);
    /* beta == 0 over NaN-filled C with alpha != 1. */
    g.beta = 0.0f;
    g.alpha = 0.25f;
    run_case(&g, NULL);
  }
}

static void test_random_inputs(void **state) {
  for (int t = 0; t < 4; t++) {
    gemm_case g = {.m = BIG, .n = 257, .k = 129, .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1),
                   .alpha = 0.75f, .beta = -0.3f, .inputs = TSR_INPUTS_RANDOM};
    run_case(&g, NULL);
    g.beta = 0.0f;
    run_case(&g, NULL);
  }
}

/* K spans several K blocks, each block boundary re-applies C (beta = 1). */
static void test_k_blocks(void **state) {
  gemm_case g = {.m = 70, .n = 90, .k = 300, .alpha = 1.0f, .beta = -2.0f,
                 .inputs = TSR_INPUTS_DYADIC};
  tsr_plan pl = default_plan_for(&g);
  pl.bk = 64; /* 300 = 4*64 + 44: a K tail */
  run_case(&g, &pl);
  g.beta = 0.0f;
  pl.bk = 1;
  run_case(&g, &pl);
}

static void test_batch_and_padding(void **state) {
  for (int t = 0; t < 4; t++) {
    gemm_case g = {.m = 37, .n = 45, .k = 29, .batch = 3, .oa = (tsr_op)(t & 1),
                   .ob = (tsr_op)(t >> 1), .alpha = 1.0f, .beta = 0.0f,
                   .inputs = TSR_INPUTS_DYADIC};
    run_case(&g, NULL); /* compact batch */
    g.pad_a = 3;
    g.pad_b = 5;
    g.pad_c = 7;
    run_case(&g, NULL); /* padded rows */
    g.gap_a = 11;
    g.gap_b = 13;
    g.gap_c = 17;
    g.beta = 0.5f;
    run_case(&g, NULL); /* padded rows and batch strides, beta != 0 */
    g.inputs = TSR_INPUTS_RANDOM;
    run_case(&g, NULL);
  }
}

/* ---- every ISA and micro-kernel; walks; threads --------------------------- */

static void check_kernels_of(const tsr__cpu_kernel *list, tsr_isa isa) {
  if (!tsr__cpu_isa_supported(isa)) {
    print_message("isa %d not supported here: skipped\n", (int)isa);
    return;
  }
  for (const tsr__cpu_kernel *k = list; k->fn; k++)
    for (int t = 0; t < 4; t++) {
      gemm_case g = {.m = 127, .n = 193, .k = 61, .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1),
                     .alpha = 1.0f, .beta = t == 3 ? 0.5f : 0.0f, .inputs = TSR_INPUTS_DYADIC};
      tsr_plan pl = default_plan_for(&g);
      pl.a = pl.b = TSR_IN_STAGED; /* the packed micro-kernels (small defaults read in place) */
      pl.isa = isa;
      pl.tm = k->tm;
      pl.tn = k->tn;
      pl.bm = 2 * k->tm; /* many tiles, M and N tails inside and across tiles */
      pl.bn = 2 * k->tn;
      pl.bk = 24;
      pl.threads = 1 + (t & 1);
      run_case(&g, &pl);
      /* N over several 256-column prepack units of op(B), none a multiple of
       * tn for most kernels: units must still split on panel boundaries
       * (8x48 once overlapped its neighbour's panel and overran the buffer). */
      gemm_case wide = g;
      wide.m = 67, wide.n = 601, wide.k = 29;
      run_case(&wide, &pl);
    }
}

static void test_every_isa_kernel(void **state) {
  check_kernels_of(tsr__cpu_kernels_generic, TSR_ISA_GENERIC);
  check_kernels_of(tsr__cpu_kernels_avx2, TSR_ISA_AVX2);
  check_kernels_of(tsr__cpu_kernels_avx512, TSR_ISA_AVX512);
}

static void test_walks_threads(void **state) {
  const char *walks[] = {"linear", "rect:2x3", "rect:3x2", "stripe:3", "stripe:2", "rect:4x100"};
  for (size_t w = 0; w < sizeof walks / sizeof walks[0]; w++)
    for (int threads = 1; threads <= 2; threads++)
      for (int direct = 0; direct <= 1; direct++) {
        gemm_case g = {.m = 101, .n = 211, .k = 33, .batch = 2, .alpha = 1.0f, .beta = 0.0f,
                       .oa = (tsr_op)direct, .inputs = TSR_INPUTS_DYADIC};
        tsr_plan pl = default_plan_for(&g);
        char msg[128];
        assert_int_equal(tsr_walk_parse(walks[w], &pl.walk, msg, sizeof msg), TSR_OK);
        pl.bm = pl.tm; /* a tall grid of small tiles */
        pl.bn = pl.tn;
        pl.threads = threads;
        run_case_with(&g, &pl, g_ctx, direct);
      }
}

/* An AVX2-only or baseline CPU: the default plan must pick a kernel that
 * exists there, and asking for a missing ISA is rejected. */
static void test_older_cpu(void **state) {
  const tsr_isa limits[] = {TSR_ISA_AVX2, TSR_ISA_GENERIC};
  for (int l = 0; l < 2; l++) {
    if (!tsr__cpu_isa_supported(limits[l])) continue;
    tsr__cpu_isa_limit(limits[l]);
    gemm_case g = {.m = 127, .n = 193, .k = 61, .alpha = 1.0f, .inputs = TSR_INPUTS_DYADIC};
    run_case(&g, NULL);
    tsr_problem p = make_problem(&g);
    tsr_plan pl = default_plan_for(&g);
    tsr_plan_info info;
    assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
    assert_int_equal(info.plan.isa, limits[l]);
    pl.isa = TSR_ISA_AVX512;
    assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_ERR_REJECTED);
    assert_non_null(strstr(tsr_context_message(g_ctx), "isa=avx512"));
    assert_non_null(strstr(tsr_context_message(g_ctx), "not supported"));
    tsr__cpu_isa_limit(TSR_ISA_AVX512);
  }
}

/* ---- GEMV path (M == 1 or N == 1) ----------------------------------------- */

/* One case of a sweep over extents x op pairs (t: bit 0 op(A), bit 1 op(B))
 * x variants (v: 0 plain dyadic, 1 alpha -1.5 and beta 0.5 dyadic, 2 plain
 * random). */
static gemm_case sweep_case(const int64_t dim[3], int t, int v) {
  return (gemm_case){.m = dim[0], .n = dim[1], .k = dim[2], .oa = (tsr_op)(t & 1),
                     .ob = (tsr_op)(t >> 1), .alpha = v == 1 ? -1.5f : 1.0f,
                     .beta = v == 1 ? 0.5f : 0.0f,
                     .inputs = v == 2 ? TSR_INPUTS_RANDOM : TSR_INPUTS_DYADIC};
}

/* The random-input workload of a specials case: op pair t (bit 0 op(A), bit 1
 * op(B)), alpha 0.75, beta 0.5 for kind 6 (a NaN in C) else 0; the caller
 * plants the special values. */
static tsr__workload *specials_workload(const int64_t dim[3], int t, int kind, uint64_t seed,
                                        tsr_problem *p) {
  tsr_problem_init(p, dim[0], dim[1], dim[2]);
  p->op_a = (tsr_op)(t & 1);
  p->op_b = (tsr_op)(t >> 1);
  p->alpha = 0.75f;
  p->beta = kind == 6 ? 0.5f : 0.0f;
  char msg[256];
  assert_int_equal(tsr_problem_check(p, msg, sizeof msg), TSR_OK);
  tsr__workload *w;
  assert_int_equal(tsr__workload_create(p, TSR_INPUTS_RANDOM, seed, NULL, 0, &w, msg, sizeof msg),
                   TSR_OK);
  return w;
}

/* Every transpose (axpy and dot forms, strided vectors), K across the axpy
 * (256) and dot (2048) K blocks and their tails, outputs across the
 * 2048-output chunk and ragged vector tails, 1 and 2 threads, alpha/beta,
 * beta = 0 over a NaN-poisoned C; dyadic (exact) and random inputs. */
static void gemv_cases(void) {
  static const int64_t dims[][3] = {{1, 17, 37},   {17, 1, 37},   {1, 1, 300},  {1, 2100, 300},
                                    {2100, 1, 2100}, {1, 5, 2100}, {5, 1, 300}, {1, 33, 1},
                                    {40, 1, 513},  {1, 40, 513}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
    for (int t = 0; t < 4; t++)
      for (int v = 0; v < 3; v++) {
        gemm_case g = sweep_case(dims[d], t, v);
        tsr_plan pl = default_plan_for(&g);
        for (int threads = 1; threads <= 2; threads++) {
          pl.threads = threads;
          run_case(&g, &pl);
        }
      }
  /* batches with padded leading dimensions and batch strides */
  for (int t = 0; t < 4; t++)
    for (int v = 0; v < 2; v++) {
      gemm_case g = {.m = v ? 37 : 1, .n = v ? 1 : 45, .k = 29, .batch = 3,
                     .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1), .alpha = 1.0f, .beta = 0.5f,
                     .pad_a = 3, .pad_b = 5, .pad_c = 7, .gap_a = 11, .gap_b = 13, .gap_c = 17,
                     .inputs = TSR_INPUTS_DYADIC};
      run_case(&g, NULL);
      g.inputs = TSR_INPUTS_RANDOM;
      g.beta = 0.0f;
      tsr_plan pl = default_plan_for(&g);
      pl.threads = 2;
      run_case(&g, &pl);
    }
}

static void test_gemv(void **state) {
  gemv_cases(); /* AVX-512 where present */
  tsr__cpu_isa_limit(TSR_ISA_AVX2);
  gemv_cases(); /* the AVX2 kernels where present */
  tsr__cpu_isa_limit(TSR_ISA_GENERIC);
  gemv_cases(); /* the portable kernel */
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
}

/* The GEMV path under the FP32 contract (docs/accuracy.md: Frobenius within
 * 1.25x the strict reference's, componentwise bound, NaN/Inf classes) on
 * random inputs and on special values: NaN, +-Inf, FLT_MAX, subnormals,
 * 0 x Inf, a NaN in C with beta != 0. */
static void test_gemv_contract(void **state) {
  static const int64_t dims[][3] = {{1, 2100, 3000}, {2100, 1, 3000}, {1, 1200, 40}, {1200, 1, 40}};
  static const tsr_isa limit[] = {TSR_ISA_AVX512, TSR_ISA_AVX2, TSR_ISA_GENERIC};
  static const char *const lname[] = {"auto", "avx2", "generic"};
  for (int isa = 0; isa < 3; isa++) {
    tsr__cpu_isa_limit(limit[isa]);
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
      for (int t = 0; t < 4; t++)
        for (int kind = 0; kind < 7; kind++) {
          if (dims[d][2] > 40 && kind > 0) continue; /* specials on the small ones */
          tsr_problem p;
          tsr__workload *w = specials_workload(dims[d], t, kind, 7, &p);
          /* the vector's element k, and the matrix's element (output i, k) */
          int64_t K = p.k, len = p.m == 1 ? p.n : p.m;
          float *vec = p.m == 1 ? w->a : w->b, *mat = p.m == 1 ? w->b : w->a;
          int mat_t = p.m == 1 ? p.op_b == TSR_OP_T : p.op_a == TSR_OP_N; /* rows of length K */
#define MAT(i, k) mat[mat_t ? (i) * K + (k) : (k) * len + (i)]
          switch (kind) {
            case 1: vec[7] = NAN; break;
            case 2: MAT(3, 2) = INFINITY; MAT(9, 4) = -INFINITY; break;
            case 3: vec[5] = 3.4028235e38f; MAT(4, 5) = 2.0f; break; /* overflow to Inf */
            case 4: for (int64_t k = 0; k < K; k++) vec[k] = 1e-39f * (float)(k + 1), MAT(6, k) = 1e30f; break;
            case 5: vec[0] = 0.0f; MAT(2, 0) = INFINITY; break; /* 0 x Inf = NaN */
            case 6: w->c0[5 * (p.m == 1 ? 1 : p.n)] = NAN; break;
            default: break;
          }
#undef MAT
          assert_int_equal(tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro),
                           TSR_OK);
          float *c = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *c);
          assert_non_null(c);
          if (w->c0) memcpy(c, w->c0, (size_t)tsr_problem_elems_c(&p) * sizeof *c);
          else tsr_poison(&p, c);
          assert_int_equal(tsr_gemm(g_ctx, TSR_BACKEND_CPU, &w->p, NULL, w->a, w->b, c), TSR_OK);
          tsr_receipt r;
          tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, c, &r);
          if (!r.passed) {
            char msg[256];
            tsr__receipt_summary(&r, msg, sizeof msg);
            fail_msg("gemv %lldx%lldx%lld op=%d%d kind %d isa %s: %s", (long long)p.m,
                     (long long)p.n, (long long)p.k, (int)p.op_a, (int)p.op_b, kind,
                     lname[isa], msg);
          }
          if (kind == 0 && len >= 1024) /* the blocked sums beat the k-ascending chain */
            assert_true(r.rel_fro_err <= w->strict_rel_fro * 1.25);
          int specials = 0;
          for (int64_t i = 0; i < len; i++) specials += !isfinite((float)w->ref[i]);
          if (kind == 1 || kind == 2 || kind == 5 || kind == 6) assert_true(specials > 0);
          free(c);
          tsr__workload_destroy(w);
        }
  }
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
}

/* ---- split-K ----------------------------------------------------------- */

/* splitk > 1: slices of whole K blocks (equal and ragged), K tails, several
 * tiles, transposes, alpha/beta (beta = 0 over NaN-poisoned C), batches with
 * padding, 1 to 3 threads, dyadic and random inputs; the default plan splits
 * K for a small output with long K. */
static void test_split_k(void **state) {
  /* K blocks of 32: 22, 10, 9, 3 and 4 (3 slices of 4 blocks: none may be
   * empty) */
  static const int64_t dims[][3] = {{64, 64, 700}, {37, 45, 301}, {13, 100, 257}, {130, 70, 96},
                                    {20, 33, 128}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
    for (int t = 0; t < 4; t++)
      for (int v = 0; v < 3; v++) {
        gemm_case g = sweep_case(dims[d], t, v);
        tsr_plan pl = default_plan_for(&g);
        pl.a = pl.b = TSR_IN_STAGED;
        pl.bk = 32;
        pl.bm = 2 * pl.tm; /* several tiles, M tails */
        for (int sk = 2; sk <= 3; sk++)
          for (int threads = 1; threads <= 3; threads++) {
            pl.splitk = sk;
            pl.threads = threads;
            run_case(&g, &pl);
          }
      }
  for (int t = 0; t < 4; t++) {
    gemm_case g = {.m = 37, .n = 45, .k = 290, .batch = 3, .oa = (tsr_op)(t & 1),
                   .ob = (tsr_op)(t >> 1), .alpha = 1.0f, .beta = 0.5f, .pad_a = 3, .pad_b = 5,
                   .pad_c = 7, .gap_a = 11, .gap_b = 13, .gap_c = 17, .inputs = TSR_INPUTS_DYADIC};
    tsr_plan pl = default_plan_for(&g);
    pl.a = pl.b = TSR_IN_STAGED;
    pl.bk = 48;
    pl.splitk = 3;
    pl.threads = 2;
    run_case(&g, &pl);
    g.inputs = TSR_INPUTS_RANDOM;
    g.beta = 0.0f;
    run_case(&g, &pl);
  }
  /* the default plan: one tile, K in equal slices, one per core */
  gemm_case g = {.m = 64, .n = 64, .k = 8192, .alpha = 1.0f, .inputs = TSR_INPUTS_RANDOM};
  tsr_plan pl = default_plan_for(&g);
  tsr_problem p = make_problem(&g);
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
  if (info.threads > 1) {
    assert_int_equal(pl.splitk, (int)info.threads);
    assert_int_equal(info.grid_rows * info.grid_cols, 1);
    assert_int_equal((8192 + pl.bk - 1) / pl.bk % pl.splitk, 0);
  }
  /* M = 64 is 8 rows of 8, not 6 of 12 (AVX-512: 8x32 then); a small view
   * plan keeps the 12-row direct kernels, which take partial rows */
  if (tsr__cpu_isa_supported(TSR_ISA_AVX512)) {
    assert_int_equal(pl.tm, 8);
    assert_int_equal(pl.bm % 8, 0);
    gemm_case small = {.m = 32, .n = 32, .k = 32, .alpha = 1.0f};
    tsr_plan sp = default_plan_for(&small);
    assert_int_equal(sp.a, TSR_IN_VIEW);
    assert_int_equal(sp.tm, 12);
  }
  run_case(&g, NULL);
}

/* Split-K under the FP32 contract on random inputs (2400 outputs) and on
 * special values: NaN, +-Inf, FLT_MAX overflow, subnormal products, 0 x Inf,
 * a NaN in C with beta != 0 (the classes must survive the partials' sum). */
static void test_split_k_contract(void **state) {
  for (int kind = 0; kind < 7; kind++) {
    static const int64_t dim[3] = {40, 60, 300};
    tsr_problem p;
    tsr__workload *w = specials_workload(dim, 0, kind, 5, &p);
    float *a = w->a, *b = w->b; /* row-major A 40x300, B 300x60 */
    switch (kind) {
      case 1: a[3 * 300 + 250] = NAN; break; /* in the last slice */
      case 2: a[5 * 300 + 2] = INFINITY; b[150 * 60 + 4] = -INFINITY; break;
      case 3: a[2 * 300 + 120] = 3.4028235e38f; b[120 * 60 + 3] = 2.0f; break;
      case 4: for (int k = 0; k < 300; k++) a[6 * 300 + k] = 1e-39f * (float)(k + 1), b[k * 60 + 1] = 1e30f; break;
      case 5: a[0 * 300 + 200] = 0.0f; b[200 * 60 + 0] = INFINITY; break;
      case 6: w->c0[7] = NAN; break;
      default: break;
    }
    assert_int_equal(tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro),
                     TSR_OK);
    tsr_plan pl;
    assert_int_equal(tsr_plan_default(g_ctx, TSR_BACKEND_CPU, &p, &pl), TSR_OK);
    pl.a = pl.b = TSR_IN_STAGED;
    pl.bk = 32; /* 10 K blocks: slices of 3, 3, 4 */
    pl.splitk = 3;
    pl.threads = 2;
    float *c = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *c);
    assert_non_null(c);
    if (w->c0) memcpy(c, w->c0, (size_t)tsr_problem_elems_c(&p) * sizeof *c);
    else tsr_poison(&p, c);
    assert_int_equal(tsr_gemm(g_ctx, TSR_BACKEND_CPU, &w->p, &pl, w->a, w->b, c), TSR_OK);
    tsr_receipt r;
    tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, c, &r);
    if (!r.passed) {
      char msg[256];
      tsr__receipt_summary(&r, msg, sizeof msg);
      fail_msg("split-K kind %d: %s", kind, msg);
    }
    if (kind == 0) assert_true(r.rel_fro_err <= w->strict_rel_fro * 1.25);
    int specials = 0;
    for (int64_t i = 0; i < p.m * p.n; i++) specials += !isfinite((float)w->ref[i]);
    if (kind == 1 || kind == 2 || kind == 5 || kind == 6) assert_true(specials > 0);
    free(c);
    tsr__workload_destroy(w);
  }
}

/* ---- whole tile columns per task (run_column) ---------------------------- */

/* Several tile rows: with enough tile columns per thread each task is a
 * whole column that packs each B block once for all its rows; with too few
 * the tiles run after a prepack of op(B). Here 3 columns per batch item:
 * batch 1 runs as columns on 1 thread and prepacked on 2 and 3; batch 2 as
 * columns on 1, 2 and 3 threads. On AVX2 and generic kernels op(A) is then
 * packed once up front; a fourth run with one tile column packs it per
 * tile. Every order must give bit-identical outputs (the same kernel calls,
 * K blocks in the same order) and meet the contract: random and special
 * inputs, M, N and K tails, both transposes, alpha/beta, batch and
 * padding. */
static void test_column_tasks(void **state) {
  for (int kind = 0; kind < 5; kind++)
    for (int t = 0; t < 4; t++)
      for (int64_t batch = 1; batch <= 2; batch++) {
        tsr_problem p;
        tsr_problem_init(&p, 101, 150, 333); /* 64-column tiles: 3 columns, N tail */
        p.op_a = (tsr_op)(t & 1);
        p.op_b = (tsr_op)(t >> 1);
        p.batch = batch;
        p.alpha = kind == 1 ? -1.5f : 1.0f;
        p.beta = kind == 1 || kind == 4 ? 0.5f : 0.0f;
        if (kind == 1) { /* padded rows and batch strides */
          int64_t acols = p.op_a == TSR_OP_N ? p.k : p.m, arows = p.op_a == TSR_OP_N ? p.m : p.k;
          int64_t bcols = p.op_b == TSR_OP_N ? p.n : p.k, brows = p.op_b == TSR_OP_N ? p.k : p.n;
          p.lda = acols + 3, p.ldb = bcols + 5, p.ldc = p.n + 7;
          p.stride_a = arows * p.lda + 11, p.stride_b = brows * p.ldb + 13;
          p.stride_c = p.m * p.ldc + 17;
        }
        char msg[256];
        assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
        tsr__workload *w;
        assert_int_equal(tsr__workload_create(&p, kind == 0 ? TSR_INPUTS_DYADIC : TSR_INPUTS_RANDOM,
                                              7, NULL, 0, &w, msg, sizeof msg),
                         TSR_OK);
        /* op(A)(i, k) and op(B)(k, j) of batch item 0 */
        int64_t rows, cols, lda, ldb, ldc, stride;
        tsr__stored_dims(&w->p, TSR_TENSOR_A, &rows, &cols, &lda, &stride);
        tsr__stored_dims(&w->p, TSR_TENSOR_B, &rows, &cols, &ldb, &stride);
        tsr__stored_dims(&w->p, TSR_TENSOR_C, &rows, &cols, &ldc, &stride);
        const int64_t ars = p.op_a == TSR_OP_N ? lda : 1, aks = p.op_a == TSR_OP_N ? 1 : lda;
        const int64_t brs = p.op_b == TSR_OP_N ? 1 : ldb, bks = p.op_b == TSR_OP_N ? ldb : 1;
        if (kind == 2) { /* NaN, +-Inf in the second and last K blocks */
          w->a[3 * ars + 100 * aks] = NAN;
          w->a[90 * ars + 330 * aks] = INFINITY;
          w->b[120 * brs + 200 * bks] = -INFINITY;
        } else if (kind == 3) { /* overflow and subnormal products */
          w->a[2 * ars + 70 * aks] = 3.4028235e38f, w->b[70 * bks + 140 * brs] = 2.0f;
          for (int k = 0; k < 333; k++) w->a[99 * ars + k * aks] = 1e-39f * (float)(k + 1);
        } else if (kind == 4) {
          w->c0[5 * ldc + 149] = NAN; /* a NaN in C with beta != 0 */
        }
        assert_int_equal(
            tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro), TSR_OK);
        tsr_plan pl;
        assert_int_equal(tsr_plan_default(g_ctx, TSR_BACKEND_CPU, &p, &pl), TSR_OK);
        pl.a = pl.b = TSR_IN_STAGED;
        pl.tm = 12, pl.tn = 32, pl.isa = TSR_ISA_AUTO;
        if (!tsr__cpu_isa_supported(TSR_ISA_AVX512)) pl.tm = 4, pl.tn = 8;
        pl.bm = 2 * pl.tm; /* several tile rows, an M tail */
        pl.bn = 2 * pl.tn;
        pl.bk = 64; /* 333 = 5*64 + 13: a K tail */
        if (pl.tn == 8) pl.bn = 64;
        pl.walk = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
        const int64_t nc = tsr_problem_elems_c(&w->p);
        float *c[4];
        for (int th = 1; th <= 4; th++) {
          float *out = c[th - 1] = malloc((size_t)nc * sizeof *out);
          assert_non_null(out);
          if (w->c0) memcpy(out, w->c0, (size_t)nc * sizeof *out);
          else tsr_poison(&w->p, out);
          pl.threads = th < 4 ? th : 2;
          if (th == 4) pl.bn = (int)((p.n + pl.tn - 1) / pl.tn * pl.tn); /* one tile column */
          assert_int_equal(tsr_gemm(g_ctx, TSR_BACKEND_CPU, &w->p, &pl, w->a, w->b, out), TSR_OK);
          tsr_receipt r;
          tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, out, &r);
          if (!r.passed || (kind == 0 && r.max_abs_err != 0.0)) {
            tsr__receipt_summary(&r, msg, sizeof msg);
            fail_msg("kind %d ops %d batch %lld threads %d: %s", kind, t, (long long)batch, th, msg);
          }
        }
        for (int64_t i = 0; i < nc; i++)
          if (memcmp(&c[0][i], &c[1][i], sizeof(float)) || memcmp(&c[0][i], &c[2][i], sizeof(float)) ||
              memcmp(&c[0][i], &c[3][i], sizeof(float)))
            fail_msg("kind %d ops %d batch %lld: element %lld differs between thread counts "
                     "and tilings (%a, %a, %a, %a)",
                     kind, t, (long long)batch, (long long)i, c[0][i], c[1][i], c[2][i], c[3][i]);
        for (int i = 0; i < 4; i++) free(c[i]);
        tsr__workload_destroy(w);
      }
}

/* ---- the macro-kernel's summation, exactly -------------------------------- */

/* The AVX2 6x16 kernel sums each K block as one FMA chain in k order per
 * output (a fresh accumulator), and C takes alpha·acc + beta·C per block;
 * with alpha = 1 and beta = 0 every output is exactly
 * c = acc_0 + acc_1 + ... (each sum rounded once), whatever order the
 * macro-kernel visits its micro-tiles in (A micro-panels outer on AVX2,
 * session 12). Several A and B micro-panels per block, M, N and K tails
 * (edge tiles), three K blocks, column tasks and the prepacked path:
 * every element must equal that chain bit for bit. */
static void test_macro_kernel_exact(void **state) {
  if (!tsr__cpu_isa_supported(TSR_ISA_AVX2)) skip();
  for (int variant = 0; variant < 3; variant++) {
    tsr_problem p;
    tsr_problem_init(&p, 71, 150, 150); /* 6-row panels: M tail 5; 16-wide: N tail 6 */
    char msg[256];
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    tsr__workload *w;
    assert_int_equal(
        tsr__workload_create(&p, TSR_INPUTS_RANDOM, 3, NULL, 0, &w, msg, sizeof msg), TSR_OK);
    tsr_plan pl;
    assert_int_equal(tsr_plan_default(g_ctx, TSR_BACKEND_CPU, &p, &pl), TSR_OK);
    pl.a = pl.b = TSR_IN_STAGED;
    pl.isa = TSR_ISA_AVX2, pl.tm = 6, pl.tn = 16;
    pl.bm = 24; /* 4 A micro-panels per block, 3 full tile rows and a tail */
    pl.bn = 64; /* 4 B micro-panels per block, 2 full tile columns and a tail */
    pl.bk = 64; /* 150 = 2*64 + 22 */
    pl.splitk = 1;
    pl.walk = (tsr_walk){TSR_WALK_LINEAR, 1, 1};
    pl.threads = variant == 0 ? 1 : 2;
    /* 3 tile columns: column tasks on 1 thread, prepacked op(B) on 2; 10 tile
     * columns (bn 16, one B micro-panel per block): column tasks on 2 */
    if (variant == 2) pl.bn = 16;
    float *out = malloc((size_t)(p.m * p.n) * sizeof *out);
    assert_non_null(out);
    tsr_poison(&p, out);
    assert_int_equal(tsr_gemm(g_ctx, TSR_BACKEND_CPU, &p, &pl, w->a, w->b, out), TSR_OK);
    for (int64_t i = 0; i < p.m; i++)
      for (int64_t jj = 0; jj < p.n; jj++) {
        float c = 0.0f;
        for (int64_t k0 = 0; k0 < p.k; k0 += pl.bk) {
          float acc = 0.0f;
          for (int64_t k = k0; k < p.k && k < k0 + pl.bk; k++)
            acc = fmaf(w->a[i * p.lda + k], w->b[k * p.ldb + jj], acc);
          c = k0 == 0 ? acc : c + acc;
        }
        if (memcmp(&c, &out[i * p.ldc + jj], sizeof c) != 0)
          fail_msg("variant %d: C(%lld, %lld) = %a, the K-block FMA chains give %a", variant,
                   (long long)i, (long long)jj, out[i * p.ldc + jj], c);
      }
    free(out);
    tsr__workload_destroy(w);
  }
}

/* ---- the pool: runs complete without waiting for late workers ------------ */

typedef struct {
  uint64_t run;           /* this run's number */
  uint64_t next, tasks;   /* task counter (atomic) */
  unsigned char done[64]; /* per task: times computed (atomic) */
  int stale;              /* an fn saw another run's job (atomic) */
} pool_job;

static uint64_t pool_current_run; /* atomic */

static void pool_fn(void *arg, int tid) {
  pool_job *j = arg;
  if (__atomic_load_n(&pool_current_run, __ATOMIC_ACQUIRE) != j->run)
    __atomic_store_n(&j->stale, 1, __ATOMIC_RELAXED);
  for (;;) {
    uint64_t t = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (t >= j->tasks) break;
    __atomic_add_fetch(&j->done[t], 1, __ATOMIC_RELAXED);
  }
}

/* Many short runs back to back (the workers often arrive after the caller
 * has taken every task): every task runs exactly once and no fn runs with
 * a job of another run, i.e. after its caller returned. */
static void test_pool_runs(void **state) {
  tsr__cpu_pool *pool = tsr__cpu_pool_create();
  assert_non_null(pool);
  for (uint64_t r = 1; r <= 10000; r++) {
    pool_job j = {.run = r, .tasks = 1 + r % 64};
    __atomic_store_n(&pool_current_run, r, __ATOMIC_RELEASE);
    assert_int_equal(tsr__cpu_pool_run(pool, 2 + (int)(r % 3), pool_fn, &j), 0);
    __atomic_store_n(&pool_current_run, 0, __ATOMIC_RELEASE);
    for (uint64_t t = 0; t < j.tasks; t++)
      if (j.done[t] != 1) fail_msg("run %llu: task %llu ran %d times", (unsigned long long)r,
                                   (unsigned long long)t, j.done[t]);
    assert_int_equal(j.stale, 0);
  }
  tsr__cpu_pool_destroy(pool);
}

/* ---- realize ---------------------------------------------------------- */

static void expect_reject(const tsr_problem *p, const tsr_plan *pl, const char *field) {
  tsr_plan_info info;
  tsr_status st = tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, p, pl, &info);
  if (st == TSR_OK) fail_msg("plan with bad %s was accepted", field);
  const char *msg = tsr_context_message(g_ctx);
  if (!strstr(msg, field)) fail_msg("message '%s' does not name '%s'", msg, field);
  /* tsr_gemm refuses it too, without touching C. */
  float a = 1, b = 1, c = NAN;
  tsr_problem q = *p;
  tsr_problem_init(&q, 1, 1, 1);
  assert_int_not_equal(tsr_gemm(g_ctx, TSR_BACKEND_CPU, &q, pl, &a, &b, &c), TSR_OK);
  assert_true(isnan(c));
}

static void test_rejections(void **state) {
  gemm_case g = {.m = 100, .n = 100, .k = 100, .alpha = 1.0f};
  tsr_problem p = make_problem(&g);
  tsr_plan base = default_plan_for(&g), pl;
  base.a = base.b = TSR_IN_STAGED; /* the packed path's rules (view: test_view_plans) */
  tsr_isa best = tsr__cpu_isa_supported(TSR_ISA_AVX512) ? TSR_ISA_AVX512
                 : tsr__cpu_isa_supported(TSR_ISA_AVX2) ? TSR_ISA_AVX2 : TSR_ISA_GENERIC;
  pl = base; pl.isa = best; pl.tm = 5; pl.bm = 10;
  expect_reject(&p, &pl, "tm=5");
  pl = base; pl.isa = best; pl.tn = 7; pl.bn = 14;
  expect_reject(&p, &pl, "tn=7");
  pl = base; pl.tm = 5; pl.bm = 10; /* auto: no ISA has it */
  expect_reject(&p, &pl, "tm=5");
  pl = base; pl.splitk = 2; /* K = 100 is one K block */
  expect_reject(&p, &pl, "splitk=2");
  pl = base; pl.splitk = 0;
  expect_reject(&p, &pl, "splitk=0");
  pl = base; pl.bk = 10; pl.splitk = 11; /* 10 K blocks */
  expect_reject(&p, &pl, "splitk=11");
  pl = base; pl.bk = 10; pl.splitk = 2; pl.a = pl.b = TSR_IN_VIEW; pl.tm = 12; pl.tn = 32;
  expect_reject(&p, &pl, "splitk=2");
  pl = base; pl.wm = 2;
  expect_reject(&p, &pl, "wm=2");
  pl = base; pl.stages = 3;
  expect_reject(&p, &pl, "stages=3");
  pl = base; pl.vec = 4;
  expect_reject(&p, &pl, "vec=4");
  pl = base; pl.pad = 1;
  expect_reject(&p, &pl, "pad=1");
  pl = base; pl.a = TSR_IN_VIEW;
  expect_reject(&p, &pl, "a=");
  pl = base; pl.mma = TSR_MMA_TF32X3;
  expect_reject(&p, &pl, "mma=tf32x3 is not used by the cpu backend (it must be mma=ffma)");
  pl = base; pl.acc = TSR_ACC_CHAIN; /* GPU-only fields are refused, never ignored */
  expect_reject(&p, &pl, "acc=chain is not used by the cpu backend (it must be acc=step)");
  pl = base; pl.split = TSR_SPLIT_PACK;
  expect_reject(&p, &pl, "split=pack");
  pl = base; pl.pack = TSR_PACK_AB;
  expect_reject(&p, &pl, "pack=ab");
  pl = base; pl.minblocks = 2;
  expect_reject(&p, &pl, "minblocks=2");
  pl = base; pl.kloop = 1; /* written only when set: still refused */
  expect_reject(&p, &pl, "kloop=1 is not used by the cpu backend");
  pl = base; pl.kfrag = TSR_PACK_A;
  expect_reject(&p, &pl, "kfrag=a is not used by the cpu backend");
  pl = base; pl.lanerows = 1;
  expect_reject(&p, &pl, "lanerows=1 is not used by the cpu backend (a GPU kernel key)");
  pl = base; pl.bm = base.tm + 1;
  expect_reject(&p, &pl, "bm=");
  pl = base; pl.bn = base.tn + 1;
  expect_reject(&p, &pl, "bn=");
  pl = base; pl.threads = 100000;
  expect_reject(&p, &pl, "threads=");
  pl = base; pl.bk = 0;
  expect_reject(&p, &pl, "bk=0");
  tsr__cpu_isa_limit(TSR_ISA_GENERIC);
  pl = base; pl.isa = TSR_ISA_AVX2; pl.tm = 6; pl.tn = 16; pl.bm = 12; pl.bn = 32;
  expect_reject(&p, &pl, "isa=avx2");
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
}

static void test_realize_info(void **state) {
  gemm_case g = {.m = 1000, .n = 700, .k = 300, .batch = 2, .alpha = 1.0f};
  tsr_problem p = make_problem(&g);
  tsr_plan pl = default_plan_for(&g);
  pl.bm = 4 * pl.tm;
  pl.bn = 2 * pl.tn;
  pl.bk = 128;
  pl.threads = 2;
  char msg[128];
  assert_int_equal(tsr_walk_parse("rect:1x5", &pl.walk, msg, sizeof msg), TSR_OK);
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
  assert_int_equal(info.plan.walk.kind, TSR_WALK_LINEAR); /* rect:1xC is linear */
  assert_int_not_equal(info.plan.isa, TSR_ISA_AUTO);
  assert_int_equal(info.grid_rows, (1000 + pl.bm - 1) / pl.bm);
  assert_int_equal(info.grid_cols, (700 + pl.bn - 1) / pl.bn);
  assert_int_equal(info.grid_batch, 2);
  assert_int_equal(info.threads, 2);
  assert_true(info.smem_bytes >= 2ull * 4 * ((uint64_t)pl.bm * pl.bk + (uint64_t)pl.bk * pl.tn));
  assert_int_equal(info.tail_m, 1000 % pl.bm != 0);
  assert_int_equal(info.tail_n, 700 % pl.bn != 0);
  assert_int_equal(info.tail_k, 1);
  assert_int_equal(tsr_walk_parse("stripe:1000", &pl.walk, msg, sizeof msg), TSR_OK);
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
  assert_int_equal(info.plan.walk.kind, TSR_WALK_STRIPE);
  assert_int_equal(info.plan.walk.r, info.grid_rows); /* clamped to H */
  /* One tile: one thread whatever was asked. */
  gemm_case s = {.m = 3, .n = 3, .k = 3, .alpha = 1.0f};
  tsr_problem ps = make_problem(&s);
  tsr_plan pls = default_plan_for(&s);
  pls.threads = 2;
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &ps, &pls, &info), TSR_OK);
  assert_int_equal(info.threads, 1);
}

/* The default plan keeps both cores busy at 512³ (tiles divide evenly). */
static void test_default_plan_balanced(void **state) {
  gemm_case g = {.m = 512, .n = 512, .k = 512, .alpha = 1.0f};
  tsr_problem p = make_problem(&g);
  tsr_plan pl = default_plan_for(&g);
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
  uint64_t tiles = (uint64_t)info.grid_rows * info.grid_cols;
  assert_true(tiles >= info.threads);
  assert_true(tiles % info.threads == 0 || tiles >= 8u * info.threads);
  assert_int_equal(pl.splitk, 1);
  assert_int_equal(pl.wm, 1);
}

/* a=view,b=view (no packing): every shape × op(A), beta, batch with padded
 * strides, K blocks, partial tiles of every size, both direct kernels
 * (AVX-512 where present, the portable one by isa=generic); rejections name
 * the field. */
static void test_view_plans(void **state) {
  /* bm and bn given: the default's blocks follow the machine's micro-tile
   * (AVX2: bm=6, not a multiple of tm=12) */
  const char *plans[] = {"a=view,b=view,bm=24,bn=64,tm=12,tn=32",
                         "a=view,b=view,bm=24,bn=64,tm=12,tn=32,bk=7,walk=stripe:2",
                         "a=view,b=view,bm=18,bn=48,tm=6,tn=16",
                         "a=view,b=view,bm=10,bn=32,tm=5,tn=16,bk=9,walk=stripe:2",
                         "a=view,b=view,bm=10,bn=17,tm=5,tn=17,isa=generic",
                         "a=view,b=view,bm=16,bn=32,tm=16,tn=32,isa=generic"};
  for (size_t q = 0; q < sizeof plans / sizeof plans[0]; q++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int t = 0; t < 2; t++) {
        gemm_case g = {.m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                       .oa = (tsr_op)t, .alpha = 1.5f, .beta = t ? 0.5f : 0.0f,
                       .batch = s == 1 ? 3 : 1, .pad_a = s == 1 ? 3 : 0, .pad_b = s == 1 ? 5 : 0,
                       .pad_c = s == 1 ? 2 : 0, .gap_c = s == 1 ? 7 : 0,
                       .inputs = TSR_INPUTS_DYADIC};
        tsr_plan pl = default_plan_for(&g);
        char msg[256];
        assert_int_equal(tsr_plan_parse(plans[q], &pl, msg, sizeof msg), TSR_OK);
        /* the AVX-512 direct kernels take tn=32, the AVX2 ones tn=16 */
        const tsr_isa want = q < 2 ? TSR_ISA_AVX512 : q < 4 ? TSR_ISA_AVX2 : TSR_ISA_GENERIC;
        if (want != TSR_ISA_GENERIC && tsr__cpu_isa_supported(want)) {
          tsr_problem p = make_problem(&g);
          tsr_plan_info info;
          assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
          assert_int_equal(info.plan.isa, want);
          assert_int_equal(info.smem_bytes, 0); /* nothing packed */
        }
        run_case(&g, &pl);
      }
  const struct { const char *plan; tsr_op ob; const char *want; } bad[] = {
      {"a=view,b=staged", TSR_OP_N, "a=view with b=staged"},
      {"a=staged,b=view", TSR_OP_N, "a=staged with b=view"},
      {"a=view,b=view", TSR_OP_T, "b=view needs op(B) = N"},
      {"a=view,b=view,bm=20,tm=20,tn=32", TSR_OP_N, "tm<=16"},
      {"a=view,b=view,bn=16,tm=12,tn=16,isa=avx512", TSR_OP_N, "tn=32 and tm<=12"},
      {"a=view,b=view,bm=8,tm=8,tn=16,isa=avx2", TSR_OP_N, "tn=16 and tm<=6"},
      {"a=view,b=view,bn=32,tm=6,tn=32,isa=avx2", TSR_OP_N, "tn=16 and tm<=6"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (strstr(bad[i].plan, "avx512") && !tsr__cpu_isa_supported(TSR_ISA_AVX512)) continue;
    if (strstr(bad[i].plan, "avx2") && !tsr__cpu_isa_supported(TSR_ISA_AVX2)) continue;
    gemm_case g = {.m = 40, .n = 48, .k = 20, .ob = bad[i].ob, .alpha = 1.0f};
    tsr_problem p = make_problem(&g);
    tsr_plan pl = default_plan_for(&g);
    char msg[256];
    assert_int_equal(tsr_plan_parse(bad[i].plan, &pl, msg, sizeof msg), TSR_OK);
    tsr_plan_info info;
    assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_ERR_REJECTED);
    if (!strstr(tsr_context_message(g_ctx), bad[i].want))
      fail_msg("plan %s: message '%s' lacks '%s'", bad[i].plan, tsr_context_message(g_ctx),
               bad[i].want);
  }
}

/* The AVX2 direct kernel on every tile it takes: rows 1..6 × columns 1..16,
 * K 1..9 (the K loop's unroll of 4 and its remainder), op(A) either way,
 * beta 0 (C never read: NaN there stays out) and not; small integers, so
 * every sum is exact; C outside the mr×nr tile must keep its sentinel. */
static void test_direct_avx2_tiles(void **state) {
  if (!tsr__cpu_isa_supported(TSR_ISA_AVX2)) {
    print_message("avx2 not supported here: skipped\n");
    return;
  }
  enum { TM = TSR__CPU_DIRECT_AVX2_TM, TN = TSR__CPU_DIRECT_AVX2_TN, KMAX = 9, LDA = 11,
         LDB = 21, LDC = 19 };
  float a[KMAX * LDA + TM * LDA], b[KMAX * LDB], c[(TM + 1) * LDC];
  for (int x = 0; x < (int)(sizeof a / sizeof a[0]); x++) a[x] = (float)((x * 7) % 9 - 4);
  for (int x = 0; x < (int)(sizeof b / sizeof b[0]); x++) b[x] = (float)((x * 5) % 11 - 5);
  for (int mr = 1; mr <= TM; mr++)
    for (int nr = 1; nr <= TN; nr++)
      for (int kc = 1; kc <= KMAX; kc++)
        for (int v = 0; v < 4; v++) {
          const int ta = v & 1;
          const float alpha = 2.0f, beta = v & 2 ? 0.5f : 0.0f;
          const int64_t ars = ta ? 1 : LDA, aks = ta ? LDA : 1;
          for (int x = 0; x < (int)(sizeof c / sizeof c[0]); x++) {
            const int i = x / LDC, j = x % LDC;
            c[x] = i < mr && j < nr ? (beta != 0.0f ? (float)(i - j) : NAN) : -777.0f;
          }
          tsr__cpu_direct_avx2(kc, mr, nr, a, ars, aks, b, LDB, c, LDC, alpha, beta);
          for (int x = 0; x < (int)(sizeof c / sizeof c[0]); x++) {
            const int i = x / LDC, j = x % LDC;
            double want = -777.0;
            if (i < mr && j < nr) {
              double sum = 0.0;
              for (int k = 0; k < kc; k++) sum += (double)a[i * ars + k * aks] * b[k * LDB + j];
              want = alpha * sum + (beta != 0.0f ? beta * (double)(i - j) : 0.0);
            }
            if ((double)c[x] != want)
              fail_msg("mr=%d nr=%d kc=%d op(A)=%c beta=%g: C(%d,%d) = %g, want %g", mr, nr, kc,
                       ta ? 'T' : 'N', beta, i, j, (double)c[x], want);
          }
        }
}

/* The AVX2 default reads the operands in place where its tile's bk×bn block
 * of op(B) is at most 256 KiB and op(B) = N (docs/log/perf-notebook.md, session
 * 44); on an AVX-512 machine the test limits detection to AVX2. */
static void test_default_plan_avx2_view(void **state) {
  if (!tsr__cpu_isa_supported(TSR_ISA_AVX2)) {
    print_message("avx2 not supported here: skipped\n");
    return;
  }
  tsr__cpu_isa_limit(TSR_ISA_AVX2);
  const struct { int64_t m, n, k, batch; tsr_op ob; int view; } c[] = {
      {48, 48, 48, 1, TSR_OP_N, 1},   {256, 256, 256, 1, TSR_OP_N, 1},
      {256, 256, 256, 64, TSR_OP_N, 1}, {4096, 16, 16384, 1, TSR_OP_N, 1},
      {48, 48, 48, 1, TSR_OP_T, 0},   {512, 512, 512, 1, TSR_OP_N, 0},
      {32, 4096, 4096, 1, TSR_OP_N, 0}, {64, 64, 8192, 1, TSR_OP_N, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    gemm_case g = {.m = c[i].m, .n = c[i].n, .k = c[i].k, .batch = c[i].batch, .ob = c[i].ob,
                   .alpha = 1.0f};
    tsr_plan pl = default_plan_for(&g);
    if ((pl.a == TSR_IN_VIEW) != c[i].view || (pl.b == TSR_IN_VIEW) != c[i].view)
      fail_msg("%lldx%lldx%lld batch %lld op(B)=%c: a=%d b=%d, want view %d", (long long)c[i].m,
               (long long)c[i].n, (long long)c[i].k, (long long)c[i].batch,
               c[i].ob == TSR_OP_T ? 'T' : 'N', (int)pl.a, (int)pl.b, c[i].view);
    if (c[i].view) {
      assert_int_equal(pl.tm, TSR__CPU_DIRECT_AVX2_TM);
      assert_int_equal(pl.tn, TSR__CPU_DIRECT_AVX2_TN);
      assert_true((uint64_t)pl.bk * (uint64_t)pl.bn * 4 <= (256u << 10));
    }
  }
  /* short M: 4x24 where it pads less, with op(B) = T only (sessions 43-44) */
  const struct { int64_t m; tsr_op ob; int tm, tn; } t[] = {
      {32, TSR_OP_T, 4, 24}, {8, TSR_OP_T, 4, 24}, {32, TSR_OP_N, 6, 16},
      {8, TSR_OP_N, 6, 16},  {48, TSR_OP_T, 6, 16}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    gemm_case s = {.m = t[i].m, .n = 4096, .k = 4096, .ob = t[i].ob, .alpha = 1.0f};
    tsr_plan sp = default_plan_for(&s);
    if (sp.tm != t[i].tm || sp.tn != t[i].tn)
      fail_msg("%lldx4096x4096 op(B)=%c: tile %dx%d, want %dx%d", (long long)t[i].m,
               t[i].ob == TSR_OP_T ? 'T' : 'N', sp.tm, sp.tn, t[i].tm, t[i].tn);
  }
  /* and it computes: partial rows and columns, beta, two threads */
  gemm_case g = {.m = 100, .n = 90, .k = 70, .alpha = 1.5f, .beta = 0.5f,
                 .inputs = TSR_INPUTS_DYADIC};
  assert_int_equal(default_plan_for(&g).a, TSR_IN_VIEW);
  run_case(&g, NULL);
  tsr__cpu_isa_limit(TSR_ISA_AVX512);
}

/* Small problems default to one thread (docs/log/perf-notebook.md, CPU step 12):
 * 80³ (1.02 MFLOP) and 96×80×72 (1.11 MFLOP) are under the 1.5 MFLOP
 * threshold, 96³ (1.77 MFLOP) and a batch of four 64³ (2.1 MFLOP) are not. */
static void test_default_plan_serial_small(void **state) {
  const struct { int64_t m, n, k, batch; int threads; } c[] = {
      {80, 80, 80, 1, 1}, {96, 80, 72, 1, 1}, {1, 1, 1, 1, 1},
      {96, 96, 96, 1, 0}, {64, 64, 64, 4, 0}, {512, 512, 512, 1, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    gemm_case g = {.m = c[i].m, .n = c[i].n, .k = c[i].k, .batch = c[i].batch, .alpha = 1.0f};
    tsr_plan pl = default_plan_for(&g);
    assert_int_equal(pl.threads, c[i].threads);
    tsr_problem p = make_problem(&g);
    tsr_plan_info info;
    assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &pl, &info), TSR_OK);
    if (c[i].threads == 1) {
      assert_int_equal(info.threads, 1);
      /* one tile: nothing split for a second core */
      assert_int_equal((uint64_t)info.grid_rows * info.grid_cols, 1);
    }
  }
  gemm_case g = {.m = 96, .n = 80, .k = 72, .alpha = 1.0f, .inputs = TSR_INPUTS_DYADIC};
  run_case(&g, NULL);
  /* With AVX-512, under 8 MFLOP and op(B) = N the operands are read in place
   * (step 13): 128³ (4.2 MFLOP) yes, op(B) = T no, 160×160×160 (8.2) no. */
  if (tsr__cpu_isa_supported(TSR_ISA_AVX512)) {
    gemm_case v = {.m = 128, .n = 128, .k = 128, .alpha = 1.0f};
    assert_int_equal(default_plan_for(&v).a, TSR_IN_VIEW);
    assert_int_equal(default_plan_for(&v).b, TSR_IN_VIEW);
    v.ob = TSR_OP_T;
    assert_int_equal(default_plan_for(&v).a, TSR_IN_STAGED);
    v.ob = TSR_OP_N;
    v.m = v.n = v.k = 160;
    assert_int_equal(default_plan_for(&v).a, TSR_IN_STAGED);
  }
}

/* The default blocking (docs/log/perf-notebook.md, CPU steps 4-7): long K blocks, a
 * ~384 KiB A block, B columns within 8 MiB (AVX-512), the walk down tile columns; and a
 * deep, wide shape run with it (two K blocks, a stripe-walked grid with M/N
 * tails on 2 cores with AVX-512, all transposes, beta != 0) matches the
 * oracle exactly. */
static void test_default_plan_blocking(void **state) {
  gemm_case big = {.m = 4096, .n = 4096, .k = 4096, .alpha = 1.0f};
  tsr_problem pb = make_problem(&big);
  tsr_plan pl = default_plan_for(&big);
  tsr_plan_info info;
  assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &pb, &pl, &info), TSR_OK);
  assert_int_equal(pl.bk, 1024);
  assert_true((int64_t)pl.bm * pl.bk * 4 <= 400 * 1024);
  /* A grid of column tasks (several rows, columns to share) packs only
   * bk×bn of op(B) at a time and takes up to 1024 columns (AVX2 session 10,
   * AVX-512 session 26). */
  assert_true(pl.bn <= 1024 && (int64_t)pl.bn * pl.bk * 4 <= 4 << 20);
  assert_int_equal(info.plan.walk.kind, TSR_WALK_STRIPE);
  assert_int_equal(info.plan.walk.r, info.grid_rows);
  gemm_case one = {.m = 2049, .n = 4097, .k = 1025, .alpha = 1.0f};
  pl = default_plan_for(&one);
  assert_int_equal(pl.bk, 1025); /* one K block */

  for (int t = 0; t < 4; t++) {
    gemm_case g = {.m = 200, .n = 1601, .k = 1400, .oa = (tsr_op)(t & 1), .ob = (tsr_op)(t >> 1),
                   .alpha = 0.5f, .beta = -1.0f, .inputs = TSR_INPUTS_DYADIC};
    tsr_problem p = make_problem(&g);
    tsr_plan d = default_plan_for(&g);
    assert_int_equal(tsr_plan_realize(g_ctx, TSR_BACKEND_CPU, &p, &d, &info), TSR_OK);
    assert_int_equal(d.bk, 700);
    assert_true(info.grid_rows > 1 && info.grid_cols > 1);
    assert_int_equal(info.plan.walk.kind, TSR_WALK_STRIPE);
    run_case(&g, NULL);
  }
}

/* The default's use of L3 (docs/log/perf-notebook.md, session 44): column
 * tasks widen to 1024 columns only while the cores' bk×bn blocks of op(B)
 * together stay within half of it, and fewer than 8 columns a core come in a
 * multiple of the cores. */
static void test_default_plan_l3(void **state) {
  const uint64_t detected = tsr__cpu_l3_bytes();
  assert_true(detected >= (256u << 10));
  tsr__cpu_l3_override(8ull << 20);
  assert_int_equal(tsr__cpu_l3_bytes(), 8ull << 20);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  gemm_case g = {.m = 512, .n = 4096, .k = 4096, .alpha = 1.0f};
  tsr_plan small = default_plan_for(&g);
  assert_true(small.bn <= 512);
  tsr__cpu_l3_override(32ull << 20);
  tsr_plan big = default_plan_for(&g);
  if (cores == 2) assert_int_equal(big.bn, 1024); /* two 4 MiB blocks in 32 MiB */
  assert_int_equal(small.bk, big.bk);
  tsr__cpu_l3_override(0);
  assert_int_equal(tsr__cpu_l3_bytes(), detected);
  /* nine columns of 512 (8 MiB of L3) would leave one core a column more
   * than the other */
  tsr__cpu_l3_override(8ull << 20);
  gemm_case c = {.m = 640, .n = 4608, .k = 3456, .alpha = 1.0f};
  tsr_plan pl = default_plan_for(&c);
  tsr__cpu_l3_override(0);
  const int64_t cols = (c.n + pl.bn - 1) / pl.bn;
  if (cores > 1 && (c.m + pl.bm - 1) / pl.bm > 1 && cols < 8 * cores)
    assert_int_equal(cols % cores, 0);
  if (cores == 2) assert_int_equal(cols, 10); /* five a core */
}

/* ---- vtable, NULL context, concurrency ---------------------------------- */

static void test_vtable_exec(void **state) {
  const tsr__backend *be = tsr__backend_get(TSR_BACKEND_CPU);
  gemm_case g = {.m = 65, .n = 77, .k = 33, .alpha = 1.0f, .beta = 0.5f, .pad_c = 3,
                 .inputs = TSR_INPUTS_DYADIC};
  tsr_problem p = make_problem(&g);
  int64_t na = tsr_problem_elems_a(&p), nb = tsr_problem_elems_b(&p), nc = tsr_problem_elems_c(&p);
  float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c0 = malloc(nc * sizeof *c0);
  float *c = malloc(nc * sizeof *c);
  double *ref = malloc(p.m * p.n * sizeof *ref);
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_DYADIC, 1, a);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_DYADIC, 1, b);
  tsr_fill(&p, TSR_TENSOR_C, TSR_INPUTS_DYADIC, 1, c0);
  assert_int_equal(tsr_oracle_cpu(&p, a, b, c0, ref, NULL, NULL), TSR_OK);
  tsr_plan pl;
  be->default_plan(g_ctx, &p, &pl);
  tsr_plan_info info;
  assert_int_equal(be->realize(g_ctx, &p, &pl, &info), TSR_OK);
  void *ex = NULL;
  assert_int_equal(be->prepare(g_ctx, &p, &info.plan, a, b, c0, &ex), TSR_OK);
  assert_int_equal(be->launch(ex, 3), TSR_OK); /* C drifts: reset before the checked call */
  assert_int_equal(be->reset_c(ex), TSR_OK);
  assert_int_equal(be->launch(ex, 1), TSR_OK);
  assert_int_equal(be->sync(ex), TSR_OK);
  for (int64_t i = 0; i < nc; i++) c[i] = PAD_SENTINEL;
  assert_int_equal(be->download(ex, c), TSR_OK);
  be->destroy(ex);
  be->destroy(NULL);
  tsr_receipt r;
  tsr_validate(&p, c, ref, 0.0, 0.0, &r);
  assert_true(r.passed);
  assert_true(c[p.n] == PAD_SENTINEL); /* ld padding left alone */
  free(a);
  free(b);
  free(c0);
  free(c);
  free(ref);
}

static void test_null_context(void **state) {
  gemm_case g = {.m = 90, .n = 70, .k = 50, .alpha = 1.0f, .inputs = TSR_INPUTS_DYADIC};
  tsr_plan pl = default_plan_for(&g);
  pl.threads = 2;
  pl.bm = pl.tm;
  run_case_with(&g, &pl, NULL, 1);
}

typedef struct {
  tsr_context *ctx; /* NULL: the thread creates its own */
  int seed;
} conc_arg;

/* A shared context is used by one thread at a time (tessera.h's threading
 * contract: one message buffer per context); the rest runs concurrently. */
static pthread_mutex_t conc_shared_lock = PTHREAD_MUTEX_INITIALIZER;

static void *conc_main(void *p) {
  conc_arg *ca = p;
  tsr_context *own = NULL;
  tsr_context *ctx = ca->ctx;
  if (!ctx) {
    if (tsr_context_create(&own) != TSR_OK) return (void *)1;
    ctx = own;
  }
  intptr_t bad = 0;
  for (int it = 0; it < 4 && !bad; it++) {
    tsr_problem q;
    tsr_problem_init(&q, 97 + ca->seed, 131, 45);
    q.op_b = (tsr_op)(it & 1);
    char msg[128];
    if (tsr_problem_check(&q, msg, sizeof msg)) return (void *)1;
    float *a = malloc(tsr_problem_elems_a(&q) * sizeof *a);
    float *b = malloc(tsr_problem_elems_b(&q) * sizeof *b);
    float *c = malloc(tsr_problem_elems_c(&q) * sizeof *c);
    double *ref = malloc(q.m * q.n * sizeof *ref);
    tsr_fill(&q, TSR_TENSOR_A, TSR_INPUTS_DYADIC, 1, a);
    tsr_fill(&q, TSR_TENSOR_B, TSR_INPUTS_DYADIC, 1, b);
    tsr_poison(&q, c);
    tsr_oracle_cpu(&q, a, b, NULL, ref, NULL, NULL);
    tsr_plan pl;
    if (!own) pthread_mutex_lock(&conc_shared_lock);
    tsr_plan_default(ctx, TSR_BACKEND_CPU, &q, &pl);
    pl.threads = 2;
    pl.bm = pl.tm;
    tsr_receipt r;
    if (tsr_gemm(ctx, TSR_BACKEND_CPU, &q, &pl, a, b, c) != TSR_OK) bad = 1;
    if (!own) pthread_mutex_unlock(&conc_shared_lock);
    tsr_validate(&q, c, ref, 0.0, 0.0, &r);
    if (!r.passed) bad = 1;
    free(a);
    free(b);
    free(c);
    free(ref);
  }
  tsr_context_destroy(own);
  return (void *)bad;
}

static void test_concurrent_callers(void **state) {
  /* Two threads on one shared context (taking turns), then two with their own. */
  for (int own = 0; own <= 1; own++) {
    pthread_t t[2];
    conc_arg ca[2] = {{own ? NULL : g_ctx, 0}, {own ? NULL : g_ctx, 5}};
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, conc_main, &ca[i]), 0);
    for (int i = 0; i < 2; i++) {
      void *ret;
      pthread_join(t[i], &ret);
      assert_null(ret);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_shapes_transposes_dyadic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alpha_beta, setup, teardown),
      cmocka_unit_test_setup_teardown(test_random_inputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_k_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_and_padding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_every_isa_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_walks_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_older_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rejections, setup, teardown),
      cmocka_unit_test_setup_teardown(test_realize_info, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_plan_balanced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_plan_serial_small, setup, teardown),
      cmocka_unit_test_setup_teardown(test_view_plans, setup, teardown),
      cmocka_unit_test_setup_teardown(test_direct_avx2_tiles, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_plan_avx2_view, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_plan_l3, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_plan_blocking, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vtable_exec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_context, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_callers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemv, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemv_contract, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_k, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_k_contract, setup, teardown),
      cmocka_unit_test_setup_teardown(test_column_tasks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_macro_kernel_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool_runs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
