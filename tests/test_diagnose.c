/*
 * test_diagnose.c - the diagnosis: one small scenario per cause, where the
 * expected finding ranks first with the figures that support it; a healthy
 * run with no finding; the example scenarios; the sharing and quantization
 * checks the findings name; and the findings table.
 */
#include "gpuplan/catalog.h"
#include "gpuplan/diagnose.h"
#include "gpuplan/report.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "named_metric.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static struct scenario *sc;
static struct results r;

static void run(const char *path, const char *const *sets, size_t n_sets)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, sets, n_sets, &sc, &err), GP_OK, "%s", err.msg);
	results_init(&r);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK, "%s", err.msg);
}

static void cleanup(void)
{
	results_free(&r);
	scenario_free(sc);
	sc = NULL;
}

TestSuite(diagnose, .fini = cleanup);

/* Finding i has the step and every one of the strings in its text or evidence. */
static void expect_finding(size_t i, const char *step, const char *const *has, size_t n)
{
	cr_assert_gt(r.n_findings, i, "finding %zu exists", i + 1);
	const struct finding *f = &r.findings[i];
	cr_expect_eq(f->rank, (int)i + 1);
	cr_expect_str_eq(finding_step_name((enum finding_step)f->step), step, "finding %zu: %s: %s",
			 i + 1, f->text, f->evidence);
	for (size_t k = 0; k < n; k++)
		cr_expect(strstr(f->text, has[k]) || strstr(f->evidence, has[k]),
			  "finding %zu has '%s':\n%s\n%s", i + 1, has[k], f->text, f->evidence);
}

#define EXPECT_FINDING(i, step, ...)                                         \
	do {                                                                 \
		static const char *const has_[] = {__VA_ARGS__};             \
		expect_finding(i, step, has_, sizeof has_ / sizeof has_[0]); \
	} while (0)

Test(diagnose, allocation_names_the_sharing_modes_that_hold_the_pending_pods)
{
	run("tests/fixtures/diagnose/allocation.yaml", NULL, 0);
	EXPECT_FINDING(0, "allocation", "pool a100", "whole-GPU allocation is the lock",
		       "time-slicing x2", "time-slicing x4", "MPS x2", "MPS x4", "MIG 1g.20gb x4",
		       "fractional 200 milli", "work pended in 75% of the span (3h of 4h)",
		       "8.0 pods asking for 8.0 GPUs", "100.0% allocated (4.0 of 4 GPUs)",
		       "10.0% engine-active", "5.0% SM-active",
		       "14.6 GiB VRAM each on 80 GiB GPUs");
	cr_expect_eq(r.n_findings, 1, "nothing else: %s",
		     r.n_findings > 1 ? r.findings[1].text : "");
}

Test(diagnose, memory_names_the_quantization_that_fits_and_what_it_frees)
{
	run("tests/fixtures/diagnose/memory.yaml", NULL, 0);
	EXPECT_FINDING(0, "memory", "pool a100", "VRAM is the limit",
		       "int8 weights for finetune would fit 2 per GPU (11.8 GiB freed per pod)",
		       "VRAM 26.2 of 40 GiB used per allocated GPU",
		       "13.8 GiB left where a pending pod needs 26.2 GiB",
		       "2 x 14.4 = 28.8 GiB of 40 GiB", "10.0% engine-active");
	cr_expect_eq(r.n_findings, 1);
}

/* Time-sliced pods spread over the GPUs (the device plugin's distributed
 * allocation), so memory overflows only where more pods share a GPU than it
 * holds: four Llama-2-13B pods of 26.2 GiB under time-slicing x4. */
Test(diagnose, memory_after_oom_kills_under_time_slicing)
{
	const char *sets[] = {"pools.a100.sharing={mode: time-slicing, replicas: 4}",
			      "workloads.chat.model=llama-2-13b"};
	run("scenarios/sharing.yaml", sets, 2);
	cr_assert_gt(named_metric(&r, "all", "oom_kills"), 0);
	EXPECT_FINDING(0, "memory", "time-slicing x4", "OOM-killed",
		       "int8 weights for chat would fit 4 per GPU (11.8 GiB freed per pod)",
		       "4 x 26.2 = 104.9 GiB on 80 GiB GPUs", "4 x 14.4 = 57.6 GiB of 80 GiB");
}

/* A fixed MIG layout is not fragmentation: nb's free 2g.20gb instances (4/7
 * of the GPU, more than the 3/7 a 3g.40gb asks) can never host it, and no
 * gpu_policy or scoring changes that.  Before, nb's wait ranked first as
 * "fragmentation" with packing policies as the fix; then as capacity for its
 * profile, whose fix (a layout) advise never ran (issue 46).  No workload asks
 * for the 2g.20gb instances, so the layout is what binds: a mig-profile
 * finding naming pools.mig.sharing.layout, whose relaxation (relax_rows.c)
 * gives the GPU two 3g.40gb.  batch's taint is the placement finding after it. */
Test(diagnose, a_mig_layout_that_favours_unused_profiles_binds_not_fragmentation)
{
	/* batch's queue p95 is 1 h, its default goal: a goal of 30 m makes it a finding. */
	run("tests/fixtures/diagnose/mig-layout.yaml", (const char *const[]){"goals.batch=30m"}, 1);
	EXPECT_FINDING(0, "allocation", "nb waits for a 3g.40gb instance of pool mig",
		       "gives the GPUs to other profiles", "a layout with more 3g.40gb instances",
		       "the layout of a GPU is [3g.40gb, 2g.20gb, 2g.20gb]");
	EXPECT_FINDING(1, "placement", "batch waits on placement rules", "pool reserved");
	cr_expect_eq(r.n_findings, 2);
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_FRAGMENTATION, "%s", r.findings[i].text);
	cr_expect_eq(r.findings[0].kind, KIND_MIG_PROFILE);
	cr_expect_eq(r.findings[0].workload, 1, "nb");
	cr_expect_eq(r.findings[0].pool, 2, "pool mig");
	cr_expect_str_eq(r.findings[0].key, "pools.mig.sharing.layout");
	cr_expect_str_eq(r.findings[0].value, "[3g.40gb, 2g.20gb, 2g.20gb]");
}

Test(diagnose, placement_when_a_selector_hides_idle_capacity)
{
	run("tests/fixtures/diagnose/placement.yaml", NULL, 0);
	EXPECT_FINDING(0, "placement", "train waits on placement rules",
		       "its node selector/affinity keeps its pods off pool h100",
		       "6.0 pod-hours pending (3 pods)",
		       "didn't match Pod's node affinity/selector",
		       "pool h100 had 4.0 of 4 GPUs idle on average (12.0 idle GPU-hours",
		       "node_selector nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB");
	cr_expect_eq(r.n_findings, 1);
}

/* The finding names the rule that hides the idle pool: train's messages
 * also name the control plane's taint, but that node has no GPUs and train
 * tolerates the H100 node's taint, so its selector alone keeps it off the
 * idle A100 node (issue 39; it said "its node selector/affinity and a taint
 * it does not tolerate keep"). */
Test(diagnose, a_taint_on_a_node_without_gpus_is_not_blamed)
{
	run("tests/fixtures/diagnose/taint-elsewhere.yaml", NULL, 0);
	EXPECT_FINDING(0, "placement", "train waits on placement rules",
		       "its node selector/affinity keeps its pods off pool a100",
		       "6.0 pod-hours pending (3 pods)",
		       "untolerated taint "
		       "{node-role.kubernetes.io/control-plane: }",
		       "pool a100 had 8.0 of 8 GPUs idle on average");
	cr_expect_eq(r.findings[0].fig.rules.rules, FINDING_RULE_AFFINITY);
}

/* Pending-reason rows carry the kinds of their message, so the diagnosis
 * never reads kube-scheduler's or Kueue's text back: the placement fixture's
 * "1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node
 * affinity/selector" is resource + affinity; Kueue's "insufficient unused
 * quota" is quota. */
Test(diagnose, pending_reasons_carry_their_kinds)
{
	run("tests/fixtures/diagnose/placement.yaml", NULL, 0);
	bool found = false;
	for (size_t i = 0; i < r.n_pending_reasons; i++) {
		const struct pending_reason *pr = &r.pending_reasons[i];
		if (pr->workload != 0 || !strstr(pr->reason, "affinity/selector"))
			continue;
		found = true;
		cr_expect_eq(pr->kinds, PEND_BIT(PEND_AFFINITY) | PEND_BIT(PEND_RESOURCE), "%s",
			     pr->reason);
	}
	cr_expect(found);
	cleanup();
	run("tests/fixtures/diagnosis/quota.yaml", NULL, 0);
	cr_assert_gt(r.n_pending_reasons, 0);
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		cr_expect_eq(r.pending_reasons[i].kinds, PEND_BIT(PEND_QUOTA), "%s",
			     r.pending_reasons[i].reason);
	cr_expect_eq(r.findings[0].kind, KIND_ADMISSION);
	cr_expect_eq(r.findings[0].queue, 0);
	cr_expect_eq(r.findings[0].workload, 0);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "queues.team-a.quota");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "{nvidia.com/gpu: 12}",
			 "4 + the 8 one-GPU jobs that waited at once (12 GPUs were free)");
}

Test(diagnose, application_when_the_tokenizer_is_saturated)
{
	run("tests/fixtures/diagnose/application.yaml", NULL, 0);
	EXPECT_FINDING(
		0, "application", "chat is bound by tokenization", "more GPUs would not help",
		"tokenizer 100 ms a request x 15 requests/s over 1 replica x 1 worker = 150% busy",
		"3 tokenizer workers a replica would");
	/* 15/s x 100 ms = 1.5 workers' worth; at 70% busy each: ceil(1.5 / 0.7) = 3. */
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.chat.tokenize");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "{time: 0.1s, workers: 3}");
	cr_expect_lt(named_metric(&r, "chat", "duty_cycle_pct"), 100 * DIAGNOSE_DUTY);
	cr_expect_eq(r.n_findings, 1);
}

Test(diagnose, application_when_batch_jobs_are_bound_off_the_gpu)
{
	run("tests/fixtures/diagnose/offgpu.yaml", NULL, 0);
	EXPECT_FINDING(0, "application", "etl misses deadlines although its jobs start at once",
		       "deadline met 0.0% with queue p95 0 s", "1h48m of a 2h job is off the GPU");
	cr_expect_eq(r.n_findings, 1);
}

Test(diagnose, a_healthy_run_has_no_finding_and_says_so)
{
	run("tests/fixtures/diagnose/healthy.yaml", NULL, 0);
	cr_assert_eq(r.n_findings, 0, "%s", r.n_findings ? r.findings[0].text : "");
	char buf[2048] = "";
	FILE *f = fmemopen(buf, sizeof buf - 1, "w");
	report_findings(f, &r);
	fclose(f);
	cr_expect(strstr(buf, "no finding (healthy)"), "%s", buf);
	cr_expect(strstr(buf, "90% engine-active"), "%s", buf);
}

/* Capacity is a conclusion: only when no other step explains the wait. */
/* Provisioning is the wait when it is most of the pending time and the queue
 * is long enough to be a finding, even under 5% of the span (it said
 * "capacity ... a larger pool would", and advise had nothing to search). */
Test(diagnose, a_short_wait_for_nodes_to_boot_is_provisioning_not_capacity)
{
	/* The team wants its jobs started within 2 minutes; queue p95 is 303 s. */
	run("tests/fixtures/diagnose/provisioning-short.yaml",
	    (const char *const[]){"goals.batch=2m"}, 1);
	cr_assert_geq(r.n_findings, 1);
	cr_expect_eq(r.findings[0].kind, KIND_PROVISIONING, "%s", r.findings[0].text);
	EXPECT_FINDING(0, "capacity", "pods wait for nodes to be provisioned",
		       "waiting for provisioning");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
}

/* Pending pods that cannot share (2 GPUs, 60 GiB each) behind near-idle
 * holders of whole GPUs: the lock is still allocation, and the fixes share
 * the holders (servers: 15.5 GiB, gpu_busy 0.03, so x2 and x4 fit). */
Test(diagnose, idle_holders_of_whole_gpus_are_the_allocation_lock)
{
	run("tests/fixtures/diagnose/idle-holders.yaml", NULL, 0);
	EXPECT_FINDING(0, "allocation", "pool h100", "the idle holders can give GPUs back",
		       "servers: time-slicing x2, time-slicing x4", "3.0% engine-active");
	cr_expect_eq(r.findings[0].n_members, 1);
	cr_expect_eq(r.findings[0].members[0], 0, "servers, not train");
	cr_expect(r.findings[0].fig.pool.holders);
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
}

/* Near-idle inference replicas beside busy training (tests/fixtures/
 * diagnose/idle-replicas.yaml): the pool averages a third active, so it is
 * not idle as a whole, but the six replicas hold six of its eight GPUs in
 * iterations 11% of the time.  The lock is theirs, and the fix is fewer
 * replicas: ceil(6 x 11.3% / 50%) = 2.  It said "capacity: a larger pool
 * would".  By hand: the four 2-GPU jobs start at 00:15, 02:15, 04:15 and
 * 06:15 on the two free GPUs: queue mean 3h, two of four by 05:15. */
Test(diagnose, near_idle_replicas_beside_busy_training_are_the_allocation_lock)
{
	run("tests/fixtures/diagnose/idle-replicas.yaml", NULL, 0);
	cr_expect_float_eq(named_metric(&r, "train", "queue_time_mean_s"), 3 * 3600, 1e-6);
	cr_expect_float_eq(named_metric(&r, "train", "deadline_met_pct"), 50, 1e-9);
	EXPECT_FINDING(0, "allocation", "pool a100", "the idle holders can give GPUs back",
		       "chat: 2 replicas instead of 6", "chat: 6 replicas in iterations 11.");
	cr_expect(r.findings[0].fig.pool.holders);
	cr_expect_eq(r.findings[0].n_fixes, 1);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.chat.replicas");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "2");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
}

/* Pods that ask for 48 of a node's 64 cores strand 6 of its 8 GPUs
 * (tests/fixtures/diagnose/cpu-requests.yaml): the wait is the cpu request
 * ("Insufficient cpu" while GPUs are free), a placement finding, not
 * capacity (it said "capacity ... a larger pool would").  By hand: two jobs
 * at a time, queue mean (0+0+1+1+2+2+3+3)/8 h = 1h30m, half by 2h; 64 / 4
 * pods a node = 16 cores. */
/* The label of a fix of finding f, or NULL. */
static const char *fix_labelled(const struct finding *f, const char *label)
{
	for (size_t i = 0; i < f->n_fixes; i++)
		if (!strcmp(f->fixes[i].label, label))
			return f->fixes[i].label;
	return NULL;
}

/* A queue's limit and quota grow by the waiting jobs the free GPUs hold,
 * whole, and no further than the cohort lends or the pools hold
 * (tests/fixtures/diagnose/borrow-whole-jobs.yaml). */
Test(diagnose, an_admission_fix_grows_by_whole_jobs_the_cohort_can_lend)
{
	run("tests/fixtures/diagnose/borrow-whole-jobs.yaml", NULL, 0);
	EXPECT_FINDING(0, "allocation", "vision-train waits on admission");
	const struct finding *f = &r.findings[0];
	cr_expect(fix_labelled(f, "borrowing limit of vision at 8 GPUs"), "%s", f->text);
	cr_expect(fix_labelled(f, "quota of vision at 16 GPUs"), "%s", f->text);
	cr_expect(!fix_labelled(f, "borrowing limit of vision at 9 GPUs"));
	cr_expect(!fix_labelled(f, "quota of vision at 17 GPUs"));
}

Test(diagnose, a_cpu_request_that_strands_gpus_is_placement_not_capacity)
{
	run("tests/fixtures/diagnose/cpu-requests.yaml", NULL, 0);
	cr_expect_float_eq(named_metric(&r, "prep", "queue_time_mean_s"), 5400, 1e-6);
	cr_expect_float_eq(named_metric(&r, "prep", "deadline_met_pct"), 50, 1e-9);
	EXPECT_FINDING(0, "placement", "prep waits on its cpu request, not on GPUs",
		       "holds 1 of its pods where its GPUs hold 4",
		       "a request of 16 cores fits 4 a node", "Insufficient cpu");
	cr_expect_eq(r.findings[0].kind, KIND_REQUESTS);
	cr_expect_eq(r.findings[0].n_fixes, 1);
	cr_expect_str_eq(r.findings[0].fixes[0].label, "prep requesting 16 cores a pod");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.prep.cpu");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "16");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
	/* With the request the finding names, all eight start at once. */
	cleanup();
	const char *sets[] = {"workloads.prep.cpu=16"};
	run("tests/fixtures/diagnose/cpu-requests.yaml", sets, 1);
	cr_expect_float_eq(named_metric(&r, "prep", "deadline_met_pct"), 100, 1e-9);
	cr_expect_eq(r.n_findings, 0);
}

/* One saturated replica beside three idle GPUs of its node (tests/fixtures/
 * diagnose/saturated-replicas.yaml): it said "capacity ... a larger pool
 * would", and advise's pool search could not help a fixed replica count.
 * The finding names the replicas that serve the offered 60/s at the rate
 * one served, 80 % busy: ceil(60 / 25.9 / 0.8) = 3, within the 3 idle GPUs;
 * with them the SLO is met. */
Test(diagnose, a_saturated_service_beside_idle_gpus_needs_replicas_not_nodes)
{
	run("tests/fixtures/diagnose/saturated-replicas.yaml", NULL, 0);
	double served = named_metric(&r, "chat", "throughput_rps");
	int need = (int)ceil(60 / served / 0.8);
	cr_assert_eq(need, 3, "served %.2f/s", served);
	EXPECT_FINDING(0, "capacity", "chat's 1 replica is saturated and misses the SLO",
		       "3 replicas on them would serve its load, no new node needed",
		       "60.0 requests/s offered", "3.0 GPUs idle on average");
	cr_expect_eq(r.findings[0].kind, KIND_REPLICAS);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.chat.replicas");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "3");
	cr_expect_eq(r.n_findings, 1);
	cleanup();
	const char *sets[] = {"workloads.chat.replicas=3"};
	run("tests/fixtures/diagnose/saturated-replicas.yaml", sets, 1);
	cr_expect_float_eq(named_metric(&r, "chat", "slo_met"), 1, 0);
}

/* A service whose traffic lasts minutes of an 8-hour run, beside batch work
 * (tests/fixtures/diagnosis/service-beside-evals.yaml: chat's 20,000
 * requests at 30/s on 2 of an L40S node's 4 GPUs; evals take the other two
 * at 00:30).  Its duty over the whole run is 5.4 % and the pool has no GPU
 * free over the run's active windows, so it got no finding.  Over the five
 * 5-minute windows in which it had requests (the queue drains by 25 min):
 * engine-active 2, 2, 2, 2 and 0.49 of 2 GPUs held (84.9 %), 2 GPUs idle in
 * each; ceil(30 / (15.49 / 2) / 0.8) = 5 replicas wanted, 2 + 2 fit. */
Test(diagnose, a_service_saturated_while_it_serves_beside_batch_needs_replicas)
{
	run("tests/fixtures/diagnosis/service-beside-evals.yaml", NULL, 0);
	cr_expect_lt(named_metric(&r, "chat", "duty_cycle_pct"), 100 * DIAGNOSE_DUTY);
	double served = named_metric(&r, "chat", "throughput_rps");
	cr_assert_eq((int)ceil(30 / (served / 2) / 0.8), 5, "served %.2f/s", served);
	size_t i = 0;
	while (i < r.n_findings && r.findings[i].kind != KIND_REPLICAS)
		i++;
	cr_assert_lt(i, r.n_findings, "no replicas finding");
	EXPECT_FINDING(i, "capacity", "chat's 2 replicas are saturated and miss the SLO",
		       "4 replicas fit on them, of the 5 its load needs",
		       "while it had requests, replicas in iterations 84.9% of the time and 2.0 "
		       "GPUs idle");
	cr_expect_str_eq(r.findings[i].fixes[0].sets[0].value, "4");
}

/* The pending_reasons row of workload w's scope whose message holds `has`. */
static const struct pending_reason *reason_row(const char *w, const char *has)
{
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		if (!strcmp(r.pending_reasons[i].scope, w) &&
		    strstr(r.pending_reasons[i].reason, has))
			return &r.pending_reasons[i];
	return NULL;
}

/* A service's replicas kept off idle GPUs by a taint (tests/fixtures/
 * diagnosis/service-taint.yaml): its two pending replicas carry the FitError
 * kube-scheduler gives a pending Deployment pod, 2 replicas x 1 h of it, and
 * the placement finding names the taint.  Before, a replica's failed
 * placement reached no reasons tracker: no row, no binding constraint, and
 * advise's answer was a larger pool. */
Test(diagnose, a_taint_that_keeps_a_services_replicas_off_idle_gpus_is_named)
{
	run("tests/fixtures/diagnosis/service-taint.yaml", NULL, 0);
	const struct pending_reason *pr = reason_row("chat", "untolerated taint");
	cr_assert(pr, "a row for chat's replicas");
	cr_expect_str_eq(pr->reason,
			 "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had "
			 "untolerated taint {dedicated: batch}. preemption: 0/3 nodes are "
			 "available: 1 No preemption victims found for incoming pod, 2 Preemption "
			 "is not helpful for scheduling..");
	cr_expect_float_eq(pr->pending_seconds, 2 * 3600.0, 1e-6);
	cr_expect_eq(pr->pods, 2);
	EXPECT_FINDING(0, "placement", "chat waits on placement rules",
		       "a taint it does not tolerate keeps its pods off pool batch");
	cr_expect_eq(r.findings[0].kind, KIND_RULES);
}

/* Replicas that wait for GPUs and are then placed (tests/fixtures/diagnose/
 * scaleup-waits.yaml: the autoscaler's two new replicas wait for the GPUs of
 * two 20-minute jobs): each carries the FitError from the failure that
 * found it pending until its placement, so the row holds the pending
 * gauge's integral, both replicas' whole waits. */
Test(diagnose, a_services_pending_replicas_carry_their_fiterror_until_placed)
{
	run("tests/fixtures/diagnose/scaleup-waits.yaml", NULL, 0);
	const struct pending_reason *pr = reason_row("chat", "Insufficient nvidia.com/gpu");
	cr_assert(pr, "a row for chat's replicas");
	double gauge = 0;
	for (size_t i = 0; i < r.n_ts; i++)
		if (!strcmp(r.ts[i].scope, "chat"))
			gauge += r.ts[i].pending * 60;
	cr_expect_gt(gauge, 0);
	cr_expect_float_eq(pr->pending_seconds, gauge, 1e-6);
	cr_expect_float_eq(pr->pending_seconds, 2 * named_metric(&r, "chat", "replica_wait_max_s"),
			   1e-6);
	cr_expect_eq(pr->pods, 2);
}

/* A round-robin service whose replicas on the slower type fall behind while
 * all of them iterate most of the time (tests/fixtures/diagnosis/
 * mixed-busy.yaml: 79% duty, above the 50% the finding asked for before):
 * while it had requests the A10G was engine-active all the time and the
 * H100s about 70%, so the mixed-gpus finding names the router and the
 * faster type, and nothing says capacity. */
Test(diagnose, a_slower_type_behind_busy_replicas_is_the_router_not_capacity)
{
	run("tests/fixtures/diagnosis/mixed-busy.yaml", NULL, 0);
	cr_expect_gt(named_metric(&r, "chat", "duty_cycle_pct"), 100 * DIAGNOSE_DUTY);
	EXPECT_FINDING(0, "placement", "chat's router gives each of its 4 replicas the same share",
		       "those on A10G fall behind");
	cr_expect_eq(r.findings[0].kind, KIND_MIXED_GPUS);
	cr_expect_str_eq(r.findings[0].fixes[1].sets[0].value, "least-outstanding");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
}

/* The tail of a duration's distribution against a deadline, on GPUs to
 * spare (tests/fixtures/diagnose/deadline-tail.yaml): job 5 waited 0 s and
 * ran 19,478 s against 18,000 s, the only one late.  It was told capacity
 * ("waits for busy GPUs") at a queue p95 of 0 s; the deadline finding
 * names the tail, and a deadline within 5h30m (19,478 s rounded up to the
 * half hour). */
Test(diagnose, a_job_longer_than_its_deadline_on_its_own_is_not_capacity)
{
	run("tests/fixtures/diagnose/deadline-tail.yaml", NULL, 0);
	cr_expect_float_eq(named_metric(&r, "finetune", "queue_time_max_s"), 0, 0);
	cr_assert_eq(r.n_findings, 1);
	EXPECT_FINDING(0, "application",
		       "finetune's late jobs each ran longer than their deadline "
		       "of 5h allows on their own, without waiting",
		       "1 of 12 jobs missed the deadline within 18000 s, none of them waited",
		       "the longest took 19478 s");
	cr_expect_eq(r.findings[0].kind, KIND_DEADLINE);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "{within: 5h30m}");
}

/* A server bound by its KV cache at memory_fraction 0.9 already (tests/
 * fixtures/diagnosis/kv-full.yaml: of max_batch 256, 18 typical sequences
 * fit: 8,500 tokens x 128 KiB a token (2 x 32 layers x 8 KV heads x 128 x
 * 2 bytes) = 1.11 GB each in 0.9 x 40 GiB (38.7 GB) less 16.1 GB of fp16
 * weights and the server's overhead): the memory finding names an fp8 KV cache
 * (vLLM's --kv-cache-dtype fp8), not a higher memory_fraction; it said
 * nothing of the cache.  The replicas finding names the idle GPUs. */
Test(diagnose, a_full_kv_cache_at_a_high_memory_fraction_names_its_format)
{
	run("tests/fixtures/diagnosis/kv-full.yaml", NULL, 0);
	EXPECT_FINDING(0, "memory", "rag's KV cache is full: at memory_fraction 0.9",
		       "an fp8 KV cache would hold twice the sequences",
		       "its cache holds about 18 sequences of a typical request",
		       "646 preemptions over 3000 requests");
	cr_expect_eq(r.findings[0].kind, KIND_KV_CACHE);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.rag.kv_cache");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "fp8");
	cr_assert_gt(r.n_findings, 1);
	cr_expect_eq(r.findings[1].kind, KIND_REPLICAS);
}

/* kube-scheduler's priority preemption evicting work that then misses its
 * deadlines (tests/fixtures/diagnosis/priority-preempted.yaml): each of 3
 * trainings (4 GPUs at 9:30, 14:30, 19:30) finds 2 of the H100 node's 8
 * GPUs free beside 6 evals and evicts 2 (DefaultPreemption), which start
 * again once the first evals end at 11:00 and end past their 3 h: 6 of 18
 * miss.  It was told capacity at a queue p95 of 0 s; the finding names the
 * preemption and its two fixes from Kubernetes' pod priority: the
 * preemptor's preemptionPolicy Never, or the victims at its priority. */
Test(diagnose, evictions_by_priority_preemption_name_the_preemptor_not_capacity)
{
	run("tests/fixtures/diagnosis/priority-preempted.yaml", NULL, 0);
	cr_expect_float_eq(named_metric(&r, "evals", "jobs_priority_preempted"), 6, 0);
	cr_expect_float_eq(named_metric(&r, "evals", "deadline_met_pct"), 200.0 / 3, 1e-9);
	EXPECT_FINDING(0, "placement",
		       "evals's running jobs were evicted 6 times by kube-scheduler's priority "
		       "preemption",
		       "train with preemption_policy Never", "evals at priority 1000",
		       "6 priority preemptions (6 evictions in all) at priority 0");
	cr_expect_eq(r.findings[0].kind, KIND_PREEMPTED);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.train.preemption_policy");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "Never");
	cr_expect_str_eq(r.findings[0].fixes[1].sets[0].value, "1000");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
}

/* A gang of higher priority beside them cannot preempt (kube-scheduler's
 * DefaultPreemption runs for one-pod jobs; gpuplan places a gang whole):
 * the fix names train alone, not a policy that would change nothing. */
Test(diagnose, a_gang_of_higher_priority_is_not_named_a_preemptor)
{
	const char *sets[] = {"workloads.+={name: big, gang: true, pods: 2, gpus: 1, count: 1, "
			      "arrival: {at: \"23:00\"}, duration: 1h, priority: 500, gpu_spec: "
			      "[H100-80GB]}"};
	run("tests/fixtures/diagnosis/priority-preempted.yaml", sets, 1);
	cr_assert_eq(r.findings[0].kind, KIND_PREEMPTED);
	cr_expect_str_eq(r.findings[0].fixes[0].label, "train with preemption_policy Never");
	cr_expect_eq(r.findings[0].fixes[0].n_sets, 1);
}

/* A gpu_spec that keeps 60 GiB pods off 48 GiB GPUs spares them an OOM kill
 * (tests/fixtures/diagnose/spec-vram.yaml): no placement finding blames it
 * ("relax the rule" led to 28 OOM kills); the wait is the H100s' capacity.
 * By hand: queue mean (4 x 0 + 4 x 2h) / 8 = 1h, half by 3h. */
Test(diagnose, a_rule_that_keeps_pods_off_gpus_too_small_hides_no_capacity)
{
	run("tests/fixtures/diagnose/spec-vram.yaml", NULL, 0);
	cr_expect_float_eq(named_metric(&r, "bigmem", "queue_time_mean_s"), 3600, 1e-6);
	cr_expect_float_eq(named_metric(&r, "bigmem", "deadline_met_pct"), 50, 1e-9);
	EXPECT_FINDING(0, "capacity", "bigmem waits for busy GPUs of pool h100");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_RULES, "%s", r.findings[i].text);
}

/* A cordoned pool is no capacity a rule hides (tests/fixtures/diagnose/
 * cordoned.yaml): the placement finding names pool b, which w's selector
 * keeps it off, not the cordoned pool c it matches. */
Test(diagnose, a_cordoned_pool_is_not_hidden_by_a_rule)
{
	run("tests/fixtures/diagnose/cordoned.yaml", NULL, 0);
	EXPECT_FINDING(0, "placement", "keeps its pods off pool b while");
	cr_expect_eq(r.findings[0].n_members, 1);
	cr_expect_eq(r.findings[0].members[0], 1, "pool b only");
}

/* Idle replicas in one pool do not lock another (tests/fixtures/diagnose/
 * idle-elsewhere.yaml): a workload's row covers every pool it runs in, so
 * what it holds idle counts against a pool only up to that pool's own idle
 * allocation. */
Test(diagnose, idle_replicas_in_another_pool_are_not_this_pools_lock)
{
	run("tests/fixtures/diagnose/idle-elsewhere.yaml", NULL, 0);
	EXPECT_FINDING(0, "capacity", "train waits for busy GPUs of pool busy");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_SHARING, "%s", r.findings[i].text);
}

/* The fragmentation finding offers the packers not in use: with best-fit in
 * use, fgd, gpu-packing and MostAllocated (it said "best-fit or fgd"). */
Test(diagnose, fragmentation_never_offers_the_policy_in_use)
{
	run("tests/fixtures/diagnose/fragmented.yaml", NULL, 0);
	EXPECT_FINDING(0, "allocation", "big waits on fragmentation",
		       "(gpu_policy fgd, gpu_policy gpu-packing or scoring MostAllocated)",
		       "gpu_policy best-fit");
	cr_expect(!strstr(r.findings[0].text, "best-fit"), "%s", r.findings[0].text);
}

/* scenarios/eval-window.yaml meets every deadline although its jobs wait
 * for the 12:00 window: waiting is within the goal, so there is no finding
 * (it said "capacity: ... a larger pool would").  With the window cut to
 * 12:00-13:00 and the deadline at 13:00, half the jobs are late: capacity,
 * worded for closed windows, and not fragmentation (the closed pool's idle
 * GPUs are not free capacity: it said "3.83 of 4 GPUs free"). */
Test(diagnose, a_wait_on_busy_gpus_is_capacity_and_comes_last)
{
	run("scenarios/eval-window.yaml", NULL, 0);
	cr_expect_eq(r.n_findings, 0, "every deadline met");
	cleanup();
	static const char *const tight[] = {
		"pools.batch.windows=[{from: \"12:00\", to: \"13:00\"}]",
		"workloads.eval.deadline=\"13:00\""};
	run("scenarios/eval-window.yaml", tight, 2);
	/* The window binds (issue 46): its own finding comes before capacity. */
	cr_assert_eq(r.n_findings, 2);
	cr_expect_eq(r.findings[0].kind, KIND_BINDS);
	cr_expect_str_eq(r.findings[0].key, "pools.batch.windows");
	cr_expect_str_eq(r.findings[0].value, "12:00-13:00");
	EXPECT_FINDING(1, "capacity",
		       "eval waits for GPUs of pool batch that are busy or outside its "
		       "windows",
		       "deadlines met 50.0%", "no quota, rule or fragmentation reason");
	cr_expect_eq(r.findings[1].kind, KIND_CAPACITY);
	cr_expect_eq(r.findings[1].n_fixes, 0, "advise searches the pool size itself");
}

Test(diagnose, example_sharing_is_an_allocation_lock)
{
	run("scenarios/sharing.yaml", NULL, 0);
	EXPECT_FINDING(0, "allocation", "pool a100", "time-slicing x4", "MPS x4", "MIG 1g.20gb x4",
		       "8.0% engine-active", "4.0% SM-active");
}

Test(diagnose, example_placement_ranks_the_selector_before_the_taint)
{
	/* batch waits 1 h, its default goal: with 30 m it misses it. */
	run("scenarios/placement.yaml", (const char *const[]){"goals.batch=30m"}, 1);
	EXPECT_FINDING(0, "placement", "train", "pools h100 and reserved",
		       "4.0 pod-hours pending (2 pods)", "20.0 idle GPU-hours");
	EXPECT_FINDING(1, "placement", "batch", "a taint it does not tolerate", "pool reserved",
		       "1.0 pod-hours pending (1 pod)", "4.0 idle GPU-hours");
}

/* --- the checks the findings name ------------------------------------------ */

static struct pool_spec pool_of(const char *gpu)
{
	struct pool_spec p;
	memset(&p, 0, sizeof p);
	p.gpu = catalog_gpu(gpu);
	p.gpus_per_node = 8;
	p.sharing.mode = SHARING_EXCLUSIVE;
	return p;
}

static struct workload_spec pod_of(double vram_gib)
{
	struct workload_spec w;
	memset(&w, 0, sizeof w);
	w.request = REQUEST_GPUS;
	w.gpus = 1;
	w.vram_bytes = vram_gib * GIB;
	return w;
}

static size_t names(const struct pool_spec *p, const struct workload_spec *w, char out[][64])
{
	struct diagnose_option o[DIAGNOSE_MAX_OPTIONS];
	size_t n = diagnose_sharing_options(p, w, o);
	for (size_t i = 0; i < n; i++)
		diagnose_option_name(&o[i], out[i], 64);
	return n;
}

Test(diagnose, sharing_options_follow_each_modes_memory_rule)
{
	struct pool_spec p = pool_of("A100-80GB");
	struct workload_spec w = pod_of(30);
	char n[DIAGNOSE_MAX_OPTIONS][64];
	/* 30 GiB: two share a GPU's 80 GiB, four do not; MPS x2 units are 40 GiB. */
	cr_assert_eq(names(&p, &w, n), 4);
	cr_expect_str_eq(n[0], "time-slicing x2");
	cr_expect_str_eq(n[1], "MPS x2");
	cr_expect_str_eq(n[2], "MIG 3g.40gb x2");
	cr_expect_str_eq(n[3], "fractional 400 milli");
	w = pod_of(50); /* only the whole GPU holds it */
	cr_expect_eq(names(&p, &w, n), 0);
	p.sharing = (struct sharing){.mode = SHARING_TIME_SLICING, .replicas = 2};
	w = pod_of(10); /* from x2: only more units per GPU count */
	cr_assert_eq(names(&p, &w, n), 4);
	cr_expect_str_eq(n[0], "time-slicing x4");
	cr_expect_str_eq(n[1], "MPS x4");
	/* A 1g.10gb is 9,728 MiB as NVML reports it, short of 10 GiB (issue 39) */
	cr_expect_str_eq(n[2], "MIG 1g.20gb x4");
	cr_expect_str_eq(n[3], "fractional 150 milli");
	w.gpus = 2; /* a MIG instance or a share is one GPU's */
	cr_expect_eq(names(&p, &w, n), 2);
	w.request = REQUEST_MILLI;
	cr_expect_eq(names(&p, &w, n), 0);
}

Test(diagnose, quantization_fit_picks_the_widest_format_that_fits)
{
	struct pool_spec p = pool_of("A100-40GB");
	struct workload_spec w = pod_of(0);
	w.model = catalog_model("llama-2-13b");
	w.quantization = QUANT_FP16;
	w.vram_bytes = footprint_weights_bytes(w.model, QUANT_FP16) + FOOTPRINT_OVERHEAD_BYTES;
	enum quant q;
	double vram, freed;
	cr_assert(diagnose_quant_fit(&p, &w, 2, &q, &vram, &freed));
	cr_expect_eq(q, QUANT_INT8);
	cr_expect_float_eq(freed,
			   footprint_weights_bytes(w.model, QUANT_FP16) -
				   footprint_weights_bytes(w.model, QUANT_INT8),
			   1);
	cr_expect_float_eq(vram, w.vram_bytes - freed, 1);
	cr_assert(diagnose_quant_fit(&p, &w, 4, &q, &vram, &freed), "int4: 4 x 8.3 GiB");
	cr_expect_eq(q, QUANT_INT4);
	cr_expect_not(diagnose_quant_fit(&p, &w, 8, &q, &vram, &freed));
	w.quantization = QUANT_INT4;
	cr_expect_not(diagnose_quant_fit(&p, &w, 1, &q, &vram, &freed), "nothing narrower");
	w.model = NULL;
	cr_expect_not(diagnose_quant_fit(&p, &w, 1, &q, &vram, &freed), "no model, no format");
}

/* --- the findings table ---------------------------------------------------- */

Test(diagnose, findings_are_written_and_read_back_in_rank_order)
{
	run("scenarios/placement.yaml", NULL, 0);
	char path[] = "/tmp/gpuplan-diagnose-XXXXXX";
	cr_assert_not_null(mkdtemp(path));
	char db[96];
	snprintf(db, sizeof db, "%s/f.db", path);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	int64_t id;
	cr_assert_eq(store_open(db, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_write_run(st, sc, &r, &id, &err), GP_OK, "%s", err.msg);
	struct finding *f;
	size_t n;
	cr_assert_eq(store_read_findings(st, id, &f, &n, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(n, r.n_findings);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(f[i].rank, (int)i + 1);
		cr_expect_eq(f[i].step, r.findings[i].step);
		cr_expect_str_eq(f[i].text, r.findings[i].text);
		cr_expect_str_eq(f[i].evidence, r.findings[i].evidence);
	}
	store_free_findings(f, n);
	store_close(st);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", path);
	cr_expect_eq(system(cmd), 0);
}

/* scenarios/quickstart.yaml: eval has no deadline and queues (p95 1252 s)
 * beside finetune, whose deadlines are all met.  The scenario's goal is its
 * deadlines, so eval waits as planned: no finding (a workload's own capacity
 * finding once asked it for queue p95 within a minute). */
Test(diagnose, a_workload_without_a_deadline_queues_as_planned_beside_met_deadlines)
{
	/* eval's pods do not preempt here, so they queue (with preemption they
	 * evict finetune's and wait 30 s, their victims' grace period). */
	const char *sets[] = {"workloads.eval.preemption_policy=Never"};
	run("scenarios/quickstart.yaml", sets, 1);
	cr_expect_gt(named_metric(&r, "eval", "queue_time_p95_s"), 60);
	cr_expect_eq(named_metric(&r, "all", "deadline_met_pct"), 100);
	cr_expect_eq(r.n_findings, 0, "%s", r.n_findings ? r.findings[0].text : "");
}

/* tests/fixtures/diagnose/restarts.yaml: a 6h job evicted by its 5h window
 * every day restarts from zero; the run stalls at the 200th eviction.  The
 * cause is the missing checkpoint, not capacity (it said "capacity: ... a
 * larger pool would").  Its allocations last 1,000 h over 201 attempts
 * (4h58m30s), a quarter of that is 1h14m, and the readable interval under it
 * is 1h; with it the job keeps day 1's 5h and ends at 13:00 on day 2. */
Test(diagnose, a_job_that_loses_its_work_to_evictions_needs_a_checkpoint)
{
	run("tests/fixtures/diagnose/restarts.yaml", NULL, 0);
	cr_assert_str_eq(r.status, "stalled");
	cr_assert_geq(r.n_findings, 1);
	cr_expect_eq(r.findings[0].kind, KIND_RESTARTS, "%s", r.findings[0].text);
	EXPECT_FINDING(0, "application", "eval loses its work to evictions",
		       "held their GPUs 4h58m30s on average", "less than the 6h a job needs",
		       "without a checkpoint", "a checkpoint every 1h would keep the work",
		       "200 evictions of 1 job, 1 unfinished; checkpoint none; the run ended "
		       "stalled");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect_neq(r.findings[i].kind, KIND_CAPACITY, "%s", r.findings[i].text);
	cr_assert_eq(r.findings[0].n_fixes, 1);
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].key, "workloads.eval.checkpoint");
	cr_expect_str_eq(r.findings[0].fixes[0].sets[0].value, "3600s");
	cleanup();
	run("tests/fixtures/diagnose/restarts.yaml",
	    (const char *const[]){"workloads.eval.checkpoint=3600s"}, 1);
	cr_expect_str_eq(r.status, "ok");
	cr_expect_eq(r.jobs[0].end, SIM_DAY + 13 * SIM_HOUR, "day 2, 13:00");
	cr_expect_eq(r.n_findings, 0, "%s", r.n_findings ? r.findings[0].text : "");
}

/* Findings are judged on the windows that had work, not on the whole span:
 * the same 4-hour scenario run to its natural end, over 24 h and over 72 h
 * (quiet hours after the work) gives the same first finding.  The 5 %
 * pending share was of the whole span: over 72 h the wait fell under it
 * and the allocation lock read as capacity. */
static void same_first_finding(const char *path, enum finding_kind kind)
{
	static const char *const spans[] = {NULL, "horizon=24h", "horizon=72h"};
	for (size_t i = 0; i < 3; i++) {
		run(path, spans[i] ? &spans[i] : NULL, spans[i] ? 1 : 0);
		cr_assert_geq(r.n_findings, 1, "%s over %s", path,
			      spans[i] ? spans[i] : "its span");
		cr_expect_eq(r.findings[0].kind, kind, "%s over %s: %s", path,
			     spans[i] ? spans[i] : "its span", r.findings[0].text);
		cleanup();
	}
}

Test(diagnose, a_quiet_tail_does_not_average_a_finding_away)
{
	same_first_finding("tests/fixtures/diagnose/allocation.yaml", KIND_SHARING);
	same_first_finding("tests/fixtures/diagnose/memory.yaml", KIND_VRAM_FULL);
	same_first_finding("tests/fixtures/diagnosis/sharing.yaml", KIND_SHARING);
}

/* 40 GiB pods that may run anywhere are OOM-killed on L4s (24 GiB) while
 * H100s hold them (tests/fixtures/diagnosis/vram-small-type.yaml): the
 * memory finding keeps them on the types that hold them, by gpu_spec, the
 * way a nodeSelector on the device plugin's nvidia.com/gpu.product label
 * does.  Where the small pool has the same type with less memory
 * (gpu_memory, as GFD reports it), a type cannot keep them off it: no such
 * fix. */
Test(diagnose, pods_killed_on_a_small_gpu_type_are_kept_on_the_types_that_hold_them)
{
	run("tests/fixtures/diagnosis/vram-small-type.yaml", NULL, 0);
	EXPECT_FINDING(0, "memory", "pool l4", "OOM-killed",
		       "keeping the pods on the GPU types of other pools that hold them");
	const struct finding *f = &r.findings[0];
	cr_assert_eq(f->n_fixes, 1);
	cr_expect_str_eq(f->fixes[0].label, "the pods that overflow l4 on GPUs that hold them");
	cr_assert_eq(f->fixes[0].n_sets, 1);
	cr_expect_str_eq(f->fixes[0].sets[0].key, "workloads.infer-batch.gpu_spec");
	cr_expect_str_eq(f->fixes[0].sets[0].value, "[H100-80GB]");
	cleanup();

	const char *same_type[] = {"pools.l4.gpu=H100-80GB", "pools.l4.gpu_memory=24GiB"};
	run("tests/fixtures/diagnosis/vram-small-type.yaml", same_type, 2);
	EXPECT_FINDING(0, "memory", "pool l4", "OOM-killed", "a GPU with more memory would");
	cr_expect_eq(r.findings[0].n_fixes, 0);
}

/* Free GPUs too small for a workload's pods are no capacity for it
 * (tests/fixtures/diagnose/free-small-gpus.yaml): 70 GiB pods wait while
 * L40S GPUs (48 GiB) are free, and where they land there they are
 * OOM-killed.  Their wait is not fragmentation (the free GPUs sum to a
 * job's four but hold none of its pods), nor priority (what starts there
 * takes nothing they could use, and their wait holds the kills' back-off):
 * the memory finding names the cause, first. */
Test(diagnose, free_gpus_too_small_for_the_pods_are_no_capacity_for_them)
{
	run("tests/fixtures/diagnose/free-small-gpus.yaml", NULL, 0);
	EXPECT_FINDING(0, "memory", "pool l40s", "OOM-killed",
		       "keeping the pods on the GPU types of other pools that hold them");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_expect(r.findings[i].kind != KIND_FRAGMENTATION &&
				  r.findings[i].kind != KIND_PRIORITY,
			  "finding %zu is of kind %d", i, r.findings[i].kind);
}
