"""The report's token read from a file (``[sparktrace] token_file`` / ``SPARKTRACE_TOKEN_FILE``): a
Kubernetes Secret mounted as a volume (k8s/base's ``sparktrace-admin-token``, key ``token``).

Against the real HTTP server of test_report.py: the file's content (without its trailing newline) is
the Bearer token; it is read at each report, so a rotated file is used by the next report; a set
``token`` wins over the file; a missing, empty, oversized or non-ASCII file sends nothing (the proxy
would answer 401) and logs one line naming the file, never its content."""

import logging
import os
import tempfile
import unittest

from sparktrace_airflow import sparktrace_plugin as plugin
from sparktrace_airflow.sparktrace_plugin import SparktraceListener
from tests._support import fake_airflow, remove_fake_airflow
from tests.test_report import ReportCase


class TokenFile(ReportCase):
    def setUp(self):
        super().setUp()
        self.tmp = tempfile.TemporaryDirectory(prefix="sparktrace-token-file-")
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "token")

    def write(self, data):
        with open(self.path, "wb") as handle:
            handle.write(data)

    def test_the_files_content_is_the_bearer_token_read_at_each_report(self):
        server = self.server()
        self.write(b"first-token-0123456789\n")
        os.environ["SPARKTRACE_TOKEN_FILE"] = self.path
        ti = self.ti()
        SparktraceListener().on_task_instance_running(None, ti)
        (_, headers, _), = server.wait_for(1)
        self.assertEqual(headers["authorization"], "Bearer first-token-0123456789")
        # The kubelet replaces a mounted Secret's file when the Secret changes: the next report uses it.
        self.write(b"second-token-0123456789")
        ti.state = "success"
        SparktraceListener().on_task_instance_success(None, ti)
        requests = server.wait_for(2)
        self.assertEqual(requests[1][1]["authorization"], "Bearer second-token-0123456789")
        self.assertEqual(server.states(), ["running", "success"])

    def test_a_set_token_wins_over_the_file(self):
        server = self.server()
        self.write(b"from-the-file-0123456789")
        os.environ.update(SPARKTRACE_TOKEN_FILE=self.path, SPARKTRACE_TOKEN="from-the-variable")
        SparktraceListener().on_task_instance_running(None, self.ti())
        (_, headers, _), = server.wait_for(1)
        self.assertEqual(headers["authorization"], "Bearer from-the-variable")

    def test_airflow_config_names_the_file(self):
        server = self.server()
        self.write(b"from-airflow-config-0123\n")
        remove_fake_airflow()
        fake_airflow("3.1.0", {("sparktrace", "token_file"): self.path})
        SparktraceListener().on_task_instance_running(None, self.ti())
        (_, headers, _), = server.wait_for(1)
        self.assertEqual(headers["authorization"], "Bearer from-airflow-config-0123")
        self.assertEqual(plugin.token_file_setting(), self.path)

    def test_an_unusable_file_sends_nothing_and_never_logs_its_content(self):
        cases = {
            "missing": None,
            "empty": b" \n",
            "over 4096 bytes": b"x" * 4097,
            "not ASCII": "t\u00f6ken-0123456789-secret".encode("utf-8"),
        }
        for what, data in cases.items():
            with self.subTest(case=what):
                server = self.server()
                plugin._process_state().pop("reporter", None)
                if os.path.exists(self.path):
                    os.unlink(self.path)
                if data is not None:
                    self.write(data)
                os.environ["SPARKTRACE_TOKEN_FILE"] = self.path
                with self.assertLogs("sparktrace_airflow", logging.INFO) as logs:
                    SparktraceListener().on_task_instance_running(None, self.ti(task_id=f"t{len(what)}"))
                    self.assertTrue(plugin.flush_reports(2))
                self.assertEqual(server.requests, [], "sent without the token the proxy requires")
                (state, status, reason), = self.results()
                self.assertEqual((state, status), ("running", None))
                self.assertIn("token_file", reason)
                self.assertIn(self.path, reason)
                text = "\n".join(logs.output)
                self.assertIn(reason, text)
                self.assertNotIn("secret", text)

    def test_read_token_file(self):
        self.write(b"  abc-0123456789-xyz \r\n")
        self.assertEqual(plugin.read_token_file(self.path), ("abc-0123456789-xyz", ""))
        token, reason = plugin.read_token_file(os.path.join(self.tmp.name, "absent"))
        self.assertIsNone(token)
        self.assertIn("FileNotFoundError", reason)
        token, reason = plugin.read_token_file(self.tmp.name)  # a directory
        self.assertIsNone(token)
        self.assertIn("could not be read", reason)


if __name__ == "__main__":
    unittest.main()
