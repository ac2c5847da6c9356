/* The BLAS shim against the reference contract: every output element of
 * sgemm_ and cblas_sgemm (both majors, N/T/C, scalar variants, padded
 * leading dimensions, quick returns) against an FP64 reference computed
 * here, on dyadic inputs where FP32 is exact; and every illegal argument
 * reaching xerbla_ / cblas_xerbla (overridden below) with the reference
 * INFO / parameter number, C untouched. Linked against libtessera_blas.so. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blas/blas.h"

/* ---- captured error handlers (replace the shim's weak ones) ------------- */

static int xerbla_calls, xerbla_info;
static char xerbla_name[16];
static size_t xerbla_len;

void xerbla_(const char *srname, const int *info, size_t srname_len) {
  xerbla_calls++;
  xerbla_info = *info;
  xerbla_len = srname_len;
  snprintf(xerbla_name, sizeof xerbla_name, "%.*s", (int)srname_len, srname);
}

static int cxerbla_calls, cxerbla_p;
static char cxerbla_rout[32];

void cblas_xerbla(int p, const char *rout, const char *form, ...) {
  cxerbla_calls++;
  cxerbla_p = p;
  snprintf(cxerbla_rout, sizeof cxerbla_rout, "%s", rout);
}

static void reset_errors(void) {
  xerbla_calls = xerbla_info = 0;
  cxerbla_calls = cxerbla_p = 0;
  xerbla_name[0] = cxerbla_rout[0] = '\0';
  xerbla_len = 0;
}

/* ---- matrices --------------------------------------------------------------- */

typedef enum { API_F77, API_CBLAS_COL, API_CBLAS_ROW } api;
static const char *const api_names[] = {"sgemm_", "cblas_sgemm col-major", "cblas_sgemm row-major"};

/* A stored rows×cols matrix, column- or row-major, leading dimension ld. */
typedef struct {
  int rows, cols, ld, colmajor;
  size_t len; /* elements allocated: ld × (the other extent), at least 1 */
  float *v;
} mat;

static size_t at(const mat *x, int r, int c) {
  return x->colmajor ? (size_t)r + (size_t)c * x->ld : (size_t)r * x->ld + c;
}

/* Padding (elements outside rows×cols) holds `pad_value`; logical elements
 * are dyadic small integers / 8, or `fill` when fill_const is set. */
static mat mat_make(int rows, int cols, int colmajor, int pad, unsigned seed, float pad_value,
                    int fill_const, float fill) {
  mat x = {rows, cols, 0, colmajor, 0, NULL};
  int lead = colmajor ? rows : cols, other = colmajor ? cols : rows;
  x.ld = (lead > 1 ? lead : 1) + pad;
  x.len = (size_t)x.ld * (size_t)(other > 1 ? other : 1);
  x.v = malloc(x.len * sizeof(float));
  assert_non_null(x.v);
  for (size_t i = 0; i < x.len; i++) x.v[i] = pad_value;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      x.v[at(&x, r, c)] =
          fill_const ? fill : (float)((int)((r * 7u + c * 3u + seed * 5u) % 9u) - 4) / 8.0f;
  return x;
}

static float *copy_of(const mat *x) {
  float *c = malloc(x->len * sizeof(float));
  assert_non_null(c);
  memcpy(c, x->v, x->len * sizeof(float));
  return c;
}

/* op(X)(i, l) with op 'N' or transposed. */
static double op_at(const mat *x, char op, int i, int l) {
  return op == 'N' ? x->v[at(x, i, l)] : x->v[at(x, l, i)];
}

static const char trans_chars[] = {'N', 'T', 'C'};
static const int trans_enums[] = {TSR_CBLAS_NO_TRANS, TSR_CBLAS_TRANS, TSR_CBLAS_CONJ_TRANS};

/* One call through the chosen entry point. ti/tj index trans_chars. */
static void call(api which, int ti, int tj, int lower, int m, int n, int k, float alpha,
                 const mat *a, const mat *b, float beta, mat *c) {
  if (which == API_F77) {
    char ta = trans_chars[ti], tb = trans_chars[tj];
    if (lower) {
      ta = (char)(ta - 'A' + 'a');
      tb = (char)(tb - 'A' + 'a');
    }
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a->v, &a->ld, b->v, &b->ld, &beta, c->v, &c->ld);
  } else {
    cblas_sgemm(which == API_CBLAS_ROW ? TSR_CBLAS_ROW_MAJOR : TSR_CBLAS_COL_MAJOR,
                trans_enums[ti], trans_enums[tj], m, n, k, alpha, a->v, a->ld, b->v, b->ld, beta,
                c->v, c->ld);
  }
}

/* Runs one case and compares every element against the FP64 reference:
 * exact equality (the inputs make every FP32 step exact; checked), padding
 * and inputs bit-identical. beta == 0 starts C as NaN, which must not leak. */
static void run_case(api which, int ti, int tj, int lower, int m, int n, int k, float alpha,
                     float beta, int pad) {
  int colmajor = which != API_CBLAS_ROW;
  char ta = ti ? 'T' : 'N', tb = tj ? 'T' : 'N';
  mat a = ta == 'N' ? mat_make(m, k, colmajor, pad, 1, NAN, 0, 0)
                    : mat_make(k, m, colmajor, pad, 1, NAN, 0, 0);
  mat b = tb == 'N' ? mat_make(k, n, colmajor, pad, 2, NAN, 0, 0)
                    : mat_make(n, k, colmajor, pad, 2, NAN, 0, 0);
  mat c = mat_make(m, n, colmajor, pad, 3, -12345.5f, beta == 0.0f, NAN);
  float *a0 = copy_of(&a), *b0 = copy_of(&b), *c0 = copy_of(&c);

  reset_errors();
  call(which, ti, tj, lower, m, n, k, alpha, &a, &b, beta, &c);
  assert_int_equal(xerbla_calls + cxerbla_calls, 0);

  int64_t bad = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double ref;
      if (alpha == 0.0f || k == 0) {
        ref = beta == 0.0f ? 0.0 : (double)beta * c0[at(&c, i, j)];
        if (beta == 1.0f) ref = c0[at(&c, i, j)];
      } else {
        double s = 0.0;
        for (int l = 0; l < k; l++) s += op_at(&a, ta, i, l) * op_at(&b, tb, l, j);
        ref = (double)alpha * s + (beta == 0.0f ? 0.0 : (double)beta * c0[at(&c, i, j)]);
      }
      assert_true((double)(float)ref == ref); /* the premise: exact in FP32 */
      float got = c.v[at(&c, i, j)];
      if (!((double)got == ref)) {
        if (bad++ < 5)
          print_error("%s trans %c%c %dx%dx%d alpha %g beta %g pad %d: C(%d,%d) = %.9g, "
                      "reference %.17g\n",
                      api_names[which], trans_chars[ti], trans_chars[tj], m, n, k, alpha, beta,
                      pad, i, j, got, ref);
      }
      c.v[at(&c, i, j)] = c0[at(&c, i, j)]; /* so the padding check below sees the rest */
    }
  assert_int_equal(bad, 0);
  assert_memory_equal(c.v, c0, c.len * sizeof(float)); /* padding untouched */
  assert_memory_equal(a.v, a0, a.len * sizeof(float));
  assert_memory_equal(b.v, b0, b.len * sizeof(float));
  free(a0), free(b0), free(c0), free(a.v), free(b.v), free(c.v);
}

static const struct { float alpha, beta; } scalars[] = {
    {1.0f, 0.0f}, {-1.5f, 0.5f}, {1.0f, 1.0f}, {2.0f, -1.0f},
    {0.0f, 0.0f}, {0.0f, -0.25f}, {0.0f, 1.0f}, {0.5f, 2.0f},
};
#define NSCALARS (int)(sizeof scalars / sizeof scalars[0])

static const struct { int m, n, k; } shapes[] = {
    {1, 1, 1}, {2, 3, 4}, {7, 5, 3}, {17, 33, 9}, {64, 48, 70}, {130, 67, 259},
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

/* All transposes × scalars × shapes × {compact, padded} for one entry. */
static void sweep(api which) {
  for (int s = 0; s < NSHAPES; s++)
    for (int ti = 0; ti < 3; ti++)
      for (int tj = 0; tj < 3; tj++)
        for (int v = 0; v < NSCALARS; v++)
          for (int pad = 0; pad <= 3; pad += 3) {
            /* The largest shape with two scalar sets keeps the run short. */
            if (s == NSHAPES - 1 && v != 1 && v != 3) continue;
            run_case(which, ti, tj, 0, shapes[s].m, shapes[s].n, shapes[s].k, scalars[v].alpha,
                     scalars[v].beta, pad);
          }
}

static void test_sgemm_sweep(void **state) { sweep(API_F77); }
static void test_cblas_col_sweep(void **state) { sweep(API_CBLAS_COL); }
static void test_cblas_row_sweep(void **state) { sweep(API_CBLAS_ROW); }

/* Lower-case TRANS characters are legal and mean the same. */
static void test_sgemm_lowercase(void **state) {
  for (int ti = 0; ti < 3; ti++)
    for (int tj = 0; tj < 3; tj++) run_case(API_F77, ti, tj, 1, 5, 6, 7, -1.5f, 0.5f, 2);
}

/* M == 0, N == 0, and (alpha == 0 or K == 0) with beta == 1 return without
 * touching anything; K == 0 otherwise scales C by beta (0 writes zeros over
 * NaN). Also at minimum leading dimensions of 1. */
static void test_quick_returns(void **state) {
  for (int w = 0; w < 3; w++)
    for (int pad = 0; pad <= 2; pad += 2) {
      run_case((api)w, 0, 0, 0, 0, 5, 3, 1.0f, 0.0f, pad);
      run_case((api)w, 1, 1, 0, 4, 0, 3, 1.0f, 0.0f, pad);
      run_case((api)w, 0, 1, 0, 0, 0, 0, 2.0f, 2.0f, pad);
      run_case((api)w, 1, 0, 0, 4, 5, 0, 1.0f, 1.0f, pad);  /* K == 0, beta == 1 */
      run_case((api)w, 0, 2, 0, 4, 5, 0, 1.0f, 0.0f, pad);  /* K == 0, beta == 0 */
      run_case((api)w, 2, 0, 0, 4, 5, 0, -1.0f, 2.0f, pad); /* K == 0: C = 2C */
      run_case((api)w, 1, 1, 0, 4, 5, 3, 0.0f, 1.0f, pad);  /* alpha == 0, beta == 1 */
    }
}

/* alpha == 0 reads neither A nor B (all-NaN A and B leave C = beta*C), and
 * with M == 0 the shim must not touch A, B or C at all (NULL pointers). */
static void test_alpha_zero_reads_no_inputs(void **state) {
  for (int w = 0; w < 3; w++) {
    int colmajor = w != API_CBLAS_ROW;
    int m = 6, n = 4, k = 5;
    mat a = mat_make(m, k, colmajor, 1, 0, NAN, 1, NAN);
    mat b = mat_make(k, n, colmajor, 1, 0, NAN, 1, NAN);
    for (int beta0 = 0; beta0 < 2; beta0++) {
      float beta = beta0 ? 0.0f : -0.5f;
      mat c = mat_make(m, n, colmajor, 2, 4, 99.0f, beta0, NAN);
      float *c0 = copy_of(&c);
      reset_errors();
      call((api)w, 0, 0, 0, m, n, k, 0.0f, &a, &b, beta, &c);
      assert_int_equal(xerbla_calls + cxerbla_calls, 0);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
          float want = beta0 ? 0.0f : beta * c0[at(&c, i, j)];
          assert_true(c.v[at(&c, i, j)] == want);
          c.v[at(&c, i, j)] = c0[at(&c, i, j)];
        }
      assert_memory_equal(c.v, c0, c.len * sizeof(float));
      free(c.v), free(c0);
    }
    free(a.v), free(b.v);
  }
  int zero = 0, n = 3, k = 2, one = 1;
  float alpha = 1.0f, beta = 0.0f;
  sgemm_("N", "N", &zero, &n, &k, &alpha, NULL, &one, NULL, &k, &beta, NULL, &one);
  cblas_sgemm(TSR_CBLAS_ROW_MAJOR, TSR_CBLAS_NO_TRANS, TSR_CBLAS_NO_TRANS, 0, 3, 2, 1.0f, NULL, 2,
              NULL, 3, 0.0f, NULL, 3);
  assert_int_equal(xerbla_calls + cxerbla_calls, 0);
}

/* A NaN beta makes every element NaN (beta*C, K == 0 included), and so
 * does a NaN alpha with a product to form, as the reference loops do
 * (tessera itself rejects NaN scalars, so the shim handles them). */
static void test_nan_scalars(void **state) {
  for (int w = 0; w < 3; w++)
    for (int which = 0; which < 3; which++) {
      int colmajor = w != API_CBLAS_ROW, m = 3, n = 4, k = which == 2 ? 0 : 2;
      float alpha = which == 0 ? NAN : 1.0f, beta = which == 0 ? 0.5f : NAN;
      mat a = mat_make(m, k, colmajor, 0, 1, 0, 0, 0);
      mat b = mat_make(k, n, colmajor, 0, 2, 0, 0, 0);
      mat c = mat_make(m, n, colmajor, 1, 3, 7.0f, 0, 0);
      call((api)w, 0, 0, 0, m, n, k, alpha, &a, &b, beta, &c);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) assert_true(isnan(c.v[at(&c, i, j)]));
      size_t nans = 0;
      for (size_t e = 0; e < c.len; e++)
        if (isnan(c.v[e])) nans++;
        else assert_true(c.v[e] == 7.0f); /* padding untouched */
      assert_int_equal(nans, (size_t)m * n);
      free(a.v), free(b.v), free(c.v);
    }
}

/* Non-finite or zero alpha, every entry point and transpose. With K == 0
 * or alpha == 0 there is no product: C = beta*C (beta 0: zeros over a NaN
 * C; beta 1: untouched), A and B (all NaN here) unread, whatever alpha is,
 * as OpenBLAS and the reference's loops for op(A) = A do. With K > 0 a NaN
 * alpha makes every element NaN, as the reference's alpha*B(l,j) does. */
static void test_alpha_nan_inf_zero(void **state) {
  static const float alphas[] = {NAN, INFINITY, -INFINITY, 0.0f};
  static const float betas[] = {0.5f, 0.0f, 1.0f};
  for (int w = 0; w < 3; w++)
    for (int ti = 0; ti < 3; ti++)
      for (int tj = 0; tj < 3; tj++)
        for (int ai = 0; ai < 4; ai++)
          for (int bi = 0; bi < 3; bi++)
            for (int k = 0; k <= 3; k += 3) {
              float alpha = alphas[ai], beta = betas[bi];
              int no_product = k == 0 || alpha == 0.0f;
              if (!no_product && !isnan(alpha)) continue; /* infinite alpha: a product */
              int colmajor = w != API_CBLAS_ROW, m = 3, n = 4;
              /* unread inputs are NaN everywhere; read ones are plain values */
              float in = no_product ? NAN : 0.0f;
              mat a = ti ? mat_make(k, m, colmajor, 1, 1, in, no_product, in)
                         : mat_make(m, k, colmajor, 1, 1, in, no_product, in);
              mat b = tj ? mat_make(n, k, colmajor, 1, 2, in, no_product, in)
                         : mat_make(k, n, colmajor, 1, 2, in, no_product, in);
              mat c = mat_make(m, n, colmajor, 2, 3, 99.0f, beta == 0.0f, NAN);
              float *c0 = copy_of(&c);
              reset_errors();
              call((api)w, ti, tj, 0, m, n, k, alpha, &a, &b, beta, &c);
              assert_int_equal(xerbla_calls + cxerbla_calls, 0);
              int bad = 0;
              for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                  float got = c.v[at(&c, i, j)], old = c0[at(&c, i, j)];
                  int ok;
                  if (!no_product) ok = isnan(got);
                  else if (beta == 0.0f) ok = got == 0.0f;
                  else ok = got == beta * old;
                  if (!ok && bad++ < 3)
                    print_error("%s trans %c%c alpha %g beta %g K=%d: C(%d,%d) = %g (was %g)\n",
                                api_names[w], trans_chars[ti], trans_chars[tj], alpha, beta, k,
                                i, j, got, old);
                  c.v[at(&c, i, j)] = old;
                }
              assert_int_equal(bad, 0);
              assert_memory_equal(c.v, c0, c.len * sizeof(float)); /* padding untouched */
              free(a.v), free(b.v), free(c.v), free(c0);
            }
}

/* gfortran passes the CHARACTER lengths as hidden trailing arguments; a
 * call carrying them must behave the same. (Calling through this type is
 * what every Fortran caller does; the SysV ABI makes the extras harmless.) */
typedef void (*sgemm_fortran_fn)(const char *, const char *, const int *, const int *,
                                 const int *, const float *, const float *, const int *,
                                 const float *, const int *, const float *, float *, const int *,
                                 size_t, size_t);

static void test_sgemm_hidden_lengths(void **state) {
  int m = 4, n = 3, k = 5;
  mat a = mat_make(k, m, 1, 1, 1, NAN, 0, 0); /* 'T': stored K×M */
  mat b = mat_make(k, n, 1, 0, 2, NAN, 0, 0);
  mat c = mat_make(m, n, 1, 2, 3, -1.0f, 0, 0);
  mat want = mat_make(m, n, 1, 2, 3, -1.0f, 0, 0);
  float alpha = -1.5f, beta = 0.5f;
  sgemm_("T", "N", &m, &n, &k, &alpha, a.v, &a.ld, b.v, &b.ld, &beta, want.v, &want.ld);
  sgemm_fortran_fn f = (sgemm_fortran_fn)(void (*)(void))sgemm_;
  f("TRANSPOSE", "NOTRANS", &m, &n, &k, &alpha, a.v, &a.ld, b.v, &b.ld, &beta, c.v, &c.ld, 9, 7);
  assert_int_equal(xerbla_calls, 0);
  assert_memory_equal(c.v, want.v, c.len * sizeof(float));
  assert_true(c.v[0] != -1.0f || want.v[0] != -1.0f); /* it computed something */
  free(a.v), free(b.v), free(c.v), free(want.v);
}

/* Concurrent callers (first-call initialization included) each get their
 * own exact result. The workers count mismatches instead of asserting
 * (cmocka's assertions belong to the test's thread). */
static void *concurrent_worker(void *arg) {
  int id = (int)(intptr_t)arg;
  intptr_t bad = 0;
  for (int rep = 0; rep < 8; rep++) {
    int m = 9 + id, n = 7 + rep, k = 11, lda = m + 1, ldb = k, ldc = m + 2;
    float alpha = -1.5f, beta = 0.5f;
    float *a = malloc(sizeof(float) * lda * k), *b = malloc(sizeof(float) * ldb * n);
    float *c = malloc(sizeof(float) * ldc * n), *c0 = malloc(sizeof(float) * ldc * n);
    if (!a || !b || !c || !c0) return (void *)(intptr_t)-1;
    for (int i = 0; i < lda * k; i++) a[i] = (float)((i * 7 + id) % 9 - 4) / 8.0f;
    for (int i = 0; i < ldb * n; i++) b[i] = (float)((i * 5 + rep) % 11 - 5) / 8.0f;
    for (int i = 0; i < ldc * n; i++) c[i] = c0[i] = (float)(i % 7 - 3) / 4.0f;
    if (rep % 2)
      sgemm_("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    else
      cblas_sgemm(TSR_CBLAS_COL_MAJOR, TSR_CBLAS_NO_TRANS, TSR_CBLAS_NO_TRANS, m, n, k, alpha, a,
                  lda, b, ldb, beta, c, ldc);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < ldc; i++) {
        double ref = c0[j * ldc + i];
        if (i < m) {
          double s = 0.0;
          for (int l = 0; l < k; l++) s += (double)a[l * lda + i] * b[j * ldb + l];
          ref = alpha * s + (double)beta * c0[j * ldc + i];
        }
        if ((double)c[j * ldc + i] != ref) bad++;
      }
    free(a), free(b), free(c), free(c0);
  }
  return (void *)bad;
}

static void test_concurrent_calls(void **state) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&t[i], NULL, concurrent_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 4; i++) {
    void *bad = NULL;
    assert_int_equal(pthread_join(t[i], &bad), 0);
    assert_int_equal((intptr_t)bad, 0);
  }
}

/* ---- illegal arguments -------------------------------------------------- */

/* sgemm_ with the given arguments must call xerbla_("SGEMM ", info, 6) once
 * and leave C untouched. Arrays are big enough for any of the cases. */
static void expect_xerbla(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc,
                          int info) {
  float a[64], b[64], c[64], c0[64];
  for (int i = 0; i < 64; i++) a[i] = b[i] = 1.0f, c[i] = c0[i] = (float)i;
  float alpha = 1.0f, beta = 0.0f;
  reset_errors();
  sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  if (xerbla_calls != 1 || xerbla_info != info)
    print_error("sgemm_('%c','%c',M=%d,N=%d,K=%d,lda=%d,ldb=%d,ldc=%d): %d xerbla_ calls, "
                "INFO %d, expected %d\n",
                ta, tb, m, n, k, lda, ldb, ldc, xerbla_calls, xerbla_info, info);
  assert_int_equal(xerbla_calls, 1);
  assert_int_equal(xerbla_info, info);
  assert_string_equal(xerbla_name, "SGEMM ");
  assert_int_equal(xerbla_len, 6);
  assert_int_equal(cxerbla_calls, 0);
  assert_memory_equal(c, c0, sizeof c);
}

static void test_sgemm_illegal(void **state) {
  /* Legal baseline: 'N','N', M=3, N=4, K=5, lda=3, ldb=5, ldc=3. */
  expect_xerbla('X', 'N', 3, 4, 5, 3, 5, 3, 1);
  expect_xerbla(' ', 'N', 3, 4, 5, 3, 5, 3, 1);
  expect_xerbla('N', 'R', 3, 4, 5, 3, 5, 3, 2);
  expect_xerbla('N', 'N', -1, 4, 5, 3, 5, 3, 3);
  expect_xerbla('N', 'N', 3, -1, 5, 3, 5, 3, 4);
  expect_xerbla('N', 'N', 3, 4, -1, 3, 5, 3, 5);
  expect_xerbla('N', 'N', 3, 4, 5, 2, 5, 3, 8);   /* lda < M */
  expect_xerbla('T', 'N', 3, 4, 5, 4, 5, 3, 8);   /* lda < K */
  expect_xerbla('n', 'N', 0, 4, 5, 0, 5, 1, 8);   /* lda < max(1, 0) */
  expect_xerbla('N', 'N', 3, 4, 5, 3, 4, 3, 10);  /* ldb < K */
  expect_xerbla('N', 'c', 3, 4, 5, 3, 3, 3, 10);  /* ldb < N */
  expect_xerbla('N', 'N', 3, 4, 0, 3, 0, 3, 10);  /* ldb < max(1, 0) */
  expect_xerbla('N', 'N', 3, 4, 5, 3, 5, 2, 13);  /* ldc < M */
  expect_xerbla('N', 'N', 0, 4, 5, 1, 5, 0, 13);  /* ldc < max(1, 0) */
  /* The first failing check wins, in the reference order. */
  expect_xerbla('X', 'Y', -1, -1, -1, 0, 0, 0, 1);
  expect_xerbla('N', 'Y', -1, -1, -1, 0, 0, 0, 2);
  expect_xerbla('N', 'N', -1, -1, -1, 0, 0, 0, 3);
  expect_xerbla('N', 'N', 3, -1, -1, 0, 0, 0, 4);
  expect_xerbla('N', 'N', 3, 4, -1, 0, 0, 0, 5);
  expect_xerbla('N', 'N', 3, 4, 5, 0, 0, 0, 8);
  expect_xerbla('N', 'N', 3, 4, 5, 3, 0, 0, 10);
}

static void expect_cblas_xerbla(int order, int ta, int tb, int m, int n, int k, int lda, int ldb,
                                int ldc, int p) {
  float a[64], b[64], c[64], c0[64];
  for (int i = 0; i < 64; i++) a[i] = b[i] = 1.0f, c[i] = c0[i] = (float)i;
  reset_errors();
  cblas_sgemm(order, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  if (cxerbla_calls != 1 || cxerbla_p != p)
    print_error("cblas_sgemm(%d,%d,%d,M=%d,N=%d,K=%d,lda=%d,ldb=%d,ldc=%d): %d cblas_xerbla "
                "calls, parameter %d, expected %d\n",
                order, ta, tb, m, n, k, lda, ldb, ldc, cxerbla_calls, cxerbla_p, p);
  assert_int_equal(cxerbla_calls, 1);
  assert_int_equal(cxerbla_p, p);
  assert_string_equal(cxerbla_rout, "cblas_sgemm");
  assert_int_equal(xerbla_calls, 0);
  assert_memory_equal(c, c0, sizeof c);
}

static void test_cblas_illegal(void **state) {
  const int R = TSR_CBLAS_ROW_MAJOR, C = TSR_CBLAS_COL_MAJOR;
  const int N = TSR_CBLAS_NO_TRANS, T = TSR_CBLAS_TRANS, H = TSR_CBLAS_CONJ_TRANS;
  expect_cblas_xerbla(100, N, N, 3, 4, 5, 5, 4, 4, 1);
  expect_cblas_xerbla(0, 999, 999, -1, -1, -1, 0, 0, 0, 1);
  for (int o = 0; o < 2; o++) {
    int ord = o ? R : C;
    expect_cblas_xerbla(ord, 110, N, 3, 4, 5, 5, 5, 5, 2);
    expect_cblas_xerbla(ord, N, 114, 3, 4, 5, 5, 5, 5, 3);
    expect_cblas_xerbla(ord, 0, 0, 3, 4, 5, 5, 5, 5, 2);
    expect_cblas_xerbla(ord, N, N, -1, 4, 5, 5, 5, 5, 4);
    expect_cblas_xerbla(ord, N, N, 3, -1, 5, 5, 5, 5, 5);
    expect_cblas_xerbla(ord, N, N, 3, 4, -1, 5, 5, 5, 6);
  }
  /* Row-major: A is M×K (N) or K×M (T), lda >= its row length; B likewise;
   * ldc >= N. */
  expect_cblas_xerbla(R, N, N, 3, 4, 5, 4, 4, 4, 9);  /* lda < K */
  expect_cblas_xerbla(R, T, N, 3, 4, 5, 2, 4, 4, 9);  /* lda < M */
  expect_cblas_xerbla(R, N, N, 3, 4, 5, 5, 3, 4, 11); /* ldb < N */
  expect_cblas_xerbla(R, N, H, 3, 4, 5, 5, 4, 4, 11); /* ldb < K */
  expect_cblas_xerbla(R, N, N, 3, 4, 5, 5, 4, 3, 14); /* ldc < N */
  expect_cblas_xerbla(R, N, N, 3, 0, 5, 5, 0, 4, 11); /* ldb < max(1, 0) */
  /* Column-major: lda >= rows of the stored A, and so on; ldc >= M. */
  expect_cblas_xerbla(C, N, N, 3, 4, 5, 2, 5, 3, 9);  /* lda < M */
  expect_cblas_xerbla(C, T, N, 3, 4, 5, 4, 5, 3, 9);  /* lda < K */
  expect_cblas_xerbla(C, N, N, 3, 4, 5, 3, 4, 3, 11); /* ldb < K */
  expect_cblas_xerbla(C, N, T, 3, 4, 5, 3, 3, 3, 11); /* ldb < N */
  expect_cblas_xerbla(C, N, N, 3, 4, 5, 3, 5, 2, 14); /* ldc < M */
  /* Precedence as in the reference: TransA before TransB; column-major
   * checks M, N, K, lda, ldb, ldc in order; row-major is reduced to the
   * column-major call with A/B and M/N swapped, so N and ldb come first. */
  expect_cblas_xerbla(R, 0, 0, -1, -1, -1, 0, 0, 0, 2);
  expect_cblas_xerbla(C, N, N, -1, -1, -1, 0, 0, 0, 4);
  expect_cblas_xerbla(R, N, N, -1, -1, -1, 0, 0, 0, 5);
  expect_cblas_xerbla(R, N, N, -1, 4, -1, 0, 0, 0, 4);
  expect_cblas_xerbla(C, N, N, 3, 4, 5, 0, 0, 0, 9);
  expect_cblas_xerbla(R, N, N, 3, 4, 5, 0, 0, 0, 11);
  expect_cblas_xerbla(R, N, N, 3, 4, 5, 0, 4, 0, 9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_calls), /* first: races the lazy initialization */
      cmocka_unit_test(test_sgemm_sweep),
      cmocka_unit_test(test_cblas_col_sweep),
      cmocka_unit_test(test_cblas_row_sweep),
      cmocka_unit_test(test_sgemm_lowercase),
      cmocka_unit_test(test_quick_returns),
      cmocka_unit_test(test_alpha_zero_reads_no_inputs),
      cmocka_unit_test(test_nan_scalars),
      cmocka_unit_test(test_alpha_nan_inf_zero),
      cmocka_unit_test(test_sgemm_hidden_lengths),
      cmocka_unit_test(test_sgemm_illegal),
      cmocka_unit_test(test_cblas_illegal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
