/*
 * openb.h - the Alibaba GPU-sharing cluster trace (cluster-trace-gpu-v2023,
 * "openb", Weng et al. ATC'23): its node and pod lists, and their GPU models.
 *
 * Node lists (openb_node_list_*.csv): header sn,cpu_milli,memory_mib,gpu,model.
 * Pod lists (openb_pod_list_*.csv): header with at least
 * name,cpu_milli,memory_mib,num_gpu,gpu_milli and optionally gpu_spec, qos,
 * pod_phase, creation_time, deletion_time, scheduled_time (the multigpu
 * variants have the first five only).  Columns are found by their header
 * names, in any order; every row must have as many cells as the header.
 * Lines starting with '#' and blank lines are skipped.  Errors are
 * "FILE:LINE: error: ..." (GP_EINPUT); a file that cannot be opened is
 * reported at ref, where the scenario names it.
 *
 * GPU models.  T4, A10, V100M16 and V100M32 are the catalog's T4, A10,
 * V100-16GB and V100-32GB under the trace's names (figures copied; a test
 * keeps them equal).  P100 is declared here from NVIDIA's datasheet (Tesla
 * P100 PCIe 16 GB: 732 GB/s, 18.7 TFLOPS FP16, 56 SMs, no INT8 path).  G1, G2
 * and G3 are Alibaba's undisclosed codes: memory, bandwidth, throughput and
 * SMs are unknown and recorded as 0.  For capacity planning with the trace
 * only the GPU count, the milli-GPU shares and (where known) memory matter.
 */
#ifndef GPUPLAN_OPENB_H
#define GPUPLAN_OPENB_H

#include "gpuplan/catalog.h"
#include "gpuplan/common.h"

/* The node label that carries the openb model (the trace's annotation key). */
#define OPENB_MODEL_LABEL "alibabacloud.com/gpu-card-model"

struct openb_node {
	char *name; /* sn */
	int64_t cpu_milli;
	int64_t memory_mib;
	int32_t gpus;
	const struct gpu_type *gpu;
	int32_t line;
};

/* One pod of a pod list.  Times are seconds from the trace's origin; -1
 * where the column is absent or the cell empty (a pod never scheduled). */
struct openb_pod {
	char *name;
	int64_t cpu_milli;
	int64_t memory_mib;
	int32_t num_gpu;   /* 0 .. 64 */
	int32_t gpu_milli; /* per GPU: 1..1000 with num_gpu 1, 1000 with more, 0 with none */
	uint32_t spec;     /* allowed models (bit i = openb_gpu_at(i)); 0: any */
	char qos[16];
	int64_t creation, deletion, scheduled;
	int32_t line;
};

/* The GPU type of an openb model ("G2", "V100M32", ...), or NULL. */
const struct gpu_type *openb_gpu_type(const char *model);
size_t openb_gpu_count(void);
const struct gpu_type *openb_gpu_at(size_t i);

int openb_read_nodes(const char *path, struct srcloc ref, struct openb_node **nodes, size_t *n,
		     struct gp_err *err);
void openb_free_nodes(struct openb_node *nodes, size_t n);

/* Reads a pod list; with timed, the creation_time and deletion_time columns
 * are required (a timed replay needs them). */
int openb_read_pods(const char *path, struct srcloc ref, bool timed, struct openb_pod **pods,
		    size_t *n, struct gp_err *err);
void openb_free_pods(struct openb_pod *pods, size_t n);

/* The names of the allowed models of a spec mask, joined by '|'. */
void openb_spec_text(uint32_t spec, char *buf, size_t len);

#endif
