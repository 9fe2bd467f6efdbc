/*
 * import_nodes.c - `kubectl get nodes -o json` as pools of identical nodes.
 *
 * What a node offers comes from the NVIDIA device plugin's allocatable
 * resources and GPU Feature Discovery's labels (github.com/NVIDIA/
 * k8s-device-plugin, docs/gpu-feature-discovery; NVIDIA GPU Operator,
 * "Time-Slicing GPUs in Kubernetes"):
 *   exclusive     nvidia.com/gpu allocatable = GPUs; gpu.product the model.
 *   time-slicing  gpu.sharing-strategy=time-slicing, gpu.replicas=R,
 *   and MPS       gpu.count the physical GPUs, nvidia.com/gpu = count x R,
 *                 and gpu.product carries "-SHARED" (renameByDefault false);
 *                 with renameByDefault true the replicas are
 *                 nvidia.com/gpu.shared = count x R and the product is plain
 *                 (k8s-device-plugin README, "Shared Access to GPUs": the
 *                 product "will be modified ... if renameByDefault=false").
 *   MIG mixed     mig.strategy=mixed: nvidia.com/mig-<profile> allocatable
 *                 per profile over gpu.count GPUs (one layout for every GPU).
 *   MIG single    mig.strategy=single: nvidia.com/gpu counts MIG devices and
 *                 gpu.product ends in "-MIG-<profile>"; each GPU is split into
 *                 the profile's maximum (mig-parted's all-<profile> configs).
 * Nodes whose shape is equal (GPU type, count, sharing, cpu, memory, the
 * labels pods select on, taints) are one pool; a pool is named after its GPU
 * type (h100-80gb, h100-80gb-2, ..., cpu for CPU-only nodes).
 */
#include "import_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_PRODUCT  "nvidia.com/gpu.product"
#define LABEL_MEMORY   "nvidia.com/gpu.memory"
#define LABEL_HOSTNAME "kubernetes.io/hostname"

static const char *label(const struct imp_node *n, const char *key)
{
	const struct ynode *v = ynode_get(n->labels, key);
	return v && v->kind == YNODE_SCALAR ? v->value : NULL;
}

static int label_error(struct imp *im, const struct imp_node *n, const char *key, const char *fmt,
		       ...) GP_PRINTF(4, 5);

/* The catalog type of a product label, through --gpu-map first. */
static int gpu_type(struct imp *im, const struct imp_node *n, const char *product,
		    const struct gpu_type **out)
{
	size_t len = strlen(product);
	for (size_t i = 0; i < im->o->n_gpu_map; i++) {
		const char *m = im->o->gpu_map[i], *eq = strchr(m, '=');
		if (eq && (size_t)(eq - m) == len && !strncmp(m, product, len)) {
			*out = catalog_gpu(eq + 1);
			if (*out)
				return GP_OK;
			return gp_errorf(im->err, GP_EINPUT,
					 "--gpu-map %s: '%s' is not a catalog GPU "
					 "type",
					 m, eq + 1);
		}
	}
	for (size_t i = 0; i < catalog_gpu_count(); i++)
		if (catalog_gpu_at(i)->product && !strcmp(catalog_gpu_at(i)->product, product)) {
			*out = catalog_gpu_at(i);
			return GP_OK;
		}
	char names[600] = "";
	size_t at = 0;
	for (size_t i = 0; i < catalog_gpu_count() && at < sizeof names - 1; i++) {
		int k = snprintf(names + at, sizeof names - at, "%s%s (%s)", i ? ", " : "",
				 catalog_gpu_at(i)->name, catalog_gpu_at(i)->product);
		at += k > 0 ? (size_t)k : 0;
	}
	return label_error(im, n, LABEL_PRODUCT,
			   "GPU product '%s' is not in the catalog; "
			   "map it with --gpu-map '%s=TYPE', TYPE one of %s",
			   product, product, names);
}

static bool ends_with(const char *s, const char *suffix, size_t *stem)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	*stem = ls >= lx ? ls - lx : 0;
	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* An error at label key of node n, named by its JSON path
 * (.items[i].metadata.labels["key"]) wherever the reader is. */
static int label_error(struct imp *im, const struct imp_node *n, const char *key, const char *fmt,
		       ...)
{
	struct imp_file *f = &im->nodes_f;
	char saved[sizeof f->jpath];
	size_t len = f->len;
	memcpy(saved, f->jpath, sizeof saved);
	va_list ap;
	va_start(ap, fmt);
	char *msg = gp_vstrf(fmt, ap);
	va_end(ap);
	imp_pop(f, n->jlen);
	imp_push_key(f, "metadata");
	imp_push_key(f, "labels");
	int rc = imp_error(f, ynode_get(n->labels, key), key, "node %s: %s", n->name, msg);
	free(msg);
	memcpy(f->jpath, saved, sizeof saved);
	f->len = len;
	return rc;
}

static int label_int(struct imp *im, const struct imp_node *n, const char *key, int64_t dflt,
		     int64_t *out)
{
	const char *v = label(n, key);
	char *end;
	*out = dflt;
	if (!v)
		return GP_OK;
	long long x = strtoll(v, &end, 10);
	if (*end || end == v || x < 0 || x > INT32_MAX)
		return label_error(im, n, key, "expected a whole number from 0 to %d, got '%s'",
				   INT32_MAX, v);
	*out = x;
	return GP_OK;
}

#define LABEL_STRATEGY "nvidia.com/gpu.sharing-strategy"
#define LABEL_REPLICAS "nvidia.com/gpu.replicas"

/* The sharing GPU Feature Discovery's labels describe, as it writes them
 * (NVIDIA/k8s-device-plugin, internal/lm/resource.go baseLabeler: the
 * strategy is "none" unless replicas > 1, then "time-slicing" or "mps"; the
 * device plugin refuses replicas <= 0, api/config/v1/replicas.go; the
 * product gets -SHARED only when replicas > 1).  GFD before the strategy
 * label knew time-slicing only.  A contradiction is refused: read as
 * exclusive, one shared GPU would become R whole ones. */
static int label_sharing(struct imp *im, const struct imp_node *n, const char *product,
			 int64_t replicas, enum sharing_mode *out)
{
	const char *strategy = label(n, LABEL_STRATEGY);
	size_t stem;
	bool shared = ends_with(product, "-SHARED", &stem);
	*out = replicas > 1 ? SHARING_TIME_SLICING : SHARING_EXCLUSIVE;
	enum sharing_mode named;
	if (strategy && !sharing_gfd_strategy(strategy, &named))
		return label_error(im, n, LABEL_STRATEGY,
				   "expected none, time-slicing or mps, got '%s'", strategy);
	if (strategy && named == SHARING_MPS)
		*out = SHARING_MPS;
	int most = *out == SHARING_MPS ? SCENARIO_MAX_MPS_CLIENTS : SCENARIO_MAX_TIME_SLICES;
	if (replicas < 1 || replicas > most)
		return label_error(im, n, LABEL_REPLICAS,
				   "expected a whole number from 1 to %d, got '%s'", most,
				   label(n, LABEL_REPLICAS));
	if (strategy && (replicas > 1) != !!strcmp(strategy, "none"))
		return label_error(im, n, LABEL_STRATEGY,
				   "'%s' with %s '%lld'; expected none with 1 replica, "
				   "time-slicing or mps with more",
				   strategy, LABEL_REPLICAS, (long long)replicas);
	if (shared && replicas <= 1)
		return label_error(im, n, LABEL_PRODUCT,
				   "'%s' with %s '%lld'; expected a -SHARED product only with "
				   "more than 1 replica",
				   product, LABEL_REPLICAS, (long long)replicas);
	return GP_OK;
}

/* MIG mixed: the per-GPU layout from nvidia.com/mig-<profile> allocatable. */
static int mixed_layout(struct imp *im, struct imp_node *n, const struct ynode *alloc,
			int64_t count)
{
	struct imp_shape *s = &n->shape;
	for (size_t i = 0; alloc && i < alloc->n; i++) {
		if (strncmp(alloc->keys[i], "nvidia.com/mig-", 15))
			continue;
		double v = 0;
		struct imp_file *f = &im->nodes_f;
		int rc = imp_quantity(f, alloc->items[i], alloc->keys[i], &v);
		if (rc)
			return rc;
		if (v <= 0)
			continue;
		if (v > INT32_MAX || v != floor(v))
			return imp_error(f, alloc->items[i], alloc->keys[i],
					 "expected a whole number of devices, at most %d, got '%s'",
					 INT32_MAX, alloc->items[i]->value);
		const struct mig_profile *mp = catalog_mig_profile(s->gpu, alloc->keys[i] + 15);
		if (!mp)
			return gp_located(im->err, alloc->items[i]->loc,
					  "node %s: %s has no MIG "
					  "profile %s",
					  n->name, s->gpu->name, alloc->keys[i] + 15);
		if (count <= 0 || fmod(v, (double)count) != 0 || s->n_mig == 8)
			return gp_located(im->err, alloc->items[i]->loc,
					  "node %s: %g %s over %lld "
					  "GPUs: gpuplan needs the same MIG layout on every GPU of "
					  "a node",
					  n->name, v, alloc->keys[i], (long long)count);
		int32_t per_gpu = (int32_t)(v / (double)count);
		/* The loader's layout rule (scenario_pools.c check_mig_layout),
		 * at the allocatable entry rather than the scenario's self-check. */
		if (per_gpu > mp->max_instances)
			return imp_error(f, alloc->items[i], alloc->keys[i],
					 "node %s: %d %s per GPU over %lld GPUs; %s allows at most "
					 "%d per GPU",
					 n->name, per_gpu, alloc->keys[i], (long long)count,
					 s->gpu->name, mp->max_instances);
		s->mig[s->n_mig++] = (struct imp_mig){mp, per_gpu};
		int instances = 0, compute = 0, memory = 0;
		for (size_t m = 0; m < s->n_mig; m++) {
			instances += s->mig[m].per_gpu;
			compute += s->mig[m].per_gpu * s->mig[m].profile->compute_slices;
			memory += s->mig[m].per_gpu * s->mig[m].profile->memory_slices;
		}
		if (instances > 7 || compute > 7 || memory > 8)
			return imp_error(
				f, alloc->items[i], alloc->keys[i],
				"node %s: its MIG devices make %d instances of %d compute "
				"and %d memory slices per GPU; expected at most 7 instances, "
				"7 compute and 8 memory slices on the %s",
				n->name, instances, compute, memory, s->gpu->name);
	}
	if (s->n_mig)
		s->sharing = SHARING_MIG;
	return GP_OK;
}

/* GPU type, count and sharing from the labels and allocatable. */
static int gpu_shape(struct imp *im, struct imp_node *n, const struct ynode *alloc)
{
	struct imp_shape *s = &n->shape;
	const char *product = label(n, LABEL_PRODUCT);
	const char *mig = label(n, "nvidia.com/mig.strategy");
	double units = 0;
	bool mig_alloc = false;
	for (size_t i = 0; alloc && i < alloc->n; i++)
		mig_alloc |= !strncmp(alloc->keys[i], "nvidia.com/mig-", 15);
	const struct ynode *g = ynode_get(alloc, "nvidia.com/gpu");
	int rc = g ? imp_quantity(&im->nodes_f, g, "nvidia.com/gpu", &units) : GP_OK;
	const struct ynode *sh = ynode_get(alloc, "nvidia.com/gpu.shared");
	if (!rc && units <= 0 && sh) { /* renameByDefault */
		rc = imp_quantity(&im->nodes_f, sh, "nvidia.com/gpu.shared", &units);
		s->renamed = units > 0;
	}
	/* A device plugin advertises whole devices; the count must fit the
	 * int32 arithmetic below (1e18 or "1Ei" would not). */
	const struct ynode *uv = s->renamed ? sh : g;
	if (!rc && (units > INT32_MAX || units != floor(units)))
		rc = imp_error(&im->nodes_f, uv,
			       s->renamed ? "nvidia.com/gpu.shared" : "nvidia.com/gpu",
			       "expected a whole number of devices, at most %d, got '%s'",
			       INT32_MAX, uv->value);
	if (rc || (units <= 0 && !mig_alloc))
		return rc; /* a CPU-only node */
	if (!product)
		return gp_located(im->err, n->loc,
				  "node %s offers nvidia.com/gpu but has no %s "
				  "label; expected GPU Feature Discovery's labels",
				  n->name, LABEL_PRODUCT);
	char base[256];
	size_t stem;
	const char *mig_profile = NULL;
	snprintf(base, sizeof base, "%s", product);
	if (ends_with(base, "-SHARED", &stem))
		base[stem] = '\0';
	char *m = strstr(base, "-MIG-");
	if (m) {
		mig_profile = m + 5;
		*m = '\0';
	}
	if ((rc = gpu_type(im, n, base, &s->gpu)))
		return rc;
	if (strcmp(product, s->gpu->product))
		s->product = product;
	/* GFD's nvidia.com/gpu.memory is NVML's total in MiB.  A node whose GPU
	 * reports another total than the catalog's (another driver, another
	 * board) keeps its own; under MIG single GFD writes the MIG device's
	 * memory there, which the profile already gives. */
	int64_t mib = 0;
	if (!mig_profile && (rc = label_int(im, n, LABEL_MEMORY, 0, &mib)))
		return rc;
	if (!mig_profile && mib > 0 && (double)mib * GP_MIB != s->gpu->memory_bytes) {
		if (mib < 1024)
			return label_error(im, n, LABEL_MEMORY,
					   "expected one GPU's memory in MiB, at least 1024, got "
					   "'%lld'",
					   (long long)mib);
		s->gpu_memory = (double)mib * GP_MIB;
	}
	int64_t count, replicas;
	if ((rc = label_int(im, n, "nvidia.com/gpu.count", -1, &count)) ||
	    (rc = label_int(im, n, LABEL_REPLICAS, 1, &replicas)))
		return rc;
	if (mig_profile && mig && !strcmp(mig, "single")) {
		const struct mig_profile *mp = catalog_mig_profile(s->gpu, mig_profile);
		if (!mp)
			return gp_located(im->err, n->loc, "node %s: %s has no MIG profile %s",
					  n->name, s->gpu->name, mig_profile);
		if (fmod(units, mp->max_instances) != 0)
			return gp_located(im->err, n->loc,
					  "node %s: %g MIG %s devices do not fill "
					  "whole GPUs (%d per GPU)",
					  n->name, units, mp->name, mp->max_instances);
		s->gpus = (int32_t)(units / mp->max_instances);
		s->sharing = SHARING_MIG;
		s->mig[s->n_mig++] = (struct imp_mig){mp, mp->max_instances};
		return GP_OK;
	}
	if (mig_alloc) {
		if (units > 0)
			imp_warn(im,
				 "node %s: %g whole GPUs beside MIG ones; gpuplan models one "
				 "layout per node, kept the MIG GPUs",
				 n->name, units);
		s->gpus = (int32_t)(count > 0 ? count - (int64_t)units : 0);
		return mixed_layout(im, n, alloc, s->gpus);
	}
	enum sharing_mode sharing;
	if ((rc = label_sharing(im, n, product, replicas, &sharing)))
		return rc;
	if (s->renamed && sharing == SHARING_EXCLUSIVE)
		return label_error(im, n, LABEL_REPLICAS,
				   "'%lld' beside nvidia.com/gpu.shared; expected the replicas "
				   "of a shared GPU, more than 1",
				   (long long)replicas);
	if (sharing != SHARING_EXCLUSIVE) {
		s->sharing = sharing;
		s->replicas = (int32_t)replicas;
		s->gpus = (int32_t)(count > 0 ? count : (int64_t)units / replicas);
		return GP_OK;
	}
	s->gpus = (int32_t)units;
	return GP_OK;
}

/* The GPU shape, within what a scenario can hold: the loader's own limit,
 * checked here so that the error names the node, not the scenario written. */
static int read_gpus(struct imp *im, struct imp_node *n, const struct ynode *alloc)
{
	int rc = gpu_shape(im, n, alloc);
	if (rc || n->shape.gpus <= SCENARIO_MAX_GPUS_PER_NODE)
		return rc;
	const struct ynode *g = ynode_get(alloc, "nvidia.com/gpu");
	return imp_error(&im->nodes_f, g ? g : ynode_get(n->labels, "nvidia.com/gpu.count"),
			 g ? "nvidia.com/gpu" : NULL,
			 "node %s has %d physical GPUs; expected at most %d per node, "
			 "gpuplan's limit",
			 n->name, (int)n->shape.gpus, SCENARIO_MAX_GPUS_PER_NODE);
}

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

/* The labels pods select on, and the product label where the catalog's differs. */
static void keep_labels(struct imp *im, struct imp_node *n)
{
	struct imp_shape *s = &n->shape;
	for (size_t i = 0; n->labels && i < n->labels->n; i++) {
		const char *k = n->labels->keys[i];
		const struct ynode *v = n->labels->items[i];
		bool product = !strcmp(k, LABEL_PRODUCT) && s->product;
		if (v->kind != YNODE_SCALAR || !(product || imp_selected_key(im, k)))
			continue;
		s->labels = gp_xrealloc(s->labels, (s->n_labels + 1) * sizeof *s->labels);
		s->labels[s->n_labels++] = (struct kv){(char *)k, v->value};
	}
	if (s->n_labels)
		qsort(s->labels, s->n_labels, sizeof *s->labels, kv_cmp);
}

static int read_taints(struct imp *im, struct imp_node *n, const struct ynode *spec)
{
	static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
	struct imp_file *f = &im->nodes_f;
	const struct ynode *taints = NULL;
	int rc = spec ? imp_seq(f, spec, "taints", &taints) : GP_OK;
	for (size_t i = 0; !rc && taints && i < taints->n; i++) {
		const char *key = NULL, *value = NULL, *effect = NULL;
		size_t base = imp_push_path(f, "spec.taints");
		imp_push_index(f, i);
		if (!(rc = imp_str(f, taints->items[i], "key", &key)) &&
		    !(rc = imp_str(f, taints->items[i], "value", &value)))
			rc = imp_str(f, taints->items[i], "effect", &effect);
		int e = -1;
		for (int k = 0; effect && k < 3; k++)
			if (!strcmp(effect, effects[k]))
				e = k;
		if (!rc && (!key || e < 0))
			rc = imp_error(f, taints->items[i], NULL,
				       "expected a taint with key and effect "
				       "NoSchedule, PreferNoSchedule or NoExecute");
		if (!rc)
			rc = imp_label_key(f, ynode_get(taints->items[i], "key"), "key", key,
					   "a taint");
		if (!rc && value)
			rc = imp_label_value(f, ynode_get(taints->items[i], "value"), "value",
					     value, "a taint");
		imp_pop(f, base);
		if (rc)
			return rc;
		struct imp_shape *s = &n->shape;
		s->taints = gp_xrealloc(s->taints, (s->n_taints + 1) * sizeof *s->taints);
		s->taints[s->n_taints++] = (struct taint){(char *)key, (char *)(value ? value : ""),
							  (enum taint_effect)e};
	}
	return rc;
}

/* A cordoned node keeps its running pods and takes no new ones: it gets the
 * taint the node lifecycle controller adds for spec.unschedulable, when the
 * snapshot does not have it yet, which kube-scheduler reports as "node(s)
 * were unschedulable" (placement.c) and keeps it a pool of its own. */
static void cordon(struct imp *im, struct imp_node *n)
{
	struct imp_shape *s = &n->shape;
	bool tainted = false;
	for (size_t i = 0; i < s->n_taints; i++)
		tainted |= !strcmp(s->taints[i].key, SCENARIO_CORDON_TAINT);
	if (!tainted) {
		s->taints = gp_xrealloc(s->taints, (s->n_taints + 1) * sizeof *s->taints);
		s->taints[s->n_taints++] = (struct taint){(char *)SCENARIO_CORDON_TAINT, (char *)"",
							  EFFECT_NO_SCHEDULE};
	}
	imp_warn(im,
		 "node %s is cordoned: its running pods stay, and kube-scheduler reports it as "
		 "unschedulable to new ones",
		 n->name);
}

/* Per node name the pods bound to it (spec.nodeName) name: what DaemonSet,
 * static and GPU-less running pods request there, summed once for all
 * nodes (a scan of the pods per node was quadratic: 100,000 nodes). */
struct node_level {
	struct strindex names;
	double *cpu, *memory;
};

static void node_level_sums(const struct imp *im, struct node_level *nl)
{
	memset(nl, 0, sizeof *nl);
	nl->cpu = gp_xcalloc(im->n_pods + 1, sizeof *nl->cpu);
	nl->memory = gp_xcalloc(im->n_pods + 1, sizeof *nl->memory);
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		bool gpuless = !p->gpus && !p->mig && p->phase == PHASE_RUNNING;
		if ((p->node_level || gpuless) && p->node &&
		    (p->phase == PHASE_RUNNING || p->phase == PHASE_PENDING)) {
			size_t id = strindex_add(&nl->names, p->node, NULL);
			nl->cpu[id] += p->cpu;
			nl->memory[id] += p->memory;
		}
	}
}

static void node_level_free(struct node_level *nl)
{
	strindex_free(&nl->names);
	free(nl->cpu);
	free(nl->memory);
}

/* What DaemonSet and static pods bound to the node request. */
static void node_level_requests(const struct node_level *nl, const char *node, double *cpu,
				double *memory)
{
	size_t id = strindex_find(&nl->names, node);
	if (id != STRINDEX_NONE) {
		*cpu += nl->cpu[id];
		*memory += nl->memory[id];
	}
}

/* The release of kube-scheduler, for its messages' wording (the scenario's
 * kubernetes_version): the control plane's kubelet (status.nodeInfo.
 * kubeletVersion, "v1.31.2"), else the newest kubelet, since the version
 * skew policy keeps kubelets at or below the control plane. */
static void kubelet_version(struct imp *im, const struct imp_node *n, const struct ynode *status)
{
	const struct ynode *info = ynode_get(status, "nodeInfo");
	const struct ynode *v = info ? ynode_get(info, "kubeletVersion") : NULL;
	if (!v || v->kind != YNODE_SCALAR || strncmp(v->value, "v1.", 3))
		return;
	int minor = atoi(v->value + 3);
	bool plane = n->labels && ynode_get(n->labels, "node-role.kubernetes.io/control-plane");
	if (minor < SCENARIO_KUBE_MINOR_MIN || minor > SCENARIO_KUBE_MINOR_MAX)
		return;
	if (plane)
		im->kube_plane = minor;
	if (minor > im->kube_minor)
		im->kube_minor = minor;
}

static int read_node(struct imp *im, const struct node_level *nl, const struct ynode *item,
		     struct imp_node *n)
{
	struct imp_file *f = &im->nodes_f;
	const struct ynode *meta = NULL, *spec = NULL, *status = NULL, *alloc = NULL;
	n->loc = item->loc;
	n->jlen = f->len;
	int rc = imp_map(f, item, "metadata", &meta);
	if (!rc && !meta)
		rc = imp_error(f, item, "metadata", "expected the node's metadata");
	if (!rc)
		rc = imp_str(f, meta, "name", &n->name);
	if (!rc && !n->name)
		rc = imp_error_at(f, meta, "metadata.name", "expected the node's name");
	/* kubectl's nodes are checked as the API server names them; --history
	 * reads names from Prometheus labels, escaped wherever written. */
	if (!rc && !im->o->history) {
		size_t base = imp_push_key(f, "metadata");
		rc = imp_dns_name(f, ynode_get(meta, "name"), "name", n->name, IMP_DNS_SUBDOMAIN,
				  "node name");
		imp_pop(f, base);
	}
	if (!rc) {
		size_t base = imp_push_key(f, "metadata");
		rc = imp_map(f, meta, "labels", &n->labels);
		if (!rc && !im->o->history)
			rc = imp_labels(f, n->labels, "the node's labels");
		imp_pop(f, base);
	}
	if (!rc)
		rc = imp_map(f, item, "spec", &spec);
	if (!rc)
		rc = imp_map(f, item, "status", &status);
	if (!rc && status) {
		size_t base = imp_push_key(f, "status");
		rc = imp_map(f, status, "allocatable", &alloc);
		imp_pop(f, base);
		kubelet_version(im, n, status);
	}
	if (!rc && !alloc)
		rc = imp_error(f, status ? status : item, status ? "allocatable" : "status",
			       "expected the node's allocatable resources");
	size_t base = imp_push_path(f, "status.allocatable");
	const struct ynode *cpu = alloc ? ynode_get(alloc, "cpu") : NULL;
	const struct ynode *mem = alloc ? ynode_get(alloc, "memory") : NULL;
	if (!rc && cpu)
		rc = imp_quantity(f, cpu, "cpu", &n->shape.cpu);
	if (!rc && mem)
		rc = imp_quantity(f, mem, "memory", &n->shape.memory);
	if (!rc)
		rc = read_gpus(im, n, alloc);
	imp_pop(f, base);
	if (!rc)
		rc = read_taints(im, n, spec);
	if (rc)
		return rc;
	const struct ynode *unsched = spec ? ynode_get(spec, "unschedulable") : NULL;
	if (unsched && unsched->kind == YNODE_SCALAR && !strcmp(unsched->value, "true"))
		cordon(im, n);
	double used_cpu = 0, used_memory = 0;
	node_level_requests(nl, n->name, &used_cpu, &used_memory);
	n->shape.cpu = fmax(0, n->shape.cpu - used_cpu);
	n->shape.memory = fmax(0, n->shape.memory - used_memory);
	keep_labels(im, n);
	return GP_OK;
}

static bool same_shape(const struct imp_shape *a, const struct imp_shape *b)
{
	if (a->gpu != b->gpu || a->gpus != b->gpus || a->gpu_memory != b->gpu_memory ||
	    a->sharing != b->sharing || a->replicas != b->replicas || a->renamed != b->renamed ||
	    a->n_mig != b->n_mig || a->cpu != b->cpu || a->memory != b->memory ||
	    a->n_labels != b->n_labels || a->n_taints != b->n_taints)
		return false;
	for (size_t i = 0; i < a->n_mig; i++)
		if (a->mig[i].profile != b->mig[i].profile ||
		    a->mig[i].per_gpu != b->mig[i].per_gpu)
			return false;
	for (size_t i = 0; i < a->n_labels; i++)
		if (strcmp(a->labels[i].key, b->labels[i].key) ||
		    strcmp(a->labels[i].value, b->labels[i].value))
			return false;
	for (size_t i = 0; i < a->n_taints; i++)
		if (strcmp(a->taints[i].key, b->taints[i].key) ||
		    strcmp(a->taints[i].value, b->taints[i].value) ||
		    a->taints[i].effect != b->taints[i].effect)
			return false;
	return true;
}

/* "h100-80gb", then "h100-80gb-2" ... for the next pool of the same type. */
static void name_pool(struct imp *im, struct imp_pool *p)
{
	char base[48];
	const char *type = p->shape.gpu ? p->shape.gpu->name : "cpu";
	size_t i = 0;
	for (; type[i] && i < sizeof base - 1; i++)
		base[i] = (char)tolower((unsigned char)type[i]);
	base[i] = '\0';
	int same = 0;
	for (size_t q = 0; q + 1 < im->n_pools; q++)
		same += im->pools[q].shape.gpu == p->shape.gpu;
	if (same)
		snprintf(p->name, sizeof p->name, "%s-%d", base, same + 1);
	else
		snprintf(p->name, sizeof p->name, "%s", base);
}

static void group(struct imp *im)
{
	im->pools = gp_xcalloc(im->n_nodes, sizeof *im->pools);
	for (size_t i = 0; i < im->n_nodes; i++) {
		struct imp_node *n = &im->nodes[i];
		size_t p = 0;
		while (p < im->n_pools && !same_shape(&im->pools[p].shape, &n->shape))
			p++;
		struct imp_pool *pool = &im->pools[p];
		if (p == im->n_pools) {
			im->n_pools++;
			pool->shape = n->shape;
			name_pool(im, pool);
		}
		pool->nodes = gp_xrealloc(pool->nodes, (pool->n_nodes + 1) * sizeof *pool->nodes);
		n->pool = (int32_t)p;
		n->index = (int32_t)pool->n_nodes;
		pool->nodes[pool->n_nodes++] = (int32_t)i;
	}
}

/* The strings the nodes keep (name, the labels pods select on, taints, the
 * product) copied out of the file's tree, which then goes: nothing reads it
 * once the nodes are read, and for 100,000 nodes it held 330 MB while the
 * pods were grouped and the scenario written. */
static void detach(struct imp *im)
{
	struct strindex *x = &im->node_strings;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < im->n_nodes; i++) {
			struct imp_shape *s = &im->nodes[i].shape;
			char *product = (char *)s->product;
			imp_keep(x, pass, &product);
			s->product = product;
			for (size_t k = 0; k < s->n_labels; k++) {
				imp_keep(x, pass, &s->labels[k].key);
				imp_keep(x, pass, &s->labels[k].value);
			}
			for (size_t k = 0; k < s->n_taints; k++) {
				imp_keep(x, pass, &s->taints[k].key);
				imp_keep(x, pass, &s->taints[k].value);
			}
		}
	for (size_t i = 0; i < im->n_nodes; i++) {
		struct imp_node *n = &im->nodes[i];
		n->name = strindex_key(&im->node_ids, i); /* no name is added after */
		n->labels = NULL;
		n->loc.file = im->nodes_f.path;
	}
	imp_close(&im->nodes_f);
}

int imp_read_nodes(struct imp *im)
{
	struct imp_file *f = &im->nodes_f;
	const struct ynode *items = NULL;
	int rc = f->tree ? GP_OK : imp_open_kube(f, im->o->nodes, im->err); /* history: open */
	if (!rc)
		rc = imp_list(f, "Node", &items);
	if (!rc && (!items || !items->n))
		rc = gp_located(im->err, (struct srcloc){f->path, 0, 0},
				"no nodes; expected `kubectl get nodes -o json`");
	if (rc)
		return rc;
	im->nodes = gp_xcalloc(items->n, sizeof *im->nodes);
	struct node_level nl;
	node_level_sums(im, &nl);
	for (size_t i = 0; i < items->n; i++) {
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		rc = read_node(im, &nl, items->items[i], &im->nodes[im->n_nodes++]);
		bool added = false;
		int twin = rc ? -1
			      : (int)strindex_add(&im->node_ids, im->nodes[im->n_nodes - 1].name,
						  &added);
		if (!added && twin >= 0)
			rc = imp_error_at(f, ynode_get(items->items[i], "metadata"),
					  "metadata.name",
					  "node %s is listed twice (also .items[%d]); expected one "
					  "object per node",
					  im->nodes[twin].name, twin);
		imp_pop(f, base);
		if (rc)
			break;
	}
	node_level_free(&nl);
	if (rc)
		return rc;
	if (im->kube_plane)
		im->kube_minor = im->kube_plane;
	detach(im);
	group(im);
	return GP_OK;
}

int imp_node_index(const struct imp *im, const char *name)
{
	size_t id = name ? strindex_find(&im->node_ids, name) : STRINDEX_NONE;
	return id == STRINDEX_NONE ? -1 : (int)id;
}

void imp_hostname(const struct imp *im, int32_t node, char *buf, size_t len)
{
	const struct imp_node *n = &im->nodes[node];
	for (size_t i = 0; i < n->shape.n_labels; i++)
		if (!strcmp(n->shape.labels[i].key, LABEL_HOSTNAME)) {
			snprintf(buf, len, "%s", n->shape.labels[i].value);
			return;
		}
	snprintf(buf, len, "%s-%d", im->pools[n->pool].name, (int)n->index);
}
