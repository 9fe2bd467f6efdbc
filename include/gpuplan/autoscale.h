/*
 * autoscale.h - node pools that grow and shrink (the Cluster Autoscaler) and
 * spot capacity that is taken back (interruptions with a notice).
 *
 * The model follows kubernetes/autoscaler cluster-autoscaler (FAQ.md, "How
 * does scale-up work?", "How does scale-down work?"; core/static_autoscaler.go):
 *
 * Scan.  Every scan_interval (10s), after the scheduler's pass of that
 * instant, the autoscaler looks at the pending pods the scheduler found
 * unschedulable on the nodes (not those waiting for queue quota: Kueue has
 * not admitted them, so they have no pods yet).
 *
 * Scale-up.  The pending pods are the scheduler's classes and the inference
 * replicas pending for room (infer_pending_replicas).  Pods that fit nodes
 * already provisioning ("upcoming nodes") wait for them.  For the others,
 * each autoscaled pool below its max is an option: CA's binpacking
 * estimator (estimator/binpacking_estimator.go) puts the pods, pod by pod
 * with the scheduler's filters (placement_fits_node), on down node slots
 * standing for new nodes of the pool's template: first on the new nodes
 * added so far, then on the last one, opening another while the pool is
 * below max; groups of pods in CA's DecreasingPodOrderer order (cpu and
 * memory share of the template).  The simulation's pods are real placements
 * on those slots (placement_take_pod), taken back before the scan ends.  The
 * expander picks one option:
 * random (the default), least-waste (the smallest share of the new nodes'
 * GPUs, cpu and memory left unrequested; CA's expander/waste), price (the
 * lowest cost per hour per requested GPU) or priority (the pool's
 * autoscale.priority, highest first); ties are drawn at random from the
 * autoscaler's own stream.  One pool grows per scan, as CA does without
 * balancing.  A new node is billed (powered) from launch and joins the
 * scheduler's nodes after provision_time.
 *
 * Scale-down.  A Ready node whose GPU requests are below
 * scale_down_utilization_threshold of its GPUs (GPU nodes are judged by GPU
 * requests) and whose pods could move is unneeded: a batch job's pod never
 * moves (a Job marked safe-to-evict: false), an inference replica (a
 * Deployment's pod) moves when another Ready node passes the scheduler's
 * filters for it, beside the replicas moved before it (CA's removal
 * simulation: first fit, no scores, so the scheduler's random ties are not
 * drawn).  A node unneeded at every scan for
 * scale_down_unneeded_time (10m, counted from the first scan that saw it) is
 * removed, never below min, at most 10 nodes per scan
 * (--max-scale-down-parallelism) of which 1 with pods to move
 * (--max-drain-parallelism): its replicas are evicted and their replacements
 * placed on the other nodes; nothing is removed in a scan that scaled up or
 * within scale_down_delay_after_add (10m) of a scale-up.  Scans stop when no
 * work is left, nothing is provisioning and no unneeded node is above min.
 *
 * Spot.  Each node of a spot pool is interrupted after an exponential time
 * (rate per node-hour) from its launch, drawn from the pool's own stream.
 * At the notice (2m) the node is cordoned and drained: its batch jobs are
 * evicted and keep the work of their last checkpoint, its inference replicas
 * are evicted (their requests go back to the router) and replaced by
 * pending ones; at the end of the notice it is gone.  An autoscaled pool gets the capacity back through scale-up
 * (the evicted pods are pending); a fixed pool's node group launches a
 * replacement in the same slot when the node is gone.
 *
 * Events the scheduler's messages carry.  A pending pod's message is
 * kube-scheduler's followed by the autoscaler's event, CA's words:
 * "pod triggered scale-up: [POOL]" while it waits for nodes being
 * provisioned, "pod didn't trigger scale-up: N max node group size reached"
 * when the pools that would fit it are at max, and "pod didn't trigger
 * scale-up (it wouldn't fit if a new node is added)" when no autoscaled pool
 * fits it.
 *
 * What it reports (struct pool_scaling in results.h, and metrics per pool):
 * node-hours billed, peak Ready nodes, scale-ups, nodes added, nodes removed,
 * spot interruptions, the time a pool sat at max with pods it could host
 * pending (capacity evidence), and the pod-seconds pods waited for nodes
 * being provisioned (provisioning time, not capacity, is the wait).
 *
 * Cost.  A scan costs, for scale-up, O(pods placed on upcoming and new nodes
 * x GPUs of a node, plus pending groups x their nodes tried) per autoscaled
 * pool, and for scale-down O(slots of autoscaled pools) plus a placement
 * search per replica on an underused node; other events
 * O(1) apart from a drain (the node's pods).  Pools without autoscale or spot
 * cost nothing.  Nothing allocates after autoscale_create but the per-class
 * state, which grows with the scheduler's classes, and the simulations'
 * scratch (their pods, the groups in order), which grows to the largest scan.
 *
 * Lifecycle: autoscale_create (NULL when no pool autoscales or is spot),
 * autoscale_start at time 0, then the hooks; autoscale_results at the end;
 * autoscale_destroy.  Every function accepts NULL and then does nothing.
 * Its events (a scan due, a node Ready, a spot notice, a node gone) are its
 * own: autoscale_create registers their types with the engine (engine.h).
 */
#ifndef GPUPLAN_AUTOSCALE_H
#define GPUPLAN_AUTOSCALE_H

#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/reasons.h"
#include "gpuplan/results.h"
#include "gpuplan/sched.h"

/* What the module borrows from the run. */
struct autoscale_host {
	struct engine *engine;
	struct cluster *cluster;
	struct placer *placer;
	struct collect *collect;
	struct sched *sched;
	struct reasons *reasons;
	struct infer *infer;          /* pending replicas trigger scale-up; replicas move */
	uint64_t *freed;              /* bumped when a node comes up (blocked work may fit) */
	bool *dirty;                  /* set when a node comes up */
	void *ctx;                    /* the run, for the two calls below */
	bool (*work_left)(void *ctx); /* whether scans are still needed */
	/* evict the pods on node: for a scale-down (else a spot notice) */
	void (*drain)(void *ctx, int32_t node, bool scale_down);
	/* batch job's pod as the removal simulation sees it; *movable: the
	 * drainability rules let it be evicted */
	struct pod_request (*batch_pod)(void *ctx, uint32_t job, bool *movable);
};

struct autoscale;

struct autoscale *autoscale_create(const struct scenario *sc, const struct autoscale_host *host);
void autoscale_destroy(struct autoscale *as);

/* At time 0: the first scan, and the interruption draws of the initial spot nodes. */
void autoscale_start(struct autoscale *as);

/* At the end of an instant, after the scheduler's pass: runs a scan that is
 * due.  Returns whether the pending pods' autoscaler events changed (the
 * caller then lets the scheduler try again, so that the messages carry them). */
bool autoscale_settle(struct autoscale *as);

/* The scheduler tried the head of class cls and it did not fit: on the nodes
 * (nodes true: the autoscaler may help) or its queue's quota (false). */
void autoscale_class_failed(struct autoscale *as, size_t cls, bool nodes);

/* The autoscaler's event to append to class cls's message, or NULL. */
const char *autoscale_note(const struct autoscale *as, size_t cls);

/* The pool whose nodes the autoscaler is provisioning for class cls's pods
 * (its note is "pod triggered scale-up"), or -1. */
int32_t autoscale_provisioning_pool(const struct autoscale *as, size_t cls);

/* Pods joined class cls (enqueued) or left it (started). */
void autoscale_joined(struct autoscale *as, size_t cls, int32_t pods);
void autoscale_started(struct autoscale *as, size_t cls, int32_t pods);

/* Whether some node is being provisioned (launched, not yet Ready): the
 * run's stall detector counts that as progress, however long provision_time
 * is.  O(1). */
bool autoscale_provisioning(const struct autoscale *as);
/* Whether a node being provisioned will become Ready: not one whose pool's
 * provision_time is over its max_node_provision_time (it is given up, and
 * the scale-up retried after a backoff, forever). */
bool autoscale_registering(const struct autoscale *as);

/* When the last node stopped being billed (removed as unneeded), or
 * SIM_NEVER.  Without a horizon a run with autoscaled pools ends when the
 * work is done and the autoscaler has brought every pool back to its min:
 * the nodes that linger for scale_down_unneeded_time are on the bill. */
sim_time autoscale_settled_at(const struct autoscale *as);

/* Metrics per autoscaled or spot pool and the typed struct pool_scaling rows,
 * up to end; call after collect_finish. */
void autoscale_results(struct autoscale *as, struct results *out, sim_time end);

#endif
