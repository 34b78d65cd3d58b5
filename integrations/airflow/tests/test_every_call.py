"""Every RPC of a session carries the identity of the task running now: PySpark 3.4, 3.5, 4.0 and 4.1
stand-ins (tests/pyspark_shapes) over a channel that records each call's metadata and thread.

Sessions created before the listener, after it, and passed from task A to task B; calls from other
threads (the reattachable iterator's ReleaseExecute runs on a thread pool); the sc:// URL's own pairs
win; a client imported after the listener is patched on import. A control shows the stand-ins do
reproduce what the plugin has to fix (the ArtifactManager's copy, 4.0's FetchErrorDetails without
metadata), so these tests fail without it.
"""

import os
import sys
import tempfile
import threading
import unittest
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceListener, TaskIdentity
from tests import pyspark_shapes as shapes
from tests._support import FakeTaskInstance, fake_airflow, remove_fake_airflow

RUN = "scheduled__2026-11-25T00:00:00+00:00"
URL = "sc://spark:15002/;user_id=etl;token=secret;custom=1"
IDENTITY_KEYS = ("x-airflow-dag-id", "x-airflow-task-id", "x-airflow-run-id", "x-airflow-try-number",
                 "x-airflow-map-index")


def task(task_id, try_number=1, map_index=-1):
    return FakeTaskInstance("etl", task_id, RUN, try_number, map_index)


def expected_pairs(task_id, try_number=1, map_index=-1):
    identity = TaskIdentity("etl", task_id, RUN, try_number, map_index)
    return identity.headers() + [("traceparent", plugin.derived_traceparent(identity))]


class EveryCallBase(unittest.TestCase):
    def setUp(self):
        self.meta_path = list(sys.meta_path)
        environment = mock.patch.dict(os.environ, {"SPARKTRACE_REPORT": "off"})
        environment.start()
        self.addCleanup(environment.stop)
        fake_airflow("2.10.5")  # no OTel: the parent is the span derived from the identity
        self.addCleanup(remove_fake_airflow)
        self.addCleanup(shapes.unload)
        self.addCleanup(plugin.uninstall_metadata_wrapper)
        artifact = tempfile.NamedTemporaryFile(prefix="sparktrace-artifact-", suffix=".txt", delete=False)
        artifact.write(b"artifact")
        artifact.close()
        self.artifact = artifact.name
        self.addCleanup(os.unlink, artifact.name)

    def tearDown(self):
        sys.meta_path[:] = self.meta_path

    def exercise(self, client, version):
        done = shapes.exercise(client, version, artifact=self.artifact)
        self.assertEqual(sorted(done), sorted(r for r in shapes.RPCS[version] if r not in ("ReattachExecute", "ReleaseExecute")))

    def assert_every_call_carries(self, channel, version, task_id, **kw):
        want = expected_pairs(task_id, **kw)
        self.assertEqual(sorted(set(channel.methods())), sorted(shapes.RPCS[version]))
        for call in channel.calls:
            with self.subTest(version=version, method=call.method, thread=call.thread):
                plugin_pairs = [(k, v) for k, v in call.metadata if k in IDENTITY_KEYS or k in ("traceparent", "tracestate")]
                self.assertEqual(plugin_pairs, want, f"{call.method} on {call.thread}")
                # The URL's own pairs stay; token and user_id never become metadata (PySpark's rule).
                # 4.0's FetchErrorDetails passes no metadata: it gets the plugin's pairs, nothing else.
                if call.method == "FetchErrorDetails":
                    self.assertNotIn(("custom", "1"), call.metadata)
                else:
                    self.assertIn(("custom", "1"), call.metadata)
                self.assertNotIn("token", dict(call.metadata))
                self.assertNotIn("user_id", dict(call.metadata))


class EveryCall(EveryCallBase):
    def test_session_created_before_the_listener(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                client = shapes.load(version).SparkConnectClient(URL)  # e.g. at DAG import time
                SparktraceListener().on_task_instance_running(None, task("load"))
                self.exercise(client, version)
                self.assert_every_call_carries(channels[0], version, "load")
                plugin.uninstall_metadata_wrapper()

    def test_session_created_after_the_listener(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                module = shapes.load(version)
                SparktraceListener().on_task_instance_running(None, task("load", 2, 7))
                client = module.SparkConnectClient(URL)
                self.exercise(client, version)
                self.assert_every_call_carries(channels[0], version, "load", try_number=2, map_index=7)
                plugin.uninstall_metadata_wrapper()

    def test_a_session_passed_from_task_a_to_task_b_switches_on_every_rpc_kind(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                module = shapes.load(version)
                SparktraceListener().on_task_instance_running(None, task("task_a"))
                client = module.SparkConnectClient(URL)  # created in A: its ArtifactManager copies A
                self.exercise(client, version)
                self.assert_every_call_carries(channels[0], version, "task_a")
                channels[0].clear()
                SparktraceListener().on_task_instance_running(None, task("task_b", 3))
                self.exercise(client, version)
                self.assert_every_call_carries(channels[0], version, "task_b", try_number=3)
                plugin.uninstall_metadata_wrapper()

    def test_release_execute_runs_on_another_thread_and_carries_the_task(self):
        for version in ("3.5", "4.0", "4.1"):
            with self.subTest(version=version), shapes.recording_channels() as channels:
                client = shapes.load(version).SparkConnectClient(URL)
                SparktraceListener().on_task_instance_running(None, task("load"))
                client.to_table(None)
                shapes.drain_releases()
                releases = channels[0].by_method("ReleaseExecute")
                self.assertGreaterEqual(len(releases), 1)
                for call in releases:
                    self.assertNotEqual(call.thread, threading.main_thread().name)
                    self.assertIn(("x-airflow-task-id", "load"), call.metadata)
                plugin.uninstall_metadata_wrapper()

    def test_what_the_url_sets_wins_and_nothing_is_sent_twice(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                client = shapes.load(version).SparkConnectClient("sc://h:1/;x-airflow-dag-id=mine;custom=1")
                SparktraceListener().on_task_instance_running(None, task("load"))
                self.exercise(client, version)
                SparktraceListener().on_task_instance_running(None, task("other"))
                self.exercise(client, version)
                for call in channels[0].calls:
                    keys = [k for k, _ in call.metadata]
                    for key in IDENTITY_KEYS[:2] + ("traceparent",):
                        self.assertEqual(keys.count(key), 1, (call.method, call.metadata))
                    self.assertEqual(dict(call.metadata)["x-airflow-dag-id"], "mine", call.method)
                self.assertEqual(dict(channels[0].calls[-1].metadata)["x-airflow-task-id"], "other")
                plugin.uninstall_metadata_wrapper()

    def test_client_imported_after_the_listener_is_patched_on_import(self):
        for version in shapes.VERSIONS:
            with self.subTest(version=version), shapes.recording_channels() as channels:
                shapes.load(version, import_client=False)
                SparktraceListener().on_task_instance_running(None, task("load"))
                self.assertNotIn("pyspark.sql.connect.client", sys.modules)
                import importlib

                module = importlib.import_module("pyspark.sql.connect.client")
                client = module.SparkConnectClient(URL)
                self.exercise(client, version)
                self.assert_every_call_carries(channels[0], version, "load")
                plugin.uninstall_metadata_wrapper()

    def test_the_stored_copies_read_live_and_keep_the_users_pairs(self):
        """ArtifactManager._metadata (and the iterator's) read through the descriptor: the copy stays in
        the instance's __dict__, what the plugin had added is replaced, the URL's pairs stay first."""
        with shapes.recording_channels():
            module = shapes.load("4.0")
            SparktraceListener().on_task_instance_running(None, task("task_a"))
            client = module.SparkConnectClient(URL)
            manager = client._artifact_manager
            stored = manager.__dict__["_metadata"]
            self.assertIn(("x-airflow-task-id", "task_a"), stored)
            SparktraceListener().on_task_instance_running(None, task("task_b"))
            self.assertEqual(list(manager._metadata), [("custom", "1")] + expected_pairs("task_b"))
            self.assertIs(manager.__dict__["_metadata"], stored)  # PySpark's own value is untouched
            plugin.uninstall_metadata_wrapper()
            self.assertIs(manager._metadata, stored)  # and is what it reads again once uninstalled


class WithoutTheLiveAttributes(EveryCallBase):
    """Control: with only ChannelBuilder.metadata() wrapped (the plugin before this change), the
    stand-ins show the stale copy and the call without metadata -- so the tests above can fail."""

    def test_stale_artifact_metadata_and_fetch_error_details_without_identity(self):
        with mock.patch.object(plugin, "LIVE_ATTRIBUTES", ()), shapes.recording_channels() as channels:
            module = shapes.load("4.0")
            SparktraceListener().on_task_instance_running(None, task("task_a"))
            client = module.SparkConnectClient(URL)
            SparktraceListener().on_task_instance_running(None, task("task_b"))
            shapes.exercise(client, "4.0", artifact=self.artifact)
            by_method = {c.method: dict(c.metadata) for c in channels[0].calls}
            self.assertEqual(by_method["Config"]["x-airflow-task-id"], "task_b")
            self.assertEqual(by_method["AddArtifacts"]["x-airflow-task-id"], "task_a")
            self.assertEqual(by_method["ArtifactStatus"]["x-airflow-task-id"], "task_a")
            self.assertNotIn("x-airflow-task-id", by_method["FetchErrorDetails"])


class Threads(EveryCallBase):
    def test_calls_from_other_threads_while_the_task_switches_see_one_whole_task(self):
        """Each call's pairs come from one task, never a mix of two (one immutable context)."""
        with shapes.recording_channels() as channels:
            module = shapes.load("4.0")
            SparktraceListener().on_task_instance_running(None, task("task_a"))
            client = module.SparkConnectClient(URL)
            stop = threading.Event()
            errors = []

            def caller():
                try:
                    while not stop.is_set():
                        client.get_configs("k")
                        client._artifact_manager.is_cached_artifact("0" * 64)
                except Exception as error:  # pragma: no cover - reported below
                    errors.append(error)

            threads = [threading.Thread(target=caller, daemon=True) for _ in range(4)]
            for thread in threads:
                thread.start()
            for i in range(200):
                SparktraceListener().on_task_instance_running(None, task("task_a" if i % 2 else "task_b", 1 + i % 3))
            stop.set()
            for thread in threads:
                thread.join(10)
                self.assertFalse(thread.is_alive())
            self.assertEqual(errors, [])
            calls = channels[0].calls
            self.assertGreater(len(calls), 0)
            for call in calls:
                md = dict(call.metadata)
                identity = TaskIdentity("etl", md["x-airflow-task-id"], RUN, int(md["x-airflow-try-number"]), -1)
                self.assertEqual(md["traceparent"], plugin.derived_traceparent(identity), call.metadata)
            plugin.uninstall_metadata_wrapper()


if __name__ == "__main__":
    unittest.main()
