/*
 * main_import.c - `gpuplan import` on the command line: its flags (--gpu-map,
 * --horizon), refusing -o when it names an input, writing the scenario only
 * once it passes its self-check, and --history's twin with its pods.
 */
#include "gpuplan/catalog.h"
#include "gpuplan/import.h"
#include "gpuplan/outfile.h"
#include "gpuplan/scenario.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "main_int.h"

/* --horizon: a positive duration. */
static int parse_horizon(const char *value, void *target, struct gp_err *err)
{
	sim_time *t = target;
	if (units_duration(value, t) || *t <= 0)
		return gp_errorf(err, GP_EINPUT, "import: --horizon expects %s, got '%s'",
				 UNITS_HINT_DURATION, value);
	return GP_OK;
}

/* --gpu-map PRODUCT=TYPE, TYPE a catalog type, one TYPE per PRODUCT (the
 * same mapping twice is one). */
static int check_gpu_map(const struct cli_list *map)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *m = map->v[i], *eq = strchr(m, '=');
		if (!eq || eq == m || !eq[1])
			return cli_usage_error("--gpu-map expects PRODUCT=TYPE, like "
					       "NVIDIA-B200=H200-141GB, got '%s'",
					       m);
		if (!catalog_gpu(eq + 1))
			return cli_usage_error("--gpu-map %s: '%s' is not a catalog GPU type; "
					       "expected one of gpuplan's (see docs/import.md)",
					       m, eq + 1);
		size_t len = (size_t)(eq - m) + 1;
		for (size_t k = 0; k < i; k++)
			if (!strncmp(map->v[k], m, len) && strcmp(map->v[k], m))
				return cli_usage_error("--gpu-map %s and --gpu-map %s map one "
						       "product to two types; expected one",
						       map->v[k], m);
	}
	return GP_OK;
}

/* -o may be none of the inputs: writing it would lose the cluster's dump. */
static int import_refuse_inputs(const struct import_options *o, const char *path,
				struct gp_err *err)
{
	const char *inputs[] = {o->nodes,    o->pods,   o->kueue, o->dcgm,
				o->opencost, o->prices, o->pdbs};
	int rc = GP_OK;
	for (size_t i = 0; i < N_OPTS(inputs) && !rc; i++)
		rc = outfile_refuse_same(path, inputs[i], err);
	return rc;
}

/* The check's error, said as the import's: the scenario was refused by its
 * own loader (a value import does not check yet), so -o was not replaced.
 * The temporary file is gone, so its name becomes "line L:C of the scenario". */
static int import_check_failed(const char *from, const char *path, const char *tmp,
			       struct gp_err *err)
{
	const char *m = gp_err_msg(err);
	size_t tl = strlen(tmp), place = err->place_len;
	char where[64] = "";
	bool in_tmp =
		err->kind == GP_ERR_LOCATED && place > tl && !strncmp(m, tmp, tl) && m[tl] == ':';
	if (in_tmp) { /* the place is the temporary file's: said as a line of the scenario */
		snprintf(where, sizeof where, " (at line %.*s of the scenario)",
			 (int)(place - tl - 1), m + tl + 1);
		m += place + strlen(": error: ");
	}
	/* A place in another file (a trace the scenario names) stays in the text,
	 * and the message stays located; one in the temporary file is gone. */
	struct gp_err inner = {.kind = in_tmp ? GP_ERR_INPUT : err->kind}; /* its kind only */
	return gp_wrapf(err, &inner, GP_EINPUT,
			"import: the scenario imported from %s failed its check, so %s is "
			"left as it was%s: %s",
			from, path, where, m);
}

/* Writes the scenario beside path, loads and simulates it there (the
 * self-check), and only then renames it into place: a scenario its own loader
 * refuses never replaces path. */
static int import_write(const struct import_options *o, struct import_result *r, const char *path,
			struct import_check *c, struct gp_err *err)
{
	struct outfile of;
	int rc = outfile_open(&of, path, NULL, err);
	if (rc)
		return rc;
	if (fwrite(r->yaml, 1, r->yaml_len, of.f) != r->yaml_len || fflush(of.f) != 0) {
		rc = gp_errorf(err, GP_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
		outfile_abort(&of);
		return rc;
	}
	/* The check reads the text back from the file: its copy in memory
	 * goes first (43 MB for 100,000 pinned workloads). */
	free(r->yaml);
	r->yaml = NULL;
	if ((rc = import_check(r, of.tmp, c, err))) {
		char from[8192];
		snprintf(from, sizeof from, "%s and %s", o->nodes, o->pods);
		rc = import_check_failed(from, path, of.tmp, err);
		outfile_abort(&of);
		return rc;
	}
	return outfile_commit(&of, err);
}

/* NAME.pods.csv beside NAME.yaml (the observed pods of a twin). */
static void pods_csv_path(const char *yaml, char *buf, size_t size)
{
	size_t len = strlen(yaml);
	const char *dot = strrchr(yaml, '.'), *slash = strrchr(yaml, '/');
	if (dot && dot != yaml && (!slash || dot > slash + 1))
		len = (size_t)(dot - yaml);
	snprintf(buf, size, "%.*s.pods.csv", (int)len, yaml);
}

/* Writes text whole to path (outfile.h), not yet committed. */
static int write_whole(const char *path, const char *text, size_t len, struct outfile *of,
		       struct gp_err *err)
{
	int rc = outfile_open(of, path, NULL, err);
	if (rc)
		return rc;
	if (fwrite(text, 1, len, of->f) != len || fflush(of->f) != 0) {
		rc = gp_errorf(err, GP_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
		outfile_abort(of);
	}
	return rc;
}

/* import --history: the twin and its observed pods, both or neither. */
static int import_history_cmd(struct import_options *o, const char *path, struct cli_list *map)
{
	char csv[4096];
	struct gp_err err GP_ERR_SCOPE = {0};
	pods_csv_path(path, csv, sizeof csv);
	const char *base = strrchr(csv, '/');
	o->pods_csv = base ? base + 1 : csv;
	if (o->pods || o->at)
		return cli_list_free(map),
		       cli_usage_error(
			       "--history learns from a period, --pods and --at describe one "
			       "instant: a snapshot's pods and a history's are two different "
			       "inputs, so --pods and --at are not combined with --history");
	int rc = import_refuse_inputs(o, path, &err);
	const char *inputs[] = {o->nodes, o->prices, o->opencost, o->kueue, o->dcgm};
	for (size_t i = 0; i < N_OPTS(inputs) && !rc; i++)
		rc = outfile_refuse_same(csv, inputs[i], &err);
	struct import_result r = {0};
	if (!rc)
		rc = import_history_build(o, &r, &err);
	cli_list_free(map);
	struct outfile y = {0}, c = {0};
	if (!rc && !(rc = write_whole(path, r.yaml, r.yaml_len, &y, &err)) &&
	    (rc = write_whole(csv, r.csv, r.csv_len, &c, &err)))
		outfile_abort(&y);
	/* the twin must load as written (its own loader's word), or neither
	 * file replaces what was there */
	struct scenario *sc = NULL;
	if (!rc && (rc = scenario_load(y.tmp, NULL, 0, &sc, &err))) {
		rc = import_check_failed(o->history, path, y.tmp, &err);
		outfile_abort(&y);
		outfile_abort(&c);
	}
	scenario_free(sc);
	if (!rc && !(rc = outfile_commit(&c, &err)))
		rc = outfile_commit(&y, &err);
	if (!rc) {
		printf("wrote %s and %s: %zu pools from %zu nodes, %zu workloads learned from "
		       "%zu pods (%zu runs censored: running at FROM or still at TO)\n",
		       path, csv, r.n_pools, r.n_nodes, r.n_learned, r.n_pods, r.n_censored);
		for (size_t i = 0; i < r.n_warnings; i++)
			printf("note: %s\n", r.warnings[i]);
		printf("\nlearned from %s (every value's provenance is in %s's comments):\n%s",
		       o->history, path, r.summary);
	}
	import_result_free(&r);
	return rc ? cli_fail(rc, &err, false) : 0;
}

/* Writes the scenario whole (outfile.h) once it loads, then the self-check. */
int cmd_import(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct import_options o = {0};
	struct cli_list map = {0};
	const char *path = NULL;
	const struct cli_opt opts[] = {
		{.name = "--nodes",
		 .kind = CLI_PATH,
		 .target = &o.nodes,
		 .meta = "NODES",
		 .help = "kubectl get nodes -o json (or -o yaml); with --history, its pools"},
		{.name = "--pods",
		 .kind = CLI_PATH,
		 .target = &o.pods,
		 .meta = "PODS",
		 .help = "kubectl get pods -A -o json (or -o yaml)"},
		{.name = "--history",
		 .kind = CLI_PATH,
		 .target = &o.history,
		 .meta = "DIR",
		 .help = "what scripts/export-history.sh wrote: learn a twin from it"},
		{.name = "--kueue",
		 .kind = CLI_PATH,
		 .target = &o.kueue,
		 .meta = "KUEUE",
		 .help = "kubectl get clusterqueues,localqueues,resourceflavors,cohorts -o yaml"},
		{.name = "--pdbs",
		 .kind = CLI_PATH,
		 .target = &o.pdbs,
		 .meta = "PDBS",
		 .help = "kubectl get pdb -A -o json: the workloads' PodDisruptionBudgets"},
		{.name = "--dcgm",
		 .kind = CLI_PATH,
		 .target = &o.dcgm,
		 .meta = "METRICS",
		 .help = "a dcgm-exporter scrape, or a Prometheus query_range JSON response"},
		{.name = "--opencost",
		 .kind = CLI_PATH,
		 .target = &o.opencost,
		 .meta = "ALLOC",
		 .help = "an OpenCost /allocation response: prices, real cost per workload"},
		{.name = "--prices",
		 .kind = CLI_PATH,
		 .target = &o.prices,
		 .meta = "PRICES",
		 .help = "{GPU-TYPE: {gpu_hour: X, cpu_hour: Y, gib_hour: Z}}; cpu for CPU nodes"},
		{.name = "--gpu-map",
		 .kind = CLI_LIST,
		 .target = &map,
		 .meta = "PRODUCT=TYPE",
		 .help = "a product label the catalog lacks, as a catalog type (repeatable)"},
		{.name = "--at",
		 .kind = CLI_TEXT,
		 .target = &o.at,
		 .meta = "TIME",
		 .help = "the snapshot, RFC 3339 (default: the latest time in the pods)"},
		{.name = "--horizon",
		 .kind = CLI_PARSE,
		 .target = &o.horizon,
		 .meta = "DURATION",
		 .parse = parse_horizon,
		 .help = "how long the scenario runs (default 24h)"},
		{.name = "--name",
		 .kind = CLI_NAME,
		 .target = &o.name,
		 .meta = "NAME",
		 .help = "the scenario's name (default imported)"},
		{.name = "-o",
		 .kind = CLI_PATH,
		 .target = &path,
		 .meta = "SCENARIO.yaml",
		 .required = true,
		 .help = "where to write the scenario"},
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return cli_list_free(&map), rc < 0 ? 0 : rc;
	if ((rc = check_gpu_map(&map)))
		return cli_list_free(&map), rc;
	o.gpu_map = map.v;
	o.n_gpu_map = map.n;
	if (o.history)
		return import_history_cmd(&o, path, &map);
	if (!o.nodes || !o.pods)
		return cli_list_free(&map),
		       cli_usage_error("import needs --nodes NODES and --pods PODS, "
				       "or --history DIR");
	struct import_result r;
	struct import_check c = {0};
	struct gp_err err GP_ERR_SCOPE = {0};
	if ((rc = import_refuse_inputs(&o, path, &err)))
		return cli_list_free(&map), cli_fail(rc, &err, false);
	rc = import_build(&o, &r, &err);
	cli_list_free(&map);
	if (rc)
		return cli_fail(rc, &err, false);
	if (!(rc = import_write(&o, &r, path, &c, &err)))
		import_write_check(stdout, &r, &c, path);
	import_check_free(&c);
	import_result_free(&r);
	return rc ? cli_fail(rc, &err, false) : 0;
}
