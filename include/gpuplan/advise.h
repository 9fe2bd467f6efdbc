/*
 * advise.h - the what-if runs the diagnosis suggests (`gpuplan advise`).
 *
 * advise_run runs the scenario as given (the base), reads its findings
 * (diagnose.h) and runs the alternatives, each one a run in the results
 * database with its overrides in the params table:
 *   - the table's relaxations (relax.h) of the binding constraints: the
 *     first ADVISE_BINDING (3) but capacity of the workloads that missed
 *     their goals (relax_binding), after the findings' own fixes; when no
 *     alternative meets every goal, pairs of their first relaxations;
 *   - every alternative a finding names (finding.fixes: sharing modes,
 *     narrower weights, memory_fraction, tokenizer workers, GPU policy and
 *     scoring, quota and borrowing limits, max_replicas, relaxed rules);
 *   - allocation finding on pool P: besides, time-slicing and MPS where their
 *     units hold every workload P hosts, a MIG layout and fractional shares
 *     (for one-GPU workloads that run nowhere else);
 *   - memory finding on an exclusive pool P: narrower weights with
 *     time-slicing x2 and x4;
 *   - placement finding on workload W: its rules relaxed one at a time
 *     (tolerating the taints of the pools they keep it off included), and
 *     all together;
 *   - a node_selector value no pool carries: corrected to the closest value
 *     of its key on a pool whose GPUs hold the pod (VRAM included), with
 *     that pool's taints tolerated;
 *   - an inference service that missed its goal: max_batch raised to what
 *     its KV cache holds (with max_batched_tokens), a low memory_fraction
 *     with int8 weights;
 *   - a queue waiting on admission in a cohort: each other queue that keeps
 *     GPUs to itself lends them (before the finding's quota raise);
 *   - a pool with windows that a workload missing its goal may use: each
 *     window widened (closing 1 h or 2 h later, opening 1 h earlier) or
 *     shifted 1 h;
 *   - every workload with a model: its weights in int8 and in int4 (each
 *     with a quality note: its pass rate, or that the scenario has none);
 *   - when the base misses its goal or the diagnosis concludes capacity:
 *     for the pool of each allocation, memory or capacity finding
 *     (ADVISE_MAX_SIZED of them; with none, the pool that holds the queued
 *     work), the smallest node count at which every workload the pool can
 *     host meets its goal (metric POOL.goal_met), else the one at which the
 *     finding's workloads (the run, for a finding that names none) meet
 *     theirs (search_run over 1 .. 4x its nodes; when even 4x misses, a row
 *     for 4x that says so); with two or more answers, all of them together;
 *   - when the base is healthy (no finding, every goal met) and a priced
 *     pool of fixed size allocated one node fewer than it has on average:
 *     the fewest nodes of each such pool at which every goal holds on 5
 *     seeds, and together;
 *   - an inference service with fixed replicas and a TTFT bound, alone in
 *     its pool (advise_size.c): the first cut (firstcut.h) on every catalog
 *     GPU type, then, on its own type and the promising others, the fewest
 *     replicas meeting its goal (search_run started from the first cut, so
 *     only the boundary is simulated), with the pool's nodes to hold them:
 *     a right-sized fleet, or a move to a cheaper GPU type.
 * The goal: every workload meets its own (metrics_goals: deadlines, SLO,
 * queue p95 goal, nothing failed or OOM-killed; metric all.goal_met), so no
 * alternative that makes one miss is recommended.  Alternatives that meet it
 * rank first, more hardware after the others, then narrower weights after
 * full precision, then those needing a component beyond stock
 * kube-scheduler, Kueue, the Cluster Autoscaler and the device plugin (a
 * GPU policy's scheduler plugin, marked in the label), then by the bill per
 * day (every option billed over the same period), then cost per verified
 * result (within ADVISE_SAME_COST of the cheapest, the one planned first: a
 * finding's own), then queue p95, then SLO attainment; those that miss it,
 * nearest it first (workloads missing their goals, deadlines met, SLO
 * attainment, jobs failed or left waiting, queue p95), then by cost.  The first is the recommendation; when none meets,
 * advise_write says so and names the closest.  The ranking also goes to the
 * advice table (store_write_advice).
 *
 * Trust (advise_trust.c).  Hardware is recommended only from a model
 * that is trusted.  advise refuses, and says why, when the scenario is a
 * twin (history:) and the database holds no backtest of the same file
 * (runs.scenario_sha256), or the latest one's queue p95 or GPU-hours (for
 * all, and for each workload with ADVISE_BACKTEST_MIN_PODS pods started in
 * the history) passes the tolerance (default 25%; a queue p95 within 5
 * minutes passes); or when a workload whose wait matters (a deadline, an
 * inference server, a service or notebook) runs on a placeholder duration.
 * Refused, advise does not size pools and ranks only the alternatives that
 * add no hardware; with force it goes on, warns, and flags the advice rows.
 *
 * The advice owns its rows and a copy of the base run's findings;
 * advice_free releases them.  Nothing here prints except advise_write, to
 * the stream it is given.
 */
#ifndef GPUPLAN_ADVISE_H
#define GPUPLAN_ADVISE_H

#include "gpuplan/diagnose.h"
#include "gpuplan/results.h"
#include "gpuplan/store.h"

#include <stdio.h>

#define ADVISE_SAME_COST 0.03 /* costs per verified result this close are one price */
#define ADVISE_WORTH_CHANGING \
	0.33                          /* a healthy run is changed only to save a third of its
				       * bill or more */
#define ADVISE_MAX_SIZED         4    /* pools whose node count is searched, at most */
#define ADVISE_DEFAULT_TOLERANCE 0.25 /* backtest error past which hardware is refused */
#define ADVISE_BACKTEST_MIN_PODS 30   /* a workload's backtest counts from this many pods */

struct advise_spec {
	const char *scenario;
	const char *const *sets; /* --set overrides applied to every run */
	size_t n_sets;
	double tolerance;        /* of the backtest (a fraction); 0: ADVISE_DEFAULT_TOLERANCE */
	bool force;              /* recommend hardware even from a model not trusted */
	const char *db;          /* the database's path, for messages; NULL: none */
	unsigned jobs;           /* threads simulating alternatives (--jobs); 0: one per
			   * processor online; the rows are the same for any */
	const char *const *keep; /* --keep: --set paths no alternative may change
				  * (advise_keep_check'd), segments names or "*" */
	size_t n_keep;
};

/* Whether pattern, a --set path of segments names or "*", names a section
 * advise may change (pools, workloads, queues, cohorts, scheduler), items
 * of sc and a key of theirs: GP_EINPUT with what was expected otherwise. */
int advise_keep_check(const struct scenario *sc, const char *pattern, struct gp_err *err);

#define ADVISE_MAX_JOBS 256 /* --jobs */
#define ADVISE_MISSES   40  /* a row's names of the workloads that miss their goals, at most */

/* A service on one GPU type (advise_size.c): the first cut's fleet and,
 * where it was searched, the simulated fewest replicas meeting its goal. */
struct advise_gpu {
	int32_t workload;           /* the service's index in the scenario */
	char name[256];             /* its name */
	const struct gpu_type *gpu; /* a catalog type */
	int verdict;                /* an enum firstcut_verdict */
	int tp, replicas, gpus;     /* the first cut's */
	double usd_hour, usd_mtok, tokens_per_joule;
	bool searched;        /* simulated: the search below ran */
	int32_t sim_replicas; /* the fewest meeting the goal; 0: none up to the search's hi */
	int32_t sim_gpus, probes;
	double sim_usd_mtok, sim_tokens_per_joule; /* the answer run's (cost_per_million_tokens) */
	int64_t run_id;
};

/* One run of the table. */
struct advise_row {
	char *label;           /* "base", "time-slicing x4 on a100", ... (owned, whole) */
	struct override *sets; /* its overrides beyond the spec's, typed (owned; as many
				* as it takes); text only where shown or stored */
	size_t n_sets, cap_sets;
	int64_t run_id;
	bool meets;    /* every workload met its goal (all.goal_met) */
	bool hardware; /* more nodes than the scenario has */
	double peak_demand, queue_p95, deadline_pct, slo_pct, cost, cost_per_verified;
	double left;                 /* jobs failed or still waiting at the end */
	double missed;               /* workloads that missed their goals */
	char misses[ADVISE_MISSES];  /* their names, as many as fit ("+N" the rest) */
	double bill_day;             /* cost_per_day: the bill over a day of its span */
	double per_job, per_request; /* cost per verified batch job, inference request */
	bool quantized;              /* narrower weights than the scenario's */
	bool plugin;                 /* needs a component beyond stock kube-scheduler,
				      * Kueue, the Cluster Autoscaler and the NVIDIA
				      * device plugin (a GPU policy's scheduler plugin) */
	char *note;                  /* what it costs in quality (owned); NULL: nothing */
	double waited;               /* the longest wait of a job still waiting at the end, s */
	size_t seq;                  /* order run, for ties */
};

struct advice {
	struct advise_row *rows; /* ranked, best first */
	size_t n;
	struct finding *findings; /* the base run's, owned */
	size_t n_findings;
	char *db;         /* where the runs went, for messages (owned) */
	bool prices;      /* some pool has a price: costs are shown */
	char currency[4]; /* theirs (ISO 4217; "" = USD), as report_currency marks it */
	bool deadlines;   /* some workload has a deadline: deadline% is shown */
	bool twin;        /* the scenario has a history section */
	char **reasons;   /* why the model is not trusted (owned); none: it is */
	size_t n_reasons;
	struct advise_gpu *gpus; /* each sized service on each catalog GPU type (owned) */
	size_t n_gpus;
	const char *const *keep; /* --keep's paths (borrowed from advise_spec) */
	size_t n_keep;
	size_t kept_out; /* alternatives not run: they set a path --keep keeps */
	bool refused;    /* so no hardware is recommended */
	bool forced;     /* force overrode the reasons */
	/* What was written, for `advise --json` (json_write_advice) without
	 * reading it back: the base run (its id, scenario and results, owned)
	 * and the advice table's rows (overrides and untrusted owned). */
	int64_t base_run;
	struct scenario *base_sc;
	struct results base_r;
	struct store_advice *table;
	size_t n_table;
};

/* Called after each run (progress). */
typedef void (*advise_progress_fn)(void *ctx, const struct advise_row *row);

/* Runs the base and its alternatives into st.  A base that does not load is
 * GP_EINPUT; an alternative that does not load is left out. */
int advise_run(const struct advise_spec *spec, struct store *st, advise_progress_fn fn, void *ctx,
	       struct advice *out, struct gp_err *err);

/* Fills a's trust (reasons, refused, forced) for the base scenario sc,
 * reading the backtests of st.  a->db must be set. */
int advise_trust(const struct advise_spec *sp, const struct scenario *sc, struct store *st,
		 struct advice *a, struct gp_err *err);

/* The base findings, the ranked table, and a last line naming the recommendation. */
void advise_write(FILE *out, const struct advice *a);

void advice_free(struct advice *a);

/* `advise --emit DIR` (advise_emit.c): writes into dir (created if missing)
 * the Kubernetes and vendor objects that carry out the recommendation, one
 * file per object (a KubeSchedulerConfiguration, the device plugin's and
 * mig-parted's ConfigMaps, Kueue ClusterQueues, strategic-merge patches of
 * the workloads, cluster-autoscaler --nodes flags) and README.txt saying how
 * to apply each and what no stock object carries.  *written: the file
 * names, one a line (the caller frees it).  GP_EINPUT when nothing meets
 * every goal. */
int advise_emit(const struct advise_spec *spec, const struct advice *a, const char *dir,
		char **written, struct gp_err *err);

#endif
