/*
 * test_override.c - a scenario override as a typed value: made, parsed from
 * and printed to its --set text (a round trip), and applied to a scenario by
 * its key and value with the same result, params and messages as the text.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gpuplan/override.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/ytree.h"

#include <stdlib.h>

#define CAPACITY "tests/fixtures/diagnosis/capacity.yaml"

Test(override, kind_follows_the_value)
{
	struct override s = override_make("pools.h100.nodes", "3");
	struct override m =
		override_make("pools.h100.sharing", "{mode: time-slicing, replicas: 4}");
	struct override l = override_make("workloads.train.tolerations", " [{operator: Exists}]");
	cr_expect_eq(s.kind, OVERRIDE_SCALAR);
	cr_expect_eq(m.kind, OVERRIDE_MAP);
	cr_expect_eq(l.kind, OVERRIDE_LIST);
	override_free(&s);
	override_free(&m);
	override_free(&l);
	cr_expect_null(s.key);
}

Test(override, makef_sizes_the_value_to_what_it_carries)
{
	char name[254];
	memset(name, 'q', 253);
	name[253] = '\0';
	struct override o =
		override_makef("queues.x.quota", "{\"nvidia.com/gpu\": %d, x: %s}", 16, name);
	cr_expect_eq(strlen(o.value), strlen("{\"nvidia.com/gpu\": 16, x: }") + 253);
	cr_expect_eq(o.kind, OVERRIDE_MAP);
	override_free(&o);
}

/* The --set text back to the same override, and the override to the same text. */
Test(override, round_trips_through_its_set_text)
{
	static const char *const texts[] = {
		"pools.h100.nodes=3",
		"workloads.train.node_selector={nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}",
		"workloads.embed-bge.tolerations=[{key: nvidia.com/gpu, operator: Exists}]",
		"pools.+={name: a100-shared, nodes: 1, gpu: A100-80GB}",
		"workloads.train.node_selector.a=b=c",
		"scheduler.gpu_policy=fgd",
	};
	static const char *const keys[] = {"pools.h100.nodes",
					   "workloads.train.node_selector",
					   "workloads.embed-bge.tolerations",
					   "pools.+",
					   "workloads.train.node_selector.a",
					   "scheduler.gpu_policy"};
	static const enum override_kind kinds[] = {OVERRIDE_SCALAR, OVERRIDE_MAP,
						   OVERRIDE_LIST,   OVERRIDE_MAP,
						   OVERRIDE_SCALAR, OVERRIDE_SCALAR};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		struct override o;
		struct gp_err err GP_ERR_SCOPE = {0};
		cr_assert_eq(override_parse(texts[i], &o, &err), GP_OK, "%s", err.msg);
		cr_expect_str_eq(o.key, keys[i]);
		cr_expect_str_eq(o.value, texts[i] + strlen(keys[i]) + 1);
		cr_expect_eq(o.kind, kinds[i], "%s", texts[i]);
		char *t = override_text(&o);
		cr_expect_str_eq(t, texts[i]);
		struct override c = override_copy(&o);
		cr_expect(override_same_key(&c, &o));
		cr_expect_neq(c.key, o.key);
		free(t);
		override_free(&c);
		override_free(&o);
	}
}

Test(override, text_without_a_key_is_refused)
{
	struct override o;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(override_parse("pools.h100.nodes", &o, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "expected KEY=VALUE"), "%s", err.msg);
	cr_expect_null(o.key);
	cr_expect_eq(override_parse("=3", &o, &err), GP_EINPUT);
}

/* A fix's overrides are typed, and its --set text is made from them. */
Test(override, a_fix_holds_typed_overrides_and_shows_them_as_set_text)
{
	struct finding f = {0};
	struct finding_fix *x = finding_add_fix(&f, "time-slicing x4 on h100");
	finding_fix_add(x, override_setf("pools.%s.sharing={mode: %s, replicas: %d}", "h100",
					 "time-slicing", 4));
	finding_fix_add(x, override_make("pools.h100.nodes", "2"));
	finding_fix_add(NULL, override_make("freed", "too")); /* no leak under valgrind */
	cr_assert_eq(x->n_sets, 2);
	cr_expect_str_eq(x->sets[0].key, "pools.h100.sharing");
	cr_expect_eq(x->sets[0].kind, OVERRIDE_MAP);
	char *t = finding_fix_text(x);
	cr_expect_str_eq(t, "--set 'pools.h100.sharing={mode: time-slicing, replicas: 4}' "
			    "--set 'pools.h100.nodes=2'");
	free(t);
	struct finding g;
	finding_copy(&g, &f);
	cr_expect_str_eq(g.fixes[0].sets[1].value, "2");
	cr_expect_neq(g.fixes[0].sets[1].value, f.fixes[0].sets[1].value);
	finding_free(&f);
	finding_free(&g);
}

/* The typed override applied to a scenario gives what its --set text gives:
 * the value and the params row. */
Test(override, applied_to_a_scenario_as_its_set_text_is)
{
	const char *text[] = {"pools.h100.nodes=3", "workloads.train.count=4"};
	struct override ov[] = {override_make("pools.h100.nodes", "3"),
				override_make("workloads.train.count", "4")};
	struct scenario *a = NULL, *b = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(CAPACITY, text, 2, &a, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(scenario_load_overrides(CAPACITY, NULL, 0, ov, 2, &b, &err), GP_OK, "%s",
		     err.msg);
	cr_expect_eq(b->pools[0].nodes, 3);
	cr_expect_eq(a->pools[0].nodes, b->pools[0].nodes);
	cr_expect_eq(a->workloads[0].count, b->workloads[0].count);
	cr_assert_eq(a->n_params, b->n_params);
	for (size_t i = 0; i < a->n_params; i++) {
		cr_expect_str_eq(a->params[i].key, b->params[i].key);
		cr_expect_str_eq(a->params[i].value, b->params[i].value);
	}
	scenario_free(a);
	scenario_free(b);
	for (size_t i = 0; i < 2; i++)
		override_free(&ov[i]);
}

/* Text first, then the typed ones: a later override of a key wins and is
 * the one params keep. */
Test(override, typed_ones_go_after_the_text_ones)
{
	const char *text[] = {"pools.h100.nodes=3"};
	struct override ov = override_make("pools.h100.nodes", "5");
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load_overrides(CAPACITY, text, 1, &ov, 1, &sc, &err), GP_OK, "%s",
		     err.msg);
	cr_expect_eq(sc->pools[0].nodes, 5);
	cr_assert_eq(sc->n_params, 1);
	cr_expect_str_eq(sc->params[0].value, "5");
	scenario_free(sc);
	override_free(&ov);
}

/* An override the scenario cannot take fails as its text would, with the
 * same located message. */
Test(override, a_bad_one_fails_with_the_message_of_its_text)
{
	const char *text[] = {"pools.a100.nodes=3"};
	struct override ov = override_make("pools.a100.nodes", "3");
	struct scenario *sc = NULL;
	struct gp_err e1 GP_ERR_SCOPE = {0};
	struct gp_err e2 GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(CAPACITY, text, 1, &sc, &e1), GP_EINPUT);
	cr_assert_eq(scenario_load_overrides(CAPACITY, NULL, 0, &ov, 1, &sc, &e2), GP_EINPUT);
	cr_expect_str_eq(e1.msg, e2.msg);
	cr_expect(strstr(e2.msg, "--set pools.a100.nodes=3"), "%s", e2.msg);
	override_free(&ov);
}

/* ytree_set_key is ytree_set without the split, a long value cut the same
 * way in the label. */
Test(override, tree_takes_a_key_and_value_as_it_takes_the_text)
{
	const char *doc = "a: {b: 1}\n";
	struct ytree *t1 = NULL, *t2 = NULL;
	struct gp_err e1 GP_ERR_SCOPE = {0};
	struct gp_err e2 GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_parse("s.yaml", doc, strlen(doc), &t1, &e1), GP_OK);
	cr_assert_eq(ytree_parse("s.yaml", doc, strlen(doc), &t2, &e2), GP_OK);
	char big[400];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	char text[420];
	snprintf(text, sizeof text, "a.b={%s", big);
	char value[410];
	snprintf(value, sizeof value, "{%s", big);
	cr_assert_eq(ytree_set(t1, text, &e1), GP_EINPUT);
	cr_assert_eq(ytree_set_key(t2, "a.b", value, &e2), GP_EINPUT);
	cr_expect_str_eq(e1.msg, e2.msg);
	cr_assert_eq(ytree_set_key(t2, "a.b", "2", &e2), GP_OK);
	cr_expect_str_eq(ynode_get(t2->root, "a")->items[0]->value, "2");
	ytree_free(t1);
	ytree_free(t2);
}

/* A detector's fix: the format's first '=' parts key from value, each
 * formatted on its own (a value may hold '=' of its own). */
Test(override, setf_formats_key_and_value_apart)
{
	struct override o = override_setf("workloads.%s.node_selector.%s=%s", "train",
					  "nvidia.com/gpu.product", "a=b");
	cr_expect_str_eq(o.key, "workloads.train.node_selector.nvidia.com/gpu.product");
	cr_expect_str_eq(o.value, "a=b");
	cr_expect_eq(o.kind, OVERRIDE_SCALAR);
	override_free(&o);
	o = override_setf("scheduler.gpu_policy=%s", "fgd");
	cr_expect_str_eq(o.key, "scheduler.gpu_policy");
	cr_expect_str_eq(o.value, "fgd");
	override_free(&o);
	o = override_setf("pools.%s.sharing={mode: %s, replicas: %d}", "a100", "mps", 4);
	char *t = override_text(&o);
	cr_expect_str_eq(t, "pools.a100.sharing={mode: mps, replicas: 4}");
	cr_expect_eq(o.kind, OVERRIDE_MAP);
	free(t);
	override_free(&o);
}

Test(override, a_key_sets_a_field_by_its_last_step)
{
	struct override o = override_make("workloads.train.gpu_spec", "[H100-80GB]");
	cr_expect(override_sets_field(&o, "gpu_spec"));
	cr_expect(!override_sets_field(&o, "spec"), "a whole step, not a tail of one");
	cr_expect(!override_sets_field(&o, "train"));
	override_free(&o);
	o = override_make("gpu_spec", "[L4]");
	cr_expect(!override_sets_field(&o, "gpu_spec"), "no step before it");
	override_free(&o);
}
