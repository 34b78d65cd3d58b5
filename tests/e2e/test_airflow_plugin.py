"""The Airflow plugin (integrations/airflow) end to end, as far as it can run here.

Airflow and PySpark cannot be installed on this machine, so: the task instance is an object shaped like
Airflow's, and the Spark Connect client is a stand-in for PySpark's ``ChannelBuilder`` written from its
rules (both from integrations/airflow/tests/_support.py). What is real: the plugin's own listener and
metadata wrapper (its code path, unchanged), a grpcio client that sends exactly the metadata the wrapped
builder returns, the proxy, the simulator behind it, and the trace the proxy stores. The checks: the
stored trace is the one the task's traceparent names, the operation hangs under Airflow's task span, and
the spans carry the task's identity; without the plugin, `sparktrace_remote`'s URL parameters alone give
the identity-derived trace.
"""

import sys
import unittest
import uuid
from datetime import datetime, timezone
from pathlib import Path

import harness
import test_tracing
from harness import new_id
from test_tracing import OPERATION, TracingCase, airflow_trace_id

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "integrations" / "airflow"
sys.path.insert(0, str(PLUGIN_DIR))

from sparktrace_airflow import sparktrace_plugin as plugin  # noqa: E402  (the path above first)
from tests import _support as airflow_shapes  # noqa: E402


def setUpModule():
    test_tracing.setUpModule()  # the simulator and the Spark Connect stubs


@harness.proxy_only
class AirflowPluginEndToEnd(TracingCase):
    def setUp(self):
        super().setUp()
        self.client = airflow_shapes.inject_fake_pyspark()
        self.addCleanup(airflow_shapes.remove_fake_pyspark)
        self.addCleanup(plugin.uninstall_metadata_wrapper)
        self.addCleanup(airflow_shapes.remove_fake_airflow)

    def builder_metadata(self, proxy, url_params=""):
        """What PySpark would send: a builder for the proxy's sc:// URL, created after the listener ran."""
        builder = self.client.DefaultChannelBuilder(f"sc://{proxy.grpc_address}/;user_id=etl{url_params}")
        return builder.metadata()

    def test_airflow_3_task_span_from_the_context_carrier_is_the_parent(self):
        airflow_shapes.fake_airflow("3.0.2")
        trace_id, span_id = "ab" + uuid.uuid4().hex[:30], uuid.uuid4().hex[:16]
        ti = airflow_shapes.FakeTaskInstance(
            new_id("dag"), "load_orders", "scheduled__2026-11-25T00:00:00+00:00", try_number=2,
            context_carrier={"traceparent": f"00-{trace_id}-{span_id}-01"})
        plugin.SparktraceListener().on_task_instance_running(None, ti)
        proxy = self.start_proxy()
        op, _ = self.run_query(self.stub(proxy), metadata=self.builder_metadata(proxy))

        trace = self.store.wait(trace_id, op=1, execute=1)
        operation = trace.one(OPERATION)
        self.assertEqual(operation["attributes"].get("spark.connect.operation_id"), op)
        self.assertEqual(operation["parent_span_id"], span_id, "the operation hangs under Airflow's task span")
        attributes = operation["attributes"]
        self.assertEqual((attributes.get("airflow.dag_id"), attributes.get("airflow.task_id"),
                          attributes.get("airflow.run_id"), attributes.get("airflow.try_number"),
                          attributes.get("airflow.map_index")),
                         (ti.dag_id, ti.task_id, ti.run_id, 2, -1))
        self.assertEqual(attributes.get("sparktrace.trace_origin"), "client")

    def test_airflow_2_10_ids_are_derived_like_airflows_own(self):
        airflow_shapes.fake_airflow("2.10.5", {("traces", "otel_on"): "True"})
        started = datetime(2026, 11, 25, 6, 0, 0, tzinfo=timezone.utc)
        dag_id, run_id = new_id("dag"), "manual__2026-11-25T06:00:00+00:00"
        ti = airflow_shapes.FakeTaskInstance(dag_id, "transform", run_id, try_number=1,
                                             dag_run=airflow_shapes.FakeDagRun(dag_id, run_id, started))
        plugin.SparktraceListener().on_task_instance_running(None, ti)
        proxy = self.start_proxy()
        op, _ = self.run_query(self.stub(proxy), metadata=self.builder_metadata(proxy))

        expected_trace = plugin.airflow_210_trace_id(dag_id, run_id, started)
        expected_parent = plugin.airflow_210_task_span_id(dag_id, run_id, "transform", 1)
        trace = self.store.wait(expected_trace, op=1, execute=1)
        operation = trace.one(OPERATION)
        self.assertEqual(operation["attributes"].get("spark.connect.operation_id"), op)
        self.assertEqual(operation["parent_span_id"], expected_parent)
        self.assertEqual(operation["attributes"].get("airflow.task_id"), "transform")

    def test_without_the_plugin_the_remote_url_alone_names_the_attempt(self):
        """`sparktrace_remote`'s parameters (PySpark decodes them once): the identity-derived trace."""
        identity = plugin.TaskIdentity(new_id("dag"), "publish;final=yes", "scheduled__2026-11-25T00:00:00+00:00", 3)
        proxy = self.start_proxy()
        params = ";" + plugin.identity_url_params(identity)
        op, _ = self.run_query(self.stub(proxy), metadata=self.builder_metadata(proxy, params))

        trace = self.store.wait(airflow_trace_id(identity.dag_id, identity.task_id, identity.run_id, 3), op=1,
                                execute=1)
        attributes = trace.one(OPERATION)["attributes"]
        self.assertEqual(attributes.get("spark.connect.operation_id"), op)
        self.assertEqual(attributes.get("airflow.task_id"), "publish;final=yes")
        self.assertEqual(attributes.get("sparktrace.trace_origin"), "airflow")


if __name__ == "__main__":
    unittest.main()
