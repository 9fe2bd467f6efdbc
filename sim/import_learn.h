/*
 * import_learn.h - the history as read (import_history.c) and learned
 * (import_learn.c): pods, nodes and workloads of `import --history`.
 * Strings are interned in hist.strings (ids, HIST_NONE for none).
 */
#ifndef GPUPLAN_IMPORT_LEARN_H
#define GPUPLAN_IMPORT_LEARN_H

#include "import_int.h"

#include "gpuplan/strindex.h"

#define HIST_NONE       UINT32_MAX
#define HIST_MAX_MIG    8
#define HIST_MAX_TAINTS 8

enum hist_label {
	HL_JOBSET,
	HL_TRAINING,
	HL_RAY_CRD,
	HL_RAY_CR,
	HL_RAY_CLUSTER,
	HL_POD_GROUP,
	HL_NOTEBOOK,
	HL_COMPONENT,
	HL_HUB_USER,
	HL_TEMPLATE_HASH,
	HL_QUEUE, /* kueue.x-k8s.io/queue-name: its LocalQueue */
	HIST_N_LABELS
};
extern const char *const hist_label_names[HIST_N_LABELS];

/* phase: 0 unknown, 1 Pending, 2 Running, 3 Succeeded, 4 Failed, 5 Unknown */
struct hist_pod {
	uint32_t ns, name, node, owner_kind, owner_name;
	uint32_t labels[HIST_N_LABELS];
	double created, scheduled, started, completed, first_seen, last_seen; /* NAN: unknown */
	uint8_t phase;
	bool gpu_requested, mig_requested, shared, has_busy, has_sm, has_fb, vllm;
	double gpus;  /* nvidia.com/gpu (or .shared replicas) */
	uint32_t mig; /* profile, "3g.40gb" */
	double mig_count;
	double cpu, memory;
	double busy, sm, fb;
	double x_busy, x_sm, x_fb; /* --dcgm's samples: sums, and their counts */
	uint32_t nx_busy, nx_sm, nx_fb;
	double vllm_prompt, vllm_gen, vllm_requests;
	double vllm_hourly[24];
	int32_t vllm_hours[24];
	uint32_t model;
	int32_t workload; /* -1: left out */
	int32_t same;     /* the pod before it of the same namespace and name; -1 */
	uint32_t instance;
};

struct hist_node {
	uint32_t name;
	uint32_t labels[6]; /* import_history.c's node_labels order */
	bool seen_labels;
	double cpu, memory, gpus;
	uint32_t mig[HIST_MAX_MIG];
	double mig_count[HIST_MAX_MIG];
	size_t n_mig;
	uint32_t taint_key[HIST_MAX_TAINTS], taint_value[HIST_MAX_TAINTS],
		taint_effect[HIST_MAX_TAINTS];
	size_t n_taints;
};

struct hist_wl {
	char name[64]; /* in the scenario */
	uint32_t kind, ns, ctl;
	bool service, gang;
	size_t n_pods;
	uint32_t queue;     /* its first pod's LocalQueue, HIST_NONE: none */
	uint32_t queue_pod; /* that pod */
};

struct hist_map {
	struct strindex index; /* "ns\x1fname" */
	uint32_t *values;
	size_t cap;
};

struct hist {
	const struct import_options *o;
	struct gp_err *err;
	const char *dir;
	struct imp *im;
	int64_t from, to;
	char from_text[64], to_text[64];
	struct strindex strings, pod_index, node_index, wl_index, instance_index;
	struct strindex name_index; /* "ns\x1fpod" -> name_last */
	int32_t *name_last;         /* per name: its latest pod */
	size_t cap_names;
	struct strindex req_index; /* "pod\x1fcontainer\x1fresource\x1flimits" -> req_max */
	double *req_max;
	size_t cap_req;
	struct hist_pod *pods;
	size_t n_pods, cap_pods;
	struct hist_node *nodes;
	size_t n_nodes, cap_nodes;
	struct hist_wl *wls;
	size_t n_wls, cap_wls;
	struct hist_map job_cronjob, rs_deployment, cronjob_schedule;
	char **paths;
	size_t n_paths, n_files, n_cpu_only;
	char *nodes_text;
	size_t nodes_len;
	size_t *slot;              /* hist_learn's: instance -> its index + 1 */
	struct strindex imp_nodes; /* the pools' nodes by name: id = index in im->nodes */
	bool warned_node;
};

uint32_t hist_intern(struct hist *h, const char *s);
const char *hist_str(const struct hist *h, uint32_t id);
uint32_t hist_map_get(const struct hist *h, const struct hist_map *m, uint32_t ns, uint32_t name);
/* name less its generated suffixes ("eval-28412345" -> "eval"). */
void hist_stem(const char *name, char *out, size_t size);

/* import_learn.c: learns every workload and writes r's yaml and csv. */
int hist_learn(struct hist *h);

#endif
