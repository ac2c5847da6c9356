/* CI without a GPU: every kernel of the default plan set (the emitter's
 * default table over the seed and test shapes, each op pair, beta = 0 and
 * beta != 0), and of its tensor-core plans with split=pack, compiles with
 * NVRTC for sm_90, and ptxas reports no spills and registers that fit the
 * block. Skips when NVRTC is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cuda/gpu.h"
#include "core/backend.h"
#include "core/context.h"
#include "emit/emit.h"
#include "measure/zoo.h"
#include "source_dir.h"
#include "tessera.h"

static const int64_t shapes[][3] = {
    {128, 128, 61},   {512, 512, 512},    {1024, 1024, 1024}, {1024, 1024, 1537},
    {2049, 4097, 1025}, {4096, 4096, 4096}, {4096, 4096, 11008}, {8192, 8192, 8192},
    {127, 193, 61},   {513, 257, 129},    {32, 32, 32},       {1, 1, 1},
    {64, 80, 1},
};

static int check_function(const char *log, const char *name, uint64_t threads, const char *what) {
  int regs = -1, stack = -1, ss = -1, sl = -1;
  if (tsr__ptxas_parse(log, name, &regs, &stack, &ss, &sl) != 0) {
    printf("FAIL %s: no ptxas resources for %s in the log (%zu bytes: %.400s)\n", what, name,
           log ? strlen(log) : 0, log ? log : "(null)");
    return 1;
  }
  int bad = ss + sl != 0 || regs > 255 || (uint64_t)regs * threads > 65536;
  printf("%s %s %s: %d registers x %llu threads, %d stack, %d/%d spill bytes\n",
         bad ? "FAIL" : "#", what, name, regs, (unsigned long long)threads, stack, ss, sl);
  return bad;
}

/* Realize plan on p, emit it for sm_90 and compile it through NVRTC; every
 * kernel of the source (main, pack prologues, split-K reduction) within the
 * register file and without spills; a main kernel with a setmaxnreg split at
 * exactly its register count, and no wgmma serialized by ptxas. Returns the
 * failures, counts kernels. */
static int compile_clean(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                         const char *what, int *kernels) {
  char msg[1024];
  tsr_plan_info info;
  if (tsr__backend_cuda.realize(ctx, p, plan, &info)) {
    printf("FAIL %s: realize: %s\n", what, tsr_context_message(ctx));
    return 1;
  }
  tsr__kernel_src k;
  memset(&k, 0, sizeof k);
  if (tsr__emit_gemm(p, &info.plan, &tsr__target_sm90, &k, msg, sizeof msg)) {
    printf("FAIL %s: emit: %s\n", what, msg);
    return 1;
  }
  int fails = 0;
  void *bin = NULL;
  size_t n = 0;
  char *log = NULL;
  if (tsr__nvrtc_compile(ctx, k.source, 9, 0, &bin, &n, &log)) {
    printf("FAIL %s: %s\n", what, tsr_context_message(ctx));
    fails++;
  } else {
    uint64_t threads = (uint64_t)k.block[0] * k.block[1] * k.block[2];
    fails += check_function(log, k.main_name, threads, what);
    (*kernels)++;
    int regs = -1, st = -1, ss = -1, sl = -1;
    if (k.regs_exact && (tsr__ptxas_parse(log, k.main_name, &regs, &st, &ss, &sl) != 0 ||
                         regs != k.regs_exact)) {
      printf("FAIL %s: %d registers; its setmaxnreg split needs exactly %d\n", what, regs,
             k.regs_exact);
      fails++;
    }
    if (log && strstr(log, "serialized")) {
      printf("FAIL %s: ptxas serialized the wgmmas\n", what);
      fails++;
    }
    for (int q = 0; q < k.npre; q++) { /* pack prologue kernels */
      fails += check_function(log, k.pre[q].name, k.pre[q].block[0], what);
      (*kernels)++;
    }
    if (k.reduce_name[0]) {
      uint64_t rt = (uint64_t)k.reduce_block[0] * k.reduce_block[1] * k.reduce_block[2];
      fails += check_function(log, k.reduce_name, rt, what);
      (*kernels)++;
    }
  }
  free(bin);
  free(log);
  tsr__kernel_src_free(&k);
  return fails;
}

/* A context for a test that compiles through NVRTC; skips the test where
 * libnvrtc is absent. */
static tsr_context *nvrtc_context(void) {
  char msg[1024];
  if (!tsr__nvrtc_load(msg, sizeof msg)) {
    printf("# NVRTC absent: %s\n", msg);
    skip();
  }
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  return ctx;
}

static void test_default_plans_compile_clean(void **state) {
  char msg[1024];
  tsr_context *ctx = nvrtc_context();
  int fails = 0, kernels = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int v = 0; v < 16; v++) {
      /* v & 8: the tensor-core default with split=pack (not a default yet;
       * both operands packed, the TF32 parts made once in the prologue) */
      /* every op pair with beta = 0; NN and TT also with beta != 0 */
      if ((v & 4) && (v & 3) != 0 && (v & 3) != 3) continue;
      if ((v & 8) && (v & 4)) continue; /* split=pack: each op pair, beta = 0 */
      tsr_problem p;
      tsr_problem_init(&p, shapes[s][0], shapes[s][1], shapes[s][2]);
      p.op_a = (tsr_op)(v & 1);
      p.op_b = (tsr_op)((v >> 1) & 1);
      p.beta = (v & 4) ? 0.5f : 0.0f;
      assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
      tsr_plan plan;
      tsr__emit_default_plan(&p, &plan);
      if (v & 8) {
        if (plan.mma != TSR_MMA_TF32X3 && plan.mma != TSR_MMA_TF32) continue; /* mma.sync only */
        plan.split = TSR_SPLIT_PACK;
      }
      char what[600], pt[400];
      tsr_plan_format(&plan, pt, sizeof pt);
      snprintf(what, sizeof what, "%lldx%lldx%lld %c%c beta %g [%s]", (long long)p.m,
               (long long)p.n, (long long)p.k, p.op_a ? 'T' : 'N', p.op_b ? 'T' : 'N', p.beta,
               pt);
      fails += compile_clean(ctx, &p, &plan, what, &kernels);
    }
  printf("# %d kernels compiled for sm_90, %d failures\n", kernels, fails);
  tsr_context_destroy(ctx);
  assert_int_equal(fails, 0);
}

/* The wgmma families through NVRTC, as the backend compiles them: the
 * source's "// tsr:arch-specific" line makes the target sm_90a (sm_90 would
 * reject wgmma), every op pair (x-contiguous operands packed), no spills. */
static void test_wgmma_compiles_for_sm90a(void **state) {
  char msg[1024];
  tsr_context *ctx = nvrtc_context();
  const char *plans[] = {
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=256,bk=16,wm=64,wn=128,stages=4,"
      "walk=rect:8x16,minblocks=0,pack=none,split=inline,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3,"
      "walk=rect:8x16,minblocks=0,pack=none,split=inline,acc=step,splitk=2",
      /* the producer warpgroup: setmaxnreg and mbarriers through NVRTC */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=3,"
      "walk=rect:8x16,minblocks=0,pack=none,split=producer,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=128,bn=256,bk=8,wm=64,wn=128,stages=8,"
      "walk=rect:8x16,minblocks=0,pack=none,split=producer-reg,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,"
      "walk=rect:8x16,minblocks=0,pack=ab,split=producer-pack,acc=step,splitk=1",
      /* producer-bulk: bulk copies and 232-register consumers */
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=4,"
      "walk=rect:8x16,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1",
      "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=4,bm=256,bn=128,bk=32,wm=128,wn=128,stages=2,"
      "walk=rect:8x16,minblocks=0,pack=ab,split=producer-bulk,acc=step,splitk=1"};
  int fails = 0, kernels = 0;
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
    for (int v = 0; v < 4; v++) {
      tsr_problem p;
      tsr_problem_init(&p, 1024, 1024, 1024);
      p.op_a = (tsr_op)(v & 1);
      p.op_b = (tsr_op)((v >> 1) & 1);
      assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
      tsr_plan plan;
      tsr__emit_default_plan(&p, &plan);
      assert_int_equal(tsr_plan_parse(plans[i], &plan, msg, sizeof msg), TSR_OK);
      char what[600];
      snprintf(what, sizeof what, "wgmma %c%c [%s]", v & 1 ? 'T' : 'N', v & 2 ? 'T' : 'N', plans[i]);
      fails += compile_clean(ctx, &p, &plan, what, &kernels);
    }
  printf("# %d wgmma kernels compiled for sm_90a, %d failures\n", kernels, fails);
  tsr_context_destroy(ctx);
  assert_int_equal(fails, 0);
}

/* The latest strict screens (scripts/device/s17-core2.txt, s18-kunroll.txt:
 * "OPS PLAN SHAPES..." lines as scripts/device/default-check's ffvar part
 * runs them, PLAN over each shape's strict default): every overlay line
 * realizes at each of its shapes and compiles for sm_90 without spills, so a
 * GPU call is not spent on a line that cannot run. An overlay means "the
 * default of its day plus these keys", so the list names the newest
 * screens: session 11's files (s11-gemv.txt, s11b-ffma.txt) overlaid GEMV
 * and 64x64 defaults that session 15 replaced, and s15-screen3.txt's
 * kfrag-less 16-row line became kfrag=ab over the new default, and
 * s16-screen.txt's split-K 7 overlaid the 64x64 195x1423x2802 default that
 * session 16 replaced; s17-core2.txt's 64x128 and s18-kunroll.txt's kunroll
 * lines stopped realizing when session 21's default took split=producer
 * (4-warp tiles, no kunroll); s21-producer3.txt's last line spills by
 * design (the producer's tail-guarded copies at 3000^3, 48 bytes: why the
 * default takes the producer for whole tiles only). s22-tail2.txt ran on the
 * H200 (tail slices over the forder=1 three-block default; its lines became
 * the default). s23-tma.txt (the FFMA producer's TMA tensor copies) was
 * prepared without a GPU and never ran; s24-tma.txt, the next, repeats its
 * main lines beside split=tma's (no producer, four blocks an SM; its
 * variants in s24-tma2.txt; both ran on the H200, as s25-screen.txt and
 * s25-kfrag.txt did); s26-next.txt was next and ran as sessions 27-28's
 * screens; s29-screen.txt (kunroll and pelect on the producer rings) ran
 * in session 30 (an H100), s31-screen.txt (where the fenced TMA ring
 * frees its slots: krel, stages, kloop) in session 31 (an H100, krel=1
 * became the default), s31b-screen.txt (the new default beside the keys
 * that shaped it) and s31c-screen.txt (the FFMA orders under it) ran in
 * session 31 too; s32-icache.txt (bk 8 and 32: the loop body against the
 * instruction cache) ran in session 32 (an H100) and s32-screen.txt (kinner,
 * the K block's inner loop) too; s40-lazy.txt (A packed by the producer
 * warps, lazy=P) ran in session 40; s41-four.txt (the TMA producer's
 * tile at four blocks an SM, a producer warpgroup with setmaxnreg) ran in
 * session 41; s42-lazyk.txt (A's pack kernel beside the GEMM, lazyk) is the
 * newest: every line must realize and compile clean before a GPU call is
 * spent on it.
 * Point it at the next screen. */
static int variants_file_compile_clean(tsr_context *ctx, const char *name, int *lines,
                                       int *kernels) {
  char msg[1024], path[1024];
  snprintf(path, sizeof path, "%s/scripts/device/%s", test_source_dir(), name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  int fails = 0;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *ops = strtok_r(line, " \t\n", &save);
    if (!ops || ops[0] == '#') continue;
    char *overlay = strtok_r(NULL, " \t\n", &save);
    assert_non_null(overlay);
    /* the defaults: test_emit_nvcc compiles the GEMV ones (4096x16x16384 NT among them) */
    if (strcmp(overlay, "default") == 0) continue;
    (*lines)++;
    for (char *tok; (tok = strtok_r(NULL, " \t\n", &save));) {
      tsr__shape_token st;
      if (tsr__shape_token_parse(tok, &st, msg, sizeof msg)) fail_msg("%s: %s", tok, msg);
      tsr_problem p;
      tsr_problem_init(&p, st.m, st.n, st.k);
      p.batch = st.batch;
      p.op_a = st.has_ops ? st.op_a : ops[0] == 'T' ? TSR_OP_T : TSR_OP_N;
      p.op_b = st.has_ops ? st.op_b : ops[1] == 'T' ? TSR_OP_T : TSR_OP_N;
      p.precision = TSR_PREC_STRICT;
      assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
      tsr_plan plan;
      tsr__emit_default_plan(&p, &plan);
      if (tsr_plan_parse(overlay, &plan, msg, sizeof msg))
        fail_msg("%s: %s", overlay, msg);
      char what[700], pt[400];
      tsr_plan_format(&plan, pt, sizeof pt);
      snprintf(what, sizeof what, "%s %s:%s [%s]", name, tok, ops, pt);
      fails += compile_clean(ctx, &p, &plan, what, kernels);
    }
  }
  fclose(f);
  return fails;
}

static void test_screen_variants_compile_clean(void **state) {
  tsr_context *ctx = nvrtc_context();
  static const char *const files[] = {"s31-screen.txt", "s31b-screen.txt", "s31c-screen.txt",
                                      "s32-icache.txt", "s32-screen.txt", "s40-lazy.txt",
                                      "s41-four.txt", "s42-lazyk.txt"};
  int fails = 0;
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    int lines = 0, kernels = 0;
    fails += variants_file_compile_clean(ctx, files[i], &lines, &kernels);
    printf("# %s: %d lines, %d kernels compiled for sm_90\n", files[i], lines, kernels);
    assert_true(lines > 0);
  }
  tsr_context_destroy(ctx);
  assert_int_equal(fails, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_plans_compile_clean),
      cmocka_unit_test(test_wgmma_compiles_for_sm90a),
      cmocka_unit_test(test_screen_variants_compile_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
