/* The measurement layer: the workload and its oracle cache (ref, scale and
 * the strict reference's error survive a round trip; a damaged entry is
 * recomputed), the contract receipt on real outputs (the CPU backend meets
 * the FP32 contract on every input family; outputs degraded to TF32 or by a
 * truncating accumulation fail it with the right reason), the validated call
 * and the sample loop on the CPU backend, and the steps they ask of a
 * prepared execution, seen by a recording peer vtable (tsr__exec_create_vt). */
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

#include "core/backend.h"
#include "core/context.h"
#include "core/hash.h"
#include "measure/measure.h"
#include "tessera.h"

static char dir[256];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/tsr_measure_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}
static int teardown(void **state) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static tsr_problem prob(int64_t m, int64_t n, int64_t k, float beta) {
  tsr_problem p;
  tsr_problem_init(&p, m, n, k);
  p.beta = beta;
  p.alpha = beta != 0.0f ? 0.75f : 1.0f;
  char msg[256];
  assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
  return p;
}

static void test_oracle_cache(void **state) {
  tsr_problem p = prob(7, 5, 3, 0.5f);
  char cache[300], msg[256];
  snprintf(cache, sizeof cache, "%s/oracle", dir);
  tsr__workload *w1 = NULL, *w2 = NULL, *w3 = NULL;
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 0, &w1, msg, sizeof msg), TSR_OK);
  assert_string_equal(w1->oracle_source, "cpu");
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 0, &w2, msg, sizeof msg), TSR_OK);
  assert_string_equal(w2->oracle_source, "cache:cpu");
  assert_string_equal(w1->key_sha, w2->key_sha);
  assert_memory_equal(w1->ref, w2->ref, 35 * sizeof(double));
  assert_memory_equal(w1->scale, w2->scale, 35 * sizeof(float));
  assert_true(w1->strict_rel_fro == w2->strict_rel_fro); /* exact: stored as a hex float */
  assert_true(w1->strict_rel_fro > 0 && w1->strict_rel_fro < 1e-6);
  /* one element against the definitions */
  const float *a = w1->a, *b = w1->b, *c0 = w1->c0;
  double want = 0.5 * c0[2 * 5 + 3], sc = 0.5 * fabs(c0[2 * 5 + 3]);
  for (int k = 0; k < 3; k++) {
    want += 0.75 * (double)a[2 * 3 + k] * (double)b[k * 5 + 3];
    sc += 0.75 * fabs((double)a[2 * 3 + k] * (double)b[k * 5 + 3]);
  }
  assert_true(fabs(w2->ref[2 * 5 + 3] - want) < 1e-12);
  assert_true(fabsf(w2->scale[2 * 5 + 3] - (float)sc) <= 1e-6f * (float)sc);
  /* oracle only (a route that makes its own inputs): a cache hit generates
   * none, same oracle */
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 1, &w3, msg, sizeof msg), TSR_OK);
  assert_string_equal(w3->oracle_source, "cache:cpu");
  assert_true(w3->a == NULL && w3->b == NULL && w3->c0 == NULL && w3->inputs_ns == 0);
  assert_string_equal(w3->key_sha, w1->key_sha);
  assert_string_equal(w3->key, w1->key);
  assert_memory_equal(w1->ref, w3->ref, 35 * sizeof(double));
  assert_memory_equal(w1->scale, w3->scale, 35 * sizeof(float));
  assert_true(w1->strict_rel_fro == w3->strict_rel_fro);
  tsr__workload_destroy(w3);
  /* a different family is a different key */
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_WIDE, 9, cache, 0, &w3, msg, sizeof msg), TSR_OK);
  assert_string_equal(w3->oracle_source, "cpu");
  assert_string_not_equal(w1->key_sha, w3->key_sha);
  tsr__workload_destroy(w3);
  /* a damaged entry is never trusted: recomputed, same values */
  char path[600];
  snprintf(path, sizeof path, "%s/%s.f64", cache, w1->key_sha);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, -3, SEEK_END);
  fputc('X', f);
  fclose(f);
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 0, &w3, msg, sizeof msg), TSR_OK);
  assert_string_equal(w3->oracle_source, "cpu");
  assert_memory_equal(w1->ref, w3->ref, 35 * sizeof(double));
  tsr__workload_destroy(w3);
  /* Anything but a regular file of an entry's size at the entry's path is
   * a miss (recomputed, then stored over it), never a hang or a read
   * without end: a FIFO nobody writes, a link to /dev/zero, a file longer
   * than any entry of this problem. */
  for (int kind = 0; kind < 3; kind++) {
    assert_int_equal(unlink(path), 0);
    if (kind == 0) assert_int_equal(mkfifo(path, 0644), 0);
    if (kind == 1) assert_int_equal(symlink("/dev/zero", path), 0);
    if (kind == 2) {
      f = fopen(path, "wb");
      assert_non_null(f);
      for (int i = 0; i < 8192; i++) fputc('x', f);
      fclose(f);
    }
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 0, &w3, msg, sizeof msg), TSR_OK);
    assert_string_equal(w3->oracle_source, "cpu");
    assert_memory_equal(w1->ref, w3->ref, 35 * sizeof(double));
    tsr__workload_destroy(w3);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode)); /* the recomputed entry replaced it */
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 9, cache, 0, &w3, msg, sizeof msg), TSR_OK);
    assert_string_equal(w3->oracle_source, "cache:cpu");
    tsr__workload_destroy(w3);
  }
  w3 = NULL;
  tsr__workload_destroy(w1);
  tsr__workload_destroy(w2);
  tsr__workload_destroy(w3);
  tsr__workload_destroy(NULL);
}

/* Reads the entry at path: the header's digest line and the payload. */
static unsigned char *read_entry(const char *path, char digest[80], size_t *payload_len, char magic[64]) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char line[1100];
  for (int i = 0; i < 6; i++) {
    assert_non_null(fgets(line, sizeof line, f));
    line[strcspn(line, "\n")] = '\0';
    if (i == 0) snprintf(magic, 64, "%.63s", line);
    if (i == 4) snprintf(digest, 80, "%.79s", line);
  }
  long start = ftell(f);
  fseek(f, 0, SEEK_END);
  *payload_len = (size_t)(ftell(f) - start);
  fseek(f, start, SEEK_SET);
  unsigned char *buf = malloc(*payload_len);
  assert_int_equal(fread(buf, 1, *payload_len, f), *payload_len);
  fclose(f);
  return buf;
}

/* Flips one byte of the entry at path, offset from the payload's start. */
static void damage(const char *path, size_t header, size_t off) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, (long)(header + off), SEEK_SET);
  int c = fgetc(f);
  fseek(f, (long)(header + off), SEEK_SET);
  fputc(c ^ 0x20, f);
  fclose(f);
}

/* The chunked payload digest (oracle_cache.c, docs/protocol.md): SHA-256
 * over the raw SHA-256s of the payload's 4 MiB pieces. An entry of 640x640
 * outputs is 4915200 payload bytes: chunk 0 holds all of ref and the start
 * of scale, chunk 1 the rest. Damage anywhere in either chunk is a miss
 * (recomputed, stored anew, then a hit); an entry of the previous format
 * (magic /3) is a miss. */
static void test_oracle_cache_chunks(void **state) {
  tsr_problem p = prob(640, 640, 1, 0.0f);
  char cache[300], msg[256], path[600], digest[80], magic[64];
  snprintf(cache, sizeof cache, "%s/oracle", dir);
  tsr__workload *w1 = NULL, *w2 = NULL;
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 3, cache, 0, &w1, msg, sizeof msg), TSR_OK);
  assert_string_equal(w1->oracle_source, "cpu");
  snprintf(path, sizeof path, "%s/%s.f64", cache, w1->key_sha);
  size_t len;
  unsigned char *pay = read_entry(path, digest, &len, magic);
  const size_t count = 640 * 640, chunk = (size_t)4 << 20;
  assert_string_equal(magic, "tessera-oracle/4");
  assert_int_equal(len, count * 12);
  assert_memory_equal(pay, w1->ref, count * 8);
  assert_memory_equal(pay + count * 8, w1->scale, count * 4);
  /* the digest, recomputed from its definition */
  unsigned char mds[2][32];
  for (size_t c = 0; c < 2; c++) {
    size_t n = c ? len - chunk : chunk;
    const void *part[1] = {pay + c * chunk};
    assert_int_equal(tsr__sha256_parts(part, &n, 1, mds[c]), 0);
  }
  char want[65];
  assert_int_equal(tsr__sha256_hex(mds, sizeof mds, want), 0);
  assert_string_equal(digest, want);
  free(pay);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  size_t header = (size_t)sb.st_size - len;
  const size_t offs[] = {100, count * 8 + 10, chunk + 10, len - 1};
  for (int i = 0; i < 4; i++) {
    damage(path, header, offs[i]);
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 3, cache, 0, &w2, msg, sizeof msg), TSR_OK);
    assert_string_equal(w2->oracle_source, "cpu");
    tsr__workload_destroy(w2);
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 3, cache, 0, &w2, msg, sizeof msg), TSR_OK);
    assert_string_equal(w2->oracle_source, "cache:cpu");
    assert_memory_equal(w1->ref, w2->ref, count * 8);
    assert_memory_equal(w1->scale, w2->scale, count * 4);
    tsr__workload_destroy(w2);
  }
  /* the previous format's magic: a miss, never trusted */
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, (long)strlen("tessera-oracle/"), SEEK_SET);
  fputc('3', f);
  fclose(f);
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 3, cache, 0, &w2, msg, sizeof msg), TSR_OK);
  assert_string_equal(w2->oracle_source, "cpu");
  tsr__workload_destroy(w2);
  tsr__workload_destroy(w1);
}

/* The input families: exact dyadic eighths; uniform in [-1, 1); normal with
 * mean ~0 and variance ~1 within [-6, 6); wide with exponents spread over
 * 2^-20..2^20. */
static void test_families(void **state) {
  tsr_problem p = prob(64, 64, 64, 0.0f);
  float *v = malloc(64 * 64 * sizeof *v);
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_NORMAL, 3, v);
  double s = 0, s2 = 0;
  for (int i = 0; i < 4096; i++) {
    assert_true(v[i] >= -6.0f && v[i] < 6.0f);
    s += v[i];
    s2 += (double)v[i] * v[i];
  }
  assert_true(fabs(s / 4096) < 0.06);
  assert_true(fabs(s2 / 4096 - 1.0) < 0.08);
  tsr_fill(&p, TSR_TENSOR_A, TSR_INPUTS_WIDE, 3, v);
  int lo = 0, hi = 0;
  for (int i = 0; i < 4096; i++) {
    float x = fabsf(v[i]);
    assert_true(x < 0x1p20f);
    lo += x > 0 && x < 0x1p-10f;
    hi += x >= 0x1p10f;
  }
  assert_true(lo > 100 && hi > 100);
  char msg[128];
  tsr_inputs k;
  assert_int_equal(tsr_inputs_parse("wide", &k, msg, sizeof msg), TSR_OK);
  assert_int_equal(k, TSR_INPUTS_WIDE);
  assert_int_equal(tsr_inputs_parse("gauss", &k, msg, sizeof msg), TSR_ERR_PARSE);
  assert_non_null(strstr(msg, "'gauss'"));
  free(v);
}

/* Output c of the CPU backend for workload w (default plan). */
static void run_cpu(const tsr__workload *w, float *c) {
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  memcpy(c, w->c0 ? w->c0 : c, w->c0 ? (size_t)tsr_problem_elems_c(&w->p) * sizeof *c : 0);
  if (!w->c0) tsr_poison(&w->p, c);
  assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_CPU, &w->p, NULL, w->a, w->b, c), TSR_OK);
  tsr_context_destroy(ctx);
}

/* The CPU backend meets the FP32 contract on every family and the dyadic
 * check is exact; the same outputs with operands rounded to TF32, or summed
 * with truncation (round toward zero: the tensor-core accumulation bias),
 * break it, and the receipt says why. */
static void test_contract_cpu(void **state) {
  static const struct { int64_t m, n, k; float beta; } shapes[] = {
      {64, 48, 1000, 0.0f}, {33, 70, 257, 0.5f}, {128, 64, 4096, 0.0f}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    tsr_problem p = prob(shapes[s].m, shapes[s].n, shapes[s].k, shapes[s].beta);
    for (int fam = 0; fam < TSR_INPUTS_COUNT; fam++) {
      tsr__workload *w;
      char msg[256];
      assert_int_equal(tsr__workload_create(&p, (tsr_inputs)fam, 5, NULL, 0, &w, msg, sizeof msg), TSR_OK);
      size_t nc = (size_t)tsr_problem_elems_c(&p);
      float *c = malloc(nc * sizeof *c);
      run_cpu(w, c);
      tsr_receipt r;
      tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, c, &r);
      if (!r.passed) {
        tsr__receipt_summary(&r, msg, sizeof msg);
        fail_msg("%lldx%lldx%lld %s: %s", (long long)p.m, (long long)p.n, (long long)p.k,
                 tsr_inputs_name((tsr_inputs)fam), msg);
      }
      if (fam == TSR_INPUTS_DYADIC) {
        assert_true(r.max_abs_err == 0.0);
        assert_int_equal(r.contract, TSR_PREC_AUTO);
        free(c);
        tsr__workload_destroy(w);
        continue;
      }
      assert_int_equal(r.contract, TSR_PREC_STRICT);
      assert_true(r.rel_fro_err <= r.fro_limit);
      assert_true(r.worst_bound_ratio < 1.0);
      /* TF32 operands (11 significant bits, round to nearest) */
      float *t = malloc(nc * sizeof *t);
      float *ta = malloc((size_t)tsr_problem_elems_a(&p) * sizeof *ta);
      float *tb = malloc((size_t)tsr_problem_elems_b(&p) * sizeof *tb);
      for (int64_t i = 0; i < tsr_problem_elems_a(&p); i++) {
        uint32_t u;
        memcpy(&u, &w->a[i], 4);
        u = (u + 0x1000u) & 0xffffe000u;
        memcpy(&ta[i], &u, 4);
      }
      for (int64_t i = 0; i < tsr_problem_elems_b(&p); i++) {
        uint32_t u;
        memcpy(&u, &w->b[i], 4);
        u = (u + 0x1000u) & 0xffffe000u;
        memcpy(&tb[i], &u, 4);
      }
      tsr_context *ctx;
      assert_int_equal(tsr_context_create(&ctx), TSR_OK);
      if (w->c0) memcpy(t, w->c0, nc * sizeof *t);
      assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_CPU, &p, NULL, ta, tb, t), TSR_OK);
      tsr_context_destroy(ctx);
      tsr__workload_check(w, TSR_PREC_FP32X3, 0.0, 0.0, t, &r);
      assert_false(r.passed);
      assert_true(r.bound_failed > 0 || r.rel_fro_err > r.fro_limit);
      tsr__receipt_summary(&r, msg, sizeof msg);
      assert_non_null(strstr(msg, "fp32x3 contract"));
      /* ... which the TF32 bound accepts */
      tsr__workload_check(w, TSR_PREC_TF32, 0.0, 0.0, t, &r);
      if (!r.passed) {
        tsr__receipt_summary(&r, msg, sizeof msg);
        fail_msg("tf32 bound refused TF32 operands: %s", msg);
      }
      /* sequential sum with round-toward-zero additions (the pre-contract
       * tensor-core accumulation) at large K: the Frobenius clause fails */
      if (p.k >= 1000) {
        for (int64_t i = 0; i < p.m; i++)
          for (int64_t j = 0; j < p.n; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < p.k; k++) {
              double exact = (double)acc + (double)w->a[i * p.k + k] * (double)w->b[k * p.n + j];
              float f = (float)exact;
              if (fabs((double)f) > fabs(exact)) f = nextafterf(f, 0.0f);
              acc = f;
            }
            t[i * p.n + j] = p.alpha * acc + (w->c0 ? p.beta * w->c0[i * p.n + j] : 0.0f);
          }
        tsr__workload_check(w, TSR_PREC_FP32X3, 0.0, 0.0, t, &r);
        assert_false(r.passed);
        assert_true(r.rel_fro_err > r.fro_limit);
      }
      free(t);
      free(ta);
      free(tb);
      free(c);
      tsr__workload_destroy(w);
    }
  }
}

/* Special values (docs/accuracy.md): NaN, +-Inf, values near FLT_MAX,
 * subnormals, a NaN-filled C with beta = 0: the CPU backend's output has the
 * FP64 reference's NaN/Inf class on every element and passes the contract. */
static void test_specials_cpu(void **state) {
  tsr_problem p = prob(24, 20, 40, 0.0f);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  for (int kind = 0; kind < 6; kind++) {
    tsr__workload *w;
    char msg[256];
    p.beta = kind == 5 ? 0.5f : 0.0f;
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_RANDOM, 11, NULL, 0, &w, msg, sizeof msg), TSR_OK);
    float *a = w->a, *b = w->b;
    switch (kind) {
      case 0: a[3 * 40 + 7] = NAN; break;                      /* row 3 all NaN */
      case 1: a[5 * 40 + 2] = INFINITY; b[9 * 20 + 4] = -INFINITY; break;
      case 2: a[2 * 40 + 5] = 3.4028235e38f; b[5 * 20 + 3] = 1.0f; break; /* FLT_MAX, one per dot */
      case 3: for (int k = 0; k < 40; k++) a[6 * 40 + k] = 1e-39f * (float)(k + 1), b[k * 20 + 1] = 1e30f; break;
      case 4: b[0] = INFINITY; a[0] = 0.0f; break;             /* 0 x Inf = NaN */
      default: w->c0[7] = NAN; break;                          /* beta != 0: NaN propagates */
    }
    /* the reference of the altered inputs */
    assert_int_equal(tsr_oracle_cpu(&w->p, w->a, w->b, w->c0, w->ref, w->scale, &w->strict_rel_fro), TSR_OK);
    float *c = malloc((size_t)tsr_problem_elems_c(&p) * sizeof *c);
    if (w->c0) memcpy(c, w->c0, (size_t)tsr_problem_elems_c(&p) * sizeof *c);
    else tsr_poison(&p, c); /* beta = 0 never reads C: the poison must vanish */
    assert_int_equal(tsr_gemm(ctx, TSR_BACKEND_CPU, &w->p, NULL, w->a, w->b, c), TSR_OK);
    tsr_receipt r;
    tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, c, &r);
    int specials = 0;
    for (int64_t i = 0; i < p.m * p.n; i++) specials += !isfinite((float)w->ref[i]);
    if (kind != 3 && kind != 2) assert_true(specials > 0);
    if (r.class_failed) fail_msg("special case %d: %lld outputs of the wrong class", kind, (long long)r.class_failed);
    if (!r.passed) {
      tsr__receipt_summary(&r, msg, sizeof msg);
      fail_msg("special case %d: %s", kind, msg);
    }
    /* a wrong class is caught: flip one special output to 0 */
    for (int64_t i = 0; i < p.m * p.n; i++)
      if (!isfinite(c[i])) {
        c[i] = 0.0f;
        tsr__workload_check(w, TSR_PREC_STRICT, 0.0, 0.0, c, &r);
        assert_int_equal(r.class_failed, 1);
        assert_false(r.passed);
        break;
      }
    free(c);
    tsr__workload_destroy(w);
  }
  tsr_context_destroy(ctx);
}

/* The validated call and the sample loop through a prepared execution on
 * the CPU backend. */
static void test_validated_call_and_samples(void **state) {
  tsr_problem p = prob(40, 30, 20, 0.25f);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__workload *w;
  char msg[256];
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg), TSR_OK);
  tsr_plan plan;
  tsr_plan_builtin(ctx, TSR_BACKEND_CPU, &w->p, &plan);
  tsr_exec *e = NULL;
  assert_int_equal(tsr__exec_create(ctx, TSR_BACKEND_CPU, &w->p, &plan, w->a, w->b, w->c0, 0, &e),
                   TSR_OK);
  assert_int_equal(tsr_exec_info(e)->precision, TSR_PREC_STRICT);
  assert_int_equal(tsr__exec_is_gpu(e), 0);
  float *c = malloc((size_t)tsr_problem_elems_c(&w->p) * sizeof *c);
  tsr_receipt r;
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_true(r.passed);
  assert_true(r.max_abs_err == 0.0);
  assert_int_equal(r.checked, p.m * p.n);
  /* the corruption hook makes the same call fail */
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 1, &r), TSR_OK);
  assert_false(r.passed);
  assert_int_equal(r.first_fail, 0);
  assert_int_equal(r.failed, 1);
  /* the call restores C first: a sample in between (C left holding beta
   * applied many times) does not change the next validated output */
  tsr__calibration cal;
  assert_int_equal(tsr__calibrate(e, 5, 2, &cal), TSR_OK);
  assert_true(cal.warmup_calls >= 2 && cal.calls_per_batch >= 1);
  assert_true(cal.warmup_batches >= 1 && cal.est_call_ns >= 1);
  int64_t ns = 0;
  assert_int_equal(tsr__sample(e, TSR__TIMER_HOST, cal.calls_per_batch, &ns), TSR_OK);
  assert_true(ns > 0);
  assert_int_equal(tsr__sample(e, TSR__TIMER_EVENT, 1, &ns), TSR_ERR_UNSUPPORTED);
  assert_non_null(strstr(tsr_context_message(ctx), "no device events"));
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_true(r.passed);
  tsr_exec_destroy(e);
  /* precision modes the CPU backend does not run are refused by name */
  tsr_problem q = w->p;
  q.precision = TSR_PREC_FP32X3;
  assert_int_equal(tsr__exec_create(ctx, TSR_BACKEND_CPU, &q, &plan, w->a, w->b, w->c0, 0, &e),
                   TSR_ERR_UNSUPPORTED);
  assert_null(e);
  assert_non_null(strstr(tsr_context_message(ctx), "fp32x3 is not available on backend cpu"));
  free(c);
  tsr__workload_destroy(w);
  tsr_context_destroy(ctx);
}

/* ---- a recording peer: what the measurement layer asks of an exec -------- */
/* A plain CPU GEMM (compact, op N, batch 1: exact on dyadic inputs) behind a
 * vtable that counts every step, as a bench-only peer would be. */
static struct {
  int available_fails, stale_last; /* knobs */
  int prepares, prepare_flags, flags_seen, resets, launches, syncs, downloads;
  int64_t launched;  /* calls, summed over launches */
  int reset_before_launch; /* the last launch came right after a reset + sync */
  int last_step;     /* 'r', 's', 'l', 'd' */
} rec;

typedef struct {
  tsr_problem p;
  const float *a, *b;
  float *c, *c0;
} rec_exec;

static tsr_status rec_available(tsr_context *ctx) {
  return rec.available_fails ? tsr__fail(ctx, TSR_ERR_UNSUPPORTED, "rec: switched off") : TSR_OK;
}
static void rec_default_plan(tsr_context *ctx, const tsr_problem *p, tsr_plan *out) {
  (void)ctx;
  (void)p;
  memset(out, 0, sizeof *out);
}
static tsr_status rec_realize(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              tsr_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->plan = *plan;
  info->regs = info->local_bytes = -1;
  info->precision = TSR_PREC_STRICT;
  return TSR_OK;
}
static tsr_status rec_prepare(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                              const float *a, const float *b, const float *c0, void **exec) {
  rec.prepares++;
  rec_exec *e = calloc(1, sizeof *e);
  size_t nc = (size_t)(p->m * p->n);
  e->p = *p;
  e->a = a;
  e->b = b;
  e->c = malloc(nc * sizeof *e->c);
  if (c0) {
    e->c0 = malloc(nc * sizeof *e->c0);
    memcpy(e->c0, c0, nc * sizeof *e->c0);
  }
  *exec = e;
  return TSR_OK;
}
static tsr_status rec_prepare_flags(tsr_context *ctx, const tsr_problem *p, const tsr_plan *plan,
                                    const float *a, const float *b, const float *c0, int flags,
                                    void **exec) {
  rec.prepare_flags++;
  rec.flags_seen = flags;
  return rec_prepare(ctx, p, plan, a, b, c0, exec);
}
static tsr_status rec_reset(void *exec) {
  rec_exec *e = exec;
  if (e->c0) memcpy(e->c, e->c0, (size_t)(e->p.m * e->p.n) * sizeof *e->c);
  else tsr_poison(&e->p, e->c);
  rec.resets++;
  rec.last_step = 'r';
  return TSR_OK;
}
static tsr_status rec_launch(void *exec, int n) {
  rec_exec *e = exec;
  const tsr_problem *p = &e->p;
  rec.reset_before_launch = rec.last_step == 's';
  for (int r = 0; r < n; r++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        float acc = 0.0f;
        for (int64_t l = 0; l < p->k; l++) acc += e->a[i * p->k + l] * e->b[l * p->n + j];
        float *c = &e->c[i * p->n + j];
        *c = p->alpha * acc + (p->beta != 0.0f ? p->beta * *c : 0.0f);
      }
  rec.launches++;
  rec.launched += n;
  rec.last_step = 'l';
  return TSR_OK;
}
static tsr_status rec_sync(void *exec) {
  rec.syncs++;
  if (rec.last_step == 'r') rec.last_step = 's';
  return TSR_OK;
}
static tsr_status rec_download(void *exec, float *c) {
  rec_exec *e = exec;
  int64_t n = e->p.m * e->p.n - (rec.stale_last ? 1 : 0);
  memcpy(c, e->c, (size_t)n * sizeof *c);
  rec.downloads++;
  rec.last_step = 'd';
  return TSR_OK;
}
static void rec_destroy(void *exec) {
  rec_exec *e = exec;
  if (!e) return;
  free(e->c);
  free(e->c0);
  free(e);
}
static const tsr__backend rec_vt = {
    .api = TSR__BACKEND_API, .name = "rec", .is_gpu = 0, .available = rec_available,
    .default_plan = rec_default_plan, .realize = rec_realize, .prepare = rec_prepare,
    .reset_c = rec_reset, .launch = rec_launch, .sync = rec_sync, .event_time = NULL,
    .download = rec_download, .destroy = rec_destroy, .prepare_flags = rec_prepare_flags,
};

static void test_peer_steps(void **state) {
  tsr_problem p = prob(6, 5, 4, 0.5f);
  tsr_context *ctx;
  assert_int_equal(tsr_context_create(&ctx), TSR_OK);
  tsr__workload *w;
  char msg[256];
  assert_int_equal(tsr__workload_create(&p, TSR_INPUTS_DYADIC, 1, NULL, 0, &w, msg, sizeof msg), TSR_OK);
  tsr_plan plan;
  rec_default_plan(NULL, &p, &plan);
  memset(&rec, 0, sizeof rec);
  tsr_exec *e = NULL;
  assert_int_equal(tsr__exec_create_vt(ctx, &rec_vt, &w->p, &plan, w->a, w->b, w->c0, 0, &e),
                   TSR_OK);
  assert_int_equal(rec.prepares, 1);
  assert_int_equal(rec.prepare_flags, 0); /* no flags: the plain prepare */
  float c[30];
  tsr_receipt r;
  /* the validated call: reset, one call, sync, download, exact receipt */
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_true(r.passed);
  assert_int_equal(r.checked, 30);
  assert_int_equal(rec.resets, 1);
  assert_int_equal(rec.launched, 1);
  assert_int_equal(rec.downloads, 1);
  /* an element the exec never delivers stays NaN (C poisoned first) and fails */
  rec.stale_last = 1;
  assert_int_equal(tsr__validated_call(e, w, TSR_PREC_STRICT, 0.0, 0.0, c, 0, &r), TSR_OK);
  assert_false(r.passed);
  assert_int_equal(r.failed, 1);
  assert_int_equal(r.first_fail, 29);
  assert_true(isnan(c[29]));
  rec.stale_last = 0;
  /* calibration: every warm-up call is launched and counted, batch by batch */
  int64_t launched = rec.launched, launches = rec.launches;
  tsr__calibration cal;
  assert_int_equal(tsr__calibrate(e, 3, 1, &cal), TSR_OK);
  assert_int_equal(rec.launched - launched, cal.warmup_calls);
  assert_int_equal(rec.launches - launches, cal.warmup_batches);
  /* a sample: C restored and the queue drained before its one launch of n */
  launched = rec.launched;
  int resets = rec.resets;
  int64_t ns = -1;
  assert_int_equal(tsr__sample(e, TSR__TIMER_HOST, 7, &ns), TSR_OK);
  assert_int_equal(rec.launched - launched, 7);
  assert_int_equal(rec.resets - resets, 1);
  assert_true(rec.reset_before_launch);
  assert_true(ns >= 0);
  /* a count the vtable cannot take, and events on a CPU exec, are refused */
  assert_int_equal(tsr__sample(e, TSR__TIMER_HOST, (int64_t)1 << 31, &ns), TSR_ERR_INVALID);
  assert_int_equal(tsr__sample(e, TSR__TIMER_EVENT, 1, &ns), TSR_ERR_UNSUPPORTED);
  assert_non_null(strstr(tsr_context_message(ctx), "rec has no device events"));
  assert_int_equal(rec.launched - launched, 7);
  tsr_exec_destroy(e);
  /* the bypass flag reaches prepare_flags */
  assert_int_equal(tsr__exec_create_vt(ctx, &rec_vt, &w->p, &plan, w->a, w->b, w->c0,
                                       TSR__EXEC_BYPASS_CACHE, &e),
                   TSR_OK);
  assert_int_equal(rec.prepare_flags, 1);
  assert_int_equal(rec.flags_seen, TSR__PREPARE_BYPASS_CACHE);
  tsr_exec_destroy(e);
  /* beta != 0 without C0, and an unusable peer: refused before any prepare */
  int prepares = rec.prepares;
  assert_int_equal(tsr__exec_create_vt(ctx, &rec_vt, &w->p, &plan, w->a, w->b, NULL, 0, &e),
                   TSR_ERR_INVALID);
  assert_null(e);
  assert_non_null(strstr(tsr_context_message(ctx), "needs C0"));
  rec.available_fails = 1;
  assert_int_equal(tsr__exec_create_vt(ctx, &rec_vt, &w->p, &plan, w->a, w->b, w->c0, 0, &e),
                   TSR_ERR_UNSUPPORTED);
  assert_null(e);
  assert_string_equal(tsr_context_message(ctx), "rec: switched off");
  assert_int_equal(rec.prepares, prepares);
  tsr__workload_destroy(w);
  tsr_context_destroy(ctx);
}


int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_oracle_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oracle_cache_chunks, setup, teardown),
      cmocka_unit_test(test_families),
      cmocka_unit_test(test_contract_cpu),
      cmocka_unit_test(test_specials_cpu),
      cmocka_unit_test(test_validated_call_and_samples),
      cmocka_unit_test(test_peer_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
