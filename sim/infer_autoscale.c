/*
 * infer_autoscale.c - the HPA-like autoscaler of an inference service (see
 * infer.c, "Autoscaling"): every interval it counts the waiting requests,
 * recommends a replica count and makes replicas pending or drains them.
 */
#include "gpuplan/infer.h"

#include <math.h>

#include "infer_int.h"

/* --- the autoscaler ------------------------------------------------------- */

/* Requests not yet admitted: at the router and on the ready replicas. */
static int64_t waiting(const struct infer *in, const struct service *s, int32_t *ready,
		       int32_t *current)
{
	int64_t n = s->back_n;
	*ready = *current = 0;
	for (int32_t k = 0; k < s->n_reps; k++) {
		const struct replica *r = &in->reps[s->first_rep + k];
		if (r->state == RS_READY) {
			n += r->wait_n;
			(*ready)++;
		}
		*current += r->state != RS_UNUSED && r->state != RS_DRAINING;
	}
	return n;
}

static int32_t recommend(const struct inference_spec *is, int64_t waiting_n, int32_t ready,
			 int32_t current)
{
	int32_t desired;
	if (current == 0 || ready == 0) {
		desired = waiting_n > 0 ? (current > 0 ? current : 1) : current;
	} else {
		double ratio = ((double)waiting_n / ready) / is->target_queue;
		desired = fabs(ratio - 1) <= HPA_TOLERANCE ? current
							   : (int32_t)ceil(current * ratio - 1e-9);
	}
	if (desired < is->replicas)
		desired = is->replicas;
	return desired > is->max_replicas ? is->max_replicas : desired;
}

/* The replica to drain: pending first, then starting, then the least loaded. */
static struct replica *victim(struct infer *in, struct service *s)
{
	struct replica *best = NULL;
	static const int rank[] = {
		[RS_PENDING] = 0, [RS_BACKOFF] = 1, [RS_STARTING] = 2, [RS_READY] = 3};
	for (int32_t k = s->n_reps - 1; k >= 0; k--) {
		struct replica *r = &in->reps[s->first_rep + k];
		if (r->state != RS_PENDING && r->state != RS_BACKOFF && r->state != RS_STARTING &&
		    r->state != RS_READY)
			continue;
		if (!best || rank[r->state] < rank[best->state] ||
		    (rank[r->state] == rank[best->state] && r->outstanding < best->outstanding))
			best = r;
	}
	return best;
}

static void scale_down_one(struct infer *in, struct service *s)
{
	struct replica *r = victim(in, s);
	if (!r)
		return;
	switch ((enum rep_state)r->state) {
	case RS_PENDING:
		infer_left_pending(in, r);
		in->pending--;
		infer_gauge(in, -1, s->w, GAUGE_PENDING, -1);
		infer_gauge(in, -1, s->w, GAUGE_DEMAND, -r->demand);
		r->demand = 0;
		r->state = RS_UNUSED;
		break;
	case RS_BACKOFF: r->state = RS_UNUSED; break; /* its retry finds it unused */
	case RS_STARTING:
	case RS_READY:
		r->state = RS_DRAINING; /* a starting one's ready event finds it draining */
		if (!r->busy && r->outstanding == 0)
			infer_release(in, r);
		break;
	case RS_UNUSED:
	case RS_DRAINING: break;
	}
}

void infer_on_scale(struct infer *in, struct service *s)
{
	const struct inference_spec *is = s->is;
	int32_t ready, current;
	int64_t n = waiting(in, s, &ready, &current);
	int32_t desired = recommend(is, n, ready, current);
	s->history[s->history_at] = desired;
	s->history_at = (s->history_at + 1) % s->n_history;
	int32_t floor = desired;
	for (int32_t k = 0; k < s->n_history; k++)
		floor = s->history[k] > floor ? s->history[k] : floor;
	for (int32_t k = 0; k < s->n_reps && current < desired; k++) {
		struct replica *r = &in->reps[s->first_rep + k];
		if (r->state != RS_UNUSED)
			continue;
		infer_make_pending(in, r);
		current++;
	}
	infer_place_pending(in);
	for (; current > floor; current--)
		scale_down_one(in, s);
	if (infer_work_left(in))
		infer_push(in, now_of(in) + is->scale_interval, EV_INFER_SCALE,
			   (uint32_t)(s - in->svcs), 0);
}
