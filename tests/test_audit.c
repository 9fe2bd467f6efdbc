/*
 * test_audit.c - hidden variants of issue 42's defects that the audit of
 * the third reliability round found open: each value the API server would
 * refuse is refused at read time at its JSON path (exit 2, -o untouched),
 * a value it accepts imports into a scenario that loads, and the store and
 * loader refuse what would hang, be lost or be replaced.
 *
 * References: Kubernetes' validation of resources and labels,
 * kubernetes/kubernetes pkg/apis/core/validation/validation.go
 * (ValidateResourceRequirements: "Limit must be set for non overcommitable
 * resources", "must be equal to <resource> limit"; ValidateLabels),
 * apimachinery pkg/api/resource/quantity.go (Value() rounds a fraction up);
 * the kubelet's admission refuses a pod its node cannot hold ("OutOf"
 * <resource>, pkg/kubelet/lifecycle/predicate.go); NVIDIA's A100 MIG
 * profiles (docs.nvidia.com/datacenter/tesla/mig-user-guide: 7 compute and
 * 8 memory slices, 3g.40gb at most 2 per GPU); SQLite's WAL and journal
 * headers (sqlite.org/walformat.html, sqlite.org/fileformat.html); the
 * HPA's sync period (kube-controller-manager
 * --horizontal-pod-autoscaler-sync-period, 15s).
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(audit, .init = scratch_make, .fini = scratch_remove, .timeout = 120);

static char out[16384];

static const char *write_file(const char *name, const char *text)
{
	static char paths[4][160];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, sizeof paths[0], "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* One node: labels and allocatable entries (each a JSON fragment). */
static const char *node_list(const char *labels, const char *alloc)
{
	static char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"kind\": \"List\", \"items\": [{\"kind\": \"Node\", \"metadata\": {\"name\": "
		 "\"n1\", \"labels\": {%s}}, \"spec\": {}, \"status\": {\"allocatable\": "
		 "{\"cpu\": \"8\", \"memory\": \"64Gi\"%s}}}]}\n",
		 labels, alloc);
	return buf;
}

#define L4 "\"nvidia.com/gpu.product\": \"NVIDIA-L4\""

/* One pod: its metadata extras, container resources, spec extras, phase. */
static const char *pod_list(const char *meta, const char *resources, const char *spec,
			    const char *phase)
{
	static char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": "
		 "\"p\", \"namespace\": \"default\"%s}, \"spec\": {\"containers\": [{\"name\": "
		 "\"c\", \"resources\": {%s}}]%s}, \"status\": {\"phase\": \"%s\"}}]}\n",
		 meta, resources, spec, phase);
	return buf;
}

/* Imports nodes and pods over an -o holding "old": the exit code, with the
 * output in out; on a refusal -o must still hold "old". */
static int import(const char *nodes, const char *pods)
{
	const char *o = write_file("o.yaml", "old\n");
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes %s --pods %s --at 2026-11-30T12:00:00Z -o %s",
		 write_file("n.json", nodes), write_file("p.json", pods), o);
	int rc = capture(cmd, out, sizeof out);
	if (rc) {
		FILE *f = fopen(o, "r");
		char old[8] = "";
		cr_assert_not_null(f);
		cr_assert_not_null(fgets(old, sizeof old, f));
		fclose(f);
		cr_assert_str_eq(old, "old\n", "-o was replaced on a refusal: %s", out);
	}
	return rc;
}

static void refused_at(const char *nodes, const char *pods, const char *path, const char *what)
{
	cr_assert_eq(import(nodes, pods), 2, "%s", out);
	cr_assert(strstr(out, path), "expected the path %s in: %s", path, out);
	cr_assert(strstr(out, what), "expected '%s' in: %s", what, out);
	cr_assert_null(strstr(out, "failed its check"), "%s", out);
}

/* MIG mixed: an A100-80GB has 7 instances of 7 compute and 8 memory slices,
 * and 3g.40gb at most twice; a layout past either surfaced only at the
 * scenario's self-check ("a MIG layout has 1 to 7 instances"). */
Test(audit, a_mig_layout_no_a100_holds_is_refused_at_its_allocatable)
{
	const char *labels =
		"\"nvidia.com/gpu.product\": \"NVIDIA-A100-SXM4-80GB\", "
		"\"nvidia.com/gpu.count\": \"2\", \"nvidia.com/mig.strategy\": \"mixed\"";
	const char *pods =
		pod_list("", "\"limits\": {\"nvidia.com/mig-1g.10gb\": \"1\"}", "", "Pending");
	const char *const too_many[] = {"6", "8", "1.5Ki", "2000"}; /* over 2 GPUs */
	for (size_t i = 0; i < sizeof too_many / sizeof *too_many; i++) {
		char alloc[128];
		snprintf(alloc, sizeof alloc, ", \"nvidia.com/mig-3g.40gb\": \"%s\"", too_many[i]);
		refused_at(node_list(labels, alloc), pods,
			   ".items[0].status.allocatable[\"nvidia.com/mig-3g.40gb\"]",
			   "allows at most 2 per GPU");
	}
	/* 1 x 3g.40gb and 5 x 1g.10gb per GPU: 8 compute slices */
	refused_at(node_list(labels, ", \"nvidia.com/mig-3g.40gb\": \"2\", "
				     "\"nvidia.com/mig-1g.10gb\": \"10\""),
		   pods, ".items[0].status.allocatable[\"nvidia.com/mig-1g.10gb\"]",
		   "6 instances of 8 compute and 9 memory slices per GPU");
	/* 2 x 3g.40gb per GPU: 6 compute, 8 memory slices, which fits */
	cr_assert_eq(import(node_list(labels, ", \"nvidia.com/mig-3g.40gb\": \"4\""),
			    pod_list("", "\"limits\": {\"nvidia.com/mig-3g.40gb\": \"1\"}", "",
				     "Pending")),
		     0, "%s", out);
}

/* The device plugin's resources are not overcommitted: a GPU request other
 * than its limit, or without one, is refused as the API server refuses it
 * (a request of 1e18 next to a limit of 1 was ignored). */
Test(audit, a_gpu_request_other_than_its_limit_is_refused_at_its_path)
{
	const char *nodes = node_list(L4, ", \"nvidia.com/gpu\": \"1\"");
	const char *const requests[] = {"1e18", "2", "1.5Ki", "0"};
	for (size_t i = 0; i < sizeof requests / sizeof *requests; i++) {
		char res[160];
		snprintf(
			res, sizeof res,
			"\"limits\": {\"nvidia.com/gpu\": \"1\"}, \"requests\": {\"nvidia.com/gpu\": "
			"\"%s\"}",
			requests[i]);
		refused_at(nodes, pod_list("", res, "", "Pending"),
			   ".items[0].spec.containers[0].resources.requests[\"nvidia.com/gpu\"]",
			   "expected the request to equal the limit, '1'");
	}
	refused_at(nodes, pod_list("", "\"requests\": {\"nvidia.com/gpu\": \"1\"}", "", "Pending"),
		   ".items[0].spec.containers[0].resources.requests[\"nvidia.com/gpu\"]",
		   "without a limit");
	/* in an init container too */
	refused_at(
		nodes,
		pod_list("", "\"limits\": {\"nvidia.com/gpu\": \"1\"}",
			 ", \"initContainers\": [{\"name\": \"i\", \"resources\": "
			 "{\"requests\": {\"nvidia.com/mig-1g.10gb\": \"3\"}}}]",
			 "Pending"),
		".items[0].spec.initContainers[0].resources.requests[\"nvidia.com/mig-1g.10gb\"]",
		"without a limit");
	/* equal, in another spelling: imported */
	cr_assert_eq(import(nodes, pod_list("",
					    "\"limits\": {\"nvidia.com/gpu\": \"1\"}, "
					    "\"requests\": {\"nvidia.com/gpu\": \"1000m\"}",
					    "", "Pending")),
		     0, "%s", out);
}

/* A running pod asking for more GPUs than its node has (1536 on an 8-GPU
 * node) failed the self-check, "no node has 1536 GPUs", located in the
 * scenario; the kubelet would have refused it, so import does, at the pod. */
Test(audit, a_bound_pod_larger_than_its_node_is_refused_at_its_node_name)
{
	const char *nodes = node_list(L4, ", \"nvidia.com/gpu\": \"4\"");
	const char *const sizes[] = {"5", "9", "1.5Ki", "2147483647"};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		char res[128];
		snprintf(res, sizeof res, "\"limits\": {\"nvidia.com/gpu\": \"%s\"}", sizes[i]);
		const char *phases[] = {"Running", "Pending"};
		for (size_t k = 0; k < 2; k++)
			refused_at(nodes, pod_list("", res, ", \"nodeName\": \"n1\"", phases[k]),
				   ".items[0].spec.nodeName", "on node n1, which has 4");
	}
	cr_assert_eq(import(nodes, pod_list("", "\"limits\": {\"nvidia.com/gpu\": \"4\"}",
					    ", \"nodeName\": \"n1\"", "Running")),
		     0, "%s", out);
}

/* A memory request under a MiB ("800m" is 0.8 bytes, "+4" four) was written
 * as a bare number the loader refuses ("1 bytes is under a MiB"); Kubernetes
 * takes it (Value() rounds up), so the scenario says bytes: "1B", "4B". */
Test(audit, a_memory_request_under_a_mib_imports_as_bytes)
{
	const char *nodes = node_list(L4, ", \"nvidia.com/gpu\": \"1\"");
	const char *const mem[][2] = {{"800m", "memory: 1B"},
				      {"+4", "memory: 4B"},
				      {"1.5Ki", "memory: 1536B"},
				      {"4.5", "memory: 5B"},
				      {"1023Ki", "memory: 1023KiB"}};
	for (size_t i = 0; i < sizeof mem / sizeof *mem; i++) {
		char res[160], cmd[256];
		snprintf(res, sizeof res,
			 "\"limits\": {\"nvidia.com/gpu\": \"1\"}, \"requests\": {\"memory\": "
			 "\"%s\"}",
			 mem[i][0]);
		cr_assert_eq(import(nodes, pod_list("", res, "", "Pending")), 0, "%s: %s",
			     mem[i][0], out);
		snprintf(cmd, sizeof cmd, "grep -c '    %s$' %s/o.yaml", mem[i][1], dir);
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s: no '%s'", mem[i][0], mem[i][1]);
	}
}

/* Labels are written into the scenario: a pod's (showback, queue-name) or
 * a node's label the API server refuses surfaced at the self-check as
 * "invalid label" in the scenario; each is refused at its JSON path. */
Test(audit, labels_the_api_server_refuses_are_refused_at_their_path)
{
	char nodes[4096];
	snprintf(nodes, sizeof nodes, "%s", node_list(L4, ", \"nvidia.com/gpu\": \"1\""));
	const char *gpu = "\"limits\": {\"nvidia.com/gpu\": \"1\"}";
	const char *const values[] = {"a\\nb",   "has space", "-lead", "trail-", "a/b",
				      "\\u00e9", "q\\\"q",    "#c",    "{flow}"};
	char meta[512], labels[512];
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		snprintf(meta, sizeof meta, ", \"labels\": {\"team\": \"%s\"}", values[i]);
		refused_at(nodes, pod_list(meta, gpu, "", "Pending"),
			   ".items[0].metadata.labels.team", "invalid label value");
		snprintf(meta, sizeof meta, ", \"labels\": {\"kueue.x-k8s.io/queue-name\": \"%s\"}",
			 values[i]);
		refused_at(nodes, pod_list(meta, gpu, "", "Pending"),
			   ".items[0].metadata.labels[\"kueue.x-k8s.io/queue-name\"]",
			   "invalid label value");
		snprintf(labels, sizeof labels, L4 ", \"zone\": \"%s\"", values[i]);
		refused_at(node_list(labels, ", \"nvidia.com/gpu\": \"1\""),
			   pod_list("", gpu, "", "Pending"), ".items[0].metadata.labels.zone",
			   "invalid label value");
		if (!strcmp(values[i], "a/b"))
			continue; /* a prefixed key */
		snprintf(meta, sizeof meta, ", \"labels\": {\"%s\": \"x\"}", values[i]);
		refused_at(nodes, pod_list(meta, gpu, "", "Pending"), ".items[0].metadata.labels",
			   "invalid label key");
	}
	/* 64 characters: one over a label value's 63 */
	snprintf(meta, sizeof meta, ", \"labels\": {\"team\": \"%064d\"}", 0);
	refused_at(nodes, pod_list(meta, gpu, "", "Pending"), ".items[0].metadata.labels.team",
		   "invalid label value");
	/* an unknown GPU product is named at its label */
	refused_at(node_list("\"nvidia.com/gpu.product\": \"NVIDIA-X1\"",
			     ", \"nvidia.com/gpu\": \"1\""),
		   pod_list("", gpu, "", "Pending"),
		   ".items[0].metadata.labels[\"nvidia.com/gpu.product\"]", "not in the catalog");
}

/* --db file://host/path made the folders file:/host/... before SQLite's
 * name was refused; merge's OUT ":memory:" wrote a file of that name and
 * "file:x" was refused as "file:x.partial-PID". */
Test(audit, a_special_database_name_is_refused_before_anything_is_made)
{
	char cmd[1024], cwd[256];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	snprintf(cmd, sizeof cmd, "bin/gpuplan run tests/fixtures/md1.yaml --quiet --db %s/r.db",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	const char *const names[] = {"file://localhost/a/b.db", "file:/x/y.db", "File:z/w.db"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(cmd, sizeof cmd,
			 "cd %s && %s/bin/gpuplan run %s/tests/fixtures/md1.yaml --quiet --db '%s'",
			 dir, cwd, cwd, names[i]);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", names[i], out);
		snprintf(cmd, sizeof cmd, "cd %s && %s/bin/gpuplan merge '%s' r.db", dir, cwd,
			 names[i]);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", names[i], out);
		cr_assert(strstr(out, names[i]) && !strstr(out, ".partial-"), "%s", out);
	}
	snprintf(cmd, sizeof cmd, "cd %s && %s/bin/gpuplan merge :memory: r.db", dir, cwd);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	struct stat sb;
	char p[256];
	snprintf(p, sizeof p, "%s/file:", dir);
	cr_assert_neq(stat(p, &sb), 0, "a folder file: was made");
	snprintf(p, sizeof p, "%s/:memory:", dir);
	cr_assert_neq(stat(p, &sb), 0, "a file :memory: was made");
}

/* A results database's write-ahead log holds runs not yet in the file:
 * import -o onto it would lose them, as onto the database itself. */
Test(audit, an_output_never_replaces_a_databases_log)
{
	char cmd[1024], p[256];
	static const unsigned char heads[3][8] = {{0x37, 0x7f, 0x06, 0x82},
						  {0x37, 0x7f, 0x06, 0x83},
						  {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}};
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/r.db-%s", dir, i == 2 ? "journal" : "wal");
		FILE *f = fopen(p, "wb");
		cr_assert_not_null(f);
		fwrite(heads[i], 1, 8, f);
		fwrite("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 1, 20, f);
		fclose(f);
		snprintf(cmd, sizeof cmd,
			 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
			 "tests/fixtures/import/pods.json -o %s",
			 p);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
		cr_assert(strstr(out, "is an SQLite database's log or journal"), "%s", out);
	}
}

/* Every table the reports read and every schema has had: a database
 * without one exits 2 as the one without timeseries does (it exited 1 from
 * halfway through the report). */
Test(audit, a_database_missing_any_table_it_always_had_exits_2)
{
	char cmd[1024], cwd[256];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	snprintf(cmd, sizeof cmd, "bin/gpuplan run tests/fixtures/md1.yaml --quiet --db %s/r.db",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	const char *const tables[] = {"requests", "allocations", "pending_reasons",
				      "metrics",  "findings",    "params"};
	const char *const reports[] = {"--openmetrics", "--opencost", "--html x.html"};
	for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
		for (size_t r = 0; r < 3; r++) {
			snprintf(
				cmd, sizeof cmd,
				"cp %s/r.db %s/t.db && sqlite3 %s/t.db 'DROP TABLE %s' && cd %s && "
				"%s/bin/gpuplan report t.db %s",
				dir, dir, dir, tables[t], dir, cwd, reports[r]);
			cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s %s: %s", tables[t],
				     reports[r], out);
			cr_assert(strstr(out, "without its ") && strstr(out, tables[t]), "%s", out);
		}
}

/* The inference autoscaler's interval had no lower bound, as
 * autoscale.scan_interval had none: at 1us an hour of one service ran for
 * minutes.  Refused under 1s at check, with the key. */
Test(audit, the_inference_autoscaler_interval_has_a_minimum)
{
	const char *const values[] = {"1us", "1ms", "999ms", "0.5s"};
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		char text[1024], cmd[256];
		snprintf(text, sizeof text,
			 "name: inf\nstart: 2026-10-27T00:00:00Z\nhorizon: 1h\n"
			 "pools: [{name: h100, nodes: 2, gpu: H100-80GB, gpus_per_node: 1}]\n"
			 "workloads:\n"
			 "  - {name: chat, kind: inference, model: llama-3-8b,\n"
			 "     replicas: {min: 1, max: 2, interval: %s, target_queue: 4},\n"
			 "     requests: {process: poisson, rate: 1/s, prompt_tokens: 500,\n"
			 "                output_tokens: 100}}\n",
			 values[i]);
		snprintf(cmd, sizeof cmd, "bin/gpuplan check %s", write_file("inf.yaml", text));
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", values[i], out);
		cr_assert(strstr(out, "inf.yaml:7:") && strstr(out, "invalid interval") &&
				  strstr(out, "at least 1s"),
			  "%s", out);
	}
}

/* A sample's timestamp is an int64 (Prometheus' text parser reads it with
 * strconv.ParseInt); one past it was taken silently, as "-" was. */
Test(audit, a_dcgm_timestamp_past_int64_is_refused_at_its_column)
{
	static const char sample[] =
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",Hostname=\"gpu-h100-1\",namespace="
		"\"serving\",pod=\"vllm-llama-70b-6d8f9b7c4d-9wq2f\"} 0.5 ";
	const char *const stamps[][2] = {
		{"9223372036854775808", "2"},     {"-9223372036854775809", "2"},
		{"99999999999999999999999", "2"}, {"9223372036854775807", "0"},
		{"-9223372036854775808", "0"},    {"00001700000000000", "0"}};
	for (size_t i = 0; i < sizeof stamps / sizeof *stamps; i++) {
		char text[512], cmd[1024];
		snprintf(text, sizeof text, "%s%s\n", sample, stamps[i][0]);
		snprintf(cmd, sizeof cmd,
			 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
			 "tests/fixtures/import/pods.json --at 2026-11-30T12:00:00Z --dcgm %s -o "
			 "%s/o.yaml",
			 write_file("d.prom", text), dir);
		int rc = capture(cmd, out, sizeof out);
		cr_assert_eq(rc, atoi(stamps[i][1]), "%s: %s", stamps[i][0], out);
		if (rc)
			cr_assert(strstr(out, "d.prom:1:123: error: expected an integer timestamp"),
				  "%s", out);
	}
}

/* A PodDisruptionBudget's name and namespace are written into the scenario
 * (pdb:); they were taken as they came, a newline and YAML included.  Now
 * checked as the API server names them, at their JSON path. */
Test(audit, a_pod_disruption_budget_is_named_as_the_api_server_names_it)
{
	const char *const names[][2] = {{"name", "a\\nb: c"},
					{"name", "UPPER"},
					{"name", ""},
					{"namespace", "serving\\n  - {name: evil}"},
					{"namespace", "a.b"}};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char text[1024], cmd[1024], path[64];
		bool is_name = !strcmp(names[i][0], "name");
		snprintf(text, sizeof text,
			 "{\"kind\": \"List\", \"items\": [{\"kind\": \"PodDisruptionBudget\", "
			 "\"metadata\": {\"name\": \"%s\", \"namespace\": \"%s\"}, \"spec\": "
			 "{\"maxUnavailable\": 1, \"selector\": {\"matchLabels\": {\"app\": "
			 "\"vllm-llama-70b\"}}}}]}\n",
			 is_name ? names[i][1] : "vllm", is_name ? "serving" : names[i][1]);
		snprintf(cmd, sizeof cmd,
			 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
			 "tests/fixtures/import/pods.json --at 2026-11-30T12:00:00Z --pdbs %s -o "
			 "%s/o.yaml",
			 write_file("pdbs.json", text), dir);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", names[i][1], out);
		snprintf(path, sizeof path, ".items[0].metadata.%s: invalid", names[i][0]);
		cr_assert(strstr(out, path), "%s", out);
	}
}

/* A node being provisioned counts as progress (issue 42), but one slower
 * than max_node_provision_time (15m by default, as Cluster Autoscaler's) is
 * given up and the scale-up retried after a backoff, forever: the run went
 * on to SCENARIO_MAX_RUN (minutes of CPU).  It stalls as work nothing can
 * start; a node that will register is still waited for. */
Test(audit, nodes_that_never_register_are_no_progress, .timeout = 60)
{
	const char *const times[] = {"20m", "9d", "30d"};
	for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
		char text[1024], cmd[1024], db[160];
		snprintf(
			text, sizeof text,
			"name: prov\nstart: 2026-10-27T00:00:00Z\npools:\n"
			"  - {name: p, nodes: 0, gpu: A100-80GB, gpus_per_node: 8,\n"
			"     autoscale: {min: 0, max: 2, provision_time: %s}}\n"
			"workloads:\n"
			"  - {name: w, count: 2, gpus: 8, duration: 1h, arrival: {at: \"12:00\"}}\n",
			times[i]);
		const char *yaml = write_file("prov.yaml", text);
		snprintf(db, sizeof db, "%s/p%zu.db", dir, i);
		snprintf(cmd, sizeof cmd, "bin/gpuplan run %s --quiet --db %s", yaml, db);
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s: %s", times[i], out);
		cr_assert_eq(
			scratch_query(db, "SELECT count(*) FROM runs WHERE status = 'stalled'"), 1,
			"%s", times[i]);
		/* with max_node_provision_time above it, both jobs run */
		snprintf(cmd, sizeof cmd,
			 "bin/gpuplan run %s --quiet --db %s --set "
			 "pools.p.autoscale.max_node_provision_time=31d",
			 yaml, db);
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s: %s", times[i], out);
		cr_assert_eq(scratch_query(db, "SELECT value FROM metrics WHERE scope = 'all' AND "
					       "name = 'jobs_completed' AND run_id = 2"),
			     2, "%s", times[i]);
	}
}
