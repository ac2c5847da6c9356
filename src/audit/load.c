/* Loading a results directory for the audit. Anything that cannot be read
 * as the documented documents is "unusable input": one line, exit 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "sys/file.h"

/* Messages are printed as one line: text taken from a document or a path
 * (a shape label, a jansson token) may hold control characters. */
static void one_line(char *msg) {
  for (unsigned char *p = (unsigned char *)msg; *p; p++)
    if (*p < 0x20 || *p == 0x7f) *p = '?';
}

/* One JSON object document; name is the file name for the message. */
static json_t *parse_doc(const char *name, const char *text, size_t len, const char *schema,
                         char *msg, size_t cap) {
  json_error_t err;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  if (!doc) {
    snprintf(msg, cap, "%s: %s (line %d, column %d: %s)", name,
             json_error_code(&err) == json_error_duplicate_key ? "duplicate JSON key"
                                                               : "truncated or not JSON",
             err.line, err.column, err.text);
    one_line(msg);
    return NULL;
  }
  const char *s = json_string_value(json_object_get(doc, "schema"));
  /* results.json of the previous schema is still audited (docs/audit.md) */
  int legacy = !strcmp(schema, TSR_AUDIT_BENCH_SCHEMA) && s && !strcmp(s, TSR_AUDIT_BENCH_SCHEMA_V1);
  if (!json_is_object(doc) || !s || (strcmp(s, schema) && !legacy)) {
    snprintf(msg, cap, "%s: not a %s document (schema %s%.60s%s)", name, schema, s ? "'" : "",
             s ? s : "missing", s ? "'" : "");
    one_line(msg);
    json_decref(doc);
    return NULL;
  }
  return doc;
}

int tsr__audit_load_buffers(const char *results, size_t results_len, const char *tables,
                            size_t tables_len, const char *report, size_t report_len,
                            tsr__audit_input *in, char *msg, size_t cap) {
  memset(in, 0, sizeof *in);
  in->results = parse_doc("results.json", results, results_len, TSR_AUDIT_BENCH_SCHEMA, msg, cap);
  if (!in->results) return -1;
  if (tables) {
    in->tables = parse_doc("tables.json", tables, tables_len, TSR_AUDIT_TABLES_SCHEMA, msg, cap);
    if (!in->tables) {
      tsr__audit_input_free(in);
      return -1;
    }
  }
  if (report) {
    if (memchr(report, '\0', report_len)) {
      snprintf(msg, cap, "report.md: contains a NUL byte (not a text file)");
      tsr__audit_input_free(in);
      return -1;
    }
    in->report = malloc(report_len + 1);
    if (!in->report) {
      snprintf(msg, cap, "report.md: out of memory");
      tsr__audit_input_free(in);
      return -1;
    }
    memcpy(in->report, report, report_len);
    in->report[report_len] = '\0';
    in->report_len = report_len;
  }
  return 0;
}

const char *const tsr__audit_files[3] = {"results.json", "tables.json", "report.md"};

int tsr__audit_read_dir(const char *dir, char *text[3], size_t len[3], char *msg, size_t cap) {
  for (int i = 0; i < 3; i++) text[i] = NULL, len[i] = 0;
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    snprintf(msg, cap, "%s: %s", dir, stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
    one_line(msg);
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, tsr__audit_files[i]);
    if (tsr__read_file_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &text[i], &len[i], msg, cap)) {
      one_line(msg);
      for (int j = 0; j < i; j++) free(text[j]), text[j] = NULL;
      return -1;
    }
  }
  return 0;
}

int tsr__audit_load_raw(const char *dir, char *const text[3], const size_t len[3],
                        tsr__audit_input *in, char *msg, size_t cap) {
  char inner[900];
  int rc = tsr__audit_load_buffers(text[0], len[0], text[1], len[1], text[2], len[2], in, inner,
                                   sizeof inner);
  if (rc) snprintf(msg, cap, "%s/%s", dir, inner);
  if (rc) one_line(msg);
  return rc;
}

int tsr__audit_load_dir(const char *dir, tsr__audit_input *in, char *msg, size_t cap) {
  memset(in, 0, sizeof *in);
  char *text[3];
  size_t len[3];
  if (tsr__audit_read_dir(dir, text, len, msg, cap)) return -1;
  int rc = tsr__audit_load_raw(dir, text, len, in, msg, cap);
  for (int i = 0; i < 3; i++) free(text[i]);
  return rc;
}

int tsr__audit_results_usable(const json_t *results, char *msg, size_t cap) {
  tsr__audit_input in = {.results = (json_t *)results};
  tsr__audit_options opt = {.results_only = 1};
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  tsr__audit_check(&in, &opt, &res);
  int rc = 0;
  for (size_t i = 0; i < res.n && !rc; i++)
    if (tsr__audit_reason_is_structural(res.items[i].reason)) {
      snprintf(msg, cap, "%s: %s: %s", tsr__audit_reason_name(res.items[i].reason),
               res.items[i].where, res.items[i].detail);
      rc = -1;
    }
  /* Findings past the kept ones are only counted: name the first reason. */
  for (int r = 0; r < TSR__AR_COUNT && !rc; r++)
    if (res.counts[r] && tsr__audit_reason_is_structural((tsr__audit_reason)r)) {
      snprintf(msg, cap, "%s: %zu findings", tsr__audit_reason_name((tsr__audit_reason)r),
               res.counts[r]);
      rc = -1;
    }
  if (rc) one_line(msg);
  tsr__audit_result_free(&res);
  return rc;
}

int tsr__audit_load_results(const char *dir, json_t **out, char *msg, size_t cap) {
  *out = NULL;
  char path[4200], *text = NULL, inner[900];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/results.json", dir);
  if (tsr__read_file_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &text, &len, msg, cap)) {
    one_line(msg);
    return -1;
  }
  tsr__audit_input in;
  int rc = tsr__audit_load_buffers(text, len, NULL, 0, NULL, 0, &in, inner, sizeof inner);
  free(text);
  if (rc) {
    snprintf(msg, cap, "%s/%s", dir, inner);
    one_line(msg);
    return -1;
  }
  json_t *doc = in.results;
  if (tsr__audit_results_usable(doc, inner, sizeof inner)) {
    snprintf(msg, cap, "%s: %s", path, inner);
    one_line(msg);
    json_decref(doc);
    return -1;
  }
  *out = doc;
  return 0;
}

void tsr__audit_input_free(tsr__audit_input *in) {
  if (!in) return;
  json_decref(in->results);
  json_decref(in->tables);
  free(in->report);
  memset(in, 0, sizeof *in);
}
