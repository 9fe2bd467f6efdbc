#!/bin/sh
# tests/metricnames.sh - no metric is named by a string outside its table
# (run by `make layers`).  sim/metric.c's table holds every metric's name;
# code adds and reads metrics by enum metric_id.  Prints and fails on
#   1. a call that adds or reads a metric with a string literal for it;
#   2. a string literal in sim/ that is a metric's name, outside the table,
#      unless it is one of the names below that mean something else there
#      (a column of the jobs or timeseries table, a backtest figure);
#   3. a metric's name quoted in SQL.
set -u
cd "$(dirname "$0")/.." || exit 1
names=$(grep -o '{"[a-z0-9_]*",' sim/metric.c | tr -d '{",')
[ -n "$names" ] || { echo "metricnames: no names read from sim/metric.c"; exit 1; }
bad=0
grep -nE '(results_(add_metric|get|or|holds|metric)|diagnose_metric)\([^;]*,[^;]*,[[:space:]]*"' \
	sim/*.c sim/*.h && bad=1
# store_schema.c, store_read.c, store_stream.c, store_merge.c: "preemptions"
# and "oom_kills" are columns of jobs and timeseries; results.c and
# advise_trust.c: backtest_metric_names, the backtest table's own figures;
# estimate_*.c: a member of `estimate --json`'s rows, computed there.
allowed='^sim/(store_[a-z]*\.c:.*"(preemptions|oom_kills)"|results\.c:.*"(queue_time_mean_s|queue_time_p95_s|peak_allocated_gpus)"|advise_trust\.c:.*"queue_time_p95_s"|estimate_[a-z]*\.c:.*"tokens_per_joule")'
pattern=$(printf '"%s"|' $names)
grep -nE "${pattern%|}" sim/*.c sim/*.h | grep -v '^sim/metric\.c:' | grep -vE "$allowed" |
	sed 's/$/  <- a metric name outside sim\/metric.c: use its METRIC_ id/' | grep . && bad=1
# 3. a metric's name quoted in SQL ('cost_idle'): bind metric_name(id) instead
#    (comment lines aside).
pattern=$(printf "'%s'|" $names)
grep -nE "${pattern%|}" sim/*.c sim/*.h | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' |
	sed 's/$/  <- a metric name in SQL: bind metric_name(METRIC_...)/' | grep . && bad=1
exit $bad
