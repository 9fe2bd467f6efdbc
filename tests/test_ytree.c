/*
 * test_ytree.c - the located YAML tree: parsing, locations, rejected shapes,
 * --set overrides and "did you mean" suggestions.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gpuplan/ytree.h"

static struct ytree *parse(const char *text)
{
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = ytree_parse("s.yaml", text, strlen(text), &t, &err);
	cr_assert_eq(rc, GP_OK, "parse failed: %s", err.msg);
	cr_assert_not_null(t);
	return t;
}

/* Parses text, expecting failure with exactly the message msg. */
static void parse_fails(const char *text, const char *msg)
{
	struct ytree *t = (struct ytree *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = ytree_parse("s.yaml", text, strlen(text), &t, &err);
	cr_assert_eq(rc, GP_EINPUT, "expected an error for %s", text);
	cr_assert_null(t);
	cr_assert_str_eq(err.msg, msg);
}

/* Applies one --set to text, expecting failure with exactly msg. */
static void set_fails(const char *text, const char *assignment, const char *msg)
{
	struct ytree *t = parse(text);
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_set(t, assignment, &err), GP_EINPUT, "expected an error for %s",
		     assignment);
	cr_assert_str_eq(err.msg, msg);
	ytree_free(t);
}

static const struct ynode *path(const struct ynode *n, const char *a, const char *b)
{
	n = ynode_get(n, a);
	return b && n ? ynode_get(n, b) : n;
}

Test(ytree, scalars_maps_and_lists_keep_their_locations)
{
	struct ytree *t = parse("name: x\npools:\n  - name: batch\n    nodes: 3\n");
	const struct ynode *root = t->root;
	cr_assert_eq(root->kind, YNODE_MAP);
	cr_assert_eq(root->n, 2);
	cr_assert_str_eq(root->keys[1], "pools");
	cr_assert_eq(root->key_locs[1].line, 2);
	cr_assert_eq(root->key_locs[1].col, 1);
	const struct ynode *pools = ynode_get(root, "pools");
	cr_assert_eq(pools->kind, YNODE_SEQ);
	cr_assert_eq(pools->n, 1);
	const struct ynode *nodes = ynode_get(pools->items[0], "nodes");
	cr_assert_str_eq(nodes->value, "3");
	cr_assert_str_eq(nodes->loc.file, "s.yaml");
	cr_assert_eq(nodes->loc.line, 4);
	cr_assert_eq(nodes->loc.col, 12);
	cr_assert_eq(pools->items[0]->loc.line, 3);
	cr_assert_eq(pools->items[0]->loc.col, 5);
	ytree_free(t);
}

Test(ytree, quoting_is_kept)
{
	struct ytree *t = parse("a: \"12:00\"\nb: 12:00\nc: '7'\nd: |\n  text\n");
	cr_assert(ynode_get(t->root, "a")->quoted);
	cr_assert_str_eq(ynode_get(t->root, "a")->value, "12:00");
	cr_assert_not(ynode_get(t->root, "b")->quoted);
	cr_assert_str_eq(ynode_get(t->root, "b")->value, "12:00");
	cr_assert(ynode_get(t->root, "c")->quoted);
	cr_assert(ynode_get(t->root, "d")->quoted);
	ytree_free(t);
}

Test(ytree, empty_values_are_empty_plain_scalars)
{
	struct ytree *t = parse("a:\nb: ~\n");
	cr_assert_eq(ynode_get(t->root, "a")->kind, YNODE_SCALAR);
	cr_assert_str_eq(ynode_get(t->root, "a")->value, "");
	cr_assert_not(ynode_get(t->root, "a")->quoted);
	cr_assert_str_eq(ynode_get(t->root, "b")->value, "~");
	ytree_free(t);
}

Test(ytree, aliases_are_resolved_into_copies)
{
	struct ytree *t = parse("base: &b {gpu: A100-80GB, nodes: 2}\nother: *b\n");
	const struct ynode *other = ynode_get(t->root, "other");
	cr_assert_eq(other->kind, YNODE_MAP);
	cr_assert_str_eq(ynode_get(other, "gpu")->value, "A100-80GB");
	cr_assert_neq(other, ynode_get(t->root, "base"));
	ytree_free(t);
}

Test(ytree, ynode_get_on_non_maps_is_null)
{
	struct ytree *t = parse("a: [1, 2]\n");
	cr_assert_null(ynode_get(ynode_get(t->root, "a"), "x"));
	cr_assert_null(ynode_get(NULL, "x"));
	cr_assert_null(ynode_get(t->root, "missing"));
	ytree_free(t);
}

Test(ytree, duplicate_keys_are_rejected_at_the_second)
{
	parse_fails("name: a\nseed: 1\nname: b\n",
		    "s.yaml:3:1: error: duplicate key 'name' (first defined at line 1, column 1)");
	parse_fails(
		"pools:\n  - {name: a, nodes: 1, nodes: 2}\n",
		"s.yaml:2:25: error: duplicate key 'nodes' (first defined at line 2, column 15)");
}

Test(ytree, non_scalar_keys_are_rejected)
{
	parse_fails("? [a, b]\n: 1\n",
		    "s.yaml:1:3: error: a key must be a scalar, not a list; expected KEY: VALUE");
	parse_fails("{a: 1}: 2\n",
		    "s.yaml:1:1: error: a key must be a scalar, not a map; expected KEY: VALUE");
}

Test(ytree, placeholder_tags_keep_value_source_and_line_comment)
{
	struct ytree *t = parse("a: !placeholder 6h   # no finished sibling\n"
				"b: !placeholder {dist: fixed, mean: 6h}\n"
				"c: !placeholder  # guessed\n  x: 1\n  y: 2 # inner\n"
				"d: 7 # learned\n"
				"e: !placeholder \"a # b\"\n"
				"f: !!str 12\n");
	const struct ynode *a = ynode_get(t->root, "a");
	cr_assert(a->placeholder);
	cr_assert_str_eq(a->value, "6h");
	cr_assert_str_eq(a->source, "6h");
	cr_assert_str_eq(a->note, "no finished sibling");
	const struct ynode *b = ynode_get(t->root, "b");
	cr_assert(b->placeholder);
	cr_assert_eq(b->kind, YNODE_MAP);
	cr_assert_str_eq(ynode_get(b, "mean")->value, "6h");
	cr_assert_str_eq(b->source, "{dist: fixed, mean: 6h}");
	cr_assert_null(b->note);
	const struct ynode *c = ynode_get(t->root, "c");
	cr_assert(c->placeholder);
	cr_assert_str_eq(c->note, "guessed");
	cr_assert_not(ynode_get(c, "x")->placeholder);
	cr_assert_not(ynode_get(t->root, "d")->placeholder);
	cr_assert_null(ynode_get(t->root, "d")->note);
	const struct ynode *e = ynode_get(t->root, "e");
	cr_assert_str_eq(e->value, "a # b");
	cr_assert_null(e->note); /* a '#' inside quotes is not a comment */
	cr_assert_not(ynode_get(t->root, "f")->placeholder);
	ytree_free(t);
}

Test(ytree, unknown_local_tags_are_rejected)
{
	parse_fails("a: !learned 6h\n", "s.yaml:1:4: error: unknown tag '!learned'; expected "
					"!placeholder (a value that was not learned) or none");
}

Test(ytree, a_set_value_may_be_a_placeholder)
{
	struct ytree *t = parse("a: 1\n");
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_set(t, "a=!placeholder 2", &err), GP_OK, "%s", err.msg);
	cr_assert(ynode_get(t->root, "a")->placeholder);
	cr_assert_str_eq(ynode_get(t->root, "a")->value, "2");
	cr_assert_str_eq(ynode_get(t->root, "a")->source, "2");
	ytree_free(t);
}

Test(ytree, a_second_document_is_rejected)
{
	parse_fails("name: a\n---\nname: b\n",
		    "s.yaml:2:1: error: a second YAML document starts here; expected one document");
}

Test(ytree, an_empty_document_is_rejected)
{
	parse_fails("# nothing\n", "s.yaml:1:1: error: the document is empty; expected a YAML map");
}

Test(ytree, syntax_errors_are_located)
{
	parse_fails("pools: [a, b\nname: x\n",
		    "s.yaml:2:5: error: did not find expected ',' or ']' (while parsing a flow "
		    "sequence at line 1, column 8)");
	parse_fails("a: 1\n  b: 2\n", "s.yaml:2:4: error: mapping values are not allowed in this "
				      "context");
	parse_fails("a: *nope\n", "s.yaml:1:4: error: found undefined alias");
	parse_fails("a: \"\xff\"\n",
		    "s.yaml:1:5: error: invalid leading UTF-8 octet; expected UTF-8 "
		    "text");
}

/* Whether a and b are the same tree: kinds, text, keys, flags, locations. */
static void same_tree(const struct ynode *a, const struct ynode *b)
{
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->loc.line, b->loc.line);
	cr_assert_eq(a->loc.col, b->loc.col);
	cr_assert_eq(a->quoted, b->quoted);
	cr_assert_eq(a->placeholder, b->placeholder);
	cr_assert_str_eq(a->value ? a->value : "-", b->value ? b->value : "-");
	cr_assert_str_eq(a->source ? a->source : "-", b->source ? b->source : "-");
	cr_assert_str_eq(a->note ? a->note : "-", b->note ? b->note : "-");
	cr_assert_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (a->kind == YNODE_MAP) {
			cr_assert_str_eq(a->keys[i], b->keys[i]);
			cr_assert_eq(a->key_locs[i].line, b->key_locs[i].line);
			cr_assert_eq(a->key_locs[i].col, b->key_locs[i].col);
		}
		same_tree(a->items[i], b->items[i]);
	}
}

/* A document without anchors is built from the event stream in one pass; one
 * with an anchor goes through libyaml's document.  An unused anchor on the
 * last line changes nothing else, so both paths must give the same tree. */
Test(ytree, the_one_pass_tree_is_the_document_tree)
{
	const char *body = "name: x  # the name\n"
			   "pools:\n  - {name: a, nodes: 3, labels: {\"k\": 'v'}}\n"
			   "  - name: b\n    taints: [x, [1, 2], {}]\n"
			   "w: !placeholder\n  - 1\n  - !placeholder 2  # guessed\n"
			   "m: !placeholder {a: 1}  # why\n"
			   "s: |\n  block\n  text\n"
			   "e:\n"
			   "t: !!str 12\n"
			   "z: 1\n";
	char anchored[1024];
	snprintf(anchored, sizeof anchored, "%sy: &unused 2\n", body);
	char plain[1024];
	snprintf(plain, sizeof plain, "%sy: 2\n", body);
	struct ytree *a = parse(plain), *b = parse(anchored);
	same_tree(a->root, b->root);
	ytree_free(a);
	ytree_free(b);
}

/* The order of errors is the document path's: the first document's syntax
 * error before what the copy refuses (a duplicate key earlier in the text),
 * which comes before the second document's syntax error. */
Test(ytree, errors_keep_their_order_in_one_pass)
{
	parse_fails("a: 1\na: 2\nb: [1\n",
		    "s.yaml:4:1: error: did not find expected ',' or ']' (while parsing a flow "
		    "sequence at line 3, column 4)");
	parse_fails("a: 1\na: 2\n---\nb: [1\n",
		    "s.yaml:2:1: error: duplicate key 'a' (first defined at line 1, column 1)");
	parse_fails("a: !foo {b: 1, b: 2}\n",
		    "s.yaml:1:16: error: duplicate key 'b' (first defined at line 1, column 10)");
	parse_fails("a: 1\n---\nb: [1\n",
		    "s.yaml:4:1: error: did not find expected ',' or ']' (while parsing a flow "
		    "sequence at line 3, column 4)");
	parse_fails("a: [1, \"x\\0y\"]\n",
		    "s.yaml:1:8: error: a NUL character (\\0) in a value; expected text without "
		    "one");
	parse_fails("? [a]\n: 1\n",
		    "s.yaml:1:3: error: a key must be a scalar, not a list; expected KEY: VALUE");
}

Test(ytree, alias_bombs_are_refused)
{
	const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			   "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			   "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			   "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_parse("s.yaml", bomb, strlen(bomb), &t, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "expands to more than"), "%s", err.msg);
}

Test(ytree, deep_nesting_is_refused)
{
	char text[1024];
	size_t n = 0;
	for (int i = 0; i < 200; i++)
		text[n++] = '[';
	for (int i = 0; i < 200; i++)
		text[n++] = ']';
	text[n] = '\0';
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_parse("s.yaml", text, n, &t, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "nesting deeper than 128 levels"), "%s", err.msg);
}

Test(ytree, load_reports_unreadable_files)
{
	struct ytree *t = (struct ytree *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_load("tests/fixtures/no-such-file.yaml", &t, &err), GP_EINPUT);
	cr_assert_null(t);
	cr_assert_str_eq(err.msg, "tests/fixtures/no-such-file.yaml: error: cannot read: No such "
				  "file or directory");
}

Test(ytree, load_reads_a_file)
{
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_load("tests/fixtures/eval-window.yaml", &t, &err), GP_OK, "%s", err.msg);
	cr_assert_str_eq(ynode_get(t->root, "name")->value, "eval-window");
	cr_assert_str_eq(ynode_get(t->root, "name")->loc.file, "tests/fixtures/eval-window.yaml");
	ytree_free(t);
}

/* --- --set ------------------------------------------------------------------ */

static const char *const doc = "name: x\n"
			       "pools:\n"
			       "  - name: batch\n"
			       "    nodes: 1\n"
			       "  - name: online\n"
			       "    nodes: 2\n";

static struct ytree *set_ok(const char *assignment)
{
	struct ytree *t = parse(doc);
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_set(t, assignment, &err), GP_OK, "%s", err.msg);
	return t;
}

Test(ytree_set, list_items_by_name)
{
	struct ytree *t = set_ok("pools.online.nodes=5");
	const struct ynode *pools = ynode_get(t->root, "pools");
	const struct ynode *nodes = ynode_get(pools->items[1], "nodes");
	cr_assert_str_eq(nodes->value, "5");
	cr_assert_str_eq(nodes->loc.file, "--set pools.online.nodes=5");
	cr_assert_eq(nodes->loc.line, 1);
	cr_assert_eq(nodes->loc.col, 20);
	cr_assert_str_eq(ynode_get(pools->items[0], "nodes")->value, "1");
	ytree_free(t);
}

/* A key with dots, as Kubernetes resource names have, is one step in double
 * quotes (a review could not --vary a Kueue quota of nvidia.com/gpu). */
Test(ytree_set, a_quoted_step_may_hold_dots)
{
	struct ytree *t = set_ok("quota.\"nvidia.com/gpu\"=8");
	const struct ynode *q = ynode_get(t->root, "quota");
	cr_assert_not_null(q);
	cr_assert_eq(q->n, 1);
	cr_assert_str_eq(q->keys[0], "nvidia.com/gpu");
	cr_assert_str_eq(q->items[0]->value, "8");
	ytree_free(t);
	set_fails(doc, "quota.\"nvidia.com/gpu=8",
		  "--set quota.\"nvidia.com/gpu=8:1:7: error: empty, overlong or unclosed step in "
		  "'quota.\"nvidia.com/gpu'; expected a dotted path like pools.batch.nodes (a step "
		  "with dots in double quotes: quota.\"nvidia.com/gpu\")");
}

Test(ytree_set, list_items_by_index)
{
	struct ytree *t = set_ok("pools.0.nodes=7");
	cr_assert_str_eq(ynode_get(ynode_get(t->root, "pools")->items[0], "nodes")->value, "7");
	ytree_free(t);
}

Test(ytree_set, top_level_scalars)
{
	struct ytree *t = set_ok("seed=42");
	const struct ynode *seed = ynode_get(t->root, "seed");
	cr_assert_str_eq(seed->value, "42");
	cr_assert_eq(seed->loc.col, 6);
	cr_assert_str_eq(t->root->keys[t->root->n - 1], "seed");
	cr_assert_eq(t->root->key_locs[t->root->n - 1].col, 1);
	ytree_free(t);
}

Test(ytree_set, missing_map_keys_are_created)
{
	struct ytree *t = set_ok("scheduler.order=edf");
	const struct ynode *order = path(t->root, "scheduler", "order");
	cr_assert_not_null(order);
	cr_assert_str_eq(order->value, "edf");
	ytree_free(t);
	t = set_ok("pools.batch.nodse=3");
	const struct ynode *batch = ynode_get(t->root, "pools")->items[0];
	cr_assert_str_eq(ynode_get(batch, "nodse")->value, "3");
	cr_assert_eq(batch->key_locs[batch->n - 1].col, 13);
	ytree_free(t);
}

Test(ytree_set, flow_values_set_lists_and_maps)
{
	struct ytree *t = set_ok("pools.batch.windows=[{from: \"12:00\", to: \"13:00\"}]");
	const struct ynode *w = ynode_get(ynode_get(t->root, "pools")->items[0], "windows");
	cr_assert_eq(w->kind, YNODE_SEQ);
	cr_assert_eq(w->n, 1);
	const struct ynode *from = ynode_get(w->items[0], "from");
	cr_assert_str_eq(from->value, "12:00");
	cr_assert(from->quoted);
	cr_assert_eq(from->loc.col, 29);
	cr_assert_eq(w->loc.col, 21);
	ytree_free(t);
}

Test(ytree_set, a_value_replaces_a_whole_subtree)
{
	struct ytree *t = set_ok("pools.batch={name: batch, nodes: 9}");
	const struct ynode *batch = ynode_get(t->root, "pools")->items[0];
	cr_assert_eq(batch->n, 2);
	cr_assert_str_eq(ynode_get(batch, "nodes")->value, "9");
	ytree_free(t);
}

Test(ytree_set, quoted_and_empty_values)
{
	struct ytree *t = set_ok("name=\"a b\"");
	cr_assert_str_eq(ynode_get(t->root, "name")->value, "a b");
	cr_assert(ynode_get(t->root, "name")->quoted);
	ytree_free(t);
	t = set_ok("name=");
	cr_assert_str_eq(ynode_get(t->root, "name")->value, "");
	cr_assert_not(ynode_get(t->root, "name")->quoted);
	ytree_free(t);
}

Test(ytree_set, later_sets_override_earlier_ones)
{
	struct ytree *t = set_ok("seed=1");
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_set(t, "seed=2", &err), GP_OK);
	cr_assert_str_eq(ynode_get(t->root, "seed")->value, "2");
	ytree_free(t);
}

Test(ytree_set, errors)
{
	set_fails(
		doc, "pools.batch.nodes",
		"--set pools.batch.nodes:1:1: error: expected KEY=VALUE, like pools.batch.nodes=3");
	set_fails(doc, "=3",
		  "--set =3:1:1: error: empty key before '='; expected KEY=VALUE, like "
		  "pools.batch.nodes=3");
	set_fails(doc, "pools..nodes=3",
		  "--set pools..nodes=3:1:7: error: empty, overlong or unclosed step in "
		  "'pools..nodes'; expected a dotted path like pools.batch.nodes (a step with dots "
		  "in double quotes: quota.\"nvidia.com/gpu\")");
	set_fails(
		doc, "pools.btch.nodes=3",
		"--set pools.btch.nodes=3:1:7: error: no item named 'btch' in pools; did you mean "
		"'batch'?");
	set_fails(
		doc, "pools.gpu.nodes=3",
		"--set pools.gpu.nodes=3:1:7: error: no item named 'gpu' in pools; expected one of "
		"batch, online");
	set_fails(doc, "pools.5.nodes=3",
		  "--set pools.5.nodes=3:1:7: error: no item 5 in pools; it has 2 items (indexes "
		  "from 0)");
	set_fails(
		doc, "name.first=3",
		"--set name.first=3:1:6: error: name is a scalar, so it has no 'first'; expected a "
		"path through maps and lists");
	set_fails(
		doc, "pools.batch.nodes.x=3",
		"--set pools.batch.nodes.x=3:1:19: error: pools.batch.nodes is a scalar, so it has "
		"no 'x'; expected a path through maps and lists");
	set_fails(
		doc, "pools.batch.windows=[{from: 1",
		"--set pools.batch.windows=[{from: 1:1:30: error: did not find expected ',' or '}' "
		"(while parsing a flow mapping at line 1, column 22)");
	set_fails(
		doc, "seed=1\n---\n2",
		"--set seed=1\n---\n2:2:1: error: a second YAML document starts here; expected one "
		"document");
}

/* --- did you mean --------------------------------------------------------------- */

Test(ytree_closest, finds_near_words_only)
{
	const char *const keys[] = {"name", "nodes", "gpu", "gpus_per_node", "windows"};
	cr_assert_str_eq(ytree_closest("nodse", keys, 5), "nodes");
	cr_assert_str_eq(ytree_closest("gpus_per_nod", keys, 5), "gpus_per_node");
	cr_assert_str_eq(ytree_closest("window", keys, 5), "windows");
	cr_assert_str_eq(ytree_closest("nmae", keys, 5), "name");
	cr_assert_null(ytree_closest("price", keys, 5));
	cr_assert_null(ytree_closest("x", keys, 0));
}

Test(ytree_closest, ignores_case)
{
	const char *const s[] = {"MostAllocated", "LeastAllocated"};
	cr_assert_str_eq(ytree_closest("mostallocated", s, 2), "MostAllocated");
	cr_assert_str_eq(ytree_closest("leastalocated", s, 2), "LeastAllocated");
}

Test(ytree_closest, allows_more_edits_for_longer_words)
{
	const char *const s[] = {"borrowing_limit"};
	cr_assert_str_eq(ytree_closest("borowing_limt", s, 1), "borrowing_limit");
	cr_assert_str_eq(ytree_closest("brrowin_limt", s, 1), "borrowing_limit");
	cr_assert_null(ytree_closest("limit", s, 1));
}

/* A last step "+" appends the value to a list (advise adds a pool so). */
Test(ytree_set, a_plus_step_appends_to_a_list)
{
	struct ytree *t = set_ok("pools.+={name: shared, nodes: 1}");
	const struct ynode *pools = ynode_get(t->root, "pools");
	cr_assert_eq(pools->n, 3);
	cr_expect_str_eq(ynode_get(pools->items[2], "name")->value, "shared");
	cr_expect_str_eq(ynode_get(pools->items[2], "nodes")->value, "1");
	cr_expect_str_eq(ynode_get(pools->items[1], "name")->value, "online", "the others kept");
	ytree_free(t);
}

/* --- JSON (ytree_json.c) ------------------------------------------------------ */

static struct ytree *json(const char *text, const char *const *skip)
{
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = ytree_parse_json("d.json", text, strlen(text), skip, &t, &err);
	cr_assert_eq(rc, GP_OK, "parse failed: %s", err.msg);
	return t;
}

static void json_fails(const char *text, const char *msg)
{
	struct ytree *t = (struct ytree *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_parse_json("d.json", text, strlen(text), NULL, &t, &err), GP_EINPUT,
		     "expected an error for %s", text);
	cr_assert_null(t);
	cr_assert_str_eq(err.msg, msg);
}

/* The tree the one-pass reader builds is the one libyaml built: the same
 * kinds, values, quoting and locations (columns in characters). */
Test(ytree_json, reads_what_libyaml_read_with_the_same_locations)
{
	const char *text = "{\"a\": [1, -2.5e3, true, null],\n"
			   " \"\xc3\xa9\": {\"k\": \"v\\n\\u00e9\"}, \"z\": \"\"}";
	struct ytree *j = json(text, NULL), *y = parse(text);
	const struct ynode *a = ynode_get(j->root, "a"), *ya = ynode_get(y->root, "a");
	cr_assert_eq(a->kind, YNODE_SEQ);
	cr_assert_eq(a->n, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_str_eq(a->items[i]->value, ya->items[i]->value);
		cr_assert_eq(a->items[i]->quoted, ya->items[i]->quoted);
		cr_assert_eq(a->items[i]->loc.line, ya->items[i]->loc.line);
		cr_assert_eq(a->items[i]->loc.col, ya->items[i]->loc.col, "%zu: %d %d", i,
			     a->items[i]->loc.col, ya->items[i]->loc.col);
	}
	const struct ynode *k = path(j->root, "\xc3\xa9", "k"),
			   *yk = path(y->root, "\xc3\xa9", "k");
	cr_assert_str_eq(k->value, "v\n\xc3\xa9");
	cr_assert_str_eq(k->value, yk->value);
	cr_assert(k->quoted);
	cr_assert_eq(k->loc.line, 2);
	cr_assert_eq(k->loc.col, yk->loc.col);
	cr_assert_eq(k->loc.col, 13);
	cr_assert_str_eq(ynode_get(j->root, "z")->value, "");
	ytree_free(j);
	ytree_free(y);
	/* a UTF-16 surrogate pair, which libyaml refused */
	j = json("[\"\\ud83d\\ude00\"]", NULL);
	cr_assert_str_eq(j->root->items[0]->value, "\xf0\x9f\x98\x80");
	ytree_free(j);
}

Test(ytree_json, refuses_what_is_not_json_at_its_line_and_column)
{
	json_fails("{\"a\": 1,\n \"a\": 2}",
		   "d.json:2:2: error: duplicate key 'a' (first defined at line 1, column 2)");
	json_fails("{\"a\": tru}", "d.json:1:7: error: expected a JSON value (an object, a list, a "
				   "string in double quotes, a number, true, false or null)");
	json_fails("{\"a\": 01}", "d.json:1:7: error: expected a JSON value (an object, a list, a "
				  "string in double quotes, a number, true, false or null)");
	json_fails("[1 2]", "d.json:1:4: error: expected ',' or ']' after an item");
	json_fails("{\"a\" 1}", "d.json:1:6: error: expected ':' after a member name");
	json_fails("{a: 1}", "d.json:1:2: error: expected a member name in double quotes");
	json_fails(
		"[\"a\\u0000\"]",
		"d.json:1:4: error: a NUL character (\\0) in a value; expected text without one");
	json_fails("[\"\\ud800x\"]", "d.json:1:3: error: a lone UTF-16 surrogate; expected a pair "
				     "(\\uD800-\\uDBFF then \\uDC00-\\uDFFF)");
	json_fails("[\"\xff\"]", "d.json:1:3: error: invalid UTF-8; expected UTF-8 text");
	json_fails("[\"a\tb\"]", "d.json:1:4: error: a control character in a string; expected it "
				 "escaped (\\n, \\t, \\u00XX)");
	json_fails("[\"abc",
		   "d.json:1:2: error: a string without its closing quote; expected '\"'");
	json_fails("{} {}",
		   "d.json:1:4: error: text after the JSON value; expected one value per file");
	json_fails("[", "d.json:1:2: error: the text ends; expected a value");
	char deep[300] = "";
	for (int i = 0; i < 200; i++)
		strcat(deep, "[");
	json_fails(deep, "d.json:1:129: error: nesting deeper than 128 levels; expected a flatter "
			 "document");
}

/* kubectl's dumps hold what import never reads (node images, probes, env):
 * skipped members are read for their syntax and left out; a comma before
 * the end is YAML's flow syntax, which the files were read with before. */
Test(ytree_json, skipped_members_are_checked_and_left_out)
{
	static const char *const skip[] = {"images", "env", NULL};
	struct ytree *t =
		json("{\"images\": [{\"names\": [\"x\"]}], \"env\": {}, \"name\": \"n\",}", skip);
	cr_assert_eq(t->root->n, 1);
	cr_assert_str_eq(ynode_get(t->root, "name")->value, "n");
	ytree_free(t);
	struct ytree *bad = (struct ytree *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *text = "{\"images\": [1 2]}";
	cr_assert_eq(ytree_parse_json("d.json", text, strlen(text), skip, &bad, &err), GP_EINPUT);
	cr_assert_str_eq(err.msg, "d.json:1:15: error: expected ',' or ']' after an item");
}

/* A document may hold as many nodes as it has bytes: a 30,000-pod kubectl
 * dump was refused as "more than 2000000 nodes (aliases copied too often?)"
 * without an alias in it.  Without aliases no YAML document reaches the
 * limit; with them the copies stop at a size of the order of the file. */
Test(ytree, the_node_limit_is_counted_in_bytes)
{
	size_t n = 700000; /* "- [x, x, x]\n": 5 nodes in 12 bytes: 3.5 M nodes */
	char *text = malloc(12 * n + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(text + 12 * i, "- [x, x, x]\n", 12);
	text[12 * n] = '\0';
	struct ytree *t = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(ytree_parse("s.yaml", text, 12 * n, &t, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(t->root->n, n);
	ytree_free(t);
	free(text);
}
