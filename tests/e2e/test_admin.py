"""Admin endpoints, metrics, access log and secret redaction (proxy only)."""

import base64
import http.client
import json
import shutil
import subprocess
import unittest
import uuid

import grpc

import harness
from harness import new_id
from promtext import Metrics

SVC = "/sparktrace.test.Echo"
UNARY, SSTREAM, CSTREAM = f"{SVC}/Unary", f"{SVC}/ServerStream", f"{SVC}/ClientStream"


@harness.proxy_only
class AdminTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)

    def proxy(self, *args):
        proxy = harness.start_proxy(self, self.upstream.address, *args)
        return proxy, harness.open_channel(self, proxy.grpc_address)

    def metrics(self, proxy):
        status, headers, body = proxy.admin("/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers.get("content-type", "").startswith("text/plain"), headers)
        return Metrics(body), body

    def test_healthz(self):
        proxy, _ = self.proxy()
        self.assertEqual(proxy.admin("/healthz")[0], 200)

    def test_readyz_ok_with_live_upstream(self):
        proxy, _ = self.proxy()
        harness.wait_until(lambda: proxy.admin("/readyz")[0] == 200, 10, message="readyz 200")

    def test_readyz_503_while_upstream_down_then_200(self):
        port = harness.free_port()
        proxy = harness.start_proxy(self, f"127.0.0.1:{port}")
        harness.wait_until(lambda: proxy.admin("/readyz")[0] == 503, 10, message="readyz 503")
        self.assertEqual(proxy.admin("/healthz")[0], 200, "liveness must not follow upstream")
        with harness.channel(proxy.grpc_address) as ch:
            with self.assertRaises(grpc.RpcError) as ctx:
                ch.unary_unary(UNARY)(b"", timeout=10)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)
        harness.wait_until(
            lambda: self.metrics(proxy)[0].value("sparktrace_upstream_connect_failures_total") > 0,
            10, message="sparktrace_upstream_connect_failures_total > 0")

        harness.start_upstream(self, port=port)
        harness.wait_until(lambda: proxy.admin("/readyz")[0] == 200, 20,
                           interval=0.1, message="readyz 200 after upstream came up")

    def test_metrics_count_known_traffic(self):
        proxy, ch = self.proxy()
        for _ in range(3):
            ch.unary_unary(UNARY)(b"x" * 1000, timeout=10)
        for _ in range(2):
            with self.assertRaises(grpc.RpcError):
                ch.unary_unary(UNARY)(b"y" * 1000, timeout=10,
                                      metadata=[("x-test-status-code", "5")])
        self.assertEqual(len(list(ch.unary_stream(SSTREAM)(
            b"z" * 10, timeout=10,
            metadata=[("x-test-stream-count", "4"), ("x-test-message-bytes", "100")]))), 4)
        self.assertEqual(len(ch.stream_unary(CSTREAM)(iter([b"a" * 10, b"b" * 20, b"c" * 30]),
                                                      timeout=10)), 96)

        # Counting may lag the client's view of the status by a moment.
        def settled():
            m = self.metrics(proxy)[0]
            return m.value("sparktrace_rpc_calls_total", method=CSTREAM, code="OK") == 1 \
                and m.value("sparktrace_rpc_active_calls") == 0 and m
        m = harness.wait_until(settled, 10, message="metrics to settle")
        body = self.metrics(proxy)[1]

        calls = "sparktrace_rpc_calls_total"
        self.assertEqual(m.value(calls, method=UNARY, code="OK"), 3)
        self.assertEqual(m.value(calls, method=UNARY, code="NOT_FOUND"), 2)
        self.assertEqual(m.value(calls, method=SSTREAM, code="OK"), 1)
        self.assertEqual(m.total(calls), 7)

        msgs, nbytes = "sparktrace_rpc_messages_total", "sparktrace_rpc_bytes_total"
        # direction "in" = client -> upstream (requests), "out" = responses
        expected = {  # method: ((in messages, in payload bytes), (out messages, out bytes))
            UNARY: ((5, 5000), (3, 3000)),
            SSTREAM: ((1, 10), (4, 400)),
            CSTREAM: ((3, 60), (1, 96)),
        }
        for method, per_direction in expected.items():
            for direction, (count, payload) in zip(("in", "out"), per_direction):
                with self.subTest(method=method, direction=direction):
                    self.assertEqual(m.value(msgs, method=method, direction=direction), count)
                    got = m.value(nbytes, method=method, direction=direction)
                    # payload bytes, or payload plus the 5-byte gRPC frame header per message
                    self.assertTrue(payload <= got <= payload + 5 * count, got)

        duration = "sparktrace_rpc_duration_seconds"
        self.assertEqual(m.value(duration + "_count", method=UNARY), 5)
        self.assertEqual(m.value(duration + "_bucket", method=UNARY, le="+Inf"), 5)
        self.assertGreater(m.value(duration + "_sum", method=UNARY), 0)
        ttfr = "sparktrace_rpc_time_to_first_response_seconds"
        # 5 calls got a response message (3 unary OK, the two streams); the 2 errors may count
        self.assertTrue(5 <= m.total(ttfr + "_count") <= 7, m.total(ttfr + "_count"))

        self.assertEqual(m.value("sparktrace_upstream_connect_failures_total"), 0)
        for name, kind in [(calls, "counter"), (msgs, "counter"), (nbytes, "counter"),
                           (duration, "histogram"), (ttfr, "histogram"),
                           ("sparktrace_rpc_active_calls", "gauge"),
                           ("sparktrace_upstream_connect_failures_total", "counter")]:
            # the text format names a counter family with or without its _total suffix
            declared = m.types.get(name) or m.types.get(name.removesuffix("_total"))
            self.assertEqual(declared, kind, f"# TYPE of {name}")
        self.promtool_check(body)

    def promtool_check(self, body):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool missing: apt-get install prometheus")
        result = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                                capture_output=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_active_calls_gauge(self):
        proxy, ch = self.proxy()
        tid = new_id()
        stream = ch.unary_stream(SSTREAM)(b"", timeout=20, metadata=[
            ("x-test-id", tid), ("x-test-stream-count", "2"), ("x-test-gate", tid)])
        next(stream)
        active = "sparktrace_rpc_active_calls"
        harness.wait_until(lambda: self.metrics(proxy)[0].value(active) == 1, 10,
                           message=f"{active} == 1")
        self.upstream.release(tid)
        self.assertEqual(len(list(stream)), 1)
        harness.wait_until(lambda: self.metrics(proxy)[0].value(active) == 0, 10,
                           message=f"{active} == 0")

    def test_access_log_one_line_per_rpc(self):
        for fmt in ("text", "json"):
            with self.subTest(log_format=fmt):
                proxy, ch = self.proxy("--log-format", fmt)
                path = f"/sparktrace.test.Log{uuid.uuid4().hex}/Unary"
                ch.unary_unary(path)(b"", timeout=10)
                ch.unary_unary(path)(b"", timeout=10)
                with self.assertRaises(grpc.RpcError):
                    ch.unary_unary(path)(b"", timeout=10, metadata=[("x-test-status-code", "7")])
                # a later call's line appearing means the three earlier ones are written too
                sentinel = f"/sparktrace.test.Sentinel{uuid.uuid4().hex}/Unary"
                ch.unary_unary(sentinel)(b"", timeout=10)
                harness.wait_until(lambda: sentinel in proxy.stderr_text(), 10,
                                   message="access log line of the sentinel call")
                lines = [l for l in proxy.stderr_text().splitlines() if path in l]
                self.assertEqual(len(lines), 3, "\n".join(lines) or proxy.stderr_tail())
                if fmt == "json":
                    for line in lines:
                        self.assertIsInstance(json.loads(line), dict)

    def test_secrets_never_logged(self):
        for args in (["--log-level", "debug"], ["--log-level", "debug", "--log-format", "json"],
                     ["--log-level", "trace"]):
            with self.subTest(args=" ".join(args)):
                self.check_secrets(args)

    def check_secrets(self, args):
        proxy, ch = self.proxy(*args)
        secret = lambda: "S3CR3T" + uuid.uuid4().hex  # noqa: E731
        secrets = {name: secret() for name in (
            "authorization", "authentication", "cookie", "x-auth-token", "x-mytokens",
            "x-db-password", "x-client-secret", "x-api-key")}
        # Binary secret with a printable core, so an escaped dump (b'\x00..') shows it too.
        raw_core = uuid.uuid4().hex
        raw = b"\x00\xff" + raw_core.encode() + b"\x01"
        plain = f"x-e2e-plain-{uuid.uuid4().hex}"
        tid = new_id()
        metadata = [("x-test-id", tid), (plain, "visible")] + list(secrets.items()) + \
            [("x-session-token-bin", raw)]
        ch.unary_unary(UNARY)(b"", timeout=10, metadata=metadata)
        with self.assertRaises(grpc.RpcError):  # error paths log too
            ch.unary_unary(UNARY)(b"", timeout=10,
                                  metadata=metadata[1:] + [("x-test-status-code", "16")])
        # Redaction must not touch what is forwarded.
        seen = self.upstream.record(tid)
        self.assertEqual({k: seen.md1(k) for k in secrets}, secrets)
        self.assertEqual(seen.md1("x-session-token-bin"), raw)

        proxy.terminate()  # exit flushes every log line
        self.assertEqual(proxy.wait_exit(10), 0)
        proxy.expect_exit = True
        output = proxy.stderr_text()
        self.assertIn(plain, output, "debug log should name request headers")
        self.assertIn("authorization", output, "debug log should name request headers")
        leaks = [name for name, value in secrets.items()
                 if value in output or value[6:16] in output]
        encodings = [raw_core, raw.hex(), base64.b64encode(raw).decode().rstrip("="),
                     base64.urlsafe_b64encode(raw).decode().rstrip("=")]
        if any(e in output for e in encodings) or raw in proxy.stderr_path.read_bytes():
            leaks.append("x-session-token-bin")
        self.assertEqual(leaks, [], "secret header values written to the log")


    def test_admin_token_from_the_environment_guards_the_trace_view_only(self):
        token = "e2e-admin-t0ken-" + harness.new_id()
        proxy = harness.start_proxy(self, self.upstream.address, "--log-level", "debug",
                                    env={"SPARKTRACE_ADMIN_TOKEN": token})
        host, port = proxy.admin_address.rsplit(":", 1)

        def get(path, headers=None):
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            try:
                conn.request("GET", path, headers=headers or {})
                resp = conn.getresponse()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
            finally:
                conn.close()

        self.assertEqual(get("/api/v1/tasks")[0], 401)
        self.assertEqual(get("/")[0], 401)
        status, _, body = get("/api/v1/tasks", {"Authorization": f"Bearer {token}"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["schema"], "sparktrace.tasks/2")
        status, headers, _ = get(f"/tasks/etl/load/run/1?token={token}")
        self.assertEqual(status, 303)
        self.assertEqual(headers["location"], "/tasks/etl/load/run/1")
        cookie = headers["set-cookie"].split(";")[0]
        self.assertEqual(get("/tasks/etl/load/run/1", {"Cookie": cookie})[0], 200)
        for open_path in ("/healthz", "/metrics"):
            self.assertEqual(get(open_path)[0], 200, open_path)
        # Not behind the token either; 503 only until the upstream connection is up (a loaded machine).
        self.assertIn(get("/readyz")[0], (200, 503))
        harness.wait_until(lambda: get("/readyz")[0] == 200, 10, interval=0.05, message="/readyz to say ready")
        self.assertNotIn(token, proxy.stderr_text(), "the token must never be logged")


if __name__ == "__main__":
    unittest.main()
