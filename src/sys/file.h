/* The one way tessera reads a file that a user points it at (results
 * documents, oracle cache entries, ...): only a regular file, never more than
 * a stated number of bytes. A FIFO, socket, directory or device (a symlink
 * to /dev/zero) is refused before anything is read, so no such path can
 * block the process or grow its memory without bound. */
#ifndef TSR_SYS_FILE_H
#define TSR_SYS_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Opens path for reading: stat() first (a non-regular file is refused
 * without being opened, so opening a device has no side effect), then
 * open(O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY) and fstat() of what was
 * opened: a regular file of at most max_bytes. Returns 0 with *fd (back in
 * blocking mode; the caller closes it) and *size, else an errno value
 * (ENOENT, EACCES, ...; EINVAL: not a regular file; EFBIG: over max_bytes)
 * with one line in msg naming the path. */
int tsr__open_regular(const char *path, uint64_t max_bytes, int *fd, uint64_t *size, char *msg,
                      size_t cap);

/* The whole regular file, at most max_bytes, into a malloc'ed buffer with a
 * NUL after the last byte (*len excludes it). Returns 0, or an errno value as
 * tsr__open_regular (also EFBIG when the file grew past max_bytes while
 * being read, ENOMEM, EIO) with one line in msg; *buf is then NULL. */
int tsr__read_file_capped(const char *path, size_t max_bytes, char **buf, size_t *len, char *msg,
                          size_t cap);

/* A document that may be stored gzipped: path itself as
 * tsr__read_file_capped, or, where path does not exist, path.gz inflated
 * (gzip format; the compressed file and the inflated text each at most
 * max_bytes). Committed bench results keep results.json that way
 * (docs/results/README.md); readers see the same bytes either way. Returns
 * as tsr__read_file_capped (ENOENT when neither exists, naming path; EIO for
 * a damaged .gz). */
int tsr__read_doc_capped(const char *path, size_t max_bytes, char **buf, size_t *len, char *msg,
                         size_t cap);

/* Reads exactly n bytes from fd (retrying short reads and EINTR). Returns
 * 0, or -1 at an error or end of file before n bytes. */
int tsr__read_full(int fd, void *buf, size_t n);
/* The same at file offset off (pread: the file position is untouched, so
 * threads may read one descriptor at once). */
int tsr__pread_full(int fd, void *buf, size_t n, uint64_t off);

/* One part of a file written by tsr__write_atomic. */
typedef struct {
  const void *data;
  size_t len;
} tsr__span;

/* The one atomic writer: the n parts, in order, into a new file beside path
 * (path.tmp.<pid>.<count>, created exclusively with mode 0644 less the
 * umask), flushed to disk (fsync), then renamed over path, so a reader sees
 * the old file or the whole new one, never a part. Returns 0, or an errno
 * value with one line in msg naming the file; the temporary is removed and
 * path is untouched on failure. */
int tsr__write_atomic(const char *path, const tsr__span *parts, int n, char *msg, size_t cap);

/* mkdir -p path (mode 0755 less the umask). Returns 0 when path is a
 * directory afterwards, else an errno value (ENOTDIR: something else is
 * there). */
int tsr__mkdirs(const char *path);

/* The one cache-directory rule: ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/<sub>
 * (sub NULL or "": the tessera folder itself), an empty variable counting as
 * unset. Returns 0, or -1 when neither variable is set or buf is too small.
 * Creates nothing. */
int tsr__cache_dir(const char *sub, char *buf, size_t cap);

#endif
