#!/usr/bin/env bash
# tests/bench/same-outputs.sh - whether two gpuplan binaries give the same
# results, byte for byte: the check a speed-up must pass (docs/benchmarks.md).
#
#   tests/bench/same-outputs.sh OLD_BIN NEW_BIN [scenario.yaml ...]
#
# Runs `gpuplan run X --db D` with each binary on every scenarios/*.yaml,
# every tests/fixtures scenario at any depth, tests/bench/mm1-200k.yaml and
# batch-1m.yaml, and any scenario given, from the repository's root.  It
# compares `sqlite3 D .dump` (runs.started_at and runs.wall_seconds cleared),
# standard output (the elapsed seconds masked), standard error and the exit
# code.  Prints a DIFF line for each that differs; exits 1 if any did.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [scenario.yaml ...]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
extra=()
for f in "$@"; do extra+=("$(realpath "$f")"); done
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d /tmp/same-outputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
inputs=$(find scenarios tests/fixtures -name '*.yaml' | sort)
n=0 differ=0
for f in $inputs tests/bench/mm1-200k.yaml tests/bench/batch-1m.yaml "${extra[@]}"; do
	for side in old new; do
		bin=$old
		[ $side = new ] && bin=$new
		rm -f "$tmp/$side.db"
		"$bin" run "$f" --db "$tmp/$side.db" >"$tmp/$side.out" 2>"$tmp/$side.err"
		echo "exit $?" >>"$tmp/$side.out"
		sed -i -E "s#$tmp/$side.db#DB#g; s/ in [0-9.]+ s / in X s /" "$tmp/$side.out" "$tmp/$side.err"
		: >"$tmp/$side.dump"
		if [ -s "$tmp/$side.db" ]; then
			sqlite3 "$tmp/$side.db" "UPDATE runs SET started_at = NULL, wall_seconds = NULL" 2>/dev/null
			sqlite3 "$tmp/$side.db" .dump >"$tmp/$side.dump"
		fi
	done
	n=$((n + 1))
	for k in out err dump; do
		cmp -s "$tmp/old.$k" "$tmp/new.$k" || { echo "DIFF $f ($k)"; differ=1; }
	done
done
echo "$n scenarios: $([ $differ = 0 ] && echo "the same results" || echo "results differ")"
exit $differ
