#!/usr/bin/env python3
"""tests/history/check_export.py DIR TRUTH_DIR - checks an exported history DIR
(scripts/export-history.sh against a Prometheus loaded with gen_week.py's
output) against the generator's truth: every file of the contract is there
with the right query, and the pods read back from the responses - names,
workloads, nodes, times, requests, phases - are exactly truth.pods.csv, and
the figures computed from them are truth.json's.  It reads the responses the
way an importer must: one pod per uid; finished is the completion time, else
the last sample for a pod that vanished before TO; the workload is what
created the pod (a Job's CronJob, a bare Job's name stem, a Notebook's
notebook-name label, a ReplicaSet's Deployment).  Standard library only.
Prints what it compared; exits 1 on the first difference.
"""

import csv
import json
import math
import os
import re
import sys
from datetime import datetime, timezone

REQUIRED = ["pod_created", "pod_scheduled", "pod_started", "pod_completed", "pod_first_seen",
            "pod_last_seen", "pod_phase", "pod_owner", "pod_info", "pod_requests", "pod_limits",
            "node_labels", "node_allocatable"]
OPTIONAL = ["pod_labels", "job_owner", "replicaset_owner", "cronjob_schedule", "node_taints",
            "dcgm_engine", "dcgm_sm", "dcgm_fb_used", "vllm_requests_hourly", "vllm_prompt_tokens",
            "vllm_generation_tokens", "vllm_requests", "kueue_workloads"]
STEM = re.compile(r"^(.*)-[bcdfghjklmnpqrstvwxz2456789]{5}$")
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("check_export: FAIL: " + msg)


def ok(msg):
    print("check_export: ok: " + msg)


def t_of(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def load(d, name):
    with open(os.path.join(d, name + ".json")) as f:
        body = json.load(f)
    if body.get("status") != "success":
        fail(f"{name}.json: status {body.get('status')}")
    return body["data"]["result"]


def per_uid(d, name):
    out = {}
    for r in load(d, name):
        out.setdefault(r["metric"]["uid"], []).append((r["metric"], float(r["value"][1])))
    return out


def quantile(xs, p):
    if not xs:
        return 0.0
    x = (len(xs) - 1) * p
    i = int(math.floor(x))
    return float(xs[-1]) if i + 1 >= len(xs) else xs[i] + (x - i) * (xs[i + 1] - xs[i])


def figures(rows, span):
    started = [r for r in rows if r["scheduled_s"] is not None]
    q = sorted(r["scheduled_s"] - r["created_s"] for r in started if 0 <= r["created_s"] <= span)
    gh, ev = 0.0, []
    for r in started:
        a = max(r["scheduled_s"], 0)
        fin = r["finished_s"]
        b = min(fin if fin is not None else span, span)
        gh += r["gpus"] * max(0, b - a) / 3600
        if fin is None or fin > 0:
            ev.append((a, r["gpus"]))
            if fin is not None:
                ev.append((fin, -r["gpus"]))
    cur = peak = 0
    for _, g in sorted(ev):
        cur += g
        peak = max(peak, cur)
    return {"pods_started": len(started), "queue_time_mean_s": sum(q) / len(q) if q else 0.0,
            "queue_time_p95_s": quantile(q, 0.95), "gpu_hours": gh, "peak_allocated_gpus": peak}


def main():
    d, tdir = sys.argv[1], sys.argv[2]
    with open(os.path.join(tdir, "truth.json")) as f:
        truth = json.load(f)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    t0, t1 = t_of(meta["from"]), t_of(meta["to"])
    span = t1 - t0
    if meta["format"] != "gpuplan-history/1" or meta["from"] != truth["from"] or meta["to"] != truth["to"]:
        fail(f"meta.json: {meta['format']} {meta['from']}..{meta['to']}, truth {truth['from']}..{truth['to']}")
    rng = f"[{int(span)}s"
    for name in REQUIRED + OPTIONAL:
        q = meta["files"].get(name + ".json")
        if q is None or not os.path.exists(os.path.join(d, name + ".json")):
            fail(f"{name}.json is missing")
        elif name != "vllm_requests_hourly" and rng not in q:
            fail(f"{name}.json: query {q} does not cover the period {rng}")
    ok(f"meta.json lists the {len(meta['files'])} files of the contract, {meta['from']}..{meta['to']}")

    created = per_uid(d, "pod_created")
    sched = per_uid(d, "pod_scheduled")
    compl = per_uid(d, "pod_completed")
    last = per_uid(d, "pod_last_seen")
    phase = per_uid(d, "pod_phase")
    owner = per_uid(d, "pod_owner")
    info = per_uid(d, "pod_info")
    req = per_uid(d, "pod_requests")
    labels = per_uid(d, "pod_labels")
    job_owner = {(r["metric"]["namespace"], r["metric"]["job_name"]): r["metric"] for r in load(d, "job_owner")}
    rs_owner = {(r["metric"]["namespace"], r["metric"]["replicaset"]): r["metric"]
                for r in load(d, "replicaset_owner")}
    rows = []
    for uid, [(m, created_v)] in created.items():
        ns, pod = m["namespace"], m["pod"]
        o = owner[uid][0][0]
        kind, oname = o["owner_kind"], o["owner_name"]
        lab = labels.get(uid, [({}, 0)])[0][0]
        if kind == "Job":
            jo = job_owner[(ns, oname)]
            if jo["owner_kind"] == "CronJob":
                wl = jo["owner_name"]
            else:
                s = STEM.match(oname)
                wl = s.group(1) if s else oname
        elif kind == "StatefulSet" and "label_notebook_name" in lab:
            wl = lab["label_notebook_name"]
        elif kind == "ReplicaSet":
            wl = rs_owner[(ns, oname)]["owner_name"]
        else:
            wl = oname
        node = ""
        for mi, _ in info[uid]:
            node = mi.get("node") or node
        gpus = cpu = mem = 0
        for mr, v in req.get(uid, []):
            if mr["resource"] == "nvidia_com_gpu":
                gpus = max(gpus, v)
            elif mr["resource"] == "cpu":
                cpu = max(cpu, v)
            elif mr["resource"] == "memory":
                mem = max(mem, v)
        # pod_info has a series per node label (none while pending): the
        # pod's last sample is the latest of them.
        sc = max(v for _, v in sched[uid]) if uid in sched else None
        co = max(v for _, v in compl[uid]) if uid in compl else None
        ls = max(v for _, v in last[uid])
        ph = phase[uid][0][0]["phase"]
        if co is not None:
            fin = co
        elif ls < t1:
            fin, ph = ls, "Deleted"
        else:
            fin = None
        rows.append({"workload": wl, "namespace": ns, "pod": pod, "node": node,
                     "created_s": created_v - t0, "scheduled_s": None if sc is None else sc - t0,
                     "finished_s": None if fin is None else fin - t0, "gpus": int(gpus),
                     "cpu_milli": int(round(cpu * 1000)), "memory_bytes": int(mem), "phase": ph})
    rows.sort(key=lambda r: (r["created_s"], r["pod"]))

    want = []
    with open(os.path.join(tdir, "truth.pods.csv")) as f:
        for r in csv.DictReader(f):
            for k in ("created_s", "scheduled_s", "finished_s"):
                r[k] = None if r[k] == "" else float(r[k])
            for k in ("gpus", "cpu_milli", "memory_bytes"):
                r[k] = int(r[k])
            want.append(r)
    if len(rows) != len(want):
        fail(f"{len(rows)} pods read back, the generator recorded {len(want)}")
    bad = 0
    for got, w in zip(rows, want):
        for k in w:
            if got[k] != w[k]:
                bad += 1
                if bad <= 5:
                    fail(f"pod {w['pod']}: {k} read back {got[k]!r}, recorded {w[k]!r}")
    if bad == 0 and len(rows) == len(want):
        ok(f"{len(rows)} pods read back equal truth.pods.csv (workload, node, times, requests, phase)")

    by = {}
    for r in rows:
        by.setdefault(r["workload"], []).append(r)
    scopes = [("all", rows)] + sorted(by.items())
    for scope, rs in scopes:
        got = figures(rs, span)
        exp = (truth["all"] if scope == "all" else truth["workloads"][scope])["observed"]
        for k, v in got.items():
            if abs(v - exp[k]) > 1e-6 * max(1, abs(exp[k])):
                fail(f"{scope}: {k} from the export {v}, truth {exp[k]}")
    ok(f"pods_started, queue mean and p95, GPU-hours and peak GPUs of {len(scopes)} scopes equal truth.json")

    ch = truth["workloads"].get("chat")
    if ch:
        total = sum(float(r["value"][1]) for r in load(d, "vllm_requests"))
        if abs(total - ch["requests_observed"]["requests"]) > 0.5:
            fail(f"vllm_requests.json: {total} requests, truth {ch['requests_observed']['requests']}")
        hourly = load(d, "vllm_requests_hourly")
        hsum = sum(float(v) for r in hourly for t, v in r["values"] if t > t0)
        if abs(hsum - total) > 0.5:
            fail(f"vllm_requests_hourly.json sums to {hsum}, vllm_requests.json says {total}")
        pt = sum(float(r["value"][1]) for r in load(d, "vllm_prompt_tokens")) / total
        if abs(pt - ch["requests_observed"]["prompt_tokens_mean"]) > 1e-6 * pt:
            fail(f"prompt tokens per request {pt}, truth {ch['requests_observed']['prompt_tokens_mean']}")
        ok(f"vLLM: {int(total)} requests (hourly range query agrees), {pt:.1f} prompt tokens a request")
    eng = {r["metric"]["pod"]: float(r["value"][1]) for r in load(d, "dcgm_engine")}
    nb = [eng[r["pod"]] for r in rows if r["workload"] == "finetune" and r["pod"] in eng]
    if nb:
        mean = sum(nb) / len(nb)
        model = truth["workloads"]["finetune"]["model"]["gpu_busy"]
        if abs(mean - model) > 0.02:
            fail(f"dcgm_engine.json: finetune mean {mean:.3f}, model {model}")
        ok(f"DCGM engine active of {len(nb)} finetune pods averages {mean:.3f} (model {model})")
    if failures:
        print(f"check_export: {failures} difference(s)")
        sys.exit(1)


if __name__ == "__main__":
    main()
