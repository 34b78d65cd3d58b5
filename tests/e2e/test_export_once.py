"""Each span reaches an OTLP collector exactly once (issue: the same spark.job / spark.stage span id
arrived several times, with different end times, when a driver's log was read while a job ran and
again after it ended).

OTLP spans are immutable once sent, so the proxy sends a driver-side span when it has ended, and
only then; the store alone shows the versions in between (docs/tracing.md, "Driver events"). The
test plays the driver: it writes event logs that grow in many steps while the real proxy follows
them (--event-log-dir), waiting after each step until the proxy has read it (its own /metrics line
count, never a sleep), so each step is built into spans. The collector is written here (a gRPC
generic handler) and decodes with classes protoc generated from the official OTLP protos.

Two applications:
* a Spark Connect server whose operation, sent through the proxy, runs two jobs of three stages;
  a task of the first stage ends on every step (the job spans many polls), a speculative task
  ends after its job did, and the application ends;
* a plain application whose log stops with its last line cut mid-JSON and is then completed
  (renamed from .inprogress): its running job and stage end incomplete.

At the end the proxy is stopped (which flushes its exporters) and the collector must have received
every span id of the store once: no id twice, none missing.
"""

import collections
import json
import os
import unittest
import uuid

import harness
from harness import wait_until
from promtext import Metrics
from test_event_log_feed import DriverLogCase, line, operation_tag, task_end
from test_tracing import OPERATION, GrpcCollector, decode_otlp, otlp_attributes

T0 = 1_763_800_000_000


def stage_submitted(stage_id, time_ms, tasks):
    return line(Event="SparkListenerStageSubmitted", **{"Stage Info": {
        "Stage ID": stage_id, "Stage Attempt ID": 0, "Stage Name": f"stage {stage_id}", "Number of Tasks": tasks,
        "Submission Time": time_ms}, "Properties": {}})


def stage_completed(stage_id, submitted_ms, completed_ms, tasks):
    return line(Event="SparkListenerStageCompleted", **{"Stage Info": {
        "Stage ID": stage_id, "Stage Attempt ID": 0, "Stage Name": f"stage {stage_id}", "Number of Tasks": tasks,
        "Submission Time": submitted_ms, "Completion Time": completed_ms}})


def job_start(job_id, time_ms, stage_ids, tags=None):
    properties = {"spark.job.tags": tags} if tags else {}
    return line(Event="SparkListenerJobStart", **{"Job ID": job_id, "Submission Time": time_ms, "Stage Infos": [],
                                                  "Stage IDs": stage_ids, "Properties": properties})


def job_end(job_id, time_ms):
    return line(Event="SparkListenerJobEnd", **{"Job ID": job_id, "Completion Time": time_ms,
                                                "Job Result": {"Result": "JobSucceeded"}})


def connect_event(kind, tag, operation, time_ms, session="", user=""):
    event = {"Event": f"org.apache.spark.sql.connect.service.SparkListenerConnectOperation{kind}",
             "jobTag": tag, "operationId": operation, "eventTime": time_ms, "extraTags": {}}
    if kind == "Started":
        event.update(sessionId=session, userId=user, userName=user, statementText="plan", sparkSessionTags=[])
    return json.dumps(event, separators=(",", ":")) + "\n"


def application(app_id, name, time_ms):
    return (line(Event="SparkListenerLogStart", **{"Spark Version": "4.0.0"})
            + line(Event="SparkListenerApplicationStart", **{"App Name": name, "App ID": app_id,
                                                             "Timestamp": time_ms, "User": "spark"})
            + line(Event="SparkListenerExecutorAdded", **{"Timestamp": time_ms + 1000, "Executor ID": "1",
                                                          "Executor Info": {"Host": "h", "Total Cores": 4}}))


@harness.proxy_only
class SpansAreExportedOnceTest(DriverLogCase):
    maxDiff = 4000

    def setUp(self):
        self.collector = GrpcCollector()
        self.addCleanup(self.collector.stop)
        self.extra_proxy_args = ("--otlp-endpoint", self.collector.address)
        super().setUp()
        self.lines_written = 0

    def append(self, path, text):
        """Append to a log and wait until the proxy has read every complete line written so far."""
        with open(path, "a") as f:
            f.write(text)
        self.lines_written += text.count("\n")
        self.wait_lines_read(self.lines_written)

    def wait_lines_read(self, count):
        def read():
            status, _, body = self.proxy.admin("/metrics")
            if status != 200:
                return False
            found = Metrics(body).find("sparktrace_listener_lines_total", source="event_log")
            return bool(found) and found[0][1] >= count

        wait_until(read, 15, interval=0.02, message=f"the proxy to read {count} event-log lines")

    def play_connect_server(self):
        session, user, operation = str(uuid.uuid4()), "etl_user", str(uuid.uuid4())
        self.assertTrue(self.execute(session, user, operation))
        self.store.wait(operation=operation, op=1, execute=1)
        tag = operation_tag(user, session, operation)
        log = self.dir / "app-connect-0001.inprogress"
        self.append(log, application("app-connect", "Spark Connect server", T0)
                    + connect_event("Started", tag, operation, T0 + 2000, session, user)
                    + job_start(1, T0 + 3000, [1, 2], tag) + stage_submitted(1, T0 + 3000, 6))
        for task in range(1, 6):  # the first job runs across many polls, a task ending on each
            self.append(log, task_end(1, task, T0 + 3000, T0 + 3000 + 500 * task, output_bytes=0))
        self.append(log, task_end(1, 6, T0 + 3000, T0 + 6000, output_bytes=0)
                    + stage_completed(1, T0 + 3000, T0 + 6100, 6) + stage_submitted(2, T0 + 6100, 1))
        self.append(log, task_end(2, 7, T0 + 6100, T0 + 7000, output_bytes=0)
                    + stage_completed(2, T0 + 6100, T0 + 7100, 1) + job_end(1, T0 + 7200))
        self.append(log, job_start(2, T0 + 7300, [3], tag) + stage_submitted(3, T0 + 7300, 1))
        self.append(log, task_end(3, 8, T0 + 7300, T0 + 8000, output_bytes=4096)
                    + stage_completed(3, T0 + 7300, T0 + 8100, 1) + job_end(2, T0 + 8200)
                    + connect_event("Finished", tag, operation, T0 + 8300))
        self.append(log, connect_event("Closed", tag, operation, T0 + 8400))
        # A speculative copy of a task of the first stage, killed after its job ended.
        self.append(log, task_end(1, 9, T0 + 5000, T0 + 9000, output_bytes=0))
        self.append(log, line(Event="SparkListenerApplicationEnd", Timestamp=T0 + 10_000))
        os.rename(log, self.dir / "app-connect-0001")
        return operation

    def play_truncated_application(self):
        log = self.dir / "app-plain-0002.inprogress"
        self.append(log, application("app-plain", "nightly", T0) + job_start(1, T0 + 2000, [1])
                    + stage_submitted(1, T0 + 2000, 2))
        self.append(log, task_end(1, 1, T0 + 2000, T0 + 3000, output_bytes=0))
        with open(log, "a") as f:  # the driver died writing its last line
            f.write('{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Ti')
        os.rename(log, self.dir / "app-plain-0002")

    def stored_spans(self):
        spans = {}
        for trace_id in self.store.trace_ids():
            trace = self.store.show(trace_id)
            for span in trace.spans:
                spans[span["span_id"]] = span
        return spans

    def test_every_span_reaches_the_collector_once(self):
        operation = self.play_connect_server()
        self.play_truncated_application()

        def settled():
            trace = self.store.show(operation=operation)
            lifecycle = trace.named("spark.connect.operation.lifecycle") if trace else []
            plain = [s for s in self.stored_spans().values() if s["name"] == "spark.application"]
            return (lifecycle and [e["name"] for e in lifecycle[0]["events"]][-1:] == ["closed"]
                    and plain and plain[0]["attributes"].get("spark.app.status") == "unknown")

        wait_until(settled, 15, interval=0.1, message="both applications' final spans in the store")
        stored = self.stored_spans()
        self.proxy.terminate()  # flushes the exporters
        self.proxy.expect_exit = True
        self.assertEqual(self.proxy.wait_exit(15), 0, self.proxy.stderr_tail())

        received = decode_otlp(self.collector.bodies())
        counts = collections.Counter(span.span_id.hex() for span, _ in received)
        twice = {span_id: n for span_id, n in counts.items() if n > 1}
        names = {span.span_id.hex(): span.name for span, _ in received}
        self.assertEqual({names[i]: n for i, n in twice.items()}, {}, "span ids the collector got more than once")
        self.assertEqual(set(counts), set(stored),
                         f"missing at the collector: {sorted(stored[i]['name'] for i in set(stored) - set(counts))}; "
                         f"not in the store: {sorted(names[i] for i in set(counts) - set(stored))}")

        by_name = collections.defaultdict(list)
        for span, _ in received:
            by_name[span.name].append(span)
        self.assertEqual(len(by_name["spark.job"]), 3, "two of the operation, one of the plain application")
        self.assertEqual(len(by_name["spark.stage"]), 4)
        # What the collector got is each span's ended version: the long job's end is its JobEnd,
        # the stage counts the speculative task that ended after the job.
        first_stage = [s for s in by_name["spark.stage"] if otlp_attributes(s.attributes)["spark.stage.id"] == 1
                       and s.trace_id != by_name["spark.application"][0].trace_id]
        self.assertEqual(len(first_stage), 1)
        self.assertEqual(first_stage[0].end_time_unix_nano, (T0 + 6100) * 1_000_000)
        for span in by_name["spark.job"]:
            attributes = otlp_attributes(span.attributes)
            if attributes["spark.job.id"] == 1 and span.trace_id != by_name["spark.application"][0].trace_id:
                self.assertEqual(span.end_time_unix_nano, (T0 + 7200) * 1_000_000)
                self.assertEqual(attributes["spark.job.status"], "succeeded")
        # The truncated log's job and stage ended at its last event, incomplete.
        [root] = by_name["spark.application"]
        plain = [s for s in received if s[0].trace_id == root.trace_id]
        for span, _ in plain:
            attributes = otlp_attributes(span.attributes)
            if span.name in ("spark.job", "spark.stage", "spark.application"):
                self.assertIs(attributes.get("sparktrace.incomplete"), True, span.name)
                self.assertEqual(span.end_time_unix_nano, (T0 + 3000) * 1_000_000, span.name)
        self.assertEqual(otlp_attributes(root.attributes)["spark.app.status"], "unknown")
        self.assertEqual(len([s for s in stored.values() if s["name"] == OPERATION]), 1)


if __name__ == "__main__":
    unittest.main()
