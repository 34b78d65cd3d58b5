#!/usr/bin/env python3
"""What tracing adds to the proxy per Config call, in instructions: two sparktrace builds side by side.

bench/tracing_bench.py measures the proxy's CPU seconds per call with tracing off and on; on a shared
2-core machine its rounds spread by 2x and more (bench/results/tracing_side_by_side_50b.json), so a
halving drowns in noise. Here the proxy runs under valgrind's callgrind, which counts the instructions
it executes, whatever else the machine does. For each build and leg (off: --no-tracing; on: the
SQLite store; on_pg: the shared PostgreSQL store, Debian's postgresql-15 on a unix socket) it starts
a fresh proxy in front of one `sparktrace sim`, sends it --calls-low and then, in another fresh proxy,
--calls-high Config calls (`sparktrace-loadgen client --calls N`, the request tracing_bench.py sends),
waits until every span is in the store, stops the proxy with SIGTERM and reads callgrind's total.
The slope (high - low) / (calls high - calls low) is the instructions a call costs, free of what
starting, opening the store and stopping cost; a leg's slope minus the off leg's is what tracing adds
to a call. Every thread of the proxy counts: the I/O threads' call tracer and the store exporter's
writer (for PostgreSQL the client side only: the server is another process).

    /usr/bin/python3 bench/tracing_instructions.py --base OLD/build --new build \\
        --output bench/results/tracing_instructions.json

A build directory holds sparktrace; the load generator and the simulator are the new build's for
both (the client and the upstream stay the same, only the proxy differs). Instructions are not time
(cache misses, lock waits and system calls are not in them), and callgrind runs the threads one at a
time: the figure is the work a call takes, not its latency. Standard library, Debian's valgrind and
postgresql-15. Exit status 0 when it ran, 2 on a harness error.
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy_bench as pb  # noqa: E402  (process helpers, machine info)
import tracing_bench as tb  # noqa: E402  (the Config request, the simulator, the proxy's flags)
from tracing_bench import PostgresServer  # noqa: E402

REPO = pb.REPO
LEGS = ("off", "on", "on_pg")
TOTALS = re.compile(r"^(?:summary|totals):\s*(\d+)", re.MULTILINE)
START_TIMEOUT_S = 180  # a proxy under callgrind takes tens of seconds to listen on a busy machine
CALL_TIMEOUT_S = 60  # a call under callgrind is ~50x slower than without
RUN_CAP_S = 3600  # one client run, at most
# Under callgrind the proxy serves tens of calls a second, not thousands: with the default batch delay
# (1 s) the exporter would write batches of tens of spans, each paying a transaction, where the proxy
# at speed writes full ones (cli/tracing_stack.cc: 2,048 spans a store batch). A long delay and call
# counts that are multiples of it make every batch full, as at speed.
BATCH_SPANS = 2048
FULL_BATCHES = ["--span-batch-delay", "600s"]


def proxy_instructions(sparktrace, loadgen, leg, sim_target, calls, concurrency, request_file, tmp, pg,
                       label="", keep_dir=None):
    """One fresh proxy under callgrind, `calls` Config calls through it, all exported; its total."""
    run_dir = tempfile.mkdtemp(prefix=f"{leg}-{calls}-", dir=tmp)
    pg_url = pg.url(pg.create_database()) if leg == "on_pg" else None
    out_file = os.path.join(run_dir, "callgrind.out")
    wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
    child, grpc, admin, _store, _argv = tb.start_proxy(sparktrace, leg, sim_target, run_dir, None, pg_url,
                                                       wrapper=wrapper, start_timeout=START_TIMEOUT_S,
                                                       extra=[] if leg == "off" else FULL_BATCHES)
    try:
        client = subprocess.run(
            [loadgen, "client", "--target", grpc, "--mode", "unary", "--concurrency", str(concurrency),
             "--calls", str(calls), "--duration", str(RUN_CAP_S), "--call-timeout", str(CALL_TIMEOUT_S),
             "--method", f"{tb.SERVICE}/Config", "--request-file", request_file],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_CAP_S + CALL_TIMEOUT_S)
        lines = [line for line in client.stdout.splitlines() if line.startswith("{")]
        result = json.loads(lines[0]) if lines else {}
        if client.returncode != 0 or result.get("calls_total") != calls or result.get("errors") != 0:
            raise pb.HarnessError(f"{leg}: the client's {calls} calls did not all succeed: "
                                  f"{client.stdout.strip()[-500:]} {client.stderr.strip()[-500:]}")
        dropped = 0
        if leg != "off":
            sink = tb.STORE_SINK[leg]
            waited = tb.wait_exported(admin, [sink], calls, timeout=300)
            if "export_lag" in waited:
                raise pb.HarnessError(f"{leg}: {waited['export_lag']}")
            dropped = waited["spans_dropped_so_far"].get(sink, 0)
    finally:
        os.killpg(child.pid, signal.SIGTERM)  # a clean stop: callgrind writes its counts at exit
        try:
            child.proc.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            raise pb.HarnessError(f"{leg}: the proxy did not stop within {START_TIMEOUT_S}s of SIGTERM")
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        shutil.copy(out_file, os.path.join(keep_dir, f"callgrind.{label}.{leg}.{calls}"))
    with open(out_file) as f:
        match = TOTALS.search(f.read())
    if not match:
        raise pb.HarnessError(f"{leg}: no total in {out_file}")
    return {"calls": calls, "instructions": int(match.group(1)), "spans_dropped": dropped}


def measure_build(label, sparktrace, loadgen, sim_target, args, request_file, tmp, pg):
    legs = {}
    for leg in args.legs:
        runs = []
        for repeat in range(args.repeats):
            low, high = (proxy_instructions(sparktrace, loadgen, leg, sim_target, calls, args.concurrency,
                                            request_file, tmp, pg, label, args.keep_profiles)
                         for calls in (args.calls_low, args.calls_high))
            per_call = (high["instructions"] - low["instructions"]) / (args.calls_high - args.calls_low)
            runs.append({"low": low, "high": high, "instructions_per_call": round(per_call)})
            pb.log(f"{label} {leg} #{repeat + 1}: {per_call:,.0f} instructions a call")
        legs[leg] = {"runs": runs,
                     "instructions_per_call": round(statistics.median(r["instructions_per_call"] for r in runs))}
    for leg in args.legs:
        if leg != "off" and "off" in legs:
            legs[leg]["added_per_call"] = legs[leg]["instructions_per_call"] - legs["off"]["instructions_per_call"]
    return legs


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the baseline's build directory")
    parser.add_argument("--new", required=True, help="the change's build directory")
    parser.add_argument("--legs", default=",".join(LEGS), help="of off, on, on_pg")
    parser.add_argument("--calls-low", type=int, default=BATCH_SPANS)
    parser.add_argument("--calls-high", type=int, default=3 * BATCH_SPANS)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="slopes measured per build and leg")
    parser.add_argument("--output", required=True)
    parser.add_argument("--keep-profiles", help="a directory to keep callgrind's files in, to annotate")
    parser.add_argument("--base-commit", default="")
    parser.add_argument("--new-commit", default="")
    parser.add_argument("--note", default="", help="what base and new are, for the JSON")
    args = parser.parse_args(argv)
    args.legs = [leg for leg in args.legs.split(",") if leg]
    if any(leg not in LEGS for leg in args.legs) or args.calls_high <= args.calls_low or args.calls_low < 1:
        parser.error("--legs takes off, on, on_pg; --calls-high must exceed --calls-low >= 1")
    if args.calls_low % BATCH_SPANS or args.calls_high % BATCH_SPANS:
        parser.error(f"--calls-low and --calls-high must be multiples of {BATCH_SPANS} (full batches)")
    builds = {"base": os.path.abspath(args.base), "new": os.path.abspath(args.new)}
    loadgen = os.path.join(builds["new"], "sparktrace-loadgen")
    for path in [os.path.join(b, "sparktrace") for b in builds.values()] + [loadgen]:
        if not os.access(path, os.X_OK):
            raise pb.HarnessError(f"{path} is missing: build it")
    if shutil.which("valgrind") is None:
        raise pb.HarnessError("valgrind is missing: scripts/deps.sh bench installs it")

    started = time.time()
    results = {}
    with tempfile.TemporaryDirectory(prefix="sparktrace-tracing-instructions-") as tmp:
        request_file = os.path.join(tmp, "config.bin")
        with open(request_file, "wb") as f:
            f.write(tb.config_request())
        pg = PostgresServer() if "on_pg" in args.legs else None
        sim = None
        try:
            if pg:
                pg.start()
            sim, sim_target = tb.start_sim(os.path.join(builds["new"], "sparktrace"), tmp)
            for label, build in builds.items():
                results[label] = measure_build(label, os.path.join(build, "sparktrace"), loadgen, sim_target,
                                               args, request_file, tmp, pg)
        finally:
            if sim:
                sim.stop()
            if pg:
                pg.cleanup()

    cases = {}
    for leg in args.legs:
        case = {"base_instructions_per_call": results["base"][leg]["instructions_per_call"],
                "new_instructions_per_call": results["new"][leg]["instructions_per_call"]}
        if leg != "off" and "off" in args.legs:
            base_added = results["base"][leg]["added_per_call"]
            new_added = results["new"][leg]["added_per_call"]
            case.update(base_added_per_call=base_added, new_added_per_call=new_added,
                        added_ratio_new_over_base=round(new_added / base_added, 3) if base_added else None)
        cases[leg] = case
    report = {
        "schema": 1,
        "what": "instructions the proxy executes per Config call, tracing off and on, two builds side by side; "
                "what tracing adds to a call is a traced leg's figure minus the off leg's",
        "method": f"each figure is the slope between a fresh proxy under valgrind --tool=callgrind serving "
                  f"{args.calls_low} and one serving {args.calls_high} Config calls at concurrency "
                  f"{args.concurrency} (every thread of the proxy, every span exported before the stop); "
                  f"median of {args.repeats} slope(s)",
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "base_commit": args.base_commit,
        "new_commit": args.new_commit,
        "note": args.note,
        "cases": cases,
        "runs": results,
        "checks": {"spans_dropped": sum(run[end]["spans_dropped"] for build in results.values()
                                        for leg in build.values() for run in leg["runs"] for end in ("low", "high"))},
        "environment": {"nproc": os.cpu_count(), "valgrind": pb.command_output(["valgrind", "--version"])},
    }
    with open(args.output, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    for leg, case in cases.items():
        pb.log(f"{leg}: {json.dumps(case)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except pb.HarnessError as error:
        pb.log(f"error: {error}")
        sys.exit(2)
