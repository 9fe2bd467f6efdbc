/*
 * relax_int.h - what the relaxation rows (relax_fixes.c, relax_rows.c) share:
 * appending a labelled fix to a finding and its --set overrides.
 */
#ifndef GPUPLAN_RELAX_INT_H
#define GPUPLAN_RELAX_INT_H

#include "gpuplan/common.h"
#include "gpuplan/results.h"

/* A fix of f with the label, unless f has one with that label already (NULL then). */
struct finding_fix *relax_fix(struct finding *f, const char *fmt, ...) GP_PRINTF(2, 3);
/* One override of x, typed (override_vsetf: "KEYFMT=VALUEFMT", the key's
 * conversions names), of any length; nothing when x is NULL. */
void relax_set(struct finding_fix *x, const char *fmt, ...) GP_PRINTF(2, 3);

#endif
