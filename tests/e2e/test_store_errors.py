"""Errors that say what went wrong, not how we are built (issue 30, finding 4 of the independent probe).

On PostgreSQL, `GET /api/v1/tasks?dag=%ff` (not UTF-8) or an overflowing `since` answered 503 with
libpq's text and the store's URL, `/readyz` of `sparktrace ui` showed the same to anyone, and each such
request cost a new PostgreSQL login (the trace view dropped its connection on every 503). On SQLite
the same `since` wrapped around and listed every attempt. Now, through the real binary, a real
PostgreSQL 15 and `sparktrace ui`:

- a bad query value is a 400 naming the parameter, before any store is asked (both backends);
- a request the store fails is a 503 that says only that the store cannot be read, and /readyz only
  "trace store not readable": neither the URL, the socket directory, the role, the database nor
  libpq's words; the reason is in the log, once;
- 100 requests failing on a healthy connection cost one login, not 100 (counted by the server itself
  in pg_stat_database and by sparktrace_trace_view_store_connects_total), and a database that goes
  away and comes back is read again through a new connection.
"""

import json
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import harness
import test_tracing
from harness import BIN, new_id, proxy_env, wait_until
from promtext import Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from postgres_server import PostgresServer  # noqa: E402

PG = None
UI_LINE = "trace view http://"
CONNECTS = "sparktrace_trace_view_store_connects_total"
GENERIC_503 = "the trace store cannot be read now"
TOO_LATE = "9300000000000"  # epoch ms whose nanoseconds overflow 64 bits
READER = "trace_reader"


def setUpModule():
    global PG
    test_tracing.setUpModule()
    PG = PostgresServer()
    PG.start()
    unittest.addModuleCleanup(PG.cleanup)


def get(url):
    """(status, body) of a GET, error statuses included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def airflow_headers(dag, task):
    return [("x-airflow-dag-id", dag), ("x-airflow-task-id", task), ("x-airflow-run-id", "manual__1"),
            ("x-airflow-try-number", "1")]


class StoreErrorsCase(test_tracing.TracingCase):
    def seed(self, *store_args):
        """One Airflow attempt written through a proxy into the store (which the proxy creates)."""
        dag = new_id("dag")
        proxy = harness.start_proxy(self, test_tracing.SIM.address, "--span-batch-delay", "50ms", *store_args)
        self.run_query(self.stub(proxy), metadata=airflow_headers(dag, "load"))
        self.stop_proxy(proxy)  # SIGTERM exports every queue
        return dag

    def start_ui(self, store):
        """`sparktrace ui --store STORE` on an ephemeral port; its stderr (the log) goes to a file."""
        log_path = Path(self.tmp.name) / f"ui-{new_id()}.log"
        log = open(log_path, "wb")
        ui = subprocess.Popen([BIN, "ui", "--store", store, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=log, text=True, env=proxy_env())
        self.addCleanup(lambda: (ui.kill(), ui.wait(10), ui.stdout.close(), log.close()))
        line = harness.first_line(ui).strip()
        self.assertTrue(line.startswith(UI_LINE), f"unexpected first line {line!r}")
        return line[len("trace view "):].rstrip("/"), log_path

    def connects(self, base):
        status, body = get(base + "/metrics")
        self.assertEqual(status, 200)
        return Metrics(body).value(CONNECTS)

    def assert_names(self, base, path, parameter):
        status, body = get(base + path)
        self.assertEqual(status, 400, f"{path}: {body}")
        error = json.loads(body)["error"]
        self.assertTrue(error.startswith(f"{parameter} must be"), f"{path}: {error}")
        return error

    def assert_says_nothing_internal(self, body, *internals):
        for text in internals + ("postgresql", "ERROR", "FATAL", "libpq", "permission denied", "task_attempts",
                                 "socket", "connection to server", "No such file"):
            self.assertNotIn(text, body)


class PostgresStoreErrorsTest(StoreErrorsCase):
    def setUp(self):
        super().setUp()
        self.database = PG.create_database()
        self.addCleanup(lambda: PG.psql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)'))
        self.dag = self.seed("--store", PG.url(self.database), "--spool-dir", str(Path(self.tmp.name) / "spool"))

    def internals(self, url):
        socket_dir = str(PG.socket_dir)
        return (url, socket_dir, urllib.parse.quote(socket_dir, safe=""), self.database, READER)

    def test_bad_values_are_400_naming_the_parameter_before_the_store_is_asked(self):
        url = PG.url(self.database)
        base, _ = self.start_ui(url)
        status, body = get(base + "/api/v1/tasks?since=0&limit=200")
        self.assertEqual(status, 200, body)
        self.assertIn(self.dag, {row.get("dag_id") for row in json.loads(body)["tasks"]})
        before = self.connects(base)
        checks = [("/api/v1/tasks?dag=%ff", "dag"), ("/api/v1/tasks?task=%ff%fe", "task"),
                  (f"/api/v1/tasks?since={TOO_LATE}", "since"), (f"/api/v1/tasks?until={TOO_LATE}", "until"),
                  ("/api/v1/tasks?q=%ff", "q"), ("/api/v1/tasks?limit=201", "limit"),
                  ("/api/v1/attempt?dag=%ff&task=load&run=manual__1&try=1", "dag"),
                  ("/api/v1/attempt?dag=d&task=load&run=%c0%af&try=1", "run"),
                  ("/api/v1/attempt?dag=d&task=load&run=r&try=99999999999", "try")]
        for path, parameter in checks:
            with self.subTest(path=path):
                error = self.assert_names(base, path, parameter)
                self.assertNotIn(TOO_LATE, error)
                self.assert_says_nothing_internal(error, *self.internals(url))
        self.assertEqual(self.connects(base), before, "a bad value never made the trace view reconnect")

    def test_failing_requests_reuse_one_connection_and_say_nothing_internal(self):
        # A role that can read everything but the task index: /api/v1/tasks fails on a healthy
        # connection (permission denied), as a query the validation missed would.
        PG.psql(f'CREATE ROLE {READER} LOGIN', database=self.database)
        self.addCleanup(lambda: PG.psql(f"DROP OWNED BY {READER}; DROP ROLE IF EXISTS {READER}",
                                        database=self.database))
        PG.psql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READER}; "
                f"REVOKE SELECT ON task_attempts FROM {READER}", database=self.database)
        url = PG.url(self.database, user=READER)
        base, log_path = self.start_ui(url)
        self.assertEqual(get(base + "/api/v1/traces/" + "0" * 31 + "1")[0], 404)  # the connection is up
        sessions_before = self.sessions()
        connects_before = self.connects(base)
        for _ in range(100):
            status, body = get(base + "/api/v1/tasks")
            self.assertEqual(status, 503, body)
            self.assertEqual(json.loads(body), {"error": GENERIC_503})
        for _ in range(20):  # bad values in between change nothing
            self.assert_names(base, "/api/v1/tasks?dag=%ff", "dag")
        self.assertEqual(self.connects(base), connects_before, "no new connection for a failed query")
        # The server's own count: the old trace view logged in once per failed request (100 here).
        self.assertLess(self.sessions() - sessions_before, 10)
        # The reason is the log's, once (repeats at most once a minute).
        log = log_path.read_text(errors="replace")
        self.assertEqual(log.count("permission denied"), 1, log)

    def test_a_database_that_goes_away_is_a_generic_503_and_readyz_and_comes_back(self):
        server = PostgresServer()  # its own, to stop
        server.start()
        self.addCleanup(server.cleanup)
        database = server.create_database()
        url = server.url(database)
        self.seed("--store", url, "--spool-dir", str(Path(self.tmp.name) / "spool-own"))
        base, log_path = self.start_ui(url)
        wait_until(lambda: get(base + "/readyz")[0] == 200, 20, message="the ui ready")
        self.assertEqual(get(base + "/api/v1/tasks")[0], 200)
        server.stop()

        started = time.monotonic()
        connects_before = self.connects(base)
        bodies = []
        for _ in range(50):
            status, body = get(base + "/api/v1/tasks")
            self.assertEqual(status, 503, body)
            bodies.append(body)
        # While the server is down the trace view tries to connect at most once a second.
        elapsed = time.monotonic() - started
        self.assertLessEqual(self.connects(base) - connects_before, int(elapsed) + 2)
        socket_dir = str(server.socket_dir)
        internals = (url, socket_dir, urllib.parse.quote(socket_dir, safe=""), database, "sparktrace@")
        for body in set(bodies):
            self.assertEqual(json.loads(body), {"error": GENERIC_503})
            self.assert_says_nothing_internal(body, *internals)
        # The ui's probe asks every 5 s.
        wait_until(lambda: get(base + "/readyz")[0] == 503, 20, message="/readyz 503")
        status, body = get(base + "/readyz")
        self.assertEqual(body.strip(), "not ready: trace store not readable")
        self.assert_says_nothing_internal(body, *internals)
        log = log_path.read_text(errors="replace")
        self.assertIn(database, log, "the log names the store")
        self.assertIn("server closed the connection", log, "the log keeps libpq's words")

        server.start()  # the same cluster again: the lost connection is replaced
        wait_until(lambda: get(base + "/api/v1/tasks")[0] == 200, 20, message="the trace view reading again")
        wait_until(lambda: get(base + "/readyz")[0] == 200, 20, message="/readyz 200 again")

    def sessions(self):
        """Sessions the server has established to this test's database (pg_stat_database)."""
        PG.psql("SELECT pg_stat_force_next_flush()", database=self.database)
        return int(PG.psql(f"SELECT sessions FROM pg_stat_database WHERE datname = '{self.database}'"))


class SqliteStoreErrorsTest(StoreErrorsCase):
    def test_an_overflowing_since_is_400_not_every_row(self):
        self.seed("--store", str(self.store.path))
        base, _ = self.start_ui(str(self.store.path))
        status, body = get(base + "/api/v1/tasks?since=1")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["total"], 1)
        # 9,300,000,000,000 ms x 10^6 wrapped past 2^64 and listed every attempt.
        error = self.assert_names(base, f"/api/v1/tasks?since={TOO_LATE}", "since")
        self.assertEqual(error, "since must be epoch milliseconds from 0 to 9223372036854")
        self.assert_names(base, f"/api/v1/tasks?until={TOO_LATE}", "until")
        self.assert_names(base, "/api/v1/tasks?dag=%ff", "dag")


if __name__ == "__main__":
    unittest.main()
