#!/bin/sh
# tests/bench/pgo-train.sh GPUPLAN DB - the training run of profile-guided
# optimization (Makefile: pgo_train): the build instrumented with
# -fprofile-generate runs what the bench measures, cut short, and every
# example and fixture, so that the counts weigh the paths the bench and
# users take.
set -u
bin=$1 db=$2
run() { "$bin" run "$@" --db "$db" --quiet || { echo "pgo: $bin run $* failed" >&2; exit 1; }; }
each=20000
run tests/bench/mm1-200k.yaml --set workloads.customers.count=50000
run tests/bench/batch-10m.yaml --set workloads.one.count=$each --set workloads.two.count=$each \
	--set workloads.four.count=$each --set workloads.eight.count=$each
run tests/bench/advise-day.yaml --set workloads.chat.requests.count=100000
"$bin" sweep tests/bench/sweep-1k.yaml --db "$db" --jobs 1 --quiet || exit 1
data=../shared/data
for f in scenarios/*.yaml tests/fixtures/*.yaml; do
	if grep -q '^[^#]*shared/data' "$f" && [ ! -d "$data" ]; then continue; fi
	run "$f"
done
if [ -r "$data/openb/openb_pod_list_default.csv" ]; then
	for p in random dot-product gpu-clustering gpu-packing best-fit; do
		run scenarios/openb.yaml --set scheduler.gpu_policy=$p
	done
fi
if [ -r "$data/azure-llm/AzureLLMInferenceTrace_conv.csv" ]; then
	run tests/bench/azure-1m.yaml --set workloads.chat.requests.repeat=2
fi
