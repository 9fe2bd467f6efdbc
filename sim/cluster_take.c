/*
 * cluster_take.c - the GPUs a pod takes on its node and gives back
 * (cluster.h): which GPUs (best fit, the device plugin's distributed
 * replicas, a MIG instance), the units and tenants of each, and a release
 * undone for the preemption's dry runs.  The node's class, keys and group
 * follow in cluster.c (cluster_node_moved).
 */
#include "gpuplan/cluster.h"

#include "cluster_int.h"

#include <assert.h>
#include <string.h>

/* Best fit among the node's GPUs not in `taken`: the fewest free units that
 * still hold `need` (whole: only untouched GPUs), lowest index on ties.
 * Replicated GPUs (time-slicing, MPS) go the other way, to the most free
 * replicas: the device plugin's default allocation policy, "distributed",
 * prefers the GPUs with the fewest allocated replicas (k8s-device-plugin,
 * internal/rm/allocate.go), so that pods spread over a node's GPUs instead
 * of stacking on one while the others idle. */
static int pick_gpu(const struct cluster *c, const struct node *nd, uint64_t taken, int32_t need,
		    bool whole, bool distributed)
{
	const struct pool_state *ps = &c->pools[nd->pool];
	int best = -1;
	for (int i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		if ((taken >> i & 1) || g->free < need || (whole && !cluster_untouched(ps, g)))
			continue;
		int32_t best_free = best < 0 ? 0 : c->gpus[nd->first_gpu + best].free;
		if (best < 0 || (distributed ? g->free > best_free : g->free < best_free))
			best = i;
	}
	return best;
}

/* The lowest GPU and layout slot with a free instance of the profile. */
static int pick_instance(const struct cluster *c, const struct node *nd, const char *profile,
			 int8_t *slot)
{
	const struct sharing *sh = &c->sc->pools[nd->pool].sharing;
	for (int i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		for (size_t k = 0; k < sh->n_layout; k++)
			if ((g->mig_free >> k & 1) && !strcmp(sh->layout[k]->name, profile)) {
				*slot = (int8_t)k;
				return i;
			}
	}
	return -1;
}

/* The first tenant goes inline; a second moves them all to `more`, which
 * the GPU keeps (a shared GPU that had two tenants will have two again).
 * `more` has room for 4, doubled when a power of two from 4 on is full, so
 * the count alone says when it is: its room is at least the power of two
 * at or above the count, whatever the count did since. */
static void add_tenant(struct gpu *g, struct tenant t)
{
	uint16_t n = g->n_tenants;
	if (n == 1 && !g->more) {
		g->more = gp_xmalloc(4 * sizeof *g->more);
		g->more[0] = g->first;
	} else if (g->more && n >= 4 && !(n & (n - 1))) {
		g->more = gp_xrealloc(g->more, 2 * (size_t)n * sizeof *g->more);
	}
	GPU_TENANTS(g)[g->n_tenants++] = t;
}

/* Removes job from the GPU's tenants; the units it held there. */
static int32_t remove_tenant(struct gpu *g, uint32_t job)
{
	struct tenant *t = GPU_TENANTS(g);
	for (uint16_t i = 0; i < g->n_tenants; i++)
		if (t[i].job == job) {
			int32_t units = t[i].units;
			/* the last (a GPU's only one) stays where it was */
			if (i != --g->n_tenants)
				t[i] = t[g->n_tenants];
			return units;
		}
	assert(0 && "job is a tenant of the GPU it releases");
	return 0;
}

/*
 * Time-sliced replicas beyond the node's GPUs with a free one: one on each
 * of those GPUs, then the rest one at a time where the most are free, as
 * the device plugin's distributed allocation balances replicas over GPUs
 * (k8s-device-plugin, "the plugin simply creates R references to each GPU
 * and indiscriminately hands them out").  per_gpu[i]: replicas on GPU i.
 */
static void stack_replicas(const struct cluster *c, const struct node *nd, int32_t n,
			   struct cluster_grant *grant, int32_t *per_gpu)
{
	int32_t left = n;
	for (int i = 0; i < nd->gpus; i++)
		if (c->gpus[nd->first_gpu + i].free > 0) {
			grant->gpu_mask |= UINT64_C(1) << i;
			per_gpu[i] = 1;
			left--;
		}
	for (; left > 0; left--) {
		int best = -1;
		for (int i = 0; i < nd->gpus; i++) {
			int32_t room = c->gpus[nd->first_gpu + i].free - per_gpu[i];
			if (room > 0 &&
			    (best < 0 || room > c->gpus[nd->first_gpu + best].free - per_gpu[best]))
				best = i;
		}
		assert(best >= 0 && "the index promised the replicas on this node");
		per_gpu[best]++;
	}
}

/* n GPUs for a pod of `units` per GPU, one at a time by pick_gpu (best fit,
 * or distributed over replicated GPUs); where a GPU has one unit, a GPU with
 * room is an untouched one and best fit takes the lowest: the node's mask
 * says which without reading the GPUs. */
static uint64_t best_fit(const struct cluster *c, const struct node *nd, int32_t n, int32_t units,
			 bool whole)
{
	uint64_t mask = 0, room = nd->untouched;
	bool one_unit = c->pools[nd->pool].units_per_gpu == 1;
	bool distributed = sharing_replicated(&c->sc->pools[nd->pool].sharing);
	for (int32_t k = 0; k < n; k++) {
		int i = one_unit ? (room ? __builtin_ctzll(room) : -1)
				 : pick_gpu(c, nd, mask, units, whole, distributed);
		assert(i >= 0 && (!one_unit || units == 1) &&
		       "the index promised room on this node");
		mask |= UINT64_C(1) << i;
		room &= room - 1;
	}
	return mask;
}

/* The node's GPUs with a free unit. */
static int32_t gpus_with_room(const struct cluster *c, const struct node *nd)
{
	int32_t n = 0;
	for (int i = 0; i < nd->gpus; i++)
		n += c->gpus[nd->first_gpu + i].free > 0;
	return n;
}

/* Chooses the GPUs (and MIG slot) and what each holds (per_gpu[i], units on
 * GPU i) for a pod of figures f; fills grant and returns the tenant's share. */
static double choose(const struct cluster *c, const struct node *nd, const struct workload_spec *w,
		     int32_t gpus, const struct pod_figures *f, struct cluster_grant *grant,
		     int32_t *per_gpu)
{
	grant->mig_slot = -1;
	grant->units = f->units;
	grant->equivalent = f->equivalent;
	if (w->request == REQUEST_MIG) {
		int i = pick_instance(c, nd, w->mig_profile, &grant->mig_slot);
		grant->gpu_mask = UINT64_C(1) << i;
		per_gpu[i] = 1;
		return f->share;
	}
	int32_t n = w->request == REQUEST_MILLI ? 1 : gpus;
	grant->gpu_mask = c->prefer; /* a gpu_policy's choice (placement.c), else best fit */
	if (sharing_stacks(&c->sc->pools[nd->pool].sharing) && !c->prefer &&
	    gpus_with_room(c, nd) < n) {
		for (int i = 0; i < nd->gpus; i++)
			per_gpu[i] = f->units;
		stack_replicas(c, nd, n, grant, per_gpu);
		return f->share;
	}
	if (!c->prefer)
		grant->gpu_mask = best_fit(c, nd, n, f->units, f->whole);
	assert(__builtin_popcountll(grant->gpu_mask) == n && "one GPU per unit asked");
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1) /* the take reads these alone */
		per_gpu[__builtin_ctzll(m)] = f->units;
	return f->share;
}

int64_t cluster_scored_cpu(const struct workload_spec *w)
{
	return w->cpu > 0 ? gp_llround(w->cpu * 1000) : CLUSTER_NONZERO_CPU_MILLI;
}

int64_t cluster_scored_memory(const struct workload_spec *w)
{
	return w->memory_bytes > 0 ? gp_llround(w->memory_bytes) : CLUSTER_NONZERO_MEMORY;
}

static void take_units(struct cluster *c, int32_t node, const struct workload_spec *w, int32_t gpus,
		       const struct pod_figures *f, uint32_t job, double busy,
		       struct cluster_grant *grant);

/* cluster_take's GPUs for a pod of whole exclusive GPUs (figures f), as
 * choose and take_units would take them: best fit is the node's lowest
 * untouched GPUs (each holds one unit, and an untouched GPU has no tenant),
 * and the pod holds each alone. */
static void take_whole(struct cluster *c, int32_t node, const struct workload_spec *w, int32_t gpus,
		       const struct pod_figures *f, uint32_t job, double busy,
		       struct cluster_grant *grant)
{
	struct node *nd = &c->nodes[node];
	assert(c->pools[nd->pool].units_per_gpu == 1 && f->units == 1 && f->whole &&
	       gpus <= gp_popcount64(nd->untouched) && "the index promised the GPUs on this node");
	uint64_t mask = 0, room = nd->untouched;
	for (int32_t k = 0; k < gpus; k++) {
		mask |= room & -room;
		room &= room - 1;
	}
	grant->gpu_mask = mask;
	grant->units = 1;
	grant->mig_slot = -1;
	grant->equivalent = f->equivalent;
	nd->untouched &= ~mask;
	struct tenant t = {job, 1, busy, w->sm_share, f->share};
	for (uint64_t m = mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct gpu *g = &c->gpus[nd->first_gpu + i];
		assert(g->free == 1 && g->n_tenants == 0);
		g->free = 0;
		if (w->vram_bytes)
			c->vram_used[nd->first_gpu + i] += w->vram_bytes;
		GPU_TENANTS(g)[0] = t;
		g->n_tenants = 1;
	}
}

void cluster_take(struct cluster *c, int32_t node, const struct workload_spec *w, int32_t gpus,
		  uint32_t job, struct cluster_grant *grant)
{
	const struct node *nd = &c->nodes[node];
	const struct pod_figures *f = cluster_figures_of(c, (size_t)nd->pool, w, gpus);
	struct pod_figures own;
	if (!f) {
		own = cluster_figure(c, (size_t)nd->pool, w, gpus);
		f = &own;
	}
	assert(cluster_figures_hold(c, (size_t)nd->pool, w, gpus, f));
	grant->node = node;
	grant->first_gpu = nd->first_gpu;
	grant->vram = w->vram_bytes;
	grant->cpu = f->cpu;
	grant->memory = f->memory;
	c->nodes[node].cpu_free -= grant->cpu;
	c->nodes[node].memory_free -= grant->memory;
	grant->cpu_scored = f->cpu_scored;
	grant->memory_scored = f->memory_scored;
	c->nodes[node].cpu_scored += grant->cpu_scored;
	c->nodes[node].memory_scored += grant->memory_scored;
	assert(c->nodes[node].cpu_free > -1e-6 && c->nodes[node].memory_free > -1 &&
	       "no cpu or memory over-requested");
	double busy = c->busy >= 0 ? c->busy : w->gpu_busy;
	if (!c->prefer && w->request == REQUEST_GPUS &&
	    c->sc->pools[nd->pool].sharing.mode == SHARING_EXCLUSIVE)
		take_whole(c, node, w, gpus, f, job, busy, grant);
	else
		take_units(c, node, w, gpus, f, job, busy, grant);
	cluster_node_moved(c, node, grant->equivalent);
	grant->mix = cluster_grant_mix(c, w, grant);
	cluster_state_add(c, grant->mix, 1);
}

/* cluster_take's GPUs for any pod: chosen (choose), then taken one by one. */
static void take_units(struct cluster *c, int32_t node, const struct workload_spec *w, int32_t gpus,
		       const struct pod_figures *f, uint32_t job, double busy,
		       struct cluster_grant *grant)
{
	const struct node *nd = &c->nodes[node];
	int32_t per_gpu[64];
	double share = choose(c, nd, w, gpus, f, grant, per_gpu);
	c->prefer = 0;
	/* the granted GPUs alone, lowest first: a pod holds few of a node's */
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct gpu *g = &c->gpus[nd->first_gpu + i];
		if (grant->mig_slot >= 0)
			g->mig_free &= (uint8_t) ~(1u << grant->mig_slot);
		g->free -= per_gpu[i];
		assert(g->free >= 0);
		c->nodes[node].untouched &= ~(UINT64_C(1) << i);
		if (w->vram_bytes)
			c->vram_used[nd->first_gpu + i] += w->vram_bytes;
		add_tenant(g, (struct tenant){job, per_gpu[i], busy, w->sm_share, share});
	}
}

void cluster_release(struct cluster *c, uint32_t job, const struct cluster_grant *grant)
{
	cluster_state_add(c, grant->mix, -1);
	struct node *nd = &c->nodes[grant->node];
	/* a GPU of one unit held by the pod alone (exclusive whole GPUs) goes
	 * back untouched; others remove the pod from their tenants */
	bool alone = c->pools[nd->pool].units_per_gpu == 1 && grant->mig_slot < 0;
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct gpu *g = &c->gpus[nd->first_gpu + i];
		if (alone && g->n_tenants == 1) {
			assert(g->free == 0 && GPU_TENANTS(g)[0].job == job &&
			       GPU_TENANTS(g)[0].units == 1);
			g->n_tenants = 0;
			g->free = 1;
			nd->untouched |= UINT64_C(1) << i;
		} else {
			if (grant->mig_slot >= 0)
				g->mig_free |= (uint8_t)(1u << grant->mig_slot);
			g->free += remove_tenant(g, job);
			if (cluster_untouched(&c->pools[nd->pool], g))
				nd->untouched |= UINT64_C(1) << i;
		}
		if (grant->vram) {
			double *vram = &c->vram_used[nd->first_gpu + i];
			*vram -= grant->vram;
			if (*vram < 1)
				*vram = 0; /* float dust */
		}
		assert(g->free <= c->pools[nd->pool].units_per_gpu && "units released twice");
	}
	c->nodes[grant->node].cpu_free += grant->cpu;
	c->nodes[grant->node].memory_free += grant->memory;
	c->nodes[grant->node].cpu_scored -= grant->cpu_scored;
	c->nodes[grant->node].memory_scored -= grant->memory_scored;
	assert(c->nodes[grant->node].cpu_scored >= 0 && c->nodes[grant->node].memory_scored >= 0);
	cluster_node_moved(c, grant->node, -grant->equivalent);
}

void cluster_save(const struct cluster *c, uint32_t job, const struct cluster_grant *grant,
		  struct tenant *saved)
{
	int k = 0;
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1) {
		const struct gpu *g = &c->gpus[grant->first_gpu + __builtin_ctzll(m)];
		const struct tenant *t = GPU_TENANTS(g);
		uint16_t i = 0;
		while (i + 1 < g->n_tenants && t[i].job != job)
			i++;
		saved[k++] = t[i];
	}
}

void cluster_put_back(struct cluster *c, uint32_t job, const struct cluster_grant *grant,
		      const struct tenant *saved)
{
	(void)job; /* read by the assertion only */
	cluster_state_add(c, grant->mix, 1);
	struct node *nd = &c->nodes[grant->node];
	int k = 0;
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1) {
		int i = __builtin_ctzll(m);
		struct gpu *g = &c->gpus[nd->first_gpu + i];
		if (grant->mig_slot >= 0)
			g->mig_free &= (uint8_t) ~(1u << grant->mig_slot);
		g->free -= saved[k].units;
		assert(g->free >= 0 && saved[k].job == job);
		nd->untouched &= ~(UINT64_C(1) << i);
		if (grant->vram)
			c->vram_used[nd->first_gpu + i] += grant->vram;
		add_tenant(g, saved[k++]);
	}
	nd->cpu_free -= grant->cpu;
	nd->memory_free -= grant->memory;
	nd->cpu_scored += grant->cpu_scored;
	nd->memory_scored += grant->memory_scored;
	cluster_node_moved(c, grant->node, grant->equivalent);
}
