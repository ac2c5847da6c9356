/* tessera walk: the visit order of a program walk as a grid picture, and the
 * constructive bijection check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan/walk_enum.h"

static int parse_grid(const char *text, uint32_t *h, uint32_t *w) {
  char *end;
  if (!text || text[0] < '0' || text[0] > '9') return -1;
  unsigned long long a = strtoull(text, &end, 10);
  if (*end != 'x' || end[1] < '0' || end[1] > '9') return -1;
  unsigned long long b = strtoull(end + 1, &end, 10);
  if (*end || a == 0 || b == 0 || a > UINT32_MAX || b > UINT32_MAX) return -1;
  *h = (uint32_t)a;
  *w = (uint32_t)b;
  return 0;
}

int tsr_cli_walk(int argc, char **argv) {
  const char *grid = NULL, *walk_text = "linear";
  int check = 0, json = 0;
  long long max_grid = 16, max_req = 9;
  const tsr_cli_opt opts[] = {
      TSR_CLI_OPT_STRING("--grid", &grid, "HxW", "tile grid (rows × columns), each in 1..4294967295"),
      TSR_CLI_OPT_STRING("--walk", &walk_text, "W", "linear (default), rect:RxC or stripe:R"),
      TSR_CLI_OPT_FLAG("--check", &check,
                       "compare the ordinal formula with an independent constructive\n"
                       "enumeration and check it is a bijection; without --grid, do so\n"
                       "for every grid up to --max-grid squared and every request\n"
                       "R, C in 1..--max-req"),
      TSR_CLI_OPT_INT("--max-grid", &max_grid, 1, 256, "N", "largest grid side of --check (default 16)"),
      TSR_CLI_OPT_INT("--max-req", &max_req, 1, 256, "N", "largest R, C of --check (default 9)"),
      TSR_CLI_OPT_FLAG("--json", &json, "machine-readable output (with --check)"),
  };
  const tsr_cli_spec spec = {
      .verb = "walk",
      .usage = "usage: tessera walk --grid HxW [--walk W] [--check]\n"
               "       tessera walk --check [--max-grid N] [--max-req N]\n"
               "\n"
               "Prints, for an H×W grid of output tiles, the physical ordinal at which each\n"
               "tile is visited by the walk (linear, rect:RxC, stripe:R), and the walk it\n"
               "normalizes to on that grid.\n"
               "\n",
      .footer = "exit: 0 ok, 1 check failed, 2 bad input\n",
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
  };
  int rc = tsr_cli_parse(&spec, argc, argv);
  if (rc != TSR_CLI_CONTINUE) return rc;
  char msg[256];
  tsr_walk w;
  if (tsr_walk_parse(walk_text, &w, msg, sizeof msg)) return tsr_cli_usage_error("walk", "%s", msg);

  if (!grid) {
    if (!check) return tsr_cli_usage_error("walk", "--grid: required unless --check is given");
    tsr__walk_check_report rep;
    tsr__walk_check_all((uint32_t)max_grid, (uint32_t)max_req, &rep);
    if (json)
      printf("{\"combinations\": %llu, \"ordinals\": %llu, \"failures\": %llu}\n",
             (unsigned long long)rep.combinations, (unsigned long long)rep.ordinals,
             (unsigned long long)rep.failures);
    else
      printf("walk check: %llu grid/walk combinations (grids 1..%lldx1..%lld, R,C 1..%lld), "
             "%llu ordinals: %s\n",
             (unsigned long long)rep.combinations, max_grid, max_grid, max_req,
             (unsigned long long)rep.ordinals,
             rep.failures ? "FAILED" : "all bijective and equal to the constructive order");
    if (rep.failures) fprintf(stderr, "first failure: %s\n", rep.first_failure);
    return rep.failures ? TSR_EXIT_FAIL : TSR_EXIT_OK;
  }

  uint32_t h, wd;
  if (parse_grid(grid, &h, &wd))
    return tsr_cli_usage_error("walk", "--grid: '%s' is not HxW with H, W in 1..4294967295", grid);
  if (tsr_walk_check(&w, h, wd, msg, sizeof msg)) return tsr_cli_usage_error("walk", "%s", msg);
  tsr_walk norm = w;
  tsr_walk_normalize(&norm, h, wd);
  char nt[64];
  tsr_walk_format(&norm, nt, sizeof nt);
  uint64_t n = (uint64_t)h * wd;
  if (check) {
    if (n > (1ull << 28)) return tsr_cli_usage_error("walk", "--grid: %s is too large to enumerate", grid);
    int ok = tsr__walk_check_one(&w, h, wd, msg, sizeof msg);
    printf("%s on %ux%u (normalizes to %s): %s\n", walk_text, h, wd, nt,
           ok ? "bijective, equal to the constructive order" : msg);
    return ok ? TSR_EXIT_OK : TSR_EXIT_FAIL;
  }
  if (h > 64 || wd > 64)
    return tsr_cli_usage_error("walk", "--grid: %s is too large to draw (at most 64x64; use --check)",
                               grid);
  uint32_t *ord = malloc(n * sizeof *ord);
  if (!ord) return tsr_cli_usage_error("walk", "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r, c;
    tsr_walk_map(&w, h, wd, i, &r, &c);
    ord[(uint64_t)r * wd + c] = i;
  }
  int width = snprintf(NULL, 0, "%llu", (unsigned long long)(n - 1));
  printf("walk %s on a %ux%u grid (normalizes to %s); each cell is its visit ordinal:\n", walk_text,
         h, wd, nt);
  for (uint32_t r = 0; r < h; r++) {
    for (uint32_t c = 0; c < wd; c++) printf("%s%*u", c ? " " : "", width, ord[(uint64_t)r * wd + c]);
    putchar('\n');
  }
  free(ord);
  return TSR_EXIT_OK;
}
