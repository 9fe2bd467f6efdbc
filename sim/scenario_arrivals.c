/*
 * scenario_arrivals.c - a workload's arrival key: at, poisson (with its
 * hourly and weekday rates), schedule and trace arrivals, and the paths a
 * trace names.
 */
#include "gpuplan/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/openb.h"
#include "gpuplan/trace.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

/* --- arrivals -------------------------------------------------------------- */

static int arrival_at(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = obj;
	a->kind = ARRIVAL_AT;
	return ld_get_clock(ld, v, "arrival at", &a->at);
}

static int arrival_process(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"poisson"};
	int p = 0;
	((struct arrival *)obj)->kind = ARRIVAL_POISSON;
	return ld_get_enum(ld, v, "process", names, N_OF(names), &p);
}

static int arrival_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_rate(ld, v, "rate", &((struct arrival *)obj)->rate);
}

static int arrival_from(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_clock(ld, v, "arrival from", &((struct arrival *)obj)->from);
}

/* A path relative to the scenario's folder. */
char *ld_resolve(const char *dir, const char *path)
{
	if (path[0] == '/' || !strcmp(dir, "."))
		return gp_xstrdup(path);
	size_t n = strlen(dir) + strlen(path) + 2;
	char *s = gp_xmalloc(n);
	snprintf(s, n, "%s/%s", dir, path);
	return s;
}

/* Records the path; the rows are read once the arrival is known to be sound. */
static int arrival_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = obj;
	char *path = NULL;
	a->kind = ARRIVAL_TRACE;
	int rc = ld_get_string(ld, v, "trace", "a path to a CSV file, like traces/jobs.csv", &path);
	if (rc)
		return rc;
	a->trace_path = ld_resolve(ld->sc->dir, path);
	free(path);
	return GP_OK;
}

static int arrival_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"csv", "openb"};
	int f = 0;
	if (v->kind == YNODE_SCALAR && !strcmp(v->value, "azure"))
		return gp_located(ld->err, v->loc,
				  "format 'azure' is for inference requests; "
				  "expected csv or openb");
	int rc = ld_get_enum(ld, v, "format", names, N_OF(names), &f);
	((struct arrival *)obj)->format = f ? TRACE_OPENB : TRACE_CSV;
	return rc;
}

static const struct key_rule arrival_rules[] = {
	{"at", arrival_at},
	{"process", arrival_process},
	{"rate", arrival_rate},
	{"rate_by_hour", ld_read_later},
	{"by_weekday", ld_read_later},
	{"schedule", ld_arrival_schedule},
	{"from", arrival_from},
	{"trace", arrival_trace},
	{"format", arrival_format},
	{"speedup", NULL},
};

/* The keys each kind of arrival takes (index = enum arrival_kind). */
static const char *const arrival_keys[][5] = {
	{"at", NULL},
	{"process", "rate", "rate_by_hour", "by_weekday", "from"},
	{"trace", "format", NULL},
	{"schedule", "from", NULL},
};
static const char *const arrival_kind_text[] = {"arrival at", "a poisson arrival",
						"a trace arrival", "a schedule"};

int ld_workload_arrival(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = &((struct workload_spec *)obj)->arrival;
	int rc = ld_walk_map(ld, v, "arrival", ARRIVAL_HINT, arrival_rules, N_OF(arrival_rules), a);
	if (rc)
		return rc;
	int kinds = !!ynode_get(v, "at") + !!ynode_get(v, "process") + !!ynode_get(v, "trace") +
		    !!ynode_get(v, "schedule");
	if (kinds != 1)
		return gp_located(ld->err, v->loc,
				  "arrival needs exactly one of at, process, trace or schedule; "
				  "expected " ARRIVAL_HINT);
	if (!rc)
		rc = ld_only_keys(ld, v, arrival_keys[a->kind], 5, arrival_kind_text[a->kind]);
	if (!rc && a->kind == ARRIVAL_POISSON)
		rc = ld_weekly_rate(ld, v, true, &a->weekly);
	if (!rc && a->kind == ARRIVAL_POISSON && !a->weekly.on)
		rc = ld_require(ld, v, "rate", "arrival",
				UNITS_HINT_RATE ", or rate_by_hour: [24 rates]");
	if (!rc && a->kind == ARRIVAL_POISSON && a->weekly.on) /* the mean rate: sizing, reports */
		a->rate = a->weekly.week_mass / sim_seconds(7 * SIM_DAY);
	if (!rc && a->kind == ARRIVAL_SCHEDULE)
		a->rate = ld_cron_rate(&a->cron, ld->sc->start_epoch);
	if (!rc && a->kind == ARRIVAL_TRACE && a->format == TRACE_OPENB)
		return openb_read_pods(a->trace_path, ynode_get(v, "trace")->loc,
				       ld->sc->experiment.protocol == EXPERIMENT_NONE, &a->pods,
				       &a->n_pods, ld->err);
	if (!rc && a->kind == ARRIVAL_TRACE) {
		a->limits = (struct trace_limits){ld->widest_request, ld->max_jobs};
		rc = trace_read_csv(a->trace_path, ynode_get(v, "trace")->loc, &a->limits, &a->rows,
				    &a->n_rows, &a->summary, ld->err);
	}
	return rc;
}
