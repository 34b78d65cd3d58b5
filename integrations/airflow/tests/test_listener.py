"""The listener and the metadata wrapper, exercised with objects shaped like Airflow's task
instance and a module shaped like PySpark's ``pyspark.sql.connect.client`` (tests/_support.py),
injected into sys.modules by the test: neither Airflow nor PySpark is installed here."""

import importlib
import importlib.util
import os
import sys
import tempfile
import unittest
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceListener, TaskIdentity, connect_metadata
from tests._support import (
    CLIENT_INIT_SOURCE,
    SC_CLIENT_SOURCE,
    FakeTaskInstance,
    fake_airflow,
    fake_opentelemetry,
    inject_fake_pyspark,
    remove_fake_airflow,
    remove_fake_opentelemetry,
    remove_fake_pyspark,
)

CARRIER_TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
URL = "sc://proxy:15002/;user_id=etl;token=secret;custom=1"


def ti(**kw):
    return FakeTaskInstance("etl", "load", "manual__2025-01-01T00:00:00+00:00", 2, **kw)


IDENTITY = TaskIdentity("etl", "load", "manual__2025-01-01T00:00:00+00:00", 2, -1)
EXPECTED = connect_metadata(IDENTITY, CARRIER_TP, "k=v")


class Base(unittest.TestCase):
    def setUp(self):
        self.meta_path = list(sys.meta_path)
        # The listener exports TRACEPARENT & co.; no report leaves these tests (test_report.py).
        environment = mock.patch.dict(os.environ, {"SPARKTRACE_REPORT": "off"})
        environment.start()
        self.addCleanup(environment.stop)
        fake_airflow("3.1.0")

    def tearDown(self):
        plugin.uninstall_metadata_wrapper()
        remove_fake_pyspark()
        remove_fake_airflow()
        remove_fake_opentelemetry()
        sys.meta_path[:] = self.meta_path


class WithoutPySpark(Base):
    def test_nothing_happens_and_nothing_raises(self):
        if importlib.util.find_spec("pyspark") is not None:
            self.skipTest("PySpark is installed here")
        SparktraceListener().on_task_instance_running(None, ti())
        self.assertEqual(sys.meta_path, self.meta_path)
        self.assertNotIn("pyspark", sys.modules)
        self.assertFalse(plugin.install_metadata_wrapper(None))


class Wrapper(Base):
    def test_builders_created_before_and_after_the_listener_carry_the_headers(self):
        client = inject_fake_pyspark()
        before = client.DefaultChannelBuilder(URL)
        self.assertEqual(before.metadata(), [("custom", "1")])
        SparktraceListener().on_task_instance_running(None, ti(context_carrier={"traceparent": CARRIER_TP, "tracestate": "k=v"}))
        after = client.DefaultChannelBuilder(URL)
        for builder in (before, after):
            self.assertEqual(builder.metadata(), [("custom", "1")] + EXPECTED)
        # token, user_id never become metadata (PySpark's rule, untouched)
        self.assertNotIn("token", dict(after.metadata()))

    def test_subclass_and_base_builder_covered(self):
        client = inject_fake_pyspark()
        SparktraceListener().on_task_instance_running(None, ti())
        plain = client.ChannelBuilder(params={"x": "y"})
        self.assertEqual(dict(plain.metadata())["x-airflow-task-id"], "load")

    def test_client_imported_after_the_listener_is_wrapped_on_import(self):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "pyspark", "sql", "connect", "client")
            os.makedirs(package)
            for directory in ("pyspark", "pyspark/sql", "pyspark/sql/connect"):
                open(os.path.join(root, directory, "__init__.py"), "w").close()
            with open(os.path.join(package, "__init__.py"), "w") as f:
                f.write(CLIENT_INIT_SOURCE)
            with open(os.path.join(package, "core.py"), "w") as f:
                f.write(SC_CLIENT_SOURCE)
            sys.path.insert(0, root)
            importlib.invalidate_caches()
            try:
                SparktraceListener().on_task_instance_running(None, ti(context_carrier={"traceparent": CARRIER_TP, "tracestate": "k=v"}))
                self.assertNotIn("pyspark.sql.connect.client", sys.modules)
                client = importlib.import_module("pyspark.sql.connect.client")
                self.assertEqual(client.DefaultChannelBuilder(URL).metadata(), [("custom", "1")] + EXPECTED)
                self.assertTrue(hasattr(client.ChannelBuilder.metadata, "__wrapped__"))
            finally:
                sys.path.remove(root)

    def test_second_task_in_the_same_process_replaces_the_identity(self):
        client = inject_fake_pyspark()
        builder = client.DefaultChannelBuilder(URL)
        SparktraceListener().on_task_instance_running(None, ti())
        SparktraceListener().on_task_instance_running(None, FakeTaskInstance("etl", "other", "r", 1, 3))
        md = dict(builder.metadata())
        self.assertEqual((md["x-airflow-task-id"], md["x-airflow-map-index"]), ("other", "3"))
        self.assertEqual(plugin.patch_client_module(client), 0)  # wrapped once only

    def test_headers_in_the_url_win_and_are_never_doubled(self):
        client = inject_fake_pyspark()
        SparktraceListener().on_task_instance_running(None, ti(context_carrier={"traceparent": CARRIER_TP}))
        builder = client.DefaultChannelBuilder("sc://p:1/;x-airflow-dag-id=mine;traceparent=" + CARRIER_TP.replace("01", "00", 1))
        keys = [k for k, _ in builder.metadata()]
        self.assertEqual(keys.count("x-airflow-dag-id"), 1)
        self.assertEqual(keys.count("traceparent"), 1)
        self.assertEqual(dict(builder.metadata())["x-airflow-dag-id"], "mine")

    def test_airflow_3_2_current_span_is_the_parent(self):
        fake_airflow("3.2.1")
        client = inject_fake_pyspark()
        SparktraceListener().on_task_instance_running(None, ti())
        # No span current (OTel off): the parent derived from the identity.
        self.assertEqual(dict(client.DefaultChannelBuilder(URL).metadata())["traceparent"],
                         plugin.derived_traceparent(IDENTITY))
        fake_opentelemetry(0x11111111111111111111111111111111, 0x2222222222222222)
        self.assertEqual(
            dict(client.DefaultChannelBuilder(URL).metadata())["traceparent"],
            "00-11111111111111111111111111111111-2222222222222222-01",
        )

    def test_current_span_of_another_trace_is_ignored_before_3_2(self):
        client = inject_fake_pyspark()
        SparktraceListener().on_task_instance_running(None, ti(context_carrier={"traceparent": CARRIER_TP}))
        fake_opentelemetry(0x11111111111111111111111111111111, 0x2222222222222222)
        self.assertEqual(dict(client.DefaultChannelBuilder(URL).metadata())["traceparent"], CARRIER_TP)
        fake_opentelemetry(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x3333333333333333)  # a child of the task span
        self.assertEqual(
            dict(client.DefaultChannelBuilder(URL).metadata())["traceparent"],
            "00-4bf92f3577b34da6a3ce929d0e0e4736-3333333333333333-01",
        )

    def test_invalid_identity_is_logged_and_not_sent(self):
        client = inject_fake_pyspark()
        with self.assertLogs("sparktrace_airflow", "WARNING"):
            SparktraceListener().on_task_instance_running(None, FakeTaskInstance("etl", "load", "caf\u00e9", 1))
        self.assertEqual(client.DefaultChannelBuilder(URL).metadata(), [("custom", "1")])


class Failures(Base):
    def test_exception_in_the_listener_is_logged_and_swallowed(self):
        inject_fake_pyspark()
        with mock.patch.object(plugin, "install_metadata_wrapper", side_effect=RuntimeError("boom")):
            with self.assertLogs("sparktrace_airflow", "WARNING") as logs:
                SparktraceListener().on_task_instance_running(None, ti())
        self.assertIn("boom", "\n".join(logs.output))

    def test_broken_task_instance_is_logged_and_swallowed(self):
        with self.assertLogs("sparktrace_airflow", "WARNING"):
            SparktraceListener().on_task_instance_running(None, object())

    def test_exception_inside_the_wrapper_leaves_the_call_unchanged(self):
        client = inject_fake_pyspark()
        SparktraceListener().on_task_instance_running(None, ti())
        with mock.patch.object(plugin, "connect_metadata", side_effect=RuntimeError("boom")):
            with self.assertLogs("sparktrace_airflow", "WARNING"):
                self.assertEqual(client.DefaultChannelBuilder(URL).metadata(), [("custom", "1")])

    def test_task_span_lookup_failure_still_sends_identity(self):
        client = inject_fake_pyspark()
        with mock.patch.object(plugin, "task_span_traceparent", side_effect=RuntimeError("db down")):
            with self.assertLogs("sparktrace_airflow", "WARNING"):
                SparktraceListener().on_task_instance_running(None, ti())
        md = dict(client.DefaultChannelBuilder(URL).metadata())
        self.assertEqual(md["x-airflow-dag-id"], "etl")
        self.assertEqual(md["traceparent"], plugin.derived_traceparent(IDENTITY))


if __name__ == "__main__":
    unittest.main()
