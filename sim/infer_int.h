/*
 * infer_int.h - what infer.c, infer_autoscale.c and infer_results.c share:
 * a service's requests, sequences, replicas and the model's state (see
 * infer.h).
 */
#ifndef GPUPLAN_INFER_INT_H
#define GPUPLAN_INFER_INT_H

#include "gpuplan/arrivals.h"
#include "gpuplan/infer.h"
#include "gpuplan/samples.h"

#define BLOCK         FOOTPRINT_BLOCK_TOKENS
#define HPA_TOLERANCE 0.1

/* The module's kinds of event, numbered from the first type the engine gave
 * it (infer.ev; engine_register). */
enum infer_event {
	EV_INFER_ARRIVAL,   /* id: service; a request arrives */
	EV_INFER_ITERATION, /* id: replica, gen: its generation; an iteration ends or
			     * a tokenized request becomes ready */
	EV_INFER_READY,     /* id: replica; model loaded, serving */
	EV_INFER_SCALE,     /* id: service; the autoscaler looks */
	EV_INFER_RETRY,     /* id: replica; restart after an OOM kill */
	EV_INFER_TRANSFER,  /* id: request slot, gen: decode service; a prefilled
			     * request's KV cache has arrived (infer_disagg.c) */
	EV_INFER_KINDS
};

enum req_state { RQ_WAITING, RQ_RUNNING, RQ_DONE, RQ_REJECTED };

/* One request of a service in flight, in a slot that a request which
 * finished or was rejected gives to the next arrival. */
struct req {
	sim_time arrival;
	sim_time ready;    /* tokenized */
	sim_time admitted; /* first admission; SIM_NEVER before */
	sim_time first;    /* first token; SIM_NEVER before */
	sim_time done;     /* SIM_NEVER before */
	int32_t prompt, output;
	int32_t generated; /* survives preemption */
	uint32_t seq;      /* arrival order in its service: the request's id */
	uint8_t state;     /* enum req_state */
	bool slo_met, verified;
	bool kv_in; /* its prompt's KV came from a prefill worker: admission loads it */
};

/* What the requests that left a service leave behind (infer_results adds
 * the ones still in flight at the end). */
struct served {
	int64_t submitted, completed, rejected, tokens, slo_met;
	struct samples ttft, tpot, e2e; /* completed requests (tpot: of more than a token) */
	struct samples queue;           /* admitted requests: first admission - ready */
	double tok_wait;                /* s admitted requests waited for a tokenizer */
	sim_time first_arrival, last_done;
	struct request_record *rows; /* output.requests: one per request that left */
	size_t n_rows, cap_rows;
};

/* A running sequence of a replica. */
struct seq {
	uint32_t req;
	int32_t target; /* tokens to prefill: prompt (+ generated, after a preemption) */
	int32_t kv;     /* tokens in the KV cache */
	int32_t generated, output;
	int32_t blocks; /* KV blocks held */
	int32_t sched;  /* tokens computed in the current iteration */
};

enum rep_state { RS_UNUSED, RS_PENDING, RS_STARTING, RS_READY, RS_DRAINING, RS_BACKOFF };

struct replica {
	int32_t svc;
	uint8_t state; /* enum rep_state */
	bool busy;     /* an iteration is in flight */
	bool active;   /* counted in the activity gauges */
	uint16_t gen;  /* of the live iteration or wake-up event */
	uint16_t life; /* of the slot's current pod: its ready and retry events */
	struct cluster_grant grant;
	int32_t pool;
	double memory;      /* per GPU */
	double eng_w, sm_w; /* per GPU while active */
	struct roofline roof;
	int64_t blocks, free_blocks;
	/* waiting requests: a ring of request indices */
	uint32_t *wait;
	uint32_t wait_head, wait_n, wait_cap;
	struct seq *run; /* max_batch, in admission order */
	uint32_t *ended; /* max_batch: requests an iteration's end completes (end_iteration) */
	int32_t n_run;
	int64_t outstanding; /* waiting + running */
	sim_time *tok_free;  /* per tokenizer worker: free from then (in infer.tok) */
	sim_time wake_at;    /* of the pending wake-up; SIM_NEVER: none */
	/* the iteration in flight: its exclusive work left (µs) at rate since last */
	double remaining, rate, u;
	sim_time iter_start, last;
	int32_t restarts;
	bool doomed;            /* starting, it cannot serve: it crashes as start-up ends */
	bool contended;         /* co-tenants can slow its iterations (sharing_contended of
				 * its pool's sharing and its request), from its placement */
	sim_time ready_since;   /* SIM_NEVER: not serving */
	sim_time pending_since; /* when it last began to wait for placement */
	bool reasoned;          /* pending, it carries its service's FitError (reasons.h) */
	double busy_us, ready_us;
	double idle_w, busy_w; /* power of its GPUs serving, and added while in an iteration */
	double energy_j;       /* of the intervals closed in busy_us and ready_us */
	double demand;         /* GPUs' worth in the demand gauge */
	sim_time link_free;    /* a prefill worker's link is free from then (infer_disagg.c) */
};

struct service {
	int32_t w; /* workload index */
	const struct workload_spec *ws;
	const struct inference_spec *is;
	struct request_stream stream;
	struct req *reqs; /* slots: requests in flight, and free ones */
	size_t n_reqs, cap_reqs;
	uint32_t *free_reqs; /* free slots, a stack */
	size_t n_free, cap_free;
	struct served served;
	uint32_t *backlog; /* ring: requests waiting for a ready replica */
	uint32_t back_head, back_n, back_cap;
	int32_t first_rep, n_reps; /* slots in infer.reps */
	int32_t rr;                /* round-robin cursor */
	int32_t *history;          /* autoscaler recommendations, a ring */
	int32_t n_history, history_at;
	bool arriving;
	int64_t outstanding; /* arrived, not done or rejected */
	int64_t preemptions;
	int64_t oom_kills;  /* replicas killed for overflowing VRAM */
	int64_t evicted;    /* replicas whose node was taken away (spot, scale-down) */
	double wait_max;    /* s, the longest a replica waited to be placed */
	int64_t verified;   /* requests within SLO that passed quality */
	double demand_unit; /* GPUs' worth of one replica before placement */
	uint64_t quality_seed;
	/* Disaggregated serving (infer_disagg.c): the prefill workers are the
	 * front service, the decode workers the service right after it. */
	int32_t front;            /* the service its requests count in: itself, or its prefill */
	int32_t decode;           /* a prefill service's decode service; -1: none */
	struct disagg_state *dis; /* the front's: its roles' specs, transfers */
	bool stop_scope;          /* its requests count for the stop rule (infer_set_stop) */
};

struct infer {
	const struct scenario *sc;
	struct infer_host h;
	struct service *svcs;
	size_t n_svcs;
	struct replica *reps;
	size_t n_reps;
	sim_time *tok;              /* tokenizer workers of every replica */
	int32_t *why;               /* a failed placement's node counts per reason */
	double *gpu_eng, *gpu_sm;   /* per GPU: sums over active replicas, uncapped */
	int64_t pending;            /* replicas pending placement */
	unsigned news;              /* INFER_ flags since the last infer_news */
	struct samples_budget held; /* latencies the services hold exactly */
	sim_time progress_at;       /* the last arrival or completion (INFER_PROGRESS) */
	uint16_t ev;                /* the engine's type of EV_INFER_ARRIVAL; the rest follow */
	struct {                    /* the stop rule (infer_set_stop); on false: none */
		bool on;
		enum infer_figure figure;
		double late; /* a value above it is late */
		int64_t need, n_late;
	} stop;
};

/* A replica of s failed placement with the node counts in in->why
 * (infer_reasons.c). */
void infer_pending_failed(struct infer *in, const struct service *s);

/* Pending replica r leaves pending (placed, or scaled away): its service's
 * message no longer counts it. */
void infer_left_pending(struct infer *in, struct replica *r);

static inline sim_time now_of(const struct infer *in) { return in->h.engine->now; }

/* Schedules the module's event of kind k at t. */
static inline void infer_push(struct infer *in, sim_time t, enum infer_event k, uint32_t id,
			      uint16_t gen)
{
	engine_push(in->h.engine, t, (uint16_t)(in->ev + k), id, gen);
}

/* Adds request q of service s to what s served: its figures, and its row
 * with output.requests (infer_results.c). */
void infer_served_add(struct infer *in, struct service *s, const struct req *q);
/* Request id of s leaves in state st (done or rejected): whether it met the
 * SLO and passed its quality draw, then what it served (infer_results.c). */
void infer_finish_request(struct infer *in, struct service *s, uint32_t id, enum req_state st);
void infer_served_free(struct served *v);

/* infer.c: a gauge of pool and workload w (-1: none) moves by delta;
 * replica r waits for room; r gives back its pod and GPUs. */
void infer_gauge(struct infer *in, int32_t pool, int32_t w, enum gauge g, double delta);
void infer_make_pending(struct infer *in, struct replica *r);
void infer_release(struct infer *in, struct replica *r);
/* infer_autoscale.c: one autoscaling round of service s (EV_INFER_SCALE). */
void infer_on_scale(struct infer *in, struct service *s);

/* Whether the router of a routed service sends a prompt of this length to
 * the group of is (scenario.h); every prompt for a service without groups. */
static inline bool infer_route_takes(const struct inference_spec *is, int64_t prompt)
{
	return !is->service || (prompt > is->prompt_lo && prompt <= is->prompt_hi);
}

/* infer.c: request id of s goes to a ready replica (or waits at the router). */
void infer_submit(struct infer *in, struct service *s, uint32_t id);
/* A free request slot of s. */
uint32_t infer_new_slot(struct service *s);

/* infer_disagg.c: a disaggregated workload's services and replicas; s (just
 * set up with the workload's spec) becomes its prefill service and the next
 * slot of in->svcs its decode service; a sequence whose prefill ended on a
 * prefill worker leaves for a decode worker; a prefill worker's iteration
 * ends (its finished prefills leave); the KV cache arrived; the
 * per-role metrics of front service s; its state freed. */
size_t infer_disagg_services(const struct workload_spec *ws);
size_t infer_disagg_replicas(const struct workload_spec *ws);
void infer_disagg_split(struct infer *in, struct service *s);
void infer_disagg_handoff(struct infer *in, struct replica *r, const struct seq *v);
void infer_disagg_end(struct infer *in, struct replica *r);
void infer_disagg_on_transfer(struct infer *in, uint32_t id, uint16_t decode);
void infer_disagg_results(struct infer *in, struct results *out, const struct service *s);
void infer_disagg_free(struct service *s);

static inline int64_t blocks_for(int64_t tokens) { return (tokens + BLOCK - 1) / BLOCK; }

static inline struct service *svc_of(struct infer *in, const struct replica *r)
{
	return &in->svcs[r->svc];
}

#endif
