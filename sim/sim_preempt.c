/*
 * sim_preempt.c - kube-scheduler's priority preemption in a run (preempt.h
 * finds the victims and the node; here they terminate and go, and the
 * preemptor takes its nominated node).  See docs/placement.md.
 */
#include "sim_int.h"

/* preempt.h's question: is tenant id a running batch pod below prio? */
bool sim_preempt_victim(void *ctx, uint32_t id, int32_t prio, int32_t *priority, sim_time *start,
			const struct cluster_grant **grants, int32_t *n)
{
	struct sim *s = ctx;
	if (infer_is_tenant(id) || id >= s->n_jobs)
		return false;
	struct sim_job *j = &s->jobs[id];
	*priority = s->sc->workloads[j->workload].priority;
	*start = j->span_start;
	*grants = pods_of(j);
	*n = j->pods;
	return j->status == JOB_RUNNING && *priority < prio;
}

bool sim_post_default(const struct sim *s, const struct sim_job *j)
{
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	if (!s->sc->queues[ws->queue].implicit || j->pods > 1) /* Kueue's (quota.h), or a gang */
		return true;
	/* no pod of lower priority: O(1) */
	return !ws->preempt_never && j->nominated < 0 && ws->priority <= s->min_priority;
}

/* kube-scheduler's PostFilter for job id, a class head that fit no node:
 * DefaultPreemption (preempt.h) for a one-pod job of no declared queue.
 * Victims terminate for their grace period (EV_KILL), the preemptor is
 * nominated to their node.  Returns the PostFilter's words for
 * reasons_fail_post: NULL without a lower priority, "" when it nominated. */
const char *sim_kube_preempt(struct sim *s, uint32_t id, const int32_t *why)
{
	struct sim_job *j = &s->jobs[id];
	const struct workload_spec *ws = &s->sc->workloads[j->workload];
	struct pod_request pod = job_pod(s, j);
	if (sim_post_default(s, j))
		return preempt_default_post(&s->preempt, &pod, s->engine.now, why);
	if (ws->preempt_never)
		return PREEMPT_NEVER_MSG;
	if (j->nominated >= 0)
		return PREEMPT_TERMINATING_MSG;
	int32_t node;
	if (!preempt_find(&s->preempt, &pod, ws->priority, s->engine.now, &node))
		return s->preempt.msg;
	j->nominated = node;
	sim_time grace = 0; /* they go together, when the longest grace ends */
	for (size_t i = 0; i < s->preempt.n_best; i++) {
		const struct sim_job *v = &s->jobs[s->preempt.best[i].job];
		if (!v->terminating && s->sc->workloads[v->workload].grace > grace)
			grace = s->sc->workloads[v->workload].grace;
	}
	for (size_t i = 0; i < s->preempt.n_best; i++) {
		uint32_t vid = s->preempt.best[i].job;
		struct sim_job *v = &s->jobs[vid];
		if (v->terminating)
			continue; /* another's victim already: its preemptor waits for it */
		v->terminating = true;
		v->by = id;
		v->by_seq = j->seq;
		v->kill_at = s->engine.now + grace;
		j->awaiting++;
		engine_push(&s->engine, v->kill_at, s->ev_kill, vid, 0);
	}
	if (!j->awaiting)
		j->nominated = -1;
	return "";
}

/* A preempted pod's grace period is over (EV_KILL): it is killed, unless it
 * ended. */
static void on_kill(void *ctx, const struct event *ev)
{
	struct sim *s = ctx;
	uint32_t id = ev->id;
	struct sim_job *v = &s->jobs[id];
	if (!v->terminating || v->kill_at != s->engine.now)
		return;
	if (v->status == JOB_RUNNING) {
		s->wl[v->workload].priority_preempted++;
		sim_evict(s, id, false); /* its Job makes a new pod, as after a spot notice */
	} else
		sim_victim_gone(s, v);
}

/* A pod kube-scheduler preempted is gone (killed, or ended first): its
 * preemptor, if it still waits at the head of its class, starts on its
 * nominated node when it fits there (kube tries that node first); with no
 * victim left, the nomination ends. */
void sim_victim_gone(struct sim *s, struct sim_job *v)
{
	v->terminating = false;
	struct sim_job *p = &s->jobs[v->by];
	if (p->seq != v->by_seq || p->nominated < 0)
		return;
	int32_t node = p->nominated;
	struct pod_request pod = job_pod(s, p);
	bool fits = p->status == JOB_PENDING && p->admitted && p->cls >= 0 &&
		    sched_head(&s->sched, (size_t)p->cls)->job == v->by &&
		    placement_fits_node(&s->placer, &pod, node, s->engine.now);
	if (--p->awaiting > 0 && !fits)
		return;
	p->nominated = -1;
	if (fits)
		sim_start(s, (size_t)p->cls, &node);
}

void sim_preempt_start(struct sim *s)
{
	s->ev_kill = engine_register(&s->engine, 1, on_kill, NULL, s);
}
