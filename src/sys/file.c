/* Bounded reads of regular files, the atomic writer and the cache-directory
 * rule (sys/file.h). */
#include "sys/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "not a plain file";
}

/* 0 when sb is an acceptable regular file, else an errno value and msg. */
static int check_stat(const char *path, const struct stat *sb, uint64_t max_bytes, char *msg,
                      size_t cap) {
  if (!S_ISREG(sb->st_mode)) {
    snprintf(msg, cap, "%s: not a regular file (%s)", path, kind_of(sb->st_mode));
    return EINVAL;
  }
  if (sb->st_size < 0 || (uint64_t)sb->st_size > max_bytes) {
    snprintf(msg, cap, "%s: %" PRIu64 " bytes, over the limit of %" PRIu64 " bytes for this file",
             path, (uint64_t)sb->st_size, max_bytes);
    return EFBIG;
  }
  return 0;
}

int tsr__open_regular(const char *path, uint64_t max_bytes, int *fd, uint64_t *size, char *msg,
                      size_t cap) {
  *fd = -1;
  *size = 0;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    int e = errno;
    snprintf(msg, cap, "%s: %s", path, strerror(e));
    return e;
  }
  int e = check_stat(path, &sb, max_bytes, msg, cap);
  if (e) return e;
  /* O_NONBLOCK: should the path have become a FIFO since the stat, the
   * open still returns at once and the fstat below refuses it. */
  int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f < 0) {
    e = errno;
    snprintf(msg, cap, "%s: %s", path, strerror(e));
    return e;
  }
  if (fstat(f, &sb) != 0) {
    e = errno;
    snprintf(msg, cap, "%s: %s", path, strerror(e));
    close(f);
    return e;
  }
  if ((e = check_stat(path, &sb, max_bytes, msg, cap))) {
    close(f);
    return e;
  }
  int fl = fcntl(f, F_GETFL);
  if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    e = errno;
    snprintf(msg, cap, "%s: %s", path, strerror(e));
    close(f);
    return e;
  }
  *fd = f;
  *size = (uint64_t)sb.st_size;
  return 0;
}

int tsr__read_full(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

int tsr__pread_full(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n) {
    ssize_t r = pread(fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}

/* The end of a whole-file read: on error e the buffer is freed; else it is
 * NUL-ended after its n bytes and handed to the caller. */
static int hand_over(char *b, size_t n, int e, char **buf, size_t *len) {
  if (e) {
    free(b);
    return e;
  }
  b[n] = '\0';
  *buf = b;
  if (len) *len = n;
  return 0;
}

int tsr__read_file_capped(const char *path, size_t max_bytes, char **buf, size_t *len, char *msg,
                          size_t cap) {
  *buf = NULL;
  if (len) *len = 0;
  int fd;
  uint64_t size;
  int e = tsr__open_regular(path, max_bytes, &fd, &size, msg, cap);
  if (e) return e;
  /* The stat size is where to start; the file may still grow or shrink
   * while it is read, and may never pass max_bytes. have: data capacity. */
  size_t have = (size_t)size, n = 0;
  char *b = malloc(have + 1);
  if (!b) {
    snprintf(msg, cap, "%s: out of memory for %zu bytes", path, have + 1);
    close(fd);
    return ENOMEM;
  }
  for (;;) {
    if (n == have) {
      /* Full at the size the stat gave: usually the end of the file is
       * next; anything more must fit under the limit. */
      char probe;
      ssize_t r;
      do r = read(fd, &probe, 1);
      while (r < 0 && errno == EINTR);
      if (r == 0) break;
      if (r < 0 || n >= max_bytes) {
        e = r < 0 ? errno : EFBIG;
        if (r < 0) snprintf(msg, cap, "%s: %s", path, strerror(e));
        else snprintf(msg, cap, "%s: grew while it was read, over the limit of %zu bytes for this "
                      "file", path, max_bytes);
        break;
      }
      size_t grow = have < 4096 ? 4096 : have > max_bytes / 2 ? max_bytes : 2 * have;
      if (grow > max_bytes) grow = max_bytes;
      char *t = realloc(b, grow + 1);
      if (!t) {
        snprintf(msg, cap, "%s: out of memory for %zu bytes", path, grow + 1);
        e = ENOMEM;
        break;
      }
      b = t;
      have = grow;
      b[n++] = probe;
      continue;
    }
    ssize_t r = read(fd, b + n, have - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      e = errno;
      snprintf(msg, cap, "%s: %s", path, strerror(e));
      break;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  return hand_over(b, n, e, buf, len);
}

/* The gzip member(s) in z (zn bytes) inflated into a malloc'ed, NUL-ended
 * buffer of at most max_bytes. */
static int inflate_capped(const char *path, const unsigned char *z, size_t zn, size_t max_bytes,
                          char **buf, size_t *len, char *msg, size_t cap) {
  z_stream st;
  memset(&st, 0, sizeof st);
  if (inflateInit2(&st, 15 + 16) != Z_OK) { /* 15 + 16: a gzip header and trailer */
    snprintf(msg, cap, "%s: cannot start zlib", path);
    return ENOMEM;
  }
  size_t have = zn < 4096 ? 16384 : 8 * zn, n = 0;
  if (have > max_bytes) have = max_bytes;
  char *b = malloc(have + 1);
  int e = b ? 0 : ENOMEM, zr = Z_OK;
  st.next_in = (Bytef *)(uintptr_t)z;
  while (!e) {
    if (st.avail_in == 0 && st.next_in < z + zn) {
      size_t left = (size_t)(z + zn - st.next_in);
      st.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
    }
    if (n == have) {
      if (have >= max_bytes) {
        snprintf(msg, cap, "%s: inflates past the limit of %zu bytes for this file", path, max_bytes);
        e = EFBIG;
        break;
      }
      size_t grow = have > max_bytes / 2 ? max_bytes : 2 * have;
      char *t = realloc(b, grow + 1);
      if (!t) {
        e = ENOMEM;
        break;
      }
      b = t, have = grow;
    }
    st.next_out = (Bytef *)b + n;
    st.avail_out = (uInt)(have - n > (1u << 30) ? 1u << 30 : have - n);
    uInt before = st.avail_out;
    zr = inflate(&st, Z_NO_FLUSH);
    n += before - st.avail_out;
    if (zr == Z_STREAM_END) {
      /* a concatenated member (gzip a; gzip b >> a) continues the file */
      if (st.next_in < z + zn || st.avail_in) {
        if (inflateReset(&st) != Z_OK) e = EIO;
        continue;
      }
      break;
    }
    if (zr != Z_OK && !(zr == Z_BUF_ERROR && st.avail_out == 0)) {
      snprintf(msg, cap, "%s: not a whole gzip file (%s)", path, st.msg ? st.msg : "truncated");
      e = EIO;
      break;
    }
  }
  inflateEnd(&st);
  if (e == ENOMEM) snprintf(msg, cap, "%s: out of memory inflating it", path);
  return hand_over(b, n, e, buf, len);
}

int tsr__read_doc_capped(const char *path, size_t max_bytes, char **buf, size_t *len, char *msg,
                         size_t cap) {
  int e = tsr__read_file_capped(path, max_bytes, buf, len, msg, cap);
  if (e != ENOENT) return e;
  char gz[4200], m2[512];
  if (snprintf(gz, sizeof gz, "%s.gz", path) >= (int)sizeof gz) return e;
  char *z = NULL;
  size_t zn = 0;
  int ge = tsr__read_file_capped(gz, max_bytes, &z, &zn, m2, sizeof m2);
  if (ge == ENOENT) return e; /* neither: the first message stands */
  if (ge) {
    snprintf(msg, cap, "%s", m2);
    return ge;
  }
  ge = inflate_capped(gz, (const unsigned char *)z, zn, max_bytes, buf, len, msg, cap);
  free(z);
  return ge;
}

int tsr__write_atomic(const char *path, const tsr__span *parts, int n, char *msg, size_t cap) {
  static unsigned counter; /* distinct names for threads of one process */
  char tmp[4200];
  int fd = -1, e = 0;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    unsigned c = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), c) >= (int)sizeof tmp) {
      snprintf(msg, cap, "%s: path too long", path);
      return ENAMETOOLONG;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    e = errno;
    snprintf(msg, cap, "cannot create %s: %s", tmp, strerror(e));
    return e;
  }
  for (int i = 0; i < n && !e; i++) {
    const char *p = parts[i].data;
    size_t left = parts[i].len;
    while (left > 0) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        e = w < 0 ? errno : EIO;
        break;
      }
      p += w;
      left -= (size_t)w;
    }
  }
  if (!e && fsync(fd) != 0) e = errno;
  if (close(fd) != 0 && !e) e = errno;
  if (e) {
    snprintf(msg, cap, "cannot write %s: %s", tmp, strerror(e));
    unlink(tmp);
    return e;
  }
  if (rename(tmp, path) != 0) {
    e = errno;
    snprintf(msg, cap, "cannot rename %s to %s: %s", tmp, path, strerror(e));
    unlink(tmp);
    return e;
  }
  return 0;
}

int tsr__mkdirs(const char *path) {
  char tmp[4096];
  if (!*path) return ENOENT;
  if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return ENAMETOOLONG;
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return errno;
      *p = '/';
    }
  if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return errno;
  struct stat sb;
  if (stat(tmp, &sb) != 0) return errno;
  return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
}

int tsr__cache_dir(const char *sub, char *buf, size_t cap) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  const char *slash = sub && *sub ? "/" : "", *name = sub ? sub : "";
  int len;
  if (xdg && *xdg) len = snprintf(buf, cap, "%s/tessera%s%s", xdg, slash, name);
  else if (home && *home) len = snprintf(buf, cap, "%s/.cache/tessera%s%s", home, slash, name);
  else return -1;
  return len > 0 && (size_t)len < cap ? 0 : -1;
}
