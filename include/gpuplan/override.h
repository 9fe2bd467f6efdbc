/*
 * override.h - a scenario override as a typed value: the dotted key it sets
 * and the value it puts there, with the value's kind.
 *
 * What crosses modules is this struct: diagnose and relax make a finding's
 * fixes as overrides, advise plans and compares its alternatives by their
 * keys and values, and scenario_load_overrides applies them to the tree
 * (ytree_set_key) without a "KEY=VALUE" text to split again.  Text is made
 * only where a person reads it or a row stores it: override_text gives the
 * `--set 'KEY=VALUE'` form, which `gpuplan run --set` reads back to the same
 * override (override_parse), so a stored or printed fix reruns by hand.
 *
 * An override owns its key and value (malloc'd, each to its length);
 * override_free releases them.
 */
#ifndef GPUPLAN_OVERRIDE_H
#define GPUPLAN_OVERRIDE_H

#include "gpuplan/common.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* What the value is, as the scenario reads it. */
enum override_kind {
	OVERRIDE_SCALAR, /* a number, a duration, a name: "3", "2h", "best-fit" */
	OVERRIDE_MAP,    /* a YAML flow map: "{mode: time-slicing, replicas: 4}" */
	OVERRIDE_LIST,   /* a YAML flow list: "[{key: nvidia.com/gpu, operator: Exists}]" */
};

struct override {
	char *key;   /* the dotted path: pools.a100.sharing; a last step "+" appends */
	char *value; /* the value as scenario (YAML flow) text */
	enum override_kind kind;
};

/* An override of key to value (both copied); the kind from the value. */
struct override override_make(const char *key, const char *value);
/* The same, the value made from fmt. */
struct override override_makef(const char *key, const char *fmt, ...) GP_PRINTF(2, 3);

/* An override from one format "KEYFMT=VALUEFMT" and its arguments, the way
 * the detectors write their fixes: override_setf(&o, "pools.%s.sharing={mode:
 * %s, replicas: %d}", pool, mode, r).  The format's first '=' parts the key
 * from the value; the key's conversions are names (%s only, asserted), so
 * each part is formatted on its own and nothing is split afterwards. */
struct override override_setf(const char *fmt, ...) GP_PRINTF(1, 2);
struct override override_vsetf(const char *fmt, va_list ap);

/* "KEY=VALUE" (the --set form, as a person types it) into *o: the key before
 * the first '=' (a key has none: names and label keys cannot), the value
 * after it.  GP_EINPUT, naming the text, when there is no '=' or no key. */
int override_parse(const char *text, struct override *o, struct gp_err *err);

/* "KEY=VALUE", malloc'd: for the params table, messages and --set lines. */
char *override_text(const struct override *o);

/* Whether a and b set the same key. */
bool override_same_key(const struct override *a, const struct override *b);
/* Whether o's key ends in the step `field` (workloads.train.gpu_spec: "gpu_spec"). */
bool override_sets_field(const struct override *o, const char *field);

/* A deep copy. */
struct override override_copy(const struct override *o);
void override_free(struct override *o);

#endif
