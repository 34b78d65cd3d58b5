#!/usr/bin/env python3
"""Tracing at scale: a fixed number of traced Config calls (default 200,000) from several client
processes at once through one sparktrace, with tracing off and on, and whether every span of them
reached the store.

Made for the 16-core machine (issue 32, item 4): `tracing_bench.py` measures what tracing costs per
call with one client on 2 cores; this one asks whether the proxy and its store keep up when many
clients call as fast as they can. Per round and per leg, a fresh proxy (`--threads`, default one per
core) in front of one `sparktrace sim` takes --calls Config calls from --clients `sparktrace-loadgen
client` processes (--concurrency calls in flight each, over 8 connections); then the harness waits
until the proxy's exporter has written (or dropped) every span and counts the spans in the store.
Legs: `direct` (the clients against the simulator, no proxy: what the clients and the upstream
manage on this machine), `off` (--no-tracing), `on` (SQLite store beside the proxy) and, unless --skip-postgres, `on_pg`
(Debian's PostgreSQL 15 on a unix socket, tests/support/postgres_server.py). Each traced leg spools
to disk what the store cannot take at once (the proxy's default), so `drain_s` says how long the
store needed after the last call.

Figures per leg (medians over rounds): calls/s and latency while calling, the proxy's CPU per call
(calls and the export afterwards), seconds from the last call until every span was exported,
spans dropped, spans in the store. Writes bench/results/tracing_scale.json (or --output).

Exit status: 0 when it ran (whatever the figures say), 2 on a harness error. Standard library only.
"""

import argparse
import json
import os
import statistics
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "support"))
import proxy_bench as pb  # noqa: E402
import tracing_bench as tb  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402
from proxy_bench import HarnessError, log  # noqa: E402

STREAMS_PER_CHANNEL = 8
TRACED_LEGS = ("on", "on_pg")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default=os.path.join(pb.REPO, "build"))
    p.add_argument("--sparktrace-bin", help="default BUILD_DIR/sparktrace")
    p.add_argument("--loadgen-bin", help="default BUILD_DIR/sparktrace-loadgen")
    p.add_argument("--calls", type=int, default=200_000, help="Config calls per run, all clients together")
    p.add_argument("--clients", type=int, default=4, help="client processes at once")
    p.add_argument("--concurrency", type=int, default=64, help="calls in flight per client")
    p.add_argument("--threads", type=int, default=0, help="proxy relay threads (0: the proxy's default)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--skip-postgres", action="store_true", help="leave out the on_pg leg")
    p.add_argument("--drain-timeout", type=float, default=120, help="longest wait for the store after the calls")
    p.add_argument("--output", default=os.path.join(pb.REPO, "bench", "results", "tracing_scale.json"))
    args = p.parse_args(argv)
    if args.calls < args.clients or args.clients < 1 or args.concurrency < 1 or args.rounds < 1:
        p.error("--calls must be at least --clients, and --clients, --concurrency, --rounds positive")
    return args


def start_proxy(sparktrace, leg, upstream, run_dir, threads, pg_url):
    """A proxy as tracing_bench starts it (store, spool beside it), with --threads when asked."""
    argv = [sparktrace, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
            "--log-level", "warn"] + (["--threads", str(threads)] if threads else [])
    store = None
    if leg == "off":
        argv.append("--no-tracing")
    else:
        store = pg_url if leg == "on_pg" else os.path.join(run_dir, "traces.db")
        argv += ["--store", store, "--spool-dir", os.path.join(run_dir, "spool")]
    child = pb.Child(f"proxy_{leg}", argv, run_dir)
    m = child.wait_for_line(r"listening grpc=([0-9.]+):(\d+) admin=([0-9.]+):(\d+)", 20)
    return child, f"{m.group(1)}:{m.group(2)}", f"{m.group(3)}:{m.group(4)}", store


def store_spans(leg, store, pg, database):
    if leg == "on":
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute("SELECT count(*) FROM spans").fetchone()[0]
        finally:
            con.close()
    return int(pg.psql("SELECT count(*) FROM spans", database=database))


def one_run(args, loadgen, sparktrace, upstream, sim, leg, rnd, tmp, pg, request_file):
    run_dir = os.path.join(tmp, f"{leg}-{rnd}")
    os.makedirs(run_dir)
    database = pg.create_database() if leg == "on_pg" else None
    if leg == "direct":
        proxy, target, admin, store = None, upstream, None, None
    else:
        proxy, target, admin, store = start_proxy(sparktrace, leg, upstream, run_dir, args.threads,
                                                  pg.url(database) if database else None)
    per_client = args.calls // args.clients
    workload = {"timeout": 300, "args": [
        "--mode", "unary", "--concurrency", str(args.concurrency),
        "--streams-per-channel", str(STREAMS_PER_CHANNEL), "--calls", str(per_client), "--duration", "240",
        "--method", f"{tb.SERVICE}/Config", "--request-file", request_file]}
    try:
        cpu0 = pb.tree_cpu_seconds(proxy.pid) if proxy else None
        run = pb.run_parallel_clients(loadgen, target, workload, args.clients, proxy.pid if proxy else None, sim.pid)
        if "error" in run:
            raise HarnessError(f"{leg} round {rnd}: {run['error']}")
        calls = run["client"]["calls_total"]
        out = {"calls": calls, "calls_per_s": round(run["client"]["calls_per_s"]),
               "p50_us": run["client"]["p50_us"], "p99_us": run["client"]["p99_us"],
               "wall_s": run["wall_s"], "errors": sum(c.get("errors", 0) for c in run["clients_raw"]),
               "sim_cpu_us_per_call": round(run["upstream_cpu_us_per_call"], 2)}
        if proxy:
            out["proxy_cpu_us_per_call_calling"] = round(run["proxy_cpu_us_per_call"], 2)
        if leg in TRACED_LEGS:
            sink = tb.STORE_SINK[leg]
            waited = tb.wait_exported(admin, [sink], calls, args.drain_timeout)
            metrics = tb.read_metrics(admin)
            out["drain_s"] = waited["export_wait_s"]
            out["export_lag"] = waited.get("export_lag")
            out["spans_dropped"] = int(tb.metric_sum(metrics, "sparktrace_spans_dropped_total", sink=sink))
            out["traced_calls"] = int(tb.metric_sum(metrics, "sparktrace_traced_calls_total"))
            out["proxy_cpu_us_per_call_with_export"] = round((pb.tree_cpu_seconds(proxy.pid) - cpu0) / calls * 1e6, 2)
            out["effective_spans_per_s"] = round(calls / (run["wall_s"] + waited["export_wait_s"]))
    finally:
        if proxy:
            proxy.stop()
    if leg in TRACED_LEGS:
        out["spans_in_store"] = store_spans(leg, store, pg, database)
        out["every_span_stored"] = out["spans_in_store"] == out["calls"] and out["spans_dropped"] == 0
    if database:
        pg.psql(f'DROP DATABASE "{database}"')
    log(f"round {rnd} {leg:6} {out['calls_per_s']:>8,} calls/s  p99 {out['p99_us']:>8,.0f} us  "
        f"proxy cpu/call {out.get('proxy_cpu_us_per_call_calling', 0):6.1f} us"
        + ("" if leg not in TRACED_LEGS else f"  drain {out['drain_s']:.2f}s  dropped {out['spans_dropped']}  "
           f"stored {out['spans_in_store']}/{out['calls']}"))
    return out


def medians(runs):
    keys = [k for k, v in runs[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return {k: statistics.median(r[k] for r in runs if r.get(k) is not None) for k in keys}


def main(argv):
    args = parse_args(argv)
    sparktrace = args.sparktrace_bin or os.path.join(args.build_dir, "sparktrace")
    loadgen = args.loadgen_bin or os.path.join(args.build_dir, "sparktrace-loadgen")
    for binary in (sparktrace, loadgen):
        if not os.access(binary, os.X_OK):
            raise HarnessError(f"{binary} is missing")
    # direct: the clients against the simulator alone, what the client and upstream can do here.
    legs = ["direct", "off", "on"] + ([] if args.skip_postgres else ["on_pg"])
    started = time.time()
    raw = {leg: [] for leg in legs}
    with tempfile.TemporaryDirectory(prefix="sparktrace-tracing-scale-") as tmp:
        os.chmod(tmp, 0o755)
        request_file = os.path.join(tmp, "config.bin")
        with open(request_file, "wb") as f:
            f.write(tb.config_request())
        pg = PostgresServer(os.path.join(tmp, "pg")) if not args.skip_postgres else None
        if pg:
            pg.start()
        sim, upstream = tb.start_sim(sparktrace, tmp)
        try:
            for rnd in range(args.rounds):
                for leg in legs:
                    raw[leg].append(one_run(args, loadgen, sparktrace, upstream, sim, leg, rnd, tmp, pg, request_file))
        finally:
            sim.stop()
            if pg:
                pg.stop()
    med = {leg: medians(runs) for leg, runs in raw.items()}
    ratios = {leg: {"calls_per_s_vs_off": round(med[leg]["calls_per_s"] / med["off"]["calls_per_s"], 3),
                    "cpu_per_call_vs_off": round(med[leg]["proxy_cpu_us_per_call_with_export"]
                                                 / med["off"]["proxy_cpu_us_per_call_calling"], 3)}
              for leg in TRACED_LEGS if leg in legs}
    document = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "config": {"calls": args.calls, "clients": args.clients, "concurrency": args.concurrency,
                   "streams_per_channel": STREAMS_PER_CHANNEL, "threads": args.threads or "one per core",
                   "rounds": args.rounds, "legs": legs, "upstream": "sparktrace sim"},
        "machine": pb.machine_info(loadgen, sparktrace, None, args.build_dir),
        "medians": med,
        "ratios": ratios,
        "checks": {leg: all(r["every_span_stored"] for r in raw[leg]) for leg in TRACED_LEGS if leg in legs},
        "raw": raw,
        "units": {"latency": "microseconds", "cpu": "proxy CPU microseconds per call (its whole process tree)"},
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print(json.dumps({"medians": med, "ratios": ratios, "checks": document["checks"]}, indent=1))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except HarnessError as e:
        print(f"tracing_scale_bench: {e}", file=sys.stderr)
        sys.exit(2)
