/*
 * reasons.c - kube-scheduler's FitError messages and the pending time per
 * message (see reasons.h).
 */
#include "gpuplan/reasons.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A class's current message and the jobs that carry it. */
struct reason_class {
	int32_t msg; /* -1: never failed */
	int32_t workload;
	int32_t pods;    /* per job */
	uint32_t fails;  /* failed attempts so far */
	int64_t counted; /* members that carry msg (they joined before the last failure) */
	sim_time since;  /* pending time is accrued up to here */
	uint32_t head;   /* of the last failed attempt */
	uint64_t gen;
	uint8_t keyed; /* what msg was made from, beside class_counts (enum keyed) */
	char *post;    /* KEYED_POST: the PostFilter's words */
	size_t post_cap;
	const char *post_at; /* KEYED_POST: where they were read, at the caller's */
	uint64_t post_gen;   /* post_gen (0: unknown) */
	int32_t bind_param;  /* reasons_bind's */
	uint8_t bind_kind;   /* enum constraint_kind; CONSTRAINT_KINDS: the message's */
	uint8_t next_kind;   /* reasons_bind's, from the next failure on */
	int32_t next_param;
};

/* A class's message is a function of the counts in class_counts (and the
 * ready nodes, which reset them) and, for KEYED_POST, of its post: the same
 * inputs again reuse it, without formatting or interning the text. */
enum keyed { KEYED_NONE, KEYED_COUNTS, KEYED_POST };

struct reason_job {
	int32_t cls;  /* -1: not pending */
	uint32_t seq; /* the class's fails when the job joined */
	int32_t msg;  /* last message once it left; -1 none */
};

/* --- formatting ---------------------------------------------------------- */

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* snprintf of a then b at buf + used, keeping count past the end like snprintf. */
static size_t append(char *buf, size_t size, size_t used, const char *a, const char *b)
{
	size_t at = used < size ? used : size;
	return (size_t)snprintf(buf + at, size - at, "%s%s", a, b);
}

size_t reasons_format(char *buf, size_t size, int64_t n_nodes, const char *const *texts,
		      const int32_t *counts, size_t n)
{
	/* kube-scheduler's ErrNoNodesAvailable when there is no node at all
	 * (a pool scaled to zero). */
	if (n_nodes == 0)
		return (size_t)snprintf(buf, size, "no nodes available to schedule pods");
	/* "COUNT REASON" strings, sorted like Go's sort.Strings (bytewise). */
	char **parts = gp_xcalloc(n ? n : 1, sizeof *parts);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (counts[i] <= 0)
			continue;
		size_t len = strlen(texts[i]) + 16;
		parts[k] = gp_xmalloc(len);
		snprintf(parts[k++], len, "%d %s", (int)counts[i], texts[i]);
	}
	qsort(parts, k, sizeof *parts, compare_strings);
	size_t used =
		(size_t)snprintf(buf, size, "0/%lld nodes are available:", (long long)n_nodes);
	for (size_t i = 0; i < k; i++) {
		used += append(buf, size, used, i ? ", " : " ", parts[i]);
		free(parts[i]);
	}
	used += append(buf, size, used, ".", "");
	free(parts);
	return used;
}

/* Whether kube-scheduler's filter for a node failing with this kind returns
 * UnschedulableAndUnresolvable (NodeUnschedulable, TaintToleration,
 * NodeAffinity, PodTopologySpread's missing label; gpuplan's window and VRAM
 * rules, which no eviction changes), rather than Unschedulable
 * (NodeResourcesFit's Insufficient, PodTopologySpread's skew). */
bool reasons_unresolvable(uint8_t kind)
{
	switch ((enum pend_kind)kind) {
	case PEND_UNSCHEDULABLE:
	case PEND_WINDOW:
	case PEND_AFFINITY:
	case PEND_TAINT:
	case PEND_SPREAD_LABEL:
	case PEND_VRAM: return true;
	default: return false;
	}
}

size_t reasons_format_fit_error(char *buf, size_t size, int64_t n_nodes, const char *const *texts,
				const uint8_t *kinds, const int32_t *counts, size_t n)
{
	size_t used = reasons_format(buf, size, n_nodes, texts, counts, n);
	if (n_nodes == 0)
		return used; /* ErrNoNodesAvailable is not a FitError: no PostFilter */
	/* A node fails exactly one unresolvable filter (the first), or one or
	 * more resolvable ones: the rest of the nodes are the resolvable. */
	int64_t hopeless = 0;
	for (size_t i = 0; i < n; i++)
		if (counts[i] > 0 && kinds && reasons_unresolvable(kinds[i]))
			hopeless += counts[i];
	if (hopeless > n_nodes)
		hopeless = n_nodes;
	const char *post_texts[] = {REASONS_NO_VICTIMS, REASONS_NOT_HELPFUL};
	int32_t post_counts[] = {(int32_t)(n_nodes - hopeless), (int32_t)hopeless};
	char inner[160];
	reasons_format(inner, sizeof inner, n_nodes, post_texts, post_counts, 2);
	/* FitError.Error() adds " %v." after DefaultPreemption's "preemption: "
	 * + the inner FitError, which ends with its own "." */
	used += append(buf, size, used, " preemption: ", inner);
	return used + append(buf, size, used, ".", "");
}

/* --- interning ------------------------------------------------------------ */

/* Grows the per-(message, workload) rows to hold message id. */
static void rows_hold(struct reasons *r, size_t id)
{
	if (id < r->cap_rows)
		return;
	size_t cap = r->cap_rows ? 2 * r->cap_rows : 16, n = r->n_workloads;
	r->seconds = gp_xrealloc(r->seconds, cap * n * sizeof *r->seconds);
	r->pods = gp_xrealloc(r->pods, cap * n * sizeof *r->pods);
	memset(r->seconds + r->cap_rows * n, 0, (cap - r->cap_rows) * n * sizeof *r->seconds);
	memset(r->pods + r->cap_rows * n, 0, (cap - r->cap_rows) * n * sizeof *r->pods);
	r->shares = gp_xrealloc(r->shares, cap * CONSTRAINT_KINDS * sizeof *r->shares);
	memset(r->shares + r->cap_rows * CONSTRAINT_KINDS, 0,
	       (cap - r->cap_rows) * CONSTRAINT_KINDS * sizeof *r->shares);
	r->share_kinds = gp_xrealloc(r->share_kinds, cap * sizeof *r->share_kinds);
	memset(r->share_kinds + r->cap_rows, 0, (cap - r->cap_rows) * sizeof *r->share_kinds);
	r->cap_rows = cap;
}

/* The kind of constraint a pending reason's kind is about (bind.h). */
static enum constraint_kind constraint_of(enum pend_kind k)
{
	switch (k) {
	case PEND_UNSCHEDULABLE:
	case PEND_WINDOW: return CONSTRAINT_WINDOW;
	case PEND_AFFINITY: return CONSTRAINT_NODE_SELECTOR; /* refined by bind_write */
	case PEND_SPREAD:
	case PEND_SPREAD_LABEL: return CONSTRAINT_SPREAD;
	case PEND_CPU: return CONSTRAINT_CPU_REQUEST;
	case PEND_MEMORY: return CONSTRAINT_MEMORY_REQUEST;
	case PEND_VRAM: return CONSTRAINT_VRAM;
	case PEND_RESOURCE: return CONSTRAINT_CAPACITY;
	case PEND_TAINT: return CONSTRAINT_TAINT;
	case PEND_QUOTA: return CONSTRAINT_QUOTA;
	case PEND_QUEUE_ORDER: return CONSTRAINT_QUEUEING_STRATEGY;
	case PEND_KINDS: break;
	}
	return CONSTRAINT_CAPACITY;
}

_Static_assert(CONSTRAINT_KINDS <= 32, "a message's kinds with a share fit share_kinds");

/* Message id's shares: by the nodes that gave each reason (counts, per
 * slot), else equal over the kinds of its mask. */
static void set_shares(struct reasons *r, size_t id, const int32_t *counts, uint32_t kinds)
{
	double *sh = r->shares + id * CONSTRAINT_KINDS, total = 0;
	memset(sh, 0, CONSTRAINT_KINDS * sizeof *sh);
	/* "Insufficient" takes a share only when the nodes give no other
	 * reason: a rule, a request or a window that keeps pods off some nodes
	 * binds before hardware does (relaxing it is cheaper). */
	bool others = kinds & ~PEND_BIT(PEND_RESOURCE);
	for (size_t i = 0; counts && i < r->n_slots; i++) {
		enum pend_kind k = r->slot_kinds ? (enum pend_kind)r->slot_kinds[i] : PEND_RESOURCE;
		if (counts[i] > 0 && !(others && k == PEND_RESOURCE)) {
			sh[constraint_of(k)] += counts[i];
			total += counts[i];
		}
	}
	for (int k = 0; !(total > 0) && k < PEND_KINDS; k++)
		if ((kinds & PEND_BIT(k)) && !(others && k == PEND_RESOURCE)) {
			sh[constraint_of((enum pend_kind)k)] += 1;
			total += 1;
		}
	if (!(total > 0)) /* no node to give a reason (none at all): capacity */
		sh[CONSTRAINT_CAPACITY] = total = 1;
	r->share_kinds[id] = 0;
	for (int k = 0; k < CONSTRAINT_KINDS; k++) {
		sh[k] /= total;
		r->share_kinds[id] |= (uint32_t)(sh[k] > 0) << k;
	}
}

/* The id of text, adding it if new with kinds (and shares from counts, or
 * from kinds when counts is NULL). */
static int32_t intern_counts(struct reasons *r, const char *text, uint32_t kinds,
			     const int32_t *counts)
{
	bool added;
	size_t id = strindex_add(&r->texts, text, &added);
	if (!added)
		return (int32_t)id;
	GP_GROW(r->kinds, r->cap_kinds, id + 1);
	r->kinds[id] = kinds;
	rows_hold(r, id);
	set_shares(r, id, counts, kinds);
	return (int32_t)id;
}

/* --- lifecycle -------------------------------------------------------------- */

void reasons_init(struct reasons *r, size_t n_workloads, int64_t n_nodes,
		  const char *const *slot_texts, const uint8_t *slot_kinds, size_t n_slots)
{
	memset(r, 0, sizeof *r);
	r->slot_kinds = slot_kinds;
	r->n_workloads = n_workloads ? n_workloads : 1;
	r->n_nodes = n_nodes;
	r->slot_texts = slot_texts;
	r->n_slots = n_slots;
	r->buf_size = 256;
	r->buf = gp_xmalloc(r->buf_size);
}

void reasons_free(struct reasons *r)
{
	strindex_free(&r->texts);
	free(r->kinds);
	free(r->seconds);
	free(r->pods);
	for (size_t i = 0; i < r->cap_classes; i++)
		free(r->classes[i].post);
	free(r->classes);
	free(r->class_counts);
	free(r->jobs);
	free(r->buf);
	free(r->shares);
	free(r->share_kinds);
	memset(r, 0, sizeof *r);
}

/* The state of class cls, made on first use. */
/* The class and job tables grow out of line, so that class_at and job_at,
 * called at each failed attempt, are a compare and an address: with the
 * growth inline they saved and restored registers at every call. */
static __attribute__((noinline)) void grow_classes(struct reasons *r, size_t cls)
{
	size_t cap = r->cap_classes ? r->cap_classes : 8;
	while (cap <= cls)
		cap *= 2;
	r->classes = gp_xrealloc(r->classes, cap * sizeof *r->classes);
	r->class_counts = gp_xrealloc(r->class_counts, cap * r->n_slots * sizeof *r->class_counts);
	for (size_t i = r->cap_classes; i < cap; i++)
		r->classes[i] = (struct reason_class){.msg = -1,
						      .workload = -1,
						      .bind_kind = CONSTRAINT_KINDS,
						      .next_kind = CONSTRAINT_KINDS,
						      .bind_param = -1,
						      .next_param = -1};
	r->cap_classes = cap;
}

static __attribute__((noinline)) void grow_jobs(struct reasons *r, uint32_t job)
{
	size_t cap = r->cap_jobs ? r->cap_jobs : 1024;
	while (cap <= job)
		cap *= 2;
	r->jobs = gp_xrealloc(r->jobs, cap * sizeof *r->jobs);
	for (size_t i = r->cap_jobs; i < cap; i++)
		r->jobs[i] = (struct reason_job){-1, 0, -1};
	r->cap_jobs = cap;
}

static inline struct reason_class *class_at(struct reasons *r, size_t cls)
{
	if (cls >= r->cap_classes)
		grow_classes(r, cls);
	return &r->classes[cls];
}

static inline struct reason_job *job_at(struct reasons *r, uint32_t job)
{
	if (job >= r->cap_jobs)
		grow_jobs(r, job);
	return &r->jobs[job];
}

/* --- accounting ------------------------------------------------------------ */

/* What binds secs pending pod-seconds of class c (bind.h): its message's
 * shares, with Kueue's refusal by the limit reasons_bind named and
 * "Insufficient" while nodes are provisioned going to provisioning.  O(kinds). */
static void accrue_bind(struct reasons *r, const struct reason_class *c, double secs)
{
	if (!r->bind)
		return;
	const double *sh = r->shares + (size_t)c->msg * CONSTRAINT_KINDS;
	enum constraint_kind bk = (enum constraint_kind)c->bind_kind;
	/* the kinds with a share, in kind order: most messages have one */
	for (uint32_t m = r->share_kinds[c->msg]; m; m &= m - 1) {
		int k = __builtin_ctz(m);
		enum constraint_kind to = (enum constraint_kind)k;
		int32_t param = -1;
		if (to == CONSTRAINT_QUOTA && bk != CONSTRAINT_KINDS &&
		    bk != CONSTRAINT_PROVISIONING)
			to = bk, param = c->bind_param;
		else if (to == CONSTRAINT_CAPACITY && bk == CONSTRAINT_PROVISIONING)
			to = bk, param = c->bind_param;
		bind_add(r->bind, to, c->workload, param, secs * sh[k]);
	}
}

void reasons_bind(struct reasons *r, size_t cls, enum constraint_kind kind, int32_t param)
{
	struct reason_class *c = class_at(r, cls);
	c->next_kind = (uint8_t)kind;
	c->next_param = param;
}

/* Accrues the class's pending pod-seconds up to now. */
static void accrue(struct reasons *r, struct reason_class *c, sim_time now)
{
	if (c->msg >= 0 && c->counted > 0 && now > c->since) {
		size_t row = (size_t)c->msg * r->n_workloads + (size_t)c->workload;
		double secs = sim_seconds(now - c->since) * (double)c->counted * c->pods;
		r->seconds[row] += secs;
		accrue_bind(r, c, secs);
	}
	if (now > c->since)
		c->since = now;
}

void reasons_join(struct reasons *r, size_t cls, uint32_t job)
{
	struct reason_class *c = class_at(r, cls);
	struct reason_job *j = job_at(r, job);
	j->cls = (int32_t)cls;
	j->seq = c->fails;
}

void reasons_retire(struct reasons *r, uint32_t job)
{
	if (job < r->cap_jobs)
		r->jobs[job] = (struct reason_job){-1, 0, -1};
}

/* The kinds of reason the nodes gave (PEND_BIT mask). */
static uint32_t count_kinds(const struct reasons *r, const int32_t *counts)
{
	uint32_t kinds = 0;
	for (size_t i = 0; i < r->n_slots; i++)
		if (counts[i] > 0)
			kinds |= PEND_BIT(r->slot_kinds ? r->slot_kinds[i] : PEND_RESOURCE);
	return kinds;
}

/* The message for counts, formatted only when they differ from the class's
 * last ones: most failed attempts repeat the previous message. */
static int32_t message(struct reasons *r, size_t cls, const int32_t *counts)
{
	struct reason_class *c = &r->classes[cls];
	int32_t *last = r->class_counts + cls * r->n_slots;
	if (c->msg >= 0 && c->keyed == KEYED_COUNTS &&
	    !memcmp(last, counts, r->n_slots * sizeof *counts))
		return c->msg;
	memcpy(last, counts, r->n_slots * sizeof *counts);
	c->keyed = KEYED_COUNTS;
	size_t need = reasons_format_fit_error(r->buf, r->buf_size, r->n_nodes, r->slot_texts,
					       r->slot_kinds, counts, r->n_slots) +
		      1;
	if (need > r->buf_size) {
		r->buf = gp_xrealloc(r->buf, need);
		r->buf_size = need;
		reasons_format_fit_error(r->buf, r->buf_size, r->n_nodes, r->slot_texts,
					 r->slot_kinds, counts, r->n_slots);
	}
	return intern_counts(r, r->buf, count_kinds(r, counts), counts);
}

/* Records that class cls's head failed with message msg (see reasons_fail). */
static int32_t fail_with(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			 size_t members, int32_t msg, uint32_t head, uint64_t gen)
{
	struct reason_class *c = &r->classes[cls];
	/* Pods that begin to wait with msg: all members when it is new to the
	 * class, else those that joined since the last failure. */
	int64_t starting = msg != c->msg ? (int64_t)members : (int64_t)members - c->counted;
	r->pods[(size_t)msg * r->n_workloads + (size_t)workload] += starting * pods;
	c->msg = msg;
	c->bind_kind = c->next_kind;
	c->bind_param = c->next_param;
	c->next_kind = CONSTRAINT_KINDS;
	c->next_param = -1;
	c->counted = (int64_t)members;
	c->fails++;
	c->head = head;
	c->gen = gen;
	return msg;
}

int32_t reasons_fail(struct reasons *r, size_t cls, int32_t workload, int32_t pods, size_t members,
		     const int32_t *counts, uint32_t head, uint64_t gen, sim_time now)
{
	struct reason_class *c = class_at(r, cls);
	accrue(r, c, now);
	c->workload = workload;
	c->pods = pods;
	return fail_with(r, cls, workload, pods, members, message(r, cls, counts), head, gen);
}

int32_t reasons_fail_text(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const char *text, uint32_t head, uint64_t gen,
			  sim_time now)
{
	return reasons_fail_kind(r, cls, workload, pods, members, text, PEND_BIT(PEND_QUOTA), head,
				 gen, now);
}

/* reasons_fail_kind with the nodes' counts when there are (for the shares). */
static int32_t fail_text(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			 size_t members, const char *text, uint32_t kinds, const int32_t *counts,
			 uint32_t head, uint64_t gen, sim_time now)
{
	struct reason_class *c = class_at(r, cls);
	accrue(r, c, now);
	c->workload = workload;
	c->pods = pods;
	/* The node-count cache no longer describes the class's message. */
	c->keyed = KEYED_NONE;
	return fail_with(r, cls, workload, pods, members, intern_counts(r, text, kinds, counts),
			 head, gen);
}

int32_t reasons_fail_kind(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const char *text, uint32_t kinds, uint32_t head,
			  uint64_t gen, sim_time now)
{
	return fail_text(r, cls, workload, pods, members, text, kinds, NULL, head, gen, now);
}

int32_t reasons_fail_note(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const int32_t *counts, const char *note, uint32_t head,
			  uint64_t gen, sim_time now)
{
	return reasons_fail_post(r, cls, workload, pods, members, counts, NULL, 0, note, head, gen,
				 now);
}

/* The filters' FitError with the PostFilter's post (NULL: reasons_format_fit_error's
 * suffix; "": none) into r->buf; its length. */
static size_t format_post(struct reasons *r, const int32_t *counts, const char *post)
{
	if (!post)
		return reasons_format_fit_error(r->buf, r->buf_size, r->n_nodes, r->slot_texts,
						r->slot_kinds, counts, r->n_slots);
	size_t len =
		reasons_format(r->buf, r->buf_size, r->n_nodes, r->slot_texts, counts, r->n_slots);
	if (*post && r->n_nodes > 0)
		len += append(r->buf, r->buf_size, len, " ", post);
	return len;
}

/* Whether post is the text of class c's last PostFilter words: the same
 * place at the same generation is (asserted), else the text is compared. */
static bool same_post(const struct reason_class *c, const char *post, uint64_t post_gen)
{
	if (post_gen && post == c->post_at && post_gen == c->post_gen) {
		assert(!strcmp(c->post, post) && "the same generation keeps the text");
		return true;
	}
	return !strcmp(c->post, post);
}

int32_t reasons_fail_post(struct reasons *r, size_t cls, int32_t workload, int32_t pods,
			  size_t members, const int32_t *counts, const char *post,
			  uint64_t post_gen, const char *note, uint32_t head, uint64_t gen,
			  sim_time now)
{
	if (!note && !post)
		return reasons_fail(r, cls, workload, pods, members, counts, head, gen, now);
	struct reason_class *c = class_at(r, cls);
	int32_t *last = r->class_counts + cls * r->n_slots;
	if (!note && c->msg >= 0 && c->keyed == KEYED_POST && same_post(c, post, post_gen) &&
	    !memcmp(last, counts, r->n_slots * sizeof *counts)) {
		c->post_at = post;
		c->post_gen = post_gen;
		accrue(r, c, now);
		c->workload = workload;
		c->pods = pods;
		return fail_with(r, cls, workload, pods, members, c->msg, head, gen);
	}
	size_t len = format_post(r, counts, post);
	size_t need = len + (note ? strlen(note) : 0) + sizeof " (cluster-autoscaler: )";
	if (need > r->buf_size) {
		r->buf = gp_xrealloc(r->buf, need);
		r->buf_size = need;
		format_post(r, counts, post);
	}
	if (note)
		snprintf(r->buf + len, need - len, " (cluster-autoscaler: %s)", note);
	char *text = gp_xstrdup(r->buf);
	/* The note does not change what the nodes said: the kinds are theirs. */
	int32_t id = fail_text(r, cls, workload, pods, members, text, count_kinds(r, counts),
			       counts, head, gen, now);
	free(text);
	if (!note) {
		size_t n = strlen(post) + 1;
		GP_GROW(c->post, c->post_cap, n);
		memcpy(c->post, post, n);
		c->post_at = post;
		c->post_gen = post_gen;
		memcpy(last, counts, r->n_slots * sizeof *counts);
		c->keyed = KEYED_POST;
	}
	return id;
}

void reasons_set_nodes(struct reasons *r, int64_t n_nodes)
{
	if (r->n_nodes == n_nodes)
		return;
	r->n_nodes = n_nodes;
	/* Cached counts name messages made with the old total (none before the
	 * first class: a run of inference replicas only). */
	if (r->class_counts)
		memset(r->class_counts, 0xff,
		       r->cap_classes * r->n_slots * sizeof *r->class_counts);
}

bool reasons_blocked(const struct reasons *r, size_t cls, uint32_t head, uint64_t gen,
		     size_t members)
{
	if (cls >= r->cap_classes)
		return false;
	const struct reason_class *c = &r->classes[cls];
	return c->fails > 0 && c->head == head && c->gen == gen && c->counted == (int64_t)members;
}

void reasons_leave(struct reasons *r, uint32_t job, sim_time now)
{
	struct reason_job *j = job_at(r, job);
	if (j->cls < 0)
		return;
	struct reason_class *c = &r->classes[j->cls];
	if (c->fails > j->seq) { /* it carried the class's message */
		accrue(r, c, now);
		c->counted--;
		j->msg = c->msg;
	}
	j->cls = -1;
}

void reasons_drop_member(struct reasons *r, size_t cls, sim_time now)
{
	struct reason_class *c = class_at(r, cls);
	assert(c->counted > 0 && "a member that carried the message");
	accrue(r, c, now);
	c->counted--;
}

void reasons_finish(struct reasons *r, sim_time end)
{
	for (size_t i = 0; i < r->cap_classes; i++)
		if (r->classes[i].msg >= 0)
			accrue(r, &r->classes[i], end);
}

const char *reasons_text(const struct reasons *r, int32_t id)
{
	return id >= 0 && (size_t)id < r->texts.n ? strindex_key(&r->texts, (size_t)id) : NULL;
}

int32_t reasons_job_message(const struct reasons *r, uint32_t job)
{
	if (job >= r->cap_jobs)
		return -1;
	const struct reason_job *j = &r->jobs[job];
	if (j->cls >= 0) { /* still pending */
		const struct reason_class *c = &r->classes[j->cls];
		return c->fails > j->seq ? c->msg : -1;
	}
	return j->msg;
}

const char *reasons_of_job(const struct reasons *r, uint32_t job)
{
	return reasons_text(r, reasons_job_message(r, job));
}

/* --- results --------------------------------------------------------------- */

static void add_row(struct results *out, const char *scope, int32_t workload, size_t id,
		    uint32_t kinds, double seconds, int64_t pods)
{
	GP_GROW(out->pending_reasons, out->cap_pending_reasons, out->n_pending_reasons + 1);
	out->pending_reasons[out->n_pending_reasons++] = (struct pending_reason){
		scope, out->reason_texts[id], seconds, pods, workload, kinds};
}

void reasons_write(const struct reasons *r, const struct scenario *sc, struct results *out)
{
	out->reason_texts = gp_xcalloc(r->texts.n ? r->texts.n : 1, sizeof *out->reason_texts);
	out->n_reason_texts = r->texts.n;
	for (size_t id = 0; id < r->texts.n; id++)
		out->reason_texts[id] = gp_xstrdup(strindex_key(&r->texts, id));
	size_t nw = r->n_workloads;
	for (size_t id = 0; id < r->texts.n; id++) {
		double seconds = 0;
		int64_t pods = 0;
		for (size_t w = 0; w < sc->n_workloads; w++) {
			seconds += r->seconds[id * nw + w];
			pods += r->pods[id * nw + w];
		}
		if (pods > 0)
			add_row(out, "all", -1, id, r->kinds[id], seconds, pods);
	}
	for (size_t w = 0; w < sc->n_workloads; w++)
		for (size_t id = 0; id < r->texts.n; id++)
			if (r->pods[id * nw + w] > 0)
				add_row(out, sc->workloads[w].name, (int32_t)w, id, r->kinds[id],
					r->seconds[id * nw + w], r->pods[id * nw + w]);
}
