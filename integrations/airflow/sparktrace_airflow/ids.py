"""Airflow's own task span, by Airflow version (see ``task_span_traceparent``)."""

from sparktrace_airflow.sparktrace_plugin import (
    airflow_210_task_span_id,
    airflow_210_trace_id,
    airflow_210_traceparent,
    task_span_traceparent,
)

__all__ = [
    "airflow_210_task_span_id",
    "airflow_210_trace_id",
    "airflow_210_traceparent",
    "task_span_traceparent",
]
