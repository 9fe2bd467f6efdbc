/*
 * sort.h - sorting samples for their order statistics.
 *
 * sort_doubles orders doubles ascending with an LSD radix sort on their
 * bits (11-bit digits, six passes over the array at most, a pass skipped
 * when every key has the same digit): O(n), against O(n log n) compares of
 * GSL's heap sort, which took a fifth of a 1 M-job run.  The result is the
 * same array gsl_sort gives (equal doubles are equal bits, so no order
 * among them is visible), so statistics read from it are bit-identical.
 * NaN must not occur.  Allocates one scratch array of n for the call.
 * sort_doubles_copy sorts src into dst in the same passes, so a sorted copy
 * costs no copy first; dst is src, or does not overlap it.
 */
#ifndef GPUPLAN_SORT_H
#define GPUPLAN_SORT_H

#include <stddef.h>

void sort_doubles(double *v, size_t n);
void sort_doubles_copy(double *dst, const double *src, size_t n);

#endif
