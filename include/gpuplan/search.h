/*
 * search.h - bisection over one scenario parameter (`gpuplan search`).
 *
 * The questions: "what is the smallest pool that meets every deadline?"
 * (--min) and "what is the largest request rate whose p99 TTFT stays under
 * 2 s?" (--max).  The condition is assumed monotone in the parameter: for
 * --min it holds from the answer upwards, for --max from the answer
 * downwards.  Each probe is one run per seed, appended to the results
 * database with the probed value in its params; the condition must hold for
 * every seed.  Integer ranges bisect to the exact answer; real ranges to
 * within the tolerance.  A condition that bounds a quantile of a
 * per-request figure from above (ttft_p99_s <= 0.5) ends a probe's run as
 * soon as more of its requests are late than the quantile allows (infer.h's
 * stop rule): the verdict is the whole run's, and the run is stored with
 * status "stopped" and the figures of the part it ran.
 */
#ifndef GPUPLAN_SEARCH_H
#define GPUPLAN_SEARCH_H

#include "gpuplan/firstcut.h"
#include "gpuplan/scenario.h"
#include "gpuplan/store.h"

enum search_op { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

/* "METRIC OP VALUE", METRIC of scope all or "SCOPE.METRIC". */
struct search_condition {
	char scope[256];       /* a pool or workload name: up to 253 characters */
	enum metric_id metric; /* resolved through metric.h's table */
	enum search_op op;
	double value;
	char text[400]; /* as given, for the searches table */
};

/* A parameter value: a number with an optional unit suffix ("10/s", "90m"). */
struct search_value {
	double number;
	char suffix[16];
};

#define SEARCH_MAX_LINKED 8

struct search_spec {
	const char *scenario;
	const char *const *sets; /* --set overrides applied to every probe */
	size_t n_sets;
	const struct override *overrides; /* typed ones applied after them (advise's) */
	size_t n_overrides;
	const char *key; /* the --set path that varies */
	struct search_value lo, hi;
	bool integer;  /* both bounds are whole numbers */
	bool maximize; /* --max; otherwise --min */
	struct search_condition until;
	int seeds;            /* >= 1: seeds seed .. seed + seeds - 1 */
	double tolerance;     /* real ranges; 0 = (hi - lo) / 1000 */
	int64_t start;        /* integer --min: the value to probe first (search_estimate's
			   * first cut); 0 = bisect [lo, hi] */
	const char *with_key; /* set beside key in every probe to with_base +
			       * ceil(value / with_per): the nodes that hold `value`
			       * replicas, beside those kept for other work (advise);
			       * NULL: none */
	int64_t with_per, with_base;
	/* Overrides set beside key in every probe, made from its value (advise:
	 * the quotas that grow with a pool's nodes), at most SEARCH_MAX_LINKED,
	 * written owned into out; returns how many.  Called from the probes'
	 * threads.  NULL: none. */
	size_t (*linked)(const void *ctx, const char *value, struct override *out);
	const void *linked_ctx;
	bool has_service; /* search_estimate's first cut modelled the question: its
			   * service, whose traffic (read from a trace once) the
			   * probes' calibration reuses (search_recut) */
	struct firstcut_service service;
	/* Called after each probe's run is written, with its id, scenario and
	 * results, which the search frees next: a caller that wants a run's
	 * figures (advise) reads them here rather than from the database.
	 * NULL: none. */
	void (*on_run)(void *ctx, int64_t run_id, const struct scenario *sc,
		       const struct results *r);
	void *run_ctx;
	unsigned jobs; /* threads for probes run ahead (search_ahead.c); 0: GPUPLAN_THREADS
			* or the processors; 1: none.  The runs written are the same. */
};

/* What one probe found, for progress output. */
struct search_probe {
	const char *value; /* as set, e.g. "12.5/s" */
	bool holds;        /* for every seed */
	double metric;     /* the worst value over the seeds */
	int64_t first_run_id;
	bool stopped; /* a seed's run stopped once the condition was certain to fail
		       * (a quantile bound: search.c's stop_rule); metric is then
		       * the worst over the parts run, past the bound */
};

typedef void (*search_probe_fn)(void *ctx, const struct search_probe *p);

int search_parse_condition(const char *text, struct search_condition *c, struct gp_err *err);

/* "12.5/s" -> {12.5, "/s"}; GP_EINPUT when it does not start with a number. */
int search_parse_value(const char *text, struct search_value *v, struct gp_err *err);

/* Checks lo < hi with one unit, and sets spec->integer for whole-number bounds. */
int search_check_range(struct search_spec *spec, struct gp_err *err);

/* What a search found.  The probes' runs are first_run_id .. last_run_id
 * (with the seeds' runs); run_id is the answer's (its first seed's). */
struct search_answer {
	bool found;     /* some value in [lo, hi] meets the condition */
	char value[64]; /* formatted as it would be set: "3", "12.5/s" */
	double number;  /* the same as a number, its unit aside: 3, 12.5 */
	int64_t run_id;
	int64_t first_run_id, last_run_id;
};

/* The first cut of a minimum-replica question (firstcut.h): the replicas of
 * an inference workload (KEY workloads.NAME.replicas) whose TTFT tail the
 * condition bounds, computed in microseconds, into spec->start (0 when the
 * search is not such a question: then it bisects), and its service into
 * spec->service.  sc is the scenario with the search's overrides and
 * KEY=lo (the one `search` loads to check --lo). */
void search_estimate(struct search_spec *spec, const struct scenario *sc);

/* The first cut's service (firstcut.h) for inference workload w of sc on GPU
 * type gpu (NULL: the GPU of the first pool that offers w): its model,
 * server keys and traffic (Poisson at one rate with fixed, exponential or
 * lognormal tokens, or an Azure trace: its rate, tokens and burstiness from
 * the rows), bounded by ttft_s (less the tokenization time) and tpot_s at
 * the percentile (ttft_s 0: no TTFT bound, ttft_slo_s 0).  false: the first
 * cut does not model the service. */
bool search_service(const struct scenario *sc, const struct workload_spec *w,
		    const struct gpu_type *gpu, double ttft_s, double tpot_s, double percentile,
		    struct firstcut_service *s);

/* Runs the search and fills *answer.  With spec->start, it probes start,
 * then the first cut re-solved with what each probe's run measured (its
 * TTFT tail calibrates the first cut's load; search_recut), regula falsi
 * once both ends of the bracket are calibrated, until the boundary pair
 * (start - k fails, start - k + 1 holds) is found; a question the first cut
 * does not model gallops away from start (steps 1, 1, 2, 4, ...) and
 * bisects.  Either way the answer is the full bisection's whenever the
 * condition is monotone. */
int search_run(const struct search_spec *spec, struct store *st, search_probe_fn on_probe,
	       void *ctx, struct search_answer *answer, struct gp_err *err);

#endif
