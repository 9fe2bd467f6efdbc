/*
 * advise_jobs.c - the alternatives of `advise` simulated in parallel
 * (advise_int.h): each on a thread of its own, with a scenario, a run and
 * results of its own (the simulator keeps no mutable state outside them),
 * handed to the caller's thread in the order they were planned, which
 * writes them: the database gets the same rows, run ids included, whatever
 * the number of threads.
 */
#include "advise_int.h"

#include "gpuplan/run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned advise_default_jobs(void) { return gp_default_jobs(ADVISE_MAX_JOBS); }

void advise_simulate(const struct advise_spec *sp, const struct advise_row *row,
		     struct advise_sim *out)
{
	out->sc = NULL;
	out->err = (struct gp_err){0};
	results_init(&out->r);
	out->rc = scenario_load_overrides(sp->scenario, sp->sets, sp->n_sets, row->sets,
					  row->n_sets, &out->sc, &out->err);
	if (!out->rc)
		out->rc = run_simulate(out->sc, &out->r, &out->err);
}

void advise_sim_free(struct advise_sim *s)
{
	results_free(&s->r);
	scenario_free(s->sc);
	s->sc = NULL;
	gp_err_free(&s->err);
}

/* The work shared by the threads.  A thread takes the next alternative
 * unless it would run more than `window` ahead of the one being written:
 * memory holds at most that many runs' results. */
struct crew {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const struct advise_spec *sp;
	const struct advise_row *rows;
	size_t n, next, written, window;
	bool stop;
	struct advise_sim *sims;
	bool *ready;
};

static void *worker(void *arg)
{
	struct crew *c = arg;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->stop && c->next < c->n && c->next >= c->written + c->window)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop || c->next >= c->n)
			break;
		size_t i = c->next++;
		pthread_mutex_unlock(&c->mu);
		advise_simulate(c->sp, &c->rows[i], &c->sims[i]);
		pthread_mutex_lock(&c->mu);
		c->ready[i] = true;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Frees what the crew holds (its lock and signal too, when it made them). */
static void crew_free(struct crew *c, pthread_t *tid, bool locks)
{
	if (locks) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
	}
	free(tid);
	free(c->ready);
	free(c->sims);
}

int advise_simulate_rows(const struct advise_spec *sp, const struct advise_row *rows, size_t n,
			 advise_done_fn done, void *ctx)
{
	unsigned jobs = sp->jobs ? sp->jobs : advise_default_jobs();
	if (jobs > n)
		jobs = (unsigned)n;
	int rc = 0;
	struct crew c = {.sp = sp, .rows = rows, .n = n, .window = jobs};
	pthread_t *tid = NULL;
	unsigned started = 0;
	if (jobs > 1) {
		c.sims = gp_xcalloc(n, sizeof *c.sims);
		c.ready = gp_xcalloc(n, sizeof *c.ready);
		pthread_mutex_init(&c.mu, NULL);
		pthread_cond_init(&c.cv, NULL);
		tid = gp_xcalloc(jobs, sizeof *tid);
		while (started < jobs && !pthread_create(&tid[started], NULL, worker, &c))
			started++;
	}
	if (!started) { /* the single-threaded path (GPUPLAN_THREADS=1, --jobs 1) */
		for (size_t i = 0; i < n && !rc; i++) {
			struct advise_sim s;
			advise_simulate(sp, &rows[i], &s);
			rc = done(ctx, i, &s);
		}
		crew_free(&c, tid, jobs > 1);
		return rc;
	}
	size_t i = 0;
	for (; i < n && !rc; i++) {
		pthread_mutex_lock(&c.mu);
		while (!c.ready[i])
			pthread_cond_wait(&c.cv, &c.mu);
		pthread_mutex_unlock(&c.mu);
		rc = done(ctx, i, &c.sims[i]);
		pthread_mutex_lock(&c.mu);
		c.written = i + 1;
		c.stop = rc != 0;
		pthread_cond_broadcast(&c.cv);
		pthread_mutex_unlock(&c.mu);
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	for (; i < n; i++) /* simulated after a failure: never written */
		if (c.ready[i])
			advise_sim_free(&c.sims[i]);
	crew_free(&c, tid, true);
	return rc;
}
