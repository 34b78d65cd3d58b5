#!/usr/bin/python3
"""Runs end-to-end test modules many times, K at a time, under CPU contention, to bring out the
hangs and races a single quiet run hides.

    /usr/bin/python3 tests/stress/e2e_stress.py --module test_http2_relay=200 --parallel 2 \\
        --contention 2 --out /tmp/stress.json --logs /tmp/stress-logs
    /usr/bin/python3 tests/stress/e2e_stress.py --all-e2e 5 --module node/forwarding=20

Each run is one module in a fresh process: `python3 -m unittest -v test_x` in tests/e2e (or
`node --test x.test.js` in tests/e2e/node for node/x), with SPARKTRACE_BIN and the per-test
deadline (SPARKTRACE_TEST_DEADLINE, tests/e2e/deadline.py) set, in a session of its own so that a
run that outlives --run-timeout is killed with everything it started. Outcomes:

  pass  exit 0
  hang  the per-test deadline fired (its dump is in the log), or the run timed out
  fail  anything else

The contention is `stress-ng --cpu N` (Debian's stress-ng) or, without it, N busy-loop processes
(said so on stdout); it runs from the first run to the last and is stopped on exit, Ctrl-C
included (and bounded by its own timeout should this process be killed). The log (stdout and
stderr) of every failed or hung run is kept in --logs; the JSON summary (per module: runs,
passes, fails, hangs, median and max seconds, kept logs) goes to --out. Exit status: 0 when every
run passed, 1 when one failed or hung, 130 when interrupted, 2 for bad arguments.

Bounded: every run has --run-timeout, runs are finite, and --budget (seconds) stops starting new
ones. Standard library only (Debian's /usr/bin/python3).
"""

import argparse
import itertools
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
NODE = E2E / "node"
sys.path.insert(0, str(E2E))
import deadline  # noqa: E402  (MARKER and EXIT_CODE: what a deadline dump looks like; /proc walks)

FAULTHANDLER_TIMEOUT = "Timeout ("  # deadline.py's backstop, faulthandler's own dump
NODE_TIMEOUT = "testTimeoutFailure"  # node:test, a test past its { timeout }
BUSY_LOOP = """
import os, sys, time
parent, end = os.getppid(), time.monotonic() + float(sys.argv[1])
while time.monotonic() < end and os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


# --- what to run -------------------------------------------------------------------------------

class Module:
    """One e2e module: a Python unittest module (test_x) or a node test file (node/x)."""

    def __init__(self, name):
        name = name.strip()
        if name.startswith("node/"):
            stem = name[len("node/"):].removesuffix(".js").removesuffix(".test")
            self.name, self.path = f"node/{stem}", NODE / f"{stem}.test.js"
        else:
            stem = name.removesuffix(".py")
            self.name, self.path = stem, E2E / f"{stem}.py"
        if not self.path.is_file():
            raise ValueError(f"no e2e module {name!r} ({self.path} is missing)")

    @property
    def is_node(self):
        return self.name.startswith("node/")

    def command(self, python):
        if self.is_node:
            return ["node", "--test", self.path.name], NODE
        return [python, "-m", "unittest", "-v", self.name], E2E


def parse_jobs(args):
    """[(Module, count)] from --module NAME=COUNT and --all-e2e COUNT, in the order given."""
    counts = {}
    modules = {}
    if args.all_e2e:
        for path in sorted(E2E.glob("test_*.py")):
            module = Module(path.stem)
            modules[module.name] = module
            counts[module.name] = counts.get(module.name, 0) + args.all_e2e
    for spec in args.module:
        name, _, count = spec.partition("=")
        module = Module(name)
        try:
            number = int(count) if count else 1
        except ValueError:
            raise ValueError(f"--module {spec!r}: COUNT must be a number") from None
        if number < 1:
            raise ValueError(f"--module {spec!r}: COUNT must be at least 1")
        modules[module.name] = module
        counts[module.name] = counts.get(module.name, 0) + number
    return [(modules[name], count) for name, count in counts.items()]


def interleaved(jobs):
    """(module, index) for every run, the modules taking turns: a campaign cut short by --budget
    or Ctrl-C has run every module about as often."""
    queues = [[(module, i) for i in range(1, count + 1)] for module, count in jobs]
    for batch in itertools.zip_longest(*queues):
        yield from (job for job in batch if job is not None)


# --- contention --------------------------------------------------------------------------------

class Contention:
    """N CPU hogs from start() to stop(): stress-ng workers, else busy-loop processes. Each ends
    by itself after `limit` seconds, so none outlives a campaign whose runner was killed."""

    def __init__(self, workers, limit):
        self.workers = workers
        self.limit = math.ceil(limit)
        self.kind = "none"
        self.procs = []

    def start(self):
        if self.workers <= 0:
            print("contention: none")
            return
        stress_ng = shutil.which("stress-ng")
        if stress_ng:
            self.kind = "stress-ng"
            self.procs = [subprocess.Popen(
                [stress_ng, "--cpu", str(self.workers), "--timeout", f"{self.limit}s", "--quiet"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)]
            print(f"contention: stress-ng --cpu {self.workers} (at most {self.limit} s)")
        else:
            self.kind = "busy-loop"
            self.procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(self.limit)],
                                           stdin=subprocess.DEVNULL, start_new_session=True)
                          for _ in range(self.workers)]
            print(f"contention: stress-ng not found, so {self.workers} busy-loop processes instead "
                  "(apt-get install stress-ng for the real thing)")

    def stop(self):
        """SIGTERM to each hog's session (stress-ng's workers are its children), SIGKILL after
        5 s; only the sessions started here, by their ids."""
        for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            alive = [p for p in self.procs if p.poll() is None]
            for proc in alive:
                kill_session(proc.pid, sig)
            for proc in alive:
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    pass
        self.procs = [p for p in self.procs if p.poll() is None]
        if self.procs:
            print(f"contention: {[p.pid for p in self.procs]} still running", file=sys.stderr)


def kill_session(pid, sig):
    """`sig` to the process group `pid` leads (a session started here with start_new_session)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def session_processes(sid):
    """'pid state command' of each process in session `sid` (for a timed-out run's log)."""
    return [f"  {pid} {fields[0]} {deadline.command_line(pid)[:300]}"
            for pid, fields in deadline.processes() if int(fields[3]) == sid]


# --- the campaign ------------------------------------------------------------------------------

class Campaign:
    """Runs the jobs on `parallel` threads, each driving one run (a process session) at a time."""

    def __init__(self, args, jobs):
        self.args = args
        self.jobs = interleaved(jobs)
        self.total = sum(count for _, count in jobs)
        self.lock = threading.Lock()
        self.running = {}  # pid -> Popen, for stop()
        self.results = []  # dicts: module, index, outcome, seconds, log
        self.stopping = False
        self.started = time.monotonic()
        self.env = dict(os.environ, SPARKTRACE_BIN=str(args.bin), PYTHONDONTWRITEBYTECODE="1",
                        SPARKTRACE_PYTHON=args.python, **{deadline.ENV: f"{args.deadline:g}"})

    def run(self):
        self.workers = [threading.Thread(target=self._work, name=f"stress-{i}", daemon=True)
                        for i in range(self.args.parallel)]
        for worker in self.workers:
            worker.start()
        for worker in self.workers:
            while worker.is_alive():
                worker.join(0.5)  # short joins: Ctrl-C reaches the main thread at once

    def stop(self):
        """No new runs; the running ones are killed with their sessions, and their threads
        given a moment to see it."""
        with self.lock:
            self.stopping = True
            running = list(self.running.values())
        for proc in running:
            kill_session(proc.pid, signal.SIGKILL)
        for worker in getattr(self, "workers", ()):
            worker.join(10)

    def _next(self):
        with self.lock:
            if self.stopping:
                return None
            if self.args.budget and time.monotonic() - self.started > self.args.budget:
                return None
            return next(self.jobs, None)

    def _work(self):
        while (job := self._next()) is not None:
            self._record(self._run_one(*job))

    def _run_one(self, module, index):
        log_path = self.args.logs / module.name.replace("/", "_") / f"run-{index:04d}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        command, cwd = module.command(self.args.python)
        started = time.monotonic()
        with open(log_path, "wb") as log:
            log.write(f"$ (cd {cwd} && {' '.join(command)})\n".encode())
            log.flush()
            with self.lock:
                if self.stopping:
                    log.close()
                    log_path.unlink()
                    return None
                proc = subprocess.Popen(command, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
                self.running[proc.pid] = proc
            timed_out = False
            try:
                proc.wait(self.args.run_timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                log.write(f"\n=== e2e_stress: still running after --run-timeout "
                          f"{self.args.run_timeout:g} s; killing its session:\n".encode())
                log.write(("\n".join(session_processes(proc.pid)) + "\n").encode())
                log.flush()
                kill_session(proc.pid, signal.SIGKILL)
                proc.wait()
            finally:
                with self.lock:
                    self.running.pop(proc.pid, None)
        seconds = time.monotonic() - started
        outcome = classify(proc.returncode, timed_out, log_path)
        if outcome == "pass" and not self.args.keep_passing:
            log_path.unlink()
        return {"module": module.name, "index": index, "outcome": outcome,
                "exit": proc.returncode, "seconds": round(seconds, 2),
                "log": None if outcome == "pass" and not self.args.keep_passing else str(log_path),
                "interrupted": self.stopping}

    def _record(self, result):
        if result is None:
            return
        with self.lock:
            if result["interrupted"] and result["outcome"] != "pass":
                return  # killed by stop(): says nothing about the module
            self.results.append(result)
            done = len(self.results)
        where = f"  {result['log']}" if result["outcome"] != "pass" else ""
        print(f"[{done}/{self.total}] {result['module']} #{result['index']}: {result['outcome']} "
              f"in {result['seconds']:.1f} s{where}", flush=True)


def classify(returncode, timed_out, log_path):
    if timed_out:
        return "hang"
    if returncode == 0:
        return "pass"
    text = log_path.read_text(errors="replace")
    if (returncode == deadline.EXIT_CODE or deadline.MARKER in text or FAULTHANDLER_TIMEOUT in text
            or NODE_TIMEOUT in text):
        return "hang"
    return "fail"


def summarize(campaign, contention, interrupted):
    modules = {}
    for result in campaign.results:
        entry = modules.setdefault(result["module"], {"runs": 0, "passes": 0, "fails": 0, "hangs": 0,
                                                      "seconds": [], "logs": []})
        entry["runs"] += 1
        entry[{"pass": "passes", "fail": "fails", "hang": "hangs"}[result["outcome"]]] += 1
        entry["seconds"].append(result["seconds"])
        if result["outcome"] != "pass":
            entry["logs"].append({"index": result["index"], "outcome": result["outcome"],
                                  "exit": result["exit"], "log": result["log"]})
    for entry in modules.values():
        seconds = entry.pop("seconds")
        entry["median_s"] = round(statistics.median(seconds), 2)
        entry["max_s"] = round(max(seconds), 2)
    args = campaign.args
    return {
        "bin": str(args.bin),
        "parallel": args.parallel,
        "contention": {"kind": contention.kind, "workers": args.contention},
        "deadline_s": args.deadline,
        "run_timeout_s": args.run_timeout,
        "budget_s": args.budget,
        "planned_runs": campaign.total,
        "completed_runs": len(campaign.results),
        "interrupted": interrupted,
        "wall_s": round(time.monotonic() - campaign.started, 1),
        "ok": not interrupted and all(r["outcome"] == "pass" for r in campaign.results),
        "modules": modules,
    }


def print_table(summary):
    print(f"\n{'module':32} {'runs':>5} {'pass':>5} {'fail':>5} {'hang':>5} {'median':>8} {'max':>8}")
    for name, m in summary["modules"].items():
        print(f"{name:32} {m['runs']:5} {m['passes']:5} {m['fails']:5} {m['hangs']:5} "
              f"{m['median_s']:7.1f}s {m['max_s']:7.1f}s")
    skipped = summary["planned_runs"] - summary["completed_runs"]
    if skipped:
        print(f"{skipped} of {summary['planned_runs']} runs not done "
              f"({'interrupted' if summary['interrupted'] else '--budget spent'})")


# --- command line ------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=ROOT / "build" / "sparktrace",
                        help="the sparktrace binary under test (default: build/sparktrace)")
    parser.add_argument("--module", action="append", default=[], metavar="NAME=COUNT",
                        help="run e2e module NAME (test_x, or node/x for tests/e2e/node/x.test.js) "
                             "COUNT times; repeatable")
    parser.add_argument("--all-e2e", type=int, default=0, metavar="COUNT",
                        help="every tests/e2e/test_*.py module COUNT times")
    parser.add_argument("--parallel", type=int, default=2, metavar="K", help="runs at a time (2)")
    parser.add_argument("--contention", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="CPU hogs (stress-ng --cpu N; 0: none; default: one per CPU)")
    parser.add_argument("--deadline", type=float, default=90, metavar="S",
                        help="SPARKTRACE_TEST_DEADLINE for each run: seconds per test (90)")
    parser.add_argument("--run-timeout", type=float, default=600, metavar="S",
                        help="a run (one module) still going after S seconds is a hang (600)")
    parser.add_argument("--budget", type=float, default=0, metavar="S",
                        help="start no run after S seconds (0: no limit but the runs' own)")
    parser.add_argument("--out", type=Path, help="JSON summary (default: LOGS/summary.json)")
    parser.add_argument("--logs", type=Path,
                        help="logs of failed and hung runs (default: a new /tmp/sparktrace-stress-*)")
    parser.add_argument("--keep-passing", action="store_true", help="keep the logs of passing runs too")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="interpreter for the Python modules (Debian's: it has grpcio)")
    args = parser.parse_args(argv)
    if not args.module and not args.all_e2e:
        parser.error("nothing to run: give --module NAME=COUNT and/or --all-e2e COUNT")
    if args.parallel < 1 or args.deadline <= 0 or args.run_timeout <= 0 or args.contention < 0:
        parser.error("--parallel, --deadline and --run-timeout must be positive, --contention >= 0")
    args.bin = args.bin.resolve()
    if not os.access(args.bin, os.X_OK):
        parser.error(f"--bin {args.bin}: not an executable (build it, or point --bin at one)")
    try:
        args.jobs = parse_jobs(args)
    except ValueError as error:
        parser.error(str(error))
    if any(module.is_node for module, _ in args.jobs) and not (NODE / "node_modules").is_dir():
        parser.error(f"{NODE}/node_modules is missing: run npm ci there (make deps)")
    args.logs = (args.logs or Path(tempfile.mkdtemp(prefix="sparktrace-stress-"))).resolve()
    args.logs.mkdir(parents=True, exist_ok=True)
    args.out = (args.out or args.logs / "summary.json").resolve()
    return args


def interrupt(signum, frame):
    """SIGTERM ends the campaign as Ctrl-C does: runs and contention stopped, summary written."""
    raise KeyboardInterrupt


def main(argv=None):
    sys.stdout.reconfigure(line_buffering=True)  # progress lines as they happen, also in a pipe
    args = parse_args(sys.argv[1:] if argv is None else argv)
    campaign = Campaign(args, args.jobs)
    worst = math.ceil(campaign.total / args.parallel) * args.run_timeout
    bound = min(worst, args.budget + args.run_timeout) if args.budget else worst
    print(f"{campaign.total} runs of {len(args.jobs)} module(s), {args.parallel} at a time; "
          f"deadline {args.deadline:g} s per test, {args.run_timeout:g} s per run; "
          f"at most {bound / 60:.0f} min; logs in {args.logs}")
    contention = Contention(args.contention, bound + 60)
    signal.signal(signal.SIGTERM, interrupt)
    interrupted = False
    try:
        contention.start()
        campaign.run()
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: stopping the runs and the contention", file=sys.stderr)
        campaign.stop()
    finally:
        contention.stop()
    for folder in args.logs.iterdir():  # the modules whose every run passed left nothing
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    summary = summarize(campaign, contention, interrupted)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print_table(summary)
    print(f"summary: {args.out}")
    if interrupted:
        return 130
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
