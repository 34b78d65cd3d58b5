#!/usr/bin/env python3
"""Two sparktrace-store-bench binaries side by side on the SQLite store: a store change against the build before it.

Runs both binaries alternately (which goes first alternates by round), --rounds times per shape, each
run on a fresh SQLite file of --spans spans in the temp dir, so that both see the same background
load. Reports per shape the medians of spans/s, the writer's CPU µs/span and bytes/span on disk
(the file after the store closed), the ratios after/before, and whether after lies within noise of
before (bench/binary_compare.py's rule: inside the range of before's runs widened by their own
spread max/min).

    /usr/bin/python3 bench/store_compare.py --before OLD/build/sparktrace-store-bench \\
        --after build/sparktrace-store-bench --rounds 5 --output bench/results/store_step2.json
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from store_bench import SHAPE_FLAGS  # noqa: E402  (the bench's flags for each shape, as make bench runs them)

SHAPES = ("calls", "tasks", "long", "attempt", "app")


def run_once(binary, path, shape, spans):
    result = subprocess.run([binary, "--store", path, "--spans", str(spans)] + SHAPE_FLAGS[shape],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"{binary} {shape}: {result.stderr.strip()}")
    out = json.loads(result.stdout)
    if out["failed_batches"]:
        raise RuntimeError(f"{binary} {shape}: {out['failed_batches']} batches failed")
    out["bytes_per_span"] = os.path.getsize(path) / out["spans"]
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return out


def within_noise(before, after_median):
    spread = max(before) / min(before)
    return min(before) / spread <= after_median <= max(before) * spread, spread


def store_json_result(shape, spans, runs):
    """One entry of bench/results/store.json's "results", from one build's runs."""
    return {"backend": "sqlite", "writers": 1, "shape": shape, "spans_per_run": spans,
            "spans_per_s_median": statistics.median(r["spans_per_s"] for r in runs),
            "spans_per_s_runs": [round(r["spans_per_s"]) for r in runs],
            "client_cpu_us_per_span_median": statistics.median(r["cpu_us_per_span"] for r in runs),
            "bytes_per_span_median": statistics.median(r["bytes_per_span"] for r in runs)}


def summarise(name, runs):
    """One case's medians, ratios and noise verdicts; bench/store_compare_postgres.py uses it too."""
    case = {"case": name}
    for figure, key in (("spans_per_s", "spans_per_s"), ("client_cpu_us_per_span", "cpu_us_per_span"),
                        ("bytes_per_span", "bytes_per_span")):
        before = [r[key] for r in runs["before"]]
        after = [r[key] for r in runs["after"]]
        case[f"{figure}_before_median"] = round(statistics.median(before), 2)
        case[f"{figure}_after_median"] = round(statistics.median(after), 2)
        case[f"{figure}_ratio_after_over_before"] = round(statistics.median(after) / statistics.median(before), 3)
        case[f"{figure}_before_runs"] = [round(v, 2) for v in before]
        case[f"{figure}_after_runs"] = [round(v, 2) for v in after]
        if figure != "bytes_per_span":  # the file size is deterministic up to page rounding
            noise, spread = within_noise(before, statistics.median(after))
            case[f"{figure}_before_spread_max_over_min"] = round(spread, 3)
            case[f"{figure}_within_noise"] = noise
    return case


def print_cases(cases):
    for case in cases:
        print(f"{case['case']}: spans/s {case['spans_per_s_before_median']:,.0f} -> "
              f"{case['spans_per_s_after_median']:,.0f} ({case['spans_per_s_ratio_after_over_before']}x), "
              f"CPU us/span {case['client_cpu_us_per_span_before_median']} -> "
              f"{case['client_cpu_us_per_span_after_median']}, B/span {case['bytes_per_span_before_median']:.0f} -> "
              f"{case['bytes_per_span_after_median']:.0f}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the baseline's sparktrace-store-bench")
    parser.add_argument("--after", required=True, help="the change's sparktrace-store-bench")
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated, of " + ", ".join(SHAPES) + " (a build older than a shape cannot run it)")
    parser.add_argument("--output", required=True)
    parser.add_argument("--note", default="", help="what before and after are, for the JSON")
    parser.add_argument("--before-commit", default="", help="the baseline's commit, for the JSON")
    parser.add_argument("--after-commit", default="", help="the change's commit, for the JSON")
    args = parser.parse_args(argv)

    started = time.time()
    shapes = args.shapes.split(",")
    if unknown := [shape for shape in shapes if shape not in SHAPES]:
        parser.error(f"--shapes: unknown {', '.join(unknown)}")
    runs = {shape: {"before": [], "after": []} for shape in shapes}
    with tempfile.TemporaryDirectory(prefix="sparktrace-store-compare-") as tmp:
        for round_number in range(args.rounds):
            order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
            for shape in shapes:
                for which in order:
                    binary = args.before if which == "before" else args.after
                    out = run_once(binary, os.path.join(tmp, f"{which}-{shape}.db"), shape, args.spans)
                    runs[shape][which].append(out)
                    print(f"round {round_number + 1} {shape:5} {which:6} {out['spans_per_s']:>9,.0f} spans/s "
                          f"{out['cpu_us_per_span']:6.2f} us CPU/span {out['bytes_per_span']:7.0f} B/span", flush=True)

    document = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "what": args.note,
        "method": f"{args.rounds} rounds; in each, per shape, one run of each build on a fresh SQLite file of "
                  f"{args.spans} spans (batches of 512), alternating which goes first; medians over the rounds; "
                  "within noise: the after median inside the range of before's runs widened by before's own "
                  "spread (max/min), the rule of bench/binary_compare.py",
        # store.json's shape: "results" are the change's figures, "baseline" the build before it.
        "config": {"rounds": args.rounds, "spans_per_run": args.spans, "batch": 512},
        "results": [store_json_result(shape, args.spans, runs[shape]["after"]) for shape in shapes],
        "baseline": {"commit": args.before_commit, "binary": args.before,
                     "results": [store_json_result(shape, args.spans, runs[shape]["before"]) for shape in shapes]},
        "after": {"commit": args.after_commit, "binary": args.after},
        "cases": [summarise(f"sqlite writers=1 {shape}", runs[shape]) for shape in shapes],
        "environment": {"cpus": os.cpu_count(), "load_average_after": [round(x, 2) for x in os.getloadavg()]},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print_cases(document["cases"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
