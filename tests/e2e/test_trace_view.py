"""The trace view end to end: `sparktrace demo --once` leaves its Airflow task's trace in a store, then
`sparktrace ui --store` serves the page and the JSON API over that file (docs/trace-view-api.md).

What is checked against independent arithmetic here: the breakdown adds up to the wall time, the
demo's slow executor allocation shows as resource wait and as the top finding, every asset the page
names is served, and the Chrome trace download never puts two overlapping events on one track.
"""

import json
import os
import re
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request

from harness import BIN, proxy_env

RUN_TIMEOUT = 120
OPEN_RE = re.compile(r"^open: +http://[0-9.:]+(/tasks/\S+)$", re.M)
UI_RE = re.compile(r"^trace view (http://127\.0\.0\.1:\d+)/$")


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class TraceViewOverADemoStore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="sparktrace-traceview-")
        demo = subprocess.run([BIN, "demo", "--once"], cwd=cls.dir.name, env=proxy_env(), capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
        if demo.returncode != 0:
            raise AssertionError(f"demo failed ({demo.returncode}):\n{demo.stdout}\n{demo.stderr}")
        match = OPEN_RE.search(demo.stdout)
        if not match:
            raise AssertionError("the demo printed no trace view URL:\n" + demo.stdout)
        cls.page_path = match.group(1)
        cls.store = os.path.join(cls.dir.name, "sparktrace-demo.db")

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def start_ui(self, *args):
        ui = subprocess.Popen([BIN, "ui", "--store", self.store, "--listen", "127.0.0.1:0", *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=proxy_env())
        self.addCleanup(lambda: (ui.kill(), ui.wait(10), ui.stdout.close(), ui.stderr.close()))
        line = ui.stdout.readline().strip()
        match = UI_RE.match(line)
        self.assertIsNotNone(match, f"unexpected first line {line!r}: {ui.stderr.read() if ui.poll() else ''}")
        return match.group(1)

    def test_demo_task_is_listed_and_its_time_adds_up(self):
        base = self.start_ui()
        status, _, body = get(base + "/api/v1/tasks")
        self.assertEqual(status, 200)
        tasks = json.loads(body)["tasks"]
        demo = [t for t in tasks if t["kind"] == "airflow" and t["href"] == self.page_path]
        self.assertEqual(len(demo), 1, tasks)

        status, headers, body = get(base + "/api/v1" + self.page_path)
        self.assertEqual(status, 200, body)
        attempt = json.loads(body)
        phases = {p["phase"]: p["ms"] for p in attempt["breakdown"]["phases"]}
        self.assertEqual(list(phases), ["client", "resource_wait", "compute", "io_write", "idle", "result_transfer"])
        self.assertAlmostEqual(sum(phases.values()), attempt["wall_ms"], delta=1e-3)
        # The demo's scenario allocates executors slowly: most of its time is resource wait, and the
        # lane shows the count rising from zero.
        self.assertGreater(phases["resource_wait"], 0.3 * attempt["wall_ms"], phases)
        self.assertTrue(attempt["executors"]["known"])
        self.assertEqual(attempt["executors"]["series"][0]["count"], 0)
        self.assertGreater(attempt["executors"]["max"], 0)
        ids = [f["id"] for f in attempt["findings"]]
        self.assertIn("resource-wait-long", ids)
        impacts = [f["impact_seconds"] for f in attempt["findings"]]
        self.assertEqual(impacts, sorted(impacts, reverse=True))
        # The simulator writes stages' parent ids, so the path is built from them.
        self.assertTrue(attempt["critical_path"]["known"])
        self.assertTrue(attempt["critical_path"]["span_ids"])
        lanes = {s["lane"] for s in attempt["spans"]}
        self.assertTrue({"task", "rpc", "operation", "job", "stage", "phase"} <= lanes, lanes)

        # A conditional request with the answer's ETag costs a 304.
        status, _, _ = get(base + "/api/v1" + self.page_path, {"If-None-Match": headers["ETag"]})
        self.assertEqual(status, 304)

    def test_page_and_every_asset_it_names_are_served_under_a_strict_policy(self):
        base = self.start_ui()
        status, headers, body = get(base + self.page_path)
        self.assertEqual(status, 200)
        self.assertIn("script-src 'self'", headers["Content-Security-Policy"])
        html = body.decode()
        assets = re.findall(r'(?:src|href)="(/assets/[^"]+)"', html)
        self.assertTrue(assets, html)
        self.assertNotRegex(html, r"<script>(?!</script>)|style=\"", "no inline script or style")
        for asset in assets:
            status, headers, _ = get(base + asset)
            self.assertEqual(status, 200, asset)
            self.assertNotIn("octet-stream", headers["Content-Type"], asset)

    def test_chrome_trace_download_has_no_overlap_on_a_track(self):
        base = self.start_ui()
        status, _, body = get(base + "/api/v1" + self.page_path + "/chrome-trace.json")
        self.assertEqual(status, 200)
        events = json.loads(body)["traceEvents"]
        by_track = {}
        for event in events:
            if event.get("ph") == "X":
                by_track.setdefault(event["tid"], []).append((event["ts"], event["ts"] + event["dur"]))
        self.assertTrue(by_track)
        for track, intervals in by_track.items():
            intervals.sort()
            for (_, end), (start, _) in zip(intervals, intervals[1:]):
                self.assertLessEqual(end, start, f"overlap on track {track}")
        self.assertTrue(any(e.get("ph") == "C" for e in events), "the executor counter track")

    def test_a_token_guards_the_view_but_not_the_health_probe(self):
        base = self.start_ui("--admin-token", "t0ken-for-the-e2e-test")
        self.assertEqual(get(base + "/api/v1/tasks")[0], 401)
        self.assertEqual(get(base + "/api/v1/tasks", {"Authorization": "Bearer t0ken-for-the-e2e-test"})[0], 200)
        self.assertEqual(get(base + "/healthz")[0], 200)

    def test_bad_invocations_exit_with_a_clear_error(self):
        missing = subprocess.run([BIN, "ui", "--store", os.path.join(self.dir.name, "nope.db"), "--listen",
                                  "127.0.0.1:0"], capture_output=True, text=True, timeout=20, env=proxy_env())
        self.assertEqual(missing.returncode, 1)
        self.assertIn("nope.db", missing.stderr)
        bad = subprocess.run([BIN, "ui", "--store", self.store, "--listen", "nowhere"], capture_output=True,
                             text=True, timeout=20, env=proxy_env())
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--listen", bad.stderr)
        weak = subprocess.run([BIN, "ui", "--store", self.store, "--admin-token", "has spaces; short"],
                              capture_output=True, text=True, timeout=20, env=proxy_env())
        self.assertEqual(weak.returncode, 2)
        self.assertIn("--admin-token", weak.stderr)
        self.assertNotIn("has spaces", weak.stderr, "the token's value is never echoed")


if __name__ == "__main__":
    unittest.main()
