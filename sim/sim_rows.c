/*
 * sim_rows.c - what a run writes of its jobs: each job's row at its
 * submission number, and the node names the rows refer to (see sim.h).
 *
 * With a sink (sim_set_sink), rows are handed on in submission order as
 * soon as every row below them is final, a batch at a time: a job's row is
 * final when it retires, and jobs retire out of order, so a byte per job
 * marks the rows recorded and rows_final follows the first gap.  Amortised
 * O(1) per job; a long job holds the rows after it back, not the run.
 */
#include "gpuplan/sim.h"

#include "sim_int.h"

#include <stdlib.h>

void sim_set_sink(struct sim *s, const struct results_sink *sink)
{
	s->sink = sink && s->sc->output.jobs ? sink : NULL;
}

/* Marks row seq recorded and hands on every whole batch now final. */
static void hand_rows(struct sim *s, size_t seq)
{
	const struct results_sink *k = s->sink;
	s->row_done = gp_grow_zeroed(s->row_done, &s->cap_row_done, seq + 1, 1);
	s->row_done[seq] = 1;
	while (s->rows_final < s->out->n_jobs && s->rows_final < s->cap_row_done &&
	       s->row_done[s->rows_final])
		s->rows_final++;
	while (s->rows_final - s->rows_handed >= k->batch) {
		k->jobs(k->ctx, &s->out->jobs[s->rows_handed], k->batch, s->cluster.n_nodes);
		s->rows_handed += k->batch;
	}
}

/* A job still running at the end is charged up to the end. */
void sim_record_job(struct sim *s, const struct sim_job *j, uint32_t id)
{
	bool met = j->status == JOB_COMPLETED && j->end <= j->deadline;
	double running =
		j->status == JOB_RUNNING ? sim_seconds(s->out->sim_end - j->span_start) : 0;
	s->out->jobs[j->seq] = (struct job_record){j->seq,
						   j->workload,
						   j->grant.node,
						   j->gpus,
						   j->status,
						   met,
						   j->verified,
						   j->submit,
						   j->start,
						   j->end,
						   j->deadline,
						   j->cost + j->cost_per_h * running / 3600,
						   reasons_job_message(&s->reasons, id),
						   j->trace_queue != SIM_NEVER,
						   j->trace_queue,
						   j->preemptions,
						   j->oom_kills,
						   j->flavor};
	if (s->sink)
		hand_rows(s, j->seq);
}

void sim_write_rows(struct sim *s, struct results *r)
{
	r->n_nodes = s->cluster.n_nodes;
	r->node_names = gp_xcalloc(r->n_nodes, sizeof *r->node_names);
	for (size_t i = 0; i < r->n_nodes; i++)
		r->node_names[i] = cluster_node_name(&s->cluster, (int32_t)i);
	if (s->sc->output.jobs) {
		bool *retired = gp_xcalloc(s->n_jobs + 1, sizeof *retired);
		for (size_t k = 0; k < s->n_free; k++)
			retired[s->free_ids[k]] = true;
		for (size_t i = 0; i < s->n_jobs; i++)
			if (!retired[i])
				sim_record_job(s, &s->jobs[i], (uint32_t)i);
		free(retired);
	}
	free(s->row_done); /* the rows past the last batch stay in r->jobs */
	s->row_done = NULL;
	s->sink = NULL;
}
