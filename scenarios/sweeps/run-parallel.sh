#!/bin/sh
# run-parallel.sh - a sweep in N shards with GNU parallel, then one merged
# database.  Each shard is its own `gpuplan sweep --shard K/N` writing its own
# database; `gpuplan merge` then combines them.  Rerunning after a failure
# resumes every shard and merges again without duplicates.
#
#   scenarios/sweeps/run-parallel.sh SWEEP.yaml N OUT.db [PARALLEL OPTIONS...]
#
#   scenarios/sweeps/run-parallel.sh scenarios/sweeps/pool-size.yaml 4 results/pool-size.db
#
# Extra options go to parallel.  On other machines over ssh, every host needs
# gpuplan on its PATH and this checkout at the same path; shard databases are
# fetched back with --return:
#
#   scenarios/sweeps/run-parallel.sh scenarios/sweeps/pool-size.yaml 16 results/pool-size.db \
#       -S 8/host1,8/host2 --workdir "$PWD" --return 'results/pool-size.shard-{}.db'
#
# Environment: GPUPLAN (the gpuplan binary; default: gpuplan on PATH, else
# bin/gpuplan of this checkout), SHARD_DIR (where the shard databases go,
# named NAME.shard-K.db after the sweep file; default results), JOBS (worker
# processes per shard, default 1).
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 SWEEP.yaml N OUT.db [PARALLEL OPTIONS...]" >&2
	exit 2
fi
sweep=$1 shards=$2 out=$3
shift 3

here=$(cd "$(dirname "$0")" && pwd)
gpuplan=${GPUPLAN:-$(command -v gpuplan || echo "$here/../../bin/gpuplan")}
name=$(basename "$sweep" .yaml)
dir=${SHARD_DIR:-results}
mkdir -p "$dir"

# One job per shard; --halt stops the rest when one fails (exit code 1 or 2
# from gpuplan), and the completed shards are kept for the next attempt.
seq 0 $((shards - 1)) | parallel --will-cite --halt now,fail=1 "$@" \
	"$gpuplan" sweep "$sweep" --shard "{}/$shards" --db "$dir/$name.shard-{}.db" \
	--jobs "${JOBS:-1}" --resume --quiet

"$gpuplan" merge "$out" "$dir/$name".shard-*.db
