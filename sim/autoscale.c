/*
 * autoscale.c - the Cluster Autoscaler's scale-up and scale-down over node
 * slots, and spot interruptions (see autoscale.h).  Scale-down itself (the
 * removal simulation, drains, deletions) is in autoscale_scaledown.c.
 */
#include "autoscale_int.h"

#include "gpuplan/arrivals.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a pool's TriggeredScaleUp note beside its name (three sizes). */
#define TRIGGERED_ROOM 80

/* Tenant ids of the pods the simulations put on nodes for a while
 * (PROBE_TENANT - k for the k-th): above any job id, below the replicas' bit. */
#define PROBE_TENANT UINT32_C(0x7fffffff)

/* Slack for comparing scores. */
#define EPS 1e-9

/* The node group backoff after a failed scale-up (--initial-node-group-
 * backoff-duration 5m, doubled per failure up to --max-node-group-backoff-
 * duration 30m, and back to 5m after --node-group-backoff-reset-timeout 3h
 * without a failure; utils/backoff/exponential_backoff.go). */
#define BACKOFF_INITIAL (5 * SIM_MINUTE)
#define BACKOFF_MAX     (30 * SIM_MINUTE)
#define BACKOFF_RESET   (3 * SIM_HOUR)

static const char NO_FIT_NOTE[] =
	"pod didn't trigger scale-up (it wouldn't fit if a new node is added)";

/* --- small helpers ------------------------------------------------------------ */

sim_time autoscale_now(const struct autoscale *as) { return as->h.engine->now; }

const struct pool_spec *autoscale_spec_of(const struct autoscale *as, int32_t node)
{
	return &as->sc->pools[as->h.cluster->nodes[node].pool];
}

/* Moves gauge g of scope all and of pool p. */
void autoscale_gauge(struct autoscale *as, size_t p, enum gauge g, double delta)
{
	collect_add(as->h.collect, 0, g, delta, autoscale_now(as));
	collect_add(as->h.collect, collect_scope_pool(as->sc, p), g, delta, autoscale_now(as));
}

void autoscale_powered(struct autoscale *as, size_t p, int32_t node, double sign)
{
	const struct node *nd = &as->h.cluster->nodes[node];
	int32_t before = nd->first_gpu - as->h.cluster->pools[p].first_gpu;
	int32_t committed = as->sc->pools[p].price.committed - before;
	committed = committed < 0 ? 0 : committed > nd->gpus ? nd->gpus : committed;
	autoscale_gauge(as, p, GAUGE_POWERED, sign * nd->gpus);
	collect_node_powered(as->h.collect, node, sign, autoscale_now(as));
	if (committed > 0)
		autoscale_gauge(as, p, GAUGE_POWERED_COMMITTED, sign * committed);
}

static struct as_class *class_at(struct autoscale *as, size_t cls)
{
	if (cls >= as->cap_classes) {
		size_t cap = as->cap_classes ? as->cap_classes : 16, had = as->cap_classes;
		while (cap <= cls)
			cap *= 2;
		as->classes = gp_xrealloc(as->classes, cap * sizeof *as->classes);
		memset(as->classes + had, 0, (cap - had) * sizeof *as->classes);
		as->cap_classes = cap;
	}
	return &as->classes[cls];
}

/* Accrues pool p's provisioning wait and time at max up to now. */
static void accrue(struct autoscale *as, struct as_pool *ap)
{
	sim_time now = autoscale_now(as);
	if (now > ap->waiting_since) {
		ap->out.provisioning_wait_s +=
			sim_seconds(now - ap->waiting_since) * (double)ap->waiting;
		ap->waiting_since = now;
	}
	if (now > ap->at_max_since) {
		ap->out.at_max_s += ap->at_max ? sim_seconds(now - ap->at_max_since) : 0;
		ap->at_max_since = now;
	}
}

static void set_waiting(struct autoscale *as, int32_t p, int64_t delta)
{
	struct as_pool *ap = &as->pools[p];
	accrue(as, ap);
	ap->waiting += delta;
	assert(ap->waiting >= 0);
}

/* --- lifecycle ------------------------------------------------------------------ */

/* The priority expander's priority of pool ps: the highest of the ConfigMap's
 * lines whose expression matches its name (expander/priority/priority.go,
 * groupIDMatchesList: an unanchored match), INT32_MIN when none does; without
 * a ConfigMap, the pool's own autoscale.priority. */
static int32_t priority_of(const struct autoscale *as, const struct pool_spec *ps)
{
	const struct scenario *sc = as->sc;
	if (!sc->n_expander_priorities)
		return ps->autoscale.priority;
	int32_t best = INT32_MIN;
	for (size_t i = 0; i < sc->n_expander_priorities; i++) {
		const struct expander_priority *e = &sc->expander_priorities[i];
		regex_t re;
		if (e->priority <= best || regcomp(&re, e->pattern, REG_EXTENDED | REG_NOSUB))
			continue; /* the loader compiled it once already */
		if (!regexec(&re, ps->name, 0, NULL, 0))
			best = e->priority;
		regfree(&re);
	}
	return best;
}

static void init_pool(struct autoscale *as, size_t p)
{
	const struct pool_spec *ps = &as->sc->pools[p];
	struct as_pool *ap = &as->pools[p];
	ap->autoscaled = ps->autoscale.on;
	ap->spot = ps->spot.on && ps->spot.rate > 0;
	ap->size = ps->nodes;
	ap->out.pool = (int32_t)p;
	ap->last_failure = SIM_NEVER;
	ap->priority = priority_of(as, ps);
	ap->est = gp_xcalloc((size_t)as->h.cluster->pools[p].n_nodes + 1, sizeof *ap->est);
	ap->est_pods =
		gp_xcalloc((size_t)as->h.cluster->pools[p].n_nodes + 1, sizeof *ap->est_pods);
	if (ap->spot) {
		ap->rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(ap->rng,
			    (unsigned long)arrivals_stream_seed(as->sc->seed ^ UINT64_C(0x73706f74),
								ps->name)); /* "spot" */
	}
	if (ap->autoscaled &&
	    (as->scan_interval == SIM_NEVER || ps->autoscale.scan_interval < as->scan_interval)) {
		as->scan_interval = ps->autoscale.scan_interval; /* one loop for the cluster */
		as->n_chain = ps->autoscale.n_expanders;
		memcpy(as->chain, ps->autoscale.expanders, sizeof as->chain);
		as->delay_after_add = ps->autoscale.delay_after_add;
	}
	size_t len = strlen(ps->name) + TRIGGERED_ROOM;
	as->triggered[p] = gp_xmalloc(len);
	snprintf(as->triggered[p], len, "pod triggered scale-up: [%s]", ps->name);
}

/* CA's TriggeredScaleUp event, "pod triggered scale-up: %v" of the scale-up's
 * []ScaleUpInfo, each "{%v %v->%v (max: %v)}" of the group's id, its size
 * before and after and its max (processors/status/
 * eventing_scale_up_processor.go, processors/nodegroupset/
 * nodegroup_set_processor.go ScaleUpInfo.String): the pool's last scale-up. */
static void note_scale_up(struct autoscale *as, size_t p, int32_t from)
{
	const struct pool_spec *ps = &as->sc->pools[p];
	snprintf(as->triggered[p], strlen(ps->name) + TRIGGERED_ROOM,
		 "pod triggered scale-up: [{%s %d->%d (max: %d)}]", ps->name, (int)from,
		 (int)as->pools[p].size, (int)ps->autoscale.max);
}

static void on_event(void *ctx, const struct event *ev);

struct autoscale *autoscale_create(const struct scenario *sc, const struct autoscale_host *host)
{
	bool any = false;
	for (size_t p = 0; p < sc->n_pools; p++)
		any |= sc->pools[p].autoscale.on || sc->pools[p].spot.on;
	if (!any)
		return NULL;
	struct autoscale *as = gp_xcalloc(1, sizeof *as);
	as->sc = sc;
	as->h = *host;
	as->ev = engine_register(host->engine, EV_AS_KINDS, on_event, NULL, as);
	as->scan_interval = SIM_NEVER;
	as->last_scale_up = SIM_NEVER;
	as->last_removal = SIM_NEVER;
	size_t nodes = host->cluster->n_nodes;
	as->state = gp_xcalloc(nodes + 1, sizeof *as->state);
	as->gen = gp_xcalloc(nodes + 1, sizeof *as->gen);
	as->unneeded = gp_xcalloc(nodes + 1, sizeof *as->unneeded);
	for (size_t i = 0; i < nodes; i++) {
		as->state[i] = host->cluster->nodes[i].ready ? NODE_READY : NODE_DOWN;
		as->unneeded[i] = SIM_NEVER;
	}
	as->pools = gp_xcalloc(sc->n_pools, sizeof *as->pools);
	as->replicas = gp_xcalloc(sc->n_workloads + 1, sizeof *as->replicas);
	as->triggered = gp_xcalloc(sc->n_pools, sizeof *as->triggered);
	as->max_notes = gp_xcalloc(sc->n_pools + 1, sizeof *as->max_notes);
	as->backoff_notes = gp_xcalloc(sc->n_pools + 1, sizeof *as->backoff_notes);
	as->option = gp_xcalloc(sc->n_pools + 1, sizeof *as->option);
	for (size_t w = 0; w < sc->n_workloads && !as->pdb_left; w++)
		if (sc->workloads[w].pdb != PDB_NONE) {
			as->pdb_left = gp_xcalloc(sc->n_workloads, sizeof *as->pdb_left);
			as->pdb_need = gp_xcalloc(sc->n_workloads, sizeof *as->pdb_need);
		}
	for (size_t p = 0; p < sc->n_pools; p++)
		init_pool(as, p);
	for (size_t n = 1; n <= sc->n_pools; n++) {
		as->max_notes[n] = gp_xmalloc(80);
		snprintf(as->max_notes[n], 80,
			 "pod didn't trigger scale-up: %zu max node group size reached", n);
		as->backoff_notes[n] = gp_xmalloc(80);
		snprintf(as->backoff_notes[n], 80,
			 "pod didn't trigger scale-up: %zu in backoff after failed scale-up", n);
	}
	as->rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(as->rng, (unsigned long)arrivals_stream_seed(sc->seed ^ UINT64_C(0x6361),
								 "cluster-autoscaler")); /* "ca" */
	return as;
}

void autoscale_destroy(struct autoscale *as)
{
	if (!as)
		return;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		free(as->pools[p].est);
		free(as->pools[p].est_pods);
		if (as->pools[p].rng)
			gsl_rng_free(as->pools[p].rng);
		free(as->triggered[p]);
		free(as->max_notes[p + 1]);
		free(as->backoff_notes[p + 1]);
	}
	free(as->backoff_notes);
	free(as->option);
	free(as->pools);
	free(as->triggered);
	free(as->max_notes);
	free(as->state);
	free(as->gen);
	free(as->unneeded);
	free(as->classes);
	free(as->replicas);
	free(as->probes);
	free(as->order);
	free(as->moving);
	free(as->moving_pods);
	free(as->pdb_left);
	free(as->pdb_need);
	gsl_rng_free(as->rng);
	free(as);
}

/* --- node lifecycle ----------------------------------------------------------- */

/* Draws when a spot node launched now is interrupted and schedules its notice. */
static void draw_interruption(struct autoscale *as, int32_t node)
{
	struct as_pool *ap = &as->pools[as->h.cluster->nodes[node].pool];
	if (!ap->spot)
		return;
	double mean = 1.0 / autoscale_spec_of(as, node)->spot.rate; /* seconds */
	double draw = gsl_ran_exponential(ap->rng, mean);
	if (draw > sim_seconds(SCENARIO_MAX_SPAN))
		return; /* past the end of the clock: never */
	sim_time after = sim_from_seconds(draw);
	as_push(as, autoscale_now(as) + after, EV_AS_NOTICE, (uint32_t)node, as->gen[node]);
}

/* Launches node slot `node`: billed from now, Ready after the provision time. */
/* A node of the pool starts (+1) or stops (-1) being provisioned: the
 * timeseries' gpus_provisioning beside the Ready gpus_capacity. */
static void provisioning(struct autoscale *as, int32_t node, int32_t delta)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	as->pools[p].provisioning += delta;
	as->provisioning += delta;
	/* a node slower than max_node_provision_time is given up, never Ready */
	const struct autoscale_spec *a = &as->sc->pools[p].autoscale;
	if (!(a->on && a->provision_time > a->max_provision_time))
		as->registering += delta;
	assert(as->pools[p].provisioning >= 0);
	autoscale_gauge(as, p, GAUGE_PROVISIONING, delta * as->h.cluster->nodes[node].gpus);
}

static void launch(struct autoscale *as, int32_t node)
{
	const struct pool_spec *ps = autoscale_spec_of(as, node);
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	assert(as->state[node] == NODE_DOWN);
	as->state[node] = NODE_PROVISIONING;
	as->gen[node]++;
	provisioning(as, node, +1);
	ap->out.nodes_added++;
	if (ap->autoscaled)
		ap->size++;
	autoscale_powered(as, p, node, 1);
	sim_time delay = ps->autoscale.on ? ps->autoscale.provision_time : ps->startup;
	/* a node not registered by --max-node-provision-time is given up then */
	if (ps->autoscale.on && delay > ps->autoscale.max_provision_time)
		delay = ps->autoscale.max_provision_time;
	as_push(as, autoscale_now(as) + delay, EV_AS_READY, (uint32_t)node, as->gen[node]);
	draw_interruption(as, node);
}

/* The lowest down slot of pool p, or -1. */
static int32_t free_slot(const struct autoscale *as, size_t p)
{
	const struct pool_state *ps = &as->h.cluster->pools[p];
	for (int32_t i = 0; i < ps->n_nodes; i++)
		if (as->state[ps->first_node + i] == NODE_DOWN)
			return ps->first_node + i;
	return -1;
}

static void nodes_changed(struct autoscale *as)
{
	reasons_set_nodes(as->h.reasons, as->h.cluster->n_ready);
}

/* A node that has not registered within max_node_provision_time: CA gives
 * up the scale-up (clusterstate.go, updateScaleRequests: "Scale-up timed
 * out"; the long-unregistered node is deleted) and backs the group off
 * (RegisterFailedScaleUp): 5m, doubled per failure up to 30m, reset after 3h
 * without one.  The nodes of one scale-up fail as one. */
static void give_up(struct autoscale *as, int32_t node)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	sim_time now = autoscale_now(as);
	provisioning(as, node, -1);
	as->state[node] = NODE_DOWN;
	as->gen[node]++;
	ap->size--;
	autoscale_powered(as, p, node, -1);
	as->last_removal = now;
	if (ap->last_failure == now)
		return;
	bool reset = ap->last_failure == SIM_NEVER || now - ap->last_failure >= BACKOFF_RESET;
	ap->backoff = reset ? BACKOFF_INITIAL
			    : (2 * ap->backoff < BACKOFF_MAX ? 2 * ap->backoff : BACKOFF_MAX);
	ap->backoff_until = now + ap->backoff;
	ap->last_failure = now;
	ap->out.failed_scale_ups++;
	*as->h.dirty = true;
}

static void on_ready(struct autoscale *as, int32_t node, uint16_t gen)
{
	if (gen != as->gen[node] || as->state[node] != NODE_PROVISIONING)
		return; /* interrupted while provisioning */
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	const struct autoscale_spec *a = &as->sc->pools[p].autoscale;
	if (a->on && a->provision_time > a->max_provision_time) {
		give_up(as, node);
		return;
	}
	as->state[node] = NODE_READY;
	as->unneeded[node] = SIM_NEVER;
	provisioning(as, node, -1);
	cluster_node_up(as->h.cluster, node);
	autoscale_gauge(as, p, GAUGE_CAPACITY, as->h.cluster->nodes[node].gpus);
	nodes_changed(as);
	(*as->h.freed)++;
	*as->h.dirty = true;
}

/* A Ready node leaves the scheduler's nodes. */
void autoscale_take_out(struct autoscale *as, int32_t node)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	cluster_node_down(as->h.cluster, node);
	autoscale_gauge(as, p, GAUGE_CAPACITY, -as->h.cluster->nodes[node].gpus);
	nodes_changed(as);
}

/* The spot notice: cordon and drain now, gone after the notice. */
static void on_notice(struct autoscale *as, int32_t node, uint16_t gen)
{
	if (gen != as->gen[node] ||
	    (as->state[node] != NODE_READY && as->state[node] != NODE_PROVISIONING))
		return; /* removed or replaced since the draw */
	if (!as->h.work_left(as->h.ctx))
		return; /* after the work: the run's bill no longer depends on it */
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	ap->out.interruptions++;
	if (ap->autoscaled)
		ap->size--; /* the group no longer counts it */
	if (as->state[node] == NODE_PROVISIONING) {
		provisioning(as, node, -1);
	} else {
		autoscale_take_out(as, node);
		as->h.drain(as->h.ctx, node, false);
		assert(cluster_node_empty(as->h.cluster, node) && "drained");
	}
	as->state[node] = NODE_DRAINING;
	as->gen[node]++; /* a pending Ready or notice is stale */
	as_push(as, autoscale_now(as) + autoscale_spec_of(as, node)->spot.notice, EV_AS_GONE,
		(uint32_t)node, as->gen[node]);
}

static void on_gone(struct autoscale *as, int32_t node, uint16_t gen)
{
	if (gen != as->gen[node] || as->state[node] != NODE_DRAINING)
		return;
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	as->state[node] = NODE_DOWN;
	autoscale_powered(as, p, node, -1);
	/* A fixed pool's node group keeps its size: it replaces the node. */
	if (!as->pools[p].autoscaled && as->h.work_left(as->h.ctx))
		launch(as, node);
}

void autoscale_start(struct autoscale *as)
{
	if (!as)
		return;
	for (size_t i = 0; i < as->h.cluster->n_nodes; i++)
		if (as->state[i] == NODE_READY)
			draw_interruption(as, (int32_t)i);
	if (as->scan_interval != SIM_NEVER)
		as_push(as, 0, EV_AS_SCAN, 0, 0);
}

/* Handles the module's events (engine_register). */
static void on_event(void *ctx, const struct event *ev)
{
	struct autoscale *as = ctx;
	switch ((enum autoscale_event)(ev->type - as->ev)) {
	case EV_AS_SCAN: as->scan_due = true; break;
	case EV_AS_READY: on_ready(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_NOTICE: on_notice(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_GONE: on_gone(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_KINDS: break;
	}
}

/* --- the scheduler's hooks ------------------------------------------------------ */

void autoscale_class_failed(struct autoscale *as, size_t cls, bool nodes)
{
	if (as)
		class_at(as, cls)->blocked = nodes;
}

int32_t autoscale_provisioning_pool(const struct autoscale *as, size_t cls)
{
	if (!as || cls >= as->cap_classes || as->classes[cls].note != NOTE_TRIGGERED)
		return -1;
	return as->classes[cls].pool;
}

const char *autoscale_note(const struct autoscale *as, size_t cls)
{
	if (!as || cls >= as->cap_classes)
		return NULL;
	const struct as_class *c = &as->classes[cls];
	switch ((enum note_kind)c->note) {
	case NOTE_TRIGGERED: return as->triggered[c->pool];
	case NOTE_MAX: return as->max_notes[c->at_max];
	case NOTE_BACKOFF: return as->backoff_notes[c->at_max];
	case NOTE_NO_FIT: return NO_FIT_NOTE;
	case NOTE_NONE: break;
	}
	return NULL;
}

void autoscale_joined(struct autoscale *as, size_t cls, int32_t pods)
{
	if (!as)
		return;
	(void)class_at(as, cls); /* it waits for the next scan's estimate */
	(void)pods;
}

void autoscale_started(struct autoscale *as, size_t cls, int32_t pods)
{
	if (!as)
		return;
	struct as_class *c = class_at(as, cls);
	if (c->note == NOTE_TRIGGERED && c->helped > 0) {
		int64_t k = c->helped < pods ? c->helped : pods;
		c->helped -= k;
		set_waiting(as, c->pool, -k);
	}
	c->blocked = false;
}

/* --- the simulations' pods ---------------------------------------------------- */

/* Puts one pod of the request on node for the simulation (the scheduler's
 * own placement, undone by unprobe). */
void autoscale_probe(struct autoscale *as, const struct pod_request *pod, int32_t node)
{
	GP_GROW(as->probes, as->cap_probes, as->n_probes + 1);
	struct probe *pr = &as->probes[as->n_probes];
	pr->workload = pod->workload;
	placement_take_pod(as->h.placer, pod, node, PROBE_TENANT - (uint32_t)as->n_probes,
			   &pr->grant);
	as->n_probes++;
}

/* Takes the simulation's pods off again, down to the first `mark`. */
void autoscale_unprobe(struct autoscale *as, size_t mark)
{
	while (as->n_probes > mark) {
		size_t k = --as->n_probes;
		placement_release_pod(as->h.placer, as->probes[k].workload,
				      PROBE_TENANT - (uint32_t)k, &as->probes[k].grant);
	}
}

/* --- scale-up ------------------------------------------------------------------- */

/* The groups of pending pods the autoscaler looks at: the scheduler's
 * classes, then each inference workload's pending replicas. */
static size_t n_groups(const struct autoscale *as)
{
	return as->h.sched->n_classes + as->sc->n_workloads;
}

/* Group g, its pod request and its pods. */
static struct as_class *group(struct autoscale *as, size_t g, struct pod_request *pod, int64_t *n)
{
	size_t classes = as->h.sched->n_classes;
	if (g < classes) {
		const struct sched_class *cl = &as->h.sched->classes[g];
		*pod = (struct pod_request){cl->workload, cl->gpus, 0, false, cl->variant};
		*n = (int64_t)cl->n * placement_pods(as->h.placer, (size_t)cl->workload);
		return class_at(as, g);
	}
	*pod = (struct pod_request){(int32_t)(g - classes), 1, 0, false, 0};
	*n = infer_pending_replicas(as->h.infer, g - classes, pod);
	return &as->replicas[g - classes];
}

/* What the option of pool p requests (the least-waste expander's figures). */
static void add_request(struct autoscale *as, size_t p, const struct pod_request *pod, int64_t n)
{
	struct as_pool *ap = &as->pools[p];
	const struct workload_spec *w = &as->sc->workloads[pod->workload];
	ap->req_gpu +=
		(double)n * placement_equivalent(as->h.placer, (size_t)pod->workload, p, pod->gpus);
	ap->req_cpu += (double)n * w->cpu;
	ap->req_mem += (double)n * w->memory_bytes;
	ap->pods += n;
}

static void note_triggered(struct as_class *c, size_t p)
{
	if (c->note == NOTE_NONE) {
		c->note = NOTE_TRIGGERED;
		c->pool = (int32_t)p;
	}
}

/* The upcoming (provisioning) nodes of every autoscaled pool, empty. */
static void reset_estimates(struct autoscale *as)
{
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		struct as_pool *ap = &as->pools[p];
		const struct pool_state *cs = &as->h.cluster->pools[p];
		ap->n_est = 0;
		for (int32_t i = 0; ap->autoscaled && i < cs->n_nodes; i++)
			if (as->state[cs->first_node + i] == NODE_PROVISIONING) {
				ap->est_pods[ap->n_est] = 0;
				ap->est[ap->n_est++] = cs->first_node + i;
			}
		ap->n_up = ap->n_est;
		ap->n_new = 0;
		ap->pods = 0;
		ap->req_gpu = ap->req_cpu = ap->req_mem = 0;
	}
}

static int by_score(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* The groups with pods left, in CA's DecreasingPodOrderer order for pool
 * p's template (cpu / node cpu + memory / node memory, largest first;
 * estimator/decreasing_pod_orderer.go), the groups' order on ties. */
static size_t order_groups(struct autoscale *as, size_t p)
{
	const struct pool_spec *ps = &as->sc->pools[p];
	size_t n = 0, classes = as->h.sched->n_classes;
	GP_GROW(as->order, as->cap_order, n_groups(as));
	for (size_t g = 0; g < n_groups(as); g++) {
		const struct as_class *c =
			g < classes ? &as->classes[g] : &as->replicas[g - classes];
		if (!c->remain)
			continue;
		int32_t w = g < classes ? as->h.sched->classes[g].workload : (int32_t)(g - classes);
		const struct workload_spec *ws = &as->sc->workloads[w];
		double score = (ps->cpu > 0 ? ws->cpu / ps->cpu : 0) +
			       (ps->memory_bytes > 0 ? ws->memory_bytes / ps->memory_bytes : 0);
		as->order[n++] = (struct ranked){score, g};
	}
	qsort(as->order, n, sizeof *as->order, by_score);
	return n;
}

/* The next down slot of pool p after *cursor (a new node of its template), or -1. */
static int32_t next_slot(const struct autoscale *as, size_t p, int32_t *cursor)
{
	const struct pool_state *cs = &as->h.cluster->pools[p];
	while (++*cursor < cs->n_nodes)
		if (as->state[cs->first_node + *cursor] == NODE_DOWN)
			return cs->first_node + *cursor;
	return -1;
}

/* Puts a pod on estimation node i of pool p. */
static void put(struct autoscale *as, size_t p, int32_t i, const struct pod_request *pod)
{
	autoscale_probe(as, pod, as->pools[p].est[i]);
	as->pools[p].est_pods[i]++;
}

/* Pods of the blocked groups that fit upcoming nodes wait for them, pod by
 * pod with the scheduler's filters (CA counts upcoming nodes as part of the
 * cluster: core/scaleup/orchestrator), in the estimator's order for each
 * pool (what the estimate that launched them put there); the rest
 * (c->remain) need new nodes.  Notes are reset here.  The pods stay on the
 * upcoming nodes for the scan. */
static void fill_upcoming(struct autoscale *as, sim_time now)
{
	size_t classes = as->h.sched->n_classes;
	for (size_t g = 0; g < n_groups(as); g++) {
		struct pod_request pod;
		int64_t n;
		struct as_class *c = group(as, g, &pod, &n);
		c->note = NOTE_NONE;
		c->helped = 0;
		c->blocked = g < classes ? c->blocked : n > 0; /* replicas pending: unplaceable */
		c->remain = c->blocked ? n : 0;
	}
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		struct as_pool *ap = &as->pools[p];
		size_t n = ap->n_up ? order_groups(as, p) : 0;
		for (size_t k = 0; k < n; k++) {
			struct pod_request pod;
			int64_t pods;
			struct as_class *c = group(as, as->order[k].group, &pod, &pods);
			/* Identical pods: a node one of them did not fit takes no later one. */
			for (int32_t i = 0; i < ap->n_up && c->remain;) {
				if (!placement_fits_node(as->h.placer, &pod, ap->est[i], now)) {
					i++;
					continue;
				}
				put(as, p, i, &pod);
				c->remain--;
				c->helped++;
				note_triggered(c, p);
			}
		}
	}
}

/* Places up to c->remain pods of the group on pool p's new nodes as CA's
 * BinpackingNodeEstimator does (estimator/binpacking_estimator.go): first
 * on the new nodes added so far (tryToScheduleOnExistingNodes, stopping at
 * the first pod that fits none), then on the last node added, opening a
 * new node from the template when it is full, while the pool is below max
 * (the limiter); an empty new node the pod does not fit ends the group.
 * Returns the pods placed; *last is the last node added (-1: none). */
static int64_t pack_group(struct autoscale *as, size_t p, const struct pod_request *pod, int64_t n,
			  sim_time now, int32_t *last, int32_t *cursor)
{
	struct as_pool *ap = &as->pools[p];
	const struct placer *pl = as->h.placer;
	int32_t room = as->sc->pools[p].autoscale.max - ap->size;
	int64_t placed = 0;
	/* Identical pods: a new node one of them did not fit takes no later one. */
	for (int32_t i = ap->n_up; i < ap->n_est && placed < n;) {
		if (placement_fits_node(pl, pod, ap->est[i], now)) {
			put(as, p, i, pod);
			placed++;
		} else {
			i++;
		}
	}
	while (placed < n) {
		if (*last >= 0 && placement_fits_node(pl, pod, ap->est[*last], now)) {
			put(as, p, *last, pod);
			placed++;
			continue;
		}
		if ((*last >= 0 && !ap->est_pods[*last]) || ap->n_est - ap->n_up >= room)
			break;
		int32_t node = next_slot(as, p, cursor);
		if (node < 0)
			break;
		*last = ap->n_est;
		ap->est_pods[ap->n_est] = 0;
		ap->est[ap->n_est++] = node;
		if (!placement_fits_node(pl, pod, node, now))
			break;
	}
	return placed;
}

/* Pool p's option: the new nodes (with pods) the estimate needs for the
 * remaining pods, capped at max; with `apply`, the pods placed leave
 * c->remain for good.  The simulation's pods stay on the nodes. */
static void pack_pool(struct autoscale *as, size_t p, sim_time now, bool apply)
{
	struct as_pool *ap = &as->pools[p];
	int32_t last = -1, cursor = -1;
	ap->n_est = ap->n_up;
	ap->req_gpu = ap->req_cpu = ap->req_mem = 0;
	ap->pods = 0;
	size_t n = order_groups(as, p);
	for (size_t k = 0; k < n; k++) {
		struct pod_request pod;
		int64_t pods;
		struct as_class *c = group(as, as->order[k].group, &pod, &pods);
		if (!placement_fits_empty(as->h.placer, &pod, p, now))
			continue;
		int64_t placed = pack_group(as, p, &pod, c->remain, now, &last, &cursor);
		add_request(as, p, &pod, placed);
		if (!apply || !placed)
			continue;
		c->remain -= placed;
		c->helped += placed;
		note_triggered(c, p);
	}
	ap->n_new = 0;
	for (int32_t i = ap->n_up; i < ap->n_est; i++)
		ap->n_new += ap->est_pods[i] > 0;
}

/* Each autoscaled pool's option, each from the same cluster (upcoming nodes
 * with the pods that wait for them). */
static void estimate(struct autoscale *as, sim_time now)
{
	size_t mark = as->n_probes;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		if (!as->pools[p].autoscaled || now < as->pools[p].backoff_until)
			continue; /* a group in backoff is no option */
		pack_pool(as, p, now, false);
		autoscale_unprobe(as, mark);
	}
}

/* Lower is better: filter e's score of pool p's option. */
static double option_score(const struct autoscale *as, enum expander_kind e, size_t p)
{
	const struct as_pool *ap = &as->pools[p];
	const struct pool_spec *ps = &as->sc->pools[p];
	double nodes = ap->n_new;
	switch (e) {
	case EXPANDER_LEAST_WASTE: {
		/* expander/waste/waste.go: the unrequested shares of the new
		 * nodes' cpu and memory, summed; GPUs do not count.  A pool
		 * without cpu or memory has no term for it. */
		double waste = 0;
		if (ps->cpu > 0)
			waste += (nodes * ps->cpu - ap->req_cpu) / (nodes * ps->cpu);
		if (ps->memory_bytes > 0)
			waste += (nodes * ps->memory_bytes - ap->req_mem) /
				 (nodes * ps->memory_bytes);
		return waste;
	}
	case EXPANDER_PRICE: {
		double per_node =
			ps->gpus_per_node * ps->price.gpu_hour + ps->cpu * ps->price.cpu_hour +
			ps->memory_bytes / (1024.0 * 1024.0 * 1024.0) * ps->price.gib_hour;
		return nodes * per_node / fmax(ap->req_gpu, EPS);
	}
	case EXPANDER_PRIORITY: return -(double)ap->priority;
	case EXPANDER_MOST_PODS: return -(double)ap->pods; /* mostpods.go */
	case EXPANDER_LEAST_NODES: return nodes;           /* leastnodes.go */
	case EXPANDER_RANDOM: break;
	}
	return 0;
}

/* One filter of the chain over the options left: keeps the best-scoring
 * ones (ties all kept); returns how many.  priority.go keeps, of the options
 * a ConfigMap line matches, those of the highest priority, and all options
 * when none matches. */
static size_t filter(struct autoscale *as, enum expander_kind e)
{
	double best = INFINITY;
	size_t n = 0;
	bool matched = false;
	for (size_t p = 0; p < as->sc->n_pools; p++)
		matched |= as->option[p] && as->pools[p].priority != INT32_MIN;
	if (e == EXPANDER_PRIORITY && !matched)
		return SIZE_MAX;
	for (size_t p = 0; p < as->sc->n_pools; p++)
		if (as->option[p] &&
		    !(e == EXPANDER_PRIORITY && as->pools[p].priority == INT32_MIN))
			best = fmin(best, option_score(as, e, p));
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		if (!as->option[p])
			continue;
		bool keep = !(e == EXPANDER_PRIORITY && as->pools[p].priority == INT32_MIN) &&
			    option_score(as, e, p) <= best + EPS;
		as->option[p] = keep;
		n += keep;
	}
	return n;
}

/* The expander's choice among the options with new nodes: the chain's
 * filters in turn until one option is left (expander/factory/chain.go), then
 * a random draw among the rest (random.go, the fallback).  -1: no option. */
static int32_t expand(struct autoscale *as)
{
	size_t n = 0;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		as->option[p] = as->pools[p].autoscaled && as->pools[p].n_new;
		n += as->option[p];
	}
	for (int32_t k = 0; k < as->n_chain && n > 1; k++) {
		if (as->chain[k] == EXPANDER_RANDOM)
			break;
		size_t left = filter(as, as->chain[k]);
		n = left == SIZE_MAX ? n : left;
	}
	if (!n)
		return -1;
	unsigned long draw = n > 1 ? gsl_rng_uniform_int(as->rng, n) : 0;
	for (size_t p = 0; p < as->sc->n_pools; p++)
		if (as->option[p] && draw-- == 0)
			return (int32_t)p;
	return -1;
}

/* Launches the chosen pool's new nodes. */
static void scale_up(struct autoscale *as, size_t p)
{
	struct as_pool *ap = &as->pools[p];
	int32_t launched = 0, from = ap->size;
	for (int32_t i = 0; i < ap->n_new; i++) {
		/* Interrupted spot nodes hold their slots through the notice; in a
		 * storm of interruptions the rest waits for the next scan. */
		int32_t node = free_slot(as, p);
		if (node < 0)
			break;
		launch(as, node);
		launched++;
	}
	if (launched) {
		ap->out.scale_ups++;
		as->last_scale_up = autoscale_now(as);
		note_scale_up(as, p, from);
	}
}

/* After the choice: the notes of the remaining pods, and which pools sit at
 * max with pods they could host. */
static void note_rest(struct autoscale *as, sim_time now)
{
	for (size_t p = 0; p < as->sc->n_pools; p++)
		as->pools[p].at_max_now = false;
	for (size_t g = 0; g < n_groups(as); g++) {
		struct pod_request pod;
		int64_t n;
		struct as_class *c = group(as, g, &pod, &n);
		if (!c->remain)
			continue;
		bool fits_any = false;
		int32_t backed_off = 0;
		c->at_max = 0;
		for (size_t p = 0; p < as->sc->n_pools; p++) {
			const struct as_pool *ap = &as->pools[p];
			if (!ap->autoscaled || !placement_fits_empty(as->h.placer, &pod, p, now))
				continue;
			fits_any = true;
			if (ap->size >= as->sc->pools[p].autoscale.max) {
				c->at_max++;
				as->pools[p].at_max_now = true;
			} else if (now < ap->backoff_until) {
				backed_off++;
			}
		}
		if (c->note == NOTE_NONE && !fits_any)
			c->note = NOTE_NO_FIT;
		else if (c->note == NOTE_NONE && c->at_max)
			c->note = NOTE_MAX;
		else if (c->note == NOTE_NONE && backed_off) {
			c->note = NOTE_BACKOFF;
			c->at_max = backed_off;
		}
	}
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		accrue(as, &as->pools[p]);
		as->pools[p].at_max = as->pools[p].at_max_now;
	}
}

/* The pods waiting for each pool's nodes, from the groups' notes. */
static void count_waiting(struct autoscale *as)
{
	size_t classes = as->h.sched->n_classes;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		accrue(as, &as->pools[p]);
		as->pools[p].waiting = 0;
	}
	as->replicas_helped = 0;
	for (size_t g = 0; g < n_groups(as); g++) {
		const struct as_class *c =
			g < classes ? &as->classes[g] : &as->replicas[g - classes];
		if (c->note != NOTE_TRIGGERED)
			continue;
		as->pools[c->pool].waiting += c->helped;
		as->replicas_helped += g < classes ? 0 : c->helped;
	}
}

/* Replicas the last scan gave nodes that have been placed since stop
 * waiting for provisioning (the scheduler's classes say so through
 * autoscale_started).  O(inference workloads) while some wait. */
static void replicas_placed(struct autoscale *as)
{
	for (size_t w = 0; as->replicas_helped && w < as->sc->n_workloads; w++) {
		struct as_class *c = &as->replicas[w];
		struct pod_request pod;
		if (c->note != NOTE_TRIGGERED || !c->helped)
			continue;
		int64_t left = infer_pending_replicas(as->h.infer, w, &pod);
		if (left >= c->helped)
			continue;
		set_waiting(as, c->pool, left - c->helped);
		as->replicas_helped -= c->helped - left;
		c->helped = left;
	}
}

/* --- the loop ------------------------------------------------------------------- */

static int32_t note_detail(const struct as_class *c)
{
	return c->note == NOTE_TRIGGERED ? c->pool : c->at_max;
}

/* Whether a class's note changed in the scan: its pods' messages change. */
static bool notes_differ(const struct autoscale *as, size_t n)
{
	for (size_t cls = 0; cls < n; cls++) {
		const struct as_class *c = &as->classes[cls];
		if (c->note != c->was || (c->note != NOTE_NONE && note_detail(c) != c->was_detail))
			return true;
	}
	return false;
}

/* One loop of the autoscaler: scale up for the unschedulable pods, or else
 * scale down; returns whether the pods' notes changed or pods were moved. */
static bool scan(struct autoscale *as)
{
	sim_time now = autoscale_now(as);
	size_t n = as->h.sched->n_classes;
	class_at(as, n ? n - 1 : 0);
	for (size_t cls = 0; cls < n; cls++) {
		struct as_class *c = &as->classes[cls];
		c->was = c->note;
		c->was_detail = note_detail(c);
	}
	reset_estimates(as);
	fill_upcoming(as, now);
	estimate(as, now);
	int32_t chosen = expand(as);
	if (chosen >= 0) {
		pack_pool(as, (size_t)chosen, now, true);
		scale_up(as, (size_t)chosen);
	}
	autoscale_unprobe(as, 0);
	note_rest(as, now);
	count_waiting(as);
	bool moved = false;
	if (chosen < 0) /* CA: no scale-down in a loop that scaled up */
		moved = autoscale_scale_down(as, now);
	return moved || notes_differ(as, n);
}

/* Whether a later scan can still change the nodes: pods wait, nodes are
 * being provisioned, or unneeded nodes are above their pool's min. */
static bool scans_matter(const struct autoscale *as)
{
	if (as->h.work_left(as->h.ctx) || as->n_removable)
		return true;
	for (size_t p = 0; p < as->sc->n_pools; p++)
		if (as->pools[p].autoscaled && as->pools[p].provisioning)
			return true;
	return false;
}

bool autoscale_provisioning(const struct autoscale *as) { return as && as->provisioning > 0; }

bool autoscale_registering(const struct autoscale *as) { return as && as->registering > 0; }

sim_time autoscale_settled_at(const struct autoscale *as)
{
	return as ? as->last_removal : SIM_NEVER;
}

bool autoscale_settle(struct autoscale *as)
{
	if (!as)
		return false;
	if (as->replicas_helped)
		replicas_placed(as);
	if (!as->scan_due)
		return false;
	as->scan_due = false;
	bool changed = scan(as);
	if (scans_matter(as))
		as_push(as, autoscale_now(as) + as->scan_interval, EV_AS_SCAN, 0, 0);
	if (changed) {
		(*as->h.freed)++; /* the scheduler tries again: its messages get the notes */
		*as->h.dirty = true;
	}
	return changed;
}

/* --- results --------------------------------------------------------------------- */

void autoscale_results(struct autoscale *as, struct results *out, sim_time end)
{
	if (!as)
		return;
	(void)end;
	const double hour = (double)SIM_HOUR;
	out->scaling = gp_xcalloc(as->sc->n_pools, sizeof *out->scaling);
	int64_t interruptions = 0;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		struct as_pool *ap = &as->pools[p];
		const struct pool_spec *ps = &as->sc->pools[p];
		if (!ap->autoscaled && !ps->spot.on)
			continue;
		accrue(as, ap);
		const struct scope_gauges *g =
			&as->h.collect->scopes[collect_scope_pool(as->sc, p)];
		ap->out.node_hours = g->total[GAUGE_POWERED] / hour / ps->gpus_per_node;
		ap->out.peak_nodes = g->peak[PEAK_CAPACITY] / ps->gpus_per_node;
		struct pool_scaling *r = &out->scaling[out->n_scaling++];
		*r = ap->out;
		interruptions += r->interruptions;
		results_add_metric(out, ps->name, METRIC_NODE_HOURS, r->node_hours);
		/* The pool's bill: every node from launch to removal at its prices. */
		double node_price =
			ps->gpus_per_node * ps->price.gpu_hour + ps->cpu * ps->price.cpu_hour +
			ps->memory_bytes / (1024.0 * 1024.0 * 1024.0) * ps->price.gib_hour;
		results_add_metric(out, ps->name, METRIC_COST_NODES, r->node_hours * node_price);
		results_add_metric(out, ps->name, METRIC_NODES_PEAK, r->peak_nodes);
		results_add_metric(out, ps->name, METRIC_SCALE_UPS, (double)r->scale_ups);
		results_add_metric(out, ps->name, METRIC_NODES_ADDED, (double)r->nodes_added);
		results_add_metric(out, ps->name, METRIC_SCALE_DOWNS, (double)r->scale_downs);
		results_add_metric(out, ps->name, METRIC_SPOT_INTERRUPTIONS,
				   (double)r->interruptions);
		results_add_metric(out, ps->name, METRIC_AUTOSCALER_AT_MAX_S, r->at_max_s);
		results_add_metric(out, ps->name, METRIC_PROVISIONING_WAIT_S,
				   r->provisioning_wait_s);
		results_add_metric(out, ps->name, METRIC_FAILED_SCALE_UPS,
				   (double)r->failed_scale_ups);
	}
	results_add_metric(out, "all", METRIC_SPOT_INTERRUPTIONS, (double)interruptions);
}
