"""The proxy's driver-listener feed (--event-log-dir): Spark event-log lines that a driver writes
while the proxy runs put the jobs, stages and phases of each Spark Connect operation under the
operation span the proxy recorded for it (docs/tracing.md, "Driver events").

The simulator runs no Spark, so the test plays the driver: it runs an ExecutePlan through the
proxy, then appends the event-log lines Spark would write for it (job tagged with Spark Connect's
operation tag, a stage, tasks) to an in-progress log, in two steps, as a live driver would.
"""

import http.server
import json
import shutil
import tempfile
import threading
import unittest
import uuid
from pathlib import Path

import grpc

import harness
from harness import channel, wait_until
from test_sim import Sim, load_stubs
from test_tracing import OPERATION, Store

EXECUTE = "spark.connect.SparkConnectService/ExecutePlan"


def operation_tag(user, session, operation):
    return f"SparkConnect_OperationTag_User_{user}_Session_{session}_Operation_{operation}"


def line(**event):
    return json.dumps(event, separators=(",", ":")) + "\n"


def task_end(stage_id, task_id, launch_ms, finish_ms, output_bytes):
    return line(**{
        "Event": "SparkListenerTaskEnd", "Stage ID": stage_id, "Stage Attempt ID": 0, "Task Type": "ResultTask",
        "Task End Reason": {"Reason": "Success"},
        "Task Info": {"Task ID": task_id, "Index": task_id, "Attempt": 0, "Launch Time": launch_ms,
                      "Executor ID": "1", "Host": "h", "Locality": "ANY", "Speculative": False,
                      "Getting Result Time": 0, "Finish Time": finish_ms, "Failed": False, "Killed": False,
                      "Accumulables": []},
        "Task Metrics": {"Executor Deserialize Time": 1, "Executor Run Time": finish_ms - launch_ms,
                         "Executor CPU Time": 1000, "Result Size": 10, "JVM GC Time": 2,
                         "Result Serialization Time": 0, "Memory Bytes Spilled": 0, "Disk Bytes Spilled": 0,
                         "Peak Execution Memory": 0,
                         "Shuffle Read Metrics": {"Remote Bytes Read": 0, "Local Bytes Read": 0,
                                                  "Fetch Wait Time": 0, "Total Records Read": 0},
                         "Shuffle Write Metrics": {"Shuffle Bytes Written": 0, "Shuffle Write Time": 0,
                                                   "Shuffle Records Written": 0},
                         "Input Metrics": {"Bytes Read": 0, "Records Read": 0},
                         "Output Metrics": {"Bytes Written": output_bytes, "Records Written": 1}}})


class DriverLogCase(unittest.TestCase):
    """A simulator, and per test a proxy following an empty event-log directory (self.dir) that
    the test writes the driver's lines into; `extra_proxy_args` adds flags."""

    extra_proxy_args = ()

    @classmethod
    def setUpClass(cls):
        cls.pb, cls.rpc = load_stubs()
        cls.sim = Sim()
        cls.addClassCleanup(cls.sim.stop)

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="sparktrace-eventlogs-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.proxy = harness.start_proxy(self, self.sim.address, "--event-log-dir", str(self.dir),
                                         "--event-log-poll", "100ms", "--span-batch-delay", "50ms",
                                         *self.extra_proxy_args)
        self.store = Store(self.proxy.store_path)

    def execute(self, session, user, operation):
        with channel(self.proxy.grpc_address) as ch:
            stub = self.rpc.SparkConnectServiceStub(ch)
            request = self.pb.ExecutePlanRequest(session_id=session, operation_id=operation,
                                                 user_context=self.pb.UserContext(user_id=user))
            request.plan.root.SetInParent()
            return list(stub.ExecutePlan(request, timeout=10))


@harness.proxy_only
class EventLogFeedTest(DriverLogCase):
    def test_jobs_and_stages_land_under_the_operation_span(self):
        session, user, operation = str(uuid.uuid4()), "etl_user", str(uuid.uuid4())
        self.assertTrue(self.execute(session, user, operation))
        op_trace = self.store.wait(operation=operation, op=1, execute=1)
        op_span = op_trace.one(OPERATION)

        log = self.dir / "app-20261122093000-0001.inprogress"
        t0 = 1_763_800_000_000
        tag = operation_tag(user, session, operation)
        with open(log, "w") as f:  # the driver's first lines, the job still running
            f.write(line(Event="SparkListenerLogStart", **{"Spark Version": "4.0.0"}))
            f.write(line(Event="SparkListenerApplicationStart", **{"App Name": "connect", "App ID": "app-1",
                                                                    "Timestamp": t0, "User": "spark"}))
            f.write(line(Event="SparkListenerExecutorAdded", **{"Timestamp": t0 + 5000, "Executor ID": "1",
                                                                 "Executor Info": {"Host": "h", "Total Cores": 4}}))
            f.write(line(Event="SparkListenerJobStart", **{
                "Job ID": 7, "Submission Time": t0 + 6000, "Stage Infos": [], "Stage IDs": [3],
                "Properties": {"spark.job.tags": tag}}))
            f.write(line(Event="SparkListenerStageSubmitted", **{"Stage Info": {
                "Stage ID": 3, "Stage Attempt ID": 0, "Stage Name": "save", "Number of Tasks": 2,
                "Submission Time": t0 + 6100}, "Properties": {}}))
        running = self.store.wait(operation=operation, **{"spark.job": 1})
        job = running.one("spark.job")
        self.assertEqual(job["parent_span_id"], op_span["span_id"], running.summary())
        self.assertEqual(job["attributes"]["spark.job.status"], "running")

        with open(log, "a") as f:  # the rest: tasks, stage and job end (a write: output bytes)
            f.write(task_end(3, 1, t0 + 6200, t0 + 8200, output_bytes=1000))
            f.write(task_end(3, 2, t0 + 6200, t0 + 9200, output_bytes=3000))
            f.write(line(Event="SparkListenerStageCompleted", **{"Stage Info": {
                "Stage ID": 3, "Stage Attempt ID": 0, "Stage Name": "save", "Number of Tasks": 2,
                "Submission Time": t0 + 6100, "Completion Time": t0 + 9300}}))
            f.write(line(Event="SparkListenerJobEnd", **{"Job ID": 7, "Completion Time": t0 + 9400,
                                                         "Job Result": {"Result": "JobSucceeded"}}))

        def finished():
            trace = self.store.show(operation=operation)
            jobs = trace.named("spark.job") if trace else []
            return trace if jobs and jobs[0]["attributes"].get("spark.job.status") == "succeeded" else None

        done = wait_until(finished, 15, interval=0.1, message="the job's end in the store")
        self.assertEqual(len(done.named("spark.job")), 1, "a rebuilt job span replaces the first one")
        stage = done.one("spark.stage")
        self.assertEqual(stage["parent_span_id"], done.one("spark.job")["span_id"])
        self.assertEqual(stage["attributes"]["spark.stage.tasks"], 2)
        self.assertEqual(stage["attributes"]["spark.stage.output_bytes"], 4000)
        self.assertEqual(stage["attributes"]["spark.stage.task_duration_ms.max"], 3000)
        phases = [s for s in done.spans if s["name"].startswith("spark.phase.")]
        self.assertTrue(phases, done.summary())
        self.assertEqual(done.trace_id, op_trace.trace_id)
        self.assertIn("spark.phase.io_write", {s["name"] for s in phases}, "a stage writing output is io_write")

    def test_operations_the_proxy_never_saw_are_left_alone(self):
        log = self.dir / "app-2.inprogress"
        tag = operation_tag("u", str(uuid.uuid4()), str(uuid.uuid4()))
        with open(log, "w") as f:
            f.write(line(Event="SparkListenerApplicationStart", **{"App Name": "x", "App ID": "app-2",
                                                                    "Timestamp": 1, "User": "spark"}))
            f.write(line(Event="SparkListenerJobStart", **{"Job ID": 1, "Submission Time": 2, "Stage Infos": [],
                                                           "Stage IDs": [], "Properties": {"spark.job.tags": tag}}))
            f.write("{not json\n")
        # Calls still work, and nothing is invented for an operation without a proxy span.
        operation = str(uuid.uuid4())
        self.assertTrue(self.execute(str(uuid.uuid4()), "u", operation))
        trace = self.store.wait(operation=operation, op=1, execute=1)
        self.assertFalse(trace.named("spark.job"))


class FakeSparkUi:
    """The driver's REST API (/api/v1) serving what the test sets in `answers` (path -> JSON)."""

    def __init__(self):
        answers = self.answers = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = answers.get(self.path.split("?")[0])
                if body is None:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@harness.proxy_only
class SparkUiFeedTest(unittest.TestCase):
    """--spark-ui: the same spans from the driver's REST API when the event logs are not shared."""

    @classmethod
    def setUpClass(cls):
        cls.pb, cls.rpc = load_stubs()
        cls.sim = Sim()
        cls.addClassCleanup(cls.sim.stop)

    def test_jobs_from_the_rest_api_land_under_the_operation_span(self):
        ui = FakeSparkUi()
        self.addCleanup(ui.close)
        session, user, operation = str(uuid.uuid4()), "etl_user", str(uuid.uuid4())
        app = "app-20261122100000-0007"
        base = f"/api/v1/applications/{app}"
        ui.answers["/api/v1/applications"] = [{"id": app, "name": "connect", "attempts": [{
            "startTime": "2026-11-22T10:00:00.000GMT", "endTime": "1969-12-31T23:59:59.999GMT",
            "sparkUser": "spark", "completed": False, "appSparkVersion": "4.0.0"}]}]
        ui.answers[base + "/allexecutors"] = [
            {"id": "1", "hostPort": "h:1", "totalCores": 4, "isActive": True, "addTime": "2026-11-22T10:00:05.000GMT"}]
        ui.answers[base + "/jobs"] = [{
            "jobId": 3, "name": "collect", "submissionTime": "2026-11-22T10:00:06.000GMT",
            "completionTime": "2026-11-22T10:00:09.000GMT", "stageIds": [4], "status": "SUCCEEDED",
            "jobTags": [operation_tag(user, session, operation)]}]
        ui.answers[base + "/stages"] = [{
            "stageId": 4, "attemptId": 0, "status": "COMPLETE", "numTasks": 8, "numCompleteTasks": 8,
            "numFailedTasks": 0, "numKilledTasks": 0, "submissionTime": "2026-11-22T10:00:06.100GMT",
            "firstTaskLaunchedTime": "2026-11-22T10:00:06.200GMT",
            "completionTime": "2026-11-22T10:00:08.900GMT", "executorRunTime": 1000, "jvmGcTime": 10,
            "outputBytes": 0, "outputRecords": 0}]

        proxy = harness.start_proxy(self, self.sim.address, "--spark-ui", ui.url, "--event-log-poll", "100ms",
                                    "--span-batch-delay", "50ms")
        store = Store(proxy.store_path)
        with channel(proxy.grpc_address) as ch:
            request = self.pb.ExecutePlanRequest(session_id=session, operation_id=operation,
                                                 user_context=self.pb.UserContext(user_id=user))
            request.plan.root.SetInParent()
            self.assertTrue(list(self.rpc.SparkConnectServiceStub(ch).ExecutePlan(request, timeout=10)))
        trace = store.wait(operation=operation, op=1, **{"spark.job": 1, "spark.stage": 1})
        job = trace.one("spark.job")
        self.assertEqual(job["parent_span_id"], trace.one(OPERATION)["span_id"], trace.summary())
        self.assertEqual(job["attributes"]["spark.job.id"], 3)
        self.assertEqual(job["attributes"]["spark.job.status"], "succeeded")
        self.assertEqual(trace.one("spark.stage")["parent_span_id"], job["span_id"])

    def test_a_bad_spark_ui_url_is_refused_naming_the_flag(self):
        result = harness.run_cli(["proxy", "--upstream", self.sim.address, "--spark-ui", "https://driver:4040"])
        self.assertEqual(result.returncode, 2)
        self.assertIn("--spark-ui", result.stderr)


if __name__ == "__main__":
    unittest.main()
