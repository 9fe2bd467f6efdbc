/*
 * ytree_int.h - what the files of ytree share (ytree.h is the public face):
 * ytree.c reads YAML with libyaml and applies --set; ytree_json.c reads JSON
 * into an arena.
 */
#ifndef GPUPLAN_YTREE_INT_H
#define GPUPLAN_YTREE_INT_H

#include "gpuplan/strindex.h"
#include "gpuplan/ytree.h"

/* Real scenarios nest a handful of levels and hold a few thousand nodes. */
#define YTREE_MAX_DEPTH 128

/* Reads a whole input through the opener that refuses special files. */
int ytree_read_all(const char *path, char **text, size_t *len, struct gp_err *err);
/* Reports the first repeated key of map m in document order, if any. */
int ytree_check_duplicates(const struct ynode *m, struct gp_err *err);
/* The length of the UTF-8 sequence at s (1 to 4, within n bytes), or 0 when
 * it is not one (overlong forms, surrogates, past U+10FFFF). */
int ytree_utf8_length(const unsigned char *s, size_t n);
/* Frees the chunks of a JSON tree's arena. */
void ytree_arena_free(void *arena);

#endif
