/*
 * autoscale.c - the Cluster Autoscaler's scale-up and scale-down over node
 * slots, and spot interruptions (see autoscale.h).
 */
#include "gpuplan/autoscale.h"

#include "gpuplan/arrivals.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --max-empty-bulk-delete: empty nodes removed in one scan. */
#define MAX_EMPTY_BULK_DELETE 10

/* Slack for packing fractions of a node. */
#define EPS 1e-9

enum node_state { NODE_DOWN, NODE_PROVISIONING, NODE_READY, NODE_DRAINING };

enum note_kind { NOTE_NONE, NOTE_TRIGGERED, NOTE_MAX, NOTE_NO_FIT };

/* Per scheduler class: what the autoscaler last said about its pods. */
struct as_class {
	bool blocked;          /* the scheduler's last try failed on the nodes */
	uint8_t note;          /* enum note_kind */
	int32_t pool;          /* NOTE_TRIGGERED: the pool its nodes come from */
	int32_t at_max;        /* NOTE_MAX: pools at max that would fit it */
	int64_t remain;        /* scratch of a scan: pods no node takes yet */
	int64_t helped;        /* pods the last scan gave upcoming or new nodes */
};

struct as_pool {
	bool autoscaled, spot;
	int32_t size;          /* Ready + provisioning: the node group's size */
	int32_t provisioning;
	double *room;          /* scratch of a scan: free share of upcoming and new nodes */
	int32_t n_room;
	int32_t n_new;         /* scratch: new nodes of this pool's option */
	double req_gpu, req_cpu, req_mem; /* scratch: what the option's pods request */
	gsl_rng *rng;          /* spot interruptions */
	struct pool_scaling out;
	bool at_max;           /* since the last scan */
	sim_time at_max_since;
	int64_t waiting;       /* pods of classes waiting for this pool's new nodes */
	sim_time waiting_since;
};

struct autoscale {
	const struct scenario *sc;
	struct autoscale_host h;
	struct as_pool *pools;
	uint8_t *state;        /* per node slot: enum node_state */
	uint16_t *gen;         /* per node slot: its launch, for stale events */
	sim_time *unneeded;    /* per node slot: first scan that saw it unneeded; SIM_NEVER */
	struct as_class *classes;
	size_t cap_classes;
	sim_time scan_interval; /* SIM_NEVER: no autoscaled pool */
	sim_time delay_after_add;
	sim_time last_scale_up;
	sim_time last_removal;  /* when a node last stopped being billed; SIM_NEVER */
	bool scan_due;
	enum expander_kind expander;
	gsl_rng *rng;          /* the expander's ties and random choice */
	char **triggered;      /* per pool: "pod triggered scale-up: [POOL]" */
	char **max_notes;      /* [n]: "pod didn't trigger scale-up: n max node group size reached" */
};

static const char NO_FIT_NOTE[] =
	"pod didn't trigger scale-up (it wouldn't fit if a new node is added)";

/* --- small helpers ------------------------------------------------------------ */

static sim_time now_of(const struct autoscale *as) { return as->h.engine->now; }

static const struct pool_spec *spec_of(const struct autoscale *as, int32_t node)
{
	return &as->sc->pools[as->h.cluster->nodes[node].pool];
}

/* Moves gauge g of scope all and of pool p. */
static void gauge(struct autoscale *as, size_t p, enum gauge g, double delta)
{
	collect_add(as->h.collect, 0, g, delta, now_of(as));
	collect_add(as->h.collect, collect_scope_pool(as->sc, p), g, delta, now_of(as));
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
	sim_time now = now_of(as);
	if (now > ap->waiting_since) {
		ap->out.provisioning_wait_s += sim_seconds(now - ap->waiting_since) * (double)ap->waiting;
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

static void init_pool(struct autoscale *as, size_t p)
{
	const struct pool_spec *ps = &as->sc->pools[p];
	struct as_pool *ap = &as->pools[p];
	ap->autoscaled = ps->autoscale.on;
	ap->spot = ps->spot.on && ps->spot.rate > 0;
	ap->size = ps->nodes;
	ap->out.pool = (int32_t)p;
	ap->room = gp_xcalloc((size_t)as->h.cluster->pools[p].n_nodes + 1, sizeof *ap->room);
	if (ap->spot) {
		ap->rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(ap->rng, (unsigned long)arrivals_stream_seed(
					     as->sc->seed ^ UINT64_C(0x73706f74), ps->name)); /* "spot" */
	}
	if (ap->autoscaled && (as->scan_interval == SIM_NEVER ||
			       ps->autoscale.scan_interval < as->scan_interval)) {
		as->scan_interval = ps->autoscale.scan_interval; /* one loop for the cluster */
		as->expander = ps->autoscale.expander;
		as->delay_after_add = ps->autoscale.delay_after_add;
	}
	size_t len = strlen(ps->name) + 40;
	as->triggered[p] = gp_xmalloc(len);
	snprintf(as->triggered[p], len, "pod triggered scale-up: [%s]", ps->name);
}

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
	as->triggered = gp_xcalloc(sc->n_pools, sizeof *as->triggered);
	as->max_notes = gp_xcalloc(sc->n_pools + 1, sizeof *as->max_notes);
	for (size_t p = 0; p < sc->n_pools; p++)
		init_pool(as, p);
	for (size_t n = 1; n <= sc->n_pools; n++) {
		as->max_notes[n] = gp_xmalloc(80);
		snprintf(as->max_notes[n], 80,
			 "pod didn't trigger scale-up: %zu max node group size reached", n);
	}
	as->rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(as->rng, (unsigned long)arrivals_stream_seed(
				     sc->seed ^ UINT64_C(0x6361), "cluster-autoscaler")); /* "ca" */
	return as;
}

void autoscale_destroy(struct autoscale *as)
{
	if (!as)
		return;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		free(as->pools[p].room);
		if (as->pools[p].rng)
			gsl_rng_free(as->pools[p].rng);
		free(as->triggered[p]);
		free(as->max_notes[p + 1]);
	}
	free(as->pools);
	free(as->triggered);
	free(as->max_notes);
	free(as->state);
	free(as->gen);
	free(as->unneeded);
	free(as->classes);
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
	double mean = 1.0 / spec_of(as, node)->spot.rate; /* seconds */
	double draw = gsl_ran_exponential(ap->rng, mean);
	if (draw > sim_seconds(SCENARIO_MAX_SPAN))
		return; /* past the end of the clock: never */
	sim_time after = (sim_time)llround(draw * (double)SIM_SECOND);
	engine_push(as->h.engine, now_of(as) + after, EV_AS_NOTICE, (uint32_t)node, as->gen[node]);
}

/* Launches node slot `node`: billed from now, Ready after the provision time. */
/* A node of the pool starts (+1) or stops (-1) being provisioned: the
 * timeseries' gpus_provisioning beside the Ready gpus_capacity. */
static void provisioning(struct autoscale *as, int32_t node, int32_t delta)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	as->pools[p].provisioning += delta;
	assert(as->pools[p].provisioning >= 0);
	gauge(as, p, GAUGE_PROVISIONING, delta * as->h.cluster->nodes[node].gpus);
}

static void launch(struct autoscale *as, int32_t node)
{
	const struct pool_spec *ps = spec_of(as, node);
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	assert(as->state[node] == NODE_DOWN);
	as->state[node] = NODE_PROVISIONING;
	as->gen[node]++;
	provisioning(as, node, +1);
	ap->out.nodes_added++;
	if (ap->autoscaled)
		ap->size++;
	gauge(as, p, GAUGE_POWERED, as->h.cluster->nodes[node].gpus);
	sim_time delay = ps->autoscale.on ? ps->autoscale.provision_time : ps->startup;
	engine_push(as->h.engine, now_of(as) + delay, EV_AS_READY, (uint32_t)node, as->gen[node]);
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

static void on_ready(struct autoscale *as, int32_t node, uint16_t gen)
{
	if (gen != as->gen[node] || as->state[node] != NODE_PROVISIONING)
		return; /* interrupted while provisioning */
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	as->state[node] = NODE_READY;
	as->unneeded[node] = SIM_NEVER;
	provisioning(as, node, -1);
	cluster_node_up(as->h.cluster, node);
	gauge(as, p, GAUGE_CAPACITY, as->h.cluster->nodes[node].gpus);
	nodes_changed(as);
	(*as->h.freed)++;
	*as->h.dirty = true;
}

/* A Ready node leaves the scheduler's nodes. */
static void take_out(struct autoscale *as, int32_t node)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	cluster_node_down(as->h.cluster, node);
	gauge(as, p, GAUGE_CAPACITY, -as->h.cluster->nodes[node].gpus);
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
		take_out(as, node);
		as->h.drain(as->h.ctx, node);
		assert(cluster_node_empty(as->h.cluster, node) && "drained");
	}
	as->state[node] = NODE_DRAINING;
	as->gen[node]++; /* a pending Ready or notice is stale */
	engine_push(as->h.engine, now_of(as) + spec_of(as, node)->spot.notice, EV_AS_GONE,
		    (uint32_t)node, as->gen[node]);
}

static void on_gone(struct autoscale *as, int32_t node, uint16_t gen)
{
	if (gen != as->gen[node] || as->state[node] != NODE_DRAINING)
		return;
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	as->state[node] = NODE_DOWN;
	gauge(as, p, GAUGE_POWERED, -as->h.cluster->nodes[node].gpus);
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
		engine_push(as->h.engine, 0, EV_AS_SCAN, 0, 0);
}

void autoscale_event(struct autoscale *as, const struct event *ev)
{
	switch ((enum autoscale_event)ev->type) {
	case EV_AS_SCAN:
		as->scan_due = true;
		break;
	case EV_AS_READY: on_ready(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_NOTICE: on_notice(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_GONE: on_gone(as, (int32_t)ev->id, ev->gen); break;
	case EV_AS_END: break;
	}
}

/* --- the scheduler's hooks ------------------------------------------------------ */

void autoscale_class_failed(struct autoscale *as, size_t cls, bool nodes)
{
	if (as)
		class_at(as, cls)->blocked = nodes;
}

const char *autoscale_note(const struct autoscale *as, size_t cls)
{
	if (!as || cls >= as->cap_classes)
		return NULL;
	const struct as_class *c = &as->classes[cls];
	switch ((enum note_kind)c->note) {
	case NOTE_TRIGGERED: return as->triggered[c->pool];
	case NOTE_MAX: return as->max_notes[c->at_max];
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

/* --- scale-up ------------------------------------------------------------------- */

/* The pods of class cls, and its pod request. */
static int64_t class_pods(const struct autoscale *as, size_t cls, struct pod_request *pod)
{
	const struct sched_class *cl = &as->h.sched->classes[cls];
	*pod = (struct pod_request){cl->workload, cl->gpus, 0, false};
	return (int64_t)cl->n * placement_pods(as->h.placer, (size_t)cl->workload);
}

/* Packs up to n pods of `share` of a node each into pool p's room (nodes
 * r.. of it), first fit; returns the pods placed. */
static int64_t pack_room(struct as_pool *ap, int32_t from, double share, int64_t n)
{
	int64_t placed = 0;
	for (int32_t i = from; i < ap->n_room && placed < n; i++) {
		int64_t k = (int64_t)floor(ap->room[i] / share + EPS);
		k = k < n - placed ? k : n - placed;
		ap->room[i] -= (double)k * share;
		placed += k;
	}
	return placed;
}

/* Packs n pods into new nodes of pool p (its room after the upcoming nodes),
 * opening nodes while the pool is below max; returns the pods placed. */
static int64_t pack_new(struct autoscale *as, size_t p, const struct pod_request *pod,
			int32_t per_node, int64_t n)
{
	struct as_pool *ap = &as->pools[p];
	const struct autoscale_spec *a = &as->sc->pools[p].autoscale;
	double share = 1.0 / per_node;
	int32_t first_new = ap->n_room - ap->n_new;
	int64_t placed = pack_room(ap, first_new, share, n);
	while (placed < n && ap->size + ap->n_new < a->max) {
		ap->room[ap->n_room++] = 1.0;
		ap->n_new++;
		placed += pack_room(ap, ap->n_room - 1, share, n - placed);
	}
	const struct workload_spec *w = &as->sc->workloads[pod->workload];
	ap->req_gpu += (double)placed * placement_equivalent(as->h.placer, (size_t)pod->workload, p,
							      pod->gpus);
	ap->req_cpu += (double)placed * w->cpu;
	ap->req_mem += (double)placed * w->memory_bytes;
	return placed;
}

/* The room of every autoscaled pool: its upcoming (provisioning) nodes. */
static void reset_room(struct autoscale *as)
{
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		struct as_pool *ap = &as->pools[p];
		ap->n_room = ap->autoscaled ? ap->provisioning : 0;
		for (int32_t i = 0; i < ap->n_room; i++)
			ap->room[i] = 1.0;
		ap->n_new = 0;
		ap->req_gpu = ap->req_cpu = ap->req_mem = 0;
	}
}

/* Pods of the blocked classes that fit upcoming nodes wait for them; the
 * rest (c->remain) need new nodes.  Notes are reset here. */
static void fill_upcoming(struct autoscale *as, sim_time now)
{
	for (size_t cls = 0; cls < as->h.sched->n_classes; cls++) {
		struct as_class *c = class_at(as, cls);
		c->note = NOTE_NONE;
		c->remain = 0;
		c->helped = 0;
		struct pod_request pod;
		int64_t n = class_pods(as, cls, &pod);
		if (!c->blocked || n == 0)
			continue;
		c->remain = n;
		for (size_t p = 0; p < as->sc->n_pools && c->remain; p++) {
			struct as_pool *ap = &as->pools[p];
			if (!ap->autoscaled || !ap->n_room || !placement_fits_empty(as->h.placer, &pod, p, now))
				continue;
			int32_t k = cluster_pods_per_node(as->h.cluster, p,
							  &as->sc->workloads[pod.workload], pod.gpus);
			int64_t placed = pack_room(ap, 0, 1.0 / k, c->remain);
			c->helped += placed;
			if (placed && c->note == NOTE_NONE) {
				c->note = NOTE_TRIGGERED;
				c->pool = (int32_t)p;
			}
			c->remain -= placed;
		}
	}
}

/* Packs the remaining pods of the classes an empty node of pool p fits into
 * new nodes of p; with `apply`, the pods placed leave c->remain for good. */
static void pack_pool(struct autoscale *as, size_t p, sim_time now, bool apply)
{
	for (size_t cls = 0; cls < as->h.sched->n_classes; cls++) {
		struct as_class *c = &as->classes[cls];
		struct pod_request pod;
		if (!c->remain)
			continue;
		class_pods(as, cls, &pod);
		if (!placement_fits_empty(as->h.placer, &pod, p, now))
			continue;
		int32_t k = cluster_pods_per_node(as->h.cluster, p, &as->sc->workloads[pod.workload],
						  pod.gpus);
		int64_t placed = pack_new(as, p, &pod, k, c->remain);
		if (!apply || !placed)
			continue;
		c->remain -= placed;
		c->helped += placed;
		if (c->note == NOTE_NONE) {
			c->note = NOTE_TRIGGERED;
			c->pool = (int32_t)p;
		}
	}
}

/* Each autoscaled pool's option: the new nodes its bin-packing estimate
 * needs for the remaining pods, capped at max. */
static void estimate(struct autoscale *as, sim_time now)
{
	for (size_t p = 0; p < as->sc->n_pools; p++)
		if (as->pools[p].autoscaled)
			pack_pool(as, p, now, false);
}

/* Packs the chosen option again, this time taking its pods off the classes. */
static void apply_choice(struct autoscale *as, size_t p, sim_time now)
{
	struct as_pool *ap = &as->pools[p];
	ap->n_room -= ap->n_new;
	ap->n_new = 0;
	ap->req_gpu = ap->req_cpu = ap->req_mem = 0;
	pack_pool(as, p, now, true);
}

/* Lower is better: the expander's score of pool p's option. */
static double option_score(const struct autoscale *as, size_t p)
{
	const struct as_pool *ap = &as->pools[p];
	const struct pool_spec *ps = &as->sc->pools[p];
	double nodes = ap->n_new, gpus = nodes * ps->gpus_per_node;
	switch (as->expander) {
	case EXPANDER_LEAST_WASTE: {
		double waste = (gpus - ap->req_gpu) / gpus;
		if (ps->cpu > 0)
			waste += (nodes * ps->cpu - ap->req_cpu) / (nodes * ps->cpu);
		if (ps->memory_bytes > 0)
			waste += (nodes * ps->memory_bytes - ap->req_mem) / (nodes * ps->memory_bytes);
		return waste;
	}
	case EXPANDER_PRICE: {
		double per_node = ps->gpus_per_node * ps->price.gpu_hour + ps->cpu * ps->price.cpu_hour +
				  ps->memory_bytes / (1024.0 * 1024.0 * 1024.0) * ps->price.gib_hour;
		return nodes * per_node / fmax(ap->req_gpu, EPS);
	}
	case EXPANDER_PRIORITY: return -(double)ps->autoscale.priority;
	case EXPANDER_RANDOM: break;
	}
	return 0;
}

/* The expander's choice among the options with new nodes; ties (every
 * option under random) drawn at random.  -1: no option. */
static int32_t expand(struct autoscale *as)
{
	double best = INFINITY;
	unsigned long ties = 0;
	int32_t choice = -1;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		if (!as->pools[p].autoscaled || !as->pools[p].n_new)
			continue;
		double s = option_score(as, p);
		if (s < best - EPS) {
			best = s;
			ties = 0;
		}
		if (s <= best + EPS && gsl_rng_uniform_int(as->rng, ++ties) == 0)
			choice = (int32_t)p;
	}
	return choice;
}

/* Launches the chosen pool's new nodes. */
static void scale_up(struct autoscale *as, size_t p)
{
	struct as_pool *ap = &as->pools[p];
	int32_t launched = 0;
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
		as->last_scale_up = now_of(as);
	}
}

/* After the choice: the notes of the remaining pods, and which pools sit at
 * max with pods they could host. */
static void note_rest(struct autoscale *as, sim_time now)
{
	bool *at_max = gp_xcalloc(as->sc->n_pools, sizeof *at_max);
	for (size_t cls = 0; cls < as->h.sched->n_classes; cls++) {
		struct as_class *c = &as->classes[cls];
		if (!c->remain)
			continue;
		struct pod_request pod;
		class_pods(as, cls, &pod);
		bool fits_any = false;
		c->at_max = 0;
		for (size_t p = 0; p < as->sc->n_pools; p++) {
			const struct as_pool *ap = &as->pools[p];
			if (!ap->autoscaled || !placement_fits_empty(as->h.placer, &pod, p, now))
				continue;
			fits_any = true;
			if (ap->size >= as->sc->pools[p].autoscale.max) {
				c->at_max++;
				at_max[p] = true;
			}
		}
		if (c->note == NOTE_NONE && !fits_any)
			c->note = NOTE_NO_FIT;
		else if (c->note == NOTE_NONE && c->at_max)
			c->note = NOTE_MAX;
	}
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		accrue(as, &as->pools[p]);
		as->pools[p].at_max = at_max[p];
	}
	free(at_max);
}

/* The pods waiting for each pool's nodes, from the classes' notes. */
static void count_waiting(struct autoscale *as)
{
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		accrue(as, &as->pools[p]);
		as->pools[p].waiting = 0;
	}
	for (size_t cls = 0; cls < as->h.sched->n_classes; cls++) {
		const struct as_class *c = &as->classes[cls];
		if (c->note == NOTE_TRIGGERED)
			as->pools[c->pool].waiting += c->helped;
	}
}

/* --- scale-down ------------------------------------------------------------------ */

/* Whether a Ready node is unneeded: GPU requests below the threshold and no
 * pod that would have to move (gpuplan moves none: only empty nodes). */
static bool unneeded(const struct autoscale *as, int32_t node)
{
	const struct node *nd = &as->h.cluster->nodes[node];
	double threshold = spec_of(as, node)->autoscale.threshold;
	return nd->allocated / nd->gpus < threshold && cluster_node_empty(as->h.cluster, node);
}

static void remove_node(struct autoscale *as, int32_t node)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	take_out(as, node);
	as->state[node] = NODE_DOWN;
	as->gen[node]++; /* its interruption draw is stale */
	as->unneeded[node] = SIM_NEVER;
	ap->size--;
	ap->out.scale_downs++;
	as->last_removal = now_of(as);
	gauge(as, p, GAUGE_POWERED, -as->h.cluster->nodes[node].gpus);
}

/* Tracks unneeded nodes; outside the cool-down after a scale-up, removes
 * those unneeded long enough, down to min. */
static void scale_down(struct autoscale *as, sim_time now)
{
	bool cooldown = as->last_scale_up != SIM_NEVER && now < as->last_scale_up + as->delay_after_add;
	int32_t removed = 0;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		const struct pool_spec *ps = &as->sc->pools[p];
		const struct pool_state *cs = &as->h.cluster->pools[p];
		if (!as->pools[p].autoscaled)
			continue;
		for (int32_t i = 0; i < cs->n_nodes; i++) {
			int32_t node = cs->first_node + i;
			if (as->state[node] != NODE_READY)
				continue;
			if (!unneeded(as, node)) {
				as->unneeded[node] = SIM_NEVER;
				continue;
			}
			if (as->unneeded[node] == SIM_NEVER)
				as->unneeded[node] = now;
			if (!cooldown && removed < MAX_EMPTY_BULK_DELETE &&
			    now - as->unneeded[node] >= ps->autoscale.unneeded_time &&
			    as->pools[p].size > ps->autoscale.min) {
				remove_node(as, node);
				removed++;
			}
		}
	}
}

/* --- the loop ------------------------------------------------------------------- */

/* Notes before a scan, to tell whether the pods' messages change. */
static bool notes_differ(const struct autoscale *as, const uint8_t *before, const int32_t *what,
			 size_t n)
{
	for (size_t cls = 0; cls < n; cls++) {
		const struct as_class *c = &as->classes[cls];
		int32_t detail = c->note == NOTE_TRIGGERED ? c->pool : c->at_max;
		if (c->note != before[cls] || (c->note != NOTE_NONE && detail != what[cls]))
			return true;
	}
	return false;
}

/* One loop of the autoscaler: scale up for the unschedulable pods, or else
 * scale down; returns whether the pods' notes changed. */
static bool scan(struct autoscale *as)
{
	sim_time now = now_of(as);
	size_t n = as->h.sched->n_classes;
	class_at(as, n ? n - 1 : 0);
	uint8_t *before = gp_xmalloc(n + 1);
	int32_t *what = gp_xmalloc((n + 1) * sizeof *what);
	for (size_t cls = 0; cls < n; cls++) {
		const struct as_class *c = &as->classes[cls];
		before[cls] = c->note;
		what[cls] = c->note == NOTE_TRIGGERED ? c->pool : c->at_max;
	}
	reset_room(as);
	fill_upcoming(as, now);
	estimate(as, now);
	int32_t chosen = expand(as);
	if (chosen >= 0) {
		apply_choice(as, (size_t)chosen, now);
		scale_up(as, (size_t)chosen);
	}
	note_rest(as, now);
	count_waiting(as);
	if (chosen < 0) /* CA: no scale-down in a loop that scaled up */
		scale_down(as, now);
	bool changed = notes_differ(as, before, what, n);
	free(before);
	free(what);
	return changed;
}

/* Whether an autoscaled pool has nodes the autoscaler will still remove. */
static bool above_min(const struct autoscale *as)
{
	for (size_t p = 0; p < as->sc->n_pools; p++)
		if (as->pools[p].autoscaled &&
		    (as->pools[p].size > as->sc->pools[p].autoscale.min || as->pools[p].provisioning))
			return true;
	return false;
}

sim_time autoscale_settled_at(const struct autoscale *as)
{
	return as ? as->last_removal : SIM_NEVER;
}

bool autoscale_settle(struct autoscale *as)
{
	if (!as || !as->scan_due)
		return false;
	as->scan_due = false;
	bool changed = scan(as);
	if (as->h.work_left(as->h.ctx) || above_min(as))
		engine_push(as->h.engine, now_of(as) + as->scan_interval, EV_AS_SCAN, 0, 0);
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
		const struct scope_gauges *g = &as->h.collect->scopes[collect_scope_pool(as->sc, p)];
		ap->out.node_hours = g->total[GAUGE_POWERED] / hour / ps->gpus_per_node;
		ap->out.peak_nodes = g->peak[GAUGE_CAPACITY] / ps->gpus_per_node;
		struct pool_scaling *r = &out->scaling[out->n_scaling++];
		*r = ap->out;
		interruptions += r->interruptions;
		results_add_metric(out, ps->name, "node_hours", r->node_hours, "node_hours");
		/* The pool's bill: every node from launch to removal at its prices. */
		double node_price = ps->gpus_per_node * ps->price.gpu_hour +
				    ps->cpu * ps->price.cpu_hour +
				    ps->memory_bytes / (1024.0 * 1024.0 * 1024.0) * ps->price.gib_hour;
		results_add_metric(out, ps->name, "cost_nodes", r->node_hours * node_price, "usd");
		results_add_metric(out, ps->name, "nodes_peak", r->peak_nodes, "nodes");
		results_add_metric(out, ps->name, "scale_ups", (double)r->scale_ups, "count");
		results_add_metric(out, ps->name, "nodes_added", (double)r->nodes_added, "nodes");
		results_add_metric(out, ps->name, "scale_downs", (double)r->scale_downs, "nodes");
		results_add_metric(out, ps->name, "spot_interruptions", (double)r->interruptions,
				   "count");
		results_add_metric(out, ps->name, "autoscaler_at_max_s", r->at_max_s, "s");
		results_add_metric(out, ps->name, "provisioning_wait_s", r->provisioning_wait_s, "s");
	}
	results_add_metric(out, "all", "spot_interruptions", (double)interruptions, "count");
}
