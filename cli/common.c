/* The problem options shared by gemm, plan, emit and tune. */
#include <string.h>

#include "cli.h"
#include "measure/zoo.h"

void tsr_cli_problem_defaults(tsr_cli_problem_opts *o, const char *backend) {
  memset(o, 0, sizeof *o);
  o->backend = backend;
  o->batch = 1;
  o->alpha = 1.0f;
  o->beta = 0.0f;
  o->precision = TSR_PREC_AUTO;
}

size_t tsr_cli_problem_table(tsr_cli_problem_opts *o, tsr_cli_opt *out) {
  const tsr_cli_opt t[TSR_CLI_PROBLEM_NOPTS] = {
      TSR_CLI_OPT_STRING("--shape", &o->shape, "MxNxK",
                         "extents of C = alpha*op(A)*op(B) + beta*C (required), or a\n"
                         "shape token [B*]MxNxK[:XY] of the bench and the zoo, whose own\n"
                         "batch and ops win over --batch/--trans-a/--trans-b"),
      TSR_CLI_OPT_INT("--batch", &o->batch, 1, 65535, "B", "independent batch items (default 1)"),
      TSR_CLI_OPT_FLAG("--trans-a", &o->trans_a, "op(A) = A^T (A stored K×M)"),
      TSR_CLI_OPT_FLAG("--trans-b", &o->trans_b, "op(B) = B^T (B stored N×K)"),
      TSR_CLI_OPT_FLOAT("--alpha", &o->alpha, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "A",
                        "scalar (default 1)"),
      TSR_CLI_OPT_FLOAT("--beta", &o->beta, -TSR_CLI_FLT_MAX, TSR_CLI_FLT_MAX, "B",
                        "scalar (default 0: C is never read)"),
      TSR_CLI_OPT_STRING("--plan", &o->plan, "TEXT",
                         "key=value,... over the backend's default plan, e.g.\n"
                         "bm=128,bn=128,bk=16,walk=rect:4x8 (tessera plan shows every key\n"
                         "but the FFMA-only kfrag, kloop, kunroll, tailk, wave, forder, kwait,\n"
                         "pelect, krel, kinner, lazy and lazyk, the Ozaki family's moduli, gstride and rvec and\n"
                         "the GEMV family's lanerows, which it shows when set; docs/emit.md);\n"
                         "a whole plan as tessera prints it (bm ... split all named) is taken\n"
                         "as it is: the optional keys it leaves out are unset"),
      TSR_CLI_OPT_STRING("--backend", &o->backend, "B",
                         "auto (default: cuda when a GPU is usable, else cpu), cpu, cuda,\n"
                         "cublas, hand"),
      TSR_CLI_OPT_CUSTOM("--precision", tsr_cli_opt_precision, &o->precision, "P",
                         "auto (default: the fastest mode meeting the FP32 contract),\n"
                         "strict (IEEE FP32 FFMA), fp32x3 (tensor-core 3xTF32 split, same\n"
                         "contract), ozaki (INT8 tensor cores, Ozaki scheme II, same\n"
                         "contract; sm_90a), tf32 (TF32 operands: opt-in, its own bound);\n"
                         "docs/accuracy.md"),
  };
  memcpy(out, t, sizeof t);
  return TSR_CLI_PROBLEM_NOPTS;
}

int tsr_cli_problem_finish(const char *verb, tsr_context *ctx, const tsr_cli_problem_opts *o,
                           tsr_problem *p, tsr_backend_kind *backend, tsr_plan *plan,
                           char *source, size_t cap) {
  char msg[512];
  if (!o->shape) return tsr_cli_usage_error(verb, "--shape: required (MxNxK)");
  /* the bench's shape token (docs/protocol.md "Shapes"), so a zoo label
   * names the same problem here as in a bench run */
  tsr__shape_token t;
  if (tsr__shape_token_parse(o->shape, &t, msg, sizeof msg))
    return tsr_cli_usage_error(verb, "--shape '%s': %s", o->shape, msg);
  tsr_problem_init(p, t.m, t.n, t.k);
  p->batch = t.has_batch ? t.batch : o->batch;
  p->op_a = t.has_ops ? t.op_a : o->trans_a ? TSR_OP_T : TSR_OP_N;
  p->op_b = t.has_ops ? t.op_b : o->trans_b ? TSR_OP_T : TSR_OP_N;
  p->alpha = o->alpha;
  p->beta = o->beta;
  p->precision = o->precision;
  if (tsr_problem_check(p, msg, sizeof msg)) return tsr_cli_usage_error(verb, "%s", msg);
  tsr_backend_kind b;
  if (tsr_backend_parse(o->backend, &b, msg, sizeof msg)) return tsr_cli_usage_error(verb, "%s", msg);
  if (b == TSR_BACKEND_AUTO)
    b = tsr_backend_available(ctx, TSR_BACKEND_CUDA) == TSR_OK ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU;
  *backend = b;
  tsr_status st = tsr_plan_lookup(ctx, b, p, plan, source, cap);
  if (st) return tsr_cli_usage_error(verb, "%s", tsr_context_message(ctx));
  if (o->plan && tsr_plan_parse(o->plan, plan, msg, sizeof msg))
    return tsr_cli_usage_error(verb, "%s", msg);
  return TSR_EXIT_OK;
}
