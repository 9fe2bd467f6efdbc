/*
 * infer_disagg.c - disaggregated prefill and decode (docs/inference.md,
 * "Disaggregated prefill and decode").
 *
 * A workload with `disaggregated:` runs two kinds of vLLM server, as vLLM's
 * disaggregated prefilling does (docs/features/disagg_prefill.md: a prefill
 * instance, the KV producer, and a decode instance, the KV consumer, joined
 * by a KV connector; kv_transfer_config {kv_role: kv_producer | kv_consumer}):
 *
 *   prefill workers  receive the requests (router, tokenizer, FIFO queue) and
 *                    prefill them in chunked, compute-bound batches, as
 *                    infer.c's servers do, each request with max_tokens = 1:
 *                    that is how vLLM's proxy uses them
 *                    (benchmarks/disagg_benchmarks/disagg_prefill_proxy_server.py);
 *   the link         when a prompt's prefill ends, its KV cache, prompt x the
 *                    model's KV bytes per token per GPU (roofline.h), goes out
 *                    over the worker's link: latency + bytes / bandwidth, each
 *                    GPU of its tensor-parallel group sending its shard on its
 *                    own NIC, one transfer after another per worker (FIFO);
 *   decode workers   take the request (router by least outstanding or round
 *                    robin) and admit it when max_batch and their free KV
 *                    blocks allow (the blocks of its prompt; FCFS: admission
 *                    waits when the cache is full); they load the KV and
 *                    compute the last prompt token to sample the first output
 *                    token (the proxy drops the prefill worker's token and
 *                    streams the decode worker's), then decode as infer.c.
 *
 * So TTFT = tokenization + prefill queue + prefill + transfer (with its wait
 * for the link) + decode queue + the decode worker's first iteration, what a
 * client of the proxy measures; TPOT counts decode iterations only.  DistServe
 * (Zhong et al., OSDI '24) sizes the two phases under these TTFT and TPOT
 * SLOs ("goodput"); inference-fleet-sim (arXiv 2603.16054,
 * fleet_sim/optimizer/disagg.py) sizes them analytically, with the transfer
 * as a fixed TTFT multiplier (1.8); here it follows each prompt's KV bytes,
 * the link's bandwidth and its queue.
 *
 * The two roles are two services of infer.c on one workload: the prefill
 * service (the front: arrivals, the request metrics) and the decode service
 * right after it in infer.svcs.  Each has a copy of the workload's specs with
 * its role's gpus, max_batch, max_batched_tokens and memory_fraction, so that
 * infer.c's servers, placement and gauges work on them unchanged.  A request
 * moves from a slot of the prefill service to one of the decode service when
 * its prefill ends; it finishes in its front's figures.
 */
#include "gpuplan/infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_int.h"

/* A disaggregated workload's roles and transfers (the front service's). */
struct disagg_state {
	struct workload_spec ws[2]; /* prefill, decode: shallow copies of the workload's */
	struct inference_spec is[2];
	struct samples transfer; /* s, from the end of the prefill to the KV's arrival */
	double bytes;            /* moved over the links */
};

size_t infer_disagg_services(const struct workload_spec *ws)
{
	return ws->inference->disagg ? 2 : 1;
}

size_t infer_disagg_replicas(const struct workload_spec *ws)
{
	const struct disagg_spec *d = ws->inference->disagg;
	return (size_t)(d ? d->prefill.replicas + d->decode.replicas : ws->inference->max_replicas);
}

/* The workload's specs with a role's servers. */
static void role_spec(struct disagg_state *st, int k, const struct workload_spec *ws,
		      const struct disagg_role *role)
{
	st->ws[k] = *ws;
	st->is[k] = *ws->inference;
	st->ws[k].inference = &st->is[k];
	st->ws[k].gpus = role->gpus;
	struct inference_spec *is = &st->is[k];
	is->tensor_parallel = role->gpus;
	is->replicas = is->max_replicas = role->replicas;
	is->target_queue = 0;
	is->max_batch = role->max_batch;
	is->max_batched_tokens = role->max_batched_tokens;
	is->memory_fraction = role->memory_fraction;
}

void infer_disagg_split(struct infer *in, struct service *s)
{
	const struct disagg_spec *d = s->is->disagg;
	struct disagg_state *st = gp_xcalloc(1, sizeof *st);
	role_spec(st, 0, s->ws, &d->prefill);
	role_spec(st, 1, s->ws, &d->decode);
	st->is[1].tokenize = 0; /* the prefill worker's API server tokenized it */
	st->is[1].tokenize_workers = 1;
	/* infer_create counted the workload's replicas; these are the prefill role's */
	in->n_reps -= (size_t)s->n_reps;
	s->ws = &st->ws[0];
	s->is = &st->is[0];
	s->n_reps = d->prefill.replicas;
	in->n_reps += (size_t)s->n_reps;
	s->dis = st;
	struct service *dec = &in->svcs[in->n_svcs++];
	memset(dec, 0, sizeof *dec);
	dec->w = s->w;
	dec->ws = &st->ws[1];
	dec->is = &st->is[1];
	dec->stream.next = SIM_NEVER; /* its requests come from the prefill workers */
	dec->served.first_arrival = dec->served.last_done = SIM_NEVER;
	dec->first_rep = (int32_t)in->n_reps;
	dec->n_reps = d->decode.replicas;
	in->n_reps += (size_t)dec->n_reps;
	dec->n_history = 1;
	dec->history = gp_xcalloc(1, sizeof *dec->history);
	dec->quality_seed = s->quality_seed;
	dec->demand_unit = s->demand_unit;
	dec->front = s->front;
	dec->decode = -1;
	s->decode = (int32_t)(dec - in->svcs);
}

/* The link's bandwidth (bytes/s) and latency (s) from prefill worker r. */
static void link_of(const struct disagg_spec *d, const struct replica *r, double *bw,
		    double *latency)
{
	if (d->link == DISAGG_LINK_NVLINK) {
		*bw = r->roof.link_bandwidth;
		*latency = r->roof.link_latency_s;
	} else {
		*bw = d->link_bandwidth;
		*latency = d->link_latency_s;
	}
}

void infer_disagg_handoff(struct infer *in, struct replica *r, const struct seq *v)
{
	struct service *p = svc_of(in, r), *dec = &in->svcs[p->decode];
	sim_time now = now_of(in);
	/* the prefill worker is done with it: its blocks and its slot */
	r->free_blocks += v->blocks;
	r->outstanding--;
	infer_gauge(in, -1, p->w, GAUGE_REQ_RUNNING, -1);
	infer_gauge(in, -1, p->w, GAUGE_KV_USED, -v->blocks);
	struct req q = p->reqs[v->req];
	p->reqs[v->req].state = RQ_DONE; /* a free slot, as infer_finish_request leaves one */
	GP_GROW(p->free_reqs, p->cap_free, p->n_free + 1);
	p->free_reqs[p->n_free++] = v->req;
	p->outstanding--;
	/* its KV cache crosses the link, after the transfers before it */
	double bw, latency;
	link_of(p->is->disagg, r, &bw, &latency);
	double bytes = (double)q.prompt * r->roof.kv_bytes_per_token; /* per GPU */
	sim_time start = r->link_free > now ? r->link_free : now;
	sim_time end = start + (sim_time)llround((latency + bytes / bw) * (double)SIM_SECOND);
	r->link_free = end;
	samples_add(&p->dis->transfer, &in->held, sim_seconds(end - now));
	p->dis->bytes += bytes * r->roof.tp;
	/* the decode service holds it from now: work is left while it travels */
	q.state = RQ_WAITING;
	q.generated = 0;
	q.kv_in = true;
	uint32_t id = infer_new_slot(dec);
	dec->reqs[id] = q;
	dec->outstanding++;
	infer_push(in, end, EV_INFER_TRANSFER, id, (uint16_t)p->decode);
}

/* A prefill worker's iteration ends: a sequence whose prompt is in its KV
 * cache leaves for a decode worker (infer_disagg_handoff). */
void infer_disagg_end(struct infer *in, struct replica *r)
{
	int32_t kept = 0, n_run = r->n_run;
	for (int32_t i = 0; i < n_run; i++) {
		struct seq *q = &r->run[i];
		bool token = q->sched > 0 && q->kv + q->sched >= q->target;
		q->kv += q->sched;
		q->sched = 0;
		if (token)
			infer_disagg_handoff(in, r, q);
		else if (kept++ != i)
			r->run[kept - 1] = *q;
	}
	r->n_run = kept;
}

void infer_disagg_on_transfer(struct infer *in, uint32_t id, uint16_t decode)
{
	infer_submit(in, &in->svcs[decode], id);
}

/* --- figures -------------------------------------------------------------------- */

/* A role's GPUs, the share of their serving time in iterations, the GPU-hours
 * they served and what those cost at their pools' prices. */
static void role_results(struct infer *in, struct results *out, const struct service *s, int role)
{
	const struct scenario *sc = in->sc;
	sim_time end = in->h.engine->now;
	double busy = 0, ready = 0, gpu_hours = 0, cost = 0;
	for (int32_t k = 0; k < s->n_reps; k++) {
		const struct replica *r = &in->reps[s->first_rep + k];
		double b = r->busy_us + (r->busy ? (double)(end - r->iter_start) : 0);
		double t = r->ready_us +
			   (r->ready_since != SIM_NEVER ? (double)(end - r->ready_since) : 0);
		busy += b;
		ready += t;
		if (t <= 0)
			continue;
		const struct pool_spec *ps = &sc->pools[r->pool];
		double hours = t / 3.6e9;
		gpu_hours += hours * r->grant.equivalent;
		cost += hours * scenario_gpu_rate(ps,
						  r->grant.first_gpu -
							  in->h.cluster->pools[r->pool].first_gpu,
						  r->grant.gpu_mask, r->grant.equivalent);
	}
	static const enum metric_id ids[2][4] = {{METRIC_PREFILL_GPUS,
						  METRIC_PREFILL_DUTY_CYCLE_PCT,
						  METRIC_PREFILL_GPU_HOURS, METRIC_PREFILL_COST},
						 {METRIC_DECODE_GPUS, METRIC_DECODE_DUTY_CYCLE_PCT,
						  METRIC_DECODE_GPU_HOURS, METRIC_DECODE_COST}};
	const enum metric_id *id = ids[role];
	const char *scope = s->ws->name;
	results_add_metric(out, scope, id[0], (double)s->n_reps * s->ws->gpus);
	results_add_metric(out, scope, id[1], ready > 0 ? 100 * busy / ready : NAN);
	results_add_metric(out, scope, id[2], gpu_hours);
	results_add_metric(out, scope, id[3], cost);
}

void infer_disagg_results(struct infer *in, struct results *out, const struct service *s)
{
	const char *scope = s->ws->name;
	role_results(in, out, s, 0);
	role_results(in, out, &in->svcs[s->decode], 1);
	const struct samples *parts[] = {&s->dis->transfer};
	struct samples_view v;
	samples_view_init(&v, parts, 1);
	results_add_metric(out, scope, METRIC_KV_TRANSFERS, (double)samples_view_count(&v));
	results_add_metric(out, scope, METRIC_KV_TRANSFER_P50_S, samples_view_quantile(&v, 0.5));
	results_add_metric(out, scope, METRIC_KV_TRANSFER_P99_S, samples_view_quantile(&v, 0.99));
	results_add_metric(out, scope, METRIC_KV_TRANSFER_MEAN_S, samples_view_mean(&v));
	results_add_metric(out, scope, METRIC_KV_TRANSFER_GB, s->dis->bytes / 1e9);
	samples_view_free(&v);
}

void infer_disagg_free(struct service *s)
{
	if (!s->dis)
		return;
	samples_free(&s->dis->transfer);
	free(s->dis);
	s->dis = NULL;
}
