/* Loading a results directory for the audit. Anything that cannot be read
 * as the documented documents is "unusable input": one line, exit 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"

char *tsr__audit_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      char *t = realloc(buf, cap *= 2);
      if (!t) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = t;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (!buf || err) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* One JSON object document; name is the file name for the message. */
static json_t *parse_doc(const char *name, const char *text, size_t len, const char *schema,
                         char *msg, size_t cap) {
  json_error_t err;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  if (!doc) {
    snprintf(msg, cap, "%s: truncated or not JSON (line %d, column %d: %s)", name, err.line,
             err.column, err.text);
    return NULL;
  }
  const char *s = json_string_value(json_object_get(doc, "schema"));
  /* results.json of the previous schema is still audited (docs/audit.md) */
  int legacy = !strcmp(schema, TSR_AUDIT_BENCH_SCHEMA) && s && !strcmp(s, TSR_AUDIT_BENCH_SCHEMA_V1);
  if (!json_is_object(doc) || !s || (strcmp(s, schema) && !legacy)) {
    snprintf(msg, cap, "%s: not a %s document (schema %s%.60s%s)", name, schema, s ? "'" : "",
             s ? s : "missing", s ? "'" : "");
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
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, tsr__audit_files[i]);
    text[i] = tsr__audit_read_file(path, &len[i]);
    if (!text[i]) {
      snprintf(msg, cap, "%s: %s", path, strerror(errno ? errno : EIO));
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

void tsr__audit_input_free(tsr__audit_input *in) {
  if (!in) return;
  json_decref(in->results);
  json_decref(in->tables);
  free(in->report);
  memset(in, 0, sizeof *in);
}
