"""Independent gRPC upstream for the sparktrace end-to-end tests.

Raw bytes only (generic handlers, no serializers), so nothing here knows or cares about
protobuf: the proxy must forward payloads it cannot parse.

Methods are `/<any service>/<Kind>` with Kind one of Unary, ServerStream, ClientStream, Bidi;
any other method name is left unhandled, so grpcio answers UNIMPLEMENTED. Behaviour is chosen
by request metadata (all optional):

  x-test-id               key under which the call is recorded (see Upstream.record)
  x-test-stream-count     ServerStream: number of responses; -1 = endless
  x-test-message-bytes    size of generated responses (Unary: reply with this many bytes
                          instead of echoing the request)
  x-test-interval-ms      ServerStream: pause between responses
  x-test-delay-ms         wait this long (or until the call ends) before answering
  x-test-gate             wait until Upstream.release(name) after x-test-gate-after
  x-test-gate-after       ... responses (default 1 for ServerStream, else 0)
  x-test-barrier          "name:N": wait until N calls reached the same barrier
  x-test-abort-after      streams: fail with the status below after this many responses
  x-test-status-code      finish with this status code (int) ...
  x-test-status-message   ... and message (x-test-status-message-bin: UTF-8, for non-ASCII)
  x-test-status-details-bin  sent back as grpc-status-details-bin, byte for byte
  x-test-headers-first    "1": send (possibly empty) response headers before anything else
  x-echo-initial-<key>    sent back as response initial metadata <key> (order and bytes kept)
  x-echo-trailing-<key>   sent back as trailing metadata <key>

Generated stream messages are pattern(seed, index, size) with seed = x-test-seed or x-test-id,
so a client can check every byte and the order without the upstream keeping copies.

Standalone: `/usr/bin/python3 upstream_server.py --port 0 [--tls-cert F --tls-key F]` prints
`listening PORT` on stdout and serves until SIGTERM/SIGINT.
"""

import argparse
import hashlib
import itertools
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

# Unlimited both ways: the proxy's own --max-message-bytes must be the only limit in play.
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
]
KINDS = ("Unary", "ServerStream", "ClientStream", "Bidi")
_CODES = {code.value[0]: code for code in grpc.StatusCode}


def pattern(seed, index, size):
    """Deterministic message: 8-byte big-endian index, then a seed/index-derived filler."""
    block = hashlib.sha256(f"{seed}/{index}".encode()).digest()
    body = index.to_bytes(8, "big") + block * ((max(size - 8, 0)) // 32 + 1)
    return body[:size]


def status_details(code, message, payload):
    """A real google.rpc.Status (hand-encoded: no googleapis protos on the machine) whose
    `details` holds one Any carrying `payload`; tests compare it byte for byte anyway."""

    def varint(n):
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)

    def field(num, data):
        return varint(num << 3 | 2) + varint(len(data)) + data

    any_msg = field(1, b"type.googleapis.com/sparktrace.test.Detail") + field(2, payload)
    return varint(1 << 3) + varint(code) + field(2, message.encode()) + field(3, any_msg)


class CallRecord:
    """What the upstream saw of one call. Times are time.monotonic(), comparable with the
    test process's own clock because the upstream runs in-process."""

    def __init__(self, method, metadata, time_remaining):
        self.method = method
        self.metadata = metadata  # list of (key, value); -bin values are bytes
        self.started_at = time.monotonic()
        # grpcio reports ~9e18 s for "no deadline".
        self.time_remaining = time_remaining if time_remaining < 1e9 else None
        self.received = 0  # request messages read
        self.request_sha256 = []  # hex digest per request message
        self.produced = 0  # response messages handed to grpc
        self.produced_at = self.started_at
        self.handler_done_at = None  # handler finished on its own (return or abort)
        self.terminated_at = None  # grpc says the RPC is over (any reason)
        self.cancelled = None  # terminated while the handler was still running
        self.terminated = threading.Event()

    def md(self, key):
        return [v for k, v in self.metadata if k == key]

    def md1(self, key, default=None):
        values = self.md(key)
        return values[0] if values else default

    @property
    def user_agent(self):
        return self.md1("user-agent")

    def _on_terminate(self):
        self.terminated_at = time.monotonic()
        self.cancelled = self.handler_done_at is None
        self.terminated.set()


class Upstream:
    """In-process upstream. start() binds 127.0.0.1 (port 0 = ephemeral); stop()/start(port)
    lets a test take it down and bring it back on the same port."""

    def __init__(self, tls=None, max_workers=256, options=()):
        self.tls = tls  # (cert_pem_bytes, key_pem_bytes) or None
        self.max_workers = max_workers
        self.options = list(options)  # extra grpc server options, e.g. grpc.max_concurrent_streams
        self.port = None
        self.calls = []
        self._server = None
        self._lock = threading.Condition()
        self._gates = {}
        self._barriers = {}
        self._seq = itertools.count()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def start(self, port=0):
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=self.max_workers),
            handlers=[_Handler(self)],
            options=GRPC_OPTIONS + self.options,
        )
        where = f"127.0.0.1:{port}"
        if self.tls:
            creds = grpc.ssl_server_credentials([(self.tls[1], self.tls[0])])
            self.port = server.add_secure_port(where, creds)
        else:
            self.port = server.add_insecure_port(where)
        if not self.port:
            raise RuntimeError(f"upstream could not bind {where}")
        server.start()
        self._server = server
        return self.port

    def stop(self, grace=0):
        if self._server is not None:
            self._server.stop(grace).wait(10)
            self._server = None

    # --- state queries for tests -------------------------------------------------------
    def record(self, test_id, timeout=10):
        """The record of the call whose x-test-id is test_id, waiting for it to arrive."""
        with self._lock:
            ok = self._lock.wait_for(lambda: self._find(test_id) is not None, timeout)
            if not ok:
                raise AssertionError(f"upstream never saw a call with x-test-id={test_id}")
            return self._find(test_id)

    def records(self, test_id):
        with self._lock:
            return [c for c in self.calls if c.md1("x-test-id") == test_id]

    def _find(self, test_id):
        for call in self.calls:
            if call.md1("x-test-id") == test_id:
                return call
        return None

    def gate(self, name):
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def release(self, name):
        self.gate(name).set()

    def _barrier(self, spec):
        name, _, parties = spec.rpartition(":")
        with self._lock:
            return self._barriers.setdefault(name, threading.Barrier(int(parties)))

    def _register(self, method, context):
        record = CallRecord(method, list(context.invocation_metadata()), context.time_remaining())
        with self._lock:
            self.calls.append(record)
            self._lock.notify_all()
        if not context.add_callback(record._on_terminate):
            record._on_terminate()  # already over
        return record


class _Call:
    """Per-call helper: reads the x-test-* knobs and implements waiting and statuses."""

    # Response index at which x-test-gate blocks when x-test-gate-after is absent.
    _default_gate_after = 0

    def __init__(self, upstream, method, context):
        self.up = upstream
        self.ctx = context
        self.rec = upstream._register(method, context)
        self.seed = self.rec.md1("x-test-seed") or self.rec.md1("x-test-id") or "seed"
        initial = self._echoed("x-echo-initial-")
        if initial or self.rec.md1("x-test-headers-first") == "1":
            context.send_initial_metadata(initial)

    def knob(self, name, default=None):
        value = self.rec.md1("x-test-" + name)
        return default if value is None else int(value)

    def _echoed(self, prefix):
        return [(k[len(prefix):], v) for k, v in self.rec.metadata if k.startswith(prefix)]

    def wait(self, seconds):
        """Wait, but return early (False) once the RPC is over: a cancelled call must not
        keep a worker thread."""
        return not self.rec.terminated.wait(seconds)

    def pre_response(self, sent):
        """Hooks run before response number `sent` (0-based) is produced."""
        gate = self.rec.md1("x-test-gate")
        if gate is not None and sent == self.knob("gate-after", self._default_gate_after):
            event = self.up.gate(gate)
            while not event.wait(0.02):
                if self.rec.terminated.is_set():
                    return False
        abort_after = self.knob("abort-after")
        if abort_after is not None and sent == abort_after:
            self.finish_with_status()
        return not self.rec.terminated.is_set()

    def start(self):
        barrier = self.rec.md1("x-test-barrier")
        if barrier:
            self.up._barrier(barrier).wait(timeout=30)
        delay = self.knob("delay-ms")
        if delay:
            self.wait(delay / 1000)

    def trailing(self, extra=()):
        self.ctx.set_trailing_metadata(list(extra) + self._echoed("x-echo-trailing-"))

    def finish_with_status(self):
        code = self.knob("status-code", 2)  # abort-after alone -> UNKNOWN
        message = self.rec.md1("x-test-status-message-bin", b"").decode() or \
            self.rec.md1("x-test-status-message", "")
        extra = []
        details = self.rec.md1("x-test-status-details-bin")
        if details is not None:
            extra.append(("grpc-status-details-bin", details))
        self.trailing(extra)
        self.rec.handler_done_at = time.monotonic()
        self.ctx.abort(_CODES[code], message)

    def maybe_status(self):
        if self.rec.md1("x-test-status-code") is not None and self.knob("abort-after") is None:
            self.finish_with_status()

    def produced(self, n=1):
        self.rec.produced += n
        self.rec.produced_at = time.monotonic()

    def done(self):
        self.rec.handler_done_at = time.monotonic()

    def read(self, request):
        self.rec.received += 1
        self.rec.request_sha256.append(hashlib.sha256(request).hexdigest())


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, upstream):
        self.up = upstream

    def service(self, details):
        kind = details.method.rpartition("/")[2]
        if kind not in KINDS:
            return None  # grpcio answers UNIMPLEMENTED
        method = details.method
        if kind == "Unary":
            return grpc.unary_unary_rpc_method_handler(lambda r, c: self.unary(method, r, c))
        if kind == "ServerStream":
            return grpc.unary_stream_rpc_method_handler(lambda r, c: self.server_stream(method, r, c))
        if kind == "ClientStream":
            return grpc.stream_unary_rpc_method_handler(lambda r, c: self.client_stream(method, r, c))
        return grpc.stream_stream_rpc_method_handler(lambda r, c: self.bidi(method, r, c))

    def unary(self, method, request, context):
        call = _Call(self.up, method, context)
        call.read(request)
        call.start()
        call.maybe_status()
        if not call.pre_response(0):
            return b""
        size = call.knob("message-bytes")
        response = request if size is None else pattern(call.seed, 0, size)
        call.trailing([("x-request-sha256", call.rec.request_sha256[0]),
                       ("x-response-sha256", hashlib.sha256(response).hexdigest())])
        call.produced()
        call.done()
        return response

    def server_stream(self, method, request, context):
        call = _Call(self.up, method, context)
        call._default_gate_after = 1  # so the client has seen the call before it blocks
        call.read(request)
        call.start()
        call.maybe_status()
        count = call.knob("stream-count", 1)
        size = call.knob("message-bytes", 64)
        interval = call.knob("interval-ms", 0) / 1000
        call.trailing([("x-request-sha256", call.rec.request_sha256[0])])
        for i in itertools.count() if count < 0 else range(count):
            if not call.pre_response(i):
                return
            if i and interval and not call.wait(interval):
                return
            call.produced()
            yield pattern(call.seed, i, size)
        if call.pre_response(count):  # lets abort-after == count fail after the last message
            call.done()

    def client_stream(self, method, request_iterator, context):
        call = _Call(self.up, method, context)
        call.start()
        digests = b""
        for request in request_iterator:
            call.read(request)
            digests += hashlib.sha256(request).digest()
        call.maybe_status()
        if not call.pre_response(0):
            return b""
        call.trailing([("x-request-count", str(call.rec.received))])
        call.produced()
        call.done()
        return digests

    def bidi(self, method, request_iterator, context):
        """Echo each request as it arrives (so ping-pong works), then one final
        b"half-closed:<n>" once the client half-closes."""
        call = _Call(self.up, method, context)
        call.start()
        call.maybe_status()
        call.trailing()
        for request in request_iterator:
            call.read(request)
            if not call.pre_response(call.rec.produced):
                return
            call.produced()
            yield request
        if not call.pre_response(call.rec.produced):
            return
        call.produced()
        yield b"half-closed:%d" % call.rec.received
        call.done()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    tls = None
    if args.tls_cert or args.tls_key:
        with open(args.tls_cert, "rb") as cert, open(args.tls_key, "rb") as key:
            tls = (cert.read(), key.read())
    upstream = Upstream(tls=tls)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    upstream.start(args.port)
    print(f"listening {upstream.port}", flush=True)
    while not stop.wait(3600):
        pass
    upstream.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
