/*
 * explain.c - a finding's text and evidence, made from its typed fields (see
 * explain.h).  One function per kind; each reads the finding's figures, the
 * scenario it indexes and the run's metrics, and writes nothing else.
 */
#include "gpuplan/explain.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/footprint.h"
#include "gpuplan/gpupolicy.h"
#include "gpuplan/infer.h"
#include "gpuplan/relax.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- text ------------------------------------------------------------------ */

/* part of whole in percent, at most 100: time-sliced pods' engine activity
 * adds up past their GPU's allocation, but a GPU is at most 100% active. */
static double share_pct(double part, double whole)
{
	return whole > 0 && !isnan(part) ? fmin(100, 100 * part / whole) : 0;
}

static void duration(double seconds, char *buf, size_t len)
{
	units_format_duration(sim_from_seconds(seconds), buf, len);
}

/* What one explainer reads: the finding and what its indexes name. */
struct ctx {
	const struct scenario *sc;
	const struct results *r;
	const struct finding *f;
	const struct pool_spec *p;     /* NULL: not about one pool */
	const struct workload_spec *w; /* NULL: not about one workload */
	struct gp_sbuf text, ev;
};

/* NAN: the run has no such metric, or it does not apply. */
static double metric(const struct ctx *c, const char *scope, enum metric_id id)
{
	return results_or(c->r, scope, id, NAN);
}

/* The pending reason the finding cites, or NULL. */
static const char *reason_or_null(const struct ctx *c)
{
	int32_t id = c->f->reason;
	return id >= 0 && (size_t)id < c->r->n_reason_texts ? c->r->reason_texts[id] : NULL;
}

/* The reason of a finding that always has one (admission, fragmentation,
 * rules: they report pending time with it). */
static const char *reason(const struct ctx *c)
{
	const char *text = reason_or_null(c);
	return text ? text : "?";
}

static const struct workload_spec *member(const struct ctx *c, size_t i)
{
	return &c->sc->workloads[c->f->members[i]];
}

/* --- allocation: sharing, and memory: VRAM full ------------------------------ */

/* "work pended in 83% of the span (12h57m of 15h36m): 41.2 pods asking for
 * 41.2 GPUs on average; meanwhile pool a100 was 98.5% allocated (15.8 of 16
 * GPUs), its allocated GPUs 8.0% engine-active, 4.0% SM-active": averages
 * over the pending time, not the span's of the summary table. */
static void pool_evidence(struct ctx *c)
{
	const struct finding_pool *s = &c->f->fig.pool;
	char a[32], span[32];
	duration(s->pend_s, a, sizeof a);
	duration(s->span, span, sizeof span);
	gp_sb_printf(&c->ev,
		     "work pended in %.0f%% of the span (%s of %s): %.1f pods asking for %.1f GPUs "
		     "on average; meanwhile pool %s was %.1f%% allocated (%.1f of %.0f GPUs), its "
		     "allocated GPUs %.1f%% engine-active and %.1f%% SM-active",
		     100 * s->pend_s / s->span, a, span, s->pods / s->pend_s, s->gpus / s->pend_s,
		     c->p->name, 100 * s->alloc / s->cap, s->alloc / s->pend_s, s->cap / s->pend_s,
		     share_pct(s->engine, s->alloc), share_pct(s->sm, s->alloc));
}

static void explain_sharing(struct ctx *c)
{
	const struct pool_spec *p = c->p;
	gp_sb_printf(
		&c->text,
		c->f->fig.pool.holders
			? "pool %s: pods wait while workloads that leave their GPUs mostly idle "
			  "hold them whole, so whole-GPU allocation is the lock; the pending pods "
			  "cannot share a GPU, but the idle holders can give GPUs back ("
			: "pool %s: pods wait while its allocated GPUs are mostly idle, so "
			  "whole-GPU allocation is the lock; these sharing modes would hold the "
			  "pending pods (",
		p->name);
	pool_evidence(c);
	bool any = false;
	for (size_t m = 0; m < c->f->n_members; m++) {
		const struct workload_spec *ws = member(c, m);
		struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
		size_t n = diagnose_sharing_options(p, ws, o);
		double duty = ws->inference ? metric(c, ws->name, METRIC_DUTY_CYCLE_PCT) : NAN;
		int32_t fewer = c->f->fig.pool.holders ? diagnose_fewer_replicas(ws, duty) : 0;
		if (!n && !fewer)
			continue;
		gp_sb_printf(&c->text, "%s%s: ", any ? "; " : "", ws->name);
		for (size_t i = 0; i < n; i++) {
			char name[64];
			diagnose_option_name(&o[i], name, sizeof name);
			gp_sb_printf(&c->text, "%s%s", i ? ", " : "", name);
		}
		if (fewer)
			gp_sb_printf(&c->text, "%s%d replica%s instead of %d", n ? ", or " : "",
				     (int)fewer, fewer > 1 ? "s" : "",
				     (int)ws->inference->replicas);
		if (ws->inference)
			gp_sb_printf(&c->ev, "; %s: %d replicas in iterations %.1f%% of the time",
				     ws->name, (int)ws->inference->replicas, duty);
		else
			gp_sb_printf(&c->ev,
				     "; %s pods: %.1f GiB VRAM each on %.0f GiB GPUs, gpu_busy "
				     "%.2f, sm_share %.2f",
				     ws->name, ws->vram_bytes / GP_GIB,
				     p->gpu->memory_bytes / GP_GIB, ws->gpu_busy, ws->sm_share);
		any = true;
	}
	gp_sb_printf(&c->text, ")");
	/* the cheapest fix for idle notebooks: culling them (scenario.md, idle_cull) */
	bool cull = false;
	for (size_t m = 0; m < c->f->n_members; m++) {
		const struct workload_spec *ws = member(c, m);
		if (ws->kind != WORKLOAD_SERVICE || ws->cull_after > 0 ||
		    !(ws->gpu_busy < DIAGNOSE_IDLE))
			continue;
		gp_sb_printf(&c->text, "%s%s",
			     cull ? ", "
				  : "; or, with no hardware and no "
				    "sharing, idle_cull on ",
			     ws->name);
		cull = true;
	}
	if (cull)
		gp_sb_printf(&c->text, ", whose idle pods would give their GPUs back");
}

/* The narrower weights that fit per_gpu pods of each member a GPU; whether
 * some member had one. */
static bool name_quant(struct ctx *c, int32_t per_gpu)
{
	bool any = false;
	for (size_t m = 0; m < c->f->n_members; m++) {
		const struct workload_spec *ws = member(c, m);
		enum quant q;
		double vram, freed;
		if (!diagnose_quant_fit(c->p, ws, per_gpu, &q, &vram, &freed))
			continue;
		gp_sb_printf(&c->text,
			     "%s%s weights for %s would fit %d per GPU (%.1f GiB freed per pod)",
			     any ? "; " : "", footprint_quant_name(q), ws->name, (int)per_gpu,
			     freed / GP_GIB);
		gp_sb_printf(&c->ev,
			     "; with %s a %s pod takes %.1f GiB: %d x %.1f = %.1f GiB of %.0f GiB",
			     footprint_quant_name(q), ws->name, vram / GP_GIB, (int)per_gpu,
			     vram / GP_GIB, per_gpu * vram / GP_GIB,
			     c->p->gpu->memory_bytes / GP_GIB);
		any = true;
	}
	return any;
}

static void explain_vram_full(struct ctx *c)
{
	const struct finding_pool *s = &c->f->fig.pool;
	double mem = c->p->gpu->memory_bytes / GP_GIB, used = s->vram / s->alloc, pod = s->pod_gib;
	gp_sb_printf(&c->text,
		     "pool %s: VRAM is the limit: pods wait while its allocated GPUs are mostly "
		     "idle, but a GPU has no room for one more pod; ",
		     c->p->name);
	pool_evidence(c);
	gp_sb_printf(&c->ev,
		     "; VRAM %.1f of %.0f GiB used per allocated GPU (%.0f%%), %.1f GiB left where "
		     "a pending pod needs %.1f GiB",
		     used, mem, 100 * used / mem, mem - used, pod);
	if (!name_quant(c, 2))
		gp_sb_printf(&c->text,
			     "no narrower weight format fits two per GPU: a GPU with more memory "
			     "would");
}

/* --- memory: OOM kills, preallocation, KV cache ------------------------------ */

static void explain_oom(struct ctx *c)
{
	const struct pool_spec *ps = c->p;
	bool sliced = ps->sharing.mode == SHARING_TIME_SLICING;
	int32_t per_gpu = sliced ? ps->sharing.replicas : 1;
	if (sliced)
		gp_sb_printf(&c->text,
			     "pool %s: VRAM is the limit: time-slicing x%d puts more pods on a GPU "
			     "than its memory holds, and they are OOM-killed",
			     ps->name, (int)per_gpu);
	else
		gp_sb_printf(&c->text,
			     "pool %s: VRAM is the limit: pods need more memory than a GPU has, "
			     "and they are OOM-killed",
			     ps->name);
	double alloc = metric(c, ps->name, METRIC_GPU_ALLOCATION_PCT);
	gp_sb_printf(&c->ev,
		     "%.0f OOM kills; pool %s %.1f%% allocated, its allocated GPUs %.1f%% "
		     "engine-active",
		     c->f->fig.oom.kills, ps->name, alloc,
		     share_pct(metric(c, ps->name, METRIC_ENGINE_ACTIVE_PCT), alloc));
	for (size_t m = 0; m < c->f->n_members; m++) {
		const struct workload_spec *ws = member(c, m);
		gp_sb_printf(&c->ev,
			     "; %s: %.0f kills, %.1f GiB a pod: %d x %.1f = %.1f GiB on %.0f GiB "
			     "GPUs",
			     ws->name, metric(c, ws->name, METRIC_OOM_KILLS),
			     ws->vram_bytes / GP_GIB, (int)per_gpu, ws->vram_bytes / GP_GIB,
			     per_gpu * ws->vram_bytes / GP_GIB, ps->gpu->memory_bytes / GP_GIB);
	}
	gp_sb_printf(&c->text, "; ");
	bool quant = name_quant(c, per_gpu);
	if (c->f->fig.oom.elsewhere)
		gp_sb_printf(&c->text,
			     "%skeeping the pods on the GPU types of other pools that hold them "
			     "(gpu_spec) would",
			     quant ? "; or " : "");
	else if (!quant && sliced)
		gp_sb_printf(&c->text,
			     "no narrower weight format fits %d per GPU: fewer replicas would",
			     (int)per_gpu);
	else if (!quant)
		gp_sb_printf(&c->text,
			     "no narrower weight format fits one per GPU: a GPU with more memory "
			     "would");
}

static void explain_preallocation(struct ctx *c)
{
	const struct pool_spec *ps = c->p;
	const struct workload_spec *ws = c->w;
	const struct inference_spec *in = ws->inference;
	int32_t R = ps->sharing.replicas;
	double mem = ps->gpu->memory_bytes, each = infer_server_memory(ps, ws);
	double weights =
		ws->model ? footprint_weights_bytes(ws->model, (enum quant)ws->quantization) : 0;
	gp_sb_printf(&c->text,
		     "pool %s: time-slicing x%d puts %d servers of %s on a GPU, each "
		     "preallocating memory_fraction %.2g of it (%.0f%% together), so they are "
		     "OOM-killed; the preallocation is the cause, not the weights: "
		     "memory_fraction %.2g would fit",
		     ps->name, (int)R, (int)R, ws->name, in->memory_fraction,
		     100 * R * in->memory_fraction, c->f->fig.prealloc.fit);
	gp_sb_printf(&c->ev,
		     "%.0f OOM kills of %s; memory_fraction %.2g x %.0f GiB = %.1f GiB a server: "
		     "%d x %.1f = %.1f GiB on %.0f GiB GPUs; its weights take %.1f GiB",
		     c->f->fig.prealloc.kills, ws->name, in->memory_fraction, mem / GP_GIB,
		     each / GP_GIB, (int)R, each / GP_GIB, R * each / GP_GIB, mem / GP_GIB,
		     weights / GP_GIB);
}

static void explain_kv_cache(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct inference_spec *in = ws->inference;
	if (c->f->fig.kv.target > 0)
		gp_sb_printf(&c->text,
			     "%s is starved of KV cache: memory_fraction %.2g leaves its server "
			     "too few KV blocks, so sequences are preempted and requests queue for "
			     "admission; memory_fraction %.2g would give it the memory",
			     ws->name, in->memory_fraction, c->f->fig.kv.target);
	else
		gp_sb_printf(
			&c->text,
			"%s's KV cache is full: at memory_fraction %.2g its server still has "
			"too few KV blocks, so sequences are preempted and requests queue for "
			"admission; an fp8 KV cache would hold twice the sequences in the same "
			"memory (more replicas or a wider tensor-parallel group would too, "
			"on more GPUs)",
			ws->name, in->memory_fraction);
	if (!(c->f->fig.kv.target > 0))
		gp_sb_printf(&c->ev, "its cache holds about %.0f sequences of a typical request; ",
			     c->f->fig.kv.fits);
	gp_sb_printf(&c->ev,
		     "%.0f preemptions over %.0f requests; TTFT p99 %.3g s, of which the wait for "
		     "admission averages %.3g s; SLO attainment %.1f%%; max_batch %d",
		     c->f->fig.kv.preemptions, c->f->fig.kv.requests,
		     metric(c, ws->name, METRIC_TTFT_P99_S),
		     metric(c, ws->name, METRIC_REQUEST_QUEUE_MEAN_S),
		     metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT), (int)in->max_batch);
}

/* --- stalled work ------------------------------------------------------------ */

/* The smallest changes that let a pod fit a unit its VRAM exceeds. */
static void stalled_vram(struct ctx *c)
{
	const struct finding_stalled *s = &c->f->fig.stalled;
	bool any = false;
	if (s->quant >= 0) {
		gp_sb_printf(&c->text, "%s weights (%.1f GiB a pod)",
			     footprint_quant_name((enum quant)s->quant), s->quant_vram / GP_GIB);
		any = true;
	}
	if (s->mps_replicas > 0) {
		gp_sb_printf(&c->text, "%s%s", any ? ", or " : "",
			     s->mps_replicas > 1 ? "MPS with fewer replicas" : "exclusive GPUs");
		any = true;
	}
	if (!any)
		gp_sb_printf(&c->text, "a GPU with more memory");
}

static void explain_stalled(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct pool_spec *ps = c->p;
	int32_t why = c->f->fig.stalled.why;
	gp_sb_printf(&c->text, "%s can never run: ", ws->name);
	if (why == PEND_VRAM)
		gp_sb_printf(
			&c->text,
			"a pod needs %.1f GiB of VRAM and a unit of pool %s isolates %.1f GiB; "
			"it would fit with ",
			ws->vram_bytes / GP_GIB, ps->name, scenario_unit_memory(ps, ws) / GP_GIB);
	else if (why == PEND_RESOURCE && ws->request == REQUEST_MIG)
		gp_sb_printf(&c->text,
			     "no MIG layout of its pools has %s instances; a layout with them "
			     "beside the profiles the other work asks for would start it",
			     ws->mig_profile);
	else if (why == PEND_RESOURCE)
		gp_sb_printf(&c->text,
			     "no node of pool %s offers what a pod asks for (%d GPU%s a pod, "
			     "%d a node)",
			     ps->name, (int)(ws->request == REQUEST_GPUS ? ws->gpus : 1),
			     ws->request == REQUEST_GPUS && ws->gpus == 1 ? "" : "s",
			     (int)ps->gpus_per_node);
	else if (why == PEND_CPU)
		gp_sb_printf(&c->text,
			     "a pod asks for more cpu or memory than a node of pool %s has",
			     ps->name);
	else
		gp_sb_printf(&c->text,
			     "its placement rules keep it off every pool whose GPUs would hold it; "
			     "relax them");
	gp_sb_printf(&c->ev, "%.0f of %.0f jobs unfinished, none completed; run status %s",
		     metric(c, ws->name, METRIC_JOBS_UNFINISHED),
		     metric(c, ws->name, METRIC_JOBS_SUBMITTED), c->r->status);
	if (reason_or_null(c))
		gp_sb_printf(&c->ev, "; pending with \"%s\"", reason(c));
	if (why == PEND_VRAM)
		stalled_vram(c);
}

/* --- allocation: admission and fragmentation --------------------------------- */

static void explain_admission(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_wait *f = &c->f->fig.wait;
	const struct queue_spec *q = &c->sc->queues[c->f->queue];
	const struct quota_entry *e = diagnose_gpu_quota(q);
	double idle = f->free / f->secs, need = f->need;
	if (f->strict)
		gp_sb_printf(&c->text,
			     "%s waits on admission, not on hardware: its jobs queue behind the "
			     "head of StrictFIFO queue %s while %.1f GPUs are free; let them pass "
			     "it (BestEffortFIFO) or raise the quota",
			     ws->name, q->name, idle);
	else if (c->f->constraint == CONSTRAINT_LENDING_LIMIT && c->f->key) /* diagnose_lender */
		gp_sb_printf(&c->text,
			     "%s waits on admission, not on hardware: queue %s's quota refuses "
			     "its jobs while %.1f GPUs are free, kept idle by a queue of its "
			     "cohort that keeps them to itself (%s %s); let it lend them before "
			     "raising the quota",
			     ws->name, q->name, idle, c->f->key, c->f->value ? c->f->value : "?");
	else if (c->f->constraint == CONSTRAINT_RECLAIM) /* its lent quota, not its own quota */
		gp_sb_printf(&c->text,
			     "%s waits on admission, not on hardware: queue %s's cohort keeps "
			     "quota from it while %.1f GPUs are free: quota it lent is never "
			     "reclaimed, not its own quota",
			     ws->name, q->name, idle);
	else
		gp_sb_printf(&c->text,
			     "%s waits on admission, not on hardware: queue %s's quota refuses "
			     "its jobs while %.1f GPUs are free; raise the quota",
			     ws->name, q->name, idle);
	if (e && !isinf(e->borrowing_limit) && c->f->constraint != CONSTRAINT_LENDING_LIMIT &&
	    c->f->constraint != CONSTRAINT_RECLAIM)
		gp_sb_printf(&c->text, " or its borrowing limit");
	gp_sb_printf(&c->ev, "%.1f pod-hours pending with \"%s\"; queue %s", f->pending_s / 3600,
		     reason(c), q->name);
	if (e)
		gp_sb_printf(&c->ev, " quota nvidia.com/gpu %g", e->nominal);
	if (e && !isinf(e->borrowing_limit))
		gp_sb_printf(&c->ev, ", borrowing limit %g", e->borrowing_limit);
	gp_sb_printf(&c->ev, q->cohort ? ", cohort %s" : ", no cohort%s",
		     q->cohort ? q->cohort : "");
	gp_sb_printf(&c->ev,
		     "; meanwhile the pools it may use had %.1f of %.0f GPUs free on average; a "
		     "job asks for %.3g GPU%s",
		     idle, f->cap / f->secs, need, need == 1 ? "" : "s");
}

static void explain_fragmentation(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_wait *f = &c->f->fig.wait;
	const struct scheduler_spec *sch = &c->sc->scheduler;
	char scoring[96];
	scenario_scoring_name(&sch->scoring, scoring, sizeof scoring);
	gp_sb_printf(&c->text,
		     "%s waits on fragmentation, not on capacity: the free GPU capacity sums to "
		     "what a job asks for but is spread over partial GPUs or nodes that no job "
		     "fits; a placement that packs it (",
		     ws->name);
	/* The packers the finding offers: never the policy already in use. */
	for (size_t i = 0; i < c->f->n_fixes; i++)
		gp_sb_printf(&c->text, "%s%s", i ? (i + 1 == c->f->n_fixes ? " or " : ", ") : "",
			     c->f->fixes[i].label);
	gp_sb_printf(&c->text, ") starts it on what is free");
	gp_sb_printf(
		&c->ev,
		"%.1f pod-hours pending with \"%s\"; while it pended, the pools it may use "
		"had %.2f of %.0f GPUs free on average, and enough for one job (%.3g GPU%s) in "
		"windows holding %.0f%% of its pending time; gpu_policy %s, scoring %s",
		f->pending_s / 3600, reason(c), f->free / f->secs, f->cap / f->secs, f->need,
		f->need == 1 ? "" : "s", 100 * f->covered / f->pend,
		gpupolicy_names[sch->gpu_policy], scoring);
}

/* --- placement ------------------------------------------------------------- */

/* The rules of w that can keep it off nodes: selector, gpu_spec, affinity, spread. */
static void name_rules(struct gp_sbuf *b, const struct workload_spec *w)
{
	for (size_t i = 0; i < w->n_node_selector; i++)
		gp_sb_printf(b, "; node_selector %s=%s", w->node_selector[i].key,
			     w->node_selector[i].value);
	if (w->n_gpu_spec)
		gp_sb_printf(b, "; gpu_spec allows %zu GPU type%s", w->n_gpu_spec,
			     w->n_gpu_spec > 1 ? "s" : "");
	if (w->n_affinity)
		gp_sb_printf(b, "; %zu node affinity requirement%s", w->n_affinity,
			     w->n_affinity > 1 ? "s" : "");
	if (w->spread.key)
		gp_sb_printf(b, "; topology spread on %s, max_skew %d", w->spread.key,
			     (int)w->spread.max_skew);
}

/* "bot misses its SLO on placement rules, not on hardware: its gpu_spec
 * keeps its replicas off pools h100 and l40s, ..." */
static void explain_confined(struct ctx *c, const char *pools, const char *keeps)
{
	const struct workload_spec *ws = c->w;
	const struct finding_rules *g = &c->f->fig.rules;
	size_t nh = c->f->n_members;
	bool spec_only = ws->n_gpu_spec && !ws->n_node_selector && !ws->n_affinity &&
			 g->rules == FINDING_RULE_AFFINITY;
	gp_sb_printf(&c->text,
		     "%s misses its SLO on placement rules, not on hardware: %s its replicas "
		     "off pool%s %s, whose GPUs idled while its own were busy; relax the rule "
		     "or move the service",
		     ws->name, spec_only ? "its gpu_spec keeps" : keeps, nh > 1 ? "s" : "", pools);
	gp_sb_printf(&c->ev,
		     "replicas in iterations %.0f%% of the time they served, no room for another "
		     "where they may run; meanwhile pool%s %s had %.1f of %.0f GPUs idle on "
		     "average (up to %.0f at once)",
		     g->duty, nh > 1 ? "s" : "", pools, g->idle / g->secs, g->cap / g->secs,
		     g->most);
	name_rules(&c->ev, ws);
}

static void explain_rules(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_rules *g = &c->f->fig.rules;
	size_t nh = c->f->n_members;
	struct gp_sbuf pools = {0};
	for (size_t i = 0; i < nh; i++)
		gp_sb_printf(&pools, "%s%s", i ? (i + 1 == nh ? " and " : ", ") : "",
			     c->sc->pools[c->f->members[i]].name);
	static const char *const phrase[] = {
		"", "its node selector/affinity keeps", "a taint it does not tolerate keeps",
		"its node selector/affinity and a taint it does not tolerate keep"};
	if (!g->pods) { /* a service, its replicas placed and busy */
		explain_confined(c, pools.s, phrase[g->rules & 3]);
		free(pools.s);
		return;
	}
	if (g->rules == FINDING_RULE_SPREAD)
		gp_sb_printf(&c->text,
			     "%s waits on placement rules, not on hardware: its topology spread "
			     "constraint keeps its pods from pool%s %s while GPUs there are idle; "
			     "raise max_skew or use ScheduleAnyway",
			     ws->name, nh > 1 ? "s" : "", pools.s);
	else
		gp_sb_printf(&c->text,
			     "%s waits on placement rules, not on hardware: %s its pods off "
			     "pool%s %s while GPUs there are idle; relax the rule or move capacity",
			     ws->name, phrase[g->rules & 3], nh > 1 ? "s" : "", pools.s);
	gp_sb_printf(
		&c->ev,
		"%.1f pod-hours pending (%lld pod%s) with rule reasons, most with \"%s\"; "
		"meanwhile pool%s %s had %.1f of %.0f GPUs idle on average (%.1f idle GPU-hours, "
		"up to %.0f at once)",
		g->pending_s / 3600, (long long)g->pods, g->pods == 1 ? "" : "s", reason(c),
		nh > 1 ? "s" : "", pools.s, g->idle / g->secs, g->cap / g->secs, g->idle / 3600,
		g->most);
	name_rules(&c->ev, ws);
	for (size_t i = 0; i < nh; i++) {
		const struct pool_spec *p = &c->sc->pools[c->f->members[i]];
		for (size_t t = 0; t < p->n_taints; t++)
			gp_sb_printf(&c->ev, "; pool %s taint %s=%s", p->name, p->taints[t].key,
				     p->taints[t].value);
	}
	free(pools.s);
}

/* "prep waits on its cpu request, not on GPUs: a node of pool l4 holds 1 of
 * its pods (40 of 48 cores) where its GPUs hold 4, ..." */
static void explain_requests(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_requests *q = &c->f->fig.requests;
	const char *what = q->cpu > 0 && q->memory > 0 ? "cpu and memory requests"
			   : q->cpu > 0                ? "cpu request"
						       : "memory request";
	int gpus = (int)floor(c->p->gpus_per_node / scenario_gpu_equivalent(c->p, ws) + 1e-9);
	gp_sb_printf(&c->text,
		     "%s waits on its %s, not on GPUs: a node of pool %s holds %d of its pods "
		     "where its GPUs hold %d, so GPUs stay free beside them; if %s uses less than "
		     "it asks for, a request of",
		     ws->name, what, c->p->name, (int)q->pods_per_node, gpus, ws->name);
	if (q->cpu > 0)
		gp_sb_printf(&c->text, " %g cores", q->cpu);
	if (q->memory > 0)
		gp_sb_printf(&c->text, "%s %g GiB", q->cpu > 0 ? " and" : "", q->memory / GP_GIB);
	gp_sb_printf(&c->text, " fits %d a node; else nodes with more %s per GPU would", gpus,
		     q->cpu > 0 && q->memory > 0 ? "cores and memory"
		     : q->cpu > 0                ? "cores"
						 : "memory");
	gp_sb_printf(&c->ev,
		     "%.1f pod-hours pending with \"%s\"; while it pended, the pools it may use "
		     "had %.2f of %.0f GPUs free on average, and enough for one job in windows "
		     "holding %.0f%% of its pending time; %s asks for %.3g GPU%s, %g cores and "
		     "%.0f GiB a pod; pool %s nodes have %d GPUs, %g cores and %.0f GiB",
		     q->pending_s / 3600, reason(c), q->free / q->secs, q->cap / q->secs,
		     100 * q->covered / q->pend, ws->name, scenario_gpu_equivalent(c->p, ws),
		     scenario_gpu_equivalent(c->p, ws) == 1 ? "" : "s", ws->cpu,
		     ws->memory_bytes / GP_GIB, c->p->name, (int)c->p->gpus_per_node, c->p->cpu,
		     c->p->memory_bytes / GP_GIB);
}

/* --- application ------------------------------------------------------------- */

static void explain_loader(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_loader *g = &c->f->fig.loader;
	gp_sb_printf(&c->text,
		     "%s's GPUs wait on input: %d loader worker%s deliver %.0f%% of what its GPUs "
		     "consume, so more GPUs would not help; more loader workers or CPUs would (%d "
		     "workers keep up)",
		     ws->name, (int)g->workers, g->workers == 1 ? "" : "s", 100 * g->fraction,
		     (int)g->need);
	gp_sb_printf(&c->ev,
		     "data_loader %d x %.4g/s against %.4g/s needed: the GPUs idle %.0f%% of "
		     "their time waiting; gpu_busy %.2f as run; queue p95 %.0f s, deadlines met "
		     "%.1f%%",
		     (int)g->workers, ws->loader_rate, ws->loader_need, 100 * (1 - g->fraction),
		     ws->gpu_busy, metric(c, ws->name, METRIC_QUEUE_TIME_P95_S),
		     metric(c, ws->name, METRIC_DEADLINE_MET_PCT));
}

static void explain_tokenizer(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_tokenizer *g = &c->f->fig.tokenizer;
	double tok = sim_seconds(ws->inference->tokenize);
	int32_t replicas = g->replicas, workers = g->workers;
	gp_sb_printf(&c->text,
		     "%s is bound by tokenization, not by GPUs: requests wait for the CPU "
		     "tokenizer while the GPUs idle, so more GPUs would not help; %d tokenizer "
		     "workers a replica would",
		     ws->name, (int)g->need);
	gp_sb_printf(
		&c->ev,
		"tokenizer %.3g ms a request x %.4g requests/s over %d replica%s x %d worker%s "
		"= %.0f%% busy; requests waited %.3g s on average for a tokenizer worker and "
		"%.3g s for a batch slot; replicas in iterations %.1f%% of the time; TTFT p99 "
		"%.3g s; SLO attainment %.1f%%",
		tok * 1000, g->rate, (int)replicas, replicas == 1 ? "" : "s", (int)workers,
		workers == 1 ? "" : "s", 100 * g->busy,
		metric(c, ws->name, METRIC_TOKENIZE_WAIT_MEAN_S),
		metric(c, ws->name, METRIC_REQUEST_QUEUE_MEAN_S),
		metric(c, ws->name, METRIC_DUTY_CYCLE_PCT), metric(c, ws->name, METRIC_TTFT_P99_S),
		metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT));
}

static void explain_off_gpu(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	double met = metric(c, ws->name, METRIC_DEADLINE_MET_PCT);
	double p95 = metric(c, ws->name, METRIC_QUEUE_TIME_P95_S);
	char d[32], off[32];
	duration(ws->duration.mean, d, sizeof d);
	duration((1 - ws->gpu_busy) * ws->duration.mean, off, sizeof off);
	gp_sb_printf(&c->text,
		     "%s misses deadlines although its jobs start at once, and their GPUs are "
		     "mostly idle: the time goes to CPU and I/O stages, so more or shared GPUs "
		     "would not help; speeding up the off-GPU work would",
		     ws->name);
	gp_sb_printf(&c->ev,
		     "deadline met %.1f%% with queue p95 %.0f s; gpu_busy %.2f: %s of a %s job "
		     "is off the GPU",
		     met, p95, ws->gpu_busy, off, d);
}

static void explain_restarts(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_restarts *g = &c->f->fig.restarts;
	char attempt[32], need[32], every[32], keep[32];
	duration(g->attempt_s, attempt, sizeof attempt);
	duration(ws->duration.mean, need, sizeof need);
	duration(g->checkpoint_s, every, sizeof every);
	duration(sim_seconds(ws->checkpoint), keep, sizeof keep);
	gp_sb_printf(&c->text,
		     "%s loses its work to evictions: its jobs held their GPUs %s on average "
		     "before an eviction stopped them, less than the %s a job needs, and %s, so "
		     "each start begins again and more GPUs would not help; a checkpoint every "
		     "%s would keep the work",
		     ws->name, attempt, need,
		     ws->checkpoint > 0 ? "its checkpoint comes too seldom to keep any"
					: "without a checkpoint",
		     every);
	gp_sb_printf(&c->ev, "%.0f evictions of %.0f job%s, %.0f unfinished; checkpoint %s",
		     g->evictions, g->jobs, g->jobs == 1 ? "" : "s", g->unfinished,
		     ws->checkpoint > 0 ? keep : "none");
	if (strcmp(c->r->status, "ok"))
		gp_sb_printf(&c->ev, "; the run ended %s", c->r->status);
}

/* Since when an evicted job of ws lost its work. */
static const char *lost_since(const struct workload_spec *ws)
{
	return ws->checkpoint > 0 ? "its last checkpoint" : "its start (no checkpoint)";
}

/* The evictions of kind (the finding's figure) among all of the workload's,
 * and what they cost its goals: "6 priority preemptions (6 evictions in all)
 * at priority 0; deadlines met 66.7%, 0 unfinished". */
static void eviction_evidence(struct ctx *c, const char *kind, const char *after)
{
	const struct workload_spec *ws = c->w;
	double met = metric(c, ws->name, METRIC_DEADLINE_MET_PCT);
	gp_sb_printf(&c->ev, "%.0f %s (%.0f evictions in all)%s; ", c->f->figure, kind,
		     metric(c, ws->name, METRIC_JOBS_PREEMPTED), after);
	if (!isnan(met))
		gp_sb_printf(&c->ev, "deadlines met %.1f%%, ", met);
	gp_sb_printf(&c->ev, "%.0f unfinished", metric(c, ws->name, METRIC_JOBS_UNFINISHED));
}

static void explain_preempted(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	gp_sb_printf(&c->text,
		     "%s's running jobs were evicted %.0f time%s by kube-scheduler's priority "
		     "preemption for pods of a higher priority, and each lost its work since %s; "
		     "%s (they wait for room instead of evicting), or %s, would keep them",
		     ws->name, c->f->figure, c->f->figure == 1 ? "" : "s", lost_since(ws),
		     c->f->fixes[0].label, c->f->fixes[1].label);
	char at[48];
	snprintf(at, sizeof at, " at priority %d", (int)ws->priority);
	eviction_evidence(c, "priority preemptions", at);
}

static void explain_scale_down(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	char keep[32];
	duration(sim_seconds(ws->checkpoint), keep, sizeof keep);
	gp_sb_printf(&c->text,
		     "%s's running jobs were evicted %.0f time%s by the Cluster Autoscaler's "
		     "scale-down, which moves a Job's pods off nodes it finds underused, and each "
		     "lost its work since %s; safe_to_evict: false (the pod annotation "
		     "cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\") would keep them "
		     "on their nodes until they finish",
		     ws->name, c->f->figure, c->f->figure == 1 ? "" : "s", lost_since(ws));
	eviction_evidence(c, "scale-down evictions", "");
	gp_sb_printf(&c->ev, "; checkpoint %s", ws->checkpoint > 0 ? keep : "none");
}

static void explain_mixed_gpus(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding *f = c->f;
	gp_sb_printf(&c->text,
		     "%s's router gives each of its %d replicas the same share of the requests "
		     "(round-robin), and its replicas run on GPU types of different speed: those "
		     "on %s fall behind on their share while the others idle; keeping %s on the "
		     "faster types (gpu_spec) or routing to the least loaded replica would",
		     ws->name, (int)ws->inference->replicas, c->p ? c->p->gpu->name : "the slowest",
		     ws->name);
	const struct finding_replicas *g = &f->fig.replicas;
	gp_sb_printf(&c->ev,
		     "SLO attainment %.1f%%, TTFT p99 %.3g s; %.2f requests/s served of %.2f "
		     "offered; replicas in iterations %.1f%% of the time; the slowest type's HBM "
		     "%.0f GB/s",
		     metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT),
		     metric(c, ws->name, METRIC_TTFT_P99_S), g->served, g->offered, g->duty,
		     f->figure / 1e9);
}

/* --- capacity ---------------------------------------------------------------- */

/* "; the GPUs meanwhile held by embed and etl" (the finding's members). */
static void held_by(struct ctx *c)
{
	for (size_t i = 0; i < c->f->n_members; i++)
		gp_sb_printf(&c->ev, "%s%s",
			     i ? (i + 1 == c->f->n_members ? " and " : ", ")
			       : "; the GPUs meanwhile held by ",
			     c->sc->workloads[c->f->members[i]].name);
}

/* At max_replicas; or ("chat's autoscaler scales to replicas whose GPUs
 * other work holds: ...") with the replicas it scaled to pending longer. */
static void explain_autoscaler_max(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_scaling *g = &c->f->fig.scaling;
	int max = (int)ws->inference->max_replicas;
	if (g->pending_s > 0) {
		gp_sb_printf(&c->text,
			     "%s's autoscaler scales to replicas whose GPUs other work holds: they "
			     "pend until it finishes, as replicas never preempt running pods; "
			     "replicas kept warm (min_replicas at the peak need) hold their GPUs "
			     "before the other work takes them, or the pool needs more GPUs",
			     ws->name);
		gp_sb_printf(&c->ev,
			     "%.1f replica-hours pending with \"Insufficient nvidia.com/gpu\"; at ",
			     g->pending_s / 3600);
	} else {
		gp_sb_printf(
			&c->text,
			"%s's autoscaler is at its maximum: %d replicas do not meet the SLO; a "
			"higher max_replicas (the pool permitting) would, with more replicas "
			"kept warm where the backlog of the ramp from min_replicas is what "
			"misses",
			ws->name, max);
		gp_sb_printf(&c->ev, "replicas at ");
	}
	char d[32], span[32];
	duration(g->at_max_s, d, sizeof d);
	duration(g->span, span, sizeof span);
	gp_sb_printf(&c->ev, "max_replicas %d in %s of %s; TTFT p99 %.3g s; SLO attainment %.1f%%",
		     max, d, span, metric(c, ws->name, METRIC_TTFT_P99_S),
		     metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT));
	held_by(c);
}

static void explain_replicas(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_replicas *g = &c->f->fig.replicas;
	int r = (int)ws->inference->replicas;
	gp_sb_printf(&c->text,
		     "%s's %d replica%s %s saturated and miss%s the SLO while GPUs it may use "
		     "sit idle: ",
		     ws->name, r, r > 1 ? "s" : "", r > 1 ? "are" : "is", r > 1 ? "" : "es");
	if (g->wanted > g->need) /* the idle GPUs hold fewer than the load needs */
		gp_sb_printf(&c->text,
			     "%d replicas fit on them, of the %d its load needs at the rate a "
			     "replica served; the rest need more nodes",
			     (int)g->need, (int)g->wanted);
	else
		gp_sb_printf(&c->text,
			     "%d replicas on them would serve its load, no new node needed",
			     (int)g->need);
	gp_sb_printf(&c->ev,
		     "%.1f requests/s offered, %.1f served (%.1f a replica); while it had "
		     "requests, replicas in iterations %.1f%% of the time and %.1f GPUs idle on "
		     "average in the pools it may use; TTFT p99 %.3g s; SLO attainment %.1f%%",
		     g->offered, g->served, g->served / r, g->duty, g->idle,
		     metric(c, ws->name, METRIC_TTFT_P99_S),
		     metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT));
}

static void explain_max_batch(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_batch *g = &c->f->fig.batch;
	gp_sb_printf(&c->text,
		     "%s's batch is full at max_batch %d and misses the SLO while its KV cache "
		     "holds %d sequences: the server's setting, not replicas or GPUs, limits "
		     "it; max_batch %d would serve more on the GPUs it has",
		     ws->name, (int)g->max_batch, (int)g->fits, (int)g->fits);
	gp_sb_printf(&c->ev,
		     "%.1f requests/s offered, %.1f served; %.1f sequences in a replica's batch "
		     "on average of max_batch %d; requests waited %.3g s on average for a batch "
		     "slot; TTFT p95 %.3g s; SLO attainment %.1f%%",
		     g->offered, g->served, g->in_batch, (int)g->max_batch,
		     metric(c, ws->name, METRIC_REQUEST_QUEUE_MEAN_S),
		     metric(c, ws->name, METRIC_TTFT_P95_S),
		     metric(c, ws->name, METRIC_SLO_ATTAINMENT_PCT));
}

static void explain_deadline(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct finding_deadline *g = &c->f->fig.deadline;
	char run[32], within[32];
	duration(g->run_s, run, sizeof run);
	duration(g->within_s, within, sizeof within);
	if (g->tail) {
		gp_sb_printf(&c->text,
			     "%s's late jobs each ran longer than their deadline of %s allows on "
			     "their own, without waiting (the longest took %s): the tail of their "
			     "durations, not a queue, so more GPUs or nodes would not help; a "
			     "faster GPU type, more GPUs per job (if the job scales across them) "
			     "or a later deadline would",
			     ws->name, within, run);
		gp_sb_printf(&c->ev,
			     "%.0f of %.0f jobs missed the deadline within %.0f s, none of them "
			     "waited; the longest took %.0f s from arrival to end (%.2fx the "
			     "deadline); mean duration %.0f s and start-up %.0f s",
			     g->late, g->jobs, g->within_s, g->run_s, g->need,
			     scenario_dist_mean(&ws->duration), sim_seconds(ws->startup));
		return;
	}
	gp_sb_printf(&c->text,
		     "%s's jobs run %s, longer than their deadline of %s allows, with no queue "
		     "to cut: more GPUs or nodes would not help; a faster GPU type, more GPUs "
		     "per job (if the job scales across them) or a later deadline would",
		     ws->name, run, within);
	gp_sb_printf(&c->ev,
		     "mean duration %.0f s and start-up %.0f s = %.0f s a job against a deadline "
		     "within %.0f s (%.2fx too long); %.0f of %.0f jobs missed it; queue p95 %s",
		     g->run_s - sim_seconds(ws->startup), sim_seconds(ws->startup), g->run_s,
		     g->within_s, g->need, g->late, g->jobs,
		     isnan(metric(c, ws->name, METRIC_QUEUE_TIME_P95_S)) ? "-" : "");
	if (!isnan(metric(c, ws->name, METRIC_QUEUE_TIME_P95_S)))
		gp_sb_printf(&c->ev, "%.0f s", metric(c, ws->name, METRIC_QUEUE_TIME_P95_S));
}

static void explain_node_group_max(struct ctx *c)
{
	const struct pool_spec *p = c->p;
	const struct finding_scaling *g = &c->f->fig.scaling;
	gp_sb_printf(&c->text,
		     "pool %s's cluster autoscaler sits at its max of %d node%s while pods it "
		     "could host wait: the max, not provisioning, limits the work; a higher max "
		     "would let the pool grow",
		     p->name, (int)p->autoscale.max, p->autoscale.max == 1 ? "" : "s");
	char d[32], span[32];
	duration(g->at_max_s, d, sizeof d);
	duration(g->span, span, sizeof span);
	gp_sb_printf(&c->ev, "at max with pods pending %s of %s; ", d, span);
	double p95 = metric(c, "all", METRIC_QUEUE_TIME_P95_S),
	       met = metric(c, "all", METRIC_DEADLINE_MET_PCT);
	if (!isnan(p95))
		gp_sb_printf(&c->ev, "queue p95 %.0f s, deadlines met %.1f%%; ", p95, met);
	gp_sb_printf(&c->ev, "%lld scale-ups, %.2f node-hours", (long long)g->scale_ups,
		     g->node_hours);
}

static void explain_provisioning(struct ctx *c)
{
	const struct pool_spec *p = c->p;
	const struct finding_scaling *g = &c->f->fig.scaling;
	char d[32];
	duration(sim_seconds(p->autoscale.provision_time), d, sizeof d);
	gp_sb_printf(&c->text,
		     "pool %s: pods wait for nodes to be provisioned (%s each), not for "
		     "capacity: its autoscaler stayed below its max; %d warm node(s) (autoscale "
		     "min) or faster provisioning would cut the wait, at the price of idle nodes",
		     p->name, d, (int)g->warm);
	gp_sb_printf(&c->ev,
		     "%.0f of %.0f pending pod-seconds waiting for provisioning; %lld scale-ups, "
		     "%lld nodes removed, %.2f node-hours; queue p95 %.0f s",
		     g->wait_s, g->pending_s, (long long)g->scale_ups, (long long)g->scale_downs,
		     g->node_hours, metric(c, "all", METRIC_QUEUE_TIME_P95_S));
}

/* The conclusion for the whole run, when no other step explains the wait. */
static void explain_run_capacity(struct ctx *c)
{
	double p95 = metric(c, "all", METRIC_QUEUE_TIME_P95_S),
	       met = metric(c, "all", METRIC_DEADLINE_MET_PCT);
	double slo = metric(c, "all", METRIC_SLO_MET);
	double alloc = metric(c, "all", METRIC_GPU_ALLOCATION_PCT),
	       engine = metric(c, "all", METRIC_ENGINE_ACTIVE_PCT);
	bool windows = false; /* closed pools idle their GPUs without freeing them */
	for (size_t p = 0; p < c->sc->n_pools; p++)
		windows |= c->sc->pools[p].n_windows > 0;
	for (size_t w = 0; w < c->sc->n_workloads; w++)
		windows |= c->sc->workloads[w].n_windows > 0;
	if (windows)
		gp_sb_printf(&c->text,
			     "capacity: work waits for GPUs that are busy or outside their "
			     "windows, and neither allocation, memory, placement nor the "
			     "application explains it; a larger pool or a wider window would "
			     "(advise searches for the smallest pool)");
	else
		gp_sb_printf(
			&c->text,
			"capacity: work waits for busy GPUs, and neither allocation, memory, "
			"placement nor the application explains it; a larger pool would (advise "
			"searches for the smallest)");
	gp_sb_printf(&c->ev, "queue p95 %.0f s", isnan(p95) ? 0 : p95);
	if (!isnan(met))
		gp_sb_printf(&c->ev, ", deadlines met %.1f%%", met);
	if (!isnan(slo))
		gp_sb_printf(&c->ev, ", SLO %s", slo >= 1 ? "met" : "missed");
	gp_sb_printf(&c->ev,
		     "; GPUs %.1f%% allocated, the allocated ones %.1f%% engine-active; no quota, "
		     "rule or fragmentation reason and no OOM kill",
		     alloc, share_pct(engine, alloc));
}

static void explain_capacity(struct ctx *c)
{
	const struct workload_spec *ws = c->w;
	const struct pool_spec *ps = c->p;
	if (!ws || !ps) { /* the run's conclusion names no workload */
		explain_run_capacity(c);
		return;
	}
	double p95 = metric(c, ws->name, METRIC_QUEUE_TIME_P95_S),
	       met = metric(c, ws->name, METRIC_DEADLINE_MET_PCT);
	if (ws->request == REQUEST_MIG)
		gp_sb_printf(
			&c->text,
			"%s waits for a %s instance of pool %s, all held by other "
			"pods; more nodes, or a MIG layout with more %s instances, would start it",
			ws->name, ws->mig_profile, ps->name, ws->mig_profile);
	else if (ws->n_windows)
		gp_sb_printf(&c->text,
			     "%s waits for GPUs of pool %s that are busy, or for its own windows%s "
			     "to open, and neither allocation, memory nor placement explains it; a "
			     "larger pool or a wider window would (advise searches for the "
			     "smallest pool)",
			     ws->name, ps->name, ps->n_windows ? " and the pool's" : "");
	else if (ps->n_windows)
		gp_sb_printf(
			&c->text,
			"%s waits for GPUs of pool %s that are busy or outside its windows, and "
			"neither allocation, memory nor placement explains it; a larger pool or a "
			"wider window would (advise searches for the smallest pool)",
			ws->name, ps->name);
	else
		gp_sb_printf(
			&c->text,
			"%s waits for busy GPUs of pool %s, and neither allocation, "
			"memory nor placement explains it; a larger pool would (advise searches "
			"for the smallest)",
			ws->name, ps->name);
	gp_sb_printf(&c->ev, "queue p95 %.0f s", isnan(p95) ? 0 : p95);
	if (!isnan(met))
		gp_sb_printf(&c->ev, ", deadlines met %.1f%%", met);
	gp_sb_printf(&c->ev,
		     "; pool %s %.1f%% allocated; no quota, rule or fragmentation reason and no "
		     "OOM kill",
		     ps->name, c->f->fig.capacity.pool_alloc_pct);
}

/* --- what binds (relax.h) ----------------------------------------------------- */

/* The GPUs of a relaxed quota's text ({nvidia.com/gpu: 18}, or quoted);
 * NAN: none. */
static double relaxed_gpus(const char *relaxed)
{
	static const char gpu[] = "nvidia.com/gpu";
	const char *p = relaxed ? strstr(relaxed, gpu) : NULL;
	if (!p)
		return NAN;
	p += sizeof gpu - 1;
	while (*p == '"' || *p == ':' || *p == ' ')
		p++;
	char *end;
	double v = strtod(p, &end);
	return end > p ? v : NAN;
}

/* A queue's GPU quota that admits all the GPUs its workload's pools can
 * reach (an autoscaled pool at its max): a larger one admits jobs that no
 * node holds, so raising it alone changes nothing.  "; the pools train may
 * use hold 16 GPUs at most (h100 at 2 nodes, its autoscaling max): a larger
 * quota needs more of them". */
static void quota_reach_words(const struct ctx *c, struct gp_sbuf *b)
{
	const struct quota_entry *e =
		c->w && c->f->queue >= 0 ? diagnose_gpu_quota(&c->sc->queues[c->f->queue]) : NULL;
	if (!e || !(relaxed_gpus(c->f->relaxed) > e->nominal))
		return; /* another resource binds (a cpu quota) */
	bool *usable = gp_xcalloc(c->sc->n_pools + 1, sizeof *usable);
	diagnose_usable_pools(c->sc, (size_t)(c->w - c->sc->workloads), usable);
	double reach = 0;
	struct gp_sbuf pools = {0};
	for (size_t p = 0; p < c->sc->n_pools; p++) {
		const struct pool_spec *ps = &c->sc->pools[p];
		if (!usable[p] || ps->gpus_per_node <= 0)
			continue;
		int32_t nodes = diagnose_reach_nodes(ps);
		reach += (double)nodes * ps->gpus_per_node;
		gp_sb_printf(&pools, "%s%s at %d node%s%s", pools.n ? ", " : "", ps->name, nodes,
			     nodes == 1 ? "" : "s",
			     ps->autoscale.on ? ", its autoscaling max" : "");
	}
	if (pools.n && e->nominal >= reach)
		gp_sb_printf(b,
			     "; the pools %s may use hold %g GPUs at most (%s): a larger quota "
			     "needs more of them",
			     c->w->name, reach, pools.s);
	free(pools.s);
	free(usable);
}

/* "queues.team-b.lending_limit = 0 binds 8.0 pod-hours of a's waiting and
 * slowed time; {"nvidia.com/gpu": 12} is its smallest relaxation (the
 * lender lends all of its quota)". */
static void binds_words(struct ctx *c, struct gp_sbuf *b)
{
	const struct finding *f = c->f;
	const struct relax_row *row =
		f->constraint >= 0 ? relax_row_of((enum constraint_kind)f->constraint) : NULL;
	gp_sb_printf(b, "%s = %s binds %.1f pod-hours", f->key, f->value ? f->value : "?",
		     f->pod_hours);
	if (c->w)
		gp_sb_printf(b, " of %s's waiting and slowed time", c->w->name);
	if (f->relaxed)
		gp_sb_printf(b, "; %s is its smallest relaxation", f->relaxed);
	if (row) {
		struct constraint k =
			relax_about((enum constraint_kind)f->constraint, -1,
				    c->w ? (int32_t)(c->w - c->sc->workloads) : -1, -1);
		gp_sb_printf(b, " (%s%s)",
			     f->relaxed ? "" : "to relax: ", relax_relaxation(c->sc, &k));
	}
	if (f->constraint == CONSTRAINT_QUOTA)
		quota_reach_words(c, b);
}

static void explain_binds(struct ctx *c)
{
	binds_words(c, &c->text);
	const struct relax_row *row =
		c->f->constraint >= 0 ? relax_row_of((enum constraint_kind)c->f->constraint) : NULL;
	gp_sb_printf(&c->ev,
		     "%.0f pod-seconds waiting or slowed with %s binding, the most of "
		     "any constraint of the workloads that missed their goals",
		     c->f->pod_hours * 3600, row ? constraint_kind_name(row->kind) : "it");
	if (row)
		gp_sb_printf(&c->ev, "; relaxing it costs: %s", row->cost);
}

/* --- dispatch ---------------------------------------------------------------- */

static void (*const explainers[FINDING_KINDS])(struct ctx *) = {
	[KIND_SHARING] = explain_sharing,
	[KIND_ADMISSION] = explain_admission,
	[KIND_FRAGMENTATION] = explain_fragmentation,
	[KIND_STALLED] = explain_stalled,
	[KIND_OOM] = explain_oom,
	[KIND_VRAM_FULL] = explain_vram_full,
	[KIND_PREALLOCATION] = explain_preallocation,
	[KIND_KV_CACHE] = explain_kv_cache,
	[KIND_RULES] = explain_rules,
	[KIND_REQUESTS] = explain_requests,
	[KIND_TOKENIZER] = explain_tokenizer,
	[KIND_DATA_LOADER] = explain_loader,
	[KIND_MAX_BATCH] = explain_max_batch,
	[KIND_DEADLINE] = explain_deadline,
	[KIND_OFF_GPU] = explain_off_gpu,
	[KIND_RESTARTS] = explain_restarts,
	[KIND_SCALE_DOWN] = explain_scale_down,
	[KIND_MIXED_GPUS] = explain_mixed_gpus,
	[KIND_PREEMPTED] = explain_preempted,
	[KIND_AUTOSCALER_MAX] = explain_autoscaler_max,
	[KIND_REPLICAS] = explain_replicas,
	[KIND_NODE_GROUP_MAX] = explain_node_group_max,
	[KIND_PROVISIONING] = explain_provisioning,
	[KIND_CAPACITY] = explain_capacity,
	[KIND_BINDS] = explain_binds,
};

void explain_finding(const struct scenario *sc, const struct results *r, const struct finding *f,
		     char **text, char **evidence)
{
	struct ctx c = {.sc = sc, .r = r, .f = f};
	if (f->pool >= 0 && (size_t)f->pool < sc->n_pools)
		c.p = &sc->pools[f->pool];
	if (f->workload >= 0 && (size_t)f->workload < sc->n_workloads)
		c.w = &sc->workloads[f->workload];
	if (f->kind < FINDING_KINDS && explainers[f->kind]) /* diagnose_binds.c's findings
							     * come with their words */
		explainers[f->kind](&c);
	if (f->key && f->kind != KIND_BINDS) { /* a detector's finding that names its key */
		gp_sb_printf(&c.text, "; ");
		binds_words(&c, &c.text);
	}
	*text = gp_sb_take(&c.text);
	*evidence = gp_sb_take(&c.ev);
}

void explain_results(const struct scenario *sc, struct results *r)
{
	for (size_t i = 0; i < r->n_findings; i++) {
		struct finding *f = &r->findings[i];
		if (!f->text)
			explain_finding(sc, r, f, &f->text, &f->evidence);
	}
}
