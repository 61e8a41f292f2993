// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The compute thread pool; see pool.h. */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/pool.h"
#include "base/util.h"

#define TP_POOL_MAX 256
/*
 * How long a thread polls before it sleeps. The gaps between two matmuls
 * of one token are microseconds (a norm, a rope); an all-reduce or the
 * sampler takes longer, and there the core goes back to the other rank.
 */
#define SPIN_NS 50000

static struct {
	int nthreads;			/* wanted; the caller is thread 0 */
	int started;			/* workers running (nthreads - 1) */
	tp_part_fn *fn;
	void *arg;
	_Atomic uint32_t gen;		/* bumped per job: workers wait on it */
	_Atomic uint32_t pending;	/* workers not done with this job */
	_Atomic int sleepers;		/* workers in futex_wait on gen */
	pthread_t tid[TP_POOL_MAX];
} pool = { .nthreads = 1 };

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Until *ADDR differs from OLD: poll for SPIN_NS, then sleep. */
static uint32_t wait_change(_Atomic uint32_t *addr, uint32_t old,
			    _Atomic int *sleepers)
{
	uint64_t t0 = mono_ns();
	uint32_t v;
	int i;

	for (;;) {
		for (i = 0; i < 256; i++) {
			v = atomic_load_explicit(addr, memory_order_acquire);
			if (v != old)
				return v;
			cpu_relax();
		}
		if (mono_ns() - t0 > SPIN_NS)
			break;
	}
	for (;;) {
		if (sleepers)
			atomic_fetch_add(sleepers, 1);
		/* seq_cst against tp_pool_run's bump then sleepers check */
		v = atomic_load(addr);
		if (v == old)
			futex(addr, FUTEX_WAIT_PRIVATE, old);
		if (sleepers)
			atomic_fetch_sub(sleepers, 1);
		v = atomic_load_explicit(addr, memory_order_acquire);
		if (v != old)
			return v;
	}
}

static void *worker(void *p)
{
	int id = (int)(intptr_t)p;
	uint32_t seen = 0;

	for (;;) {
		seen = wait_change(&pool.gen, seen, &pool.sleepers);
		pool.fn(pool.arg, id, pool.nthreads);
		if (atomic_fetch_sub_explicit(&pool.pending, 1,
					      memory_order_acq_rel) == 1)
			futex(&pool.pending, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

void tp_pool_set_threads(int n)
{
	if (pool.started)
		tp_die("the compute pool is already running");
	pool.nthreads = n < 1 ? 1 : n > TP_POOL_MAX ? TP_POOL_MAX : n;
}

int tp_pool_threads(void)
{
	return pool.nthreads;
}

static void start(void)
{
	pthread_attr_t at;
	int i;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (i = 1; i < pool.nthreads; i++)
		if (pthread_create(&pool.tid[i], &at, worker,
				   (void *)(intptr_t)i))
			tp_die("cannot start compute thread %d", i);
	pthread_attr_destroy(&at);
	pool.started = pool.nthreads - 1;
}

void tp_pool_run(tp_part_fn *fn, void *arg)
{
	uint32_t left;

	if (pool.nthreads == 1) {
		fn(arg, 0, 1);
		return;
	}
	if (!pool.started)
		start();
	pool.fn = fn;
	pool.arg = arg;
	atomic_store_explicit(&pool.pending, (uint32_t)pool.started,
			      memory_order_relaxed);
	atomic_fetch_add(&pool.gen, 1);
	if (atomic_load(&pool.sleepers))
		futex(&pool.gen, FUTEX_WAKE_PRIVATE, INT_MAX);
	fn(arg, 0, pool.nthreads);
	/* the workers' last decrement wakes us if we went to sleep */
	while ((left = atomic_load_explicit(&pool.pending,
					    memory_order_acquire)))
		wait_change(&pool.pending, left, NULL);
}

static int env_int(const char *name)
{
	const char *s = getenv(name);

	return s ? atoi(s) : 0;
}

int tp_pool_default_threads(int local_ranks)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (local_ranks < 1)
		local_ranks = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
	if (local_ranks < 1)
		local_ranks = env_int("SLURM_NTASKS_PER_NODE");
	if (local_ranks < 1)
		local_ranks = 1;
	if (cpus < 1)
		cpus = 1;
	return cpus / local_ranks > 1 ? (int)(cpus / local_ranks) : 1;
}
