/*
 * advise_int.h - private to advise*.c: the plan of alternatives, how one is
 * added, and the planning of them by kind (advise_plan.c).
 */
#ifndef GPUPLAN_ADVISE_INT_H
#define GPUPLAN_ADVISE_INT_H

#include "gpuplan/advise.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"

#include <stddef.h>

struct plan {
	struct advise_row *alts; /* labels and sets only */
	size_t n, cap;
};

/* A new alternative, unless one with the same label is planned already. */
struct advise_row *advise_plan_add(struct plan *pl, const char *fmt, ...) GP_PRINTF(2, 3);
/* Appends override o to a (a takes what o owns; a NULL: o is freed). */
void advise_add(struct advise_row *a, struct override o);
/* Frees what a row owns (its overrides), and a plan with its rows. */
void advise_row_free(struct advise_row *a);
void advise_plan_free(struct plan *pl);
/* Runs the spec's scenario with the row's overrides and writes it to st.
 * With keep_sc/keep_r, hands the scenario and results to the caller. */
int advise_run_row(const struct advise_spec *sp, struct store *st, struct advise_row *row,
		   struct scenario **keep_sc, struct results *keep_r, struct gp_err *err);
/* Sizes the pools the findings of r (the base run of sc) name, each an
 * alternative of pl, every size tried after atop's fixes (NULL: none); two
 * or more with an answer are also run together (advise_pools.c). */
int advise_size_pools(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
		      const struct results *r, const struct advise_row *atop, struct plan *pl,
		      struct gp_err *err);
/* Whether path (a --set key) is under or above a pattern of --keep
 * (advise_keep.c); whether one of sets[0 .. n) is; drops pl's rows that set
 * such a path, returning how many. */
bool advise_keeps(const struct advise_spec *sp, const char *path);
bool advise_sets_kept(const struct advise_spec *sp, const struct override *sets, size_t n);
size_t advise_drop_kept(const struct advise_spec *sp, struct plan *pl);
/* Whether r, the base run of sc, is healthy (no finding, every goal met)
 * with a priced pool of fixed size whose allocated GPUs would fit one node
 * fewer on average: the pool search then looks for the fewest nodes that
 * meet every goal. */
bool advise_overbuilt(const struct scenario *sc, const struct results *r);
/* Whether overrides sets[0 .. n) keep to stock components, the hardware and
 * the goals as they are: no more nodes, no narrower weights, no scheduler
 * plugin, no later deadline or other goal. */
bool advise_sets_stock(const struct override *sets, size_t n);
/* Rows that miss the goals ordered the nearest first (< 0: x is nearer):
 * workloads missing their goals, deadlines met, SLOs met, no more hardware
 * before more, jobs left undone, queue p95 (advise.c). */
int advise_goal_cmp(const struct advise_row *x, const struct advise_row *y);
/* The alternatives the base run's scenario and findings suggest. */
struct plan advise_plan_alternatives(const struct scenario *sc, const struct results *r);
/* Pairs of the binding constraints' first relaxations (relax.h), for when
 * no single alternative meets every goal. */
struct plan advise_plan_pairs(const struct scenario *sc, const struct results *r);

/* The figures of the runs a search made (search_spec.on_run), read from
 * each run's results as it ends, so a row that stands for one of them needs
 * no read back from the database (advise.c). */
struct advise_probe {
	int64_t run_id;
	struct advise_row fig;             /* figures only: no label, no overrides */
	double usd_mtok, tokens_per_joule; /* of the service named below */
};

struct advise_probes {
	struct advise_probe *v;
	size_t n, cap;
	const char *service; /* the scope of usd_mtok and tokens_per_joule; NULL: none */
};

/* search_spec.on_run: records the run's figures into ctx (struct advise_probes). */
void advise_probe_run(void *ctx, int64_t run_id, const struct scenario *sc,
		      const struct results *r);
/* The figures of run_id, or NULL when the search made no such run. */
const struct advise_probe *advise_probe_of(const struct advise_probes *p, int64_t run_id);
/* Fills row's figures (row->run_id) from the runs p recorded; asserts it is one. */
void advise_row_figures(struct advise_row *row, const struct advise_probes *p);
void advise_probes_free(struct advise_probes *p);

/* The search condition "scope meets its goal" (goal_met >= 1; scope a
 * workload, a pool: every workload it can host, or all), made as the
 * struct it is: nothing formatted to be parsed again. */
void advise_goal_condition(struct search_condition *c, const char *scope);

/* --- inference services sized and moved to other GPU types (advise_size.c) --- */

/* For each inference service alone in its pool that no finding but
 * capacity is about (r: the base run): the first cut on every catalog GPU
 * type into out->gpus, and the fewest replicas meeting its goal on its own
 * type and the promising others, each a row of pl. */
int advise_size_services(const struct advise_spec *sp, struct store *st, const struct scenario *sc,
			 const struct results *r, struct plan *pl, struct advice *out,
			 struct gp_err *err);
/* Those first cuts and searches, a table per service. */
void advise_size_write(FILE *f, const struct advice *a);

/* --- running alternatives in parallel (advise_jobs.c) --- */

/* The threads `advise` runs alternatives on by default: GPUPLAN_THREADS when
 * set (1 .. ADVISE_MAX_JOBS), else the processors online. */
unsigned advise_default_jobs(void);

/* One alternative simulated: its scenario and results, or rc and err. */
struct advise_sim {
	struct scenario *sc;
	struct results r;
	int rc;
	struct gp_err err;
};

/* Loads sp's scenario with sp's and row's overrides and simulates it. */
void advise_simulate(const struct advise_spec *sp, const struct advise_row *row,
		     struct advise_sim *out);
void advise_sim_free(struct advise_sim *s);

/* Takes alternative i simulated, in the order planned; owns sim.  Non-zero
 * stops the rest. */
typedef int (*advise_done_fn)(void *ctx, size_t i, struct advise_sim *sim);

/* Simulates rows[0 .. n) on sp->jobs threads (0: advise_default_jobs()),
 * handing each to done on the calling thread in order; the first non-zero
 * of done's. */
int advise_simulate_rows(const struct advise_spec *sp, const struct advise_row *rows, size_t n,
			 advise_done_fn done, void *ctx);

#endif
