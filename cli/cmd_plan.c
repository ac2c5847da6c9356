/* tessera plan: the realized plan for a problem, or the first violated limit. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "tune/tune.h"

int tsr_cli_plan(int argc, char **argv) {
  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "auto");
  int json = 0, explain = 0;
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + 2];
  size_t n = tsr_cli_problem_table(&o, opts);
  opts[n++] = (tsr_cli_opt)TSR_CLI_OPT_FLAG("--json", &json, "machine-readable output");
  opts[n++] = (tsr_cli_opt)TSR_CLI_OPT_FLAG(
      "--explain", &explain,
      "how the tuning database's lookup chose the plan (docs/tune.md \"Lookup\"):\n"
      "the database and target key, each pass (exact, nearest bucket, class) and\n"
      "each entry it considered with the rule that took or refused it");
  const tsr_cli_spec spec = {
      .verb = "plan",
      .usage = "usage: tessera plan --shape [B*]MxNxK[:XY] [--plan TEXT] [--backend B] [options]\n"
               "\n"
               "Realizes a plan on a problem without allocating anything: grid, threads,\n"
               "shared memory, walk (normalized for the grid) and tails, or the rejection\n"
               "naming the first violated limit (exit 2).\n\n",
      .footer = "exit: 0 realized, 2 bad input or plan rejected\n",
      .opts = opts,
      .nopts = n,
  };
  int rc = tsr_cli_parse(&spec, argc, argv);
  if (rc != TSR_CLI_CONTINUE) return rc;
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return tsr_cli_usage_error("plan", "out of memory");
  tsr_problem p;
  tsr_backend_kind b;
  tsr_plan plan;
  char source[128] = "";
  rc = tsr_cli_problem_finish("plan", ctx, &o, &p, &b, &plan, source, sizeof source);
  if (rc) {
    tsr_context_destroy(ctx);
    return rc;
  }
  /* the lookup again, step by step (the first answer came from its memo or not) */
  char *why = NULL;
  size_t why_len = 0;
  if (explain) {
    FILE *f = open_memstream(&why, &why_len);
    if (!f) {
      tsr_context_destroy(ctx);
      return tsr_cli_usage_error("plan", "out of memory");
    }
    tsr_plan again;
    char src2[128];
    tsr__plan_lookup_explain(ctx, b, &p, &again, src2, sizeof src2, f);
    fclose(f);
  }
  tsr_plan_info info;
  tsr_status st = tsr_plan_realize(ctx, b, &p, &plan, &info);
  if (st) {
    if (why) fputs(why, stderr);
    tsr_cli_usage_error("plan", "rejected (%s): %s", tsr_backend_name(b), tsr_context_message(ctx));
    free(why);
    tsr_context_destroy(ctx);
    return TSR_EXIT_USAGE;
  }
  char text[512], walk[64];
  tsr_plan_format(&info.plan, text, sizeof text);
  tsr_walk_format(&info.plan.walk, walk, sizeof walk);
  if (json) {
    json_t *j = json_pack("{s:s, s:s, s:s, s:[I,I,I], s:I, s:I, s:i, s:i, s:s, s:{s:b, s:b, s:b}}",
                          "backend", tsr_backend_name(b), "plan", text, "plan_source",
                          o.plan ? "--plan over the looked-up plan" : source, "grid",
                          (json_int_t)info.grid_rows, (json_int_t)info.grid_cols,
                          (json_int_t)info.grid_batch, "threads", (json_int_t)info.threads,
                          "smem_bytes", (json_int_t)info.smem_bytes, "regs", info.regs,
                          "local_bytes", info.local_bytes, "walk", walk, "tails", "m",
                          info.tail_m, "n", info.tail_n, "k", info.tail_k);
    if (why) json_object_set_new(j, "lookup_explain", json_string(why));
    json_dumpf(j, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(j);
  } else {
    printf("backend   %s\n", tsr_backend_name(b));
    printf("problem   %lldx%lldx%lld batch %lld op(A)=%c op(B)=%c alpha %g beta %g\n",
           (long long)p.m, (long long)p.n, (long long)p.k, (long long)p.batch,
           p.op_a ? 'T' : 'N', p.op_b ? 'T' : 'N', p.alpha, p.beta);
    printf("plan      %s\n", text);
    printf("from      %s%s\n", source, o.plan ? ", with --plan over it" : "");
    printf("grid      %u x %u tiles, x %u (batch x split-K) = %llu programs\n", info.grid_rows,
           info.grid_cols, info.grid_batch,
           (unsigned long long)info.grid_rows * info.grid_cols * info.grid_batch);
    if (info.plan.tailk > 0 && info.plan.wave > 0) { /* docs/emit.md "Tail slices" */
      unsigned long long t = (unsigned long long)info.grid_rows * info.grid_cols,
                         d = t / (unsigned long long)info.plan.wave * (unsigned long long)info.plan.wave;
      printf("tail      %llu tiles in whole waves of %d, the last %llu in %d K slices each: %llu "
             "programs\n",
             d, info.plan.wave, t - d, info.plan.tailk, d + (t - d) * (unsigned long long)info.plan.tailk);
    }
    printf("walk      %s\n", walk);
    printf("threads   %u %s\n", info.threads, b == TSR_BACKEND_CPU ? "workers" : "per block");
    printf("memory    %llu bytes %s\n", (unsigned long long)info.smem_bytes,
           b == TSR_BACKEND_CPU ? "of packing buffers per worker" : "of shared memory per block");
    if (info.regs >= 0)
      printf("registers %d per thread, %d local (spill) bytes\n", info.regs, info.local_bytes);
    else
      printf("registers known after compilation (tessera gemm reports them)\n");
    printf("tails     M %s, N %s, K %s\n", info.tail_m ? "yes" : "no", info.tail_n ? "yes" : "no",
           info.tail_k ? "yes" : "no");
    if (why) printf("lookup\n%s", why);
  }
  free(why);
  tsr_context_destroy(ctx);
  return TSR_EXIT_OK;
}
