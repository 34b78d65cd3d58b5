"""``SparkConnectServiceStub`` shaped like the one grpc_python_plugin generates (base_pb2_grpc.py):
one attribute per RPC, a multi-callable made by the channel from the method's full name. Over the
recording channel of tests/pyspark_shapes (unit tests), with no (de)serializers."""

from __future__ import annotations

from typing import Any

SERVICE = "/spark.connect.SparkConnectService/"

UNARY_UNARY = ("AnalyzePlan", "Config", "ArtifactStatus", "Interrupt", "ReleaseExecute", "ReleaseSession",
               "FetchErrorDetails", "CloneSession")
UNARY_STREAM = ("ExecutePlan", "ReattachExecute")
STREAM_UNARY = ("AddArtifacts",)


class SparkConnectServiceStub:
    def __init__(self, channel: Any) -> None:
        for name in UNARY_UNARY:
            setattr(self, name, channel.unary_unary(SERVICE + name, request_serializer=None,
                                                    response_deserializer=None))
        for name in UNARY_STREAM:
            setattr(self, name, channel.unary_stream(SERVICE + name, request_serializer=None,
                                                     response_deserializer=None))
        for name in STREAM_UNARY:
            setattr(self, name, channel.stream_unary(SERVICE + name, request_serializer=None,
                                                     response_deserializer=None))
