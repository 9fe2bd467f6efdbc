/*
 * sim.h - the run loop of one timed simulation of a validated scenario.
 *
 * A struct sim owns all mutable state of a run (event queue, cluster,
 * pending work, jobs, collectors).  Lifecycle, driven by run.c:
 *   sim_create   builds the state and schedules the first events;
 *   sim_advance  handles events until the horizon, the end of the work or a
 *                stall, and leaves the run's status, end and event count;
 *   sim_jobs / sim_workloads / sim_collect  what the metrics reduce (metrics.h);
 *   sim_finish   adds the job and node rows, the inference results and the
 *                pending reasons to the results, then frees the state.
 * The loop dispatches events and knows nothing of metrics or diagnosis.
 * With output.jobs false no job row is written, so a job is retired when it
 * completes or fails: its index goes to a free list and the next arrival
 * reuses it (submission order lives in seq).  Memory then follows the jobs
 * in flight, not the jobs submitted; the per-workload counts carry what the
 * metrics need.
 * A batch job waits twice, as under Kueue: in its queue until it is admitted
 * (its quota reserved, quota.h), then as pods that kube-scheduler places
 * (placement.h).  It keeps its quota while its pods wait, run, or restart
 * after an OOM kill or a node's loss; a Kueue preemption gives the quota
 * back and sends it to its queue again.
 * Same scenario and seed, same results.
 */
#ifndef GPUPLAN_SIM_H
#define GPUPLAN_SIM_H

#include "gpuplan/collect.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/results.h"
#include "gpuplan/samples.h"
#include "gpuplan/scenario.h"

#include <gsl/gsl_rng.h>
#include <stdatomic.h>

/* One batch job (a gang's pods count as one job). */
struct sim_job {
	/* first what a finish event checks and releases: the lines a finishing
	 * job's record is read from first, cold after the hours it ran */
	sim_time finish_at; /* time of the live finish event */
	uint8_t status;     /* enum job_status */
	bool verified;      /* finished by its deadline and passed its quality draw */
	uint16_t gen;       /* of the live finish event */
	int32_t pods;       /* pods placed together: a gang's, else 1 */
	int32_t workload, gpus;
	struct cluster_grant grant; /* grant.node < 0: never placed; a gang's first pod */
	struct cluster_grant *more; /* a gang: every pod's placement (NULL: one pod) */
	sim_time submit, start, end, deadline, duration;
	sim_time last;       /* progress is accounted until here */
	double remaining;    /* exclusive-GPU work left, µs */
	double rate;         /* work done per µs while sharing */
	double demand;       /* GPUs' worth it adds to the demand gauge */
	double busy;         /* f over its whole allocation: start-up keeps the GPU idle */
	double cost_per_h;   /* what its allocation costs at its pool's prices */
	double cost;         /* of the allocations it has finished */
	double kept;         /* exclusive-GPU work saved by checkpoints, µs */
	double span_work;    /* work (start-up included) the current allocation began with */
	sim_time span_start; /* when the current allocation began */
	int32_t restarts;
	int32_t preemptions;  /* times it was stopped: a window, a spot notice, a preemption */
	int32_t oom_kills;    /* times a pod of it was OOM-killed */
	int32_t cls;          /* its class in the queue it waits in; -1: in none */
	sim_time admitted_at; /* when Kueue admitted it (reserved its quota) */
	uint32_t holder;      /* its place in the run's list of quota holders */
	uint32_t
		lost_epoch; /* the run's progress epoch in which it last lost its work (sim_jobs.c) */
	sim_time trace_queue; /* the trace's own wait (openb); SIM_NEVER: none */
	uint32_t seq;         /* submission order (job_id); the index may be reused */
	int32_t awaiting;     /* a preemptor's victims still terminating (below) */
	uint64_t flavors;     /* its Kueue flavors while admitted (quota.h's packing) */
	int32_t flavor;       /* the flavor shown (quota_flavor); -1: none */
	int32_t variant;      /* its pods' placement variant: its flavors' labels and
			       * tolerations (placement.h); 0: none */
	bool admitted;        /* holds its queue's quota (quota.h) */
	bool culled;          /* its current run ends by idle_cull (scenario.h) */
	bool doomed;          /* its memory overflows: it dies with OOM as start-up ends */
	/* kube-scheduler's priority preemption (preempt.h): a victim is killed at
	 * kill_at (its grace period over) and its preemptor, job `by` of
	 * submission by_seq, started on its nominated node if it fits there */
	bool terminating;
	int32_t nominated; /* a preemptor's node while its victims terminate; -1: none */
	sim_time kill_at;
	uint32_t by, by_seq;
};

/* What the run keeps per workload, batch and inference alike. */
struct sim_workload {
	double demand_unit;         /* GPUs' worth of one unit before placement */
	int64_t oom_kills;          /* pods (or replicas) killed for overflowing VRAM */
	int64_t verified;           /* results (or requests) that count as verified */
	int64_t preemptions;        /* batch jobs stopped by a window, a quota reclaim, a spot
			      * notice or a scale-down */
	int64_t scaled_down;        /* of them, by the Cluster Autoscaler's scale-down */
	int64_t priority_preempted; /* of them, by kube-scheduler's priority preemption */
	int64_t culled;             /* services idle_cull stopped */
	double culled_gpu_s;        /* GPU-seconds (equivalents) they would have held on */
	gsl_rng *quality;           /* its own quality draws, so they never shift the arrivals';
			      * made at the first draw (arrivals_rng) */
	/* what the job metrics need, kept as jobs move so that finished jobs
	 * can be retired (metrics.h) */
	int64_t submitted, completed, failed, met; /* met: completed by the deadline */
	sim_time first_submit, last_end;           /* SIM_NEVER: none yet */
	struct samples waits;                      /* queue time (s) of each job that started */
};

struct sim;

/* The state of a run of sc whose results go to out (results_init'ed). */
struct sim *sim_create(const struct scenario *sc, struct results *out);

/* Hands the job rows on to sink as they become final (results.h), from
 * now until sim_finish; sink (may be NULL: none) outlives the run. */
void sim_set_sink(struct sim *s, const struct results_sink *sink);

/* Arms a stop rule on the run's inference requests (infer_set_stop): the
 * loop ends as soon as the rule's quantile is certain to exceed its bound,
 * and the run's status is "stopped".  Returns whether the rule is on. */
bool sim_set_stop(struct sim *s, const struct infer_stop *stop);

/* A flag another thread may set (NULL: none): the loop then ends at the
 * next instant, as the stop rule ends it (run.h, run_simulate_stop). */
void sim_set_cancel(struct sim *s, const atomic_bool *cancel);

/* Runs the loop; sets out's status, sim_end and events. */
void sim_advance(struct sim *s, struct results *out);

/* The job slots not retired (jobs still pending or running; a finished job's
 * slot goes to the next arrival, its row to the results), in no useful
 * order, the per-workload state (one per scenario workload, inference
 * counts included) and the gauges, after sim_advance. */
const struct sim_job *sim_jobs(const struct sim *s, size_t *n);
const struct sim_workload *sim_workloads(const struct sim *s);
const struct collect *sim_collect(const struct sim *s);
/* The run's placer: which pools each workload may use (placement.h). */
const struct placer *sim_placer(const struct sim *s);
/* Why the run cannot stand, with its error code: a trace that could not be
 * read again or changed since the scenario read it (arrivals.h); 0: none. */
int sim_failed(const struct sim *s, struct gp_err *err);

/* Adds the node and job rows, the inference metrics and requests and the
 * pending reasons to out, then frees s. */
void sim_finish(struct sim *s, struct results *out);

#endif
