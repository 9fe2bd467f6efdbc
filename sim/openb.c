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
#include "gpuplan/gpupolicy.h"
#include "gpuplan/units.h"

#define GBps              1e9
#define MAX_COLS          16
#define MAX_GPUS_PER_NODE GPUPOLICY_MAX_GPUS     /* a pool's limit */
#define MAX_SECONDS       INT64_C(1000000000000) /* beyond, sim_time would overflow */

/* The trace's models.  T4, A10, V100M16 and V100M32 mirror catalog.c's T4,
 * A10, V100-16GB and V100-32GB (test_openb checks that they agree); memory is
 * NVML's MiB as there (a P100-PCIE-16GB reports 16,384). */
static const struct gpu_type models[] = {
	/* name      product label             memory     bandwidth    bf16  int8 SMs */
	{"G1", "G1", 0, 0, 0, 0, 0, NULL, 0},
	{"G2", "G2", 0, 0, 0, 0, 0, NULL, 0},
	{"G3", "G3", 0, 0, 0, 0, 0, NULL, 0},
	{"T4", "Tesla-T4", 15360 * GP_MIB, 320 * GBps, 65, 130, 40, NULL, 0},
	{"P100", "Tesla-P100-PCIE-16GB", 16 * GP_GIB, 732 * GBps, 18.7, 0, 56, NULL, 0},
	{"V100M16", "Tesla-V100-SXM2-16GB", 16384 * GP_MIB, 900 * GBps, 125, 62, 80, NULL, 0},
	{"V100M32", "Tesla-V100-SXM2-32GB", 32768 * GP_MIB, 900 * GBps, 125, 62, 80, NULL, 0},
	{"A10", "NVIDIA-A10", 23028 * GP_MIB, 600 * GBps, 125, 250, 72, NULL, 0},
};

#define N_MODELS   (sizeof models / sizeof models[0])
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
	int ncols;        /* of the header; 0 until it is read */
	int at[MAX_COLS]; /* known column k is cell at[k]; -1 absent */
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
					 CSV_Q(r->cells[c]), expected_header(r, want, sizeof want));
		if (r->at[k] >= 0)
			return row_error(r, "column '%s' appears twice in the header",
					 CSV_Q(r->cells[c]));
		r->at[k] = c;
	}
	for (int k = 0; k < r->n_known; k++)
		if (r->known[k].required && r->at[k] < 0)
			return row_error(r, "the header lacks column %s; expected %s",
					 r->known[k].name, expected_header(r, want, sizeof want));
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
				 r->known[k].name, CSV_Q(s));
	if (v < lo || v > hi)
		return row_error(r, "%s '%s' is out of range; expected %lld to %lld",
				 r->known[k].name, CSV_Q(s), (long long)lo, (long long)hi);
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
	const char *why;
	FILE *f = gp_open_input(r->path, &why);
	if (!f)
		return gp_located(r->err, ref, "cannot read trace %s: %s", r->path, why);
	char *line = NULL;
	size_t cap = 0;
	int rc = GP_OK;
	for (ssize_t len; rc == GP_OK && (len = getline(&line, &cap, f)) >= 0;) {
		r->line++;
		rc = csv_check_text(r->err, r->path, r->line, line, (size_t)len);
		if (rc)
			break;
		char *text = csv_trim(line);
		if (!*text || *text == '#')
			continue;
		int n = csv_split(text, r->cells, MAX_COLS);
		if (!r->ncols)
			rc = read_header(r, n);
		else if (n != r->ncols)
			rc = row_error(r, "expected %d columns as in the header, got %s%d",
				       r->ncols, n > MAX_COLS ? "more than " : "",
				       n > MAX_COLS ? MAX_COLS : n);
		else
			rc = row(r, ctx);
	}
	if (rc == GP_OK && (ferror(f) || !feof(f))) /* getline's -1 on ENOMEM is no end */
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
	return row_error(r, "unknown GPU model '%s' in column %s; expected " MODEL_LIST, CSV_Q(s),
			 column);
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
		rc = row_error(r,
			       "node %s has no GPU; gpuplan pools hold GPU nodes (the "
			       "paper replays openb_node_list_gpu_node.csv)",
			       CSV_Q(cell(r, N_SN)));
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

enum {
	P_NAME,
	P_CPU,
	P_MEMORY,
	P_NUM_GPU,
	P_GPU_MILLI,
	P_SPEC,
	P_QOS,
	P_PHASE,
	P_CREATION,
	P_DELETION,
	P_SCHEDULED,
	P_COLUMNS
};
static const struct column pod_columns[P_COLUMNS] = {
	{"name", true},           {"cpu_milli", true},       {"memory_mib", true},
	{"num_gpu", true},        {"gpu_milli", true},       {"gpu_spec", false},
	{"qos", false},           {"pod_phase", false},      {"creation_time", false},
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
			return row_error(r,
					 "invalid gpu_spec '%s'; expected models joined by '|', "
					 "like V100M16|V100M32",
					 CSV_Q(cell(r, P_SPEC)));
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
		return row_error(r,
				 "gpu_milli '%s' with num_gpu %s; a pod shares one GPU at most, "
				 "expected gpu_milli 1000",
				 cell(r, P_GPU_MILLI), cell(r, P_NUM_GPU));
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
		return row_error(r,
				 "a timed replay needs creation_time and deletion_time; expected "
				 "both, or experiment: {protocol: inflation}");
	if (p->deletion >= 0 && p->creation > p->deletion)
		return row_error(r, "deletion_time %s is before creation_time %s",
				 cell(r, P_DELETION), cell(r, P_CREATION));
	if (p->scheduled >= 0 &&
	    (p->scheduled < p->creation || (p->deletion >= 0 && p->scheduled > p->deletion)))
		return row_error(r,
				 "scheduled_time %s is outside creation_time %s .. "
				 "deletion_time %s",
				 cell(r, P_SCHEDULED), cell(r, P_CREATION), cell(r, P_DELETION));
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
		rc = gp_located(err, (struct srcloc){path, 1, 0},
				"a timed replay needs the columns creation_time and "
				"deletion_time; expected them in the header, or experiment: "
				"{protocol: inflation}");
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
