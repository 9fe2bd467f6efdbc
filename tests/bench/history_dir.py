#!/usr/bin/env python3
"""tests/bench/history_dir.py DIR [--days 30] [--pods-per-day 2000] [--seed 1]

Writes a history DIR (the files scripts/export-history.sh writes, in the
Prometheus HTTP API's JSON, with meta.json) for a large cluster directly,
without Prometheus: the input of `make bench`'s `import --history` case
(issue 37: 30 days at 2,000 pods a day reads in under 10 s and 500 MiB).

The cluster: 100 nodes of 8 GPUs (H100, A100-80GB, L4).  The pods: 40 bare
Job stems (Poisson, lognormal durations, 1 to 8 GPUs), 4 CronJobs, 60
Kubeflow notebooks and 6 Deployments (two ReplicaSets each over the period),
with the series kube-state-metrics v2 and dcgm-exporter give one pod: about
20 series a pod, as a real export of that size has (pod_info, requests and
limits twice for a pod that waited: before and after it was bound).  The
times are plausible, not a schedule: this measures reading, not learning.
Standard library only.
"""

import argparse
import json
import math
import os
import random
from datetime import datetime, timezone

ALNUM = "bcdfghjklmnpqrstvwxz2456789"
PRODUCTS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--pods-per-day", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t0 = int(datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp())
    t1 = t0 + a.days * 86400
    rangestr = f"{t1 - t0}s"
    os.makedirs(a.dir, exist_ok=True)

    def sfx(n=5):
        return "".join(rng.choice(ALNUM) for _ in range(n))

    nodes = [(f"gpu-{i:03d}", PRODUCTS[i % 3]) for i in range(100)]
    # the pods: (ns, pod, owner_kind, owner_name, created, scheduled, completed|None, last, gpus, node, labels)
    pods = []
    jobs = []  # (ns, job, owner_kind, owner_name)
    total = a.days * a.pods_per_day
    stems = [f"train-{i:02d}" for i in range(40)]
    crons = [f"eval-{i}" for i in range(4)]
    notebooks = [f"user{i:02d}" for i in range(60)]
    deploys = [f"serve-{i}" for i in range(6)]
    rs = {d: [f"{d}-{sfx(10)}", f"{d}-{sfx(10)}"] for d in deploys}
    for d in deploys:  # two replicas of each ReplicaSet, the second rolled out mid-period
        for k, r in enumerate(rs[d]):
            for _ in range(2):
                c = t0 - 86400 if k == 0 else t0 + (t1 - t0) // 2
                end = t0 + (t1 - t0) // 2 + 120 if k == 0 else None
                pods.append(("serving", f"{r}-{sfx()}", "ReplicaSet", r, c, c + 5, None,
                             end if end else t1, 1, rng.choice(nodes),
                             {"app": d, "pod-template-hash": r.split("-")[-1]}))
    for day in range(a.days):
        for cj in crons:
            c = t0 + day * 86400 + 22 * 3600 + crons.index(cj) * 600
            job = f"{cj}-{c // 60}"
            jobs.append(("ml", job, "CronJob", cj))
            s = c + rng.randint(0, 120)
            done = s + int(rng.lognormvariate(math.log(3600), 0.3))
            pods.append(("ml", f"{job}-{sfx()}", "Job", job, c, s, done if done < t1 else None,
                         min(done + 3600, t1), 4, rng.choice(nodes), {"job-name": job}))
    while len(pods) < total:
        c = rng.randint(t0 - 3600, t1 - 60)
        r = rng.random()
        if r < 0.12:
            nb = rng.choice(notebooks)
            s = c + rng.randint(0, 60)
            end = s + int(rng.lognormvariate(math.log(5400), 0.8))
            pods.append(("team-a", f"{nb}-0", "StatefulSet", nb, c, s, None, min(end, t1), 1,
                         rng.choice(nodes), {"notebook-name": nb, "statefulset": nb}))
        else:
            stem = stems[int(rng.random() ** 2 * len(stems))]
            job = f"{stem}-{sfx()}"
            jobs.append(("ml", job, "<none>", "<none>"))
            s = c + (rng.randint(0, 1800) if rng.random() < 0.3 else rng.randint(0, 5))
            done = s + int(rng.lognormvariate(math.log(2700), 0.7))
            pods.append(("ml", f"{job}-{sfx()}", "Job", job, c, s if s < t1 else None,
                         done if done < t1 else None, min(done + 600, t1),
                         rng.choice((1, 1, 2, 4, 8)), rng.choice(nodes), {"job-name": job}))

    def uid(i):
        return f"{i:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"

    ksm = '"instance":"10.42.0.10:8080","job":"kube-state-metrics"'
    files = {}

    def vec(name, query, records):
        with open(os.path.join(a.dir, name), "w") as f:
            f.write('{"status":"success","data":{"resultType":"vector","result":[')
            f.write(",".join(records))
            f.write("]}}")
        files[name] = query

    def rec(metric, value):
        return '{"metric":{%s},"value":[%d,"%s"]}' % (metric, t1, value)

    recs = {k: [] for k in ("created", "sched", "started", "compl", "first", "last", "phase", "owner",
                            "info", "labels", "req", "lim", "eng", "sm", "fb")}
    for i, (ns, pod, ok, on, c, s, done, last, gpus, node, labels) in enumerate(pods):
        u = uid(i)
        base = f'"namespace":"{ns}","pod":"{pod}","uid":"{u}",{ksm}'
        recs["created"].append(rec(base, c))
        recs["first"].append(rec(base, max(c, t0) + 60 - max(c, t0) % 60))
        recs["last"].append(rec(base, last - last % 60))
        recs["owner"].append(rec(base + f',"owner_kind":"{ok}","owner_name":"{on}","owner_is_controller":"true"', 1))
        recs["labels"].append(rec(base + "".join(f',"label_{k.replace("-", "_")}":"{v}"' for k, v in labels.items()), 1))
        bound = [("", None)] if s is None else ([("", None), (node[0], s)] if s - c > 60 else [(node[0], s)])
        for nn, _ in bound:
            nl = f',"node":"{nn}"' if nn else ""
            recs["info"].append(rec(base + nl + f',"created_by_kind":"{ok}","created_by_name":"{on}","host_network":"false"', 1))
            for res, unit, v in (("nvidia_com_gpu", "integer", gpus), ("cpu", "core", 8 * gpus),
                                 ("memory", "byte", 64 * 2**30 * gpus)):
                recs["req"].append(rec(base + nl + f',"container":"main","resource":"{res}","unit":"{unit}"', v))
                if res != "cpu":
                    recs["lim"].append(rec(base + nl + f',"container":"main","resource":"{res}","unit":"{unit}"', v))
        if s is not None:
            recs["sched"].append(rec(base, s))
            recs["started"].append(rec(base, s))
            p = f'"namespace":"{ns}","pod":"{pod}"'
            recs["eng"].append(rec(p, round(rng.random(), 4)))
            recs["sm"].append(rec(p, round(rng.random() * 0.8, 4)))
            recs["fb"].append(rec(p, rng.randint(1000, 70000)))
        if done is not None:
            recs["compl"].append(rec(base, done))
            phase = "Succeeded"
        else:
            phase = "Pending" if s is None else "Running"
        recs["phase"].append(rec(base + f',"phase":"{phase}"', 1))
    R = rangestr
    vec("pod_created.json", f"max_over_time(kube_pod_created[{R}])", recs["created"])
    vec("pod_scheduled.json", f"max_over_time(kube_pod_status_scheduled_time[{R}])", recs["sched"])
    vec("pod_started.json", f"max_over_time(kube_pod_start_time[{R}])", recs["started"])
    vec("pod_completed.json", f"max_over_time(kube_pod_completion_time[{R}])", recs["compl"])
    vec("pod_first_seen.json", f"min_over_time(timestamp(kube_pod_info)[{R}:60s])", recs["first"])
    vec("pod_last_seen.json", f"max_over_time(timestamp(kube_pod_info)[{R}:60s])", recs["last"])
    vec("pod_phase.json", f"last_over_time(kube_pod_status_phase[{R}]) == 1", recs["phase"])
    vec("pod_owner.json", f"max_over_time(kube_pod_owner[{R}])", recs["owner"])
    vec("pod_info.json", f"max_over_time(kube_pod_info[{R}])", recs["info"])
    vec("pod_labels.json", f"max_over_time(kube_pod_labels[{R}])", recs["labels"])
    vec("pod_requests.json", f"max_over_time(kube_pod_container_resource_requests[{R}])", recs["req"])
    vec("pod_limits.json", f"max_over_time(kube_pod_container_resource_limits[{R}])", recs["lim"])
    vec("job_owner.json", f"max_over_time(kube_job_owner[{R}])",
        [rec(f'"namespace":"{ns}","job_name":"{j}","owner_kind":"{ok}","owner_name":"{on}","owner_is_controller":"true",{ksm}', 1)
         for ns, j, ok, on in jobs])
    vec("replicaset_owner.json", f"max_over_time(kube_replicaset_owner[{R}])",
        [rec(f'"namespace":"serving","replicaset":"{r}","owner_kind":"Deployment","owner_name":"{d}","owner_is_controller":"true",{ksm}', 1)
         for d in deploys for r in rs[d]])
    vec("cronjob_schedule.json", f"max_over_time(kube_cronjob_info[{R}])",
        [rec(f'"namespace":"ml","cronjob":"{cj}","schedule":"{k * 10} 22 * * *","concurrency_policy":"Forbid",{ksm}', 1)
         for k, cj in enumerate(crons)])
    vec("node_labels.json", f"last_over_time(kube_node_labels[{R}])",
        [rec(f'"node":"{n}","label_nvidia_com_gpu_product":"{p}","label_nvidia_com_gpu_count":"8",{ksm}', 1)
         for n, p in nodes])
    vec("node_allocatable.json", f"last_over_time(kube_node_status_allocatable[{R}])",
        [rec(f'"node":"{n}","resource":"{r}","unit":"{u}",{ksm}', v) for n, _ in nodes
         for r, u, v in (("nvidia_com_gpu", "integer", 8), ("cpu", "core", 192), ("memory", "byte", 2 * 2**40))])
    vec("dcgm_engine.json", f'avg by (namespace, pod) (avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{{pod!=""}}[{R}]))', recs["eng"])
    vec("dcgm_sm.json", f'avg by (namespace, pod) (avg_over_time(DCGM_FI_PROF_SM_ACTIVE{{pod!=""}}[{R}]))', recs["sm"])
    vec("dcgm_fb_used.json", f'max by (namespace, pod) (max_over_time(DCGM_FI_DEV_FB_USED{{pod!=""}}[{R}]))', recs["fb"])
    iso = lambda t: datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(os.path.join(a.dir, "meta.json"), "w") as f:
        json.dump({"format": "gpuplan-history/1", "from": iso(t0), "to": iso(t1),
                   "url": "synthetic:tests/bench/history_dir.py", "step_s": 3600, "files": files,
                   "skipped": {k: "no series (synthetic)" for k in (
                       "node_taints.json", "vllm_requests_hourly.json", "vllm_prompt_tokens.json",
                       "vllm_generation_tokens.json", "vllm_requests.json", "kueue_workloads.json")}}, f)
        f.write("\n")
    print(f"history_dir: {len(pods)} pods, {a.days} days, {sum(len(v) for v in recs.values())} series")


if __name__ == "__main__":
    main()
