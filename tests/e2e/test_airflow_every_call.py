"""Every Spark Connect RPC of an Airflow task lands in the task's trace, for PySpark 3.4, 3.5, 4.0, 4.1.

Airflow and PySpark cannot be installed here, so the task instance is an object shaped like Airflow's
and PySpark's client is the stand-in of each version (integrations/airflow/tests/pyspark_shapes:
module paths, construction order, ArtifactManager's copy of the metadata, the reattachable iterator
and its ReleaseExecute thread pool, 4.0's FetchErrorDetails without metadata). What is real: the
plugin's own code (listener, wrapper, live attributes, stub proxy, report), grpcio making the calls
with the stubs generated from proto/spark/connect, the proxy, the simulator behind it, and the spans
the proxy stores, read back with ``sparktrace traces show``.

The checks, per version: ExecutePlan (with its ReattachExecute/ReleaseExecute), AnalyzePlan, Config,
Interrupt, AddArtifacts, ArtifactStatus (and 4.x's FetchErrorDetails, ReleaseSession) all carry the
running task's identity, in its trace, under its task span -- for a session created before the
listener ran, one created after, and one passed from task A to task B. A real child process (python3
running a script with the stand-in client) continues the TRACEPARENT the plugin exported; the task's
own report becomes the ``airflow.task`` span its operations hang under.
"""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import harness
import test_sim
import test_tracing
from harness import new_id
from test_tracing import OPERATION, SERVICE, TracingCase, airflow_trace_id, client_context

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "integrations" / "airflow"
sys.path.insert(0, str(PLUGIN_DIR))

from sparktrace_airflow import sparktrace_plugin as plugin  # noqa: E402  (the path above first)
from tests import _support as airflow_shapes  # noqa: E402
from tests import pyspark_shapes as shapes  # noqa: E402

RUN = "scheduled__2026-11-25T00:00:00+00:00"
# The simulator of test_tracing cuts a reattachable stream after 2000 bytes: 5 batches of 1000 bytes
# make ExecutePlan + 2 ReattachExecute, each acknowledged by ReleaseExecute.
SIM_PARAMS = "x-sim-batches=5;x-sim-batch-bytes=1000"
# CloneSession (4.1) is left out: the simulator does not implement it (the unit tests cover it).
NOT_HERE = ("CloneSession",)
IDENTITY_ATTRIBUTES = ("airflow.dag_id", "airflow.task_id", "airflow.run_id", "airflow.try_number", "airflow.map_index")


def setUpModule():
    test_tracing.setUpModule()  # the simulator and the Spark Connect stubs


def rpc_span(rpc):
    return f"{SERVICE}/{rpc}"


class AirflowCase(TracingCase):
    def setUp(self):
        super().setUp()
        self.meta_path = list(sys.meta_path)
        self.environ = dict(os.environ)
        os.environ["SPARKTRACE_REPORT"] = "off"  # reports only where a test asks for them
        for name in ("SPARKTRACE_REPORT_URL", "SPARKTRACE_UI_URL", "SPARKTRACE_TOKEN", "TRACEPARENT", "TRACESTATE"):
            os.environ.pop(name, None)
        self.addCleanup(self.restore)
        from spark.connect import relations_pb2  # generated next to base_pb2 by load_stubs()

        self.plan = test_tracing.PB.Plan(root=relations_pb2.Relation(sql=relations_pb2.SQL(query="SELECT 1")))
        artifact = tempfile.NamedTemporaryFile(prefix="sparktrace-artifact-", suffix=".txt", delete=False)
        artifact.write(b"an artifact")
        artifact.close()
        self.artifact = artifact.name
        self.addCleanup(os.unlink, artifact.name)

    def restore(self):
        plugin.flush_reports(2)
        plugin.uninstall_metadata_wrapper()
        shapes.unload()
        airflow_shapes.remove_fake_airflow()
        sys.meta_path[:] = self.meta_path
        os.environ.clear()
        os.environ.update(self.environ)

    def load(self, version):
        return shapes.load(version, pb2=test_tracing.PB, pb2_grpc=test_tracing.PB_GRPC)

    def client(self, module, proxy):
        return module.SparkConnectClient(f"sc://{proxy.grpc_address}/;user_id=etl;{SIM_PARAMS}")

    def run_task(self, ti):
        plugin.SparktraceListener().on_task_instance_running(None, ti)

    def exercise(self, client, version):
        return shapes.exercise(client, version, plan=self.plan, artifact=self.artifact, skip=NOT_HERE)

    def expected_counts(self, version):
        """At least these spans in the task's trace for one ``exercise``."""
        counts = {rpc_span(rpc): 1 for rpc in shapes.RPCS[version] if rpc not in NOT_HERE}
        counts[OPERATION] = 1
        if version != "3.4":
            counts[rpc_span("ReattachExecute")] = 2
            counts[rpc_span("AddArtifacts")] = 2  # add_artifacts, and cache_artifact after ArtifactStatus
        return counts

    def assert_task_trace(self, ti, version, parent_span_id=None, trace_id=None):
        """The task's trace holds every RPC kind of ``version``, each span with the task's identity,
        every root of it under the task span."""
        identity = plugin.TaskIdentity(ti.dag_id, ti.task_id, ti.run_id, ti.try_number, ti.map_index)
        derived = plugin.parse_traceparent(plugin.derived_traceparent(identity))
        trace_id = trace_id or airflow_trace_id(ti.dag_id, ti.task_id, ti.run_id, ti.try_number, ti.map_index)
        self.assertEqual(trace_id if parent_span_id else derived[1], trace_id)
        parent_span_id = parent_span_id or derived[2]
        trace = self.store.wait(trace_id, **self.expected_counts(version))
        span_ids = {span["span_id"] for span in trace.spans}
        for span in trace.spans:
            with self.subTest(version=version, task=ti.task_id, span=span["name"]):
                attributes = span["attributes"]
                self.assertEqual(tuple(attributes.get(k) for k in IDENTITY_ATTRIBUTES),
                                 (ti.dag_id, ti.task_id, ti.run_id, ti.try_number, ti.map_index))
                if span["parent_span_id"] not in span_ids:
                    self.assertEqual(span["parent_span_id"], parent_span_id, "a root not under the task span")
        return trace


@harness.proxy_only
class EveryCallThroughTheProxy(AirflowCase):
    def test_sessions_before_and_after_the_listener_and_passed_from_task_a_to_task_b(self):
        airflow_shapes.fake_airflow("2.10.5")  # no OpenTelemetry: the parent span is derived
        proxy = self.start_proxy()
        for version in shapes.VERSIONS:
            with self.subTest(version=version):
                dag = new_id("dag")
                module = self.load(version)
                early = self.client(module, proxy)  # a session created before any task (DAG import time)
                task_a = airflow_shapes.FakeTaskInstance(dag, "task_a", RUN, 1)
                self.run_task(task_a)
                self.exercise(early, version)
                task_b = airflow_shapes.FakeTaskInstance(dag, "task_b", RUN, 2, 3)
                self.run_task(task_b)  # the same session, passed on to task B
                self.exercise(early, version)
                task_c = airflow_shapes.FakeTaskInstance(dag, "task_c", RUN, 1)
                self.run_task(task_c)
                self.exercise(self.client(module, proxy), version)  # a session created after the listener

                for ti in (task_a, task_b, task_c):
                    trace = self.assert_task_trace(ti, version)
                    names = {span["name"] for span in trace.spans}
                    for rpc in shapes.RPCS[version]:
                        if rpc not in NOT_HERE:
                            self.assertIn(rpc_span(rpc), names, f"{version}: no {rpc} in {ti.task_id}'s trace")
                plugin.uninstall_metadata_wrapper()
                shapes.unload()

    def test_airflow_3_task_span_from_the_context_carrier(self):
        airflow_shapes.fake_airflow("3.1.0")
        proxy = self.start_proxy()
        trace_id, span_id, traceparent = client_context()
        module = self.load("4.0")
        early = self.client(module, proxy)
        ti = airflow_shapes.FakeTaskInstance(new_id("dag"), "load", RUN, 1, context_carrier={"traceparent": traceparent})
        self.run_task(ti)
        self.exercise(early, "4.0")
        self.assert_task_trace(ti, "4.0", parent_span_id=span_id, trace_id=trace_id)


CHILD_SCRIPT = r"""
import sys
sys.path[:0] = [{plugin_dir!r}, {stubs_dir!r}, {tree!r}]
from tests import pyspark_shapes as shapes
from spark.connect import base_pb2, base_pb2_grpc, relations_pb2
sys.modules[shapes.PB2_MODULE] = base_pb2
sys.modules[shapes.PB2_GRPC_MODULE] = base_pb2_grpc
import sparktrace_airflow.environment as environment   # the one line a plain script needs
assert environment.active, "nothing to continue in the environment"
from pyspark.sql.connect.client import SparkConnectClient
client = SparkConnectClient(sys.argv[1])
client.to_table(base_pb2.Plan(root=relations_pb2.Relation(sql=relations_pb2.SQL(query="SELECT 1"))))
client.get_configs("spark.sql.shuffle.partitions")
client.close()
"""


@harness.proxy_only
class ChildProcesses(AirflowCase):
    def run_child(self, proxy, environment):
        script = CHILD_SCRIPT.format(plugin_dir=str(PLUGIN_DIR), stubs_dir=test_sim._STUBS_DIR,
                                     tree=shapes.tree("3.5"))
        result = subprocess.run([sys.executable, "-c", script, f"sc://{proxy.grpc_address}/;user_id=etl"],
                                env=environment, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def child_environment(self, ti):
        """What a BashOperator child gets: the task process's os.environ (the plugin's TRACEPARENT and
        map index in it) plus Airflow's AIRFLOW_CTX_* (context_to_airflow_vars)."""
        return dict(os.environ, AIRFLOW_CTX_DAG_ID=ti.dag_id, AIRFLOW_CTX_TASK_ID=ti.task_id,
                    AIRFLOW_CTX_DAG_RUN_ID=ti.run_id, AIRFLOW_CTX_TRY_NUMBER=str(ti.try_number),
                    PYTHONDONTWRITEBYTECODE="1")

    def test_a_child_continues_the_derived_task_span(self):
        airflow_shapes.fake_airflow("2.10.5")
        proxy = self.start_proxy()
        ti = airflow_shapes.FakeTaskInstance(new_id("dag"), "spark_submit", RUN, 2, 6)
        self.run_task(ti)  # in this (the task's) process: exports TRACEPARENT
        identity = plugin.TaskIdentity(ti.dag_id, ti.task_id, RUN, 2, 6)
        self.assertEqual(os.environ["TRACEPARENT"], plugin.derived_traceparent(identity))
        self.run_child(proxy, self.child_environment(ti))
        _, trace_id, span_id, _ = plugin.parse_traceparent(os.environ["TRACEPARENT"])
        trace = self.store.wait(trace_id, op=1, execute=1, config=1)
        self.assertEqual(trace.one(OPERATION)["parent_span_id"], span_id)
        self.assertEqual(trace.one(rpc_span("Config"))["parent_span_id"], span_id)
        for span in trace.spans:
            self.assertEqual((span["attributes"].get("airflow.task_id"), span["attributes"].get("airflow.map_index")),
                             ("spark_submit", 6), span["name"])

    def test_a_child_continues_airflows_task_span(self):
        airflow_shapes.fake_airflow("3.1.0")
        proxy = self.start_proxy()
        trace_id, span_id, traceparent = client_context()
        ti = airflow_shapes.FakeTaskInstance(new_id("dag"), "bash", RUN, 1,
                                             context_carrier={"traceparent": traceparent, "tracestate": "k=v"})
        self.run_task(ti)
        self.assertEqual((os.environ["TRACEPARENT"], os.environ["TRACESTATE"]), (traceparent, "k=v"))
        self.run_child(proxy, self.child_environment(ti))
        trace = self.store.wait(trace_id, op=1, execute=1, config=1)
        operation = trace.one(OPERATION)
        self.assertEqual(operation["parent_span_id"], span_id)
        self.assertEqual(operation["trace_state"], "k=v")
        self.assertEqual(operation["attributes"].get("airflow.task_id"), "bash")


@harness.proxy_only
class TheTaskReport(AirflowCase):
    def test_the_report_is_the_task_span_its_operations_hang_under(self):
        airflow_shapes.fake_airflow("2.10.5")
        proxy = self.start_proxy()
        os.environ.update(SPARKTRACE_REPORT="auto", SPARKTRACE_REPORT_URL=f"http://{proxy.admin_address}")
        module = self.load("4.0")
        ti = airflow_shapes.FakeTaskInstance(new_id("dag"), "load", RUN, 1, task=airflow_shapes.SparkSubmitOperator())
        self.run_task(ti)  # a Spark operator: "running" right away
        client = self.client(module, proxy)
        client.get_configs("spark.sql.shuffle.partitions")
        client.to_table(self.plan)
        ti.state = "success"
        plugin.SparktraceListener().on_task_instance_success(None, ti)
        self.assertTrue(plugin.flush_reports(5))

        identity = plugin.TaskIdentity(ti.dag_id, "load", RUN, 1)
        _, trace_id, span_id, _ = plugin.parse_traceparent(plugin.derived_traceparent(identity))
        trace = self.store.wait(trace_id, **{"airflow.task": 1, OPERATION: 1, rpc_span("Config"): 1})

        def final():
            current = self.store.show(trace_id)
            task = current.one("airflow.task") if current else None
            return task if task and task["attributes"].get("airflow.task.state") == "success" else None

        task = harness.wait_until(final, test_tracing.SPAN_WAIT, interval=0.1, message="the final report")
        self.assertEqual(task["span_id"], span_id)
        self.assertIsNone(task["parent_span_id"])
        self.assertEqual(task["attributes"].get("airflow.task.operator"), "SparkSubmitOperator")
        self.assertEqual(trace.one(OPERATION)["parent_span_id"], span_id)
        results = plugin._process_state()["reporter"].results
        self.assertEqual([(state, status) for state, status, _ in results][-1], ("success", 202))


if __name__ == "__main__":
    unittest.main()
