/*
 * diagnose_binds.c - the findings of constraints that hold work back
 * without a pending message of their own (issue 46): a job slowed by the
 * pods time-slicing stacks beside it (contention), one whose start-up eats
 * its deadline (startup), one that queues behind work that matters less
 * (priority), one whose queue cannot take back the quota it lent
 * (reclaim), and pods short of the MIG profile they ask for while the
 * layout gives the GPUs to others (mig-profile).  Each names its binding
 * constraint and key; advise takes the relaxations from the table's row
 * (relax.h, relax_rows.c) and runs them before any hardware.  Their text
 * and evidence are written here, with the figures only this pass has.
 *
 * They read the job rows (output.jobs): a late job's time from submission
 * to end splits into its wait (start - submit), its start-up, its work at
 * full speed (duration / loader fraction) and the rest, the slowdown.  The
 * largest of those, over the jobs that missed their deadline (or queued
 * past their goal), is what binds.
 */
#include "diagnose_int.h"

#include "gpuplan/catalog.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BINDS_MAX_JOBS 400 /* late jobs of a workload looked at, at most */
#define BINDS_SCANS    50  /* of which compared with every other job, at most */
#define BINDS_BUDGET   5e7 /* job rows those comparisons read in one run, at most */

/* Where a workload's late jobs spent their time, in pod-seconds. */
struct spent {
	double wait, startup, slow;
	double over;         /* late by, summed */
	double cut;          /* late by no more than their start-up less a minute: summed count */
	double n;            /* late jobs */
	double scanned;      /* of which compared with the other jobs (behind, own_free) */
	double wait_scanned; /* their wait */
	double in_system;    /* their pod-seconds from submission to end (or the run's) */
	int32_t pool;        /* the pool most of them ran on; -1 none */
	double behind;       /* pod-seconds of lower-value jobs started while they waited */
	double own_free;     /* late jobs submitted while their queue held less than its quota */
};

static double pods_of(const struct workload_spec *ws)
{
	return ws->gang && ws->pods > 1 ? ws->pods : 1;
}

/* A job of w late: past its deadline, or waited past its queue goal. */
static bool late(const struct workload_spec *ws, const struct job_record *j, sim_time end)
{
	if (j->deadline != SIM_NEVER)
		return !j->deadline_met;
	sim_time start = j->start == SIM_NEVER ? end : j->start;
	return ws->queue_goal >= 0 && start - j->submit > ws->queue_goal;
}

/* GPUs of queue q's running jobs at time t. */
static double queue_held(const struct view *v, int32_t q, sim_time t)
{
	double held = 0;
	for (size_t i = 0; i < v->r->n_jobs; i++) {
		const struct job_record *k = &v->r->jobs[i];
		const struct workload_spec *ks = &v->sc->workloads[k->workload];
		if (ks->queue == q && k->start != SIM_NEVER && k->start <= t &&
		    (k->end == SIM_NEVER || k->end > t))
			held += k->gpus;
	}
	return held;
}

/* Jobs of other workloads that matter less (no deadline, a priority no
 * higher) started on w's pools while job j waited: their pod-seconds in
 * that wait.  Not on GPUs too small for w's pods: what starts there takes
 * nothing w could use (it would be OOM-killed there). */
static double started_behind(struct view *v, size_t w, const struct job_record *j, sim_time until)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	double s = 0;
	/* No workload that could be behind (an M/M/1's one): no job row to read. */
	bool any = false;
	for (size_t k = 0; k < v->sc->n_workloads && !any; k++)
		any = k != w && !scenario_has_deadlines(&v->sc->workloads[k]) &&
		      v->sc->workloads[k].priority <= ws->priority;
	for (size_t i = 0; any && i < v->r->n_jobs; i++) {
		const struct job_record *k = &v->r->jobs[i];
		const struct workload_spec *ks = &v->sc->workloads[k->workload];
		if ((size_t)k->workload == w || scenario_has_deadlines(ks) ||
		    ks->priority > ws->priority || k->start == SIM_NEVER || k->start < j->submit ||
		    k->start >= until)
			continue;
		int32_t p = diagnose_node_pool(v, k->node);
		if (p < 0 || !diagnose_allowed(v, w, (size_t)p) ||
		    !diagnose_could_hold(v->sc, (size_t)p, w))
			continue;
		s += sim_seconds(until - k->start) * pods_of(ks);
	}
	return s;
}

static void spend(struct view *v, size_t w, struct spent *sp, size_t scans)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	memset(sp, 0, sizeof *sp);
	sp->pool = -1;
	double work = ws->duration.mean / (ws->loader_fraction > 0 ? ws->loader_fraction : 1);
	double votes[64] = {0};
	const struct queue_spec *q = ws->queue >= 0 && (size_t)ws->queue < v->sc->n_queues
					     ? &v->sc->queues[ws->queue]
					     : NULL;
	const struct quota_entry *e = q ? diagnose_gpu_quota(q) : NULL;
	size_t seen = 0;
	for (size_t i = 0; i < v->r->n_jobs && seen < BINDS_MAX_JOBS; i++) {
		const struct job_record *j = &v->r->jobs[i];
		if ((size_t)j->workload != w || !late(ws, j, v->r->sim_end))
			continue;
		seen++;
		double pods = pods_of(ws);
		sim_time start = j->start == SIM_NEVER ? v->r->sim_end : j->start;
		sp->n++;
		sp->wait += sim_seconds(start - j->submit) * pods;
		sp->in_system +=
			sim_seconds((j->end == SIM_NEVER ? v->r->sim_end : j->end) - j->submit) *
			pods;
		if (seen <= scans) { /* the comparisons read every job row */
			sp->scanned++;
			sp->wait_scanned += sim_seconds(start - j->submit) * pods;
			sp->behind += started_behind(v, w, j, start);
			if (e && queue_held(v, ws->queue, j->submit) + j->gpus <= e->nominal + 1e-9)
				sp->own_free++;
		}
		if (j->start == SIM_NEVER || j->end == SIM_NEVER)
			continue;
		int32_t p = diagnose_node_pool(v, j->node);
		sim_time su = ws->startup > 0 ? ws->startup : p >= 0 ? v->sc->pools[p].startup : 0;
		double run = sim_seconds(j->end - j->start), st = sim_seconds(su);
		sp->startup += st * pods;
		sp->slow += fmax(0, run - st - work) * pods;
		if (j->deadline != SIM_NEVER && j->end > j->deadline) {
			double by = sim_seconds(j->end - j->deadline);
			sp->over += by;
			sp->cut += by <= st - 60;
		}
		if (p >= 0 && p < 64)
			votes[p] += pods;
	}
	for (size_t p = 0; p < v->sc->n_pools && p < 64; p++)
		if (votes[p] > 0 && (sp->pool < 0 || votes[p] > votes[sp->pool]))
			sp->pool = (int32_t)p;
}

/* A finding of kind k about workload w (and pool p, queue q) naming
 * constraint ck at key (printf-style), its text and evidence written by the
 * caller. */
static struct finding *bind_finding(struct view *v, enum step step, enum finding_kind k,
				    enum constraint_kind ck, double weight, int32_t p, size_t w,
				    int32_t q, const char *value, const char *key_fmt,
				    const char *name)
{
	struct finding *f = diagnose_add(v, step, k, weight, p, (int)w);
	f->queue = q;
	f->constraint = (int32_t)ck;
	char key[600];
	snprintf(key, sizeof key, key_fmt, name);
	f->key = gp_xstrdup(key);
	f->value = gp_xstrdup(value);
	f->pod_hours = weight / 3600;
	return f;
}

static void say(struct finding *f, const char *text, const char *evidence)
{
	f->text = gp_xstrdup(text);
	f->evidence = gp_xstrdup(evidence);
}

static bool rule_of_pool_shares(const struct pool_spec *p)
{
	return sharing_replicated(&p->sharing) && p->sharing.replicas >= 2;
}

static void contention_finding(struct view *v, size_t w, const struct spent *sp)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct pool_spec *p = &v->sc->pools[sp->pool];
	char text[1024], ev[512], val[64];
	snprintf(val, sizeof val, "%d", (int)p->sharing.replicas);
	struct finding *f =
		bind_finding(v, STEP_ALLOCATION, KIND_CONTENTION, CONSTRAINT_CONTENTION, sp->slow,
			     sp->pool, w, -1, val, "pools.%s.sharing.replicas", p->name);
	snprintf(text, sizeof text,
		 "%s's jobs are slowed by the pods %s x%d stacks beside them on pool %s, not "
		 "short of GPUs: fewer replicas per GPU would run them at full speed",
		 ws->name, sharing_label(p->sharing.mode), (int)p->sharing.replicas, p->name);
	snprintf(
		ev, sizeof ev,
		"%.0f late jobs: %.1f pod-hours slower than alone, %.1f waiting, %.1f starting up; "
		"alone a job works %.0f min",
		sp->n, sp->slow / 3600, sp->wait / 3600, sp->startup / 3600,
		ws->duration.mean / 60);
	say(f, text, ev);
}

static void startup_finding(struct view *v, size_t w, const struct spent *sp)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	char text[1024], ev[512], d[32];
	bool own = ws->startup > 0;
	sim_time su = own ? ws->startup : v->sc->pools[sp->pool].startup;
	units_format_duration(su, d, sizeof d);
	struct finding *f = bind_finding(v, STEP_APPLICATION, KIND_STARTUP, CONSTRAINT_STARTUP,
					 sp->startup, own ? -1 : sp->pool, w, -1, d,
					 own ? "workloads.%s.startup" : "pools.%s.startup",
					 own ? ws->name : v->sc->pools[sp->pool].name);
	snprintf(text, sizeof text,
		 "%s's jobs spend %s starting up (image pull, model load) before any work, and "
		 "that is what makes them late, not GPUs: a shorter start-up (images pre-pulled, "
		 "weights cached on the node) would meet the deadline",
		 ws->name, d);
	snprintf(ev, sizeof ev,
		 "%.0f late jobs, late by %.0f min on average: %.1f pod-hours starting up, %.1f "
		 "waiting, %.1f slowed",
		 sp->n, sp->over / sp->n / 60, sp->startup / 3600, sp->wait / 3600,
		 sp->slow / 3600);
	say(f, text, ev);
}

static void priority_finding(struct view *v, size_t w, const struct spent *sp)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	char text[1024], ev[512], val[32];
	snprintf(val, sizeof val, "%d", (int)ws->priority);
	struct finding *f =
		bind_finding(v, STEP_ALLOCATION, KIND_PRIORITY, CONSTRAINT_PRIORITY, sp->wait, -1,
			     w, -1, val, "workloads.%s.priority", ws->name);
	snprintf(text, sizeof text,
		 "%s waits behind work that matters less, not for more GPUs: jobs without a "
		 "deadline and of no higher priority (%d) start before it on the GPUs it "
		 "waits for; a priority above theirs would start it first",
		 ws->name, (int)ws->priority);
	snprintf(ev, sizeof ev,
		 "%.0f late jobs waited %.1f pod-hours while %.1f pod-hours of such jobs started "
		 "ahead of them",
		 sp->n, sp->wait / 3600, sp->behind / 3600);
	say(f, text, ev);
}

static void reclaim_finding(struct view *v, size_t w, const struct spent *sp)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct queue_spec *q = &v->sc->queues[ws->queue];
	static const char *const policy[] = {"Never", "LowerPriority", "Any"};
	struct finding *f = bind_finding(v, STEP_ALLOCATION, KIND_RECLAIM, CONSTRAINT_RECLAIM,
					 sp->wait, -1, w, ws->queue, policy[q->reclaim],
					 "queues.%s.preemption.reclaim_within_cohort", q->name);
	char text[1024], ev[512];
	snprintf(text, sizeof text,
		 "%s waits for quota its queue %s lent to the cohort, not for more GPUs: its "
		 "reclaim_within_cohort %s does not take it back from the borrowers; reclaiming "
		 "it would start the jobs",
		 ws->name, q->name, policy[q->reclaim]);
	snprintf(ev, sizeof ev,
		 "%.0f of %.0f late jobs arrived while queue %s held less than its nominal "
		 "quota; they waited %.1f pod-hours",
		 sp->own_free, sp->n, q->name, sp->wait / 3600);
	say(f, text, ev);
}

static void mig_finding(struct view *v, size_t w, const struct spent *sp, int32_t p)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	const struct pool_spec *ps = &v->sc->pools[p];
	char text[1024], ev[512];
	struct gp_sbuf val = {0};
	diagnose_layout_text(&val, ps->sharing.layout, ps->sharing.n_layout);
	struct finding *f =
		bind_finding(v, STEP_ALLOCATION, KIND_MIG_PROFILE, CONSTRAINT_MIG_PROFILE, sp->wait,
			     p, w, -1, val.s, "pools.%s.sharing.layout", ps->name);
	bool has = false;
	for (size_t i = 0; i < ps->sharing.n_layout; i++)
		has |= !strcmp(ps->sharing.layout[i]->name, ws->mig_profile);
	if (has)
		snprintf(text, sizeof text,
			 "%s waits for a %s instance of pool %s while its MIG layout gives the "
			 "GPUs to other profiles: a layout with more %s instances would start it "
			 "on the same GPUs",
			 ws->name, ws->mig_profile, ps->name, ws->mig_profile);
	else
		snprintf(text, sizeof text,
			 "%s waits for %s instances, which the MIG layout of pool %s has none of: "
			 "a layout with %s instances beside the profiles its other work asks for "
			 "would start it on GPUs already there",
			 ws->name, ws->mig_profile, ps->name, ws->mig_profile);
	snprintf(ev, sizeof ev, "%.0f late jobs waited %.1f pod-hours; the layout of a GPU is %s",
		 sp->n, sp->wait / 3600, val.s);
	free(val.s);
	say(f, text, ev);
}

/* A layout of one GPU under construction: at most 7 instances, 7 compute
 * and 8 memory slices, no profile past its maximum (as scenario_pools.c
 * checks a layout). */
struct layout {
	const struct mig_profile *inst[7];
	int n, compute, memory;
};

static bool layout_add(struct layout *l, const struct mig_profile *m)
{
	int same = 0;
	for (int i = 0; i < l->n; i++)
		same += l->inst[i] == m;
	if (l->n >= 7 || same >= m->max_instances || l->compute + m->compute_slices > 7 ||
	    l->memory + m->memory_slices > 8)
		return false;
	l->inst[l->n++] = m;
	l->compute += m->compute_slices;
	l->memory += m->memory_slices;
	return true;
}

size_t diagnose_mig_layout(const struct scenario *sc, size_t p, size_t w,
			   const struct mig_profile **out)
{
	const struct pool_spec *ps = &sc->pools[p];
	const struct workload_spec *ws = &sc->workloads[w];
	const struct mig_profile *want =
		ps->sharing.mode == SHARING_MIG && ws->request == REQUEST_MIG
			? catalog_mig_profile(ps->gpu, ws->mig_profile)
			: NULL;
	if (!want)
		return 0;
	struct layout l = {0};
	int had = 0;
	for (size_t i = 0; i < ps->sharing.n_layout; i++) {
		const struct mig_profile *m = ps->sharing.layout[i];
		bool asked = false;
		for (size_t k = 0; k < sc->n_workloads && !asked && m != want; k++)
			asked = sc->workloads[k].request == REQUEST_MIG &&
				catalog_mig_profile(ps->gpu, sc->workloads[k].mig_profile) == m;
		had += m == want;
		if (asked)
			layout_add(&l, m);
	}
	int got = 0;
	while (layout_add(&l, want))
		got++;
	if (got <= had)
		return 0;
	for (int i = 0; i < l.n; i++)
		out[i] = l.inst[i];
	return (size_t)l.n;
}

void diagnose_layout_text(struct gp_sbuf *b, const struct mig_profile *const *l, size_t n)
{
	gp_sb_printf(b, "[");
	for (size_t i = 0; i < n; i++)
		gp_sb_printf(b, "%s%s", i ? ", " : "", l[i]->name);
	gp_sb_printf(b, "]");
}

void diagnose_fix_mig_layout(struct finding *f, const struct scenario *sc, size_t p, size_t w)
{
	const struct mig_profile *l[7];
	size_t n = diagnose_mig_layout(sc, p, w, l);
	if (!n)
		return;
	struct gp_sbuf list = {0};
	diagnose_layout_text(&list, l, n);
	const char *name = sc->pools[p].name;
	finding_fix_setf(finding_fixf(f, "MIG layout %s on %s", list.s, name),
			 "pools.%s.sharing={mode: %s, layout: %s}", name, sharing_name(SHARING_MIG),
			 list.s);
	free(list.s);
}

/* Whether w's pods could run in MIG pool p under another layout: its GPU
 * has w's profile and no rule keeps them off (the layout may lack the
 * profile: then no unit of p is w's today). */
static bool mig_capable(struct view *v, size_t w, size_t p)
{
	const struct pool_spec *ps = &v->sc->pools[p];
	const struct workload_spec *ws = &v->sc->workloads[w];
	return ps->sharing.mode == SHARING_MIG && ws->request == REQUEST_MIG &&
	       catalog_mig_profile(ps->gpu, ws->mig_profile) &&
	       !placement_pool_filtered(diagnose_placer(v), w, p);
}

/* The MIG pool whose layout could hold more of w's profile
 * (diagnose_mig_layout): one it may use first, else one of its GPU whose
 * layout has none of the profile (the evals' 3g.40gb on a pool laid out for
 * notebooks and fine-tunes), or -1: then only more GPUs would. */
static int32_t mig_pool(struct view *v, size_t w)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t p = 0; p < v->sc->n_pools; p++) {
			const struct mig_profile *l[7];
			bool may = pass ? mig_capable(v, w, p) : diagnose_allowed(v, w, p);
			if (may && diagnose_mig_layout(v->sc, p, w, l))
				return (int32_t)p;
		}
	return -1;
}

/* Whether some other queue of w's cohort ran jobs: borrowers to reclaim from. */
static bool cohort_borrows(const struct view *v, size_t w)
{
	int32_t q = v->sc->workloads[w].queue;
	const char *root = q >= 0 ? scenario_root_cohort(v->sc, (size_t)q) : NULL;
	if (!root || v->sc->queues[q].reclaim == RECLAIM_ANY)
		return false;
	for (size_t i = 0; i < v->sc->n_workloads; i++) {
		int32_t o = v->sc->workloads[i].queue;
		const char *r = o >= 0 && o != q ? scenario_root_cohort(v->sc, (size_t)o) : NULL;
		if (r && !strcmp(r, root))
			return true;
	}
	return false;
}

/* Long enough to matter: at least DIAGNOSE_PENDING_SHARE of the late jobs'
 * own time in the system (not of the run's span: a long run beside them
 * must not hide why they were late). */
static bool matters(const struct spent *sp, double pod_seconds)
{
	return pod_seconds > 0 && pod_seconds >= DIAGNOSE_PENDING_SHARE * sp->in_system;
}

/* Whether w's pods were OOM-killed: their wait then holds restarts and
 * back-off that no priority cuts, and the memory finding names the cause. */
static bool oom_killed(const struct view *v, size_t w)
{
	return diagnose_metric(v, v->sc->workloads[w].name, METRIC_OOM_KILLS) > 0;
}

static void workload_binds(struct view *v, size_t w, size_t scans)
{
	const struct workload_spec *ws = &v->sc->workloads[w];
	if (ws->inference || results_holds(v->r, ws->name, METRIC_GOAL_MET))
		return;
	struct spent sp;
	spend(v, w, &sp, scans);
	if (sp.n <= 0)
		return;
	double most = fmax(sp.wait, fmax(sp.startup, sp.slow));
	if (sp.slow >= most && sp.pool >= 0 && rule_of_pool_shares(&v->sc->pools[sp.pool]) &&
	    matters(&sp, sp.slow))
		contention_finding(v, w, &sp);
	else if (sp.startup >= most && sp.cut >= 0.5 * sp.n && matters(&sp, sp.startup))
		startup_finding(v, w, &sp);
	else if (sp.wait >= most && matters(&sp, sp.wait)) {
		int32_t mp = mig_pool(v, w);
		if (cohort_borrows(v, w) && sp.scanned > 0 && sp.own_free >= 0.5 * sp.scanned)
			reclaim_finding(v, w, &sp);
		else if (scenario_has_deadlines(ws) && sp.wait_scanned > 0 &&
			 sp.behind >= 0.5 * sp.wait_scanned && !oom_killed(v, w))
			priority_finding(v, w, &sp);
		else if (mp >= 0)
			mig_finding(v, w, &sp, mp);
	}
}

/* An admission finding about w in queue q names the lender's limit when
 * another queue of q's cohort keeps GPUs to itself (a lending limit under
 * its quota) that its own work left idle while w waited: the quota q lacks
 * is there, kept, so that limit binds before anyone's nominal quota.  Its
 * relaxation (the lender lends all) is the finding's first fix. */
void diagnose_lender(struct view *v, struct finding *fd, size_t w)
{
	int32_t q = v->sc->workloads[w].queue;
	const char *root = q >= 0 ? scenario_root_cohort(v->sc, (size_t)q) : NULL;
	double best = 0;
	int32_t lender = -1;
	for (size_t l = 0; root && l < v->sc->n_queues; l++) {
		const char *other = (int32_t)l != q ? scenario_root_cohort(v->sc, l) : NULL;
		const struct quota_entry *e = other && !strcmp(other, root)
						      ? diagnose_gpu_quota(&v->sc->queues[l])
						      : NULL;
		if (!e || !(e->lending_limit < e->nominal))
			continue;
		double used = 0; /* its own work's peak GPUs */
		for (size_t k = 0; k < v->sc->n_workloads; k++)
			if (v->sc->workloads[k].queue == (int32_t)l) {
				double peak = diagnose_metric(v, v->sc->workloads[k].name,
							      METRIC_PEAK_ALLOCATED_GPUS);
				used += isnan(peak) ? 0 : peak;
			}
		double idle = e->nominal - e->lending_limit - used;
		if (idle > best) {
			best = idle;
			lender = (int32_t)l;
		}
	}
	if (lender < 0)
		return;
	const struct queue_spec *ls = &v->sc->queues[lender];
	const struct quota_entry *e = diagnose_gpu_quota(ls);
	char key[600], val[64];
	snprintf(key, sizeof key, "queues.%s.lending_limit", ls->name);
	snprintf(val, sizeof val, "%g", e->lending_limit);
	fd->constraint = CONSTRAINT_LENDING_LIMIT;
	fd->key = gp_xstrdup(key);
	fd->value = gp_xstrdup(val);
	finding_fix_setf(finding_fixf(fd, "lending limit of %s at %g GPUs", ls->name, e->nominal),
			 "queues.%s.lending_limit={\"nvidia.com/gpu\": %g}", ls->name, e->nominal);
}

void diagnose_binds(struct view *v)
{
	if (!v->r->n_jobs)
		return;
	bool *unexplained = gp_xcalloc(v->sc->n_workloads + 1, sizeof *unexplained);
	size_t n_unexplained = 0;
	for (size_t w = 0; w < v->sc->n_workloads; w++) {
		bool named = false;
		for (size_t i = 0; i < v->n_drafts && !named; i++)
			named = v->drafts[i].f.workload == (int)w;
		unexplained[w] = !named && !v->sc->workloads[w].inference &&
				 !results_holds(v->r, v->sc->workloads[w].name, METRIC_GOAL_MET);
		n_unexplained += unexplained[w];
	}
	/* Each comparison reads every job row: within BINDS_BUDGET rows in all, a
	 * run of millions of jobs compares a sample of its late jobs, or none. */
	double each =
		n_unexplained ? BINDS_BUDGET / (double)v->r->n_jobs / (double)n_unexplained : 0;
	size_t scans = each >= BINDS_SCANS ? BINDS_SCANS : (size_t)each;
	for (size_t w = 0; w < v->sc->n_workloads; w++)
		if (unexplained[w])
			workload_binds(v, w, scans);
	free(unexplained);
}
