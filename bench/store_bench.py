#!/usr/bin/env python3
"""What the trace stores take: spans per second written through SpanStore::Write, the way the
proxy's store exporter writes them (batches of 512), on both backends.

Runs `sparktrace-store-bench` (bench/store_bench.cc) for each case, --runs times, on a fresh store
each time, and reports medians:
  - SQLite, one writer (a proxy's own file);
  - PostgreSQL 15 (Debian's, started here on a unix socket by tests/support/postgres_server.py), one
    writer and 4 writers at once (4 proxies on one shared database);
each with shapes of traffic: `calls` (every span its own trace, a Spark Connect call without
Airflow identity: the store's worst case per span), `tasks` (Airflow attempts of 50 spans), `long`
(attempts of 20,000 spans in one trace: a long task, whose trace spans ~40 batches) and `attempt`
(attempts of 50,000 Config calls, each its own trace: calls with the task's identity but no
traceparent), and on SQLite `app` (a Spark application's trace of 20,000 spans without Airflow
identity, as a driver feed writes it). It also reports the bytes each span takes on disk (SQLite: the file; PostgreSQL:
tables and indexes).

Writes bench/results/store.json (or --output) and prints a table. Exit status 0 when it ran, 2 on
a harness error. Run with Debian's /usr/bin/python3; standard library only.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
from postgres_server import PostgresServer  # noqa: E402

CASES = [
    # (backend, writers, shape)
    ("sqlite", 1, "calls"),
    ("sqlite", 1, "tasks"),
    ("postgresql", 1, "calls"),
    ("postgresql", 1, "tasks"),
    ("postgresql", 4, "calls"),
    ("postgresql", 4, "tasks"),
    ("sqlite", 1, "long"),
    ("postgresql", 1, "long"),
    ("sqlite", 1, "attempt"),
    ("postgresql", 1, "attempt"),
    ("sqlite", 1, "app"),
]
# sparktrace-store-bench's flags for each shape (bench/store_compare.py runs the same).
SHAPE_FLAGS = {"calls": ["--shape", "calls"], "tasks": ["--shape", "tasks"],
               "long": ["--shape", "tasks", "--trace-spans", "20000"],
               "attempt": ["--shape", "tasks", "--trace-spans", "1", "--attempt-traces", "50000"],
               "app": ["--shape", "apps", "--trace-spans", "20000"]}


def run_case(binary, store, writers, shape, spans):
    result = subprocess.run([binary, "--store", store, "--spans", str(spans), "--writers", str(writers)]
                            + SHAPE_FLAGS[shape], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"store bench failed ({store}, {writers} writers, {shape}): {result.stderr.strip()}")
    return json.loads(result.stdout)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--spans", type=int, default=100_000, help="spans per run (all writers together)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default=os.path.join(REPO, "bench", "results", "store.json"))
    args = parser.parse_args(argv)
    binary = os.path.join(args.build_dir, "sparktrace-store-bench")
    if not os.access(binary, os.X_OK):
        print(f"store_bench: {binary} missing (make bench builds it)", file=sys.stderr)
        return 2

    started = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="sparktrace-store-bench-") as tmp, PostgresServer() as pg:
        for backend, writers, shape in CASES:
            runs = []
            bytes_per_span = []
            for run in range(args.runs):
                if backend == "sqlite":
                    path = os.path.join(tmp, f"{shape}-{run}.db")
                    out = run_case(binary, path, writers, shape, args.spans)
                    bytes_per_span.append(os.path.getsize(path) / out["spans"])
                    os.remove(path)
                else:
                    database = pg.create_database()
                    out = run_case(binary, pg.url(database), writers, shape, args.spans)
                    size = int(pg.psql("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                                       "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'",
                                       database=database))
                    bytes_per_span.append(size / out["spans"])
                    pg.psql(f'DROP DATABASE "{database}"')
                if out["failed_batches"]:
                    raise RuntimeError(f"{backend} {shape}: {out['failed_batches']} batches failed")
                runs.append(out)
            results.append({
                "backend": backend, "writers": writers, "shape": shape, "spans_per_run": args.spans,
                "spans_per_s_median": statistics.median(r["spans_per_s"] for r in runs),
                "spans_per_s_runs": [round(r["spans_per_s"]) for r in runs],
                "client_cpu_us_per_span_median": statistics.median(r["cpu_us_per_span"] for r in runs),
                "bytes_per_span_median": statistics.median(bytes_per_span),
            })
            last = results[-1]
            print(f"{backend:10} writers={writers} {shape:7}  {last['spans_per_s_median']:>9,.0f} spans/s  "
                  f"{last['client_cpu_us_per_span_median']:6.1f} us CPU/span (writer process)  "
                  f"{last['bytes_per_span_median']:6.0f} B/span on disk", flush=True)

    document = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "config": {"runs": args.runs, "spans_per_run": args.spans, "batch": 512,
                   "postgres": "Debian postgresql-15 on a unix socket, fsync off (tests/support/postgres_server.py)"},
        "results": results,
        "environment": {"cpus": os.cpu_count(), "machine": platform.machine(), "kernel": platform.release()},
        "notes": "spans_per_s: wall time of the writes only; client CPU excludes the PostgreSQL server's own",
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.relpath(args.output)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"store_bench: {e}", file=sys.stderr)
        sys.exit(2)
