/* sys/file.h: the one bounded reader of user files (regular files are read
 * whole and NUL-terminated; anything else, or more than the limit, is
 * refused at once with one line naming the path), the one atomic writer,
 * mkdir -p and the cache-directory rule. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "sys/file.h"

static char dir[256];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/tsr-sys-test-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void test_regular_files(void **state) {
  char path[300], msg[512], *buf = (char *)1;
  size_t len = 99;
  snprintf(path, sizeof path, "%s/a.json", dir);
  write_file(path, "{\"a\":\0 1}", 9);
  assert_int_equal(tsr__read_file_capped(path, 100, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 9);
  assert_memory_equal(buf, "{\"a\":\0 1}", 9);
  assert_int_equal(buf[9], '\0');
  free(buf);
  /* exactly at the limit is accepted, one byte over is not */
  assert_int_equal(tsr__read_file_capped(path, 9, &buf, &len, msg, sizeof msg), 0);
  free(buf);
  assert_int_equal(tsr__read_file_capped(path, 8, &buf, &len, msg, sizeof msg), EFBIG);
  assert_null(buf);
  assert_non_null(strstr(msg, path));
  assert_non_null(strstr(msg, "9 bytes, over the limit of 8 bytes"));
  /* empty */
  write_file(path, "", 0);
  assert_int_equal(tsr__read_file_capped(path, 8, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 0);
  assert_int_equal(buf[0], '\0');
  free(buf);
  /* larger than the first buffer guess would be after growth: 100000 bytes */
  char *big = malloc(100000);
  for (int i = 0; i < 100000; i++) big[i] = (char)('a' + i % 26);
  write_file(path, big, 100000);
  assert_int_equal(tsr__read_file_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 100000);
  assert_memory_equal(buf, big, 100000);
  free(buf);
  free(big);
  /* a symlink to a regular file is followed */
  char link[300];
  snprintf(link, sizeof link, "%s/link", dir);
  assert_int_equal(symlink(path, link), 0);
  assert_int_equal(tsr__read_file_capped(link, 1 << 20, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 100000);
  free(buf);
  /* the descriptor comes back in blocking mode */
  int fd;
  uint64_t size;
  assert_int_equal(tsr__open_regular(path, 1 << 20, &fd, &size, msg, sizeof msg), 0);
  assert_int_equal(size, 100000);
  assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  close(fd);
}

/* path.gz with the given members, each gzip-compressed on its own */
static void write_gz(const char *path, const char *const *parts, const size_t *lens, int n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (int i = 0; i < n; i++) {
    z_stream st;
    memset(&st, 0, sizeof st);
    assert_int_equal(deflateInit2(&st, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    uLong cap = deflateBound(&st, (uLong)lens[i]) + 64;
    unsigned char *out = malloc(cap);
    st.next_in = (Bytef *)(uintptr_t)parts[i];
    st.avail_in = (uInt)lens[i];
    st.next_out = out;
    st.avail_out = (uInt)cap;
    assert_int_equal(deflate(&st, Z_FINISH), Z_STREAM_END);
    assert_int_equal(fwrite(out, 1, st.total_out, f), st.total_out);
    deflateEnd(&st);
    free(out);
  }
  assert_int_equal(fclose(f), 0);
}

/* results.json stored as results.json.gz reads back as the same bytes; the
 * plain file wins where both exist; a damaged or oversized .gz is refused */
static void test_gzipped_docs(void **state) {
  char path[300], gz[310], msg[512], *buf = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/results.json", dir);
  snprintf(gz, sizeof gz, "%s.gz", path);
  char *big = malloc(300000);
  for (int i = 0; i < 300000; i++) big[i] = (char)(i % 7 == 0 ? '\n' : '0' + (i * 31) % 10);
  const char *parts[2] = {big, big + 200000};
  size_t lens[2] = {200000, 100000};
  /* neither file: ENOENT naming the document */
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), ENOENT);
  assert_null(buf);
  assert_non_null(strstr(msg, path));
  /* one member */
  write_gz(gz, parts, lens, 1);
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 200000);
  assert_memory_equal(buf, big, 200000);
  assert_int_equal(buf[len], '\0');
  free(buf);
  /* two members (gzip a; gzip b >> a) are the concatenation */
  write_gz(gz, parts, lens, 2);
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 300000);
  assert_memory_equal(buf, big, 300000);
  free(buf);
  /* inflating past the limit: EFBIG, not a truncated document */
  assert_int_equal(tsr__read_doc_capped(path, 299999, &buf, &len, msg, sizeof msg), EFBIG);
  assert_null(buf);
  assert_non_null(strstr(msg, "inflates past the limit"));
  assert_int_equal(tsr__read_doc_capped(path, 300000, &buf, &len, msg, sizeof msg), 0);
  free(buf);
  /* a truncated .gz: EIO naming it */
  struct stat sb;
  assert_int_equal(stat(gz, &sb), 0);
  assert_int_equal(truncate(gz, sb.st_size / 2), 0);
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), EIO);
  assert_null(buf);
  assert_non_null(strstr(msg, gz));
  /* not gzip at all */
  write_file(gz, "{\"a\": 1}", 8);
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), EIO);
  assert_null(buf);
  /* the plain file wins where both exist */
  write_file(path, "{}", 2);
  assert_int_equal(tsr__read_doc_capped(path, 1 << 20, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 2);
  assert_memory_equal(buf, "{}", 2);
  free(buf);
  free(big);
}

static void test_refusals(void **state) {
  char path[300], msg[512], *buf = NULL;
  size_t len;
  /* missing */
  snprintf(path, sizeof path, "%s/none", dir);
  assert_int_equal(tsr__read_file_capped(path, 100, &buf, &len, msg, sizeof msg), ENOENT);
  assert_non_null(strstr(msg, path));
  /* a directory */
  assert_int_equal(tsr__read_file_capped(dir, 100, &buf, &len, msg, sizeof msg), EINVAL);
  assert_non_null(strstr(msg, "not a regular file (a directory)"));
  /* a FIFO with no writer: refused at once, not waited on */
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0644), 0);
  assert_int_equal(tsr__read_file_capped(path, 100, &buf, &len, msg, sizeof msg), EINVAL);
  assert_non_null(strstr(msg, "not a regular file (a FIFO)"));
  /* a link to a device that never ends */
  snprintf(path, sizeof path, "%s/zero", dir);
  assert_int_equal(symlink("/dev/zero", path), 0);
  assert_int_equal(tsr__read_file_capped(path, 1 << 30, &buf, &len, msg, sizeof msg), EINVAL);
  assert_non_null(strstr(msg, "not a regular file (a character device)"));
  /* a sparse file far over the limit is refused from its size, unread */
  snprintf(path, sizeof path, "%s/sparse", dir);
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)1 << 32), 0);
  close(fd);
  assert_int_equal(tsr__read_file_capped(path, (size_t)1 << 30, &buf, &len, msg, sizeof msg), EFBIG);
  assert_non_null(strstr(msg, "4294967296 bytes, over the limit of 1073741824 bytes"));
  assert_null(buf);
  /* every refusal is one line */
  assert_null(strchr(msg, '\n'));
}

/* Files in dir whose name contains part. */
static int count_named(const char *part) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, part) != NULL;
  closedir(d);
  return n;
}

static void test_write_atomic(void **state) {
  char path[400], msg[512], *buf;
  size_t len;
  snprintf(path, sizeof path, "%s/out.json", dir);
  tsr__span parts[3] = {{"ab", 2}, {"", 0}, {"c\0d", 3}};
  assert_int_equal(tsr__write_atomic(path, parts, 3, msg, sizeof msg), 0);
  assert_int_equal(tsr__read_file_capped(path, 100, &buf, &len, msg, sizeof msg), 0);
  assert_int_equal(len, 5);
  assert_memory_equal(buf, "abc\0d", 5);
  free(buf);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_mode & 0022, 0); /* 0644 less the umask */
  /* replacing: the new content whole, no temporary left */
  tsr__span one = {"new", 3};
  assert_int_equal(tsr__write_atomic(path, &one, 1, msg, sizeof msg), 0);
  assert_int_equal(tsr__read_file_capped(path, 100, &buf, &len, msg, sizeof msg), 0);
  assert_string_equal(buf, "new");
  free(buf);
  assert_int_equal(count_named(".tmp."), 0);
  /* a path that cannot be created: an errno, a message naming it, nothing left */
  char bad[400];
  snprintf(bad, sizeof bad, "%s/no/such/dir/x", dir);
  assert_int_equal(tsr__write_atomic(bad, &one, 1, msg, sizeof msg), ENOENT);
  assert_non_null(strstr(msg, "no/such/dir/x"));
  /* a directory in the way: the rename fails, the directory is untouched */
  snprintf(bad, sizeof bad, "%s/adir", dir);
  assert_int_equal(mkdir(bad, 0755), 0);
  assert_int_not_equal(tsr__write_atomic(bad, &one, 1, msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "adir"));
  assert_int_equal(stat(bad, &sb), 0);
  assert_true(S_ISDIR(sb.st_mode));
  assert_int_equal(count_named(".tmp."), 0);
}

static void test_mkdirs_and_cache_dir(void **state) {
  char path[400], buf[600];
  snprintf(path, sizeof path, "%s/a/b/c", dir);
  assert_int_equal(tsr__mkdirs(path), 0);
  assert_int_equal(tsr__mkdirs(path), 0); /* existing: fine */
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_true(S_ISDIR(sb.st_mode));
  snprintf(path, sizeof path, "%s/file", dir);
  write_file(path, "x", 1);
  assert_int_equal(tsr__mkdirs(path), ENOTDIR);
  snprintf(path, sizeof path, "%s/file/sub", dir);
  assert_int_equal(tsr__mkdirs(path), ENOTDIR);
  assert_int_equal(tsr__mkdirs(""), ENOENT);

  char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/h", 1);
  assert_int_equal(tsr__cache_dir("oracle", buf, sizeof buf), 0);
  assert_string_equal(buf, "/x/cache/tessera/oracle");
  assert_int_equal(tsr__cache_dir(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "/x/cache/tessera");
  setenv("XDG_CACHE_HOME", "", 1); /* empty counts as unset */
  assert_int_equal(tsr__cache_dir("modules", buf, sizeof buf), 0);
  assert_string_equal(buf, "/h/.cache/tessera/modules");
  assert_int_equal(tsr__cache_dir("modules", buf, 10), -1); /* too small: no truncation */
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  assert_int_equal(tsr__cache_dir("", buf, sizeof buf), -1);
  if (old_xdg) setenv("XDG_CACHE_HOME", old_xdg, 1);
  if (old_home) setenv("HOME", old_home, 1);
  free(old_xdg);
  free(old_home);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_regular_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gzipped_docs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mkdirs_and_cache_dir, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
