/*
 * sim_int.h - what the files of the run loop share: the state of a run and
 * the small helpers over it (see sim.h).  One idea a file:
 *   sim.c          the loop and the clock: dispatch, the pass of an instant,
 *                  the end of a run (a stall); what the loop lends its clients
 *   sim_jobs.c     a batch job's life: arrival, start, finish, eviction, OOM
 *   sim_gauges.c   what a job moves in the collector, its cost rates, and the
 *                  pace sharing gives the jobs on a GPU
 *   sim_admit.c    Kueue's admission: quota charged and released, flavors,
 *                  Kueue's preemption, the admission part of a pass
 *   sim_schedule.c the pass: admission, then kube-scheduler's placement
 *   sim_preempt.c  kube-scheduler's priority preemption: victims terminating,
 *                  their kills, the preemptor's nominated node
 *   sim_windows.c  pools' and workloads' windows opening and closing
 *   sim_rows.c     the job rows, handed on as they become final
 * Each file that owns events registers their types with the engine when the
 * run starts (the *_start functions below) and keeps the type it was given.
 */
#ifndef GPUPLAN_SIM_INT_H
#define GPUPLAN_SIM_INT_H

#include "gpuplan/arrivals.h"
#include "gpuplan/autoscale.h"
#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/preempt.h"
#include "gpuplan/quota.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"
#include "gpuplan/sim.h"

/* A placement class's last PostFilter answer (sim_schedule.c) when it was
 * DefaultPreemption's alone (sim_post_default), and what it came from: the
 * Ready nodes (cluster.ready_changes + 1; 0: none kept), the preemptor's
 * message (preempt.h msg_made) and the counts (why, the class's row of
 * sim.post_why). */
struct class_post {
	uint64_t ready, made;
	const char *post;
};

/* Where a started job's first pod is: its node and the GPUs it holds there. */
struct held_lines {
	int32_t node, first_gpu; /* node -1: not started */
	uint64_t gpu_mask;
};

struct sim {
	const struct scenario *sc;
	struct engine engine;
	struct cluster cluster;
	struct placer placer;
	struct sched sched; /* admitted jobs whose pods wait for nodes */
	struct sched admit; /* jobs waiting for Kueue to admit them */
	struct arrivals arrivals;
	struct collect collect;
	struct results *out; /* receives a job's row when it retires (output.jobs) */
	struct sim_job *jobs;
	size_t n_jobs, cap_jobs;
	struct held_lines *held; /* by job slot, read an event before its finish
				  * to ask for the lines of its node and of the
				  * GPUs it holds with the record's, which is not
				  * there to read yet (finish_ahead) */
	size_t cap_held;
	uint32_t *free_ids; /* retired job indexes to reuse */
	size_t n_free, cap_free;
	uint32_t submitted;               /* jobs so far: the next job's seq */
	struct sim_workload *wl;          /* per workload */
	struct samples_budget waits_held; /* queue times the workloads hold exactly */
	size_t arriving;                  /* workloads whose stream has more arrivals */
	size_t running;
	size_t backing_off;         /* jobs waiting to be retried after an OOM kill */
	bool dirty;                 /* something changed that may let work start */
	bool stopping;              /* the stop rule fired (sim_set_stop): the loop ends */
	const atomic_bool *cancel;  /* sim_set_cancel's: checked once an instant */
	sim_time until;             /* the loop runs while events are due by it */
	sim_time last_progress;     /* the last arrival, start, eviction or end */
	sim_time last_provisioning; /* the last instant a node was being provisioned */
	/* Progress no eviction undoes: an arrival, a job's end, a checkpoint kept,
	 * a request served.  Each opens an epoch; a job records the epoch in which
	 * an eviction last lost its work, so futile restarts are counted in O(1). */
	sim_time last_kept;
	uint32_t epoch;
	uint32_t lost;           /* evictions this epoch that kept no new work */
	size_t futile_running;   /* running jobs that lost their work this epoch */
	uint32_t *admit_blocked; /* the same per admission class */
	size_t cap_admit_blocked;
	uint8_t *behind; /* per admission class: its reason is quota_behind's */
	size_t cap_behind;
	uint32_t pass;
	uint64_t quota_gen;     /* bumped by every admission and release of quota */
	int64_t *strict_head;   /* per queue, scratch for admit_pass() */
	struct reasons reasons; /* why pending work waits (reasons.h) */
	struct bind bind;       /* what binds waiting and slowed pod-seconds (bind.h) */
	/* bumped by whatever may let blocked work fit: a release, a window opening, a spread pod */
	uint64_t freed;
	int32_t *plan, *best_plan; /* nodes of a job's pods: tried, and the pass's best */
	uint64_t *failed_at; /* per placement class: cluster.changes + 1 at its kept failure */
	size_t cap_failed_at;
	int32_t *class_why; /* per placement class, per reason slot: that failure's counts */
	struct class_post *class_post; /* per placement class: its last PostFilter answer */
	int32_t *post_why;             /* per placement class, per reason slot: its counts */
	uint64_t *planned_at;          /* per placement class: cluster.state | 1 at its kept plan */
	struct plan_memo *class_plan;  /* per placement class: that plan (placement.h) */
	bool has_windows;              /* some pool has windows */
	struct quota quota;            /* queue quotas and cohorts (quota.h) */
	double *req;       /* scratch: a job's request per quota column (flavor, resource) */
	double *ask;       /* scratch: a job's request per resource (quota.h) */
	double *cand_ask;  /* scratch: a candidate's */
	uint32_t *holders; /* jobs that hold quota of a queue with one */
	size_t n_holders, cap_holders;
	struct quota_candidate *cands; /* scratch: admitted jobs, for preemption */
	size_t cap_cands;
	double *cand_req; /* scratch: their requests, [cand * n_res] */
	size_t cap_cand_req;
	uint32_t *victims, *best_victims; /* preemption targets: tried, the round's best */
	size_t cap_victims;
	struct preemptor preempt; /* kube-scheduler's priority preemption (preempt.h) */
	int32_t min_priority;     /* the lowest of the workloads' */
	struct infer *infer;      /* inference services (infer.h); NULL without */
	struct autoscale *as;     /* node autoscaling and spot (autoscale.h); NULL without */
	/* job rows handed on as they become final (sim_rows.c, sim_set_sink) */
	const struct results_sink *sink;
	uint8_t *row_done; /* by seq: the row is in out->jobs */
	size_t cap_row_done;
	size_t rows_final; /* rows below this seq are all in out->jobs */
	size_t rows_handed;
	/* the event types the engine gave the loop's own clients (engine_register) */
	uint16_t ev_arrival, ev_finish, ev_retry; /* sim_jobs.c */
	uint16_t ev_window;                       /* sim_windows.c */
	uint16_t ev_kill;                         /* sim_preempt.c */
};

/* A placement and an admission class in the reasons tracker's class space. */
#define PLACE_RC(c) REASONS_CLASS(REASONS_PLACE, c)
#define ADMIT_RC(c) REASONS_CLASS(REASONS_ADMIT, c)

static inline const struct sharing *sharing_of(const struct sim *s, int32_t node)
{
	return &s->sc->pools[s->cluster.nodes[node].pool].sharing;
}

static inline struct gpu *gpu_at(struct sim *s, int32_t node, int i)
{
	return &s->cluster.gpus[s->cluster.nodes[node].first_gpu + i];
}

/* The lowest GPU of a node's mask, taken out of it: a loop over a pod's
 * GPUs visits its set bits only, in ascending order. */
static inline int pop_gpu(uint64_t *mask)
{
	int i = __builtin_ctzll(*mask);
	*mask &= *mask - 1;
	return i;
}

/* The placements of the job's pods (j->pods of them). */
static inline struct cluster_grant *pods_of(struct sim_job *j)
{
	return j->more ? j->more : &j->grant;
}

/* A running job's time lost to slowdown under sharing from its last re-rate
 * to now, (1 - rate) x elapsed x pods, bound by contention on its pool
 * (bind.h).  Call before j->last moves. */
static inline void sim_slowed(struct sim *s, const struct sim_job *j, sim_time now)
{
	if (j->rate > 0 && j->rate < 1 && now > j->last)
		bind_add(&s->bind, CONSTRAINT_CONTENTION, j->workload,
			 s->cluster.nodes[j->grant.node].pool,
			 sim_seconds(now - j->last) * (1 - j->rate) * j->pods);
}

static inline bool fit_window(const struct sim *s)
{
	return s->sc->scheduler.window_policy == WINDOW_FIT;
}

/* The pod job j asks placement for. */
static inline struct pod_request job_pod(const struct sim *s, const struct sim_job *j)
{
	return (struct pod_request){j->workload, j->gpus, j->duration, fit_window(s), j->variant};
}

/* sim.c: whether work is left (arriving, pending, running, backing off,
 * or inference requests); the loop runs and windows tick while it is. */
bool sim_work_left(const struct sim *s);

/* sim_jobs.c: registers the jobs' events and pushes each workload's first
 * arrival; starts the head of placement class cls on nodes; stops a running
 * job and puts it back in a queue (readmit: its Kueue quota goes back);
 * something that lasts happened at `at` (a new progress epoch, sim.c's
 * stall test). */
void sim_jobs_start(struct sim *s);
void sim_start(struct sim *s, size_t cls, const int32_t *nodes);
void sim_evict(struct sim *s, uint32_t id, bool readmit);
void sim_kept_progress(struct sim *s, sim_time at);

/* sim_gauges.c: moves gauges list[k] by delta[k], k < n, in scope all and in
 * pool's and workload w's when >= 0 (one touch a scope), or one gauge; moves
 * the gauges of the job's pods by sign (+1: they start, -1: they stop), which
 * gives what the job's allocation costs per hour (times sign), and, unless
 * queue is NULL, its workload's demand and pending jobs by queue[0] and
 * queue[1] in the same touches of scopes all and the workload's; re-rates a running job after its
 * co-tenants changed (its finish moves); after the tenants of a pod's GPUs
 * changed, their activity and the rates of everyone still on them. */
void sim_gauges(struct sim *s, int32_t pool, int32_t w, const uint8_t *list, const double *delta,
		size_t n);
void sim_gauge(struct sim *s, int32_t pool, int32_t w, enum gauge g, double delta);
/* Moves workload w's demand and pending jobs, in scope all and w's. */
void sim_queue_gauges(struct sim *s, int32_t w, double demand, double pending);
double sim_job_gauges(struct sim *s, const struct sim_job *j, double sign, const double *queue);
void sim_retime(struct sim *s, uint32_t id);
void sim_gpus_changed(struct sim *s, const struct cluster_grant *grant);

/* sim_admit.c: admits (+1) or releases (-1) the job's quota; gives back the
 * quota of a job that holds it; gives it the flavors Kueue admitted it with;
 * puts a pending job in its stage's queue; Kueue's eviction of an admitted
 * job to admit another; the admission part of a pass. */
void sim_charge_quota(struct sim *s, struct sim_job *j, double sign);
void sim_release_quota(struct sim *s, struct sim_job *j);
void sim_take_flavors(struct sim *s, struct sim_job *j, uint64_t flavors);
void sim_enqueue(struct sim *s, uint32_t id);
void sim_kueue_preempt(struct sim *s, uint32_t id);
void sim_admit_pass(struct sim *s);

/* sim_schedule.c: one scheduling pass, admission then placement, until
 * neither can do more. */
void sim_schedule(struct sim *s);

/* sim_preempt.c: registers EV_KILL (a victim's grace period over);
 * preempt.h's host question; the PostFilter for job id, a class head that
 * fit no node (its words for reasons_fail_post); a victim gone (killed, or
 * ended first). */
void sim_preempt_start(struct sim *s);
bool sim_preempt_victim(void *ctx, uint32_t id, int32_t prio, int32_t *priority, sim_time *start,
			const struct cluster_grant **grants, int32_t *n);
const char *sim_kube_preempt(struct sim *s, uint32_t id, const int32_t *why);
/* Whether sim_kube_preempt's answer for job j is preempt_default_post's
 * alone, which moves nothing: a function of j's pod request, why, the Ready
 * nodes and the preemptor's message (and of the time where a pod must fit a
 * window). */
bool sim_post_default(const struct sim *s, const struct sim_job *j);
void sim_victim_gone(struct sim *s, struct sim_job *v);

/* sim_windows.c: registers EV_WINDOW, sets every window's state at the
 * start and schedules its next change; for a run whose only work is
 * inference, schedules the pools' next changes regardless. */
void sim_windows_start(struct sim *s);
void sim_windows_serve(struct sim *s);

/* The job's row (output.jobs), at its submission number (sim_rows.c). */
void sim_record_job(struct sim *s, const struct sim_job *j, uint32_t id);

/* The run's node names, and the rows of the jobs still in flight (sim_rows.c). */
void sim_write_rows(struct sim *s, struct results *r);

#endif
