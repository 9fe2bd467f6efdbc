/*
 * test_reasons.c - kube-scheduler's pending messages and the pending time
 * they account (reasons.h), worked by hand.  The message format is
 * kube-scheduler's FitError.Error() (pkg/scheduler/framework/types.go: each
 * reason "COUNT REASON", sorted with sort.Strings, joined by ", ", closed by
 * "."), with DefaultPreemption's PostFilter message after it.
 */
#include "gpuplan/reasons.h"

#include <criterion/criterion.h>
#include <string.h>

#define GPU   "Insufficient nvidia.com/gpu"
#define TAINT "node(s) had untolerated taint {spot: true}"

/* Sorted as whole strings, byte by byte: "10 Insufficient memory" before "2
 * Insufficient cpu" ('1' < '2'), though cpu sorts before memory; a zero count
 * is left out. */
Test(reasons, counts_and_reasons_sort_as_one_string)
{
	const char *texts[] = {"Insufficient cpu", "Insufficient memory", GPU};
	int32_t counts[] = {2, 10, 0};
	char buf[256];
	size_t n = reasons_format(buf, sizeof buf, 12, texts, counts, 3);
	const char *want = "0/12 nodes are available: 10 Insufficient memory, 2 Insufficient cpu.";
	cr_assert_str_eq(buf, want);
	cr_assert_eq(n, strlen(want));
	/* too small a buffer: cut, and the length it needs returned */
	char small[16];
	cr_assert_eq(reasons_format(small, sizeof small, 12, texts, counts, 3), strlen(want));
	cr_assert_eq(strlen(small), sizeof small - 1);
}

/* With the PostFilter: of 3 nodes, 1 failed a taint (UnschedulableAndUnresolvable:
 * "not helpful"), 2 were short of GPUs (no victims gpuplan would evict). */
Test(reasons, the_fit_error_carries_defaultpreemptions_verdict)
{
	const char *texts[] = {GPU, TAINT};
	uint8_t kinds[] = {PEND_RESOURCE, PEND_TAINT};
	int32_t counts[] = {2, 1};
	char buf[512];
	reasons_format_fit_error(buf, sizeof buf, 3, texts, kinds, counts, 2);
	cr_assert_str_eq(buf, "0/3 nodes are available: 1 " TAINT ", 2 " GPU ". preemption: 0/3 "
			      "nodes are available: 1 " REASONS_NOT_HELPFUL
			      ", 2 " REASONS_NO_VICTIMS "..");
	/* No node at all: ErrNoNodesAvailable (pkg/scheduler/schedule_one.go), no
	 * PostFilter. */
	reasons_format_fit_error(buf, sizeof buf, 0, texts, kinds, (int32_t[]){0, 0}, 2);
	cr_assert_str_eq(buf, "no nodes available to schedule pods");
}

Test(reasons, only_filters_no_eviction_changes_are_unresolvable)
{
	cr_assert(reasons_unresolvable(PEND_TAINT));
	cr_assert(reasons_unresolvable(PEND_AFFINITY));
	cr_assert(reasons_unresolvable(PEND_VRAM));
	cr_assert(reasons_unresolvable(PEND_WINDOW));
	cr_assert_not(reasons_unresolvable(PEND_RESOURCE));
	cr_assert_not(reasons_unresolvable(PEND_CPU));
	cr_assert_not(reasons_unresolvable(PEND_SPREAD));
}

/* The accounting, by hand.  Workload train (class 0, 2 pods a job): jobs 0 and
 * 1 join at 0 and fail at 0 with M1 (2 short of GPUs, 1 tainted); job 0
 * starts at 10 s; the class fails again at 20 s with M2 (3 short).  Workload
 * eval (class 1, 1 pod): job 2 joins at 0, fails on quota Q at 5 s.  The run
 * ends at 50 s.
 *   M1: job 0 0-10 s x 2 pods = 20, job 1 0-20 s x 2 = 40: 60 pod-s, 4 pods
 *   Q:  job 2 5-50 s x 1 = 45 pod-s, 1 pod (no reason before its attempt)
 *   M2: job 1 20-50 s x 2 = 60 pod-s, 2 pods
 * Rows: all (M1, Q, M2 in order of appearance), then train (M1, M2), eval (Q). */
Test(reasons, pending_time_is_pod_seconds_per_message_and_workload)
{
	const char *slot_texts[] = {GPU, TAINT};
	const uint8_t slot_kinds[] = {PEND_RESOURCE, PEND_TAINT};
	struct reasons r;
	reasons_init(&r, 2, 3, slot_texts, slot_kinds, 2);
	reasons_join(&r, 0, 0);
	reasons_join(&r, 0, 1);
	reasons_join(&r, 1, 2);
	int32_t m1 = reasons_fail(&r, 0, 0, 2, 2, (int32_t[]){2, 1}, 0, 1, 0);
	cr_assert(reasons_blocked(&r, 0, 0, 1, 2), "nothing changed since the attempt");
	cr_assert_not(reasons_blocked(&r, 0, 0, 2, 2), "capacity changed");
	cr_assert_not(reasons_blocked(&r, 0, 0, 1, 3), "a job joined");
	int32_t q = reasons_fail_text(&r, 1, 1, 1, 1, "quota", 2, 1, 5 * SIM_SECOND);
	reasons_leave(&r, 0, 10 * SIM_SECOND);
	int32_t m2 = reasons_fail(&r, 0, 0, 2, 1, (int32_t[]){3, 0}, 1, 2, 20 * SIM_SECOND);
	cr_assert_eq(m1, 0);
	cr_assert_eq(q, 1);
	cr_assert_eq(m2, 2);
	cr_assert_str_eq(reasons_text(&r, m2),
			 "0/3 nodes are available: 3 " GPU
			 ". preemption: 0/3 nodes are available: 3 " REASONS_NO_VICTIMS "..");
	cr_assert_eq(reasons_fail(&r, 0, 0, 2, 1, (int32_t[]){3, 0}, 1, 2, 20 * SIM_SECOND), m2,
		     "equal text, equal id");
	reasons_finish(&r, 50 * SIM_SECOND);
	cr_assert_eq(reasons_job_message(&r, 0), m1, "its last reason before it started");
	cr_assert_eq(reasons_job_message(&r, 1), m2);
	cr_assert_str_eq(reasons_of_job(&r, 2), "quota");

	struct workload_spec ws[2] = {{.name = "train"}, {.name = "eval"}};
	struct scenario sc = {.workloads = ws, .n_workloads = 2};
	struct results out;
	results_init(&out);
	reasons_write(&r, &sc, &out);
	struct {
		const char *scope, *reason;
		double seconds;
		int64_t pods;
		uint32_t kinds;
	} want[] = {
		{"all", reasons_text(&r, m1), 60, 4,
		 PEND_BIT(PEND_RESOURCE) | PEND_BIT(PEND_TAINT)},
		{"all", "quota", 45, 1, PEND_BIT(PEND_QUOTA)},
		{"all", reasons_text(&r, m2), 60, 2, PEND_BIT(PEND_RESOURCE)},
		{"train", reasons_text(&r, m1), 60, 4,
		 PEND_BIT(PEND_RESOURCE) | PEND_BIT(PEND_TAINT)},
		{"train", reasons_text(&r, m2), 60, 2, PEND_BIT(PEND_RESOURCE)},
		{"eval", "quota", 45, 1, PEND_BIT(PEND_QUOTA)},
	};
	cr_assert_eq(out.n_pending_reasons, 6);
	for (size_t i = 0; i < 6; i++) {
		const struct pending_reason *p = &out.pending_reasons[i];
		cr_expect_str_eq(p->scope, want[i].scope, "row %zu", i);
		cr_expect_str_eq(p->reason, want[i].reason, "row %zu", i);
		cr_expect_float_eq(p->pending_seconds, want[i].seconds, 1e-9, "row %zu", i);
		cr_expect_eq(p->pods, want[i].pods, "row %zu", i);
		cr_expect_eq(p->kinds, want[i].kinds, "row %zu", i);
	}
	results_free(&out);
	reasons_free(&r);
}
