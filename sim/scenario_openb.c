/*
 * scenario_openb.c - the loader's side of the openb trace: pools from a node
 * list and workloads from a pod list (scenario_int.h).  The readers in
 * openb.c know nothing of scenarios; this file converts what they read.
 */
#include "scenario_int.h"

#include "gpuplan/openb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- pools from a node list ---------------------------------------------------- */

static bool same_shape(const struct openb_node *a, const struct openb_node *b)
{
	return a->gpu == b->gpu && a->gpus == b->gpus && a->cpu_milli == b->cpu_milli &&
	       a->memory_mib == b->memory_mib;
}

/* The distinct shapes in order of first appearance: shape[k] is the index of
 * its first node; count[k] its nodes. */
static size_t shapes_of(const struct openb_node *nodes, size_t n, size_t *first, int32_t *count)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t s = 0;
		while (s < k && !same_shape(&nodes[first[s]], &nodes[i]))
			s++;
		if (s == k) {
			first[k] = i;
			count[k++] = 0;
		}
		count[s]++;
	}
	return k;
}

/* A name for shape s: memory only when another shape differs by memory alone. */
static char *shape_name(const char *pool, const struct openb_node *nodes, const size_t *first,
			size_t n_shapes, size_t s)
{
	const struct openb_node *a = &nodes[first[s]];
	bool by_memory = false;
	for (size_t t = 0; t < n_shapes; t++) {
		const struct openb_node *b = &nodes[first[t]];
		by_memory |= t != s && a->gpu == b->gpu && a->gpus == b->gpus &&
			     a->cpu_milli == b->cpu_milli;
	}
	char buf[256], mem[32] = "";
	if (by_memory)
		snprintf(mem, sizeof mem, "-%lldGi", (long long)(a->memory_mib / 1024));
	snprintf(buf, sizeof buf, "%s-%s-%dx%gc%s", pool, a->gpu->name, (int)a->gpus,
		 (double)a->cpu_milli / 1000.0, mem);
	return gp_xstrdup(buf);
}

static struct kv *copy_kvs(const struct kv *kv, size_t n, size_t extra)
{
	struct kv *out = gp_xcalloc(n + extra + 1, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = (struct kv){gp_xstrdup(kv[i].key), gp_xstrdup(kv[i].value)};
	return out;
}

/* One pool of the shape, with the entry's other settings (deep copies). */
static void make_pool(struct pool_spec *out, const struct pool_spec *entry,
		      const struct openb_node *nd, int32_t nodes, char *name)
{
	*out = *entry;
	out->name = name;
	out->trace_path = NULL;
	out->nodes = nodes;
	out->gpu = nd->gpu;
	out->gpus_per_node = nd->gpus;
	out->cpu = (double)nd->cpu_milli / 1000.0;
	out->memory_bytes = (double)nd->memory_mib * GP_MIB;
	bool has_model = false;
	for (size_t i = 0; i < entry->n_labels; i++)
		has_model |= !strcmp(entry->labels[i].key, OPENB_MODEL_LABEL);
	out->labels = copy_kvs(entry->labels, entry->n_labels, 1);
	if (!has_model)
		out->labels[out->n_labels++] =
			(struct kv){gp_xstrdup(OPENB_MODEL_LABEL), gp_xstrdup(nd->gpu->name)};
	out->taints = gp_xcalloc(entry->n_taints + 1, sizeof *out->taints);
	for (size_t i = 0; i < entry->n_taints; i++)
		out->taints[i] =
			(struct taint){gp_xstrdup(entry->taints[i].key),
				       gp_xstrdup(entry->taints[i].value), entry->taints[i].effect};
	out->windows = gp_xcalloc(entry->n_windows + 1, sizeof *out->windows);
	if (entry->n_windows)
		memcpy(out->windows, entry->windows, entry->n_windows * sizeof *out->windows);
	out->sharing.layout = NULL;
	out->sharing.n_layout = 0;
}

/* Frees what make_pool copied and the entry's own strings. */

/* The pools of one entry's node list, appended to out. */
static int expand_one(const struct pool_spec *entry, struct pool_spec **out, size_t *n, size_t *cap,
		      struct gp_err *err)
{
	struct openb_node *nodes;
	size_t n_nodes;
	struct srcloc at = entry->trace_loc.file ? entry->trace_loc : entry->loc;
	int rc = openb_read_nodes(entry->trace_path, at, &nodes, &n_nodes, err);
	if (rc)
		return rc;
	size_t *first = gp_xcalloc(n_nodes, sizeof *first);
	int32_t *count = gp_xcalloc(n_nodes, sizeof *count);
	size_t k = shapes_of(nodes, n_nodes, first, count);
	GP_GROW(*out, *cap, *n + k);
	for (size_t s = 0; s < k; s++)
		make_pool(&(*out)[(*n)++], entry, &nodes[first[s]], count[s],
			  shape_name(entry->name, nodes, first, k, s));
	free(first);
	free(count);
	openb_free_nodes(nodes, n_nodes);
	return GP_OK;
}

int ld_openb_expand_pools(struct scenario *sc, struct gp_err *err)
{
	bool any = false;
	for (size_t p = 0; p < sc->n_pools; p++)
		any |= sc->pools[p].trace_path != NULL;
	if (!any)
		return GP_OK;
	struct pool_spec *out = NULL;
	size_t n = 0, cap = 0;
	int rc = GP_OK;
	for (size_t p = 0; p < sc->n_pools && !rc; p++) {
		if (!sc->pools[p].trace_path) {
			GP_GROW(out, cap, n + 1);
			out[n++] = sc->pools[p];
			memset(&sc->pools[p], 0, sizeof sc->pools[p]);
			continue;
		}
		rc = expand_one(&sc->pools[p], &out, &n, &cap, err);
		scenario_pool_free(&sc->pools[p]);
		memset(&sc->pools[p], 0, sizeof sc->pools[p]);
	}
	/* On error, the pools not moved yet stay for scenario_free; the new ones go with them. */
	for (size_t p = 0; p < sc->n_pools && rc; p++)
		if (sc->pools[p].name || sc->pools[p].trace_path) {
			GP_GROW(out, cap, n + 1);
			out[n++] = sc->pools[p];
		}
	free(sc->pools);
	sc->pools = out;
	sc->n_pools = n;
	return rc;
}

/* --- workloads from a pod list ------------------------------------------------- */

static bool same_request(const struct openb_pod *a, const struct openb_pod *b)
{
	return a->cpu_milli == b->cpu_milli && a->memory_mib == b->memory_mib &&
	       a->num_gpu == b->num_gpu && a->gpu_milli == b->gpu_milli && a->spec == b->spec;
}

static char *request_name(const char *parent, const struct openb_pod *p)
{
	char buf[512], spec[128] = "";
	if (p->spec) {
		spec[0] = '-';
		openb_spec_text(p->spec, spec + 1, sizeof spec - 1);
	}
	if (p->num_gpu == 0)
		snprintf(buf, sizeof buf, "%s/%lldm-%lldMi-cpu", parent, (long long)p->cpu_milli,
			 (long long)p->memory_mib);
	else
		snprintf(buf, sizeof buf, "%s/%lldm-%lldMi-%dx%dm%s", parent,
			 (long long)p->cpu_milli, (long long)p->memory_mib, (int)p->num_gpu,
			 (int)p->gpu_milli, spec);
	return gp_xstrdup(buf);
}

/* Deep copies of what a workload owns besides its name, arrival and request. */
void ld_copy_rules(struct workload_spec *w, const struct workload_spec *parent)
{
	/* The counts too: scenario_replay starts from a zeroed workload. */
	w->n_node_selector = parent->n_node_selector;
	w->n_tolerations = parent->n_tolerations;
	w->n_affinity = parent->n_affinity;
	w->n_windows = parent->n_windows;
	w->spread = parent->spread;
	w->node_selector = copy_kvs(parent->node_selector, parent->n_node_selector, 0);
	w->labels = copy_kvs(parent->labels, parent->n_labels, 0);
	w->n_labels = parent->n_labels;
	w->namespace = parent->namespace ? gp_xstrdup(parent->namespace) : NULL;
	w->tolerations = gp_xcalloc(parent->n_tolerations + 1, sizeof *w->tolerations);
	for (size_t i = 0; i < parent->n_tolerations; i++) {
		w->tolerations[i] = parent->tolerations[i];
		w->tolerations[i].key = gp_xstrdup(parent->tolerations[i].key);
		w->tolerations[i].value = gp_xstrdup(parent->tolerations[i].value);
	}
	w->affinity = gp_xcalloc(parent->n_affinity + 1, sizeof *w->affinity);
	for (size_t i = 0; i < parent->n_affinity; i++) {
		const struct affinity_expr *e = &parent->affinity[i];
		w->affinity[i] = *e;
		w->affinity[i].key = gp_xstrdup(e->key);
		w->affinity[i].values = gp_xcalloc(e->n_values + 1, sizeof *e->values);
		for (size_t k = 0; k < e->n_values; k++)
			w->affinity[i].values[k] = gp_xstrdup(e->values[k]);
	}
	w->spread.key = parent->spread.key ? gp_xstrdup(parent->spread.key) : NULL;
	w->windows = gp_xcalloc(parent->n_windows + 1, sizeof *w->windows);
	if (parent->n_windows)
		memcpy(w->windows, parent->windows, parent->n_windows * sizeof *w->windows);
}

/* The request of pod p: GPUs, milli, cpu, memory, gpu_spec. */
static void set_request(struct workload_spec *w, const struct openb_pod *p)
{
	w->cpu = (double)p->cpu_milli / 1000.0;
	w->memory_bytes = (double)p->memory_mib * GP_MIB;
	w->request = p->num_gpu == 1 && p->gpu_milli < 1000 ? REQUEST_MILLI : REQUEST_GPUS;
	w->milli = w->request == REQUEST_MILLI ? p->gpu_milli : 0;
	w->gpus = w->request == REQUEST_MILLI ? 1 : p->num_gpu;
	/* The trace's durations were observed with the GPU shared: the pod's
	 * kernels use its share of the SMs, so sharing keeps its duration. */
	w->sm_share = w->request == REQUEST_MILLI ? p->gpu_milli / 1000.0 : 1;
	w->n_gpu_spec = 0;
	w->gpu_spec = gp_xcalloc(openb_gpu_count() + 1, sizeof *w->gpu_spec);
	for (size_t i = 0; i < openb_gpu_count(); i++)
		if (p->spec >> i & 1)
			w->gpu_spec[w->n_gpu_spec++] = gp_xstrdup(openb_gpu_at(i)->name);
}

static struct trace_job row_of(const struct openb_pod *p)
{
	bool placed = p->scheduled >= 0;
	int64_t run = p->deletion - (placed ? p->scheduled : p->creation);
	return (struct trace_job){p->creation * SIM_SECOND,
				  run * SIM_SECOND,
				  SIM_NEVER,
				  p->num_gpu,
				  p->line,
				  placed ? (p->scheduled - p->creation) * SIM_SECOND : SIM_NEVER};
}

static int cmp_row(const void *a, const void *b)
{
	const struct trace_job *x = a, *y = b;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* A new workload for the request of pod p, without rows yet. */
static void new_request(struct workload_spec *w, const struct workload_spec *parent,
			const struct openb_pod *p)
{
	*w = *parent;
	w->name = request_name(parent->name, p);
	w->arrival.trace_path = gp_xstrdup(parent->arrival.trace_path);
	w->arrival.pods = NULL;
	w->arrival.n_pods = 0;
	w->arrival.rows = NULL;
	w->arrival.n_rows = 0;
	w->arrival.summary = (struct trace_summary){0};
	w->mig_profile = NULL;
	w->inference = NULL;
	w->count = 0;
	ld_copy_rules(w, parent);
	set_request(w, p);
}

int ld_openb_split_workload(const struct workload_spec *parent, int32_t widest,
			    struct workload_spec **subs, size_t *n, struct gp_err *err)
{
	const struct openb_pod *pods = parent->arrival.pods;
	size_t n_pods = parent->arrival.n_pods, k = 0;
	for (size_t i = 0; i < n_pods; i++)
		if (pods[i].num_gpu > widest)
			return gp_located(
				err, (struct srcloc){parent->arrival.trace_path, pods[i].line, 0},
				"pod %s asks for %d GPUs; the largest pool node has %d",
				pods[i].name, (int)pods[i].num_gpu, (int)widest);
	size_t *first = gp_xcalloc(n_pods + 1, sizeof *first),
	       *of = gp_xcalloc(n_pods + 1, sizeof *of);
	for (size_t i = 0; i < n_pods; i++) {
		size_t s = 0;
		while (s < k && !same_request(&pods[first[s]], &pods[i]))
			s++;
		if (s == k)
			first[k++] = i;
		of[i] = s;
	}
	struct workload_spec *w = gp_xcalloc(k + 1, sizeof *w);
	for (size_t s = 0; s < k; s++) {
		new_request(&w[s], parent, &pods[first[s]]);
		w[s].arrival.rows = gp_xcalloc(n_pods, sizeof *w[s].arrival.rows);
	}
	for (size_t i = 0; i < n_pods; i++) {
		struct workload_spec *ws = &w[of[i]];
		ws->arrival.rows[ws->arrival.n_rows++] = row_of(&pods[i]);
	}
	for (size_t s = 0; s < k; s++) {
		struct arrival *a = &w[s].arrival;
		qsort(a->rows, a->n_rows, sizeof *a->rows, cmp_row);
		for (size_t r = 0; r < a->n_rows; r++)
			trace_summary_add(&a->summary, &a->rows[r]);
		w[s].count = (int64_t)a->n_rows;
		w[s].duration = (struct dist){.kind = DIST_FIXED,
					      .mean = a->summary.duration_s / (double)a->n_rows};
	}
	free(first);
	free(of);
	*subs = w;
	*n = k;
	return GP_OK;
}
