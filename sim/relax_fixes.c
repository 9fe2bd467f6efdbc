/*
 * relax_fixes.c - the relaxations advise planned before the table (see
 * relax.h): sharing modes, partitions, idle culling, a shared pool, rules,
 * tolerations, lending, quota, windows, narrower weights, inference
 * settings, packing.  Each is a row's function of relax_table or a part of
 * one.
 */
#include "gpuplan/relax.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/footprint.h"
#include "gpuplan/gpupolicy.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"
#include "gpuplan/ytree.h"

#include <math.h>

#define ADVISE_WHO 600 /* three names of up to 253 characters and a count */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- sharing ---------------------------------------------------------------- */

/* Whether option o (by mode and replicas) is among w's options on p. */
static bool offers(const struct pool_spec *p, const struct workload_spec *w,
		   const struct diagnose_option *o)
{
	struct diagnose_option opts[DIAGNOSE_MAX_OPTIONS];
	size_t n = diagnose_sharing_options(p, w, opts);
	for (size_t i = 0; i < n; i++)
		if (opts[i].mode == o->mode && opts[i].replicas == o->replicas)
			return true;
	return false;
}

static bool hosts(const struct pool_spec *p, const struct workload_spec *w)
{
	return scenario_gpu_equivalent(p, w) > 0;
}

/* Time-slicing and MPS on pool p, where their units hold every workload p hosts. */
void relax_replicas(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f)
{
	(void)r;
	if (c->pool < 0)
		return;
	const struct pool_spec *ps = &sc->pools[c->pool];
	static const struct diagnose_option tries[] = {{SHARING_TIME_SLICING, 2, 2, NULL, 0},
						       {SHARING_TIME_SLICING, 4, 4, NULL, 0},
						       {SHARING_MPS, 2, 2, NULL, 0},
						       {SHARING_MPS, 4, 4, NULL, 0}};
	for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
		bool all = true, any = false;
		for (size_t w = 0; w < sc->n_workloads && all; w++) {
			if (!hosts(ps, &sc->workloads[w]))
				continue;
			any = true;
			all = offers(ps, &sc->workloads[w], &tries[t]);
		}
		if (!any || !all)
			continue;
		char name[64];
		diagnose_option_name(&tries[t], name, sizeof name);
		finding_fix_setf(finding_fixf(f, "%s on %s", name, ps->name),
				 "pools.%s.sharing={mode: %s, replicas: %d}", ps->name,
				 sharing_name(tries[t].mode), (int)tries[t].replicas);
	}
}

/* The names of workloads ws[0 .. n) for a label: all of them up to three,
 * else the first two and how many more ("a, b and 28 more"). */
static void names_text(const struct scenario *sc, const size_t *ws, size_t n, char *buf, size_t len)
{
	buf[0] = '\0';
	size_t shown = n <= 3 ? n : 2;
	for (size_t i = 0; i < shown; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 !i           ? ""
			 : i + 1 == n ? " and "
				      : ", ",
			 sc->workloads[ws[i]].name);
	if (shown < n)
		snprintf(buf + strlen(buf), len - strlen(buf), " and %zu more", n - shown);
}

/* Idle culling of the mostly idle services pool p hosts (notebooks, dev
 * pods): the cheapest fix, no hardware and no sharing.  An hour, as
 * JupyterHub's culler is often set (--timeout=3600), and the diagnosis'
 * own threshold of idleness.  One alternative for all of them, as one
 * culler covers every notebook of a hub: 30 notebooks are one row, not 30. */
void relax_culling(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	(void)r;
	if (c->pool < 0)
		return;
	size_t *ws = gp_xcalloc(sc->n_workloads + 1, sizeof *ws), n = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *x = &sc->workloads[w];
		if (x->kind == WORKLOAD_SERVICE && !(x->cull_after > 0) &&
		    x->gpu_busy < DIAGNOSE_IDLE && hosts(&sc->pools[c->pool], x))
			ws[n++] = w;
	}
	if (n) {
		char who[ADVISE_WHO];
		names_text(sc, ws, n, who, sizeof who);
		struct finding_fix *a = finding_fixf(f, "idle_cull %s after 1h", who);
		for (size_t i = 0; i < n; i++)
			finding_fix_setf(a, "workloads.%s.idle_cull={after: 1h, threshold: %g}",
					 sc->workloads[ws[i]].name, DIAGNOSE_IDLE);
	}
	free(ws);
}

/* The workloads pool p hosts when each is a one-GPU workload hosted nowhere
 * else (their requests can change to a MIG instance or a share); 0 otherwise.
 * ws has room for every workload. */
static size_t movable(const struct scenario *sc, size_t p, size_t *ws)
{
	size_t n = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *x = &sc->workloads[w];
		if (!hosts(&sc->pools[p], x))
			continue;
		if (x->request != REQUEST_GPUS || x->gpus != 1 || x->inference)
			return 0;
		for (size_t q = 0; q < sc->n_pools; q++)
			if (q != p && hosts(&sc->pools[q], x))
				return 0;
		ws[n++] = w;
	}
	return n;
}

/* The option of the given mode for workload w on p, if any. */
static bool option_of(const struct pool_spec *p, const struct workload_spec *w,
		      enum sharing_mode mode, struct diagnose_option *o)
{
	struct diagnose_option opts[DIAGNOSE_MAX_OPTIONS];
	size_t n = diagnose_sharing_options(p, w, opts);
	for (size_t i = 0; i < n; i++)
		if (opts[i].mode == mode) {
			*o = opts[i];
			return true;
		}
	return false;
}

static void partitions_of(const struct scenario *sc, const struct pool_spec *ps, const size_t *ws,
			  size_t n, struct finding *f);

/* A MIG layout of the profile that holds the largest pod, and fractional shares. */
void relax_partitions(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f)
{
	(void)r;
	if (c->pool < 0)
		return;
	const struct pool_spec *ps = &sc->pools[c->pool];
	size_t *ws = gp_xcalloc(sc->n_workloads + 1, sizeof *ws);
	size_t n = movable(sc, (size_t)c->pool, ws);
	if (n)
		partitions_of(sc, ps, ws, n, f);
	free(ws);
}

/* relax_partitions for the movable workloads ws[0 .. n) of ps. */
static void partitions_of(const struct scenario *sc, const struct pool_spec *ps, const size_t *ws,
			  size_t n, struct finding *f)
{
	size_t largest = ws[0];
	for (size_t i = 1; i < n; i++)
		if (sc->workloads[ws[i]].vram_bytes > sc->workloads[largest].vram_bytes)
			largest = ws[i];
	struct diagnose_option mig, frac;
	if (option_of(ps, &sc->workloads[largest], SHARING_MIG, &mig)) {
		struct finding_fix *a = finding_fixf(f, "MIG %s x%d on %s", mig.mig->name,
						     (int)mig.per_gpu, ps->name);
		struct gp_sbuf layout = {0};
		gp_sb_printf(&layout, "%s", "");
		for (int32_t k = 0; k < mig.per_gpu; k++)
			gp_sb_printf(&layout, "%s%s", k ? ", " : "", mig.mig->name);
		finding_fix_setf(a, "pools.%s.sharing={mode: %s, layout: [%s]}", ps->name,
				 sharing_name(SHARING_MIG), layout.s);
		free(layout.s);
		for (size_t i = 0; i < n; i++)
			finding_fix_setf(a, "workloads.%s.gpus={mig: %s}",
					 sc->workloads[ws[i]].name, mig.mig->name);
	}
	bool all = true;
	for (size_t i = 0; i < n && all; i++)
		all = option_of(ps, &sc->workloads[ws[i]], SHARING_FRACTIONAL, &frac);
	if (!all)
		return;
	struct finding_fix *a =
		n == 1 ? finding_fixf(f, "fractional %d milli on %s", (int)frac.milli, ps->name)
		       : finding_fixf(f, "fractional shares on %s", ps->name);
	finding_fix_setf(a, "pools.%s.sharing={mode: %s}", ps->name,
			 sharing_name(SHARING_FRACTIONAL));
	for (size_t i = 0; i < n; i++) {
		option_of(ps, &sc->workloads[ws[i]], SHARING_FRACTIONAL, &frac);
		finding_fix_setf(a, "workloads.%s.gpus={milli: %d}", sc->workloads[ws[i]].name,
				 (int)frac.milli);
	}
}

static void add_toleration(char *buf, size_t len, const char *key, bool exists, const char *value,
			   int effect);

/* Idle holders of whole GPUs (notebooks, idle services: one-GPU pods busy
 * under DIAGNOSE_IDLE, waiting themselves or not) in pool p, where work
 * missed its goal, moved to a small pool of their own, as people do:
 * time-sliced (x4, else x2, as their VRAM allows), tainted for them alone
 * and selected by them, sized for the GPUs they held at most, its nodes
 * taken from p (the rest of p keeps whole GPUs for the work that waited).
 * Sharing p itself would time-slice the trainers beside them too. */
static void shared_pool_of(const struct scenario *sc, const struct results *r,
			   const struct pool_spec *ps, const size_t *members, size_t n_members,
			   struct finding *f);

void relax_shared_pool(const struct scenario *sc, const struct results *r,
		       const struct constraint *c, struct finding *f)
{
	if (c->pool < 0)
		return;
	const struct pool_spec *ps = &sc->pools[c->pool];
	size_t n_members = 0;
	size_t *members = gp_xcalloc(sc->n_workloads + 1, sizeof *members);
	bool missed = false; /* by work that stays in p: else p is theirs already */
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (!hosts(ps, ws))
			continue;
		/* idle ones that wait themselves too: a pool of their own serves them */
		if (ws->request == REQUEST_GPUS && ws->gpus == 1 && !ws->inference &&
		    ws->gpu_busy < DIAGNOSE_IDLE)
			members[n_members++] = w;
		else
			missed |= !results_holds(r, ws->name, METRIC_GOAL_MET);
	}
	if (missed && n_members && !ps->autoscale.on && !ps->n_windows && !ps->spot.on &&
	    ps->sharing.mode == SHARING_EXCLUSIVE && strlen(ps->name) <= SCENARIO_MAX_NAME - 8)
		shared_pool_of(sc, r, ps, members, n_members, f);
	free(members);
}

/* relax_shared_pool for the idle holders members[0 .. n_members) of ps. */
static void shared_pool_of(const struct scenario *sc, const struct results *r,
			   const struct pool_spec *ps, const size_t *members, size_t n_members,
			   struct finding *f)
{
	int32_t replicas = 0;
	double held = 0;
	for (int32_t k = 4; k >= 2 && !replicas; k /= 2) {
		struct diagnose_option o = {SHARING_TIME_SLICING, k, k, NULL, 0};
		bool all = true;
		for (size_t m = 0; m < n_members; m++)
			all &= offers(ps, &sc->workloads[members[m]], &o);
		replicas = all ? k : 0;
	}
	for (size_t m = 0; m < n_members; m++)
		held += fmax(0, results_or(r, sc->workloads[members[m]].name,
					   METRIC_PEAK_ALLOCATED_GPUS, NAN));
	double gpus = ceil(held / fmax(replicas, 1) - 1e-9);
	int32_t nodes = (int32_t)ceil(gpus / ps->gpus_per_node - 1e-9);
	nodes = nodes < 1 ? 1 : nodes;
	if (!replicas || nodes >= ps->nodes)
		return;
	char name[SCENARIO_MAX_NAME + 1], who[ADVISE_WHO];
	snprintf(name, sizeof name, "%s-shared", ps->name);
	if (scenario_pool_index(sc, name) >= 0)
		return;
	names_text(sc, members, n_members, who, sizeof who);
	struct finding_fix *a = finding_fixf(
		f, "%s to a pool of their own (%s: %d node%s, time-slicing x%d), %s at %d node%s",
		who, name, (int)nodes, nodes == 1 ? "" : "s", (int)replicas, ps->name,
		(int)(ps->nodes - nodes), ps->nodes - nodes == 1 ? "" : "s");
	finding_fix_setf(
		a,
		"pools.+={name: %s, nodes: %d, gpu: %s, gpus_per_node: %d, cpu: %g, memory: %.0fMiB, "
		"price: {gpu_hour: %g, cpu_hour: %g, gib_hour: %g}, sharing: {mode: time-slicing, "
		"replicas: %d}, labels: {gpuplan.io/pool: %s}, taints: [{key: gpuplan.io/pool, "
		"value: %s, effect: NoSchedule}]}",
		name, (int)nodes, ps->gpu->name, (int)ps->gpus_per_node, ps->cpu,
		ps->memory_bytes / (1024.0 * 1024), ps->price.gpu_hour, ps->price.cpu_hour,
		ps->price.gib_hour, (int)replicas, name, name);
	finding_fix_setf(a, "pools.%s.nodes=%d", ps->name, (int)(ps->nodes - nodes));
	for (size_t m = 0; a && m < n_members; m++) {
		const struct workload_spec *ws = &sc->workloads[members[m]];
		char list[1024] = "[";
		for (size_t i = 0; i < ws->n_tolerations; i++) {
			const struct toleration *t = &ws->tolerations[i];
			add_toleration(list, sizeof list, t->key, t->op == TOLERATION_EXISTS,
				       t->value, t->effect);
		}
		add_toleration(list, sizeof list, "gpuplan.io/pool", false, name,
			       EFFECT_NO_SCHEDULE);
		snprintf(list + strlen(list), sizeof list - strlen(list), "]");
		finding_fix_setf(a, "workloads.%s.node_selector={gpuplan.io/pool: %s}", ws->name,
				 name);
		finding_fix_setf(a, "workloads.%s.tolerations=%s", ws->name, list);
	}
}

void relax_sharing(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	relax_shared_pool(sc, r, c, f);
	relax_culling(sc, r, c, f);
	relax_replicas(sc, r, c, f);
	relax_partitions(sc, r, c, f);
}

/* --- narrower weights, inference settings ------------------------------------ */

/* Narrower weights for workload c->workload, or every workload with a model. */
void relax_quantization(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f)
{
	(void)r;
	static const enum quant qs[] = {QUANT_INT8, QUANT_INT4};
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (c->workload >= 0 && (size_t)c->workload != w)
			continue;
		for (size_t i = 0; ws->model && i < 2; i++) {
			if (footprint_quant_weight_bytes(qs[i]) >=
			    footprint_quant_weight_bytes((enum quant)ws->quantization))
				continue;
			finding_fix_setf(finding_fixf(f, "%s weights for %s",
						      footprint_quant_name(qs[i]), ws->name),
					 "workloads.%s.quantization=%s", ws->name,
					 footprint_quant_name(qs[i]));
		}
	}
}

/* On the exclusive pool c->pool: the widest format that fits two a GPU with
 * time-slicing x2, and the one that fits four with x4. */
void relax_quant_sharing(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f)
{
	(void)r;
	if (c->pool < 0 || sc->pools[c->pool].sharing.mode != SHARING_EXCLUSIVE)
		return;
	const struct pool_spec *ps = &sc->pools[c->pool];
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		for (int32_t k = 2; k <= 4 && hosts(ps, ws); k *= 2) {
			enum quant q;
			double vram, freed;
			if (!diagnose_quant_fit(ps, ws, k, &q, &vram, &freed))
				continue;
			struct finding_fix *a =
				finding_fixf(f, "%s weights for %s, time-slicing x%d on %s",
					     footprint_quant_name(q), ws->name, (int)k, ps->name);
			finding_fix_setf(a, "workloads.%s.quantization=%s", ws->name,
					 footprint_quant_name(q));
			finding_fix_setf(a, "pools.%s.sharing={mode: time-slicing, replicas: %d}",
					 ps->name, (int)k);
		}
	}
}

/* Service w, pinned by its gpu_spec, node selector or affinity, on the GPU
 * type of a pool its pin keeps it off whose GPUs idled enough all along to
 * hold its replicas (capacity less the base run's peak allocation) and
 * whose taints it tolerates: what a planner does when a Deployment carries
 * a pin from another cluster while GPUs already paid for sit idle.  The
 * type becomes its gpu_spec, in place of the selector and affinity that
 * kept it off (without them, the scheduler's scores could leave it where it
 * was).  No node is added. */
static void relax_idle_type(const struct scenario *sc, const struct results *r, size_t w,
			    struct finding *f)
{
	const struct workload_spec *ws = &sc->workloads[w];
	const struct inference_spec *is = ws->inference;
	double need = (double)is->replicas * is->tensor_parallel;
	bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden);
	diagnose_hidden_pools(sc, w, hidden);
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		double idle = results_or(r, ps->name, METRIC_CAPACITY_GPUS, 0) -
			      results_or(r, ps->name, METRIC_PEAK_ALLOCATED_GPUS, 0);
		bool typed = ws->n_gpu_spec && !scenario_gpu_spec_allows(ws, ps->gpu);
		if (!(typed || hidden[p]) || idle < need || !placement_pool_tolerated(ws, ps))
			continue;
		struct finding_fix *a = finding_fixf(f, "%s on pool %s's %s GPUs", ws->name,
						     ps->name, ps->gpu->name);
		finding_fix_setf(a, "workloads.%s.gpu_spec=[%s]", ws->name, ps->gpu->name);
		if (ws->n_node_selector)
			finding_fix_setf(a, "workloads.%s.node_selector={}", ws->name);
		if (ws->n_affinity)
			finding_fix_setf(a, "workloads.%s.affinity=[]", ws->name);
	}
	free(hidden);
}

/* Whether some pool's GPU type is one both workloads' gpu_spec allow. */
static bool share_a_type(const struct scenario *sc, const struct workload_spec *a,
			 const struct workload_spec *b)
{
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct gpu_type *g = sc->pools[p].gpu;
		if (scenario_gpu_spec_allows(a, g) && scenario_gpu_spec_allows(b, g))
			return true;
	}
	return false;
}

/* Service w (fixed replicas) short of replicas beside a service of the same
 * GPUs that meets its goal with three or more: one replica moved from that
 * one to w, on the GPUs it frees (two services on one node, one idling on
 * three replicas while the other misses on one).  The other keeps two. */
static void relax_moved_replica(const struct scenario *sc, const struct results *r, size_t w,
				struct finding *f)
{
	const struct workload_spec *ws = &sc->workloads[w];
	const struct inference_spec *is = ws->inference;
	for (size_t o = 0; is->max_replicas == is->replicas && o < sc->n_workloads; o++) {
		const struct workload_spec *os = &sc->workloads[o];
		const struct inference_spec *oi = os->inference;
		if (o == w || !oi || oi->max_replicas != oi->replicas || oi->replicas < 3 ||
		    oi->tensor_parallel != is->tensor_parallel || oi->disagg || oi->service ||
		    !results_holds(r, os->name, METRIC_GOAL_MET) || !share_a_type(sc, ws, os))
			continue;
		struct finding_fix *a =
			finding_fixf(f, "a replica of %s moved to %s", os->name, ws->name);
		finding_fix_setf(a, "workloads.%s.replicas=%d", os->name, (int)oi->replicas - 1);
		finding_fix_setf(a, "workloads.%s.replicas=%d", ws->name, (int)is->replicas + 1);
	}
}

/* Service w's settings, when it is an inference service that c is about
 * (c->workload, else any) and that missed its goal; else NULL. */
static const struct inference_spec *short_service(const struct scenario *sc,
						  const struct results *r,
						  const struct constraint *c, size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	if ((c->workload >= 0 && (size_t)c->workload != w) || !ws->inference ||
	    results_holds(r, ws->name, METRIC_GOAL_MET))
		return NULL;
	return ws->inference;
}

/* An inference service that missed its goal: max_batch raised to the
 * sequences its KV cache holds (diagnose_batch_fits), with
 * max_batched_tokens to match; and a low memory_fraction raised together
 * with int8 weights (vLLM's gpu_memory_utilization and a quantized
 * checkpoint). */
void relax_inference(const struct scenario *sc, const struct results *r, const struct constraint *c,
		     struct finding *f)
{
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		const struct inference_spec *is = short_service(sc, r, c, w);
		if (!is)
			continue;
		int64_t seqs = diagnose_batch_fits(sc, w);
		if (seqs > is->max_batch)
			diagnose_fix_max_batch(f, ws, seqs);
		if (ws->model && is->memory_fraction > 0 && is->memory_fraction < 0.9 &&
		    footprint_quant_weight_bytes(QUANT_INT8) <
			    footprint_quant_weight_bytes((enum quant)ws->quantization)) {
			struct finding_fix *a = finding_fixf(
				f, "memory_fraction 0.9 with int8 weights for %s", ws->name);
			finding_fix_setf(a, "workloads.%s.memory_fraction=0.9", ws->name);
			finding_fix_setf(a, "workloads.%s.quantization=int8", ws->name);
		}
	}
}

void relax_service(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		const struct inference_spec *is = short_service(sc, r, c, w);
		if (!is)
			continue;
		bool one_group = !is->disagg && !is->service; /* neither split nor routed */
		/* round-robin spreads requests, not work: a replica behind long
		 * outputs keeps getting its share (an L7 router by load evens it) */
		if (one_group && is->route == ROUTE_ROUND_ROBIN && is->max_replicas >= 2)
			finding_fix_setf(
				finding_fixf(f, "%s routed to the least loaded replica", ws->name),
				"workloads.%s.route=least-outstanding", ws->name);
		relax_idle_type(sc, r, w, f);
		if (one_group)
			relax_moved_replica(sc, r, w, f);
	}
}

void relax_vram(const struct scenario *sc, const struct results *r, const struct constraint *c,
		struct finding *f)
{
	relax_inference(sc, r, c, f);
	relax_quant_sharing(sc, r, c, f);
	relax_quantization(sc, r, c, f);
}

/* --- windows ------------------------------------------------------------------ */

/* The pool's windows as a --set list, window k from `from` to `to`. */
static void windows_text(struct gp_sbuf *b, const struct pool_spec *p, size_t k, int32_t from,
			 int32_t to)
{
	static const char *const days[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
	gp_sb_printf(b, "[");
	for (size_t i = 0; i < p->n_windows; i++) {
		const struct window *w = &p->windows[i];
		int32_t fr = i == k ? from : w->from, t = i == k ? to : w->to;
		gp_sb_printf(b, "%s{from: \"%02d:%02d\", to: \"%02d:%02d\"", i ? ", " : "",
			     (int)(fr / 3600), (int)(fr / 60 % 60), (int)(t / 3600),
			     (int)(t / 60 % 60));
		if (w->days != WINDOW_EVERY_DAY) {
			gp_sb_printf(b, ", days: [");
			for (int d = 0, n = 0; d < 7; d++)
				if (w->days & 1u << d)
					gp_sb_printf(b, "%s%s", n++ ? ", " : "", days[d]);
			gp_sb_printf(b, "]");
		}
		gp_sb_printf(b, "}");
	}
	gp_sb_printf(b, "]");
}

size_t relax_window_moves(int32_t len, int32_t need, bool shift, struct relax_window_move *out)
{
	struct relax_window_move all[RELAX_WINDOW_MOVES] = {{0, 3600, "closing 1h later"},
							    {0, 7200, "closing 2h later"}};
	size_t n = 2;
	if (need - len > 7200) {
		all[n] = (struct relax_window_move){0, need - len, ""};
		int32_t h = (need - len) / 3600, m = (need - len) / 60 % 60;
		snprintf(all[n++].how, sizeof all[0].how,
			 m ? "closing %dh%02dm later" : "closing %dh later", h, m);
	}
	all[n++] = (struct relax_window_move){-3600, 0, "opening 1h earlier"};
	if (shift)
		all[n++] = (struct relax_window_move){3600, 3600, "shifted 1h later"};
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (len + all[i].close - all[i].open < 86400)
			out[k++] = all[i];
	return k;
}

int32_t relax_window_need(const struct scenario *sc, const struct results *r, const bool *waiting,
			  const bool *usable)
{
	double demand = 0, job = 0, gpus = 0;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (waiting[w]) {
			const struct workload_spec *ws = &sc->workloads[w];
			demand += results_or(r, ws->name, METRIC_PEAK_DEMAND_GPUS, 0);
			job = fmax(job, scenario_dist_mean(&ws->duration));
		}
	for (size_t p = 0; p < sc->n_pools; p++)
		if (usable[p])
			gpus += (double)sc->pools[p].nodes * sc->pools[p].gpus_per_node;
	if (!(demand > 0) || !(gpus > 0) || !(job > 0))
		return 0;
	double need = ceil(demand / gpus) * job;
	return need < 86400 ? (int32_t)(ceil(need / 1800) * 1800) : 86400;
}

/* The workloads that missed their goals in r and may use pool p, into
 * waiting; whether there is one. */
static bool waiting_on(const struct scenario *sc, const struct results *r, size_t p, bool *waiting)
{
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable), any = false;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		waiting[w] = false;
		if (results_holds(r, sc->workloads[w].name, METRIC_GOAL_MET))
			continue;
		diagnose_usable_pools(sc, w, usable);
		any |= waiting[w] = usable[p];
	}
	free(usable);
	return any;
}

/* A pool with windows that a workload missing its goal may use (c->pool:
 * that one whatever its goal): each window widened (1 h and 2 h later to
 * close, later to the length its waiting work needs, 1 h earlier to open)
 * and shifted 1 h later, as long as it stays shorter than a day.  What
 * people do when a batch window is too short, before buying a node. */
void relax_windows(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	bool *waiting = gp_xcalloc(sc->n_workloads + 1, sizeof *waiting);
	bool *only = gp_xcalloc(sc->n_pools + 1, sizeof *only);
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		if (c->pool >= 0 ? (size_t)c->pool != p
				 : results_holds(r, ps->name, METRIC_GOAL_MET))
			continue;
		int32_t need = 0;
		if (waiting_on(sc, r, p, waiting)) {
			only[p] = true;
			need = relax_window_need(sc, r, waiting, only);
			only[p] = false;
		}
		for (size_t k = 0; k < ps->n_windows && k < 2; k++) {
			const struct window *w = &ps->windows[k];
			int32_t len = (w->to - w->from + 86400) % 86400;
			struct relax_window_move moves[RELAX_WINDOW_MOVES];
			size_t n = relax_window_moves(len, need, true, moves);
			for (size_t m = 0; m < n; m++) {
				int32_t from = (w->from + moves[m].open + 86400) % 86400;
				int32_t to = (w->to + moves[m].close + 86400) % 86400;
				struct gp_sbuf b = {0};
				windows_text(&b, ps, k, from, to);
				finding_fix_setf(
					finding_fixf(f, "window %02d:%02d-%02d:%02d of %s %s",
						     (int)(w->from / 3600),
						     (int)(w->from / 60 % 60), (int)(w->to / 3600),
						     (int)(w->to / 60 % 60), ps->name,
						     moves[m].how),
					"pools.%s.windows=%s", ps->name, b.s);
				free(b.s);
			}
		}
	}
	free(waiting);
	free(only);
}

/* --- queues ------------------------------------------------------------------ */

/* The lender c->queue, in a cohort, keeping GPUs to itself (a lending limit
 * under its quota): lends them all (Kueue's lendingLimit). */
void relax_lending(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	(void)r;
	if (c->queue < 0)
		return;
	const struct queue_spec *qs = &sc->queues[c->queue];
	const struct quota_entry *e = diagnose_gpu_quota(qs);
	if (!e || !scenario_root_cohort(sc, (size_t)c->queue) || !(e->lending_limit < e->nominal))
		return;
	struct gp_sbuf map = {0};
	gp_sb_printf(&map, "{");
	for (size_t i = 0, n = 0; i < qs->n_quota; i++) {
		const struct quota_entry *x = &qs->quota[i];
		double v = x == e ? x->nominal : x->lending_limit;
		if (isinf(v))
			continue;
		gp_sb_printf(&map, "%s\"%s\": ", n++ ? ", " : "", x->resource);
		if (!strcmp(x->resource, "memory"))
			gp_sb_printf(&map, "%.0fMiB", v / (1024.0 * 1024));
		else
			gp_sb_printf(&map, "%g", v);
	}
	gp_sb_printf(&map, "}");
	finding_fix_setf(finding_fixf(f, "lending limit of %s at %g GPUs", qs->name, e->nominal),
			 "queues.%s.lending_limit=%s", qs->name, map.s);
	free(map.s);
}

/* The GPUs a job of ws asks for: 1 for a share of one. */
static double job_gpus(const struct workload_spec *ws)
{
	return ws->request == REQUEST_GPUS ? (double)ws->gpus * ws->pods : 1;
}

/* GPUs by which queue c->queue's quota grows: those idle while c->workload
 * waited (its busiest window's free GPUs are not known here: at least one
 * job's GPUs, at least one).  With no workload named, the smallest job of
 * the queue's: less admits none of them. */
static double more_gpus(const struct scenario *sc, const struct results *r,
			const struct constraint *c)
{
	(void)r;
	double need = c->workload >= 0 ? job_gpus(&sc->workloads[c->workload]) : HUGE_VAL;
	for (size_t w = 0; c->workload < 0 && w < sc->n_workloads; w++)
		if (sc->workloads[w].queue == c->queue)
			need = fmin(need, job_gpus(&sc->workloads[w]));
	return need < 1 || isinf(need) ? 1 : ceil(need - 1e-9);
}

void relax_quota(const struct scenario *sc, const struct results *r, const struct constraint *c,
		 struct finding *f)
{
	if (c->queue < 0)
		return;
	const struct queue_spec *q = &sc->queues[c->queue];
	const struct quota_entry *e = diagnose_gpu_quota(q);
	if (!e)
		return;
	double to = e->nominal + more_gpus(sc, r, c);
	struct gp_sbuf map = {0};
	diagnose_quota_map(&map, q, "nvidia.com/gpu", to, false);
	finding_fix_setf(finding_fixf(f, "quota of %s at %g GPUs", q->name, to),
			 "queues.%s.quota=%s", q->name, map.s);
	free(map.s);
}

void relax_borrowing(const struct scenario *sc, const struct results *r, const struct constraint *c,
		     struct finding *f)
{
	if (c->queue < 0)
		return;
	const struct queue_spec *q = &sc->queues[c->queue];
	const struct quota_entry *e = diagnose_gpu_quota(q);
	if (!e || !q->cohort || isinf(e->borrowing_limit))
		return;
	double to = e->borrowing_limit + more_gpus(sc, r, c);
	struct gp_sbuf lim = {0};
	diagnose_quota_map(&lim, q, "nvidia.com/gpu", to, true);
	finding_fix_setf(finding_fixf(f, "borrowing limit of %s at %g GPUs", q->name, to),
			 "queues.%s.borrowing_limit=%s", q->name, lim.s);
	free(lim.s);
}

void relax_strategy(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f)
{
	(void)r;
	if (c->queue < 0 || sc->queues[c->queue].strategy != STRATEGY_STRICT_FIFO)
		return;
	const struct queue_spec *q = &sc->queues[c->queue];
	finding_fix_setf(finding_fixf(f, "BestEffortFIFO for %s", q->name),
			 "queues.%s.strategy=BestEffortFIFO", q->name);
}

/* --- packing ------------------------------------------------------------------ */

void relax_fragmentation(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f)
{
	(void)r, (void)c;
	const struct scheduler_spec *sch = &sc->scheduler;
	bool packs = sch->scoring.type == SCORING_MOST_ALLOCATED && sch->scoring.weight[SCORE_GPU];
	static const enum gpu_policy packers[] = {GPU_POLICY_BEST_FIT, GPU_POLICY_FGD,
						  GPU_POLICY_GPU_PACKING};
	for (size_t i = 0; i < sizeof packers / sizeof packers[0]; i++)
		if (packers[i] != sch->gpu_policy)
			finding_fix_setf(
				finding_fixf(f, "gpu_policy %s", gpupolicy_names[packers[i]]),
				"scheduler.gpu_policy=%s", gpupolicy_names[packers[i]]);
	if (!packs)
		finding_fix_setf(finding_fixf(f, "scoring MostAllocated"),
				 "scheduler.scoring=MostAllocated");
}

/* --- rules -------------------------------------------------------------------- */

static const char *effect_name(int effect)
{
	static const char *const names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
	return effect >= 0 && effect < 3 ? names[effect] : NULL;
}

/* Appends one toleration as YAML flow to buf. */
static void add_toleration(char *buf, size_t len, const char *key, bool exists, const char *value,
			   int effect)
{
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, "%s{key: \"%s\", operator: %s", n > 1 ? ", " : "", key,
		 exists ? "Exists" : "Equal");
	if (!exists) {
		n = strlen(buf);
		snprintf(buf + n, len - n, ", value: \"%s\"", value);
	}
	n = strlen(buf);
	if (effect_name(effect))
		snprintf(buf + n, len - n, ", effect: %s}", effect_name(effect));
	else
		snprintf(buf + n, len - n, "}");
}

/* Workload w tolerating the NoSchedule and NoExecute taints of the pools
 * hidden[], besides what it tolerates already. */
static void tolerations(struct finding *f, const struct scenario *sc, size_t w, const bool *hidden)
{
	const struct workload_spec *ws = &sc->workloads[w];
	char list[1024] = "[", names[512] = "";
	for (size_t i = 0; i < ws->n_tolerations; i++) {
		const struct toleration *t = &ws->tolerations[i];
		add_toleration(list, sizeof list, t->key, t->op == TOLERATION_EXISTS, t->value,
			       t->effect);
	}
	size_t before = strlen(list);
	for (size_t p = 0; p < sc->n_pools; p++)
		for (size_t i = 0; hidden[p] && i < sc->pools[p].n_taints; i++) {
			const struct taint *t = &sc->pools[p].taints[i];
			if (t->effect == EFFECT_PREFER_NO_SCHEDULE || strstr(names, t->key) ||
			    placement_tolerated(ws, t) ||           /* nothing to add */
			    !strcmp(t->key, SCENARIO_CORDON_TAINT)) /* never onto a cordoned node */
				continue;
			add_toleration(list, sizeof list, t->key, false, t->value, (int)t->effect);
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s=%s",
				 names[0] ? ", " : "", t->key, t->value);
		}
	if (strlen(list) == before)
		return;
	snprintf(list + strlen(list), sizeof list - strlen(list), "]");
	finding_fix_setf(finding_fixf(f, "%s tolerating %s", ws->name, names),
			 "workloads.%s.tolerations=%s", ws->name, list);
}

/* The taints of the pools c->workload's rules keep it off, tolerated. */
void relax_taint(const struct scenario *sc, const struct results *r, const struct constraint *c,
		 struct finding *f)
{
	(void)r;
	if (c->workload < 0)
		return;
	bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden);
	diagnose_hidden_pools(sc, (size_t)c->workload, hidden);
	tolerations(f, sc, (size_t)c->workload, hidden);
	free(hidden);
}

/* Whether pool p's GPUs hold a pod of w: its resource and VRAM per GPU. */
static bool fits(const struct pool_spec *p, const struct workload_spec *w)
{
	return hosts(p, w) && !(w->vram_bytes > p->gpu->memory_bytes);
}

/* A node_selector value that no pool carries (a typo, another GPU's product)
 * corrected to the closest value of its key on a pool whose GPUs hold the
 * pod, VRAM included; with that pool's taints tolerated.  What people do,
 * where dropping the selector would let the pod land on GPUs too small. */
void relax_selector_fix(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f)
{
	(void)r;
	if (c->workload < 0)
		return;
	size_t w = (size_t)c->workload;
	const struct workload_spec *ws = &sc->workloads[w];
	const char **values = gp_xcalloc(sc->n_pools + 1, sizeof *values);
	size_t *pools = gp_xcalloc(sc->n_pools + 1, sizeof *pools);
	for (size_t i = 0; i < ws->n_node_selector; i++) {
		const struct kv *sel = &ws->node_selector[i];
		size_t k = 0;
		bool found = false;
		for (size_t p = 0; p < sc->n_pools; p++) {
			const char *v = scenario_pool_label(&sc->pools[p], sel->key);
			found |= v && !strcmp(v, sel->value);
			if (v && fits(&sc->pools[p], ws))
				values[k] = v, pools[k++] = p;
		}
		const char *near = found || !k ? NULL : ytree_closest(sel->value, values, k);
		if (!near && !found && k)
			near = values[0];
		if (!near)
			continue;
		size_t at = 0;
		while (strcmp(values[at], near))
			at++;
		struct gp_sbuf map = {0};
		gp_sb_printf(&map, "{");
		for (size_t j = 0; j < ws->n_node_selector; j++)
			gp_sb_printf(&map, "%s\"%s\": \"%s\"", j ? ", " : "",
				     ws->node_selector[j].key,
				     j == i ? near : ws->node_selector[j].value);
		gp_sb_printf(&map, "}");
		struct finding_fix *a =
			finding_fixf(f, "%s with node_selector %s=%s", ws->name, sel->key, near);
		finding_fix_setf(a, "workloads.%s.node_selector=%s", ws->name, map.s);
		free(map.s);
		bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden);
		hidden[pools[at]] = true;
		struct finding tol = {0};
		tolerations(&tol, sc, w, hidden);
		if (a && tol.n_fixes)
			finding_fix_add(a, override_copy(&tol.fixes[0].sets[0]));
		finding_free(&tol);
		free(hidden);
	}
	free(values);
	free(pools);
}

void relax_selector_drop(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f)
{
	(void)r;
	if (c->workload >= 0 && sc->workloads[c->workload].n_node_selector)
		finding_fix_setf(finding_fixf(f, "%s without its node_selector",
					      sc->workloads[c->workload].name),
				 "workloads.%s.node_selector={}", sc->workloads[c->workload].name);
}

void relax_node_selector(const struct scenario *sc, const struct results *r,
			 const struct constraint *c, struct finding *f)
{
	relax_selector_fix(sc, r, c, f);
	relax_selector_drop(sc, r, c, f);
}

void relax_affinity(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f)
{
	(void)r;
	if (c->workload >= 0 && sc->workloads[c->workload].n_affinity)
		finding_fix_setf(finding_fixf(f, "%s without its node affinity",
					      sc->workloads[c->workload].name),
				 "workloads.%s.affinity=[]", sc->workloads[c->workload].name);
}

void relax_gpu_spec(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f)
{
	(void)r;
	if (c->workload >= 0 && sc->workloads[c->workload].n_gpu_spec)
		finding_fix_setf(
			finding_fixf(f, "%s on any GPU type", sc->workloads[c->workload].name),
			"workloads.%s.gpu_spec=[]", sc->workloads[c->workload].name);
}
