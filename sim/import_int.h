/*
 * import_int.h - what the files of `gpuplan import` share (import.h is the
 * public face): the located JSON/YAML reader, the cluster as read (nodes,
 * pods) and the model the scenario is written from (pools, workloads).
 *
 * Files: import.c (orchestration, grouping, the YAML writer), import_read.c
 * (typed access with JSON paths in errors), import_nodes.c (nodes -> pools),
 * import_pods.c (pods), import_extra.c (Kueue, DCGM, OpenCost, prices).
 * Everything is owned by struct imp and freed by imp_free; strings that
 * come from the input trees point into them (the trees live as long), but
 * for the pods' and the nodes', whose trees go once they are read
 * (pod_strings, node_strings).
 */
#ifndef GPUPLAN_IMPORT_INT_H
#define GPUPLAN_IMPORT_INT_H

#include "gpuplan/catalog.h"
#include "gpuplan/import.h"
#include "gpuplan/scenario.h"
#include "gpuplan/strindex.h"
#include "gpuplan/ytree.h"

/* --- reading (import_read.c) ----------------------------------------------- */

/* Where a reader is: the file's tree and the JSON path of the current node. */
struct imp_file {
	const char *path;
	struct ytree *tree;
	char jpath[512];
	size_t len;
	struct gp_err *err;
};

int imp_open(struct imp_file *f, const char *path, struct gp_err *err);
/* The same for `kubectl get nodes|pods -o json`: what import never reads of
 * a node or pod (images, probes, env, managedFields ...) left out. */
int imp_open_kube(struct imp_file *f, const char *path, struct gp_err *err);
/* The same from text in memory, named name in errors. */
int imp_open_text(struct imp_file *f, const char *name, const char *text, size_t len,
		  struct gp_err *err);
void imp_close(struct imp_file *f);

/* String *s kept in x, so that its file's tree can go: every string is
 * added on pass 0, then (x whole, its keys no longer moving) pointed at on
 * pass 1.  NULL stays NULL. */
void imp_keep(struct strindex *x, int pass, char **s);

/* Path steps: push returns the length to pop back to.  A key is one key,
 * whatever it holds (.spec, ["nvidia.com/gpu"]); steps are a path written in
 * the code, appended as they are ("spec.taints" gives .spec.taints). */
size_t imp_push_key(struct imp_file *f, const char *key);
size_t imp_push_path(struct imp_file *f, const char *steps);
size_t imp_push_index(struct imp_file *f, size_t i);
void imp_pop(struct imp_file *f, size_t len);

/* "FILE:LINE:COL: error: PATH[.key]: MESSAGE" (key, one key, may be NULL). */
int imp_error(struct imp_file *f, const struct ynode *at, const char *key, const char *fmt, ...)
	GP_PRINTF(4, 5);
/* The same at PATH.steps, steps written in the code ("metadata.name"). */
int imp_error_at(struct imp_file *f, const struct ynode *at, const char *steps, const char *fmt,
		 ...) GP_PRINTF(4, 5);

bool imp_is_null(const struct ynode *v);

/* The member key of map m (NULL when absent or null); an error when m is not
 * a map or the member has the wrong kind. */
int imp_map(struct imp_file *f, const struct ynode *m, const char *key, const struct ynode **out);
int imp_seq(struct imp_file *f, const struct ynode *m, const char *key, const struct ynode **out);
int imp_str(struct imp_file *f, const struct ynode *m, const char *key, const char **out);
int imp_int(struct imp_file *f, const struct ynode *m, const char *key, int64_t *out);
int imp_num(struct imp_file *f, const struct ynode *m, const char *key, double *out);
int imp_time(struct imp_file *f, const struct ynode *m, const char *key, int64_t *out);

/* The `items` of a kubectl List whose items are of kind (NULL: any kind). */
int imp_list(struct imp_file *f, const char *kind, const struct ynode **items);

/* A Kubernetes quantity as a number: "500m" cores, "16Gi" bytes (the binary
 * and decimal suffixes Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E, or
 * an exponent, 12e6), from 0 to INT64_MAX exactly. */
int imp_quantity(struct imp_file *f, const struct ynode *v, const char *key, double *out);

/* A label key or value as the API server checks it (scenario.h, the
 * loader's own definition), named at key of the reader's path and in where
 * ("nodeSelector"): taint keys and values follow the same rules. */
int imp_label_key(struct imp_file *f, const struct ynode *at, const char *key, const char *label,
		  const char *where);
int imp_label_value(struct imp_file *f, const struct ynode *at, const char *key, const char *value,
		    const char *where);

/* Every key and value of a metadata.labels map (NULL: none) checked as above,
 * at PATH.labels["key"]: labels are written into the scenario. */
int imp_labels(struct imp_file *f, const struct ynode *labels, const char *where);

/* An object's name as the API server checks it (scenario.h): a namespace is
 * a DNS label, a pod, node or owner name a DNS subdomain, a kind up to 63
 * letters and digits; what names it in the error ("namespace"). */
enum imp_dns { IMP_DNS_LABEL, IMP_DNS_SUBDOMAIN, IMP_DNS_KIND };
int imp_dns_name(struct imp_file *f, const struct ynode *at, const char *key, const char *name,
		 enum imp_dns rule, const char *what);
/* "Kind namespace/name" with each part at its longest. */
#define IMP_CONTROLLER_MAX (63 + 1 + 63 + 1 + 253 + 1)

/* --- the cluster as read ---------------------------------------------------- */

struct imp_mig {
	const struct mig_profile *profile;
	int32_t per_gpu;
};

/* What makes nodes interchangeable: two nodes of equal shape are one pool. */
struct imp_shape {
	const struct gpu_type *gpu; /* NULL: no GPUs */
	const char *product;        /* the node's product label, when it is not the
				      * catalog's (SHARED, MIG suffixes); NULL otherwise */
	int32_t gpus;               /* physical */
	double gpu_memory;          /* nvidia.com/gpu.memory in bytes where it is not the
				     * catalog's NVML total; 0 otherwise */
	enum sharing_mode sharing;  /* never fractional: no label says it */
	int32_t replicas;
	bool renamed; /* renameByDefault: the replicas are nvidia.com/gpu.shared */
	struct imp_mig mig[8];
	size_t n_mig;
	double cpu, memory; /* allocatable, less DaemonSet and static pods */
	struct kv *labels;  /* those pods select on, sorted by key */
	size_t n_labels;
	struct taint *taints; /* owned array; strings point into the tree */
	size_t n_taints;
};

struct imp_node {
	const char *name;
	const struct ynode *labels; /* metadata.labels (a map, or NULL); NULL once
				     * the nodes are read, their tree gone */
	size_t jlen;                /* the length of its JSON path, .items[i] */
	struct srcloc loc;
	struct imp_shape shape;
	int32_t pool, index; /* index: the node's number in its pool */
};

enum imp_phase { PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED, PHASE_FAILED, PHASE_OTHER };

/* A requirement as read (nodeSelector entries become In with one value). */
struct imp_req {
	const char *key;
	enum affinity_op op;
	const char **values;
	size_t n_values;
};

struct imp_tol {
	const char *key, *value; /* "" when absent */
	enum toleration_op op;
	int effect; /* enum taint_effect, -1 = all */
};

struct imp_pod {
	const char *ns, *name;
	struct kv *labels; /* metadata.labels' scalars (showback, budgets); owned array */
	size_t n_labels;
	char controller[IMP_CONTROLLER_MAX]; /* "Deployment ml/vllm" */
	bool node_level;                     /* DaemonSet or static pod: charged to its node */
	bool service;                        /* restartPolicy Always */
	enum imp_phase phase;
	const char *node;            /* spec.nodeName; NULL when unbound */
	struct srcloc loc, node_loc; /* the item's, spec.nodeName's */
	/* request */
	int32_t gpus;         /* nvidia.com/gpu (or nvidia.com/gpu.shared) limits */
	bool shared;          /* they are nvidia.com/gpu.shared (renameByDefault) */
	const char *mig;      /* nvidia.com/mig-<profile>: the profile */
	double cpu, memory;   /* requests (max of containers' sum and any init) */
	struct imp_req *reqs; /* owned */
	size_t n_reqs;
	struct imp_tol *tols; /* owned */
	size_t n_tols;
	int64_t priority;
	bool never;            /* spec.preemptionPolicy Never */
	int64_t grace;         /* spec.terminationGracePeriodSeconds (default 30) */
	const char *queue;     /* kueue.x-k8s.io/queue-name */
	uint8_t safe_to_evict; /* enum safe_to_evict: cluster-autoscaler.kubernetes.io/
				* safe-to-evict "false" or "true" */
	bool local_storage;    /* a hostPath or disk-backed emptyDir volume not named by
				* cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes */
	uint8_t pdb;           /* enum pdb_kind: the first PodDisruptionBudget selecting it
				* (--pdbs, import_pdb.c) */
	int32_t pdb_value;
	const char *pdb_ns, *pdb_name; /* the budget's, in its tree */
	/* history */
	int64_t created, started, finished; /* epoch seconds; -1 unknown */
	const char *message;                /* PodScheduled False: its message */
	const char *reason; /* ... and its reason (Unschedulable, SchedulingGated) */
	bool gated;         /* spec.schedulingGates not empty */
	/* DCGM, per pod: sums and sample counts */
	double busy, sm, fb;
	int32_t n_busy, n_sm, n_fb;
	double real_cost; /* OpenCost */
};

/* --- the model --------------------------------------------------------------- */

struct imp_pool {
	char name[64];
	struct imp_shape shape; /* the first node's (equal for all) */
	int32_t *nodes;         /* node indexes, owned */
	size_t n_nodes;
	struct price price;
	bool priced;
};

/* A resource group of a ClusterQueue: the covered resources gpuplan models
 * (names in the tree) and its flavors, in order (indexes into imp.flavors). */
struct imp_group {
	const char **covered;
	size_t n_covered;
	int32_t *flavors;
	size_t n_flavors;
};

struct imp_queue {
	const char *name, *cohort, *strategy, *reclaim, *within;
	const char *when_borrow, *when_preempt; /* spec.flavorFungibility; NULL: absent */
	size_t item;                            /* its index in the file's .items */
	struct quota_entry *quota; /* per (flavor, resource): .flavor indexes imp.flavors;
				    * resource names point into the tree; owned array */
	size_t n_quota;
	struct imp_group *groups; /* owned, with their arrays */
	size_t n_groups;
};

/* A ResourceFlavor (spec.nodeLabels, nodeTaints, tolerations: the tree's
 * nodes, NULL when absent), or a flavor a ClusterQueue names without one
 * (item SIZE_MAX). */
struct imp_flavor {
	const char *name;
	const struct ynode *labels, *taints, *tolerations;
	size_t item;
};

struct imp_local_queue {
	const char *ns, *name, *cluster_queue;
	size_t item;
};

struct imp_cohort {
	const char *name, *parent;
	size_t item; /* SIZE_MAX: named by a queue, without an object of its own */
};

struct imp_gpu_price {
	const char *type; /* catalog name, or "cpu" */
	struct price price;
	double gpu_cost, gpu_hours, cpu_cost, cpu_hours, ram_cost, gib_hours; /* OpenCost sums */
	bool given;                                                           /* from --prices */
};

/* Where a --dcgm sample goes when the pods are not a snapshot's (import
 * --history): field 0 engine activity, 1 SM activity, 2 framebuffer MiB. */
typedef void (*imp_dcgm_sink)(void *ctx, int field, const char *ns, const char *pod, double v);

struct imp {
	const struct import_options *o;
	struct gp_err *err;
	imp_dcgm_sink dcgm_sink; /* NULL: the samples go to the snapshot's pods */
	void *dcgm_ctx;
	struct imp_file nodes_f, pods_f, kueue_f, dcgm_f, cost_f, prices_f, pdb_f;
	struct imp_node *nodes;
	size_t n_nodes;
	struct strindex node_ids;     /* node names, id = index into nodes */
	struct strindex node_strings; /* the nodes' labels, taints and products,
				       * once their file's tree is gone */
	struct strindex pod_strings;  /* the pods' strings, once theirs is gone */
	struct strindex warned;       /* the warnings given, hashed: each once */
	struct strindex selected;     /* the label keys pods select on (imp_read_pods) */
	struct imp_pod *pods;
	size_t n_pods;
	struct imp_pool *pools;
	size_t n_pools;
	struct imp_queue *queues;
	size_t n_queues;
	struct imp_local_queue *local_queues;
	size_t n_local_queues;
	struct imp_cohort *cohorts;
	size_t n_cohorts;
	struct strindex cohort_ids; /* cohort names, id = index into cohorts */
	struct imp_flavor *flavors;
	size_t n_flavors;
	struct imp_gpu_price *prices;
	size_t n_prices;
	int64_t snapshot;
	int32_t kube_minor; /* the control plane's release 1.N (its kubelet's, else
			     * the newest kubelet's); 0: unknown */
	int32_t kube_plane; /* the control plane's kubelet's, while reading */
	sim_time horizon;
	int64_t cost_start, cost_end; /* OpenCost window; 0 without */
	struct import_result *r;
};

void imp_warn(struct imp *im, const char *fmt, ...) GP_PRINTF(2, 3);
void imp_free(struct imp *im);

/* import.c: the writer's pieces import_history.c shares.  imp_quoted writes
 * s as a double-quoted YAML scalar (control characters escaped), so any
 * name is safe in YAML and in comments. */
void imp_quoted(FILE *out, const char *s);
/* s in a comment: as it is, or imp_quoted when it holds a control character
 * (a line break would end the comment), a quote or a backslash. */
void imp_comment_text(FILE *out, const char *s);
void imp_write_duration(FILE *out, sim_time t);
void imp_write_bytes(FILE *out, double b);
void imp_write_pool(FILE *out, const struct imp *im, const struct imp_pool *p);

/* import_nodes.c: reads the nodes (after the pods: DaemonSet requests and the
 * label keys pods select on are needed) and groups them into pools. */
int imp_read_nodes(struct imp *im);
int imp_node_index(const struct imp *im, const char *name);
/* Refuses a pod bound to a node that does not have the GPUs it asks for, at
 * the pod's spec.nodeName (import_pods.c); after imp_read_nodes. */
int imp_check_bound(struct imp *im);
/* The value the simulated node has for kubernetes.io/hostname. */
void imp_hostname(const struct imp *im, int32_t node, char *buf, size_t len);

/* import_pods.c */
int imp_read_pods(struct imp *im);
/* Whether some pod selects on label key (nodeSelector or affinity). */
bool imp_selected_key(const struct imp *im, const char *key);

/* import_extra.c */
int imp_read_kueue(struct imp *im);
int imp_read_dcgm(struct imp *im);
int imp_read_opencost(struct imp *im);
int imp_read_prices(struct imp *im);
int imp_read_pdbs(struct imp *im);
/* A pod's LocalQueue, or NULL. */
const struct imp_local_queue *imp_local_queue(const struct imp *im, const struct imp_pod *p);
/* The ClusterQueue of a pod's LocalQueue, or NULL. */
const char *imp_cluster_queue(const struct imp *im, const struct imp_pod *p);
/* Why pod p, which names a LocalQueue, has no queue (a note). */
void imp_warn_no_queue(struct imp *im, const struct imp_pod *p);
/* resource_flavors, cohorts and cluster_queues as read from --kueue. */
void imp_write_queues(FILE *out, const struct imp *im);

#endif
