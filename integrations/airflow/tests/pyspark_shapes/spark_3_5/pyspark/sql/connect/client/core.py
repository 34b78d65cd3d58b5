"""Stand-in for PySpark 3.5's ``python/pyspark/sql/connect/client/core.py``.

Mirrors apache/spark's file as read at commit d15c3188d6d3591745f237335930ee4e974d61e8 (the 3.5
line: ArtifactManager and the reattachable iterator are there, FetchErrorDetails and ReleaseSession
are not -- they came with 4.0, SPARK-45240 / the proto), in what decides the metadata of each RPC:

* ``ChannelBuilder(url, channelOptions)``: ``params`` from the ``sc://`` URL, the 128 MiB message
  options, ``metadata()`` = every parameter but token, use_ssl, user_id, user_agent, session_id,
  built at each call;
* ``SparkConnectClient.__init__`` in this order: builder, session id, user id, ``toChannel()``,
  ``self._stub``, then ``ArtifactManager(user_id, session_id, channel, self._builder.metadata())`` --
  a *copy* of the metadata taken when the session is created;
* ExecutePlan (through ``ExecutePlanResponseReattachableIterator(req, stub, retry_policy,
  self._builder.metadata())`` when reattachable, the default), AnalyzePlan, Config and Interrupt
  pass ``metadata=self._builder.metadata()`` at call time.

Request bodies follow this repository's proto (the simulator's); retries are one attempt; response
checks are left out. None of that changes which metadata a call carries.
"""

import os
import threading
import urllib.parse
import uuid
from typing import Any, Dict, Iterable, List, Optional, Tuple

import grpc

import pyspark.sql.connect.proto as pb2
import pyspark.sql.connect.proto.base_pb2_grpc as grpc_lib
from pyspark.sql.connect.client.artifact import ArtifactManager
from pyspark.sql.connect.client.reattach import ExecutePlanResponseReattachableIterator

__all__ = ["ChannelBuilder", "SparkConnectClient"]


class ChannelBuilder:
    PARAM_USE_SSL = "use_ssl"
    PARAM_TOKEN = "token"
    PARAM_USER_ID = "user_id"
    PARAM_USER_AGENT = "user_agent"
    PARAM_SESSION_ID = "session_id"
    MAX_MESSAGE_LENGTH = 128 * 1024 * 1024

    def __init__(self, url: str, channelOptions: Optional[List[Tuple[str, Any]]] = None) -> None:
        if url[:5] != "sc://":
            raise ValueError("INVALID_CONNECT_URL: The URL must start with 'sc://'.")
        self.url = urllib.parse.urlparse("http" + url[2:])
        self.params: Dict[str, str] = {}
        if len(self.url.path) > 0 and self.url.path != "/":
            raise ValueError(f"INVALID_CONNECT_URL: The path component '{self.url.path}' must be empty.")
        self._extract_attributes()
        GRPC_DEFAULT_OPTIONS = [
            ("grpc.max_send_message_length", ChannelBuilder.MAX_MESSAGE_LENGTH),
            ("grpc.max_receive_message_length", ChannelBuilder.MAX_MESSAGE_LENGTH),
        ]
        self._channel_options = GRPC_DEFAULT_OPTIONS + (channelOptions or [])

    def _extract_attributes(self) -> None:
        if len(self.url.params) > 0:
            for p in self.url.params.split(";"):
                kv = p.split("=")
                if len(kv) != 2:
                    raise ValueError(f"INVALID_CONNECT_URL: Parameter '{p}' should be a key-value pair.")
                self.params[kv[0]] = urllib.parse.unquote(kv[1])
        netloc = self.url.netloc.split(":")
        if len(netloc) == 1:
            self.host, self.port = netloc[0], 15002
        elif len(netloc) == 2:
            self.host, self.port = netloc[0], int(netloc[1])
        else:
            raise ValueError(f"INVALID_CONNECT_URL: Target destination '{self.url.netloc}'.")

    def metadata(self) -> Iterable[Tuple[str, str]]:
        return [
            (k, self.params[k])
            for k in self.params
            if k not in [
                ChannelBuilder.PARAM_TOKEN,
                ChannelBuilder.PARAM_USE_SSL,
                ChannelBuilder.PARAM_USER_ID,
                ChannelBuilder.PARAM_USER_AGENT,
                ChannelBuilder.PARAM_SESSION_ID,
            ]
        ]

    @property
    def secure(self) -> bool:
        return self._token is not None or self.params.get(ChannelBuilder.PARAM_USE_SSL, "").lower() == "true"

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def _token(self) -> Optional[str]:
        return self.params.get(ChannelBuilder.PARAM_TOKEN, None)

    @property
    def userId(self) -> Optional[str]:
        return self.params.get(ChannelBuilder.PARAM_USER_ID, None)

    @property
    def userAgent(self) -> str:
        return self.params.get(ChannelBuilder.PARAM_USER_AGENT, "_SPARK_CONNECT_PYTHON")

    @property
    def session_id(self) -> Optional[str]:
        return self.params.get(ChannelBuilder.PARAM_SESSION_ID, None)

    def toChannel(self) -> grpc.Channel:
        if not self.secure:
            return grpc.insecure_channel(self.endpoint, options=self._channel_options)
        return grpc.secure_channel(self.endpoint, credentials=grpc.ssl_channel_credentials(),
                                   options=self._channel_options)


class _Attempt:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


class Retrying:
    """3.5 keeps its retry loop in core.py; here: exactly one attempt."""

    def __init__(self, **_: Any) -> None:
        pass

    def __iter__(self) -> Any:
        yield _Attempt()


class SparkConnectClient(object):
    def __init__(
        self,
        connection: "str | ChannelBuilder",
        user_id: Optional[str] = None,
        channel_options: Optional[List[Tuple[str, Any]]] = None,
        retry_policy: Optional[Dict[str, Any]] = None,
        use_reattachable_execute: bool = True,
    ):
        self.thread_local = threading.local()
        self._builder = connection if isinstance(connection, ChannelBuilder) else ChannelBuilder(connection, channel_options)
        self._user_id = None
        self._retry_policy = {"max_retries": 15, "backoff_multiplier": 4.0, "initial_backoff": 50,
                              "max_backoff": 60000, "jitter": 500, "min_jitter_threshold": 2000}
        if retry_policy:
            self._retry_policy.update(retry_policy)
        self._session_id = str(uuid.uuid4()) if self._builder.session_id is None else str(self._builder.session_id)
        if self._builder.userId is not None:
            self._user_id = self._builder.userId
        elif user_id is not None:
            self._user_id = user_id
        else:
            self._user_id = os.getenv("USER", None)
        self._channel = self._builder.toChannel()
        self._closed = False
        self._stub = grpc_lib.SparkConnectServiceStub(self._channel)
        self._artifact_manager = ArtifactManager(
            self._user_id, self._session_id, self._channel, self._builder.metadata()
        )
        self._use_reattachable_execute = use_reattachable_execute

    def _retrying(self) -> Retrying:
        return Retrying(**self._retry_policy)

    def _user_context(self) -> Any:
        return pb2.UserContext(user_id=self._user_id or "")

    def _execute_plan_request_with_metadata(self, plan: Any = None) -> Any:
        return pb2.ExecutePlanRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                      tags=[], user_context=self._user_context(), plan=plan)

    def to_table(self, plan: Any) -> List[Any]:
        return list(self._execute_and_fetch_as_iterator(self._execute_plan_request_with_metadata(plan)))

    def _execute_and_fetch_as_iterator(self, req: Any) -> Any:
        if self._use_reattachable_execute:
            # Don't use retryHandler - own retry handling is inside.
            generator = ExecutePlanResponseReattachableIterator(
                req, self._stub, self._retry_policy, self._builder.metadata()
            )
            for b in generator:
                yield b
        else:
            for attempt in self._retrying():
                with attempt:
                    for b in self._stub.ExecutePlan(req, metadata=self._builder.metadata()):
                        yield b

    def schema(self, plan: Any) -> Any:
        return self._analyze(method="schema", plan=plan)

    def _analyze(self, method: str, **kwargs: Any) -> Any:
        req = pb2.AnalyzePlanRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                     user_context=self._user_context(),
                                     schema=pb2.AnalyzePlanRequest.Schema(plan=kwargs.get("plan")))
        for attempt in self._retrying():
            with attempt:
                return self._stub.AnalyzePlan(req, metadata=self._builder.metadata())

    def get_configs(self, *keys: str) -> Any:
        op = pb2.ConfigRequest.Operation(get=pb2.ConfigRequest.Get(keys=keys))
        return self.config(op)

    def config(self, operation: Any) -> Any:
        req = pb2.ConfigRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                user_context=self._user_context(), operation=operation)
        for attempt in self._retrying():
            with attempt:
                return self._stub.Config(req, metadata=self._builder.metadata())

    def _interrupt_request(self, interrupt_type: str, id_or_tag: Optional[str] = None) -> Any:
        kinds = {"all": pb2.InterruptRequest.InterruptType.INTERRUPT_TYPE_ALL,
                 "tag": pb2.InterruptRequest.InterruptType.INTERRUPT_TYPE_TAG,
                 "operation": pb2.InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID}
        req = pb2.InterruptRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                   user_context=self._user_context(), interrupt_type=kinds[interrupt_type])
        if interrupt_type == "tag":
            req.operation_tag = id_or_tag
        elif interrupt_type == "operation":
            req.operation_id = id_or_tag
        return req

    def interrupt_all(self) -> Optional[List[str]]:
        req = self._interrupt_request("all")
        for attempt in self._retrying():
            with attempt:
                return list(self._stub.Interrupt(req, metadata=self._builder.metadata()).interrupted_ids)

    def interrupt_operation(self, op_id: str) -> Optional[List[str]]:
        req = self._interrupt_request("operation", op_id)
        for attempt in self._retrying():
            with attempt:
                return list(self._stub.Interrupt(req, metadata=self._builder.metadata()).interrupted_ids)

    def add_artifacts(self, *path: str, pyfile: bool, archive: bool, file: bool) -> None:
        self._artifact_manager.add_artifacts(*path, pyfile=pyfile, archive=archive, file=file)

    def cache_artifact(self, blob: bytes) -> str:
        return self._artifact_manager.cache_artifact(blob)

    def close(self) -> None:
        ExecutePlanResponseReattachableIterator.shutdown()
        self._channel.close()
        self._closed = True
