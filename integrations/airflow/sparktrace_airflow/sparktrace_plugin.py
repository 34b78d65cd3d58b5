"""sparktrace's Airflow plugin: every Spark Connect call of a task carries the task's identity.

This one file is the whole plugin. It works two ways:

* installed as a package (``pip install ./integrations/airflow``), found by Airflow through the
  ``airflow.plugins`` entry point;
* copied alone into Airflow's plugins folder (e.g. ``$AIRFLOW_HOME/plugins/sparktrace_plugin.py``).

Python standard library only. Every Airflow import is guarded, so the module imports (and its pure
helpers work) where Airflow and PySpark are absent.

What it does, for every task instance:

* the listener ``on_task_instance_running`` (run in the task process before ``execute()``) records the
  task attempt's identity and its parent span: Airflow's own task span when Airflow has one, else a
  span id derived from the identity (``derived_traceparent``). From then on every Spark Connect RPC
  of the process -- whatever its kind, whichever session sends it, created before or after, on any
  thread -- carries ``x-airflow-dag-id``, ``x-airflow-task-id``, ``x-airflow-run-id``,
  ``x-airflow-try-number``, ``x-airflow-map-index`` and that ``traceparent``. How, and why three
  places are needed, is in "PySpark Connect" below;
* the same listener exports ``TRACEPARENT`` / ``TRACESTATE`` (OpenTelemetry's environment carrier)
  and ``SPARKTRACE_AIRFLOW_MAP_INDEX`` into the task process's environment, so that child processes
  (``spark-submit``, a ``BashOperator`` script, ``@task.virtualenv``) can continue the same span;
  in such a process ``trace_from_environment()`` (or ``import sparktrace_airflow.environment``)
  activates the plugin from that environment;
* the task attempt itself is reported to sparktrace (``POST /api/v1/airflow/task-attempts``): once
  as ``running``, and its final state from ``on_task_instance_success`` / ``_failed`` / ``_skipped``
  (or, at process exit, whatever state the task instance ended in), off the task's thread, within
  one second, silently when sparktrace cannot be reached;
* the macro ``sparktrace_remote(conn_id, ti)`` returns the Spark Connect URL of an Airflow
  connection with the same identity as URL parameters, for ``config_kwargs={"spark.remote": ...}``;
* the global operator extra link "Spark trace" points at sparktrace's trace view of the attempt.

Nothing here ever fails a task: errors are logged and swallowed.
"""

from __future__ import annotations

import atexit
import hashlib
import http.client
import importlib.abc
import importlib.util
import json
import logging
import os
import re
import socket
import sys
import threading
import time
import types
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

__all__ = [
    "PLUGIN_NAME",
    "TaskIdentity",
    "CallContext",
    "connect_metadata",
    "merge_metadata",
    "format_traceparent",
    "parse_traceparent",
    "attempt_key",
    "derived_traceparent",
    "airflow_210_trace_id",
    "airflow_210_task_span_id",
    "airflow_210_traceparent",
    "encode_url_param",
    "add_url_params",
    "identity_url_params",
    "trace_view_url",
    "encode_query_value",
    "identity_from_task_instance",
    "task_span_traceparent",
    "attempt_traceparent",
    "sparktrace_remote",
    "install_metadata_wrapper",
    "uninstall_metadata_wrapper",
    "current_metadata",
    "refresh_metadata",
    "trace_from_environment",
    "attempt_report",
    "report_settings",
    "post_attempt_report",
    "flush_reports",
    "SparktraceListener",
    "SparktraceLink",
    "SparktracePlugin",
]

PLUGIN_NAME = "sparktrace"
log = logging.getLogger("sparktrace_airflow")

# The request headers sparktrace reads (docs/tracing.md, tracing/airflow_identity.h).
DAG_ID_HEADER = "x-airflow-dag-id"
TASK_ID_HEADER = "x-airflow-task-id"
RUN_ID_HEADER = "x-airflow-run-id"
TRY_NUMBER_HEADER = "x-airflow-try-number"
MAP_INDEX_HEADER = "x-airflow-map-index"
TRACEPARENT_HEADER = "traceparent"
TRACESTATE_HEADER = "tracestate"
IDENTITY_HEADERS = (DAG_ID_HEADER, TASK_ID_HEADER, RUN_ID_HEADER, TRY_NUMBER_HEADER, MAP_INDEX_HEADER)

# The proxy's limits (tracing/airflow_identity.cc): ids up to 250 bytes, integers in 32 bits.
MAX_ID_LENGTH = 250
MAX_AIRFLOW_INTEGER = 2**31 - 1

# OpenTelemetry's environment carrier (the "env" propagator of the OTel specification), and the
# map index, which Airflow does not export (its AIRFLOW_CTX_* variables have dag, task, run, try).
TRACEPARENT_ENV = "TRACEPARENT"
TRACESTATE_ENV = "TRACESTATE"
MAP_INDEX_ENV = "SPARKTRACE_AIRFLOW_MAP_INDEX"


# --------------------------------------------------------------------------------------------------
# The task attempt's identity and the headers that carry it (pure functions).
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskIdentity:
    """One Airflow task attempt, as sparktrace keys it."""

    dag_id: str
    task_id: str
    run_id: str = ""
    try_number: int = 1
    map_index: int = -1

    def problems(self) -> List[str]:
        """Why sparktrace would reject this identity (empty when it is valid).

        The proxy ignores the whole identity when one field is invalid, and gRPC refuses metadata
        values that are not printable ASCII, so an invalid identity is never sent.
        """
        found = []
        for name in ("dag_id", "task_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH:
                found.append(f"{name} must be 1 to {MAX_ID_LENGTH} characters")
            elif any(c < "\x21" or c > "\x7e" for c in value):
                found.append(f"{name} must be printable ASCII without spaces")
        if not isinstance(self.run_id, str) or len(self.run_id) > MAX_ID_LENGTH:
            found.append(f"run_id must be at most {MAX_ID_LENGTH} characters")
        elif any(c < "\x20" or c > "\x7e" for c in self.run_id):
            found.append("run_id must be printable ASCII")
        elif self.run_id != self.run_id.strip(" \t"):
            found.append("run_id must not start or end with a blank (the proxy trims them)")
        if not _is_int(self.try_number) or not 0 <= self.try_number <= MAX_AIRFLOW_INTEGER:
            found.append("try_number must be in [0, 2^31-1]")
        if not _is_int(self.map_index) or not (
            self.map_index == -1 or 0 <= self.map_index <= MAX_AIRFLOW_INTEGER
        ):
            found.append("map_index must be -1 or in [0, 2^31-1]")
        return found

    def headers(self) -> List[Tuple[str, str]]:
        """The x-airflow-* metadata pairs, in a fixed order. Raises ValueError when invalid."""
        problems = self.problems()
        if problems:
            raise ValueError("invalid Airflow identity: " + "; ".join(problems))
        pairs = [(DAG_ID_HEADER, self.dag_id), (TASK_ID_HEADER, self.task_id)]
        if self.run_id:
            pairs.append((RUN_ID_HEADER, self.run_id))
        pairs.append((TRY_NUMBER_HEADER, str(self.try_number)))
        pairs.append((MAP_INDEX_HEADER, str(self.map_index)))
        return pairs


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_TRACEPARENT_RE = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


def parse_traceparent(value: Any) -> Optional[Tuple[str, str, str, str]]:
    """(version, trace id, parent id, flags) of a valid W3C traceparent, else None."""
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT_RE.match(value.strip())
    if not match:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest):
        return None
    if trace_id == "0" * 32 or span_id == "0" * 16:
        return None
    return version, trace_id, span_id, flags


def format_traceparent(trace_id: Any, span_id: Any, sampled: bool = True) -> str:
    """``00-<trace id>-<span id>-<flags>`` from ints or hex strings. Raises ValueError if invalid."""
    trace_hex = f"{trace_id:032x}" if _is_int(trace_id) else str(trace_id).lower()
    span_hex = f"{span_id:016x}" if _is_int(span_id) else str(span_id).lower()
    value = f"00-{trace_hex}-{span_hex}-{'01' if sampled else '00'}"
    if parse_traceparent(value) is None:
        raise ValueError(f"not a valid trace context: trace id {trace_hex!r}, span id {span_hex!r}")
    return value


def connect_metadata(
    identity: Optional[TaskIdentity],
    traceparent: Optional[str] = None,
    tracestate: Optional[str] = None,
) -> List[Tuple[str, str]]:
    """Exactly the gRPC metadata the plugin adds to each Spark Connect call.

    ``identity`` gives the five x-airflow-* headers (none when it is None or invalid);
    ``traceparent`` (and ``tracestate``, only with a traceparent) is added when it is a valid W3C
    traceparent. Keys are lower case, values printable ASCII, as gRPC requires.
    """
    pairs: List[Tuple[str, str]] = []
    if identity is not None and not identity.problems():
        pairs.extend(identity.headers())
    if traceparent is not None and parse_traceparent(traceparent) is not None:
        pairs.append((TRACEPARENT_HEADER, traceparent.strip()))
        if tracestate and all("\x20" <= c <= "\x7e" for c in tracestate):
            pairs.append((TRACESTATE_HEADER, tracestate))
    return pairs


def merge_metadata(
    base: Iterable[Tuple[str, str]], extra: Iterable[Tuple[str, str]]
) -> List[Tuple[str, str]]:
    """``base`` followed by the pairs of ``extra`` whose key ``base`` does not already have.

    What the user set explicitly (e.g. x-airflow-* in the ``sc://`` URL) wins; the proxy rejects
    an identity header given twice, so the plugin never duplicates one.
    """
    merged = list(base)
    present = {str(key).lower() for key, _ in merged}
    if TRACEPARENT_HEADER in present:
        present.add(TRACESTATE_HEADER)  # a tracestate belongs to its own traceparent
    for key, value in extra:
        if key not in present:
            merged.append((key, value))
    return merged


def attempt_key(identity: TaskIdentity) -> bytes:
    """The canonical key of a task attempt, as sparktrace hashes it (tracing/airflow_identity.h).

    ``"airflow-task-attempt/v1\\n"``, then ``"<len>:<id>\\n"`` for the dag, task and run id (len is
    the byte count of the UTF-8 encoding), then ``"<try>\\n<map index>\\n"``; e.g.
    ``"airflow-task-attempt/v1\\n3:etl\\n4:load\\n0:\\n1\\n-1\\n"``.
    """

    def prefixed(text: str) -> bytes:
        data = text.encode("utf-8")
        return str(len(data)).encode("ascii") + b":" + data + b"\n"

    return (
        b"airflow-task-attempt/v1\n"
        + prefixed(identity.dag_id)
        + prefixed(identity.task_id)
        + prefixed(identity.run_id)
        + f"{identity.try_number}\n{identity.map_index}\n".encode("ascii")
    )


def derived_traceparent(identity: TaskIdentity) -> str:
    """The parent span of an attempt that Airflow gives no span of its own (2.x without OTel).

    SHA-256 of ``attempt_key``: bytes 0..15 are the trace id (the proxy derives the same trace id
    from the identity alone, ``DeriveTraceId``), bytes 16..23 the span id; either, if all zero, gets
    a last byte of 1; flags ``01``. Deterministic, so the task process, its child processes and the
    attempt report all name one parent span without talking to each other.
    """
    digest = hashlib.sha256(attempt_key(identity)).digest()
    trace_id, span_id = bytearray(digest[:16]), bytearray(digest[16:24])
    for part in (trace_id, span_id):
        if not any(part):
            part[-1] = 1
    return format_traceparent(trace_id.hex(), span_id.hex(), sampled=True)


# --------------------------------------------------------------------------------------------------
# Airflow's own task span.
# --------------------------------------------------------------------------------------------------


def airflow_210_trace_id(dag_id: str, run_id: str, dag_run_start_date: Any) -> str:
    """The trace id Airflow 2.10/2.11 gives a dag run: md5 of ``<dag>_<run>_<start timestamp>``.

    (airflow/traces/utils.py ``gen_trace_id``: ``start_date.timestamp()`` formatted by Python,
    all 32 hex digits.)
    """
    seed = f"{dag_id}_{run_id}_{dag_run_start_date.timestamp()}"
    return hashlib.md5(seed.encode("utf-8")).hexdigest()


def airflow_210_task_span_id(dag_id: str, run_id: str, task_id: str, try_number: int) -> str:
    """The span id Airflow 2.10/2.11 gives a task instance's span (``gen_span_id``).

    The last 16 hex digits of md5 of ``<dag>_<run>_<task>_<try_number - 1>``: Airflow subtracts
    one from ``ti.try_number``, which since 2.10 already is the current attempt's number.
    The map index is not part of it: mapped instances of one task share the span id.
    """
    seed = f"{dag_id}_{run_id}_{task_id}_{try_number - 1}"
    return hashlib.md5(seed.encode("utf-8")).hexdigest()[16:]


def airflow_210_traceparent(
    dag_id: str, run_id: str, task_id: str, try_number: int, dag_run_start_date: Any
) -> str:
    """traceparent of the task span Airflow 2.10/2.11 exports (sampled, as Airflow's flags say)."""
    return format_traceparent(
        airflow_210_trace_id(dag_id, run_id, dag_run_start_date),
        airflow_210_task_span_id(dag_id, run_id, task_id, try_number),
        sampled=True,
    )


def _airflow_version() -> Tuple[int, int]:
    module = sys.modules.get("airflow")
    version = getattr(module, "__version__", "") if module is not None else ""
    match = re.match(r"^(\d+)\.(\d+)", str(version))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _airflow_conf_get(section: str, key: str) -> Optional[str]:
    try:
        from airflow.configuration import conf  # type: ignore[import-not-found]
    except Exception:  # no Airflow
        return None
    try:
        value = conf.get(section, key, fallback=None)
    except Exception:
        return None
    return None if value is None else str(value)


def _otel_on() -> bool:
    return (_airflow_conf_get("traces", "otel_on") or "").strip().lower() in ("true", "1", "t", "yes")


def _carrier_traceparent(ti: Any) -> Tuple[Optional[str], Optional[str]]:
    carrier = getattr(ti, "context_carrier", None)
    if not isinstance(carrier, Mapping):
        return None, None
    traceparent = carrier.get(TRACEPARENT_HEADER)
    if parse_traceparent(traceparent) is None:
        return None, None
    tracestate = carrier.get(TRACESTATE_HEADER)
    return traceparent.strip(), tracestate if isinstance(tracestate, str) else None


def _current_otel_traceparent() -> Optional[str]:
    """The current OpenTelemetry span as a traceparent; None when OTel is not loaded or no span."""
    otel = sys.modules.get("opentelemetry.trace")  # never imported here: only if the process uses it
    if otel is None:
        return None
    try:
        context = otel.get_current_span().get_span_context()
        if not context.is_valid:
            return None
        return format_traceparent(context.trace_id, context.span_id, bool(int(context.trace_flags) & 1))
    except Exception:
        return None


def task_span_traceparent(ti: Any, airflow_version: Optional[Tuple[int, int]] = None) -> Tuple[Optional[str], Optional[str]]:
    """(traceparent, tracestate) of Airflow's own span for this task instance, or (None, None).

    * Airflow 3.x: the task instance's ``context_carrier`` (W3C carrier of the task span);
      on 3.2+ also the current OpenTelemetry span, which is the task span while the task runs.
    * Airflow 2.10/2.11 with ``[traces] otel_on``: the ids Airflow derives (see
      ``airflow_210_traceparent``), from the dag run's start date.
    * Otherwise none: without a traceparent the proxy keys the trace on the identity alone.
    """
    version = airflow_version or _airflow_version()
    traceparent, tracestate = _carrier_traceparent(ti)
    if traceparent:
        return traceparent, tracestate
    if version >= (3, 2):
        return _current_otel_traceparent(), None
    if (2, 10) <= version < (3, 0) and _otel_on():
        dag_run = getattr(ti, "dag_run", None)
        if dag_run is None and callable(getattr(ti, "get_dagrun", None)):
            dag_run = ti.get_dagrun()
        start_date = getattr(dag_run, "start_date", None)
        if start_date is None:
            return None, None
        return (
            airflow_210_traceparent(
                getattr(dag_run, "dag_id", None) or ti.dag_id,
                getattr(dag_run, "run_id", None) or ti.run_id,
                ti.task_id,
                int(ti.try_number),
                start_date,
            ),
            None,
        )
    return None, None


def attempt_traceparent(
    ti: Any, identity: Optional[TaskIdentity], airflow_version: Optional[Tuple[int, int]] = None
) -> Tuple[Optional[str], Optional[str]]:
    """(traceparent, tracestate) of the attempt's parent span: Airflow's task span
    (``task_span_traceparent``), else ``derived_traceparent(identity)``, else (None, None)."""
    try:
        traceparent, tracestate = task_span_traceparent(ti, airflow_version)
    except Exception:
        log.warning("sparktrace: Airflow's task span not found; using the one derived from the identity",
                    exc_info=True)
        traceparent, tracestate = None, None
    if traceparent:
        return traceparent, tracestate
    if identity is not None and not identity.problems():
        return derived_traceparent(identity), None
    return None, None


def identity_from_task_instance(ti: Any) -> TaskIdentity:
    """The identity of a task instance or a TaskInstanceKey (dag_id, task_id, run_id, try, map)."""
    map_index = getattr(ti, "map_index", -1)
    try_number = getattr(ti, "try_number", 1)
    return TaskIdentity(
        dag_id=str(ti.dag_id),
        task_id=str(ti.task_id),
        run_id=str(getattr(ti, "run_id", "") or ""),
        try_number=1 if try_number is None else int(try_number),
        map_index=-1 if map_index is None else int(map_index),
    )


# --------------------------------------------------------------------------------------------------
# sc:// URLs (PySpark's ChannelBuilder: params after "/;", split on ";" then "=", unquoted once).
# --------------------------------------------------------------------------------------------------


def encode_url_param(value: str, decodes: int = 1) -> str:
    """Percent-encode ``value`` so that it survives ``decodes`` rounds of ``urllib.parse.unquote``.

    Everything but ``A-Z a-z 0-9 _ . - ~`` is encoded, so ``;``, ``=``, ``/``, ``%``, ``#``, ``?``
    and spaces cannot break PySpark's parameter splitting. PySpark decodes once (``decodes=1``);
    pass 2 when the URL goes through one more decoding layer first.
    """
    for _ in range(decodes):
        value = urllib.parse.quote(value, safe="")
    return value


def identity_url_params(
    identity: TaskIdentity, traceparent: Optional[str] = None, decodes: int = 1
) -> str:
    """``x-airflow-dag-id=...;...`` (and ``;traceparent=...``), each value encoded for ``decodes``."""
    return ";".join(
        f"{key}={encode_url_param(value, decodes)}" for key, value in connect_metadata(identity, traceparent)
    )


def add_url_params(url: str, params: str) -> str:
    """Append ``params`` (``k=v;k=v``, already encoded) to an ``sc://host:port/;...`` URL."""
    if not params:
        return url
    if not url.startswith("sc://"):
        raise ValueError("a Spark Connect URL starts with sc://")
    base, hash_mark, fragment = url.partition("#")
    rest = base[len("sc://"):]
    slash = rest.find("/")
    if slash == -1:
        base = base + "/;" + params
    else:
        tail = rest[slash + 1:]
        if tail in ("", ";"):
            base = base[: len("sc://") + slash + 1] + ";" + params
        elif tail.startswith(";"):
            base = base.rstrip(";") + ";" + params
        else:
            raise ValueError("a Spark Connect URL has no path: sc://host:port/;key=value")
    return base + hash_mark + fragment


def _strip_url_identity(url: str) -> str:
    """The URL without x-airflow-* and traceparent parameters (so that they are never doubled)."""
    base, hash_mark, fragment = url.partition("#")
    head, semicolon, params = base.partition(";")
    if not semicolon:
        return url
    drop = set(IDENTITY_HEADERS) | {TRACEPARENT_HEADER, TRACESTATE_HEADER}
    kept = [p for p in params.split(";") if p and p.split("=", 1)[0].lower() not in drop]
    return head + (";" + ";".join(kept) if kept else "") + hash_mark + fragment


# --------------------------------------------------------------------------------------------------
# Trace view link.
# --------------------------------------------------------------------------------------------------


def encode_query_value(value: str) -> str:
    """A query value as the trace view writes it (traceview/attempt_url.h, web/assets/url_state.js):
    UTF-8, percent-encoded but for ``A-Z a-z 0-9 - _ . ~``."""
    return urllib.parse.quote(value, safe="")


def trace_view_url(base_url: str, identity: TaskIdentity) -> str:
    """The trace view's task-attempt page:
    ``<base>/attempt?dag=<dag>&task=<task>&run=<run>&try=<try>[&map=N]``.

    The ids go in the query, not the path: ``.`` and ``..`` are valid task ids, and as path segments
    the browser would drop them before asking (docs/trace-view-api.md, "Attempt addresses")."""
    params = [("dag", identity.dag_id), ("task", identity.task_id), ("run", identity.run_id),
              ("try", identity.try_number)]
    if identity.map_index != -1:
        params.append(("map", identity.map_index))
    query = "&".join(f"{name}={encode_query_value(str(value))}" for name, value in params)
    return f"{base_url.rstrip('/')}/attempt?{query}"


def ui_base_url() -> str:
    """``[sparktrace] ui_url`` of Airflow's configuration (``AIRFLOW__SPARKTRACE__UI_URL``), else
    the environment variable ``SPARKTRACE_UI_URL``, else empty."""
    value = _airflow_conf_get("sparktrace", "ui_url")
    if not value:
        value = os.environ.get("SPARKTRACE_UI_URL", "")
    return value.strip()



# --------------------------------------------------------------------------------------------------
# PySpark Connect: where each RPC gets its metadata, and how every one of them gets the current task's.
#
# Read in apache/spark (python/pyspark/sql/connect/...), 3.4 to 4.x:
#
# * ``ChannelBuilder.metadata()`` (3.4 ``client.py``; 3.5+ ``client/core.py``, in 4.x on the base
#   ``ChannelBuilder`` that ``DefaultChannelBuilder`` extends) turns the sc:// URL parameters into
#   metadata. ``SparkConnectClient`` calls it at call time for ExecutePlan, AnalyzePlan, Config,
#   Interrupt (3.5+), ReleaseSession (4.0+): wrapping the class attribute covers those.
# * 3.5+ ``SparkConnectClient.__init__`` hands ``ArtifactManager`` a *copy*, ``self._builder.metadata()``,
#   which it keeps in ``self._metadata`` for AddArtifacts and ArtifactStatus, on a stub of its own
#   (``self._stub``). A session created before the listener, or by an earlier task, keeps that copy.
# * 3.5+ ``ExecutePlanResponseReattachableIterator`` (``reattach.py``) gets ``self._builder.metadata()``
#   once per execution and keeps it in ``self._metadata`` for ReattachExecute and ReleaseExecute;
#   ReleaseExecute runs on a thread pool, i.e. on other threads.
# * 4.0 ``_fetch_enriched_error`` calls ``self._stub.FetchErrorDetails(req)`` with no metadata at all.
#
# So the plugin works in three places, all installed on the classes (existing and new instances alike):
#
# 1. ``ChannelBuilder.metadata`` / ``DefaultChannelBuilder.metadata`` are wrapped: the URL's pairs
#    plus the current task's. The result is a list subclass that remembers which keys the plugin
#    added, so that a copy of it can later be told apart from what the user put in the URL.
# 2. ``ArtifactManager._metadata`` and ``ExecutePlanResponseReattachableIterator._metadata`` become
#    data descriptors: the instance's stored copy (in its ``__dict__``) is read, the plugin's own
#    pairs stripped, the current task's merged in.
# 3. ``_stub`` of ``SparkConnectClient``, ``ArtifactManager`` and the reattachable iterator becomes a
#    data descriptor returning a thin proxy of the gRPC stub that does the same to the ``metadata``
#    of every call (adding it where the call passes none). This is the one place every RPC goes
#    through, whatever a PySpark version copies or forgets; 1 and 2 keep what PySpark stores and
#    returns truthful too.
#
# Pairs the user set (in the sc:// URL) always win; the plugin never sends a key twice. The current
# task is one immutable ``CallContext`` swapped in a single assignment, so a call on any thread sees
# one whole task, never half of two.
# --------------------------------------------------------------------------------------------------

# Modules that define (or re-export) the classes patched. 3.4: pyspark/sql/connect/client.py;
# 3.5 and 4.x: a package whose core.py, artifact.py and reattach.py define them.
CLIENT_MODULES = (
    "pyspark.sql.connect.client.core",
    "pyspark.sql.connect.client",
    "pyspark.sql.connect.client.artifact",
    "pyspark.sql.connect.client.reattach",
)
BUILDER_CLASSES = ("ChannelBuilder", "DefaultChannelBuilder")
# (class, attribute, what it holds)
LIVE_ATTRIBUTES = (
    ("SparkConnectClient", "_stub", "stub"),
    ("ArtifactManager", "_stub", "stub"),
    ("ArtifactManager", "_metadata", "metadata"),
    ("ExecutePlanResponseReattachableIterator", "_stub", "stub"),
    ("ExecutePlanResponseReattachableIterator", "_metadata", "metadata"),
)
_WRAPPED_MARK = "__sparktrace_wrapped__"
_LIVE_MARK = "_sparktrace_live_attribute"
_PROXY_MARK = "_sparktrace_proxy"
_ADDED_ATTR = "_sparktrace_added"
_FINDER_MARK = "__sparktrace_finder__"

_STATE_MODULE = "_sparktrace_airflow_state"


@dataclass(frozen=True)
class CallContext:
    """What the plugin adds to every Spark Connect call of the process: one task attempt.

    ``traceparent`` is Airflow's own task span (None when Airflow has none); ``fallback_traceparent``
    the span derived from the identity, sent when neither that nor a live OpenTelemetry span applies.
    ``live_otel``: the current OpenTelemetry span may be the parent (Airflow 3.2+ makes the task span
    current while the task runs).
    """

    identity: Optional[TaskIdentity] = None
    traceparent: Optional[str] = None
    tracestate: Optional[str] = None
    fallback_traceparent: Optional[str] = None
    live_otel: bool = False


_EMPTY_CONTEXT = CallContext()


def _process_state() -> dict:
    """The plugin's state in this process: the current ``CallContext``, the attempt being reported,
    the reporter.

    Kept in a tiny module of its own in ``sys.modules`` so that every copy of this file loaded in
    the process (the package and a file in the plugins folder) shares one state, one wrapper and one
    reporter.
    """
    module = sys.modules.get(_STATE_MODULE)
    if module is None:
        fresh = types.ModuleType(_STATE_MODULE)
        fresh.state = {"context": _EMPTY_CONTEXT}  # type: ignore[attr-defined]
        module = sys.modules.setdefault(_STATE_MODULE, fresh)
    state = module.state  # type: ignore[attr-defined]
    state.setdefault("context", _EMPTY_CONTEXT)
    return state  # type: ignore[no-any-return]


_process_state()
_lock = threading.Lock()


def _context() -> CallContext:
    context = _process_state().get("context")
    return context if isinstance(context, CallContext) else _EMPTY_CONTEXT


def _extra_metadata(context: CallContext) -> List[Tuple[str, str]]:
    """The pairs the plugin adds for ``context``, now (the live span is looked up at each call)."""
    traceparent, tracestate = context.traceparent, context.tracestate
    live = _current_otel_traceparent()
    if live is not None:
        known = parse_traceparent(traceparent) if traceparent else None
        # The current span is a better parent when it is inside the task's trace (3.2+ makes the
        # task span current; a user's own span under it is closer still). A span of another trace
        # (the user's own tracing) never pulls Spark out of the task's trace.
        if (known is not None and parse_traceparent(live)[1] == known[1]) or (
            known is None and context.live_otel
        ):
            traceparent, tracestate = live, None
    if not traceparent:
        traceparent, tracestate = context.fallback_traceparent, None
    return connect_metadata(context.identity, traceparent, tracestate)


class _PluginMetadata(list):
    """Metadata as the plugin returns it: a plain list of pairs that also says which keys the plugin
    added itself (``_sparktrace_added``), so that a copy kept by PySpark can be refreshed later
    without mistaking them for pairs the user set."""

    __slots__ = (_ADDED_ATTR,)


def _strip_plugin_pairs(metadata: Any) -> List[Tuple[str, str]]:
    """``metadata`` without the pairs the plugin added to it (all of it when it is not ours)."""
    if metadata is None:
        return []
    added = getattr(metadata, _ADDED_ATTR, None)  # duck-typed: another copy of this file made it
    pairs = [(key, value) for key, value in metadata]
    if not added:
        return pairs
    return [(key, value) for key, value in pairs if key not in added]


def refresh_metadata(metadata: Any, context: Optional[CallContext] = None) -> List[Tuple[str, str]]:
    """``metadata`` (a call's, or a copy PySpark kept) with the current task's pairs instead of any
    the plugin put there earlier. What the user set stays, and wins over the plugin's."""
    base = _strip_plugin_pairs(metadata)
    merged = merge_metadata(base, _extra_metadata(context if context is not None else _context()))
    result = _PluginMetadata(merged)
    setattr(result, _ADDED_ATTR, frozenset(key for key, _ in merged[len(base):]))
    return result


def current_metadata() -> List[Tuple[str, str]]:
    """Exactly the pairs the plugin adds to a call made now (for code that builds its own calls)."""
    return refresh_metadata(None)


def _wrap_metadata(original: Any) -> Any:
    def metadata(self: Any) -> Any:
        base = original(self)
        try:
            return refresh_metadata(base)
        except Exception:
            log.warning("sparktrace: could not add the Airflow headers; call sent without them", exc_info=True)
            return base

    metadata.__name__ = getattr(original, "__name__", "metadata")
    metadata.__qualname__ = getattr(original, "__qualname__", "metadata")
    metadata.__doc__ = getattr(original, "__doc__", None)
    metadata.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(metadata, _WRAPPED_MARK, True)
    return metadata


_PLUGIN_KEYS = frozenset(IDENTITY_HEADERS + (TRACEPARENT_HEADER, TRACESTATE_HEADER))


def _users_own_pairs(owner: Any) -> List[Tuple[str, str]]:
    """For a call PySpark sends without metadata (4.0's FetchErrorDetails): the identity and trace
    pairs the user put in the session's sc:// URL, which win there too. Only those: the URL's other
    parameters are left as PySpark sends them (not at all)."""
    builder = getattr(owner, "__dict__", {}).get("_builder")
    metadata = getattr(builder, "metadata", None)
    if not callable(metadata):
        return []
    return [(k, v) for k, v in _strip_plugin_pairs(metadata()) if str(k).lower() in _PLUGIN_KEYS]


def _with_current_metadata(
    args: Tuple[Any, ...], kwargs: Dict[str, Any], owner: Any = None
) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The arguments of a gRPC multi-callable (``request, timeout=None, metadata=None, ...`` after the
    request) with the metadata refreshed."""
    try:
        if len(args) >= 2 and args[1] is not None:
            return (args[0], refresh_metadata(args[1]), *args[2:]), kwargs
        given = args[1] if len(args) >= 2 else kwargs.get("metadata")
        refreshed = refresh_metadata(given if given is not None else _users_own_pairs(owner))
        if len(args) >= 2:
            return (args[0], refreshed, *args[2:]), kwargs
        kwargs = dict(kwargs)
        kwargs["metadata"] = refreshed
    except Exception:
        log.warning("sparktrace: could not add the Airflow headers; call sent without them", exc_info=True)
    return args, kwargs


class _CallProxy:
    """One RPC method of a stub (a gRPC multi-callable) whose calls carry the current task."""

    __slots__ = ("_target", "_owner")

    def __init__(self, target: Any, owner: Any = None) -> None:
        self._target = target
        self._owner = owner

    def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        _note_spark_call()
        args, kwargs = _with_current_metadata(args, kwargs, self._owner)
        return self._target(request, *args, **kwargs)

    def with_call(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        _note_spark_call()
        args, kwargs = _with_current_metadata(args, kwargs, self._owner)
        return self._target.with_call(request, *args, **kwargs)

    def future(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        _note_spark_call()
        args, kwargs = _with_current_metadata(args, kwargs, self._owner)
        return self._target.future(request, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class _StubProxy:
    """A ``SparkConnectServiceStub`` whose RPC methods go through ``_CallProxy``; ``owner`` is the
    object that holds the stub (the client, whose builder knows the URL's own pairs)."""

    __slots__ = ("_sparktrace_stub", "_sparktrace_owner")
    _sparktrace_proxy = True

    def __init__(self, stub: Any, owner: Any = None) -> None:
        object.__setattr__(self, "_sparktrace_stub", stub)
        object.__setattr__(self, "_sparktrace_owner", owner)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._sparktrace_stub, name)
        if name.startswith("_") or not callable(target):
            return target
        return _CallProxy(target, self._sparktrace_owner)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._sparktrace_stub, name, value)

    def __repr__(self) -> str:
        return f"<sparktrace proxy of {self._sparktrace_stub!r}>"


class _LiveAttribute:
    """Data descriptor installed on a PySpark class for an attribute its instances set in ``__init__``.

    The instance's own value stays in its ``__dict__`` (so PySpark's ``self._metadata = metadata``
    and ``self._stub = ...`` work unchanged, before and after the plugin is installed); reading it
    returns the value brought up to date: a stub proxy, or the metadata copy refreshed.
    """

    _sparktrace_live_attribute = True

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind

    def __set_name__(self, owner: Any, name: str) -> None:  # pragma: no cover - set explicitly
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        try:
            value = instance.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None
        if value is None:
            return None
        try:
            if self.kind == "stub":
                return value if getattr(type(value), _PROXY_MARK, False) else _StubProxy(value, instance)
            return refresh_metadata(value)
        except Exception:
            log.warning("sparktrace: could not bring %s up to date", self.name, exc_info=True)
            return value

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.name] = value

    def __delete__(self, instance: Any) -> None:
        try:
            del instance.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


def patch_client_module(module: Any) -> int:
    """Install the wrapper and the live attributes on the classes ``module`` defines or re-exports.

    Idempotent, whichever copy of this file did it first. Classes are patched, not instances, so
    sessions created before and after alike are covered. Returns how many things were installed now.
    """
    installed = 0
    for name in BUILDER_CLASSES:
        cls = getattr(module, name, None)
        if not isinstance(cls, type) or "metadata" not in cls.__dict__:
            continue
        current = cls.__dict__["metadata"]
        if getattr(current, _WRAPPED_MARK, False) or not callable(current):
            continue
        setattr(cls, "metadata", _wrap_metadata(current))
        installed += 1
    for class_name, attribute, kind in LIVE_ATTRIBUTES:
        cls = getattr(module, class_name, None)
        if not isinstance(cls, type) or "__slots__" in cls.__dict__:
            continue
        existing = cls.__dict__.get(attribute)
        if existing is not None:  # ours already, or the class has its own (a property): leave it
            continue
        setattr(cls, attribute, _LiveAttribute(attribute, kind))
        installed += 1
    return installed


def _unpatch_client_module(module: Any) -> None:
    for name in BUILDER_CLASSES:
        cls = getattr(module, name, None)
        current = cls.__dict__.get("metadata") if isinstance(cls, type) else None
        if current is not None and getattr(current, _WRAPPED_MARK, False):
            setattr(cls, "metadata", current.__wrapped__)
    for class_name, attribute, _ in LIVE_ATTRIBUTES:
        cls = getattr(module, class_name, None)
        existing = cls.__dict__.get(attribute) if isinstance(cls, type) else None
        if existing is not None and getattr(existing, _LIVE_MARK, False):
            delattr(cls, attribute)


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then patches the module's classes."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            patch_client_module(module)
        except Exception:
            log.warning("sparktrace: could not patch PySpark Connect's client", exc_info=True)

    def __getattr__(self, name: str) -> Any:  # get_source, is_package, get_resource_reader, ...
        return getattr(self._loader, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches PySpark Connect's client modules as soon as they are imported."""

    __sparktrace_finder__ = True

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in CLIENT_MODULES:
            return None
        for finder in list(sys.meta_path):
            if getattr(finder, _FINDER_MARK, False) or not hasattr(finder, "find_spec"):
                continue
            try:
                spec = finder.find_spec(fullname, path, target)
            except Exception:
                continue
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _PatchingLoader(spec.loader)
            return spec
        return None


def _pyspark_present() -> bool:
    if "pyspark" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("pyspark") is not None
    except Exception:
        return False


def install_metadata_wrapper(
    identity: Optional[TaskIdentity],
    traceparent: Optional[str] = None,
    tracestate: Optional[str] = None,
    live_otel: bool = False,
    fallback_traceparent: Optional[str] = None,
) -> bool:
    """Make every Spark Connect call of this process carry ``identity`` and a ``traceparent``.

    Patches PySpark Connect's classes now when they are loaded, else when they are imported. Does
    nothing (returns False) in a process that cannot import PySpark.
    """
    if not _pyspark_present():
        return False
    context = CallContext(identity, traceparent, tracestate, fallback_traceparent, live_otel)
    with _lock:
        # One assignment: a call racing with it sees the old task or the new one, never a mix.
        _process_state()["context"] = context
        for name in CLIENT_MODULES:
            module = sys.modules.get(name)
            if module is not None:
                patch_client_module(module)
        if not any(getattr(f, _FINDER_MARK, False) for f in sys.meta_path):
            sys.meta_path.insert(0, _PatchOnImport())
    return True


def uninstall_metadata_wrapper() -> None:
    """Undo ``install_metadata_wrapper`` and forget the attempt (tests; never needed in Airflow)."""
    with _lock:
        sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, _FINDER_MARK, False)]
        for name in CLIENT_MODULES:
            module = sys.modules.get(name)
            if module is not None:
                _unpatch_client_module(module)
        state = _process_state()
        state["context"] = _EMPTY_CONTEXT
        state.pop("attempt", None)


# --------------------------------------------------------------------------------------------------
# Child processes: OpenTelemetry's environment carrier.
# --------------------------------------------------------------------------------------------------


def export_trace_environment(
    identity: Optional[TaskIdentity], traceparent: Optional[str], tracestate: Optional[str],
    environ: Optional[Dict[str, str]] = None,
) -> None:
    """Put the attempt's parent span into the environment children inherit: ``TRACEPARENT``,
    ``TRACESTATE`` (removed when there is none, so a stale one does not pair with a new parent) and
    ``SPARKTRACE_AIRFLOW_MAP_INDEX``. Airflow itself exports ``AIRFLOW_CTX_DAG_ID``, ``_TASK_ID``,
    ``_DAG_RUN_ID`` and ``_TRY_NUMBER`` before ``execute()``, but no map index.
    """
    env = os.environ if environ is None else environ
    if traceparent and parse_traceparent(traceparent) is not None:
        env[TRACEPARENT_ENV] = traceparent
        if tracestate and all("\x20" <= c <= "\x7e" for c in tracestate):
            env[TRACESTATE_ENV] = tracestate
        else:
            env.pop(TRACESTATE_ENV, None)
    if identity is not None and not identity.problems():
        env[MAP_INDEX_ENV] = str(identity.map_index)


def _environment_int(env: Mapping[str, str], name: str, default: int) -> int:
    value = (env.get(name) or "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        return default


def identity_from_environment(environ: Optional[Mapping[str, str]] = None) -> Optional[TaskIdentity]:
    """The attempt named by Airflow's ``AIRFLOW_CTX_*`` variables (and ``SPARKTRACE_AIRFLOW_MAP_INDEX``),
    or None when there is no dag and task id, or they are not an identity sparktrace accepts."""
    env = os.environ if environ is None else environ
    dag_id, task_id = env.get("AIRFLOW_CTX_DAG_ID"), env.get("AIRFLOW_CTX_TASK_ID")
    if not dag_id or not task_id:
        return None
    identity = TaskIdentity(
        dag_id,
        task_id,
        env.get("AIRFLOW_CTX_DAG_RUN_ID", "") or "",
        _environment_int(env, "AIRFLOW_CTX_TRY_NUMBER", 1),
        _environment_int(env, MAP_INDEX_ENV, -1),
    )
    if identity.problems():
        log.warning("sparktrace: task identity from the environment not sent (%s)", "; ".join(identity.problems()))
        return None
    return identity


def trace_from_environment(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Activate the plugin in a process without an Airflow task context (a child of the task).

    Reads ``TRACEPARENT`` / ``TRACESTATE`` and the identity from ``AIRFLOW_CTX_DAG_ID``,
    ``AIRFLOW_CTX_TASK_ID``, ``AIRFLOW_CTX_DAG_RUN_ID``, ``AIRFLOW_CTX_TRY_NUMBER`` and
    ``SPARKTRACE_AIRFLOW_MAP_INDEX``, and makes this process's Spark Connect calls carry them, like
    the listener does in the task process. Returns True when it did (PySpark importable and
    something to send).
    """
    env = os.environ if environ is None else environ
    try:
        identity = identity_from_environment(env)
        traceparent = env.get(TRACEPARENT_ENV)
        if parse_traceparent(traceparent) is None:
            traceparent = None
        tracestate = env.get(TRACESTATE_ENV) if traceparent else None
        fallback = derived_traceparent(identity) if identity is not None else None
        if identity is None and traceparent is None:
            return False
        return install_metadata_wrapper(identity, traceparent.strip() if traceparent else None, tracestate,
                                        fallback_traceparent=fallback)
    except Exception:
        log.warning("sparktrace: could not read the trace context from the environment", exc_info=True)
        return False


# --------------------------------------------------------------------------------------------------
# Reporting the task attempt to sparktrace: POST {base}/api/v1/airflow/task-attempts.
# --------------------------------------------------------------------------------------------------

REPORT_PATH = "/api/v1/airflow/task-attempts"
REPORT_BUDGET_S = 1.0  # per report, connection to answer; and what the process exit waits at most
REPORT_MODES = ("auto", "all", "off")
MAX_REPORT_BYTES = 64 * 1024
_STATE_VALUE_RE = re.compile(r"^[a-z_]{1,32}$")
_NOT_FINAL_STATES = frozenset({"running", "queued", "scheduled", "none", "restarting"})


def report_settings() -> Tuple[str, str, str]:
    """(mode, base URL, token) for the attempt reports.

    * mode: ``[sparktrace] report`` (``AIRFLOW__SPARKTRACE__REPORT``), else ``SPARKTRACE_REPORT``:
      ``auto`` (default: tasks that made a Spark Connect call in this process, or whose operator's
      class name contains "Spark"), ``all``, or ``off``;
    * base URL: ``[sparktrace] report_url``, else ``SPARKTRACE_REPORT_URL``, else the trace view's
      ``ui_url`` (the same admin port serves both);
    * token: ``[sparktrace] token``, else ``SPARKTRACE_TOKEN`` (sent as ``Authorization: Bearer``);
      without one, ``token_file_setting()`` names a file to read it from at each report.
    """
    mode = (_airflow_conf_get("sparktrace", "report") or os.environ.get("SPARKTRACE_REPORT") or "auto").strip().lower()
    if mode not in REPORT_MODES:
        log.warning("sparktrace: [sparktrace] report = %r is not one of %s; using auto", mode, ", ".join(REPORT_MODES))
        mode = "auto"
    base = (_airflow_conf_get("sparktrace", "report_url") or os.environ.get("SPARKTRACE_REPORT_URL") or "").strip()
    if not base:
        base = ui_base_url()
    token = (_airflow_conf_get("sparktrace", "token") or os.environ.get("SPARKTRACE_TOKEN") or "").strip()
    return mode, base, token


MAX_TOKEN_FILE_BYTES = 4096


def token_file_setting() -> str:
    """``[sparktrace] token_file`` (``AIRFLOW__SPARKTRACE__TOKEN_FILE``), else ``SPARKTRACE_TOKEN_FILE``:
    a file holding the token, e.g. the key ``token`` of a Secret mounted as a volume. Used only when no
    token is set; read at each report (on the reporter's thread), so a rotated Secret is picked up
    without restarting the worker."""
    return (_airflow_conf_get("sparktrace", "token_file") or os.environ.get("SPARKTRACE_TOKEN_FILE") or "").strip()


def read_token_file(path: str) -> Tuple[Optional[str], str]:
    """(token, "") or (None, a short reason for the log). The token is the file's content without
    surrounding whitespace (a trailing newline is fine); the reason never holds the file's content."""
    where = _printable(path, 200) or "(unprintable path)"
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as error:
        return None, f"token_file {where} could not be read ({type(error).__name__})"
    if len(data) > MAX_TOKEN_FILE_BYTES:
        return None, f"token_file {where} is over {MAX_TOKEN_FILE_BYTES} bytes"
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        return None, f"token_file {where} is not ASCII"
    if not token:
        return None, f"token_file {where} is empty"
    return token, ""


def _unix_nano(value: Any) -> Optional[int]:
    """A datetime (Airflow's are aware; a naive one is taken as UTC) as nanoseconds since the epoch."""
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    delta = value - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _state_value(state: Any) -> Optional[str]:
    """Airflow's TaskInstanceState (a str enum) or a plain string, as the report's lower-case value."""
    value = getattr(state, "value", state)
    if not isinstance(value, str):
        return None
    value = value.strip().lower()
    return value if _STATE_VALUE_RE.match(value) else None


def _printable(text: Any, limit: int) -> Optional[str]:
    if not isinstance(text, str):
        return None
    cleaned = "".join(c for c in text if "\x20" <= c <= "\x7e").strip()
    return cleaned[:limit] or None


def operator_name(ti: Any) -> str:
    """The class name of the task's operator (``SparkSubmitOperator``, ``_PySparkDecoratedOperator``)."""
    task = getattr(ti, "task", None)
    name = type(task).__name__ if task is not None else getattr(ti, "operator", None)
    return _printable(name, 250) or "unknown"


@dataclass
class _Attempt:
    """The task attempt running in this process, as reported to sparktrace."""

    identity: TaskIdentity
    operator: str
    traceparent: Optional[str]
    tracestate: Optional[str]
    start_ns: int
    task_instance: Any = None
    hostname: Optional[str] = None
    airflow_version: Optional[str] = None
    mode: str = "auto"
    base_url: str = ""
    token: str = ""
    token_file: str = ""
    spark_call_seen: bool = False
    running_sent: bool = False
    final_state: Optional[str] = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def reporting(self) -> bool:
        return self.mode != "off" and bool(self.base_url)

    @property
    def qualifies(self) -> bool:
        """Whether this attempt is reported at all (see ``report_settings``)."""
        return self.mode == "all" or "Spark" in self.operator or self.spark_call_seen


def attempt_report(
    identity: TaskIdentity,
    state: str,
    operator: str,
    start_ns: int,
    end_ns: int,
    traceparent: Optional[str] = None,
    tracestate: Optional[str] = None,
    hostname: Optional[str] = None,
    airflow_version: Optional[str] = None,
) -> Dict[str, Any]:
    """The JSON object of one report (``POST /api/v1/airflow/task-attempts``). Raises ValueError
    for what the proxy would refuse."""
    problems = identity.problems()
    if problems:
        raise ValueError("invalid Airflow identity: " + "; ".join(problems))
    if not _STATE_VALUE_RE.match(state or ""):
        raise ValueError(f"invalid state {state!r}")
    body: Dict[str, Any] = {
        "dag_id": identity.dag_id,
        "task_id": identity.task_id,
        "run_id": identity.run_id,
        "try_number": identity.try_number,
        "map_index": identity.map_index,
        "state": state,
        "operator": _printable(operator, 250) or "unknown",
        "start_time_unix_nano": int(start_ns),
        "end_time_unix_nano": int(max(end_ns, start_ns)),
    }
    if traceparent and parse_traceparent(traceparent) is not None:
        body["traceparent"] = traceparent
        if tracestate and all("\x20" <= c <= "\x7e" for c in tracestate):
            body["tracestate"] = tracestate
    host = _printable(hostname, 255)
    if host:
        body["hostname"] = host
    version = _printable(airflow_version, 64)
    if version:
        body["airflow_version"] = version
    return body


def _redacted(base_url: str) -> str:
    """The report URL as it may be logged: no user info, query or fragment."""
    try:
        parts = urllib.parse.urlsplit(base_url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}{REPORT_PATH}"
    except Exception:
        return "(unparsable report_url)"


def post_attempt_report(
    base_url: str, body: bytes, token: str = "", deadline: Optional[float] = None
) -> Tuple[Optional[int], str]:
    """POST one report; (HTTP status or None, a short reason for the log). Never raises; gives up at
    ``deadline`` (``time.monotonic()``; default one second from now). The reason never holds the
    token or the URL's user info."""
    deadline = time.monotonic() + REPORT_BUDGET_S if deadline is None else deadline
    try:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None, "report_url is not an http(s) URL"
        port = parts.port
    except ValueError:
        return None, "report_url is not an http(s) URL"
    if len(body) > MAX_REPORT_BYTES:
        return None, "report too large"
    if any(c < "\x20" or c > "\x7e" for c in token):
        return None, "token is not printable ASCII"
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None, "no time left"
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, port, timeout=remaining)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request("POST", parts.path.rstrip("/") + REPORT_PATH, body=body, headers=headers)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None, "timed out"
        if connection.sock is not None:
            connection.sock.settimeout(remaining)  # the answer gets only what is left of the budget
        response = connection.getresponse()
        detail = ""
        if response.status != 202:
            try:
                error = json.loads(response.read(4096).decode("utf-8", "replace")).get("error", "")
                detail = f": {_printable(error, 200)}" if error else ""
            except Exception:
                detail = ""
            if response.status == 503 and response.getheader("Retry-After"):
                detail += f" (retry after {_printable(response.getheader('Retry-After'), 16)}s; not retried)"
        return response.status, f"HTTP {response.status}{detail}"
    except (socket.timeout, TimeoutError):
        return None, "timed out"
    except ConnectionRefusedError:
        return None, "connection refused"
    except OSError as error:
        return None, f"network error ({type(error).__name__})"
    except http.client.HTTPException as error:
        return None, f"bad HTTP answer ({type(error).__name__})"
    except Exception as error:  # e.g. ValueError for a header; its message could hold the token
        return None, f"could not send ({type(error).__name__})"
    finally:
        connection.close()


@dataclass
class _ReportJob:
    base_url: str
    token: str
    body: bytes
    state: str
    deadline: float
    token_file: str = ""  # read at send time when there is no token


class _Reporter:
    """Sends reports one at a time on a daemon thread, so that the task's thread never waits.

    One job in flight and at most one waiting: a newer report of the attempt replaces a waiting one
    (the proxy keeps the latest anyway), and a final report never overtakes the ``running`` one in
    flight, so the proxy never ends up with ``running`` after the final state.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting: Optional[_ReportJob] = None
        self._in_flight: Optional[_ReportJob] = None
        self._thread: Optional[threading.Thread] = None
        self.results: List[Tuple[str, Optional[int], str]] = []  # (state, status, reason), for tests

    def submit(self, job: _ReportJob) -> None:
        with self._cond:
            self._waiting = job
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="sparktrace-report", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._waiting is None:
                    self._cond.wait()
                job, self._waiting = self._waiting, None
                self._in_flight = job
            try:
                token, reason = job.token, ""
                if not token and job.token_file:
                    token, reason = read_token_file(job.token_file)
                if token is None:  # not sent: without its token the proxy would answer 401
                    status = None
                else:
                    status, reason = post_attempt_report(job.base_url, job.body, token, job.deadline)
                if status == 202:
                    log.debug("sparktrace: task attempt reported (%s) to %s", job.state, _redacted(job.base_url))
                else:
                    log.info("sparktrace: task attempt not reported (%s) to %s: %s", job.state,
                             _redacted(job.base_url), reason)
                self.results.append((job.state, status, reason))
            except Exception:  # never let the thread die with a job marked in flight
                log.debug("sparktrace: task attempt report failed", exc_info=True)
            finally:
                with self._cond:
                    self._in_flight = None
                    self._cond.notify_all()

    def flush(self, timeout: float, within_deadlines: bool = True) -> bool:
        """Wait (at most ``timeout`` seconds and, with ``within_deadlines``, never past the jobs' own
        deadlines) until nothing is waiting or in flight. True when nothing is left."""
        end = time.monotonic() + max(0.0, timeout)
        with self._cond:
            while self._waiting is not None or self._in_flight is not None:
                until = end
                if within_deadlines:
                    jobs = [j for j in (self._waiting, self._in_flight) if j is not None]
                    until = min(end, max(j.deadline for j in jobs))
                remaining = until - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True


def _reporter() -> _Reporter:
    state = _process_state()
    with _lock:
        reporter = state.get("reporter")
        if reporter is None or state.get("reporter_pid") != os.getpid():  # a fork has no thread
            reporter = _Reporter()
            state["reporter"], state["reporter_pid"] = reporter, os.getpid()
    return reporter  # type: ignore[no-any-return]


class _FlushReportsOnShutdown(logging.Handler):
    """A logging handler attached to no logger: ``logging.shutdown()`` flushes every handler it
    knows, and Airflow 2.x's forked task runner calls it just before ``os._exit()``, which skips
    ``atexit``. Its flush waits for the final report like the ``atexit`` hook does."""

    def emit(self, record: logging.LogRecord) -> None:
        pass

    def flush(self) -> None:
        _flush_reports_at_exit()


def _ensure_exit_hooks() -> None:
    """Once per process (after a fork too): flush the reports when the process ends. Registered in
    the task process itself: Airflow 3's task runner clears inherited ``atexit`` handlers after its
    fork and runs the ones registered after it."""
    state = _process_state()
    with _lock:
        if state.get("exit_hooks_pid") == os.getpid():
            return
        state["exit_hooks_pid"] = os.getpid()
        atexit.register(_flush_reports_at_exit)
        state["shutdown_handler"] = _FlushReportsOnShutdown()  # kept alive: logging holds a weak ref


def _submit_report(attempt: _Attempt, state: str, end_ns: Optional[int] = None) -> bool:
    try:
        body = attempt_report(
            attempt.identity, state, attempt.operator, attempt.start_ns,
            time.time_ns() if end_ns is None else end_ns, attempt.traceparent, attempt.tracestate,
            attempt.hostname, attempt.airflow_version,
        )
    except ValueError as error:
        log.info("sparktrace: task attempt not reported: %s", error)
        return False
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    _ensure_exit_hooks()
    _reporter().submit(_ReportJob(attempt.base_url, attempt.token, data, state, time.monotonic() + REPORT_BUDGET_S,
                                  attempt.token_file))
    return True


def _note_spark_call() -> None:
    """Called for every Spark Connect RPC: the first one of an attempt that is not reported yet sends
    its ``running`` report (from whatever thread makes the call; the report itself is sent off it)."""
    attempt = _process_state().get("attempt")
    if attempt is None or attempt.spark_call_seen:
        return
    with attempt.lock:
        if attempt.spark_call_seen:
            return
        attempt.spark_call_seen = True
        send = attempt.reporting and not attempt.running_sent and attempt.final_state is None
        attempt.running_sent = attempt.running_sent or send
    if send:
        _submit_report(attempt, "running")


def _begin_attempt(
    ti: Any, identity: Optional[TaskIdentity], traceparent: Optional[str], tracestate: Optional[str]
) -> None:
    """Record the attempt this process runs; report it as ``running`` now when it qualifies already
    (operator name or ``report = all``), else at its first Spark Connect call."""
    state = _process_state()
    if identity is None:
        state.pop("attempt", None)
        return
    mode, base_url, token = report_settings()
    hostname = getattr(ti, "hostname", None)
    attempt = _Attempt(
        identity=identity,
        operator=operator_name(ti),
        traceparent=traceparent,
        tracestate=tracestate,
        start_ns=_unix_nano(getattr(ti, "start_date", None)) or time.time_ns(),
        task_instance=ti,
        hostname=hostname if isinstance(hostname, str) and hostname else socket.gethostname(),
        airflow_version=str(getattr(sys.modules.get("airflow"), "__version__", "") or "") or None,
        mode=mode,
        base_url=base_url,
        token=token,
        token_file="" if token else token_file_setting(),
    )
    state["attempt"] = attempt
    if attempt.reporting and attempt.qualifies:
        with attempt.lock:
            attempt.running_sent = True
        _submit_report(attempt, "running")


def _same_attempt(attempt: _Attempt, ti: Any) -> bool:
    try:
        identity = identity_from_task_instance(ti)
    except Exception:
        return False
    mine = attempt.identity
    return (identity.dag_id, identity.task_id, identity.run_id, identity.map_index) == (
        mine.dag_id, mine.task_id, mine.run_id, mine.map_index)


def _finish_attempt(ti: Any, default_state: str) -> None:
    """The final report, from a terminal listener hook. Only for an attempt this process started
    (the API server calls these hooks too when a user marks a task: no report from there)."""
    attempt = _process_state().get("attempt")
    if attempt is None or not _same_attempt(attempt, ti):
        return
    reported_state = _state_value(getattr(ti, "state", None))
    if reported_state is None or reported_state in _NOT_FINAL_STATES:
        reported_state = default_state
    if default_state == "failed" and reported_state not in ("failed", "up_for_retry"):
        reported_state = "failed"
    with attempt.lock:
        attempt.final_state = reported_state
    if attempt.reporting and attempt.qualifies:
        end_ns = _unix_nano(getattr(ti, "end_date", None)) or time.time_ns()
        _submit_report(attempt, reported_state, end_ns)


def _flush_reports_at_exit() -> None:
    """At process exit: an attempt that was reported ``running`` and got no terminal hook (2.x
    skips, deferrals, reschedules) is reported with the state its task instance ended in; then the
    reports still waiting or in flight get what is left of their one-second budget."""
    try:
        attempt = _process_state().get("attempt")
        if attempt is not None and attempt.reporting and attempt.running_sent and attempt.final_state is None:
            final = _state_value(getattr(attempt.task_instance, "state", None))
            if final and final not in _NOT_FINAL_STATES:
                with attempt.lock:
                    attempt.final_state = final
                _submit_report(attempt, final, _unix_nano(getattr(attempt.task_instance, "end_date", None)))
        reporter = _process_state().get("reporter")
        if reporter is not None and _process_state().get("reporter_pid") == os.getpid():
            reporter.flush(REPORT_BUDGET_S)
    except Exception:
        pass  # at exit: never an exception, never a traceback


def flush_reports(timeout: float = REPORT_BUDGET_S) -> bool:
    """Wait up to ``timeout`` seconds until the reports still waiting or being sent are done (sent,
    refused or given up on); True when they are (tests, scripts)."""
    reporter = _process_state().get("reporter")
    return True if reporter is None else reporter.flush(timeout, within_deadlines=False)


# --------------------------------------------------------------------------------------------------
# Airflow glue: listener, macro, extra link, plugin. Every Airflow import is guarded.
# --------------------------------------------------------------------------------------------------

try:
    from airflow.listeners import hookimpl  # type: ignore[import-not-found]
except Exception:  # no Airflow: the methods stay plain functions

    def hookimpl(func: Any) -> Any:  # type: ignore[no-redef]
        return func


def start_task_attempt(task_instance: Any) -> None:
    """What ``on_task_instance_running`` does: wrap PySpark, export the trace context, report."""
    identity: Optional[TaskIdentity] = identity_from_task_instance(task_instance)
    problems = identity.problems()  # type: ignore[union-attr]
    if problems:
        log.warning("sparktrace: task identity not sent (%s)", "; ".join(problems))
        identity = None
    version = _airflow_version()
    try:
        airflow_traceparent, airflow_tracestate = task_span_traceparent(task_instance, version)
    except Exception:
        log.warning("sparktrace: Airflow's task span not found; using the one derived from the identity",
                    exc_info=True)
        airflow_traceparent, airflow_tracestate = None, None
    fallback = derived_traceparent(identity) if identity is not None else None
    traceparent, tracestate = (airflow_traceparent, airflow_tracestate) if airflow_traceparent else (fallback, None)
    try:
        export_trace_environment(identity, traceparent, tracestate)
    except Exception:
        log.warning("sparktrace: could not export TRACEPARENT to the task's environment", exc_info=True)
    try:
        _begin_attempt(task_instance, identity, traceparent, tracestate)
    except Exception:
        log.warning("sparktrace: the task attempt will not be reported", exc_info=True)
    install_metadata_wrapper(identity, airflow_traceparent, airflow_tracestate, live_otel=version >= (3, 2),
                             fallback_traceparent=fallback)


class SparktraceListener:
    """Airflow listener, in the task process (2.10+ and 3.x).

    Hook signatures: pluggy passes hook arguments by name and an implementation may take fewer than
    the spec, so each method takes only what every supported version's spec has (2.10 adds
    ``session``, which is not needed; ``error`` is in 2.10's and 3.x's ``on_task_instance_failed``).
    ``on_task_instance_skipped`` is 3.1+; where Airflow has no such spec it is never called.
    """

    @hookimpl
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        try:
            start_task_attempt(task_instance)
        except Exception:
            log.warning("sparktrace: plugin failed; the task runs without Spark trace headers", exc_info=True)

    @hookimpl
    def on_task_instance_success(self, previous_state: Any, task_instance: Any) -> None:
        try:
            _finish_attempt(task_instance, "success")
        except Exception:
            log.debug("sparktrace: final report failed", exc_info=True)

    @hookimpl
    def on_task_instance_failed(self, previous_state: Any, task_instance: Any, error: Any) -> None:
        # ti.state is already failed or up_for_retry here (2.10 fetch_handle_failure_context, 3.x
        # task_runner.run then finalize), and the report says which.
        try:
            _finish_attempt(task_instance, "failed")
        except Exception:
            log.debug("sparktrace: final report failed", exc_info=True)

    @hookimpl
    def on_task_instance_skipped(self, previous_state: Any, task_instance: Any) -> None:
        try:
            _finish_attempt(task_instance, "skipped")
        except Exception:
            log.debug("sparktrace: final report failed", exc_info=True)


def sparktrace_remote(conn_id: str = "spark_connect_default", ti: Any = None, decodes: int = 1) -> str:
    """The Spark Connect URL of Airflow connection ``conn_id`` with this task's identity.

    ``SparkConnectHook(conn_id).get_connection_url()`` plus ``;x-airflow-dag-id=...`` (all five)
    and ``;traceparent=...`` (Airflow's task span, else the one derived from the identity), each
    value percent-encoded for ``decodes`` rounds of decoding (PySpark decodes once). ``ti`` is the
    task instance (in a template: ``{{ macros.sparktrace.sparktrace_remote('spark_connect_default', ti) }}``);
    inside a running task it may be left out. Identity parameters already in the URL are replaced.
    """
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook  # type: ignore[import-not-found]

    url = _strip_url_identity(SparkConnectHook(conn_id).get_connection_url())
    if ti is None:
        ti = _current_task_instance()
    if ti is None:
        log.warning("sparktrace_remote: no task instance; URL returned without identity")
        return url
    identity = identity_from_task_instance(ti)
    if identity.problems():
        log.warning("sparktrace_remote: identity not added (%s)", "; ".join(identity.problems()))
        return url
    traceparent, _ = attempt_traceparent(ti, identity)
    return add_url_params(url, identity_url_params(identity, traceparent, decodes))


def _current_task_instance() -> Any:
    for module_name in ("airflow.sdk", "airflow.operators.python"):
        try:
            module = __import__(module_name, fromlist=["get_current_context"])
            return module.get_current_context()["ti"]
        except Exception:
            continue
    return None


try:
    from airflow.sdk import BaseOperatorLink as _BaseOperatorLink  # type: ignore[import-not-found]
except Exception:
    try:
        from airflow.models.baseoperatorlink import BaseOperatorLink as _BaseOperatorLink  # type: ignore[import-not-found]
    except Exception:
        _BaseOperatorLink = object  # type: ignore[assignment,misc]


class SparktraceLink(_BaseOperatorLink):  # type: ignore[misc,valid-type]
    """Global extra link "Spark trace": the attempt's page in sparktrace's trace view.

    Built from the task instance key alone (no XCom, no database), so the web server / API server
    computes it for every task, ran through sparktrace or not. Airflow 2.x and 3.x (the 3.1 React
    UI too) ask the server, which calls ``get_link(operator, ti_key=ti.key)`` with the key of the
    task instance shown, map index and current try included.

    Why not a 3.1 ``external_views`` entry (destination ``task_instance``): its ``href`` can only
    name ``{DAG_ID}``, ``{RUN_ID}``, ``{TASK_ID}`` and ``{MAP_INDEX}``, not the try number the
    attempt page needs, and 3.1's UI substitutes them unencoded (``+`` in a run id's time zone would
    be read as a space); later UIs encode them, but still have no try number.
    """

    name = "Spark trace"

    def get_link(self, operator: Any, *, ti_key: Any = None, **_: Any) -> str:
        try:
            base = ui_base_url()
            if not base or ti_key is None:
                return ""
            return trace_view_url(base, identity_from_task_instance(ti_key))
        except Exception:
            log.warning("sparktrace: could not build the Spark trace link", exc_info=True)
            return ""


try:
    from airflow.plugins_manager import AirflowPlugin as _AirflowPlugin  # type: ignore[import-not-found]
except Exception:
    _AirflowPlugin = None

if _AirflowPlugin is not None:

    class SparktracePlugin(_AirflowPlugin):  # type: ignore[misc,valid-type]
        name = PLUGIN_NAME
        listeners = [SparktraceListener()]
        macros = [sparktrace_remote]
        global_operator_extra_links = [SparktraceLink()]

else:
    SparktracePlugin = None  # type: ignore[assignment,misc]
