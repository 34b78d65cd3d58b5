"""Raw HTTP/2 peers for the end-to-end tests, on hyper-h2 (Debian's python3-h2) and sockets.

grpcio decides framing, header order and resets for you; these peers let a test decide them and
read back exactly what the other side wrote:

  RawH2Client    a client connection: a test sends each HEADERS/DATA/RST_STREAM frame itself
  RawH2Upstream  an h2c server in a thread; per call behaviour (Behaviour, chosen by the
                 request's x-test-id) decides how it answers; it records every request's
                 headers, DATA bytes and frame boundaries, resets, and h2 protocol errors
  FrameSocket    below h2: hand-written frames (hyperframe/hpack or raw bytes) for input that
                 h2 refuses to produce (malformed frames, bad settings, forbidden headers), and
                 what the peer answered (GOAWAY, RST_STREAM, EOF)

Headers are (bytes, bytes) pairs, as on the wire (header_encoding=None). Times are
time.monotonic(), comparable with the test's own clock (everything runs in-process). State
changes notify Endpoint.changed, so tests wait on events or conditions, never on sleeps.

H2Stream.send_data/send_frames write exactly the frames asked for (and raise when flow control
does not allow them); send_body splits as the frame size and the peer's windows allow, waiting
for WINDOW_UPDATEs. An endpoint made with auto_ack=False never reopens its receive windows until
open_windows(): a peer that is slow to read.

Locks, so that no test can hang on them: each Endpoint has one lock, held by its reader thread
while it processes frames and runs hooks, and by any thread that sends (batch()). A thread never
takes a second endpoint's lock while it holds one (_holding raises instead of deadlocking: two
readers each sending on the other's connection would), RawH2Upstream's own lock is taken after an
endpoint's and never before one, and nothing waits for new frames on a reader thread (wait_for
raises there: the reader is the thread that would bring them). A hook that has to wait, or to
send on another connection, hands that to a thread of its own.
"""

import gzip
import socket
import struct
import threading
import time
from contextlib import contextmanager, suppress

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import hpack

# RFC 9113 §7 error codes.
NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
INTERNAL_ERROR = 0x2
FLOW_CONTROL_ERROR = 0x3
SETTINGS_TIMEOUT = 0x4
STREAM_CLOSED = 0x5
FRAME_SIZE_ERROR = 0x6
REFUSED_STREAM = 0x7
CANCEL = 0x8
COMPRESSION_ERROR = 0x9
CONNECT_ERROR = 0xA
ENHANCE_YOUR_CALM = 0xB
INADEQUATE_SECURITY = 0xC
HTTP_1_1_REQUIRED = 0xD

# Frame types and flags (RFC 9113 §6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
FLAG_END_STREAM = 0x1
FLAG_ACK = 0x1
FLAG_END_HEADERS = 0x4
SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


# --- gRPC framing --------------------------------------------------------------------------

def grpc_frame(payload, compressed=False):
    """One length-prefixed gRPC message: flag byte, 4-byte big-endian length, payload."""
    return struct.pack(">BI", 1 if compressed else 0, len(payload)) + payload


def gzip_frame(message):
    """`message` gzip-compressed, framed with the compressed flag set."""
    return grpc_frame(gzip.compress(message, mtime=0), compressed=True)


def parse_grpc_frames(data):
    """[(compressed_flag, payload), ...] of a complete gRPC byte stream."""
    out, offset = [], 0
    while offset < len(data):
        flag, length = struct.unpack_from(">BI", data, offset)
        out.append((flag, bytes(data[offset + 5:offset + 5 + length])))
        offset += 5 + length
    if offset != len(data):
        raise ValueError("truncated gRPC message")
    return out


def grpc_request_headers(path, authority=b"sparktrace.test", extra=()):
    """A gRPC request's headers, pseudo-headers first, as bytes pairs."""
    return [(b":method", b"POST"), (b":scheme", b"http"), (b":path", _b(path)),
            (b":authority", _b(authority)), (b"content-type", b"application/grpc"),
            (b"te", b"trailers"), *[(_b(k), _b(v)) for k, v in extra]]


def _b(value):
    return value if isinstance(value, bytes) else str(value).encode()


def header(headers, name):
    """The first value of `name` in a header list (bytes or None)."""
    name = _b(name)
    for key, value in headers or ():
        if key == name:
            return value
    return None


# --- h2 endpoints --------------------------------------------------------------------------

_held = threading.local()  # .endpoints: those whose lock this thread holds through _holding


@contextmanager
def _holding(endpoint):
    """endpoint.lock, refused (AssertionError) while this thread holds another endpoint's: with
    two endpoints each taken while holding the other, two threads can deadlock."""
    held = _held.__dict__.setdefault("endpoints", [])
    other = next((e for e in held if e is not endpoint), None)
    if other is not None:
        raise AssertionError(f"lock order: {threading.current_thread().name} holds {other!r} and "
                             f"takes {endpoint!r}; send on another connection from a thread of "
                             "its own (see the module docstring)")
    with endpoint.lock:
        held.append(endpoint)
        try:
            yield
        finally:
            held.pop()


class H2Stream:
    """One stream as one endpoint saw it. For a client, `headers` are the response headers
    (the whole answer when it was trailers-only); for a server, the request headers."""

    def __init__(self, endpoint, stream_id):
        self.endpoint = endpoint
        self.stream_id = stream_id
        self.opened_at = time.monotonic()
        self.headers = None
        self.trailers = None
        self.data = bytearray()
        self.data_frames = []  # the DATA payloads as the frames carried them
        self.headers_received = threading.Event()
        self.ended = threading.Event()  # the peer's END_STREAM
        self.reset = threading.Event()  # RST_STREAM either way, or the connection went away
        self.reset_code = None
        self.reset_at = None
        self.remote_reset = None  # True: the peer sent RST_STREAM; False: h2 reset it here
        self.ended_at = None

    @property
    def test_id(self):
        value = header(self.headers, b"x-test-id")
        return value.decode() if value is not None else None

    def status_block(self):
        """The block holding grpc-status: the trailers, or the headers of a trailers-only answer."""
        return self.trailers if self.trailers is not None else self.headers

    def grpc_status(self):
        value = header(self.status_block(), b"grpc-status")
        return int(value) if value is not None else None

    def wait_ended(self, timeout):
        """True once the peer ended the stream or it was reset."""
        return self.endpoint.wait_for(lambda: self.ended.is_set() or self.reset.is_set(), timeout)

    # Sending: thread-safe; frames queued inside Endpoint.batch() leave in one write.
    def send_headers(self, headers, end_stream=False):
        with self.endpoint.batch():
            self.endpoint.conn.send_headers(self.stream_id, headers, end_stream=end_stream)

    def send_data(self, data, end_stream=False):
        """One DATA frame carrying exactly `data` (which must fit the frame size and window)."""
        with self.endpoint.batch():
            conn = self.endpoint.conn
            window = conn.local_flow_control_window(self.stream_id)
            if len(data) > window or len(data) > conn.max_outbound_frame_size:
                raise AssertionError(f"{len(data)} bytes exceed the window ({window}) or frame "
                                     f"size ({conn.max_outbound_frame_size}): split them")
            conn.send_data(self.stream_id, bytes(data), end_stream=end_stream)

    def send_body(self, data, end_stream=False, timeout=10):
        """`data` in as many DATA frames as the frame size and flow control allow, waiting for
        the peer's WINDOW_UPDATEs (so never from a hook: the reader thread brings them)."""
        offset, deadline = 0, time.monotonic() + timeout
        conn = self.endpoint.conn
        while True:
            with self.endpoint.batch():
                size = min(len(data) - offset, conn.max_outbound_frame_size,
                           conn.local_flow_control_window(self.stream_id))
                if size > 0 or offset == len(data):
                    last = offset + size == len(data)
                    conn.send_data(self.stream_id, bytes(data[offset:offset + size]),
                                   end_stream=end_stream and last)
                    offset += size
                    if last:
                        return
                    continue
            if not self.endpoint.wait_for(
                    lambda: self.reset.is_set() or conn.local_flow_control_window(self.stream_id) > 0,
                    deadline - time.monotonic()):
                raise AssertionError(f"flow control stalled: {offset} of {len(data)} bytes sent")
            if self.reset.is_set():
                raise AssertionError(f"stream reset after {offset} of {len(data)} bytes")

    def send_frames(self, chunks, end_stream=False):
        """One DATA frame per chunk; END_STREAM on the last one."""
        with self.endpoint.batch():
            for i, chunk in enumerate(chunks):
                self.send_data(chunk, end_stream=end_stream and i == len(chunks) - 1)

    def end(self):
        with self.endpoint.batch():
            self.endpoint.conn.end_stream(self.stream_id)

    def send_reset(self, code):
        with self.endpoint.batch():
            self.endpoint.conn.reset_stream(self.stream_id, code)
            self.endpoint._mark_reset(self, code, remote=False)

    def respond_grpc(self, messages=(), trailers=((b"grpc-status", b"0"),), headers=()):
        """Response headers, one DATA frame per item of `messages` (bytes, already gRPC-framed),
        then trailers: all in one write."""
        with self.endpoint.batch():
            self.send_headers([(b":status", b"200"), (b"content-type", b"application/grpc"),
                               *headers])
            if messages:
                self.send_frames(list(messages))
            self.send_headers(list(trailers), end_stream=True)


class Endpoint:
    """One HTTP/2 connection driven by an h2.H2Connection: a reader thread feeds it what
    arrives, records streams, and runs the owner's hooks; any thread may send."""

    def __init__(self, sock, client_side, local_settings=None, on_event=None, auto_ack=True):
        self.sock = sock
        # False: received DATA never reopens the window (no WINDOW_UPDATE); open_windows() does.
        self.auto_ack = auto_ack
        config = h2.config.H2Configuration(client_side=client_side, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        if local_settings:
            initial = {h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100,
                       h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 1 << 16}
            initial.update(local_settings)
            # In force from the first SETTINGS frame on (update_settings would send a second one,
            # after the peer may already have acted on the defaults).
            self.conn.local_settings = h2.settings.Settings(client=client_side,
                                                            initial_values=initial)
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.streams = {}
        self.events = []  # every h2 event, in order
        self.goaway = None  # the peer's ConnectionTerminated event
        self.error = None  # what h2 raised on the peer's input (a protocol violation)
        self.closed = threading.Event()
        self.max_open_inbound = 0  # most streams the peer had open here at once
        self.remote_settings_received = threading.Event()
        self._on_event = on_event
        self._depth = 0
        self._pings = 0
        try:
            ports = f"{sock.getsockname()[1]}->{sock.getpeername()[1]}"
        except OSError:
            ports = "unconnected"
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"raw-h2-reader {ports}")

    def start(self):
        with self.batch():
            self.conn.initiate_connection()
        self._thread.start()
        return self

    def __repr__(self):
        return f"<{type(self).__name__} {self._thread.name}>"

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._thread.ident is not None:  # started (RawH2Upstream.stop may race _accept)
            self._thread.join(5)
        self.sock.close()

    def stream(self, stream_id):
        with _holding(self):
            if stream_id not in self.streams:
                self.streams[stream_id] = H2Stream(self, stream_id)
            return self.streams[stream_id]

    def wait_for(self, predicate, timeout):
        """True once `predicate` holds (checked under the lock, after every change), False after
        `timeout`. Never on this endpoint's reader thread (a hook): it brings the changes; nor
        holding another endpoint, whose reader would wait as long."""
        if threading.current_thread() is self._thread:
            raise AssertionError(f"{self!r}: waiting on its own reader thread, which is the one "
                                 "that would bring the change; wait from a thread of its own")
        other = next((e for e in getattr(_held, "endpoints", ()) if e is not self), None)
        if other is not None:
            raise AssertionError(f"{self!r}: waiting while holding {other!r}")
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def open_windows(self, size):
        """One write: SETTINGS_INITIAL_WINDOW_SIZE = size (every stream's window grows by the
        difference) and a connection WINDOW_UPDATE of `size`, as grpc-core's BDP probe does."""
        with self.batch():
            self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: size})
            self.conn.increment_flow_control_window(size)

    def ping_roundtrip(self, timeout=5):
        """Sends a PING and waits for its ACK: the peer has read everything sent before."""
        with self.batch():
            self._pings += 1
            opaque = b"rt%06d" % self._pings
            self.conn.ping(opaque)
        if not self.wait_for(lambda: any(isinstance(e, h2.events.PingAckReceived)
                                         and e.ping_data == opaque for e in self.events), timeout):
            raise AssertionError(f"PING not answered within {timeout}s")

    @contextmanager
    def batch(self):
        """Holds the connection; what is queued inside leaves in one write at the end."""
        with _holding(self):
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._flush()
                self.changed.notify_all()

    def _flush(self):
        data = self.conn.data_to_send()
        if data:
            try:
                self.sock.sendall(data)
            except OSError:
                pass  # the reader sees the connection end

    def _mark_reset(self, stream, code, remote):
        if not stream.reset.is_set():
            stream.reset_code, stream.reset_at, stream.remote_reset = code, time.monotonic(), remote
            stream.reset.set()

    def _run(self):
        try:
            self._read()
        except BaseException:
            # A hook failed (its traceback follows, from threading): nobody reads this connection
            # any more, so it ends here, and the waiters hear of it below rather than by timeout.
            with suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            raise
        finally:
            self._closed()

    def _read(self):
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                return
            with self.batch():
                try:
                    events = self.conn.receive_data(data)
                except h2.exceptions.ProtocolError as error:
                    self.error = error
                    return
                for event in events:
                    self._handle(event)

    def _closed(self):
        with self.lock:
            self.closed.set()
            for stream in self.streams.values():
                state = self.conn.streams.get(stream.stream_id)
                if state is not None and not state.closed:  # cut by the connection's end
                    self._mark_reset(stream, None, remote=True)
            self.changed.notify_all()

    def _handle(self, event):
        self.events.append(event)
        stream = self.stream(event.stream_id) if getattr(event, "stream_id", None) else None
        if isinstance(event, (h2.events.RequestReceived, h2.events.ResponseReceived)):
            stream.headers = list(event.headers)
            stream.headers_received.set()
            if isinstance(event, h2.events.RequestReceived):
                self.max_open_inbound = max(self.max_open_inbound, self.conn.open_inbound_streams)
        elif isinstance(event, h2.events.TrailersReceived):
            stream.trailers = list(event.headers)
        elif isinstance(event, h2.events.DataReceived):
            stream.data += event.data
            stream.data_frames.append(bytes(event.data))
            if event.flow_controlled_length and self.auto_ack:
                try:
                    self.conn.acknowledge_received_data(event.flow_controlled_length,
                                                        event.stream_id)
                except h2.exceptions.StreamClosedError:
                    pass
        elif isinstance(event, h2.events.StreamEnded):
            stream.ended_at = time.monotonic()
            stream.ended.set()
        elif isinstance(event, h2.events.StreamReset):
            self._mark_reset(stream, event.error_code, remote=event.remote_reset)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            self.remote_settings_received.set()
        if self._on_event is not None:
            self._on_event(self, event, stream)


class RawH2Client(Endpoint):
    """A plaintext (h2c) client connection to `address` ("host:port")."""

    def __init__(self, address, timeout=5, auto_ack=True):
        host, port = address.rsplit(":", 1)
        super().__init__(socket.create_connection((host, int(port)), timeout=timeout),
                         client_side=True, auto_ack=auto_ack)
        self.sock.settimeout(None)
        self.start()

    def request(self, headers, end_stream=False):
        """Opens a stream with `headers` (bytes pairs); returns its H2Stream."""
        with self.batch():
            stream = self.stream(self.conn.get_next_available_stream_id())
            stream.send_headers(headers, end_stream=end_stream)
            return stream

    def grpc_call(self, path, messages, extra_headers=(), timeout=5):
        """A whole call: headers, the framed messages in one DATA frame, END_STREAM; waits
        for the end and returns the stream."""
        stream = self.request(grpc_request_headers(path, extra=extra_headers))
        stream.send_data(b"".join(messages), end_stream=True)
        if not stream.wait_ended(timeout):
            raise AssertionError(f"no answer to {path} within {timeout}s")
        return stream


class Behaviour:
    """How RawH2Upstream answers one call. Hooks run on the connection's reader thread,
    holding it: what they send leaves in one write after the frames being processed. They must
    not wait (for frames, windows or the test) nor send on another connection: both would hold
    this reader; a thread of their own does it (see Echo)."""

    def on_headers(self, stream):
        pass

    def on_end(self, stream):
        pass


class Echo(Behaviour):
    """A gRPC echo: once the request ends, headers, the request bytes as they came, and
    grpc-status 0. Answers that fit one frame and the window leave in one write; larger ones
    from a thread of their own, as flow control lets them."""

    def on_end(self, stream):
        data = bytes(stream.data)
        conn = stream.endpoint.conn
        if len(data) <= min(conn.max_outbound_frame_size,
                            conn.local_flow_control_window(stream.stream_id)):
            stream.respond_grpc([data] if data else ())
            return

        def answer():
            stream.send_headers([(b":status", b"200"), (b"content-type", b"application/grpc")])
            stream.send_body(data)
            stream.send_headers([(b"grpc-status", b"0")], end_stream=True)

        threading.Thread(target=answer, daemon=True, name="raw-h2-echo").start()


class Silent(Behaviour):
    """Takes the stream and never answers."""


class ResetOnHeaders(Behaviour):
    """RST_STREAM with `code` as soon as the request headers arrive."""

    def __init__(self, code):
        self.code = code

    def on_headers(self, stream):
        stream.send_reset(self.code)


class Hooks(Behaviour):
    """A behaviour from plain functions."""

    def __init__(self, on_headers=None, on_end=None):
        self._on_headers, self._on_end = on_headers, on_end

    def on_headers(self, stream):
        if self._on_headers:
            self._on_headers(stream)

    def on_end(self, stream):
        if self._on_end:
            self._on_end(stream)


class RawH2Upstream:
    """An h2c server on 127.0.0.1 (ephemeral port), one reader thread per connection.
    `settings` are its SETTINGS from the first frame on ({SETTINGS_MAX_CONCURRENT_STREAMS: 1}).
    A call's behaviour is the one registered for its x-test-id (behave()), else `default`."""

    def __init__(self, default=None, settings=None, auto_ack=True):
        self.default = default or Echo()
        self.settings = settings
        self.auto_ack = auto_ack
        self.connections = []
        self._behaviours = {}
        # Taken after an endpoint's lock (from _on_event), never before it: see wait_stream.
        self._lock = threading.Condition()
        self._generation = 0  # advanced on every new connection and request (wait_stream)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self._listener.getsockname()[1]
        self._stopped = False
        self._acceptor = threading.Thread(target=self._accept, daemon=True, name="raw-h2-accept")
        self._acceptor.start()

    def behave(self, test_id, behaviour):
        with self._lock:
            self._behaviours[test_id] = behaviour

    def stop(self):
        self._stopped = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        self._acceptor.join(5)
        with self._lock:
            connections = list(self.connections)
        for endpoint in connections:
            endpoint.close()

    @property
    def errors(self):
        """h2 protocol errors raised by what a client sent, on any connection."""
        with self._lock:
            return [c.error for c in self.connections if c.error is not None]

    def streams(self):
        with self._lock:
            connections = list(self.connections)
        out = []
        for endpoint in connections:
            with _holding(endpoint):
                out.extend(endpoint.streams.values())
        return out

    def wait_stream(self, test_id, timeout=5):
        """The stream whose request carried x-test-id = test_id, once its headers are in.

        Lock order: a connection's reader holds its endpoint's lock while it runs _on_event,
        which takes the server's; so the server's lock is never held while an endpoint's is
        taken. The streams are looked at with the server's lock released, and the wait is for
        the generation that _on_event and _accept advance."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                generation = self._generation
            found = [s for s in self.streams() if s.test_id == test_id]
            if found:
                return found[0]
            with self._lock:
                if not self._lock.wait_for(lambda: self._generation != generation,
                                           deadline - time.monotonic()):
                    raise AssertionError(
                        f"raw upstream never saw a stream with x-test-id={test_id}")

    def _accept(self):
        while not self._stopped:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            endpoint = Endpoint(sock, client_side=False, local_settings=self.settings,
                                on_event=self._on_event, auto_ack=self.auto_ack)
            with self._lock:
                self.connections.append(endpoint)
                self._generation += 1
                self._lock.notify_all()
            endpoint.start()

    def _on_event(self, endpoint, event, stream):
        if isinstance(event, h2.events.RequestReceived):
            with self._lock:
                self._generation += 1
                self._lock.notify_all()  # wait_stream
            self._behaviour(stream).on_headers(stream)
        if isinstance(event, h2.events.StreamEnded) and not stream.reset.is_set():
            self._behaviour(stream).on_end(stream)

    def _behaviour(self, stream):
        with self._lock:
            return self._behaviours.get(stream.test_id, self.default)


# --- below h2: hand-made frames ------------------------------------------------------------

def raw_frame(frame_type, flags, stream_id, payload=b"", length=None):
    """A frame exactly as given: the 9-byte header (`length` defaults to the payload's) and
    the payload, nothing checked."""
    size = len(payload) if length is None else length
    return struct.pack(">I", size)[1:] + struct.pack(">BBI", frame_type, flags, stream_id) + payload


def settings_frame(entries=(), ack=False):
    payload = b"".join(struct.pack(">HI", key, value) for key, value in entries)
    return raw_frame(SETTINGS, FLAG_ACK if ack else 0, 0, payload)


def header_block(headers):
    """An HPACK block for `headers` exactly as given (no lower-casing, no validation)."""
    return hpack.Encoder().encode([(_b(k), _b(v)) for k, v in headers])


class Frame:
    """A frame read back: type, flags, stream_id, payload."""

    def __init__(self, frame_type, flags, stream_id, payload):
        self.type, self.flags, self.stream_id, self.payload = frame_type, flags, stream_id, payload

    @property
    def error_code(self):
        """RST_STREAM's or GOAWAY's error code."""
        if self.type == RST_STREAM:
            return struct.unpack(">I", self.payload[:4])[0]
        if self.type == GOAWAY:
            return struct.unpack(">I", self.payload[4:8])[0]
        return None

    def __repr__(self):
        return f"Frame(type={self.type}, flags={self.flags:#x}, stream={self.stream_id}, " \
               f"error={self.error_code}, {len(self.payload)} bytes)"


class FrameSocket:
    """A bare TCP connection for hand-written frames; read() parses what comes back."""

    def __init__(self, address, timeout=5, receive_buffer=None):
        """`receive_buffer`: SO_RCVBUF, set before connecting (a client that never reads keeps
        the kernel from reading for it with a small one)."""
        host, port = address.rsplit(":", 1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.timeout = timeout  # for connect and send; read_until sets its own while it reads
        self.sock.settimeout(timeout)
        self.sock.connect((host, int(port)))
        self.frames = []
        self.eof = False
        self._buffer = b""

    def close(self):
        self.sock.close()

    def send(self, *chunks):
        self.sock.sendall(b"".join(chunks))

    def handshake(self, settings=()):
        """Client preface and SETTINGS, then waits for the server's SETTINGS and ACKs it."""
        self.send(PREFACE, settings_frame(settings))
        frame = self.read_until(lambda f: f.type == SETTINGS and not f.flags & FLAG_ACK, 5)
        if frame is None:
            raise AssertionError(f"no SETTINGS from the server: {self.frames} eof={self.eof}")
        self.send(settings_frame(ack=True))

    def read_until(self, predicate, timeout):
        """Reads frames until one satisfies `predicate` (returned), EOF or `timeout` (None)."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self._next_buffered()
            if frame is not None:
                self.frames.append(frame)
                if predicate(frame):
                    return frame
                continue
            remaining = deadline - time.monotonic()
            if self.eof or remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                return None
            except OSError:  # ECONNRESET: the server closed with our bytes unread
                data = b""
            finally:  # a later send() keeps its own bound, not what was left of this read's
                self.sock.settimeout(self.timeout)
            if not data:
                self.eof = True
            self._buffer += data

    def outcome(self, timeout=2):
        """How the server reacted within `timeout`: ("goaway", code, frame), ("rst", code,
        frame), ("closed", None, None) or ("none", None, None)."""
        frame = self.read_until(lambda f: f.type in (GOAWAY, RST_STREAM), timeout)
        if frame is not None:
            return ("goaway" if frame.type == GOAWAY else "rst"), frame.error_code, frame
        return ("closed" if self.eof else "none"), None, None

    def wait_closed(self, timeout):
        """True once the server closed the connection (EOF or reset) within `timeout`."""
        self.read_until(lambda f: False, timeout)
        return self.eof

    def _next_buffered(self):
        if len(self._buffer) < 9:
            return None
        length = int.from_bytes(self._buffer[:3], "big")
        if len(self._buffer) < 9 + length:
            return None
        frame_type, flags, stream_id = struct.unpack(">BBI", self._buffer[3:9])
        payload = self._buffer[9:9 + length]
        self._buffer = self._buffer[9 + length:]
        return Frame(frame_type, flags, stream_id & 0x7FFFFFFF, payload)
