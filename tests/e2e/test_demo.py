"""`sparktrace demo` (what `make run` runs): the simulator and the proxy as child processes, an
Airflow task's calls through the proxy, the trace they leave in the store, and no child process
left behind however the demo ends.

Every demo child inherits a marker variable in its environment (the demo passes its environment on,
minus SPARKTRACE_*), so the processes of one demo can be found in /proc, even once reparented.
"""

import json
import os
import queue
import re
import signal
import socket
import subprocess
import tempfile
import threading
import unittest
import uuid
from pathlib import Path

import harness
from harness import BIN, http_get, proxy_env, wait_until

RUN_TIMEOUT = 90  # seconds for a whole `demo --once`; generous for sanitizer builds
TRACEPARENT_RE = re.compile(r"traceparent: 00-([0-9a-f]{32})-([0-9a-f]{16})-01")
ADMIN_RE = re.compile(r"^admin: +http://(127\.0\.0\.1:\d+)/metrics", re.M)
PROXY_RE = re.compile(r"^  proxy +(127\.0\.0\.1:(\d+)) ", re.M)
OPERATION_RE = re.compile(r"^  (query|write|slow query) +([0-9a-f-]{36})  outcome=(\w+)", re.M)
# Not SPARKTRACE_*: the demo leaves those out of its children's environment.
MARKER_VARIABLE = "DEMO_TEST_MARKER"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")


def processes_with_marker(marker):
    """Pids of live processes whose environment holds MARKER=marker (zombies have none)."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours
            pass
    return found


class DemoRun:
    """One `sparktrace demo` with its own store and marker; stderr goes to a file."""

    def __init__(self, add_cleanup, *args, listen=("--listen", "127.0.0.1:0")):
        if not os.access(BIN, os.X_OK):
            raise AssertionError(f"binary {BIN} missing (set SPARKTRACE_BIN)")
        self.tmpdir = tempfile.TemporaryDirectory(prefix="sparktrace-demo-")
        add_cleanup(self.tmpdir.cleanup)
        self.store = str(Path(self.tmpdir.name) / "demo.db")
        self.event_logs = Path(self.tmpdir.name) / "events"
        self.marker = uuid.uuid4().hex
        self.env = proxy_env({MARKER_VARIABLE: self.marker})
        self.argv = [BIN, "demo", "--store", self.store, "--event-log-dir", str(self.event_logs), *listen, *args]
        self.stderr_path = Path(self.tmpdir.name) / "stderr.log"
        add_cleanup(self.kill_leftovers)

    def run_once(self):
        with open(self.stderr_path, "wb") as stderr:
            result = subprocess.run(self.argv + ["--once"], env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=RUN_TIMEOUT)
        return result.returncode, result.stdout

    def start(self):
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        self.lines = queue.Queue()

        def pump():
            for line in self.proc.stdout:
                self.lines.put(line)
            self.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        return self

    def read_until(self, text, timeout=RUN_TIMEOUT):
        """stdout up to and including the first line containing `text`."""
        seen = []
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout}s; stdout so far:\n{''.join(seen)}"
                                     f"\n{self.stderr()}")
            if line is None:
                raise AssertionError(f"demo exited ({self.exit_code()}) before {text!r}:\n{''.join(seen)}"
                                     f"\n{self.stderr()}")
            seen.append(line)
            if text in line:
                return "".join(seen)

    def exit_code(self, timeout=10):
        """The demo's exit code once its stdout closed; bounded, as closing stdout is not exiting."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return f"stdout closed, still running {timeout}s later"

    def stderr(self):
        return "--- demo stderr ---\n" + self.stderr_path.read_text(errors="replace")

    def children(self):
        """The live processes of this demo, other than the demo itself."""
        demo_pid = self.proc.pid if getattr(self, "proc", None) is not None else None
        return [pid for pid in processes_with_marker(self.marker) if pid != demo_pid]

    def kill_leftovers(self):
        for pid in self.children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if getattr(self, "proc", None) is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
            self._stderr.close()


@harness.proxy_only
class DemoOnceTest(unittest.TestCase):
    """One `demo --once`, checked from its output and from the store it leaves."""

    @classmethod
    def setUpClass(cls):
        cls.demo = DemoRun(cls.addClassCleanup)
        cls.code, cls.out = cls.demo.run_once()
        cls.err = cls.demo.stderr()
        cls.leftovers = cls.demo.children()

    def context(self):
        return f"\n--- demo stdout ---\n{self.out}\n{self.err}"

    def test_exits_0_and_leaves_no_process(self):
        self.assertEqual(self.code, 0, self.context())
        self.assertEqual(self.leftovers, [], "processes of the demo still running after it exited")
        for marker in SANITIZER_MARKERS:
            self.assertNotIn(marker, self.err)

    def test_tree_shows_the_operations_and_their_outcomes(self):
        self.assertIn("spark_connect.operation", self.out, self.context())
        self.assertIn("spark.connect.SparkConnectService/ReattachExecute", self.out, self.context())
        self.assertIn("spark.connect.SparkConnectService/Interrupt", self.out, self.context())
        self.assertIn("dag=daily_sales", self.out, self.context())
        outcomes = {label: outcome for label, _, outcome in OPERATION_RE.findall(self.out)}
        self.assertEqual(outcomes, {"query": "completed", "write": "completed", "slow query": "interrupted"},
                         self.context())
        self.assertRegex(self.out, r"query +[0-9a-f-]{36}  outcome=completed  reattached 1x", self.context())

    def test_ends_with_the_attempts_settled_cost(self):
        # The proxy settles the attempt a second after its last span (the demo's --settle-quiet); the
        # demo waits for it, so the task list shows its cost (tests/e2e/test_trace_view.py reads it there).
        self.assertRegex(self.out, r"(?m)^cost: +\d+ core-s, \d+ GiB-s \(settled(; a regression of its task)?\)$",
                         self.context())
        self.assertRegex(self.out, r"(?m)^ +the task list, most expensive first: http://[0-9.:]+/\?sort=-cost$",
                         self.context())

    def test_prints_where_to_look_next(self):
        self.assertRegex(self.out, ADMIN_RE, self.context())
        self.assertIn(f"traces list --store {self.demo.store}", self.out, self.context())
        match = PROXY_RE.search(self.out)
        self.assertIsNotNone(match, self.context())
        self.assertIn(f'remote("sc://{match.group(1)}")', self.out, self.context())

    def test_store_holds_the_trace_as_printed(self):
        """The same trace read back with `sparktrace traces show --json`: one trace under the task's
        span, operations as parents of the calls that named them, across connections."""
        match = TRACEPARENT_RE.search(self.out)
        self.assertIsNotNone(match, self.context())
        trace_id, task_span_id = match.groups()
        self.assertIn(f"trace {trace_id}", self.out, self.context())
        shown = harness.run_cli(["traces", "show", trace_id, "--store", self.demo.store, "--json"])
        self.assertEqual(shown.returncode, 0, shown.stderr)
        spans = json.loads(shown.stdout)["spans"]
        by_id = {span["span_id"]: span for span in spans}

        task = by_id.get(task_span_id)
        self.assertIsNotNone(task, "the Airflow task's span is missing")
        self.assertEqual(task["name"], "airflow.task")
        self.assertEqual([s["span_id"] for s in spans if s["orphan"]], [], "spans whose parent is missing")

        operations = {s["attributes"]["spark.connect.operation_id"]: s for s in spans
                      if s["name"] == "spark_connect.operation"}
        printed = {op_id: (label, outcome) for label, op_id, outcome in OPERATION_RE.findall(self.out)}
        self.assertEqual(set(operations), set(printed), "operations printed vs stored")
        for op_id, (label, outcome) in printed.items():
            with self.subTest(operation=label):
                span = operations[op_id]
                self.assertEqual(span["parent_span_id"], task_span_id)
                self.assertEqual(span["attributes"]["spark.connect.operation.outcome"], outcome)
                self.assertEqual(span["attributes"]["airflow.dag_id"], "daily_sales")
                self.assertEqual(span["attributes"]["airflow.task_id"], "load_orders")

        def children(op_label):
            """The RPC spans under an operation (the driver's spans are checked below)."""
            op_id = next(i for i, (label, _) in printed.items() if label == op_label)
            return sorted(s["name"].rsplit("/", 1)[-1] for s in spans
                          if s["parent_span_id"] == operations[op_id]["span_id"]
                          and s["name"].startswith("spark.connect.SparkConnectService/"))

        self.assertEqual(children("query"), ["ExecutePlan", "ReattachExecute", "ReleaseExecute"])
        self.assertEqual(children("write"), ["ExecutePlan"])
        self.assertEqual(children("slow query"), ["ExecutePlan", "Interrupt"])
        self.assertEqual(sorted(s["name"].rsplit("/", 1)[-1] for s in spans
                                if s["parent_span_id"] == task_span_id and s["name"] != "spark_connect.operation"),
                         ["AnalyzePlan", "AnalyzePlan", "Config"])

    def test_the_store_holds_the_tasks_trace_only(self):
        """The Spark Connect server's driver-level time is in the operations' traces: no second,
        empty spark.application trace of the server (it used to be left "running", 0 s)."""
        match = TRACEPARENT_RE.search(self.out)
        self.assertIsNotNone(match, self.context())
        listed = harness.run_cli(["traces", "list", "--store", self.demo.store, "--limit", "0", "--json"])
        self.assertEqual(listed.returncode, 0, listed.stderr)
        traces = {t for attempt in json.loads(listed.stdout)["attempts"] for t in attempt["trace_ids"]}
        self.assertEqual(traces, {match.group(1)})

    def test_operations_show_the_simulated_drivers_jobs_stages_and_phases(self):
        """The simulator's event log reached the proxy: under each operation, its jobs with their stages and
        the phases, and the scenario's slow executor allocation as resource wait of the first operation."""
        trace_id = TRACEPARENT_RE.search(self.out).group(1)
        shown = harness.run_cli(["traces", "show", trace_id, "--store", self.demo.store, "--json"])
        self.assertEqual(shown.returncode, 0, shown.stderr)
        spans = json.loads(shown.stdout)["spans"]
        by_id = {span["span_id"]: span for span in spans}
        printed = {label: op_id for label, op_id, _ in OPERATION_RE.findall(self.out)}
        operations = {s["attributes"]["spark.connect.operation_id"]: s for s in spans
                      if s["name"] == "spark_connect.operation"}
        for label, op_id in printed.items():
            with self.subTest(operation=label):
                op_span = operations[op_id]
                under = [s for s in spans if s["parent_span_id"] == op_span["span_id"]]
                names = {s["name"] for s in under}
                self.assertIn("spark.connect.operation.lifecycle", names)
                jobs = [s for s in under if s["name"] == "spark.job"]
                self.assertTrue(jobs, f"no spark.job under {label}")
                for job in jobs:
                    self.assertEqual(job["attributes"]["spark.connect.operation_id"], op_id)
                    stages = [s for s in spans if s["parent_span_id"] == job["span_id"]]
                    self.assertTrue(stages and all(s["name"] == "spark.stage" for s in stages), job)
                self.assertTrue(any(n.startswith("spark.phase.") for n in names), names)
                self.assertTrue(all(by_id.get(s["parent_span_id"]) for s in under))
        first = [s for s in spans if s["parent_span_id"] == operations[printed["query"]]["span_id"]]
        waits = [s for s in first if s["name"] == "spark.phase.resource_wait"]
        self.assertTrue(waits, "slow executor allocation shows as the first operation's resource wait")
        self.assertGreater(waits[0]["attributes"]["spark.phase.total_ms"], 1000)
        writes = [s for s in spans if s["parent_span_id"] == operations[printed["write"]]["span_id"]
                  and s["name"] == "spark.phase.io_write"]
        self.assertTrue(writes, "the write operation's result stage is io_write")
        self.assertRegex(self.out, r"driver phases: resource_wait \d", self.context())
        # The diagnosis rules (time floors scaled to the demo) name the scenario's slow executor allocation.
        lifecycle = next(s for s in first if s["name"] == "spark.connect.operation.lifecycle")
        findings = [e["attributes"]["finding.id"] for e in lifecycle.get("events", [])
                    if e["name"] == "sparktrace.finding"]
        self.assertIn("resource-wait-long", findings, lifecycle)
        self.assertRegex(self.out, r"finding: \[critical\] resource-wait-long ~\d", self.context())

    def test_the_event_log_is_diagnosable_offline(self):
        match = re.search(r"diagnose --rules (\S+) (\S+)", self.out)
        self.assertIsNotNone(match, self.context())
        self.assertTrue(match.group(2).startswith(str(self.demo.event_logs)), match.group(2))
        diagnosed = harness.run_cli(["diagnose", "--rules", match.group(1), match.group(2), "--json"])
        self.assertEqual(diagnosed.returncode, 0, diagnosed.stderr)
        report = json.loads(diagnosed.stdout)
        printed = {op_id for _, op_id, _ in OPERATION_RE.findall(self.out)}
        operations = {op["operation_id"]: op for app in report["applications"] for op in app.get("operations", [])}
        self.assertEqual(printed, set(operations))
        query = re.search(r"^  query +([0-9a-f-]{36})", self.out, re.M).group(1)
        self.assertIn("resource-wait-long", [f["id"] for f in operations[query]["findings"]])
        # The scenario's join explodes (the simulator's SQL plans): a plan finding naming the operator.
        exploding = [f for f in operations[query]["findings"] if f["id"] == "exploding-join"]
        self.assertTrue(exploding, [f["id"] for f in operations[query]["findings"]])
        self.assertEqual(exploding[0]["scope"]["kind"], "sql-operator")
        self.assertEqual(exploding[0]["scope"]["plan_node_name"], "BroadcastHashJoin")


@harness.proxy_only
class DemoServingTest(unittest.TestCase):
    def test_serves_until_sigint_then_stops_its_children(self):
        demo = DemoRun(self.addCleanup).start()
        out = demo.read_until("serving until Ctrl-C")
        admin = ADMIN_RE.search(out)
        self.assertIsNotNone(admin, out)
        status, _, body = http_get(admin.group(1), "/metrics")
        self.assertEqual(status, 200)
        self.assertIn("sparktrace_rpc_calls_total", body)
        self.assertEqual(len(demo.children()), 2, "expected the simulator and the proxy")

        demo.proc.send_signal(signal.SIGINT)
        self.assertEqual(demo.proc.wait(30), 0, demo.stderr())
        self.assertEqual(demo.children(), [], "children left after the demo exited")

    def test_children_die_with_a_killed_demo(self):
        demo = DemoRun(self.addCleanup).start()
        demo.read_until("serving until Ctrl-C")
        self.assertEqual(len(demo.children()), 2)
        demo.proc.kill()  # no chance to clean up: PR_SET_PDEATHSIG must do it
        demo.proc.wait(10)
        # Process exit has no event we can wait on from here; poll /proc.
        wait_until(lambda: not demo.children(), 10, message="the demo's children to die with it")

    def test_a_child_that_dies_ends_the_demo_with_an_error(self):
        demo = DemoRun(self.addCleanup).start()
        demo.read_until("serving until Ctrl-C")
        proxy = [pid for pid in demo.children()
                 if b"proxy" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
        self.assertEqual(len(proxy), 1, "expected one proxy child")
        os.kill(proxy[0], signal.SIGKILL)
        self.assertEqual(demo.proc.wait(30), 1)
        self.assertIn("the proxy was killed by SIGKILL", demo.stderr())
        self.assertEqual(demo.children(), [])


@harness.proxy_only
class DemoStartupTest(unittest.TestCase):
    def test_default_port_taken_falls_back_to_a_free_port(self):
        # Hold the default port; if something else already does, the case is the same.
        holder = socket.socket()
        self.addCleanup(holder.close)
        try:
            holder.bind(("127.0.0.1", 15002))
            holder.listen()
        except OSError:
            pass
        demo = DemoRun(self.addCleanup, listen=())
        code, out = demo.run_once()
        self.assertEqual(code, 0, out + demo.stderr())
        self.assertIn("127.0.0.1:15002 is taken", demo.stderr())
        match = PROXY_RE.search(out)
        self.assertIsNotNone(match, out)
        self.assertNotEqual(match.group(2), "15002")

    def test_proxy_that_cannot_listen_is_a_clear_error(self):
        holder = socket.socket()
        self.addCleanup(holder.close)
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = f"127.0.0.1:{holder.getsockname()[1]}"
        demo = DemoRun(self.addCleanup, listen=("--listen", taken))
        code, _ = demo.run_once()
        self.assertEqual(code, 1, demo.stderr())
        self.assertIn("the proxy exited with code 1 before printing a line", demo.stderr())
        self.assertEqual(demo.children(), [])

    def test_bad_flag_exits_2(self):
        result = harness.run_cli(["demo", "--log-level", "loud"])
        self.assertEqual(result.returncode, 2)
        self.assertIn("log-level", result.stderr)

    def test_help_lists_the_flags(self):
        result = harness.run_cli(["demo", "--help"])
        self.assertEqual(result.returncode, 0, result.stderr)
        for flag in ("--once", "--store", "--listen", "--log-level"):
            self.assertIn(flag, result.stdout)


if __name__ == "__main__":
    unittest.main()
