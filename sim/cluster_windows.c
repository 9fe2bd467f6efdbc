/*
 * cluster_windows.c - when a pool serves batch work (cluster.h, "Windows"):
 * its daily or weekly windows, merged where they overlap, to the second;
 * a workload's own windows the same way.
 */
#include "cluster_int.h"

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * Whether epoch second s lies in a window occurrence that opened on `day` or
 * the day before (overnight windows); if so *end is the latest such close.
 */
static bool window_covers(const struct window *ws, size_t n, int64_t day, int64_t s, int64_t *end)
{
	bool covered = false;
	int64_t latest = 0;
	for (int64_t d = day - 1; d <= day; d++) {
		int dow = (int)((d % 7 + 7 + 3) % 7); /* 1970-01-01 was a Thursday; Monday = 0 */
		for (size_t i = 0; i < n; i++) {
			const struct window *w = &ws[i];
			if (!(w->days & (1u << dow)))
				continue;
			int64_t from = d * 86400 + w->from;
			int64_t to = d * 86400 + w->to + (w->to <= w->from ? 86400 : 0);
			if (from <= s && s < to && (!covered || to > latest)) {
				latest = to;
				covered = true;
			}
		}
	}
	if (covered)
		*end = latest;
	return covered;
}

/* The earliest window opening at or after s (epoch seconds), within 8 days. */
static int64_t window_next_open(const struct window *ws, size_t n, int64_t s)
{
	int64_t best = INT64_MAX, day = floor_div(s, 86400);
	for (int64_t d = day; d <= day + 8; d++) {
		int dow = (int)((d % 7 + 7 + 3) % 7);
		for (size_t i = 0; i < n; i++) {
			const struct window *w = &ws[i];
			int64_t from = d * 86400 + w->from;
			if ((w->days & (1u << dow)) && from >= s && from < best)
				best = from;
		}
	}
	return best;
}

bool cluster_window_state(const struct pool_spec *pool, int64_t start_epoch, sim_time t,
			  sim_time *next_change)
{
	return cluster_windows_state(pool->windows, pool->n_windows, start_epoch, t, next_change);
}

bool cluster_windows_state(const struct window *ws, size_t n, int64_t start_epoch, sim_time t,
			   sim_time *next_change)
{
	*next_change = SIM_NEVER;
	if (n == 0)
		return true;
	/* Work in whole epoch seconds: windows are given to the second. */
	int64_t s = start_epoch + floor_div(t, SIM_SECOND);
	int64_t end;
	if (window_covers(ws, n, floor_div(s, 86400), s, &end)) {
		/* Extend through windows that overlap or touch this one. */
		int64_t more;
		while (window_covers(ws, n, floor_div(end, 86400), end, &more) && more > end)
			end = more;
		*next_change = (end - start_epoch) * SIM_SECOND;
		return true;
	}
	int64_t open = window_next_open(ws, n, s + (t % SIM_SECOND ? 1 : 0));
	if (open != INT64_MAX)
		*next_change = (open - start_epoch) * SIM_SECOND;
	return false;
}

double cluster_open_share(const struct pool_spec *p, const struct workload_spec *w,
			  int64_t start_epoch, sim_time t, double seconds)
{
	if ((!p->n_windows && !w->n_windows) || seconds <= 0)
		return 1;
	sim_time end = t + (sim_time)(seconds * (double)SIM_SECOND), open = 0;
	for (sim_time at = t; at < end;) {
		sim_time next, wnext;
		bool on = cluster_window_state(p, start_epoch, at, &next);
		on &= cluster_windows_state(w->windows, w->n_windows, start_epoch, at, &wnext);
		next = wnext < next ? wnext : next;
		sim_time stop = next > at && next < end ? next : end;
		if (on)
			open += stop - at;
		at = stop;
	}
	return sim_seconds(open) / seconds;
}
