"""A PostgreSQL store URL's password never shows, however libpq lets it be spelled (finding 5 of
the independent probe).

libpq reads `?pass%77ord=SECRET` (a percent-encoded key) as the password, and the proxy connected
with it, but the text edit that made the URL's display form only knew `password=` and the user info:
the secret appeared in the trace view API's 503 body and the logs. And a mistyped form such as
`?password%3DSECRET` was echoed whole in the start-up error. Now the display is rebuilt from libpq's
own parse, and a URL libpq refuses is reported without its text.
"""

import tempfile
import unittest
from pathlib import Path

import harness

SECRET = "SECRET-in-the-store-url"


@harness.proxy_only
class StoreSecretsTest(unittest.TestCase):
    def test_a_percent_encoded_password_key_never_shows(self):
        upstream = harness.start_upstream(self)
        port = harness.free_port()  # no PostgreSQL there: the proxy spools and answers 503 for the store
        url = f"postgresql://writer@127.0.0.1:{port}/traces?pass%77ord={SECRET}&connect_timeout=1"
        proxy = harness.Proxy(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--upstream", upstream.address,
                               "--drain-timeout", harness.DEFAULT_DRAIN, "--store", url,
                               "--spool-dir", str(Path(self.tmp()) / "spool")])
        self.addCleanup(proxy.close)
        proxy.wait_ready()
        answers = []
        for path in ("/api/v1/tasks", "/readyz", "/metrics", "/"):
            status, _, body = proxy.admin(path)
            answers.append((path, status, body))
            self.assertNotIn(SECRET, body, f"{path} ({status})")
        self.assertIn(503, [status for _, status, _ in answers], "the store is down: some answer says so")
        harness.wait_until(lambda: f"127.0.0.1:{port}" in proxy.stderr_text(), 10,
                           message="the store's display form in the log")
        self.assertNotIn(SECRET, proxy.stderr_text())
        self.assertIn("writer:***@", proxy.stderr_text())

    def test_a_url_libpq_refuses_is_reported_without_its_text(self):
        for url in (f"postgresql://db.example/traces?password%3D{SECRET}",
                    f"postgresql://u:{SECRET}@db.example/traces?no_such_parameter=1"):
            with self.subTest(url=url):
                result = harness.run_cli(["proxy", "--upstream", "127.0.0.1:1", "--store", url])
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("--store", result.stderr)
                self.assertNotIn(SECRET, result.stderr + result.stdout)
                self.assertNotIn("db.example", result.stderr)

    def tmp(self):
        directory = tempfile.TemporaryDirectory(prefix="sparktrace-store-secrets-")
        self.addCleanup(directory.cleanup)
        return directory.name


if __name__ == "__main__":
    unittest.main()
