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

/* estimate_fleet.c: --rate's checks (the prices too), and the service of
 * the request on GPU type g. */
struct firstcut_service;
int estimate_check_traffic(const struct estimate_traffic *t, struct gp_err *err);
void estimate_service(const struct estimate *e, const struct estimate_request *req,
		      const struct estimate_traffic *t, const struct gpu_type *g,
		      struct firstcut_service *s);

#endif
