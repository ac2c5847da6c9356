/* The GEMM problem: extents, ops, scalars, layout; parsing of "MxNxK". */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

void tsr_problem_init(tsr_problem *p, int64_t m, int64_t n, int64_t k) {
  memset(p, 0, sizeof *p);
  p->m = m;
  p->n = n;
  p->k = k;
  p->batch = 1;
  p->alpha = 1.0f;
  p->beta = 0.0f;
}

static const char *const prec_names[TSR_PREC_COUNT] = {"auto", "strict", "fp32x3", "tf32",
                                                             "ozaki"};

const char *tsr_precision_name(tsr_precision p) {
  return (unsigned)p < TSR_PREC_COUNT ? prec_names[p] : "unknown";
}

tsr_status tsr_precision_parse(const char *text, tsr_precision *p, char *msg, size_t cap) {
  for (int i = 0; i < TSR_PREC_COUNT; i++)
    if (text && !strcmp(text, prec_names[i])) {
      *p = (tsr_precision)i;
      return TSR_OK;
    }
  return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                      "precision: '%s' is not one of auto, strict, fp32x3, tf32, ozaki", text ? text : "");
}

/* a*b within int64, both non-negative. */
static int mul_ok(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return 0;
  if (a != 0 && b > INT64_MAX / a) return 0;
  *out = a * b;
  return 1;
}

/* Elements needed by a rows×cols row-major matrix with leading dim ld,
 * repeated batch times at stride: (batch-1)*stride + (rows-1)*ld + cols. */
static int64_t span(int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld) {
  int64_t a, b;
  if (!mul_ok(batch - 1, stride, &a) || !mul_ok(rows - 1, ld, &b)) return 0;
  if (a > INT64_MAX - b || a + b > INT64_MAX - cols) return 0;
  return a + b + cols;
}

static void stored_dims(const tsr_problem *p, tsr_tensor t, int64_t *rows, int64_t *cols,
                        int64_t *ld, int64_t *stride) {
  switch (t) {
    case TSR_TENSOR_A:
      *rows = p->op_a == TSR_OP_N ? p->m : p->k;
      *cols = p->op_a == TSR_OP_N ? p->k : p->m;
      *ld = p->lda;
      *stride = p->stride_a;
      break;
    case TSR_TENSOR_B:
      *rows = p->op_b == TSR_OP_N ? p->k : p->n;
      *cols = p->op_b == TSR_OP_N ? p->n : p->k;
      *ld = p->ldb;
      *stride = p->stride_b;
      break;
    default:
      *rows = p->m;
      *cols = p->n;
      *ld = p->ldc;
      *stride = p->stride_c;
      break;
  }
}

tsr_status tsr_problem_check(tsr_problem *p, char *msg, size_t cap) {
  if (!p) return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "problem: NULL");
  const struct { const char *name; int64_t v; } ext[] = {
      {"m", p->m}, {"n", p->n}, {"k", p->k}, {"batch", p->batch}};
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
    if (ext[i].v < 1)
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "%s: %lld must be at least 1", ext[i].name,
                          (long long)ext[i].v);
  if (p->op_a != TSR_OP_N && p->op_a != TSR_OP_T)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "op_a: %d is not N or T", (int)p->op_a);
  if (p->op_b != TSR_OP_N && p->op_b != TSR_OP_T)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "op_b: %d is not N or T", (int)p->op_b);
  if ((unsigned)p->precision >= TSR_PREC_COUNT)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "precision: %d is not a mode", (int)p->precision);
  if (p->alpha != p->alpha || p->beta != p->beta)
    return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "%s: NaN is not a scalar",
                        p->alpha != p->alpha ? "alpha" : "beta");
  static const char *const ldn[] = {"lda", "ldb", "ldc"};
  static const char *const sn[] = {"stride_a", "stride_b", "stride_c"};
  int64_t *lds[] = {&p->lda, &p->ldb, &p->ldc};
  int64_t *strides[] = {&p->stride_a, &p->stride_b, &p->stride_c};
  for (int t = 0; t < 3; t++) {
    int64_t rows, cols, ld, stride;
    stored_dims(p, (tsr_tensor)t, &rows, &cols, &ld, &stride);
    if (ld == 0) *lds[t] = ld = cols;
    if (ld < cols)
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID, "%s: %lld is less than the row length %lld",
                          ldn[t], (long long)ld, (long long)cols);
    int64_t one;
    if (!mul_ok(rows, ld, &one))
      return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "%s: %lld rows × %lld exceeds int64",
                          ldn[t], (long long)rows, (long long)ld);
    if (stride == 0 && p->batch > 1) *strides[t] = stride = one;
    if (p->batch > 1 && stride < one)
      return tsr__failbuf(msg, cap, TSR_ERR_INVALID,
                          "%s: %lld overlaps the previous batch item (needs %lld)", sn[t],
                          (long long)stride, (long long)one);
    if (span(p->batch, stride, rows, cols, ld) == 0)
      return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW,
                          "%s: batch %lld × stride %lld exceeds the int64 index space", sn[t],
                          (long long)p->batch, (long long)stride);
  }
  return TSR_OK;
}

static int64_t elems(const tsr_problem *p, tsr_tensor t) {
  int64_t rows, cols, ld, stride;
  stored_dims(p, t, &rows, &cols, &ld, &stride);
  if (ld == 0) ld = cols;
  if (p->batch > 1 && stride == 0) stride = rows * ld;
  return span(p->batch, stride, rows, cols, ld);
}

int64_t tsr_problem_elems_a(const tsr_problem *p) { return elems(p, TSR_TENSOR_A); }
int64_t tsr_problem_elems_b(const tsr_problem *p) { return elems(p, TSR_TENSOR_B); }
int64_t tsr_problem_elems_c(const tsr_problem *p) { return elems(p, TSR_TENSOR_C); }

/* One positive decimal extent; *end past it. */
static tsr_status parse_extent(const char *s, const char **end, const char *field, int64_t *v,
                               char *msg, size_t cap) {
  const char *q = s;
  if (*q == '-' || *q == '+')
    return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: %s extent '%.*s' must be a positive integer",
                        field, (int)strcspn(s, "x"), s);
  if (!isdigit((unsigned char)*q))
    return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: %s extent '%.*s' is not a number", field,
                        (int)strcspn(s, "x"), s);
  int64_t acc = 0;
  while (isdigit((unsigned char)*q)) {
    int d = *q - '0';
    if (acc > (INT64_MAX - d) / 10)
      return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: %s extent '%.*s' overflows int64",
                          field, (int)strcspn(s, "x"), s);
    acc = acc * 10 + d;
    q++;
  }
  if (acc < 1)
    return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: %s extent %lld must be at least 1",
                        field, (long long)acc);
  /* BLAS and the CUDA libraries take 32-bit extents. */
  if (acc > INT32_MAX)
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "shape: %s extent %lld exceeds %d", field,
                        (long long)acc, INT32_MAX);
  *v = acc;
  *end = q;
  return TSR_OK;
}

tsr_status tsr_shape_parse(const char *text, int64_t *m, int64_t *n, int64_t *k, char *msg,
                           size_t cap) {
  if (!text || !*text) return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: empty, expected MxNxK");
  const char *fields[] = {"M", "N", "K"};
  int64_t v[3];
  const char *s = text;
  for (int i = 0; i < 3; i++) {
    tsr_status st = parse_extent(s, &s, fields[i], &v[i], msg, cap);
    if (st) return st;
    if (i < 2) {
      if (*s != 'x' && *s != 'X')
        return tsr__failbuf(msg, cap, TSR_ERR_PARSE,
                            "shape: '%s' has %d extent%s, expected MxNxK", text, i + 1,
                            i ? "s" : "");
      s++;
    }
  }
  if (*s)
    return tsr__failbuf(msg, cap, TSR_ERR_PARSE, "shape: '%s' has trailing text '%s', expected MxNxK",
                        text, s);
  /* The largest single stored operand must be indexable in int64 (and a
   * uint32 tile grid is checked per plan). */
  int64_t t;
  if (!mul_ok(v[0], v[2], &t) || !mul_ok(v[2], v[1], &t) || !mul_ok(v[0], v[1], &t))
    return tsr__failbuf(msg, cap, TSR_ERR_OVERFLOW, "shape: '%s' exceeds the int64 index space",
                        text);
  *m = v[0];
  *n = v[1];
  *k = v[2];
  return TSR_OK;
}
