"""The span spool touches only its own files (finding 6 of the independent probe).

A `segment-*.spool` symbolic link planted in the spool directory had its target, a file elsewhere,
cut from 3,893 bytes to 0 when the proxy started: recovery opened it read-write and truncated it at
its "first bad record". Now a link, a directory or another user's file named like a segment is left
alone, counted in sparktrace_span_spool_files_refused_total, and its name is not reused.
"""

import os
import tempfile
import unittest
from pathlib import Path

import harness
from promtext import Metrics


@harness.proxy_only
class SpoolFilesTest(unittest.TestCase):
    def test_a_planted_link_and_its_target_are_left_alone(self):
        outside = tempfile.TemporaryDirectory(prefix="sparktrace-spool-target-")
        self.addCleanup(outside.cleanup)
        target = Path(outside.name) / "someone-elses.log"
        precious = os.urandom(3893)
        target.write_bytes(precious)
        spool = Path(outside.name) / "spool"
        spool.mkdir(mode=0o700)
        link = spool / "segment-00000000000000000001.spool"
        link.symlink_to(target)
        (spool / "segment-00000000000000000002.spool").mkdir()

        upstream = harness.start_upstream(self)
        proxy = harness.start_proxy(self, upstream.address, "--spool-dir", str(spool))
        harness.wait_until(lambda: proxy.admin("/healthz")[0] == 200, 10, message="healthz")
        status, _, body = proxy.admin("/metrics")
        self.assertEqual(status, 200)
        refused = Metrics(body).value("sparktrace_span_spool_files_refused_total")
        self.assertEqual(refused, 2, "the link and the directory, each counted once")
        self.assertEqual(target.read_bytes(), precious, "the link's target was touched")
        self.assertTrue(link.is_symlink())
        self.assertIn("symbolic link", proxy.stderr_text())
        # The proxy still forwards and traces as usual around them.
        channel = harness.open_channel(self, proxy.grpc_address)
        self.assertTrue(harness.unary_ok(channel))


if __name__ == "__main__":
    unittest.main()
