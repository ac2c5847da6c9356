#ifndef TSR_CORE_HASH_H
#define TSR_CORE_HASH_H
#include <stddef.h>
/* Hex SHA-256 (OpenSSL libcrypto) of a buffer / a file; 0 on success. */
int tsr__sha256_hex(const void *data, size_t len, char out[65]);
/* ... of n buffers one after another (no concatenated copy); 0 on success */
int tsr__sha256_hex_parts(const void *const *data, const size_t *len, int n, char out[65]);
/* ... the same, as the 32 raw digest bytes */
int tsr__sha256_parts(const void *const *data, const size_t *len, int n, unsigned char out[32]);
int tsr__sha256_file(const char *path, char out[65]);
#endif
