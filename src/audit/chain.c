/* Tamper evidence of a tessera-bench/3 run (docs/protocol.md, "Hash chain
 * and digest"), restated from the format definition: the genesis over the
 * fields fixed before the first row, one link per row over the previous
 * link and the row, the head, and the digest over the whole document. A
 * link is recomputed from the previous *recorded* link, so a finding names
 * the row that was edited; the chain is intact only when every link is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_internal.h"
#include "core/hash.h"

#define FAIL tsr__audit_fail

/* SHA-256 of prefix || [prev || "\n"] || canonical(v). */
static int hash_tagged(const char *prefix, const char *prev, const json_t *v, char out[65]) {
  char *text = json_dumps(v, TSR_AUDIT_CANONICAL_FLAGS);
  if (!text) return -1;
  size_t lp = strlen(prefix), lv = prev ? strlen(prev) + 1 : 0, lt = strlen(text);
  char *buf = malloc(lp + lv + lt + 1);
  int rc = -1;
  if (buf) {
    memcpy(buf, prefix, lp);
    if (prev) {
      memcpy(buf + lp, prev, lv - 1);
      buf[lp + lv - 1] = '\n';
    }
    memcpy(buf + lp + lv, text, lt);
    rc = tsr__sha256_hex(buf, lp + lv + lt, out);
  }
  free(buf);
  free(text);
  return rc;
}

static void copy_keys(json_t *dst, const json_t *src, const char *const *keys, size_t n) {
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_object_get(src, keys[i]);
    if (v) json_object_set(dst, keys[i], v);
  }
}

int tsr__audit_chain_genesis(const json_t *doc, char out[65]) {
  /* What the bench had written before its first row; never changed after. */
  static const char *const top[] = {"schema", "tessera_version", "started_utc", "command_line",
                                    "protocol", "host", "device", "routes",
                                    "oracle_precompute", "torch_process"};
  static const char *const exe_keys[] = {"path", "sha256"};
  static const char *const order_keys[] = {"base_routes", "design", "planned"};
  json_t *g = json_object(), *a = json_object(), *e = json_object(), *o = json_object();
  int rc = -1;
  if (g && a && e && o) {
    copy_keys(g, doc, top, sizeof top / sizeof *top);
    const json_t *art = json_object_get(doc, "artifacts");
    copy_keys(e, json_object_get(art, "executable"), exe_keys, 2);
    json_object_set(a, "executable", e);
    static const char *const ts[] = {"torch_script"};
    copy_keys(a, art, ts, 1);
    json_object_set(g, "artifacts", a);
    copy_keys(o, json_object_get(doc, "order"), order_keys, 3);
    json_object_set(g, "order", o);
    rc = hash_tagged("tessera-bench/3 genesis\n", NULL, g, out);
  }
  json_decref(g);
  json_decref(a);
  json_decref(e);
  json_decref(o);
  return rc;
}

int tsr__audit_chain_link(const char *prev, const json_t *row, char out[65]) {
  json_t *r = json_copy((json_t *)row); /* shallow: the row without its own link */
  if (!r) return -1;
  json_object_del(r, "chain");
  int rc = hash_tagged("tessera-bench/3 row\n", prev ? prev : "", r, out);
  json_decref(r);
  return rc;
}

int tsr__audit_chain_digest(const json_t *doc, char out[65]) {
  json_t *d = json_copy((json_t *)doc);
  if (!d) return -1;
  json_object_del(d, "digest");
  int rc = hash_tagged("tessera-bench/3 digest\n", NULL, d, out);
  json_decref(d);
  return rc;
}

int tsr__audit_parse_digest(const char *text, char out[65]) {
  if (!text) return -1;
  if (!strncmp(text, "sha256:", 7)) text += 7;
  if (strlen(text) != 64) return -1;
  for (int i = 0; i < 64; i++) {
    char ch = text[i];
    if (ch >= 'A' && ch <= 'F') ch = (char)(ch - 'A' + 'a');
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return -1;
    out[i] = ch;
  }
  out[64] = '\0';
  return 0;
}

void tsr__audit_check_chain(tsr__audit_ctx *c) {
  tsr__audit_result *res = c->res;
  const json_t *doc = c->doc;
  const char *given = c->opt ? c->opt->digest : NULL;
  if (!c->v3) {
    if (given)
      FAIL(res, TSR__AR_DIGEST, "digest", "schema tessera-bench/%d predates the digest "
           "(tessera-bench/3): this run cannot be verified against %.16s…", c->version, given);
    return;
  }
  const json_t *ch = json_object_get(doc, "chain");
  const json_t *rows = json_object_get(doc, "rows");
  if (!json_is_object(ch)) {
    FAIL(res, TSR__AR_CHAIN, "chain", "missing: a tessera-bench/3 run records its hash chain");
  } else {
    if (!tsr__audit_is(ch, "algorithm", "sha256") || !tsr__audit_is(ch, "canonical", TSR_AUDIT_CANONICAL_TEXT))
      FAIL(res, TSR__AR_CHAIN, "chain", "algorithm/canonical form is not sha256 over '%s'",
           TSR_AUDIT_CANONICAL_TEXT);
    char want[65];
    const char *genesis = tsr__audit_str(ch, "genesis");
    if (tsr__audit_chain_genesis(doc, want))
      FAIL(res, TSR__AR_CHAIN, "chain.genesis", "cannot be recomputed (out of memory)");
    else if (!genesis || strcmp(genesis, want))
      FAIL(res, TSR__AR_CHAIN, "chain.genesis", "%.64s, recomputed %s from the header fields "
           "(schema, command line, protocol, host, device, routes, planned order, oracle list, "
           "executable): the run's header was edited", genesis ? genesis : "(missing)", want);
    const char *prev = genesis;
    size_t bad = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
      const json_t *row = json_array_get(rows, i);
      const char *link = tsr__audit_str(row, "chain");
      char where[192];
      tsr__audit_row_where(row, i, where, sizeof where);
      if (tsr__audit_chain_link(prev, row, want)) {
        FAIL(res, TSR__AR_CHAIN, where, "link cannot be recomputed (out of memory)");
      } else if (!link || strcmp(link, want)) {
        if (bad++ < 50)
          FAIL(res, TSR__AR_CHAIN, where, "link %.64s, recomputed %s from the previous link and "
               "this row: the row (or its link) was edited", link ? link : "(missing)", want);
        else
          res->total++, res->counts[TSR__AR_CHAIN]++;
      } else {
        res->chain_links++;
      }
      prev = link;
    }
    json_int_t n = -1;
    const char *head = tsr__audit_str(ch, "head");
    if (!tsr__audit_int(ch, "rows", &n) || n != (json_int_t)json_array_size(rows))
      FAIL(res, TSR__AR_CHAIN, "chain.rows", "%lld, results.json has %zu rows (a row dropped or "
           "added after it was chained)", (long long)n, json_array_size(rows));
    if (!head || !prev || strcmp(head, prev))
      FAIL(res, TSR__AR_CHAIN, "chain.head", "%.64s is not the last row's link %.64s",
           head ? head : "(missing)", prev ? prev : "(missing)");
  }

  const char *dg = tsr__audit_str(doc, "digest");
  int complete = json_is_true(json_object_get(doc, "complete"));
  char want[65];
  if (tsr__audit_chain_digest(doc, want)) {
    FAIL(res, TSR__AR_DIGEST, "digest", "cannot be recomputed (out of memory)");
    return;
  }
  if (dg || complete) memcpy(res->digest, want, sizeof want);
  if (!dg) {
    if (complete) FAIL(res, TSR__AR_DIGEST, "digest", "missing: a finished tessera-bench/3 run records its digest");
  } else if (strcmp(dg, want)) {
    FAIL(res, TSR__AR_DIGEST, "digest", "%.64s, recomputed %s over results.json: the document "
         "was edited after it was finished", dg, want);
  }
  if (given) {
    if (!dg && !complete)
      FAIL(res, TSR__AR_DIGEST, "--digest", "the run did not finish: it has no digest to match %.16s…", given);
    else if (strcmp(given, want))
      FAIL(res, TSR__AR_DIGEST, "--digest", "the run's document hashes to %s, not to the digest "
           "given (%s): this is not the run that digest was quoted for", want, given);
    else
      res->digest_verified = 1;
  }
}
