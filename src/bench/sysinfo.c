/* Facts about the machine and the process, recorded with every run. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

void tsr__utc_now(char *buf, size_t cap) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Value after "key<spaces>:" on the first matching line of a text file. */
static int file_field(const char *path, const char *key, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[1024];
  int found = -1;
  size_t kl = strlen(key);
  while (found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl)) continue;
    char *colon = strchr(line + kl, ':');
    if (!colon) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = '\0';
    snprintf(out, cap, "%s", v);
    found = 0;
  }
  fclose(f);
  return found;
}

json_t *tsr__host_json(void) {
  json_t *o = json_object();
  char buf[1024];
  if (gethostname(buf, sizeof buf) == 0) {
    buf[sizeof buf - 1] = '\0';
    json_object_set_new(o, "hostname", json_string(buf));
  }
  if (file_field("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
    json_object_set_new(o, "cpu_model", json_string(buf));
  json_object_set_new(o, "ncpu_online", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
  struct utsname u;
  if (uname(&u) == 0) {
    snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
    json_object_set_new(o, "kernel", json_string(buf));
  }
  return o;
}

json_t *tsr__device_json(void) {
  json_t *o = json_object();
  char buf[1024];
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (f) {
    if (fgets(buf, sizeof buf, f)) {
      buf[strcspn(buf, "\n")] = '\0';
      json_object_set_new(o, "nvidia_driver", json_string(buf));
    }
    fclose(f);
  } else {
    json_object_set_new(o, "nvidia_driver", json_null());
  }
  json_t *gpus = json_array();
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (e->d_name[0] != '.') {
        char path[1200], model[256] = "";
        snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
        json_t *g = json_object();
        json_object_set_new(g, "bus", json_string(e->d_name));
        if (file_field(path, "Model", model, sizeof model) == 0)
          json_object_set_new(g, "model", json_string(model));
        json_array_append_new(gpus, g);
      }
    closedir(d);
  }
  json_object_set_new(o, "gpus", gpus);
  return o;
}

json_t *tsr__mapped_libraries(void) {
  static const char *const wanted[] = {"libtessera", "libcuda.", "libnvrtc", "libcublas",
                                       "libopenblas", "libtorch", "libc10"};
  json_t *arr = json_array();
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return arr;
  char line[4600];
  while (fgets(line, sizeof line, f)) {
    char *path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = '\0';
    const char *base = strrchr(path, '/') + 1;
    int keep = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
      if (!strncmp(base, wanted[i], strlen(wanted[i]))) keep = 1;
    if (!keep) continue;
    int dup = 0;
    for (size_t i = 0; i < json_array_size(arr); i++)
      if (!strcmp(json_string_value(json_array_get(arr, i)), path)) dup = 1;
    if (!dup) json_array_append_new(arr, json_string(path));
  }
  fclose(f);
  return arr;
}
