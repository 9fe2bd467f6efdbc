/*
 * opencost.h - a run's allocations in the shape of OpenCost's /allocation API
 * response, so cost dashboards and scripts that read OpenCost can read
 * simulated plans (docs/cost.md).
 *
 * The envelope is {"code":200,"status":"success","data":[SET, ...]}, one set
 * per window (or one with accumulate), each a map from allocation name to an
 * allocation with every field of OpenCost's AllocationJSON
 * (core/pkg/opencost/allocation_json.go), in its order: name, properties,
 * window, start, end, minutes, cpuCores ... totalEfficiency, lbAllocations,
 * sharedCostBreakdown.  Units as OpenCost's: hours, core-hours, byte-hours,
 * bytes, cores, GPUs, the currency's units, efficiencies as fractions.
 * properties: cluster (the scenario), namespace, controller (the workload)
 * and controllerKind (Job for batch work, Deployment for servers), labels,
 * and gpuplan's own pool (when the workload's pods used one) and queue; an
 * aggregated allocation keeps only cluster and what it is aggregated by, as
 * OpenCost's AggregateBy does.  gpuplan charges requests: cpu and memory
 * usage are the requests (efficiency 1 where requested), GPU usage is the
 * engine activity DCGM reports.  Network, load balancer, persistent volume,
 * adjustment, external and shared costs are 0: gpuplan does not model them.
 * Figures are written whole, not rounded to OpenCost's 5 decimals, so they
 * add up to the allocations table.  With idle_by_node the rows are those of
 * node_allocations (a run of cost: {idle_by: node}): per workload and node,
 * keyed NODE/WORKLOAD with a node property, one set over the run, and
 * --share-idle shares each node's idle on that node (OpenCost's idleByNode).
 */
#ifndef GPUPLAN_OPENCOST_H
#define GPUPLAN_OPENCOST_H

#include "gpuplan/results.h"

#include <stdio.h>

/* What /allocation/compute's parameters ask for. */
enum opencost_aggregate {
	OPENCOST_BY_NONE, /* one allocation per workload, as stored */
	OPENCOST_BY_NAMESPACE,
	OPENCOST_BY_LABEL, /* label:KEY */
	OPENCOST_BY_CONTROLLER,
	OPENCOST_BY_POOL,
	OPENCOST_BY_QUEUE,
	OPENCOST_BY_NODE, /* rows by node only (idle_by_node) */
};

struct opencost_query {
	int64_t start_epoch; /* the scenario's start: rows' times are relative to it */
	const char *cluster; /* properties.cluster: the scenario's name */
	bool window;         /* keep the windows that start in [from, to) */
	int64_t from, to;    /* epoch seconds */
	enum opencost_aggregate aggregate;
	const char *label; /* OPENCOST_BY_LABEL: its key */
	bool accumulate;   /* one set over every window */
	bool share_idle;   /* __idle__ shared per resource by cost (OpenCost's shareIdle) */
	bool idle_by_node; /* the rows by node (node_allocations), idle shared on its node
			    * (OpenCost's idleByNode); one set over the run */
};

/* Parses --aggregate's value (namespace, label:KEY, controller, pool,
 * queue) into q; returns false when it is none of them. */
bool opencost_parse_aggregate(const char *value, struct opencost_query *q);

/* Parses --window's value, START,END in RFC 3339 (OpenCost's window form),
 * into q; returns false when it is not one, or END is not after START. */
bool opencost_parse_window(const char *value, struct opencost_query *q);

/* Writes rows (read back from a database, ordered by window) as q asks. */
void opencost_write(FILE *out, const struct allocation *rows, size_t n,
		    const struct opencost_query *q);

/* Checks report's flags (opencost: --opencost was given) into q; on a
 * wrong one, GP_EINPUT and what is wrong in err (GP_ERR_INPUT: a flag). */
int opencost_flags(bool opencost, const char *window, const char *aggregate,
		   struct opencost_query *q, struct gp_err *err);

struct store;
/* Prints run run_id of the database (0: the latest) as q asks. */
int opencost_report(FILE *out, struct store *st, const char *db, int64_t run_id,
		    struct opencost_query *q, struct gp_err *err);

#endif
