"""Decodes the OTLP bytes our encoder writes with Google's own protobuf runtime (Debian's
python3-protobuf) and classes that Debian's protoc generates from the official OTLP .proto
files. The .proto files are not copied into this repository: they come, at test time, from the
pinned npm package @opentelemetry/otlp-grpc-exporter-base@0.38.0 (see package.json), whose
build/protos directory holds opentelemetry-proto as published by the OpenTelemetry project.

Environment: OTLP_FIXTURE (the otlp_fixture program), OTLP_PROTOS (that build/protos dir).
"""

import os
import struct
import subprocess
import sys
import tempfile
import unittest

FIXTURE = os.environ.get("OTLP_FIXTURE", "")
PROTOS = os.environ.get("OTLP_PROTOS", "")
PROTO_FILES = [
    "opentelemetry/proto/common/v1/common.proto",
    "opentelemetry/proto/resource/v1/resource.proto",
    "opentelemetry/proto/trace/v1/trace.proto",
    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
]


def setUpModule():
    global trace_service_pb2, trace_pb2, work, request_bytes, request
    for name in PROTO_FILES:
        path = os.path.join(PROTOS, name)
        if not os.path.isfile(path):
            raise RuntimeError(f"official proto {path} missing: run npm ci in tests/otlp (make deps)")
    work = tempfile.TemporaryDirectory()
    subprocess.run(["protoc", f"-I{PROTOS}", f"--python_out={work.name}", *PROTO_FILES], check=True)
    sys.path.insert(0, work.name)
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as service
    from opentelemetry.proto.trace.v1 import trace_pb2 as trace
    trace_service_pb2, trace_pb2 = service, trace
    out = os.path.join(work.name, "request.bin")
    subprocess.run([FIXTURE, "request", out], check=True)
    with open(out, "rb") as f:
        request_bytes = f.read()
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(request_bytes)


def tearDownModule():
    work.cleanup()


def any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind is None:
        return "<unset>"
    return getattr(value, kind)


def attributes(key_values):
    return [(kv.key, any_value(kv.value)) for kv in key_values]


def kinds(key_values):
    return {kv.key: kv.value.WhichOneof("value") for kv in key_values}


class DecodedRequest(unittest.TestCase):
    def test_no_unknown_fields_and_canonical_encoding(self):
        # Fields under wrong numbers or wire types would land in unknown fields and vanish here;
        # re-serialising must then give back exactly our bytes.
        copy = trace_service_pb2.ExportTraceServiceRequest()
        copy.ParseFromString(request_bytes)
        copy.DiscardUnknownFields()
        self.assertEqual(copy.SerializeToString(deterministic=True), request_bytes)

    def test_resource(self):
        self.assertEqual(len(request.resource_spans), 1)
        resource = request.resource_spans[0].resource
        values = dict(attributes(resource.attributes))
        self.assertEqual(values["service.name"], "sparktrace")
        self.assertEqual(values["service.version"], "0.1.0-test")
        self.assertEqual(values["k8s.pod.name"], "pod-1")
        self.assertEqual(values["team"], "data eng")
        self.assertRegex(values["service.instance.id"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        types = kinds(resource.attributes)
        self.assertEqual(types["process.pid"], "int_value")
        self.assertGreater(values["process.pid"], 0)
        self.assertEqual(types["host.name"], "string_value")

    def test_scope(self):
        scope_spans = request.resource_spans[0].scope_spans
        self.assertEqual(len(scope_spans), 1)
        self.assertEqual(scope_spans[0].scope.name, "sparktrace")
        self.assertEqual(scope_spans[0].scope.version, "0.1.0-test")
        self.assertEqual([s.name for s in scope_spans[0].spans], ["spark.execute_plan", "root", "ok"])

    def test_full_span(self):
        span = request.resource_spans[0].scope_spans[0].spans[0]
        self.assertEqual(span.trace_id, bytes(range(0x01, 0x11)))
        self.assertEqual(span.span_id, bytes(range(0x11, 0x19)))
        self.assertEqual(span.parent_span_id, bytes(range(0x21, 0x29)))
        self.assertEqual(span.trace_state, "congo=t61rcWkgMzE")
        self.assertEqual(span.kind, trace_pb2.Span.SPAN_KIND_SERVER)
        self.assertEqual(span.start_time_unix_nano, 1700000000123456789)
        self.assertEqual(span.end_time_unix_nano, 1700000001987654321)
        self.assertEqual(attributes(span.attributes), [
            ("airflow.dag_id", "daily_etl"),
            ("airflow.try_number", 3),
            ("spark.rows", -9007199254740993),
            ("ratio", 0.125),
            ("cached", False),
            ("tables", ["sales", "", "ünïcode"]),
            ("empty", ""),
        ])
        self.assertEqual(kinds(span.attributes), {
            "airflow.dag_id": "string_value", "airflow.try_number": "int_value", "spark.rows": "int_value",
            "ratio": "double_value", "cached": "bool_value", "tables": "array_value", "empty": "string_value",
        })
        self.assertEqual(len(span.events), 2)
        self.assertEqual(span.events[0].name, "exception")
        self.assertEqual(span.events[0].time_unix_nano, 1700000000500000000)
        self.assertEqual(attributes(span.events[0].attributes),
                         [("exception.type", "ValueError"), ("exception.message", "bad ✓")])
        self.assertEqual(span.events[1].name, "checkpoint")
        self.assertEqual(span.events[1].time_unix_nano, 0)
        self.assertEqual(len(span.events[1].attributes), 0)
        self.assertEqual(span.status.code, trace_pb2.Status.STATUS_CODE_ERROR)
        self.assertEqual(span.status.message, "task failed")
        self.assertEqual(len(span.links), 0)
        self.assertEqual(span.dropped_attributes_count, 0)

    def test_root_and_ok_spans(self):
        root, ok = request.resource_spans[0].scope_spans[0].spans[1:]
        self.assertEqual(root.trace_id, bytes(range(0x01, 0x11)))
        self.assertEqual(root.span_id, bytes(range(0x31, 0x39)))
        self.assertEqual(root.parent_span_id, b"")  # absent, not eight zero bytes
        self.assertEqual(root.kind, trace_pb2.Span.SPAN_KIND_CLIENT)
        self.assertEqual((root.start_time_unix_nano, root.end_time_unix_nano), (1, 2))
        self.assertFalse(root.HasField("status"))
        self.assertEqual(ok.parent_span_id, bytes(range(0x11, 0x19)))
        self.assertEqual(ok.kind, trace_pb2.Span.SPAN_KIND_INTERNAL)
        self.assertEqual(ok.status.code, trace_pb2.Status.STATUS_CODE_OK)
        self.assertEqual(ok.status.message, "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
