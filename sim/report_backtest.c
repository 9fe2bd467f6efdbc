/*
 * report_backtest.c - what `gpuplan backtest` prints (report.h): the
 * history's figures beside the replay's, per scope, the figures past the
 * tolerance, and what the replay could not model, each with its evidence.
 */
#include "gpuplan/report.h"

#include <math.h>
#include <string.h>

#include "gpuplan/units.h"

const char *const report_gap_names[GAP_GANG + 1] = {[GAP_UNKNOWN_WORKLOAD] = "unknown-workload",
						    [GAP_DELETED_PENDING] = "deleted-pending",
						    [GAP_NO_GPUS] = "no-gpus",
						    [GAP_TOO_WIDE] = "too-wide",
						    [GAP_NO_NODE] = "no-node",
						    [GAP_NODES] = "nodes-changed",
						    [GAP_PREEMPTION] = "preemption",
						    [GAP_GANG] = "gang"};

const char *report_gap_text(const struct backtest_gap *g, char *buf, size_t len)
{
	const char *e = g->example ? g->example : "";
	long long n = (long long)g->pods, f = (long long)g->figure;
	const char *pods = n == 1 ? "pod" : "pods";
	switch ((enum backtest_gap_kind)g->kind) {
	case GAP_UNKNOWN_WORKLOAD:
		snprintf(buf, len,
			 "%lld %s of workloads the twin does not have (%s): not replayed, "
			 "though all's observed figures count them",
			 n, pods, e);
		break;
	case GAP_DELETED_PENDING:
		snprintf(buf, len,
			 "%lld %s deleted before %s ever scheduled (e.g. %s): the replay "
			 "cannot delete a pending pod, so %s left out",
			 n, pods, n == 1 ? "it was" : "they were", e,
			 n == 1 ? "it is" : "they are");
		break;
	case GAP_NO_GPUS:
		snprintf(buf, len, "%lld %s that asked for no GPU (e.g. %s): left out", n, pods, e);
		break;
	case GAP_TOO_WIDE:
		snprintf(buf, len,
			 "%lld %s asking for more GPUs than any node of the pools offers (e.g. "
			 "%s): they ran on nodes the pools lack, and are left out",
			 n, pods, e);
		break;
	case GAP_NO_NODE:
		snprintf(buf, len,
			 "%lld scheduled %s whose node the history does not record (e.g. %s)", n,
			 pods, e);
		break;
	case GAP_NODES:
		snprintf(buf, len,
			 "pods ran on %lld distinct nodes (%s, ...) but the pools have %lld: nodes "
			 "were added or removed during the period",
			 n, e, f);
		break;
	case GAP_PREEMPTION:
		snprintf(buf, len,
			 "%lld %s of lower-priority workloads ended Failed or Deleted before the "
			 "end (e.g. of %s): priority preemption or eviction, which the replay, "
			 "holding each pod for its observed time, does not reproduce",
			 n, pods, e);
		break;
	case GAP_GANG:
		snprintf(buf, len,
			 "workload %s runs gangs of %lld pods; its %lld pods were replayed one by "
			 "one",
			 e, f, n);
		break;
	}
	return buf;
}

/* A figure as the table shows it: "-" for none. */
static const char *figure(char *buf, size_t len, const struct backtest_row *row, double v)
{
	if (isnan(v))
		return snprintf(buf, len, "-"), buf;
	bool whole =
		!strcmp(row->metric, "pods_started") || !strncmp(row->metric, "queue_time_", 11);
	snprintf(buf, len, "%.*f", whole ? 0 : !strcmp(row->metric, "gpu_hours") ? 1 : 0, v);
	return buf;
}

const char *report_error_pct(double error, char *buf, size_t len)
{
	if (isnan(error))
		snprintf(buf, len, "-");
	else if (fabs(error) < 0.005)
		snprintf(buf, len, "0%%");
	else
		snprintf(buf, len, "%+.0f%%", 100 * error);
	return buf;
}

void report_backtest(FILE *out, const struct scenario *twin, const struct results *r,
		     const struct report_backtest_info *info)
{
	char from[32], to[32];
	units_format_rfc3339(twin->history.from_epoch, from, sizeof from);
	units_format_rfc3339(twin->history.to_epoch, to, sizeof to);
	fprintf(out, "backtest %s: %s .. %s, %zu of %zu observed pods replayed; run %lld in %s\n",
		twin->name, from, to, info->replayed, info->observed, (long long)info->run_id,
		info->db);
	int width = 5;
	for (size_t i = 0; i < r->n_backtest; i++) {
		int n = (int)strlen(r->backtest[i].scope);
		width = n > width ? n : width;
	}
	fprintf(out, "\n%-*s  %-19s  %9s  %9s  %6s\n", width, "scope", "metric", "observed",
		"simulated", "error");
	size_t over = 0;
	for (size_t i = 0; i < r->n_backtest; i++) {
		const struct backtest_row *b = &r->backtest[i];
		char o[32], s[32], e[16];
		bool ok = results_backtest_within(b, info->tolerance);
		over += !ok;
		fprintf(out, "%-*s  %-19s  %9s  %9s  %6s%s\n", width, b->scope, b->metric,
			figure(o, sizeof o, b, b->observed), figure(s, sizeof s, b, b->simulated),
			report_error_pct(b->error, e, sizeof e), ok ? "" : "  over");
	}
	char tol[16];
	snprintf(tol, sizeof tol, "%g%%", 100 * info->tolerance);
	if (!over)
		fprintf(out,
			"\nwithin tolerance: every figure within %s of the history (queue times "
			"also pass within 5m)\n",
			tol);
	else
		fprintf(out,
			"\n%zu figure%s differ%s from the history by more than %s (queue times by "
			"more than 5m too), observed -> simulated:\n",
			over, over == 1 ? "" : "s", over == 1 ? "s" : "", tol);
	/* One line per scope: which figures, and by how much. */
	for (size_t i = 0; i < r->n_backtest;) {
		size_t j = i;
		bool first = true;
		for (; j < r->n_backtest && !strcmp(r->backtest[j].scope, r->backtest[i].scope);
		     j++) {
			const struct backtest_row *b = &r->backtest[j];
			if (results_backtest_within(b, info->tolerance))
				continue;
			char o[32], s[32], e[16];
			if (first)
				fprintf(out, "  %s:",
					strcmp(b->scope, "all") ? b->scope : "all workloads");
			fprintf(out, "%s %s %s -> %s (%s)", first ? "" : ",", b->metric,
				figure(o, sizeof o, b, b->observed),
				figure(s, sizeof s, b, b->simulated),
				report_error_pct(b->error, e, sizeof e));
			first = false;
		}
		if (!first)
			fputc('\n', out);
		i = j;
	}
	if (!r->n_gaps) {
		fprintf(out, "could not model: nothing the history shows\n");
		return;
	}
	fprintf(out, "could not model (from the history):\n");
	for (size_t i = 0; i < r->n_gaps; i++) {
		char text[768];
		fprintf(out, "  - %s\n", report_gap_text(&r->gaps[i], text, sizeof text));
	}
}
