/*
 * test_advise_size.c - advise sizes an inference service alone in its pool
 * (advise_size.c): the first cut on every catalog GPU type, the promising
 * types searched from it, and each answer the full bisection's; an
 * over-provisioned H100 service moves to one L40S, a service under a
 * tight TTFT bound finds nothing cheaper than its own type.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[65536], out2[4096];

TestSuite(advise_size, .init = scratch_make, .fini = scratch_remove, .timeout = 300);

/* The line of the GPU-type table that starts with gpu (then a space). */
static const char *type_line(const char *gpu)
{
	char want[64];
	snprintf(want, sizeof want, "\n%s ", gpu);
	const char *at = strstr(out, "\nGPU types for chat");
	cr_assert_not_null(at, "%s", out);
	at = strstr(at, want);
	cr_assert_not_null(at, "%s: no row\n%s", gpu, out);
	return at + 1;
}

/* A type's simulated fewest replicas (the column after the first cut's
 * tokens per joule), or -1 when it was not searched ("-"). */
static int simulated(const char *line)
{
	const char *col = line + 54;
	while (*col == ' ')
		col++;
	return *col == '-' ? -1 : atoi(col);
}

/* The full bisection's fewest replicas of chat meeting its goal on gpu, with
 * 8 nodes to hold them (the bill aside, the nodes do not change the run). */
static int bisection(const char *scenario, const char *gpu, int lo)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan search %s --db %s/b-%s.db --min --vary workloads.chat.replicas "
		 "--lo %d --hi 8 --until 'chat.goal_met >= 1' --set pools.serve.gpu=%s --set "
		 "pools.serve.nodes=8 --no-first-cut",
		 scenario, dir, gpu, lo, gpu);
	cr_assert_eq(capture(cmd, out2, sizeof out2), 0, "%s", out2);
	const char *eq = strrchr(out2, '=');
	cr_assert_not_null(eq, "%s", out2);
	return atoi(eq + 1);
}

/* A service the scenario runs on two replicas or more keeps two: one replica
 * would hold its load, but it is no redundancy (advise_size.c). */
Test(advise_size, an_over_provisioned_h100_service_moves_to_two_l40s)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan advise scenarios/fleet-overprovisioned.yaml --db %s/a.db", dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	/* 3 requests/s of 200 output tokens: 2.16 M tokens an hour.  One H100 at
	 * the pool's $4.00: $4.00/h, 4 / 2.16 = $1.852 per million tokens; one
	 * L40S at the catalog's $1.80: $0.833 (docs/gpus.md, prices). */
	cr_assert(!strncmp(type_line("H100-80GB"), "H100-80GB    1        1    1     4.00   1.852",
			   45),
		  "%s", type_line("H100-80GB"));
	cr_assert(!strncmp(type_line("L40S"), "L40S         1        1    1     1.80   0.833", 45),
		  "%s", type_line("L40S"));
	/* every catalog type has a row, and only the promising are simulated:
	 * the H100 itself and the three cheapest others whose first cut costs at
	 * most 1.25 x its $4.00 an hour and fits a one-GPU node (the A10 at
	 * $1.50, the L40S at $1.80, the A100-80GB at $2.21; not the T4 pair, at
	 * TP 2, nor the A100-40GB at $4.10, the fourth) */
	cr_assert(strstr(type_line("MI300X"), "MI300X"));
	cr_assert(strstr(type_line("A10G"), "A10G"));
	cr_expect_eq(simulated(type_line("A100-40GB")), -1, "%s", type_line("A100-40GB"));
	cr_expect_eq(simulated(type_line("T4")), -1, "%s", type_line("T4"));
	cr_expect_eq(simulated(type_line("B200")), -1, "%s", type_line("B200"));
	/* the recommendation: the cheapest fleet of two or more that meets the goal */
	cr_assert(strstr(out, "recommendation: chat on L40S: 2 replicas, pool serve at 2 nodes"),
		  "%s", out);
	cr_assert(strstr(out, "--set 'pools.serve.gpu=L40S' --set "
			      "'pools.serve.price.gpu_hour=1.8' --set 'workloads.chat.replicas=2' "
			      "--set 'pools.serve.nodes=2'"),
		  "%s", out);
	/* each searched answer is the full bisection's from 2: the A10's first
	 * cut (2) is low, and its search walks up to 4 */
	static const struct {
		const char *gpu;
		int replicas;
	} searched[] = {{"H100-80GB", 2}, {"L40S", 2}, {"A100-80GB", 2}, {"A10", 4}};
	for (size_t i = 0; i < sizeof searched / sizeof *searched; i++) {
		int n = simulated(type_line(searched[i].gpu));
		cr_expect_eq(n, searched[i].replicas, "%s: %d\n%s", searched[i].gpu, n,
			     type_line(searched[i].gpu));
		cr_expect_eq(bisection("scenarios/fleet-overprovisioned.yaml", searched[i].gpu, 2),
			     searched[i].replicas, "%s", searched[i].gpu);
	}
}

Test(advise_size, under_a_tight_bound_nothing_cheaper_than_the_h100_meets)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "bin/gpuplan advise scenarios/fleet-tight.yaml --db %s/a.db",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	/* Llama-3-8B's p99 prompt (lognormal mean 1000, sigma 0.8: 4,429 tokens)
	 * alone takes more than 300 ms to prefill on an L40S or an A100 */
	cr_assert(
		strstr(type_line("L40S"), "the tail prompt's prefill alone exceeds the TTFT bound"),
		"%s", out);
	cr_assert(strstr(type_line("A100-80GB"), "the tail prompt's prefill alone exceeds"), "%s",
		  out);
	/* the H100 fleet grows to 3 (the bisection's answer too) */
	cr_assert(
		strstr(out, "chat at 3 replicas, pool serve at 3 nodes (fewest meeting its goal)"),
		"%s", out);
	cr_expect_eq(simulated(type_line("H100-80GB")), 3, "%s", type_line("H100-80GB"));
	cr_expect_eq(bisection("scenarios/fleet-tight.yaml", "H100-80GB", 1), 3);
	cr_assert_null(strstr(out, "chat on L40S"), "%s", out);
	cr_assert_null(strstr(out, "recommendation: chat on"), "%s", out);
}

Test(advise_size, a_misconfigured_server_is_not_sized)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan advise tests/fixtures/diagnosis/tokenizer.yaml --db %s/a.db", dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	/* the tokenizer binds it: a size measured with one worker would measure
	 * the worker, so the finding's fix comes first and no type is compared */
	cr_assert_null(strstr(out, "GPU types for"), "%s", out);
	cr_assert(strstr(out, "recommendation: 3 tokenizer workers for chat"), "%s", out);
}
