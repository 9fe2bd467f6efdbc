/*
 * test_contention.c - the slowdown and activity formulas of contention.h,
 * each case worked by hand from the formulas in its header comment.
 */
#include "gpuplan/contention.h"

#include <criterion/criterion.h>

#define EPS 1e-12

static struct tenant pod(double f, double s, double share)
{
	return (struct tenant){.job = 0, .units = 1, .f = f, .s = s, .share = share};
}

Test(contention, exclusive_never_slows)
{
	struct sharing sh = {.mode = SHARING_EXCLUSIVE};
	struct tenant t[] = {pod(1, 1, 1)};
	cr_assert_float_eq(contention_slow(&sh, t, 1, &t[0]), 1, EPS);
}

/* Time-slicing serializes kernels: slow = max(1, sum f) * (1 + overhead) with
 * two or more pods.  f 0.6 + 0.8 = 1.4, x 1.05 = 1.47; f 0.3 + 0.4 = 0.7
 * under 1, so only the context switch: 1.05; alone: 1, no overhead. */
Test(contention, time_slicing_serializes_kernels_with_a_context_switch_cost)
{
	struct sharing sh = {.mode = SHARING_TIME_SLICING, .overhead = 0.05};
	struct tenant busy[] = {pod(0.6, 1, 1), pod(0.8, 1, 1)};
	cr_assert_float_eq(contention_slow(&sh, busy, 2, &busy[0]), 1.47, EPS);
	cr_assert_float_eq(contention_slow(&sh, busy, 2, &busy[1]), 1.47, EPS);
	struct tenant light[] = {pod(0.3, 1, 1), pod(0.4, 1, 1)};
	cr_assert_float_eq(contention_slow(&sh, light, 2, &light[0]), 1.05, EPS);
	cr_assert_float_eq(contention_slow(&sh, busy, 1, &busy[0]), 1, EPS);
}

/* A MIG instance is isolated: only its own SM need beyond its instance slows
 * it.  An A100 1g holds 14 of 108 SMs: s = 0.5 needs 54 SMs, 54 / 14 =
 * 3.857142857...; s = 0.1 needs 10.8 SMs, fewer than 14: 1. */
Test(contention, mig_slows_only_what_exceeds_the_instance)
{
	struct sharing sh = {.mode = SHARING_MIG};
	struct tenant t[] = {pod(1, 0.5, 14.0 / 108), pod(1, 0.1, 14.0 / 108)};
	cr_assert_float_eq(contention_slow(&sh, t, 2, &t[0]), 54.0 / 14, EPS);
	cr_assert_float_eq(contention_slow(&sh, t, 2, &t[1]), 1, EPS);
}

/* MPS: slow = max(1, sum f*min(s, share)) * max(1, s / share).  Two
 * compute-bound pods (f = s = 1) on MPS x2: sum 0.5 + 0.5 = 1, s / share = 2:
 * 2x, not 4x (the cap enters once).  Three on x3: sum 1, 1 / (1/3) = 3. */
Test(contention, mps_caps_each_pod_at_its_share_once)
{
	struct sharing sh = {.mode = SHARING_MPS, .replicas = 2};
	struct tenant two[] = {pod(1, 1, 0.5), pod(1, 1, 0.5)};
	cr_assert_float_eq(contention_slow(&sh, two, 2, &two[0]), 2, EPS);
	struct tenant three[] = {pod(1, 1, 1.0 / 3), pod(1, 1, 1.0 / 3), pod(1, 1, 1.0 / 3)};
	cr_assert_float_eq(contention_slow(&sh, three, 3, &three[2]), 3, EPS);
	/* A small pod beside a big one: sum 0.5 x 0.25 + 1 x 0.5 = 0.625 under 1;
	 * the small one's s 0.25 fits its share 0.5 (1), the big one's 1 / 0.5 = 2. */
	struct tenant mixed[] = {pod(0.5, 0.25, 0.5), pod(1, 1, 0.5)};
	cr_assert_float_eq(contention_slow(&sh, mixed, 2, &mixed[0]), 1, EPS);
	cr_assert_float_eq(contention_slow(&sh, mixed, 2, &mixed[1]), 2, EPS);
}

/* Fractional shares follow MPS's formula; a whole GPU (share 1) in a
 * fractional pool is never slowed, whatever the others use. */
Test(contention, fractional_is_capped_like_mps_and_a_whole_gpu_is_not)
{
	struct sharing sh = {.mode = SHARING_FRACTIONAL};
	/* milli 250: share 0.25, s 0.5: 0.5 / 0.25 = 2; sum 1 x 0.25 + 1 x 0.75 = 1 */
	struct tenant t[] = {pod(1, 0.5, 0.25), pod(1, 1, 0.75)};
	cr_assert_float_eq(contention_slow(&sh, t, 2, &t[0]), 2, EPS);
	/* s 1 over share 0.75: 4/3 */
	cr_assert_float_eq(contention_slow(&sh, t, 2, &t[1]), 4.0 / 3, EPS);
	struct tenant whole[] = {pod(1, 1, 1), pod(1, 1, 1)};
	cr_assert_float_eq(contention_slow(&sh, whole, 2, &whole[0]), 1, EPS);
}

/* Progress rate 1 / ((1 - f) + f x slow): f 0.5, slow 2: 1 / 1.5 = 2/3;
 * f 0.25, slow 3: 1 / (0.75 + 0.75) = 2/3; slow 1: exactly 1. */
Test(contention, only_the_gpu_part_of_the_work_is_slowed)
{
	cr_assert_float_eq(contention_rate(0.5, 2), 2.0 / 3, EPS);
	cr_assert_float_eq(contention_rate(0.25, 3), 2.0 / 3, EPS);
	cr_assert_eq(contention_rate(0.7, 1), 1.0);
	cr_assert_float_eq(contention_rate(1, 4), 0.25, EPS);
}

/* DCGM-style activity: engine = sum f, SM = sum f x min(s, share), each capped
 * at 1.  f 0.3, 0.4 with s 0.5, 0.25 on a time-sliced GPU: engine 0.7, SM
 * 0.15 + 0.1 = 0.25.  f 0.6, 0.8, s 1: engine 1.4 and SM 1.4, both capped. */
Test(contention, activity_sums_busy_and_sm_use_capped_at_one)
{
	struct sharing sh = {.mode = SHARING_TIME_SLICING, .overhead = 0.05};
	double engine, sm;
	struct tenant light[] = {pod(0.3, 0.5, 1), pod(0.4, 0.25, 1)};
	contention_activity(&sh, light, 2, &engine, &sm);
	cr_assert_float_eq(engine, 0.7, EPS);
	cr_assert_float_eq(sm, 0.25, EPS);
	struct tenant busy[] = {pod(0.6, 1, 1), pod(0.8, 1, 1)};
	contention_activity(&sh, busy, 2, &engine, &sm);
	cr_assert_eq(engine, 1.0);
	cr_assert_eq(sm, 1.0);
	contention_activity(&sh, busy, 0, &engine, &sm);
	cr_assert_eq(engine, 0.0, "an idle GPU");
	cr_assert_eq(sm, 0.0);
}

/* A MIG instance keeps at most its share of the engines busy: two busy
 * quarter instances (f 1, s 1, share 0.25): engine 0.5, SM 0.5; one with f
 * 0.5, s 0.1: engine 0.125, SM 0.05. */
Test(contention, a_mig_instance_counts_its_share_of_the_engines)
{
	struct sharing sh = {.mode = SHARING_MIG};
	double engine, sm;
	struct tenant two[] = {pod(1, 1, 0.25), pod(1, 1, 0.25)};
	contention_activity(&sh, two, 2, &engine, &sm);
	cr_assert_float_eq(engine, 0.5, EPS);
	cr_assert_float_eq(sm, 0.5, EPS);
	struct tenant small[] = {pod(0.5, 0.1, 0.25)};
	contention_activity(&sh, small, 1, &engine, &sm);
	cr_assert_float_eq(engine, 0.125, EPS);
	cr_assert_float_eq(sm, 0.05, EPS);
}
