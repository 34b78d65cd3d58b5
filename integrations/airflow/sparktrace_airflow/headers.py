"""The metadata the plugin adds to every Spark Connect call, and the sc:// URL parameters.

Pure functions, standard library only: ``connect_metadata(identity, traceparent)`` is exactly what
the wrapper around PySpark's ``ChannelBuilder.metadata()`` appends (keys the call already has are
not added twice, see ``merge_metadata``).
"""

from sparktrace_airflow.sparktrace_plugin import (
    DAG_ID_HEADER,
    IDENTITY_HEADERS,
    MAP_INDEX_HEADER,
    RUN_ID_HEADER,
    TASK_ID_HEADER,
    TRACEPARENT_HEADER,
    TRACESTATE_HEADER,
    TRY_NUMBER_HEADER,
    TaskIdentity,
    add_url_params,
    connect_metadata,
    encode_url_param,
    format_traceparent,
    identity_url_params,
    merge_metadata,
    parse_traceparent,
)

__all__ = [
    "DAG_ID_HEADER",
    "IDENTITY_HEADERS",
    "MAP_INDEX_HEADER",
    "RUN_ID_HEADER",
    "TASK_ID_HEADER",
    "TRACEPARENT_HEADER",
    "TRACESTATE_HEADER",
    "TRY_NUMBER_HEADER",
    "TaskIdentity",
    "add_url_params",
    "connect_metadata",
    "encode_url_param",
    "format_traceparent",
    "identity_url_params",
    "merge_metadata",
    "parse_traceparent",
]
