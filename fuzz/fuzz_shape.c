/* libFuzzer harness: tsr_shape_parse. Accepted text must give extents in
 * 1..INT32_MAX whose canonical "MxNxK" re-parses to the same extents;
 * rejected text must leave the outputs alone and explain itself. Message
 * buffers of every small capacity (and NULL) must stay within bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';

  int64_t m = -7, n = -7, k = -7;
  char msg[256];
  tsr_status st = tsr_shape_parse(text, &m, &n, &k, msg, sizeof msg);
  if (st == TSR_OK) {
    if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) abort();
    char canon[80];
    snprintf(canon, sizeof canon, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    int64_t m2, n2, k2;
    if (tsr_shape_parse(canon, &m2, &n2, &k2, msg, sizeof msg) != TSR_OK) abort();
    if (m2 != m || n2 != n || k2 != k) abort();
  } else {
    if (st != TSR_ERR_PARSE && st != TSR_ERR_OVERFLOW) abort();
    if (m != -7 || n != -7 || k != -7) abort(); /* nothing overwritten */
    if (memchr(msg, '\0', sizeof msg) == NULL || msg[0] == '\0') abort();
  }
  /* Truncating message buffers: ASan catches any write past cap. */
  size_t cap = size ? data[0] % 8 : 0;
  char *small = cap ? malloc(cap) : NULL;
  if (tsr_shape_parse(text, &m, &n, &k, small, cap) != st) abort();
  if (st != TSR_OK && small && !memchr(small, '\0', cap)) abort(); /* terminated */
  free(small);
  free(text);
  return 0;
}
