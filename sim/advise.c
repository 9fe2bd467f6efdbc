/*
 * advise.c - the what-if runs the diagnosis suggests (see advise.h).
 *
 * An alternative is a label and a few --set overrides on top of the user's.
 * The base run's scenario and findings decide which alternatives there are;
 * each runs like `gpuplan run` would (load, simulate, write), so its row in
 * the database has its overrides in params and can be rerun by hand.
 */
#include "gpuplan/advise.h"
#include "gpuplan/placement.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/infer.h"
#include "gpuplan/report.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"
#include "gpuplan/run.h"
#include "gpuplan/ytree.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct plan {
	struct advise_row *alts; /* labels and sets only */
	size_t n, cap;
};

/* A new alternative, unless one with the same label is planned already. */
static struct advise_row *plan_add(struct plan *pl, const char *fmt, ...) GP_PRINTF(2, 3);

static struct advise_row *plan_add(struct plan *pl, const char *fmt, ...)
{
	char label[ADVISE_LABEL];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(label, sizeof label, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < pl->n; i++)
		if (!strcmp(pl->alts[i].label, label))
			return NULL;
	GP_GROW(pl->alts, pl->cap, pl->n + 1);
	struct advise_row *a = &pl->alts[pl->n++];
	memset(a, 0, sizeof *a);
	snprintf(a->label, sizeof a->label, "%s", label);
	return a;
}

static void set(struct advise_row *a, const char *fmt, ...) GP_PRINTF(2, 3);

static void set(struct advise_row *a, const char *fmt, ...)
{
	if (!a || a->n_sets >= ADVISE_MAX_SETS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->sets[a->n_sets++], sizeof a->sets[0], fmt, ap);
	va_end(ap);
}

/* --- running --------------------------------------------------------------- */

/* The row's figures from a run's metrics; meets: every workload met its own
 * goal (metrics_goals). */
static void fill_row(struct advise_row *row, const struct results *r)
{
	double failed = results_metric(r, "all", "jobs_failed");
	double waiting = results_metric(r, "all", "jobs_waiting");
	row->peak_demand = results_metric(r, "all", "peak_demand_gpus");
	row->queue_p95 = results_metric(r, "all", "queue_time_p95_s");
	row->waited = results_metric(r, "all", "wait_so_far_max_s");
	row->deadline_pct = results_metric(r, "all", "deadline_met_pct");
	row->slo_pct = results_metric(r, "all", "slo_attainment_pct");
	row->cost = results_metric(r, "all", "cost_total");
	row->cost_per_verified = results_metric(r, "all", "cost_per_verified_result");
	row->missed = results_metric(r, "all", "goals_missed");
	row->bill_day = results_metric(r, "all", "cost_per_day");
	row->per_job = results_metric(r, "all", "cost_per_verified_job");
	row->per_request = results_metric(r, "all", "cost_per_verified_request");
	row->left = (failed > 0 ? failed : 0) + (waiting > 0 ? waiting : 0);
	row->meets = results_metric(r, "all", "goal_met") >= 1;
}

/* The GPU policies of the openb paper: scheduler plugins (FGD's, the
 * packing ones), not in a stock kube-scheduler or the device plugin. */
static const char *const plugin_policies[] = {"fgd", "gpu-packing", "dot-product",
					      "gpu-clustering"};

/* What the row's overrides need beyond stock components, and what its
 * narrower weights cost in quality (from the loaded scenario sc). */
static void mark_row(struct advise_row *row, const struct scenario *sc)
{
	row->note[0] = '\0';
	row->plugin = row->quantized = false;
	for (size_t i = 0; i < row->n_sets; i++) {
		const char *x = row->sets[i];
		for (size_t k = 0; k < sizeof plugin_policies / sizeof *plugin_policies; k++) {
			char want[64];
			snprintf(want, sizeof want, "scheduler.gpu_policy=%s", plugin_policies[k]);
			row->plugin |= !strcmp(x, want);
		}
		const char *q = strstr(x, ".quantization=");
		if (strncmp(x, "workloads.", 10) || !q)
			continue;
		row->quantized = true;
		char name[SCENARIO_MAX_NAME + 1];
		snprintf(name, sizeof name, "%.*s", (int)(q - x - 10), x + 10);
		int w = scenario_workload_index(sc, name);
		size_t n = strlen(row->note);
		if (w >= 0 && sc->workloads[w].pass_rate < 1)
			snprintf(row->note + n, sizeof row->note - n,
				 "%s%s in %s passes verification %.1f%% of the time", n ? "; " : "",
				 name, q + 14, 100 * sc->workloads[w].pass_rate);
		else if (w >= 0)
			snprintf(
				row->note + n, sizeof row->note - n,
				"%s%s's quality in %s is not in the scenario (quality: {pass_rate: "
				"...}): measure it before relying on it",
				n ? "; " : "", name, q + 14);
	}
	size_t n = strlen(row->label);
	if (row->plugin && !strstr(row->label, "(needs a scheduler plugin)"))
		snprintf(row->label + n, sizeof row->label - n, " (needs a scheduler plugin)");
}

/* Runs the spec's scenario with the row's overrides and writes it to st.
 * With keep_sc/keep_r, hands the scenario and results to the caller. */
static int run_row(const struct advise_spec *sp, struct store *st, struct advise_row *row,
		   struct scenario **keep_sc, struct results *keep_r, struct gp_err *err)
{
	size_t n = sp->n_sets;
	const char **sets = gp_xcalloc(n + ADVISE_MAX_SETS + 1, sizeof *sets);
	if (n)
		memcpy(sets, sp->sets, n * sizeof *sets);
	for (size_t i = 0; i < row->n_sets; i++)
		sets[n++] = row->sets[i];
	struct scenario *sc = NULL;
	struct results r;
	results_init(&r);
	int rc = scenario_load(sp->scenario, sets, n, &sc, err);
	if (!rc)
		rc = run_simulate(sc, &r, err);
	if (!rc)
		rc = store_write_run(st, sc, &r, &row->run_id, err);
	if (!rc) {
		fill_row(row, &r);
		mark_row(row, sc);
	}
	if (!rc && keep_sc) {
		*keep_sc = sc;
		*keep_r = r;
	} else {
		results_free(&r);
		scenario_free(sc);
	}
	free(sets);
	return rc;
}

/* --- what to try ----------------------------------------------------------- */

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
static void plan_replicas(struct plan *pl, const struct scenario *sc, size_t p)
{
	const struct pool_spec *ps = &sc->pools[p];
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
		set(plan_add(pl, "%s on %s", name, ps->name),
		    "pools.%s.sharing={mode: %s, replicas: %d}", ps->name,
		    tries[t].mode == SHARING_MPS ? "mps" : "time-slicing", (int)tries[t].replicas);
	}
}

/* Idle culling of the mostly idle services pool p hosts (notebooks, dev
 * pods): the cheapest fix, no hardware and no sharing.  An hour, as
 * JupyterHub's culler is often set (--timeout=3600), and the diagnosis'
 * own threshold of idleness. */
static void plan_culling(struct plan *pl, const struct scenario *sc, size_t p)
{
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (ws->kind != WORKLOAD_SERVICE || ws->cull_after > 0 ||
		    !(ws->gpu_busy < DIAGNOSE_IDLE) || !hosts(&sc->pools[p], ws))
			continue;
		set(plan_add(pl, "idle_cull %s after 1h", ws->name),
		    "workloads.%s.idle_cull={after: 1h, threshold: %g}", ws->name, DIAGNOSE_IDLE);
	}
}

/* The workloads pool p hosts when each is a one-GPU workload hosted nowhere
 * else (their requests can change to a MIG instance or a share); 0 otherwise. */
static size_t movable(const struct scenario *sc, size_t p, size_t *ws)
{
	size_t n = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *x = &sc->workloads[w];
		if (!hosts(&sc->pools[p], x))
			continue;
		if (x->request != REQUEST_GPUS || x->gpus != 1 || x->inference ||
		    n >= ADVISE_MAX_SETS - 1)
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

/* A MIG layout of the profile that holds the largest pod, and fractional shares. */
static void plan_partitions(struct plan *pl, const struct scenario *sc, size_t p)
{
	const struct pool_spec *ps = &sc->pools[p];
	size_t ws[ADVISE_MAX_SETS];
	size_t n = movable(sc, p, ws);
	if (!n)
		return;
	size_t largest = ws[0];
	for (size_t i = 1; i < n; i++)
		if (sc->workloads[ws[i]].vram_bytes > sc->workloads[largest].vram_bytes)
			largest = ws[i];
	struct diagnose_option mig, frac;
	if (option_of(ps, &sc->workloads[largest], SHARING_MIG, &mig)) {
		struct advise_row *a =
			plan_add(pl, "MIG %s x%d on %s", mig.mig->name, (int)mig.per_gpu, ps->name);
		char layout[ADVISE_SET] = "";
		for (int32_t k = 0; k < mig.per_gpu; k++)
			snprintf(layout + strlen(layout), sizeof layout - strlen(layout), "%s%s",
				 k ? ", " : "", mig.mig->name);
		set(a, "pools.%s.sharing={mode: mig, layout: [%s]}", ps->name, layout);
		for (size_t i = 0; i < n; i++)
			set(a, "workloads.%s.gpus={mig: %s}", sc->workloads[ws[i]].name,
			    mig.mig->name);
	}
	bool all = true;
	for (size_t i = 0; i < n && all; i++)
		all = option_of(ps, &sc->workloads[ws[i]], SHARING_FRACTIONAL, &frac);
	if (!all)
		return;
	struct advise_row *a =
		n == 1 ? plan_add(pl, "fractional %d milli on %s", (int)frac.milli, ps->name)
		       : plan_add(pl, "fractional shares on %s", ps->name);
	set(a, "pools.%s.sharing={mode: fractional}", ps->name);
	for (size_t i = 0; i < n; i++) {
		option_of(ps, &sc->workloads[ws[i]], SHARING_FRACTIONAL, &frac);
		set(a, "workloads.%s.gpus={milli: %d}", sc->workloads[ws[i]].name, (int)frac.milli);
	}
}

/* Narrower weights for every workload with a model; with time-slicing on an
 * exclusive pool whose memory finding says pods do not fit two a GPU. */
static void plan_quantization(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	static const enum quant qs[] = {QUANT_INT8, QUANT_INT4};
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		for (size_t i = 0; ws->model && i < 2; i++) {
			if (footprint_quant_weight_bytes(qs[i]) >=
			    footprint_quant_weight_bytes((enum quant)ws->quantization))
				continue;
			set(plan_add(pl, "%s weights for %s", footprint_quant_name(qs[i]),
				     ws->name),
			    "workloads.%s.quantization=%s", ws->name, footprint_quant_name(qs[i]));
		}
	}
	for (size_t f = 0; f < r->n_findings; f++) {
		int p = r->findings[f].pool;
		if (r->findings[f].step != FINDING_MEMORY || p < 0 ||
		    sc->pools[p].sharing.mode != SHARING_EXCLUSIVE)
			continue;
		const struct pool_spec *ps = &sc->pools[p];
		for (size_t w = 0; w < sc->n_workloads; w++) {
			const struct workload_spec *ws = &sc->workloads[w];
			/* The widest format that fits two a GPU, and the one that fits four. */
			for (int32_t k = 2; k <= 4 && hosts(ps, ws); k *= 2) {
				enum quant q;
				double vram, freed;
				if (!diagnose_quant_fit(ps, ws, k, &q, &vram, &freed))
					continue;
				struct advise_row *a = plan_add(
					pl, "%s weights for %s, time-slicing x%d on %s",
					footprint_quant_name(q), ws->name, (int)k, ps->name);
				set(a, "workloads.%s.quantization=%s", ws->name,
				    footprint_quant_name(q));
				set(a, "pools.%s.sharing={mode: time-slicing, replicas: %d}",
				    ps->name, (int)k);
			}
		}
	}
}

/* An inference service that missed its goal: max_batch raised to the
 * sequences its KV cache holds (vLLM's max_num_seqs; capped at
 * ADVISE_MAX_BATCH), with max_batched_tokens to match; and a low
 * memory_fraction raised together with int8 weights (vLLM's
 * gpu_memory_utilization and a quantized checkpoint). */
#define ADVISE_MAX_BATCH  1024
#define ADVISE_MAX_TOKENS 8192

static void plan_inference(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		const struct inference_spec *is = ws->inference;
		if (!is || !(results_metric(r, ws->name, "goal_met") < 1))
			continue;
		int64_t seqs = 256;
		for (size_t p = 0; ws->model && p < sc->n_pools; p++) {
			if (!hosts(&sc->pools[p], ws))
				continue;
			/* Without memory_fraction the server is sized for its batch:
			 * what the GPU allows is vLLM's default utilization, 0.9. */
			double mem = is->memory_fraction > 0
					     ? infer_server_memory(&sc->pools[p], ws)
					     : 0.9 * sc->pools[p].gpu->memory_bytes;
			struct footprint fp;
			footprint_compute(ws->model, (enum quant)ws->quantization,
					  (enum quant)is->kv_cache, is->tensor_parallel, mem, &fp);
			seqs = footprint_max_sequences(&fp, is->context);
			break;
		}
		seqs = seqs > ADVISE_MAX_BATCH ? ADVISE_MAX_BATCH : seqs;
		if (seqs > is->max_batch) {
			struct advise_row *a =
				plan_add(pl, "max_batch %lld for %s", (long long)seqs, ws->name);
			set(a, "workloads.%s.max_batch=%lld", ws->name, (long long)seqs);
			if (is->max_batched_tokens < ADVISE_MAX_TOKENS)
				set(a, "workloads.%s.max_batched_tokens=%d", ws->name,
				    ADVISE_MAX_TOKENS);
		}
		if (ws->model && is->memory_fraction > 0 && is->memory_fraction < 0.9 &&
		    footprint_quant_weight_bytes(QUANT_INT8) <
			    footprint_quant_weight_bytes((enum quant)ws->quantization)) {
			struct advise_row *a = plan_add(
				pl, "memory_fraction 0.9 with int8 weights for %s", ws->name);
			set(a, "workloads.%s.memory_fraction=0.9", ws->name);
			set(a, "workloads.%s.quantization=int8", ws->name);
		}
	}
}

/* The pool's windows as a --set list, window k from `from` to `to`. */
static void windows_text(struct gp_sbuf *b, const struct pool_spec *p, size_t k, int32_t from,
			 int32_t to)
{
	static const char *const days[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
	gp_sb_printf(b, "[");
	for (size_t i = 0; i < p->n_windows; i++) {
		const struct window *w = &p->windows[i];
		int32_t f = i == k ? from : w->from, t = i == k ? to : w->to;
		gp_sb_printf(b, "%s{from: \"%02d:%02d\", to: \"%02d:%02d\"", i ? ", " : "",
			     (int)(f / 3600), (int)(f / 60 % 60), (int)(t / 3600),
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

static void add_toleration(char *buf, size_t len, const char *key, bool exists, const char *value,
			   int effect);

/* Idle holders of whole GPUs (notebooks, idle services: one-GPU pods busy
 * under DIAGNOSE_IDLE that met their goals) in pool p, where other work
 * missed its goal, moved to a small pool of their own, as people do: time-sliced (x4, else x2, as
 * their VRAM allows), tainted for them alone and selected by them, sized
 * for the GPUs they held at most, its nodes taken from p (the rest of p
 * keeps whole GPUs for the work that waited).  Sharing p itself would
 * time-slice the trainers beside them too. */
static void plan_shared_pool(struct plan *pl, const struct scenario *sc, const struct results *r,
			     size_t p)
{
	const struct pool_spec *ps = &sc->pools[p];
	struct {
		size_t n_members;
		int32_t members[2];
	} h = {0}, *fd = &h; /* the holders: one-GPU pods under DIAGNOSE_IDLE busy that met
			     * their goals, beside work on p that missed its own */
	bool missed = false;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (!hosts(ps, ws))
			continue;
		bool met = results_metric(r, ws->name, "goal_met") >= 1;
		missed |= !met;
		if (met && ws->request == REQUEST_GPUS && ws->gpus == 1 && !ws->inference &&
		    ws->gpu_busy < DIAGNOSE_IDLE && h.n_members < 2)
			h.members[h.n_members++] = (int32_t)w;
	}
	if (!missed || !h.n_members || ps->autoscale.on || ps->n_windows || ps->spot.on ||
	    ps->sharing.mode != SHARING_EXCLUSIVE || strlen(ps->name) > SCENARIO_MAX_NAME - 8)
		return;
	int32_t replicas = 0;
	double held = 0;
	for (int32_t k = 4; k >= 2 && !replicas; k /= 2) {
		struct diagnose_option o = {SHARING_TIME_SLICING, k, k, NULL, 0};
		bool all = true;
		for (size_t m = 0; m < fd->n_members; m++)
			all &= offers(ps, &sc->workloads[fd->members[m]], &o);
		replicas = all ? k : 0;
	}
	for (size_t m = 0; m < fd->n_members; m++)
		held += fmax(0, results_metric(r, sc->workloads[fd->members[m]].name,
					       "peak_allocated_gpus"));
	double gpus = ceil(held / fmax(replicas, 1) - 1e-9);
	int32_t nodes = (int32_t)ceil(gpus / ps->gpus_per_node - 1e-9);
	nodes = nodes < 1 ? 1 : nodes;
	if (!replicas || nodes >= ps->nodes)
		return;
	char name[SCENARIO_MAX_NAME + 1], who[ADVISE_LABEL / 2] = "";
	snprintf(name, sizeof name, "%s-shared", ps->name);
	if (scenario_pool_index(sc, name) >= 0)
		return;
	for (size_t m = 0; m < fd->n_members; m++)
		snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s", m ? ", " : "",
			 sc->workloads[fd->members[m]].name);
	struct advise_row *a = plan_add(
		pl, "%s to a pool of their own (%s: %d node%s, time-slicing x%d), %s at %d nodes",
		who, name, (int)nodes, nodes == 1 ? "" : "s", (int)replicas, ps->name,
		(int)(ps->nodes - nodes));
	set(a,
	    "pools.+={name: %s, nodes: %d, gpu: %s, gpus_per_node: %d, cpu: %g, memory: %.0fMiB, "
	    "price: {gpu_hour: %g, cpu_hour: %g, gib_hour: %g}, sharing: {mode: time-slicing, "
	    "replicas: %d}, labels: {gpuplan.io/pool: %s}, taints: [{key: gpuplan.io/pool, "
	    "value: %s, effect: NoSchedule}]}",
	    name, (int)nodes, ps->gpu->name, (int)ps->gpus_per_node, ps->cpu,
	    ps->memory_bytes / (1024.0 * 1024), ps->price.gpu_hour, ps->price.cpu_hour,
	    ps->price.gib_hour, (int)replicas, name, name);
	set(a, "pools.%s.nodes=%d", ps->name, (int)(ps->nodes - nodes));
	for (size_t m = 0; a && m < fd->n_members; m++) {
		const struct workload_spec *ws = &sc->workloads[fd->members[m]];
		char list[1024] = "[";
		for (size_t i = 0; i < ws->n_tolerations; i++) {
			const struct toleration *t = &ws->tolerations[i];
			add_toleration(list, sizeof list, t->key, t->op == TOLERATION_EXISTS,
				       t->value, t->effect);
		}
		add_toleration(list, sizeof list, "gpuplan.io/pool", false, name,
			       EFFECT_NO_SCHEDULE);
		snprintf(list + strlen(list), sizeof list - strlen(list), "]");
		set(a, "workloads.%s.node_selector={gpuplan.io/pool: %s}", ws->name, name);
		set(a, "workloads.%s.tolerations=%s", ws->name, list);
	}
}

/* A pool with windows that a workload missing its goal may use: each window
 * widened (1 h and 2 h later to close, 1 h earlier to open) and shifted 1 h
 * later, as long as it stays shorter than a day.  What people do when a
 * batch window is too short, before buying a node. */
static void plan_windows(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	static const struct {
		int32_t open, close; /* seconds added to from and to */
		const char *how;
	} moves[] = {{0, 3600, "closing 1h later"},
		     {0, 7200, "closing 2h later"},
		     {-3600, 0, "opening 1h earlier"},
		     {3600, 3600, "shifted 1h later"}};
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		if (!ps->n_windows || !(results_metric(r, ps->name, "goal_met") < 1))
			continue;
		for (size_t k = 0; k < ps->n_windows && k < 2; k++) {
			const struct window *w = &ps->windows[k];
			int32_t len = (w->to - w->from + 86400) % 86400;
			for (size_t m = 0; m < sizeof moves / sizeof *moves; m++) {
				if (len + moves[m].close - moves[m].open >= 86400)
					continue;
				int32_t from = (w->from + moves[m].open + 86400) % 86400;
				int32_t to = (w->to + moves[m].close + 86400) % 86400;
				struct gp_sbuf b = {0};
				windows_text(&b, ps, k, from, to);
				set(plan_add(pl, "window %02d:%02d-%02d:%02d of %s %s",
					     (int)(w->from / 3600), (int)(w->from / 60 % 60),
					     (int)(w->to / 3600), (int)(w->to / 60 % 60), ps->name,
					     moves[m].how),
				    "pools.%s.windows=%s", ps->name, b.s);
				free(b.s);
			}
		}
	}
}

/* A queue that waits on admission in a cohort: each other queue of the
 * cohort that keeps GPUs to itself (a lending limit under its quota) lends
 * them all, before anyone's quota grows (Kueue's lendingLimit). */
static void plan_lending(struct plan *pl, const struct scenario *sc, const struct results *r)
{
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		if (fd->kind != KIND_ADMISSION || fd->queue < 0 ||
		    !scenario_root_cohort(sc, (size_t)fd->queue))
			continue;
		const char *root = scenario_root_cohort(sc, (size_t)fd->queue);
		for (size_t q = 0; q < sc->n_queues; q++) {
			const struct queue_spec *qs = &sc->queues[q];
			const struct quota_entry *e = diagnose_gpu_quota(qs);
			const char *other = scenario_root_cohort(sc, q);
			if ((int)q == fd->queue || !e || !other || strcmp(other, root) ||
			    !(e->lending_limit < e->nominal))
				continue;
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
			set(plan_add(pl, "lending limit of %s at %g GPUs", qs->name, e->nominal),
			    "queues.%s.lending_limit=%s", qs->name, map.s);
			free(map.s);
		}
	}
}

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
 * its rules keep it off, besides what it tolerates already. */
static void plan_tolerations(struct plan *pl, const struct scenario *sc, size_t w,
			     const bool *hidden)
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
	set(plan_add(pl, "%s tolerating %s", ws->name, names), "workloads.%s.tolerations=%s",
	    ws->name, list);
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
static void plan_selector_fix(struct plan *pl, const struct scenario *sc, size_t w)
{
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
		struct advise_row *a =
			plan_add(pl, "%s with node_selector %s=%s", ws->name, sel->key, near);
		set(a, "workloads.%s.node_selector=%s", ws->name, map.s);
		free(map.s);
		bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden);
		hidden[pools[at]] = true;
		struct plan tol = {0};
		plan_tolerations(&tol, sc, w, hidden);
		if (a && tol.n)
			set(a, "%s", tol.alts[0].sets[0]);
		free(tol.alts);
		free(hidden);
	}
	free(values);
	free(pools);
}

/* The rules a placement finding blames, one relaxed at a time, then all of
 * them together when there are several (whether or not the finding planned
 * some of them already). */
static void plan_rules(struct plan *pl, const struct scenario *sc, size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	plan_selector_fix(pl, sc, w);
	bool *hidden = gp_xcalloc(sc->n_pools + 1, sizeof *hidden);
	diagnose_hidden_pools(sc, w, hidden);
	struct plan one = {0};
	if (ws->n_node_selector)
		set(plan_add(&one, "%s without its node_selector", ws->name),
		    "workloads.%s.node_selector={}", ws->name);
	if (ws->n_affinity)
		set(plan_add(&one, "%s without its node affinity", ws->name),
		    "workloads.%s.affinity=[]", ws->name);
	if (ws->n_gpu_spec)
		set(plan_add(&one, "%s on any GPU type", ws->name), "workloads.%s.gpu_spec=[]",
		    ws->name);
	plan_tolerations(&one, sc, w, hidden);
	free(hidden);
	for (size_t i = 0; i < one.n; i++) {
		struct advise_row *a = plan_add(pl, "%s", one.alts[i].label);
		if (a)
			set(a, "%s", one.alts[i].sets[0]);
	}
	struct advise_row *all =
		one.n > 1 ? plan_add(pl, "%s with every rule relaxed", ws->name) : NULL;
	for (size_t i = 0; all && i < one.n; i++)
		set(all, "%s", one.alts[i].sets[0]);
	free(one.alts);
}

/* Every alternative a finding names, in the finding's order. */
static void plan_fixes(struct plan *pl, const struct results *r)
{
	for (size_t f = 0; f < r->n_findings; f++)
		for (size_t i = 0; i < r->findings[f].n_fixes; i++) {
			const struct finding_fix *x = &r->findings[f].fixes[i];
			struct advise_row *a = plan_add(pl, "%s", x->label);
			for (size_t k = 0; a && k < x->n_sets; k++)
				set(a, "%s", x->sets[k]);
		}
}

static struct plan plan_alternatives(const struct scenario *sc, const struct results *r)
{
	struct plan pl = {0};
	plan_inference(&pl, sc, r);              /* a server's own settings before more of it */
	plan_lending(&pl, sc, r);                /* what an idle queue keeps before more quota */
	for (size_t p = 0; p < sc->n_pools; p++) /* idle holders apart, before sharing all */
		plan_shared_pool(&pl, sc, r, p);
	plan_fixes(&pl, r);
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		int p = fd->pool, w = fd->workload;
		if (p >= 0 && fd->step == FINDING_ALLOCATION) {
			plan_culling(&pl, sc, (size_t)p);
			plan_replicas(&pl, sc, (size_t)p);
			plan_partitions(&pl, sc, (size_t)p);
		}
		if (w >= 0 && fd->step == FINDING_PLACEMENT)
			plan_rules(&pl, sc, (size_t)w);
	}
	plan_windows(&pl, sc, r);
	plan_quantization(&pl, sc, r);
	return pl;
}

/* --- the pool-size search -------------------------------------------------- */

/* A pool to size, and the workloads whose goals it is sized for: those its
 * findings are about (none: the run's goal). */
struct sizing {
	int pool;
	size_t n;
	int32_t workloads[ADVISE_MAX_SIZED];
	bool alternative; /* another pool a workload short of capacity may use */
};

/* The sizing of pool p among z[0..n), or NULL. */
static struct sizing *sizing_of(struct sizing *z, size_t n, int p)
{
	for (size_t i = 0; i < n; i++)
		if (z[i].pool == p)
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
			    !sizing_of(z, n, (int)p)) {
				z[n] = (struct sizing){.pool = (int)p, .alternative = true};
				add_goal(&z[n++], fd->workload);
			}
	}
	free(usable);
	return n;
}

/* The pools to size, at most ADVISE_MAX_SIZED: the pool of each allocation,
 * memory or capacity finding that has GPUs, in rank order (a placement
 * finding's pool is the one a rule keeps work off); with none, the largest
 * pool the workload that queued longest may run in (its rules allowing). */
static size_t pools_to_size(const struct scenario *sc, const struct results *r, struct sizing *z)
{
	size_t n = 0;
	for (size_t f = 0; f < r->n_findings; f++) {
		const struct finding *fd = &r->findings[f];
		if (fd->pool < 0 || fd->step == FINDING_PLACEMENT ||
		    fd->step == FINDING_APPLICATION || sc->pools[fd->pool].gpus_per_node <= 0)
			continue;
		struct sizing *at = sizing_of(z, n, fd->pool);
		if (!at && n < ADVISE_MAX_SIZED)
			at = &z[n++], *at = (struct sizing){.pool = fd->pool};
		if (at)
			add_goals(at, fd);
	}
	n = other_pools(sc, r, z, n);
	if (n)
		return n;
	int w = -1;
	double longest = 0;
	for (size_t k = 0; k < sc->n_workloads; k++) {
		double q = results_metric(r, sc->workloads[k].name, "queue_time_p95_s");
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
static void goal_words(const struct scenario *sc, const struct sizing *z, char *words, size_t len)
{
	snprintf(words, len, "%s", z->n ? "" : "every goal");
	for (size_t i = 0; i < z->n; i++)
		snprintf(words + strlen(words), len - strlen(words), "%s%s", i ? ", " : "",
			 sc->workloads[z->workloads[i]].name);
}

/* Reads the row's figures back from the run the search recorded. */
static int row_from_store(struct store *st, struct advise_row *row, struct gp_err *err)
{
	struct metric *m = NULL;
	size_t n = 0;
	int rc = store_read_metrics(st, row->run_id, &m, &n, err);
	if (!rc) {
		struct results r;
		results_init(&r);
		r.metrics = m;
		r.n_metrics = n;
		fill_row(row, &r);
		r.metrics = NULL;
	}
	store_free_metrics(m, n);
	return rc;
}

/* Searches 1 .. hi nodes of the pool `key` sets for the smallest count at
 * which scope (a workload, a pool: every workload it can host, or all)
 * meets its goal (metric goal_met, metrics_goals).  GP_EINPUT: the metric
 * is absent. */
static int search_goal(const struct advise_spec *sp, struct store *st, const char *key, double hi,
		       const char *scope, struct search_answer *ans, struct gp_err *err)
{
	struct search_spec s = {.scenario = sp->scenario,
				.sets = sp->sets,
				.n_sets = sp->n_sets,
				.key = key,
				.seeds = 1,
				.integer = true};
	s.lo.number = 1;
	s.hi.number = hi;
	char cond[ADVISE_LABEL];
	snprintf(cond, sizeof cond, "%s.goal_met >= 1", scope);
	int rc = search_parse_condition(cond, &s.until, err);
	*ans = (struct search_answer){0};
	if (!rc)
		rc = search_run(&s, st, NULL, NULL, ans, err);
	if (!rc && !ans->found)
		snprintf(ans->value, sizeof ans->value, "%.0f", hi);
	return rc;
}

/* The smallest node count of z's pool, within 1 .. 4x its nodes, that meets
 * the goal of each of z's workloads: the largest of their answers (each
 * search's answer run has the pool at that count).  When even 4x misses one
 * goal, the row is that run and says so (a search that finds nothing still
 * shows).  *found gets the answer's node count, or 0 for none. */
static int size_pool(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		     const struct sizing *z, struct plan *pl, long *found, struct gp_err *err)
{
	const struct pool_spec *ps = &sc->pools[z->pool];
	char key[ADVISE_SET], words[ADVISE_LABEL];
	snprintf(key, sizeof key, "pools.%s.nodes", ps->name);
	*found = 0;
	double hi = ps->nodes * 4 > ps->nodes + 1 ? ps->nodes * 4 : ps->nodes + 1;
	/* First the count at which every workload the pool can host meets its
	 * goal: no size that leaves one of them waiting past it (a pool shrunk
	 * under someone who still waits on it). */
	struct search_answer best = {.found = true}, ans;
	int rc = search_goal(sp, st, key, hi, ps->name, &best, err);
	if (rc && rc != GP_EINPUT)
		return rc;
	bool every = !rc && best.found;
	if (!every)
		best = (struct search_answer){.found = true};
	for (size_t i = 0; !every && i < (z->n ? z->n : 1) && best.found; i++) {
		rc = search_goal(sp, st, key, hi,
				 z->n ? sc->workloads[z->workloads[i]].name : "all", &ans, err);
		if (rc == GP_EINPUT)
			return GP_OK; /* the goal's metric is absent: no pool size answers it */
		if (rc)
			return rc;
		if (!ans.found || !best.run_id || atof(ans.value) > atof(best.value))
			best = ans;
	}
	if (!best.last_run_id)
		return GP_OK;
	goal_words(sc, z, words, sizeof words);
	const char *how = best.found ? z->n ? "smallest for" : "smallest meeting"
			  : z->n     ? "still short for"
				     : "still short of";
	struct advise_row *a = plan_add(pl, "pool %s at %s node%s (%s %s)", ps->name, best.value,
					strcmp(best.value, "1") ? "s" : "", how, words);
	if (!a)
		return GP_OK;
	set(a, "%s=%s", key, best.value);
	long nodes = strtol(best.value, NULL, 10);
	*found = best.found ? nodes : 0;
	a->run_id = best.found ? best.run_id : best.last_run_id;
	a->hardware = nodes > ps->nodes;
	return row_from_store(st, a, err);
}

/* Sizes each pool pools_to_size names; when two or more have an answer, runs
 * them together too (each answer meets its own workload's goal, and the
 * run's needs them all). */
static int size_pools(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		      const struct results *r, struct plan *pl, struct gp_err *err)
{
	struct sizing z[ADVISE_MAX_SIZED];
	long found[ADVISE_MAX_SIZED];
	size_t n = pools_to_size(sc, r, z), answers = 0;
	int rc = GP_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = size_pool(sp, st, sc, &z[i], pl, &found[i], err);
		if (!rc && z[i].alternative)
			found[i] = 0; /* a row of its own, not part of the plan together */
		answers += !rc && found[i];
	}
	if (rc || answers < 2)
		return rc;
	char label[ADVISE_LABEL] = "pools";
	for (size_t i = 0, k = 0; i < n; i++)
		if (found[i])
			snprintf(label + strlen(label), sizeof label - strlen(label),
				 "%s %s at %ld",
				 !k++           ? ""
				 : k == answers ? " and"
						: ",",
				 sc->pools[z[i].pool].name, found[i]);
	struct advise_row *a = plan_add(pl, "%s nodes together", label);
	for (size_t i = 0; a && i < n; i++)
		if (found[i]) {
			const struct pool_spec *ps = &sc->pools[z[i].pool];
			set(a, "pools.%s.nodes=%ld", ps->name, found[i]);
			a->hardware |= found[i] > ps->nodes;
		}
	return a ? run_row(sp, st, a, NULL, NULL, err) : GP_OK; /* each override loaded alone */
}

/* --- fixes together ------------------------------------------------------- */

/* a < b with NAN last. */
static int cmp_nan_last(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : a > b;
}

/* Rows that miss the goal, the nearest it first: deadlines met, SLOs met,
 * jobs left undone, queue p95. */
static int goal_cmp(const struct advise_row *x, const struct advise_row *y)
{
	int c = cmp_nan_last(x->missed, y->missed);
	if (!c)
		c = cmp_nan_last(-x->deadline_pct, -y->deadline_pct);
	if (!c)
		c = cmp_nan_last(-x->slo_pct, -y->slo_pct);
	if (!c)
		c = cmp_nan_last(x->left, y->left);
	if (!c)
		c = cmp_nan_last(x->queue_p95, y->queue_p95);
	return c;
}

static bool nearer(const struct advise_row *x, const struct advise_row *y)
{
	return goal_cmp(x, y) < 0;
}

/* Whether a and b override a key in common ("pools.a100.sharing"). */
static bool collide(const struct advise_row *a, const struct advise_row *b)
{
	for (size_t i = 0; i < a->n_sets; i++)
		for (size_t k = 0; k < b->n_sets; k++) {
			size_t n = strcspn(a->sets[i], "=");
			if (n == strcspn(b->sets[k], "=") && !strncmp(a->sets[i], b->sets[k], n))
				return true;
		}
	return false;
}

/*
 * When no alternative meets the goal alone, the ones that each brought the
 * run nearer it (with no more hardware) together: the nearest first, then
 * each next one whose overrides touch other keys, at most ADVISE_COMBINED.
 * Two findings' fixes (a selector and a taint keeping two workloads off
 * idle GPUs) may each fall short and meet the goal together.
 */
#define ADVISE_COMBINED 3
#define ADVISE_WIDTH    100 /* the widest alternative column; longer labels are cut */

static int run_combined(const struct advise_spec *sp, struct store *st, struct plan *pl,
			struct gp_err *err)
{
	const struct advise_row *base = &pl->alts[0];
	size_t pick[ADVISE_COMBINED], n = 0, sets = 0;
	for (size_t i = 1; i < pl->n; i++)
		if (pl->alts[i].meets)
			return GP_OK;
	while (n < ADVISE_COMBINED) {
		size_t best = 0;
		for (size_t i = 1; i < pl->n; i++) {
			const struct advise_row *a = &pl->alts[i];
			bool ok = !a->hardware && nearer(a, base) &&
				  sets + a->n_sets <= ADVISE_MAX_SETS;
			for (size_t k = 0; ok && k < n; k++)
				ok = !collide(a, &pl->alts[pick[k]]);
			if (ok && (!best || nearer(a, &pl->alts[best])))
				best = i;
		}
		if (!best)
			break;
		pick[n++] = best;
		sets += pl->alts[best].n_sets;
	}
	if (n < 2)
		return GP_OK;
	struct gp_sbuf label = {0};
	for (size_t k = 0; k < n; k++)
		gp_sb_printf(&label, "%s%s", k ? " + " : "", pl->alts[pick[k]].label);
	struct advise_row *a = plan_add(pl, "%s", label.s); /* may move pl->alts */
	free(label.s);
	if (!a)
		return GP_OK;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < pl->alts[pick[k]].n_sets; i++)
			set(a, "%s", pl->alts[pick[k]].sets[i]);
	struct gp_err skip;
	int rc = run_row(sp, st, a, NULL, NULL, &skip);
	if (rc == GP_EINPUT) {
		pl->n--; /* the overrides do not load together */
		return GP_OK;
	}
	return rc ? gp_errorf(err, rc, "%s", skip.msg) : GP_OK;
}

/* The pool search runs when the base misses its goal, queues, or the
 * diagnosis concludes capacity. */
static bool needs_sizing(const struct advise_row *base, const struct results *r)
{
	bool capacity = false;
	for (size_t i = 0; i < r->n_findings; i++)
		capacity |= r->findings[i].step == FINDING_CAPACITY;
	return capacity || !base->meets;
}

/* --- ranking and output ---------------------------------------------------- */

/* Bills per day this close are one price (a fixed cluster bills the same
 * per day whichever option runs on it). */
static int cmp_bill(double a, double b)
{
	if (!isnan(a) && !isnan(b) && fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)))
		return 0;
	return cmp_nan_last(a, b);
}

static int by_advice(const void *a, const void *b)
{
	const struct advise_row *x = a, *y = b;
	if (x->meets != y->meets)
		return x->meets ? -1 : 1;
	if (x->meets && x->hardware != y->hardware)
		return x->hardware ? 1 : -1; /* more hardware only when nothing cheaper meets */
	if (x->meets && x->quantized != y->quantized)
		return x->quantized ? 1 : -1; /* full precision first */
	if (x->meets && x->plugin != y->plugin)
		return x->plugin ? 1 : -1;     /* stock components first */
	int c = x->meets ? 0 : goal_cmp(x, y); /* the closest, when none meets */
	if (!c)
		c = cmp_bill(x->bill_day, y->bill_day);
	if (!c)
		c = cmp_nan_last(x->cost_per_verified, y->cost_per_verified);
	if (!c)
		c = cmp_nan_last(x->queue_p95, y->queue_p95);
	if (!c)
		c = cmp_nan_last(-x->slo_pct, -y->slo_pct);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static void copy_findings(struct advice *out, const struct results *r)
{
	out->findings = gp_xcalloc(r->n_findings + 1, sizeof *out->findings);
	for (size_t i = 0; i < r->n_findings; i++)
		finding_copy(&out->findings[i], &r->findings[i]);
	out->n_findings = r->n_findings;
}

/* Costs within ADVISE_SAME_COST of the cheapest are the same price: among
 * the rows that meet the goal that cheaply (bill per day and per verified
 * result; as much hardware, precision and stock components as the first),
 * the one planned first wins, which puts the findings' own
 * alternatives ahead of generic ones (a KV-starved server's memory_fraction
 * before int8 weights that are 2% cheaper).  Moves it to the front. */
static void prefer_named(struct advise_row *rows, size_t n)
{
	if (!n || !rows[0].meets)
		return;
	size_t best = 0;
	double c0 = rows[0].cost_per_verified, b0 = rows[0].bill_day;
	for (size_t i = 1; i < n; i++) {
		const struct advise_row *r = &rows[i];
		double c = r->cost_per_verified;
		bool same = (isnan(c0) ? isnan(c) : c <= c0 * (1 + ADVISE_SAME_COST)) &&
			    (isnan(b0) ? isnan(r->bill_day)
				       : r->bill_day <= b0 * (1 + ADVISE_SAME_COST));
		if (r->meets && r->hardware == rows[0].hardware &&
		    r->quantized == rows[0].quantized && r->plugin == rows[0].plugin && same &&
		    r->seq < rows[best].seq)
			best = i;
	}
	struct advise_row keep = rows[best];
	memmove(rows + 1, rows, best * sizeof *rows);
	rows[0] = keep;
}

/* Keeps the rows that add no hardware, in order; returns how many. */
static size_t drop_hardware(struct advise_row *rows, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!rows[i].hardware)
			rows[k++] = rows[i];
	return k;
}

/* The row's overrides as --set text; NULL for none. */
static char *overrides_text(const struct advise_row *row)
{
	if (!row->n_sets)
		return NULL;
	struct finding_fix x = {.n_sets = row->n_sets};
	for (size_t i = 0; i < row->n_sets; i++)
		x.sets[i] = (char *)row->sets[i];
	return finding_fix_text(&x);
}

/* The ranking into the advice table, under the base run's id. */
static int write_advice(struct store *st, const struct advice *a, struct gp_err *err)
{
	int64_t base = 0;
	struct store_advice *rows = gp_xcalloc(a->n + 1, sizeof *rows);
	struct gp_sbuf why = {0};
	for (size_t i = 0; i < a->n_reasons; i++)
		gp_sb_printf(&why, "%s%s", i ? "; " : "", a->reasons[i]);
	char *untrusted = a->n_reasons ? gp_sb_take(&why) : NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct advise_row *r = &a->rows[i];
		if (r->seq == 0)
			base = r->run_id;
		rows[i] = (struct store_advice){
			r->label,       overrides_text(r),    r->run_id,       r->meets,
			r->peak_demand, r->queue_p95,         r->deadline_pct, r->slo_pct,
			r->cost,        r->cost_per_verified, a->forced,       untrusted};
	}
	int rc = store_write_advice(st, base, rows, a->n, err);
	free(untrusted);
	for (size_t i = 0; i < a->n; i++)
		free((char *)rows[i].overrides);
	free(rows);
	return rc;
}

int advise_run(const struct advise_spec *sp, struct store *st, advise_progress_fn fn, void *ctx,
	       struct advice *out, struct gp_err *err)
{
	memset(out, 0, sizeof *out);
	struct plan pl = {0};
	struct scenario *sc = NULL;
	struct results r;
	results_init(&r);
	struct advise_row *base = plan_add(&pl, "base (the scenario as given)");
	int rc = run_row(sp, st, base, &sc, &r, err);
	if (rc) {
		free(pl.alts);
		return rc;
	}
	if (fn)
		fn(ctx, base);
	copy_findings(out, &r);
	snprintf(out->db, sizeof out->db, "%s", sp->db ? sp->db : "the database");
	rc = advise_trust(sp, sc, st, out, err);
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct price *x = &sc->pools[p].price;
		out->prices |= x->gpu_hour > 0 || x->cpu_hour > 0 || x->gib_hour > 0;
	}
	for (size_t w = 0; w < sc->n_workloads; w++)
		out->deadlines |= sc->workloads[w].deadline_kind != DEADLINE_NONE;
	struct plan more = plan_alternatives(sc, &r);
	for (size_t i = 0; i < more.n && !rc; i++) {
		struct advise_row *a = plan_add(&pl, "%s", more.alts[i].label);
		memcpy(a->sets, more.alts[i].sets, sizeof a->sets);
		a->n_sets = more.alts[i].n_sets;
		struct gp_err skip;
		int one = run_row(sp, st, a, NULL, NULL, &skip);
		if (one == GP_EINPUT)
			pl.n--; /* an alternative this scenario cannot express */
		else if (one)
			rc = gp_errorf(err, one, "%s", skip.msg);
		else if (fn)
			fn(ctx, a);
	}
	free(more.alts);
	if (!rc && more.n > 1)
		rc = run_combined(sp, st, &pl, err);
	if (!rc && !out->refused && needs_sizing(&pl.alts[0], &r))
		rc = size_pools(sp, st, sc, &r, &pl, err);
	results_free(&r);
	scenario_free(sc);
	for (size_t i = 0; i < pl.n; i++)
		pl.alts[i].seq = i;
	qsort(pl.alts, pl.n, sizeof *pl.alts, by_advice);
	if (out->refused) /* a model not trusted recommends no hardware */
		pl.n = drop_hardware(pl.alts, pl.n);
	prefer_named(pl.alts, pl.n);
	out->rows = pl.alts;
	out->n = pl.n;
	if (!rc)
		rc = write_advice(st, out, err);
	return rc;
}

/* Why the model is not trusted: the refusal, or --force's warning. */
static void write_trust(FILE *out, const struct advice *a)
{
	if (!a->n_reasons)
		return;
	if (a->refused)
		fprintf(out,
			"\nno hardware recommended: the model is not trusted (only alternatives "
			"that add no hardware are ranked; --force recommends hardware anyway):\n");
	else
		fprintf(out,
			"\nwarning: --force: hardware may be recommended although the model is "
			"not trusted (the advice rows say forced):\n");
	for (size_t i = 0; i < a->n_reasons; i++)
		fprintf(out, "  - %s\n", a->reasons[i]);
}

/* A figure, or "-" for NAN. */
static const char *num(char *buf, size_t len, double v, int decimals)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}

/* "$5.41", "$0.000218"; "-" when unknown or when the scenario has no prices. */
static const char *money(char *buf, size_t len, double v, bool prices)
{
	if (isnan(v) || !prices)
		return num(buf, len, NAN, 0);
	char d[32];
	snprintf(buf, len, "$%s", report_money(v, d, sizeof d));
	return buf;
}

static const struct advise_row *base_row(const struct advice *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].seq == 0)
			return &a->rows[i];
	return NULL;
}

/* label as the advice table shows it, in len - 1 columns: a longer one loses
 * the middle of its longest word (a long pool or workload name, down to 12
 * characters) to "...", so that a pool row keeps its node count, and what
 * is still too long ends in "..."; the recommendation line has it whole. */
static void fit_label(const char *label, char *out, size_t len)
{
	size_t n = strlen(label);
	if (n < len) {
		memcpy(out, label, n + 1);
		return;
	}
	size_t at = 0, longest = 0; /* the longest word */
	for (size_t i = 0; i < n;) {
		size_t w = strcspn(label + i, " ");
		if (w > longest)
			at = i, longest = w;
		i += w + 1;
	}
	size_t excess = n + 1 - len + 3, cut = 0; /* "..." takes 3 */
	if (longest > 12)
		cut = excess < longest - 12 ? excess : longest - 12; /* 12 stay */
	char *t = gp_xmalloc(n + 4);
	size_t head = at + (longest - cut) / 2;
	if (cut)
		snprintf(t, n + 4, "%.*s...%s", (int)head, label, label + head + cut);
	else
		memcpy(t, label, n + 1);
	if (strlen(t) < len)
		memcpy(out, t, strlen(t) + 1);
	else
		snprintf(out, len, "%.*s...", (int)(len - 4), t);
	free(t);
}

/* The queue-p95-s cell: "never" when no job started and some wait, ">=N"
 * when a job still waiting has waited N s, longer than the p95 of those that
 * started; else the p95. */
static const char *queue_cell(const struct advise_row *r, char *buf, size_t len)
{
	if (isnan(r->queue_p95) && r->left > 0)
		snprintf(buf, len, "never");
	else if (r->waited > 0 && !(r->waited <= r->queue_p95))
		snprintf(buf, len, ">=%.0f", r->waited);
	else
		num(buf, len, r->queue_p95, 0);
	return buf;
}

/* How long work waited on row r: its queue p95, or for a run without batch
 * work (no queue figure) its SLO attainment. */
static const char *wait_text(const struct advise_row *r, char *buf, size_t len)
{
	char n[32];
	if (isnan(r->queue_p95) && !isnan(r->slo_pct))
		snprintf(buf, len, "SLO attainment %s%%", num(n, sizeof n, r->slo_pct, 1));
	else if (isnan(r->queue_p95) && r->left > 0)
		snprintf(buf, len, "%.0f jobs never started", r->left);
	else
		snprintf(buf, len, "queue p95 %s s", num(n, sizeof n, r->queue_p95, 0));
	return buf;
}

static void write_sets(FILE *out, const struct advise_row *r)
{
	for (size_t i = 0; i < r->n_sets; i++)
		fprintf(out, " --set '%s'", r->sets[i]);
}

void advise_write(FILE *out, const struct advice *a)
{
	if (a->n_findings)
		fprintf(out, "findings of the base run:\n");
	else
		fprintf(out, "the base run has no finding\n");
	for (size_t i = 0; i < a->n_findings; i++)
		fprintf(out, "%2d. [%s] %s\n", (int)a->findings[i].rank,
			finding_step_name((enum finding_step)a->findings[i].step),
			a->findings[i].text);
	int width = (int)strlen("alternative");
	for (size_t i = 0; i < a->n; i++)
		width = (int)fmax(width, fmin(ADVISE_WIDTH, (double)strlen(a->rows[i].label)));
	fprintf(out, "\n%4s  %-*s %6s %5s %11s %11s %9s %6s %10s %10s %10s\n", "rank", width,
		"alternative", "run", "meets", "peak-demand", "queue-p95-s", "deadline%", "slo%",
		"bill/day", "$/job", "$/request");
	for (size_t i = 0; i < a->n; i++) {
		const struct advise_row *r = &a->rows[i];
		char b[7][32], label[ADVISE_WIDTH + 1];
		fit_label(r->label, label, sizeof label);
		fprintf(out, "%4zu  %-*s %6lld %5s %11s %11s %9s %6s %10s %10s %10s\n", i + 1,
			width, label, (long long)r->run_id, r->meets ? "yes" : "no",
			num(b[0], 32, r->peak_demand, 0), queue_cell(r, b[1], 32),
			a->deadlines ? num(b[2], 32, r->deadline_pct, 1) : "-",
			num(b[3], 32, r->slo_pct, 1),
			a->prices ? report_money(r->bill_day, b[4], 32) : "-",
			a->prices ? report_money(r->per_job, b[5], 32) : "-",
			a->prices ? report_money(r->per_request, b[6], 32) : "-");
	}
	int notes = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].note[0])
			fprintf(out, "%squality of %s: %s\n", notes++ ? "" : "\n", a->rows[i].label,
				a->rows[i].note);
	fprintf(out,
		"\nmeets = every workload meets its goal: its deadlines and SLO, its queue p95 "
		"goal (by default 1h for batch work without a deadline, 5m for services), no job "
		"failed, OOM-killed or left waiting past it (queue-p95-s: never = jobs that never "
		"started, >=N = a job still waiting after N s); ranked by meets, then more "
		"hardware last, then narrower weights last, then components beyond stock "
		"kube-scheduler, Kueue, the Cluster Autoscaler and the device plugin last, then "
		"bill/day (the bill over its span, per day: every option billed over the same "
		"period), then cost per verified result ($/job for batch jobs, $/request for "
		"inference requests; within 3%% of the cheapest, a finding's own alternative "
		"first), then queue p95; rows that miss nearest first (workloads missing their "
		"goals, deadline%%, slo%%, jobs left undone, queue p95).\n");
	write_trust(out, a);
	if (!a->n)
		return;
	const struct advise_row *best = &a->rows[0], *base = base_row(a);
	char q[64], c[32];
	if (!best->meets) {
		bool app = false;
		for (size_t i = 0; i < a->n_findings; i++)
			app |= a->findings[i].step == FINDING_APPLICATION;
		fprintf(out,
			"recommendation: none of these meets every workload's goal%s; the closest "
			"is %s (run %lld)%s\n",
			app ? " (the application finding says GPUs would not help)" : "",
			best->label, (long long)best->run_id,
			a->refused ? "; no hardware is recommended until the reasons above are "
				     "resolved"
				   : "");
		return;
	}
	if (best == base) {
		fprintf(out,
			"recommendation: keep the scenario as it is (run %lld): %s, %s per verified "
			"result\n",
			(long long)best->run_id, wait_text(best, q, sizeof q),
			money(c, 32, best->cost_per_verified, a->prices));
		return;
	}
	fprintf(out, "recommendation: %s (run %lld):", best->label, (long long)best->run_id);
	write_sets(out, best);
	fprintf(out, "; %s", wait_text(best, q, sizeof q));
	if (best->note[0])
		fprintf(out, "; quality: %s", best->note);
	fprintf(out, ", %s per verified result", money(c, 32, best->cost_per_verified, a->prices));
	if (base)
		fprintf(out, " (base: %s, %s)", wait_text(base, q, sizeof q),
			money(c, 32, base->cost_per_verified, a->prices));
	fputc('\n', out);
}

void advice_free(struct advice *a)
{
	for (size_t i = 0; i < a->n_reasons; i++)
		free(a->reasons[i]);
	free(a->reasons);
	for (size_t i = 0; i < a->n_findings; i++)
		finding_free(&a->findings[i]);
	free(a->findings);
	free(a->rows);
	memset(a, 0, sizeof *a);
}
