"""Stand-in for PySpark 3.4's ``python/pyspark/sql/connect/client.py`` (one module; no package yet).

Mirrors apache/spark's file as read at commit 000895da3f6c0d17ccfdfe79c0ca34dfb9fb6e7b (the 3.4 line;
the 3.4.0 tag still has this single module, github.com/apache/spark/blob/v3.4.0-rc2/...): where
metadata comes from and when. ``ChannelBuilder(url, channelOptions)`` parses ``sc://`` (``"http" +
url[2:]`` through ``urlparse``, parameters split on ";" then "=", values unquoted once) into
``params``; ``metadata()`` is every parameter but token, use_ssl, user_id and user_agent, built anew
at each call. ``SparkConnectClient`` passes ``metadata=self._builder.metadata()`` on each RPC:
ExecutePlan, AnalyzePlan and Config are all 3.4 has (no artifacts, no reattach, no interrupt).
Request bodies follow this repository's proto (what the simulator speaks), not 3.4's own layout,
and retries are left out: neither changes which metadata a call carries.
"""

import os
import urllib.parse
import uuid
from typing import Any, Dict, Iterable, List, Optional, Tuple

import grpc

import pyspark.sql.connect.proto as pb2
import pyspark.sql.connect.proto.base_pb2_grpc as grpc_lib

__all__ = ["ChannelBuilder", "SparkConnectClient"]


class ChannelBuilder:
    PARAM_USE_SSL = "use_ssl"
    PARAM_TOKEN = "token"
    PARAM_USER_ID = "user_id"
    PARAM_USER_AGENT = "user_agent"

    def __init__(self, url: str, channelOptions: Optional[List[Tuple[str, Any]]] = None) -> None:
        if url[:5] != "sc://":
            raise AttributeError("URL scheme must be set to `sc`.")
        self.url = urllib.parse.urlparse("http" + url[2:])
        self.params: Dict[str, str] = {}
        if len(self.url.path) > 0 and self.url.path != "/":
            raise AttributeError(f"Path component for connection URI must be empty: {self.url.path}")
        self._extract_attributes()
        self._channel_options = channelOptions

    def _extract_attributes(self) -> None:
        if len(self.url.params) > 0:
            for p in self.url.params.split(";"):
                kv = p.split("=")
                if len(kv) != 2:
                    raise AttributeError(f"Parameter '{p}' is not a valid parameter key-value pair")
                self.params[kv[0]] = urllib.parse.unquote(kv[1])
        netloc = self.url.netloc.split(":")
        if len(netloc) == 1:
            self.host, self.port = netloc[0], 15002
        elif len(netloc) == 2:
            self.host, self.port = netloc[0], int(netloc[1])
        else:
            raise AttributeError(f"Target destination {self.url.netloc} does not match '<host>:<port>' pattern")

    def metadata(self) -> Iterable[Tuple[str, str]]:
        return [
            (k, self.params[k])
            for k in self.params
            if k not in [
                ChannelBuilder.PARAM_TOKEN,
                ChannelBuilder.PARAM_USE_SSL,
                ChannelBuilder.PARAM_USER_ID,
                ChannelBuilder.PARAM_USER_AGENT,
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

    def toChannel(self) -> grpc.Channel:
        if not self.secure:
            return grpc.insecure_channel(self.endpoint, options=self._channel_options)
        return grpc.secure_channel(self.endpoint, credentials=grpc.ssl_channel_credentials(),
                                   options=self._channel_options)


class SparkConnectClient(object):
    def __init__(
        self,
        connection: "str | ChannelBuilder",
        user_id: Optional[str] = None,
        channel_options: Optional[List[Tuple[str, Any]]] = None,
        retry_policy: Optional[Dict[str, Any]] = None,
    ):
        self._builder = connection if isinstance(connection, ChannelBuilder) else ChannelBuilder(connection, channel_options)
        self._session_id = str(uuid.uuid4())
        if self._builder.userId is not None:
            self._user_id = self._builder.userId
        elif user_id is not None:
            self._user_id = user_id
        else:
            self._user_id = os.getenv("USER", None)
        self._channel = self._builder.toChannel()
        self._stub = grpc_lib.SparkConnectServiceStub(self._channel)

    def _user_context(self) -> Any:
        return pb2.UserContext(user_id=self._user_id or "")

    def _execute_plan_request_with_metadata(self, plan: Any = None) -> Any:
        return pb2.ExecutePlanRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                      user_context=self._user_context(), plan=plan)

    def to_table(self, plan: Any) -> List[Any]:
        req = self._execute_plan_request_with_metadata(plan)
        return self._execute_and_fetch(req)

    def _execute_and_fetch(self, req: Any) -> List[Any]:
        return list(self._stub.ExecutePlan(req, metadata=self._builder.metadata()))

    def schema(self, plan: Any) -> Any:
        return self._analyze(plan)

    def _analyze(self, plan: Any) -> Any:
        req = pb2.AnalyzePlanRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                     user_context=self._user_context(),
                                     schema=pb2.AnalyzePlanRequest.Schema(plan=plan))
        return self._stub.AnalyzePlan(req, metadata=self._builder.metadata())

    def get_configs(self, *keys: str) -> Any:
        op = pb2.ConfigRequest.Operation(get=pb2.ConfigRequest.Get(keys=keys))
        return self.config(op)

    def config(self, operation: Any) -> Any:
        req = pb2.ConfigRequest(session_id=self._session_id, client_type=self._builder.userAgent,
                                user_context=self._user_context(), operation=operation)
        return self._stub.Config(req, metadata=self._builder.metadata())

    def close(self) -> None:
        self._channel.close()
