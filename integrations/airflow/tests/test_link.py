"""The "Spark trace" extra link, called as Airflow calls a global operator extra link:
``get_link(operator, ti_key=ti.key)``, with an object shaped like Airflow's TaskInstanceKey."""

import os
import unittest
import urllib.parse
from unittest import mock

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceLink, TaskIdentity, trace_view_url
from tests._support import FakeTaskInstanceKey, fake_airflow, remove_fake_airflow

UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def encode_value(text):
    """RFC 3986 percent-encoding of all but the unreserved characters, written again here: UTF-8
    bytes, %XX upper case (what the trace view's C++ and JavaScript write)."""
    out = []
    for char in text:
        if char in UNRESERVED:
            out.append(char)
        else:
            out.extend("%%%02X" % byte for byte in char.encode("utf-8"))
    return "".join(out)


class Link(unittest.TestCase):
    def tearDown(self):
        remove_fake_airflow()

    def test_ids_go_in_the_query_encoded_as_the_trace_view_does(self):
        run_ids = ["scheduled__2025-11-25T06:00:00+00:00", "a/b?c#d e%f&g=h", "caf\u00e9 ()!*'~", ""]
        for run_id in run_ids:
            with self.subTest(run_id=run_id):
                url = trace_view_url("http://sparktrace:9464/", TaskIdentity("etl", "load.x", run_id, 2))
                self.assertEqual(
                    url,
                    "http://sparktrace:9464/attempt?dag=etl&task=load.x&run=" + encode_value(run_id) + "&try=2",
                )

    def test_dot_ids_survive_url_resolution(self):
        # "." and ".." are valid Airflow task ids; in a path a browser would resolve them away.
        url = trace_view_url("http://s/", TaskIdentity("..", ".", "r/../x", 1))
        self.assertEqual(url, "http://s/attempt?dag=..&task=.&run=r%2F..%2Fx&try=1")
        self.assertEqual(urllib.parse.urljoin("http://s/", url), url)
        parsed = urllib.parse.urlsplit(url)
        self.assertEqual(parsed.path, "/attempt")
        self.assertEqual(urllib.parse.parse_qs(parsed.query, keep_blank_values=True),
                         {"dag": [".."], "task": ["."], "run": ["r/../x"], "try": ["1"]})

    def test_map_index_only_when_mapped(self):
        self.assertTrue(trace_view_url("http://s", TaskIdentity("d", "t", "r", 1, 4)).endswith("/attempt?dag=d&task=t&run=r&try=1&map=4"))
        self.assertNotIn("map", trace_view_url("http://s", TaskIdentity("d", "t", "r", 1, -1)))

    def test_link_from_airflow_config(self):
        fake_airflow("2.10.5", {("sparktrace", "ui_url"): "https://trace.example.com/"})
        key = FakeTaskInstanceKey("etl", "load", "manual__2025-01-01T00:00:00+00:00", 3, 5)
        self.assertEqual(
            SparktraceLink().get_link(None, ti_key=key),
            "https://trace.example.com/attempt?dag=etl&task=load&run=manual__2025-01-01T00%3A00%3A00%2B00%3A00&try=3&map=5",
        )

    def test_link_from_environment_and_empty_without_base(self):
        key = FakeTaskInstanceKey("etl", "load", "r", 1)
        with mock.patch.dict(os.environ, {"SPARKTRACE_UI_URL": "http://localhost:9464"}):
            self.assertEqual(SparktraceLink().get_link(None, ti_key=key),
                             "http://localhost:9464/attempt?dag=etl&task=load&run=r&try=1")
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(SparktraceLink().get_link(None, ti_key=key), "")

    def test_link_never_raises(self):
        with mock.patch.dict(os.environ, {"SPARKTRACE_UI_URL": "http://x"}):
            with self.assertLogs("sparktrace_airflow", "WARNING"):
                self.assertEqual(SparktraceLink().get_link(None, ti_key=object()), "")

    def test_name(self):
        self.assertEqual(SparktraceLink.name, "Spark trace")
        self.assertEqual(plugin.encode_query_value("a b+/"), "a%20b%2B%2F")


if __name__ == "__main__":
    unittest.main()
