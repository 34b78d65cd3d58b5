"""The trace view end to end: `sparktrace demo --once` leaves its Airflow task's trace in a store, then
`sparktrace ui --store` serves the page and the JSON API over that file (docs/trace-view-api.md).

What is checked against independent arithmetic here: the breakdown adds up to the wall time, the
demo's slow executor allocation shows as resource wait and as the top finding, every asset the page
names is served, and the Chrome trace download never puts two overlapping events on one track.

Then ids that break paths, through the proxy: Spark Connect calls of attempts with dag id "..", task
id "." and a run id holding "/", "?", "#", "%", "&", "+", spaces and escapes that look like dots and
UTF-8; every link the API gives (list, tries, history, downloads) is followed as a client resolves it
and reaches that attempt. (gRPC metadata is printable ASCII, and so is what the proxy accepts as an
Airflow id: Unicode ids are covered over a store written directly, in
tests/unit/traceview/traceview_api_test.cc, and in web/test/url_state.test.mjs.)
"""

import gzip
import json
import os
import re
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid

import harness
from harness import BIN, proxy_env, wait_until
from test_sim import CALL_TIMEOUT, Sim, load_stubs

RUN_TIMEOUT = 120
# The demo's page address: /attempt?… or the earlier /tasks/<dag>/<task>/<run>/<try>.
OPEN_RE = re.compile(r"^open: +http://[0-9.:]+(/(?:attempt\?|tasks/)\S+)$", re.M)
UI_RE = re.compile(r"^trace view (http://127\.0\.0\.1:\d+)/$")
SPAN_WAIT = 20  # seconds for the proxy's spans to reach its store


def attempt_href(row):
    """docs/trace-view-api.md "Attempt addresses", written again: the ids in the query, each
    percent-encoded as UTF-8 but for A-Z a-z 0-9 - _ . ~, map only when it is not -1."""
    params = [("dag", row["dag_id"]), ("task", row["task_id"]), ("run", row["run_id"]),
              ("try", str(row["try_number"]))]
    if row["map_index"] != -1:
        params.append(("map", str(row["map_index"])))
    return "/attempt?" + "&".join(f"{name}={urllib.parse.quote(value, safe='')}" for name, value in params)


def api_path_of(page_path):
    """The JSON behind a page address, as the page asks for it (web/assets/url_state.js)."""
    path, _, query = page_path.partition("?")
    if path == "/attempt":
        return "/api/v1/attempt?" + query
    return "/api/v1" + page_path  # the earlier /tasks/… shape


def split(link):
    """(path, query) of a same-origin link: the API's downloads carry their attempt's query."""
    path, _, query = link.partition("?")
    return path, query


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
        line = harness.first_line(ui).strip()
        match = UI_RE.match(line)
        self.assertIsNotNone(match, f"unexpected first line {line!r}: {ui.stderr.read() if ui.poll() else ''}")
        return match.group(1)

    def test_demo_task_is_listed_and_its_time_adds_up(self):
        base = self.start_ui()
        status, _, body = get(base + "/api/v1/tasks")
        self.assertEqual(status, 200)
        tasks = json.loads(body)["tasks"]
        demo = [t for t in tasks if t["kind"] == "airflow"]
        self.assertEqual(len(demo), 1, tasks)
        self.assertEqual(demo[0]["href"], attempt_href(demo[0]))

        # The address the demo printed and the list's link name the same attempt.
        status, headers, attempt_body = get(base + api_path_of(self.page_path))
        self.assertEqual(status, 200, attempt_body)
        attempt = json.loads(attempt_body)
        self.assertEqual(json.loads(get(base + api_path_of(demo[0]["href"]))[2])["identity"], attempt["identity"])
        # The demo ends once its proxy settled the attempt: the list carries the page's cost.
        self.assertIsNotNone(demo[0]["cost"], demo[0])
        self.assertIsNotNone(attempt["cost"])
        self.assertAlmostEqual(demo[0]["cost"]["core_seconds"], attempt["cost"]["core_seconds"], places=6)
        self.assertAlmostEqual(demo[0]["cost"]["gib_seconds"], attempt["cost"]["gib_seconds"], places=6)
        self.assertIsNone(demo[0]["cost"]["money"])  # the demo's proxy has no prices
        status, _, body = get(base + "/api/v1/tasks?sort=-cost")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["tasks"][0]["href"], demo[0]["href"])
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
        # Most impact first; the findings a rules-file suppression muted (the demo suppresses its
        # slow-spark-jobs summary) come after the others, in the same order among themselves.
        suppressed = [bool(f["suppressed"]) for f in attempt["findings"]]
        self.assertEqual(suppressed, sorted(suppressed))
        for muted in (False, True):
            impacts = [f["impact_seconds"] for f in attempt["findings"] if bool(f["suppressed"]) == muted]
            self.assertEqual(impacts, sorted(impacts, reverse=True))
        # The simulator writes stages' parent ids, so the path is built from them.
        self.assertTrue(attempt["critical_path"]["known"])
        self.assertTrue(attempt["critical_path"]["span_ids"])
        lanes = {s["lane"] for s in attempt["spans"]}
        self.assertTrue({"task", "rpc", "operation", "job", "stage", "phase"} <= lanes, lanes)

        # A conditional request with the answer's ETag costs a 304, answered from the task index's
        # revision (a tag that is not a hash of the bytes), and counted.
        self.assertTrue(headers["ETag"].startswith('"r'), headers["ETag"])
        status, _, _ = get(base + api_path_of(self.page_path), {"If-None-Match": headers["ETag"]})
        self.assertEqual(status, 304)
        metrics = get(base + "/metrics")[2].decode()
        self.assertRegex(metrics, r"(?m)^sparktrace_trace_view_not_modified_total 1(\.0)?$")
        # The next load is the answer built before, compressed once.
        status, zipped_headers, zipped = get(base + api_path_of(self.page_path), {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(zipped_headers.get("Content-Encoding"), "gzip")
        self.assertEqual(gzip.decompress(zipped), attempt_body)
        self.assertEqual(zipped_headers["ETag"], headers["ETag"])
        self.assertRegex(get(base + "/metrics")[2].decode(),
                         r"(?m)^sparktrace_trace_view_answer_cache_hits_total [1-9]")

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
        attempt = json.loads(get(base + api_path_of(self.page_path))[2])
        link = attempt["downloads"]["chrome_trace"]
        self.assertTrue(link.startswith("/api/v1/attempt/chrome-trace.json?dag="), link)
        status, headers, body = get(base + link)
        self.assertEqual(status, 200)
        self.assertIn("attachment", headers["Content-Disposition"])
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


# dag "..", task "." and a run id that breaks paths; the last attempt has no run id at all (the proxy
# stores it as ""). All printable ASCII: what gRPC metadata and the proxy accept.
AWKWARD_RUN = "manual__2024-01-01T00:00:00+00:00/a?b=c&d=e#frag 100% +x %2E%2E/../. caf%C3%A9"
AWKWARD_ATTEMPTS = [
    {"dag_id": "..", "task_id": ".", "run_id": AWKWARD_RUN, "try_number": 1, "map_index": -1},
    {"dag_id": "..", "task_id": ".", "run_id": AWKWARD_RUN, "try_number": 2, "map_index": -1},
    {"dag_id": "..", "task_id": ".", "run_id": AWKWARD_RUN, "try_number": 2, "map_index": 3},
    {"dag_id": ".", "task_id": "..", "run_id": "", "try_number": 1, "map_index": -1},
]
IDENTITY_FIELDS = ("dag_id", "task_id", "run_id", "try_number", "map_index")


@harness.proxy_only
class AwkwardIdsThroughTheProxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        pb, pb_grpc = load_stubs()
        sim = Sim()
        cls.addClassCleanup(sim.stop)
        cls.proxy = harness.start_proxy(cls, sim.address, "--span-batch-delay", "50ms")
        cls.base = "http://" + cls.proxy.admin_address
        channel = harness.channel(cls.proxy.grpc_address)
        cls.addClassCleanup(channel.close)
        stub = pb_grpc.SparkConnectServiceStub(channel)
        for ids in AWKWARD_ATTEMPTS:
            metadata = [("x-airflow-dag-id", ids["dag_id"]), ("x-airflow-task-id", ids["task_id"]),
                        ("x-airflow-try-number", str(ids["try_number"]))]
            if ids["run_id"]:
                metadata.append(("x-airflow-run-id", ids["run_id"]))
            if ids["map_index"] != -1:
                metadata.append(("x-airflow-map-index", str(ids["map_index"])))
            request = pb.ExecutePlanRequest(session_id=str(uuid.uuid4()), user_context=pb.UserContext(user_id="e2e"),
                                            operation_id=str(uuid.uuid4()), client_type="sparktrace-e2e")
            request.plan.root.sql.query = "SELECT 1"
            list(stub.ExecutePlan(request, metadata=metadata, timeout=CALL_TIMEOUT))

        def listed():
            status, _, body = harness.http_get(cls.proxy.admin_address, "/api/v1/tasks?limit=200")
            rows = [t for t in json.loads(body)["tasks"] if t["kind"] == "airflow"] if status == 200 else []
            return rows if len(rows) == len(AWKWARD_ATTEMPTS) else None

        cls.rows = wait_until(listed, SPAN_WAIT, interval=0.1, message="the four attempts in /api/v1/tasks")

    def follow(self, link):
        """GET a link as a client resolves it against the page (RFC 3986, dot segments removed)."""
        url = urllib.parse.urljoin(self.base + "/tasks/x/y", link)
        self.assertEqual(url, self.base + link, "the link is the same after resolution")
        return get(url)

    def attempt_of(self, page_link):
        status, _, body = self.follow(api_path_of(page_link))
        self.assertEqual(status, 200, f"{page_link}: {body[:300]!r}")
        return json.loads(body)

    def test_every_attempt_is_listed_with_its_ids_and_its_own_link(self):
        ids = sorted(tuple(row[f] for f in IDENTITY_FIELDS) for row in self.rows)
        self.assertEqual(ids, sorted(tuple(a[f] for f in IDENTITY_FIELDS) for a in AWKWARD_ATTEMPTS))
        for row in self.rows:
            self.assertEqual(row["href"], attempt_href(row))
        self.assertEqual(len({row["href"] for row in self.rows}), len(self.rows))
        # The list's own filters take the same ids.
        status, _, body = get(self.base + "/api/v1/tasks?dag=..&task=.")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["total"], 3)

    def test_each_link_opens_the_page_and_the_page_address_gets_that_attempt(self):
        for row in self.rows:
            with self.subTest(href=row["href"]):
                status, headers, body = self.follow(row["href"])
                self.assertEqual(status, 200)
                self.assertTrue(headers["Content-Type"].startswith("text/html"), headers)
                self.assertIn(b"/assets/", body)
                attempt = self.attempt_of(row["href"])
                self.assertEqual({f: attempt["identity"][f] for f in IDENTITY_FIELDS},
                                 {f: row[f] for f in IDENTITY_FIELDS})
                self.assertEqual(attempt["trace_ids"], row["trace_ids"])

    def test_downloads_tries_and_history_lead_to_the_same_task(self):
        for row in self.rows:
            with self.subTest(href=row["href"]):
                attempt = self.attempt_of(row["href"])
                for name in ("chrome_trace", "otlp_json"):
                    status, headers, _ = self.follow(attempt["downloads"][name])
                    self.assertEqual(status, 200, attempt["downloads"][name])
                    self.assertIn("attachment", headers["Content-Disposition"])
                links = [t["href"] for t in attempt["tries"]] + [r["href"] for r in attempt["history"]["runs"]]
                self.assertIn(row["href"], links)
                for link in links:
                    other = self.attempt_of(link)["identity"]
                    self.assertEqual((other["dag_id"], other["task_id"], other["map_index"]),
                                     (row["dag_id"], row["task_id"], row["map_index"]), link)
                if row["dag_id"] == ".." and row["map_index"] == -1:
                    self.assertEqual([t["try_number"] for t in attempt["tries"]], [1, 2])

    def test_the_mapped_attempt_downloads_its_own_spans(self):
        (mapped,) = [row for row in self.rows if row["map_index"] == 3]
        status, _, body = self.follow(self.attempt_of(mapped["href"])["downloads"]["otlp_json"])
        self.assertEqual(status, 200)
        trace_ids = {span["traceId"] for rs in json.loads(body)["resourceSpans"]
                     for ss in rs["scopeSpans"] for span in ss["spans"]}
        self.assertEqual(trace_ids, set(mapped["trace_ids"]))

    def test_an_incomplete_address_says_what_is_missing(self):
        status, _, body = get(self.base + "/api/v1/attempt?dag=..&task=.&try=1")
        self.assertEqual(status, 400)
        self.assertIn("run", json.loads(body)["error"])
        status, _, _ = get(self.base + "/api/v1/attempt?dag=..&task=.&run=&try=9")
        self.assertEqual(status, 404)


if __name__ == "__main__":
    unittest.main()
