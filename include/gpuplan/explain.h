/*
 * explain.h - the sentences of a finding: what is wrong, what would help, and
 * the figures that support it (docs/diagnosis.md).
 *
 * diagnose.h fills a finding's typed fields (step, kind, pool, workload,
 * queue, members, the longest pending reason's id, and its figures, struct
 * finding in results.h); this module makes its text and evidence from them,
 * the scenario (names, memory, rules) and the run's metrics.  It is the one
 * place the diagnosis' words live: the run explains its findings before they
 * are stored or printed, and nothing downstream parses them again.
 *
 * Cost: O(members x sharing options) a finding; no state.
 */
#ifndef GPUPLAN_EXPLAIN_H
#define GPUPLAN_EXPLAIN_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

/* *text and *evidence receive the finding's sentences (malloc'd, owned by the
 * caller).  f's pool, workload, queue and members index sc; its reason
 * indexes r->reason_texts; the metrics it cites are read from r. */
void explain_finding(const struct scenario *sc, const struct results *r, const struct finding *f,
		     char **text, char **evidence);

/* Explains every finding of r that has no text yet (r owns the strings). */
void explain_results(const struct scenario *sc, struct results *r);

#endif
