/*
 * test_scenario.c - loading and validating scenarios: every field of a full
 * scenario, the defaults, --set overrides, every error rule with its exact
 * located message, batch CSV traces, the job limit, and the bad-input corpus
 * under tests/fixtures/bad (one file per rule, "# expect: ..." on line 1).
 *
 * Scenario texts go to a fresh temporary folder per test (Criterion runs
 * tests in parallel processes); expected messages write that folder as DIR.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuplan/results.h"
#include "named_metric.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/sha256.h"

static char dir[64];
static char path[128];

static void make_dir(void)
{
	strcpy(dir, "/tmp/gpuplan-scenario-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char traces[128];
	snprintf(traces, sizeof traces, "%s/traces", dir);
	cr_assert_eq(mkdir(traces, 0700), 0);
	snprintf(path, sizeof path, "%s/s.yaml", dir);
}

static void remove_dir(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(scenario, .init = make_dir, .fini = remove_dir);

/* Writes text to NAME (relative to the test's folder). */
static void write_file(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
}

/* msg with each "DIR" replaced by the test's folder. */
static const char *expand(const char *msg)
{
	static char out[2048];
	size_t n = 0;
	for (const char *p = msg; *p && n + sizeof dir < sizeof out;) {
		if (!strncmp(p, "DIR", 3)) {
			n += (size_t)snprintf(out + n, sizeof out - n, "%s", dir);
			p += 3;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return out;
}

static struct scenario *load_with(const char *text, const char *const *sets, size_t n)
{
	write_file("s.yaml", text);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = scenario_load(path, sets, n, &sc, &err);
	cr_assert_eq(rc, GP_OK, "load failed: %s\n--- scenario:\n%s", err.msg, text);
	cr_assert_not_null(sc);
	return sc;
}

static struct scenario *load(const char *text) { return load_with(text, NULL, 0); }

static void fails_with(const char *text, const char *const *sets, size_t n, const char *msg)
{
	write_file("s.yaml", text);
	struct scenario *sc = (struct scenario *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = scenario_load(path, sets, n, &sc, &err);
	cr_expect_eq(rc, GP_EINPUT, "expected an error: %s\n--- scenario:\n%s", expand(msg), text);
	if (rc == GP_OK)
		scenario_free(sc);
	else
		cr_expect_null(sc);
	cr_expect_str_eq(err.msg, expand(msg), "\nactual:   %s\nexpected: %s\n--- scenario:\n%s",
			 err.msg, expand(msg), text);
}

static void fails(const char *text, const char *msg) { fails_with(text, NULL, 0, msg); }

struct bad_case {
	const char *text;
	const char *msg;
};

static void all_fail(const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fails(cases[i].text, cases[i].msg);
}

#define N_OF(a) (sizeof(a) / sizeof *(a))
#define NAME    "name: t\n"
#define POOL    "pools: [{name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}]\n"
#define WL      "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h}]\n"
#define H       (3600 * SIM_SECOND)

/* --- valid scenarios ------------------------------------------------------- */

static const char *const full =
	"name: full.run-1\n"
	"seed: 7\n"
	"start: 2026-10-27T00:00:00Z\n"
	"horizon: 2d\n"
	"gpu_types: []\n"
	"models: []\n"
	"pools:\n"
	"  - name: batch\n"
	"    nodes: 2\n"
	"    gpu: A100-80GB\n"
	"    gpus_per_node: 8\n"
	"    cpu: 96\n"
	"    memory: 1024GiB\n"
	"    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, zone: a}\n"
	"    taints: [{key: dedicated, value: batch, effect: NoSchedule}, {key: spot, effect: "
	"PreferNoSchedule}]\n"
	"    sharing: exclusive\n"
	"    windows:\n"
	"      - {from: \"12:00\", to: \"17:00\"}\n"
	"      - {from: \"22:00\", to: \"06:00\", days: [sat, Sunday]}\n"
	"    price: {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}\n"
	"    startup: 90s\n"
	"  - name: small\n"
	"    nodes: 3\n"
	"    gpu: l4\n"
	"    gpus_per_node: 1\n"
	"queues:\n"
	"  - name: team-a\n"
	"    strategy: StrictFIFO\n"
	"workloads:\n"
	"  - name: eval\n"
	"    kind: batch\n"
	"    count: 4\n"
	"    arrival: {at: \"12:00\"}\n"
	"    gpus: 2\n"
	"    duration: 1h\n"
	"    deadline: \"17:00\"\n"
	"    gpu_busy: 0.9\n"
	"    sm_share: 0.5\n"
	"    vram: 30GiB\n"
	"    cpu: 8\n"
	"    memory: 64GiB\n"
	"    node_selector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
	"    tolerations:\n"
	"      - {key: dedicated, operator: Equal, value: batch, effect: NoSchedule}\n"
	"      - {operator: Exists}\n"
	"    gpu_spec: [A100-80GB, h100-80gb]\n"
	"    queue: team-a\n"
	"    priority: -10\n"
	"  - name: stream\n"
	"    arrival: {process: poisson, rate: 10/h, from: 2026-10-27T06:00:00Z}\n"
	"    duration: {dist: lognormal, mean: 30m, sigma: 0.5}\n"
	"    deadline: {within: 5h}\n"
	"  - name: replay\n"
	"    arrival: {trace: traces/jobs.csv, format: csv}\n"
	"  - name: gammas\n"
	"    count: 3\n"
	"    arrival: {at: \"2026-10-28T01:00:00+01:00\"}\n"
	"    duration: {dist: gamma, mean: 2h, shape: 2}\n"
	"  - name: uni\n"
	"    arrival: {at: \"00:00\"}\n"
	"    duration: {dist: uniform, min: 10m, max: 20m}\n"
	"    queue: default\n"
	"  - name: expo\n"
	"    arrival: {process: poisson, rate: 2/m}\n"
	"    count: 10\n"
	"    duration: {dist: exponential, mean: 15m}\n"
	"scheduler: {order: edf, scoring: LeastAllocated, window_policy: fit}\n"
	"output: {db: out/full.db, step: 1m, jobs: false, requests: true}\n";

static const char *const jobs_csv = "# a tiny trace\n"
				    "submit_s,duration_s,gpus,deadline_s\n"
				    "60,100,2,\n"
				    "0,3600,1,7200\n"
				    "\n"
				    " 30 , 10.5 , 8 , 100 # inline comment\n"
				    "0,5,1,\n";

Test(scenario, full_scenario_every_field)
{
	write_file("traces/jobs.csv", jobs_csv);
	struct scenario *sc = load(full);
	cr_assert_str_eq(sc->name, "full.run-1");
	cr_assert_str_eq(sc->path, path);
	cr_assert_str_eq(sc->dir, dir);
	cr_assert_eq(sc->seed, 7);
	cr_assert_eq(sc->start_epoch, 1793059200);
	cr_assert_eq(sc->horizon, 48 * H);

	cr_assert_eq(sc->n_pools, 2);
	const struct pool_spec *p = &sc->pools[0];
	cr_assert_str_eq(p->name, "batch");
	cr_assert_eq(p->loc.line, 8);
	cr_assert_eq(p->loc.col, 5);
	cr_assert_eq(p->nodes, 2);
	cr_assert_str_eq(p->gpu->name, "A100-80GB");
	cr_assert_eq(p->gpus_per_node, 8);
	cr_assert_eq(p->cpu, 96);
	cr_assert_eq(p->memory_bytes, 1024.0 * 1024 * 1024 * 1024);
	cr_assert_eq(p->n_labels, 2);
	cr_assert_str_eq(p->labels[0].key, "nvidia.com/gpu.product");
	cr_assert_str_eq(p->labels[0].value, "NVIDIA-A100-SXM4-80GB");
	cr_assert_str_eq(p->labels[1].key, "zone");
	cr_assert_str_eq(p->labels[1].value, "a");
	cr_assert_eq(p->n_taints, 2);
	cr_assert_str_eq(p->taints[0].key, "dedicated");
	cr_assert_str_eq(p->taints[0].value, "batch");
	cr_assert_eq(p->taints[0].effect, EFFECT_NO_SCHEDULE);
	cr_assert_str_eq(p->taints[1].key, "spot");
	cr_assert_str_eq(p->taints[1].value, "");
	cr_assert_eq(p->taints[1].effect, EFFECT_PREFER_NO_SCHEDULE);
	cr_assert_eq(p->n_windows, 2);
	cr_assert_eq(p->windows[0].from, 12 * 3600);
	cr_assert_eq(p->windows[0].to, 17 * 3600);
	cr_assert_eq(p->windows[0].days, WINDOW_EVERY_DAY);
	cr_assert_eq(p->windows[0].loc.line, 18);
	cr_assert_eq(p->windows[1].from, 22 * 3600);
	cr_assert_eq(p->windows[1].to, 6 * 3600);
	cr_assert_eq(p->windows[1].days, (1 << 5) | (1 << 6));
	cr_assert_eq(p->price.gpu_hour, 2.50);
	cr_assert_eq(p->price.cpu_hour, 0.03);
	cr_assert_eq(p->price.gib_hour, 0.004);
	cr_assert_eq(p->startup, 90 * SIM_SECOND);
	cr_assert_str_eq(sc->pools[1].gpu->name, "L4");
	cr_assert_eq(scenario_capacity_gpus(sc), 2 * 8 + 3);

	cr_assert_eq(sc->n_queues, 2);
	cr_assert_str_eq(sc->queues[0].name, "team-a");
	cr_assert_eq(sc->queues[0].strategy, STRATEGY_STRICT_FIFO);
	cr_assert_str_eq(sc->queues[1].name, "default");
	cr_assert_eq(sc->queues[1].strategy, STRATEGY_BEST_EFFORT_FIFO);

	cr_assert_eq(sc->n_workloads, 6);
	const struct workload_spec *w = &sc->workloads[0];
	cr_assert_str_eq(w->name, "eval");
	cr_assert_eq(w->loc.line, 30);
	cr_assert_eq(w->kind, WORKLOAD_BATCH);
	cr_assert_eq(w->count, 4);
	cr_assert_eq(w->arrival.kind, ARRIVAL_AT);
	cr_assert_eq(w->arrival.at, 12 * H);
	cr_assert_eq(w->gpus, 2);
	cr_assert_eq(w->duration.kind, DIST_FIXED);
	cr_assert_eq(w->duration.mean, 3600);
	cr_assert_eq(w->deadline_kind, DEADLINE_AT);
	cr_assert_eq(w->deadline, 17 * H);
	cr_assert_eq(w->gpu_busy, 0.9);
	cr_assert_eq(w->sm_share, 0.5);
	cr_assert_eq(w->vram_bytes, 30.0 * 1024 * 1024 * 1024);
	cr_assert_eq(w->cpu, 8);
	cr_assert_eq(w->memory_bytes, 64.0 * 1024 * 1024 * 1024);
	cr_assert_eq(w->n_node_selector, 1);
	cr_assert_str_eq(w->node_selector[0].key, "nvidia.com/gpu.product");
	cr_assert_str_eq(w->node_selector[0].value, "NVIDIA-A100-SXM4-80GB");
	cr_assert_eq(w->n_tolerations, 2);
	cr_assert_str_eq(w->tolerations[0].key, "dedicated");
	cr_assert_eq(w->tolerations[0].op, TOLERATION_EQUAL);
	cr_assert_str_eq(w->tolerations[0].value, "batch");
	cr_assert_eq(w->tolerations[0].effect, EFFECT_NO_SCHEDULE);
	cr_assert_str_eq(w->tolerations[1].key, "");
	cr_assert_eq(w->tolerations[1].op, TOLERATION_EXISTS);
	cr_assert_str_eq(w->tolerations[1].value, "");
	cr_assert_eq(w->tolerations[1].effect, -1);
	cr_assert_eq(w->n_gpu_spec, 2);
	cr_assert_str_eq(w->gpu_spec[0], "A100-80GB");
	cr_assert_str_eq(w->gpu_spec[1], "H100-80GB");
	cr_assert_eq(w->queue, 0);
	cr_assert_eq(w->priority, -10);

	w = &sc->workloads[1];
	cr_assert_str_eq(w->name, "stream");
	cr_assert_eq(w->arrival.kind, ARRIVAL_POISSON);
	cr_assert_float_eq(w->arrival.rate, 10.0 / 3600, 1e-15);
	cr_assert_eq(w->arrival.from, 6 * H);
	cr_assert_eq(w->count, -1);
	cr_assert_eq(w->duration.kind, DIST_LOGNORMAL);
	cr_assert_eq(w->duration.mean, 1800);
	cr_assert_eq(w->duration.sigma, 0.5);
	cr_assert_eq(w->deadline_kind, DEADLINE_WITHIN);
	cr_assert_eq(w->deadline, 5 * H);
	cr_assert_eq(w->queue, 1);

	w = &sc->workloads[2];
	cr_assert_eq(w->arrival.kind, ARRIVAL_TRACE);
	cr_assert_eq(w->arrival.format, TRACE_CSV);
	char trace[160];
	snprintf(trace, sizeof trace, "%s/traces/jobs.csv", dir);
	cr_assert_str_eq(w->arrival.trace_path, trace);
	cr_assert_eq(w->count, 4);
	cr_assert_eq(w->arrival.n_rows, 4);
	const struct trace_job *r = w->arrival.rows;
	cr_assert_eq(r[0].submit, 0);
	cr_assert_eq(r[0].duration, 3600 * SIM_SECOND);
	cr_assert_eq(r[0].gpus, 1);
	cr_assert_eq(r[0].deadline, 7200 * SIM_SECOND);
	cr_assert_eq(r[0].line, 4);
	cr_assert_eq(r[1].submit, 0);
	cr_assert_eq(r[1].line, 7, "equal submits keep file order");
	cr_assert_eq(r[1].deadline, SIM_NEVER);
	cr_assert_eq(r[2].submit, 30 * SIM_SECOND);
	cr_assert_eq(r[2].duration, 10500000);
	cr_assert_eq(r[2].gpus, 8);
	cr_assert_eq(r[2].deadline, 100 * SIM_SECOND);
	cr_assert_eq(r[3].submit, 60 * SIM_SECOND);
	cr_assert_eq(r[3].gpus, 2);
	cr_assert_eq(w->gpus, 8, "the widest row");
	cr_assert_float_eq(w->duration.mean, (100 + 3600 + 10.5 + 5) / 4, 1e-9);

	w = &sc->workloads[3];
	cr_assert_eq(w->arrival.at, 24 * H, "RFC 3339 with an offset");
	cr_assert_eq(w->duration.kind, DIST_GAMMA);
	cr_assert_eq(w->duration.mean, 7200);
	cr_assert_eq(w->duration.shape, 2);
	w = &sc->workloads[4];
	cr_assert_eq(w->duration.kind, DIST_UNIFORM);
	cr_assert_eq(w->duration.min, 600);
	cr_assert_eq(w->duration.max, 1200);
	cr_assert_eq(w->queue, 1);
	w = &sc->workloads[5];
	cr_assert_eq(w->duration.kind, DIST_EXPONENTIAL);
	cr_assert_eq(w->duration.mean, 900);
	cr_assert_float_eq(w->arrival.rate, 2.0 / 60, 1e-15);
	cr_assert_eq(w->arrival.from, 0);
	cr_assert_eq(w->count, 10);

	/* stream runs 42 of the 48 horizon hours at 10/h. */
	cr_assert_eq(scenario_job_count(sc), 4 + 420 + 4 + 3 + 1 + 10);
	cr_assert_eq(sc->scheduler.order, ORDER_EDF);
	cr_assert_eq(sc->scheduler.scoring.type, SCORING_LEAST_ALLOCATED, "the alias");
	cr_assert_eq(sc->scheduler.scoring.weight[SCORE_GPU], 1);
	cr_assert_eq(sc->scheduler.scoring.weight[SCORE_CPU] +
			     sc->scheduler.scoring.weight[SCORE_MEMORY],
		     0);
	cr_assert_eq(sc->scheduler.window_policy, WINDOW_FIT);
	cr_assert_str_eq(sc->output.db, "out/full.db");
	cr_assert_eq(sc->output.step, 60 * SIM_SECOND);
	cr_assert_eq(sc->output.jobs, false);
	cr_assert_eq(sc->output.requests, true);
	cr_assert_eq(scenario_pool_index(sc, "small"), 1);
	cr_assert_eq(scenario_pool_index(sc, "eval"), -1);
	cr_assert_eq(scenario_workload_index(sc, "expo"), 5);
	cr_assert_eq(scenario_workload_index(sc, "batch"), -1);
	cr_assert_eq(scenario_queue_index(sc, "default"), 1);
	cr_assert_eq(scenario_queue_index(sc, "nope"), -1);
	scenario_free(sc);
}

Test(scenario, defaults)
{
	const char *text = NAME POOL WL;
	struct scenario *sc = load(text);
	char sha[65];
	sha256_hex(text, strlen(text), sha);
	cr_assert_str_eq(sc->sha256, sha);
	cr_assert_eq(sc->seed, 1);
	cr_assert_eq(sc->start_epoch, 1767225600);
	cr_assert_eq(sc->horizon, 0);
	cr_assert_eq(sc->n_params, 0);
	const struct pool_spec *p = &sc->pools[0];
	cr_assert_eq(p->cpu, 0);
	cr_assert_eq(p->memory_bytes, 0);
	cr_assert_eq(p->n_labels + p->n_taints + p->n_windows, 0);
	cr_assert_eq(p->price.gpu_hour + p->price.cpu_hour + p->price.gib_hour, 0);
	cr_assert_eq(p->startup, 0);
	cr_assert_eq(sc->n_queues, 1);
	cr_assert_str_eq(sc->queues[0].name, "default");
	cr_assert_eq(sc->queues[0].strategy, STRATEGY_BEST_EFFORT_FIFO);
	const struct workload_spec *w = &sc->workloads[0];
	cr_assert_eq(w->kind, WORKLOAD_BATCH);
	cr_assert_eq(w->count, 1);
	cr_assert_eq(w->gpus, 1);
	cr_assert_eq(w->deadline_kind, DEADLINE_NONE);
	cr_assert_eq(w->gpu_busy, 1);
	cr_assert_eq(w->sm_share, 1);
	cr_assert_eq(w->vram_bytes + w->cpu + w->memory_bytes, 0);
	cr_assert_eq(w->n_node_selector + w->n_tolerations + w->n_gpu_spec, 0);
	cr_assert_eq(w->queue, 0);
	cr_assert_eq(w->priority, 0);
	cr_assert_eq(sc->scheduler.order, ORDER_PRIORITY);
	/* kube-scheduler's default: LeastAllocated over cpu and memory, weight 1 each */
	cr_assert_eq(sc->scheduler.scoring.type, SCORING_LEAST_ALLOCATED);
	cr_assert_eq(sc->scheduler.scoring.weight[SCORE_GPU], 0);
	cr_assert_eq(sc->scheduler.scoring.weight[SCORE_CPU], 1);
	cr_assert_eq(sc->scheduler.scoring.weight[SCORE_MEMORY], 1);
	cr_assert_eq(sc->scheduler.window_policy, WINDOW_FIT);
	cr_assert_str_eq(sc->output.db, "results/t.db");
	cr_assert_eq(sc->output.step, 0); /* chosen for the span by collect */
	cr_assert(sc->output.jobs);
	cr_assert_not(sc->output.requests);
	scenario_free(sc);
}

Test(scenario, declared_default_queue_is_kept)
{
	struct scenario *sc =
		load(NAME POOL WL "queues: [{name: default, strategy: StrictFIFO}]\n");
	cr_assert_eq(sc->n_queues, 1);
	cr_assert_eq(sc->queues[0].strategy, STRATEGY_STRICT_FIFO);
	scenario_free(sc);
}

Test(scenario, eval_window_fixture)
{
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/eval-window.yaml", NULL, 0, &sc, &err), GP_OK,
		     "%s", err.msg);
	cr_assert_str_eq(sc->name, "eval-window");
	cr_assert_eq(sc->start_epoch, 1793059200);
	cr_assert_eq(sc->n_pools, 1);
	cr_assert_eq(sc->pools[0].nodes, 1);
	cr_assert_eq(sc->pools[0].gpus_per_node, 4);
	cr_assert_str_eq(sc->pools[0].gpu->name, "A100-80GB");
	cr_assert_eq(sc->pools[0].n_windows, 1);
	cr_assert_eq(sc->pools[0].windows[0].from, 12 * 3600);
	cr_assert_eq(sc->pools[0].windows[0].to, 17 * 3600);
	cr_assert_eq(sc->n_workloads, 1);
	const struct workload_spec *w = &sc->workloads[0];
	cr_assert_str_eq(w->name, "eval");
	cr_assert_eq(w->count, 4);
	cr_assert_eq(w->arrival.kind, ARRIVAL_AT);
	cr_assert_eq(w->arrival.at, 12 * H);
	cr_assert_eq(w->gpus, 2);
	cr_assert_eq(w->duration.mean, 3600);
	cr_assert_eq(w->deadline_kind, DEADLINE_AT);
	cr_assert_eq(w->deadline, 17 * H);
	cr_assert_str_eq(sc->output.db, "results/eval-window.db");
	scenario_free(sc);
}

/* --- --set --------------------------------------------------------------------- */

Test(scenario, sets_override_and_are_recorded)
{
	const char *const sets[] = {
		"seed=9",
		"pools.p.nodes=3",
		"pools.0.gpu=H100-80GB",
		"workloads.w.count=5",
		"scheduler.order=sjf",
		"pools.p.windows=[{from: \"12:00\", to: \"13:00\", days: [mon]}]",
		"output={db: x.db, jobs: no}",
		"workloads.w.deadline={within: 2h}",
	};
	struct scenario *sc = load_with(NAME POOL WL, sets, N_OF(sets));
	cr_assert_eq(sc->seed, 9);
	cr_assert_eq(sc->pools[0].nodes, 3);
	cr_assert_str_eq(sc->pools[0].gpu->name, "H100-80GB");
	cr_assert_eq(sc->workloads[0].count, 5);
	cr_assert_eq(sc->scheduler.order, ORDER_SJF);
	cr_assert_eq(sc->pools[0].n_windows, 1);
	cr_assert_eq(sc->pools[0].windows[0].to, 13 * 3600);
	cr_assert_eq(sc->pools[0].windows[0].days, 1);
	cr_assert_str_eq(sc->pools[0].windows[0].loc.file,
			 "--set pools.p.windows=[{from: \"12:00\", to: \"13:00\", days: [mon]}]");
	cr_assert_str_eq(sc->output.db, "x.db");
	cr_assert_not(sc->output.jobs);
	cr_assert_eq(sc->workloads[0].deadline_kind, DEADLINE_WITHIN);
	cr_assert_eq(sc->n_params, N_OF(sets));
	cr_assert_str_eq(sc->params[0].key, "seed");
	cr_assert_str_eq(sc->params[0].value, "9");
	cr_assert_str_eq(sc->params[5].key, "pools.p.windows");
	cr_assert_str_eq(sc->params[5].value, "[{from: \"12:00\", to: \"13:00\", days: [mon]}]");
	scenario_free(sc);
}

Test(scenario, set_errors_name_the_override)
{
	const char *const typo[] = {"pools.p.nodse=3"};
	fails_with(NAME POOL WL, typo, 1,
		   "--set pools.p.nodse=3:1:9: error: unknown key 'nodse' in pool; did you mean "
		   "'nodes'?");
	const char *const zero[] = {"pools.p.nodes=0"};
	fails_with(NAME POOL WL, zero, 1,
		   "--set pools.p.nodes=0:1:15: error: invalid nodes '0'; expected a whole number "
		   "from 1 to 1000000, or 0 with autoscale");
	const char *const item[] = {"workloads.ww.count=2"};
	fails_with(NAME POOL WL, item, 1,
		   "--set workloads.ww.count=2:1:11: error: no item named 'ww' in workloads; did "
		   "you mean 'w'?");
	const char *const noeq[] = {"seed"};
	fails_with(NAME POOL WL, noeq, 1,
		   "--set seed:1:1: error: expected KEY=VALUE, like pools.batch.nodes=3");
	const char *const scalar[] = {"name.x=1"};
	fails_with(NAME POOL WL, scalar, 1,
		   "--set name.x=1:1:6: error: name is a scalar, so it has no 'x'; expected a path "
		   "through maps and lists");
	const char *const later[] = {"seed=1", "seed=x"};
	fails_with(
		NAME POOL WL, later, 2,
		"--set seed=x:1:6: error: invalid seed 'x'; expected a whole number from 0 to 9223372036854775807 (2^63 - 1)");
	const char *const sharing[] = {"pools.p.sharing={mode: mps, replicas: 99}"};
	fails_with(NAME POOL WL, sharing, 1,
		   "--set pools.p.sharing={mode: mps, replicas: 99}:1:39: error: invalid replicas "
		   "'99'; expected a whole number from 1 to 48");
}

/* --- error rules ------------------------------------------------------------------ */

Test(scenario, file_and_yaml_errors)
{
	struct scenario *sc = (struct scenario *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/none.yaml", NULL, 0, &sc, &err), GP_EINPUT);
	cr_assert_null(sc);
	cr_assert_str_eq(err.msg, "tests/fixtures/none.yaml: error: cannot read: No such file or "
				  "directory");
	static const struct bad_case cases[] = {
		{"name: t\npools: [\n", "DIR/s.yaml:3:1: error: did not find expected node content "
					"(while parsing a flow node at line 3, column 1)"},
		{"name: t\nname: u\n", "DIR/s.yaml:2:1: error: duplicate key 'name' (first defined "
				       "at line 1, column 1)"},
		{"- name: t\n",
		 "DIR/s.yaml:1:1: error: invalid scenario: expected a map with name, "
		 "pools and workloads, got a list"},
		{"", "DIR/s.yaml:1:1: error: the document is empty; expected a YAML map"},
	};
	all_fail(cases, N_OF(cases));
}

Test(scenario, top_level_errors)
{
	static const struct bad_case cases[] = {
		{POOL WL, "DIR/s.yaml:1:1: error: missing key 'name' in scenario; expected a name "
			  "like eval-window"},
		{"name: my run\n" POOL WL, "DIR/s.yaml:1:7: error: invalid name 'my run'; expected "
					   "letters, digits, '.', '_' or '-', like eval-window"},
		{"name: ~\n" POOL WL, "DIR/s.yaml:1:7: error: invalid name '~'; expected letters, "
				      "digits, '.', '_' or '-', like eval-window"},
		{NAME "pool: []\n" POOL WL,
		 "DIR/s.yaml:2:1: error: unknown key 'pool' in scenario; "
		 "did you mean 'pools'?"},
		{NAME "zzzzzz: 1\n" POOL WL,
		 "DIR/s.yaml:2:1: error: unknown key 'zzzzzz' in scenario; expected one of name, "
		 "seed, start, horizon, kubernetes_version, pools, workloads, queues, scheduler, "
		 "goals, cohorts, resource_flavors, output, cost, experiment, history, growth"},
		{NAME "gpu_types: [{name: B200}]\n" POOL WL,
		 "DIR/s.yaml:2:1: error: gpu_types is not supported yet"},
		{NAME "models: {x: 1}\n" POOL WL,
		 "DIR/s.yaml:2:1: error: models is not supported yet"},
		{NAME "seed: -1\n" POOL WL,
		 "DIR/s.yaml:2:7: error: invalid seed '-1'; expected a whole number from 0 to 9223372036854775807 (2^63 - 1)"},
		{NAME "start: 2026-13-01T00:00:00Z\n" POOL WL,
		 "DIR/s.yaml:2:8: error: invalid start '2026-13-01T00:00:00Z'; expected an RFC "
		 "3339 "
		 "time like 2026-10-27T00:00:00Z"},
		{NAME "horizon: 0s\n" POOL WL,
		 "DIR/s.yaml:2:10: error: invalid horizon '0s'; expected "
		 "a duration greater than 0, like 5m"},
		{NAME "horizon: 1hr\n" POOL WL, "DIR/s.yaml:2:10: error: invalid horizon '1hr'; "
						"expected a duration like 90s, 500ms, "
						"15m, 1h30m or 2d"},
		{NAME WL,
		 "DIR/s.yaml:1:1: error: missing key 'pools' in scenario; expected a list of "
		 "pools"},
		{NAME POOL,
		 "DIR/s.yaml:1:1: error: missing key 'workloads' in scenario; expected a "
		 "list of workloads"},
		{NAME "pools: []\n" WL,
		 "DIR/s.yaml:2:8: error: pools is empty; expected at least one pool"},
		{NAME POOL "workloads: []\n",
		 "DIR/s.yaml:3:12: error: workloads is empty; expected at least one workload"},
		{NAME "pools: {name: p}\n" WL,
		 "DIR/s.yaml:2:8: error: invalid pools: expected a list of pools like [a map like "
		 "{name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4}], got a map"},
	};
	all_fail(cases, N_OF(cases));
}

#define P(fields) NAME "pools: [{name: p, " fields "}]\n" WL

Test(scenario, pool_errors)
{
	static const struct bad_case cases[] = {
		{P("nodes: 0, gpu: A100-80GB, gpus_per_node: 8"),
		 "DIR/s.yaml:2:26: error: invalid nodes '0'; expected a whole number from 1 to "
		 "1000000, or 0 with autoscale"},
		{P("nodes: -2, gpu: A100-80GB, gpus_per_node: 8"),
		 "DIR/s.yaml:2:26: error: invalid nodes '-2'; expected a whole number from 1 to "
		 "1000000, or 0 with autoscale"},
		{P("nodes: 1, gpu: A100-80G, gpus_per_node: 8"),
		 "DIR/s.yaml:2:34: error: unknown GPU type 'A100-80G'; did you mean 'A100-80GB'?"},
		/* a name the word begins is suggested before a near spelling (A10) */
		{P("nodes: 1, gpu: H100, gpus_per_node: 8"),
		 "DIR/s.yaml:2:34: error: unknown GPU type 'H100'; did you mean 'H100-80GB'?"},
		{P("nodes: 1, gpu: Gaudi3, gpus_per_node: 8"),
		 "DIR/s.yaml:2:34: error: unknown GPU type 'Gaudi3'; expected A100-40GB, A100-80GB, "
		 "H100-80GB, H200-141GB, L40S, L4, A10, T4, V100-16GB, V100-32GB, B200, GB200, A10G or MI300X"},
		{P("nodes: 1, gpu: A100-80GB, gpus_per_node: 65"),
		 "DIR/s.yaml:2:60: error: invalid gpus_per_node '65'; expected a whole number from "
		 "0 "
		 "to 64"},
		{P("nodes: 1, gpus_per_node: 8"), "DIR/s.yaml:2:9: error: missing key 'gpu' in "
						  "pool; expected a catalog GPU type like "
						  "A100-80GB"},
		{P("gpu: T4, gpus_per_node: 8"),
		 "DIR/s.yaml:2:9: error: missing key 'nodes' in pool; expected a whole number of "
		 "nodes >= 1"},
		{P("nodes: 1, gpu: T4"), "DIR/s.yaml:2:9: error: missing key 'gpus_per_node' in "
					 "pool; expected a whole number from 0 to 64"},
		{NAME "pools: [{nodes: 1, gpu: T4, gpus_per_node: 1}]\n" WL,
		 "DIR/s.yaml:2:9: error: missing key 'name' in pool; expected a name like batch"},
		{P("nodse: 1, gpu: T4, gpus_per_node: 1"),
		 "DIR/s.yaml:2:19: error: unknown key 'nodse' in pool; did you mean 'nodes'?"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, cpu: -1"),
		 "DIR/s.yaml:2:61: error: invalid cpu '-1'; expected a number of cores >= 0, like "
		 "96 or 500m"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, memory: 10 GiB"),
		 "DIR/s.yaml:2:64: error: invalid memory '10 GiB'; expected a size like 80GiB, "
		 "512MiB "
		 "or 80GB"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, labels: [a]"),
		 "DIR/s.yaml:2:64: error: invalid labels: expected a map like "
		 "{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}, got a list"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, labels: {a: [1]}"),
		 "DIR/s.yaml:2:68: error: invalid labels: expected a string, got a list"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, labels: {team: a&b}"),
		 "DIR/s.yaml:2:71: error: invalid label value 'a&b' in labels; expected up to 63 "
		 "letters, digits, '-', '_' or '.' starting and ending with a letter or digit, or "
		 "nothing"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, taints: [{key: a, effect: NoSchedul}]"),
		 "DIR/s.yaml:2:82: error: unknown taint effect 'NoSchedul'; did you mean "
		 "'NoSchedule'?"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, taints: [{key: a}]"),
		 "DIR/s.yaml:2:65: error: missing key 'effect' in taint; expected NoSchedule, "
		 "PreferNoSchedule or NoExecute"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, sharing: {mode: time-slicing, replicas: "
		   "0}"),
		 "DIR/s.yaml:2:96: error: invalid replicas '0'; expected a whole number from 1 to 64"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, sharing: {mode: exclusive, replicas: 2}"),
		 "DIR/s.yaml:2:83: error: replicas does not apply to this sharing mode; expected "
		 "only mode"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, sharing: mps"),
		 "DIR/s.yaml:2:65: error: missing key 'replicas' in sharing; expected the units per "
		 "GPU, like {mode: mps, replicas: 4}"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"12:00\", to: "
		   "\"12:00\"}]"),
		 "DIR/s.yaml:2:66: error: window from '12:00' to '12:00' is empty; expected "
		 "different "
		 "times (a window whose to is before from runs past midnight)"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"25:00\", to: "
		   "\"12:00\"}]"),
		 "DIR/s.yaml:2:73: error: invalid window from '25:00'; expected a time of day like "
		 "\"12:00\" or \"17:30\""},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"24:00\", to: "
		   "\"12:00\"}]"),
		 "DIR/s.yaml:2:73: error: invalid window from '24:00'; expected a time of day "
		 "before "
		 "\"24:00\""},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{to: \"12:00\"}]"),
		 "DIR/s.yaml:2:66: error: missing key 'from' in window; expected a time of day "
		 "like "
		 "\"12:00\" or \"17:30\""},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"1:00\", to: \"2:00\", "
		   "days: [mnday]}]"),
		 "DIR/s.yaml:2:100: error: unknown day 'mnday'; did you mean 'monday'?"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"1:00\", to: \"2:00\", "
		   "days: [x]}]"),
		 "DIR/s.yaml:2:100: error: unknown day 'x'; expected mon, tue, wed, thu, fri, sat "
		 "or "
		 "sun"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, windows: [{from: \"1:00\", to: \"2:00\", "
		   "days: []}]"),
		 "DIR/s.yaml:2:99: error: invalid days: expected a list of days like [mon, tue, "
		 "wed, "
		 "thu, fri], got an empty list"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, price: {gpu_hour: -1}"),
		 "DIR/s.yaml:2:74: error: invalid gpu_hour '-1'; expected a price per hour >= 0, "
		 "like 2.50"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, price: {gpu_hours: 1}"),
		 "DIR/s.yaml:2:64: error: unknown key 'gpu_hours' in price; did you mean "
		 "'gpu_hour'?"},
		{P("nodes: 1, gpu: T4, gpus_per_node: 1, startup: soon"),
		 "DIR/s.yaml:2:65: error: invalid startup 'soon'; expected a duration like 90s, "
		 "500ms, 15m, 1h30m or 2d"},
		{NAME "pools: [{name: p, nodes: 1, gpu: T4, gpus_per_node: 1}, {name: p, nodes: 1, "
		      "gpu: T4, gpus_per_node: 1}]\n" WL,
		 "DIR/s.yaml:2:64: error: duplicate pool name 'p' (first defined at line 2, column "
		 "9); expected unique names"},
		{NAME "pools: [{name: all, nodes: 1, gpu: T4, gpus_per_node: 1}]\n" WL,
		 "DIR/s.yaml:2:16: error: pool name 'all' is reserved for whole-run results; "
		 "expected another name"},
		{NAME "pools: [{name: a.b, nodes: 1, gpu: T4, gpus_per_node: 1}]\n" WL,
		 "DIR/s.yaml:2:16: error: invalid pool name 'a.b'; expected letters, digits, '_' "
		 "or "
		 "'-', like batch"},
	};
	all_fail(cases, N_OF(cases));
}

Test(scenario, queue_scheduler_output_errors)
{
	static const struct bad_case cases[] = {
		{NAME POOL WL "queues: [{name: q, strategy: StrictFifo}]\n",
		 "DIR/s.yaml:4:30: error: unknown strategy 'StrictFifo'; did you mean "
		 "'StrictFIFO'?"},
		{NAME POOL WL "queues: [{name: q, quota: {nvidia.com/gpus: 4}}]\n",
		 "DIR/s.yaml:4:45: error: unknown resource 'nvidia.com/gpus'; expected nvidia.com/gpu, "
		 "nvidia.com/mig-<profile>, cpu or memory"},
		{NAME POOL WL
		 "queues: [{name: q, quota: {nvidia.com/gpu: 4}, borrowing_limit: {nvidia.com/gpu: 2}}]\n",
		 "DIR/s.yaml:4:66: error: borrowing_limit without a cohort to borrow from; expected "
		 "cohort: NAME in queue q"},
		{NAME POOL WL "queues: [{name: q}, {name: q}]\n",
		 "DIR/s.yaml:4:28: error: duplicate queue name 'q' (first defined at line 4, "
		 "column "
		 "10); expected unique names"},
		{NAME POOL WL "queues: [{strategy: StrictFIFO}]\n",
		 "DIR/s.yaml:4:10: error: missing key 'name' in queue; expected a name like "
		 "team-a"},
		{NAME POOL WL "scheduler: {order: fifoo}\n",
		 "DIR/s.yaml:4:20: error: unknown order 'fifoo'; did you mean 'fifo'?"},
		{NAME POOL WL "scheduler: {order: random}\n",
		 "DIR/s.yaml:4:20: error: unknown order 'random'; expected fifo, priority, edf or "
		 "sjf"},
		{NAME POOL WL "scheduler: {scoring: mostallocated}\n",
		 "DIR/s.yaml:4:22: error: unknown scoring 'mostallocated'; did you mean "
		 "'MostAllocated'?"},
		{NAME POOL WL "scheduler: {window_policy: evict}\n",
		 "DIR/s.yaml:4:28: error: unknown window_policy 'evict'; expected fit or preempt"},
		{NAME POOL WL "scheduler: {gpu_policy: packing}\n",
		 "DIR/s.yaml:4:25: error: unknown gpu_policy 'packing'; expected best-fit, random, "
		 "dot-product, gpu-clustering, gpu-packing or fgd"},
		{NAME POOL WL "scheduler: fifo\n", "DIR/s.yaml:4:12: error: invalid scheduler "
						   "'fifo'; expected a map like {order: fifo, "
						   "scoring: MostAllocated}"},
		{NAME POOL WL "output: {step: 0s}\n", "DIR/s.yaml:4:16: error: invalid step '0s'; "
						      "expected a duration greater than 0, like "
						      "5m"},
		{NAME POOL WL "output: {jobs: maybe}\n",
		 "DIR/s.yaml:4:16: error: invalid jobs 'maybe'; expected true or false"},
		{NAME POOL WL "output: {db: }\n",
		 "DIR/s.yaml:4:14: error: invalid db ''; expected a path like results/run.db"},
	};
	all_fail(cases, N_OF(cases));
}

#define W(fields) NAME POOL "workloads: [{name: w, " fields "}]\n"
#define AT        "arrival: {at: \"00:00\"}, "

Test(scenario, workload_errors)
{
	static const struct bad_case cases[] = {
		{W("kind: inference, model: llama-2-7b"),
		 "DIR/s.yaml:3:13: error: missing key 'requests' in inference workload; expected "
		 "{process: poisson, rate: 5/s, prompt_tokens: 1000, output_tokens: 200} or {trace: "
		 "PATH, format: azure}"},
		{W("kind: batc, " AT "duration: 1h"),
		 "DIR/s.yaml:3:29: error: unknown kind 'batc'; did you mean 'batch'?"},
		{W(AT "duration: 1h, model: llama-2-8b"),
		 "DIR/s.yaml:3:68: error: unknown model 'llama-2-8b'; did you mean 'llama-2-7b'?"},
		{W(AT "duration: 1h, quantization: int8"),
		 "DIR/s.yaml:3:75: error: quantization applies to a model; expected a model like "
		 "llama-2-13b beside it"},
		{W(AT "duraton: 1h"),
		 "DIR/s.yaml:3:47: error: unknown key 'duraton' in workload; did you mean "
		 "'duration'?"},
		{W(AT "duration: 1h, count: 0"),
		 "DIR/s.yaml:3:68: error: invalid count '0'; expected a whole number from 1 to 9223372036854775807 (2^63 - 1)"},
		{W(AT "duration: 1h, count: -3"),
		 "DIR/s.yaml:3:68: error: invalid count '-3'; expected a whole number from 1 to 9223372036854775807 (2^63 - 1)"},
		{W(AT "duration: 1h, gpus: 16"),
		 "DIR/s.yaml:3:67: error: no node has 16 GPUs; the largest pool node has 8"},
		{W(AT "duration: 1h, gpus: 0"),
		 "DIR/s.yaml:3:67: error: invalid gpus '0'; expected a whole number from 1 to 9223372036854775807 (2^63 - 1)"},
		{W(AT "duration: 1h, gpus: {mig: 3g.40gb}"),
		 "DIR/s.yaml:3:67: error: no pool offers nvidia.com/mig-3g.40gb; expected a pool "
		 "with a MIG layout that includes it"},
		{W(AT "duration: 1h, gpus: {milli: 300, mig: 1g.10gb}"),
		 "DIR/s.yaml:3:67: error: invalid gpus: expected one of {mig: 3g.40gb}, "
		 "{milli: 300} or {shared: 1}, got a map"},
		{W(AT "duration: 1 hour"),
		 "DIR/s.yaml:3:57: error: invalid duration '1 hour'; expected a duration like 90s, "
		 "500ms, 15m, 1h30m or 2d"},
		{W(AT "duration: 0s"), "DIR/s.yaml:3:57: error: invalid duration '0s'; expected a "
				       "duration greater than 0, like 5m"},
		{W(AT "duration: {dist: normal, mean: 1h}"),
		 "DIR/s.yaml:3:64: error: unknown dist 'normal'; expected fixed, exponential, "
		 "lognormal, gamma, uniform or empirical"},
		{W(AT "duration: {mean: 1h}"),
		 "DIR/s.yaml:3:57: error: missing key 'dist' in duration; expected exponential, "
		 "lognormal, gamma, uniform or empirical"},
		{W(AT "duration: {dist: lognormal, mean: 1h}"),
		 "DIR/s.yaml:3:57: error: missing key 'sigma' in dist lognormal; expected a number "
		 "> 0 "
		 "like 0.5"},
		{W(AT "duration: {dist: exponential, mean: 1h, sigma: 1}"),
		 "DIR/s.yaml:3:87: error: sigma does not apply to dist exponential; expected only "
		 "dist "
		 "and mean"},
		{W(AT "duration: {dist: uniform, min: 2h, max: 1h}"),
		 "DIR/s.yaml:3:87: error: max is below min; expected min <= max"},
		{W(AT "duration: {dist: gamma, mean: 1h, shape: 0}"),
		 "DIR/s.yaml:3:88: error: invalid shape '0'; expected a number > 0 like 2"},
		{W(AT "duration: 1h, deadline: 5pm"),
		 "DIR/s.yaml:3:71: error: invalid deadline '5pm'; expected a clock time like "
		 "\"13:00\" "
		 "or an RFC 3339 time like 2026-10-27T13:00:00Z"},
		{W(AT "duration: 1h, deadline: {within: 0s}"),
		 "DIR/s.yaml:3:80: error: invalid within '0s'; expected a duration greater than 0, "
		 "like 5m"},
		{W(AT "duration: 1h, deadline: 2025-12-31T23:00:00Z"),
		 "DIR/s.yaml:3:71: error: deadline '2025-12-31T23:00:00Z' is before the scenario "
		 "start 2026-01-01T00:00:00Z; expected a later time"},
		{W(AT "duration: 1h, gpu_busy: 0"),
		 "DIR/s.yaml:3:71: error: invalid gpu_busy '0'; expected a fraction in (0, 1] like "
		 "0.9"},
		{W(AT "duration: 1h, sm_share: 1.5"), "DIR/s.yaml:3:71: error: invalid sm_share "
						      "'1.5'; expected a fraction in (0, 1] like "
						      "0.9"},
		{W(AT "duration: 1h, vram: 30 GiB"), "DIR/s.yaml:3:67: error: invalid vram '30 "
						     "GiB'; expected a size like 80GiB, 512MiB or "
						     "80GB"},
		{W(AT "duration: 1h, cpu: many"),
		 "DIR/s.yaml:3:66: error: invalid cpu 'many'; "
		 "expected a number of cores >= 0, like 8 or 500m"},
		{W(AT "duration: 1h, cpu: -500m"),
		 "DIR/s.yaml:3:66: error: invalid cpu '-500m'; "
		 "expected a number of cores >= 0, like 8 or 500m"},
		{W(AT "duration: 1h, node_selector: [a]"),
		 "DIR/s.yaml:3:76: error: invalid node_selector: expected a map like "
		 "{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}, got a list"},
		{W(AT "duration: 1h, node_selector: {zone: -a}"),
		 "DIR/s.yaml:3:83: error: invalid label value '-a' in node_selector; expected up "
		 "to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or "
		 "digit, or nothing"},
		{W(AT "duration: 1h, tolerations: [{operator: Exist}]"),
		 "DIR/s.yaml:3:86: error: unknown operator 'Exist'; did you mean 'Exists'?"},
		{W(AT "duration: 1h, tolerations: [{key: a, operator: Exists, value: b}]"),
		 "DIR/s.yaml:3:109: error: a toleration with operator Exists takes no value; "
		 "expected operator Equal or no value"},
		{W(AT "duration: 1h, tolerations: [{value: b}]"),
		 "DIR/s.yaml:3:75: error: a toleration with operator Equal needs a key; expected "
		 "{key: KEY, value: VALUE} or operator Exists"},
		{W(AT "duration: 1h, gpu_spec: [V100M16]"),
		 "DIR/s.yaml:3:72: error: unknown GPU type 'V100M16'; expected A100-40GB, "
		 "A100-80GB, "
		 "H100-80GB, H200-141GB, L40S, L4, A10, T4, V100-16GB, V100-32GB, B200, GB200, A10G or MI300X"},
		{W(AT "duration: 1h, gpu_spec: A100-80GB"),
		 "DIR/s.yaml:3:71: error: invalid gpu_spec 'A100-80GB'; expected a list of GPU "
		 "types "
		 "like [A100-80GB, H100-80GB]"},
		{NAME POOL "queues: [{name: team-a}]\n"
			   "workloads: [{name: w, " AT "duration: 1h, queue: team-b}]\n",
		 "DIR/s.yaml:4:68: error: unknown queue 'team-b'; did you mean 'team-a'?"},
		{W(AT "duration: 1h, priority: high"),
		 "DIR/s.yaml:3:71: error: invalid priority 'high'; expected a whole number from "
		 "-2147483648 to 2147483647"},
		{W("duration: 1h"), "DIR/s.yaml:3:13: error: missing key 'arrival' in workload; "
				    "expected {at: \"12:00\"}, {process: poisson, rate: 10/h}, "
				    "{schedule: \"0 22 * * *\"} or {trace: PATH, format: csv}"},
		{W(AT "gpus: 1"),
		 "DIR/s.yaml:3:13: error: missing key 'duration' in workload; "
		 "expected a duration like 90s, 500ms, 15m, 1h30m or 2d, or {dist: "
		 "exponential, mean: 1h}"},
		{NAME POOL "workloads: [{" AT "duration: 1h}]\n",
		 "DIR/s.yaml:3:13: error: missing key 'name' in workload; expected a name like "
		 "eval"},
		{NAME POOL "workloads: [{name: w, " AT "duration: 1h}, {name: w, " AT
			   "duration: 1h}]\n",
		 "DIR/s.yaml:3:69: error: duplicate workload name 'w' (first defined at line 3, "
		 "column "
		 "13); expected unique names"},
		{NAME POOL "workloads: [{name: p, " AT "duration: 1h}]\n",
		 "DIR/s.yaml:3:20: error: workload name 'p' is also a pool name (line 2); expected "
		 "distinct names, as results are reported per name"},
	};
	all_fail(cases, N_OF(cases));
}

Test(scenario, arrival_errors)
{
	static const struct bad_case cases[] = {
		{W("arrival: {at: \"00:00\", process: poisson, rate: 1/s}, duration: 1h"),
		 "DIR/s.yaml:3:32: error: arrival needs exactly one of at, process, trace or schedule; "
		 "expected "
		 "{at: \"12:00\"}, {process: poisson, rate: 10/h}, {schedule: \"0 22 * * *\"} or {trace: PATH, format: csv}"},
		{W("arrival: {}, duration: 1h"),
		 "DIR/s.yaml:3:32: error: arrival needs exactly one of at, process, trace or schedule; "
		 "expected "
		 "{at: \"12:00\"}, {process: poisson, rate: 10/h}, {schedule: \"0 22 * * *\"} or {trace: PATH, format: csv}"},
		{W("arrival: {att: \"00:00\"}, duration: 1h"),
		 "DIR/s.yaml:3:33: error: unknown key 'att' in arrival; did you mean 'at'?"},
		{W("arrival: {at: \"00:00\", rate: 1/s}, duration: 1h"),
		 "DIR/s.yaml:3:46: error: rate does not apply to arrival at; expected only at"},
		{W("arrival: {process: poisson}, count: 2, duration: 1h"),
		 "DIR/s.yaml:3:32: error: missing key 'rate' in arrival; expected a rate like "
		 "10/s, 5/m, 300/h or 20/d, or rate_by_hour: [24 rates]"},
		{W("arrival: {process: poisson, rate: ten/h}, count: 2, duration: 1h"),
		 "DIR/s.yaml:3:57: error: invalid rate 'ten/h'; expected a rate like 10/s, 5/m, "
		 "300/h or 20/d, or a number per second > 0"},
		{W("arrival: {process: poisson, rate: 0/h}, count: 2, duration: 1h"),
		 "DIR/s.yaml:3:57: error: invalid rate '0/h'; expected a rate like 10/s, 5/m, "
		 "300/h or 20/d, or a number per second > 0"},
		{W("arrival: {process: poisson, rate: 1/h, format: csv}, count: 2, duration: 1h"),
		 "DIR/s.yaml:3:62: error: format does not apply to a poisson arrival; expected "
		 "only process, rate, rate_by_hour, by_weekday and from"},
		{W("arrival: {process: uniform, rate: 1/h}, count: 2, duration: 1h"),
		 "DIR/s.yaml:3:42: error: unknown process 'uniform'; expected poisson"},
		{W("arrival: {process: poisson, rate: 1/h}, duration: 1h"),
		 "DIR/s.yaml:3:32: error: a poisson arrival without count never ends; expected a "
		 "count "
		 "or a scenario horizon"},
		{W("arrival: {at: 2025-12-31T00:00:00Z}, duration: 1h"),
		 "DIR/s.yaml:3:37: error: arrival at '2025-12-31T00:00:00Z' is before the scenario "
		 "start 2026-01-01T00:00:00Z; expected a later time"},
		{W("arrival: {at: noon}, duration: 1h"),
		 "DIR/s.yaml:3:37: error: invalid arrival at 'noon'; expected a clock time like "
		 "\"13:00\" or an RFC 3339 time like 2026-10-27T13:00:00Z"},
		{W("arrival: {trace: t.csv, format: azure}"),
		 "DIR/s.yaml:3:55: error: format 'azure' is for inference requests; expected csv or "
		 "openb"},
		{W("arrival: {trace: traces/none.csv}"),
		 "DIR/s.yaml:3:40: error: cannot read trace DIR/traces/none.csv: No such file or "
		 "directory"},
		{W("arrival: {at: \"00:00\", speedup: 2}, duration: 1h"),
		 "DIR/s.yaml:3:46: error: speedup is not supported yet"},
		{W("arrival: \"00:00\", duration: 1h"),
		 "DIR/s.yaml:3:32: error: invalid arrival '00:00'; expected {at: \"12:00\"}, "
		 "{process: poisson, rate: 10/h}, {schedule: \"0 22 * * *\"} or {trace: PATH, "
		 "format: csv}"},
	};
	all_fail(cases, N_OF(cases));
}

#define TRACE_WL W("arrival: {trace: traces/t.csv}")

static void trace_fails(const char *csv, const char *msg)
{
	write_file("traces/t.csv", csv);
	fails(TRACE_WL, msg);
}

Test(scenario, trace_errors)
{
	trace_fails(
		"submit_s,duration_s,gpus\n0,1\n",
		"DIR/traces/t.csv:2: error: expected 3 columns (submit_s,duration_s,gpus), got 2");
	trace_fails(
		"0,1,1\n0,1,1,5\n",
		"DIR/traces/t.csv:2: error: expected 3 columns (submit_s,duration_s,gpus), got 4");
	trace_fails("0,1\n", "DIR/traces/t.csv:1: error: expected 3 or 4 columns "
			     "(submit_s,duration_s,gpus[,deadline_s]), got 2");
	trace_fails("0,1,1,1,1,1\n", "DIR/traces/t.csv:1: error: expected 3 or 4 columns "
				     "(submit_s,duration_s,gpus[,deadline_s]), got more than 4");
	trace_fails("# jobs\n0,abc,1\n",
		    "DIR/traces/t.csv:2: error: expected a number in column duration_s, got 'abc'");
	trace_fails("0,1,1\n-5,1,1\n",
		    "DIR/traces/t.csv:2: error: negative submit_s '-5'; expected seconds >= 0");
	trace_fails("0,1,0\n",
		    "DIR/traces/t.csv:1: error: gpus '0' is below 1; expected at least 1 "
		    "GPU per job");
	trace_fails("0,1,1.5\n",
		    "DIR/traces/t.csv:1: error: expected a whole number in column gpus, got '1.5'");
	trace_fails("0,1,9\n",
		    "DIR/traces/t.csv:1: error: no node has 9 GPUs; the largest pool node has 8");
	trace_fails("submit,duration,gpus\n0,1,1\n",
		    "DIR/traces/t.csv:1: error: unknown header; expected the columns "
		    "submit_s,duration_s,gpus[,deadline_s]");
	trace_fails("0,1,1,x\n",
		    "DIR/traces/t.csv:1: error: expected a number in column deadline_s, got 'x'");
	trace_fails("0,1e13,1\n", "DIR/traces/t.csv:1: error: duration_s '1e13' is too large; "
				  "expected at most 1e+12 seconds");
	trace_fails("# nothing\n\n",
		    "DIR/traces/t.csv: error: the trace has no jobs; expected rows "
		    "of submit_s,duration_s,gpus[,deadline_s]");
}

Test(scenario, trace_rules_out_count_gpus_and_duration)
{
	write_file("traces/t.csv", "0,1,1\n");
	fails(W("arrival: {trace: traces/t.csv}, count: 2"),
	      "DIR/s.yaml:3:55: error: count comes from the trace (one job per row); expected no "
	      "count with a trace arrival");
	fails(W("arrival: {trace: traces/t.csv}, duration: 1h"),
	      "DIR/s.yaml:3:55: error: duration comes from the trace (one job per row); expected "
	      "no duration with a trace arrival");
}

Test(scenario, trace_without_header)
{
	write_file("traces/t.csv", "5,1,1\n1,2,2\n");
	struct scenario *sc = load(TRACE_WL);
	const struct workload_spec *w = &sc->workloads[0];
	cr_assert_eq(w->count, 2);
	cr_assert_eq(w->arrival.rows[0].submit, SIM_SECOND);
	cr_assert_eq(w->arrival.rows[0].line, 2);
	cr_assert_eq(w->arrival.rows[1].submit, 5 * SIM_SECOND);
	scenario_free(sc);
}

/* --- traces read as the clock goes -------------------------------------------------- */

/* A generated trace of n jobs, TRACE_HELD_ROWS < n: row i arrives at first
 * + 60 i s, runs 600 + (i * 7919) % 5400 s on {2, 1, 2, 4}[i % 4] GPUs, in
 * submit order or reversed (which the loader holds and sorts).  Every line
 * is as long as every other, and the last is a comment of that length, so
 * that a test can change the file and keep its size. */
#define GEN_LINE 20 /* "0000000,0000,1     \n" */

static char *gen_trace(int n, int first, bool reverse)
{
	char *text = malloc((size_t)(n + 1) * GEN_LINE + 1), *p = text;
	static const int gpus[] = {2, 1, 2, 4};
	for (int k = 0; k < n; k++) {
		int i = reverse ? n - 1 - k : k;
		p += sprintf(p, "%07d,%04d,%d     \n", first + 60 * i, 600 + (i * 7919) % 5400,
			     gpus[i % 4]);
	}
	sprintf(p, "# %-17s\n", "end of the trace");
	return text;
}

static void write_gen(const char *name, int n, int first, bool reverse)
{
	char *text = gen_trace(n, first, reverse);
	write_file(name, text);
	free(text);
}

#define GEN_ROWS (TRACE_HELD_ROWS + 904)

/* A long trace in submit order, the usual, is read again by the run as its
 * clock reaches the rows (trace.h): the scenario keeps the rows summed up,
 * not the rows, so memory does not grow with the trace.  A short one is held. */
Test(scenario, a_long_sorted_trace_is_summed_up_not_held)
{
	write_gen("traces/t.csv", GEN_ROWS, 3600, false);
	struct scenario *sc = load(TRACE_WL);
	const struct workload_spec *w = &sc->workloads[0];
	const struct trace_summary *sum = &w->arrival.summary;
	cr_assert_null(w->arrival.rows);
	cr_assert_eq(w->arrival.n_rows, GEN_ROWS);
	double duration = 0;
	for (int i = 0; i < GEN_ROWS; i++)
		duration += 600 + (i * 7919) % 5400;
	cr_assert_eq(sum->max_gpus, 4);
	cr_assert_float_eq(sum->duration_s, duration, 1e-6);
	cr_assert_eq(sum->first_submit, 3600 * SIM_SECOND);
	cr_assert_eq(sum->last_submit, (3600 + 60 * (GEN_ROWS - 1)) * SIM_SECOND);
	cr_assert_eq(sum->n_shapes, 3, "the distinct GPU counts");
	const struct trace_shape first_seen[] = {
		{2, GEN_ROWS / 2}, {1, GEN_ROWS / 4}, {4, GEN_ROWS / 4}};
	for (size_t k = 0; k < 3; k++) {
		cr_expect_eq(sum->shapes[k].gpus, first_seen[k].gpus);
		cr_expect_eq(sum->shapes[k].jobs, first_seen[k].jobs);
	}
	cr_assert_eq(w->count, GEN_ROWS);
	cr_assert_eq(w->gpus, 4, "the widest row");
	cr_assert_float_eq(w->duration.mean, duration / GEN_ROWS, 1e-9);
	scenario_free(sc);

	write_gen("traces/t.csv", TRACE_HELD_ROWS, 3600, false);
	sc = load(TRACE_WL);
	cr_assert_not_null(sc->workloads[0].arrival.rows, "a short trace is held");
	cr_assert_eq(sc->workloads[0].arrival.summary.first_submit, 3600 * SIM_SECOND);
	scenario_free(sc);
}

/* A clock-time deadline is checked against the first row of a trace that
 * is not held, as of one that is. */
Test(scenario, a_deadline_is_checked_against_a_long_traces_first_row)
{
	write_gen("traces/t.csv", GEN_ROWS, 3600, false);
	scenario_free(load(W("arrival: {trace: traces/t.csv}, deadline: \"17:00\"")));
	fails(W("arrival: {trace: traces/t.csv}, deadline: \"00:30\""),
	      "DIR/s.yaml:3:65: error: deadline '00:30' is before the first arrival (start + "
	      "1h); expected a deadline after the jobs arrive, or {within: 5h} from each "
	      "arrival");
}

/* A cpu request in Kubernetes' millicores, as a pod spec writes it. */
Test(scenario, cpu_takes_kubernetes_millicores)
{
	struct scenario *sc =
		load(W("count: 1, duration: 1h, arrival: {at: \"00:00\"}, cpu: 8000m"));
	cr_expect_float_eq(sc->workloads[0].cpu, 8.0, 1e-12);
	scenario_free(sc);
	sc = load(W("count: 1, duration: 1h, arrival: {at: \"00:00\"}, cpu: 250m"));
	cr_expect_float_eq(sc->workloads[0].cpu, 0.25, 1e-12);
	scenario_free(sc);
}

/* A schedule's jobs first arrive at its first firing, not at the start: a
 * nightly batch at 20:00 with a deadline at 07:00 misses every deadline
 * before its first job exists. */
Test(scenario, a_deadline_is_checked_against_a_schedules_first_firing)
{
	scenario_free(load(W(
		"count: 1, duration: 1h, arrival: {schedule: \"0 20 * * *\"}, deadline: \"23:00\"")));
	fails(W("count: 1, duration: 1h, arrival: {schedule: \"0 20 * * *\"}, deadline: \"07:00\""),
	      "DIR/s.yaml:3:92: error: deadline '07:00' is before the first arrival (start + "
	      "20h); expected a deadline after the jobs arrive, or {within: 5h} from each "
	      "arrival");
}

static void run_trace(const char *name, struct results *r, bool *held)
{
	char text[512];
	snprintf(text, sizeof text,
		 NAME "pools: [{name: p, nodes: 3, gpu: A100-80GB, gpus_per_node: 8}]\n"
		      "workloads: [{name: w, arrival: {trace: %s}}]\n",
		 name);
	struct scenario *sc = load(text);
	*held = sc->workloads[0].arrival.rows != NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	results_init(r);
	cr_assert_eq(run_simulate(sc, r, &err), GP_OK, "%s", err.msg);
	scenario_free(sc);
}

/* The run reads a long trace in submit order as it goes; the same rows
 * held and sorted give the very same jobs. */
Test(scenario, a_trace_read_as_the_clock_goes_runs_as_the_rows_held)
{
	write_gen("traces/sorted.csv", GEN_ROWS, 0, false);
	write_gen("traces/reversed.csv", GEN_ROWS, 0, true);
	struct results streamed, held;
	bool s_held, h_held;
	run_trace("traces/sorted.csv", &streamed, &s_held);
	run_trace("traces/reversed.csv", &held, &h_held);
	cr_assert(!s_held && h_held);
	cr_assert_eq(streamed.n_jobs, GEN_ROWS);
	cr_assert_eq(held.n_jobs, GEN_ROWS);
	for (size_t i = 0; i < GEN_ROWS; i++) {
		const struct job_record *a = &streamed.jobs[i], *b = &held.jobs[i];
		cr_assert(a->submit == b->submit && a->start == b->start && a->end == b->end &&
				  a->gpus == b->gpus && a->node == b->node &&
				  a->status == b->status,
			  "job %zu differs", i);
	}
	cr_expect_eq(streamed.events, held.events);
	cr_expect_eq(named_metric(&streamed, "all", "queue_time_p95_s"),
		     named_metric(&held, "all", "queue_time_p95_s"));
	results_free(&streamed);
	results_free(&held);
}

/* Rewrites the trace with `text`, to be `seconds` newer than it was (0: as
 * old, so that only its content tells the change). */
static void rewrite_trace(const char *file, const char *text, int seconds)
{
	struct stat sb;
	cr_assert_eq(stat(file, &sb), 0);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	struct timespec times[2] = {sb.st_atim, sb.st_mtim};
	times[1].tv_sec += seconds;
	cr_assert_eq(utimensat(AT_FDCWD, file, times, 0), 0);
}

/* A trace read again by the run must be the trace the scenario read: one
 * changed in between refuses the run instead of running other jobs.  `edit`
 * changes the generated text in place (NULL: the file is removed). */
static void changed_fails(void (*edit)(char *text), int seconds, int code, const char *msg)
{
	char *text = gen_trace(GEN_ROWS, 0, false);
	write_file("traces/t.csv", text);
	struct scenario *sc = load(TRACE_WL);
	const char *trace = sc->workloads[0].arrival.trace_path;
	cr_assert_null(sc->workloads[0].arrival.rows);
	if (edit) {
		edit(text);
		rewrite_trace(trace, text, seconds);
	} else {
		cr_assert_eq(remove(trace), 0);
	}
	free(text);
	struct results r;
	struct gp_err err GP_ERR_SCOPE = {0};
	results_init(&r);
	cr_expect_eq(run_simulate(sc, &r, &err), code, "%s", err.msg);
	cr_expect_str_eq(err.msg, expand(msg));
	results_free(&r);
	scenario_free(sc);
}

static char *gen_line(char *text, int line) { return text + (size_t)(line - 1) * GEN_LINE; }

static void more_gpus(char *text) { gen_line(text, 100)[13] = '8'; }

static void swap_rows(char *text)
{
	char row[GEN_LINE];
	memcpy(row, gen_line(text, 100), GEN_LINE);
	memcpy(gen_line(text, 100), gen_line(text, 101), GEN_LINE);
	memcpy(gen_line(text, 101), row, GEN_LINE);
}

static void last_row_out(char *text) { gen_line(text, GEN_ROWS)[0] = '#'; }

static void comment_in(char *text)
{
	memcpy(gen_line(text, GEN_ROWS + 1), "9999999,0600,1     \n", GEN_LINE);
}

static void bad_cell(char *text) { gen_line(text, 100)[3] = 'x'; }

Test(scenario, a_trace_that_changes_after_loading_refuses_the_run)
{
	changed_fails(more_gpus, 100, GP_ERUNTIME,
		      "DIR/traces/t.csv: the trace changed since the scenario was read (another "
		      "size or modification time); expected the file as it was");
	/* the same size and time: the rows tell */
	changed_fails(swap_rows, 0, GP_ERUNTIME,
		      "DIR/traces/t.csv:101: the trace changed since the scenario was read (a row "
		      "out of order); expected the file as it was");
	changed_fails(last_row_out, 0, GP_ERUNTIME,
		      "DIR/traces/t.csv:5001: the trace changed since the scenario was read (fewer "
		      "rows); expected the file as it was");
	changed_fails(comment_in, 0, GP_ERUNTIME,
		      "DIR/traces/t.csv:5001: the trace changed since the scenario was read (more "
		      "rows); expected the file as it was");
	changed_fails(bad_cell, 0, GP_EINPUT,
		      "DIR/traces/t.csv:100: error: expected a number in column submit_s, got "
		      "'000x940'");
	changed_fails(NULL, 0, GP_ERUNTIME,
		      "DIR/traces/t.csv: cannot read the trace again: No such file or directory");
}

/* --- the job limit ------------------------------------------------------------------ */

Test(scenario, job_limit)
{
	fails(W(AT "duration: 1h, count: 1e8"),
	      "DIR/s.yaml:3:13: error: the scenario submits 100000000 jobs, above the limit of "
	      "50000000; expected fewer, or raise the limit with the environment variable "
	      "GPUPLAN_MAX_JOBS");
	fails(NAME "horizon: 1000d\n" POOL
		   "workloads: [{name: w, arrival: {process: poisson, rate: 1/s}, duration: 1h}]\n",
	      "DIR/s.yaml:4:13: error: the scenario submits 86400000 jobs, above the limit of "
	      "50000000; expected fewer, or raise the limit with the environment variable "
	      "GPUPLAN_MAX_JOBS");
}

Test(scenario, job_limit_from_the_environment)
{
	setenv("GPUPLAN_MAX_JOBS", "10", 1);
	struct scenario *sc = load(W(AT "duration: 1h, count: 10"));
	scenario_free(sc);
	fails(NAME POOL "workloads: [{name: a, " AT "duration: 1h, count: 6}, {name: b, " AT
			"duration: 1h, count: 5}]\n",
	      "DIR/s.yaml:3:72: error: the scenario submits 11 jobs, above the limit of 10; "
	      "expected fewer, or raise the limit with the environment variable GPUPLAN_MAX_JOBS");
	write_file("traces/t.csv", "0,1,1\n0,1,1\n0,1,1\n");
	setenv("GPUPLAN_MAX_JOBS", "2", 1);
	fails(TRACE_WL, "DIR/traces/t.csv:3: error: the trace has more than 2 jobs, the limit; "
			"raise it with the environment variable GPUPLAN_MAX_JOBS");
	setenv("GPUPLAN_MAX_JOBS", "lots", 1);
	fails(W(AT "duration: 1h"),
	      "GPUPLAN_MAX_JOBS: error: 'lots' is invalid; expected a whole number >= 1");
}

/* --- the bad-input corpus ------------------------------------------------------------ */

/* The substring after "# expect: " on the file's first line. */
static void expected_of(const char *file, char *out, size_t size)
{
	FILE *f = fopen(file, "r");
	cr_assert_not_null(f, "cannot open %s", file);
	char line[512] = "";
	cr_assert_not_null(fgets(line, sizeof line, f));
	fclose(f);
	cr_assert_eq(strncmp(line, "# expect: ", 10), 0, "%s: first line is not '# expect: ...'",
		     file);
	line[strcspn(line, "\r\n")] = '\0';
	snprintf(out, size, "%s", line + 10);
}

Test(scenario, bad_corpus)
{
	const char *folder = "tests/fixtures/bad";
	DIR *d = opendir(folder);
	cr_assert_not_null(d, "cannot open %s", folder);
	int files = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
			continue;
		char file[512], expect[512];
		snprintf(file, sizeof file, "%s/%s", folder, e->d_name);
		expected_of(file, expect, sizeof expect);
		struct scenario *sc = NULL;
		struct gp_err err GP_ERR_SCOPE = {0};
		int rc = scenario_load(file, NULL, 0, &sc, &err);
		cr_assert_eq(rc, GP_EINPUT, "%s: loaded, expected an error with '%s'", file,
			     expect);
		cr_assert_null(sc);
		/* Trace rows are reported in the trace (traces/NAME.csv:LINE). */
		bool in_file = !strncmp(err.msg, file, strlen(file));
		bool in_trace = !strncmp(err.msg, "tests/fixtures/bad/traces/", 26);
		cr_assert(in_file || in_trace, "%s: message '%s' does not start with the file",
			  file, err.msg);
		cr_assert_not_null(strstr(err.msg, expect), "%s: message '%s' lacks '%s'", file,
				   err.msg, expect);
		files++;
	}
	closedir(d);
	cr_assert_geq(files, 30, "only %d files in %s", files, folder);
}

/* A node without GPUs (a control plane, a CPU node) counts in a GPU pod's
 * FitError as kube-scheduler counts it, under the first filter it fails:
 * here its control-plane taint (an empty value prints as "{KEY: }",
 * kube-scheduler's fmt "{%s: %s}"). */
Test(scenario, a_pool_without_gpus_offers_none_but_counts_in_messages)
{
	const char *text = "name: t\n"
			   "pools:\n"
			   "  - {name: cp, nodes: 1, gpus_per_node: 0, cpu: 4, taints: "
			   "[{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}\n"
			   "  - {name: g, nodes: 1, gpu: L4, gpus_per_node: 1}\n"
			   "workloads: [{name: w, count: 2, arrival: {at: \"00:00\"}, gpus: 1, "
			   "duration: 1h}]\n";
	struct scenario *sc = load(text);
	cr_assert_eq(scenario_capacity_gpus(sc), 1);
	struct results r;
	struct gp_err err GP_ERR_SCOPE = {0};
	results_init(&r);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(r.n_reason_texts, 1);
	cr_assert_str_eq(
		r.reason_texts[0],
		"0/2 nodes are available: 1 Insufficient nvidia.com/gpu, "
		"1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. "
		"preemption: 0/2 nodes are available: 1 No preemption victims found for "
		"incoming pod, 1 Preemption is not helpful for scheduling..");
	results_free(&r);
	scenario_free(sc);
}

Test(scenario, a_pool_without_gpus_takes_no_gpu_type)
{
	fails("name: t\npools: [{name: cp, nodes: 1, gpus_per_node: 0, gpu: L4}]\n"
	      "workloads: [{name: w, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h}]\n",
	      "DIR/s.yaml:2:53: error: a pool with gpus_per_node: 0 has no GPUs; expected no gpu, "
	      "gpu_memory or sharing");
}

/* gpu_memory: what GFD's nvidia.com/gpu.memory says of the node's GPU, where it
 * is not the catalog's NVML total (an older driver's A100-SXM4-40GB reports
 * 40,537 MiB, GFD's docs; the catalog has 40,960). */
Test(scenario, gpu_memory_gives_the_pool_its_own_copy_of_the_type)
{
	struct scenario *sc = load("name: t\npools: [{name: a, nodes: 1, gpu: A100-40GB, "
				   "gpus_per_node: 8, gpu_memory: 40537Mi}, {name: b, nodes: 1, "
				   "gpu: A100-40GB, gpus_per_node: 8}]\n"
				   "workloads: [{name: w, arrival: {at: \"00:00\"}, gpus: 1, "
				   "duration: 1h}]\n");
	const struct pool_spec *a = &sc->pools[0], *b = &sc->pools[1];
	cr_assert_eq(a->gpu->memory_bytes, 40537 * 1048576.0);
	cr_assert_eq(b->gpu->memory_bytes, 40960 * 1048576.0, "the catalog's NVML total");
	cr_assert_eq(b->gpu, catalog_gpu("A100-40GB"));
	cr_assert_str_eq(a->gpu->name, "A100-40GB");
	cr_assert_eq(a->gpu->mig, b->gpu->mig, "MIG profiles keep the catalog's sizes");
	scenario_free(sc);
	fails("name: t\npools: [{name: a, nodes: 1, gpu: L4, gpus_per_node: 1, gpu_memory: 512Mi}]\n"
	      "workloads: [{name: w, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h}]\n",
	      "DIR/s.yaml:2:68: error: invalid gpu_memory '512Mi'; expected one GPU's memory from "
	      "1Gi to 1Ti, like 23034Mi");
}

/* pdb: policy/v1's PodDisruptionBudget takes one of minAvailable and
 * maxUnavailable (its validation refuses both). */
Test(scenario, a_pdb_takes_one_of_min_available_and_max_unavailable)
{
	struct scenario *sc =
		load("name: t\npools: [{name: a, nodes: 1, gpu: L4, gpus_per_node: 1}]\n"
		     "workloads: [{name: w, arrival: {at: \"00:00\"}, gpus: 1, "
		     "duration: 1h, pdb: {max_unavailable: 1}}, {name: v, arrival: "
		     "{at: \"00:00\"}, gpus: 1, duration: 1h}]\n");
	cr_assert_eq(sc->workloads[0].pdb, PDB_MAX_UNAVAILABLE);
	cr_assert_eq(sc->workloads[0].pdb_value, 1);
	cr_assert_eq(sc->workloads[1].pdb, PDB_NONE);
	scenario_free(sc);
	fails("name: t\npools: [{name: a, nodes: 1, gpu: L4, gpus_per_node: 1}]\n"
	      "workloads: [{name: w, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h, "
	      "pdb: {max_unavailable: 1, min_available: 1}}]\n",
	      "DIR/s.yaml:3:75: error: a PodDisruptionBudget takes one of min_available and "
	      "max_unavailable; expected a map like {max_unavailable: 1} or {min_available: 2}");
}

/* One rule for every rate key: a batch arrival's rate, like an inference
 * request rate, takes a bare number per second (before, batch refused it
 * while inference accepted it). */
Test(scenario, a_bare_number_is_a_rate_per_second_for_every_rate_key)
{
	struct scenario *sc = load(
		NAME POOL
		"workloads: [{name: w, count: 3, arrival: {process: poisson, rate: 2}, duration: 1h}]\n");
	cr_assert_float_eq(sc->workloads[0].arrival.rate, 2.0, 1e-15);
	scenario_free(sc);
}

/* Goals (docs/scenario.md, "Goals"): a workload's own goal, else the
 * scenario's goals by kind (service and inference: goals.service, 5m by
 * default; batch work without a deadline: goals.batch, 1h), and none for
 * batch work with a deadline. */
Test(scenario, every_workload_has_a_goal_by_kind_unless_it_sets_its_own)
{
	static const char *const text =
		NAME POOL "workloads:\n"
			  "  - {name: a, arrival: {at: \"00:00\"}, duration: 1h}\n"
			  "  - {name: b, arrival: {at: \"00:00\"}, duration: 1h, "
			  "deadline: {within: 3h}}\n"
			  "  - {name: nb, kind: service, arrival: {at: \"00:00\"}, duration: 8h}\n"
			  "  - {name: c, arrival: {at: \"00:00\"}, duration: 1h, goal: {queue_p95: "
			  "10m}}\n";
	struct scenario *sc = load(text);
	cr_expect_eq(sc->workloads[0].queue_goal, H);
	cr_expect_eq(sc->workloads[1].queue_goal, -1, "the deadline is its goal");
	cr_expect_eq(sc->workloads[2].queue_goal, 5 * 60 * SIM_SECOND);
	cr_expect_eq(sc->workloads[3].queue_goal, 10 * 60 * SIM_SECOND);
	scenario_free(sc);
	const char *sets[] = {"goals={batch: 2h, service: 1m}"};
	sc = load_with(text, sets, 1);
	cr_expect_eq(sc->workloads[0].queue_goal, 2 * H);
	cr_expect_eq(sc->workloads[1].queue_goal, -1);
	cr_expect_eq(sc->workloads[2].queue_goal, 60 * SIM_SECOND);
	cr_expect_eq(sc->workloads[3].queue_goal, 10 * 60 * SIM_SECOND, "its own goal wins");
	scenario_free(sc);
	fails(NAME POOL "goals: {batch: soon}\n" WL,
	      "DIR/s.yaml:3:16: error: invalid goals.batch 'soon'; expected a duration like 90s, "
	      "500ms, 15m, 1h30m or 2d");
	fails(NAME POOL "goals: {notebook: 5m}\n" WL,
	      "DIR/s.yaml:3:9: error: unknown key 'notebook' in goals; expected one of batch, "
	      "service");
	fails(NAME POOL
	      "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h, goal: {p95: 5m}}]\n",
	      "DIR/s.yaml:3:68: error: unknown key 'p95' in goal; expected one of queue_p95");
	fails(NAME POOL
	      "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h, goal: 5m}]\n",
	      "DIR/s.yaml:3:67: error: invalid goal '5m'; expected a map like {queue_p95: 10m}");
}

/* data_loader: 4 workers x 100/s against 1000/s feed 40% of what the GPUs
 * consume: gpu_busy 0.9 runs as 0.36 (jobs last 2.5x, arrivals.c). */
Test(scenario, a_data_loader_short_of_input_slows_the_gpus)
{
	struct scenario *sc =
		load(NAME POOL "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h, "
			       "gpu_busy: 0.9, data_loader: {workers: 4, rate: 100/s, need: "
			       "1000/s}}]\n");
	cr_expect_float_eq(sc->workloads[0].loader_fraction, 0.4, 1e-12);
	cr_expect_float_eq(sc->workloads[0].gpu_busy, 0.36, 1e-12);
	scenario_free(sc);
	fails(NAME POOL "workloads: [{name: w, arrival: {at: \"00:00\"}, duration: 1h, "
			"data_loader: {workers: 4, rate: 100/s}}]\n",
	      "DIR/s.yaml:3:74: error: missing key 'need' in data_loader; expected a map like "
	      "{workers: 4, rate: 150/s, need: 1000/s}");
	fails(NAME POOL "workloads: [{name: w, kind: service, arrival: {at: \"00:00\"}, "
			"duration: 1h, data_loader: {workers: 1, rate: 1/s, need: 1/s}}]\n",
	      "DIR/s.yaml:3:89: error: data_loader feeds a batch job's GPUs; expected it on a "
	      "workload of kind batch");
}
