/*
 * test_collect.c - the timeseries windows: an explicit step is kept, and
 * without one the step grows with the span (at most COLLECT_MAX_WINDOWS
 * windows per scope) while the integrals stay those of the gauges.
 *
 * The collector is driven directly: one pool of one GPU, one workload, and
 * the allocation gauge moved by hand, so every window mean is known.
 */
#include "gpuplan/collect.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static struct pool_spec pool = {.name = "p", .nodes = 1, .gpus_per_node = 1};
static struct workload_spec workload = {.name = "w"};
static struct scenario sc = {
	.pools = &pool, .n_pools = 1, .workloads = &workload, .n_workloads = 1};
static struct results r;
static struct collect c;

static void begin(sim_time step, sim_time first)
{
	sc.output.step = step;
	results_init(&r);
	collect_init(&c, &sc, &r);
	collect_start(&c, first);
}

static void end(void)
{
	collect_free(&c);
	results_free(&r);
}

/* The allocation integral of scope `all` over the rows, in GPU-µs. */
static double allocated_integral(sim_time span_end)
{
	double sum = 0;
	for (size_t i = 0; i < r.n_ts; i += 3) {
		sim_time t_end = r.ts[i].t + r.step < span_end ? r.ts[i].t + r.step : span_end;
		sum += r.ts[i].gpus_allocated * (double)(t_end - r.ts[i].t);
	}
	return sum;
}

/* 20 days at an explicit 5m: 20 x 288 = 5,760 windows, none merged. */
Test(collect, an_explicit_step_is_never_changed)
{
	begin(5 * SIM_MINUTE, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, 0);
	collect_finish(&c, 20 * SIM_DAY);
	cr_assert_eq(r.step, 5 * SIM_MINUTE);
	cr_assert_eq(r.n_ts, 5760 * 3);
	end();
}

/*
 * 20 days without a step: 5m gives 5,760 windows, too many; 15m gives
 * 1,920 <= 2,000.  One GPU is allocated for the first 10 days, so windows
 * before day 10 have mean 1 and the others 0; capacity is 1 throughout.
 */
Test(collect, without_a_step_twenty_days_come_out_in_fifteen_minute_windows)
{
	begin(0, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, -1, 10 * SIM_DAY);
	collect_finish(&c, 20 * SIM_DAY);
	cr_assert_eq(r.step, 15 * SIM_MINUTE);
	cr_assert_eq(r.n_ts, 1920 * 3);
	for (size_t k = 0; k < 1920; k++) {
		const struct ts_row *row = &r.ts[3 * k];
		cr_assert_eq(row->t, (sim_time)k * 15 * SIM_MINUTE);
		cr_assert_str_eq(row->scope, "all");
		cr_assert_str_eq(r.ts[3 * k + 1].scope, "p");
		cr_assert_str_eq(r.ts[3 * k + 2].scope, "w");
		cr_assert_float_eq(row->gpus_capacity, 1, 1e-12);
		cr_assert_float_eq(row->gpus_allocated, k < 960 ? 1 : 0, 1e-12, "window %zu", k);
	}
	end();
}

/* A century is past 2,000 weeks: 4-week windows, 1,304 of them, and the
 * integral of a GPU allocated throughout is the span's. */
Test(collect, a_century_comes_out_in_four_week_windows)
{
	sim_time span = 36500 * SIM_DAY;
	begin(0, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, 0);
	collect_finish(&c, span);
	cr_assert_eq(r.step, 28 * SIM_DAY);
	cr_assert_eq(r.n_ts, 1304 * 3); /* 36,500 days = 1,303 x 28 days and 16 */
	cr_assert_float_eq(allocated_integral(span), (double)span, 1e-9 * (double)span);
	end();
}

/* 25 years (an M/M/1 of 200k jobs at 0.9/h): 1,305 weekly windows. */
Test(collect, twenty_five_years_come_out_in_weeks)
{
	begin(0, 0);
	collect_finish(&c, 25 * 365 * SIM_DAY);
	cr_assert_eq(r.step, 7 * SIM_DAY);
	cr_assert_eq(r.n_ts, 1304 * 3); /* 9,125 days = 1,303 weeks and 4 days */
	end();
}

/*
 * The first arrival at 0:07 opens the 1m window [0:07, 0:08), which merges
 * into the 5m window [0:05, 0:10); its part before 0:07 holds the values
 * before the arrival.  After merging into 15m
 * the first window is [0:00, 0:15): the GPU allocated from 0:07 gives a mean
 * of 8/15 there.  The last 15m window holds the rest up to the end, with the
 * GPU allocated throughout; the integral is the allocation's: end - 0:07.
 */
static void first_and_last(sim_time last, size_t windows, sim_time last_len)
{
	sim_time first = 7 * SIM_MINUTE;
	begin(0, first);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, first);
	collect_finish(&c, last);
	cr_assert_eq(r.step, 15 * SIM_MINUTE);
	size_t n = r.n_ts / 3;
	cr_assert_eq(n, windows);
	cr_assert_eq(r.ts[0].t, 0);
	cr_assert_float_eq(r.ts[0].gpus_allocated, 8.0 / 15.0, 1e-12);
	cr_assert_eq(r.ts[3 * (n - 1)].t, last - last_len);
	cr_assert_float_eq(r.ts[3 * (n - 1)].gpus_allocated, 1, 1e-12);
	cr_assert_float_eq(allocated_integral(last), (double)(last - first), 1e-9 * (double)last);
	end();
}

/* Ending at minute 10,012: after the 1m windows merged (at minute 2,008),
 * windows of 5m from minute 5 reach 2,001 at minute
 * 10,010 and merge while the run goes on; 15m windows up to minute 10,005
 * (667 of them) and the 7 minutes after. */
Test(collect, merging_during_the_run_keeps_the_first_and_last_windows)
{
	first_and_last(10012 * SIM_MINUTE, 668, 7 * SIM_MINUTE);
}

/* Ending at minute 10,007: 2,000 full 5m windows, and the last 2 minutes
 * make one too many, so the merge happens as the run ends. */
Test(collect, merging_as_the_run_ends_keeps_the_last_partial_window)
{
	first_and_last(10007 * SIM_MINUTE, 668, 2 * SIM_MINUTE);
}

/* A day fits 2,000 windows of 1m, the finest step (1,440 of them). */
Test(collect, a_day_comes_out_in_minutes)
{
	begin(0, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, -1, 90 * SIM_MINUTE);
	collect_finish(&c, SIM_DAY);
	cr_assert_eq(r.step, SIM_MINUTE);
	cr_assert_eq(r.n_ts, 1440 * 3);
	cr_assert_float_eq(r.ts[3 * 89].gpus_allocated, 1, 1e-12);
	cr_assert_float_eq(r.ts[3 * 90].gpus_allocated, 0, 1e-12);
	end();
}

/* 2,000 windows of 5m (about a week) are too many at 1m and just fit at 5m. */
Test(collect, two_thousand_five_minute_windows_stay_five_minutes)
{
	begin(0, 0);
	collect_add(&c, 0, GAUGE_ALLOCATED, 1, 0);
	collect_finish(&c, 2000 * 5 * SIM_MINUTE);
	cr_assert_eq(r.step, 5 * SIM_MINUTE);
	cr_assert_eq(r.n_ts, 2000 * 3);
	end();
}

/*
 * Merged windows keep the KV-cache usage a ratio of integrals and add up
 * preemptions.  Over 20 days (15m windows, as above) 4 KV blocks serve
 * throughout; 1 is used until day 10 + 5m, then 3.  The window [10d,
 * 10d + 15m) used 1 x 5 + 3 x 10 = 35 block-minutes of 4 x 15 = 60.  Three
 * preemptions at 10d + 1m, + 6m and + 14m all fall into that window.
 */
Test(collect, merged_windows_keep_kv_usage_and_preemptions)
{
	sim_time t = 10 * SIM_DAY;
	workload.kind = WORKLOAD_INFERENCE; /* KV gauges move in a run that serves */
	begin(0, 0);
	collect_add(&c, 0, GAUGE_KV_TOTAL, 4, 0);
	collect_add(&c, 0, GAUGE_KV_USED, 1, 0);
	collect_preempted(&c, 0, t + SIM_MINUTE);
	collect_add(&c, 0, GAUGE_KV_USED, 2, t + 5 * SIM_MINUTE);
	collect_preempted(&c, 0, t + 6 * SIM_MINUTE);
	collect_preempted(&c, 0, t + 14 * SIM_MINUTE);
	collect_finish(&c, 20 * SIM_DAY);
	cr_assert_eq(r.step, 15 * SIM_MINUTE);
	size_t k = 960; /* the window starting at day 10 */
	cr_assert_eq(r.ts[3 * k].t, t);
	cr_assert_float_eq(r.ts[3 * (k - 1)].kv_cache_usage, 0.25, 1e-12);
	cr_assert_float_eq(r.ts[3 * k].kv_cache_usage, 35.0 / 60.0, 1e-12);
	cr_assert_float_eq(r.ts[3 * (k + 1)].kv_cache_usage, 0.75, 1e-12);
	cr_assert_float_eq(r.ts[3 * k].preemptions, 3, 1e-12);
	cr_assert_float_eq(r.ts[3 * (k - 1)].preemptions + r.ts[3 * (k + 1)].preemptions, 0, 1e-12);
	cr_assert(isnan(r.ts[1].kv_cache_usage)); /* the pool scope serves no KV cache */
	end();
	workload.kind = WORKLOAD_BATCH;
}
