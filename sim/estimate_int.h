/*
 * estimate_int.h - what estimate.c, estimate_fleet.c, estimate_route.c and estimate_disagg.c
 * share.
 */
#ifndef GPUPLAN_ESTIMATE_INT_H
#define GPUPLAN_ESTIMATE_INT_H

#include "gpuplan/estimate.h"
#include "gpuplan/firstcut.h"
#include "gpuplan/jsonw.h"

/* Fills e's model (read from --model-config when given), weight and KV
 * formats, and its GPU when req names one (else NULL); checks --tp against
 * the model's heads.  estimate_free releases it. */
int estimate_resolve(const struct estimate_request *req, struct estimate *e, struct gp_err *err);

/* estimate_fleet.c, for estimate_route.c and estimate_disagg.c: --rate's checks; the first-cut
 * service of the traffic on GPU type g; one row of the text table. */
int estimate_check_traffic(const struct estimate_traffic *t, struct gp_err *err);
void estimate_service_of(const struct estimate *e, const struct estimate_request *req,
			 const struct estimate_traffic *t, const struct gpu_type *g,
			 struct firstcut_service *s);
void estimate_row_text(FILE *out, const struct gpu_type *g, const struct firstcut *f);
/* The first line of a service's table, without its end: the model, its
 * traffic and its bounds. */
void estimate_traffic_text(FILE *out, const struct estimate *e, const struct estimate_traffic *t,
			   const struct firstcut_service *s);

/* The JSON of a service's table (estimate.c): its object and the model and
 * traffic members, down to the opened "gpus" array (link: --disaggregated's,
 * else NULL); estimate_json_end closes both. */
void estimate_json_begin(struct jsonw *w, FILE *out, const struct estimate *e,
			 const struct estimate_traffic *t, const struct firstcut_service *s,
			 const char *link);
void estimate_json_end(struct jsonw *w);
/* A GPU type's row of "gpus": its object opened, with the type and the
 * verdict; the caller adds the figures when the verdict is ok and closes it. */
void estimate_json_row(struct jsonw *w, const char *gpu, const char *verdict);
/* A member of a GPU type's row: a figure at the number of decimals shown. */
void estimate_json_fixed(struct jsonw *w, const char *key, double v, int decimals);
void estimate_json_int(struct jsonw *w, const char *key, int64_t v);

#endif
