"""The driver-event push endpoint (POST /api/v1/events on the admin port) and what the feed makes
of driver events without Spark Connect: a trace per application (spark.application → spark.job →
spark.stage) and the spark_* phase gauges on /metrics (docs/tracing.md, "Driver events").

The log pushed is a real one: a plain spark-shell application with a failed job
($SPARKTRACE_DATA_DIR/spark-events/local-1422981780767). Expected figures come from
`sparktrace diagnose --json` of the same log, not from constants.
"""

import hashlib
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import harness
from promtext import Metrics
from test_tracing import Store

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("SPARKTRACE_DATA_DIR") or HERE.parents[2] / "shared" / "data")
LOG = DATA / "spark-events" / "local-1422981780767"
APP_ID = "local-1422981780767"
needs_log = unittest.skipUnless(LOG.is_file(), f"no event log {LOG}")
PHASES = ("resource_wait", "compute", "io_write", "idle")
GAUGES = {"resource_wait": "spark_resource_wait_seconds", "compute": "spark_phase_compute_seconds",
          "io_write": "spark_phase_io_write_seconds", "idle": "spark_phase_idle_seconds"}


def application_trace_id(app_key):
    """listener/correlate/span_ids.cc, independently: SHA-256 of "sparktrace.application.v1",
    0x1f, the application key; the first 16 bytes (all zeros → last byte 1)."""
    digest = bytearray(hashlib.sha256(b"sparktrace.application.v1\x1f" + app_key.encode()).digest()[:16])
    if not any(digest):
        digest[-1] = 1
    return digest.hex()


def request(address, method, path, body=b"", headers=None, timeout=10):
    """-> (status, headers dict (lower-case keys), body str)."""
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def push(proxy, lines, query="", headers=None):
    body = "".join(line if line.endswith("\n") else line + "\n" for line in lines).encode()
    return request(proxy.admin_address, "POST", "/api/v1/events" + query, body, headers)


def diagnose(path):
    result = harness.run_cli(["diagnose", "--json", str(path)])
    if result.returncode != 0:
        raise AssertionError(f"diagnose failed: {result.stderr}")
    return json.loads(result.stdout)["applications"][0]


@harness.proxy_only
class EventPushTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)

    def start(self, *args):
        # The log is from 2015: the store's age limit must not delete its trace at once.
        proxy = harness.start_proxy(self, self.upstream.address, "--event-log-poll", "100ms",
                                    "--span-batch-delay", "50ms", "--store-max-age", "20000d", *args)
        return proxy, Store(proxy.store_path)

    def metrics(self, proxy):
        status, _, body = proxy.admin("/metrics")
        self.assertEqual(status, 200)
        return Metrics(body), body

    def assert_application_trace(self, store, expected):
        """The spark.application trace holds the log's jobs and stage attempts, as diagnose sees them."""
        jobs = expected["jobs"]
        stage_count = sum(len(job["stages"]) for job in jobs)
        trace = store.wait(trace_id=application_trace_id(expected["app_id"]),
                           **{"spark.application": 1, "spark.job": len(jobs), "spark.stage": stage_count})
        root = trace.one("spark.application")
        self.assertFalse(root["parent_span_id"], "the application span is the root")
        self.assertEqual(root["attributes"]["spark.app.id"], expected["app_id"])
        self.assertNotIn("spark.app.status", root["attributes"], "the application ended")
        for phase in PHASES:
            self.assertEqual(root["attributes"][f"spark.phase.{phase}.ms"], expected["phases"][f"{phase}_ms"])
        by_id = {span["attributes"]["spark.job.id"]: span for span in trace.named("spark.job")}
        self.assertEqual(sorted(by_id), sorted(job["job_id"] for job in jobs), trace.summary())
        for job in jobs:
            span = by_id[job["job_id"]]
            self.assertEqual(span["parent_span_id"], root["span_id"])
            self.assertEqual(span["attributes"]["spark.job.status"], job["status"])
            self.assertEqual(len(trace.children(span)), len(job["stages"]))
        self.assertIn("failed", {job["status"] for job in jobs}, "the log has a failed job")
        self.assertTrue([s for s in trace.spans if s["name"].startswith("spark.phase.")], trace.summary())
        return trace

    def assert_phase_gauges(self, proxy, expected):
        name = expected["app_name"]

        def published():
            m = self.metrics(proxy)[0]
            return m if m.find("spark_phase_compute_seconds", app=name) else None

        m = harness.wait_until(published, 15, interval=0.1, message=f"phase gauges for app={name}")
        window_ms = expected["window"]["duration_ms"]
        self.assertGreater(window_ms, 0)
        for phase in PHASES:
            want_ms = expected["phases"][f"{phase}_ms"]
            self.assertAlmostEqual(m.value(GAUGES[phase], app=name), want_ms / 1000.0, places=6)
            self.assertAlmostEqual(m.value("spark_phase_breakdown_ratio", app=name, phase=phase),
                                   want_ms / window_ms, places=6)
        return m

    def assert_findings(self, proxy, trace, expected):
        """The diagnosis findings `sparktrace diagnose` reports for the log are span events on the application
        root, and counted once each in sparktrace_findings_total."""
        want = [finding["id"] for finding in expected["findings"]]
        self.assertIn("task-failures", want, "the log's failed job must give a finding")
        root = trace.one("spark.application")
        events = [event for event in root.get("events", []) if event["name"] == "sparktrace.finding"]
        self.assertEqual([event["attributes"]["finding.id"] for event in events], want, trace.summary())
        for event, finding in zip(events, expected["findings"]):
            self.assertEqual(event["attributes"]["finding.severity"], finding["severity"])
            self.assertEqual(event["attributes"]["finding.recipe"], finding["recipe"])
        counts = {}
        for finding in expected["findings"]:
            key = (finding["id"], finding["severity"])
            counts[key] = counts.get(key, 0) + 1

        def counted():
            m = self.metrics(proxy)[0]
            return m if all(m.find("sparktrace_findings_total", id=i, severity=s) for i, s in counts) else None

        m = harness.wait_until(counted, 15, interval=0.1, message="sparktrace_findings_total")
        for (rule, severity), count in counts.items():
            self.assertEqual(m.value("sparktrace_findings_total", id=rule, severity=severity), count)

    def promtool_check(self, body):
        promtool = shutil.which("promtool")
        if promtool is None:
            self.skipTest("promtool missing: apt-get install prometheus")
        result = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                                capture_output=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    @needs_log
    def test_a_pushed_plain_application_gets_its_trace_and_phase_gauges(self):
        expected = diagnose(LOG)
        proxy, store = self.start()
        lines = LOG.read_text().splitlines()
        first, second, third = lines[:25], lines[25:55], lines[55:]
        self.assertTrue(any("SparkListenerApplicationStart" in line for line in first))

        # The first chunk names its application through its ApplicationStart; the answer says which.
        status, _, body = push(proxy, first)
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body), {"accepted": len(first), "malformed": 0, "app": APP_ID})
        # The next ones name it themselves; a bad line is counted and skipped, the rest applied.
        status, _, body = push(proxy, second[:10] + ["{this is not json"] + second[10:], query=f"?app={APP_ID}")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["accepted"], len(second))
        self.assertEqual(json.loads(body)["malformed"], 1)
        status, _, body = push(proxy, third, headers={"X-Spark-App-Id": APP_ID})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["accepted"], len(third))

        trace = self.assert_application_trace(store, expected)
        m = self.assert_phase_gauges(proxy, expected)
        self.assert_findings(proxy, trace, expected)
        self.assertEqual(m.value("sparktrace_listener_lines_total", source="push"), len(lines) + 1)
        self.assertEqual(m.value("sparktrace_listener_malformed_lines_total", source="push"), 1)
        self.assertEqual(m.value("sparktrace_listener_pushes_total", result="accepted"), 3)
        self.assertGreaterEqual(m.value("sparktrace_listener_applications_traced_total"), 1)
        self.promtool_check(self.metrics(proxy)[1])

    @needs_log
    def test_an_event_log_application_gets_the_same_trace_and_gauges(self):
        expected = diagnose(LOG)
        logs = Path(tempfile.mkdtemp(prefix="sparktrace-eventlogs-"))
        self.addCleanup(shutil.rmtree, logs, True)
        shutil.copy(LOG, logs / LOG.name)
        proxy, store = self.start("--event-log-dir", str(logs))
        self.assert_application_trace(store, expected)
        m = self.assert_phase_gauges(proxy, expected)
        self.assertEqual(m.value("sparktrace_listener_lines_total", source="event_log"), expected["log"]["lines"])

    def test_refusals(self):
        proxy, _ = self.start("--event-push-max-bytes", "1KiB")
        app_start = json.dumps({"Event": "SparkListenerApplicationStart", "App Name": "n", "App ID": "app-r",
                                "Timestamp": 1, "User": "u"})
        job_end = json.dumps({"Event": "SparkListenerJobEnd", "Job ID": 1, "Completion Time": 2,
                              "Job Result": {"Result": "JobSucceeded"}})
        # Which application? Neither named nor inferable.
        status, _, body = push(proxy, [job_end])
        self.assertEqual(status, 400, body)
        self.assertEqual(push(proxy, [job_end], query="?app=has%20space")[0], 400)
        # Over the body limit.
        status, _, body = push(proxy, [app_start] * 20)
        self.assertEqual(status, 413, body)
        # Other methods.
        self.assertEqual(request(proxy.admin_address, "GET", "/api/v1/events")[0], 405)
        status, headers, _ = request(proxy.admin_address, "PUT", "/api/v1/events", b"x")
        self.assertEqual(status, 405)
        self.assertEqual(headers.get("allow"), "POST")
        self.assertEqual(request(proxy.admin_address, "POST", "/metrics", b"x")[0], 405)
        # Still serving, and the refusals are counted.
        status, _, body = push(proxy, [app_start, job_end])
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body), {"accepted": 2, "malformed": 0, "app": "app-r"})
        m = self.metrics(proxy)[0]
        self.assertEqual(m.value("sparktrace_listener_pushes_total", result="bad_request"), 2)
        self.assertEqual(m.value("sparktrace_listener_pushes_total", result="accepted"), 1)

    def test_no_endpoint_without_tracing_or_when_turned_off(self):
        for args in (["--no-tracing"], ["--event-push-max-bytes", "0"]):
            proxy = harness.start_proxy(self, self.upstream.address, *args)
            status, _, _ = push(proxy, ['{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}'],
                                query="?app=x")
            self.assertEqual(status, 404, args)


if __name__ == "__main__":
    unittest.main()
