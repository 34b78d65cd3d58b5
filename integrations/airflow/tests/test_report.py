"""The task attempt reported to sparktrace: POST {base}/api/v1/airflow/task-attempts.

Against real HTTP servers on 127.0.0.1 port 0 written here (http.server): one that answers 202 (or
what a test asks), one that accepts connections and never answers, and a closed port. No sleeps:
tests wait on events and on the plugin's own bounded flush. Which tasks report, when ``running`` and
the final state are sent, that the task's thread never waits, that nothing raises or leaks the token,
and that the final report survives the process's exit (``atexit``, and Airflow 2.x's
``logging.shutdown()`` + ``os._exit()``)."""

import hashlib
import http.server
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
from datetime import datetime, timezone
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceListener, TaskIdentity
from tests import pyspark_shapes as shapes
from tests._support import BashOperator, FakeTaskInstance, SparkSubmitOperator, fake_airflow, remove_fake_airflow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUN = "manual__2026-11-25T06:00:00+00:00"
START = datetime(2026, 11, 25, 6, 0, 1, 250000, tzinfo=timezone.utc)
END = datetime(2026, 11, 25, 6, 3, 0, tzinfo=timezone.utc)
WAIT = 10  # seconds: every wait on the server is bounded


def ns(moment):
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


class ReportServer:
    """Records each POST (path, headers, JSON body) and answers ``status`` (202 by default)."""

    def __init__(self, status=202, headers=None, body=b""):
        self.requests = []
        self.cond = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.cond:
                    outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(data)))
                    outer.cond.notify_all()
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def wait_for(self, count, timeout=WAIT):
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"{len(self.requests)} reports within {timeout}s, want {count}: {self.requests}")
            return list(self.requests)

    def states(self):
        with self.cond:
            return [body["state"] for _, _, body in self.requests]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """Accepts connections (the kernel does, from the backlog) and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def stop(self):
        self.sock.close()


def closed_port_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


class ReportCase(unittest.TestCase):
    def setUp(self):
        self.meta_path = list(sys.meta_path)
        self.environment = mock.patch.dict(os.environ, {})
        self.environment.start()
        for name in ("SPARKTRACE_REPORT", "SPARKTRACE_REPORT_URL", "SPARKTRACE_TOKEN", "SPARKTRACE_TOKEN_FILE",
                     "SPARKTRACE_UI_URL"):
            os.environ.pop(name, None)
        fake_airflow("2.10.5")
        # A fresh reporter per test (the plugin keeps one per process).
        plugin._process_state().pop("reporter", None)

    def tearDown(self):
        plugin.flush_reports(2)
        plugin.uninstall_metadata_wrapper()
        shapes.unload()
        remove_fake_airflow()
        self.environment.stop()
        sys.meta_path[:] = self.meta_path

    def server(self, **kw):
        server = ReportServer(**kw)
        self.addCleanup(server.stop)
        os.environ["SPARKTRACE_REPORT_URL"] = server.url
        return server

    def ti(self, task_id="submit", operator=None, try_number=1, map_index=-1, **kw):
        operator = SparkSubmitOperator() if operator is None else operator
        return FakeTaskInstance("etl", task_id, RUN, try_number, map_index, task=operator, start_date=START,
                                hostname="worker-1", **kw)

    def results(self):
        reporter = plugin._process_state().get("reporter")
        return list(reporter.results) if reporter is not None else []


class Derivation(unittest.TestCase):
    def test_canonical_key_and_the_traceparent_recomputed_from_the_formula(self):
        identity = TaskIdentity("etl", "load", "", 1, -1)
        self.assertEqual(plugin.attempt_key(identity), b"airflow-task-attempt/v1\n3:etl\n4:load\n0:\n1\n-1\n")
        for identity in (identity, TaskIdentity("d\u00e9j\u00e0", "t", RUN, 3, 12)):
            key = ("airflow-task-attempt/v1\n" + "".join(
                f"{len(part.encode())}:{part}\n" for part in (identity.dag_id, identity.task_id, identity.run_id))
                + f"{identity.try_number}\n{identity.map_index}\n").encode()
            digest = hashlib.sha256(key).digest()
            self.assertEqual(plugin.derived_traceparent(identity),
                             f"00-{digest[:16].hex()}-{digest[16:24].hex()}-01")

    def test_an_all_zero_id_gets_a_last_byte_of_one(self):
        with mock.patch.object(plugin.hashlib, "sha256") as sha:
            sha.return_value.digest.return_value = bytes(32)
            self.assertEqual(plugin.derived_traceparent(TaskIdentity("d", "t")),
                             "00-" + "0" * 31 + "1-" + "0" * 15 + "1-01")


class Body(unittest.TestCase):
    def test_fields_types_and_limits(self):
        identity = TaskIdentity("etl", "load", RUN, 2, 4)
        body = plugin.attempt_report(identity, "running", "Spark\tSubmit\u00e9Operator" + "x" * 300, 10, 5,
                                     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v", "host", "2.10.5")
        self.assertEqual(body["dag_id"], "etl")
        self.assertEqual((body["try_number"], body["map_index"]), (2, 4))
        self.assertEqual(body["end_time_unix_nano"], 10, "never before the start")
        self.assertEqual(len(body["operator"]), 250)
        self.assertTrue(body["operator"].startswith("SparkSubmitOperator"))
        self.assertEqual(body["tracestate"], "k=v")
        for bad_state in ("Running", "up-for-retry", "", "x" * 33):
            with self.assertRaises(ValueError):
                plugin.attempt_report(identity, bad_state, "Op", 1, 2)
        with self.assertRaises(ValueError):
            plugin.attempt_report(TaskIdentity("", "t"), "running", "Op", 1, 2)
        minimal = plugin.attempt_report(identity, "failed", "Op", 1, 2)
        self.assertEqual(set(minimal), {"dag_id", "task_id", "run_id", "try_number", "map_index", "state", "operator",
                                        "start_time_unix_nano", "end_time_unix_nano"})

    def test_settings_from_airflow_config_then_environment_then_ui_url(self):
        with mock.patch.dict(os.environ, {"SPARKTRACE_UI_URL": "http://ui:9464"}, clear=True):
            remove_fake_airflow()
            self.assertEqual(plugin.report_settings(), ("auto", "http://ui:9464", ""))
            os.environ.update(SPARKTRACE_REPORT_URL="http://env:1", SPARKTRACE_TOKEN="t0k", SPARKTRACE_REPORT="ALL")
            self.assertEqual(plugin.report_settings(), ("all", "http://env:1", "t0k"))
            fake_airflow("3.1.0", {("sparktrace", "report_url"): "http://conf:2", ("sparktrace", "token"): "c0nf",
                                   ("sparktrace", "report"): "off"})
            try:
                self.assertEqual(plugin.report_settings(), ("off", "http://conf:2", "c0nf"))
            finally:
                remove_fake_airflow()


class WhenAndWhat(ReportCase):
    def test_spark_operator_reports_running_at_start_then_success(self):
        server = self.server()
        os.environ["SPARKTRACE_TOKEN"] = "s3cret"
        ti = self.ti()
        SparktraceListener().on_task_instance_running(None, ti)
        (path, headers, running), = server.wait_for(1)
        self.assertEqual(path, "/api/v1/airflow/task-attempts")
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(headers["authorization"], "Bearer s3cret")
        identity = TaskIdentity("etl", "submit", RUN, 1, -1)
        self.assertEqual(running["state"], "running")
        self.assertEqual(running["operator"], "SparkSubmitOperator")
        self.assertEqual(running["start_time_unix_nano"], ns(START))
        self.assertGreaterEqual(running["end_time_unix_nano"], running["start_time_unix_nano"])
        self.assertEqual(running["traceparent"], plugin.derived_traceparent(identity))
        self.assertEqual((running["hostname"], running["airflow_version"]), ("worker-1", "2.10.5"))
        self.assertEqual((running["dag_id"], running["task_id"], running["run_id"], running["try_number"],
                          running["map_index"]), ("etl", "submit", RUN, 1, -1))
        ti.state, ti.end_date = "success", END
        SparktraceListener().on_task_instance_success(None, ti)
        final = server.wait_for(2)[1][2]
        self.assertEqual(final["state"], "success")
        self.assertEqual(final["end_time_unix_nano"], ns(END))
        self.assertEqual(final["traceparent"], running["traceparent"])

    def test_failed_says_up_for_retry_or_failed_as_airflow_set_it(self):
        for state in ("up_for_retry", "failed"):
            with self.subTest(state=state):
                server = self.server()
                ti = self.ti(task_id=f"t_{state}")
                SparktraceListener().on_task_instance_running(None, ti)
                server.wait_for(1)  # else the final report replaces the waiting running one
                ti.state = state
                SparktraceListener().on_task_instance_failed(None, ti, RuntimeError("boom"))
                server.wait_for(2)
                self.assertEqual(server.states(), ["running", state])

    def test_a_task_without_spark_in_its_name_reports_only_after_a_spark_connect_call(self):
        server = self.server()
        ti = self.ti(task_id="bash", operator=BashOperator())
        with shapes.recording_channels():
            client = shapes.load("4.0").SparkConnectClient("sc://h:1/")
            SparktraceListener().on_task_instance_running(None, ti)
            self.assertTrue(plugin.flush_reports(2))
            self.assertEqual(server.states(), [], "no Spark Connect call yet: not reported")
            client.get_configs("k")  # the first call sends running (off this thread)
            server.wait_for(1)
            client.get_configs("k")
        ti.state = "success"
        SparktraceListener().on_task_instance_success(None, ti)
        server.wait_for(2)
        self.assertEqual(server.states(), ["running", "success"])
        self.assertEqual(self.results()[0][0], "running")

    def test_a_final_report_replaces_a_running_one_not_sent_yet(self):
        server = self.server()
        gate, entered = threading.Event(), threading.Event()
        real_post = plugin.post_attempt_report

        def held_post(base_url, body, token="", deadline=None):
            entered.set()
            gate.wait(WAIT)
            return real_post(base_url, body, token, time.monotonic() + 1)

        with mock.patch.object(plugin, "post_attempt_report", held_post):
            first, second = self.ti(task_id="first"), self.ti(task_id="second")
            SparktraceListener().on_task_instance_running(None, first)
            self.assertTrue(entered.wait(WAIT))  # in flight, held
            SparktraceListener().on_task_instance_running(None, second)  # waiting
            second.state = "success"
            SparktraceListener().on_task_instance_success(None, second)  # replaces it
            gate.set()
            server.wait_for(2)
            self.assertTrue(plugin.flush_reports(2))
        self.assertEqual([(body["task_id"], body["state"]) for _, _, body in server.requests],
                         [("first", "running"), ("second", "success")])

    def test_no_spark_no_report_unless_report_all(self):
        server = self.server()
        ti = self.ti(task_id="plain", operator=BashOperator(), state="success")
        SparktraceListener().on_task_instance_running(None, ti)
        SparktraceListener().on_task_instance_success(None, ti)
        self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(server.states(), [])
        os.environ["SPARKTRACE_REPORT"] = "all"
        ti = self.ti(task_id="plain2", operator=BashOperator(), state="success")
        SparktraceListener().on_task_instance_running(None, ti)
        server.wait_for(1)
        SparktraceListener().on_task_instance_success(None, ti)
        server.wait_for(2)
        self.assertEqual(server.states(), ["running", "success"])

    def test_report_off_sends_nothing(self):
        server = self.server()
        os.environ["SPARKTRACE_REPORT"] = "off"
        ti = self.ti(state="success")
        SparktraceListener().on_task_instance_running(None, ti)
        SparktraceListener().on_task_instance_success(None, ti)
        self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(server.states(), [])

    def test_hooks_of_another_process_report_nothing(self):
        """The API server calls on_task_instance_success/failed when a user marks a task: no attempt
        ran there, so nothing is reported from there."""
        server = self.server()
        SparktraceListener().on_task_instance_success(None, self.ti(state="success"))
        SparktraceListener().on_task_instance_failed(None, self.ti(state="failed"), "marked")
        self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(server.states(), [])

    def test_skipped_hook_and_the_exit_fallback(self):
        server = self.server()
        ti = self.ti(task_id="skipper")
        SparktraceListener().on_task_instance_running(None, ti)
        server.wait_for(1)
        ti.state = "skipped"
        SparktraceListener().on_task_instance_skipped(None, ti)
        server.wait_for(2)
        self.assertEqual(server.states(), ["running", "skipped"])
        # 2.x has no skip hook (nor one for reschedules, deferrals): at exit, the state the task ended in.
        ti2 = self.ti(task_id="rescheduled")
        SparktraceListener().on_task_instance_running(None, ti2)
        server.wait_for(3)
        ti2.state = "up_for_reschedule"
        plugin._flush_reports_at_exit()
        server.wait_for(4)
        self.assertEqual(server.states()[2:], ["running", "up_for_reschedule"])
        plugin._flush_reports_at_exit()  # twice: nothing more
        self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(len(server.states()), 4)

    def test_final_never_overtaken_by_running_and_a_waiting_report_is_replaced(self):
        gate = threading.Event()
        entered = threading.Event()
        real_post = plugin.post_attempt_report
        order = []

        def slow_post(base_url, body, token="", deadline=None):
            state = json.loads(body)["state"]
            if state == "running":
                entered.set()
                gate.wait(WAIT)
            order.append(state)
            return real_post(base_url, body, token, deadline)

        server = self.server()
        with mock.patch.object(plugin, "post_attempt_report", slow_post):
            ti = self.ti()
            SparktraceListener().on_task_instance_running(None, ti)
            self.assertTrue(entered.wait(WAIT))
            ti.state = "failed"
            SparktraceListener().on_task_instance_failed(None, ti, None)
            ti.state = "success"  # a later terminal report replaces the one still waiting
            SparktraceListener().on_task_instance_success(None, ti)
            gate.set()
            server.wait_for(2)
            self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(order, ["running", "success"])
        self.assertEqual(server.states(), ["running", "success"])


class NeverSlowsNorFails(ReportCase):
    def test_unreachable_sparktrace_is_one_quiet_log_line(self):
        os.environ["SPARKTRACE_REPORT_URL"] = closed_port_url()
        os.environ["SPARKTRACE_TOKEN"] = "s3cret"
        ti = self.ti()
        with self.assertLogs("sparktrace_airflow", logging.DEBUG) as logs:
            SparktraceListener().on_task_instance_running(None, ti)
            self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(self.results(), [("running", None, "connection refused")])
        lines = [line for line in logs.output if "not reported" in line]
        self.assertEqual(len(lines), 1, logs.output)
        self.assertTrue(lines[0].startswith("INFO:"), lines[0])
        self.assertNotIn("s3cret", "\n".join(logs.output))

    def test_a_server_that_never_answers_costs_the_task_nothing_and_the_exit_at_most_one_second(self):
        silent = SilentServer()
        self.addCleanup(silent.stop)
        os.environ["SPARKTRACE_REPORT_URL"] = silent.url
        ti = self.ti(state="success")
        started = time.monotonic()
        SparktraceListener().on_task_instance_running(None, ti)
        SparktraceListener().on_task_instance_success(None, ti)
        self.assertLess(time.monotonic() - started, 0.5, "the listener must not wait for sparktrace")
        started = time.monotonic()
        plugin._flush_reports_at_exit()
        waited = time.monotonic() - started
        self.assertLess(waited, 1.5, "the exit waits one second at most")
        self.assertTrue(plugin.flush_reports(3))
        # The final report either replaced running before it was sent, or waited behind it (which timed
        # out after its second) and had no time left; either way nothing arrived and nothing raised.
        results = self.results()
        self.assertEqual(results[-1][:2], ("success", None))
        self.assertIn([state for state, _, _ in results], (["success"], ["running", "success"]))
        for state, status, reason in results:
            self.assertIsNone(status)
            self.assertIn(reason, ("timed out", "no time left"))

    def test_refusals_are_logged_not_retried_and_secrets_stay_out_of_the_log(self):
        server = ReportServer(status=503, headers={"Retry-After": "3", "Content-Type": "application/json"},
                              body=b'{"error": "queue full"}')
        self.addCleanup(server.stop)
        parts = server.url.split("//")
        os.environ["SPARKTRACE_REPORT_URL"] = f"{parts[0]}//user:pa55word@{parts[1]}/prefix/"
        os.environ["SPARKTRACE_TOKEN"] = "s3cret"
        with self.assertLogs("sparktrace_airflow", logging.INFO) as logs:
            SparktraceListener().on_task_instance_running(None, self.ti())
            server.wait_for(1)
            self.assertTrue(plugin.flush_reports(2))
        self.assertEqual(server.requests[0][0], "/prefix/api/v1/airflow/task-attempts")
        self.assertEqual(len(server.requests), 1, "not retried")
        text = "\n".join(logs.output)
        self.assertIn("HTTP 503: queue full (retry after 3s; not retried)", text)
        self.assertIn(f"{server.url}/prefix/api/v1/airflow/task-attempts", text)
        for secret in ("s3cret", "pa55word", "user:"):
            self.assertNotIn(secret, text)

    def test_post_attempt_report_never_raises(self):
        for url in ("", "ftp://x/", "http://", "not a url", "http://[::1"):
            status, reason = plugin.post_attempt_report(url, b"{}")
            self.assertIsNone(status, url)
            self.assertTrue(reason)
        self.assertEqual(plugin.post_attempt_report(closed_port_url(), b"{}", "bad\ntoken"),
                         (None, "token is not printable ASCII"))
        self.assertEqual(plugin.post_attempt_report(closed_port_url(), b"x" * (64 * 1024 + 1)),
                         (None, "report too large"))


EXIT_SCRIPT = r"""
import logging, os, sys
sys.path[:0] = [{root!r}]
from tests._support import FakeTaskInstance, SparkSubmitOperator, fake_airflow
from sparktrace_airflow import sparktrace_plugin as plugin
fake_airflow("2.10.5")
ti = FakeTaskInstance("etl", "exiting", "r", 1, task=SparkSubmitOperator())
plugin.SparktraceListener().on_task_instance_running(None, ti)
assert plugin.flush_reports(5)  # running delivered; the final one is left to the exit
ti.state = "success"
plugin.SparktraceListener().on_task_instance_success(None, ti)
if sys.argv[1] == "os_exit":
    # Airflow 2.x's forked task runner: logging.shutdown() in a finally, then os._exit (no atexit).
    logging.shutdown()
    os._exit(0)
"""


class SurvivesTheProcessExit(unittest.TestCase):
    def run_child(self, how):
        server = ReportServer()
        self.addCleanup(server.stop)
        environment = dict(os.environ, SPARKTRACE_REPORT_URL=server.url, PYTHONDONTWRITEBYTECODE="1")
        result = subprocess.run([sys.executable, "-c", EXIT_SCRIPT.format(root=ROOT), how], env=environment,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        server.wait_for(2)
        self.assertEqual(server.states(), ["running", "success"])

    def test_normal_exit_runs_the_atexit_flush(self):
        self.run_child("return")

    def test_logging_shutdown_then_os_exit_flushes_too(self):
        self.run_child("os_exit")


if __name__ == "__main__":
    unittest.main()
