/*
 * infer.h - inference services: replicas that are continuous-batching
 * servers on a roofline, the requests they serve, the router in front of
 * them and the autoscaler that sizes them (docs/inference.md).  The model and its defaults are described at the top of
 * infer.c.
 *
 * Lifecycle.  The simulation creates one struct infer per run
 * (infer_create), lets it place the initial replicas at time 0
 * (infer_start), asks it to place replicas still pending whenever capacity
 * may have been freed (infer_place_pending), after each of these reads what
 * happened (infer_news: units freed, progress), and at the end asks for the
 * metrics and request rows (infer_results) before infer_destroy.  The
 * module owns its replicas, requests and arrival streams; it borrows the
 * run's engine, cluster, placer and collector through struct infer_host.
 * Its events are its own: infer_create registers their types with the
 * engine (engine.h), handles them, and after each calls the host's `heard`,
 * which reads infer_news as after the calls above.
 *
 * Replicas are pods that hold their units until scaled down: on the GPUs'
 * tenant lists they appear with ids INFER_TENANT_BIT | replica, with f = 0,
 * so the batch contention model does not count them (their duty cycle
 * changes every iteration); their own activity goes to the collector's
 * engine and SM gauges as it happens.
 *
 * Nothing here prints or exits.  A request in flight holds a slot; one
 * that completes or is rejected leaves its latencies to its service's
 * samples (samples.h) and its slot to the next arrival, so memory follows
 * the requests in flight, plus one row per request with output.requests.
 */
#ifndef GPUPLAN_INFER_H
#define GPUPLAN_INFER_H

#include "gpuplan/cluster.h"
#include "gpuplan/collect.h"
#include "gpuplan/engine.h"
#include "gpuplan/placement.h"
#include "gpuplan/reasons.h"
#include "gpuplan/results.h"
#include "gpuplan/roofline.h"

/* Tenant ids of replicas on the GPUs' tenant lists. */
#define INFER_TENANT_BIT UINT32_C(0x80000000)

static inline bool infer_is_tenant(uint32_t job) { return (job & INFER_TENANT_BIT) != 0; }

/* What the module borrows from the run. */
struct infer_host {
	struct engine *engine;
	struct cluster *cluster;
	struct placer *placer;
	struct collect *collect;
	/* where a pending replica's FitError and its pod-seconds go, as a
	 * batch pod's (a service is a class of identical pods); NULL: nowhere */
	struct reasons *reasons;
	void (*heard)(void *ctx); /* after each of the module's events: read infer_news */
	void *ctx;
};

/* What happened in the module that the run loop acts on; the loop asks after
 * each call (infer_news) and the module never touches the loop's state. */
enum infer_news_flag {
	INFER_FREED = 1u << 0,    /* a replica freed its units: blocked work may fit */
	INFER_PROGRESS = 1u << 1, /* a request arrived or finished (the run is not stalled) */
	INFER_STOP = 1u << 2,     /* the stop rule's quantile is past its bound (infer_set_stop) */
};

struct infer;

/* NULL when the scenario has no inference workload. */
struct infer *infer_create(const struct scenario *sc, const struct infer_host *host);
void infer_destroy(struct infer *in);

/* At time 0: places the initial replicas (ready at once: the service is
 * already up when the scenario starts) and schedules the first arrivals
 * and autoscaler looks. */
void infer_start(struct infer *in);

/* Places pending replicas that fit now. */
void infer_place_pending(struct infer *in);

/* The node under a replica (tenant id INFER_TENANT_BIT | replica) is
 * cordoned and drained: the replica gives its units back at once, its
 * requests go back to the router, and unless it was being scaled down a
 * replacement waits for room (a Deployment's new pod). */
void infer_evict(struct infer *in, uint32_t tenant);

/* Replicas of inference workload w pending for room, and their pod request
 * (*pod untouched for other workloads); 0 for NULL. */
int32_t infer_pending_replicas(const struct infer *in, size_t w, struct pod_request *pod);

/* The pod request of replica tenant (INFER_TENANT_BIT | replica). */
struct pod_request infer_replica_pod(const struct infer *in, uint32_t tenant);

/* Whether replicas wait for room. */
bool infer_has_pending(const struct infer *in);

/* The INFER_ flags raised since the last call, cleared; *at gets the time of
 * the last progress when INFER_PROGRESS is among them.  0 for NULL. */
unsigned infer_news(struct infer *in, sim_time *at);

/* Of inference workload w (0 for others): replicas killed for overflowing
 * VRAM, and requests within SLO that passed their quality draw. */
int64_t infer_oom_kills(const struct infer *in, size_t w);
int64_t infer_verified(const struct infer *in, size_t w);

/* Whether requests are still to arrive or to be served. */
bool infer_work_left(const struct infer *in);

/* The per-request figures a quantile bound can be on (ttft_pXX_s, tpot_pXX_s,
 * e2e_pXX_s). */
enum infer_figure { INFER_TTFT, INFER_TPOT, INFER_E2E };

/*
 * A stop rule (search.h): the f-quantile of figure over the requests of scope
 * must stay at or under bound seconds.  The quantile is samples.h's, over
 * the completed requests, n of them; it exceeds the bound once the values
 * at its ranks floor(f (n - 1)) and above all do, that is once at least
 * n - floor(f (n - 1)) values exceed the bound.  n is not known before the
 * end, but it is at most N, the scope's requests (their counts: a trace's
 * rows x repeat, a synthetic stream's count), so need, the most of
 * n - floor(f (n - 1)) over 1 <= n <= N, late values prove it whatever the
 * rest of the run does.  A value counts as late when it exceeds the bound
 * by more than a relative 1e-9, so that the interpolation's rounding cannot
 * bring the quantile back to it.  The rule is off (false) when a service in
 * the run runs to a horizon (count -1), when its samples could outgrow the
 * exact budget (a sketch's quantile is not the values'), or when the scope
 * has no service.
 */
struct infer_stop {
	const char *scope; /* "all", a workload's name, or a routed service's */
	enum infer_figure figure;
	double quantile; /* f, 0 < f < 1: p / 100 as the metric computes it */
	double bound;    /* seconds */
};

/* Arms the stop rule: from then on, INFER_STOP is raised (infer_news) once
 * the rule's quantile is certain to exceed its bound.  Returns whether the
 * rule is on.  Call after infer_create, before the run. */
bool infer_set_stop(struct infer *in, const struct infer_stop *stop);

/* Adds the inference metrics of every inference workload and of "all", and
 * the request rows when output.requests; call after the run's other metrics
 * (cost_per_million_tokens reads cost_total). */
void infer_results(struct infer *in, struct results *out);

/* --- the server model, for tests and estimates ---------------------------- */

/* The memory one GPU of a replica of w takes in pool p (bytes): vram, or
 * memory_fraction of the unit, or the footprint of max_batch typical
 * requests capped at the unit. */
double infer_server_memory(const struct pool_spec *p, const struct workload_spec *w);

/* The part of a GPU a replica's unit gives it when alone (docs/inference.md, "Sharing"). */
struct gpu_share infer_unit_share(const struct pool_spec *p, const struct workload_spec *w);

/* An iteration of `seconds` on the simulation clock: rounded to the
 * microsecond, at least 1. */
sim_time infer_iteration_time(double seconds);

#endif
