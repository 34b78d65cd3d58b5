"""``import sparktrace_airflow.environment``: one line that makes a plain script's Spark Connect calls
land in its Airflow task's trace.

For processes an Airflow task starts (``spark-submit``, a ``BashOperator`` script,
``@task.virtualenv``): the plugin's listener exported ``TRACEPARENT`` / ``TRACESTATE`` and
``SPARKTRACE_AIRFLOW_MAP_INDEX`` into the task's environment, Airflow exported ``AIRFLOW_CTX_*``;
importing this module reads them (``trace_from_environment()``) and makes every Spark Connect call of
this process carry the task's identity and parent span. ``active`` says whether it did (False without
PySpark, or with nothing in the environment). Import it before or after PySpark, either works.
"""

from sparktrace_airflow.sparktrace_plugin import trace_from_environment

active = trace_from_environment()

__all__ = ["active", "trace_from_environment"]
