"""Deadlines, cancellation, mid-stream failures and upstream outages cross the proxy."""

import threading
import time
import unittest

import grpc

import harness
from harness import new_id
from peers.upstream_server import pattern

SVC = "/sparktrace.test.Echo"
DEADLINE_SLACK = 0.15  # seconds the proxy hop may eat from a deadline
CANCEL_BUDGET = 0.10  # seconds from client cancel to upstream noticing


class LifecycleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)
        cls.address = harness.target(cls, cls.upstream)
        cls.channel = harness.open_channel(cls, cls.address)
        # Warm the connection so connection setup does not count against timings below.
        cls.channel.unary_unary(f"{SVC}/Unary")(b"warm", timeout=10)

    def test_deadline_propagates(self):
        for timeout in (2.0, 7.5):
            with self.subTest(timeout=timeout):
                tid = new_id()
                self.channel.unary_unary(f"{SVC}/Unary")(b"", timeout=timeout,
                                                          metadata=[("x-test-id", tid)])
                remaining = self.upstream.record(tid).time_remaining
                self.assertIsNotNone(remaining, "upstream saw no deadline")
                # grpc-timeout is rounded on the wire, so allow a few ms above too
                self.assertLess(abs(timeout - remaining), DEADLINE_SLACK, remaining)

    def test_no_deadline_stays_no_deadline(self):
        """Invisible means the proxy must not invent a deadline the client did not set."""
        tid = new_id()
        future = self.channel.unary_unary(f"{SVC}/Unary").future(b"", metadata=[("x-test-id", tid)])
        try:
            future.result(timeout=10)  # bounded here, since the call itself has no deadline
        finally:
            future.cancel()
        self.assertIsNone(self.upstream.record(tid).time_remaining)

    def test_deadline_exceeded_when_upstream_slow(self):
        tid = new_id()
        start = time.monotonic()
        with self.assertRaises(grpc.RpcError) as ctx:
            self.channel.unary_unary(f"{SVC}/Unary")(
                b"", timeout=0.5, metadata=[("x-test-id", tid), ("x-test-delay-ms", "5000")])
        elapsed = time.monotonic() - start
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(elapsed, 0.5 + DEADLINE_SLACK + 0.5)
        # The upstream call must end too, not run its full 5 s.
        record = self.upstream.record(tid)
        self.assertTrue(record.terminated.wait(2), "upstream call outlived the deadline")
        self.assertTrue(record.cancelled)

    def test_cancel_server_stream_reaches_upstream(self):
        tid = new_id()
        stream = self.channel.unary_stream(f"{SVC}/ServerStream")(
            b"", timeout=20, metadata=[("x-test-id", tid), ("x-test-stream-count", "10"),
                                       ("x-test-gate", tid)])
        self.assertEqual(next(stream), pattern(tid, 0, 64))  # the call is live end to end
        record = self.upstream.record(tid)
        cancelled_at = time.monotonic()
        stream.cancel()
        self.assertTrue(record.terminated.wait(5), "upstream never saw the cancellation")
        self.assertTrue(record.cancelled)
        self.assertLess(record.terminated_at - cancelled_at, CANCEL_BUDGET)
        self.assertEqual(stream.code(), grpc.StatusCode.CANCELLED)

    def test_headers_reach_client_before_first_message(self):
        # A stream that answers with bare headers and then stays quiet, like an ExecutePlan whose
        # job has not produced a row yet: the client must see the headers now, not with the
        # first message.
        tid = new_id()
        stream = self.channel.unary_stream(f"{SVC}/ServerStream")(
            b"", timeout=20, metadata=[("x-test-id", tid), ("x-test-stream-count", "1"), ("x-test-gate", tid),
                                       ("x-test-gate-after", "0"), ("x-test-headers-first", "1")])
        headers = []
        try:
            reader = threading.Thread(target=lambda: headers.append(stream.initial_metadata()), daemon=True)
            reader.start()
            reader.join(5)
            self.assertTrue(headers, "response headers held back until the first message")
            self.assertEqual(self.upstream.record(tid).produced, 0, "the upstream already sent a message")
        finally:
            self.upstream.release(tid)
        self.assertEqual(list(stream), [pattern(tid, 0, 64)])

    def test_cancel_unary_future_reaches_upstream(self):
        tid = new_id()
        future = self.channel.unary_unary(f"{SVC}/Unary").future(
            b"", timeout=20, metadata=[("x-test-id", tid), ("x-test-gate", tid)])
        record = self.upstream.record(tid)  # waits until the upstream has the call
        cancelled_at = time.monotonic()
        self.assertTrue(future.cancel())
        self.assertTrue(record.terminated.wait(5), "upstream never saw the cancellation")
        self.assertTrue(record.cancelled)
        self.assertLess(record.terminated_at - cancelled_at, CANCEL_BUDGET)

    def test_upstream_abort_mid_stream(self):
        for count in (0, 1, 7):
            with self.subTest(abort_after=count):
                tid = new_id()
                stream = self.channel.unary_stream(f"{SVC}/ServerStream")(
                    b"", timeout=10,
                    metadata=[("x-test-id", tid), ("x-test-stream-count", "100"),
                              ("x-test-abort-after", str(count)),
                              ("x-test-status-code", str(grpc.StatusCode.DATA_LOSS.value[0])),
                              ("x-test-status-message", f"lost after {count}")])
                received = []
                with self.assertRaises(grpc.RpcError) as ctx:
                    for message in stream:
                        received.append(message)
                self.assertEqual(received, [pattern(tid, i, 64) for i in range(count)])
                self.assertEqual(ctx.exception.code(), grpc.StatusCode.DATA_LOSS)
                self.assertEqual(ctx.exception.details(), f"lost after {count}")

    def test_upstream_abort_mid_bidi(self):
        tid = new_id()
        stream = self.channel.stream_stream(f"{SVC}/Bidi")(
            iter([b"a", b"b", b"c", b"d"]), timeout=10,
            metadata=[("x-test-id", tid), ("x-test-abort-after", "2"),
                      ("x-test-status-code", str(grpc.StatusCode.ABORTED.value[0]))])
        received = []
        with self.assertRaises(grpc.RpcError) as ctx:
            for message in stream:
                received.append(message)
        self.assertEqual(received, [b"a", b"b"])
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.ABORTED)


class UpstreamOutageTest(unittest.TestCase):
    """Own upstream and proxy: this test takes the upstream away."""

    def test_upstream_down_then_back(self):
        upstream = harness.start_upstream(self)
        port = upstream.port
        proxy = None if harness.DIRECT else harness.start_proxy(self, upstream.address)
        ch = harness.open_channel(self, proxy.grpc_address if proxy else upstream.address)
        unary = ch.unary_unary(f"{SVC}/Unary")
        self.assertEqual(unary(b"up", timeout=10), b"up")

        upstream.stop()
        for _ in range(3):
            start = time.monotonic()
            with self.assertRaises(grpc.RpcError) as ctx:
                unary(b"down", timeout=20)
            self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertLess(time.monotonic() - start, 5.0, "UNAVAILABLE took too long")
        if proxy:
            self.assertIsNone(proxy.proc.poll(), "proxy died with its upstream")
            self.assertEqual(proxy.admin("/healthz")[0], 200)

        upstream.start(port)

        # The proxy's upstream channel reconnects with backoff, and wait-for-ready is not on
        # the wire, so early calls may still fail fast: retry until one gets through.
        def call_ok():
            try:
                return unary(b"back", timeout=2) == b"back"
            except grpc.RpcError as err:
                if err.code() not in (grpc.StatusCode.UNAVAILABLE,
                                      grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                return False
        harness.wait_until(call_ok, timeout=20, interval=0.1, message="a call after recovery")


if __name__ == "__main__":
    unittest.main()
