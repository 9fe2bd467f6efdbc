/*
 * opencost.h - a run's allocations in the shape of OpenCost's /allocation API
 * response, so cost dashboards and scripts that read OpenCost can read
 * simulated plans: {"code":200,"data":[{"<name>":{...}}, ...]}, one set per
 * window, each allocation with name, window {start, end}, start, end (RFC
 * 3339), minutes, gpuHours, gpuCost, cpuCoreHours, cpuCost, ramByteHours,
 * ramCost, totalCost and gpuEfficiency, __idle__ included.
 */
#ifndef GPUPLAN_OPENCOST_H
#define GPUPLAN_OPENCOST_H

#include "gpuplan/results.h"

#include <stdio.h>

/* Writes rows (ordered by window) with times relative to start_epoch. */
void opencost_write(FILE *out, const struct allocation *rows, size_t n, int64_t start_epoch);

#endif
