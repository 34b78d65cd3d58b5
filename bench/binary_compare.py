#!/usr/bin/env python3
"""Two sparktrace binaries side by side: is a refactor's proxy within noise of the build before it?

Runs bench/proxy_bench.py (direct and sparktrace legs) alternately with binary A (the baseline) and
binary B, N times each, on the same machine and loopback, so that both see the same background load.
Each run's figures are taken as ratios to that run's own direct leg (throughput, calls/s) or as the
proxy's added latency and CPU, which cancels most of what the machine does between runs. For each
figure it reports both binaries' medians, B/A, and A's own run-to-run spread (max/min over its runs):
B is "within noise" of A when B's median lies inside the range of A's runs widened by that spread.

    /usr/bin/python3 bench/binary_compare.py --a OLD/sparktrace --b build/sparktrace --runs 6 \\
        --output bench/results/proxy-house.json

Exit status: 0 when every run completed (whatever the verdicts), 2 when a run failed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# figure -> (workload, how it is read from one proxy_bench result, higher is better)
FIGURES = {
    "unary_c1_calls_vs_direct": ("unary_c1", lambda m: m["sparktrace"]["calls_per_s"] / m["direct"]["calls_per_s"], True),
    "unary_c1_added_p50_us": ("unary_c1", lambda m: m["sparktrace"]["p50_us"] - m["direct"]["p50_us"], False),
    "unary_c1_proxy_cpu_us_per_call": ("unary_c1", lambda m: m["sparktrace"]["proxy_cpu_us_per_call"], False),
    "unary_c16_calls_vs_direct": ("unary_c16", lambda m: m["sparktrace"]["calls_per_s"] / m["direct"]["calls_per_s"], True),
    "unary_c16_added_p50_us": ("unary_c16", lambda m: m["sparktrace"]["p50_us"] - m["direct"]["p50_us"], False),
    "unary_c16_proxy_cpu_us_per_call": ("unary_c16", lambda m: m["sparktrace"]["proxy_cpu_us_per_call"], False),
    "stream_4m_throughput_vs_direct": ("stream_4m", lambda m: m["sparktrace"]["bytes_per_s"] / m["direct"]["bytes_per_s"], True),
    "stream_4m_proxy_cpu_s_per_gb": ("stream_4m", lambda m: m["sparktrace"]["proxy_cpu_s_per_gb"], False),
    "stream_64k_throughput_vs_direct": ("stream_64k", lambda m: m["sparktrace"]["bytes_per_s"] / m["direct"]["bytes_per_s"], True),
    "stream_64k_proxy_cpu_s_per_gb": ("stream_64k", lambda m: m["sparktrace"]["proxy_cpu_s_per_gb"], False),
    "idle_rss_mib_with_streams": ("idle", lambda m: m["sparktrace"]["rss_kib"] / 1024, False),
    # The same process before its streams opened, and what the 1000 streams themselves hold: a binary
    # that maps more libraries or starts more threads moves the first, the relay's per-stream state
    # the second.
    "idle_rss_mib_before_streams": ("idle", lambda m: m["sparktrace"]["rss_before_kib"] / 1024, False),
    "idle_rss_mib_of_the_streams": (
        "idle", lambda m: (m["sparktrace"]["rss_kib"] - m["sparktrace"]["rss_before_kib"]) / 1024, False),
    "fresh_rss_mib_before_streams": ("idle_fresh", lambda m: m["sparktrace"]["rss_before_kib"] / 1024, False),
}


def run_once(binary, loadgen, quick, rounds, scratch, index):
    out = os.path.join(scratch, f"run-{index}.json")
    command = [sys.executable, os.path.join(REPO, "bench", "proxy_bench.py"), "--skip-nginx",
               "--sparktrace-bin", binary, "--loadgen-bin", loadgen, "--output", out]
    command += ["--quick"] if quick else []
    command += ["--rounds", str(rounds)] if rounds else []
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"proxy_bench.py failed ({done.returncode}): {done.stderr[-2000:]}")
    with open(out) as f:
        return json.load(f)


def figures_of(result):
    figures = {}
    for name, (workload, read, _higher) in FIGURES.items():
        try:
            figures[name] = read(result["medians"][workload])
        except (KeyError, TypeError, ZeroDivisionError):
            figures[name] = None
    return figures


def compare(runs_a, runs_b):
    """{figure: {a_median, b_median, b_over_a, a_spread, a_range, within_noise, better}} over the runs."""
    table = {}
    for name, (_workload, _read, higher) in FIGURES.items():
        a = [r[name] for r in runs_a if r[name] is not None]
        b = [r[name] for r in runs_b if r[name] is not None]
        if not a or not b:
            table[name] = {"a_runs": a, "b_runs": b, "within_noise": None}
            continue
        a_median, b_median = statistics.median(a), statistics.median(b)
        low, high = min(a), max(a)
        # A's own spread, as a factor; the range of A's runs widened by it on both sides is noise.
        spread = high / low if low > 0 else float("inf")
        within = (low / spread <= b_median <= high * spread) if low > 0 else (low <= b_median <= high)
        table[name] = {
            "a_median": a_median, "b_median": b_median,
            "b_over_a": b_median / a_median if a_median else None,
            "a_spread": spread, "a_range": [low, high], "within_noise": within,
            "higher_is_better": higher, "a_runs": a, "b_runs": b,
        }
    return table


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="the baseline sparktrace binary")
    p.add_argument("--b", required=True, help="the sparktrace binary under test")
    p.add_argument("--a-label", default="before")
    p.add_argument("--b-label", default="after")
    p.add_argument("--loadgen-bin", default=os.path.join(REPO, "build", "sparktrace-loadgen"))
    p.add_argument("--runs", type=int, default=6, help="proxy_bench runs per binary, alternating")
    p.add_argument("--quick", action="store_true", help="proxy_bench --quick (short runs)")
    p.add_argument("--rounds", type=int, default=0, help="proxy_bench --rounds (default: its own)")
    p.add_argument("--output", default=os.path.join(REPO, "bench", "results", "proxy-compare.json"))
    args = p.parse_args()
    runs = {"a": [], "b": []}
    machine = None
    with tempfile.TemporaryDirectory(prefix="sparktrace-compare-") as scratch:
        try:
            for i in range(args.runs):
                # A then B, then B then A: neither always runs first after a quiet spell.
                for side in (("a", "b") if i % 2 == 0 else ("b", "a")):
                    result = run_once(getattr(args, side), args.loadgen_bin, args.quick, args.rounds, scratch,
                                      f"{side}{i}")
                    machine = machine or result.get("machine")
                    runs[side].append(figures_of(result))
                    print(f"run {i + 1}/{args.runs} {side}: done", file=sys.stderr)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            print(f"binary_compare: {error}", file=sys.stderr)
            return 2
    table = compare(runs["a"], runs["b"])
    report = {
        "schema": 1,
        "what": "proxy_bench figures of two sparktrace binaries, alternating runs on one machine",
        "a": {"label": args.a_label, "binary": os.path.abspath(args.a)},
        "b": {"label": args.b_label, "binary": os.path.abspath(args.b)},
        "runs_per_binary": args.runs, "quick": args.quick, "rounds": args.rounds or None,
        "machine": machine, "figures": table,
        "all_within_noise": all(row["within_noise"] for row in table.values() if row["within_noise"] is not None),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"{'figure':36} {args.a_label:>12} {args.b_label:>12} {'B/A':>7} {'A spread':>9}  noise?")
    for name, row in table.items():
        if row["within_noise"] is None:
            print(f"{name:36} {'-':>12} {'-':>12}")
            continue
        # A figure that is 0 in A's runs (no memory held by idle streams) has no ratio and no spread.
        ratio = "-" if row["b_over_a"] is None else f"{row['b_over_a']:.3f}"
        spread = "-" if row["a_spread"] is None else f"{row['a_spread']:.3f}"
        print(f"{name:36} {row['a_median']:12.4g} {row['b_median']:12.4g} {ratio:>7} "
              f"{spread:>9}  {'within' if row['within_noise'] else 'OUTSIDE'}")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
