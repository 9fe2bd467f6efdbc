/* results.c - the results of one run (see results.h). */
#include "gpuplan/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *job_status_name(enum job_status s)
{
	switch (s) {
	case JOB_COMPLETED: return "completed";
	case JOB_FAILED: return "failed";
	case JOB_PENDING:
	case JOB_RUNNING: break;
	}
	return "unfinished";
}

void results_init(struct results *r)
{
	memset(r, 0, sizeof *r);
	r->status = "ok";
}

void results_free(struct results *r)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		free(r->node_names[i]);
	free(r->node_names);
	free(r->metrics);
	free(r->jobs);
	free(r->requests);
	free(r->ts);
	for (size_t i = 0; i < r->n_reason_texts; i++)
		free(r->reason_texts[i]);
	free(r->reason_texts);
	free(r->pending_reasons);
	free(r->allocations);
	for (size_t i = 0; i < r->n_findings; i++) {
		free(r->findings[i].text);
		free(r->findings[i].evidence);
	}
	free(r->findings);
	free(r->curve);
	free(r->scaling);
	memset(r, 0, sizeof *r);
}

void results_add_metric(struct results *r, const char *scope, const char *name, double value,
			const char *unit)
{
	GP_GROW(r->metrics, r->cap_metrics, r->n_metrics + 1);
	r->metrics[r->n_metrics++] = (struct metric){scope, name, value, unit};
}

double results_metric(const struct results *r, const char *scope, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].scope, scope) && !strcmp(r->metrics[i].name, name))
			return r->metrics[i].value;
	return NAN;
}
