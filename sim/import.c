/*
 * import.c - `gpuplan import`: the cluster as read (import_nodes.c,
 * import_pods.c, import_extra.c) becomes workloads, and the scenario is
 * written as YAML text (see import.h).
 *
 * Workloads.  Pods are grouped by controller and request (two pods of one
 * controller that ask for different things are two workloads).  A group's
 * running pods become one workload per node (and remaining time), pinned to
 * it by required node affinity on kubernetes.io/hostname and tolerating
 * every taint, arriving at 00:00 first: the simulation's first pass places
 * them before any pending pod, so the pending pods meet the cluster as it
 * was.  Pending pods follow, in kube-scheduler's queue order (priority, then
 * creation); all arrive at 00:00, so the scenario's fifo order is that order.
 */
#include "import_int.h"

#include "gpuplan/strindex.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_NAME 64

struct imp_wl {
	char name[WL_NAME];
	const struct imp_pod *proto; /* whose request the workload has */
	int32_t count;
	sim_time duration; /* SIM_NEVER: the horizon */
	char note[160];    /* where the duration comes from */
	int32_t node;      /* pinned: its node; -1: pending pods */
	size_t controller; /* index into ctl */
};

struct imp_ctl {
	char key[IMP_CONTROLLER_MAX]; /* "Deployment ml/vllm" */
	double busy, sm, fb;          /* DCGM sums over its pods' samples */
	int32_t n_busy, n_sm, n_fb;
	double real_cost;
	bool costed;
	sim_time mean_run; /* mean run of finished pods; -1: none */
	int32_t finished;
};

void imp_warn(struct imp *im, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	bool added;
	strindex_add(&im->warned, buf, &added);
	if (!added)
		return;
	size_t n = im->r->n_warnings;
	if (!(n & (n - 1))) /* 0, 1, 2, 4 ...: doubled */
		im->r->warnings =
			gp_xrealloc(im->r->warnings, (n ? 2 * n : 1) * sizeof *im->r->warnings);
	im->r->warnings[im->r->n_warnings++] = gp_xstrdup(buf);
}

/* --- grouping ------------------------------------------------------------------ */

struct grouping {
	struct imp_wl *wl;
	size_t n_wl;
	struct imp_ctl *ctl;
	size_t n_ctl;
	struct strindex ctl_keys; /* id = index into ctl */
	struct strindex used;     /* workload names given */
	struct strindex bases;    /* names wanted twice or more ... */
	unsigned *next;           /* ... and per base, the number to try next */
	size_t cap_wl, cap_ctl;
	struct strindex groups; /* group_of()'s keys: id = index into group_wl */
	size_t *group_wl;       /* per key, its workload */
	char *key;              /* the key being built */
	size_t key_len, key_cap;
};

static size_t controller_of(struct grouping *g, const char *key)
{
	bool added;
	size_t id = strindex_add(&g->ctl_keys, key, &added);
	if (!added)
		return id;
	if (g->n_ctl == g->cap_ctl) {
		g->cap_ctl = g->cap_ctl ? 2 * g->cap_ctl : 64;
		g->ctl = gp_xrealloc(g->ctl, g->cap_ctl * sizeof *g->ctl);
	}
	struct imp_ctl *c = &g->ctl[g->n_ctl];
	memset(c, 0, sizeof *c);
	snprintf(c->key, sizeof c->key, "%s", key);
	c->mean_run = -1;
	return g->n_ctl++;
}

/* Appends a string to the key being built, length first (unambiguous
 * whatever it holds). */
static void key_str(struct grouping *g, const char *str)
{
	size_t n = str ? strlen(str) : 0, need = g->key_len + n + 24;
	if (need > g->key_cap) {
		g->key_cap = need * 2;
		g->key = gp_xrealloc(g->key, g->key_cap);
	}
	char *k = g->key + g->key_len, digits[24];
	size_t d = 0;
	do /* the length in decimal, written by hand: snprintf was a third of grouping */
		digits[d++] = (char)('0' + n % 10);
	while ((n /= 10));
	while (d)
		*k++ = digits[--d];
	*k++ = str ? ':' : '~';
	n = str ? strlen(str) : 0;
	memcpy(k, str ? str : "", n + 1);
	g->key_len = (size_t)(k - g->key) + n;
}

/* A number as its 16 hex digits: equal numbers, equal text (one NaN). */
static void key_num(struct grouping *g, double v)
{
	uint64_t bits;
	if (isnan(v))
		v = NAN;
	memcpy(&bits, &v, sizeof bits);
	char num[17];
	for (int i = 15; i >= 0; i--, bits >>= 4)
		num[i] = "0123456789abcdef"[bits & 15];
	num[16] = '\0';
	key_str(g, num);
}

/* What makes two pods one workload, as a string: their requests (gpus, MIG
 * profile, cpu, memory, priority, preemption, grace, queue, affinity and
 * tolerations; equal keys are equal requests), with the node and the time left of
 * a running pod.  Hashed, grouping is linear in the pods (a scan of the
 * workloads per pod was quadratic: 40,000 bare pods took 41 s). */
static size_t group_of(struct grouping *g, const struct imp_pod *p, int32_t node, sim_time left,
		       bool *added)
{
	g->key_len = 0;
	key_str(g, p->controller);
	key_num(g, node);
	key_num(g, (double)left);
	key_num(g, p->gpus);
	key_num(g, p->shared);
	key_str(g, p->mig);
	key_num(g, p->cpu);
	key_num(g, p->memory);
	key_num(g, (double)p->priority);
	key_num(g, p->never);
	key_num(g, (double)p->grace);
	key_str(g, p->queue);
	key_num(g, p->service);
	key_num(g, (double)p->n_reqs);
	for (size_t i = 0; i < p->n_reqs; i++) {
		key_str(g, p->reqs[i].key);
		key_num(g, p->reqs[i].op);
		key_num(g, (double)p->reqs[i].n_values);
		for (size_t v = 0; v < p->reqs[i].n_values; v++)
			key_str(g, p->reqs[i].values[v]);
	}
	key_num(g, (double)p->n_tols);
	for (size_t i = 0; i < p->n_tols; i++) {
		key_str(g, p->tols[i].key);
		key_str(g, p->tols[i].value);
		key_num(g, p->tols[i].op);
		key_num(g, p->tols[i].effect);
	}
	size_t id = strindex_add(&g->groups, g->key ? g->key : "", added);
	if (*added)
		g->group_wl = gp_xrealloc(g->group_wl, g->groups.n * sizeof *g->group_wl);
	return id;
}

/* The mean run time of every controller's finished pods. */
static void mean_runs(const struct imp *im, struct grouping *g)
{
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		if (p->phase != PHASE_SUCCEEDED || p->started < 0 || p->finished < p->started ||
		    p->node_level)
			continue;
		size_t k = controller_of(g, p->controller);
		struct imp_ctl *c = &g->ctl[k];
		sim_time run = (p->finished - p->started) * SIM_SECOND;
		c->mean_run =
			c->finished ? c->mean_run + (run - c->mean_run) / (c->finished + 1) : run;
		c->finished++;
	}
}

/* The name part of a controller key "Kind namespace/name". */
static const char *ctl_name(const char *controller)
{
	const char *slash = strrchr(controller, '/');
	return slash ? slash + 1 : controller;
}

/* A workload name: the controller's name, then with its namespace, then
 * numbered; dots become dashes (names appear in --set paths). */
static void unique_name(struct grouping *g, const char *want, char *out)
{
	char base[WL_NAME];
	size_t i = 0;
	for (; want[i] && i < WL_NAME - 8; i++)
		base[i] = want[i] == '.' || want[i] == '/' ? '-' : want[i];
	base[i] = '\0';
	snprintf(out, WL_NAME, "%s", base);
	/* Hashed, and each base remembers its next number: linear in the
	 * names (a numbered scan per name was cubic). */
	if (strcmp(out, "all") && strcmp(out, "__idle__") &&
	    strindex_find(&g->used, out) == STRINDEX_NONE) {
		strindex_add(&g->used, out, NULL);
		return;
	}
	bool added;
	size_t id = strindex_add(&g->bases, base, &added);
	if (added) {
		g->next = gp_xrealloc(g->next, g->bases.n * sizeof *g->next);
		g->next[id] = 2;
	}
	do
		snprintf(out, WL_NAME, "%.*s-%u", WL_NAME - 12, base, g->next[id]++);
	while (strindex_find(&g->used, out) != STRINDEX_NONE);
	strindex_add(&g->used, out, NULL);
}

static struct imp_wl *add_wl(struct grouping *g, const struct imp_pod *p, int32_t node)
{
	if (g->n_wl == g->cap_wl) {
		g->cap_wl = g->cap_wl ? 2 * g->cap_wl : 64;
		g->wl = gp_xrealloc(g->wl, g->cap_wl * sizeof *g->wl);
	}
	struct imp_wl *w = &g->wl[g->n_wl++];
	memset(w, 0, sizeof *w);
	w->proto = p;
	w->node = node;
	w->controller = controller_of(g, p->controller);
	w->duration = SIM_NEVER;
	return w;
}

/* Whether some node offers what pending pod p asks for (the scenario loader
 * refuses a request no pool can ever hold): its MIG profile, or as many
 * whole GPUs or replicas on one node (MIG single: one device of the profile). */
static bool offered(const struct imp *im, const struct imp_pod *p)
{
	for (size_t i = 0; i < im->n_pools; i++) {
		const struct imp_shape *s = &im->pools[i].shape;
		for (size_t m = 0; m < s->n_mig; m++)
			if (p->mig ? !strcmp(s->mig[m].profile->name, p->mig)
				   : p->gpus == 1 && s->product && strstr(s->product, "-MIG-"))
				return true;
		if (!p->mig && s->gpu && s->sharing != SHARING_MIG && s->gpus >= p->gpus &&
		    p->shared == s->renamed)
			return true;
	}
	return false;
}

/* Running pods without GPUs are no workloads: their cpu and memory
 * requests come off their nodes' allocatable, as DaemonSets' do
 * (import_nodes.c), so kube-scheduler's "Insufficient cpu" and "Insufficient
 * memory" on those nodes are reproduced.  One note sums them up. */
static void gpuless_note(struct imp *im)
{
	size_t n = 0;
	double cpu = 0, memory = 0;
	const struct imp_pod *first = NULL;
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		if (p->node_level || p->gpus || p->mig || p->phase != PHASE_RUNNING || !p->node)
			continue;
		n++;
		cpu += p->cpu;
		memory += p->memory;
		first = first ? first : p;
	}
	if (n)
		imp_warn(im,
			 "%zu running pod%s without GPUs hold%s %.4g cores and %.4g GiB on their "
			 "nodes, taken off the nodes' allocatable (not workloads), e.g. %s/%s",
			 n, n == 1 ? "" : "s", n == 1 ? "s" : "", cpu, memory / GP_GIB, first->ns,
			 first->name);
}

/* Whether pod p is a GPU pod gpuplan models; says why not otherwise. */
static bool modelled(struct imp *im, const struct imp_pod *p)
{
	if (p->node_level || (p->phase != PHASE_PENDING && p->phase != PHASE_RUNNING))
		return false;
	if (!p->gpus && !p->mig) { /* a running one is summarised (gpuless_note) */
		if (p->phase != PHASE_RUNNING || !p->node)
			imp_warn(im, "pending pods without GPUs are left out, e.g. %s/%s", p->ns,
				 p->name);
		return false;
	}
	if (p->gpus && p->mig) {
		imp_warn(im, "pod %s/%s asks for whole GPUs and a MIG instance; left out", p->ns,
			 p->name);
		return false;
	}
	if (!p->node && !offered(im, p)) {
		imp_warn(im, "pod %s/%s asks for %d %s%s, which no node offers; left out", p->ns,
			 p->name, p->mig ? 1 : (int)p->gpus,
			 p->mig      ? "nvidia.com/mig-"
			 : p->shared ? "nvidia.com/gpu.shared"
				     : "nvidia.com/gpu",
			 p->mig ? p->mig : "");
		return false;
	}
	if (p->node && imp_node_index(im, p->node) < 0) {
		imp_warn(im, "pods bound to nodes that %s lacks are left out, e.g. %s/%s on %s",
			 im->o->nodes, p->ns, p->name, p->node);
		return false;
	}
	return true;
}

/* The time a running pod of controller c has left. */
static sim_time remaining(const struct imp *im, const struct imp_pod *p, const struct imp_ctl *c)
{
	if (p->service || c->mean_run < 0)
		return SIM_NEVER;
	sim_time ran = p->started >= 0 ? (im->snapshot - p->started) * SIM_SECOND : 0;
	return c->mean_run - ran > SIM_SECOND ? c->mean_run - ran : SIM_SECOND;
}

/* Running pods: a workload per (controller, request, node, remaining time). */
static void group_running(struct imp *im, struct grouping *g, const bool *ok)
{
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		if (!ok[i] || !p->node)
			continue;
		int32_t node = (int32_t)imp_node_index(im, p->node);
		size_t ctl = controller_of(g, p->controller);
		sim_time left = remaining(im, p, &g->ctl[ctl]);
		bool added;
		size_t key = group_of(g, p, node, left, &added);
		struct imp_wl *w = added ? NULL : &g->wl[g->group_wl[key]];
		if (!w) {
			char host[128], want[IMP_CONTROLLER_MAX + 136];
			imp_hostname(im, node, host, sizeof host);
			snprintf(want, sizeof want, "%s-on-%s", ctl_name(p->controller), host);
			char name[WL_NAME];
			unique_name(g, want, name);
			w = add_wl(g, p, node);
			g->group_wl[key] = g->n_wl - 1;
			memcpy(w->name, name, WL_NAME);
			w->duration = left;
		}
		w->count++;
	}
}

/* kube-scheduler's queue order: higher priority first, then older. */
static int by_queue_order(const void *a, const void *b)
{
	const struct imp_pod *x = *(const struct imp_pod *const *)a;
	const struct imp_pod *y = *(const struct imp_pod *const *)b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->created < y->created ? -1 : x->created > y->created;
}

/* Pending pods: a workload per (controller, request); the pods listed in
 * queue order within their workload, the workloads in scenario order (the
 * order the scenario's pending pods must meet). */
static void group_pending(struct imp *im, struct grouping *g, const bool *ok)
{
	const struct imp_pod **order = gp_xcalloc(im->n_pods + 1, sizeof *order);
	size_t n = 0;
	for (size_t i = 0; i < im->n_pods; i++)
		if (ok[i] && !im->pods[i].node)
			order[n++] = &im->pods[i];
	qsort(order, n, sizeof *order, by_queue_order);
	size_t first = g->n_wl, *wl_of = gp_xcalloc(n + 1, sizeof *wl_of);
	for (size_t i = 0; i < n; i++) {
		const struct imp_pod *p = order[i];
		bool added;
		size_t key = group_of(g, p, -1, SIM_NEVER, &added);
		struct imp_wl *w = added ? NULL : &g->wl[g->group_wl[key]];
		if (!w) {
			char name[WL_NAME];
			unique_name(g, ctl_name(p->controller), name);
			w = add_wl(g, p, -1);
			g->group_wl[key] = g->n_wl - 1;
			memcpy(w->name, name, WL_NAME);
			const struct imp_ctl *c = &g->ctl[w->controller];
			w->duration = p->service || c->mean_run < 0 ? SIM_NEVER : c->mean_run;
		}
		w->count++;
		wl_of[i] = (size_t)(w - g->wl);
	}
	/* counting sort by workload, stable: queue order within each */
	size_t n_wl = g->n_wl - first, *start = gp_xcalloc(n_wl + 1, sizeof *start);
	for (size_t i = 0; i < n; i++)
		start[wl_of[i] - first + 1]++;
	for (size_t k = 0; k < n_wl; k++)
		start[k + 1] += start[k];
	im->r->pending = gp_xcalloc(n + 1, sizeof *im->r->pending);
	im->r->n_pending = n;
	for (size_t i = 0; i < n; i++) {
		const struct imp_pod *p = order[i];
		const struct imp_wl *w = &g->wl[wl_of[i]];
		struct import_pending *pp = &im->r->pending[start[wl_of[i] - first]++];
		char pod[512];
		snprintf(pod, sizeof pod, "%s/%s", p->ns, p->name);
		pp->pod = gp_xstrdup(pod);
		pp->workload = gp_xstrdup(w->name);
		pp->message = gp_xstrdup(p->message ? p->message : "");
		pp->gated = p->gated || (p->reason && !strcmp(p->reason, "SchedulingGated"));
	}
	free(start);
	free(wl_of);
	free(order);
}

/* --- writing --------------------------------------------------------------------- */

void imp_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void imp_comment_text(FILE *out, const char *s)
{
	bool plain = true;
	for (const char *c = s; *c && plain; c++)
		plain = (unsigned char)*c >= 0x20 && *c != 0x7f && *c != '"' && *c != '\\';
	if (plain)
		fputs(s, out);
	else
		imp_quoted(out, s);
}

void imp_write_duration(FILE *out, sim_time t)
{
	int64_t s = (t + SIM_SECOND / 2) / SIM_SECOND;
	if (s <= 0)
		s = 1;
	if (s % 3600 == 0)
		fprintf(out, "%lldh", (long long)(s / 3600));
	else if (s % 60 == 0)
		fprintf(out, "%lldm", (long long)(s / 60));
	else
		fprintf(out, "%llds", (long long)s);
}

void imp_write_bytes(FILE *out, double b)
{
	b = ceil(b); /* Quantity.Value() rounds a fraction of a byte up */
	if (fmod(b, 1048576.0) == 0)
		fprintf(out, "%.0fMiB", b / 1048576.0);
	else if (fmod(b, 1024.0) == 0)
		fprintf(out, "%.0fKiB", b / 1024.0);
	else /* a bare number under a MiB is refused by the loader: say bytes */
		fprintf(out, "%.0f%s", b, b < 1048576.0 ? "B" : "");
}

static const char *const effect_names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

void imp_write_pool(FILE *out, const struct imp *im, const struct imp_pool *p)
{
	const struct imp_shape *s = &p->shape;
	fputs("  # nodes:", out);
	for (size_t i = 0; i < p->n_nodes; i++) {
		fputs(i ? ", " : " ", out);
		imp_comment_text(out, im->nodes[p->nodes[i]].name);
	}
	fprintf(out, "\n  - name: %s\n    nodes: %zu\n", p->name, p->n_nodes);
	if (s->gpu)
		fprintf(out, "    gpu: %s\n    gpus_per_node: %d\n", s->gpu->name, (int)s->gpus);
	if (s->gpu && s->gpu_memory > 0)
		fprintf(out,
			"    gpu_memory: %.0fMi  # nvidia.com/gpu.memory; the catalog's %s has "
			"%.0f MiB\n",
			s->gpu_memory / GP_MIB, s->gpu->name, s->gpu->memory_bytes / GP_MIB);
	if (!s->gpu)
		fputs("    gpus_per_node: 0\n", out);
	fprintf(out, "    cpu: %.6g\n    memory: ", s->cpu);
	imp_write_bytes(out, s->memory);
	fputc('\n', out);
	if (s->sharing == SHARING_TIME_SLICING || s->sharing == SHARING_MPS)
		fprintf(out, "    sharing: {mode: %s, replicas: %d%s}\n", sharing_name(s->sharing),
			(int)s->replicas, s->renamed ? ", renameByDefault: true" : "");
	if (s->sharing == SHARING_MIG) {
		fprintf(out, "    sharing: {mode: %s, layout: [", sharing_name(SHARING_MIG));
		bool first = true;
		for (size_t m = 0; m < s->n_mig; m++)
			for (int32_t k = 0; k < s->mig[m].per_gpu; k++, first = false)
				fprintf(out, "%s%s", first ? "" : ", ", s->mig[m].profile->name);
		fputs("]}\n", out);
	}
	if (s->n_labels) {
		fputs("    labels: {", out);
		for (size_t i = 0; i < s->n_labels; i++) {
			fputs(i ? ", " : "", out);
			imp_quoted(out, s->labels[i].key);
			fputs(": ", out);
			imp_quoted(out, s->labels[i].value);
		}
		fputs("}\n", out);
	}
	if (s->n_taints) {
		fputs("    taints:\n", out);
		for (size_t i = 0; i < s->n_taints; i++) {
			fputs("      - {key: ", out);
			imp_quoted(out, s->taints[i].key);
			if (s->taints[i].value[0]) {
				fputs(", value: ", out);
				imp_quoted(out, s->taints[i].value);
			}
			fprintf(out, ", effect: %s}\n", effect_names[s->taints[i].effect]);
		}
	}
	if (p->priced)
		fprintf(out, "    price: {gpu_hour: %.6g, cpu_hour: %.6g, gib_hour: %.6g}\n",
			p->price.gpu_hour, p->price.cpu_hour, p->price.gib_hour);
}

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

static void write_affinity(FILE *out, const struct imp *im, const struct imp_wl *w)
{
	const struct imp_pod *p = w->proto;
	if (w->node >= 0) {
		char host[128];
		imp_hostname(im, w->node, host, sizeof host);
		fputs("    affinity: [{key: kubernetes.io/hostname, operator: In, values: [", out);
		imp_quoted(out, host);
		fputs("]}]\n    tolerations: [{operator: Exists}]\n", out);
		return;
	}
	if (p->n_reqs) {
		fputs("    affinity:\n", out);
		for (size_t i = 0; i < p->n_reqs; i++) {
			fputs("      - {key: ", out);
			imp_quoted(out, p->reqs[i].key);
			fprintf(out, ", operator: %s", op_names[p->reqs[i].op]);
			if (p->reqs[i].n_values) {
				fputs(", values: [", out);
				for (size_t v = 0; v < p->reqs[i].n_values; v++) {
					fputs(v ? ", " : "", out);
					imp_quoted(out, p->reqs[i].values[v]);
				}
				fputs("]", out);
			}
			fputs("}\n", out);
		}
	}
	if (p->n_tols) {
		fputs("    tolerations:\n", out);
		for (size_t i = 0; i < p->n_tols; i++) {
			const struct imp_tol *t = &p->tols[i];
			fputs("      - {", out);
			if (t->key[0]) {
				fputs("key: ", out);
				imp_quoted(out, t->key);
				fputs(", ", out);
			}
			fprintf(out, "operator: %s",
				t->op == TOLERATION_EXISTS ? "Exists" : "Equal");
			if (t->op == TOLERATION_EQUAL) {
				fputs(", value: ", out);
				imp_quoted(out, t->value);
			}
			if (t->effect >= 0)
				fprintf(out, ", effect: %s", effect_names[t->effect]);
			fputs("}\n", out);
		}
	}
}

static bool mig_single(const struct imp_shape *s)
{
	return s->sharing == SHARING_MIG && s->n_mig == 1 && s->product &&
	       strstr(s->product, "-MIG-");
}

/* Whether pod p selects product (a nodeSelector or an In requirement on it). */
static bool selects_product(const struct imp_pod *p, const char *product)
{
	for (size_t i = 0; i < p->n_reqs; i++)
		if (!strcmp(p->reqs[i].key, "nvidia.com/gpu.product") &&
		    p->reqs[i].op == AFFINITY_IN)
			for (size_t v = 0; v < p->reqs[i].n_values; v++)
				if (!strcmp(p->reqs[i].values[v], product))
					return true;
	return false;
}

/* The MIG profile a pod's nvidia.com/gpu: 1 means under MIG's single
 * strategy, where the device plugin hands out MIG devices as nvidia.com/gpu:
 * its node's profile for a running pod; for a pending one, the profile of
 * the single-strategy product it selects, or of every single-strategy pool
 * when no pool offers whole GPUs. */
static const char *single_profile(const struct imp *im, const struct imp_wl *w)
{
	if (w->proto->gpus != 1)
		return NULL;
	if (w->node >= 0)
		return mig_single(&im->nodes[w->node].shape)
			       ? im->nodes[w->node].shape.mig[0].profile->name
			       : NULL;
	const char *only = NULL;
	bool whole = false, several = false;
	for (size_t i = 0; i < im->n_pools; i++) {
		const struct imp_shape *s = &im->pools[i].shape;
		if (mig_single(s) && selects_product(w->proto, s->product))
			return s->mig[0].profile->name;
		if (mig_single(s)) {
			several |= only && strcmp(only, s->mig[0].profile->name);
			only = s->mig[0].profile->name;
		}
		whole |= s->gpu && s->sharing != SHARING_MIG;
	}
	return whole || several ? NULL : only;
}

static void write_calibration(FILE *out, const struct imp_ctl *c)
{
	if (c->n_busy) {
		double busy = fmin(1, fmax(0.001, c->busy / c->n_busy));
		fprintf(out, "    gpu_busy: %.3g\n", busy);
		if (c->n_sm)
			fprintf(out, "    sm_share: %.3g\n",
				fmin(1, fmax(0.001, (c->sm / c->n_sm) / fmax(busy, 0.001))));
	}
	if (c->n_fb && c->fb > 0)
		fprintf(out, "    vram: %.0fMiB\n", c->fb / c->n_fb);
}

/* Why pod p, which names a LocalQueue, has no queue in the scenario. */
void imp_warn_no_queue(struct imp *im, const struct imp_pod *p)
{
	const struct imp_local_queue *lq = imp_local_queue(im, p);
	if (!im->o->kueue)
		imp_warn(im,
			 "pod %s/%s names Kueue LocalQueue %s; without --kueue its workload "
			 "has no queue",
			 p->ns, p->name, p->queue);
	else if (!lq)
		imp_warn(im,
			 "pod %s/%s names Kueue LocalQueue %s, but %s has no LocalQueue of "
			 "that name in namespace %s; its workload has no queue",
			 p->ns, p->name, p->queue, im->o->kueue, p->ns);
	else
		imp_warn(im,
			 "LocalQueue %s/%s points to ClusterQueue %s, but %s has no "
			 "ClusterQueue of that name; the workload of pod %s/%s has no queue",
			 lq->ns, lq->name, lq->cluster_queue, im->o->kueue, p->ns, p->name);
}

/* Labels a controller sets per pod or per revision: they say nothing of
 * whose the pod is. */
static bool per_pod_label(const char *key)
{
	static const char *const keys[] = {"pod-template-hash",
					   "controller-revision-hash",
					   "controller-uid",
					   "batch.kubernetes.io/controller-uid",
					   "batch.kubernetes.io/job-completion-index",
					   "statefulset.kubernetes.io/pod-name",
					   "apps.kubernetes.io/pod-index"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* Showback (docs/cost.md): the pod's namespace and its labels, but those a
 * controller sets per pod. */
static void write_showback(FILE *out, const struct imp_pod *p)
{
	fprintf(out, "    namespace: %s\n", p->ns);
	bool any = false;
	for (size_t i = 0; i < p->n_labels; i++) {
		if (per_pod_label(p->labels[i].key))
			continue;
		fputs(any ? ", " : "    labels: {", out);
		imp_quoted(out, p->labels[i].key);
		fputs(": ", out);
		imp_quoted(out, p->labels[i].value);
		any = true;
	}
	if (any)
		fputs("}\n", out);
}

static void write_workload(FILE *out, const struct imp *im, const struct grouping *g,
			   const struct imp_wl *w)
{
	const struct imp_pod *p = w->proto;
	const struct imp_ctl *c = &g->ctl[w->controller];
	/* Names in a comment are escaped too: a newline would end it. */
	fputs("  # ", out);
	imp_comment_text(out, c->key);
	if (w->node >= 0) {
		/* the twin names nodes by pool and index: say which is which, as
		 * "l40s-1" may be another real node's name */
		char host[128];
		imp_hostname(im, w->node, host, sizeof host);
		fprintf(out, ": %d running on ", (int)w->count);
		imp_comment_text(out, im->nodes[w->node].name);
		if (strcmp(host, im->nodes[w->node].name)) {
			fputs(" (the twin's ", out);
			imp_comment_text(out, host);
			fputc(')', out);
		}
		fputc('\n', out);
	} else
		fprintf(out, ": %d pending\n", (int)w->count);
	char at[32];
	units_format_rfc3339(im->snapshot, at, sizeof at);
	fprintf(out, "  - name: %s\n", w->name);
	if (p->service) /* it serves for --horizon, whatever shares its GPUs */
		fputs("    kind: service\n", out);
	fprintf(out, "    count: %d\n    arrival: {at: %s}\n", (int)w->count, at);
	const char *mig = p->mig ? p->mig : single_profile(im, w);
	if (mig)
		fprintf(out, "    gpus: {mig: %s}\n", mig);
	else if (p->shared)
		fprintf(out, "    gpus: {shared: %d}\n", (int)p->gpus);
	else
		fprintf(out, "    gpus: %d\n", (int)p->gpus);
	/* What a snapshot cannot tell is a placeholder, with its reason (advise
	 * will not buy hardware for a workload people wait on that runs on one). */
	bool invented = p->service || w->duration == SIM_NEVER;
	fputs(invented ? "    duration: !placeholder " : "    duration: ", out);
	imp_write_duration(out, w->duration == SIM_NEVER ? im->horizon : w->duration);
	if (p->service)
		fputs("   # a service, held for --horizon: a snapshot does not show how long it "
		      "runs",
		      out);
	else if (w->duration == SIM_NEVER)
		fputs("   # no finished pod to learn from: --horizon", out);
	else if (w->node >= 0)
		fprintf(out, "   # what is left of the mean of %d finished pods", (int)c->finished);
	else
		fprintf(out, "   # the mean of %d finished pods", (int)c->finished);
	fputc('\n', out);
	if (p->cpu > 0)
		fprintf(out, "    cpu: %.4g\n", p->cpu);
	if (p->memory > 0) {
		fputs("    memory: ", out);
		imp_write_bytes(out, p->memory);
		fputc('\n', out);
	}
	if (p->priority)
		fprintf(out, "    priority: %lld\n", (long long)p->priority);
	if (p->never)
		fputs("    preemption_policy: Never\n", out);
	if (p->grace != 30)
		fprintf(out, "    termination_grace_period: %llds\n", (long long)p->grace);
	if (p->safe_to_evict != SAFE_TO_EVICT_UNSET)
		fprintf(out, "    safe_to_evict: %s\n",
			p->safe_to_evict == SAFE_TO_EVICT_TRUE ? "true" : "false");
	if (p->local_storage)
		fputs("    local_storage: true\n", out);
	if (p->pdb != PDB_NONE)
		fprintf(out, "    pdb: {%s: %d}  # PodDisruptionBudget %s/%s\n",
			p->pdb == PDB_MIN_AVAILABLE ? "min_available" : "max_unavailable",
			(int)p->pdb_value, p->pdb_ns, p->pdb_name);
	write_showback(out, p);
	const char *q = imp_cluster_queue(im, p);
	if (q)
		fprintf(out, "    queue: %s\n", q);
	else if (p->queue)
		imp_warn_no_queue((struct imp *)im, p);
	write_affinity(out, im, w);
	write_calibration(out, c);
}

/* An amount of a quota: memory as bytes with their unit, the rest as is. */
static void write_amount(FILE *out, const char *resource, double v)
{
	if (!strcmp(resource, "memory"))
		imp_write_bytes(out, v); /* as the quota is, exactly */
	else
		fprintf(out, "%.6g", v);
}

/* A ResourceFlavor's taints or tolerations, as a flow list of their fields. */
static void write_taint_list(FILE *out, const char *key, const struct ynode *list)
{
	static const char *const fields[] = {"key", "operator", "value", "effect"};
	if (!list || !list->n)
		return;
	fprintf(out, "    %s: [", key);
	for (size_t i = 0; i < list->n; i++) {
		fputs(i ? ", {" : "{", out);
		bool first = true;
		for (size_t k = 0; k < 4; k++) {
			const struct ynode *v = ynode_get(list->items[i], fields[k]);
			if (!v || v->kind != YNODE_SCALAR)
				continue;
			fprintf(out, "%s%s: ", first ? "" : ", ", fields[k]);
			imp_quoted(out, v->value);
			first = false;
		}
		fputc('}', out);
	}
	fputs("]\n", out);
}

/* resource_flavors: each ResourceFlavor read, or named by a queue. */
static void write_flavors(FILE *out, const struct imp *im)
{
	if (!im->n_flavors)
		return;
	fputs("resource_flavors:\n", out);
	for (size_t k = 0; k < im->n_flavors; k++) {
		const struct imp_flavor *f = &im->flavors[k];
		fprintf(out, "  - name: %s\n", f->name);
		if (f->labels && f->labels->n) {
			fputs("    node_labels: {", out);
			for (size_t l = 0; l < f->labels->n; l++) {
				fputs(l ? ", " : "", out);
				imp_quoted(out, f->labels->keys[l]);
				fputs(": ", out);
				imp_quoted(out, f->labels->items[l]->value);
			}
			fputs("}\n", out);
		}
		write_taint_list(out, "node_taints", f->taints);
		write_taint_list(out, "tolerations", f->tolerations);
	}
}

/* A queue's resource_groups: per group its covered resources, per flavor
 * its quota of each in their order; limits only with a cohort, and a
 * lending limit of the whole quota is none. */
static void write_groups(FILE *out, const struct imp *im, const struct imp_queue *q)
{
	fputs("    resource_groups:\n", out);
	for (size_t g = 0; g < q->n_groups; g++) {
		const struct imp_group *grp = &q->groups[g];
		fputs("      - covered_resources: [", out);
		for (size_t c = 0; c < grp->n_covered; c++) {
			fputs(c ? ", " : "", out);
			imp_quoted(out, grp->covered[c]);
		}
		fputs("]\n        flavors:\n", out);
		for (size_t fl = 0; fl < grp->n_flavors; fl++) {
			fprintf(out, "          - name: %s\n            resources: [",
				im->flavors[grp->flavors[fl]].name);
			for (size_t c = 0; c < grp->n_covered; c++) {
				const struct quota_entry *e = NULL;
				for (size_t k = 0; k < q->n_quota && !e; k++)
					if (q->quota[k].flavor == grp->flavors[fl] &&
					    !strcmp(q->quota[k].resource, grp->covered[c]))
						e = &q->quota[k];
				fputs(c ? ", {name: " : "{name: ", out);
				imp_quoted(out, e->resource);
				fputs(", nominal_quota: ", out);
				write_amount(out, e->resource, e->nominal);
				if (q->cohort && !isinf(e->borrowing_limit)) {
					fputs(", borrowing_limit: ", out);
					write_amount(out, e->resource, e->borrowing_limit);
				}
				if (q->cohort && e->lending_limit < e->nominal) {
					fputs(", lending_limit: ", out);
					write_amount(out, e->resource, e->lending_limit);
				}
				fputc('}', out);
			}
			fputs("]\n", out);
		}
	}
	if (q->when_borrow || q->when_preempt) {
		fputs("    flavor_fungibility: {", out);
		if (q->when_borrow)
			fprintf(out, "when_can_borrow: %s", q->when_borrow);
		if (q->when_preempt)
			fprintf(out, "%swhen_can_preempt: %s", q->when_borrow ? ", " : "",
				q->when_preempt);
		fputs("}\n", out);
	}
}

void imp_write_queues(FILE *out, const struct imp *im)
{
	write_flavors(out, im);
	if (im->n_cohorts) {
		fputs("cohorts:\n", out);
		for (size_t i = 0; i < im->n_cohorts; i++) {
			fprintf(out, "  - {name: %s", im->cohorts[i].name);
			if (im->cohorts[i].parent)
				fprintf(out, ", parent: %s", im->cohorts[i].parent);
			fputs("}\n", out);
		}
	}
	if (!im->n_queues)
		return;
	fputs("queues:\n", out);
	for (size_t i = 0; i < im->n_queues; i++) {
		const struct imp_queue *q = &im->queues[i];
		fprintf(out, "  - name: %s\n    strategy: %s\n", q->name, q->strategy);
		if (q->cohort)
			fprintf(out, "    cohort: %s\n", q->cohort);
		if (q->n_groups)
			write_groups(out, im, q);
		if (q->reclaim && q->within)
			fprintf(out,
				"    preemption: {reclaim_within_cohort: %s, within_cluster_queue: %s}\n",
				q->reclaim, q->within);
		else if (q->reclaim)
			fprintf(out, "    preemption: {reclaim_within_cohort: %s}\n", q->reclaim);
		else if (q->within)
			fprintf(out, "    preemption: {within_cluster_queue: %s}\n", q->within);
	}
}

static void write_scenario(FILE *out, const struct imp *im, const struct grouping *g)
{
	char at[32];
	units_format_rfc3339(im->snapshot, at, sizeof at);
	fputs("# Imported by `gpuplan import` from ", out);
	imp_comment_text(out, im->o->nodes);
	fprintf(out, " (%zu nodes) and ", im->n_nodes);
	imp_comment_text(out, im->o->pods);
	fprintf(out, " (%zu pods)", im->n_pods);
	static const char *const what[] = {", Kueue from ", ", DCGM from ", ", prices from "};
	const char *const from[] = {im->o->kueue, im->o->dcgm, im->o->opencost};
	for (size_t i = 0; i < 3; i++)
		if (from[i]) {
			fputs(what[i], out);
			imp_comment_text(out, from[i]);
		}
	fputs(".\n# The snapshot is the start: running pods start on their own nodes, pending "
	      "pods arrive.\n# Services, and batch pods without a finished pod to learn from, "
	      "run for ",
	      out);
	imp_write_duration(out, im->horizon);
	fprintf(out, "; the run lasts\n# until all work is done.\nname: %s\nseed: 1\nstart: %s\n",
		im->o->name ? im->o->name : "imported", at);
	if (im->kube_minor) /* the messages in the wording of the cluster's release */
		fprintf(out, "kubernetes_version: \"1.%d\"   # the control plane's kubelet\n",
			(int)im->kube_minor);
	fputs("pools:\n", out);
	for (size_t i = 0; i < im->n_pools; i++)
		imp_write_pool(out, im, &im->pools[i]);
	imp_write_queues(out, im);
	/* Running pods are bound already, not in the queue: they go first, then
	 * the pending ones, listed in kube-scheduler's queue order. */
	fputs("scheduler:\n  order: fifo   # running pods first, then the pending in "
	      "kube-scheduler's order (priority, then creation), as listed\n",
	      out);
	fputs("workloads:\n", out);
	for (size_t i = 0; i < g->n_wl; i++)
		write_workload(out, im, g, &g->wl[i]);
}

/* --- orchestration ------------------------------------------------------------------ */

/* The latest time the pods mention: when the snapshot was taken, at the latest. */
static int64_t latest_time(const struct imp *im)
{
	int64_t t = 0;
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		t = p->created > t ? p->created : t;
		t = p->started > t ? p->started : t;
		t = p->finished > t ? p->finished : t;
	}
	return t;
}

/* DCGM samples and OpenCost costs, from pods to their controllers. */
static void per_controller(struct imp *im, struct grouping *g)
{
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		if (p->node_level || (!p->n_busy && !p->n_fb && !p->real_cost))
			continue;
		size_t k = controller_of(g, p->controller);
		struct imp_ctl *c = &g->ctl[k];
		c->busy += p->busy, c->n_busy += p->n_busy;
		c->sm += p->sm, c->n_sm += p->n_sm;
		c->fb += p->fb, c->n_fb += p->n_fb;
		c->real_cost += p->real_cost;
		c->costed |= p->real_cost > 0;
	}
}

static void fill_result(struct imp *im, const struct grouping *g)
{
	struct import_result *r = im->r;
	r->n_workloads = g->n_wl;
	r->workload_controller = gp_xcalloc(g->n_wl, sizeof *r->workload_controller);
	for (size_t w = 0; w < g->n_wl; w++) {
		r->workload_controller[w] = gp_xstrdup(g->ctl[g->wl[w].controller].key);
		if (g->ctl[g->wl[w].controller].n_busy)
			r->n_calibrated++;
	}
	for (size_t c = 0; c < g->n_ctl; c++) {
		if (!g->ctl[c].costed)
			continue;
		r->costs = gp_xrealloc(r->costs, (r->n_costs + 1) * sizeof *r->costs);
		r->costs[r->n_costs++] =
			(struct import_cost){gp_xstrdup(g->ctl[c].key), g->ctl[c].real_cost};
	}
	r->cost_window = (im->cost_end - im->cost_start) * SIM_SECOND;
	r->n_nodes = im->n_nodes;
	r->n_pools = im->n_pools;
	r->n_pods = im->n_pods;
	r->snapshot = im->snapshot;
	for (size_t w = 0; w < g->n_wl; w++)
		r->n_running += g->wl[w].node >= 0 ? (size_t)g->wl[w].count : 0;
}

static int build(struct imp *im)
{
	/* The name is the scenario's: the loader's rule, checked before any input. */
	if (im->o->name && !scenario_name_ok(im->o->name))
		return gp_errorf(im->err, GP_EINPUT,
				 "--name '%s': expected %s, at most %d characters", im->o->name,
				 SCENARIO_NAME_HINT, SCENARIO_MAX_NAME);
	int rc = imp_read_pods(im);
	if (!rc)
		rc = imp_read_nodes(im);
	if (!rc)
		rc = imp_check_bound(im);
	if (!rc && im->o->kueue)
		rc = imp_read_kueue(im);
	if (!rc && im->o->pdbs)
		rc = imp_read_pdbs(im);
	if (!rc && im->o->at && units_rfc3339(im->o->at, &im->snapshot))
		rc = gp_errorf(im->err, GP_EINPUT, "--at expects %s, got '%s'", UNITS_HINT_TIME,
			       im->o->at);
	if (!rc && !im->o->at)
		im->snapshot = latest_time(im);
	if (!rc && im->o->dcgm)
		rc = imp_read_dcgm(im);
	if (!rc && im->o->opencost)
		rc = imp_read_opencost(im);
	if (!rc && im->o->prices)
		rc = imp_read_prices(im);
	if (rc)
		return rc;
	struct grouping g = {0};
	bool *ok = gp_xcalloc(im->n_pods, sizeof *ok);
	for (size_t i = 0; i < im->n_pods; i++)
		ok[i] = modelled(im, &im->pods[i]);
	gpuless_note(im);
	mean_runs(im, &g);
	group_running(im, &g, ok);
	group_pending(im, &g, ok);
	per_controller(im, &g);
	free(ok);
	if (!g.n_wl)
		rc = gp_errorf(im->err, GP_EINPUT,
			       "%s: no running or pending pod asks for GPUs; "
			       "nothing to plan",
			       im->o->pods);
	if (!rc) {
		FILE *out = open_memstream(&im->r->yaml, &im->r->yaml_len);
		write_scenario(out, im, &g);
		fclose(out);
		fill_result(im, &g);
	}
	free(g.wl);
	free(g.ctl);
	free(g.next);
	strindex_free(&g.ctl_keys);
	strindex_free(&g.used);
	strindex_free(&g.bases);
	strindex_free(&g.groups);
	free(g.group_wl);
	free(g.key);
	return rc;
}

void imp_free(struct imp *im)
{
	for (size_t i = 0; i < im->n_pods; i++) {
		for (size_t r = 0; r < im->pods[i].n_reqs; r++)
			free(im->pods[i].reqs[r].values);
		free(im->pods[i].reqs);
		free(im->pods[i].tols);
		free(im->pods[i].labels);
	}
	free(im->pods);
	for (size_t i = 0; i < im->n_nodes; i++) {
		free(im->nodes[i].shape.labels);
		free(im->nodes[i].shape.taints);
	}
	free(im->nodes);
	strindex_free(&im->node_ids);
	strindex_free(&im->node_strings);
	strindex_free(&im->pod_strings);
	strindex_free(&im->warned);
	strindex_free(&im->selected);
	strindex_free(&im->cohort_ids);
	for (size_t i = 0; i < im->n_pools; i++)
		free(im->pools[i].nodes);
	free(im->pools);
	for (size_t i = 0; i < im->n_queues; i++) {
		free(im->queues[i].quota);
		for (size_t g = 0; g < im->queues[i].n_groups; g++) {
			free(im->queues[i].groups[g].covered);
			free(im->queues[i].groups[g].flavors);
		}
		free(im->queues[i].groups);
	}
	free(im->queues);
	free(im->flavors);
	free(im->local_queues);
	free(im->cohorts);
	free(im->prices);
	struct imp_file *files[] = {&im->nodes_f, &im->pods_f,   &im->kueue_f, &im->dcgm_f,
				    &im->cost_f,  &im->prices_f, &im->pdb_f};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		imp_close(files[i]);
}

int import_build(const struct import_options *o, struct import_result *r, struct gp_err *err)
{
	memset(r, 0, sizeof *r);
	struct imp im = {.o = o, .err = err, .r = r};
	im.horizon = o->horizon > 0 ? o->horizon : SIM_DAY;
	int rc = build(&im);
	imp_free(&im);
	if (rc) {
		import_result_free(r);
		memset(r, 0, sizeof *r);
	}
	return rc;
}

void import_result_free(struct import_result *r)
{
	free(r->yaml);
	free(r->csv);
	free(r->summary);
	for (size_t i = 0; i < r->n_pending; i++) {
		free(r->pending[i].pod);
		free(r->pending[i].workload);
		free(r->pending[i].message);
	}
	free(r->pending);
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	for (size_t i = 0; i < r->n_workloads; i++)
		free(r->workload_controller[i]);
	free(r->workload_controller);
	for (size_t i = 0; i < r->n_costs; i++)
		free(r->costs[i].controller);
	free(r->costs);
}
