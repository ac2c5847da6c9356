/* Loading a results directory for the audit. Anything that cannot be read
 * as the documented documents is "unusable input": one line, exit 2. */
#include <dirent.h>
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
  /* results.json of the previous schemas is still audited (docs/audit.md) */
  int legacy = !strcmp(schema, TSR_AUDIT_BENCH_SCHEMA) && s &&
               (!strcmp(s, TSR_AUDIT_BENCH_SCHEMA_V2) || !strcmp(s, TSR_AUDIT_BENCH_SCHEMA_V1));
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
    in->tables_text = in->tables ? malloc(tables_len + 1) : NULL;
    if (!in->tables || !in->tables_text) {
      if (in->tables) snprintf(msg, cap, "tables.json: out of memory");
      tsr__audit_input_free(in);
      return -1;
    }
    memcpy(in->tables_text, tables, tables_len);
    in->tables_text[tables_len] = '\0';
    in->tables_len = tables_len;
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
    if (tsr__read_doc_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &text[i], &len[i], msg, cap)) {
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

/* Every entry of dir accepted by want() into obj {name: text}; a file
 * over max_bytes is stored as null (the audit reports it). */
static int read_entries(const char *dir, int (*want)(const char *), size_t max_bytes, json_t *obj,
                        char *msg, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(msg, cap, "%s: %s", dir, strerror(errno));
    one_line(msg);
    return -1;
  }
  int rc = 0;
  struct dirent *e;
  /* Bounded: a directory of more entries than any run writes is unusable. */
  size_t n = 0;
  while (!rc && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !want(e->d_name)) continue;
    if (++n > 4 * (size_t)TSR_AUDIT_MAX_SLOTS) {
      snprintf(msg, cap, "%s: more than %zu entries", dir, 4 * (size_t)TSR_AUDIT_MAX_SLOTS);
      rc = -1;
      break;
    }
    char path[4608], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int err = tsr__read_file_capped(path, max_bytes, &text, &len, msg, cap);
    json_t *v = NULL;
    if (err == EFBIG) v = json_null();
    else if (err) rc = -1;
    else v = json_stringn_nocheck(text, len);
    free(text);
    if (!rc && (!v || json_object_set_new(obj, e->d_name, v))) {
      snprintf(msg, cap, "%s: out of memory", path);
      rc = -1;
    }
  }
  closedir(d);
  if (rc) one_line(msg);
  return rc;
}
static int is_svg(const char *name) {
  size_t n = strlen(name);
  return !strncmp(name, "ratios_", 7) && n > 11 && !strcmp(name + n - 4, ".svg");
}
static int any_name(const char *name) { return 1; }

int tsr__audit_load_extras(const char *dir, tsr__audit_input *in, char *msg, size_t cap) {
  in->dir = strdup(dir);
  in->svgs = json_object();
  if (!in->dir || !in->svgs) {
    snprintf(msg, cap, "%s: out of memory", dir);
    return -1;
  }
  if (read_entries(dir, is_svg, TSR_AUDIT_MAX_FILE_BYTES, in->svgs, msg, cap)) return -1;
  char logs[4200];
  snprintf(logs, sizeof logs, "%s/logs", dir);
  struct stat sb;
  if (lstat(logs, &sb) != 0 && errno == ENOENT) return 0; /* no logs: nothing to cross-check */
  if (stat(logs, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    snprintf(msg, cap, "%s: not a directory", logs);
    one_line(msg);
    return -1;
  }
  in->logs = json_object();
  if (!in->logs) {
    snprintf(msg, cap, "%s: out of memory", logs);
    return -1;
  }
  return read_entries(logs, any_name, TSR_AUDIT_MAX_LOG_BYTES, in->logs, msg, cap);
}

int tsr__audit_load_dir(const char *dir, tsr__audit_input *in, char *msg, size_t cap) {
  memset(in, 0, sizeof *in);
  char *text[3];
  size_t len[3];
  if (tsr__audit_read_dir(dir, text, len, msg, cap)) return -1;
  int rc = tsr__audit_load_raw(dir, text, len, in, msg, cap);
  for (int i = 0; i < 3; i++) free(text[i]);
  if (!rc && tsr__audit_load_extras(dir, in, msg, cap)) {
    tsr__audit_input_free(in);
    rc = -1;
  }
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
  if (tsr__read_doc_capped(path, TSR_AUDIT_MAX_FILE_BYTES, &text, &len, msg, cap)) {
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
  free(in->tables_text);
  free(in->report);
  json_decref(in->svgs);
  json_decref(in->logs);
  free(in->dir);
  memset(in, 0, sizeof *in);
}
