#!/usr/bin/env python3
"""Clean twins of real event logs: the same log with one stage's parallelism problem taken away.

A twin keeps every event of its source log (a plain file or a rolling eventlog_v2_* directory) but for one
stage attempt, rewritten one of two ways, and for the events after that stage, moved earlier by the time the
rewrite saved:

* split: the stage's work in ceil(bytes / partition_mib) tasks of equal bytes and equal task time (the total
  task time is kept), placed in waves on the task slots of the executors alive when the stage started — the
  log as it would be after the recipe's repartition(n);
* shrink: the stage keeps its tasks, but each moves `task_mib` and its task time shrinks in proportion — the
  same shape with small tasks.

Task metrics of the new tasks are the source tasks' metrics averaged (split) or scaled (shrink), numeric
leaf by leaf; their per-task SQL accumulables are dropped (the stage's totals are unchanged). Used by
diagnose_eval.py (real_logs.json "twins"): a twin must not raise the finding its source is labelled with.

Python 3 standard library only. Usage: real_log_twins.py SOURCE OUT_FILE --stage N (--split-mib M | --shrink-mib M)
"""

import argparse
import copy
import glob
import heapq
import json
import math
import os
import sys

MiB = 1 << 20
TIME_KEYS = ("Timestamp", "Completion Time", "Submission Time", "time", "eventTime", "Launch Time", "Finish Time")


def read_events(source):
    """The JSON events of a plain log file or of a rolling eventlog_v2_* directory (events_<n>_* in order)."""
    if os.path.isdir(source):
        def index(path):
            return int(os.path.basename(path).split("_")[1])
        files = sorted(glob.glob(os.path.join(source, "events_*")), key=index)
    else:
        files = [source]
    events = []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            events.extend(json.loads(line) for line in handle if line.strip())
    return events


def scaled(value, factor):
    """Every number in a metrics tree times `factor` (integers stay integers)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(round(value * factor))
    if isinstance(value, float):
        return value * factor
    if isinstance(value, dict):
        return {key: scaled(item, factor) for key, item in value.items()}
    if isinstance(value, list):
        return [scaled(item, factor) for item in value]
    return value


def summed(trees):
    """The leaf-by-leaf sum of metrics trees of the same shape."""
    first = trees[0]
    if isinstance(first, bool) or not isinstance(first, (int, float, dict, list)):
        return first
    if isinstance(first, (int, float)):
        return sum(tree for tree in trees)
    if isinstance(first, dict):
        return {key: summed([tree[key] for tree in trees]) for key in first}
    return [summed([tree[i] for tree in trees]) for i in range(len(first))]


def moved_bytes(metrics):
    """What one task moved, as low-parallelism counts it: input + shuffle read, output or shuffle write."""
    shuffle_read = metrics["Shuffle Read Metrics"]
    read = metrics["Input Metrics"]["Bytes Read"] + shuffle_read["Remote Bytes Read"] + shuffle_read["Local Bytes Read"]
    return max(read, metrics["Output Metrics"]["Bytes Written"],
               metrics["Shuffle Write Metrics"]["Shuffle Bytes Written"])


def slots_at(events, at_ms):
    """[executor id] per task slot of the executors alive at `at_ms` (one entry per core)."""
    alive = {}
    for event in events:
        if event["Event"] == "SparkListenerExecutorAdded" and event["Timestamp"] <= at_ms:
            alive[event["Executor ID"]] = (event["Executor Info"]["Host"], event["Executor Info"]["Total Cores"])
        elif event["Event"] == "SparkListenerExecutorRemoved" and event["Timestamp"] <= at_ms:
            alive.pop(event["Executor ID"], None)
    return [(executor, host) for executor, (host, cores) in sorted(alive.items()) for _ in range(cores)]


def rewrite_tasks(events, stage, split_mib=None, shrink_mib=None):
    """The stage's new TaskEnd events and how much earlier the stage ends."""
    ends = [e for e in events if e["Event"] == "SparkListenerTaskEnd" and e["Stage ID"] == stage]
    if not ends:
        raise ValueError(f"stage {stage} has no TaskEnd events")
    durations = [e["Task Info"]["Finish Time"] - e["Task Info"]["Launch Time"] for e in ends]
    start = min(e["Task Info"]["Launch Time"] for e in ends)
    old_end = max(e["Task Info"]["Finish Time"] for e in ends)
    total_bytes = sum(moved_bytes(e["Task Metrics"]) for e in ends)
    next_id = max(e["Task Info"]["Task ID"] for e in events if e["Event"] == "SparkListenerTaskEnd") + 1
    new = []
    if split_mib is not None:
        count = max(len(ends), math.ceil(total_bytes / (split_mib * MiB)))
        metrics = scaled(summed([e["Task Metrics"] for e in ends]), 1.0 / count)
        duration = sum(durations) / count
        slots = [(start, i, executor, host) for i, (executor, host) in enumerate(slots_at(events, start))]
        heapq.heapify(slots)
        for index in range(count):
            free, order, executor, host = heapq.heappop(slots)
            event = copy.deepcopy(ends[0])
            info = event["Task Info"]
            info.update({"Task ID": next_id + index, "Index": index, "Partition ID": index, "Attempt": 0,
                         "Launch Time": int(free), "Finish Time": int(free + duration), "Executor ID": executor,
                         "Host": host, "Accumulables": []})
            event["Task Metrics"] = metrics
            new.append(event)
            heapq.heappush(slots, (free + duration + 2, order, executor, host))
    else:
        for event, duration in zip(ends, durations):
            factor = shrink_mib * MiB / max(1, moved_bytes(event["Task Metrics"]))
            event = copy.deepcopy(event)
            info = event["Task Info"]
            info["Finish Time"] = info["Launch Time"] + int(duration * factor)
            info["Accumulables"] = []
            event["Task Metrics"] = scaled(event["Task Metrics"], factor)
            new.append(event)
    new.sort(key=lambda e: e["Task Info"]["Finish Time"])
    new_end = max(e["Task Info"]["Finish Time"] for e in new)
    return new, old_end - new_end


def shift(event, delta_ms):
    for key in TIME_KEYS:
        if isinstance(event.get(key), int):
            event[key] -= delta_ms
    info = event.get("Stage Info")
    if isinstance(info, dict) and isinstance(info.get("Completion Time"), int):
        info["Completion Time"] -= delta_ms


def make_twin(source, stage, split_mib=None, shrink_mib=None):
    events = read_events(source)
    new_tasks, saved_ms = rewrite_tasks(events, stage, split_mib, shrink_mib)
    positions = [i for i, e in enumerate(events) if e["Event"] == "SparkListenerTaskEnd" and e["Stage ID"] == stage]
    old_count = len(positions)
    out = []
    for position, event in enumerate(events):
        kind = event["Event"]
        if kind in ("SparkListenerTaskStart", "SparkListenerTaskEnd") and event["Stage ID"] == stage:
            if position == positions[0]:
                out.extend(new_tasks)
            continue
        event = copy.deepcopy(event)
        infos = [event["Stage Info"]] if isinstance(event.get("Stage Info"), dict) else event.get("Stage Infos", [])
        for info in infos:
            if info.get("Stage ID") != stage:
                continue
            info["Number of Tasks"] = len(new_tasks)
            for rdd in info.get("RDD Info", []):
                if rdd.get("Number of Partitions") == old_count:
                    rdd["Number of Partitions"] = len(new_tasks)
        if position > positions[-1]:  # logged after the stage's last task: it happened that much sooner
            shift(event, saved_ms)
        out.append(event)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("out_file")
    parser.add_argument("--stage", type=int, required=True)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--split-mib", type=float, help="split the stage into partitions of this many MiB")
    group.add_argument("--shrink-mib", type=float, help="keep the tasks, each moving this many MiB")
    args = parser.parse_args()
    events = make_twin(args.source, args.stage, args.split_mib, args.shrink_mib)
    os.makedirs(os.path.dirname(os.path.abspath(args.out_file)), exist_ok=True)
    with open(args.out_file, "w", encoding="utf-8") as handle:
        for event in events:
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
