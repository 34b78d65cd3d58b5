"""SIGTERM drains: not ready, no new calls, in-flight calls finish or are cut at the
drain timeout, then exit 0 (proxy only)."""

import time
import unittest

import grpc

import harness
from harness import new_id
from peers.upstream_server import pattern

SSTREAM = "/sparktrace.test.Echo/ServerStream"
UNARY = "/sparktrace.test.Echo/Unary"


@harness.proxy_only
class DrainTest(unittest.TestCase):
    def setUp(self):
        self.upstream = harness.start_upstream(self)

    def open_stream(self, proxy, tid, count):
        """A server stream the upstream holds open after its first message until
        upstream.release(tid)."""
        ch = harness.open_channel(self, proxy.grpc_address)
        stream = ch.unary_stream(SSTREAM)(b"", timeout=60, metadata=[
            ("x-test-id", tid), ("x-test-stream-count", str(count)), ("x-test-gate", tid)])
        self.assertEqual(next(stream), pattern(tid, 0, 64))  # in flight through the proxy
        return ch, stream

    def assert_rejected(self, ch, what):
        with self.assertRaises(grpc.RpcError, msg=f"{what} accepted while draining") as ctx:
            ch.unary_unary(UNARY)(b"", timeout=5)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE, what)

    def wait_for_goaway(self, ch):
        """Blocks until the channel has left READY, which grpc-core does on receiving GOAWAY."""
        states = []
        record = states.append
        ch.subscribe(record, try_to_connect=False)
        try:
            harness.wait_until(lambda: states and states[-1] != grpc.ChannelConnectivity.READY, 5,
                               message="client saw the GOAWAY")
        finally:
            ch.unsubscribe(record)

    def test_sigterm_lets_in_flight_stream_finish(self):
        proxy = harness.start_proxy(self, self.upstream.address, drain="30s")
        tid = new_id()
        old_channel, stream = self.open_stream(proxy, tid, count=5)
        harness.wait_until(lambda: proxy.admin("/readyz")[0] == 200, 10, message="ready")

        proxy.terminate()
        proxy.expect_exit = True
        harness.wait_until(lambda: proxy.admin("/readyz")[0] == 503, 5,
                           message="readyz 503 after SIGTERM")
        # A private subchannel pool: otherwise grpc-core hands this channel the old channel's
        # draining connection and the call races the GOAWAY instead of opening a new connection.
        with harness.channel(proxy.grpc_address,
                             options=[("grpc.use_local_subchannel_pool", 1)]) as fresh:
            self.assert_rejected(fresh, "new call on a new connection")
        # A call sent before the client has read the server's GOAWAY is reset by grpc-core
        # (CANCELLED), not refused; clients only learn of the drain from the GOAWAY, so wait for it.
        self.wait_for_goaway(old_channel)
        self.assert_rejected(old_channel, "new call on the draining connection")

        self.upstream.release(tid)
        self.assertEqual(list(stream), [pattern(tid, i, 64) for i in range(1, 5)])
        self.assertEqual(stream.code(), grpc.StatusCode.OK)
        self.assertFalse(self.upstream.record(tid).cancelled)
        # Drained: exit now, not at the 30 s drain timeout.
        self.assertEqual(proxy.wait_exit(5), 0, proxy.stderr_tail())

    def test_drain_timeout_cancels_endless_stream(self):
        proxy = harness.start_proxy(self, self.upstream.address, drain="1s")
        tid = new_id()
        _, stream = self.open_stream(proxy, tid, count=-1)  # never released
        record = self.upstream.record(tid)

        signalled = time.monotonic()
        proxy.terminate()
        proxy.expect_exit = True
        with self.assertRaises(grpc.RpcError) as ctx:
            list(stream)
        self.assertIn(ctx.exception.code(),
                      (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE))
        self.assertEqual(proxy.wait_exit(5), 0, proxy.stderr_tail())
        elapsed = time.monotonic() - signalled
        self.assertGreaterEqual(elapsed, 0.9, "in-flight call cut before the drain timeout")
        self.assertLess(elapsed, 4.0, "exit not prompt after the drain timeout")
        self.assertTrue(record.terminated.wait(2), "upstream call left running")
        self.assertTrue(record.cancelled)

    def test_sigterm_when_idle_exits_promptly(self):
        proxy = harness.start_proxy(self, self.upstream.address, drain="30s")
        # The client keeps its idle connection open: idle connections must not hold drain.
        ch = harness.open_channel(self, proxy.grpc_address)
        self.assertEqual(ch.unary_unary(UNARY)(b"x", timeout=10), b"x")
        start = time.monotonic()
        proxy.terminate()
        proxy.expect_exit = True
        self.assertEqual(proxy.wait_exit(5), 0, proxy.stderr_tail())
        self.assertLess(time.monotonic() - start, 3.0)


if __name__ == "__main__":
    unittest.main()
