/*
 * test_explain.c - a finding's sentences are made from its typed values
 * alone: findings built by hand (no run) read as the diagnosis words them,
 * and the diagnosis itself leaves text and evidence empty until explain
 * fills them, with the same words the run stored.
 */
#include "gpuplan/diagnose.h"
#include "gpuplan/explain.h"
#include "gpuplan/relax.h"
#include "gpuplan/run.h"
#include "gpuplan/scenario.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static struct scenario *sc;
static struct results r;
static char *text, *evidence;

/* The placement fixture: pools a100 (0) and h100 (1), 1 node of 4 GPUs each,
 * no taints; workload train (0) with node_selector
 * nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB. */
static void load(void)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/diagnose/placement.yaml", NULL, 0, &sc, &err),
		     GP_OK, "%s", err.msg);
	results_init(&r);
}

static void cleanup(void)
{
	free(text);
	free(evidence);
	text = evidence = NULL;
	results_free(&r);
	scenario_free(sc);
	sc = NULL;
}

TestSuite(explain, .init = load, .fini = cleanup);

/* Two reason messages of the run, as reasons.c would have interned them. */
static void two_reasons(void)
{
	r.reason_texts = calloc(2, sizeof *r.reason_texts);
	r.reason_texts[0] = strdup("first message");
	r.reason_texts[1] = strdup("0/2 nodes are available: 1 node(s) didn't match");
	r.n_reason_texts = 2;
}

static struct finding finding(enum finding_step step, enum finding_kind kind, int pool,
			      int workload)
{
	return (struct finding){.rank = 1,
				.step = (uint8_t)step,
				.kind = (uint8_t)kind,
				.pool = pool,
				.workload = workload,
				.queue = -1,
				.reason = -1};
}

/* A placement finding about train whose rules (a selector and a taint) hide
 * both pools.  By hand: 7200 pod-s = 2.0 pod-hours; idle 14400 GPU-s over
 * 3600 s = 4.0 GPUs idle on average, 14400 / 3600 = 4.0 idle GPU-hours;
 * capacity 28800 / 3600 = 8 GPUs. */
Test(explain, a_rules_finding_reads_its_figures_members_and_reason)
{
	two_reasons();
	struct finding f = finding(FINDING_PLACEMENT, KIND_RULES, -1, 0);
	int32_t pools[] = {0, 1};
	f.members = pools;
	f.n_members = 2;
	f.reason = 1;
	f.fig.rules = (struct finding_rules){.pending_s = 7200,
					     .pods = 2,
					     .idle = 14400,
					     .cap = 28800,
					     .secs = 3600,
					     .most = 4,
					     .rules = FINDING_RULE_AFFINITY | FINDING_RULE_TAINT};
	explain_finding(sc, &r, &f, &text, &evidence);
	cr_expect_str_eq(text,
			 "train waits on placement rules, not on hardware: its node "
			 "selector/affinity and a taint it does not tolerate keep its pods off "
			 "pools a100 and h100 while GPUs there are idle; relax the rule or move "
			 "capacity");
	cr_expect_str_eq(evidence,
			 "2.0 pod-hours pending (2 pods) with rule reasons, most with "
			 "\"0/2 nodes are available: 1 node(s) didn't match\"; meanwhile pools "
			 "a100 and h100 had 4.0 of 8 GPUs idle on average (4.0 idle GPU-hours, "
			 "up to 4 at once); node_selector "
			 "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB");
}

/* A spread constraint alone, one pod, one pool: the spread sentence and the
 * singular. */
Test(explain, a_spread_only_finding_says_max_skew)
{
	two_reasons();
	struct finding f = finding(FINDING_PLACEMENT, KIND_RULES, -1, 0);
	int32_t pools[] = {1};
	f.members = pools;
	f.n_members = 1;
	f.reason = 0;
	f.fig.rules = (struct finding_rules){.pending_s = 1800,
					     .pods = 1,
					     .idle = 3600,
					     .cap = 7200,
					     .secs = 1800,
					     .most = 2,
					     .rules = FINDING_RULE_SPREAD};
	explain_finding(sc, &r, &f, &text, &evidence);
	cr_expect_str_eq(text,
			 "train waits on placement rules, not on hardware: its topology spread "
			 "constraint keeps its pods from pool h100 while GPUs there are idle; "
			 "raise max_skew or use ScheduleAnyway");
	cr_expect(!strncmp(evidence,
			   "0.5 pod-hours pending (1 pod) with rule reasons, most with "
			   "\"first message\"; meanwhile pool h100 had 2.0 of 4 GPUs idle",
			   strlen("0.5 pod-hours pending (1 pod) with rule reasons, most with "
				  "\"first message\"; meanwhile pool h100 had 2.0 of 4 GPUs idle")),
		  "%s", evidence);
}

/* The run's capacity conclusion reads the run's metrics; deadline and SLO
 * metrics are absent, so their clauses are left out.  share: 45 of 90 = 50%. */
Test(explain, the_capacity_conclusion_reads_the_metrics_it_cites)
{
	results_add_metric(&r, "all", METRIC_QUEUE_TIME_P95_S, 120);
	results_add_metric(&r, "all", METRIC_GPU_ALLOCATION_PCT, 90);
	results_add_metric(&r, "all", METRIC_ENGINE_ACTIVE_PCT, 45);
	struct finding f = finding(FINDING_CAPACITY, KIND_CAPACITY, 1, -1);
	explain_finding(sc, &r, &f, &text, &evidence);
	cr_expect(!strncmp(text, "capacity: work waits for busy GPUs", 34), "%s", text);
	cr_expect_str_eq(evidence,
			 "queue p95 120 s; GPUs 90.0% allocated, the allocated ones 50.0% "
			 "engine-active; no quota, rule or fragmentation reason and no OOM "
			 "kill");
}

/* diagnose_run writes typed values only: on the placement fixture the rules
 * finding carries 6.0 pod-hours (3 jobs waited 1, 2 and 3 h: 21600 pod-s),
 * 3 pods, pool h100 as the one hidden, and kube-scheduler's message by id;
 * text and evidence stay NULL until explain_results, which then writes what
 * the run itself stored. */
Test(explain, diagnose_leaves_text_to_explain)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(r.n_findings, 1);
	char *was_text = strdup(r.findings[0].text), *was_ev = strdup(r.findings[0].evidence);
	finding_free(&r.findings[0]);
	r.n_findings = 0;

	diagnose_run(sc, &r);
	relax_findings(sc, &r); /* the binding constraint's key, as run_simulate does */
	cr_assert_eq(r.n_findings, 1);
	const struct finding *f = &r.findings[0];
	cr_expect_null(f->text);
	cr_expect_null(f->evidence);
	cr_expect_eq(f->kind, KIND_RULES);
	cr_expect_eq(f->workload, 0);
	cr_expect_float_eq(f->fig.rules.pending_s, 21600, 1e-6);
	cr_expect_eq(f->fig.rules.pods, 3);
	cr_expect_eq(f->fig.rules.rules, FINDING_RULE_AFFINITY);
	cr_assert_eq(f->n_members, 1);
	cr_expect_eq(f->members[0], 1, "h100");
	cr_assert(f->reason >= 0 && (size_t)f->reason < r.n_reason_texts);
	cr_expect(strstr(r.reason_texts[f->reason], "didn't match Pod's node affinity/selector"));

	explain_results(sc, &r);
	cr_expect_str_eq(r.findings[0].text, was_text);
	cr_expect_str_eq(r.findings[0].evidence, was_ev);
	free(was_text);
	free(was_ev);
}
