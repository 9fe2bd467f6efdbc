/*
 * reasons.h - why pending work waits, in kube-scheduler's words, and for how
 * long.
 *
 * Messages.  reasons_format writes kube-scheduler's FitError message from
 * per-reason node counts: "0/3 nodes are available: 1 Insufficient
 * nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector."
 * (each reason as "COUNT REASON", the strings sorted byte by byte as Go's
 * sort.Strings does, joined by ", ", closed by ".").  The tracker interns
 * messages: equal text, equal id.
 *
 * Accounting.  Pending jobs wait in scheduler classes (sched.h), and
 * placement is asked about a class's head only, so a failed attempt gives
 * the reason of every job of the class.  A job's reason holds from the
 * failed attempt until the class's next failed attempt or the job's start;
 * a job that joined after the last failed attempt has no reason yet.  The
 * tracker therefore keeps, per class, the current message, since when, and
 * how many of its jobs carry it, and accrues pending time when one of these
 * changes: O(1) per join, start and failed attempt, never per pending job.
 *
 * What it reports, per scope (`all` and each workload) and message:
 * pending_seconds, the pod-seconds pods spent with the message (a gang of
 * four pods waiting an hour is four hours), and pods, the pods that began
 * to wait with it (a pod that had the message in two separate spells, with
 * another message in between, counts twice).  Each job keeps its last
 * message for the jobs table.
 *
 * Retry.  The tracker also remembers, per class, the head and the capacity
 * generation of its last failed attempt, so that the scheduler retries a
 * class only when something that could unblock it happened, or when jobs
 * joined it that have no reason yet (reasons_blocked).
 *
 * Lifecycle: reasons_init, then the hooks, reasons_finish at the end of the
 * run, reasons_write to hand the rows to a results object, reasons_free.
 */
#ifndef GPUPLAN_REASONS_H
#define GPUPLAN_REASONS_H

#include "gpuplan/bind.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/strindex.h"

/* Writes the FitError message for n_nodes nodes, counts[i] of which failed
 * with texts[i] (zero counts are left out); returns what snprintf would. */
size_t reasons_format(char *buf, size_t size, int64_t n_nodes, const char *const *texts,
		      const int32_t *counts, size_t n);

/* DefaultPreemption's verdicts on a node (kubernetes pkg/scheduler/framework/
 * preemption/preemption.go, plugins/defaultpreemption/default_preemption.go). */
#define REASONS_NO_VICTIMS  "No preemption victims found for incoming pod"
#define REASONS_NOT_HELPFUL "Preemption is not helpful for scheduling"

/* Whether a node failing with this kind (enum pend_kind) failed an
 * UnschedulableAndUnresolvable filter (a window, taint, affinity, missing
 * spread label, VRAM), which no eviction changes. */
bool reasons_unresolvable(uint8_t kind);

/*
 * The FitError as kube-scheduler's default profile writes it, with the
 * PostFilter's message: reasons_format's, then " preemption: " and a second
 * FitError over the same nodes, then "." (FitError.Error() closes each part
 * with "." and the inner one has its own, hence "..").  A node that failed an
 * UnschedulableAndUnresolvable filter (kinds[i], enum pend_kind: a window,
 * taint, affinity, missing spread label, VRAM) is "Preemption is not helpful
 * for scheduling"; one short of resources or over a spread skew would have
 * its lower-priority pods tried as victims, and gpuplan runs none that
 * kube-scheduler would evict (it models Kueue's preemption, not the
 * scheduler's priority preemption): "No preemption victims found for
 * incoming pod".  With no node at all the message is ErrNoNodesAvailable,
 * without a suffix.  Returns what snprintf would.
 */
size_t reasons_format_fit_error(char *buf, size_t size, int64_t n_nodes, const char *const *texts,
				const uint8_t *kinds, const int32_t *counts, size_t n);

/* The tracker's one class space: the scheduler's placement and admission
 * classes (sched.h) and the inference services, each a class of identical
 * pods (a Deployment's replicas). */
enum reasons_class_kind { REASONS_PLACE, REASONS_ADMIT, REASONS_SERVICE, REASONS_CLASS_KINDS };
#define REASONS_CLASS(kind, i) ((size_t)REASONS_CLASS_KINDS * (size_t)(i) + (size_t)(kind))

struct reason_class;
struct reason_job;

struct reasons {
	size_t n_workloads;
	int64_t n_nodes;
	const char *const *slot_texts; /* the reasons a node can give (placement's slots) */
	const uint8_t *slot_kinds;     /* their enum pend_kind */
	size_t n_slots;
	struct strindex texts; /* interned messages, by id (strindex.h) */
	uint32_t *kinds;       /* by id: PEND_BIT of each kind the message gives */
	size_t cap_kinds;
	double *seconds; /* [id * n_workloads + workload] */
	int64_t *pods;
	size_t cap_rows; /* messages the two arrays above hold */
	struct reason_class *classes;
	size_t cap_classes;
	int32_t *class_counts; /* [class * n_slots + slot]: last counts seen */
	struct reason_job *jobs;
	size_t cap_jobs;
	char *buf; /* formatting scratch */
	size_t buf_size;
	/* What binds (bind.h): set by the run after reasons_init, NULL: none.
	 * Per message, the share of its pod-seconds each kind of constraint
	 * takes ([id * CONSTRAINT_KINDS + k], from the nodes that gave each
	 * reason). */
	struct bind *bind;
	double *shares;
	uint32_t *share_kinds; /* per message, the kinds whose share is > 0 (bits) */
};

/* slot_texts and slot_kinds must outlive the tracker (they are placement's). */
void reasons_init(struct reasons *r, size_t n_workloads, int64_t n_nodes,
		  const char *const *slot_texts, const uint8_t *slot_kinds, size_t n_slots);
void reasons_free(struct reasons *r);

/* Job joined class cls (it was enqueued). */
void reasons_join(struct reasons *r, size_t cls, uint32_t job);

/* Forgets a finished job whose index is about to be reused (sim.h). */
void reasons_retire(struct reasons *r, uint32_t job);

/* The head of class cls failed at now: counts per slot (placement_plan's);
 * members, the class's pending jobs; pods, pods per job of workload w; head
 * and gen, for reasons_blocked.  Returns the message id. */
int32_t reasons_fail(struct reasons *r, size_t cls, int32_t workload, int32_t pods, size_t members,
		     const int32_t *counts, uint32_t head, uint64_t gen, sim_time now);

/* The same for a failure that is not about nodes (queue quota: PEND_QUOTA),
 * in its own words. */
int32_t reasons_fail_text(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const char *text, uint32_t head, uint64_t gen,
			  sim_time now);

/* reasons_fail_text for a message of the given kinds (PEND_BIT mask). */
int32_t reasons_fail_kind(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const char *text, uint32_t kinds, uint32_t head,
			  uint64_t gen, sim_time now);

/* reasons_fail with a note after kube-scheduler's message: the Cluster
 * Autoscaler's event about the pod ("pod triggered scale-up: [batch]").
 * NULL: reasons_fail.  Allocates (rare: notes change at autoscaler scans). */
int32_t reasons_fail_note(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const int32_t *counts, const char *note, uint32_t head,
			  uint64_t gen, sim_time now);

/* reasons_fail_note with the PostFilter's message post after the filters'
 * FitError: NULL, reasons_format_fit_error's suffix; "", none (the
 * preemption nominated a node); else " " and post, which carries its own
 * closing punctuation (preempt.h).  post_gen is a number the caller changes
 * whenever the text at post may change (0: unknown): while post and post_gen
 * are those of the class's last message, the text is not compared again. */
int32_t reasons_fail_post(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const int32_t *counts, const char *post,
			  uint64_t post_gen, const char *note, uint32_t head, uint64_t gen,
			  sim_time now);

/* What binds class cls's jobs from its next failure on, when the message
 * does not say it alone (bind.h): Kueue's refusal by the limit that binds
 * (kind, and param its queue), or the pool whose nodes the Cluster
 * Autoscaler provisions for them (kind CONSTRAINT_PROVISIONING: the share of
 * "Insufficient" goes to it).  kind CONSTRAINT_KINDS: the message's own
 * shares. */
void reasons_bind(struct reasons *r, size_t cls, enum constraint_kind kind, int32_t param);

/* The number of nodes messages count ("0/N nodes"): the Ready ones. */
void reasons_set_nodes(struct reasons *r, int64_t n_nodes);

/* Whether class cls last failed with this head at capacity generation gen
 * and no job joined it since (members, its pending jobs): then trying it
 * again cannot succeed, and its jobs keep their reason.  A job that joined
 * needs an attempt of its own to get a reason. */
bool reasons_blocked(const struct reasons *r, size_t cls, uint32_t head, uint64_t gen,
		     size_t members);

/* One of class cls's members that carried its message left it at now (a
 * pending replica placed or scaled away): for a class whose members are
 * counted rather than joined one by one (a service's replicas, which carry
 * its message from the failure that names them all). */
void reasons_drop_member(struct reasons *r, size_t cls, sim_time now);

/* Job left its class (it started) at now. */
void reasons_leave(struct reasons *r, uint32_t job, sim_time now);

/* Accrues every class's pending time up to end (the end of the run). */
void reasons_finish(struct reasons *r, sim_time end);

/* The message text of id, or of job's last reason (NULL when it never had one). */
const char *reasons_text(const struct reasons *r, int32_t id);
const char *reasons_of_job(const struct reasons *r, uint32_t job);
/* The id of job's last reason, -1 when it never had one (a job record's reason). */
int32_t reasons_job_message(const struct reasons *r, uint32_t job);

/* Copies the messages into out (which owns its copies) and the
 * pending_reasons rows (scope all first, then workloads in scenario order;
 * messages in the order they first appeared). */
void reasons_write(const struct reasons *r, const struct scenario *sc, struct results *out);

#endif
