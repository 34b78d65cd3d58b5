#!/usr/bin/env python3
"""Does a PostgreSQL outage fail or slow Spark Connect calls? The shared store stopped under load.

One `sparktrace proxy --store postgresql://… --spool-dir …` in front of `sparktrace sim`, and the
same `sparktrace-loadgen client` load as tracing_bench.py's Config c16 run three times, each for
--seconds: with PostgreSQL up (before), with PostgreSQL stopped (during: the spans go to the spool),
and with PostgreSQL started again (after: the spool drains while calls go on). Then, with the load
stopped, waits until every span of every call is in PostgreSQL and counts them there.

Reports, per phase: calls/s, p50/p99 latency, failed calls, the proxy's CPU per call; the spool's
peak size; and spans expected vs stored vs dropped. Writes bench/results/store_outage.json (or
--output). Exit status 0 when it ran, 2 on a harness error. Debian's /usr/bin/python3, standard
library only.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import proxy_bench as pb  # noqa: E402
import tracing_bench as tb  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402  (tracing_bench put tests/support on the path)


def spool_bytes(admin):
    return tb.metric_sum(tb.read_metrics(admin), "sparktrace_span_spool_bytes", sink="postgresql")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(pb.REPO, "build"))
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--output", default=os.path.join(pb.REPO, "bench", "results", "store_outage.json"))
    args = parser.parse_args(argv)
    sparktrace = os.path.join(args.build_dir, "sparktrace")
    loadgen = os.path.join(args.build_dir, "sparktrace-loadgen")
    for binary in (sparktrace, loadgen):
        if not os.access(binary, os.X_OK):
            print(f"store_outage_bench: {binary} missing (make bench builds it)", file=sys.stderr)
            return 2

    tmp = tempfile.mkdtemp(prefix="sparktrace-outage-bench-")
    pg = PostgresServer()
    children = []
    phases = {}
    try:
        pg.start()
        url = pg.url(pg.create_database("outage"))
        config = os.path.join(tmp, "config.bin")
        with open(config, "wb") as f:
            f.write(tb.config_request())
        sim, sim_target = tb.start_sim(sparktrace, tmp)
        children.append(sim)
        child, grpc_ep, admin, _, argv_used = tb.start_proxy(sparktrace, "on_pg", sim_target, tmp, None, url)
        children.append(child)
        wl = dict(name="config_c16", kind="unary", spans_per_call=1, timeout=args.seconds + 60,
                  args=["--mode", "unary", "--concurrency", "16", "--duration", str(args.seconds), "--warmup", "0.5",
                        "--method", f"{tb.SERVICE}/Config", "--request-file", config])
        peak = {"bytes": 0.0}
        stop_watch = threading.Event()

        def watch_spool():
            while not stop_watch.is_set():
                try:
                    peak["bytes"] = max(peak["bytes"], spool_bytes(admin))
                except OSError:
                    pass
                time.sleep(0.2)

        watcher = threading.Thread(target=watch_spool, daemon=True)
        watcher.start()
        calls = 0
        for phase in ("before", "during", "after"):
            if phase == "during":
                pg.stop()
            if phase == "after":
                pg.start()
            run = tb.run_client(loadgen, grpc_ep, wl, child.pid, sim.pid, None, [c.pid for c in children])
            client = run.get("client", {})
            calls += run.get("calls_total", 0)
            phases[phase] = {k: run.get(k) for k in ("calls_total", "proxy_cpu_us_per_call", "foreign_cpu_cores",
                                                      "error")}
            phases[phase].update({k: client.get(k) for k in ("calls_per_s", "p50_us", "p99_us", "errors")})
            pb.log(f"{phase:<7} {client.get('calls_per_s', 0):>9,.0f} calls/s  p50 {client.get('p50_us', 0):8.1f} us  "
                   f"p99 {client.get('p99_us', 0):9.1f} us  errors {client.get('errors', run.get('error'))}")
        # The warm-up calls are traced too: count what the proxy says it traced.
        traced = int(tb.metric_sum(tb.read_metrics(admin), "sparktrace_traced_calls_total"))
        settled = tb.wait_exported(admin, ("postgresql",), traced, 120)
        stop_watch.set()
        metrics = tb.tracing_metrics(tb.read_metrics(admin))
        stored = int(pg.psql("SELECT count(*) FROM spans", database="outage"))
        result = {
            "schema": 1,
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "config": {"seconds_per_phase": args.seconds, "workload": wl["args"], "proxy_argv": argv_used},
            "phases": phases,
            "spool_peak_bytes": peak["bytes"],
            "spans": {"traced_calls": traced, "measured_calls": calls, "stored": stored,
                      "dropped": metrics["spans_dropped"], "drain_wait_s": settled.get("export_wait_s"),
                      "export_lag": settled.get("export_lag")},
            "environment": {"cpus": os.cpu_count()},
        }
        pb.log(f"spans: traced {traced}, stored {stored}, dropped {metrics['spans_dropped']}, spool peak "
               f"{peak['bytes'] / 2**20:.1f} MiB")
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        print(f"wrote {os.path.relpath(args.output)}")
        return 0
    finally:
        for child in reversed(children):
            child.stop()
        pg.cleanup()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except pb.HarnessError as e:
        print(f"store_outage_bench: {e}", file=sys.stderr)
        sys.exit(2)
