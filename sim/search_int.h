/*
 * search_int.h - what search.c shares with search_bracket.c.
 */
#ifndef GPUPLAN_SEARCH_INT_H
#define GPUPLAN_SEARCH_INT_H

#include "gpuplan/scenario.h"
#include "gpuplan/search.h"

/* The first cut's answer to a minimum-replica question on sc (the scenario
 * with the search's --set overrides), or 0 when the search is not one
 * (search_bracket.c says which are). */
int search_first_cut(const struct search_spec *sp, const struct scenario *sc);

#endif
