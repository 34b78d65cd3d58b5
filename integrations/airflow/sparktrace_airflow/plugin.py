"""The Airflow plugin object (entry point ``airflow.plugins``: ``sparktrace``)."""

from sparktrace_airflow.sparktrace_plugin import SparktracePlugin

__all__ = ["SparktracePlugin"]
