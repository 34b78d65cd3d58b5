"""sc:// URL parameters and headers, round-tripped through a parser written here from PySpark's
ChannelBuilder rules (tests/_support.py: split on ';', then '=', urllib.parse.unquote once)."""

import string
import unittest
import urllib.parse

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.headers import (
    TaskIdentity,
    add_url_params,
    connect_metadata,
    encode_url_param,
    identity_url_params,
    merge_metadata,
)
from tests._support import sc_parse

TRICKY = [
    "manual__2024-01-01T00:00:00+00:00",
    "a;b=c",
    "x=y=z;;",
    "100% done",
    "%41%zz%",
    "slash/and?query#frag",
    "sp ace\ttab".replace("\t", " "),
    "+plus+",
    "~._-",
    string.punctuation,
]
TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class UrlRoundTrip(unittest.TestCase):
    def test_every_tricky_run_id_survives_pyspark_parsing(self):
        for run_id in TRICKY:
            with self.subTest(run_id=run_id):
                identity = TaskIdentity("etl", "load", run_id, 2, 7)
                url = add_url_params("sc://proxy:15002/;user_id=etl", identity_url_params(identity, TP))
                builder, params = sc_parse(url)
                self.assertEqual(builder.host, "proxy")
                self.assertEqual(builder.port, 15002)
                self.assertEqual(
                    builder.metadata(),
                    connect_metadata(identity, TP),
                )
                self.assertEqual(params["x-airflow-run-id"], run_id)
                self.assertEqual(params["user_id"], "etl")

    def test_values_decoded_twice_need_two_encodings(self):
        value = "a;b=c%2F"
        once = encode_url_param(value)
        twice = encode_url_param(value, decodes=2)
        self.assertEqual(urllib.parse.unquote(once), value)
        self.assertEqual(urllib.parse.unquote(urllib.parse.unquote(twice)), value)
        self.assertNotIn(";", twice)
        self.assertNotIn("=", twice)
        url = add_url_params("sc://h:1/", "x-airflow-run-id=" + twice)
        self.assertEqual(urllib.parse.unquote(sc_parse(url)[1]["x-airflow-run-id"]), value)

    def test_add_url_params_shapes(self):
        cases = {
            "sc://h": "sc://h/;k=v",
            "sc://h:15002": "sc://h:15002/;k=v",
            "sc://h:15002/": "sc://h:15002/;k=v",
            "sc://h:15002/;": "sc://h:15002/;k=v",
            "sc://h:15002/;token=t;use_ssl=true": "sc://h:15002/;token=t;use_ssl=true;k=v",
            "sc://h:15002/;token=t#f": "sc://h:15002/;token=t;k=v#f",
        }
        for url, expected in cases.items():
            with self.subTest(url=url):
                self.assertEqual(add_url_params(url, "k=v"), expected)
                self.assertEqual(sc_parse(expected)[1]["k"], "v")
        with self.assertRaises(ValueError):
            add_url_params("sc://h:1/path", "k=v")

    def test_existing_identity_parameters_are_replaced_not_doubled(self):
        url = "sc://h:1/;user_id=u;x-airflow-dag-id=old;traceparent=" + TP + ";token=t"
        self.assertEqual(plugin._strip_url_identity(url), "sc://h:1/;user_id=u;token=t")


class Headers(unittest.TestCase):
    def test_order_and_values(self):
        identity = TaskIdentity("etl", "load", "r 1", 0, -1)
        self.assertEqual(
            connect_metadata(identity, TP, "a=b"),
            [
                ("x-airflow-dag-id", "etl"),
                ("x-airflow-task-id", "load"),
                ("x-airflow-run-id", "r 1"),
                ("x-airflow-try-number", "0"),
                ("x-airflow-map-index", "-1"),
                ("traceparent", TP),
                ("tracestate", "a=b"),
            ],
        )

    def test_no_run_id_header_when_empty_and_nothing_without_identity(self):
        self.assertNotIn("x-airflow-run-id", dict(connect_metadata(TaskIdentity("d", "t"))))
        self.assertEqual(connect_metadata(None, None), [])
        self.assertEqual(connect_metadata(None, TP), [("traceparent", TP)])

    def test_invalid_identity_or_traceparent_is_not_sent(self):
        bad = [
            TaskIdentity("", "t"),
            TaskIdentity("d a g", "t"),
            TaskIdentity("d", "t", "run\u00e9"),
            TaskIdentity("d", "t", "x" * 251),
            TaskIdentity("d", "t", "r", -1),
            TaskIdentity("d", "t", "r", 2**31),
            TaskIdentity("d", "t", "r", 1, -2),
            TaskIdentity("d", "t", "r", True),
        ]
        for identity in bad:
            with self.subTest(identity=identity):
                self.assertTrue(identity.problems())
                self.assertEqual(connect_metadata(identity, None), [])
        for tp in ("", "garbage", "00-" + "0" * 32 + "-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"):
            self.assertEqual(connect_metadata(None, tp), [], tp)

    def test_values_are_printable_ascii_as_grpc_requires(self):
        for run_id in TRICKY:
            for key, value in connect_metadata(TaskIdentity("d", "t", run_id.strip()), TP):
                self.assertEqual(key, key.lower())
                self.assertTrue(all(" " <= c <= "~" for c in value), value)

    def test_merge_keeps_what_the_call_already_has(self):
        base = [("x-airflow-dag-id", "mine"), ("traceparent", TP), ("other", "1")]
        extra = connect_metadata(TaskIdentity("etl", "load", "r"), "00-11111111111111111111111111111111-2222222222222222-01", "s=t")
        merged = merge_metadata(base, extra)
        keys = [k for k, _ in merged]
        self.assertEqual(keys.count("x-airflow-dag-id"), 1)
        self.assertEqual(keys.count("traceparent"), 1)
        self.assertNotIn("tracestate", keys)
        self.assertEqual(dict(merged)["x-airflow-dag-id"], "mine")
        self.assertEqual(dict(merged)["x-airflow-task-id"], "load")


if __name__ == "__main__":
    unittest.main()
