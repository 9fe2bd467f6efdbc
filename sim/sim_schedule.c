/*
 * sim_schedule.c - the scheduling pass of a run: Kueue's admission (quota,
 * StrictFIFO heads, preemption victims through quota.h's oracle), then
 * kube-scheduler's placement of the admitted heads (see sim.c and sched.h).
 */
#include "sim_int.h"

#include "gpuplan/autoscale.h"
#include "gpuplan/placement.h"
#include "gpuplan/quota.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"

#include <stdlib.h>

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
static void admit_pass(struct sim *s)
{
	struct sched *a = &s->admit;
	int64_t *heads = s->strict_head;
	s->pass++;
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
			uint32_t *v = s->best_victims; /* keep the winner's targets */
			s->best_victims = s->victims;
			s->victims = v;
		}
		if (best < 0)
			break;
		admit(s, (size_t)best, s->best_victims, n_best, best_flavors);
		if (n_best)
			s->pass++; /* preempted quota is back: every class may try again */
	}
}

/*
 * The counts of class c's last failure (s->failed_at[c] != 0), kept while
 * nothing placement sees has changed (cluster.changes): its head would fail
 * the same way, so the job that joins it gets them without a search.  One-pod
 * jobs only, and without window_policy fit on windowed pools: a gang's plan
 * and a fit window's test (the time left) depend on more than the nodes.
 */
static int32_t *class_why(struct sim *s, size_t c)
{
	size_t n = s->placer.n_reasons, had = s->cap_failed_at;
	s->failed_at = gp_grow_zeroed(s->failed_at, &s->cap_failed_at, c + 1, sizeof *s->failed_at);
	if (s->cap_failed_at != had)
		s->class_why =
			gp_xrealloc(s->class_why, s->cap_failed_at * n * sizeof *s->class_why);
	return &s->class_why[c * n];
}

/*
 * Whether the head of placement class c can start now; its pods' nodes go
 * to s->plan.  When it cannot, its class records why (reasons.h).  A class
 * that failed with the same head and nothing freed since is not tried
 * again: starting work only takes capacity away, so it would fail again.
 */
static bool try_class(struct sim *s, size_t c)
{
	const struct sched_class *cl = &s->sched.classes[c];
	uint32_t head = cl->heap[0].job;
	if (reasons_blocked(&s->reasons, PLACE_RC(c), head, s->freed, cl->n))
		return false;
	const struct sim_job *j = &s->jobs[head];
	int32_t *why = class_why(s, c);
	uint64_t now_state = s->cluster.changes + 1; /* 0: no failure kept */
	if (s->failed_at[c] != now_state) {
		struct pod_request pod = {j->workload, j->gpus, j->duration, fit_window(s),
					  j->variant};
		bool kept = j->pods == 1 && !(pod.fit_window && s->has_windows);
		s->failed_at[c] = 0;
		if (placement_plan(&s->placer, &pod, s->engine.now, s->plan, why))
			return true;
		s->failed_at[c] = kept ? now_state : 0;
	}
	autoscale_class_failed(s->as, c, true);
	const char *post = sim_kube_preempt(s, head, why);
	int32_t growing = autoscale_provisioning_pool(s->as, c);
	if (growing >= 0) /* "Insufficient" while its nodes come: provisioning */
		reasons_bind(&s->reasons, PLACE_RC(c), CONSTRAINT_PROVISIONING, growing);
	reasons_fail_post(&s->reasons, PLACE_RC(c), j->workload, j->pods, cl->n, why, post,
			  autoscale_note(s->as, c), head, s->freed, s->engine.now);
	return false;
}

/*
 * kube-scheduler's part of a pass: starts admitted work until nothing more
 * fits.  A class found blocked stays blocked for the rest of the pass:
 * starting work only takes capacity away.
 */
static void place_pass(struct sim *s)
{
	struct sched *sch = &s->sched;
	s->pass++;
	sched_unblock_all(sch);
	for (;;) {
		/* The classes in index order, each tried when its head does not
		 * come after the best so far; sched_next finds the next such
		 * class without visiting the others. */
		int64_t best = -1;
		for (int64_t c = sched_next(sch, 0, NULL); c >= 0;
		     c = sched_next(sch, (size_t)c + 1,
				    best >= 0 ? &sch->classes[best].heap[0] : NULL)) {
			if (!try_class(s, (size_t)c)) {
				sched_block(sch, (size_t)c);
				continue;
			}
			best = c;
			int32_t *plan = s->best_plan; /* keep the winner's nodes */
			s->best_plan = s->plan;
			s->plan = plan;
		}
		if (best < 0)
			break;
		sim_start(s, (size_t)best, s->best_plan);
	}
	sched_unblock_all(sch);
}

/* Admits, then places, until neither can do more: a job that fails for
 * good in placement (OOM past its restart limit) gives its quota back. */
void sim_schedule(struct sim *s)
{
	for (;;) {
		admit_pass(s);
		uint64_t gen = s->quota_gen;
		place_pass(s);
		if (s->quota_gen == gen)
			break;
	}
	s->dirty = false;
}
