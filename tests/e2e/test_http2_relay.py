"""The HTTP/2 frame relay seen from raw HTTP/2 peers (peers/raw_h2.py): headers and DATA cross it
byte for byte (user-agent, gzip-compressed messages, -bin values, frame splits), resets cross it
both ways and map to gRPC statuses, the upstream's MAX_CONCURRENT_STREAMS and the client's
grpc-timeout are kept, and malformed HTTP/2 is refused without harm (RFC 9113)."""

import base64
import gzip
import os
import resource
import socket
import statistics
import struct
import threading
import time
import unittest

import grpc
from hpack import NeverIndexedHeaderTuple

import harness
from harness import new_id, proxy_only
from peers.raw_h2 import (
    CANCEL, CONTINUATION, DATA, ENHANCE_YOUR_CALM, FLAG_ACK, FLAG_END_HEADERS, FLAG_END_STREAM,
    FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, GOAWAY, HEADERS, INADEQUATE_SECURITY, PING,
    PROTOCOL_ERROR, REFUSED_STREAM, RST_STREAM, SETTINGS, SETTINGS_ENABLE_PUSH,
    SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_CONCURRENT_STREAMS, WINDOW_UPDATE, Behaviour,
    FrameSocket, Hooks, ResetOnHeaders, Silent, grpc_frame, grpc_request_headers, gzip_frame,
    header, header_block, parse_grpc_frames, raw_frame, settings_frame)

SVC = "/sparktrace.test.Echo"
RST_BUDGET = 1.0  # seconds from a client's RST_STREAM to the upstream's; typically ~1 ms
REJECT_BUDGET = 2.0  # seconds for the proxy to answer malformed input

RESET_STATUSES = [  # upstream RST_STREAM code -> the status the client gets (grpc's mapping)
    (REFUSED_STREAM, grpc.StatusCode.UNAVAILABLE),
    (CANCEL, grpc.StatusCode.CANCELLED),
    (ENHANCE_YOUR_CALM, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (INADEQUATE_SECURITY, grpc.StatusCode.PERMISSION_DENIED),
    (PROTOCOL_ERROR, grpc.StatusCode.INTERNAL),
]


def b64_nopad(data):
    return base64.b64encode(data).rstrip(b"=")


def non_pseudo(headers):
    return [(k, v) for k, v in headers if not k.startswith(b":")]


class HeldEcho(Behaviour):
    """Echo, but each stream stays open `hold` seconds after its request ended, so that a
    second stream sent against the upstream's MAX_CONCURRENT_STREAMS would overlap it."""

    def __init__(self, hold):
        self.hold = hold

    def on_end(self, stream):
        payload = bytes(stream.data)
        timer = threading.Timer(self.hold, lambda: stream.respond_grpc([payload]))
        timer.daemon = True
        timer.start()


class Http2RelayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.grpc_upstream = harness.start_upstream(cls)
        cls.grpc_address = harness.target(cls, cls.grpc_upstream)
        cls.grpc_channel = harness.open_channel(cls, cls.grpc_address)
        cls.raw_upstream = harness.start_raw_upstream(cls)
        cls.raw_address = harness.target(cls, cls.raw_upstream)
        cls.raw_channel = harness.open_channel(cls, cls.raw_address)

    def assert_serves(self, channel=None, address=None):
        """A plain gRPC call through the proxy still works (an echo, byte for byte)."""
        payload = os.urandom(333)
        channel = channel or self.grpc_channel
        self.assertEqual(channel.unary_unary(f"{SVC}/Unary")(payload, timeout=5), payload)

    # --- 1. user-agent -------------------------------------------------------------------------

    def test_user_agent_byte_exact(self):
        agent = "my-client/1.2 (x)"
        seen = {}
        for name, address in (("direct", self.grpc_upstream.address), ("proxied", self.grpc_address)):
            tid = new_id()
            client = harness.open_raw_client(self, address)
            stream = client.grpc_call(f"{SVC}/Unary", [grpc_frame(b"ua")],
                                      extra_headers=[("user-agent", agent), ("x-test-id", tid)])
            self.assertEqual(stream.grpc_status(), 0, stream.status_block())
            seen[name] = self.grpc_upstream.record(tid).user_agent
        self.assertEqual(seen, {"direct": agent, "proxied": agent})

        # grpcio appends its own "grpc-python/... grpc-c/..." to the primary user agent: whatever
        # it sends directly must be what the upstream sees through the proxy, to the byte.
        seen = {}
        for name, address in (("direct", self.grpc_upstream.address), ("proxied", self.grpc_address)):
            tid = new_id()
            with harness.channel(address, user_agent=agent) as ch:
                ch.unary_unary(f"{SVC}/Unary")(b"", metadata=[("x-test-id", tid)], timeout=5)
            seen[name] = self.grpc_upstream.record(tid).user_agent
        self.assertTrue(seen["direct"].startswith(agent), seen)
        self.assertEqual(seen["proxied"], seen["direct"])

    # --- 2. compressed stream, byte for byte ---------------------------------------------------

    def test_gzip_stream_byte_identical_both_ways(self):
        tid = new_id()
        requests = [gzip_frame(b"request one " * 300), gzip_frame(os.urandom(2000)),
                    gzip_frame(b"")]
        request_frames = [requests[0][:3],  # not even the whole 5-byte prefix
                          requests[0][3:],
                          requests[1] + requests[2]]  # two messages in one frame
        request_headers = grpc_request_headers(f"{SVC}/Bidi", extra=[
            ("grpc-encoding", "gzip"), ("grpc-accept-encoding", "gzip,identity"),
            ("x-test-id", tid), ("x-custom", "Value with  spaces/1.0"),
            ("x-blob-bin", b64_nopad(bytes(range(256)))), ("x-custom", "second")])
        # A secret the client sends as a never-indexed literal stays one upstream (RFC 7541 §6.2.3).
        request_headers.append(NeverIndexedHeaderTuple(b"x-api-token", b"e2e-secret"))
        responses = [gzip_frame(b"response one " * 200), gzip_frame(os.urandom(1500)),
                     gzip_frame(b"third")]
        response_frames = [responses[0] + responses[1], responses[2][:4], responses[2][4:]]
        response_headers = [(b":status", b"200"), (b"content-type", b"application/grpc"),
                            (b"grpc-encoding", b"gzip"), (b"grpc-accept-encoding", b"gzip"),
                            (b"x-resp", b"r1"), (b"x-resp-bin", b64_nopad(b"\x00\xff\x10")),
                            NeverIndexedHeaderTuple(b"x-resp-token", b"downstream-secret")]
        trailers = [(b"grpc-status", b"0"), (b"x-custom-trailer", b"t"),
                    (b"x-trailer-bin", b64_nopad(bytes(range(255, 200, -1))))]

        def answer(stream):
            with stream.endpoint.batch():
                stream.send_headers(response_headers)
                stream.send_frames(response_frames)
                stream.send_headers(trailers, end_stream=True)

        self.raw_upstream.behave(tid, Hooks(on_end=answer))
        client = harness.open_raw_client(self, self.raw_address)
        stream = client.request(request_headers)
        stream.send_frames(request_frames, end_stream=True)
        self.assertTrue(stream.wait_ended(5), "no complete answer")
        upstream = self.raw_upstream.wait_stream(tid)

        # What the upstream got: every byte, every header but :scheme/:authority as sent, and
        # (tracing being on) the proxy's own traceparent at the end (docs/tracing.md).
        self.assertEqual(bytes(upstream.data), b"".join(requests))
        forwarded = non_pseudo(upstream.headers)
        if not harness.DIRECT:
            self.assertEqual(forwarded[-1][0], b"traceparent", forwarded)
            # A value made for this one call goes as a never-indexed literal: indexed, each call's
            # would push the repeated headers out of the connection's HPACK table (Header::never_index).
            never_indexed = [h[0] for h in upstream.headers if isinstance(h, NeverIndexedHeaderTuple)]
            self.assertEqual(never_indexed, [b"x-api-token", b"traceparent"], upstream.headers)
            self.assertRegex(forwarded.pop()[1], rb"^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$")
        self.assertEqual(forwarded, non_pseudo(request_headers))
        for name in (b":method", b":path"):
            self.assertEqual(header(upstream.headers, name), header(request_headers, name))
        self.assertEqual([flag for flag, _ in parse_grpc_frames(upstream.data)], [1, 1, 1])

        # What the client got: the upstream's bytes, headers and trailers, the secret never indexed.
        self.assertEqual(stream.headers, response_headers)
        self.assertEqual([h[0] for h in stream.headers if isinstance(h, NeverIndexedHeaderTuple)],
                         [b"x-resp-token"])
        self.assertEqual(bytes(stream.data), b"".join(responses))
        self.assertEqual(stream.trailers, trailers)
        self.assertIsNone(stream.reset_code)
        self.assertEqual([gzip.decompress(payload) for _, payload in parse_grpc_frames(stream.data)],
                         [gzip.decompress(m[5:]) for m in responses])

    # --- 3. client reset mid-message ---------------------------------------------------------

    def test_client_reset_mid_message_reaches_upstream(self):
        client = harness.open_raw_client(self, self.raw_address)
        latencies = []
        for _ in range(5):
            tid = new_id()
            self.raw_upstream.behave(tid, Silent())
            message = grpc_frame(os.urandom(1000))
            stream = client.request(grpc_request_headers(f"{SVC}/ClientStream",
                                                         extra=[("x-test-id", tid)]))
            stream.send_data(message[:500])
            upstream = self.raw_upstream.wait_stream(tid)
            self.assertTrue(upstream.endpoint.wait_for(lambda: len(upstream.data) == 500, 2),
                            f"the half message did not reach the upstream ({len(upstream.data)} bytes)")
            sent_at = time.monotonic()
            stream.send_reset(CANCEL)
            self.assertTrue(upstream.reset.wait(RST_BUDGET),
                            f"upstream saw no RST_STREAM within {RST_BUDGET}s")
            self.assertTrue(upstream.remote_reset)
            self.assertEqual(upstream.reset_code, CANCEL)
            latencies.append(upstream.reset_at - sent_at)
        summary = (f"RST_STREAM client->upstream: median {statistics.median(latencies) * 1000:.2f} ms, "
                   f"all {[round(x * 1000, 2) for x in latencies]} ms")
        self.assertLess(max(latencies), RST_BUDGET, summary)
        self.assert_serves(self.raw_channel)
        self.assertEqual(self.raw_upstream.errors, [])

    @proxy_only
    def test_queued_bytes_flow_once_the_window_opens(self):
        """A peer whose window is shut stalls its stream at the proxy, which then holds no more
        than the stream's window (the sender is held back, not buffered for); once one frame
        opens the peer's windows wide (SETTINGS_INITIAL_WINDOW_SIZE and a connection
        WINDOW_UPDATE together, as grpc-core's BDP probe sends them) everything flows, with
        nothing more coming from that peer."""
        body = grpc_frame(os.urandom(900_000))
        ok = [(b":status", b"200"), (b"content-type", b"application/grpc")]

        with self.subTest(direction="to the client"):
            tid = new_id()
            answered = threading.Event()
            failed = []

            def answer(stream):
                def run():
                    try:
                        stream.send_headers(ok)
                        stream.send_body(body)
                        stream.send_headers([(b"grpc-status", b"0")], end_stream=True)
                        answered.set()
                    except AssertionError as error:  # reported below, not lost on this thread
                        failed.append(error)

                threading.Thread(target=run, daemon=True).start()

            self.raw_upstream.behave(tid, Hooks(on_end=answer))
            client = harness.open_raw_client(self, self.raw_address, auto_ack=False)
            stream = client.request(grpc_request_headers(f"{SVC}/ServerStream",
                                                         extra=[("x-test-id", tid)]))
            stream.send_data(grpc_frame(b"go"), end_stream=True)
            self.assertTrue(client.wait_for(lambda: len(stream.data) == 65_535, 5),
                            f"{len(stream.data)} bytes before the client's window closed")
            self.assertFalse(answered.is_set(), "the proxy took a 900 KB answer for a reader that "
                             "reads nothing: its window is what holds the upstream back")
            client.open_windows(16 << 20)
            self.assertTrue(stream.wait_ended(10),
                            f"stalled at {len(stream.data)} of {len(body)} bytes")
            self.assertEqual((stream.grpc_status(), bytes(stream.data)), (0, body))
            self.assertEqual(failed, [])

        with self.subTest(direction="to the upstream"):
            upstream = harness.start_raw_upstream(self, default=Silent(), auto_ack=False)
            client = harness.open_raw_client(self, harness.target(self, upstream))
            tid = new_id()
            stream = client.request(grpc_request_headers(f"{SVC}/ClientStream",
                                                         extra=[("x-test-id", tid)]))
            sent = []
            sender = threading.Thread(target=lambda: sent.append(stream.send_body(body, end_stream=True)),
                                      daemon=True)
            sender.start()
            up = upstream.wait_stream(tid)
            self.assertTrue(up.endpoint.wait_for(lambda: len(up.data) == 65_535, 5),
                            f"{len(up.data)} bytes before the upstream's window closed")
            up.endpoint.open_windows(16 << 20)
            self.assertTrue(up.wait_ended(10), f"stalled at {len(up.data)} of {len(body)} bytes")
            self.assertEqual(bytes(up.data), body)
            sender.join(10)
            self.assertEqual(sent, [None], "the client's body was not all sent")

    # --- 4. the upstream's MAX_CONCURRENT_STREAMS ---------------------------------------------

    def test_64_calls_against_max_concurrent_streams_1(self):
        raw = harness.start_raw_upstream(self, default=HeldEcho(0.005),
                                         settings={SETTINGS_MAX_CONCURRENT_STREAMS: 1})
        grpc_up = harness.start_upstream(self, options=[("grpc.max_concurrent_streams", 1)])
        for name, upstream in (("raw h2", raw), ("grpcio", grpc_up)):
            with self.subTest(upstream=name):
                channel = harness.open_channel(self, harness.target(self, upstream))
                payloads = [os.urandom(100 + i) for i in range(64)]
                results = [None] * 64

                def call(i):
                    try:
                        results[i] = channel.unary_unary(f"{SVC}/Unary")(payloads[i], timeout=20)
                    except grpc.RpcError as error:
                        results[i] = error

                threads = [threading.Thread(target=call, args=(i,)) for i in range(64)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(30)
                failures = [(i, r) for i, r in enumerate(results) if r != payloads[i]]
                self.assertEqual(failures, [])
        self.assertEqual(raw.errors, [], "the proxy broke the upstream's SETTINGS")
        per_connection = [c.max_open_inbound for c in raw.connections]
        self.assertEqual(sum(len(c.streams) for c in raw.connections), 64)
        self.assertEqual(max(per_connection), 1, per_connection)

    # --- 5. upstream resets become statuses ---------------------------------------------------

    def test_upstream_reset_before_headers_maps_to_status(self):
        # SPARKTRACE_DIRECT=1 runs this against grpcio's own mapping: the same table.
        for code, status in RESET_STATUSES:
            with self.subTest(code=code, status=status):
                tid = new_id()
                self.raw_upstream.behave(tid, ResetOnHeaders(code))
                with self.assertRaises(grpc.RpcError) as ctx:
                    self.raw_channel.unary_unary(f"{SVC}/Unary")(b"x", timeout=5,
                                                                 metadata=[("x-test-id", tid)])
                self.assertEqual(ctx.exception.code(), status, ctx.exception.details())
        self.assert_serves(self.raw_channel)

    def test_upstream_reset_after_a_message_maps_to_status(self):
        # The reset waits until the client has the message: a reset read together with the
        # DATA before it may cost the message (grpcio alone drops it about half the time).
        for code, status in RESET_STATUSES:
            with self.subTest(code=code, status=status):
                tid = new_id()
                delivered = threading.Event()

                def answer(stream, code=code, delivered=delivered):
                    stream.send_headers([(b":status", b"200"),
                                         (b"content-type", b"application/grpc")])
                    stream.send_data(grpc_frame(b"first"))

                    def reset_once_delivered():
                        if delivered.wait(5):
                            stream.send_reset(code)

                    threading.Thread(target=reset_once_delivered, daemon=True).start()

                self.raw_upstream.behave(tid, Hooks(on_end=answer))
                call = self.raw_channel.unary_stream(f"{SVC}/ServerStream")(
                    b"x", timeout=5, metadata=[("x-test-id", tid)])
                self.assertEqual(next(call), b"first")
                delivered.set()
                with self.assertRaises(grpc.RpcError):
                    next(call)
                self.assertEqual(call.code(), status, call.details())

    # --- 6. grpc-timeout -----------------------------------------------------------------------

    def test_deadline_enforced_against_a_silent_upstream(self):
        tid = new_id()
        self.raw_upstream.behave(tid, Silent())
        started = time.monotonic()
        with self.assertRaises(grpc.RpcError) as ctx:
            self.raw_channel.unary_unary(f"{SVC}/Unary")(b"x", timeout=0.3,
                                                         metadata=[("x-test-id", tid)])
        elapsed = time.monotonic() - started
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(elapsed, 2.0)
        upstream = self.raw_upstream.wait_stream(tid)
        timeout = header(upstream.headers, b"grpc-timeout")
        self.assertIsNotNone(timeout, "grpc-timeout did not reach the upstream")
        # grpcio rounds its remaining time up ("301m"); the proxy passes the text on as is.
        self.assertTrue(0.2 < parse_grpc_timeout(timeout) <= 0.35, timeout)
        self.assertTrue(upstream.reset.wait(2), "upstream stream never reset")
        self.assertTrue(upstream.remote_reset)

    @proxy_only
    def test_deadline_enforced_by_the_proxy_itself(self):
        """A raw client never gives up on its own: the DEADLINE_EXCEEDED and the upstream's
        RST_STREAM can only come from the proxy."""
        tid = new_id()
        self.raw_upstream.behave(tid, Silent())
        client = harness.open_raw_client(self, self.raw_address)
        started = time.monotonic()
        stream = client.request(grpc_request_headers(
            f"{SVC}/Unary", extra=[("grpc-timeout", "300m"), ("x-test-id", tid)]))
        stream.send_data(grpc_frame(b"x"), end_stream=True)
        upstream = self.raw_upstream.wait_stream(tid)
        self.assertEqual(header(upstream.headers, b"grpc-timeout"), b"300m")
        self.assertTrue(stream.wait_ended(2), "no status within 2 s of a 300 ms deadline")
        elapsed = time.monotonic() - started
        self.assertEqual(stream.grpc_status(), grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
                         stream.status_block())
        self.assertGreaterEqual(elapsed, 0.29, "deadline cut short")
        self.assertTrue(upstream.reset.wait(2), "upstream stream never reset")
        self.assertEqual((upstream.remote_reset, upstream.reset_code), (True, CANCEL))

    def test_longest_grpc_timeouts_are_not_expired_at_once(self):
        """grpc-timeout takes up to 8 digits of any unit: "99999999H" (11,400 years) is a
        valid, very long deadline, not an expired one."""
        client = harness.open_raw_client(self, self.raw_address)
        for value in ("99999999S", "99999999M", "2562047H", "2562048H", "99999999H"):
            with self.subTest(grpc_timeout=value):
                tid = new_id()
                release = threading.Event()

                def answer(stream, release=release):
                    payload = bytes(stream.data)
                    threading.Thread(target=lambda: release.wait(5) and stream.respond_grpc([payload]),
                                     daemon=True).start()

                self.raw_upstream.behave(tid, Hooks(on_end=answer))
                stream = client.request(grpc_request_headers(
                    f"{SVC}/Unary", extra=[("grpc-timeout", value), ("x-test-id", tid)]))
                stream.send_data(grpc_frame(b"long"), end_stream=True)
                self.raw_upstream.wait_stream(tid)
                # The proxy has armed its deadline timer before it sent the request upstream; one
                # more event loop round (a PING answered) and a deadline in the past has fired.
                client.ping_roundtrip()
                release.set()
                self.assertTrue(stream.wait_ended(5), "no answer")
                self.assertEqual((stream.grpc_status(), bytes(stream.data)), (0, grpc_frame(b"long")),
                                 stream.status_block())

    # --- 7. malformed HTTP/2 -------------------------------------------------------------------

    @proxy_only
    def test_malformed_input_refused(self):
        proxy = harness.start_proxy(self, self.grpc_upstream.address)
        channel = harness.open_channel(self, proxy.grpc_address)
        request = grpc_request_headers(f"{SVC}/Unary")
        backwards_ids = [new_id(), new_id()]  # streams 5 and 3

        def block(headers=request, drop=(), extra=()):
            return header_block([(k, v) for k, v in headers if k not in drop] + list(extra))

        def headers_frame(stream_id, hblock, end_stream=False):
            flags = FLAG_END_HEADERS | (FLAG_END_STREAM if end_stream else 0)
            return raw_frame(HEADERS, flags, stream_id, hblock)

        def u32(value):
            return struct.pack(">I", value)

        # name, frames after a valid handshake (None: no handshake), expected outcome.
        # ("goaway", code): connection error; ("rst", code): stream error, connection kept.
        cases = [
            ("HTTP/1.1 instead of the preface", None,
             b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n", "closed"),
            ("DATA on stream 0", True, raw_frame(DATA, 0, 0, b"x"), ("goaway", PROTOCOL_ERROR)),
            ("HEADERS on an even stream", True, headers_frame(2, block(), True),
             ("goaway", PROTOCOL_ERROR)),
            ("frame over SETTINGS_MAX_FRAME_SIZE", True,
             headers_frame(1, block()) + raw_frame(DATA, 0, 1, bytes(70_000)),
             ("goaway", FRAME_SIZE_ERROR)),
            ("WINDOW_UPDATE 0 on the connection", True, raw_frame(WINDOW_UPDATE, 0, 0, u32(0)),
             ("goaway", PROTOCOL_ERROR)),
            # RFC 9113 §6.9 makes this a stream error; nghttp2 escalates it to a connection
            # error, which §5.4.1 allows ("MAY choose to treat a stream error as a connection
            # error").
            ("WINDOW_UPDATE 0 on a stream", True,
             headers_frame(1, block()) + raw_frame(WINDOW_UPDATE, 0, 1, u32(0)),
             ("goaway", PROTOCOL_ERROR)),
            ("SETTINGS_ENABLE_PUSH=2", True, settings_frame([(SETTINGS_ENABLE_PUSH, 2)]),
             ("goaway", PROTOCOL_ERROR)),
            ("SETTINGS_INITIAL_WINDOW_SIZE=2^31", True,
             settings_frame([(SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31)]),
             ("goaway", FLOW_CONTROL_ERROR)),
            ("CONTINUATION without HEADERS", True,
             raw_frame(CONTINUATION, FLAG_END_HEADERS, 1, block()), ("goaway", PROTOCOL_ERROR)),
            ("request without :path", True, headers_frame(1, block(drop=(b":path",)), True),
             ("rst", PROTOCOL_ERROR)),
            ("connection: keep-alive", True,
             headers_frame(1, block(extra=[(b"connection", b"keep-alive")]), True),
             ("rst", PROTOCOL_ERROR)),
            ("te: gzip", True,
             headers_frame(1, block(drop=(b"te",), extra=[(b"te", b"gzip")]), True),
             ("rst", PROTOCOL_ERROR)),
            ("upper-case header name", True,
             headers_frame(1, block(extra=[(b"X-Upper", b"1")]), True), ("rst", PROTOCOL_ERROR)),
            # §5.1.1 wants a PROTOCOL_ERROR connection error; nghttp2 only does that for ids of
            # idle streams and ignores a HEADERS on an (implicitly) closed one, as if it raced
            # a reset. Either way the request must not reach the upstream.
            ("stream id going backwards", True,
             headers_frame(5, block(extra=[(b"x-test-id", backwards_ids[0])]))
             + headers_frame(3, block(extra=[(b"x-test-id", backwards_ids[1])]), True),
             ("goaway or ignored", PROTOCOL_ERROR)),
            ("PING of 7 bytes", True, raw_frame(PING, 0, 0, b"1234567"),
             ("goaway", FRAME_SIZE_ERROR)),
            ("RST_STREAM on an idle stream", True, raw_frame(RST_STREAM, 0, 1, u32(CANCEL)),
             ("goaway", PROTOCOL_ERROR)),
            ("10k SETTINGS", True, settings_frame([(SETTINGS_MAX_CONCURRENT_STREAMS, 100)]) * 10_000,
             ("flood", SETTINGS)),
            ("10k PINGs", True, raw_frame(PING, 0, 0, b"flooding") * 10_000, ("flood", PING)),
        ]
        for name, handshake, payload, expected in cases:
            with self.subTest(case=name):
                sock = FrameSocket(proxy.grpc_address)
                self.addCleanup(sock.close)
                if handshake:
                    sock.handshake()
                try:
                    sock.send(payload)
                except OSError:
                    pass  # closed while we were still writing: the outcome says how
                if expected == "closed":
                    kind, code, _ = sock.outcome(REJECT_BUDGET)
                    self.assertIn((kind, code), [("closed", None), ("goaway", PROTOCOL_ERROR)],
                                  sock.frames)
                    self.assertTrue(sock.wait_closed(REJECT_BUDGET), "connection left open")
                elif expected[0] == "flood":
                    self.check_flood(sock, expected[1], 10_000)
                elif expected[0] == "goaway or ignored":
                    self.check_backwards(sock, *backwards_ids)
                else:
                    kind, code, frame = sock.outcome(REJECT_BUDGET)
                    self.assertEqual((kind, code), expected, sock.frames)
                    if kind == "goaway":
                        self.assertTrue(sock.wait_closed(REJECT_BUDGET),
                                        "connection still open after GOAWAY")
                    else:
                        self.assertEqual(frame.stream_id, 1)
                        # A stream error leaves the connection up: it still answers a PING.
                        sock.send(raw_frame(PING, 0, 0, b"still-up"))
                        ack = sock.read_until(lambda f: f.type == PING and f.flags & FLAG_ACK
                                              and f.payload == b"still-up", REJECT_BUDGET)
                        self.assertIsNotNone(ack, f"connection lost after a stream error: {sock.frames}")
                self.assertIsNone(proxy.proc.poll(), "proxy died")
                self.assert_serves(channel)

    def check_backwards(self, sock, valid_id, backwards_id):
        """After HEADERS on stream 5 then on stream 3: GOAWAY(PROTOCOL_ERROR), or stream 3
        ignored (a PING sent after it is answered first) and never forwarded."""
        sock.send(raw_frame(PING, 0, 0, b"probe-01"))
        frame = sock.read_until(lambda f: f.type in (GOAWAY, RST_STREAM)
                                or (f.type == PING and f.flags & FLAG_ACK), REJECT_BUDGET)
        self.assertIsNotNone(frame, f"no answer: {sock.frames} eof={sock.eof}")
        if frame.type == GOAWAY:
            self.assertEqual(frame.error_code, PROTOCOL_ERROR)
            return
        self.assertEqual(frame.type, PING, sock.frames)
        # Stream 5 was valid: finishing it proves the upstream side is past stream 3 too.
        sock.send(raw_frame(DATA, FLAG_END_STREAM, 5, grpc_frame(b"five")))
        end = sock.read_until(lambda f: f.stream_id == 5 and f.type == HEADERS
                              and f.flags & FLAG_END_STREAM, REJECT_BUDGET)
        self.assertIsNotNone(end, f"stream 5 never finished: {sock.frames}")
        self.assertEqual(self.grpc_upstream.record(valid_id, timeout=1).received, 1)
        self.assertEqual(self.grpc_upstream.records(backwards_id), [],
                         "HEADERS on a lower stream id was forwarded")

    def check_flood(self, sock, frame_type, count):
        """A flood is either answered in full (every ACK) or cut (GOAWAY or close): both
        bounded in time, neither harmful."""
        acks = 0
        goaway = None

        def done(frame):
            nonlocal acks, goaway
            if frame.type == frame_type and frame.flags & FLAG_ACK:
                acks += 1
            if frame.type == GOAWAY:
                goaway = frame
            return acks >= count or goaway is not None

        sock.read_until(done, 5)
        self.assertTrue(acks >= count or goaway is not None or sock.eof,
                        f"flood neither answered nor cut: {acks} ACKs, eof={sock.eof}")


class DescriptorExhaustionTest(unittest.TestCase):
    """Own proxy: this test takes its file descriptors away."""

    @proxy_only
    @unittest.skipIf(harness.SANITIZED, "the sanitizer runtimes need descriptors of their own: at the "
                     "limit they report errors of their own making")
    def test_out_of_descriptors_pauses_accepting_then_recovers(self):
        upstream = harness.start_upstream(self)
        proxy = harness.start_proxy(self, upstream.address, "--threads", "1")
        channel = harness.open_channel(self, proxy.grpc_address)
        self.assertEqual(channel.unary_unary(f"{SVC}/Unary")(b"before", timeout=5), b"before")
        open_fds = len(os.listdir(f"/proc/{proxy.pid}/fd"))
        _, hard = resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE)
        # Room for two more descriptors: the connections below exhaust it at once.
        resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE, (open_fds + 2, hard))
        host, port = proxy.grpc_address.rsplit(":", 1)
        sockets = [socket.create_connection((host, int(port)), timeout=5) for _ in range(8)]
        try:
            harness.wait_until(lambda: "cannot accept connections" in proxy.stderr_text(), 10,
                               message="the accept failure logged")
            # A listener that stays readable while accept() fails would spin a core: the worker
            # pauses instead. Measured over one second of pending connections.
            cpu_before = harness.process_cpu_seconds(proxy.pid)
            time.sleep(1.0)
            cpu = harness.process_cpu_seconds(proxy.pid) - cpu_before
            self.assertLess(cpu, 0.5, f"proxy used {cpu:.2f} s of CPU in 1 s while out of descriptors")
            self.assertIsNone(proxy.proc.poll(), "proxy died when out of descriptors")
        finally:
            for sock in sockets:
                sock.close()
        resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE, (hard, hard))
        fresh = harness.open_channel(self, proxy.grpc_address,
                                     options=[("grpc.use_local_subchannel_pool", 1)])
        harness.wait_until(lambda: harness.unary_ok(fresh), 10, message="a call after descriptors came back")


class ShutdownWhileResolvingTest(unittest.TestCase):
    """SIGTERM while the upstream's name is still being looked up: evdns reports the cancelled
    lookup later, after the connection that asked is gone (this crashed the proxy half the time)."""

    @proxy_only
    def test_sigterm_during_the_upstream_lookup_exits_cleanly(self):
        for attempt in range(10):
            with self.subTest(attempt=attempt):
                proxy = harness.start_proxy(self, "upstream.invalid:15002", "--no-tracing")
                proxy.terminate()
                proxy.expect_exit = True
                self.assertEqual(proxy.wait_exit(10), 0, proxy.stderr_tail())


def parse_grpc_timeout(value):
    units = {b"H": 3600, b"M": 60, b"S": 1, b"m": 1e-3, b"u": 1e-6, b"n": 1e-9}
    return int(value[:-1]) * units[value[-1:]]


if __name__ == "__main__":
    unittest.main()
