"""Test doubles written from the Airflow and PySpark sources (no Airflow, no PySpark here).

* ``SC_CLIENT_SOURCE``: a stand-in for ``pyspark/sql/connect/client/core.py`` (Spark 4.0 shape):
  ``ChannelBuilder`` with ``metadata()`` over ``_params`` minus token, use_ssl, user_id,
  user_agent, session_id, and ``DefaultChannelBuilder(url)`` that parses an ``sc://`` URL as
  PySpark does: ``"http" + url[2:]`` through ``urllib.parse.urlparse``, the path must be empty or
  "/", ``params`` split on ";", each on "=" (exactly two parts), values ``urllib.parse.unquote``-d
  once. Written here from those rules, not imported from the plugin.
* ``FakeTaskInstance``, ``FakeDagRun``, ``FakeTaskInstanceKey``: objects shaped like Airflow's
  TaskInstance (2.x model / 3.x RuntimeTaskInstance), DagRun and TaskInstanceKey, with only the
  attributes the plugin reads.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

SC_CLIENT_SOURCE = '''
import urllib.parse


class ChannelBuilder:
    PARAM_USE_SSL = "use_ssl"
    PARAM_TOKEN = "token"
    PARAM_USER_ID = "user_id"
    PARAM_USER_AGENT = "user_agent"
    PARAM_SESSION_ID = "session_id"

    def __init__(self, channelOptions=None, params=None):
        self._params = params or dict()

    def set(self, key, value):
        self._params[key] = value

    def metadata(self):
        return [
            (k, self._params[k])
            for k in self._params
            if k
            not in [
                ChannelBuilder.PARAM_TOKEN,
                ChannelBuilder.PARAM_USE_SSL,
                ChannelBuilder.PARAM_USER_ID,
                ChannelBuilder.PARAM_USER_AGENT,
                ChannelBuilder.PARAM_SESSION_ID,
            ]
        ]


class DefaultChannelBuilder(ChannelBuilder):
    def __init__(self, url, channelOptions=None):
        super().__init__(channelOptions=channelOptions)
        if url[:5] != "sc://":
            raise ValueError("INVALID_CONNECT_URL: scheme")
        self.url = urllib.parse.urlparse("http" + url[2:])
        if len(self.url.path) > 0 and self.url.path != "/":
            raise ValueError("INVALID_CONNECT_URL: path " + repr(self.url.path))
        if len(self.url.params) > 0:
            for p in self.url.params.split(";"):
                kv = p.split("=")
                if len(kv) != 2:
                    raise ValueError("INVALID_CONNECT_URL: parameter " + repr(p))
                self.set(kv[0], urllib.parse.unquote(kv[1]))
        netloc = self.url.netloc.split(":")
        if len(netloc) == 1:
            self.host, self.port = netloc[0], 15002
        elif len(netloc) == 2:
            self.host, self.port = netloc[0], int(netloc[1])
        else:
            raise ValueError("INVALID_CONNECT_URL: netloc")
'''

CLIENT_INIT_SOURCE = "from pyspark.sql.connect.client.core import ChannelBuilder, DefaultChannelBuilder\n"


def sc_parse(url: str) -> "tuple[Any, dict]":
    """(builder, params) of ``url`` through the PySpark-shaped parser above."""
    namespace: dict = {}
    exec(compile(SC_CLIENT_SOURCE, "<pyspark-shaped client>", "exec"), namespace)
    builder = namespace["DefaultChannelBuilder"](url)
    return builder, dict(builder._params)


def fake_client_module(name: str = "pyspark.sql.connect.client") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(SC_CLIENT_SOURCE, f"<{name}>", "exec"), module.__dict__)
    return module


PYSPARK_MODULES = (
    "pyspark",
    "pyspark.sql",
    "pyspark.sql.connect",
    "pyspark.sql.connect.client",
    "pyspark.sql.connect.client.core",
)


def inject_fake_pyspark(client_loaded: bool = True) -> "Optional[types.ModuleType]":
    """Puts packages named like PySpark's into sys.modules; the client module only if asked."""
    for name in PYSPARK_MODULES[:3]:
        package = types.ModuleType(name)
        package.__path__ = []  # type: ignore[attr-defined]
        sys.modules[name] = package
    if not client_loaded:
        return None
    client = fake_client_module()
    sys.modules["pyspark.sql.connect.client"] = client
    return client


def remove_fake_pyspark() -> None:
    for name in PYSPARK_MODULES:
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


@dataclass
class FakeDagRun:
    """Shaped like airflow.models.DagRun: dag_id, run_id, start_date."""

    dag_id: str
    run_id: str
    start_date: Optional[datetime]


@dataclass
class FakeTaskInstance:
    """Shaped like Airflow's TaskInstance (2.x ORM model, 3.x RuntimeTaskInstance): the
    attributes the plugin reads. ``context_carrier`` is 3.x only; ``dag_run`` 2.x. ``task`` is the
    operator object (both), ``state`` a TaskInstanceState value (a str enum there), ``start_date`` /
    ``end_date`` aware datetimes, ``hostname`` 2.x's column."""

    dag_id: str
    task_id: str
    run_id: str
    try_number: int = 1
    map_index: int = -1
    dag_run: Optional[FakeDagRun] = None
    context_carrier: Optional[dict] = None
    task: Any = None
    state: Optional[str] = None
    start_date: Optional[datetime] = None
    end_date: Optional[datetime] = None
    hostname: Optional[str] = None


class SparkSubmitOperator:
    """An operator class named like the Spark provider's (the report keys on the class name)."""


class BashOperator:
    """An operator class named like Airflow's BashOperator (no "Spark" in the name)."""


@dataclass(frozen=True)
class FakeTaskInstanceKey:
    """Shaped like airflow.models.taskinstancekey.TaskInstanceKey (a NamedTuple there)."""

    dag_id: str
    task_id: str
    run_id: str
    try_number: int = 1
    map_index: int = -1


def fake_airflow(version: str, config: "dict | None" = None) -> None:
    """``airflow`` with ``__version__`` and ``airflow.configuration.conf.get(section, key, fallback)``."""
    airflow = types.ModuleType("airflow")
    airflow.__version__ = version  # type: ignore[attr-defined]
    airflow.__path__ = []  # type: ignore[attr-defined]
    configuration = types.ModuleType("airflow.configuration")
    values = dict(config or {})

    class _Conf:
        def get(self, section: str, key: str, fallback: Any = None) -> Any:
            return values.get((section, key), fallback)

    configuration.conf = _Conf()  # type: ignore[attr-defined]
    sys.modules["airflow"] = airflow
    sys.modules["airflow.configuration"] = configuration


def remove_fake_airflow() -> None:
    for name in ("airflow", "airflow.configuration"):
        sys.modules.pop(name, None)


@dataclass
class _SpanContext:
    trace_id: int
    span_id: int
    trace_flags: int = 1
    is_valid: bool = field(default=True)


def fake_opentelemetry(trace_id: int, span_id: int) -> None:
    """``opentelemetry.trace.get_current_span().get_span_context()`` shaped like OTel's API."""
    context = _SpanContext(trace_id, span_id, 1, trace_id != 0 and span_id != 0)
    span = types.SimpleNamespace(get_span_context=lambda: context)
    otel = types.ModuleType("opentelemetry")
    otel.__path__ = []  # type: ignore[attr-defined]
    trace = types.ModuleType("opentelemetry.trace")
    trace.get_current_span = lambda: span  # type: ignore[attr-defined]
    sys.modules["opentelemetry"] = otel
    sys.modules["opentelemetry.trace"] = trace


def remove_fake_opentelemetry() -> None:
    for name in ("opentelemetry", "opentelemetry.trace"):
        sys.modules.pop(name, None)
