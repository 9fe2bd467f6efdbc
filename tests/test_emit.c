/*
 * test_emit.c - `advise --emit DIR`: the objects that carry out a
 * recommendation parse (libyaml; Python's yaml too where installed) and name
 * the kinds, apiVersions and fields of the upstream documents:
 *  - KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1, profiles[]
 *    .pluginConfig[] {name: NodeResourcesFit, args.scoringStrategy {type,
 *    resources [{name, weight}]}} (kubernetes/website, content/en/docs/
 *    concepts/scheduling-eviction/resource-bin-packing.md);
 *  - the NVIDIA device plugin's config in a ConfigMap: version: v1,
 *    sharing.timeSlicing.resources [{name: nvidia.com/gpu, replicas}]
 *    (NVIDIA GPU Operator docs, "Time-Slicing GPUs in Kubernetes",
 *    gpu-sharing.html; k8s-device-plugin api/config/v1, sharing.mps);
 *  - mig-parted's config: version: v1, mig-configs.<name> [{devices: all,
 *    mig-enabled: true, mig-devices: {"3g.40gb": 2}}] (NVIDIA/mig-parted
 *    README, examples/config.yaml);
 *  - Kueue's ClusterQueue, kueue.x-k8s.io/v1beta2, the version current
 *    Kueue serves: spec.cohortName (v1beta1's spec.cohort), queueingStrategy,
 *    namespaceSelector, resourceGroups [{coveredResources, flavors [{name,
 *    resources [{name, nominalQuota, borrowingLimit, lendingLimit}]}]}], and
 *    neither limit without a cohort ("borrowingLimit must be nil when cohort
 *    is empty") (kubernetes-sigs/kueue apis/kueue/v1beta2/
 *    clusterqueue_types.go, its json tags; site/content/en/docs/concepts/
 *    cluster_queue.md);
 *  - vLLM's engine arguments --max-num-seqs, --max-num-batched-tokens,
 *    --gpu-memory-utilization (docs.vllm.ai, "Engine Arguments");
 *  - cluster-autoscaler's --nodes=<min>:<max>:<node group> (kubernetes/
 *    autoscaler, cluster-autoscaler/FAQ.md).
 */
#include "gpuplan/advise.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "scratch.h"

static char out[65536];

TestSuite(emit, .init = scratch_make, .fini = scratch_remove, .timeout = 120);

/* The scalar at a path of keys and indexes ("spec resourceGroups 0 name")
 * of a libyaml document, or NULL. */
static const char *at(yaml_document_t *d, const char *path)
{
	yaml_node_t *n = yaml_document_get_root_node(d);
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *tok = strtok(buf, " "); tok && n; tok = strtok(NULL, " ")) {
		yaml_node_t *next = NULL;
		if (n->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
			     p < n->data.mapping.pairs.top; p++) {
				yaml_node_t *k = yaml_document_get_node(d, p->key);
				if (k->type == YAML_SCALAR_NODE &&
				    !strcmp((char *)k->data.scalar.value, tok))
					next = yaml_document_get_node(d, p->value);
			}
		} else if (n->type == YAML_SEQUENCE_NODE) {
			long i = strtol(tok, NULL, 10);
			yaml_node_item_t *it = n->data.sequence.items.start + i;
			if (it < n->data.sequence.items.top)
				next = yaml_document_get_node(d, *it);
		}
		n = next;
	}
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Loads file (its only document) into d; the test fails if it does not parse. */
static void load(const char *file, yaml_document_t *d)
{
	FILE *f = fopen(file, "rb");
	cr_assert_not_null(f, "%s", file);
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	cr_assert(yaml_parser_load(&p, d), "%s: %s at line %zu", file, p.problem,
		  p.problem_mark.line + 1);
	cr_assert_not_null(yaml_document_get_root_node(d), "%s is empty", file);
	yaml_parser_delete(&p);
	fclose(f);
}

/* load() of a file advise --emit wrote under the scratch folder: "mb/patch-chat.yaml". */
static void load_emitted(const char *path, yaml_document_t *d)
{
	char file[512];
	snprintf(file, sizeof file, "%s/%s", dir, path);
	load(file, d);
}

/* The embedded document of a ConfigMap's data key, parsed too. */
static void load_text(const char *text, yaml_document_t *d)
{
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	cr_assert(yaml_parser_load(&p, d), "%s at line %zu:\n%s", p.problem,
		  p.problem_mark.line + 1, text);
	yaml_parser_delete(&p);
}

/* Python's yaml parses every file of dir, where python3 and yaml exist. */
static void python_parses(const char *folder)
{
	if (system("python3 -c 'import yaml' 2>/dev/null") != 0)
		return; /* not installed: libyaml's parse above is the check */
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import glob, sys, yaml\n"
		 "for f in glob.glob(sys.argv[1] + \"/*.yaml\"):\n"
		 "    d = yaml.safe_load(open(f))\n"
		 "    for v in (d.get(\"data\") or {}).values(): yaml.safe_load(v)\n' %s",
		 folder);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "python yaml: %s", out);
}

/* The text of file, into out (the test fails if it cannot be read). */
static void expect_file(const char *file)
{
	size_t n;
	char *text = scratch_slurp(file, &n);
	cr_assert_not_null(text, "%s", file);
	snprintf(out, sizeof out, "%s", text);
	free(text);
}

static void advise_emit_case(const char *fixture, const char *name, const char *extra)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan advise tests/fixtures/diagnosis/%s.yaml --db %s/%s.db --emit %s/%s "
		 "%s",
		 fixture, dir, name, dir, name, extra);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
}

Test(emit, time_slicing_is_the_device_plugins_sharing_config)
{
	advise_emit_case("sharing", "ts", "");
	cr_expect(strstr(out, "wrote into"), "%s", out);
	char file[256];
	snprintf(file, sizeof file, "%s/ts/device-plugin-a100.yaml", dir);
	yaml_document_t d, c;
	load(file, &d);
	cr_expect_str_eq(at(&d, "apiVersion"), "v1");
	cr_expect_str_eq(at(&d, "kind"), "ConfigMap");
	const char *cfg = at(&d, "data a100");
	cr_assert_not_null(cfg);
	load_text(cfg, &c);
	cr_expect_str_eq(at(&c, "version"), "v1");
	cr_expect_str_eq(at(&c, "sharing timeSlicing resources 0 name"), "nvidia.com/gpu");
	cr_expect_str_eq(at(&c, "sharing timeSlicing resources 0 replicas"), "4");
	yaml_document_delete(&c);
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/ts", dir);
	python_parses(file);
}

/* The fields of ClusterQueue kueue.x-k8s.io/v1beta2 that gpuplan may write,
 * as the json tags of apis/kueue/v1beta2/clusterqueue_types.go name them
 * ("[]": an item of a list).  v1beta2 is Kueue's storage version
 * (+kubebuilder:storageversion on its ClusterQueue). */
static const char *const clusterqueue_fields[] = {
	"apiVersion",
	"kind",
	"metadata",
	"metadata.name",
	"spec",
	"spec.namespaceSelector",
	"spec.queueingStrategy",
	"spec.cohortName",
	"spec.resourceGroups",
	"spec.resourceGroups[]",
	"spec.resourceGroups[].coveredResources",
	"spec.resourceGroups[].coveredResources[]",
	"spec.resourceGroups[].flavors",
	"spec.resourceGroups[].flavors[]",
	"spec.resourceGroups[].flavors[].name",
	"spec.resourceGroups[].flavors[].resources",
	"spec.resourceGroups[].flavors[].resources[]",
	"spec.resourceGroups[].flavors[].resources[].name",
	"spec.resourceGroups[].flavors[].resources[].nominalQuota",
	"spec.resourceGroups[].flavors[].resources[].borrowingLimit",
	"spec.resourceGroups[].flavors[].resources[].lendingLimit",
	"spec.preemption",
	"spec.preemption.reclaimWithinCohort",
	"spec.preemption.withinClusterQueue",
	"spec.preemption.borrowWithinCohort",
	"spec.preemption.borrowWithinCohort.policy",
};

/* Every path of node n (below path) is one of clusterqueue_fields; returns
 * how many paths were checked. */
static size_t only_real_fields(yaml_document_t *d, yaml_node_t *n, const char *path)
{
	bool known = !*path;
	for (size_t i = 0; !known && i < sizeof clusterqueue_fields / sizeof *clusterqueue_fields;
	     i++)
		known = !strcmp(path, clusterqueue_fields[i]);
	cr_expect(known, "ClusterQueue v1beta2 has no field %s", path);
	size_t checked = 1;
	char sub[512];
	if (n->type == YAML_MAPPING_NODE)
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(d, p->key);
			snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "",
				 (const char *)k->data.scalar.value);
			checked += only_real_fields(d, yaml_document_get_node(d, p->value), sub);
		}
	else if (n->type == YAML_SEQUENCE_NODE)
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			snprintf(sub, sizeof sub, "%s[]", path);
			checked += only_real_fields(d, yaml_document_get_node(d, *it), sub);
		}
	return checked;
}

/* An idle queue of a cohort lends its GPUs (tests/fixtures/diagnosis/
 * lending.yaml): team-b's ClusterQueue keeps its nominal quota, names its
 * cohort as v1beta2 does (cohortName) and lends 12 GPUs; every field is one
 * of ClusterQueue's. */
Test(emit, a_lending_limit_is_a_v1beta2_clusterqueue_with_only_real_fields)
{
	advise_emit_case("lending", "lend", "");
	char file[256];
	yaml_document_t d;
	load_emitted("lend/clusterqueue-team-b.yaml", &d);
	cr_expect_str_eq(at(&d, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	cr_expect_str_eq(at(&d, "kind"), "ClusterQueue");
	cr_expect_str_eq(at(&d, "spec cohortName"), "research");
	cr_expect_null(at(&d, "spec cohort"), "v1beta1's name");
	cr_expect_str_eq(at(&d, "spec resourceGroups 0 flavors 0 resources 0 nominalQuota"), "12");
	cr_expect_str_eq(at(&d, "spec resourceGroups 0 flavors 0 resources 0 lendingLimit"), "12");
	cr_expect_geq(only_real_fields(&d, yaml_document_get_root_node(&d), ""), 15);
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/lend", dir);
	python_parses(file);
}

Test(emit, a_quota_is_a_kueue_clusterqueue)
{
	advise_emit_case("quota", "q", "");
	char file[256];
	yaml_document_t d;
	load_emitted("q/clusterqueue-team-a.yaml", &d);
	cr_expect_str_eq(at(&d, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	cr_expect_str_eq(at(&d, "kind"), "ClusterQueue");
	cr_expect_str_eq(at(&d, "metadata name"), "team-a");
	only_real_fields(&d, yaml_document_get_root_node(&d), "");
	cr_expect_str_eq(at(&d, "spec queueingStrategy"), "BestEffortFIFO");
	cr_expect_str_eq(at(&d, "spec resourceGroups 0 coveredResources 0"), "nvidia.com/gpu");
	cr_expect_str_eq(at(&d, "spec resourceGroups 0 flavors 0 resources 0 name"),
			 "nvidia.com/gpu");
	cr_expect_str_eq(at(&d, "spec resourceGroups 0 flavors 0 resources 0 nominalQuota"), "12");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/q", dir);
	python_parses(file);
}

/* tests/fixtures/diagnosis/reclaim.yaml: the recommendation turns on
 * reclaimWithinCohort; the ClusterQueue replaces the whole spec, so its
 * preemption block carries it (Kueue's ClusterQueuePreemption:
 * reclaimWithinCohort Never | LowerPriority | Any, withinClusterQueue). */
Test(emit, a_reclaim_policy_is_the_clusterqueues_preemption)
{
	advise_emit_case("reclaim", "rc", "");
	yaml_document_t d;
	load_emitted("rc/clusterqueue-team-a.yaml", &d);
	cr_expect_str_eq(at(&d, "spec preemption reclaimWithinCohort"), "Any");
	cr_expect_str_eq(at(&d, "spec preemption withinClusterQueue"), "Never");
	cr_expect_str_eq(at(&d, "spec cohortName"), "lab");
	only_real_fields(&d, yaml_document_get_root_node(&d), "");
	yaml_document_delete(&d);
}

Test(emit, a_corrected_selector_is_a_strategic_merge_patch)
{
	advise_emit_case("selector-typo", "sel", "");
	char file[256];
	yaml_document_t d;
	load_emitted("sel/patch-train.yaml", &d);
	cr_expect_str_eq(at(&d, "spec template spec nodeSelector nvidia.com/gpu.product"),
			 "NVIDIA-A100-SXM4-40GB");
	cr_expect_str_eq(at(&d, "spec template spec nodeSelector $patch"), "replace");
	cr_expect_null(at(&d, "spec template spec tolerations"), "tolerations untouched");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/sel/README.txt", dir);
	expect_file(file);
	cr_expect(strstr(out, "patch-train.yaml: kubectl patch --local -f train-job.yaml --type "
			      "strategic --patch-file patch-train.yaml"),
		  "%s", out);
}

Test(emit, a_servers_batch_is_its_vllm_arguments)
{
	advise_emit_case("max-batch", "mb", "");
	yaml_document_t d;
	load_emitted("mb/patch-chat.yaml", &d);
	cr_expect_str_eq(at(&d, "spec template spec containers 0 name"), "chat");
	cr_expect_str_eq(at(&d, "spec template spec containers 0 args 0"), "--max-num-seqs=683");
	cr_expect_str_eq(at(&d, "spec template spec containers 0 args 1"),
			 "--max-num-batched-tokens=8192");
	yaml_document_delete(&d);
}

/* A wider TP degree is vLLM's --tensor-parallel-size beside the GPUs the
 * container asks for (vllm/engine/arg_utils.py). */
Test(emit, a_tp_degree_is_the_servers_tensor_parallel_size)
{
	advise_emit_case("service-beside-batch", "tp", "");
	char file[256];
	yaml_document_t d;
	load_emitted("tp/patch-chat.yaml", &d);
	cr_expect_str_eq(at(&d, "spec replicas"), "5");
	cr_expect_str_eq(at(&d, "spec template spec containers 0 resources limits nvidia.com/gpu"),
			 "4");
	cr_expect_str_eq(at(&d, "spec template spec containers 0 args 3"),
			 "--tensor-parallel-size=4");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/tp/README.txt", dir);
	expect_file(file);
	cr_expect(!strstr(out, "tensor_parallel"), "applied, not by hand:\n%s", out);
}

Test(emit, node_counts_are_cluster_autoscaler_flags)
{
	advise_emit_case("capacity", "cap", "");
	char file[256];
	snprintf(file, sizeof file, "%s/cap/cluster-autoscaler.args", dir);
	expect_file(file);
	cr_expect(strstr(out, "\n--nodes=2:2:h100\n"), "%s", out);
}

/* A gpu_spec is a required node affinity on the GPU product label that
 * GPU Feature Discovery puts on nodes (nvidia.com/gpu.product, e.g.
 * NVIDIA-H100-80GB-HBM3: NVIDIA/gpu-feature-discovery's labels). */
Test(emit, a_gpu_spec_is_a_node_affinity_on_the_gpu_product)
{
	advise_emit_case("vram-small-type", "spec", "");
	char file[256];
	yaml_document_t d;
	load_emitted("spec/patch-infer-batch.yaml", &d);
	const char *term = "spec template spec affinity nodeAffinity "
			   "requiredDuringSchedulingIgnoredDuringExecution nodeSelectorTerms 0 "
			   "matchExpressions 0";
	char path[512];
	snprintf(path, sizeof path, "%s key", term);
	cr_expect_str_eq(at(&d, path), "nvidia.com/gpu.product");
	snprintf(path, sizeof path, "%s operator", term);
	cr_expect_str_eq(at(&d, path), "In");
	snprintf(path, sizeof path, "%s values 0", term);
	cr_expect_str_eq(at(&d, path), "NVIDIA-H100-80GB-HBM3");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/spec", dir);
	python_parses(file);
}

/* safe_to_evict: false is the pod annotation the Cluster Autoscaler reads
 * (cluster-autoscaler.kubernetes.io/safe-to-evict: "false", simulator/
 * drainability/rules/notsafetoevict), on the pod template's metadata; the
 * patch has no spec of its own, which would clear the template's. */
Test(emit, safe_to_evict_is_the_cluster_autoscalers_annotation)
{
	advise_emit_case("scale-down-evicts", "evict", "");
	char file[256];
	yaml_document_t d;
	load_emitted("evict/patch-train.yaml", &d);
	cr_expect_str_eq(at(&d, "spec template metadata annotations "
				"cluster-autoscaler.kubernetes.io/safe-to-evict"),
			 "false");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/evict/patch-train.yaml", dir);
	expect_file(file);
	cr_expect(!strstr(out, "\n    spec:"), "no spec in the patch:\n%s", out);
}

/* The emitter on its own, for what the corpus does not recommend: scoring
 * MostAllocated over GPUs and a MIG layout. */
Test(emit, scoring_and_a_mig_layout_from_a_recommendation)
{
	struct advice a = {0};
	struct override sets[] = {
		{"scheduler.scoring", "MostAllocated", OVERRIDE_SCALAR},
		{"pools.h100.sharing", "{mode: mig, layout: [3g.40gb, 3g.40gb]}", OVERRIDE_MAP},
		{"workloads.train.gpus", "{mig: 3g.40gb}", OVERRIDE_MAP}};
	struct advise_row row = {.label = "by hand", .meets = true, .sets = sets, .n_sets = 3};
	a.rows = &row;
	a.n = 1;
	struct advise_spec spec = {.scenario = "tests/fixtures/diagnosis/capacity.yaml"};
	char path[256], *written = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	snprintf(path, sizeof path, "%s/hand/nested", dir);
	cr_assert_eq(advise_emit(&spec, &a, path, &written, &err), GP_OK, "%s", err.msg);
	cr_expect(strstr(written, "kube-scheduler.yaml\n"), "%s", written);
	cr_expect(strstr(written, "mig-parted-h100.yaml\n"), "%s", written);
	cr_expect(strstr(written, "patch-train.yaml\n"), "%s", written);
	free(written);
	char file[300];
	yaml_document_t d, c;
	snprintf(file, sizeof file, "%s/kube-scheduler.yaml", path);
	load(file, &d);
	cr_expect_str_eq(at(&d, "apiVersion"), "kubescheduler.config.k8s.io/v1");
	cr_expect_str_eq(at(&d, "kind"), "KubeSchedulerConfiguration");
	cr_expect_str_eq(at(&d, "profiles 0 pluginConfig 0 name"), "NodeResourcesFit");
	cr_expect_str_eq(at(&d, "profiles 0 pluginConfig 0 args scoringStrategy type"),
			 "MostAllocated");
	cr_expect_str_eq(at(&d, "profiles 0 pluginConfig 0 args scoringStrategy resources 0 name"),
			 "nvidia.com/gpu");
	cr_expect_str_eq(
		at(&d, "profiles 0 pluginConfig 0 args scoringStrategy resources 0 weight"), "1");
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/mig-parted-h100.yaml", path);
	load(file, &d);
	cr_expect_str_eq(at(&d, "kind"), "ConfigMap");
	const char *cfg = at(&d, "data config.yaml");
	cr_assert_not_null(cfg);
	load_text(cfg, &c);
	cr_expect_str_eq(at(&c, "version"), "v1");
	cr_expect_str_eq(at(&c, "mig-configs h100 0 devices"), "all");
	cr_expect_str_eq(at(&c, "mig-configs h100 0 mig-enabled"), "true");
	cr_expect_str_eq(at(&c, "mig-configs h100 0 mig-devices 3g.40gb"), "2");
	yaml_document_delete(&c);
	yaml_document_delete(&d);
	snprintf(file, sizeof file, "%s/patch-train.yaml", path);
	load(file, &d); /* the pods ask for the instance (mixed MIG strategy) */
	cr_expect_str_eq(
		at(&d, "spec template spec containers 0 resources limits nvidia.com/mig-3g.40gb"),
		"1");
	yaml_document_delete(&d);
	python_parses(path);
	/* Nothing to recommend: nothing written, and the reason. */
	row.meets = false;
	snprintf(path, sizeof path, "%s/none", dir);
	cr_expect_eq(advise_emit(&spec, &a, path, &written, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "nothing meets every goal"), "%s", err.msg);
}
