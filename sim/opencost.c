/*
 * opencost.c - OpenCost /allocation JSON (see opencost.h).
 *
 * Each window's allocations are shared (--share-idle), aggregated, and
 * accumulated in that order, as /allocation/compute does per step window
 * (pkg/costmodel: QueryAllocation aggregates each step's set, idle shared
 * inside it, then accumulates the sets).
 */
#include "gpuplan/opencost.h"

#include "gpuplan/cost.h"
#include "gpuplan/jsonw.h"
#include "gpuplan/store.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNALLOCATED "__unallocated__"

/* One allocation of the output: a row, or the sum of rows with one key. */
struct item {
	char *key;                    /* its name in the set (owned) */
	const struct allocation *src; /* its first row: where properties come from */
	int64_t set;                  /* the window set it belongs to */
	sim_time start, end;
	double gpu_h, gpu_c, cpu_h, cpu_c, ram_h, ram_c;
	double gpu_used_h; /* engine-active GPU-hours */
	bool idle;
	bool merged; /* the sum of rows that differ: properties are the key's */
};

bool opencost_parse_aggregate(const char *value, struct opencost_query *q)
{
	static const struct {
		const char *name;
		enum opencost_aggregate by;
	} names[] = {{"namespace", OPENCOST_BY_NAMESPACE},
		     {"controller", OPENCOST_BY_CONTROLLER},
		     {"pool", OPENCOST_BY_POOL},
		     {"queue", OPENCOST_BY_QUEUE},
		     {"node", OPENCOST_BY_NODE}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(value, names[i].name)) {
			q->aggregate = names[i].by;
			return true;
		}
	if (!strncmp(value, "label:", 6) && value[6]) {
		q->aggregate = OPENCOST_BY_LABEL;
		q->label = value + 6;
		return true;
	}
	return false;
}

bool opencost_parse_window(const char *value, struct opencost_query *q)
{
	const char *comma = strchr(value, ',');
	char from[64];
	if (!comma || (size_t)(comma - value) >= sizeof from)
		return false;
	memcpy(from, value, (size_t)(comma - value));
	from[comma - value] = '\0';
	if (units_rfc3339(from, &q->from) || units_rfc3339(comma + 1, &q->to) || q->to <= q->from)
		return false;
	q->window = true;
	return true;
}

/* The value of key in a labels JSON object as store writes it (its own
 * escapes: \" and \\), into buf; false when absent. */
static bool label_value(const char *labels, const char *key, char *buf, size_t len)
{
	if (!labels)
		return false;
	const char *p = labels;
	while ((p = strchr(p, '"'))) {
		/* a key starts after '{' or ',' */
		bool is_key = p > labels && (p[-1] == '{' || p[-1] == ',');
		const char *k = ++p;
		size_t n = 0;
		while (*p && *p != '"') {
			p += *p == '\\' && p[1] ? 2 : 1;
			n++;
		}
		if (!*p)
			return false;
		bool match = is_key && n == strlen(key) && !strncmp(k, key, n);
		p++;
		if (!match || *p != ':' || p[1] != '"')
			continue;
		p += 2;
		size_t o = 0;
		while (*p && *p != '"') {
			if (*p == '\\' && p[1])
				p++;
			if (o + 1 < len)
				buf[o++] = *p;
			p++;
		}
		buf[o] = '\0';
		return true;
	}
	return false;
}

static const char *controller_kind(const struct allocation *a)
{
	return a->kind && strcmp(a->kind, "batch") ? "deployment" : "job";
}

/* The key of row a under the aggregation (malloc'd). */
static char *key_of(const struct allocation *a, const struct opencost_query *q)
{
	char buf[512];
	if (!strcmp(a->name, COST_IDLE_NAME))
		return gp_xstrdup(COST_IDLE_NAME);
	const char *v = NULL;
	switch (q->aggregate) {
	case OPENCOST_BY_NONE:
		if (a->node) { /* a pod's key names its node, as OpenCost's does */
			snprintf(buf, sizeof buf, "%s/%s", a->node, a->name);
			v = buf;
		} else {
			v = a->name;
		}
		break;
	case OPENCOST_BY_NODE: v = a->node; break;
	case OPENCOST_BY_NAMESPACE: v = a->namespace; break;
	case OPENCOST_BY_POOL: v = a->pool_name; break;
	case OPENCOST_BY_QUEUE: v = a->queue; break;
	case OPENCOST_BY_LABEL:
		v = label_value(a->labels, q->label, buf, sizeof buf) ? buf : NULL;
		break;
	case OPENCOST_BY_CONTROLLER:
		snprintf(buf, sizeof buf, "%s:%s", controller_kind(a), a->name);
		v = buf;
		break;
	}
	return gp_xstrdup(v && *v ? v : UNALLOCATED);
}

static int by_set_and_key(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	if (a->set != b->set)
		return a->set < b->set ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* OpenCost's shareIdle inside one idle scope (a window's set; a node's rows
 * with idleByNode, as getIdleId keys idle by cluster/node): each resource's
 * idle goes to the allocations in proportion to their cost of it
 * (computeIdleCoeffs in core/pkg/opencost/allocation.go), hours with it.
 * Idle of a resource nobody in the scope was charged for stays in __idle__
 * (AggregateBy's undistributable idle, kept and named __idle__). */
static void share_idle(struct item *it, size_t n)
{
	double total[3] = {0}, idle_h[3] = {0}, idle_c[3] = {0};
	for (size_t i = 0; i < n; i++) {
		double *h[3] = {&it[i].gpu_h, &it[i].cpu_h, &it[i].ram_h};
		double *c[3] = {&it[i].gpu_c, &it[i].cpu_c, &it[i].ram_c};
		for (int r = 0; r < 3; r++) {
			if (it[i].idle) {
				idle_h[r] += *h[r];
				idle_c[r] += *c[r];
			} else {
				total[r] += *c[r];
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (it[i].idle)
			continue;
		double *h[3] = {&it[i].gpu_h, &it[i].cpu_h, &it[i].ram_h};
		double *c[3] = {&it[i].gpu_c, &it[i].cpu_c, &it[i].ram_c};
		double coeff[3];
		for (int r = 0; r < 3; r++)
			coeff[r] = total[r] > 0 ? *c[r] / total[r] : 0;
		for (int r = 0; r < 3; r++) {
			*h[r] += idle_h[r] * coeff[r];
			*c[r] += idle_c[r] * coeff[r];
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!it[i].idle)
			continue;
		double *h[3] = {&it[i].gpu_h, &it[i].cpu_h, &it[i].ram_h};
		double *c[3] = {&it[i].gpu_c, &it[i].cpu_c, &it[i].ram_c};
		for (int r = 0; r < 3; r++)
			if (total[r] > 0)
				*h[r] = *c[r] = 0; /* shared */
	}
}

/* Whether two rows are in one idle scope: a window, and a node when the
 * rows are by node. */
static bool same_scope(const struct item *a, const struct item *b)
{
	const char *x = a->src->node, *y = b->src->node;
	return a->start == b->start && (x == y || (x && y && !strcmp(x, y)));
}

/* Sums items with the same (set, key) into the first of them; returns the
 * count left. */
static size_t merge(struct item *it, size_t n)
{
	qsort(it, n, sizeof *it, by_set_and_key);
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		if (out && it[out - 1].set == it[i].set && !strcmp(it[out - 1].key, it[i].key)) {
			struct item *a = &it[out - 1];
			a->start = it[i].start < a->start ? it[i].start : a->start;
			a->end = it[i].end > a->end ? it[i].end : a->end;
			a->gpu_h += it[i].gpu_h, a->gpu_c += it[i].gpu_c;
			a->cpu_h += it[i].cpu_h, a->cpu_c += it[i].cpu_c;
			a->ram_h += it[i].ram_h, a->ram_c += it[i].ram_c;
			a->gpu_used_h += it[i].gpu_used_h;
			a->merged |= strcmp(a->src->name, it[i].src->name) != 0;
			free(it[i].key);
			continue;
		}
		it[out++] = it[i];
	}
	return out;
}

/* A figure: JSON has no NaN, absent figures are null. */
static void number(struct jsonw *w, const char *key, double v)
{
	jsonw_key(w, key);
	jsonw_real(w, v, JSONW_SIG(15));
}

/* A text property, when there is one. */
static void string(struct jsonw *w, const char *key, const char *v)
{
	if (!v)
		return;
	jsonw_key(w, key);
	jsonw_string(w, v);
}

/* properties: a row's own, or an aggregate's cluster and key. */
static void properties(struct jsonw *w, const struct item *it, const struct opencost_query *q)
{
	const struct allocation *a = it->src;
	jsonw_key(w, "properties");
	jsonw_object(w, &jsonw_compact);
	string(w, "cluster", q->cluster);
	if (it->idle) {
		jsonw_close(w);
		return;
	}
	bool all = q->aggregate == OPENCOST_BY_NONE;
	bool unallocated = !strcmp(it->key, UNALLOCATED);
	if (all || (q->aggregate == OPENCOST_BY_NAMESPACE && !unallocated))
		string(w, "namespace", a->namespace);
	if (all || q->aggregate == OPENCOST_BY_CONTROLLER) {
		string(w, "controller", a->name);
		string(w, "controllerKind", controller_kind(a));
	}
	if (all && a->labels) {
		jsonw_key(w, "labels");
		jsonw_raw(w, a->labels);
	} else if (q->aggregate == OPENCOST_BY_LABEL && !unallocated) {
		jsonw_key(w, "labels");
		jsonw_object(w, &jsonw_compact);
		string(w, q->label, it->key);
		jsonw_close(w);
	}
	if ((all || q->aggregate == OPENCOST_BY_NODE) && !unallocated && a->node)
		string(w, "node", a->node);
	if ((all || q->aggregate == OPENCOST_BY_POOL) && !unallocated)
		string(w, "pool", a->pool_name);
	if ((all || q->aggregate == OPENCOST_BY_QUEUE) && !unallocated)
		string(w, "queue", a->queue);
	jsonw_close(w);
}

/* OpenCost's efficiency of one resource: usage over request; with no
 * request, 1 when something was used and charged, else 0. */
static double efficiency(double usage, double request, double cost)
{
	if (request > 0)
		return usage / request;
	return usage == 0 || cost == 0 ? 0 : 1;
}

/* One resource's fields of an allocation, in OpenCost's order: its amount
 * (count), request and usage averages, hours, cost, cost adjustment and idle
 * cost (0: gpuplan has none) and efficiency; v: count, request, usage, hours,
 * cost, efficiency. */
static void resource(struct jsonw *w, const char *res, const char *count, const char *unit,
		     const double v[6])
{
	static const char *const per_unit[] = {"RequestAverage", "UsageAverage", "Hours"};
	static const char *const per_res[] = {"Cost", "CostAdjustment", "CostIdle", "Efficiency"};
	char key[64];
	number(w, count, v[0]);
	for (size_t k = 0; k < 3; k++) {
		snprintf(key, sizeof key, "%s%s", unit, per_unit[k]);
		number(w, key, v[1 + k]);
	}
	for (size_t k = 0; k < 4; k++) {
		snprintf(key, sizeof key, "%s%s", res, per_res[k]);
		number(w, key, k == 0 ? v[4] : k == 3 ? v[5] : 0);
	}
}

static void allocation(struct jsonw *w, const struct item *it, sim_time w_start, sim_time w_end,
		       const struct opencost_query *q)
{
	char ws[32], we[32], s[32], e[32];
	units_format_rfc3339(q->start_epoch + w_start / SIM_SECOND, ws, sizeof ws);
	units_format_rfc3339(q->start_epoch + w_end / SIM_SECOND, we, sizeof we);
	units_format_rfc3339(q->start_epoch + it->start / SIM_SECOND, s, sizeof s);
	units_format_rfc3339(q->start_epoch + it->end / SIM_SECOND, e, sizeof e);
	jsonw_key(w, it->key);
	jsonw_object(w, &jsonw_compact);
	string(w, "name", it->key);
	properties(w, it, q);
	jsonw_key(w, "window");
	jsonw_object(w, &jsonw_compact);
	string(w, "start", ws);
	string(w, "end", we);
	jsonw_close(w);
	string(w, "start", s);
	string(w, "end", e);
	double minutes = sim_seconds(it->end - it->start) / 60, hours = minutes / 60;
	double cores = hours > 0 ? it->cpu_h / hours : 0;
	double gpus = hours > 0 ? it->gpu_h / hours : 0;
	double ram = hours > 0 ? it->ram_h / hours : 0;
	double gpu_used = hours > 0 && !it->idle ? it->gpu_used_h / hours : 0;
	/* gpuplan charges requests: what is requested is used (not for idle) */
	double cores_req = it->idle ? 0 : cores, ram_req = it->idle ? 0 : ram;
	double cpu_eff = efficiency(cores_req, cores_req, it->cpu_c);
	double ram_eff = efficiency(ram_req, ram_req, it->ram_c);
	double gpu_eff = gpus > 0 && gpu_used > 0          ? gpu_used / gpus
			 : gpu_used == 0 || it->gpu_c == 0 ? 0
							   : 1;
	double total = it->gpu_c + it->cpu_c + it->ram_c;
	double cr = it->cpu_c + it->ram_c;
	number(w, "minutes", minutes);
	resource(w, "cpu", "cpuCores", "cpuCore",
		 (const double[]){cores, cores_req, cores_req, it->cpu_h, it->cpu_c, cpu_eff});
	resource(w, "gpu", "gpuCount", "gpu",
		 (const double[]){gpus, it->idle ? 0 : gpus, gpu_used, it->gpu_h, it->gpu_c,
				  gpu_eff});
	static const char *const zero[] = {"networkTransferBytes",
					   "networkReceiveBytes",
					   "networkCost",
					   "networkCrossZoneCost",
					   "networkCrossRegionCost",
					   "networkInternetCost",
					   "networkCostAdjustment",
					   "loadBalancerCost",
					   "loadBalancerCostAdjustment",
					   "pvBytes",
					   "pvByteHours",
					   "pvCost"};
	for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
		number(w, zero[k], 0);
	jsonw_key(w, "pvs");
	jsonw_null(w);
	number(w, "pvCostAdjustment", 0);
	resource(w, "ram", "ramBytes", "ramByte",
		 (const double[]){ram, ram_req, ram_req, it->ram_h, it->ram_c, ram_eff});
	number(w, "externalCost", 0);
	number(w, "sharedCost", 0);
	number(w, "totalCost", total);
	number(w, "totalEfficiency", cr > 0 ? (ram_eff * it->ram_c + cpu_eff * it->cpu_c) / cr : 0);
	static const char *const none[] = {"proportionalAssetResourceCosts", "lbAllocations",
					   "sharedCostBreakdown"};
	for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
		jsonw_key(w, none[k]);
		jsonw_null(w);
	}
	jsonw_close(w);
}

/* The rows kept by the window, as items numbered by their window set. */
static size_t items_of(const struct allocation *rows, size_t n, const struct opencost_query *q,
		       struct item *it)
{
	size_t m = 0;
	int64_t set = -1;
	for (size_t i = 0; i < n; i++) {
		const struct allocation *a = &rows[i];
		int64_t t = q->start_epoch + a->start / SIM_SECOND;
		if (q->window && (t < q->from || t >= q->to))
			continue;
		if (i == 0 || a->start != rows[i - 1].start || set < 0)
			set++;
		double eff = isnan(a->gpu_efficiency) ? 0 : a->gpu_efficiency;
		it[m++] = (struct item){.key = key_of(a, q),
					.src = a,
					.set = q->accumulate ? 0 : set,
					.start = a->start,
					.end = a->end,
					.gpu_h = a->gpu_hours,
					.gpu_c = a->gpu_cost,
					.cpu_h = a->cpu_core_hours,
					.cpu_c = a->cpu_cost,
					.ram_h = a->ram_byte_hours,
					.ram_c = a->ram_cost,
					.gpu_used_h = eff * a->gpu_hours,
					.idle = !strcmp(a->name, COST_IDLE_NAME),
					.merged = false};
	}
	return m;
}

void opencost_write(FILE *out, const struct allocation *rows, size_t n,
		    const struct opencost_query *q)
{
	struct item *it = gp_xcalloc(n + 1, sizeof *it);
	size_t m = items_of(rows, n, q, it);
	if (q->share_idle) { /* inside each idle scope, before aggregating */
		for (size_t i = 0, k = 0; i < m; i = k) {
			for (k = i; k < m && same_scope(&it[k], &it[i]); k++)
				;
			share_idle(&it[i], k - i);
		}
		size_t kept = 0;
		for (size_t i = 0; i < m; i++) {
			if (it[i].idle && !(it[i].gpu_c + it[i].cpu_c + it[i].ram_c > 0))
				free(it[i].key);
			else
				it[kept++] = it[i];
		}
		m = kept;
	}
	m = merge(it, m);
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &jsonw_compact);
	jsonw_key(&w, "code");
	jsonw_int(&w, 200);
	jsonw_key(&w, "status");
	jsonw_string(&w, "success");
	jsonw_key(&w, "data");
	jsonw_array(&w, &jsonw_compact);
	for (size_t i = 0, k = 0; i < m; i = k) {
		sim_time w_start = it[i].start, w_end = it[i].end;
		for (k = i; k < m && it[k].set == it[i].set; k++) {
			w_start = it[k].start < w_start ? it[k].start : w_start;
			w_end = it[k].end > w_end ? it[k].end : w_end;
		}
		jsonw_object(&w, &jsonw_compact);
		for (size_t j = i; j < k; j++)
			allocation(&w, &it[j], w_start, w_end, q);
		jsonw_close(&w);
	}
	jsonw_close(&w);
	jsonw_close(&w);
	fputc('\n', out);
	for (size_t i = 0; i < m; i++)
		free(it[i].key);
	free(it);
}

int opencost_flags(bool opencost, const char *window, const char *aggregate,
		   struct opencost_query *q, struct gp_err *err)
{
	if (!opencost && (window || aggregate || q->accumulate || q->share_idle || q->idle_by_node))
		return gp_errorf(
			err, GP_EINPUT,
			"--window, --aggregate, --accumulate, --share-idle and --idle-by-node shape "
			"--opencost's response: add --opencost");
	if (window && !opencost_parse_window(window, q))
		return gp_errorf(
			err, GP_EINPUT,
			"--window expects START,END in RFC 3339 with END after START, like "
			"2026-10-27T00:00:00Z,2026-10-28T00:00:00Z, got '%s'",
			window);
	if (aggregate && !opencost_parse_aggregate(aggregate, q))
		return gp_errorf(
			err, GP_EINPUT,
			"--aggregate expects namespace, label:KEY, controller, pool, queue or node, "
			"got '%s'",
			aggregate);
	if (q->aggregate == OPENCOST_BY_NODE && !q->idle_by_node)
		return gp_errorf(
			err, GP_EINPUT,
			"--aggregate node needs the rows by node: add --idle-by-node (a run of "
			"cost: {idle_by: node})");
	return GP_OK;
}

int opencost_report(FILE *out, struct store *st, const char *db, int64_t run_id,
		    struct opencost_query *q, struct gp_err *err)
{
	struct store_run run;
	struct allocation *rows = NULL;
	size_t n = 0;
	int rc = store_run_info(st, run_id, &run, err);
	if (!rc && q->idle_by_node) {
		rc = store_read_node_allocations(st, run.run_id, &rows, &n, err);
		q->accumulate = true; /* the rows by node span the run */
		if (!rc && !n)
			rc = gp_errorf(err, GP_EINPUT,
				       "%s: run %lld has no allocations by node; --idle-by-node "
				       "reads a run of cost: {idle_by: node}",
				       db, (long long)run.run_id);
	} else if (!rc) {
		rc = store_read_allocations(st, run.run_id, &rows, &n, err);
	}
	if (!rc && units_rfc3339(run.start, &q->start_epoch))
		rc = gp_errorf(err, GP_ERUNTIME, "%s: run %lld has no start time", db,
			       (long long)run.run_id);
	q->cluster = run.name;
	if (!rc)
		opencost_write(out, rows, n, q);
	store_free_allocations(rows, n);
	return rc;
}
