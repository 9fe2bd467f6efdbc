/*
 * sweep.c - sweep files, their points, shards and the worker processes that
 * run them (see sweep.h).
 *
 * Loading turns the file into columns: one per overridden path, each with
 * its list of values as YAML flow text (what `--set KEY=VALUE` takes) and
 * the dimension it varies along.  A grid column is its own dimension; the
 * zip columns share one; seeds are the last.  Point i is the mixed-radix
 * number i over the dimensions, the last dimension varying fastest, so the
 * expansion is the nested loops a reader expects.
 *
 * Every point is then loaded as a scenario, so that a path the scenario
 * does not have or a value it refuses stops the sweep before any run, with
 * the error moved from the override ("--set K=V:1:C") to the place in the
 * sweep file that produced it.
 *
 * Running forks `jobs` workers.  The parent hands out point indexes through
 * a pipe, a few at a time, and reads one message per finished point back
 * through another: workers that finish early take more, and a failure stops
 * the hand-out quickly.  Each worker opens its own connection (SQLite
 * connections must not cross a fork) and writes each run with its point in
 * one transaction.  Workers ask the kernel to kill them when the parent
 * dies, so killing a sweep kills its workers and leaves whole runs only.
 */
#include "gpuplan/sweep.h"

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- text building ----------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	GP_GROW(b->p, b->cap, b->n + n + 1);
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_putc(struct sbuf *b, char c) { sb_putn(b, &c, 1); }

/* The text built so far, owned by the caller; b is empty again. */
static char *sb_take(struct sbuf *b)
{
	char *s = b->p ? b->p : gp_xstrdup("");
	*b = (struct sbuf){NULL, 0, 0};
	return s;
}

/* Whether s reads back as the same plain scalar inside a YAML flow value:
 * no flow indicators, no ": " or " #", no leading indicator or blank, and
 * not one of YAML's nulls when the author quoted it. */
static bool plain_safe(const char *s, bool quoted)
{
	size_t n = strlen(s);
	if (n == 0 || strchr("!&*|>'\"%@`#?:,[]{} ", s[0]) || s[n - 1] == ' ' || s[n - 1] == ':')
		return false;
	if (s[0] == '-' && (n == 1 || s[1] == ' '))
		return false;
	if (quoted &&
	    (!strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")))
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || strchr(",[]{}", *p) ||
		    (p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#'))
			return false;
	return true;
}

/* Appends s in double quotes with the escapes JSON and YAML share. */
static void put_quoted(struct sbuf *b, const char *s)
{
	sb_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			sb_putc(b, '\\');
			sb_putc(b, (char)*p);
		} else if (*p == '\n') {
			sb_puts(b, "\\n");
		} else if (*p == '\t') {
			sb_puts(b, "\\t");
		} else if (*p < 0x20) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\u%04x", *p);
			sb_puts(b, esc);
		} else {
			sb_putc(b, (char)*p);
		}
	}
	sb_putc(b, '"');
}

static void put_scalar(struct sbuf *b, const char *s, bool quoted)
{
	if (plain_safe(s, quoted))
		sb_puts(b, s);
	else
		put_quoted(b, s);
}

/* Appends node n as YAML flow text: the VALUE of --set KEY=VALUE. */
static void put_flow(struct sbuf *b, const struct ynode *n)
{
	if (n->kind == YNODE_SCALAR) {
		put_scalar(b, n->value, n->quoted);
		return;
	}
	sb_putc(b, n->kind == YNODE_MAP ? '{' : '[');
	for (size_t i = 0; i < n->n; i++) {
		if (i)
			sb_puts(b, ", ");
		if (n->kind == YNODE_MAP) {
			put_scalar(b, n->keys[i], false);
			sb_puts(b, ": ");
		}
		put_flow(b, n->items[i]);
	}
	sb_putc(b, n->kind == YNODE_MAP ? '}' : ']');
}

/* --- the sweep file ------------------------------------------------------------ */

/* One overridden path and its values. */
struct column {
	const char *key; /* in the tree */
	struct srcloc key_loc;
	char **values; /* flow text, owned */
	struct srcloc *value_locs;
	size_t n;
	size_t dim; /* the dimension it varies along */
};

/* The parsed file: columns and dimension sizes. */
struct spec {
	const char *path;
	struct ytree *tree;
	struct column *cols;
	size_t n_cols, cap_cols;
	size_t *dims; /* values along each dimension */
	size_t n_dims, cap_dims;
	struct srcloc base_loc;
	size_t seeds_values; /* values of the seeds: dimension (the last), 0 without */
	struct gp_err *err;
};

static const char *const sweep_keys[] = {"name", "base", "db", "grid", "zip", "seeds"};
#define N_SWEEP_KEYS (sizeof sweep_keys / sizeof sweep_keys[0])

static struct srcloc node_loc(const struct ynode *n) { return n->loc; }

static void spec_free(struct spec *s)
{
	for (size_t i = 0; i < s->n_cols; i++) {
		for (size_t j = 0; j < s->cols[i].n; j++)
			free(s->cols[i].values[j]);
		free(s->cols[i].values);
		free(s->cols[i].value_locs);
	}
	free(s->cols);
	free(s->dims);
	ytree_free(s->tree);
}

/* Refuses keys the format does not have, naming the closest one. */
static int check_keys(const struct spec *s, const struct ynode *root)
{
	for (size_t i = 0; i < root->n; i++) {
		bool known = false;
		for (size_t k = 0; k < N_SWEEP_KEYS; k++)
			known = known || !strcmp(root->keys[i], sweep_keys[k]);
		if (known)
			continue;
		const char *close = ytree_closest(root->keys[i], sweep_keys, N_SWEEP_KEYS);
		if (close)
			return gp_located(s->err, root->key_locs[i],
					  "unknown key '%s' in the sweep; did you mean '%s'?",
					  root->keys[i], close);
		return gp_located(s->err, root->key_locs[i],
				  "unknown key '%s' in the sweep; expected one of name, base, db, "
				  "grid, zip, seeds",
				  root->keys[i]);
	}
	return GP_OK;
}

/* A scalar under key, or NULL when absent; anything else is an error. */
static int get_scalar(const struct spec *s, const struct ynode *root, const char *key,
		      const char *hint, const struct ynode **out)
{
	*out = ynode_get(root, key);
	if (*out && ((*out)->kind != YNODE_SCALAR || !(*out)->value[0]))
		return gp_located(s->err, node_loc(*out), "%s must be %s", key, hint);
	return GP_OK;
}

/* Whether key is already a column (a path overridden twice). */
static const struct column *find_column(const struct spec *s, const char *key)
{
	for (size_t i = 0; i < s->n_cols; i++)
		if (!strcmp(s->cols[i].key, key))
			return &s->cols[i];
	return NULL;
}

static size_t add_dim(struct spec *s, size_t n)
{
	GP_GROW(s->dims, s->cap_dims, s->n_dims + 1);
	s->dims[s->n_dims] = n;
	return s->n_dims++;
}

/* Adds the column for key_i of map (grid or zip): a non-empty list of
 * values, none repeated, on a path not already swept. */
static int add_column(struct spec *s, const struct ynode *map, size_t key_i, const char *section,
		      size_t dim)
{
	const char *key = map->keys[key_i];
	const struct ynode *list = map->items[key_i];
	struct srcloc kloc = map->key_locs[key_i];
	if (strchr(key, '='))
		return gp_located(s->err, kloc,
				  "%s path '%s' contains '='; expected a dotted "
				  "path like pools.batch.nodes",
				  section, key);
	if (find_column(s, key))
		return gp_located(s->err, kloc,
				  "%s sweeps %s, which is already swept above; "
				  "sweep each path once",
				  section, key);
	if (list->kind != YNODE_SEQ)
		return gp_located(s->err, node_loc(list),
				  "%s %s must be a list of values, like "
				  "[1, 2, 4]",
				  section, key);
	if (list->n == 0)
		return gp_located(s->err, node_loc(list), "%s %s has no values; give at least one",
				  section, key);
	GP_GROW(s->cols, s->cap_cols, s->n_cols + 1);
	struct column *c = &s->cols[s->n_cols++];
	*c = (struct column){key,
			     kloc,
			     gp_xcalloc(list->n, sizeof(char *)),
			     gp_xcalloc(list->n, sizeof(struct srcloc)),
			     0,
			     dim};
	struct sbuf b = {NULL, 0, 0};
	for (size_t i = 0; i < list->n; i++) {
		put_flow(&b, list->items[i]);
		c->values[c->n] = sb_take(&b);
		c->value_locs[c->n++] = node_loc(list->items[i]);
	}
	return GP_OK;
}

/* A mapping of --set paths to lists; an empty one is an error. */
static int check_section(const struct spec *s, const struct ynode *m, const char *section)
{
	if (m->kind != YNODE_MAP)
		return gp_located(s->err, node_loc(m),
				  "%s must map --set paths to lists of values, "
				  "like pools.batch.nodes: [1, 2, 4]",
				  section);
	if (m->n == 0)
		return gp_located(s->err, node_loc(m),
				  "%s is empty; expected --set paths with lists "
				  "of values, like pools.batch.nodes: [1, 2, 4]",
				  section);
	return GP_OK;
}

/* Repeated values along a column would run the same point twice. */
struct keyed {
	const char *key;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The first i (in input order) whose key equals an earlier one, or n when
 * none does; by sorting, so a million seeds take a moment, not minutes. */
static size_t first_repeat(const char *const *keys, size_t n)
{
	struct keyed *k = gp_xcalloc(n, sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct keyed){keys[i], i};
	qsort(k, n, sizeof *k, cmp_keyed);
	size_t first = n;
	for (size_t i = 1; i < n; i++)
		if (!strcmp(k[i].key, k[i - 1].key) && k[i].i < first)
			first = k[i].i; /* equal keys sort by index: k[i] is a later copy */
	free(k);
	return first;
}

static int check_repeats(const struct spec *s, const struct column *c, const char *section)
{
	size_t i = first_repeat((const char *const *)c->values, c->n);
	if (i < c->n)
		return gp_located(s->err, c->value_locs[i],
				  "%s %s repeats the value %s; each point would run twice", section,
				  c->key, c->values[i]);
	return GP_OK;
}

static int load_grid(struct spec *s, const struct ynode *grid)
{
	int rc = check_section(s, grid, "grid");
	for (size_t i = 0; i < grid->n && !rc; i++) {
		rc = add_column(s, grid, i, "grid", add_dim(s, grid->items[i]->n));
		if (!rc)
			rc = check_repeats(s, &s->cols[s->n_cols - 1], "grid");
	}
	return rc;
}

/* The first zip row (columns from `first`) that repeats an earlier one, or
 * the row count when none does. */
static size_t zip_first_repeat(const struct spec *s, size_t first)
{
	size_t rows = s->cols[first].n;
	char **keys = gp_xcalloc(rows, sizeof *keys);
	for (size_t i = 0; i < rows; i++) {
		struct sbuf b = {NULL, 0, 0};
		for (size_t c = first; c < s->n_cols; c++) {
			put_quoted(&b, s->cols[c].values[i]);
			sb_putc(&b, ',');
		}
		keys[i] = sb_take(&b);
	}
	size_t i = first_repeat((const char *const *)keys, rows);
	for (size_t r = 0; r < rows; r++)
		free(keys[r]);
	free(keys);
	return i;
}

/* Zip columns share one dimension: their lists pair up, so they must be
 * equally long, and no row may repeat. */
static int load_zip(struct spec *s, const struct ynode *zip)
{
	int rc = check_section(s, zip, "zip");
	if (rc)
		return rc;
	size_t first = s->n_cols, dim = add_dim(s, 0);
	for (size_t i = 0; i < zip->n && !rc; i++) {
		rc = add_column(s, zip, i, "zip", dim);
		if (rc)
			break;
		const struct column *c = &s->cols[s->n_cols - 1], *c0 = &s->cols[first];
		if (c->n != c0->n)
			rc = gp_located(
				s->err, node_loc(zip->items[i]),
				"zip lists must be equally long: %s has %zu values, %s has %zu",
				c->key, c->n, c0->key, c0->n);
	}
	s->dims[dim] = rc ? 0 : s->cols[first].n;
	size_t i = rc ? 0 : zip_first_repeat(s, first);
	if (!rc && i < s->dims[dim])
		rc = gp_located(s->err, s->cols[first].value_locs[i],
				"zip row %zu repeats an earlier row; each point would run twice",
				i + 1);
	return rc;
}

/* seeds: N means 1..N; a list gives the seeds themselves.  Seeds are
 * written in decimal so that both forms name the same points. */
static int load_seeds(struct spec *s, const struct ynode *seeds)
{
	const struct column *swept = find_column(s, "seed");
	if (swept)
		return gp_located(s->err, node_loc(seeds),
				  "seeds and a swept 'seed' path (%d:%d) "
				  "both set the seed; keep one",
				  swept->key_loc.line, swept->key_loc.col);
	bool count = seeds->kind == YNODE_SCALAR;
	size_t n = count ? 0 : seeds->n;
	int64_t v = 0;
	if (count && (units_integer(seeds->value, &v) || v < 1 || v > SWEEP_MAX_POINTS))
		return gp_located(s->err, node_loc(seeds),
				  "seeds must be a count from 1 to %d or a "
				  "list of seeds like [1, 2, 3]; got '%s'",
				  SWEEP_MAX_POINTS, seeds->value);
	if (count)
		n = (size_t)v;
	if (!count && (seeds->kind != YNODE_SEQ || n == 0))
		return gp_located(s->err, node_loc(seeds),
				  "seeds must be a count like 5 or a "
				  "non-empty list of seeds like [1, 2, 3]");
	GP_GROW(s->cols, s->cap_cols, s->n_cols + 1);
	struct column *c = &s->cols[s->n_cols++];
	*c = (struct column){"seed",
			     node_loc(seeds),
			     gp_xcalloc(n, sizeof(char *)),
			     gp_xcalloc(n, sizeof(struct srcloc)),
			     0,
			     add_dim(s, n)};
	for (size_t i = 0; i < n; i++) {
		const struct ynode *item = count ? seeds : seeds->items[i];
		if (!count &&
		    (item->kind != YNODE_SCALAR || units_integer(item->value, &v) || v < 0))
			return gp_located(s->err, node_loc(item),
					  "a seed must be a whole number "
					  ">= 0");
		char text[32];
		snprintf(text, sizeof text, "%" PRId64, count ? (int64_t)i + 1 : v);
		c->values[c->n] = gp_xstrdup(text);
		c->value_locs[c->n++] = node_loc(item);
	}
	s->seeds_values = n;
	return check_repeats(s, c, "seeds");
}

/* The number of points, refusing products beyond SWEEP_MAX_POINTS. */
static int count_points(const struct spec *s, const struct ynode *root, size_t *n)
{
	if (s->n_dims == 0)
		return gp_located(s->err, node_loc(root),
				  "nothing to sweep; give a grid, a zip or "
				  "seeds");
	size_t total = 1; /* *n is set only when whole: sweep_free walks that many points */
	for (size_t d = 0; d < s->n_dims; d++) {
		if (s->dims[d] > SWEEP_MAX_POINTS / total)
			return gp_located(s->err, node_loc(root),
					  "the sweep has more than %d points; "
					  "split it or sweep fewer values",
					  SWEEP_MAX_POINTS);
		total *= s->dims[d];
	}
	*n = total;
	return GP_OK;
}

/* The folder of path joined with rel (rel as is when absolute, or when
 * path has no folder). */
static char *resolve(const char *path, const char *rel)
{
	const char *slash = strrchr(path, '/');
	if (rel[0] == '/' || !slash)
		return gp_xstrdup(rel);
	size_t dir = (size_t)(slash - path) + 1, n = dir + strlen(rel) + 1;
	char *out = gp_xmalloc(n);
	memcpy(out, path, dir);
	strcpy(out + dir, rel);
	return out;
}

/* The file name of path without its folder and a .yaml / .yml suffix. */
static char *stem(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *s = gp_xstrdup(slash ? slash + 1 : path);
	size_t n = strlen(s);
	if (n > 5 && !strcmp(s + n - 5, ".yaml"))
		s[n - 5] = '\0';
	else if (n > 4 && !strcmp(s + n - 4, ".yml"))
		s[n - 4] = '\0';
	return s;
}

/* name, base and db.  The name becomes a file name by default, so it is
 * kept to letters, digits, '.', '_' and '-'. */
static int load_identity(struct spec *s, const struct ynode *root, struct sweep *sw)
{
	const struct ynode *name, *base, *db;
	int rc = get_scalar(s, root, "name", "a name like pool-size", &name);
	if (!rc)
		rc = get_scalar(s, root, "base", "the path of a scenario file", &base);
	if (!rc)
		rc = get_scalar(s, root, "db", "a database path", &db);
	if (rc)
		return rc;
	if (!base)
		return gp_located(s->err, node_loc(root),
				  "missing key 'base': the scenario to sweep, "
				  "relative to the sweep file");
	if (name && name->value[strspn(name->value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
						    "QRSTUVWXYZ0123456789._-")])
		return gp_located(s->err, node_loc(name),
				  "name '%s' may hold only letters, digits, "
				  "'.', '_' and '-'",
				  name->value);
	s->base_loc = node_loc(base);
	sw->name = name ? gp_xstrdup(name->value) : stem(sw->path);
	sw->base = resolve(sw->path, base->value);
	if (db) {
		sw->db = gp_xstrdup(db->value);
	} else {
		size_t n = strlen(sw->name) + 16;
		sw->db = gp_xmalloc(n);
		snprintf(sw->db, n, "results/%s.db", sw->name);
	}
	if (access(sw->base, R_OK) != 0)
		return gp_located(s->err, s->base_loc, "cannot read the base scenario %s: %s",
				  sw->base, strerror(errno));
	return GP_OK;
}

/* Parses the file into s (columns and dimensions) and sw (identity). */
static int parse(struct spec *s, struct sweep *sw)
{
	int rc = ytree_load(s->path, &s->tree, s->err);
	if (rc)
		return rc;
	const struct ynode *root = s->tree->root;
	if (root->kind != YNODE_MAP)
		return gp_located(s->err, node_loc(root),
				  "a sweep file is a mapping with base, "
				  "grid, zip and seeds");
	rc = check_keys(s, root);
	if (!rc)
		rc = load_identity(s, root, sw);
	const struct ynode *grid = ynode_get(root, "grid"), *zip = ynode_get(root, "zip"),
			   *seeds = ynode_get(root, "seeds");
	if (!rc && grid)
		rc = load_grid(s, grid);
	if (!rc && zip)
		rc = load_zip(s, zip);
	if (!rc && seeds)
		rc = load_seeds(s, seeds);
	if (!rc)
		rc = count_points(s, root, &sw->n_points);
	return rc;
}

/* --- points ----------------------------------------------------------------- */

/* The value index of every column at point i (mixed radix, last dimension
 * fastest). */
static void point_digits(const struct spec *s, size_t i, size_t *digit_of_col)
{
	size_t *digits = gp_xcalloc(s->n_dims, sizeof *digits);
	for (size_t d = s->n_dims; d-- > 0;) {
		digits[d] = i % s->dims[d];
		i /= s->dims[d];
	}
	for (size_t c = 0; c < s->n_cols; c++)
		digit_of_col[c] = digits[s->cols[c].dim];
	free(digits);
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The point's identity: its overrides as a JSON object with sorted keys. */
static char *point_key(const struct sweep_point *p)
{
	char **sorted = gp_xcalloc(p->n_sets, sizeof *sorted);
	memcpy(sorted, p->sets, p->n_sets * sizeof *sorted);
	qsort(sorted, p->n_sets, sizeof *sorted, cmp_str_ptr);
	struct sbuf b = {NULL, 0, 0};
	sb_putc(&b, '{');
	for (size_t i = 0; i < p->n_sets; i++) {
		const char *eq = strchr(sorted[i], '=');
		char *key = gp_xstrdup(sorted[i]);
		key[eq - sorted[i]] = '\0';
		if (i)
			sb_putc(&b, ',');
		put_quoted(&b, key);
		sb_putc(&b, ':');
		put_quoted(&b, eq + 1);
		free(key);
	}
	sb_putc(&b, '}');
	free(sorted);
	return sb_take(&b);
}

static void expand(const struct spec *s, struct sweep *sw)
{
	sw->points = gp_xcalloc(sw->n_points, sizeof *sw->points);
	size_t *digit = gp_xcalloc(s->n_cols, sizeof *digit);
	for (size_t i = 0; i < sw->n_points; i++) {
		struct sweep_point *p = &sw->points[i];
		point_digits(s, i, digit);
		p->index = i;
		p->n_sets = s->n_cols;
		p->sets = gp_xcalloc(s->n_cols, sizeof *p->sets);
		for (size_t c = 0; c < s->n_cols; c++) {
			const char *v = s->cols[c].values[digit[c]];
			size_t n = strlen(s->cols[c].key) + strlen(v) + 2;
			p->sets[c] = gp_xmalloc(n);
			snprintf(p->sets[c], n, "%s=%s", s->cols[c].key, v);
		}
		p->key = point_key(p);
	}
	free(digit);
}

/* Moves a point's load error to the sweep file: an error in override c
 * ("--set K=V:1:COL: error: MSG") points at the grid key when COL falls in
 * the path, else at the value; other errors point at base:. */
static int locate_point_error(const struct spec *s, const struct sweep *sw, size_t i,
			      const char *inner, struct gp_err *err)
{
	const struct sweep_point *p = &sw->points[i];
	size_t *digit = gp_xcalloc(s->n_cols, sizeof *digit);
	point_digits(s, i, digit);
	int rc = GP_EINPUT;
	bool done = false;
	for (size_t c = 0; c < p->n_sets && !done; c++) {
		size_t pre = strlen(p->sets[c]);
		int col = 0, used = 0;
		const char *after = inner + YTREE_OVERRIDE_LEN;
		if (!ytree_is_override(inner) || strncmp(after, p->sets[c], pre) ||
		    sscanf(after + pre, ":%*d:%d: error: %n", &col, &used) < 1 || used == 0)
			continue;
		size_t keylen = strlen(s->cols[c].key);
		struct srcloc loc = (size_t)col <= keylen ? s->cols[c].key_loc
							  : s->cols[c].value_locs[digit[c]];
		rc = gp_located(err, loc, "--set %s (point %zu of %zu): %s", p->sets[c], i + 1,
				sw->n_points, after + pre + used);
		done = true;
	}
	if (!done)
		rc = gp_located(err, s->base_loc, "point %zu of %zu %s does not load: %s", i + 1,
				sw->n_points, p->key, inner);
	free(digit);
	return rc;
}

/* Loads the base alone (its own errors stay located in it), then every
 * point: cheap next to running them, and nothing runs on a bad sweep.  The
 * seeds are the last, fastest dimension, and a seed (a whole number, checked
 * by load_seeds) cannot make a scenario invalid: only the first seed of each
 * combination is loaded, so a million seeds cost one load, not a million. */
static int validate(const struct spec *s, const struct sweep *sw, struct gp_err *err)
{
	struct scenario *sc;
	int rc = scenario_load(sw->base, NULL, 0, &sc, err);
	scenario_free(sc);
	size_t stride = s->seeds_values ? s->seeds_values : 1;
	for (size_t i = 0; i < sw->n_points && !rc; i += stride) {
		struct gp_err inner GP_ERR_SCOPE = {0};
		const struct sweep_point *p = &sw->points[i];
		rc = scenario_load(sw->base, (const char *const *)p->sets, p->n_sets, &sc, &inner);
		scenario_free(sc);
		if (rc)
			rc = locate_point_error(s, sw, i, gp_err_msg(&inner), err);
	}
	return rc;
}

int sweep_load(const char *path, struct sweep **out, struct gp_err *err)
{
	assert(path && out && err);
	struct sweep *sw = gp_xcalloc(1, sizeof *sw);
	sw->path = gp_xstrdup(path);
	struct spec s = {.path = path, .err = err};
	int rc = parse(&s, sw);
	if (!rc) {
		expand(&s, sw);
		rc = validate(&s, sw, err);
	}
	spec_free(&s);
	if (rc) {
		sweep_free(sw);
		sw = NULL;
	}
	*out = sw;
	return rc;
}

void sweep_free(struct sweep *sw)
{
	if (!sw)
		return;
	for (size_t i = 0; sw->points && i < sw->n_points; i++) {
		for (size_t j = 0; j < sw->points[i].n_sets; j++)
			free(sw->points[i].sets[j]);
		free(sw->points[i].sets);
		free(sw->points[i].key);
	}
	free(sw->points);
	free(sw->path);
	free(sw->name);
	free(sw->base);
	free(sw->db);
	free(sw);
}

/* --- shards ------------------------------------------------------------------ */

/* Reads a decimal number of at most 9 digits at s; returns its length, 0 if none. */
static size_t read_number(const char *s, uint32_t *v)
{
	size_t n = 0;
	*v = 0;
	while (s[n] >= '0' && s[n] <= '9' && n < 9)
		*v = *v * 10 + (uint32_t)(s[n++] - '0');
	return s[n] >= '0' && s[n] <= '9' ? 0 : n;
}

int sweep_parse_shard(const char *text, struct sweep_shard *out, struct gp_err *err)
{
	assert(text && out && err);
	char file[96];
	snprintf(file, sizeof file, "--shard %.80s", text);
	uint32_t k, n;
	size_t lk = read_number(text, &k);
	size_t ln = lk && text[lk] == '/' ? read_number(text + lk + 1, &n) : 0;
	if (!lk || !ln || text[lk + 1 + ln])
		return gp_located(err, (struct srcloc){file, 1, 1},
				  "expected K/N, shard K of N numbered from 0, like 0/4");
	if (n == 0)
		return gp_located(err, (struct srcloc){file, 1, (int)lk + 2},
				  "the number of shards must be at least 1");
	if (k >= n)
		return gp_located(err, (struct srcloc){file, 1, 1},
				  "shard %" PRIu32 " does not exist: the %" PRIu32
				  " shards are numbered "
				  "0 to %" PRIu32,
				  k, n, n - 1);
	*out = (struct sweep_shard){k, n};
	return GP_OK;
}

bool sweep_shard_has(struct sweep_shard sh, size_t index)
{
	return sh.n == 0 || index % sh.n == sh.k;
}

/* --- running ----------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs one point unless the database already has it (another sweep on the
 * same database may have written it since we looked). */
static int run_point(const struct sweep *sw, const struct sweep_point *p, struct store *st,
		     bool *written, struct gp_err *err)
{
	bool has = false;
	*written = false;
	int rc = store_has_point(st, sw->name, p->key, &has, err);
	if (rc || has)
		return rc;
	struct scenario *sc;
	rc = scenario_load(sw->base, (const char *const *)p->sets, p->n_sets, &sc, err);
	if (rc)
		return rc;
	struct results r;
	results_init(&r);
	rc = run_simulate(sc, &r, err);
	if (!rc)
		rc = store_write_point_run(st, sc, &r, sw->name, p->key, NULL, written, err);
	results_free(&r);
	scenario_free(sc);
	return rc;
}

/* The shard's points the database does not hold yet, in order. */
static int plan(const struct sweep *sw, const struct sweep_options *o, size_t **left,
		size_t *n_left, struct sweep_progress *pr, struct gp_err *err)
{
	struct store *st;
	char **done = NULL;
	size_t n_done = 0;
	int rc = store_open(o->db, &st, err);
	if (!rc)
		rc = store_sweep_points(st, sw->name, &done, &n_done, err);
	store_close(st);
	if (n_done)
		qsort(done, n_done, sizeof *done, cmp_str_ptr);
	*left = gp_xcalloc(sw->n_points, sizeof **left);
	*n_left = 0;
	for (size_t i = 0; i < sw->n_points && !rc; i++) {
		if (!sweep_shard_has(o->shard, i))
			continue;
		pr->total++;
		const char *key = sw->points[i].key;
		if (n_done && bsearch(&key, done, n_done, sizeof *done, cmp_str_ptr))
			pr->present++;
		else
			(*left)[(*n_left)++] = i;
	}
	for (size_t i = 0; i < n_done; i++)
		free(done[i]);
	free(done);
	if (!rc && pr->present && !o->resume)
		rc = gp_located(err, (struct srcloc){o->db, 0, 0},
				"the database already holds %zu of the %zu points of "
				"sweep '%s'; add --resume to run only the missing ones, or choose "
				"another --db",
				pr->present, pr->total, sw->name);
	return rc;
}

static void report(const struct sweep_options *o, struct sweep_progress *pr, double t0)
{
	pr->elapsed_s = now_s() - t0;
	if (o->progress)
		o->progress(o->progress_ctx, pr);
}

/* Runs the points here, one after the other, on one connection. */
static int run_here(const struct sweep *sw, const struct sweep_options *o, const size_t *left,
		    size_t n, struct sweep_progress *pr, double t0, struct gp_err *err)
{
	struct store *st;
	int rc = store_open(o->db, &st, err);
	for (size_t i = 0; i < n && !rc; i++) {
		bool written = false;
		rc = run_point(sw, &sw->points[left[i]], st, &written, err);
		if (!rc) {
			*(written ? &pr->written : &pr->raced) += 1;
			report(o, pr, t0);
		}
	}
	store_close(st);
	return rc;
}

/* What a worker says about one point.  Smaller than PIPE_BUF, so that each
 * message is one atomic write however many workers share the pipe.  A
 * failure's text, of any length, follows on the worker's own pipe (errs), which
 * no other worker writes: it cannot interleave. */
struct worker_msg {
	uint32_t index; /* UINT32_MAX: the worker could not start */
	int32_t rc;
	int32_t written;
	uint32_t worker; /* which worker: the pipe its error text comes on */
	int32_t kind;    /* rc's error: its kind, place and length */
	uint32_t place_len;
	uint64_t len;
};

_Static_assert(sizeof(struct worker_msg) <= PIPE_BUF, "worker messages must be atomic");

/* Reads exactly n bytes; returns 1 when done, 0 at end of file, -1 on error. */
static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 && got == 0 ? 0 : -1;
		got += (size_t)r;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;
	while (put < n) {
		ssize_t w = write(fd, (const char *)buf + put, n - put);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		put += (size_t)w;
	}
	return 0;
}

/* Sends m on results and, when it failed, err's text on errs. */
static int send_msg(int results, int errs, struct worker_msg *m, const struct gp_err *err)
{
	const char *text = gp_err_msg(err);
	if (m->rc) {
		m->kind = (int32_t)err->kind;
		m->place_len = err->place_len;
		m->len = strlen(text);
	}
	if (write_full(results, m, sizeof *m))
		return -1;
	return m->len ? write_full(errs, text, (size_t)m->len) : 0;
}

/* A worker: runs the points it reads from tasks until end of file or an
 * error, reporting each on results.  Never returns. */
static void worker(const struct sweep *sw, const char *db, int tasks, int results, int errs,
		   uint32_t slot, pid_t parent)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent) /* the parent died before the line above */
		_exit(1);
	struct worker_msg m;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store *st;
	int rc = store_open(db, &st, &err);
	uint32_t index = UINT32_MAX;
	while (!rc && read_full(tasks, &index, sizeof index) == 1) {
		bool written = false;
		rc = run_point(sw, &sw->points[index], st, &written, &err);
		m = (struct worker_msg){
			.index = index, .rc = rc, .written = written, .worker = slot};
		if (send_msg(results, errs, &m, &err))
			break;
	}
	if (rc && !st) {
		m = (struct worker_msg){.index = UINT32_MAX, .rc = rc, .worker = slot};
		(void)send_msg(results, errs, &m, &err);
	}
	store_close(st);
	_exit(rc ? 1 : 0);
}

/* The parent's side of the workers: pipes, pids and hand-out state. */
struct pool {
	int tasks;   /* write end; -1 once closed */
	int results; /* read end */
	pid_t *pids;
	int *errs; /* read ends of each worker's error-text pipe */
	unsigned n;
	const size_t *left;
	size_t n_left, next;
};

/* Hands out the next point, or closes the task pipe when none is left:
 * workers exit when they read its end. */
static void hand_out(struct pool *pl)
{
	if (pl->tasks < 0)
		return;
	if (pl->next < pl->n_left) {
		uint32_t index = (uint32_t)pl->left[pl->next++];
		if (write_full(pl->tasks, &index, sizeof index) == 0 && pl->next < pl->n_left)
			return;
	}
	close(pl->tasks);
	pl->tasks = -1;
}

static void stop_handing_out(struct pool *pl)
{
	if (pl->tasks >= 0)
		close(pl->tasks);
	pl->tasks = -1;
}

/* Forks the workers; on a failed fork, runs with those already started. */
static int start_workers(const struct sweep *sw, const struct sweep_options *o, struct pool *pl,
			 unsigned jobs, struct gp_err *err)
{
	int tasks[2], results[2];
	if (pipe(tasks) != 0)
		return gp_errorf(err, GP_ERUNTIME, "sweep: cannot create a pipe: %s",
				 strerror(errno));
	if (pipe(results) != 0) {
		close(tasks[0]);
		close(tasks[1]);
		return gp_errorf(err, GP_ERUNTIME, "sweep: cannot create a pipe: %s",
				 strerror(errno));
	}
	pid_t parent = getpid();
	pl->pids = gp_xcalloc(jobs, sizeof *pl->pids);
	pl->errs = gp_xcalloc(jobs, sizeof *pl->errs);
	for (pl->n = 0; pl->n < jobs; pl->n++) {
		int errs[2];
		if (pipe(errs) != 0)
			break;
		pid_t pid = fork();
		if (pid == 0) {
			close(tasks[1]);
			close(results[0]);
			close(errs[0]);
			worker(sw, o->db, tasks[0], results[1], errs[1], pl->n, parent);
		}
		close(errs[1]);
		if (pid < 0) {
			close(errs[0]);
			break;
		}
		pl->pids[pl->n] = pid;
		pl->errs[pl->n] = errs[0];
	}
	close(tasks[0]);
	close(results[1]);
	pl->tasks = tasks[1];
	pl->results = results[0];
	if (pl->n == 0) {
		int e = errno;
		stop_handing_out(pl);
		close(pl->results);
		free(pl->pids);
		free(pl->errs);
		return gp_errorf(err, GP_ERUNTIME, "sweep: cannot start a worker: %s", strerror(e));
	}
	return GP_OK;
}

/* Waits for every worker; a worker that died without saying why (killed,
 * crashed) is an error unless an earlier one explains the stop. */
static int reap(struct pool *pl, int rc, struct gp_err *err)
{
	for (unsigned i = 0; i < pl->n; i++) {
		int status = 0;
		while (waitpid(pl->pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!rc && WIFSIGNALED(status))
			rc = gp_errorf(err, GP_ERUNTIME, "sweep: worker %d was killed by signal %d",
				       (int)pl->pids[i], WTERMSIG(status));
		else if (!rc && WIFEXITED(status) && WEXITSTATUS(status))
			rc = gp_errorf(err, GP_ERUNTIME, "sweep: worker %d failed (exit code %d)",
				       (int)pl->pids[i], WEXITSTATUS(status));
	}
	for (unsigned i = 0; i < pl->n; i++)
		close(pl->errs[i]);
	free(pl->pids);
	free(pl->errs);
	return rc;
}

/* The text of m's failure, from its worker's pipe, into err (NULL: read and
 * dropped, so that the worker is not left blocked on it).  Returns m's status,
 * or GP_ERUNTIME when the text did not come whole. */
static int take_error(const struct pool *pl, const struct worker_msg *m, struct gp_err *err)
{
	char *text = NULL;
	int got = 0;
	if (m->worker < pl->n && m->len < SIZE_MAX) {
		text = gp_xmalloc((size_t)m->len + 1);
		got = m->len ? read_full(pl->errs[m->worker], text, (size_t)m->len) : 1;
	}
	if (got != 1) {
		free(text);
		return err ? gp_errorf(err, GP_ERUNTIME, "sweep: a worker's error was cut short")
			   : GP_ERUNTIME;
	}
	text[m->len] = '\0';
	if (!err) {
		free(text);
		return m->rc;
	}
	gp_err_free(err);
	err->msg = text;
	err->kind = (enum gp_err_kind)m->kind;
	err->place_len = m->place_len;
	return m->rc;
}

/* Keeps two points per worker in the pipe: enough that no worker waits for
 * the parent, few enough that a failure stops the sweep within a round. */
static int run_workers(const struct sweep *sw, const struct sweep_options *o, const size_t *left,
		       size_t n, struct sweep_progress *pr, double t0, struct gp_err *err)
{
	unsigned jobs = o->jobs < n ? o->jobs : (unsigned)n;
	struct pool pl = {.left = left, .n_left = n};
	int rc = start_workers(sw, o, &pl, jobs, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < 2 * (size_t)pl.n && pl.tasks >= 0; i++)
		hand_out(&pl);
	struct worker_msg m;
	while (read_full(pl.results, &m, sizeof m) == 1) {
		if (m.rc) { /* its text read even when an earlier failure is the one told */
			int one = take_error(&pl, &m, rc ? NULL : err);
			rc = rc ? rc : one;
		}
		if (m.rc) {
			stop_handing_out(&pl);
			continue;
		}
		*(m.written ? &pr->written : &pr->raced) += 1;
		report(o, pr, t0);
		hand_out(&pl);
	}
	stop_handing_out(&pl);
	close(pl.results);
	return reap(&pl, rc, err);
}

int sweep_run(const struct sweep *sw, const struct sweep_options *o, struct sweep_progress *out,
	      struct gp_err *err)
{
	assert(sw && o && o->db && err);
	assert(o->jobs >= 1 && o->jobs <= SWEEP_MAX_JOBS);
	double t0 = now_s();
	struct sweep_progress pr = {0};
	size_t *left = NULL, n = 0;
	int rc = plan(sw, o, &left, &n, &pr, err);
	if (!rc) {
		report(o, &pr, t0);
		/* A worker whose reader is gone must see EPIPE, not die of SIGPIPE
		 * before it can say so; the parent likewise. */
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);
		if (o->jobs == 1 || n <= 1) {
			rc = run_here(sw, o, left, n, &pr, t0, err);
		} else {
			rc = run_workers(sw, o, left, n, &pr, t0, err);
			if (!rc) /* the workers' connections are all closed */
				rc = store_checkpoint(o->db, err);
		}
		signal(SIGPIPE, old);
	}
	free(left);
	pr.elapsed_s = now_s() - t0;
	if (out)
		*out = pr;
	return rc;
}
