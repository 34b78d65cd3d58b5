"""sparktrace's Airflow integration: Spark Connect calls of a task land in the task's trace.

The whole plugin is the single file ``sparktrace_plugin.py`` (it can also be dropped alone into
Airflow's plugins folder); this package re-exports what users and tests call. In a process an
Airflow task started, ``trace_from_environment()`` (or ``import sparktrace_airflow.environment``)
continues the task's trace from the environment.
"""

from sparktrace_airflow.sparktrace_plugin import (
    PLUGIN_NAME,
    SparktraceLink,
    SparktraceListener,
    SparktracePlugin,
    TaskIdentity,
    connect_metadata,
    derived_traceparent,
    flush_reports,
    install_metadata_wrapper,
    sparktrace_remote,
    trace_from_environment,
    trace_view_url,
)

__all__ = [
    "PLUGIN_NAME",
    "SparktraceLink",
    "SparktraceListener",
    "SparktracePlugin",
    "TaskIdentity",
    "connect_metadata",
    "derived_traceparent",
    "flush_reports",
    "install_metadata_wrapper",
    "sparktrace_remote",
    "trace_from_environment",
    "trace_view_url",
]
