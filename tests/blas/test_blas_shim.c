/* The BLAS shim against the reference contract: every output element of
 * sgemm_ and cblas_sgemm (both majors, N/T/C, scalar variants, padded
 * leading dimensions, quick returns) against an FP64 reference computed
 * here, on dyadic inputs where FP32 is exact; and every illegal argument
 * reaching xerbla_ / cblas_xerbla (overridden below) with the reference
 * INFO / parameter number, C untouched; and calls from children of fork.
 * Linked against libtessera_blas.so. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "blas/blas.h"
#include "tessera.h"

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

/* ---- fork ------------------------------------------------------------------- */

/* Threads of this process, from /proc/self/status (-1 when unreadable). */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int n = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1) break;
  fclose(f);
  return n;
}

/* A square problem the CPU backend splits over two threads on two cores:
 * 2*N^3 is above its serial threshold (1.5e6 flops) and the grid has two
 * tiles (checked through the thread count in the tests). */
#define FORK_N 192

/* One FORK_N^3 problem on dyadic inputs (column-major, alpha -1.5, beta
 * 0.5) and its exact result from an FP64 reference. No cmocka calls here
 * and below: they run in children of fork and on helper threads. */
typedef struct {
  float *a, *b, *c0, *want, *c;
} big_gemm;

static void big_gemm_free(big_gemm *g) {
  free(g->a), free(g->b), free(g->c0), free(g->want), free(g->c);
}

static int big_gemm_init(big_gemm *g, int seed) {
  const int n = FORK_N;
  size_t len = (size_t)n * n;
  g->a = malloc(len * sizeof(float));
  g->b = malloc(len * sizeof(float));
  g->c0 = malloc(len * sizeof(float));
  g->want = malloc(len * sizeof(float));
  g->c = malloc(len * sizeof(float));
  if (!g->a || !g->b || !g->c0 || !g->want || !g->c) {
    big_gemm_free(g);
    return -1;
  }
  for (size_t i = 0; i < len; i++) {
    g->a[i] = (float)((int)((i * 7 + (size_t)seed) % 9) - 4) / 8.0f;
    g->b[i] = (float)((int)((i * 5 + (size_t)seed * 3) % 11) - 5) / 8.0f;
    g->c0[i] = (float)((int)(i % 7) - 3) / 4.0f;
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int l = 0; l < n; l++) s += (double)g->a[(size_t)l * n + i] * g->b[(size_t)j * n + l];
      /* exact: every product and partial sum is a small multiple of 2^-7 */
      g->want[(size_t)j * n + i] = (float)(-1.5 * s + 0.5 * g->c0[(size_t)j * n + i]);
    }
  return 0;
}

/* One cblas_sgemm; returns the elements that differ from the reference. */
static int64_t big_gemm_run(big_gemm *g) {
  const int n = FORK_N;
  size_t len = (size_t)n * n;
  memcpy(g->c, g->c0, len * sizeof(float));
  cblas_sgemm(TSR_CBLAS_COL_MAJOR, TSR_CBLAS_NO_TRANS, TSR_CBLAS_NO_TRANS, n, n, n, -1.5f, g->a,
              n, g->b, n, 0.5f, g->c, n);
  int64_t bad = 0;
  for (size_t i = 0; i < len; i++) bad += g->c[i] != g->want[i];
  return bad;
}

/* big_gemm_run on fresh inputs: mismatches, or -1 when out of memory. */
static int64_t big_gemm_errors(int seed) {
  big_gemm g;
  if (big_gemm_init(&g, seed)) return -1;
  int64_t bad = big_gemm_run(&g);
  big_gemm_free(&g);
  return bad;
}

/* Exit codes of a forked checker. */
enum { CHILD_OK = 0, CHILD_WRONG = 10, CHILD_NO_THREADS = 11, CHILD_NOMEM = 12, CHILD_FORK = 13 };

/* In a child of fork: one checked big call, on more than one thread, under
 * a SIGALRM deadline (a hang kills the child; the parent reports it). */
static int child_check(int seed) {
  signal(SIGALRM, SIG_DFL);
  alarm(120);
  int64_t bad = big_gemm_errors(seed);
  if (bad < 0) return CHILD_NOMEM;
  if (bad > 0) {
    fprintf(stderr, "child %d: %lld wrong elements\n", (int)getpid(), (long long)bad);
    return CHILD_WRONG;
  }
  int t = thread_count();
  if (t < 2) {
    fprintf(stderr, "child %d: %d thread(s) after a two-thread call\n", (int)getpid(), t);
    return CHILD_NO_THREADS;
  }
  return CHILD_OK;
}

/* Waits for a checker and fails the test unless it exited CHILD_OK. */
static void expect_child_ok(pid_t pid, const char *what) {
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    print_error("%s: killed by signal %d%s\n", what, WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (hung past its deadline)" : "");
  else if (WEXITSTATUS(status) != CHILD_OK)
    print_error("%s: exit %d\n", what, WEXITSTATUS(status));
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

static int two_cores(void) {
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) return 1;
  print_message("skip: one online CPU: the pool never starts a worker, nothing to fork\n");
  return 0;
}

/* A process that forks after a multi-threaded call: the child's calls run
 * (the pool's workers do not exist there and are re-created), on more than
 * one thread, exactly; so do a grandchild's and the parent's afterwards. */
static void test_fork_after_threaded_call(void **state) {
  if (!two_cores()) skip();
  assert_int_equal(big_gemm_errors(1), 0);
  assert_true(thread_count() >= 2); /* the premise: the pool has a worker */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int rc = thread_count() == 1 ? child_check(2) : CHILD_NO_THREADS;
    if (rc == CHILD_OK) rc = child_check(3); /* the re-created workers again */
    if (rc == CHILD_OK) { /* and a grandchild of a revived pool */
      pid_t g = fork();
      if (g == 0) _exit(child_check(4));
      int status = 0;
      rc = g < 0 || waitpid(g, &status, 0) != g ? CHILD_FORK
           : WIFEXITED(status)                  ? WEXITSTATUS(status)
                                                : 128 + WTERMSIG(status);
    }
    _exit(rc);
  }
  expect_child_ok(pid, "forked child");
  assert_int_equal(big_gemm_errors(5), 0); /* the parent's pool is unaffected */
}

/* Forks while another thread is inside calls (holding the shim's lock and
 * the pool's, its workers mid-run): each child's own call must still run,
 * since nothing it waits on can be released by a thread that is gone. */
static int stop_background, background_calls_done; /* atomic */

static void *background_calls(void *arg) {
  big_gemm g;
  if (big_gemm_init(&g, 6)) return (void *)(intptr_t)-1;
  intptr_t bad = 0;
  /* nearly all of the loop is inside cblas_sgemm */
  while (!__atomic_load_n(&stop_background, __ATOMIC_ACQUIRE)) {
    bad += big_gemm_run(&g) != 0;
    __atomic_add_fetch(&background_calls_done, 1, __ATOMIC_RELEASE);
  }
  big_gemm_free(&g);
  return (void *)bad;
}

static void test_fork_during_calls(void **state) {
  if (!two_cores()) skip();
  assert_int_equal(big_gemm_errors(6), 0); /* plan lookup memoized before the race */
  __atomic_store_n(&stop_background, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&background_calls_done, 0, __ATOMIC_RELEASE);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, background_calls, NULL), 0);
  while (__atomic_load_n(&background_calls_done, __ATOMIC_ACQUIRE) == 0) sched_yield();
  for (int i = 0; i < 8; i++) {
    struct timespec d = {0, (1 + i % 3) * 700000L};
    nanosleep(&d, NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_check(7 + i));
    char what[64];
    snprintf(what, sizeof what, "child %d forked during calls", i);
    expect_child_ok(pid, what);
  }
  __atomic_store_n(&stop_background, 1, __ATOMIC_RELEASE);
  void *bad = NULL;
  assert_int_equal(pthread_join(t, &bad), 0);
  assert_int_equal((intptr_t)bad, 0);
  print_message("%d background calls\n", __atomic_load_n(&background_calls_done, __ATOMIC_ACQUIRE));
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

/* The specials suite through the shim (docs/accuracy.md): NaN, +-Inf,
 * FLT_MAX, subnormal rows, 0 x Inf, NaN in C with beta != 0 and a NaN-filled
 * C with beta = 0 (never read): every output's NaN/Inf class is the FP64
 * reference's and the finite ones meet the strict contract. Row-major
 * cblas_sgemm, so the reference is tsr_oracle_cpu on the same arrays. */
static void test_specials(void **state) {
  enum { M = 24, N = 20, K = 40 };
  for (int kind = 0; kind < 7; kind++) {
    static float a[M * K], b[K * N], c[M * N], c0[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 37 % 101) - 50) / 64.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 53 % 97) - 48) / 64.0f;
    for (int i = 0; i < M * N; i++) c0[i] = (float)((i * 7 % 13) - 6) / 8.0f;
    float beta = 0.0f;
    switch (kind) {
      case 0: a[3 * K + 7] = NAN; break;
      case 1: a[5 * K + 2] = INFINITY; b[9 * N + 4] = -INFINITY; break;
      case 2: a[2 * K + 5] = 3.4028235e38f; b[5 * N + 3] = 1.0f; break;
      case 3: for (int k = 0; k < K; k++) a[6 * K + k] = 1e-39f * (float)(k + 1), b[k * N + 1] = 1e30f; break;
      case 4: b[0] = INFINITY; a[0] = 0.0f; break; /* 0 x Inf = NaN in row 0, column 0 */
      case 5: c0[7] = NAN; beta = 0.5f; break;
      default: for (int i = 0; i < M * N; i++) c0[i] = NAN; break; /* beta = 0: never read */
    }
    memcpy(c, c0, sizeof c);
    cblas_sgemm(TSR_CBLAS_ROW_MAJOR, TSR_CBLAS_NO_TRANS, TSR_CBLAS_NO_TRANS, M, N, K, 1.0f, a, K, b,
                N, beta, c, N);
    tsr_problem p;
    tsr_problem_init(&p, M, N, K);
    p.beta = beta;
    char msg[256];
    assert_int_equal(tsr_problem_check(&p, msg, sizeof msg), TSR_OK);
    static double ref[M * N];
    static float scale[M * N];
    double strict = 0;
    assert_int_equal(tsr_oracle_cpu(&p, a, b, beta != 0.0f ? c0 : NULL, ref, scale, &strict), TSR_OK);
    tsr_receipt r;
    tsr_validate_contract(&p, c, ref, scale, strict, TSR_PREC_STRICT, &r);
    if (!r.passed)
      fail_msg("special case %d: %lld failed (%lld over the bound, %lld of the wrong class), first at %lld",
               kind, (long long)r.failed, (long long)r.bound_failed, (long long)r.class_failed,
               (long long)r.first_fail);
  }
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
  /* Built-in plans whatever tuning database the user has: the fork tests
   * rely on the default plan's two threads (set before any thread exists). */
  setenv("TESSERA_TUNE_DB", "off", 1);
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
      cmocka_unit_test(test_fork_after_threaded_call),
      cmocka_unit_test(test_fork_during_calls),
      cmocka_unit_test(test_sgemm_hidden_lengths),
      cmocka_unit_test(test_specials),
      cmocka_unit_test(test_sgemm_illegal),
      cmocka_unit_test(test_cblas_illegal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
