/*
 * html_reasons.c - the report's chart of pending reasons: pod-hours per
 * pending message (kube-scheduler's, Kueue's, the autoscaler's) as wrapped,
 * labelled bars coloured by what stops the pods, with the workloads that
 * waited with each message.
 */
#include "gpuplan/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"

static int by_pending(const void *a, const void *b)
{
	const struct pending_reason *x = *(const struct pending_reason *const *)a;
	const struct pending_reason *y = *(const struct pending_reason *const *)b;
	if (x->pending_seconds != y->pending_seconds)
		return x->pending_seconds > y->pending_seconds ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

/* Characters of a bar label per line: kube-scheduler's messages are long. */
#define WRAP_CHARS 120

/* Writes text as <text> lines of at most WRAP_CHARS, broken after ", ", the
 * first line's baseline below y (nothing with out NULL); returns the lines. */
static int wrap_lines(const char *text, FILE *out, double y)
{
	int lines = 0;
	size_t len = strlen(text);
	for (size_t at = 0; at < len; lines++) {
		size_t end = len;
		if (len - at > WRAP_CHARS) {
			end = at + WRAP_CHARS;
			while (end > at + 1 && !(text[end - 2] == ',' && text[end - 1] == ' '))
				end--;
			if (end <= at + 1) /* no ", ": the last space, never inside a word */
				for (end = at + WRAP_CHARS; end > at + 1 && text[end - 1] != ' ';
				     end--)
					;
			if (end <= at + 1)
				end = at + WRAP_CHARS;
		}
		if (out) {
			fprintf(out, "<text class=\"bar-label\" x=\"%d\" y=\"%.1f\">", MARGIN_L,
				y + 12 + 16 * lines);
			char *part = gp_xmalloc(end - at + 1);
			memcpy(part, text + at, end - at);
			part[end - at] = '\0';
			html_esc(out, part);
			free(part);
			fputs("</text>\n", out);
		}
		at = end;
	}
	return lines ? lines : 1;
}

/*
 * The colour of a pending message: by what stops the pods, never a
 * workload's colour (those are palette's).  A FitError message is read by
 * its clause with the most nodes ("0/5 nodes are available: 1 node(s) had
 * untolerated taint {...}, 4 Insufficient nvidia.com/gpu" is about GPUs);
 * Kueue's and the autoscaler's messages by their own words.  The first kind
 * whose word the text has wins.
 */
static const struct reason_kind {
	const char *word, *name, *color;
} reason_kinds[] = {
	{"quota", "quota (Kueue)", "#a21caf"},
	{"StrictFIFO", "quota (Kueue)", "#a21caf"},
	{"scale-up", "node autoscaling", "#1e3a8a"},
	{"window", "windows", "#64748b"},
	{"unschedulable", "windows", "#64748b"},
	{"Insufficient nvidia", "GPUs", "#92400e"},
	{"Insufficient", "cpu or memory", "#b45309"},
	{"memory than the pod", "GPU memory", "#9f1239"},
	{"taint", "placement rules", "#0f766e"},
	{"didn't match", "placement rules", "#0f766e"},
	{"", "other", "#57534e"},
};
#define N_REASON_KINDS (sizeof reason_kinds / sizeof reason_kinds[0])

static const struct reason_kind *kind_of_reason(const char *msg)
{
	/* the clause with the most nodes: "N text" after ": " or ", " */
	const char *best = msg, *p = strstr(msg, "nodes are available: ");
	size_t best_len = strlen(msg);
	const char *end = strstr(msg, " preemption: ");
	end = end ? end : msg + strlen(msg);
	long most = -1;
	for (p = p ? p + 21 : NULL; p && p < end;) {
		char *q;
		long n = strtol(p, &q, 10);
		const char *next = q;
		while (next < end &&
		       !(next[0] == ',' && next[1] == ' ' && next[2] >= '0' && next[2] <= '9'))
			next++;
		if (q > p && n > most)
			most = n, best = q, best_len = (size_t)(next - q);
		p = next < end ? next + 2 : end;
	}
	for (size_t k = 0; k < N_REASON_KINDS; k++) {
		size_t w = strlen(reason_kinds[k].word);
		for (const char *at = best; at + w <= best + best_len; at++)
			if (!strncmp(at, reason_kinds[k].word, w))
				return &reason_kinds[k];
	}
	return &reason_kinds[N_REASON_KINDS - 1];
}

/* "by workload: finetune 10.1, notebooks 4.1 pod-h": the workloads that
 * pended with the message, most pod-hours first (at most four named), as a
 * line under its bar at y. */
static void reason_workloads(FILE *out, const struct page *pg, const char *reason, double y)
{
	const struct pending_reason *rows[64];
	size_t n = 0;
	for (size_t i = 0; i < pg->n_reasons && n < 64; i++)
		if (strcmp(pg->reasons[i].scope, "all") && !strcmp(pg->reasons[i].reason, reason))
			rows[n++] = &pg->reasons[i];
	if (!n)
		return;
	qsort(rows, n, sizeof *rows, by_pending);
	fprintf(out, "<text class=\"tick reason-workloads\" x=\"%d\" y=\"%.1f\">by workload",
		MARGIN_L, y);
	for (size_t i = 0; i < n && i < 4; i++) {
		fputs(i ? ", " : ": ", out);
		html_esc(out, rows[i]->scope);
		fprintf(out, " %.1f", rows[i]->pending_seconds / 3600);
	}
	if (n > 4)
		fprintf(out, " and %zu more", n - 4);
	fputs(" pod-h</text>\n", out);
}

/* Horizontal bars of pod-hours per message (scope all), longest first,
 * coloured by what stops the pods (kind_of_reason), each with the workloads
 * that waited with it. */
void html_chart_reasons(FILE *out, const struct page *pg)
{
	const struct pending_reason **rows = gp_xcalloc(pg->n_reasons + 1, sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < pg->n_reasons && n < 12; i++)
		if (!strcmp(pg->reasons[i].scope, "all"))
			rows[n++] = &pg->reasons[i];
	if (!n) {
		fputs("<p class=\"none\" id=\"no-reasons\">No pod waited with a scheduling reason.</p>\n",
		      out);
		free(rows);
		return;
	}
	qsort(rows, n, sizeof *rows, by_pending);
	int h = 12 + 22; /* the colour key above the bars */
	for (size_t i = 0; i < n; i++)
		h += 46 + 16 * wrap_lines(rows[i]->reason, NULL, 0);
	/* room right of the longest bar for its figures */
	double top = html_nice_top(rows[0]->pending_seconds / 3600),
	       w = CHART_W - MARGIN_L - MARGIN_R - 170;
	html_svg_open_sized(out, "chart-reasons", "Pending time by reason (pod-hours)", h);
	/* the key: each kind of reason the bars show, once */
	const char *labels[N_REASON_KINDS], *colors[N_REASON_KINDS];
	size_t n_keys = 0;
	for (size_t i = 0; i < n; i++) {
		const struct reason_kind *k = kind_of_reason(rows[i]->reason);
		bool seen = false;
		for (size_t j = 0; j < n_keys; j++)
			seen |= !strcmp(labels[j], k->name);
		if (!seen)
			labels[n_keys] = k->name, colors[n_keys++] = k->color;
	}
	html_legend(out, labels, colors, NULL, n_keys);
	double y = 8 + 22;
	for (size_t i = 0; i < n; i++) {
		double len = fmax(1, w * rows[i]->pending_seconds / 3600 / top);
		int lines = wrap_lines(rows[i]->reason, out, y);
		y += 16 * lines;
		fprintf(out,
			"<rect class=\"bar reason\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"16\" fill=\"%s\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%.1f "
			"pod-h, %lld pod%s</text>\n",
			MARGIN_L, y + 2, len, kind_of_reason(rows[i]->reason)->color,
			MARGIN_L + len + 6, y + 15, rows[i]->pending_seconds / 3600,
			(long long)rows[i]->pods, rows[i]->pods == 1 ? "" : "s");
		reason_workloads(out, pg, rows[i]->reason, y + 32);
		y += 46;
	}
	html_svg_close(
		out, "Pod-hours spent pending, per pending message: kube-scheduler's, Kueue's or "
		     "the autoscaler's (all workloads), coloured by what stops the pods, with the "
		     "workloads that waited with it and their pod-hours.");
	free(rows);
}
