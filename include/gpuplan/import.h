/*
 * import.h - a scenario from a running cluster (`gpuplan import`).
 *
 * import_build reads what users can get from their cluster and turns it
 * into a scenario that reproduces the snapshot:
 *   nodes     `kubectl get nodes -o json` (or -o yaml): nodes of identical
 *             shape become one pool.  GPU type from GPU Feature Discovery's
 *             nvidia.com/gpu.product (a -SHARED suffix under sharing, a
 *             -MIG-<profile> suffix under MIG's single strategy), physical
 *             count from nvidia.com/gpu.count, time-slicing and MPS from
 *             nvidia.com/gpu.replicas and nvidia.com/gpu.sharing-strategy,
 *             MIG layouts from nvidia.com/mig-<profile> allocatable (mixed
 *             strategy); allocatable cpu and memory less what DaemonSet and
 *             static pods request there; taints; the labels pods select on.
 *             CPU-only nodes are pools without GPUs, so that pending
 *             messages count every node as kube-scheduler does.
 *   pods      `kubectl get pods -A -o json`: pods become workloads grouped by
 *             controller (Deployment through its ReplicaSet's
 *             pod-template-hash, StatefulSet, Job, other owners, bare pods)
 *             and by request.  Running pods start on their own node at the
 *             snapshot (a workload per node, pinned by kubernetes.io/hostname
 *             affinity); pending pods arrive at the snapshot, which is the
 *             scenario's start.  Services (restartPolicy Always) run for the
 *             whole horizon; batch pods for the mean run time of their
 *             controller's finished pods, running ones for the remainder.
 *   kueue     `kubectl get clusterqueues,localqueues,resourceflavors,cohorts
 *             -o yaml`: ClusterQueues become queues, pods join the queue their
 *             kueue.x-k8s.io/queue-name LocalQueue points to.
 *   dcgm      a dcgm-exporter scrape (Prometheus text) or a Prometheus
 *             /api/v1/query_range response: gpu_busy, sm_share and vram per
 *             workload, matched by the exporter's namespace and pod labels.
 *   opencost  an OpenCost /allocation response: prices per GPU type, and the
 *             real cost per workload over its window (import_check compares
 *             it with the simulated cost of the same window).
 *   prices    a YAML map {GPU-TYPE: {gpu_hour, cpu_hour, gib_hour}}; "cpu"
 *             names CPU-only pools.  Wins over OpenCost's prices.
 * Errors name the file, line and column and the JSON path of the value
 * ("nodes.json:12:9: error: .items[0].status.allocatable.cpu: ..."); nothing
 * is produced.  What gpuplan cannot model is dropped with a warning.
 *
 * import_check loads the written scenario, simulates the first second of
 * the snapshot and sets each pending pod's real PodScheduled message beside
 * gpuplan's; with OpenCost, it also simulates the allocation window and
 * sets each workload's simulated cost beside the real one.
 *
 * The results own their strings; free them with import_result_free and
 * import_check_free.  Nothing here prints.
 */
#ifndef GPUPLAN_IMPORT_H
#define GPUPLAN_IMPORT_H

#include "gpuplan/common.h"

#include <stdio.h>

struct import_options {
	const char *nodes;                            /* required */
	const char *pods;                             /* required */
	const char *kueue, *dcgm, *opencost, *prices; /* NULL: not given */
	const char *pdbs;           /* kubectl get pdb -A -o json; NULL: not given */
	const char *const *gpu_map; /* "PRODUCT=TYPE": a product label the catalog lacks */
	size_t n_gpu_map;
	const char *at;       /* snapshot, RFC 3339; NULL: the latest time in the pods */
	sim_time horizon;     /* 0: 24h */
	const char *name;     /* scenario name; NULL: "imported" */
	const char *history;  /* a DIR of scripts/export-history.sh; NULL: none */
	const char *pods_csv; /* with history: the name of the observed pods CSV
			       * the scenario points to (history.pods) */
};

/* A pending pod, for the self-check. */
struct import_pending {
	char *pod;      /* namespace/name */
	char *workload; /* its workload in the scenario */
	char *message;  /* its PodScheduled condition's message; "" when none */
	bool gated;     /* held by a scheduling gate (Kueue admission): the
				      * scheduler never saw it, so messages are not compared */
};

/* A controller's cost over the OpenCost window. */
struct import_cost {
	char *controller; /* "Deployment ml/vllm" */
	double real;      /* OpenCost's totalCost */
};

struct import_result {
	char *yaml; /* the scenario text */
	size_t yaml_len;
	struct import_pending *pending;
	size_t n_pending;
	char **warnings; /* what was approximated or left out */
	size_t n_warnings;
	char **workload_controller; /* per scenario workload, in order: its controller */
	size_t n_workloads;
	struct import_cost *costs; /* with opencost */
	size_t n_costs;
	sim_time cost_window; /* the OpenCost window's length; 0 without */
	size_t n_nodes, n_pools, n_pods, n_running, n_calibrated;
	int64_t snapshot; /* epoch seconds: the scenario's start */
	/* with history: the observed pods (docs/import.md, "Learning a twin") */
	char *csv;
	size_t csv_len;
	char *summary; /* what each workload learned, a line each, for the terminal */
	size_t summary_len;
	size_t n_censored, n_placeholders, n_learned;
};

int import_build(const struct import_options *o, struct import_result *r, struct gp_err *err);
/* import --history: a twin learned from o->history (import_history.c); o->nodes,
 * when given, replaces the DIR's nodes. */
int import_history_build(const struct import_options *o, struct import_result *r,
			 struct gp_err *err);
void import_result_free(struct import_result *r);

struct import_check_row {
	const struct import_pending *pod;
	char *simulated; /* gpuplan's message, or "scheduled on NODE" */
	bool compared;   /* not gated, and the real message is kube-scheduler's */
	bool agree;
};

struct import_check {
	struct import_check_row *rows;
	size_t n_rows, compared, agree;
	double *simulated_cost; /* per import_result.costs */
};

/* Simulates the snapshot of the scenario written at path (r's). */
int import_check(const struct import_result *r, const char *path, struct import_check *out,
		 struct gp_err *err);
void import_check_free(struct import_check *c);

/* What differs between two FitError messages ("0/N nodes are available: C
 * REASON, ..."), clause by clause: the node counts, then each reason whose
 * count differs, in the real message's order and then gpuplan's ("Insufficient
 * nvidia.com/gpu: 2 real, 3 gpuplan; node(s) had untolerated taint {a: b}: 1
 * real only").  Written to buf (NUL-terminated); returns its length, 0 when
 * either is not a FitError message or nothing differs. */
size_t import_fit_diff(const char *real, size_t real_len, const char *sim, size_t sim_len,
		       char *buf, size_t size);

/* What import found and the check's table (pods, real and simulated messages,
 * the count that agree, costs), for the terminal. */
void import_write_check(FILE *out, const struct import_result *r, const struct import_check *c,
			const char *path);

/* How much of msg the self-check compares with real, kube-scheduler's own
 * message: all of it (trailing blanks aside) when real has the
 * " preemption: ..." suffix, else import_message_core's part. */
size_t import_message_compared(const char *real, const char *msg);

/* The message without kube-scheduler's " preemption: ..." suffix (which
 * reports the preemption attempt, not the filters); the length to compare. */
size_t import_message_core(const char *msg);

/* --- learning from history (import --history) ------------------------------ */

/* A distribution fitted to observed durations (seconds): by maximum
 * likelihood, with the Kolmogorov-Smirnov distance of the sample to it and
 * that distance's p-value (the parameters come from the same sample, so the
 * p-value is optimistic: Lilliefors; it ranks the fits and refuses the bad). */
enum import_fit_kind { IMPORT_FIT_LOGNORMAL, IMPORT_FIT_GAMMA, IMPORT_FIT_EMPIRICAL };

struct import_fit {
	enum import_fit_kind kind;
	double mean;  /* seconds */
	double sigma; /* lognormal: of the underlying normal */
	double shape; /* gamma: k */
	double ks_d, p;
	size_t censored; /* runs still going that the parameters took as lower bounds */
};

/* The smallest sample fitted; fewer values are written as they are. */
#define IMPORT_FIT_MIN_N 8
/* A fit whose p-value is below this is refused (empirical instead). */
#define IMPORT_FIT_MIN_P 0.05

/* x[0..n) > 0, sorted ascending. */
void import_fit_lognormal(const double *x, size_t n, struct import_fit *out);
void import_fit_gamma(const double *x, size_t n, struct import_fit *out);
/* P(D_n > d) under the null hypothesis (Stephens' approximation of the
 * Kolmogorov distribution, good for every n). */
double import_ks_pvalue(double d, size_t n);
/* Sorts x and picks: the fit with the larger p-value when it is at least
 * IMPORT_FIT_MIN_P and n >= IMPORT_FIT_MIN_N, else IMPORT_FIT_EMPIRICAL (mean
 * the sample's).  *lognormal and *gamma (either may be NULL) get both fits. */
void import_fit_choose(double *x, size_t n, struct import_fit *out, struct import_fit *lognormal,
		       struct import_fit *gamma);
/* import_fit_choose for complete runs x[0..n) (sorted in place) and runs
 * still going at the period's end, c[0..m) their lengths so far: with m > 0
 * both families are fitted by maximum likelihood with the cut-off runs as
 * right-censored observations (each adds log P(X > c); GSL's simplex), and
 * judged by the KS distance to the Kaplan-Meier estimate (p-value for the n
 * complete runs): long runs cut off by TO raise the mean rather than vanish.
 * Neither fitting: empirical, the complete runs' mean. */
void import_fit_choose_censored(double *x, size_t n, const double *c, size_t m,
				struct import_fit *out, struct import_fit *lognormal,
				struct import_fit *gamma);
/* At most max values that stand for sorted x[0..n): all of them when n <=
 * max, else the quantiles at (i + 0.5) / max.  Returns how many. */
size_t import_fit_quantiles(const double *x, size_t n, double *out, size_t max);

#endif
