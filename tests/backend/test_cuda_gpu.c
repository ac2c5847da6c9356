/* GPU matrix for the three GPU backends (cuda, hand, cublas) and the GPU
 * FP64 oracle. Every test skips when no CUDA device is usable, so the same
 * executable runs on machines without a GPU. Dyadic inputs must match the
 * FP64 oracle exactly; random inputs within atol = rtol = 1e-4. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cuda/cuda.h"
#include "core/backend.h"
#include "measure/measure.h"
#include "core/context.h"
#include "tessera.h"

static tsr_context *ctx;
static int have_gpu;

static int setup(void **state) {
  if (tsr_context_create(&ctx)) return -1;
  tsr_status st = tsr__backend_cuda.available(ctx);
  have_gpu = st == TSR_OK;
  if (!have_gpu) printf("# no GPU: %s (%s)\n", tsr_status_name(st), tsr_context_message(ctx));
  else {
    tsr__cuda_device d;
    if (tsr__cuda_describe(ctx, &d) == TSR_OK)
      printf("# device %s sm_%d%d, %d SMs, driver %d, NVRTC %d.%d, cuBLAS %d\n", d.name,
             d.cc_major, d.cc_minor, d.sm_count, d.driver_version, d.nvrtc_major, d.nvrtc_minor,
             d.cublas_version);
  }
  return 0;
}
static int teardown(void **state) {
  tsr_context_destroy(ctx);
  return 0;
}
#define NEED_GPU() \
  do {             \
    if (!have_gpu) skip(); \
  } while (0)

typedef struct {
  int64_t m, n, k, batch;
} shape;
static const shape shapes[] = {{1, 1, 1, 1}, {127, 193, 61, 1}, {513, 257, 129, 1},
                               {64, 80, 1, 1}, {32, 32, 32, 1}, {127, 193, 61, 3}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

typedef struct {
  float *a, *b, *c0, *c;
  double *ref;
} bufs;

static void bufs_free(bufs *x) {
  free(x->a);
  free(x->b);
  free(x->c0);
  free(x->c);
  free(x->ref);
  memset(x, 0, sizeof *x);
}

static void make_problem(tsr_problem *p, const shape *s, tsr_op oa, tsr_op ob, int beta_mode) {
  tsr_problem_init(p, s->m, s->n, s->k);
  p->batch = s->batch;
  p->op_a = oa;
  p->op_b = ob;
  p->alpha = beta_mode ? 1.5f : 1.0f;
  p->beta = beta_mode ? -0.5f : 0.0f;
  char msg[256];
  assert_int_equal(tsr_problem_check(p, msg, sizeof msg), TSR_OK);
}

static void make_bufs(const tsr_problem *p, tsr_inputs in, bufs *x) {
  size_t na = (size_t)tsr_problem_elems_a(p), nb = (size_t)tsr_problem_elems_b(p),
         nc = (size_t)tsr_problem_elems_c(p);
  x->a = malloc(na * sizeof(float));
  x->b = malloc(nb * sizeof(float));
  x->c0 = malloc(nc * sizeof(float));
  x->c = malloc(nc * sizeof(float));
  x->ref = malloc((size_t)(p->batch * p->m * p->n) * sizeof(double));
  assert_non_null(x->a);
  assert_non_null(x->b);
  assert_non_null(x->c0);
  assert_non_null(x->c);
  assert_non_null(x->ref);
  tsr_fill(p, TSR_TENSOR_A, in, 42, x->a);
  tsr_fill(p, TSR_TENSOR_B, in, 42, x->b);
  tsr_fill(p, TSR_TENSOR_C, in, 42, x->c0);
  assert_int_equal(tsr_oracle_cpu(p, x->a, x->b, p->beta != 0.0f ? x->c0 : NULL, x->ref, NULL, NULL), TSR_OK);
}

static void describe(char *buf, size_t cap, tsr_backend_kind kind, const tsr_problem *p,
                     const tsr_plan *plan, tsr_inputs in) {
  char pt[512];
  tsr_plan_format(plan, pt, sizeof pt);
  snprintf(buf, cap, "%s %lldx%lldx%lld batch %lld op %c%c alpha %g beta %g %s plan %s",
           tsr_backend_name(kind), (long long)p->m, (long long)p->n, (long long)p->k,
           (long long)p->batch, p->op_a ? 'T' : 'N', p->op_b ? 'T' : 'N', p->alpha, p->beta,
           in == TSR_INPUTS_DYADIC ? "dyadic" : "random", pt);
}

enum { RUN_OK = 0, RUN_FAIL = 1, RUN_REJECTED = 2 };

/* One case: realize, prepare, launch, download, validate; then reset_c and
 * run again to check the second result is bit-identical. */
static int run_case(tsr_backend_kind kind, const tsr_problem *p, const tsr_plan *plan_in,
                    tsr_inputs in, const bufs *x, float *out_copy) {
  const tsr__backend *be = tsr__backend_get(kind);
  tsr_plan plan;
  if (plan_in) plan = *plan_in;
  else be->default_plan(ctx, p, &plan);
  char what[1024];
  describe(what, sizeof what, kind, p, &plan, in);
  tsr_plan_info info;
  tsr_status st = be->realize(ctx, p, &plan, &info);
  if (st == TSR_ERR_REJECTED || st == TSR_ERR_UNSUPPORTED || st == TSR_ERR_OVERFLOW) {
    if (!plan_in) {
      printf("FAIL default plan rejected: %s: %s\n", what, tsr_context_message(ctx));
      return RUN_FAIL;
    }
    return RUN_REJECTED;
  }
  if (st) {
    printf("FAIL realize %s: %s: %s\n", what, tsr_status_name(st), tsr_context_message(ctx));
    return RUN_FAIL;
  }
  void *ex = NULL;
  st = be->prepare(ctx, p, &info.plan, x->a, x->b, p->beta != 0.0f ? x->c0 : NULL, &ex);
  if (st == TSR_ERR_REJECTED && plan_in) return RUN_REJECTED; /* e.g. spills */
  if (st) {
    printf("FAIL prepare %s: %s: %s\n", what, tsr_status_name(st), tsr_context_message(ctx));
    return RUN_FAIL;
  }
  size_t nc = (size_t)tsr_problem_elems_c(p);
  int rc = RUN_OK;
  for (int round = 0; round < 2 && rc == RUN_OK; round++) {
    if (round == 1 && (st = be->reset_c(ex))) break;
    memcpy(x->c, x->c0, nc * sizeof(float)); /* padding keeps C0; logical part overwritten */
    if ((st = be->launch(ex, 1)) || (st = be->sync(ex)) || (st = be->download(ex, x->c))) break;
    tsr_receipt r;
    double tol = in == TSR_INPUTS_DYADIC ? 0.0 : 1e-4;
    tsr_validate(p, x->c, x->ref, tol, tol, &r);
    if (!r.passed) {
      printf("FAIL %s (round %d): %lld of %lld wrong, first %lld, max abs err %g\n", what, round,
             (long long)r.failed, (long long)r.checked, (long long)r.first_fail, r.max_abs_err);
      rc = RUN_FAIL;
    }
    if (round == 0 && out_copy) memcpy(out_copy, x->c, nc * sizeof(float));
    if (round == 1 && out_copy && memcmp(out_copy, x->c, nc * sizeof(float)) != 0) {
      printf("FAIL %s: rerun after reset_c is not bit-identical\n", what);
      rc = RUN_FAIL;
    }
  }
  if (st) {
    printf("FAIL run %s: %s: %s\n", what, tsr_status_name(st), tsr_context_message(ctx));
    rc = RUN_FAIL;
  }
  be->destroy(ex);
  return rc;
}

/* Every shape × op pair × beta mode × input kind with the default plan. */
static void matrix(tsr_backend_kind kind) {
  int fails = 0, runs = 0;
  for (size_t s = 0; s < NSHAPES; s++)
    for (int ops = 0; ops < 4; ops++)
      for (int bm = 0; bm < 2; bm++)
        for (int in = 0; in < 2; in++) {
          tsr_problem p;
          make_problem(&p, &shapes[s], (tsr_op)(ops & 1), (tsr_op)(ops >> 1), bm);
          bufs x = {0};
          make_bufs(&p, (tsr_inputs)in, &x);
          float *copy = malloc((size_t)tsr_problem_elems_c(&p) * sizeof(float));
          assert_non_null(copy);
          int rc = run_case(kind, &p, NULL, (tsr_inputs)in, &x, copy);
          fails += rc == RUN_FAIL;
          runs++;
          free(copy);
          bufs_free(&x);
        }
  printf("# %s: %d cases, %d failed\n", tsr_backend_name(kind), runs, fails);
  assert_int_equal(fails, 0);
}

static void test_hand_matrix(void **state) {
  NEED_GPU();
  matrix(TSR_BACKEND_HAND);
}
static void test_cublas_matrix(void **state) {
  NEED_GPU();
  matrix(TSR_BACKEND_CUBLAS);
}
static void test_cuda_default_matrix(void **state) {
  NEED_GPU();
  matrix(TSR_BACKEND_CUDA);
}

/* Plan variants of the generated backend, one field at a time from each
 * family's default-table plan; rejected variants are counted, not failed,
 * but every dimension must have accepted values. */
static void test_cuda_variants(void **state) {
  NEED_GPU();
  static const shape vs[] = {{127, 193, 61, 1}, {513, 257, 129, 1}, {32, 32, 32, 1},
                             {2048, 1536, 96, 1}, {130, 100, 1029, 1}};
  static const char *const variants[] = {
      "walk=linear", "walk=rect:2x3", "walk=stripe:2", "walk=rect:3x2", "splitk=1", "splitk=2",
      "splitk=3",    "splitk=7",      "stages=1",      "stages=2",      "stages=3", "stages=4",
      "vec=1",       "vec=2",         "vec=4",         "a=view",        "b=view",   "a=view,b=view",
      "mma=ffma",    "mma=tf32x3",    "pad=0",         "pad=4",         "pack=a",   "pack=b",
      "pack=ab",     "pack=ab,splitk=2", "mma=ffma,bm=32,bn=32,bk=16,wm=16,wn=32,tm=4,tn=4,pack=ab"};
  enum { NV = sizeof variants / sizeof variants[0] };
  int accepted[NV] = {0}, fails = 0, runs = 0, rejected = 0;
  for (size_t s = 0; s < sizeof vs / sizeof vs[0]; s++)
    for (int ops = 0; ops < 4; ops += 3) /* NN everywhere, TT on the first shape */
      for (int v = 0; v < NV; v++) {
        if (ops && s) continue;
        tsr_problem p;
        make_problem(&p, &vs[s], (tsr_op)(ops & 1), (tsr_op)(ops >> 1), s & 1);
        tsr_plan plan;
        tsr__backend_cuda.default_plan(ctx, &p, &plan);
        char msg[256];
        assert_int_equal(tsr_plan_parse(variants[v], &plan, msg, sizeof msg), TSR_OK);
        bufs x = {0};
        make_bufs(&p, TSR_INPUTS_DYADIC, &x);
        float *copy = malloc((size_t)tsr_problem_elems_c(&p) * sizeof(float));
        int rc = run_case(TSR_BACKEND_CUDA, &p, &plan, TSR_INPUTS_DYADIC, &x, copy);
        free(copy);
        bufs_free(&x);
        if (rc == RUN_REJECTED) {
          rejected++;
          continue;
        }
        runs++;
        accepted[v]++;
        fails += rc == RUN_FAIL;
      }
  printf("# cuda variants: %d run, %d rejected by the planner, %d failed\n", runs, rejected,
         fails);
  for (int v = 0; v < NV; v++)
    if (!accepted[v]) printf("# variant %s was never accepted\n", variants[v]);
  int splitk_ok = accepted[5] && accepted[6] && accepted[7];
  assert_true(splitk_ok);
  for (int v = 0; v < NV; v++) /* every pack variant ran on hardware at least once */
    if (!strncmp(variants[v], "pack=", 5) || strstr(variants[v], ",pack=")) assert_true(accepted[v] > 0);
  assert_int_equal(fails, 0);
}

/* One cuda case on fresh inputs of kind `in` (run_case: validated, rerun
 * bit-identical). */
static int run_on_fresh_bufs(const tsr_problem *p, const tsr_plan *plan, tsr_inputs in) {
  bufs x = {0};
  make_bufs(p, in, &x);
  float *copy = malloc((size_t)tsr_problem_elems_c(p) * sizeof(float));
  int rc = run_case(TSR_BACKEND_CUDA, p, plan, in, &x, copy);
  free(copy);
  bufs_free(&x);
  return rc;
}

/* mma=gemv on hardware: skinny shapes (M or N <= 16, tails along every axis,
 * a batch) x op pairs x beta mode x input kind, with the default plan (which
 * must be the gemv family there) and split-K / scalar-load overlays; dyadic
 * exact, random within 1e-4, a rerun bit-identical. */
static void test_cuda_gemv_matrix(void **state) {
  NEED_GPU();
  static const shape sk[] = {{1, 4100, 300, 1},  {3, 2050, 257, 1},  {4099, 1, 129, 1},
                             {2051, 13, 77, 1}, {16, 1100, 1, 1}, {5, 1030, 70, 3}};
  /* the lane-per-row layout (lanerows) where it applies: a big operand
   * contiguous along k (B with op T when M <= N, A with op N otherwise) */
  static const char *const overlays[] = {NULL, "splitk=3,bk=32", "vec=1",
                                         "lanerows=1,threads=128,bk=32,splitk=2",
                                         "lanerows=2,threads=64,bk=16"};
  int fails = 0, runs = 0;
  for (size_t oi = 0; oi < sizeof overlays / sizeof *overlays; oi++)
    for (size_t sI = 0; sI < sizeof sk / sizeof *sk; sI++)
      for (int ops = 0; ops < 4; ops++)
        for (int bm = 0; bm < 2; bm++)
          for (int in = 0; in < 2; in++) {
            tsr_problem p;
            make_problem(&p, &sk[sI], (tsr_op)(ops & 1), (tsr_op)(ops >> 1), bm);
            p.precision = TSR_PREC_STRICT;
            tsr_plan plan;
            tsr__backend_cuda.default_plan(ctx, &p, &plan);
            if (plan.mma != TSR_MMA_GEMV) {
              /* The default takes gemv only where the short operand is one
               * row/column or runs along k (session 6); the layout with it
               * read across k is still a legal plan: the geometry of the
               * same shape with the short operand's op flipped. */
              tsr_problem q = p;
              if (p.m <= p.n) q.op_a = q.op_a == TSR_OP_N ? TSR_OP_T : TSR_OP_N;
              else q.op_b = q.op_b == TSR_OP_N ? TSR_OP_T : TSR_OP_N;
              tsr__backend_cuda.default_plan(ctx, &q, &plan);
            }
            if (plan.mma != TSR_MMA_GEMV) {
              printf("FAIL gemv: the default plan of shape %zu ops %d is not mma=gemv\n", sI, ops);
              fails++;
              continue;
            }
            char msg[256];
            if (overlays[oi]) {
              if (strstr(overlays[oi], "splitk") && sk[sI].k < 96) continue;
              assert_int_equal(tsr_plan_parse(overlays[oi], &plan, msg, sizeof msg), TSR_OK);
              if (plan.lanerows) {
                int bigb = p.m <= p.n;
                if (bigb ? p.op_b != TSR_OP_T : p.op_a != TSR_OP_N) continue;
                if (bigb) plan.bn = plan.threads * plan.lanerows;
                else plan.bm = plan.threads * plan.lanerows;
              }
            }
            int rc = run_on_fresh_bufs(&p, &plan, (tsr_inputs)in);
            if (rc == RUN_REJECTED) {
              printf("FAIL gemv overlay %s rejected on shape %zu ops %d: %s\n",
                     overlays[oi] ? overlays[oi] : "(default)", sI, ops, tsr_context_message(ctx));
              fails++;
              continue;
            }
            runs++;
            fails += rc == RUN_FAIL;
          }
  printf("# cuda gemv: %d cases, %d failed\n", runs, fails);
  assert_int_equal(fails, 0);
}

/* TSR_GPU_PLANS=<substring>: only the wgmma matrix plans and families whose
 * plan text contains it (a device script checking one new family in its
 * time budget); unset: all of them */
static int plan_selected(const char *text) {
  const char *sel = getenv("TSR_GPU_PLANS");
  return !sel || !*sel || (text && strstr(text, sel));
}

/* A family test that TSR_GPU_PLANS left with nothing to run fails: it has
 * checked nothing (session 41's call filtered by a family's name, which the
 * filter never sees, and both family tests passed without running one) */
static void families_ran(const char *test, int ran) {
  if (!ran)
    fail_msg("%s: TSR_GPU_PLANS='%s' is in no family's plan text, so nothing ran", test,
             getenv("TSR_GPU_PLANS") ? getenv("TSR_GPU_PLANS") : "");
}

/* The wgmma families (sm_90a) on hardware: every shape x op pair (x-contiguous
 * operands go through the transposing pack prologue) x beta mode x input
 * kind, for geometries of 1 and 2 consumer warpgroups; dyadic exact, random
 * within 1e-4, a rerun bit-identical. */
static void test_cuda_wgmma_matrix(void **state) {
  NEED_GPU();
  tsr__cuda_device d;
  assert_int_equal(tsr__cuda_describe(ctx, &d), TSR_OK);
  if (d.cc_major != 9 || d.cc_minor != 0) {
    printf("# wgmma needs sm_90a; the device is sm_%d%d\n", d.cc_major, d.cc_minor);
    skip();
  }
  static const char *const plans[] = {
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3,minblocks=0,pack=none,split=inline,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=64,bn=96,bk=16,wm=64,wn=32,stages=4,minblocks=0,pack=none,split=inline,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=256,bn=128,bk=16,wm=128,wn=128,stages=4,minblocks=0,pack=none,split=inline,acc=step,splitk=2",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=128,bn=256,bk=16,wm=64,wn=128,stages=4,minblocks=0,pack=none,split=inline,acc=step,splitk=1",
      /* warp specialization: a producer warpgroup and 2 consumers (setmaxnreg) */
      /* split=producer at vec=1 copies 48 values per producer thread: rejected
       * (its registers spill); packed operands read with vec=4 */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=3,minblocks=0,pack=ab,split=producer,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=128,bn=256,bk=8,wm=64,wn=128,stages=6,minblocks=0,pack=none,split=producer-reg,acc=step,splitk=2",
      /* split=producer-pack: the prologue's TF32 planes (the large default) */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,minblocks=0,pack=ab,split=producer-pack,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=128,bk=8,wm=64,wn=128,stages=6,minblocks=0,pack=ab,split=producer-pack,acc=step,splitk=2",
      /* split=producer-bulk: tiled planes, bulk copies (TMA) on the full mbarrier */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=4,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=128,bk=8,wm=64,wn=128,stages=6,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=2",
      /* ... one m64 slice and chunk per consumer: two partial-sum buffers */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=128,bk=16,wm=64,wn=128,stages=4,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=2",
      /* mma=wgmma-s8 (precision ozaki): residue planes, Garner reconstruction, the guard */
      "mma=wgmma-s8,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=64,wm=128,wn=128,stages=6,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1,moduli=8",
      "mma=wgmma-s8,tm=1,tn=1,pad=0,vec=4,bm=128,bn=256,bk=128,wm=64,wn=256,stages=3,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1,moduli=7",
      "mma=wgmma-s8,tm=1,tn=1,pad=0,vec=4,bm=64,bn=64,bk=32,wm=64,wn=64,stages=2,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1,moduli=9",
      /* ... the guard's magnitudes over every 3rd K block (shorter items) */
      "mma=wgmma-s8,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=64,wm=128,wn=128,stages=6,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1,moduli=8,gstride=3",
  };
  int fails = 0, runs = 0;
  for (size_t pi = 0; pi < sizeof plans / sizeof plans[0]; pi++)
    for (size_t sI = 1; sI < NSHAPES && plan_selected(plans[pi]); sI++)
      for (int ops = 0; ops < 4; ops++)
        for (int bm = 0; bm < 2; bm++)
          for (int in = 0; in < 2; in++) {
            if (strstr(plans[pi], "splitk=2") && shapes[sI].k < 32) continue; /* one K block */
            tsr_problem p;
            make_problem(&p, &shapes[sI], (tsr_op)(ops & 1), (tsr_op)(ops >> 1), bm);
            if (strstr(plans[pi], "wgmma-s8")) p.precision = TSR_PREC_OZAKI;
            tsr_plan plan;
            tsr__backend_cuda.default_plan(ctx, &p, &plan);
            char msg[256];
            assert_int_equal(tsr_plan_parse(plans[pi], &plan, msg, sizeof msg), TSR_OK);
            int rc = run_on_fresh_bufs(&p, &plan, (tsr_inputs)in);
            if (rc == RUN_REJECTED) {
              printf("FAIL wgmma plan %zu rejected on shape %zu: %s\n", pi, sI, tsr_context_message(ctx));
              fails++;
              continue;
            }
            runs++;
            fails += rc == RUN_FAIL;
          }
  printf("# cuda wgmma: %d cases, %d failed\n", runs, fails);
  assert_int_equal(fails, 0);
}

/* Split-K sums partials in a fixed order: three runs, bit-identical. */
static void test_cuda_splitk_deterministic(void **state) {
  NEED_GPU();
  static const int ks[] = {2, 3, 7};
  int tested = 0;
  for (size_t i = 0; i < 3; i++) {
    tsr_problem p;
    const shape s = {513, 257, 1029, 1};
    make_problem(&p, &s, TSR_OP_N, TSR_OP_N, 0);
    tsr_plan plan;
    tsr__backend_cuda.default_plan(ctx, &p, &plan);
    plan.splitk = ks[i];
    tsr_plan_info info;
    if (tsr__backend_cuda.realize(ctx, &p, &plan, &info) != TSR_OK) {
      printf("# splitk=%d rejected: %s\n", ks[i], tsr_context_message(ctx));
      continue;
    }
    bufs x = {0};
    make_bufs(&p, TSR_INPUTS_RANDOM, &x);
    size_t nc = (size_t)tsr_problem_elems_c(&p);
    float *first = malloc(nc * sizeof(float));
    assert_non_null(first);
    void *ex = NULL;
    assert_int_equal(tsr__backend_cuda.prepare(ctx, &p, &info.plan, x.a, x.b, NULL, &ex), TSR_OK);
    for (int run = 0; run < 3; run++) {
      assert_int_equal(tsr__backend_cuda.reset_c(ex), TSR_OK);
      assert_int_equal(tsr__backend_cuda.launch(ex, 1), TSR_OK);
      assert_int_equal(tsr__backend_cuda.download(ex, x.c), TSR_OK);
      if (run == 0) {
        memcpy(first, x.c, nc * sizeof(float));
        tsr_receipt r;
        tsr_validate(&p, x.c, x.ref, 1e-4, 1e-4, &r);
        assert_true(r.passed);
      } else {
        assert_memory_equal(first, x.c, nc * sizeof(float));
      }
    }
    tsr__backend_cuda.destroy(ex);
    free(first);
    bufs_free(&x);
    tested++;
  }
  assert_true(tested > 0);
}

/* lazy=P (docs/emit.md "Lazy pack"): A packed by the producer warps, piece
 * by claimed piece, gives the bits of the prologue's pack (lazy=0) in every
 * call of a run of back-to-back launches (each call claims every piece
 * again: epoch 0..6), with M, N and K tails, batch items and tail slices. */
static void test_cuda_lazy_repeat(void **state) {
  NEED_GPU();
  /* {lazy, lazyk}: the producer warps' claims, then the pack kernel beside
   * the main kernel (docs/emit.md "Pack kernel beside the GEMM": one CTA
   * packing every piece while the tiles wait, one an SM, five) */
  static const int lz[][2] = {{1, 0}, {3, 0}, {64, 0}, {1, 5}, {3, 132}, {64, 1}};
  /* tail slices need one problem; the batch runs without them */
  static const struct { shape s; const char *tail; } cases[] = {
      {{513, 260, 1029, 1}, "tailk=3,wave=7"}, {{300, 200, 1029, 2}, "tailk=0,wave=0"}};
  for (size_t ci = 0; ci < 2; ci++) {
    tsr_problem p;
    make_problem(&p, &cases[ci].s, TSR_OP_N, TSR_OP_N, 0);
    p.precision = TSR_PREC_STRICT;
    tsr_plan base;
    char text[256], msg[256];
    tsr__backend_cuda.default_plan(ctx, &p, &base);
    snprintf(text, sizeof text,
             "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,"
             "split=producer-tma,minblocks=3,pack=a,krel=1,mma=ffma,acc=step,splitk=1,%s",
             cases[ci].tail);
    if (tsr_plan_parse(text, &base, msg, sizeof msg) != TSR_OK) fail_msg("%s", msg);
    bufs x = {0};
    make_bufs(&p, TSR_INPUTS_RANDOM, &x);
    size_t nc = (size_t)tsr_problem_elems_c(&p);
    float *ref = malloc(nc * sizeof(float));
    assert_non_null(ref);
    for (int i = -1; i < (int)(sizeof lz / sizeof *lz); i++) {
      tsr_plan plan = base;
      plan.lazy = i < 0 ? 0 : lz[i][0];
      plan.lazyk = i < 0 ? 0 : lz[i][1];
      tsr_plan_info info;
      if (tsr__backend_cuda.realize(ctx, &p, &plan, &info) != TSR_OK)
        fail_msg("lazy=%d,lazyk=%d rejected: %s", plan.lazy, plan.lazyk, tsr_context_message(ctx));
      void *ex = NULL;
      assert_int_equal(tsr__backend_cuda.prepare(ctx, &p, &info.plan, x.a, x.b, NULL, &ex), TSR_OK);
      assert_int_equal(tsr__backend_cuda.reset_c(ex), TSR_OK);
      assert_int_equal(tsr__backend_cuda.launch(ex, i < 0 ? 1 : 7), TSR_OK);
      assert_int_equal(tsr__backend_cuda.download(ex, x.c), TSR_OK);
      tsr__backend_cuda.destroy(ex);
      tsr_receipt r;
      tsr_validate(&p, x.c, x.ref, 1e-4, 1e-4, &r);
      if (!r.passed)
        fail_msg("lazy=%d,lazyk=%d: %lld of %lld wrong, first %lld", plan.lazy, plan.lazyk,
                 (long long)r.failed,
                 (long long)r.checked, (long long)r.first_fail);
      if (i < 0) memcpy(ref, x.c, nc * sizeof(float));
      else if (memcmp(ref, x.c, nc * sizeof(float)) != 0)
        fail_msg("lazy=%d,lazyk=%d after 7 calls: not bit-identical to the prologue's pack",
                 plan.lazy, plan.lazyk);
      printf("# %s lazy=%d,lazyk=%d: 7 calls, %lld outputs bit-identical to lazy=0\n", text,
             plan.lazy, plan.lazyk, (long long)r.checked);
    }
    free(ref);
    bufs_free(&x);
  }
}

/* The GPU oracle agrees with the CPU oracle (same order, no contraction). */
static void test_oracle_gpu_vs_cpu(void **state) {
  NEED_GPU();
  for (size_t s = 0; s < NSHAPES; s++)
    for (int ops = 0; ops < 4; ops++)
      for (int bm = 0; bm < 2; bm++)
        for (int in = 0; in < 2; in++) {
          tsr_problem p;
          make_problem(&p, &shapes[s], (tsr_op)(ops & 1), (tsr_op)(ops >> 1), bm);
          bufs x = {0};
          make_bufs(&p, (tsr_inputs)in, &x);
          size_t nr = (size_t)(p.batch * p.m * p.n);
          double *g = malloc(nr * sizeof(double));
          assert_non_null(g);
          float *gs = malloc(nr * sizeof(float)), *cs = malloc(nr * sizeof(float));
          double *cr = malloc(nr * sizeof(double));
          double gstrict = -1, cstrict = -2;
          assert_non_null(gs);
          assert_non_null(cs);
          assert_non_null(cr);
          tsr_status st = tsr_oracle_gpu(ctx, &p, x.a, x.b, bm ? x.c0 : NULL, g, gs, &gstrict);
          if (st) printf("oracle_gpu: %s\n", tsr_context_message(ctx));
          assert_int_equal(st, TSR_OK);
          /* the contract's inputs: the scale within FP64 summation-order
           * noise of the CPU's, the strict FP32 reference's error (an FMA
           * chain in the same order on both) equal to ~1e-12 relative */
          assert_int_equal(tsr_oracle_cpu(&p, x.a, x.b, bm ? x.c0 : NULL, cr, cs, &cstrict), TSR_OK);
          for (size_t i = 0; i < nr; i++)
            if (!(fabsf(gs[i] - cs[i]) <= 1e-6f * cs[i])) fail_msg("scale %zu: gpu %g cpu %g", i, gs[i], cs[i]);
          if (!(fabs(gstrict - cstrict) <= 1e-9 * cstrict + 1e-300))
            fail_msg("strict_rel_fro: gpu %.17g cpu %.17g", gstrict, cstrict);
          free(gs);
          free(cs);
          free(cr);
          double worst = 0.0;
          for (size_t i = 0; i < nr; i++) {
            double d = g[i] - x.ref[i];
            if (d < 0) d = -d;
            double scale = x.ref[i] < 0 ? -x.ref[i] : x.ref[i];
            double rel = d / (scale > 1.0 ? scale : 1.0);
            if (rel > worst || rel != rel) worst = rel;
          }
          if (in == TSR_INPUTS_DYADIC) assert_true(worst == 0.0);
          else assert_true(worst <= 1e-13);
          free(g);
          bufs_free(&x);
        }
}

/* An absurd batch fails cleanly at allocation (before host data is read, so
 * small host buffers suffice), and the context keeps working afterwards. */
static void test_out_of_memory(void **state) {
  NEED_GPU();
  static const tsr_backend_kind kinds[] = {TSR_BACKEND_CUDA, TSR_BACKEND_HAND, TSR_BACKEND_CUBLAS};
  float dummy[16] = {0};
  for (size_t i = 0; i < 3; i++) {
    const tsr__backend *be = tsr__backend_get(kinds[i]);
    tsr_problem p;
    tsr_problem_init(&p, 4096, 4096, 4096);
    p.batch = 3000; /* 192 GiB per operand */
    char msg[256];
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    tsr_plan plan;
    be->default_plan(ctx, &p, &plan);
    tsr_plan_info info;
    tsr_status st = be->realize(ctx, &p, &plan, &info);
    if (st == TSR_OK) {
      void *ex = NULL;
      st = be->prepare(ctx, &p, &info.plan, dummy, dummy, NULL, &ex);
      assert_null(ex);
    }
    printf("# %s absurd batch: %s (%s)\n", be->name, tsr_status_name(st), tsr_context_message(ctx));
    /* hand and cuBLAS reach the allocation; the generated route may refuse
     * the plan earlier (a limit of the emitter), which is also clean */
    if (kinds[i] == TSR_BACKEND_CUDA)
      assert_true(st == TSR_ERR_NOMEM || st == TSR_ERR_CUDA || st == TSR_ERR_OVERFLOW ||
                  st == TSR_ERR_REJECTED);
    else
      assert_true(st == TSR_ERR_NOMEM || st == TSR_ERR_CUDA);
    /* still usable */
    tsr_problem q;
    const shape s = {32, 32, 32, 1};
    make_problem(&q, &s, TSR_OP_N, TSR_OP_N, 0);
    bufs x = {0};
    make_bufs(&q, TSR_INPUTS_DYADIC, &x);
    assert_int_equal(run_case(kinds[i], &q, NULL, TSR_INPUTS_DYADIC, &x, NULL), RUN_OK);
    bufs_free(&x);
  }
}

/* The backend's default plan for p, realized and prepared on x's inputs */
static void *prepare_default(const tsr__backend *be, const tsr_problem *p, const bufs *x,
                             tsr_plan_info *info) {
  tsr_plan plan;
  be->default_plan(ctx, p, &plan);
  assert_int_equal(be->realize(ctx, p, &plan, info), TSR_OK);
  void *ex = NULL;
  assert_int_equal(be->prepare(ctx, p, &info->plan, x->a, x->b, NULL, &ex), TSR_OK);
  return ex;
}

/* exec_info reports compile resources; event_time measures n calls. */
static void test_exec_info_and_timing(void **state) {
  NEED_GPU();
  static const tsr_backend_kind kinds[] = {TSR_BACKEND_CUDA, TSR_BACKEND_HAND, TSR_BACKEND_CUBLAS};
  for (size_t i = 0; i < 3; i++) {
    const tsr__backend *be = tsr__backend_get(kinds[i]);
    tsr_problem p;
    const shape s = {513, 257, 129, 1};
    make_problem(&p, &s, TSR_OP_N, TSR_OP_N, 0);
    bufs x = {0};
    make_bufs(&p, TSR_INPUTS_DYADIC, &x);
    tsr_plan_info info;
    void *ex = prepare_default(be, &p, &x, &info);
    be->exec_info(ex, &info);
    if (kinds[i] != TSR_BACKEND_CUBLAS) {
      assert_true(info.regs > 0);
      assert_true(info.local_bytes >= 0);
      assert_int_equal(strlen(info.source_sha256), 64);
      printf("# %s 513x257x129: %d registers, %d local bytes, %llu smem bytes\n", be->name,
             info.regs, info.local_bytes, (unsigned long long)info.smem_bytes);
    }
    int64_t ns = 0;
    assert_int_equal(be->event_time(ex, 5, &ns), TSR_OK);
    assert_true(ns > 0);
    assert_int_equal(be->download(ex, x.c), TSR_OK);
    tsr_receipt r;
    tsr_validate(&p, x.c, x.ref, 0, 0, &r);
    assert_true(r.passed);
    be->destroy(ex);
    bufs_free(&x);
  }
}

/* Download of C: compact C goes straight into the host buffer, padded C
 * through a staging copy; either way every logical element is the result
 * and the host's padding and batch gaps are never written. */
static void test_download_layouts(void **state) {
  NEED_GPU();
  static const tsr_backend_kind kinds[] = {TSR_BACKEND_CUDA, TSR_BACKEND_HAND, TSR_BACKEND_CUBLAS};
  for (size_t i = 0; i < 3; i++)
    for (int padded = 0; padded < 2; padded++) {
      const tsr__backend *be = tsr__backend_get(kinds[i]);
      tsr_problem p;
      tsr_problem_init(&p, 65, 47, 33);
      p.batch = 2;
      if (padded) {
        p.ldc = 47 + 5;
        p.stride_c = 65 * p.ldc + 3;
      }
      char msg[256];
      assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
      bufs x = {0};
      make_bufs(&p, TSR_INPUTS_DYADIC, &x);
      tsr_plan_info info;
      void *ex = prepare_default(be, &p, &x, &info);
      assert_int_equal(be->launch(ex, 1), TSR_OK);
      assert_int_equal(be->sync(ex), TSR_OK);
      size_t nc = (size_t)tsr_problem_elems_c(&p);
      for (size_t e = 0; e < nc; e++) x.c[e] = 7.0f; /* a sentinel the result never holds here */
      assert_int_equal(be->download(ex, x.c), TSR_OK);
      tsr_receipt r;
      tsr_validate(&p, x.c, x.ref, 0, 0, &r);
      if (!r.passed) fail_msg("%s padded=%d: %lld wrong", be->name, padded, (long long)r.failed);
      int64_t sc = p.stride_c ? p.stride_c : p.m * p.n, ld = p.ldc ? p.ldc : p.n;
      for (size_t e = 0; e < nc; e++) {
        int64_t in = (int64_t)e % sc;
        int logical = in / ld < p.m && in % ld < p.n;
        if (!logical && x.c[e] != 7.0f) fail_msg("%s: padding element %zu written", be->name, e);
      }
      be->destroy(ex);
      bufs_free(&x);
    }
}

/* tsr_gemm end to end on the GPU backends. */
static void test_tsr_gemm_gpu(void **state) {
  NEED_GPU();
  static const tsr_backend_kind kinds[] = {TSR_BACKEND_CUDA, TSR_BACKEND_HAND, TSR_BACKEND_CUBLAS};
  for (size_t i = 0; i < 3; i++) {
    tsr_problem p;
    const shape s = {127, 193, 61, 2};
    make_problem(&p, &s, TSR_OP_T, TSR_OP_N, 1);
    bufs x = {0};
    make_bufs(&p, TSR_INPUTS_DYADIC, &x);
    memcpy(x.c, x.c0, (size_t)tsr_problem_elems_c(&p) * sizeof(float));
    tsr_status st = tsr_gemm(ctx, kinds[i], &p, NULL, x.a, x.b, x.c);
    if (st) printf("%s: %s\n", tsr_backend_name(kinds[i]), tsr_context_message(ctx));
    assert_int_equal(st, TSR_OK);
    tsr_receipt r;
    tsr_validate(&p, x.c, x.ref, 0, 0, &r);
    assert_true(r.passed);
    bufs_free(&x);
  }
}

/* The accuracy contract on the GPU families (docs/accuracy.md): every
 * family that can run by itself or be the default meets its mode's contract
 * on the random, normal and wide families; the pre-contract acc=chain
 * breaches it at long K; and the specials suite (NaN, +-Inf, FLT_MAX,
 * subnormal rows, 0 x Inf, NaN in C, beta = 0 over a NaN C) gives every
 * output the FP64 reference's class. Subnormal inputs through the tensor-core
 * split keep only the big part's 11 bits (documented): there the class is
 * required and the bound reported. */
typedef struct {
  const char *name;
  tsr_backend_kind b;
  tsr_precision prec;
  const char *overlay;
  int peer; /* a peer's behaviour on special values is reported, not required */
} family;
static const family families[] = {
    {"cuda strict", TSR_BACKEND_CUDA, TSR_PREC_STRICT, NULL, 0},
    {"cuda fp32x3", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, NULL, 0},
    {"cuda fp32x3 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "splitk=2", 0},
    {"cuda fp32x3 split=pack", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "split=pack", 0},
    {"cuda tf32", TSR_BACKEND_CUDA, TSR_PREC_TF32, NULL, 0},
    {"cuda tf32 split=pack", TSR_BACKEND_CUDA, TSR_PREC_TF32, "split=pack", 0},
#define WGF "tm=1,tn=1,pad=0,vec=1,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3,minblocks=0,pack=none,split=inline,acc=step"
    {"cuda wgmma-tf32x3", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "mma=wgmma-tf32x3,splitk=1," WGF, 0},
    {"cuda wgmma-tf32x3 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "mma=wgmma-tf32x3,splitk=2," WGF, 0},
    {"cuda wgmma-tf32", TSR_BACKEND_CUDA, TSR_PREC_TF32, "mma=wgmma-tf32,splitk=1," WGF, 0},
#undef WGF
    /* the Ozaki family: its default plan (8 moduli), and 128x256 (7 moduli
     * broke the Frobenius clause on wide inputs: 1.12e-6 > 4.47e-7, session 7) */
    {"cuda ozaki", TSR_BACKEND_CUDA, TSR_PREC_OZAKI, "moduli=8", 0},
    {"cuda ozaki 128x256", TSR_BACKEND_CUDA, TSR_PREC_OZAKI,
     "bm=128,bn=256,bk=128,wm=64,wn=256,stages=3,moduli=8", 0},
    {"cuda ozaki gstride=2", TSR_BACKEND_CUDA, TSR_PREC_OZAKI, "moduli=8,gstride=2", 0},
    {"cuda ozaki rvec=4", TSR_BACKEND_CUDA, TSR_PREC_OZAKI, "moduli=8,rvec=4", 0},
    /* stage 2 (scripts/device/wgmma-run's variants): two partial-sum
     * buffers, the producer warpgroup with cp.async or register loads */
#define WG2 "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,minblocks=0,acc=step,splitk=1,"
    {"cuda wgmma-tf32x3 256x128 wn64", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=inline,bm=256,bn=128,bk=16,wm=128,wn=64,stages=4,vec=1,pack=none", 0},
    {"cuda wgmma-tf32x3 producer 256x128", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer,bm=256,bn=128,bk=16,wm=128,wn=128,stages=3,vec=4,pack=ab", 0},
    {"cuda wgmma-tf32x3 producer 128x256", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer,bm=128,bn=256,bk=16,wm=64,wn=128,stages=3,vec=4,pack=ab", 0},
    {"cuda wgmma-tf32x3 producer-reg 256x128", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer-reg,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,vec=1,pack=none", 0},
    {"cuda wgmma-tf32x3 producer-pack 256x128", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer-pack,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,vec=4,pack=ab", 0},
    {"cuda wgmma-tf32x3 producer-reg 128x256", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer-reg,bm=128,bn=256,bk=8,wm=64,wn=128,stages=8,vec=1,pack=none", 0},
    {"cuda wgmma-tf32x3 producer-bulk 256x128", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer-bulk,bm=256,bn=128,bk=16,wm=128,wn=128,stages=4,vec=4,pack=ab", 0},
    {"cuda wgmma-tf32x3 producer-bulk two buffers 128x128", TSR_BACKEND_CUDA, TSR_PREC_FP32X3,
     WG2 "split=producer-bulk,bm=128,bn=128,bk=16,wm=64,wn=128,stages=6,vec=4,pack=ab", 0},
#undef WG2
    /* the FFMA producer with TMA tensor copies (split=producer-tma): M, N
     * and K tails come as TMA's zero fill, A packed (NN) */
#define FTMA0 "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,minblocks=3,split=producer-tma," \
              "pack=a,kfrag=none,kunroll=0,tailk=0,wave=0,forder=1,"
#define FTMA FTMA0 "bm=64,wm=32,tm=8,"
    {"cuda strict producer-tma", TSR_BACKEND_CUDA, TSR_PREC_STRICT, FTMA "kloop=2,splitk=1", 0},
    {"cuda strict producer-tma kloop=3 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=3,splitk=2", 0},
    /* kwait=1: the next block's full barrier tested a block early */
    {"cuda strict producer-tma kwait=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=2,kwait=1", 0},
    /* kunroll=1: the consumers' loop once per ring slot (whole rounds) */
    {"cuda strict producer-tma kunroll=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,minblocks=3,split=producer-tma,pack=a,kfrag=none,"
     "kunroll=1,tailk=0,wave=0,forder=1,bm=64,wm=32,tm=8,kloop=2,splitk=2", 0},
    /* pelect=1: the converged producer warp, one lane elected per K block */
    {"cuda strict producer-tma pelect=1", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=1,pelect=1", 0},
    /* krel=1: each block frees its slot after its last shared loads */
    {"cuda strict producer-tma krel=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=2,krel=1", 0},
    /* krel=2: slots freed in pairs after every second block */
    {"cuda strict producer-tma krel=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=1,krel=2", 0},
    /* kinner: the K block's steps as an inner loop (a K block of 32 in two
     * trips of 16, krel=1's release in the last trip) */
    {"cuda strict producer-tma kinner=16 bk=32 krel=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bn=128,bk=32,wn=64,tn=8,stages=3,vec=4,pad=0,minblocks=3,split=producer-tma,pack=a,kfrag=none,"
     "kunroll=0,tailk=0,wave=0,forder=1,bm=64,wm=32,tm=8,kloop=2,splitk=2,krel=1,kinner=16", 0},
    {"cuda strict producer-tma kinner=8 krel=1", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=1,krel=1,kinner=8", 0},
    /* lazy: A packed by the producer warps, claimed piece by piece */
    {"cuda strict producer-tma lazy=4 krel=1", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=1,krel=1,lazy=4", 0},
    {"cuda strict producer-tma lazy=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=2,lazy=1", 0},
    /* lazyk: the same pieces packed by a kernel beside the main kernel */
    {"cuda strict producer-tma lazy=4 lazyk=132 krel=1", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=1,krel=1,lazy=4,lazyk=132", 0},
    {"cuda strict producer-tma lazy=1 lazyk=3 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA "kloop=2,splitk=2,lazy=1,lazyk=3", 0},
    /* four blocks an SM: a producer warpgroup whose setmaxnreg gives the
     * consumers 104 registers (three of its warps leave at once) */
    {"cuda strict producer-tma four blocks krel=1 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,minblocks=4,split=producer-tma,pack=a,kfrag=none,"
     "kunroll=0,tailk=0,wave=0,forder=1,bm=64,wm=32,tm=8,kloop=2,splitk=2,krel=1", 0},
    {"cuda strict producer-tma four blocks tailk=3", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,minblocks=4,split=producer-tma,pack=a,kfrag=none,"
     "kunroll=0,tailk=3,wave=7,forder=1,bm=64,wm=32,tm=8,kloop=2,splitk=1,krel=1", 0},
#undef FTMA
    /* 12x8 a thread under the producer's 136-register cap (no copy state
     * in the consumers: ptxas fits it in 128, no spills) */
    {"cuda strict producer-tma 96x128 12x8", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FTMA0 "bm=96,wm=48,tm=12,kloop=2,splitk=1", 0},
#undef FTMA0
    /* kfrag=a: A's boxes [m][k] rows of its k-contiguous packed copy (the
     * families' K of 129 rejects unpacked A's 516-byte rows; gpu_bench's
     * screens validate the unpacked boxes) */
    {"cuda strict producer-tma kfrag=a", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,minblocks=3,split=producer-tma,"
     "pack=a,kfrag=a,kunroll=0,tailk=0,wave=0,forder=1,kloop=2,splitk=1", 0},
    /* split=tma: the same boxes without a producer, the four warps taking
     * turns refilling the slot the others left a block before; four blocks
     * an SM at 8x8 a thread, three at 12x8 and 16x8 */
#define FSELF "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,split=tma," \
              "pack=a,kfrag=none,kunroll=0,tailk=0,wave=0,forder=1,"
    {"cuda strict tma four blocks", TSR_BACKEND_CUDA, TSR_PREC_STRICT, FSELF "bm=64,wm=32,tm=8,minblocks=4,kloop=2,splitk=1", 0},
    {"cuda strict tma three blocks kloop=3 splitk=2", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FSELF "bm=64,wm=32,tm=8,minblocks=3,kloop=3,splitk=2", 0},
    {"cuda strict tma 96x128 12x8 three blocks", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FSELF "bm=96,wm=48,tm=12,minblocks=3,kloop=2,splitk=1", 0},
    {"cuda strict tma 96x128 12x8 three blocks kfrag=a", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     "bn=128,bk=16,wn=64,tn=8,stages=4,vec=4,pad=0,split=tma,pack=a,kfrag=a,kunroll=0,tailk=0,wave=0,"
     "forder=1,bm=96,wm=48,tm=12,minblocks=3,kloop=2,splitk=1", 0},
    {"cuda strict tma 128x128 16x8 three blocks", TSR_BACKEND_CUDA, TSR_PREC_STRICT,
     FSELF "bm=128,wm=64,tm=16,minblocks=3,kloop=2,splitk=1", 0},
#undef FSELF
    {"cuda auto", TSR_BACKEND_CUDA, TSR_PREC_AUTO, NULL, 0},
    {"cublas strict", TSR_BACKEND_CUBLAS, TSR_PREC_STRICT, NULL, 0},
    /* cuBLAS TF32 rounds FLT_MAX up to Inf (seen on the H200, 2026-11-30) */
    {"cublas tf32", TSR_BACKEND_CUBLAS, TSR_PREC_TF32, NULL, 1},
    {"hand", TSR_BACKEND_HAND, TSR_PREC_STRICT, NULL, 0},
};

static void run_family(const family *f, tsr__workload *w, float *c, tsr_receipt *r,
                       tsr_precision *ran) {
  tsr_problem p = w->p;
  p.precision = f->prec;
  tsr_plan plan;
  char msg[256];
  assert_int_equal(tsr_plan_lookup(ctx, f->b, &p, &plan, NULL, 0), TSR_OK);
  if (f->overlay && tsr_plan_parse(f->overlay, &plan, msg, sizeof msg) != TSR_OK)
    fail_msg("%s: %s", f->name, msg);
  /* realize + prepare: the measurement layer's prepared execution */
  tsr_exec *e = NULL;
  tsr_status st = tsr__exec_create(ctx, f->b, &p, &plan, w->a, w->b, w->c0, 0, &e);
  if (st) fail_msg("%s: %s", f->name, tsr_context_message(ctx));
  tsr_precision mode = tsr_exec_info(e)->precision;
  assert_int_equal(tsr__validated_call(e, w, mode, 0, 0, c, 0, r), TSR_OK);
  tsr_exec_destroy(e);
  *ran = mode;
}

static void test_contract_families(void **state) {
  NEED_GPU();
  static const struct { int64_t m, n, k; } sh[] = {{256, 192, 2048}, {96, 80, 129}};
  int ran_any = 0;
  for (size_t s = 0; s < 2; s++)
    for (int fam = TSR_INPUTS_RANDOM; fam < TSR_INPUTS_COUNT; fam++) {
      tsr_problem p;
      tsr_problem_init(&p, sh[s].m, sh[s].n, sh[s].k);
      tsr__workload *w;
      char msg[256];
      assert_int_equal(tsr__workload_create(&p, (tsr_inputs)fam, 3, NULL, 0, &w, msg, sizeof msg), TSR_OK);
      float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
      for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        if (!plan_selected(families[f].overlay)) continue;
        tsr_receipt r;
        tsr_precision ran;
        run_family(&families[f], w, c, &r, &ran);
        ran_any = 1;
        printf("# contract %lldx%lldx%lld %s %s (%s): rel. Frobenius %.3g, strict ref. %.3g, limit "
               "%.3g, worst %.3g of the bound: %s\n",
               (long long)p.m, (long long)p.n, (long long)p.k, tsr_inputs_name((tsr_inputs)fam),
               families[f].name, tsr_precision_name(ran), r.rel_fro_err, w->strict_rel_fro,
               r.fro_limit, r.worst_bound_ratio, r.passed ? "met" : "BROKEN");
        if (!r.passed) {
          tsr__receipt_summary(&r, msg, sizeof msg);
          fail_msg("%s on %s inputs: %s", families[f].name, tsr_inputs_name((tsr_inputs)fam), msg);
        }
      }
      /* the old accumulation breaches the contract at long K */
      if (s == 0 && fam == TSR_INPUTS_RANDOM) {
        family chain = {"cuda fp32x3 acc=chain", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, "acc=chain,splitk=1", 0};
        tsr_receipt r;
        tsr_precision ran;
        run_family(&chain, w, c, &r, &ran);
        printf("# contract chain: rel. Frobenius %.3g, limit %.3g: %s\n", r.rel_fro_err, r.fro_limit,
               r.passed ? "met" : "broken (expected)");
        assert_false(r.passed);
      }
      free(c);
      tsr__workload_destroy(w);
    }
  families_ran("contract families", ran_any);
}

static void test_specials_families(void **state) {
  NEED_GPU();
  int ran_any = 0;
  for (int kind = 0; kind < 7; kind++) {
    tsr_problem p;
    tsr_problem_init(&p, 96, 80, 256);
    p.beta = kind == 5 ? 0.5f : 0.0f;
    tsr__workload *w;
    char msg[256];
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 5, NULL, 0, &w, msg, sizeof msg), TSR_OK);
    float *a = w->a, *b = w->b;
    int64_t K = w->p.k, N = w->p.n;
    switch (kind) {
      case 0: a[3 * K + 7] = NAN; break;
      case 1: a[5 * K + 2] = INFINITY; b[9 * N + 4] = -INFINITY; break;
      case 2: a[2 * K + 5] = 3.4028235e38f; b[5 * N + 3] = 1.0f; break;
      case 3: for (int64_t k = 0; k < K; k++) a[6 * K + k] = 1e-39f * (float)(k % 7 + 1), b[k * N + 1] = 1e30f; break;
      case 4: b[0] = INFINITY; a[0] = 0.0f; break;
      case 5: w->c0[7] = NAN; break;
      default: break; /* beta = 0: the validated call poisons C, which must never be read */
    }
    assert_int_equal(tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro), TSR_OK);
    float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
      if (!plan_selected(families[f].overlay)) continue;
      tsr_receipt r;
      tsr_precision ran;
      run_family(&families[f], w, c, &r, &ran);
      ran_any = 1;
      printf("# specials %d %s: %lld of the wrong class, worst %.3g of the bound\n", kind,
             families[f].name, (long long)r.class_failed, r.worst_bound_ratio);
      if (families[f].peer) continue;
      if (r.class_failed) fail_msg("special case %d, %s: %lld outputs of the wrong class", kind,
                                   families[f].name, (long long)r.class_failed);
      if (kind != 3 || ran == TSR_PREC_STRICT) {
        if (!r.passed) {
          tsr__receipt_summary(&r, msg, sizeof msg);
          fail_msg("special case %d, %s: %s", kind, families[f].name, msg);
        }
      }
    }
    free(c);
    tsr__workload_destroy(w);
  }
  families_ran("specials families", ran_any);
}

/* split=pack (the parts made once by the pack prologue) computes the same
 * bits as split=inline (each warp splitting its fragments), on every op
 * pair, with beta, split-K, tails and special values. */
static void test_split_identity(void **state) {
  NEED_GPU();
  static const char *const plans[] = {NULL, "splitk=2", "bm=64,bn=64,bk=16,wm=32,wn=32,tm=1,tn=1,stages=3"};
  for (int ops = 0; ops < 4; ops++)
    for (size_t q = 0; q < sizeof plans / sizeof *plans; q++) {
      tsr_problem p;
      tsr_problem_init(&p, 200, 136, 300);
      p.op_a = ops & 1 ? TSR_OP_T : TSR_OP_N;
      p.op_b = ops & 2 ? TSR_OP_T : TSR_OP_N;
      p.beta = q == 1 ? 0.5f : 0.0f;
      tsr__workload *w;
      char msg[256];
      assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_WIDE, 9, NULL, 0, &w, msg, sizeof msg), TSR_OK);
      w->a[0] = INFINITY; /* classes through both splits */
      w->b[5] = NAN;
      w->a[tsr_problem_elems_a(&w->p) / 2] = 3.4028235e38f;
      assert_int_equal(tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro), TSR_OK);
      int64_t nc = tsr_problem_elems_c(&w->p);
      float *c[2] = {malloc((size_t)nc * sizeof(float)), malloc((size_t)nc * sizeof(float))};
      for (int v = 0; v < 2; v++) {
        char overlay[200];
        snprintf(overlay, sizeof overlay, "%s%ssplit=%s", plans[q] ? plans[q] : "", plans[q] ? "," : "",
                 v ? "pack" : "inline");
        family f = {"cuda fp32x3", TSR_BACKEND_CUDA, TSR_PREC_FP32X3, overlay, 0};
        tsr_receipt r;
        tsr_precision ran;
        run_family(&f, w, c[v], &r, &ran);
        assert_int_equal(r.class_failed, 0);
      }
      int64_t diff = 0, first = -1;
      for (int64_t e = 0; e < nc; e++)
        if (memcmp(&c[0][e], &c[1][e], sizeof(float)) != 0 && diff++ == 0) first = e;
      printf("# split identity ops %c%c plan %s: %lld of %lld outputs differ\n", ops & 1 ? 'T' : 'N',
             ops & 2 ? 'T' : 'N', plans[q] ? plans[q] : "default", (long long)diff, (long long)nc);
      if (diff) fail_msg("split=pack differs from split=inline at %lld (%a vs %a)", (long long)first,
                         (double)c[0][first], (double)c[1][first]);
      free(c[0]);
      free(c[1]);
      tsr__workload_destroy(w);
    }
}

/* Every family's overlay parses, checked without a GPU so that CI catches a
 * bad overlay (a key given twice made two families fail on the H200 only). */
static void test_family_overlays_parse(void **state) {
  (void)state;
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
    if (!families[f].overlay) continue;
    tsr_plan plan;
    char msg[256];
    memset(&plan, 0, sizeof plan);
    if (tsr_plan_parse(families[f].overlay, &plan, msg, sizeof msg) != TSR_OK)
      fail_msg("%s: %s", families[f].name, msg);
  }
}

int main(void) {
  /* TSR_GPU_ONLY=<cmocka pattern, e.g. *wgmma*>: run the matching tests only
   * (a device script's time budget) */
  const char *only = getenv("TSR_GPU_ONLY");
  if (only && *only) cmocka_set_test_filter(only);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_family_overlays_parse),
      cmocka_unit_test(test_cuda_wgmma_matrix),
      cmocka_unit_test(test_cuda_gemv_matrix),
      cmocka_unit_test(test_contract_families),
      cmocka_unit_test(test_specials_families),
      cmocka_unit_test(test_split_identity),
      cmocka_unit_test(test_oracle_gpu_vs_cpu),
      cmocka_unit_test(test_hand_matrix),
      cmocka_unit_test(test_cublas_matrix),
      cmocka_unit_test(test_cuda_default_matrix),
      cmocka_unit_test(test_cuda_variants),
      cmocka_unit_test(test_cuda_splitk_deterministic),
      cmocka_unit_test(test_cuda_lazy_repeat),
      cmocka_unit_test(test_exec_info_and_timing),
      cmocka_unit_test(test_tsr_gemm_gpu),
      cmocka_unit_test(test_download_layouts),
      cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
