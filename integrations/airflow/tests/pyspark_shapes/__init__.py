"""Stand-ins for PySpark Connect's client, one per version (3.4, 3.5, 4.0, 4.1); no PySpark here.

Each ``spark_<version>/`` folder is a ``pyspark`` package tree with the real module paths
(``pyspark.sql.connect.client`` -- one module in 3.4, a package with ``core``, ``artifact``,
``reattach`` (and 4.x ``retries``) from 3.5 on), mirroring, in what decides which metadata each RPC
carries, the apache/spark files named in each module's docstring: construction order, which calls
read ``ChannelBuilder.metadata()`` at call time and which use a copy (``ArtifactManager``, the
reattachable iterator), which call passes none (4.0's FetchErrorDetails), which run on other threads
(ReleaseExecute). They make real gRPC calls: ``toChannel()`` is ``grpc.insecure_channel`` as in
PySpark, and the messages and the stub come from whatever the test binds:

* unit tests: ``fake_proto`` / ``fake_proto_grpc`` over a ``RecordingChannel`` that records each
  call's method, metadata and thread (``recording_channels()`` makes ``grpc.insecure_channel``
  return one);
* end-to-end tests: the modules tests/e2e/test_sim.py ``load_stubs()`` generates from this
  repository's proto/spark/connect, through the proxy to the simulator.

``load(version)`` puts one tree on ``sys.path`` and imports its client; ``unload()`` removes every
``pyspark`` module again. Nothing here is imported from the plugin.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple
from unittest import mock

import grpc

from . import fake_proto, fake_proto_grpc

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = ("3.4", "3.5", "4.0", "4.1")
PB2_MODULE = "_sparktrace_shapes_pb2"
PB2_GRPC_MODULE = "_sparktrace_shapes_pb2_grpc"

# The RPCs each version's client sends (what ``exercise`` makes it send).
RPCS: Dict[str, Tuple[str, ...]] = {
    "3.4": ("ExecutePlan", "AnalyzePlan", "Config"),
    "3.5": ("ExecutePlan", "ReattachExecute", "ReleaseExecute", "AnalyzePlan", "Config", "Interrupt",
            "AddArtifacts", "ArtifactStatus"),
}
RPCS["4.0"] = RPCS["3.5"] + ("FetchErrorDetails", "ReleaseSession")
RPCS["4.1"] = RPCS["4.0"] + ("CloneSession",)


def tree(version: str) -> str:
    return os.path.join(HERE, "spark_" + version.replace(".", "_"))


def unload() -> None:
    """Forget every ``pyspark`` module and every stand-in tree on ``sys.path``."""
    for name in list(sys.modules):
        if name == "pyspark" or name.startswith("pyspark."):
            del sys.modules[name]
    trees = {tree(v) for v in VERSIONS}
    sys.path[:] = [p for p in sys.path if p not in trees]
    sys.modules.pop(PB2_MODULE, None)
    sys.modules.pop(PB2_GRPC_MODULE, None)
    importlib.invalidate_caches()


def load(version: str, pb2: Any = None, pb2_grpc: Any = None, import_client: bool = True) -> Any:
    """Make ``import pyspark...`` find the stand-in of ``version``; return its
    ``pyspark.sql.connect.client`` (or None with ``import_client=False``, to import it later)."""
    if version not in VERSIONS:
        raise ValueError(f"no stand-in for PySpark {version}")
    unload()
    sys.modules[PB2_MODULE] = pb2 if pb2 is not None else fake_proto
    sys.modules[PB2_GRPC_MODULE] = pb2_grpc if pb2_grpc is not None else fake_proto_grpc
    sys.path.insert(0, tree(version))
    importlib.invalidate_caches()
    return importlib.import_module("pyspark.sql.connect.client") if import_client else None


def drain_releases() -> None:
    """Wait for the ReleaseExecute calls the reattachable iterator sent to its thread pool (3.5+)."""
    reattach = sys.modules.get("pyspark.sql.connect.client.reattach")
    if reattach is not None:
        reattach.ExecutePlanResponseReattachableIterator.shutdown()


@dataclass
class ErrorInfo:
    """Shaped like google.rpc.ErrorInfo as ``_fetch_enriched_error`` reads it (``metadata["errorId"]``)."""

    metadata: Dict[str, str] = field(default_factory=dict)


def exercise(client: Any, version: str, plan: Any = None, artifact: Optional[str] = None,
             skip: Sequence[str] = ()) -> List[str]:
    """Make ``client`` send every RPC kind its version has (``RPCS[version]``, less ``skip``); the
    reattachable execution's ReleaseExecute calls are waited for. Returns what was called, in order."""
    done: List[str] = []
    wanted = [rpc for rpc in RPCS[version] if rpc not in skip]
    if "ExecutePlan" in wanted:
        client.to_table(plan)
        drain_releases()
        done.append("ExecutePlan")
    if "AnalyzePlan" in wanted:
        client.schema(plan)
        done.append("AnalyzePlan")
    if "Config" in wanted:
        client.get_configs("spark.sql.shuffle.partitions")
        done.append("Config")
    if "Interrupt" in wanted:
        client.interrupt_all()
        done.append("Interrupt")
    if "AddArtifacts" in wanted and artifact is not None:
        client.add_artifacts(artifact, pyfile=False, archive=False, file=True)
        done.append("AddArtifacts")
    if "ArtifactStatus" in wanted:
        client.cache_artifact(uuid.uuid4().bytes)  # ArtifactStatus, then AddArtifacts (not cached)
        done.append("ArtifactStatus")
    if "FetchErrorDetails" in wanted:
        client._fetch_enriched_error(ErrorInfo({"errorId": str(uuid.uuid4())}))
        done.append("FetchErrorDetails")
    if "CloneSession" in wanted:
        client.clone(str(uuid.uuid4()))
        done.append("CloneSession")
    if "ReleaseSession" in wanted:
        client.release_session()
        done.append("ReleaseSession")
    return done


# --------------------------------------------------------------------------------------------------
# A gRPC channel that records (unit tests).
# --------------------------------------------------------------------------------------------------


@dataclass
class Call:
    method: str
    metadata: List[Tuple[str, str]]
    thread: str
    request: Any


class RecordingChannel:
    """Stands in for a ``grpc.Channel``: records every call (method, metadata, thread) and answers
    with fake_proto messages. A reattachable ExecutePlan stream ends after one batch without
    ``result_complete`` (what a server does when it cuts a stream), so the client reattaches."""

    def __init__(self, target: str = "", options: Any = None) -> None:
        self.target = target
        self.options = options
        self.calls: List[Call] = []
        self.closed = False
        self._lock = threading.Lock()

    def _record(self, path: str, request: Any, metadata: Any) -> str:
        method = path.rsplit("/", 1)[-1]
        with self._lock:
            self.calls.append(Call(method, [tuple(pair) for pair in (metadata or ())], threading.current_thread().name,
                                   request))
        return method

    def _answer(self, method: str, request: Any) -> Any:
        pb2 = fake_proto
        session = getattr(request, "session_id", "")
        if method == "ExecutePlan":
            batch = pb2.ExecutePlanResponse(session_id=session, operation_id=request.operation_id,
                                            response_id=str(uuid.uuid4()), arrow_batch=pb2.ExecutePlanResponse.ArrowBatch())
            return iter([batch])  # reattachable or not: no result_complete in this first stream
        if method == "ReattachExecute":
            return iter([
                pb2.ExecutePlanResponse(session_id=session, operation_id=request.operation_id,
                                        response_id=str(uuid.uuid4()), arrow_batch=pb2.ExecutePlanResponse.ArrowBatch()),
                pb2.ExecutePlanResponse(session_id=session, operation_id=request.operation_id,
                                        response_id=str(uuid.uuid4()),
                                        result_complete=pb2.ExecutePlanResponse.ResultComplete()),
            ])
        answers = {
            "AnalyzePlan": pb2.AnalyzePlanResponse, "Config": pb2.ConfigResponse,
            "Interrupt": pb2.InterruptResponse, "ArtifactStatus": pb2.ArtifactStatusesResponse,
            "AddArtifacts": pb2.AddArtifactsResponse, "ReleaseExecute": pb2.ReleaseExecuteResponse,
            "ReleaseSession": pb2.ReleaseSessionResponse, "FetchErrorDetails": pb2.FetchErrorDetailsResponse,
            "CloneSession": pb2.CloneSessionResponse,
        }
        return answers[method](session_id=session)

    def unary_unary(self, path: str, *_: Any, **__: Any) -> Any:
        def call(request: Any, timeout: Any = None, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
            return self._answer(self._record(path, request, metadata), request)

        return call

    unary_stream = unary_unary

    def stream_unary(self, path: str, *_: Any, **__: Any) -> Any:
        def call(requests: Any, timeout: Any = None, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
            sent = list(requests)
            return self._answer(self._record(path, sent, metadata), sent[0] if sent else None)

        return call

    def close(self) -> None:
        self.closed = True

    # What a test asks.
    def methods(self) -> List[str]:
        with self._lock:
            return [c.method for c in self.calls]

    def by_method(self, method: str) -> List[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()


@contextlib.contextmanager
def recording_channels() -> Iterator[List[RecordingChannel]]:
    """While active, ``grpc.insecure_channel`` and ``grpc.secure_channel`` (what the stand-ins'
    ``toChannel`` calls, as PySpark's does; a ``token`` in the URL means TLS) return a new
    ``RecordingChannel``; the list holds them in creation order."""
    channels: List[RecordingChannel] = []

    def insecure_channel(target: str, options: Any = None, **_: Any) -> RecordingChannel:
        channels.append(RecordingChannel(target, options))
        return channels[-1]

    def secure_channel(target: str, credentials: Any = None, options: Any = None, **_: Any) -> RecordingChannel:
        return insecure_channel(target, options)

    with mock.patch.object(grpc, "insecure_channel", insecure_channel), \
            mock.patch.object(grpc, "secure_channel", secure_channel):
        yield channels
