/*
 * advise_emit.c - `advise --emit DIR`: the Kubernetes and vendor objects
 * that carry out the recommended alternative (advise.h).
 *
 * The recommendation's overrides are loaded on top of the scenario, so each
 * object is written from resolved values (a queue's whole quota, a
 * workload's whole selector), one file per object, each replaced whole
 * (outfile.h).  Which override makes which object:
 *   scheduler.scoring      kube-scheduler.yaml: a KubeSchedulerConfiguration
 *                          (kubescheduler.config.k8s.io/v1) whose profile
 *                          configures NodeResourcesFit's scoringStrategy
 *                          (type, resources with weights: nvidia.com/gpu,
 *                          cpu, memory), kubernetes.io "Resource Bin Packing"
 *   pools.P.sharing        time-slicing / MPS: device-plugin-P.yaml, the
 *                          NVIDIA device plugin's config file (version: v1,
 *                          sharing.timeSlicing or sharing.mps, resources
 *                          [{name: nvidia.com/gpu, replicas: R}]) in a
 *                          ConfigMap, as the GPU Operator's "Time-Slicing GPUs
 *                          in Kubernetes" has it; MIG: mig-parted-P.yaml,
 *                          mig-parted's config (version: v1, mig-configs: a
 *                          named config of [{devices: all, mig-enabled: true,
 *                          mig-devices: {profile: count}}]) in a ConfigMap
 *   queues.Q.*             clusterqueue-Q.yaml: Kueue's ClusterQueue
 *                          (kueue.x-k8s.io/v1beta2: cohortName, queueingStrategy,
 *                          resourceGroups [{coveredResources, flavors [{name,
 *                          resources [{name, nominalQuota, borrowingLimit,
 *                          lendingLimit}]}]}])
 *   workloads.W.<rule>     patch-W.yaml: a strategic-merge patch of the pod
 *                          template (nodeSelector, affinity.nodeAffinity,
 *                          tolerations, a container's cpu request)
 *   workloads.W.<server>   patch-W.yaml: the container's vLLM arguments
 *                          (--max-num-seqs, --max-num-batched-tokens,
 *                          --gpu-memory-utilization, --tensor-parallel-size,
 *                          --quantization) and spec.replicas
 *   pools.P.nodes, autoscale  cluster-autoscaler.args: --nodes=min:max:P
 * What no stock object carries (a gpu_policy that needs a scheduler plugin,
 * fractional shares, windows, a checkpoint interval, tokenizer or loader
 * workers) is listed in README.txt with the override to apply by hand.
 */
#include "gpuplan/advise.h"

#include "gpuplan/outfile.h"
#include "gpuplan/scenario.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A YAML double-quoted scalar. */
static void q(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

struct emit {
	const char *dir;
	struct gp_sbuf readme;
	struct gp_sbuf written; /* file names, one a line */
	int rc;
	struct gp_err *err;
};

static FILE *open_file(struct emit *e, struct outfile *of, const char *name)
{
	if (e->rc)
		return NULL;
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", e->dir, name);
	e->rc = outfile_open(of, path, NULL, e->err);
	if (e->rc)
		return NULL;
	gp_sb_printf(&e->written, "%s\n", name);
	return of->f;
}

/* open_file of KIND-OBJ.yaml, its name left in name. */
static FILE *open_named(struct emit *e, struct outfile *of, char *name, size_t size,
			const char *kind, const char *obj)
{
	snprintf(name, size, "%s-%s.yaml", kind, obj);
	return open_file(e, of, name);
}

/* The head of a GPU Operator ConfigMap called name, after the first words of
 * its comment, up to its data's first key. */
static void configmap(FILE *f, const char *name)
{
	fprintf(f,
		" (gpuplan advise)\n"
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
		"  namespace: gpu-operator\ndata:\n  ",
		name);
}

static void close_file(struct emit *e, struct outfile *of)
{
	if (!e->rc)
		e->rc = outfile_commit(of, e->err);
	else
		outfile_abort(of);
}

/* "pools.a100.sharing=..." -> whether the key is prefix.NAME.rest (rest
 * may be NULL: any), NAME copied to name. */
static bool key_of(const char *set, const char *prefix, char *name, size_t len, const char *rest)
{
	size_t n = strlen(prefix);
	if (strncmp(set, prefix, n) || set[n] != '.')
		return false;
	const char *a = set + n + 1, *dot = strchr(a, '.');
	if (!dot)
		return false;
	snprintf(name, len, "%.*s", (int)(dot - a), a);
	if (!rest)
		return true;
	size_t r = strlen(rest);
	return !strncmp(dot + 1, rest, r) && (dot[1 + r] == '\0' || dot[1 + r] == '.');
}

static void emit_scheduler(struct emit *e, const struct scenario *sc)
{
	struct outfile of;
	FILE *f = open_file(e, &of, "kube-scheduler.yaml");
	if (!f)
		return;
	const struct scoring_spec *s = &sc->scheduler.scoring;
	static const char *const types[] = {"MostAllocated", "LeastAllocated",
					    "RequestedToCapacityRatio"};
	static const char *const res[SCORE_RESOURCES] = {"nvidia.com/gpu", "cpu", "memory"};
	fprintf(f,
		"# NodeResourcesFit scoring for kube-scheduler --config (gpuplan advise)\n"
		"apiVersion: kubescheduler.config.k8s.io/v1\n"
		"kind: KubeSchedulerConfiguration\n"
		"profiles:\n"
		"  - schedulerName: default-scheduler\n"
		"    pluginConfig:\n"
		"      - name: NodeResourcesFit\n"
		"        args:\n"
		"          scoringStrategy:\n"
		"            type: %s\n"
		"            resources:\n",
		types[s->type]);
	for (int k = 0; k < SCORE_RESOURCES; k++)
		if (s->weight[k] > 0)
			fprintf(f, "              - name: %s\n                weight: %d\n", res[k],
				(int)s->weight[k]);
	if (s->type == SCORING_REQUESTED_TO_CAPACITY_RATIO) {
		fprintf(f, "            requestedToCapacityRatio:\n              shape:\n");
		for (int32_t i = 0; i < s->n_shape; i++)
			fprintf(f,
				"                - utilization: %d\n                  score: %d\n",
				(int)s->shape[i].utilization, (int)s->shape[i].score);
	}
	close_file(e, &of);
	gp_sb_printf(&e->readme,
		     "kube-scheduler.yaml: pass it to kube-scheduler as --config (a second "
		     "profile, or the default one's NodeResourcesFit arguments)\n");
}

/* Time-slicing and MPS: the device plugin's sharing config. */
static void emit_device_plugin(struct emit *e, const struct pool_spec *p)
{
	char name[SCENARIO_MAX_NAME + 32];
	struct outfile of;
	const struct sharing *sh = &p->sharing;
	FILE *f = open_named(e, &of, name, sizeof name, "device-plugin", p->name);
	if (!f)
		return;
	fprintf(f, "# The NVIDIA device plugin's sharing config for pool %s", p->name);
	configmap(f, "gpuplan-sharing");
	q(f, p->name);
	fprintf(f, ": |-\n    version: v1\n    sharing:\n      %s:\n",
		sh->mode == SHARING_MPS ? "mps" : "timeSlicing");
	if (sh->mode == SHARING_TIME_SLICING && sh->one_per_pod)
		fprintf(f, "        failRequestsGreaterThanOne: true\n");
	fprintf(f,
		"        resources:\n          - name: nvidia.com/gpu\n            replicas: %d\n",
		(int)sh->replicas);
	close_file(e, &of);
	gp_sb_printf(&e->readme,
		     "%s: kubectl apply it, point the device plugin at it (GPU Operator: "
		     "devicePlugin.config.name=gpuplan-sharing) and label pool %s's nodes "
		     "nvidia.com/device-plugin.config=%s\n",
		     name, p->name, p->name);
}

/* MIG: mig-parted's config of the layout. */
static void emit_mig_parted(struct emit *e, const struct pool_spec *p)
{
	char name[SCENARIO_MAX_NAME + 32];
	struct outfile of;
	const struct sharing *sh = &p->sharing;
	FILE *f = open_named(e, &of, name, sizeof name, "mig-parted", p->name);
	if (!f)
		return;
	fprintf(f, "# mig-parted's config for pool %s", p->name);
	configmap(f, "gpuplan-mig-config");
	fprintf(f, "config.yaml: |-\n    version: v1\n    mig-configs:\n      ");
	q(f, p->name);
	fprintf(f, ":\n        - devices: all\n          mig-enabled: true\n          "
		   "mig-devices:\n");
	for (size_t i = 0; i < sh->n_layout; i++) {
		size_t count = 0;
		bool first = true;
		for (size_t k = 0; k < sh->n_layout; k++) {
			first &= !(k < i && sh->layout[k] == sh->layout[i]);
			count += sh->layout[k] == sh->layout[i];
		}
		if (!first)
			continue;
		fprintf(f, "            ");
		q(f, sh->layout[i]->name);
		fprintf(f, ": %zu\n", count);
	}
	close_file(e, &of);
	gp_sb_printf(&e->readme,
		     "%s: kubectl apply it and label pool %s's nodes "
		     "nvidia.com/mig.config=%s (the GPU Operator's MIG manager applies it)\n",
		     name, p->name, p->name);
}

static void emit_by_hand(struct emit *e, const struct pool_spec *p, const char *how)
{
	gp_sb_printf(&e->readme,
		     "pool %s: no stock component shares GPUs as %s; apply the override "
		     "by hand in the sharing layer you use\n",
		     p->name, how);
}

/* What makes the pool's GPUs shared as the recommendation says, by mode. */
static void emit_sharing(struct emit *e, const struct pool_spec *p)
{
	switch (p->sharing.mode) {
	case SHARING_TIME_SLICING:
	case SHARING_MPS: emit_device_plugin(e, p); return;
	case SHARING_MIG: emit_mig_parted(e, p); return;
	case SHARING_FRACTIONAL: emit_by_hand(e, p, "fractions"); return;
	case SHARING_EXCLUSIVE: emit_by_hand(e, p, "given"); return;
	}
}

static void quantity(FILE *f, const char *resource, double v)
{
	if (!strcmp(resource, "memory"))
		fprintf(f, "%.0fGi", v / GP_GIB);
	else
		fprintf(f, "%g", v);
}

static void emit_queue(struct emit *e, const struct queue_spec *qs)
{
	char name[SCENARIO_MAX_NAME + 32];
	struct outfile of;
	FILE *f = open_named(e, &of, name, sizeof name, "clusterqueue", qs->name);
	if (!f)
		return;
	fprintf(f,
		"# Kueue ClusterQueue %s (gpuplan advise)\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: ",
		qs->name);
	q(f, qs->name);
	fprintf(f, "\nspec:\n  namespaceSelector: {}\n  queueingStrategy: %s\n",
		qs->strategy == STRATEGY_STRICT_FIFO ? "StrictFIFO" : "BestEffortFIFO");
	if (qs->cohort) { /* v1beta2 renamed v1beta1's spec.cohort */
		fprintf(f, "  cohortName: ");
		q(f, qs->cohort);
		fputc('\n', f);
	}
	/* The whole spec is replaced: its preemption policies too, so a reclaim
	 * the recommendation turns on is applied (Kueue's defaults are Never). */
	static const char *const reclaim[] = {"Never", "LowerPriority", "Any"};
	static const char *const within[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"};
	fprintf(f, "  preemption:\n    reclaimWithinCohort: %s\n    withinClusterQueue: %s\n",
		reclaim[qs->reclaim], within[qs->within]);
	if (qs->borrow_within == BORROW_WITHIN_LOWER_PRIORITY) {
		fprintf(f, "    borrowWithinCohort:\n      policy: LowerPriority\n");
		if (qs->borrow_within_threshold)
			fprintf(f, "      maxPriorityThreshold: %d\n",
				(int)qs->borrow_within_max_priority);
	}
	fprintf(f, "  resourceGroups:\n    - coveredResources: [");
	for (size_t i = 0; i < qs->n_quota; i++) {
		fprintf(f, "%s", i ? ", " : "");
		q(f, qs->quota[i].resource);
	}
	fprintf(f, "]\n      flavors:\n        - name: default-flavor\n          resources:\n");
	for (size_t i = 0; i < qs->n_quota; i++) {
		const struct quota_entry *x = &qs->quota[i];
		fprintf(f, "            - name: ");
		q(f, x->resource);
		fprintf(f, "\n              nominalQuota: ");
		quantity(f, x->resource, x->nominal);
		/* Kueue refuses either limit on a queue outside a cohort. */
		if (qs->cohort && !isinf(x->borrowing_limit)) {
			fprintf(f, "\n              borrowingLimit: ");
			quantity(f, x->resource, x->borrowing_limit);
		}
		if (qs->cohort && !isinf(x->lending_limit)) {
			fprintf(f, "\n              lendingLimit: ");
			quantity(f, x->resource, x->lending_limit);
		}
		fputc('\n', f);
	}
	close_file(e, &of);
	gp_sb_printf(&e->readme, "%s: kubectl apply it (it replaces the ClusterQueue's spec)\n",
		     name);
}

/* How to apply a workload's patch: a Deployment in place; a Job's pod
 * template cannot change once the Job exists, so its manifest. */
static void patch_readme(struct emit *e, const struct workload_spec *w, const char *name,
			 bool container)
{
	if (w->kind != WORKLOAD_BATCH) /* a service, a server: a Deployment */
		gp_sb_printf(&e->readme,
			     "%s: kubectl patch deployment %s --type strategic --patch-file %s",
			     name, w->name, name);
	else
		gp_sb_printf(&e->readme,
			     "%s: kubectl patch --local -f %s-job.yaml --type strategic "
			     "--patch-file %s -o yaml (a Job's pod template cannot change once it "
			     "exists: patch the manifest, or the CronJob's jobTemplate)",
			     name, w->name, name);
	if (container)
		gp_sb_printf(&e->readme, "; the container is named after the workload: use "
					 "your container's name");
	if (container && w->inference &&
	    (w->quantization == QUANT_INT8 || w->quantization == QUANT_INT4))
		gp_sb_printf(
			&e->readme,
			"; serve a checkpoint quantized to %s (GPTQ, AWQ or compressed-tensors: "
			"vLLM reads the method from its config)",
			w->quantization == QUANT_INT8 ? "int8" : "int4");
	gp_sb_printf(&e->readme, "\n");
}

/* What of a workload the recommendation changes (bits). */
enum {
	PATCH_SELECTOR = 1,
	PATCH_AFFINITY = 2,
	PATCH_TOLERATIONS = 4,
	PATCH_SERVER = 8,
	PATCH_GPUS = 16,
	PATCH_GPU_SPEC = 32, /* nodeAffinity on GFD's nvidia.com/gpu.product */
	PATCH_EVICT = 64     /* the Cluster Autoscaler's safe-to-evict annotation */
};

/* The workload's required node affinity, whole (the patch replaces it): its
 * own expressions, and for a gpu_spec the GPU products it allows (GFD's
 * nvidia.com/gpu.product, what the device plugin's nodes are labelled
 * with); a nodeAffinity that keeps neither is deleted (strategic merge's
 * $patch: delete). */
static void emit_affinity(FILE *f, const struct workload_spec *w)
{
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist"};
	if (!w->n_affinity && !w->n_gpu_spec) {
		fprintf(f, "      affinity:\n        nodeAffinity:\n          $patch: delete\n");
		return;
	}
	fprintf(f, "      affinity:\n        nodeAffinity:\n"
		   "          requiredDuringSchedulingIgnoredDuringExecution:\n"
		   "            nodeSelectorTerms:\n              - matchExpressions:\n");
	for (size_t i = 0; i < w->n_affinity; i++) {
		const struct affinity_expr *x = &w->affinity[i];
		fprintf(f, "                  - key: ");
		q(f, x->key);
		fprintf(f, "\n                    operator: %s\n", ops[x->op]);
		if (x->n_values) {
			fprintf(f, "                    values: [");
			for (size_t k = 0; k < x->n_values; k++) {
				fprintf(f, "%s", k ? ", " : "");
				q(f, x->values[k]);
			}
			fprintf(f, "]\n");
		}
	}
	if (!w->n_gpu_spec)
		return;
	fprintf(f, "                  - key: nvidia.com/gpu.product\n"
		   "                    operator: In\n                    values: [");
	for (size_t k = 0; k < w->n_gpu_spec; k++) {
		const struct gpu_type *g = catalog_gpu(w->gpu_spec[k]);
		fprintf(f, "%s", k ? ", " : "");
		q(f, g && g->product ? g->product : w->gpu_spec[k]);
	}
	fprintf(f, "]\n");
}

/* The patch bit of a workload's key (workloads.NAME.FIELD; name gets NAME),
 * or 0 for a key no patch carries. */
static int patch_of(const char *set, char *name, size_t len)
{
	static const struct {
		const char *field;
		int bit;
	} fields[] = {
		{"node_selector", PATCH_SELECTOR},  {"affinity", PATCH_AFFINITY},
		{"tolerations", PATCH_TOLERATIONS}, {"gpu_spec", PATCH_GPU_SPEC},
		{"safe_to_evict", PATCH_EVICT},     {"gpus", PATCH_GPUS},
		{"max_batch", PATCH_SERVER},        {"max_batched_tokens", PATCH_SERVER},
		{"memory_fraction", PATCH_SERVER},  {"quantization", PATCH_SERVER},
		{"replicas", PATCH_SERVER},         {"cpu", PATCH_SERVER},
		{"tensor_parallel", PATCH_SERVER},
	};
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
		if (key_of(set, "workloads", name, len, fields[i].field))
			return fields[i].bit;
	return 0;
}

/* The workload's patch: the pod template's fields the recommendation
 * changes (a list field replaces the old one whole: tolerations carry every
 * toleration the workload has), and its container. */
static void emit_patch(struct emit *e, const struct workload_spec *w, int what)
{
	bool server = what & (PATCH_SERVER | PATCH_GPUS);
	char name[SCENARIO_MAX_NAME + 32];
	struct outfile of;
	FILE *f = open_named(e, &of, name, sizeof name, "patch", w->name);
	if (!f)
		return;
	fprintf(f, "# A strategic-merge patch of %s's %s (gpuplan advise)\nspec:\n", w->name,
		w->kind != WORKLOAD_BATCH ? "Deployment" : "Job");
	if (server && w->inference)
		fprintf(f, "  replicas: %d\n", (int)w->inference->replicas);
	fprintf(f, "  template:\n");
	if (what & PATCH_EVICT) /* CA's simulator/drainability/rules/notsafetoevict */
		fprintf(f,
			"    metadata:\n      annotations:\n"
			"        cluster-autoscaler.kubernetes.io/safe-to-evict: \"%s\"\n",
			w->safe_to_evict == SAFE_TO_EVICT_FALSE ? "false" : "true");
	if (what & ~PATCH_EVICT) /* no empty spec: a null would clear it */
		fprintf(f, "    spec:\n");
	if (what & PATCH_SELECTOR) {
		fprintf(f, "      nodeSelector:\n        $patch: replace\n");
		for (size_t i = 0; i < w->n_node_selector; i++) {
			fprintf(f, "        ");
			q(f, w->node_selector[i].key);
			fprintf(f, ": ");
			q(f, w->node_selector[i].value);
			fputc('\n', f);
		}
	}
	if (what & (PATCH_AFFINITY | PATCH_GPU_SPEC))
		emit_affinity(f, w);
	if (what & PATCH_TOLERATIONS) {
		static const char *const effects[] = {"NoSchedule", "PreferNoSchedule",
						      "NoExecute"};
		fprintf(f, "      tolerations:%s\n", w->n_tolerations ? "" : " []");
		for (size_t i = 0; i < w->n_tolerations; i++) {
			const struct toleration *t = &w->tolerations[i];
			fprintf(f, "        - key: ");
			q(f, t->key);
			fprintf(f, "\n          operator: %s\n",
				t->op == TOLERATION_EXISTS ? "Exists" : "Equal");
			if (t->op == TOLERATION_EQUAL) {
				fprintf(f, "          value: ");
				q(f, t->value);
				fputc('\n', f);
			}
			if (t->effect >= 0 && t->effect < 3)
				fprintf(f, "          effect: %s\n", effects[t->effect]);
		}
	}
	if (!server) {
		close_file(e, &of);
		patch_readme(e, w, name, false);
		return;
	}
	fprintf(f, "      containers:\n        - name: ");
	q(f, w->name);
	fputc('\n', f);
	if (w->cpu > 0 || (what & PATCH_GPUS))
		fprintf(f, "          resources:\n");
	if (w->cpu > 0)
		fprintf(f, "            requests:\n              cpu: \"%g\"\n", w->cpu);
	if ((what & PATCH_GPUS) && w->request == REQUEST_MIG) /* one instance, mixed strategy */
		fprintf(f, "            limits:\n              \"nvidia.com/mig-%s\": 1\n",
			w->mig_profile);
	else if ((what & PATCH_GPUS) && w->request == REQUEST_GPUS)
		fprintf(f, "            limits:\n              \"nvidia.com/gpu\": %d\n",
			(int)w->gpus);
	else if (what & PATCH_GPUS)
		gp_sb_printf(&e->readme,
			     "%s's share of %d milli-GPU: no stock device plugin hands out "
			     "fractions; set it in the sharing layer you use\n",
			     w->name, (int)w->milli);
	if ((what & PATCH_SERVER) && w->inference) {
		const struct inference_spec *is = w->inference;
		fprintf(f,
			"          args:\n            - \"--max-num-seqs=%d\"\n"
			"            - \"--max-num-batched-tokens=%d\"\n",
			(int)is->max_batch, (int)is->max_batched_tokens);
		if (is->memory_fraction > 0)
			fprintf(f, "            - \"--gpu-memory-utilization=%g\"\n",
				is->memory_fraction);
		if (is->tensor_parallel > 1)
			fprintf(f, "            - \"--tensor-parallel-size=%d\"\n",
				(int)is->tensor_parallel);
		if (w->model && w->quantization == QUANT_FP8) /* vLLM's dynamic FP8 */
			fprintf(f, "            - \"--quantization=fp8\"\n");
	}
	close_file(e, &of);
	patch_readme(e, w, name, true);
}

static void emit_nodes(struct emit *e, const struct scenario *sc, const bool *pools)
{
	struct outfile of;
	FILE *f = open_file(e, &of, "cluster-autoscaler.args");
	if (!f)
		return;
	fprintf(f,
		"# cluster-autoscaler flags: --nodes=<min>:<max>:<node group> (gpuplan advise)\n");
	for (size_t p = 0; p < sc->n_pools; p++) {
		if (!pools[p])
			continue;
		const struct pool_spec *ps = &sc->pools[p];
		int32_t lo = ps->autoscale.on ? ps->autoscale.min : ps->nodes;
		int32_t hi = ps->autoscale.on ? ps->autoscale.max : ps->nodes;
		fprintf(f, "--nodes=%d:%d:%s\n", (int)lo, (int)hi, ps->name);
	}
	close_file(e, &of);
	gp_sb_printf(&e->readme,
		     "cluster-autoscaler.args: the node groups' sizes, as cluster-autoscaler "
		     "flags (or the node pools' min and max in your cloud's console)\n");
}

/* Creates dir and the folders above it that are missing (mkdir -p). */
static int make_dir(const char *dir, struct gp_err *err)
{
	char *path = gp_xstrdup(dir);
	int rc = GP_OK;
	for (char *at = path + 1;; at++) {
		char keep = *at;
		if (keep != '/' && keep != '\0')
			continue;
		*at = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
			rc = gp_errorf(err, GP_ERUNTIME, "--emit %s: cannot create %s: %s", dir,
				       path, strerror(errno));
		*at = keep;
		if (rc || !keep)
			break;
	}
	free(path);
	return rc;
}

int advise_emit(const struct advise_spec *sp, const struct advice *a, const char *dir,
		char **written, struct gp_err *err)
{
	*written = NULL;
	if (!a->n || !a->rows[0].meets)
		return gp_errorf(err, GP_EINPUT,
				 "--emit %s: nothing meets every goal, so there is no "
				 "recommendation to write out",
				 dir);
	const struct advise_row *best = &a->rows[0];
	int rc = make_dir(dir, err);
	if (rc)
		return rc;
	struct scenario *sc = NULL;
	rc = scenario_load_overrides(sp->scenario, sp->sets, sp->n_sets, best->sets, best->n_sets,
				     &sc, err);
	if (rc)
		return rc;
	struct emit e = {.dir = dir, .err = err};
	gp_sb_printf(&e.readme, "gpuplan advise: %s (run %lld)\n", best->label,
		     (long long)best->run_id);
	if (!best->n_sets)
		gp_sb_printf(&e.readme, "nothing to change: every workload meets its goal as the "
					"scenario is\n");
	bool *nodes = gp_xcalloc(sc->n_pools + 1, sizeof *nodes), any_nodes = false;
	int *patch = gp_xcalloc(sc->n_workloads + 1, sizeof *patch);
	bool sched = false;
	char name[SCENARIO_MAX_NAME + 1];
	for (size_t i = 0; i < best->n_sets; i++) {
		const struct override *o = &best->sets[i];
		const char *x = o->key;
		int k, bit;
		if (!strcmp(x, "scheduler.scoring"))
			sched = true;
		else if (!strcmp(x, "scheduler.gpu_policy"))
			gp_sb_printf(
				&e.readme,
				"%s=%s: no stock object: gpu_policy %s is the placement of a GPU "
				"inside a node; %s\n",
				x, o->value, o->value,
				strcmp(o->value, "best-fit")
					? "it needs its scheduler plugin"
					: "the device plugin's allocation (best-fit) is the default");
		else if (!strcmp(x, "pools.+")) { /* a new pool: the scenario's last */
			const struct pool_spec *np = &sc->pools[sc->n_pools - 1];
			gp_sb_printf(
				&e.readme,
				"pool %s is new: create a node group of %d %s node%s labeled "
				"gpuplan.io/pool=%s and tainted gpuplan.io/pool=%s:NoSchedule, "
				"its nodes taken from the pool the recommendation shrinks\n",
				np->name, (int)np->nodes, np->gpu->name, np->nodes == 1 ? "" : "s",
				np->name, np->name);
			emit_sharing(&e, np);
			nodes[sc->n_pools - 1] = any_nodes = true;
		} else if (key_of(x, "pools", name, sizeof name, "sharing") &&
			   (k = scenario_pool_index(sc, name)) >= 0)
			emit_sharing(&e, &sc->pools[k]);
		else if ((key_of(x, "pools", name, sizeof name, "nodes") ||
			  key_of(x, "pools", name, sizeof name, "autoscale")) &&
			 (k = scenario_pool_index(sc, name)) >= 0)
			nodes[k] = any_nodes = true;
		else if (key_of(x, "queues", name, sizeof name, NULL) &&
			 (k = scenario_queue_index(sc, name)) >= 0)
			emit_queue(&e, &sc->queues[k]);
		else if ((bit = patch_of(x, name, sizeof name)) &&
			 (k = scenario_workload_index(sc, name)) >= 0)
			patch[k] |= bit;
		else
			gp_sb_printf(
				&e.readme,
				"--set '%s=%s': no stock object carries it; apply it by hand\n", x,
				o->value);
	}
	if (sched)
		emit_scheduler(&e, sc);
	for (size_t w = 0; w < sc->n_workloads; w++)
		if (patch[w])
			emit_patch(&e, &sc->workloads[w], patch[w]);
	if (any_nodes)
		emit_nodes(&e, sc, nodes);
	if (!e.rc) {
		struct outfile of;
		FILE *f = open_file(&e, &of, "README.txt");
		if (f) {
			fputs(e.readme.s, f);
			close_file(&e, &of);
		}
	}
	free(nodes);
	free(patch);
	scenario_free(sc);
	free(e.readme.s);
	if (e.rc) {
		free(e.written.s);
		return e.rc;
	}
	*written = e.written.s;
	return GP_OK;
}
