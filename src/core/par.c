#include <pthread.h>
#include <unistd.h>

#include "core/par.h"

typedef struct {
  void (*fn)(void *, int, int64_t, int64_t);
  void *arg;
  int chunk;
  int64_t r0, r1;
} par_job;

static void *par_run(void *p) {
  par_job *j = p;
  j->fn(j->arg, j->chunk, j->r0, j->r1);
  return NULL;
}

int tsr__parallel_rows(int64_t rows, double work, void (*fn)(void *, int, int64_t, int64_t),
                       void *arg) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int n = ncpu > 0 ? (int)(ncpu < TSR__PAR_MAX ? ncpu : TSR__PAR_MAX) : 1;
  if (work < 4e6) n = 1; /* thread start-up would dominate */
  if (n > rows) n = rows > 0 ? (int)rows : 1;
  par_job jobs[TSR__PAR_MAX];
  pthread_t th[TSR__PAR_MAX];
  int started[TSR__PAR_MAX] = {0};
  for (int c = 0; c < n; c++) jobs[c] = (par_job){fn, arg, c, rows * c / n, rows * (c + 1) / n};
  for (int c = 1; c < n; c++) started[c] = pthread_create(&th[c], NULL, par_run, &jobs[c]) == 0;
  par_run(&jobs[0]);
  for (int c = 1; c < n; c++) {
    if (started[c]) pthread_join(th[c], NULL);
    else par_run(&jobs[c]); /* no thread: do it here */
  }
  return n;
}
