/*
 * diagnose.c - the four-step diagnosis of a finished run (see diagnose.h).
 *
 * Figures come from the output.step windows of the timeseries.  For a pool,
 * the windows that count are those in which some pod the pool could host
 * (its resource and VRAM fit, and no taint, selector, affinity or gpu_spec
 * keeps it off) pended; over them, time-weighted sums of the pool's capacity,
 * allocation, engine and SM activity and VRAM give "mostly allocated",
 * "mostly idle" and "VRAM per allocated GPU".  Counting whole windows makes
 * the pending share as coarse as output.step, which is what a dashboard at
 * that resolution would show.
 *
 * Findings are collected with their step and a weight (pending GPU-seconds,
 * kills, pod-seconds: how much they explain), then ranked by step, the order
 * that separates the causes, and by weight within a step.  A finding carries
 * typed values only (indexes, figures, the id of the pending reason it
 * cites); its sentences are made from them by explain.c.
 */
#include "gpuplan/diagnose.h"
#include "diagnose_int.h"

#include "gpuplan/cluster.h"
#include "gpuplan/gpupolicy.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ts_row *diagnose_row(const struct view *v, size_t k, size_t scope)
{
	return &v->r->ts[k * v->n_scopes + scope];
}

size_t diagnose_pool_scope(const struct view *v, size_t p)
{
	(void)v;
	return 1 + p;
}
size_t diagnose_workload_scope(const struct view *v, size_t w) { return 1 + v->sc->n_pools + w; }

/* Whether the rows are windows of every scope in collect's order (all, pools,
 * workloads): a results object from elsewhere may not be. */
static bool rows_match(const struct view *v)
{
	const struct scenario *sc = v->sc;
	if (!v->r->n_ts || v->r->n_ts % v->n_scopes)
		return false;
	for (size_t i = 0; i < v->n_scopes; i++) {
		const char *want = i == 0             ? "all"
				   : i <= sc->n_pools ? sc->pools[i - 1].name
						      : sc->workloads[i - 1 - sc->n_pools].name;
		if (!v->r->ts[i].scope || strcmp(v->r->ts[i].scope, want))
			return false;
	}
	return true;
}

int32_t diagnose_node_pool(struct view *v, int32_t node)
{
	diagnose_placer(v); /* builds v->cluster */
	return node >= 0 && (size_t)node < v->cluster.n_nodes ? v->cluster.nodes[node].pool : -1;
}

bool diagnose_window_active(const struct view *v, size_t k)
{
	const struct ts_row *all = diagnose_row(v, k, 0);
	return all->gpus_demand > 0 || all->pending > 0 || all->gpus_allocated > 0 ||
	       all->running > 0;
}

static void view_init(struct view *v, const struct scenario *sc, struct results *r)
{
	memset(v, 0, sizeof *v);
	v->sc = sc;
	v->r = r;
	v->n_scopes = 1 + sc->n_pools + sc->n_workloads;
	v->pend = gp_xcalloc(sc->n_workloads + 1, sizeof *v->pend);
	v->allow = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *v->allow);
	if (!rows_match(v))
		return;
	v->n_windows = r->n_ts / v->n_scopes;
	v->len = gp_xcalloc(v->n_windows, sizeof *v->len);
	for (size_t k = 0; k < v->n_windows; k++) {
		sim_time t = diagnose_row(v, k, 0)->t;
		sim_time end = k + 1 < v->n_windows ? diagnose_row(v, k + 1, 0)->t : r->sim_end;
		if (end <= t)
			end = t + r->step;
		v->len[k] = sim_seconds(end - t);
		v->span += v->len[k];
		if (diagnose_window_active(v, k))
			v->active += v->len[k];
	}
}

static void view_free(struct view *v)
{
	if (v->has_placer) {
		placement_free(&v->placer);
		cluster_free(&v->cluster);
	}
	free(v->len);
	free(v->pend);
	free(v->allow);
	free(v->drafts);
}

const struct placer *diagnose_placer(struct view *v)
{
	if (!v->has_placer) {
		cluster_init(&v->cluster, v->sc);
		placement_init(&v->placer, &v->cluster);
		v->has_placer = true;
	}
	return &v->placer;
}

/* Whether pods of w can run in pool p: its resource and VRAM fit, and no
 * rule keeps them off. */
bool diagnose_allowed(struct view *v, size_t w, size_t p)
{
	uint8_t *a = &v->allow[w * v->sc->n_pools + p];
	if (!*a)
		*a = scenario_gpu_equivalent(&v->sc->pools[p], &v->sc->workloads[w]) > 0 &&
				     !placement_pool_filtered(diagnose_placer(v), w, p)
			     ? 2
			     : 1;
	return *a == 2;
}

double diagnose_metric(const struct view *v, const char *scope, enum metric_id id)
{
	return results_or(v->r, scope, id, NAN);
}

/* A finding about pool (or -1) and workload (or -1). */
struct finding *diagnose_add(struct view *v, enum step step, enum finding_kind kind, double weight,
			     int pool, int workload)
{
	GP_GROW(v->drafts, v->cap_drafts, v->n_drafts + 1);
	struct draft *d = &v->drafts[v->n_drafts];
	*d = (struct draft){.step = step, .weight = weight, .seq = v->n_drafts};
	d->f.step = (uint8_t)step;
	d->f.kind = (uint8_t)kind;
	d->f.pool = pool;
	d->f.workload = workload;
	d->f.queue = -1;
	d->f.weight = weight;
	d->f.reason = -1;
	d->f.constraint = -1;
	v->n_drafts++;
	return &d->f;
}

/* The id of a pending reason's message in r->reason_texts (rows point into
 * it), or -1. */
int32_t diagnose_reason_id(const struct view *v, const char *text)
{
	for (size_t i = 0; text && i < v->r->n_reason_texts; i++)
		if (v->r->reason_texts[i] == text)
			return (int32_t)i;
	return -1;
}

/* Makes the workloads marked in v->pend the members of f. */
static void pending_members(struct view *v, struct finding *f)
{
	f->members = gp_xcalloc(v->sc->n_workloads + 1, sizeof *f->members);
	for (size_t w = 0; w < v->sc->n_workloads; w++)
		if (v->pend[w] > 0)
			f->members[f->n_members++] = (int32_t)w;
}

/* --- the alternatives a finding names --------------------------------------- */

/* Pool p shared by time-slicing or MPS with r replicas, as advise labels it. */
void diagnose_fix_replicas(struct finding *f, const struct pool_spec *p, enum sharing_mode mode,
			   int32_t r)
{
	struct diagnose_option o = {mode, r, r, NULL, 0};
	char name[64];
	diagnose_option_name(&o, name, sizeof name);
	finding_fix_setf(finding_fixf(f, "%s on %s", name, p->name),
			 "pools.%s.sharing={mode: %s, replicas: %d}", p->name, sharing_name(mode),
			 (int)r);
}

void diagnose_fix_quant(struct finding *f, const struct workload_spec *w, enum quant q)
{
	finding_fix_setf(finding_fixf(f, "%s weights for %s", footprint_quant_name(q), w->name),
			 "workloads.%s.quantization=%s", w->name, footprint_quant_name(q));
}

/* --- steps 1 and 2: allocation and memory, per pool ------------------------ */

/* Time-weighted sums over the windows in which work the pool could host pended. */
struct pool_sums {
	double pend_s;                       /* seconds of those windows */
	double cap, alloc, engine, sm, vram; /* GPU-seconds (GiB-seconds for vram) */
	double pods, gpus;                   /* pending pod- and GPU-seconds */
};

/* Whether work pool p could host pended in window k. */
static bool pending_on(struct view *v, size_t k, size_t p)
{
	for (size_t w = 0; w < v->sc->n_workloads; w++)
		if (diagnose_row(v, k, diagnose_workload_scope(v, w))->pending > 0 &&
		    diagnose_allowed(v, w, p))
			return true;
	return false;
}

static void pool_sums(struct view *v, size_t p, struct pool_sums *s)
{
	const struct scenario *sc = v->sc;
	memset(s, 0, sizeof *s);
	memset(v->pend, 0, sc->n_workloads * sizeof *v->pend);
	for (size_t k = 0; k < v->n_windows; k++) {
		double pods = 0, gpus = 0, L = v->len[k];
		for (size_t w = 0; w < sc->n_workloads; w++) {
			const struct ts_row *x = diagnose_row(v, k, diagnose_workload_scope(v, w));
			if (x->pending <= 0 || !diagnose_allowed(v, w, p))
				continue;
			pods += x->pending;
			gpus += fmax(0, x->gpus_demand - x->gpus_allocated);
			v->pend[w] += x->pending * L;
		}
		if (pods <= 0)
			continue;
		const struct ts_row *y = diagnose_row(v, k, diagnose_pool_scope(v, p));
		s->pend_s += L;
		s->cap += y->gpus_capacity * L;
		s->alloc += y->gpus_allocated * L;
		s->engine += y->engine_active * L;
		s->sm += y->sm_active * L;
		s->vram += y->vram_used_gib * L;
		s->pods += pods * L;
		s->gpus += gpus * L;
	}
}

/* The pool figures of f from the sums s. */
static void pool_figures(const struct view *v, struct finding *f, const struct pool_sums *s)
{
	f->fig.pool = (struct finding_pool){.pend_s = s->pend_s,
					    .span = v->span,
					    .pods = s->pods,
					    .gpus = s->gpus,
					    .cap = s->cap,
					    .alloc = s->alloc,
					    .engine = s->engine,
					    .sm = s->sm,
					    .vram = s->vram};
}

/* Work pended long enough on a pool that was mostly allocated meanwhile. */
static bool full_while_pending(const struct view *v, const struct pool_sums *s)
{
	return s->pend_s > 0 && s->pend_s >= DIAGNOSE_PENDING_SHARE * v->active && s->cap > 0 &&
	       s->alloc >= DIAGNOSE_ALLOCATED * s->cap;
}

/* ... and mostly idle. */
static bool full_and_idle(const struct view *v, const struct pool_sums *s)
{
	return full_while_pending(v, s) && s->engine < DIAGNOSE_IDLE * s->alloc;
}

/* Whether some pending workload's pods a sharing mode would hold more of on p. */
static bool any_options(const struct view *v, const struct pool_spec *p)
{
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
		if (v->pend[w] > 0 && diagnose_sharing_options(p, &v->sc->workloads[w], o))
			return true;
	}
	return false;
}

static int32_t fewer_replicas(const struct view *v, const struct workload_spec *ws)
{
	return ws->inference && !ws->inference->disagg /* its replicas are per role */
		       ? diagnose_fewer_replicas(
				 ws, diagnose_metric(v, ws->name, METRIC_DUTY_CYCLE_PCT))
		       : 0;
}

/* Whether workload w holds GPUs it mostly leaves idle (engine activity under
 * DIAGNOSE_IDLE of what it holds, over the run) and could hold fewer of on
 * pool p: shared, or with fewer serving replicas.  *held: its GPU-seconds. */
static bool idle_holder(struct view *v, size_t w, size_t p, double *held)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	double engine = 0; /* GPU-seconds engine-active */
	*held = 0;
	for (size_t k = 0; k < v->n_windows; k++) {
		const struct ts_row *x = diagnose_row(v, k, diagnose_workload_scope(v, w));
		*held += x->gpus_allocated * v->len[k];
		engine += x->engine_active * v->len[k];
	}
	struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
	return *held > 0 && engine < DIAGNOSE_IDLE * *held && diagnose_allowed(v, w, p) &&
	       (diagnose_sharing_options(&v->sc->pools[p], ws, o) > 0 || fewer_replicas(v, ws) > 0);
}

/* Marks in v->pend, instead of the pending workloads, the idle holders of
 * p's GPUs (idle_holder): sharing them, or serving with fewer replicas,
 * frees whole GPUs for pending work that cannot share itself.  Returns
 * whether any. */
static bool mark_idle_holders(struct view *v, size_t p)
{
	bool any = false;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		double held;
		bool idle = idle_holder(v, w, p, &held);
		v->pend[w] = idle ? held : 0;
		any |= idle;
	}
	return any;
}

/* Work pended long enough on the pool, and idle holders held at least
 * DIAGNOSE_IDLE_HELD of its GPUs meanwhile: the lock is theirs even when the
 * pool's other GPUs are busy (near-idle servers beside training that runs
 * flat out average to an active pool), or free in pieces no pending job fits
 * (notebooks spread over the nodes: the pieces are theirs, not the
 * placement's).  Holders that wait themselves count too: notebooks opened
 * all morning wait behind the ones open since 08:00, and sharing them frees
 * GPUs for both.  v->pend holds pool_sums' pending workloads. */
static bool held_by_idle(struct view *v, size_t p, const struct pool_sums *s)
{
	if (!(s->pend_s > 0 && s->pend_s >= DIAGNOSE_PENDING_SHARE * v->active && s->cap > 0))
		return false;
	bool *holder = gp_xcalloc(v->sc->n_workloads + 1, sizeof *holder);
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		double held;
		holder[w] = idle_holder(v, w, p, &held);
	}
	double idle_held = 0; /* GPU-seconds they held while work pended */
	for (size_t k = 0; k < v->n_windows; k++) {
		if (!pending_on(v, k, p))
			continue;
		for (size_t w = 0; w < v->sc->n_workloads; w++)
			if (holder[w])
				idle_held += diagnose_row(v, k, diagnose_workload_scope(v, w))
						     ->gpus_allocated *
					     v->len[k];
	}
	free(holder);
	/* A workload's row covers every pool it runs in: what it holds idle here
	 * is at most what this pool held without activity. */
	return fmin(idle_held, s->alloc - s->engine) >= DIAGNOSE_IDLE_HELD * s->cap;
}

static void allocation_finding(struct view *v, size_t p, const struct pool_sums *s)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	bool holders = !any_options(v, ps);
	if (holders && !mark_idle_holders(v, p))
		return;
	struct finding *f = diagnose_add(v, STEP_ALLOCATION, KIND_SHARING, s->gpus, (int)p, -1);
	pool_figures(v, f, s);
	f->fig.pool.holders = holders;
	pending_members(v, f);
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
		size_t n =
			v->pend[w] > 0 ? diagnose_sharing_options(ps, &v->sc->workloads[w], o) : 0;
		for (size_t i = 0; i < n; i++)
			if (o[i].mode == SHARING_TIME_SLICING || o[i].mode == SHARING_MPS)
				diagnose_fix_replicas(f, ps, o[i].mode, o[i].replicas);
		int32_t fewer =
			holders && v->pend[w] > 0 ? fewer_replicas(v, &v->sc->workloads[w]) : 0;
		if (fewer)
			finding_fix_setf(
				finding_fixf(f, "%d replica%s of %s", (int)fewer,
					     fewer > 1 ? "s" : "", v->sc->workloads[w].name),
				"workloads.%s.replicas=%d", v->sc->workloads[w].name, (int)fewer);
	}
}

/* The narrower weights that fit per_gpu pods a GPU of p, for each workload
 * marked in v->pend, as alternatives of f. */
static void fix_quants(struct view *v, struct finding *f, const struct pool_spec *p,
		       int32_t per_gpu)
{
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		enum quant q;
		double vram, freed;
		if (v->pend[w] > 0 &&
		    diagnose_quant_fit(p, &v->sc->workloads[w], per_gpu, &q, &vram, &freed))
			diagnose_fix_quant(f, &v->sc->workloads[w], q);
	}
}

/* The memory a pod of w takes on a GPU of p: a server's, or the pod's VRAM. */
static double pod_memory(const struct pool_spec *p, const struct workload_spec *w)
{
	return w->inference ? infer_server_memory(p, w) : w->vram_bytes;
}

/* Whether a pod of w can overflow a GPU of p: alone (exclusive), or with the
 * largest co-tenants time-slicing gives it.  A pool where it cannot is not
 * blamed for w's OOM kills. */
static bool can_overflow(struct view *v, size_t p, size_t w)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	double mem = ps->gpu->memory_bytes, mine = pod_memory(ps, &v->sc->workloads[w]);
	if (ps->sharing.mode == SHARING_EXCLUSIVE)
		return mine > mem;
	double most = mine;
	for (size_t k = 0; k < v->sc->n_workloads; k++)
		if (diagnose_allowed(v, k, p))
			most = fmax(most, pod_memory(ps, &v->sc->workloads[k]));
	return mine + (ps->sharing.replicas - 1) * most > mem;
}

/* Marks, in v->pend, the workloads of p whose pods were OOM-killed; their
 * kills.  Only GPUs whose memory is not isolated let a pod overflow them. */
static double oom_kills(struct view *v, size_t p)
{
	bool can = !sharing_isolates_memory(&v->sc->pools[p].sharing);
	double kills = 0;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		double k = diagnose_metric(v, v->sc->workloads[w].name, METRIC_OOM_KILLS);
		bool here = can && k > 0 && diagnose_allowed(v, w, p) && can_overflow(v, p, w);
		v->pend[w] = here ? k : 0;
		kills += here ? k : 0;
	}
	return kills;
}

/* Whether name is among the first n of names. */
static bool named_before(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The pods that overflow a GPU of p kept off it: each workload p may take
 * whose pod a GPU of p cannot hold (killed in this run or not: where a pod
 * lands is chance) and that another pool it may use holds gets the GPU
 * types that hold it as its gpu_spec (the device plugin's product label, what a nodeSelector or
 * affinity on nvidia.com/gpu.product says), one alternative for them all.
 * No hardware: the GPUs that hold them are there.  Not where p's type is
 * one of them (the same GPU with less memory, gpu_memory): a type cannot
 * keep them off it.  Returns how many workloads it keeps off p. */
static int32_t fix_gpu_types(struct view *v, struct finding *f, size_t p)
{
	const struct scenario *sc = v->sc;
	const char *own = sc->pools[p].gpu->name;
	const char **types = gp_xcalloc(sc->n_pools, sizeof *types);
	struct finding_fix *x = NULL;
	int32_t kept = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		size_t n = 0;
		bool over = diagnose_allowed(v, w, p) && can_overflow(v, p, w);
		for (size_t q = 0; q < sc->n_pools && over; q++) {
			const struct pool_spec *qs = &sc->pools[q];
			if (q != p && diagnose_allowed(v, w, q) &&
			    pod_memory(qs, ws) <= qs->gpu->memory_bytes &&
			    !named_before(types, n, qs->gpu->name))
				types[n++] = qs->gpu->name;
		}
		if (!n || named_before(types, n, own))
			continue;
		kept++;
		if (!x)
			x = finding_fixf(f, "the pods that overflow %s on GPUs that hold them",
					 sc->pools[p].name);
		struct gp_sbuf list = {0};
		for (size_t i = 0; i < n; i++)
			gp_sb_printf(&list, "%s%s", i ? ", " : "", types[i]);
		char *text = gp_sb_take(&list);
		finding_fix_setf(x, "workloads.%s.gpu_spec=[%s]", ws->name, text);
		free(text);
	}
	free(types);
	return kept;
}

/* Pods were OOM-killed on p: more of them than its GPUs' memory holds. */
static void oom_finding(struct view *v, size_t p, double kills)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	bool sliced = ps->sharing.mode == SHARING_TIME_SLICING;
	int32_t per_gpu = sliced ? ps->sharing.replicas : 1;
	struct finding *f = diagnose_add(v, STEP_MEMORY, KIND_OOM, kills, (int)p, -1);
	f->fig.oom.kills = kills;
	pending_members(v, f);
	fix_quants(v, f, ps, per_gpu);
	if (!sliced)
		f->fig.oom.elsewhere = fix_gpu_types(v, f, p);
	if (sliced && per_gpu > 2)
		diagnose_fix_replicas(f, ps, SHARING_TIME_SLICING, per_gpu / 2);
	else if (sliced)
		finding_fix_setf(finding_fixf(f, "exclusive GPUs on %s", ps->name),
				 "pools.%s.sharing=%s", ps->name, sharing_name(SHARING_EXCLUSIVE));
}

/* The smallest VRAM of a pod that pended (bytes); 0 when none is known. */
static double smallest_pending_pod(const struct view *v)
{
	double least = 0;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		double vram = v->sc->workloads[w].vram_bytes;
		if (v->pend[w] > 0 && vram > 0 && (least == 0 || vram < least))
			least = vram;
	}
	return least;
}

/* Work pended on a full, idle pool, and no sharing unit holds one more pod:
 * the allocated GPUs have too little VRAM left. */
static void full_memory_finding(struct view *v, size_t p, const struct pool_sums *s)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	double mem = ps->gpu->memory_bytes / GP_GIB, used = s->vram / s->alloc;
	double pod = smallest_pending_pod(v) / GP_GIB;
	if (pod <= 0 || mem - used >= pod)
		return;
	struct finding *f = diagnose_add(v, STEP_MEMORY, KIND_VRAM_FULL, s->gpus, (int)p, -1);
	pool_figures(v, f, s);
	f->fig.pool.pod_gib = pod;
	pending_members(v, f);
	fix_quants(v, f, ps, 2);
}

static bool preallocation_finding(struct view *v, size_t p);

static void diagnose_pools(struct view *v)
{
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		struct pool_sums s;
		pool_sums(v, p, &s);
		bool lock = full_and_idle(v, &s) || held_by_idle(v, p, &s);
		size_t before = v->n_drafts;
		if (lock)
			allocation_finding(v, p, &s);
		bool named = v->n_drafts > before;
		double kills = oom_kills(v, p); /* reuses v->pend */
		if (kills > 0 && preallocation_finding(v, p)) {
			/* the servers' preallocation, not their weights */
		} else if (kills > 0) {
			oom_finding(v, p, kills);
		} else if (lock && !named) {
			pool_sums(v, p, &s); /* no unit holds the pods: is it their VRAM? */
			full_memory_finding(v, p, &s);
		}
	}
}

/* --- step 3: placement, per workload --------------------------------------- */

/* The pending time of workload w with a rule's reason, its pods, its
 * longest such message and the rules the messages name. */
static double rule_pending(const struct view *v, size_t w, int64_t *pods, const char **top,
			   int *rules)
{
	struct diagnose_pend p = diagnose_pending(v, w, PEND_RULES);
	*pods = p.pods;
	*top = p.top;
	*rules = (p.kinds & PEND_BIT(PEND_AFFINITY) ? FINDING_RULE_AFFINITY : 0) |
		 (p.kinds & PEND_BIT(PEND_TAINT) ? FINDING_RULE_TAINT : 0) |
		 (p.kinds & (PEND_BIT(PEND_SPREAD) | PEND_BIT(PEND_SPREAD_LABEL))
			  ? FINDING_RULE_SPREAD
			  : 0);
	return p.seconds;
}

/* A rule that keeps a 60 GiB pod off 48 GiB GPUs spares it an OOM kill; it
 * hides no capacity. */
bool diagnose_could_hold(const struct scenario *sc, size_t p, size_t w)
{
	const struct pool_spec *ps = &sc->pools[p];
	return scenario_gpu_equivalent(ps, &sc->workloads[w]) > 0 &&
	       pod_memory(ps, &sc->workloads[w]) <= ps->gpu->memory_bytes;
}

/* Pools whose capacity w's rules hide: they would fit its pods, but a rule
 * keeps them off (for a spread constraint: the pools it may use). */
static size_t hidden_pools(struct view *v, size_t w, bool spread_only, size_t *out)
{
	size_t n = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		if (!diagnose_could_hold(v->sc, p, w))
			continue;
		if (spread_only ? !placement_pool_filtered(diagnose_placer(v), w, p)
				: placement_pool_ruled(diagnose_placer(v), w, p))
			out[n++] = p;
	}
	return n;
}

/* Whether workload w had pods pending in window k. */
static bool pending_in(const struct view *v, size_t w, size_t k)
{
	return diagnose_row(v, k, diagnose_workload_scope(v, w))->pending > 0;
}

size_t diagnose_hidden_idle(struct view *v, size_t w, bool spread_only,
			    bool (*when)(const struct view *v, size_t w, size_t k), size_t *hidden,
			    struct finding_rules *g)
{
	size_t nh = hidden_pools(v, w, spread_only, hidden);
	for (size_t k = 0; k < v->n_windows && nh; k++) {
		if (!when(v, w, k))
			continue;
		double here = 0, c = 0;
		for (size_t i = 0; i < nh; i++) {
			const struct ts_row *y =
				diagnose_row(v, k, diagnose_pool_scope(v, hidden[i]));
			here += fmax(0, y->gpus_capacity - y->gpus_allocated);
			c += y->gpus_capacity;
		}
		g->idle += here * v->len[k];
		g->cap += c * v->len[k];
		g->secs += v->len[k];
		g->most = fmax(g->most, here);
	}
	return nh;
}

void diagnose_rule_fixes(struct finding *f, const struct workload_spec *ws, const size_t *hidden,
			 size_t nh)
{
	f->members = gp_xcalloc(nh, sizeof *f->members);
	for (size_t i = 0; i < nh; i++)
		f->members[f->n_members++] = (int32_t)hidden[i];
	if (ws->n_node_selector)
		finding_fix_setf(finding_fixf(f, "%s without its node_selector", ws->name),
				 "workloads.%s.node_selector={}", ws->name);
	if (ws->n_affinity)
		finding_fix_setf(finding_fixf(f, "%s without its node affinity", ws->name),
				 "workloads.%s.affinity=[]", ws->name);
	if (ws->n_gpu_spec)
		finding_fix_setf(finding_fixf(f, "%s on any GPU type", ws->name),
				 "workloads.%s.gpu_spec=[]", ws->name);
}

static void placement_finding(struct view *v, size_t w, size_t *hidden)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	int64_t pods;
	const char *top;
	int rules;
	double pend = rule_pending(v, w, &pods, &top, &rules);
	bool spread_only = rules == FINDING_RULE_SPREAD;
	struct finding_rules g = {.pending_s = pend, .pods = pods};
	size_t nh = pend > 0 ? diagnose_hidden_idle(v, w, spread_only, pending_in, hidden, &g) : 0;
	if (!spread_only && nh) /* the rules that hide these pools, not others' */
		rules = (rules & FINDING_RULE_SPREAD) | diagnose_hiding_rules(v->sc, w, hidden, nh);
	double pod_gpus = ws->request == REQUEST_GPUS ? ws->gpus : 1;
	if (!nh || g.most < pod_gpus || g.idle <= 0)
		return; /* nothing hidden was free: the rules cost nothing here */
	struct finding *f = diagnose_add(v, STEP_PLACEMENT, KIND_RULES, pend, -1, (int)w);
	f->reason = diagnose_reason_id(v, top);
	g.rules = rules;
	f->fig.rules = g;
	diagnose_rule_fixes(f, ws, hidden, nh);
}

static void diagnose_placement(struct view *v)
{
	if (!v->r->n_pending_reasons || !v->n_windows)
		return;
	size_t *hidden = gp_xcalloc(v->sc->n_pools + 1, sizeof *hidden);
	for (size_t w = 0; w < v->sc->n_workloads; w++)
		placement_finding(v, w, hidden);
	free(hidden);
}

/* --- step 4: application --------------------------------------------------- */

/* Requests per second a service is offered. */
double diagnose_offered_rate(const struct inference_spec *in)
{
	const struct request_spec *rq = &in->requests;
	if (rq->process != REQUESTS_TRACE)
		return rq->rate;
	double period = sim_seconds(rq->period);
	return period > 0 ? (double)rq->n_rows * rq->speedup / period : 0;
}

/* The tokenizer workers are saturated: requests wait for them, not for the
 * GPU, and the service misses its SLO or its GPUs idle. */
static void tokenizer_finding(struct view *v, const struct workload_spec *ws)
{
	const struct inference_spec *in = ws->inference;
	double tok = sim_seconds(in->tokenize), rate = diagnose_offered_rate(in);
	int32_t replicas = in->target_queue > 0 ? in->max_replicas : in->replicas;
	int32_t workers = in->tokenize_workers > 0 ? in->tokenize_workers : 1;
	double busy = replicas > 0 ? rate * tok / (replicas * workers) : 0;
	double duty = diagnose_metric(v, ws->name, METRIC_DUTY_CYCLE_PCT);
	bool slo_met = results_holds(v->r, ws->name, METRIC_SLO_MET); /* absent: not shown met */
	if (tok <= 0 || busy < DIAGNOSE_TOKENIZER || (slo_met && !(duty < 100 * DIAGNOSE_DUTY)))
		return;
	/* Workers a replica needs to keep them 70% busy. */
	int32_t need = (int32_t)ceil(rate * tok / (replicas * 0.7) - 1e-9);
	if (need <= workers)
		need = workers + 1;
	struct finding *fd = diagnose_add(v, STEP_APPLICATION, KIND_TOKENIZER, busy, -1,
					  (int)(ws - v->sc->workloads));
	fd->fig.tokenizer = (struct finding_tokenizer){
		.rate = rate, .busy = busy, .replicas = replicas, .workers = workers, .need = need};
	fd->figure = busy;
	char t[32]; /* the duration as the scenario writes it: 80ms */
	units_format_duration(sim_from_seconds(tok), t, sizeof t);
	finding_fix_setf(finding_fixf(fd, "%d tokenizer workers for %s", (int)need, ws->name),
			 "workloads.%s.tokenize={time: %s, workers: %d}", ws->name, t, (int)need);
}

/* Batch jobs start at once yet miss deadlines, with their GPUs mostly idle:
 * the time goes off the GPU (CPU, I/O). */
static void offgpu_finding(struct view *v, const struct workload_spec *ws)
{
	double met = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT);
	double p95 = diagnose_metric(v, ws->name, METRIC_QUEUE_TIME_P95_S);
	double failed = diagnose_metric(v, ws->name, METRIC_JOBS_FAILED);
	if (!scenario_has_deadlines(ws) || isnan(met) || met >= 100 || isnan(p95) ||
	    p95 > DIAGNOSE_PROMPT_START * ws->duration.mean || failed > 0 ||
	    ws->gpu_busy >= DIAGNOSE_IDLE)
		return;
	diagnose_add(v, STEP_APPLICATION, KIND_OFF_GPU, 100 - met, -1,
		     (int)(ws - v->sc->workloads));
}

/* Evicted jobs (spot interruptions, windows closing under preempt, Kueue)
 * start again from their last checkpoint, or from scratch without one: when
 * their allocations last less than a job's work, and the checkpoint (if any)
 * is longer than half an allocation, the work is lost again and again and
 * jobs are left unfinished or late however many GPUs there are.  A
 * checkpoint every quarter of the mean allocation (a readable interval
 * under it) keeps most of it. */
static void restarts_finding(struct view *v, const struct workload_spec *ws)
{
	size_t w = (size_t)(ws - v->sc->workloads);
	double jobs = diagnose_metric(v, ws->name, METRIC_JOBS_SUBMITTED),
	       evicted = diagnose_metric(v, ws->name, METRIC_JOBS_PREEMPTED),
	       completed = diagnose_metric(v, ws->name, METRIC_JOBS_COMPLETED),
	       unfinished = diagnose_metric(v, ws->name, METRIC_JOBS_UNFINISHED),
	       met = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT);
	if (!v->n_windows || !(jobs > 0) || !(evicted >= DIAGNOSE_RESTARTS * jobs) ||
	    !(unfinished > 0 || met < 100))
		return;
	double held = 0; /* job-seconds allocated: the running gauge counts a job once */
	for (size_t k = 0; k < v->n_windows; k++)
		held += diagnose_row(v, k, diagnose_workload_scope(v, w))->running * v->len[k];
	double attempt = held / (evicted + completed + unfinished);
	double keep = sim_seconds(ws->checkpoint);
	if (!(attempt < ws->duration.mean) || (keep > 0 && keep <= attempt / 2))
		return;
	/* a readable interval: the longest of these within a quarter attempt */
	static const double nice[] = {1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 7200};
	double every = nice[0];
	for (size_t i = 0; i < sizeof nice / sizeof nice[0] && nice[i] <= attempt / 4; i++)
		every = nice[i];
	struct finding *fd = diagnose_add(v, STEP_APPLICATION, KIND_RESTARTS, evicted, -1, (int)w);
	fd->fig.restarts = (struct finding_restarts){.evictions = evicted,
						     .jobs = jobs,
						     .unfinished = unfinished,
						     .attempt_s = attempt,
						     .checkpoint_s = every};
	fd->figure = evicted;
	finding_fix_setf(finding_fixf(fd, "checkpoint every %.0f s for %s", every, ws->name),
			 "workloads.%s.checkpoint=%.0fs", ws->name, every);
}

/* The Cluster Autoscaler's scale-down evicted running jobs of a workload
 * that missed deadlines or left jobs unfinished (a queue goal alone is
 * missed by waiting, which the eviction's work lost does not explain): CA
 * moves a Job's pods off a node it finds underused
 * (simulator/drainability/rules/replicated), and each lost its work since
 * its last checkpoint.  The pod annotation cluster-autoscaler.kubernetes.io/
 * safe-to-evict: "false" (rules/notsafetoevict) keeps them on their nodes
 * until they finish.  Returns whether it found this (the restarts finding
 * then says nothing of the same evictions). */
static bool scale_down_finding(struct view *v, const struct workload_spec *ws)
{
	double moved = diagnose_metric(v, ws->name, METRIC_JOBS_SCALED_DOWN),
	       met = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT),
	       unfinished = diagnose_metric(v, ws->name, METRIC_JOBS_UNFINISHED);
	if (!(moved > 0) || ws->safe_to_evict == SAFE_TO_EVICT_FALSE ||
	    !(unfinished > 0 || met < 100))
		return false;
	struct finding *fd = diagnose_add(v, STEP_APPLICATION, KIND_SCALE_DOWN, moved, -1,
					  (int)(ws - v->sc->workloads));
	fd->figure = moved;
	finding_fix_setf(finding_fixf(fd, "%s not safe to evict", ws->name),
			 "workloads.%s.safe_to_evict=false", ws->name);
	return true;
}

/*
 * kube-scheduler's priority preemption evicted running jobs of a workload
 * that missed deadlines or left jobs unfinished: pending pods of a higher
 * priority (preemptionPolicy PreemptLowerPriority, the default) took their
 * nodes, and each lost its work since its last checkpoint.  The fixes, from
 * Kubernetes' pod priority and preemption: the preemptors' PriorityClass
 * with preemptionPolicy: Never (they wait for room instead of evicting), or
 * the victims at the preemptors' priority.  Returns whether it found this
 * (the restarts finding then says nothing of the same evictions).
 */
static bool priority_finding(struct view *v, const struct workload_spec *ws)
{
	const struct scenario *sc = v->sc;
	size_t w = (size_t)(ws - sc->workloads);
	double evicted = diagnose_metric(v, ws->name, METRIC_JOBS_PRIORITY_PREEMPTED),
	       met = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT),
	       unfinished = diagnose_metric(v, ws->name, METRIC_JOBS_UNFINISHED);
	if (!(evicted > 0) || !(unfinished > 0 || met < 100))
		return false;
	/* the workloads that may preempt it: higher priority, on a pool in common */
	bool *by = gp_xcalloc(sc->n_workloads, sizeof *by);
	struct gp_sbuf who = {0};
	int32_t top = ws->priority;
	for (size_t k = 0; k < sc->n_workloads; k++) {
		const struct workload_spec *p = &sc->workloads[k];
		by[k] = p->priority > ws->priority && scenario_may_preempt(sc, k) &&
			diagnose_share_a_pool(sc, w, k);
		if (by[k]) {
			gp_sb_printf(&who, "%s%s", who.s ? ", " : "", p->name);
			top = p->priority > top ? p->priority : top;
		}
	}
	if (who.s) {
		struct finding *fd =
			diagnose_add(v, STEP_PLACEMENT, KIND_PREEMPTED, evicted, -1, (int)w);
		fd->figure = evicted;
		struct finding_fix *x = finding_fixf(fd, "%s with preemption_policy Never", who.s);
		for (size_t k = 0; k < sc->n_workloads; k++)
			if (by[k])
				finding_fix_setf(x, "workloads.%s.preemption_policy=Never",
						 sc->workloads[k].name);
		finding_fix_setf(finding_fixf(fd, "%s at priority %d", ws->name, (int)top),
				 "workloads.%s.priority=%d", ws->name, (int)top);
	}
	bool found = who.s != NULL;
	free(who.s);
	free(by);
	return found;
}

/* A batch workload missing its goal whose GPUs wait on input: its loader
 * workers deliver less than the GPUs consume.  The fix is more workers (a
 * CPU core each), not more GPUs. */
static void loader_finding(struct view *v, const struct workload_spec *ws)
{
	if (!(ws->loader_fraction > 0 && ws->loader_fraction < 1))
		return;
	int32_t need = (int32_t)ceil(ws->loader_need / ws->loader_rate - 1e-9);
	struct finding *fd =
		diagnose_add(v, STEP_APPLICATION, KIND_DATA_LOADER, 1 - ws->loader_fraction, -1,
			     (int)(ws - v->sc->workloads));
	fd->fig.loader = (struct finding_loader){ws->loader_fraction, ws->loader_workers, need};
	fd->figure = ws->loader_fraction;
	struct finding_fix *x = finding_fixf(fd, "%d loader workers for %s", (int)need, ws->name);
	finding_fix_setf(x, "workloads.%s.data_loader.workers=%d", ws->name, (int)need);
	if (ws->cpu > 0)
		finding_fix_setf(x, "workloads.%s.cpu=%g", ws->name,
				 ws->cpu + need - ws->loader_workers);
}

static void diagnose_application(struct view *v)
{
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		if (ws->inference) {
			tokenizer_finding(v, ws);
		} else {
			loader_finding(v, ws);
			diagnose_deadline(v, w);
			offgpu_finding(v, ws);
			if (!priority_finding(v, ws) && !scale_down_finding(v, ws))
				restarts_finding(v, ws);
		}
	}
}

/* --- memory: preallocation under time-slicing ------------------------------ */

/* Time-sliced servers of an inference workload each preallocate
 * memory_fraction of the GPU, and R of them overflow it: the preallocation,
 * not the weights, is the cause.  Returns whether it reported. */
static bool preallocation_finding(struct view *v, size_t p)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	if (ps->sharing.mode != SHARING_TIME_SLICING)
		return false;
	int32_t R = ps->sharing.replicas;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		const struct inference_spec *in = ws->inference;
		double kills = diagnose_metric(v, ws->name, METRIC_OOM_KILLS);
		if (!in || !(in->memory_fraction > 0) || !(kills > 0) ||
		    !diagnose_allowed(v, w, p) || R * in->memory_fraction <= 1)
			continue;
		double fit = floor(100 * 0.95 / R) / 100;
		struct finding *fd =
			diagnose_add(v, STEP_MEMORY, KIND_PREALLOCATION, kills, (int)p, (int)w);
		fd->fig.prealloc.kills = kills;
		fd->fig.prealloc.fit = fit;
		finding_fix_setf(finding_fixf(fd, "memory_fraction %.2g for %s", fit, ws->name),
				 "workloads.%s.memory_fraction=%.2g", ws->name, fit);
		if (R > 2)
			diagnose_fix_replicas(fd, ps, SHARING_TIME_SLICING, R / 2);
		return true;
	}
	return false;
}

/* --- capacity: node pools that autoscale (autoscale.h) --------------------- */

/* Pending pod-seconds of the run, all reasons. */
static double pending_pod_seconds(const struct view *v)
{
	double total = 0;
	for (size_t i = 0; i < v->r->n_pending_reasons; i++)
		if (!strcmp(v->r->pending_reasons[i].scope, "all"))
			total += v->r->pending_reasons[i].pending_seconds;
	return total;
}

/* A pool's Cluster Autoscaler sat at its max while pods it could host waited:
 * the max is the capacity limit. */
static void node_group_max_finding(struct view *v, const struct pool_scaling *ps)
{
	const struct pool_spec *p = &v->sc->pools[ps->pool];
	if (!p->autoscale.on || ps->at_max_s <= 0 ||
	    ps->at_max_s < DIAGNOSE_PENDING_SHARE * v->active)
		return;
	struct finding *fd =
		diagnose_add(v, STEP_CAPACITY, KIND_NODE_GROUP_MAX, ps->at_max_s, ps->pool, -1);
	fd->fig.scaling = (struct finding_scaling){.at_max_s = ps->at_max_s,
						   .span = v->span,
						   .node_hours = ps->node_hours,
						   .scale_ups = ps->scale_ups};
	fd->figure = ps->at_max_s;
	int32_t more = p->autoscale.max * 2;
	finding_fix_setf(finding_fixf(fd, "autoscale max %d for %s", (int)more, p->name),
			 "pools.%s.autoscale.max=%d", p->name, (int)more);
}

/* Pods waited mostly for nodes being provisioned while the pool had room to
 * grow: provisioning time, not capacity, is the wait. */
static void provisioning_finding(struct view *v, const struct pool_scaling *ps)
{
	const struct pool_spec *p = &v->sc->pools[ps->pool];
	double pending = pending_pod_seconds(v);
	/* Short waits count too when the queue itself is long enough to be a
	 * finding: the capacity conclusion would take their place otherwise. */
	bool long_queue = !results_holds(v->r, "all", METRIC_GOAL_MET);
	if (!p->autoscale.on || !(diagnose_matters(v, ps->provisioning_wait_s) || long_queue) ||
	    !(ps->provisioning_wait_s > 0) || ps->provisioning_wait_s < 0.5 * pending ||
	    ps->at_max_s >= DIAGNOSE_PENDING_SHARE * v->active)
		return;
	int32_t warm = (int32_t)ceil(ps->peak_nodes - 1e-9);
	warm = warm < 1 ? 1 : warm > p->autoscale.max ? p->autoscale.max : warm;
	struct finding *fd = diagnose_add(v, STEP_CAPACITY, KIND_PROVISIONING,
					  ps->provisioning_wait_s, ps->pool, -1);
	fd->fig.scaling = (struct finding_scaling){.wait_s = ps->provisioning_wait_s,
						   .pending_s = pending,
						   .node_hours = ps->node_hours,
						   .scale_ups = ps->scale_ups,
						   .scale_downs = ps->scale_downs,
						   .warm = warm};
	fd->figure = ps->provisioning_wait_s;
	struct finding_fix *x = finding_fixf(fd, "autoscale min %d for %s", (int)warm, p->name);
	finding_fix_setf(x, "pools.%s.nodes=%d", p->name, (int)warm);
	finding_fix_setf(x, "pools.%s.autoscale.min=%d", p->name, (int)warm);
}

static void diagnose_scaling(struct view *v)
{
	for (size_t i = 0; i < v->r->n_scaling; i++) {
		node_group_max_finding(v, &v->r->scaling[i]);
		provisioning_finding(v, &v->r->scaling[i]);
	}
}

/* --- capacity: the conclusion when nothing else explains the wait ----------- */

/* The pool with the highest GPU allocation (none counts as 0) among those
 * workload w may use, or for the run (w < 0) those with GPUs (a CPU pool has
 * no allocation); -1: none.  *pct gets its allocation. */
static int busiest_pool(struct view *v, int w, double *pct)
{
	int pool = -1;
	*pct = -1;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		double a = diagnose_metric(v, v->sc->pools[p].name, METRIC_GPU_ALLOCATION_PCT);
		bool may = w < 0 ? v->sc->pools[p].gpus_per_node > 0
				 : diagnose_allowed(v, (size_t)w, p);
		if (may && (isnan(a) ? 0 : a) > *pct)
			pool = (int)p, *pct = isnan(a) ? 0 : a;
	}
	return pool;
}

/* Whether workload w missed its goal (metrics_goals). */
static bool missed(const struct view *v, size_t w)
{
	return !results_holds(v->r, v->sc->workloads[w].name, METRIC_GOAL_MET);
}

/* Some workload missed its goal and no other step explains it. */
static void capacity_finding(struct view *v)
{
	if (results_holds(v->r, "all", METRIC_GOAL_MET))
		return;
	double most;
	diagnose_add(v, STEP_CAPACITY, KIND_CAPACITY, 1, busiest_pool(v, -1, &most), -1);
}

/* Whether some finding already explains workload w's wait: it names w, or
 * names no workload and is about a pool w may use (or no pool). */
static bool explained(struct view *v, size_t w)
{
	for (size_t i = 0; i < v->n_drafts; i++) {
		const struct finding *f = &v->drafts[i].f;
		if (f->workload == (int)w ||
		    (f->workload < 0 && (f->pool < 0 || diagnose_allowed(v, w, (size_t)f->pool))))
			return true;
	}
	return false;
}

/* Workload w queued (or missed deadlines) and no finding names it: the pools
 * it may use were busy.  Its pool is the busiest of those; on MIG, the
 * instances of its profile are what is short, not whole GPUs. */
static void workload_capacity_finding(struct view *v, size_t w)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	double p95 = diagnose_metric(v, ws->name, METRIC_QUEUE_TIME_P95_S),
	       goal = ws->queue_goal >= 0 ? sim_seconds(ws->queue_goal) : INFINITY;
	bool queued = p95 > goal || diagnose_metric(v, ws->name, METRIC_WAIT_SO_FAR_MAX_S) > goal;
	bool late = diagnose_metric(v, ws->name, METRIC_DEADLINE_MET_PCT) < 100 &&
		    scenario_has_deadlines(ws);
	if (explained(v, w) || !missed(v, w) || !(queued || late))
		return;
	double most;
	int pool = busiest_pool(v, (int)w, &most);
	if (pool < 0)
		return; /* nowhere to run: the stalled finding's case */
	struct finding *fd =
		diagnose_add(v, STEP_CAPACITY, KIND_CAPACITY, isnan(p95) ? 0 : p95, pool, (int)w);
	fd->fig.capacity.pool_alloc_pct = most;
	fd->figure = isnan(p95) ? 0 : p95;
}

/* A finding is raised only where a goal is missed: a draft goes unless the
 * workload it names or a member (sharing, oom, vram-full: workloads) missed
 * its goal, or for a finding about a pool alone, a workload that may use
 * the pool (any, about neither).  A healthy run has no finding. */
static void drop_met(struct view *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n_drafts; i++) {
		const struct finding *f = &v->drafts[i].f;
		bool keep = f->workload >= 0 && missed(v, (size_t)f->workload);
		bool workloads =
			f->kind == KIND_SHARING || f->kind == KIND_OOM || f->kind == KIND_VRAM_FULL;
		for (size_t m = 0; workloads && m < f->n_members; m++)
			keep |= missed(v, (size_t)f->members[m]);
		for (size_t w = 0; f->workload < 0 && w < v->sc->n_workloads; w++)
			keep |= missed(v, w) &&
				(f->pool < 0 || diagnose_allowed(v, w, (size_t)f->pool));
		if (keep)
			v->drafts[n++] = v->drafts[i];
		else
			finding_free(&v->drafts[i].f);
	}
	v->n_drafts = n;
}

/* A workload that waits on fragmentation in a pool whose GPUs idle holders
 * keep (an allocation finding with holders): the pieces are the holders',
 * and that finding names them; the fragmentation draft goes. */
static void holders_not_fragmentation(struct view *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n_drafts; i++) {
		const struct finding *f = &v->drafts[i].f;
		bool theirs = false;
		for (size_t k = 0; f->kind == KIND_FRAGMENTATION && k < v->n_drafts; k++) {
			const struct finding *h = &v->drafts[k].f;
			theirs |= h->kind == KIND_SHARING && h->fig.pool.holders && h->pool >= 0 &&
				  f->workload >= 0 &&
				  diagnose_allowed(v, (size_t)f->workload, (size_t)h->pool);
		}
		if (theirs)
			finding_free(&v->drafts[i].f);
		else
			v->drafts[n++] = v->drafts[i];
	}
	v->n_drafts = n;
}

/* --- ranking --------------------------------------------------------------- */

static int by_rank(const void *a, const void *b)
{
	const struct draft *x = a, *y = b;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void rank(struct view *v)
{
	struct results *r = v->r;
	if (!v->n_drafts)
		return; /* a healthy run: no finding */
	qsort(v->drafts, v->n_drafts, sizeof *v->drafts, by_rank);
	r->findings =
		gp_xrealloc(r->findings, (r->n_findings + v->n_drafts + 1) * sizeof *r->findings);
	for (size_t i = 0; i < v->n_drafts; i++) {
		r->findings[r->n_findings] = v->drafts[i].f;
		r->findings[r->n_findings].rank = (int32_t)(r->n_findings + 1);
		r->n_findings++;
	}
}

void diagnose_run(const struct scenario *sc, struct results *r)
{
	struct view v;
	view_init(&v, sc, r);
	diagnose_evidence(&v);
	if (v.n_windows)
		diagnose_pools(&v);
	diagnose_placement(&v);
	diagnose_application(&v);
	diagnose_scaling(&v);
	diagnose_binds(&v);
	holders_not_fragmentation(&v);
	drop_met(&v);
	for (size_t w = 0; w < sc->n_workloads; w++)
		workload_capacity_finding(&v, w);
	if (!v.n_drafts)
		capacity_finding(&v); /* the run misses its goal, no workload its own */
	rank(&v);
	view_free(&v);
}
