"""The "Spark trace" extra link, called as Airflow calls a global operator extra link:
``get_link(operator, ti_key=ti.key)``, with an object shaped like Airflow's TaskInstanceKey."""

import os
import unittest
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceLink, TaskIdentity, trace_view_url
from tests._support import FakeTaskInstanceKey, fake_airflow, remove_fake_airflow

JS_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")


def encode_uri_component(text):
    """JavaScript's encodeURIComponent, from ECMA-262: UTF-8 bytes, %XX upper case, all but the
    unreserved marks above."""
    out = []
    for char in text:
        if char in JS_UNRESERVED:
            out.append(char)
        else:
            out.extend("%%%02X" % byte for byte in char.encode("utf-8"))
    return "".join(out)


class Link(unittest.TestCase):
    def tearDown(self):
        remove_fake_airflow()

    def test_page_path_matches_encode_uri_component(self):
        run_ids = ["scheduled__2025-11-25T06:00:00+00:00", "a/b?c#d e%f", "caf\u00e9 ()!*'~"]
        for run_id in run_ids:
            with self.subTest(run_id=run_id):
                url = trace_view_url("http://sparktrace:9464/", TaskIdentity("etl", "load.x", run_id, 2))
                self.assertEqual(
                    url,
                    "http://sparktrace:9464/tasks/etl/load.x/" + encode_uri_component(run_id) + "/2",
                )

    def test_map_index_only_when_mapped(self):
        self.assertTrue(trace_view_url("http://s", TaskIdentity("d", "t", "r", 1, 4)).endswith("/tasks/d/t/r/1?map_index=4"))
        self.assertNotIn("map_index", trace_view_url("http://s", TaskIdentity("d", "t", "r", 1, -1)))

    def test_link_from_airflow_config(self):
        fake_airflow("2.10.5", {("sparktrace", "ui_url"): "https://trace.example.com/"})
        key = FakeTaskInstanceKey("etl", "load", "manual__2025-01-01T00:00:00+00:00", 3, 5)
        self.assertEqual(
            SparktraceLink().get_link(None, ti_key=key),
            "https://trace.example.com/tasks/etl/load/manual__2025-01-01T00%3A00%3A00%2B00%3A00/3?map_index=5",
        )

    def test_link_from_environment_and_empty_without_base(self):
        key = FakeTaskInstanceKey("etl", "load", "r", 1)
        with mock.patch.dict(os.environ, {"SPARKTRACE_UI_URL": "http://localhost:9464"}):
            self.assertEqual(SparktraceLink().get_link(None, ti_key=key), "http://localhost:9464/tasks/etl/load/r/1")
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(SparktraceLink().get_link(None, ti_key=key), "")

    def test_link_never_raises(self):
        with mock.patch.dict(os.environ, {"SPARKTRACE_UI_URL": "http://x"}):
            with self.assertLogs("sparktrace_airflow", "WARNING"):
                self.assertEqual(SparktraceLink().get_link(None, ti_key=object()), "")

    def test_name(self):
        self.assertEqual(SparktraceLink.name, "Spark trace")
        self.assertEqual(plugin.encode_uri_component("a b"), "a%20b")


if __name__ == "__main__":
    unittest.main()
