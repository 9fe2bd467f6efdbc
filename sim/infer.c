/*
 * infer.c - continuous-batching inference servers (see infer.h).
 *
 * The server (one per replica, vLLM-like, v0 block manager with chunked
 * prefill).  Requests wait in FIFO order.  Every iteration is planned at its
 * start, in this order, within a budget of max_batched_tokens tokens:
 *   1. decode: every running sequence whose prompt is in the KV cache gets
 *      one token.  When its next token needs a new KV block and none is
 *      free, the most recently admitted running sequence is preempted
 *      (recompute: its blocks are freed and it goes back to the head of the
 *      queue; when readmitted it prefills its prompt and the tokens it had
 *      generated, and continues);
 *   2. chunked prefill: sequences part-way through their prompt continue;
 *   3. admission: waiting requests whose tokenization is done join while
 *      max_batch, the token budget and the free KV blocks allow; a request
 *      is given the blocks of its whole prompt when admitted, and a first
 *      chunk of it (FCFS: a head that does not fit stops admission).
 * The iteration takes the roofline time of that work (roofline.h: prefill
 * chunks with their cached prefixes, one decode token per sequence at its
 * context), rounded to the microsecond.  When it ends, each sequence whose
 * prefill completed or that decoded gets one token (the first one is its
 * TTFT); a sequence with all its output tokens completes and frees its
 * blocks.  The next iteration starts at once while there is work.
 *
 * KV capacity: footprint.h's blocks of 16 tokens in the memory left after
 * weights and runtime overhead; the memory is infer_server_memory (below).
 * A request whose prompt + output exceeds the whole cache is rejected on
 * arrival, as vLLM rejects requests longer than max_model_len.
 *
 * Tokenization: one CPU tokenizer per replica (vLLM's API server process),
 * FIFO, `tokenize` per request: a request is ready for admission when its
 * turn on the tokenizer ends.  At high rates it is the bottleneck, and no
 * GPU helps (docs/diagnosis.md, "application").
 *
 * Sharing (docs/inference.md).  A replica's roofline uses the share of its
 * unit when alone (infer_unit_share): exclusive and time-slicing {1, 1};
 * MPS {1/R, 1}; fractional {milli/1000, 1}; MIG {instance SMs / GPU SMs, memory slices/8}.
 * Co-tenants that run at the same time slow an iteration down, as
 * processor sharing: an iteration's work (its exclusive time) progresses at
 * a rate that changes whenever a co-tenant starts or stops:
 *   time-slicing  rate = 1 / (B (1 + o)) when B > 1, where B counts the
 *                 replicas in an iteration on the GPU plus the batch pods'
 *                 gpu_busy: the GPU serves the busy contexts in turn, with
 *                 the context-switch overhead o (the pool's, 0.05)
 *   mps, fractional  rate = 1 / max(1, U), U the bandwidth demand of the
 *                 busy co-tenants: for a replica in an iteration
 *                 memory time / iteration time, for a batch pod f x s; the
 *                 SMs are partitioned, HBM bandwidth is not
 *   exclusive, mig   rate 1 (isolated)
 * A tensor-parallel replica runs at the slowest of its GPUs' rates; the
 * all-reduces between its GPUs are in the roofline (roofline.c).
 * Batch pods sharing a GPU with a replica are not slowed by it: the
 * replica's tenant entry has f = 0, because its duty cycle changes every
 * iteration.
 *
 * Activity.  While a replica is in an iteration its GPUs are busy: the
 * engine gauge counts 1 per GPU (its SM share for a MIG instance), SM activity
 * min(sm_share, compute share); GPU-level figures are capped at 1 per GPU.
 * Between iterations the gauges drop, so an idle server holding a whole GPU
 * shows its real duty cycle (a few percent at low load).
 *
 * Routing: round-robin over the ready replicas, or least outstanding
 * (waiting + running, lowest replica on ties).  With no ready replica,
 * requests wait at the router.
 *
 * Replicas are pods placed like batch pods (placement.h), before batch work
 * in each scheduling pass.  The initial replicas are ready at time 0; a
 * replica placed later (pending for room, autoscaled, restarted after an
 * OOM kill) is ready after the workload's `startup` plus loading its
 * weights per GPU at load_bandwidth (default 2 GB/s).  Under time-slicing
 * memory is not isolated: replicas whose memory overflows the GPU are OOM
 * killed and restarted with the kubelet's backoff (the workload's
 * restart.backoff, 10 s, doubling to 5 min), for ever, as a Deployment's
 * pods are; so is a server whose unit cannot hold one typical request's KV
 * cache (vLLM refuses to start).
 *
 * Autoscaling (infer_autoscale.c; HPA-like, on waiting requests): every
 * `interval` (15 s), with W requests waiting (at the router and on the
 * ready replicas, not yet admitted) and N ready replicas, desired =
 * ceil(current x (W/N) / target_queue), unchanged within 10 % of the
 * target, clamped to [min, max]; a scale-down takes the highest recommendation of the last
 * scale_down_window (5 min).  Scaling down drains the replica with the
 * fewest outstanding requests (pending ones first): it takes no new
 * requests and frees its GPUs after its last one.
 *
 * Requests: TTFT = first token - arrival (tokenization, queueing and
 * prefill included); TPOT = (done - first token) / (output - 1); e2e =
 * done - arrival.  A request meets the SLO when every bound given holds;
 * it is verified when it also passes its quality draw (a hash of the seed,
 * the workload and the request: independent of event order).
 */
#include "gpuplan/infer.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/catalog_specs.h"
#include "gpuplan/requests.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_int.h"

/* --- the server model's inputs ------------------------------------------- */

/* A replica's pod, as the scheduler sees it. */
static struct pod_request pod_of(const struct service *s)
{
	return (struct pod_request){s->w, s->ws->request == REQUEST_GPUS ? s->ws->gpus : 1, 0,
				    false, 0};
}

sim_time infer_iteration_time(double seconds)
{
	/* llround without its call (half away from zero) below 2^52 µs, where
	 * x - trunc(x) is exact; llround above, and for what is not a number */
	double x = seconds * (double)SIM_SECOND;
	bool fits = x >= 0 && x < 0x1p52;
	sim_time us = fits ? (sim_time)x : llround(x);
	us += fits && x - (double)us >= 0.5;
	return us < 1 ? 1 : us;
}

/* The memory of the pod's unit on one GPU (no isolation: the whole GPU). */
static double unit_bytes(const struct pool_spec *p, const struct workload_spec *w)
{
	double isolated = scenario_unit_memory(p, w);
	return isolated > 0 ? isolated : p->gpu->memory_bytes;
}

double infer_server_memory(const struct pool_spec *p, const struct workload_spec *w)
{
	const struct inference_spec *is = w->inference;
	double unit = unit_bytes(p, w);
	if (is->vram_given)
		return w->vram_bytes;
	if (is->memory_fraction > 0)
		return is->memory_fraction * unit;
	struct footprint fp;
	footprint_compute(w->model, (enum quant)w->quantization, (enum quant)is->kv_cache,
			  is->tensor_parallel, unit, &fp);
	double all =
		fp.weights_per_gpu + fp.overhead_per_gpu +
		(double)(is->max_batch * blocks_for(is->context) * BLOCK) * fp.kv_bytes_per_token;
	return all < unit ? all : unit;
}

struct gpu_share infer_unit_share(const struct pool_spec *p, const struct workload_spec *w)
{
	struct sharing_ask a = scenario_ask(w);
	return (struct gpu_share){sharing_compute(&p->sharing, p->gpu, &a),
				  sharing_memory_share(&p->sharing, &a)};
}

/* --- gauges ----------------------------------------------------------------- */

/* Moves gauge g of scope all, the pool (>= 0) and the service's workload (>= 0). */
void infer_gauge(struct infer *in, int32_t pool, int32_t w, enum gauge g, double delta)
{
	sim_time now = now_of(in);
	const struct scenario *sc = in->sc;
	collect_add(in->h.collect, 0, g, delta, now);
	if (pool >= 0)
		collect_add(in->h.collect, collect_scope_pool(sc, (size_t)pool), g, delta, now);
	if (w >= 0)
		collect_add(in->h.collect, collect_scope_workload(sc, (size_t)w), g, delta, now);
}

/* Moves one of the server gauges (requests, KV blocks) of the replica's
 * workload and of all: they are per model, as vLLM's, and a request
 * waiting at the router has no pool yet. */
static void server_gauge(struct infer *in, const struct replica *r, enum gauge g, double delta)
{
	infer_gauge(in, -1, svc_of(in, r)->w, g, delta);
}

/* What a placed replica holds, in and out of the gauges (as a batch pod's). */
static void hold_gauges(struct infer *in, const struct replica *r, double sign)
{
	const struct workload_spec *ws = svc_of(in, r)->ws;
	const struct price *price = &in->sc->pools[r->pool].price;
	int32_t w = svc_of(in, r)->w;
	double gpus = __builtin_popcountll(r->grant.gpu_mask);
	infer_gauge(in, r->pool, w, GAUGE_ALLOCATED, sign * r->grant.equivalent);
	infer_gauge(in, r->pool, w, GAUGE_VRAM, sign * gpus * r->memory / GP_GIB);
	infer_gauge(in, r->pool, w, GAUGE_RUNNING, sign);
	infer_gauge(in, r->pool, w, GAUGE_CPU, sign * ws->cpu);
	infer_gauge(in, r->pool, w, GAUGE_RAM, sign * ws->memory_bytes / GP_GIB);
	const struct pool_spec *ps = &in->sc->pools[r->pool];
	double gpu_rate =
		scenario_gpu_rate(ps, r->grant.first_gpu - in->h.cluster->pools[r->pool].first_gpu,
				  r->grant.gpu_mask, r->grant.equivalent);
	infer_gauge(in, r->pool, w, GAUGE_GPU_COST, sign * gpu_rate);
	infer_gauge(in, r->pool, w, GAUGE_CHARGED,
		    sign * r->grant.equivalent * sharing_charge(&ps->sharing));
	infer_gauge(in, r->pool, w, GAUGE_CPU_COST, sign * ws->cpu * price->cpu_hour);
	infer_gauge(in, r->pool, w, GAUGE_RAM_COST,
		    sign * ws->memory_bytes / GP_GIB * price->gib_hour);
	collect_cost_move(
		in->h.collect, (size_t)w, r->pool, r->grant.node,
		(const double[]){sign * gpu_rate, sign * ws->cpu * price->cpu_hour,
				 sign * ws->memory_bytes / GP_GIB * price->gib_hour,
				 sign * r->grant.equivalent * sharing_charge(&ps->sharing),
				 sign * ws->cpu, sign * ws->memory_bytes / GP_GIB},
		now_of(in));
}

/* The replica starts or stops counting in the activity gauges. */
static void set_active(struct infer *in, struct replica *r, bool active)
{
	if (r->active == active)
		return;
	r->active = active;
	double sign = active ? 1 : -1;
	const struct node *nd = &in->h.cluster->nodes[r->grant.node];
	double eng = 0, sm = 0;
	for (int i = 0; i < nd->gpus; i++) {
		if (!(r->grant.gpu_mask >> i & 1))
			continue;
		size_t g = (size_t)(nd->first_gpu + i);
		double e0 = fmin(1, in->gpu_eng[g]), s0 = fmin(1, in->gpu_sm[g]);
		in->gpu_eng[g] += sign * r->eng_w;
		in->gpu_sm[g] += sign * r->sm_w;
		if (in->gpu_eng[g] < 1e-12)
			in->gpu_eng[g] = in->gpu_sm[g] = 0; /* float dust */
		eng += fmin(1, in->gpu_eng[g]) - e0;
		sm += fmin(1, in->gpu_sm[g]) - s0;
	}
	double gpus = __builtin_popcountll(r->grant.gpu_mask);
	int32_t w = svc_of(in, r)->w;
	infer_gauge(in, r->pool, -1, GAUGE_ENGINE, eng);
	infer_gauge(in, r->pool, -1, GAUGE_SM, sm);
	/* a MIG instance's engine activity is over the instance (DCGM's GPU
	 * instance metrics), as a batch pod's */
	bool mig = in->sc->pools[r->pool].sharing.mode == SHARING_MIG;
	collect_add(in->h.collect, collect_scope_workload(in->sc, (size_t)w), GAUGE_ENGINE,
		    sign * (mig ? r->grant.equivalent : gpus * r->eng_w), now_of(in));
	collect_add(in->h.collect, collect_scope_workload(in->sc, (size_t)w), GAUGE_SM,
		    sign * gpus * r->sm_w, now_of(in));
}

/* --- rates under sharing ---------------------------------------------------- */

static const struct sharing *sharing_of(const struct infer *in, const struct replica *r)
{
	return &in->sc->pools[r->pool].sharing;
}

/* The rate of r's iteration on GPU g (see the top of the file). */
static double gpu_rate(const struct infer *in, const struct replica *r, const struct gpu *g)
{
	const struct sharing *sh = sharing_of(in, r);
	double load = 0;
	for (uint16_t k = 0; k < g->n_tenants; k++) {
		const struct tenant *t = &GPU_TENANTS(g)[k];
		if (!infer_is_tenant(t->job)) {
			load += sh->mode == SHARING_TIME_SLICING ? t->f : t->f * t->s;
			continue;
		}
		const struct replica *x = &in->reps[t->job & ~INFER_TENANT_BIT];
		if (x->busy)
			load += sh->mode == SHARING_TIME_SLICING ? 1 : x->u;
	}
	if (sh->mode == SHARING_TIME_SLICING)
		return load > 1 + 1e-12 ? 1.0 / (load * (1 + sh->overhead)) : 1;
	return load > 1 ? 1.0 / load : 1;
}

static double replica_rate(const struct infer *in, const struct replica *r)
{
	if (!r->contended)
		return 1;
	const struct node *nd = &in->h.cluster->nodes[r->grant.node];
	double rate = 1;
	for (int i = 0; i < nd->gpus; i++)
		if (r->grant.gpu_mask >> i & 1)
			rate = fmin(rate, gpu_rate(in, r, &in->h.cluster->gpus[nd->first_gpu + i]));
	return rate;
}

/* Schedules the end of r's iteration from its work left and rate. */
static void push_end(struct infer *in, struct replica *r)
{
	sim_time now = now_of(in);
	sim_time end = now + (sim_time)ceil(r->remaining / r->rate - 1e-9);
	r->gen++;
	infer_push(in, end, EV_INFER_ITERATION, (uint32_t)(r - in->reps), r->gen);
}

/* r's co-tenants changed: account its progress so far, then go on at the new rate. */
static void rerate(struct infer *in, struct replica *r)
{
	if (!r->busy)
		return;
	double rate = replica_rate(in, r);
	if (rate == r->rate)
		return;
	sim_time now = now_of(in);
	r->remaining = fmax(0, r->remaining - (double)(now - r->last) * r->rate);
	r->last = now;
	r->rate = rate;
	push_end(in, r);
}

/* After r started or stopped an iteration: its busy co-tenants' rates. */
static void neighbours_changed(struct infer *in, const struct replica *r)
{
	if (!r->contended)
		return;
	const struct node *nd = &in->h.cluster->nodes[r->grant.node];
	for (int i = 0; i < nd->gpus; i++) {
		if (!(r->grant.gpu_mask >> i & 1))
			continue;
		const struct gpu *g = &in->h.cluster->gpus[nd->first_gpu + i];
		for (uint16_t k = 0; k < g->n_tenants; k++) {
			uint32_t id = GPU_TENANTS(g)[k].job;
			if (infer_is_tenant(id) && &in->reps[id & ~INFER_TENANT_BIT] != r)
				rerate(in, &in->reps[id & ~INFER_TENANT_BIT]);
		}
	}
}

/* --- queues ----------------------------------------------------------------- */

static void ring_grow(uint32_t **ring, uint32_t *head, uint32_t n, uint32_t *cap)
{
	uint32_t old = *cap, grown = old ? 2 * old : 64;
	uint32_t *next = gp_xmalloc(grown * sizeof *next);
	for (uint32_t i = 0; i < n; i++)
		next[i] = (*ring)[(*head + i) % old];
	free(*ring);
	*ring = next;
	*head = 0;
	*cap = grown;
}

static void push_back(uint32_t **ring, uint32_t *head, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap)
		ring_grow(ring, head, *n, cap);
	(*ring)[(*head + *n) % *cap] = v;
	(*n)++;
}

static void push_front(uint32_t **ring, uint32_t *head, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap)
		ring_grow(ring, head, *n, cap);
	*head = (*head + *cap - 1) % *cap;
	(*ring)[*head] = v;
	(*n)++;
}

static uint32_t pop_front(uint32_t *ring, uint32_t *head, uint32_t *n, uint32_t cap)
{
	uint32_t v = ring[*head];
	*head = (*head + 1) % cap;
	(*n)--;
	return v;
}

/* --- the server ------------------------------------------------------------- */

/* Sends the newest running sequence back to the head of the queue. */
static void preempt_newest(struct infer *in, struct replica *r)
{
	struct service *s = svc_of(in, r);
	assert(r->n_run > 0);
	struct seq *v = &r->run[--r->n_run];
	struct req *q = &s->reqs[v->req];
	r->free_blocks += v->blocks;
	q->generated = v->generated;
	q->state = RQ_WAITING;
	push_front(&r->wait, &r->wait_head, &r->wait_n, &r->wait_cap, v->req);
	s->preemptions++;
	server_gauge(in, r, GAUGE_REQ_RUNNING, -1);
	server_gauge(in, r, GAUGE_REQ_WAITING, 1);
	server_gauge(in, r, GAUGE_KV_USED, -v->blocks);
	collect_preempted(in->h.collect, 0, now_of(in));
	collect_preempted(in->h.collect, collect_scope_workload(in->sc, (size_t)s->w), now_of(in));
}

/* The decodes of an iteration (step 1): their count, Σ kv and the KV blocks
 * they took, and whether some sequence is part-way through its prompt. */
struct decodes {
	int32_t n, grown;
	int64_t keys;
	bool partial;
};

/* Plans the decodes of the running sequences within budget. */
static struct decodes plan_decodes(struct infer *in, struct replica *r, int32_t budget)
{
	/* This loop runs for every running sequence at every iteration: the
	 * budget, the flag and the sum stay in registers (through the pointers
	 * the compiler would store them at each sequence), and Σ context is
	 * summed in integers, which is the same double as summing doubles as
	 * long as it stays below 2^53. */
	int32_t left = budget, n_run = r->n_run, grown = 0;
	int64_t keys = 0;
	bool part = false;
	struct seq *run = r->run; /* n_run is read again only after a preemption */
	for (int32_t i = 0; i < n_run; i++) {
		struct seq *q = &run[i];
		int32_t kv = q->kv;
		if (kv < q->target || left == 0) { /* prefilling, or no budget left */
			part |= kv < q->target;
			q->sched = 0;
			continue;
		}
		if (kv >= q->blocks * BLOCK) { /* blocks_for(kv + 1) > blocks */
			while (r->free_blocks == 0 && r->n_run > i)
				preempt_newest(in, r);
			n_run = r->n_run;
			if (i >= n_run)
				break; /* it was the newest */
			q->blocks++;
			r->free_blocks--;
			grown++;
		}
		q->sched = 1;
		left--;
		keys += kv;
	}
	return (struct decodes){budget - left, grown, keys, part}; /* one token each */
}

/* Chunked prefills (step 2) and admissions (step 3) into w. */
static void plan_prefills(struct infer *in, struct replica *r, int32_t budget, bool partial,
			  struct roofline_work *w)
{
	struct service *s = svc_of(in, r);
	sim_time now = now_of(in);
	for (int32_t i = 0; partial && i < r->n_run && budget > 0; i++) {
		struct seq *q = &r->run[i];
		if (q->kv >= q->target)
			continue;
		q->sched = q->target - q->kv < budget ? q->target - q->kv : budget;
		budget -= q->sched;
		roofline_add_prefill(w, q->sched, q->kv);
	}
	while (budget > 0 && r->n_run < s->is->max_batch && r->wait_n) {
		uint32_t id = r->wait[r->wait_head];
		struct req *q = &s->reqs[id];
		int32_t target = q->prompt + q->generated;
		int64_t need = blocks_for(target);
		if (q->ready > now || need > r->free_blocks)
			break;
		pop_front(r->wait, &r->wait_head, &r->wait_n, r->wait_cap);
		r->free_blocks -= need;
		assert(r->free_blocks >= 0 && "no KV block handed out twice");
		q->state = RQ_RUNNING;
		server_gauge(in, r, GAUGE_REQ_WAITING, -1);
		server_gauge(in, r, GAUGE_REQ_RUNNING, 1);
		server_gauge(in, r, GAUGE_KV_USED, (double)need);
		if (q->admitted == SIM_NEVER)
			q->admitted = now;
		/* A decode worker loads the KV a prefill worker sent and computes the
		 * last prompt token to sample the first one (infer_disagg.c). */
		int32_t kv = q->kv_in ? target - 1 : 0;
		q->kv_in = false;
		int32_t chunk = target - kv < budget ? target - kv : budget;
		r->run[r->n_run++] =
			(struct seq){id, target, kv, q->generated, q->output, (int32_t)need, chunk};
		budget -= chunk;
		roofline_add_prefill(w, chunk, kv);
	}
}

/* Plans and starts an iteration, with its decodes when the iteration before
 * planned them (d; NULL: not); false when there is nothing to compute. */
static bool start_iteration(struct infer *in, struct replica *r, const struct decodes *d)
{
	int32_t budget = svc_of(in, r)->is->max_batched_tokens;
	struct decodes mine = d ? *d : plan_decodes(in, r, budget);
	d = &mine;
	/* The new blocks move the gauge once: it counts blocks, whole numbers
	 * that add up to the same double in any order, and at the same instant
	 * (a scope touched at an instant it was not touched before would split
	 * its integral, hence no move of 0). */
	if (d->grown)
		server_gauge(in, r, GAUGE_KV_USED, d->grown);
	double ctx = (double)(d->keys + d->n); /* Σ (kv + 1) */
	struct roofline_work w = ROOFLINE_WORK_NONE;
	/* Summed over the decoding sequences: each attends to its context. */
	w.tokens = d->n;
	w.keys = ctx;
	w.kv_read = ctx - d->n;
	plan_prefills(in, r, budget - d->n, d->partial, &w);
	if (w.tokens <= 0)
		return false;
	struct roofline_terms t;
	roofline_terms(&r->roof, &w, &t);
	sim_time now = now_of(in);
	r->busy = true;
	sim_time us = infer_iteration_time(t.total_s);
	r->remaining = (double)us;
	r->u = t.total_s > 0 ? t.memory_s / t.total_s : 0;
	r->iter_start = r->last = now;
	r->wake_at = SIM_NEVER;
	set_active(in, r, true);
	r->rate = replica_rate(in, r);
	/* push_end's end without its division: ceil(us - 1e-9) is us below 2^53 */
	if (r->rate == 1 && us < INT64_C(1) << 53)
		infer_push(in, now + us, EV_INFER_ITERATION, (uint32_t)(r - in->reps), ++r->gen);
	else
		push_end(in, r);
	neighbours_changed(in, r);
	return true;
}

/* Applies the iteration's tokens; completes the sequences that are done.
 * When no decode of the next iteration can find the KV cache full or the
 * budget spent (a decode takes at most a block and a token), the same pass
 * plans them into *next, as plan_decodes would: returns whether it did. */
static bool end_iteration(struct infer *in, struct replica *r, struct decodes *next)
{
	struct service *s = svc_of(in, r);
	sim_time now = now_of(in);
	assert(r->busy && now >= r->iter_start);
	r->busy = false;
	r->busy_us += (double)(now - r->iter_start);
	r->energy_j += (double)(now - r->iter_start) * 1e-6 * r->busy_w;
	if (s->decode >= 0) { /* a prefill worker */
		infer_disagg_end(in, r);
		return false;
	}
	int32_t kept = 0, n_run = r->n_run, done = 0, n = 0, grown = 0;
	int64_t freed = 0, keys = 0;
	struct seq *run = r->run;
	uint32_t *ended = r->ended; /* finished, completed after the pass: no call in it */
	bool plan = r->free_blocks >= n_run && s->is->max_batched_tokens >= n_run, part = false;
	for (int32_t i = 0; i < n_run; i++) {
		struct seq *q = &run[i];
		/* A token when the sequence decoded or its prefill reached the end
		 * of its prompt (kv >= target implies kv + sched >= target). */
		int32_t sched = q->sched, kv = q->kv + sched;
		bool token = sched > 0 && kv >= q->target;
		q->kv = kv;
		q->sched = 0;
		if (token) {
			/* generated survives preemption: 1 is the very first token.
			 * (Only then touch the request: its record is cold.) */
			int32_t generated = ++q->generated;
			if (generated == 1)
				s->reqs[q->req].first = now;
			if (generated >= q->output) {
				freed += q->blocks;
				s->reqs[q->req].generated = generated;
				ended[done++] = q->req;
				continue;
			}
		}
		if (plan && kv < q->target) {
			part = true;
		} else if (plan) {
			int32_t need = kv >= q->blocks * BLOCK; /* blocks_for(kv + 1) > blocks */
			q->blocks += need;
			grown += need;
			q->sched = 1;
			n++;
			keys += kv;
		}
		if (kept != i) /* (a copy onto itself stalls on the fields just written) */
			run[kept] = *q;
		kept++;
	}
	r->n_run = kept;
	r->free_blocks += freed;
	r->outstanding -= done;
	/* in the pass's order; a request's end reads nothing the pass wrote but its own */
	for (int32_t k = 0; k < done; k++)
		infer_finish_request(in, s, ended[k], RQ_DONE);
	if (done) { /* whole numbers, moved once (see start_iteration) */
		server_gauge(in, r, GAUGE_REQ_RUNNING, -done);
		server_gauge(in, r, GAUGE_KV_USED, (double)-freed);
	}
	assert(r->free_blocks <= r->blocks && r->outstanding >= kept);
	r->free_blocks -= grown;
	*next = (struct decodes){n, grown, keys, part};
	return plan;
}

/* Starts the next iteration (with decodes d, or NULL), or waits for the
 * head's tokenization, or idles. */
static void kick(struct infer *in, struct replica *r, const struct decodes *d)
{
	if (r->busy)
		return;
	if (start_iteration(in, r, d))
		return;
	if (r->active) {
		set_active(in, r, false);
		neighbours_changed(in, r);
	}
	if (r->state == RS_DRAINING && r->outstanding == 0) {
		infer_release(in, r);
		return;
	}
	if (!r->n_run && r->wait_n) {
		sim_time ready = svc_of(in, r)->reqs[r->wait[r->wait_head]].ready;
		if (ready > now_of(in) && r->wake_at != ready) {
			r->wake_at = ready;
			r->gen++;
			infer_push(in, ready, EV_INFER_ITERATION, (uint32_t)(r - in->reps), r->gen);
		}
	}
}

static void on_iteration(struct infer *in, uint32_t id, uint16_t gen)
{
	struct replica *r = &in->reps[id];
	if (gen != r->gen)
		return; /* superseded: re-rated, or a later wake-up */
	struct decodes d;
	bool planned = false;
	if (r->busy)
		planned = end_iteration(in, r, &d);
	else
		r->wake_at = SIM_NEVER;
	kick(in, r, planned ? &d : NULL);
}

/* --- routing ---------------------------------------------------------------- */

/* Hands request id to replica r: tokenizer, then the queue.  The caller
 * kicks r once every request of the instant is queued, so that requests
 * arriving together are batched together. */
static void dispatch(struct infer *in, struct replica *r, uint32_t id)
{
	struct service *s = svc_of(in, r);
	struct req *q = &s->reqs[id];
	sim_time now = now_of(in);
	assert(r->state == RS_READY);
	if (blocks_for((int64_t)q->prompt + q->output) > r->blocks) {
		infer_finish_request(in, s, id, RQ_REJECTED); /* longer than max_model_len */
		server_gauge(in, r, GAUGE_REQ_WAITING, -1);
		return;
	}
	if (!q->kv_in) /* (a decode worker's keeps its prefill worker's: the queue metric's) */
		q->ready = now;
	if (s->is->tokenize > 0) {
		/* FIFO over the workers: the one free first takes the request, so
		 * ready times stay in arrival order. */
		int32_t first = 0;
		for (int32_t k = 1; k < s->is->tokenize_workers; k++)
			if (r->tok_free[k] < r->tok_free[first])
				first = k;
		q->ready = (r->tok_free[first] > now ? r->tok_free[first] : now) + s->is->tokenize;
		r->tok_free[first] = q->ready;
	}
	push_back(&r->wait, &r->wait_head, &r->wait_n, &r->wait_cap, id);
	r->outstanding++;
}

static void kick_all(struct infer *in, struct service *s)
{
	for (int32_t k = 0; k < s->n_reps; k++)
		if (in->reps[s->first_rep + k].state == RS_READY)
			kick(in, &in->reps[s->first_rep + k], NULL);
}

/* The ready replica the router picks; NULL when none is ready. */
static struct replica *route(struct infer *in, struct service *s)
{
	struct replica *best = NULL;
	for (int32_t k = 0; k < s->n_reps; k++) {
		int32_t i = s->is->route == ROUTE_ROUND_ROBIN ? (s->rr + k) % s->n_reps : k;
		struct replica *r = &in->reps[s->first_rep + i];
		if (r->state != RS_READY)
			continue;
		if (s->is->route == ROUTE_ROUND_ROBIN) {
			s->rr = (i + 1) % s->n_reps;
			return r;
		}
		if (!best || r->outstanding < best->outstanding)
			best = r;
	}
	return best;
}

static void drain_backlog(struct infer *in, struct service *s)
{
	while (s->back_n) {
		struct replica *r = route(in, s);
		if (!r)
			return;
		dispatch(in, r, pop_front(s->backlog, &s->back_head, &s->back_n, s->back_cap));
	}
	kick_all(in, s);
}

/* Request id waits: on the replica the router picks, else in the backlog. */
static void enqueue(struct infer *in, struct service *s, uint32_t id)
{
	infer_gauge(in, -1, s->w, GAUGE_REQ_WAITING, 1);
	struct replica *r = route(in, s);
	if (r)
		dispatch(in, r, id);
	else
		push_back(&s->backlog, &s->back_head, &s->back_n, &s->back_cap, id);
}

void infer_submit(struct infer *in, struct service *s, uint32_t id)
{
	enqueue(in, s, id);
	kick_all(in, s);
}

uint32_t infer_new_slot(struct service *s)
{
	if (s->n_free)
		return s->free_reqs[--s->n_free];
	GP_GROW(s->reqs, s->cap_reqs, s->n_reqs + 1);
	return (uint32_t)s->n_reqs++;
}

static void on_arrival(struct infer *in, struct service *s)
{
	sim_time now = now_of(in);
	struct new_request nr;
	while (arrivals_requests_take(&s->stream, now, &nr)) {
		if (!infer_route_takes(s->is, nr.prompt))
			continue; /* another group's request (the service's one stream) */
		uint32_t id = infer_new_slot(s);
		if (s->served.first_arrival == SIM_NEVER)
			s->served.first_arrival = now;
		uint32_t seq = (uint32_t)s->served.submitted++;
		s->reqs[id] = (struct req){now,       now,       SIM_NEVER, SIM_NEVER, SIM_NEVER,
					   nr.prompt, nr.output, 0,         seq,       RQ_WAITING,
					   false,     false,     false};
		s->outstanding++;
		assert(s->n_reqs - s->n_free == (size_t)s->outstanding &&
		       "a slot per request in flight");
		enqueue(in, s, id);
	}
	kick_all(in, s);
	in->news |= INFER_PROGRESS;
	in->progress_at = now;
	if (s->stream.next != SIM_NEVER)
		infer_push(in, s->stream.next, EV_INFER_ARRIVAL, (uint32_t)(s - in->svcs), 0);
	else
		s->arriving = false;
}

/* --- replicas as pods ------------------------------------------------------- */

static bool overflows(const struct infer *in, const struct replica *r)
{
	const struct node *nd = &in->h.cluster->nodes[r->grant.node];
	return sharing_overflows(sharing_of(in, r), in->sc->pools[r->pool].gpu->memory_bytes,
				 &in->h.cluster->vram_used[nd->first_gpu], r->grant.gpu_mask);
}

/* The server on its unit: memory, KV blocks, roofline, activity weights. */
static void set_up_server(struct infer *in, struct replica *r)
{
	const struct service *s = svc_of(in, r);
	const struct workload_spec *ws = s->ws;
	const struct pool_spec *p = &in->sc->pools[r->pool];
	struct gpu_share share = infer_unit_share(p, ws);
	struct footprint fp;
	footprint_compute(ws->model, (enum quant)ws->quantization, (enum quant)s->is->kv_cache,
			  s->is->tensor_parallel, r->memory, &fp);
	r->blocks = r->free_blocks = fp.kv_blocks;
	struct roofline_gpu k;
	roofline_gpu_defaults(p->gpu, &k);
	if (s->is->step_overhead_given)
		k.step_overhead_s = sim_seconds(s->is->step_overhead);
	roofline_init(&r->roof, ws->model, (enum quant)ws->quantization,
		      (enum quant)s->is->kv_cache, p->gpu, &k, share, s->is->tensor_parallel);
	r->eng_w = p->sharing.mode == SHARING_MIG ? share.compute : 1;
	r->sm_w = fmin(ws->sm_share, share.compute);
	/* Power (docs/gpus.md): its GPUs' worth at held-idle while serving, plus
	 * up to TDP while an iteration runs. */
	const struct gpu_specs *g = catalog_gpu_specs(p->gpu);
	r->idle_w = g ? r->grant.equivalent * g->idle_watts : 0;
	r->busy_w = g ? r->grant.equivalent * (g->tdp_watts - g->idle_watts) : 0;
	if (!r->run) {
		r->run = gp_xcalloc((size_t)s->is->max_batch, sizeof *r->run);
		r->ended = gp_xcalloc((size_t)s->is->max_batch, sizeof *r->ended);
	}
}

static void become_ready(struct infer *in, struct replica *r)
{
	r->state = RS_READY;
	r->ready_since = now_of(in);
	server_gauge(in, r, GAUGE_KV_TOTAL, (double)r->blocks);
	drain_backlog(in, svc_of(in, r));
}

static uint32_t tenant_of(const struct infer *in, const struct replica *r)
{
	return INFER_TENANT_BIT | (uint32_t)(r - in->reps);
}

/* Places r's pod as the scheduler would, if it fits now.  The cluster then
 * holds the server's memory on each GPU (not the least it needs, which is
 * what placement filtered on) and a tenant with f = 0 (see infer.h). */
static bool take_pod(struct infer *in, struct replica *r)
{
	struct service *s = svc_of(in, r);
	struct pod_request pod = pod_of(s);
	int32_t node;
	if (!placement_plan(in->h.placer, &pod, now_of(in), &node, in->why))
		return false;
	placement_take(in->h.placer, &pod, &node, tenant_of(in, r), &r->grant);
	r->pool = in->h.cluster->nodes[node].pool;
	r->contended = sharing_contended(sharing_of(in, r), s->ws->request);
	r->memory = infer_server_memory(&in->sc->pools[r->pool], s->ws);
	const struct node *nd = &in->h.cluster->nodes[node];
	for (int i = 0; i < nd->gpus; i++) {
		if (!(r->grant.gpu_mask >> i & 1))
			continue;
		struct gpu *g = &in->h.cluster->gpus[nd->first_gpu + i];
		in->h.cluster->vram_used[nd->first_gpu + i] += r->memory - r->grant.vram;
		struct tenant *t = GPU_TENANTS(g);
		for (uint16_t k = 0; k < g->n_tenants; k++)
			if (t[k].job == tenant_of(in, r))
				t[k].f = 0;
	}
	r->grant.vram = r->memory;
	return true;
}

static void release_pod(struct infer *in, struct replica *r)
{
	placement_release(in->h.placer, svc_of(in, r)->w, tenant_of(in, r), &r->grant);
}

/* A pod that cannot serve (VRAM overflow, no room for one KV-cache of the
 * typical request) crashes; the kubelet restarts it after a backoff. */
static void crash(struct infer *in, struct replica *r)
{
	struct service *s = svc_of(in, r);
	release_pod(in, r);
	s->oom_kills++;
	infer_gauge(in, -1, s->w, GAUGE_DEMAND, -r->demand);
	r->demand = 0;
	r->state = RS_BACKOFF;
	if (infer_work_left(in))
		infer_push(in, now_of(in) + sim_backoff(s->ws->restart_backoff, r->restarts++),
			   EV_INFER_RETRY, (uint32_t)(r - in->reps), r->life);
}

/* Tries to place pending replica r now; `initial` replicas serve at once. */
static bool place(struct infer *in, struct replica *r, bool initial)
{
	struct service *s = svc_of(in, r);
	if (!take_pod(in, r))
		return false;
	infer_left_pending(in, r);
	in->pending--;
	r->life++;
	s->wait_max = fmax(s->wait_max, sim_seconds(now_of(in) - r->pending_since));
	infer_gauge(in, -1, s->w, GAUGE_PENDING, -1);
	struct footprint fp;
	footprint_compute(s->ws->model, (enum quant)s->ws->quantization,
			  (enum quant)s->is->kv_cache, s->is->tensor_parallel, r->memory, &fp);
	/* A pod that cannot serve starts up (its image, its weights) and then
	 * crashes: the attempt holds its unit, billed to its workload
	 * (docs/cost.md).  The initial replicas start at once, so they crash at
	 * once. */
	r->doomed = overflows(in, r) || fp.kv_blocks < blocks_for(s->is->context);
	if (r->doomed && initial) {
		crash(in, r);
		return true;
	}
	infer_gauge(in, -1, s->w, GAUGE_DEMAND, r->grant.equivalent - r->demand);
	r->demand = r->grant.equivalent;
	hold_gauges(in, r, +1);
	if (!r->doomed)
		set_up_server(in, r);
	if (initial) {
		become_ready(in, r);
		return true;
	}
	r->state = RS_STARTING;
	double load = footprint_weights_bytes(s->ws->model, (enum quant)s->ws->quantization) /
		      s->is->tensor_parallel / s->is->load_bandwidth;
	sim_time delay = s->ws->startup + (sim_time)llround(load * (double)SIM_SECOND);
	infer_push(in, now_of(in) + delay, EV_INFER_READY, (uint32_t)(r - in->reps), r->life);
	return true;
}

/* A new replica waits for placement. */
void infer_make_pending(struct infer *in, struct replica *r)
{
	struct service *s = svc_of(in, r);
	r->state = RS_PENDING;
	r->pending_since = now_of(in);
	r->demand = s->demand_unit * (s->ws->request == REQUEST_GPUS ? s->ws->gpus : 1);
	in->pending++;
	infer_gauge(in, -1, s->w, GAUGE_PENDING, 1);
	infer_gauge(in, -1, s->w, GAUGE_DEMAND, r->demand);
}

/* Gives the replica's units back (scaled down, idle). */
void infer_release(struct infer *in, struct replica *r)
{
	struct service *s = svc_of(in, r);
	assert(!r->busy && r->outstanding == 0);
	set_active(in, r, false);
	if (r->ready_since != SIM_NEVER) {
		r->ready_us += (double)(now_of(in) - r->ready_since);
		r->energy_j += (double)(now_of(in) - r->ready_since) * 1e-6 * r->idle_w;
		server_gauge(in, r, GAUGE_KV_TOTAL, -(double)r->blocks);
	}
	r->ready_since = SIM_NEVER;
	hold_gauges(in, r, -1);
	infer_gauge(in, -1, s->w, GAUGE_DEMAND, -r->demand);
	release_pod(in, r);
	r->state = RS_UNUSED;
	r->demand = 0;
	in->news |= INFER_FREED;
}

void infer_place_pending(struct infer *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_svcs && in->pending; i++) {
		const struct service *s = &in->svcs[i];
		for (int32_t k = 0; k < s->n_reps; k++) {
			struct replica *r = &in->reps[s->first_rep + k];
			if (r->state == RS_PENDING && !place(in, r, false)) {
				infer_pending_failed(in, s);
				break; /* the next one would not fit either */
			}
		}
	}
}

/* Its node is going (infer.h): requests keep their tokens (recomputed, as
 * after a preemption); the Deployment's new pod is a pending replica. */
void infer_evict(struct infer *in, uint32_t tenant)
{
	struct replica *r = &in->reps[tenant & ~INFER_TENANT_BIT];
	struct service *s = svc_of(in, r);
	bool replace = r->state != RS_DRAINING;
	s->evicted++;
	for (; r->wait_n; r->wait_n--) /* from the tail: the router's queue keeps their order */
		push_front(&s->backlog, &s->back_head, &s->back_n, &s->back_cap,
			   r->wait[(r->wait_head + r->wait_n - 1) % r->wait_cap]);
	while (r->n_run) { /* admitted before the waiting ones: ahead of them */
		struct seq *v = &r->run[--r->n_run];
		s->reqs[v->req].generated = v->generated;
		s->reqs[v->req].state = RQ_WAITING;
		push_front(&s->backlog, &s->back_head, &s->back_n, &s->back_cap, v->req);
		server_gauge(in, r, GAUGE_REQ_RUNNING, -1);
		server_gauge(in, r, GAUGE_REQ_WAITING, 1);
		server_gauge(in, r, GAUGE_KV_USED, -v->blocks);
	}
	r->busy = false, r->outstanding = 0, r->wake_at = SIM_NEVER;
	r->gen++, r->life++; /* its iteration, wake-up and ready events are void */
	for (int32_t k = 0; k < s->is->tokenize_workers; k++)
		r->tok_free[k] = 0;
	if (r->active) {
		set_active(in, r, false);
		neighbours_changed(in, r);
	}
	infer_release(in, r);
	if (replace)
		infer_make_pending(in, r);
	drain_backlog(in, s);
}

/* --- events ----------------------------------------------------------------- */

/* Handles the module's events (engine_register), then tells the run. */
static void on_event(void *ctx, const struct event *ev)
{
	struct infer *in = ctx;
	switch ((enum infer_event)(ev->type - in->ev)) {
	case EV_INFER_ARRIVAL: on_arrival(in, &in->svcs[ev->id]); break;
	case EV_INFER_ITERATION: on_iteration(in, ev->id, ev->gen); break;
	case EV_INFER_READY: {
		struct replica *r = &in->reps[ev->id];
		if (ev->gen != r->life)
			break; /* for an earlier pod of this slot */
		if (r->state == RS_STARTING && r->doomed) {
			r->doomed = false;
			hold_gauges(in, r, -1);
			in->news |= INFER_FREED;
			crash(in, r);
		} else if (r->state == RS_STARTING) {
			become_ready(in, r);
		} else if (r->state == RS_DRAINING && !r->busy && r->outstanding == 0)
			infer_release(in, r);
		break;
	}
	case EV_INFER_SCALE: infer_on_scale(in, &in->svcs[ev->id]); break;
	case EV_INFER_TRANSFER: infer_disagg_on_transfer(in, ev->id, ev->gen); break;
	case EV_INFER_RETRY: {
		struct replica *r = &in->reps[ev->id];
		/* After the last request the run is over: no restart is due. */
		if (r->state == RS_BACKOFF && ev->gen == r->life && infer_work_left(in)) {
			infer_make_pending(in, r);
			infer_place_pending(in);
		}
		break;
	}
	case EV_INFER_KINDS: break;
	}
	in->h.heard(in->h.ctx);
}

bool infer_has_pending(const struct infer *in) { return in && in->pending > 0; }

unsigned infer_news(struct infer *in, sim_time *at)
{
	if (!in)
		return 0;
	unsigned news = in->news;
	in->news = 0;
	*at = in->progress_at;
	return news;
}

/* The service of workload w; NULL when w is not an inference workload. */
static const struct service *service_of(const struct infer *in, size_t w)
{
	for (size_t i = 0; in && i < in->n_svcs; i++)
		if (in->svcs[i].w == (int32_t)w)
			return &in->svcs[i];
	return NULL;
}

struct pod_request infer_replica_pod(const struct infer *in, uint32_t tenant)
{
	return pod_of(&in->svcs[in->reps[tenant & ~INFER_TENANT_BIT].svc]);
}

/* Replicas of s pending for room, and their pod. */
static int32_t pending_of(const struct infer *in, const struct service *s, struct pod_request *pod)
{
	int32_t n = 0;
	for (int32_t k = 0; s && k < s->n_reps; k++)
		n += in->reps[s->first_rep + k].state == RS_PENDING;
	if (n)
		*pod = pod_of(s);
	return n;
}

int32_t infer_pending_replicas(const struct infer *in, size_t w, struct pod_request *pod)
{
	const struct service *s = service_of(in, w);
	int32_t n = pending_of(in, s, pod);
	if (!n && s && s->decode >= 0) /* a disaggregated service: then its decode workers */
		n = pending_of(in, &in->svcs[s->decode], pod);
	return n;
}

int64_t infer_oom_kills(const struct infer *in, size_t w)
{
	const struct service *s = service_of(in, w);
	return s ? s->oom_kills + (s->decode >= 0 ? in->svcs[s->decode].oom_kills : 0) : 0;
}

int64_t infer_verified(const struct infer *in, size_t w)
{
	const struct service *s = service_of(in, w);
	return s ? s->verified : 0;
}

bool infer_work_left(const struct infer *in)
{
	if (!in)
		return false;
	for (size_t i = 0; i < in->n_svcs; i++)
		if (in->svcs[i].arriving || in->svcs[i].outstanding)
			return true;
	return false;
}

/* --- setup ------------------------------------------------------------------ */

struct infer *infer_create(const struct scenario *sc, const struct infer_host *host)
{
	size_t n = 0, reps = 0;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (sc->workloads[w].inference) {
			n += infer_disagg_services(&sc->workloads[w]);
			reps += infer_disagg_replicas(&sc->workloads[w]);
		}
	if (!n)
		return NULL;
	struct infer *in = gp_xcalloc(1, sizeof *in);
	in->sc = sc;
	in->held.max = SAMPLES_EXACT_MAX;
	in->h = *host;
	in->ev = engine_register(host->engine, EV_INFER_KINDS, on_event, NULL, in);
	in->svcs = gp_xcalloc(n, sizeof *in->svcs);
	in->reps = gp_xcalloc(reps, sizeof *in->reps);
	in->gpu_eng = gp_xcalloc(host->cluster->n_gpus, sizeof *in->gpu_eng);
	in->gpu_sm = gp_xcalloc(host->cluster->n_gpus, sizeof *in->gpu_sm);
	in->why = gp_xcalloc(host->placer->n_reasons + 1, sizeof *in->why);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (!ws->inference)
			continue;
		struct service *s = &in->svcs[in->n_svcs++];
		s->w = (int32_t)w;
		s->ws = ws;
		s->is = ws->inference;
		s->first_rep = (int32_t)in->n_reps;
		s->n_reps = s->is->max_replicas;
		in->n_reps += (size_t)s->n_reps;
		arrivals_requests_init(&s->stream, sc, ws);
		s->served.first_arrival = s->served.last_done = SIM_NEVER;
		s->n_history = (int32_t)(s->is->scale_down_window / s->is->scale_interval) + 1;
		s->history = gp_xcalloc((size_t)s->n_history, sizeof *s->history);
		s->quality_seed =
			arrivals_stream_seed(sc->seed ^ UINT64_C(0x7175616c697479), ws->name);
		s->demand_unit = 1;
		for (size_t p = 0; p < sc->n_pools; p++)
			if (placement_equivalent(host->placer, w, p, 1) > 0) {
				s->demand_unit = placement_equivalent(host->placer, w, p, 1);
				break;
			}
		s->front = (int32_t)(s - in->svcs);
		s->decode = -1;
		if (s->is->disagg)
			infer_disagg_split(in, s);
	}
	size_t workers = 0;
	for (size_t i = 0; i < in->n_svcs; i++)
		workers += (size_t)in->svcs[i].n_reps * (size_t)in->svcs[i].is->tokenize_workers;
	in->tok = gp_xcalloc(workers + 1, sizeof *in->tok);
	workers = 0;
	for (size_t i = 0; i < in->n_svcs; i++)
		for (int32_t k = 0; k < in->svcs[i].n_reps; k++) {
			struct replica *r = &in->reps[in->svcs[i].first_rep + k];
			r->svc = (int32_t)i;
			r->ready_since = r->wake_at = SIM_NEVER;
			r->tok_free = in->tok + workers;
			workers += (size_t)in->svcs[i].is->tokenize_workers;
		}
	return in;
}

void infer_start(struct infer *in)
{
	if (!in)
		return;
	/* The services are up from the start: the spans begin with them. */
	if (!in->h.collect->started)
		collect_start(in->h.collect, now_of(in));
	for (size_t i = 0; i < in->n_svcs; i++) {
		struct service *s = &in->svcs[i];
		/* Arrivals are due before the first placement: a replica OOM-killed
		 * at once must see work left, or its restart is never scheduled. */
		s->arriving = s->stream.next != SIM_NEVER;
		for (int32_t k = 0; k < s->is->replicas; k++)
			infer_make_pending(in, &in->reps[s->first_rep + k]);
		for (int32_t k = 0; k < s->is->replicas; k++) {
			struct replica *r = &in->reps[s->first_rep + k];
			if (!place(in, r, true)) {
				infer_pending_failed(in, s);
				break;
			}
		}
		for (int32_t k = 0; k < s->n_history; k++)
			s->history[k] = s->is->replicas;
		if (s->arriving)
			infer_push(in, s->stream.next, EV_INFER_ARRIVAL, (uint32_t)i, 0);
		if (s->is->target_queue > 0)
			infer_push(in, s->is->scale_interval, EV_INFER_SCALE, (uint32_t)i, 0);
	}
}

void infer_destroy(struct infer *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_svcs; i++) {
		arrivals_requests_free(&in->svcs[i].stream);
		free(in->svcs[i].reqs);
		free(in->svcs[i].free_reqs);
		infer_served_free(&in->svcs[i].served);
		free(in->svcs[i].backlog);
		free(in->svcs[i].history);
		infer_disagg_free(&in->svcs[i]);
	}
	for (size_t i = 0; i < in->n_reps; i++) {
		free(in->reps[i].wait);
		free(in->reps[i].run);
		free(in->reps[i].ended);
	}
	free(in->svcs);
	free(in->reps);
	free(in->tok);
	free(in->why);
	free(in->gpu_eng);
	free(in->gpu_sm);
	free(in);
}
