#!/usr/bin/env bash
# scripts/export-history.sh - export a cluster's history from Prometheus for
# `gpuplan import --history`.
#
#   scripts/export-history.sh URL FROM TO DIR
#
# URL is the Prometheus HTTP API's base (http://prometheus:9090, or a prefix
# such as https://host/prometheus); FROM and TO are RFC 3339 times in whole
# seconds (2026-11-02T00:00:00Z, 2026-11-02T01:00:00+01:00).  The script runs
# the fixed list of queries below (docs/import.md, "From your cluster's
# history", lists them too) and writes each response body, unchanged, into
# DIR/<file>, then DIR/meta.json with the period and every query it ran.
#
# Every query but one is an instant query at time=TO over the whole period
# (`max_over_time(...[RANGE])`, one sample per series), so a month of a large
# cluster stays small; vllm_requests_hourly.json is a range query, one point an
# hour.  A required query that fails stops the script (exit 2) with the query
# and Prometheus' error; an optional one (dcgm-exporter, vLLM, Kueue, ...) is
# skipped with a note on stderr and listed under "skipped" in meta.json.
#
# Needs bash, curl and GNU date only.  CURL_EXTRA adds options to every curl
# call (split on spaces), e.g. CURL_EXTRA="--cacert ca.pem -H @auth-header".
# Exit status: 0 done, 2 bad arguments, Prometheus unreachable or a required
# query failed (DIR then holds no meta.json).
#
# Metric and label names are kube-state-metrics v2's
# (kubernetes/kube-state-metrics docs/metrics/workload/pod-metrics.md,
# job-metrics.md, cronjob-metrics.md, replicaset-metrics.md and
# docs/metrics/cluster/node-metrics.md), dcgm-exporter's
# (NVIDIA/dcgm-exporter etc/default-counters.csv; `pod` and `namespace` come
# from its Kubernetes pod mapping) and vLLM's (vllm/engine/metrics.py).
# The API: https://prometheus.io/docs/prometheus/latest/querying/api/
set -u
set -o pipefail

prog=scripts/export-history.sh
usage() {
	echo "usage: $prog URL FROM TO DIR   (FROM and TO in RFC 3339, e.g. 2026-11-02T00:00:00Z)" >&2
	exit 2
}
die() {
	echo "$prog: error: $*" >&2
	exit 2
}

[ $# -eq 1 ] && { [ "$1" = "-h" ] || [ "$1" = "--help" ]; } && {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit 0
}
[ $# -eq 4 ] || usage
url=${1%/}
from=$2
to=$3
dir=$4

command -v curl >/dev/null 2>&1 || die "curl is not installed"

# RFC 3339 (section 5.6 date-time) in whole seconds; prints Unix seconds.
rfc3339() {
	local name=$1 v=$2
	[[ $v =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}([Zz]|[+-][0-9]{2}:[0-9]{2})$ ]] ||
		die "$name: '$v' is not an RFC 3339 time in whole seconds (expected e.g. 2026-11-02T00:00:00Z)"
	local s
	s=$(date -u -d "$v" +%s 2>/dev/null) || die "$name: '$v' is not a valid date and time"
	# date(1) normalizes 2026-02-30 to March: reject what does not round-trip.
	local day=${v:0:10}
	local off=${v:19}
	case $off in Z | z) off=+00:00 ;; esac
	local back
	back=$(TZ=UTC date -d "@$((s + (10#${off:1:2} * 3600 + 10#${off:4:2} * 60) * (${off:0:1}1)))" +%Y-%m-%d)
	[ "$back" = "$day" ] || die "$name: '$v' is not a valid date and time"
	echo "$s"
}
case $url in
http://* | https://*) ;;
*) die "URL: '$1' is not an http:// or https:// URL" ;;
esac
from_s=$(rfc3339 FROM "$from") || exit 2
to_s=$(rfc3339 TO "$to") || exit 2
[ "$from_s" -lt "$to_s" ] || die "FROM ($from) must be before TO ($to)"
[ -n "$dir" ] || die "DIR: empty"
range="$((to_s - from_s))s"
# The times as written into meta.json: UTC, whole seconds.
from_utc=$(date -u -d "@$from_s" +%Y-%m-%dT%H:%M:%SZ)
to_utc=$(date -u -d "@$to_s" +%Y-%m-%dT%H:%M:%SZ)

# shellcheck disable=SC2206
extra=(${CURL_EXTRA:-})

# The Prometheus error of a response body ("error":"..."), or the body's start.
prom_error() {
	local body=$1 e
	e=$(sed -n 's/.*"error":"\(\([^"\\]\|\\.\)*\)".*/\1/p' "$body" | head -n 1 |
		sed -e 's/\\"/"/g' -e 's/\\\\/\\/g')
	[ -n "$e" ] && { echo "$e"; return; }
	head -c 300 "$body" | tr '\n' ' '
}

# query FILE ENDPOINT PROMQL: runs it into $tmp/FILE; 0 on success, else 1
# with the reason in $why.
why=""
query() {
	local file=$1 endpoint=$2 q=$3 code
	local args=(-sS -G --max-time "${EXPORT_TIMEOUT:-300}" -o "$tmp/$file" -w '%{http_code}'
		--data-urlencode "query=$q")
	if [ "$endpoint" = query_range ]; then
		args+=(--data-urlencode "start=$from_s" --data-urlencode "end=$to_s" --data-urlencode "step=3600")
	else
		args+=(--data-urlencode "time=$to_s")
	fi
	code=$(curl "${args[@]}" "${extra[@]}" "$url/api/v1/$endpoint" 2>"$tmp/curl.err")
	local rc=$?
	if [ $rc -ne 0 ]; then
		why="$(tr '\n' ' ' <"$tmp/curl.err")"
		rm -f "$tmp/$file"
		return 1
	fi
	if [ "$code" != 200 ] || ! grep -q '^{"status":"success"' "$tmp/$file"; then
		why="HTTP $code: $(prom_error "$tmp/$file")"
		rm -f "$tmp/$file"
		return 1
	fi
	return 0
}

json_string() { # a JSON string literal of $1
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

mkdir -p "$dir" || die "DIR: cannot create '$dir'"
tmp=$(mktemp -d "$dir/.export.XXXXXX") || die "DIR: cannot write into '$dir'"
trap 'rm -rf "$tmp"' EXIT

# Reachable, and a Prometheus API: one trivial instant query.
if ! query probe.json query "vector(1)"; then
	die "URL: $url does not answer as a Prometheus HTTP API ($url/api/v1/query): $why"
fi
rm -f "$tmp/probe.json"

R=$range
# file|endpoint|required|PromQL - the contract of the history DIR.
queries=(
	"pod_created.json|query|yes|max_over_time(kube_pod_created[$R])"
	"pod_scheduled.json|query|yes|max_over_time(kube_pod_status_scheduled_time[$R])"
	"pod_started.json|query|yes|max_over_time(kube_pod_start_time[$R])"
	"pod_completed.json|query|yes|max_over_time(kube_pod_completion_time[$R])"
	"pod_first_seen.json|query|yes|min_over_time(timestamp(kube_pod_info)[$R:60s])"
	"pod_last_seen.json|query|yes|max_over_time(timestamp(kube_pod_info)[$R:60s])"
	"pod_phase.json|query|yes|last_over_time(kube_pod_status_phase[$R]) == 1"
	"pod_owner.json|query|yes|max_over_time(kube_pod_owner[$R])"
	"pod_info.json|query|yes|max_over_time(kube_pod_info[$R])"
	"pod_labels.json|query|no|max_over_time(kube_pod_labels[$R])"
	"pod_requests.json|query|yes|max_over_time(kube_pod_container_resource_requests[$R])"
	"pod_limits.json|query|yes|max_over_time(kube_pod_container_resource_limits[$R])"
	"job_owner.json|query|no|max_over_time(kube_job_owner[$R])"
	"replicaset_owner.json|query|no|max_over_time(kube_replicaset_owner[$R])"
	"cronjob_schedule.json|query|no|max_over_time(kube_cronjob_info[$R])"
	"node_labels.json|query|yes|last_over_time(kube_node_labels[$R])"
	"node_allocatable.json|query|yes|last_over_time(kube_node_status_allocatable[$R])"
	"node_taints.json|query|no|last_over_time(kube_node_spec_taint[$R])"
	"dcgm_engine.json|query|no|avg by (namespace, pod) (avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!=\"\"}[$R]))"
	"dcgm_sm.json|query|no|avg by (namespace, pod) (avg_over_time(DCGM_FI_PROF_SM_ACTIVE{pod!=\"\"}[$R]))"
	"dcgm_fb_used.json|query|no|max by (namespace, pod) (max_over_time(DCGM_FI_DEV_FB_USED{pod!=\"\"}[$R]))"
	"vllm_requests_hourly.json|query_range|no|sum by (namespace, pod, model_name) (increase(vllm:request_success_total[1h]))"
	"vllm_prompt_tokens.json|query|no|sum by (namespace, pod, model_name) (increase(vllm:prompt_tokens_total[$R]))"
	"vllm_generation_tokens.json|query|no|sum by (namespace, pod, model_name) (increase(vllm:generation_tokens_total[$R]))"
	"vllm_requests.json|query|no|sum by (namespace, pod, model_name) (increase(vllm:request_success_total[$R]))"
	"kueue_workloads.json|query|no|max_over_time(kueue_admitted_active_workloads[$R])"
)

files=""
skipped=""
n=0
for entry in "${queries[@]}"; do
	IFS='|' read -r file endpoint required q <<<"$entry"
	if query "$file" "$endpoint" "$q"; then
		files+="${files:+,}"$'\n    '"$(json_string "$file"):$(json_string "$q")"
		n=$((n + 1))
	elif [ "$required" = yes ]; then
		die "$file: the query failed: $q"$'\n'"  $why"
	else
		echo "$prog: note: $file skipped (optional): $q: $why" >&2
		skipped+="${skipped:+,}"$'\n    '"$(json_string "$file"):$(json_string "$why")"
	fi
done

{
	printf '{"format":"gpuplan-history/1","from":"%s","to":"%s","url":%s,"step_s":3600,\n' \
		"$from_utc" "$to_utc" "$(json_string "$url")"
	printf ' "files":{%s},\n' "$files"
	printf ' "skipped":{%s}}\n' "$skipped"
} >"$tmp/meta.json"

# Everything or nothing: the files replace DIR's only once all succeeded.
for f in "$tmp"/*.json; do
	mv -f "$f" "$dir/" || die "DIR: cannot write $dir/$(basename "$f")"
done
echo "$prog: $n queries, $from_utc..$to_utc, written to $dir" >&2
