/*
 * report.c - the run summary and the resolved scenario (see report.h).
 */
#include "gpuplan/report.h"

#include "gpuplan/cost.h"

#include "gpuplan/collect.h"
#include "gpuplan/footprint.h"
#include "gpuplan/units.h"

#include <math.h>
#include <string.h>

const char *report_money(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (v == 0 || fabs(v) >= 1)
		snprintf(buf, len, "%.2f", v);
	else /* three significant digits, without an exponent */
		snprintf(buf, len, "%.*f", 2 - (int)floor(log10(fabs(v))), v);
	return buf;
}

void report_duration(sim_time t, char *buf, size_t len) { units_format_duration(t, buf, len); }

struct column {
	const char *title;
	enum metric_id metric;
	int decimals;
};

/* Whether any pool has a price: without one every cost is 0, shown as "-". */
static bool has_prices(const struct scenario *sc)
{
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct price *x = &sc->pools[p].price;
		if (x->gpu_hour > 0 || x->cpu_hour > 0 || x->gib_hour > 0)
			return true;
	}
	return false;
}

const char *report_cell(char *buf, size_t len, double v, int format, bool prices)
{
	if (isnan(v) || (format == REPORT_MONEY && !prices))
		return units_format_figure(NAN, 0, buf, len);
	if (format == REPORT_GPUS) {
		double r = round(v * 100) / 100;
		if (r == floor(r))
			snprintf(buf, len, "%.0f", r);
		else
			snprintf(buf, len, "%.2f", r);
		for (size_t n = strlen(buf); strchr(buf, '.') && buf[n - 1] == '0'; n--)
			buf[n - 1] = '\0'; /* "0.50" -> "0.5" */
		return buf;
	}
	if (format == REPORT_MONEY)
		return report_money(v, buf, len);
	return units_format_figure(v, format, buf, len);
}

static const struct column columns[] = {
	{"capacity", METRIC_CAPACITY_GPUS, REPORT_GPUS},
	{"peak-demand", METRIC_PEAK_DEMAND_GPUS, REPORT_GPUS},
	{"peak-alloc", METRIC_PEAK_ALLOCATED_GPUS, REPORT_GPUS},
	{"alloc%", METRIC_GPU_ALLOCATION_PCT, 1},
	{"engine%", METRIC_ENGINE_ACTIVE_PCT, 1},
	{"sm%", METRIC_SM_ACTIVE_PCT, 1},
	{"vram%", METRIC_VRAM_USED_PCT, 1},
	{"queue-mean-s", METRIC_QUEUE_TIME_MEAN_S, 0},
	{"queue-p95-s", METRIC_QUEUE_TIME_P95_S, 0},
	{"done", METRIC_JOBS_COMPLETED, 0},
	{"of", METRIC_JOBS_SUBMITTED, 0},
	{"deadline%", METRIC_DEADLINE_MET_PCT, 1},
	{"gpu-hours", METRIC_GPU_HOURS_ALLOCATED, 2},
	{"oom", METRIC_OOM_KILLS, 0},
	{"cost", METRIC_COST_TOTAL, REPORT_MONEY},
	{"$/verified", METRIC_COST_PER_VERIFIED_RESULT, REPORT_MONEY},
};

#define N_COLUMNS (sizeof columns / sizeof columns[0])

/* A queue column's cell: "never" when jobs of the scope never started and
 * some still wait, ">=N" when a job still waiting has waited N s, longer
 * than the figure of the jobs that started; else the figure. */
static const char *queue_cell(char *buf, size_t len, const struct results *r, const char *scope,
			      double v)
{
	double waiting = results_or(r, scope, METRIC_JOBS_WAITING, NAN),
	       waited = results_or(r, scope, METRIC_WAIT_SO_FAR_MAX_S, NAN);
	if (isnan(v) && waiting > 0)
		snprintf(buf, len, "never");
	else if (waiting > 0 && waited > 0 && !(waited <= v))
		snprintf(buf, len, ">=%.0f", waited);
	else
		return units_format_figure(v, 0, buf, len);
	return buf;
}

const char *report_currency(const char *code)
{
	return !code || !code[0] || !strcmp(code, "USD") ? "$" : code;
}

const char *report_money_title(const char *title, const char *code, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", title[0] == '$' ? report_currency(code) : "",
		 title + (title[0] == '$'));
	return buf;
}

/* One row; deadline% only where deadlines are set (deadlines: the scope
 * has some), "-" elsewhere. */
static void summary_row(FILE *out, const struct results *r, const char *scope, const char *label,
			int width, bool prices, bool deadlines, const char *currency)
{
	char buf[32], title[32];
	fprintf(out, "%-*s", width, label);
	for (size_t c = 0; c < N_COLUMNS; c++) {
		enum metric_id id = columns[c].metric;
		double v = results_or(r, scope, id, NAN); /* absent: "-" */
		const char *cell = report_cell(buf, sizeof buf, v, columns[c].decimals, prices);
		if (id == METRIC_QUEUE_TIME_MEAN_S || id == METRIC_QUEUE_TIME_P95_S)
			cell = queue_cell(buf, sizeof buf, r, scope, v);
		else if (id == METRIC_DEADLINE_MET_PCT && !deadlines)
			cell = "-";
		fprintf(out, " %*s",
			(int)strlen(report_money_title(columns[c].title, currency, title,
						       sizeof title)),
			cell);
	}
	fputc('\n', out);
}

static const struct column infer_columns[] = {
	{"requests", METRIC_REQUESTS_SUBMITTED, 0}, {"done", METRIC_REQUESTS_COMPLETED, 0},
	{"rps", METRIC_THROUGHPUT_RPS, 2},          {"tokens/s", METRIC_TOKENS_PER_S, 0},
	{"ttft-p50-s", METRIC_TTFT_P50_S, 3},       {"ttft-p99-s", METRIC_TTFT_P99_S, 3},
	{"tpot-p99-s", METRIC_TPOT_P99_S, 4},       {"e2e-p99-s", METRIC_E2E_P99_S, 2},
	{"slo%", METRIC_SLO_ATTAINMENT_PCT, 1},     {"duty%", METRIC_DUTY_CYCLE_PCT, 1},
	{"preempted", METRIC_PREEMPTIONS, 0},
};

#define N_INFER_COLUMNS (sizeof infer_columns / sizeof infer_columns[0])

static void inference_row(FILE *out, const struct results *r, const char *scope, int width)
{
	char buf[32];
	fprintf(out, "%-*s", width, scope);
	for (size_t c = 0; c < N_INFER_COLUMNS; c++)
		fprintf(out, " %*s", (int)strlen(infer_columns[c].title),
			units_format_figure(results_or(r, scope, infer_columns[c].metric, NAN),
					    infer_columns[c].decimals, buf, sizeof buf));
	fputc('\n', out);
}

/* The second table: the request figures of every inference workload, and of
 * each routed service after its groups. */
static void inference_summary(FILE *out, const struct scenario *sc, const struct results *r)
{
	bool any = false;
	int width = 18; /* fits the longest name */
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (sc->workloads[w].inference)
			width = (int)fmax(width, (double)strlen(sc->workloads[w].name) + 1);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (!ws->inference)
			continue;
		if (!any) {
			fprintf(out, "\n%-*s", width, "inference");
			for (size_t c = 0; c < N_INFER_COLUMNS; c++)
				fprintf(out, " %s", infer_columns[c].title);
			fputc('\n', out);
			any = true;
		}
		inference_row(out, r, ws->name, width);
		/* a routed service's row follows its last group's: all its requests */
		const struct inference_spec *is = ws->inference;
		if (is->service && is->group == is->n_groups - 1)
			inference_row(out, r, is->service, width);
	}
	if (any)
		fprintf(out,
			"\nttft = time to first token, tpot = time per output token, e2e = "
			"end to end (seconds); slo%% = requests within every SLO bound; duty%% = "
			"replicas' time in iterations.\n");
}

static const struct column disagg_columns[] = {
	{"prefill-gpus", METRIC_PREFILL_GPUS, 0},
	{"prefill-duty%", METRIC_PREFILL_DUTY_CYCLE_PCT, 1},
	{"decode-gpus", METRIC_DECODE_GPUS, 0},
	{"decode-duty%", METRIC_DECODE_DUTY_CYCLE_PCT, 1},
	{"kv-p50-s", METRIC_KV_TRANSFER_P50_S, 4},
	{"kv-p99-s", METRIC_KV_TRANSFER_P99_S, 4},
	{"kv-gb", METRIC_KV_TRANSFER_GB, 1},
	{"prefill-cost", METRIC_PREFILL_COST, 2},
	{"decode-cost", METRIC_DECODE_COST, 2},
};

/* The roles of each disaggregated service (docs/inference.md); none: nothing. */
static void disagg_summary(FILE *out, const struct scenario *sc, const struct results *r)
{
	bool any = false;
	char buf[32];
	size_t n = sizeof disagg_columns / sizeof disagg_columns[0];
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		if (!ws->inference || !ws->inference->disagg)
			continue;
		if (!any) {
			fprintf(out, "\n%-18s", "disaggregated");
			for (size_t c = 0; c < n; c++)
				fprintf(out, " %s", disagg_columns[c].title);
			fputc('\n', out);
			any = true;
		}
		fprintf(out, "%-18s", ws->name);
		for (size_t c = 0; c < n; c++)
			fprintf(out, " %*s", (int)strlen(disagg_columns[c].title),
				units_format_figure(
					results_or(r, ws->name, disagg_columns[c].metric, NAN),
					disagg_columns[c].decimals, buf, sizeof buf));
		fputc('\n', out);
	}
	if (any)
		fprintf(out,
			"\nduty%% = the role's serving time in iterations; kv = the KV cache's "
			"transfer from the end of its prefill (link queue included).\n");
}

/* The bill of each pool with a commitment or spot capacity, beside what it
 * would cost on demand. */
static void pool_bills(FILE *out, const struct scenario *sc, const struct results *r)
{
	const char *cur = report_currency(sc->currency);
	const char *sep = strcmp(cur, "$") ? " " : "";
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *ps = &sc->pools[p];
		if (!ps->spot.on && ps->price.committed <= 0)
			continue;
		char bill[32], od[32], com[32];
		report_money(results_or(r, ps->name, METRIC_COST_BILL, NAN), bill, sizeof bill);
		report_money(results_or(r, ps->name, METRIC_COST_ON_DEMAND, NAN), od, sizeof od);
		fprintf(out, "pool %s: bill %s%s%s", ps->name, cur, sep, bill);
		if (ps->price.committed > 0)
			fprintf(out, " (%d GPUs committed: %s%s%s)", (int)ps->price.committed, cur,
				sep,
				report_money(results_or(r, ps->name, METRIC_COST_COMMITTED, NAN),
					     com, sizeof com));
		fprintf(out, "%s, %s%s%s on demand.\n", ps->spot.on ? " at spot prices" : "", cur,
			sep, od);
	}
}

void report_summary(FILE *out, const struct scenario *sc, const struct results *r, const char *db,
		    int64_t run_id)
{
	char span[32];
	report_duration(r->sim_end, span, sizeof span);
	fprintf(out, "%s: seed %llu, run %lld in %s\n", sc->name, (unsigned long long)sc->seed,
		(long long)run_id, db);
	/* The step chosen for the span (output.step, when given, is the user's own). */
	char step[64] = "";
	if (!sc->output.step && r->step > 0 && r->n_ts) { /* inflation has no timeseries */
		char d[32];
		report_duration(r->step, d, sizeof d);
		snprintf(step, sizeof step, "; timeseries step %s (auto)", d);
	}
	fprintf(out, "simulated %s from the start in %.3f s (%llu events), status %s%s\n\n", span,
		r->wall_seconds, (unsigned long long)r->events, r->status, step);
	/* The label column fits the longest name (18 at least, as it was). */
	int width = 18;
	bool deadlines = false;
	for (size_t p = 0; p < sc->n_pools; p++)
		width = (int)fmax(width, (double)strlen(sc->pools[p].name) + 6);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		width = (int)fmax(width, (double)strlen(sc->workloads[w].name) + 10);
		deadlines |= scenario_has_deadlines(&sc->workloads[w]);
	}
	char title[32];
	fprintf(out, "%-*s", width, "scope");
	for (size_t c = 0; c < N_COLUMNS; c++)
		fprintf(out, " %s",
			report_money_title(columns[c].title, sc->currency, title, sizeof title));
	fputc('\n', out);
	bool prices = has_prices(sc);
	summary_row(out, r, "all", "all", width, prices, deadlines, sc->currency);
	char label[300];
	for (size_t p = 0; p < sc->n_pools; p++) {
		snprintf(label, sizeof label, "pool %s", sc->pools[p].name);
		summary_row(out, r, sc->pools[p].name, label, width, prices, false, sc->currency);
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		snprintf(label, sizeof label, "workload %s", sc->workloads[w].name);
		summary_row(out, r, sc->workloads[w].name, label, width, prices,
			    scenario_has_deadlines(&sc->workloads[w]), sc->currency);
	}
	fprintf(out, "\nalloc%% = GPUs allocated, engine%% / sm%% = DCGM-style GR engine and SM "
		     "activity, vram%% = framebuffer used; time averages over the span.\n");
	double idle = results_or(r, "all", METRIC_COST_IDLE, NAN);
	bool usd = !sc->currency[0] || !strcmp(sc->currency, "USD"); /* $ then */
	if (!isnan(idle) && prices) { /* the inflation protocol has no time, so no cost */
		fprintf(out,
			"cost = allocations at pool prices%s%s; %s/verified adds the workload's "
			"share of idle, %s (all: the bill from the start, idle %.2f "
			"included).\n",
			usd ? "" : " in ", usd ? "" : sc->currency, report_currency(sc->currency),
			cost_rule_text(sc), idle);
		pool_bills(out, sc, r);
	}
	inference_summary(out, sc, r);
	disagg_summary(out, sc, r);
	report_findings(out, r);
}

static const char *order_name(enum sched_order o)
{
	static const char *names[] = {"fifo", "priority", "edf", "sjf"};
	return names[o];
}

static void report_pool(FILE *out, const struct scenario *sc, const struct pool_spec *p)
{
	char d[32];
	int gpus = p->nodes * p->gpus_per_node;
	fprintf(out, "  pool %s: %d x %d %s (%d GPU%s)", p->name, p->nodes, p->gpus_per_node,
		p->gpu->name, gpus, gpus == 1 ? "" : "s");
	if (p->cpu > 0 || p->memory_bytes > 0) /* 0: not limited, not "0 cpu" */
		fprintf(out, ", %.0f cpu, %.0f GiB per node", p->cpu,
			p->memory_bytes / (1024.0 * 1024 * 1024));
	for (size_t i = 0; i < p->n_windows; i++) {
		const struct window *w = &p->windows[i];
		fprintf(out, "%s%02d:%02d-%02d:%02d", i ? ", " : ", windows ", w->from / 3600,
			w->from / 60 % 60, w->to / 3600, w->to / 60 % 60);
	}
	if (p->startup) {
		report_duration(p->startup, d, sizeof d);
		fprintf(out, ", startup %s", d);
	}
	(void)sc;
	fputc('\n', out);
}

/* "inference llama-3-8b fp16 (KV fp16), 2 replicas x 1 GPU, ..." */
static void report_inference(FILE *out, const struct workload_spec *w)
{
	const struct inference_spec *in = w->inference;
	const struct request_spec *rq = &in->requests;
	char t[32];
	fprintf(out, "inference %s %s (KV %s), ", w->model->name,
		footprint_quant_name((enum quant)w->quantization),
		footprint_quant_name((enum quant)in->kv_cache));
	const struct disagg_spec *d = in->disagg;
	if (d) {
		static const char *const links[] = {"", "nvlink", "infiniband", "ethernet"};
		fprintf(out,
			"disaggregated: %d prefill x %d GPU (max_batch %d, %d tokens), %d decode x "
			"%d GPU (max_batch %d), link ",
			(int)d->prefill.replicas, (int)d->prefill.gpus, (int)d->prefill.max_batch,
			(int)d->prefill.max_batched_tokens, (int)d->decode.replicas,
			(int)d->decode.gpus, (int)d->decode.max_batch);
		if (d->link == DISAGG_LINK_NVLINK)
			fprintf(out, "nvlink (the GPU's), ");
		else
			fprintf(out, "%s%s%.6g GB/s + %gus, ", links[d->link], d->link ? " " : "",
				d->link_bandwidth / 1e9, d->link_latency_s * 1e6);
	} else if (in->target_queue > 0)
		fprintf(out, "%d to %d replicas (target queue %g)", (int)in->replicas,
			(int)in->max_replicas, in->target_queue);
	else
		fprintf(out, "%d replica%s", (int)in->replicas, in->replicas == 1 ? "" : "s");
	if (!d)
		fprintf(out, " x %d GPU%s (tp %d), max_batch %d, ",
			w->request == REQUEST_GPUS ? (int)w->gpus : 1,
			w->request == REQUEST_GPUS && w->gpus > 1 ? "s" : "",
			(int)in->tensor_parallel, (int)in->max_batch);
	if (in->memory_fraction > 0)
		fprintf(out, "memory_fraction %.2f, ", in->memory_fraction);
	if (in->service) { /* group g of a routed service: the prompts its router sends */
		fprintf(out, "group %d of %s (prompts ", (int)in->group + 1, in->service);
		if (in->prompt_lo >= 0)
			fprintf(out, "> %lld%s", (long long)in->prompt_lo,
				in->prompt_hi < INT64_MAX ? " and " : "");
		if (in->prompt_hi < INT64_MAX)
			fprintf(out, "<= %lld", (long long)in->prompt_hi);
		fprintf(out, " tokens), ");
	}
	if (rq->process == REQUESTS_TRACE)
		fprintf(out, "%zu requests x %d from %s at speedup %g", rq->n_rows, (int)rq->repeat,
			rq->trace_path, rq->speedup);
	else if (rq->count >= 0)
		fprintf(out, "%lld requests, %s %.6g/s", (long long)rq->count,
			rq->process == REQUESTS_GAMMA ? "gamma" : "poisson", rq->rate);
	else
		fprintf(out, "%s %.6g/s until the horizon",
			rq->process == REQUESTS_GAMMA ? "gamma" : "poisson", rq->rate);
	fprintf(out, ", typical request %lld tokens", (long long)in->context);
	if (in->slo.ttft) {
		report_duration(in->slo.ttft, t, sizeof t);
		fprintf(out, ", slo ttft %s", t);
	}
	if (in->slo.tpot)
		fprintf(out, ", tpot %gms", sim_seconds(in->slo.tpot) * 1000);
	if (in->slo.e2e) {
		report_duration(in->slo.e2e, t, sizeof t);
		fprintf(out, ", e2e %s", t);
	}
	fputc('\n', out);
}

static void report_workload(FILE *out, const struct scenario *sc, const struct workload_spec *w)
{
	char a[32], b[32];
	fprintf(out, "  workload %s: ", w->name);
	if (w->inference) {
		report_inference(out, w);
		return;
	}
	switch (w->arrival.kind) {
	case ARRIVAL_AT:
		report_duration(w->arrival.at, a, sizeof a);
		fprintf(out, "%lld jobs at start+%s", (long long)w->count, a);
		break;
	case ARRIVAL_POISSON:
		if (w->count >= 0)
			fprintf(out, "%lld jobs, poisson %.6g/h%s", (long long)w->count,
				w->arrival.rate * 3600, w->arrival.weekly.on ? " on average" : "");
		else
			fprintf(out, "poisson %.6g/h%s until the horizon", w->arrival.rate * 3600,
				w->arrival.weekly.on ? " on average" : "");
		break;
	case ARRIVAL_SCHEDULE:
		if (w->count >= 0)
			fprintf(out, "%lld jobs, one per firing of \"%s\"", (long long)w->count,
				w->arrival.schedule);
		else
			fprintf(out, "one job per firing of \"%s\" until the horizon",
				w->arrival.schedule);
		break;
	case ARRIVAL_TRACE:
		if (w->arrival.format == TRACE_OPENB &&
		    w->arrival.pods) /* the inflation protocol's pods */
			fprintf(out, "%zu pods from %s", w->arrival.n_pods, w->arrival.trace_path);
		else
			fprintf(out, "%zu jobs from %s", w->arrival.n_rows, w->arrival.trace_path);
		break;
	}
	report_duration((sim_time)llround(scenario_dist_mean(&w->duration) * (double)SIM_SECOND), b,
			sizeof b);
	if (w->arrival.kind != ARRIVAL_TRACE)
		fprintf(out, ", %d GPU%s, duration %s%s", w->gpus, w->gpus == 1 ? "" : "s",
			w->duration.kind == DIST_FIXED ? "" : "mean ", b);
	if (w->deadline_kind != DEADLINE_NONE) {
		report_duration(w->deadline, a, sizeof a);
		fprintf(out, ", deadline %s%s",
			w->deadline_kind == DEADLINE_AT ? "start+" : "within ", a);
	}
	fprintf(out, ", queue %s, priority %d, gpu_busy %.2f\n", sc->queues[w->queue].name,
		w->priority, w->gpu_busy);
}

/* A queue's strategy, and its preemption policies when it has any. */
static void report_queue(FILE *out, const struct queue_spec *q)
{
	static const char *const reclaim[] = {"Never", "LowerPriority", "Any"};
	static const char *const within[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"};
	fprintf(out, "  queue %s: %s", q->name,
		q->strategy == STRATEGY_STRICT_FIFO ? "StrictFIFO" : "BestEffortFIFO");
	if (q->reclaim != RECLAIM_NEVER)
		fprintf(out, ", reclaim_within_cohort %s", reclaim[q->reclaim]);
	if (q->within != WITHIN_NEVER)
		fprintf(out, ", within_cluster_queue %s", within[q->within]);
	fputc('\n', out);
}

/* A twin's history and every value not learned (placeholders). */
static void report_twin(FILE *out, const struct scenario *sc)
{
	if (sc->history.on) {
		char from[32], to[32];
		units_format_rfc3339(sc->history.from_epoch, from, sizeof from);
		units_format_rfc3339(sc->history.to_epoch, to, sizeof to);
		fprintf(out, "  history: %s .. %s, observed pods %s\n", from, to,
			sc->history.pods_path);
	}
	for (size_t i = 0; i < sc->n_placeholders; i++) {
		const struct placeholder *p = &sc->placeholders[i];
		bool plain = !strcmp(p->reason, "not learned");
		fprintf(out, "  placeholder: %s = %s (not learned%s%s)\n", p->path, p->value,
			plain ? "" : ": ", plain ? "" : p->reason);
	}
}

void report_scenario(FILE *out, const struct scenario *sc)
{
	char start[32], h[32];
	units_format_rfc3339(sc->start_epoch, start, sizeof start);
	report_duration(sc->horizon, h, sizeof h);
	fprintf(out, "scenario %s (%s): seed %llu, start %s, horizon %s\n", sc->name, sc->path,
		(unsigned long long)sc->seed, start, sc->horizon ? h : "until done");
	for (size_t p = 0; p < sc->n_pools; p++)
		report_pool(out, sc, &sc->pools[p]);
	for (size_t w = 0; w < sc->n_workloads; w++)
		report_workload(out, sc, &sc->workloads[w]);
	for (size_t q = 0; q < sc->n_queues; q++)
		report_queue(out, &sc->queues[q]);
	if (sc->output.step)
		report_duration(sc->output.step, h, sizeof h);
	else
		snprintf(h, sizeof h, "auto (at most %d windows)", COLLECT_MAX_WINDOWS);
	char policy[96] = ""; /* the defaults (best-fit, adaptive) go unsaid */
	size_t n = 0;
	if (sc->scheduler.gpu_policy != GPU_POLICY_BEST_FIT)
		n = (size_t)snprintf(policy, sizeof policy, ", gpu_policy %s",
				     gpupolicy_names[sc->scheduler.gpu_policy]);
	if (sc->scheduler.percentage_of_nodes_to_score)
		snprintf(policy + n, sizeof policy - n, ", percentage_of_nodes_to_score %d",
			 (int)sc->scheduler.percentage_of_nodes_to_score);
	char scoring[96];
	scenario_scoring_name(&sc->scheduler.scoring, scoring, sizeof scoring);
	fprintf(out, "  scheduler: order %s, scoring %s%s; output %s, step %s\n",
		order_name(sc->scheduler.order), scoring, policy, sc->output.db, h);
	if (sc->experiment.protocol == EXPERIMENT_INFLATION)
		fprintf(out,
			"  experiment: inflation to %g x the GPUs, target workload %g of the pods\n",
			sc->experiment.inflate, sc->experiment.popularity);
	report_twin(out, sc);
	struct scenario_warning *warns;
	size_t n_warns;
	scenario_warnings(sc, &warns, &n_warns);
	for (size_t i = 0; i < n_warns; i++)
		fprintf(out, "%s:%d:%d: warning: %s\n", warns[i].loc.file, warns[i].loc.line,
			warns[i].loc.col, warns[i].text);
	free(warns);
}

/* --- the diagnosis --------------------------------------------------------- */

/* Share of the windows (scope all) in which some pod pended; NAN without windows. */
static double pending_share(const struct results *r)
{
	double pend = 0, span = 0;
	for (size_t i = 0; i < r->n_ts; i++) {
		const struct ts_row *x = &r->ts[i];
		if (strcmp(x->scope, "all"))
			continue;
		span += 1;
		pend += x->pending > 0;
	}
	return span > 0 ? 100 * pend / span : NAN;
}

/* The no-finding line, with the figures the run has. */
static void print_no_finding(FILE *out, const struct results *r)
{
	double alloc = results_or(r, "all", METRIC_GPU_ALLOCATION_PCT, NAN);
	double engine = results_or(r, "all", METRIC_ENGINE_ACTIVE_PCT, NAN);
	double kills = results_or(r, "all", METRIC_OOM_KILLS, NAN);
	double pend = pending_share(r);
	fprintf(out, "\ndiagnosis: no finding");
	if (pend == 0)
		fprintf(out, " (healthy): no pod pended");
	else if (pend > 0)
		/* Without a finding the goal was met (the capacity finding says when not). */
		fprintf(out,
			": pods pended in %.0f%% of the windows, within every workload's goal "
			"(deadlines, SLOs and queue p95 goals met)",
			pend);
	if (alloc > 0 && !isnan(engine))
		fprintf(out, "; allocated GPUs %.0f%% engine-active",
			fmin(100, 100 * engine / alloc));
	if (!isnan(kills))
		fprintf(out, ", %.0f OOM kills", kills);
	fprintf(out, ".\n");
}

void report_findings(FILE *out, const struct results *r)
{
	if (!r->n_findings) {
		print_no_finding(out, r);
		return;
	}
	fprintf(out,
		"\ndiagnosis (in order: allocation, memory, placement, application, capacity):\n");
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct finding *f = &r->findings[i];
		fprintf(out, "%2d. [%s] %s\n    evidence: %s\n", (int)f->rank,
			finding_step_name((enum finding_step)f->step), f->text, f->evidence);
	}
}
