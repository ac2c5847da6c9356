/* Compiling ahead (docs/tune.md "Compiling ahead"): while the search
 * measures one candidate, background threads compile the kernels of the
 * next ones it will measure, in its order, into the backend's on-disk
 * module cache (tsr__exec_precompile); their prepare then loads the image
 * instead of compiling. On the H200 most of a candidate's time was the
 * NVRTC compile (0.15-3.2 s against 0.05-0.2 s of measurement) while 15
 * host cores sat idle.
 *
 * Threads: the tuner's context stays with the search's thread (tessera.h's
 * threading contract); each compile thread has a context of its own that
 * opens nothing, and gets a copy of the problem and of the plan. What they
 * share is this file's queue and states, under one mutex, and the module
 * cache on disk (atomic writes: two threads storing the same image write
 * the same bytes). NVRTC's loader is locked (sys/dl.c), the emitter keeps
 * no mutable state, and NVRTC's calls on distinct programs may run
 * concurrently (its header names only nvrtcGetTypeName as unsafe). A
 * failed compile here is not an error: the search compiles that candidate
 * itself and records what happens as before. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exec.h"
#include "sys/clock.h"
#include "tune/tune.h"

static double now_s(void) { return (double)tsr__now_ns() * 1e-9; }

size_t tsr__tune_lookahead(const tsr__tune_cand *c, const unsigned char *mine, size_t n,
                           size_t pos, size_t window, long left, size_t *out) {
  if (left >= 0 && (size_t)left < window) window = (size_t)left;
  size_t k = 0;
  for (size_t j = pos + 1; j < n && k < window; j++)
    if (c[j].status == TSR__CAND_UNMEASURED && (!mine || mine[j])) out[k++] = j;
  return k;
}

/* A candidate's compile, as the queue sees it. */
enum { PF_NONE = 0, PF_QUEUED, PF_RUNNING, PF_COMPILED, PF_CACHED, PF_FAILED, PF_TAKEN };

typedef struct {
  size_t idx;
  tsr_plan plan;
} pf_job;

struct tsr__tune_prefetch {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a job was queued, the deadline moved, or stop */
  pthread_cond_t done; /* a compile finished */
  pthread_t *threads;
  int nthreads;
  /* read-only once the threads run */
  tsr_backend_kind b;
  tsr_problem p;
  int cc_major, cc_minor;
  const tsr__tune_cand *cands; /* the search's thread reads their status */
  size_t n;
  /* under mu */
  unsigned char *state; /* PF_* per candidate */
  pf_job *queue;        /* each candidate is queued at most once: room for n */
  size_t head, tail;
  int stop;
  double deadline; /* no compile starts at or after it; 0: none */
  tsr__tune_prefetch_stats st;
  /* the search's thread only */
  unsigned char *used; /* measured */
  size_t *win;         /* look-ahead scratch (window entries) */
};

static void *worker(void *arg) {
  tsr__tune_prefetch *pf = arg;
  tsr_context *ctx = NULL; /* its own, for messages only; NULL (no memory) drops them */
  tsr_context_create(&ctx);
  pthread_mutex_lock(&pf->mu);
  for (;;) {
    while (!pf->stop && (pf->head == pf->tail || (pf->deadline > 0 && now_s() >= pf->deadline)))
      pthread_cond_wait(&pf->work, &pf->mu);
    if (pf->stop) break;
    pf_job job = pf->queue[pf->head++];
    if (pf->state[job.idx] != PF_QUEUED) continue; /* taken back by the search */
    pf->state[job.idx] = PF_RUNNING;
    pthread_mutex_unlock(&pf->mu);
    int cached = 0;
    tsr_status st = tsr__exec_precompile(ctx, pf->b, &pf->p, &job.plan, pf->cc_major,
                                         pf->cc_minor, &cached);
    pthread_mutex_lock(&pf->mu);
    pf->state[job.idx] = st ? PF_FAILED : cached ? PF_CACHED : PF_COMPILED;
    if (st) pf->st.failed++;
    else if (cached) pf->st.found_on_disk++;
    else pf->st.compiled++;
    pthread_cond_broadcast(&pf->done);
  }
  pthread_mutex_unlock(&pf->mu);
  tsr_context_destroy(ctx);
  return NULL;
}

static void pf_free(tsr__tune_prefetch *pf) {
  pthread_cond_destroy(&pf->work);
  pthread_cond_destroy(&pf->done);
  pthread_mutex_destroy(&pf->mu);
  free(pf->threads);
  free(pf->state);
  free(pf->queue);
  free(pf->used);
  free(pf->win);
  free(pf);
}

tsr__tune_prefetch *tsr__tune_prefetch_start(tsr_backend_kind b, const tsr_problem *p,
                                             const tsr__tune_cand *cands, size_t n, int threads,
                                             int cc_major, int cc_minor,
                                             tsr__tune_prefetch_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (threads < 1) {
    snprintf(stats->off, sizeof stats->off, "--compile-threads 0");
    return NULL;
  }
  if (!tsr__exec_can_precompile(b)) {
    snprintf(stats->off, sizeof stats->off, "backend %s compiles nothing ahead",
             tsr_backend_name(b));
    return NULL;
  }
  tsr__tune_prefetch *pf = calloc(1, sizeof *pf);
  if (!pf) {
    snprintf(stats->off, sizeof stats->off, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&pf->mu, NULL);
  pthread_cond_init(&pf->work, NULL);
  pthread_cond_init(&pf->done, NULL);
  pf->b = b;
  pf->p = *p;
  pf->cc_major = cc_major;
  pf->cc_minor = cc_minor;
  pf->cands = cands;
  pf->n = n;
  pf->st.window = 2 * threads;
  pf->threads = calloc((size_t)threads, sizeof *pf->threads);
  pf->state = calloc(n + 1, 1);
  pf->used = calloc(n + 1, 1);
  pf->queue = calloc(n + 1, sizeof *pf->queue);
  pf->win = calloc((size_t)pf->st.window, sizeof *pf->win);
  if (!pf->threads || !pf->state || !pf->used || !pf->queue || !pf->win) {
    pf_free(pf);
    snprintf(stats->off, sizeof stats->off, "out of memory");
    return NULL;
  }
  for (int t = 0; t < threads; t++) {
    if (pthread_create(&pf->threads[t], NULL, worker, pf)) break;
    pf->nthreads++;
  }
  if (!pf->nthreads) {
    pf_free(pf);
    snprintf(stats->off, sizeof stats->off, "no compile thread could start");
    return NULL;
  }
  pf->st.threads = pf->nthreads;
  *stats = pf->st;
  return pf;
}

double tsr__tune_prefetch_next(tsr__tune_prefetch *pf, const unsigned char *mine, size_t pos,
                               long left) {
  if (!pf || pos >= pf->n) return 0.0;
  /* the statuses are the search's own (this thread's): read outside the lock */
  size_t k = tsr__tune_lookahead(pf->cands, mine, pf->n, pos, (size_t)pf->st.window, left, pf->win);
  double waited = 0.0;
  pthread_mutex_lock(&pf->mu);
  /* the window first, so that idle threads start while pos is settled */
  for (size_t q = 0; q < k; q++) {
    size_t j = pf->win[q];
    if (pf->state[j] != PF_NONE) continue;
    pf->state[j] = PF_QUEUED;
    pf->queue[pf->tail++] = (pf_job){j, pf->cands[j].plan};
    pf->st.dispatched++;
    pthread_cond_signal(&pf->work);
  }
  int s = pf->state[pos], after_wait = 0;
  if (s == PF_QUEUED) { /* no thread has started it: the search's prepare compiles it */
    pf->state[pos] = PF_TAKEN;
    pf->st.taken_by_search++;
    s = PF_TAKEN;
  } else if (s == PF_RUNNING) { /* half done: waiting beats compiling it twice */
    double t0 = now_s();
    while (pf->state[pos] == PF_RUNNING) pthread_cond_wait(&pf->done, &pf->mu);
    waited = now_s() - t0;
    pf->st.seconds_waited += waited;
    s = pf->state[pos];
    after_wait = 1;
  }
  if (s == PF_COMPILED || s == PF_CACHED) {
    if (after_wait) pf->st.measured_after_wait++;
    else pf->st.measured_ready++;
  } else {
    pf->st.measured_not_precompiled++;
  }
  pf->used[pos] = 1;
  pthread_mutex_unlock(&pf->mu);
  return waited;
}

void tsr__tune_prefetch_deadline(tsr__tune_prefetch *pf, double t) {
  if (!pf) return;
  pthread_mutex_lock(&pf->mu);
  pf->deadline = t;
  pthread_cond_broadcast(&pf->work);
  pthread_mutex_unlock(&pf->mu);
}

void tsr__tune_prefetch_stop(tsr__tune_prefetch *pf, tsr__tune_prefetch_stats *stats) {
  if (!pf) return;
  double t0 = now_s();
  pthread_mutex_lock(&pf->mu);
  pf->stop = 1;
  pthread_cond_broadcast(&pf->work);
  pthread_mutex_unlock(&pf->mu);
  for (int t = 0; t < pf->nthreads; t++) pthread_join(pf->threads[t], NULL);
  pf->st.seconds_join = now_s() - t0;
  for (size_t i = 0; i < pf->n; i++) {
    if (pf->state[i] == PF_QUEUED) pf->st.not_started++;
    if ((pf->state[i] == PF_COMPILED || pf->state[i] == PF_CACHED) && !pf->used[i])
      pf->st.unused++;
  }
  if (stats) *stats = pf->st;
  pf_free(pf);
}
