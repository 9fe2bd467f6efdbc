/*
 * autoscale_int.h - what autoscale.c and autoscale_scaledown.c share: the
 * Cluster Autoscaler's state (node slots, pools, the notes of pending pods)
 * and the helpers over it (see autoscale.h).
 */
#ifndef GPUPLAN_AUTOSCALE_INT_H
#define GPUPLAN_AUTOSCALE_INT_H

#include "gpuplan/autoscale.h"

#include <gsl/gsl_rng.h>

/* The module's kinds of event, numbered from the first type the engine gave
 * it (autoscale.ev; engine_register). */
enum autoscale_event {
	EV_AS_SCAN,   /* the autoscaler's loop is due (runs in autoscale_settle) */
	EV_AS_READY,  /* id: node, gen: its launch; the node is Ready */
	EV_AS_NOTICE, /* id: node, gen: its launch; spot interruption notice */
	EV_AS_GONE,   /* id: node, gen: its launch; the interrupted node is gone */
	EV_AS_KINDS
};

enum node_state { NODE_DOWN, NODE_PROVISIONING, NODE_READY, NODE_DRAINING };

enum note_kind { NOTE_NONE, NOTE_TRIGGERED, NOTE_MAX, NOTE_NO_FIT, NOTE_BACKOFF };

/* Per group of identical pending pods (a scheduler class, or an inference
 * workload's pending replicas): what the autoscaler last said about them. */
struct as_class {
	bool blocked;       /* the scheduler's last try failed on the nodes (a class);
				* replicas are pending (set by each scan) */
	uint8_t note;       /* enum note_kind */
	int32_t pool;       /* NOTE_TRIGGERED: the pool its nodes come from */
	int32_t at_max;     /* NOTE_MAX: pools at max that would fit it; NOTE_BACKOFF:
			     * pools in backoff that would */
	int64_t remain;     /* scratch of a scan: pods no node takes yet */
	int64_t helped;     /* pods the last scan gave upcoming or new nodes */
	uint8_t was;        /* scratch of a scan: the note before it */
	int32_t was_detail; /* and its pool or at_max */
};

struct as_pool {
	bool autoscaled, spot;
	int32_t size; /* Ready + provisioning: the node group's size */
	int32_t provisioning;
	int32_t *est;      /* scratch of a scan: upcoming nodes [0, n_up), then the new
				* nodes of the estimate (down slots standing for the template) */
	int32_t *est_pods; /* pods the simulation put on each */
	int32_t n_est, n_up;
	int32_t n_new;                    /* scratch: new nodes with pods of this pool's option */
	double req_gpu, req_cpu, req_mem; /* scratch: what the option's pods request */
	int64_t pods;                     /* scratch: the option's pods (most-pods) */
	int32_t priority;                 /* the priority expander's; INT32_MIN: none matched */
	sim_time backoff_until;           /* no scale-up before (a failed one); 0: none */
	sim_time backoff;                 /* the last backoff's length */
	sim_time last_failure;            /* SIM_NEVER: none */
	gsl_rng *rng;                     /* spot interruptions */
	struct pool_scaling out;
	bool at_max;     /* since the last scan */
	bool at_max_now; /* scratch of a scan */
	sim_time at_max_since;
	int64_t waiting; /* pods of classes waiting for this pool's new nodes */
	sim_time waiting_since;
};

struct autoscale {
	const struct scenario *sc;
	struct autoscale_host h;
	uint16_t ev; /* the engine's type of EV_AS_SCAN; the rest follow */
	struct as_pool *pools;
	uint8_t *state;     /* per node slot: enum node_state */
	uint16_t *gen;      /* per node slot: its launch, for stale events */
	sim_time *unneeded; /* per node slot: first scan that saw it unneeded; SIM_NEVER */
	struct as_class *classes;
	size_t cap_classes;
	int32_t provisioning;      /* nodes being provisioned, all pools */
	int32_t registering;       /* of them, those that will register (Ready) */
	struct as_class *replicas; /* per workload: its pending inference replicas */
	int64_t replicas_helped;   /* of them, given upcoming or new nodes by the last scan */
	struct probe *probes;      /* pods the simulations hold on nodes, a stack */
	size_t n_probes, cap_probes;
	struct ranked *order; /* scratch: the groups in the estimator's order */
	size_t cap_order;
	uint32_t *moving; /* scratch: the tenants of a node to remove */
	size_t cap_moving;
	int32_t *moving_pods; /* scratch: the pods of each of them (node_pods) */
	size_t cap_moving_pods;
	int64_t *pdb_left;      /* per workload with a pdb: disruptions its budget still allows
			    * this scan (RemainingPdbTracker); NULL: no workload has one */
	int64_t *pdb_need;      /* scratch per workload: its pods on the node simulated */
	int32_t n_removable;    /* unneeded nodes above their pool's min, last scan */
	sim_time scan_interval; /* SIM_NEVER: no autoscaled pool */
	sim_time delay_after_add;
	sim_time last_scale_up;
	sim_time last_removal; /* when a node last stopped being billed; SIM_NEVER */
	bool scan_due;
	enum expander_kind chain[EXPANDER_CHAIN_MAX]; /* --expander, filters in turn */
	int32_t n_chain;
	bool *option;         /* scratch per pool: still an option in the chain */
	gsl_rng *rng;         /* the expander's ties and random choice */
	char **backoff_notes; /* [n]: "pod didn't trigger scale-up: n in backoff after
			       * failed scale-up" */
	char **triggered;     /* per pool: "pod triggered scale-up: [POOL]" */
	char **max_notes; /* [n]: "pod didn't trigger scale-up: n max node group size reached" */
};

/* A pod a simulation holds on a node. */
struct probe {
	int32_t workload;
	struct cluster_grant grant;
};

/* A group of pending pods and its place in the estimator's order. */
struct ranked {
	double score;
	size_t group;
};

/* autoscale.c: the clock; the pool of a node slot; moves gauge g of scope all
 * and of pool p. */
sim_time autoscale_now(const struct autoscale *as);
const struct pool_spec *autoscale_spec_of(const struct autoscale *as, int32_t node);
void autoscale_gauge(struct autoscale *as, size_t p, enum gauge g, double delta);
/* Node of pool p is powered (sign 1) or not (-1): its GPUs, and of them the
 * committed ones (the pool's first price.committed), move the gauges. */
void autoscale_powered(struct autoscale *as, size_t p, int32_t node, double sign);

/* autoscale.c: puts one pod of the request on node for a simulation; takes
 * the simulation's pods off again, down to the first `mark`. */
void autoscale_probe(struct autoscale *as, const struct pod_request *pod, int32_t node);
void autoscale_unprobe(struct autoscale *as, size_t mark);

/* autoscale.c: a Ready node leaves the scheduler's nodes. */
void autoscale_take_out(struct autoscale *as, int32_t node);

/* autoscale_scaledown.c: tracks unneeded nodes and removes those unneeded
 * long enough; returns whether a node was drained. */
bool autoscale_scale_down(struct autoscale *as, sim_time now);

/* Schedules the module's event of kind k at t. */
static inline void as_push(struct autoscale *as, sim_time t, enum autoscale_event k, uint32_t id,
			   uint16_t gen)
{
	engine_push(as->h.engine, t, (uint16_t)(as->ev + k), id, gen);
}

#endif
