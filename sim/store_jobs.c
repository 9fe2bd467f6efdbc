/*
 * store_jobs.c - a run's job rows in the database (store_int.h): the ids of
 * the texts they repeat (job_texts) and the binding of job_rows and
 * requests rows.
 *
 * Ids are numbered by kind, each kind after the ones before: workload w is
 * w, then the statuses, the nodes, the Kueue flavors, and last the pending
 * messages, the one kind a run keeps adding to.  So every id a row needs is
 * known from the scenario and the node slots alone, and rows can be written
 * while the run goes on (store_writer.c); job_texts gets the ids the rows
 * use, ascending, once the run is over.
 */
#include "gpuplan/store.h"

#include <string.h>

#include "store_int.h"

void sti_job_ids(struct sti_jobs *c, const struct scenario *sc, size_t n_nodes)
{
	c->sc = sc;
	c->n_nodes = n_nodes;
	c->n_reasons = SIZE_MAX; /* not known before the run's end */
	c->status0 = (int64_t)sc->n_workloads;
	c->node0 = c->status0 + JOB_FAILED + 1;
	c->flavor0 = c->node0 + (int64_t)n_nodes;
	c->reason0 = c->flavor0 + (int64_t)sc->n_flavors;
	/* Pending and running share "unfinished": the lowest status with the
	 * same text gives the id. */
	for (int k = 0; k <= JOB_FAILED; k++) {
		c->status_id[k] = c->status0 + k;
		for (int e = 0; e < k; e++)
			if (!strcmp(job_status_name((enum job_status)e),
				    job_status_name((enum job_status)k))) {
				c->status_id[k] = c->status0 + e;
				break;
			}
	}
}

/* A job's record refers to a workload and node that exist (else bind_job
 * fails the write). */
static bool job_valid(const struct sti_jobs *c, const struct job_record *j)
{
	return j->workload >= 0 && (size_t)j->workload < c->sc->n_workloads &&
	       (j->node < 0 || (size_t)j->node < c->n_nodes) && j->job_id >= 0 &&
	       j->job_id <= STI_JOB_ID_MAX;
}

static bool job_has_reason(const struct sti_jobs *c, const struct job_record *j)
{
	return j->reason >= 0 && (size_t)j->reason < c->n_reasons;
}

static bool job_has_flavor(const struct sti_jobs *c, const struct job_record *j)
{
	return j->flavor >= 0 && (size_t)j->flavor < c->sc->n_flavors;
}

static int64_t job_status_id(const struct sti_jobs *c, const struct job_record *j)
{
	return c->status_id[j->status <= JOB_FAILED ? j->status : JOB_PENDING];
}

/* Marks in used (room for every id) the ids the rows refer to. */
static void mark_texts(const struct sti_jobs *c, const struct job_record *rows, size_t n,
		       uint8_t *used)
{
	for (size_t i = 0; i < n; i++) {
		const struct job_record *j = &rows[i];
		if (!job_valid(c, j))
			continue;
		used[j->workload] = 1;
		used[job_status_id(c, j)] = 1;
		if (j->node >= 0)
			used[c->node0 + j->node] = 1;
		if (job_has_reason(c, j))
			used[c->reason0 + j->reason] = 1;
		if (job_has_flavor(c, j))
			used[c->flavor0 + j->flavor] = 1;
	}
}

void sti_job_mark(struct sti_texts_used *u, const struct sti_jobs *c, const struct job_record *rows,
		  size_t n)
{
	int64_t most = c->reason0; /* the ids below the pending messages' */
	for (size_t i = 0; i < n; i++)
		if (job_valid(c, &rows[i]) && job_has_reason(c, &rows[i]) &&
		    c->reason0 + rows[i].reason > most)
			most = c->reason0 + rows[i].reason;
	u->ids = gp_grow_zeroed(u->ids, &u->cap, (size_t)most + 1, 1);
	u->reason0 = c->reason0;
	mark_texts(c, rows, n, u->ids);
}

void sti_job_texts_plan(struct sti_jobs *c, const struct results *r, const struct sti_texts_used *u,
			size_t from)
{
	c->r = r;
	c->n_reasons = r->n_reason_texts;
	c->end = c->reason0 + (int64_t)r->n_reason_texts;
	uint8_t *used = gp_xcalloc((size_t)c->end + 1, 1);
	if (u && u->ids && u->reason0 == c->reason0) /* numbered alike */
		memcpy(used, u->ids, u->cap < (size_t)c->end ? u->cap : (size_t)c->end);
	else
		from = 0;
	if (r->n_jobs > from)
		mark_texts(c, r->jobs + from, r->n_jobs - from, used);
	c->texts = gp_xcalloc((size_t)c->end + 1, sizeof *c->texts);
	c->n_texts = 0;
	for (int64_t id = 0; id < c->end; id++)
		if (used[id])
			c->texts[c->n_texts++] = id;
	free(used);
}

/* The text of id (sti_job_ids' numbering). */
static const char *job_text(const struct sti_jobs *c, int64_t id)
{
	if (id < c->status0)
		return c->sc->workloads[id].name;
	if (id < c->node0)
		return job_status_name((enum job_status)(id - c->status0));
	if (id < c->flavor0)
		return c->r->node_names[id - c->node0];
	if (id < c->reason0)
		return c->sc->flavors[id - c->flavor0].name;
	return c->r->reason_texts[id - c->reason0];
}

int sti_bind_job_text(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_jobs *c = ctx;
	(void)err;
	sqlite3_bind_int64(s, p, c->texts[i]);
	sti_bind_text(s, p + 1, job_text(c, c->texts[i]));
	return GP_OK;
}

static void bind_id(sqlite3_stmt *s, struct sti_kept *k, int i, bool has, int64_t id)
{
	if (has)
		sti_keep_int(s, k, i, id);
	else
		sti_keep_null(s, k, i);
}

/* What the store keeps of s's bindings, when s is one of its job_rows
 * statements. */
static struct sti_kept *kept_of(const struct sti_jobs *c, sqlite3_stmt *s)
{
	for (int b = STORE_BATCH_SIZES - 1; c->kept && b >= 0; b--)
		if (c->kept[b].s == s)
			return &c->kept[b];
	return NULL;
}

/* A row whose key is the one SQLite gives a row inserted without one (one
 * past the largest) is inserted without: SQLite then appends it to the
 * table's last page instead of searching for the key: a fifth of the writer's
 * work (docs/benchmarks.md, twelfth round).  A run's job ids follow one
 * another, so all its rows but the first go so. */
static void bind_key(sqlite3_stmt *s, struct sti_kept *k, int p, const struct sti_jobs *c,
		     int64_t key)
{
	if (key == *c->append_key)
		sti_keep_null(s, k, p);
	else
		sti_keep_int(s, k, p, key);
	if (key >= *c->append_key)
		*c->append_key = key + 1;
}

/* A workload or node index out of range is a bug upstream; it fails the
 * write (and so the whole run) instead of reading out of bounds. */
int sti_bind_job(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_jobs *c = ctx;
	const struct job_record *j = &c->jobs[i];
	if (!job_valid(c, j))
		return gp_errkindf(
			err, GP_ERR_INTERNAL, GP_ERUNTIME,
			"%s: writing jobs: job %lld (of at most %u) has workload %d of %zu and node "
			"%d of %zu",
			c->path, (long long)j->job_id, STI_JOB_ID_MAX, (int)j->workload,
			c->sc->n_workloads, (int)j->node, c->n_nodes);
	struct sti_kept *k = kept_of(c, s);
	bind_key(s, k, p, c, sti_job_key(c->run_id, j->job_id));
	sti_keep_int(s, k, p + 1, j->workload);
	sti_keep_time(s, k, p + 2, j->submit);
	sti_keep_time(s, k, p + 3, j->start);
	sti_keep_time(s, k, p + 4, j->end);
	sti_keep_time(s, k, p + 5, j->start == SIM_NEVER ? SIM_NEVER : j->start - j->submit);
	sti_keep_int(s, k, p + 6, j->gpus);
	bind_id(s, k, p + 7, j->node >= 0, c->node0 + j->node);
	sti_keep_int(s, k, p + 8, job_status_id(c, j));
	sti_keep_time(s, k, p + 9, j->deadline);
	sti_keep_int(s, k, p + 10, j->deadline_met ? 1 : 0);
	sti_keep_int(s, k, p + 11, j->verified ? 1 : 0);
	sti_keep_real(s, k, p + 12, j->cost);
	bind_id(s, k, p + 13, job_has_reason(c, j), c->reason0 + j->reason);
	sti_keep_time(s, k, p + 14, j->has_trace_queue ? j->trace_queue : SIM_NEVER);
	sti_keep_int(s, k, p + 15, j->preemptions);
	sti_keep_int(s, k, p + 16, j->oom_kills);
	bind_id(s, k, p + 17, job_has_flavor(c, j), c->flavor0 + j->flavor);
	return GP_OK;
}

/* Latencies the request never reached are NULL. */
int sti_bind_request(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_jobs *c = ctx;
	const struct request_record *q = &c->r->requests[i];
	if (q->workload < 0 || (size_t)q->workload >= c->sc->n_workloads)
		return gp_errkindf(err, GP_ERR_INTERNAL, GP_ERUNTIME,
				   "%s: writing requests: request %lld has workload %d of %zu",
				   c->path, (long long)q->request_id, (int)q->workload,
				   c->sc->n_workloads);
	bool first = q->first_token != SIM_NEVER, done = q->done != SIM_NEVER;
	sqlite3_bind_text(s, p, c->sc->workloads[q->workload].name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, p + 1, q->request_id);
	sti_bind_time(s, p + 2, q->arrival);
	sti_bind_time(s, p + 3, first ? q->first_token - q->arrival : SIM_NEVER);
	if (done && first && q->output_tokens > 1)
		sqlite3_bind_double(s, p + 4,
				    sim_seconds(q->done - q->first_token) / (q->output_tokens - 1));
	else
		sqlite3_bind_null(s, p + 4);
	sti_bind_time(s, p + 5, done ? q->done - q->arrival : SIM_NEVER);
	sqlite3_bind_int(s, p + 6, q->prompt_tokens);
	sqlite3_bind_int(s, p + 7, q->output_tokens);
	sqlite3_bind_int(s, p + 8, q->slo_met ? 1 : 0);
	sqlite3_bind_int(s, p + 9, q->verified ? 1 : 0);
	return GP_OK;
}
