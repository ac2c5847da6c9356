/* libFuzzer harness: `tessera report` on a whole results.json. The input is
 * the document. It is loaded as the CLI loads it (the audit's loader, then
 * the shared structural validation); whatever the bytes, the tables and the
 * whole report (report.md, tables.json, SVGs, written into a scratch
 * directory) are then computed from the parsed document, validated or not:
 * no crash, no leak, no unbounded allocation, every refusal explains
 * itself (the CLI's: in one line). A document the validation accepts must
 * always report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "bench/bench.h"

static char out_dir[256];

static void remove_out(void) {
  static const char *const names[] = {"report.md", "tables.json", "ratios_gpu_batch.svg",
                                      "ratios_gpu_single.svg", "ratios_e2e_batch.svg",
                                      "ratios_e2e_single.svg", "ratios_wall_batch.svg",
                                      "ratios_wall_single.svg"};
  char path[400];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", out_dir, names[i]);
    unlink(path);
  }
  rmdir(out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  /* tmpfs when there is one: the report's files are written every run. */
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
  snprintf(out_dir, sizeof out_dir, "%s/tessera-fuzz-report.XXXXXX", base ? base : "/tmp");
  if (!mkdtemp(out_dir)) abort();
  atexit(remove_out);
  return 0;
}

/* A message the CLI prints as its one line. */
static void one_line(const char *msg, size_t cap) {
  if (!msg[0] || !memchr(msg, '\0', cap) || strchr(msg, '\n')) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tsr__audit_input in;
  char msg[1200];
  msg[0] = '\0';
  if (tsr__audit_load_buffers((const char *)data, size, NULL, 0, NULL, 0, &in, msg, sizeof msg)) {
    one_line(msg, sizeof msg);
    return 0;
  }
  msg[0] = '\0';
  int usable = tsr__audit_results_usable(in.results, msg, sizeof msg) == 0;
  if (!usable) one_line(msg, sizeof msg);

  char tmsg[512] = "";
  json_t *tables = tsr__bench_tables(in.results, -1, tmsg, sizeof tmsg);
  if (!tables) {
    if (usable) abort(); /* what the validation accepts, the tables take */
    if (!tmsg[0] || !memchr(tmsg, '\0', sizeof tmsg)) abort();
  } else {
    const char *schema = json_string_value(json_object_get(tables, "schema"));
    if (!schema || strcmp(schema, TSR_BENCH_TABLES_SCHEMA)) abort();
    json_decref(tables);
  }

  char *md = NULL, rmsg[512] = "";
  int rc = tsr__bench_report(in.results, out_dir, -1, &md, rmsg, sizeof rmsg);
  if (rc) {
    if (usable) abort();
    if (!rmsg[0] || !memchr(rmsg, '\0', sizeof rmsg)) abort();
  } else if (!md) {
    abort();
  }
  free(md);
  /* The in-memory rendering the audit compares against is what was written. */
  json_t *files = NULL;
  char fmsg[512] = "";
  int frc = tsr__bench_render(in.results, -1, &files, fmsg, sizeof fmsg);
  if ((frc != 0) != (rc != 0)) abort();
  if (!frc) {
    char path[400];
    snprintf(path, sizeof path, "%s/report.md", out_dir);
    FILE *f = fopen(path, "rb");
    const json_t *want = json_object_get(files, "report.md");
    size_t n = json_string_length(want), got = 0;
    char *buf = malloc(n + 1);
    if (!f || !buf || !want || !json_object_get(files, "tables.json")) abort();
    got = fread(buf, 1, n + 1, f);
    fclose(f);
    if (got != n || memcmp(buf, json_string_value(want), n)) abort();
    free(buf);
  }
  json_decref(files);
  tsr__audit_input_free(&in);
  return 0;
}
