/*
 * import_pods.c - `kubectl get pods -A -o json` as struct imp_pod.
 *
 * Shapes (Kubernetes core/v1 Pod): metadata.{name, namespace, labels,
 * ownerReferences, creationTimestamp}; spec.{nodeName, containers[],
 * initContainers[], nodeSelector, affinity.nodeAffinity.
 * requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[],
 * tolerations[], priority, preemptionPolicy, terminationGracePeriodSeconds,
 * restartPolicy, schedulingGates[]};
 * status.{phase, conditions[], containerStatuses[].state}.
 * A pod's cpu and memory request is the larger of its containers' sum and
 * its largest init container (kube-scheduler's effective request); extended
 * resources (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile>) come from limits,
 * which the device plugin's resources must set (requests equal limits).
 */
#include "import_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const effect_names[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};

/* The owner with controller: true, as "Kind namespace/name"; a ReplicaSet
 * that a Deployment made (its name ends in -<pod-template-hash>) is named by
 * the Deployment. */
static int read_owner(struct imp *im, const struct ynode *meta, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *owners = NULL, *labels = NULL;
	const char *kind = "Pod", *name = p->name, *hash = NULL;
	int rc = imp_seq(f, meta, "ownerReferences", &owners);
	if (!rc)
		rc = imp_map(f, meta, "labels", &labels);
	const char *group = NULL;
	if (!rc && labels)
		rc = imp_str(f, labels, "pod-template-hash", &hash);
	/* Kueue's plain-pod groups (kueue.x-k8s.io/pod-group-name) are one job. */
	if (!rc && labels && !owners)
		rc = imp_str(f, labels, "kueue.x-k8s.io/pod-group-name", &group);
	if (group) {
		size_t at = imp_push_key(f, "labels");
		rc = imp_label_value(f, ynode_get(labels, "kueue.x-k8s.io/pod-group-name"),
				     "kueue.x-k8s.io/pod-group-name", group, "the pod group");
		imp_pop(f, at);
		kind = "PodGroup", name = group;
	}
	for (size_t i = 0; !rc && owners && i < owners->n; i++) {
		const struct ynode *o = owners->items[i], *ctl = ynode_get(o, "controller");
		if (owners->n > 1 &&
		    !(ctl && ctl->kind == YNODE_SCALAR && !strcmp(ctl->value, "true")))
			continue;
		size_t base = imp_push_key(f, "ownerReferences");
		imp_push_index(f, i);
		rc = imp_str(f, o, "kind", &kind);
		if (!rc)
			rc = imp_str(f, o, "name", &name);
		if (!rc && (!kind || !name))
			rc = imp_error(f, o, NULL, "expected an owner with kind and name");
		if (!rc)
			rc = imp_dns_name(f, ynode_get(o, "kind"), "kind", kind, IMP_DNS_KIND,
					  "owner kind");
		if (!rc)
			rc = imp_dns_name(f, ynode_get(o, "name"), "name", name, IMP_DNS_SUBDOMAIN,
					  "owner name");
		imp_pop(f, base);
		break;
	}
	if (rc)
		return rc;
	size_t len = strlen(name);
	if (!strcmp(kind, "ReplicaSet") && hash && len > strlen(hash) + 1 &&
	    !strcmp(name + len - strlen(hash), hash) && name[len - strlen(hash) - 1] == '-') {
		kind = "Deployment";
		len -= strlen(hash) + 1;
	}
	snprintf(p->controller, sizeof p->controller, "%s %s/%.*s", kind, p->ns, (int)len, name);
	p->node_level = !strcmp(kind, "DaemonSet") || !strcmp(kind, "Node");
	return GP_OK;
}

/* Adds the resources of one container: limits for extended resources,
 * requests for cpu and memory (into *cpu, *memory). */
static int read_container(struct imp *im, const struct ynode *c, struct imp_pod *p, double *cpu,
			  double *memory, int64_t *gpus)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *res = NULL, *lim = NULL, *req = NULL;
	int rc = imp_map(f, c, "resources", &res);
	if (rc || !res)
		return rc;
	size_t base = imp_push_key(f, "resources");
	if (!(rc = imp_map(f, res, "limits", &lim)))
		rc = imp_map(f, res, "requests", &req);
	for (size_t i = 0; !rc && lim && i < lim->n; i++) {
		const char *k = lim->keys[i];
		double v;
		size_t at = imp_push_key(f, "limits");
		bool shared = !strcmp(k, "nvidia.com/gpu.shared"); /* renameByDefault */
		if (!strcmp(k, "nvidia.com/gpu") || shared || !strncmp(k, "nvidia.com/mig-", 15)) {
			rc = imp_quantity(f, lim->items[i], k, &v);
			if (!rc && (v > INT32_MAX || v != floor(v)))
				rc = imp_error(f, lim->items[i], k,
					       "expected a whole number of units, at most %d",
					       INT32_MAX);
			/* Summed in 64 bits, each term at most INT32_MAX: the pod's
			 * total is checked against int32 in read_containers. */
			if (!rc && k[11] == 'g' && (*gpus += (int64_t)v) > INT32_MAX)
				rc = imp_error(f, lim->items[i], k,
					       "the pod's containers ask for %lld GPUs in all; "
					       "expected at most %d",
					       (long long)*gpus, INT32_MAX);
			if (!rc && k[11] == 'g') {
				p->shared |= shared && v > 0;
			} else if (!rc && v > 0) {
				if (p->mig && strcmp(p->mig, k + 15))
					imp_warn(im, "pod %s/%s asks for two MIG profiles; kept %s",
						 p->ns, p->name, p->mig);
				else
					p->mig = k + 15;
				if (v > 1)
					imp_warn(im,
						 "pod %s/%s asks for %g MIG instances; gpuplan "
						 "gives a pod one",
						 p->ns, p->name, v);
			}
		}
		imp_pop(f, at);
	}
	/* The device plugin's resources cannot be overcommitted: Kubernetes
	 * refuses a request without an equal limit (pkg/apis/core/validation
	 * ValidateResourceRequirements: "Limit must be set for non
	 * overcommitable resources", "must be equal to ... limit"). */
	for (size_t i = 0; !rc && req && i < req->n; i++) {
		const char *k = req->keys[i];
		if (strcmp(k, "nvidia.com/gpu") && strcmp(k, "nvidia.com/gpu.shared") &&
		    strncmp(k, "nvidia.com/mig-", 15))
			continue;
		size_t at = imp_push_key(f, "requests");
		double v, lv = -1;
		const struct ynode *l = lim ? ynode_get(lim, k) : NULL;
		rc = imp_quantity(f, req->items[i], k, &v);
		if (!rc && l) {
			size_t la = imp_push_key(f, "limits");
			rc = imp_quantity(f, l, k, &lv);
			imp_pop(f, la);
		}
		if (!rc && v != lv)
			rc = l ? imp_error(
					 f, req->items[i], k,
					 "expected the request to equal the limit, '%s' (Kubernetes "
					 "refuses a pod whose %s request differs from its limit)",
					 l->value ? l->value : "", k)
			       : imp_error(
					 f, req->items[i], k,
					 "a request for %s without a limit; expected an equal limit "
					 "(Kubernetes refuses the pod: the resource cannot be "
					 "overcommitted)",
					 k);
		imp_pop(f, at);
	}
	/* A request defaults to the limit when only the limit is set. */
	const struct ynode *src[2] = {req, lim};
	double got[2] = {-1, -1};
	const char *names[2] = {"cpu", "memory"};
	for (int r = 0; !rc && r < 2; r++)
		for (int s = 0; !rc && s < 2 && got[r] < 0; s++) {
			const struct ynode *v = src[s] ? ynode_get(src[s], names[r]) : NULL;
			if (!v)
				continue;
			size_t at = imp_push_key(f, s ? "limits" : "requests");
			rc = imp_quantity(f, v, names[r], &got[r]);
			imp_pop(f, at);
		}
	imp_pop(f, base);
	*cpu += got[0] > 0 ? got[0] : 0;
	*memory += got[1] > 0 ? got[1] : 0;
	return rc;
}

static int read_containers(struct imp *im, const struct ynode *spec, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *cs = NULL, *init = NULL;
	int rc = imp_seq(f, spec, "containers", &cs);
	if (!rc)
		rc = imp_seq(f, spec, "initContainers", &init);
	if (!rc && !cs)
		rc = imp_error(f, spec, "containers", "expected a list of containers");
	int64_t sum = 0;
	for (size_t i = 0; !rc && i < cs->n; i++) {
		size_t base = imp_push_key(f, "containers");
		imp_push_index(f, i);
		rc = read_container(im, cs->items[i], p, &p->cpu, &p->memory, &sum);
		imp_pop(f, base);
	}
	p->gpus = (int32_t)sum;
	for (size_t i = 0; !rc && init && i < init->n; i++) {
		double cpu = 0, memory = 0;
		int64_t gpus = 0;
		size_t base = imp_push_key(f, "initContainers");
		imp_push_index(f, i);
		rc = read_container(im, init->items[i], p, &cpu, &memory, &gpus);
		imp_pop(f, base);
		p->gpus = gpus > p->gpus ? (int32_t)gpus : p->gpus;
		p->cpu = cpu > p->cpu ? cpu : p->cpu;
		p->memory = memory > p->memory ? memory : p->memory;
	}
	return rc;
}

static void add_req(struct imp_pod *p, const char *key, enum affinity_op op, const char **values,
		    size_t n)
{
	p->reqs = gp_xrealloc(p->reqs, (p->n_reqs + 1) * sizeof *p->reqs);
	p->reqs[p->n_reqs++] = (struct imp_req){key, op, values, n};
}

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist"};

/* One matchExpressions entry; Gt and Lt are not modelled (a warning). */
static int read_expression(struct imp *im, const struct ynode *e, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const char *key = NULL, *op = NULL;
	const struct ynode *vals = NULL;
	int rc = imp_str(f, e, "key", &key);
	if (!rc)
		rc = imp_str(f, e, "operator", &op);
	if (!rc)
		rc = imp_seq(f, e, "values", &vals);
	if (!rc && (!key || !op))
		rc = imp_error(f, e, NULL, "expected a requirement with key and operator");
	/* The API server checks the key, not the values (ValidateNodeSelectorRequirement). */
	if (!rc)
		rc = imp_label_key(f, ynode_get(e, "key"), "key", key, "node affinity");
	if (rc)
		return rc;
	for (int k = 0; k < 4; k++) {
		if (strcmp(op, op_names[k]))
			continue;
		size_t n = vals ? vals->n : 0;
		const char **v = n ? gp_xcalloc(n, sizeof *v) : NULL;
		for (size_t i = 0; i < n; i++) {
			if (vals->items[i]->kind != YNODE_SCALAR) {
				free(v);
				return imp_error(f, vals->items[i], "values", "expected strings");
			}
			v[i] = vals->items[i]->value;
		}
		if (k < 2 && !n) {
			free(v);
			return imp_error(f, e, "values", "expected values with operator %s", op);
		}
		add_req(p, key, (enum affinity_op)k, v, n);
		return GP_OK;
	}
	imp_warn(im, "pod %s/%s: node affinity operator %s on %s is not modelled; left out", p->ns,
		 p->name, op, key);
	return GP_OK;
}

static int read_affinity(struct imp *im, const struct ynode *spec, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *sel = NULL, *aff = NULL, *na = NULL, *req = NULL, *terms = NULL;
	int rc = imp_map(f, spec, "nodeSelector", &sel);
	size_t base = imp_push_key(f, "nodeSelector");
	for (size_t i = 0; !rc && sel && i < sel->n; i++) {
		const struct ynode *val = sel->items[i];
		if (val->kind != YNODE_SCALAR)
			rc = imp_error(f, val, sel->keys[i], "expected a string value");
		if (!rc)
			rc = imp_label_key(f, val, sel->keys[i], sel->keys[i], "nodeSelector");
		if (!rc)
			rc = imp_label_value(f, val, sel->keys[i], val->value, "nodeSelector");
		if (rc)
			break;
		const char **v = gp_xcalloc(1, sizeof *v);
		v[0] = sel->items[i]->value;
		add_req(p, sel->keys[i], AFFINITY_IN, v, 1);
	}
	imp_pop(f, base);
	if (!rc)
		rc = imp_map(f, spec, "affinity", &aff);
	if (!rc && aff)
		rc = imp_map(f, aff, "nodeAffinity", &na);
	if (!rc && na)
		rc = imp_map(f, na, "requiredDuringSchedulingIgnoredDuringExecution", &req);
	if (!rc && req)
		rc = imp_seq(f, req, "nodeSelectorTerms", &terms);
	if (rc || !terms || !terms->n)
		return rc;
	if (terms->n > 1)
		imp_warn(im,
			 "pod %s/%s: %zu nodeSelectorTerms (ORed); gpuplan models one, kept "
			 "the first",
			 p->ns, p->name, terms->n);
	const struct ynode *exprs = NULL;
	base = imp_push_path(f,
			     "affinity.nodeAffinity."
			     "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]");
	rc = imp_seq(f, terms->items[0], "matchExpressions", &exprs);
	for (size_t i = 0; !rc && exprs && i < exprs->n; i++) {
		size_t at = imp_push_key(f, "matchExpressions");
		imp_push_index(f, i);
		rc = read_expression(im, exprs->items[i], p);
		imp_pop(f, at);
	}
	imp_pop(f, base);
	return rc;
}

static int read_tolerations(struct imp *im, const struct ynode *spec, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *tols = NULL;
	int rc = imp_seq(f, spec, "tolerations", &tols);
	for (size_t i = 0; !rc && tols && i < tols->n; i++) {
		const struct ynode *t = tols->items[i];
		const char *key = NULL, *op = NULL, *value = NULL, *effect = NULL;
		size_t base = imp_push_key(f, "tolerations");
		imp_push_index(f, i);
		if (!(rc = imp_str(f, t, "key", &key)) && !(rc = imp_str(f, t, "operator", &op)) &&
		    !(rc = imp_str(f, t, "value", &value)))
			rc = imp_str(f, t, "effect", &effect);
		struct imp_tol tol = {
			key ? key : "", value ? value : "",
			op && !strcmp(op, "Exists") ? TOLERATION_EXISTS : TOLERATION_EQUAL, -1};
		if (!rc && op && strcmp(op, "Exists") && strcmp(op, "Equal"))
			rc = imp_error(f, ynode_get(t, "operator"), "operator",
				       "expected Equal or Exists, got '%s'", op);
		for (int e = 0; !rc && effect && e < 3; e++)
			if (!strcmp(effect, effect_names[e]))
				tol.effect = e;
		if (!rc && effect && tol.effect < 0)
			rc = imp_error(
				f, ynode_get(t, "effect"), "effect",
				"expected NoSchedule, PreferNoSchedule or NoExecute, got '%s'",
				effect);
		/* As ValidateTolerations: a key is a label key, Equal's value a
		 * label value, and Exists takes none. */
		if (!rc && tol.key[0])
			rc = imp_label_key(f, ynode_get(t, "key"), "key", tol.key, "a toleration");
		if (!rc && tol.op == TOLERATION_EQUAL)
			rc = imp_label_value(f, ynode_get(t, "value"), "value", tol.value,
					     "a toleration");
		if (!rc && tol.op == TOLERATION_EXISTS && tol.value[0])
			rc = imp_error(
				f, ynode_get(t, "value"), "value",
				"a toleration with operator Exists takes no value, got '%s'; "
				"expected operator Equal or no value",
				tol.value);
		imp_pop(f, base);
		if (rc)
			return rc;
		if (!tol.key[0] && tol.op == TOLERATION_EQUAL)
			continue; /* an empty key needs Exists; the API server refuses it */
		if (tol.effect == EFFECT_NO_EXECUTE &&
		    (!strcmp(tol.key, "node.kubernetes.io/not-ready") ||
		     !strcmp(tol.key, "node.kubernetes.io/unreachable")))
			continue; /* DefaultTolerationSeconds adds these to every pod */
		p->tols = gp_xrealloc(p->tols, (p->n_tols + 1) * sizeof *p->tols);
		p->tols[p->n_tols++] = tol;
	}
	return rc;
}

static int read_spec(struct imp *im, const struct ynode *spec, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const char *restart = NULL;
	const struct ynode *gates = NULL;
	size_t base = imp_push_key(f, "spec");
	int rc = imp_str(f, spec, "nodeName", &p->node);
	if (!rc && p->node)
		p->node_loc = ynode_get(spec, "nodeName")->loc;
	if (!rc && p->node)
		rc = imp_dns_name(f, ynode_get(spec, "nodeName"), "nodeName", p->node,
				  IMP_DNS_SUBDOMAIN, "node name");
	if (!rc)
		rc = imp_int(f, spec, "priority", &p->priority);
	/* The loader's bound, which is Kubernetes' int32. */
	if (!rc && (p->priority < SCENARIO_MIN_PRIORITY || p->priority > SCENARIO_MAX_PRIORITY))
		rc = imp_error(f, ynode_get(spec, "priority"), "priority",
			       "expected a whole number from %d to %d (a pod's priority is an "
			       "int32), got %lld",
			       SCENARIO_MIN_PRIORITY, SCENARIO_MAX_PRIORITY,
			       (long long)p->priority);
	const char *policy = NULL;
	if (!rc)
		rc = imp_str(f, spec, "preemptionPolicy", &policy);
	if (!rc && policy && strcmp(policy, "Never") && strcmp(policy, "PreemptLowerPriority"))
		rc = imp_error(f, ynode_get(spec, "preemptionPolicy"), "preemptionPolicy",
			       "expected Never or PreemptLowerPriority, got '%s'", policy);
	p->never = policy && !strcmp(policy, "Never");
	p->grace = 30; /* the API server's default */
	if (!rc)
		rc = imp_int(f, spec, "terminationGracePeriodSeconds", &p->grace);
	if (!rc && (p->grace < 0 || p->grace > INT32_MAX))
		rc = imp_error(f, ynode_get(spec, "terminationGracePeriodSeconds"),
			       "terminationGracePeriodSeconds",
			       "expected whole seconds from 0 to %d, got %lld", INT32_MAX,
			       (long long)p->grace);
	if (!rc)
		rc = imp_str(f, spec, "restartPolicy", &restart);
	if (!rc)
		rc = imp_seq(f, spec, "schedulingGates", &gates);
	if (!rc)
		rc = read_containers(im, spec, p);
	if (!rc)
		rc = read_affinity(im, spec, p);
	if (!rc)
		rc = read_tolerations(im, spec, p);
	imp_pop(f, base);
	p->service = !restart || !strcmp(restart, "Always");
	p->gated = gates && gates->n > 0;
	return rc;
}

/* Earliest start and latest finish of the containers (running or terminated). */
static int read_container_times(struct imp *im, const struct ynode *st, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *cs = NULL;
	int rc = imp_seq(f, st, "containerStatuses", &cs);
	for (size_t i = 0; !rc && cs && i < cs->n; i++) {
		const struct ynode *state = NULL, *run = NULL, *term = NULL;
		int64_t s = -1, e = -1;
		size_t base = imp_push_key(f, "containerStatuses");
		imp_push_index(f, i);
		if (!(rc = imp_map(f, cs->items[i], "state", &state)) && state) {
			imp_push_key(f, "state");
			if (!(rc = imp_map(f, state, "running", &run)) && run)
				rc = imp_time(f, run, "startedAt", &s);
			if (!rc && !(rc = imp_map(f, state, "terminated", &term)) && term &&
			    !(rc = imp_time(f, term, "startedAt", &s)))
				rc = imp_time(f, term, "finishedAt", &e);
		}
		imp_pop(f, base);
		if (s >= 0 && (p->started < 0 || s < p->started))
			p->started = s;
		if (e >= 0 && e > p->finished)
			p->finished = e;
	}
	return rc;
}

/* status.phase.  Unknown means the pod's node stopped reporting: kube-scheduler's
 * cache drops only finished pods, so a bound one still holds its requests. */
static int read_phase(struct imp *im, const struct ynode *st, struct imp_pod *p)
{
	static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed"};
	struct imp_file *f = &im->pods_f;
	const char *phase = NULL;
	int rc = imp_str(f, st, "phase", &phase);
	p->phase = PHASE_OTHER;
	if (rc || !phase)
		return rc;
	for (int i = 0; i < 4; i++)
		if (!strcmp(phase, phases[i])) {
			p->phase = (enum imp_phase)i;
			return GP_OK;
		}
	if (strcmp(phase, "Unknown"))
		return imp_error(f, ynode_get(st, "phase"), "phase",
				 "unknown pod phase '%s'; expected Pending, Running, Succeeded, "
				 "Failed or Unknown",
				 phase);
	const char *ns = p->ns ? p->ns : "default";
	if (!p->node) {
		imp_warn(im, "pod %s/%s is in phase Unknown and on no node; left out", ns, p->name);
		return GP_OK;
	}
	p->phase = PHASE_RUNNING;
	imp_warn(im,
		 "pod %s/%s is in phase Unknown (its node stopped reporting); kept as running on "
		 "%s, whose requests it still holds",
		 ns, p->name, p->node);
	return GP_OK;
}

static int read_status(struct imp *im, const struct ynode *st, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *conds = NULL;
	size_t base = imp_push_key(f, "status");
	int rc = read_phase(im, st, p);
	if (!rc)
		rc = imp_seq(f, st, "conditions", &conds);
	for (size_t i = 0; !rc && conds && i < conds->n; i++) {
		const char *type = NULL, *status = NULL;
		size_t at = imp_push_key(f, "conditions");
		imp_push_index(f, i);
		rc = imp_str(f, conds->items[i], "type", &type);
		if (!rc)
			rc = imp_str(f, conds->items[i], "status", &status);
		if (!rc && type && status && !strcmp(type, "PodScheduled") &&
		    !strcmp(status, "False")) {
			rc = imp_str(f, conds->items[i], "message", &p->message);
			if (!rc)
				rc = imp_str(f, conds->items[i], "reason", &p->reason);
		}
		imp_pop(f, at);
	}
	if (!rc)
		rc = read_container_times(im, st, p);
	imp_pop(f, base);
	return rc;
}

/* Whether the pod mounts local storage that blocks its eviction in CA's
 * scale-down (utils/drain/drain.go, isLocalVolume: a hostPath, or an
 * emptyDir not in memory), other than the volumes the annotation
 * cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes names
 * (comma-separated). */
static bool local_volumes(const struct ynode *spec, const char *allowed)
{
	const struct ynode *vols = ynode_get(spec, "volumes");
	for (size_t i = 0; vols && vols->kind == YNODE_SEQ && i < vols->n; i++) {
		const struct ynode *v = vols->items[i], *name = ynode_get(v, "name");
		const struct ynode *dir = ynode_get(v, "emptyDir"),
				   *medium = ynode_get(dir, "medium");
		bool local = ynode_get(v, "hostPath") ||
			     (dir && !(medium && medium->kind == YNODE_SCALAR &&
				       !strcmp(medium->value, "Memory")));
		if (!local)
			continue;
		bool named = false;
		size_t len = name && name->kind == YNODE_SCALAR ? strlen(name->value) : 0;
		for (const char *a = allowed; a && len && *a && !named;) {
			size_t n = strcspn(a, ",");
			named = n == len && !strncmp(a, name->value, n);
			a += n + (a[n] == ',');
		}
		if (!named)
			return true;
	}
	return false;
}

static int read_pod(struct imp *im, const struct ynode *item, struct imp_pod *p)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *meta = NULL, *spec = NULL, *status = NULL, *labels = NULL;
	p->loc = item->loc;
	const char *local_ok = NULL; /* safe-to-evict-local-volumes */
	p->created = p->started = p->finished = -1;
	int rc = imp_map(f, item, "metadata", &meta);
	if (!rc && !meta)
		rc = imp_error(f, item, "metadata", "expected the pod's metadata");
	if (rc)
		return rc;
	size_t base = imp_push_key(f, "metadata");
	if (!(rc = imp_str(f, meta, "name", &p->name)) &&
	    !(rc = imp_str(f, meta, "namespace", &p->ns)))
		rc = imp_time(f, meta, "creationTimestamp", &p->created);
	if (!rc && !p->name)
		rc = imp_error(f, meta, "name", "expected the pod's name");
	if (!rc)
		rc = imp_dns_name(f, ynode_get(meta, "name"), "name", p->name, IMP_DNS_SUBDOMAIN,
				  "pod name");
	if (!rc && p->ns)
		rc = imp_dns_name(f, ynode_get(meta, "namespace"), "namespace", p->ns,
				  IMP_DNS_LABEL, "namespace");
	if (!p->ns)
		p->ns = "default";
	if (!rc)
		rc = read_owner(im, meta, p);
	if (!rc)
		rc = imp_map(f, meta, "labels", &labels);
	if (!rc)
		rc = imp_labels(f, labels, "the pod's labels");
	if (!rc && labels)
		rc = imp_str(f, labels, "kueue.x-k8s.io/queue-name", &p->queue);
	for (size_t i = 0; !rc && labels && i < labels->n; i++)
		if (labels->items[i]->kind == YNODE_SCALAR) {
			p->labels = gp_xrealloc(p->labels, (p->n_labels + 1) * sizeof *p->labels);
			p->labels[p->n_labels++] =
				(struct kv){labels->keys[i], labels->items[i]->value};
		}
	const struct ynode *notes = NULL;
	const char *evict = NULL;
	if (!rc)
		rc = imp_map(f, meta, "annotations", &notes);
	if (!rc && notes)
		rc = imp_str(f, notes, "cluster-autoscaler.kubernetes.io/safe-to-evict", &evict);
	if (!rc && notes)
		rc = imp_str(f, notes,
			     "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes",
			     &local_ok);
	/* CA compares the annotation with "true" and "false"
	 * (simulator/drainability/rules/safetoevict, notsafetoevict) */
	p->safe_to_evict = !evict                    ? SAFE_TO_EVICT_UNSET
			   : !strcmp(evict, "true")  ? SAFE_TO_EVICT_TRUE
			   : !strcmp(evict, "false") ? SAFE_TO_EVICT_FALSE
						     : SAFE_TO_EVICT_UNSET;
	imp_pop(f, base);
	if (!rc)
		rc = imp_map(f, item, "spec", &spec);
	if (!rc && !spec)
		rc = imp_error(f, item, "spec", "expected the pod's spec");
	if (!rc)
		rc = read_spec(im, spec, p);
	if (!rc)
		p->local_storage = local_volumes(spec, local_ok);
	if (!rc)
		rc = imp_map(f, item, "status", &status);
	if (!rc && status)
		rc = read_status(im, status, p);
	return rc;
}

/* The strings the pods keep copied out of their file's tree, which then
 * goes before the nodes are read: nothing reads it after, and for 100,000
 * pods it held 470 MB beside the nodes' tree. */
static void detach(struct imp *im)
{
	struct strindex *x = &im->pod_strings;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < im->n_pods; i++) {
			struct imp_pod *p = &im->pods[i];
			const char **s[] = {&p->ns,    &p->name,    &p->node,  &p->mig,
					    &p->queue, &p->message, &p->reason};
			for (size_t k = 0; k < sizeof s / sizeof *s; k++)
				imp_keep(x, pass, (char **)s[k]);
			for (size_t k = 0; k < p->n_labels; k++) {
				imp_keep(x, pass, &p->labels[k].key);
				imp_keep(x, pass, &p->labels[k].value);
			}
			for (size_t r = 0; r < p->n_reqs; r++) {
				imp_keep(x, pass, (char **)&p->reqs[r].key);
				for (size_t k = 0; k < p->reqs[r].n_values; k++)
					imp_keep(x, pass, (char **)&p->reqs[r].values[k]);
			}
			for (size_t k = 0; k < p->n_tols; k++) {
				imp_keep(x, pass, (char **)&p->tols[k].key);
				imp_keep(x, pass, (char **)&p->tols[k].value);
			}
		}
	for (size_t i = 0; i < im->n_pods; i++)
		im->pods[i].loc.file = im->pods[i].node_loc.file = im->pods_f.path;
	imp_close(&im->pods_f);
}

int imp_read_pods(struct imp *im)
{
	struct imp_file *f = &im->pods_f;
	const struct ynode *items = NULL;
	int rc = imp_open_kube(f, im->o->pods, im->err);
	if (!rc)
		rc = imp_list(f, "Pod", &items);
	if (rc || !items)
		return rc;
	im->pods = gp_xcalloc(items->n, sizeof *im->pods);
	for (size_t i = 0; i < items->n; i++) {
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		rc = read_pod(im, items->items[i], &im->pods[im->n_pods++]);
		imp_pop(f, base);
		if (rc)
			return rc;
		const struct imp_pod *p = &im->pods[im->n_pods - 1];
		for (size_t r = 0; r < p->n_reqs; r++)
			strindex_add(&im->selected, p->reqs[r].key, NULL);
	}
	detach(im);
	return GP_OK;
}

bool imp_selected_key(const struct imp *im, const char *key)
{
	return strindex_find(&im->selected, key) != STRINDEX_NONE;
}

/* The GPUs node s advertises to one pod: replicas stack under time-slicing
 * (as the loader's widest request, scenario_pools.c widen_request); -1 where
 * the count is not comparable (MIG devices, MPS replicas judged later). */
static int64_t node_units(const struct imp_shape *s)
{
	switch (s->sharing) {
	case SHARING_EXCLUSIVE: return s->gpus;
	case SHARING_TIME_SLICING: return (int64_t)s->gpus * s->replicas;
	case SHARING_MPS:
	case SHARING_MIG:
	case SHARING_FRACTIONAL: return -1;
	}
	return -1;
}

int imp_check_bound(struct imp *im)
{
	struct imp_file *f = &im->pods_f;
	for (size_t i = 0; i < im->n_pods; i++) {
		const struct imp_pod *p = &im->pods[i];
		int k = p->node && p->gpus && !p->mig ? imp_node_index(im, p->node) : -1;
		if (k < 0)
			continue;
		const struct imp_shape *s = &im->nodes[k].shape;
		int64_t units = node_units(s);
		if (units < 0 || p->gpus <= units || p->shared != s->renamed)
			continue;
		if (p->phase != PHASE_PENDING && p->phase != PHASE_RUNNING)
			continue;
		size_t base = imp_push_key(f, "items");
		imp_push_index(f, i);
		const struct ynode at = {.kind = YNODE_SCALAR, .loc = p->node_loc};
		int rc = imp_error_at(
			f, &at, "spec.nodeName",
			"pod %s/%s asks for %d %s on node %s, which has %lld; a bound "
			"pod holds no more than its node has (the kubelet refuses "
			"it: OutOf%s)",
			p->ns, p->name, (int)p->gpus,
			p->shared ? "nvidia.com/gpu.shared" : "nvidia.com/gpu", p->node,
			(long long)units, p->shared ? "nvidia.com/gpu.shared" : "nvidia.com/gpu");
		imp_pop(f, base);
		return rc;
	}
	return GP_OK;
}
