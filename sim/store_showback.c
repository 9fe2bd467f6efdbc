/*
 * store_showback.c - the rows that say whose a cost is (see docs/results.md):
 * each scope's kind, model and GPU, and a workload's namespace, queue and
 * labels (scopes); an allocation with its workload's namespace, queue, team
 * label and pool (allocations).
 */
#include "gpuplan/store.h"

#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The name of a workload's queue, or NULL (a scenario made by hand). */
static const char *queue_name(const struct scenario *sc, const struct workload_spec *w)
{
	return w->queue >= 0 && (size_t)w->queue < sc->n_queues ? sc->queues[w->queue].name : NULL;
}

/* A workload's labels as a JSON object, in the scenario's order (malloc'd). */
static char *labels_json(const struct workload_spec *w)
{
	size_t len = 3;
	for (size_t k = 0; k < w->n_labels; k++)
		len += 2 * (strlen(w->labels[k].key) + strlen(w->labels[k].value)) + 6;
	char *out = gp_xmalloc(len), *o = out;
	*o++ = '{';
	for (size_t k = 0; k < w->n_labels; k++) {
		const char *parts[2] = {w->labels[k].key, w->labels[k].value};
		if (k)
			*o++ = ',';
		for (int j = 0; j < 2; j++) {
			*o++ = '"';
			for (const char *c = parts[j]; *c; c++) {
				if (*c == '"' || *c == '\\')
					*o++ = '\\';
				*o++ = *c;
			}
			*o++ = '"';
			if (!j)
				*o++ = ':';
		}
	}
	*o++ = '}';
	*o = '\0';
	return out;
}

int sti_bind_scope(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct scenario *sc = ctx;
	(void)err;
	const char *name = "all", *kind = "all", *wkind = NULL, *model = NULL, *gpu = NULL;
	if (i >= 1 && i <= sc->n_pools) {
		name = sc->pools[i - 1].name;
		kind = "pool";
		gpu = sc->pools[i - 1].gpu->name;
	} else if (i > sc->n_pools) {
		const struct workload_spec *w = &sc->workloads[i - 1 - sc->n_pools];
		name = w->name;
		kind = "workload";
		wkind = w->kind == WORKLOAD_INFERENCE ? "inference"
			: w->kind == WORKLOAD_SERVICE ? "service"
						      : "batch";
		model = w->model ? w->model->name : NULL;
	}
	sti_bind_text(s, p, name);
	sti_bind_text(s, p + 1, kind);
	sti_bind_text(s, p + 2, wkind);
	sti_bind_text(s, p + 3, model);
	sti_bind_text(s, p + 4, gpu);
	if (i > sc->n_pools) {
		const struct workload_spec *w = &sc->workloads[i - 1 - sc->n_pools];
		sti_bind_text(s, p + 5, scenario_namespace(w));
		sti_bind_text(s, p + 6, queue_name(sc, w));
		char *labels = labels_json(w);
		sti_bind_copy(s, p + 7, labels);
		free(labels);
		sti_bind_text(s, p + 8, scenario_label(w, SCENARIO_TEAM_LABEL));
	}
	return GP_OK;
}

int sti_bind_allocation(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_showback *jc = ctx;
	const struct allocation *a = &(jc->rows ? jc->rows : jc->r->allocations)[i];
	const struct workload_spec *w =
		a->workload >= 0 && (size_t)a->workload < jc->sc->n_workloads &&
				!strcmp(jc->sc->workloads[a->workload].name, a->name)
			? &jc->sc->workloads[a->workload]
			: NULL;
	(void)err;
	sti_bind_text(s, p + 11, w ? scenario_namespace(w) : NULL);
	sti_bind_text(s, p + 12, w ? queue_name(jc->sc, w) : NULL);
	sti_bind_text(s, p + 13, w ? scenario_label(w, SCENARIO_TEAM_LABEL) : NULL);
	sti_bind_text(s, p + 14,
		      a->pool >= 0 && (size_t)a->pool < jc->sc->n_pools
			      ? jc->sc->pools[a->pool].name
			      : NULL);
	sti_bind_text(s, p, a->name);
	sti_bind_time(s, p + 1, a->start);
	sti_bind_time(s, p + 2, a->end);
	sti_bind_real(s, p + 3, a->gpu_hours);
	sti_bind_real(s, p + 4, a->gpu_cost);
	sti_bind_real(s, p + 5, a->cpu_core_hours);
	sti_bind_real(s, p + 6, a->cpu_cost);
	sti_bind_real(s, p + 7, a->ram_byte_hours);
	sti_bind_real(s, p + 8, a->ram_cost);
	sti_bind_real(s, p + 9, a->total_cost);
	sti_bind_real(s, p + 10, a->gpu_efficiency);
	return GP_OK;
}

int sti_bind_node_allocation(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_showback *jc = ctx;
	sti_bind_text(s, p + 15, jc->rows[i].node);
	return sti_bind_allocation(s, p, i, ctx, err);
}

int store_read_teams(struct store *st, int64_t run_id, struct store_team **rows, size_t *n,
		     struct gp_err *err)
{
	*rows = NULL;
	*n = 0;
	int64_t has = 0;
	if (sti_query_int(
		    st, "SELECT count(*) FROM pragma_table_info('allocations') WHERE name = 'team'",
		    &has, "reading teams", err))
		return GP_ERUNTIME;
	if (!has)
		return GP_OK;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(
		    st->db,
		    "SELECT w.team, sum(w.cost), sum(i.value), sum(v.value) FROM "
		    "(SELECT name, team, sum(total_cost) AS cost FROM allocations "
		    "WHERE run_id = ?1 AND name != '__idle__' GROUP BY name) w "
		    "LEFT JOIN metrics i ON i.run_id = ?1 AND i.scope = w.name AND i.name = ?2 "
		    "LEFT JOIN metrics v ON v.run_id = ?1 AND v.scope = w.name "
		    "AND v.name = ?3 GROUP BY w.team ORDER BY w.team IS NULL, w.team",
		    -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading teams");
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_text(s, 2, metric_name(METRIC_COST_IDLE), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, metric_name(METRIC_VERIFIED_RESULTS), -1, SQLITE_STATIC);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		GP_GROW(*rows, cap, *n + 1);
		struct store_team *t = &(*rows)[(*n)++];
		const unsigned char *team = sqlite3_column_text(s, 0);
		t->team = team ? gp_xstrdup((const char *)team) : NULL;
		t->cost = sqlite3_column_double(s, 1);
		t->idle = sqlite3_column_double(s, 2);
		t->verified = sqlite3_column_double(s, 3);
	}
	int rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, "reading teams");
	sqlite3_finalize(s);
	return rc;
}

void store_free_teams(struct store_team *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].team);
	free(rows);
}
