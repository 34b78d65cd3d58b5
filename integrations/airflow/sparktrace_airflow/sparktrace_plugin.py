"""sparktrace's Airflow plugin: every Spark Connect call of a task carries the task's identity.

This one file is the whole plugin. It works two ways:

* installed as a package (``pip install ./integrations/airflow``), found by Airflow through the
  ``airflow.plugins`` entry point;
* copied alone into Airflow's plugins folder (e.g. ``$AIRFLOW_HOME/plugins/sparktrace_plugin.py``).

Python standard library only. Every Airflow import is guarded, so the module imports (and its pure
helpers work) where Airflow and PySpark are absent.

What it does, for every task instance:

* the listener ``on_task_instance_running`` (run in the task process before ``execute()``) records the
  task attempt's identity and Airflow's own task span, and wraps ``ChannelBuilder.metadata()`` of
  PySpark Connect (now, or when ``pyspark.sql.connect.client`` is first imported), so that every
  Spark Connect call made in that process carries ``x-airflow-dag-id``, ``x-airflow-task-id``,
  ``x-airflow-run-id``, ``x-airflow-try-number``, ``x-airflow-map-index`` and a ``traceparent``
  whose parent is Airflow's task span, when Airflow has one;
* the macro ``sparktrace_remote(conn_id, ti)`` returns the Spark Connect URL of an Airflow
  connection with the same identity as URL parameters, for ``config_kwargs={"spark.remote": ...}``;
* the global operator extra link "Spark trace" points at sparktrace's trace view of the attempt.

Nothing here ever fails a task: errors are logged and swallowed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import logging
import os
import re
import sys
import threading
import types
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "PLUGIN_NAME",
    "TaskIdentity",
    "connect_metadata",
    "merge_metadata",
    "format_traceparent",
    "parse_traceparent",
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
    "sparktrace_remote",
    "install_metadata_wrapper",
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
# The wrapper around PySpark Connect's ChannelBuilder.metadata().
# --------------------------------------------------------------------------------------------------

# Modules that define (or re-export) ChannelBuilder: Spark 3.4 has pyspark/sql/connect/client.py,
# 3.5 and 4.x a package whose core.py defines it.
CLIENT_MODULES = ("pyspark.sql.connect.client.core", "pyspark.sql.connect.client")
BUILDER_CLASSES = ("ChannelBuilder", "DefaultChannelBuilder")
_WRAPPED_MARK = "__sparktrace_wrapped__"

_STATE_MODULE = "_sparktrace_airflow_state"


def _process_state() -> dict:
    """The attempt this process runs, set by the listener and read by the wrapper.

    Kept in a tiny module of its own in ``sys.modules`` so that every copy of this file loaded in
    the process (the package and a file in the plugins folder) shares one state and one wrapper.
    """
    module = sys.modules.get(_STATE_MODULE)
    if module is None:
        fresh = types.ModuleType(_STATE_MODULE)
        fresh.state = {"identity": None, "traceparent": None, "tracestate": None, "live_otel": False}  # type: ignore[attr-defined]
        module = sys.modules.setdefault(_STATE_MODULE, fresh)
    return module.state  # type: ignore[attr-defined,no-any-return]


_state = _process_state()
_lock = threading.Lock()
_FINDER_MARK = "__sparktrace_finder__"


def _extra_metadata(state: dict) -> List[Tuple[str, str]]:
    traceparent = state.get("traceparent")
    tracestate = state.get("tracestate")
    live = _current_otel_traceparent()
    if live is not None:
        known = parse_traceparent(traceparent) if traceparent else None
        # The current span is a better parent when it is inside the task's trace (3.2+ makes the
        # task span current; a user's own span under it is closer still).
        if (known is not None and parse_traceparent(live)[1] == known[1]) or (
            known is None and state.get("live_otel")
        ):
            traceparent, tracestate = live, None
    return connect_metadata(state.get("identity"), traceparent, tracestate)


def _wrap_metadata(original: Any, state: dict) -> Any:
    def metadata(self: Any) -> Any:
        base = original(self)
        try:
            extra = _extra_metadata(state)
            if not extra:
                return base
            return merge_metadata(base, extra)
        except Exception:
            log.warning("sparktrace: could not add the Airflow headers; call sent without them", exc_info=True)
            return base

    metadata.__name__ = getattr(original, "__name__", "metadata")
    metadata.__qualname__ = getattr(original, "__qualname__", "metadata")
    metadata.__doc__ = getattr(original, "__doc__", None)
    metadata.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(metadata, _WRAPPED_MARK, state)
    return metadata


def patch_client_module(module: Any, state: Optional[dict] = None) -> int:
    """Wrap ``metadata`` of every ChannelBuilder class of ``module`` that defines it itself.

    Idempotent: an already wrapped method (by any copy of this file) is left alone. The class
    attribute is replaced, so builders created before and after both go through the wrapper.
    Returns the number of classes wrapped now.
    """
    wrapped = 0
    for name in BUILDER_CLASSES:
        cls = getattr(module, name, None)
        if not isinstance(cls, type) or "metadata" not in cls.__dict__:
            continue
        current = cls.__dict__["metadata"]
        if getattr(current, _WRAPPED_MARK, None) is not None:
            continue
        if not callable(current):
            continue
        setattr(cls, "metadata", _wrap_metadata(current, state if state is not None else _state))
        wrapped += 1
    return wrapped


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then wraps the module's ChannelBuilder."""

    def __init__(self, loader: Any, finder: "_PatchOnImport") -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: Any) -> Any:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            patch_client_module(module, self._finder.state)
        except Exception:
            log.warning("sparktrace: could not wrap PySpark Connect's ChannelBuilder", exc_info=True)

    def __getattr__(self, name: str) -> Any:  # get_source, is_package, get_resource_reader, ...
        return getattr(self._loader, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Wraps ChannelBuilder as soon as PySpark Connect's client module is imported."""

    __sparktrace_finder__ = True

    def __init__(self, state: dict) -> None:
        self.state = state

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
                spec.loader = _PatchingLoader(spec.loader, self)
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
) -> bool:
    """Make every Spark Connect call of this process carry ``identity`` and ``traceparent``.

    Wraps ChannelBuilder now when PySpark Connect's client is loaded, else when it is imported.
    Does nothing (returns False) in a process that cannot import PySpark.
    """
    if not _pyspark_present():
        return False
    with _lock:
        state = _process_state()
        # Every key replaced in one update; a call racing with it sees the old or the new value.
        state.update(identity=identity, traceparent=traceparent, tracestate=tracestate, live_otel=live_otel)
        for name in CLIENT_MODULES:
            module = sys.modules.get(name)
            if module is not None:
                patch_client_module(module, state)
        if not any(getattr(f, _FINDER_MARK, False) for f in sys.meta_path):
            sys.meta_path.insert(0, _PatchOnImport(state))
    return True


def uninstall_metadata_wrapper() -> None:
    """Undo ``install_metadata_wrapper`` (tests; never needed in Airflow)."""
    with _lock:
        sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, _FINDER_MARK, False)]
        for name in CLIENT_MODULES:
            module = sys.modules.get(name)
            for class_name in BUILDER_CLASSES:
                cls = getattr(module, class_name, None) if module is not None else None
                current = cls.__dict__.get("metadata") if isinstance(cls, type) else None
                if current is not None and getattr(current, _WRAPPED_MARK, None) is not None:
                    setattr(cls, "metadata", current.__wrapped__)
        _process_state().update(identity=None, traceparent=None, tracestate=None, live_otel=False)


# --------------------------------------------------------------------------------------------------
# Airflow glue: listener, macro, extra link, plugin. Every Airflow import is guarded.
# --------------------------------------------------------------------------------------------------

try:
    from airflow.listeners import hookimpl  # type: ignore[import-not-found]
except Exception:  # no Airflow: the methods stay plain functions

    def hookimpl(func: Any) -> Any:  # type: ignore[no-redef]
        return func


class SparktraceListener:
    """Airflow listener: runs in the task process just before ``execute()`` (2.x and 3.x)."""

    @hookimpl
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        try:
            identity = identity_from_task_instance(task_instance)
            problems = identity.problems()
            if problems:
                log.warning("sparktrace: task identity not sent (%s)", "; ".join(problems))
                identity = None
            version = _airflow_version()
            try:
                traceparent, tracestate = task_span_traceparent(task_instance, version)
            except Exception:
                log.warning("sparktrace: Airflow's task span not found; no traceparent", exc_info=True)
                traceparent, tracestate = None, None
            install_metadata_wrapper(identity, traceparent, tracestate, live_otel=version >= (3, 2))
        except Exception:
            log.warning("sparktrace: plugin failed; the task runs without Spark trace headers", exc_info=True)


def sparktrace_remote(conn_id: str = "spark_connect_default", ti: Any = None, decodes: int = 1) -> str:
    """The Spark Connect URL of Airflow connection ``conn_id`` with this task's identity.

    ``SparkConnectHook(conn_id).get_connection_url()`` plus ``;x-airflow-dag-id=...`` (all five)
    and ``;traceparent=...`` when Airflow has a task span, each value percent-encoded for
    ``decodes`` rounds of decoding (PySpark decodes once). ``ti`` is the task instance (in a
    template: ``{{ macros.sparktrace.sparktrace_remote('spark_connect_default', ti) }}``); inside a
    running task it may be left out. Identity parameters already in the URL are replaced.
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
    try:
        traceparent, _ = task_span_traceparent(ti)
    except Exception:
        traceparent = None
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

    Built from the task instance key alone (no XCom, no database), so the web server / API
    server computes it for every task, ran through sparktrace or not.
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
