/*
 * diagnose.h - why work waited and what would help, read from a finished run
 * (docs/diagnosis.md).
 *
 * The diagnosis follows the order that separates the causes; every finding
 * is derived from what the run recorded (pending reasons by kind, kills per
 * workload, timeseries windows, inference metrics), carries its figures as
 * typed values (union finding_figures, results.h; explain.h puts them in
 * words), and names its alternatives as --set overrides (struct
 * finding_fix, results.h) that advise runs:
 *   1. allocation   sharing: work pends on a pool whose GPUs are mostly
 *                   allocated and mostly idle (sharing modes); admission: a
 *                   queue's quota refuses work while the GPUs it may use are
 *                   free (the quota or borrowing limit raised); fragmentation:
 *                   jobs wait for GPUs while the free capacity holds one in
 *                   pieces (packing GPU policies, MostAllocated scoring).
 *   2. memory       stalled: no unit anywhere isolates a pod's VRAM, it can
 *                   never run (narrower weights, fewer MPS replicas); oom:
 *                   kills on a pool where the pods can overflow a GPU;
 *                   preallocation: time-sliced servers' memory_fraction adds
 *                   up past the GPU; vram-full: no room left for one more
 *                   pod; kv-cache: a server preempts for KV blocks under a
 *                   small memory_fraction while the SLO is missed.
 *   3. placement    pods pend with node-selector, affinity, gpu_spec, taint
 *                   or spread reasons while the capacity those rules hide
 *                   is idle: scheduler configuration, not hardware.
 *   4. application  an inference service's tokenizer workers are saturated
 *                   (more workers), or batch jobs that start at once miss
 *                   their deadlines with GPUs mostly idle: more GPUs would
 *                   not help.
 *   5. capacity     an autoscaled service misses its SLO at max_replicas; or,
 *                   only when nothing above explains it, work queues or
 *                   misses its goals on busy GPUs (advise sizes the pool).
 * A finding is kept only where a goal is missed (metrics_goals: the
 * workload it names or a member, or for a pool alone, a workload that may
 * use it), so a run in which every workload met its goal has no finding and
 * the summary says it is healthy.  Findings rank by step, then by how much they explain.
 *
 * The analysis reads only the scenario and the results object (metrics,
 * timeseries windows, pending reasons), so it costs O(windows x scopes +
 * pending reasons); a placer is built only when some pod pended with a
 * rule's reason.  Windows are the output.step windows: "pending" means a
 * window in which some pod pended.
 */
#ifndef GPUPLAN_DIAGNOSE_H
#define GPUPLAN_DIAGNOSE_H

#include "gpuplan/footprint.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stdio.h>

/* Thresholds, as fractions. */
#define DIAGNOSE_IDLE \
	0.30                        /* "mostly idle": engine activity below 30 % of
				     * the allocated GPUs */
#define DIAGNOSE_ALLOCATED     0.75 /* "mostly allocated": >= 75 % of the pool */
#define DIAGNOSE_IDLE_HELD     0.25 /* idle holders with >= 25 % of a full pool lock it */
#define DIAGNOSE_PENDING_SHARE 0.05 /* work pends in >= 5 % of the span */
#define DIAGNOSE_TOKENIZER     0.85 /* a tokenizer busy >= 85 % of the time */
#define DIAGNOSE_DUTY          0.50 /* replicas in iterations < 50 % of the time */
#define DIAGNOSE_IMBALANCE     0.10 /* a GPU type's pools 10 points busier than the rest */
#define DIAGNOSE_RESTARTS      2.0  /* evictions per job that make restarts a finding */
#define DIAGNOSE_PROMPT_START \
	0.05 /* batch jobs "start at once": queue p95 below
				     * 5 % of their mean duration */

/* A way of sharing a pool's GPUs whose unit holds a pod of a workload. */
struct diagnose_option {
	enum sharing_mode mode;
	int32_t per_gpu;               /* pods of the workload one GPU then holds */
	int32_t replicas;              /* time-slicing, mps */
	const struct mig_profile *mig; /* mig: the profile, per_gpu instances of it */
	int32_t milli;                 /* fractional: the share a pod would ask for */
};

#define DIAGNOSE_MAX_OPTIONS 6

/* The sharing modes whose units hold a pod of w (its VRAM) and put more of
 * them on one of p's GPUs than p's mode does now: time-slicing x2 and x4 (R
 * pods' VRAM within the GPU's memory: it is not isolated), MPS x2 and x4 (the
 * VRAM within 1/R), the MIG profile of the GPU that holds the pod with the
 * most instances, and fractional (the pod's VRAM share, rounded up to 50
 * milli).  MIG and fractional only for one-GPU pods; none for pods that
 * already ask for a MIG instance or a share.  Returns how many were written
 * to out (at most DIAGNOSE_MAX_OPTIONS). */
size_t diagnose_sharing_options(const struct pool_spec *p, const struct workload_spec *w,
				struct diagnose_option *out);

/* "time-slicing x4", "MPS x2", "MIG 1g.20gb x4", "fractional 200 milli". */
void diagnose_option_name(const struct diagnose_option *o, char *buf, size_t len);

/* The replicas that would serve inference workload w's load with each in
 * iterations about DIAGNOSE_DUTY of the time, given its replicas' duty cycle
 * (duty_pct, the run's duty_cycle_pct): fewer than it has when its fixed
 * replicas are mostly idle, else 0 (autoscaled, one replica, busy). */
int32_t diagnose_fewer_replicas(const struct workload_spec *w, double duty_pct);

/* The widest weight format narrower than w's own (int8, then int4) with which
 * per_gpu pods of w fit in one GPU of p: the pod's VRAM less the weight bytes
 * saved (per GPU of its tensor-parallel group).  *vram and *freed receive the
 * pod's new VRAM and what it frees, in bytes.  false when w has no model or
 * no narrower format fits. */
bool diagnose_quant_fit(const struct pool_spec *p, const struct workload_spec *w, int32_t per_gpu,
			enum quant *q, double *vram, double *freed);

/* The sequences workload w's server holds in its KV cache on the first pool
 * that hosts it (vLLM's max_num_seqs that memory allows: its
 * memory_fraction, or without one vLLM's default gpu_memory_utilization
 * 0.9), capped at DIAGNOSE_MAX_BATCH; 256 without a model. */
#define DIAGNOSE_MAX_BATCH  1024
#define DIAGNOSE_MAX_TOKENS 8192 /* max_batched_tokens offered with it */
int64_t diagnose_batch_fits(const struct scenario *sc, size_t w);
/* Adds to f the alternative "max_batch N for W": max_batch n, and
 * max_batched_tokens DIAGNOSE_MAX_TOKENS where w's is below it (diagnose's
 * batch finding and relax's inference rows offer the same one). */
void diagnose_fix_max_batch(struct finding *f, const struct workload_spec *w, int64_t n);

/* out[p] (one per pool): whether pool p offers what w's pods ask for but a
 * rule (an untolerated taint, node_selector, affinity, gpu_spec) keeps them
 * off it: the capacity a placement finding says the rules hide. */
void diagnose_hidden_pools(const struct scenario *sc, size_t w, bool *out);

/* out[p]: whether pool p offers what w's pods ask for and nothing (a rule, a
 * cordon) keeps them off it: the pools w may grow into. */
void diagnose_usable_pools(const struct scenario *sc, size_t w, bool *out);
/* Whether workloads a and b may run on a pool in common (their usable pools). */
bool diagnose_share_a_pool(const struct scenario *sc, size_t a, size_t b);

/* Whether a server preempted sequences for want of KV blocks often enough
 * to bind: at least 1% of its requests. */
static inline bool diagnose_kv_preempts(double preemptions, double requests)
{
	return requests > 0 && preemptions > 0 && preemptions >= 0.01 * requests;
}

/* The nodes pool ps can reach: its autoscaling max, else its nodes. */
static inline int32_t diagnose_reach_nodes(const struct pool_spec *ps)
{
	return ps->autoscale.on && ps->autoscale.max > ps->nodes ? ps->autoscale.max : ps->nodes;
}

/* Whether pool p could hold a pod of w, rules aside: it offers what the pod
 * asks for, and the pod's memory fits a GPU. */
bool diagnose_could_hold(const struct scenario *sc, size_t p, size_t w);

/* The rules (FINDING_RULE_TAINT, FINDING_RULE_AFFINITY) that keep workload w
 * off the pools hidden[0 .. nh-1]: an untolerated NoSchedule or NoExecute
 * taint of theirs, else its selector, affinity or gpu_spec. */
int diagnose_hiding_rules(const struct scenario *sc, size_t w, const size_t *hidden, size_t nh);

/* The MIG layout of one GPU of pool p that serves workload w's profile
 * better (diagnose_binds.c): the instances other workloads ask for kept,
 * the rest given to w's profile, as many as 7 compute and 8 memory slices
 * and the profile's maximum allow (mig-parted's configs give each GPU such
 * a list of mig-devices).  Writes its instances to out (7 at most) and
 * returns how many; 0 when p is not MIG, w asks for no profile of it, or no
 * layout holds more of w's profile than p's does. */
size_t diagnose_mig_layout(const struct scenario *sc, size_t p, size_t w,
			   const struct mig_profile **out);

/* A MIG layout l[0 .. n) as scenario text: "[3g.40gb, 2g.20gb]". */
void diagnose_layout_text(struct gp_sbuf *b, const struct mig_profile *const *l, size_t n);

/* Adds to f the fix "MIG layout [...] on P" of diagnose_mig_layout(sc, p, w),
 * when there is one. */
void diagnose_fix_mig_layout(struct finding *f, const struct scenario *sc, size_t p, size_t w);

/* Queue q's quota as a --set map ({nvidia.com/gpu: 8, memory: 64GiB}),
 * with resource res at amount; limit: its borrowing limits instead. */
void diagnose_quota_map(struct gp_sbuf *b, const struct queue_spec *q, const char *res,
			double amount, bool limit);

/* The nvidia.com/gpu line of queue q's quota, or NULL. */
const struct quota_entry *diagnose_gpu_quota(const struct queue_spec *q);

/* Adds the ranked findings of a finished run to r (r->findings, owned by r):
 * typed values only, text and evidence NULL until explain_results
 * (explain.h) makes them. */
void diagnose_run(const struct scenario *sc, struct results *r);

#endif
