/*
 * openb.c - reading the openb trace's node and pod lists, its GPU models, and
 * turning a node list into pools (see openb.h).
 *
 * The readers are strict like trace.c: a row that cannot be read exactly is
 * an error naming the file, the line and the column, because a silently
 * skipped pod or node would change every figure of a replay.
 */
#include "gpuplan/openb.h"

#include "gpuplan/csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/catalog.h"
#include "gpuplan/units.h"

#define GBps 1e9
#define MAX_COLS 16
#define MAX_GPUS_PER_NODE 64
#define MAX_SECONDS INT64_C(1000000000000) /* beyond, sim_time would overflow */

/* The trace's models.  T4, A10, V100M16 and V100M32 mirror catalog.c's T4,
 * A10, V100-16GB and V100-32GB (test_openb checks that they agree). */
static const struct gpu_type models[] = {
	/* name      product label             memory     bandwidth    bf16  int8 SMs */
	{"G1",      "G1",                     0,         0,           0,    0,   0,  NULL, 0},
	{"G2",      "G2",                     0,         0,           0,    0,   0,  NULL, 0},
	{"G3",      "G3",                     0,         0,           0,    0,   0,  NULL, 0},
	{"T4",      "Tesla-T4",               16 * GP_GIB,  320 * GBps,  65,   130, 40, NULL, 0},
	{"P100",    "Tesla-P100-PCIE-16GB",   16 * GP_GIB,  732 * GBps,  18.7, 0,   56, NULL, 0},
	{"V100M16", "Tesla-V100-SXM2-16GB",   16 * GP_GIB,  900 * GBps,  125,  62,  80, NULL, 0},
	{"V100M32", "Tesla-V100-SXM2-32GB",   32 * GP_GIB,  900 * GBps,  125,  62,  80, NULL, 0},
	{"A10",     "NVIDIA-A10",             24 * GP_GIB,  600 * GBps,  125,  250, 72, NULL, 0},
};

#define N_MODELS (sizeof models / sizeof models[0])
#define MODEL_LIST "G1, G2, G3, T4, P100, V100M16, V100M32 or A10"

const struct gpu_type *openb_gpu_type(const char *model)
{
	for (size_t i = 0; i < N_MODELS; i++)
		if (!strcmp(models[i].name, model))
			return &models[i];
	return NULL;
}

size_t openb_gpu_count(void) { return N_MODELS; }

const struct gpu_type *openb_gpu_at(size_t i) { return i < N_MODELS ? &models[i] : NULL; }

void openb_spec_text(uint32_t spec, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < N_MODELS && used < len; i++)
		if (spec >> i & 1) {
			int n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
					 models[i].name);
			used += n > 0 ? (size_t)n : 0;
		}
}

/* --- CSV with a header ---------------------------------------------------- */

/* A column the reader knows: its name and whether a file must have it. */
struct column {
	const char *name;
	bool required;
};

/* The state of one read. */
struct reader {
	const char *path;
	int line;
	const struct column *known;
	int n_known;
	int ncols;               /* of the header; 0 until it is read */
	int at[MAX_COLS];        /* known column k is cell at[k]; -1 absent */
	char *cells[MAX_COLS];
	struct gp_err *err;
};

/* Errors name the trace file and line. */
#define row_error(r, ...) csv_error((r)->err, (r)->path, (r)->line, __VA_ARGS__)


/* Splits line in place at commas into r->cells; the number of cells (more
 * than MAX_COLS counts as MAX_COLS + 1). */

static const char *expected_header(const struct reader *r, char *buf, size_t len)
{
	size_t used = 0;
	for (int k = 0; k < r->n_known && used < len; k++) {
		int n = snprintf(buf + used, len - used, "%s%s%s%s", k ? "," : "",
				 r->known[k].required ? "" : "[", r->known[k].name,
				 r->known[k].required ? "" : "]");
		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

/* Maps the header's names to the known columns. */
static int read_header(struct reader *r, int n)
{
	char want[512];
	if (n > MAX_COLS)
		return row_error(r, "too many columns in the header; expected %s",
				 expected_header(r, want, sizeof want));
	for (int k = 0; k < r->n_known; k++)
		r->at[k] = -1;
	for (int c = 0; c < n; c++) {
		int k = 0;
		while (k < r->n_known && strcmp(r->known[k].name, r->cells[c]))
			k++;
		if (k == r->n_known)
			return row_error(r, "unknown column '%s' in the header; expected %s",
					 r->cells[c], expected_header(r, want, sizeof want));
		if (r->at[k] >= 0)
			return row_error(r, "column '%s' appears twice in the header", r->cells[c]);
		r->at[k] = c;
	}
	for (int k = 0; k < r->n_known; k++)
		if (r->known[k].required && r->at[k] < 0)
			return row_error(r, "the header lacks column %s; expected %s", r->known[k].name,
					 expected_header(r, want, sizeof want));
	r->ncols = n;
	return GP_OK;
}

/* The cell of known column k, NULL when the file lacks the column. */
static const char *cell(const struct reader *r, int k)
{
	return r->at[k] >= 0 ? r->cells[r->at[k]] : NULL;
}

/* A whole number in [lo, hi] from known column k. */
static int int_cell(const struct reader *r, int k, int64_t lo, int64_t hi, int64_t *out)
{
	const char *s = cell(r, k);
	int64_t v;
	if (units_integer(s, &v) != 0)
		return row_error(r, "expected a whole number in column %s, got '%s'",
				 r->known[k].name, s);
	if (v < lo || v > hi)
		return row_error(r, "%s '%s' is out of range; expected %lld to %lld",
				 r->known[k].name, s, (long long)lo, (long long)hi);
	*out = v;
	return GP_OK;
}

/* Seconds in column k (absent column or empty cell: -1). */
static int time_cell(const struct reader *r, int k, int64_t *out)
{
	const char *s = cell(r, k);
	*out = -1;
	if (!s || !*s)
		return GP_OK;
	return int_cell(r, k, 0, MAX_SECONDS, out);
}

typedef int (*row_fn)(struct reader *r, void *ctx);

/* Reads the file: the first non-comment line is the header, then one row per line. */
static int read_csv(struct reader *r, struct srcloc ref, row_fn row, void *ctx)
{
	FILE *f = fopen(r->path, "r");
	if (!f)
		return gp_located(r->err, ref, "cannot read trace %s: %s", r->path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	int rc = GP_OK;
	while (rc == GP_OK && getline(&line, &cap, f) >= 0) {
		r->line++;
		char *text = csv_trim(line);
		if (!*text || *text == '#')
			continue;
		int n = csv_split(text, r->cells, MAX_COLS);
		if (!r->ncols)
			rc = read_header(r, n);
		else if (n != r->ncols)
			rc = row_error(r, "expected %d columns as in the header, got %s%d", r->ncols,
				       n > MAX_COLS ? "more than " : "", n > MAX_COLS ? MAX_COLS : n);
		else
			rc = row(r, ctx);
	}
	if (rc == GP_OK && ferror(f))
		rc = gp_located(r->err, ref, "cannot read trace %s: %s", r->path, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

/* A model name, or an error naming the column. */
static int model_of(const struct reader *r, const char *column, const char *s,
		    const struct gpu_type **out)
{
	*out = openb_gpu_type(s);
	if (*out)
		return GP_OK;
	return row_error(r, "unknown GPU model '%s' in column %s; expected " MODEL_LIST, s, column);
}

/* --- nodes ------------------------------------------------------------------ */

enum { N_SN, N_CPU, N_MEMORY, N_GPU, N_MODEL };
static const struct column node_columns[] = {
	{"sn", true}, {"cpu_milli", true}, {"memory_mib", true}, {"gpu", true}, {"model", true}};

struct node_list {
	struct openb_node *nodes;
	size_t n, cap;
};

static int node_row(struct reader *r, void *ctx)
{
	struct node_list *l = ctx;
	struct openb_node nd = {NULL, 0, 0, 0, NULL, r->line};
	int64_t gpus = 0;
	int rc = int_cell(r, N_CPU, 1, INT32_MAX, &nd.cpu_milli);
	if (!rc)
		rc = int_cell(r, N_MEMORY, 1, INT64_C(1) << 40, &nd.memory_mib);
	if (!rc)
		rc = int_cell(r, N_GPU, 0, MAX_GPUS_PER_NODE, &gpus);
	if (!rc && gpus == 0)
		rc = row_error(r, "node %s has no GPU; gpuplan pools hold GPU nodes (the "
			       "paper replays openb_node_list_gpu_node.csv)", cell(r, N_SN));
	if (!rc)
		rc = model_of(r, "model", cell(r, N_MODEL), &nd.gpu);
	if (rc)
		return rc;
	nd.gpus = (int32_t)gpus;
	nd.name = gp_xstrdup(cell(r, N_SN));
	GP_GROW(l->nodes, l->cap, l->n + 1);
	l->nodes[l->n++] = nd;
	return GP_OK;
}

int openb_read_nodes(const char *path, struct srcloc ref, struct openb_node **nodes, size_t *n,
		     struct gp_err *err)
{
	struct reader r = {path, 0, node_columns, 5, 0, {0}, {0}, err};
	struct node_list l = {0};
	int rc = read_csv(&r, ref, node_row, &l);
	if (!rc && l.n == 0)
		rc = gp_located(err, (struct srcloc){path, 0, 0},
				"the node list has no nodes; expected rows of "
				"sn,cpu_milli,memory_mib,gpu,model");
	if (rc) {
		openb_free_nodes(l.nodes, l.n);
		return rc;
	}
	*nodes = l.nodes;
	*n = l.n;
	return GP_OK;
}

void openb_free_nodes(struct openb_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(nodes[i].name);
	free(nodes);
}

/* --- pods ------------------------------------------------------------------- */

enum { P_NAME, P_CPU, P_MEMORY, P_NUM_GPU, P_GPU_MILLI, P_SPEC, P_QOS, P_PHASE, P_CREATION,
       P_DELETION, P_SCHEDULED, P_COLUMNS };
static const struct column pod_columns[P_COLUMNS] = {
	{"name", true},           {"cpu_milli", true},      {"memory_mib", true},
	{"num_gpu", true},        {"gpu_milli", true},      {"gpu_spec", false},
	{"qos", false},           {"pod_phase", false},     {"creation_time", false},
	{"deletion_time", false}, {"scheduled_time", false},
};

struct pod_list {
	struct openb_pod *pods;
	size_t n, cap;
	bool timed;
};

/* gpu_spec: models joined by '|' (repeats allowed), empty = any. */
static int spec_cell(const struct reader *r, uint32_t *out)
{
	const char *s = cell(r, P_SPEC);
	*out = 0;
	while (s && *s) {
		const char *bar = strchr(s, '|');
		size_t len = bar ? (size_t)(bar - s) : strlen(s);
		char model[32];
		if (len == 0 || len >= sizeof model)
			return row_error(r, "invalid gpu_spec '%s'; expected models joined by '|', "
				       "like V100M16|V100M32", cell(r, P_SPEC));
		memcpy(model, s, len);
		model[len] = '\0';
		const struct gpu_type *g;
		int rc = model_of(r, "gpu_spec", model, &g);
		if (rc)
			return rc;
		*out |= UINT32_C(1) << (g - models);
		s = bar ? bar + 1 : s + len;
	}
	return GP_OK;
}

/* The GPU request: 0 GPUs and 0 milli, or 1 GPU with 1..1000 milli, or
 * several whole GPUs (the trace shares one GPU at most). */
static int gpu_request(const struct reader *r, struct openb_pod *p)
{
	int64_t g = 0, m = 0;
	int rc = int_cell(r, P_NUM_GPU, 0, MAX_GPUS_PER_NODE, &g);
	if (!rc)
		rc = int_cell(r, P_GPU_MILLI, 0, 1000, &m);
	if (rc)
		return rc;
	if (g == 0 && m != 0)
		return row_error(r, "gpu_milli '%s' with num_gpu 0; expected gpu_milli 0",
				 cell(r, P_GPU_MILLI));
	if (g >= 1 && m == 0)
		return row_error(r, "gpu_milli 0 with num_gpu %s; expected 1 to 1000",
				 cell(r, P_NUM_GPU));
	if (g > 1 && m != 1000)
		return row_error(r, "gpu_milli '%s' with num_gpu %s; a pod shares one GPU at most, "
				 "expected gpu_milli 1000", cell(r, P_GPU_MILLI), cell(r, P_NUM_GPU));
	p->num_gpu = (int32_t)g;
	p->gpu_milli = (int32_t)m;
	return GP_OK;
}

/* Creation <= scheduled <= deletion where they are given. */
static int times(const struct reader *r, bool timed, struct openb_pod *p)
{
	int rc = time_cell(r, P_CREATION, &p->creation);
	if (!rc)
		rc = time_cell(r, P_DELETION, &p->deletion);
	if (!rc)
		rc = time_cell(r, P_SCHEDULED, &p->scheduled);
	if (rc)
		return rc;
	bool columns = r->at[P_CREATION] >= 0 && r->at[P_DELETION] >= 0;
	if (timed && columns && (p->creation < 0 || p->deletion < 0))
		return row_error(r, "a timed replay needs creation_time and deletion_time; expected "
				 "both, or experiment: {protocol: inflation}");
	if (p->deletion >= 0 && p->creation > p->deletion)
		return row_error(r, "deletion_time %s is before creation_time %s",
				 cell(r, P_DELETION), cell(r, P_CREATION));
	if (p->scheduled >= 0 && (p->scheduled < p->creation ||
				  (p->deletion >= 0 && p->scheduled > p->deletion)))
		return row_error(r, "scheduled_time %s is outside creation_time %s .. "
				 "deletion_time %s", cell(r, P_SCHEDULED), cell(r, P_CREATION),
				 cell(r, P_DELETION));
	return GP_OK;
}

static int pod_row(struct reader *r, void *ctx)
{
	struct pod_list *l = ctx;
	struct openb_pod p = {.line = r->line};
	int rc = int_cell(r, P_CPU, 0, INT32_MAX, &p.cpu_milli);
	if (!rc)
		rc = int_cell(r, P_MEMORY, 0, INT64_C(1) << 40, &p.memory_mib);
	if (!rc)
		rc = gpu_request(r, &p);
	if (!rc)
		rc = spec_cell(r, &p.spec);
	if (!rc)
		rc = times(r, l->timed, &p);
	if (rc)
		return rc;
	const char *qos = cell(r, P_QOS);
	snprintf(p.qos, sizeof p.qos, "%s", qos ? qos : "");
	p.name = gp_xstrdup(cell(r, P_NAME));
	GP_GROW(l->pods, l->cap, l->n + 1);
	l->pods[l->n++] = p;
	return GP_OK;
}

int openb_read_pods(const char *path, struct srcloc ref, bool timed, struct openb_pod **pods,
		    size_t *n, struct gp_err *err)
{
	struct reader r = {path, 0, pod_columns, P_COLUMNS, 0, {0}, {0}, err};
	struct pod_list l = {.timed = timed};
	int rc = read_csv(&r, ref, pod_row, &l);
	if (!rc && timed && (r.at[P_CREATION] < 0 || r.at[P_DELETION] < 0))
		rc = gp_errorf(err, GP_EINPUT,
			       "%s:1: error: a timed replay needs the columns creation_time and "
			       "deletion_time; expected them in the header, or experiment: "
			       "{protocol: inflation}", path);
	if (!rc && l.n == 0)
		rc = gp_located(err, (struct srcloc){path, 0, 0},
				"the pod list has no pods; expected rows of "
				"name,cpu_milli,memory_mib,num_gpu,gpu_milli,...");
	if (rc) {
		openb_free_pods(l.pods, l.n);
		return rc;
	}
	*pods = l.pods;
	*n = l.n;
	return GP_OK;
}

void openb_free_pods(struct openb_pod *pods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(pods[i].name);
	free(pods);
}

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
		out->taints[i] = (struct taint){gp_xstrdup(entry->taints[i].key),
						gp_xstrdup(entry->taints[i].value),
						entry->taints[i].effect};
	out->windows = gp_xcalloc(entry->n_windows + 1, sizeof *out->windows);
	if (entry->n_windows)
		memcpy(out->windows, entry->windows, entry->n_windows * sizeof *out->windows);
	out->sharing.layout = NULL;
	out->sharing.n_layout = 0;
}

/* Frees what make_pool copied and the entry's own strings. */

/* The pools of one entry's node list, appended to out. */
static int expand_one(const struct pool_spec *entry, struct pool_spec **out, size_t *n,
		      size_t *cap, struct gp_err *err)
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

int openb_expand_pools(struct scenario *sc, struct gp_err *err)
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
static void copy_rules(struct workload_spec *w, const struct workload_spec *parent)
{
	w->node_selector = copy_kvs(parent->node_selector, parent->n_node_selector, 0);
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
	w->gpu_spec = gp_xcalloc(N_MODELS + 1, sizeof *w->gpu_spec);
	for (size_t i = 0; i < N_MODELS; i++)
		if (p->spec >> i & 1)
			w->gpu_spec[w->n_gpu_spec++] = gp_xstrdup(models[i].name);
}

static struct trace_job row_of(const struct openb_pod *p)
{
	bool placed = p->scheduled >= 0;
	int64_t run = p->deletion - (placed ? p->scheduled : p->creation);
	return (struct trace_job){p->creation * SIM_SECOND, run * SIM_SECOND, SIM_NEVER,
				  p->num_gpu, p->line,
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
	w->mig_profile = NULL;
	w->inference = NULL;
	w->count = 0;
	copy_rules(w, parent);
	set_request(w, p);
}

int openb_split_workload(const struct workload_spec *parent, int32_t widest,
			 struct workload_spec **subs, size_t *n, struct gp_err *err)
{
	const struct openb_pod *pods = parent->arrival.pods;
	size_t n_pods = parent->arrival.n_pods, k = 0;
	for (size_t i = 0; i < n_pods; i++)
		if (pods[i].num_gpu > widest)
			return gp_located(err, (struct srcloc){parent->arrival.trace_path, pods[i].line, 0},
					  "pod %s asks for %d GPUs; the largest pool node has %d",
					  pods[i].name, (int)pods[i].num_gpu, (int)widest);
	size_t *first = gp_xcalloc(n_pods + 1, sizeof *first), *of = gp_xcalloc(n_pods + 1, sizeof *of);
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
		double total = 0;
		qsort(a->rows, a->n_rows, sizeof *a->rows, cmp_row);
		for (size_t r = 0; r < a->n_rows; r++)
			total += sim_seconds(a->rows[r].duration);
		w[s].count = (int64_t)a->n_rows;
		w[s].duration = (struct dist){DIST_FIXED, total / (double)a->n_rows, 0, 0, 0, 0};
	}
	free(first);
	free(of);
	*subs = w;
	*n = k;
	return GP_OK;
}
