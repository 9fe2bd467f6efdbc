/*
 * test_import_kueue.c - `gpuplan import --kueue` and Kueue's ResourceFlavors:
 * a ClusterQueue's quota per (flavor, resource), the flavors' node labels,
 * taints and tolerations (kubernetes-sigs/kueue, apis/kueue/v1beta1/
 * clusterqueue_types.go, resourceflavor_types.go).
 */
#include <criterion/criterion.h>

#include "gpuplan/import.h"
#include "gpuplan/scenario.h"

#include "scratch.h"
#include <stdio.h>
#include <string.h>

#define FX "tests/fixtures/import/"

TestSuite(import_kueue, .init = scratch_make, .fini = scratch_remove);

static struct import_options fixture(void)
{
	return (struct import_options){
		.nodes = FX "nodes.json", .pods = FX "pods.json", .at = "2026-11-30T12:00:00Z"};
}

static void build(const struct import_options *o, struct import_result *r)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = import_build(o, r, &err);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
}

/* Writes text to dir/name and returns the path (static buffer per slot). */
static const char *put(int slot, const char *name, const char *text)
{
	static char paths[4][128];
	snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
	FILE *f = fopen(paths[slot], "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return paths[slot];
}

/* Writes and loads the scenario; returns it (caller frees). */
static struct scenario *load(const struct import_result *r)
{
	const char *path = put(3, "imported.yaml", r->yaml);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s\n%s", err.msg, r->yaml);
	return sc;
}

/* Kueue keeps a ClusterQueue's quota per (flavor, resource): two flavors of
 * 4 GPUs are two quotas, never one of 8, and each ResourceFlavor's node
 * labels, taints and tolerations come along (kubernetes-sigs/kueue,
 * apis/kueue/v1beta1/clusterqueue_types.go ResourceGroup, FlavorQuotas;
 * resourceflavor_types.go ResourceFlavorSpec).  A group's resources gpuplan
 * does not model (pods) are left out. */
Test(import_kueue, kueue_flavors_keep_their_quotas_labels_and_taints)
{
	struct import_options o = fixture();
	o.kueue = put(
		2, "kueue.yaml",
		"kind: List\nitems:\n"
		"- kind: ResourceFlavor\n  metadata: {name: a100}\n"
		"  spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n"
		"- kind: ClusterQueue\n  metadata: {name: q}\n  spec:\n"
		"    flavorFungibility: {whenCanBorrow: TryNextFlavor}\n"
		"    resourceGroups:\n    - coveredResources: [nvidia.com/gpu, pods]\n"
		"      flavors:\n"
		"      - name: a100\n        resources: [{name: nvidia.com/gpu, nominalQuota: 4}, "
		"{name: pods, nominalQuota: 10}]\n"
		"      - name: h100\n        resources: [{name: nvidia.com/gpu, nominalQuota: 4}, "
		"{name: pods, nominalQuota: 10}]\n"
		"- kind: ResourceFlavor\n  metadata: {name: h100}\n"
		"  spec:\n    nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
		"    nodeTaints: [{key: dedicated, value: train, effect: NoSchedule}]\n"
		"    tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]\n");
	struct import_result r;
	build(&o, &r);
	struct scenario *sc = load(&r);
	const struct queue_spec *q = &sc->queues[scenario_queue_index(sc, "q")];
	cr_assert_eq(q->n_groups, 1);
	cr_assert_eq(q->groups[0].n_covered, 1, "pods is left out");
	cr_assert_eq(q->groups[0].n_flavors, 2);
	cr_assert_str_eq(sc->flavors[q->groups[0].flavors[0]].name, "a100");
	cr_assert_str_eq(sc->flavors[q->groups[0].flavors[1]].name, "h100");
	cr_assert_eq(q->n_quota, 2, "4 GPUs per flavor, not 8 in one");
	for (size_t k = 0; k < 2; k++)
		cr_assert_float_eq(q->quota[k].nominal, 4, 1e-9);
	cr_assert_eq(q->when_can_borrow, FUNGIBILITY_TRY_NEXT_FLAVOR);
	const struct flavor_spec *h = &sc->flavors[scenario_flavor_index(sc, "h100")];
	cr_assert_eq(h->n_node_labels, 1);
	cr_assert_str_eq(h->node_labels[0].value, "NVIDIA-H100-80GB-HBM3");
	cr_assert_eq(h->n_node_taints, 1);
	cr_assert_str_eq(h->node_taints[0].value, "train");
	cr_assert_eq(h->n_tolerations, 1);
	cr_assert_eq(h->tolerations[0].op, TOLERATION_EXISTS);
	scenario_free(sc);
	import_result_free(&r);
}

/* A flavor a ClusterQueue names without its ResourceFlavor: written bare,
 * with a note. */
Test(import_kueue, a_kueue_flavor_without_its_object_is_a_note)
{
	struct import_options o = fixture();
	o.kueue = put(2, "kueue.yaml",
		      "kind: List\nitems:\n- kind: ClusterQueue\n  metadata: {name: q}\n  spec:\n"
		      "    resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n"
		      "      flavors: [{name: spot, resources: [{name: nvidia.com/gpu, "
		      "nominalQuota: 2}]}]\n");
	struct import_result r;
	build(&o, &r);
	bool said = false;
	for (size_t i = 0; i < r.n_warnings; i++)
		said |= strstr(r.warnings[i], "names flavor spot, but ") != NULL;
	cr_assert(said, "%s", r.n_warnings ? r.warnings[r.n_warnings - 1] : "no note");
	struct scenario *sc = load(&r);
	cr_assert_geq(scenario_flavor_index(sc, "spot"), 0);
	scenario_free(sc);
	import_result_free(&r);
}

/* The fixture's pods.json with each (from, to) replacement made once, in
 * the scratch folder; returns the path. */
static const char *pods_edited(const char *const *from, const char *const *to, size_t n)
{
	FILE *f = fopen(FX "pods.json", "r");
	cr_assert_not_null(f);
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = 0;
	static char out[1 << 20];
	for (size_t k = 0; k < n; k++) {
		char *at = strstr(text, from[k]);
		cr_assert_not_null(at, "%s", from[k]);
		size_t head = (size_t)(at - text);
		snprintf(out, sizeof out, "%.*s%s%s", (int)head, text, to[k], at + strlen(from[k]));
		snprintf(text, sizeof text, "%s", out);
	}
	return put(2, "pods.json", text);
}

static const struct workload_spec *workload(const struct scenario *sc, const char *name)
{
	int w = scenario_workload_index(sc, name);
	cr_assert_geq(w, 0, "no workload %s", name);
	return &sc->workloads[w];
}

/* The Cluster Autoscaler's drainability, read from the pods: the
 * annotation cluster-autoscaler.kubernetes.io/safe-to-evict ("true" or
 * "false"; simulator/drainability/rules/safetoevict, notsafetoevict) and
 * local storage (utils/drain/drain.go isLocalVolume: a hostPath, or an
 * emptyDir not in memory, unless named by safe-to-evict-local-volumes). */
Test(import_kueue, safe_to_evict_and_local_storage_come_from_the_pods)
{
	struct import_options o = fixture();
	const char *from[] = {"\"name\": \"pretrain-13b-0-7rj9x\",",
			      "\"name\": \"finetune-llama-8b-2-h7m3c\","};
	const char *to[] = {"\"name\": \"pretrain-13b-0-7rj9x\", \"annotations\": "
			    "{\"cluster-autoscaler.kubernetes.io/safe-to-evict\": \"false\"},",
			    "\"name\": \"finetune-llama-8b-2-h7m3c\", \"annotations\": "
			    "{\"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes\": "
			    "\"cache\"},"};
	const char *spec[] = {"\"uid\": \"a3f0c1d2-42424242-4b7e-8c21-5e6f7a8b9c0d\"\n"
			      "            },\n            \"spec\": {"};
	const char *cache[] = {"\"uid\": \"x\"}, \"spec\": {\"volumes\": [{\"name\": \"cache\", "
			       "\"emptyDir\": {}}, {\"name\": \"shm\", \"emptyDir\": {\"medium\": "
			       "\"Memory\"}}],"};
	const char *host[] = {"\"uid\": \"x\"}, \"spec\": {\"volumes\": [{\"name\": \"data\", "
			      "\"hostPath\": {\"path\": \"/data\"}}],"};
	for (int k = 0; k < 2; k++) {
		const char *f3[] = {from[0], from[1], spec[0]};
		const char *t3[] = {to[0], to[1], k ? host[0] : cache[0]};
		o.pods = pods_edited(f3, t3, 3);
		struct import_result r;
		build(&o, &r);
		struct scenario *sc = load(&r);
		cr_assert_eq(workload(sc, "pretrain-13b")->safe_to_evict, SAFE_TO_EVICT_FALSE);
		cr_assert_eq(workload(sc, "finetune-llama-8b-on-h100-80gb-1")->safe_to_evict,
			     SAFE_TO_EVICT_UNSET);
		/* cache is named by safe-to-evict-local-volumes, shm is in memory;
		 * a hostPath blocks */
		cr_assert_eq(workload(sc, "finetune-llama-8b-on-h100-80gb-1")->local_storage,
			     k == 1);
		scenario_free(sc);
		import_result_free(&r);
	}
}
