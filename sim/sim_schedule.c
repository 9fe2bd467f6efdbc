/*
 * sim_schedule.c - the scheduling pass of a run: Kueue's admission
 * (sim_admit.c), then kube-scheduler's placement of the admitted heads
 * (see sim.c and sched.h), until neither can do more.
 */
#include "sim_int.h"

#include "gpuplan/autoscale.h"
#include "gpuplan/placement.h"
#include "gpuplan/reasons.h"
#include "gpuplan/sched.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/*
 * The counts of class c's last failure (s->failed_at[c] != 0), with what
 * placement saw then (cluster.state): while it sees the same again, its head
 * would fail the same way, so the job that joins it, or the next head after
 * a start that took back what a finish gave, gets them without a search.
 * One-pod jobs only, and without window_policy fit on windowed pools: a
 * gang's plan and a fit window's test (the time left) depend on more than
 * the nodes.
 */
static int32_t *class_why(struct sim *s, size_t c)
{
	size_t n = s->placer.n_reasons, had = s->cap_failed_at;
	s->failed_at = gp_grow_zeroed(s->failed_at, &s->cap_failed_at, c + 1, sizeof *s->failed_at);
	if (s->cap_failed_at != had) {
		s->class_why =
			gp_xrealloc(s->class_why, s->cap_failed_at * n * sizeof *s->class_why);
		s->post_why = gp_xrealloc(s->post_why, s->cap_failed_at * n * sizeof *s->post_why);
		s->class_post =
			gp_xrealloc(s->class_post, s->cap_failed_at * sizeof *s->class_post);
		memset(s->class_post + had, 0, (s->cap_failed_at - had) * sizeof *s->class_post);
		s->planned_at =
			gp_xrealloc(s->planned_at, s->cap_failed_at * sizeof *s->planned_at);
		memset(s->planned_at + had, 0, (s->cap_failed_at - had) * sizeof *s->planned_at);
		s->class_plan =
			gp_xrealloc(s->class_plan, s->cap_failed_at * sizeof *s->class_plan);
	}
	return &s->class_why[c * n];
}

#ifndef NDEBUG
/* Debug builds search again where a kept failure of j's class answers, and
 * compare. */
static bool kept_failure_holds(struct sim *s, const struct sim_job *j, const int32_t *why)
{
	size_t n = s->placer.n_reasons;
	int32_t *again = gp_xcalloc(n, sizeof *again), *nodes = gp_xcalloc(1, sizeof *nodes);
	struct pod_request pod = job_pod(s, j);
	bool holds = !placement_plan(&s->placer, &pod, s->engine.now, nodes, again) &&
		     !memcmp(again, why, n * sizeof *why);
	free(again);
	free(nodes);
	return holds;
}

/* Debug builds plan again where a kept plan answers, and compare. */
static bool kept_plan_holds(struct sim *s, const struct pod_request *pod,
			    const struct plan_memo *kept)
{
	struct plan_memo again;
	int32_t *nodes = gp_xcalloc(1, sizeof *nodes);
	bool holds = placement_plan(&s->placer, pod, s->engine.now, nodes, NULL) &&
		     placement_plan_memo(&s->placer, nodes, &again) && again.node == kept->node &&
		     again.start == kept->start && again.planned == kept->planned;
	free(nodes);
	return holds;
}
#endif

/*
 * kube-scheduler's PostFilter for head, class c's, which failed with the
 * counts why (sim_kube_preempt).  When it is DefaultPreemption's alone
 * (sim_post_default), its answer depends on the class's pod request, the
 * counts, the Ready nodes and the preemptor's message only: kept with them
 * (struct class_post), it is given again while they stay, which the call
 * would find and return.  The failures of a busy cluster (a head after a
 * start, an arrival) repeat one another: they then cost no PostFilter.  Not
 * where pods must fit a window (the time left counts).  Debug builds ask
 * again and compare.  Where no search ran (searched false: a kept failure),
 * why is the class's counts as the last call here kept them: every failed
 * search of the class comes here next, and nothing else writes them.
 */
static const char *post_filter(struct sim *s, size_t c, uint32_t head, const int32_t *why,
			       bool searched)
{
	struct class_post *cp = &s->class_post[c];
	size_t n = s->placer.n_reasons;
	int32_t *kept_why = &s->post_why[c * n];
	uint64_t ready = s->cluster.ready_changes + 1;
	bool repeats = sim_post_default(s, &s->jobs[head]) && !(fit_window(s) && s->has_windows);
	assert(searched || !memcmp(kept_why, why, n * sizeof *why));
	if (repeats && cp->ready == ready && cp->made == s->preempt.msg_made &&
	    (!searched || !memcmp(kept_why, why, n * sizeof *why))) {
#ifndef NDEBUG
		const char *again = sim_kube_preempt(s, head, why);
		assert((again == cp->post || (again && cp->post && !strcmp(again, cp->post))) &&
		       "a kept PostFilter answer is the one it would give");
#endif
		return cp->post;
	}
	const char *post = sim_kube_preempt(s, head, why);
	*cp = (struct class_post){repeats ? ready : 0, s->preempt.msg_made, post};
	memcpy(kept_why, why, n * sizeof *why);
	return post;
}

/*
 * Whether the head of placement class c can start now; its pods' nodes go
 * to s->plan.  When it cannot, its class records why (reasons.h).  A class
 * that failed with the same head and nothing freed since is not tried
 * again: starting work only takes capacity away, so it would fail again.
 * As a failure is kept with what placement saw (class_why), so is a plan
 * that succeeded (s->planned_at, s->class_plan; placement.h, "A plan
 * kept"): a busy cluster returns to the same state at each finish, and the
 * class's next head goes where the last one went without a search.
 */
static bool try_class(struct sim *s, size_t c)
{
	const struct sched_class *cl = &s->sched.classes[c];
	uint32_t head = cl->heap[0].job;
	if (reasons_blocked(&s->reasons, PLACE_RC(c), head, s->freed, cl->n))
		return false;
	const struct sim_job *j = &s->jobs[head];
	int32_t *why = class_why(s, c);
	uint64_t now_state = s->cluster.state | 1; /* 0: no failure kept */
	bool searched = s->failed_at[c] != now_state;
	if (searched) {
		struct pod_request pod = job_pod(s, j);
		bool kept = j->pods == 1 && !(pod.fit_window && s->has_windows);
		if (kept && s->planned_at[c] == now_state &&
		    placement_plan_kept(&s->placer, &s->class_plan[c], s->plan)) {
			assert(kept_plan_holds(s, &pod, &s->class_plan[c]));
			return true;
		}
		if (placement_plan(&s->placer, &pod, s->engine.now, s->plan, why)) {
			s->planned_at[c] =
				kept && placement_plan_memo(&s->placer, s->plan, &s->class_plan[c])
					? now_state
					: 0;
			return true; /* why still holds the kept failure's counts */
		}
		s->failed_at[c] = kept ? now_state : 0;
	} else {
		assert(kept_failure_holds(s, j, why));
	}
	autoscale_class_failed(s->as, c, true);
	const char *post = post_filter(s, c, head, why, searched);
	int32_t growing = autoscale_provisioning_pool(s->as, c);
	if (growing >= 0) /* "Insufficient" while its nodes come: provisioning */
		reasons_bind(&s->reasons, PLACE_RC(c), CONSTRAINT_PROVISIONING, growing);
	/* post is the preemptor's msg, rewritten only as msg_made grows, or static */
	reasons_fail_post(&s->reasons, PLACE_RC(c), j->workload, j->pods, cl->n, why, post,
			  s->preempt.msg_made + 1, autoscale_note(s->as, c), head, s->freed,
			  s->engine.now);
	return false;
}

/*
 * kube-scheduler's part of a pass: starts admitted work until nothing more
 * fits.  A class found blocked stays blocked for the rest of the pass:
 * starting work only takes capacity away.  A sweep goes on from the class
 * after the one it tried, so a failure is blocked only when another sweep
 * follows (sched_fail): the last sweep of a pass, which starts nothing,
 * blocks and lets in again no class.
 */
static void place_pass(struct sim *s)
{
	struct sched *sch = &s->sched;
	s->pass++;
	if (!sch->pending)
		return; /* no admitted job waits for nodes (none is blocked between passes) */
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
				sched_fail(sch, (size_t)c);
				continue;
			}
			best = c;
			GP_SWAP(s->best_plan, s->plan); /* keep the winner's nodes */
		}
		if (best < 0)
			break;
		sched_block_failed(sch);
		sim_start(s, (size_t)best, s->best_plan);
	}
	sched_unblock_all(sch);
}

/* Admits, then places, until neither can do more: a job that fails for
 * good in placement (OOM past its restart limit) gives its quota back. */
void sim_schedule(struct sim *s)
{
	for (;;) {
		sim_admit_pass(s);
		uint64_t gen = s->quota_gen;
		place_pass(s);
		if (s->quota_gen == gen)
			break;
	}
	s->dirty = false;
}
