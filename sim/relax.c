/*
 * relax.c - the table of what binds and how it is relaxed (see relax.h):
 * one row per kind of constraint, its key with names filled in and its
 * current value as scenario text.
 */
#include "gpuplan/relax.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/gpupolicy.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The rows added with the table have their functions in relax_rows.c;
 * capacity has none (advise sizes the pool). */
const struct relax_row relax_table[CONSTRAINT_KINDS] = {
	[CONSTRAINT_QUOTA] =
		{CONSTRAINT_QUOTA, "queues.Q.quota",
		 "raise the queue's nominal GPU quota by the waiting jobs the free GPUs hold, else by one",
		 "the queue owns more of the cohort's GPUs; the others borrow less", false,
		 relax_quota},
	[CONSTRAINT_BORROWING_LIMIT] =
		{CONSTRAINT_BORROWING_LIMIT, "queues.Q.borrowing_limit",
		 "raise the borrowing limit by the waiting jobs the free GPUs hold, else by one",
		 "the queue holds more of what others leave unused; they "
		 "take it back by preemption",
		 false, relax_borrowing},
	[CONSTRAINT_LENDING_LIMIT] = {CONSTRAINT_LENDING_LIMIT, "queues.L.lending_limit",
				      "the lender lends all of its quota (the limit at its quota)",
				      "the lender's own jobs wait for lent quota to come back",
				      false, relax_lending},
	[CONSTRAINT_RECLAIM] = {CONSTRAINT_RECLAIM, "queues.L.preemption.reclaim_within_cohort",
				"LowerPriority, else Any: the owner takes lent quota back",
				"borrowers' jobs are preempted and lose the work since their "
				"last checkpoint",
				false, relax_reclaim},
	[CONSTRAINT_QUEUEING_STRATEGY] = {CONSTRAINT_QUEUEING_STRATEGY, "queues.Q.strategy",
					  "BestEffortFIFO: jobs behind a head that lacks quota "
					  "are admitted",
					  "a large job at the head may wait behind smaller ones",
					  false, relax_strategy},
	[CONSTRAINT_PRIORITY] = {CONSTRAINT_PRIORITY, "workloads.W.priority",
				 "a priority above the work it waits behind",
				 "the work it overtakes waits longer", false, relax_priority},
	[CONSTRAINT_NODE_SELECTOR] = {CONSTRAINT_NODE_SELECTOR, "workloads.W.node_selector",
				      "a value no pool carries corrected to the nearest one on a "
				      "pool that holds the pod; else the selector dropped",
				      "pods may run on other pools or GPU types", false,
				      relax_node_selector},
	[CONSTRAINT_AFFINITY] = {CONSTRAINT_AFFINITY, "workloads.W.affinity",
				 "the required node affinity dropped",
				 "pods may run on nodes the rule kept them off", false,
				 relax_affinity},
	[CONSTRAINT_TAINT] = {CONSTRAINT_TAINT, "workloads.W.tolerations",
			      "the taints of the pools its rules keep it off tolerated",
			      "its pods share nodes kept for others", false, relax_taint},
	[CONSTRAINT_SPREAD] = {CONSTRAINT_SPREAD, "workloads.W.topology_spread",
			       "the maxSkew with which every domain fills, else "
			       "whenUnsatisfiable ScheduleAnyway",
			       "pods bunch in fewer domains: a domain's loss takes more of them",
			       false, relax_spread},
	[CONSTRAINT_GPU_SPEC] = {CONSTRAINT_GPU_SPEC, "workloads.W.gpu_spec", "any GPU type",
				 "jobs may run slower on another GPU type", false, relax_gpu_spec},
	[CONSTRAINT_MIG_PROFILE] = {CONSTRAINT_MIG_PROFILE, "pools.P.sharing.layout",
				    "a MIG layout with more instances of the profile the pods "
				    "ask for",
				    "other profiles get fewer instances; a new layout drains the "
				    "node once",
				    false, relax_mig_layout},
	[CONSTRAINT_CPU_REQUEST] = {CONSTRAINT_CPU_REQUEST, "workloads.W.cpu",
				    "the cores a node has per GPU its pods use",
				    "pods that use more cores than they request are throttled",
				    false, relax_cpu_request},
	[CONSTRAINT_MEMORY_REQUEST] = {CONSTRAINT_MEMORY_REQUEST, "workloads.W.memory",
				       "the memory a node has per GPU its pods use",
				       "pods that use more memory than they request risk eviction",
				       false, relax_memory_request},
	[CONSTRAINT_VRAM] = {CONSTRAINT_VRAM, "workloads.W.quantization",
			     "narrower weights, a larger memory_fraction or max_batch",
			     "narrower weights may pass verification less often", false,
			     relax_vram},
	[CONSTRAINT_SHARING] = {CONSTRAINT_SHARING, "pools.P.sharing",
				"idle pods culled or moved to a shared pool; the GPUs "
				"time-sliced, MPS, MIG or fractional",
				"co-located pods slow each other; time-slicing isolates no memory",
				false, relax_sharing},
	[CONSTRAINT_FRAGMENTATION] = {CONSTRAINT_FRAGMENTATION, "scheduler.gpu_policy",
				      "a packing GPU policy, or MostAllocated scoring",
				      "a scheduler plugin for the GPU policies", true,
				      relax_fragmentation},
	[CONSTRAINT_CONTENTION] = {CONSTRAINT_CONTENTION, "pools.P.sharing.replicas",
				   "fewer replicas per GPU, or another sharing mode",
				   "fewer pods per GPU: work waits for a GPU instead", false,
				   relax_contention},
	[CONSTRAINT_WINDOW] = {CONSTRAINT_WINDOW, "pools.P.windows",
			       "the window closing later (1 h, 2 h, or the rounds of its waiting "
			       "work), opening 1 h earlier, or shifted",
			       "the pool serves this work longer and other work less", false,
			       relax_windows},
	[CONSTRAINT_PROVISIONING] = {CONSTRAINT_PROVISIONING, "pools.P.autoscale.min",
				     "nodes kept warm (autoscale.min)",
				     "warm nodes are billed while idle", false, relax_provisioning},
	[CONSTRAINT_STARTUP] = {CONSTRAINT_STARTUP, "workloads.W.startup",
				"a shorter start-up: images pre-pulled, weights cached on the node",
				"an image pre-puller and a weight cache on every node", false,
				relax_startup},
	[CONSTRAINT_CAPACITY] = {CONSTRAINT_CAPACITY, "pools.P.nodes",
				 "more nodes (autoscale.max): advise sizes the pool",
				 "the nodes' price", false, NULL},
};

const struct relax_row *relax_row_of(enum constraint_kind k)
{
	return (unsigned)k < CONSTRAINT_KINDS ? &relax_table[k] : NULL;
}

struct constraint relax_about(enum constraint_kind k, int32_t pool, int32_t workload, int32_t queue)
{
	return (struct constraint){k, pool, workload, queue, 0};
}

/* The name a key's letter stands for in c, or NULL. */
static const char *letter_name(const struct scenario *sc, const struct constraint *c, char l)
{
	if ((l == 'Q' || l == 'L') && c->queue >= 0 && (size_t)c->queue < sc->n_queues)
		return sc->queues[c->queue].name;
	if (l == 'W' && c->workload >= 0 && (size_t)c->workload < sc->n_workloads)
		return sc->workloads[c->workload].name;
	if (l == 'P' && c->pool >= 0 && (size_t)c->pool < sc->n_pools)
		return sc->pools[c->pool].name;
	return NULL;
}

const struct workload_spec *relax_workload_of(const struct scenario *sc, const struct constraint *c)
{
	return c->workload >= 0 && (size_t)c->workload < sc->n_workloads
		       ? &sc->workloads[c->workload]
		       : NULL;
}

/* A pod without a model asks for its VRAM itself: no weights to narrow. */
static bool own_vram(const struct scenario *sc, const struct constraint *c)
{
	const struct workload_spec *w = relax_workload_of(sc, c);
	return c->kind == CONSTRAINT_VRAM && w && !w->model;
}

const char *relax_relaxation(const struct scenario *sc, const struct constraint *c)
{
	const struct relax_row *row = relax_row_of(c->kind);
	if (own_vram(sc, c))
		return "a unit with more memory: fewer replicas per GPU, a larger MIG profile or a "
		       "GPU type with more";
	return row ? row->relaxation : NULL;
}

char *relax_key(const struct scenario *sc, const struct constraint *c)
{
	const struct relax_row *row = relax_row_of(c->kind);
	const char *k = own_vram(sc, c) ? "workloads.W.vram" : row ? row->key : "?";
	struct gp_sbuf b = {0};
	while (*k) {
		size_t n = strcspn(k, ".");
		const char *name = n == 1 ? letter_name(sc, c, *k) : NULL;
		if (name)
			gp_sb_printf(&b, "%s", name);
		else
			gp_sb_printf(&b, "%.*s", (int)n, k);
		k += n;
		if (*k == '.') {
			gp_sb_putc(&b, '.');
			k++;
		}
	}
	return gp_sb_take(&b);
}

/* A quota figure: "none" for no limit. */
static void amount(struct gp_sbuf *b, double v)
{
	if (isinf(v))
		gp_sb_printf(b, "none");
	else
		gp_sb_printf(b, "%g", v);
}

static void sharing_text(struct gp_sbuf *b, const struct pool_spec *p)
{
	const struct sharing *s = &p->sharing;
	if (sharing_replicated(s))
		gp_sb_printf(b, "{mode: %s, replicas: %d}", sharing_name(s->mode),
			     (int)s->replicas);
	else
		gp_sb_printf(b, "{mode: %s}", sharing_name(s->mode));
}

char *relax_value(const struct scenario *sc, const struct constraint *c)
{
	struct gp_sbuf b = {0};
	const struct queue_spec *q =
		c->queue >= 0 && (size_t)c->queue < sc->n_queues ? &sc->queues[c->queue] : NULL;
	const struct workload_spec *w = relax_workload_of(sc, c);
	const struct pool_spec *p =
		c->pool >= 0 && (size_t)c->pool < sc->n_pools ? &sc->pools[c->pool] : NULL;
	const struct quota_entry *e = q ? diagnose_gpu_quota(q) : NULL;
	static const char *const reclaim[] = {"Never", "LowerPriority", "Any"};
	switch (c->kind) {
	case CONSTRAINT_QUOTA:
		if (e)
			amount(&b, e->nominal);
		break;
	case CONSTRAINT_BORROWING_LIMIT:
		if (e)
			amount(&b, e->borrowing_limit);
		break;
	case CONSTRAINT_LENDING_LIMIT:
		if (e)
			amount(&b, e->lending_limit);
		break;
	case CONSTRAINT_RECLAIM:
		if (q)
			gp_sb_printf(&b, "%s", reclaim[q->reclaim]);
		break;
	case CONSTRAINT_QUEUEING_STRATEGY:
		if (q)
			gp_sb_printf(&b, "%s",
				     q->strategy == STRATEGY_STRICT_FIFO ? "StrictFIFO"
									 : "BestEffortFIFO");
		break;
	case CONSTRAINT_PRIORITY:
		if (w)
			gp_sb_printf(&b, "%d", (int)w->priority);
		break;
	case CONSTRAINT_NODE_SELECTOR:
		if (w) {
			gp_sb_printf(&b, "{");
			for (size_t i = 0; i < w->n_node_selector; i++)
				gp_sb_printf(&b, "%s%s: %s", i ? ", " : "", w->node_selector[i].key,
					     w->node_selector[i].value);
			gp_sb_printf(&b, "}");
		}
		break;
	case CONSTRAINT_AFFINITY:
		if (w)
			gp_sb_printf(&b, "%zu term%s", w->n_affinity,
				     w->n_affinity == 1 ? "" : "s");
		break;
	case CONSTRAINT_TAINT:
		if (w)
			gp_sb_printf(&b, "%zu toleration%s", w->n_tolerations,
				     w->n_tolerations == 1 ? "" : "s");
		break;
	case CONSTRAINT_SPREAD:
		if (w && w->spread.key)
			gp_sb_printf(&b, "{key: %s, max_skew: %d, when_unsatisfiable: %s}",
				     w->spread.key, (int)w->spread.max_skew,
				     w->spread.when == SPREAD_DO_NOT_SCHEDULE ? "DoNotSchedule"
									      : "ScheduleAnyway");
		else if (w)
			gp_sb_printf(&b, "none");
		break;
	case CONSTRAINT_GPU_SPEC:
		if (w) {
			gp_sb_printf(&b, "[");
			for (size_t i = 0; i < w->n_gpu_spec; i++)
				gp_sb_printf(&b, "%s%s", i ? ", " : "", w->gpu_spec[i]);
			gp_sb_printf(&b, "]");
		}
		break;
	case CONSTRAINT_CPU_REQUEST:
		if (w)
			gp_sb_printf(&b, "%g", w->cpu);
		break;
	case CONSTRAINT_MEMORY_REQUEST:
		if (w)
			gp_sb_printf(&b, "%gGiB", w->memory_bytes / GP_GIB);
		break;
	case CONSTRAINT_VRAM: /* the key's own value: the weights' format, or the pod's VRAM */
		if (w && w->model)
			gp_sb_printf(&b, "%s", footprint_quant_name((enum quant)w->quantization));
		else if (w)
			gp_sb_printf(&b, "%gGiB", w->vram_bytes / GP_GIB);
		break;
	case CONSTRAINT_MIG_PROFILE:
		if (p)
			diagnose_layout_text(&b, p->sharing.layout, p->sharing.n_layout);
		break;
	case CONSTRAINT_CONTENTION:
		if (p)
			gp_sb_printf(&b, "%d", (int)p->sharing.replicas);
		break;
	case CONSTRAINT_SHARING:
		if (p)
			sharing_text(&b, p);
		break;
	case CONSTRAINT_FRAGMENTATION:
		gp_sb_printf(&b, "%s", gpupolicy_names[sc->scheduler.gpu_policy]);
		break;
	case CONSTRAINT_WINDOW:
		if (p && p->n_windows)
			gp_sb_printf(&b, "%02d:%02d-%02d:%02d%s", (int)(p->windows[0].from / 3600),
				     (int)(p->windows[0].from / 60 % 60),
				     (int)(p->windows[0].to / 3600),
				     (int)(p->windows[0].to / 60 % 60),
				     p->n_windows > 1 ? " and more" : "");
		else if (w && w->n_windows)
			gp_sb_printf(&b, "%zu window%s of its own", w->n_windows,
				     w->n_windows == 1 ? "" : "s");
		break;
	case CONSTRAINT_PROVISIONING:
		if (p)
			gp_sb_printf(&b, "%d",
				     (int)(p->autoscale.on ? p->autoscale.min : p->nodes));
		break;
	case CONSTRAINT_STARTUP:
		if (w) {
			char d[64];
			units_format_duration(w->startup, d, sizeof d);
			gp_sb_printf(&b, "%s", d);
		}
		break;
	case CONSTRAINT_CAPACITY:
		if (p)
			gp_sb_printf(&b, "%d",
				     (int)(p->autoscale.on ? p->autoscale.max : p->nodes));
		break;
	case CONSTRAINT_KINDS: break;
	}
	if (!b.n)
		gp_sb_printf(&b, "?");
	return gp_sb_take(&b);
}

size_t relax_constraint(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f)
{
	const struct relax_row *row = relax_row_of(c->kind);
	size_t before = f->n_fixes;
	if (row && row->relax)
		row->relax(sc, r, c, f);
	return f->n_fixes - before;
}
