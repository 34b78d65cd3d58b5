"""Airflow's own task span, by Airflow version (``task_span_traceparent``), and the span derived from the
identity when Airflow has none (``derived_traceparent``)."""

from sparktrace_airflow.sparktrace_plugin import (
    attempt_key,
    attempt_traceparent,
    derived_traceparent,
    airflow_210_task_span_id,
    airflow_210_trace_id,
    airflow_210_traceparent,
    task_span_traceparent,
)

__all__ = [
    "attempt_key",
    "attempt_traceparent",
    "derived_traceparent",
    "airflow_210_task_span_id",
    "airflow_210_trace_id",
    "airflow_210_traceparent",
    "task_span_traceparent",
]
