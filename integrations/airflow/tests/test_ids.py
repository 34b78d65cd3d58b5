"""Airflow's own task span ids, against the formulas of airflow/traces/utils.py (2.10/2.11),
recomputed here with hashlib directly; and the 3.x context carrier. The task instances are
objects shaped like Airflow's (tests/_support.py), not Airflow's."""

import hashlib
import unittest
from datetime import datetime, timezone

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.ids import (
    airflow_210_task_span_id,
    airflow_210_trace_id,
    airflow_210_traceparent,
    task_span_traceparent,
)
from tests._support import FakeDagRun, FakeTaskInstance, fake_airflow, fake_opentelemetry, remove_fake_airflow, remove_fake_opentelemetry

START = datetime(2025, 11, 25, 6, 0, 1, 234567, tzinfo=timezone.utc)
RUN_ID = "scheduled__2025-11-25T06:00:00+00:00"


class Airflow210Ids(unittest.TestCase):
    def test_trace_id_is_md5_of_dag_run_and_start_timestamp(self):
        # gen_trace_id: md5(f"{dag_id}_{run_id}_{start_date.timestamp()}").hexdigest()
        seed = "etl_" + RUN_ID + "_" + repr(1764050401.234567)
        self.assertEqual(airflow_210_trace_id("etl", RUN_ID, START), hashlib.md5(seed.encode()).hexdigest())
        self.assertEqual(len(airflow_210_trace_id("etl", RUN_ID, START)), 32)

    def test_span_id_uses_try_number_minus_one_and_last_16_hex_digits(self):
        # gen_span_id: md5(f"{dag_id}_{run_id}_{task_id}_{ti.try_number - 1}").hexdigest()[16:]
        digest = hashlib.md5(("etl_" + RUN_ID + "_load_1").encode()).hexdigest()
        self.assertEqual(airflow_210_task_span_id("etl", RUN_ID, "load", 2), digest[16:])
        self.assertEqual(len(digest[16:]), 16)

    def test_whole_second_start_date_formats_like_python_float(self):
        start = datetime(2024, 1, 1, tzinfo=timezone.utc)  # timestamp() == 1704067200.0
        seed = "d_r_1704067200.0"
        self.assertEqual(airflow_210_trace_id("d", "r", start), hashlib.md5(seed.encode()).hexdigest())

    def test_traceparent_is_sampled_w3c(self):
        tp = airflow_210_traceparent("etl", RUN_ID, "load", 1, START)
        trace = hashlib.md5(("etl_" + RUN_ID + "_" + repr(START.timestamp())).encode()).hexdigest()
        span = hashlib.md5(("etl_" + RUN_ID + "_load_0").encode()).hexdigest()[16:]
        self.assertEqual(tp, "00-" + trace + "-" + span + "-01")


class TaskSpanByVersion(unittest.TestCase):
    def tearDown(self):
        remove_fake_airflow()
        remove_fake_opentelemetry()

    def ti(self, **kw):
        return FakeTaskInstance("etl", "load", RUN_ID, 3, dag_run=FakeDagRun("etl", RUN_ID, START), **kw)

    def test_airflow_2_10_with_otel_on_derives_ids(self):
        fake_airflow("2.10.5", {("traces", "otel_on"): "True"})
        tp, ts = task_span_traceparent(self.ti())
        span = hashlib.md5(("etl_" + RUN_ID + "_load_2").encode()).hexdigest()[16:]
        self.assertTrue(tp.endswith("-" + span + "-01"), tp)
        self.assertIsNone(ts)

    def test_airflow_2_11_same_formula(self):
        fake_airflow("2.11.0", {("traces", "otel_on"): "true"})
        self.assertEqual(task_span_traceparent(self.ti())[0], airflow_210_traceparent("etl", RUN_ID, "load", 3, START))

    def test_airflow_2_10_with_otel_off_sends_no_traceparent(self):
        fake_airflow("2.10.5", {("traces", "otel_on"): "False"})
        self.assertEqual(task_span_traceparent(self.ti()), (None, None))

    def test_airflow_2_9_has_no_task_span(self):
        fake_airflow("2.9.3", {("traces", "otel_on"): "True"})
        self.assertEqual(task_span_traceparent(self.ti()), (None, None))

    def test_airflow_3_uses_context_carrier(self):
        fake_airflow("3.1.0")
        carrier = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "k=v"}
        self.assertEqual(task_span_traceparent(self.ti(context_carrier=carrier)), (carrier["traceparent"], "k=v"))

    def test_airflow_3_0_without_carrier_has_none(self):
        fake_airflow("3.0.2")
        self.assertEqual(task_span_traceparent(self.ti(context_carrier={})), (None, None))
        self.assertEqual(task_span_traceparent(self.ti(context_carrier={"traceparent": "garbage"})), (None, None))

    def test_airflow_3_2_uses_current_span(self):
        fake_airflow("3.2.0")
        fake_opentelemetry(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7)
        self.assertEqual(
            task_span_traceparent(self.ti()),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),
        )

    def test_version_parsing(self):
        fake_airflow("3.2.0.dev0+abc")
        self.assertEqual(plugin._airflow_version(), (3, 2))
        remove_fake_airflow()
        self.assertEqual(plugin._airflow_version(), (0, 0))


if __name__ == "__main__":
    unittest.main()
