/*
 * import_history.c - `gpuplan import --history DIR`: the files of
 * scripts/export-history.sh (the files of docs/import.md, "From your cluster's history") read into pods,
 * nodes and per-pod series; the pods grouped into workloads by what created
 * them.  import_learn.c learns each workload and writes the twin.
 *
 * Every file is streamed (import_prom.c); pods are found by "namespace/pod"
 * in a strindex, label values interned in another, so reading costs O(1)
 * per series and memory a record per pod.
 *
 * Grouping (the first rule that applies):
 *   JobSet       label jobset.sigs.k8s.io/jobset-name (JobSet's own label,
 *                sigs.k8s.io/jobset api/jobset/v1alpha2: JobSetNameKey)
 *   PyTorchJob   label training.kubeflow.org/job-name (Kubeflow Training
 *                Operator's JobNameLabel)
 *   RayJob       label ray.io/originated-from-crd=RayJob with
 *                ray.io/originated-from-cr-name (KubeRay utils/constant.go);
 *                RayCluster: ray.io/cluster
 *   pod group    label kueue.x-k8s.io/pod-group-name (Kueue's plain pods)
 *   Notebook     label notebook-name (Kubeflow's notebook controller)
 *   JupyterHub   label component=singleuser-server (Zero to JupyterHub);
 *                one workload for a namespace's servers
 *   CronJob      a Job (pod owner) whose kube_job_owner is a CronJob
 *   Job          any other Job: by its name's stem (generated suffixes off)
 *   Deployment   a ReplicaSet through kube_replicaset_owner, or its name
 *                less the pod-template-hash
 *   StatefulSet  its name
 *   other owner  its kind and name; a bare pod by its name's stem
 * DaemonSet and static (Node-owned) pods are left out: they belong to nodes.
 */
#include "import_hist.h"
#include "import_learn.h"

#include "gpuplan/jsonw.h"
#include "gpuplan/strindex.h"
#include "gpuplan/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- interning ----------------------------------------------------------------- */

uint32_t hist_intern(struct hist *h, const char *s)
{
	if (!s || !*s)
		return HIST_NONE;
	return (uint32_t)strindex_add(&h->strings, s, NULL);
}

const char *hist_str(const struct hist *h, uint32_t id)
{
	return id == HIST_NONE ? "" : strindex_key(&h->strings, id);
}

/* The keys of the indexes, "a\x1fb\x1fc" in buf, cut at size - 1 bytes as
 * snprintf cuts them: key_first, then key_next for each other part (both
 * return the length).  They are made for nearly every series read, where
 * snprintf's formatting cost more than the lookups. */
static size_t key_put(char *buf, size_t size, size_t len, const char *s, size_t n)
{
	size_t room = size - 1 - len;
	n = n < room ? n : room;
	memcpy(buf + len, s, n);
	buf[len + n] = '\0';
	return len + n;
}

static size_t key_first(char *buf, size_t size, const char *s)
{
	return key_put(buf, size, 0, s, strlen(s));
}

static size_t key_next(char *buf, size_t size, size_t len, const char *s)
{
	len = key_put(buf, size, len, "\x1f", 1);
	return key_put(buf, size, len, s, strlen(s));
}

/* Two interned ids as one key: "ns\x1fname". */
static void pair_key(const struct hist *h, uint32_t a, uint32_t b, char *buf, size_t size)
{
	key_next(buf, size, key_first(buf, size, hist_str(h, a)), hist_str(h, b));
}

/* The pod of series s (namespace, pod labels), added when new and add. */
static int pod_of(struct hist *h, const struct prom_series *s, bool add, struct hist_pod **out,
		  struct gp_err *err)
{
	const char *ns = import_prom_label(s, "namespace"), *pod = import_prom_label(s, "pod");
	*out = NULL;
	if (!ns || !pod || !*ns || !*pod)
		return import_prom_error(err, s, NULL, "expected the labels namespace and pod");
	/* a pod is its uid: a StatefulSet's or a notebook's pod comes back under
	 * its name; a series without a uid is the latest pod of its name */
	const char *uid = import_prom_label(s, "uid");
	char key[700];
	size_t len = key_next(key, sizeof key, key_first(key, sizeof key, ns), pod);
	bool added;
	size_t name = strindex_add(&h->name_index, key, &added);
	if (added) {
		GP_GROW(h->name_last, h->cap_names, name + 1);
		h->name_last[name] = -1;
	}
	size_t id = STRINDEX_NONE;
	if ((!uid || !*uid) && h->name_last[name] >= 0)
		id = (size_t)h->name_last[name];
	key_next(key, sizeof key, len, uid ? uid : ""); /* "ns\x1fpod\x1fuid" */
	if (id == STRINDEX_NONE)
		id = strindex_find(&h->pod_index, key);
	if (id == STRINDEX_NONE) {
		if (!add)
			return GP_OK;
		id = strindex_add(&h->pod_index, key, NULL);
		GP_GROW(h->pods, h->cap_pods, id + 1);
		struct hist_pod *p = &h->pods[id];
		memset(p, 0, sizeof *p);
		p->ns = hist_intern(h, ns);
		p->name = hist_intern(h, pod);
		p->node = p->owner_kind = p->owner_name = p->mig = p->model = HIST_NONE;
		for (size_t i = 0; i < HIST_N_LABELS; i++)
			p->labels[i] = HIST_NONE;
		p->created = p->scheduled = p->started = p->completed = NAN;
		p->first_seen = p->last_seen = NAN;
		p->workload = -1;
		p->same = h->name_last[name];
		h->name_last[name] = (int32_t)id;
		h->n_pods = id + 1;
	}
	*out = &h->pods[id];
	return GP_OK;
}

/* A value that must be a finite number (a time, a request). */
static int need_finite(const struct prom_series *s, struct gp_err *err)
{
	if (!s->has_value)
		return import_prom_error(err, s, NULL,
					 "expected an instant vector (value), got values");
	if (!isfinite(s->v))
		return import_prom_error(err, s, "value", "expected a finite number, got %g", s->v);
	return GP_OK;
}

/* A pod's sample that must be a finite number: the pod in *p, added when new. */
static int pod_sample(struct hist *h, const struct prom_series *s, struct hist_pod **p,
		      struct gp_err *err)
{
	int rc = need_finite(s, err);
	return rc ? rc : pod_of(h, s, true, p, err);
}

/* --- the pod files --------------------------------------------------------------- */

enum pod_field { F_CREATED, F_SCHEDULED, F_STARTED, F_COMPLETED, F_FIRST, F_LAST };

struct time_ctx {
	struct hist *h;
	enum pod_field field;
};

static int on_time(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct time_ctx *c = ctx;
	struct hist_pod *p;
	int rc = pod_sample(c->h, s, &p, err);
	if (rc)
		return rc;
	if (s->v < 0 || s->v > 1e11)
		return import_prom_error(err, s, "value", "expected Unix seconds, got %g", s->v);
	double *f[] = {&p->created,   &p->scheduled,  &p->started,
		       &p->completed, &p->first_seen, &p->last_seen};
	double *t = f[c->field];
	/* several series of one pod (a recreated pod's uids): the earliest first
	 * sighting, the latest of every other time */
	if (isnan(*t) || (c->field == F_FIRST ? s->v < *t : s->v > *t))
		*t = s->v;
	return GP_OK;
}

static const char *const phase_names[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

static int on_phase(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	struct hist_pod *p;
	int rc = pod_sample(h, s, &p, err);
	if (rc || s->v != 1)
		return rc;
	const char *phase = import_prom_label(s, "phase");
	for (int i = 0; phase && i < 5; i++)
		if (!strcmp(phase, phase_names[i])) {
			p->phase = (uint8_t)(i + 1);
			return GP_OK;
		}
	return import_prom_error(err, s, "phase",
				 "expected Pending, Running, Succeeded, Failed or Unknown");
}

static int on_owner(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	struct hist_pod *p;
	int rc = pod_of(h, s, true, &p, err);
	const char *kind = import_prom_label(s, "owner_kind"),
		   *name = import_prom_label(s, "owner_name");
	if (rc || !kind || !name || !strcmp(kind, "<none>") || !*kind)
		return rc;
	const char *ctl = import_prom_label(s, "owner_is_controller");
	if (p->owner_kind != HIST_NONE && ctl && strcmp(ctl, "true"))
		return GP_OK; /* the controller wins over other owners */
	p->owner_kind = hist_intern(h, kind);
	p->owner_name = hist_intern(h, name);
	return GP_OK;
}

static int on_info(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	struct hist_pod *p;
	int rc = pod_of(h, s, true, &p, err);
	if (rc)
		return rc;
	const char *node = import_prom_label(s, "node");
	if (node && *node)
		p->node = hist_intern(h, node);
	const char *kind = import_prom_label(s, "created_by_kind"),
		   *name = import_prom_label(s, "created_by_name");
	if (p->owner_kind == HIST_NONE && kind && name && *kind && strcmp(kind, "<none>")) {
		p->owner_kind = hist_intern(h, kind);
		p->owner_name = hist_intern(h, name);
	}
	return GP_OK;
}

/* kube_pod_labels' names: Prometheus' sanitised label keys. */
const char *const hist_label_names[HIST_N_LABELS] = {
	[HL_JOBSET] = "label_jobset_sigs_k8s_io_jobset_name",
	[HL_TRAINING] = "label_training_kubeflow_org_job_name",
	[HL_RAY_CRD] = "label_ray_io_originated_from_crd",
	[HL_RAY_CR] = "label_ray_io_originated_from_cr_name",
	[HL_RAY_CLUSTER] = "label_ray_io_cluster",
	[HL_POD_GROUP] = "label_kueue_x_k8s_io_pod_group_name",
	[HL_NOTEBOOK] = "label_notebook_name",
	[HL_COMPONENT] = "label_component",
	[HL_HUB_USER] = "label_hub_jupyter_org_username",
	[HL_TEMPLATE_HASH] = "label_pod_template_hash",
	[HL_QUEUE] = "label_kueue_x_k8s_io_queue_name",
};

static int on_labels(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	struct hist_pod *p;
	int rc = pod_of(h, s, true, &p, err);
	if (rc)
		return rc;
	/* one pass over the series' labels (the first of a name counts), then
	 * interned in the table's order */
	const char *v[HIST_N_LABELS] = {0};
	for (size_t j = 0; j < s->n_labels; j++) {
		const char *name = s->names[j];
		if (strncmp(name, "label_", 6))
			continue; /* every name of the table begins so */
		for (size_t i = 0; i < HIST_N_LABELS; i++)
			if (!strcmp(name + 6, hist_label_names[i] + 6)) {
				v[i] = v[i] ? v[i] : s->values[j];
				break;
			}
	}
	for (size_t i = 0; i < HIST_N_LABELS; i++)
		if (v[i] && *v[i])
			p->labels[i] = hist_intern(h, v[i]);
	return GP_OK;
}

/* "nvidia_com_mig_3g_40gb" -> "3g.40gb" (kube-state-metrics' sanitised name
 * of nvidia.com/mig-3g.40gb); NULL for other resources. */
static const char *mig_profile(const char *resource, char *buf, size_t size)
{
	if (strncmp(resource, "nvidia_com_mig_", 15))
		return NULL;
	snprintf(buf, size, "%s", resource + 15);
	char *u = strchr(buf, '_');
	if (!u || u == buf || u[-1] != 'g')
		return NULL;
	*u = '.';
	return buf;
}

struct req_ctx {
	struct hist *h;
	bool limits;
};

static int on_request(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct req_ctx *c = ctx;
	struct hist_pod *p;
	int rc = pod_sample(c->h, s, &p, err);
	if (rc)
		return rc;
	const char *res = import_prom_label(s, "resource");
	if (!res)
		return import_prom_error(err, s, NULL, "expected the label resource");
	if (s->v < 0 || s->v > 9.2e18)
		return import_prom_error(err, s, "value",
					 "expected a quantity from 0 to 2^63, got %g", s->v);
	/* kube-state-metrics labels the series with the pod's node, so a pod that
	 * waited and then ran has two series per container: per container and
	 * resource the largest counts, once */
	const char *container = import_prom_label(s, "container");
	char key[700], digits[24];
	size_t pod = (size_t)(p - c->h->pods), at = sizeof digits - 1;
	digits[at] = '\0';
	do
		digits[--at] = (char)('0' + pod % 10);
	while ((pod /= 10));
	size_t len = key_first(key, sizeof key, digits + at); /* "pod\x1fcontainer\x1fres\x1fL" */
	len = key_next(key, sizeof key, len, container ? container : "");
	len = key_next(key, sizeof key, len, res);
	key_next(key, sizeof key, len, c->limits ? "1" : "0");
	bool added;
	size_t id = strindex_add(&c->h->req_index, key, &added);
	GP_GROW(c->h->req_max, c->h->cap_req, id + 1);
	if (!added && s->v <= c->h->req_max[id])
		return GP_OK;
	double v = added ? s->v : s->v - c->h->req_max[id];
	c->h->req_max[id] = s->v;
	char buf[64];
	const char *mig = mig_profile(res, buf, sizeof buf);
	/* GPUs are extended resources: requests equal limits; a pod that gives
	 * limits only (the API server copies them) counts them */
	if (!strcmp(res, "nvidia_com_gpu") || !strcmp(res, "nvidia_com_gpu_shared")) {
		if (!c->limits || !p->gpu_requested)
			p->gpus += v;
		p->gpu_requested |= !c->limits;
		p->shared |= !strcmp(res, "nvidia_com_gpu_shared");
	} else if (mig) {
		if (!c->limits || !p->mig_requested) {
			p->mig = hist_intern(c->h, mig);
			p->mig_count += v;
		}
		p->mig_requested |= !c->limits;
	} else if (!c->limits && !strcmp(res, "cpu"))
		p->cpu += v;
	else if (!c->limits && !strcmp(res, "memory"))
		p->memory += v;
	return GP_OK;
}

/* --- owners, schedules ----------------------------------------------------------- */

/* ns\x1fname -> an interned value, in a strindex and a parallel array. */
static void map_put(struct hist *h, struct hist_map *m, const char *ns, const char *name,
		    uint32_t v)
{
	char key[600];
	key_next(key, sizeof key, key_first(key, sizeof key, ns), name);
	size_t id = strindex_add(&m->index, key, NULL);
	GP_GROW(m->values, m->cap, id + 1);
	m->values[id] = v;
	(void)h;
}

uint32_t hist_map_get(const struct hist *h, const struct hist_map *m, uint32_t ns, uint32_t name)
{
	char key[600];
	pair_key(h, ns, name, key, sizeof key);
	size_t id = strindex_find(&m->index, key);
	return id == STRINDEX_NONE ? HIST_NONE : m->values[id];
}

/* An owner series (kube_job_owner, kube_replicaset_owner): the object named
 * by label child in its namespace, owned by an object of kind owner_kind,
 * goes into m under its owner's name. */
static int owned_by(struct hist *h, const struct prom_series *s, const char *child,
		    const char *owner_kind, struct hist_map *m, struct gp_err *err)
{
	const char *ns = import_prom_label(s, "namespace"), *obj = import_prom_label(s, child);
	const char *kind = import_prom_label(s, "owner_kind"),
		   *name = import_prom_label(s, "owner_name");
	if (!ns || !obj)
		return import_prom_error(err, s, NULL, "expected the labels namespace and %s",
					 child);
	if (kind && name && !strcmp(kind, owner_kind) && *name)
		map_put(h, m, ns, obj, hist_intern(h, name));
	return GP_OK;
}

static int on_job_owner(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	return owned_by(h, s, "job_name", "CronJob", &h->job_cronjob, err);
}

static int on_rs_owner(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	return owned_by(h, s, "replicaset", "Deployment", &h->rs_deployment, err);
}

static int on_schedule(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	const char *ns = import_prom_label(s, "namespace"), *cj = import_prom_label(s, "cronjob");
	const char *sched = import_prom_label(s, "schedule");
	if (!ns || !cj || !sched)
		return import_prom_error(err, s, NULL,
					 "expected the labels namespace, cronjob and schedule");
	map_put(h, &h->cronjob_schedule, ns, cj, hist_intern(h, sched));
	return GP_OK;
}

/* --- DCGM and vLLM ------------------------------------------------------------------ */

enum series_field { S_ENGINE, S_SM, S_FB, S_VLLM_PROMPT, S_VLLM_GEN, S_VLLM_REQ, S_VLLM_HOURLY };

struct series_ctx {
	struct hist *h;
	enum series_field field;
};

/* dcgm-exporter's label name, or exported (exported_NAME), the one
 * Prometheus renames it to. */
static const char *label_or_exported(const struct prom_series *s, const char *exported,
				     const char *name)
{
	const char *v = import_prom_label(s, exported);
	return v && *v ? v : import_prom_label(s, name);
}

static int on_series(void *ctx, const struct prom_series *sr, struct gp_err *err)
{
	struct series_ctx *c = ctx;
	struct prom_series s = *sr;
	const char *ns = label_or_exported(sr, "exported_namespace", "namespace"),
		   *pod = label_or_exported(sr, "exported_pod", "pod");
	if (!ns || !pod || !*pod)
		return GP_OK; /* a GPU without a pod */
	char key[600];
	key_next(key, sizeof key, key_first(key, sizeof key, ns), pod);
	size_t name = strindex_find(&c->h->name_index, key);
	if (name == STRINDEX_NONE)
		return GP_OK; /* a pod without GPUs requested, or outside the period */
	struct hist_pod *p = &c->h->pods[c->h->name_last[name]];
	if (c->field == S_VLLM_HOURLY) {
		for (size_t i = 0; i < s.n_points; i++) {
			if (!isfinite(s.vs[i]) || s.vs[i] < 0)
				return import_prom_error(
					err, &s, "value",
					"expected a count >= 0, got %g at point %zu", s.vs[i], i);
			double rel = s.ts[i] - (double)c->h->from;
			if (rel < 0 || rel > (double)(c->h->to - c->h->from))
				continue;
			int64_t day = (int64_t)floor(s.ts[i] / 86400.0);
			int hour = (int)floor(fmod(s.ts[i], 86400.0) / 3600.0);
			/* increase(...[1h]) at t counts the hour before t */
			hour = (hour + 23) % 24;
			(void)day;
			p->vllm_hourly[hour] += s.vs[i];
			p->vllm_hours[hour]++;
		}
		p->vllm = true;
		const char *m = import_prom_label(sr, "model_name");
		if (m && *m)
			p->model = hist_intern(c->h, m);
		return GP_OK;
	}
	int rc = need_finite(&s, err);
	if (rc)
		return rc;
	double v = s.v;
	bool ratio = c->field == S_ENGINE || c->field == S_SM;
	if (ratio && (v < 0 || v > 1))
		return import_prom_error(err, &s, "value", "expected a ratio from 0 to 1, got %g",
					 v);
	if (v < 0)
		return import_prom_error(err, &s, "value", "expected a value >= 0, got %g", v);
	/* DCGM's series are by name: every pod of that name ran as the series
	 * says (vLLM's counters go to the latest, counted once) */
	for (struct hist_pod *q = p; c->field <= S_FB && q;
	     q = q->same >= 0 ? &c->h->pods[q->same] : NULL) {
		if (c->field == S_ENGINE)
			q->busy = v, q->has_busy = true;
		else if (c->field == S_SM)
			q->sm = v, q->has_sm = true;
		else
			q->fb = fmax(q->fb, v), q->has_fb = true;
	}
	switch (c->field) {
	case S_ENGINE:
	case S_SM:
	case S_FB: break;
	case S_VLLM_PROMPT: p->vllm_prompt += v, p->vllm = true; break;
	case S_VLLM_GEN: p->vllm_gen += v, p->vllm = true; break;
	case S_VLLM_REQ: p->vllm_requests += v, p->vllm = true; break;
	case S_VLLM_HOURLY: break;
	}
	const char *m = import_prom_label(sr, "model_name");
	if (c->field >= S_VLLM_PROMPT && m && *m)
		p->model = hist_intern(c->h, m);
	return GP_OK;
}

/* --- nodes: the DIR's series as `kubectl get nodes -o json` ------------------------- */

/* kube_node_labels' sanitised names of the labels import_nodes.c reads. */
static const char *const node_labels[][2] = {
	{"label_nvidia_com_gpu_product", "nvidia.com/gpu.product"},
	{"label_nvidia_com_gpu_count", "nvidia.com/gpu.count"},
	{"label_nvidia_com_gpu_replicas", "nvidia.com/gpu.replicas"},
	{"label_nvidia_com_gpu_sharing_strategy", "nvidia.com/gpu.sharing-strategy"},
	{"label_nvidia_com_mig_strategy", "nvidia.com/mig.strategy"},
	{"label_kubernetes_io_hostname", "kubernetes.io/hostname"},
};

static struct hist_node *node_of(struct hist *h, const struct prom_series *s, struct gp_err *err,
				 int *rc)
{
	const char *name = import_prom_label(s, "node");
	*rc = GP_OK;
	if (!name || !*name) {
		*rc = import_prom_error(err, s, NULL, "expected the label node");
		return NULL;
	}
	bool added;
	size_t id = strindex_add(&h->node_index, name, &added);
	if (added) {
		GP_GROW(h->nodes, h->cap_nodes, id + 1);
		memset(&h->nodes[id], 0, sizeof h->nodes[id]);
		h->nodes[id].name = hist_intern(h, name);
		h->n_nodes = id + 1;
	}
	return &h->nodes[id];
}

static int on_node_labels(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	int rc;
	struct hist_node *n = node_of(h, s, err, &rc);
	for (size_t i = 0; n && i < sizeof node_labels / sizeof *node_labels; i++) {
		const char *v = import_prom_label(s, node_labels[i][0]);
		if (v)
			n->labels[i] = hist_intern(h, v);
		else if (!n->seen_labels)
			n->labels[i] = HIST_NONE;
	}
	if (n)
		n->seen_labels = true;
	return rc;
}

static int on_node_alloc(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	int rc = need_finite(s, err);
	struct hist_node *n = rc ? NULL : node_of(h, s, err, &rc);
	if (!n)
		return rc;
	const char *res = import_prom_label(s, "resource");
	if (!res)
		return import_prom_error(err, s, NULL, "expected the label resource");
	if (s->v < 0)
		return import_prom_error(err, s, "value", "expected a quantity >= 0, got %g", s->v);
	char buf[64], key[80];
	const char *mig = mig_profile(res, buf, sizeof buf);
	if (!strcmp(res, "cpu"))
		n->cpu = s->v;
	else if (!strcmp(res, "memory"))
		n->memory = s->v;
	else if (!strcmp(res, "nvidia_com_gpu") || !strcmp(res, "nvidia_com_gpu_shared"))
		n->gpus += s->v;
	else if (mig && n->n_mig < HIST_MAX_MIG) {
		snprintf(key, sizeof key, "nvidia.com/mig-%s", mig);
		n->mig[n->n_mig] = hist_intern(h, key);
		n->mig_count[n->n_mig++] = s->v;
	}
	return GP_OK;
}

static int on_node_taint(void *ctx, const struct prom_series *s, struct gp_err *err)
{
	struct hist *h = ctx;
	int rc;
	struct hist_node *n = node_of(h, s, err, &rc);
	const char *key = import_prom_label(s, "key"), *effect = import_prom_label(s, "effect");
	if (!n || !key || !effect || n->n_taints == HIST_MAX_TAINTS)
		return rc;
	const char *value = import_prom_label(s, "value");
	size_t t = n->n_taints++;
	n->taint_key[t] = hist_intern(h, key);
	n->taint_value[t] = hist_intern(h, value ? value : "");
	n->taint_effect[t] = hist_intern(h, effect);
	return GP_OK;
}

/* A string member of a kubectl object. */
static void member(struct jsonw *w, const char *key, const char *v)
{
	jsonw_key(w, key);
	jsonw_string(w, v);
}

/* A quantity member: Kubernetes writes quantities as strings. */
static void quantity(struct jsonw *w, const char *key, const char *fmt, double v)
{
	char buf[64];
	snprintf(buf, sizeof buf, fmt, v);
	member(w, key, buf);
}

/* The nodes as a kubectl List, for import_nodes.c's pools. */
static char *nodes_json(const struct hist *h, size_t *len)
{
	static const struct jsonw_style items_style = {"\n", "\n", "", " "};
	char *text = NULL;
	FILE *out = open_memstream(&text, len);
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &jsonw_inline);
	member(&w, "kind", "List");
	jsonw_key(&w, "items");
	jsonw_array(&w, &items_style);
	for (size_t i = 0; i < h->n_nodes; i++) {
		const struct hist_node *n = &h->nodes[i];
		jsonw_object(&w, &jsonw_inline);
		jsonw_key(&w, "metadata");
		jsonw_object(&w, &jsonw_inline);
		member(&w, "name", hist_str(h, n->name));
		jsonw_key(&w, "labels");
		jsonw_object(&w, &jsonw_inline);
		for (size_t k = 0; k < sizeof node_labels / sizeof *node_labels; k++)
			if (n->labels[k] != HIST_NONE && n->seen_labels)
				member(&w, node_labels[k][1], hist_str(h, n->labels[k]));
		jsonw_close(&w);
		jsonw_close(&w);
		jsonw_key(&w, "spec");
		jsonw_object(&w, &jsonw_inline);
		jsonw_key(&w, "taints");
		jsonw_array(&w, &jsonw_inline);
		for (size_t t = 0; t < n->n_taints; t++) {
			jsonw_object(&w, &jsonw_inline);
			member(&w, "key", hist_str(h, n->taint_key[t]));
			member(&w, "value", hist_str(h, n->taint_value[t]));
			member(&w, "effect", hist_str(h, n->taint_effect[t]));
			jsonw_close(&w);
		}
		jsonw_close(&w);
		jsonw_close(&w);
		jsonw_key(&w, "status");
		jsonw_object(&w, &jsonw_inline);
		jsonw_key(&w, "allocatable");
		jsonw_object(&w, &jsonw_inline);
		quantity(&w, "cpu", "%.17g", n->cpu);
		quantity(&w, "memory", "%.0f", n->memory);
		if (n->gpus > 0)
			quantity(&w, "nvidia.com/gpu", "%.0f", n->gpus);
		for (size_t m = 0; m < n->n_mig; m++)
			quantity(&w, hist_str(h, n->mig[m]), "%.0f", n->mig_count[m]);
		jsonw_close(&w);
		jsonw_close(&w);
		jsonw_close(&w);
	}
	jsonw_close(&w);
	jsonw_close(&w);
	fputc('\n', out);
	fclose(out);
	return text;
}

/* --- reading the DIR ---------------------------------------------------------------- */

static int dir_path(const struct hist *h, const char *file, char *buf, size_t size)
{
	return snprintf(buf, size, "%s/%s", h->dir, file) >= (int)size ? GP_EINPUT : GP_OK;
}

/* Reads DIR/file with fn; an optional file may be absent. */
static int read_file(struct hist *h, const char *file, bool required, prom_fn fn, void *ctx)
{
	char path[4096];
	struct stat st;
	if (dir_path(h, file, path, sizeof path))
		return gp_errkindf(h->err, GP_ERR_LIMIT, GP_EINPUT, "--history %s: path too long",
				   h->dir);
	if (stat(path, &st) != 0) {
		if (!required && errno == ENOENT)
			return GP_OK;
		return gp_located(h->err, (struct srcloc){path, 0, 0},
				  "cannot read: %s; expected the file "
				  "scripts/export-history.sh writes (%s)",
				  strerror(errno), required ? "required" : "optional");
	}
	/* the path outlives the call: errors and locations point at it */
	h->paths = gp_xrealloc(h->paths, (h->n_paths + 1) * sizeof *h->paths);
	char *kept = gp_xstrdup(path);
	h->paths[h->n_paths++] = kept;
	h->n_files++;
	return import_prom_read(kept, fn, ctx, h->err);
}

/* meta.json: the format, FROM and TO. */
static int read_meta(struct hist *h)
{
	char path[4096];
	struct stat st;
	dir_path(h, "meta.json", path, sizeof path);
	if (stat(path, &st) != 0) /* not a folder the export wrote */
		return gp_located(h->err, (struct srcloc){path, 0, 0},
				  "cannot read: %s; expected the folder scripts/export-history.sh "
				  "writes, with its meta.json",
				  strerror(errno));
	h->paths = gp_xrealloc(h->paths, (h->n_paths + 1) * sizeof *h->paths);
	char *kept = gp_xstrdup(path);
	h->paths[h->n_paths++] = kept;
	struct imp_file f;
	int rc = imp_open(&f, kept, h->err);
	const char *format = NULL, *from = NULL, *to = NULL;
	if (!rc && f.tree->root->kind != YNODE_MAP)
		rc = imp_error(&f, f.tree->root, NULL,
			       "expected an object with format, from and to");
	if (!rc)
		rc = imp_str(&f, f.tree->root, "format", &format);
	if (!rc && (!format || strcmp(format, "gpuplan-history/1")))
		rc = imp_error(&f, ynode_get(f.tree->root, "format"), "format",
			       "expected gpuplan-history/1, got '%s'", format ? format : "nothing");
	if (!rc)
		rc = imp_time(&f, f.tree->root, "from", &h->from);
	if (!rc)
		rc = imp_time(&f, f.tree->root, "to", &h->to);
	if (!rc)
		rc = imp_str(&f, f.tree->root, "from", &from);
	if (!rc)
		rc = imp_str(&f, f.tree->root, "to", &to);
	if (!rc && (!from || !to))
		rc = imp_error(&f, f.tree->root, NULL, "expected from and to (RFC 3339)");
	if (!rc && h->to <= h->from)
		rc = imp_error(&f, ynode_get(f.tree->root, "to"), "to",
			       "%s is not after from %s; expected a period", to, from);
	if (!rc) {
		snprintf(h->from_text, sizeof h->from_text, "%s", from);
		snprintf(h->to_text, sizeof h->to_text, "%s", to);
	}
	imp_close(&f);
	return rc;
}

static int read_dir(struct hist *h)
{
	int rc = read_meta(h);
	static const struct {
		const char *file;
		enum pod_field field;
	} times[] = {
		{"pod_created.json", F_CREATED},  {"pod_scheduled.json", F_SCHEDULED},
		{"pod_started.json", F_STARTED},  {"pod_completed.json", F_COMPLETED},
		{"pod_first_seen.json", F_FIRST}, {"pod_last_seen.json", F_LAST},
	};
	for (size_t i = 0; !rc && i < sizeof times / sizeof *times; i++) {
		struct time_ctx c = {h, times[i].field};
		rc = read_file(h, times[i].file, true, on_time, &c);
	}
	struct req_ctx req = {h, false}, lim = {h, true};
	if (!rc)
		rc = read_file(h, "pod_phase.json", true, on_phase, h);
	if (!rc)
		rc = read_file(h, "pod_owner.json", true, on_owner, h);
	if (!rc)
		rc = read_file(h, "pod_info.json", true, on_info, h);
	if (!rc)
		rc = read_file(h, "pod_labels.json", false, on_labels, h);
	if (!rc)
		rc = read_file(h, "pod_requests.json", true, on_request, &req);
	if (!rc)
		rc = read_file(h, "pod_limits.json", true, on_request, &lim);
	if (!rc)
		rc = read_file(h, "job_owner.json", false, on_job_owner, h);
	if (!rc)
		rc = read_file(h, "replicaset_owner.json", false, on_rs_owner, h);
	if (!rc)
		rc = read_file(h, "cronjob_schedule.json", false, on_schedule, h);
	if (!rc && !h->o->nodes)
		rc = read_file(h, "node_labels.json", true, on_node_labels, h);
	if (!rc && !h->o->nodes)
		rc = read_file(h, "node_allocatable.json", true, on_node_alloc, h);
	if (!rc && !h->o->nodes)
		rc = read_file(h, "node_taints.json", false, on_node_taint, h);
	static const struct {
		const char *file;
		enum series_field field;
	} series[] = {
		{"dcgm_engine.json", S_ENGINE},
		{"dcgm_sm.json", S_SM},
		{"dcgm_fb_used.json", S_FB},
		{"vllm_requests_hourly.json", S_VLLM_HOURLY},
		{"vllm_prompt_tokens.json", S_VLLM_PROMPT},
		{"vllm_generation_tokens.json", S_VLLM_GEN},
		{"vllm_requests.json", S_VLLM_REQ},
	};
	for (size_t i = 0; !rc && i < sizeof series / sizeof *series; i++) {
		struct series_ctx c = {h, series[i].field};
		rc = read_file(h, series[i].file, false, on_series, &c);
	}
	return rc;
}

/* --- grouping ------------------------------------------------------------------------- */

/* Whether seg (len characters) looks generated: all digits (a CronJob's
 * Job, an index), 5 characters of the alphabet generateName draws from
 * (k8s.io/apimachinery/pkg/util/rand: "bcdfghjklmnpqrstvwxz2456789", no
 * vowels, so no word), or 8 to 10 hex digits with a digit (a
 * pod-template-hash, a Job's hash). */
static bool generated(const char *seg, size_t len)
{
	bool digit = false, rand5 = len == 5, hex = true, all_digits = true;
	for (size_t i = 0; i < len; i++) {
		char c = seg[i];
		digit |= isdigit((unsigned char)c) != 0;
		all_digits &= isdigit((unsigned char)c) != 0;
		rand5 &= c && strchr("bcdfghjklmnpqrstvwxz2456789", c) != NULL;
		hex &= isdigit((unsigned char)c) || (c >= 'a' && c <= 'f');
	}
	if (!len)
		return false;
	return all_digits || rand5 || (len >= 8 && len <= 10 && hex && digit);
}

void hist_stem(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s", name);
	for (;;) {
		char *dash = strrchr(out, '-');
		if (!dash || dash == out || !generated(dash + 1, strlen(dash + 1)))
			return;
		*dash = '\0';
	}
}

/* A name the scenario takes: [a-z0-9-] (others become '-'), at most 56. */
static void scenario_name(const char *want, char *out, size_t size)
{
	size_t n = 0;
	for (const char *c = want; *c && n + 1 < size && n < 56; c++) {
		char x = (char)tolower((unsigned char)*c);
		bool ok = (x >= 'a' && x <= 'z') || (x >= '0' && x <= '9');
		if (!ok && (n == 0 || out[n - 1] == '-'))
			continue;
		out[n++] = ok ? x : '-';
	}
	while (n && out[n - 1] == '-')
		n--;
	out[n] = '\0';
	if (!n)
		snprintf(out, size, "workload");
}

/* The workload (kind, namespace, name) of pod p, and its instance (the
 * Job, JobSet ... one arrival stands for); NULL: left out. */
static const char *controller(struct hist *h, const struct hist_pod *p, char *name, size_t size,
			      char *instance, size_t isize, bool *service, bool *gang)
{
	size_t self = (size_t)(p - h->pods);
	const char *kind = hist_str(h, p->owner_kind), *owner = hist_str(h, p->owner_name);
	const char *pod = hist_str(h, p->name);
	*service = *gang = false;
#define LABEL(i) (p->labels[i] != HIST_NONE ? hist_str(h, p->labels[i]) : NULL)
	const char *v;
	if (!strcmp(kind, "DaemonSet") || !strcmp(kind, "Node"))
		return NULL;
	const char *crd = LABEL(HL_RAY_CRD), *k = NULL;
	if ((v = LABEL(HL_JOBSET)))
		k = "JobSet";
	else if ((v = LABEL(HL_TRAINING)))
		k = "PyTorchJob";
	else if ((v = LABEL(HL_POD_GROUP)))
		k = "PodGroup";
	else if ((v = LABEL(HL_RAY_CR)) && crd && !strcmp(crd, "RayJob"))
		k = "RayJob";
	else if ((v = LABEL(HL_RAY_CLUSTER)))
		k = "RayCluster";
	if (k && v) {
		snprintf(instance, isize, "%s", v);
		hist_stem(v, name, size);
		*gang = true;
		return k;
	}
	if ((v = LABEL(HL_NOTEBOOK))) {
		snprintf(name, size, "%s", v);
		snprintf(instance, isize, "\x1e%zu", self); /* the pod itself */
		*service = true;
		return "Notebook";
	}
	if ((v = LABEL(HL_COMPONENT)) && !strcmp(v, "singleuser-server")) {
		snprintf(name, size, "jupyterhub");
		snprintf(instance, isize, "\x1e%zu", self); /* the pod itself */
		*service = true;
		return "JupyterHub";
	}
	if (!strcmp(kind, "Job")) {
		uint32_t cj = hist_map_get(h, &h->job_cronjob, p->ns, p->owner_name);
		snprintf(instance, isize, "%s", owner);
		if (cj != HIST_NONE) {
			snprintf(name, size, "%s", hist_str(h, cj));
			return "CronJob";
		}
		hist_stem(owner, name, size);
		return "Job";
	}
	snprintf(instance, isize, "\x1e%zu", self); /* the pod itself */
	if (!strcmp(kind, "ReplicaSet")) {
		uint32_t d = hist_map_get(h, &h->rs_deployment, p->ns, p->owner_name);
		const char *hash = LABEL(HL_TEMPLATE_HASH);
		size_t len = strlen(owner);
		*service = true;
		if (d != HIST_NONE)
			snprintf(name, size, "%s", hist_str(h, d));
		else if (hash && len > strlen(hash) + 1 &&
			 !strcmp(owner + len - strlen(hash), hash))
			snprintf(name, size, "%.*s", (int)(len - strlen(hash) - 1), owner);
		else
			hist_stem(owner, name, size);
		return "Deployment";
	}
	if (!strcmp(kind, "StatefulSet")) {
		snprintf(name, size, "%s", owner);
		*service = true;
		return "StatefulSet";
	}
	if (*kind) {
		snprintf(name, size, "%s", owner);
		return kind;
	}
	hist_stem(pod, name, size);
	return "Pod";
#undef LABEL
}

static int32_t workload_of(struct hist *h, const char *kind, const struct hist_pod *p,
			   const char *name, bool service, bool gang)
{
	char key[700];
	snprintf(key, sizeof key, "%s\x1f%s\x1f%s", kind, hist_str(h, p->ns), name);
	bool added;
	size_t id = strindex_add(&h->wl_index, key, &added);
	if (added) {
		GP_GROW(h->wls, h->cap_wls, id + 1);
		struct hist_wl *w = &h->wls[id];
		memset(w, 0, sizeof *w);
		w->kind = hist_intern(h, kind);
		w->ns = p->ns;
		w->ctl = hist_intern(h, name);
		w->service = service;
		w->gang = gang;
		w->queue = HIST_NONE;
		h->n_wls = id + 1;
	}
	struct hist_wl *w = &h->wls[id];
	if (w->queue == HIST_NONE && p->labels[HL_QUEUE] != HIST_NONE)
		w->queue = p->labels[HL_QUEUE], w->queue_pod = p->name;
	return (int32_t)id;
}

/* Scenario names: the controller's, then namespace-name, then numbered. */
static void name_workloads(struct hist *h)
{
	struct strindex used = {0};
	strindex_add(&used, "all", NULL);
	strindex_add(&used, "__idle__", NULL);
	for (size_t i = 0; i < h->n_wls; i++) {
		struct hist_wl *w = &h->wls[i];
		char want[300], base[64];
		scenario_name(hist_str(h, w->ctl), base, sizeof base);
		snprintf(w->name, sizeof w->name, "%s", base);
		if (strindex_find(&used, w->name) != STRINDEX_NONE) {
			snprintf(want, sizeof want, "%s-%s", hist_str(h, w->ns),
				 hist_str(h, w->ctl));
			scenario_name(want, w->name, sizeof w->name);
		}
		for (unsigned n = 2; strindex_find(&used, w->name) != STRINDEX_NONE; n++)
			snprintf(w->name, sizeof w->name, "%.56s-%u", base, n);
		strindex_add(&used, w->name, NULL);
	}
	strindex_free(&used);
}

/* Whether some pool offers what pod p asks for (the loader refuses a
 * request no pool can hold): its MIG profile, or as many GPUs (or replicas)
 * on one node. */
static bool offered(const struct hist *h, const struct hist_pod *p)
{
	for (size_t i = 0; i < h->im->n_pools; i++) {
		const struct imp_shape *sh = &h->im->pools[i].shape;
		for (size_t m = 0; p->mig != HIST_NONE && m < sh->n_mig; m++)
			if (!strcmp(sh->mig[m].profile->name, hist_str(h, p->mig)))
				return true;
		int32_t units = sh->gpus * (sh->replicas > 1 ? sh->replicas : 1);
		if (p->mig == HIST_NONE && sh->gpu && sh->sharing != SHARING_MIG &&
		    units >= p->gpus)
			return true;
	}
	return false;
}

static void group(struct hist *h)
{
	for (size_t i = 0; i < h->n_pods; i++) {
		struct hist_pod *p = &h->pods[i];
		char name[256], instance[256];
		bool service, gang;
		if (p->gpus <= 0 && p->mig == HIST_NONE) {
			h->n_cpu_only++;
			continue;
		}
		if (!offered(h, p)) {
			imp_warn(h->im,
				 "pods asking for what no node offers are left out, e.g. %s/%s",
				 hist_str(h, p->ns), hist_str(h, p->name));
			continue;
		}
		const char *kind = controller(h, p, name, sizeof name, instance, sizeof instance,
					      &service, &gang);
		if (!kind)
			continue;
		p->workload = workload_of(h, kind, p, name, service, gang);
		char key[600];
		snprintf(key, sizeof key, "%d\x1f%s", (int)p->workload, instance);
		p->instance = (uint32_t)strindex_add(&h->instance_index, key, NULL);
		h->wls[p->workload].n_pods++;
	}
	name_workloads(h);
}

/* --- the whole ------------------------------------------------------------------------- */

static void hist_free(struct hist *h)
{
	free(h->pods);
	free(h->nodes);
	free(h->wls);
	strindex_free(&h->strings);
	strindex_free(&h->pod_index);
	strindex_free(&h->name_index);
	strindex_free(&h->req_index);
	free(h->req_max);
	free(h->name_last);
	strindex_free(&h->node_index);
	strindex_free(&h->wl_index);
	strindex_free(&h->instance_index);
	struct hist_map *maps[] = {&h->job_cronjob, &h->rs_deployment, &h->cronjob_schedule};
	for (size_t i = 0; i < 3; i++) {
		strindex_free(&maps[i]->index);
		free(maps[i]->values);
	}
	for (size_t i = 0; i < h->n_paths; i++)
		free(h->paths[i]);
	free(h->paths);
	free(h->nodes_text);
	free(h->slot);
	strindex_free(&h->imp_nodes);
}

/* A --dcgm sample of pod ns/pod: to the latest pod of that name in the
 * history (a scrape is of the pods alive when it was taken); others are
 * pods the history does not hold, left out. */
static void dcgm_scrape(void *ctx, int field, const char *ns, const char *pod, double v)
{
	struct hist *h = ctx;
	char key[600];
	snprintf(key, sizeof key, "%s\x1f%s", ns, pod);
	size_t id = strindex_find(&h->name_index, key);
	if (id == STRINDEX_NONE || h->name_last[id] < 0)
		return;
	struct hist_pod *p = &h->pods[h->name_last[id]];
	if (field == 0)
		p->x_busy += v, p->nx_busy++;
	else if (field == 1)
		p->x_sm += v, p->nx_sm++;
	else if (field == 2)
		p->x_fb += v, p->nx_fb++;
}

int import_history_build(const struct import_options *o, struct import_result *r,
			 struct gp_err *err)
{
	memset(r, 0, sizeof *r);
	struct imp im = {.o = o, .err = err, .r = r};
	im.horizon = o->horizon > 0 ? o->horizon : SIM_DAY;
	struct hist h = {.o = o, .err = err, .dir = o->history, .im = &im};
	struct stat st;
	int rc = GP_OK;
	if (o->name && !scenario_name_ok(o->name))
		rc = gp_errorf(err, GP_EINPUT, "--name '%s': expected %s, at most %d characters",
			       o->name, SCENARIO_NAME_HINT, SCENARIO_MAX_NAME);
	else if (stat(o->history, &st) != 0 || !S_ISDIR(st.st_mode))
		rc = gp_errorf(err, GP_EINPUT,
			       "--history %s: not a directory; expected the DIR "
			       "scripts/export-history.sh wrote",
			       o->history);
	if (!rc)
		rc = read_dir(&h);
	if (!rc && !o->nodes) {
		char name[4200];
		snprintf(name, sizeof name, "%s/node_labels.json and node_allocatable.json",
			 o->history);
		h.paths = gp_xrealloc(h.paths, (h.n_paths + 1) * sizeof *h.paths);
		h.paths[h.n_paths] = gp_xstrdup(name);
		h.nodes_text = nodes_json(&h, &h.nodes_len);
		rc = imp_open_text(&im.nodes_f, h.paths[h.n_paths++], h.nodes_text, h.nodes_len,
				   err);
	}
	if (!rc)
		rc = imp_read_nodes(&im);
	/* the pools' prices as the snapshot import derives them: OpenCost's
	 * rates per GPU type, --prices over them */
	if (!rc && o->kueue)
		rc = imp_read_kueue(&im);
	if (!rc && o->dcgm) {
		im.dcgm_sink = dcgm_scrape, im.dcgm_ctx = &h;
		rc = imp_read_dcgm(&im);
	}
	if (!rc && o->opencost)
		rc = imp_read_opencost(&im);
	if (!rc && o->prices)
		rc = imp_read_prices(&im);
	if (!rc) {
		group(&h);
		rc = hist_learn(&h);
	}
	hist_free(&h);
	imp_free(&im);
	if (rc) {
		import_result_free(r);
		memset(r, 0, sizeof *r);
	}
	return rc;
}
