"""The proxy forwards every call kind and every byte of payload, metadata and status."""

import hashlib
import os
import queue
import unittest

import grpc

import harness
from harness import md, new_id
from peers.upstream_server import pattern, status_details

SVC = "/sparktrace.test.Echo"


class ForwardingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)
        cls.address = harness.target(cls, cls.upstream)
        cls.channel = harness.open_channel(cls, cls.address)

    def call(self, kind, method=None):
        path = method or f"{SVC}/{kind}"
        return {
            "Unary": self.channel.unary_unary,
            "ServerStream": self.channel.unary_stream,
            "ClientStream": self.channel.stream_unary,
            "Bidi": self.channel.stream_stream,
        }[kind](path)

    # --- payloads and call kinds -----------------------------------------------------------
    def test_unary_random_payload_byte_exact(self):
        for size in (0, 1, 4095, 65537, 3 * 1024 * 1024 + 7):
            with self.subTest(size=size):
                payload = os.urandom(size)
                tid = new_id()
                response, call = self.call("Unary").with_call(
                    payload, metadata=[("x-test-id", tid)], timeout=20)
                self.assertEqual(len(response), size)
                self.assertEqual(hashlib.sha256(response).digest(), hashlib.sha256(payload).digest())
                self.assertEqual(md(call.trailing_metadata(), "x-request-sha256"),
                                 [hashlib.sha256(payload).hexdigest()])
                self.assertEqual(self.upstream.record(tid).received, 1)

    def test_server_streaming(self):
        tid = new_id()
        request = os.urandom(333)
        responses = list(self.call("ServerStream")(
            request, timeout=20,
            metadata=[("x-test-id", tid), ("x-test-stream-count", "50"),
                      ("x-test-message-bytes", "10000")]))
        self.assertEqual(responses, [pattern(tid, i, 10000) for i in range(50)])
        self.assertEqual(self.upstream.record(tid).request_sha256,
                         [hashlib.sha256(request).hexdigest()])

    def test_client_streaming(self):
        tid = new_id()
        requests = [os.urandom(n) for n in (0, 1, 100, 70000, 5, 1 << 20)]
        response, call = self.call("ClientStream").with_call(
            iter(requests), metadata=[("x-test-id", tid)], timeout=20)
        self.assertEqual(response, b"".join(hashlib.sha256(r).digest() for r in requests))
        self.assertEqual(md(call.trailing_metadata(), "x-request-count"), [str(len(requests))])

    def test_bidi_ping_pong_and_half_close(self):
        """Each response must arrive before the next request is sent: a proxy that buffers
        the request stream until half-close would deadlock here (bounded by the timeout)."""
        outbox = queue.Queue()
        stream = self.call("Bidi")(iter(outbox.get, None), timeout=20,
                                   metadata=[("x-test-id", new_id())])
        for i in range(20):
            msg = os.urandom(i * 97)
            outbox.put(msg)
            self.assertEqual(next(stream), msg)
        outbox.put(None)  # half-close
        self.assertEqual(list(stream), [b"half-closed:20"])
        self.assertEqual(stream.code(), grpc.StatusCode.OK)

    def test_unknown_service_path_forwarded(self):
        """The proxy has no service list: whatever path the client uses reaches upstream."""
        path = f"/{new_id('pkg').replace('-', '')}.v9.Whatever/Unary"
        tid = new_id()
        self.assertEqual(self.call("Unary", path)(b"hi", metadata=[("x-test-id", tid)],
                                                  timeout=10), b"hi")
        self.assertEqual(self.upstream.record(tid).method, path)

    def test_upstream_unimplemented_relayed(self):
        with self.assertRaises(grpc.RpcError) as ctx:
            self.channel.unary_unary(f"{SVC}/NoSuchMethod")(b"x", timeout=10)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNIMPLEMENTED)

    # --- metadata ---------------------------------------------------------------------------
    def test_request_metadata_byte_exact(self):
        tid = new_id()
        sent = [
            ("x-test-id", tid),
            ("authorization", "Bearer eyJhbGciOi.J9-_~+/=="),
            ("authentication", "Basic dXNlcjpwYXNz"),
            ("x-multi", "first"),
            ("x-raw-bin", bytes(range(256))),
            ("x-multi", "second, with comma"),
            ("x-raw-bin", b""),
            ("x-multi", "third"),
            ("x-empty", ""),
            ("x-printable", "a b !\"#$%&'()*+-./:;<=>?@[\\]^_`{|}~"),
        ]
        self.call("Unary")(b"m", metadata=sent, timeout=10)
        seen = self.upstream.record(tid).metadata
        for key in {k for k, _ in sent}:
            with self.subTest(key=key):
                self.assertEqual(md(seen, key), md(sent, key))

    def test_user_agent_kept(self):
        """The upstream must see the client's own user-agent first; the proxy may append."""
        agent = "sparktrace-e2e/1.0 (ua-test)"
        direct_id, proxied_id = new_id(), new_id()
        # What this client's full user-agent looks like on the wire, measured directly.
        with harness.channel(self.upstream.address, user_agent=agent) as direct:
            direct.unary_unary(f"{SVC}/Unary")(b"", metadata=[("x-test-id", direct_id)],
                                                timeout=10)
        with harness.channel(self.address, user_agent=agent) as proxied:
            proxied.unary_unary(f"{SVC}/Unary")(b"", metadata=[("x-test-id", proxied_id)],
                                                 timeout=10)
        client_agent = self.upstream.record(direct_id).user_agent
        self.assertTrue(client_agent.startswith(agent), client_agent)
        self.assertTrue(self.upstream.record(proxied_id).user_agent.startswith(client_agent),
                        self.upstream.record(proxied_id).user_agent)

    def test_response_initial_and_trailing_metadata(self):
        for kind in ("Unary", "ServerStream"):
            with self.subTest(kind=kind):
                req_md = [("x-echo-initial-x-one", "1"),
                          ("x-echo-initial-x-blob-bin", bytes(range(255, -1, -1))),
                          ("x-echo-initial-x-one", "uno"),
                          ("x-echo-trailing-x-done", "yes"),
                          ("x-echo-trailing-x-tail-bin", b"\x00\r\n\x00"),
                          ("x-echo-trailing-x-done", "twice")]
                if kind == "Unary":
                    _, call = self.call(kind).with_call(b"r", metadata=req_md, timeout=10)
                else:
                    call = self.call(kind)(b"r", metadata=req_md, timeout=10)
                    self.assertEqual(len(list(call)), 1)
                initial, trailing = call.initial_metadata(), call.trailing_metadata()
                self.assertEqual(md(initial, "x-one"), ["1", "uno"])
                self.assertEqual(md(initial, "x-blob-bin"), [bytes(range(255, -1, -1))])
                self.assertEqual(md(trailing, "x-done"), ["yes", "twice"])
                self.assertEqual(md(trailing, "x-tail-bin"), [b"\x00\r\n\x00"])
                # initial metadata must not leak into trailers or vice versa
                self.assertEqual(md(trailing, "x-one"), [])
                self.assertEqual(md(initial, "x-done"), [])

    # --- status -------------------------------------------------------------------------------
    def test_every_status_code_and_message(self):
        # non-ASCII and '%' exercise grpc-message percent-encoding on both hops
        message = "nope: 100% ünïcødé\tand \"quotes\" / percent%20kept\n2nd line"
        for code in grpc.StatusCode:
            if code == grpc.StatusCode.OK:
                continue
            with self.subTest(code=code.name):
                with self.assertRaises(grpc.RpcError) as ctx:
                    self.call("Unary")(b"x", timeout=10, metadata=[
                        ("x-test-status-code", str(code.value[0])),
                        ("x-test-status-message-bin", message.encode())])
                self.assertEqual(ctx.exception.code(), code)
                self.assertEqual(ctx.exception.details(), message)

    def test_status_details_bin_and_error_metadata_byte_exact(self):
        details = status_details(9, "precondition", os.urandom(300) + b"\x00\xff")
        for kind in ("Unary", "ServerStream", "ClientStream"):
            with self.subTest(kind=kind):
                req_md = [("x-test-status-code", "9"),
                          ("x-test-status-message", "precondition"),
                          ("x-test-status-details-bin", details),
                          ("x-echo-initial-x-early", "sent-before-error"),
                          ("x-echo-trailing-x-why-bin", b"\x01\x02")]
                with self.assertRaises(grpc.RpcError) as ctx:
                    if kind == "Unary":
                        self.call(kind)(b"x", metadata=req_md, timeout=10)
                    elif kind == "ServerStream":
                        list(self.call(kind)(b"x", metadata=req_md, timeout=10))
                    else:
                        self.call(kind)(iter([b"a", b"b"]), metadata=req_md, timeout=10)
                err = ctx.exception
                self.assertEqual(err.code(), grpc.StatusCode.FAILED_PRECONDITION)
                self.assertEqual(err.details(), "precondition")
                self.assertEqual(md(err.trailing_metadata(), "grpc-status-details-bin"), [details])
                self.assertEqual(md(err.trailing_metadata(), "x-why-bin"), [b"\x01\x02"])
                self.assertEqual(md(err.initial_metadata(), "x-early"), ["sent-before-error"])


if __name__ == "__main__":
    unittest.main()
