"""Big messages, many concurrent streams, and backpressure from a slow reader."""

import hashlib
import os
import threading
import time
import unittest

import grpc

import harness
from harness import md, new_id
from peers.upstream_server import pattern

SVC = "/sparktrace.test.Echo"
MiB = 1 << 20


class ScaleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)
        cls.address = harness.target(cls, cls.upstream)
        cls.channel = harness.open_channel(cls, cls.address)

    def test_200mib_each_way(self):
        """Under the 256 MiB default limit, a single message must pass both ways intact."""
        size = 200 * MiB
        request = os.urandom(size)
        request_sha = hashlib.sha256(request).hexdigest()
        tid = new_id()
        response, call = self.channel.unary_unary(f"{SVC}/Unary").with_call(
            request, timeout=120,
            metadata=[("x-test-id", tid), ("x-test-message-bytes", str(size))])
        del request
        self.assertEqual(len(response), size)
        trailing = call.trailing_metadata()
        self.assertEqual(md(trailing, "x-request-sha256"), [request_sha], "request corrupted")
        self.assertEqual(md(trailing, "x-response-sha256"),
                         [hashlib.sha256(response).hexdigest()], "response corrupted")
        self.assertEqual(response, pattern(tid, 0, size))

    def test_64_concurrent_server_streams(self):
        """All 64 calls must be open at the upstream at once (a barrier there holds each
        until the 64th arrives), so a proxy that serialises calls fails by timeout."""
        n = 64
        barrier = f"{new_id()}:{n}"
        results = [None] * n

        def run(i):
            tid = new_id()
            count, size = 20 + i, 1000 + 517 * i
            try:
                got = list(self.channel.unary_stream(f"{SVC}/ServerStream")(
                    b"", timeout=60,
                    metadata=[("x-test-id", tid), ("x-test-stream-count", str(count)),
                              ("x-test-message-bytes", str(size)),
                              ("x-test-barrier", barrier)]))
                results[i] = got == [pattern(tid, k, size) for k in range(count)] or \
                    f"stream {i}: wrong messages ({len(got)} of {count})"
            except grpc.RpcError as err:
                results[i] = f"stream {i}: {err.code()} {err.details()}"

        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        self.assertEqual([r for r in results if r is not True], [])

    def test_slow_reader_backpressure(self):
        """The client reads one message and stops. Flow control must stall the upstream's
        producer with most of the stream unsent, and the proxy must not buffer it all."""
        count, size = 256, MiB
        tid = new_id()
        # A fresh proxy: memory the allocator kept from the 200 MiB test would hide buffering.
        proxy = None if harness.DIRECT else harness.start_proxy(self, self.upstream.address)
        ch = harness.open_channel(self, proxy.grpc_address if proxy else self.address)
        rss_before = proxy.rss() if proxy else 0
        stream = ch.unary_stream(f"{SVC}/ServerStream")(
            b"", timeout=120,
            metadata=[("x-test-id", tid), ("x-test-stream-count", str(count)),
                      ("x-test-message-bytes", str(size))])
        self.assertEqual(next(stream), pattern(tid, 0, size))
        record = self.upstream.record(tid)

        # "Stalled" has no event: it is the producer count not moving for a while.
        peak_rss = [0]

        def stalled():
            if proxy:
                peak_rss[0] = max(peak_rss[0], proxy.rss())
            return time.monotonic() - record.produced_at > 1.0

        harness.wait_until(stalled, timeout=30, interval=0.05, message="upstream producer stall")
        produced = record.produced
        self.assertLess(produced, count // 2,
                        f"upstream produced {produced}/{count} messages for a stopped reader")
        growth = max(peak_rss[0] - rss_before, 0)
        if proxy:
            self.assertLess(growth, 128 * MiB, f"proxy RSS grew {growth / MiB:.0f} MiB")

        for i in range(1, count):  # resume: everything arrives, in order
            self.assertEqual(next(stream), pattern(tid, i, size), f"message {i}")
        self.assertEqual(list(stream), [])
        self.assertEqual(stream.code(), grpc.StatusCode.OK)
        self.assertEqual(record.produced, count)
        print(f"\n  slow reader: upstream stalled after {produced}/{count} messages, "
              f"proxy RSS +{growth / MiB:.0f} MiB", end=" ")


if __name__ == "__main__":
    unittest.main()
