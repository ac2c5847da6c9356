/* tessera emit: the generated CUDA C source of a plan on a problem. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "emit/emit.h"

static void print_help(void) {
  printf("usage: tessera emit --shape MxNxK [--plan TEXT] [options] [--out FILE]\n"
         "\n"
         "Prints the CUDA C that the cuda backend compiles for this problem and plan\n"
         "(the plan is realized first: walk normalized for the grid). The same problem\n"
         "and plan always give byte-identical source; its SHA-256 goes to stderr.\n\n%s"
         "  --out FILE      write the source to FILE (atomically) instead of stdout\n"
         "  --sha256        print only the source's SHA-256\n",
         tsr_cli_problem_help);
}

int tsr_cli_emit(int argc, char **argv) {
  tsr_cli_problem_opts o;
  tsr_cli_problem_defaults(&o, "cuda");
  const char *out = NULL;
  int sha_only = 0;
  for (int i = 1; i < argc; i++) {
    int r = tsr_cli_problem_option("emit", argc, argv, &i, &o);
    if (r < 0) return TSR_EXIT_USAGE;
    if (r) continue;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      print_help();
      return TSR_EXIT_OK;
    } else if (!strcmp(argv[i], "--sha256")) {
      sha_only = 1;
    } else if (!strcmp(argv[i], "--out")) {
      if (i + 1 >= argc) return tsr_cli_usage_error("emit", "--out: needs a value");
      out = argv[++i];
    } else {
      return tsr_cli_usage_error("emit", "unknown option '%s' (see --help)", argv[i]);
    }
  }
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
  tsr__kernel_src src = {0};
  char msg[512];
  if (rc) goto done;
  rc = TSR_EXIT_USAGE;
  if (tsr_plan_realize(ctx, b, &p, &plan, &info)) {
    tsr_cli_usage_error("emit", "plan rejected: %s", tsr_context_message(ctx));
    goto done;
  }
  if (tsr__emit_gemm(&p, &info.plan, 232448, &src, msg, sizeof msg)) {
    tsr_cli_usage_error("emit", "%s", msg);
    goto done;
  }
  if (sha_only) {
    printf("%s\n", src.sha256);
  } else if (out) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", out);
    FILE *f = NULL;
    int fd = mkstemp(tmp);
    if (fd >= 0) f = fdopen(fd, "w");
    if (!f || fwrite(src.source, 1, src.len, f) != src.len || fclose(f) != 0 ||
        rename(tmp, out) != 0) {
      remove(tmp);
      tsr_cli_usage_error("emit", "--out: cannot write '%s'", out);
      goto done;
    }
    fprintf(stderr, "sha256 %s  %s\n", src.sha256, out);
  } else {
    fwrite(src.source, 1, src.len, stdout);
    fprintf(stderr, "sha256 %s\n", src.sha256);
  }
  rc = TSR_EXIT_OK;
done:
  tsr__kernel_src_free(&src);
  tsr_context_destroy(ctx);
  return rc;
}
