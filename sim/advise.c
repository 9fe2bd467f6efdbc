/*
 * advise.c - the what-if runs the diagnosis suggests (see advise.h).
 *
 * An alternative is a label and a few typed overrides (override.h) on top of
 * the user's --set ones.
 * The base run's scenario and findings decide which alternatives there are;
 * each runs like `gpuplan run` would (load, simulate, write), so its row in
 * the database has its overrides in params and can be rerun by hand.
 */
#include "gpuplan/advise.h"
#include "advise_int.h"
#include "gpuplan/placement.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/infer.h"
#include "gpuplan/report.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"
#include "gpuplan/units.h"
#include "gpuplan/run.h"
#include "gpuplan/ytree.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A new alternative, unless one with the same label is planned already. */
struct advise_row *advise_plan_add(struct plan *pl, const char *fmt, ...) GP_PRINTF(2, 3);

struct advise_row *advise_plan_add(struct plan *pl, const char *fmt, ...)
{
	struct gp_sbuf label = {0};
	va_list ap;
	va_start(ap, fmt);
	gp_sb_vprintf(&label, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < pl->n; i++)
		if (!strcmp(pl->alts[i].label, gp_sb_str(&label))) {
			free(label.s);
			return NULL;
		}
	GP_GROW(pl->alts, pl->cap, pl->n + 1);
	struct advise_row *a = &pl->alts[pl->n++];
	memset(a, 0, sizeof *a);
	a->label = gp_sb_take(&label);
	return a;
}

void advise_add(struct advise_row *a, struct override o)
{
	if (!a) {
		override_free(&o);
		return;
	}
	GP_GROW(a->sets, a->cap_sets, a->n_sets + 1);
	a->sets[a->n_sets++] = o;
}

void advise_row_free(struct advise_row *a)
{
	for (size_t i = 0; i < a->n_sets; i++)
		override_free(&a->sets[i]);
	free(a->sets);
	free(a->label);
	free(a->note);
	a->sets = NULL;
	a->label = a->note = NULL;
	a->n_sets = a->cap_sets = 0;
}

void advise_plan_free(struct plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		advise_row_free(&pl->alts[i]);
	free(pl->alts);
	*pl = (struct plan){0};
}

/* --- running --------------------------------------------------------------- */

/* The names of sc's workloads that missed their goals in r, into misses
 * ("-": none; "+N" for those past its end). */
static void name_misses(char *misses, const struct scenario *sc, const struct results *r)
{
	size_t used = 0, left = 0;
	snprintf(misses, ADVISE_MISSES, "-");
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const char *name = sc->workloads[w].name;
		if (results_or(r, name, METRIC_GOAL_MET, 1) != 0)
			continue;
		size_t need = strlen(name) + (used ? 2 : 0);
		if (left || used + need + sizeof " +99" > ADVISE_MISSES) {
			left++;
			continue;
		}
		used += (size_t)snprintf(misses + used, ADVISE_MISSES - used, "%s%s",
					 used ? ", " : "", name);
	}
	if (left)
		snprintf(misses + used, ADVISE_MISSES - used, "%s+%zu", used ? " " : "", left);
}

/* The row's figures from a run of sc's metrics; meets: every workload met
 * its own goal (metrics_goals). */
static void fill_row(struct advise_row *row, const struct scenario *sc, const struct results *r)
{
	double failed = results_or(r, "all", METRIC_JOBS_FAILED, NAN);
	double waiting = results_or(r, "all", METRIC_JOBS_WAITING, NAN);
	row->peak_demand = results_or(r, "all", METRIC_PEAK_DEMAND_GPUS, NAN);
	row->queue_p95 = results_or(r, "all", METRIC_QUEUE_TIME_P95_S, NAN);
	row->waited = results_or(r, "all", METRIC_WAIT_SO_FAR_MAX_S, NAN);
	row->deadline_pct = results_or(r, "all", METRIC_DEADLINE_MET_PCT, NAN);
	row->slo_pct = results_or(r, "all", METRIC_SLO_ATTAINMENT_PCT, NAN);
	row->cost = results_or(r, "all", METRIC_COST_TOTAL, NAN);
	row->cost_per_verified = results_or(r, "all", METRIC_COST_PER_VERIFIED_RESULT, NAN);
	row->missed = results_or(r, "all", METRIC_GOALS_MISSED, NAN);
	row->bill_day = results_or(r, "all", METRIC_COST_PER_DAY, NAN);
	row->per_job = results_or(r, "all", METRIC_COST_PER_VERIFIED_JOB, NAN);
	row->per_request = results_or(r, "all", METRIC_COST_PER_VERIFIED_REQUEST, NAN);
	row->left = (failed > 0 ? failed : 0) + (waiting > 0 ? waiting : 0);
	row->meets = results_holds(r, "all", METRIC_GOAL_MET);
	name_misses(row->misses, sc, r);
}

/* The GPU policies of the openb paper: scheduler plugins (FGD's, the
 * packing ones), not in a stock kube-scheduler or the device plugin. */
static const char *const plugin_policies[] = {"fgd", "gpu-packing", "dot-product",
					      "gpu-clustering"};

/* Whether x sets a GPU policy that needs a scheduler plugin. */
static bool sets_plugin(const struct override *x)
{
	for (size_t k = 0; k < sizeof plugin_policies / sizeof *plugin_policies; k++)
		if (!strcmp(x->key, "scheduler.gpu_policy") &&
		    !strcmp(x->value, plugin_policies[k]))
			return true;
	return false;
}

static const char quant[] = ".quantization";

/* Whether x sets a workload's weights ("workloads.NAME.quantization"). */
static bool sets_quantization(const struct override *x)
{
	size_t kl = strlen(x->key), ql = sizeof quant - 1;
	return !strncmp(x->key, "workloads.", 10) && kl >= 10 + ql &&
	       !strcmp(x->key + kl - ql, quant);
}

/* What the row's overrides need beyond stock components, and what its
 * narrower weights cost in quality (from the loaded scenario sc). */
static void mark_row(struct advise_row *row, const struct scenario *sc)
{
	struct gp_sbuf note = {0};
	row->plugin = row->quantized = false;
	for (size_t i = 0; i < row->n_sets; i++) {
		const struct override *x = &row->sets[i];
		row->plugin |= sets_plugin(x);
		if (!sets_quantization(x))
			continue;
		row->quantized = true;
		size_t kl = strlen(x->key), ql = sizeof quant - 1;
		char name[SCENARIO_MAX_NAME + 1];
		snprintf(name, sizeof name, "%.*s", (int)(kl - ql - 10), x->key + 10);
		int w = scenario_workload_index(sc, name);
		const char *sep = note.n ? "; " : "";
		if (w >= 0 && sc->workloads[w].pass_rate < 1)
			gp_sb_printf(&note, "%s%s in %s passes verification %.1f%% of the time",
				     sep, name, x->value, 100 * sc->workloads[w].pass_rate);
		else if (w >= 0)
			gp_sb_printf(&note,
				     "%s%s's quality in %s is not in the scenario (quality: "
				     "{pass_rate: ...}): measure it before relying on it",
				     sep, name, x->value);
	}
	free(row->note);
	row->note = note.n ? gp_sb_take(&note) : NULL;
	if (row->plugin && !strstr(row->label, "(needs a scheduler plugin)")) {
		struct gp_sbuf label = {0};
		gp_sb_printf(&label, "%s (needs a scheduler plugin)", row->label);
		free(row->label);
		row->label = gp_sb_take(&label);
	}
}

/* Writes an alternative simulated (advise_simulate) to st and fills its row.
 * With keep_sc/keep_r, hands the scenario and results to the caller; else
 * frees them. */
static int write_row(struct store *st, struct advise_row *row, struct advise_sim *sim,
		     struct scenario **keep_sc, struct results *keep_r, struct gp_err *err)
{
	int rc = sim->rc;
	if (rc)
		gp_err_move(err, &sim->err);
	if (!rc)
		rc = store_write_run(st, sim->sc, &sim->r, &row->run_id, err);
	if (!rc) {
		fill_row(row, sim->sc, &sim->r);
		mark_row(row, sim->sc);
	}
	if (!rc && keep_sc) {
		*keep_sc = sim->sc;
		*keep_r = sim->r;
	} else {
		advise_sim_free(sim);
	}
	return rc;
}

int advise_run_row(const struct advise_spec *sp, struct store *st, struct advise_row *row,
		   struct scenario **keep_sc, struct results *keep_r, struct gp_err *err)
{
	struct advise_sim sim;
	advise_simulate(sp, row, &sim);
	return write_row(st, row, &sim, keep_sc, keep_r, err);
}

/* --- the probes of the pool-size searches (advise_pools.c) ------------- */

void advise_probe_run(void *ctx, int64_t run_id, const struct scenario *sc, const struct results *r)
{
	struct advise_probes *p = ctx;
	GP_GROW(p->v, p->cap, p->n + 1);
	struct advise_probe *x = &p->v[p->n++];
	*x = (struct advise_probe){.run_id = run_id, .usd_mtok = NAN, .tokens_per_joule = NAN};
	fill_row(&x->fig, sc, r);
}

const struct advise_probe *advise_probe_of(const struct advise_probes *p, int64_t run_id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].run_id == run_id)
			return &p->v[i];
	return NULL;
}

void advise_row_figures(struct advise_row *row, const struct advise_probes *p)
{
	const struct advise_probe *x = advise_probe_of(p, row->run_id);
	assert(x); /* a search's answer is one of its runs */
	const struct advise_row *f = &x->fig;
	row->meets = f->meets;
	row->peak_demand = f->peak_demand;
	row->queue_p95 = f->queue_p95;
	row->deadline_pct = f->deadline_pct;
	row->slo_pct = f->slo_pct;
	row->cost = f->cost;
	row->cost_per_verified = f->cost_per_verified;
	row->left = f->left;
	row->missed = f->missed;
	memcpy(row->misses, f->misses, sizeof row->misses);
	row->bill_day = f->bill_day;
	row->per_job = f->per_job;
	row->per_request = f->per_request;
	row->waited = f->waited;
}

void advise_probes_free(struct advise_probes *p)
{
	free(p->v);
	*p = (struct advise_probes){0};
}

void advise_goal_condition(struct search_condition *c, const char *scope)
{
	*c = (struct search_condition){.op = OP_GE, .value = 1};
	snprintf(c->scope, sizeof c->scope, "%s", scope);
	c->metric = METRIC_GOAL_MET;
}

/* --- fixes together ------------------------------------------------------- */

/* a < b with NAN last. */
static int cmp_nan_last(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a < b ? -1 : a > b;
}

/* Rows that miss the goal, the nearest it first: workloads missing their
 * goals, deadlines met, SLOs met, then no more hardware before more (4x the
 * nodes that meet no more deadlines are not nearer), jobs left undone,
 * queue p95. */
static int goal_cmp_within(const struct advise_row *x, const struct advise_row *y, double slo_tie)
{
	int c = cmp_nan_last(x->missed, y->missed);
	if (!c)
		c = cmp_nan_last(-x->deadline_pct, -y->deadline_pct);
	if (!c && !(fabs(x->slo_pct - y->slo_pct) < slo_tie))
		c = cmp_nan_last(-x->slo_pct, -y->slo_pct);
	if (!c)
		c = (x->hardware > y->hardware) - (x->hardware < y->hardware);
	if (!c)
		c = cmp_nan_last(x->left, y->left);
	if (!c)
		c = cmp_nan_last(x->queue_p95, y->queue_p95);
	if (!c && slo_tie > 0) /* the jobs still waiting: the nearer waited less */
		c = cmp_nan_last(x->waited, y->waited);
	return c;
}

static int goal_cmp(const struct advise_row *x, const struct advise_row *y)
{
	return goal_cmp_within(x, y, 0);
}

int advise_goal_cmp(const struct advise_row *x, const struct advise_row *y)
{
	return goal_cmp(x, y);
}

static bool nearer(const struct advise_row *x, const struct advise_row *y)
{
	return goal_cmp(x, y) < 0;
}

/* Nearer the goals for the pool searches to build on: SLO attainments
 * within a point are one (99.4% and 99.9% of a service that meets its SLO,
 * while the fine-tunes beside it wait a day or 9 hours). */
static bool nearer_fix(const struct advise_row *x, const struct advise_row *y)
{
	return goal_cmp_within(x, y, 1) < 0;
}

/* Whether a and b override a key in common ("pools.a100.sharing"). */
static bool collide(const struct advise_row *a, const struct advise_row *b)
{
	for (size_t i = 0; i < a->n_sets; i++)
		for (size_t k = 0; k < b->n_sets; k++)
			if (override_same_key(&a->sets[i], &b->sets[k]))
				return true;
	return false;
}

/*
 * When no alternative meets the goal alone, the ones that each brought the
 * run nearer it (with no more hardware and no narrower weights, whose cost
 * in quality a combination would hide) together: the nearest first, then
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
	size_t pick[ADVISE_COMBINED], n = 0;
	for (size_t i = 1; i < pl->n; i++)
		if (pl->alts[i].meets)
			return GP_OK;
	while (n < ADVISE_COMBINED) {
		size_t best = 0;
		for (size_t i = 1; i < pl->n; i++) {
			const struct advise_row *a = &pl->alts[i];
			bool ok = !a->hardware && !a->quantized && nearer(a, base);
			for (size_t k = 0; ok && k < n; k++)
				ok = !collide(a, &pl->alts[pick[k]]);
			if (ok && (!best || nearer(a, &pl->alts[best])))
				best = i;
		}
		if (!best)
			break;
		pick[n++] = best;
	}
	if (n < 2)
		return GP_OK;
	struct gp_sbuf label = {0};
	for (size_t k = 0; k < n; k++)
		gp_sb_printf(&label, "%s%s", k ? " + " : "", pl->alts[pick[k]].label);
	struct advise_row *a = advise_plan_add(pl, "%s", label.s); /* may move pl->alts */
	free(label.s);
	if (!a)
		return GP_OK;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < pl->alts[pick[k]].n_sets; i++)
			advise_add(a, override_copy(&pl->alts[pick[k]].sets[i]));
	struct gp_err skip GP_ERR_SCOPE = {0};
	int rc = advise_run_row(sp, st, a, NULL, NULL, &skip);
	if (rc == GP_EINPUT) {
		advise_row_free(&pl->alts[--pl->n]); /* the overrides do not load together */
		return GP_OK;
	}
	return rc ? gp_wrapf(err, &skip, rc, "%s", skip.msg) : GP_OK;
}

/* Whether x moves a goal instead of meeting it: a later deadline, another
 * SLO or queue goal. */
static bool changes_goal(const struct override *x)
{
	static const char *const goals[] = {"deadline", "slo", "goal"};
	if (!strncmp(x->key, "goals", 5))
		return true;
	for (size_t k = 0; k < sizeof goals / sizeof *goals; k++)
		if (override_sets_field(x, goals[k]))
			return true;
	return false;
}

static bool row_changes_goal(const struct advise_row *a)
{
	for (size_t i = 0; i < a->n_sets; i++)
		if (changes_goal(&a->sets[i]))
			return true;
	return false;
}

bool advise_sets_stock(const struct override *sets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct override *x = &sets[i];
		bool hardware = !strncmp(x->key, "pools.", 6) &&
				(override_sets_field(x, "nodes") || override_sets_field(x, "max"));
		if (hardware || sets_plugin(x) || sets_quantization(x) || changes_goal(x))
			return false;
	}
	return true;
}

/* The row nearest every goal with stock components only, neither more
 * hardware nor narrower weights, and the goals as they are (a fix, or fixes
 * together), when none meets them and it is nearer than the base: the pool
 * searches build on it, so that the hardware they add is what remains after
 * the cheaper fixes.  NULL: none. */
static const struct advise_row *nearest_fix(const struct plan *pl)
{
	const struct advise_row *best = NULL;
	for (size_t i = 1; i < pl->n; i++) {
		const struct advise_row *a = &pl->alts[i];
		if (a->meets)
			return NULL;
		if (!a->hardware && !a->quantized && !a->plugin && a->n_sets &&
		    !row_changes_goal(a) && nearer_fix(a, &pl->alts[0]) &&
		    (!best || nearer_fix(a, best)))
			best = a;
	}
	return best;
}

/* The pool search runs when the base misses its goal, queues, or the
 * diagnosis concludes capacity; and to shrink a healthy base's overbuilt
 * pools. */
static bool needs_sizing(const struct scenario *sc, const struct advise_row *base,
			 const struct results *r)
{
	bool capacity = false;
	for (size_t i = 0; i < r->n_findings; i++)
		capacity |= r->findings[i].step == FINDING_CAPACITY;
	return capacity || !base->meets || advise_overbuilt(sc, r);
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
	if (!c && x->quantized != y->quantized)
		c = x->quantized ? 1 : -1; /* as near at full precision: that first */
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

/* A base run with no finding that meets every goal is healthy: it goes
 * first, as what to do is to keep it, unless a row that meets too saves
 * ADVISE_WORTH_CHANGING of its bill (four H100s for what one L40S serves).
 * A smaller saving, a cheaper GPU type or fewer replicas that advise's
 * sizing found, is a change to weigh, not a fix: the recommendation names
 * it (a re-platformed 2-GPU service for 17% less was recommended). */
static void keep_healthy(struct advise_row *rows, size_t n, const struct results *base_r)
{
	size_t at = 0;
	while (at < n && rows[at].seq != 0)
		at++;
	if (at == n || !rows[at].meets || base_r->n_findings)
		return;
	for (size_t i = 0; i < at; i++)
		if (rows[i].meets &&
		    rows[i].bill_day <= rows[at].bill_day * (1 - ADVISE_WORTH_CHANGING))
			return;
	struct advise_row base = rows[at];
	memmove(rows + 1, rows, at * sizeof *rows);
	rows[0] = base;
}

/*
 * Every option billed over the same calendar period: the scenario's horizon,
 * or without one the base run's span, so that an option whose run drains
 * later does not bill a fixed cluster longer than one that drains sooner.
 * Each row's bill per day (its bill over its own span, per day) times that
 * period is its bill; its costs per verified result scale with it.
 */
static void rebill(struct advise_row *rows, size_t n, const struct advise_row *base)
{
	double days = base->cost / base->bill_day; /* the base run's span, in days */
	if (!(days > 0) || !isfinite(days))
		return; /* nothing billed: nothing to compare */
	for (size_t i = 0; i < n; i++) {
		struct advise_row *r = &rows[i];
		double bill = r->bill_day * days;
		if (!(r->cost > 0) || !isfinite(bill))
			continue;
		double scale = bill / r->cost;
		r->cost = bill;
		r->cost_per_verified *= scale;
		r->per_job *= scale;
		r->per_request *= scale;
	}
}

/* Keeps the rows that add no hardware, in order; returns how many. */
static size_t drop_hardware(struct advise_row *rows, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!rows[i].hardware)
			rows[k++] = rows[i];
		else
			advise_row_free(&rows[i]);
	return k;
}

/* The row's overrides as --set text; NULL for none. */
static char *overrides_text(const struct advise_row *row)
{
	if (!row->n_sets)
		return NULL;
	struct finding_fix x = {.sets = row->sets, .n_sets = row->n_sets};
	return finding_fix_text(&x);
}

/* The ranking into the advice table, under the base run's id; a keeps the
 * rows written (a->table). */
static int write_advice(struct store *st, struct advice *a, struct gp_err *err)
{
	struct store_advice *rows = gp_xcalloc(a->n + 1, sizeof *rows);
	struct gp_sbuf why = {0};
	for (size_t i = 0; i < a->n_reasons; i++)
		gp_sb_printf(&why, "%s%s", i ? "; " : "", a->reasons[i]);
	char *untrusted = a->n_reasons ? gp_sb_take(&why) : NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct advise_row *r = &a->rows[i];
		rows[i] = (struct store_advice){
			r->label,       overrides_text(r),    r->run_id,       r->meets,
			r->peak_demand, r->queue_p95,         r->deadline_pct, r->slo_pct,
			r->cost,        r->cost_per_verified, a->forced,       untrusted};
	}
	a->table = rows;
	a->n_table = a->n;
	if (!a->n)
		free(untrusted);
	return store_write_advice(st, a->base_run, rows, a->n, err);
}

/* The planned alternatives as advise_simulate_rows hands them over. */
struct alternatives {
	struct plan *pl;
	struct plan *more; /* its rows' overrides move to pl's */
	struct store *st;
	advise_progress_fn fn;
	void *ctx;
	struct gp_err *err;
};

/* Alternative i simulated: a row of the plan, written (advise_done_fn). */
static int write_alternative(void *ctx, size_t i, struct advise_sim *sim)
{
	struct alternatives *x = ctx;
	struct advise_row *from = &x->more->alts[i];
	struct advise_row *a = advise_plan_add(x->pl, "%s", from->label);
	if (!a) { /* planned already under that label */
		advise_sim_free(sim);
		return GP_OK;
	}
	a->sets = from->sets; /* moved: the plan of alternatives no longer owns them */
	a->n_sets = from->n_sets;
	a->cap_sets = from->cap_sets;
	from->sets = NULL;
	from->n_sets = from->cap_sets = 0;
	struct gp_err skip GP_ERR_SCOPE = {0};
	int one = write_row(x->st, a, sim, NULL, NULL, &skip);
	if (one == GP_EINPUT)
		advise_row_free(&x->pl->alts[--x->pl->n]); /* one this scenario cannot express */
	else if (one)
		return gp_wrapf(x->err, &skip, one, "%s", skip.msg);
	else if (x->fn)
		x->fn(x->ctx, a);
	return GP_OK;
}

int advise_run(const struct advise_spec *sp, struct store *st, advise_progress_fn fn, void *ctx,
	       struct advice *out, struct gp_err *err)
{
	memset(out, 0, sizeof *out);
	struct plan pl = {0};
	struct scenario *sc = NULL;
	struct results r;
	results_init(&r);
	struct advise_row *base = advise_plan_add(&pl, "base (the scenario as given)");
	int rc = advise_run_row(sp, st, base, &sc, &r, err);
	if (rc) {
		advise_plan_free(&pl);
		return rc;
	}
	if (fn)
		fn(ctx, base);
	copy_findings(out, &r);
	out->db = gp_xstrdup(sp->db ? sp->db : "the database");
	rc = advise_trust(sp, sc, st, out, err);
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct price *x = &sc->pools[p].price;
		out->prices |= x->gpu_hour > 0 || x->cpu_hour > 0 || x->gib_hour > 0;
	}
	memcpy(out->currency, sc->currency, sizeof out->currency);
	for (size_t w = 0; w < sc->n_workloads; w++)
		out->deadlines |= scenario_has_deadlines(&sc->workloads[w]);
	out->keep = sp->keep;
	out->n_keep = sp->n_keep;
	struct plan more = advise_plan_alternatives(sc, &r);
	out->kept_out += advise_drop_kept(sp, &more);
	struct alternatives alt = {&pl, &more, st, fn, ctx, err};
	if (!rc)
		rc = advise_simulate_rows(sp, more.alts, more.n, write_alternative, &alt);
	size_t planned = more.n;
	advise_plan_free(&more);
	bool met = false;
	for (size_t i = 1; i < pl.n; i++)
		met |= pl.alts[i].meets;
	struct plan pairs = met ? (struct plan){0} : advise_plan_pairs(sc, &r);
	out->kept_out += advise_drop_kept(sp, &pairs);
	for (size_t i = 0; i < pairs.n && !rc; i++) { /* two binding constraints relaxed */
		struct advise_row *a = advise_plan_add(&pl, "%s", pairs.alts[i].label);
		if (!a)
			continue;
		a->sets = pairs.alts[i].sets; /* moved */
		a->n_sets = pairs.alts[i].n_sets;
		a->cap_sets = pairs.alts[i].cap_sets;
		pairs.alts[i].sets = NULL;
		pairs.alts[i].n_sets = pairs.alts[i].cap_sets = 0;
		struct gp_err skip GP_ERR_SCOPE = {0};
		int one = advise_run_row(sp, st, a, NULL, NULL, &skip);
		if (one == GP_EINPUT)
			advise_row_free(&pl.alts[--pl.n]);
		else if (one)
			rc = gp_wrapf(err, &skip, one, "%s", skip.msg);
		else if (fn)
			fn(ctx, a);
	}
	advise_plan_free(&pairs);
	if (!rc && planned > 1)
		rc = run_combined(sp, st, &pl, err);
	if (!rc && !out->refused && needs_sizing(sc, &pl.alts[0], &r)) {
		struct advise_row atop = {0}; /* a copy: the sizing's rows move pl.alts */
		const struct advise_row *near = nearest_fix(&pl);
		for (size_t i = 0; near && i < near->n_sets; i++)
			advise_add(&atop, override_copy(&near->sets[i]));
		atop.label = near ? gp_xstrdup(near->label) : NULL;
		rc = advise_size_pools(sp, st, sc, &r, near ? &atop : NULL, &pl, err);
		advise_row_free(&atop);
	}
	if (!rc && !out->refused)
		rc = advise_size_services(sp, st, sc, &r, &pl, out, err);
	out->base_run = pl.alts[0].run_id;
	out->base_sc = sc; /* for advise --json */
	out->base_r = r;
	struct advise_row base0 = pl.alts[0];
	rebill(pl.alts, pl.n, &base0);
	for (size_t i = 0; i < pl.n; i++)
		pl.alts[i].seq = i;
	qsort(pl.alts, pl.n, sizeof *pl.alts, by_advice);
	if (out->refused) /* a model not trusted recommends no hardware */
		pl.n = drop_hardware(pl.alts, pl.n);
	prefer_named(pl.alts, pl.n);
	keep_healthy(pl.alts, pl.n, &r);
	out->rows = pl.alts;
	out->n = pl.n;
	if (!rc)
		rc = write_advice(st, out, err);
	return rc;
}

/* What --keep kept, and the alternatives it left out. */
static void write_kept(FILE *out, const struct advice *a)
{
	if (!a->n_keep)
		return;
	fprintf(out, "kept as they are (--keep):");
	for (size_t i = 0; i < a->n_keep; i++)
		fprintf(out, "%s %s", i ? "," : "", a->keep[i]);
	fprintf(out,
		"; %zu alternative%s that would change them not run, and no search varies them\n",
		a->kept_out, a->kept_out == 1 ? "" : "s");
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

/* "$5.41", "$0.000218", "EUR 5.41"; "-" when unknown or when the scenario has
 * no prices. */
static const char *money(char *buf, size_t len, double v, const struct advice *a)
{
	if (isnan(v) || !a->prices)
		return units_format_figure(NAN, 0, buf, len);
	char d[32];
	const char *cur = report_currency(a->currency);
	snprintf(buf, len, "%s%s%s", cur, strcmp(cur, "$") ? " " : "",
		 report_money(v, d, sizeof d));
	return buf;
}

static const struct advise_row *base_row(const struct advice *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].seq == 0)
			return &a->rows[i];
	return NULL;
}

/* After keeping a healthy base: the cheapest other row that meets every
 * goal too, when it bills less per day (a change to weigh, not a fix). */
static void write_cheaper(FILE *out, const struct advice *a, const struct advise_row *base)
{
	const struct advise_row *cheap = NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct advise_row *r = &a->rows[i];
		if (r != base && r->meets &&
		    r->bill_day < base->bill_day * (1 - ADVISE_SAME_COST) &&
		    (!cheap || r->bill_day < cheap->bill_day))
			cheap = r;
	}
	if (!cheap || !a->prices)
		return;
	char b0[32], b1[32];
	fprintf(out,
		"  every workload meets its goal and the run has no finding; %s (run %lld) also "
		"meets every goal at %s a day against %s: a change to weigh, not a fix\n",
		cheap->label, (long long)cheap->run_id, money(b1, 32, cheap->bill_day, a),
		money(b0, 32, base->bill_day, a));
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
		units_format_figure(r->queue_p95, 0, buf, len);
	return buf;
}

/* What a row's work got: its queue p95 (as the table's cell: ">=N" while a
 * job still waits), or jobs that never started, then its deadlines met
 * where the scenario has deadlines (a->deadlines, as the table) and SLO
 * attainment where it has one: the figures a fix moves. */
static const char *wait_text(const struct advice *a, const struct advise_row *r, char *buf,
			     size_t len)
{
	char n[32];
	size_t at = 0;
	if (!isnan(r->queue_p95) || !(r->left > 0))
		at += (size_t)snprintf(buf, len, "queue p95 %s s", queue_cell(r, n, sizeof n));
	else
		at += (size_t)snprintf(buf, len, "%.0f jobs never started", r->left);
	if (isnan(r->queue_p95) && !isnan(r->slo_pct))
		at = 0; /* a service alone: its SLO says it */
	if (a->deadlines && !isnan(r->deadline_pct) && at < len)
		at += (size_t)snprintf(buf + at, len - at, "%sdeadlines met %s%%", at ? ", " : "",
				       units_format_figure(r->deadline_pct, 1, n, sizeof n));
	if (!isnan(r->slo_pct) && at < len)
		snprintf(buf + at, len - at, "%sSLO attainment %s%%", at ? ", " : "",
			 units_format_figure(r->slo_pct, 1, n, sizeof n));
	return buf;
}

/* A row's cost per verified result: the whole bill (idle included) over
 * every verified result, batch jobs' and requests' together (the table
 * splits it by kind). */
static const char *cost_text(const struct advice *a, const struct advise_row *r, char *buf,
			     size_t len)
{
	char c[32];
	snprintf(buf, len, "%s per verified result", money(c, 32, r->cost_per_verified, a));
	return buf;
}

static void write_sets(FILE *out, const struct advise_row *r)
{
	for (size_t i = 0; i < r->n_sets; i++)
		fprintf(out, " --set '%s=%s'", r->sets[i].key, r->sets[i].value);
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
	char per_job[32], per_request[32];
	fprintf(out, "\n%4s  %-*s %6s %5s %11s %11s %9s %6s %10s %10s %10s  %s\n", "rank", width,
		"alternative", "run", "meets", "peak-demand", "queue-p95-s", "deadline%", "slo%",
		"bill/day", report_money_title("$/job", a->currency, per_job, sizeof per_job),
		report_money_title("$/request", a->currency, per_request, sizeof per_request),
		"misses");
	for (size_t i = 0; i < a->n; i++) {
		const struct advise_row *r = &a->rows[i];
		char b[7][32], label[ADVISE_WIDTH + 1];
		fit_label(r->label, label, sizeof label);
		fprintf(out, "%4zu  %-*s %6lld %5s %11s %11s %9s %6s %10s %10s %10s  %s\n", i + 1,
			width, label, (long long)r->run_id, r->meets ? "yes" : "no",
			units_format_figure(r->peak_demand, 0, b[0], 32), queue_cell(r, b[1], 32),
			a->deadlines ? units_format_figure(r->deadline_pct, 1, b[2], 32) : "-",
			units_format_figure(r->slo_pct, 1, b[3], 32),
			a->prices ? report_money(r->bill_day, b[4], 32) : "-",
			a->prices ? report_money(r->per_job, b[5], 32) : "-",
			a->prices ? report_money(r->per_request, b[6], 32) : "-", r->misses);
	}
	int notes = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].note)
			fprintf(out, "%squality of %s: %s\n", notes++ ? "" : "\n", a->rows[i].label,
				a->rows[i].note);
	advise_size_write(out, a);
	fprintf(out,
		"\nmeets = every workload meets its goal: its deadlines and SLO, its queue p95 "
		"goal (by default 3600 s for batch work without a deadline, 300 s for services), no job "
		"failed, OOM-killed or left waiting past it (queue-p95-s: never = jobs that never "
		"started, >=N = a job still waiting after N s; misses: the workloads that miss "
		"theirs); ranked by meets, a base run "
		"with no finding that meets every goal first unless a row that meets saves a "
		"third of its bill (a healthy cluster is kept), then more hardware last, then "
		"narrower weights last, then components beyond stock kube-scheduler, Kueue, the "
		"Cluster Autoscaler and NVIDIA's device plugin last (a GPU policy's scheduler plugin, "
		"another vendor's GPUs), then bill/day (the bill over its "
		"span, per day), then cost per verified result (every "
		"option billed over the same period, the horizon or the base run's span; %s for "
		"batch jobs, %s for inference requests; within 3%% of the cheapest, a "
		"finding's own alternative first), then queue p95; rows that miss nearest first "
		"(workloads missing their goals, deadline%%, slo%%, no hardware before more, jobs "
		"left undone, queue p95).\n",
		per_job, per_request);
	write_trust(out, a);
	write_kept(out, a);
	if (!a->n)
		return;
	const struct advise_row *best = &a->rows[0], *base = base_row(a);
	char q[128];
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
	char c2[96];
	if (best == base) {
		fprintf(out, "recommendation: keep the scenario as it is (run %lld): %s, %s\n",
			(long long)best->run_id, wait_text(a, best, q, sizeof q),
			cost_text(a, best, c2, sizeof c2));
		write_cheaper(out, a, best);
		return;
	}
	fprintf(out, "recommendation: %s (run %lld):", best->label, (long long)best->run_id);
	write_sets(out, best);
	fprintf(out, "; %s", wait_text(a, best, q, sizeof q));
	if (best->note)
		fprintf(out, "; quality: %s", best->note);
	fprintf(out, ", %s", cost_text(a, best, c2, sizeof c2));
	if (base)
		fprintf(out, " (base: %s, %s)", wait_text(a, base, q, sizeof q),
			money(c2, 32, base->cost_per_verified, a));
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
	for (size_t i = 0; i < a->n; i++)
		advise_row_free(&a->rows[i]);
	free(a->rows);
	free(a->gpus);
	free(a->db);
	for (size_t i = 0; i < a->n_table; i++)
		free((char *)a->table[i].overrides);
	if (a->n_table)
		free((char *)a->table[0].untrusted); /* one text, every row's */
	free(a->table);
	if (a->base_sc)
		results_free(&a->base_r);
	scenario_free(a->base_sc);
	memset(a, 0, sizeof *a);
}
