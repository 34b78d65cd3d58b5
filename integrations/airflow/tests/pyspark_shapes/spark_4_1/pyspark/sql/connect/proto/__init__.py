"""Stand-in for pyspark.sql.connect.proto, which re-exports the messages protoc generates from Spark
Connect's .proto files: here the module the test bound as ``_sparktrace_shapes_pb2`` (the e2e tests'
stubs generated from this repository's proto/spark/connect, or tests/pyspark_shapes/fake_proto.py)."""

from _sparktrace_shapes_pb2 import *  # noqa: F401,F403
