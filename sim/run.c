/*
 * run.c - one run of a scenario: protocol dispatch, the loop, the metrics,
 * the diagnosis (run.h).
 */
#include "gpuplan/run.h"

#include "gpuplan/diagnose.h"
#include "gpuplan/explain.h"
#include "gpuplan/relax.h"
#include "gpuplan/inflation.h"
#include "gpuplan/metrics.h"
#include "gpuplan/sim.h"
#include "gpuplan/units.h"

#include <string.h>
#include <time.h>

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int run_simulate(const struct scenario *sc, struct results *out, struct gp_err *err)
{
	return run_simulate_to(sc, out, NULL, err);
}

/* The sink hears that the rows are whole before the metrics and the
 * diagnosis, which only read them: a writer stores them meanwhile. */
static int simulate(const struct scenario *sc, struct results *out, const struct results_sink *sink,
		    const struct infer_stop *stop, const atomic_bool *cancel, bool *stopped,
		    struct gp_err *err)
{
	if (stopped)
		*stopped = false;
	if (sc->experiment.protocol == EXPERIMENT_INFLATION)
		return inflation_run(sc, out, err); /* the paper's protocol, not a timed run */
	double t0 = wall_now();
	units_format_rfc3339((int64_t)time(NULL), out->started_at, sizeof out->started_at);
	struct sim *s = sim_create(sc, out);
	sim_set_sink(s, sink);
	if (stop)
		sim_set_stop(s, stop);
	sim_set_cancel(s, cancel);
	sim_advance(s, out);
	if (stopped)
		*stopped = !strcmp(out->status, "stopped");
	if (sim_collect(s)->overflow) {
		char at[32];
		units_format_duration(out->sim_end, at, sizeof at);
		sim_finish(s, out);
		return gp_located(err, sc->output.step_loc,
				  "output.step made more than %lld timeseries windows per scope "
				  "by %s of simulated time (the work ran past the span the "
				  "arrivals show); expected a longer step, or no step (it then "
				  "adapts to the span), or raise the limit with the environment "
				  "variable GPUPLAN_MAX_WINDOWS",
				  (long long)sc->output.max_windows, at);
	}
	int failed = sim_failed(s, err);
	if (failed) {
		sim_finish(s, out);
		return failed;
	}
	metrics_reduce(s, sc, out);
	sim_finish(s, out);
	if (sink)
		sink->simulated(sink->ctx);
	metrics_goals(sc, out); /* after the inference figures sim_finish adds */
	metrics_bill(sc, out);
	diagnose_run(sc, out);    /* reads only the results */
	relax_findings(sc, out);  /* the binding constraint first (relax.h) */
	explain_results(sc, out); /* the findings' sentences, for the store and reports */
	out->wall_seconds = wall_now() - t0;
	return GP_OK;
}

int run_simulate_to(const struct scenario *sc, struct results *out, const struct results_sink *sink,
		    struct gp_err *err)
{
	return simulate(sc, out, sink, NULL, NULL, NULL, err);
}

int run_simulate_stop(const struct scenario *sc, struct results *out, const struct infer_stop *stop,
		      const atomic_bool *cancel, bool *stopped, struct gp_err *err)
{
	return simulate(sc, out, NULL, stop, cancel, stopped, err);
}

int run_placements(const struct scenario *sc, struct results *out, struct gp_err *err)
{
	if (sc->experiment.protocol == EXPERIMENT_INFLATION)
		return run_simulate(sc, out, err);
	struct sim *s = sim_create(sc, out);
	sim_advance(s, out);
	int failed = sim_failed(s, err);
	sim_finish(s, out);
	return failed;
}
