#!/usr/bin/env python3
"""tests/history/gen_week.py - an independent generator of a cluster's history.

Schedules pods itself on a small cluster from a known model, and writes what
kube-state-metrics v2, dcgm-exporter and vLLM would have exposed over the
period as OpenMetrics text (for `promtool tsdb create-blocks-from
openmetrics`), with truth.json (the model, and the figures observed on its
own schedule as the backtest defines them) and truth.pods.csv (the observed
pods, in the twin's CSV format).  Standard library only; nothing of gpuplan.

    tests/history/gen_week.py --out DIR [--days 7] [--seed 1] [--scale 1]
                              [--notebooks 6] [--start 2026-11-02T00:00:00Z]

The cluster: gpu-h100-0 (8 x H100-80GB), gpu-a100-0 (4 x A100-40GB) and
gpu-l4-0 (4 x L4).  The workloads:
  finetune      bare Jobs finetune-<5 chars> (ns ml), Poisson arrivals with a
                rate by hour of day, lognormal durations, 2 H100 each; the Job
                and its pod go 10 min after the end (ttlSecondsAfterFinished);
  nightly-eval  a CronJob "0 22 * * *" (ns ml): Job nightly-eval-<minutes>
                (the CronJob controller names a Job after its scheduled time in
                Unix minutes), 4 A100, lognormal durations, deleted after 1 h;
  <notebooks>   Kubeflow Notebooks alice, bob, ... (ns team-a): StatefulSet
                <name>, pod <name>-0, label notebook-name=<name>, 1 L4; a
                session starts at the Poisson times of a diurnal rate (by hour
                and weekday) when the notebook is stopped, runs a lognormal
                time and is culled (the pod is deleted: no completion time);
  chat          a vLLM Deployment (ns serving), ReplicaSet chat-<hash>, two
                pods chat-<hash>-<5 chars> of 1 H100, created before the period
                and running through it, with diurnal Poisson request traffic.

Scheduling: kube-scheduler's queue is ordered by priority, then by creation
(the PrioritySort plugin, kubernetes pkg/scheduler/framework/plugins/
queuesort), and a pod that does not fit does not hold back the next; here each
pod goes to the first node of its GPU product with enough free GPUs, pending
pods are retried in creation order whenever GPUs free up.  Times are whole
seconds, as Kubernetes records them.

The series (kube-state-metrics v2, docs/metrics/workload/pod-metrics.md:
kube_pod_info{namespace,pod,uid,host_ip,pod_ip,node,created_by_kind,
created_by_name,priority_class,host_network}, kube_pod_created,
kube_pod_start_time, kube_pod_status_scheduled_time, kube_pod_completion_time
{namespace,pod,uid}, kube_pod_status_phase{...,phase} for the five phases,
kube_pod_owner{...,owner_kind,owner_name,owner_is_controller},
kube_pod_labels{...,label_<key>} (as with --metric-labels-allowlist=pods=[*]),
kube_pod_container_resource_requests and _limits{...,container,node,resource,
unit}; job-metrics.md: kube_job_owner{namespace,job_name,owner_kind,
owner_name,owner_is_controller}; cronjob-metrics.md: kube_cronjob_info
{namespace,cronjob,schedule,concurrency_policy}; replicaset-metrics.md:
kube_replicaset_owner{namespace,replicaset,owner_*}; docs/metrics/cluster/
node-metrics.md: kube_node_labels{node,label_*}, kube_node_status_allocatable
{node,resource,unit}, kube_node_spec_taint{node,key,value,effect}.  A pod's
series exist only while the pod exists; pod_info, requests and limits change
their node label when the pod is bound, as kube-state-metrics' do.  KSM emits
"<none>" for a missing owner.  dcgm-exporter (etc/default-counters.csv):
DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_SM_ACTIVE (fractions),
DCGM_FI_DEV_FB_USED (MiB) per GPU with gpu, UUID, device, modelName,
Hostname, and the pod mapping's namespace, pod, container; only GPUs held by a
pod are written.  vLLM (vllm/engine/metrics.py): vllm:request_success_total
{model_name,finished_reason}, vllm:prompt_tokens_total and
vllm:generation_tokens_total{model_name}, with the scrape's namespace and pod.
Every series is sampled each --interval seconds (60) on a grid from FROM to TO
inclusive.

promtool re-reads its whole input once per 2-hour block, so the text is
written as one file per 2-hour window (history-NNN.om, each with its own
families and "# EOF"): each becomes exactly one block.
"""

import argparse
import bisect
import csv
import datetime as dt
import heapq
import io
import json
import math
import os
import random
import sys

ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery utilrand's alphabet

NODES = [
    # name, product label, GPUs, cpu cores, memory bytes, GPU memory MiB, model name
    ("gpu-h100-0", "NVIDIA-H100-80GB-HBM3", 8, 192, 2 * 1024**4, 81559, "NVIDIA H100 80GB HBM3"),
    ("gpu-a100-0", "NVIDIA-A100-SXM4-40GB", 4, 96, 1024**4, 40960, "NVIDIA A100-SXM4-40GB"),
    ("gpu-l4-0", "NVIDIA-L4", 4, 48, 192 * 1024**3, 23034, "NVIDIA L4"),
]
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


def parse_time(s):
    return int(dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc).timestamp())


def iso(t):
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def lognormal_mu(mean, sigma):
    return math.log(mean) - sigma * sigma / 2


def quantile(sorted_xs, p):
    """Linear interpolation at index (n-1)p, as GSL's gsl_stats_quantile_from_sorted_data."""
    if not sorted_xs:
        return None
    x = (len(sorted_xs) - 1) * p
    i = int(math.floor(x))
    if i + 1 >= len(sorted_xs):
        return float(sorted_xs[-1])
    return sorted_xs[i] + (x - i) * (sorted_xs[i + 1] - sorted_xs[i])


def model(args):
    """The generating model: every rate, duration and request."""
    s = args.scale
    day = [0.8] * 8 + [3.2] * 11 + [0.8] * 5  # finetunes per hour, 08:00-19:00 busy
    nb = [0.02] * 8 + [0.0] + [0.35] * 9 + [0.12] * 5 + [0.02]  # sessions per hour per notebook
    nb[8] = 0.25
    chat = [0.3] * 7 + [1.0, 2.0] + [3.0] * 9 + [2.0, 1.0] + [0.5] * 4  # requests per second
    return {
        "finetune": {
            "kind": "job", "namespace": "ml", "node": "NVIDIA-H100-80GB-HBM3", "gpus": 2,
            "cpu": 16, "memory": 128 * 1024**3, "container": "trainer",
            "rate_by_hour": [r * s for r in day],
            "duration": {"dist": "lognormal", "mean_s": 2700.0, "sigma": 0.5},
            "fail_probability": 0.05, "ttl_after_finished_s": 600,
            "gpu_busy": 0.85, "sm_share": 0.7, "vram_mib": 61440,
        },
        "nightly-eval": {
            "kind": "cronjob", "namespace": "ml", "node": "NVIDIA-A100-SXM4-40GB", "gpus": 4,
            "cpu": 32, "memory": 256 * 1024**3, "container": "eval",
            "schedule": "0 22 * * *",
            "duration": {"dist": "lognormal", "mean_s": 7200.0, "sigma": 0.2},
            "ttl_after_finished_s": 3600,
            "gpu_busy": 0.6, "sm_share": 0.45, "vram_mib": 30720,
        },
        "notebooks": {
            "kind": "notebook", "namespace": "team-a", "node": "NVIDIA-L4", "gpus": 1,
            "cpu": 4, "memory": 32 * 1024**3, "container": "notebook",
            "names": NAMES[: args.notebooks],
            "rate_by_hour": [r * s for r in nb],
            "by_weekday": [1, 1, 1, 1, 1, 0.25, 0.25],
            "duration": {"dist": "lognormal", "mean_s": 5400.0, "sigma": 0.8},
            "gpu_busy": 0.05, "sm_share": 0.03, "vram_mib": 6144,
        },
        "chat": {
            "kind": "deployment", "namespace": "serving", "node": "NVIDIA-H100-80GB-HBM3", "gpus": 1,
            "cpu": 8, "memory": 64 * 1024**3, "container": "vllm", "replicas": 2,
            "model_name": "meta-llama/Llama-3.1-8B-Instruct",
            "requests": {
                "rate_by_hour_per_s": chat,
                "prompt_tokens": {"dist": "lognormal", "mean": 600.0, "sigma": 0.6},
                "output_tokens": {"dist": "lognormal", "mean": 180.0, "sigma": 0.5},
                "length_fraction": 0.1,
            },
            "vram_mib": 73728,
        },
    }


class Pod:
    __slots__ = ("workload", "ns", "name", "uid", "owner_kind", "owner_name", "labels", "product",
                 "gpus", "cpu", "memory", "container", "created", "scheduled", "completion",
                 "deleted", "failed", "node", "ip", "gpu_ids", "busy", "sm", "fb", "job",
                 "kind_end", "run_s", "ttl")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class Gen:
    def __init__(self, args):
        self.a = args
        self.m = model(args)
        self.rng = random.Random(args.seed)
        self.t0 = parse_time(args.start)
        self.t1 = self.t0 + int(args.days * 86400)
        self.warm = self.t0 - 86400  # one day simulated before FROM
        self.pods = []
        self.jobs = []  # (ns, job name, owner kind, owner name, created, deleted)
        self.names = set()
        self.uids = 0
        self.ips = 0
        self.dropped = {}
        self.arrivals = {}  # workload -> arrival times inside [FROM, TO]

    # -- names -----------------------------------------------------------------
    def suffix(self, n=5):
        return "".join(self.rng.choice(ALNUM) for _ in range(n))

    def unique(self, stem, n=5):
        while True:
            name = f"{stem}-{self.suffix(n)}"
            if name not in self.names:
                self.names.add(name)
                return name

    def uid(self):
        self.uids += 1
        r = self.rng.getrandbits(96)
        return f"{self.uids:08x}-{r >> 80 & 0xffff:04x}-4{r >> 68 & 0xfff:03x}-a{r >> 56 & 0xfff:03x}-{r & 0xffffffffffff:012x}"

    def ip(self):
        self.ips += 1
        return f"10.42.{self.ips // 250}.{self.ips % 250 + 2}"

    # -- arrivals --------------------------------------------------------------
    def poisson_times(self, rate_of_hour, start, end):
        """Arrival times of an inhomogeneous Poisson process whose rate is
        constant within each hour (rate_of_hour(t) per hour)."""
        out = []
        h = start - start % 3600
        while h < end:
            lo, hi = max(h, start), min(h + 3600, end)
            r = rate_of_hour(h) / 3600.0
            if r > 0:
                t = lo + self.rng.expovariate(r)
                while t < hi:
                    out.append(t)
                    t += self.rng.expovariate(r)
            h += 3600
        return out

    @staticmethod
    def hour(t):
        return (t // 3600) % 24

    @staticmethod
    def weekday(t):
        return dt.datetime.fromtimestamp(t, dt.timezone.utc).weekday()

    def lognormal(self, d):
        return self.rng.lognormvariate(lognormal_mu(d["mean_s"], d["sigma"]), d["sigma"])

    # -- the schedule ----------------------------------------------------------
    def simulate(self):
        m = self.m
        pending = []  # heap of (created, seq, pod)
        seq = 0
        events = []  # heap of (time, seq, kind, payload)

        def push(t, kind, payload):
            nonlocal seq
            seq += 1
            heapq.heappush(events, (t, seq, kind, payload))

        # finetune Jobs
        ft = m["finetune"]
        for t in self.poisson_times(lambda h: ft["rate_by_hour"][self.hour(h)], self.warm, self.t1):
            push(int(t), "job", "finetune")
        # nightly eval: every day at 22:00 UTC
        day = self.warm - self.warm % 86400
        while day < self.t1:
            t = day + 22 * 3600
            if self.warm <= t < self.t1:
                push(t, "job", "nightly-eval")
            day += 86400
        # notebook sessions (the rate is per notebook)
        nb = m["notebooks"]
        for name in nb["names"]:
            rate = lambda h: nb["rate_by_hour"][self.hour(h)] * nb["by_weekday"][self.weekday(h)]
            for t in self.poisson_times(rate, self.warm, self.t1):
                push(int(t), "session", name)
        # the Deployment's pods, three days before FROM
        ch = m["chat"]
        self.chat_rs = f"chat-{self.suffix(10)}"
        for _ in range(ch["replicas"]):
            push(self.t0 - 3 * 86400, "deploy", "chat")

        nodes = {n[0]: {"product": n[1], "free": list(range(n[2]))} for n in NODES}
        running_nb = set()

        def schedule(now):
            keep = []
            while pending:
                item = heapq.heappop(pending)
                p = item[2]
                for name, n in nodes.items():
                    if n["product"] == p.product and len(n["free"]) >= p.gpus:
                        p.node, p.scheduled = name, now
                        p.gpu_ids = [n["free"].pop(0) for _ in range(p.gpus)]
                        p.ip = self.ip()
                        if p.kind_end == "complete":
                            p.completion = now + p.run_s
                            push(p.completion, "free", p)
                            p.deleted = p.completion + p.ttl
                        elif p.kind_end == "cull":
                            p.deleted = now + p.run_s
                            push(p.deleted, "free", p)
                        break
                else:
                    keep.append(item)
            for item in keep:
                heapq.heappush(pending, item)

        def create(t, wl, name, owner_kind, owner_name, labels, run_s, end, ttl=0):
            spec = m[wl] if wl in m else m["notebooks"]
            p = Pod(workload=owner_name if spec["kind"] == "notebook" else wl, ns=spec["namespace"],
                    name=name, uid=self.uid(), owner_kind=owner_kind, owner_name=owner_name,
                    labels=labels, product=spec["node"], gpus=spec["gpus"], cpu=spec["cpu"],
                    memory=spec["memory"], container=spec["container"], created=t)
            p.kind_end, p.run_s, p.ttl = end, run_s, ttl
            p.failed = False
            self.pods.append(p)
            heapq.heappush(pending, (t, len(self.pods), p))
            return p

        while events:
            t, _, kind, x = heapq.heappop(events)
            if t >= self.t1:
                break
            if kind == "job":
                spec = m[x]
                if x == "finetune":
                    job = self.unique("finetune")
                    owner = ("<none>", "<none>")
                    ttl = spec["ttl_after_finished_s"]
                else:
                    job = f"nightly-eval-{t // 60}"
                    owner = ("CronJob", "nightly-eval")
                    ttl = spec["ttl_after_finished_s"]
                pod = self.unique(job)
                labels = {"job-name": job, "batch.kubernetes.io/job-name": job,
                          "controller-uid": "", "app": x}
                run = max(60, int(round(self.lognormal(spec["duration"]))))
                p = create(t, x, pod, "Job", job, labels, run, "complete", ttl)
                p.labels["controller-uid"] = p.uid  # as the Job's, near enough
                p.failed = x == "finetune" and self.rng.random() < spec["fail_probability"]
                p.job = (job, owner)
                if self.t0 <= t <= self.t1:
                    self.arrivals.setdefault(x, []).append(t)
            elif kind == "session":
                if x in running_nb:
                    self.dropped[x] = self.dropped.get(x, 0) + 1
                    continue
                running_nb.add(x)
                labels = {"notebook-name": x, "statefulset": x, "app": x,
                          "statefulset.kubernetes.io/pod-name": f"{x}-0"}
                run = max(60, int(round(self.lognormal(m["notebooks"]["duration"]))))
                create(t, x, f"{x}-0", "StatefulSet", x, labels, run, "cull")
                if self.t0 <= t <= self.t1:
                    self.arrivals.setdefault(x, []).append(t)
            elif kind == "deploy":
                pod = self.unique(self.chat_rs)
                labels = {"app": "chat", "pod-template-hash": self.chat_rs.split("-", 1)[1]}
                create(t, "chat", pod, "ReplicaSet", self.chat_rs, labels, 0, "never")
            elif kind == "free":
                n = nodes[x.node]
                n["free"] = sorted(n["free"] + x.gpu_ids)
                if x.kind_end == "cull":
                    running_nb.discard(x.owner_name)
            schedule(t)
        # clean the bookkeeping of pods that outlive TO
        for p in self.pods:
            if p.scheduled is not None and p.scheduled > self.t1:
                p.scheduled = None
            if p.completion is not None and p.completion > self.t1:
                p.completion = None
            if p.deleted is not None and p.deleted > self.t1:
                p.deleted = None

    # -- the observed rows (the twin's CSV, as an importer must derive it) ----------
    def grid(self):
        return range(self.t0, self.t1 + 1, self.a.interval)

    def seen(self, p):
        """First and last grid sample at which the pod existed, or None."""
        iv = self.a.interval
        lo = max(p.created, self.t0)
        first = self.t0 + -(-(lo - self.t0) // iv) * iv
        end = p.deleted if p.deleted is not None else self.t1 + 1  # exists on [created, deleted)
        if first >= end or first > self.t1:
            return None
        last = min(self.t1, self.t0 + (end - 1 - self.t0) // iv * iv)
        return first, last

    def rows(self):
        out = []
        for p in self.pods:
            s = self.seen(p)
            if s is None:
                continue
            first, last = s
            if p.completion is not None:
                fin, phase = p.completion, "Failed" if p.failed else "Succeeded"
            elif p.deleted is not None:
                fin, phase = last, "Deleted"
            else:
                fin, phase = None, "Running" if p.scheduled is not None else "Pending"
            out.append({"p": p, "first": first, "last": last, "finished": fin, "phase": phase})
        out.sort(key=lambda r: (r["p"].created, r["p"].name))
        return out

    def figures(self, rows):
        t0, t1 = self.t0, self.t1
        started = [r for r in rows if r["p"].scheduled is not None]
        q = sorted(r["p"].scheduled - r["p"].created for r in started if t0 <= r["p"].created <= t1)
        gh = 0.0
        ev = []
        for r in started:
            a = max(r["p"].scheduled, t0)
            b = min(r["finished"] if r["finished"] is not None else t1, t1)
            if b > a:
                gh += r["p"].gpus * (b - a) / 3600.0
            if r["finished"] is None or r["finished"] > t0:
                ev.append((a, r["p"].gpus))
                if r["finished"] is not None:
                    ev.append((r["finished"], -r["p"].gpus))
        ev.sort(key=lambda e: (e[0], e[1]))  # frees before starts at the same second
        cur = peak = 0
        for _, d in ev:
            cur += d
            peak = max(peak, cur)
        durs = [r["finished"] - r["p"].scheduled for r in started
                if r["finished"] is not None and r["p"].completion is not None]
        # what an importer sees of every pod that ended: finished - scheduled,
        # finished being the last sample for a pod deleted without completing
        ended = [r["finished"] - r["p"].scheduled for r in started if r["finished"] is not None]
        return {
            "pods": len(rows),
            "pods_started": len(started),
            "pods_created_in_period": sum(1 for r in rows if t0 <= r["p"].created <= t1),
            "pods_started_in_period": sum(1 for r in started if r["p"].scheduled >= t0),
            "queue_time_mean_s": sum(q) / len(q) if q else 0.0,
            "queue_time_p95_s": quantile(q, 0.95) if q else 0.0,
            "queued_pods": len(q),
            "gpu_hours": gh,
            "peak_allocated_gpus": peak,
            "completed_duration_mean_s": sum(durs) / len(durs) if durs else None,
            "completed_pods": len(durs),
            "ended_duration_mean_s": sum(ended) / len(ended) if ended else None,
            "ended_pods": len(ended),
        }

    # -- the series --------------------------------------------------------------
    def series(self):
        """Every series: (family, labels dict, first t, last t, value or fn(t))."""
        S = []
        tgt_ksm = {"job": "kube-state-metrics", "instance": "10.42.0.10:8080"}
        iv = self.a.interval

        def add(fam, labels, a, b, v):
            if a is None or b is None or a > b:
                return
            S.append((fam, {**labels, **tgt_ksm} if not fam.startswith(("DCGM", "vllm")) else labels, a, b, v))

        def first_at(t):  # the first grid sample at or after t
            t = max(t, self.t0)
            return self.t0 + -(-(t - self.t0) // iv) * iv

        for r in self.rows():
            p = r["p"]
            first, last = r["first"], r["last"]
            base = {"namespace": p.ns, "pod": p.name, "uid": p.uid}
            bound = first_at(p.scheduled) if p.scheduled is not None else None
            if bound is not None and bound > last:
                bound = None
            # pod_info and the container resources change their node label when bound
            spans = [("", "", first, (bound - iv) if bound is not None else last)]
            if bound is not None:
                spans.append((p.node, p.ip, bound, last))
            for node, ip, a, b in spans:
                add("kube_pod_info", {**base, "host_ip": "10.0.0.%d" % (1 + [n[0] for n in NODES].index(node)) if node else "",
                                      "pod_ip": ip, "node": node, "created_by_kind": p.owner_kind,
                                      "created_by_name": p.owner_name, "priority_class": "",
                                      "host_network": "false"}, a, b, 1)
                for fam, res in (("kube_pod_container_resource_requests", (("nvidia_com_gpu", "integer", p.gpus),
                                  ("cpu", "core", p.cpu), ("memory", "byte", p.memory))),
                                 ("kube_pod_container_resource_limits", (("nvidia_com_gpu", "integer", p.gpus),
                                  ("memory", "byte", p.memory)))):
                    for rname, unit, v in res:
                        add(fam, {**base, "container": p.container, "node": node, "resource": rname,
                                  "unit": unit}, a, b, v)
            add("kube_pod_created", base, first, last, p.created)
            add("kube_pod_owner", {**base, "owner_kind": p.owner_kind, "owner_name": p.owner_name,
                                   "owner_is_controller": "true"}, first, last, 1)
            add("kube_pod_labels", {**base, **{"label_" + "".join(c if c.isalnum() else "_" for c in k): v
                                               for k, v in sorted(p.labels.items())}}, first, last, 1)
            if bound is not None:
                add("kube_pod_status_scheduled_time", base, bound, last, p.scheduled)
                add("kube_pod_start_time", base, bound, last, p.scheduled)
            done = first_at(p.completion) if p.completion is not None else None
            if done is not None and done <= last:
                add("kube_pod_completion_time", base, done, last, p.completion)

            def phase_fn(pod):
                def f(t, ph):
                    if pod.scheduled is None or t < pod.scheduled:
                        cur = "Pending"
                    elif pod.completion is None or t < pod.completion:
                        cur = "Running"
                    else:
                        cur = "Failed" if pod.failed else "Succeeded"
                    return 1 if cur == ph else 0
                return f
            f = phase_fn(p)
            for ph in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
                add("kube_pod_status_phase", {**base, "phase": ph}, first, last,
                    (lambda f_, ph_: (lambda t: f_(t, ph_)))(f, ph))
            # DCGM: each GPU the pod holds, while it runs
            if bound is not None:
                run_end = (p.completion if p.completion is not None else (p.deleted if p.deleted is not None else self.t1 + 1))
                a, b = bound, min(last, self.t0 + (run_end - 1 - self.t0) // iv * iv)
                ni = [n[0] for n in NODES].index(p.node)
                nd = NODES[ni]
                for g in p.gpu_ids:
                    gl = {"gpu": str(g), "UUID": f"GPU-{ni:02x}{g:02x}0000-1111-2222-3333-444455556666",
                          "device": f"nvidia{g}", "modelName": nd[6], "Hostname": nd[0],
                          "DCGM_FI_DRIVER_VERSION": "550.90.07", "container": p.container,
                          "namespace": p.ns, "pod": p.name, "job": "dcgm-exporter",
                          "instance": f"10.0.0.{ni + 1}:9400"}
                    if p.workload == "chat":
                        add("DCGM_FI_PROF_GR_ENGINE_ACTIVE", gl, a, b, self.chat_busy)
                        add("DCGM_FI_PROF_SM_ACTIVE", gl, a, b, lambda t: round(self.chat_busy(t) * 0.8, 4))
                    else:
                        add("DCGM_FI_PROF_GR_ENGINE_ACTIVE", gl, a, b, p.busy)
                        add("DCGM_FI_PROF_SM_ACTIVE", gl, a, b, p.sm)
                    add("DCGM_FI_DEV_FB_USED", gl, a, b, p.fb)
        # Jobs, the CronJob, the ReplicaSet
        for p in self.pods:
            if p.job is None:
                continue
            s = self.seen(p)
            if s is None:
                continue
            job, (ok, on) = p.job
            add("kube_job_owner", {"namespace": p.ns, "job_name": job, "owner_kind": ok, "owner_name": on,
                                   "owner_is_controller": "true" if ok != "<none>" else "<none>"}, s[0], s[1], 1)
        add("kube_cronjob_info", {"namespace": "ml", "cronjob": "nightly-eval", "schedule": "0 22 * * *",
                                  "concurrency_policy": "Forbid"}, self.t0, self.t1, 1)
        add("kube_replicaset_owner", {"namespace": "serving", "replicaset": self.chat_rs,
                                      "owner_kind": "Deployment", "owner_name": "chat",
                                      "owner_is_controller": "true"}, self.t0, self.t1, 1)
        for i, (name, product, gpus, cpu, mem, fbmib, _) in enumerate(NODES):
            add("kube_node_labels", {"node": name, "label_kubernetes_io_hostname": name,
                                     "label_nvidia_com_gpu_product": product,
                                     "label_nvidia_com_gpu_count": str(gpus),
                                     "label_nvidia_com_gpu_memory": str(fbmib),
                                     "label_node_kubernetes_io_instance_type": "gpu-%d" % i}, self.t0, self.t1, 1)
            for rname, unit, v in (("nvidia_com_gpu", "integer", gpus), ("cpu", "core", cpu),
                                   ("memory", "byte", mem), ("pods", "integer", 110)):
                add("kube_node_status_allocatable", {"node": name, "resource": rname, "unit": unit},
                    self.t0, self.t1, v)
            add("kube_node_spec_taint", {"node": name, "key": "nvidia.com/gpu", "value": "present",
                                         "effect": "NoSchedule"}, self.t0, self.t1, 1)
        # vLLM counters, per chat pod
        for p in self.pods:
            if p.workload != "chat":
                continue
            lab = {"model_name": self.m["chat"]["model_name"], "namespace": p.ns, "pod": p.name,
                   "job": "vllm", "instance": f"{p.ip}:8000"}
            c = self.counters[p.name]
            for fam, key, extra in (("vllm:request_success_total", "stop", {"finished_reason": "stop"}),
                                    ("vllm:request_success_total", "length", {"finished_reason": "length"}),
                                    ("vllm:prompt_tokens_total", "prompt", {}),
                                    ("vllm:generation_tokens_total", "gen", {})):
                arr = c[key]
                add(fam, {**lab, **extra}, self.t0, self.t1,
                    (lambda arr_: (lambda t: arr_[(t - self.t0) // iv]))(arr))
        return S

    def dcgm_values(self):
        m = self.m
        for p in self.pods:
            spec = m["notebooks"] if p.workload not in m else m[p.workload]
            if p.workload == "chat":
                p.fb = spec["vram_mib"]
                continue
            p.busy = round(min(1.0, max(0.0, self.rng.gauss(spec["gpu_busy"], 0.02))), 4)
            p.sm = round(min(1.0, max(0.0, self.rng.gauss(spec["sm_share"], 0.02))), 4)
            p.fb = int(spec["vram_mib"] * self.rng.uniform(0.9, 1.0))

    def traffic(self):
        """vLLM requests: Poisson with a rate by hour, spread over the replicas;
        the counters' values at every grid sample (from the pods' start)."""
        rq = self.m["chat"]["requests"]
        chat = [p for p in self.pods if p.workload == "chat"]
        iv = self.a.interval
        n = (self.t1 - self.t0) // iv + 1
        self.counters = {}
        cum = {p.name: {"stop": 0, "length": 0, "prompt": 0, "gen": 0} for p in chat}
        arrays = {p.name: {k: [0] * n for k in ("stop", "length", "prompt", "gen")} for p in chat}
        pm, ps = rq["prompt_tokens"]["mean"], rq["prompt_tokens"]["sigma"]
        om, osg = rq["output_tokens"]["mean"], rq["output_tokens"]["sigma"]
        pmu, omu = lognormal_mu(pm, ps), lognormal_mu(om, osg)
        rng = self.rng
        start = min(p.scheduled for p in chat)
        self.req_hourly = [0] * 24
        self.req_total = 0
        self.tokens = [0, 0]
        k = 0  # next grid index
        for t in self.poisson_times(lambda h: rq["rate_by_hour_per_s"][self.hour(h)] * 3600, start, self.t1 + 1):
            while k < n and self.t0 + k * iv < t:
                for name in cum:
                    for key in cum[name]:
                        arrays[name][key][k] = cum[name][key]
                k += 1
            p = chat[int(rng.random() * len(chat))]
            c = cum[p.name]
            if rng.random() < rq["length_fraction"]:
                c["length"] += 1
            else:
                c["stop"] += 1
            pt = max(1, int(rng.lognormvariate(pmu, ps)))
            gt = max(1, int(rng.lognormvariate(omu, osg)))
            c["prompt"] += pt
            c["gen"] += gt
            if self.t0 < t <= self.t1:
                self.req_total += 1
                self.req_hourly[self.hour(int(t))] += 1
                self.tokens[0] += pt
                self.tokens[1] += gt
        while k < n:
            for name in cum:
                for key in cum[name]:
                    arrays[name][key][k] = cum[name][key]
            k += 1
        self.counters = arrays
        days = (self.t1 - self.t0) / 86400
        self.busy_by_hour = [min(0.95, 0.1 + r / 4.0) for r in rq["rate_by_hour_per_s"]]

    def chat_busy(self, t):
        return self.busy_by_hour[self.hour(t)]

    # -- output --------------------------------------------------------------------
    def write(self, out):
        os.makedirs(out, exist_ok=True)
        S = self.series()
        order = []
        fams = {}
        for s in S:
            if s[0] not in fams:
                fams[s[0]] = []
                order.append(s[0])
            fams[s[0]].append(s)
        iv = self.a.interval
        block = 7200
        w0 = self.t0 - self.t0 % block
        nfiles = 0
        lines_total = 0
        for w in range(w0, self.t1 + 1, block):
            lo, hi = max(w, self.t0), min(w + block - 1, self.t1)
            buf = io.StringIO()
            wr = buf.write
            for fam in order:
                name = fam[:-6] if fam.endswith("_total") else fam
                kind = "counter" if fam.endswith("_total") else "gauge"
                wr(f"# TYPE {name} {kind}\n")
                for _, labels, a, b, v in fams[fam]:
                    a2, b2 = max(a, lo), min(b, hi)
                    if a2 > b2:
                        continue
                    ls = ",".join(f'{k}="{val}"' for k, val in labels.items())
                    head = f"{fam}{{{ls}}} "
                    a2 = self.t0 + -(-(a2 - self.t0) // iv) * iv
                    if callable(v):
                        for t in range(a2, b2 + 1, iv):
                            wr(f"{head}{v(t)} {t}\n")
                            lines_total += 1
                    else:
                        for t in range(a2, b2 + 1, iv):
                            wr(f"{head}{v} {t}\n")
                            lines_total += 1
            wr("# EOF\n")
            with open(os.path.join(out, f"history-{nfiles:03d}.om"), "w") as f:
                f.write(buf.getvalue())
            nfiles += 1
        return nfiles, lines_total

    def truth(self, out):
        rows = self.rows()
        t0 = self.t0
        by = {}
        for r in rows:
            by.setdefault(r["p"].workload, []).append(r)
        days = (self.t1 - self.t0) / 86400
        m = self.m
        wl = {}
        for name, rs in sorted(by.items()):
            arr = self.arrivals.get(name, [])
            hourly = [0] * 24
            for t in arr:
                hourly[self.hour(t)] += 1
            entry = {"observed": self.figures(rs),
                     "arrivals_in_period": len(arr),
                     "arrival_rate_by_hour_observed": [c / days for c in hourly]}
            if name in m:
                spec = m[name]
                entry["kind"] = spec["kind"]
                entry["model"] = {k: v for k, v in spec.items() if k not in ("names",)}
            else:
                spec = m["notebooks"]
                entry["kind"] = "notebook"
                entry["model"] = {k: v for k, v in spec.items() if k not in ("names",)}
                entry["sessions_dropped_while_running"] = self.dropped.get(name, 0)
            if "rate_by_hour" in entry["model"]:
                wd = entry["model"].get("by_weekday", [1] * 7)
                # the expected arrivals per day over this period's weekdays
                per_day = [sum(entry["model"]["rate_by_hour"]) * wd[self.weekday(t0 + d * 86400)]
                           for d in range(int(round(days)))]
                entry["model"]["mean_rate_per_day"] = sum(per_day) / len(per_day)
                entry["model"]["mean_rate_per_hour"] = entry["model"]["mean_rate_per_day"] / 24
            wl[name] = entry
        ch = wl.get("chat")
        if ch is not None:
            ch["requests_observed"] = {
                "requests": self.req_total,
                "rate_by_hour_per_s": [c / days / 3600 for c in self.req_hourly],
                "prompt_tokens_mean": self.tokens[0] / max(1, self.req_total),
                "output_tokens_mean": self.tokens[1] / max(1, self.req_total),
            }
        truth = {
            "format": "gpuplan-history-truth/1",
            "generator": "tests/history/gen_week.py",
            "from": iso(self.t0), "to": iso(self.t1), "seed": self.a.seed, "days": self.a.days,
            "scale": self.a.scale, "interval_s": self.a.interval,
            "definitions": {
                "pods_started": "pods of the CSV with a scheduled time (also those bound before FROM)",
                "queue_time": "scheduled - created, over pods created in [FROM, TO] and scheduled by TO",
                "queue_time_p95_s": "linear interpolation at (n-1)*0.95 of the sorted queue times",
                "gpu_hours": "sum of gpus * (min(finished or TO, TO) - max(scheduled, FROM)) / 3600",
                "peak_allocated_gpus": "max over [FROM, TO] of the GPUs of pods between scheduled and finished",
                "finished": "completion time, else the last sample for a pod that vanished, else empty",
            },
            "cluster": [{"node": n[0], "product": n[1], "gpus": n[2], "cpu": n[3], "memory": n[4]}
                        for n in NODES],
            "workloads": wl,
            "all": {"observed": self.figures(rows)},
        }
        with open(os.path.join(out, "truth.json"), "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(out, "truth.pods.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["workload", "namespace", "pod", "node", "created_s", "scheduled_s", "finished_s",
                        "gpus", "cpu_milli", "memory_bytes", "phase"])
            for r in rows:
                p = r["p"]
                w.writerow([p.workload, p.ns, p.name, p.node or "", p.created - t0,
                            "" if p.scheduled is None else p.scheduled - t0,
                            "" if r["finished"] is None else r["finished"] - t0,
                            p.gpus, p.cpu * 1000, p.memory, r["phase"]])
        return truth


def model_twin(g, out):
    """The generating model written as a twin (model-twin.yaml beside
    truth.pods.csv): the cluster's three nodes as pools, each workload with
    the model's arrivals and durations, and the history it generated.  What
    `backtest` replays when the importer is not in the loop: its observed
    figures must be the generator's, and its replay must come close."""
    m = g.m
    fmt = lambda xs: "[" + ", ".join(f"{x:g}" for x in xs) + "]"
    pools = {"NVIDIA-H100-80GB-HBM3": ("h100", "H100-80GB"), "NVIDIA-A100-SXM4-40GB": ("a100", "A100-40GB"),
             "NVIDIA-L4": ("l4", "L4")}
    L = [f"# The model of tests/history/gen_week.py as a twin (seed {g.a.seed}, scale {g.a.scale:g}).",
         "name: generated-week", f"start: {iso(g.t0)}", f"horizon: {g.t1 - g.t0}s", "history:",
         f"  from: {iso(g.t0)}", f"  to: {iso(g.t1)}", "  pods: truth.pods.csv", "pools:"]
    for name, product, gpus, cpu, mem, _, _ in NODES:
        L.append(f"  - {{name: {pools[product][0]}, nodes: 1, gpu: {pools[product][1]}, gpus_per_node: {gpus}, "
                 f"cpu: {cpu}, memory: {mem // 2**30}GiB}}")
    L.append("workloads:")

    def common(spec):
        return (f"gpus: {spec['gpus']}, cpu: {spec['cpu']}, memory: {spec['memory'] // 2**30}GiB, "
                f"node_selector: {{nvidia.com/gpu.product: {spec['node']}}}")

    def dur(d):
        return f"{{dist: lognormal, mean: {d['mean_s']:g}s, sigma: {d['sigma']:g}}}"
    ft = m["finetune"]
    L.append(f"  - {{name: finetune, arrival: {{process: poisson, rate_by_hour: {fmt(ft['rate_by_hour'])}}}, "
             f"duration: {dur(ft['duration'])}, {common(ft)}}}")
    ev = m["nightly-eval"]
    L.append(f"  - {{name: nightly-eval, arrival: {{schedule: \"{ev['schedule']}\"}}, "
             f"duration: {dur(ev['duration'])}, {common(ev)}}}")
    nb = m["notebooks"]
    for name in nb["names"]:
        L.append(f"  - {{name: {name}, kind: service, arrival: {{process: poisson, rate_by_hour: "
                 f"{fmt(nb['rate_by_hour'])}, by_weekday: {fmt(nb['by_weekday'])}}}, "
                 f"duration: {dur(nb['duration'])}, {common(nb)}}}")
    ch = m["chat"]
    L.append(f"  - {{name: chat, kind: service, count: {ch['replicas']}, arrival: {{at: \"{iso(g.t0)}\"}}, "
             f"duration: {g.t1 - g.t0}s, {common(ch)}}}")
    with open(os.path.join(out, "model-twin.yaml"), "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for history-NNN.om, truth.json, truth.pods.csv, model-twin.yaml")
    ap.add_argument("--days", type=float, default=7, help="length of the period in days (7)")
    ap.add_argument("--start", default="2026-11-02T00:00:00Z", help="FROM, a UTC midnight (a Monday)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the finetune and notebook rates")
    ap.add_argument("--notebooks", type=int, default=6, help="how many notebooks (at most 8)")
    ap.add_argument("--interval", type=int, default=60, help="seconds between samples (60)")
    a = ap.parse_args()
    if a.start.endswith("Z") is False or parse_time(a.start) % 86400:
        ap.error("--start must be a UTC midnight, e.g. 2026-11-02T00:00:00Z")
    if not 1 <= a.notebooks <= len(NAMES) or a.interval < 15 or 60 % a.interval and a.interval % 60:
        ap.error("--notebooks 1..8, --interval a divisor or multiple of 60")
    g = Gen(a)
    g.simulate()
    g.dcgm_values()
    g.traffic()
    nfiles, lines = g.write(a.out)
    truth = g.truth(a.out)
    model_twin(g, a.out)
    al = truth["all"]["observed"]
    print(f"gen_week: {truth['from']}..{truth['to']}: {al['pods']} pods, {nfiles} files, {lines} samples, "
          f"{al['gpu_hours']:.1f} GPU-hours, peak {al['peak_allocated_gpus']} GPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
