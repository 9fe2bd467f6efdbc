#!/bin/bash
# slurm-array.sh - a sweep as a Slurm job array, one shard per array task,
# then a merge job that runs when every task has succeeded.
#
#   scenarios/sweeps/slurm-array.sh SWEEP.yaml [N]     # submits both jobs
#
# Run from the checkout on a login node (the folder must be on a file system
# the compute nodes share).  Submitted without SLURM_ARRAY_TASK_ID, the script
# submits itself as an array of N tasks (default 8) and a dependent merge job;
# inside the array, task K runs shard K of N into its own database.  A failed
# or preempted task can simply be resubmitted: --resume skips what it wrote.
#
#SBATCH --job-name=gpuplan-sweep
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=01:00:00
#SBATCH --output=results/slurm-%A_%a.out
set -euo pipefail

sweep=${1:?usage: slurm-array.sh SWEEP.yaml [N]}
name=$(basename "$sweep" .yaml)
dir=${SHARD_DIR:-results}
gpuplan=${GPUPLAN:-$(command -v gpuplan || echo "$PWD/bin/gpuplan")}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
	n=${2:-8}
	mkdir -p "$dir" results
	array=$(sbatch --parsable --array="0-$((n - 1))" --export=ALL,SHARDS="$n" "$0" "$sweep")
	sbatch --dependency="afterok:$array" --job-name=gpuplan-merge \
		--output="results/slurm-merge-%j.out" \
		--wrap="$gpuplan merge results/$name.db $dir/$name.shard-*.db"
	echo "submitted array $array ($n shards) and its merge into results/$name.db"
	exit 0
fi

n=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX + 1))}}
k=$SLURM_ARRAY_TASK_ID
"$gpuplan" sweep "$sweep" --shard "$k/$n" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
	--db "$dir/$name.shard-$k.db" --resume --quiet
