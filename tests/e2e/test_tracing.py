"""Operation tracing, end to end, checked against docs/tracing.md.

The proxy runs in front of `sparktrace sim` (or the recording upstream peer, where what reached
the upstream matters) with `--store <tmp>/traces.db --span-batch-delay 50ms`. Spans are read back
with `sparktrace traces show --json` (the store is read while the proxy writes: tests poll it with
a bounded wait, or stop the proxy with SIGTERM, which exports every queue, and read it after).
OTLP is received by tiny collectors written here (gRPC generic handler; http.server) and decoded
with classes protoc generates from the official OTLP .proto files (tests/otlp/node_modules, as in
tests/otlp/decode_python.py), never with sparktrace's own code.
"""

import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid
from collections import Counter
from concurrent import futures
from pathlib import Path

import grpc

import harness
from harness import new_id, run_cli, wait_until
from promtext import Metrics
from test_sim import Sim, load_stubs

HERE = Path(__file__).resolve().parent
CALL_TIMEOUT = 20  # seconds, every RPC
SPAN_WAIT = 15  # seconds, for spans to reach the store or a collector
SERVICE = "spark.connect.SparkConnectService"
EXECUTE, REATTACH, RELEASE = f"{SERVICE}/ExecutePlan", f"{SERVICE}/ReattachExecute", f"{SERVICE}/ReleaseExecute"
INTERRUPT, CONFIG = f"{SERVICE}/Interrupt", f"{SERVICE}/Config"
OPERATION = "spark_connect.operation"
SEPARATE_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
TRACEPARENT_RE = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")

OTLP_PROTOS = HERE.parent / "otlp" / "node_modules" / "@opentelemetry" / "otlp-grpc-exporter-base" / "build" / "protos"
OTLP_PROTO_FILES = [
    "opentelemetry/proto/common/v1/common.proto",
    "opentelemetry/proto/resource/v1/resource.proto",
    "opentelemetry/proto/trace/v1/trace.proto",
    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
]
OTLP_EXPORT_PATH = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

PB = PB_GRPC = SIM = None
_OTLP = None  # (trace_service_pb2, trace_pb2, temp dir)


def setUpModule():
    global PB, PB_GRPC, SIM
    if harness.DIRECT:
        return  # every test here needs the proxy
    PB, PB_GRPC = load_stubs()
    # Batches of 100 bytes by default; a reattachable stream is cut after 2000 bytes, so only the
    # test that asks for 1000-byte batches (x-sim-batch-bytes) sees cuts.
    SIM = Sim("--batch-bytes", "100", "--stream-cut-bytes", "2000")
    unittest.addModuleCleanup(SIM.stop)


def otlp_classes():
    """(trace_service_pb2, trace_pb2) compiled by protoc from the official OTLP protos."""
    global _OTLP
    if _OTLP is None:
        for name in OTLP_PROTO_FILES:
            if not (OTLP_PROTOS / name).is_file():
                raise AssertionError(f"official OTLP proto {OTLP_PROTOS / name} missing: "
                                     "run npm ci in tests/otlp (make deps)")
        work = tempfile.mkdtemp(prefix="sparktrace-otlp-stubs-")
        unittest.addModuleCleanup(shutil.rmtree, work, ignore_errors=True)
        subprocess.run(["protoc", f"-I{OTLP_PROTOS}", f"--python_out={work}", *OTLP_PROTO_FILES],
                       check=True, timeout=60)
        sys.path.insert(0, work)
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2
        _OTLP = (trace_service_pb2, trace_pb2)
    return _OTLP


# --- ids and headers --------------------------------------------------------------------------
def random_hex(nbytes):
    value = os.urandom(nbytes).hex()
    return value if int(value, 16) else random_hex(nbytes)


def client_context(sampled=True):
    """(trace id, client span id, traceparent header)."""
    trace_id, span_id = "ab" + random_hex(15), random_hex(8)  # 'ab': upper-casing changes it
    return trace_id, span_id, f"00-{trace_id}-{span_id}-{'01' if sampled else '00'}"


def airflow_attempt_digest(dag_id, task_id, run_id="", try_number=1, map_index=-1):
    """docs/tracing.md + tracing/airflow_identity.cc, independently: SHA-256 over
    "airflow-task-attempt/v1\\n", then "<len>:<field>\\n" for dag, task and run id, then
    "<try>\\n<map index>\\n"."""
    def prefixed(text):
        data = text.encode()
        return str(len(data)).encode() + b":" + data + b"\n"

    key = (b"airflow-task-attempt/v1\n" + prefixed(dag_id) + prefixed(task_id) + prefixed(run_id)
           + f"{try_number}\n{map_index}\n".encode())
    return hashlib.sha256(key).digest()


def nonzero_hex(id_bytes):
    """An all-zero id gets a last byte of 1, as the proxy's derived ids do."""
    id_bytes = bytearray(id_bytes)
    if not any(id_bytes):
        id_bytes[-1] = 1
    return id_bytes.hex()


def airflow_trace_id(dag_id, task_id, run_id="", try_number=1, map_index=-1):
    """The first 16 bytes of the attempt's digest (airflow_attempt_digest)."""
    return nonzero_hex(airflow_attempt_digest(dag_id, task_id, run_id, try_number, map_index)[:16])


# --- the store, read through the CLI -----------------------------------------------------------
class Trace:
    """One `traces show --json` answer."""

    def __init__(self, doc):
        self.doc = doc
        self.trace_id = doc["trace_id"]
        self.spans = doc["spans"]

    def named(self, name):
        return [s for s in self.spans if s["name"] == name]

    def one(self, name):
        found = self.named(name)
        if len(found) != 1:
            raise AssertionError(f"{len(found)} spans named {name}, want 1: {self.summary()}")
        return found[0]

    def children(self, span):
        return [s for s in self.spans if s["parent_span_id"] == span["span_id"]]

    def counts(self):
        return Counter(s["name"] for s in self.spans)

    def has(self, **want):
        """True when at least want[name] spans of each name exist (names with '/' -> '__')."""
        counts = self.counts()
        return all(counts[n] >= c for n, c in _names(want).items())

    def summary(self):
        return json.dumps([{k: s[k] for k in ("name", "span_id", "parent_span_id", "attributes")}
                           for s in self.spans], indent=1)[:6000]


def _names(want):
    aliases = {"op": OPERATION, "execute": EXECUTE, "reattach": REATTACH, "release": RELEASE,
               "interrupt": INTERRUPT, "config": CONFIG}
    return {aliases.get(k, k): v for k, v in want.items()}


class Store:
    def __init__(self, path):
        self.path = str(path)

    def cli(self, *args):
        return run_cli(["traces", *args, "--store", self.path])

    def show(self, trace_id=None, operation=None):
        """The trace, or None while it is not (yet) there."""
        args = [trace_id] if trace_id else ["--operation", operation]
        result = self.cli("show", *args, "--json")
        if result.returncode != 0:
            return None
        doc = json.loads(result.stdout)
        return Trace(doc) if doc.get("spans") else None

    def wait(self, trace_id=None, operation=None, timeout=SPAN_WAIT, **want):
        """Poll until the trace holds at least the wanted spans (see Trace.has)."""
        found = {}

        def ready():
            trace = self.show(trace_id, operation)
            found["last"] = trace
            return trace is not None and trace.has(**want)

        try:
            wait_until(ready, timeout, interval=0.1,
                       message=f"trace {trace_id or 'of operation ' + operation} with {_names(want)}")
        except AssertionError as e:
            last = found.get("last")
            raise AssertionError(f"{e}; last seen: {last.summary() if last else None}") from None
        return found["last"]

    def list(self, *args):
        """The task attempts `traces list` shows (one row per attempt, or per trace without identity)."""
        result = self.cli("list", "--limit", "0", "--json", *args)
        if result.returncode != 0:
            raise AssertionError(f"traces list failed: {result.stderr}")
        return json.loads(result.stdout)["attempts"]

    def trace_ids(self, *args):
        """Every trace id of the listed attempts, each once, in listing order."""
        return list(dict.fromkeys(t for attempt in self.list(*args) for t in attempt["trace_ids"]))


# --- OTLP collectors ---------------------------------------------------------------------------
class GrpcCollector:
    """OTLP/gRPC receiver: records the raw bytes and metadata of every Export call and answers an
    empty ExportTraceServiceResponse (zero bytes)."""

    def __init__(self):
        self.requests = []  # (bytes, metadata list)
        self.lock = threading.Lock()
        outer = self

        class Handler(grpc.GenericRpcHandler):
            def service(self, details):
                if details.method != OTLP_EXPORT_PATH:
                    return None
                return grpc.unary_unary_rpc_method_handler(outer._export)

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[Handler()])
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.address = f"127.0.0.1:{self.port}"

    def _export(self, request, context):
        with self.lock:
            self.requests.append((request, list(context.invocation_metadata())))
        return b""

    def bodies(self):
        with self.lock:
            return [r for r, _ in self.requests]

    def stop(self):
        self.server.stop(0).wait(10)


class HttpCollector:
    """OTLP/HTTP receiver: records path, headers and body of every POST, answers 200 with an
    empty protobuf body."""

    def __init__(self):
        self.requests = []  # (path, headers dict lower-case, body)
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.lock:
                    outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.address = f"127.0.0.1:{self.server.server_address[1]}"

    def bodies(self):
        with self.lock:
            return [body for _, _, body in self.requests]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def decode_otlp(bodies):
    """Every span in the Export requests, as (span, resource_spans) pairs."""
    service_pb2, _ = otlp_classes()
    spans = []
    for body in bodies:
        request = service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                spans.extend((span, resource_spans) for span in scope_spans.spans)
    return spans


def otlp_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [otlp_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def otlp_attributes(key_values):
    return {kv.key: otlp_value(kv.value) for kv in key_values}


# --- the test base -----------------------------------------------------------------------------
class TracingCase(unittest.TestCase):
    maxDiff = 4000

    def setUp(self):
        self.session_id = str(uuid.uuid4())
        self.user = PB.UserContext(user_id="alice")
        self.tmp = tempfile.TemporaryDirectory(prefix="sparktrace-tracing-")
        self.addCleanup(self.tmp.cleanup)  # runs after the proxy (registered later) is closed
        self.store = Store(Path(self.tmp.name) / "traces.db")

    def start_proxy(self, *args, upstream=None, store=True):
        argv = ["--span-batch-delay", "50ms"]
        if store:
            argv += ["--store", self.store.path]
        return harness.start_proxy(self, upstream or SIM.address, *argv, *args)

    def stub(self, proxy, separate=False):
        ch = harness.open_channel(self, proxy.grpc_address, options=SEPARATE_CONNECTION if separate else ())
        return PB_GRPC.SparkConnectServiceStub(ch)

    def metrics(self, proxy):
        status, _, body = proxy.admin("/metrics")
        self.assertEqual(status, 200)
        return Metrics(body)

    def stop_proxy(self, proxy):
        """SIGTERM: the proxy drains, exports every queue and exits 0."""
        proxy.expect_exit = True
        proxy.terminate()
        self.assertEqual(proxy.wait_exit(20), 0, proxy.stderr_tail())

    # Spark Connect requests
    def execute_request(self, operation_id=None, reattachable=False, tags=()):
        request = PB.ExecutePlanRequest(session_id=self.session_id, user_context=self.user, tags=list(tags),
                                        client_type="sparktrace-e2e")
        request.plan.root.sql.query = "SELECT 1"
        if operation_id:
            request.operation_id = operation_id
        if reattachable:
            request.request_options.add().reattach_options.reattachable = True
        return request

    def execute(self, stub, operation_id=None, reattachable=False, tags=(), metadata=()):
        request = self.execute_request(operation_id, reattachable, tags)
        return request, stub.ExecutePlan(request, metadata=list(metadata), timeout=CALL_TIMEOUT)

    def reattach(self, stub, operation_id, last_response_id, metadata=()):
        request = PB.ReattachExecuteRequest(session_id=self.session_id, user_context=self.user,
                                            operation_id=operation_id, last_response_id=last_response_id)
        return stub.ReattachExecute(request, metadata=list(metadata), timeout=CALL_TIMEOUT)

    def release_all(self, stub, operation_id, metadata=()):
        request = PB.ReleaseExecuteRequest(session_id=self.session_id, user_context=self.user,
                                           operation_id=operation_id)
        request.release_all.SetInParent()
        return stub.ReleaseExecute(request, metadata=list(metadata), timeout=CALL_TIMEOUT)

    def config_get(self, stub, metadata=()):
        request = PB.ConfigRequest(session_id=self.session_id, user_context=self.user)
        request.operation.get.keys.append("spark.sql.shuffle.partitions")
        return stub.Config(request, metadata=list(metadata), timeout=CALL_TIMEOUT)

    def run_query(self, stub, metadata=(), batches=3):
        """A non-reattachable ExecutePlan read to its end; checks the payload the sim sends."""
        op = str(uuid.uuid4())
        _, call = self.execute(stub, op, metadata=metadata)
        responses = list(call)
        self.assert_sim_payload(responses, op, batches)
        return op, responses

    def assert_sim_payload(self, responses, op, batches, batch_bytes=100):
        self.assertEqual([r.WhichOneof("response_type") for r in responses], ["arrow_batch"] * batches)
        for i, r in enumerate(responses):
            self.assertEqual(r.operation_id, op)
            self.assertEqual(r.arrow_batch.data, bytes([ord("a") + i % 26]) * batch_bytes)
            self.assertEqual(r.arrow_batch.row_count, max(1, batch_bytes // 16))

    # span checks
    def assert_rpc_span(self, span, method, status_code=0):
        a = span["attributes"]
        self.assertEqual(span["name"], f"{SERVICE}/{method}")
        self.assertEqual(span["kind"], "server")
        self.assertEqual(a.get("rpc.system"), "grpc")
        self.assertEqual(a.get("rpc.service"), SERVICE)
        self.assertEqual(a.get("rpc.method"), method)
        self.assertEqual(a.get("rpc.grpc.status_code"), status_code)
        self.assertEqual(a.get("spark.connect.session_id"), self.session_id)
        self.assertEqual(a.get("spark.connect.user_id"), "alice")

    def assert_ends_after_children(self, trace, parent):
        """The contract: "the span never ends before its children"."""
        for child in trace.children(parent):
            self.assertGreaterEqual(int(parent["end_time_unix_nano"]), int(child["end_time_unix_nano"]), child["name"])


def batch_totals(responses):
    batches = [r.arrow_batch for r in responses if r.WhichOneof("response_type") == "arrow_batch"]
    return sum(b.row_count for b in batches), sum(len(b.data) for b in batches), len(batches)


# --- 1, 2: the client's trace context ------------------------------------------------------------
@harness.proxy_only
class ClientContextTest(TracingCase):
    def test_client_traceparent_is_the_parent_and_tracestate_is_kept(self):
        proxy = self.start_proxy()
        stub = self.stub(proxy)
        trace_id, client_span, traceparent = client_context()
        tracestate = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
        headers = [("traceparent", traceparent), ("tracestate", tracestate)]
        config = self.config_get(stub, metadata=headers)
        op, responses = self.run_query(stub, metadata=headers)

        trace = self.store.wait(trace_id, op=1, execute=1, config=1)
        self.assertEqual(trace.trace_id, trace_id)
        self.assertEqual(len(trace.spans), 3, trace.summary())
        operation, execute, config_span = trace.one(OPERATION), trace.one(EXECUTE), trace.one(CONFIG)

        # client span -> operation -> ExecutePlan; Config is not part of an operation.
        self.assertEqual(operation["parent_span_id"], client_span)
        self.assertEqual(operation["kind"], "internal")
        self.assertEqual(execute["parent_span_id"], operation["span_id"])
        self.assertEqual(config_span["parent_span_id"], client_span)
        self.assertEqual(len({s["span_id"] for s in trace.spans} | {client_span}), 4)
        for span in trace.spans:
            self.assertEqual(span["trace_state"], tracestate, span["name"])

        self.assert_rpc_span(execute, "ExecutePlan")
        a = execute["attributes"]
        request = self.execute_request(op)
        rows, arrow_bytes, batches = batch_totals(responses)
        self.assertEqual(a.get("sparktrace.trace_origin"), "client")
        self.assertEqual(a.get("spark.connect.operation_id"), op)
        self.assertEqual(a.get("spark.connect.client_type"), "sparktrace-e2e")
        self.assertEqual(a.get("spark.connect.server_side_session_id"), responses[0].server_side_session_id)
        self.assertEqual(a.get("spark.connect.plan_kind"), "root")
        self.assertEqual(a.get("server.address"), "127.0.0.1")
        self.assertEqual(a.get("server.port"), int(proxy.grpc_address.rsplit(":", 1)[1]))
        self.assertEqual(a.get("network.peer.address"), "127.0.0.1")
        self.assertIsInstance(a.get("network.peer.port"), int)
        self.assertEqual(a.get("rpc.request.messages"), 1)
        self.assertEqual(a.get("rpc.request.bytes"), request.ByteSize())
        self.assertEqual(a.get("rpc.response.messages"), len(responses))
        self.assertEqual(a.get("rpc.response.bytes"), sum(r.ByteSize() for r in responses))
        self.assertIsInstance(a.get("rpc.time_to_first_response_ms"), float)
        self.assertEqual((a.get("spark.connect.response.rows"), a.get("spark.connect.response.bytes"),
                          a.get("spark.connect.response.batches")), (rows, arrow_bytes, batches))

        o = operation["attributes"]
        self.assertEqual(o.get("spark.connect.operation_id"), op)
        self.assertEqual(o.get("spark.connect.session_id"), self.session_id)
        self.assertEqual(o.get("spark.connect.reattachable"), False)
        self.assertEqual(o.get("spark.connect.operation.outcome"), "completed")
        self.assertEqual((o.get("spark.connect.result.rows"), o.get("spark.connect.result.arrow_bytes"),
                          o.get("spark.connect.result.batches")), (rows, arrow_bytes, batches))
        self.assertEqual(o.get("spark.connect.reattach_count"), 0)
        self.assert_ends_after_children(trace, operation)

        self.assert_rpc_span(config_span, "Config")
        self.assertEqual(config_span["attributes"].get("spark.connect.config.operation"), "get")
        self.assertEqual(config_span["attributes"].get("spark.connect.server_side_session_id"),
                         config.server_side_session_id)
        self.assertGreaterEqual(self.metrics(proxy).value("sparktrace_traced_calls_total", origin="client"), 1)

    def test_upstream_gets_the_proxy_span_as_parent(self):
        upstream = harness.start_upstream(self)
        proxy = self.start_proxy(upstream=upstream.address)
        ch = harness.open_channel(self, proxy.grpc_address)
        path = f"/{SERVICE}/Unary"  # a Spark Connect service path the recording peer answers
        trace_id, client_span, traceparent = client_context()
        tracestate, baggage = "vendor=opaque-1,other@sys=x", "userId=alice,isProduction=false"
        tid = new_id()
        self.assertEqual(ch.unary_unary(path)(b"payload", timeout=CALL_TIMEOUT, metadata=[
            ("x-test-id", tid), ("traceparent", traceparent), ("tracestate", tracestate), ("baggage", baggage)]),
            b"payload")
        seen = upstream.record(tid)
        self.assertEqual(len(seen.md("traceparent")), 1, seen.md("traceparent"))
        match = TRACEPARENT_RE.match(seen.md1("traceparent"))
        self.assertIsNotNone(match, seen.md1("traceparent"))
        self.assertEqual(match.group(1), trace_id)
        self.assertNotEqual(match.group(2), client_span)
        self.assertEqual(match.group(3), "01")
        self.assertEqual(seen.md("tracestate"), [tracestate])
        self.assertEqual(seen.md("baggage"), [baggage])
        trace = self.store.wait(trace_id, **{f"{SERVICE}/Unary": 1})
        span = trace.one(f"{SERVICE}/Unary")
        self.assertEqual(span["span_id"], match.group(2), "upstream's parent is not the proxy's RPC span")
        self.assertEqual(span["parent_span_id"], client_span)

        # Without a client context the upstream still gets exactly one traceparent: the proxy's
        # new trace, under its RPC span.
        tid = new_id()
        ch.unary_unary(path)(b"", metadata=[("x-test-id", tid)], timeout=CALL_TIMEOUT)
        seen = upstream.record(tid)
        self.assertEqual(len(seen.md("traceparent")), 1, seen.md("traceparent"))
        match = TRACEPARENT_RE.match(seen.md1("traceparent"))
        self.assertIsNotNone(match, seen.md1("traceparent"))
        self.assertEqual(seen.md("tracestate"), [])
        trace = self.store.wait(match.group(1), **{f"{SERVICE}/Unary": 1})
        span = trace.one(f"{SERVICE}/Unary")
        self.assertEqual(span["span_id"], match.group(2))
        self.assertIsNone(span["parent_span_id"])
        self.assertEqual(span["attributes"].get("sparktrace.trace_origin"), "new")

    def test_invalid_tracestate_is_dropped_and_counted(self):
        upstream = harness.start_upstream(self)
        proxy = self.start_proxy(upstream=upstream.address)
        ch = harness.open_channel(self, proxy.grpc_address)
        trace_id, client_span, traceparent = client_context()
        tid = new_id()
        ch.unary_unary(f"/{SERVICE}/Unary")(b"", timeout=CALL_TIMEOUT, metadata=[
            ("x-test-id", tid), ("traceparent", traceparent), ("tracestate", "Upper=case-key-is-invalid")])
        seen = upstream.record(tid)
        self.assertEqual(seen.md("tracestate"), [])
        match = TRACEPARENT_RE.match(seen.md1("traceparent", ""))
        self.assertIsNotNone(match, seen.md("traceparent"))
        self.assertEqual(match.group(1), trace_id, "the traceparent must be kept")
        span = self.store.wait(trace_id, **{f"{SERVICE}/Unary": 1}).one(f"{SERVICE}/Unary")
        self.assertEqual(span["parent_span_id"], client_span)
        self.assertEqual(span["trace_state"], "")
        self.assertEqual(self.metrics(proxy).value("sparktrace_invalid_tracestate_total", reason="bad_key"), 1)

    def test_malformed_traceparent_is_ignored_and_counted(self):
        proxy = self.start_proxy()
        stub = self.stub(proxy)
        trace_id, span_id, _ = client_context()
        cases = [
            (f"00-{trace_id.upper()}-{span_id}-01", "upper_case_hex"),
            (f"00-{'0' * 32}-{span_id}-01", "zero_trace_id"),
            (f"00-{trace_id}-{'0' * 16}-01", "zero_parent_id"),
            ("00-abc-def-01", "bad_length"),
            (f"ff-{trace_id}-{span_id}-01", "forbidden_version"),
        ]
        for header, reason in cases:
            with self.subTest(reason=reason):
                before = self.metrics(proxy).value("sparktrace_invalid_traceparent_total", reason=reason)
                op, _ = self.run_query(stub, metadata=[("traceparent", header)])  # call unaffected
                trace = self.store.wait(operation=op, op=1, execute=1)
                self.assertNotEqual(trace.trace_id, trace_id)
                self.assertNotEqual(trace.trace_id, "0" * 32)
                operation = trace.one(OPERATION)
                self.assertIsNone(operation["parent_span_id"], "a new trace starts at the operation")
                self.assertEqual(trace.one(EXECUTE)["attributes"].get("sparktrace.trace_origin"), "new")
                self.assertEqual(self.metrics(proxy).value("sparktrace_invalid_traceparent_total", reason=reason),
                                 before + 1)
        self.assertIsNone(self.store.show(trace_id), "the malformed header's trace id was used")


# --- 3, 4: operations across calls ----------------------------------------------------------------
@harness.proxy_only
class OperationTest(TracingCase):
    def test_execute_two_reattaches_and_release_on_separate_connections_form_one_operation(self):
        proxy = self.start_proxy()
        trace_id, client_span, traceparent = client_context()
        op = str(uuid.uuid4())
        # 5 batches of 1000 bytes with cuts after 2000 bytes: streams of 2, 2 and 1 + result_complete.
        _, call = self.execute(self.stub(proxy, separate=True), op, reattachable=True, metadata=[
            ("traceparent", traceparent), ("x-sim-batches", "5"), ("x-sim-batch-bytes", "1000")])
        streams = [list(call)]
        resumed_after = []
        while streams[-1][-1].WhichOneof("response_type") != "result_complete":
            self.assertLess(len(streams), 5, "no result_complete after 5 streams")
            resumed_after.append(streams[-1][-1].response_id)
            # Each on its own connection, without a traceparent: only the operation id links it.
            streams.append(list(self.reattach(self.stub(proxy, separate=True), op, resumed_after[-1])))
        self.assertEqual(len(resumed_after), 2, "the sim was expected to cut the stream twice")
        self.release_all(self.stub(proxy, separate=True), op)
        responses = [r for stream in streams for r in stream]
        rows, arrow_bytes, batches = batch_totals(responses)
        self.assertEqual((arrow_bytes, batches), (5000, 5))

        trace = self.store.wait(trace_id, op=1, execute=1, reattach=2, release=1)
        operation = trace.one(OPERATION)
        self.assertEqual(operation["parent_span_id"], client_span)
        children = sorted(trace.children(operation), key=lambda s: int(s["start_time_unix_nano"]))
        self.assertEqual([s["name"] for s in children], [EXECUTE, REATTACH, REATTACH, RELEASE], trace.summary())
        self.assertEqual(len(trace.spans), 5, trace.summary())
        ports = {s["attributes"].get("network.peer.port") for s in children}
        self.assertEqual(len(ports), 4, f"calls did not come on 4 connections: {ports}")
        for span, method in zip(children, ["ExecutePlan", "ReattachExecute", "ReattachExecute", "ReleaseExecute"]):
            self.assert_rpc_span(span, method)
            self.assertEqual(span["attributes"].get("spark.connect.operation_id"), op)
        for span, stream, last in zip(children[1:3], streams[1:], resumed_after):
            self.assertEqual(span["attributes"].get("spark.connect.reattach.last_response_id"), last)
            self.assertEqual(span["attributes"].get("spark.connect.response.batches"), batch_totals(stream)[2])
        self.assertEqual(children[0]["attributes"].get("spark.connect.response.batches"), batch_totals(streams[0])[2])
        self.assertEqual(children[3]["attributes"].get("spark.connect.release"), "all")

        o = operation["attributes"]
        self.assertEqual(o.get("spark.connect.operation.outcome"), "completed")
        self.assertEqual(o.get("spark.connect.reattachable"), True)
        self.assertEqual(o.get("spark.connect.reattach_count"), 2)
        self.assertEqual(o.get("spark.connect.result.rows"), rows)
        self.assertEqual(o.get("spark.connect.result.arrow_bytes"), arrow_bytes)
        self.assertEqual(o.get("spark.connect.result.batches"), batches)
        self.assertIsInstance(o.get("spark.connect.time_to_first_batch_ms"), float)
        events = Counter(e["name"] for e in operation["events"])
        for name in ("first_response", "first_batch", "result_complete", "release"):
            self.assertEqual(events[name], 1, (name, events))
        self.assertEqual(events["stream_cut"], 2, events)
        self.assertEqual(events["reattach"], 2, events)
        reattach_events = [e for e in operation["events"] if e["name"] == "reattach"]
        self.assertEqual([e["attributes"].get("spark.connect.reattach.last_response_id") for e in reattach_events],
                         resumed_after)
        self.assert_ends_after_children(trace, operation)
        self.assertGreaterEqual(self.metrics(proxy).value("sparktrace_operations_total", outcome="completed"), 1)

    def interrupt_running_operation(self, by_tag):
        proxy = self.start_proxy()
        trace_id, client_span, traceparent = client_context()
        op, tag = str(uuid.uuid4()), new_id("tag")
        _, call = self.execute(self.stub(proxy, separate=True), op, reattachable=True, tags=[tag], metadata=[
            ("traceparent", traceparent), ("x-sim-batches", "5"), ("x-sim-batch-interval-ms", "60000")])
        self.assertEqual(next(call).WhichOneof("response_type"), "arrow_batch")
        request = PB.InterruptRequest(session_id=self.session_id, user_context=self.user)
        if by_tag:
            request.interrupt_type = PB.InterruptRequest.INTERRUPT_TYPE_TAG
            request.operation_tag = tag
        else:
            request.interrupt_type = PB.InterruptRequest.INTERRUPT_TYPE_OPERATION_ID
            request.operation_id = op
        # Another connection, no traceparent.
        reply = self.stub(proxy, separate=True).Interrupt(request, timeout=CALL_TIMEOUT)
        self.assertEqual(list(reply.interrupted_ids), [op])
        with self.assertRaises(grpc.RpcError) as raised:
            list(call)
        self.assertIn("OPERATION_CANCELED", raised.exception.details())

        trace = self.store.wait(trace_id, op=1, execute=1, interrupt=1)
        operation, interrupt = trace.one(OPERATION), trace.one(INTERRUPT)
        self.assertEqual(operation["parent_span_id"], client_span)
        self.assertEqual(interrupt["parent_span_id"], operation["span_id"])
        execute = trace.one(EXECUTE)
        self.assertEqual(execute["parent_span_id"], operation["span_id"])
        self.assert_rpc_span(execute, "ExecutePlan", status_code=grpc.StatusCode.INTERNAL.value[0])
        self.assertEqual(execute["status"]["code"], "error")
        self.assertIn("OPERATION_CANCELED", execute["status"]["message"])
        self.assert_rpc_span(interrupt, "Interrupt")
        a = interrupt["attributes"]
        self.assertIn("spark.connect.interrupt.type", a)
        self.assertEqual(a.get("spark.connect.interrupt.target"), tag if by_tag else op)
        self.assertIn(op, a.get("spark.connect.interrupted_ids", []))
        self.assertEqual(operation["attributes"].get("spark.connect.operation.outcome"), "interrupted")
        self.assertEqual(operation["attributes"].get("spark.connect.tags"), [tag])
        self.assertIn("interrupt", [e["name"] for e in operation["events"]])
        self.assert_ends_after_children(trace, operation)

    def test_a_release_after_a_failed_execution_is_a_child_of_the_failed_operation(self):
        """What PySpark does after an ExecutePlan fails: ReleaseExecute(release_all) for its id, on
        its own call. The failure ended the operation first; the release is still its child."""
        proxy = self.start_proxy()
        trace_id, client_span, traceparent = client_context()
        op = str(uuid.uuid4())
        _, call = self.execute(self.stub(proxy), op, reattachable=True, metadata=[
            ("traceparent", traceparent), ("x-sim-fail", "13"), ("x-sim-fail-after", "1")])
        with self.assertRaises(grpc.RpcError) as failed:
            list(call)
        self.assertEqual(failed.exception.code(), grpc.StatusCode.INTERNAL)
        failed_operation = self.store.wait(trace_id, op=1, execute=1).one(OPERATION)
        self.assertEqual(failed_operation["attributes"].get("spark.connect.operation.outcome"), "failed")

        # PySpark's release is a call of its own: another client span in the same trace.
        release_traceparent = f"00-{trace_id}-{client_context()[1]}-01"
        try:
            self.release_all(self.stub(proxy, separate=True), op, metadata=[("traceparent", release_traceparent)])
        except grpc.RpcError:
            pass  # the server may no longer know the operation; the call is traced all the same
        trace = self.store.wait(trace_id, op=1, execute=1, release=1)
        operation = trace.one(OPERATION)
        release = trace.one(RELEASE)
        self.assertEqual(release["parent_span_id"], operation["span_id"], trace.summary())
        self.assertIs(release["attributes"].get("spark.connect.operation.ended_before_call"), True)
        self.assertEqual(operation["parent_span_id"], client_span)

    def test_interrupt_by_operation_id(self):
        self.interrupt_running_operation(by_tag=False)

    def test_interrupt_by_tag(self):
        self.interrupt_running_operation(by_tag=True)


# --- 5: Airflow --------------------------------------------------------------------------------
@harness.proxy_only
class AirflowTest(TracingCase):
    def airflow_headers(self, dag, task, run, try_number):
        return [("x-airflow-dag-id", dag), ("x-airflow-task-id", task), ("x-airflow-run-id", run),
                ("x-airflow-try-number", try_number)]

    def test_task_attempt_gives_a_deterministic_trace_across_connections(self):
        proxy = self.start_proxy()
        dag, task, run = new_id("etl"), "load_sales", "manual__2024-01-01T00:00:00+00:00"
        headers = self.airflow_headers(dag, task, run, "2")
        expected = airflow_trace_id(dag, task, run, 2, -1)
        self.config_get(self.stub(proxy, separate=True), metadata=headers)
        op, _ = self.run_query(self.stub(proxy, separate=True), metadata=headers)
        other_op, _ = self.run_query(self.stub(proxy, separate=True),
                                     metadata=self.airflow_headers(dag, task, run, "3"))

        trace = self.store.wait(expected, op=1, execute=1, config=1)
        self.assertEqual(trace.trace_id, expected)
        self.assertEqual(len(trace.spans), 3, trace.summary())
        operation = trace.one(OPERATION)
        self.assertEqual(operation["attributes"].get("spark.connect.operation_id"), op)
        # No common root: the operation and the Config call are both roots.
        self.assertIsNone(operation["parent_span_id"])
        self.assertIsNone(trace.one(CONFIG)["parent_span_id"])
        self.assertEqual(trace.one(EXECUTE)["parent_span_id"], operation["span_id"])
        for span in trace.spans:
            a = span["attributes"]
            self.assertEqual((a.get("airflow.dag_id"), a.get("airflow.task_id"), a.get("airflow.run_id"),
                              a.get("airflow.try_number"), a.get("airflow.map_index")),
                             (dag, task, run, 2, -1), span["name"])
        for name in (EXECUTE, CONFIG):
            self.assertEqual(trace.one(name)["attributes"].get("sparktrace.trace_origin"), "airflow")

        # Another try is another attempt: its own (equally derived) trace.
        other = self.store.wait(operation=other_op, op=1, execute=1)
        self.assertEqual(other.trace_id, airflow_trace_id(dag, task, run, 3, -1))
        self.assertGreaterEqual(self.metrics(proxy).value("sparktrace_traced_calls_total", origin="airflow"), 1)

    def test_a_pooled_session_follows_each_calls_identity(self):
        """Several Airflow tasks sharing one Spark Connect session (one channel, one session id): each
        call's spans go to the attempt its own headers name, not to the session's first caller."""
        proxy = self.start_proxy()
        stub = self.stub(proxy)  # one connection, one session (self.session_id) for every call
        run = "scheduled__2026-11-25T00:00:00+00:00"
        first, second = new_id("extract"), new_id("load")
        op_first, _ = self.run_query(stub, metadata=self.airflow_headers("pool_dag", first, run, "1"))
        op_second, _ = self.run_query(stub, metadata=self.airflow_headers("pool_dag", second, run, "1"))
        self.config_get(stub, metadata=self.airflow_headers("pool_dag", first, run, "1"))
        client_trace, client_span, traceparent = client_context()
        op_third, _ = self.run_query(stub, metadata=self.airflow_headers("pool_dag", second, run, "2")
                                     + [("traceparent", traceparent)])

        trace_first = self.store.wait(airflow_trace_id("pool_dag", first, run, 1), op=1, execute=1, config=1)
        trace_second = self.store.wait(airflow_trace_id("pool_dag", second, run, 1), op=1, execute=1)
        self.assertEqual(trace_first.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op_first)
        self.assertEqual(trace_second.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op_second)
        for trace, task in ((trace_first, first), (trace_second, second)):
            for span in trace.spans:
                self.assertEqual(span["attributes"].get("airflow.task_id"), task, span["name"])
                self.assertEqual(span["attributes"].get("spark.connect.session_id"), self.session_id, span["name"])
        # With a traceparent (the Airflow plugin sends one) the trace is the client's, under its span;
        # the identity still names the attempt.
        third = self.store.wait(operation=op_third, op=1, execute=1)
        self.assertEqual(third.trace_id, client_trace)
        operation = third.one(OPERATION)
        self.assertEqual(operation["parent_span_id"], client_span)
        self.assertEqual((operation["attributes"].get("airflow.task_id"), operation["attributes"].get("airflow.try_number")),
                         (second, 2))

    def test_map_index_and_default_try_number(self):
        proxy = self.start_proxy()
        dag, task = new_id("dag"), "mapped"
        op, _ = self.run_query(self.stub(proxy), metadata=[("x-airflow-dag-id", dag), ("x-airflow-task-id", task),
                                                            ("x-airflow-map-index", "7")])
        trace = self.store.wait(airflow_trace_id(dag, task, "", 1, 7), op=1, execute=1)
        a = trace.one(OPERATION)["attributes"]
        self.assertEqual((a.get("airflow.dag_id"), a.get("airflow.task_id"), a.get("airflow.try_number"),
                          a.get("airflow.map_index"), a.get("spark.connect.operation_id")), (dag, task, 1, 7, op))


# --- 7, 8: export -----------------------------------------------------------------------------
@harness.proxy_only
class ExportTest(TracingCase):
    def assert_otlp_matches_store(self, trace, otlp_spans):
        _, trace_pb2 = otlp_classes()
        kinds = {"internal": trace_pb2.Span.SPAN_KIND_INTERNAL, "server": trace_pb2.Span.SPAN_KIND_SERVER}
        statuses = {"unset": trace_pb2.Status.STATUS_CODE_UNSET, "ok": trace_pb2.Status.STATUS_CODE_OK,
                    "error": trace_pb2.Status.STATUS_CODE_ERROR}
        by_id = {}
        for span, _ in otlp_spans:
            if span.trace_id == bytes.fromhex(trace.trace_id):
                self.assertNotIn(span.span_id, by_id, "span exported twice")
                by_id[span.span_id] = span
        self.assertEqual(sorted(s.hex() for s in by_id), sorted(s["span_id"] for s in trace.spans))
        for stored in trace.spans:
            with self.subTest(span=stored["name"]):
                span = by_id[bytes.fromhex(stored["span_id"])]
                self.assertEqual(span.name, stored["name"])
                self.assertEqual(span.parent_span_id.hex() or None, stored["parent_span_id"])
                self.assertEqual(span.kind, kinds[stored["kind"]])
                self.assertEqual(span.trace_state, stored["trace_state"])
                self.assertEqual(span.start_time_unix_nano, int(stored["start_time_unix_nano"]))
                self.assertEqual(span.end_time_unix_nano, int(stored["end_time_unix_nano"]))
                self.assertEqual(otlp_attributes(span.attributes), stored["attributes"])
                for kv in span.attributes:  # ints stay ints, doubles doubles
                    stored_value = stored["attributes"][kv.key]
                    kind = kv.value.WhichOneof("value")
                    if isinstance(stored_value, bool):
                        self.assertEqual(kind, "bool_value", kv.key)
                    elif isinstance(stored_value, int):
                        self.assertEqual(kind, "int_value", kv.key)
                    elif isinstance(stored_value, float):
                        self.assertEqual(kind, "double_value", kv.key)
                self.assertEqual([(e.name, e.time_unix_nano, otlp_attributes(e.attributes)) for e in span.events],
                                 [(e["name"], int(e["time_unix_nano"]), e["attributes"]) for e in stored["events"]])
                self.assertEqual(span.status.code, statuses[stored["status"]["code"]])
                self.assertEqual(span.status.message, stored["status"]["message"])

    def traced_traffic(self, proxy):
        """A client-traced ExecutePlan and Config; the complete stored trace."""
        stub = self.stub(proxy)
        trace_id, _, traceparent = client_context()
        headers = [("traceparent", traceparent), ("tracestate", "k=v")]
        self.config_get(stub, metadata=headers)
        self.run_query(stub, metadata=headers)
        return self.store.wait(trace_id, op=1, execute=1, config=1)

    def wait_otlp(self, collector, trace):
        want = {bytes.fromhex(s["span_id"]) for s in trace.spans}
        tid = bytes.fromhex(trace.trace_id)

        def arrived():
            got = {s.span_id for s, _ in decode_otlp(collector.bodies()) if s.trace_id == tid}
            return want <= got

        wait_until(arrived, SPAN_WAIT, interval=0.05, message=f"{len(want)} spans of {trace.trace_id} at the collector")
        return decode_otlp(collector.bodies())

    def assert_canonical(self, body):
        service_pb2, _ = otlp_classes()
        request = service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        request.DiscardUnknownFields()  # fields under a wrong number or wire type would vanish here
        self.assertEqual(request.SerializeToString(deterministic=True), body)

    def test_otlp_grpc_bytes_decode_to_the_stored_spans(self):
        collector = GrpcCollector()
        self.addCleanup(collector.stop)
        marker = new_id("hdr")
        proxy = self.start_proxy("--otlp-endpoint", collector.address, "--otlp-header", f"x-e2e-marker={marker}")
        trace = self.traced_traffic(proxy)
        spans = self.wait_otlp(collector, trace)
        self.assert_otlp_matches_store(trace, spans)
        for body in collector.bodies():
            self.assert_canonical(body)
        with collector.lock:
            for _, metadata in collector.requests:
                self.assertIn(("x-e2e-marker", marker), metadata)
        self.assertNotIn(marker, proxy.stderr_text(), "an --otlp-header value was logged")
        m = self.metrics(proxy)
        self.assertGreaterEqual(m.value("sparktrace_spans_exported_total", sink="otlp"), len(trace.spans))
        self.assertGreaterEqual(m.value("sparktrace_span_export_batches_total", sink="otlp", result="ok"), 1)
        self.assertEqual(m.value("sparktrace_span_export_batches_total", sink="otlp", result="error"), 0)

    def test_otlp_http_bytes_decode_to_the_stored_spans(self):
        collector = HttpCollector()
        self.addCleanup(collector.stop)
        marker = new_id("hdr")
        proxy = self.start_proxy("--otlp-protocol", "http", "--otlp-endpoint",
                                 f"http://{collector.address}/v1/traces", "--otlp-header", f"x-e2e-marker={marker}")
        trace = self.traced_traffic(proxy)
        spans = self.wait_otlp(collector, trace)
        self.assert_otlp_matches_store(trace, spans)
        with collector.lock:
            for path, headers, body in collector.requests:
                self.assertEqual(path, "/v1/traces")
                self.assertEqual(headers.get("content-type"), "application/x-protobuf")
                self.assertEqual(headers.get("x-e2e-marker"), marker)
                self.assert_canonical(body)

    def test_exporter_down_does_not_affect_calls(self):
        proxy = self.start_proxy("--otlp-endpoint", f"127.0.0.1:{harness.free_port()}")
        stub = self.stub(proxy)
        ops = [self.run_query(stub)[0] for _ in range(5)]  # payloads checked inside
        for _ in range(5):
            self.config_get(stub)
        # The store is a sink of its own: it still gets everything.
        for op in ops:
            self.store.wait(operation=op, op=1, execute=1)

        def export_failure_counted():
            m = self.metrics(proxy)
            return (m.total("sparktrace_span_export_batches_total", sink="otlp", result="error")
                    + m.total("sparktrace_spans_dropped_total", sink="otlp")) > 0

        # An export retries (with backoff) for at most 30 s before it counts as failed.
        wait_until(export_failure_counted, 40, interval=0.2, message="OTLP export failures or drops in /metrics")
        m = self.metrics(proxy)
        self.assertEqual(m.value("sparktrace_span_export_batches_total", sink="otlp", result="ok"), 0)
        self.assertEqual(m.value("sparktrace_rpc_calls_total", method=f"/{EXECUTE}", code="OK"), 5)
        self.assertEqual(m.value("sparktrace_rpc_calls_total", method=f"/{CONFIG}", code="OK"), 5)
        self.assertEqual(m.total("sparktrace_span_export_batches_total", sink="sqlite", result="error"), 0)


# --- 9: the traces command --------------------------------------------------------------------
@harness.proxy_only
class TracesCommandTest(TracingCase):
    def test_show_and_list_find_the_trace(self):
        proxy = self.start_proxy()
        dag, task, run = new_id("dag"), "extract", "scheduled__2024-05-01"
        headers = [("x-airflow-dag-id", dag), ("x-airflow-task-id", task), ("x-airflow-run-id", run)]
        op, _ = self.run_query(self.stub(proxy), metadata=headers)
        self.run_query(self.stub(proxy))  # another trace, of no DAG
        trace_id = airflow_trace_id(dag, task, run)
        self.store.wait(trace_id, op=1, execute=1)

        result = self.store.cli("show", trace_id)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith(f"trace {trace_id} "), lines[0])
        op_line = next(line for line in lines if OPERATION in line)
        execute_line = next(line for line in lines if EXECUTE in line)
        self.assertIn(f"op={op}", op_line)
        self.assertIn(f"dag={dag}", op_line)
        indent = lambda line, name: line.index(name)  # noqa: E731
        self.assertGreater(indent(execute_line, EXECUTE), indent(op_line, OPERATION), "ExecutePlan not under the operation")

        by_operation = self.store.show(operation=op)
        self.assertEqual(by_operation.trace_id, trace_id)

        result = self.store.cli("list", "--dag", dag)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(trace_id, result.stdout)
        self.assertEqual(len(result.stdout.strip().splitlines()), 2, result.stdout)  # header + one attempt
        listed = self.store.list("--dag", dag)
        self.assertEqual([(t["trace_ids"], t["dag_id"], t["task_id"], t["run_id"], t["try_number"]) for t in listed],
                         [([trace_id], dag, task, run, 1)])
        self.assertEqual(self.store.list("--dag", new_id("no-such-dag")), [])
        self.assertEqual(self.store.trace_ids("--task", task, "--run", run), [trace_id])
        self.assertEqual(self.store.trace_ids("--task", task, "--run", run, "--try", "1"), [trace_id])
        self.assertEqual(self.store.list("--task", task, "--try", "2"), [])


# --- 10: sampling -------------------------------------------------------------------------------
@harness.proxy_only
class SamplingTest(TracingCase):
    def test_ratio_zero_records_only_client_sampled_traces(self):
        proxy = self.start_proxy("--sample-ratio", "0")
        stub = self.stub(proxy)
        self.run_query(stub)  # a new trace: not sampled
        self.config_get(stub)
        self.run_query(stub, metadata=[("x-airflow-dag-id", new_id("dag")), ("x-airflow-task-id", "t")])
        unsampled, _, unsampled_header = client_context(sampled=False)
        self.run_query(stub, metadata=[("traceparent", unsampled_header)])  # the client said no
        sampled, client_span, sampled_header = client_context(sampled=True)
        op, _ = self.run_query(stub, metadata=[("traceparent", sampled_header)])
        self.config_get(stub, metadata=[("traceparent", sampled_header)])
        self.stop_proxy(proxy)  # exports every queue

        self.assertEqual(self.store.trace_ids(), [sampled])
        trace = self.store.show(sampled)
        self.assertEqual(trace.counts(), Counter({OPERATION: 1, EXECUTE: 1, CONFIG: 1}))
        self.assertEqual(trace.one(OPERATION)["parent_span_id"], client_span)
        self.assertEqual(trace.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op)


# --- 11: secrets ---------------------------------------------------------------------------------
@harness.proxy_only
class SecretsTest(TracingCase):
    def test_config_keys_and_values_never_reach_spans_or_otlp(self):
        collector = GrpcCollector()
        self.addCleanup(collector.stop)
        proxy = self.start_proxy("--otlp-endpoint", collector.address)
        stub = self.stub(proxy)
        trace_id, _, traceparent = client_context()
        key, value = f"spark.hadoop.fs.s3a.secret{uuid.uuid4().hex}", f"s3cr3t-{uuid.uuid4().hex}"
        request = PB.ConfigRequest(session_id=self.session_id, user_context=self.user)
        request.operation.set.pairs.add(key=key, value=value)
        stub.Config(request, metadata=[("traceparent", traceparent)], timeout=CALL_TIMEOUT)
        request = PB.ConfigRequest(session_id=self.session_id, user_context=self.user)
        request.operation.get_with_default.pairs.add(key=key, value=value)
        stub.Config(request, metadata=[("traceparent", traceparent)], timeout=CALL_TIMEOUT)

        trace = self.store.wait(trace_id, config=2)
        self.assertEqual(sorted(s["attributes"].get("spark.connect.config.operation") for s in trace.spans),
                         ["get_with_default", "set"])
        want = {bytes.fromhex(s["span_id"]) for s in trace.spans}
        wait_until(lambda: want <= {s.span_id for s, _ in decode_otlp(collector.bodies())}, SPAN_WAIT,
                   interval=0.05, message="Config spans at the collector")
        shown = self.store.cli("show", trace_id, "--json").stdout
        self.stop_proxy(proxy)

        places = {"traces show": shown.encode(), "otlp": b"".join(collector.bodies()),
                  "proxy stderr": proxy.stderr_text().encode()}
        # Every file the proxy wrote, the span spool's included (traces.db.spool/).
        for path in Path(self.tmp.name).rglob("*"):
            if path.is_file():
                places[str(path.relative_to(self.tmp.name))] = path.read_bytes()
        store_bytes = b"".join(data for name, data in places.items() if name.startswith("traces.db"))
        # Positive controls: the span data is there, where the secrets are looked for: the trace id in its
        # columns (16 bytes: a BLOB since the SQLite store's schema version 10), the session id in the
        # compact attributes (a UUID packs into its 16 bytes; no session_id column since schema version 8).
        self.assertIn(bytes.fromhex(trace_id), store_bytes)
        self.assertIn(uuid.UUID(self.session_id).bytes, store_bytes)
        self.assertIn(self.session_id.encode(), places["otlp"])
        for name, data in places.items():
            for secret in (key, value):
                self.assertNotIn(secret.encode(), data, f"{secret} found in {name}")


if __name__ == "__main__":
    unittest.main()
