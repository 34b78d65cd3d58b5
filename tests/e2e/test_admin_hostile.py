"""The admin port against hostile clients (docs/admin-limits.md): oversized heads, a request line
that never ends, slowloris, hundreds of idle connections, running out of descriptors, DNS
rebinding and cross-origin writes, in `sparktrace proxy` and `sparktrace ui` alike.

Every check is bounded: a client sends only until the server answers or closes, waits on socket
timeouts rather than sleeps, and the proxy's memory is read from /proc/PID/status.
"""

import fcntl
import json
import os
import resource
import select
import socket
import subprocess
import termios
import time
import unittest

import harness
from promtext import Metrics

MiB = 1 << 20


def connect(address, timeout=10):
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout)


def read_answer(sock):
    """Everything until the server closes (or resets) the connection, or the socket times out."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return data
        if not chunk:
            return data
        data += chunk


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else None


def flood(sock, first, filler, limit_bytes):
    """Sends `first`, then `filler` over and over until the server answers (or closes), at most
    `limit_bytes`. Returns the bytes sent and the answer."""
    sent = 0
    payload = first
    while sent < limit_bytes:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sock.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(payload)
        payload = filler
    return sent, read_answer(sock)


def raw_request(address, request, timeout=10):
    with connect(address, timeout) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        return read_answer(sock)


@harness.proxy_only
class AdminHostileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)

    def proxy(self, *args):
        return harness.start_proxy(self, self.upstream.address, *args)

    def metrics(self, proxy):
        status, _, body = proxy.admin("/metrics")
        self.assertEqual(status, 200)
        return Metrics(body)

    def refused(self, proxy, reason):
        return self.metrics(proxy).value("sparktrace_admin_requests_refused_total", reason=reason)

    def test_300_mb_of_header_lines_get_431_at_once_and_memory_stays_small(self):
        proxy = self.proxy()
        harness.wait_until(lambda: proxy.admin("/healthz")[0] == 200, 10, message="healthz")
        rss_before = proxy.rss()
        start = time.monotonic()
        with connect(proxy.admin_address) as sock:
            line = b"X-Flood: " + b"f" * 1000 + b"\r\n"
            sent, answer = flood(sock, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", line * 64, 300 * MiB)
        elapsed = time.monotonic() - start
        self.assertEqual(status_of(answer), 431, answer[:200])
        # Refused at 32 KiB: what got out before the answer was read is socket buffers, not 300 MB.
        self.assertLess(sent, 64 * MiB, f"sent {sent} bytes before the server answered")
        self.assertLess(elapsed, 10, f"answered after {elapsed:.1f} s")
        growth = proxy.rss() - rss_before
        self.assertLess(growth, 16 * MiB, f"RSS grew by {growth / MiB:.1f} MiB")
        self.assertEqual(self.refused(proxy, "headers_too_large"), 1)
        self.assertEqual(proxy.admin("/healthz")[0], 200)

    def test_a_request_line_without_a_newline_gets_414(self):
        proxy = self.proxy()
        rss_before = proxy.rss()
        with connect(proxy.admin_address) as sock:
            sent, answer = flood(sock, b"GET /", b"a" * 65536, 300 * MiB)
        self.assertEqual(status_of(answer), 414, answer[:200])
        self.assertLess(sent, 64 * MiB)
        self.assertLess(proxy.rss() - rss_before, 16 * MiB)
        self.assertEqual(self.refused(proxy, "uri_too_long"), 1)

    def test_slowloris_is_cut_at_the_header_timeout(self):
        proxy = self.proxy("--admin-header-timeout", "1s")
        start = time.monotonic()
        with connect(proxy.admin_address) as sock:
            # One byte every 100 ms: each keeps a per-read timeout alive, not a deadline for the head.
            head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 200
            answer = b""
            for byte in head:
                if select.select([sock], [], [], 0.1)[0]:
                    answer = read_answer(sock)
                    break
                try:
                    sock.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    answer = read_answer(sock)
                    break
        elapsed = time.monotonic() - start
        self.assertEqual(status_of(answer), 408, answer[:200])
        self.assertLess(elapsed, 5, f"closed after {elapsed:.1f} s with a 1 s header timeout")
        self.assertGreaterEqual(self.refused(proxy, "header_timeout"), 1)

    def test_hundreds_of_idle_connections_do_not_lock_out_the_probes(self):
        proxy = self.proxy("--admin-max-connections", "16")
        sockets = []
        try:
            for _ in range(300):
                sockets.append(connect(proxy.admin_address))
            # Each new connection closed the oldest idle one: the probe gets a slot too.
            start = time.monotonic()
            self.assertEqual(proxy.admin("/healthz", timeout=2)[0], 200)
            self.assertLess(time.monotonic() - start, 1.0, "the kubelet's probe timeout is 1 s")
            m = self.metrics(proxy)
            self.assertLessEqual(m.value("sparktrace_admin_connections"), 16)
            self.assertGreaterEqual(
                m.value("sparktrace_admin_requests_refused_total", reason="evicted"), 300 - 16)
            closed = sum(1 for sock in sockets if select.select([sock], [], [], 0)[0] and not read_answer(sock))
            self.assertGreaterEqual(closed, 300 - 16)
        finally:
            for sock in sockets:
                sock.close()
        self.assertEqual(self.refused(proxy, "max_connections"), 0)

    def probe_times(self, proxy, seconds=2.0, interval=0.05):
        """GET /healthz on a new connection every `interval` for `seconds`: (statuses, latencies)."""
        statuses, latencies = [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.monotonic()
            try:
                statuses.append(proxy.admin("/healthz", timeout=2)[0])
            except OSError as error:
                statuses.append(repr(error))
            latencies.append(time.monotonic() - start)
            time.sleep(interval)  # the probes' period, not a synchronisation
        return statuses, latencies

    def assert_probes_answer(self, proxy, what):
        statuses, latencies = self.probe_times(proxy)
        self.assertEqual(set(statuses), {200}, f"{what}: {statuses}")
        latencies.sort()
        median, worst = latencies[len(latencies) // 2], latencies[-1]
        # The bar is 100 ms; the kubelet's own timeout is 1 s, which no probe may reach. The
        # 1 s is a release build's claim, checked by the normal pass: the sanitizer pass (each request
        # two to three times the CPU, beside other tests on 2 cores) once measured 1,031 ms; there it
        # checks that no probe waits out a slot (2 s) while the median keeps the 100 ms bar.
        self.assertLess(median, 0.1, f"{what}: median /healthz {median * 1000:.0f} ms")
        worst_bar = 2.0 if harness.SANITIZED else 1.0
        self.assertLess(worst, worst_bar, f"{what}: slowest /healthz {worst * 1000:.0f} ms")

    def test_300_post_heads_without_a_body_leave_the_probes_answering(self):
        # Finding 1 of the probe: complete POST heads and then nothing held every slot for the whole
        # body timeout, with or without the token, on both POST routes; /healthz answered 503.
        for route, token in (("/api/v1/events", None), ("/api/v1/events", "s3cret-admin-token-0123"),
                             ("/api/v1/airflow/task-attempts", None),
                             ("/api/v1/airflow/task-attempts", "s3cret-admin-token-0123")):
            with self.subTest(route=route, token=token):
                proxy = self.proxy(*(["--admin-token", token] if token else []))
                host = proxy.admin_address.encode()
                sockets = []
                try:
                    for _ in range(300):
                        sock = connect(proxy.admin_address)
                        sock.sendall(b"POST " + route.encode() + b" HTTP/1.1\r\nHost: " + host +
                                     b"\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n")
                        sockets.append(sock)
                    self.assert_probes_answer(proxy, f"300 body-less POST {route} heads")
                    m = self.metrics(proxy)
                    self.assertLessEqual(m.value("sparktrace_admin_connections"), 256 + 8)
                    self.assertEqual(m.value("sparktrace_admin_requests_refused_total", reason="max_connections"), 0)
                finally:
                    for sock in sockets:
                        sock.close()

    def test_a_head_then_a_stalled_body_is_408_after_the_body_idle_timeout(self):
        proxy = self.proxy("--admin-body-idle-timeout", "500ms")
        start = time.monotonic()
        with connect(proxy.admin_address) as sock:
            sock.sendall(b"POST /api/v1/events HTTP/1.1\r\nHost: " + proxy.admin_address.encode() +
                         b"\r\nContent-Length: 10\r\n\r\nhalf")
            answer = read_answer(sock)
        elapsed = time.monotonic() - start
        self.assertEqual(status_of(answer), 408, answer[:200])
        self.assertIn(b"idle timeout", answer)
        self.assertLess(elapsed, 5, f"closed after {elapsed:.1f} s with a 0.5 s body idle timeout")
        self.assertEqual(self.refused(proxy, "body_timeout"), 1)

    def test_clients_that_never_read_their_answers_leave_the_probes_answering(self):
        # Connections whose answers cannot be written (the client stopped reading) are being
        # answered: none can be closed for room. The probes have places of their own.
        proxy = self.proxy("--admin-max-connections", "4", "--admin-max-connections-per-peer", "4")
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        stalled = []
        try:
            for _ in range(4):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                host, port = proxy.admin_address.rsplit(":", 1)
                sock.connect((host, int(port)))
                sock.setblocking(False)
                stalled.append(sock)
                # Pipelined, answered one at a time: 2,000 answers of ~20 KB are far more than the
                # server's socket buffers hold, so its writes stall and it stops reading; the client
                # stops too once its own buffers are full (a second with nothing writable).
                pipeline, sent = request * 2000, 0
                while sent < len(pipeline) and select.select([], [sock], [], 1.0)[1]:
                    try:
                        sent += sock.send(pipeline[sent:sent + 65536])
                    except BlockingIOError:
                        pass
            # Stuck once what the server sent fills this side's small receive buffer and stops
            # growing (looked at from here: a request to the admin port now could take the place of
            # a connection caught between two answers).
            def unread_bytes():
                return [int.from_bytes(fcntl.ioctl(sock, termios.FIONREAD, b"\0\0\0\0"), "little")
                        for sock in stalled]

            harness.wait_until(lambda: min(unread_bytes()) >= 1024, 20, message="answers on every connection")

            counts, deadline = unread_bytes(), time.monotonic() + 20
            while True:  # until half a second passes with no byte arriving on any of them
                time.sleep(0.5)  # the window the counts must stay still in, not a synchronisation
                counts, previous = unread_bytes(), counts
                if counts == previous:
                    break
                self.assertLess(time.monotonic(), deadline, "the answers never stalled")
            # Every slot is stuck writing: anything but a probe is refused on a probe's place.
            self.assertEqual(proxy.admin("/metrics", timeout=2)[0], 503)
            self.assert_probes_answer(proxy, "4 connections that never read")
        finally:
            for sock in stalled:
                sock.close()
        harness.wait_until(lambda: proxy.admin("/metrics")[0] == 200, 10, message="the slots free again")
        self.assertGreaterEqual(self.refused(proxy, "probe_only"), 1)
        self.assertEqual(self.refused(proxy, "max_connections"), 0)

    @unittest.skipIf(harness.SANITIZED, "the sanitizers' runtimes need descriptors of their own")
    def test_out_of_descriptors_the_admin_port_pauses_and_logs_json_without_a_flood(self):
        proxy = self.proxy("--log-format", "json", "--threads", "1")
        self.assertEqual(proxy.admin("/healthz")[0], 200)
        open_fds = len(os.listdir(f"/proc/{proxy.pid}/fd"))
        _, hard = resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE, (open_fds + 2, hard))
        sockets = [connect(proxy.admin_address) for _ in range(20)]
        try:
            harness.wait_until(lambda: "cannot accept connections" in proxy.stderr_text(), 10,
                               message="the accept failure logged")
            cpu_before = harness.process_cpu_seconds(proxy.pid)
            time.sleep(1.0)  # a measurement window, not a synchronisation
            cpu = harness.process_cpu_seconds(proxy.pid) - cpu_before
            self.assertLess(cpu, 0.5, f"proxy used {cpu:.2f} s of CPU in 1 s while out of descriptors")
        finally:
            for sock in sockets:
                sock.close()
        resource.prlimit(proxy.pid, resource.RLIMIT_NOFILE, (hard, hard))
        harness.wait_until(lambda: proxy.admin("/healthz")[0] == 200, 10, message="healthz after")
        self.assertGreater(self.metrics(proxy).value("sparktrace_admin_accept_pauses_total"), 0)
        lines = [line for line in proxy.stderr_text().splitlines() if "accept" in line or "libevent" in line]
        self.assertLess(len(lines), 10, "\n".join(lines[:20]))
        for line in lines:
            json.loads(line)  # libevent's lines and ours honour --log-format json

    def test_the_trace_view_and_event_push_refuse_other_hosts_and_origins(self):
        proxy = self.proxy()
        admin = proxy.admin_address.encode()

        def ask(method, path, headers=b"", body=b""):
            return status_of(raw_request(proxy.admin_address,
                                         method + b" " + path + b" HTTP/1.1\r\n" + headers +
                                         b"Content-Length: " + str(len(body)).encode() +
                                         b"\r\nConnection: close\r\n\r\n" + body))

        rebound = b"Host: rebound.attacker.example:" + admin.rsplit(b":", 1)[1] + b"\r\n"
        self.assertEqual(ask(b"GET", b"/api/v1/tasks", rebound), 421)
        self.assertEqual(ask(b"GET", b"/", rebound), 421)
        self.assertEqual(ask(b"POST", b"/api/v1/events", rebound, b"{}\n"), 421)
        # The kubelet and Prometheus name the pod's IP, or anything: the probes answer.
        self.assertEqual(ask(b"GET", b"/healthz", rebound), 200)
        self.assertEqual(ask(b"GET", b"/metrics", b"Host: 10.1.2.3:9464\r\n"), 200)
        self.assertEqual(ask(b"GET", b"/api/v1/tasks", b"Host: " + admin + b"\r\n"), 200)

        event = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n'
        own = b"Host: " + admin + b"\r\n"
        self.assertEqual(ask(b"POST", b"/api/v1/events", own + b"Origin: http://attacker.example\r\n", event), 403)
        self.assertEqual(ask(b"POST", b"/api/v1/events", own + b"Content-Type: text/plain\r\n", event), 415)
        self.assertEqual(
            ask(b"POST", b"/api/v1/events?app=app-hostile-1", own + b"Origin: http://" + admin +
                b"\r\nContent-Type: application/x-ndjson\r\n", event), 200)
        m = self.metrics(proxy)
        for reason, count in (("host", 3), ("origin", 1), ("content_type", 1)):
            self.assertEqual(m.value("sparktrace_admin_requests_refused_total", reason=reason), count, reason)

    def test_with_the_admin_token_an_event_push_needs_it_unless_told_otherwise(self):
        # Pushed jobs join the operations their Spark Connect job tags name, in whichever task's
        # trace: an open push route let any pod that reaches the admin port write into it.
        token = b"s3cret-admin-token-0123"
        event = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n'

        def push(proxy, extra=b""):
            return status_of(raw_request(
                proxy.admin_address,
                b"POST /api/v1/events?app=app-token-1 HTTP/1.1\r\nHost: " + proxy.admin_address.encode() +
                b"\r\nContent-Type: application/x-ndjson\r\n" + extra + b"Content-Length: " +
                str(len(event)).encode() + b"\r\nConnection: close\r\n\r\n" + event))

        guarded = self.proxy("--admin-token", token.decode())
        self.assertEqual(push(guarded), 401)
        self.assertEqual(push(guarded, b"Authorization: Bearer wrong-token-0123456789\r\n"), 401)
        self.assertEqual(push(guarded, b"Authorization: Bearer " + token + b"\r\n"), 200)
        self.assertEqual(self.refused(guarded, "unauthorized"), 2)

        opened = self.proxy("--admin-token", token.decode(), "--event-push-without-token")
        self.assertEqual(push(opened), 200)
        self.assertEqual(self.refused(opened, "unauthorized"), 0)

    def test_listed_hosts_reach_the_trace_view(self):
        proxy = self.proxy("--admin-allowed-hosts", "sparktrace.tools.svc.cluster.local,.traces.example")
        for host in (b"sparktrace.tools.svc.cluster.local:9464", b"eu.traces.example"):
            answer = raw_request(proxy.admin_address,
                                 b"GET /api/v1/tasks HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            self.assertEqual(status_of(answer), 200, host)

    def test_malformed_limit_flags_exit_2_naming_the_flag(self):
        for command in (["proxy", "--upstream", "127.0.0.1:1"], ["ui"]):
            for flag, value in (("--admin-max-connections", "zero"), ("--admin-header-timeout", "10"),
                                ("--admin-max-header-bytes", "1"), ("--admin-allowed-hosts", "a b")):
                with self.subTest(command=command[0], flag=flag):
                    result = harness.run_cli([*command, flag, value])
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertIn(flag, result.stderr)
        for command in ("proxy", "ui"):
            text = harness.run_cli([command, "--help"]).stdout
            for flag in ("--admin-max-connections", "--admin-header-timeout", "--admin-idle-timeout",
                         "--admin-max-request-line", "--admin-max-header-bytes", "--admin-allowed-hosts"):
                self.assertIn(flag, text, command)

    def test_the_ui_command_has_the_same_limits(self):
        proxy = self.proxy()  # writes a store the ui can open
        ui = subprocess.Popen([harness.BIN, "ui", "--store", str(proxy.store_path), "--listen", "127.0.0.1:0",
                               "--admin-header-timeout", "1s"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=harness.proxy_env())
        self.addCleanup(lambda: (ui.kill(), ui.wait(10), ui.stdout.close(), ui.stderr.close()))
        line = harness.first_line(ui).strip()
        self.assertTrue(line.startswith("trace view http://"), line)
        address = line.removeprefix("trace view http://").rstrip("/")
        rss_before = harness.rss_bytes(ui.pid)
        with connect(address) as sock:
            sent, answer = flood(sock, b"GET / HTTP/1.1\r\n", b"X-F: " + b"f" * 4000 + b"\r\n", 300 * MiB)
        self.assertEqual(status_of(answer), 431, answer[:200])
        self.assertLess(harness.rss_bytes(ui.pid) - rss_before, 16 * MiB)
        with connect(address) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            self.assertEqual(status_of(read_answer(sock)), 408)
        answer = raw_request(address, b"GET /api/v1/tasks HTTP/1.1\r\nHost: rebound.example\r\n\r\n")
        self.assertEqual(status_of(answer), 421)


if __name__ == "__main__":
    unittest.main()
