/*
 * test_breakers.c - diagnosis as a property (issue 46): a generator takes a
 * HEALTHY scenario (every goal met, no finding: checked first, by running
 * it) and breaks ONE constraint of it, drawn from a seed.  For every broken
 * scenario:
 *   - the break makes some workload miss its goal (else the break is too
 *     weak and the case proves nothing: a generator bug, reported);
 *   - the first finding names the broken key: its kind is one the break
 *     can show as, and it points at the key (breaks_names_key);
 *   - advise's recommendation meets every goal without hardware: no node
 *     more than the scenario has (advise_row.hardware), no pool added, no
 *     autoscale.max raised.
 * `make test` runs the fixed seeds 1 .. BREAKERS_SEEDS (200), spread over
 * the shards of one parameterized test; `make fuzz-diagnosis` runs more
 * (BREAKERS_SEEDS=2000 BREAKERS_FIRST=1001).  A failing case is written to
 * build/breakers/seed-N-BREAK.yaml with its healthy twin beside it, so
 * `bin/gpuplan advise build/breakers/seed-N-BREAK.yaml` replays it.
 *
 * What each break models, and where the real component decides so:
 *  - quota: Kueue admits a workload within its ClusterQueue's nominal quota
 *    (kubernetes-sigs/kueue site/content/en/docs/concepts/cluster_queue.md,
 *    "Resource quotas"); a lowered quota leaves work pending on "insufficient
 *    unused quota" beside free GPUs.
 *  - lending: lendingLimit, "the maximum amount of unused quota [...] the
 *    ClusterQueue can lend to other ClusterQueues in the same cohort"
 *    (cluster_queue.md, "LendingLimit"): 0 keeps an idle queue's quota from
 *    a busy neighbour.
 *  - reclaim: preemption.reclaimWithinCohort Never: a ClusterQueue whose
 *    nominal quota a borrower holds cannot take it back (cluster_queue.md,
 *    "Preemption"), so its own work waits for the borrower to finish.
 *  - strict-fifo: StrictFIFO "guarantees workloads admission order [...]
 *    older workloads that can't be admitted will block newer workloads, even
 *    if the newer workloads fit in available quota" (cluster_queue.md,
 *    "Queueing strategy").
 *  - priority: kube-scheduler's PrioritySort and Kueue's queue order pop
 *    higher priority first; without one, an urgent job queues in arrival
 *    order behind a sweep.
 *  - toleration, selector: TaintToleration and NodeAffinity filters
 *    (kubernetes pkg/scheduler/framework/plugins/tainttoleration,
 *    nodeaffinity): a dropped toleration or a misspelt label value keeps
 *    pods off nodes with idle GPUs.
 *  - spread: PodTopologySpread with whenUnsatisfiable DoNotSchedule filters a
 *    node when placing there would make the zone's count exceed the minimum
 *    by more than maxSkew (kubernetes pkg/scheduler/framework/plugins/
 *    podtopologyspread/filtering.go); zones of 8 and 4 GPUs then hold only
 *    4 + 5 one-GPU pods with maxSkew 1.
 *  - window: a pool's batch window shrunk below what its night's work needs.
 *  - contention: the NVIDIA device plugin's time-slicing replicas give each
 *    pod a share of the GPU's time (k8s-device-plugin docs, "Time-Slicing
 *    GPUs in Kubernetes": no memory or fault isolation, no proportional
 *    guarantee); more replicas stack more pods on a GPU and slow each.
 *  - mig: mig-parted's configs name the instances of each GPU
 *    (NVIDIA/mig-parted examples/config.yaml, "mig-devices"); a layout with
 *    fewer instances of the profile the pods request makes them scarce.
 *  - cpu, memory: NodeResourcesFit counts cpu and memory requests (fit.go
 *    "Insufficient cpu"): inflated requests fill a node before its GPUs.
 *  - provisioning: the Cluster Autoscaler's new node is Ready provision_time
 *    after launch (under --max-node-provision-time, 15m): a slower node
 *    group makes pods that arrive on a cold pool miss a deadline.
 *  - startup: 25 minutes of image pull and model load per job hold the GPUs
 *    before the work, past a deadline.
 *  - affinity, gpu-spec: a required node affinity narrowed to one zone, a
 *    GPU type list without the idle type that holds the pods (NodeAffinity).
 *  - borrowing-limit: Kueue's borrowingLimit 0 beside an idle cohort.
 *  - workload-window: a workload's own start window too short for its
 *    rounds (it starts only inside it and its pool's).
 *  - cpu-quota: a ClusterQueue's cpu quota ("insufficient unused quota for
 *    cpu") that admits half the jobs while GPUs idle.
 * Half the cases get a bystander (add_bystander): a MIG pool and a workload
 * of its own that meets its goals, which the diagnosis must not blame.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "diagcheck.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The breaks, each a constraint kind a scenario can express. */
enum brk {
	BRK_QUOTA,
	BRK_LENDING,
	BRK_RECLAIM,
	BRK_STRICT_FIFO,
	BRK_PRIORITY,
	BRK_TOLERATION,
	BRK_SELECTOR,
	BRK_SPREAD,
	BRK_WINDOW,
	BRK_CONTENTION,
	BRK_MIG,
	BRK_CPU,
	BRK_MEMORY,
	BRK_PROVISIONING,
	BRK_STARTUP,
	BRK_AFFINITY,
	BRK_GPU_SPEC,
	BRK_BORROWING,
	BRK_WORKLOAD_WINDOW,
	BRK_CPU_QUOTA,
	BRK_N
};

static const char *const brk_names[BRK_N] = {
	"quota",      "lending",  "reclaim",         "strict-fifo",     "priority",
	"toleration", "selector", "spread",          "window",          "contention",
	"mig",        "cpu",      "memory",          "provisioning",    "startup",
	"affinity",   "gpu-spec", "borrowing-limit", "workload-window", "cpu-quota",
};

/* The breaks `make test` draws from (all of them; BREAKERS_ALL=1 is kept
 * for a break added before the diagnosis answers it, left out here until
 * it does). */
static const bool brk_enabled[BRK_N] = {
	[BRK_QUOTA] = true,           [BRK_LENDING] = true,      [BRK_RECLAIM] = true,
	[BRK_STRICT_FIFO] = true,     [BRK_PRIORITY] = true,     [BRK_TOLERATION] = true,
	[BRK_SELECTOR] = true,        [BRK_SPREAD] = true,       [BRK_WINDOW] = true,
	[BRK_CONTENTION] = true,      [BRK_MIG] = true,          [BRK_CPU] = true,
	[BRK_MEMORY] = true,          [BRK_PROVISIONING] = true, [BRK_STARTUP] = true,
	[BRK_AFFINITY] = true,        [BRK_GPU_SPEC] = true,     [BRK_BORROWING] = true,
	[BRK_WORKLOAD_WINDOW] = true, [BRK_CPU_QUOTA] = true,
};

/* splitmix64: one stream per seed, the same cases on every machine. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int pick(uint64_t *s, int lo, int hi) /* uniform in [lo, hi] */
{
	return lo + (int)(next(s) % (uint64_t)(hi - lo + 1));
}

/* The drawn parameters of one case: the healthy and the broken scenario are
 * written from the same draw, differing only in the broken key. */
struct draw {
	enum brk brk;
	int nodes;      /* the scale: nodes of the main pool (or of each zone's) */
	int gpus;       /* a pod's GPUs */
	int dur_m;      /* a job's duration, minutes */
	const char *w;  /* the main workload's name */
	const char *q;  /* the main queue's name */
	const char *p;  /* the main pool's name */
	bool bystander; /* a workload of its own on a pool of its own beside */
};

struct yaml {
	char s[8192];
	size_t n;
};

static void put(struct yaml *y, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(y->s + y->n, sizeof y->s - y->n, fmt, ap);
	va_end(ap);
	cr_assert(k >= 0 && (size_t)k < sizeof y->s - y->n, "scenario text too long");
	y->n += (size_t)k;
}

static const char *const workload_names[] = {"train", "finetune", "eval", "render", "sweep"};
static const char *const queue_names[] = {"team-a", "research", "vision", "ml-prod"};

/* Inserts text after the first line that is exactly `line` in y. */
static void insert_after(struct yaml *y, const char *line, const char *text)
{
	char *at = strstr(y->s, line);
	cr_assert_not_null(at, "no '%s' in the scenario", line);
	at += strlen(line);
	size_t k = strlen(text), rest = y->n - (size_t)(at - y->s);
	cr_assert(y->n + k < sizeof y->s, "scenario text too long");
	memmove(at + k, at, rest + 1);
	memcpy(at, text, k);
	y->n += k;
}

/* A bystander: a MIG pool whose 1g.10gb instances hold no pod of the
 * others (they ask for whole GPUs or a larger profile), used by a workload
 * of its own that meets its goals whatever is broken beside it.  The
 * diagnosis must still name the broken key, not the bystander. */
static void add_bystander(struct yaml *y)
{
	insert_after(
		y, "pools:\n",
		"  - {name: side, nodes: 1, gpu: A100-80GB, gpus_per_node: 1, price: {gpu_hour: "
		"2.00}, sharing: {mode: mig, layout: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, "
		"1g.10gb, 1g.10gb, 1g.10gb]}}\n");
	insert_after(y, "workloads:\n",
		     "  - {name: side-jobs, count: 4, arrival: {at: \"00:00\"}, gpus: {mig: "
		     "1g.10gb}, duration: 40m, gpu_busy: 0.5}\n");
}

/* Writes the scenario of draw d: healthy, or with d->brk broken. */
static void write_case(const struct draw *d, bool broken, struct yaml *y)
{
	int n = d->nodes, g = d->gpus, D = d->dur_m;
	const char *w = d->w, *q = d->q, *p = d->p;
	put(y, "name: brk-%s\noutput: {step: 15m}\n", brk_names[d->brk]);
	switch (d->brk) {
	case BRK_QUOTA: /* every job admitted at once; half the quota: half wait */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: "
		    "{gpu_hour: 0.80}}\n",
		    p, n);
		put(y, "queues:\n  - {name: %s, quota: {nvidia.com/gpu: %d}}\n", q,
		    broken ? 4 * n : 8 * n);
		put(y,
		    "workloads:\n  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:00\"}, "
		    "gpus: %d, duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, q, 8 * n / g, g, D, D + D / 2);
		break;
	case BRK_LENDING: /* an idle queue of the cohort lends to a busy one */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: "
		    "{gpu_hour: 0.80}}\n",
		    p, n);
		put(y,
		    "queues:\n  - {name: %s, cohort: shared, quota: {nvidia.com/gpu: %d}}\n"
		    "  - {name: idle-team, cohort: shared, quota: {nvidia.com/gpu: %d}%s}\n",
		    q, 2 * n, 6 * n, broken ? ", lending_limit: {nvidia.com/gpu: 0}" : "");
		put(y,
		    "workloads:\n  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:00\"}, "
		    "gpus: %d, duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, q, 8 * n / g, g, D, D + D / 2);
		break;
	case BRK_RECLAIM: /* a borrower holds the queue's quota; reclaiming it is allowed */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: "
		    "{gpu_hour: 0.80}}\n",
		    p, n);
		put(y,
		    "queues:\n  - {name: %s, cohort: shared, quota: {nvidia.com/gpu: %d}, "
		    "preemption: {reclaim_within_cohort: %s}}\n"
		    "  - {name: borrower, cohort: shared, quota: {nvidia.com/gpu: %d}}\n",
		    q, 4 * n, broken ? "Never" : "Any", 4 * n);
		put(y,
		    "workloads:\n  - {name: sweep-b, queue: borrower, count: %d, arrival: {at: "
		    "\"00:00\"}, gpus: 1, duration: %dm, gpu_busy: 0.9}\n",
		    8 * n, 4 * D);
		put(y,
		    "  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:30\"}, gpus: %d, "
		    "duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, q, 4 * n / g, g, D, D + D / 2);
		break;
	case BRK_STRICT_FIFO: /* a head that lacks quota: others pass it, or not */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: "
		    "{gpu_hour: 0.80}}\n",
		    p, n);
		put(y, "queues:\n  - {name: %s, quota: {nvidia.com/gpu: %d}%s}\n", q, 8 * n,
		    broken ? ", strategy: StrictFIFO" : "");
		put(y,
		    "workloads:\n  - {name: sweep-s, queue: %s, count: %d, arrival: {at: \"00:00\"}, "
		    "gpus: 1, duration: %dm, gpu_busy: 0.9}\n",
		    q, 4 * n, 2 * D);
		put(y,
		    "  - {name: big, queue: %s, count: 1, arrival: {at: \"00:01\"}, gpus: 8, "
		    "pods: %d, gang: true, duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    q, n, D, 4 * D);
		put(y,
		    "  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:02\"}, gpus: %d, "
		    "duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, q, 4 * n / g, g, D, D + D / 2);
		break;
	case BRK_PRIORITY: /* an urgent job passes a sweep by its priority */
		put(y,
		    "scheduler: {order: priority}\npools:\n  - {name: %s, nodes: %d, gpu: L4, "
		    "gpus_per_node: 8, price: {gpu_hour: 0.80}}\n",
		    p, n);
		put(y,
		    "workloads:\n  - {name: sweep-p, count: %d, arrival: {at: \"00:00\"}, gpus: 1, "
		    "duration: %dm, gpu_busy: 0.9, goal: {queue_p95: %dm}}\n",
		    16 * n, D, 4 * D);
		put(y,
		    "  - {name: %s, count: %d, arrival: {at: \"00:10\"}, gpus: %d, duration: %dm, "
		    "gpu_busy: 0.9, %sdeadline: {within: %dm}}\n",
		    w, 4 * n / g, g, D, broken ? "" : "priority: 100, ", 2 * D);
		break;
	case BRK_TOLERATION: /* the work needs the tainted pool too */
	case BRK_AFFINITY:
	case BRK_SELECTOR:
	case BRK_CPU:
	case BRK_MEMORY: {
		int per_node = 4 / g; /* pods a node's GPUs hold */
		int cpu = 8, mem = 64;
		if (broken && d->brk == BRK_CPU)
			cpu = per_node >= 4 ? 17 : 32; /* half the pods a node */
		if (broken && d->brk == BRK_MEMORY)
			mem = per_node >= 4 ? 129 : 256;
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L40S, gpus_per_node: 4, cpu: 32, "
		    "memory: 256GiB, price: {gpu_hour: 1.50}, labels: {topology.kubernetes.io/zone: "
		    "a}}\n"
		    "  - {name: reserved, nodes: %d, gpu: L40S, gpus_per_node: 4, cpu: 32, memory: "
		    "256GiB, price: {gpu_hour: 1.50}, labels: {topology.kubernetes.io/zone: b}, "
		    "taints: [{key: team, value: research, effect: NoSchedule}]}\n",
		    p, n, n);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: %d, "
		    "duration: %dm, gpu_busy: 0.7, cpu: %d, memory: %dGiB, deadline: {within: %dm}",
		    w, 2 * n * per_node, g, D, cpu, mem, D + D / 2);
		if (!(broken && d->brk == BRK_TOLERATION))
			put(y, ", tolerations: [{key: team, operator: Equal, value: research, "
			       "effect: NoSchedule}]");
		put(y,
		    ", affinity: [{key: topology.kubernetes.io/zone, operator: In, values: [%s]}]",
		    broken && d->brk == BRK_AFFINITY ? "a" : "a, b");
		put(y, ", node_selector: {nvidia.com/gpu.product: %s}}\n",
		    broken && d->brk == BRK_SELECTOR ? "NVIDIA-L40" : "NVIDIA-L40S");
		break;
	}
	case BRK_GPU_SPEC: /* the A100s are full; the L40S's 48 GB hold the pods too */
		put(y,
		    "pools:\n  - {name: a100, nodes: %d, gpu: A100-80GB, gpus_per_node: 4, price: "
		    "{gpu_hour: 3.00}}\n  - {name: %s, nodes: %d, gpu: L40S, gpus_per_node: 4, "
		    "price: {gpu_hour: 1.50}}\n",
		    n, p, n);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: %d, vram: "
		    "30GiB, duration: %dm, gpu_busy: 0.8, gpu_spec: [%s], deadline: {within: %dm}}\n",
		    w, 8 * n / g, g, D, broken ? "A100-80GB" : "A100-80GB, L40S", D + D / 2);
		break;
	case BRK_BORROWING: /* borrowing what an idle queue of the cohort leaves */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: "
		    "{gpu_hour: 0.80}}\n",
		    p, n);
		put(y,
		    "queues:\n  - {name: %s, cohort: shared, quota: {nvidia.com/gpu: %d}%s}\n"
		    "  - {name: idle-team, cohort: shared, quota: {nvidia.com/gpu: %d}}\n",
		    q, 2 * n, broken ? ", borrowing_limit: {nvidia.com/gpu: 0}" : "", 6 * n);
		put(y,
		    "workloads:\n  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:00\"}, "
		    "gpus: %d, duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, q, 8 * n / g, g, D, D + D / 2);
		break;
	case BRK_WORKLOAD_WINDOW: /* its own start window: 4 h, or 2 h (one round) */
		put(y,
		    "start: 2026-11-02T00:00:00Z\npools:\n  - {name: %s, nodes: %d, gpu: L4, "
		    "gpus_per_node: 4, price: {gpu_hour: 0.80}}\n",
		    p, n);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: 2, "
		    "duration: 2h, gpu_busy: 0.9, windows: [{from: \"00:00\", to: \"%s\"}], "
		    "deadline: {within: 12h}}\n",
		    w, 4 * n, broken ? "02:00" : "04:00");
		break;
	case BRK_CPU_QUOTA: /* a queue's cpu quota that admits half the jobs */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L40S, gpus_per_node: 8, cpu: 128, memory: "
		    "1024GiB, price: {gpu_hour: 1.50}}\n",
		    p, n);
		put(y, "queues:\n  - {name: %s, quota: {nvidia.com/gpu: %d, cpu: %d}}\n", q, 8 * n,
		    broken ? 16 * n : 32 * n);
		put(y,
		    "workloads:\n  - {name: %s, queue: %s, count: %d, arrival: {at: \"00:00\"}, "
		    "gpus: 1, cpu: 4, duration: %dm, gpu_busy: 0.8, deadline: {within: %dm}}\n",
		    w, q, 8 * n, D, D + D / 2);
		break;
	case BRK_SPREAD: /* zones of 8n and 4n GPUs: maxSkew 1 holds 4n + 4n + 1 */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 4, price: {gpu_hour: "
		    "0.80}, labels: {topology.kubernetes.io/zone: a}}\n"
		    "  - {name: zone-b, nodes: %d, gpu: L4, gpus_per_node: 4, price: {gpu_hour: 0.80}, "
		    "labels: {topology.kubernetes.io/zone: b}}\n",
		    p, 2 * n, n);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: 1, "
		    "duration: %dm, gpu_busy: 0.7, deadline: {within: %dm}%s}\n",
		    w, 12 * n, D, D + D / 2,
		    broken ? ", topology_spread: {key: topology.kubernetes.io/zone, max_skew: 1, "
			     "when_unsatisfiable: DoNotSchedule}"
			   : "");
		break;
	case BRK_WINDOW: /* a night window that holds its renders, and one 4 h shorter */
		put(y,
		    "start: 2026-11-02T00:00:00Z\npools:\n  - {name: %s, nodes: %d, gpu: L40S, "
		    "gpus_per_node: 4, price: {gpu_hour: 1.50}, windows: [{from: \"20:00\", to: "
		    "\"%s\"}]}\n",
		    p, n, broken ? "00:00" : "04:00");
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"20:00\"}, gpus: 4, "
		    "duration: 2h, gpu_busy: 0.9, deadline: {within: 10h}}\n",
		    w, 3 * n);
		break;
	case BRK_CONTENTION: /* time-slicing x2 holds a job and a light one a GPU */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: A10, gpus_per_node: 4, price: {gpu_hour: "
		    "1.00}, sharing: {mode: time-slicing, replicas: %d}}\n",
		    p, n, broken ? 8 : 2);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: 1, "
		    "duration: %dm, gpu_busy: 0.9, vram: 4GiB, deadline: {within: %dm}}\n"
		    "  - {name: light, count: %d, arrival: {at: \"00:01\"}, gpus: 1, duration: %dm, "
		    "gpu_busy: 0.1, vram: 2GiB, goal: {queue_p95: %dm}}\n",
		    w, 4 * n, D, D + D / 6, 12 * n, D, 3 * D + 30);
		break;
	case BRK_MIG: /* two 3g.40gb a GPU, or one and two 2g.20gb */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: A100-80GB, gpus_per_node: 2, price: "
		    "{gpu_hour: 2.00}, sharing: {mode: mig, layout: [%s]}}\n",
		    p, n, broken ? "3g.40gb, 2g.20gb, 2g.20gb" : "3g.40gb, 3g.40gb");
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: {mig: "
		    "3g.40gb}, duration: %dm, gpu_busy: 0.7, sm_share: 0.3, deadline: {within: "
		    "%dm}}\n",
		    w, 4 * n, D, D + D / 2);
		break;
	case BRK_PROVISIONING: /* a cold pool whose nodes come up in 2 or 14 minutes */
		put(y,
		    "pools:\n  - {name: %s, nodes: 0, gpu: L4, gpus_per_node: 8, price: {gpu_hour: "
		    "0.80}, autoscale: {min: 0, max: %d, provision_time: %s}}\n",
		    p, n, broken ? "14m" : "2m");
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: %d, "
		    "duration: %dm, gpu_busy: 0.9, deadline: {within: %dm}}\n",
		    w, 8 * n / g, g, D, D + 10);
		break;
	case BRK_STARTUP: /* 2 minutes of start-up, or 25 (image pull and model load) */
		put(y,
		    "pools:\n  - {name: %s, nodes: %d, gpu: L4, gpus_per_node: 8, price: {gpu_hour: "
		    "0.80}}\n",
		    p, n);
		put(y,
		    "workloads:\n  - {name: %s, count: %d, arrival: {at: \"00:00\"}, gpus: %d, "
		    "duration: %dm, gpu_busy: 0.9, startup: %s, deadline: {within: %dm}}\n",
		    w, 8 * n / g, g, D, broken ? "25m" : "2m", D + 20);
		break;
	default: cr_assert_fail("break %s has no generator", brk_names[d->brk]);
	}
	if (d->bystander)
		add_bystander(y);
}

/* What the first finding of a broken case may be, and the key it points at. */
struct expect {
	const char *kinds[3]; /* finding_kind_name of the first finding */
	char key[128];        /* the key path, names filled in */
};

static void expected(const struct draw *d, struct expect *e)
{
	memset(e, 0, sizeof *e);
	switch (d->brk) {
	case BRK_QUOTA:
		e->kinds[0] = "admission";
		snprintf(e->key, sizeof e->key, "queues.%s.quota", d->q);
		break;
	case BRK_LENDING:
		e->kinds[0] = "admission";
		snprintf(e->key, sizeof e->key, "queues.idle-team.lending_limit");
		break;
	case BRK_RECLAIM:
		e->kinds[0] = "reclaim";
		snprintf(e->key, sizeof e->key, "queues.%s.preemption", d->q);
		break;
	case BRK_STRICT_FIFO:
		e->kinds[0] = "admission";
		snprintf(e->key, sizeof e->key, "queues.%s.strategy", d->q);
		break;
	case BRK_PRIORITY:
		e->kinds[0] = "priority";
		snprintf(e->key, sizeof e->key, "workloads.%s.priority", d->w);
		break;
	case BRK_TOLERATION:
		e->kinds[0] = "rules";
		snprintf(e->key, sizeof e->key, "workloads.%s.tolerations", d->w);
		break;
	case BRK_SELECTOR:
		e->kinds[0] = "rules";
		e->kinds[1] = "stalled"; /* "can never run": no pool carries the value */
		snprintf(e->key, sizeof e->key, "workloads.%s.node_selector", d->w);
		break;
	case BRK_SPREAD:
		e->kinds[0] = "rules";
		snprintf(e->key, sizeof e->key, "workloads.%s.topology_spread", d->w);
		break;
	case BRK_WINDOW:
		e->kinds[0] = "capacity";
		e->kinds[1] = "window";
		snprintf(e->key, sizeof e->key, "pools.%s.windows", d->p);
		break;
	case BRK_CONTENTION:
		e->kinds[0] = "contention";
		snprintf(e->key, sizeof e->key, "pools.%s.sharing", d->p);
		break;
	case BRK_MIG:
		e->kinds[0] = "mig-profile";
		snprintf(e->key, sizeof e->key, "pools.%s.sharing", d->p);
		break;
	case BRK_CPU:
		e->kinds[0] = "requests";
		snprintf(e->key, sizeof e->key, "workloads.%s.cpu", d->w);
		break;
	case BRK_MEMORY:
		e->kinds[0] = "requests";
		snprintf(e->key, sizeof e->key, "workloads.%s.memory", d->w);
		break;
	case BRK_PROVISIONING:
		e->kinds[0] = "provisioning";
		snprintf(e->key, sizeof e->key, "pools.%s.autoscale", d->p);
		break;
	case BRK_AFFINITY:
		e->kinds[0] = "rules";
		snprintf(e->key, sizeof e->key, "workloads.%s.affinity", d->w);
		break;
	case BRK_GPU_SPEC:
		e->kinds[0] = "rules";
		snprintf(e->key, sizeof e->key, "workloads.%s.gpu_spec", d->w);
		break;
	case BRK_BORROWING:
		e->kinds[0] = "admission";
		snprintf(e->key, sizeof e->key, "queues.%s.borrowing_limit", d->q);
		break;
	case BRK_WORKLOAD_WINDOW:
		e->kinds[0] = "capacity";
		e->kinds[1] = "window";
		snprintf(e->key, sizeof e->key, "workloads.%s.windows", d->w);
		break;
	case BRK_CPU_QUOTA:
		e->kinds[0] = "admission";
		snprintf(e->key, sizeof e->key, "queues.%s.quota", d->q);
		break;
	case BRK_STARTUP:
		e->kinds[0] = "startup";
		snprintf(e->key, sizeof e->key, "workloads.%s.startup", d->w);
		break;
	default: break;
	}
}

static char dir[64];
static unsigned cases_run, cases_failed;

static void draw_case(uint64_t seed, struct draw *d, bool all)
{
	uint64_t s = seed * 0x2545f4914f6cdd1du + 7;
	enum brk on[BRK_N];
	size_t n_on = 0;
	for (int b = 0; b < BRK_N; b++)
		if (brk_enabled[b] || all)
			on[n_on++] = (enum brk)b;
	d->brk = on[next(&s) % n_on];
	d->nodes = pick(&s, 1, 2);
	d->gpus = pick(&s, 1, 2);
	d->dur_m = 60 * pick(&s, 1, 2);
	d->w = workload_names[pick(&s, 0, 4)];
	d->q = queue_names[pick(&s, 0, 3)];
	d->p = pick(&s, 0, 1) ? "gpu" : "pool-a";
	d->bystander = pick(&s, 0, 1);
}

/* advise on the scenario text y, written to path. */
static void advise(const char *path, const struct yaml *y, struct advice *a, struct store **st)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fwrite(y->s, 1, y->n, f);
	fclose(f);
	diagcheck_advise(path, a, st);
}

/* Keeps a failing case where it can be replayed. */
static void keep(uint64_t seed, const struct draw *d, const struct yaml *ok, const struct yaml *bad)
{
	mkdir("build", 0755);
	mkdir("build/breakers", 0755);
	char path[160];
	const struct yaml *ys[2] = {ok, bad};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "build/breakers/seed-%llu-%s%s.yaml",
			 (unsigned long long)seed, brk_names[d->brk], i ? "" : "-healthy");
		FILE *f = fopen(path, "w");
		if (f) {
			fwrite(ys[i]->s, 1, ys[i]->n, f);
			fclose(f);
		}
	}
}

/* One case: returns whether every check held. */
static bool check_case(uint64_t seed, bool all)
{
	struct draw d;
	draw_case(seed, &d, all);
	struct yaml ok = {.n = 0}, bad = {.n = 0};
	write_case(&d, false, &ok);
	write_case(&d, true, &bad);
	char path[128];
	struct advice a;
	struct store *st;
	bool pass = true;
	const char *b = brk_names[d.brk];

	/* The healthy scenario: every goal met, no finding. */
	snprintf(path, sizeof path, "%s/healthy-%llu.yaml", dir, (unsigned long long)seed);
	advise(path, &ok, &a, &st);
	const struct advise_row *base = diagcheck_base(&a);
	if (!base || !base->meets || a.n_findings) {
		char *t = diagcheck_text(&a);
		cr_expect_fail("seed %llu (%s): the healthy scenario is not healthy:\n%s\n%s",
			       (unsigned long long)seed, b, ok.s, t);
		free(t);
		pass = false;
	}
	advice_free(&a);
	store_close(st);

	/* The broken one. */
	snprintf(path, sizeof path, "%s/broken-%llu.yaml", dir, (unsigned long long)seed);
	advise(path, &bad, &a, &st);
	struct expect e;
	expected(&d, &e);
	const char *kind;
	const char *why = diagcheck_why(&a, e.kinds, 3, e.key, &kind);
	if (why) {
		char *t = diagcheck_text(&a);
		cr_expect_fail("seed %llu (%s, key %s): %s (first finding: %s); kept in "
			       "build/breakers/\n%s\n%s",
			       (unsigned long long)seed, b, e.key, why, kind, bad.s, t);
		free(t);
		keep(seed, &d, &ok, &bad);
		pass = false;
	}
	advice_free(&a);
	store_close(st);
	return pass;
}

static void make_dir(void)
{
	strcpy(dir, "/tmp/gpuplan-breakers-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static unsigned long env_or(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoul(v, NULL, 10) : dflt;
}

#define SHARDS 8

TestSuite(breakers, .init = make_dir, .fini = remove_dir, .timeout = 600);

ParameterizedTestParameters(breakers, one_break_is_named_and_fixed_without_hardware)
{
	static int shards[SHARDS] = {0, 1, 2, 3, 4, 5, 6, 7};
	return cr_make_param_array(int, shards, SHARDS);
}

/* Seeds BREAKERS_FIRST .. BREAKERS_FIRST + BREAKERS_SEEDS - 1 (1 .. 200 by
 * default), seed s in shard s % SHARDS. */
ParameterizedTest(int *shard, breakers, one_break_is_named_and_fixed_without_hardware)
{
	unsigned long first = env_or("BREAKERS_FIRST", 1), n = env_or("BREAKERS_SEEDS", 200);
	bool all = env_or("BREAKERS_ALL", 0) != 0;
	unsigned per[BRK_N] = {0}, bad[BRK_N] = {0};
	for (unsigned long s = first; s < first + n; s++) {
		if (s % SHARDS != (unsigned long)*shard)
			continue;
		struct draw d;
		draw_case(s, &d, all);
		per[d.brk]++;
		cases_run++;
		if (!check_case(s, all)) {
			bad[d.brk]++;
			cases_failed++;
		}
	}
	if (getenv("BREAKERS_REPORT"))
		for (int b = 0; b < BRK_N; b++)
			if (per[b])
				fprintf(stderr, "breakers shard %d: %-12s %3u cases, %3u failed\n",
					*shard, brk_names[b], per[b], bad[b]);
}
