/*
 * sched.h - pending work, in the order the scheduler tries it.
 *
 * Pending jobs are grouped into classes of identical requests (same workload,
 * same GPU count): every job of a class passes the same placement filters, so
 * the scheduler asks placement about the head of each class only, never about
 * every pending job.  Each class is a binary heap ordered by the scenario's
 * order (fifo, priority, edf, sjf), then arrival.  A scheduling pass picks, among
 * the class heads that can be placed now, the one that comes first; a
 * StrictFIFO queue offers only its first head, so a head that does not fit
 * blocks the queue, while BestEffortFIFO lets later classes through.  The
 * run keeps two of these: Kueue's admission queue and kube-scheduler's
 * (sim.h).
 *
 * Within a class, jobs start in order: a head that cannot start (for example
 * because it would not fit before its pool's window closes) holds back the
 * jobs behind it in the same class until it can.
 */
#ifndef GPUPLAN_SCHED_H
#define GPUPLAN_SCHED_H

#include "gpuplan/hash.h"
#include "gpuplan/scenario.h"

struct sched_entry {
	int64_t k1, k2; /* order keys */
	uint32_t job;   /* job index (reused once a job is retired, sim.h) */
	uint32_t seq;   /* arrival order, the last tie-breaker */
};

struct sched_class {
	int32_t workload;
	int32_t gpus;
	int32_t variant; /* placement variant (Kueue flavors' labels, placement.h) */
	int32_t queue;
	/* A binary heap of n entries from heap[0], which is base + off: while
	 * the entries came in order (sorted), the array is ascending, which is
	 * a heap too, and a pop is off++ (a FIFO class's jobs arrive in order) */
	struct sched_entry *heap;
	size_t n, cap, off;
	struct sched_entry *base; /* the array (cap entries) */
	bool sorted;
};

struct sched {
	enum sched_order order;
	struct sched_class *classes;
	size_t n_classes, cap_classes;
	struct hash_ids index; /* (workload, gpus, variant) -> class */
	size_t last;           /* the class of the last add, found without the index */
	size_t pending;        /* jobs in all classes */
	/* The heads of the classes that hold jobs and are not blocked, as a
	 * tournament tree over class indexes (sched_next): node i holds the
	 * class of its range whose head comes first, -1 when none; leaves
	 * from tree_cap on (a power of two). */
	int32_t *tree;
	size_t tree_cap;
	uint8_t *blocked; /* per class (tree_cap) */
	uint32_t *blocked_list;
	size_t n_blocked;
	uint32_t *failed; /* classes failed in the current sweep, not yet blocked */
	size_t n_failed;
};

void sched_init(struct sched *s, enum sched_order order);
void sched_free(struct sched *s);

/* The order keys of a job under the scheduler's order. */
struct sched_entry sched_entry(enum sched_order order, uint32_t job, uint32_t seq, sim_time submit,
			       int32_t priority, sim_time deadline, sim_time duration);

/* Adds a pending job; returns its class index. */
size_t sched_add(struct sched *s, int32_t workload, int32_t gpus, int32_t queue,
		 struct sched_entry e);

/* The same, in the class of (workload, gpus, variant): jobs of one workload
 * that Kueue gave different flavors wait apart. */
size_t sched_add_variant(struct sched *s, int32_t workload, int32_t gpus, int32_t variant,
			 int32_t queue, struct sched_entry e);

/* The head of class c (which must not be empty). */
static inline const struct sched_entry *sched_head(const struct sched *s, size_t c)
{
	return &s->classes[c].heap[0];
}

/* Removes the head of class c. */
void sched_pop(struct sched *s, size_t c);

/* Removes job from class c, wherever it is in the heap (it must be there).
 * O(n) in the class's size to find it: for preemption, which is rare. */
void sched_remove(struct sched *s, size_t c, uint32_t job);

/* A scheduling pass's classes (sim_schedule.c): class c left out of
 * sched_next until sched_unblock_all, which lets every class in again.
 * O(log classes) each, O(blocked) for all. */
void sched_block(struct sched *s, size_t c);
void sched_unblock_all(struct sched *s);

/* Class c failed in a sweep of sched_next, which goes on from a later
 * class and so will not find it again: it is blocked only if another sweep
 * of the pass follows (sched_block_failed, before the sweep's start), and a
 * pass's last sweep, which starts nothing, blocks none of its failures
 * (sched_unblock_all forgets them).  O(1). */
void sched_fail(struct sched *s, size_t c);
void sched_block_failed(struct sched *s);

/* The first class from index `from` on that holds jobs, is not blocked and
 * whose head does not come after *bound (NULL: any head); -1 when none.
 * What a scan of the classes in index order finds, in O(log classes): a
 * pass that scanned every class for each job it started was quadratic
 * (100,000 pinned workloads of an imported cluster). */
int64_t sched_next(const struct sched *s, size_t from, const struct sched_entry *bound);

/* Whether a comes before b. */
static inline bool sched_before(const struct sched_entry *a, const struct sched_entry *b)
{
	if (a->k1 != b->k1)
		return a->k1 < b->k1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2;
	return a->seq < b->seq;
}

#endif
