"""Shared fixtures for the sparktrace end-to-end tests.

The proxy under test is $SPARKTRACE_BIN (default build/sparktrace). With SPARKTRACE_DIRECT=1
the client talks to the upstream itself and proxy-only tests are skipped: that validates the
tests and peers without a proxy, and shows what "invisible" has to look like.

Importing it arms a per-test deadline (deadline.py, $SPARKTRACE_TEST_DEADLINE): a test that hangs
is reported with every thread's stack and, for each proxy still running, its stderr tail and gdb
backtraces, instead of being killed silently by CTest.
"""

import http.client
import os
import queue
import re
import resource
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import uuid
from pathlib import Path

import grpc

import deadline
from peers.upstream_server import GRPC_OPTIONS, Upstream

HERE = Path(__file__).resolve().parent
DIRECT = os.environ.get("SPARKTRACE_DIRECT") == "1"
# Set by CMake for the sanitizer build: its runtimes need descriptors and memory of their own.
SANITIZED = os.environ.get("SPARKTRACE_SANITIZED") == "1"
BIN = os.environ.get("SPARKTRACE_BIN") or str(HERE.parents[1] / "build" / "sparktrace")
READY_TIMEOUT = 20  # seconds; generous for sanitizer builds
LISTENING_RE = re.compile(r"^listening grpc=(127\.0\.0\.1:\d+) admin=(127\.0\.0\.1:\d+)$")
# Default for every proxy the harness starts, so a test that leaves a call open cannot make
# teardown wait the real default (150s). test_cli covers the default itself.
DEFAULT_DRAIN = "3s"

proxy_only = unittest.skipIf(DIRECT, "SPARKTRACE_DIRECT=1: no proxy under test")

# Proxies started and not yet closed, for the deadline's dump (_dump_live_proxies).
_live_proxies = set()
_live_proxies_lock = threading.Lock()
GDB_BUDGET = 60  # seconds of gdb for all proxies together in one dump


def new_id(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def wait_until(predicate, timeout, interval=0.02, message="condition"):
    """Poll predicate until it returns a truthy value; for states that have no event."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)


def free_port():
    """A loopback port nobody listens on (for 'upstream down' cases)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def channel(address, credentials=None, user_agent=None, options=()):
    opts = list(GRPC_OPTIONS) + list(options)
    if user_agent:
        opts.append(("grpc.primary_user_agent", user_agent))
    if credentials is None:
        return grpc.insecure_channel(address, options=opts)
    return grpc.secure_channel(address, credentials, options=opts)


def http_get(address, path, timeout=5):
    """GET http://address/path -> (status, headers dict (lower-case keys), body str)."""
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode("utf-8", "replace")
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def process_cpu_seconds(pid):
    """User + system CPU seconds of a process, all its threads included."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def proxy_env(extra=None):
    """The environment without any SPARKTRACE_* settings of the caller (they would act as
    flag fallbacks), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARKTRACE_")}
    env.update(extra or {})
    return env


def first_line(proc, timeout=READY_TIMEOUT):
    """The first line `proc` prints on stdout (a text pipe), or "" when it closes stdout first;
    AssertionError when it prints none within `timeout` (a bare readline() would wait forever).
    The reading thread is left behind on timeout; it ends when the process does."""
    lines = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True,
                     name="first-line").start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"{proc.args[:2]} printed no line within {timeout}s "
                             f"(exit={proc.poll()})") from None


def run_cli(args, env=None, timeout=15):
    """Run the binary to completion (for flag errors and --help)."""
    return subprocess.run([BIN, *args], env=proxy_env(env), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


class Proxy:
    """One proxy process. stdout is read for the single `listening` line; stderr goes to a
    file so tests can assert on logs."""

    def __init__(self, args, env=None, nofile=None):
        """`nofile`: (soft, hard) RLIMIT_NOFILE for the proxy alone (a small hard limit cannot be
        raised again, so it is set in the child, not in the test process)."""
        if not os.access(BIN, os.X_OK):
            raise AssertionError(f"proxy binary {BIN} missing (set SPARKTRACE_BIN, or "
                                 "SPARKTRACE_DIRECT=1 to test against the upstream alone)")
        self.tmpdir = tempfile.TemporaryDirectory(prefix="sparktrace-e2e-")
        self.stderr_path = Path(self.tmpdir.name) / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")
        args = list(args)
        if "--store" not in args and "--no-tracing" not in args:
            # Tracing stays on in every test (the default), writing into this proxy's temp dir
            # rather than sparktrace.db in the working directory.
            args += ["--store", str(Path(self.tmpdir.name) / "traces.db")]
        self.store_path = Path(self.tmpdir.name) / "traces.db"
        self.args = [BIN, "proxy", *args]
        limit = None if nofile is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile))
        self.proc = subprocess.Popen(self.args, env=proxy_env(env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True, preexec_fn=limit)
        self.pid = self.proc.pid
        with _live_proxies_lock:
            _live_proxies.add(self)
        self.expect_exit = False  # set by tests that stop the proxy themselves
        self.grpc_address = self.admin_address = None

    def wait_ready(self, timeout=READY_TIMEOUT):
        try:
            line = first_line(self.proc, timeout)
        except AssertionError:
            raise AssertionError(f"no listening line within {timeout}s\n{self.stderr_tail()}") from None
        match = LISTENING_RE.match(line.rstrip("\n"))
        if not match:
            raise AssertionError(f"bad first stdout line {line!r} (exit={self.proc.poll()})\n"
                                 f"{self.stderr_tail()}")
        self.grpc_address, self.admin_address = match.groups()
        return self

    def stderr_text(self):
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def stderr_tail(self, lines=30):
        text = self.stderr_text().splitlines()[-lines:]
        return "--- proxy stderr (tail) ---\n" + "\n".join(text)

    def _dump_tail(self, lines=60):
        """stderr_tail from the deadline's thread: the file as the proxy wrote it, without
        touching the file object the test's thread uses."""
        text = self.stderr_path.read_text(errors="replace").splitlines()[-lines:]
        return f"--- proxy pid {self.pid} stderr (last {lines} lines) ---\n" + "\n".join(text)

    def admin(self, path, timeout=5):
        return http_get(self.admin_address, path, timeout)

    def rss(self):
        return rss_bytes(self.pid)

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"proxy still running {timeout}s later\n{self.stderr_tail()}")

    def close(self):
        """Teardown: the proxy must still be alive (no crash), must exit 0 on SIGTERM, and
        must have printed nothing on stdout after its one `listening` line."""
        try:
            if self.proc.poll() is not None and not self.expect_exit:
                raise AssertionError(f"proxy exited early with {self.proc.returncode}\n"
                                     f"{self.stderr_tail()}")
            if self.proc.poll() is None:
                self.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                    raise AssertionError("proxy ignored SIGTERM for 10s; killed\n"
                                         + self.stderr_tail())
                if self.proc.returncode != 0:
                    raise AssertionError(f"proxy exited {self.proc.returncode} on SIGTERM\n"
                                         f"{self.stderr_tail()}")
            rest = self.proc.stdout.read()
            if self.grpc_address and rest:
                raise AssertionError(f"proxy wrote more than one stdout line: {rest[:200]!r}")
            text = self.stderr_text()
            for marker in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer"):
                if marker in text:
                    raise AssertionError(f"sanitizer report in proxy stderr\n{self.stderr_tail(80)}")
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            with _live_proxies_lock:
                _live_proxies.discard(self)
            self.proc.stdout.close()
            self._stderr.close()
            self.tmpdir.cleanup()


def _dump_live_proxies(say):
    """The deadline's dump section: for each proxy still running, its command, stderr tail and
    native backtraces (gdb, GDB_BUDGET seconds for all of them)."""
    with _live_proxies_lock:
        proxies = sorted(_live_proxies, key=lambda p: p.pid)
    budget_end = time.monotonic() + GDB_BUDGET
    for proxy in proxies:
        if proxy.proc.poll() is not None:
            continue
        say(f"--- proxy pid {proxy.pid}: {' '.join(proxy.args)} (its files stay in {proxy.tmpdir.name})")
        say(proxy._dump_tail())
        left = budget_end - time.monotonic()
        if left <= 1:
            say(f"(no gdb for pid {proxy.pid}: the {GDB_BUDGET} s budget is spent)")
            continue
        say(f"--- proxy pid {proxy.pid}: gdb thread apply all bt ---")
        say(deadline.gdb_backtraces(proxy.pid, timeout=min(deadline.GDB_TIMEOUT, left)))
    if not proxies:
        say("(no proxy running)")


deadline.install()
deadline.add_section(_dump_live_proxies)


def start_proxy(case, upstream_address, *args, env=None, drain=DEFAULT_DRAIN, nofile=None):
    """Start a ready proxy in front of upstream_address (None: no --upstream flag); closed
    by `case`'s cleanup. `case` is a TestCase instance or class (class-level cleanup)."""
    argv = ["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"]
    if upstream_address:
        argv += ["--upstream", upstream_address]
    if drain:
        argv += ["--drain-timeout", drain]
    proxy = Proxy(argv + list(args), env=env, nofile=nofile)
    _cleanup(case, proxy.close)
    return proxy.wait_ready()


def start_upstream(case, tls=None, port=0, options=()):
    upstream = Upstream(tls=tls, options=options)
    upstream.start(port)
    _cleanup(case, upstream.stop)
    return upstream


def start_raw_upstream(case, **kwargs):
    """A raw HTTP/2 upstream (peers/raw_h2.RawH2Upstream(**kwargs)), stopped by `case`'s
    cleanup."""
    from peers.raw_h2 import RawH2Upstream  # python3-h2: only the modules that use it need it

    upstream = RawH2Upstream(**kwargs)
    _cleanup(case, upstream.stop)
    return upstream


def open_raw_client(case, address, **kwargs):
    """A raw HTTP/2 client connection (peers/raw_h2.RawH2Client(address, **kwargs)), closed by
    `case`'s cleanup."""
    from peers.raw_h2 import RawH2Client

    client = RawH2Client(address, **kwargs)
    _cleanup(case, client.close)
    return client


def target(case, upstream, *proxy_args, env=None):
    """Address the client should dial: the upstream in direct mode, else a fresh proxy."""
    if DIRECT:
        return upstream.address
    return start_proxy(case, upstream.address, *proxy_args, env=env).grpc_address


class MemoryLimit:
    """A process held to a memory limit, as a container's is (the deployment's `limits.memory`): a
    cgroup (v1 memory controller) of its own. What the process allocates from then on is charged to
    it (recent kernels no longer move earlier charges along: the few MiB it had at start stay
    outside). Reads back how much it used at most and whether the kernel's OOM killer had to act."""

    ROOT = Path("/sys/fs/cgroup/memory")

    def __init__(self, pid, limit_bytes):
        self.path = self.ROOT / f"sparktrace-test-{os.getpid()}-{pid}"
        self.path.mkdir()
        try:
            (self.path / "memory.limit_in_bytes").write_text(str(limit_bytes))
            (self.path / "cgroup.procs").write_text(str(pid))
        except OSError:
            self.path.rmdir()
            raise

    @classmethod
    def available(cls):
        """None when a test may hold a process to a limit here, else why not."""
        if os.geteuid() != 0:
            return "not root: cannot create a memory cgroup"
        if not (cls.ROOT / "memory.limit_in_bytes").exists() or not os.access(cls.ROOT, os.W_OK):
            return "no writable cgroup v1 memory controller"
        return None

    def peak_bytes(self):
        return int((self.path / "memory.max_usage_in_bytes").read_text())

    def oom_kills(self):
        for line in (self.path / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def close(self):
        """Moves what is still in the cgroup back to the root one (cleanups run before the proxy's
        own), then removes it."""
        try:
            for pid in (self.path / "cgroup.procs").read_text().split():
                (self.ROOT / "cgroup.procs").write_text(pid)
            self.path.rmdir()
        except OSError:
            pass


def limit_memory(case, proxy, limit_bytes):
    """Holds `proxy` to `limit_bytes`, or skips the test where this machine cannot (not root)."""
    why_not = MemoryLimit.available()
    if why_not:
        case.skipTest(why_not)
    limit = MemoryLimit(proxy.pid, limit_bytes)
    case.addCleanup(limit.close)
    return limit


def unary_ok(channel, payload=b"ok", timeout=2):
    """One Echo Unary call through `channel` came back byte for byte (False on any RPC error): for
    waiting until a proxy serves again."""
    try:
        return channel.unary_unary("/sparktrace.test.Echo/Unary")(payload, timeout=timeout) == payload
    except grpc.RpcError:
        return False


def open_channel(case, address, **kw):
    ch = channel(address, **kw)
    _cleanup(case, ch.close)
    return ch


def _cleanup(case, fn):
    if isinstance(case, type):
        case.addClassCleanup(fn)
    else:
        case.addCleanup(fn)


def md(items, key):
    """Values of `key` in a grpc metadata sequence, in order."""
    return [m[1] for m in (items or ()) if m[0] == key]
