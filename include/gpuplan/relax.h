/*
 * relax.h - what binds, and how it is relaxed: one row per constraining
 * scenario key (docs/diagnosis.md, "What binds, and how it is relaxed").
 *
 * Every waiting and slowed pod-second of a run is attributed to one kind of
 * constraint (enum constraint_kind, results.h; the run's totals are
 * results.constraints, bind.h).  This table says, per kind, which scenario
 * key it is, how it is relaxed minimally, what the relaxation costs, and
 * whether the relaxation needs a component other than stock kube-scheduler,
 * Kueue, the Cluster Autoscaler or the NVIDIA device plugin.  A row's relax
 * function appends the relaxations of one binding constraint to a finding
 * as fixes (a label and --set overrides, smallest first), which advise runs
 * before any hardware.  Adding a key to the scenario format means adding a
 * row here, not a detector.
 *
 * The rows' functions live in relax.c (the relaxations advise had before the
 * table) and relax_rows.c (the ones added with it); a row without one has
 * relax NULL.  Nothing here prints; the functions read only the scenario and
 * the base run's results.
 */
#ifndef GPUPLAN_RELAX_H
#define GPUPLAN_RELAX_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends to f the minimal relaxations of c (finding_add_fix +
 * finding_fix_add, smallest first). */
typedef void (*relax_fn)(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f);

struct relax_row { /* one row per constraining scenario key */
	enum constraint_kind kind;
	const char *key;        /* as docs write it: "queues.Q.quota" (Q, L: a queue,
				 * W: a workload, P: a pool) */
	const char *relaxation; /* how it is relaxed minimally, in words */
	const char *cost;       /* what the relaxation costs, in words */
	bool non_stock;         /* needs a component other than stock kube-scheduler,
				 * Kueue, the Cluster Autoscaler or the NVIDIA device plugin */
	relax_fn relax;         /* NULL: none known yet */
};

/* Indexed by kind: relax_table[k].kind == k. */
extern const struct relax_row relax_table[CONSTRAINT_KINDS];

/* The row of kind k, or NULL past the end. */
const struct relax_row *relax_row_of(enum constraint_kind k);

/* c's key with the names filled in ("queues.team-a.lending_limit"), whole
 * (malloc'd: the caller frees it); a letter the constraint has no index for
 * stays as it is. */
char *relax_key(const struct scenario *sc, const struct constraint *c);

/* The workload c is about, or NULL (none, or an index past the scenario's). */
const struct workload_spec *relax_workload_of(const struct scenario *sc,
					      const struct constraint *c);

/* How c is relaxed minimally, in words: its row's relaxation, but for a pod
 * without a model whose VRAM binds (its key is then workloads.W.vram). */
const char *relax_relaxation(const struct scenario *sc, const struct constraint *c);

/* c's current value as scenario text ("0", "{a: b, ...}", "none"; "?" when
 * the constraint has none), whole (malloc'd: the caller frees it). */
char *relax_value(const struct scenario *sc, const struct constraint *c);

/* Runs the row's relax function for c (nothing when it has none); returns
 * how many fixes it appended to f. */
size_t relax_constraint(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f);

/* --- the relaxations advise had before the table (relax.c) ---------------
 * Each is a row's function or a part of one that advise also calls alone,
 * to keep the order in which it plans them. */

/* SHARING (pool c->pool): idle culling of the mostly idle services it hosts;
 * time-slicing and MPS x2, x4 where their units hold every workload it
 * hosts; a MIG layout of the profile that holds the largest pod, and
 * fractional shares (one-GPU workloads hosted nowhere else). */
void relax_culling(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
void relax_replicas(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f);
void relax_partitions(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f);
/* SHARING: the idle holders of whole GPUs of pool c->pool moved to a small
 * time-sliced pool of their own (where other work on it missed its goal). */
void relax_shared_pool(const struct scenario *sc, const struct results *r,
		       const struct constraint *c, struct finding *f);
void relax_sharing(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);

/* NODE_SELECTOR (workload c->workload): a value no pool carries corrected to
 * the closest one on a pool whose GPUs hold the pod (with its taints
 * tolerated), then the selector dropped. */
void relax_selector_fix(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f);
void relax_selector_drop(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f);
void relax_node_selector(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f);
/* AFFINITY, GPU_SPEC: dropped.  TAINT: the taints of the pools the rules keep
 * c->workload off tolerated. */
void relax_affinity(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f);
void relax_gpu_spec(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f);
void relax_taint(const struct scenario *sc, const struct results *r, const struct constraint *c,
		 struct finding *f);

/* LENDING_LIMIT (the lender c->queue): lends all its GPU quota. */
void relax_lending(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
/* QUOTA, BORROWING_LIMIT (queue c->queue, of workload c->workload): raised by
 * the GPUs that were idle while it waited (at least one). */
void relax_quota(const struct scenario *sc, const struct results *r, const struct constraint *c,
		 struct finding *f);
void relax_borrowing(const struct scenario *sc, const struct results *r, const struct constraint *c,
		     struct finding *f);
/* QUEUEING_STRATEGY: BestEffortFIFO. */
void relax_strategy(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f);
/* WINDOW (pool c->pool, else every pool with windows that missed its goal):
 * each window widened (1 h and 2 h later to close, 1 h earlier to open, and
 * later to the length relax_window_need gives the work that waits for it)
 * and shifted 1 h later, shorter than a day. */
void relax_windows(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
/* VRAM: narrower weights for every workload with a model (c->workload: that
 * one); on an exclusive pool c->pool, with time-slicing x2 and x4. */
void relax_quantization(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f);
void relax_quant_sharing(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f);
/* VRAM (inference): max_batch raised to what the KV cache holds, a low
 * memory_fraction raised with int8 weights (c->workload, else every
 * inference service that missed its goal). */
void relax_inference(const struct scenario *sc, const struct results *r, const struct constraint *c,
		     struct finding *f);
/* An inference service that missed its goal (c->workload, else every
 * one), besides its own settings: on the GPU type of a pool whose GPUs idled
 * where its gpu_spec, node selector or affinity pins it elsewhere (the type
 * in place of the selector and affinity), routed by load where it is
 * round-robin, a replica moved over from a service of the same GPUs that
 * meets its goal on three or more. */
void relax_service(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
void relax_vram(const struct scenario *sc, const struct results *r, const struct constraint *c,
		struct finding *f);
/* FRAGMENTATION: packing GPU policies, MostAllocated scoring. */
void relax_fragmentation(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f);

/* --- the rows added with the table (relax_rows.c) --------------------------- */

/* RECLAIM (the owner c->queue, else c->workload's): LowerPriority where some
 * borrower of the cohort has a lower priority, then Any. */
void relax_reclaim(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
/* PRIORITY (c->workload): one above every workload it may wait behind (its
 * queue's, or one sharing a pool), with scheduler.order priority when the
 * order is another. */
void relax_priority(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f);
/* SPREAD (c->workload): the maxSkew with which every domain of the pools it
 * may use fills (the rule stays a filter), then whenUnsatisfiable
 * ScheduleAnyway (a preference). */
void relax_spread(const struct scenario *sc, const struct results *r, const struct constraint *c,
		  struct finding *f);
/* MIG_PROFILE (pool c->pool, c->workload's profile): the instances other
 * workloads ask for kept and the rest given to the profile, then mig-parted's
 * all-PROFILE layout. */
void relax_mig_layout(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f);
/* CPU_REQUEST, MEMORY_REQUEST (c->workload): the request that fits as many
 * pods a node as its GPUs hold, on the pools it may use. */
void relax_cpu_request(const struct scenario *sc, const struct results *r,
		       const struct constraint *c, struct finding *f);
void relax_memory_request(const struct scenario *sc, const struct results *r,
			  const struct constraint *c, struct finding *f);
/* CONTENTION (pool c->pool): time-slicing or MPS replicas halved down to 2,
 * then exclusive GPUs. */
void relax_contention(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f);
/* PROVISIONING (pool c->pool): 1, half the maximum, then the maximum of
 * nodes kept warm (autoscale.min). */
void relax_provisioning(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f);
/* STARTUP (c->workload's start-up, else pool c->pool's): the start-up with
 * which its late jobs would have met their deadlines; without one, half of
 * it, a fifth, one minute. */
void relax_startup(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f);
/* WINDOW, a workload's own windows (c->workload, else each workload with
 * windows that missed its goal): closing 1 h or 2 h later or to the length
 * relax_window_need gives its work, opening 1 h earlier. */
void relax_workload_windows(const struct scenario *sc, const struct results *r,
			    const struct constraint *c, struct finding *f);

/* How a window may move: seconds added to its from and to, and in words. */
struct relax_window_move {
	int32_t open, close;
	char how[32];
};
#define RELAX_WINDOW_MOVES 5

/* The moves of a window len seconds long: closing 1 h and 2 h later, and
 * later to need seconds where that is more (0: no need known); opening 1 h
 * earlier; with shift, shifted 1 h later.  Only those that keep it shorter
 * than a day; returns how many, at most RELAX_WINDOW_MOVES. */
size_t relax_window_moves(int32_t len, int32_t need, bool shift, struct relax_window_move *out);

/* The window length (s) that holds the work of the workloads waiting[w]
 * in r that may use pools usable[p]: the rounds their peak demand takes on
 * those pools' GPUs, each as long as their longest mean job (under either
 * window_policy a job that runs past the close does not finish in it),
 * rounded up to 30 minutes; 0 when they have no demand or no GPUs. */
int32_t relax_window_need(const struct scenario *sc, const struct results *r, const bool *waiting,
			  const bool *usable);

/* --- diagnosis (relax_diagnose.c) ----------------------------------------- */

/* The step a finding about kind k ranks in (allocation, memory, placement,
 * application, capacity: the tie-break of equal pod-seconds). */
enum finding_step relax_step(enum constraint_kind k);

/* The binding constraints of the workloads that missed their goals (goal_met
 * < 1), summed by key (kind and the queue, workload or pool its key names;
 * "Insufficient" time is a priority where batch work with no goal and no
 * higher priority ran on the pools the workload may use), most pod-seconds
 * first, ties in step order.  Returns how many, malloc'd into *out. */
size_t relax_binding(const struct scenario *sc, const struct results *r, struct constraint **out);

/* After diagnose_run: the first binding constraint names the first finding
 * (the detectors' finding of the same cause, moved first, else a new
 * KIND_BINDS finding), with key, value, relaxed (its first relaxation's
 * value) and pod-hours, the table's relaxations before its own fixes; the
 * detectors' findings of the other binding constraints get their keys; a
 * fragmentation finding under a binding spread rule, and a capacity finding
 * for work a queue's limit holds, are dropped.  When capacity binds most,
 * the detectors' order stands.  A run without findings gets none. */
void relax_findings(const struct scenario *sc, struct results *r);

/* A constraint about nothing in particular: pool, workload and queue -1. */
struct constraint relax_about(enum constraint_kind k, int32_t pool, int32_t workload,
			      int32_t queue);

#endif
