/*
 * test_sharing.c - whole runs on shared GPUs with exact figures: pods per GPU
 * in each mode, the contention formula's finish times, MIG slowdown, OOM
 * kills under time-slicing, and memory limits enforced at placement.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "run.h"
#include "named_metric.h"

TestSuite(sharing, .fini = cleanup);

static int started_at(sim_time t)
{
	int n = 0;
	for (size_t i = 0; i < r.n_jobs; i++)
		n += r.jobs[i].start == t;
	return n;
}

static double all(const char *name) { return named_metric(&r, "all", name); }

#define RUN(...) RUN_WITH("tests/fixtures/sharing-cases.yaml", __VA_ARGS__)

Test(sharing, pods_per_gpu_in_each_mode)
{
	RUN("pools.p.sharing=exclusive");
	cr_assert_eq(started_at(0), 1, "exclusive: one pod per GPU");
	cleanup();
	RUN("pools.p.sharing={mode: time-slicing, replicas: 4}");
	cr_assert_eq(started_at(0), 4, "time-slicing: R replicas");
	cr_assert_float_eq(all("peak_allocated_gpus"), 1, 1e-12, "4 replicas are one GPU");
	cr_assert_float_eq(all("peak_demand_gpus"), 2, 1e-12, "8 pods of 1/4 GPU");
	cleanup();
	RUN("pools.p.sharing={mode: mps, replicas: 8}");
	cr_assert_eq(started_at(0), 8, "mps: R replicas of 10 GiB each");
	cleanup();
	RUN("pools.p.sharing={mode: mig, layout: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, "
	    "1g.10gb, 1g.10gb]}",
	    "workloads.w.gpus={mig: 1g.10gb}", "workloads.w.vram=9GiB");
	cr_assert_eq(started_at(0), 7, "mig: seven 1g.10gb instances");
	cr_assert_float_eq(all("peak_allocated_gpus"), 1, 1e-12);
	cleanup();
	RUN("pools.p.sharing=fractional", "workloads.w.gpus={milli: 250}",
	    "workloads.w.vram=20GiB");
	cr_assert_eq(started_at(0), 4, "fractional: four 250-milli shares");
}

/* Two pods with f = 0.5 on a time-sliced GPU: slow = max(1, 0.5 + 0.5) x 1.05,
 * rate = 1 / (0.5 + 0.5 x 1.05) = 1 / 1.025, so an hour of work takes 3690 s. */
Test(sharing, two_time_sliced_pods_finish_when_the_formula_says)
{
	RUN("workloads.w.count=2", "workloads.w.gpu_busy=0.5");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(r.jobs[i].end, 3690 * SIM_SECOND);
	cleanup();
	/* f = 0.8: slow = 1.6 x 1.05 = 1.68, rate = 1 / (0.2 + 0.8 x 1.68) = 1 / 1.544. */
	RUN("workloads.w.count=2", "workloads.w.gpu_busy=0.8");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(r.jobs[i].end, (sim_time)llround(1.544 * 3600 * 1e6));
}

/* When a co-tenant leaves, the other speeds back up: a 2 h pod shares with a
 * 1 h pod until 3690 s (both did 1 h of work), then runs its last hour alone. */
Test(sharing, a_pod_speeds_up_when_its_co_tenant_leaves)
{
	RUN("workloads.w.count=1", "workloads.w.gpu_busy=0.5",
	    "workloads=[{name: long, arrival: {at: \"00:00\"}, duration: 2h, gpu_busy: 0.5},"
	    " {name: short, arrival: {at: \"00:00\"}, duration: 1h, gpu_busy: 0.5}]");
	cr_assert_eq(r.jobs[1].end, 3690 * SIM_SECOND);
	cr_assert_eq(r.jobs[0].end, (3690 + 3600) * SIM_SECOND);
}

/* A 1g slice of an A100 has 14 of its 108 SMs (not 1/7: the 7g instance has
 * 98; nvidia-smi mig -lgip on A100-SXM4-80GB, NVIDIA MIG User Guide
 * "Supported MIG Profiles"): a kernel that wants them all runs 108/14 =
 * 7.714x slower (before: 7x, with 7g counted as all 108). */
Test(sharing, a_mig_1g_slice_slows_a_full_gpu_kernel_by_its_sm_count)
{
	RUN("pools.p.sharing={mode: mig, layout: [1g.10gb]}", "workloads.w.gpus={mig: 1g.10gb}",
	    "workloads.w.count=1", "workloads.w.gpu_busy=1", "workloads.w.vram=5GiB");
	cr_assert_float_eq(sim_seconds(r.jobs[0].end), 3600.0 * 108 / 14, 1e-3);
	cleanup();
	/* Half of its time on the GPU: 0.5 + 0.5 x 108/14 = 4.357 hours. */
	RUN("pools.p.sharing={mode: mig, layout: [1g.10gb]}", "workloads.w.gpus={mig: 1g.10gb}",
	    "workloads.w.count=1", "workloads.w.gpu_busy=0.5", "workloads.w.vram=5GiB");
	cr_assert_float_eq(sim_seconds(r.jobs[0].end), 3600.0 * (0.5 + 0.5 * 108 / 14), 1e-3);
	cr_assert_float_eq(named_metric(&r, "all", "engine_active_pct"), 50.0 * 14 / 108, 1e-6);
}

/* The catalog's SM counts of MIG instances: 14 per slice on an A100, 7g =
 * 98 of 108 (same sources). */
Test(sharing, mig_instances_have_their_sm_counts)
{
	const struct gpu_type *a100 = catalog_gpu("A100-80GB");
	cr_assert_eq(catalog_mig_profile(a100, "1g.10gb")->sms, 14);
	cr_assert_eq(catalog_mig_profile(a100, "7g.80gb")->sms, 98);
	cr_assert_eq(a100->sm_count, 108);
	cr_assert_eq(catalog_mig_profile(catalog_gpu("A100-40GB"), "3g.20gb")->sms, 42);
	cr_assert_eq(catalog_mig_profile(catalog_gpu("H100-80GB"), "7g.80gb")->sms, 132);
	for (size_t i = 0; i < catalog_gpu_count(); i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		for (size_t k = 0; k < g->n_mig; k++)
			cr_assert(g->mig[k].sms > 0 && g->mig[k].sms <= g->sm_count, "%s %s",
				  g->name, g->mig[k].name);
	}
}

/* MPS caps each pod's SMs at 1/R (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, NVIDIA
 * k8s-device-plugin's MPS sharing): two compute-bound pods (f = s = 1) on MPS
 * x2 each get half the GPU and take 2x their exclusive hour; four on MPS x4
 * take 4x.  Before, the cap was counted twice: 4x and 16x. */
Test(sharing, mps_pods_take_r_times_their_exclusive_time_not_r_squared)
{
	RUN("pools.p.sharing={mode: mps, replicas: 2}", "workloads.w.count=2",
	    "workloads.w.gpu_busy=1", "workloads.w.sm_share=1");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(r.jobs[i].end, 2 * SIM_HOUR);
	cr_assert_float_eq(all("sm_active_pct"), 100, 1e-9);
	cleanup();
	RUN("pools.p.sharing={mode: mps, replicas: 4}", "workloads.w.count=4",
	    "workloads.w.gpu_busy=1", "workloads.w.sm_share=1");
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(r.jobs[i].end, 4 * SIM_HOUR);
	cleanup();
	/* A fraction caps the same way: 500 milli, two pods, 2x. */
	RUN("pools.p.sharing=fractional", "workloads.w.gpus={milli: 500}", "workloads.w.count=2",
	    "workloads.w.gpu_busy=1", "workloads.w.sm_share=1");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(r.jobs[i].end, 2 * SIM_HOUR);
}

/* Time-slicing does not isolate memory: two 50 GiB pods on one 80 GiB GPU. */
Test(sharing, an_overflow_under_time_slicing_is_one_oom_kill)
{
	RUN("pools.p.sharing={mode: time-slicing, replicas: 2}", "workloads.w.count=2",
	    "workloads.w.vram=50GiB", "workloads.w.restart={limit: 0}");
	cr_assert_float_eq(all("oom_kills"), 1, 1e-12);
	cr_assert_float_eq(all("jobs_failed"), 1, 1e-12);
	cr_assert_float_eq(all("jobs_completed"), 1, 1e-12);
	cr_assert_str_eq(r.status, "ok");
	cleanup();
	/* With one restart after 10 s the new pod lands beside the first and dies again. */
	RUN("pools.p.sharing={mode: time-slicing, replicas: 2}", "workloads.w.count=2",
	    "workloads.w.vram=50GiB", "workloads.w.restart={limit: 1, backoff: 10s}");
	cr_assert_float_eq(all("oom_kills"), 2, 1e-12);
	cr_assert_float_eq(all("jobs_failed"), 1, 1e-12);
	/* The jobs table counts them on the job whose pod died: the second. */
	cr_assert_eq(r.jobs[0].oom_kills, 0);
	cr_assert_eq(r.jobs[1].oom_kills, 2);
}

/* MPS, MIG and fractional units cap memory; a pod that does not fit is not placed. */
Test(sharing, isolated_units_never_place_a_pod_too_large_for_them)
{
	static const char *const modes[][2] = {
		{"pools.p.sharing={mode: mps, replicas: 4}", "workloads.w.gpus=1"},
		{"pools.p.sharing={mode: mig, layout: [1g.10gb]}",
		 "workloads.w.gpus={mig: 1g.10gb}"},
		{"pools.p.sharing=fractional", "workloads.w.gpus={milli: 100}"},
	};
	for (size_t m = 0; m < 3; m++) {
		RUN(modes[m][0], modes[m][1], "workloads.w.vram=30GiB", "workloads.w.count=1");
		cr_assert_eq(r.jobs[0].start, SIM_NEVER, "%s", modes[m][0]);
		cr_assert_str_eq(r.status, "stalled");
		cr_assert_float_eq(all("oom_kills"), 0, 1e-12);
		cleanup();
	}
}

/* VRAM from the model: Llama-2-7B in INT4 fits a 1g.10gb slice, in FP16 it does not. */
Test(sharing, quantization_decides_whether_a_model_fits_a_slice)
{
	RUN("pools.p.sharing={mode: mig, layout: [1g.10gb]}",
	    "workloads=[{name: m, arrival: {at: \"00:00\"}, duration: 1h, gpus: {mig: 1g.10gb},"
	    " model: llama-2-7b, quantization: int4}]");
	cr_assert_neq(r.jobs[0].start, SIM_NEVER);
	cr_assert_lt(sc->workloads[0].vram_bytes, 10.0 * (1 << 30));
	cleanup();
	RUN("pools.p.sharing={mode: mig, layout: [1g.10gb]}",
	    "workloads=[{name: m, arrival: {at: \"00:00\"}, duration: 1h, gpus: {mig: 1g.10gb},"
	    " model: llama-2-7b, quantization: fp16}]");
	cr_assert_eq(r.jobs[0].start, SIM_NEVER);
	cr_assert_gt(sc->workloads[0].vram_bytes, 10.0 * (1 << 30));
}

/* Eight light pods on exclusive GPUs queue; on time-slicing they do not. */
Test(sharing, time_slicing_collapses_queue_time_for_light_pods)
{
	RUN("pools.p.sharing=exclusive");
	double exclusive = all("queue_time_mean_s");
	cleanup();
	RUN("pools.p.sharing={mode: time-slicing, replicas: 8}");
	cr_assert_gt(exclusive, 10000);
	cr_assert_float_eq(all("queue_time_mean_s"), 0, 1e-12);
	/* sum f = 0.8 < 1: slow = 1.05, each pod's hour stretches by 0.1 x 0.05. */
	cr_assert_eq(r.jobs[0].end, (sim_time)llround(3600e6 * (0.9 + 0.1 * 1.05)));
}

/*
 * A crash loop: the second 50 GiB pod is OOM-killed until the first releases
 * its memory at 3600 s.  Retries come after 10, 20, 40, 80, 160 s, then every
 * 300 s (the cap): at 0, 10, 30, 70, 150, 310, 610, ... 3310 s (16 kills), and
 * the retry at 3610 s finds the GPU's memory free again.
 */
Test(sharing, a_restarted_pod_starts_once_the_memory_is_released)
{
	RUN("pools.p.sharing={mode: time-slicing, replicas: 2}", "workloads.w.count=2",
	    "workloads.w.vram=50GiB", "workloads.w.restart={limit: 20, backoff: 10s}");
	cr_assert_float_eq(all("oom_kills"), 16, 1e-12);
	cr_assert_eq(r.jobs[1].start, 3610 * SIM_SECOND);
	cr_assert_eq(r.jobs[1].end, (3610 + 3600) * SIM_SECOND);
	cr_assert_float_eq(all("jobs_failed"), 0, 1e-12);
}

/* --- the sharing module (sharing.h): one definition of units and equivalents */

static const struct sharing fractional = {.mode = SHARING_FRACTIONAL};

/* A fractional GPU has 1000 units: a whole-GPU pod takes all of them (one pod
 * per GPU), a 250-milli pod a quarter (four per GPU).  cluster.c and the
 * diagnosis both read these figures from sharing.c; before it the diagnosis
 * counted a fractional GPU as 1 unit and the cluster as 1000. */
Test(sharing_units, a_fractional_gpu_has_1000_units_and_a_whole_pod_takes_them_all)
{
	struct sharing_ask whole = {REQUEST_GPUS, 1, 0, NULL, 0, false};
	struct sharing_ask quarter = {REQUEST_MILLI, 1, 250, NULL, 0, false};
	cr_assert_eq(sharing_units_per_gpu(&fractional), 1000);
	cr_assert_eq(sharing_pod_units(&fractional, &whole), 1000);
	cr_assert_eq(sharing_pods_per_gpu(&fractional, &whole), 1);
	cr_assert_eq(sharing_pods_per_gpu(&fractional, &quarter), 4);
	cr_assert_float_eq(sharing_pod_equivalent(&fractional, &quarter, 1), 0.25, 1e-12);
	struct sharing ts = {.mode = SHARING_TIME_SLICING, .replicas = 4};
	struct sharing_ask two = {REQUEST_GPUS, 2, 0, NULL, 0, false};
	/* two replicas on two GPUs of 4 replicas each: 2/4 GPU */
	cr_assert_float_eq(sharing_pod_equivalent(&ts, &two, 2), 0.5, 1e-12);
	cr_assert_eq(sharing_pods_per_gpu(&ts, &two), 4);
}

/* Every mode has one name in the scenario's vocabulary and one in a sentence,
 * in the enum's order, each distinct (sharing.c's table is indexed by
 * designated initializers, so a mode inserted in the middle cannot shift
 * the names of the others). */
Test(sharing_units, every_mode_has_its_own_name_and_label)
{
	static const char *const want[SHARING_MODES] = {"exclusive", "time-slicing", "mps", "mig",
							"fractional"};
	static const char *const label[SHARING_MODES] = {"exclusive", "time-slicing", "MPS", "MIG",
							 "fractional"};
	for (int m = 0; m < SHARING_MODES; m++) {
		cr_assert_str_eq(sharing_name((enum sharing_mode)m), want[m]);
		cr_assert_str_eq(sharing_names[m], want[m]);
		cr_assert_str_eq(sharing_label((enum sharing_mode)m), label[m]);
	}
	cr_assert_str_eq(sharing_name(SHARING_MPS), "mps");
	cr_assert_str_eq(sharing_name(SHARING_FRACTIONAL), "fractional");
}

/* GPU Feature Discovery labels a node nvidia.com/gpu.sharing-strategy=none,
 * time-slicing or mps (NVIDIA/k8s-device-plugin internal/lm/resource.go);
 * nothing else is a mode, not even our own "mig" or "exclusive". */
Test(sharing_units, gfd_strategy_names_three_modes_and_nothing_else)
{
	enum sharing_mode m = SHARING_MIG;
	cr_assert(sharing_gfd_strategy("none", &m));
	cr_assert_eq(m, SHARING_EXCLUSIVE);
	cr_assert(sharing_gfd_strategy("time-slicing", &m));
	cr_assert_eq(m, SHARING_TIME_SLICING);
	cr_assert(sharing_gfd_strategy("mps", &m));
	cr_assert_eq(m, SHARING_MPS);
	cr_assert_not(sharing_gfd_strategy("exclusive", &m));
	cr_assert_not(sharing_gfd_strategy("mig", &m));
	cr_assert_not(sharing_gfd_strategy("MPS", &m));
	cr_assert_eq(m, SHARING_MPS, "a refused label leaves the mode as it was");
}

/* Memory is isolated under MPS (a client's pinned device memory limit), MIG
 * (an instance's own memory) and fractions (their limit); exclusive and
 * time-sliced pods may use the whole GPU's.  Co-tenants contend for the SMs
 * under time-slicing, MPS and milli fractions; not on an exclusive GPU, a
 * MIG instance, or a whole GPU of a fractional pool. */
Test(sharing_units, memory_isolation_and_contention_by_mode)
{
	static const bool isolated[SHARING_MODES] = {false, false, true, true, true};
	static const bool contended_gpus[SHARING_MODES] = {false, true, true, false, false};
	static const bool contended_milli[SHARING_MODES] = {false, true, true, false, true};
	for (int m = 0; m < SHARING_MODES; m++) {
		struct sharing sh = {.mode = (enum sharing_mode)m, .replicas = 2};
		cr_assert_eq(sharing_isolates_memory(&sh), isolated[m], "%s", sharing_names[m]);
		cr_assert_eq(sharing_contended(&sh, REQUEST_GPUS), contended_gpus[m], "%s",
			     sharing_names[m]);
		cr_assert_eq(sharing_contended(&sh, REQUEST_MILLI), contended_milli[m], "%s",
			     sharing_names[m]);
	}
}

/* A node of 4 GPUs of 80 GB holding 40, 90, 80 and 81 GB of footprints: a pod
 * on GPUs 0 and 2 (mask 0b0101) fits (80 is not over 80), one on GPU 1 or 3
 * overflows, under exclusive and time-slicing; under MPS the same figures
 * never overflow (placement kept each pod within its unit). */
Test(sharing_units, an_overflow_is_a_gpu_of_the_pod_over_its_memory)
{
	const double gb = 1e9, vram[4] = {40 * gb, 90 * gb, 80 * gb, 81 * gb};
	struct sharing ex = {.mode = SHARING_EXCLUSIVE}, ts = {.mode = SHARING_TIME_SLICING},
		       mps = {.mode = SHARING_MPS, .replicas = 2};
	cr_assert_not(sharing_overflows(&ex, 80 * gb, vram, 0x5));
	cr_assert(sharing_overflows(&ex, 80 * gb, vram, 0x2));
	cr_assert(sharing_overflows(&ts, 80 * gb, vram, 0x8));
	cr_assert(sharing_overflows(&ts, 80 * gb, vram, 0xf));
	cr_assert_not(sharing_overflows(&ts, 80 * gb, vram, 0));
	cr_assert_not(sharing_overflows(&mps, 80 * gb, vram, 0xf));
}

/* The kubelet's CrashLoopBackOff doubles from the first delay to a 5-minute
 * cap (kubernetes pkg/kubelet/kubelet.go: MaxContainerBackOff = 300 s).  A
 * Job's pods and a Deployment's replicas use one rule here, so a 0 s backoff
 * behaves the same for both: 1 tick, then 2, 4, 8 ... (before, batch retries
 * stayed at 0 s while replica retries grew from 1 us). */
Test(sharing_units, restart_backoff_is_one_rule_for_batch_and_replicas)
{
	cr_assert_eq(sim_backoff(10 * SIM_SECOND, 0), 10 * SIM_SECOND);
	cr_assert_eq(sim_backoff(10 * SIM_SECOND, 3), 80 * SIM_SECOND);
	cr_assert_eq(sim_backoff(10 * SIM_SECOND, 5), 300 * SIM_SECOND, "320 s is capped at 300 s");
	cr_assert_eq(sim_backoff(0, 0), 1);
	cr_assert_eq(sim_backoff(0, 3), 8);
}

/* gpus: 3 on one GPU time-sliced x8: the device plugin grants three replicas
 * of the one GPU (NVIDIA/k8s-device-plugin README.md, "With CUDA
 * Time-Slicing"), so two such pods run at once (6 of 8 replicas, 0.75 GPUs
 * allocated) and a third waits for 3 free replicas. */
Test(sharing, a_time_sliced_pod_may_take_several_replicas_of_one_gpu)
{
	RUN("pools.p.sharing={mode: time-slicing, replicas: 8}", "workloads.w.gpus=3",
	    "workloads.w.count=3");
	cr_assert_eq(started_at(0), 2);
	cr_assert_float_eq(all("peak_allocated_gpus"), 0.75, 1e-12);
	cr_assert_eq(all("jobs_completed"), 3);
}

/* The device plugin runs MPS with failRequestsGreaterThanOne whatever the
 * config says (k8s-device-plugin api/config/v1/config.go: "We explicitly set
 * sharing.mps.failRequestsGreaterThanOne = true"), so a pod asking for 2 MPS
 * replicas is refused as the plugin refuses it at admission. */
Test(sharing, mps_refuses_a_pod_asking_for_two_replicas)
{
	struct scenario *s = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {"pools.p.gpus_per_node=2", "pools.p.sharing={mode: mps, replicas: 4}",
			      "workloads.w.gpus=2"};
	cr_assert_eq(scenario_load("tests/fixtures/sharing-cases.yaml", sets, 3, &s, &err),
		     GP_EINPUT);
	cr_assert(strstr(err.msg, "pool p shares by MPS, which the device plugin always runs with "
				  "failRequestsGreaterThanOne, so the device plugin refuses a pod "
				  "asking for 2 replicas ('request for 'nvidia.com/gpu: 2' too "
				  "large: maximum request size for shared resources is 1')"),
		  "%s", err.msg);
	/* One replica each is what MPS serves: 4 pods on one GPU at 00:00. */
	RUN("pools.p.sharing={mode: mps, replicas: 4}");
	cr_assert_eq(started_at(0), 4);
}

/* renameByDefault (k8s-device-plugin README, "Shared Access to GPUs"): the
 * replicas are another resource, nvidia.com/gpu.shared.  A pod asking for it
 * gets a replica; one asking for nvidia.com/gpu finds none there. */
Test(sharing, a_renamed_pool_offers_gpu_shared_only)
{
	RUN("pools.p.sharing={mode: time-slicing, replicas: 4, renameByDefault: true}",
	    "workloads.w.gpus={shared: 1}", "output.jobs=true");
	cr_assert_eq(started_at(0), 4);
	cr_assert_eq(all("jobs_completed"), 8);
	int32_t id = r.jobs[7].reason;
	cr_assert_geq(id, 0);
	cr_assert_str_eq(
		r.reason_texts[id],
		"0/1 nodes are available: 1 Insufficient nvidia.com/gpu.shared. preemption: "
		"0/1 nodes are available: 1 No preemption victims found for incoming pod..");
	cleanup();
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {
		"pools.p.sharing={mode: time-slicing, replicas: 4, renameByDefault: true}"};
	cr_assert_eq(scenario_load("tests/fixtures/sharing-cases.yaml", sets, 1, &sc, &err),
		     GP_EINPUT, "nvidia.com/gpu is not offered by a renamed pool");
	cr_assert(strstr(err.msg, "nvidia.com/gpu"), "%s", err.msg);
}
