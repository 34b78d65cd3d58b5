#!/usr/bin/env python3
"""Several sparktrace-listener-parse-bench binaries side by side on the same corpus.

Runs each binary in turn, round after round (so that every binary sees the same background load),
each run with `--include-compressed --runs R --passes 1` (the binary alternates its own contenders
inside a run). A binary's figure for a contender is the median over rounds of its CPU MB/s median.
Each contender is also set against the reference binary's contender of the same name without
"_sql" (issue 31's budget: the SQL parser against the parser before SQL metrics).

    /usr/bin/python3 bench/listener_parse_compare.py --reference before=OLD/sparktrace-listener-parse-bench \\
        --binary main=MAIN/sparktrace-listener-parse-bench --binary now=build/sparktrace-listener-parse-bench \\
        --rounds 5 --output bench/results/listener_parse_sql_budget.json

Binaries without `--only` (older than the SQL contenders) run all their contenders.
Exit status: 0 when every run completed, 2 when one failed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CONTENDERS = ["sparktrace_in_place", "sparktrace_in_place_sql", "sparktrace_parse_correlate",
              "sparktrace_parse_correlate_sql"]


def run_once(path, runs, env):
    base = [path, "--include-compressed", "--runs", str(runs), "--passes", "1"]
    only = subprocess.run(base + ["--only", ",".join(CONTENDERS)], capture_output=True, text=True, env=env)
    if only.returncode == 0:
        return json.loads(only.stdout)
    # A binary that predates the SQL contenders and --only: all of its contenders.
    whole = subprocess.run(base, capture_output=True, text=True, env=env)
    if whole.returncode != 0:
        return None
    return json.loads(whole.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", required=True, help="NAME=PATH of the binary the others are set against")
    parser.add_argument("--binary", action="append", default=[], help="NAME=PATH, repeatable")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3, help="--runs of each binary's run")
    parser.add_argument("--data-dir", default=os.environ.get("SPARKTRACE_DATA_DIR", ""))
    parser.add_argument("--output")
    args = parser.parse_args()

    binaries = [tuple(spec.split("=", 1)) for spec in [args.reference] + args.binary]
    reference = binaries[0][0]
    env = dict(os.environ)
    if args.data_dir:
        env["SPARKTRACE_DATA_DIR"] = args.data_dir
    rounds = {name: {} for name, _ in binaries}
    failed = False
    for round_index in range(args.rounds):
        for name, path in binaries:
            report = run_once(path, args.runs, env)
            if report is None:
                print(f"round {round_index + 1}: {name} failed", file=sys.stderr)
                failed = True
                continue
            for contender, figures in report["results"].items():
                if contender in CONTENDERS:
                    rounds[name].setdefault(contender, []).append(round(figures["cpu_mb_per_s_median"], 1))

    results = {}
    for name, _ in binaries:
        results[name] = {}
        for contender, values in rounds[name].items():
            entry = {"cpu_mb_per_s_median_of_rounds": statistics.median(values), "rounds": values}
            reference_name = contender.removesuffix("_sql")
            reference_values = rounds[reference].get(reference_name)
            if reference_values:
                entry[f"vs_{reference}_{reference_name}"] = round(
                    statistics.median(values) / statistics.median(reference_values), 3)
            results[name][contender] = entry
    output = {"benchmark": "listener_parse side by side", "runs_per_round": args.runs, "rounds": args.rounds,
              "binaries": dict(binaries), "reference": reference, "results": results}
    text = json.dumps(output, indent=2)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
