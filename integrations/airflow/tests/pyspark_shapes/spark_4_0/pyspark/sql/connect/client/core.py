"""Stand-in for PySpark 4.0's ``python/pyspark/sql/connect/client/core.py`` (``pyspark`` and
``pyspark-client`` share it).

Mirrors apache/spark's file as read in the 4.0 line (the stored version with ``DefaultChannelBuilder``,
``ReleaseSession``, ``FetchErrorDetails``, progress handlers and retries.py), in what decides the
metadata of each RPC:

* ``ChannelBuilder(channelOptions=None, params=None)`` is now a base class: ``_params``, ``set()``,
  ``add_interceptor()`` (applied by ``_insecure_channel`` / ``_secure_channel`` through
  ``grpc.intercept_channel`` when the channel is built), and ``metadata()`` = every parameter but
  token, use_ssl, user_id, user_agent, session_id; ``DefaultChannelBuilder(url)`` parses ``sc://``;
* ``SparkConnectClient.__init__``: builder (a ``ChannelBuilder`` instance is taken as is, a string
  becomes a ``DefaultChannelBuilder``), retry policies, session id, user id, ``toChannel()`` (the
  channel lives as long as the client), ``self._stub``, then ``ArtifactManager(user_id, session_id,
  channel, self._builder.metadata())`` -- the copy;
* ExecutePlan (reattachable through ``ExecutePlanResponseReattachableIterator(req, self._stub,
  self._retrying, self._builder.metadata())``), AnalyzePlan, Config, Interrupt and ReleaseSession
  pass ``metadata=self._builder.metadata()`` at call time;
* ``_fetch_enriched_error(info)`` calls ``self._stub.FetchErrorDetails(req)`` with *no* metadata.

Request bodies follow this repository's proto (the simulator's); one attempt per call; response
checks are left out.
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
from pyspark.sql.connect.client.retries import DefaultPolicy, RetryPolicy, Retrying

__all__ = ["ChannelBuilder", "DefaultChannelBuilder", "SparkConnectClient"]


class ChannelBuilder:
    PARAM_USE_SSL = "use_ssl"
    PARAM_TOKEN = "token"
    PARAM_USER_ID = "user_id"
    PARAM_USER_AGENT = "user_agent"
    PARAM_SESSION_ID = "session_id"

    GRPC_MAX_MESSAGE_LENGTH_DEFAULT = 128 * 1024 * 1024
    GRPC_DEFAULT_OPTIONS = [
        ("grpc.max_send_message_length", GRPC_MAX_MESSAGE_LENGTH_DEFAULT),
        ("grpc.max_receive_message_length", GRPC_MAX_MESSAGE_LENGTH_DEFAULT),
    ]

    def __init__(self, channelOptions: Optional[List[Tuple[str, Any]]] = None, params: Optional[Dict[str, str]] = None):
        self._interceptors: List[Any] = []
        self._params: Dict[str, str] = params or dict()
        self._channel_options: List[Tuple[str, Any]] = ChannelBuilder.GRPC_DEFAULT_OPTIONS.copy()
        for key, value in channelOptions or []:
            self.setChannelOption(key, value)

    def get(self, key: str) -> Any:
        return self._params[key]

    def getDefault(self, key: str, default: Any) -> Any:
        return self._params.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self._params[key] = value

    def setChannelOption(self, key: str, value: Any) -> None:
        for i, option in enumerate(self._channel_options):
            if option[0] == key:
                self._channel_options[i] = (key, value)
                return
        self._channel_options.append((key, value))

    def add_interceptor(self, interceptor: Any) -> None:
        self._interceptors.append(interceptor)

    def toChannel(self) -> grpc.Channel:
        raise NotImplementedError

    def _insecure_channel(self, target: Any, **kwargs: Any) -> grpc.Channel:
        channel = grpc.insecure_channel(target, options=self._channel_options, **kwargs)
        if len(self._interceptors) > 0:
            channel = grpc.intercept_channel(channel, *self._interceptors)
        return channel

    def _secure_channel(self, target: Any, credentials: Any, **kwargs: Any) -> grpc.Channel:
        channel = grpc.secure_channel(target, credentials, options=self._channel_options, **kwargs)
        if len(self._interceptors) > 0:
            channel = grpc.intercept_channel(channel, *self._interceptors)
        return channel

    @property
    def userId(self) -> Optional[str]:
        return self._params.get(ChannelBuilder.PARAM_USER_ID, None)

    @property
    def token(self) -> Optional[str]:
        return self._params.get(ChannelBuilder.PARAM_TOKEN, None)

    def metadata(self) -> Iterable[Tuple[str, str]]:
        return [
            (k, self._params[k])
            for k in self._params
            if k not in [
                ChannelBuilder.PARAM_TOKEN,
                ChannelBuilder.PARAM_USE_SSL,
                ChannelBuilder.PARAM_USER_ID,
                ChannelBuilder.PARAM_USER_AGENT,
                ChannelBuilder.PARAM_SESSION_ID,
            ]
        ]

    @property
    def session_id(self) -> Optional[str]:
        return self._params.get(ChannelBuilder.PARAM_SESSION_ID, None)

    @property
    def userAgent(self) -> str:
        return self._params.get(ChannelBuilder.PARAM_USER_AGENT, "_SPARK_CONNECT_PYTHON")


class DefaultChannelBuilder(ChannelBuilder):
    def __init__(self, url: str, channelOptions: Optional[List[Tuple[str, Any]]] = None) -> None:
        super().__init__(channelOptions=channelOptions)
        if url[:5] != "sc://":
            raise ValueError("INVALID_CONNECT_URL: The URL must start with 'sc://'.")
        self.url = urllib.parse.urlparse("http" + url[2:])
        if len(self.url.path) > 0 and self.url.path != "/":
            raise ValueError(f"INVALID_CONNECT_URL: The path component '{self.url.path}' must be empty.")
        self._extract_attributes()

    def _extract_attributes(self) -> None:
        if len(self.url.params) > 0:
            for p in self.url.params.split(";"):
                kv = p.split("=")
                if len(kv) != 2:
                    raise ValueError(f"INVALID_CONNECT_URL: Parameter '{p}' should be a key-value pair.")
                self.set(kv[0], urllib.parse.unquote(kv[1]))
        netloc = self.url.netloc.split(":")
        if len(netloc) == 1:
            self._host, self._port = netloc[0], 15002
        elif len(netloc) == 2:
            self._host, self._port = netloc[0], int(netloc[1])
        else:
            raise ValueError(f"INVALID_CONNECT_URL: Target destination '{self.url.netloc}'.")

    @property
    def secure(self) -> bool:
        return self.getDefault(ChannelBuilder.PARAM_USE_SSL, "").lower() == "true" or self.token is not None

    @property
    def host(self) -> str:
        return self._host

    @property
    def endpoint(self) -> str:
        return f"{self._host}:{self._port}"

    def toChannel(self) -> grpc.Channel:
        if not self.secure:
            return self._insecure_channel(self.endpoint)
        creds = grpc.ssl_channel_credentials()
        if self.token is not None:
            creds = grpc.composite_channel_credentials(creds, grpc.access_token_call_credentials(self.token))
        return self._secure_channel(self.endpoint, creds)


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
        self._builder = (
            connection if isinstance(connection, ChannelBuilder) else DefaultChannelBuilder(connection, channel_options)
        )
        self._user_id = None
        self._retry_policies: List[RetryPolicy] = []
        self.set_retry_policies([DefaultPolicy(**(retry_policy or dict()))])
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
        self._server_session_id: Optional[str] = None

    def set_retry_policies(self, policies: Iterable[RetryPolicy]) -> None:
        self._retry_policies = list(policies)

    def _retrying(self) -> Retrying:
        return Retrying(self._retry_policies)

    def _user_context(self) -> Any:
        return pb2.UserContext(user_id=self._user_id or "")

    def _execute_plan_request_with_metadata(self, plan: Any = None) -> Any:
        return pb2.ExecutePlanRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                      tags=[], user_context=self._user_context(), plan=plan)

    def to_table(self, plan: Any) -> List[Any]:
        return list(self._execute_and_fetch_as_iterator(self._execute_plan_request_with_metadata(plan)))

    def _execute_and_fetch_as_iterator(self, req: Any) -> Any:
        if self._use_reattachable_execute:
            generator = ExecutePlanResponseReattachableIterator(
                req, self._stub, self._retrying, self._builder.metadata()
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

    def release_session(self) -> None:
        req = pb2.ReleaseSessionRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                        user_context=self._user_context())
        for attempt in self._retrying():
            with attempt:
                self._stub.ReleaseSession(req, metadata=self._builder.metadata())
                return

    def _fetch_enriched_error(self, info: Any) -> Optional[Any]:
        if "errorId" not in info.metadata:
            return None
        req = pb2.FetchErrorDetailsRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                           error_id=info.metadata["errorId"], user_context=self._user_context())
        try:
            return self._stub.FetchErrorDetails(req)
        except grpc.RpcError:
            return None

    def add_artifacts(self, *path: str, pyfile: bool, archive: bool, file: bool) -> None:
        self._artifact_manager.add_artifacts(*path, pyfile=pyfile, archive=archive, file=file)

    def cache_artifact(self, blob: bytes) -> str:
        return self._artifact_manager.cache_artifact(blob)

    def close(self) -> None:
        ExecutePlanResponseReattachableIterator.shutdown()
        self._channel.close()
        self._closed = True
