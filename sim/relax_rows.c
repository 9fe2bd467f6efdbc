/*
 * relax_rows.c - the rows of the relaxation table added with it (issue 46;
 * see relax.h): a reclaim policy, a priority, a spread rule, a MIG layout,
 * cpu and memory requests, sharing replicas under contention, warm nodes,
 * a shorter start-up.  Each appends to a finding the smallest relaxations
 * of one binding constraint first; advise runs them and keeps what meets
 * every goal.
 *
 * What each models:
 *  - reclaim: Kueue's ClusterQueue preemption.reclaimWithinCohort, "Never",
 *    "LowerPriority" or "Any" (kubernetes-sigs/kueue apis/kueue/v1beta1/
 *    clusterqueue_types.go: "+kubebuilder:validation:Enum=Never;
 *    LowerPriority;Any"): LowerPriority takes lent quota back only from
 *    borrowers of lower priority, so it is offered only when some are.
 *  - spread: PodTopologySpread's whenUnsatisfiable ScheduleAnyway scores
 *    instead of filtering; maxSkew is "the maximum permitted difference
 *    between the number of matching pods in the target topology and the
 *    global minimum" (k8s.io/api core/v1 TopologySpreadConstraint), so the
 *    skew that lets every domain fill is the largest domain's pods less the
 *    smallest's.
 *  - MIG: a layout is what NVIDIA's mig-parted applies per GPU
 *    ("mig-devices": {"3g.40gb": 2}, NVIDIA/mig-parted examples/config.yaml,
 *    e.g. all-3g.40gb); at most 7 compute and 8 memory slices, and no
 *    profile beyond its max instances (scenario_pools.c checks the same).
 */
#include "gpuplan/relax.h"

#include "gpuplan/catalog.h"
#include "gpuplan/diagnose.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct pool_spec *pool_of(const struct scenario *sc, const struct constraint *c)
{
	return c->pool >= 0 && (size_t)c->pool < sc->n_pools ? &sc->pools[c->pool] : NULL;
}

/* --- a queue's reclaim policy ----------------------------------------------- */

/* RECLAIM (the owner c->queue, else c->workload's queue): LowerPriority when
 * some borrower of the cohort has a lower priority than the owner's work,
 * then Any. */
void relax_reclaim(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	(void)r;
	const struct workload_spec *ws = relax_workload_of(sc, c);
	int32_t q = c->queue >= 0 ? c->queue : ws ? ws->queue : -1;
	if (q < 0 || (size_t)q >= sc->n_queues || sc->queues[q].reclaim == RECLAIM_ANY)
		return;
	const struct queue_spec *qs = &sc->queues[q];
	const char *root = scenario_root_cohort(sc, (size_t)q);
	if (!root)
		return;
	int32_t own = INT32_MIN, lowest = INT32_MAX;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *x = &sc->workloads[w];
		if (x->queue == q)
			own = x->priority > own ? x->priority : own;
		else if (x->queue >= 0) {
			const char *other = scenario_root_cohort(sc, (size_t)x->queue);
			if (other && !strcmp(other, root) && x->priority < lowest)
				lowest = x->priority;
		}
	}
	if (qs->reclaim == RECLAIM_NEVER && lowest < own)
		finding_fix_setf(finding_fixf(f, "%s reclaims from lower priority", qs->name),
				 "queues.%s.preemption.reclaim_within_cohort=LowerPriority",
				 qs->name);
	finding_fix_setf(finding_fixf(f, "%s reclaims its lent quota", qs->name),
			 "queues.%s.preemption.reclaim_within_cohort=Any", qs->name);
}

/* --- a priority --------------------------------------------------------------- */

/* PRIORITY (c->workload): a priority above every workload it may wait behind
 * (those that share a pool or its queue); under another scheduler order,
 * with order: priority too. */
void relax_priority(const struct scenario *sc, const struct results *r, const struct constraint *c,
		    struct finding *f)
{
	(void)r;
	const struct workload_spec *ws = relax_workload_of(sc, c);
	if (!ws)
		return;
	int32_t top = INT32_MIN;
	for (size_t w = 0; w < sc->n_workloads; w++)
		if ((int32_t)w != c->workload &&
		    (sc->workloads[w].queue == ws->queue ||
		     diagnose_share_a_pool(sc, w, (size_t)c->workload)) &&
		    sc->workloads[w].priority > top)
			top = sc->workloads[w].priority;
	if (top == INT32_MIN || ws->priority > top || top == INT32_MAX)
		return;
	struct finding_fix *x = finding_fixf(f, "priority %d for %s", top + 1, ws->name);
	finding_fix_setf(x, "workloads.%s.priority=%d", ws->name, top + 1);
	if (sc->scheduler.order != ORDER_PRIORITY)
		finding_fix_setf(x, "scheduler.order=priority");
}

/* --- a spread rule ------------------------------------------------------------ */

/* The label value of key on pool p ("" for kubernetes.io/hostname: each node
 * its own domain), or NULL when the pool lacks the key. */
static const char *domain_of(const struct pool_spec *p, const char *key)
{
	if (!strcmp(key, "kubernetes.io/hostname"))
		return "";
	for (size_t i = 0; i < p->n_labels; i++)
		if (!strcmp(p->labels[i].key, key))
			return p->labels[i].value;
	return NULL;
}

/* Pods of ws the domain of pool p holds (every usable pool with p's value
 * of key; under the hostname key, one node of p); -1 when p is not the
 * first usable pool of its domain or has none. */
static double domain_pods(const struct scenario *sc, const bool *usable,
			  const struct workload_spec *ws, size_t p, const char *key)
{
	bool host = !strcmp(key, "kubernetes.io/hostname");
	const char *d = usable[p] ? domain_of(&sc->pools[p], key) : NULL;
	double pods = 0;
	for (size_t o = 0; d && o < sc->n_pools; o++) {
		const char *od = usable[o] ? domain_of(&sc->pools[o], key) : NULL;
		double eq = scenario_gpu_equivalent(&sc->pools[o], ws);
		if (!od || eq <= 0 || (host ? o != p : strcmp(od, d) != 0))
			continue;
		if (o < p)
			return -1; /* counted with the first pool of its domain */
		pods += floor(sc->pools[o].gpus_per_node / eq + 1e-9) *
			(host ? 1 : sc->pools[o].nodes);
	}
	return d ? pods : -1;
}

/* SPREAD (c->workload): the maxSkew with which every domain of the pools it
 * may use fills (the most pods a domain holds less the fewest), which keeps
 * the rule a filter; then whenUnsatisfiable ScheduleAnyway, which makes it
 * a preference. */
void relax_spread(const struct scenario *sc, const struct results *r, const struct constraint *c,
		  struct finding *f)
{
	(void)r;
	const struct workload_spec *ws = relax_workload_of(sc, c);
	bool usable[64] = {0};
	if (!ws || !ws->spread.key || sc->n_pools > 64)
		return;
	const struct topology_spread *t = &ws->spread;
	diagnose_usable_pools(sc, (size_t)c->workload, usable);
	double most = 0, fewest = INFINITY;
	for (size_t p = 0; p < sc->n_pools; p++) {
		double pods = domain_pods(sc, usable, ws, p, t->key);
		if (pods >= 0) {
			most = fmax(most, pods);
			fewest = fmin(fewest, pods);
		}
	}
	int32_t skew = isfinite(fewest) ? (int32_t)(most - fewest) : 0;
	const char *when = t->when == SPREAD_DO_NOT_SCHEDULE ? "DoNotSchedule" : "ScheduleAnyway";
	if (skew > t->max_skew)
		finding_fix_setf(
			finding_fixf(f, "%s spread with maxSkew %d", ws->name, (int)skew),
			"workloads.%s.topology_spread={key: %s, max_skew: %d, when_unsatisfiable: %s}",
			ws->name, t->key, (int)skew, when);
	if (t->when == SPREAD_DO_NOT_SCHEDULE)
		finding_fix_setf(
			finding_fixf(f, "%s spread with ScheduleAnyway", ws->name),
			"workloads.%s.topology_spread={key: %s, max_skew: %d, when_unsatisfiable: "
			"ScheduleAnyway}",
			ws->name, t->key, (int)t->max_skew);
}

/* --- a MIG layout ------------------------------------------------------------- */

/* MIG_PROFILE (pool c->pool; c->workload the pods short of their profile):
 * the layout that keeps the instances other workloads ask for and gives the
 * rest to the scarce profile (diagnose_mig_layout), mig-parted's
 * all-PROFILE when no other profile is asked for. */
void relax_mig_layout(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f)
{
	(void)r;
	if (pool_of(sc, c) && relax_workload_of(sc, c))
		diagnose_fix_mig_layout(f, sc, (size_t)c->pool, (size_t)c->workload);
}

/* --- cpu and memory requests ------------------------------------------------ */

/* CPU_REQUEST, MEMORY_REQUEST (c->workload): the request that fits as many
 * pods a node as its GPUs hold, on the pools it may use (the smallest of
 * theirs), when smaller than what it asks. */
static void relax_request(const struct scenario *sc, const struct constraint *c, struct finding *f,
			  bool memory)
{
	const struct workload_spec *ws = relax_workload_of(sc, c);
	bool usable[64] = {0};
	if (!ws || sc->n_pools > 64)
		return;
	diagnose_usable_pools(sc, (size_t)c->workload, usable);
	double asks = memory ? ws->memory_bytes : ws->cpu, fits = INFINITY;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		double eq = scenario_gpu_equivalent(ps, ws),
		       has = memory ? ps->memory_bytes : ps->cpu;
		if (!usable[p] || eq <= 0 || has <= 0)
			continue;
		double per_node = floor(ps->gpus_per_node / eq + 1e-9);
		if (per_node >= 1)
			fits = fmin(fits, has / per_node);
	}
	if (!(asks > 0) || !isfinite(fits) || fits >= asks)
		return;
	if (memory) {
		double gib = floor(fits / GP_GIB);
		if (gib < 1)
			return;
		finding_fix_setf(finding_fixf(f, "%s requesting %g GiB a pod", ws->name, gib),
				 "workloads.%s.memory=%gGiB", ws->name, gib);
	} else {
		double cores = floor(fits * 10 + 1e-9) / 10;
		if (cores <= 0)
			return;
		finding_fix_setf(finding_fixf(f, "%s requesting %g cores a pod", ws->name, cores),
				 "workloads.%s.cpu=%g", ws->name, cores);
	}
}

void relax_cpu_request(const struct scenario *sc, const struct results *r,
		       const struct constraint *c, struct finding *f)
{
	(void)r;
	relax_request(sc, c, f, false);
}

void relax_memory_request(const struct scenario *sc, const struct results *r,
			  const struct constraint *c, struct finding *f)
{
	(void)r;
	relax_request(sc, c, f, true);
}

/* --- contention under sharing ------------------------------------------------ */

/* CONTENTION (pool c->pool): fewer time-slicing or MPS replicas, halved down
 * to 2, then the GPUs exclusive. */
void relax_contention(const struct scenario *sc, const struct results *r,
		      const struct constraint *c, struct finding *f)
{
	(void)r;
	const struct pool_spec *ps = pool_of(sc, c);
	if (!ps || !sharing_replicated(&ps->sharing))
		return;
	enum sharing_mode mode = ps->sharing.mode;
	for (int32_t k = ps->sharing.replicas / 2; k >= 2; k /= 2)
		finding_fix_setf(
			finding_fixf(f, "%s x%d on %s", sharing_label(mode), (int)k, ps->name),
			"pools.%s.sharing={mode: %s, replicas: %d}", ps->name, sharing_name(mode),
			(int)k);
	finding_fix_setf(finding_fixf(f, "exclusive GPUs on %s", ps->name), "pools.%s.sharing=%s",
			 ps->name, sharing_name(SHARING_EXCLUSIVE));
}

/* --- warm nodes ----------------------------------------------------------------- */

/* PROVISIONING (pool c->pool): nodes kept warm, 1, then half the maximum,
 * then the maximum (autoscale.min, and the initial nodes with it). */
void relax_provisioning(const struct scenario *sc, const struct results *r,
			const struct constraint *c, struct finding *f)
{
	(void)r;
	const struct pool_spec *ps = pool_of(sc, c);
	if (!ps || !ps->autoscale.on)
		return;
	int32_t tries[3] = {1, (ps->autoscale.max + 1) / 2, ps->autoscale.max};
	for (size_t i = 0; i < 3; i++) {
		int32_t k = tries[i];
		if (k <= ps->autoscale.min || k > ps->autoscale.max || (i && k == tries[i - 1]))
			continue;
		struct finding_fix *x =
			finding_fixf(f, "autoscale min %d for %s", (int)k, ps->name);
		if (ps->nodes < k)
			finding_fix_setf(x, "pools.%s.nodes=%d", ps->name, (int)k);
		finding_fix_setf(x, "pools.%s.autoscale.min=%d", ps->name, (int)k);
	}
}

/* --- a shorter start-up ------------------------------------------------------ */

/* The start-up of c's workload (or of its pool) with which its late jobs
 * would have ended by their deadlines: the start-up less the most any of
 * them overran, less a minute; 0 when none was late by a deadline or that
 * leaves under a minute. */
static double startup_that_meets(const struct results *r, int32_t w, double now)
{
	double worst = 0;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct job_record *j = &r->jobs[i];
		if (j->workload != w || j->deadline == SIM_NEVER || j->end == SIM_NEVER)
			continue;
		worst = fmax(worst, sim_seconds(j->end - j->deadline));
	}
	double need = floor((now - worst - 60) / 60) * 60;
	return worst > 0 && need >= 60 ? need : 0;
}

/* STARTUP (c->workload's start-up, else pool c->pool's): the start-up that
 * would have met the late jobs' deadlines (images pre-pulled, weights
 * cached: what is cut is the question of how), else half of it, a fifth,
 * one minute. */
void relax_startup(const struct scenario *sc, const struct results *r, const struct constraint *c,
		   struct finding *f)
{
	const struct workload_spec *ws = relax_workload_of(sc, c);
	const struct pool_spec *ps = pool_of(sc, c);
	bool own = ws && ws->startup > 0;
	sim_time now = own ? ws->startup : ps ? ps->startup : 0;
	if (now <= 0)
		return;
	const char *what = own ? "workloads" : "pools";
	const char *name = own ? ws->name : ps->name;
	double s = sim_seconds(now), meets = ws ? startup_that_meets(r, c->workload, s) : 0;
	double tries[3] = {s / 2, s / 5, 60};
	static const char *const why[3] = {"images pre-pulled", "images pre-pulled, weights cached",
					   "a warm cache"};
	char d[32];
	if (meets > 0) {
		units_format_duration((sim_time)meets * SIM_SECOND, d, sizeof d);
		finding_fix_setf(
			finding_fixf(f, "start-up %s for %s (images pre-pulled or weights cached)",
				     d, name),
			"%s.%s.startup=%s", what, name, d);
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		double t = floor(tries[i]);
		if (t >= s || t < 1 || (i && t >= floor(tries[i - 1])))
			continue;
		units_format_duration((sim_time)t * SIM_SECOND, d, sizeof d);
		finding_fix_setf(finding_fixf(f, "start-up %s for %s (%s)", d, name, why[i]),
				 "%s.%s.startup=%s", what, name, d);
	}
}

/* --- a workload's own windows ----------------------------------------------- */

/* The workload's windows as a --set list, window k from `from` to `to`. */
static void wwindows_text(char *buf, size_t len, const struct workload_spec *ws, size_t k,
			  int32_t from, int32_t to)
{
	static const char *const days[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
	size_t n = (size_t)snprintf(buf, len, "[");
	for (size_t i = 0; i < ws->n_windows && n < len; i++) {
		const struct window *w = &ws->windows[i];
		int32_t fr = i == k ? from : w->from, t = i == k ? to : w->to;
		n += (size_t)snprintf(buf + n, len - n, "%s{from: \"%02d:%02d\", to: \"%02d:%02d\"",
				      i ? ", " : "", (int)(fr / 3600), (int)(fr / 60 % 60),
				      (int)(t / 3600), (int)(t / 60 % 60));
		if (w->days != WINDOW_EVERY_DAY && n < len) {
			n += (size_t)snprintf(buf + n, len - n, ", days: [");
			for (int d = 0, m = 0; d < 7 && n < len; d++)
				if (w->days & 1u << d)
					n += (size_t)snprintf(buf + n, len - n, "%s%s",
							      m++ ? ", " : "", days[d]);
			if (n < len)
				n += (size_t)snprintf(buf + n, len - n, "]");
		}
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "}");
	}
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* WINDOW, a workload's own (c->workload, else every workload with windows
 * that missed its goal): each of its windows closing 1 h or 2 h later or to
 * the length its work needs on the pools it may use, or opening 1 h
 * earlier, shorter than a day; pools' windows are relax_windows'. */
void relax_workload_windows(const struct scenario *sc, const struct results *r,
			    const struct constraint *c, struct finding *f)
{
	bool *waiting = gp_xcalloc(sc->n_workloads + 1, sizeof *waiting);
	bool *usable = gp_xcalloc(sc->n_pools + 1, sizeof *usable);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (c->workload >= 0 ? (size_t)c->workload != w
				     : results_holds(r, ws->name, METRIC_GOAL_MET))
			continue;
		waiting[w] = true;
		diagnose_usable_pools(sc, w, usable);
		int32_t need = relax_window_need(sc, r, waiting, usable);
		waiting[w] = false;
		for (size_t k = 0; k < ws->n_windows && k < 2; k++) {
			const struct window *win = &ws->windows[k];
			int32_t len = (win->to - win->from + 86400) % 86400;
			struct relax_window_move moves[RELAX_WINDOW_MOVES];
			size_t n = relax_window_moves(len, need, false, moves);
			for (size_t m = 0; m < n; m++) {
				char list[1024];
				wwindows_text(list, sizeof list, ws, k,
					      (win->from + moves[m].open + 86400) % 86400,
					      (win->to + moves[m].close + 86400) % 86400);
				finding_fix_setf(
					finding_fixf(
						f, "window %02d:%02d-%02d:%02d of %s %s",
						(int)(win->from / 3600), (int)(win->from / 60 % 60),
						(int)(win->to / 3600), (int)(win->to / 60 % 60),
						ws->name, moves[m].how),
					"workloads.%s.windows=%s", ws->name, list);
			}
		}
	}
	free(waiting);
	free(usable);
}
