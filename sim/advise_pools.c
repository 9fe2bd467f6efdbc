/*
 * advise_pools.c - the pool-size searches of advise (advise.c): which pools
 * to size for which workloads' goals (the pools of the findings, the other
 * pools a workload short of capacity may use, the pools whose GPUs hold pods
 * OOM-killed on too small ones), and the smallest node count of each that
 * meets them, with the Kueue quotas that must grow with it.
 */
#include "advise_int.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- the pool-size search -------------------------------------------------- */

#define SHRINK_SEEDS 5 /* seeds an overbuilt pool's smaller size must meet every goal on */

/* A pool to size, and the workloads whose goals it is sized for: those its
 * findings are about (none: the run's goal). */
struct sizing {
	int pool;
	size_t n;
	int32_t workloads[ADVISE_MAX_SIZED];
	bool alternative;               /* another pool a workload short of capacity may use */
	bool shrink;                    /* a healthy run's overbuilt pool (advise_overbuilt) */
	const struct finding_fix *with; /* applied to every size tried; NULL: none */
	int kept_off;                   /* with: the pool it keeps the pods off */
};

/* The sizing of pool p with fix `with` (NULL: none) among z[0..n), or NULL. */
static struct sizing *sizing_of(struct sizing *z, size_t n, int p, const struct finding_fix *with)
{
	for (size_t i = 0; i < n; i++)
		if (z[i].pool == p && z[i].with == with)
			return &z[i];
	return NULL;
}

static void add_goal(struct sizing *z, int32_t w)
{
	for (size_t i = 0; i < z->n; i++)
		if (z->workloads[i] == w)
			return;
	if (w >= 0 && z->n < ADVISE_MAX_SIZED)
		z->workloads[z->n++] = w;
}

/* The workloads finding fd is about: the one it names, and its members
 * where they are the work that waits (not a sharing finding's idle holders,
 * not a rule's pools). */
static void add_goals(struct sizing *z, const struct finding *fd)
{
	add_goal(z, fd->workload);
	bool waiting = fd->kind == KIND_OOM || fd->kind == KIND_VRAM_FULL ||
		       (fd->kind == KIND_SHARING && !fd->fig.pool.holders);
	for (size_t m = 0; waiting && m < fd->n_members; m++)
		add_goal(z, fd->members[m]);
}

/* A workload short of capacity in one pool may be better served by growing
 * another it may use (cheaper GPUs, the same work): each such pool is sized
 * for it too, within ADVISE_MAX_SIZED, whatever order the scenario lists
 * them in.  Returns the new count. */
static size_t other_pools(const struct scenario *sc, const struct results *r, struct sizing *z,
			  size_t n)
{
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		if (fd->kind != KIND_CAPACITY || fd->workload < 0)
			continue;
		diagnose_usable_pools(sc, (size_t)fd->workload, usable);
		for (size_t p = 0; p < sc->n_pools && n < ADVISE_MAX_SIZED; p++)
			if (usable[p] && sc->pools[p].gpus_per_node > 0 &&
			    !sizing_of(z, n, (int)p, NULL)) {
				z[n] = (struct sizing){.pool = (int)p, .alternative = true};
				add_goal(&z[n++], fd->workload);
			}
	}
	free(usable);
	return n;
}

/* Pods OOM-killed on a pool of whole GPUs: a GPU of it cannot hold one, so
 * more of them would kill more (on time-sliced GPUs, more of them spread
 * the pods that share). */
static bool oom_on_whole_gpus(const struct scenario *sc, const struct finding *fd)
{
	return fd->kind == KIND_OOM && sc->pools[fd->pool].sharing.mode != SHARING_TIME_SLICING;
}

/* Whether more nodes of fd's pool cannot help its pods: they fit no unit
 * of it (stalled), or no GPU of it holds them (OOM-killed on whole GPUs). */
static bool more_cannot_hold(const struct scenario *sc, const struct finding *fd)
{
	return fd->kind == KIND_STALLED || oom_on_whole_gpus(sc, fd);
}

/* The fix of finding fd that keeps its pods on the GPU types that hold them
 * (diagnose.c's fix_gpu_types: gpu_spec overrides), or NULL. */
static const struct finding_fix *gpu_types_fix(const struct finding *fd)
{
	for (size_t k = 0; k < fd->n_fixes; k++)
		for (size_t i = 0; i < fd->fixes[k].n_sets; i++)
			if (override_sets_field(&fd->fixes[k].sets[i], "gpu_spec"))
				return &fd->fixes[k];
	return NULL;
}

/* For pods OOM-killed on whole GPUs too small for them: the pools whose GPUs
 * hold them, each sized with the pods kept on such GPUs (the finding's
 * gpu_spec fix), for where keeping them there alone misses a goal.  Returns
 * the new count. */
static size_t pools_holding(const struct scenario *sc, const struct finding *fd, struct sizing *z,
			    size_t n)
{
	const struct finding_fix *fix = gpu_types_fix(fd);
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	for (size_t m = 0; fix && m < fd->n_members; m++) {
		size_t w = (size_t)fd->members[m];
		diagnose_usable_pools(sc, w, usable);
		for (size_t q = 0; q < sc->n_pools; q++) {
			if ((int)q == fd->pool || !usable[q] || sc->pools[q].gpus_per_node <= 0 ||
			    !diagnose_could_hold(sc, q, w))
				continue;
			struct sizing *at = sizing_of(z, n, (int)q, fix);
			if (!at && n < ADVISE_MAX_SIZED)
				at = &z[n++], *at = (struct sizing){.pool = (int)q,
								    .with = fix,
								    .kept_off = fd->pool};
			if (at)
				add_goal(at, (int32_t)w);
		}
	}
	free(usable);
	return n;
}

/* Pool p is priced and of a fixed size, and the GPUs the run allocated in
 * it would have fit one node fewer on average: work that queues within its
 * goals may ride its peaks out on fewer (the search decides). */
static bool overbuilt(const struct scenario *sc, const struct results *r, size_t p)
{
	const struct pool_spec *ps = &sc->pools[p];
	if (ps->autoscale.on || ps->nodes < 2 || ps->gpus_per_node <= 0 ||
	    !(ps->price.gpu_hour > 0))
		return false;
	double gpus = (double)ps->nodes * ps->gpus_per_node;
	double mean = results_or(r, ps->name, METRIC_GPU_ALLOCATION_PCT, 100) / 100 * gpus;
	return mean <= gpus - ps->gpus_per_node;
}

bool advise_overbuilt(const struct scenario *sc, const struct results *r)
{
	if (r->n_findings || !results_holds(r, "all", METRIC_GOAL_MET))
		return false;
	for (size_t p = 0; p < sc->n_pools; p++)
		if (overbuilt(sc, r, p))
			return true;
	return false;
}

/* A healthy run's overbuilt pools, at most ADVISE_MAX_SIZED, each to size
 * down for every goal.  Returns how many. */
static size_t pools_to_shrink(const struct scenario *sc, const struct results *r, struct sizing *z)
{
	size_t n = 0;
	for (size_t p = 0; p < sc->n_pools && n < ADVISE_MAX_SIZED; p++)
		if (overbuilt(sc, r, p))
			z[n++] = (struct sizing){.pool = (int)p, .shrink = true};
	return n;
}

/* The pools to size, at most ADVISE_MAX_SIZED: the pool of each allocation,
 * memory or capacity finding that has GPUs, in rank order (a placement
 * finding's pool is the one a rule keeps work off); with none, the largest
 * pool the workload that queued longest may run in (its rules allowing; a
 * job still waiting at the end counts its wait so far). */
static size_t pools_to_size_all(const struct scenario *sc, const struct results *r,
				struct sizing *z)
{
	size_t n = 0;
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		if (fd->pool < 0 || fd->step == FINDING_PLACEMENT ||
		    fd->step == FINDING_APPLICATION || sc->pools[fd->pool].gpus_per_node <= 0)
			continue;
		if (more_cannot_hold(sc, fd)) {
			n = pools_holding(sc, fd, z, n);
			continue;
		}
		struct sizing *at = sizing_of(z, n, fd->pool, NULL);
		if (!at && n < ADVISE_MAX_SIZED)
			at = &z[n++], *at = (struct sizing){.pool = fd->pool};
		if (at)
			add_goals(at, fd);
	}
	n = other_pools(sc, r, z, n);
	if (n)
		return n;
	if (advise_overbuilt(sc, r))
		return pools_to_shrink(sc, r, z);
	int w = -1;
	double longest = 0;
	for (size_t k = 0; k < sc->n_workloads; k++) { /* jobs never started wait too */
		const char *name = sc->workloads[k].name;
		double q = fmax(results_or(r, name, METRIC_QUEUE_TIME_P95_S, 0),
				results_or(r, name, METRIC_WAIT_SO_FAR_MAX_S, 0));
		if (q > longest)
			longest = q, w = (int)k;
	}
	if (w < 0)
		return 0;
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	diagnose_usable_pools(sc, (size_t)w, usable);
	int best = -1;
	for (size_t p = 0; p < sc->n_pools; p++)
		if (usable[p] &&
		    (best < 0 || sc->pools[p].nodes * sc->pools[p].gpus_per_node >
					 sc->pools[best].nodes * sc->pools[best].gpus_per_node))
			best = (int)p;
	free(usable);
	z[0] = (struct sizing){.pool = best};
	return best < 0 ? 0 : 1;
}

/* Whose goals a sizing meets, in words: "train, eval", or every goal. */
static void goal_words(const struct scenario *sc, const struct sizing *z, struct gp_sbuf *words)
{
	gp_sb_printf(words, "%s", z->n ? "" : "every goal");
	for (size_t i = 0; i < z->n; i++)
		gp_sb_printf(words, "%s%s", i ? ", " : "", sc->workloads[z->workloads[i]].name);
}

/* What sizes pool ps: its nodes, or for an autoscaled pool the Cluster
 * Autoscaler's maximum (its --nodes=min:max); and the key that sets it. */
static int32_t pool_size(const struct pool_spec *ps)
{
	return ps->autoscale.on ? ps->autoscale.max : ps->nodes;
}

static char *pool_size_key(const struct pool_spec *ps)
{
	struct gp_sbuf key = {0};
	gp_sb_printf(&key, "pools.%s.%s", ps->name, ps->autoscale.on ? "autoscale.max" : "nodes");
	return gp_sb_take(&key);
}

/* pools_to_size_all's, but those whose size, or the fix they are sized
 * with, sets a path --keep keeps. */
static size_t pools_to_size(const struct advise_spec *sp, const struct scenario *sc,
			    const struct results *r, struct sizing *z)
{
	size_t n = pools_to_size_all(sc, r, z), k = 0;
	for (size_t i = 0; i < n; i++) {
		char *key = pool_size_key(&sc->pools[z[i].pool]);
		if (!advise_keeps(sp, key) &&
		    !(z[i].with && advise_sets_kept(sp, z[i].with->sets, z[i].with->n_sets)))
			z[k++] = z[i];
		free(key);
	}
	return k;
}

/* The Kueue queues whose GPU quota grows with a sized pool: each queue of
 * the sizing's workloads with a plain quota: of nvidia.com/gpu (a queue of
 * resource groups is left as it is).  New nodes whose GPUs no queue may
 * admit would idle: a planner who buys them for a team raises its quota. */
struct quota_growth {
	const struct scenario *sc;
	const struct advise_spec *sp; /* its --keep: quotas it keeps do not grow */
	int32_t gpus_per_node, now;   /* the pool's, and its size before */
	double gpus;                  /* the cluster's GPUs before */
	int32_t queues[SEARCH_MAX_LINKED];
	double covered[SEARCH_MAX_LINKED]; /* the GPUs the queue's cohort (or it) may admit */
	size_t n;
};

static bool plain_gpu_quota(const struct scenario *sc, const struct queue_spec *q)
{
	const struct quota_entry *e = diagnose_gpu_quota(q);
	return !q->implicit && e && !isinf(e->nominal) &&
	       !strcmp(sc->flavors[e->flavor].name, "default");
}

/* The nominal GPU quotas of q's cohort (q's alone without one): what its
 * work may be admitted to, borrowing included. */
static double cohort_quota(const struct scenario *sc, const struct queue_spec *q)
{
	double sum = 0;
	for (size_t k = 0; k < sc->n_queues; k++) {
		const struct queue_spec *o = &sc->queues[k];
		const struct quota_entry *e = diagnose_gpu_quota(o);
		if (e && (o == q || (q->cohort && o->cohort && !strcmp(o->cohort, q->cohort))))
			sum += e->nominal; /* a queue without a GPU quota admits none to lend */
	}
	return sum;
}

/* Whether the quota of w's queue may grow: a plain GPU quota, not listed yet. */
static bool may_grow(const struct quota_growth *g, size_t w)
{
	int32_t q = g->sc->workloads[w].queue;
	bool seen = false;
	for (size_t k = 0; k < g->n; k++)
		seen |= g->queues[k] == q;
	return q >= 0 && (size_t)q < g->sc->n_queues && !seen && g->n < SEARCH_MAX_LINKED &&
	       plain_gpu_quota(g->sc, &g->sc->queues[q]);
}

static void grow_queue_of(struct quota_growth *g, size_t w)
{
	int32_t q = g->sc->workloads[w].queue;
	char key[512];
	snprintf(key, sizeof key, "queues.%s.quota", g->sc->queues[q].name);
	if (advise_keeps(g->sp, key))
		return;
	g->covered[g->n] = cohort_quota(g->sc, &g->sc->queues[q]);
	g->queues[g->n++] = q;
}

/* What the k-th queue's quota grows by at `nodes`: the GPUs the pool adds
 * beyond what its cohort's quotas already admit (none where they cover the
 * larger cluster). */
static double quota_raise(const struct quota_growth *g, size_t k, long nodes)
{
	double added = (double)(nodes - g->now) * g->gpus_per_node;
	double beyond = g->gpus + added - g->covered[k];
	return fmax(0, fmin(added, beyond));
}

/* The queues of z's workloads; for a sizing of every goal, of every
 * workload that may use the pool and missed its goal in the base run r (the
 * new GPUs go to the teams that waited, not to every team). */
static void quota_growth_init(struct quota_growth *g, const struct advise_spec *sp,
			      const struct scenario *sc, const struct results *r,
			      const struct sizing *z)
{
	const struct pool_spec *ps = &sc->pools[z->pool];
	*g = (struct quota_growth){
		.sc = sc, .sp = sp, .gpus_per_node = ps->gpus_per_node, .now = pool_size(ps)};
	for (size_t p = 0; p < sc->n_pools; p++)
		g->gpus += (double)pool_size(&sc->pools[p]) * sc->pools[p].gpus_per_node;
	for (size_t i = 0; i < z->n; i++)
		if (may_grow(g, (size_t)z->workloads[i]))
			grow_queue_of(g, (size_t)z->workloads[i]);
	bool *usable = z->n ? NULL : gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	for (size_t w = 0; usable && w < sc->n_workloads; w++) {
		if (!may_grow(g, w) || results_holds(r, sc->workloads[w].name, METRIC_GOAL_MET))
			continue; /* before the rules: a workload's usable pools cost a cluster */
		diagnose_usable_pools(sc, w, usable);
		if (usable[z->pool])
			grow_queue_of(g, w);
	}
	free(usable);
}

/* search_spec.linked: at `value` nodes, each queue's GPU quota raised by
 * quota_raise (no override where that is none). */
static size_t grown_quotas(const void *ctx, const char *value, struct override *out)
{
	const struct quota_growth *g = ctx;
	size_t n = 0;
	for (size_t k = 0; k < g->n; k++) {
		const struct queue_spec *q = &g->sc->queues[g->queues[k]];
		double raise = quota_raise(g, k, atol(value));
		if (raise <= 0)
			continue;
		struct gp_sbuf map = {0};
		diagnose_quota_map(&map, q, "nvidia.com/gpu",
				   diagnose_gpu_quota(q)->nominal + raise, false);
		out[n++] = override_setf("queues.%s.quota=%s", q->name, map.s);
		free(map.s);
	}
	return n;
}

/* What every size of a pool is tried with: the sizing's fix (z->with), and
 * the fixes nearest the goals without hardware (atop: they go first, so
 * that hardware is what remains after them), but for keys the fix sets;
 * atop not at all where it sets the pool's size or a quota the sizing
 * grows (sizing_key: its label would name what the row does not do).  The
 * overrides are borrowed. */
struct fixed {
	struct override *sets;
	size_t n;
	bool atop; /* atop's fixes are among them */
};

/* What o's key says of pool ps after "pools.NAME" ("", ".sharing"), or
 * NULL when it is not about ps. */
static const char *pool_key_rest(const struct pool_spec *ps, const struct override *o)
{
	size_t n = strlen(ps->name);
	if (strncmp(o->key, "pools.", 6) || strncmp(o->key + 6, ps->name, n))
		return NULL;
	const char *rest = o->key + 6 + n;
	return !*rest || *rest == '.' ? rest : NULL;
}

/* Whether o sets what the sizing of pool ps sets: its size ("pools.NAME.nodes",
 * anything of its autoscaling, or the pool whole) or the quota of a queue g
 * grows.  Its other keys (sharing, labels, taints) stack with a size: time-
 * slicing stopped, then the nodes that exclusive GPUs need. */
static bool sizing_key(const struct scenario *sc, const struct pool_spec *ps,
		       const struct quota_growth *g, const struct override *o)
{
	const char *rest = pool_key_rest(ps, o);
	if (rest && (!*rest || !strcmp(rest, ".nodes") || !strncmp(rest, ".autoscale", 10)))
		return true;
	for (size_t k = 0; k < g->n; k++) {
		const char *q = sc->queues[g->queues[k]].name;
		size_t m = strlen(q);
		if (!strncmp(o->key, "queues.", 7) && !strncmp(o->key + 7, q, m) &&
		    o->key[7 + m] == '.')
			return true;
	}
	return false;
}

static bool sets_key(const struct finding_fix *x, const struct override *o)
{
	for (size_t i = 0; x && i < x->n_sets; i++)
		if (override_same_key(&x->sets[i], o))
			return true;
	return false;
}

static void fixed_init(struct fixed *fx, const struct scenario *sc, const struct sizing *z,
		       const struct quota_growth *g, const struct advise_row *atop)
{
	for (size_t i = 0; atop && i < atop->n_sets; i++)
		if (sizing_key(sc, &sc->pools[z->pool], g, &atop->sets[i]))
			atop = NULL;
	size_t n = (z->with ? z->with->n_sets : 0) + (atop ? atop->n_sets : 0);
	*fx = (struct fixed){gp_xcalloc(n + 1, sizeof *fx->sets), 0, atop != NULL};
	for (size_t i = 0; atop && i < atop->n_sets; i++)
		if (!sets_key(z->with, &atop->sets[i]))
			fx->sets[fx->n++] = atop->sets[i];
	for (size_t i = 0; z->with && i < z->with->n_sets; i++)
		fx->sets[fx->n++] = z->with->sets[i];
}

/* Searches 1 .. hi nodes of z's pool (the `key` that sets it) for the
 * smallest count at which scope (a workload, a pool: every workload it can
 * host, or all) meets its goal (metric goal_met, metrics_goals).  A pool
 * shrunk takes away the margin that hid a lucky day: the count must meet
 * the goal on SHRINK_SEEDS seeds.  GP_EINPUT: the metric is absent. */
static int search_goal(const struct advise_spec *sp, struct store *st, const struct fixed *fx,
		       const struct quota_growth *g, const struct sizing *z, const char *key,
		       double hi, const char *scope, struct advise_probes *probes,
		       struct search_answer *ans, struct gp_err *err)
{
	struct search_spec s = {.scenario = sp->scenario,
				.sets = sp->sets,
				.n_sets = sp->n_sets,
				.overrides = fx->sets,
				.n_overrides = fx->n,
				.key = key,
				.linked = g->n ? grown_quotas : NULL,
				.linked_ctx = g,
				.seeds = z->shrink ? SHRINK_SEEDS : 1,
				.integer = true,
				.on_run = advise_probe_run,
				.run_ctx = probes,
				.jobs = sp->jobs};
	s.lo.number = 1;
	s.hi.number = hi;
	advise_goal_condition(&s.until, scope);
	*ans = (struct search_answer){0};
	int rc = search_run(&s, st, NULL, NULL, ans, err);
	if (!rc && !ans->found) {
		snprintf(ans->value, sizeof ans->value, "%.0f", hi);
		ans->number = hi;
	}
	return rc;
}

/* The smallest node count of z's pool, within 1 .. 4x its nodes, that meets
 * the goal of each of z's workloads: the largest of their answers (each
 * search's answer run has the pool at that count).  When even 4x misses one
 * goal, the row is that run and says so (a search that finds nothing still
 * shows).  *found gets the answer's node count where it may run together
 * with other pools' answers (a size alone: no fix, no quota beside it, not
 * another pool's alternative), else 0; *short_at the index in pl of a row
 * that still falls short, else SIZE_MAX. */
static int size_pool(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		     const struct results *r, const struct sizing *z, const struct advise_row *atop,
		     struct plan *pl, long *found, size_t *short_at, struct gp_err *err)
{
	const struct pool_spec *ps = &sc->pools[z->pool];
	char *key = pool_size_key(ps);
	struct advise_probes probes = {0};
	int32_t now = pool_size(ps);
	*found = 0;
	*short_at = SIZE_MAX;
	/* a pool shrunk: the run met every goal at its size */
	double hi = z->shrink ? now : now * 4 > now + 1 ? now * 4 : now + 1;
	struct quota_growth growth;
	quota_growth_init(&growth, sp, sc, r, z);
	struct fixed fx;
	fixed_init(&fx, sc, z, &growth, atop);
	/* First the count at which every workload the pool can host meets its
	 * goal: no size that leaves one of them waiting past it (a pool shrunk
	 * under someone who still waits on it). */
	struct search_answer best = {.found = true}, ans;
	int rc = search_goal(sp, st, &fx, &growth, z, key, hi, ps->name, &probes, &best, err);
	if (rc && rc != GP_EINPUT)
		goto out;
	bool every = !rc && best.found;
	if (!every)
		best = (struct search_answer){.found = true};
	for (size_t i = 0; !every && i < (z->n ? z->n : 1) && best.found; i++) {
		rc = search_goal(sp, st, &fx, &growth, z, key, hi,
				 z->n ? sc->workloads[z->workloads[i]].name : "all", &probes, &ans,
				 err);
		if (rc == GP_EINPUT) { /* the goal's metric is absent: no pool size answers it */
			rc = GP_OK;
			goto out;
		}
		if (rc)
			goto out;
		if (!ans.found || !best.run_id || ans.number > best.number)
			best = ans;
	}
	rc = GP_OK;
	/* the fixes alone at the pool's size: their own rows, which the plan has;
	 * an overbuilt pool that needs every node: the base run */
	if (!best.last_run_id || (fx.n && best.found && (long)best.number <= now) ||
	    (z->shrink && !(best.found && (long)best.number < now)))
		goto out;
	struct gp_sbuf words = {0}, quotas = {0};
	goal_words(sc, z, &words);
	if (z->shrink)
		gp_sb_printf(&words, " on %d seeds", SHRINK_SEEDS);
	struct override grown[SEARCH_MAX_LINKED];
	size_t n_grown = grown_quotas(&growth, best.value, grown);
	for (size_t k = 0; k < growth.n; k++) {
		const struct queue_spec *q = &sc->queues[growth.queues[k]];
		double raise = quota_raise(&growth, k, (long)best.number);
		if (raise > 0)
			gp_sb_printf(&quotas, ", quota of %s at %g GPUs", q->name,
				     diagnose_gpu_quota(q)->nominal + raise);
	}
	const char *how = best.found ? z->n ? "smallest for" : "smallest meeting"
			  : z->n     ? "still short for"
				     : "still short of";
	struct advise_row *a = advise_plan_add(pl, "pool %s %s %s node%s%s%s%s%s%s (%s %s)",
					       ps->name, ps->autoscale.on ? "autoscaling to" : "at",
					       best.value, strcmp(best.value, "1") ? "s" : "",
					       z->with ? " holding the pods that overflow " : "",
					       z->with ? sc->pools[z->kept_off].name : "",
					       gp_sb_str(&quotas), fx.atop ? ", after " : "",
					       fx.atop ? atop->label : "", how, gp_sb_str(&words));
	free(words.s);
	free(quotas.s);
	for (size_t k = 0; k < n_grown; k++) {
		if (a)
			advise_add(a, grown[k]);
		else
			override_free(&grown[k]);
	}
	if (a) {
		for (size_t i = 0; i < fx.n; i++)
			advise_add(a, override_copy(&fx.sets[i]));
		advise_add(a, override_make(key, best.value));
		long nodes = (long)best.number;
		*found = best.found && !z->alternative && !fx.n && !n_grown ? nodes : 0;
		*short_at = best.found ? SIZE_MAX : (size_t)(a - pl->alts);
		a->run_id = best.found ? best.run_id : best.last_run_id;
		a->hardware = nodes > now;
		advise_row_figures(a, &probes);
	}
out:
	advise_probes_free(&probes);
	free(fx.sets);
	free(key);
	return rc;
}

/* Whether row sets o's key. */
static bool row_sets(const struct advise_row *row, const struct override *o)
{
	for (size_t i = 0; i < row->n_sets; i++)
		if (override_same_key(&row->sets[i], o))
			return true;
	return false;
}

/* The fix a run of z's sizing that still falls short (its results short)
 * calls for: the first of its findings' (but capacity: the sizing answers
 * that) that keeps to stock components, the hardware and the goals, and
 * sets no key of the sizing (g: its quotas) or of the fixes it was sized
 * after (atop).  NULL: none. */
static const struct finding_fix *fix_of_short(const struct scenario *sc, const struct sizing *z,
					      const struct quota_growth *g,
					      const struct results *short_r,
					      const struct advise_row *atop)
{
	for (size_t f = 0; f < short_r->n_findings; f++) {
		const struct finding *fd = &short_r->findings[f];
		for (size_t k = 0; fd->step != FINDING_CAPACITY && k < fd->n_fixes; k++) {
			const struct finding_fix *x = &fd->fixes[k];
			bool ok = x->n_sets && advise_sets_stock(x->sets, x->n_sets);
			for (size_t i = 0; ok && i < x->n_sets; i++)
				ok = !sizing_key(sc, &sc->pools[z->pool], g, &x->sets[i]) &&
				     !sets_key(z->with, &x->sets[i]) &&
				     !row_sets(atop, &x->sets[i]);
			if (ok)
				return x;
		}
	}
	return NULL;
}

/* Appends fix x to row: its overrides, and its label after " + ". */
static void add_fix(struct advise_row *row, const struct finding_fix *x)
{
	struct gp_sbuf label = {0};
	gp_sb_printf(&label, "%s%s%s", row->label ? row->label : "", row->label ? " + " : "",
		     x->label);
	free(row->label);
	row->label = gp_sb_take(&label);
	for (size_t i = 0; i < x->n_sets; i++)
		advise_add(row, override_copy(&x->sets[i]));
}

/*
 * A pool sized alone that still falls short at 4x: its largest run is
 * diagnosed again.  What binds once the GPUs are there (the autoscaler's
 * scale-down evicting jobs from the nodes it added, a packing, a rule) is a
 * fix the base run could not show, as capacity hid it; the pool is sized
 * again after the first finding's fix, and so on while a run falls short,
 * at most ADVISE_SIZED_FIXES times.  One fix a round: fixes of findings
 * made at another size may undo each other (a toleration that let batch
 * onto a node kept for a server, once the packing made room elsewhere).
 */
#define ADVISE_SIZED_FIXES 3

static int size_after_short(const struct advise_spec *sp, struct store *st,
			    const struct scenario *sc, const struct results *r,
			    const struct sizing *z, const struct advise_row *atop, struct plan *pl,
			    size_t short_at, struct gp_err *err)
{
	struct quota_growth growth;
	quota_growth_init(&growth, sp, sc, r, z);
	struct fixed fx; /* whether the short row was sized after atop */
	fixed_init(&fx, sc, z, &growth, atop);
	struct advise_row after = {0}; /* the fixes sized after: atop's, then the new */
	for (size_t i = 0; fx.atop && i < atop->n_sets; i++)
		advise_add(&after, override_copy(&atop->sets[i]));
	after.label = fx.atop ? gp_xstrdup(atop->label) : NULL;
	free(fx.sets);
	int rc = GP_OK;
	for (int round = 0; round < ADVISE_SIZED_FIXES && short_at != SIZE_MAX && !rc; round++) {
		struct advise_sim sim;
		advise_simulate(sp, &pl->alts[short_at], &sim);
		const struct finding_fix *x =
			sim.rc ? NULL : fix_of_short(sc, z, &growth, &sim.r, &after);
		short_at = SIZE_MAX;
		if ((rc = sim.rc)) {
			gp_err_move(err, &sim.err);
		} else if (x) {
			add_fix(&after, x);
			long found;
			rc = size_pool(sp, st, sc, r, z, &after, pl, &found, &short_at, err);
		}
		advise_sim_free(&sim);
	}
	advise_row_free(&after);
	return rc;
}

/* Whether o sets a key of pool ps ("pools.NAME.sharing"). */
static bool sets_pool(const struct pool_spec *ps, const struct override *o)
{
	const char *rest = pool_key_rest(ps, o);
	return rest && *rest == '.';
}

/* Whether every override of a is one of b's. */
static bool sets_within(const struct advise_row *a, const struct advise_row *b)
{
	for (size_t i = 0; i < a->n_sets; i++)
		if (!b || !row_sets(b, &a->sets[i]))
			return false;
	return true;
}

/*
 * The row nearest the goals of those that reconfigure z's pool without
 * sizing it (its sharing, its MIG layout) with stock components only, but
 * atop's: nodes added to the pool as it is configured buy what the
 * reconfiguration makes room for (GPUs time-sliced past their memory
 * OOM-kill on more nodes too), so the pool is sized after it as well, even
 * where it alone is no nearer the goals than the base (exclusive GPUs leave
 * the fine-tunes that were OOM-killed waiting instead).  NULL: none.
 */
static const struct advise_row *pool_fix(const struct scenario *sc, const struct sizing *z,
					 const struct quota_growth *g, const struct plan *pl,
					 const struct advise_row *atop)
{
	const struct pool_spec *ps = &sc->pools[z->pool];
	const struct advise_row *best = NULL;
	for (size_t i = 1; i < pl->n; i++) {
		const struct advise_row *a = &pl->alts[i];
		bool ok = a->n_sets && !a->hardware && advise_sets_stock(a->sets, a->n_sets),
		     pool = false;
		for (size_t k = 0; ok && k < a->n_sets; k++) {
			pool |= sets_pool(ps, &a->sets[k]);
			ok = !sizing_key(sc, ps, g, &a->sets[k]) && !sets_key(z->with, &a->sets[k]);
		}
		if (ok && pool && !sets_within(a, atop) && (!best || advise_goal_cmp(a, best) < 0))
			best = a;
	}
	return best;
}

/* z's pool sized again after the row that reconfigures it (pool_fix), when
 * there is one. */
static int size_after_pool_fix(const struct advise_spec *sp, struct store *st,
			       const struct scenario *sc, const struct results *r,
			       const struct sizing *z, const struct advise_row *atop,
			       struct plan *pl, struct gp_err *err)
{
	struct quota_growth growth;
	quota_growth_init(&growth, sp, sc, r, z);
	const struct advise_row *fix = pool_fix(sc, z, &growth, pl, atop);
	if (!fix)
		return GP_OK;
	struct advise_row after = {0}; /* a copy: the sizing's rows move pl->alts */
	for (size_t i = 0; i < fix->n_sets; i++)
		advise_add(&after, override_copy(&fix->sets[i]));
	after.label = gp_xstrdup(fix->label);
	long found;
	size_t short_at;
	int rc = size_pool(sp, st, sc, r, z, &after, pl, &found, &short_at, err);
	advise_row_free(&after);
	return rc;
}

static bool any_meets(const struct plan *pl)
{
	for (size_t i = 1; i < pl->n; i++)
		if (pl->alts[i].meets)
			return true;
	return false;
}

/* Whether row, which met every goal on sc's seed, meets them on the next
 * SHRINK_SEEDS - 1 too: overbuilt pools each shrunk on the others' whole
 * size are held to the same seeds together.  Each seed's run is written;
 * the row keeps the first's figures, and meets no more where one misses. */
static int meets_on_seeds(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
			  struct advise_row *row, struct gp_err *err)
{
	int rc = GP_OK;
	for (uint64_t k = 1; k < SHRINK_SEEDS && !rc && row->meets; k++) {
		struct advise_row seeded = {0};
		for (size_t i = 0; i < row->n_sets; i++)
			advise_add(&seeded, override_copy(&row->sets[i]));
		advise_add(&seeded,
			   override_makef("seed", "%llu", (unsigned long long)(sc->seed + k)));
		rc = advise_run_row(sp, st, &seeded, NULL, NULL, err);
		row->meets = seeded.meets;
		advise_row_free(&seeded);
	}
	return rc;
}

/* Sizes each pool pools_to_size names; when two or more have an answer, runs
 * them together too (each answer meets its own workload's goal, and the
 * run's needs them all). */
int advise_size_pools(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		      const struct results *r, const struct advise_row *atop, struct plan *pl,
		      struct gp_err *err)
{
	struct sizing z[ADVISE_MAX_SIZED];
	long found[ADVISE_MAX_SIZED];
	size_t n = pools_to_size(sp, sc, r, z), answers = 0, short_at[ADVISE_MAX_SIZED];
	bool met = any_meets(pl); /* without more nodes: no pool is sized twice */
	int rc = GP_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = size_pool(sp, st, sc, r, &z[i], atop, pl, &found[i], &short_at[i], err);
		answers += !rc && found[i];
		if (!rc && !met)
			rc = size_after_pool_fix(sp, st, sc, r, &z[i], atop, pl, err);
	}
	for (size_t i = 0; i < n && !rc && !any_meets(pl); i++)
		if (short_at[i] != SIZE_MAX)
			rc = size_after_short(sp, st, sc, r, &z[i], atop, pl, short_at[i], err);
	if (rc || answers < 2)
		return rc;
	struct gp_sbuf label = {0};
	gp_sb_printf(&label, "pools");
	bool shrink = true;
	for (size_t i = 0, k = 0; i < n; i++)
		if (found[i]) {
			gp_sb_printf(&label, "%s %s at %ld",
				     !k++           ? ""
				     : k == answers ? " and"
						    : ",",
				     sc->pools[z[i].pool].name, found[i]);
			shrink &= z[i].shrink;
		}
	if (shrink)
		gp_sb_printf(&label, " nodes together (every goal on %d seeds)", SHRINK_SEEDS);
	else
		gp_sb_printf(&label, " nodes together");
	struct advise_row *a = advise_plan_add(pl, "%s", label.s);
	free(label.s);
	for (size_t i = 0; a && i < n; i++)
		if (found[i]) {
			const struct pool_spec *ps = &sc->pools[z[i].pool];
			char *key = pool_size_key(ps);
			advise_add(a, override_makef(key, "%ld", found[i]));
			free(key);
			a->hardware |= found[i] > pool_size(ps);
		}
	if (!a) /* each override loaded alone */
		return GP_OK;
	rc = advise_run_row(sp, st, a, NULL, NULL, err);
	return rc || !shrink || !a->meets ? rc : meets_on_seeds(sp, st, sc, a, err);
}
