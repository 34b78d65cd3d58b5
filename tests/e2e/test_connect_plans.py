"""Spark 4.1.1's own query plans through the proxy (shared/data/connect-plans/4.1.1).

Each NAME.proto.bin there is a `spark.connect.Relation` serialized by Spark's
PlanGenerationTestSuite (shared/data/README-thirdparty.md). Its original bytes, wrapped by hand as
ExecutePlanRequest.plan.root, make a real request body, sent once per plan through the proxy to a
recording Spark Connect stand-in. For every plan:

  (a) the upstream receives the body byte for byte (4 of the plans do not re-serialize identically
      in another protobuf runtime, so only forwarding the original bytes passes);
  (b) the proxy decoded it: its ExecutePlan span counts no undecodable message, and
      sparktrace_undecodable_messages_total stays 0 (a deliberately cut body, sent last, shows the
      counter does count);
  (c) the stored operation span names the plan kind and carries the ids the request sent.

Nothing protobuf-generated touches the bytes: the bodies are written with Spark's base.proto field
numbers, and both peers use grpcio without serializers (raw bytes in, raw bytes out).
"""

import hashlib
import json
import re
import os
import threading
import unittest
import uuid
from concurrent import futures
from pathlib import Path

import grpc

import harness
from harness import run_cli, wait_until
from peers.upstream_server import GRPC_OPTIONS
from promtext import Metrics

HERE = Path(__file__).resolve().parent
EXPECTED_PLAN_COUNT = 47  # shared/data/README-thirdparty.md: a plan that goes missing must fail
CALL_TIMEOUT = 20  # seconds, every RPC
SPAN_WAIT = 15  # seconds, for a plan's spans to reach the store
SERVICE = "spark.connect.SparkConnectService"
EXECUTE_PATH = f"/{SERVICE}/ExecutePlan"
OPERATION_SPAN = "spark_connect.operation"
EXECUTE_SPAN = f"{SERVICE}/ExecutePlan"
USER_ID = "etl"
CLIENT_TYPE = "_SPARK_CONNECT_SCALA spark/4.1.1"

# Field numbers from Spark's base.proto (also proto/spark/connect/base.proto here).
EXECUTE_SESSION_ID, EXECUTE_USER_CONTEXT, EXECUTE_PLAN = 1, 2, 3
EXECUTE_CLIENT_TYPE, EXECUTE_OPERATION_ID = 4, 6
USER_CONTEXT_USER_ID = 1
PLAN_ROOT = 1
PLAN_OP_TYPE_NAMES = {1: "root", 2: "command"}  # Plan.op_type members, named as on the spans
RESPONSE_SESSION_ID, RESPONSE_OPERATION_ID, RESPONSE_RESPONSE_ID = 1, 12, 13
RESPONSE_RESULT_COMPLETE, RESPONSE_SERVER_SIDE_SESSION_ID = 14, 15


def plans_dir():
    """$SPARKTRACE_DATA_DIR (the shared/data directory) when set, else shared/data beside the
    source tree, as the unit tests find it."""
    data = os.environ.get("SPARKTRACE_DATA_DIR") or str(HERE.parents[2] / "shared" / "data")
    return Path(data) / "connect-plans" / "4.1.1"


def names_with_suffix(directory, suffix):
    if not directory.is_dir():
        return set()
    return {p.name[:-len(suffix)] for p in directory.iterdir() if p.is_file() and p.name.endswith(suffix)}


def relation_type(name):
    """The plan's relation type as Spark's own JSON of it names it (its one top-level key besides
    "common"), in the proto's snake_case: "setOp" -> "set_op"."""
    with open(plans_dir() / f"{name}.json") as handle:
        keys = [key for key in json.load(handle) if key != "common"]
    if len(keys) != 1:
        raise AssertionError(f"{name}.json: expected one relation type, found {keys}")
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), keys[0])


def load_plans():
    """{name: the .proto.bin bytes} of every plan that also has its .json."""
    directory = plans_dir()
    names = names_with_suffix(directory, ".proto.bin") & names_with_suffix(directory, ".json")
    return {name: (directory / f"{name}.proto.bin").read_bytes() for name in sorted(names)}


# --- protobuf wire format, by hand -------------------------------------------------------------
def varint(value):
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def length_delimited(number, payload):
    """One field of wire type 2: tag, length, payload."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def execute_plan_body(session_id, operation_id, relation):
    """ExecutePlanRequest{session_id, user_context{user_id}, plan{root}, client_type,
    operation_id}, the relation copied verbatim (never re-serialized)."""
    return (length_delimited(EXECUTE_SESSION_ID, session_id)
            + length_delimited(EXECUTE_USER_CONTEXT, length_delimited(USER_CONTEXT_USER_ID, USER_ID))
            + length_delimited(EXECUTE_PLAN, length_delimited(PLAN_ROOT, relation))
            + length_delimited(EXECUTE_CLIENT_TYPE, CLIENT_TYPE)
            + length_delimited(EXECUTE_OPERATION_ID, operation_id))


def execute_plan_response(session_id, operation_id):
    """The one ExecutePlanResponse the stand-in sends: ids and result_complete (an empty message),
    so that the proxy ends the operation as `completed`."""
    return (length_delimited(RESPONSE_SESSION_ID, session_id)
            + length_delimited(RESPONSE_OPERATION_ID, operation_id)
            + length_delimited(RESPONSE_RESPONSE_ID, f"{operation_id}/0")
            + length_delimited(RESPONSE_RESULT_COMPLETE, b"")
            + length_delimited(RESPONSE_SERVER_SIDE_SESSION_ID, f"server-{session_id}"))


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


# --- the recording upstream --------------------------------------------------------------------
class RecordingSparkConnect:
    """Answers ExecutePlan with execute_plan_response() and keeps each request body exactly as it
    arrived, under the call's x-test-id metadata (the operation id; it also tells the stand-in
    which operation id to answer with, without parsing the body)."""

    def __init__(self, session_id):
        self.session_id = session_id
        self.bodies = {}
        self._lock = threading.Condition()
        # No request_deserializer / response_serializer: grpcio passes bytes through untouched.
        handler = grpc.method_handlers_generic_handler(
            SERVICE, {"ExecutePlan": grpc.unary_stream_rpc_method_handler(self._execute_plan)})
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[handler],
                                   options=GRPC_OPTIONS)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        if not self.port:
            raise RuntimeError("recording upstream could not bind 127.0.0.1")
        self._server.start()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def _execute_plan(self, body, context):
        operation_id = dict(context.invocation_metadata()).get("x-test-id", "")
        with self._lock:
            self.bodies[operation_id] = body
            self._lock.notify_all()
        yield execute_plan_response(self.session_id, operation_id)

    def body(self, operation_id, timeout=10):
        with self._lock:
            if not self._lock.wait_for(lambda: operation_id in self.bodies, timeout):
                raise AssertionError(f"the upstream never received operation {operation_id}")
            return self.bodies[operation_id]

    def stop(self):
        self._server.stop(0).wait(10)


# --- the store, through `sparktrace traces show` -----------------------------------------------
def stored_trace(store_path, operation_id):
    """The spans of the operation's trace by name, or None while they are not (all) there."""
    result = run_cli(["traces", "show", "--operation", operation_id, "--json", "--store", str(store_path)])
    if result.returncode != 0:
        return None
    spans = {}
    for span in json.loads(result.stdout).get("spans", []):
        spans.setdefault(span["name"], []).append(span)
    return spans if OPERATION_SPAN in spans and EXECUTE_SPAN in spans else None


@unittest.skipUnless(plans_dir().parent.parent.is_dir(),
                     f"no shared data at {plans_dir().parent.parent} (set SPARKTRACE_DATA_DIR)")
class ConnectPlansTest(unittest.TestCase):
    """Sends every plan once, in setUpClass; each test then checks one property for all of them."""

    maxDiff = 2000

    @classmethod
    def setUpClass(cls):
        cls.plans = load_plans()
        cls.session_id = str(uuid.uuid4())
        cls.upstream = RecordingSparkConnect(cls.session_id)
        cls.addClassCleanup(cls.upstream.stop)
        if harness.DIRECT:
            cls.proxy, address = None, cls.upstream.address
        else:
            cls.proxy = harness.start_proxy(cls, cls.upstream.address, "--span-batch-delay", "50ms")
            address = cls.proxy.grpc_address
        cls.channel = harness.open_channel(cls, address)
        cls.sent = {}  # name -> (operation id, body, responses the client got)
        for name, relation in cls.plans.items():
            operation_id = str(uuid.uuid4())
            body = execute_plan_body(cls.session_id, operation_id, relation)
            try:
                responses = list(cls.execute(body, operation_id))
            except grpc.RpcError as error:
                message = f"{name}: ExecutePlan failed: {error.code()} {error.details()}"
                raise AssertionError(message) from None
            cls.sent[name] = (operation_id, body, responses)

    @classmethod
    def execute(cls, body, operation_id):
        # No request_serializer / response_deserializer: the body goes out as these bytes.
        call = cls.channel.unary_stream(EXECUTE_PATH)
        return call(body, metadata=[("x-test-id", operation_id)], timeout=CALL_TIMEOUT)

    def metrics(self):
        status, _, body = self.proxy.admin("/metrics")
        self.assertEqual(status, 200)
        return Metrics(body)

    def test_every_plan_pair_is_there(self):
        directory = plans_dir()
        binaries = names_with_suffix(directory, ".proto.bin")
        self.assertEqual(binaries, names_with_suffix(directory, ".json"),
                         f"every .proto.bin in {directory} needs its .json, and back")
        self.assertEqual(len(binaries), EXPECTED_PLAN_COUNT, directory)
        self.assertEqual(len(self.sent), EXPECTED_PLAN_COUNT)
        for name, relation in self.plans.items():
            self.assertTrue(relation, f"{name}.proto.bin is empty")

    def test_upstream_receives_every_body_byte_for_byte(self):
        for name, (operation_id, body, responses) in self.sent.items():
            with self.subTest(plan=name):
                received = self.upstream.body(operation_id)
                # Lengths and digests: a failure names the first differing offset, not 11 KiB of bytes.
                self.assertEqual(len(received), len(body))
                self.assertEqual(hashlib.sha256(received).hexdigest(), hashlib.sha256(body).hexdigest(),
                                 f"first difference at byte {first_difference(received, body)}")
                self.assertEqual(responses, [execute_plan_response(self.session_id, operation_id)])

    @harness.proxy_only
    def test_proxy_decodes_every_plan(self):
        undecodable = "sparktrace_undecodable_messages_total"
        self.assertEqual(self.metrics().total(undecodable), 0)

        # The control: the same kind of body cut short by one byte is counted, so the 0 above
        # comes from the counter that counts, not from a series that never exists.
        name, relation = next(iter(self.plans.items()))
        operation_id = str(uuid.uuid4())
        cut = execute_plan_body(self.session_id, operation_id, relation)[:-1]
        self.assertEqual(list(self.execute(cut, operation_id)),
                         [execute_plan_response(self.session_id, operation_id)], name)
        self.assertEqual(self.upstream.body(operation_id), cut)
        wait_until(lambda: self.metrics().value(undecodable, method="ExecutePlan", direction="in") == 1,
                   timeout=5, message="the cut body to be counted as undecodable")
        self.assertEqual(self.metrics().total(undecodable), 1)

    @harness.proxy_only
    def test_operation_span_names_the_plan_kind_and_relation_type(self):
        expected_kind = PLAN_OP_TYPE_NAMES[PLAN_ROOT]  # every body puts its plan in Plan.root
        for name, (operation_id, body, _) in self.sent.items():
            with self.subTest(plan=name):
                spans = wait_until(lambda: stored_trace(self.proxy.store_path, operation_id), SPAN_WAIT,
                                   interval=0.1, message=f"the spans of {name} ({operation_id})")
                self.assertEqual(len(spans[OPERATION_SPAN]), 1)
                self.assertEqual(len(spans[EXECUTE_SPAN]), 1)
                operation = spans[OPERATION_SPAN][0]["attributes"]
                self.assertEqual(operation.get("spark.connect.plan_kind"), expected_kind)
                self.assertEqual(operation.get("spark.connect.relation"), relation_type(name))
                self.assertEqual(operation.get("spark.connect.operation_id"), operation_id)
                self.assertEqual(operation.get("spark.connect.session_id"), self.session_id)
                self.assertEqual(operation.get("spark.connect.user_id"), USER_ID)
                self.assertEqual(operation.get("spark.connect.client_type"), CLIENT_TYPE)
                self.assertNotIn("spark.connect.command", operation)
                self.assertEqual(operation.get("spark.connect.operation.outcome"), "completed")

                execute = spans[EXECUTE_SPAN][0]["attributes"]
                self.assertEqual(execute.get("spark.connect.plan_kind"), expected_kind)
                self.assertEqual(execute.get("rpc.request.messages"), 1)
                self.assertEqual(execute.get("rpc.request.bytes"), len(body))
                # Present only when a message of this call could not be decoded.
                self.assertNotIn("sparktrace.undecodable_messages", execute)


if __name__ == "__main__":
    unittest.main()
