/*
 * diagnose_evidence.c - the findings drawn from each workload's own evidence
 * (see diagnose.c for the view and the ranking): pending reasons that name
 * admission (Kueue quota), fragmentation or requests that strand GPUs, pods
 * that fit no unit anywhere, and an inference server's KV cache, autoscaler
 * and replicas.
 */
#include "diagnose_int.h"

#include "gpuplan/gpupolicy.h"
#include "gpuplan/arrivals.h"
#include "gpuplan/infer.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- evidence from pending reasons ------------------------------------------ */

struct diagnose_pend diagnose_pending(const struct view *v, size_t w, uint32_t mask)
{
	struct diagnose_pend p = {0, 0, NULL, 0};
	double best = -1;
	for (size_t i = 0; i < v->r->n_pending_reasons; i++) {
		const struct pending_reason *pr = &v->r->pending_reasons[i];
		if (pr->workload != (int32_t)w || !(pr->kinds & mask))
			continue;
		p.seconds += pr->pending_seconds;
		p.pods += pr->pods;
		p.kinds |= pr->kinds;
		if (pr->pending_seconds > best) {
			best = pr->pending_seconds;
			p.top = pr->reason;
		}
	}
	return p;
}

/* GPUs' worth one job of w asks for. */
static double job_gpus(const struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	double unit = 0;
	for (size_t p = 0; p < v->sc->n_pools && unit <= 0; p++)
		unit = scenario_gpu_equivalent(&v->sc->pools[p], ws);
	int32_t pods = ws->gang && ws->pods > 1 ? ws->pods : 1;
	return (unit > 0 ? unit : 1) * pods;
}

/* Free GPU capacity in the pools w may use, over the windows in which w pended. */
struct free_sums {
	double secs;      /* seconds of those windows */
	double free, cap; /* GPU-seconds free and in capacity */
	double pend;      /* w's pending pod-seconds */
	double most;      /* w's most jobs pending in a window (its average there, up) */
	double covered;   /* of which in windows whose free capacity held one of its jobs */
};

/* MIG pools are left out: their free instances are of the shapes the layout
 * fixed, so no placement policy packs them (the layout is the question).  So
 * are pools whose GPUs are too small for w's pods: free there is not free
 * for w (a pod placed there is OOM-killed; the memory finding says so). */
static void free_while_pending(struct view *v, size_t w, struct free_sums *f)
{
	memset(f, 0, sizeof *f);
	double need = job_gpus(v, w);
	for (size_t k = 0; k < v->n_windows; k++) {
		double pending = diagnose_row(v, k, diagnose_workload_scope(v, w))->pending,
		       L = v->len[k];
		if (pending <= 0)
			continue;
		double free = 0, cap = 0;
		for (size_t p = 0; p < v->sc->n_pools; p++) {
			if (!diagnose_allowed(v, w, p) ||
			    v->sc->pools[p].sharing.mode == SHARING_MIG ||
			    !diagnose_could_hold(v->sc, p, w))
				continue;
			const struct ts_row *y = diagnose_row(v, k, diagnose_pool_scope(v, p));
			double open = cluster_open_share(&v->sc->pools[p], &v->sc->workloads[w],
							 v->sc->start_epoch, y->t, L);
			free += open * fmax(0, y->gpus_capacity - y->gpus_allocated);
			cap += open * y->gpus_capacity;
		}
		f->secs += L;
		f->free += free * L;
		f->cap += cap * L;
		f->pend += pending * L;
		f->most = fmax(f->most, ceil(pending - 1e-9));
		if (free >= need - 1e-9)
			f->covered += pending * L;
	}
}

/* Long enough to matter: pending pod-seconds over DIAGNOSE_PENDING_SHARE of the span. */
bool diagnose_matters(const struct view *v, double pod_seconds)
{
	return pod_seconds > 0 && pod_seconds >= DIAGNOSE_PENDING_SHARE * v->active;
}

/* Whether w pended long enough to matter with a message of a kind in mask
 * (*pend_s; *top its longest message) while the free GPUs it may use held
 * one of its jobs in at least half of that time (*f): the GPUs were there,
 * in pieces or stranded, not missing. */
static bool pends_beside_free_gpus(struct view *v, size_t w, uint32_t mask, double *pend_s,
				   const char **top, struct free_sums *f)
{
	struct diagnose_pend pend = diagnose_pending(v, w, mask);
	*top = pend.top;
	*pend_s = pend.seconds;
	if (!diagnose_matters(v, *pend_s))
		return false;
	free_while_pending(v, w, f);
	return diagnose_matters(v, f->covered) && f->covered >= 0.5 * f->pend;
}

/* --- allocation: admission (Kueue quota) ------------------------------------ */

/* Kueue's message names the resource whose quota is short ("insufficient
 * unused quota for cpu in flavor default, 4 more needed"): when it is cpu or
 * memory, that quota is what binds, raised by what the jobs that the free
 * GPUs hold (idle / need of them) ask for. */
static void quota_other_fix(struct view *v, struct finding *fd, size_t w,
			    const struct queue_spec *q, const char *top, double idle, double need)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const char *at = top ? strstr(top, "quota for ") : NULL;
	if (!at)
		return;
	at += strlen("quota for ");
	size_t n = strcspn(at, " ,");
	bool cpu = n == 3 && !strncmp(at, "cpu", 3), mem = n == 6 && !strncmp(at, "memory", 6);
	double pods = ws->gang && ws->pods > 1 ? ws->pods : 1,
	       per_job = cpu   ? ws->cpu * pods
			 : mem ? ws->memory_bytes * pods
			       : 0;
	const struct quota_entry *e = NULL;
	for (size_t i = 0; i < q->n_quota && !e; i++)
		if (!strncmp(q->quota[i].resource, at, n) && !q->quota[i].resource[n])
			e = &q->quota[i];
	double jobs = floor(idle / need + 1e-9);
	if (!e || !(per_job > 0) || jobs < 1)
		return;
	double amount = e->nominal + jobs * per_job;
	struct gp_sbuf map = {0};
	diagnose_quota_map(&map, q, e->resource, amount, false);
	if (cpu)
		finding_fix_setf(finding_fixf(fd, "cpu quota of %s at %g cores", q->name, amount),
				 "queues.%s.quota=%s", q->name, map.s);
	else
		finding_fix_setf(finding_fixf(fd, "memory quota of %s at %.0f GiB", q->name,
					      amount / GP_GIB),
				 "queues.%s.quota=%s", q->name, map.s);
	free(map.s);
}

/* The GPUs the other queues of queue q's cohort may lend it: each one's
 * nominal quota, or its lending limit below that (Kueue's lendingLimit). */
static double cohort_lends(const struct scenario *sc, size_t q)
{
	const char *root = scenario_root_cohort(sc, q);
	double lends = 0;
	for (size_t k = 0; root && k < sc->n_queues; k++) {
		const char *other = scenario_root_cohort(sc, k);
		const struct quota_entry *x = diagnose_gpu_quota(&sc->queues[k]);
		if (k != q && x && other && !strcmp(other, root))
			lends += fmin(x->nominal, x->lending_limit);
	}
	return lends;
}

/* The GPUs the pools workload w may use can reach. */
static double reach_gpus(struct view *v, size_t w)
{
	double gpus = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++)
		if (diagnose_allowed(v, w, p))
			gpus += (double)diagnose_reach_nodes(&v->sc->pools[p]) *
				v->sc->pools[p].gpus_per_node;
	return gpus;
}

/* Jobs of w wait on their queue's quota while the GPUs they could use are free. */
static void admission_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	struct diagnose_pend quota =
		diagnose_pending(v, w, PEND_BIT(PEND_QUOTA) | PEND_BIT(PEND_QUEUE_ORDER));
	const char *top = quota.top;
	double quota_s = quota.seconds;
	if (!diagnose_matters(v, quota_s) || ws->queue < 0 || (size_t)ws->queue >= v->sc->n_queues)
		return;
	struct free_sums f;
	free_while_pending(v, w, &f);
	double need = job_gpus(v, w);
	if (f.secs <= 0 || f.free / f.secs < need)
		return; /* the GPUs were busy too: not the quota alone */
	const struct queue_spec *q = &v->sc->queues[ws->queue];
	const struct quota_entry *e = diagnose_gpu_quota(q);
	double idle = f.free / f.secs;
	/* Mostly behind a StrictFIFO head: the jobs would fit, the order holds them. */
	bool strict = 2 * diagnose_pending(v, w, PEND_BIT(PEND_QUEUE_ORDER)).seconds > quota_s;
	struct finding *fd = diagnose_add(v, STEP_ALLOCATION, KIND_ADMISSION, quota_s, -1, (int)w);
	fd->queue = ws->queue;
	fd->figure = idle;
	fd->reason = diagnose_reason_id(v, top);
	fd->fig.wait = (struct finding_wait){.pending_s = quota_s,
					     .secs = f.secs,
					     .free = f.free,
					     .cap = f.cap,
					     .need = need,
					     .strict = strict};
	if (strict)
		finding_fix_setf(finding_fixf(fd, "BestEffortFIFO for %s", q->name),
				 "queues.%s.strategy=BestEffortFIFO", q->name);
	else
		diagnose_lender(v, fd, w);
	quota_other_fix(v, fd, w, q, top, idle, need);
	if (!e)
		return;
	/* the waiting jobs the free GPUs would hold, whole (no more than wait
	 * at once: a borrowing limit of 2 under 7 two-GPU jobs, 5 admitted and
	 * 10 GPUs free, grows to 6, not 12): no more than the cohort lends, nor
	 * a quota past the GPUs its work may use */
	double more = floor(fmin(idle, f.most * need) / need + 1e-9) * need;
	double lends = cohort_lends(v->sc, (size_t)ws->queue), reach = reach_gpus(v, w);
	/* In a cohort, borrowing what others leave unused before owning more. */
	for (int pass = q->cohort ? 0 : 1; pass < 2; pass++) {
		if (pass == 1) {
			double to = fmin(e->nominal + more, fmax(reach, e->nominal + need));
			struct gp_sbuf map = {0};
			diagnose_quota_map(&map, q, "nvidia.com/gpu", to, false);
			finding_fix_setf(finding_fixf(fd, "quota of %s at %g GPUs", q->name, to),
					 "queues.%s.quota=%s", q->name, map.s);
			free(map.s);
			continue;
		}
		double to = fmin(e->borrowing_limit + more, lends);
		if (isinf(e->borrowing_limit) || !(to > e->borrowing_limit))
			continue;
		struct gp_sbuf lim = {0};
		diagnose_quota_map(&lim, q, "nvidia.com/gpu", to, true);
		finding_fix_setf(finding_fixf(fd, "borrowing limit of %s at %g GPUs", q->name, to),
				 "queues.%s.borrowing_limit=%s", q->name, lim.s);
		free(lim.s);
	}
}

/* --- allocation: fragmentation ----------------------------------------------- */

/* Jobs of w wait for GPUs while the free capacity of the pools they may use
 * sums to a job's request: it is in pieces (partial GPUs, GPUs spread over
 * nodes) that no job fits.  Packing it is a placement policy's job. */
static void fragmentation_finding(struct view *v, size_t w)
{
	const char *top;
	double res_s;
	struct free_sums f;
	if (!pends_beside_free_gpus(v, w, PEND_BIT(PEND_RESOURCE), &res_s, &top, &f))
		return;
	/* Free GPUs a topology spread rule keeps the pods off are not in
	 * pieces: the rule is the cause (a placement finding says so). */
	if (2 * diagnose_pending(v, w, PEND_BIT(PEND_SPREAD) | PEND_BIT(PEND_SPREAD_LABEL))
			    .seconds >=
	    res_s)
		return;
	double need = job_gpus(v, w);
	const struct scheduler_spec *sch = &v->sc->scheduler;
	bool packs = sch->scoring.type == SCORING_MOST_ALLOCATED && sch->scoring.weight[SCORE_GPU];
	struct finding *fd =
		diagnose_add(v, STEP_ALLOCATION, KIND_FRAGMENTATION, f.covered, -1, (int)w);
	fd->reason = diagnose_reason_id(v, top);
	fd->fig.wait = (struct finding_wait){.pending_s = res_s,
					     .secs = f.secs,
					     .free = f.free,
					     .cap = f.cap,
					     .need = need,
					     .pend = f.pend,
					     .covered = f.covered};
	fd->figure = f.free / f.secs;
	static const enum gpu_policy packers[] = {GPU_POLICY_BEST_FIT, GPU_POLICY_FGD,
						  GPU_POLICY_GPU_PACKING};
	for (size_t i = 0; i < sizeof packers / sizeof packers[0]; i++)
		if (packers[i] != sch->gpu_policy)
			finding_fix_setf(
				finding_fixf(fd, "gpu_policy %s", gpupolicy_names[packers[i]]),
				"scheduler.gpu_policy=%s", gpupolicy_names[packers[i]]);
	if (!packs)
		finding_fix_setf(finding_fixf(fd, "scoring MostAllocated"),
				 "scheduler.scoring=MostAllocated");
}

/* --- placement: requests that strand GPUs ------------------------------------ */

/* Pods of w a node of p holds by its GPUs, and by its cores and memory
 * (INT32_MAX where the pod asks for none or the pool says none). */
static void pods_per_node(const struct pool_spec *p, const struct workload_spec *ws,
			  int32_t *by_gpus, int32_t *by_cpu, int32_t *by_memory)
{
	double eq = scenario_gpu_equivalent(p, ws);
	*by_gpus = eq > 0 ? (int32_t)floor(p->gpus_per_node / eq + 1e-9) : 0;
	*by_cpu = ws->cpu > 0 && p->cpu > 0 ? (int32_t)floor(p->cpu / ws->cpu + 1e-9) : INT32_MAX;
	*by_memory = ws->memory_bytes > 0 && p->memory_bytes > 0
			     ? (int32_t)floor(p->memory_bytes / ws->memory_bytes + 1e-9)
			     : INT32_MAX;
}

/*
 * w's pods pend on "Insufficient cpu" or "memory" while a job's GPUs are
 * free in most of that time: its requests fill a node before its GPUs do, so
 * GPUs are stranded.  The pool named is the one allowed to w where the most
 * GPUs are stranded so; the fix is the request that fits a pod per its GPUs
 * there (node cores or memory over the pods its GPUs hold), to run if the
 * pods use less than they ask for.
 */
static void requests_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const char *top;
	double pend_s;
	struct free_sums f;
	if (!pends_beside_free_gpus(v, w, PEND_BIT(PEND_CPU) | PEND_BIT(PEND_MEMORY), &pend_s, &top,
				    &f))
		return;
	int best = -1;
	double most = 0; /* GPUs stranded in the pool */
	int32_t gpus = 0, cpu = 0, memory = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		const struct pool_spec *ps = &v->sc->pools[p];
		int32_t g, c, m;
		pods_per_node(ps, ws, &g, &c, &m);
		int32_t host = c < m ? c : m;
		double stranded = (double)ps->nodes * (g - host) * scenario_gpu_equivalent(ps, ws);
		if (diagnose_allowed(v, w, p) && g > 0 && host < g && stranded > most) {
			best = (int)p;
			most = stranded;
			gpus = g, cpu = c, memory = m;
		}
	}
	if (best < 0)
		return;
	const struct pool_spec *ps = &v->sc->pools[best];
	/* The requests that fit: to a tenth of a core and a GiB, as people write them. */
	double fit_cpu = cpu < gpus ? floor(ps->cpu / gpus * 10) / 10 : 0;
	double fit_memory = memory < gpus ? floor(ps->memory_bytes / gpus / GP_GIB) * GP_GIB : 0;
	if ((cpu < gpus && !(fit_cpu > 0)) || (memory < gpus && !(fit_memory > 0)))
		return; /* nodes too small to give each GPU a tenth of a core or a GiB */
	struct finding *fd =
		diagnose_add(v, STEP_PLACEMENT, KIND_REQUESTS, f.covered, best, (int)w);
	fd->reason = diagnose_reason_id(v, top);
	struct finding_requests *q = &fd->fig.requests;
	*q = (struct finding_requests){.pending_s = pend_s,
				       .secs = f.secs,
				       .free = f.free,
				       .cap = f.cap,
				       .pend = f.pend,
				       .covered = f.covered,
				       .cpu = fit_cpu,
				       .memory = fit_memory,
				       .pods_per_node = cpu < memory ? cpu : memory};
	fd->figure = most;
	char cores[32] = "", gib[32] = "";
	if (q->cpu > 0)
		snprintf(cores, sizeof cores, " %g cores", q->cpu);
	if (q->memory > 0)
		snprintf(gib, sizeof gib, "%s %g GiB", q->cpu > 0 ? "," : "", q->memory / GP_GIB);
	struct finding_fix *x = finding_fixf(fd, "%s requesting%s%s a pod", ws->name, cores, gib);
	if (q->cpu > 0)
		finding_fix_setf(x, "workloads.%s.cpu=%g", ws->name, q->cpu);
	if (q->memory > 0)
		finding_fix_setf(x, "workloads.%s.memory=%gGiB", ws->name, q->memory / GP_GIB);
}

/* --- stalled work: a pod that fits no unit anywhere ------------------------- */

/* Why a pod of w never fits pool p: 0 it fits an empty node, else a PEND kind. */
static int never_fits(struct view *v, size_t w, size_t p)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	const struct workload_spec *ws = &v->sc->workloads[w];
	if (placement_pool_filtered(diagnose_placer(v), w, p))
		return PEND_AFFINITY;
	if (!scenario_pool_offers(ps, ws))
		return PEND_RESOURCE;
	if (ws->request == REQUEST_GPUS && ws->gpus > ps->gpus_per_node)
		return PEND_RESOURCE; /* a pod's units go on distinct GPUs of one node */
	if (scenario_gpu_equivalent(ps, ws) <= 0)
		return PEND_VRAM;
	if (ws->cpu > ps->cpu || ws->memory_bytes > ps->memory_bytes)
		return PEND_CPU;
	return 0;
}

/* The smallest changes that let a pod of w fit a unit of p whose memory
 * its VRAM exceeds: narrower weights, or fewer units per GPU. */
static void fix_vram(struct view *v, struct finding *fd, size_t w, size_t p)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	const struct workload_spec *ws = &v->sc->workloads[w];
	struct finding_stalled *st = &fd->fig.stalled;
	double unit = scenario_unit_memory(ps, ws);
	int tp = ws->request == REQUEST_GPUS && ws->gpus > 0 ? ws->gpus : 1;
	static const enum quant narrower[] = {QUANT_INT8, QUANT_INT4};
	for (size_t i = 0; ws->model && i < 2; i++) {
		double now = footprint_weights_bytes(ws->model, (enum quant)ws->quantization);
		double saved = (now - footprint_weights_bytes(ws->model, narrower[i])) / tp;
		if (saved > 0 && ws->vram_bytes - saved <= unit) {
			st->quant = (int32_t)narrower[i];
			st->quant_vram = ws->vram_bytes - saved;
			diagnose_fix_quant(fd, ws, narrower[i]);
			break;
		}
	}
	const struct sharing *sh = &ps->sharing;
	if (sh->mode == SHARING_MPS) {
		for (int32_t r = sh->replicas / 2; r >= 1; r /= 2)
			if (ws->vram_bytes <= ps->gpu->memory_bytes / r) {
				st->mps_replicas = r;
				if (r > 1)
					diagnose_fix_replicas(fd, ps, SHARING_MPS, r);
				else
					finding_fix_setf(
						finding_fixf(fd, "exclusive GPUs on %s", ps->name),
						"pools.%s.sharing=%s", ps->name,
						sharing_name(SHARING_EXCLUSIVE));
				break;
			}
	}
}

/* The MIG layouts that would start w's pods on the pools whose GPUs have its
 * profile and whose layout has none of it (diagnose_mig_layout keeps the
 * profiles other work asks for). */
static void fix_mig_layouts(struct view *v, struct finding *fd, size_t w)
{
	for (size_t p = 0; p < v->sc->n_pools; p++)
		if (!placement_pool_filtered(diagnose_placer(v), w, p))
			diagnose_fix_mig_layout(fd, v->sc, p, w);
}

/* Work of w is left that can never start: no pool fits one of its pods. */
static void stalled_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	double unfinished = diagnose_metric(v, ws->name, METRIC_JOBS_UNFINISHED);
	double completed = diagnose_metric(v, ws->name, METRIC_JOBS_COMPLETED);
	if (!(unfinished > 0) || completed > 0)
		return;
	int why = -1;
	size_t at = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		int k = never_fits(v, w, p);
		if (!k)
			return; /* some pool fits it: it waits, it is not stalled */
		/* The cause to report: the pool that comes closest (VRAM, then size, then rules). */
		int rank = k == PEND_VRAM ? 3 : k == PEND_RESOURCE ? 2 : k == PEND_CPU ? 1 : 0;
		int best = why == PEND_VRAM       ? 3
			   : why == PEND_RESOURCE ? 2
			   : why == PEND_CPU      ? 1
			   : why < 0              ? -1
						  : 0;
		if (rank > best)
			why = k, at = p;
	}
	if (why < 0)
		return;
	enum step step = why == PEND_VRAM       ? STEP_MEMORY
			 : why == PEND_AFFINITY ? STEP_PLACEMENT
						: STEP_ALLOCATION;
	struct diagnose_pend pend = diagnose_pending(v, w, ~0u);
	struct finding *fd =
		diagnose_add(v, step, KIND_STALLED, 1e18 + pend.seconds, (int)at, (int)w);
	fd->reason = diagnose_reason_id(v, pend.top);
	fd->fig.stalled = (struct finding_stalled){.why = why, .quant = -1};
	if (why == PEND_VRAM)
		fix_vram(v, fd, w, at);
	if (why == PEND_RESOURCE && ws->request == REQUEST_MIG)
		fix_mig_layouts(v, fd, w);
}

/* --- inference: KV cache and autoscaler ------------------------------------- */

/* A server that preempts for want of KV blocks with memory_fraction
 * already high (vLLM's default 0.9 and up), whose cache holds under a
 * quarter of max_batch typical sequences (long contexts: any overloaded
 * server preempts, but one whose batch the cache keeps this small is bound
 * by it): the cache's format is what is left to give it room, an fp8 KV
 * cache (vLLM's --kv-cache-dtype fp8) holding twice the sequences of fp16
 * or bf16 in the same memory. */
static void kv_format_finding(struct view *v, size_t w, double pre, double reqs)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	int64_t fits = diagnose_batch_fits(v->sc, w);
	if ((in->kv_cache != QUANT_FP16 && in->kv_cache != QUANT_BF16) || 4 * fits >= in->max_batch)
		return;
	struct finding *fd = diagnose_add(v, STEP_MEMORY, KIND_KV_CACHE, pre, -1, (int)w);
	fd->fig.kv.target = 0;
	fd->fig.kv.preemptions = pre;
	fd->fig.kv.requests = reqs;
	fd->fig.kv.fits = (double)fits;
	fd->figure = pre;
	finding_fix_setf(finding_fixf(fd, "fp8 KV cache for %s", ws->name),
			 "workloads.%s.kv_cache=fp8", ws->name);
}

/* A service misses its SLO while its server preempts sequences for want of
 * KV blocks, and memory_fraction leaves the cache small. */
static void kv_cache_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	bool slo_met = results_holds(v->r, ws->name, METRIC_SLO_MET); /* absent: not shown met */
	double pre = diagnose_metric(v, ws->name, METRIC_PREEMPTIONS);
	double reqs = diagnose_metric(v, ws->name, METRIC_REQUESTS_SUBMITTED);
	double kills = diagnose_metric(v, ws->name, METRIC_OOM_KILLS);
	if (slo_met || !diagnose_kv_preempts(pre, reqs) || kills > 0 || !(in->memory_fraction > 0))
		return;
	if (in->memory_fraction >= 0.85) {
		kv_format_finding(v, w, pre, reqs);
		return;
	}
	int32_t share = 1;
	for (size_t p = 0; p < v->sc->n_pools; p++)
		if (diagnose_allowed(v, w, p) &&
		    v->sc->pools[p].sharing.mode == SHARING_TIME_SLICING &&
		    v->sc->pools[p].sharing.replicas > share)
			share = v->sc->pools[p].sharing.replicas;
	double target = floor(100 * 0.9 / share) / 100;
	if (target <= in->memory_fraction)
		return;
	struct finding *fd = diagnose_add(v, STEP_MEMORY, KIND_KV_CACHE, pre, -1, (int)w);
	fd->fig.kv.target = target;
	fd->fig.kv.preemptions = pre;
	fd->fig.kv.requests = reqs;
	fd->figure = pre;
	finding_fix_setf(finding_fixf(fd, "memory_fraction %.2g for %s", target, ws->name),
			 "workloads.%s.memory_fraction=%.2g", ws->name, target);
}

/* Whether workloads a and b may both run in some pool. */
static bool share_a_pool(struct view *v, size_t a, size_t b)
{
	for (size_t p = 0; p < v->sc->n_pools; p++)
		if (diagnose_allowed(v, a, p) && diagnose_allowed(v, b, p))
			return true;
	return false;
}

/* The workloads that held GPUs of the pools service w may use while its
 * replicas pended, into fd's members. */
static void holders(struct view *v, size_t w, struct finding *fd)
{
	size_t n = v->sc->n_workloads;
	double *held = gp_xcalloc(n + 1, sizeof *held);
	for (size_t k = 0; k < v->n_windows; k++) {
		if (diagnose_row(v, k, diagnose_workload_scope(v, w))->pending <= 0)
			continue;
		for (size_t o = 0; o < n; o++)
			held[o] +=
				diagnose_row(v, k, diagnose_workload_scope(v, o))->gpus_allocated;
	}
	fd->members = gp_xcalloc(n + 1, sizeof *fd->members);
	for (size_t o = 0; o < n; o++)
		if (o != w && held[o] > 0 && share_a_pool(v, w, o))
			fd->members[fd->n_members++] = (int32_t)o;
	free(held);
}

/* An autoscaled service misses its SLO with its replicas at max_replicas,
 * or with the replicas it scaled to pending for GPUs other work held
 * longer than it sat at its maximum (then those replicas, kept warm from
 * the start, are the fix, not a higher maximum). */
static void autoscaler_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	if (!(in->target_queue > 0) || results_holds(v->r, ws->name, METRIC_SLO_MET) ||
	    !v->n_windows)
		return;
	double at_max = 0;
	for (size_t k = 0; k < v->n_windows; k++)
		if (diagnose_row(v, k, diagnose_workload_scope(v, w))->running >=
		    in->max_replicas - 0.05)
			at_max += v->len[k];
	/* Replicas it scaled to that waited for GPUs other work held: the
	 * maximum is not what binds (replicas never preempt running pods). */
	double held = diagnose_pending(v, w, PEND_BIT(PEND_RESOURCE)).seconds;
	bool behind = held > at_max && held >= DIAGNOSE_PENDING_SHARE * v->active;
	if (at_max < DIAGNOSE_PENDING_SHARE * v->active && !behind)
		return;
	struct finding *fd =
		diagnose_add(v, STEP_CAPACITY, KIND_AUTOSCALER_MAX, at_max, -1, (int)w);
	fd->fig.scaling.at_max_s = at_max;
	fd->fig.scaling.span = v->span;
	fd->fig.scaling.pending_s = behind ? held : 0;
	int32_t max = in->max_replicas * 2;
	if (behind) { /* replicas placed before the batch work takes the GPUs */
		holders(v, w, fd);
		if (in->replicas < in->max_replicas)
			finding_fix_setf(finding_fixf(fd, "min_replicas %d for %s",
						      (int)in->max_replicas, ws->name),
					 "workloads.%s.replicas.min=%d", ws->name,
					 (int)in->max_replicas);
		return;
	}
	/* The backlog of a ramp from min_replicas outlasts a p99 over minutes of
	 * traffic: the old maximum kept warm, alone (where the maximum is all the
	 * service's nodes hold, a higher one is never reached) and with a higher
	 * one to scale to. */
	if (in->replicas < in->max_replicas)
		finding_fix_setf(
			finding_fixf(fd, "min_replicas %d for %s", (int)in->max_replicas, ws->name),
			"workloads.%s.replicas.min=%d", ws->name, (int)in->max_replicas);
	finding_fix_setf(finding_fixf(fd, "max_replicas %d for %s", (int)max, ws->name),
			 "workloads.%s.replicas.max=%d", ws->name, (int)max);
	if (in->replicas < in->max_replicas) {
		struct finding_fix *x = finding_fixf(fd, "min_replicas %d, max_replicas %d for %s",
						     (int)in->max_replicas, (int)max, ws->name);
		finding_fix_setf(x, "workloads.%s.replicas.max=%d", ws->name, (int)max);
		finding_fix_setf(x, "workloads.%s.replicas.min=%d", ws->name,
				 (int)in->max_replicas);
	}
}

/*
 * A service that misses its SLO with its replicas' batches full at
 * max_batch (vLLM's max_num_seqs) while their KV cache holds at least twice
 * as many sequences: the setting, not replicas or GPUs, limits it.  A
 * replica's batch on average is Little's law over the time in the batch:
 * served rate x (e2e - queue wait - tokenizer wait) / replicas.
 */
static bool max_batch_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	double served = diagnose_metric(v, ws->name, METRIC_THROUGHPUT_RPS),
	       e2e = diagnose_metric(v, ws->name, METRIC_E2E_MEAN_S),
	       queued = diagnose_metric(v, ws->name, METRIC_REQUEST_QUEUE_MEAN_S),
	       tok = diagnose_metric(v, ws->name, METRIC_TOKENIZE_WAIT_MEAN_S);
	int32_t replicas = in->target_queue > 0 ? in->max_replicas : in->replicas;
	if (results_holds(v->r, ws->name, METRIC_SLO_MET) || !(served > 0) || replicas < 1)
		return false;
	double in_batch = served * (e2e - queued - (isnan(tok) ? 0 : tok)) / replicas;
	int64_t fits = diagnose_batch_fits(v->sc, w);
	if (!(in_batch >= 0.95 * in->max_batch) || fits < 2 * (int64_t)in->max_batch ||
	    !(queued > 0))
		return false;
	struct finding *fd = diagnose_add(v, STEP_APPLICATION, KIND_MAX_BATCH, queued, -1, (int)w);
	fd->fig.batch = (struct finding_batch){diagnose_offered_rate(in), served, in_batch,
					       in->max_batch, (int32_t)fits};
	fd->figure = (double)fits;
	diagnose_fix_max_batch(fd, ws, fits);
	return true;
}

/* Whether service w had requests (running or waiting) in window k. */
static bool serving(const struct view *v, size_t w, size_t k)
{
	const struct ts_row *y = diagnose_row(v, k, diagnose_workload_scope(v, w));
	return y->requests_running + y->requests_waiting > 0;
}

/* Whether workload w's pods may run on pool p (its rules allow it, its GPUs
 * hold them). */
static bool may_host(struct view *v, size_t w, size_t p)
{
	return diagnose_allowed(v, w, p) &&
	       scenario_gpu_equivalent(&v->sc->pools[p], &v->sc->workloads[w]) > 0;
}

/* A replica's GPUs: the least, of the pools workload w may use; 0: none. */
static double replica_gpus(struct view *v, size_t w)
{
	double least = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		double eq = scenario_gpu_equivalent(&v->sc->pools[p], &v->sc->workloads[w]);
		if (may_host(v, w, p))
			least = least > 0 ? fmin(least, eq) : eq;
	}
	return least;
}

/* Over the windows in which service w had requests: the % of its GPUs in
 * iterations (*duty) and the GPUs idle on average in the pools it may use
 * (*idle).  False when it had none. */
static bool while_serving(struct view *v, size_t w, double *duty, double *idle)
{
	double busy = 0, held = 0, free = 0, span = 0;
	for (size_t k = 0; k < v->n_windows; k++) {
		if (!serving(v, w, k))
			continue;
		const struct ts_row *y = diagnose_row(v, k, diagnose_workload_scope(v, w));
		busy += y->engine_active * v->len[k];
		held += y->gpus_allocated * v->len[k];
		span += v->len[k];
		for (size_t p = 0; p < v->sc->n_pools; p++) {
			const struct ts_row *pool = diagnose_row(v, k, diagnose_pool_scope(v, p));
			if (may_host(v, w, p))
				free += fmax(0, pool->gpus_capacity - pool->gpus_allocated) *
					v->len[k];
		}
	}
	if (!(held > 0))
		return false;
	*duty = 100 * busy / held;
	*idle = free / span;
	return true;
}

/*
 * A service with fixed replicas misses its SLO with its replicas busy
 * (DIAGNOSE_DUTY or more of the time in iterations) while the pools it may
 * use have GPUs idle: more replicas on those GPUs, not more nodes.  Both
 * are measured over the windows in which the service had requests: a
 * service whose traffic lasts minutes of an 8-hour run is saturated while
 * it serves, however idle its replicas afterwards, and the GPUs that count
 * are the ones idle then (batch work may take them later).  The replicas
 * named serve the offered rate at the rate a replica served, 80 % busy, as
 * many as the idle GPUs hold.
 */
static void replicas_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	double served = diagnose_metric(v, ws->name, METRIC_THROUGHPUT_RPS),
	       offered = diagnose_offered_rate(in), per_replica = replica_gpus(v, w), duty, idle;
	/* (a disaggregated service's replicas are per role: not this fix's key) */
	if (in->target_queue > 0 || in->disagg || results_holds(v->r, ws->name, METRIC_SLO_MET) ||
	    !(served > 0) || per_replica <= 0 || !while_serving(v, w, &duty, &idle) ||
	    !(duty >= 100 * DIAGNOSE_DUTY))
		return;
	int32_t room = (int32_t)floor(idle / per_replica + 1e-9);
	int32_t wanted = (int32_t)ceil(offered / (served / in->replicas) / 0.8 - 1e-9);
	int32_t need = wanted < in->replicas + room ? wanted : in->replicas + room;
	if (need <= in->replicas)
		return;
	struct finding *fd =
		diagnose_add(v, STEP_CAPACITY, KIND_REPLICAS, (double)room, -1, (int)w);
	fd->fig.replicas = (struct finding_replicas){offered, served, duty, idle, need, wanted};
	finding_fix_setf(finding_fixf(fd, "%d replicas of %s", (int)need, ws->name),
			 "workloads.%s.replicas=%d", ws->name, (int)need);
}

/*
 * A service misses its SLO with its replicas busy (DIAGNOSE_DUTY or more of
 * the time it serves) and no room for another in the pools it may use,
 * while its rules (a gpu_spec, a node selector or affinity, a taint it does
 * not tolerate) keep it off pools whose GPUs would hold it and idled
 * meanwhile: the rule binds, not the hardware.  A rules finding with no pod
 * pending; its fixes take each rule away (advise also tries the idle pool's
 * GPU type in their place: relax_fixes.c).
 */
static void confined_finding(struct view *v, size_t w, size_t *hidden)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	double per_replica = replica_gpus(v, w), duty, idle;
	if (in->disagg || results_holds(v->r, ws->name, METRIC_SLO_MET) || per_replica <= 0 ||
	    !while_serving(v, w, &duty, &idle) || !(duty >= 100 * DIAGNOSE_DUTY) ||
	    idle >= per_replica) /* room for another replica: replicas_finding's case */
		return;
	struct finding_rules g = {.duty = duty};
	size_t nh = diagnose_hidden_idle(v, w, false, serving, hidden, &g);
	double least = INFINITY; /* a replica's GPUs in the hidden pools */
	for (size_t i = 0; i < nh; i++)
		least = fmin(least, scenario_gpu_equivalent(&v->sc->pools[hidden[i]], ws));
	if (!nh || g.most < least || g.idle <= 0)
		return;
	g.rules = diagnose_hiding_rules(v->sc, w, hidden, nh);
	struct finding *f = diagnose_add(v, STEP_PLACEMENT, KIND_RULES, g.idle, -1, (int)w);
	f->fig.rules = g;
	diagnose_rule_fixes(f, ws, hidden, nh);
}

/* The pools workload w's pods used, from its allocation rows (cost.h): the
 * one pool of them all, -1 for several (or none known). */
static int32_t pool_used(const struct results *r, size_t w)
{
	int32_t pool = -2;
	for (size_t i = 0; i < r->n_allocations; i++) {
		const struct allocation *a = &r->allocations[i];
		if (a->workload == (int32_t)w && a->gpu_hours > 0)
			pool = pool == -2 || pool == a->pool ? a->pool : -1;
	}
	return pool < 0 ? -1 : pool;
}

/* The engine-active share of the allocated GPUs of the pools of type g (or,
 * !of, of the other types) that service w may use, over the windows in which
 * it had requests; NAN: none allocated.  A pool's rows count every tenant:
 * batch work beside the replicas moves it too (the finding asks for a
 * round-robin service on mixed types that misses its SLO besides). */
static double type_busy(struct view *v, size_t w, const struct gpu_type *g, bool of)
{
	double busy = 0, held = 0;
	for (size_t k = 0; k < v->n_windows; k++) {
		if (!serving(v, w, k))
			continue;
		for (size_t p = 0; p < v->sc->n_pools; p++) {
			const struct ts_row *pool = diagnose_row(v, k, diagnose_pool_scope(v, p));
			if ((v->sc->pools[p].gpu == g) == of && may_host(v, w, p)) {
				busy += pool->engine_active * v->len[k];
				held += pool->gpus_allocated * v->len[k];
			}
		}
	}
	return held > 0 ? busy / held : NAN;
}

/*
 * A service whose router hands every replica the same share of its
 * requests (round-robin, as kube-proxy spreads a Service's connections, not
 * by load) misses its SLO with its replicas on GPU types of different
 * speed: the replicas on the slower type fall behind on their share while
 * the others idle.  Seen as replicas below the duty of saturated ones, or,
 * as a continuous-batching server iterates whenever it holds a sequence, as
 * the slowest type's GPUs busier while it had requests than the others' by
 * DIAGNOSE_IMBALANCE or more.  The fixes: the service kept on the faster
 * types (gpu_spec: every type it used but the slowest, by HBM bandwidth,
 * which bounds a decode step), or a router by load (least outstanding
 * requests).
 */
static void mixed_gpus_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct inference_spec *in = ws->inference;
	double duty = diagnose_metric(v, ws->name, METRIC_DUTY_CYCLE_PCT);
	/* the allocation rows last: a scan of them all */
	if (in->route != ROUTE_ROUND_ROBIN || in->replicas < 2 || in->disagg || in->service ||
	    results_holds(v->r, ws->name, METRIC_SLO_MET) || pool_used(v->r, w) >= 0)
		return;
	const struct gpu_type **types = gp_xcalloc(v->sc->n_pools + 1, sizeof *types);
	size_t n = 0, slowest = 0;
	int32_t slow_pool = -1; /* the first pool of the slowest type */
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		const struct gpu_type *g = v->sc->pools[p].gpu;
		bool seen = false;
		for (size_t k = 0; k < n; k++)
			seen |= types[k] == g;
		if (seen || !may_host(v, w, p))
			continue;
		if (!n || g->hbm_bandwidth < types[slowest]->hbm_bandwidth)
			slowest = n, slow_pool = (int32_t)p;
		types[n++] = g;
	}
	bool differ = false;
	for (size_t k = 0; k < n; k++)
		differ |= types[k]->hbm_bandwidth > types[slowest]->hbm_bandwidth;
	bool behind = differ && (duty < 100 * DIAGNOSE_DUTY ||
				 type_busy(v, w, types[slowest], true) -
						 type_busy(v, w, types[slowest], false) >=
					 DIAGNOSE_IMBALANCE);
	if (behind) {
		double slo = diagnose_metric(v, ws->name, METRIC_SLO_ATTAINMENT_PCT);
		struct finding *fd = diagnose_add(v, STEP_PLACEMENT, KIND_MIXED_GPUS,
						  isnan(slo) ? 0 : 100 - slo, slow_pool, (int)w);
		fd->figure = types[slowest]->hbm_bandwidth;
		fd->fig.replicas = (struct finding_replicas){
			.offered = diagnose_offered_rate(in),
			.served = diagnose_metric(v, ws->name, METRIC_THROUGHPUT_RPS),
			.duty = duty};
		struct gp_sbuf list = {0};
		for (size_t k = 0, i = 0; k < n; k++)
			if (types[k]->hbm_bandwidth > types[slowest]->hbm_bandwidth)
				gp_sb_printf(&list, "%s%s", i++ ? ", " : "", types[k]->name);
		finding_fix_setf(finding_fixf(fd, "%s kept off %s", ws->name, types[slowest]->name),
				 "workloads.%s.gpu_spec=[%s]", ws->name, list.s);
		finding_fix_setf(
			finding_fixf(fd, "%s routed to the least loaded replica", ws->name),
			"workloads.%s.route=least-outstanding", ws->name);
		free(list.s);
	}
	free(types);
}

/* Whether every job of workload w that missed its `within` deadline (of
 * the job rows: none without them) missed it on its own: it finished
 * without waiting or being stopped, on GPUs of its own (no co-tenant slowed
 * it), and its work alone (start to end, less the start-up) was longer than
 * the deadline allows.  *longest: the longest such job's time from arrival
 * to end, s. */
static bool late_on_their_own(struct view *v, size_t w, double within, double *longest)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	int64_t late = 0, alone = 0;
	*longest = 0;
	for (size_t i = 0; i < v->r->n_jobs; i++) {
		const struct job_record *j = &v->r->jobs[i];
		if (j->workload != (int32_t)w || j->deadline == SIM_NEVER || j->deadline_met)
			continue;
		late++;
		int32_t p = diagnose_node_pool(v, j->node);
		if (j->end != SIM_NEVER && j->start == j->submit && !j->preemptions && p >= 0 &&
		    v->sc->pools[p].sharing.mode == SHARING_EXCLUSIVE &&
		    sim_seconds(j->end - j->start - ws->startup) > within) {
			alone++;
			*longest = fmax(*longest, sim_seconds(j->end - j->submit));
		}
	}
	return late > 0 && alone == late;
}

/*
 * A batch workload whose jobs run longer than their deadline allows (a
 * `within` deadline shorter than the mean duration alone, on GPUs of its
 * own; or, with a mean that fits, late jobs that each ran longer than the
 * deadline on their own, the tail of the duration's distribution, without
 * waiting): no queue to cut, so no amount of hardware helps.  What would:
 * a faster GPU type, more GPUs per job (if the job scales), or a later
 * deadline; advise runs the last, marked as a goal change.
 */
void diagnose_deadline(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	/* Mostly off the GPU, or starved of input: the off-gpu and data-loader
	 * findings say what the time is spent on. */
	if (ws->inference || ws->deadline_kind != DEADLINE_WITHIN || ws->gpu_busy < DIAGNOSE_IDLE ||
	    (ws->loader_fraction > 0 && ws->loader_fraction < 1))
		return;
	double run = scenario_dist_mean(&ws->duration) + sim_seconds(ws->startup),
	       within = sim_seconds(ws->deadline),
	       met = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT), longest = 0;
	if (!(met < 100))
		return;
	/* The work alone must not fit: a start-up that tips it over is the
	 * start-up finding's (a shorter pull or load fixes it). */
	bool tail = !(run - sim_seconds(ws->startup) > within);
	if (tail && !late_on_their_own(v, w, within, &longest))
		return;
	double jobs = diagnose_metric(v, ws->name, METRIC_JOBS_SUBMITTED);
	double late = isnan(jobs) ? NAN : jobs * (1 - met / 100);
	/* a deadline with room for the run and its queue p95 (the longest late
	 * job's run, for a tail), in whole half hours */
	double p95 = diagnose_metric(v, ws->name, METRIC_QUEUE_TIME_P95_S);
	double later = ceil((tail ? longest : run + (isnan(p95) ? 0 : p95)) / 1800) * 1800;
	if (tail)
		run = longest;
	struct finding *fd =
		diagnose_add(v, STEP_APPLICATION, KIND_DEADLINE, run - within, -1, (int)w);
	fd->fig.deadline = (struct finding_deadline){run, within, jobs, late, run / within, tail};
	fd->figure = run - within;
	char d[32];
	units_format_duration((sim_time)later * SIM_SECOND, d, sizeof d);
	finding_fix_setf(finding_fixf(fd,
				      "deadline within %s for %s (a later deadline: the goal "
				      "changes)",
				      d, ws->name),
			 "workloads.%s.deadline={within: %s}", ws->name, d);
}

void diagnose_evidence(struct view *v)
{
	size_t *hidden = gp_xcalloc(v->sc->n_pools + 1, sizeof *hidden);
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		stalled_finding(v, w);
		if (v->n_windows) {
			admission_finding(v, w);
			fragmentation_finding(v, w);
			requests_finding(v, w);
		}
		if (v->sc->workloads[w].inference) {
			kv_cache_finding(v, w);
			if (!max_batch_finding(v, w)) {
				autoscaler_finding(v, w);
				replicas_finding(v, w);
				confined_finding(v, w, hidden);
				mixed_gpus_finding(v, w);
			}
		}
	}
	free(hidden);
}
