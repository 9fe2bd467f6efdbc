/*
 * estimate_int.h - what estimate.c shares with estimate_fleet.c.
 */
#ifndef GPUPLAN_ESTIMATE_INT_H
#define GPUPLAN_ESTIMATE_INT_H

#include "gpuplan/estimate.h"

/* Fills e's model (read from --model-config when given), weight and KV
 * formats, and its GPU when req names one (else NULL); checks --tp against
 * the model's heads.  estimate_free releases it. */
int estimate_resolve(const struct estimate_request *req, struct estimate *e, struct gp_err *err);

#endif
