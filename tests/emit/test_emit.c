/* The emitter: byte-identical deterministic source, walk normalization,
 * one-line rejections naming the field, the default table, thread ->
 * output ownership, and — with a host C++ compiler — every kernel family and
 * feature run under a host emulation of the device layer (tests/emit/emu,
 * AddressSanitizer) against the FP64 oracle; with nvcc, the default plans and
 * a variant matrix compiled for sm_90 with no spills in the defaults. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hash.h"
#include "emit/emit.h"
#include "source_dir.h"
#include "tessera.h"

#define SM90 (&tsr__target_sm90)
#define NVCC "/usr/local/cuda/bin/nvcc"

/* ---- helpers -------------------------------------------------------------- */
typedef struct {
  int64_t m, n, k, batch;
  char opa, opb;
  float beta;
  int64_t lda_pad, ldb_pad, ldc_pad, stride_pad;
} prob_spec;

static tsr_problem mkprob(prob_spec s) {
  tsr_problem p;
  tsr_problem_init(&p, s.m, s.n, s.k);
  p.batch = s.batch ? s.batch : 1;
  p.op_a = s.opa == 'T' ? TSR_OP_T : TSR_OP_N;
  p.op_b = s.opb == 'T' ? TSR_OP_T : TSR_OP_N;
  p.beta = s.beta;
  p.alpha = s.beta != 0.0f ? 0.75f : 1.0f;
  if (s.lda_pad) p.lda = (p.op_a == TSR_OP_N ? s.k : s.m) + s.lda_pad;
  if (s.ldb_pad) p.ldb = (p.op_b == TSR_OP_N ? s.n : s.k) + s.ldb_pad;
  if (s.ldc_pad) p.ldc = s.n + s.ldc_pad;
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  if (s.stride_pad && p.batch > 1) {
    p.stride_a += s.stride_pad;
    p.stride_b += s.stride_pad;
    p.stride_c += s.stride_pad;
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  }
  return p;
}

static tsr_problem P(int64_t m, int64_t n, int64_t k) {
  return mkprob((prob_spec){.m = m, .n = n, .k = k});
}

/* p asking for strict FP32, and its default plan in *pl */
static tsr_problem strict_default(tsr_problem p, tsr_plan *pl) {
  p.precision = TSR_PREC_STRICT;
  tsr__emit_default_plan(&p, pl);
  return p;
}

static tsr_plan mkplan(const char *text) {
  tsr_plan pl = {.bm = 32, .bn = 32, .bk = 8, .wm = 16, .wn = 32, .tm = 4, .tn = 4,
                 .stages = 1, .vec = 1, .walk = {TSR_WALK_LINEAR, 1, 1}, .splitk = 1};
  char msg[256];
  if (tsr_plan_parse(text, &pl, msg, sizeof msg) != TSR_OK) fail_msg("%s: %s", text, msg);
  return pl;
}

static void emit_ok(const tsr_problem *p, const tsr_plan *pl, tsr__kernel_src *k) {
  char msg[512];
  tsr_status s = tsr__emit_gemm(p, pl, SM90, k, msg, sizeof msg);
  if (s != TSR_OK) {
    char t[512];
    tsr_plan_format(pl, t, sizeof t);
    fail_msg("emit rejected %s: %s", t, msg);
  }
}

static char *tmpdir_make(void) {
  char *d = strdup("/tmp/tsr_emit_XXXXXX");
  assert_non_null(mkdtemp(d));
  return d;
}
static void tmpdir_remove(char *d) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", d);
  free(d);
}
static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc((size_t)n + 1, 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  s[n] = '\0';
  fclose(f);
  return s;
}
static int have_cxx(void) { return system("g++ --version > /dev/null 2>&1") == 0; }
/* Whether the source's tsr_block (the K-block compute) mentions needle. */
static int block_calls(const char *src, const char *needle) {
  const char *b = strstr(src, "void tsr_block(");
  assert_non_null(b);
  const char *e = strstr(b, "\n}\n");
  assert_non_null(e);
  const char *f = strstr(b, needle);
  return f && f < e;
}


/* ---- determinism and normalization ----------------------------------------- */
static void test_deterministic(void **state) {
  tsr_problem p = P(4096, 4096, 4096);
  tsr_plan pl;
  /* the table without its sm_90a families (cc 80): the mma.sync plan, whose
   * block and workspace the checks below spell out; the wgmma default's
   * determinism is checked with the other wgmma cases */
  tsr__emit_default_plan_cc(&p, 80, &pl);
  assert_int_equal(pl.mma, TSR_MMA_TF32X3);
  tsr__kernel_src a, b, c;
  emit_ok(&p, &pl, &a);
  emit_ok(&p, &pl, &b);
  assert_int_equal(a.len, b.len);
  assert_int_equal(a.len, strlen(a.source));
  assert_memory_equal(a.source, b.source, a.len);
  assert_string_equal(a.sha256, b.sha256);
  char h[65];
  assert_int_equal(tsr__sha256_hex(a.source, a.len, h), 0);
  assert_string_equal(h, a.sha256);
  /* no pointers or timestamps: nothing printed with %p-like hex */
  assert_null(strstr(a.source, "0x7f"));
  /* a different plan is a different source */
  pl.stages = 2;
  emit_ok(&p, &pl, &c);
  assert_string_not_equal(a.sha256, c.sha256);
  assert_int_equal(a.grid[0], (uint32_t)((4096 / pl.bm) * (4096 / pl.bn)));
  assert_int_equal(a.block[0], (uint32_t)((pl.bm / pl.wm) * (pl.bn / pl.wn) * 32));
  assert_int_equal(a.workspace_bytes, 0);
  assert_string_equal(a.reduce_name, "");
  assert_string_equal(a.main_name, "tsr_gemm_main");
  tsr__kernel_src_free(&a);
  tsr__kernel_src_free(&b);
  tsr__kernel_src_free(&c);
  tsr__kernel_src_free(NULL);
}

/* Walks that visit in the linear order give the linear source, byte for
 * byte; rect:Rx1 gives the stripe:R source. */
static void test_walk_identity(void **state) {
  tsr_problem p = P(1000, 900, 64); /* 32x32 tiles: H = 32, W = 29 */
  tsr_plan lin = mkplan("stages=2");
  tsr__kernel_src ref, k;
  emit_ok(&p, &lin, &ref);
  const char *same[] = {"walk=rect:1x7", "walk=rect:5x29", "walk=rect:3x1000", "walk=stripe:1",
                        "walk=rect:1x1"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    tsr_plan q = lin;
    char msg[128];
    assert_int_equal(tsr_plan_parse(same[i], &q, msg, sizeof msg), TSR_OK);
    emit_ok(&p, &q, &k);
    if (strcmp(k.source, ref.source) != 0) fail_msg("%s does not emit the linear source", same[i]);
    tsr__kernel_src_free(&k);
  }
  tsr__kernel_src_free(&ref);
  tsr_plan s4 = mkplan("stages=2,walk=stripe:4"), r41 = mkplan("stages=2,walk=rect:4x1");
  emit_ok(&p, &s4, &ref);
  emit_ok(&p, &r41, &k);
  assert_string_equal(ref.source, k.source);
  tsr__kernel_src_free(&ref);
  tsr__kernel_src_free(&k);
}

/* ---- rejections ------------------------------------------------------------ */
static void expect_reject_on(const tsr__gpu_target *t, tsr_problem p, const char *plan,
                             const char *needle) {
  tsr_plan pl = mkplan(plan);
  char msg[512] = "";
  tsr__kernel_src k;
  tsr_status s = tsr__emit_gemm(&p, &pl, t, &k, msg, sizeof msg);
  if (s == TSR_OK) fail_msg("plan '%s' was accepted; expected '%s'", plan, needle);
  assert_null(k.source);
  assert_int_equal(tsr__emit_check(&p, &pl, t, msg, sizeof msg), s);
  if (!strstr(msg, needle)) fail_msg("plan '%s': message '%s' lacks '%s'", plan, msg, needle);
  assert_null(strchr(msg, '\n'));
}

static void expect_reject(tsr_problem p, const char *plan, const char *needle) {
  expect_reject_on(SM90, p, plan, needle);
}

static void expect_accept_on(const tsr__gpu_target *t, tsr_problem p, const char *plan) {
  tsr_plan pl = mkplan(plan);
  char msg[512] = "";
  if (tsr__emit_check(&p, &pl, t, msg, sizeof msg) != TSR_OK)
    fail_msg("plan '%s' rejected: %s", plan, msg);
}

/* The emitter's limits are the target's, every one of them: each field,
 * lowered just below what a plan needs, rejects it naming the new value
 * (and at the value, accepts it); a target with room to spare changes no
 * byte of an accepted plan's source. Base plan: 64 threads, 4096 bytes of
 * shared memory (2 stages x 2 tiles of 8 x 32 floats), 48 estimated
 * registers (4x4 accumulators + fragments + 16), a register floor of 40. */
static void test_target_limits(void **state) {
  tsr_problem p = P(4096, 4096, 4096);
  tsr__gpu_target t = tsr__target_sm90;
  const char *base = "stages=2";
  expect_accept_on(SM90, p, base);

  t.smem_block_optin = 4096;
  expect_accept_on(&t, p, base);
  t.smem_block_optin = 3072;
  expect_reject_on(&t, p, base, "shared memory 4.0 KiB (4096 bytes) exceeds the 3.0 KiB limit");
  t = tsr__target_sm90;
  t.threads_block = 64;
  expect_accept_on(&t, p, base);
  t.threads_block = 32;
  expect_reject_on(&t, p, base, "64 threads per block (2x1 warps of 32, bm/wm x bn/wn) exceed the limit 32");
  t = tsr__target_sm90;
  t.regs_thread = 48;
  expect_accept_on(&t, p, base);
  t.regs_thread = 47;
  expect_reject_on(&t, p, base, "estimated 48 registers per thread (accumulators + fragments) exceed 47");
  t = tsr__target_sm90;
  t.blocks_sm = 3;
  expect_accept_on(&t, p, "stages=2,minblocks=3");
  t.blocks_sm = 2;
  expect_reject_on(&t, p, "stages=2,minblocks=3", "minblocks=3 exceeds the 2 resident blocks of an SM");
  t = tsr__target_sm90;
  t.smem_block_reserved = 512;
  t.smem_sm = 9216;
  expect_accept_on(&t, p, "stages=2,minblocks=2");
  t.smem_sm = 9215;
  expect_reject_on(&t, p, "stages=2,minblocks=2",
                   "minblocks=2 needs 2 x (4096 + 512) = 9216 bytes of shared memory, more than the SM's 9215");
  t = tsr__target_sm90;
  t.threads_sm = 128;
  expect_accept_on(&t, p, "stages=2,minblocks=2");
  t.threads_sm = 127;
  expect_reject_on(&t, p, "stages=2,minblocks=2", "minblocks=2 x 64 threads exceed the SM's 127 threads");
  t = tsr__target_sm90;
  t.regs_sm = 128 * 40;
  expect_accept_on(&t, p, "stages=2,minblocks=2");
  t.regs_sm = 128 * 40 - 1;
  expect_reject_on(&t, p, "stages=2,minblocks=2",
                   "minblocks=2 caps registers at 32 per thread, below the 40 the accumulators");
  t = tsr__target_sm90;
  /* the per-thread limit also caps the minblocks budget: 1x1 micro tiles
   * estimate 21 registers but need a floor of 25 */
  t.regs_thread = 25;
  expect_accept_on(&t, p, "tm=1,tn=1,wm=4,wn=8,bm=8,bn=8,minblocks=2");
  t.regs_thread = 24;
  expect_reject_on(&t, p, "tm=1,tn=1,wm=4,wn=8,bm=8,bn=8,minblocks=2",
                   "minblocks=2 caps registers at 24 per thread, below the 25");
  t = tsr__target_sm90;
  t.grid[0] = 128 * 128;
  expect_accept_on(&t, p, "bm=32,bn=32");
  t.grid[0] = 128 * 128 - 1;
  expect_reject_on(&t, p, "bm=32,bn=32", "grid of 128x128 = 16384 tiles exceeds the gridDim.x limit 16383");
  t = tsr__target_sm90;
  t.grid[1] = 2;
  expect_accept_on(&t, p, "splitk=2");
  expect_reject_on(&t, p, "splitk=3", "splitk=3 exceeds the gridDim.y limit 2");
  t = tsr__target_sm90;
  t.grid[2] = 7;
  expect_reject_on(&t, mkprob((prob_spec){.m = 64, .n = 64, .k = 64, .batch = 8}), base,
                   "batch=8 exceeds the gridDim.z limit 7");
  t = tsr__target_sm90;
  t.grid[0] = 15; /* 2x2 tiles; the reduction needs 64*64/256 = 16 blocks */
  expect_reject_on(&t, P(64, 64, 64), "splitk=2", "split-K reduction needs 16 blocks, more than 15");
  t = tsr__target_sm90;
  t.grid[0] = 63; /* 16 tiles; packing A (256 x 256 floats) takes 64 blocks of 256 x 16 bytes */
  expect_reject_on(&t, P(256, 256, 256), "bm=64,bn=64,wm=32,wn=32,tm=8,tn=4,pack=a",
                   "pack prologue for A needs 64 blocks, more than 63");

  char msg[256];
  tsr_plan pl = mkplan(base);
  assert_int_equal(tsr__emit_check(&p, &pl, NULL, msg, sizeof msg), TSR_ERR_INVALID);
  assert_string_equal(msg, "emit: NULL target");

  /* room to spare: the same source, byte for byte */
  tsr__gpu_target roomy = tsr__target_sm90;
  roomy.smem_block_optin *= 2;
  roomy.smem_sm *= 2;
  roomy.smem_block_reserved = 0;
  roomy.threads_block *= 2;
  roomy.threads_sm *= 2;
  roomy.regs_thread *= 2;
  roomy.regs_sm *= 2;
  roomy.blocks_sm *= 2;
  roomy.grid[0] = UINT32_MAX;
  roomy.grid[1] *= 2;
  roomy.grid[2] *= 2;
  tsr_problem probs[] = {p, mkprob((prob_spec){.m = 100, .n = 70, .k = 300, .batch = 3, .opa = 'T', .beta = 2})};
  const char *plans[] = {base, "stages=2,minblocks=2", "splitk=3,pack=ab",
                         "mma=tf32x3,tm=1,tn=1,bk=16,stages=3,split=pack"};
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < sizeof plans / sizeof plans[0]; j++) {
      tsr_plan q = mkplan(plans[j]);
      tsr__kernel_src a, b;
      emit_ok(&probs[i], &q, &a);
      assert_int_equal(tsr__emit_gemm(&probs[i], &q, &roomy, &b, msg, sizeof msg), TSR_OK);
      assert_int_equal(a.len, b.len);
      assert_memory_equal(a.source, b.source, a.len);
      assert_string_equal(a.sha256, b.sha256);
      tsr__kernel_src_free(&a);
      tsr__kernel_src_free(&b);
    }
}

/* wgmma rejections: the base plan WR with the keys of over replacing its own */
#define WR "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3,vec=4"
static void wg_check(const tsr__gpu_target *t, tsr_problem p, const char *over, const char *needle) {
  tsr_plan pl = mkplan(WR);
  char msg[512] = "";
  if (*over && tsr_plan_parse(over, &pl, msg, sizeof msg) != TSR_OK) fail_msg("%s: %s", over, msg);
  tsr_status s = tsr__emit_check(&p, &pl, t, msg, sizeof msg);
  if (!needle) {
    if (s != TSR_OK) fail_msg("wgmma plan '%s' rejected: %s", over, msg);
    return;
  }
  if (s == TSR_OK) fail_msg("wgmma plan '%s' was accepted; expected '%s'", over, needle);
  if (!strstr(msg, needle)) fail_msg("wgmma plan '%s': message '%s' lacks '%s'", over, msg, needle);
  assert_null(strchr(msg, '\n'));
}

static void test_rejections(void **state) {
  tsr_problem big = P(4096, 4096, 4096);
  expect_reject(big, "bm=96,wm=64,wn=32,tm=8,tn=8", "bm=96 is not a multiple of wm=64");
  expect_reject(big, "bn=48,wn=32", "bn=48 is not a multiple of wn=32");
  expect_reject(big, "bm=256,bn=256,wm=16,wn=32", "4096 threads per block");
  expect_reject(big, "bm=256,bn=256,bk=32,wm=64,wn=64,tm=8,tn=16,stages=4,pad=4,vec=4",
                "exceeds the 227.0 KiB limit (bm=256,bn=256,bk=32,stages=4,pad=4)");
  expect_reject(big, "wm=16,wn=32,tm=4,tn=8", "not 32");
  expect_reject(big, "bm=64,bn=64,wm=32,wn=64,tm=6,tn=8", "wm=32 is not a multiple of tm=6");
  expect_reject(big, "bm=128,bn=128,wm=64,wn=128,tm=16,tn=16", "registers");
  expect_reject(big, "vec=3", "vec=3 is not 1, 2 or 4");
  expect_reject(big, "threads=4", "threads=4");
  expect_reject(big, "a=view,b=view,stages=2", "stages=2 needs a staged operand");
  {
    /* mma=gemv: its fields, each rejection one line naming the field */
#define GV "mma=gemv,wm=1,wn=1,tm=1,tn=1,stages=1,pad=0,"
    tsr_problem gv = P(1, 4096, 4096);
    expect_accept_on(SM90, gv, GV "threads=64,bm=16,bn=128,vec=4");
    expect_reject(gv, GV "threads=64,bm=16,bn=128,vec=4,tailk=2,wave=4", "tailk=2 is unused by mma=gemv and must be 0");
    expect_reject(gv, GV "threads=64,bm=16,bn=128,vec=4,forder=1", "forder=1 is unused by mma=gemv and must be 0");
    expect_reject(P(17, 17, 64), GV "threads=64,bm=16,bn=16",
                  "mma=gemv needs M <= 16 or N <= 16, not m=17 n=17");
    expect_reject(P(5, 64, 64), GV "threads=64,bm=4,bn=16", "bm=4 must be from m=5 to 16");
    expect_reject(P(64, 5, 64), GV "threads=64,bm=16,bn=17", "bn=17 must be from n=5 to 16");
    expect_reject(gv, GV "threads=48,bm=16,bn=128", "multiple of 32 from 32 to 1024, not 48");
    expect_reject(gv, GV "threads=0,bm=16,bn=128", "not 0");
    expect_reject(gv, "mma=gemv,wm=1,wn=1,tm=1,tn=1,stages=2,pad=0,threads=64,bm=16,bn=128",
                  "stages=2 is unused by mma=gemv and must be 1");
    expect_reject(gv, GV "threads=64,bm=16,bn=128,pack=b", "pack is not supported by mma=gemv");
    expect_reject(gv, GV "threads=64,bm=16,bn=6,vec=4", "vec=4 needs bn=6 to be a multiple of 4");
    expect_reject(gv, GV "threads=64,bm=16,bn=256,vec=1",
                  "bn/vec = 256 threads per K row must divide threads=64");
    expect_reject(gv, GV "threads=64,bm=16,bn=128,bk=64,vec=4,splitk=65",
                  "splitk=65 exceeds the 64 K blocks");
    tsr_problem nt = mkprob((prob_spec){.m = 1, .n = 4096, .k = 4096, .opb = 'T'});
    expect_reject(nt, GV "threads=64,bm=16,bn=3", "bn=3 is not a multiple of 2");
    expect_reject(nt, GV "threads=64,bm=16,bn=2,bk=6,vec=4", "vec=4 needs bk=6 to be a multiple of 4");
    tsr_problem odd = mkprob((prob_spec){.m = 1, .n = 4096, .k = 4096, .ldb_pad = 1});
    expect_reject(odd, GV "threads=64,bm=16,bn=128,vec=4", "vec=4 needs ldb=4097 to be a multiple of 4");
    expect_reject(P(16, 4096, 4096), GV "threads=1024,bm=16,bn=1024,vec=4", "shared memory 256.0 KiB");
    /* lanerows: lane per row of a k-contiguous big operand */
    expect_accept_on(SM90, nt, GV "threads=64,bm=16,bn=128,bk=32,vec=4,lanerows=2");
    expect_accept_on(SM90, P(4096, 16, 4096),
                     GV "threads=128,bm=128,bn=16,bk=64,vec=4,lanerows=1");
    expect_reject(nt, GV "threads=64,bm=16,bn=192,bk=32,vec=4,lanerows=3",
                  "plan: lanerows=3 is not 0, 1, 2 or 4");
    expect_reject(nt, GV "threads=64,bm=16,bn=64,bk=32,vec=4,lanerows=2",
                  "lanerows=2 gives each of the 64 threads 2 rows: bn=64 must be threads x lanerows = 128");
    expect_reject(gv, GV "threads=64,bm=16,bn=128,vec=4,lanerows=2",
                  "lanerows=2 needs the big operand B contiguous along k (op T); it is contiguous along n");
    expect_reject(nt, GV "threads=64,bm=16,bn=128,bk=30,vec=4,lanerows=2",
                  "vec=4 needs bk=30 to be a multiple of 4");
    expect_reject(nt, GV "threads=64,bm=16,bn=128,bk=64,vec=4,lanerows=2",
                  "lanerows=2 with bk=64 holds 2 x 128 row values and 2 sums per thread: an "
                  "estimated 282 registers exceed 255");
    {
      /* the register estimate keeps bk <= 115, the two staged blocks within
       * 15 KiB: a smaller target */
      tsr__gpu_target small = tsr__target_sm90;
      small.smem_block_optin = 8 * 1024 - 4;
      tsr_problem nt16 = mkprob((prob_spec){.m = 16, .n = 4096, .k = 4096, .opb = 'T'});
      expect_reject_on(&small, nt16, GV "threads=64,bm=16,bn=64,bk=64,vec=4,lanerows=1",
                       "shared memory 8.0 KiB (8192 bytes: 2 buffers of bk=64 x 16 short values)");
      small.smem_block_optin = 8 * 1024;
      expect_accept_on(&small, nt16, GV "threads=64,bm=16,bn=64,bk=64,vec=4,lanerows=1");
    }
    expect_reject(big, "lanerows=1", "lanerows=1 is unused by mma=ffma and must be 0");
    gv.precision = TSR_PREC_FP32X3;
    expect_reject(gv, GV "threads=64,bm=16,bn=128",
                  "mma=gemv runs precision strict, but the problem asks for fp32x3");
#undef GV
  }
  {
    /* mma=wgmma-s8 (the Ozaki family): its fields, each rejection one line */
#define OZB "mma=wgmma-s8,tm=1,tn=1,pad=0,bm=256,wm=128,"
#define OZ1 "split=producer-bulk,vec=4,bn=128,wn=128,"
    tsr_problem oz = P(4096, 4096, 4096);
    oz.precision = TSR_PREC_OZAKI;
    expect_accept_on(SM90, oz, OZB OZ1 "bk=64,stages=6,moduli=8");
    expect_reject(oz, OZB OZ1 "bk=64,stages=6,moduli=2", "moduli=2; mma=wgmma-s8 takes 3 to 12 moduli");
    expect_reject(oz, OZB OZ1 "bk=64,stages=6,moduli=13", "moduli=13; mma=wgmma-s8 takes 3 to 12 moduli");
    expect_reject(oz, OZB "split=producer-bulk,vec=2,bn=128,wn=128,bk=64,stages=6,moduli=8",
                  "vec=2 is unused by mma=wgmma-s8 and must be 4");
    expect_reject(oz, OZB OZ1 "bk=64,stages=6,moduli=8,acc=chain", "acc is unused by mma=wgmma-s8 and must be step");
    expect_reject(oz, OZB "split=producer-pack,vec=4,bn=128,wn=128,bk=64,stages=6,moduli=8",
                  "runs split=producer-bulk");
    expect_reject(oz, OZB OZ1 "bk=48,stages=6,moduli=8", "bk=48 is not a multiple of 32");
    expect_reject(oz, OZB "split=producer-bulk,vec=4,bn=120,wn=120,bk=64,stages=6,moduli=8",
                  "wn=120 is not a multiple of 16");
    expect_reject(oz, OZB OZ1 "bk=128,stages=8,moduli=8",
                  "INT8 planes per stage + a bm x (bn + 16) staging tile");
    expect_reject(P(64, 64, 200000), OZB OZ1 "bk=64,stages=6,moduli=8", "k=200000 exceeds 131071");
    expect_reject(P(4096, 4096, 131071), OZB OZ1 "bk=64,stages=6,moduli=3",
                  "moduli=3 leaves 3 bits per operand");
    tsr_problem ozx = P(4096, 4096, 4096);
    ozx.precision = TSR_PREC_FP32X3;
    expect_reject(ozx, OZB OZ1 "bk=64,stages=6,moduli=8",
                  "mma=wgmma-s8 runs precision ozaki, but the problem asks for fp32x3");
    tsr__gpu_target sm80 = tsr__target_sm90;
    sm80.cc = 80;
    expect_reject_on(&sm80, oz, OZB OZ1 "bk=64,stages=6,moduli=8",
                     "mma=wgmma-s8 needs sm_90a (wgmma); the target is sm_80");
    expect_reject(big, "moduli=8", "moduli=8 is unused by mma=ffma and must be 0");
    expect_accept_on(SM90, oz, OZB OZ1 "bk=64,stages=6,moduli=8,gstride=64");
    expect_reject(oz, OZB OZ1 "bk=64,stages=6,moduli=8,gstride=65",
                  "gstride=65; the guard's K stride is 0 to 64");
    expect_reject(big, "gstride=4", "gstride=4 is unused by mma=ffma and must be 0");
    expect_accept_on(SM90, oz, OZB OZ1 "bk=64,stages=6,moduli=8,rvec=4");
    expect_reject(oz, OZB OZ1 "bk=64,stages=6,moduli=8,rvec=2",
                  "rvec=2; the reconstruction takes 1 or 4 outputs per thread");
    expect_reject(big, "rvec=4", "rvec=4 is unused by mma=ffma and must be 0");
#undef OZ1
#undef OZB
  }
  expect_reject(big, "mma=tf32x3", "tm=4 is unused by the tensor-core families");
  expect_reject(big, "acc=chain", "acc=chain is unused by mma=ffma");
  expect_reject(big, "kfrag=b", "kfrag=b needs B contiguous along k (op T) or packed (pack=b)");
  expect_reject(big, "kfrag=ab,a=view,stages=1", "kfrag=ab reads A from shared memory; a=view has none");
  expect_reject(big, "kfrag=a,pad=2", "kfrag=a needs bk=8 and the shared A row bk+pad=10 floats");
  expect_reject(big, "kfrag=a,bk=6", "kfrag=a needs bk=6");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,kfrag=a", "kfrag is unused by mma=tf32x3 and must be none");
  expect_reject(big, "kloop=5", "kloop=5 is not 0, 1, 2, 3 or 4");
  expect_reject(big, "kloop=1,stages=3,kunroll=2", "kunroll=2 is not 0 or 1");
  expect_reject(big, "kloop=3,stages=3,kunroll=1", "kunroll=1 unrolls the kloop=1 or kloop=2 loop, not kloop=3");
  expect_reject(big, "kunroll=1", "kunroll=1 unrolls the kloop=1 or kloop=2 loop, not kloop=0");
  expect_reject(big, "kloop=1,stages=1", "kloop=1 needs a cp.async ring (stages >= 2), not stages=1");
  /* tail slices (tailk, wave) and the FFMA order (forder): FFMA only */
  expect_accept_on(SM90, big, "tailk=5,wave=396,forder=1");
  expect_reject(big, "tailk=1,wave=396", "tailk=1 is not 0 (off) or 2..64 slices");
  expect_reject(big, "tailk=65,wave=396", "tailk=65 is not 0 (off) or 2..64 slices");
  expect_reject(big, "tailk=3", "tailk=3 needs wave (the CTAs resident at once: SMs x blocks per SM), not wave=0");
  expect_reject(big, "wave=396", "wave=396 is used only with tailk and must be 0 without it");
  expect_reject(big, "tailk=3,wave=396,splitk=2", "tailk=3 slices the last wave's tiles; it needs splitk=1, not splitk=2");
  expect_reject(P(4096, 4096, 16), "bk=16,tailk=3,wave=396", "tailk=3 exceeds the 1 K blocks (k=16, bk=16)");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,tailk=2,wave=9", "tailk=2 is unused by mma=tf32x3 and must be 0 (FFMA tiles only)");
  expect_reject(big, "forder=4097", "forder=4097 is not 0..4096");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,forder=1", "forder=1 is unused by mma=tf32x3 and must be 0 (FFMA only)");
  expect_reject(mkprob((prob_spec){.m = 256, .n = 256, .k = 256, .batch = 4}), "tailk=2,wave=3",
                "tailk=2 needs one problem (batch 1), not batch=4");
  /* mma=ffma, split=producer: a copying warpgroup beside 4 multiplying warps */
#define FFP "bk=8,stages=3,vec=4,pad=4,split=producer,"
#define FFG "bm=128,bn=128,wm=64,wn=64,tm=8,tn=16,"
  expect_reject(big, FFG FFP "kloop=0", "split=producer with mma=ffma needs kloop=1, 2 or 3");
  expect_reject(big, FFG FFP "kloop=4", "needs kloop=1, 2 or 3 (the producer's copies from running pointers; 3: two fragment sets in the consumers), not kloop=4");
  expect_accept_on(SM90, big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,kunroll=1");
  expect_reject(big, FFG FFP "kloop=1,kunroll=1,kwait=1",
                "kunroll=1 with mma=ffma unrolls the consumers' loop of split=producer or producer-tma with kwait=0, not split=producer with kwait=1");
  expect_reject(big, FFG FFP "kloop=1,minblocks=4", "runs 2 (minblocks=0 or 2) or 3 blocks per SM (setmaxnreg splits the registers of that count), not minblocks=4");
  expect_reject(big, FFG FFP "kloop=2,minblocks=3", "estimated 192 registers per consumer thread exceed the 128 that split=producer leaves them at 3 blocks per SM");
  expect_accept_on(SM90, big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3");
  expect_reject(big, FFG FFP "kloop=1,a=view", "split=producer with mma=ffma needs a=staged and b=staged");
  expect_reject(big, "bm=128,bn=128,wm=32,wn=64,tm=4,tn=16," FFP "kloop=1",
                "split=producer with mma=ffma needs 4 warps (bm/wm x bn/wn = 4); this plan has 4x2");
  expect_reject(big, "bm=128,bn=160,wm=64,wn=80,tm=8,tn=20," FFP "kloop=2",
                "estimated 232 registers per consumer thread exceed the 216");
  /* split=producer-tma: one producer warp, TMA boxes of [k][x] rows */
#define FFT "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,split=producer-tma,"
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a");
  expect_accept_on(SM90, P(4000, 4000, 3998), FFT "kloop=2,minblocks=3,pack=a"); /* M, N, K tails: TMA fills zeros */
  expect_accept_on(SM90, P(4095, 4097, 4093), FFT "kloop=2,minblocks=3,pack=ab"); /* B rows of 4097 floats: packed */
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=none", "split=producer-tma copies [k][x] rows, but A is contiguous along k: use pack=a (the prologue's [k][x] copy) or kfrag=a (boxes of [x][k] rows)");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kfrag=b", "kfrag=b needs B contiguous along k (op T) or packed (pack=b)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=4,kloop=2,minblocks=3,split=producer-tma,kfrag=a",
                "split=producer-tma lands dense boxes (shared rows of bk floats): pad=4 must be 0");
  expect_accept_on(SM90, P(4000, 4000, 3996), FFT "kloop=2,minblocks=3,pack=none,kfrag=a"); /* [m][k] boxes: zeros past M, K */
  expect_reject(P(4096, 4096, 4094), "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=1,pad=0,kloop=2,minblocks=3,split=producer-tma,kfrag=a,pack=none",
                "split=producer-tma needs 16-byte rows: lda=4094 and bk=16 must be multiples of 4");
  expect_reject(mkprob((prob_spec){.m = 256, .n = 256, .k = 256, .batch = 2, .opa = 'N', .stride_pad = 1}),
                "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=1,pad=0,kloop=2,minblocks=3,split=producer-tma,kfrag=a,pack=none",
                "split=producer-tma needs whole batch items 16-byte apart: stride_a=65537 must be a multiple of 4 and at least 65536 (m x lda)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=4,kloop=2,minblocks=3,split=producer-tma,pack=a",
                "split=producer-tma lands dense boxes (shared rows of bm, bn floats): pad=4 must be 0");
  expect_reject(P(4096, 4094, 4096), FFT "kloop=2,minblocks=3,pack=a", "vec=4 needs ldb=4094 to be a multiple of 4");
  expect_reject(P(4096, 4094, 4096), "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=1,pad=0,kloop=2,minblocks=3,split=producer-tma,pack=a", "split=producer-tma needs 16-byte rows: ldb=4094 and bn=128 must be multiples of 4");
  expect_reject(mkprob((prob_spec){.m = 256, .n = 256, .k = 256, .batch = 2, .opa = 'T', .stride_pad = 1}),
                "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=1,pad=0,kloop=2,minblocks=3,split=producer-tma",
                "split=producer-tma needs whole batch items 16-byte apart: stride_a=65537 must be a multiple of 4 and at least 65536 (k x lda)");
  expect_reject(big, "bm=64,bn=4,wm=16,wn=4,tm=2,tn=1,bk=1,stages=4,vec=1,pad=0,kloop=2,minblocks=3,split=producer-tma,pack=a",
                "split=producer-tma needs 128-byte aligned stages: B's stage of 4 floats (bk=1 x 4) is not a multiple of 32 floats");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,pad=0,split=producer-tma", "split=producer-tma is the FFMA producer's (mma=ffma), not mma=tf32x3's");
  expect_reject(big, FFT "kloop=2,pack=a,minblocks=5", "split=producer-tma with mma=ffma runs 2 (minblocks=0 or 2), 3 or 4 blocks per SM (its registers are compiled for that count; at 4 a producer warpgroup gives its surplus to the consumers), not minblocks=5");
  expect_reject(big, FFT "minblocks=3,pack=a,kloop=0", "split=producer-tma with mma=ffma needs kloop=1, 2 or 3");
  /* pelect: the TMA producer warp only */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,pelect=1");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,pelect=2", "pelect=2 is not 0 or 1");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,pelect=1",
                "pelect=1 elects the copying lane of the TMA producer warp (mma=ffma, split=producer-tma)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a,pelect=1",
                "pelect=1 elects the copying lane of the TMA producer warp");
  expect_reject(big, "kloop=2,pelect=1", "pelect=1 elects the copying lane of the TMA producer warp");
  /* krel: the TMA producer ring's consumers, kloop 1-2, without kunroll or kwait */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,krel=1");
  expect_accept_on(SM90, big, FFT "kloop=1,minblocks=3,pack=a,pelect=1,krel=1");
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,krel=2");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,krel=3", "krel=3 is not 0, 1 or 2");
  expect_reject(big, FFT "kloop=3,minblocks=3,pack=a,krel=1",
                "krel=1 frees the TMA producer ring's slots after the block's last shared loads "
                "(mma=ffma, split=producer-tma, kloop 1 or 2, kunroll=0, kwait=0)");
  expect_reject(big, FFT "kloop=3,minblocks=3,pack=a,krel=2",
                "krel=2 frees the TMA producer ring's slots in pairs (mma=ffma, split=producer-tma, "
                "kloop 1 or 2, kunroll=0, kwait=0)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,krel=2",
                "krel=2 frees the TMA producer ring's slots in pairs");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kunroll=1,krel=1", "krel=1 frees the TMA producer ring's slots");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kwait=1,krel=1", "krel=1 frees the TMA producer ring's slots");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,krel=1",
                "krel=1 frees the TMA producer ring's slots");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a,krel=1",
                "krel=1 frees the TMA producer ring's slots");
  expect_reject(big, "kloop=2,krel=1", "krel=1 frees the TMA producer ring's slots");
  /* kinner: the FFMA block function's K steps as an inner loop of whole trips */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,krel=1,kinner=8");
  expect_accept_on(SM90, big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=32,stages=3,vec=4,pad=0,split=producer-tma,"
                              "kloop=2,minblocks=3,pack=a,krel=1,kinner=16");
  expect_accept_on(SM90, big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,kinner=4");
  expect_accept_on(SM90, big, "stages=2,a=view,kinner=4");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kinner=16",
                "kinner=16 does not divide bk=16 into two or more trips of the K block's inner loop "
                "(0 writes the block out)");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kinner=6", "kinner=6 does not divide bk=16");
  expect_reject(big, FFT "kloop=3,minblocks=3,pack=a,kinner=8",
                "kinner=8 splits the K block of the FFMA block function (kfrag=none, kloop 0-2); "
                "kloop=3-4's fragment ring and kfrag's groups of 4 steps write the block out (kinner=0)");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=none,kfrag=a,kinner=8", "kinner=8 splits the K block");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,kinner=4", "kinner=4 is unused by mma=tf32x3 and must be 0 (FFMA only)");
  /* lazy: A packed transposed in the TMA producer warp, in pieces of 1..64 K blocks */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,krel=1,lazy=4");
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=ab,lazy=64");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,lazy=65",
                "lazy=65 is not 0 (a prologue packs A) or 1..64 (K blocks a claimed piece of A)");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,pelect=1,lazy=2",
                "lazy=2 packs A in the TMA producer warp (mma=ffma, split=producer-tma, pelect=0)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8," FFP "kloop=2,minblocks=3,pack=a,lazy=2",
                "lazy=2 packs A in the TMA producer warp");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,pack=a,lazy=2", "lazy=2 packs A in the TMA producer warp");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=b,kfrag=a,lazy=2",
                "lazy=2 packs A where the plan packs it transposed (pack=a or ab, op(A)=N) with bm a "
                "multiple of 32; here pack=b, op(A)=N, bm=64");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=none,kfrag=a,lazy=2", "here pack=none, op(A)=N");
  expect_reject(mkprob((prob_spec){.m = 4096, .n = 4096, .k = 4096, .opa = 'T', .opb = 'N'}),
                FFT "kloop=2,minblocks=3,pack=a,lazy=2", "here pack=a, op(A)=T, bm=64");
  /* lazyk: lazy's pieces packed by a kernel of 1..TSR__LAZYK_MAX CTAs beside the main kernel */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,krel=1,lazy=4,lazyk=132");
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=ab,lazy=1,lazyk=1024");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,lazy=4,lazyk=1025",
                "lazyk=1025 is not 0 (the producer warps pack A's pieces) or 1..1024 (CTAs of a "
                "pack kernel beside the main kernel)");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,lazyk=8",
                "lazyk=8 packs lazy=P's pieces of A; here lazy=0");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,pack=a,lazyk=2", "lazyk=2 packs lazy=P's pieces of A");
  /* kunroll: the producer rings' consumers, not split=tma's rotating refill */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,kunroll=1");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a,kunroll=1",
                "unrolls the consumers' loop of split=producer or producer-tma with kwait=0, not split=tma with kwait=0");
  /* kwait: the FFMA rings' consumers with kloop 1 or 2 */
  expect_accept_on(SM90, big, FFT "kloop=2,minblocks=3,pack=a,kwait=1");
  expect_reject(big, FFT "kloop=2,minblocks=3,pack=a,kwait=2", "kwait=2 is not 0 or 1");
  expect_reject(big, FFT "kloop=3,minblocks=3,pack=a,kwait=1",
                "kwait=1 tests the full barriers of an FFMA producer ring (mma=ffma, split=producer, producer-tma or tma) with kloop=1 or 2");
  expect_reject(big, "kloop=2,kwait=1", "kwait=1 tests the full barriers of an FFMA producer ring");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,kwait=1", "kwait=1 tests the full barriers of an FFMA producer ring");
#undef FFT
  /* split=tma: the same boxes, no producer: NT threads, up to 4 blocks an SM */
#define FFS "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,"
  expect_accept_on(SM90, big, FFS "kloop=2,minblocks=4,pack=a");
  expect_accept_on(SM90, big, FFS "kloop=3,minblocks=3,pack=a");
  expect_accept_on(SM90, P(4095, 4097, 4093), FFS "kloop=2,minblocks=4,pack=ab");
  expect_reject(big, FFS "kloop=2,minblocks=4,pack=none", "split=tma copies [k][x] rows, but A is contiguous along k: use pack=a (the prologue's [k][x] copy)");
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=4,kloop=2,minblocks=4,split=tma,pack=a",
                "split=tma lands dense boxes (shared rows of bm, bn floats): pad=4 must be 0");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,pad=0,split=tma", "split=tma is the FFMA kernel's TMA ring (mma=ffma), not mma=tf32x3's");
  expect_reject(big, FFS "kloop=2,pack=a,minblocks=5", "split=tma with mma=ffma runs 2 (minblocks=0 or 2), 3 or 4 blocks per SM (its registers are compiled for that count), not minblocks=5");
  expect_reject(big, FFS "minblocks=4,pack=a,kloop=0", "split=tma with mma=ffma needs kloop=1, 2 or 3");
  /* 4 blocks x (6 stages x 12 KiB + 48 bytes of mbarriers + 1 KiB reserved) exceed 228 KiB */
  expect_reject(big, "bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=6,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a",
                "split=tma with mma=ffma runs 4 blocks per SM: 4 x (73776 + 1024) bytes of shared memory or 4 x 128 threads exceed the SM's");
  /* registers: accumulators + one fragment set + 8 (no copy state); 16x8
   * a thread (128 accumulators) fits 3 blocks' 168, not 4 blocks' 128 */
  expect_reject(big, "bm=128,bn=128,wm=64,wn=64,tm=8,tn=16,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a",
                "estimated 160 registers per consumer thread exceed the 128 that split=tma leaves them at 4 blocks per SM");
  expect_accept_on(SM90, big, "bm=128,bn=128,wm=64,wn=64,tm=8,tn=16,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=3,pack=a");
  /* 12x8 a thread: 124 of 128 at 4 blocks (3 stages: 4 x 56 KiB would not fit) */
  expect_accept_on(SM90, big, "bm=96,bn=128,wm=48,wn=64,tm=12,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=3,pack=a");
  expect_accept_on(SM90, big, "bm=96,bn=128,wm=48,wn=64,tm=12,tn=8,bk=16,stages=3,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a");
  expect_reject(big, "bm=96,bn=128,wm=48,wn=64,tm=12,tn=8,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=4,pack=a",
                "split=tma with mma=ffma runs 4 blocks per SM: 4 x (57376 + 1024) bytes of shared memory");
  /* 12x12 (144 accumulators) exceeds 3 blocks' 168 */
  expect_reject(big, "bm=96,bn=192,wm=48,wn=96,tm=12,tn=12,bk=16,stages=4,vec=4,pad=0,split=tma,kloop=2,minblocks=3,pack=a",
                "estimated 176 registers per consumer thread exceed the 168 that split=tma leaves them at 3 blocks per SM");
#undef FFS
#undef FFG
#undef FFP
  expect_reject(big, "kloop=3,stages=3,a=view", "kloop=3 needs both operands staged as [k][x] rows");
  expect_reject(big, "kloop=3,stages=3,kfrag=a", "kloop=3 needs both operands staged as [k][x] rows");
  expect_reject(big, "kloop=3,stages=3,bk=5", "kloop=3 needs an even bk (two fragment sets), not bk=5");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,kloop=1,stages=2", "kloop=1 is unused by mma=tf32x3");
  expect_reject(big, "kloop=1,stages=2,bm=48,wm=48,tm=12,bk=12",
                "kloop=1 needs the 32 threads to copy A in whole passes of rows (48 rows of 12 copies)");
  {
    tsr_problem strict = big;
    strict.precision = TSR_PREC_STRICT;
    expect_reject(strict, "mma=tf32x3,tm=1,tn=1", "mma=tf32x3 runs precision fp32x3, but the problem asks for strict");
    expect_reject(big, "mma=tf32,tm=1,tn=1", "mma=tf32 is below the FP32 contract");
    tsr_problem x3 = big;
    x3.precision = TSR_PREC_FP32X3;
    expect_reject(x3, "bm=32", "mma=ffma runs precision strict, but the problem asks for fp32x3");
  }
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,wm=24,bm=48", "wm=24 is not a multiple of 16");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,bk=12", "bk=12 is not a multiple of 8");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,a=view", "a=view is not supported");
  expect_reject(big, "vec=4,pad=1", "pad=1 makes the shared B row 33 floats");
  tsr_problem odd = P(128, 128, 61);
  expect_reject(odd, "vec=4", "vec=4 needs lda=61 to be a multiple of 4");
  expect_reject(odd, "splitk=9", "splitk=9 exceeds the 8 K blocks (k=61, bk=8)");
  tsr_problem tb = mkprob((prob_spec){.m = 64, .n = 64, .k = 64, .opb = 'T', .ldb_pad = 2});
  expect_reject(tb, "vec=4", "vec=4 needs ldb=66");
  tsr_problem bt = mkprob((prob_spec){.m = 64, .n = 64, .k = 64, .batch = 70000});
  expect_reject(bt, "stages=1", "batch=70000 exceeds the gridDim.z limit 65535");
  expect_reject(big, "splitk=65536", "splitk=65536 exceeds the gridDim.y limit 65535");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=32,wm=64,wn=64,stages=4,pad=0,minblocks=2",
                "minblocks=2 needs 2 x (131072 + 1024) = 264192 bytes of shared memory, more than the SM's 233472");
  expect_reject(big, "bm=128,bn=128,wm=16,wn=32,minblocks=3", "minblocks=3 x 1024 threads exceed");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=16,wm=64,wn=64,stages=2,minblocks=4",
                "minblocks=4 caps registers at 128 per thread, below the 152");
  tsr_problem tall = P(2147483640, 1, 1);
  expect_reject(tall, "bm=32", "m=2147483640 exceeds the int32 coordinate range");
  /* wgmma: one line naming the field, the value and the limit */
  wg_check(SM90, big, "", NULL);
  wg_check(SM90, big, "wm=32,bm=64", "wm=32 is not a multiple of 64");
  wg_check(SM90, big, "bm=192", "bm=192 over wm=64 gives 3 warpgroups; mma=wgmma-tf32x3 runs 1 or 2");
  wg_check(SM90, big, "bm=96", "bm=96 is not a multiple of wm=64");
  wg_check(SM90, big, "wn=12", "wn=12 is not a multiple of 8 up to 256");
  wg_check(SM90, big, "bn=512,wn=256", "bn=512 exceeds 256");
  wg_check(SM90, big, "bn=96", "bn=96 is not a multiple of wn=128");
  wg_check(SM90, big, "bk=12", "bk=12 is not a multiple of 8");
  /* acc=step promotes every 8-deep step: bk no longer lengthens a chain */
  wg_check(SM90, big, "bk=128,stages=2,bm=64,bn=32,wn=32", NULL);
  wg_check(SM90, big, "bk=128,acc=chain,stages=2,bm=64,bn=32,wn=32", NULL);
  wg_check(SM90, big, "stages=1", "stages=1; mma=wgmma-tf32x3 needs stages >= 2");
  wg_check(SM90, big, "pad=4", "pad=4; mma=wgmma-tf32x3 uses the unpadded core-matrix layout");
  wg_check(SM90, big, "split=pack", "split=pack is not supported by mma=wgmma-tf32x3");
  wg_check(SM90, big, "tm=2", "tm=2 is unused by the tensor-core families");
  wg_check(SM90, big, "b=view", "b=view is not supported");
  wg_check(SM90, big, "bm=256,wm=128,bn=256,wn=128", "estimated 360 registers per thread (accumulators 2 x 256 / 2 + partial sum 128 / 2 + 40) exceed 255");
  wg_check(SM90, big, "stages=4,bn=256,bk=64,wn=64", "exceeds the 227.0 KiB limit");
  /* the producer warpgroup (split=producer, producer-reg) */
  wg_check(SM90, big, "split=producer,bk=16", NULL);
  wg_check(SM90, big, "split=producer-reg,bk=8,stages=6", NULL);
  wg_check(SM90, big, "split=producer,bk=32",
           "exceeds the 227.0 KiB limit (bm=128,bn=128,bk=32,stages=3,pad=0,split=producer: TF32 planes per stage + raw blocks)");
  wg_check(SM90, big, "split=producer-reg,bk=16",
           "split=producer-reg holds two K blocks in the producer's registers: (bm=128 + bn=128) x bk=16 is 32 floats per producer thread and block, more than 24");
  wg_check(SM90, big, "split=producer,bk=16,bn=256,wn=256",
           "estimated 272 registers per thread (accumulators 1 x 256 / 2 + partial sum 256 / 2 + 16) "
           "exceed 208 (a consumer's share beside the producer warpgroup)");
  wg_check(SM90, big, "split=producer,bk=16,minblocks=2", "minblocks=2; split=producer runs one block per SM");
  wg_check(SM90, big, "split=producer,bk=16,bm=256,wm=128,vec=1",
           "split=producer copies (bm=256 + bn=128) x bk=16 / vec=1 = 48 values per producer "
           "thread and stage, more than 32");
  wg_check(SM90, big, "split=producer,bk=16,bm=256,wm=128,vec=4", NULL);
  wg_check(SM90, big, "split=producer-pack,bk=8,bm=256,wm=128,vec=4,stages=8", NULL);
  wg_check(SM90, big, "split=producer-pack,bk=16,bm=256,wm=128,vec=4,stages=4",
           "split=producer-pack copies 2 planes x (bm=256 + bn=128) x bk=16 / vec=4 = 24 values per "
           "producer thread and stage, more than 16");
  /* producer-bulk: one thread's bulk copies, whatever the tile; consumers get 232 registers */
  wg_check(SM90, big, "split=producer-bulk,bk=16,bm=256,wm=128,vec=4,stages=4", NULL);
  wg_check(SM90, big, "split=producer-bulk,bk=32,bm=256,wm=128,wn=64,stages=2", NULL);
  wg_check(SM90, big, "split=producer-bulk,bk=16,bm=256,wm=128,stages=5",
           "exceeds the 227.0 KiB limit (bm=256,bn=128,bk=16,stages=5,pad=0,split=producer-bulk: TF32 planes per stage)");
  wg_check(SM90, big, "split=producer-bulk,bk=16,bn=256,wn=256",
           "estimated 272 registers per thread (accumulators 1 x 256 / 2 + partial sum 256 / 2 + 16) "
           "exceed 232 (a consumer's share beside the producer warpgroup)");
  wg_check(SM90, big, "split=producer-bulk,bk=16,minblocks=2", "minblocks=2; split=producer-bulk runs one block per SM");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,split=producer",
                "split=producer is only supported by the wgmma families; mma=tf32x3 splits");
  expect_reject(big, "mma=wgmma-tf32,tm=1,tn=1,pad=0,bm=64,bn=64,wm=64,wn=64,stages=2",
                "mma=wgmma-tf32 is below the FP32 contract");
  {
    tsr_problem strict = big;
    strict.precision = TSR_PREC_STRICT;
    wg_check(SM90, strict, "", "mma=wgmma-tf32x3 runs precision fp32x3, but the problem asks for strict");
    tsr__gpu_target sm89 = tsr__target_sm90, sm100 = tsr__target_sm90;
    sm89.cc = 89;
    sm100.cc = 100;
    wg_check(&sm89, big, "", "mma=wgmma-tf32x3 needs sm_90a (wgmma); the target is sm_89");
    wg_check(&sm100, big, "", "needs sm_90a (wgmma); the target is sm_100");
  }
}

/* mma=wgmma-s8, rvec=4: the four-output reconstruction, a thread per quad
 * of the residue planes' rows (N rounded up to 16), also where N % 4 != 0;
 * rvec=1's a thread per output; the guard's stride reaches the main kernel's
 * K loops. */
static void test_ozaki_rvec_gstride(void **state) {
  (void)state;
  tsr_plan pl = mkplan("mma=wgmma-s8,split=producer-bulk,tm=1,tn=1,pad=0,vec=4,bm=128,bn=64,bk=32,"
                       "wm=64,wn=64,stages=3,moduli=8,rvec=4,gstride=3");
  tsr_problem p4 = P(256, 190, 512);
  p4.precision = TSR_PREC_OZAKI;
  tsr__kernel_src k4, k1;
  emit_ok(&p4, &pl, &k4);
  assert_non_null(strstr(k4.source, "four outputs of one row per thread (rvec=4)"));
  assert_int_equal(k4.reduce_grid[0], (256 * 192 / 4 + 255) / 256);
  pl.rvec = 0;
  emit_ok(&p4, &pl, &k1);
  assert_null(strstr(k1.source, "rvec=4)"));
  assert_int_equal(k1.reduce_grid[0], (256 * 190 + 255) / 256);
  assert_non_null(strstr(k4.source, "static constexpr int GSTRIDE = 3;"));
  assert_non_null(strstr(k4.source, "kb += ks"));
  tsr__kernel_src_free(&k4);
  tsr__kernel_src_free(&k1);
}

/* wgmma: the source says it needs sm_90a (the backend's NVRTC option follows
 * it), an x-contiguous operand is packed (normalized: the source shows the
 * pack that runs), split and fences are there, the launch is 128 threads
 * per warpgroup. */
static void test_wgmma_contract(void **state) {
  const char *text = "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=64,bk=16,wm=64,wn=32,stages=3,vec=4";
  tsr_problem nt = mkprob((prob_spec){.m = 256, .n = 256, .k = 256, .opb = 'T'});
  tsr_problem nn = P(256, 256, 256);
  tsr_plan pl = mkplan(text);
  tsr__kernel_src k, k2;
  emit_ok(&nt, &pl, &k);
  assert_non_null(strstr(k.source, "\n// tsr:arch-specific\n"));
  assert_non_null(strstr(k.source, "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32"));
  assert_non_null(strstr(k.source, "fence.proxy.async.shared::cta"));
  assert_non_null(strstr(k.source, "tsr_split_stage("));
  assert_non_null(strstr(k.source, "pack=none"));
  assert_int_equal(k.npre, 0);
  assert_int_equal(k.block[0], 256);
  /* 3 stages x (A big + small 128 x 16, B big + small 64 x 16) floats */
  assert_int_equal(k.smem_bytes, 3 * (2 * 128 * 16 + 2 * 64 * 16) * 4);
  /* NN: B (n-contiguous) is transposed by the prologue, whatever pack says */
  emit_ok(&nn, &pl, &k2);
  assert_non_null(strstr(k2.source, "pack=b,"));
  assert_int_equal(k2.npre, 1);
  assert_string_equal(k2.pre[0].name, "tsr_gemm_pack_b");
  tsr_plan pb = pl;
  pb.pack = TSR_PACK_B;
  tsr__kernel_src k3;
  emit_ok(&nn, &pb, &k3);
  assert_string_equal(k2.sha256, k3.sha256);
  tsr__kernel_src_free(&k3);
  /* the mma.sync families stay portable */
  tsr_plan ms = mkplan("mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2");
  emit_ok(&nt, &ms, &k3);
  assert_null(strstr(k3.source, "tsr:arch-specific"));
  assert_null(strstr(k3.source, "wgmma"));
  tsr__kernel_src_free(&k3);
  /* wgmma-tf32: no small tiles */
  tsr_problem t = nt;
  t.precision = TSR_PREC_TF32;
  tsr_plan p1 = mkplan("mma=wgmma-tf32,tm=1,tn=1,pad=0,bm=128,bn=64,bk=16,wm=64,wn=32,stages=3,vec=4");
  emit_ok(&t, &p1, &k3);
  assert_int_equal(k3.smem_bytes, k.smem_bytes / 2);
  tsr__kernel_src_free(&k3);
  /* the plan text round-trips */
  char buf[512];
  tsr_plan_format(&pl, buf, sizeof buf);
  assert_non_null(strstr(buf, "mma=wgmma-tf32x3"));
  tsr_plan q = mkplan("stages=1");
  char msg[256];
  assert_int_equal(tsr_plan_parse(buf, &q, msg, sizeof msg), TSR_OK);
  assert_true(tsr_plan_equal(&pl, &q));
  assert_int_equal(tsr_plan_parse("mma=wgmma", &q, msg, sizeof msg), TSR_ERR_PARSE);
  assert_non_null(strstr(msg, "mma=wgmma is not ffma, tf32x3, tf32, wgmma-tf32x3, wgmma-tf32, gemv or wgmma-s8"));
  tsr__kernel_src_free(&k);
  tsr__kernel_src_free(&k2);
  /* split=producer with two consumers: 384 threads, and setmaxnreg only
   * redistributes the CTA's 168 x 384 registers (more blocks forever) */
  const char *const prods[] = {"split=producer,bk=16", "split=producer-reg,bk=8,stages=6"};
  for (int i = 0; i < 2; i++) {
    tsr_plan pp = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=256,bn=128,wm=128,wn=128,stages=3,vec=4");
    assert_int_equal(tsr_plan_parse(prods[i], &pp, msg, sizeof msg), TSR_OK);
    tsr_problem big = P(4096, 4096, 4096);
    emit_ok(&big, &pp, &k3);
    assert_int_equal(k3.block[0], 384);
    const char *dec = strstr(k3.source, "setmaxnreg.dec.sync.aligned.u32 ");
    const char *inc = strstr(k3.source, "setmaxnreg.inc.sync.aligned.u32 ");
    assert_non_null(dec);
    assert_non_null(inc);
    int pr = atoi(dec + strlen("setmaxnreg.dec.sync.aligned.u32 "));
    int cr = atoi(inc + strlen("setmaxnreg.inc.sync.aligned.u32 "));
    assert_true(pr >= 24 && pr % 8 == 0 && cr <= 256 && cr % 8 == 0);
    assert_true(128 * pr + 256 * cr <= 168 * 384);
    assert_non_null(strstr(k3.source, "__launch_bounds__(NT)"));
    tsr__kernel_src_free(&k3);
  }
}

/* beta == 0 must never read C: the store path of a beta == 0 source has no
 * load of C (the emulated runs also start C as NaN). */
static void test_beta_zero_source(void **state) {
  tsr_problem p0 = P(100, 100, 40), p1 = mkprob((prob_spec){.m = 100, .n = 100, .k = 40, .beta = 2});
  const char *plans[] = {"stages=2", "mma=tf32x3,tm=1,tn=1,bk=16", "splitk=3"};
  for (size_t i = 0; i < 3; i++) {
    tsr_plan pl = mkplan(plans[i]);
    tsr__kernel_src k0, k1;
    emit_ok(&p0, &pl, &k0);
    emit_ok(&p1, &pl, &k1);
    assert_null(strstr(k0.source, "beta *"));
    assert_non_null(strstr(k1.source, "beta *"));
    tsr__kernel_src_free(&k0);
    tsr__kernel_src_free(&k1);
  }
}

/* ---- default table --------------------------------------------------------- */
static const int64_t brief_shapes[][3] = {{128, 128, 61},    {32, 32, 32},     {512, 512, 512},
                                          {1024, 1024, 1024}, {1024, 1024, 1537}, {2049, 4097, 1025},
                                          {4096, 4096, 4096}, {4096, 4096, 11008}, {8192, 8192, 8192},
                                          {513, 257, 129},   {127, 193, 61}};
#define NSHAPES (sizeof brief_shapes / sizeof brief_shapes[0])

/* The tail-slice rule (plans.c tsr__emit_tail_slices): the tiles past the
 * last whole wave, when at least two whole waves ran and at most half a
 * wave is left, in wave / rest slices (2..6, each at least 16 K blocks); the
 * wave is 3 x 132 CTAs for the producer tiles, minblocks x 132 for split=tma */
static void test_tail_slice_rule(void **state) {
  (void)state;
  static const struct {
    int64_t m, n, k;
    const char *plan;
    int tailk, wave;
  } cases[] = {
      /* 2048 tiles = 5 x 396 + 68: 396 / 68 = 5 slices */
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=producer", 5, 396},
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=producer-tma", 5, 396},
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=tma", 5, 396},
      /* 4 blocks: 2048 = 3 x 528 + 464, more than half a wave left */
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=4,split=tma", 0, 0},
      /* 14336 tiles = 27 x 528 + 80: 6 slices (the cap); at 3 blocks 36 x 396 + 80: 4 */
      {8192, 14336, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=4,split=tma", 6, 528},
      {8192, 14336, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=tma", 4, 396},
      /* 96x128: 43 x 32 = 1376 = 3 x 396 + 188: 2 slices */
      {4096, 4096, 4096, "bk=16,bm=96,bn=128,wm=48,wn=64,tm=12,tn=8,minblocks=3,split=tma", 2, 396},
      /* one whole wave only (2048^3: 512 = 396 + 116) */
      {2048, 2048, 2048, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=producer", 0, 0},
      /* 5 slices of 64 K blocks would leave 12 each: 4 slices of 16 */
      {4096, 4096, 1024, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=producer", 4, 396},
      /* not the three-block producer or a TMA ring */
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=2,split=tma", 0, 0},
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=inline", 0, 0},
      {4096, 4096, 4096, "bk=16,bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,minblocks=3,split=tma,splitk=2", 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tsr_problem p = P(cases[i].m, cases[i].n, cases[i].k);
    tsr_plan pl = mkplan(cases[i].plan);
    int applied = tsr__emit_tail_slices(&p, &pl);
    if (applied != (cases[i].tailk > 0) || pl.tailk != cases[i].tailk || pl.wave != cases[i].wave)
      fail_msg("%lldx%lldx%lld [%s]: tailk=%d wave=%d (applied %d), want tailk=%d wave=%d",
               (long long)cases[i].m, (long long)cases[i].n, (long long)cases[i].k, cases[i].plan,
               pl.tailk, pl.wave, applied, cases[i].tailk, cases[i].wave);
  }
}

static void test_default_table(void **state) {
  for (size_t i = 0; i < NSHAPES; i++) {
    tsr_problem p = P(brief_shapes[i][0], brief_shapes[i][1], brief_shapes[i][2]);
    tsr_plan pl;
    tsr__emit_default_plan(&p, &pl);
    char msg[512], t[512];
    tsr_plan_format(&pl, t, sizeof t);
    if (tsr__emit_check(&p, &pl, SM90, msg, sizeof msg) != TSR_OK)
      fail_msg("default plan %s for shape %zu rejected: %s", t, i, msg);
    assert_int_equal(pl.threads, 0);
    assert_int_equal(pl.isa, TSR_ISA_AUTO);
    /* parse(format(default)) round-trips */
    tsr_plan q = mkplan("stages=1");
    assert_int_equal(tsr_plan_parse(t, &q, msg, sizeof msg), TSR_OK);
    assert_true(tsr_plan_equal(&pl, &q));
  }
  /* batched, transposed, odd leading dimensions still get a legal plan */
  tsr_problem p = mkprob((prob_spec){.m = 3000, .n = 2000, .k = 999, .batch = 3, .opa = 'T',
                                     .opb = 'T', .lda_pad = 1, .stride_pad = 3});
  tsr_plan pl;
  char msg[512];
  tsr__emit_default_plan(&p, &pl);
  if (tsr__emit_check(&p, &pl, SM90, msg, sizeof msg) != TSR_OK) fail_msg("%s", msg);
  /* both operands' rows are unaligned: both packed, read with vec=4 */
  assert_int_equal(pl.pack, TSR_PACK_AB);
  assert_int_equal(pl.vec, 4);
  /* strict 4096^3 on sm_90: the TMA producer ring, each slot freed after its
   * block's last shared loads (krel=1, session 31) */
  tsr_problem sq = P(4096, 4096, 4096);
  sq.precision = TSR_PREC_STRICT;
  tsr__emit_default_plan(&sq, &pl);
  assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_TMA);
  assert_int_equal(pl.kloop, 2);
  assert_int_equal(pl.krel, 1);
  /* pack only what is unaligned: 1024x1024x1537 NN packs A (lda=1537) only */
  tsr_problem q = P(1024, 1024, 1537);
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.pack, TSR_PACK_A);
  assert_int_equal(pl.vec, 4);
  /* the medium 128x128 split-K 2 wgmma plan: 32-deep K blocks x 3 stages
   * (H200 session 10: 0.651x cuBLAS's time against 0.689x for 16 x 6) */
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  assert_int_equal(pl.bm, 128);
  assert_int_equal(pl.bn, 128);
  assert_int_equal(pl.bk, 32);
  assert_int_equal(pl.stages, 3);
  assert_int_equal(pl.splitk, 2);
  assert_int_equal(tsr__emit_check(&q, &pl, SM90, msg, sizeof msg), TSR_OK);
  /* auto's large class at 2048 <= K <= 16384: the Ozaki family, 8 moduli
   * (25 bits per operand up to K = 16384), its prologue packing both */
  q = P(4096, 4096, 4096);
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_S8);
  assert_int_equal(pl.moduli, 8);
  assert_int_equal(pl.pack, TSR_PACK_AB);
  /* the guard's magnitudes over >= 32 of the 64-deep K blocks */
  assert_int_equal(pl.gstride, 2);
  q = P(4096, 4096, 16384);
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.moduli, 8);
  assert_int_equal(pl.gstride, 8);
  /* 63 blocks of 64: every block; 64 blocks: a stride of 2 */
  assert_int_equal(tsr__ozaki_gstride_for(4032, 64), 0);
  assert_int_equal(tsr__ozaki_gstride_for(4033, 64), 2);
  assert_int_equal(tsr__ozaki_gstride_for(4096, 64), 2);
  assert_int_equal(tsr__ozaki_gstride_for(100000, 64), 48);
  assert_int_equal(tsr__ozaki_gstride_for(131071, 64), 64);
  assert_int_equal(tsr__ozaki_gstride_for(131071, 32), 64);
  q = P(4096, 4096, 32768); /* 9 moduli would be needed: the 3xTF32 plan */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  q = P(32768, 32768, 8192); /* the Ozaki workspace would exceed 16 GiB: 3xTF32 */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  q = P(4096, 4096, 1024); /* shallow: the 3xTF32 plan (the prologue would weigh) */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  q = P(4096, 4096, 4096);
  q.precision = TSR_PREC_FP32X3; /* asked for explicitly: the 3xTF32 split */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  assert_int_equal(pl.pack, TSR_PACK_NONE);
  /* split-K planner class (plans.c pick_splitk): small outputs with long K
   * split toward ~8 CTAs per SM, each slice at least 4 K blocks; short K and
   * full grids never split; every such plan is legal */
  static const struct { int64_t m, n, k, batch; int splitk; } sk[] = {
      {1, 4096, 4096, 1, 16},  {4096, 1, 4096, 1, 1}, {64, 64, 8192, 1, 128},
      {32, 32, 16384, 1, 256}, {5, 524, 2730, 1, 42},  {128, 128, 61, 1, 1},
      {128, 128, 512, 1, 1},   {64, 2240, 64, 1, 1},   {64, 64, 64, 256, 1},
      {4096, 4096, 4096, 1, 1}};
  for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++) {
    q = mkprob((prob_spec){.m = sk[i].m, .n = sk[i].n, .k = sk[i].k, .batch = sk[i].batch});
    tsr__emit_default_plan(&q, &pl);
    if (pl.splitk != sk[i].splitk)
      fail_msg("%lldx%lldx%lld batch %lld: splitk=%d, want %d", (long long)sk[i].m,
               (long long)sk[i].n, (long long)sk[i].k, (long long)sk[i].batch, pl.splitk,
               sk[i].splitk);
    if (tsr__emit_check(&q, &pl, SM90, msg, sizeof msg) != TSR_OK) fail_msg("%s", msg);
  }
  /* skinny class, M or N <= 16: mma=gemv (auto and strict), the short side
   * covered whole; 17..32 keep the thin FFMA tiles */
  q = mkprob((prob_spec){.m = 8, .n = 4096, .k = 4096, .opb = 'T'});
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_GEMV);
  assert_int_equal(pl.bm, 16);
  assert_int_equal(pl.bn, 4); /* k-contiguous B, 3 <= M <= 8: 2 warps of 2 outputs */
  assert_int_equal(pl.threads, 64);
  assert_int_equal(pl.bk, 512);
  assert_int_equal(pl.splitk, 2); /* 2048 warps: 3 wanted, 2 divides the 8 K blocks */
  assert_int_equal(tsr__emit_check(&q, &pl, SM90, msg, sizeof msg), TSR_OK);
  {
    tsr__kernel_src k1, k2;
    emit_ok(&q, &pl, &k1);
    emit_ok(&q, &pl, &k2);
    assert_string_equal(k1.sha256, k2.sha256);
    assert_int_equal(k1.len, k2.len);
    assert_memory_equal(k1.source, k2.source, k1.len);
    assert_non_null(strstr(k1.source, "tsr_shfl_xor"));
    assert_non_null(strstr(k1.source, "tsr_gemm_reduce"));
    tsr__kernel_src_free(&k1);
    tsr__kernel_src_free(&k2);
  }
  q.precision = TSR_PREC_STRICT;
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_GEMV);
  q = P(4096, 16, 16384);
  /* B's 16 columns read across k (op N): the skinny FFMA tiles, not gemv
   * (15.6x cuBLAS's time on the H200 against 0.99x) */
  tsr__emit_default_plan(&q, &pl);
  assert_int_not_equal(pl.mma, TSR_MMA_GEMV);
  q = mkprob((prob_spec){.m = 4096, .n = 16, .k = 16384, .opb = 'T'}); /* read along k: gemv */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_GEMV);
  assert_int_equal(pl.bm, 8); /* 9 <= N <= 16: 2 warps of 4 outputs, 64-deep K blocks */
  assert_int_equal(pl.bn, 16);
  assert_int_equal(pl.threads, 64);
  assert_int_equal(pl.bk, 64);
  assert_int_equal(pl.splitk, 4); /* 1024 warps: 5 wanted, 4 divides the 256 K blocks */
  assert_int_equal(pl.lanerows, 0);
  assert_int_equal(tsr__emit_check(&q, &pl, SM90, msg, sizeof msg), TSR_OK);
  {
    /* lane per row is a plan key, not a default (H200, session 11: it won
     * only at 16x4096x4096 NT): its bk=32 plan realizes where the big
     * operand runs along k */
    tsr_plan lr = pl;
    assert_int_equal(tsr_plan_parse("lanerows=1,threads=128,bm=128,bk=32,splitk=16", &lr, msg,
                                    sizeof msg), TSR_OK);
    assert_int_equal(tsr__emit_check(&q, &lr, SM90, msg, sizeof msg), TSR_OK);
  }
  q = P(1, 4096, 4096); /* x-contiguous B: a warp per K row of 128 outputs */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.bn, 128);
  assert_int_equal(pl.vec, 4);
  /* the FFMA skinny plan stays reachable by its keys */
  {
    tsr_plan old = pl;
    assert_int_equal(tsr_plan_parse("mma=ffma,threads=0,bm=4,bn=128,bk=16,wm=4,wn=32,tm=1,tn=4,"
                                    "stages=2,pad=4,splitk=32", &old, msg, sizeof msg), TSR_OK);
    assert_int_equal(tsr__emit_check(&q, &old, SM90, msg, sizeof msg), TSR_OK);
  }
  q = mkprob((prob_spec){.m = 32, .n = 4096, .k = 4096, .opb = 'T'});
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_FFMA);
  assert_int_equal(pl.bm, 32);
  /* sm_90a: the 4096^3 default is the producer-bulk Ozaki plan (cc 90
   * only; fp32x3 asked for: the 3xTF32 producer-bulk plan), byte-identical
   * source run to run; other devices keep mma.sync. The pack prologue makes
   * every op pair, beta and unaligned rows the same main kernel, so they
   * take it too */
  q = P(4096, 4096, 4096);
  q.precision = TSR_PREC_FP32X3;
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
  assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_BULK);
  assert_int_equal(tsr__emit_check(&q, &pl, SM90, msg, sizeof msg), TSR_OK);
  q.precision = TSR_PREC_AUTO;
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_S8);
  assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_BULK);
  assert_int_equal(tsr__emit_check(&q, &pl, SM90, msg, sizeof msg), TSR_OK);
  {
    tsr_problem qo = mkprob((prob_spec){.m = 4095, .n = 4097, .k = 4093, .opa = 'T', .opb = 'T', .beta = 0.5f});
    tsr_plan po;
    tsr__emit_default_plan(&qo, &po);
    assert_int_equal(po.split, TSR_SPLIT_PRODUCER_BULK);
    assert_int_equal(tsr__emit_check(&qo, &po, SM90, msg, sizeof msg), TSR_OK);
  }
  {
    /* strict: 128x128 FFMA with running copy pointers (kloop), any op pair
     * with aligned rows, short K too (session 9); K slices of 512 or more
     * in one problem with a producer warpgroup (session 21: kloop=2's
     * constant-offset copies, 4 stages, NN from 2048 rows with A packed),
     * in 64x128x16 tiles at three CTAs an SM where whole ones fit, copied
     * as TMA boxes (session 24: pad=0, A packed for NN; session 25: NT with
     * both operands packed) */
    tsr_problem qs = strict_default(q, &pl);
    assert_int_equal(pl.mma, TSR_MMA_FFMA);
    assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_TMA);
    assert_int_equal(pl.pad, 0);
    assert_int_equal(pl.kloop, 2);
    assert_int_equal(pl.stages, 4);
    assert_int_equal(pl.pack, TSR_PACK_A);
    assert_int_equal(pl.kfrag, TSR_PACK_NONE);
    assert_int_equal(pl.bm, 64);
    assert_int_equal(pl.bk, 16);
    assert_int_equal(pl.minblocks, 3);
    assert_int_equal(tsr__emit_check(&qs, &pl, SM90, msg, sizeof msg), TSR_OK);
    qs.op_a = TSR_OP_T;
    assert_int_equal(tsr_problem_check(&qs, msg, sizeof msg), TSR_OK);
    tsr__emit_default_plan(&qs, &pl);
    assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_TMA);
    assert_int_equal(pl.kloop, 2);
    assert_int_equal(pl.pack, TSR_PACK_NONE);
    assert_int_equal(pl.kfrag, TSR_PACK_NONE); /* TN: A's [k][m] rows as stored */
    assert_int_equal(pl.wn, 64);
    assert_int_equal(pl.tn, 8);
    assert_int_equal(pl.minblocks, 3);
    assert_int_equal(tsr__emit_check(&qs, &pl, SM90, msg, sizeof msg), TSR_OK);
    /* NT: both operands packed ([k][x] rows; session 25) */
    qs.op_a = TSR_OP_N;
    qs.op_b = TSR_OP_T;
    assert_int_equal(tsr_problem_check(&qs, msg, sizeof msg), TSR_OK);
    tsr__emit_default_plan(&qs, &pl);
    assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_TMA);
    assert_int_equal(pl.pack, TSR_PACK_AB);
    assert_int_equal(pl.kfrag, TSR_PACK_NONE);
    assert_int_equal(pl.minblocks, 3);
    assert_int_equal(tsr__emit_check(&qs, &pl, SM90, msg, sizeof msg), TSR_OK);
    /* NT under 1024 rows: the three-block TMA tile too (the LDGSTS
     * producer's transposing copies spilled there) */
    {
      tsr_problem q5 = strict_default(mkprob((prob_spec){.m = 512, .n = 4096, .k = 11008, .opb = 'T'}), &pl);
      assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_TMA);
      assert_int_equal(pl.bm, 64);
      assert_int_equal(pl.splitk, 1);
      assert_int_equal(pl.pack, TSR_PACK_AB);
      assert_int_equal(pl.kfrag, TSR_PACK_NONE);
      assert_int_equal(tsr__emit_check(&q5, &pl, SM90, msg, sizeof msg), TSR_OK);
    }
    /* K a multiple of 8 but not of 16: the 128x128 producer tile, 8-deep */
    tsr_problem q8 = strict_default(P(4096, 4096, 4104), &pl);
    assert_int_equal(pl.split, TSR_SPLIT_PRODUCER);
    assert_int_equal(pl.bm, 128);
    assert_int_equal(pl.bk, 8);
    assert_int_equal(pl.minblocks, 0);
    assert_int_equal(tsr__emit_check(&q8, &pl, SM90, msg, sizeof msg), TSR_OK);
    tsr_problem sk = strict_default(P(32768, 128, 128), &pl);
    assert_int_equal(pl.kloop, 1);
    assert_int_equal(pl.split, TSR_SPLIT_INLINE);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    /* auto on sm_90a, fewer than two waves of 256x128 tiles: strict FFMA
     * below K = 384 (aligned rows), the 128x128 producer-bulk 3xTF32 kernel
     * from there on; unaligned short K keeps the packed mma.sync plan */
    sk.precision = TSR_PREC_AUTO;
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_FFMA);
    assert_int_equal(pl.kloop, 1);
    sk = P(4096, 1024, 384);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
    assert_int_equal(pl.split, TSR_SPLIT_PRODUCER_BULK);
    assert_int_equal(pl.bm, 128);
    assert_int_equal(pl.bn, 128);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    sk = P(2048, 2048, 2048);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
    assert_int_equal(pl.bn, 128);
    sk = P(4096, 1024, 256);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_FFMA);
    sk = P(2049, 2049, 129);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_TF32X3);
    sk = P(32768, 128, 128);
    sk.precision = TSR_PREC_FP32X3; /* asked for: 3xTF32 at short K too */
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_TF32X3);
    /* Default-plan rules, each row: the problem, its mode, then the default
     * plan's family, tile (bm, bn, wm, wn), kloop and split-K; -1: not
     * checked. Every row's plan passes the emitter's check.
     * - llm-train's 512x4096x4096: 128 tiles of 128x128, under one wave:
     *   split-K 2 (two CTAs an SM); 1024x4096x4096, 256 tiles: no split.
     * - session 11: a side of 64 in the one-wave branch: 128x64 / 64x128
     *   tiles of four warps, not half-empty 128x128 ones; short K over a
     *   large output: 128x128 kloop (K < 32 keeps 32x32); 64 decode rows: NN
     *   64x128 kloop split toward two waves, NT 64x64 kloop split-K 2.
     * - session 12: batches with a side of at most 128 run FFMA in auto too:
     *   128x64 kloop tiles at 128*128x128x128 and at a side of 64
     *   (96*512x64x512), 128x128 kloop at short K over many tiles
     *   (96*512x512x64 NT); sides of 1024 keep 3xTF32. Long K with both
     *   sides 100 or more: 64x64 tiles split toward one wave (two for whole
     *   kloop tiles), 128x128 from 256 a side (auto: the producer-bulk 3xTF32
     *   kernel); a side under 100 keeps 32x32.
     * - session 13: 128x128 kloop tiles with op(A) = A take cuBLAS's SGEMM
     *   geometry (2x2 warps of 64x64); A^T, short K and long K keep 8 warps
     *   of 64x32. Medium NN squares of 512 or more a side, at most one wave
     *   of 32x256 tiles: those tiles, kloop, split-K 2 (1280^3 keeps 64x64).
     * - session 15: where that is 100 or more 64x128 tiles, those, split
     *   toward 3 CTAs an SM; large NN where the slowest SM's queue of 64x128
     *   tiles is 5 % shorter (3000^3, 640x4608x3456; not 4096^3 or 2048^3,
     *   equal queues); 64 decode rows NT: 64x128 kfrag=ab, the slices of the
     *   shortest queue (3); a
     *   64-row one-wave tile splits 4; packed 64x64 medium tiles: kloop
     *   (ring) and slices toward 4 CTAs an SM; strict long K from 256 a
     *   side: 64x128 tiles toward 512 CTAs.
     * - session 16: unaligned 64x64 medium tiles over at most 256 rows that
     *   32-row tiles cover with fewer wasted rows: 32x128, the most slices
     *   in one wave of 4 CTAs an SM (195x1423x2802: 6); the 128x128 strict
     *   NT tile from 1024 rows packs B (the tiled transposing prologue). */
    {
      enum { S = TSR_PREC_STRICT, A = TSR_PREC_AUTO, FF = TSR_MMA_FFMA, WG = TSR_MMA_WGMMA_TF32X3,
             MS = TSR_MMA_TF32X3, X3 = TSR_PREC_FP32X3 };
      static const struct {
        prob_spec prob;
        int prec, mma, bm, bn, wm, wn, kloop, splitk;
      } rows[] = {
          {{512, 4096, 4096}, S, FF, 64, 128, 32, 64, 2, 1},
          {{4096, 4096, 4096}, S, FF, 64, 128, 32, 64, 2, 1},
          {{4096, 4096, 4096, 0, 'N', 'T'}, S, FF, 64, 128, 32, 64, 2, 1},
          {{4096, 4096, 4096, 0, 'T'}, S, FF, 64, 128, 32, 64, 2, 1},
          {{512, 4096, 11008, 0, 'N', 'T'}, S, FF, 64, 128, 32, 64, 2, 1}, /* session 25: three-block TMA */
          {{1000, 1000, 1000}, S, FF, 64, 128, 32, 64, 2, 1},
          {{1024, 1024, 1024}, S, FF, 64, 128, 32, 64, 2, 1},
          {{768, 768, 768}, S, FF, 32, 256, 16, 128, 3, 2},
          {{1024, 1024, 4096}, S, FF, 64, 128, 32, 64, 3, 3},
          {{3000, 3000, 3000}, S, FF, 64, 128, 32, 64, 2, 1},
          {{640, 4608, 3456}, S, FF, 64, 128, 32, 64, 2, 1},
          {{2048, 2048, 2048}, S, FF, 64, 128, 32, 64, 2, 1},
          {{3000, 3000, 3000, 0, 'N', 'T'}, S, FF, 64, 128, 32, 64, 2, 1},
          {{195, 1423, 2802}, S, FF, 32, 128, 16, 64, 3, 6},
          {{1280, 1280, 1280}, S, FF, 64, 64, 32, 32, -1, 1},
          {{1024, 1024, 1024, 0, 'N', 'T'}, S, FF, 64, 64, -1, -1, -1, -1},
          {{1024, 4096, 4096}, S, FF, -1, -1, -1, -1, -1, 1},
          {{16384, 64, 4096}, S, FF, 128, 64, -1, -1, 3, 2},
          {{64, 16384, 4096, 0, 'T'}, S, FF, 64, 128, 32, 64, 3, 4},
          {{8192, 8192, 64}, S, FF, 128, 128, 64, 32, 1, -1},
          {{8192, 8192, 16}, S, FF, 32, -1, -1, -1, -1, -1},
          {{64, 4096, 4096}, S, FF, 64, 128, -1, -1, 3, 8},
          {{64, 11008, 4096, 0, 'N', 'T'}, S, FF, 64, 128, 32, 64, 1, 3},
          {{64, 10944, 4928, 0, 'N', 'T'}, S, FF, 64, 128, 32, 64, 1, 3},
          {{128, 128, 128, 128}, A, FF, 128, 64, -1, -1, 1, -1},
          {{512, 64, 512, 96}, A, FF, 128, 64, -1, -1, 3, -1},
          {{512, 512, 64, 96, 'N', 'T'}, S, FF, 128, 128, -1, -1, 1, -1},
          {{1024, 1024, 128, 32, 'N', 'T'}, A, WG, -1, -1, -1, -1, -1, -1},
          {{100, 100, 8000}, A, FF, 64, 64, -1, -1, 0, 32},
          {{128, 128, 16384}, A, FF, 64, 64, -1, -1, 3, 64},
          {{256, 256, 32768}, A, WG, 128, 128, -1, -1, -1, 32},
          {{256, 256, 32768}, S, FF, 64, 128, 32, 64, 3, 64},
          {{96, 160, 12288, 0, 'T'}, A, FF, 32, 32, -1, -1, -1, -1},
          /* session 17: the medium 3xTF32 tile at a third of a wave or less
           * takes slices toward one wave (512 deep or more, at most 8) */
          {{195, 1423, 2802}, A, WG, 128, 128, 64, 128, -1, 5},
          {{256, 1024, 8192}, A, WG, 128, 128, 64, 128, -1, 8},
          {{384, 1536, 3072}, A, WG, 128, 128, 64, 128, -1, 3},
          {{1024, 1024, 1537}, A, WG, 128, 128, 64, 128, -1, 2},
          {{512, 4096, 4096}, A, WG, 128, 128, 64, 128, -1, 2},
          /* session 19: auto at a side of 33..64 against K >= 2048 and 100+
           * tiles (64+ for 64 rows): the mma.sync 3xTF32 family, one tile
           * per op pair measured; 64x4096x4096 NN (32 tiles), 32 rows and
           * strict keep FFMA (the strict rows above) */
          {{16384, 64, 4096}, A, MS, 128, 64, 64, 32, 0, 2},
          {{64, 16384, 4096, 0, 'T'}, A, MS, 64, 128, 32, 64, 0, 2},
          {{64, 11008, 4096, 0, 'N', 'T'}, A, MS, 64, 64, 32, 32, 0, 3},
          {{64, 10944, 4928, 0, 'N', 'T'}, A, MS, 64, 64, 32, 32, 0, 3},
          {{64, 4096, 4096}, A, FF, 64, 128, -1, -1, 3, 8},
          {{32, 4096, 4096, 0, 'N', 'T'}, A, FF, -1, -1, -1, -1, -1, -1},
          {{4096, 64, 4096}, A, FF, -1, -1, -1, -1, -1, -1},
          {{16384, 64, 4096, 0, 'N', 'T'}, A, FF, -1, -1, -1, -1, -1, -1},
          {{16384, 64, 4096}, X3, MS, 128, 64, 64, 32, 0, 2},
          {{64, 11008, 4096, 0, 'N', 'T'}, X3, MS, 64, 64, 32, 32, 0, 3},
      };
      for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sk = mkprob(rows[i].prob);
        sk.precision = (tsr_precision)rows[i].prec;
        tsr__emit_default_plan(&sk, &pl);
        assert_int_equal(pl.mma, rows[i].mma);
        const int want[6] = {rows[i].bm, rows[i].bn, rows[i].wm, rows[i].wn, rows[i].kloop,
                             rows[i].splitk};
        const int got[6] = {pl.bm, pl.bn, pl.wm, pl.wn, pl.kloop, pl.splitk};
        for (int f = 0; f < 6; f++)
          if (want[f] >= 0) assert_int_equal(got[f], want[f]);
        assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
      }
    }
    /* session 22: the three-block producer tile's FMAs in serpentine rows
     * (forder=1) and tail slices where two or more whole waves of 396 CTAs
     * leave at most half a wave: 4096^3 68 tiles in 5 slices,
     * 8192x4096x4096 136 in 2; 2048^3 (one whole wave), 2048x4096x4096
     * (232 tiles) and 8192^3 (272) none; the padded tile (3000^3: tails,
     * 1000^3: a 64x128 start) packs both operands; session 24: the whole
     * tiles' copies as TMA boxes (pad=0), the padded tiles' as LDGSTS;
     * session 25: 512x4096x4096 (no pack under 2048 rows) keeps LDGSTS: its
     * unpacked A as kfrag=a boxes ran 0.947 against 0.880 */
    {
      const struct { int64_t m, n, k; int tailk, pack; tsr_split split; } tl[] = {
          {4096, 4096, 4096, 5, TSR_PACK_A, TSR_SPLIT_PRODUCER_TMA},
          {8192, 4096, 4096, 2, TSR_PACK_A, TSR_SPLIT_PRODUCER_TMA},
          {2048, 2048, 2048, 0, TSR_PACK_A, TSR_SPLIT_PRODUCER_TMA},
          {2048, 4096, 4096, 0, TSR_PACK_A, TSR_SPLIT_PRODUCER_TMA},
          {8192, 8192, 8192, 0, TSR_PACK_A, TSR_SPLIT_PRODUCER_TMA},
          {512, 4096, 4096, 0, TSR_PACK_NONE, TSR_SPLIT_PRODUCER},
          {3000, 3000, 3000, 0, TSR_PACK_AB, TSR_SPLIT_PRODUCER},
          {1000, 1000, 1000, 0, TSR_PACK_AB, TSR_SPLIT_PRODUCER},
          {4095, 4097, 4093, 3, TSR_PACK_AB, TSR_SPLIT_PRODUCER}};
      for (size_t i = 0; i < sizeof tl / sizeof tl[0]; i++) {
        sk = strict_default(mkprob((prob_spec){.m = tl[i].m, .n = tl[i].n, .k = tl[i].k}), &pl);
        assert_int_equal(pl.split, tl[i].split);
        assert_int_equal(pl.pad, tl[i].split == TSR_SPLIT_PRODUCER_TMA ? 0 : 4);
        assert_int_equal(pl.minblocks, 3);
        assert_int_equal(pl.forder, 1);
        assert_int_equal(pl.tailk, tl[i].tailk);
        assert_int_equal(pl.wave, tl[i].tailk ? 396 : 0);
        assert_int_equal(pl.pack, tl[i].pack);
        assert_int_equal(pl.kfrag, TSR_PACK_NONE);
        assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
      }
    }
    /* session 15: the 64-row NT tile keeps both operands as [x][k] rows;
     * the unaligned 64x64 medium tile runs unpacked (195x1423x2802: 4-byte
     * copies, kloop); 9..16 decode rows NT take the skinny FFMA tile with
     * kfrag=ab and 32 slices (8 rows keep GEMV) */
    sk = strict_default(mkprob((prob_spec){.m = 64, .n = 11008, .k = 4096, .opa = 'N', .opb = 'T'}),
                        &pl);
    assert_int_equal(pl.kfrag, TSR_PACK_AB);
    sk = strict_default(mkprob((prob_spec){.m = 195, .n = 1423, .k = 2802}), &pl);
    assert_int_equal(pl.pack, TSR_PACK_NONE);
    assert_int_equal(pl.vec, 1);
    assert_int_equal(pl.kloop, 3);
    assert_int_equal(pl.bm, 32);
    assert_int_equal(pl.splitk, 6);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    /* session 16: strict 128x128 NT packs B from 1024 rows (512 rows lost:
     * 512x4096x11008 1.197x -> 1.249x cuBLAS's time); session 21: below
     * 1024 rows the producer packed A (its 4-byte transposing copies) */
    {
      const int64_t nt[][3] = {{8192, 4096, 4096}, {1024, 4096, 4096}, {3008, 12608, 832},
                               {4096, 4096, 4096}, {512, 4096, 11008}};
      for (int i = 0; i < 5; i++) {
        sk = strict_default(
            mkprob((prob_spec){.m = nt[i][0], .n = nt[i][1], .k = nt[i][2], .opa = 'N', .opb = 'T'}),
            &pl);
        assert_int_equal(pl.mma, TSR_MMA_FFMA);
        /* session 22: a tile tail (3008x12608x832: N % 128) packs both;
         * session 25: so do the whole three-block tiles (TMA boxes of [k][x]
         * rows), 512 rows too */
        assert_int_equal(pl.pack, TSR_PACK_AB);
        assert_int_equal(pl.split, nt[i][1] % 128 ? TSR_SPLIT_PRODUCER : TSR_SPLIT_PRODUCER_TMA);
        assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
      }
      /* NN packs A from 2048 rows under the producer (session 21), not below */
      sk = strict_default(mkprob((prob_spec){.m = 8192, .n = 4096, .k = 4096}), &pl);
      assert_int_equal(pl.pack, TSR_PACK_A);
      assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
      sk = strict_default(mkprob((prob_spec){.m = 1024, .n = 4096, .k = 4096}), &pl);
      assert_int_equal(pl.pack, TSR_PACK_NONE);
    }
    const int64_t decode[][3] = {{16, 4096, 14336}, {16, 14336, 4096}, {12, 4096, 4096}, {8, 4096, 4096}};
    for (int i = 0; i < 4; i++) {
      sk = strict_default(mkprob((prob_spec){.m = decode[i][0], .n = decode[i][1],
                                             .k = decode[i][2], .opa = 'N', .opb = 'T'}),
                          &pl);
      if (decode[i][0] == 8) {
        assert_int_equal(pl.mma, TSR_MMA_GEMV);
        continue;
      }
      assert_int_equal(pl.mma, TSR_MMA_FFMA);
      assert_int_equal(pl.bm, 16);
      assert_int_equal(pl.bn, 128);
      assert_int_equal(pl.kfrag, TSR_PACK_AB);
      assert_int_equal(pl.splitk, 32);
      assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    }
    /* session 20: skinny FFMA tiles whose big operand runs along k keep it as
     * [x][k] rows; auto runs the same plans; other op pairs, batches and the
     * NN long-K small tiles keep theirs */
    {
      const struct {
        int64_t m, n, k;
        char opa, opb;
        int batch, bm, bn, bk, wm, tm, tn, stages, splitk;
        tsr_pack kfrag;
      } kf[] = {
          {4096, 16, 16384, 'N', 'N', 1, 128, 16, 32, 32, 4, 4, 3, 8, TSR_PACK_A},
          {65536, 32, 1024, 'N', 'N', 1, 128, 32, 16, 32, 4, 8, 4, 1, TSR_PACK_A},
          {32, 4096, 4096, 'N', 'T', 1, 32, 64, 32, 32, 4, 8, 3, 8, TSR_PACK_AB},
          {32, 32000, 4096, 'N', 'T', 1, 32, 64, 32, 32, 4, 8, 3, 1, TSR_PACK_AB},
          {128, 64, 65536, 'N', 'T', 1, 32, 32, 16, 16, 4, 4, 2, 128, TSR_PACK_AB},
          {4096, 16, 16384, 'T', 'N', 1, 128, 16, 16, 64, 8, 4, 4, -1, TSR_PACK_NONE},
          {4096, 16, 16384, 'N', 'N', 2, 128, 16, 16, 64, 8, 4, 4, -1, TSR_PACK_NONE},
          {32, 4096, 4096, 'N', 'N', 1, 32, 64, 16, 32, 4, 8, 4, -1, TSR_PACK_NONE},
          {64, 64, 8192, 'N', 'N', 1, 32, 32, 16, 16, 4, 4, 2, -1, TSR_PACK_NONE},
      };
      for (size_t i = 0; i < sizeof kf / sizeof kf[0]; i++) {
        tsr_problem ps = mkprob((prob_spec){.m = kf[i].m, .n = kf[i].n, .k = kf[i].k,
                                            .batch = kf[i].batch, .opa = kf[i].opa, .opb = kf[i].opb});
        ps.precision = TSR_PREC_STRICT;
        tsr_problem pa = ps;
        pa.precision = TSR_PREC_AUTO;
        tsr_plan pls, pla;
        tsr__emit_default_plan(&ps, &pls);
        tsr__emit_default_plan(&pa, &pla);
        assert_int_equal(pls.mma, TSR_MMA_FFMA);
        assert_int_equal(pls.kfrag, kf[i].kfrag);
        const int want[8] = {kf[i].bm, kf[i].bn, kf[i].bk,     kf[i].wm,
                             kf[i].tm, kf[i].tn, kf[i].stages, kf[i].splitk};
        const int got[8] = {pls.bm, pls.bn, pls.bk, pls.wm, pls.tm, pls.tn, pls.stages, pls.splitk};
        for (int f = 0; f < 8; f++)
          if (want[f] >= 0) assert_int_equal(got[f], want[f]);
        char ta[512], ts[512];
        tsr_plan_format(&pla, ta, sizeof ta);
        tsr_plan_format(&pls, ts, sizeof ts);
        assert_string_equal(ta, ts);
        assert_int_equal(tsr__emit_check(&ps, &pls, SM90, msg, sizeof msg), TSR_OK);
      }
    }
    /* session 12: auto at a side of at most 64 runs the strict plan (the
     * wgmma tiles ran half empty: 64x4096x4096 2.28x cuBLAS's time); since
     * session 19 except where the mma.sync rule applies (the table above:
     * 16384x64x4096, 64-row TN and NT) */
    {
      const int64_t side64[][3] = {{64, 4096, 4096}, {4096, 64, 4096}, {64, 11008, 4096}};
      for (int i = 0; i < 3; i++) {
        tsr_problem pa = P(side64[i][0], side64[i][1], side64[i][2]), ps = pa;
        ps.precision = TSR_PREC_STRICT;
        tsr_plan pla, pls;
        tsr__emit_default_plan(&pa, &pla);
        tsr__emit_default_plan(&ps, &pls);
        assert_int_equal(pla.mma, TSR_MMA_FFMA);
        char ta[512], ts[512];
        tsr_plan_format(&pla, ta, sizeof ta);
        tsr_plan_format(&pls, ts, sizeof ts);
        assert_string_equal(ta, ts);
      }
    }
    /* fp32x3 512^3: 32 tiles of 128x64, a quarter wave: split-K 4 */
    sk = P(512, 512, 512);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
    assert_int_equal(pl.splitk, 4);
    assert_int_equal(pl.bk, 32);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    sk = P(768, 768, 768); /* 72 tiles: no split */
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.splitk, 1);
    /* 3xTF32, large class, K < 1536: 128x128 wgmma tiles (2049x4097x1025
     * 0.583x cuBLAS's time against 0.743x for 256x128); from 1536 256x128 */
    sk = P(2049, 4097, 1025);
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.mma, TSR_MMA_WGMMA_TF32X3);
    assert_int_equal(pl.bm, 128);
    assert_int_equal(pl.bn, 128);
    assert_int_equal(pl.pack, TSR_PACK_AB);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    sk = P(4096, 4096, 2048);
    sk.precision = TSR_PREC_FP32X3;
    tsr__emit_default_plan(&sk, &pl);
    assert_int_equal(pl.bm, 256);
    assert_int_equal(tsr__emit_check(&sk, &pl, SM90, msg, sizeof msg), TSR_OK);
    tsr__emit_default_plan(&q, &pl);
  }
  {
    tsr__kernel_src k1, k2;
    emit_ok(&q, &pl, &k1);
    emit_ok(&q, &pl, &k2);
    assert_string_equal(k1.sha256, k2.sha256);
    assert_memory_equal(k1.source, k2.source, k1.len);
    tsr__kernel_src_free(&k1);
    tsr__kernel_src_free(&k2);
  }
  tsr__emit_default_plan_cc(&q, 80, &pl);
  assert_int_equal(pl.mma, TSR_MMA_TF32X3);
  q.beta = 0.5f; /* beta (the reconstruction reads C) */
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_S8);
  q.beta = 0.0f;
  q.op_b = TSR_OP_T; /* the pack prologue transposes: the same main kernel */
  assert_int_equal(tsr_problem_check(&q, msg, sizeof msg), TSR_OK);
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_WGMMA_S8);
  tsr__emit_default_plan_cc(&q, 80, &pl);
  assert_int_equal(pl.mma, TSR_MMA_TF32X3);
  q = P(4096, 16, 16384);
  /* an explicit tensor-core mode keeps its family */
  q.precision = TSR_PREC_FP32X3;
  tsr__emit_default_plan(&q, &pl);
  assert_int_equal(pl.mma, TSR_MMA_TF32X3);
}

/* pack: rejections name the field; the prologue is in the source and the
 * launch description; same plan -> same bytes; the workspace holds the
 * padded copies after the split-K partials. */
static void test_pack_contract(void **state) {
  tsr_problem p = mkprob((prob_spec){.m = 70, .n = 45, .k = 37, .batch = 2});
  tsr_plan pl = mkplan("mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=0,splitk=2,pack=ab");
  tsr__kernel_src k1, k2;
  emit_ok(&p, &pl, &k1);
  emit_ok(&p, &pl, &k2);
  assert_string_equal(k1.sha256, k2.sha256);
  assert_int_equal(k1.len, k2.len);
  assert_memory_equal(k1.source, k2.source, k1.len);
  assert_int_equal(k1.npre, 2);
  assert_string_equal(k1.pre[0].name, "tsr_gemm_pack_a");
  assert_string_equal(k1.pre[1].name, "tsr_gemm_pack_b");
  assert_non_null(strstr(k1.source, "tsr_gemm_pack_a("));
  assert_non_null(strstr(k1.source, "tsr_gemm_pack_b("));
  /* A: 70 -> 96 rows (bm=32) x 48 (k 37 -> 48); B: 48 k rows x 64 (n 45 -> 64) */
  uint64_t partial = 2ull * 2 * 70 * 45, a_off = (partial + 63) / 64 * 64;
  uint64_t a_sz = 2ull * 96 * 48, b_off = a_off + (a_sz + 63) / 64 * 64, b_sz = 2ull * 48 * 64;
  assert_int_equal(k1.pack_off[0], a_off);
  assert_int_equal(k1.pack_off[1], b_off);
  assert_int_equal(k1.workspace_bytes, (b_off + (b_sz + 63) / 64 * 64) * 4);
  assert_int_equal(k1.pre[0].grid[0], (96 * 48 / 4 + 255) / 256);
  assert_int_equal(k1.pre[0].grid[1], 2);
  assert_int_equal(k1.pre[0].block[0], 256);
  /* no K load guard on packed operands (M/N stay guarded in the epilogue) */
  assert_null(strstr(k1.source, ">= K)"));
  assert_null(strstr(k1.source, "K - ("));
  /* the pack=none source differs and has no prologue */
  tsr_plan pn = pl;
  pn.pack = TSR_PACK_NONE;
  tsr__kernel_src k3;
  emit_ok(&p, &pn, &k3);
  assert_int_equal(k3.npre, 0);
  assert_true(strstr(k3.source, ">= K)") || strstr(k3.source, "K - ("));
  assert_null(strstr(k3.source, "tsr_gemm_pack_"));
  assert_string_not_equal(k3.sha256, k1.sha256);
  tsr__kernel_src_free(&k1);
  tsr__kernel_src_free(&k2);
  tsr__kernel_src_free(&k3);
  /* parse rejections name the field and value */
  tsr_plan q = pl;
  char msg[256];
  assert_int_equal(tsr_plan_parse("pack=c", &q, msg, sizeof msg), TSR_ERR_PARSE);
  assert_non_null(strstr(msg, "pack=c is not none, a, b or ab"));
  q.pack = (tsr_pack)7;
  assert_int_not_equal(tsr__emit_check(&p, &q, SM90, msg, sizeof msg), TSR_OK);
  assert_non_null(strstr(msg, "pack=7"));
}

/* lazy=P: no prologue kernel for A (B's stays), the claim flags after the
 * packed operands (one per piece of P K blocks, tile row and batch item),
 * the main kernel's extra parameter; the prologue's source is gone and the
 * lazy=0 source is the plain pack=a one. */
static void test_lazy_contract(void **state) {
  (void)state;
  tsr_problem p = mkprob((prob_spec){.m = 300, .n = 260, .k = 200, .batch = 2, .opa = 'N', .opb = 'T'});
  tsr_plan pl = mkplan("bm=64,bn=128,wm=32,wn=64,tm=8,tn=8,bk=16,stages=4,vec=4,pad=0,"
                       "split=producer-tma,kloop=2,minblocks=3,pack=ab,lazy=3");
  tsr__kernel_src k1, k0;
  emit_ok(&p, &pl, &k1);
  tsr_plan p0 = pl;
  p0.lazy = 0;
  emit_ok(&p, &p0, &k0);
  assert_int_equal(k0.npre, 2);
  assert_int_equal(k0.lazy_n, 0);
  assert_null(strstr(k0.source, "epoch"));
  assert_int_equal(k1.npre, 1);
  assert_string_equal(k1.pre[0].name, "tsr_gemm_pack_b");
  assert_null(strstr(k1.source, "tsr_gemm_pack_a("));
  assert_non_null(strstr(k1.source, "tsr_gemm_pack_b("));
  assert_non_null(strstr(k1.source, "unsigned epoch"));
  /* A: 300 -> 320 rows (5 tile rows of 64), k 200 -> 208 (13 K blocks: 5
   * pieces of 3); flags after B's packed copy ([k][n]: 208 x 384) */
  assert_int_equal(k1.pack_off[0], k0.pack_off[0]);
  assert_int_equal(k1.pack_off[1], k0.pack_off[1]);
  uint64_t b_sz = 2ull * 208 * 384, flags = (k1.pack_off[1] + (b_sz + 63) / 64 * 64);
  assert_int_equal(k1.lazy_n, 2ull * 5 * 5);
  assert_int_equal(k1.lazy_off, flags);
  assert_int_equal(k1.workspace_bytes, (flags + 64) * 4);
  assert_int_equal(k0.workspace_bytes, flags * 4);
  assert_non_null(strstr(k1.source, "LAZY = 3, NPIECE = 5;"));
  assert_string_not_equal(k1.sha256, k0.sha256);
  assert_int_equal(k1.pdl, 0);
  /* lazyk=7: A's pack kernel back, after B's (the main kernel's programmatic
   * primary), 7 CTAs of TSR__LAZYK_WARPS warps, the main kernel's parameters
   * with the call count; the same flags; the producer waits, never claims */
  tsr_plan pk = pl;
  pk.lazyk = 7;
  tsr__kernel_src k2;
  emit_ok(&p, &pk, &k2);
  assert_int_equal(k2.pdl, 1);
  assert_int_equal(k2.npre, 2);
  assert_string_equal(k2.pre[0].name, "tsr_gemm_pack_b");
  assert_int_equal(k2.pre[0].grid[0], k0.pre[1].grid[0]);
  assert_int_equal(k2.pre[0].grid[1], 2);
  assert_string_equal(k2.pre[1].name, "tsr_gemm_pack_a");
  assert_int_equal(k2.pre[1].grid[0], 7);
  assert_int_equal(k2.pre[1].grid[1], 1);
  assert_int_equal(k2.pre[1].grid[2], 1);
  assert_int_equal(k2.pre[1].block[0], 32 * TSR__LAZYK_WARPS);
  assert_int_equal(k2.lazy_n, k1.lazy_n);
  assert_int_equal(k2.lazy_off, k1.lazy_off);
  assert_int_equal(k2.workspace_bytes, k1.workspace_bytes);
  assert_int_equal(k2.pack_off[0], k1.pack_off[0]);
  assert_non_null(strstr(k2.source, "tsr_gemm_pack_a("));
  assert_non_null(strstr(k2.source, "griddepcontrol.launch_dependents"));
  assert_non_null(strstr(k2.source, "tsr_lazy_wait(flags, ready, piece"));
  assert_null(strstr(k2.source, "tsr_lazy_a("));
  assert_null(strstr(k1.source, "griddepcontrol"));
  tsr__kernel_src_free(&k2);
  tsr__kernel_src_free(&k1);
  tsr__kernel_src_free(&k0);
}

/* split=pack: rejections name the key; both operands are packed (pack is
 * normalized to ab: any pack value emits the same bytes); W holds A's big
 * then small parts, then B's (B of an NN problem transposed to [n][k]); a
 * stage holds four tiles with tf32x3, two with tf32; the K-block compute has
 * no split left. */
static void test_split_contract(void **state) {
  tsr_problem p = mkprob((prob_spec){.m = 70, .n = 45, .k = 37, .batch = 2});
  const char *text = "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=0,splitk=2,split=pack";
  tsr_plan pl = mkplan(text);
  tsr__kernel_src k1, k2;
  emit_ok(&p, &pl, &k1);
  for (int pk = TSR_PACK_NONE; pk <= TSR_PACK_AB; pk++) {
    tsr_plan q = pl;
    q.pack = (tsr_pack)pk;
    emit_ok(&p, &q, &k2);
    assert_int_equal(k1.len, k2.len);
    assert_memory_equal(k1.source, k2.source, k1.len);
    assert_string_equal(k1.sha256, k2.sha256);
    tsr__kernel_src_free(&k2);
  }
  assert_non_null(strstr(k1.source, "pack=ab,split=pack"));
  assert_int_equal(k1.npre, 2);
  /* A [m][k]: 70 -> 96 rows x 48 (k 37 -> 48); B [n][k]: 45 -> 64 rows x 48; 2 items each */
  uint64_t partial = 2ull * 2 * 70 * 45, a_off = (partial + 63) / 64 * 64, a_sz = 2ull * 96 * 48;
  uint64_t b_off = a_off + 2 * a_sz, b_sz = 2ull * 64 * 48;
  assert_int_equal(k1.pack_off[0], a_off);
  assert_int_equal(k1.pack_off[1], b_off);
  assert_int_equal(k1.workspace_bytes, (b_off + 2 * b_sz) * 4);
  char want[96];
  snprintf(want, sizeof want, "WOFF_AS = %llu;", (unsigned long long)(a_off + a_sz));
  assert_non_null(strstr(k1.source, want));
  snprintf(want, sizeof want, "WOFF_BS = %llu;", (unsigned long long)(b_off + b_sz));
  assert_non_null(strstr(k1.source, want));
  assert_int_equal(k1.pre[1].grid[0], (64 * 48 / 4 + 255) / 256);
  assert_false(block_calls(k1.source, "tsr_split"));
  assert_true(block_calls(k1.source, "tsr_ldsm4s(al[0]")); /* small parts read directly */
  /* the inline source: two 512-float tiles per stage, tsr_split in the loop */
  tsr_plan in = pl;
  in.split = TSR_SPLIT_INLINE;
  emit_ok(&p, &in, &k2);
  assert_int_equal(k2.smem_bytes, 2 * (512 + 512) * 4);
  assert_int_equal(k1.smem_bytes, 2 * k2.smem_bytes);
  assert_true(block_calls(k2.source, "tsr_split"));
  assert_null(strstr(k2.source, "WOFF_AS"));
  tsr__kernel_src_free(&k2);
  tsr__kernel_src_free(&k1);
  /* tf32: big parts only, no extra tiles or workspace */
  tsr_problem pt = p;
  pt.precision = TSR_PREC_TF32;
  tsr_plan t1 = mkplan("mma=tf32,acc=chain,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=0,splitk=2,split=pack");
  emit_ok(&pt, &t1, &k1);
  assert_int_equal(k1.smem_bytes, 2 * (512 + 512) * 4);
  assert_int_equal(k1.workspace_bytes, (a_off + a_sz + b_sz) * 4);
  assert_null(strstr(k1.source, "WOFF_AS"));
  assert_false(block_calls(k1.source, "tsr_split"));
  tsr__kernel_src_free(&k1);
  /* rejections */
  tsr_problem big = P(4096, 4096, 4096);
  expect_reject(big, "split=pack", "split=pack is unused by mma=ffma and must be inline");
  expect_reject(big, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=32,wm=64,wn=64,stages=4,pad=0,split=pack",
                "exceeds the 227.0 KiB limit (bm=128,bn=256,bk=32,stages=4,pad=0,split=pack");
  tsr_plan bad = mkplan("mma=tf32x3,tm=1,tn=1");
  bad.split = (tsr_split)8;
  char msg[256];
  assert_int_not_equal(tsr__emit_check(&big, &bad, SM90, msg, sizeof msg), TSR_OK);
  assert_non_null(strstr(msg, "split=8 is not inline, pack, producer, producer-reg, producer-pack, producer-bulk, producer-tma or tma"));
  /* the same plan inline fits: the doubling is what is rejected */
  tsr_plan fits = mkplan("mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=32,wm=64,wn=64,stages=4,pad=0");
  assert_int_equal(tsr__emit_check(&big, &fits, SM90, msg, sizeof msg), TSR_OK);
}

/* ---- ownership: every output of a tile is written by exactly one thread ----
 * The formulas below restate the emitted epilogue (docs/emit.md). */
static void ownership_ffma(int bm, int bn, int wm, int wn, int tm, int tn) {
  int lr = wm / tm, lc = wn / tn, fm = tm < 4 ? tm : 4, fn = tn < 4 ? tn : 4;
  int warps_n = bn / wn, nt = (bm / wm) * warps_n * 32;
  int *cnt = calloc((size_t)bm * bn, sizeof *cnt);
  for (int t = 0; t < nt; t++) {
    int lane = t & 31, warp = t >> 5;
    int rbase = (warp / warps_n) * wm + (lane / lc) * fm;
    int cbase = (warp % warps_n) * wn + (lane % lc) * fn;
    for (int i = 0; i < tm; i++)
      for (int f = 0; f < tn / fn; f++)
        for (int e = 0; e < fn; e++) {
          int r = rbase + (i / fm) * (lr * fm) + i % fm, c = cbase + f * (lc * fn) + e;
          assert_true(r >= 0 && r < bm && c >= 0 && c < bn);
          cnt[r * bn + c]++;
        }
  }
  for (int i = 0; i < bm * bn; i++) assert_int_equal(cnt[i], 1);
  free(cnt);
}
/* va, vb: the fragment-load permutation widths of the epilogue (1 = identity). */
static void ownership_tf32(int bm, int bn, int wm, int wn, int va, int vb) {
  int warps_n = bn / wn, nt = (bm / wm) * warps_n * 32;
  int *cnt = calloc((size_t)bm * bn, sizeof *cnt);
  for (int t = 0; t < nt; t++) {
    int lane = t & 31, warp = t >> 5, gq = lane >> 2, tq = lane & 3;
    int rw = (warp / warps_n) * wm, cw = (warp % warps_n) * wn;
    for (int i = 0; i < wm / 16; i++)
      for (int h = 0; h < 2; h++) {
        int r = rw + (i / va) * 16 * va + h * 8 * va + gq * va + i % va;
        for (int j = 0; j < wn / 8; j++)
          for (int e = 0; e < 2; e++) {
            int c = cw + (j / vb) * 8 * vb + (2 * tq + e) * vb + j % vb;
            assert_true(r >= rw && r < rw + wm && c >= cw && c < cw + wn);
            cnt[r * bn + c]++;
          }
      }
  }
  for (int i = 0; i < bm * bn; i++) assert_int_equal(cnt[i], 1);
  free(cnt);
}
static void test_ownership(void **state) {
  ownership_ffma(128, 128, 32, 64, 8, 8);
  ownership_ffma(128, 128, 64, 32, 8, 8);
  ownership_ffma(32, 32, 16, 32, 4, 4);
  ownership_ffma(16, 16, 8, 8, 2, 1);
  ownership_ffma(64, 128, 64, 64, 16, 8);
  ownership_ffma(24, 24, 12, 24, 3, 3);
  for (int v = 1; v <= 4; v *= 2) {
    ownership_tf32(128, 128, 64, 32, v, v);
    ownership_tf32(64, 64, 32, 32, v > 2 ? 2 : v, v);
    ownership_tf32(128, 256, 64, 64, v, v);
  }
  ownership_tf32(32, 32, 16, 16, 1, 2);
  ownership_tf32(32, 48, 16, 24, 1, 1);
}

/* ---- host emulation ---------------------------------------------------------- */
/* The source with its PTX section removed, wrapped by the harness. */
static void write_emu_source(const char *path, const tsr__kernel_src *k, int rz, int poison) {
  const char *b = strstr(k->source, "// tsr:ptx-begin\n");
  const char *e = strstr(k->source, "// tsr:ptx-end\n");
  assert_non_null(b);
  assert_non_null(e);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  if (rz) fprintf(f, "#define TSR_EMU_MMA_RZ 1\n");
  /* finite poison: a read of unwritten shared memory or workspace gives wrong
   * finite sums, which no tsr_fix recomputation repairs */
  if (poison) fprintf(f, "#define TSR_EMU_POISON 30000.0f\n");
  fprintf(f, "#include \"harness.hpp\"\n");
  fwrite(k->source, 1, (size_t)(b - k->source), f);
  fputs(e + strlen("// tsr:ptx-end\n"), f);
  if (k->reduce_name[0]) fprintf(f, "#define TSR_EMU_HAS_REDUCE 1\n");
  if (k->ntmap) fprintf(f, "#define TSR_EMU_TMAP 1\n");
  if (k->lazy_n) fprintf(f, "#define TSR_EMU_LAZY 1\n");
  if (k->pdl) fprintf(f, "#define TSR_EMU_LAZYK 1\n");
  for (int i = 0; i < k->npre; i++)
    fprintf(f, "#define TSR_EMU_HAS_PACK_%c 1\n", k->pre[i].name[strlen(k->pre[i].name) - 1] - 32);
  fprintf(f, "#include \"driver.hpp\"\n");
  fclose(f);
}

/* split=producer-tma: DIR/tmaps, the tensor maps as the runtime encodes them
 * (tests/emit/emu/driver.hpp reads them) */
static void write_tmaps(const char *dir, const tsr__kernel_src *k) {
  char text[512] = "", path[512];
  for (int i = 0; i < k->ntmap; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text),
             "%d %llu %llu %llu %llu %llu %llu %u %u\n", k->tmap[i].packed,
             (unsigned long long)k->tmap[i].off, (unsigned long long)k->tmap[i].dim[0],
             (unsigned long long)k->tmap[i].dim[1], (unsigned long long)k->tmap[i].dim[2],
             (unsigned long long)k->tmap[i].stride[0], (unsigned long long)k->tmap[i].stride[1],
             k->tmap[i].box[0], k->tmap[i].box[1]);
  snprintf(path, sizeof path, "%s/tmaps", dir);
  write_file(path, text, strlen(text));
  if (!k->lazy_n) return;
  /* lazy: the claim flags, and packed A's floats (the driver poisons them
   * between its two calls) */
  assert_true(k->ntmap >= 1 && k->tmap[0].packed);
  snprintf(text, sizeof text, "%llu %llu %llu %llu\n", (unsigned long long)k->lazy_off,
           (unsigned long long)k->lazy_n, (unsigned long long)k->tmap[0].off,
           (unsigned long long)(k->tmap[0].stride[1] * k->tmap[0].dim[2]));
  snprintf(path, sizeof path, "%s/lazy", dir);
  write_file(path, text, strlen(text));
}

/* ASan/UBSan as in the sanitizer build; -g1 (line tables) names file:line in
 * their reports at a fraction of -g's compile time. */
#define EMU_CXX                                                                                    \
  "g++ -std=c++17 -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -pthread "       \
  "-Wno-unknown-pragmas -Wno-unused-variable"

/* Compiled emulations are cached in emu-cache/ beside this executable (the
 * build dir), keyed by the SHA-256 of all that decides the binary: the
 * compiler's version, EMU_CXX, the harness headers and the source. A fresh
 * build dir compiles everything. One entry per slot (emu<i>, walk<i>): a new
 * key evicts the slot's old one, so the cache holds one binary per case.
 * TSR_EMU_CACHE=off bypasses it. */
static int emu_cache_dir(char *out, size_t cap) {
  const char *env = getenv("TSR_EMU_CACHE");
  if (env && strcmp(env, "off") == 0) return 0;
  char exe[4096];
  ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (l <= 0) return 0;
  exe[l] = '\0';
  *strrchr(exe, '/') = '\0';
  if (snprintf(out, cap, "%s/emu-cache", exe) >= (int)cap) return 0;
  if (mkdir(out, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "# emulation cache %s: %s; compiling everything\n", out, strerror(errno));
    return 0;
  }
  return 1;
}

/* The compiler version, EMU_CXX and the harness headers: the part of every
 * key that is not the source. */
static const char *emu_key_prefix(void) {
  static char *prefix;
  if (prefix) return prefix;
  char ver[1024] = "";
  FILE *p = popen("g++ --version 2>&1", "r");
  assert_non_null(p);
  size_t n = fread(ver, 1, sizeof ver - 1, p);
  ver[n] = '\0';
  pclose(p);
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/emit/emu/harness.hpp", test_source_dir());
  char *harness = read_text(path);
  snprintf(path, sizeof path, "%s/tests/emit/emu/driver.hpp", test_source_dir());
  char *driver = read_text(path);
  if (!harness || !driver)
    fail_msg("cannot read the emulation harness under %s/tests/emit/emu", test_source_dir());
  size_t len = strlen(ver) + strlen(EMU_CXX) + strlen(harness) + strlen(driver) + 5;
  prefix = malloc(len);
  snprintf(prefix, len, "%s\n%s\n%s\n%s\n", ver, EMU_CXX, harness, driver);
  free(harness);
  free(driver);
  return prefix;
}

/* DIR/emu<i> from DIR/emu<i>.cpp for each of the n cases in idx: from the
 * cache where it holds the key, else compiled two at a time (the dev machine
 * has two cores); a failed compile leaves DIR/emu<i>.fail and DIR/emu<i>.log. */
static void emu_compile_all(const char *dir, const char *slot, const size_t *idx, size_t n) {
  char cache[4096], path[8192], cmd[16384];
  int cached = emu_cache_dir(cache, sizeof cache);
  char(*keys)[65] = calloc(n ? n : 1, sizeof *keys);
  char *todo = calloc(n * 24 + 1, 1);
  size_t hits = 0;
  for (size_t j = 0; j < n; j++) {
    if (!cached) {
      sprintf(todo + strlen(todo), "%zu\n", idx[j]);
      continue;
    }
    snprintf(path, sizeof path, "%s/emu%zu.cpp", dir, idx[j]);
    char *src = read_text(path);
    assert_non_null(src);
    const char *prefix = emu_key_prefix();
    size_t plen = strlen(prefix), slen = strlen(src);
    char *all = malloc(plen + slen);
    memcpy(all, prefix, plen);
    memcpy(all + plen, src, slen);
    assert_int_equal(tsr__sha256_hex(all, plen + slen, keys[j]), 0);
    free(all);
    free(src);
    char entry[8192], link[8192];
    snprintf(entry, sizeof entry, "%s/%s%zu-%s", cache, slot, idx[j], keys[j]);
    snprintf(link, sizeof link, "%s/emu%zu", dir, idx[j]);
    if (access(entry, X_OK) == 0 && symlink(entry, link) == 0) hits++;
    else sprintf(todo + strlen(todo), "%zu\n", idx[j]);
  }
  if (*todo) {
    snprintf(cmd, sizeof cmd,
             "cd '%s' && export EMU_INC='%s/tests/emit/emu' && printf '%%s' '%s' | xargs -P2 -I{} "
             "sh -c '" EMU_CXX " -I\"$EMU_INC\" -o emu{} emu{}.cpp > emu{}.log 2>&1 || echo "
             "FAILED > emu{}.fail'",
             dir, test_source_dir(), todo);
    assert_int_equal(system(cmd), 0);
  }
  /* store the new binaries: write aside, rename in, drop the slot's older keys */
  for (size_t j = 0; cached && j < n; j++) {
    snprintf(path, sizeof path, "%s/emu%zu", dir, idx[j]);
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) continue; /* from the cache, or failed */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cp '%s' .tmp-%s%zu-%d && mv -f .tmp-%s%zu-%d %s%zu-%s && "
             "for f in %s%zu-*; do [ \"$f\" = %s%zu-%s ] || rm -f \"$f\"; done",
             cache, path, slot, idx[j], (int)getpid(), slot, idx[j], (int)getpid(), slot, idx[j],
             keys[j], slot, idx[j], slot, idx[j], keys[j]);
    if (system(cmd) != 0) fprintf(stderr, "# could not store %s in %s\n", path, cache);
  }
  fprintf(stderr, "# emulations: %zu compiled, %zu from %s\n", n - hits, hits,
          cached ? cache : "no cache");
  free(keys);
  free(todo);
}

typedef struct {
  const char *name;
  prob_spec prob;
  const char *plan; /* over the base mkplan() */
  int use_default;  /* 1: the default-table plan of the named big shape applied here */
  int64_t dm, dn, dk;
  int random;
  /* accuracy contract (docs/accuracy.md): checked instead of the tolerance
   * when contract != AUTO; the problem asks for `prec`; rz: the truncating
   * tensor-core accumulation model of the harness; breach: the contract
   * must fail (the pre-contract acc=chain scheme); special: NaN/Inf/FLT_MAX
   * inputs whose output classes must be IEEE's (1 put_specials, 2 the split
   * identity's, 3 an Inf and an overflow of opposite signs in one row) */
  tsr_precision prec, contract;
  int rz, breach, special;
  unsigned seed; /* input seed; 0: 7 */
  int poison;    /* 1: unwritten shared memory and workspace hold 30000, not NaN */
} emu_case;

static const emu_case emu_cases[] = {
    /* FFMA, base 32x32x8 tile, warp 16x32, micro 4x4 (LR=4, LC=8), 64 threads */
    {"ffma NN full 2-stage vec4", {64, 64, 32, 1, 'N', 'N', 0}, "stages=2,vec=4,pad=4"},
    {"ffma NN tails 1-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "stages=1,vec=1"},
    {"ffma TN tails 2-stage vec2", {70, 45, 37, 1, 'T', 'N', 0}, "stages=2,vec=1,pad=2"},
    {"ffma NT 3-stage vec4 splitk2", {64, 48, 40, 1, 'N', 'T', 0}, "stages=3,vec=4,pad=4,splitk=2"},
    {"ffma TT batch2 splitk3 beta1", {66, 50, 36, 2, 'T', 'T', 1.0f}, "stages=2,vec=2,pad=2,splitk=3"},
    {"ffma TN vec2 1-stage tails", {66, 38, 26, 1, 'T', 'N', 0}, "stages=1,vec=2,pad=2"},
    {"ffma view A NN tails", {70, 45, 37, 1, 'N', 'N', 0}, "stages=2,a=view"},
    {"ffma view B vec4 NN tail n", {64, 44, 32, 1, 'N', 'N', 0.25f}, "stages=1,b=view,vec=4,pad=4"},
    {"ffma view both TN splitk7", {40, 40, 64, 1, 'T', 'N', 0}, "stages=1,a=view,b=view,splitk=7"},
    {"ffma view A T vec4 tail m", {68, 64, 16, 1, 'T', 'N', 0}, "stages=2,a=view,vec=4,pad=4"},
    {"ffma 8x8 micro rect walk", {150, 148, 24, 1, 'N', 'N', 0},
     "bm=64,bn=64,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=4,walk=rect:2x2"},
    {"ffma 2x1 micro pad1 stripe", {40, 37, 19, 1, 'N', 'T', 0},
     "bm=16,bn=16,bk=4,wm=8,wn=8,tm=2,tn=1,stages=2,pad=1,walk=stripe:2"},
    /* skinny class (plans.c skinny_tiles): thin tiles with tails on the
     * short side, split K, both op(B) layouts */
    {"ffma skinny M 4x128 tail m splitk5", {3, 150, 90, 1, 'N', 'T', 0},
     "bm=4,bn=128,bk=16,wm=4,wn=32,tm=1,tn=4,stages=2,vec=2,pad=4,splitk=5"},
    {"ffma skinny N 128x4 tail n splitk3 beta", {140, 3, 70, 1, 'N', 'N', 0.5f},
     "bm=128,bn=4,bk=16,wm=32,wn=4,tm=4,tn=1,stages=4,vec=1,pad=4,splitk=3"},
    {"ffma skinny N 128x16 warp 64x16", {130, 13, 48, 1, 'T', 'N', 0},
     "bm=128,bn=16,bk=16,wm=64,wn=16,tm=8,tn=4,stages=4,vec=1,pad=4,splitk=2"},
    {"ffma ld/stride padding batch", {33, 35, 21, 2, 'N', 'N', 0.5f, 3, 5, 7, 11}, "stages=2"},
    {"ffma random", {64, 72, 80, 1, 'N', 'N', 0}, "stages=3,vec=4,pad=4", 0, 0, 0, 0, 1},
    /* kfrag: [x][k] shared rows of the listed operands, 4 K steps per
     * LDS.128, strided rows/columns (FM or FN = 1, scalar epilogue runs) */
    {"ffma kfrag=a NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "kfrag=a,stages=3,pad=4"},
    {"ffma kfrag=b NT tails vec4 splitk2", {64, 45, 40, 1, 'N', 'T', 0}, "kfrag=b,stages=2,vec=4,pad=4,splitk=2"},
    {"ffma kfrag=ab NT batch2 beta1 splitk3 vec2", {66, 50, 36, 2, 'N', 'T', 1.0f},
     "kfrag=ab,stages=4,vec=2,pad=4,splitk=3"},
    {"ffma kfrag=ab TT pack=ab tails", {70, 45, 37, 1, 'T', 'T', 0}, "kfrag=ab,pack=ab,stages=2,pad=4"},
    {"ffma kfrag=a TN pack=a 1-stage ld pad batch2", {66, 38, 26, 2, 'T', 'N', 0.5f, 1, 3, 2, 5},
     "kfrag=a,pack=a,stages=1,pad=4"},
    {"ffma kfrag=a NN 1-stage vec4 tail m", {70, 64, 32, 1, 'N', 'N', 0}, "kfrag=a,stages=1,vec=4,pad=4"},
    {"ffma kfrag=a 128x128 8x8 4-stage tails", {260, 250, 70, 1, 'N', 'N', 0},
     "bm=128,bn=128,bk=16,wm=64,wn=32,tm=8,tn=8,stages=4,vec=1,pad=4,kfrag=a,walk=rect:2x2"},
    {"ffma kfrag=ab 64x64 bk32 NT random", {96, 80, 130, 1, 'N', 'T', 0},
     "bm=64,bn=64,bk=32,wm=32,wn=32,tm=4,tn=8,stages=3,vec=2,pad=4,kfrag=ab", 0, 0, 0, 0, 1},
    /* kloop=1: pointer copies, running slots, clamped re-copy of the last
     * block (nk < STAGES too: 1-3 K blocks per split-K slice) */
    {"ffma kloop NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "kloop=1,stages=3,pad=4"},
    {"ffma kloop kfrag=a NN vec4 4-stage splitk3 short slices", {64, 64, 40, 1, 'N', 'N', 0},
     "kloop=1,kfrag=a,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop kfrag=ab NT batch2 beta1 tails vec2", {66, 50, 38, 2, 'N', 'T', 1.0f},
     "kloop=1,kfrag=ab,stages=2,vec=2,pad=4"},
    {"ffma kloop TT tails transposing B", {70, 45, 37, 1, 'T', 'T', 0}, "kloop=1,stages=3,pad=4"},
    {"ffma kloop view A NN tails", {70, 45, 37, 1, 'N', 'N', 0}, "kloop=1,a=view,stages=2,pad=4"},
    {"ffma kloop kfrag=a TN pack=a ld pad", {66, 38, 26, 1, 'T', 'N', 0.5f, 1, 3, 2, 0},
     "kloop=1,kfrag=a,pack=a,stages=2,pad=4"},
    {"ffma kloop kfrag=a 128x256 random", {140, 260, 100, 1, 'N', 'N', 0},
     "bm=128,bn=256,bk=16,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,kfrag=a,kloop=1", 0, 0, 0, 0, 1},
    /* kloop=2: 32-bit shared addresses, unguarded passes at constant offsets
     * (guarded operands through tsr_cps); kloop=3: + two fragment sets
     * across K blocks (nk of 1..3 per split-K slice, odd nk against STAGES) */
    {"ffma kloop2 NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "kloop=2,stages=3,pad=4"},
    {"ffma kloop2 NT full vec4 batch2 splitk3", {64, 64, 40, 2, 'N', 'T', 0},
     "kloop=2,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop2 kfrag=ab NT beta1 tails vec2", {66, 50, 38, 1, 'N', 'T', 1.0f},
     "kloop=2,kfrag=ab,stages=2,vec=2,pad=4"},
    {"ffma kloop2 view A TT tails", {70, 45, 37, 1, 'T', 'T', 0}, "kloop=2,a=view,stages=2,pad=4"},
    {"ffma kloop3 NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "kloop=3,stages=3,pad=4"},
    {"ffma kloop3 NN full vec4 splitk3 short slices", {64, 64, 40, 1, 'N', 'N', 0},
     "kloop=3,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop3 TN batch2 ld pad 2-stage", {66, 38, 26, 2, 'T', 'N', 0.5f, 1, 3, 2, 5},
     "kloop=3,stages=2,pad=4"},
    {"ffma kloop3 128x128 cuBLAS geometry NT random", {140, 260, 100, 1, 'N', 'T', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,kloop=3", 0, 0, 0, 0, 1},
    /* kunroll=1: the kloop=1/2 body once per ring slot, a break ending the
     * last round (nk of 1..3 per split-K slice: fewer blocks than slots,
     * partial and whole rounds) */
    {"ffma kloop kunroll NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f},
     "kloop=1,kunroll=1,stages=3,pad=4"},
    {"ffma kloop kunroll NN vec4 4-stage splitk3 short slices", {64, 64, 40, 1, 'N', 'N', 0},
     "kloop=1,kunroll=1,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop kunroll TT tails 2-stage", {70, 45, 37, 1, 'T', 'T', 0}, "kloop=1,kunroll=1,stages=2,pad=4"},
    {"ffma kloop2 kunroll NT full vec4 batch2 splitk3", {64, 64, 40, 2, 'N', 'T', 0},
     "kloop=2,kunroll=1,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop2 kunroll kfrag=ab NT beta1 tails vec2", {66, 50, 38, 1, 'N', 'T', 1.0f},
     "kloop=2,kunroll=1,kfrag=ab,stages=2,vec=2,pad=4"},
    {"ffma kloop kunroll 128x128 cuBLAS geometry NN random", {256, 256, 96, 1, 'N', 'N', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,kloop=1,kunroll=1", 0, 0, 0, 0, 1},
    /* kloop=4: the copies spread over the K steps (a guarded operand's at step 0) */
    {"ffma kloop4 NN tails beta 3-stage", {70, 45, 37, 1, 'N', 'N', 0.5f}, "kloop=4,stages=3,pad=4"},
    {"ffma kloop4 NT full vec4 batch2 splitk3", {64, 64, 40, 2, 'N', 'T', 0},
     "kloop=4,stages=4,vec=4,pad=4,splitk=3"},
    {"ffma kloop4 TN full 2-stage bk4", {64, 64, 48, 1, 'T', 'N', 0}, "kloop=4,stages=2,bk=4,pad=4"},
    {"ffma kloop4 128x128 cuBLAS geometry NN random", {256, 256, 96, 1, 'N', 'N', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,kloop=4", 0, 0, 0, 0, 1},
    /* session 15 defaults: the 64x128 kloop=3 tile (large NN quantization,
     * medium NN, long K), the 64-row NT tile (kfrag=ab, split-K 4), the
     * 16-row NT skinny tile (kfrag=ab, 32 slices of 4 K blocks and a tail),
     * the unpacked unaligned 64x64 tile (4-byte copies, kloop=3, split-K 4) */
    {"ffma 64x128 kloop3 NN tails random", {130, 260, 100, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=4,kloop=3", 0, 0, 0, 0, 1},
    {"ffma 64x128 kfrag=ab NT splitk4 random", {64, 260, 200, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=4,kfrag=ab,kloop=1,splitk=4", 0,
     0, 0, 0, 1},
    {"ffma 16x128 kfrag=ab NT splitk32 random", {16, 260, 2100, 1, 'N', 'T', 0},
     "bm=16,bn=128,bk=16,wm=16,wn=32,tm=4,tn=4,stages=4,vec=4,pad=4,kfrag=ab,splitk=32", 0, 0, 0, 0,
     1},
    /* session 20 defaults: the skinny tiles with the big operand as [x][k]
     * rows (128x16 of 4 warps of 32x16, bk 32; 128x32 kfrag=a; 32x64 NT
     * kfrag=ab bk 32) and the long-K 32x32 NT tile with kfrag=ab */
    {"ffma 128x16 4x4 kfrag=a bk32 splitk3 M N K tails random", {260, 12, 300, 1, 'N', 'N', 0},
     "bm=128,bn=16,bk=32,wm=32,wn=16,tm=4,tn=4,stages=3,vec=4,pad=4,kfrag=a,splitk=3", 0, 0, 0, 0,
     1},
    {"ffma 128x32 kfrag=a M N K tails random", {300, 20, 92, 1, 'N', 'N', 0},
     "bm=128,bn=32,bk=16,wm=32,wn=32,tm=4,tn=8,stages=4,vec=4,pad=4,kfrag=a", 0, 0, 0, 0, 1},
    {"ffma 32x64 kfrag=ab bk32 NT splitk2 M N K tails beta random", {20, 200, 300, 1, 'N', 'T', 0.5f},
     "bm=32,bn=64,bk=32,wm=32,wn=32,tm=4,tn=8,stages=3,vec=4,pad=4,kfrag=ab,splitk=2", 0, 0, 0, 0,
     1},
    {"ffma 32x32 kfrag=ab NT splitk4 tails random", {40, 50, 700, 1, 'N', 'T', 0},
     "bm=32,bn=32,bk=16,wm=16,wn=32,tm=4,tn=4,stages=2,vec=4,pad=4,kfrag=ab,splitk=4", 0, 0, 0, 0,
     1},
    {"ffma unaligned 64x64 kloop3 vec1 splitk4 random", {67, 151, 291, 1, 'N', 'N', 0},
     "bm=64,bn=64,bk=16,wm=32,wn=32,tm=4,tn=8,stages=3,vec=1,pad=4,kloop=3,splitk=4", 0, 0, 0, 0,
     1},
    /* split=producer (FFMA): 4 multiplying warps, a copying warpgroup, mbarrier ring
     * (tails on M, N and K; fewer K blocks than slots per split-K slice) */
    {"ffma producer kloop2 128x128 NN M N K tails beta random", {140, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,kloop=2,split=producer", 0, 0,
     0, 0, 1},
    {"ffma producer kloop1 NT batch2 splitk3 short slices random", {130, 140, 40, 2, 'N', 'T', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=4,vec=4,pad=4,kloop=1,split=producer,splitk=3",
     0, 0, 0, 0, 1},
    {"ffma producer kloop3 fragment ring NN splitk2 M N K tails random", {140, 260, 100, 1, 'N', 'N', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=4,vec=4,pad=4,kloop=3,split=producer,splitk=2",
     0, 0, 0, 0, 1},
    {"ffma producer 64x128 three blocks NT M N K tails beta random", {100, 200, 92, 1, 'N', 'T', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3",
     0, 0, 0, 0, 1},
    /* tailk: whole waves of `wave` CTAs, then the last tiles in K slices
     * (25 tiles, waves of 7: 21 whole, 4 x 3 slices of 13 K blocks; 9 tiles
     * under one wave of 20: all sliced; 25 tiles in waves of 5: no tail) */
    {"ffma producer 64x128 three blocks tailk3 NN M N K tails beta random", {300, 520, 100, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "tailk=3,wave=7", 0, 0, 0, 0, 1},
    {"ffma producer 64x128 tailk4 pack=a NN walk rect random", {256, 256, 128, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "pack=a,walk=rect:2x2,tailk=4,wave=3", 0, 0, 0, 0, 1},
    {"ffma kloop2 tailk2 under one wave NT tails beta", {130, 140, 64, 1, 'N', 'T', 1.0f},
     "kloop=2,stages=3,pad=4,tailk=2,wave=20"},
    {"ffma kloop3 64x128 tailk5 whole waves (no tail) NN", {320, 640, 96, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=4,kloop=3,tailk=5,wave=5"},
    {"ffma producer tailk3 TN contract strict", {200, 260, 100, 1, 'T', 'N', 0},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "tailk=3,wave=5", .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    {"ffma producer kloop2 TT 2-stage contract strict", {140, 130, 100, 1, 'T', 'T', 0},
     "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=2,vec=4,pad=4,kloop=2,split=producer",
     .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* split=producer-tma: one producer warp, TMA boxes (zeros past M, N, K; a
     * packed A; strided batch items; kloop=3 consumers; tail slices) */
    {"ffma producer-tma 64x128 three blocks NN pack=a M N K tails beta random", {300, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a", 0, 0, 0, 0, 1},
    {"ffma producer-tma TN batch2 strided splitk2 kloop3 random", {132, 200, 72, 2, 'T', 'N', 0, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=3,split=producer-tma,splitk=2",
     0, 0, 0, 0, 1},
    {"ffma producer-tma NT pack=ab tailk3 contract strict", {200, 260, 100, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=ab,tailk=3,wave=5", .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* four blocks: a producer warpgroup (setmaxnreg; three of its warps
     * leave at once), the copying warp and the consumers as at three */
    {"ffma producer-tma four blocks NN pack=a tailk3 M N K tails beta random", {300, 520, 100, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=4,pack=a,tailk=3,wave=7", 0, 0, 0, 0, 1},
    /* kwait=1: block it+1's full barrier tested at the top of block it (the
     * three rings: the LDGSTS producer, the TMA producer with tail slices
     * and a ring longer than a slice's K range, split=tma's lagged refill) */
    {"ffma producer kwait=1 NT M N K tails beta random", {100, 200, 92, 1, 'N', 'T', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "kwait=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma kwait=1 NN pack=a tailk3 M N K tails random", {300, 520, 100, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,kwait=1", 0, 0, 0, 0, 1},
    {"ffma tma kwait=1 TN batch2 strided splitk2 kloop1 random", {132, 200, 72, 2, 'T', 'N', 0, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=tma,splitk=2,minblocks=4,"
     "kwait=1", 0, 0, 0, 0, 1},
    /* kunroll=1 on the producer rings: whole rounds unrolled per slot, then
     * the rolled loop for the last one or two rounds (K ranges of 1, 2,
     * STAGES, 2 STAGES and more blocks: tail slices, split-K, K tails) */
    {"ffma producer-tma kunroll=1 NN pack=a tailk3 M N K tails random", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,kunroll=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma kunroll=1 TN batch2 strided splitk2 kloop1 beta", {132, 200, 136, 2, 'T', 'N', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "kunroll=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma kunroll=1 NN one block", {64, 128, 16, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,kunroll=1", 0, 0, 0, 0, 1},
    /* pelect=1: the converged producer warp, one elected lane copying (NT:
     * both operands packed; kfrag=a: A's [m][k] box coordinates k first) */
    {"ffma producer-tma pelect=1 kunroll=1 NT pack=ab tailk3 M N K tails random", {200, 260, 164, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=ab,tailk=3,wave=5,kunroll=1,pelect=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma pelect=1 kfrag=a NN unpacked A batch2 splitk2 beta", {132, 200, 72, 2, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=2,split=producer-tma,"
     "pack=none,kfrag=a,splitk=2,pelect=1", 0, 0, 0, 0, 1},
    /* krel=1: each block frees its slot after its last shared loads (fenced),
     * before the last K step's FFMAs (tail slices, M N K tails; split-K with
     * kloop=1, batch, TN; kfrag=a with pelect) */
    {"ffma producer-tma krel=1 NN pack=a tailk3 M N K tails random", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,krel=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma krel=1 TN batch2 strided splitk2 kloop1 beta", {132, 200, 136, 2, 'T', 'N', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "krel=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma krel=1 pelect=1 kfrag=a NN unpacked A", {132, 200, 72, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=2,split=producer-tma,"
     "pack=none,kfrag=a,pelect=1,krel=1", 0, 0, 0, 0, 1},
    /* krel=2: slots freed in pairs after every second block (odd and even
     * block counts, one refill: nk = STAGES + 1, split-K with kloop=1) */
    {"ffma producer-tma krel=2 NN pack=a tailk3 M N K tails random", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,krel=2", 0, 0, 0, 0, 1},
    {"ffma producer-tma krel=2 TN batch2 strided splitk2 kloop1 beta", {132, 200, 136, 2, 'T', 'N', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "krel=2", 0, 0, 0, 0, 1},
    {"ffma producer-tma krel=2 pelect=1 NN K=80 (one refill)", {132, 200, 80, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "pack=a,pelect=1,krel=2", 0, 0, 0, 0, 1},
    {"ffma producer-tma krel=2 NT K=96 (nk even) random", {132, 200, 96, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "pack=ab,krel=2", 0, 0, 0, 0, 1},
    /* lazy=P: no prologue for A, the producer warps claim and pack its pieces
     * (a last piece shorter than P blocks, tail slices starting inside a
     * piece, batch items with strides, split-K, scalar loads where the rows
     * are not 16-byte aligned); the driver runs two calls, packed A poisoned
     * between them */
    {"ffma producer-tma lazy=2 krel=1 NN pack=a tailk3 M N K tails random", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,krel=1,lazy=2", 0, 0, 0, 0, 1},
    {"ffma producer-tma lazy=1 NT pack=ab batch2 strided splitk2 kloop1 beta", {132, 200, 136, 2, 'N', 'T', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "pack=ab,lazy=1", 0, 0, 0, 0, 1},
    {"ffma producer-tma lazy=3 NN odd lda (scalar loads) M N K tails contract strict", {100, 132, 90, 1, 'N', 'N', 0.5f, 1},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,lazy=3", .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* lazyk=G: the same pieces packed by a pack kernel of G CTAs (run before
     * each of the driver's two calls here: kernels run one after another) */
    {"ffma producer-tma lazy=2 lazyk=3 krel=1 NN pack=a tailk3 M N K tails random", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,krel=1,lazy=2,lazyk=3", 0, 0, 0, 0, 1},
    {"ffma producer-tma lazy=1 lazyk=2 NT pack=ab batch2 strided splitk2 kloop1 beta", {132, 200, 136, 2, 'N', 'T', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "pack=ab,lazy=1,lazyk=2", 0, 0, 0, 0, 1},
    {"ffma producer kunroll=1 NT M N K tails beta random", {100, 200, 92, 1, 'N', 'T', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "kunroll=1", 0, 0, 0, 0, 1},
    /* kfrag: a k-contiguous operand unpacked, its boxes [x][k] rows (bm x bk
     * floats: zeros past M and K; strided batch items; both operands) */
    {"ffma producer-tma kfrag=a NN unpacked A M N K tails beta random", {300, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=none,kfrag=a", 0, 0, 0, 0, 1},
    {"ffma producer-tma kfrag=a NT pack=b batch2 strided splitk2 random", {132, 200, 72, 2, 'N', 'T', 0, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=2,split=producer-tma,"
     "splitk=2,pack=b,kfrag=a", 0, 0, 0, 0, 1},
    {"ffma producer-tma kfrag=a TN pack=a (A's packed [m][k] rows) M N K tails random", {300, 260, 100, 1, 'T', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,kfrag=a", 0, 0, 0, 0, 1},
    {"ffma producer-tma kfrag=ab NT unpacked tailk3 contract strict", {200, 260, 100, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=none,kfrag=ab,tailk=3,wave=5", .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* split=tma: the same boxes, issued by warp 0 (four blocks an SM; the
     * lagged refill with K tails, batch, split-K, kloop=3, tail slices, and
     * a ring longer than the K range) */
    {"ffma tma 64x128 four blocks NN pack=a M N K tails beta random", {300, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=tma,"
     "minblocks=4,pack=a", 0, 0, 0, 0, 1},
    {"ffma tma TN batch2 strided splitk2 kloop3 random", {132, 200, 72, 2, 'T', 'N', 0, 4, 0, 1, 8},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=3,split=tma,splitk=2,minblocks=4",
     0, 0, 0, 0, 1},
    {"ffma tma NT pack=ab tailk3 contract strict", {200, 260, 100, 1, 'N', 'T', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=tma,"
     "minblocks=3,pack=ab,tailk=3,wave=5", .random = 3, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* 12x8 a thread (96x128 tiles at 3 blocks, 168 registers): a tile side
     * no extent divides, its M tail from TMA's zero fill */
    {"ffma tma 96x128 12x8 three blocks NN pack=a tails beta random", {200, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=96,bn=128,bk=16,wm=48,wn=64,tm=12,tn=8,stages=4,vec=4,pad=0,kloop=2,split=tma,"
     "minblocks=3,pack=a", 0, 0, 0, 0, 1},
    {"ffma tma 96x128 12x8 three blocks kfrag=a NN unpacked tails beta random", {200, 260, 100, 1, 'N', 'N', 0.5f},
     "bm=96,bn=128,bk=16,wm=48,wn=64,tm=12,tn=8,stages=4,vec=4,pad=0,kloop=2,split=tma,"
     "minblocks=3,pack=none,kfrag=a", 0, 0, 0, 0, 1},
    {"ffma tma 128x128 16x8 three blocks TN tails random", {200, 260, 100, 1, 'T', 'N', 0},
     "bm=128,bn=128,bk=16,wm=64,wn=64,tm=16,tn=8,stages=3,vec=4,pad=0,kloop=2,split=tma,"
     "minblocks=3", 0, 0, 0, 0, 1},
    {"ffma tma NN ring longer than K random", {100, 132, 20, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=tma,minblocks=4,pack=a",
     0, 0, 0, 0, 1},
    {"ffma kfrag=a 128x256 8x16 contract strict", {140, 260, 100, 1, 'N', 'N', 0},
     "bm=128,bn=256,bk=16,wm=64,wn=64,tm=8,tn=16,stages=4,vec=4,pad=4,kfrag=a", .random = 3,
     .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT},
    /* 3xTF32, base 32x32x16 tile, warp 16x16 (MI=1, NI=2), 128 threads */
    {"tf32 NN full 3-stage vec4", {64, 64, 32, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=3,vec=4,pad=4"},
    {"tf32 NN tails 2-stage", {70, 45, 37, 1, 'N', 'N', 0.5f},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=8"},
    {"tf32 TT tails 1-stage", {70, 45, 37, 1, 'T', 'T', 0},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=1,pad=4"},
    {"tf32 NT tails 1-stage vec2", {70, 46, 38, 1, 'N', 'T', 0},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=1,vec=2,pad=4"},
    {"tf32 NT batch2 splitk3 4-stage", {64, 64, 96, 2, 'N', 'T', 1.0f},
     "mma=tf32x3,tm=1,tn=1,bk=8,wm=16,wn=16,stages=4,vec=4,pad=4,splitk=3"},
    {"tf32 TN 2-stage stripe", {100, 90, 50, 1, 'T', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=16,wm=32,wn=32,stages=2,pad=8,walk=stripe:2"},
    {"tf32 random", {64, 64, 200, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=3,vec=4,pad=4", 0, 0, 0, 0, 1},
    {"tf32 random TT tails", {50, 70, 90, 1, 'T', 'T', 0.5f},
     "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=4", 0, 0, 0, 0, 1},
    /* fragment loads: ldmatrix ([x][k]), permuted V-wide LDS ([k][x]), XOR
     * swizzle (pad=0), odd-stride scalar fallback, minblocks */
    {"tf32 NN swizzle bk32 ldsm A, LDS.128 B", {128, 128, 96, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,vec=4,pad=0,minblocks=2"},
    {"tf32 TN swizzle bk16 LDS.64 both tails", {70, 45, 37, 1, 'T', 'N', 0.5f},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=32,bk=16,wm=32,wn=16,stages=2,vec=1,pad=0"},
    {"tf32 NT swizzle bk16 ldsm x4+x2 (NI=3)", {64, 96, 48, 1, 'N', 'T', 0},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=48,bk=16,wm=16,wn=24,stages=2,vec=4,pad=0"},
    {"tf32 TT swizzle bk8 LDS.128 A batch2", {130, 40, 40, 2, 'T', 'T', 1.0f},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=32,bk=8,wm=64,wn=16,stages=4,vec=2,pad=0"},
    {"tf32 NN odd pad scalar fallback", {70, 45, 37, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=32,bk=16,wm=16,wn=16,stages=2,vec=1,pad=1"},
    {"tf32 random NN pad8 ldsm V4 1-stage", {96, 64, 80, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=64,bk=16,wm=16,wn=32,stages=1,vec=4,pad=8", 0, 0, 0, 0, 1},
    {"tf32 random TN swizzle V4 A", {128, 64, 72, 1, 'T', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=64,wn=32,stages=3,vec=4,pad=0", 0, 0, 0, 0, 1},
    /* pack prologue (zero-padded operand copies in W): pack=a|b|ab x
     * NN/NT/TN/TT x K tails x M/N tails x batch 2 x beta x split-K 2 */
#define T3 "mma=tf32x3,tm=1,tn=1,bk=16,wm=16,wn=16,"
    {"pack tf32 a NN tails beta", {70, 45, 37, 1, 'N', 'N', 0.5f}, T3 "stages=2,vec=1,pad=0,pack=a"},
    {"pack tf32 b NT tails", {70, 46, 38, 1, 'N', 'T', 0}, T3 "stages=3,vec=1,pad=0,pack=b"},
    {"pack tf32 ab TN batch2 splitk2 beta ld pad", {66, 50, 37, 2, 'T', 'N', 1.0f, 1, 3, 2, 5},
     T3 "stages=2,vec=1,pad=4,splitk=2,pack=ab"},
    {"pack tf32 ab TT tails 1-stage", {70, 45, 37, 1, 'T', 'T', 0}, T3 "stages=1,vec=1,pad=4,pack=ab"},
    {"pack tf32 a TT batch2 splitk2", {45, 66, 41, 2, 'T', 'T', 0}, T3 "stages=3,vec=1,pad=0,splitk=2,pack=a"},
    {"pack tf32 b TN batch2 beta", {33, 70, 29, 2, 'T', 'N', 0.5f, 1, 1, 0, 1}, T3 "stages=2,vec=1,pad=0,pack=b"},
    {"pack tf32 ab NN swizzle bk32 vec1", {100, 90, 77, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,vec=1,pad=0,pack=ab"},
    {"pack tf32 ab NT 128x128 4-stage", {130, 140, 50, 1, 'N', 'T', 0},
     "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=16,wm=64,wn=32,stages=4,vec=1,pad=0,pack=ab"},
    {"pack tf32 random a NT beta", {50, 70, 90, 1, 'N', 'T', 0.5f}, T3 "stages=2,vec=1,pad=0,pack=a",
     0, 0, 0, 0, 1},
    {"pack tf32 random ab NN batch2 splitk2", {61, 75, 83, 2, 'N', 'N', 0},
     T3 "stages=3,vec=1,pad=0,splitk=2,pack=ab", 0, 0, 0, 0, 1},
    {"pack ffma a NN tails (transposed)", {70, 45, 37, 1, 'N', 'N', 0.5f}, "stages=2,vec=1,pad=4,pack=a"},
    {"pack ffma b NT tails (transposed)", {70, 46, 38, 1, 'N', 'T', 0}, "stages=2,vec=1,pad=4,pack=b"},
    {"pack ffma ab TT batch2 splitk2 beta", {66, 50, 36, 2, 'T', 'T', 1.0f}, "stages=3,vec=1,pad=4,splitk=2,pack=ab"},
    {"pack ffma ab TN 1-stage tails", {70, 45, 37, 1, 'T', 'N', 0}, "stages=1,vec=1,pad=4,pack=ab"},
    {"pack ffma ab NN batch2 splitk2 ld pad", {37, 41, 29, 2, 'N', 'N', 0, 1, 3, 0, 2},
     "stages=2,vec=1,pad=4,splitk=2,pack=ab"},
    {"pack ffma a view NN", {70, 45, 37, 1, 'N', 'N', 0}, "stages=2,a=view,vec=1,pad=4,pack=a"},
    {"pack ffma b view NT vec4", {64, 44, 30, 1, 'N', 'T', 0.25f}, "stages=1,b=view,vec=1,pad=4,pack=b"},
    {"pack ffma 64x32 brief plan ab", {130, 70, 37, 1, 'N', 'N', 0},
     "bm=64,bn=32,bk=16,wm=32,wn=16,tm=4,tn=4,stages=2,pad=4,vec=1,pack=ab"},
    {"pack ffma random ab NT", {64, 72, 81, 1, 'N', 'T', 0}, "stages=3,vec=1,pad=4,pack=ab", 0, 0, 0,
     0, 1},
#undef T3
    /* the accuracy contract under the truncating-accumulation model */
#define TC "tm=1,tn=1,bm=32,bn=32,bk=32,wm=16,wn=16,stages=3,vec=4,pad=0"
    {"contract tf32x3 step RZ K=2048", {64, 64, 2048, 1, 'N', 'N', 0}, "mma=tf32x3," TC, .random = 1,
     .contract = TSR_PREC_FP32X3, .rz = 1},
    {"contract tf32x3 chain RZ K=2048 (breach)", {64, 64, 2048, 1, 'N', 'N', 0},
     "mma=tf32x3,acc=chain," TC, .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1, .breach = 1},
    {"contract tf32x3 step RZ TN beta splitk2", {64, 48, 1024, 1, 'T', 'N', 0.5f},
     "mma=tf32x3,splitk=2," TC, .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"contract tf32 chain RZ (tf32 bound)", {64, 64, 512, 1, 'N', 'N', 0}, "mma=tf32,acc=chain," TC,
     .random = 1, .prec = TSR_PREC_TF32, .contract = TSR_PREC_TF32, .rz = 1},
    {"contract tf32 chain RZ under the FP32 contract (breach)", {64, 64, 512, 1, 'N', 'N', 0},
     "mma=tf32,acc=chain," TC, .random = 1, .prec = TSR_PREC_TF32, .contract = TSR_PREC_FP32X3,
     .rz = 1, .breach = 1},
    {"specials tf32x3 step NN", {40, 36, 52, 1, 'N', 'N', 0}, "mma=tf32x3," TC, .random = 1,
     .contract = TSR_PREC_FP32X3, .special = 1},
    {"specials tf32x3 step TT splitk2 beta", {40, 36, 64, 1, 'T', 'T', 0.5f}, "mma=tf32x3,splitk=2," TC,
     .random = 1, .contract = TSR_PREC_FP32X3, .special = 1},
    {"specials tf32 pack=ab", {37, 35, 50, 1, 'N', 'N', 0}, "mma=tf32,pack=ab,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,vec=1,pad=0",
     .random = 1, .prec = TSR_PREC_TF32, .contract = TSR_PREC_TF32, .special = 1},
    /* split=pack: the prologue stores the TF32 big/small parts of both
     * operands ([x][k], transposed where the user's is [k][x]); the loop
     * loads them (ldmatrix, or 32-bit LDS at an odd row stride), no cvt */
    {"split=pack contract tf32x3 step RZ K=2048", {64, 64, 2048, 1, 'N', 'N', 0}, "mma=tf32x3,split=pack," TC,
     .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"split=pack contract tf32x3 step RZ TN beta splitk2", {64, 48, 1024, 1, 'T', 'N', 0.5f},
     "mma=tf32x3,split=pack,splitk=2," TC, .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"split=pack contract tf32 chain RZ (tf32 bound)", {64, 64, 512, 1, 'N', 'T', 0},
     "mma=tf32,acc=chain,split=pack," TC, .random = 1, .prec = TSR_PREC_TF32,
     .contract = TSR_PREC_TF32, .rz = 1},
    {"split=pack specials tf32x3 step NN", {40, 36, 52, 1, 'N', 'N', 0}, "mma=tf32x3,split=pack," TC,
     .random = 1, .contract = TSR_PREC_FP32X3, .special = 1},
    {"split=pack specials tf32x3 step TT splitk2 beta", {40, 36, 64, 1, 'T', 'T', 0.5f},
     "mma=tf32x3,split=pack,splitk=2," TC, .random = 1, .contract = TSR_PREC_FP32X3, .special = 1},
    {"split=pack specials tf32 TN", {37, 35, 50, 1, 'T', 'N', 0},
     "mma=tf32,split=pack,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=0", .random = 1,
     .prec = TSR_PREC_TF32, .contract = TSR_PREC_TF32, .special = 1},
#undef TC
/* an Inf and an FLT_MAX in one row and one split-K slice... or two: slices
 * overflowing to opposite infinities made NaN where IEEE (and the strict
 * k-ascending order) gives +-Inf; the reduction now recomputes such sums */
#define TD "mma=tf32x3,bm=32,bn=32,bk=16,wm=16,wn=16,tm=1,tn=1,stages=2,vec=4,pad=0,splitk=2"
    {"specials device TN splitk2 beta wide inline", {200, 136, 300, 1, 'T', 'N', 0.5f}, TD,
     .random = 2, .contract = TSR_PREC_FP32X3, .special = 2},
    {"specials device TN splitk2 beta wide pack", {200, 136, 300, 1, 'T', 'N', 0.5f}, TD ",split=pack",
     .random = 2, .contract = TSR_PREC_FP32X3, .special = 2},
    {"specials device TN splitk2 beta wide ffma", {200, 136, 300, 1, 'T', 'N', 0.5f},
     "stages=2,splitk=2", .random = 2, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT,
     .special = 2},
    {"specials device NN tailk3 beta ffma producer Inf vs overflow", {200, 260, 300, 1, 'N', 'N', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3,"
     "tailk=3,wave=5", .random = 1, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT,
     .special = 3, .poison = 1},
    {"specials device TN tailk2 ffma", {200, 136, 300, 1, 'T', 'N', 0},
     "stages=2,tailk=2,wave=20", .random = 2, .prec = TSR_PREC_STRICT, .contract = TSR_PREC_STRICT,
     .special = 2},
#undef TD
#define SP "mma=tf32x3,tm=1,tn=1,split=pack,"
    {"split=pack NN tails beta 2-stage swizzle", {70, 45, 37, 1, 'N', 'N', 0.5f}, SP "bk=16,wm=16,wn=16,stages=2,pad=0"},
    {"split=pack NT tails 3-stage pad4", {70, 46, 38, 1, 'N', 'T', 0}, SP "bk=16,wm=16,wn=16,stages=3,pad=4"},
    {"split=pack TN batch2 splitk2 beta ld pad bk8", {66, 50, 37, 2, 'T', 'N', 1.0f, 1, 3, 2, 5},
     SP "bk=8,wm=16,wn=16,stages=4,pad=0,splitk=2"},
    {"split=pack TT tails 1-stage pad8", {70, 45, 37, 1, 'T', 'T', 0}, SP "bk=16,wm=16,wn=16,stages=1,pad=8"},
    {"split=pack NN batch2 splitk3 bk32", {100, 90, 200, 2, 'N', 'N', 0},
     SP "bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,pad=0,splitk=3"},
    {"split=pack NT ldsm x4+x2 (NI=3)", {64, 96, 48, 1, 'N', 'T', 0}, SP "bm=32,bn=48,bk=16,wm=16,wn=24,stages=2,pad=0"},
    {"split=pack TN odd pad 32-bit LDS", {70, 45, 37, 1, 'T', 'N', 0}, SP "bm=32,bn=32,bk=16,wm=16,wn=16,stages=2,pad=1"},
    {"split=pack NN acc=chain bk32 pad4", {70, 70, 90, 1, 'N', 'N', 0}, SP "acc=chain,bm=64,bn=32,bk=32,wm=32,wn=16,stages=2,pad=4"},
    {"split=pack tf32 NT tails", {70, 46, 38, 1, 'N', 'T', 0.5f},
     "mma=tf32,acc=chain,tm=1,tn=1,split=pack,bk=16,wm=16,wn=16,stages=3,pad=0", .prec = TSR_PREC_TF32},
    {"split=pack 128x256 warp 64x64 bk8 tails (large default geometry)", {260, 250, 70, 1, 'N', 'N', 0},
     SP "bm=128,bn=256,bk=8,wm=64,wn=64,stages=4,pad=0,walk=rect:8x16"},
    {"split=pack 128x256 warp 64x64 bk16 TT beta", {130, 260, 50, 1, 'T', 'T', 0.5f},
     SP "bm=128,bn=256,bk=16,wm=64,wn=64,stages=4,pad=0,walk=rect:8x16"},
    {"split=pack 128x128 warp 64x32 bk16 TN splitk2", {130, 140, 80, 1, 'T', 'N', 0},
     SP "bm=128,bn=128,bk=16,wm=64,wn=32,stages=3,pad=0,splitk=2"},
    {"split=pack random NN tails", {61, 75, 83, 1, 'N', 'N', 0}, SP "bk=16,wm=16,wn=16,stages=3,pad=0",
     0, 0, 0, 0, 1},
    {"split=pack random TT batch2 splitk2 beta", {50, 70, 90, 2, 'T', 'T', 0.5f},
     SP "bk=8,wm=16,wn=16,stages=2,pad=0,splitk=2", 0, 0, 0, 0, 1},
#undef SP
    /* wgmma (sm_90a): warpgroup MMA from shared-memory descriptors, the split
     * in shared memory, both operands k-major (x-contiguous ones packed) */
#define WG "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,"
    {"wgmma NT 1 warpgroup", {128, 64, 64, 1, 'N', 'T', 0}, WG "bm=64,bn=64,bk=16,wm=64,wn=64,stages=2,vec=4"},
    {"wgmma NT 2 warpgroups tails beta vec1", {130, 70, 45, 1, 'N', 'T', 0.5f},
     WG "bm=128,bn=32,bk=16,wm=64,wn=32,stages=3,vec=1"},
    {"wgmma NN (B packed) 3 chunks bk8 4-stage", {64, 96, 40, 1, 'N', 'N', 0},
     WG "bm=64,bn=96,bk=8,wm=64,wn=32,stages=4,vec=4"},
    {"wgmma TN (both packed) wm128 n40 splitk2", {150, 40, 64, 1, 'T', 'N', 0},
     WG "bm=128,bn=40,bk=16,wm=128,wn=40,stages=2,vec=4,splitk=2"},
    {"wgmma TT batch2 beta ld pad", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WG "bm=128,bn=64,bk=8,wm=64,wn=64,stages=2,vec=1"},
    {"wgmma 128x256 wn128 NT tails rect", {130, 260, 40, 1, 'N', 'T', 0},
     WG "bm=128,bn=256,bk=16,wm=64,wn=128,stages=3,vec=4,walk=rect:2x2"},
    {"wgmma-tf32 NT tails", {70, 45, 37, 1, 'N', 'T', 0}, "mma=wgmma-tf32,tm=1,tn=1,pad=0,bm=64,bn=64,bk=16,wm=64,wn=64,stages=2,vec=1",
     .prec = TSR_PREC_TF32},
    {"wgmma random NT", {128, 64, 200, 1, 'N', 'T', 0}, WG "bm=64,bn=64,bk=16,wm=64,wn=32,stages=3,vec=4", 0, 0, 0, 0, 1},
    {"wgmma random NN batch2 2 warpgroups", {100, 72, 90, 2, 'N', 'N', 0.5f}, WG "bm=128,bn=72,bk=8,wm=64,wn=24,stages=2,vec=1", 0, 0, 0, 0, 1},
    /* split=producer: a producer warpgroup copies and splits, the consumer
     * warpgroups multiply; full/empty mbarriers per stage */
#define WP WG "split=producer,"
    {"wgmma producer NT 2 consumers tails beta vec1", {130, 70, 45, 1, 'N', 'T', 0.5f},
     WP "bm=128,bn=32,bk=16,wm=64,wn=32,stages=2,vec=1"},
    {"wgmma producer NN (B packed) 1 consumer 3 chunks bk8 4-stage", {64, 96, 40, 1, 'N', 'N', 0},
     WP "bm=64,bn=96,bk=8,wm=64,wn=32,stages=4,vec=4"},
    {"wgmma producer TN (both packed) wm128 n40 splitk2", {150, 40, 64, 1, 'T', 'N', 0},
     WP "bm=128,bn=40,bk=16,wm=128,wn=40,stages=2,vec=4,splitk=2"},
    {"wgmma producer TT batch2 beta ld pad K=1 block", {70, 66, 13, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WP "bm=128,bn=64,bk=16,wm=64,wn=64,stages=3,vec=1"},
    {"wgmma producer 256x128 wm128 wn128 NN tails rect", {260, 130, 72, 1, 'N', 'N', 0},
     WP "bm=256,bn=128,bk=16,wm=128,wn=128,stages=3,vec=4,walk=rect:2x2"},
    {"wgmma producer random NN 2 consumers wn64 parts", {100, 136, 200, 1, 'N', 'N', 0},
     WP "bm=128,bn=128,bk=16,wm=64,wn=64,stages=3,vec=4", 0, 0, 0, 0, 1},
    {"wgmma-tf32 producer NT tails", {70, 45, 37, 1, 'N', 'T', 0},
     "mma=wgmma-tf32,tm=1,tn=1,pad=0,split=producer,bm=64,bn=64,bk=16,wm=64,wn=64,stages=2,vec=1",
     .prec = TSR_PREC_TF32},
    {"contract wgmma-tf32x3 producer RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     WP "vec=1,bm=128,bn=128,bk=16,wm=64,wn=128,stages=3", .random = 2, .contract = TSR_PREC_FP32X3,
     .rz = 1, .seed = 3},
    {"specials wgmma-tf32x3 producer TT splitk2 beta", {40, 36, 64, 1, 'T', 'T', 0.5f},
     WP "bm=64,bn=64,wm=64,wn=64,stages=3,vec=4,splitk=2,bk=16", .random = 1,
     .contract = TSR_PREC_FP32X3, .special = 1},
#undef WP
    /* split=producer-reg: the producer's loads land in registers */
#define WR2 WG "split=producer-reg,"
    {"wgmma producer-reg NT 2 consumers tails beta vec1", {130, 70, 45, 1, 'N', 'T', 0.5f},
     WR2 "bm=128,bn=32,bk=16,wm=64,wn=32,stages=2,vec=1"},
    {"wgmma producer-reg NT vec4 K tail", {64, 72, 45, 1, 'N', 'T', 0, 3, 3}, WR2 "bm=64,bn=72,bk=16,wm=64,wn=24,stages=3,vec=4"},
    {"wgmma producer-reg NT one K block", {64, 64, 5, 1, 'N', 'T', 0}, WR2 "bm=128,bn=64,bk=8,wm=64,wn=64,stages=2,vec=1"},
    {"wgmma producer-reg NN (B packed) 1 consumer 3 chunks bk8 4-stage", {64, 96, 40, 1, 'N', 'N', 0},
     WR2 "bm=64,bn=96,bk=8,wm=64,wn=32,stages=4,vec=4"},
    {"wgmma producer-reg TT batch2 beta ld pad splitk2", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WR2 "bm=128,bn=64,bk=8,wm=64,wn=64,stages=3,vec=1,splitk=2"},
    {"wgmma producer-reg 256x128 wm128 wn128 bk8 NN tails rect", {260, 130, 72, 1, 'N', 'N', 0},
     WR2 "bm=256,bn=128,bk=8,wm=128,wn=128,stages=4,vec=4,walk=rect:2x2"},
    {"wgmma producer-reg random NT 128x256 wn128 bk8", {130, 260, 100, 1, 'N', 'T', 0.5f},
     WR2 "bm=128,bn=256,bk=8,wm=64,wn=128,stages=4,vec=4", 0, 0, 0, 0, 1},
    {"contract wgmma-tf32x3 producer-reg RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     WR2 "vec=1,bm=128,bn=128,bk=8,wm=64,wn=128,stages=4", .random = 2, .contract = TSR_PREC_FP32X3,
     .rz = 1, .seed = 3},
    {"specials wgmma-tf32x3 producer-reg NN", {40, 36, 52, 1, 'N', 'N', 0},
     WR2 "bm=64,bn=64,wm=64,wn=64,stages=3,vec=4,bk=16", .random = 1, .contract = TSR_PREC_FP32X3,
     .special = 1},
#undef WR2
    /* split=producer-pack: the pack prologue splits, the producer copies the planes */
#define WPP WG "split=producer-pack,"
    {"wgmma producer-pack NT 2 consumers tails beta", {130, 70, 45, 1, 'N', 'T', 0.5f},
     WPP "bm=128,bn=32,bk=16,wm=64,wn=32,stages=2,vec=4"},
    {"wgmma producer-pack TT batch2 beta ld pad splitk2", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WPP "bm=128,bn=64,bk=8,wm=64,wn=64,stages=3,vec=4,splitk=2"},
    {"wgmma producer-pack 256x128 wm128 wn128 bk8 NN tails rect", {260, 130, 72, 1, 'N', 'N', 0},
     WPP "bm=256,bn=128,bk=8,wm=128,wn=128,stages=6,vec=4,walk=rect:2x2"},
    {"wgmma producer-pack random NN one K block", {100, 72, 7, 1, 'N', 'N', 0},
     WPP "bm=128,bn=72,bk=8,wm=64,wn=24,stages=4,vec=4", 0, 0, 0, 0, 1},
    {"wgmma-tf32 producer-pack NT tails", {70, 45, 37, 1, 'N', 'T', 0},
     "mma=wgmma-tf32,tm=1,tn=1,pad=0,split=producer-pack,bm=64,bn=64,bk=16,wm=64,wn=64,stages=2,vec=4",
     .prec = TSR_PREC_TF32},
    {"contract wgmma-tf32x3 producer-pack RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     WPP "vec=4,bm=128,bn=128,bk=8,wm=64,wn=128,stages=4", .random = 2, .contract = TSR_PREC_FP32X3,
     .rz = 1, .seed = 3},
    {"specials wgmma-tf32x3 producer-pack TN", {40, 36, 52, 1, 'T', 'N', 0},
     WPP "bm=64,bn=64,wm=64,wn=64,stages=3,vec=4,bk=16", .random = 1, .contract = TSR_PREC_FP32X3,
     .special = 1},
#undef WPP
    /* split=producer-bulk: tiled planes, one thread's bulk copies per stage */
#define WPB WG "split=producer-bulk,"
    {"wgmma producer-bulk NT 2 consumers tails beta", {130, 70, 45, 1, 'N', 'T', 0.5f},
     WPB "bm=128,bn=32,bk=16,wm=64,wn=32,stages=2,vec=4"},
    {"wgmma producer-bulk TT batch2 beta ld pad splitk2", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WPB "bm=128,bn=64,bk=8,wm=64,wn=64,stages=3,vec=4,splitk=2"},
    {"wgmma producer-bulk 256x128 wm128 wn128 bk8 NN tails rect", {260, 130, 72, 1, 'N', 'N', 0},
     WPB "bm=256,bn=128,bk=8,wm=128,wn=128,stages=6,vec=4,walk=rect:2x2"},
    {"wgmma producer-bulk 256x128 wn64 bk32 NT tails", {260, 136, 100, 1, 'N', 'T', 0.5f},
     WPB "bm=256,bn=128,bk=32,wm=128,wn=64,stages=2,vec=4"},
    {"wgmma producer-bulk random NN one K block", {100, 72, 7, 1, 'N', 'N', 0},
     WPB "bm=128,bn=72,bk=8,wm=64,wn=24,stages=4,vec=4", 0, 0, 0, 0, 1},
    {"wgmma-tf32 producer-bulk TN tails", {70, 45, 37, 1, 'T', 'N', 0},
     "mma=wgmma-tf32,tm=1,tn=1,pad=0,split=producer-bulk,bm=64,bn=64,bk=16,wm=64,wn=64,stages=2,vec=4",
     .prec = TSR_PREC_TF32},
    {"contract wgmma-tf32x3 producer-bulk RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     WPB "vec=4,bm=128,bn=128,bk=8,wm=64,wn=128,stages=4", .random = 2, .contract = TSR_PREC_FP32X3,
     .rz = 1, .seed = 3},
    /* one m64 slice and chunk: two partial-sum buffers beside the bulk producer */
    {"wgmma producer-bulk two buffers 128x128 wm64 bk16 NN tails", {130, 136, 100, 1, 'N', 'N', 0},
     WPB "bm=128,bn=128,bk=16,wm=64,wn=128,stages=3,vec=4"},
    {"wgmma producer-bulk two buffers bk32 TT batch2 beta ld pad splitk2", {70, 66, 77, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     WPB "bm=128,bn=64,bk=32,wm=64,wn=64,stages=2,vec=4,splitk=2"},
    {"wgmma-tf32 producer-bulk two buffers NT tails", {70, 45, 37, 1, 'N', 'T', 0},
     "mma=wgmma-tf32,tm=1,tn=1,pad=0,split=producer-bulk,bm=128,bn=64,bk=16,wm=64,wn=64,stages=2,vec=4",
     .prec = TSR_PREC_TF32},
    {"contract wgmma-tf32x3 producer-bulk two buffers RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     WPB "vec=4,bm=128,bn=128,bk=16,wm=64,wn=128,stages=4", .random = 2, .contract = TSR_PREC_FP32X3,
     .rz = 1, .seed = 3},
    {"specials wgmma-tf32x3 producer-bulk NT", {40, 36, 52, 1, 'N', 'T', 0},
     WPB "bm=64,bn=64,wm=64,wn=64,stages=3,vec=4,bk=16", .random = 1, .contract = TSR_PREC_FP32X3,
     .special = 1},
#undef WPB
    /* mma=wgmma-s8 (Ozaki scheme II): residue planes, one modulus per grid
     * row, the Garner reconstruction; dyadic inputs are exact (tolerance 0) */
#define OZ "mma=wgmma-s8,split=producer-bulk,tm=1,tn=1,pad=0,vec=4,"
    {"ozaki NN tails dyadic", {130, 70, 45, 1, 'N', 'N', 0},
     OZ "bm=128,bn=64,bk=32,wm=64,wn=64,stages=3,moduli=6", .prec = TSR_PREC_OZAKI},
    {"ozaki TT batch2 beta ld pad 2 consumers", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     OZ "bm=128,bn=64,bk=64,wm=64,wn=32,stages=2,moduli=5", .prec = TSR_PREC_OZAKI},
    {"ozaki NT 256x128 wm128 wn128 tails beta rect", {260, 136, 100, 1, 'N', 'T', 0.5f},
     OZ "bm=256,bn=128,bk=32,wm=128,wn=128,stages=3,moduli=8,walk=rect:2x2", .prec = TSR_PREC_OZAKI},
    {"ozaki TN one K block random", {100, 72, 7, 1, 'T', 'N', 0},
     OZ "bm=64,bn=80,bk=32,wm=64,wn=16,stages=4,moduli=7", 0, 0, 0, 0, 1, .prec = TSR_PREC_OZAKI},
    {"contract ozaki 8 moduli 96x80x129 random", {96, 80, 129, 1, 'N', 'N', 0},
     OZ "bm=128,bn=128,bk=64,wm=64,wn=128,stages=3,moduli=8", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .seed = 3},
    {"contract ozaki 8 moduli 96x80x129 normal", {96, 80, 129, 1, 'N', 'N', 0},
     OZ "bm=128,bn=128,bk=64,wm=64,wn=128,stages=3,moduli=8", .random = 3,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .seed = 3},
    {"contract ozaki 8 moduli 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     OZ "bm=128,bn=128,bk=64,wm=64,wn=128,stages=3,moduli=8", .random = 2,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .seed = 3},
    {"contract ozaki 8 moduli K=2048 NT random", {64, 64, 2048, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=128,wm=64,wn=64,stages=3,moduli=8", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    /* 4 moduli keep 10 bits per operand at K = 2048: the guard finds every
     * output's rounding bound over the contract's and recomputes it strictly
     * (its error is then the strict reference's) */
    {"contract ozaki 4 moduli K=2048 guard", {64, 64, 2048, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=128,wm=64,wn=64,stages=3,moduli=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    /* gstride: the guard's magnitudes over every 2nd / 3rd / 4th K block
     * only (K blocks 0, 2, 4 of 5 on the wide family; 0, 3, ..., 15 of 16
     * with the guard firing everywhere; a stride past the last block) */
    {"contract ozaki 8 moduli 96x80x129 wide gstride 2", {96, 80, 129, 1, 'N', 'N', 0},
     OZ "bm=128,bn=128,bk=32,wm=64,wn=128,stages=3,moduli=8,gstride=2", .random = 2,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .seed = 3},
    {"contract ozaki 8 moduli K=2048 NT random gstride 4", {64, 64, 2048, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=128,wm=64,wn=64,stages=3,moduli=8,gstride=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    {"contract ozaki 4 moduli K=2048 guard gstride 3", {64, 64, 2048, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=128,wm=64,wn=64,stages=3,moduli=4,gstride=3", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    {"ozaki TT batch2 beta ld pad gstride 9", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     OZ "bm=128,bn=64,bk=32,wm=64,wn=32,stages=2,moduli=5,gstride=9", .prec = TSR_PREC_OZAKI},
    /* rvec=4: four outputs of a row per reconstruction thread (N % 4 == 0),
     * through the guard, the specials and the FLT_MAX overflow; N = 66 and 70:
     * the last quad of a row half past N */
    {"contract ozaki 8 moduli 96x80x129 wide rvec 4", {96, 80, 129, 1, 'N', 'N', 0},
     OZ "bm=128,bn=128,bk=64,wm=64,wn=128,stages=3,moduli=8,rvec=4", .random = 2,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .seed = 3},
    {"contract ozaki 4 moduli K=2048 guard rvec 4", {64, 64, 2048, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=128,wm=64,wn=64,stages=3,moduli=4,rvec=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    {"ozaki NT 256x128 tails beta rect rvec 4", {260, 136, 100, 1, 'N', 'T', 0.5f},
     OZ "bm=256,bn=128,bk=32,wm=128,wn=128,stages=3,moduli=8,walk=rect:2x2,rvec=4", .prec = TSR_PREC_OZAKI},
    {"ozaki TT batch2 beta ld pad rvec 4 N%4=2", {70, 66, 37, 2, 'T', 'T', 1.0f, 1, 3, 2, 5},
     OZ "bm=128,bn=64,bk=32,wm=64,wn=32,stages=2,moduli=5,rvec=4", .prec = TSR_PREC_OZAKI},
    {"ozaki NN batch2 beta ld pad rvec 4", {70, 68, 37, 2, 'N', 'N', 1.0f, 1, 3, 2, 5},
     OZ "bm=128,bn=64,bk=32,wm=64,wn=32,stages=2,moduli=6,rvec=4", .prec = TSR_PREC_OZAKI},
    {"contract ozaki 8 moduli 98x70x129 random rvec 4 N%4=2", {98, 70, 129, 1, 'N', 'T', 0},
     OZ "bm=128,bn=128,bk=64,wm=64,wn=128,stages=3,moduli=8,rvec=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI},
    {"specials ozaki NT rvec 4", {40, 36, 52, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=32,wm=64,wn=64,stages=3,moduli=8,rvec=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .special = 1},
    {"specials ozaki 7 moduli FLT_MAX NN rvec 4 (Frobenius breach)", {96, 80, 256, 1, 'N', 'N', 0},
     OZ "bm=64,bn=64,bk=64,wm=64,wn=64,stages=2,moduli=7,rvec=4", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .special = 2, .breach = 1},
    {"specials ozaki NT", {40, 36, 52, 1, 'N', 'T', 0},
     OZ "bm=64,bn=64,bk=32,wm=64,wn=64,stages=3,moduli=8", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .special = 1},
    {"specials ozaki opposite overflows TT", {40, 36, 52, 1, 'T', 'T', 0},
     OZ "bm=64,bn=64,bk=32,wm=64,wn=64,stages=3,moduli=8", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .special = 3},
    /* 7 moduli at K = 256 keep 24 bits: FLT_MAX rounds up to 2^128, the
     * output overflows, and the reconstruction recomputes it strictly (the
     * classes must be right); the Frobenius clause breaks, as it should: 24
     * bits round the top binade (the default plans keep >= 25) */
    {"specials ozaki 7 moduli FLT_MAX NN (Frobenius breach)", {96, 80, 256, 1, 'N', 'N', 0},
     OZ "bm=64,bn=64,bk=64,wm=64,wn=64,stages=2,moduli=7", .random = 1,
     .contract = TSR_PREC_OZAKI, .prec = TSR_PREC_OZAKI, .special = 2, .breach = 1},
#undef OZ
#define WC "tm=1,tn=1,pad=0,bm=64,bn=64,wm=64,wn=64,stages=3,vec=4"
    {"contract wgmma-tf32x3 step RZ K=2048 bk16", {64, 64, 2048, 1, 'N', 'T', 0}, WC ",mma=wgmma-tf32x3,bk=16",
     .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"contract wgmma-tf32x3 step RZ K=2048 bk32", {64, 64, 2048, 1, 'N', 'T', 0}, WC ",mma=wgmma-tf32x3,bk=32",
     .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"contract wgmma-tf32x3 step RZ K=2048 bk64", {64, 64, 2048, 1, 'N', 'T', 0}, WC ",mma=wgmma-tf32x3,bk=64",
     .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1},
    {"contract wgmma-tf32x3 chain RZ K=2048 (breach)", {64, 64, 2048, 1, 'N', 'T', 0},
     WC ",mma=wgmma-tf32x3,acc=chain,bk=16", .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1, .breach = 1},
    {"contract wgmma-tf32 chain RZ (tf32 bound)", {64, 64, 512, 1, 'N', 'T', 0}, WC ",mma=wgmma-tf32,acc=chain,bk=16",
     .random = 1, .prec = TSR_PREC_TF32, .contract = TSR_PREC_TF32, .rz = 1},
    /* test_cuda_gpu's contract families at 96x80x129 (seed 3, its plan): the
     * stage-1 kernel breached the wide family on the H200 (1.52e-7 > 1.21e-7) */
#define WF "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,vec=1,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3"
    {"contract wgmma-tf32x3 RZ 96x80x129 wide (H200 breach)", {96, 80, 129, 1, 'N', 'N', 0}, WF,
     .random = 2, .contract = TSR_PREC_FP32X3, .rz = 1, .seed = 3},
    {"contract wgmma-tf32x3 RZ 96x80x129 random", {96, 80, 129, 1, 'N', 'N', 0}, WF,
     .random = 1, .contract = TSR_PREC_FP32X3, .rz = 1, .seed = 3},
    {"contract wgmma-tf32x3 RZ 96x80x129 normal", {96, 80, 129, 1, 'N', 'N', 0}, WF,
     .random = 3, .contract = TSR_PREC_FP32X3, .rz = 1, .seed = 3},
    {"contract mma.sync tf32x3 RZ 96x80x129 wide", {96, 80, 129, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=32,wm=64,wn=32,stages=3,vec=1,pad=4",
     .random = 2, .contract = TSR_PREC_FP32X3, .rz = 1, .seed = 3},
#undef WF
    {"specials wgmma-tf32x3 NN", {40, 36, 52, 1, 'N', 'N', 0}, WC ",mma=wgmma-tf32x3,bk=16",
     .random = 1, .contract = TSR_PREC_FP32X3, .special = 1},
    {"specials wgmma-tf32x3 TT splitk2 beta", {40, 36, 64, 1, 'T', 'T', 0.5f}, WC ",mma=wgmma-tf32x3,splitk=2,bk=16",
     .random = 1, .contract = TSR_PREC_FP32X3, .special = 1},
#undef WC
#undef WG
    /* mma=gemv (docs/emit.md "GEMV"): both big-operand layouts (k-contiguous:
     * warps along k and a shuffle butterfly; x-contiguous: vec outputs a
     * thread, thread groups along k summed in shared memory), both sides
     * short, tails on every axis, vector and scalar loads, split-K, batch,
     * beta != 0 and beta = 0 against a NaN-poisoned C */
#define GV "mma=gemv,wm=1,wn=1,tm=1,tn=1,stages=1,pad=0,"
    {"gemv M=1 NN x-contig vec4 tails splitk3", {1, 70, 100, 1, 'N', 'N', 0, 0, 2},
     GV "threads=64,bm=16,bn=32,bk=16,vec=4,splitk=3"},
    {"gemv M=1 NT k-contig vec4 K tail splitk2", {1, 70, 101, 1, 'N', 'T', 0, 0, 3},
     GV "threads=64,bm=1,bn=4,bk=16,vec=4,splitk=2", .random = 1},
    {"gemv N=1 NN k-contig vec1 tail m beta", {70, 1, 99, 1, 'N', 'N', 0.5f},
     GV "threads=32,bm=3,bn=16,bk=8,vec=1"},
    {"gemv N=1 TN x-contig batch2 splitk2", {70, 1, 64, 2, 'T', 'N', 0},
     GV "threads=32,bm=16,bn=1,bk=8,vec=2,splitk=2"},
    {"gemv M=5 TT k-contig short strided K tail", {5, 40, 37, 1, 'T', 'T', 0, 0, 3},
     GV "threads=64,bm=5,bn=8,bk=4,vec=4"},
    {"gemv N=13 NT k-contig vec2 short vec beta1", {40, 13, 50, 1, 'N', 'T', 1.0f},
     GV "threads=64,bm=6,bn=16,bk=10,vec=2", .random = 1},
    {"gemv N=13 TT x-contig splitk3", {40, 13, 50, 1, 'T', 'T', 0},
     GV "threads=32,bm=16,bn=13,bk=8,vec=4,splitk=3"},
    {"gemv M=13 NN x-contig batch2 beta KG=1", {13, 45, 30, 2, 'N', 'N', 0.25f, 0, 3, 0, 4},
     GV "threads=32,bm=16,bn=128,bk=8,vec=4", .random = 1},
    {"specials gemv M=5 NN x-contig splitk2 beta", {5, 40, 52, 1, 'N', 'N', 0.5f},
     GV "threads=64,bm=8,bn=16,bk=8,vec=4,splitk=2", .random = 1, .contract = TSR_PREC_STRICT,
     .special = 1},
    {"specials gemv N=13 NN k-contig", {40, 13, 52, 1, 'N', 'N', 0},
     GV "threads=64,bm=4,bn=13,bk=4,vec=4", .random = 1, .contract = TSR_PREC_STRICT,
     .special = 1},
    {"specials gemv N=13 NN k-contig Inf vs overflow", {40, 13, 52, 1, 'N', 'N', 0},
     GV "threads=64,bm=4,bn=13,bk=4,vec=4", .random = 1, .contract = TSR_PREC_STRICT,
     .special = 3},
    {"specials gemv M=5 NN x-contig Inf vs overflow", {5, 40, 52, 1, 'N', 'N', 0},
     GV "threads=64,bm=8,bn=16,bk=8,vec=4", .random = 1, .contract = TSR_PREC_STRICT,
     .special = 3},
    /* lanerows (lane per row, k-contiguous big operand): the short operand's
     * K blocks staged as [k][SP] in two buffers; tails along the big axis
     * (clamped loads), K % vec and K % bk (the guarded last block), S not a
     * multiple of 4 (SP padding), both big operands, short operand along k
     * and across it, vec 1/2/4, split-K 2/3, batch, beta 0/0.5/1 */
    {"gemv lanerows 2 M=13 NT tails x k splitk2", {13, 70, 101, 1, 'N', 'T', 0, 0, 3},
     GV "threads=32,bm=16,bn=64,bk=8,vec=4,lanerows=2,splitk=2", .random = 1,
     .contract = TSR_PREC_STRICT, .poison = 1},
    {"gemv lanerows 1 N=9 NT A big vec2 batch2 beta ld pad", {70, 9, 50, 2, 'N', 'T', 0.5f, 4, 1, 3, 4},
     GV "threads=32,bm=32,bn=16,bk=16,vec=2,lanerows=1", .random = 1, .poison = 1},
    {"gemv lanerows 4 M=16 NT splitk3 batch2 beta1 tail x", {16, 200, 96, 2, 'N', 'T', 1.0f},
     GV "threads=32,bm=16,bn=128,bk=8,vec=4,lanerows=4,splitk=3", .random = 1,
     .contract = TSR_PREC_STRICT, .poison = 1},
    {"gemv lanerows 1 M=5 TT short across k vec1 K tail", {5, 40, 37, 1, 'T', 'T', 0},
     GV "threads=32,bm=8,bn=32,bk=4,vec=1,lanerows=1", .poison = 1},
    {"gemv lanerows 1 M=1 NT K below vec", {1, 33, 3, 1, 'N', 'T', 0, 0, 1},
     GV "threads=32,bm=1,bn=32,bk=8,vec=4,lanerows=1", .random = 1, .poison = 1},
    {"gemv lanerows 2 N=16 NN A big 64 threads bk32", {300, 16, 200, 1, 'N', 'N', 0},
     GV "threads=64,bm=128,bn=16,bk=32,vec=4,lanerows=2", .random = 1, .poison = 1},
    {"specials gemv lanerows 2 M=12 NT", {12, 40, 52, 1, 'N', 'T', 0},
     GV "threads=32,bm=12,bn=64,bk=8,vec=4,lanerows=2", .random = 1, .contract = TSR_PREC_STRICT,
     .special = 1},
    {"specials gemv lanerows 1 N=13 NN Inf vs overflow splitk2", {40, 13, 52, 1, 'N', 'N', 0},
     GV "threads=32,bm=32,bn=13,bk=8,vec=4,lanerows=1,splitk=2", .random = 1,
     .contract = TSR_PREC_STRICT, .special = 3},
#undef GV
    {"default gemv 1x4096x4096 plan (x-contig, split-K)", {1, 300, 1024, 1, 'N', 'N', 0}, NULL, 1,
     1, 4096, 4096},
    {"default gemv 4096x1x4096 plan (k-contig)", {300, 1, 1100, 1, 'N', 'N', 0}, NULL, 1, 4096, 1,
     4096},
    /* the default table's plans on shrunken problems */
    {"default large (4096^3, Ozaki) plan", {256, 256, 96, 1, 'N', 'N', 0}, NULL, 1, 4096, 4096, 4096},
    {"default large (Ozaki) plan, tails", {260, 250, 70, 1, 'N', 'N', 0}, NULL, 1, 4096, 4096, 4096},
    {"default large 3xTF32 (2049x4097x1025) plan, tails", {260, 250, 70, 1, 'N', 'N', 0}, NULL, 1,
     2049, 4097, 1025},
    {"default medium (1024^3) plan", {130, 120, 100, 1, 'N', 'N', 0}, NULL, 1, 1024, 1024, 1024},
    {"default 512^3 plan (split-K)", {128, 128, 512, 1, 'N', 'N', 0}, NULL, 1, 512, 512, 512},
    {"default small plan 128x128x61", {128, 128, 61, 1, 'N', 'N', 0}, NULL, 1, 128, 128, 61},
    {"default 1024x1024x1537 plan (pack=a)", {130, 120, 101, 1, 'N', 'N', 0}, NULL, 1, 1024, 1024, 1537},
    {"default 2049x4097x1025 plan (pack=ab)", {260, 250, 70, 1, 'N', 'N', 0.5f}, NULL, 1, 2049, 4097, 1025},
    {"default 2049x4097x1025 plan TT batch2", {130, 134, 45, 2, 'T', 'T', 0}, NULL, 1, 2049, 4097, 1025},
    {"default 513x257x129 plan", {130, 65, 33, 1, 'N', 'N', 0}, NULL, 1, 513, 257, 129},
};
#define NCASES (sizeof emu_cases / sizeof emu_cases[0])

/* +Inf, NaN, FLT_MAX (whose big part rounds to Inf) and a zero row against
 * -Inf, at positions every op combination has. */
static void put_specials(const tsr_problem *p, float *a, float *b) {
  for (int64_t k = 0; k < p->k; k++) {
    int64_t i1 = p->op_a == TSR_OP_N ? 1 * p->lda + k : k * p->lda + 1;
    int64_t i3 = p->op_a == TSR_OP_N ? 3 * p->lda + k : k * p->lda + 3;
    int64_t i4 = p->op_a == TSR_OP_N ? 4 * p->lda + k : k * p->lda + 4;
    if (k == 7) a[i1] = INFINITY;
    if (k == 9) a[i3] = 3.4028235e38f;
    a[i4] = 0.0f;
  }
  b[p->op_b == TSR_OP_N ? 11 * p->ldb + 2 : 2 * p->ldb + 11] = NAN;
  b[p->op_b == TSR_OP_N ? 5 : 5 * p->ldb] = -INFINITY;
}

/* The ctest tests test_emit_emu_<s> (copies of this executable, see main)
 * each run the cases i with i % TSR_EMU_SHARDS == s; -1: every case. */
static int emu_shard = -1;

static void test_emulated(void **state) {
  if (!have_cxx()) skip();
  char *dir = tmpdir_make();
  tsr__kernel_src ks[NCASES];
  tsr_problem probs[NCASES];
  /* TSR_EMU_ONLY=<substring> runs the matching cases only (debugging) */
  const char *only = getenv("TSR_EMU_ONLY");
  int skipped[NCASES] = {0};
  size_t run[NCASES], nrun = 0;
  for (size_t i = 0; i < NCASES; i++) {
    const emu_case *c = &emu_cases[i];
    probs[i] = mkprob(c->prob);
    probs[i].precision = c->prec;
    skipped[i] = (only && !strstr(c->name, only)) ||
                 (emu_shard >= 0 && i % TSR_EMU_SHARDS != (size_t)emu_shard);
    if (!skipped[i]) run[nrun++] = i;
    tsr_plan pl;
    if (c->use_default) {
      tsr_problem big = P(c->dm, c->dn, c->dk);
      tsr__emit_default_plan(&big, &pl);
      tsr_plan here;
      tsr__emit_default_plan(&probs[i], &here);
      /* the shrunken problem's leading dimensions decide vec (unused by wgmma-s8) */
      if (pl.mma != TSR_MMA_WGMMA_S8) pl.vec = here.vec;
    } else {
      pl = mkplan(c->plan);
    }
    emit_ok(&probs[i], &pl, &ks[i]);
    char path[512];
    snprintf(path, sizeof path, "%s/emu%zu.cpp", dir, i);
    if (skipped[i]) snprintf(path, sizeof path, "%s/skip%zu.cpp", dir, i);
    write_emu_source(path, &ks[i], c->rz, c->poison);
  }
  /* a shard without cases would pass without testing anything */
  if (!only && nrun == 0) fail_msg("shard %d of %d has no cases", emu_shard, TSR_EMU_SHARDS);
  emu_compile_all(dir, "emu", run, nrun);
  int failures = 0;
  for (size_t i = 0; i < NCASES; i++) {
    const emu_case *c = &emu_cases[i];
    char path[512];
    if (skipped[i]) {
      tsr__kernel_src_free(&ks[i]);
      continue;
    }
    snprintf(path, sizeof path, "%s/emu%zu.fail", dir, i);
    if (access(path, F_OK) == 0) {
      snprintf(path, sizeof path, "%s/emu%zu.log", dir, i);
      char *log = read_text(path);
      fprintf(stderr, "[%s] host compile failed:\n%.4000s\n", c->name, log ? log : "");
      free(log);
      failures++;
      continue;
    }
    const tsr_problem *p = &probs[i];
    int64_t na = tsr_problem_elems_a(p), nb = tsr_problem_elems_b(p), nc = tsr_problem_elems_c(p);
    float *a = malloc((size_t)na * 4), *b = malloc((size_t)nb * 4), *c0 = malloc((size_t)nc * 4);
    /* random: 1 uniform, 2 wide, 3 normal */
    tsr_inputs kind = c->random == 3   ? TSR_INPUTS_NORMAL
                      : c->random == 2 ? TSR_INPUTS_WIDE
                      : c->random      ? TSR_INPUTS_RANDOM
                                       : TSR_INPUTS_DYADIC;
    unsigned seed = c->seed ? c->seed : 7;
    tsr_fill(p, TSR_TENSOR_A, kind, seed, a);
    tsr_fill(p, TSR_TENSOR_B, kind, seed, b);
    if (p->beta != 0.0f) tsr_fill(p, TSR_TENSOR_C, kind, seed, c0);
    else tsr_poison(p, c0);
    if (c->special == 2) { /* test_cuda_gpu's split identity: Inf, NaN, FLT_MAX */
      a[0] = INFINITY;
      b[5] = NAN;
      a[tsr_problem_elems_a(p) / 2] = 3.4028235e38f;
    } else if (c->special == 3) {
      /* op(A) row 1: +Inf at k = 1, FLT_MAX at k = K - 2 against op(B) row
       * K - 2 of -4: k-ascending, the +Inf absorbs the overflowing product
       * (fma: exact product + Inf); a sum split along k (lanes, thread groups)
       * overflows to -Inf apart and adds the two to NaN (mma=gemv's tsr_fix) */
      int64_t kl = p->k - 2;
      a[p->lda + 1] = INFINITY; /* op(A)(1, 1) in either layout */
      a[p->op_a == TSR_OP_N ? p->lda + kl : kl * p->lda + 1] = 3.4028235e38f;
      for (int64_t j = 0; j < p->n; j++) b[p->op_b == TSR_OP_N ? kl * p->ldb + j : j * p->ldb + kl] = -4.0f;
    } else if (c->special) put_specials(p, a, b);
    double *ref = malloc((size_t)(p->batch * p->m * p->n) * sizeof(double));
    float *scale = malloc((size_t)(p->batch * p->m * p->n) * sizeof(float));
    double strict = NAN;
    assert_int_equal(tsr_oracle_cpu(p, a, b, p->beta != 0.0f ? c0 : NULL, ref, scale, &strict), TSR_OK);
    snprintf(path, sizeof path, "%s/A.bin", dir);
    write_file(path, a, (size_t)na * 4);
    snprintf(path, sizeof path, "%s/B.bin", dir);
    write_file(path, b, (size_t)nb * 4);
    snprintf(path, sizeof path, "%s/C.bin", dir);
    write_file(path, c0, (size_t)nc * 4);
    /* stages >= 2: once with copies landing at issue, once only at wait_group
     * (bulk copies: once a waiter finds the arrivals in) */
    int modes = ks[i].smem_bytes && (strstr(ks[i].source, "tsr_cp_wait<") ||
                                     strstr(ks[i].source, "tsr_bulk(") ||
                                     strstr(ks[i].source, "tsr_tma(")) ? 2 : 1;
    for (int deferred = 0; deferred < modes; deferred++) {
      char args[512];
      /* a persistent kernel runs on 3 CTAs: each loops over several work items */
      unsigned g0 = ks[i].persistent && ks[i].grid[0] > 3 ? 3u : ks[i].grid[0];
      snprintf(args, sizeof args, "%u %u %u %u %u %llu %u %u %.9g %.9g %lld %lld %lld %d\n",
               g0, ks[i].grid[1], ks[i].grid[2], ks[i].block[0], ks[i].smem_bytes,
               (unsigned long long)ks[i].workspace_bytes, ks[i].reduce_grid[0],
               ks[i].reduce_block[0], (double)p->alpha, (double)p->beta, (long long)na,
               (long long)nb, (long long)nc, deferred);
      snprintf(path, sizeof path, "%s/args", dir);
      write_file(path, args, strlen(args));
      char pre[512] = "";
      for (int q = 0; q < ks[i].npre; q++)
        snprintf(pre + strlen(pre), sizeof pre - strlen(pre), "%s %u %u %u %u\n",
                 ks[i].pre[q].name, ks[i].pre[q].grid[0], ks[i].pre[q].grid[1],
                 ks[i].pre[q].grid[2], ks[i].pre[q].block[0]);
      snprintf(path, sizeof path, "%s/pre", dir);
      write_file(path, pre, strlen(pre));
      write_tmaps(dir, &ks[i]);
      char cmd[1024];
      snprintf(cmd, sizeof cmd, "cd '%s' && rm -f out.bin && ./emu%zu run . > run.log 2>&1", dir, i);
      if (system(cmd) != 0) {
        snprintf(path, sizeof path, "%s/run.log", dir);
        char *log = read_text(path);
        fprintf(stderr, "[%s] emulated run failed (deferred=%d):\n%.4000s\n", c->name, deferred,
                log ? log : "");
        free(log);
        failures++;
        continue;
      }
      float *out = malloc((size_t)nc * 4);
      snprintf(path, sizeof path, "%s/out.bin", dir);
      FILE *f = fopen(path, "rb");
      assert_non_null(f);
      assert_int_equal(fread(out, 4, (size_t)nc, f), (size_t)nc);
      fclose(f);
      tsr_receipt r;
      double tol = c->random ? 1e-4 : 0.0;
      if (c->contract != TSR_PREC_AUTO) {
        tsr_validate_contract(p, out, ref, scale, strict, c->contract, &r);
        fprintf(stderr, "[%s] %s contract: rel. Frobenius %.3g (strict FP32 reference %.3g, limit "
                        "%.3g), worst element %.3g of its bound, %lld of the wrong class\n",
                c->name, tsr_precision_name(c->contract), r.rel_fro_err, strict, r.fro_limit,
                r.worst_bound_ratio, (long long)r.class_failed);
        if (c->special && r.class_failed == 0) {
          int64_t nsp = 0;
          for (int64_t e = 0; e < p->m * p->n; e++) nsp += !isfinite((float)ref[e]);
          if (nsp < 3) {
            fprintf(stderr, "[%s] only %lld special outputs\n", c->name, (long long)nsp);
            failures++;
          }
        }
        if (c->breach) {
          if (r.passed) {
            fprintf(stderr, "[%s] the contract was met; a breach was expected\n", c->name);
            failures++;
          }
          /* the breach is the expected outcome; strays and wrong classes still count */
          r.passed = r.class_failed == 0;
        }
      } else {
        tsr_validate(p, out, ref, tol, tol, &r);
      }
      /* nothing outside the logical outputs was written */
      int64_t stray = 0;
      for (int64_t e = 0; e < nc; e++) {
        int64_t bi = p->stride_c ? e / p->stride_c : 0, in = p->stride_c ? e % p->stride_c : e;
        int logical = bi < p->batch && in / p->ldc < p->m && in % p->ldc < p->n;
        if (!logical && memcmp(&out[e], &c0[e], 4) != 0) stray++;
      }
      if (!r.passed && c->special) /* the first wrong classes, for the record */
        for (int64_t e = 0, shown = 0; e < p->m * p->n && shown < 6; e++) {
          float want = (float)ref[e], got = out[(e / p->n) * p->ldc + e % p->n];
          if (isnan(want) != isnan(got) || isinf(want) != isinf(got) ||
              (isinf(want) && (want > 0) != (got > 0)))
            fprintf(stderr, "[%s] output (%lld, %lld): %g, reference %g\n", c->name,
                    (long long)(e / p->n), (long long)(e % p->n), (double)got, ref[e]), shown++;
        }
      if (!r.passed || stray) {
        fprintf(stderr,
                "[%s] deferred=%d: %lld of %lld outputs wrong (first %lld, max abs %.3g), %lld "
                "stray writes\n",
                c->name, deferred, (long long)r.failed, (long long)r.checked,
                (long long)r.first_fail, r.max_abs_err, (long long)stray);
        failures++;
      } else {
        fprintf(stderr, "[%s] deferred=%d ok: %lld outputs, max abs err %.3g\n", c->name,
                deferred, (long long)r.checked, r.max_abs_err);
      }
      free(out);
    }
    free(a);
    free(b);
    free(c0);
    free(ref);
    free(scale);
    tsr__kernel_src_free(&ks[i]);
  }
  tmpdir_remove(dir);
  assert_int_equal(failures, 0);
}

/* ---- split=pack vs split=inline: bit-identical ------------------------------
 * Same products in the same order (only where the TF32 parts are made
 * differs), so the emulated outputs must match bit for bit: random inputs,
 * and IEEE specials (the prologue's zero small part of a non-finite big part
 * only touches outputs that tsr_fix recomputes). */
typedef struct {
  const char *name;
  prob_spec prob;
  const char *plan; /* split=inline; the pair adds split=pack */
  tsr_precision prec;
  int special;
  /* NULL: the split pair above; else the second plan's overlay over plan
   * (kinner: the same FFMAs in the same order, the K block as a loop) */
  const char *pair;
} split_pair;

static const split_pair split_pairs[] = {
    {"NN 128x256 warp 64x64 bk8 tails", {260, 250, 70, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=8,wm=64,wn=64,stages=4,pad=0,walk=rect:8x16"},
    {"TN batch2 splitk2 beta ld pad (LDS.64 A inline)", {66, 50, 37, 2, 'T', 'N', 1.0f, 1, 3, 2, 5},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=32,bk=8,wm=16,wn=16,stages=4,pad=0,splitk=2"},
    {"NT ldsm x4+x2 (NI=3) tails", {70, 94, 45, 1, 'N', 'T', 0},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=48,bk=16,wm=16,wn=24,stages=2,pad=0"},
    {"TT pad4 bk32 3-stage", {100, 90, 77, 1, 'T', 'T', 0.5f},
     "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,pad=4"},
    {"NN odd pad acc=chain", {70, 45, 37, 1, 'N', 'N', 0},
     "mma=tf32x3,acc=chain,tm=1,tn=1,bm=32,bn=32,bk=16,wm=16,wn=16,stages=2,pad=1"},
    {"tf32 TN", {70, 45, 37, 1, 'T', 'N', 0}, "mma=tf32,acc=chain,tm=1,tn=1,bk=16,wm=16,wn=16,stages=2,pad=0",
     TSR_PREC_TF32},
    {"specials NN", {40, 36, 52, 1, 'N', 'N', 0},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=32,bk=32,wm=16,wn=16,stages=3,pad=0", .special = 1},
    {"specials TT splitk2 beta", {40, 36, 64, 1, 'T', 'T', 0.5f},
     "mma=tf32x3,tm=1,tn=1,bm=32,bn=32,bk=16,wm=16,wn=16,stages=2,pad=0,splitk=2", .special = 1},
    /* kinner: the K block's steps as an inner loop (the TMA producer ring
     * with krel=1's in-block release, tail slices and M N K tails; a K block
     * of 32 in two trips with split-K, batch and TN; the LDGSTS producer; a
     * view operand read from global memory at k0 + kk) */
    {"kinner=8 ffma producer-tma krel=1 NN pack=a tailk3 M N K tails", {300, 520, 200, 1, 'N', 'N', 0},
     "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=0,kloop=2,split=producer-tma,"
     "minblocks=3,pack=a,tailk=3,wave=7,krel=1", TSR_PREC_STRICT, 0, "kinner=8"},
    {"kinner=16 ffma producer-tma bk32 TN batch2 strided splitk2 kloop1 beta", {132, 200, 200, 2, 'T', 'N', 0.5f, 4, 0, 1, 8},
     "bm=64,bn=128,bk=32,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=0,kloop=1,split=producer-tma,splitk=2,"
     "krel=1", TSR_PREC_STRICT, 0, "kinner=16"},
    {"kinner=2 ffma producer NT M N K tails beta", {100, 200, 92, 1, 'N', 'T', 0.5f},
     "bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=4,vec=4,pad=4,kloop=2,split=producer,minblocks=3",
     TSR_PREC_STRICT, 0, "kinner=2"},
    {"kinner=4 ffma view A NN tails", {70, 45, 37, 1, 'N', 'N', 0}, "stages=2,a=view", TSR_PREC_STRICT, 0,
     "kinner=4"},
};
#define NPAIRS (sizeof split_pairs / sizeof split_pairs[0])


/* Runs dir/emu<i> (inputs in dir/{A,B,C}.bin) and reads its output; 0 on success. */
static int emu_run(const char *dir, size_t i, const tsr__kernel_src *k, const tsr_problem *p,
                   int deferred, float *out) {
  int64_t na = tsr_problem_elems_a(p), nb = tsr_problem_elems_b(p), nc = tsr_problem_elems_c(p);
  char args[512], pre[512] = "", path[512], cmd[1024];
  snprintf(args, sizeof args, "%u %u %u %u %u %llu %u %u %.9g %.9g %lld %lld %lld %d\n", k->grid[0],
           k->grid[1], k->grid[2], k->block[0], k->smem_bytes,
           (unsigned long long)k->workspace_bytes, k->reduce_grid[0], k->reduce_block[0],
           (double)p->alpha, (double)p->beta, (long long)na, (long long)nb, (long long)nc,
           deferred);
  snprintf(path, sizeof path, "%s/args", dir);
  write_file(path, args, strlen(args));
  for (int q = 0; q < k->npre; q++)
    snprintf(pre + strlen(pre), sizeof pre - strlen(pre), "%s %u %u %u %u\n", k->pre[q].name,
             k->pre[q].grid[0], k->pre[q].grid[1], k->pre[q].grid[2], k->pre[q].block[0]);
  snprintf(path, sizeof path, "%s/pre", dir);
  write_file(path, pre, strlen(pre));
  write_tmaps(dir, k);
  snprintf(cmd, sizeof cmd, "cd '%s' && rm -f out.bin && ./emu%zu run . > run%zu.log 2>&1", dir, i, i);
  if (system(cmd) != 0) return -1;
  snprintf(path, sizeof path, "%s/out.bin", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t got = fread(out, 4, (size_t)nc, f);
  fclose(f);
  return got == (size_t)nc ? 0 : -1;
}

static void test_emulated_split_identity(void **state) {
  if (!have_cxx()) skip();
  /* TSR_EMU_ONLY=<substring of "split=pack identity" or of a pair's name> */
  const char *only = getenv("TSR_EMU_ONLY");
  int sel[NPAIRS], nsel = 0;
  for (size_t i = 0; i < NPAIRS; i++)
    nsel += sel[i] = !only || strstr(split_pairs[i].pair ? "kinner identity" : "split=pack identity", only) ||
                     strstr(split_pairs[i].name, only);
  if (!nsel) return;
  char *dir = tmpdir_make();
  tsr__kernel_src ks[2 * NPAIRS];
  tsr_problem probs[NPAIRS];
  for (size_t i = 0; i < NPAIRS; i++) {
    probs[i] = mkprob(split_pairs[i].prob);
    probs[i].precision = split_pairs[i].prec;
    for (int v = 0; v < 2; v++) {
      tsr_plan pl = mkplan(split_pairs[i].plan);
      char msg[256];
      if (!split_pairs[i].pair) pl.split = v ? TSR_SPLIT_PACK : TSR_SPLIT_INLINE;
      else if (v && tsr_plan_parse(split_pairs[i].pair, &pl, msg, sizeof msg) != TSR_OK)
        fail_msg("%s: %s", split_pairs[i].pair, msg);
      emit_ok(&probs[i], &pl, &ks[2 * i + v]);
      char path[512];
      snprintf(path, sizeof path, "%s/%s%zu.cpp", dir, sel[i] ? "emu" : "skip", 2 * i + v);
      write_emu_source(path, &ks[2 * i + v], 0, 0);
    }
    /* the pair differs where it should: the inline loop splits, the packed
     * one loads parts; kinner's block runs an inner loop of whole trips */
    if (split_pairs[i].pair) {
      assert_null(strstr(ks[2 * i].source, "for (int ko = 0; ko < BK;"));
      assert_non_null(strstr(ks[2 * i + 1].source, "#pragma unroll 1\n  for (int ko = 0; ko < BK;"));
      continue;
    }
    assert_true(block_calls(ks[2 * i].source, "tsr_split"));
    assert_false(block_calls(ks[2 * i + 1].source, "tsr_split"));
    assert_false(block_calls(ks[2 * i + 1].source, "cvt"));
  }
  size_t idx[2 * NPAIRS], nidx = 0;
  for (size_t i = 0; i < 2 * NPAIRS; i++)
    if (sel[i / 2]) idx[nidx++] = i;
  emu_compile_all(dir, "split", idx, nidx);
  int failures = 0;
  for (size_t i = 0; i < NPAIRS; i++) {
    const split_pair *c = &split_pairs[i];
    if (!sel[i]) continue;
    const tsr_problem *p = &probs[i];
    int64_t na = tsr_problem_elems_a(p), nb = tsr_problem_elems_b(p), nc = tsr_problem_elems_c(p);
    float *a = malloc((size_t)na * 4), *b = malloc((size_t)nb * 4), *c0 = malloc((size_t)nc * 4);
    float *out[2] = {malloc((size_t)nc * 4), malloc((size_t)nc * 4)};
    tsr_fill(p, TSR_TENSOR_A, TSR_INPUTS_RANDOM, 11, a);
    tsr_fill(p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 11, b);
    if (p->beta != 0.0f) tsr_fill(p, TSR_TENSOR_C, TSR_INPUTS_RANDOM, 11, c0);
    else tsr_poison(p, c0);
    if (c->special) put_specials(p, a, b);
    char path[512];
    snprintf(path, sizeof path, "%s/A.bin", dir);
    write_file(path, a, (size_t)na * 4);
    snprintf(path, sizeof path, "%s/B.bin", dir);
    write_file(path, b, (size_t)nb * 4);
    snprintf(path, sizeof path, "%s/C.bin", dir);
    write_file(path, c0, (size_t)nc * 4);
    int ok = 1;
    for (int v = 0; v < 2 && ok; v++) {
      snprintf(path, sizeof path, "%s/emu%zu.fail", dir, 2 * i + v);
      const char *what = access(path, F_OK) == 0 ? "emu" /* host compile log */
                         : emu_run(dir, 2 * i + v, &ks[2 * i + v], p, 1, out[v]) ? "run"
                                                                                  : NULL;
      if (what) {
        snprintf(path, sizeof path, "%s/%s%zu.log", dir, what, 2 * i + v);
        char *log = read_text(path);
        fprintf(stderr, "[split identity %s] %s failed:\n%.4000s\n", c->name,
                v ? (c->pair ? c->pair : "split=pack") : "the first plan", log ? log : "");
        free(log);
        ok = 0;
      }
    }
    if (ok) {
      int64_t diff = 0, first = -1, nonfinite = 0;
      for (int64_t e = 0; e < nc; e++) {
        nonfinite += !isfinite(out[0][e]);
        if (memcmp(&out[0][e], &out[1][e], 4) != 0 && diff++ == 0) first = e;
      }
      if (diff) {
        fprintf(stderr, "[split identity %s] %lld of %lld outputs differ (first %lld: %a vs %a)\n",
                c->name, (long long)diff, (long long)nc, (long long)first,
                (double)out[0][first], (double)out[1][first]);
        ok = 0;
      } else if (c->special && nonfinite < 3) {
        fprintf(stderr, "[split identity %s] only %lld non-finite outputs\n", c->name,
                (long long)nonfinite);
        ok = 0;
      } else {
        fprintf(stderr, "[split identity %s] %lld outputs bit-identical (%lld non-finite)\n",
                c->name, (long long)nc, (long long)nonfinite);
      }
    }
    failures += !ok;
    free(a);
    free(b);
    free(c0);
    free(out[0]);
    free(out[1]);
  }
  for (size_t i = 0; i < 2 * NPAIRS; i++) tsr__kernel_src_free(&ks[i]);
  tmpdir_remove(dir);
  assert_int_equal(failures, 0);
}

/* ---- wgmma mutations: the emulation decodes what the kernel builds ----------
 * Each mutation of a correct wgmma source (a wrong descriptor stride or
 * leading offset, a dropped wgmma.fence, a dropped split, a wrong D-fragment
 * row) must fail its emulated run: a harness check aborts it, or the output
 * misses the FP64 oracle on random inputs (1e-4; random, not dyadic: a
 * skipped split leaves non-TF32 operands only random inputs have, and a
 * NaN-poisoned small tile would be hidden by tsr_fix's recomputation).
 * The unmutated source passes first, so a failure is the mutation's. */
static void test_emulated_wgmma_mutations(void **state) {
  if (!have_cxx()) skip();
  static const struct {
    const char *name, *from, *to;
    int prod; /* a mutation of the split=producer (1), producer-reg (2), producer-pack (3) or producer-bulk (4) kernel, or of the FFMA producer (5), its producer-tma (6), split=tma (7), producer-tma with kfrag=ab (8), with lazy=2 (9) or with lazy=2,lazyk=2 (10) */
    int at_issue; /* 1: copies land at issue (the harness's early-free hold), else deferred */
  } muts[] = {
      {"none", NULL, NULL},
      {"none (split=producer)", NULL, NULL, 1},
      {"producer: empty-stage wait parity flipped (deadlock)", "((it / STAGES) & 1) ^ 1);", "((it / STAGES) & 1));", 1},
      {"producer: full-stage arrive dropped (deadlock)", "      tsr_mbar_arrive(bars + 8u * st);\n", "\n", 1},
      {"producer: planes written to the raw index's stage", "As + st * A_STAGE, BM * BK", "As + r * A_STAGE, BM * BK", 1},
      {"none (split=producer-reg)", NULL, NULL, 2},
      {"none (split=producer-pack)", NULL, NULL, 3},
      {"producer-pack: A's big planes of block it copied for block it+STAGES-1",
       "tsr_load_a<128>(As + sx * A_STAGE, Ag, m0, (kb_begin + nx) * BK, pt);",
       "tsr_load_a<128>(As + sx * A_STAGE, Ag, m0, (kb_begin + it) * BK, pt);", 3},
      {"producer-pack: full arrive dropped (deadlock)", "      tsr_mbar_arrive(bars + 8u * (it % STAGES));\n", "\n", 3},
      {"producer-reg: register sets never reloaded", "if (it + 2 < nk) {", "if (it + 2 < 0) {", 2},
      {"none (split=producer-bulk)", NULL, NULL, 4},
      {"producer-bulk: A's tiles of the next K block", "const tsr_idx ka = (tsr_idx)(kb_begin + it) * (BM * BK)",
       "const tsr_idx ka = (tsr_idx)(kb_begin + it + 1) * (BM * BK)", 4},
      {"producer-bulk: the stage's bytes expected without B's planes", "4u * (A_STAGE + B_STAGE));", "4u * (A_STAGE));", 4},
      {"producer-bulk: pack tiles' core-matrix rows rotated", "((w >> 3) / (BK / 4)) * 8 + (w & 7);",
       "((w >> 3) / (BK / 4)) * 8 + ((w + 1) & 7);", 4},

      /* the FFMA producer (mma=ffma, split=producer): its two signals */
      {"none (ffma producer)", NULL, NULL, 5},
      {"ffma producer: consumers' slot-free arrive dropped (deadlock)",
       "    if (it + STAGES < nk) tsr_bar_arrive(1u + rd, NT + 128u);", "    if (0) tsr_bar_arrive(1u + rd, NT + 128u);", 5},
      {"ffma producer: slot-free wait dropped (never refilled)",
       "        if (nx >= STAGES) tsr_bar_sync(1u + sx, NT + 128u);\n", "\n", 5},
      /* the harness holds a freeing thread until the producer refilled the
       * slot: a free before the block's reads then reads the next block */
      {"ffma producer: consumers free the slot before reading it",
       "    tsr_block(acc, As + rd * A_STAGE, Bs + rd * B_STAGE, Ag, Bg, m0, n0, (kb_begin + it) * BK);\n"
       "    if (it + STAGES < nk) tsr_bar_arrive(1u + rd, NT + 128u); // slot rd read: free\n",
       "    if (it + STAGES < nk) tsr_bar_arrive(1u + rd, NT + 128u); // slot rd read: free\n"
       "    tsr_block(acc, As + rd * A_STAGE, Bs + rd * B_STAGE, Ag, Bg, m0, n0, (kb_begin + it) * BK);\n",
       5, 1},
      {"none (ffma producer, copies landing at issue)", NULL, NULL, 5, 1},
      {"none (ffma producer-tma)", NULL, NULL, 6},
      {"ffma producer-tma: slot-free wait dropped (arrivals left at exit)",
       "      if (it >= STAGES) tsr_bar_sync(1u + sx, NT + 32u); // the consumers left the slot\n", "\n", 6},
      {"ffma producer-tma: B's box bytes not expected", "tsr_mbar_arrive_tx(bar, 4u * BK * (BM + BN));",
       "tsr_mbar_arrive_tx(bar, 4u * BK * BM);", 6},
      {"ffma producer-tma: A's box one K block on", "tsr_tma(As + sx * A_STAGE, tmA, m0, k0, bz, bar);",
       "tsr_tma(As + sx * A_STAGE, tmA, m0, k0 + BK, bz, bar);", 6},
      {"none (ffma producer-tma kfrag=ab)", NULL, NULL, 8},
      {"ffma producer-tma kfrag=ab: A's [m][k] box at (m, k), not (k, m)",
       "tsr_tma(As + sx * A_STAGE, tmA, k0, m0, bz, bar);", "tsr_tma(As + sx * A_STAGE, tmA, m0, k0, bz, bar);", 8},
      {"ffma producer-tma kfrag=ab: B's [n][k] box at (n, k), not (k, n)",
       "tsr_tma(Bs + sx * B_STAGE, tmB, k0, n0, bz, bar);", "tsr_tma(Bs + sx * B_STAGE, tmB, n0, k0, bz, bar);", 8},
      /* lazy: the claim protocol (the driver runs two calls, packed A poisoned between) */
      {"none (ffma producer-tma lazy)", NULL, NULL, 9},
      {"ffma producer-tma lazy: one ready value for every call (the second reads the poison)",
       "const unsigned ready = 2u * epoch + 2u;", "const unsigned ready = 2u;", 9},
      {"ffma producer-tma lazy: the claimer never releases (deadlock)",
       "  if (lane == 0) tsr_st_release(flag, ready);\n", "\n", 9},
      {"ffma producer-tma lazy: a lane packs the next row", "WOFF_A + (tsr_idx)bz * SA + m0 + lane;",
       "WOFF_A + (tsr_idx)bz * SA + m0 + lane + 1;", 9},
      {"ffma producer-tma lazy: a chunk's loads in flight taken from the chunk stored",
       "tsr_lazy_load(y, src, m0 + lane, kc + LAZY_KC);", "tsr_lazy_load(y, src, m0 + lane, kc);", 9},
      /* lazyk: the pack kernel beside the main kernel releases the pieces */
      {"none (ffma producer-tma lazyk)", NULL, NULL, 10},
      {"ffma producer-tma lazyk: the pack kernel never releases (the wait fails)",
       "  if (lane == 0) tsr_st_release(flag, ready);\n", "\n", 10},
      {"ffma producer-tma lazyk: the pack kernel's one ready value for every call",
       "  const unsigned ready = 2u * epoch + 2u;\n  const int lane", "  const unsigned ready = 2u;\n  const int lane", 10},
      {"none (ffma split=tma)", NULL, NULL, 7},
      {"ffma tma: the refilling warp's slot-free wait dropped (arrivals left at exit)",
       "      tsr_bar_sync(1u + pv, NT); // the other warps left it\n", "\n", 7},
      {"ffma tma: the refilling warp also arrives (a phase completes early)",
       "    if (threadIdx.x / 32u != (((unsigned)it + 1u) & 3u) && it + STAGES < nk)",
       "    if (it + STAGES < nk)", 7},
      {"ffma tma: the slot just read refilled (no lag)", "const int pv = rd == 0 ? STAGES - 1 : rd - 1;",
       "const int pv = rd;", 7},
      {"ffma tma: the refill one K block late", "const int k0 = (kb_begin + it - 1 + STAGES) * BK;",
       "const int k0 = (kb_begin + it + STAGES) * BK;", 7},
      {"ffma tma: the others never free a slot (deadlock)", "      tsr_bar_arrive(1u + rd, NT);\n",
       "      (void)0;\n", 7},
      {"stride byte offset halved", "SBO = BK * 32;", "SBO = BK * 16;"},
      {"leading byte offset 64", "LBO = 128,", "LBO = 64,"},
      {"no wgmma.fence", "      tsr_wg_fence();\n", "\n"},
      {"no split of the next block", "      tsr_split_stage(As + nxt * A_STAGE, Bs + nxt * B_STAGE);\n", "\n"},
      {"D fragment rows 8 apart dropped", "rw + i * 64 + 8 * h,", "rw + i * 64 + 0 * h,"},
  };
  size_t n = sizeof muts / sizeof muts[0];
  tsr_problem p = mkprob((prob_spec){.m = 128, .n = 72, .k = 48, .opb = 'T'});
  tsr_plan pl = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=72,bk=16,wm=64,wn=24,stages=2,vec=4");
  tsr__kernel_src k, kp, kr;
  emit_ok(&p, &pl, &k);
  tsr_plan pp = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=72,bk=16,wm=64,wn=24,stages=2,vec=4,split=producer");
  emit_ok(&p, &pp, &kp);
  tsr_plan pr = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=72,bk=8,wm=64,wn=24,stages=2,vec=4,split=producer-reg");
  emit_ok(&p, &pr, &kr);
  tsr_plan ppk = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=72,bk=8,wm=64,wn=24,stages=3,vec=4,split=producer-pack");
  tsr__kernel_src kpp, kpb;
  emit_ok(&p, &ppk, &kpp);
  tsr_plan ppb = mkplan("mma=wgmma-tf32x3,tm=1,tn=1,pad=0,bm=128,bn=72,bk=8,wm=64,wn=24,stages=2,vec=4,split=producer-bulk");
  emit_ok(&p, &ppb, &kpb);
  tsr__kernel_src kff;
  tsr_plan pff = mkplan("bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=2,vec=4,pad=4,kloop=2,split=producer");
  emit_ok(&p, &pff, &kff);
  tsr__kernel_src ktma;
  tsr_plan ptma = mkplan("bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=0,kloop=2,split=producer-tma,pack=ab");
  emit_ok(&p, &ptma, &ktma);
  tsr__kernel_src kself;
  tsr_plan pself = mkplan("bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=0,kloop=2,split=tma,minblocks=4,pack=ab");
  emit_ok(&p, &pself, &kself);
  tsr__kernel_src kfr; /* both operands unpacked, boxes of [x][k] rows */
  tsr_plan pfr = mkplan("bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=0,kloop=2,split=producer-tma,pack=none,kfrag=ab");
  emit_ok(&p, &pfr, &kfr);
  tsr__kernel_src klz; /* A packed by the producer warps */
  tsr_plan plz = mkplan("bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=0,kloop=2,split=producer-tma,pack=ab,lazy=2");
  emit_ok(&p, &plz, &klz);
  tsr__kernel_src klk; /* ... by a pack kernel beside the main kernel */
  tsr_plan plk = mkplan("bm=64,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=0,kloop=2,split=producer-tma,pack=ab,lazy=2,lazyk=2");
  emit_ok(&p, &plk, &klk);
  /* each mutation's base kernel, by its prod field */
  const tsr__kernel_src *by_prod[] = {&k, &kp, &kr, &kpp, &kpb, &kff, &ktma, &kself, &kfr, &klz, &klk};
  /* a deadlocked emulation fails after this many seconds instead of 120 */
  setenv("TSR_EMU_MBAR_TIMEOUT", "10", 1);
  char *dir = tmpdir_make();
  size_t idx[48];
  assert_true(n <= sizeof idx / sizeof idx[0]);
  for (size_t i = 0; i < n; i++) {
    assert_true(muts[i].prod >= 0 && muts[i].prod < (int)(sizeof by_prod / sizeof *by_prod));
    const tsr__kernel_src *base = by_prod[muts[i].prod];
    tsr__kernel_src m = *base;
    char *src = NULL;
    if (muts[i].from) {
      const char *at = strstr(base->source, muts[i].from);
      if (!at) fail_msg("mutation '%s': '%s' not in the source", muts[i].name, muts[i].from);
      size_t pre = (size_t)(at - base->source), fl = strlen(muts[i].from), tl = strlen(muts[i].to);
      src = malloc(base->len - fl + tl + 1);
      memcpy(src, base->source, pre);
      memcpy(src + pre, muts[i].to, tl);
      strcpy(src + pre + tl, at + fl);
      m.source = src;
      m.len = strlen(src);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/emu%zu.cpp", dir, i);
    write_emu_source(path, &m, 0, 0);
    free(src);
    idx[i] = i;
  }
  emu_compile_all(dir, "wgmut", idx, n);
  int64_t na = tsr_problem_elems_a(&p), nb = tsr_problem_elems_b(&p), nc = tsr_problem_elems_c(&p);
  float *a = malloc((size_t)na * 4), *b = malloc((size_t)nb * 4), *c0 = malloc((size_t)nc * 4),
        *out = malloc((size_t)nc * 4);
  double *ref = malloc((size_t)nc * sizeof(double));
  float *scale = malloc((size_t)nc * sizeof(float));
  double strict;
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_RANDOM, 3, a);
  tsr_fill(&p, TSR_TENSOR_B, TSR_INPUTS_RANDOM, 3, b);
  tsr_poison(&p, c0);
  assert_int_equal(tsr_oracle_cpu(&p, a, b, NULL, ref, scale, &strict), TSR_OK);
  char path[512];
  snprintf(path, sizeof path, "%s/A.bin", dir);
  write_file(path, a, (size_t)na * 4);
  snprintf(path, sizeof path, "%s/B.bin", dir);
  write_file(path, b, (size_t)nb * 4);
  snprintf(path, sizeof path, "%s/C.bin", dir);
  write_file(path, c0, (size_t)nc * 4);
  int failures = 0;
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/emu%zu.fail", dir, i);
    if (access(path, F_OK) == 0) fail_msg("mutation '%s': host compile failed", muts[i].name);
    int bad = emu_run(dir, i, by_prod[muts[i].prod], &p, !muts[i].at_issue, out) != 0;
    const char *how = bad ? "aborted by the harness" : NULL;
    if (!bad) {
      tsr_receipt r;
      tsr_validate(&p, out, ref, 1e-4, 1e-4, &r);
      bad = !r.passed;
      if (bad) how = "wrong outputs";
    }
    if (!muts[i].from && bad) {
      snprintf(path, sizeof path, "%s/run0.log", dir);
      char *log = read_text(path);
      fprintf(stderr, "[wgmma mutations] the unmutated kernel failed (%s):\n%.3000s\n", how,
              log ? log : "");
      free(log);
      failures++;
    } else if (muts[i].from && !bad) {
      fprintf(stderr, "[wgmma mutation %s] passed; it must fail\n", muts[i].name);
      failures++;
    } else {
      fprintf(stderr, "[wgmma mutation %s] %s\n", muts[i].name, muts[i].from ? how : "passes");
    }
  }
  free(a);
  free(b);
  free(c0);
  free(out);
  free(ref);
  free(scale);
  tsr__kernel_src_free(&k);
  tsr__kernel_src_free(&kp);
  tsr__kernel_src_free(&kr);
  tsr__kernel_src_free(&kpp);
  tsr__kernel_src_free(&kpb);
  tsr__kernel_src_free(&kff);
  tsr__kernel_src_free(&ktma);
  tsr__kernel_src_free(&kself);
  tsr__kernel_src_free(&kfr);
  tsr__kernel_src_free(&klz);
  tsr__kernel_src_free(&klk);
  unsetenv("TSR_EMU_MBAR_TIMEOUT");
  tmpdir_remove(dir);
  assert_int_equal(failures, 0);
}

/* The emitted walk, compiled on the host, visits exactly tsr_walk_map's order. */
static void test_emulated_walks(void **state) {
  if (!have_cxx()) skip();
  static const struct {
    int64_t m, n;
    const char *walk;
  } cases[] = {{7 * 32 - 5, 13 * 32, "rect:3x5"}, {7 * 32, 13 * 32 - 1, "stripe:4"},
               {5 * 32, 7 * 32, "rect:2x3"},      {9 * 32, 4 * 32, "rect:4x3"},
               {6 * 32, 6 * 32, "linear"},        {1 * 32, 40 * 32, "rect:8x16"}};
  size_t n = sizeof cases / sizeof cases[0];
  char *dir = tmpdir_make();
  tsr_walk walks[16];
  uint32_t hs[16], ws[16];
  for (size_t i = 0; i < n; i++) {
    tsr_problem p = P(cases[i].m, cases[i].n, 16);
    char text[64];
    snprintf(text, sizeof text, "walk=%s", cases[i].walk);
    tsr_plan pl = mkplan(text);
    tsr__kernel_src k;
    emit_ok(&p, &pl, &k);
    char path[512];
    snprintf(path, sizeof path, "%s/emu%zu.cpp", dir, i);
    write_emu_source(path, &k, 0, 0);
    tsr__kernel_src_free(&k);
    walks[i] = pl.walk;
    hs[i] = (uint32_t)((cases[i].m + 31) / 32);
    ws[i] = (uint32_t)((cases[i].n + 31) / 32);
  }
  size_t idx[16];
  for (size_t i = 0; i < n; i++) idx[i] = i;
  emu_compile_all(dir, "walk", idx, n);
  for (size_t i = 0; i < n; i++) {
    char cmd[1024], path[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && ./emu%zu walk > walk%zu.txt", dir, i, i);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/walk%zu.txt", dir, i);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (uint32_t o = 0; o < hs[i] * ws[i]; o++) {
      unsigned r, c;
      uint32_t er, ec;
      assert_int_equal(fscanf(f, "%u %u", &r, &c), 2);
      tsr_walk_map(&walks[i], hs[i], ws[i], o, &er, &ec);
      if (r != er || c != ec)
        fail_msg("walk %s ordinal %u: emitted (%u,%u), tsr_walk_map (%u,%u)", cases[i].walk, o, r,
                 c, er, ec);
    }
    unsigned extra;
    assert_int_equal(fscanf(f, "%u", &extra), EOF);
    fclose(f);
  }
  tmpdir_remove(dir);
}

/* ---- nvcc: defaults without spills, variants compile ------------------------- */
typedef struct {
  char label[160];
  int is_default;
} nv_job;

static void test_nvcc(void **state) {
  if (access(NVCC, X_OK) != 0) skip();
  char *dir = tmpdir_make();
  nv_job jobs[80];
  int nj = 0;
  for (size_t i = 0; i < NSHAPES; i++) {
    tsr_problem p = P(brief_shapes[i][0], brief_shapes[i][1], brief_shapes[i][2]);
    tsr_plan pl;
    tsr__emit_default_plan(&p, &pl);
    tsr__kernel_src k;
    emit_ok(&p, &pl, &k);
    char path[512];
    snprintf(path, sizeof path, "%s/k%d.cu", dir, nj);
    write_file(path, k.source, k.len);
    char t[400];
    tsr_plan_format(&pl, t, sizeof t);
    snprintf(jobs[nj].label, sizeof jobs[nj].label, "default %lldx%lldx%lld",
             (long long)p.m, (long long)p.n, (long long)p.k);
    snprintf(path, sizeof path, "%s/k%d.arch", dir, nj);
    /* the wgmma default (4096^3 and up) needs the architecture-specific target */
    const char *darch = strstr(k.source, "\n// tsr:arch-specific\n") ? "sm_90a" : "sm_90";
    write_file(path, darch, strlen(darch));
    jobs[nj++].is_default = 1;
    tsr__kernel_src_free(&k);
  }
  /* defaults of other families: mma=gemv at the GEMV shapes of the zoo and an
   * odd batched one; auto's side-64 mma.sync plans (session 19, side64_mma); the
   * skinny and long-K FFMA tiles with kfrag (session 20: 96, 96, 168 and 80 registers) */
  static const struct {
    prob_spec prob;
    tsr_mma mma;
    const char *name;
  } family_shapes[] = {
      {{4096, 1, 4096, 1, 'N', 'N', 0}, TSR_MMA_GEMV, "gemv"},
      {{1, 4096, 4096, 1, 'N', 'N', 0}, TSR_MMA_GEMV, "gemv"},
      {{1, 4096, 11008, 1, 'N', 'T', 0}, TSR_MMA_GEMV, "gemv"},
      {{16384, 1, 2048, 1, 'T', 'N', 0}, TSR_MMA_GEMV, "gemv"},
      {{8, 4096, 4096, 1, 'N', 'T', 0}, TSR_MMA_GEMV, "gemv"},
      {{4096, 16, 16384, 1, 'N', 'T', 0}, TSR_MMA_GEMV, "gemv"},
      {{13, 1100, 999, 2, 'N', 'T', 0.5f, 1, 1, 0, 3}, TSR_MMA_GEMV, "gemv"},
      {{16384, 64, 4096, 1, 'N', 'N', 0}, TSR_MMA_TF32X3, "side64"},
      {{64, 16384, 4096, 1, 'T', 'N', 0}, TSR_MMA_TF32X3, "side64"},
      {{64, 11008, 4096, 1, 'N', 'T', 0}, TSR_MMA_TF32X3, "side64"},
      {{4096, 16, 16384, 1, 'N', 'N', 0}, TSR_MMA_FFMA, "skinny kfrag"},
      {{65536, 32, 1024, 1, 'N', 'N', 0}, TSR_MMA_FFMA, "skinny kfrag"},
      {{32, 4096, 4096, 1, 'N', 'T', 0}, TSR_MMA_FFMA, "skinny kfrag"},
      {{128, 64, 65536, 1, 'N', 'T', 0}, TSR_MMA_FFMA, "long-K kfrag"}};
  for (size_t i = 0; i < sizeof family_shapes / sizeof family_shapes[0]; i++) {
    tsr_problem p = mkprob(family_shapes[i].prob);
    tsr_plan pl;
    tsr__emit_default_plan(&p, &pl);
    assert_int_equal(pl.mma, family_shapes[i].mma);
    tsr__kernel_src k;
    emit_ok(&p, &pl, &k);
    char path[512];
    snprintf(path, sizeof path, "%s/k%d.cu", dir, nj);
    write_file(path, k.source, k.len);
    snprintf(jobs[nj].label, sizeof jobs[nj].label, "default %s %lldx%lldx%lld %c%c",
             family_shapes[i].name, (long long)p.m, (long long)p.n, (long long)p.k,
             family_shapes[i].prob.opa, family_shapes[i].prob.opb);
    snprintf(path, sizeof path, "%s/k%d.arch", dir, nj);
    write_file(path, "sm_90", 5);
    jobs[nj++].is_default = 1;
    tsr__kernel_src_free(&k);
  }
  static const struct {
    prob_spec prob;
    const char *plan;
    int clean; /* must compile without spills, like the defaults */
  } variants[] = {
      {{1000, 1000, 1000, 1, 'N', 'N', 0}, "bm=128,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=3,vec=4,pad=4"},
      {{1000, 1000, 1000, 1, 'T', 'T', 0.5f}, "bm=128,bn=128,bk=8,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,pad=4,splitk=3"},
      {{999, 1001, 997, 2, 'N', 'T', 0}, "bm=64,bn=64,bk=16,wm=32,wn=32,tm=4,tn=8,stages=1,vec=1,pad=1"},
      {{1024, 1024, 1024, 1, 'N', 'N', 1}, "bm=64,bn=64,bk=8,wm=32,wn=32,tm=4,tn=8,stages=2,vec=2,a=view,pad=2"},
      {{1024, 1024, 1024, 1, 'T', 'N', 0}, "bm=64,bn=64,bk=8,wm=32,wn=32,tm=4,tn=8,stages=1,vec=4,a=view,b=view,splitk=7"},
      {{1000, 1000, 1000, 2, 'T', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=32,wm=64,wn=32,stages=3,vec=4,pad=8,splitk=2"},
      {{999, 1001, 997, 1, 'N', 'N', 1}, "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=16,wm=32,wn=32,stages=2,vec=1,pad=4"},
      {{1024, 1024, 1024, 1, 'T', 'T', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=64,bk=16,wm=64,wn=32,stages=1,vec=4,pad=4"},
      {{1024, 1024, 1024, 1, 'N', 'T', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=32,wm=64,wn=64,stages=3,vec=4,pad=4"},
      {{2049, 4097, 1025, 1, 'N', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=16,wm=64,wn=64,stages=4,vec=4,pad=0,walk=rect:8x16,pack=ab"},
      {{1024, 1024, 1537, 1, 'N', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,vec=4,pad=0,pack=ab"},
      {{513, 257, 129, 1, 'N', 'N', 0}, "bm=64,bn=32,bk=16,wm=32,wn=16,tm=4,tn=4,stages=2,vec=4,pad=4,pack=ab"},
      {{513, 257, 129, 1, 'N', 'N', 0}, "bm=64,bn=32,bk=16,wm=32,wn=16,tm=4,tn=4,stages=2,vec=1,pad=4,pack=a"},
      /* strict FFMA kfrag / kloop (scripts/device/ffma-variants.txt): no spills */
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, "bm=128,bn=256,bk=16,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kfrag=a,kloop=1", 1},
      {{512, 4096, 11008, 1, 'N', 'T', 0}, "bm=128,bn=128,bk=8,wm=64,wn=32,tm=8,tn=8,stages=4,vec=4,pad=4,kfrag=ab,kloop=1", 1},
      {{1000, 1000, 1000, 2, 'T', 'T', 0.5f}, "bm=128,bn=128,bk=16,wm=64,wn=32,tm=8,tn=8,stages=3,vec=4,pad=4,kfrag=ab,pack=a,kloop=1,splitk=2"},
      /* kloop=2 / 3 on cuBLAS's geometry (the 128x128 default's loop): no spills */
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kloop=2", 1},
      {{4096, 4096, 4096, 1, 'N', 'T', 0}, "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kloop=3", 1},
      {{3000, 3000, 3000, 1, 'N', 'N', 0}, "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kloop=3", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kloop=4", 1},
      {{4096, 4096, 4096, 1, 'N', 'T', 0}, "bm=128,bn=128,bk=8,wm=64,wn=64,tm=8,tn=16,stages=3,vec=4,pad=4,walk=rect:8x16,kloop=4", 1},
      /* split=pack: the large geometries without spills (docs/emit.md) */
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=8,wm=64,wn=64,stages=4,pad=0,walk=rect:8x16,split=pack", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=16,wm=64,wn=64,stages=4,pad=0,walk=rect:8x16,split=pack", 1},
      {{4096, 4096, 4096, 1, 'T', 'T', 0.5f}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=256,bk=16,wm=64,wn=64,stages=3,pad=0,walk=rect:8x16,split=pack", 1},
      {{2049, 4097, 1025, 1, 'T', 'N', 0}, "mma=tf32x3,tm=1,tn=1,bm=128,bn=128,bk=16,wm=64,wn=32,stages=4,pad=0,walk=rect:8x16,split=pack", 1},
      {{1024, 1024, 1537, 1, 'N', 'T', 0}, "mma=tf32x3,tm=1,tn=1,bm=64,bn=64,bk=32,wm=32,wn=32,stages=3,pad=0,split=pack", 1},
      /* wgmma (compiled for sm_90a): the device script's geometries, no spills */
#define WV "mma=wgmma-tf32x3,tm=1,tn=1,pad=0,walk=rect:8x16,"
      {{4096, 4096, 4096, 1, 'N', 'T', 0}, WV "vec=4,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=128,bk=16,wm=64,wn=128,stages=4", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=256,bk=16,wm=64,wn=128,stages=4", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=4", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=256,bk=32,wm=64,wn=64,stages=2", 1},
      {{2049, 4097, 1025, 2, 'T', 'T', 0.5f}, WV "vec=1,bm=128,bn=128,bk=32,wm=64,wn=128,stages=3", 1},
      {{1000, 1000, 1000, 1, 'N', 'T', 0}, WV "vec=4,bm=64,bn=96,bk=32,wm=64,wn=96,stages=4,splitk=3", 1},
      /* stage 2: two partial-sum buffers; warp specialization (setmaxnreg) */
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=16,wm=128,wn=64,stages=4", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=16,wm=128,wn=128,stages=3,split=producer", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=256,bk=16,wm=64,wn=128,stages=3,split=producer", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,split=producer-reg", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=256,bk=8,wm=64,wn=128,stages=8,split=producer-reg", 1},
      {{2049, 4097, 1025, 1, 'T', 'T', 0.5f}, WV "vec=1,bm=64,bn=256,bk=16,wm=64,wn=64,stages=4,split=producer-reg", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,split=producer-pack", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=128,bn=256,bk=8,wm=64,wn=128,stages=8,split=producer-pack", 1},
      {{4096, 4096, 4096, 1, 'N', 'N', 0}, WV "vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,split=producer-bulk", 1},
      {{4095, 4097, 4093, 1, 'T', 'T', 0.5f}, WV "vec=4,bm=256,bn=128,bk=8,wm=128,wn=128,stages=8,split=producer-bulk", 1},
      {{4096, 4096, 4096, 1, 'N', 'T', 0}, WV "vec=4,bm=128,bn=128,bk=16,wm=64,wn=128,stages=6,split=producer-bulk", 1},
#undef WV
  };
  assert_true(nj + sizeof variants / sizeof variants[0] <= sizeof jobs / sizeof jobs[0]);
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    tsr_problem p = mkprob(variants[i].prob);
    tsr_plan pl = mkplan(variants[i].plan);
    tsr__kernel_src k;
    emit_ok(&p, &pl, &k);
    char path[512];
    snprintf(path, sizeof path, "%s/k%d.cu", dir, nj);
    write_file(path, k.source, k.len);
    snprintf(jobs[nj].label, sizeof jobs[nj].label, "variant %s", variants[i].plan);
    /* wgmma sources need the architecture-specific target, as in the backend */
    snprintf(path, sizeof path, "%s/k%d.arch", dir, nj);
    const char *arch = strstr(k.source, "\n// tsr:arch-specific\n") ? "sm_90a" : "sm_90";
    write_file(path, arch, strlen(arch));
    jobs[nj++].is_default = variants[i].clean;
    tsr__kernel_src_free(&k);
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && seq 0 %d | xargs -P2 -I{} sh -c '" NVCC
           " -cubin -arch=$(cat k{}.arch) -Xptxas -v -o k{}.cubin k{}.cu > k{}.log 2>&1 || echo FAILED >> "
           "k{}.log'",
           dir, nj - 1);
  assert_int_equal(system(cmd), 0);
  int failures = 0;
  for (int i = 0; i < nj; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/k%d.log", dir, i);
    char *log = read_text(path);
    assert_non_null(log);
    const char *mainf = strstr(log, "'tsr_gemm_main'");
    int regs = -1, spill_st = -1, spill_ld = -1;
    if (mainf) {
      const char *sp = strstr(mainf, "bytes spill stores");
      if (sp) {
        const char *q = sp;
        while (q > mainf && q[-1] != ',') q--;
        sscanf(q, " %d", &spill_st);
        const char *l = strstr(sp, ", ");
        if (l) sscanf(l + 2, "%d", &spill_ld);
      }
      const char *u = strstr(mainf, "Used ");
      if (u) sscanf(u + 5, "%d", &regs);
    }
    if (strstr(log, "FAILED") || strstr(log, "error") || regs < 0) {
      fprintf(stderr, "[%s] nvcc failed:\n%.4000s\n", jobs[i].label, log);
      failures++;
    } else {
      fprintf(stderr, "[%s] %d registers, spill stores %d, spill loads %d\n", jobs[i].label, regs,
              spill_st, spill_ld);
      if (jobs[i].is_default && (spill_st != 0 || spill_ld != 0)) failures++;
      /* setmaxnreg redistributes the registers the kernel was compiled for:
       * a producer kernel (384 threads) must get all 168 */
      if (strstr(jobs[i].label, "split=producer") && !strstr(jobs[i].label, "bm=64,") &&
          regs != 168) { /* two consumers (bm = 2 wm): 384 threads */
        fprintf(stderr, "[%s] %d registers; setmaxnreg 88/208 needs 168\n", jobs[i].label, regs);
        failures++;
      }
      /* ptxas serializes wgmmas it cannot prove safe (an accumulator touched
       * while in flight): "Potential Performance Loss: wgmma.mma_async
       * instructions are serialized"; the clean variants must not */
      if (jobs[i].is_default && strstr(log, "serialized")) {
        fprintf(stderr, "[%s] ptxas serialized the wgmmas:\n%.2000s\n", jobs[i].label, log);
        failures++;
      }
    }
    /* pack prologue kernels: registers, no spills */
    static const char *const pre[] = {"'tsr_gemm_pack_a'", "'tsr_gemm_pack_b'"};
    for (int q = 0; q < 2; q++) {
      const char *pf = strstr(log, pre[q]);
      if (!pf) continue;
      int pr = -1, pst = -1;
      const char *sp = strstr(pf, "bytes spill stores");
      if (sp) {
        const char *c = sp;
        while (c > pf && c[-1] != ',') c--;
        sscanf(c, " %d", &pst);
      }
      const char *u = strstr(pf, "Used ");
      if (u) sscanf(u + 5, "%d", &pr);
      fprintf(stderr, "[%s] %s: %d registers, spill stores %d\n", jobs[i].label, pre[q], pr, pst);
      if (pr < 0 || pst != 0) failures++;
    }
    free(log);
  }
  tmpdir_remove(dir);
  assert_int_equal(failures, 0);
}

#ifndef TSR_EMU_SHARDS
#error "CMakeLists.txt defines TSR_EMU_SHARDS, the number of test_emit_emu_<s> copies"
#endif

/* One executable, several ctest tests, told apart by the name it runs under
 * (the copies CMakeLists.txt makes, so ctest -j and scripts/device/check,
 * which runs build/<test name>, spread them): test_emit_emu_<s> runs shard s
 * of the host emulation, test_emit_split the split=inline/pack identity,
 * test_emit_nvcc the nvcc compiles, test_emit the
 * rest (and, with TSR_EMU_ONLY set, the matching emulated cases of every
 * shard). */
int main(int argc, char **argv) {
  const char *name = strrchr(argv[0], '/');
  name = name ? name + 1 : argv[0];
  unsigned shard;
  char extra;
  if (sscanf(name, "test_emit_emu_%u%c", &shard, &extra) == 1) {
    if (shard >= TSR_EMU_SHARDS) {
      fprintf(stderr, "%s: there are %d shards (a stale copy?)\n", name, TSR_EMU_SHARDS);
      return 2;
    }
    emu_shard = (int)shard;
    const struct CMUnitTest emu[] = {cmocka_unit_test(test_emulated)};
    return cmocka_run_group_tests(emu, NULL, NULL);
  }
  if (strcmp(name, "test_emit_split") == 0) {
    const struct CMUnitTest split[] = {cmocka_unit_test(test_emulated_split_identity)};
    return cmocka_run_group_tests(split, NULL, NULL);
  }
  if (strcmp(name, "test_emit_mut") == 0) {
    const struct CMUnitTest mut[] = {cmocka_unit_test(test_emulated_wgmma_mutations)};
    return cmocka_run_group_tests(mut, NULL, NULL);
  }
  if (strcmp(name, "test_emit_nvcc") == 0) {
    const struct CMUnitTest nvcc[] = {cmocka_unit_test(test_nvcc)};
    return cmocka_run_group_tests(nvcc, NULL, NULL);
  }
  if (getenv("TSR_EMU_ONLY")) {
    const struct CMUnitTest only[] = {cmocka_unit_test(test_emulated),
                                      cmocka_unit_test(test_emulated_split_identity)};
    return cmocka_run_group_tests(only, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),   cmocka_unit_test(test_walk_identity),
      cmocka_unit_test(test_rejections),      cmocka_unit_test(test_target_limits),
      cmocka_unit_test(test_wgmma_contract),
      cmocka_unit_test(test_ozaki_rvec_gstride),
      cmocka_unit_test(test_beta_zero_source),
      cmocka_unit_test(test_default_table),   cmocka_unit_test(test_tail_slice_rule),
      cmocka_unit_test(test_pack_contract),
      cmocka_unit_test(test_lazy_contract),
      cmocka_unit_test(test_split_contract),  cmocka_unit_test(test_ownership),
      cmocka_unit_test(test_emulated_walks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
