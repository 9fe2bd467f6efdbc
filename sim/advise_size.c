/*
 * advise_size.c - an inference service's size and GPU type (advise.h).
 *
 * A service with fixed replicas and a TTFT bound, alone in its pool (no
 * other workload may use the pool, and it may use no other; exclusive GPUs,
 * no autoscaler, spot or windows), is sized like a platform engineer would
 * (one that shares its pool and misses its goal, on its own type only, the
 * other work keeping the nodes it fills today):
 *   1. the first cut (firstcut.h) on every catalog GPU type, with its TP
 *      degree, GPUs, $/h (the pool's price for its own type, the catalog's
 *      reference price for the others), $ per million tokens and tokens per
 *      joule: microseconds a type;
 *   2. the promising types simulated: its own (and, where its KV cache binds,
 *      its own at twice the TP degree: wider_tp), and at most SIZE_TYPES others
 *      whose first cut costs at most SIZE_MARGIN more per hour than its own
 *      type's, cheapest first.  Each is a minimum-replica search
 *      (search_run) of the service's goal (W.goal_met >= 1) started from
 *      its first cut, so only the boundary is simulated, with the pool's
 *      nodes set to hold the replicas probed (search_spec.with_key): its
 *      answer is the full bisection's whenever the goal is monotone in the
 *      replicas, and its answer run bills the right number of nodes;
 *   3. each answer a row of the ranking: the service right-sized on its own
 *      type, or moved to another (the pool's gpu, price and nodes, the
 *      replicas and their TP degree).  More hardware means a bill per hour
 *      above the pool's today (more nodes on its own type), so a cheaper
 *      fleet that meets the goal ranks with the other alternatives by its
 *      bill, and a dearer one after every alternative that adds none.
 */
#include "advise_int.h"

#include "gpuplan/catalog_specs.h"
#include "gpuplan/diagnose.h"
#include "gpuplan/firstcut.h"
#include "gpuplan/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_TYPES  3    /* other GPU types simulated, at most */
#define SIZE_MARGIN 0.25 /* their first cut's $/h over the service's own type's, at most */
#define SIZE_SETS   5    /* overrides of a type: gpu, price, gpu_spec, gpus, tensor_parallel */

/* The one pool that serves workload w, or -1; *shared: other workloads
 * may use it too. */
static int serving_pool(const struct scenario *sc, size_t w, bool *shared)
{
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	int p = -1;
	diagnose_usable_pools(sc, w, usable);
	for (size_t i = 0; i < sc->n_pools; i++)
		if (usable[i])
			p = p < 0 ? (int)i : -2;
	*shared = false;
	for (size_t k = 0; k < sc->n_workloads && p >= 0 && !*shared; k++) {
		if (k == w)
			continue;
		diagnose_usable_pools(sc, k, usable);
		*shared = usable[p];
	}
	free(usable);
	if (p < 0)
		return -1;
	const struct pool_spec *ps = &sc->pools[p];
	bool plain = !ps->autoscale.on && !ps->spot.on && !ps->n_windows && !ps->gpu_own &&
		     ps->sharing.mode == SHARING_EXCLUSIVE && ps->gpus_per_node >= 1 &&
		     !ps->price.committed;
	return plain ? p : -1;
}

/* The price of a GPU-hour of type g in pool ps: the pool's for its own type,
 * else the catalog's reference price. */
static double price_of(const struct pool_spec *ps, const struct gpu_type *g)
{
	if (g == ps->gpu && ps->price.gpu_hour > 0)
		return ps->price.gpu_hour;
	const struct gpu_specs *x = catalog_gpu_specs(g);
	return x ? x->usd_per_hour : 0;
}

/* The first cut of workload w on GPU type g at TP degree tp (0: the
 * smallest that fits) into e; false when the first cut does not model the
 * service. */
static bool first_cut(const struct scenario *sc, size_t w, const struct pool_spec *ps,
		      const struct gpu_type *g, int tp, struct advise_gpu *e)
{
	const struct workload_spec *ws = &sc->workloads[w];
	const struct slo_spec *slo = &ws->inference->slo;
	double pct = slo->percentile > 0 ? slo->percentile : 99;
	struct firstcut_service s;
	if (!search_service(sc, ws, g, sim_seconds(slo->ttft), sim_seconds(slo->tpot), pct, &s) ||
	    !(s.ttft_slo_s > 0))
		return false;
	s.tp = tp;
	s.usd_per_gpu_hour = price_of(ps, g);
	struct firstcut f;
	firstcut_size(&s, &f);
	*e = (struct advise_gpu){
		.workload = (int32_t)w,
		.gpu = g,
		.verdict = (int)f.verdict,
		.tp = f.tp,
		.replicas = f.replicas,
		.gpus = f.gpus,
		.usd_hour = f.usd_per_hour,
		.usd_mtok = f.usd_per_mtok,
		.tokens_per_joule = f.tokens_per_joule,
	};
	snprintf(e->name, sizeof e->name, "%s", ws->name);
	return true;
}

/* Appends the first cut of workload w on every catalog GPU type to out (its
 * own at its TP degree); false (nothing appended) when the first cut does
 * not model the service. */
static bool first_cuts(const struct scenario *sc, size_t w, const struct pool_spec *ps,
		       struct advice *out)
{
	size_t n = catalog_gpu_count();
	out->gpus = gp_xrealloc(out->gpus, (out->n_gpus + n + 1) * sizeof *out->gpus);
	for (size_t i = 0; i < n; i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		int tp = g == ps->gpu ? sc->workloads[w].inference->tensor_parallel : 0;
		if (!first_cut(sc, w, ps, g, tp, &out->gpus[out->n_gpus]))
			return false;
		out->n_gpus++;
	}
	return true;
}

/* A service whose KV cache binds with the weights filling most of its GPUs
 * (a 70B model on two A100s): twice the TP degree on its own type, where a
 * node holds it, gives each replica the memory of twice the GPUs for less
 * than twice the weights' share.  Appends its first cut to out; the entry,
 * or NULL. */
static struct advise_gpu *wider_tp(const struct scenario *sc, const struct results *r, size_t w,
				   const struct pool_spec *ps, struct advice *out)
{
	const char *name = sc->workloads[w].name;
	int tp = 2 * sc->workloads[w].inference->tensor_parallel;
	if (!diagnose_kv_preempts(results_or(r, name, METRIC_PREEMPTIONS, 0),
				  results_or(r, name, METRIC_REQUESTS_SUBMITTED, 0)) ||
	    tp > ps->gpus_per_node)
		return NULL;
	struct advise_gpu *e = &out->gpus[out->n_gpus];
	if (!first_cut(sc, w, ps, ps->gpu, tp, e) || e->verdict != FIRSTCUT_OK)
		return NULL;
	out->n_gpus++;
	return e;
}

static void count_probe(void *ctx, const struct search_probe *p)
{
	(void)p;
	(*(int32_t *)ctx)++;
}

/* A probe's run (search_spec.on_run): its row's figures, and the service's
 * cost per million tokens and tokens per joule. */
static void size_probe_run(void *ctx, int64_t run_id, const struct scenario *sc,
			   const struct results *r)
{
	struct advise_probes *p = ctx;
	advise_probe_run(ctx, run_id, sc, r);
	p->v[p->n - 1].usd_mtok = results_or(r, p->service, METRIC_COST_PER_MILLION_TOKENS, NAN);
	p->v[p->n - 1].tokens_per_joule = results_or(r, p->service, METRIC_TOKENS_PER_JOULE, NAN);
}

/* An override of the key fmt makes (a pool's or a workload's) to value. */
static struct override set_of(const char *value, const char *fmt, const char *name)
{
	char *key = gp_strf(fmt, name);
	struct override o = override_make(key, value);
	free(key);
	return o;
}

/* The overrides that put service w on e's GPU type in pool ps: into sets
 * (SIZE_SETS of them, owned by the caller); returns how many. */
static size_t type_sets(const struct scenario *sc, const struct pool_spec *ps,
			const struct advise_gpu *e, struct override sets[SIZE_SETS])
{
	const struct workload_spec *ws = &sc->workloads[e->workload];
	size_t n = 0;
	char v[64];
	if (e->gpu != ps->gpu) {
		sets[n++] = set_of(e->gpu->name, "pools.%s.gpu", ps->name);
		if (ps->price.gpu_hour > 0) { /* priced: the new type at its reference price */
			snprintf(v, sizeof v, "%g", price_of(ps, e->gpu));
			sets[n++] = set_of(v, "pools.%s.price.gpu_hour", ps->name);
		}
		if (ws->n_gpu_spec) { /* a service pinned to its type follows it */
			snprintf(v, sizeof v, "[%s]", e->gpu->name);
			sets[n++] = set_of(v, "workloads.%s.gpu_spec", ws->name);
		}
	}
	if (e->tp != ws->inference->tensor_parallel) {
		snprintf(v, sizeof v, "%d", e->tp);
		sets[n++] = set_of(v, "workloads.%s.gpus", ws->name);
		sets[n++] = set_of(v, "workloads.%s.tensor_parallel", ws->name);
	}
	return n;
}

/* Whether two GPU types are one vendor's: their product labels start
 * alike ("NVIDIA-", "AMD-"). */
static bool same_vendor(const struct gpu_type *a, const struct gpu_type *b)
{
	size_t n = strcspn(a->product, "-");
	return !strncmp(a->product, b->product, n) && b->product[n] == a->product[n];
}

/* The row of search_type's answer ans for e's service: its figures from the
 * answer run's results (probes), its overrides the type's (extra[0 .. k)),
 * the replicas (key) and the nodes that hold them (nodes_key). */
static void add_type_row(const struct scenario *sc, const struct pool_spec *ps,
			 struct advise_gpu *e, struct plan *pl, const struct search_answer *ans,
			 const struct advise_probes *probes, const struct override *extra, size_t k,
			 const char *key, const char *nodes_key, int32_t others)
{
	const struct workload_spec *ws = &sc->workloads[e->workload];
	int32_t per_node = ps->gpus_per_node / e->tp;
	int32_t n = (int32_t)ans->number, nodes = others + (n + per_node - 1) / per_node;
	e->sim_replicas = n;
	e->sim_gpus = n * e->tp;
	e->run_id = ans->run_id;
	const struct advise_probe *x = advise_probe_of(probes, ans->run_id);
	e->sim_usd_mtok = x ? x->usd_mtok : NAN;
	e->sim_tokens_per_joule = x ? x->tokens_per_joule : NAN;
	bool own = e->gpu == ps->gpu, own_tp = e->tp == ws->inference->tensor_parallel;
	if (own && own_tp && n == ws->inference->replicas && nodes == ps->nodes)
		return; /* the base itself */
	char tp[32] = "";
	if (!own_tp) /* its own type at another TP degree */
		snprintf(tp, sizeof tp, " of TP %d", e->tp);
	struct advise_row *a =
		own ? advise_plan_add(
			      pl,
			      "%s at %d replica%s%s, pool %s at %d node%s (fewest meeting its goal)",
			      ws->name, n, n == 1 ? "" : "s", tp, ps->name, nodes,
			      nodes == 1 ? "" : "s")
		    : advise_plan_add(
			      pl,
			      "%s on %s: %d replica%s, pool %s at %d node%s (fewest meeting its goal)",
			      ws->name, e->gpu->name, n, n == 1 ? "" : "s", ps->name, nodes,
			      nodes == 1 ? "" : "s");
	if (!a)
		return;
	for (size_t i = 0; i < k; i++)
		advise_add(a, override_copy(&extra[i]));
	advise_add(a, override_makef(key, "%d", n));
	advise_add(a, override_makef(nodes_key, "%d", nodes));
	a->run_id = ans->run_id;
	double now = ps->nodes * ps->gpus_per_node * price_of(ps, ps->gpu),
	       then = nodes * ps->gpus_per_node * price_of(ps, e->gpu);
	a->hardware = own ? nodes > ps->nodes : then > now * (1 + 1e-9);
	/* another vendor's GPUs need its device plugin and software stack, not
	 * NVIDIA's (AMD's for an MI300X): ranked with the components beyond stock */
	a->plugin = !same_vendor(ps->gpu, e->gpu);
	advise_row_figures(a, probes);
}

/* The nodes of pool ps that other work keeps when service ws shares it:
 * the GPUs its replicas do not hold today, in whole nodes (a node's GPUs
 * beside two replicas are evals' as much as a node of their own), which the
 * service's size leaves as they are.  0 when ws has it alone. */
static int32_t others_nodes(const struct pool_spec *ps, const struct workload_spec *ws, bool shared)
{
	int32_t gpus = ps->nodes * ps->gpus_per_node -
		       ws->inference->replicas * ws->inference->tensor_parallel;
	return shared && gpus > 0 ? (gpus + ps->gpus_per_node - 1) / ps->gpus_per_node : 0;
}

/* Searches the fewest replicas of e's service on e's GPU type that meet its
 * goal, from the first cut; fills e's simulated figures and adds its row.
 * In a pool it shares, the probes keep the nodes other work holds. */
static int search_type(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		       const struct pool_spec *ps, bool shared, struct advise_gpu *e,
		       struct plan *pl, struct gp_err *err)
{
	const struct workload_spec *ws = &sc->workloads[e->workload];
	struct override extra[SIZE_SETS];
	size_t k = type_sets(sc, ps, e, extra);
	char *key = gp_strf("workloads.%s.replicas", ws->name);
	char *nodes_key = gp_strf("pools.%s.nodes", ps->name);
	if (advise_sets_kept(sp, extra, k) || advise_keeps(sp, key) ||
	    advise_keeps(sp, nodes_key)) {
		for (size_t i = 0; i < k; i++) /* --keep keeps what the search would vary */
			override_free(&extra[i]);
		free(key);
		free(nodes_key);
		return GP_OK;
	}
	struct advise_probes probes = {.service = ws->name};
	int32_t per_node = ps->gpus_per_node / e->tp;
	int32_t others = others_nodes(ps, ws, shared);
	struct search_spec s = {.scenario = sp->scenario,
				.sets = sp->sets,
				.n_sets = sp->n_sets,
				.overrides = extra,
				.n_overrides = k,
				.key = key,
				.integer = true,
				.seeds = 1,
				.start = e->replicas,
				.with_key = nodes_key,
				.with_per = per_node,
				.with_base = others,
				.on_run = size_probe_run,
				.run_ctx = &probes,
				.jobs = sp->jobs};
	/* A service run on two replicas or more keeps two: one replica is no
	 * redundancy (a node lost, a rollout, and it serves nothing). */
	s.lo.number = ws->inference->replicas >= 2 ? 2 : 1;
	s.hi.number = 4.0 * e->replicas + 4;
	advise_goal_condition(&s.until, ws->name);
	struct search_answer ans = {0};
	int rc = search_run(&s, st, count_probe, &e->probes, &ans, err);
	e->searched = true;
	if (rc == GP_EINPUT) /* the type cannot be expressed (a label, a bound): no row */
		rc = GP_OK;
	else if (!rc && ans.found)
		add_type_row(sc, ps, e, pl, &ans, &probes, extra, k, key, nodes_key, others);
	advise_probes_free(&probes);
	for (size_t i = 0; i < k; i++)
		override_free(&extra[i]);
	free(key);
	free(nodes_key);
	return rc;
}

static int by_usd_hour(const void *x, const void *y)
{
	const struct advise_gpu *a = *(struct advise_gpu *const *)x,
				*b = *(struct advise_gpu *const *)y;
	return (a->usd_hour > b->usd_hour) - (a->usd_hour < b->usd_hour);
}

/* The types of out->gpus[from ..] to simulate: the service's own (when its
 * first cut sizes it) and the promising others, cheapest first; its own
 * alone in a pool it shares (another type would move the other work too).
 * Returns how many went into pick. */
static size_t promising(struct advice *out, size_t from, const struct pool_spec *ps, bool shared,
			struct advise_gpu **pick)
{
	struct advise_gpu *own = NULL;
	for (size_t i = from; i < out->n_gpus; i++)
		if (out->gpus[i].gpu == ps->gpu && out->gpus[i].verdict == FIRSTCUT_OK)
			own = &out->gpus[i];
	double limit = own ? own->usd_hour * (1 + SIZE_MARGIN) : INFINITY;
	size_t n = 0;
	for (size_t i = from; i < out->n_gpus; i++) {
		struct advise_gpu *e = &out->gpus[i];
		if (e != own && !shared && e->verdict == FIRSTCUT_OK &&
		    e->tp <= ps->gpus_per_node && e->usd_hour <= limit)
			pick[n++] = e;
	}
	qsort(pick, n, sizeof *pick, by_usd_hour);
	if (n > SIZE_TYPES)
		n = SIZE_TYPES;
	if (own) { /* its own type first */
		memmove(pick + 1, pick, n * sizeof *pick);
		pick[0] = own;
		n++;
	}
	return n;
}

/* Whether a finding other than capacity is about workload w: its server's
 * settings, its memory or its placement bind it, and a size measured with
 * them would measure them; their fixes come first.  A full KV cache at a
 * high memory_fraction is not: its fix, the cache's format, is an option
 * beside the size, as narrower weights are.  Nor is a rule that keeps the
 * service on its pool: the size search measures that pool on each type, the
 * pin moved with the type, an option after the rule's fixes (hardware
 * last) for where moving the service is not enough. */
static bool misconfigured(const struct results *r, size_t w)
{
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct finding *fd = &r->findings[i];
		if ((fd->kind == KIND_KV_CACHE && !(fd->fig.kv.target > 0)) ||
		    fd->kind == KIND_RULES)
			continue;
		bool about = fd->workload == (int32_t)w;
		for (size_t m = 0; m < fd->n_members; m++)
			about |= fd->members[m] == (int32_t)w;
		if (about && fd->step != FINDING_CAPACITY)
			return true;
	}
	return false;
}

int advise_size_services(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
			 const struct results *r, struct plan *pl, struct advice *out,
			 struct gp_err *err)
{
	int rc = GP_OK;
	for (size_t w = 0; w < sc->n_workloads && !rc; w++) {
		const struct inference_spec *in = sc->workloads[w].inference;
		/* a routed group serves a share of its service's stream: not sized alone */
		if (!in || in->service || in->target_queue > 0 || !(in->slo.ttft > 0) ||
		    in->vram_given || misconfigured(r, w))
			continue;
		bool shared;
		int p = serving_pool(sc, w, &shared);
		/* fewer replicas in a pool it shares free GPUs but no node */
		if (shared && results_holds(r, sc->workloads[w].name, METRIC_GOAL_MET))
			continue;
		size_t from = out->n_gpus;
		if (p < 0 || !first_cuts(sc, w, &sc->pools[p], out)) {
			out->n_gpus = from;
			continue;
		}
		struct advise_gpu **pick = gp_xcalloc(out->n_gpus - from + 1, sizeof *pick);
		size_t n = promising(out, from, &sc->pools[p], shared, pick);
		struct advise_gpu *wider = wider_tp(sc, r, w, &sc->pools[p], out);
		if (wider) { /* right after its own type at its own degree */
			size_t at = n && pick[0]->gpu == sc->pools[p].gpu;
			memmove(pick + at + 1, pick + at, (n - at) * sizeof *pick);
			pick[at] = wider;
			n++;
		}
		for (size_t i = 0; i < n && !rc; i++)
			rc = search_type(sp, st, sc, &sc->pools[p], shared, pick[i], pl, err);
		free(pick);
	}
	return rc;
}

/* "fits no TP up to 8" and the like, for a type the first cut cannot size. */
static const char *verdict_text(int v)
{
	switch ((enum firstcut_verdict)v) {
	case FIRSTCUT_NO_FIT: return "the model and a typical request fit no TP degree up to 8";
	case FIRSTCUT_TPOT: return "one sequence alone decodes slower than the TPOT bound";
	case FIRSTCUT_TAIL_PROMPT: return "the tail prompt's prefill alone exceeds the TTFT bound";
	case FIRSTCUT_OK: break;
	}
	return "";
}

void advise_size_write(FILE *f, const struct advice *a)
{
	for (size_t i = 0; i < a->n_gpus; i++) {
		const struct advise_gpu *e = &a->gpus[i];
		if (!i || e->workload != a->gpus[i - 1].workload)
			fprintf(f,
				"\nGPU types for %s: the first cut on each (an estimate: roofline, "
				"tail prefill, M/G/c wait; $/h at the pool's price for its own type, "
				"the catalog's reference price for the others), and the fewest "
				"replicas meeting its goal by simulation where searched:\n"
				"%-11s %2s %8s %4s %8s %7s %8s  %9s %4s %7s %8s %6s\n",
				e->name, "gpu", "tp", "replicas", "gpus", "$/h", "$/Mtok",
				"tokens/J", "simulated", "gpus", "$/Mtok", "tokens/J", "probes");
		if (e->verdict != FIRSTCUT_OK) {
			fprintf(f, "%-11s %s\n", e->gpu->name, verdict_text(e->verdict));
			continue;
		}
		fprintf(f, "%-11s %2d %8d %4d %8.2f %7.3f %8.2f", e->gpu->name, e->tp, e->replicas,
			e->gpus, e->usd_hour, e->usd_mtok, e->tokens_per_joule);
		if (!e->searched)
			fprintf(f, "  %9s\n", "-");
		else if (!e->sim_replicas)
			fprintf(f, "  %9s %4s %7s %8s %6d\n", "none", "-", "-", "-", e->probes);
		else
			fprintf(f, "  %9d %4d %7.3f %8.2f %6d\n", e->sim_replicas, e->sim_gpus,
				e->sim_usd_mtok, e->sim_tokens_per_joule, e->probes);
	}
}
