"""Newer Spark Connect clients and servers through the proxy, end to end, checked against
docs/tracing.md:

- the `spark-connect-operation-id` request header Spark's clients send from 4.3 (SPARK-58632) on
  ExecutePlan, ReattachExecute and ReleaseExecute keys the operation; a header the body contradicts,
  or one that is not a UUID, is overruled or ignored, and counted;
- an operation whose first call through this proxy is a ReattachExecute (its ExecutePlan went to
  the sim directly, as to another replica or before a proxy restart) is traced as an operation
  marked `spark.connect.operation.first_seen = reattach`;
- a method the decoder does not know (SparkConnectService/ListSqlExecutions, which the sim does not
  implement either) is forwarded unchanged, its span named by its path, and counted;
- Spark 4's execution_progress (the sim streams it to clients whose client_type says spark/4): while
  the operation runs, its page's JSON shows it open, the attempt running, with tasks done; once it
  ends, its span carries `spark.connect.progress` events and the final figures, the OTLP collector
  got it once (never the live snapshots), and a Spark 3.5 client's operation has no progress at all.

The set-up is test_tracing.py's: the proxy in front of `sparktrace sim` (or the recording upstream
peer, where the bytes that reached the upstream matter), spans read back from the SQLite store with
`sparktrace traces show --json`, /metrics from the proxy's admin port. Real grpcio clients; every
port is a loopback port 0.
"""

import hashlib
import json
import threading
import unittest
import uuid

import grpc

import harness
import test_tracing
from harness import new_id
from test_tracing import (CALL_TIMEOUT, EXECUTE, OPERATION, REATTACH, RELEASE, SERVICE, SPAN_WAIT, GrpcCollector,
                          TracingCase, batch_totals, client_context, decode_otlp)

OPERATION_ID_HEADER = "spark-connect-operation-id"
IGNORED = "sparktrace_operation_id_header_ignored_total"
FIRST_SEEN = "sparktrace_operations_first_seen_on_reattach_total"
UNKNOWN_METHODS = "sparktrace_unknown_methods_total"
LIST_SQL_EXECUTIONS = f"{SERVICE}/ListSqlExecutions"
# 5 batches of 1000 bytes: the sim (--stream-cut-bytes 2000) cuts a reattachable stream twice.
CUT_TWICE = [("x-sim-batches", "5"), ("x-sim-batch-bytes", "1000")]


def setUpModule():
    test_tracing.setUpModule()  # the sim and the Spark Connect stubs, in test_tracing.SIM / .PB


def is_complete(stream):
    return bool(stream) and stream[-1].WhichOneof("response_type") == "result_complete"


class NewerClientsCase(TracingCase):
    def reattach_until_complete(self, proxy, op, after, metadata=()):
        """ReattachExecute through the proxy, each on its own connection, until result_complete."""
        streams, resumed_after = [], [after]
        while True:
            self.assertLess(len(streams), 5, "no result_complete after 5 reattaches")
            streams.append(list(self.reattach(self.stub(proxy, separate=True), op, resumed_after[-1],
                                              metadata=metadata)))
            if is_complete(streams[-1]):
                return streams, resumed_after
            resumed_after.append(streams[-1][-1].response_id)

    def header_ignored(self, proxy):
        metrics = self.metrics(proxy)
        return {reason: metrics.value(IGNORED, reason=reason)
                for reason in ("malformed", "too_long", "repeated", "mismatch")}


# --- the operation id header ----------------------------------------------------------------------
@harness.proxy_only
class OperationIdHeaderTest(NewerClientsCase):
    def test_header_on_execute_reattach_and_release_keys_one_operation(self):
        """A Spark 4.3-shaped client: the header on every call of the operation, equal to the body's
        operation_id; the reattaches and the release come on other connections without traceparent."""
        proxy = self.start_proxy()
        trace_id, client_span, traceparent = client_context()
        op = str(uuid.uuid4())
        header = [(OPERATION_ID_HEADER, op)]
        _, call = self.execute(self.stub(proxy, separate=True), op, reattachable=True,
                               metadata=header + [("traceparent", traceparent)] + CUT_TWICE)
        first = list(call)
        self.assertFalse(is_complete(first), "the sim was expected to cut the stream")
        streams, resumed_after = self.reattach_until_complete(proxy, op, first[-1].response_id, metadata=header)
        self.assertEqual(len(streams), 2)
        self.release_all(self.stub(proxy, separate=True), op, metadata=header)
        rows, arrow_bytes, batches = batch_totals([r for s in [first, *streams] for r in s])
        self.assertEqual((arrow_bytes, batches), (5000, 5))

        trace = self.store.wait(trace_id, op=1, execute=1, reattach=2, release=1)
        self.assertEqual(len(trace.spans), 5, trace.summary())
        operation = trace.one(OPERATION)
        self.assertEqual(operation["parent_span_id"], client_span)
        o = operation["attributes"]
        self.assertEqual(o.get("spark.connect.operation_id"), op)
        self.assertEqual(o.get("spark.connect.operation.outcome"), "completed")
        self.assertEqual(o.get("spark.connect.reattach_count"), 2)
        self.assertEqual(o.get("spark.connect.result.rows"), rows)
        self.assertNotIn("spark.connect.operation.first_seen", o)
        children = sorted(trace.children(operation), key=lambda s: int(s["start_time_unix_nano"]))
        self.assertEqual([s["name"] for s in children], [EXECUTE, REATTACH, REATTACH, RELEASE])
        for span in children:
            self.assertEqual(span["attributes"].get("spark.connect.operation_id"), op, span["name"])
            self.assertNotIn("spark.connect.operation_id_header", span["attributes"], span["name"])
        self.assertEqual([s["attributes"].get("spark.connect.reattach.last_response_id") for s in children[1:3]],
                         resumed_after)
        self.assertEqual(self.header_ignored(proxy), dict.fromkeys(("malformed", "too_long", "repeated",
                                                                    "mismatch"), 0.0))

    def test_header_names_the_operation_when_the_body_does_not(self):
        """A client that names the operation only in the header: the proxy keys the operation by it
        from the first request on (the sim, which never reads the header, picks its own id)."""
        proxy = self.start_proxy()
        trace_id, _, traceparent = client_context()
        op = str(uuid.uuid4())
        _, call = self.execute(self.stub(proxy), None, metadata=[(OPERATION_ID_HEADER, op),
                                                                 ("traceparent", traceparent)])
        responses = list(call)
        self.assertTrue(responses)
        self.assertNotEqual(responses[0].operation_id, op, "the sim was expected to pick its own id")

        trace = self.store.wait(trace_id, op=1, execute=1)
        self.assertEqual(trace.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op)
        self.assertEqual(trace.one(EXECUTE)["attributes"].get("spark.connect.operation_id"), op)
        self.assertEqual(self.header_ignored(proxy)["mismatch"], 0)

    def test_header_that_disagrees_with_the_body_is_overruled_and_counted(self):
        """Spark's server acts on the body, so the spans follow the body; the header is recorded."""
        proxy = self.start_proxy()
        trace_id, _, traceparent = client_context()
        op, other = str(uuid.uuid4()), str(uuid.uuid4())
        _, call = self.execute(self.stub(proxy), op, metadata=[(OPERATION_ID_HEADER, other),
                                                               ("traceparent", traceparent)])
        self.assertTrue(all(r.operation_id == op for r in call))

        trace = self.store.wait(trace_id, op=1, execute=1)
        self.assertEqual(trace.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op)
        execute = trace.one(EXECUTE)["attributes"]
        self.assertEqual(execute.get("spark.connect.operation_id"), op)
        self.assertEqual(execute.get("spark.connect.operation_id_header"), other)
        self.assertEqual(self.header_ignored(proxy)["mismatch"], 1)
        self.assertIsNone(self.store.show(operation=other), "nothing is keyed by the overruled header")

    def test_headers_that_are_not_operation_ids_are_ignored_and_counted(self):
        proxy = self.start_proxy()
        cases = [("not-an-operation-id", "malformed"), (str(uuid.uuid4()) + "-and-more", "too_long"),
                 ("x" * 200, "too_long")]
        for value, _ in cases:
            trace_id, _, traceparent = client_context()
            op = str(uuid.uuid4())
            _, call = self.execute(self.stub(proxy), op, metadata=[(OPERATION_ID_HEADER, value),
                                                                   ("traceparent", traceparent)])
            self.assertEqual({r.operation_id for r in call}, {op}, "forwarded as it came: Spark answered")
            trace = self.store.wait(trace_id, op=1, execute=1)
            self.assertEqual(trace.one(OPERATION)["attributes"].get("spark.connect.operation_id"), op)
            self.assertNotIn("spark.connect.operation_id_header", trace.one(EXECUTE)["attributes"])
        self.assertEqual(self.header_ignored(proxy), {"malformed": 1, "too_long": 2, "repeated": 0, "mismatch": 0})


# --- an operation first seen on a ReattachExecute ---------------------------------------------------
@harness.proxy_only
class ReattachFirstTest(NewerClientsCase):
    def test_reattach_of_an_operation_started_elsewhere_is_traced_as_an_operation(self):
        """The ExecutePlan goes to the sim directly (as to another replica, or before this proxy
        started); the client then reattaches and releases through the proxy."""
        proxy = self.start_proxy()
        sim = test_tracing.PB_GRPC.SparkConnectServiceStub(harness.open_channel(self, test_tracing.SIM.address))
        op = str(uuid.uuid4())
        request = self.execute_request(op, reattachable=True)
        first = list(sim.ExecutePlan(request, metadata=CUT_TWICE, timeout=CALL_TIMEOUT))
        self.assertFalse(is_complete(first), "the sim was expected to cut the stream")
        self.assertIsNone(self.store.show(operation=op), "the proxy saw nothing of the ExecutePlan")

        trace_id, client_span, traceparent = client_context()
        context = [("traceparent", traceparent)]
        streams, resumed_after = self.reattach_until_complete(proxy, op, first[-1].response_id, metadata=context)
        self.assertEqual(len(streams), 2)
        self.release_all(self.stub(proxy, separate=True), op, metadata=context)
        rows, arrow_bytes, batches = batch_totals([r for s in streams for r in s])

        trace = self.store.wait(trace_id, op=1, reattach=2, release=1)
        self.assertEqual(trace.named(EXECUTE), [])
        operation = trace.one(OPERATION)
        self.assertEqual(operation["parent_span_id"], client_span)
        o = operation["attributes"]
        self.assertEqual(o.get("spark.connect.operation.first_seen"), "reattach")
        self.assertEqual(o.get("spark.connect.operation_id"), op)
        self.assertEqual(o.get("spark.connect.session_id"), self.session_id)
        self.assertEqual(o.get("spark.connect.user_id"), "alice")
        self.assertIs(o.get("spark.connect.reattachable"), True)
        self.assertEqual(o.get("spark.connect.operation.outcome"), "completed")
        self.assertEqual(o.get("spark.connect.reattach_count"), 2)
        self.assertEqual((o.get("spark.connect.result.rows"), o.get("spark.connect.result.arrow_bytes"),
                          o.get("spark.connect.result.batches")), (rows, arrow_bytes, batches))
        self.assertNotIn("spark.connect.plan_kind", o, "the plan was in an ExecutePlan never seen")

        children = sorted(trace.children(operation), key=lambda s: int(s["start_time_unix_nano"]))
        self.assertEqual([s["name"] for s in children], [REATTACH, REATTACH, RELEASE], trace.summary())
        self.assertEqual(operation["start_time_unix_nano"], children[0]["start_time_unix_nano"],
                         "it starts with the first reattach")
        for span, method in zip(children, ["ReattachExecute", "ReattachExecute", "ReleaseExecute"]):
            self.assert_rpc_span(span, method)
        self.assert_ends_after_children(trace, operation)
        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value(FIRST_SEEN), 1)
        self.assertEqual(metrics.value("sparktrace_operations_total", outcome="completed"), 1)
        self.assertEqual(metrics.value("sparktrace_operations_active"), 0)


# --- methods the decoder does not know ------------------------------------------------------------
@harness.proxy_only
class UnknownMethodTest(NewerClientsCase):
    def test_newer_spark_connect_method_gets_the_sims_answer_and_a_span_named_by_its_path(self):
        proxy = self.start_proxy()
        trace_id, client_span, traceparent = client_context()
        path = "/" + LIST_SQL_EXECUTIONS
        request = b"\x0a\x24" + str(uuid.uuid4()).encode()  # whatever a newer request looks like
        with self.assertRaises(grpc.RpcError) as direct:
            harness.open_channel(self, test_tracing.SIM.address).unary_unary(path)(request, timeout=CALL_TIMEOUT)
        with self.assertRaises(grpc.RpcError) as proxied:
            harness.open_channel(self, proxy.grpc_address).unary_unary(path)(
                request, metadata=[("traceparent", traceparent)], timeout=CALL_TIMEOUT)
        self.assertEqual(direct.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        self.assertEqual((proxied.exception.code(), proxied.exception.details()),
                         (direct.exception.code(), direct.exception.details()), "the sim's answer, not the proxy's")

        trace = self.store.wait(trace_id, **{LIST_SQL_EXECUTIONS: 1})
        span = trace.one(LIST_SQL_EXECUTIONS)
        a = span["attributes"]
        self.assertEqual(span["parent_span_id"], client_span)
        self.assertEqual(span["kind"], "server")
        self.assertEqual(a.get("rpc.service"), SERVICE)
        self.assertEqual(a.get("rpc.method"), "ListSqlExecutions")
        self.assertEqual(a.get("rpc.grpc.status_code"), grpc.StatusCode.UNIMPLEMENTED.value[0])
        self.assertEqual(a.get("rpc.request.messages"), 1)
        self.assertNotIn("sparktrace.undecodable_messages", a, "never decoded, so never undecodable")
        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value(UNKNOWN_METHODS, service="spark_connect"), 1)
        self.assertEqual(metrics.value(UNKNOWN_METHODS, service="other"), 0)
        self.assertEqual(metrics.value(UNKNOWN_METHODS, service="unnamed"), 0)
        self.assertEqual(metrics.total("sparktrace_undecodable_messages_total"), 0)

    def test_a_path_too_long_to_name_a_span_after_is_named_other(self):
        proxy = self.start_proxy()
        trace_id, _, traceparent = client_context()
        path = f"/{SERVICE}/" + "A" * 200
        with self.assertRaises(grpc.RpcError) as raised:
            harness.open_channel(self, proxy.grpc_address).unary_unary(path)(
                b"", metadata=[("traceparent", traceparent)], timeout=CALL_TIMEOUT)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        span = self.store.wait(trace_id, _OTHER=1).one("_OTHER")
        self.assertEqual(span["attributes"].get("rpc.method"), "_OTHER")
        self.assertNotIn("rpc.service", span["attributes"])
        self.assertEqual(self.metrics(proxy).value(UNKNOWN_METHODS, service="unnamed"), 1)

    def test_unknown_method_bytes_and_headers_reach_the_upstream_unchanged(self):
        """The relay never depends on decoding: bytes that are no protobuf message at all, and an
        operation id header that is no operation id, go through as they came, and back."""
        upstream = harness.start_upstream(self)
        proxy = self.start_proxy(upstream=upstream.address)
        trace_id, _, traceparent = client_context()
        test_id = new_id("unknown")
        path = f"/{SERVICE}/Unary"  # a SparkConnectService method the decoder does not know
        payload = bytes(range(256)) * 3
        response = harness.open_channel(self, proxy.grpc_address).unary_unary(path)(
            payload, timeout=CALL_TIMEOUT,
            metadata=[("x-test-id", test_id), (OPERATION_ID_HEADER, "not-an-operation-id"),
                      ("x-newer-client", "v9"), ("traceparent", traceparent)])
        self.assertEqual(response, payload)
        record = upstream.record(test_id)
        self.assertEqual(record.method, path)
        self.assertEqual(record.request_sha256, [hashlib.sha256(payload).hexdigest()])
        self.assertEqual(record.md(OPERATION_ID_HEADER), ["not-an-operation-id"])
        self.assertEqual(record.md("x-newer-client"), ["v9"])

        span = self.store.wait(trace_id, **{f"{SERVICE}/Unary": 1}).one(f"{SERVICE}/Unary")
        self.assertEqual(span["attributes"].get("rpc.method"), "Unary")
        self.assertEqual(span["attributes"].get("rpc.request.bytes"), len(payload))
        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value(UNKNOWN_METHODS, service="spark_connect"), 1)
        self.assertEqual(metrics.value(IGNORED, reason="malformed"), 0, "the header is read on operation calls only")



# --- Spark 4's live progress ----------------------------------------------------------------------
SPARK4_CLIENT = "_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux python/3.11"
SPARK35_CLIENT = "_SPARK_CONNECT_PYTHON spark/3.5.1 os/linux python/3.11"
PROGRESS = "spark.connect.progress"
# The sim's default --progress-steps 4 and --progress-tasks 8 (a reduce stage of 2): 10 tasks, each
# progress response and batch 400 ms apart, so the operation runs about 3 s.
SLOW = [("x-sim-batch-interval-ms", "400"), ("x-sim-batches", "4")]
TASKS_TOTAL = 10


@harness.proxy_only
class LiveProgressTest(NewerClientsCase):
    def spark_request(self, client_type):
        request = self.execute_request(str(uuid.uuid4()))
        request.client_type = client_type
        return request

    def attempt_json(self, proxy, trace_id):
        status, _, body = proxy.admin(f"/api/v1/traces/{trace_id}")
        return json.loads(body) if status == 200 else None

    def test_a_running_operation_shows_its_progress_then_ends_with_progress_events(self):
        collector = GrpcCollector()
        self.addCleanup(collector.stop)
        proxy = self.start_proxy("--otlp-endpoint", collector.address, "--progress-snapshot-interval", "200ms",
                                 "--progress-event-interval", "100ms")
        stub = self.stub(proxy)
        trace_id, _, traceparent = client_context()
        request = self.spark_request(SPARK4_CLIENT)
        call = stub.ExecutePlan(request, metadata=[("traceparent", traceparent)] + SLOW, timeout=CALL_TIMEOUT)
        responses, stream_over = [], threading.Event()

        def read_stream():
            try:
                responses.extend(call)
            finally:
                stream_over.set()

        reader = threading.Thread(target=read_stream, daemon=True)
        reader.start()
        self.addCleanup(reader.join, CALL_TIMEOUT)

        def running_with_progress():
            attempt = self.attempt_json(proxy, trace_id)
            operations = [s for s in (attempt or {}).get("spans", []) if s["name"] == OPERATION]
            if len(operations) != 1 or not operations[0]["open"]:
                return None
            progress = operations[0]["progress"]
            return (attempt, operations[0]) if progress and progress["tasks_done"] > 0 else None

        attempt, running = harness.wait_until(running_with_progress, SPAN_WAIT, interval=0.05,
                                              message="the running operation with tasks done on its page")
        self.assertFalse(stream_over.is_set(), "the page showed the progress only after the operation ended")
        self.assertEqual(attempt["state"], "running")
        self.assertTrue(attempt["in_progress"])
        # The scan stage's 8 tasks; with the reduce stage's 2 once it has started (as Spark lists a
        # stage once it is submitted).
        self.assertIn(running["progress"]["tasks_total"], (8, TASKS_TOTAL))
        self.assertLess(running["progress"]["tasks_done"], TASKS_TOTAL)
        self.assertEqual(running["attributes"].get("spark.connect.operation.state"), "running")
        self.assertNotIn("spark.connect.operation.outcome", running["attributes"])

        self.assertTrue(stream_over.wait(CALL_TIMEOUT), "the stream did not end")
        kinds = [r.WhichOneof("response_type") for r in responses]
        self.assertEqual(kinds, ["execution_progress"] * 4 + ["arrow_batch"] * 4)

        # Ended: the final span replaced the snapshot, with events and the final figures.
        def ended():
            attempt = self.attempt_json(proxy, trace_id)
            operations = [s for s in (attempt or {}).get("spans", []) if s["name"] == OPERATION]
            return (attempt, operations[0]) if len(operations) == 1 and not operations[0]["open"] else None

        attempt, final = harness.wait_until(ended, SPAN_WAIT, interval=0.05, message="the ended operation")
        self.assertNotEqual(attempt["state"], "running")
        self.assertEqual(final["id"], running["id"])
        self.assertEqual(final["progress"]["tasks_done"], TASKS_TOTAL)
        self.assertEqual(final["progress"]["stages_done"], 2)
        self.assertEqual(final["progress"]["updates"], 4)
        events = [e for e in final["events"] if e["name"] == PROGRESS]
        # Four updates 400 ms apart, an event interval of 100 ms, at most 32: every one is kept.
        self.assertEqual(len(events), 4, final["events"])
        done = [e["attributes"]["spark.connect.progress.tasks_done"] for e in events]
        self.assertEqual(done, sorted(done))
        self.assertEqual(done[-1], TASKS_TOTAL)
        self.assertEqual(events[-1]["attributes"]["spark.connect.progress.stages_done"], 2)

        stored = self.store.wait(trace_id, op=1, execute=1).one(OPERATION)
        self.assertEqual(stored["attributes"].get("spark.connect.operation.outcome"), "completed")
        self.assertEqual(stored["attributes"].get("spark.connect.progress.tasks_done"), TASKS_TOTAL)
        self.assertNotIn("spark.connect.operation.state", stored["attributes"])
        self.assertEqual([e["name"] for e in stored["events"]].count(PROGRESS), 4)

        metrics = self.metrics(proxy)
        self.assertEqual(metrics.value("sparktrace_operation_progress_updates_total"), 4)
        self.assertGreaterEqual(metrics.value("sparktrace_operation_progress_snapshots_total"), 1)
        self.assertEqual(metrics.value("sparktrace_operation_progress_events_thinned_total"), 0)

        # The collector gets the operation once, final: a snapshot would be a duplicate there.
        self.stop_proxy(proxy)
        operation_id = bytes.fromhex(final["id"])
        sent = [span for span, _ in decode_otlp(collector.bodies()) if span.span_id == operation_id]
        self.assertEqual(len(sent), 1)
        self.assertEqual([e.name for e in sent[0].events].count(PROGRESS), 4)

    def test_an_older_clients_operation_has_no_progress(self):
        proxy = self.start_proxy()
        trace_id, _, traceparent = client_context()
        request = self.spark_request(SPARK35_CLIENT)
        responses = list(self.stub(proxy).ExecutePlan(request, metadata=[("traceparent", traceparent)],
                                                      timeout=CALL_TIMEOUT))
        self.assertNotIn("execution_progress", [r.WhichOneof("response_type") for r in responses])
        operation = self.store.wait(trace_id, op=1, execute=1).one(OPERATION)
        self.assertFalse([k for k in operation["attributes"] if k.startswith(PROGRESS)], operation["attributes"])
        self.assertNotIn(PROGRESS, [e["name"] for e in operation["events"]])
        attempt = self.attempt_json(proxy, trace_id)
        self.assertIsNone(next(s for s in attempt["spans"] if s["name"] == OPERATION)["progress"])
        self.assertEqual(self.metrics(proxy).value("sparktrace_operation_progress_updates_total"), 0)


if __name__ == "__main__":
    unittest.main()
