/*
 * opencost.c - OpenCost /allocation JSON (see opencost.h).
 */
#include "gpuplan/opencost.h"

#include "gpuplan/units.h"

#include <math.h>

/* JSON has no NaN: absent figures are null. */
static void number(FILE *out, const char *key, double v)
{
	if (isnan(v))
		fprintf(out, ",\"%s\":null", key);
	else
		fprintf(out, ",\"%s\":%.10g", key, v);
}

/* Names are validated ([A-Za-z0-9._-]) or __idle__: nothing to escape. */
static void allocation(FILE *out, const struct allocation *a, int64_t start_epoch)
{
	char start[32], end[32];
	units_format_rfc3339(start_epoch + a->start / SIM_SECOND, start, sizeof start);
	units_format_rfc3339(start_epoch + a->end / SIM_SECOND, end, sizeof end);
	fprintf(out,
		"\"%s\":{\"name\":\"%s\",\"window\":{\"start\":\"%s\",\"end\":\"%s\"},"
		"\"start\":\"%s\",\"end\":\"%s\"",
		a->name, a->name, start, end, start, end);
	number(out, "minutes", sim_seconds(a->end - a->start) / 60);
	number(out, "gpuHours", a->gpu_hours);
	number(out, "gpuCost", a->gpu_cost);
	number(out, "cpuCoreHours", a->cpu_core_hours);
	number(out, "cpuCost", a->cpu_cost);
	number(out, "ramByteHours", a->ram_byte_hours);
	number(out, "ramCost", a->ram_cost);
	number(out, "totalCost", a->total_cost);
	number(out, "gpuEfficiency", a->gpu_efficiency);
	fputc('}', out);
}

void opencost_write(FILE *out, const struct allocation *rows, size_t n, int64_t start_epoch)
{
	fputs("{\"code\":200,\"data\":[", out);
	for (size_t i = 0; i < n; i++) {
		bool new_window = i == 0 || rows[i].start != rows[i - 1].start;
		if (new_window)
			fputs(i ? "},{" : "{", out);
		else
			fputc(',', out);
		allocation(out, &rows[i], start_epoch);
	}
	fputs(n ? "}]}\n" : "]}\n", out);
}
