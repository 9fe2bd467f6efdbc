/*
 * diagnose_int.h - private to diagnose*.c: the run's windows (struct view),
 * the drafts of findings and the helpers the families of findings share.
 */
#ifndef GPUPLAN_DIAGNOSE_INT_H
#define GPUPLAN_DIAGNOSE_INT_H

#include "gpuplan/diagnose.h"

#include "gpuplan/cluster.h"
#include "gpuplan/placement.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum step {
	STEP_ALLOCATION = FINDING_ALLOCATION,
	STEP_MEMORY = FINDING_MEMORY,
	STEP_PLACEMENT = FINDING_PLACEMENT,
	STEP_APPLICATION = FINDING_APPLICATION,
	STEP_CAPACITY = FINDING_CAPACITY
};

/* --- the run's windows ----------------------------------------------------- */

/* A finding before ranking. */
struct draft {
	struct finding f;
	enum step step;
	double weight; /* how much it explains: larger ranks first within a step */
	size_t seq;    /* ties keep the order found */
};

struct view {
	const struct scenario *sc;
	struct results *r;
	size_t n_scopes, n_windows;
	double *len;     /* seconds of each window */
	double span;     /* seconds of all windows */
	double active;   /* seconds of the windows in which there was work (demand,
			  * pending or allocated GPUs): shares are of these, so a
			  * quiet night or a long horizon dilutes no finding */
	double *pend;    /* per workload: pending pod-seconds in the pool's windows */
	uint8_t *allow;  /* [w * pools + p]: 0 not yet known, 1 no, 2 yes */
	bool has_placer; /* built on first use: the rules of placement */
	struct cluster cluster;
	struct placer placer;
	struct draft *drafts;
	size_t n_drafts, cap_drafts;
};

/* What workload w pended with messages that give a kind in mask (PEND_BIT):
 * pod-seconds, pods that began to wait with them, the longest message (NULL:
 * none) and every kind those messages give.  One pass over the rows. */
struct diagnose_pend {
	double seconds;
	int64_t pods;
	const char *top;
	uint32_t kinds;
};
struct diagnose_pend diagnose_pending(const struct view *v, size_t w, uint32_t mask);

struct finding *diagnose_add(struct view *v, enum step step, enum finding_kind kind, double weight,
			     int pool, int workload);
bool diagnose_allowed(struct view *v, size_t w, size_t p);
void diagnose_fix_quant(struct finding *f, const struct workload_spec *w, enum quant q);
void diagnose_fix_replicas(struct finding *f, const struct pool_spec *p, enum sharing_mode mode,
			   int32_t r);
double diagnose_metric(const struct view *v, const char *scope, enum metric_id id);
double diagnose_offered_rate(const struct inference_spec *in);
const struct placer *diagnose_placer(struct view *v);
size_t diagnose_pool_scope(const struct view *v, size_t p);
int32_t diagnose_reason_id(const struct view *v, const char *text);
const struct ts_row *diagnose_row(const struct view *v, size_t k, size_t scope);
size_t diagnose_workload_scope(const struct view *v, size_t w);
/* The pool of a job row's node (results.node_names' index); -1: none. */
int32_t diagnose_node_pool(struct view *v, int32_t node);
bool diagnose_matters(const struct view *v, double pod_seconds);
void diagnose_evidence(struct view *v);
/* Whether window k had work in it (demand, pending, allocated or running):
 * the windows v->active sums. */
bool diagnose_window_active(const struct view *v, size_t k);
/* diagnose_binds.c: contention, priority, start-up, reclaim and MIG-profile
 * findings of workloads no other finding names, from their late jobs. */
void diagnose_binds(struct view *v);
/* An admission finding fd about workload w names the lending limit of an
 * idle queue of its cohort that keeps GPUs to itself, when there is one. */
void diagnose_lender(struct view *v, struct finding *fd, size_t w);
void diagnose_deadline(struct view *v, size_t w);
/* The pools workload w's rules keep it off though their GPUs would hold it
 * (for a spread constraint: the pools it may use), into hidden; their idle
 * and capacity GPU-seconds, seconds and most GPUs idle at once over the
 * windows k when(v, w, k) holds, added to *g.  Returns how many. */
size_t diagnose_hidden_idle(struct view *v, size_t w, bool spread_only,
			    bool (*when)(const struct view *v, size_t w, size_t k), size_t *hidden,
			    struct finding_rules *g);
/* A rules finding's pools (its members) and fixes: w without each rule. */
void diagnose_rule_fixes(struct finding *f, const struct workload_spec *ws, const size_t *hidden,
			 size_t nh);

#endif
