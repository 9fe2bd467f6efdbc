/*
 * search_ahead.c - a search's probes simulated ahead of their turn, on the
 * processors its own probe leaves idle (search_int.h).
 *
 * The search asks for the value it probes now and for the one it guesses
 * comes next; each runs on a thread of its own.  When the walk's next value
 * is the guess, its run is ready or under way; when it is not, the guess is
 * cancelled (its run ends at the next instant) and dropped.  A finished run
 * inside the bracket is kept, as the walk may come back to it.  The search
 * writes a run only when it takes it, in the walk's order, so the database,
 * the probes printed and the answer are those of the search without
 * threads, whatever the number of processors: only the time changes.
 */
#include "search_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define AHEAD_SLOTS 4 /* the probe, its guess and two finished runs kept */

struct ahead_run {
	bool used;
	double value;
	char text[64];
	pthread_t tid;
	atomic_bool cancel, done;
	struct search_sim sim;
	const struct search_spec *spec;
};

struct search_ahead {
	const struct search_spec *spec;
	unsigned threads;
	struct ahead_run runs[AHEAD_SLOTS];
};

struct search_ahead *search_ahead_create(const struct search_spec *s)
{
	unsigned threads = s->jobs ? s->jobs : gp_default_jobs(SEARCH_AHEAD_THREADS);
	if (threads < 2 || s->seeds != 1)
		return NULL; /* every probe on the search's own thread */
	struct search_ahead *a = gp_xcalloc(1, sizeof *a);
	a->spec = s;
	a->threads = threads;
	return a;
}

static void *simulate(void *arg)
{
	struct ahead_run *r = arg;
	search_simulate(r->spec, r->text, 0, &r->cancel, &r->sim);
	atomic_store(&r->done, true);
	return NULL;
}

static void drop(struct ahead_run *r, bool cancel)
{
	if (cancel)
		atomic_store(&r->cancel, true);
	pthread_join(r->tid, NULL);
	search_sim_free(&r->sim);
	r->used = false;
}

static struct ahead_run *find(struct search_ahead *a, double value)
{
	for (int i = 0; i < AHEAD_SLOTS; i++)
		if (a->runs[i].used && a->runs[i].value == value)
			return &a->runs[i];
	return NULL;
}

/* Starts value's run unless it is held or every thread is busy. */
static void start(struct search_ahead *a, double value, const char *text)
{
	unsigned running = 0;
	struct ahead_run *slot = NULL, *oldest_done = NULL;
	if (find(a, value))
		return;
	for (int i = 0; i < AHEAD_SLOTS; i++) {
		struct ahead_run *r = &a->runs[i];
		if (!r->used && !slot)
			slot = r;
		else if (r->used && !atomic_load(&r->done))
			running++;
		else if (r->used && !oldest_done)
			oldest_done = r;
	}
	if (running >= a->threads)
		return;
	if (!slot && oldest_done) {
		drop(oldest_done, false);
		slot = oldest_done;
	}
	if (!slot)
		return;
	*slot = (struct ahead_run){.used = true, .value = value, .spec = a->spec};
	snprintf(slot->text, sizeof slot->text, "%s", text);
	atomic_init(&slot->cancel, false);
	atomic_init(&slot->done, false);
	if (pthread_create(&slot->tid, NULL, simulate, slot))
		slot->used = false; /* no thread: the probe runs on the search's */
}

void search_ahead_plan(struct search_ahead *a, double bad, double good, double now,
		       const char *now_text, double next, const char *next_text)
{
	if (!a)
		return;
	/* cancel what is under way for neither; drop what the bracket excludes */
	for (int i = 0; i < AHEAD_SLOTS; i++) {
		struct ahead_run *r = &a->runs[i];
		if (!r->used || r->value == now || r->value == next)
			continue;
		bool inside =
			(r->value > bad && r->value < good) || (r->value > good && r->value < bad);
		if (!atomic_load(&r->done) || !inside)
			drop(r, true);
	}
	start(a, now, now_text);
	if (next_text)
		start(a, next, next_text);
}

bool search_ahead_take(struct search_ahead *a, double value, struct search_sim *out)
{
	struct ahead_run *r = a ? find(a, value) : NULL;
	if (!r)
		return false;
	pthread_join(r->tid, NULL);
	*out = r->sim;
	r->used = false;
	return true;
}

void search_ahead_free(struct search_ahead *a)
{
	if (!a)
		return;
	for (int i = 0; i < AHEAD_SLOTS; i++)
		if (a->runs[i].used)
			drop(&a->runs[i], true);
	free(a);
}
