#!/bin/sh
# shell-loop.sh - gpuplan composes with plain shell: one run per pool size,
# each appended to the same database with its override in params.
#
#   scenarios/sweeps/shell-loop.sh [DB]
set -eu
db=${1:-results/shell-loop.db}
gpuplan=${GPUPLAN:-$(command -v gpuplan || echo "$(dirname "$0")/../../bin/gpuplan")}

for n in 1 2 4; do
	"$gpuplan" run scenarios/quickstart.yaml --set pools.a100.nodes=$n --db "$db" --quiet
done

sqlite3 -header -column "$db" "
SELECT p.value AS nodes, round(m.value) AS queue_p95_s
  FROM params p JOIN metrics m ON m.run_id = p.run_id
 WHERE p.key = 'pools.a100.nodes' AND m.scope = 'all' AND m.name = 'queue_time_p95_s'
 ORDER BY p.run_id"
