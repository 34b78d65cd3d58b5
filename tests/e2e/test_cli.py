"""Command line: flag errors, environment fallback, --help, message size limit (proxy only)."""

import re
import subprocess
import unittest

import grpc

import harness
from harness import new_id

UNARY = "/sparktrace.test.Echo/Unary"
MiB = 1 << 20
FLAGS = ["--listen", "--upstream", "--admin", "--max-message-bytes", "--drain-timeout",
         "--log-level", "--log-format", "--upstream-tls", "--upstream-ca", "--tls-cert",
         "--tls-key"]
# Enough valid flags that only the flag under test is wrong; ephemeral ports so that a
# wrongly accepted flag starts a proxy that harms nothing (and times out the case).
VALID = ["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--upstream", "127.0.0.1:9"]


@harness.proxy_only
class FlagErrorTest(unittest.TestCase):
    def assert_usage_error(self, args, names, env=None):
        try:
            result = harness.run_cli(["proxy", *args], env=env, timeout=10)
        except subprocess.TimeoutExpired as err:
            self.fail(f"{args} {env or ''}: accepted, proxy kept running "
                      f"(stdout {err.stdout!r})")
        self.assertEqual(result.returncode, 2, f"{args} {env or ''}: {result.stderr}")
        self.assertRegex(result.stderr, names, f"stderr should name the flag: {result.stderr!r}")

    def test_missing_upstream(self):
        self.assert_usage_error(VALID[:4], "upstream")

    def test_flag_without_value(self):
        self.assert_usage_error(VALID[:4] + ["--upstream"], "upstream")

    def test_unknown_flag(self):
        self.assert_usage_error(VALID + ["--bogus-flag", "1"], "bogus-flag")

    def test_bad_values(self):
        cases = [("--max-message-bytes", "lots"), ("--max-message-bytes", "-5"),
                 ("--max-message-bytes", "12XiB"), ("--drain-timeout", "soon"),
                 ("--drain-timeout", "-1s"), ("--log-level", "loud"), ("--log-format", "xml")]
        for flag, value in cases:
            with self.subTest(flag=flag, value=value):
                self.assert_usage_error(VALID + [flag, value], re.escape(flag.lstrip("-")))

    def test_tls_cert_without_key(self):
        self.assert_usage_error(VALID + ["--tls-cert", __file__], "tls-key")

    def test_bad_env_value(self):
        self.assert_usage_error(VALID, "(?i)log[-_]level", env={"SPARKTRACE_LOG_LEVEL": "loud"})

    def test_help(self):
        result = harness.run_cli(["proxy", "--help"])
        self.assertEqual(result.returncode, 0, result.stderr)
        text = result.stdout + result.stderr
        self.assertEqual([f for f in FLAGS if f not in text], [], "flags missing from --help")


@harness.proxy_only
class FlagBehaviourTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = harness.start_upstream(cls)

    def call(self, proxy, payload=b"ping", metadata=()):
        tid = new_id()
        with harness.channel(proxy.grpc_address) as ch:
            response = ch.unary_unary(UNARY)(payload, timeout=30,
                                             metadata=[("x-test-id", tid), *metadata])
        return response, self.upstream.record(tid)

    def test_env_fallback_for_upstream(self):
        proxy = harness.start_proxy(self, None, env={"SPARKTRACE_UPSTREAM": self.upstream.address})
        self.assertEqual(self.call(proxy)[0], b"ping")

    def test_flag_beats_env(self):
        proxy = harness.start_proxy(self, self.upstream.address,
                                    env={"SPARKTRACE_UPSTREAM": f"127.0.0.1:{harness.free_port()}"})
        self.assertEqual(self.call(proxy)[0], b"ping")

    def assert_limit(self, proxy, limit):
        """Exactly `limit` bytes pass, one more is RESOURCE_EXHAUSTED, in both directions."""
        self.assertEqual(len(self.call(proxy, bytes(limit))[0]), limit)
        with self.assertRaises(grpc.RpcError) as ctx:
            self.call(proxy, bytes(limit + 1))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED, "request")
        with self.assertRaises(grpc.RpcError) as ctx:
            self.call(proxy, b"", metadata=[("x-test-message-bytes", str(limit + 1))])
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED, "response")

    def test_max_message_bytes_suffix(self):
        for value in ("1MiB", "1048576"):
            with self.subTest(value=value):
                proxy = harness.start_proxy(self, self.upstream.address,
                                            "--max-message-bytes", value)
                self.assert_limit(proxy, MiB)

    def test_max_message_bytes_from_env(self):
        proxy = harness.start_proxy(self, self.upstream.address,
                                    env={"SPARKTRACE_MAX_MESSAGE_BYTES": "2MiB"})
        self.assert_limit(proxy, 2 * MiB)

    def test_default_max_message_bytes_is_256mib(self):
        proxy = harness.start_proxy(self, self.upstream.address)
        with self.assertRaises(grpc.RpcError) as ctx:
            self.call(proxy, bytes(256 * MiB + 1))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)


if __name__ == "__main__":
    unittest.main()
