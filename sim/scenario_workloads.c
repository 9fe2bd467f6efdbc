/*
 * scenario_workloads.c - the workloads section: resources, durations, restarts,
 * deadlines and placement rules (arrivals: scenario_arrivals.c); and the checks
 * that finish a workload once all its keys are read.
 */
#include "gpuplan/scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/footprint.h"
#include "gpuplan/modelcfg.h"
#include "gpuplan/openb.h"
#include "gpuplan/trace.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

#include "gpuplan/strindex.h"

/* --- workloads ------------------------------------------------------------ */

#define WORKLOAD_HINT \
	"a map like {name: eval, count: 4, arrival: {at: \"12:00\"}, gpus: 2, duration: 1h}"
#define DURATION_HINT UNITS_HINT_DURATION ", or {dist: exponential, mean: 1h}"

static const char *const kind_names[] = {"batch", "inference", "service"};

static int workload_kind(struct loader *ld, const struct ynode *v, void *obj)
{
	int k = 0;
	struct workload_spec *w = obj;
	int rc = ld_get_enum(ld, v, "kind", kind_names, N_OF(kind_names), &k);
	w->kind = (enum workload_kind)k;
	/* Read before the other keys (load_workload), so theirs can land here. */
	if (!rc && k == WORKLOAD_INFERENCE && !w->inference)
		w->inference = ld_new_inference();
	return rc;
}

static int workload_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "workload name", &((struct workload_spec *)obj)->name);
}

static int workload_count(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_int(ld, v, "count", 1, INT64_MAX, &((struct workload_spec *)obj)->count);
}

/* gpus: N (nvidia.com/gpu units) | {mig: 3g.40gb} | {milli: 300}.  Whether a
 * pool offers the resource is checked once all pools are known (check_hosted). */
static int workload_gpus(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int64_t g = 0;
	if (v->kind == YNODE_MAP) {
		static const char *const keys[] = {"mig", "milli", "shared"};
		int rc = ld_only_keys(ld, v, keys, 3, "gpus");
		if (rc)
			return rc;
		if (v->n != 1)
			return ld_bad_value(ld, v, "gpus",
					    "one of {mig: 3g.40gb}, {milli: 300} or {shared: 1}");
		if (!strcmp(v->keys[0], "shared")) { /* nvidia.com/gpu.shared */
			w->shared = true;
			return workload_gpus(ld, v->items[0], obj);
		}
		if (!strcmp(v->keys[0], "mig")) {
			w->request = REQUEST_MIG;
			return ld_get_string(ld, v->items[0], "MIG profile", "a name like 3g.40gb",
					     &w->mig_profile);
		}
		w->request = REQUEST_MILLI;
		rc = ld_get_int(ld, v->items[0], "milli", 1, 1000, &g);
		w->milli = (int32_t)g;
		return rc;
	}
	int rc = ld_get_int(ld, v, "gpus", 1, INT64_MAX, &g);
	if (rc)
		return rc;
	if (g > ld->widest_request)
		return gp_located(ld->err, v->loc,
				  "no node has %lld GPUs; the largest pool node has %d",
				  (long long)g, (int)ld->widest_request);
	w->request = REQUEST_GPUS;
	w->gpus = (int32_t)g;
	return GP_OK;
}

/* model and model_config name the same thing: the second one met is refused. */
static int one_model(struct loader *ld, const struct ynode *v, const struct workload_spec *w)
{
	if (!w->model)
		return GP_OK;
	return gp_located(ld->err, v->loc,
			  "model and model_config both name the model (%s); expected one of them",
			  w->model->name);
}

static int workload_model(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (ld_is_null(v))
		return GP_OK; /* none: --set workloads.NAME.model=null leaves room for model_config */
	int rc = one_model(ld, v, w);
	if (rc)
		return rc;
	if (v->kind == YNODE_SCALAR && (w->model = catalog_model(v->value)))
		return GP_OK;
	const char *names[16];
	size_t n = catalog_model_count();
	for (size_t i = 0; i < n && i < 16; i++)
		names[i] = catalog_model_at(i)->name;
	return v->kind == YNODE_SCALAR
		       ? ld_unknown_word(ld, v->loc, "model", v->value, names, n)
		       : ld_bad_value(ld, v, "model", "a catalog model like llama-2-13b");
}

/* model_config: a Hugging Face config.json, relative to the scenario's folder;
 * the scenario owns the model it describes (modelcfg.h). */
static int workload_model_config(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	char *path = NULL;
	int rc = one_model(ld, v, w);
	if (!rc)
		rc = ld_get_string(
			ld, v, "model_config",
			"a path to a Hugging Face config.json, like models/qwen3-8b.json", &path);
	if (rc)
		return rc;
	char *full = ld_resolve(ld->sc->dir, path);
	struct model_arch *m = NULL;
	rc = modelcfg_load(full, &m, ld->err);
	free(full);
	free(path);
	if (rc)
		return rc;
	struct scenario *sc = ld->sc;
	sc->models = gp_xrealloc(sc->models, (sc->n_models + 1) * sizeof *sc->models);
	sc->models[sc->n_models++] = m;
	w->model = m;
	return GP_OK;
}

static int workload_quantization(struct loader *ld, const struct ynode *v, void *obj)
{
	int q = 0;
	int rc = ld_get_enum(ld, v, "quantization", footprint_quant_names, QUANT_COUNT, &q);
	((struct workload_spec *)obj)->quantization = q;
	return rc;
}

static int restart_limit(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "restart limit", 0, 1000, &n);
	((struct workload_spec *)obj)->restart_limit = (int32_t)n;
	return rc;
}

static int restart_backoff(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "backoff", false,
			       &((struct workload_spec *)obj)->restart_backoff);
}

static int checkpoint_every(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "checkpoint every", true,
			       &((struct workload_spec *)obj)->checkpoint);
}

static int checkpoint_write(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "checkpoint write", false,
			       &((struct workload_spec *)obj)->checkpoint_write);
}

static const struct key_rule checkpoint_rules[] = {{"every", checkpoint_every},
						   {"write", checkpoint_write}};

/* checkpoint: 30m (the interval of work; writing takes no time), or
 * {every: 30m, write: 2m}: each write holds the GPUs, not working. */
static int workload_checkpoint(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind != YNODE_MAP)
		return ld_get_duration(ld, v, "checkpoint", true, &w->checkpoint);
	int rc = ld_walk_map(ld, v, "checkpoint", "a map like {every: 30m, write: 2m}",
			     checkpoint_rules, N_OF(checkpoint_rules), obj);
	if (!rc && !w->checkpoint)
		return ld_bad_value(ld, v, "checkpoint", "a map with every: the interval of work");
	return rc;
}

static int workload_startup(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "startup", false, &((struct workload_spec *)obj)->startup);
}

static int get_pass_rate(struct loader *ld, const struct ynode *v, double *out)
{
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < 0 || *out > 1)
		return ld_bad_value(ld, v, "pass_rate", "a probability from 0 to 1, like 0.99");
	return GP_OK;
}

/* quality: {pass_rate: p} or {pass_rate: {fp16: p, int8: q, ...}}; the rate for
 * the workload's own quantization is resolved in derive_quality. */
static int quality_pass_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind != YNODE_MAP)
		return get_pass_rate(ld, v, &w->pass_rate);
	for (size_t i = 0; i < v->n; i++) {
		enum quant q;
		double p;
		if (footprint_quant_parse(v->keys[i], &q))
			return ld_unknown_word(ld, v->key_locs[i], "quantization", v->keys[i],
					       footprint_quant_names, QUANT_COUNT);
		int rc = get_pass_rate(ld, v->items[i], &p);
		if (rc)
			return rc;
	}
	return GP_OK;
}

static const struct key_rule quality_rules[] = {{"pass_rate", quality_pass_rate}};

static int workload_quality(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "quality", "a map like {pass_rate: 0.99}", quality_rules,
			   N_OF(quality_rules), obj);
}

/* A per-quantization pass rate needs the workload's quantization (fp16 without one). */
static int derive_quality(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct ynode *rates = ynode_get(ynode_get(item, "quality"), "pass_rate");
	if (!rates || rates->kind != YNODE_MAP)
		return GP_OK;
	const char *want =
		footprint_quant_name(w->model ? (enum quant)w->quantization : QUANT_FP16);
	for (size_t i = 0; i < rates->n; i++) {
		enum quant q;
		if (!footprint_quant_parse(rates->keys[i], &q) &&
		    !strcmp(footprint_quant_name(q), want))
			return get_pass_rate(ld, rates->items[i], &w->pass_rate);
	}
	return gp_located(ld->err, rates->loc,
			  "pass_rate has no entry for %s; expected one for "
			  "the workload's quantization",
			  want);
}

static const struct key_rule restart_rules[] = {{"limit", restart_limit},
						{"backoff", restart_backoff}};

static int workload_restart(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "restart", "a map like {limit: 6, backoff: 10s}", restart_rules,
			   N_OF(restart_rules), obj);
}

/* Distribution parameters by kind (index = enum dist_kind). */
const char *const ld_dist_names[] = {"fixed", "exponential", "lognormal",
				     "gamma", "uniform",     "empirical"};
#define DIST_MAX_SIGMA 5.0
#define DIST_MIN_SHAPE 0.01
#define DIST_MAX_SHAPE 1e6

const char *const ld_dist_params[][2] = {{"mean", NULL},    {"mean", NULL}, {"mean", "sigma"},
					 {"mean", "shape"}, {"min", "max"}, {"values", NULL}};

const char *ld_dist_param_hint(const char *param)
{
	if (!strcmp(param, "sigma"))
		return "a number > 0 like 0.5";
	if (!strcmp(param, "shape"))
		return "a number > 0 like 2";
	return UNITS_HINT_DURATION;
}

int ld_dist_kind(struct loader *ld, const struct ynode *v, void *obj)
{
	int k = 0;
	int rc = ld_get_enum(ld, v, "dist", ld_dist_names, N_OF(ld_dist_names), &k);
	((struct dist *)obj)->kind = (enum dist_kind)k;
	return rc;
}

static int ld_dist_seconds(struct loader *ld, const struct ynode *v, const char *what,
			   bool positive, double *out)
{
	sim_time t;
	int rc = ld_get_duration(ld, v, what, positive, &t);
	*out = sim_seconds(t);
	if (!rc && t > SCENARIO_MAX_SPAN) /* a typo (d for m), and no run could finish it */
		return gp_located(ld->err, v->loc,
				  "invalid %s '%s': past the %d years gpuplan simulates; expected "
				  "at most %lldd",
				  what, v->value, SCENARIO_MAX_YEARS,
				  (long long)(SCENARIO_MAX_SPAN / SIM_DAY));
	return rc;
}

static int ld_dist_mean(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_dist_seconds(ld, v, "mean", true, &((struct dist *)obj)->mean);
}

static int ld_dist_min(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_dist_seconds(ld, v, "min", false, &((struct dist *)obj)->min);
}

static int ld_dist_max(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_dist_seconds(ld, v, "max", true, &((struct dist *)obj)->max);
}

int ld_dist_sigma(struct loader *ld, const struct ynode *v, void *obj)
{
	double *sigma = &((struct dist *)obj)->sigma;
	int rc = ld_get_positive(ld, v, "sigma", ld_dist_param_hint("sigma"), sigma);
	/* Past 5 the median is under mean / 268,000: nearly every draw is a job of
	 * no length, and the few others carry the whole mean. */
	if (!rc && *sigma > DIST_MAX_SIGMA)
		return gp_located(ld->err, v->loc,
				  "sigma %s is above %g: nearly every job would "
				  "last no time; expected a sigma like 0.5",
				  v->value, DIST_MAX_SIGMA);
	return rc;
}

int ld_dist_shape(struct loader *ld, const struct ynode *v, void *obj)
{
	double *shape = &((struct dist *)obj)->shape;
	int rc = ld_get_positive(ld, v, "shape", ld_dist_param_hint("shape"), shape);
	/* Below 0.01 almost every gamma draw underflows to zero. */
	if (!rc && (*shape < DIST_MIN_SHAPE || *shape > DIST_MAX_SHAPE))
		return gp_located(ld->err, v->loc,
				  "shape %s is outside [%g, %g]: the draws "
				  "underflow to jobs of no length; expected a shape like 2",
				  v->value, DIST_MIN_SHAPE, DIST_MAX_SHAPE);
	return rc;
}

/* values: [600s, 2h, 5400, ...]: durations (a plain number is seconds), drawn
 * uniformly; what `import --history` writes when no fit is good enough. */
static int ld_dist_values(struct loader *ld, const struct ynode *v, void *obj)
{
	struct dist *d = obj;
	const char *hint = "a list of durations like [600s, 2h, 5400]";
	int rc = ld_expect_list(ld, v, "values", hint);
	if (!rc && (v->n == 0 || v->n > SCENARIO_MAX_EMPIRICAL))
		return gp_located(ld->err, v->loc, "%zu values; expected 1 to %d", v->n,
				  SCENARIO_MAX_EMPIRICAL);
	if (rc)
		return rc;
	double *values = gp_xcalloc(v->n, sizeof *values), sum = 0;
	struct scenario *sc = ld->sc;
	sc->dist_values =
		gp_xrealloc(sc->dist_values, (sc->n_dist_values + 1) * sizeof *sc->dist_values);
	sc->dist_values[sc->n_dist_values++] = values;
	for (size_t i = 0; i < v->n && !rc; i++) {
		const struct ynode *x = v->items[i];
		char *end = NULL;
		double s = x->kind == YNODE_SCALAR ? strtod(x->value, &end) : NAN;
		if (end && end != x->value && !*end && s > 0 && s <= sim_seconds(SCENARIO_MAX_SPAN))
			values[i] = s; /* plain seconds */
		else if (x->kind != YNODE_SCALAR)
			rc = ld_bad_value(ld, x, "values", hint);
		else
			rc = ld_dist_seconds(ld, x, "value", true, &values[i]);
		sum += values[i];
	}
	d->values = values;
	d->n_values = v->n;
	d->mean = sum / (double)v->n;
	return rc;
}

static const struct key_rule dist_rules[] = {
	{"dist", ld_dist_kind},     {"mean", ld_dist_mean}, {"sigma", ld_dist_sigma},
	{"shape", ld_dist_shape},   {"min", ld_dist_min},   {"max", ld_dist_max},
	{"values", ld_dist_values},
};

static int load_dist(struct loader *ld, const struct ynode *v, struct dist *d)
{
	int rc = ld_walk_map(ld, v, "duration", DURATION_HINT, dist_rules, N_OF(dist_rules), d);
	if (!rc)
		rc = ld_require(ld, v, "dist", "duration",
				"exponential, lognormal, gamma, uniform or empirical");
	if (rc)
		return rc;
	const char *const *params = ld_dist_params[d->kind];
	const char *allowed[3] = {"dist", params[0], params[1]};
	char what[48];
	snprintf(what, sizeof what, "dist %s", ld_dist_names[d->kind]);
	for (size_t i = 0; i < 2 && params[i] && !rc; i++)
		rc = ld_require(ld, v, params[i], what, ld_dist_param_hint(params[i]));
	if (!rc)
		rc = ld_only_keys(ld, v, allowed, N_OF(allowed), what);
	if (!rc && d->kind == DIST_UNIFORM && d->max < d->min)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max is below min; expected min <= max");
	return rc;
}

static int workload_duration(struct loader *ld, const struct ynode *v, void *obj)
{
	struct dist *d = &((struct workload_spec *)obj)->duration;
	if (v->kind == YNODE_MAP)
		return load_dist(ld, v, d);
	d->kind = DIST_FIXED;
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, "duration", DURATION_HINT);
	return ld_dist_seconds(ld, v, "duration", true, &d->mean);
}

static int deadline_within(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "within", true, &((struct workload_spec *)obj)->deadline);
}

static const struct key_rule deadline_rules[] = {{"within", deadline_within}};

static int workload_deadline(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (v->kind == YNODE_SCALAR) {
		w->deadline_kind = DEADLINE_AT;
		return ld_get_clock(ld, v, "deadline", &w->deadline);
	}
	w->deadline_kind = DEADLINE_WITHIN;
	int rc = ld_walk_map(ld, v, "deadline", UNITS_HINT_CLOCK ", or {within: 5h}",
			     deadline_rules, N_OF(deadline_rules), w);
	return rc ? rc : ld_require(ld, v, "within", "deadline", UNITS_HINT_DURATION);
}

static int workload_gpu_busy(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "gpu_busy", &((struct workload_spec *)obj)->gpu_busy);
}

static int workload_sm_share(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "sm_share", &((struct workload_spec *)obj)->sm_share);
}

static int workload_vram(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_size(ld, v, "vram", &((struct workload_spec *)obj)->vram_bytes);
}

static int workload_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_cores(ld, v, "cpu", "a number of cores >= 0, like 8 or 500m",
			    &((struct workload_spec *)obj)->cpu);
}

static int workload_memory(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_size(ld, v, "memory", &((struct workload_spec *)obj)->memory_bytes);
}

static int workload_node_selector(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	return ld_get_kv_map(ld, v, "node_selector", &w->node_selector, &w->n_node_selector);
}

/* namespace: a DNS label, as Kubernetes names a namespace (RFC 1123: at most
 * 63 of [a-z0-9-], starting and ending alphanumeric). */
static int workload_namespace(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char hint[] = "a namespace name: up to 63 of a-z, 0-9 and '-', starting "
				   "and ending with a letter or digit";
	size_t n = v->kind == YNODE_SCALAR && !ld_is_null(v) ? strlen(v->value) : 0;
	bool ok = n > 0 && n <= 63 && v->value[0] != '-' && v->value[n - 1] != '-';
	for (size_t i = 0; ok && i < n; i++)
		ok = (v->value[i] >= 'a' && v->value[i] <= 'z') ||
		     (v->value[i] >= '0' && v->value[i] <= '9') || v->value[i] == '-';
	if (!ok)
		return ld_bad_value(ld, v, "namespace", hint);
	struct workload_spec *w = obj;
	free(w->namespace);
	w->namespace = gp_xstrdup(v->value);
	return GP_OK;
}

static int workload_labels(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	return ld_get_kv_map(ld, v, "labels", &w->labels, &w->n_labels);
}

static const char *const operator_names[] = {"Equal", "Exists"};

static int toleration_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct toleration *t = obj;
	free(t->key);
	int rc = ld_get_text(ld, v, "toleration key", &t->key);
	if (rc || !t->key[0]) /* empty: with Exists, every key */
		return rc;
	return ld_check_label_key(ld, v->loc, "label key", "toleration", t->key);
}

static int toleration_operator(struct loader *ld, const struct ynode *v, void *obj)
{
	int op = 0;
	int rc = ld_get_enum(ld, v, "operator", operator_names, N_OF(operator_names), &op);
	((struct toleration *)obj)->op = (enum toleration_op)op;
	return rc;
}

static int toleration_value(struct loader *ld, const struct ynode *v, void *obj)
{
	struct toleration *t = obj;
	free(t->value);
	return ld_get_text(ld, v, "toleration value", &t->value);
}

static int toleration_effect(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_enum(ld, v, "toleration effect", ld_effect_names, N_OF(ld_effect_names),
			   &((struct toleration *)obj)->effect);
}

static const struct key_rule toleration_rules[] = {
	{"key", toleration_key},
	{"operator", toleration_operator},
	{"value", toleration_value},
	{"effect", toleration_effect},
};

/* Kubernetes rules: Equal needs a key; Exists matches any value so takes none. */
static int load_toleration(struct loader *ld, const struct ynode *item, struct toleration *t)
{
	t->key = gp_xstrdup("");
	t->value = gp_xstrdup("");
	t->op = TOLERATION_EQUAL;
	t->effect = -1;
	int rc = ld_walk_map(
		ld, item, "toleration",
		"a map like {key: dedicated, operator: Equal, value: batch, effect: NoSchedule}",
		toleration_rules, N_OF(toleration_rules), t);
	if (rc)
		return rc;
	if (t->op == TOLERATION_EQUAL && !t->key[0])
		return gp_located(ld->err, item->loc,
				  "a toleration with operator Equal needs a key; "
				  "expected {key: KEY, value: VALUE} or operator Exists");
	const struct ynode *value = ynode_get(item, "value");
	if (t->op == TOLERATION_EXISTS && t->value[0])
		return gp_located(ld->err, value->loc,
				  "a toleration with operator Exists takes no "
				  "value; expected operator Equal or no value");
	return GP_OK;
}

int ld_load_tolerations(struct loader *ld, const struct ynode *v, struct toleration **out,
			size_t *n)
{
	int rc = ld_expect_list(
		ld, v, "tolerations",
		"a list like [{key: dedicated, operator: Exists, effect: NoSchedule}]");
	if (rc)
		return rc;
	*out = gp_xcalloc(v->n + 1, sizeof **out);
	*n = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = load_toleration(ld, v->items[i], &(*out)[i]);
	return rc;
}

static int workload_tolerations(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	return ld_load_tolerations(ld, v, &w->tolerations, &w->n_tolerations);
}

static int workload_gpu_spec(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc = ld_expect_list(ld, v, "gpu_spec",
				"a list of GPU types like [A100-80GB, H100-80GB]");
	if (rc)
		return rc;
	w->gpu_spec = gp_xcalloc(v->n, sizeof *w->gpu_spec);
	w->n_gpu_spec = v->n;
	for (size_t i = 0; i < v->n; i++) {
		const struct gpu_type *gpu;
		rc = ld_get_gpu_type(ld, v->items[i], "gpu_spec", &gpu);
		if (rc)
			return rc;
		w->gpu_spec[i] = gp_xstrdup(gpu->name);
	}
	return GP_OK;
}

/* --- placement rules: affinity, topology_spread, pods, gang -------------- */

#define AFFINITY_HINT \
	"a map like {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}"

static const char *const affinity_op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

static int affinity_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct affinity_expr *e = obj;
	int rc = ld_get_string(ld, v, "affinity key", "a label key like nvidia.com/gpu.product",
			       &e->key);
	return rc ? rc : ld_check_label_key(ld, v->loc, "label key", "affinity", e->key);
}

static int affinity_operator(struct loader *ld, const struct ynode *v, void *obj)
{
	int op = 0;
	int rc = ld_get_enum(ld, v, "affinity operator", affinity_op_names, N_OF(affinity_op_names),
			     &op);
	((struct affinity_expr *)obj)->op = (enum affinity_op)op;
	return rc;
}

static int affinity_values(struct loader *ld, const struct ynode *v, void *obj)
{
	struct affinity_expr *e = obj;
	int rc = ld_expect_list(ld, v, "affinity values", "a list of label values like [a, b]");
	if (rc)
		return rc;
	e->values = gp_xcalloc(v->n ? v->n : 1, sizeof *e->values);
	e->n_values = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = ld_get_text(ld, v->items[i], "affinity value", &e->values[i]);
	return rc;
}

static const struct key_rule affinity_rules[] = {
	{"key", affinity_key}, {"operator", affinity_operator}, {"values", affinity_values}};

/* Kubernetes rules: In and NotIn need values; Exists and DoesNotExist take none. */
static int load_affinity_expr(struct loader *ld, const struct ynode *item, struct affinity_expr *e)
{
	int rc = ld_walk_map(ld, item, "affinity requirement", AFFINITY_HINT, affinity_rules,
			     N_OF(affinity_rules), e);
	if (!rc)
		rc = ld_require(ld, item, "key", "affinity requirement", "a label key");
	if (!rc)
		rc = ld_require(ld, item, "operator", "affinity requirement",
				"In, NotIn, Exists or DoesNotExist");
	if (rc)
		return rc;
	bool listed = e->op == AFFINITY_IN || e->op == AFFINITY_NOT_IN;
	if (listed && e->n_values == 0)
		return gp_located(ld->err, item->loc,
				  "affinity operator %s needs values; expected values: [A, B]",
				  affinity_op_names[e->op]);
	if (!listed && ynode_get(item, "values"))
		return gp_located(ld->err, ynode_get(item, "values")->loc,
				  "affinity operator %s takes no values; expected In or NotIn "
				  "with values, or no values",
				  affinity_op_names[e->op]);
	return GP_OK;
}

static int workload_affinity(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc = ld_expect_list(ld, v, "affinity", "a list like [" AFFINITY_HINT "]");
	if (rc)
		return rc;
	w->affinity = gp_xcalloc(v->n ? v->n : 1, sizeof *w->affinity);
	w->n_affinity = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = load_affinity_expr(ld, v->items[i], &w->affinity[i]);
	return rc;
}

static const char *const spread_when_names[] = {"DoNotSchedule", "ScheduleAnyway"};

static int spread_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct topology_spread *t = obj;
	int rc = ld_get_string(ld, v, "topology_spread key",
			       "a label key like topology.kubernetes.io/zone", &t->key);
	return rc ? rc : ld_check_label_key(ld, v->loc, "label key", "topology_spread", t->key);
}

static int spread_max_skew(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "max_skew", 1, INT32_MAX, &n);
	((struct topology_spread *)obj)->max_skew = (int32_t)n;
	return rc;
}

static int spread_when(struct loader *ld, const struct ynode *v, void *obj)
{
	int when = 0;
	int rc = ld_get_enum(ld, v, "when_unsatisfiable", spread_when_names,
			     N_OF(spread_when_names), &when);
	((struct topology_spread *)obj)->when = (enum spread_when)when;
	return rc;
}

static const struct key_rule spread_rules[] = {
	{"key", spread_key}, {"max_skew", spread_max_skew}, {"when_unsatisfiable", spread_when}};

static int workload_topology_spread(struct loader *ld, const struct ynode *v, void *obj)
{
	struct topology_spread *t = &((struct workload_spec *)obj)->spread;
	t->max_skew = 1;
	t->when = SPREAD_DO_NOT_SCHEDULE;
	int rc = ld_walk_map(ld, v, "topology_spread",
			     "a map like {key: topology.kubernetes.io/zone, max_skew: 1, "
			     "when_unsatisfiable: DoNotSchedule}",
			     spread_rules, N_OF(spread_rules), t);
	if (!rc)
		rc = ld_require(ld, v, "key", "topology_spread",
				"a label key like topology.kubernetes.io/zone");
	return rc;
}

static int workload_pods(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "pods", 1, 10000, &n);
	((struct workload_spec *)obj)->pods = (int32_t)n;
	return rc;
}

static int workload_gang(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_bool(ld, v, "gang", &((struct workload_spec *)obj)->gang);
}

static int workload_queue(struct loader *ld, const struct ynode *v, void *obj)
{
	struct scenario *sc = ld->sc;
	if (v->kind != YNODE_SCALAR || ld_is_null(v))
		return ld_bad_value(ld, v, "queue", "the name of a queue, like default");
	int q = scenario_queue_index(sc, v->value);
	if (q >= 0) {
		((struct workload_spec *)obj)->queue = q;
		return GP_OK;
	}
	const char **names = gp_xcalloc(sc->n_queues, sizeof *names);
	for (size_t i = 0; i < sc->n_queues; i++)
		names[i] = sc->queues[i].name;
	int rc = ld_unknown_word(ld, v->loc, "queue", v->value, names, sc->n_queues);
	free(names);
	return rc;
}

/* safe_to_evict: the pods' cluster-autoscaler.kubernetes.io/safe-to-evict. */
static int workload_safe_to_evict(struct loader *ld, const struct ynode *v, void *obj)
{
	bool b = false;
	int rc = ld_get_bool(ld, v, "safe_to_evict", &b);
	((struct workload_spec *)obj)->safe_to_evict = b ? SAFE_TO_EVICT_TRUE : SAFE_TO_EVICT_FALSE;
	return rc;
}

/* pdb: a PodDisruptionBudget that selects the workload's pods, with
 * min_available or max_unavailable (policy/v1: exactly one), whole pods. */
static int pdb_value(struct loader *ld, const struct ynode *v, void *obj, const char *what,
		     enum pdb_kind kind)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, what, 0, INT32_MAX, &n);
	struct workload_spec *w = obj;
	w->pdb = (uint8_t)kind;
	w->pdb_value = (int32_t)n;
	return rc;
}

static int pdb_min(struct loader *ld, const struct ynode *v, void *obj)
{
	return pdb_value(ld, v, obj, "min_available", PDB_MIN_AVAILABLE);
}

static int pdb_max(struct loader *ld, const struct ynode *v, void *obj)
{
	return pdb_value(ld, v, obj, "max_unavailable", PDB_MAX_UNAVAILABLE);
}

static int workload_pdb(struct loader *ld, const struct ynode *v, void *obj)
{
	static const struct key_rule rules[] = {{"min_available", pdb_min},
						{"max_unavailable", pdb_max}};
	const char *hint = "a map like {max_unavailable: 1} or {min_available: 2}";
	int rc = ld_walk_map(ld, v, "pdb", hint, rules, 2, obj);
	if (!rc &&
	    (ynode_get(v, "min_available") != NULL) == (ynode_get(v, "max_unavailable") != NULL))
		return gp_located(ld->err, v->loc,
				  "a PodDisruptionBudget takes one of min_available and "
				  "max_unavailable; expected %s",
				  hint);
	return rc;
}

static int workload_local_storage(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_bool(ld, v, "local_storage", &((struct workload_spec *)obj)->local_storage);
}

static int workload_priority(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t p = 0;
	int rc = ld_get_int(ld, v, "priority", SCENARIO_MIN_PRIORITY, SCENARIO_MAX_PRIORITY, &p);
	((struct workload_spec *)obj)->priority = (int32_t)p;
	return rc;
}

/* PriorityClass preemptionPolicy: PreemptLowerPriority (default) or Never. */
static int workload_preemption_policy(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"PreemptLowerPriority", "Never"};
	int p = 0;
	int rc = ld_get_enum(ld, v, "preemption_policy", names, N_OF(names), &p);
	((struct workload_spec *)obj)->preempt_never = p == 1;
	return rc;
}

/* A pod's terminationGracePeriodSeconds: an evicted pod keeps its node this long. */
static int workload_grace(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "termination_grace_period", false,
			       &((struct workload_spec *)obj)->grace);
}

/* goal: {queue_p95: 10m}, the wait the workload's team accepts (docs/scenario.md, "Goals"). */
static int goal_queue_p95(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	w->queue_goal_given = true;
	return ld_get_duration(ld, v, "queue_p95", false, &w->queue_goal);
}

static const struct key_rule goal_rules[] = {{"queue_p95", goal_queue_p95}};

static int workload_goal(struct loader *ld, const struct ynode *v, void *obj)
{
	int rc = ld_walk_map(ld, v, "goal", "a map like {queue_p95: 10m}", goal_rules,
			     N_OF(goal_rules), obj);
	return rc ? rc : ld_require(ld, v, "queue_p95", "goal", UNITS_HINT_DURATION);
}

/* data_loader: {workers: 4, rate: 150/s, need: 1000/s}. */
static int loader_workers(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "data_loader.workers", 1, 4096, &n);
	((struct workload_spec *)obj)->loader_workers = (int32_t)n;
	return rc;
}

static int loader_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_rate(ld, v, "data_loader.rate", &((struct workload_spec *)obj)->loader_rate);
}

static int loader_need(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_rate(ld, v, "data_loader.need", &((struct workload_spec *)obj)->loader_need);
}

static const struct key_rule loader_rules[] = {
	{"workers", loader_workers}, {"rate", loader_rate}, {"need", loader_need}};

#define LOADER_HINT "a map like {workers: 4, rate: 150/s, need: 1000/s}"

static int workload_data_loader(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc =
		ld_walk_map(ld, v, "data_loader", LOADER_HINT, loader_rules, N_OF(loader_rules), w);
	for (size_t i = 0; i < 3 && !rc; i++)
		rc = ld_require(ld, v, loader_rules[i].key, "data_loader", LOADER_HINT);
	if (rc)
		return rc;
	w->loader_fraction = fmin(1, w->loader_workers * w->loader_rate / w->loader_need);
	if (w->loader_fraction < 0.01)
		return ld_bad_value(ld, v, "data_loader",
				    "workers x rate at least 1% of need (the GPUs would wait on "
				    "input 99% of the time)");
	return GP_OK;
}

static const struct key_rule workload_rules[] = {
	{"name", workload_name},
	{"kind", workload_kind},
	{"count", workload_count},
	{"arrival", ld_workload_arrival},
	{"gpus", workload_gpus},
	{"duration", workload_duration},
	{"deadline", workload_deadline},
	{"goal", workload_goal},
	{"gpu_busy", workload_gpu_busy},
	{"data_loader", workload_data_loader},
	{"sm_share", workload_sm_share},
	{"vram", workload_vram},
	{"cpu", workload_cpu},
	{"memory", workload_memory},
	{"node_selector", workload_node_selector},
	{"tolerations", workload_tolerations},
	{"gpu_spec", workload_gpu_spec},
	{"queue", workload_queue},
	{"namespace", workload_namespace},
	{"labels", workload_labels},
	{"priority", workload_priority},
	{"preemption_policy", workload_preemption_policy},
	{"termination_grace_period", workload_grace},
	{"affinity", workload_affinity},
	{"topology_spread", workload_topology_spread},
	{"pods", workload_pods},
	{"gang", workload_gang},
	{"safe_to_evict", workload_safe_to_evict},
	{"local_storage", workload_local_storage},
	{"pdb", workload_pdb},
	/* results and restarts: quality, start-up, checkpoints; then the model and its server */
	{"quality", workload_quality},
	{"startup", workload_startup},
	{"checkpoint", workload_checkpoint},
	{"model", workload_model},
	{"model_config", workload_model_config},
	{"quantization", workload_quantization},
	{"kv_cache", ld_workload_kv_cache},
	{"replicas", ld_workload_replicas},
	{"tensor_parallel", ld_workload_tensor_parallel},
	{"max_batch", ld_workload_max_batch},
	{"max_batched_tokens", ld_workload_max_batched_tokens},
	{"memory_fraction", ld_workload_memory_fraction},
	{"requests", ld_workload_requests},
	{"slo", ld_workload_slo},
	{"tokenize", ld_workload_tokenize},
	{"step_overhead", ld_workload_step_overhead},
	{"route", ld_workload_route},
	{"disaggregated", ld_workload_disaggregated},
	{"restart", workload_restart},
	/* the week: windows of its own, culling when idle */
	{"windows", ld_workload_windows},
	{"idle_cull", ld_workload_idle_cull},
};

const struct key_rule *ld_workload_rules(size_t *n)
{
	*n = N_OF(workload_rules);
	return workload_rules;
}

/* An openb pod list decides every pod's request and times too.  The
 * workload stands for its pods until a timed replay splits it by request
 * (openb_expand_workloads); the inflation protocol reads the pods as they are. */
static int finish_openb_workload(struct loader *ld, const struct ynode *item,
				 struct workload_spec *w)
{
	static const char *const from_list[] = {"count",  "gpus",     "duration",    "cpu",
						"memory", "gpu_spec", "pods",        "gang",
						"vram",   "model",    "model_config"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_list); k++)
			if (!strcmp(item->keys[i], from_list[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the pod list (one pod per row); "
						  "expected no %s with format openb",
						  item->keys[i], item->keys[i]);
	w->count = (int64_t)w->arrival.n_pods;
	w->request = REQUEST_GPUS;
	w->gpus = 1;
	w->duration = (struct dist){.kind = DIST_FIXED};
	return GP_OK;
}

/* A trace decides count, gpus and durations; the workload's keys would contradict it. */
static int finish_trace_workload(struct loader *ld, const struct ynode *item,
				 struct workload_spec *w)
{
	if (w->arrival.format == TRACE_OPENB)
		return finish_openb_workload(ld, item, w);
	static const char *const from_trace[] = {"count", "gpus", "duration"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_trace); k++)
			if (!strcmp(item->keys[i], from_trace[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the trace (one job per row); "
						  "expected no %s with a trace arrival",
						  item->keys[i], item->keys[i]);
	const struct arrival *a = &w->arrival;
	w->count = (int64_t)a->n_rows;
	w->gpus = a->summary.max_gpus;
	/* Informational (check, reports): jobs use their own rows. */
	w->duration = (struct dist){.kind = DIST_FIXED,
				    .mean = a->summary.duration_s / (double)a->n_rows};
	return GP_OK;
}

/*
 * VRAM from the model when not given: each GPU of the pod holds its share of
 * the weights (tensor parallel over the pod's GPUs) plus the runtime overhead.
 */
static int derive_vram(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct ynode *q = ynode_get(item, "quantization");
	if (!w->model) {
		if (q)
			return gp_located(ld->err, q->loc,
					  "quantization applies to a model; "
					  "expected a model like llama-2-13b beside it");
		return GP_OK;
	}
	if (!q)
		w->quantization = QUANT_FP16;
	if (ynode_get(item, "vram"))
		return GP_OK;
	int tp = w->request == REQUEST_GPUS ? w->gpus : 1;
	w->vram_bytes = footprint_weights_bytes(w->model, (enum quant)w->quantization) / tp +
			FOOTPRINT_OVERHEAD_BYTES;
	return GP_OK;
}

/* The first time a job of w can arrive: its `at`, the start of its poisson
 * stream, its schedule's first firing from then (the scenario starting at
 * epoch second start), or its trace's first row. */
static sim_time first_arrival(const struct workload_spec *w, int64_t start)
{
	const struct arrival *a = &w->arrival;
	if (a->kind == ARRIVAL_AT)
		return a->at;
	if (a->kind == ARRIVAL_SCHEDULE) {
		int64_t t = units_cron_next(&a->cron, start + a->from / SIM_SECOND);
		return t == INT64_MAX ? a->from : (t - start) * SIM_SECOND;
	}
	if (a->kind == ARRIVAL_POISSON)
		return a->from;
	return a->n_rows ? a->summary.first_submit : 0;
}

/* A deadline at a clock time before the jobs can arrive makes every job late
 * before it exists: a typo (11:00 for 23:00), not a plan. */
static int check_deadline(struct loader *ld, const struct ynode *item,
			  const struct workload_spec *w)
{
	sim_time first = first_arrival(w, ld->sc->start_epoch);
	if (w->deadline_kind != DEADLINE_AT || w->deadline >= first)
		return GP_OK;
	const struct ynode *d = ynode_get(item, "deadline");
	char at[32];
	units_format_duration(first, at, sizeof at);
	return gp_located(ld->err, d->loc,
			  "deadline '%s' is before the first arrival (start + %s); expected a "
			  "deadline after the jobs arrive, or {within: 5h} from each arrival",
			  d->value, at);
}

static int finish_workload(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	int rc = derive_vram(ld, item, w);
	if (!rc)
		rc = derive_quality(ld, item, w);
	if (!rc)
		rc = ld_require(ld, item, "name", "workload", "a name like eval");
	if (!rc)
		rc = ld_finish_week(ld, item, w);
	const struct ynode *dl = ynode_get(item, "data_loader");
	if (!rc && dl && w->kind != WORKLOAD_BATCH)
		return gp_located(ld->err, dl->loc,
				  "data_loader feeds a batch job's GPUs; expected it on a workload "
				  "of kind batch");
	if (w->loader_fraction > 0) /* the GPUs wait on input the rest of the time */
		w->gpu_busy *= w->loader_fraction;
	if (!rc && w->inference)
		return ld_finish_inference(ld, item, w);
	if (!rc)
		rc = ld_require(ld, item, "arrival", "workload", ARRIVAL_HINT);
	if (rc)
		return rc;
	rc = check_deadline(ld, item, w);
	if (rc)
		return rc;
	if (w->arrival.kind == ARRIVAL_TRACE)
		return finish_trace_workload(ld, item, w);
	rc = ld_require(ld, item, "duration", "workload", DURATION_HINT);
	if (!rc && (w->arrival.kind == ARRIVAL_POISSON || w->arrival.kind == ARRIVAL_SCHEDULE) &&
	    !ynode_get(item, "count")) {
		if (!ld->sc->horizon)
			return gp_located(ld->err, ynode_get(item, "arrival")->loc,
					  "%s without count never ends; expected a "
					  "count or a scenario horizon",
					  w->arrival.kind == ARRIVAL_SCHEDULE
						  ? "a schedule"
						  : "a poisson arrival");
		w->count = -1;
	}
	return rc;
}

static int load_workload(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	w->loc = item->loc;
	w->kind = WORKLOAD_BATCH;
	w->count = 1;
	w->gpus = 1;
	w->pods = 1;
	w->gpu_busy = 1;
	w->sm_share = 1;
	w->pass_rate = 1;
	w->restart_limit = 6;                 /* a Kubernetes Job's default backoffLimit */
	w->restart_backoff = 10 * SIM_SECOND; /* the kubelet's first crash-loop delay */
	w->grace = 30 * SIM_SECOND;           /* terminationGracePeriodSeconds' default */
	w->queue = (int32_t)scenario_queue_index(ld->sc, DEFAULT_QUEUE);
	w->deadline_kind = DEADLINE_NONE;
	w->queue_goal = -1;
	/* The kind first: an inference workload fails on its kind, not on its first key. */
	const struct ynode *kind = ynode_get(item, "kind");
	int rc = kind ? workload_kind(ld, kind, w) : GP_OK;
	if (!rc)
		rc = ld_walk_map(ld, item, "workload", WORKLOAD_HINT, workload_rules,
				 N_OF(workload_rules), w);
	return rc ? rc : finish_workload(ld, item, w);
}

int ld_load_workloads(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	int rc = ld_expect_list(ld, v, "workloads", "a list of workloads like [" WORKLOAD_HINT "]");
	if (rc)
		return rc;
	if (v->n == 0)
		return gp_located(ld->err, v->loc,
				  "workloads is empty; expected at least one workload");
	sc->workloads = gp_xcalloc(v->n, sizeof *sc->workloads);
	sc->n_workloads = v->n;
	struct strindex names = {0}; /* hashed: 40,000 workloads load in linear time */
	for (size_t i = 0; i < v->n && !rc; i++) {
		struct workload_spec *w = &sc->workloads[i];
		rc = load_workload(ld, v->items[i], w);
		if (rc)
			break;
		bool added;
		size_t j = strindex_add(&names, w->name, &added);
		if (!added) {
			rc = ld_duplicate(ld, v->items[i], "workload", w->name,
					  sc->workloads[j].loc);
			break;
		}
		/* Metrics are scoped by pool or workload name: the two must not collide. */
		int p = scenario_pool_index(sc, w->name);
		if (p >= 0)
			rc = gp_located(
				ld->err, ynode_get(v->items[i], "name")->loc,
				"workload name '%s' is also a pool name (line %d); expected "
				"distinct names, as results are reported per name",
				w->name, sc->pools[p].loc.line);
	}
	strindex_free(&names);
	return rc;
}

/* A timed replay runs an openb workload as one workload per pod request
 * (ld_openb_split_workload), in its place. */
int ld_expand_openb_workloads(struct loader *ld)
{
	struct scenario *sc = ld->sc;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		struct workload_spec *w = &sc->workloads[i], *subs = NULL;
		if (w->arrival.kind != ARRIVAL_TRACE || w->arrival.format != TRACE_OPENB)
			continue;
		size_t n = 0;
		int rc = ld_openb_split_workload(w, ld->widest_node, &subs, &n, ld->err);
		if (rc)
			return rc;
		size_t total = sc->n_workloads - 1 + n;
		struct workload_spec *all = gp_xcalloc(total + 1, sizeof *all);
		memcpy(all, sc->workloads, i * sizeof *all);
		memcpy(all + i, subs, n * sizeof *all);
		memcpy(all + i + n, sc->workloads + i + 1, (sc->n_workloads - i - 1) * sizeof *all);
		ld_free_workload(w);
		free(subs);
		free(sc->workloads);
		sc->workloads = all;
		sc->n_workloads = total;
		i += n - 1;
	}
	return GP_OK;
}
