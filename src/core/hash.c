#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "core/hash.h"

static void to_hex(const unsigned char *md, unsigned n, char out[65]) {
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < n && i < 32; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[64] = '\0';
}

int tsr__sha256_hex(const void *data, size_t len, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL)) return -1;
  to_hex(md, n, out);
  return 0;
}

int tsr__sha256_parts(const void *const *data, const size_t *len, int n, unsigned char out[32]) {
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned got = 0;
  int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
  for (int i = 0; ok && i < n; i++) ok = EVP_DigestUpdate(c, data[i], len[i]);
  ok = ok && EVP_DigestFinal_ex(c, md, &got) && got == 32;
  EVP_MD_CTX_free(c);
  if (!ok) return -1;
  memcpy(out, md, 32);
  return 0;
}

int tsr__sha256_hex_parts(const void *const *data, const size_t *len, int n, char out[65]) {
  unsigned char md[32];
  if (tsr__sha256_parts(data, len, n, md)) return -1;
  to_hex(md, 32, out);
  return 0;
}

int tsr__sha256_file(const char *path, char out[65]) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  unsigned char buf[1 << 16], md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL);
  size_t got;
  while (ok && (got = fread(buf, 1, sizeof buf, f)) > 0) ok = EVP_DigestUpdate(c, buf, got);
  ok = ok && !ferror(f) && EVP_DigestFinal_ex(c, md, &n);
  EVP_MD_CTX_free(c);
  fclose(f);
  if (!ok) return -1;
  to_hex(md, n, out);
  return 0;
}
