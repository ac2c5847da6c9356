/* libFuzzer harness: the audit's results loader and checker. The input is
 * results.json, then optionally tables.json, report.md and one chart
 * (ratios_wall_batch.svg), separated by NUL bytes. Whatever the bytes,
 * loading either refuses with a message or the whole audit runs to a
 * verdict -- hash chain and digest (tessera-bench/3), the self-consistency
 * checks, the chart's numbers and the whole-file comparison through the
 * bench's renderer included: no crash, no leak, bounded messages, a
 * verdict consistent with its findings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "bench/bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *part[4] = {NULL, NULL, NULL, NULL};
  size_t len[4] = {0, 0, 0, 0};
  const char *p = (const char *)data, *end = p + size;
  for (int i = 0; i < 4 && p <= end; i++) {
    const char *z = i < 3 ? memchr(p, '\0', (size_t)(end - p)) : NULL;
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
  if (part[3]) {
    in.svgs = json_object();
    json_object_set_new(in.svgs, "ratios_wall_batch.svg", json_stringn_nocheck(part[3], len[3]));
  }
  tsr__audit_result res;
  tsr__audit_result_init(&res);
  /* a digest to verify against, and the renderer the CLI passes */
  tsr__audit_options opt = {.digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                            .render = tsr__bench_render};
  tsr__audit_check(&in, &opt, &res);
  if (res.nnotes > TSR_AUDIT_MAX_NOTES) abort();
  /* no document hashes to that digest: the audit never passes with it */
  if (res.digest_verified || !res.total) abort();
  for (int i = 0; i < res.nnotes; i++)
    if (!memchr(res.notes[i], '\0', sizeof res.notes[i])) abort();
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
