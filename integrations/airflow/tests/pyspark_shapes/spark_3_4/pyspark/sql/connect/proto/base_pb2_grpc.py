"""Stand-in for pyspark.sql.connect.proto.base_pb2_grpc: the stub bound as ``_sparktrace_shapes_pb2_grpc``."""

from _sparktrace_shapes_pb2_grpc import *  # noqa: F401,F403
