"""TLS on the listener and towards the upstream, with a throwaway CA made by openssl."""

import hashlib
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import grpc

import harness
from harness import md, new_id
from peers.upstream_server import pattern

UNARY = "/sparktrace.test.Echo/Unary"
SSTREAM = "/sparktrace.test.Echo/ServerStream"


def make_pki(directory, name):
    """CA + server certificate for localhost/127.0.0.1 (EC keys: fast to generate)."""
    d = Path(directory)
    ca, ca_key, key, csr, cert, ext = (d / f"{name}-{f}" for f in (
        "ca.pem", "ca.key", "server.key", "server.csr", "server.pem", "ext.cnf"))
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=critical,digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for cmd in (
        ["req", "-x509", *ec, "-keyout", ca_key, "-out", ca, "-days", "2",
         "-subj", f"/CN=sparktrace e2e {name} CA"],
        ["req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext],
    ):
        subprocess.run(["openssl", *map(str, cmd)], check=True, capture_output=True, timeout=30)
    return {"ca": str(ca), "cert": str(cert), "key": str(key),
            "ca_pem": ca.read_bytes(), "cert_pem": cert.read_bytes(), "key_pem": key.read_bytes()}


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tmp = tempfile.TemporaryDirectory(prefix="sparktrace-tls-")
        cls.addClassCleanup(tmp.cleanup)
        cls.pki = make_pki(tmp.name, "good")
        cls.other = make_pki(tmp.name, "other")  # a CA that signed nothing we serve
        cls.plain_upstream = harness.start_upstream(cls)
        cls.tls_upstream = harness.start_upstream(
            cls, tls=(cls.pki["cert_pem"], cls.pki["key_pem"]))

    def client_creds(self):
        return grpc.ssl_channel_credentials(root_certificates=self.pki["ca_pem"])

    def listener_flags(self):
        return ["--tls-cert", self.pki["cert"], "--tls-key", self.pki["key"]]

    def upstream_flags(self, pki=None):
        return ["--upstream-tls", "--upstream-ca", (pki or self.pki)["ca"]]

    def roundtrip(self, address, upstream, credentials=None):
        tid = new_id()
        payload = os.urandom(100_000)
        ch = harness.open_channel(self, address, credentials=credentials)
        response, call = ch.unary_unary(UNARY).with_call(
            payload, timeout=10,
            metadata=[("x-test-id", tid), ("x-key-bin", b"\x00\x01"),
                      ("x-echo-trailing-x-back", "ok")])
        self.assertEqual(hashlib.sha256(response).digest(), hashlib.sha256(payload).digest())
        self.assertEqual(md(call.trailing_metadata(), "x-back"), ["ok"])
        self.assertEqual(upstream.record(tid).md("x-key-bin"), [b"\x00\x01"])
        stream = ch.unary_stream(SSTREAM)(b"", timeout=10, metadata=[
            ("x-test-id", tid + "s"), ("x-test-stream-count", "3")])
        self.assertEqual(list(stream), [pattern(tid + "s", i, 64) for i in range(3)])

    def test_tls_client_to_tls_listener(self):
        if harness.DIRECT:
            address, upstream = self.tls_upstream.address, self.tls_upstream
        else:
            upstream = self.plain_upstream
            address = harness.start_proxy(self, upstream.address,
                                          *self.listener_flags()).grpc_address
        self.roundtrip(address, upstream, self.client_creds())

    def test_plaintext_client_refused_by_tls_listener(self):
        address = self.tls_upstream.address if harness.DIRECT else harness.start_proxy(
            self, self.plain_upstream.address, *self.listener_flags()).grpc_address
        with harness.channel(address) as ch:
            with self.assertRaises(grpc.RpcError) as ctx:
                ch.unary_unary(UNARY)(b"", timeout=5)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_client_with_wrong_ca_refused(self):
        address = self.tls_upstream.address if harness.DIRECT else harness.start_proxy(
            self, self.plain_upstream.address, *self.listener_flags()).grpc_address
        creds = grpc.ssl_channel_credentials(root_certificates=self.other["ca_pem"])
        with harness.channel(address, credentials=creds) as ch:
            with self.assertRaises(grpc.RpcError) as ctx:
                ch.unary_unary(UNARY)(b"", timeout=5)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)

    @harness.proxy_only
    def test_proxy_to_tls_upstream(self):
        proxy = harness.start_proxy(self, self.tls_upstream.address, *self.upstream_flags())
        self.roundtrip(proxy.grpc_address, self.tls_upstream)

    @harness.proxy_only
    def test_tls_on_both_hops(self):
        proxy = harness.start_proxy(self, self.tls_upstream.address, *self.listener_flags(),
                                    *self.upstream_flags())
        self.roundtrip(proxy.grpc_address, self.tls_upstream, self.client_creds())

    @harness.proxy_only
    def test_untrusted_upstream_certificate_refused(self):
        """The proxy must verify the upstream against --upstream-ca, not just encrypt."""
        proxy = harness.start_proxy(self, self.tls_upstream.address,
                                    *self.upstream_flags(self.other))
        with harness.channel(proxy.grpc_address) as ch:
            with self.assertRaises(grpc.RpcError) as ctx:
                ch.unary_unary(UNARY)(b"", timeout=10)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)

    @harness.proxy_only
    def test_plaintext_proxy_to_tls_upstream_fails(self):
        """Without --upstream-tls the proxy speaks h2c, which a TLS upstream refuses."""
        proxy = harness.start_proxy(self, self.tls_upstream.address)
        with harness.channel(proxy.grpc_address) as ch:
            with self.assertRaises(grpc.RpcError) as ctx:
                ch.unary_unary(UNARY)(b"", timeout=10)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
