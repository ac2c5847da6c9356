/* libFuzzer harness: tsr_plan_parse and tsr_plan_format. Accepted text must
 * format to a canonical string that re-parses (over different defaults) to
 * an equal plan and formats to the same string again; rejected text must
 * leave the plan untouched and explain itself. abort() on any violation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

/* Two unrelated starting points, so that a key the canonical text failed to
 * carry shows up as a difference. */
static const tsr_plan defaults_a = {
    .bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .tm = 8, .tn = 4, .stages = 2, .vec = 4,
    .a = TSR_IN_STAGED, .b = TSR_IN_STAGED, .pad = 4, .walk = {TSR_WALK_LINEAR, 1, 1},
    .splitk = 1, .threads = 0, .isa = TSR_ISA_AUTO, .mma = TSR_MMA_FFMA};
static const tsr_plan defaults_b = {
    .bm = 7, .bn = 9, .bk = 11, .wm = 13, .wn = 17, .tm = 19, .tn = 23, .stages = 29, .vec = 31,
    .a = TSR_IN_VIEW, .b = TSR_IN_VIEW, .pad = 37, .walk = {TSR_WALK_RECT, 41, 43},
    .splitk = 47, .threads = 53, .isa = TSR_ISA_AVX512, .mma = TSR_MMA_TF32X3};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';

  tsr_plan p = defaults_a;
  char msg[256];
  tsr_status st = tsr_plan_parse(text, &p, msg, sizeof msg);
  if (st == TSR_OK) {
    char buf[1024], buf2[1024];
    int len = tsr_plan_format(&p, buf, sizeof buf);
    if (len < 0 || (size_t)len >= sizeof buf || strlen(buf) != (size_t)len) abort();
    tsr_plan q = defaults_b;
    if (tsr_plan_parse(buf, &q, msg, sizeof msg) != TSR_OK) {
      fprintf(stderr, "canonical text rejected: '%s': %s\n", buf, msg);
      abort();
    }
    if (!tsr_plan_equal(&p, &q) || !tsr_plan_equal(&q, &p)) {
      fprintf(stderr, "round trip differs: '%s'\n", buf);
      abort();
    }
    if (tsr_plan_format(&q, buf2, sizeof buf2) != len || strcmp(buf, buf2) != 0) {
      fprintf(stderr, "format not canonical: '%s' vs '%s'\n", buf, buf2);
      abort();
    }
    /* A short buffer: snprintf semantics, same length, no overrun. */
    size_t cap = (size_t)data[0] % 64;
    char *small = cap ? malloc(cap) : NULL;
    if (tsr_plan_format(&p, small, cap) != len) abort();
    if (small && strncmp(small, buf, cap - 1) != 0) abort();
    free(small);
  } else {
    if (st != TSR_ERR_PARSE) abort();
    if (memcmp(&p, &defaults_a, sizeof p) != 0) abort(); /* nothing overwritten */
    if (!memchr(msg, '\0', sizeof msg) || msg[0] == '\0') abort();
  }
  free(text);
  return 0;
}
