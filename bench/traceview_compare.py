#!/usr/bin/env python3
"""Side by side: the trace view's API of two builds (sparktrace-traceview-bench), alternating.

Runs BASE and NEW `--rounds` times each, alternating which goes first, every run over a store of its
own (--traces small attempts, the 20,280-span attempt and the attempt of --calls one-call traces),
and writes the medians over the rounds of each build's per-run medians, with NEW/BASE ratios. Wall
times wander with the machine's other work; `cpu_ms` (the bench process's CPU time, one thread) is
the steadier figure on a shared machine.

  /usr/bin/python3 bench/traceview_compare.py --base /tmp/base/sparktrace-traceview-bench \\
      --new build/sparktrace-traceview-bench [--rounds 3] [--runs 3] [--traces 2000] [--calls 48000] \\
      [--out bench/results/traceview_large_attempts.json]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys


def run(binary, args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=3600, check=False)
    if out.returncode != 0:
        sys.exit(f"{binary} failed ({out.returncode}):\n{out.stderr[-4000:]}")
    return json.loads(out.stdout)


def flatten(prefix, value, into):
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(f"{prefix}.{key}" if prefix else key, inner, into)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        into[prefix] = value


PICKED = ("median_ms", "large_attempt", "calls_attempt", "attempt_answer", "write_seconds")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=48000)
    parser.add_argument("--out", default="bench/results/traceview_large_attempts.json")
    options = parser.parse_args()
    args = ["--traces", str(options.traces), "--calls", str(options.calls), "--runs", str(options.runs)]
    samples = {"base": [], "new": []}
    loads = []
    for index in range(options.rounds):
        order = ("base", "new") if index % 2 == 0 else ("new", "base")
        for which in order:
            binary = options.base if which == "base" else options.new
            figures = run(binary, args)
            flat = {}
            for key in PICKED:
                flatten(key, figures.get(key), flat)
            samples[which].append(flat)
            loads.append(os.getloadavg()[0])
            print(f"round {index + 1} {which}: calls api {flat.get('calls_attempt.api_ms')} ms "
                  f"(cpu {flat.get('calls_attempt.cpu_ms.api')}), large api {flat.get('large_attempt.api_ms')} ms "
                  f"(cpu {flat.get('large_attempt.cpu_ms.api')})", file=sys.stderr)
    medians = {}
    for which, runs in samples.items():
        keys = sorted(set().union(*runs))
        medians[which] = {key: round(statistics.median(r[key] for r in runs if key in r), 3) for key in keys}
    ratios = {}
    for key, new_value in medians["new"].items():
        base_value = medians["base"].get(key)
        if base_value and (key.endswith("_ms") or ".cpu_ms." in key or key.endswith("_bytes")):
            ratios[key] = round(new_value / base_value, 4)
    result = {
        "benchmark": "traceview_large_attempts",
        "schema": 1,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": {"base": options.base, "new": options.new, "rounds": options.rounds, "runs_per_round": options.runs,
                   "traces": options.traces, "calls": options.calls, "nproc": os.cpu_count(),
                   "load_average_1m": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
                   "notes": ["medians over the rounds of each run's medians; the builds alternate which goes first",
                             "*_ms are wall times, cpu_ms.* the bench process's CPU time (one thread)",
                             "http_cpu: building the answer + the admin server's ETag hash (when the handler "
                             "set none) + gzip; warm_http_cpu: a load after another viewer's (answer cache)",
                             "revalidate: a GET with If-None-Match of the answer's ETag (a 304 from the index "
                             "revision in NEW; the whole answer, then its hash, in BASE)"]},
        "medians": medians,
        "ratios_new_over_base": ratios,
    }
    os.makedirs(os.path.dirname(options.out) or ".", exist_ok=True)
    with open(options.out, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2)
        out.write("\n")
    print(json.dumps({"medians": medians, "ratios_new_over_base": ratios}, indent=2))


if __name__ == "__main__":
    main()
