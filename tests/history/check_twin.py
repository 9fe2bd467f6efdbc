#!/usr/bin/env python3
"""tests/history/check_twin.py [--backtest-only] TWIN.yaml TRUTH_DIR [BACKTEST.db] - the targets
of issue 37 on the generated week, for the twin that `gpuplan import
--history` wrote and the backtest it ran:

- the learned arrival rate (the mean of rate_by_hour times the period's
  by_weekday factors, per day) is within 10% of the generating model's for
  workloads the model drives directly (finetune, and chat's requests per
  second); for a notebook, whose starts the model thins (a session cannot
  start while one runs), within 10% of the starts the generator recorded;
- the learned mean duration is within 10% of the model's for workloads with
  more than 30 completed pods, and of the recorded mean of the others'
  (a notebook's 20 sessions of sigma 0.8 spread 20% about the model's mean);
- the backtest's observed figures equal the generator's (truth.json, section
  4 of the twin contract: 0.1% or 1 s);
- queue p95 within 20% or 5 minutes for workloads of more than 30 pods, and
  GPU-hours within 5%, simulated against observed.

--backtest-only checks the backtest alone (of the generator's own
model-twin.yaml, say).  Reads the YAML with PyYAML where it is installed, else a small reader of the
flow and block forms the importer writes.  Exits 1 on a miss.
"""

import json
import math
import os
import re
import sqlite3
import sys

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("check_twin: FAIL: " + msg)


def ok(msg):
    print("check_twin: ok: " + msg)


def load_yaml(path):
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def any_tag(loader, suffix, node):  # !placeholder and friends: the value as written
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_mapping(node, deep=True)

    Loader.add_multi_constructor("!", any_tag)
    with open(path) as f:
        return yaml.load(f, Loader=Loader)


UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def seconds(v):
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    total, pos = 0.0, 0
    for m in re.finditer(r"([0-9.]+)\s*(ms|min|s|m|h|d)?", s):
        total += float(m.group(1)) * UNITS[m.group(2) or "s"]
        pos = m.end()
    if pos != len(s):
        raise ValueError(f"not a duration: {v!r}")
    return total


def per_unit(v, unit):
    """A rate as the importer may write it: a number, or '3/h', '0.5/m', '2/s'."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*/\s*(s|m|h|d)\s*", str(v))
    if not m:
        return float(v)
    return float(m.group(1)) / UNITS[m.group(2)] * UNITS[unit]


def mean_duration(d):
    if isinstance(d, dict):
        if d.get("dist") == "empirical":
            vals = [seconds(x) for x in d["values"]]
            return sum(vals) / len(vals)
        return seconds(d["mean"])
    return seconds(d)


def daily_rate(arrival, unit, weekdays):
    rates = [per_unit(r, unit) for r in arrival["rate_by_hour"]]
    wd = arrival.get("by_weekday") or [1] * 7
    f = sum(float(wd[d]) for d in weekdays) / len(weekdays)
    return sum(rates) / 24 * f


def close(got, want, rel):
    return abs(got - want) <= rel * abs(want)


def main():
    args = [a for a in sys.argv[1:] if a != "--backtest-only"]
    backtest_only = len(args) < len(sys.argv) - 1
    twin_path, tdir = args[0], args[1]
    db = args[2] if len(args) > 2 else None
    with open(os.path.join(tdir, "truth.json")) as f:
        truth = json.load(f)
    twin = {"workloads": []} if backtest_only else load_yaml(twin_path)
    days = truth["days"]
    import datetime as dt
    t0 = dt.datetime.strptime(truth["from"], "%Y-%m-%dT%H:%M:%SZ")
    weekdays = [(t0 + dt.timedelta(days=i)).weekday() for i in range(int(round(days)))]
    wls = {w["name"]: w for w in twin.get("workloads", [])}
    for name, tw in sorted(truth["workloads"].items()):
        if backtest_only:
            break
        w = wls.get(name)
        if w is None:
            fail(f"workload {name} ({tw['observed']['pods']} pods) is not in the twin")
            continue
        model, obs = tw["model"], tw["observed"]
        arr = w.get("arrival")
        if tw["kind"] in ("job", "notebook") and isinstance(arr, dict) and "rate_by_hour" in arr:
            got = daily_rate(arr, "h", weekdays)
            want = model["mean_rate_per_day"] / 24 if tw["kind"] == "job" else tw["arrivals_in_period"] / days / 24
            what = "the model" if tw["kind"] == "job" else "the recorded starts"
            (ok if close(got, want, 0.10) else fail)(
                f"{name}: learned {got:.4f}/h arrivals, {what} {want:.4f}/h (within 10%)")
        elif tw["kind"] == "cronjob":
            sched = isinstance(arr, dict) and str(arr.get("schedule", "")).split() == model["schedule"].split()
            (ok if sched else fail)(f"{name}: arrival {arr!r}, the CronJob's schedule {model['schedule']!r}")
        elif tw["kind"] in ("job", "notebook"):
            fail(f"{name}: arrival {arr!r} has no rate_by_hour")
        if tw["kind"] == "deployment":
            req = w.get("requests") or {}
            if "rate_by_hour" in req:
                got = daily_rate(req, "s", weekdays)
                want = sum(model["requests"]["rate_by_hour_per_s"]) / 24
                (ok if close(got, want, 0.10) else fail)(
                    f"{name}: learned {got:.3f} requests/s, the model {want:.3f}/s (within 10%)")
            else:
                fail(f"{name}: no learned request rate_by_hour ({req!r})")
        if tw["kind"] != "deployment" and "duration" in w:
            got = mean_duration(w["duration"])
            n = obs["completed_pods"] if tw["kind"] != "notebook" else obs["ended_pods"]
            if tw["kind"] != "notebook" and n > 30:
                want, what = model["duration"]["mean_s"], "the model"
            elif tw["kind"] != "notebook":
                want, what = obs["completed_duration_mean_s"], "the recorded mean"
            else:  # a notebook's sessions end when culled: last seen - scheduled
                want, what = obs["ended_duration_mean_s"], "the recorded mean session"
            if want is not None:
                (ok if close(got, want, 0.10) else fail)(
                    f"{name}: learned mean duration {got:.0f} s, {what} {want:.0f} s (within 10%)")
    if not db or not os.path.exists(db):
        print("check_twin: skipped: no backtest database")
        sys.exit(1 if fails else 0)
    con = sqlite3.connect(db)
    run = con.execute("SELECT max(run_id) FROM backtest").fetchone()[0]
    bt = {}
    for scope, metric, o, s in con.execute(
            "SELECT scope, metric, observed, simulated FROM backtest WHERE run_id = ?", (run,)):
        bt[(scope, metric)] = (o, s)
    scopes = [("all", truth["all"]["observed"])] + [(k, v["observed"]) for k, v in sorted(truth["workloads"].items())]
    metrics = ["pods_started", "queue_time_mean_s", "queue_time_p95_s", "gpu_hours", "peak_allocated_gpus"]
    equal = 0
    for scope, obs in scopes:
        for m in metrics:
            if (scope, m) not in bt:
                fail(f"backtest: no {scope} {m}")
                continue
            o, s = bt[(scope, m)]
            want = obs[m]
            if m.startswith("queue") and obs["queued_pods"] == 0:
                want = None  # no pod created in the period: no queue time (NULL)
            tol = 1.0 if m.startswith("queue") else 1e-3 * max(1.0, abs(want or 0))
            if (o is None) != (want is None) or (o is not None and abs(o - want) > tol):
                fail(f"backtest: {scope} {m} observed {o}, the generator recorded {want}")
            else:
                equal += 1
        big = obs["pods"] > 30
        if big or scope == "all":
            o, s = bt.get((scope, "queue_time_p95_s"), (None, None))
            if o is not None and s is not None:
                (ok if abs(s - o) <= max(0.2 * o, 300) else fail)(
                    f"backtest: {scope} queue p95 simulated {s:.0f} s, observed {o:.0f} s (20% or 5 min)")
        o, s = bt.get((scope, "gpu_hours"), (None, None))
        if o is not None and s is not None and o > 0:
            (ok if close(s, o, 0.05) else fail)(
                f"backtest: {scope} GPU-hours simulated {s:.1f}, observed {o:.1f} (5%)")
    ok(f"backtest: {equal} observed figures equal the generator's")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
