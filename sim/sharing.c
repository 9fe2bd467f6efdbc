/*
 * sharing.c - units, offers, unit memory, compute and GPU equivalents of
 * each sharing mode (see sharing.h).
 */
#include "gpuplan/sharing.h"

#include <string.h>

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

bool sharing_replicated(const struct sharing *sh)
{
	return sh->mode == SHARING_TIME_SLICING || sh->mode == SHARING_MPS;
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
