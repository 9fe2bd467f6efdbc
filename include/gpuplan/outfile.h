/*
 * outfile.h - files gpuplan writes (HTML and OpenMetrics reports, imported
 * scenarios, JSON) are replaced whole or not at all.
 *
 * outfile_open() creates a temporary file beside PATH (same folder, so the
 * final rename(2) is atomic) and hands out a stdio stream on it;
 * outfile_commit() flushes, syncs and renames it over PATH; outfile_abort()
 * removes the temporary file and leaves PATH exactly as it was.  Whatever was
 * at PATH is never emptied or removed on an error.  A PATH that is a symbolic
 * link is resolved, so the link's target is replaced and the link kept.  A
 * PATH that exists and is not a regular file (a device, a FIFO, a folder) is
 * refused, and so is a PATH that is one of the files the command reads
 * (outfile_refuse_same), such as the results database of `report --html`.
 */
#ifndef GPUPLAN_OUTFILE_H
#define GPUPLAN_OUTFILE_H

#include <stdio.h>

#include "gpuplan/common.h"

struct outfile {
	FILE *f;    /* write here between open and commit/abort */
	char *path; /* the file to replace (a symbolic link resolved) */
	char *tmp;  /* the temporary file beside it */
};

/* GP_EINPUT when PATH names an existing file that is not a regular one, or is
 * the same file (device and inode) as `input` (may be NULL); GP_ERUNTIME when
 * the folder cannot be written. */
int outfile_open(struct outfile *of, const char *path, const char *input, struct gp_err *err);

/* GP_EINPUT when PATH exists and is the same file (device and inode) as
 * input (may be NULL): a command that writes over what it reads loses it. */
int outfile_refuse_same(const char *path, const char *input, struct gp_err *err);

/* Makes the written file appear at PATH; on failure PATH is left as it was. */
int outfile_commit(struct outfile *of, struct gp_err *err);

/* Discards what was written; PATH is left as it was.  Safe after commit. */
void outfile_abort(struct outfile *of);

#endif
