/*
 * targets.c - fuzz targets for every reader of user input.
 *
 * Each target takes arbitrary bytes and must return without crashing, hanging
 * or leaking, whatever they contain; errors are expected and ignored.  Built
 * with libFuzzer by `make fuzz` (one binary per target, chosen with
 * -DFUZZ_TARGET=...), and included by tests/test_fuzz.c, which replays the
 * inputs kept under tests/fixtures/fuzz/<target>/ as regression tests.
 */
#include "gpuplan/history.h"
#include "gpuplan/import.h"
#include "gpuplan/openb.h"
#include "gpuplan/requests.h"
#include "gpuplan/scenario.h"
#include "gpuplan/sweep.h"
#include "gpuplan/trace.h"

#include "gpuplan/ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../sim/import_hist.h" /* import_prom_read: import --history's Prometheus reader */

/* The readers take paths: write the bytes to a private file first. */
static const char *to_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[128];
	snprintf(path, sizeof path, "/tmp/gpuplan-fuzz-%d-%s", (int)getpid(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	return path;
}

/*
 * A scenario, optionally followed by a line "#--set" and one override per
 * line: so the fuzzer explores --set paths and values too.
 */
int fuzz_scenario(const uint8_t *data, size_t size)
{
	static const char mark[] = "\n#--set\n";
	const uint8_t *split = NULL;
	for (size_t i = 0; i + sizeof mark - 1 <= size && !split; i++)
		if (!memcmp(data + i, mark, sizeof mark - 1))
			split = data + i;
	size_t yaml = split ? (size_t)(split - data) : size;
	char *sets_text = NULL;
	const char *sets[16];
	size_t n_sets = 0;
	if (split) {
		size_t len = size - yaml - (sizeof mark - 1);
		sets_text = malloc(len + 1);
		memcpy(sets_text, split + sizeof mark - 1, len);
		sets_text[len] = '\0';
		for (char *line = strtok(sets_text, "\n"); line && n_sets < 16;
		     line = strtok(NULL, "\n"))
			sets[n_sets++] = line;
	}
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (scenario_load(to_file("s.yaml", data, yaml), sets, n_sets, &sc, &err) == GP_OK)
		scenario_free(sc);
	free(sets_text);
	return 0;
}

/* A twin's observed pods CSV (history.h), over a day. */
int fuzz_history_pods(const uint8_t *data, size_t size)
{
	struct history_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *path = to_file("pods.csv", data, size);
	if (history_read_pods(path, (struct srcloc){"fuzz.yaml", 1, 1}, 86400, &pods, &n, &err) ==
	    GP_OK)
		history_free_pods(pods, n);
	return 0;
}

int fuzz_trace_csv(const uint8_t *data, size_t size)
{
	struct trace_limits lim = {8, 100000};
	struct trace_job *rows = NULL, row;
	size_t n = 0;
	struct trace_summary sum;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct srcloc ref = {"fuzz.yaml", 1, 1};
	const char *path = to_file("t.csv", data, size);
	if (trace_read_csv(path, ref, &lim, &rows, &n, &sum, &err) != GP_OK)
		return 0;
	struct trace_stream st; /* a trace in submit order is read again, as a run reads it */
	bool got = !rows;
	if (!rows && trace_stream_open(&st, path, &lim, n, &sum.file, &err) == GP_OK) {
		while (got && trace_stream_next(&st, &row, &got, &err) == GP_OK)
			;
		trace_stream_close(&st);
	}
	free(rows);
	trace_summary_free(&sum);
	return 0;
}

int fuzz_sweep(const uint8_t *data, size_t size)
{
	struct sweep *sw = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (sweep_load(to_file("w.yaml", data, size), &sw, &err) == GP_OK)
		sweep_free(sw);
	return 0;
}

static const struct srcloc fuzz_ref = {"fuzz.yaml", 1, 1};

int fuzz_azure(const uint8_t *data, size_t size)
{
	struct request_row *rows = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (requests_read_azure(to_file("a.csv", data, size), fuzz_ref, 100000,
				(sim_time)1000 * 365 * SIM_DAY, &rows, &n, &err) == GP_OK)
		free(rows);
	return 0;
}

int fuzz_openb_nodes(const uint8_t *data, size_t size)
{
	struct openb_node *nodes = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (openb_read_nodes(to_file("n.csv", data, size), fuzz_ref, &nodes, &n, &err) == GP_OK)
		openb_free_nodes(nodes, n);
	return 0;
}

int fuzz_openb_pods(const uint8_t *data, size_t size)
{
	struct openb_pod *pods = NULL;
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	/* The first byte picks the mode: timed replays need deletion times. */
	bool timed = size && (data[0] & 1);
	if (openb_read_pods(to_file("p.csv", data, size), fuzz_ref, timed, &pods, &n, &err) ==
	    GP_OK)
		openb_free_pods(pods, n);
	return 0;
}

/*
 * `gpuplan import`: the first byte picks the input the rest replaces (0 nodes,
 * 1 pods, 2 DCGM, 3 Kueue, 4 OpenCost, 5 prices); the others are the
 * fixture cluster's, so the fuzzer reaches grouping and writing too.
 */
int fuzz_import(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"nodes.json", "pods.json",     "dcgm.prom",
					    "kueue.yaml", "opencost.json", "prices.yaml"};
	if (!size)
		return 0;
	unsigned which = data[0] % 6;
	const char *path = to_file(names[which], data + 1, size - 1);
	struct import_options o = {.nodes = "tests/fixtures/import/nodes.json",
				   .pods = "tests/fixtures/import/pods.json",
				   .at = "2026-11-30T12:00:00Z"};
	const char **slot[] = {&o.nodes, &o.pods, &o.dcgm, &o.kueue, &o.opencost, &o.prices};
	*slot[which] = path;
	struct import_result r;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (import_build(&o, &r, &err) == GP_OK)
		import_result_free(&r);
	return 0;
}

/* Walks a tree to its leaves: what a reader of it would touch. */
static size_t walk(const struct ynode *n)
{
	size_t k = 1;
	for (size_t i = 0; n && i < n->n; i++)
		k += walk(n->items[i]) + (n->keys ? strlen(n->keys[i]) : 0);
	return k + (n && n->value ? strlen(n->value) : 0);
}

/* The one-pass JSON reader (ytree_json.c) that `import` reads kubectl,
 * Prometheus and OpenCost JSON with, members of kubectl dumps skipped as
 * import skips them; with tests/fuzz/import.dict's names and quantities. */
int fuzz_kube_json(const uint8_t *data, size_t size)
{
	static const char *const skip[] = {"managedFields", "images", "env", NULL};
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (ytree_parse_json("fuzz.json", (const char *)data, size, skip, &t, &err) == GP_OK) {
		walk(t->root);
		ytree_free(t);
	}
	return 0;
}

static int on_series(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	(void)err;
	*(size_t *)ctx += s->n_points + (import_prom_label(s, "pod") != NULL);
	return 0;
}

/* A Prometheus HTTP API response (query_range), streamed by import_prom_read
 * (import --history), with the dictionary's label names and values. */
int fuzz_prom(const uint8_t *data, size_t size)
{
	size_t seen = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	import_prom_read(to_file("q.json", data, size), on_series, &seen, &err);
	return 0;
}

#ifdef FUZZ_TARGET
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return FUZZ_TARGET(data, size); }
#endif
