"""Settled cost end to end (docs/trace-view-api.md "Settled cost in the list", docs/tracing.md
"Settling"): the proxy in front of the simulator, which writes the Spark event log the proxy follows;
Airflow task attempts call Spark Connect through it and end; the proxy settles each (a short
--settle-quiet) and the task list then carries its cost, sorts by it (?sort=-cost, ?sort=cost), and
/metrics counts it by dag and task. The cost in the list is the attempt page's, figure for figure.

A second settler on the same store not counting an attempt again is checked at unit level
(tests/unit/traceview/attempt_settler_test.cc, tests/unit/tracing/store/span_store_settlement_test.cc).
"""

import json
import tempfile
import unittest
import urllib.parse
import uuid

import harness
from harness import wait_until
from promtext import Metrics
from test_sim import CALL_TIMEOUT, Sim, load_stubs

SETTLE_WAIT = 30  # seconds: the driver's events, the spans' export and the quiet period
CORE_HOUR, GIB_HOUR = 0.05, 0.01
# Three attempts of two tasks; "load" of run r2 reads a large input, so it costs most.
ATTEMPTS = [("settle_dag", "extract", "r1", "small"), ("settle_dag", "load", "r1", "small"),
            ("settle_dag", "load", "r2", "large")]


@harness.proxy_only
class SettledCostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        pb, pb_grpc = load_stubs()
        logs = tempfile.TemporaryDirectory(prefix="sparktrace-settle-logs-")
        cls.addClassCleanup(logs.cleanup)
        # 0.002: a simulated minute takes 120 ms.
        sim = Sim("--event-log-dir", logs.name, "--scenario", "clean", "--seed", "7", "--time-scale", "0.002",
                  "--event-log-codec", "plain")
        cls.addClassCleanup(sim.stop)
        cls.proxy = harness.start_proxy(
            cls, sim.address, "--span-batch-delay", "50ms", "--operation-linger", "500ms", "--event-log-dir", logs.name,
            "--event-log-poll",
            "100ms", "--settle-interval", "100ms", "--settle-quiet", "1s", "--cost-core-hour", str(CORE_HOUR),
            "--cost-gib-hour", str(GIB_HOUR))
        channel = harness.channel(cls.proxy.grpc_address)
        cls.addClassCleanup(channel.close)
        stub = pb_grpc.SparkConnectServiceStub(channel)
        for dag, task, run, size in ATTEMPTS:
            metadata = [("x-airflow-dag-id", dag), ("x-airflow-task-id", task), ("x-airflow-run-id", run),
                        ("x-airflow-try-number", "1"), ("x-sim-size", size)]
            request = pb.ExecutePlanRequest(session_id=str(uuid.uuid4()), user_context=pb.UserContext(user_id="e2e"),
                                            operation_id=str(uuid.uuid4()), client_type="sparktrace-e2e")
            request.plan.root.SetInParent()
            request.request_options.add().reattach_options.reattachable = True
            responses = list(stub.ExecutePlan(request, metadata=metadata, timeout=CALL_TIMEOUT))
            assert responses[-1].WhichOneof("response_type") == "result_complete", responses[-1]

        def settled():
            status, _, body = harness.http_get(cls.proxy.admin_address, "/api/v1/tasks?dag=settle_dag&sort=-cost")
            if status != 200:
                return None
            rows = json.loads(body)["tasks"]
            # Settled with the driver's side: an attempt settled before its event-log spans arrived is
            # settled again once they change its row, with its cores known.
            known = all(row["cost"] and row["cost"]["current"] and row["cost"]["core_seconds"] for row in rows)
            return rows if len(rows) == len(ATTEMPTS) and known else None

        cls.rows = wait_until(settled, SETTLE_WAIT, interval=0.1, message="every attempt settled in /api/v1/tasks")

    def tasks(self, query):
        status, _, body = harness.http_get(self.proxy.admin_address, "/api/v1/tasks?" + query)
        self.assertEqual(status, 200, body)
        return json.loads(body)["tasks"]

    def test_the_list_sorts_by_money_both_ways(self):
        money = [row["cost"]["money"] for row in self.rows]
        self.assertTrue(all(isinstance(m, float) and m > 0 for m in money), money)
        self.assertEqual(money, sorted(money, reverse=True))
        self.assertEqual((self.rows[0]["task_id"], self.rows[0]["run_id"]), ("load", "r2"))
        ascending = [row["cost"]["money"] for row in self.tasks("dag=settle_dag&sort=cost")]
        self.assertEqual(ascending, sorted(money))
        # Newest first stays the default, and an unknown order is refused.
        starts = [row["start_ms"] for row in self.tasks("dag=settle_dag")]
        self.assertEqual(starts, sorted(starts, reverse=True))
        status, _, body = harness.http_get(self.proxy.admin_address, "/api/v1/tasks?sort=price")
        self.assertEqual(status, 400, body)

    def test_the_listed_cost_is_the_attempt_pages(self):
        for row in self.rows:
            with self.subTest(task=row["task_id"], run=row["run_id"]):
                status, _, body = harness.http_get(self.proxy.admin_address,
                                                   "/api/v1/attempt?" + urllib.parse.urlsplit(row["href"]).query)
                self.assertEqual(status, 200, body)
                page = json.loads(body)["cost"]
                self.assertIsNotNone(page)
                listed = row["cost"]
                self.assertTrue(listed["current"])
                self.assertFalse(listed["regression"])  # no earlier successful run: no baseline
                self.assertAlmostEqual(listed["core_seconds"], page["core_seconds"], places=6)
                self.assertAlmostEqual(listed["gib_seconds"], page["gib_seconds"], places=6)
                self.assertAlmostEqual(listed["idle_fraction"], page["idle_fraction"], places=6)
                self.assertAlmostEqual(listed["money"], page["money"]["total"], places=9)
                # And the money is the prices applied to the resource-seconds.
                self.assertAlmostEqual(listed["money"], listed["core_seconds"] / 3600 * CORE_HOUR +
                                       listed["gib_seconds"] / 3600 * GIB_HOUR, places=9)

    def test_metrics_count_each_attempt_by_dag_and_task(self):
        status, _, body = self.proxy.admin("/metrics")
        self.assertEqual(status, 200)
        metrics = Metrics(body.decode() if isinstance(body, bytes) else body)
        for task in ("extract", "load"):
            with self.subTest(task=task):
                rows = [row for row in self.rows if row["task_id"] == task]
                labels = {"dag": "settle_dag", "task": task}
                self.assertAlmostEqual(metrics.value("sparktrace_task_core_seconds_total", **labels),
                                       sum(row["cost"]["core_seconds"] for row in rows), places=6)
                self.assertAlmostEqual(metrics.value("sparktrace_task_gib_seconds_total", **labels),
                                       sum(row["cost"]["gib_seconds"] for row in rows), places=6)
                self.assertAlmostEqual(metrics.value("sparktrace_task_cost_total", **labels),
                                       sum(row["cost"]["money"] for row in rows), places=9)
                self.assertEqual(metrics.value("sparktrace_task_regressions_total", **labels), 0)
        # An attempt may be settled twice: once its calls ended, again once the driver's events reached it.
        self.assertGreaterEqual(metrics.value("sparktrace_attempts_settled_total"), len(ATTEMPTS))
        self.assertEqual(metrics.value("sparktrace_attempts_unsettled"), 0)
        self.assertEqual(metrics.value("sparktrace_attempts_settle_errors_total"), 0)


if __name__ == "__main__":
    unittest.main()
