/*
 * sim_admit.c - Kueue's admission in a run (quota.h does the arithmetic):
 * a job's quota charged and given back, with the list of holders that
 * preemption picks from; the flavors a job is admitted with; the stage a
 * pending job waits in (its queue's admission classes until it holds quota,
 * then the classes kube-scheduler places); Kueue's preemption of an admitted
 * job; and the admission part of a scheduling pass: the heads of the
 * admission classes (a StrictFIFO queue offers only its first), admitted
 * while quota allows, by preempting victims through quota.h's oracle where
 * the queue's policy lets it.  Admission owns no event: it runs in the pass
 * (sim_schedule.c) after the events of an instant.
 */
#include "sim_int.h"

#include "gpuplan/autoscale.h"
#include "gpuplan/placement.h"
#include "gpuplan/quota.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"

#include <assert.h>
#include <stdlib.h>

/* Admits (+1) or releases (-1) the job's request against its queue's quota.
 * Either may change what other jobs may be admitted or preempt, except in
 * a queue without a quota, which counts nothing. */
void sim_charge_quota(struct sim *s, struct sim_job *j, double sign)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	j->admitted = sign > 0;
	if (!quota_limited(&s->quota, (size_t)ws->queue))
		return;
	quota_request(&s->quota, ws, j->gpus, j->pods, s->ask);
	quota_columns(&s->quota, (size_t)ws->queue, s->ask, j->flavors, s->req);
	quota_charge(&s->quota, (size_t)ws->queue, s->req, sign);
	s->quota_gen++;
	uint32_t id = (uint32_t)(j - s->jobs);
	if (sign > 0) { /* the preemption candidates, without a scan of every job */
		GP_GROW(s->holders, s->cap_holders, s->n_holders + 1);
		j->holder = (uint32_t)s->n_holders;
		s->holders[s->n_holders++] = id;
	} else {
		assert(j->holder < s->n_holders && s->holders[j->holder] == id);
		uint32_t last = s->holders[--s->n_holders];
		s->holders[j->holder] = last;
		s->jobs[last].holder = j->holder;
	}
	s->dirty = true;
}

/* Gives back the quota of a job that held it (it ended or was preempted). */
void sim_release_quota(struct sim *s, struct sim_job *j)
{
	if (j->admitted)
		sim_charge_quota(s, j, -1);
}

/* Kueue admits the job with flavors: the one shown (quota_flavor) and its
 * pods' placement variant (placement.h) follow. */
void sim_take_flavors(struct sim *s, struct sim_job *j, uint64_t flavors)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	int32_t all[SCENARIO_MAX_GROUPS];
	size_t n;
	char res[96];
	j->flavors = flavors;
	j->flavor = quota_flavor(&s->quota, (size_t)ws->queue, flavors,
				 scenario_resource_name(ws, res, sizeof res), all, &n);
	j->variant = placement_variant(&s->placer, all, n);
}

/* Puts a pending job in the queue of its stage: its queue's admission
 * classes until it holds quota, then the classes kube-scheduler places. */
void sim_enqueue(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	struct sched_entry e = sched_entry(s->sched.order, id, j->seq, j->submit, ws->priority,
					   j->deadline, j->duration);
	if (!j->admitted && !quota_limited(&s->quota, (size_t)ws->queue)) {
		j->admitted = true; /* nothing to wait for: no admission class */
		j->admitted_at = s->engine.now;
	}
	if (!j->admitted) {
		size_t cls = sched_add(&s->admit, j->workload, j->gpus, ws->queue, e);
		j->cls = (int32_t)cls;
		reasons_join(&s->reasons, ADMIT_RC(cls), id);
	} else {
		size_t cls = sched_add_variant(&s->sched, j->workload, j->gpus, j->variant,
					       ws->queue, e);
		j->cls = (int32_t)cls;
		reasons_join(&s->reasons, PLACE_RC(cls), id);
		autoscale_joined(s->as, cls, j->pods);
	}
	s->dirty = true;
}

/* Kueue evicts an admitted job to admit another: a running one stops; one
 * whose pods wait for nodes leaves kube-scheduler's queue.  Either waits to
 * be admitted again. */
void sim_kueue_preempt(struct sim *s, uint32_t id)
{
	struct sim_job *j = &s->jobs[id];
	if (j->status == JOB_RUNNING) {
		sim_evict(s, id, true);
		return;
	}
	assert(j->admitted && j->cls >= 0 && "candidates run or wait for nodes");
	size_t cls = (size_t)j->cls;
	sched_remove(&s->sched, cls, id);
	reasons_leave(&s->reasons, id, s->engine.now);
	autoscale_started(s->as, cls, j->pods); /* its pods leave the class as a start's do */
	sim_release_quota(s, j);
	s->wl[j->workload].preemptions++;
	j->preemptions++;
	sim_enqueue(s, id);
}

/* For each StrictFIFO queue, the admission class whose head comes first; -1
 * elsewhere. */
static void strict_heads(const struct sim *s, int64_t *head)
{
	for (size_t q = 0; q < s->sc->n_queues; q++)
		head[q] = -1;
	for (size_t c = 0; c < s->admit.n_classes; c++) {
		const struct sched_class *cl = &s->admit.classes[c];
		if (!cl->n || s->sc->queues[cl->queue].strategy != STRATEGY_STRICT_FIFO)
			continue;
		int64_t h = head[cl->queue];
		if (h < 0 || sched_before(&cl->heap[0], &s->admit.classes[h].heap[0]))
			head[cl->queue] = (int64_t)c;
	}
}

/* The jobs of admission class c wait behind their StrictFIFO queue's head. */
static void wait_behind(struct sim *s, size_t c)
{
	const struct sched_class *cl = &s->admit.classes[c];
	uint32_t head = cl->heap[0].job;
	if (s->behind[c] && reasons_blocked(&s->reasons, ADMIT_RC(c), head, s->quota_gen, cl->n))
		return;
	const char *why = quota_behind(&s->quota, (size_t)cl->queue);
	const struct sim_job *j = &s->jobs[head];
	reasons_fail_kind(&s->reasons, ADMIT_RC(c), j->workload, j->pods, cl->n, why,
			  PEND_BIT(PEND_QUEUE_ORDER), head, s->quota_gen, s->engine.now);
	s->behind[c] = 1;
}

/* The oracle's candidates (quota.h): the jobs that hold quota and run or
 * wait for nodes (not those between an OOM kill and their restart), each
 * with what it holds under its flavors.  O(holders): it runs only for a
 * queue with a preemption policy whose head is short of quota, once per
 * flavor tried after a change of quota. */
static size_t candidates(void *ctx, struct quota_candidate **out)
{
	struct sim *s = ctx;
	size_t n = 0, nr = s->quota.n_res;
	for (size_t h = 0; h < s->n_holders; h++) {
		uint32_t i = s->holders[h];
		const struct sim_job *c = &s->jobs[i];
		if (!(c->status == JOB_RUNNING || c->cls >= 0))
			continue;
		const struct workload_spec *cw = &s->sc->workloads[c->workload];
		GP_GROW(s->cands, s->cap_cands, n + 1);
		GP_GROW(s->cand_req, s->cap_cand_req, (n + 1) * nr + 1);
		quota_request(&s->quota, cw, c->gpus, c->pods, s->cand_ask);
		quota_columns(&s->quota, (size_t)cw->queue, s->cand_ask, c->flavors,
			      s->cand_req + n * nr);
		s->cands[n++] = (struct quota_candidate){.job = i,
							 .seq = c->seq,
							 .queue = (size_t)cw->queue,
							 .priority = cw->priority,
							 .admitted = c->admitted_at,
							 .queued = c->submit};
	}
	for (size_t i = 0; i < n; i++) /* the array may have moved while it grew */
		s->cands[i].req = s->cand_req + i * nr;
	if (n > s->cap_victims) {
		s->cap_victims = n;
		s->victims = gp_xrealloc(s->victims, n * sizeof *s->victims);
		s->best_victims = gp_xrealloc(s->best_victims, n * sizeof *s->best_victims);
	}
	*out = s->cands;
	return n;
}

/*
 * Whether Kueue can admit the head of admission class c now, at once or by
 * preempting the *n_victims jobs it leaves in s->victims, with the flavors
 * in *flavors; *borrows, whether it would borrow from the cohort (counted
 * before any preemption).  When it cannot, the class records Kueue's
 * reason; a class that failed with the same head and no quota change since
 * is not tried again.
 */
static bool try_admit(struct sim *s, size_t c, size_t *n_victims, bool *borrows, uint64_t *flavors)
{
	const struct sched_class *cl = &s->admit.classes[c];
	uint32_t head = cl->heap[0].job;
	*n_victims = 0;
	if (!s->behind[c] && reasons_blocked(&s->reasons, ADMIT_RC(c), head, s->quota_gen, cl->n))
		return false;
	const struct sim_job *j = &s->jobs[head];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	const struct queue_spec *qs = &s->sc->queues[ws->queue];
	quota_request(&s->quota, ws, j->gpus, j->pods, s->ask);
	struct quota_job job = {ws, ws->priority, j->submit, s->ask};
	struct quota_oracle oracle = {candidates, s};
	bool policy = qs->within != WITHIN_NEVER || qs->reclaim != RECLAIM_NEVER;
	enum quota_verdict v =
		quota_assign(&s->quota, (size_t)ws->queue, &job, policy ? &oracle : NULL, flavors,
			     s->req, &s->victims, n_victims);
	if (v == QUOTA_FITS) {
		*borrows = quota_borrows(&s->quota, (size_t)ws->queue, s->req);
		return true;
	}
	s->behind[c] = 0;
	int32_t param;
	enum constraint_kind bk = quota_binding(&s->quota, (size_t)ws->queue, s->ask, &param);
	reasons_bind(&s->reasons, ADMIT_RC(c), bk, param);
	reasons_fail_text(&s->reasons, ADMIT_RC(c), j->workload, j->pods, cl->n,
			  quota_why(&s->quota), head, s->quota_gen, s->engine.now);
	return false;
}

/* Admits the head of admission class c after preempting its victims: it
 * reserves its quota and its pods go to kube-scheduler. */
static void admit(struct sim *s, size_t c, const uint32_t *victims, size_t n_victims,
		  uint64_t flavors)
{
	uint32_t id = sched_head(&s->admit, c)->job;
	sched_pop(&s->admit, c);
	reasons_leave(&s->reasons, id, s->engine.now);
	struct sim_job *j = &s->jobs[id];
	for (size_t i = 0; i < n_victims; i++)
		sim_kueue_preempt(s, victims[i]);
	sim_take_flavors(s, j, flavors);
	sim_charge_quota(s, j, +1);
	j->admitted_at = s->engine.now;
	sim_enqueue(s, id);
}

/*
 * Kueue's part of a pass: admits class heads until none fits, each round the
 * first among those that fit, heads within their nominal quota before those
 * that would borrow, then in the scheduler's order (Kueue: scheduler.go,
 * entryOrdering.Less).  A class found blocked stays blocked for the rest of
 * the pass (admitting only takes quota), unless a preemption gave quota back.
 */
void sim_admit_pass(struct sim *s)
{
	struct sched *a = &s->admit;
	int64_t *heads = s->strict_head;
	s->pass++;
	if (!a->pending)
		return; /* no job waits to be admitted: nothing to try */
	for (;;) {
		s->admit_blocked = gp_grow_zeroed(s->admit_blocked, &s->cap_admit_blocked,
						  a->n_classes, sizeof *s->admit_blocked);
		s->behind =
			gp_grow_zeroed(s->behind, &s->cap_behind, a->n_classes, sizeof *s->behind);
		strict_heads(s, heads);
		int64_t best = -1;
		size_t n_best = 0;
		bool best_borrows = false;
		uint64_t best_flavors = QUOTA_UNASSIGNED;
		for (size_t c = 0; c < a->n_classes; c++) {
			const struct sched_class *cl = &a->classes[c];
			if (!cl->n || s->admit_blocked[c] == s->pass)
				continue;
			bool strict = s->sc->queues[cl->queue].strategy == STRATEGY_STRICT_FIFO;
			if (strict && heads[cl->queue] != (int64_t)c) {
				wait_behind(s, c); /* not blocked: its turn may come this pass */
				continue;
			}
			const struct sched_entry *b = best >= 0 ? &a->classes[best].heap[0] : NULL;
			if (b && !best_borrows && sched_before(b, &cl->heap[0]))
				continue; /* cannot win this round; its turn comes */
			size_t n_victims;
			bool borrows;
			uint64_t flavors;
			if (!try_admit(s, c, &n_victims, &borrows, &flavors)) {
				s->admit_blocked[c] = s->pass;
				continue;
			}
			if (b && (borrows > best_borrows ||
				  (borrows == best_borrows && sched_before(b, &cl->heap[0]))))
				continue;
			best = (int64_t)c;
			n_best = n_victims;
			best_borrows = borrows;
			best_flavors = flavors;
			GP_SWAP(s->best_victims, s->victims); /* keep the winner's targets */
		}
		if (best < 0)
			break;
		admit(s, (size_t)best, s->best_victims, n_best, best_flavors);
		if (n_best)
			s->pass++; /* preempted quota is back: every class may try again */
	}
}
