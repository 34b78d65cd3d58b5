#!/usr/bin/env python3
"""Two sparktrace-store-bench binaries side by side on one store backend, in instructions: what a span
costs the writer, counted by valgrind's callgrind, which gives the same count for the same binary and
input whatever else the machine does. Wall-clock figures on a shared 2-core machine spread by 20% and
more from run to run (bench/store_compare.py reports that spread); a change of a few percent in the
write path shows here and drowns there.

For each shape it runs each binary once under `valgrind --tool=callgrind` on a fresh store of --spans
spans and reads, from callgrind_annotate's inclusive counts, the instructions spent in the store's
Write (SQLite: every batch's rows, index, SQLite itself and commit; PostgreSQL, `--backend postgresql`:
the writer's side only, the server's work is another process; never the bench's own span making) and
in a few of its parts. Reports instructions per span, the ratio after/before, and writes the JSON.
PostgreSQL is Debian's, started here on a unix socket (tests/support/postgres_server.py).

    /usr/bin/python3 bench/store_instructions.py --before OLD/build/sparktrace-store-bench \\
        --after build/sparktrace-store-bench --output bench/results/store_step5_instructions.json

Standard library and Debian's valgrind only. Exit status 0 when it ran, 2 on a harness error.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from store_bench import SHAPE_FLAGS, PostgresServer  # noqa: E402  (make bench's flags for each shape)

# The write path and the parts of it reported apart (a substring of the function's name in
# callgrind_annotate's output; the first match counts), by backend.
FUNCTIONS = {
    "sqlite": {
        "write": "SqliteSpanStore::Write(",
        "to_stored_batch": "store::ToStoredBatch(",
        "index_new_traces": "store::IndexNewTraces(",
        "begin_commit": "sqlite3_exec",  # BEGIN and COMMIT: the WAL frames, fsync and checkpoints
    },
    "postgresql": {
        "write": "PostgresSpanStore::Write(",
        "to_stored_batch": "store::ToStoredBatch(",
        "span_copy": "store::SpanCopy(",
        "summary_copy": "store::SummaryCopy(",
    },
}
COUNT = re.compile(r"^\s*([\d,]+)\s")


def instructions(binary, shape, spans, tmp, backend, pg):
    """Inclusive instruction counts of the backend's FUNCTIONS for one run."""
    functions = FUNCTIONS[backend]
    store = os.path.join(tmp, f"{os.path.basename(binary)}-{shape}.db")
    if backend == "postgresql":
        database = pg.create_database()
        store = pg.url(database)
    out_file = os.path.join(tmp, "callgrind.out")
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", binary,
                          "--store", store, "--spans", str(spans)] + SHAPE_FLAGS[shape],
                         capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        raise RuntimeError(f"{binary} {shape}: {run.stderr.strip()[-2000:]}")
    result = json.loads(run.stdout)
    if result["failed_batches"]:
        raise RuntimeError(f"{binary} {shape}: {result['failed_batches']} batches failed")
    annotate = subprocess.run(["callgrind_annotate", "--inclusive=yes", out_file], capture_output=True,
                              text=True, timeout=600, check=True).stdout
    counts = {}
    for name, needle in functions.items():
        for line in annotate.splitlines():
            match = COUNT.match(line)
            if match and needle in line:
                counts[name] = int(match.group(1).replace(",", ""))
                break
    if "write" not in counts:
        raise RuntimeError(f"{binary} {shape}: no {functions['write']} in callgrind's output")
    if backend == "postgresql":
        pg.psql(f'DROP DATABASE "{database}"')
    for suffix in ("", "-wal", "-shm"):
        if backend == "sqlite" and os.path.exists(store + suffix):
            os.remove(store + suffix)
    os.remove(out_file)
    return {name: count / result["spans"] for name, count in counts.items()}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the baseline's sparktrace-store-bench")
    parser.add_argument("--after", required=True, help="the change's sparktrace-store-bench")
    parser.add_argument("--spans", type=int, default=20_000)
    parser.add_argument("--shapes", default="calls,tasks", help="comma-separated shapes of bench/store_bench.py")
    parser.add_argument("--backend", choices=sorted(FUNCTIONS), default="sqlite")
    parser.add_argument("--output", required=True)
    parser.add_argument("--note", default="", help="what before and after are, for the JSON")
    parser.add_argument("--before-commit", default="", help="the baseline's commit, for the JSON")
    parser.add_argument("--after-commit", default="", help="the change's commit, for the JSON")
    args = parser.parse_args(argv)
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            print(f"store_instructions: {tool} is not installed (Debian's valgrind)", file=sys.stderr)
            return 2

    started = time.time()
    cases = []
    functions = FUNCTIONS[args.backend]
    with tempfile.TemporaryDirectory(prefix="sparktrace-store-instructions-") as tmp, \
            (PostgresServer() if args.backend == "postgresql" else contextlib.nullcontext()) as pg:
        for shape in args.shapes.split(","):
            if shape not in SHAPE_FLAGS:
                print(f"store_instructions: unknown shape {shape!r}", file=sys.stderr)
                return 2
            before = instructions(args.before, shape, args.spans, tmp, args.backend, pg)
            after = instructions(args.after, shape, args.spans, tmp, args.backend, pg)
            case = {"shape": shape}
            for name in functions:
                if name in before and name in after:
                    case[f"{name}_instructions_per_span_before"] = round(before[name])
                    case[f"{name}_instructions_per_span_after"] = round(after[name])
                    case[f"{name}_ratio_after_over_before"] = round(after[name] / before[name], 3)
            cases.append(case)
            print(f"{shape}: {functions['write']}) {before['write']:,.0f} -> {after['write']:,.0f} instructions "
                  f"a span ({case['write_ratio_after_over_before']}x)", flush=True)

    document = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "what": args.note,
        "method": f"one run of each build per shape under valgrind --tool=callgrind, {args.spans} spans "
                  f"(batches of 512) on a fresh {args.backend} store; inclusive instructions of each function "
                  "(callgrind_annotate), divided by the spans; repeatable for the same binary and input"
                  + ("; the writer's side only (the server is another process)" if args.backend == "postgresql"
                     else ""),
        "config": {"spans_per_run": args.spans, "batch": 512, "backend": args.backend, "functions": functions},
        "baseline": {"commit": args.before_commit, "binary": args.before},
        "after": {"commit": args.after_commit, "binary": args.after},
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        print(f"store_instructions: {error}", file=sys.stderr)
        sys.exit(2)
