/*
 * gpupolicy.c - the placement policies and the fragmentation measure of
 * Weng et al., USENIX ATC'23 (see gpupolicy.h), as the authors' simulator
 * defines them (hkust-adsl/kubernetes-scheduler-simulator; file names below
 * are in pkg/simulator/plugin unless noted).  Constants: MaxNodeScore 100,
 * MaxSpecCpu 128000 milli-cores, MaxSpecGpu 8000 milli-GPUs
 * (pkg/type/open-gpu-share/utils/const.go).  Scores are int64 as
 * kube-scheduler's are; the truncations below are the simulator's and
 * create the ties that kube-scheduler then breaks at random.
 *
 * Filters (open_gpu_share.go Filter, with kube's NodeResourcesFit): a GPU
 * pod needs a node whose GPU type its gpu_spec allows (IsNodeAccessibleToPod)
 * and room on the GPUs (a GPU with milli free, or `gpus` fully free GPUs);
 * every pod needs the CPU and memory it requests.
 *
 * Scores, for a node the pod fits:
 *   random          random_score.go: one feasible node at random (every
 *                   node scores 0 here; the caller's random tie-break picks).
 *   dot-product     dot_product_score.go with the paper's flags (merge
 *                   dimensions, normalize by max): free vector (cpu_left,
 *                   milli_left) and request (cpu, gpus x milli), both divided
 *                   by (128000, 8000); score = int(100 x (1 - dot / 2)).
 *   gpu-clustering  gpu_clustering_score.go: pods carry an affinity tag
 *                   (shares a GPU, or k whole GPUs); base =
 *                   25 x (8000 - milli_left) / 8000 (integers), plus 75 when
 *                   the node's GPU pods all have the pod's tag, 50 when some
 *                   do, 25 when the node has no GPU pod, 0 otherwise.  CPU pods
 *                   score 0.
 *   gpu-packing     gpu_packing_score.go: an idle node 33 - F, at least F
 *                   (F = its free GPUs); a pod that has to open k idle GPUs on
 *                   a used node max(50 - k, 33); a pod that fits on used
 *                   GPUs (smallest free first) max(100 - sum(free% of them) /
 *                   10, 50).  CPU pods score 0.
 *   best-fit        best_fit_score.go: int(100 x (1 - ((cpu_left - cpu) /
 *                   128000 x 0.5 + (milli_left - gpus x milli) / 8000 x 0.5))).
 *                   Its NormalizeScore (min-max over the feasible nodes, in
 *                   integers) is monotone and maps only the top score to 100,
 *                   so the chosen node is the same without it.
 *   fgd             fgd_score.go: the fragmentation the placement removes,
 *                   int(100 x sigmoid((F(node) - F(node after)) / 1000)),
 *                   F as below; a pod sharing a GPU takes the GPU that scores
 *                   best (the first on ties).  A pod that requests nothing
 *                   scores 100.
 *
 * GPU choice inside the node (open_gpu_share.go): the paper's runs select GPUs
 * by best fit (the GPU with the least free milli that fits, lowest index on
 * ties) except random (a random GPU that fits) and FGD (its own choice); a
 * pod of whole GPUs takes the lowest-indexed fully free GPUs
 * (AllocateExclusiveGpuId).
 *
 * Fragmentation (pkg/utils/frag.go, NodeGpuShareFragAmountScore).  For each
 * target shape s with frequency p_s, the free GPU milli of the node that s
 * could not use:
 *   - s is CPU-only, or the node's GPU type is not one s allows: all of it;
 *   - the node has too few GPUs with s.milli free, or too little CPU: all of it;
 *   - otherwise the free milli of the GPUs with less than s.milli free.
 * F(node) = sum over s of p_s x that.  Memory plays no part (as in the source).
 *
 * The target workload (frag.go GetTypicalPods, with the paper's settings
 * isInvolvedCpuPods true, podPopularityThreshold 95, podIncreaseStep 1,
 * gpuResWeight 0): pod shapes by decreasing count, the most frequent ones
 * until they cover 95% of the pods, frequencies renormalized over them.
 */
#include "gpuplan/gpupolicy.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODE_SCORE 100
#define MAX_SPEC_CPU   128000.0
#define MAX_SPEC_GPU   8000

const char *const gpupolicy_names[GPU_POLICY_COUNT] = {
	[GPU_POLICY_BEST_FIT] = "best-fit",       [GPU_POLICY_RANDOM] = "random",
	[GPU_POLICY_DOT_PRODUCT] = "dot-product", [GPU_POLICY_GPU_CLUSTERING] = "gpu-clustering",
	[GPU_POLICY_GPU_PACKING] = "gpu-packing", [GPU_POLICY_FGD] = "fgd",
};

/* --- node state ------------------------------------------------------------- */

/* Recomputes the aggregates of free[]. */
static void summarize(struct gpupolicy_node *n)
{
	n->n_tags = 0;
	for (int t = 0; t < GPUPOLICY_TAGS; t++)
		n->n_tags += n->tag_count[t] > 0;
	n->milli_left = 0;
	n->whole_free = 0;
	n->max_free = 0;
	for (int32_t i = 0; i < n->gpus; i++) {
		n->milli_left += n->free[i];
		n->whole_free += n->free[i] == GPUPOLICY_MILLI;
		if (n->free[i] > n->max_free)
			n->max_free = n->free[i];
	}
}

void gpupolicy_node_init(struct gpupolicy_node *n, int32_t gpus, int64_t cpu_milli,
			 int64_t memory_mib, int32_t type, bool shares)
{
	assert(gpus >= 0 && gpus <= GPUPOLICY_MAX_GPUS && type >= 0 && type < 32);
	memset(n, 0, sizeof *n);
	n->gpus = gpus;
	n->cpu_left = cpu_milli > 0 && cpu_milli < GPUPOLICY_UNLIMITED ? (int32_t)cpu_milli
								       : GPUPOLICY_UNLIMITED;
	n->memory_left = memory_mib > 0 ? memory_mib : INT64_MAX;
	n->type = type;
	n->shares = shares;
	for (int32_t i = 0; i < gpus; i++)
		n->free[i] = GPUPOLICY_MILLI;
	summarize(n);
}

void gpupolicy_node_refresh(struct gpupolicy_node *n) { summarize(n); }

int gpupolicy_tag(const struct gpupolicy_pod *p)
{
	if (p->gpus == 0)
		return -1;
	return p->milli < GPUPOLICY_MILLI ? 0 : p->gpus;
}

/* Whether a pod of the allowed types (0: any) may use the node's GPUs. */
static bool type_ok(const struct gpupolicy_node *n, uint32_t types)
{
	return types == 0 || (types >> n->type & 1);
}

bool gpupolicy_fits(const struct gpupolicy_node *n, const struct gpupolicy_pod *p)
{
	if (p->cpu > n->cpu_left || p->memory > n->memory_left)
		return false;
	if (p->gpus == 0)
		return true;
	if (!type_ok(n, p->types))
		return false;
	if (p->milli < GPUPOLICY_MILLI)
		return n->shares && n->max_free >= p->milli;
	return n->whole_free >= p->gpus;
}

void gpupolicy_take(struct gpupolicy_node *n, const struct gpupolicy_pod *p, uint64_t mask)
{
	n->cpu_left -= n->cpu_left < GPUPOLICY_UNLIMITED ? p->cpu : 0;
	n->memory_left -= n->memory_left < INT64_MAX ? p->memory : 0;
	assert(n->cpu_left >= 0 && n->memory_left >= 0);
	for (int32_t i = 0; i < n->gpus; i++)
		if (mask >> i & 1) {
			n->free[i] = (int16_t)(n->free[i] - p->milli);
			assert(n->free[i] >= 0 && "no GPU over-allocated");
		}
	int tag = gpupolicy_tag(p);
	if (tag >= 0 && tag < GPUPOLICY_TAGS)
		n->tag_count[tag]++;
	summarize(n);
}

/* --- fragmentation ----------------------------------------------------------- */

/* GPUs with at least milli free (fit), and the free milli of the others (small). */
struct split {
	int32_t milli, fit, small;
};

/* The free milli of the node that shape s could not use.  sp caches the
 * split of the last milli asked (gpupolicy_target_finish groups shapes by
 * milli, so a node's GPUs are read once per distinct milli). */
static double unusable(const struct gpupolicy_node *n, const struct gpupolicy_shape *s,
		       struct split *sp)
{
	if (s->milli == 0 || !type_ok(n, s->types) || (s->milli < GPUPOLICY_MILLI && !n->shares))
		return n->milli_left;
	if (sp->milli != s->milli) {
		*sp = (struct split){s->milli, 0, 0};
		for (int32_t i = 0; i < n->gpus; i++) {
			if (n->free[i] >= s->milli)
				sp->fit++;
			else
				sp->small += n->free[i];
		}
	}
	if (sp->fit >= s->gpus && n->cpu_left >= s->cpu)
		return sp->small;
	return n->milli_left;
}

double gpupolicy_frag(const struct gpupolicy_node *n, const struct gpupolicy_target *t)
{
	double frag = 0;
	struct split sp = {-1, 0, 0};
	if (n->milli_left == 0)
		return 0;
	for (size_t k = 0; k < t->n; k++)
		frag += t->shapes[k].freq * unusable(n, &t->shapes[k], &sp);
	return frag;
}

/* --- GPU choice -------------------------------------------------------------- */

/* The lowest-indexed fully free GPUs for a pod of whole GPUs. */
static uint64_t whole_gpus(const struct gpupolicy_node *n, int32_t gpus)
{
	uint64_t mask = 0;
	for (int32_t i = 0; i < n->gpus && gpus > 0; i++)
		if (n->free[i] == GPUPOLICY_MILLI) {
			mask |= UINT64_C(1) << i;
			gpus--;
		}
	return mask;
}

/* Best fit: the GPU with the least free milli that holds milli, lowest index on ties. */
static int best_fit_gpu(const struct gpupolicy_node *n, int32_t milli)
{
	int best = -1;
	for (int32_t i = 0; i < n->gpus; i++)
		if (n->free[i] >= milli && (best < 0 || n->free[i] < n->free[best]))
			best = (int)i;
	return best;
}

/* Random fit: each GPU that fits with equal chance (reservoir sampling). */
static int random_gpu(const struct gpupolicy_node *n, int32_t milli, gsl_rng *rng)
{
	int pick = -1;
	unsigned long seen = 0;
	for (int32_t i = 0; i < n->gpus; i++)
		if (n->free[i] >= milli && gsl_rng_uniform_int(rng, ++seen) == 0)
			pick = (int)i;
	return pick;
}

/* --- scores ------------------------------------------------------------------- */

static int64_t dot_product_score(const struct gpupolicy_node *n, const struct gpupolicy_pod *p)
{
	double cpu_left = n->cpu_left >= GPUPOLICY_UNLIMITED ? MAX_SPEC_CPU : n->cpu_left;
	double dot =
		cpu_left / MAX_SPEC_CPU * (p->cpu / MAX_SPEC_CPU) +
		(double)n->milli_left / MAX_SPEC_GPU * ((double)p->gpus * p->milli / MAX_SPEC_GPU);
	return (int64_t)(MAX_NODE_SCORE * (1 - dot / 2));
}

static int64_t clustering_score(const struct gpupolicy_node *n, const struct gpupolicy_pod *p)
{
	int tag = gpupolicy_tag(p);
	if (tag < 0)
		return 0;
	int64_t base =
		(int64_t)(MAX_NODE_SCORE / 4) * (MAX_SPEC_GPU - n->milli_left) / MAX_SPEC_GPU;
	if (tag < GPUPOLICY_TAGS && n->tag_count[tag] > 0)
		return base + (n->n_tags == 1 ? MAX_NODE_SCORE * 3 / 4 : MAX_NODE_SCORE * 2 / 4);
	return base + (n->n_tags == 0 ? MAX_NODE_SCORE / 4 : 0);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* GPU indexes by increasing free milli, index order on ties (a stable sort). */
static void by_free(const struct gpupolicy_node *n, int *order)
{
	for (int32_t i = 0; i < n->gpus; i++) {
		int k = (int)i;
		while (k > 0 && n->free[order[k - 1]] > n->free[i]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = (int)i;
	}
}

static int64_t packing_score(const struct gpupolicy_node *n, const struct gpupolicy_pod *p)
{
	if (p->gpus == 0)
		return 0;
	if (n->whole_free == n->gpus)
		return max64(MAX_NODE_SCORE / 3 - n->whole_free, n->whole_free);
	int order[GPUPOLICY_MAX_GPUS];
	by_free(n, order);
	int32_t need = p->gpus, opened = 0;
	int64_t free_pct = 0;
	for (int32_t k = 0; k < n->gpus && need > 0; k++) {
		int32_t f = n->free[order[k]];
		if (f < p->milli)
			continue;
		need--;
		opened += f == GPUPOLICY_MILLI;
		free_pct += (int64_t)f * 100 / GPUPOLICY_MILLI;
	}
	if (need > 0)
		return 0;
	if (opened > 0)
		return max64(MAX_NODE_SCORE / 2 - opened, MAX_NODE_SCORE / 3);
	return max64(MAX_NODE_SCORE - free_pct / 10, MAX_NODE_SCORE / 2);
}

static int64_t best_fit_score(const struct gpupolicy_node *n, const struct gpupolicy_pod *p)
{
	double cpu_left = n->cpu_left >= GPUPOLICY_UNLIMITED ? MAX_SPEC_CPU : n->cpu_left;
	double score = 0;
	score += (cpu_left - p->cpu) / MAX_SPEC_CPU * 0.5;
	score += ((double)n->milli_left - (double)p->gpus * p->milli) / MAX_SPEC_GPU * 0.5;
	return (int64_t)((1.0 - score) * MAX_NODE_SCORE);
}

static int64_t fgd_points(double before, double after)
{
	return (int64_t)(1.0 / (1.0 + exp(-(before - after) / 1000)) * MAX_NODE_SCORE);
}

/* FGD's score of the node and, for a pod sharing a GPU, the GPU it takes. */
static int64_t fgd_score(const struct gpupolicy_node *n, const struct gpupolicy_pod *p,
			 const struct gpupolicy_target *t, int *gpu)
{
	*gpu = -1;
	if (p->cpu == 0 && p->memory == 0 && p->gpus == 0)
		return MAX_NODE_SCORE;
	double before = gpupolicy_frag(n, t);
	struct gpupolicy_node after = *n;
	if (p->gpus == 0 || p->milli >= GPUPOLICY_MILLI) {
		gpupolicy_take(&after, p, whole_gpus(n, p->gpus));
		return fgd_points(before, gpupolicy_frag(&after, t));
	}
	int64_t best = 0;
	for (int32_t i = 0; i < n->gpus; i++) {
		if (n->free[i] < p->milli)
			continue;
		after = *n;
		gpupolicy_take(&after, p, UINT64_C(1) << i);
		int64_t s = fgd_points(before, gpupolicy_frag(&after, t));
		if (*gpu < 0 || s > best) {
			best = s;
			*gpu = (int)i;
		}
	}
	return best;
}

int64_t gpupolicy_score(enum gpu_policy policy, const struct gpupolicy_node *n,
			const struct gpupolicy_pod *p, const struct gpupolicy_target *t)
{
	int gpu;
	switch (policy) {
	case GPU_POLICY_RANDOM: return 0;
	case GPU_POLICY_DOT_PRODUCT: return dot_product_score(n, p);
	case GPU_POLICY_GPU_CLUSTERING: return clustering_score(n, p);
	case GPU_POLICY_GPU_PACKING: return packing_score(n, p);
	case GPU_POLICY_BEST_FIT: return best_fit_score(n, p);
	case GPU_POLICY_FGD: return fgd_score(n, p, t, &gpu);
	case GPU_POLICY_COUNT: break;
	}
	assert(0 && "a known policy");
	return 0;
}

uint64_t gpupolicy_choose(enum gpu_policy policy, const struct gpupolicy_node *n,
			  const struct gpupolicy_pod *p, const struct gpupolicy_target *t,
			  gsl_rng *rng)
{
	if (p->gpus == 0)
		return 0;
	if (p->milli >= GPUPOLICY_MILLI)
		return whole_gpus(n, p->gpus);
	int gpu = -1;
	if (policy == GPU_POLICY_RANDOM)
		gpu = random_gpu(n, p->milli, rng);
	else if (policy == GPU_POLICY_FGD)
		fgd_score(n, p, t, &gpu);
	else
		gpu = best_fit_gpu(n, p->milli);
	assert(gpu >= 0 && "the pod fits the node");
	return UINT64_C(1) << gpu;
}

/* --- target workload ----------------------------------------------------------- */

static bool same_shape(const struct gpupolicy_shape *s, const struct gpupolicy_pod *p)
{
	return s->cpu == p->cpu && s->gpus == p->gpus && s->milli == p->milli &&
	       s->types == p->types;
}

/* Decreasing count (freq holds counts while building), then the source's
 * tie order (PodResource.Less reversed): larger cpu, milli, gpus, types first. */
static int cmp_shape(const void *a, const void *b)
{
	const struct gpupolicy_shape *x = a, *y = b;
	if (x->freq != y->freq)
		return x->freq > y->freq ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	if (x->milli != y->milli)
		return x->milli > y->milli ? -1 : 1;
	if (x->gpus != y->gpus)
		return x->gpus > y->gpus ? -1 : 1;
	return (x->types < y->types) - (x->types > y->types);
}

void gpupolicy_target_add(struct gpupolicy_target *t, const struct gpupolicy_pod *p, double weight)
{
	size_t k = 0;
	while (k < t->n && !same_shape(&t->shapes[k], p))
		k++;
	if (k == t->n) {
		GP_GROW(t->shapes, t->cap, t->n + 1);
		t->shapes[t->n++] =
			(struct gpupolicy_shape){p->cpu, p->gpus, p->milli, p->types, 0};
	}
	t->shapes[k].freq += weight;
}

/* By milli, so that the shapes of one milli are neighbours (gpupolicy_frag). */
static int cmp_milli(const void *a, const void *b)
{
	const struct gpupolicy_shape *x = a, *y = b;
	return (x->milli > y->milli) - (x->milli < y->milli);
}

void gpupolicy_target_finish(struct gpupolicy_target *t, double popularity)
{
	double total = 0, covered = 0;
	for (size_t k = 0; k < t->n; k++)
		total += t->shapes[k].freq;
	if (!t->n)
		return;
	qsort(t->shapes, t->n, sizeof *t->shapes, cmp_shape);
	size_t keep = 0;
	while (keep < t->n && covered < popularity * total)
		covered += t->shapes[keep++].freq;
	t->n = keep;
	for (size_t k = 0; k < keep; k++)
		t->shapes[k].freq /= covered;
	qsort(t->shapes, t->n, sizeof *t->shapes, cmp_milli);
}

void gpupolicy_target_build(struct gpupolicy_target *t, const struct gpupolicy_pod *pods, size_t n,
			    double popularity)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < n; i++)
		gpupolicy_target_add(t, &pods[i], 1);
	gpupolicy_target_finish(t, popularity);
}

void gpupolicy_target_free(struct gpupolicy_target *t)
{
	free(t->shapes);
	memset(t, 0, sizeof *t);
}
