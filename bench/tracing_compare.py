#!/usr/bin/env python3
"""Two sparktrace builds side by side on what tracing costs: bench/tracing_bench.py, alternating.

Runs bench/tracing_bench.py (--skip-otlp) with the baseline's sparktrace and the change's, one after
the other, --runs times each (base, new, base, new, ...), on the same machine and loopback, both with
the same load generator (the change's: the client stays the same, only the proxy differs). The
figure is what tracing adds to the proxy's CPU per call: each run pairs its own off and traced legs
round by round (same round, same machine state), as tracing_bench.py's "added" does. For each
workload and traced leg it writes both builds' per-run medians and every round, the median of the
rounds, and new/base; and every run's checks (0 spans dropped, every span in the store).

    /usr/bin/python3 bench/tracing_compare.py --base OLD/build --new build --runs 2 --rounds 3 \\
        --output bench/results/tracing_side_by_side_49.json

A build directory holds sparktrace and sparktrace-loadgen. Exit status: 0 when every run completed
(whatever the figures and checks say), 2 when a run failed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURE = "proxy_cpu_us_per_call"


def run_bench(build, loadgen, rounds, output):
    command = [sys.executable, os.path.join(REPO, "bench", "tracing_bench.py"), "--skip-otlp",
               "--rounds", str(rounds), "--sparktrace-bin", os.path.join(build, "sparktrace"),
               "--loadgen-bin", loadgen, "--output", output]
    print("+", " ".join(command), flush=True)
    if subprocess.run(command, check=False).returncode != 0:
        return None
    with open(output) as f:
        return json.load(f)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the baseline's build directory")
    parser.add_argument("--new", required=True, help="the change's build directory")
    parser.add_argument("--runs", type=int, default=2, help="runs of each build")
    parser.add_argument("--rounds", type=int, default=3, help="tracing_bench.py rounds a run")
    parser.add_argument("--output", required=True)
    parser.add_argument("--base-commit", default="")
    parser.add_argument("--new-commit", default="")
    parser.add_argument("--note", default="", help="what base and new are, for the JSON")
    args = parser.parse_args(argv)
    loadgen = os.path.join(args.new, "sparktrace-loadgen")

    started = time.time()
    runs = {"base": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="sparktrace-tracing-compare-") as tmp:
        for i in range(args.runs):
            for label in ("base", "new"):
                out = run_bench(getattr(args, label), loadgen, args.rounds, os.path.join(tmp, f"{label}{i}.json"))
                if out is None:
                    print(f"tracing_compare: the {label} run {i + 1} failed", file=sys.stderr)
                    return 2
                runs[label].append(out)

    cases = {}
    for workload, legs in runs["new"][0]["added"].items():
        for leg, figures in legs.items():
            if FIGURE not in figures:
                continue
            case = {}
            for label in ("base", "new"):
                run_medians = [r["added"][workload][leg][FIGURE] for r in runs[label]]
                rounds = [x for r in runs[label] for x in r["added"][workload][leg][f"{FIGURE}_rounds"]]
                case[label] = {"run_medians_us": [round(m, 2) for m in run_medians], "rounds_us": rounds,
                               "median_of_rounds_us": round(statistics.median(rounds), 2)}
            base = case["base"]["median_of_rounds_us"]
            case["ratio_new_over_base"] = round(case["new"]["median_of_rounds_us"] / base, 3) if base else None
            cases[f"{workload} {leg}"] = case
            print(f"{workload:12} {leg:16} base {base:7.1f} us  new {case['new']['median_of_rounds_us']:7.1f} us"
                  f"  new/base {case['ratio_new_over_base']}", flush=True)
    checks = {f"{label}{i + 1}": [f"{c['leg']} {c['name']}: {'ok' if c['ok'] else 'FAILED'}: {c['detail']}"
                                  for c in run["checks"]]
              for label in ("base", "new") for i, run in enumerate(runs[label])}
    document = {
        "schema": 1,
        "what": args.note or "bench/tracing_bench.py --skip-otlp, two builds side by side",
        "method": (f"bench/tracing_compare.py: bench/tracing_bench.py --skip-otlp --rounds {args.rounds}, "
                   f"{2 * args.runs} runs one after the other (base, new, ...), the change's load generator "
                   "for both. The figure is each run's own traced-minus-off proxy CPU per call, paired "
                   "round by round; per build, its runs' medians, every round and their median."),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "base_commit": args.base_commit,
        "new_commit": args.new_commit,
        "cases": cases,
        "checks": checks,
        "environment": runs["new"][0].get("environment"),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
