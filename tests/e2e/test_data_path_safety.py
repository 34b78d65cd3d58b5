"""The data path as careless or hostile clients use it (issue: never the reason Spark is down).

Each test does what an independent test did to an earlier build and saw fail: clients that never
read, metadata the upstream refuses, more streams or connections than anyone should open,
connections that never speak or go idle, an upstream that is down while calls keep coming. What
must hold: the proxy's memory stays within its budget, every other client's call succeeds, and
every bound that bites is counted on /metrics."""

import os
import resource
import struct
import time
import unittest
from concurrent import futures

import grpc
import hpack

import harness
from harness import new_id, proxy_only
from peers.raw_h2 import (
    CONTINUATION, DATA, FLAG_END_HEADERS, FLAG_END_STREAM, GOAWAY, HEADERS, PREFACE, REFUSED_STREAM,
    RST_STREAM, SETTINGS_INITIAL_WINDOW_SIZE, WINDOW_UPDATE, FrameSocket, grpc_frame,
    grpc_request_headers, header_block, parse_grpc_frames, raw_frame, settings_frame)
from peers.upstream_server import Upstream
from promtext import Metrics

SVC = "/sparktrace.test.Echo"
MIB = 1 << 20
DEPLOYMENT_MEMORY_LIMIT = 1 << 30  # k8s/base/deployment.yaml, limits.memory: 1Gi


def metrics(proxy):
    status, _, body = proxy.admin("/metrics")
    assert status == 200, status
    return Metrics(body)


def limit_hits(proxy, limit):
    return metrics(proxy).value("sparktrace_relay_limit_hits_total", limit=limit)


def vm_hwm(pid):
    """Peak resident set size of the process so far (bytes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def headers_frames(stream_id, block, end_stream=False, chunk=16_384):
    """HEADERS then CONTINUATION frames carrying `block` in pieces of at most `chunk` bytes."""
    pieces = [block[i:i + chunk] for i in range(0, len(block), chunk)] or [b""]
    frames = []
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        flags = FLAG_END_HEADERS if last else 0
        if index == 0:
            frames.append(raw_frame(HEADERS, flags | (FLAG_END_STREAM if end_stream else 0), stream_id, piece))
        else:
            frames.append(raw_frame(CONTINUATION, flags, stream_id, piece))
    return b"".join(frames)


def stalled_client(address, streams, test_id, message_bytes):
    """A connection that opens `streams` endless ServerStream calls, tells the proxy it may send
    it everything (the largest stream and connection windows HTTP/2 allows), then never reads.
    Its receive buffer is small, so that the kernel does not read for it either."""
    frames = FrameSocket(address, receive_buffer=16 * 1024)
    frames.handshake(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0x7FFF_FFFF)])
    out = [raw_frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFF_FFFF - 65_535))]
    request = grpc_frame(b"go")
    for index in range(streams):
        stream_id = 1 + 2 * index
        block = header_block(grpc_request_headers(f"{SVC}/ServerStream", extra=[
            ("x-test-id", test_id), ("x-test-stream-count", "-1"),
            ("x-test-message-bytes", str(message_bytes))]))
        out.append(headers_frames(stream_id, block))
        out.append(raw_frame(DATA, FLAG_END_STREAM, stream_id, request))
    frames.send(*out)
    return frames


@proxy_only
class SlowReaderTest(unittest.TestCase):
    """300 ExecutePlan-like streams whose client never reads: before, each could make the proxy
    hold a 4 MiB window (1.2 GB, OOM-killed under the 1 GiB limit), and the stalled streams used
    up the shared upstream connections' windows, so bystanders' calls timed out."""

    STREAMS_PER_CONNECTION = 100
    CONNECTIONS = 3
    BUDGET = 64 * MIB

    def test_non_reading_streams_hold_a_bounded_amount_and_bystanders_are_served(self):
        upstream = Upstream(max_workers=400)
        upstream.start()
        self.addCleanup(upstream.stop)
        # One worker: the stalled streams and the bystanders share its upstream connections.
        proxy = harness.start_proxy(self, upstream.address, "--threads", "1", "--no-tracing",
                                    "--relay-buffer-budget", f"{self.BUDGET // MIB}MiB")
        # The deployment's limit (k8s/base/deployment.yaml): an earlier build was OOM-killed here.
        memory = harness.limit_memory(self, proxy, DEPLOYMENT_MEMORY_LIMIT)
        bystander = harness.open_channel(self, proxy.grpc_address)
        self.assertEqual(bystander.unary_unary(f"{SVC}/Unary")(b"warm", timeout=5), b"warm")
        baseline = proxy.rss()

        tid = new_id("stall")
        clients = [stalled_client(proxy.grpc_address, self.STREAMS_PER_CONNECTION, tid, 256 * 1024)
                   for _ in range(self.CONNECTIONS)]
        for client in clients:
            self.addCleanup(client.close)
        total = self.STREAMS_PER_CONNECTION * self.CONNECTIONS
        harness.wait_until(lambda: len(upstream.records(tid)) == total, 30,
                           message=f"the upstream serving all {total} stalled streams")
        # Every stalled stream has had its response sent towards the proxy (the upstream made
        # its first message), so whatever they can make the proxy hold, they hold now.
        harness.wait_until(lambda: all(r.produced >= 1 for r in upstream.records(tid)), 30,
                           message="every stalled stream producing")

        # Bystanders on the same worker and upstream connections: small calls and a 4 MiB stream.
        for i in range(20):
            payload = os.urandom(100 + i)
            self.assertEqual(bystander.unary_unary(f"{SVC}/Unary")(payload, timeout=5), payload, f"call {i}")
        stream = bystander.unary_stream(f"{SVC}/ServerStream")(
            b"", timeout=20, metadata=[("x-test-stream-count", "16"), ("x-test-message-bytes", str(256 * 1024))])
        self.assertEqual(sum(len(m) for m in stream), 4 * MIB)

        self.assertEqual(memory.oom_kills(), 0, "the proxy was OOM-killed under its limit")
        self.assertIsNone(proxy.proc.poll(), "the proxy died")
        peak = vm_hwm(proxy.pid) - baseline
        seen = metrics(proxy)
        granted_peak = seen.value("sparktrace_relay_buffer_granted_high_water_bytes")
        # The windows every stream was announced (64 KiB each way) cannot be refused; growth
        # beyond them comes out of the budget.
        bound = self.BUDGET + total * 2 * 64 * 1024
        self.assertLessEqual(granted_peak, bound)
        if not harness.SANITIZED:  # ASan's quarantine and shadow memory are RSS of their own
            self.assertLess(peak, 160 * MIB, f"the proxy grew by {peak / MIB:.0f} MiB for {total} stalled streams")
            self.assertLess(memory.peak_bytes(), 256 * MIB, "the cgroup's peak (RSS and page cache)")
        self.assertEqual(seen.value("sparktrace_relay_client_connections"), self.CONNECTIONS + 1)

    def test_more_streams_than_a_connection_may_open_are_refused(self):
        upstream = harness.start_upstream(self)
        proxy = harness.start_proxy(self, upstream.address, "--no-tracing", "--max-streams-per-connection", "4")
        client = FrameSocket(proxy.grpc_address)
        self.addCleanup(client.close)
        # Sent with the preface, before the client could have acknowledged our SETTINGS. (Once it
        # has, a client going past the limit breaks the protocol: nghttp2 ends its connection,
        # PROTOCOL_ERROR, which stays that client's own.)
        out = [PREFACE, settings_frame()]
        for index in range(6):
            out.append(headers_frames(1 + 2 * index, header_block(grpc_request_headers(f"{SVC}/Unary"))))
        client.send(*out)
        refused = []
        for _ in range(2):
            frame = client.read_until(lambda f: f.type == RST_STREAM, 5)
            self.assertIsNotNone(frame, f"no RST_STREAM: {client.frames}")
            refused.append((frame.stream_id, frame.error_code))
        self.assertEqual(sorted(refused), [(9, REFUSED_STREAM), (11, REFUSED_STREAM)])
        self.assertEqual(limit_hits(proxy, "max_streams_per_connection"), 2)


@proxy_only
class HeaderListTest(unittest.TestCase):
    """Metadata larger than the upstream takes must be refused at the proxy for that call alone:
    forwarded, it made the upstream fail the shared connection and the calls of 2-4 of 20 other
    clients with it."""

    def test_oversized_metadata_fails_its_call_alone(self):
        upstream = harness.start_upstream(self)
        proxy = harness.start_proxy(self, upstream.address, "--threads", "1", "--no-tracing")
        channels = [harness.open_channel(self, proxy.grpc_address) for _ in range(4)]
        gate = new_id("gate")

        def bystander(i):
            call = channels[i % len(channels)].unary_stream(f"{SVC}/ServerStream")
            return [len(m) for m in call(b"", timeout=30, metadata=[
                ("x-test-id", f"{gate}-{i}"), ("x-test-stream-count", "3"), ("x-test-gate", gate)])]

        with futures.ThreadPoolExecutor(20) as pool:
            running = [pool.submit(bystander, i) for i in range(20)]
            for i in range(20):
                upstream.record(f"{gate}-{i}")  # every bystander is in flight
            for size in (9_000, 20_000):
                with self.subTest(metadata_value_bytes=size):
                    with self.assertRaises(grpc.RpcError) as raised:
                        channels[0].unary_unary(f"{SVC}/Unary")(b"x", timeout=5,
                                                                metadata=[("x-big", "v" * size)])
                    self.assertEqual(raised.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED,
                                     raised.exception.details())
            upstream.release(gate)
            # Every bystander got all its messages (64 bytes each, the upstream's default size).
            self.assertEqual([f.result(timeout=30) for f in running], [[64, 64, 64]] * 20)
        self.assertGreaterEqual(limit_hits(proxy, "max_header_list_bytes"), 1)

    def test_a_header_block_over_the_limit_resets_nothing_else_on_its_connection(self):
        """100 KB of metadata in 25 fields, from a client that ignores our SETTINGS: that stream
        is answered RESOURCE_EXHAUSTED, the connection and its other call go on."""
        upstream = harness.start_upstream(self)
        proxy = harness.start_proxy(self, upstream.address, "--no-tracing")
        client = FrameSocket(proxy.grpc_address)
        self.addCleanup(client.close)
        client.handshake()
        gate = new_id("gate")
        held = header_block(grpc_request_headers(f"{SVC}/Unary", extra=[("x-test-id", gate), ("x-test-gate", gate)]))
        client.send(headers_frames(1, held), raw_frame(DATA, FLAG_END_STREAM, 1, grpc_frame(b"held")))
        upstream.record(gate)
        big = header_block(grpc_request_headers(f"{SVC}/Unary", extra=[(f"x-big-{i}", "v" * 4000) for i in range(25)]))
        self.assertGreater(len(big), 64 * 1024, "more than fits the limit even compressed")
        client.send(headers_frames(3, big), raw_frame(DATA, FLAG_END_STREAM, 3, grpc_frame(b"big")))
        frame = client.read_until(lambda f: f.stream_id == 3 and f.type in (HEADERS, RST_STREAM), 5)
        self.assertIsNotNone(frame, client.frames)
        self.assertEqual(frame.type, HEADERS, frame)
        self.assertTrue(frame.flags & FLAG_END_STREAM, "a trailers-only answer")
        # The first header block the proxy sends on this connection: a fresh decoder reads it.
        answer = dict(hpack.Decoder().decode(frame.payload))
        self.assertEqual(answer.get("grpc-status"), "8", answer)
        self.assertIn("larger than", answer.get("grpc-message", ""))
        upstream.release(gate)
        done = client.read_until(lambda f: f.stream_id == 1 and f.type == HEADERS and f.flags & FLAG_END_STREAM, 5)
        self.assertIsNotNone(done, f"the other call on the connection did not finish: {client.frames}")
        data = b"".join(f.payload for f in client.frames if f.stream_id == 1 and f.type == DATA)
        self.assertEqual(parse_grpc_frames(data), [(0, b"held")])
        self.assertFalse(any(f.type == GOAWAY for f in client.frames), client.frames)
        self.assertEqual(limit_hits(proxy, "max_header_list_bytes"), 1)


@proxy_only
class ConnectionBoundsTest(unittest.TestCase):
    def setUp(self):
        self.upstream = harness.start_upstream(self)

    def call_ok(self, address):
        with harness.channel(address) as channel:
            return channel.unary_unary(f"{SVC}/Unary")(b"ok", timeout=5) == b"ok"

    def open_busy(self, address):
        """A connection with one call open: its request never ends, so the call stays open."""
        sock = FrameSocket(address)
        self.addCleanup(sock.close)
        sock.handshake()
        sock.send(headers_frames(1, header_block(grpc_request_headers(f"{SVC}/Unary"))))
        return sock

    def test_at_the_cap_the_connection_idle_longest_makes_room_for_a_new_client(self):
        # One worker, so that every connection is a candidate for the one that accepts the next.
        proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing", "--threads", "1",
                                    "--max-connections", "5")
        busy = self.open_busy(proxy.grpc_address)
        harness.wait_until(lambda: metrics(proxy).value("sparktrace_rpc_active_calls") == 1, 5,
                           message="the busy connection's call open")
        idle = []
        for _ in range(4):
            sock = FrameSocket(proxy.grpc_address)
            self.addCleanup(sock.close)
            sock.handshake()
            idle.append(sock)
        self.assertTrue(self.call_ok(proxy.grpc_address), "a sixth client was not served")
        goaway = idle[0].read_until(lambda f: f.type == GOAWAY, 5)
        self.assertIsNotNone(goaway, f"the connection idle longest got no GOAWAY: {idle[0].frames}")
        self.assertEqual(goaway.error_code, 0, "a graceful GOAWAY (NO_ERROR)")
        self.assertTrue(idle[0].wait_closed(5), "the evicted connection was kept open")
        for later in idle[1:]:
            self.assertFalse(later.wait_closed(0.2), "a connection idle for less long was closed")
        self.assertFalse(busy.wait_closed(0.2), "the connection with a call open was closed")
        after = metrics(proxy)
        self.assertGreaterEqual(after.value("sparktrace_relay_idle_connections_evicted_total"), 1)
        self.assertEqual(after.value("sparktrace_relay_limit_hits_total", limit="max_connections"), 0)
        self.assertLessEqual(after.value("sparktrace_relay_client_connections"), 5)

    def test_over_the_cap_with_every_connection_busy_a_new_one_is_closed_at_once(self):
        proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing", "--threads", "1",
                                    "--max-connections", "5")
        held = [self.open_busy(proxy.grpc_address) for _ in range(5)]
        harness.wait_until(lambda: metrics(proxy).value("sparktrace_rpc_active_calls") == 5, 5,
                           message="five calls open")
        extra = FrameSocket(proxy.grpc_address)
        self.addCleanup(extra.close)
        self.assertTrue(extra.wait_closed(5), "a sixth connection was kept")
        self.assertGreaterEqual(limit_hits(proxy, "max_connections"), 1)
        self.assertEqual(metrics(proxy).value("sparktrace_relay_idle_connections_evicted_total"), 0)
        for sock in held:
            self.assertFalse(sock.wait_closed(0.1), "a connection with a call open was closed")
        held.pop().close()
        harness.wait_until(lambda: metrics(proxy).value("sparktrace_relay_client_connections") == 4, 5,
                           message="the closed connection counted out")
        self.assertTrue(self.call_ok(proxy.grpc_address))

    def test_preface_only_connections_past_the_descriptor_fitted_cap_lock_no_client_out(self):
        """The probe's scenario: under `ulimit -n 1024` the cap is fitted to the descriptors; 1,100
        connections that send only the preface used to hold every slot for the 1 h idle timeout,
        and every new client got UNAVAILABLE."""
        wanted = 1_100 + 64
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard < wanted:
            self.skipTest(f"this test process may open {hard} descriptors, {wanted} needed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
        self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing", nofile=(1024, 1024))
        self.assertIn("lowered", proxy.stderr_text(), "the cap was not fitted to 1,024 descriptors")
        before = harness.open_channel(self, proxy.grpc_address,  # a client connected before the idlers
                                      options=[("grpc.use_local_subchannel_pool", 1)])
        self.assertEqual(before.unary_unary(f"{SVC}/Unary")(b"before", timeout=5), b"before")
        idlers = []
        for _ in range(1_100):
            sock = FrameSocket(proxy.grpc_address)
            idlers.append(sock)
            sock.send(PREFACE, settings_frame())  # and never another byte
        self.addCleanup(lambda: [sock.close() for sock in idlers])
        for attempt in range(3):  # new clients: a channel with a connection of its own each
            with harness.channel(proxy.grpc_address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
                self.assertEqual(channel.unary_unary(f"{SVC}/Unary")(b"new", timeout=10), b"new",
                                 f"new client {attempt} not served")
        # The idlers' connections were all made before the new clients', but the proxy may still be
        # taking the last of them from its listen backlog (a slow build): each evicts one when it does.
        def idlers_past_the_cap_evicted():
            now = metrics(proxy)
            return (now.value("sparktrace_relay_idle_connections_evicted_total")
                    >= 1_100 - now.value("sparktrace_relay_client_connections"))
        harness.wait_until(idlers_past_the_cap_evicted, 15, message="every idler past the cap evicted")
        after = metrics(proxy)
        cap = after.value("sparktrace_relay_client_connections")
        self.assertLess(cap, 1_100, "the cap was not below the idlers' count")
        self.assertGreaterEqual(after.value("sparktrace_relay_idle_connections_evicted_total"), 1_100 - cap)
        self.assertEqual(after.value("sparktrace_relay_limit_hits_total", limit="max_connections"), 0,
                         "a connection was refused while idle ones held slots")
        self.assertEqual(before.unary_unary(f"{SVC}/Unary")(b"still", timeout=5), b"still")
        probe_ms = []
        for _ in range(5):
            started = time.monotonic()
            status, _, _ = proxy.admin("/healthz")
            probe_ms.append((time.monotonic() - started) * 1000)
            self.assertEqual(status, 200)
        self.assertLess(sorted(probe_ms)[2], 100, f"/healthz median over 100 ms: {probe_ms}")

    def test_a_connection_that_never_speaks_is_closed_after_the_handshake_timeout(self):
        proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing", "--handshake-timeout", "300ms")
        silent = FrameSocket(proxy.grpc_address)
        self.addCleanup(silent.close)
        polite = FrameSocket(proxy.grpc_address)
        self.addCleanup(polite.close)
        polite.handshake()
        self.assertTrue(silent.wait_closed(5), "a silent connection was kept")
        self.assertEqual(limit_hits(proxy, "handshake_timeout"), 1)
        self.assertFalse(polite.wait_closed(1.0), "a connection past its preface was closed")
        self.assertTrue(self.call_ok(proxy.grpc_address))

    def test_an_idle_connection_gets_goaway_and_the_client_reconnects(self):
        proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing", "--idle-timeout", "500ms")
        client = FrameSocket(proxy.grpc_address)
        self.addCleanup(client.close)
        client.handshake()
        block = header_block(grpc_request_headers(f"{SVC}/Unary"))
        client.send(headers_frames(1, block), raw_frame(DATA, FLAG_END_STREAM, 1, grpc_frame(b"once")))
        goaway = client.read_until(lambda f: f.type == GOAWAY, 10)
        self.assertIsNotNone(goaway, client.frames)
        self.assertEqual(goaway.error_code, 0, "a graceful GOAWAY (NO_ERROR)")
        self.assertTrue(client.wait_closed(5))
        self.assertGreaterEqual(limit_hits(proxy, "idle_timeout"), 1)
        channel = harness.open_channel(self, proxy.grpc_address)
        for _ in range(3):  # across the idle closes a channel reconnects by itself
            self.assertEqual(channel.unary_unary(f"{SVC}/Unary")(b"again", timeout=5), b"again")

    def test_the_soft_descriptor_limit_is_raised_to_the_hard_one(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard <= 1024:
            self.skipTest(f"the hard limit ({hard}) leaves nothing to raise")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # inherited by the proxy
        try:
            proxy = harness.start_proxy(self, self.upstream.address, "--no-tracing")
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        self.assertEqual(resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE), (hard, hard))


@proxy_only
class OutageTest(unittest.TestCase):
    """With the upstream down, every call used to dial it again (61,447 attempts and as many
    warnings in a 6 s outage). Now the worker backs off and calls fail fast meanwhile."""

    def test_calls_during_an_outage_fail_fast_without_dialling_each_time(self):
        port = harness.free_port()
        proxy = harness.start_proxy(self, f"127.0.0.1:{port}", "--threads", "1", "--no-tracing")
        channel = harness.open_channel(self, proxy.grpc_address)
        failed = 0
        started = time.monotonic()
        while time.monotonic() - started < 2.0:
            try:
                channel.unary_unary(f"{SVC}/Unary")(b"x", timeout=5)
            except grpc.RpcError as error:
                self.assertEqual(error.code(), grpc.StatusCode.UNAVAILABLE, error.details())
                failed += 1
        self.assertGreater(failed, 50, "too few calls to show anything")
        seen = metrics(proxy)
        attempts = seen.value("sparktrace_upstream_connect_attempts_total")
        # 250 ms doubling: about 4 attempts in 2 s (plus jitter), not one per call.
        self.assertLessEqual(attempts, 8, f"{attempts} connection attempts for {failed} calls")
        self.assertGreater(seen.value("sparktrace_relay_limit_hits_total", limit="upstream_backoff"), 0)
        warnings = proxy.stderr_text().count("cannot connect to upstream")
        self.assertLessEqual(warnings, 2, proxy.stderr_tail())

        harness.start_upstream(self, port=port)
        harness.wait_until(lambda: harness.unary_ok(channel), 15, interval=0.05,
                           message="calls served once the upstream is back")


if __name__ == "__main__":
    unittest.main()
