#!/usr/bin/env python3
"""Two sparktrace-store-bench binaries side by side on the PostgreSQL store: a store change against the build before it.

bench/store_compare.py's method on PostgreSQL 15 (Debian's, started here on a unix socket by
tests/support/postgres_server.py, as bench/store_bench.py starts it): per round, per case (shape and
number of writers), one run of each build on a fresh database of --spans spans (batches of 512),
alternating which goes first; medians over the rounds of spans/s, the writers' CPU us/span and bytes
per span on disk (tables and their indexes, as store_bench.py measures them), the ratios after/before,
and whether after lies within noise of before (bench/binary_compare.py's rule).

    /usr/bin/python3 bench/store_compare_postgres.py --before OLD/build/sparktrace-store-bench \\
        --after build/sparktrace-store-bench --rounds 3 --output bench/results/store_postgres_step3.json
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
sys.path.insert(0, os.path.join(REPO, "bench"))
from postgres_server import PostgresServer  # noqa: E402
from store_bench import SHAPE_FLAGS  # noqa: E402  (the bench's flags for each shape, as make bench runs them)
from store_compare import print_cases, summarise  # noqa: E402

SIZE_SQL = ("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")


def run_once(pg, binary, shape, writers, spans):
    database = pg.create_database()
    try:
        result = subprocess.run([binary, "--store", pg.url(database), "--spans", str(spans), "--writers",
                                 str(writers)] + SHAPE_FLAGS[shape], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"{binary} {shape} x{writers}: {result.stderr.strip()}")
        out = json.loads(result.stdout)
        if out["failed_batches"]:
            raise RuntimeError(f"{binary} {shape} x{writers}: {out['failed_batches']} batches failed")
        out["bytes_per_span"] = int(pg.psql(SIZE_SQL, database=database)) / out["spans"]
        return out
    finally:
        pg.psql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the baseline's sparktrace-store-bench")
    parser.add_argument("--after", required=True, help="the change's sparktrace-store-bench")
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shapes", default="calls,tasks", help="comma-separated: calls, tasks, long (20,000 spans in one trace), attempt (50,000 calls, each its own trace, in one attempt), app")
    parser.add_argument("--writers", default="1,4", help="comma-separated writer counts")
    parser.add_argument("--output", required=True)
    parser.add_argument("--note", default="", help="what before and after are, for the JSON")
    parser.add_argument("--before-commit", default="", help="the baseline's commit, for the JSON")
    parser.add_argument("--after-commit", default="", help="the change's commit, for the JSON")
    args = parser.parse_args(argv)
    cases = [(shape, int(writers)) for shape in args.shapes.split(",") for writers in args.writers.split(",")]

    started = time.time()
    runs = {case: {"before": [], "after": []} for case in cases}
    with PostgresServer() as pg:
        for round_number in range(args.rounds):
            order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
            for shape, writers in cases:
                for which in order:
                    binary = args.before if which == "before" else args.after
                    out = run_once(pg, binary, shape, writers, args.spans)
                    runs[(shape, writers)][which].append(out)
                    print(f"round {round_number + 1} {shape:5} x{writers} {which:6} {out['spans_per_s']:>9,.0f} spans/s "
                          f"{out['cpu_us_per_span']:6.2f} us CPU/span {out['bytes_per_span']:7.0f} B/span", flush=True)

    document = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "what": args.note,
        "method": f"{args.rounds} rounds; in each, per case, one run of each build on a fresh PostgreSQL 15 database "
                  f"(Debian's, unix socket, fsync off: tests/support/postgres_server.py) of {args.spans} spans "
                  "(batches of 512), alternating which goes first; medians over the rounds; bytes: tables and "
                  "indexes (pg_total_relation_size) over spans; within noise: bench/binary_compare.py's rule",
        "config": {"rounds": args.rounds, "spans_per_run": args.spans, "batch": 512},
        "baseline": {"commit": args.before_commit, "binary": args.before},
        "after": {"commit": args.after_commit, "binary": args.after},
        "cases": [summarise(f"postgresql writers={writers} {shape}", runs[(shape, writers)])
                  for shape, writers in cases],
        "environment": {"cpus": os.cpu_count(), "load_average_after": [round(x, 2) for x in os.getloadavg()]},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print_cases(document["cases"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"store_compare_postgres: {e}", file=sys.stderr)
        sys.exit(2)
