/*
 * scenario.c - loading and validating scenarios (see scenario.h): the top
 * level, output and experiment sections, loading and freeing.  The other
 * sections live in scenario_*.c behind scenario_int.h.
 *
 * Each section of the format is a table of key rules.  One table drives the
 * dispatch, the "did you mean" hint for an unknown key and the refusal of
 * keys that the scenario format defines but the simulation does not model yet (a rule
 * without a handler), so that no key is ever silently ignored.  Sections are
 * read in dependency order (pools and queues before the workloads that refer
 * to them); each handler checks one value and reports it at its location,
 * naming what was expected.
 */
#include "gpuplan/scenario.h"

#include "gpuplan/modelcfg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/openb.h"
#include "gpuplan/sha256.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

static int output_db(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_string(ld, v, "db", "a path like results/run.db",
			     &((struct output_spec *)obj)->db);
}

static int output_step(struct loader *ld, const struct ynode *v, void *obj)
{
	((struct output_spec *)obj)->step_loc = v->loc;
	return ld_get_duration(ld, v, "step", true, &((struct output_spec *)obj)->step);
}

static int output_jobs(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_bool(ld, v, "jobs", &((struct output_spec *)obj)->jobs);
}

static int output_requests(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_bool(ld, v, "requests", &((struct output_spec *)obj)->requests);
}

static const struct key_rule output_rules[] = {{"db", output_db},
					       {"step", output_step},
					       {"jobs", output_jobs},
					       {"requests", output_requests}};

/* --- the top level --------------------------------------------------------- */

static int top_name(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_get_scenario_name(ld, v, &ld->sc->name);
}

static int top_seed(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	int64_t seed = 0;
	int rc = ld_get_int(ld, v, "seed", 0, INT64_MAX, &seed);
	ld->sc->seed = (uint64_t)seed;
	return rc;
}

/* kubernetes_version: "1.34" (or 1.34, v1.34, 1.34.2): which release's
 * kube-scheduler the messages follow (docs/placement.md). */
static int top_kube_version(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	const char *s = v->kind == YNODE_SCALAR ? v->value : "";
	s += *s == 'v';
	char *end = NULL;
	long minor = !strncmp(s, "1.", 2) ? strtol(s + 2, &end, 10) : -1;
	if (!end || end == s + 2 || (*end && *end != '.') || minor < SCENARIO_KUBE_MINOR_MIN ||
	    minor > SCENARIO_KUBE_MINOR_MAX) {
		char hint[96];
		snprintf(hint, sizeof hint, "a release from 1.%d to 1.%d, like \"1.%d\"",
			 SCENARIO_KUBE_MINOR_MIN, SCENARIO_KUBE_MINOR_MAX, SCENARIO_KUBE_MINOR);
		return ld_bad_value(ld, v, "kubernetes_version", hint);
	}
	ld->sc->kube_minor = (int32_t)minor;
	return GP_OK;
}

static int top_start(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	if (v->kind != YNODE_SCALAR || units_rfc3339(v->value, &ld->sc->start_epoch))
		return ld_bad_value(ld, v, "start", UNITS_HINT_TIME);
	return GP_OK;
}

static int top_horizon(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	int rc = ld_get_duration(ld, v, "horizon", true, &ld->sc->horizon);
	if (!rc && ld->sc->horizon > SCENARIO_MAX_SPAN)
		return gp_located(ld->err, v->loc,
				  "horizon '%s' is past the %d years gpuplan "
				  "simulates; expected a shorter horizon",
				  v->value, SCENARIO_MAX_YEARS);
	return rc;
}

/* Sections read after the walk, in dependency order (see load_root). */
static int top_later(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)ld, (void)v, (void)obj;
	return GP_OK;
}

static int top_scheduler(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_walk_map(ld, v, "scheduler", "a map like {order: fifo, scoring: MostAllocated}",
			   ld_scheduler_rules, N_OF(ld_scheduler_rules), &ld->sc->scheduler);
}

static int top_output(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_walk_map(ld, v, "output", "a map like {db: results/run.db, step: 5m}",
			   output_rules, N_OF(output_rules), &ld->sc->output);
}

static int cost_share_idle(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"weighted", "even", "none"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "share_idle", names, N_OF(names), &k);
	((struct cost_spec *)obj)->share_idle = (enum share_idle)k;
	return rc;
}

static int cost_idle_by(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"cluster", "pool", "node"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "idle_by", names, N_OF(names), &k);
	((struct cost_spec *)obj)->idle_by = (enum idle_by)k;
	return rc;
}

static const struct key_rule cost_rules[] = {{"share_idle", cost_share_idle},
					     {"idle_by", cost_idle_by}};

static int top_cost(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_walk_map(ld, v, "cost", "a map like {share_idle: weighted, idle_by: pool}",
			   cost_rules, N_OF(cost_rules), &ld->sc->cost);
}

static int experiment_protocol(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"inflation"};
	int p = 0;
	((struct experiment_spec *)obj)->protocol = EXPERIMENT_INFLATION;
	return ld_get_enum(ld, v, "protocol", names, N_OF(names), &p);
}

static int experiment_inflate(struct loader *ld, const struct ynode *v, void *obj)
{
	double *x = &((struct experiment_spec *)obj)->inflate;
	int rc = ld_get_positive(ld, v, "inflate", "a multiple of the GPU capacity like 1.3", x);
	if (!rc && *x > 100)
		return ld_bad_value(ld, v, "inflate", "a multiple of the GPU capacity up to 100");
	return rc;
}

static int experiment_popularity(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "popularity", &((struct experiment_spec *)obj)->popularity);
}

static const struct key_rule experiment_rules[] = {{"protocol", experiment_protocol},
						   {"inflate", experiment_inflate},
						   {"popularity", experiment_popularity}};

static int top_experiment(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	struct experiment_spec *e = &ld->sc->experiment;
	e->loc = v->loc;
	int rc = ld_walk_map(ld, v, "experiment", "a map like {protocol: inflation, inflate: 1.3}",
			     experiment_rules, N_OF(experiment_rules), e);
	return rc ? rc : ld_require(ld, v, "protocol", "experiment", "protocol: inflation");
}

/* The paper's policies (gpu_policy other than best-fit) place whole GPUs and
 * milli shares; the inflation protocol places batch pods with them. */
static int check_experiment(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	for (size_t i = 0; sc->scheduler.gpu_policy != GPU_POLICY_BEST_FIT && i < sc->n_pools;
	     i++) {
		enum sharing_mode m = sc->pools[i].sharing.mode;
		if (m != SHARING_EXCLUSIVE && m != SHARING_FRACTIONAL)
			return gp_located(ld->err, sc->pools[i].sharing.loc,
					  "gpu_policy %s places whole GPUs and milli shares; "
					  "expected pool %s with sharing exclusive or fractional",
					  gpupolicy_names[sc->scheduler.gpu_policy],
					  sc->pools[i].name);
	}
	if (sc->experiment.protocol != EXPERIMENT_INFLATION)
		return GP_OK;
	for (size_t i = 0; i < sc->n_pools; i++) {
		enum sharing_mode m = sc->pools[i].sharing.mode;
		if (m != SHARING_EXCLUSIVE && m != SHARING_FRACTIONAL)
			return gp_located(
				ld->err, sc->pools[i].loc,
				"experiment inflation places whole GPUs and milli shares; "
				"expected pool %s with sharing exclusive or fractional",
				sc->pools[i].name);
		if (sc->pools[i].gpus_per_node > GPUPOLICY_MAX_GPUS)
			return gp_located(ld->err, sc->pools[i].loc, "too many GPUs per node");
	}
	/* The protocol re-samples a pod list's pods up to a multiple of the GPUs;
	 * a job of a timed workload has no place in it (docs/openb.md). */
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		if (w->inference || w->arrival.kind != ARRIVAL_TRACE ||
		    w->arrival.format != TRACE_OPENB)
			return gp_located(ld->err, w->loc,
					  "experiment inflation re-samples an openb pod list; "
					  "expected workload %s with arrival: {trace: PODS.csv, "
					  "format: openb}, or no experiment for a timed run",
					  w->name);
	}
	return GP_OK;
}

static int top_history(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_load_history(ld, v);
}

static int goals_batch(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "goals.batch", false, &((struct goals_spec *)obj)->batch);
}

static int goals_service(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "goals.service", false, &((struct goals_spec *)obj)->service);
}

static const struct key_rule goals_rules[] = {{"batch", goals_batch}, {"service", goals_service}};

static int top_goals(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_walk_map(ld, v, "goals", "a map like {batch: 1h, service: 5m}", goals_rules,
			   N_OF(goals_rules), &ld->sc->goals);
}

/* Every workload's queue goal: its own, else batch work without a deadline
 * gets goals.batch, a service or inference workload goals.service; batch
 * work with a deadline is held to the deadline alone. */
static void resolve_goals(struct scenario *sc)
{
	for (size_t i = 0; i < sc->n_workloads; i++) {
		struct workload_spec *w = &sc->workloads[i];
		if (w->queue_goal_given)
			continue;
		w->queue_goal = w->kind != WORKLOAD_BATCH    ? sc->goals.service
				: !scenario_has_deadlines(w) ? sc->goals.batch
							     : -1;
	}
}

static int top_growth(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	return ld_load_growth(ld, v);
}

static const struct key_rule top_rules[] = {
	{"name", top_name},
	{"seed", top_seed},
	{"start", top_start},
	{"horizon", top_horizon},
	{"kubernetes_version", top_kube_version},
	{"pools", top_later},
	{"workloads", top_later},
	{"queues", top_later},
	{"scheduler", top_scheduler},
	{"goals", top_goals},
	{"cohorts", top_later},
	{"resource_flavors", top_later},
	{"output", top_output},
	{"cost", top_cost},
	{"experiment", top_experiment},
	{"history", top_history},
	{"growth", top_growth},
	{"gpu_types", NULL},
	{"models", NULL},
};

/* Expected jobs of a workload: its count, or rate x span for an open poisson stream. */
static double expected_jobs(const struct scenario *sc, const struct workload_spec *w)
{
	double per = w->gang ? 1 : w->pods; /* pods without gang are jobs of their own */
	if (w->count >= 0)
		return (double)w->count * per;
	double span = sim_seconds(sc->horizon - w->arrival.from);
	return span > 0 ? ceil(w->arrival.rate * span) * per : 0;
}

static int check_vram(struct loader *ld, const struct ynode *item, const struct workload_spec *w);

/*
 * A pool whose time-slicing sets failRequestsGreaterThanOne, or that shares
 * by MPS (the device plugin sets it for MPS whatever the config says:
 * k8s-device-plugin api/config/v1/config.go, "We explicitly set
 * sharing.mps.failRequestsGreaterThanOne = true"), makes the device
 * plugin fail a pod asking for more than one replica at admission
 * (UnexpectedAdmissionError, "request for 'nvidia.com/gpu: 2' too large:
 * maximum request size for shared resources is 1"): a pod that can land
 * there asking for more is refused here rather than failed in the run.
 */
static int check_one_per_pod(struct loader *ld, struct srcloc at, const struct workload_spec *w)
{
	if (w->request != REQUEST_GPUS || w->gpus <= 1)
		return GP_OK;
	for (size_t p = 0; p < ld->sc->n_pools; p++) {
		const struct pool_spec *ps = &ld->sc->pools[p];
		char res[96];
		if (sharing_replicated(&ps->sharing) && ps->sharing.one_per_pod &&
		    scenario_pool_offers(ps, w) && scenario_gpu_spec_allows(w, ps->gpu))
			return gp_located(
				ld->err, at,
				"pool %s %s, so the device "
				"plugin refuses a pod asking for %d replicas ('request for "
				"'%s: %d' too large: maximum request size for "
				"shared resources is 1'); expected gpus: 1, or a gpu_spec "
				"that avoids the pool",
				ps->name,
				ps->sharing.mode == SHARING_MPS
					? "shares by MPS, which the device plugin always runs "
					  "with failRequestsGreaterThanOne"
					: "sets failRequestsGreaterThanOne",
				(int)w->gpus, scenario_resource_name(w, res, sizeof res),
				(int)w->gpus);
	}
	return GP_OK;
}

int32_t scenario_mig_pool_for(const struct scenario *sc, const struct workload_spec *w)
{
	for (size_t p = 0; w->request == REQUEST_MIG && p < sc->n_pools; p++)
		if (sc->pools[p].sharing.mode == SHARING_MIG &&
		    catalog_mig_profile(sc->pools[p].gpu, w->mig_profile))
			return (int32_t)p;
	return -1;
}

/* Every workload asks for a resource that some pool offers, or a MIG profile
 * some MIG pool's GPUs have (memory aside: a pod too large for every unit is
 * a finding of the run, not an input error).  Pods that ask for a profile no
 * layout has pend, as on a real cluster: check warns, and the diagnosis
 * names the layout that would start them. */
static int check_hosted(struct loader *ld, const struct ynode *list)
{
	const struct scenario *sc = ld->sc;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		bool offered = scenario_mig_pool_for(sc, w) >= 0;
		int32_t widest = 0;
		for (size_t p = 0; p < sc->n_pools; p++) {
			const struct pool_spec *ps = &sc->pools[p];
			offered |= scenario_pool_offers(ps, w);
			int32_t most = sharing_max_units(&ps->sharing, ps->gpus_per_node);
			if (scenario_pool_offers(ps, w) && most > widest)
				widest = most;
		}
		const struct ynode *item = list->items[i], *g = ynode_get(item, "gpus");
		struct srcloc at = g ? g->loc : item->loc;
		char res[80];
		if (!offered)
			return gp_located(
				ld->err, at, "no pool offers %s%s; expected a pool with %s",
				w->request == REQUEST_MILLI ? "fractional shares of " : "",
				scenario_resource_name(w, res, sizeof res),
				w->request == REQUEST_MIG ? "a MIG layout that includes it"
				: w->request == REQUEST_MILLI
					? "sharing: fractional"
					: "sharing exclusive, time-slicing, mps or fractional");
		int rc = check_one_per_pod(ld, at, w);
		if (rc)
			return rc;
		if (w->request == REQUEST_GPUS && w->gpus > widest)
			return gp_located(ld->err, at,
					  "no node offering %s has %d GPUs; the largest has %d",
					  scenario_resource_name(w, res, sizeof res), (int)w->gpus,
					  (int)widest);
		rc = check_vram(ld, item, w);
		if (rc)
			return rc;
	}
	return GP_OK;
}

bool scenario_gpu_spec_allows(const struct workload_spec *w, const struct gpu_type *g)
{
	bool ok = w->n_gpu_spec == 0;
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		ok = ok || !strcmp(w->gpu_spec[i], g->name);
	return ok;
}

/*
 * A batch pod whose VRAM exceeds one GPU of every pool that could host it
 * would be OOM-killed at each start (exclusive and time-sliced GPUs do not
 * isolate memory, and an isolated unit is smaller than its GPU): an input
 * error, not a crash loop for the run to find.  A pod too large only for an
 * isolated unit (MPS, MIG, fractional) waits, a finding of the run.
 */
static int check_vram(struct loader *ld, const struct ynode *item, const struct workload_spec *w)
{
	if (w->inference || w->vram_bytes <= 0)
		return GP_OK; /* inference replicas have their own fit check */
	const struct pool_spec *largest = NULL;
	for (size_t p = 0; p < ld->sc->n_pools; p++) {
		const struct pool_spec *ps = &ld->sc->pools[p];
		if (scenario_pool_offers(ps, w) && scenario_gpu_spec_allows(w, ps->gpu) &&
		    (!largest || ps->gpu->memory_bytes > largest->gpu->memory_bytes))
			largest = ps;
	}
	if (!largest || w->vram_bytes <= largest->gpu->memory_bytes)
		return GP_OK;
	const struct ynode *v = ynode_get(item, "vram");
	if (!v)
		v = ynode_get(item, "model");
	if (!v)
		v = ynode_get(item, "model_config");
	char res[80];
	return gp_located(
		ld->err, v ? v->loc : item->loc,
		"vram %.2f GiB does not fit one GPU of any pool that can run %s (the "
		"largest, %s in pool %s, has %.2f GiB), so every start would be "
		"OOM-killed; expected at most %.2f GiB per GPU, or a pool with larger GPUs",
		w->vram_bytes / GP_GIB, scenario_resource_name(w, res, sizeof res),
		largest->gpu->name, largest->name, largest->gpu->memory_bytes / GP_GIB,
		largest->gpu->memory_bytes / GP_GIB);
}

/* A counted poisson stream must arrive within the span gpuplan can simulate:
 * 100 jobs at 1e-10/h would need 1e12 hours, past the end of its clock. */
static int check_arrival_span(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	const double max_s = sim_seconds(SCENARIO_MAX_SPAN);
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct workload_spec *w = &sc->workloads[i];
		if (w->arrival.kind != ARRIVAL_POISSON || w->count < 0)
			continue;
		double mean_span = (double)w->count / w->arrival.rate;
		if (mean_span > max_s / 2)
			return gp_located(ld->err, w->loc,
					  "%lld jobs at rate %g/h arrive over %.3g years on "
					  "average, past the %d years gpuplan simulates; expected "
					  "a rate of at least %g/h",
					  (long long)w->count, w->arrival.rate * 3600,
					  mean_span / (365.0 * 86400), SCENARIO_MAX_YEARS,
					  (double)w->count * 2 / max_s * 3600);
	}
	return GP_OK;
}

/* A limit from the environment variable name, or its default. */
static int env_limit(const char *name, int64_t fallback, int64_t *out, struct gp_err *err)
{
	const char *s = getenv(name);
	*out = fallback;
	if (!s || !*s)
		return GP_OK;
	if (units_integer(s, out) || *out < 1)
		return gp_located(err, (struct srcloc){name, 0, 0},
				  "'%s' is invalid; expected a whole number >= 1", s);
	return GP_OK;
}

static int max_jobs(int64_t *out, struct gp_err *err)
{
	return env_limit("GPUPLAN_MAX_JOBS", SCENARIO_DEFAULT_MAX_JOBS, out, err);
}

sim_time scenario_known_span(const struct scenario *sc)
{
	if (sc->horizon)
		return sc->horizon;
	double last = 0;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		const struct arrival *a = &sc->workloads[i].arrival;
		double t = a->kind == ARRIVAL_AT                   ? (double)a->at
			   : a->kind == ARRIVAL_TRACE && a->n_rows ? (double)a->summary.last_submit
			   : a->kind == ARRIVAL_POISSON && sc->workloads[i].count > 0
				   ? (double)a->from +
					     (double)sc->workloads[i].count / a->rate * SIM_SECOND
				   : 0;
		last = t > last ? t : last;
	}
	return (sim_time)last;
}

/* An explicit output.step must not make more timeseries windows than a run
 * should hold (output.step: 1ms over a year is 3e10 rows); without a step the
 * collector adapts and stays within COLLECT_MAX_WINDOWS. */
static int check_windows(struct loader *ld, int64_t max_windows)
{
	const struct scenario *sc = ld->sc;
	if (sc->output.step <= 0)
		return GP_OK;
	double windows = (double)scenario_known_span(sc) / (double)sc->output.step;
	if (windows <= (double)max_windows)
		return GP_OK;
	return gp_located(ld->err, sc->output.step_loc,
			  "output.step makes %.3g timeseries windows per scope, above the limit "
			  "of %lld; expected a longer step, or no step (it then adapts to the "
			  "span), or raise the limit with the environment variable "
			  "GPUPLAN_MAX_WINDOWS",
			  windows, (long long)max_windows);
}

/* What a run keeps per window, estimated before it runs: a timeseries row
 * per scope (all, each pool, each workload) and an allocation row per
 * workload, for each window (span / output.step, or the collector's
 * COLLECT_MAX_WINDOWS when it adapts).  Refused past GPUPLAN_MAX_ROWS with
 * the figure and what to change: 5 workloads at step: 1m over 600 days took
 * 1.7 GB, 5,000 workloads without a step 3 GB. */
static int check_rows(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	int64_t max_rows = 0;
	int rc = env_limit("GPUPLAN_MAX_ROWS", SCENARIO_DEFAULT_MAX_ROWS, &max_rows, ld->err);
	if (rc)
		return rc;
	/* adaptive: windows of 1m upwards, at most SCENARIO_ADAPTIVE_WINDOWS */
	double span = (double)scenario_known_span(sc), windows = SCENARIO_ADAPTIVE_WINDOWS;
	if (sc->output.step > 0)
		windows = span / (double)sc->output.step;
	else if (sc->horizon && (double)sc->horizon / (double)SIM_MINUTE < windows)
		windows = ceil((double)sc->horizon / (double)SIM_MINUTE);
	windows = windows < 1 ? 1 : windows;
	double scopes = 1.0 + (double)sc->n_pools + (double)sc->n_workloads;
	double rows = windows * (scopes + (double)sc->n_workloads);
	if (rows <= (double)max_rows)
		return GP_OK;
	double step = span * (scopes + (double)sc->n_workloads) / (double)max_rows;
	char least[64] = "";
	if (span > 0)
		units_format_duration((sim_time)ceil(step / (double)SIM_SECOND) * SIM_SECOND, least,
				      sizeof least);
	return gp_located(
		ld->err,
		sc->output.step > 0 ? sc->output.step_loc : (struct srcloc){sc->path, 1, 1},
		"the run would keep %.3g timeseries and allocation rows (%.0f scopes x "
		"%.3g windows, and %zu workloads' allocations), above the limit of "
		"%lld; expected %s%s%s, fewer workloads, or raise the limit with the "
		"environment variable GPUPLAN_MAX_ROWS",
		rows, scopes, windows, sc->n_workloads, (long long)max_rows,
		span > 0 ? "an output.step of at least " : "a horizon and a long output.step",
		least, span > 0 ? "" : "");
}

/* The node slots of all pools: each is a node of the cluster's arrays. */
static int check_nodes(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	int64_t max_nodes = 0;
	int rc = env_limit("GPUPLAN_MAX_NODES", SCENARIO_DEFAULT_MAX_NODES, &max_nodes, ld->err);
	double total = 0;
	for (size_t i = 0; !rc && i < sc->n_pools; i++) {
		total += (double)scenario_pool_slots(&sc->pools[i]);
		if (total > (double)max_nodes)
			return gp_located(
				ld->err, sc->pools[i].loc,
				"the pools hold %.0f nodes in all by here, above the limit "
				"of %lld; expected fewer nodes (or a lower autoscale max), "
				"or raise the limit with the environment variable "
				"GPUPLAN_MAX_NODES",
				total, (long long)max_nodes);
	}
	return rc;
}

static int check_job_limit(struct loader *ld)
{
	const struct scenario *sc = ld->sc;
	double total = 0;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		total += expected_jobs(sc, &sc->workloads[i]);
		if (total > (double)ld->max_jobs)
			return gp_located(
				ld->err, sc->workloads[i].loc,
				"the scenario submits %.0f jobs, above the limit of %lld; "
				"expected fewer, or raise the limit with the environment "
				"variable GPUPLAN_MAX_JOBS",
				total, (long long)ld->max_jobs);
	}
	return GP_OK;
}

static int load_root(struct loader *ld, const struct ynode *root)
{
	struct scenario *sc = ld->sc;
	int rc = ld_walk_map(ld, root, "scenario", "a map with name, pools and workloads",
			     top_rules, N_OF(top_rules), NULL);
	static const struct ld_need need[] = {{"name", "a name like eval-window"},
					      {"pools", "a list of pools"},
					      {"workloads", "a list of workloads"}};
	if (!rc)
		rc = ld_require_all(ld, root, "scenario", need, N_OF(need));
	if (!rc)
		rc = ld_load_pools(ld, ynode_get(root, "pools"));
	if (!rc)
		rc = ld_load_cohorts(ld, ynode_get(root, "cohorts"));
	if (!rc)
		rc = ld_load_flavors(ld, ynode_get(root, "resource_flavors"));
	if (!rc)
		rc = ld_load_queues(ld, ynode_get(root, "queues"));
	if (!rc) /* a routed service's groups become workloads of their own */
		rc = ld_route_expand(ld, ynode_get(root, "workloads"));
	if (!rc)
		rc = ld_load_workloads(ld, ynode_get(root, "workloads"));
	if (!rc)
		rc = ld_route_apply(ld);
	if (!rc)
		ld_apply_growth(ld);
	if (!rc)
		rc = check_experiment(ld);
	if (!rc)
		rc = check_hosted(ld, ynode_get(root, "workloads"));
	/* After the checks that map workloads to their YAML items one to one. */
	if (!rc && sc->experiment.protocol == EXPERIMENT_NONE)
		rc = ld_expand_openb_workloads(ld);
	if (!rc)
		resolve_goals(sc);
	if (!rc)
		rc = check_job_limit(ld);
	if (!rc)
		rc = check_arrival_span(ld);
	int64_t max_windows = 0;
	if (!rc)
		rc = env_limit("GPUPLAN_MAX_WINDOWS", SCENARIO_DEFAULT_MAX_WINDOWS, &max_windows,
			       ld->err);
	if (!rc)
		rc = check_windows(ld, max_windows);
	sc->output.max_windows = max_windows;
	if (!rc)
		rc = check_rows(ld);
	if (!rc)
		rc = check_nodes(ld);
	if (!rc)
		ld_gather_placeholders(ld, root);
	if (!rc && !sc->output.db) {
		size_t n = strlen(sc->name) + sizeof "results/.db";
		sc->output.db = gp_xmalloc(n);
		snprintf(sc->output.db, n, "results/%s.db", sc->name);
	}
	return rc;
}

/* --- loading ----------------------------------------------------------------- */

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return gp_xstrdup(".");
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *dir = gp_xmalloc(n + 1);
	memcpy(dir, path, n);
	dir[n] = '\0';
	return dir;
}

static int read_file(const char *path, char **text, size_t *len, struct gp_err *err)
{
	const char *why;
	if (gp_read_input(path, text, len, &why))
		return gp_located(err, (struct srcloc){path, 0, 0}, "cannot read: %s", why);
	return GP_OK;
}

/* Records the applied override KEY=VALUE for the params table.  A key set
 * again drops its earlier record, whose value the run did not use (--seed N
 * goes after --set seed=M): params say what the run ran with, once per key,
 * in the order that reproduces it. */
static void record_param(struct scenario *sc, const char *key, size_t keylen, const char *value)
{
	for (size_t i = 0; i < sc->n_params; i++) {
		struct param *old = &sc->params[i];
		if (strlen(old->key) != keylen || memcmp(old->key, key, keylen))
			continue;
		free(old->key);
		free(old->value);
		memmove(old, old + 1, (sc->n_params - i - 1) * sizeof *old);
		sc->n_params--;
		break; /* at most one: each was dropped when its key came again */
	}
	struct param *p = &sc->params[sc->n_params++];
	p->key = gp_xmalloc(keylen + 1);
	memcpy(p->key, key, keylen);
	p->key[keylen] = '\0';
	p->value = gp_xstrdup(value);
}

/* Applies the --set overrides in order, then the typed ones, and records
 * them for the params table. */
static int apply_sets(struct scenario *sc, const char *const *sets, size_t n,
		      const struct override *ov, size_t n_ov, struct gp_err *err)
{
	sc->params = gp_xcalloc(n + n_ov + 1, sizeof *sc->params);
	for (size_t i = 0; i < n; i++) {
		char *alias = ld_route_alias(sc->tree->root, sets[i]);
		int rc = ytree_set(sc->tree, alias ? alias : sets[i], err);
		free(alias);
		if (rc)
			return rc;
		const char *eq = strchr(sets[i], '=');
		record_param(sc, sets[i], (size_t)(eq - sets[i]), eq + 1);
	}
	for (size_t i = 0; i < n_ov; i++) {
		char *alias = ld_route_alias(sc->tree->root, ov[i].key);
		int rc = ytree_set_key(sc->tree, alias ? alias : ov[i].key, ov[i].value, err);
		free(alias);
		if (rc)
			return rc;
		record_param(sc, ov[i].key, strlen(ov[i].key), ov[i].value);
	}
	return GP_OK;
}

static int load(struct scenario *sc, const char *const *sets, size_t n_sets,
		const struct override *ov, size_t n_ov, struct gp_err *err)
{
	struct loader ld = {.sc = sc, .err = err};
	int rc = max_jobs(&ld.max_jobs, err);
	if (rc)
		return rc;
	char *text = NULL;
	size_t len = 0;
	rc = read_file(sc->path, &text, &len, err);
	if (rc)
		return rc;
	sha256_hex(text, len, sc->sha256);
	rc = ytree_parse(sc->path, text, len, &sc->tree, err);
	free(text);
	if (!rc)
		rc = apply_sets(sc, sets, n_sets, ov, n_ov, err);
	if (!rc)
		rc = load_root(&ld, sc->tree->root);
	ld_route_free(&ld);
	/* what the scenario keeps is copied (schedules and the names its
	 * locations point to are the tree's strings): the nodes go */
	if (!rc)
		ytree_drop_nodes(sc->tree);
	return rc;
}

int scenario_load(const char *path, const char *const *sets, size_t n_sets, struct scenario **out,
		  struct gp_err *err)
{
	return scenario_load_overrides(path, sets, n_sets, NULL, 0, out, err);
}

int scenario_load_overrides(const char *path, const char *const *sets, size_t n_sets,
			    const struct override *ov, size_t n_ov, struct scenario **out,
			    struct gp_err *err)
{
	struct scenario *sc = gp_xcalloc(1, sizeof *sc);
	sc->path = gp_xstrdup(path);
	sc->dir = dir_of(path);
	sc->seed = 1;
	sc->growth = 1;
	sc->start_epoch = DEFAULT_START_EPOCH;
	sc->kube_minor = SCENARIO_KUBE_MINOR;
	sc->goals = (struct goals_spec){SCENARIO_GOAL_BATCH, SCENARIO_GOAL_SERVICE};
	/* kube-scheduler's defaults: NodeResourcesFit LeastAllocated over cpu and memory */
	sc->scheduler = (struct scheduler_spec){.order = ORDER_PRIORITY,
						.window_policy = WINDOW_FIT,
						.gpu_policy = GPU_POLICY_BEST_FIT};
	sc->scheduler.scoring.type = SCORING_LEAST_ALLOCATED;
	sc->scheduler.scoring.weight[SCORE_CPU] = sc->scheduler.scoring.weight[SCORE_MEMORY] = 1;
	sc->experiment = (struct experiment_spec){EXPERIMENT_NONE, 1.3, 0.95, {NULL, 0, 0}};
	sc->output = (struct output_spec){
		.db = NULL, .step = DEFAULT_STEP, .jobs = true, .requests = false};
	int rc = load(sc, sets, n_sets, ov, n_ov, err);
	if (rc) {
		scenario_free(sc);
		sc = NULL;
	}
	*out = sc;
	return rc;
}

/* --- freeing and queries --------------------------------------------------- */

static void free_kvs(struct kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void scenario_pool_free(struct pool_spec *p)
{
	free(p->name);
	free(p->trace_path);
	free_kvs(p->labels, p->n_labels);
	for (size_t i = 0; i < p->n_taints; i++) {
		free(p->taints[i].key);
		free(p->taints[i].value);
	}
	free(p->taints);
	free(p->windows);
	free(p->sharing.layout);
	free(p->gpu_own);
}

void ld_free_workload(struct workload_spec *w)
{
	if (w->inference) {
		free(w->inference->requests.trace_path);
		free(w->inference->requests.rows);
		free(w->inference->service);
		free(w->inference->disagg);
		free(w->inference);
	}
	free(w->name);
	free(w->arrival.trace_path);
	free(w->arrival.rows);
	trace_summary_free(&w->arrival.summary);
	openb_free_pods(w->arrival.pods, w->arrival.n_pods);
	free_kvs(w->node_selector, w->n_node_selector);
	free_kvs(w->labels, w->n_labels);
	free(w->namespace);
	for (size_t i = 0; i < w->n_tolerations; i++) {
		free(w->tolerations[i].key);
		free(w->tolerations[i].value);
	}
	free(w->tolerations);
	for (size_t i = 0; i < w->n_gpu_spec; i++)
		free(w->gpu_spec[i]);
	free(w->gpu_spec);
	for (size_t i = 0; i < w->n_affinity; i++) {
		free(w->affinity[i].key);
		for (size_t k = 0; k < w->affinity[i].n_values; k++)
			free(w->affinity[i].values[k]);
		free(w->affinity[i].values);
	}
	free(w->affinity);
	free(w->spread.key);
	free(w->mig_profile);
	free(w->windows);
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n_pools; i++)
		scenario_pool_free(&sc->pools[i]);
	free(sc->pools);
	for (size_t i = 0; i < sc->n_workloads; i++)
		ld_free_workload(&sc->workloads[i]);
	free(sc->workloads);
	for (size_t i = 0; i < sc->n_queues; i++) {
		struct queue_spec *q = &sc->queues[i];
		free(q->name);
		free(q->cohort);
		for (size_t k = 0; k < q->n_quota; k++)
			free(q->quota[k].resource);
		free(q->quota);
		ld_free_groups(q);
	}
	free(sc->queues);
	for (size_t i = 0; i < sc->n_flavors; i++)
		ld_free_flavor(&sc->flavors[i]);
	free(sc->flavors);
	for (size_t i = 0; i < sc->n_expander_priorities; i++)
		free(sc->expander_priorities[i].pattern);
	free(sc->expander_priorities);
	for (size_t i = 0; i < sc->n_cohorts; i++) {
		free(sc->cohorts[i].name);
		free(sc->cohorts[i].parent);
	}
	free(sc->cohorts);
	for (size_t i = 0; i < sc->n_params; i++) {
		free(sc->params[i].key);
		free(sc->params[i].value);
	}
	free(sc->params);
	for (size_t i = 0; i < sc->n_models; i++)
		modelcfg_free(sc->models[i]);
	free(sc->models);
	for (size_t i = 0; i < sc->n_dist_values; i++)
		free(sc->dist_values[i]);
	free(sc->dist_values);
	ld_free_placeholders(sc);
	free(sc->output.db);
	free(sc->name);
	free(sc->path);
	free(sc->dir);
	ytree_free(sc->tree);
	free(sc);
}

/* The key rules of a section a --set path may name under its items (or,
 * for scheduler, itself); NULL: none. */
static const struct key_rule *section_rules(const char *section, size_t *n)
{
	if (!strcmp(section, "pools"))
		return ld_pool_rules(n);
	if (!strcmp(section, "workloads"))
		return ld_workload_rules(n);
	if (!strcmp(section, "queues"))
		return ld_queue_rules(n);
	if (!strcmp(section, "cohorts"))
		return ld_cohort_rules(n);
	if (!strcmp(section, "scheduler")) {
		*n = N_OF(ld_scheduler_rules);
		return ld_scheduler_rules;
	}
	return NULL;
}

bool scenario_format_key(const char *section, const char *key, char *known, size_t len)
{
	size_t n = 0;
	const struct key_rule *rules = section_rules(section, &n);
	const char *names[64];
	size_t k = 0;
	bool found = false;
	for (size_t i = 0; i < n && k < N_OF(names); i++) {
		found |= !strcmp(rules[i].key, key);
		names[k++] = rules[i].key;
	}
	ld_join(known, len, names, k, ", ");
	return found;
}

int scenario_pool_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_pools; i++)
		if (sc->pools[i].name && !strcmp(sc->pools[i].name, name))
			return (int)i;
	return -1;
}

int scenario_workload_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_workloads; i++)
		if (sc->workloads[i].name && !strcmp(sc->workloads[i].name, name))
			return (int)i;
	return -1;
}

int scenario_queue_index(const struct scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_queues; i++)
		if (sc->queues[i].name && !strcmp(sc->queues[i].name, name))
			return (int)i;
	return -1;
}

int64_t scenario_capacity_gpus(const struct scenario *sc)
{
	int64_t gpus = 0;
	for (size_t i = 0; i < sc->n_pools; i++)
		gpus += (int64_t)sc->pools[i].nodes * sc->pools[i].gpus_per_node;
	return gpus;
}

int64_t scenario_job_count(const struct scenario *sc)
{
	double total = 0;
	for (size_t i = 0; i < sc->n_workloads; i++)
		total += expected_jobs(sc, &sc->workloads[i]);
	return total >= 9.2e18 ? INT64_MAX : (int64_t)total;
}

const char *scenario_resource_name(const struct workload_spec *w, char *buf, size_t len)
{
	if (w->request == REQUEST_MIG)
		snprintf(buf, len, "nvidia.com/mig-%s", w->mig_profile);
	else if (w->shared)
		snprintf(buf, len, "nvidia.com/gpu.shared");
	else
		snprintf(buf, len, "nvidia.com/gpu");
	return buf;
}

struct sharing_ask scenario_ask(const struct workload_spec *w)
{
	return (struct sharing_ask){w->request,     w->gpus,       w->milli,
				    w->mig_profile, w->vram_bytes, w->shared};
}

int scenario_goal_override(const char *value, char *set, size_t len, struct gp_err *err)
{
	const char *eq = strchr(value, '=');
	if (!eq || eq == value || !eq[1])
		return gp_errorf(err, GP_EINPUT,
				 "--goal '%s': expected KIND=DURATION or WORKLOAD=DURATION, like "
				 "batch=2h, service=5m or train=30m",
				 value);
	size_t n = (size_t)(eq - value);
	if (n > SCENARIO_MAX_NAME || strlen(eq + 1) > 32 || len < SCENARIO_MAX_NAME + 64)
		return gp_errkindf(err, GP_ERR_LIMIT, GP_EINPUT, "--goal '%.40s...': too long",
				   value);
	if ((n == 5 && !strncmp(value, "batch", 5)) || (n == 7 && !strncmp(value, "service", 7)))
		snprintf(set, len, "goals.%.*s=%s", (int)n, value, eq + 1);
	else
		snprintf(set, len, "workloads.%.*s.goal={queue_p95: %s}", (int)n, value, eq + 1);
	return GP_OK;
}

const char *scenario_pool_label(const struct pool_spec *p, const char *key)
{
	for (size_t i = 0; i < p->n_labels; i++)
		if (!strcmp(p->labels[i].key, key))
			return p->labels[i].value;
	if (!strcmp(key, "nvidia.com/gpu.product") && p->gpu && p->gpu->product)
		return p->gpu->product;
	if (!strcmp(key, SCENARIO_LABEL_POOL))
		return p->name;
	return NULL;
}

bool scenario_pool_offers(const struct pool_spec *p, const struct workload_spec *w)
{
	struct sharing_ask a = scenario_ask(w);
	return sharing_offers(&p->sharing, &a);
}

double scenario_unit_memory(const struct pool_spec *p, const struct workload_spec *w)
{
	struct sharing_ask a = scenario_ask(w);
	return sharing_unit_memory(&p->sharing, p->gpu, &a);
}

double scenario_gpu_equivalent(const struct pool_spec *p, const struct workload_spec *w)
{
	struct sharing_ask a = scenario_ask(w);
	return sharing_equivalent(&p->sharing, p->gpu, p->gpus_per_node, &a);
}

const char *scenario_money_unit(const struct scenario *sc)
{
	return sc->money_unit[0] ? sc->money_unit : "usd";
}

const struct price *scenario_on_demand(const struct pool_spec *p)
{
	return p->spot.on ? &p->on_demand : &p->price;
}

/* scenario_gpu_rate's GPUs of two prices (mask not 0). */
double scenario_gpu_rate_committed(const struct pool_spec *p, int32_t first, uint64_t mask,
				   double equivalent)
{
	double charged = equivalent * sharing_charge(&p->sharing);
	int32_t n = __builtin_popcountll(mask);
	double rate = 0;
	for (uint64_t m = mask; m; m &= m - 1) {
		int32_t g = first + __builtin_ctzll(m);
		rate += g < p->price.committed ? p->price.committed_gpu_hour : p->price.gpu_hour;
	}
	return charged * rate / n;
}

const char *scenario_root_cohort(const struct scenario *sc, size_t q)
{
	const char *name = sc->queues[q].cohort;
	int k = name ? ld_cohort_index(sc, name) : -1;
	/* the loader refused loops: the parents end at a root */
	for (; k >= 0 && sc->cohorts[k].parent_index >= 0; k = sc->cohorts[k].parent_index)
		;
	return k >= 0 ? sc->cohorts[k].name : name;
}

const char *scenario_namespace(const struct workload_spec *w)
{
	return w->namespace ? w->namespace : "default";
}

const char *scenario_label(const struct workload_spec *w, const char *key)
{
	for (size_t k = 0; k < w->n_labels; k++)
		if (!strcmp(w->labels[k].key, key))
			return w->labels[k].value;
	return NULL;
}
