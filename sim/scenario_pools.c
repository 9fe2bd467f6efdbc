/*
 * scenario_pools.c - the pools section: node shape, GPU sharing, taints, power
 * windows and prices.
 */
#include "gpuplan/scenario.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/openb.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

/* --- pools --------------------------------------------------------------- */

#define POOL_HINT        "a map like {name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4}"
#define WINDOW_HINT      "a map like {from: \"12:00\", to: \"17:00\"}"
#define TIME_OF_DAY_HINT "a time of day like \"12:00\" or \"17:30\""

const char *const ld_effect_names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

static int taint_key(struct loader *ld, const struct ynode *v, void *obj)
{
	struct taint *t = obj;
	int rc = ld_get_string(ld, v, "taint key", "a label key like dedicated", &t->key);
	return rc ? rc : ld_check_label_key(ld, v->loc, "label key", "taint", t->key);
}

static int taint_value(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_text(ld, v, "taint value", &((struct taint *)obj)->value);
}

static int taint_effect(struct loader *ld, const struct ynode *v, void *obj)
{
	int e = 0;
	int rc = ld_get_enum(ld, v, "taint effect", ld_effect_names, N_OF(ld_effect_names), &e);
	((struct taint *)obj)->effect = (enum taint_effect)e;
	return rc;
}

static const struct key_rule taint_rules[] = {
	{"key", taint_key}, {"value", taint_value}, {"effect", taint_effect}};

int ld_load_taints(struct loader *ld, const struct ynode *v, struct taint **out, size_t *n)
{
	int rc = ld_expect_list(ld, v, "taints",
				"a list like [{key: dedicated, effect: NoSchedule}]");
	if (rc)
		return rc;
	*out = gp_xcalloc(v->n + 1, sizeof **out);
	*n = v->n;
	for (size_t i = 0; i < v->n && !rc; i++) {
		const struct ynode *item = v->items[i];
		struct taint *t = &(*out)[i];
		rc = ld_walk_map(ld, item, "taint",
				 "a map like {key: dedicated, value: batch, effect: NoSchedule}",
				 taint_rules, N_OF(taint_rules), t);
		if (!rc)
			rc = ld_require(ld, item, "key", "taint", "a label key like dedicated");
		if (!rc)
			rc = ld_require(ld, item, "effect", "taint",
					"NoSchedule, PreferNoSchedule or NoExecute");
		if (!rc && !t->value)
			t->value = gp_xstrdup("");
	}
	return rc;
}

static int pool_taints(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	return ld_load_taints(ld, v, &p->taints, &p->n_taints);
}

static int window_time(struct loader *ld, const struct ynode *v, const char *what, int32_t *out)
{
	if (v->kind != YNODE_SCALAR || units_time_of_day(v->value, out))
		return ld_bad_value(ld, v, what, TIME_OF_DAY_HINT);
	return GP_OK;
}

static int window_from(struct loader *ld, const struct ynode *v, void *obj)
{
	struct window *w = obj;
	int rc = window_time(ld, v, "window from", &w->from);
	if (!rc && w->from == 86400)
		return ld_bad_value(ld, v, "window from", "a time of day before \"24:00\"");
	return rc;
}

static int window_to(struct loader *ld, const struct ynode *v, void *obj)
{
	return window_time(ld, v, "window to", &((struct window *)obj)->to);
}

static const char *const day_names[] = {"mon",      "tue",    "wed",      "thu",     "fri",
					"sat",      "sun",    "monday",   "tuesday", "wednesday",
					"thursday", "friday", "saturday", "sunday"};

static int get_day(struct loader *ld, const struct ynode *v, int *day)
{
	char lower[16] = "";
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, "day", "mon, tue, wed, thu, fri, sat or sun");
	if (strlen(v->value) < sizeof lower)
		for (size_t i = 0; v->value[i]; i++)
			lower[i] = (char)tolower((unsigned char)v->value[i]);
	for (int i = 0; i < (int)N_OF(day_names); i++) {
		if (!strcmp(lower, day_names[i])) {
			*day = i % 7;
			return GP_OK;
		}
	}
	/* Suggest from the long names too ("mnday"), but list only the short ones. */
	const char *close = ytree_closest(v->value, day_names, N_OF(day_names));
	if (close)
		return gp_located(ld->err, v->loc, "unknown day '%s'; did you mean '%s'?", v->value,
				  close);
	return gp_located(ld->err, v->loc,
			  "unknown day '%s'; expected mon, tue, wed, thu, fri, "
			  "sat or sun",
			  v->value);
}

static int window_days(struct loader *ld, const struct ynode *v, void *obj)
{
	struct window *w = obj;
	if (v->kind != YNODE_SEQ || v->n == 0)
		return ld_bad_value(ld, v, "days", "a list of days like [mon, tue, wed, thu, fri]");
	w->days = 0;
	for (size_t i = 0; i < v->n; i++) {
		int day = 0;
		int rc = get_day(ld, v->items[i], &day);
		if (rc)
			return rc;
		w->days = (uint8_t)(w->days | 1u << day);
	}
	return GP_OK;
}

static const struct key_rule window_rules[] = {
	{"from", window_from}, {"to", window_to}, {"days", window_days}};

int ld_load_window(struct loader *ld, const struct ynode *item, struct window *w)
{
	w->loc = item->loc;
	w->days = WINDOW_EVERY_DAY;
	int rc = ld_walk_map(ld, item, "window", WINDOW_HINT, window_rules, N_OF(window_rules), w);
	if (!rc)
		rc = ld_require(ld, item, "from", "window", TIME_OF_DAY_HINT);
	if (!rc)
		rc = ld_require(ld, item, "to", "window", TIME_OF_DAY_HINT);
	if (!rc && w->from == w->to)
		return gp_located(ld->err, item->loc,
				  "window from '%s' to '%s' is empty; expected different times (a "
				  "window whose to is before from runs past midnight)",
				  ynode_get(item, "from")->value, ynode_get(item, "to")->value);
	return rc;
}

static int pool_windows(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	int rc = ld_expect_list(ld, v, "windows", "a list like [{from: \"12:00\", to: \"17:00\"}]");
	if (rc)
		return rc;
	p->windows = gp_xcalloc(v->n, sizeof *p->windows);
	p->n_windows = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = ld_load_window(ld, v->items[i], &p->windows[i]);
	return rc;
}

#define NODES_HINT "a whole number from 1 to 1000000, or 0 with autoscale"
#define PRICE_HINT "a price per hour >= 0, like 2.50"

static int get_price(struct loader *ld, const struct ynode *v, const char *what, double *out)
{
	int rc = ld_get_amount(ld, v, what, PRICE_HINT, out);
	if (!rc && *out > SCENARIO_MAX_PRICE)
		return gp_located(ld->err, v->loc,
				  "%s %s is above %g per hour; expected a price "
				  "like 2.50",
				  what, v->value, SCENARIO_MAX_PRICE);
	return rc;
}

static int price_gpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_price(ld, v, "gpu_hour", &((struct price *)obj)->gpu_hour);
}

static int price_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_price(ld, v, "cpu_hour", &((struct price *)obj)->cpu_hour);
}

static int price_gib(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_price(ld, v, "gib_hour", &((struct price *)obj)->gib_hour);
}

/* An ISO 4217 code: three letters A-Z (USD, EUR, JPY). */
static int price_currency(struct loader *ld, const struct ynode *v, void *obj)
{
	char *c = ((struct price *)obj)->currency;
	if (v->kind != YNODE_SCALAR || strlen(v->value) != 3 ||
	    !isupper((unsigned char)v->value[0]) || !isupper((unsigned char)v->value[1]) ||
	    !isupper((unsigned char)v->value[2]))
		return ld_bad_value(ld, v, "currency", "an ISO 4217 code like USD or EUR");
	memcpy(c, v->value, 4);
	return GP_OK;
}

static int price_committed_gpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return get_price(ld, v, "committed_gpu_hour", &((struct price *)obj)->committed_gpu_hour);
}

static int price_committed(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "committed", 0, INT32_MAX, &n);
	if (rc == GP_OK)
		((struct price *)obj)->committed = (int32_t)n;
	return rc;
}

static const struct key_rule price_rules[] = {{"gpu_hour", price_gpu},
					      {"cpu_hour", price_cpu},
					      {"gib_hour", price_gib},
					      {"currency", price_currency},
					      {"committed_gpu_hour", price_committed_gpu},
					      {"committed", price_committed}};

/* committed GPUs come with their price, in a pool that has them, and not on
 * spot capacity (a commitment is to on-demand capacity). */
static int check_committed(struct loader *ld, const struct ynode *item, const struct pool_spec *p)
{
	const struct ynode *price = ynode_get(item, "price");
	const struct ynode *n = price ? ynode_get(price, "committed") : NULL;
	const struct ynode *rate = price ? ynode_get(price, "committed_gpu_hour") : NULL;
	int64_t gpus = (int64_t)(p->autoscale.on ? p->autoscale.max : p->nodes) * p->gpus_per_node;
	if (!n && !rate)
		return GP_OK;
	if (!n || !rate)
		return gp_located(ld->err, (n ? n : rate)->loc,
				  "price takes committed_gpu_hour and committed together; expected "
				  "both, like {committed_gpu_hour: 1.60, committed: 8}");
	if (p->spot.on)
		return gp_located(
			ld->err, n->loc,
			"pool '%s' is spot capacity, which no commitment covers; expected "
			"committed on an on-demand pool",
			p->name);
	if (p->price.committed > gpus)
		return gp_located(
			ld->err, n->loc,
			"committed %d is more GPUs than pool '%s' has (%lld); expected at "
			"most its GPUs",
			(int)p->price.committed, p->name, (long long)gpus);
	return GP_OK;
}

static int pool_price(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "price",
			   "a map like {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}",
			   price_rules, N_OF(price_rules), &((struct pool_spec *)obj)->price);
}

static int pool_name(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_item_name(ld, v, "pool name", &((struct pool_spec *)obj)->name);
}

static int pool_nodes(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	/* 0 only with autoscale (scale from zero): finish_scaling checks. */
	if (v->kind != YNODE_SCALAR || units_integer(v->value, &n) || n < 0 ||
	    n > MAX_NODES_PER_POOL)
		return ld_bad_value(ld, v, "nodes", NODES_HINT);
	((struct pool_spec *)obj)->nodes = (int32_t)n;
	return GP_OK;
}

static int pool_gpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_gpu_type(ld, v, "gpu", &((struct pool_spec *)obj)->gpu);
}

/* gpu_memory: one GPU's memory as NVML reports it (GFD's nvidia.com/gpu.memory,
 * in MiB), where it is not the catalog's: another driver, another board.  The
 * pool gets its own copy of the type; MIG profiles keep the catalog's sizes
 * (GFD labels those per profile).  Read after gpu (finish_gpu_memory). */
static int pool_gpu_memory(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	double bytes = 0;
	int rc = ld_get_size(ld, v, "gpu_memory", &bytes);
	if (!rc && (bytes < GP_GIB || bytes > 1024 * GP_GIB))
		return ld_bad_value(ld, v, "gpu_memory",
				    "one GPU's memory from 1Gi to 1Ti, like 23034Mi");
	return rc;
}

static int finish_gpu_memory(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	const struct ynode *v = ynode_get(item, "gpu_memory");
	double bytes = 0;
	if (!v)
		return GP_OK;
	int rc = ld_get_size(ld, v, "gpu_memory", &bytes);
	if (rc)
		return rc;
	p->gpu_own = gp_xmalloc(sizeof *p->gpu_own);
	*p->gpu_own = *p->gpu;
	p->gpu_own->memory_bytes = bytes;
	p->gpu = p->gpu_own;
	return GP_OK;
}

static int pool_gpus_per_node(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "gpus_per_node", 0, MAX_GPUS_PER_NODE, &n);
	((struct pool_spec *)obj)->gpus_per_node = (int32_t)n;
	return rc;
}

static int pool_cpu(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_cores(ld, v, "cpu", "a number of cores >= 0, like 96 or 500m",
			    &((struct pool_spec *)obj)->cpu);
}

static int pool_memory(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_size(ld, v, "memory", &((struct pool_spec *)obj)->memory_bytes);
}

static int pool_labels(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	return ld_get_kv_map(ld, v, "labels", &p->labels, &p->n_labels);
}

/* The keys each mode takes, beside mode (the names are sharing.h's). */
static const char *const sharing_keys[][5] = {
	[SHARING_EXCLUSIVE] = {"mode"},
	[SHARING_TIME_SLICING] = {"mode", "replicas", "overhead", "failRequestsGreaterThanOne",
				  "renameByDefault"},
	[SHARING_MPS] = {"mode", "replicas", "renameByDefault"},
	[SHARING_MIG] = {"mode", "layout"},
	[SHARING_FRACTIONAL] = {"mode"},
};
_Static_assert(N_OF(sharing_keys) == SHARING_MODES, "the keys of every sharing mode");

static int sharing_params(struct loader *ld, const struct ynode *v, struct sharing *sh)
{
	const struct ynode *r = ynode_get(v, "replicas"), *o = ynode_get(v, "overhead");
	int64_t n = 0;
	int rc = GP_OK;
	if (sh->mode == SHARING_TIME_SLICING || sh->mode == SHARING_MPS) {
		if (!r)
			return gp_located(ld->err, v->loc,
					  "missing key 'replicas' in sharing; expected the units "
					  "per GPU, like {mode: %s, replicas: 4}",
					  sharing_name(sh->mode));
		/* MPS serves at most 48 clients per GPU (Volta and later). */
		rc = ld_get_int(ld, r, "replicas", 1,
				sh->mode == SHARING_MPS ? SCENARIO_MAX_MPS_CLIENTS
							: SCENARIO_MAX_TIME_SLICES,
				&n);
		sh->replicas = (int32_t)n;
	}
	const struct ynode *f = ynode_get(v, "failRequestsGreaterThanOne");
	if (!rc && f)
		rc = ld_get_bool(ld, f, "failRequestsGreaterThanOne", &sh->one_per_pod);
	sh->one_per_pod |= sh->mode == SHARING_MPS; /* the device plugin's, always */
	const struct ynode *rn = ynode_get(v, "renameByDefault");
	if (!rc && rn)
		rc = ld_get_bool(ld, rn, "renameByDefault", &sh->renamed);
	if (!rc && o) {
		rc = ld_get_amount(ld, o, "overhead", "a fraction like 0.05", &sh->overhead);
		if (!rc && sh->overhead > 1)
			rc = ld_bad_value(ld, o, "overhead", "a fraction from 0 to 1, like 0.05");
	}
	if (!rc && sh->mode == SHARING_MIG && !ynode_get(v, "layout"))
		rc = gp_located(ld->err, v->loc,
				"missing key 'layout' in sharing; expected the MIG instances of "
				"each GPU, like {mode: mig, layout: [3g.40gb, 3g.40gb]}");
	return rc;
}

/* exclusive | {mode: time-slicing, replicas: R, overhead: o} | {mode: mps, replicas: R}
 * | {mode: mig, layout: [...]} (checked against the GPU in check_mig_layout) | fractional */
static int pool_sharing(struct loader *ld, const struct ynode *v, void *obj)
{
	struct sharing *sh = &((struct pool_spec *)obj)->sharing;
	const struct ynode *mode = v->kind == YNODE_MAP ? ynode_get(v, "mode") : v;
	char list[128];
	ld_join(list, sizeof list, sharing_names, SHARING_MODES, " or ");
	if (!mode)
		return gp_located(ld->err, v->loc, "missing key 'mode' in sharing; expected %s",
				  list);
	int m = 0;
	int rc = ld_get_enum(ld, mode, "sharing mode", sharing_names, SHARING_MODES, &m);
	if (rc)
		return rc;
	sh->mode = (enum sharing_mode)m;
	sh->loc = v->loc;
	if (v == mode)
		return sh->mode == SHARING_EXCLUSIVE || sh->mode == SHARING_FRACTIONAL
			       ? GP_OK
			       : sharing_params(ld, v, sh);
	rc = ld_only_keys(ld, v, sharing_keys[m], 5, "this sharing mode");
	return rc ? rc : sharing_params(ld, v, sh);
}

/* A MIG layout must use profiles of the pool's GPU, at most 7 compute and 8
 * memory slices, and no profile more often than the GPU allows. */
static int check_mig_layout(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	const struct ynode *v = ynode_get(ynode_get(item, "sharing"), "layout");
	int rc = ld_expect_list(ld, v, "layout", "a list of MIG profiles like [3g.40gb, 3g.40gb]");
	if (rc)
		return rc;
	if (!p->gpu->n_mig)
		return gp_located(ld->err, v->loc,
				  "%s does not support MIG; expected a GPU with "
				  "MIG profiles like A100-80GB or H100-80GB",
				  p->gpu->name);
	if (v->n == 0 || v->n > 7)
		return gp_located(ld->err, v->loc, "a MIG layout has 1 to 7 instances, not %zu",
				  v->n);
	struct sharing *sh = &p->sharing;
	sh->layout = gp_xcalloc(v->n, sizeof *sh->layout);
	sh->n_layout = v->n;
	int compute = 0, memory = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		const struct mig_profile *mp =
			it->kind == YNODE_SCALAR ? catalog_mig_profile(p->gpu, it->value) : NULL;
		if (!mp) {
			const char *names[16];
			for (size_t k = 0; k < p->gpu->n_mig && k < 16; k++)
				names[k] = p->gpu->mig[k].name;
			return it->kind == YNODE_SCALAR
				       ? ld_unknown_word(ld, it->loc, "MIG profile", it->value,
							 names, p->gpu->n_mig)
				       : ld_bad_value(ld, it, "MIG profile", "a name like 3g.40gb");
		}
		sh->layout[i] = mp;
		compute += mp->compute_slices;
		memory += mp->memory_slices;
		int same = 0;
		for (size_t k = 0; k <= i; k++)
			same += sh->layout[k] == mp;
		if (same > mp->max_instances)
			return gp_located(ld->err, it->loc,
					  "%s allows at most %d instance(s) of %s "
					  "per GPU",
					  p->gpu->name, mp->max_instances, mp->name);
	}
	if (compute > 7 || memory > 8)
		return gp_located(ld->err, v->loc,
				  "invalid MIG layout for %s: it uses %d compute and %d memory "
				  "slices; expected at most 7 and 8",
				  p->gpu->name, compute, memory);
	return GP_OK;
}

/* powered: always (the default) | window: the pool's nodes are up only in its windows,
 * so idle capacity is charged only then. */
static int pool_powered(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"always", "window"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "powered", names, 2, &k);
	((struct pool_spec *)obj)->powered_in_windows = k == 1;
	return rc;
}

static int pool_startup(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "startup", false, &((struct pool_spec *)obj)->startup);
}

/* --- autoscale and spot ------------------------------------------------------ */

#define AUTOSCALE_HINT "a map like {min: 0, max: 4, provision_time: 5m}"

static int as_count(struct loader *ld, const struct ynode *v, const char *what, int32_t *out)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, what, 0, MAX_NODES_PER_POOL, &n);
	*out = (int32_t)n;
	return rc;
}

static int as_min(struct loader *ld, const struct ynode *v, void *obj)
{
	((struct autoscale_spec *)obj)->min_loc = v->loc;
	return as_count(ld, v, "autoscale min", &((struct autoscale_spec *)obj)->min);
}

static int as_max(struct loader *ld, const struct ynode *v, void *obj)
{
	((struct autoscale_spec *)obj)->max_loc = v->loc;
	int rc = as_count(ld, v, "autoscale max", &((struct autoscale_spec *)obj)->max);
	if (!rc && ((struct autoscale_spec *)obj)->max < 1)
		return ld_bad_value(ld, v, "autoscale max", "a whole number of nodes >= 1");
	return rc;
}

static int as_provision(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "provision_time", false,
			       &((struct autoscale_spec *)obj)->provision_time);
}

static int as_unneeded(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "scale_down_unneeded_time", false,
			       &((struct autoscale_spec *)obj)->unneeded_time);
}

static int as_delay(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "scale_down_delay_after_add", false,
			       &((struct autoscale_spec *)obj)->delay_after_add);
}

static int as_scan(struct loader *ld, const struct ynode *v, void *obj)
{
	sim_time *t = &((struct autoscale_spec *)obj)->scan_interval;
	int rc = ld_get_duration(ld, v, "scan_interval", true, t);
	/* A lower bound: at 10us a 3-job hour took 86 s of scan events.
	 * Cluster Autoscaler's --scan-interval defaults to 10s (FAQ.md). */
	if (!rc && *t < SIM_SECOND)
		rc = ld_bad_value(ld, v, "scan_interval",
				  "a duration of at least 1s (Cluster Autoscaler's "
				  "--scan-interval defaults to 10s)");
	return rc;
}

static int as_threshold(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "scale_down_utilization_threshold",
			       &((struct autoscale_spec *)obj)->threshold);
}

const char *const ld_expander_names[6] = {"random",   "least-waste", "price",
					  "priority", "most-pods",   "least-nodes"};

static int expander_name(struct loader *ld, const struct ynode *v, const char *word,
			 struct autoscale_spec *a)
{
	int k = -1;
	for (size_t i = 0; i < N_OF(ld_expander_names); i++)
		if (!strcmp(word, ld_expander_names[i]))
			k = (int)i;
	if (k < 0)
		return ld_unknown_word(ld, v->loc, "expander", word, ld_expander_names,
				       N_OF(ld_expander_names));
	if (a->n_expanders >= EXPANDER_CHAIN_MAX)
		return gp_located(ld->err, v->loc,
				  "more than %d expanders; expected a shorter chain",
				  EXPANDER_CHAIN_MAX);
	a->expanders[a->n_expanders++] = (enum expander_kind)k;
	return GP_OK;
}

/* expander: a name, a list ([priority, least-waste]) or CA's comma-separated
 * flag ("priority,least-waste"): filters applied in turn until one option
 * is left, ties drawn at random (expander/factory/chain.go). */
static int as_expander(struct loader *ld, const struct ynode *v, void *obj)
{
	struct autoscale_spec *a = obj;
	a->n_expanders = 0;
	a->expander_given = true;
	int rc = GP_OK;
	if (v->kind == YNODE_SCALAR) {
		char word[64];
		const char *s = v->value;
		while (!rc && *s) {
			size_t n = strcspn(s, ",");
			snprintf(word, sizeof word, "%.*s",
				 (int)(n < sizeof word ? n : sizeof word - 1), s);
			rc = expander_name(ld, v, word, a);
			s += n + (s[n] == ',');
		}
	} else {
		rc = ld_expect_list(ld, v, "expander",
				    "a name or a list like [priority, least-waste]");
		for (size_t i = 0; !rc && i < v->n; i++)
			rc = v->items[i]->kind == YNODE_SCALAR
				     ? expander_name(ld, v->items[i], v->items[i]->value, a)
				     : ld_bad_value(ld, v->items[i], "expander",
						    "an expander name");
	}
	if (!rc && !a->n_expanders)
		return ld_bad_value(ld, v, "expander", "an expander name like least-waste");
	a->expander = a->expanders[0];
	return rc;
}

static bool same_priorities(const struct expander_priority *a, size_t na,
			    const struct expander_priority *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].priority != b[i].priority || strcmp(a[i].pattern, b[i].pattern))
			return false;
	return true;
}

/* priorities: the priority expander's ConfigMap, {10: [".*spot.*"], 50:
 * ["^a100"]} (expander/priority/priority.go: a map of priority to regular
 * expressions matched against node group names); one for the cluster, so
 * pools that give it give the same. */
static int as_priorities(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)obj;
	struct scenario *sc = ld->sc;
	if (v->kind != YNODE_MAP)
		return ld_bad_value(ld, v, "priorities",
				    "a map like {10: [\".*-spot\"], 50: [a100]}");
	struct expander_priority *list = NULL;
	size_t n = 0;
	int rc = GP_OK;
	for (size_t i = 0; !rc && i < v->n; i++) {
		char *end = NULL;
		long prio = strtol(v->keys[i], &end, 10);
		if (!v->keys[i][0] || *end || prio < INT32_MIN || prio > INT32_MAX) {
			rc = gp_located(ld->err, v->key_locs[i],
					"priority '%s' is not a whole number; expected a map of "
					"priorities to lists of regular expressions",
					v->keys[i]);
			break;
		}
		const struct ynode *res = v->items[i];
		size_t m = res->kind == YNODE_SCALAR ? 1 : res->n;
		if (res->kind == YNODE_MAP)
			rc = ld_bad_value(ld, res, "priorities", "a list of regular expressions");
		for (size_t k = 0; !rc && k < m; k++) {
			const struct ynode *re = res->kind == YNODE_SCALAR ? res : res->items[k];
			if (re->kind != YNODE_SCALAR) {
				rc = ld_bad_value(ld, re, "priorities", "a regular expression");
				break;
			}
			regex_t compiled;
			if (regcomp(&compiled, re->value, REG_EXTENDED | REG_NOSUB)) {
				rc = gp_located(
					ld->err, re->loc,
					"cannot compile the regular expression '%s'; expected "
					"a POSIX extended one like ^a100-.*",
					re->value);
				break;
			}
			regfree(&compiled);
			list = gp_xrealloc(list, (n + 1) * sizeof *list);
			list[n++] = (struct expander_priority){(int32_t)prio, gp_xstrdup(re->value),
							       re->loc};
		}
	}
	if (!rc && sc->n_expander_priorities &&
	    !same_priorities(list, n, sc->expander_priorities, sc->n_expander_priorities))
		rc = gp_located(ld->err, v->loc,
				"priorities differ from another pool's; expected one priority "
				"ConfigMap for the cluster's autoscaler");
	if (rc || sc->n_expander_priorities) {
		for (size_t i = 0; i < n; i++)
			free(list[i].pattern);
		free(list);
		return rc;
	}
	sc->expander_priorities = list;
	sc->n_expander_priorities = n;
	return GP_OK;
}

static int as_max_provision(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "max_node_provision_time", true,
			       &((struct autoscale_spec *)obj)->max_provision_time);
}

static int as_priority(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "priority", -1000000, 1000000, &n);
	((struct autoscale_spec *)obj)->priority = (int32_t)n;
	return rc;
}

static const struct key_rule autoscale_rules[] = {
	{"min", as_min},
	{"max", as_max},
	{"provision_time", as_provision},
	{"scale_down_unneeded_time", as_unneeded},
	{"scale_down_utilization_threshold", as_threshold},
	{"scale_down_delay_after_add", as_delay},
	{"scan_interval", as_scan},
	{"expander", as_expander},
	{"priority", as_priority},
	{"priorities", as_priorities},
	{"max_node_provision_time", as_max_provision},
};

static int pool_autoscale(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	struct autoscale_spec *a = &p->autoscale;
	*a = (struct autoscale_spec){.on = true,
				     .provision_time = -1,
				     .unneeded_time = 10 * SIM_MINUTE,
				     .threshold = 0.5,
				     .scan_interval = 10 * SIM_SECOND,
				     .delay_after_add = 10 * SIM_MINUTE,
				     .expander = EXPANDER_LEAST_WASTE,
				     .expanders = {EXPANDER_LEAST_WASTE},
				     .n_expanders = 1,
				     .max_provision_time = 15 * SIM_MINUTE,
				     .loc = v->loc};
	int rc = ld_walk_map(ld, v, "autoscale", AUTOSCALE_HINT, autoscale_rules,
			     N_OF(autoscale_rules), a);
	return rc ? rc
		  : ld_require(ld, v, "max", "autoscale", "the largest number of nodes, like 4");
}

struct spot_load {
	struct pool_spec *pool;
	double discount; /* -1: none */
	bool has_price;
	struct price price;
};

static int spot_discount(struct loader *ld, const struct ynode *v, void *obj)
{
	struct spot_load *sl = obj;
	int rc = ld_get_amount(ld, v, "discount", "a fraction below 1 like 0.7", &sl->discount);
	if (!rc && !(sl->discount < 1))
		return ld_bad_value(ld, v, "discount", "a fraction below 1 like 0.7 (70% off)");
	return rc;
}

static int spot_price(struct loader *ld, const struct ynode *v, void *obj)
{
	struct spot_load *sl = obj;
	sl->has_price = true;
	return ld_walk_map(ld, v, "spot price",
			   "a map like {gpu_hour: 0.90, cpu_hour: 0.01, gib_hour: 0.001}",
			   price_rules, N_OF(price_rules), &sl->price);
}

static int interruption_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	struct spot_spec *sp = obj;
	if (v->kind != YNODE_SCALAR || units_rate(v->value, &sp->rate) || sp->rate < 0)
		return ld_bad_value(ld, v, "interruption rate", "a rate per node like 0.05/h");
	return GP_OK;
}

static int interruption_notice(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "notice", false, &((struct spot_spec *)obj)->notice);
}

static const struct key_rule interruption_rules[] = {{"rate", interruption_rate},
						     {"notice", interruption_notice}};

static int spot_interruption(struct loader *ld, const struct ynode *v, void *obj)
{
	struct spot_load *sl = obj;
	return ld_walk_map(ld, v, "interruption", "a map like {rate: 0.05/h}", interruption_rules,
			   N_OF(interruption_rules), &sl->pool->spot);
}

static const struct key_rule spot_rules[] = {
	{"discount", spot_discount}, {"price", spot_price}, {"interruption", spot_interruption}};

/* The spot price replaces the pool's: given, or the pool's less the discount
 * (price may come after spot in the map, so this runs once the pool is read). */
static int pool_spot(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	p->spot = (struct spot_spec){.on = true, .notice = 2 * SIM_MINUTE, .loc = v->loc};
	struct spot_load sl = {.pool = p, .discount = -1};
	int rc = ld_walk_map(ld, v, "spot",
			     "a map like {discount: 0.7, interruption: {rate: 0.05/h}}", spot_rules,
			     N_OF(spot_rules), &sl);
	if (rc)
		return rc;
	if (sl.has_price && sl.discount >= 0)
		return gp_located(ld->err, v->loc, "spot takes a price or a discount, not both");
	return GP_OK;
}

/* Where to blame min above max: the one an override gave, else min (else
 * the autoscale map, when min was left at its default). */
static struct srcloc min_max_loc(const struct autoscale_spec *a)
{
	if (ytree_is_override(a->max_loc.file) && !ytree_is_override(a->min_loc.file))
		return a->max_loc;
	return a->min_loc.file ? a->min_loc : a->loc;
}

/* Applies spot's price and checks autoscale against the pool (after the walk). */
static int finish_scaling(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	const struct ynode *spot = ynode_get(item, "spot");
	p->on_demand = p->price;
	if (spot) {
		const struct ynode *d = ynode_get(spot, "discount"), *pr = ynode_get(spot, "price");
		double off = 0;
		if (d && units_number(d->value, &off) == 0) {
			p->price.gpu_hour *= 1 - off;
			p->price.cpu_hour *= 1 - off;
			p->price.gib_hour *= 1 - off;
		}
		if (pr) {
			struct price was = p->price;
			p->price = (struct price){.gpu_hour = 0};
			int rc = ld_walk_map(ld, pr, "spot price", "", price_rules,
					     N_OF(price_rules), &p->price);
			if (rc)
				return rc;
			if (!p->price.currency[0])
				memcpy(p->price.currency, was.currency, sizeof was.currency);
		}
	}
	struct autoscale_spec *a = &p->autoscale;
	const struct ynode *nodes = ynode_get(item, "nodes");
	if (!a->on) {
		if (p->nodes < 1)
			return ld_bad_value(ld, nodes, "nodes", NODES_HINT);
		return GP_OK;
	}
	if (a->provision_time < 0)
		a->provision_time = p->startup;
	if (a->min > a->max)
		return gp_located(ld->err, min_max_loc(a),
				  "autoscale min %d is above max %d; expected "
				  "min <= max",
				  (int)a->min, (int)a->max);
	if (p->nodes < a->min || p->nodes > a->max)
		return gp_located(ld->err, nodes->loc,
				  "nodes %d is outside autoscale's [%d, %d]; "
				  "expected the initial size between min and max",
				  (int)p->nodes, (int)a->min, (int)a->max);
	if (p->powered_in_windows)
		return gp_located(ld->err, ynode_get(item, "powered")->loc,
				  "powered: window and autoscale both decide when nodes are up; "
				  "expected one of them");
	return GP_OK;
}

static void chain_text(const struct autoscale_spec *a, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int32_t i = 0; i < a->n_expanders && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "",
				      ld_expander_names[a->expanders[i]]);
}

/* The expander is the autoscaler's, one for the cluster: the pools that
 * name one must agree, and the others take it. */
static int check_expanders(struct loader *ld)
{
	const struct pool_spec *first = NULL;
	for (size_t i = 0; i < ld->sc->n_pools; i++) {
		const struct pool_spec *p = &ld->sc->pools[i];
		if (!p->autoscale.on || !p->autoscale.expander_given)
			continue;
		if (first &&
		    (first->autoscale.n_expanders != p->autoscale.n_expanders ||
		     memcmp(first->autoscale.expanders, p->autoscale.expanders,
			    (size_t)p->autoscale.n_expanders * sizeof *p->autoscale.expanders))) {
			char a[160], b[160];
			chain_text(&p->autoscale, a, sizeof a);
			chain_text(&first->autoscale, b, sizeof b);
			return gp_located(ld->err, p->autoscale.loc,
					  "expander %s differs from %s (pool %s); expected one "
					  "expander for the cluster's autoscaler",
					  a, b, first->name);
		}
		first = first ? first : p;
	}
	for (size_t i = 0; first && i < ld->sc->n_pools; i++) {
		struct autoscale_spec *a = &ld->sc->pools[i].autoscale;
		a->expander = first->autoscale.expander;
		a->n_expanders = first->autoscale.n_expanders;
		memcpy(a->expanders, first->autoscale.expanders, sizeof a->expanders);
	}
	return GP_OK;
}

/* trace: an openb node list in place of nodes, gpu, gpus_per_node, cpu and
 * memory; the entry becomes one pool per node shape (ld_openb_expand_pools). */
static int pool_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct pool_spec *p = obj;
	char *path = NULL;
	int rc = ld_get_string(ld, v, "trace",
			       "a path to an openb node list like "
			       "openb_node_list_gpu_node.csv",
			       &path);
	if (rc)
		return rc;
	free(p->trace_path);
	p->trace_path = ld_resolve(ld->sc->dir, path);
	p->trace_loc = v->loc;
	free(path);
	return GP_OK;
}

static int pool_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"openb"};
	int f = 0;
	(void)obj;
	return ld_get_enum(ld, v, "node list format", names, N_OF(names), &f);
}

/* An openb entry: the node list decides the nodes; sharing defaults to fractional. */
static int check_openb_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	static const char *const from_list[] = {"nodes", "gpu",    "gpus_per_node",
						"cpu",   "memory", "gpu_memory"};
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(from_list); k++)
			if (!strcmp(item->keys[i], from_list[k]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s comes from the node list (one node per row); "
						  "expected no %s with a trace",
						  item->keys[i], item->keys[i]);
	int rc = ld_require(ld, item, "format", "pool", "format: openb beside the trace");
	if (!rc && p->sharing.mode == SHARING_MIG)
		return gp_located(ld->err, p->sharing.loc,
				  "an openb node list shares GPUs by milli; "
				  "expected sharing fractional or exclusive");
	if (!ynode_get(item, "sharing"))
		p->sharing.mode = SHARING_FRACTIONAL;
	return rc;
}

static const struct key_rule pool_rules[] = {
	{"trace", pool_trace},
	{"format", pool_format},
	{"name", pool_name},
	{"nodes", pool_nodes},
	{"gpu", pool_gpu},
	{"gpus_per_node", pool_gpus_per_node},
	{"gpu_memory", pool_gpu_memory},
	{"cpu", pool_cpu},
	{"memory", pool_memory},
	{"labels", pool_labels},
	{"taints", pool_taints},
	{"sharing", pool_sharing},
	{"windows", pool_windows},
	{"price", pool_price},
	{"startup", pool_startup},
	{"powered", pool_powered},
	{"autoscale", pool_autoscale},
	{"spot", pool_spot},
};

const struct key_rule *ld_pool_rules(size_t *n)
{
	*n = N_OF(pool_rules);
	return pool_rules;
}

/* The GPU of a CPU-only pool: no product label, no memory, no MIG. */
static const struct gpu_type no_gpu = {"none", NULL, 0, 0, 0, 0, 0, NULL, 0};

/* gpus_per_node: 0 is a node without GPUs (a control-plane or CPU node): it
 * offers no GPU resource, so kube-scheduler counts it in a GPU pod's
 * FitError ("Insufficient nvidia.com/gpu", or the first filter it fails). */
static int cpu_only_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	const struct ynode *v = ynode_get(item, "gpu");
	if (!v)
		v = ynode_get(item, "sharing");
	if (!v)
		v = ynode_get(item, "gpu_memory");
	if (v)
		return gp_located(ld->err, v->loc,
				  "a pool with gpus_per_node: 0 has no GPUs; "
				  "expected no gpu, gpu_memory or sharing");
	p->gpu = &no_gpu;
	return GP_OK;
}

static int load_pool(struct loader *ld, const struct ynode *item, struct pool_spec *p)
{
	p->loc = item->loc;
	p->sharing.overhead = 0.05;
	p->sharing.replicas = 1;
	int rc = ld_walk_map(ld, item, "pool", POOL_HINT, pool_rules, N_OF(pool_rules), p);
	if (!rc)
		rc = ld_require(ld, item, "name", "pool", "a name like batch");
	if (!rc && p->trace_path && (p->autoscale.on || p->spot.on))
		return gp_located(ld->err, item->loc,
				  "an openb node list is a fixed set of nodes; "
				  "expected no autoscale or spot beside a trace");
	if (!rc && p->trace_path)
		return check_openb_pool(ld, item, p);
	if (!rc && ynode_get(item, "format"))
		return gp_located(ld->err, ynode_get(item, "format")->loc,
				  "format applies to a node list; expected a trace beside it");
	if (!rc)
		rc = ld_require(ld, item, "nodes", "pool", "a whole number of nodes >= 1");
	if (!rc)
		rc = ld_require(ld, item, "gpus_per_node", "pool", "a whole number from 0 to 64");
	if (!rc && p->gpus_per_node == 0)
		return cpu_only_pool(ld, item, p);
	if (!rc)
		rc = ld_require(ld, item, "gpu", "pool", "a catalog GPU type like A100-80GB");
	if (!rc)
		rc = finish_gpu_memory(ld, item, p);
	if (!rc && p->sharing.mode == SHARING_MIG)
		rc = check_mig_layout(ld, item, p);
	if (!rc)
		rc = finish_scaling(ld, item, p);
	return rc;
}

/* The most units a node advertises to one pod's request: time-sliced replicas
 * stack, MPS replicas spread one per GPU (failRequestsGreaterThanOne is judged
 * later, with its own message). */
static void widen_request(struct loader *ld, const struct pool_spec *p)
{
	int32_t n = p->sharing.mode == SHARING_TIME_SLICING ? p->gpus_per_node * p->sharing.replicas
		    : p->sharing.mode == SHARING_MPS
			    ? p->gpus_per_node
			    : sharing_max_units(&p->sharing, p->gpus_per_node);
	if (n > ld->widest_request)
		ld->widest_request = n;
}

/* Entries with an openb node list become their pools; names stay distinct. */
static int expand_openb_pools(struct loader *ld)
{
	struct scenario *sc = ld->sc;
	int rc = ld_openb_expand_pools(sc, ld->err);
	for (size_t i = 0; i < sc->n_pools && !rc; i++) {
		if (sc->pools[i].gpus_per_node > ld->widest_node)
			ld->widest_node = sc->pools[i].gpus_per_node;
		widen_request(ld, &sc->pools[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->pools[j].name, sc->pools[i].name))
				return gp_located(
					ld->err, sc->pools[i].loc,
					"pool name '%s' (of an openb node list) is also the "
					"name of the pool at line %d; expected distinct names",
					sc->pools[i].name, sc->pools[j].loc.line);
	}
	return rc;
}

/* One bill, one currency: every pool's prices are in the first pool's
 * (USD when none says). */
static int pool_currency(struct loader *ld, const struct ynode *item, const struct pool_spec *p)
{
	struct scenario *sc = ld->sc;
	const char *c = p->price.currency[0] ? p->price.currency : "USD";
	if (!sc->currency[0]) {
		memcpy(sc->currency, c, 4);
		for (int i = 0; i < 3; i++)
			sc->money_unit[i] = (char)tolower((unsigned char)c[i]);
		return GP_OK;
	}
	if (!strcmp(sc->currency, c))
		return GP_OK;
	const struct ynode *price = ynode_get(item, "price"),
			   *at = price && ynode_get(price, "currency")
					 ? ynode_get(price, "currency")
				 : price ? price
					 : item;
	return gp_located(ld->err, at->loc,
			  "pool '%s' is priced in %s, the pools before it in %s; expected one "
			  "currency for the whole bill",
			  p->name, c, sc->currency);
}

int ld_load_pools(struct loader *ld, const struct ynode *v)
{
	struct scenario *sc = ld->sc;
	int rc = ld_expect_list(ld, v, "pools", "a list of pools like [" POOL_HINT "]");
	if (rc)
		return rc;
	if (v->n == 0)
		return gp_located(ld->err, v->loc, "pools is empty; expected at least one pool");
	sc->pools = gp_xcalloc(v->n, sizeof *sc->pools);
	sc->n_pools = v->n;
	for (size_t i = 0; i < v->n; i++) {
		struct pool_spec *p = &sc->pools[i];
		rc = load_pool(ld, v->items[i], p);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sc->pools[j].name, p->name))
				return ld_duplicate(ld, v->items[i], "pool", p->name,
						    sc->pools[j].loc);
		if (p->gpus_per_node > ld->widest_node)
			ld->widest_node = p->gpus_per_node;
		widen_request(ld, p);
		rc = pool_currency(ld, v->items[i], p);
		if (!rc)
			rc = check_committed(ld, v->items[i], p);
		if (rc)
			return rc;
	}
	rc = check_expanders(ld);
	return rc ? rc : expand_openb_pools(ld);
}
