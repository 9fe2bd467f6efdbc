/*
 * import_learn.c - what each workload of the history learns, and the twin
 * written from it (the scenario and twin.pods.csv, docs/import.md,
 * "Learning a twin").
 *
 * An instance (a Job, a JobSet, a notebook server's pod ...) arrives when
 * its first pod is created and runs from its first pod's start to its last
 * pod's finish (completion, or last sighting for a pod deleted without one).
 *   arrivals   instances created in [FROM, TO), per hour of day over the
 *              hours of that hour the period holds (and per weekday over
 *              its days, when the period holds two weeks or more); a
 *              CronJob's schedule instead, when kube_cronjob_info gave it;
 *   durations  the instances that started in the period: one started before
 *              FROM is left out (a pod running at FROM is more likely a long
 *              one: length-biased), one still running at TO is a lower bound
 *              (right-censored, in the likelihood as P(X > its length so
 *              far)); both still count in the rates when created inside the
 *              period.  Lognormal and gamma by maximum likelihood, the better
 *              by KS p-value (against the Kaplan-Meier estimate when runs are
 *              cut off) when p >= 0.05, else the complete runs' quantiles
 *              (dist: empirical);
 *   requests   the median of its pods;
 *   DCGM       gpu_busy the mean engine activity of its pods, sm_share the
 *              mean SM activity over it, vram the mean of its pods' peak MiB
 *              (where it does not fit a GPU type they ran on: fb_cap).
 * Services (Deployments, StatefulSets) hold their mean number of pods for
 * the whole period; notebooks arrive and live as batch pods do, as services.
 */
#include "import_learn.h"

#include "gpuplan/sort.h"
#include "gpuplan/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EMPIRICAL 100

struct inst {
	double created, started, finished; /* NAN: unknown / still running */
	int32_t pods;
	bool running;
};

/* What one workload learned. */
struct learned {
	size_t n_inst, n_arrivals, n_fit, n_left, n_right;
	double rate_by_hour[24], by_weekday[7];
	bool weekly;
	struct import_fit fit, lognormal, gamma;
	double *values;
	size_t n_values;
	double gpus, cpu, memory, mig_count;
	uint32_t mig;
	bool shared;
	int32_t pods;
	double replicas; /* services: mean pods alive */
	double busy, sm, fb;
	size_t n_busy, n_sm, n_fb;
	double x_busy, x_sm, x_fb; /* --dcgm's samples of its pods */
	size_t nx_busy, nx_sm, nx_fb, nx_pods;
	const char *types[16];
	size_t n_types;
	/* vram where the mean of its pods' peaks does not fit a GPU type they
	 * ran on (fb_cap), MiB, and that type's name; 0: it fits */
	double fb_cap;
	const char *fb_cap_type;
	bool inference;
	double req_by_hour[24], prompt, gen;
	uint32_t model;
};

/* The largest peak framebuffer (MiB) of a workload's pods on one GPU type. */
struct type_fb {
	const struct gpu_type *gpu;
	double most;
};

static struct type_fb *note_type_fb(struct type_fb *t, size_t *n, const struct gpu_type *gpu,
				    double mib)
{
	size_t i = 0;
	while (i < *n && t[i].gpu != gpu)
		i++;
	if (i == *n) {
		t = gp_xrealloc(t, (*n + 1) * sizeof *t);
		t[(*n)++] = (struct type_fb){gpu, 0};
	}
	t[i].most = fmax(t[i].most, mib);
	return t;
}

/* vram's bound (struct learned): a pod of a workload that ran on several
 * types used, on each, no more than that type holds (a vLLM server
 * preallocates a share of its GPU), so the mean of its peaks over all of
 * them may not fit the smallest, where the twin would OOM-kill what the
 * cluster ran.  For each type the mean does not fit, the most its pods used
 * there (at most what it holds); the least of those.  0: the mean fits. */
static void fb_cap(struct learned *l, const struct type_fb *t, size_t n)
{
	double mean = l->n_fb ? l->fb / (double)l->n_fb : 0;
	l->fb_cap = 0;
	for (size_t i = 0; i < n; i++) {
		double holds = t[i].gpu->memory_bytes / GP_MIB;
		double mib = fmin(t[i].most, holds);
		if (mean > holds && (!l->fb_cap || mib < l->fb_cap))
			l->fb_cap = mib, l->fb_cap_type = t[i].gpu->name;
	}
}

/* When pod p finished: completion, or its last sighting when it vanished
 * (deleted) or ended without one; NAN while running at TO. */
static double finished(const struct hist *h, const struct hist_pod *p)
{
	if (isfinite(p->completed))
		return p->completed;
	bool ended = p->phase == 3 || p->phase == 4;
	if (isfinite(p->last_seen) && (ended || p->last_seen < (double)h->to - 300))
		return p->last_seen;
	return NAN;
}

static double started(const struct hist_pod *p)
{
	return isfinite(p->started) ? p->started : p->scheduled;
}

static double created(const struct hist_pod *p)
{
	return isfinite(p->created) ? p->created : p->first_seen;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	sort_doubles(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The seconds of [from, to) in each hour of day (and each weekday, Monday 0). */
static void exposure(int64_t from, int64_t to, double hours[24], double days[7])
{
	memset(hours, 0, 24 * sizeof *hours);
	memset(days, 0, 7 * sizeof *days);
	for (int64_t t = from; t < to;) {
		int64_t next = (t / 3600 + 1) * 3600;
		if (next > to)
			next = to;
		int64_t day = t >= 0 ? t / 86400 : (t - 86399) / 86400;
		hours[(t % 86400 + 86400) % 86400 / 3600] += (double)(next - t) / 3600;
		days[((day + 3) % 7 + 7) % 7] += (double)(next - t) / 86400;
		t = next;
	}
}

static void learn_arrivals(const struct hist *h, const struct inst *in, size_t n, struct learned *l)
{
	double hours[24], days[7], by_hour[24] = {0}, by_day[7] = {0};
	exposure(h->from, h->to, hours, days);
	for (size_t i = 0; i < n; i++) {
		double c = in[i].created;
		if (!(c >= (double)h->from && c < (double)h->to))
			continue;
		int64_t t = (int64_t)floor(c);
		by_hour[t % 86400 / 3600]++;
		by_day[(t / 86400 + 3) % 7]++;
		l->n_arrivals++;
	}
	for (int k = 0; k < 24; k++)
		l->rate_by_hour[k] = hours[k] > 0 ? by_hour[k] / hours[k] : 0;
	l->weekly = h->to - h->from >= 14 * 86400;
	double span_days = (double)(h->to - h->from) / 86400;
	double mean = (double)l->n_arrivals / span_days;
	for (int d = 0; d < 7; d++)
		l->by_weekday[d] = days[d] > 0 && mean > 0 ? by_day[d] / days[d] / mean : 1;
}

static void learn_durations(const struct hist *h, const struct inst *in, size_t n,
			    struct learned *l)
{
	double *x = gp_xcalloc(n + 1, sizeof *x), *c = gp_xcalloc(n + 1, sizeof *c);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		bool before = !isfinite(in[i].started) || in[i].started < (double)h->from;
		if (in[i].running || !isfinite(in[i].finished)) {
			l->n_right++;
			/* still going at TO: a lower bound on its length, when it
			 * started in the period */
			if (!before)
				c[m++] = fmax(1, (double)h->to - in[i].started);
			continue;
		}
		if (before) {
			l->n_left++;
			continue;
		}
		x[l->n_fit++] = fmax(1, in[i].finished - in[i].started);
	}
	import_fit_choose_censored(x, l->n_fit, c, m, &l->fit, &l->lognormal, &l->gamma);
	free(c);
	if (l->fit.kind == IMPORT_FIT_EMPIRICAL && l->n_fit) {
		l->values = gp_xcalloc(MAX_EMPIRICAL, sizeof *l->values);
		l->n_values = import_fit_quantiles(x, l->n_fit, l->values, MAX_EMPIRICAL);
	}
	free(x);
}

/* The next word of s (letters and digits, lower case) into w; NULL at the end. */
static const char *word(const char *s, char *w, size_t size)
{
	while (*s && !isalnum((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	size_t n = 0;
	for (; isalnum((unsigned char)*s); s++)
		if (n + 1 < size)
			w[n++] = (char)tolower((unsigned char)*s);
	w[n] = '\0';
	return s;
}

/* A vLLM model_name as a catalog model: the catalog name's words appear in
 * it in order ("meta-llama/Llama-3.1-8B-Instruct" holds llama, 3 and 8b:
 * llama-3-8b); the model with the most words wins. */
static const char *catalog_model_of(const char *name)
{
	const char *best = NULL;
	size_t best_words = 0;
	for (size_t i = 0; i < catalog_model_count(); i++) {
		const char *m = catalog_model_at(i)->name, *at = name;
		char want[64], got[64];
		size_t words = 0;
		bool all = true;
		for (const char *c = word(m, want, sizeof want); c && all;
		     c = word(c, want, sizeof want), words++) {
			bool found = false;
			while (!found && (at = word(at, got, sizeof got)))
				found = !strcmp(got, want);
			all = found;
		}
		if (all && words > best_words) {
			best = m;
			best_words = words;
		}
	}
	return best;
}

/* Everything workload w learns from its pods (their indexes in pods[]). */
static void learn(struct hist *h, size_t w, const size_t *pods, size_t n, struct learned *l)
{
	memset(l, 0, sizeof *l);
	l->mig = l->model = HIST_NONE;
	struct inst *in = gp_xcalloc(n, sizeof *in);
	size_t *slot = h->slot; /* instance -> in + 1; all 0 between workloads */
	double *v = gp_xcalloc(n, sizeof *v), alive = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hist_pod *p = &h->pods[pods[i]];
		if (!slot[p->instance]) {
			slot[p->instance] = ++l->n_inst;
			in[l->n_inst - 1] = (struct inst){NAN, NAN, NAN, 0, false};
		}
		struct inst *x = &in[slot[p->instance] - 1];
		double c = created(p), s = started(p), f = finished(h, p);
		x->created = isnan(x->created) || c < x->created ? c : x->created;
		x->started = isnan(x->started) || s < x->started ? s : x->started;
		x->finished = isnan(x->finished) || f > x->finished ? f : x->finished;
		x->running |= isnan(f);
		x->pods++;
		double a = fmax(isfinite(s) ? s : c, (double)h->from);
		double b = fmin(isnan(f) ? (double)h->to : f, (double)h->to);
		alive += b > a ? b - a : 0;
	}
	for (size_t i = 0; i < n; i++)
		slot[h->pods[pods[i]].instance] = 0;
	learn_arrivals(h, in, l->n_inst, l);
	learn_durations(h, in, l->n_inst, l);
	l->replicas = alive / (double)(h->to - h->from);
	for (size_t i = 0; i < l->n_inst; i++)
		v[i] = in[i].pods;
	l->pods = (int32_t)llround(median(v, l->n_inst));
	free(in);
	/* requests: the median pod; MIG by the first profile seen */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hist_pod *p = &h->pods[pods[i]];
		if (p->mig != HIST_NONE && l->mig == HIST_NONE)
			l->mig = p->mig;
		l->shared |= p->shared;
		v[k++] = p->mig != HIST_NONE ? p->mig_count : p->gpus;
	}
	l->gpus = median(v, k);
	for (size_t i = 0; i < n; i++)
		v[i] = h->pods[pods[i]].cpu;
	l->cpu = median(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = h->pods[pods[i]].memory;
	l->memory = median(v, n);
	free(v);
	double hours = 0, req = 0;
	struct type_fb *type_fb = NULL;
	size_t n_type_fb = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hist_pod *p = &h->pods[pods[i]];
		if (p->has_busy)
			l->busy += p->busy, l->n_busy++;
		if (p->has_sm)
			l->sm += p->sm, l->n_sm++;
		if (p->has_fb)
			l->fb += p->fb, l->n_fb++;
		l->x_busy += p->x_busy, l->nx_busy += p->nx_busy;
		l->x_sm += p->x_sm, l->nx_sm += p->nx_sm;
		l->x_fb += p->x_fb, l->nx_fb += p->nx_fb;
		l->nx_pods += p->nx_busy || p->nx_sm || p->nx_fb;
		if (p->vllm) {
			l->inference = true;
			l->prompt += p->vllm_prompt;
			l->gen += p->vllm_gen;
			req += p->vllm_requests;
			if (p->model != HIST_NONE)
				l->model = p->model;
		}
		/* the GPU types its pods ran on */
		size_t node = p->node == HIST_NONE
				      ? STRINDEX_NONE
				      : strindex_find(&h->imp_nodes, hist_str(h, p->node));
		const struct gpu_type *g = node != STRINDEX_NONE
						   ? h->im->pools[h->im->nodes[node].pool].shape.gpu
						   : NULL;
		if (node == STRINDEX_NONE && p->node != HIST_NONE && !h->warned_node) {
			imp_warn(h->im,
				 "pods ran on nodes the pools lack (e.g. %s/%s on %s): their GPU "
				 "types are not known, so their workloads have no gpu_spec",
				 hist_str(h, p->ns), hist_str(h, p->name), hist_str(h, p->node));
			h->warned_node = true;
		}
		bool seen = !g;
		for (size_t t = 0; t < l->n_types && !seen; t++)
			seen = !strcmp(l->types[t], g->name);
		if (!seen && l->n_types < 16)
			l->types[l->n_types++] = g->name;
		if (g && p->has_fb)
			type_fb = note_type_fb(type_fb, &n_type_fb, g, p->fb);
	}
	fb_cap(l, type_fb, n_type_fb);
	free(type_fb);
	if (l->inference) {
		l->prompt = req > 0 ? l->prompt / req : 0;
		l->gen = req > 0 ? l->gen / req : 0;
		for (int hr = 0; hr < 24; hr++) {
			double sum = 0;
			int32_t days = 0;
			for (size_t i = 0; i < n; i++) {
				const struct hist_pod *p = &h->pods[pods[i]];
				sum += p->vllm_hourly[hr];
				days = p->vllm_hours[hr] > days ? p->vllm_hours[hr] : days;
			}
			l->req_by_hour[hr] = days ? sum / days / 3600 : 0;
			hours += days;
		}
		l->inference = hours > 0 || req > 0;
	}
	(void)w;
}

/* --- writing --------------------------------------------------------------------------- */

static void write_seconds(FILE *out, double s)
{
	imp_write_duration(out, (sim_time)llround(fmax(1, s)) * SIM_SECOND);
}

static void period(FILE *out, const struct hist *h)
{
	char a[32], b[32];
	units_format_rfc3339(h->from, a, sizeof a);
	units_format_rfc3339(h->to, b, sizeof b);
	fprintf(out, "%.10s..%.10s", a, b);
}

static void write_rates(FILE *out, const double *r, size_t n, const char *fmt)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		fprintf(out, fmt, r[i]);
	}
	fputc(']', out);
}

static void write_arrival(FILE *out, const struct hist *h, const struct hist_wl *w,
			  const struct learned *l)
{
	uint32_t sched = strcmp(hist_str(h, w->kind), "CronJob")
				 ? HIST_NONE
				 : hist_map_get(h, &h->cronjob_schedule, w->ns, w->ctl);
	if (sched != HIST_NONE) {
		fputs("    # schedule of CronJob ", out);
		imp_quoted(out, hist_str(h, w->ctl));
		fprintf(out, " (kube_cronjob_info), %zu jobs seen in ", l->n_arrivals);
		period(out, h);
		fputs("\n    arrival: {schedule: ", out);
		imp_quoted(out, hist_str(h, sched));
		fputs("}\n", out);
		return;
	}
	if (!l->n_arrivals) {
		fprintf(out,
			"    arrival: !placeholder {at: %s}   # no instance was created in the "
			"period, so no rate\n",
			h->from_text);
		return;
	}
	fprintf(out, "    # learned from %zu arrivals, ", l->n_arrivals);
	period(out, h);
	fprintf(out, ": rate per hour by hour of day (UTC)%s\n",
		l->weekly ? ", times a factor by weekday from Monday" : "");
	fputs("    arrival: {process: poisson, rate_by_hour: ", out);
	write_rates(out, l->rate_by_hour, 24, "%.4g");
	if (l->weekly) {
		fputs(", by_weekday: ", out);
		write_rates(out, l->by_weekday, 7, "%.3g");
	}
	fputs("}\n", out);
}

static const char *const fit_names[] = {"lognormal", "gamma", "empirical"};

static void write_duration_value(FILE *out, const struct hist *h, const struct hist_wl *w,
				 const struct learned *l)
{
	size_t censored = l->n_left + l->n_right;
	if (w->service && !strcmp(hist_str(h, w->kind), "Deployment")) {
		fputs("    duration: ", out);
		write_seconds(out, (double)(h->to - h->from));
		fputs("   # a service: held for the whole period\n", out);
		return;
	}
	if (!l->n_fit) {
		fputs("    duration: !placeholder ", out);
		write_seconds(out, (double)(h->to - h->from));
		fprintf(out,
			"   # no instance both started and finished in the period "
			"(%zu censored: %zu running at FROM, %zu at TO)\n",
			censored, l->n_left, l->n_right);
		return;
	}
	fprintf(out, "    # learned from %zu runs, ", l->n_fit);
	period(out, h);
	if (l->fit.censored)
		fprintf(out,
			" and %zu still going at TO as lower bounds (%zu running at FROM left "
			"out): ",
			l->fit.censored, l->n_left);
	else
		fprintf(out, " (%zu censored left out: %zu running at FROM, %zu at TO): ", censored,
			l->n_left, l->n_right);
	if (l->fit.kind == IMPORT_FIT_EMPIRICAL) {
		if (l->n_fit < IMPORT_FIT_MIN_N)
			fprintf(out, "too few to fit, the runs themselves");
		else
			fprintf(out,
				"neither fits (lognormal KS p=%.2g, gamma KS p=%.2g), %zu quantiles",
				l->lognormal.p, l->gamma.p, l->n_values);
		fputs(", mean ", out);
		write_seconds(out, l->fit.mean);
		fputs("\n    duration: {dist: empirical, values: [", out);
		for (size_t i = 0; i < l->n_values; i++)
			fprintf(out, "%s%.0fs", i ? ", " : "", fmax(1, round(l->values[i])));
		fputs("]}\n", out);
		return;
	}
	const struct import_fit *f = &l->fit, *other = f->kind == IMPORT_FIT_LOGNORMAL
							       ? &l->gamma
							       : &l->lognormal;
	fprintf(out, "%s by maximum likelihood%s, mean ", fit_names[f->kind],
		f->censored ? " with the censored runs" : "");
	write_seconds(out, f->mean);
	fprintf(out, ", KS D=%.3f p=%.2f (%s p=%.2f)\n", f->ks_d, f->p, fit_names[other->kind],
		other->p);
	fprintf(out, "    duration: {dist: %s, mean: %.0fs, ", fit_names[f->kind],
		fmax(1, f->mean));
	if (f->kind == IMPORT_FIT_LOGNORMAL)
		fprintf(out, "sigma: %.3g}\n", fmin(5, fmax(0.001, f->sigma)));
	else
		fprintf(out, "shape: %.3g}\n", fmin(1e6, fmax(0.01, f->shape)));
}

static void write_requests(FILE *out, const struct learned *l, const char *mig, size_t n_pods)
{
	fprintf(out, "    # requests: the median of %zu pods\n", n_pods);
	if (mig)
		fprintf(out, "    gpus: {mig: %s}\n", mig);
	else
		fprintf(out, "    gpus: %.0f\n", fmax(1, round(l->gpus)));
	if (l->cpu > 0)
		fprintf(out, "    cpu: %.4g\n", l->cpu);
	if (l->memory > 0) {
		fputs("    memory: ", out);
		imp_write_bytes(out, round(l->memory));
		fputc('\n', out);
	}
}

/* Without the history's series: --dcgm's scrape, calibrated as the snapshot
 * import does (the mean of its pods' samples; sm_share SM over engine). */
static void write_scrape(FILE *out, const struct hist *h, const struct learned *l, bool inference)
{
	fputs("    # gpu_busy, sm_share, vram: no DCGM series for its pods in the history; from "
	      "the scrape ",
	      out);
	imp_comment_text(out, h->o->dcgm);
	fprintf(out, " (--dcgm), %zu pods\n", l->nx_pods);
	if (l->nx_busy && !inference) {
		double busy = fmin(1, fmax(0.001, l->x_busy / (double)l->nx_busy));
		fprintf(out, "    gpu_busy: %.3g   # DCGM engine activity, mean of %zu samples\n",
			busy, l->nx_busy);
		if (l->nx_sm)
			fprintf(out,
				"    sm_share: %.3g   # DCGM SM activity over engine activity\n",
				fmin(1, fmax(0.001, l->x_sm / (double)l->nx_sm / busy)));
	}
	if (l->nx_fb && l->x_fb > 0)
		fprintf(out, "    vram: %.0fMiB   # DCGM framebuffer used, mean of %zu samples\n",
			l->x_fb / (double)l->nx_fb, l->nx_fb);
}

static void write_dcgm(FILE *out, const struct hist *h, const struct learned *l, bool inference)
{
	if (!l->n_busy && !l->n_fb && (l->nx_busy || l->nx_fb)) {
		write_scrape(out, h, l, inference);
		return;
	}
	if (!l->n_busy && !l->n_fb) {
		fputs("    # gpu_busy, sm_share, vram: not learned (no DCGM series for its pods)\n",
		      out);
		return;
	}
	if (l->n_busy && !inference) {
		double busy = fmin(1, fmax(0.001, l->busy / (double)l->n_busy));
		fprintf(out, "    gpu_busy: %.3g   # DCGM engine activity, mean of %zu pods\n",
			busy, l->n_busy);
		if (l->n_sm)
			fprintf(out,
				"    sm_share: %.3g   # DCGM SM activity over engine activity\n",
				fmin(1, fmax(0.001, l->sm / (double)l->n_sm / busy)));
	}
	double mean = l->n_fb ? l->fb / (double)l->n_fb : 0;
	if (mean > 0 && l->fb_cap > 0)
		fprintf(out,
			"    vram: %.0fMiB   # DCGM framebuffer used: the most its pods used on %s, "
			"at most what it holds (the mean of %zu pods' peaks, %.0fMiB, does not "
			"fit it)\n",
			l->fb_cap, l->fb_cap_type, l->n_fb, mean);
	else if (mean > 0)
		fprintf(out,
			"    vram: %.0fMiB   # DCGM framebuffer used, mean of %zu pods' peaks\n",
			mean, l->n_fb);
}

/* A vLLM Deployment: an inference service with its traffic by hour. */
static void write_inference(FILE *out, const struct hist *h, const struct hist_wl *w,
			    const struct learned *l, const char *mig)
{
	const char *name = l->model != HIST_NONE ? hist_str(h, l->model) : NULL;
	const char *model = name ? catalog_model_of(name) : NULL;
	fprintf(out, "  - name: %s\n    kind: inference\n", w->name);
	if (model) {
		fprintf(out, "    model: %s   # vLLM's model_name ", model);
		imp_quoted(out, name);
		fputc('\n', out);
	} else {
		fputs("    model: !placeholder llama-3-8b   # vLLM's model_name ", out);
		if (name)
			imp_quoted(out, name);
		else
			fputs("is absent", out);
		fputs(name ? " is not a catalog model\n" : "\n", out);
	}
	fprintf(out, "    replicas: %d   # its mean number of pods over the period\n",
		(int)fmax(1, round(l->replicas)));
	write_requests(out, l, mig, w->n_pods);
	fputs("    # requests per second by hour of day (UTC), from vllm:request_success_total; "
	      "tokens: means\n    # from vllm:prompt_tokens_total and "
	      "vllm:generation_tokens_total over the requests, ",
	      out);
	period(out, h);
	fputs("\n    requests: {process: poisson, rate_by_hour: ", out);
	write_rates(out, l->req_by_hour, 24, "%.4g");
	fprintf(out, ", prompt_tokens: %.0f, output_tokens: %.0f}\n", fmax(1, round(l->prompt)),
		fmax(1, round(l->gen)));
	if (l->n_types) {
		fputs("    gpu_spec: [", out);
		for (size_t t = 0; t < l->n_types; t++)
			fprintf(out, "%s%s", t ? ", " : "", l->types[t]);
		fputs("]\n", out);
	}
	fputs("    tolerations: [{operator: Exists}]\n", out);
	write_dcgm(out, h, l, true);
	if (w->queue != HIST_NONE && h->o->kueue)
		imp_warn(h->im,
			 "workload %s is an inference service, placed before batch work and not "
			 "through Kueue: its pods' LocalQueue %s is left out",
			 w->name, hist_str(h, w->queue));
}

/* Its pods' LocalQueue (label kueue.x-k8s.io/queue-name) through --kueue's
 * LocalQueue to its ClusterQueue, as the snapshot import maps a pod's. */
static void write_queue(FILE *out, const struct hist *h, const struct hist_wl *w)
{
	if (w->queue == HIST_NONE)
		return;
	struct imp_pod p = {.ns = hist_str(h, w->ns),
			    .name = hist_str(h, w->queue_pod),
			    .queue = hist_str(h, w->queue)};
	const char *q = imp_cluster_queue(h->im, &p);
	if (!q) {
		imp_warn_no_queue(h->im, &p);
		return;
	}
	fprintf(out, "    queue: %s   # LocalQueue ", q);
	imp_quoted(out, p.ns);
	fputc('/', out);
	imp_quoted(out, p.queue);
	fputs(" of its pods' kueue.x-k8s.io/queue-name\n", out);
}

static void write_workload(FILE *out, const struct hist *h, const struct hist_wl *w,
			   const struct learned *l, const char *mig)
{
	fputs("  # ", out);
	imp_comment_text(out, hist_str(h, w->kind));
	fputc(' ', out);
	imp_quoted(out, hist_str(h, w->ns));
	fputc('/', out);
	imp_quoted(out, hist_str(h, w->ctl));
	fprintf(out, ": %zu pods, %zu instances, ", w->n_pods, l->n_inst);
	period(out, h);
	fputc('\n', out);
	if (l->inference && w->service) {
		write_inference(out, h, w, l, mig);
		return;
	}
	fprintf(out, "  - name: %s\n", w->name);
	bool deployment = w->service && (!strcmp(hist_str(h, w->kind), "Deployment") ||
					 !strcmp(hist_str(h, w->kind), "StatefulSet"));
	if (w->service)
		fputs("    kind: service\n", out);
	if (deployment) {
		fprintf(out, "    count: %d   # its mean number of pods over the period\n",
			(int)fmax(1, round(l->replicas)));
		fprintf(out, "    arrival: {at: %s}\n", h->from_text);
	} else
		write_arrival(out, h, w, l);
	write_requests(out, l, mig, w->n_pods);
	write_duration_value(out, h, w, l);
	if (l->pods > 1) {
		fprintf(out, "    pods: %d   # the median of its instances\n", (int)l->pods);
		if (w->gang)
			fputs("    gang: true\n", out);
	}
	if (l->n_types) {
		fputs("    gpu_spec: [", out);
		for (size_t t = 0; t < l->n_types; t++)
			fprintf(out, "%s%s", t ? ", " : "", l->types[t]);
		fputs("]   # the GPU types its pods ran on\n", out);
	}
	fputs("    tolerations: [{operator: Exists}]   # its pods ran on these nodes\n", out);
	write_queue(out, h, w);
	write_dcgm(out, h, l, false);
}

/* One line of the terminal's summary: name, what created it, pods, its
 * arrivals, its duration (or what stands for them). */
static void summary_line(FILE *out, const struct hist *h, const struct hist_wl *w,
			 const struct learned *l)
{
	char kind[24], arrivals[48], duration[96];
	snprintf(kind, sizeof kind, "%.12s", hist_str(h, w->kind));
	for (char *c = kind; *c; c++)
		*c = (unsigned char)*c < 0x20 ? '?' : *c;
	bool deployment = w->service && (!strcmp(hist_str(h, w->kind), "Deployment") ||
					 !strcmp(hist_str(h, w->kind), "StatefulSet"));
	uint32_t sched = strcmp(hist_str(h, w->kind), "CronJob")
				 ? HIST_NONE
				 : hist_map_get(h, &h->cronjob_schedule, w->ns, w->ctl);
	double hours = (double)(h->to - h->from) / 3600;
	if (l->inference && w->service) {
		double mean = 0;
		for (int k = 0; k < 24; k++)
			mean += l->req_by_hour[k] / 24;
		snprintf(arrivals, sizeof arrivals, "%.3g requests/s by hour", mean);
		snprintf(duration, sizeof duration, "inference, %d replica%s",
			 (int)fmax(1, round(l->replicas)), round(l->replicas) > 1 ? "s" : "");
	} else if (deployment) {
		snprintf(arrivals, sizeof arrivals, "%d pods all along",
			 (int)fmax(1, round(l->replicas)));
		snprintf(duration, sizeof duration, "a service");
	} else {
		if (sched != HIST_NONE)
			snprintf(arrivals, sizeof arrivals, "schedule %.30s", hist_str(h, sched));
		else if (l->n_arrivals)
			snprintf(arrivals, sizeof arrivals, "%.3g/h by hour%s",
				 (double)l->n_arrivals / hours, l->weekly ? " and weekday" : "");
		else
			snprintf(arrivals, sizeof arrivals, "placeholder");
		char mean[32];
		units_format_duration((sim_time)llround(l->fit.mean) * SIM_SECOND, mean,
				      sizeof mean);
		if (!l->n_fit)
			snprintf(duration, sizeof duration, "placeholder (%zu censored)",
				 l->n_left + l->n_right);
		else if (l->fit.kind == IMPORT_FIT_EMPIRICAL)
			snprintf(duration, sizeof duration, "empirical, mean %s (%zu run%s)", mean,
				 l->n_fit, l->n_fit == 1 ? "" : "s");
		else
			snprintf(duration, sizeof duration, "%s, mean %s (%zu runs, KS p=%.2f)",
				 fit_names[l->fit.kind], mean, l->n_fit, l->fit.p);
	}
	fprintf(out, "  %-20s %-12s %6zu  %-28s %s\n", w->name, kind, w->n_pods, arrivals,
		duration);
}

/* --- the observed pods (twin.pods.csv) ---------------------------------------------------- */

struct row {
	double created;
	const struct hist_pod *p;
};

static int by_created(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return 0;
}

/* A CSV cell, quoted as RFC 4180 says when it holds a comma, a quote or a
 * line break (a name Kubernetes would refuse, but the file must hold it). */
static void csv_cell(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_time(FILE *out, double t, int64_t from)
{
	double rel = t - (double)from;
	if (isfinite(t) && rel == round(rel))
		fprintf(out, "%.0f", rel);
	else if (isfinite(t))
		fprintf(out, "%.3f", rel);
}

static void write_csv(struct hist *h, FILE *out)
{
	struct row *rows = gp_xcalloc(h->n_pods + 1, sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < h->n_pods; i++) {
		const struct hist_pod *p = &h->pods[i];
		double c = created(p), f = finished(h, p);
		/* the pods that existed in [FROM, TO]: an object is seen until it is
		 * deleted, which may be after it finished */
		double gone = isfinite(p->last_seen) ? fmax(p->last_seen, isfinite(f) ? f : 0) : f;
		if (p->workload < 0 || !isfinite(c) || c > (double)h->to ||
		    (isfinite(gone) && gone < (double)h->from))
			continue;
		rows[n++] = (struct row){c, p};
	}
	qsort(rows, n, sizeof *rows, by_created);
	/* ties by pod name */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i;
		     k > 0 && rows[k - 1].created == rows[k].created &&
		     strcmp(hist_str(h, rows[k - 1].p->name), hist_str(h, rows[k].p->name)) > 0;
		     k--) {
			struct row t = rows[k];
			rows[k] = rows[k - 1];
			rows[k - 1] = t;
		}
	fputs("# observed pods of ", out);
	period(out, h);
	fputs(", times in seconds since from\n", out);
	fputs("workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,cpu_milli,"
	      "memory_bytes,phase\n",
	      out);
	static const char *const phases[] = {"Pending",   "Pending", "Running",
					     "Succeeded", "Failed",  "Running"};
	for (size_t i = 0; i < n; i++) {
		const struct hist_pod *p = rows[i].p;
		double f = finished(h, p), s = isfinite(p->scheduled) ? p->scheduled : p->started;
		if (isfinite(f) && f > (double)h->to)
			f = NAN;
		const char *cells[] = {h->wls[p->workload].name, hist_str(h, p->ns),
				       hist_str(h, p->name), hist_str(h, p->node)};
		for (size_t k = 0; k < 4; k++) {
			csv_cell(out, cells[k]);
			fputc(',', out);
		}
		csv_time(out, rows[i].created, h->from);
		fputc(',', out);
		csv_time(out, isfinite(s) && s <= (double)h->to ? s : NAN, h->from);
		fputc(',', out);
		csv_time(out, f, h->from);
		const char *phase = phases[p->phase];
		if (isfinite(f) && !isfinite(p->completed) && p->phase != 3 && p->phase != 4)
			phase = "Deleted";
		else if (!isfinite(f) && (p->phase == 3 || p->phase == 4))
			phase = "Running"; /* finished after TO */
		else if (!isfinite(f) && !isfinite(s))
			phase = "Pending";
		else if (!isfinite(f))
			phase = "Running";
		fprintf(out, ",%.0f,%.0f,%.0f,%s\n", p->mig != HIST_NONE ? p->mig_count : p->gpus,
			p->cpu * 1000, p->memory, phase);
	}
	free(rows);
}

/* --- the twin ------------------------------------------------------------------------------ */

static void write_header(FILE *out, const struct hist *h)
{
	fputs("# Learned by `gpuplan import --history` from ", out);
	imp_quoted(out, h->dir);
	fprintf(out, " (%zu files), %s to %s", h->n_files, h->from_text, h->to_text);
	if (h->o->opencost) {
		fputs(", prices from ", out);
		imp_comment_text(out, h->o->opencost);
	}
	fputs(":\n", out);
	fputs("# every learned value says where it came from; values that could not be "
	      "learned carry\n# !placeholder and say why.\n",
	      out);
	fprintf(out, "name: %s\nseed: 1\nstart: %s\nhorizon: ", h->o->name ? h->o->name : "twin",
		h->from_text);
	write_seconds(out, (double)(h->to - h->from));
	fputs("\nhistory:\n", out);
	fprintf(out, "  from: %s\n  to: %s\n  pods: ", h->from_text, h->to_text);
	imp_quoted(out, h->o->pods_csv ? h->o->pods_csv : "twin.pods.csv");
	fputs("\npools:\n", out);
	for (size_t i = 0; i < h->im->n_pools; i++)
		imp_write_pool(out, h->im, &h->im->pools[i]);
	imp_write_queues(out, h->im);
	fputs("workloads:\n", out);
}

int hist_learn(struct hist *h)
{
	struct import_result *r = h->im->r;
	if (!h->n_wls)
		return gp_errorf(h->err, GP_EINPUT,
				 "%s: no pod in the period asks for GPUs; nothing to learn",
				 h->dir);
	/* the pods of each workload, by counting sort */
	size_t *start = gp_xcalloc(h->n_wls + 1, sizeof *start);
	for (size_t i = 0; i < h->n_pods; i++)
		if (h->pods[i].workload >= 0)
			start[h->pods[i].workload + 1]++;
	for (size_t w = 0; w < h->n_wls; w++)
		start[w + 1] += start[w];
	size_t *order = gp_xcalloc(start[h->n_wls] + 1, sizeof *order),
	       *fill = gp_xcalloc(h->n_wls, sizeof *fill);
	for (size_t i = 0; i < h->n_pods; i++)
		if (h->pods[i].workload >= 0) {
			size_t w = (size_t)h->pods[i].workload;
			order[start[w] + fill[w]++] = i;
		}
	free(fill);
	h->slot = gp_xcalloc(h->instance_index.n + 1, sizeof *h->slot);
	for (size_t i = 0; i < h->im->n_nodes;
	     i++) /* ids are the nodes' indexes: names are unique */
		strindex_add(&h->imp_nodes, h->im->nodes[i].name, NULL);
	FILE *out = open_memstream(&r->yaml, &r->yaml_len);
	write_header(out, h);
	FILE *sum = open_memstream(&r->summary, &r->summary_len);
	fprintf(sum, "  %-20s %-12s %6s  %-28s %s\n", "workload", "created by", "pods", "arrivals",
		"duration");
	for (size_t w = 0; w < h->n_wls; w++) {
		struct learned l;
		learn(h, w, order + start[w], start[w + 1] - start[w], &l);
		const char *mig = l.mig != HIST_NONE ? hist_str(h, l.mig) : NULL;
		write_workload(out, h, &h->wls[w], &l, mig);
		summary_line(sum, h, &h->wls[w], &l);
		r->n_censored += l.n_left + l.n_right;
		r->n_learned++;
		free(l.values);
	}
	fclose(out);
	fclose(sum);
	out = open_memstream(&r->csv, &r->csv_len);
	write_csv(h, out);
	fclose(out);
	free(order);
	free(start);
	r->n_pods = h->n_pods;
	r->n_nodes = h->im->n_nodes;
	r->n_pools = h->im->n_pools;
	r->n_workloads = 0;
	r->snapshot = h->from;
	if (h->n_cpu_only)
		imp_warn(h->im, "%zu pods without GPUs are left out", h->n_cpu_only);
	return GP_OK;
}
