/*
 * sim_rows.c - what a run writes of its jobs: each job's row at its
 * submission number, and the node names the rows refer to (see sim.h).
 */
#include "gpuplan/sim.h"

#include "sim_int.h"

#include <stdlib.h>

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
}

void sim_write_rows(struct sim *s, struct results *r)
{
	r->n_nodes = s->cluster.n_nodes;
	r->node_names = gp_xcalloc(r->n_nodes, sizeof *r->node_names);
	for (size_t i = 0; i < r->n_nodes; i++)
		r->node_names[i] = cluster_node_name(&s->cluster, (int32_t)i);
	if (!s->sc->output.jobs)
		return;
	bool *retired = gp_xcalloc(s->n_jobs + 1, sizeof *retired);
	for (size_t k = 0; k < s->n_free; k++)
		retired[s->free_ids[k]] = true;
	for (size_t i = 0; i < s->n_jobs; i++)
		if (!retired[i])
			sim_record_job(s, &s->jobs[i], (uint32_t)i);
	free(retired);
}
