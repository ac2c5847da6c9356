/* libFuzzer harness: the audit's results loader and checker. The input is
 * results.json, then optionally tables.json and report.md, separated by NUL
 * bytes. Whatever the bytes, loading either refuses with a message or the
 * whole audit runs to a verdict: no crash, no leak, bounded messages, a
 * verdict consistent with its findings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *part[3] = {NULL, NULL, NULL};
  size_t len[3] = {0, 0, 0};
  const char *p = (const char *)data, *end = p + size;
  for (int i = 0; i < 3 && p <= end; i++) {
    const char *z = i < 2 ? memchr(p, '\0', (size_t)(end - p)) : NULL;
    part[i] = p;
    len[i] = z ? (size_t)(z - p) : (size_t)(end - p);
    if (!z) break;
    p = z + 1;
  }
  tsr__audit_input in;
  char msg[300];
  msg[0] = '\0';
  if (tsr__audit_load_buffers(part[0], len[0], part[1], len[1], part[2], len[2], &in, msg, sizeof msg)) {
    if (!msg[0] || !memchr(msg, '\0', sizeof msg)) abort(); /* a refusal explains itself */
    return 0;
  }
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  tsr__audit_options opt = {0};
  tsr__audit_check(&in, &opt, &res);
  if (res.n > res.total || res.n > TSR_AUDIT_MAX_FINDINGS) abort();
  size_t sum = 0;
  for (int i = 0; i < TSR__AR_COUNT; i++) sum += res.counts[i];
  if (sum != res.total) abort();
  for (size_t i = 0; i < res.n; i++)
    if (!memchr(res.items[i].where, '\0', sizeof res.items[i].where) ||
        !memchr(res.items[i].detail, '\0', sizeof res.items[i].detail))
      abort();
  json_t *v = tsr__audit_result_json(&res, NULL);
  const char *verdict = json_string_value(json_object_get(v, "verdict"));
  if (!verdict || strcmp(verdict, res.total ? "fail" : "pass")) abort();
  json_decref(v);
  tsr__audit_result_free(&res);
  tsr__audit_input_free(&in);
  return 0;
}
