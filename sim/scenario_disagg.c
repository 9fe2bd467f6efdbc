/*
 * scenario_disagg.c - the disaggregated: key of an inference workload: its
 * prefill and decode workers and the link the KV cache crosses between them
 * (docs/inference.md, "Disaggregated prefill and decode"; the simulation is
 * sim/infer_disagg.c).
 *
 *   disaggregated: {prefill: {replicas: 2, gpus: 1}, decode: {replicas: 4, gpus: 2},
 *                   link: infiniband}     # | nvlink | ethernet | {bandwidth: 50GB/s, latency: 10us}
 *
 * A role's gpus, max_batch, max_batched_tokens and memory_fraction default to
 * the workload's; both roles are placed like the workload's replicas (its
 * pools, selectors and tolerations).  Each role must hold the KV cache of one
 * typical request (mean prompt + mean output), as vLLM refuses to start a
 * server that cannot; the check names the role.
 */
#include "gpuplan/scenario.h"

#include <math.h>
#include <string.h>

#include "gpuplan/catalog_specs.h"
#include "gpuplan/footprint.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

#define DISAGG_HINT \
	"{prefill: {replicas: 1, gpus: 1}, decode: {replicas: 2, gpus: 1}, link: infiniband}"
#define LINK_HINT "nvlink, infiniband, ethernet, or {bandwidth: 50GB/s, latency: 10us}"

/* The named links' figures are catalog_link's (catalog_specs.c). */

/* A named link: nvlink leaves its figures to the GPU type (infer_disagg.c). */
static void set_link(struct disagg_spec *d, const struct link_spec *l)
{
	d->link = !strcmp(l->name, "nvlink")       ? DISAGG_LINK_NVLINK
		  : !strcmp(l->name, "infiniband") ? DISAGG_LINK_INFINIBAND
						   : DISAGG_LINK_ETHERNET;
	d->link_bandwidth = l->gbps * 1e9 * CATALOG_LINK_EFF;
	d->link_latency_s = l->latency_us * 1e-6;
}

static struct disagg_spec *disagg_of(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	if (!w->inference) {
		gp_located(ld->err, v->loc,
			   "disaggregated applies to inference workloads; expected kind: "
			   "inference beside it");
		return NULL;
	}
	if (!w->inference->disagg) {
		struct disagg_spec *d = gp_xcalloc(1, sizeof *d);
		d->prefill.replicas = d->decode.replicas = 1;
		set_link(d, catalog_link("infiniband"));
		w->inference->disagg = d;
	}
	return w->inference->disagg;
}

/* --- a role ----------------------------------------------------------------- */

static int role_int(struct loader *ld, const struct ynode *v, const char *what, int64_t lo,
		    int64_t hi, int32_t *out)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, what, lo, hi, &n);
	if (!rc)
		*out = (int32_t)n;
	return rc;
}

static int role_replicas(struct loader *ld, const struct ynode *v, void *obj)
{
	if (v->kind == YNODE_MAP)
		return gp_located(ld->err, v->loc,
				  "a role's replicas are a fixed number; expected a whole number "
				  "like 2 (autoscaling a disaggregated service is not modelled)");
	return role_int(ld, v, "replicas", 1, 100000, &((struct disagg_role *)obj)->replicas);
}

static int role_gpus(struct loader *ld, const struct ynode *v, void *obj)
{
	return role_int(ld, v, "gpus", 1, FOOTPRINT_MAX_TP, &((struct disagg_role *)obj)->gpus);
}

static int role_max_batch(struct loader *ld, const struct ynode *v, void *obj)
{
	return role_int(ld, v, "max_batch", 1, 100000, &((struct disagg_role *)obj)->max_batch);
}

static int role_batched_tokens(struct loader *ld, const struct ynode *v, void *obj)
{
	return role_int(ld, v, "max_batched_tokens", 1, 10000000,
			&((struct disagg_role *)obj)->max_batched_tokens);
}

static int role_memory_fraction(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "memory_fraction",
			       &((struct disagg_role *)obj)->memory_fraction);
}

static const struct key_rule role_rules[] = {
	{"replicas", role_replicas},
	{"gpus", role_gpus},
	{"tensor_parallel", role_gpus},
	{"max_batch", role_max_batch},
	{"max_batched_tokens", role_batched_tokens},
	{"memory_fraction", role_memory_fraction},
};

#define ROLE_HINT "{replicas: 2, gpus: 1, max_batch: 256, max_batched_tokens: 2048}"

static int disagg_prefill(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "prefill", ROLE_HINT, role_rules, N_OF(role_rules),
			   &((struct disagg_spec *)obj)->prefill);
}

static int disagg_decode(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_walk_map(ld, v, "decode", ROLE_HINT, role_rules, N_OF(role_rules),
			   &((struct disagg_spec *)obj)->decode);
}

/* --- the link ----------------------------------------------------------------- */

static int link_bandwidth(struct loader *ld, const struct ynode *v, void *obj)
{
	double *bw = &((struct disagg_spec *)obj)->link_bandwidth;
	if (v->kind != YNODE_SCALAR || units_bandwidth(v->value, bw) || !(*bw > 0))
		return ld_bad_value(ld, v, "link bandwidth", "a bandwidth above zero like 50GB/s");
	return GP_OK;
}

static int link_latency(struct loader *ld, const struct ynode *v, void *obj)
{
	sim_time t = 0;
	int rc = ld_get_duration(ld, v, "link latency", false, &t);
	((struct disagg_spec *)obj)->link_latency_s = sim_seconds(t);
	return rc;
}

static const struct key_rule link_rules[] = {{"bandwidth", link_bandwidth},
					     {"latency", link_latency}};

static int disagg_link(struct loader *ld, const struct ynode *v, void *obj)
{
	struct disagg_spec *d = obj;
	if (v->kind == YNODE_MAP) {
		d->link = DISAGG_LINK_GIVEN;
		d->link_latency_s = 0;
		int rc = ld_walk_map(ld, v, "link", LINK_HINT, link_rules, N_OF(link_rules), d);
		if (!rc)
			rc = ld_require(ld, v, "bandwidth", "link", "a bandwidth like 50GB/s");
		return rc;
	}
	static const char *const names[] = {"nvlink", "infiniband", "ethernet"};
	int k = 0;
	int rc = ld_get_enum(ld, v, "link", names, N_OF(names), &k);
	if (rc)
		return rc;
	set_link(d, catalog_link(names[k]));
	return GP_OK;
}

static const struct key_rule disagg_rules[] = {
	{"prefill", disagg_prefill},
	{"decode", disagg_decode},
	{"link", disagg_link},
};

int ld_workload_disaggregated(struct loader *ld, const struct ynode *v, void *obj)
{
	struct disagg_spec *d = disagg_of(ld, v, obj);
	if (!d)
		return GP_EINPUT;
	return ld_walk_map(ld, v, "disaggregated", DISAGG_HINT, disagg_rules, N_OF(disagg_rules),
			   d);
}

/* --- once the workload is read ------------------------------------------------ */

/* What one GPU of a role's server may use in pool p (as scenario_inference.c's
 * server_cap, with the role's memory_fraction). */
static double role_cap(const struct pool_spec *p, const struct workload_spec *w,
		       const struct disagg_role *r)
{
	double unit = scenario_unit_memory(p, w);
	if (unit <= 0)
		unit = p->gpu->memory_bytes;
	if (w->inference->vram_given)
		return w->vram_bytes;
	return r->memory_fraction > 0 ? r->memory_fraction * unit : unit;
}

/* The role's server holds one typical request in some pool of the workload's. */
static int check_role(struct loader *ld, const struct ynode *item, const struct workload_spec *w,
		      const struct disagg_role *r, const char *role)
{
	const struct inference_spec *in = w->inference;
	const struct ynode *node = ynode_get(ynode_get(item, "disaggregated"), role);
	struct srcloc at = node ? node->loc : ynode_get(item, "disaggregated")->loc;
	if (!footprint_tp_valid(w->model, r->gpus))
		return gp_located(ld->err, at,
				  "the %s workers' %d GPUs do not divide the %d attention heads of "
				  "%s; expected gpus: 1, 2, 4 or 8",
				  role, (int)r->gpus, w->model->heads, w->model->name);
	if (r->max_batched_tokens < r->max_batch)
		return gp_located(ld->err, at,
				  "the %s workers' max_batched_tokens %d is below their max_batch "
				  "%d; expected at least one token per sequence",
				  role, (int)r->max_batched_tokens, (int)r->max_batch);
	const struct pool_spec *best = NULL;
	double best_cap = 0, need = 0;
	for (size_t i = 0; i < ld->sc->n_pools; i++) {
		const struct pool_spec *p = &ld->sc->pools[i];
		if (!scenario_pool_offers(p, w) || r->gpus > p->gpus_per_node)
			continue;
		double cap = role_cap(p, w, r);
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization, (enum quant)in->kv_cache,
				  r->gpus, cap, &fp);
		if (footprint_max_sequences(&fp, in->context) >= 1)
			return GP_OK;
		if (!best || cap > best_cap)
			best = p, best_cap = cap, need = footprint_bytes_per_gpu(&fp, in->context);
	}
	if (!best)
		return gp_located(ld->err, at,
				  "no pool of the workload's has %d GPUs on a node for its %s "
				  "workers; expected fewer gpus",
				  (int)r->gpus, role);
	double gib = 1024.0 * 1024 * 1024;
	return gp_located(
		ld->err, at,
		"the %s workers (%d x %s, pool %s) cannot hold the KV cache of one "
		"%lld-token request: one GPU needs %.2f GiB (weights, runtime and KV) and "
		"has %.2f GiB; expected more gpus or a larger memory_fraction",
		role, (int)r->gpus, best->gpu->name, best->name, (long long)in->context, need / gib,
		best_cap / gib);
}

/* A role's keys not given take the workload's. */
static void role_defaults(struct disagg_role *r, const struct workload_spec *w)
{
	const struct inference_spec *in = w->inference;
	if (!r->gpus)
		r->gpus = w->gpus;
	if (!r->max_batch)
		r->max_batch = in->max_batch;
	if (!r->max_batched_tokens)
		r->max_batched_tokens = in->max_batched_tokens > r->max_batch
						? in->max_batched_tokens
						: r->max_batch;
	if (!r->memory_fraction)
		r->memory_fraction = in->memory_fraction;
}

int ld_finish_disagg(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	struct disagg_spec *d = w->inference->disagg;
	const struct ynode *rep = ynode_get(item, "replicas");
	if (rep)
		return gp_located(ld->err, rep->loc,
				  "replicas of a disaggregated service are per role; expected "
				  "disaggregated: {prefill: {replicas: N}, decode: {replicas: M}}");
	if (w->request != REQUEST_GPUS)
		return gp_located(ld->err, ynode_get(item, "gpus")->loc,
				  "disaggregated workers take whole GPUs; expected gpus: N");
	role_defaults(&d->prefill, w);
	role_defaults(&d->decode, w);
	int rc = check_role(ld, item, w, &d->prefill, "prefill");
	if (!rc)
		rc = check_role(ld, item, w, &d->decode, "decode");
	return rc;
}

/* The least memory a GPU of either role needs (what placement filters on). */
double ld_disagg_least_vram(const struct workload_spec *w)
{
	const struct inference_spec *in = w->inference;
	const struct disagg_role *roles[] = {&in->disagg->prefill, &in->disagg->decode};
	double least = 0;
	for (size_t i = 0; i < 2; i++) {
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization, (enum quant)in->kv_cache,
				  roles[i]->gpus, 0, &fp);
		double need = footprint_bytes_per_gpu(&fp, in->context);
		if (roles[i]->memory_fraction > 0)
			need /= roles[i]->memory_fraction;
		if (i == 0 || need < least)
			least = need;
	}
	return least;
}
