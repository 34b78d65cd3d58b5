"""`sparktrace sim --event-log-dir`: the simulator writes the Spark event log of what it executes,
live, and `sparktrace diagnose` reads back the operations, jobs, stages and phases that were driven.

Drives the real binary with a grpcio client built from our protos (see test_sim.load_stubs):
reads and a write command in one session, a read in a second session at the same time; then
SIGTERM, which must write ApplicationEnd and give the log its final name.
"""

import json
import os
import tempfile
import threading
import time
import unittest
import uuid
from pathlib import Path

import test_sim
from harness import run_cli
from test_sim import CALL_TIMEOUT, Sim, load_stubs


def now_ms():
    return int(time.time() * 1000)


class SimEventLogTest(unittest.TestCase):
    # 0.002: a simulated minute takes 120 ms.
    SIM_ARGS = ("--scenario", "slow-writes", "--strength", "0.5", "--seed", "5", "--time-scale", "0.002",
                "--event-log-codec", "zstd")

    @classmethod
    def setUpClass(cls):
        cls.pb, cls.pb_grpc = load_stubs()

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="sparktrace-sim-eventlog-")
        self.addCleanup(self.dir.cleanup)

    def start_sim(self, *extra):
        sim = Sim("--event-log-dir", self.dir.name, *self.SIM_ARGS, *extra)
        self.addCleanup(lambda: sim.proc.poll() is None and sim.stop())
        channel = test_sim.channel(sim.address)
        self.addCleanup(channel.close)
        return sim, self.pb_grpc.SparkConnectServiceStub(channel)

    def execute(self, stub, session_id, user, write=False, size="small"):
        """Runs one operation to its end; returns (operation id, wall-clock ms when the stream ended)."""
        request = self.pb.ExecutePlanRequest(session_id=session_id, user_context=self.pb.UserContext(user_id=user),
                                             operation_id=str(uuid.uuid4()), tags=["nightly"])
        if write:
            request.plan.command.write_operation.SetInParent()
        else:
            request.plan.root.SetInParent()
        request.request_options.add().reattach_options.reattachable = True
        responses = list(stub.ExecutePlan(request, metadata=[("x-sim-size", size)], timeout=CALL_TIMEOUT))
        self.assertEqual(responses[-1].WhichOneof("response_type"), "result_complete")
        return request.operation_id, now_ms()

    def diagnose(self):
        result = run_cli(["diagnose", "--json", self.dir.name], timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["errors"], [])
        self.assertEqual(len(report["applications"]), 1, [a["log"]["path"] for a in report["applications"]])
        return report["applications"][0]

    def test_operations_jobs_stages_and_phases_are_in_the_log(self):
        sim, stub = self.start_sim()
        session_a, session_b = str(uuid.uuid4()), str(uuid.uuid4())
        started_ms = now_ms()
        # Session b runs a read while session a runs its three operations.
        other = {}
        thread = threading.Thread(target=lambda: other.update(
            zip(("op", "end"), self.execute(stub, session_b, "bob", size="medium"))))
        thread.start()
        driven = [self.execute(stub, session_a, "alice"),
                  self.execute(stub, session_a, "alice", write=True),
                  self.execute(stub, session_a, "alice", size="medium")]
        thread.join(CALL_TIMEOUT)
        self.assertIn("op", other)
        # While the application runs the log is in progress, as Spark names it.
        names = os.listdir(self.dir.name)
        self.assertEqual(len(names), 1, names)
        self.assertTrue(names[0].endswith(".zstd.inprogress"), names)
        sim.stop()
        self.assertEqual(os.listdir(self.dir.name), [names[0][:-len(".inprogress")]])

        app = self.diagnose()
        self.assertEqual(app["log"]["state"], "complete")
        self.assertEqual(app["log"]["malformed_lines"], 0)
        self.assertTrue(app["spark_version"].startswith("4.0.0"))
        self.assertGreaterEqual(app["window"]["start_ms"], started_ms - 60_000)
        phases = app["phases"]
        self.assertEqual(sum(phases.values()), app["window"]["duration_ms"])
        self.assertGreater(phases["resource_wait_ms"], 0)  # before the first executor
        self.assertGreaterEqual(app["executors"]["added"], 4)

        operations = {op["operation_id"]: op for op in app["operations"]}
        expected = {op: ("alice", session_a, i == 1) for i, (op, _) in enumerate(driven)}
        expected[other["op"]] = ("bob", session_b, False)
        self.assertEqual(set(operations), set(expected))
        jobs = {job["job_id"]: job for job in app["jobs"]}
        self.assertEqual(len(jobs), 2 * len(expected))
        ends = dict(driven + [(other["op"], other["end"])])
        for op_id, (user, session, write) in expected.items():
            with self.subTest(operation=op_id):
                op = operations[op_id]
                self.assertEqual((op["user_id"], op["session_id"]), (user, session))
                self.assertEqual(op["status"], "finished")
                self.assertEqual(len(op["job_ids"]), 2)
                self.assertEqual(sum(op["phases"].values()), op["window"]["duration_ms"])
                self.assertGreater(op["phases"]["compute_ms"], 0)
                # Only the write command's result stage writes output.
                self.assertEqual(op["phases"]["io_write_ms"] > 0, write)
                for job_id in op["job_ids"]:
                    job = jobs[job_id]
                    self.assertEqual(job["operation_id"], op_id)
                    self.assertEqual(job["status"], "succeeded")
                    self.assertEqual(len(job["stages"]), 1)
                    stage = job["stages"][0]
                    self.assertEqual(stage["status"], "complete")
                    self.assertEqual(stage["tasks_ended"], stage["num_tasks"])
                    self.assertEqual(stage["output_bytes"] > 0, write and job_id == max(op["job_ids"]))
                    # The client's stream ended only after the operation's jobs had.
                    self.assertLessEqual(job["completion_ms"], ends[op_id])
                    self.assertGreaterEqual(job["submission_ms"], op["window"]["start_ms"])

    def test_rolling_plain_log_is_followed_and_completed(self):
        sim, stub = self.start_sim("--event-log-codec", "plain", "--event-log-rolling-bytes", "64KiB")
        session = str(uuid.uuid4())
        op, _ = self.execute(stub, session, "carol", size="large")
        [directory] = os.listdir(self.dir.name)
        self.assertTrue(directory.startswith("eventlog_v2_spark-"), directory)
        base = directory[len("eventlog_v2_"):]
        files = set(os.listdir(Path(self.dir.name) / directory))
        self.assertIn(f"appstatus_{base}.inprogress", files)
        self.assertIn(f"events_2_{base}", files)  # a large operation's tasks fill more than 64 KiB
        sim.stop()
        self.assertIn(f"appstatus_{base}", os.listdir(Path(self.dir.name) / directory))
        app = self.diagnose()
        self.assertEqual(app["log"]["state"], "complete")
        self.assertEqual([o["operation_id"] for o in app["operations"]], [op])
        self.assertEqual(len(app["jobs"]), 2)


if __name__ == "__main__":
    unittest.main()
