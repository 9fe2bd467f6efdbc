/*
 * import_check.c - the imported scenario's calibration check (import.h):
 * does gpuplan say what kube-scheduler said about the same pods on the same
 * cluster?
 *
 * The scenario is simulated for one second: the running pods are placed on
 * their nodes in the first pass and every pending pod's class fails with a
 * FitError message (reasons.h), which is set beside the pod's PodScheduled
 * message.  Jobs of a workload are its pending pods in order (the scenario
 * lists them so).  kube-scheduler appends the outcome of its preemption
 * attempt (" preemption: 0/5 nodes are available: ..."), as gpuplan does
 * (reasons.h, preempt.h): when the real message has it, it is compared too
 * (in the wording of the scenario's kubernetes_version, which import takes
 * from the control plane's kubelet); a message without it (a scheduler
 * without DefaultPreemption) is compared up to where gpuplan's suffix
 * starts.
 */
#include "gpuplan/strindex.h"
#include "gpuplan/import.h"

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t import_message_core(const char *msg)
{
	const char *p = strstr(msg, " preemption: ");
	size_t len = p ? (size_t)(p - msg) : strlen(msg);
	while (len && (msg[len - 1] == ' ' || msg[len - 1] == '\n'))
		len--;
	return len;
}

/* --- what differs between two FitError messages -------------------------- */

/* One "N reason" clause of a FitError message. */
struct clause {
	long count;
	const char *reason;
	size_t len;
};

#define MAX_CLAUSES 32

/* Reads "0/N nodes are available: C1 R1, C2 R2." (kube-scheduler's
 * FitError.Error(), framework/types.go) from msg[0..len): the node count and
 * the clauses; false when msg is not one.  A clause begins after ", " with
 * a count, so a reason with a comma of its own stays whole. */
static bool parse_fit(const char *msg, size_t len, long *nodes, struct clause *cl, size_t *n)
{
	static const char head[] = " nodes are available: ";
	char *end;
	*n = 0;
	long avail = strtol(msg, &end, 10);
	if (end == msg || *end != '/' || avail < 0)
		return false;
	*nodes = strtol(end + 1, &end, 10);
	if (strncmp(end, head, sizeof head - 1))
		return false;
	const char *p = end + sizeof head - 1, *stop = msg + len;
	if (stop > p && stop[-1] == '.')
		stop--;
	while (p < stop && *n < MAX_CLAUSES) {
		struct clause *c = &cl[(*n)++];
		c->count = strtol(p, &end, 10);
		if (end == p || *end != ' ')
			return false;
		c->reason = end + 1;
		const char *q = c->reason;
		while (q < stop &&
		       !(q[0] == ',' && q[1] == ' ' && q + 2 < stop && q[2] >= '0' && q[2] <= '9'))
			q++;
		c->len = (size_t)(q - c->reason);
		p = q < stop ? q + 2 : stop;
	}
	return true;
}

static long count_of(const struct clause *cl, size_t n, const struct clause *like)
{
	for (size_t i = 0; i < n; i++)
		if (cl[i].len == like->len && !strncmp(cl[i].reason, like->reason, like->len))
			return cl[i].count;
	return 0;
}

static void put(char *buf, size_t size, size_t *at, const char *fmt, ...) GP_PRINTF(4, 5);

static void put(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	if (*at >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	*at += k > 0 ? (size_t)k : 0;
}

size_t import_fit_diff(const char *real, size_t real_len, const char *sim, size_t sim_len,
		       char *buf, size_t size)
{
	struct clause a[MAX_CLAUSES], b[MAX_CLAUSES];
	size_t na, nb, at = 0;
	long real_nodes, sim_nodes;
	buf[0] = '\0';
	if (!parse_fit(real, real_len, &real_nodes, a, &na) ||
	    !parse_fit(sim, sim_len, &sim_nodes, b, &nb))
		return 0;
	if (real_nodes != sim_nodes)
		put(buf, size, &at, "nodes: %ld real, %ld gpuplan", real_nodes, sim_nodes);
	/* the real message's reasons in its order, then gpuplan's own */
	for (size_t i = 0; i < na + nb; i++) {
		const struct clause *c = i < na ? &a[i] : &b[i - na];
		long x = count_of(a, na, c), y = count_of(b, nb, c);
		if (x == y || (i >= na && x))
			continue; /* same, or a reason of both already said */
		put(buf, size, &at, "%s%.*s: ", at ? "; " : "", (int)c->len, c->reason);
		if (!x || !y)
			put(buf, size, &at, "%ld %s only", x ? x : y, x ? "real" : "gpuplan");
		else
			put(buf, size, &at, "%ld real, %ld gpuplan", x, y);
	}
	return at < size ? at : size - 1;
}

size_t import_message_compared(const char *real, const char *msg)
{
	if (!strstr(real, " preemption: "))
		return import_message_core(msg);
	size_t len = strlen(msg);
	while (len && (msg[len - 1] == ' ' || msg[len - 1] == '\n'))
		len--;
	return len;
}

/* Loads the scenario at path with set and runs it: whole (costs), or its
 * placements only (messages). */
static int simulate(const char *path, const char *set, bool whole, struct scenario **sc,
		    struct results *res, struct gp_err *err)
{
	const char *sets[1] = {set};
	int rc = scenario_load(path, sets, 1, sc, err);
	results_init(res);
	if (!rc)
		rc = whole ? run_simulate(*sc, res, err) : run_placements(*sc, res, err);
	return rc;
}

static char *simulated_message(const struct results *res, const struct job_record *j)
{
	char buf[512];
	if (j->start != SIM_NEVER && j->node >= 0)
		snprintf(buf, sizeof buf, "scheduled on %s", res->node_names[j->node]);
	else if (j->reason >= 0)
		snprintf(buf, sizeof buf, "%s", res->reason_texts[j->reason]);
	else
		snprintf(buf, sizeof buf, "(no attempt)");
	return gp_xstrdup(buf);
}

static int check_messages(const struct import_result *r, const char *path, struct import_check *c,
			  struct gp_err *err)
{
	struct scenario *sc = NULL;
	struct results res;
	int rc = simulate(path, "horizon=1s", false, &sc, &res, err);
	c->rows = gp_xcalloc(r->n_pending ? r->n_pending : 1, sizeof *c->rows);
	size_t n_wl = sc ? sc->n_workloads : 0;
	size_t *seen = gp_xcalloc(n_wl + 1, sizeof *seen);
	/* the workloads by name and each one's jobs in order, hashed and
	 * bucketed once (a scan of both per pending pod was quadratic) */
	struct strindex names = {0};
	size_t *index_of = gp_xcalloc(n_wl + 1, sizeof *index_of); /* per name id */
	for (size_t w = 0; w < n_wl; w++) {
		bool added = false;
		size_t id = sc->workloads[w].name
				    ? strindex_add(&names, sc->workloads[w].name, &added)
				    : STRINDEX_NONE;
		if (added)
			index_of[id] = w;
	}
	size_t *first = gp_xcalloc(n_wl + 2, sizeof *first), *jobs = NULL;
	if (!rc) {
		for (size_t j = 0; j < res.n_jobs; j++)
			if (res.jobs[j].workload >= 0 && (size_t)res.jobs[j].workload < n_wl)
				first[res.jobs[j].workload + 1]++;
		for (size_t w = 0; w < n_wl; w++)
			first[w + 1] += first[w];
		jobs = gp_xcalloc(res.n_jobs + 1, sizeof *jobs);
		for (size_t j = 0; j < res.n_jobs; j++)
			if (res.jobs[j].workload >= 0 && (size_t)res.jobs[j].workload < n_wl)
				jobs[first[res.jobs[j].workload] + seen[res.jobs[j].workload]++] =
					j;
		memset(seen, 0, (n_wl + 1) * sizeof *seen);
	}
	for (size_t i = 0; !rc && i < r->n_pending; i++) {
		const struct import_pending *p = &r->pending[i];
		struct import_check_row *row = &c->rows[c->n_rows++];
		size_t w = strindex_find(&names, p->workload);
		w = w != STRINDEX_NONE ? index_of[w] : w;
		size_t want = w != STRINDEX_NONE ? seen[w]++ : 0;
		const struct job_record *job = NULL;
		if (w != STRINDEX_NONE && first[w] + want < first[w + 1])
			job = &res.jobs[jobs[first[w] + want]];
		row->pod = p;
		row->simulated = job ? simulated_message(&res, job) : gp_xstrdup("(not simulated)");
		size_t len = import_message_compared(p->message, p->message);
		row->compared = !p->gated && len > 0;
		row->agree = row->compared &&
			     len == import_message_compared(p->message, row->simulated) &&
			     !strncmp(p->message, row->simulated, len);
		c->compared += row->compared;
		c->agree += row->agree;
	}
	strindex_free(&names);
	free(index_of);
	free(first);
	free(jobs);
	free(seen);
	results_free(&res);
	scenario_free(sc);
	return rc;
}

/* The simulated cost of each controller over the OpenCost window. */
static int check_costs(const struct import_result *r, const char *path, struct import_check *c,
		       struct gp_err *err)
{
	char set[64];
	snprintf(set, sizeof set, "horizon=%llds", (long long)(r->cost_window / SIM_SECOND));
	struct scenario *sc = NULL;
	struct results res;
	int rc = simulate(path, set, true, &sc, &res, err);
	c->simulated_cost = gp_xcalloc(r->n_costs, sizeof *c->simulated_cost);
	for (size_t a = 0; !rc && a < res.n_allocations; a++) {
		int w = scenario_workload_index(sc, res.allocations[a].name);
		for (size_t k = 0; w >= 0 && (size_t)w < r->n_workloads && k < r->n_costs; k++)
			if (!strcmp(r->costs[k].controller, r->workload_controller[w]))
				c->simulated_cost[k] += res.allocations[a].total_cost;
	}
	results_free(&res);
	scenario_free(sc);
	return rc;
}

int import_check(const struct import_result *r, const char *path, struct import_check *out,
		 struct gp_err *err)
{
	memset(out, 0, sizeof *out);
	int rc = check_messages(r, path, out, err);
	if (!rc && r->n_costs && r->cost_window > 0)
		rc = check_costs(r, path, out, err);
	return rc;
}

void import_check_free(struct import_check *c)
{
	for (size_t i = 0; i < c->n_rows; i++)
		free(c->rows[i].simulated);
	free(c->rows);
	free(c->simulated_cost);
}

void import_write_check(FILE *out, const struct import_result *r, const struct import_check *c,
			const char *path)
{
	fprintf(out,
		"wrote %s: %zu pools from %zu nodes, %zu workloads from %zu pods "
		"(%zu running, %zu pending)",
		path, r->n_pools, r->n_nodes, r->n_workloads, r->n_pods, r->n_running,
		r->n_pending);
	if (r->n_calibrated)
		fprintf(out, ", %zu calibrated by DCGM", r->n_calibrated);
	fputs("\n", out);
	for (size_t i = 0; i < r->n_warnings; i++)
		fprintf(out, "note: %s\n", r->warnings[i]);
	if (c->n_rows)
		fputs("\nself-check: each pending pod, kube-scheduler's message, then gpuplan's\n",
		      out);
	for (size_t i = 0; i < c->n_rows; i++) {
		const struct import_check_row *row = &c->rows[i];
		const char *mark = !row->compared ? "skip" : row->agree ? "ok" : "DIFF";
		fprintf(out, "%-4s %s (%s)\n", mark, row->pod->pod, row->pod->workload);
		if (row->pod->gated)
			fputs("       real: gated (waiting for admission), not compared\n", out);
		else
			fprintf(out, "       real: %.*s\n",
				(int)import_message_compared(row->pod->message, row->pod->message),
				row->pod->message[0] ? row->pod->message : "(no message yet)");
		fprintf(out, "    gpuplan: %.*s\n",
			(int)import_message_compared(row->pod->message, row->simulated),
			row->simulated);
		char diff[1024];
		size_t rl = import_message_core(row->pod->message),
		       sl = import_message_core(row->simulated);
		if (row->compared && !row->agree &&
		    import_fit_diff(row->pod->message, rl, row->simulated, sl, diff, sizeof diff))
			fprintf(out, "       diff: %s\n", diff);
		else if (row->compared && !row->agree && rl == sl &&
			 !strncmp(row->pod->message, row->simulated, rl))
			fputs("       diff: the preemption: suffix alone\n", out);
	}
	if (c->n_rows)
		fprintf(out, "%zu of %zu compared messages agree\n", c->agree, c->compared);
	if (!r->n_costs || !c->simulated_cost)
		return;
	fprintf(out, "\ncost over the OpenCost window (%.1f h): real (OpenCost) beside simulated\n",
		sim_seconds(r->cost_window) / 3600.0);
	for (size_t k = 0; k < r->n_costs; k++)
		fprintf(out, "  %-40s %10.2f %10.2f\n", r->costs[k].controller, r->costs[k].real,
			c->simulated_cost[k]);
}
