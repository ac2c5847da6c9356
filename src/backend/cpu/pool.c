/* Persistent worker pool of the CPU backend, one per context (freed by the
 * backend's context_release). A run is published as a new generation
 * number. Between runs workers poll for up to TSR__POOL_SPIN_NS, then sleep
 * on a condition variable; the caller polls for the workers' end the same
 * way. Waking a sleeping thread costs ~40 µs on this 2-vCPU guest, longer
 * than a whole 128x128x61 product (docs/perf.md, CPU step 12).
 *
 * Fork: a child has only the thread that called fork, so an inherited pool
 * has no workers, and its mutexes and condition variables may be held or
 * waited on by threads that do not exist there (a run would wait forever
 * for them). The atfork child handler only bumps a generation; the entry
 * points (lock, run, destroy) revive a pool of an older generation before
 * touching its locks: fresh locks, no workers (re-created on demand). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "backend/cpu/cpu_kernels.h"
#include "sys/assert.h"
#include "sys/clock.h"

#define TSR__POOL_MAX 256

typedef struct {
  float *buf;
  size_t cap;
} scratch;

struct tsr__cpu_pool {
  pthread_mutex_t call_lock; /* held by a caller across its runs (tsr__cpu_pool_lock) */
  pthread_mutex_t run_lock; /* serializes runs */
  pthread_mutex_t lock;     /* guards everything below */
  pthread_cond_t wake, done;
  pthread_t tid[TSR__POOL_MAX];
  int nworkers;    /* started workers; worker w runs tid w+1 */
  uint64_t gen;    /* bumped for every run */
  int job_threads; /* participants of the current run, caller included */
  int pending;     /* workers of the current run still busy */
  int shutdown;
  void (*fn)(void *, int);
  void *arg;
  scratch scr[TSR__POOL_MAX];
  scratch shared;
  unsigned fork_gen; /* fork generation the locks and workers belong to (atomic) */
};

/* Bumped in every child; pools compare their fork_gen to it. */
static unsigned fork_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Serializes revivals (several threads of a child may use one pool). */
static pthread_mutex_t revive_lock = PTHREAD_MUTEX_INITIALIZER;

static void after_fork_child(void) {
  /* A thread of the parent may have been reviving (a second fork): the
   * child's copy of the lock could be held by a thread that is gone. */
  pthread_mutex_init(&revive_lock, NULL);
  __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELEASE);
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

/* Makes a pool inherited through fork usable in this process. A call in
 * flight at the fork (on a thread that is gone) holds call_lock and may
 * have left scratch buffers mid-resize: those are dropped (leaked), not
 * trusted. The calling thread holds none of the pool's locks: lock and
 * destroy are entered outside a call, and run within one only after lock
 * has revived the pool. */
static void revive(tsr__cpu_pool *pool) {
  unsigned gen = __atomic_load_n(&fork_generation, __ATOMIC_ACQUIRE);
  if (__atomic_load_n(&pool->fork_gen, __ATOMIC_ACQUIRE) == gen) return;
  pthread_mutex_lock(&revive_lock);
  if (__atomic_load_n(&pool->fork_gen, __ATOMIC_RELAXED) != gen) {
    int in_call = pthread_mutex_trylock(&pool->call_lock) != 0;
    if (!in_call) pthread_mutex_unlock(&pool->call_lock);
    pthread_mutex_init(&pool->call_lock, NULL);
    pthread_mutex_init(&pool->run_lock, NULL);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->nworkers = 0; /* the parent's threads; tid[] entries are stale */
    pool->job_threads = pool->pending = pool->shutdown = 0;
    pool->fn = NULL;
    pool->arg = NULL;
    if (in_call) {
      memset(pool->scr, 0, sizeof pool->scr);
      memset(&pool->shared, 0, sizeof pool->shared);
    }
    __atomic_store_n(&pool->fork_gen, gen, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&revive_lock);
}

/* Polling window before sleeping: covers the gap between back-to-back
 * calls and between the two phases of one call, and is short enough that
 * an idle pool stops using the CPU at once on a human scale. */
#define TSR__POOL_SPIN_NS 50000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}


/* Polls *v (atomically) until it differs from `from` or the window passes;
 * returns 1 when it changed. */
static int spin_while_u64(const uint64_t *v, uint64_t from) {
  int64_t end = tsr__now_ns() + TSR__POOL_SPIN_NS;
  for (;;) {
    for (int i = 0; i < 32; i++) {
      if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != from) return 1;
      cpu_relax();
    }
    if (tsr__now_ns() >= end) return 0;
  }
}

static void spin_while_positive(const int *v) {
  int64_t end = tsr__now_ns() + TSR__POOL_SPIN_NS;
  for (;;) {
    for (int i = 0; i < 32; i++) {
      if (__atomic_load_n(v, __ATOMIC_ACQUIRE) <= 0) return;
      cpu_relax();
    }
    if (tsr__now_ns() >= end) return;
  }
}

typedef struct {
  tsr__cpu_pool *pool;
  int index;
  uint64_t gen; /* generation at creation: the worker joins runs after it */
} worker_arg;

static void *worker_main(void *p) {
  worker_arg wa = *(worker_arg *)p;
  free(p);
  tsr__cpu_pool *pool = wa.pool;
  pthread_mutex_lock(&pool->lock);
  uint64_t seen = wa.gen;
  for (;;) {
    if (!pool->shutdown && pool->gen == seen) {
      pthread_mutex_unlock(&pool->lock);
      spin_while_u64(&pool->gen, seen);
      pthread_mutex_lock(&pool->lock);
    }
    while (!pool->shutdown && pool->gen == seen) pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->shutdown) break;
    seen = pool->gen;
    int tid = wa.index + 1;
    if (tid < pool->job_threads) {
      void (*fn)(void *, int) = pool->fn;
      void *arg = pool->arg;
      pthread_mutex_unlock(&pool->lock);
      fn(arg, tid);
      pthread_mutex_lock(&pool->lock);
      if (__atomic_sub_fetch(&pool->pending, 1, __ATOMIC_RELEASE) == 0)
        pthread_cond_signal(&pool->done);
    }
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

tsr__cpu_pool *tsr__cpu_pool_create(void) {
  pthread_once(&atfork_once, register_atfork);
  tsr__cpu_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->fork_gen = __atomic_load_n(&fork_generation, __ATOMIC_ACQUIRE);
  pthread_mutex_init(&pool->call_lock, NULL);
  pthread_mutex_init(&pool->run_lock, NULL);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  return pool;
}

void tsr__cpu_pool_destroy(tsr__cpu_pool *pool) {
  if (!pool) return;
  revive(pool);
  pthread_mutex_lock(&pool->lock);
  pool->shutdown = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->nworkers; i++) pthread_join(pool->tid[i], NULL);
  for (int i = 0; i < TSR__POOL_MAX; i++) free(pool->scr[i].buf);
  free(pool->shared.buf);
  pthread_mutex_destroy(&pool->call_lock);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->done);
  pthread_mutex_destroy(&pool->lock);
  pthread_mutex_destroy(&pool->run_lock);
  free(pool);
}

/* Called with run_lock held. */
static int grow(tsr__cpu_pool *pool, int want) {
  while (pool->nworkers < want) {
    worker_arg *wa = malloc(sizeof *wa);
    if (!wa) return -1;
    wa->pool = pool;
    wa->index = pool->nworkers;
    wa->gen = pool->gen; /* stable: only a run_lock holder bumps it */
    if (pthread_create(&pool->tid[pool->nworkers], NULL, worker_main, wa) != 0) {
      free(wa);
      return -1;
    }
    pthread_mutex_lock(&pool->lock);
    pool->nworkers++;
    pthread_mutex_unlock(&pool->lock);
  }
  return 0;
}

int tsr__cpu_pool_run(tsr__cpu_pool *pool, int nthreads, void (*fn)(void *arg, int tid),
                      void *arg) {
  revive(pool); /* a no-op inside a call: lock revived it */
  if (nthreads < 1) nthreads = 1;
  if (nthreads > TSR__POOL_MAX) nthreads = TSR__POOL_MAX;
  if (nthreads == 1) { /* no hand-off: the caller computes alone */
    pthread_mutex_lock(&pool->run_lock);
    fn(arg, 0);
    pthread_mutex_unlock(&pool->run_lock);
    return 0;
  }
  pthread_mutex_lock(&pool->run_lock);
  if (grow(pool, nthreads - 1) != 0) {
    /* The system refused a thread (EAGAIN under load or limits): run with
     * the workers that exist. Work is handed out through atomic counters,
     * so any thread count computes the same result. */
    pthread_mutex_lock(&pool->lock);
    int have = pool->nworkers + 1;
    pthread_mutex_unlock(&pool->lock);
    if (have < nthreads) nthreads = have;
    if (nthreads == 1) {
      fn(arg, 0);
      pthread_mutex_unlock(&pool->run_lock);
      return 0;
    }
  }
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->job_threads = nthreads;
  pool->pending = nthreads - 1;
  __atomic_add_fetch(&pool->gen, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  fn(arg, 0);
  spin_while_positive(&pool->pending);
  pthread_mutex_lock(&pool->lock);
  while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
  pthread_mutex_unlock(&pool->run_lock);
  return 0;
}

void tsr__cpu_pool_lock(tsr__cpu_pool *pool) {
  revive(pool);
  pthread_mutex_lock(&pool->call_lock);
}
void tsr__cpu_pool_unlock(tsr__cpu_pool *pool) { pthread_mutex_unlock(&pool->call_lock); }

/* Buffers of 2 MiB or more (prepacked operands: 64 MiB of op(B) at
 * 512x4096x4096) are 2 MiB-aligned and asked for transparent huge pages,
 * so the tiles' walks over them do not miss the TLB every 4 KiB. */
#define TSR__HUGE (2u << 20)
static float *grow_scratch(scratch *s, size_t bytes) {
  if (s->cap >= bytes) return s->buf;
  free(s->buf);
  size_t align = bytes >= TSR__HUGE ? TSR__HUGE : 64;
  size_t cap = (bytes + align - 1) & ~(align - 1);
  s->buf = aligned_alloc(align, cap);
  s->cap = s->buf ? cap : 0;
#ifdef MADV_HUGEPAGE
  if (s->buf && align == TSR__HUGE) (void)madvise(s->buf, cap, MADV_HUGEPAGE); /* a hint */
#endif
  return s->buf;
}

float *tsr__cpu_pool_scratch(tsr__cpu_pool *pool, int tid, size_t bytes) {
  TSR_ASSERT(tid >= 0 && tid < TSR__POOL_MAX); /* runs are clamped to TSR__POOL_MAX threads */
  return grow_scratch(&pool->scr[tid], bytes);
}

float *tsr__cpu_pool_shared(tsr__cpu_pool *pool, size_t bytes) {
  return grow_scratch(&pool->shared, bytes);
}
