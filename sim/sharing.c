/*
 * sharing.c - units, offers, unit memory, compute and GPU equivalents of
 * each sharing mode (see sharing.h).
 */
#include "gpuplan/sharing.h"

#include <string.h>

/* Indexed by designated initializers, so that inserting a mode cannot shift a
 * name; the count below catches a mode left out. */
const char *const sharing_names[] = {
	[SHARING_EXCLUSIVE] = "exclusive",
	[SHARING_TIME_SLICING] = "time-slicing",
	[SHARING_MPS] = "mps",
	[SHARING_MIG] = "mig",
	[SHARING_FRACTIONAL] = "fractional",
};
_Static_assert(SHARING_FRACTIONAL + 1 == SHARING_MODES, "SHARING_MODES counts the modes");
_Static_assert(sizeof sharing_names / sizeof *sharing_names == SHARING_MODES,
	       "a name for every sharing mode");

const char *sharing_name(enum sharing_mode mode) { return sharing_names[mode]; }

const char *sharing_label(enum sharing_mode mode)
{
	switch (mode) {
	case SHARING_EXCLUSIVE: return "exclusive";
	case SHARING_TIME_SLICING: return "time-slicing";
	case SHARING_MPS: return "MPS";
	case SHARING_MIG: return "MIG";
	case SHARING_FRACTIONAL: return "fractional";
	}
	return "?";
}

bool sharing_gfd_strategy(const char *label, enum sharing_mode *out)
{
	if (!strcmp(label, "none"))
		*out = SHARING_EXCLUSIVE;
	else if (!strcmp(label, sharing_names[SHARING_TIME_SLICING]))
		*out = SHARING_TIME_SLICING;
	else if (!strcmp(label, sharing_names[SHARING_MPS]))
		*out = SHARING_MPS;
	else
		return false;
	return true;
}

bool sharing_isolates_memory(const struct sharing *sh)
{
	switch (sh->mode) {
	case SHARING_EXCLUSIVE:
	case SHARING_TIME_SLICING: return false;
	case SHARING_MPS:
	case SHARING_MIG:
	case SHARING_FRACTIONAL: break;
	}
	return true;
}

bool sharing_contended(const struct sharing *sh, enum gpu_request request)
{
	switch (sh->mode) {
	case SHARING_TIME_SLICING:
	case SHARING_MPS: return true;
	case SHARING_FRACTIONAL: return request == REQUEST_MILLI;
	case SHARING_EXCLUSIVE:
	case SHARING_MIG: break;
	}
	return false;
}

bool sharing_overflows(const struct sharing *sh, double memory, const double *vram, uint64_t mask)
{
	if (sharing_isolates_memory(sh))
		return false;
	for (; mask; mask &= mask - 1)
		if (vram[__builtin_ctzll(mask)] > memory)
			return true;
	return false;
}

int32_t sharing_units_per_gpu(const struct sharing *sh)
{
	switch (sh->mode) {
	case SHARING_TIME_SLICING:
	case SHARING_MPS: return sh->replicas;
	case SHARING_FRACTIONAL: return SHARING_MILLI;
	case SHARING_MIG: return (int32_t)sh->n_layout;
	case SHARING_EXCLUSIVE: break;
	}
	return 1;
}

bool sharing_stacks(const struct sharing *sh)
{
	return sh->mode == SHARING_TIME_SLICING && !sh->one_per_pod;
}

int32_t sharing_max_units(const struct sharing *sh, int32_t gpus_per_node)
{
	if (sharing_replicated(sh) && sh->one_per_pod)
		return gpus_per_node > 0 ? 1 : 0;
	return sharing_stacks(sh) ? gpus_per_node * sh->replicas : gpus_per_node;
}

int32_t sharing_pod_units(const struct sharing *sh, const struct sharing_ask *a)
{
	switch (a->request) {
	case REQUEST_MILLI: return a->milli;
	case REQUEST_MIG: return 1;
	case REQUEST_GPUS: break;
	}
	return sharing_replicated(sh) ? 1 : sharing_units_per_gpu(sh);
}

int32_t sharing_pods_per_gpu(const struct sharing *sh, const struct sharing_ask *a)
{
	int32_t take = sharing_pod_units(sh, a);
	return take > 0 ? sharing_units_per_gpu(sh) / take : 0;
}

const struct mig_profile *sharing_mig(const struct sharing *sh, const char *name, size_t *slot)
{
	for (size_t i = 0; name && i < sh->n_layout; i++)
		if (!strcmp(sh->layout[i]->name, name)) {
			if (slot)
				*slot = i;
			return sh->layout[i];
		}
	return NULL;
}

bool sharing_offers(const struct sharing *sh, const struct sharing_ask *a)
{
	switch (a->request) {
	case REQUEST_GPUS: /* a renamed resource is another resource */
		return sh->mode != SHARING_MIG &&
		       a->shared == (sharing_replicated(sh) && sh->renamed);
	case REQUEST_MILLI: return sh->mode == SHARING_FRACTIONAL;
	case REQUEST_MIG: return sh->mode == SHARING_MIG && sharing_mig(sh, a->mig_profile, NULL);
	}
	return false;
}

double sharing_unit_memory(const struct sharing *sh, const struct gpu_type *gpu,
			   const struct sharing_ask *a)
{
	const struct mig_profile *mp;
	switch (sh->mode) {
	case SHARING_MPS: return gpu->memory_bytes / sh->replicas;
	case SHARING_FRACTIONAL:
		return a->request == REQUEST_MILLI ? gpu->memory_bytes * a->milli / SHARING_MILLI
						   : gpu->memory_bytes;
	case SHARING_MIG:
		mp = sharing_mig(sh, a->mig_profile, NULL);
		return mp ? mp->memory_bytes : 0;
	case SHARING_EXCLUSIVE:
	case SHARING_TIME_SLICING: break;
	}
	return 0;
}

double sharing_compute(const struct sharing *sh, const struct gpu_type *gpu,
		       const struct sharing_ask *a)
{
	const struct mig_profile *mp;
	switch (sh->mode) {
	case SHARING_MPS: return 1.0 / sh->replicas;
	case SHARING_FRACTIONAL:
		return a->request == REQUEST_MILLI ? (double)a->milli / SHARING_MILLI : 1.0;
	case SHARING_MIG:
		mp = sharing_mig(sh, a->mig_profile, NULL);
		return mp ? (double)mp->sms / gpu->sm_count : 1.0;
	case SHARING_EXCLUSIVE:
	case SHARING_TIME_SLICING: break; /* a time-sliced pod has every SM while its slice runs */
	}
	return 1.0;
}

double sharing_memory_share(const struct sharing *sh, const struct sharing_ask *a)
{
	const struct mig_profile *mp =
		sh->mode == SHARING_MIG ? sharing_mig(sh, a->mig_profile, NULL) : NULL;
	return mp ? mp->memory_slices / 8.0 : 1.0;
}

double sharing_pod_equivalent(const struct sharing *sh, const struct sharing_ask *a, int32_t n)
{
	const struct mig_profile *mp;
	switch (a->request) {
	case REQUEST_MILLI: return (double)a->milli / SHARING_MILLI;
	case REQUEST_MIG:
		mp = sharing_mig(sh, a->mig_profile, NULL);
		return mp ? mp->compute_slices / 7.0 : 0;
	case REQUEST_GPUS: break;
	}
	return sharing_replicated(sh) ? (double)n / sh->replicas : (double)n;
}

double sharing_charge(const struct sharing *sh)
{
	int slices = 0;
	if (sh->mode == SHARING_MIG)
		for (size_t i = 0; i < sh->n_layout; i++)
			slices += sh->layout[i]->compute_slices;
	return slices > 0 ? 7.0 / slices : 1.0;
}

double sharing_equivalent(const struct sharing *sh, const struct gpu_type *gpu,
			  int32_t gpus_per_node, const struct sharing_ask *a)
{
	if (!sharing_offers(sh, a))
		return 0;
	double limit = sharing_unit_memory(sh, gpu, a);
	if (limit > 0 && a->vram_bytes > limit)
		return 0; /* MPS, MIG and fractional enforce memory at placement */
	if (a->request == REQUEST_GPUS && a->gpus > sharing_max_units(sh, gpus_per_node))
		return 0;
	return sharing_pod_equivalent(sh, a, a->request == REQUEST_GPUS ? a->gpus : 1);
}
