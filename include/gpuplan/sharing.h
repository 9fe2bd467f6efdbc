/*
 * sharing.h - what one GPU offers under each sharing mode, written once
 * (docs/sharing.md).
 *
 * The module owns the arithmetic of sharing: how many units a GPU has, how
 * many of them a pod takes, whether a pool's GPUs offer what a pod asks
 * for, the memory a unit guarantees, the compute a unit guarantees, and a
 * pod's worth in GPUs (the "equivalent" that allocation, quota and cost
 * count).  Cluster, placement, contention, inference and the diagnosis all
 * ask it; none of them switches on the sharing mode for these figures.
 *
 *   mode          units/GPU  a pod takes           memory/unit  compute/unit   equivalent
 *   exclusive     1          1 on each of n GPUs   (none)       1              n
 *   time-slicing  R          1 on each of n GPUs   (none)       1              n/R
 *   mps           R          1 on each of n GPUs   mem/R        1/R            n/R
 *   fractional    1000       milli on one GPU      mem*milli/1000  milli/1000  milli/1000
 *                            (whole GPUs: 1000 on each of n)          1          n
 *   mig           instances  1 instance            the profile's   SMs/GPU SMs g/7
 *
 * "(none)": memory is not isolated; the pod may use the whole GPU's.
 * Everything here is pure and O(layout size); nothing allocates.
 *
 * It also owns every other rule that depends on the mode alone: the names
 * (the scenario's, a sentence's, GPU Feature Discovery's), whether memory is
 * isolated, whether co-tenants contend for the SMs, and the OOM test where
 * memory is not isolated.  Its switches over the mode have no default, so
 * that -Wswitch lists every place a new mode must fill in (docs/design.md,
 * "Adding a sharing mode").
 */
#ifndef GPUPLAN_SHARING_H
#define GPUPLAN_SHARING_H

#include "gpuplan/catalog.h"
#include "gpuplan/common.h"

enum sharing_mode {
	SHARING_EXCLUSIVE,    /* one pod per GPU */
	SHARING_TIME_SLICING, /* R units per GPU, kernels serialized, no memory isolation */
	SHARING_MPS,          /* R units per GPU, 1/R of the SMs and of the memory each */
	SHARING_MIG,          /* a fixed layout of isolated instances per GPU */
	SHARING_FRACTIONAL,   /* milli requests: milli/1000 of the SMs and memory */
};
/* How many modes there are (the last one + 1): sharing.c asserts it, and
 * that its names table has as many entries, as does every table indexed by
 * the mode (scenario_pools.c's keys of each mode). */
#define SHARING_MODES 5

/* The scenario's names of the modes, indexed by mode ("exclusive",
 * "time-slicing", "mps", "mig", "fractional"): the loader's vocabulary, and
 * what `check`, `import` and the fixes write. */
extern const char *const sharing_names[];

/* The scenario's name of a mode (sharing_names[mode]). */
const char *sharing_name(enum sharing_mode mode);

/* A mode's name in a sentence: "exclusive", "time-slicing", "MPS", "MIG",
 * "fractional". */
const char *sharing_label(enum sharing_mode mode);

/* The mode GPU Feature Discovery's nvidia.com/gpu.sharing-strategy label
 * names ("none", "time-slicing" or "mps": NVIDIA/k8s-device-plugin,
 * internal/lm/resource.go); false for any other value. */
bool sharing_gfd_strategy(const char *label, enum sharing_mode *out);

struct sharing {
	enum sharing_mode mode;
	int32_t replicas; /* time-slicing, mps: units per GPU (>= 1) */
	double overhead;  /* time-slicing: context-switch overhead o, default 0.05 */
	bool one_per_pod; /* failRequestsGreaterThanOne (a pod asks for 1): time-slicing's
			   * option; always for MPS (the device plugin sets it,
			   * k8s-device-plugin api/config/v1/config.go) */
	bool renamed;     /* time-slicing, mps: renameByDefault, the units are
			   * nvidia.com/gpu.shared, not nvidia.com/gpu */
	const struct mig_profile **layout; /* mig: the instances of every GPU */
	size_t n_layout;
	struct srcloc loc;
};

/* What one pod asks for: nvidia.com/gpu units (whole GPUs, or time-slicing
 * and MPS replicas, one per GPU), one MIG instance, or a share of one GPU. */
enum gpu_request { REQUEST_GPUS, REQUEST_MIG, REQUEST_MILLI };

/* A pod's request as sharing sees it (scenario_ask makes one from a workload). */
struct sharing_ask {
	enum gpu_request request;
	int32_t gpus;            /* REQUEST_GPUS: units, one per GPU */
	int32_t milli;           /* REQUEST_MILLI: 1..1000 of one GPU */
	const char *mig_profile; /* REQUEST_MIG: the profile's name */
	double vram_bytes;       /* what the pod uses on each GPU; 0 unknown */
	bool shared;             /* REQUEST_GPUS of nvidia.com/gpu.shared (renameByDefault) */
};

#define SHARING_MILLI 1000 /* units of a fractional GPU */

/* Units of one GPU: 1, R, 1000, or the MIG layout's instance count. */
int32_t sharing_units_per_gpu(const struct sharing *sh);

/* Time-slicing and MPS: a pod's n units are n replicas, one per GPU where
 * the node has n GPUs with a free replica. */
static inline bool sharing_replicated(const struct sharing *sh)
{
	return sh->mode == SHARING_TIME_SLICING || sh->mode == SHARING_MPS;
}

/* Time-slicing: the NVIDIA device plugin advertises R x GPUs replicas and
 * hands them out "indiscriminately" (k8s-device-plugin README, "With CUDA
 * Time-Slicing"), so a pod's replicas may come from one GPU when fewer GPUs
 * have one free; unless failRequestsGreaterThanOne, which refuses any pod
 * asking for more than one.  MPS keeps one replica per GPU. */
bool sharing_stacks(const struct sharing *sh);

/* The most units one pod may ask for on a node of gpus_per_node GPUs:
 * GPUs x R where replicas stack, 1 under failRequestsGreaterThanOne, else
 * the GPUs. */
int32_t sharing_max_units(const struct sharing *sh, int32_t gpus_per_node);

/* Units a pod takes on each GPU it uses. */
int32_t sharing_pod_units(const struct sharing *sh, const struct sharing_ask *a);

/* Pods of this shape one GPU holds at most (units per GPU / units a pod takes). */
int32_t sharing_pods_per_gpu(const struct sharing *sh, const struct sharing_ask *a);

/* The first instance of the layout with this profile name, or NULL; its
 * index in *slot when slot is given. */
const struct mig_profile *sharing_mig(const struct sharing *sh, const char *name, size_t *slot);

/* Whether GPUs shared this way offer the kind of unit the pod asks for. */
bool sharing_offers(const struct sharing *sh, const struct sharing_ask *a);

/* The memory one unit guarantees a pod; 0 when memory is not isolated. */
double sharing_unit_memory(const struct sharing *sh, const struct gpu_type *gpu,
			   const struct sharing_ask *a);

/* The fraction of the GPU's SMs one unit guarantees (contention.h's share):
 * 1 for a whole or time-sliced GPU, 1/R under MPS, milli/1000, and a MIG
 * instance's SM count over the GPU's. */
double sharing_compute(const struct sharing *sh, const struct gpu_type *gpu,
		       const struct sharing_ask *a);

/* The fraction of the GPU's memory system one unit has: memory slices/8 of
 * a MIG instance, else 1 (MPS and fractional pods share the whole bus). */
double sharing_memory_share(const struct sharing *sh, const struct sharing_ask *a);

/* GPUs' worth one placed pod holds on n GPUs (n = 1 for MIG and milli). */
double sharing_pod_equivalent(const struct sharing *sh, const struct sharing_ask *a, int32_t n);

/* What the bill charges per GPU equivalent held: 1, but under MIG 7 over
 * the compute slices the layout's instances use, so that a slice no
 * instance can use (the 7th beside two 3g.40gb) is charged to the tenants
 * of the layout, not left idle: an instance costs g / (its layout's g). */
double sharing_charge(const struct sharing *sh);

/* Whether a unit's memory is isolated (MPS, MIG, fractional limits): a pod
 * cannot use more than its unit's, so placement keeps it from overflowing.
 * On exclusive and time-sliced GPUs a pod may use the whole GPU's memory,
 * and the pods of one GPU together can overflow it (an OOM kill). */
bool sharing_isolates_memory(const struct sharing *sh);

/* Whether co-tenants contend for a pod's SMs: time-slicing's serialized
 * kernels, MPS clients and fractions (milli requests) on one GPU.  Not on an
 * exclusive GPU, a whole GPU of a fractional pool, or a MIG instance. */
bool sharing_contended(const struct sharing *sh, enum gpu_request request);

/* Whether the pods on the GPUs of mask overflow a GPU's memory, vram[i]
 * being what GPU i of the node holds: only where memory is not isolated;
 * elsewhere placement prevented it. */
bool sharing_overflows(const struct sharing *sh, double memory, const double *vram, uint64_t mask);

/* GPUs' worth of one pod in a pool of these GPUs, or 0 when the pool cannot
 * run it: the unit is not offered, the node has fewer GPUs than the pod asks
 * for, or the unit's isolated memory is smaller than the pod's VRAM. */
double sharing_equivalent(const struct sharing *sh, const struct gpu_type *gpu,
			  int32_t gpus_per_node, const struct sharing_ask *a);

#endif
