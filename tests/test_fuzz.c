/*
 * test_fuzz.c - replays every input kept under tests/fixtures/fuzz/<target>/
 * (crashes and hangs the fuzzers found, once fixed, plus seeds) through its
 * target: a found bug stays fixed.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/targets.c"

typedef int (*target_fn)(const uint8_t *, size_t);

/* Removes the files to_file made for this process's inputs. */
static void remove_files(void)
{
	char pattern[64];
	snprintf(pattern, sizeof pattern, "/tmp/gpuplan-fuzz-%d-*", (int)getpid());
	glob_t g;
	if (glob(pattern, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
}

static size_t replay(const char *dir, target_fn fn)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "%s exists", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		cr_assert_not_null(f);
		static uint8_t buf[1 << 20];
		size_t len = fread(buf, 1, sizeof buf, f);
		fclose(f);
		fn(buf, len);
		n++;
	}
	closedir(d);
	remove_files(); /* the targets' private copies of the inputs */
	return n;
}

Test(fuzz, scenario_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/scenario", fuzz_scenario), 0);
}
Test(fuzz, csv_trace_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/trace_csv", fuzz_trace_csv), 0);
}
Test(fuzz, sweep_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/sweep", fuzz_sweep), 0);
}
Test(fuzz, azure_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/azure", fuzz_azure), 0);
}
Test(fuzz, openb_node_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/openb_nodes", fuzz_openb_nodes), 0);
}
Test(fuzz, import_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/import", fuzz_import), 0);
}
Test(fuzz, openb_pod_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/openb_pods", fuzz_openb_pods), 0);
}
Test(fuzz, history_pods_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/history_pods", fuzz_history_pods), 0);
}

Test(fuzz, kube_json_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/kube_json", fuzz_kube_json), 0);
}
Test(fuzz, prom_inputs_replay_cleanly)
{
	cr_assert_gt(replay("tests/fixtures/fuzz/prom", fuzz_prom), 0);
}
