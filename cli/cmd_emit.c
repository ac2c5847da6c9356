/* tessera emit: the generated CUDA C source of a plan on a problem. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "core/hash.h"
#include "sys/file.h"

int tsr_cli_emit(int argc, char **argv) {
  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "cuda");
  const char *out = NULL;
  int sha_only = 0;
  tsr_cli_opt opts[TSR_CLI_PROBLEM_NOPTS + 2];
  size_t n = tsr_cli_problem_table(&o, opts);
  opts[n++] = (tsr_cli_opt){.name = "--out", .kind = TSR_CLI_STRING,
                            .dest = TSR_CLI_PTR_(const char *, &out), .flags = TSR_CLI_NONEMPTY,
                            .metavar = "FILE",
                            .help = "write the source to FILE (atomically) instead of stdout"};
  opts[n++] = (tsr_cli_opt)TSR_CLI_OPT_FLAG("--sha256", &sha_only, "print only the source's SHA-256");
  const tsr_cli_spec spec = {
      .verb = "emit",
      .usage = "usage: tessera emit --shape MxNxK [--plan TEXT] [options] [--out FILE]\n"
               "\n"
               "Prints the CUDA C that the cuda backend compiles for this problem and plan\n"
               "(the plan is realized first: walk normalized for the grid). The same problem\n"
               "and plan always give byte-identical source; its SHA-256 goes to stderr.\n"
               "--backend defaults to cuda, the only backend with generated source.\n\n",
      .footer = "exit: 0 written, 2 bad input, plan rejected or --out not writable\n",
      .opts = opts,
      .nopts = n,
  };
  int prc = tsr_cli_parse(&spec, argc, argv);
  if (prc != TSR_CLI_CONTINUE) return prc;
  if (strcmp(o.backend, "cuda") != 0)
    return tsr_cli_usage_error("emit", "--backend: '%s' has no generated source (only cuda)",
                               o.backend);
  tsr_context *ctx = NULL;
  if (tsr_context_create(&ctx)) return tsr_cli_usage_error("emit", "out of memory");
  tsr_problem p;
  tsr_backend_kind b;
  tsr_plan plan;
  int rc = tsr_cli_problem_finish("emit", ctx, &o, &p, &b, &plan, NULL, 0);
  tsr_plan_info info;
  char *src = NULL, sha[65] = "", msg[600];
  if (rc) goto done;
  rc = TSR_EXIT_USAGE;
  if (tsr_plan_realize(ctx, b, &p, &plan, &info)) {
    tsr_cli_usage_error("emit", "plan rejected: %s", tsr_context_message(ctx));
    goto done;
  }
  /* the backend's own source for the realized plan (no device needed) */
  if (!(src = tsr_plan_source(b, &p, &info.plan)) || tsr__sha256_hex(src, strlen(src), sha)) {
    tsr_cli_usage_error("emit", "cannot generate the source (out of memory)");
    goto done;
  }
  size_t len = strlen(src);
  if (sha_only) {
    printf("%s\n", sha);
  } else if (out) {
    tsr__span part = {src, len};
    if (tsr__write_atomic(out, &part, 1, msg, sizeof msg)) {
      tsr_cli_usage_error("emit", "--out: %s", msg);
      goto done;
    }
    fprintf(stderr, "sha256 %s  %s\n", sha, out);
  } else {
    fwrite(src, 1, len, stdout);
    fprintf(stderr, "sha256 %s\n", sha);
  }
  rc = TSR_EXIT_OK;
done:
  free(src);
  tsr_context_destroy(ctx);
  return rc;
}
