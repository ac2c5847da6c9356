/* libFuzzer harness: tsr_walk_parse, tsr_walk_check, tsr_walk_map,
 * tsr_walk_normalize, tsr_walk_format.
 *
 * Input: byte 0 selects the grid. Even: a small H×W grid (bytes 1, 2 → 1..32
 * each; for a checked walk every ordinal must map into the grid, every cell
 * exactly once, and the normalized walk must visit in the same order). Odd:
 * a large grid (bytes 1..8 → two uint32, any value; for a checked walk the
 * first, last and a few input-chosen ordinals must map into the grid). The
 * rest is the walk text, which must round-trip through its canonical format.
 * abort() on any violation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

static void must_map_in_range(const tsr_walk *w, uint32_t h, uint32_t wd, uint32_t i) {
  uint32_t r = UINT32_MAX, c = UINT32_MAX;
  tsr_walk_map(w, h, wd, i, &r, &c);
  if (r >= h || c >= wd) {
    char t[64];
    tsr_walk_format(w, t, sizeof t);
    fprintf(stderr, "walk %s on %ux%u: ordinal %u -> (%u, %u) out of range\n", t, h, wd, i, r, c);
    abort();
  }
}

static uint32_t u32_at(const uint8_t *d) {
  return (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int large = size > 0 && (data[0] & 1);
  size_t head = large ? 9 : 3;
  if (size < head) return 0;
  uint32_t h, wd;
  if (large) {
    h = u32_at(data + 1);
    wd = u32_at(data + 5);
  } else {
    h = 1u + data[1] % 32u;
    wd = 1u + data[2] % 32u;
  }
  char *text = malloc(size - head + 1);
  if (!text) return 0;
  memcpy(text, data + head, size - head);
  text[size - head] = '\0';

  tsr_walk w = {TSR_WALK_LINEAR, 5, 5};
  char msg[256];
  tsr_status st = tsr_walk_parse(text, &w, msg, sizeof msg);
  if (st != TSR_OK) {
    if (st != TSR_ERR_PARSE || !memchr(msg, '\0', sizeof msg) || msg[0] == '\0') abort();
    if (w.kind != TSR_WALK_LINEAR || w.r != 5 || w.c != 5) abort(); /* untouched */
    free(text);
    return 0;
  }
  /* Canonical text round trip. */
  char canon[64];
  int len = tsr_walk_format(&w, canon, sizeof canon);
  if (len <= 0 || (size_t)len >= sizeof canon) abort();
  tsr_walk w2;
  if (tsr_walk_parse(canon, &w2, msg, sizeof msg) != TSR_OK) abort();
  if (w2.kind != w.kind || (w.kind != TSR_WALK_LINEAR && w2.r != w.r) ||
      (w.kind == TSR_WALK_RECT && w2.c != w.c))
    abort();

  if (tsr_walk_check(&w, h, wd, msg, sizeof msg) != TSR_OK) {
    if (msg[0] == '\0') abort();
    /* A grid within the launch index accepts every parsed walk whose
     * R*W fits. */
    uint64_t rw = (uint64_t)(w.r < h ? w.r : h) * wd;
    if ((uint64_t)h * wd <= UINT32_MAX && h && wd && (w.kind == TSR_WALK_LINEAR || rw <= UINT32_MAX))
      abort();
    free(text);
    return 0;
  }
  uint64_t n = (uint64_t)h * wd;
  tsr_walk norm = w;
  tsr_walk_normalize(&norm, h, wd);
  if (tsr_walk_check(&norm, h, wd, msg, sizeof msg) != TSR_OK) abort();
  if (!large) {
    /* Small grid: a bijection, and the normalized walk visits identically. */
    uint8_t seen[32 * 32] = {0};
    for (uint32_t i = 0; i < n; i++) {
      must_map_in_range(&w, h, wd, i);
      uint32_t r, c, r2, c2;
      tsr_walk_map(&w, h, wd, i, &r, &c);
      if (seen[r * wd + c]++) abort();
      tsr_walk_map(&norm, h, wd, i, &r2, &c2);
      if (r2 != r || c2 != c) abort();
    }
  } else {
    must_map_in_range(&w, h, wd, 0);
    must_map_in_range(&w, h, wd, (uint32_t)(n - 1));
    must_map_in_range(&norm, h, wd, (uint32_t)(n - 1));
    for (size_t j = head; j + 4 <= size && j < head + 32; j += 4) {
      uint32_t i = (uint32_t)(u32_at(data + j) % n);
      must_map_in_range(&w, h, wd, i);
      must_map_in_range(&norm, h, wd, i);
    }
  }
  free(text);
  return 0;
}
