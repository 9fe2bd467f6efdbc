#!/usr/bin/env bash
# tests/history/make-fixture.sh - rewrites tests/fixtures/history/: a history
# DIR exported by scripts/export-history.sh from a real Prometheus serving 42
# generated hours of a small cluster (gen_week.py --days 1.75 --scale 0.5
# --notebooks 3: 58 pods, of which 14 queued, 3 still pending and 5 running at
# TO, 2 running at FROM, 1 failed), with the generator's truth.json and truth.pods.csv, so that
# the importer's tests run without Prometheus.  Needs what tests/history.sh
# needs; run from the top of the checkout.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d /tmp/gpuplan-fixture-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
HISTORY_DAYS=1.75 HISTORY_GEN_ARGS="--scale 0.5 --notebooks 3 --seed 1" tests/history.sh --keep "$tmp/run"
out=tests/fixtures/history
rm -rf "$out"
mkdir -p "$out"
cp "$tmp"/run/export/*.json "$tmp"/run/gen/truth.json "$tmp"/run/gen/truth.pods.csv \
	"$tmp"/run/gen/model-twin.yaml "$out/"
# The server's address was a free port of the moment: say where it came from.
sed -i 's|"url":"http://127.0.0.1:[0-9]*"|"url":"http://127.0.0.1:9090"|' "$out/meta.json"
echo "tests/history/make-fixture.sh: $(ls "$out" | wc -l) files, $(du -sk "$out" | cut -f1) KiB in $out"
