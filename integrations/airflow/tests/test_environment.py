"""Child processes of a task: the listener exports OpenTelemetry's environment carrier (TRACEPARENT,
TRACESTATE) and the map index; a plain script activates the plugin from them and Airflow's
AIRFLOW_CTX_* variables (``trace_from_environment`` / ``import sparktrace_airflow.environment``); and
the zero-dependency way, ``sc://host:port/;traceparent=$TRACEPARENT``, parsed by the PySpark
stand-ins as PySpark parses it."""

import os
import subprocess
import sys
import unittest
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceListener, TaskIdentity
from tests import pyspark_shapes as shapes
from tests._support import FakeTaskInstance, fake_airflow, remove_fake_airflow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUN = "manual__2026-11-25T06:00:00+00:00"
CARRIER_TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Base(unittest.TestCase):
    def setUp(self):
        self.meta_path = list(sys.meta_path)
        self.environment = mock.patch.dict(os.environ, {"SPARKTRACE_REPORT": "off"})
        self.environment.start()
        for name in ("TRACEPARENT", "TRACESTATE", "SPARKTRACE_AIRFLOW_MAP_INDEX"):
            os.environ.pop(name, None)
        for name in [n for n in os.environ if n.startswith("AIRFLOW_CTX_")]:
            os.environ.pop(name)

    def tearDown(self):
        plugin.uninstall_metadata_wrapper()
        shapes.unload()
        remove_fake_airflow()
        self.environment.stop()
        sys.meta_path[:] = self.meta_path


class Export(Base):
    def test_the_listener_exports_the_derived_parent_without_an_airflow_span(self):
        fake_airflow("2.10.5")
        SparktraceListener().on_task_instance_running(None, FakeTaskInstance("etl", "load", RUN, 2, 5))
        identity = TaskIdentity("etl", "load", RUN, 2, 5)
        self.assertEqual(os.environ["TRACEPARENT"], plugin.derived_traceparent(identity))
        self.assertNotIn("TRACESTATE", os.environ)
        self.assertEqual(os.environ["SPARKTRACE_AIRFLOW_MAP_INDEX"], "5")

    def test_the_listener_exports_airflows_task_span_and_drops_a_stale_tracestate(self):
        fake_airflow("3.1.0")
        os.environ["TRACESTATE"] = "stale=1"
        ti = FakeTaskInstance("etl", "load", RUN, 1, context_carrier={"traceparent": CARRIER_TP, "tracestate": "k=v"})
        SparktraceListener().on_task_instance_running(None, ti)
        self.assertEqual((os.environ["TRACEPARENT"], os.environ["TRACESTATE"]), (CARRIER_TP, "k=v"))
        SparktraceListener().on_task_instance_running(None, FakeTaskInstance("etl", "next", RUN, 1))
        self.assertEqual(os.environ["TRACEPARENT"], plugin.derived_traceparent(TaskIdentity("etl", "next", RUN, 1)))
        self.assertNotIn("TRACESTATE", os.environ)
        self.assertEqual(os.environ["SPARKTRACE_AIRFLOW_MAP_INDEX"], "-1")

    def test_an_invalid_identity_exports_nothing(self):
        fake_airflow("2.10.5")
        os.environ["TRACEPARENT"] = CARRIER_TP
        with self.assertLogs("sparktrace_airflow", "WARNING"):
            SparktraceListener().on_task_instance_running(None, FakeTaskInstance("etl", "load", "caf\u00e9", 1))
        self.assertEqual(os.environ["TRACEPARENT"], CARRIER_TP)
        self.assertNotIn("SPARKTRACE_AIRFLOW_MAP_INDEX", os.environ)


class FromTheEnvironment(Base):
    CHILD_ENV = {
        "AIRFLOW_CTX_DAG_ID": "etl", "AIRFLOW_CTX_TASK_ID": "submit", "AIRFLOW_CTX_DAG_RUN_ID": RUN,
        "AIRFLOW_CTX_TRY_NUMBER": "3", "SPARKTRACE_AIRFLOW_MAP_INDEX": "4",
        "TRACEPARENT": CARRIER_TP, "TRACESTATE": "k=v",
    }

    def test_every_call_carries_the_task_and_its_span(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                module = shapes.load(version)
                self.assertTrue(plugin.trace_from_environment(self.CHILD_ENV))
                shapes.exercise(module.SparkConnectClient("sc://h:1/"), version)
                want = TaskIdentity("etl", "submit", RUN, 3, 4).headers() + [("traceparent", CARRIER_TP),
                                                                          ("tracestate", "k=v")]
                for call in channels[0].calls:
                    self.assertEqual(call.metadata, want, call.method)
                plugin.uninstall_metadata_wrapper()

    def test_identity_alone_gets_the_derived_parent_and_traceparent_alone_is_enough(self):
        with shapes.recording_channels() as channels:
            module = shapes.load("4.0")
            env = {k: v for k, v in self.CHILD_ENV.items() if not k.startswith("TRACE")}
            self.assertTrue(plugin.trace_from_environment(env))
            module.SparkConnectClient("sc://h:1/").get_configs("k")
            identity = TaskIdentity("etl", "submit", RUN, 3, 4)
            self.assertEqual(channels[0].calls[-1].metadata, identity.headers() + [
                ("traceparent", plugin.derived_traceparent(identity))])
            self.assertTrue(plugin.trace_from_environment({"TRACEPARENT": CARRIER_TP}))
            module.SparkConnectClient("sc://h:1/").get_configs("k")
            self.assertEqual(channels[-1].calls[-1].metadata, [("traceparent", CARRIER_TP)])

    def test_nothing_to_continue_or_no_pyspark_does_nothing(self):
        shapes.load("4.0")
        self.assertFalse(plugin.trace_from_environment({}))
        self.assertFalse(plugin.trace_from_environment({"TRACEPARENT": "garbage", "AIRFLOW_CTX_DAG_ID": "d"}))
        shapes.unload()
        if not plugin._pyspark_present():
            self.assertFalse(plugin.trace_from_environment(self.CHILD_ENV))

    def test_import_sparktrace_airflow_environment_in_a_child_process(self):
        """A plain script: one import line, then PySpark (here the 3.5 stand-in, imported afterwards)."""
        script = (
            "import sys\n"
            f"sys.path[:0] = [{ROOT!r}, {shapes.tree('3.5')!r}]\n"
            "from tests import pyspark_shapes as shapes\n"
            "sys.modules[shapes.PB2_MODULE] = shapes.fake_proto\n"
            "sys.modules[shapes.PB2_GRPC_MODULE] = shapes.fake_proto_grpc\n"
            "import sparktrace_airflow.environment as env\n"
            "assert env.active\n"
            "with shapes.recording_channels() as channels:\n"
            "    from pyspark.sql.connect.client import SparkConnectClient\n"
            "    SparkConnectClient('sc://h:1/').get_configs('k')\n"
            "print(dict(channels[0].calls[-1].metadata))\n"
        )
        environment = dict(os.environ, **self.CHILD_ENV, PYTHONDONTWRITEBYTECODE="1")
        result = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        metadata = eval(result.stdout)  # noqa: S307 - our own child's dict repr
        self.assertEqual((metadata["x-airflow-task-id"], metadata["x-airflow-map-index"], metadata["traceparent"]),
                         ("submit", "4", CARRIER_TP))


class ZeroDependencyUrl(unittest.TestCase):
    def tearDown(self):
        shapes.unload()

    def test_traceparent_as_an_sc_url_parameter_needs_no_encoding(self):
        """A traceparent is [0-9a-f-] only: "$TRACEPARENT" pasted into the URL is what PySpark sends."""
        identity = TaskIdentity("etl", "load", RUN, 1)
        traceparent = plugin.derived_traceparent(identity)
        for version in shapes.VERSIONS:
            with self.subTest(version=version):
                module = shapes.load(version)
                builder_class = getattr(module, "DefaultChannelBuilder", None) or module.ChannelBuilder
                builder = builder_class(f"sc://sparktrace:15002/;user_id=etl;traceparent={traceparent}")
                self.assertEqual(list(builder.metadata()), [("traceparent", traceparent)])
                params = plugin.identity_url_params(identity, traceparent)
                builder = builder_class(f"sc://sparktrace:15002/;{params}")
                self.assertEqual(list(builder.metadata()), plugin.connect_metadata(identity, traceparent))


if __name__ == "__main__":
    unittest.main()
