/*
 * cluster_figures.c - what one pod of a workload takes on a pool
 * (cluster_int.h, "Pod figures"), computed once a run.
 */
#include "cluster_int.h"

#include "gpuplan/common.h"
#include "gpuplan/sharing.h"

#include <string.h>

struct pod_figures cluster_figure(const struct cluster *c, size_t p, const struct workload_spec *w,
				  int32_t gpus)
{
	const struct pool_spec *spec = &c->sc->pools[p];
	const struct sharing *sh = &spec->sharing;
	struct sharing_ask ask = scenario_ask(w);
	int32_t n = w->request == REQUEST_MILLI ? 1 : gpus; /* (a MIG pod's is its instance) */
	return (struct pod_figures){.units = sharing_pod_units(sh, &ask),
				    .whole = !sharing_replicated(sh) && w->request == REQUEST_GPUS,
				    .equivalent = sharing_pod_equivalent(sh, &ask, n),
				    .share = sharing_compute(sh, spec->gpu, &ask),
				    .cpu = spec->cpu > 0 ? w->cpu : 0,
				    .memory = spec->memory_bytes > 0 ? w->memory_bytes : 0,
				    .cpu_scored = cluster_scored_cpu(w),
				    .memory_scored = cluster_scored_memory(w)};
}

void cluster_figures_init(struct cluster *c)
{
	const struct scenario *sc = c->sc;
	c->figures = gp_xcalloc(sc->n_workloads * sc->n_pools + 1, sizeof *c->figures);
	for (size_t w = 0; w < sc->n_workloads; w++)
		for (size_t p = 0; p < sc->n_pools; p++)
			c->figures[w * sc->n_pools + p] =
				cluster_figure(c, p, &sc->workloads[w], sc->workloads[w].gpus);
}

bool cluster_figures_hold(const struct cluster *c, size_t p, const struct workload_spec *w,
			  int32_t gpus, const struct pod_figures *f)
{
	struct pod_figures again = cluster_figure(c, p, w, gpus);
	/* bit for bit: the doubles are compared as the class table does */
	return again.units == f->units && again.whole == f->whole &&
	       !memcmp(&again.equivalent, &f->equivalent, sizeof again.equivalent) &&
	       !memcmp(&again.share, &f->share, sizeof again.share) &&
	       !memcmp(&again.cpu, &f->cpu, sizeof again.cpu) &&
	       !memcmp(&again.memory, &f->memory, sizeof again.memory) &&
	       again.cpu_scored == f->cpu_scored && again.memory_scored == f->memory_scored;
}
