/*
 * infer_reasons.c - why a service's replicas wait for placement, in
 * kube-scheduler's words (reasons.h): a service is a class of identical
 * pods, whose pending replicas all carry the FitError of its last failed
 * attempt and accrue pod-seconds against it, as a batch class's jobs do.
 * The rows and the binding constraints come out with the batch work's.
 */
#include "infer_int.h"

/* The service's class in the reasons tracker. */
static size_t reason_class(const struct infer *in, const struct service *s)
{
	return REASONS_CLASS(REASONS_SERVICE, s - in->svcs);
}

/* Every pending replica of s carries kube-scheduler's message from now on:
 * they are identical pods, and the scheduler would say the same of each. */
void infer_pending_failed(struct infer *in, const struct service *s)
{
	if (!in->h.reasons)
		return;
	size_t members = 0;
	for (int32_t k = 0; k < s->n_reps; k++) {
		struct replica *r = &in->reps[s->first_rep + k];
		if (r->state == RS_PENDING) {
			r->reasoned = true;
			members++;
		}
	}
	reasons_fail(in->h.reasons, reason_class(in, s), s->w, 1, members, in->why, 0, 0,
		     now_of(in));
}

void infer_left_pending(struct infer *in, struct replica *r)
{
	if (r->reasoned && in->h.reasons)
		reasons_drop_member(in->h.reasons, reason_class(in, svc_of(in, r)), now_of(in));
	r->reasoned = false;
}
