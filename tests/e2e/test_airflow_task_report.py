"""Airflow's own task in its trace, through the real proxy: POST /api/v1/airflow/task-attempts.

What the Airflow plugin sends (written here by hand, from docs/tracing.md "Airflow's own task", so
that the proxy side is tested apart from the plugin): a "running" report when the attempt starts
using Spark and the final state when it ends, with the task span context its calls carried. The
checks: the report becomes the attempt's `airflow.task` span, replaced in the store by the final
one; the attempt's operations hang under it; the attempt JSON (the proxy's own trace view API)
describes Airflow's task and its time outside Spark; an OTLP collector gets the final span once,
and never a span whose ids are Airflow's own (Airflow exports that one itself); the admin token is
needed when set; a bad report is a 400 naming the field, and counted.
"""

import http.client
import json
import time
import unittest
import urllib.parse
import uuid

import harness
import test_tracing
from harness import new_id, wait_until
from test_tracing import (OPERATION, HttpCollector, TracingCase, airflow_attempt_digest, airflow_trace_id,
                          decode_otlp, nonzero_hex, otlp_attributes)

REPORT_PATH = "/api/v1/airflow/task-attempts"
TOKEN = "t0ken-for-the-report-e2e"


def setUpModule():
    test_tracing.setUpModule()  # the simulator and the Spark Connect stubs


def derived_task_span_id(dag_id, task_id, run_id="", try_number=1, map_index=-1):
    """docs/tracing.md: bytes 16..23 of the digest whose first 16 are the trace id."""
    return nonzero_hex(airflow_attempt_digest(dag_id, task_id, run_id, try_number, map_index)[16:24])


def post(address, body, headers=None):
    """POST the report; (status, parsed JSON answer or text)."""
    host, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        payload = body if isinstance(body, (bytes, str)) else json.dumps(body)
        connection.request("POST", REPORT_PATH, payload,
                           {"Content-Type": "application/json", **(headers or {})})
        answer = connection.getresponse()
        text = answer.read().decode()
        try:
            return answer.status, json.loads(text)
        except ValueError:
            return answer.status, text
    finally:
        connection.close()


class Attempt:
    """One Airflow task attempt the test plays."""

    def __init__(self, traceparent_span=None):
        self.dag_id, self.task_id = new_id("dag"), "load_orders"
        self.run_id, self.try_number = "scheduled__2026-11-27T00:00:00+00:00", 1
        # Airflow's own span (3.x's context carrier), or the one the plugin derives without it.
        if traceparent_span is None:
            self.trace_id = airflow_trace_id(self.dag_id, self.task_id, self.run_id, self.try_number)
            self.task_span = derived_task_span_id(self.dag_id, self.task_id, self.run_id, self.try_number)
        else:
            self.trace_id, self.task_span = uuid.uuid4().hex, traceparent_span
        self.traceparent = f"00-{self.trace_id}-{self.task_span}-01"
        # Airflow started the task 50 ms before its first report: task code before the first
        # Spark call, which the page must show outside Spark.
        self.started = time.time_ns() - 50_000_000

    def metadata(self):
        return [("x-airflow-dag-id", self.dag_id), ("x-airflow-task-id", self.task_id),
                ("x-airflow-run-id", self.run_id), ("x-airflow-try-number", str(self.try_number)),
                ("traceparent", self.traceparent)]

    def report(self, state, **extra):
        now = time.time_ns()
        return {"dag_id": self.dag_id, "task_id": self.task_id, "run_id": self.run_id,
                "try_number": self.try_number, "map_index": -1, "state": state,
                "operator": "PySparkOperator", "hostname": "worker-1", "airflow_version": "3.1.0",
                "start_time_unix_nano": self.started, "end_time_unix_nano": now,
                "traceparent": self.traceparent, **extra}

    def api_path(self):
        query = urllib.parse.urlencode({"dag": self.dag_id, "task": self.task_id, "run": self.run_id,
                                        "try": self.try_number}, quote_via=urllib.parse.quote)
        return f"/api/v1/attempt?{query}"


@harness.proxy_only
class AirflowTaskReportTest(TracingCase):
    def task_span(self, trace, attempt):
        spans = [s for s in trace.named("airflow.task") if s["span_id"] == attempt.task_span]
        self.assertEqual(len(spans), 1, trace.summary())
        return spans[0]

    def test_the_report_is_the_root_of_the_attempt_and_the_final_one_replaces_running(self):
        proxy = self.start_proxy()
        attempt = Attempt()
        status, answer = post(proxy.admin_address, attempt.report("running"))
        self.assertEqual(status, 202, answer)
        self.assertEqual((answer["trace_id"], answer["span_id"]), (attempt.trace_id, attempt.task_span))
        trace = self.store.wait(attempt.trace_id)
        self.assertEqual(self.task_span(trace, attempt)["attributes"]["airflow.task.state"], "running")

        op, _ = self.run_query(self.stub(proxy), metadata=attempt.metadata())
        self.assertEqual(post(proxy.admin_address, attempt.report("success"))[0], 202)

        def final_stored():
            trace = self.store.show(attempt.trace_id)
            spans = trace.named("airflow.task") if trace else []
            return bool(spans) and spans[0]["attributes"]["airflow.task.state"] == "success" and trace.named(OPERATION)

        wait_until(final_stored, test_tracing.SPAN_WAIT, interval=0.1, message="the final report in the store")
        trace = self.store.show(attempt.trace_id)
        task = self.task_span(trace, attempt)
        attributes = task["attributes"]
        self.assertEqual((attributes["airflow.dag_id"], attributes["airflow.task_id"], attributes["airflow.run_id"],
                          attributes["airflow.try_number"], attributes["airflow.task.operator"],
                          attributes["airflow.task.hostname"]),
                         (attempt.dag_id, attempt.task_id, attempt.run_id, 1, "PySparkOperator", "worker-1"))
        self.assertIn(task["parent_span_id"], ("", None), "Airflow's task is the root here")
        operation = trace.one(OPERATION)
        self.assertEqual(operation["attributes"]["spark.connect.operation_id"], op)
        self.assertEqual(operation["parent_span_id"], attempt.task_span, "the operation hangs under the task")

        status, _, body = proxy.admin(attempt.api_path())
        self.assertEqual(status, 200, body)
        page = json.loads(body)
        airflow = page["airflow_task"]
        self.assertEqual((airflow["span_id"], airflow["state"], airflow["operator"], airflow["running"]),
                         (attempt.task_span, "success", "PySparkOperator", False))
        self.assertEqual(page["start_ms"], airflow["start_ms"], "the attempt starts when Airflow's task did")
        outside = airflow["outside_spark"]
        self.assertGreaterEqual(outside["before_first_call_ms"], 50)
        self.assertAlmostEqual(outside["ms"], outside["before_first_call_ms"] + outside["between_calls_ms"]
                               + outside["after_last_call_ms"], places=6)
        self.assertAlmostEqual(airflow["spark_ms"], airflow["wall_ms"] - outside["ms"], places=6)
        client = next(p for p in page["breakdown"]["phases"] if p["phase"] == "client")
        self.assertEqual(client["label"], "outside Spark")
        self.assertAlmostEqual(client["ms"], outside["ms"], places=3)
        self.assertEqual(self.metrics(proxy).value("sparktrace_airflow_task_reports_total", result="accepted"), 2)

    def test_otlp_gets_the_final_span_once_and_never_airflows_own(self):
        collector = HttpCollector()
        self.addCleanup(collector.stop)
        proxy = self.start_proxy("--otlp-protocol", "http", "--otlp-endpoint",
                                 f"http://{collector.address}/v1/traces")
        airflows_own = Attempt(traceparent_span=uuid.uuid4().hex[:16])
        derived = Attempt()
        for attempt in (airflows_own, derived):
            self.assertEqual(post(proxy.admin_address, attempt.report("running"))[0], 202)
        self.assertEqual(post(proxy.admin_address, airflows_own.report("failed"))[0], 202)
        self.assertEqual(post(proxy.admin_address, derived.report("up_for_retry"))[0], 202)

        def exported_task_spans():
            return [(span.span_id.hex(), otlp_attributes(span.attributes)["airflow.task.state"], span.status.code)
                    for span, _ in decode_otlp(collector.bodies()) if span.name == "airflow.task"]

        # One queue, in order: once the last report is exported, every earlier one that goes is too.
        wait_until(lambda: any(s[0] == derived.task_span for s in exported_task_spans()), test_tracing.SPAN_WAIT,
                   interval=0.1, message="the derived task span at the collector")
        self.assertEqual(exported_task_spans(), [(derived.task_span, "up_for_retry", 2)])
        # The store has both, final.
        for attempt, state in ((airflows_own, "failed"), (derived, "up_for_retry")):
            wait_until(lambda a=attempt, s=state: (t := self.store.show(a.trace_id)) is not None
                       and self.task_span(t, a)["attributes"]["airflow.task.state"] == s,
                       test_tracing.SPAN_WAIT, interval=0.1, message=f"the {state} report in the store")

    def test_the_admin_token_is_needed_and_bad_reports_name_the_field(self):
        proxy = self.start_proxy("--admin-token", TOKEN)
        attempt = Attempt()
        self.assertEqual(post(proxy.admin_address, attempt.report("success"))[0], 401)
        self.assertEqual(post(proxy.admin_address, attempt.report("success"),
                              {"Authorization": "Bearer wrong-token-of-some-length"})[0], 401)
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        status, answer = post(proxy.admin_address, attempt.report("success", try_number=-3), bearer)
        self.assertEqual((status, answer), (400, {"error": "try_number: must be in [0, 2^31-1]"}))
        status, answer = post(proxy.admin_address, "{not json", bearer)
        self.assertEqual((status, answer), (400, {"error": "the body must be one JSON object"}))
        status, answer = post(proxy.admin_address, attempt.report("success"), bearer)
        self.assertEqual(status, 202, answer)
        self.store.wait(attempt.trace_id)
        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value("sparktrace_airflow_task_reports_total", result="invalid"), 2)
        self.assertEqual(metrics.value("sparktrace_airflow_task_reports_total", result="accepted"), 1)
        self.assertEqual(metrics.value("sparktrace_admin_requests_refused_total", reason="unauthorized"), 2)

    def test_report_times_past_int64_or_far_in_the_future_are_400_naming_the_field(self):
        # Finding 7 of the probe: an end at 2^63 ns was stored ("stored": true), wrapped negative in
        # the store's int64 times, and the next retention pass deleted the attempt.
        proxy = self.start_proxy()
        attempt = Attempt()
        for end, problem in ((2 ** 63, "must be a positive integer"), (2 ** 64 - 1, "must be a positive integer"),
                             (time.time_ns() + 2 * 86_400 * 10 ** 9, "is more than a day after")):
            with self.subTest(end=end):
                status, answer = post(proxy.admin_address, attempt.report("success", end_time_unix_nano=end))
                self.assertEqual(status, 400, answer)
                self.assertTrue(answer["error"].startswith("end_time_unix_nano: " + problem), answer)
        status, answer = post(proxy.admin_address,
                              attempt.report("success", start_time_unix_nano=2 ** 63,
                                             end_time_unix_nano=2 ** 63 + 1))
        self.assertEqual(status, 400, answer)
        self.assertTrue(answer["error"].startswith("start_time_unix_nano: "), answer)
        status, answer = post(proxy.admin_address, attempt.report("success"))
        self.assertEqual(status, 202, answer)
        self.assertEqual(self.metrics(proxy).value("sparktrace_airflow_task_reports_total", result="invalid"), 4)

    def test_forged_reports_cannot_rewrite_another_attempt(self):
        """Finding 3 of the probe, without a token (k8s/base before it turned the token on): (a) a
        report with the victim's identity set its state to failed, its operator and host to the
        attacker's and its wall time to a year; (b) a report whose traceparent named the victim's
        RPC span replaced that span; (c) one without traceparent added a second trace to the
        victim's attempt. Each now leaves the victim's attempt as it was."""
        proxy = self.start_proxy()
        victim = Attempt(traceparent_span=uuid.uuid4().hex[:16])  # Airflow's own span context
        self.assertEqual(post(proxy.admin_address, victim.report("running"))[0], 202)
        self.run_query(self.stub(proxy), metadata=victim.metadata())
        final = victim.report("success")
        self.assertEqual(post(proxy.admin_address, final)[0], 202)
        wait_until(lambda: (t := self.store.show(victim.trace_id)) is not None and t.named(OPERATION)
                   and self.task_span(t, victim)["attributes"]["airflow.task.state"] == "success",
                   test_tracing.SPAN_WAIT, interval=0.1, message="the victim's final report and calls in the store")
        before = self.store.show(victim.trace_id)
        recorded = next(s for s in before.spans if s["name"] != "airflow.task")

        # (a) the victim's identity and span context, the attacker's state, operator, host and times.
        forged = dict(final, state="failed", operator="EvilOperator", hostname="attacker")
        status, answer = post(proxy.admin_address, dict(forged, end_time_unix_nano=final["start_time_unix_nano"]
                                                        + 365 * 86_400 * 10 ** 9))
        self.assertEqual(status, 400, answer)
        for field, report in (("state", dict(final, state="failed", hostname="attacker")), ("operator", dict(final, operator="EvilOperator")),
                              ("start_time_unix_nano", dict(final, start_time_unix_nano=final["start_time_unix_nano"] - 1)),
                              ("end_time_unix_nano", dict(final, end_time_unix_nano=final["end_time_unix_nano"] - 1))):
            status, answer = post(proxy.admin_address, report)
            self.assertEqual(status, 409, answer)
            self.assertTrue(answer["error"].startswith(field + ":"), answer)
        # (b) another attempt naming the victim's task span, then the span the proxy recorded.
        attacker = Attempt()
        status, answer = post(proxy.admin_address, attacker.report("failed", traceparent=victim.traceparent))
        self.assertEqual(status, 409, answer)
        self.assertTrue(answer["error"].startswith("traceparent:"), answer)
        over_recorded = f"00-{victim.trace_id}-{recorded['span_id']}-01"
        post(proxy.admin_address, attacker.report("failed", traceparent=over_recorded))
        # (c) the victim's identity without a traceparent: the derived span context, a second trace.
        status, answer = post(proxy.admin_address, {k: v for k, v in final.items() if k != "traceparent"})
        self.assertEqual(status, 409, answer)
        self.assertTrue(answer["error"].startswith("traceparent:"), answer)

        # One export queue, in order: once a later attempt's report is stored, every earlier one is.
        sentinel = Attempt()
        self.assertEqual(post(proxy.admin_address, sentinel.report("success"))[0], 202)
        self.store.wait(sentinel.trace_id)
        after = self.store.show(victim.trace_id)
        self.assertEqual(sorted(json.dumps(s, sort_keys=True) for s in after.spans),
                         sorted(json.dumps(s, sort_keys=True) for s in before.spans), "the victim's trace changed")
        self.assertIsNone(self.store.show(airflow_trace_id(victim.dag_id, victim.task_id, victim.run_id, 1)),
                          "a second trace in the victim's attempt")
        status, _, body = proxy.admin(victim.api_path())
        self.assertEqual(status, 200, body)
        airflow = json.loads(body)["airflow_task"]
        self.assertEqual((airflow["span_id"], airflow["state"], airflow["operator"]),
                         (victim.task_span, "success", "PySparkOperator"))
        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value("sparktrace_airflow_task_reports_total", result="conflict"), 6)
        self.assertGreaterEqual(metrics.value("sparktrace_airflow_task_report_attempts"), 2)


if __name__ == "__main__":
    unittest.main()
