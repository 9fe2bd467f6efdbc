/*
 * diagnose_options.c - what sharing mode or narrower weights would let a
 * pool's GPUs hold more of a workload's pods (diagnose.h): the alternatives
 * the allocation and memory findings name and advise runs; and which pools a
 * workload may use or its rules keep it off.
 */
#include "gpuplan/diagnose.h"

#include "gpuplan/cluster.h"
#include "gpuplan/footprint.h"
#include "gpuplan/infer.h"
#include "gpuplan/placement.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The MIG profile of p's GPU that holds vram with the most instances (more
 * compute on ties), or NULL. */
static const struct mig_profile *best_mig(const struct pool_spec *p, double vram)
{
	const struct mig_profile *best = NULL;
	for (size_t i = 0; i < p->gpu->n_mig; i++) {
		const struct mig_profile *m = &p->gpu->mig[i];
		if (m->memory_bytes < vram)
			continue;
		if (!best || m->max_instances > best->max_instances ||
		    (m->max_instances == best->max_instances &&
		     m->compute_slices > best->compute_slices))
			best = m;
	}
	return best;
}

size_t diagnose_sharing_options(const struct pool_spec *p, const struct workload_spec *w,
				struct diagnose_option *out)
{
	if (w->request != REQUEST_GPUS)
		return 0;
	double mem = p->gpu->memory_bytes, vram = w->vram_bytes;
	struct sharing_ask ask = scenario_ask(w);
	int32_t now = sharing_pods_per_gpu(&p->sharing, &ask);
	size_t n = 0;
	static const int32_t replicas[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		int32_t r = replicas[i];
		if (r > now && vram * r <= mem)
			out[n++] = (struct diagnose_option){SHARING_TIME_SLICING, r, r, NULL, 0};
	}
	for (size_t i = 0; i < 2; i++) {
		int32_t r = replicas[i];
		if (r > now && vram <= mem / r)
			out[n++] = (struct diagnose_option){SHARING_MPS, r, r, NULL, 0};
	}
	if (w->gpus != 1 || vram <= 0)
		return n; /* a MIG instance or a share is one GPU's; sizing needs the VRAM */
	const struct mig_profile *m = best_mig(p, vram);
	if (m && m->max_instances > now)
		out[n++] = (struct diagnose_option){SHARING_MIG, m->max_instances, 0, m, 0};
	int32_t milli = (int32_t)ceil(vram / mem * 1000 / 50 - 1e-9) * 50;
	if (milli < 50)
		milli = 50;
	if (milli < 1000 && 1000 / milli > now)
		out[n++] =
			(struct diagnose_option){SHARING_FRACTIONAL, 1000 / milli, 0, NULL, milli};
	return n;
}

void diagnose_option_name(const struct diagnose_option *o, char *buf, size_t len)
{
	const char *mode = sharing_label(o->mode);
	switch (o->mode) {
	case SHARING_TIME_SLICING:
	case SHARING_MPS: snprintf(buf, len, "%s x%d", mode, (int)o->replicas); break;
	case SHARING_MIG:
		snprintf(buf, len, "%s %s x%d", mode, o->mig->name, (int)o->per_gpu);
		break;
	case SHARING_FRACTIONAL: snprintf(buf, len, "%s %d milli", mode, (int)o->milli); break;
	case SHARING_EXCLUSIVE: snprintf(buf, len, "%s", mode); break;
	}
}

bool diagnose_quant_fit(const struct pool_spec *p, const struct workload_spec *w, int32_t per_gpu,
			enum quant *q, double *vram, double *freed)
{
	if (!w->model || w->vram_bytes <= 0)
		return false;
	int tp = w->request == REQUEST_GPUS && w->gpus > 0 ? w->gpus : 1;
	double now = footprint_weights_bytes(w->model, (enum quant)w->quantization);
	/* fp8 has int8's footprint; int8 is the one every GPU runs. */
	static const enum quant narrower[] = {QUANT_INT8, QUANT_INT4};
	for (size_t i = 0; i < 2; i++) {
		double saved = (now - footprint_weights_bytes(w->model, narrower[i])) / tp;
		if (saved <= 0)
			continue;
		double need = w->vram_bytes - saved;
		if (need * per_gpu <= p->gpu->memory_bytes) {
			*q = narrower[i];
			*vram = need;
			*freed = saved;
			return true;
		}
	}
	return false;
}

int32_t diagnose_fewer_replicas(const struct workload_spec *w, double duty_pct)
{
	const struct inference_spec *in = w->inference;
	if (!in || in->target_queue > 0 || in->replicas < 2 || !(duty_pct < 100 * DIAGNOSE_DUTY))
		return 0;
	int32_t need = (int32_t)ceil(in->replicas * duty_pct / (100 * DIAGNOSE_DUTY));
	need = need > 1 ? need : 1;
	return need < in->replicas ? need : 0;
}

/* out[p]: whether pool p offers what w asks for and is ruled (a rule of w
 * keeps it off), or else usable (nothing keeps it off). */
static void pools_of(const struct scenario *sc, size_t w, bool ruled, bool *out)
{
	struct cluster c;
	struct placer pl;
	cluster_init(&c, sc);
	placement_init(&pl, &c);
	for (size_t p = 0; p < sc->n_pools; p++)
		out[p] = scenario_gpu_equivalent(&sc->pools[p], &sc->workloads[w]) > 0 &&
			 (ruled ? placement_pool_ruled(&pl, w, p)
				: !placement_pool_filtered(&pl, w, p));
	placement_free(&pl);
	cluster_free(&c);
}

void diagnose_hidden_pools(const struct scenario *sc, size_t w, bool *out)
{
	pools_of(sc, w, true, out);
}

void diagnose_usable_pools(const struct scenario *sc, size_t w, bool *out)
{
	pools_of(sc, w, false, out);
}

bool diagnose_share_a_pool(const struct scenario *sc, size_t a, size_t b)
{
	bool *pa = gp_xcalloc(2 * sc->n_pools + 1, sizeof *pa), *pb = pa + sc->n_pools;
	diagnose_usable_pools(sc, a, pa);
	diagnose_usable_pools(sc, b, pb);
	bool common = false;
	for (size_t p = 0; p < sc->n_pools && !common; p++)
		common = pa[p] && pb[p];
	free(pa);
	return common;
}

const struct quota_entry *diagnose_gpu_quota(const struct queue_spec *q)
{
	for (size_t i = 0; i < q->n_quota; i++)
		if (!strcmp(q->quota[i].resource, "nvidia.com/gpu"))
			return &q->quota[i];
	return NULL;
}

void diagnose_quota_map(struct gp_sbuf *b, const struct queue_spec *q, const char *res,
			double amount, bool limit)
{
	gp_sb_printf(b, "{");
	size_t n = 0;
	for (size_t i = 0; i < q->n_quota; i++) {
		const struct quota_entry *e = &q->quota[i];
		double x = !strcmp(e->resource, res) ? amount
			   : limit                   ? e->borrowing_limit
						     : e->nominal;
		if (isinf(x))
			continue;
		if (!strcmp(e->resource, "memory"))
			gp_sb_printf(b, "%s%s: %.0fGiB", n++ ? ", " : "", e->resource, x / GP_GIB);
		else
			gp_sb_printf(b, "%s%s: %g", n++ ? ", " : "", e->resource, x);
	}
	gp_sb_printf(b, "}");
}

/* Which rules keep w off the hidden pools: an untolerated NoSchedule or
 * NoExecute taint of theirs (TaintToleration runs first), else its node
 * selector, affinity or gpu_spec.  A taint the messages name on a node that
 * could hold nothing (a control plane without GPUs) hides nothing. */
int diagnose_hiding_rules(const struct scenario *sc, size_t w, const size_t *hidden, size_t nh)
{
	int rules = 0;
	for (size_t i = 0; i < nh; i++) {
		bool tainted = !placement_pool_tolerated(&sc->workloads[w], &sc->pools[hidden[i]]);
		rules |= tainted ? FINDING_RULE_TAINT : FINDING_RULE_AFFINITY;
	}
	return rules;
}

int64_t diagnose_batch_fits(const struct scenario *sc, size_t w)
{
	const struct workload_spec *ws = &sc->workloads[w];
	const struct inference_spec *is = ws->inference;
	int64_t seqs = 256;
	for (size_t p = 0; is && ws->model && p < sc->n_pools; p++) {
		if (!(scenario_gpu_equivalent(&sc->pools[p], ws) > 0))
			continue;
		/* Without memory_fraction the server is sized for its batch: what
		 * the GPU allows is vLLM's default utilization, 0.9. */
		double mem = is->memory_fraction > 0 ? infer_server_memory(&sc->pools[p], ws)
						     : 0.9 * sc->pools[p].gpu->memory_bytes;
		struct footprint fp;
		footprint_compute(ws->model, (enum quant)ws->quantization, (enum quant)is->kv_cache,
				  is->tensor_parallel, mem, &fp);
		seqs = footprint_max_sequences(&fp, is->context);
		break;
	}
	return seqs > DIAGNOSE_MAX_BATCH ? DIAGNOSE_MAX_BATCH : seqs;
}

void diagnose_fix_max_batch(struct finding *f, const struct workload_spec *w, int64_t n)
{
	struct finding_fix *x = finding_fixf(f, "max_batch %lld for %s", (long long)n, w->name);
	finding_fix_setf(x, "workloads.%s.max_batch=%lld", w->name, (long long)n);
	if (w->inference->max_batched_tokens < DIAGNOSE_MAX_TOKENS)
		finding_fix_setf(x, "workloads.%s.max_batched_tokens=%d", w->name,
				 DIAGNOSE_MAX_TOKENS);
}
