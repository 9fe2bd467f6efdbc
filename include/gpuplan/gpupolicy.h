/*
 * gpupolicy.h - the GPU-sharing placement policies of Weng et al., "Beware of
 * Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
 * Descent" (USENIX ATC'23), and the paper's fragmentation measure.
 *
 * The definitions follow the authors' simulator
 * (github.com/hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin
 * and pkg/utils/frag.go) as the paper's experiments ran it, integer scores
 * and all (see gpupolicy.c for each formula and its source).
 *
 * The module is pure: it reads a node's free resources (struct
 * gpupolicy_node) and a pod's request (struct gpupolicy_pod) and answers
 * whether the pod fits, how a policy scores the node, which GPUs the policy
 * gives the pod inside the node, and how fragmented the node is under a
 * target workload.  Callers own the nodes, choose among the scored nodes
 * (the highest score; inflation.c and gpuplace.c say how they break ties)
 * and apply the placement with gpupolicy_take.
 *
 * Units: CPU in milli-cores, memory in MiB, GPU in milli-GPUs (1000 = one
 * GPU), as in the openb trace.
 */
#ifndef GPUPLAN_GPUPOLICY_H
#define GPUPLAN_GPUPOLICY_H

#include "gpuplan/common.h"

#include <gsl/gsl_rng.h>

enum gpu_policy {
	GPU_POLICY_BEST_FIT, /* the default */
	GPU_POLICY_RANDOM,
	GPU_POLICY_DOT_PRODUCT,
	GPU_POLICY_GPU_CLUSTERING,
	GPU_POLICY_GPU_PACKING,
	GPU_POLICY_FGD,
	GPU_POLICY_COUNT
};

/* The scenario names, in enum order: "best-fit", "random", ... */
extern const char *const gpupolicy_names[GPU_POLICY_COUNT];

#define GPUPOLICY_MILLI     1000          /* milli-GPUs of one GPU */
#define GPUPOLICY_MAX_GPUS  64            /* per node (a pool's limit) */
#define GPUPOLICY_UNLIMITED INT32_MAX / 2 /* cpu_left of a node that does not limit CPU */
/* Affinity tags of GPU clustering: 0 shares a GPU, k = k whole GPUs. */
#define GPUPOLICY_TAGS      (GPUPOLICY_MAX_GPUS + 1)

/*
 * A node's free resources.  free[] holds the free milli-GPUs of each GPU;
 * milli_left, whole_free and max_free are kept from it by gpupolicy_take
 * (gpupolicy_node_init sets them).  type is the bit of the node's GPU type in
 * the callers' type masks (below 32).  tag_count counts the GPU pods on the
 * node per affinity tag, for GPU clustering.
 */
struct gpupolicy_node {
	int32_t cpu_left; /* milli-cores; GPUPOLICY_UNLIMITED when not limited */
	int32_t gpus;
	int64_t memory_left; /* MiB; INT64_MAX when not limited */
	int32_t milli_left;  /* sum of free[] */
	int32_t whole_free;  /* GPUs with all their milli free */
	int32_t max_free;    /* largest free[] */
	int32_t type;
	bool shares;    /* GPUs may be shared (milli requests); else whole GPUs only */
	int32_t n_tags; /* distinct affinity tags among its GPU pods */
	int16_t free[GPUPOLICY_MAX_GPUS];
	uint16_t tag_count[GPUPOLICY_TAGS];
};

/* What a pod asks for. */
struct gpupolicy_pod {
	int32_t cpu;    /* milli-cores */
	int32_t gpus;   /* 0: a CPU-only pod */
	int32_t milli;  /* per GPU: 1..999 shares one GPU (gpus == 1), 1000 whole GPUs, 0 none */
	uint32_t types; /* allowed GPU types (bit = type); 0: any */
	int64_t memory; /* MiB */
};

/* One shape of the target workload and its share of the pods. */
struct gpupolicy_shape {
	int32_t cpu, gpus, milli;
	uint32_t types;
	double freq;
};

/* The target workload FGD measures fragmentation against: the most frequent
 * pod shapes (cpu, gpus, milli, allowed types) of a workload. */
struct gpupolicy_target {
	struct gpupolicy_shape *shapes; /* freqs sum to 1; built targets order them by milli */
	size_t n, cap;
};

/* A node of `gpus` GPUs, all free, with cpu_milli and memory_mib (<= 0: not limited). */
void gpupolicy_node_init(struct gpupolicy_node *n, int32_t gpus, int64_t cpu_milli,
			 int64_t memory_mib, int32_t type, bool shares);

/* Recomputes the aggregates (milli_left, whole_free, max_free, n_tags) after
 * a caller set free[] and tag_count[] itself. */
void gpupolicy_node_refresh(struct gpupolicy_node *n);

/* Whether the pod passes the filters on the node: GPU type (gpu_spec),
 * CPU, memory, and GPUs (a GPU with milli free, or `gpus` whole free GPUs). */
bool gpupolicy_fits(const struct gpupolicy_node *n, const struct gpupolicy_pod *p);

/* The policy's score of a node that fits the pod (higher is better); the
 * target is read by FGD only (may be NULL otherwise).  Random scores 0. */
int64_t gpupolicy_score(enum gpu_policy policy, const struct gpupolicy_node *n,
			const struct gpupolicy_pod *p, const struct gpupolicy_target *t);

/* The GPUs the policy gives the pod on a node that fits it, as a mask of
 * GPU indexes (0 for a CPU-only pod).  rng: random's draw (may be NULL
 * for the other policies). */
uint64_t gpupolicy_choose(enum gpu_policy policy, const struct gpupolicy_node *n,
			  const struct gpupolicy_pod *p, const struct gpupolicy_target *t,
			  gsl_rng *rng);

/* Takes what the pod asks for on the GPUs of mask. */
void gpupolicy_take(struct gpupolicy_node *n, const struct gpupolicy_pod *p, uint64_t mask);

/* The node's fragmentation under the target, in milli-GPUs: the expected
 * free GPU milli that a pod drawn from the target could not use there
 * (gpupolicy.c has the definition). */
double gpupolicy_frag(const struct gpupolicy_node *n, const struct gpupolicy_target *t);

/* The target workload of pods[0 .. n-1]: shapes by decreasing count (ties
 * by cpu, milli, gpus, types), the most frequent ones until they cover
 * popularity (0..1] of the pods, their frequencies renormalized; then
 * ordered by milli (the sum does not care, and frag reads GPUs once per milli). */
void gpupolicy_target_build(struct gpupolicy_target *t, const struct gpupolicy_pod *pods, size_t n,
			    double popularity);

/* The same in steps: an empty target, pods of one shape with a weight (their
 * count), then the cut at popularity and the renormalization. */
void gpupolicy_target_add(struct gpupolicy_target *t, const struct gpupolicy_pod *p, double weight);
void gpupolicy_target_finish(struct gpupolicy_target *t, double popularity);
void gpupolicy_target_free(struct gpupolicy_target *t);

/* The affinity tag of a GPU pod (GPU clustering); -1 for a CPU-only pod. */
int gpupolicy_tag(const struct gpupolicy_pod *p);

#endif
