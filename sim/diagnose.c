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
 * that separates the causes, and by weight within a step.
 */
#include "gpuplan/diagnose.h"

#include "gpuplan/cluster.h"
#include "gpuplan/placement.h"
#include "gpuplan/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


enum step {
	STEP_ALLOCATION = FINDING_ALLOCATION,
	STEP_MEMORY = FINDING_MEMORY,
	STEP_PLACEMENT = FINDING_PLACEMENT,
	STEP_APPLICATION = FINDING_APPLICATION
};

/* --- text ------------------------------------------------------------------ */

/* A growing string. */
struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) GP_PRINTF(2, 3);

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need <= 0)
		return;
	GP_GROW(b->s, b->cap, b->n + (size_t)need + 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)need;
}

/* The string, handed over to the caller ("" when nothing was written). */
static char *sb_take(struct sbuf *b)
{
	char *s = b->s ? b->s : gp_xstrdup("");
	*b = (struct sbuf){0};
	return s;
}

static void duration(double seconds, char *buf, size_t len)
{
	report_duration((sim_time)llround(seconds * (double)SIM_SECOND), buf, len);
}

/* --- sharing options and quantization -------------------------------------- */

/* Units of its resource p's mode puts on one GPU for a whole-GPU pod. */
/* The MIG profile of p's GPU that holds vram with the most instances (more
 * compute on ties), or NULL. */
static const struct mig_profile *best_mig(const struct pool_spec *p, double vram)
{
	const struct mig_profile *best = NULL;
	for (size_t i = 0; i < p->gpu->n_mig; i++) {
		const struct mig_profile *m = &p->gpu->mig[i];
		if (m->memory_bytes < vram)
			continue;
		if (!best || m->max_instances > best->max_instances ||
		    (m->max_instances == best->max_instances && m->compute_slices > best->compute_slices))
			best = m;
	}
	return best;
}

size_t diagnose_sharing_options(const struct pool_spec *p, const struct workload_spec *w,
				struct diagnose_option *out)
{
	if (w->request != REQUEST_GPUS)
		return 0;
	double mem = p->gpu->memory_bytes, vram = w->vram_bytes;
	struct sharing_ask ask = scenario_ask(w);
	int32_t now = sharing_pods_per_gpu(&p->sharing, &ask);
	size_t n = 0;
	static const int32_t replicas[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		int32_t r = replicas[i];
		if (r > now && vram * r <= mem)
			out[n++] = (struct diagnose_option){SHARING_TIME_SLICING, r, r, NULL, 0};
	}
	for (size_t i = 0; i < 2; i++) {
		int32_t r = replicas[i];
		if (r > now && vram <= mem / r)
			out[n++] = (struct diagnose_option){SHARING_MPS, r, r, NULL, 0};
	}
	if (w->gpus != 1 || vram <= 0)
		return n; /* a MIG instance or a share is one GPU's; sizing needs the VRAM */
	const struct mig_profile *m = best_mig(p, vram);
	if (m && m->max_instances > now)
		out[n++] = (struct diagnose_option){SHARING_MIG, m->max_instances, 0, m, 0};
	int32_t milli = (int32_t)ceil(vram / mem * 1000 / 50 - 1e-9) * 50;
	if (milli < 50)
		milli = 50;
	if (milli < 1000 && 1000 / milli > now)
		out[n++] = (struct diagnose_option){SHARING_FRACTIONAL, 1000 / milli, 0, NULL, milli};
	return n;
}

void diagnose_option_name(const struct diagnose_option *o, char *buf, size_t len)
{
	switch (o->mode) {
	case SHARING_TIME_SLICING: snprintf(buf, len, "time-slicing x%d", (int)o->replicas); break;
	case SHARING_MPS: snprintf(buf, len, "MPS x%d", (int)o->replicas); break;
	case SHARING_MIG: snprintf(buf, len, "MIG %s x%d", o->mig->name, (int)o->per_gpu); break;
	case SHARING_FRACTIONAL: snprintf(buf, len, "fractional %d milli", (int)o->milli); break;
	case SHARING_EXCLUSIVE: snprintf(buf, len, "exclusive"); break;
	}
}

bool diagnose_quant_fit(const struct pool_spec *p, const struct workload_spec *w, int32_t per_gpu,
			enum quant *q, double *vram, double *freed)
{
	if (!w->model || w->vram_bytes <= 0)
		return false;
	int tp = w->request == REQUEST_GPUS && w->gpus > 0 ? w->gpus : 1;
	double now = footprint_weights_bytes(w->model, (enum quant)w->quantization);
	/* fp8 has int8's footprint; int8 is the one every GPU runs. */
	static const enum quant narrower[] = {QUANT_INT8, QUANT_INT4};
	for (size_t i = 0; i < 2; i++) {
		double saved = (now - footprint_weights_bytes(w->model, narrower[i])) / tp;
		if (saved <= 0)
			continue;
		double need = w->vram_bytes - saved;
		if (need * per_gpu <= p->gpu->memory_bytes) {
			*q = narrower[i];
			*vram = need;
			*freed = saved;
			return true;
		}
	}
	return false;
}

/* --- the run's windows ----------------------------------------------------- */

/* A finding before ranking. */
struct draft {
	struct finding f;
	enum step step;
	double weight;   /* how much it explains: larger ranks first within a step */
	size_t seq;      /* ties keep the order found */
};

struct view {
	const struct scenario *sc;
	struct results *r;
	size_t n_scopes, n_windows;
	double *len;           /* seconds of each window */
	double span;           /* seconds of all windows */
	double *pend;          /* per workload: pending pod-seconds in the pool's windows */
	uint8_t *allow;        /* [w * pools + p]: 0 not yet known, 1 no, 2 yes */
	bool has_placer;       /* built on first use: the rules of placement */
	struct cluster cluster;
	struct placer placer;
	struct draft *drafts;
	size_t n_drafts, cap_drafts;
};

static const struct ts_row *row(const struct view *v, size_t k, size_t scope)
{
	return &v->r->ts[k * v->n_scopes + scope];
}

static size_t pool_scope(const struct view *v, size_t p) { (void)v; return 1 + p; }
static size_t workload_scope(const struct view *v, size_t w) { return 1 + v->sc->n_pools + w; }

/* Whether the rows are windows of every scope in collect's order (all, pools,
 * workloads): a results object from elsewhere may not be. */
static bool rows_match(const struct view *v)
{
	const struct scenario *sc = v->sc;
	if (!v->r->n_ts || v->r->n_ts % v->n_scopes)
		return false;
	for (size_t i = 0; i < v->n_scopes; i++) {
		const char *want = i == 0 ? "all"
				   : i <= sc->n_pools ? sc->pools[i - 1].name
						      : sc->workloads[i - 1 - sc->n_pools].name;
		if (!v->r->ts[i].scope || strcmp(v->r->ts[i].scope, want))
			return false;
	}
	return true;
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
		sim_time t = row(v, k, 0)->t;
		sim_time end = k + 1 < v->n_windows ? row(v, k + 1, 0)->t : r->sim_end;
		if (end <= t)
			end = t + sc->output.step;
		v->len[k] = sim_seconds(end - t);
		v->span += v->len[k];
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

static const struct placer *placer(struct view *v)
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
static bool allowed(struct view *v, size_t w, size_t p)
{
	uint8_t *a = &v->allow[w * v->sc->n_pools + p];
	if (!*a)
		*a = scenario_gpu_equivalent(&v->sc->pools[p], &v->sc->workloads[w]) > 0 &&
				     !placement_pool_filtered(placer(v), w, p)
			     ? 2
			     : 1;
	return *a == 2;
}

static double metric(const struct view *v, const char *scope, const char *name)
{
	return results_metric(v->r, scope, name);
}

/* A finding about pool (or -1) and workload (or -1). */
static struct finding *add(struct view *v, enum step step, enum finding_kind kind, double weight,
			   int pool, int workload, char *text, char *evidence)
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
	d->f.text = text;
	d->f.evidence = evidence;
	v->n_drafts++;
	return &d->f;
}

/* --- steps 1 and 2: allocation and memory, per pool ------------------------ */

/* Time-weighted sums over the windows in which work the pool could host pended. */
struct pool_sums {
	double pend_s;                        /* seconds of those windows */
	double cap, alloc, engine, sm, vram;  /* GPU-seconds (GiB-seconds for vram) */
	double pods, gpus;                    /* pending pod- and GPU-seconds */
};

static void pool_sums(struct view *v, size_t p, struct pool_sums *s)
{
	const struct scenario *sc = v->sc;
	memset(s, 0, sizeof *s);
	memset(v->pend, 0, sc->n_workloads * sizeof *v->pend);
	for (size_t k = 0; k < v->n_windows; k++) {
		double pods = 0, gpus = 0, L = v->len[k];
		for (size_t w = 0; w < sc->n_workloads; w++) {
			const struct ts_row *x = row(v, k, workload_scope(v, w));
			if (x->pending <= 0 || !allowed(v, w, p))
				continue;
			pods += x->pending;
			gpus += fmax(0, x->gpus_demand - x->gpus_allocated);
			v->pend[w] += x->pending * L;
		}
		if (pods <= 0)
			continue;
		const struct ts_row *y = row(v, k, pool_scope(v, p));
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

/* Work pended long enough on a pool that was mostly allocated and mostly idle. */
static bool full_and_idle(const struct view *v, const struct pool_sums *s)
{
	return s->pend_s > 0 && s->pend_s >= DIAGNOSE_PENDING_SHARE * v->span && s->cap > 0 &&
	       s->alloc >= DIAGNOSE_ALLOCATED * s->cap && s->engine < DIAGNOSE_IDLE * s->alloc;
}

/* "work pended in 83% of the span (12h57m of 15h36m): 41.2 pods asking for
 * 41.2 GPUs on average; pool a100 98.5% allocated (15.8 of 16 GPUs), its
 * allocated GPUs 8.0% engine-active, 4.0% SM-active" */
static void pool_evidence(struct sbuf *b, const struct view *v, const struct pool_spec *p,
			  const struct pool_sums *s)
{
	char a[32], span[32];
	duration(s->pend_s, a, sizeof a);
	duration(v->span, span, sizeof span);
	sb_printf(b, "work pended in %.0f%% of the span (%s of %s): %.1f pods asking for %.1f GPUs "
		     "on average; pool %s %.1f%% allocated (%.1f of %.0f GPUs), its allocated GPUs "
		     "%.1f%% engine-active and %.1f%% SM-active",
		  100 * s->pend_s / v->span, a, span, s->pods / s->pend_s, s->gpus / s->pend_s, p->name,
		  100 * s->alloc / s->cap, s->alloc / s->pend_s, s->cap / s->pend_s,
		  100 * s->engine / s->alloc, 100 * s->sm / s->alloc);
}

/* Names the options of every pending workload into text and evidence; false
 * when none has any. */
static bool name_options(struct view *v, const struct pool_spec *p, struct sbuf *text,
			 struct sbuf *ev)
{
	bool any = false;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
		size_t n = v->pend[w] > 0 ? diagnose_sharing_options(p, ws, o) : 0;
		if (!n)
			continue;
		sb_printf(text, "%s%s: ", any ? "; " : "", ws->name);
		for (size_t i = 0; i < n; i++) {
			char name[64];
			diagnose_option_name(&o[i], name, sizeof name);
			sb_printf(text, "%s%s", i ? ", " : "", name);
		}
		sb_printf(ev, "; %s pods: %.1f GiB VRAM each on %.0f GiB GPUs, gpu_busy %.2f, "
			      "sm_share %.2f",
			  ws->name, ws->vram_bytes / GP_GIB, p->gpu->memory_bytes / GP_GIB, ws->gpu_busy,
			  ws->sm_share);
		any = true;
	}
	return any;
}

static void allocation_finding(struct view *v, size_t p, const struct pool_sums *s)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	struct sbuf text = {0}, ev = {0};
	sb_printf(&text, "pool %s: pods wait while its allocated GPUs are mostly idle, so "
			 "whole-GPU allocation is the lock; these sharing modes would hold the "
			 "pending pods (",
		  ps->name);
	pool_evidence(&ev, v, ps, s);
	if (!name_options(v, ps, &text, &ev)) {
		free(text.s);
		free(ev.s);
		return;
	}
	sb_printf(&text, ")");
	add(v, STEP_ALLOCATION, KIND_SHARING, s->gpus, (int)p, -1, sb_take(&text), sb_take(&ev));
}

/* The quantization that fits per_gpu pods of a pending model workload, into
 * text and evidence.  Returns whether some workload had one. */
static bool name_quant(struct view *v, const struct pool_spec *p, int32_t per_gpu,
		       struct sbuf *text, struct sbuf *ev)
{
	bool any = false;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		enum quant q;
		double vram, freed;
		if (v->pend[w] <= 0 || !diagnose_quant_fit(p, ws, per_gpu, &q, &vram, &freed))
			continue;
		sb_printf(text, "%s%s weights for %s would fit %d per GPU (%.1f GiB freed per pod)",
			  any ? "; " : "", quant_name(q), ws->name, (int)per_gpu, freed / GP_GIB);
		sb_printf(ev, "; with %s a %s pod takes %.1f GiB: %d x %.1f = %.1f GiB of %.0f GiB",
			  quant_name(q), ws->name, vram / GP_GIB, (int)per_gpu, vram / GP_GIB,
			  per_gpu * vram / GP_GIB, p->gpu->memory_bytes / GP_GIB);
		any = true;
	}
	return any;
}

/* Marks, in v->pend, the workloads of p whose pods were OOM-killed; their
 * kills.  Only exclusive and time-sliced GPUs let a pod overflow them. */
static double oom_kills(struct view *v, size_t p)
{
	enum sharing_mode mode = v->sc->pools[p].sharing.mode;
	bool can = mode == SHARING_EXCLUSIVE || mode == SHARING_TIME_SLICING;
	double kills = 0;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		double k = metric(v, v->sc->workloads[w].name, "oom_kills");
		bool here = can && k > 0 && allowed(v, w, p);
		v->pend[w] = here ? k : 0;
		kills += here ? k : 0;
	}
	return kills;
}

/* Pods were OOM-killed on p: more of them than its GPUs' memory holds. */
static void oom_finding(struct view *v, size_t p, double kills)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	bool sliced = ps->sharing.mode == SHARING_TIME_SLICING;
	int32_t per_gpu = sliced ? ps->sharing.replicas : 1;
	struct sbuf text = {0}, ev = {0};
	if (sliced)
		sb_printf(&text, "pool %s: VRAM is the limit: time-slicing x%d puts more pods on a GPU "
				 "than its memory holds, and they are OOM-killed",
			  ps->name, (int)per_gpu);
	else
		sb_printf(&text, "pool %s: VRAM is the limit: pods need more memory than a GPU has, "
				 "and they are OOM-killed", ps->name);
	double alloc = metric(v, ps->name, "gpu_allocation_pct");
	sb_printf(&ev, "%.0f OOM kills; pool %s %.1f%% allocated, its allocated GPUs %.1f%% "
		       "engine-active",
		  kills, ps->name, alloc, alloc > 0 ? 100 * metric(v, ps->name, "engine_active_pct") / alloc : 0);
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		if (v->pend[w] > 0)
			sb_printf(&ev, "; %s: %.0f kills, %.1f GiB a pod: %d x %.1f = %.1f GiB on %.0f GiB "
				       "GPUs",
				  ws->name, v->pend[w], ws->vram_bytes / GP_GIB, (int)per_gpu,
				  ws->vram_bytes / GP_GIB, per_gpu * ws->vram_bytes / GP_GIB,
				  ps->gpu->memory_bytes / GP_GIB);
	}
	sb_printf(&text, "; ");
	if (!name_quant(v, ps, per_gpu, &text, &ev))
		sb_printf(&text, "no narrower weight format fits %d per GPU: fewer replicas would",
			  (int)per_gpu);
	add(v, STEP_MEMORY, KIND_OOM, kills, (int)p, -1, sb_take(&text), sb_take(&ev));
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
	struct sbuf text = {0}, ev = {0};
	sb_printf(&text, "pool %s: VRAM is the limit: pods wait while its allocated GPUs are mostly "
			 "idle, but a GPU has no room for one more pod; ",
		  ps->name);
	pool_evidence(&ev, v, ps, s);
	sb_printf(&ev, "; VRAM %.1f of %.0f GiB used per allocated GPU (%.0f%%), %.1f GiB left where "
		       "a pending pod needs %.1f GiB",
		  used, mem, 100 * used / mem, mem - used, pod);
	if (!name_quant(v, ps, 2, &text, &ev))
		sb_printf(&text, "no narrower weight format fits two per GPU: a GPU with more memory "
				 "would");
	add(v, STEP_MEMORY, KIND_VRAM_FULL, s->gpus, (int)p, -1, sb_take(&text), sb_take(&ev));
}

static void diagnose_pools(struct view *v)
{
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		struct pool_sums s;
		pool_sums(v, p, &s);
		bool lock = full_and_idle(v, &s);
		size_t before = v->n_drafts;
		if (lock)
			allocation_finding(v, p, &s);
		bool named = v->n_drafts > before;
		double kills = oom_kills(v, p); /* reuses v->pend */
		if (kills > 0) {
			oom_finding(v, p, kills);
		} else if (lock && !named) {
			pool_sums(v, p, &s); /* no unit holds the pods: is it their VRAM? */
			full_memory_finding(v, p, &s);
		}
	}
}

/* --- step 3: placement, per workload --------------------------------------- */

/* Which rules the messages name. */
enum { RULE_AFFINITY = 1, RULE_TAINT = 2, RULE_SPREAD = 4 };

/* The pending time of workload w with a rule's reason, its pods, its
 * longest such message and the rules the messages name. */
static double rule_pending(const struct view *v, size_t w, int64_t *pods, const char **top,
			   int *rules)
{
	double seconds = 0, best = -1;
	*pods = 0;
	*top = NULL;
	*rules = 0;
	for (size_t i = 0; i < v->r->n_pending_reasons; i++) {
		const struct pending_reason *pr = &v->r->pending_reasons[i];
		if (pr->workload != (int32_t)w || !(pr->kinds & PEND_RULES))
			continue;
		seconds += pr->pending_seconds;
		*pods += pr->pods;
		*rules |= (pr->kinds & PEND_BIT(PEND_AFFINITY) ? RULE_AFFINITY : 0) |
			  (pr->kinds & PEND_BIT(PEND_TAINT) ? RULE_TAINT : 0) |
			  (pr->kinds & (PEND_BIT(PEND_SPREAD) | PEND_BIT(PEND_SPREAD_LABEL)) ? RULE_SPREAD : 0);
		if (pr->pending_seconds > best) {
			best = pr->pending_seconds;
			*top = pr->reason;
		}
	}
	return seconds;
}

/* Pools whose capacity w's rules hide: they would fit its pods, but a rule
 * keeps them off (for a spread constraint: the pools it may use). */
static size_t hidden_pools(struct view *v, size_t w, bool spread_only, size_t *out)
{
	size_t n = 0;
	for (size_t p = 0; p < v->sc->n_pools; p++) {
		if (scenario_gpu_equivalent(&v->sc->pools[p], &v->sc->workloads[w]) <= 0)
			continue;
		if (placement_pool_filtered(placer(v), w, p) != spread_only)
			out[n++] = p;
	}
	return n;
}

/* The rules of w that can keep it off nodes: selector, gpu_spec, affinity, spread. */
static void name_rules(struct sbuf *b, const struct workload_spec *w)
{
	for (size_t i = 0; i < w->n_node_selector; i++)
		sb_printf(b, "; node_selector %s=%s", w->node_selector[i].key, w->node_selector[i].value);
	if (w->n_gpu_spec)
		sb_printf(b, "; gpu_spec allows %zu GPU type%s", w->n_gpu_spec, w->n_gpu_spec > 1 ? "s" : "");
	if (w->n_affinity)
		sb_printf(b, "; %zu node affinity requirement%s", w->n_affinity, w->n_affinity > 1 ? "s" : "");
	if (w->spread.key)
		sb_printf(b, "; topology spread on %s, max_skew %d", w->spread.key, (int)w->spread.max_skew);
}

static void placement_finding(struct view *v, size_t w, size_t *hidden)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	int64_t pods;
	const char *top;
	int rules;
	double pend = rule_pending(v, w, &pods, &top, &rules);
	bool spread_only = rules == RULE_SPREAD;
	size_t nh = pend > 0 ? hidden_pools(v, w, spread_only, hidden) : 0;
	double idle = 0, most = 0, cap = 0, secs = 0;
	for (size_t k = 0; k < v->n_windows && nh; k++) {
		if (row(v, k, workload_scope(v, w))->pending <= 0)
			continue;
		double here = 0, c = 0;
		for (size_t i = 0; i < nh; i++) {
			const struct ts_row *y = row(v, k, pool_scope(v, hidden[i]));
			here += fmax(0, y->gpus_capacity - y->gpus_allocated);
			c += y->gpus_capacity;
		}
		idle += here * v->len[k];
		cap += c * v->len[k];
		secs += v->len[k];
		most = fmax(most, here);
	}
	double pod_gpus = ws->request == REQUEST_GPUS ? ws->gpus : 1;
	if (!nh || most < pod_gpus || idle <= 0)
		return; /* nothing hidden was free: the rules cost nothing here */
	struct sbuf text = {0}, ev = {0}, pools = {0};
	for (size_t i = 0; i < nh; i++)
		sb_printf(&pools, "%s%s", i ? (i + 1 == nh ? " and " : ", ") : "",
			  v->sc->pools[hidden[i]].name);
	static const char *const phrase[] = {
		"", "its node selector/affinity keeps", "a taint it does not tolerate keeps",
		"its node selector/affinity and a taint it does not tolerate keep"};
	if (spread_only)
		sb_printf(&text, "%s waits on placement rules, not on hardware: its topology spread "
				 "constraint keeps its pods from pool%s %s while GPUs there are idle; "
				 "raise max_skew or use ScheduleAnyway",
			  ws->name, nh > 1 ? "s" : "", pools.s);
	else
		sb_printf(&text, "%s waits on placement rules, not on hardware: %s its pods off "
				 "pool%s %s while GPUs there are idle; relax the rule or move capacity",
			  ws->name, phrase[rules & 3], nh > 1 ? "s" : "", pools.s);
	char d[32];
	duration(pend, d, sizeof d);
	sb_printf(&ev, "%s of pod time pending (%lld pod%s) with rule reasons, most with \"%s\"; "
		       "meanwhile pool%s %s had %.1f of %.0f GPUs idle on average (%.1f idle GPU-hours, "
		       "up to %.0f at once)",
		  d, (long long)pods, pods == 1 ? "" : "s", top, nh > 1 ? "s" : "", pools.s, idle / secs, cap / secs,
		  idle / 3600, most);
	name_rules(&ev, ws);
	for (size_t i = 0; i < nh; i++) {
		const struct pool_spec *p = &v->sc->pools[hidden[i]];
		for (size_t t = 0; t < p->n_taints; t++)
			sb_printf(&ev, "; pool %s taint %s=%s", p->name, p->taints[t].key,
				  p->taints[t].value);
	}
	free(pools.s);
	add(v, STEP_PLACEMENT, KIND_RULES, pend, -1, (int)w, sb_take(&text), sb_take(&ev));
}

void diagnose_hidden_pools(const struct scenario *sc, size_t w, bool *out)
{
	struct cluster c;
	struct placer pl;
	cluster_init(&c, sc);
	placement_init(&pl, &c);
	for (size_t p = 0; p < sc->n_pools; p++)
		out[p] = scenario_gpu_equivalent(&sc->pools[p], &sc->workloads[w]) > 0 &&
			 placement_pool_filtered(&pl, w, p);
	placement_free(&pl);
	cluster_free(&c);
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
static double offered_rate(const struct inference_spec *in)
{
	const struct request_spec *rq = &in->requests;
	if (rq->process != REQUESTS_TRACE)
		return rq->rate;
	double period = sim_seconds(rq->period);
	return period > 0 ? (double)rq->n_rows * rq->speedup / period : 0;
}

/* The tokenizer (one per replica) is saturated while the GPUs idle. */
static void tokenizer_finding(struct view *v, const struct workload_spec *ws)
{
	const struct inference_spec *in = ws->inference;
	double tok = sim_seconds(in->tokenize), rate = offered_rate(in);
	int32_t replicas = in->target_queue > 0 ? in->max_replicas : in->replicas;
	double busy = replicas > 0 ? rate * tok / replicas : 0;
	double duty = metric(v, ws->name, "duty_cycle_pct");
	if (tok <= 0 || busy < DIAGNOSE_TOKENIZER || isnan(duty) || duty >= 100 * DIAGNOSE_DUTY)
		return;
	struct sbuf text = {0}, ev = {0};
	sb_printf(&text, "%s is bound by tokenization, not by GPUs: requests queue at the "
			 "tokenizer while the GPUs idle, so more GPUs would not help; more tokenizer "
			 "workers or a faster tokenizer would",
		  ws->name);
	sb_printf(&ev, "tokenizer %.3g ms a request x %.4g requests/s over %d replica%s = %.0f%% busy "
		       "(one per replica); replicas in iterations %.1f%% of the time; TTFT p99 %.3g s, "
		       "of which the wait for a batch slot averages %.3g s; SLO attainment %.1f%%",
		  tok * 1000, rate, (int)replicas, replicas == 1 ? "" : "s", 100 * busy, duty,
		  metric(v, ws->name, "ttft_p99_s"), metric(v, ws->name, "request_queue_mean_s"),
		  metric(v, ws->name, "slo_attainment_pct"));
	add(v, STEP_APPLICATION, KIND_TOKENIZER, busy, -1, (int)(ws - v->sc->workloads), sb_take(&text), sb_take(&ev));
}

/* Batch jobs start at once yet miss deadlines, with their GPUs mostly idle:
 * the time goes off the GPU (CPU, I/O). */
static void offgpu_finding(struct view *v, const struct workload_spec *ws)
{
	double met = metric(v, ws->name, "deadline_met_pct");
	double p95 = metric(v, ws->name, "queue_time_p95_s");
	double failed = metric(v, ws->name, "jobs_failed");
	if (ws->deadline_kind == DEADLINE_NONE || isnan(met) || met >= 100 || isnan(p95) ||
	    p95 > DIAGNOSE_PROMPT_START * ws->duration.mean || failed > 0 ||
	    ws->gpu_busy >= DIAGNOSE_IDLE)
		return;
	struct sbuf text = {0}, ev = {0};
	char d[32], off[32];
	duration(ws->duration.mean, d, sizeof d);
	duration((1 - ws->gpu_busy) * ws->duration.mean, off, sizeof off);
	sb_printf(&text, "%s misses deadlines although its jobs start at once, and their GPUs are "
			 "mostly idle: the time goes to CPU and I/O stages, so more or shared GPUs "
			 "would not help; speeding up the off-GPU work would",
		  ws->name);
	sb_printf(&ev, "deadline met %.1f%% with queue p95 %.0f s; gpu_busy %.2f: %s of a %s job "
		       "is off the GPU",
		  met, p95, ws->gpu_busy, off, d);
	add(v, STEP_APPLICATION, KIND_OFF_GPU, 100 - met, -1, (int)(ws - v->sc->workloads), sb_take(&text), sb_take(&ev));
}

static void diagnose_application(struct view *v)
{
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		const struct workload_spec *ws = &v->sc->workloads[w];
		if (ws->inference)
			tokenizer_finding(v, ws);
		else
			offgpu_finding(v, ws);
	}
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
	r->findings = gp_xrealloc(r->findings, (r->n_findings + v->n_drafts + 1) * sizeof *r->findings);
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
	if (v.n_windows)
		diagnose_pools(&v);
	diagnose_placement(&v);
	diagnose_application(&v);
	rank(&v);
	view_free(&v);
}

/* --- printing -------------------------------------------------------------- */

/* Share of the windows (scope all) in which some pod pended; NAN without windows. */
static double pending_share(const struct results *r)
{
	double pend = 0, span = 0;
	for (size_t i = 0; i < r->n_ts; i++) {
		const struct ts_row *x = &r->ts[i];
		if (strcmp(x->scope, "all"))
			continue;
		span += 1;
		pend += x->pending > 0;
	}
	return span > 0 ? 100 * pend / span : NAN;
}

/* The no-finding line, with the figures the run has. */
static void print_no_finding(FILE *out, const struct results *r)
{
	double alloc = results_metric(r, "all", "gpu_allocation_pct");
	double engine = results_metric(r, "all", "engine_active_pct");
	double kills = results_metric(r, "all", "oom_kills");
	double pend = pending_share(r);
	fprintf(out, "\ndiagnosis: no finding");
	if (pend == 0)
		fprintf(out, " (healthy): no pod pended");
	else if (pend > 0)
		fprintf(out, ": pods pended in %.0f%% of the windows, but none of allocation, memory, "
			     "placement or application explains it: a wait for capacity, which a larger "
			     "pool ('gpuplan search') would shorten",
			pend);
	if (alloc > 0 && !isnan(engine))
		fprintf(out, "; allocated GPUs %.0f%% engine-active", 100 * engine / alloc);
	if (!isnan(kills))
		fprintf(out, ", %.0f OOM kills", kills);
	fprintf(out, ".\n");
}

void diagnose_print(FILE *out, const struct results *r)
{
	if (!r->n_findings) {
		print_no_finding(out, r);
		return;
	}
	fprintf(out, "\ndiagnosis (in order: allocation, memory, placement, application):\n");
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct finding *f = &r->findings[i];
		fprintf(out, "%2d. [%s] %s\n    evidence: %s\n", (int)f->rank,
			finding_step_name((enum finding_step)f->step), f->text,
			f->evidence);
	}
}
