"""The shared trace store, end to end (docs/shared-store.md): a real PostgreSQL 15 (Debian's, started
by tests/support/postgres_server.py as a non-root user on a unix socket), `sparktrace sim` as the
Spark Connect server, proxies writing to the database, and `sparktrace ui` / `sparktrace traces`
reading it.

- Three proxies and one ui: every task attempt of every proxy on one page, and an attempt whose
  calls went through two proxies is one attempt with one tree.
- PostgreSQL stopped for 10 s mid-load: no call fails, no span is lost (they wait in the spool).
- `kill -9` in a loop, on both backends: the store stays consistent, and the spool left behind is
  drained by the next start.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import harness
import test_tracing
from harness import BIN, new_id, proxy_env, wait_until
from promtext import Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from postgres_server import PostgresServer  # noqa: E402

PG = None
CALL_TIMEOUT = 20
SPAN_WAIT = 30  # seconds for spans to reach the store (the spool drains after an outage)
UI_LINE = "trace view http://"

# Each store's invariants, as SQL that returns the rows breaking them (none when consistent):
# a summary that does not match its spans, spans without a summary, a task row whose parts are gone (a
# row without Airflow identity may have no part row (SQLite schema 7, PostgreSQL 3): it needs its trace instead).
def _consistency_queries(held_part):
    """The invariants, with a store's held parts: an attempt's parts may all be held by summaries."""
    return [
        "SELECT t.trace_id FROM traces t LEFT JOIN (SELECT trace_id, count(*) AS n FROM spans GROUP BY trace_id) s "
        "ON s.trace_id = t.trace_id WHERE s.n IS NULL OR s.n <> t.span_count",
        "SELECT DISTINCT s.trace_id FROM spans s LEFT JOIN traces t ON t.trace_id = s.trace_id "
        "WHERE t.trace_id IS NULL",
        "SELECT a.name FROM task_attempts a WHERE NOT EXISTS (SELECT 1 FROM attempt_parts p WHERE "
        "p.airflow = a.airflow AND p.dag_id = a.dag_id AND p.task_id = a.task_id AND p.run_id = a.run_id AND "
        "p.try_number = a.try_number AND p.map_index = a.map_index AND p.trace_key = a.trace_key) "
        "AND NOT (a.airflow = 0 AND EXISTS (SELECT 1 FROM traces t WHERE t.trace_id = a.trace_key)) "
        f"AND NOT EXISTS (SELECT 1 FROM traces h WHERE {held_part} AND h.dag_id = a.dag_id AND "
        "h.task_id = a.task_id AND h.run_id = a.run_id AND h.try_number = a.try_number AND a.trace_key = '')",
    ]


# A trace's one Airflow part kept in its summary when the summary says all of it (SQLite schema 18,
# tracing/store/sqlite/index/sqlite_summary_attempts.h; PostgreSQL schema 15,
# tracing/store/postgres/held/postgres_held_parts.h).
CONSISTENCY_QUERIES = _consistency_queries("h.held_map_index = a.map_index")
SQLITE_CONSISTENCY_QUERIES = _consistency_queries("h.attempt = 2 AND h.map_index = a.map_index")

def setUpModule():
    global PG
    test_tracing.setUpModule()
    PG = PostgresServer()
    PG.start()
    unittest.addModuleCleanup(PG.cleanup)


def tearDownModule():
    pass


def airflow_headers(dag, task, run="manual__1", try_number="1"):
    return [("x-airflow-dag-id", dag), ("x-airflow-task-id", task), ("x-airflow-run-id", run),
            ("x-airflow-try-number", try_number)]


class SharedStoreCase(test_tracing.TracingCase):
    def setUp(self):
        super().setUp()
        self.database = PG.create_database()
        self.url = PG.url(self.database)
        self.addCleanup(lambda: PG.psql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)'))

    def start_pg_proxy(self, spool, *args):
        return harness.start_proxy(self, test_tracing.SIM.address, "--store", self.url, "--spool-dir", str(spool),
                                   "--span-batch-delay", "50ms", *args)

    def sql(self, query):
        return PG.psql(query, database=self.database)

    def span_count(self):
        return int(self.sql("SELECT count(*) FROM spans") or 0)

    def assert_consistent_pg(self):
        for query in CONSISTENCY_QUERIES:
            # PostgreSQL keeps trace ids as uuid (trace schema 13), the task index as hex text.
            query = query.replace("t.trace_id = a.trace_key", "replace(t.trace_id::text, '-', '') = a.trace_key")
            self.assertEqual(self.sql(query), "", query)

    def traces_list(self, *args):
        result = subprocess.run([BIN, "traces", "list", "--store", self.url, "--limit", "0", "--json", *args],
                                capture_output=True, text=True, timeout=30, env=proxy_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)["attempts"]

    def start_ui(self):
        ui = subprocess.Popen([BIN, "ui", "--store", self.url, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=proxy_env())
        self.addCleanup(lambda: (ui.kill(), ui.wait(10), ui.stdout.close(), ui.stderr.close()))
        line = harness.first_line(ui).strip()
        self.assertTrue(line.startswith(UI_LINE), f"unexpected first line {line!r}")
        return line[len("trace view "):].rstrip("/")


class ManyProxiesOneViewTest(SharedStoreCase):
    def test_three_proxies_and_one_ui_show_every_attempt(self):
        spool = Path(self.tmp.name)
        proxies = [self.start_pg_proxy(spool / f"spool-{i}") for i in range(3)]
        dag = new_id("dag")
        for i, proxy in enumerate(proxies):
            stub = self.stub(proxy)
            self.config_get(stub, metadata=airflow_headers(dag, f"task-{i}"))
            self.run_query(stub, metadata=airflow_headers(dag, f"task-{i}"))
        # A retry on another replica: the same attempt's calls through two proxies, each carrying the
        # task's traceparent as the Airflow plugin sends it (the trace id of the attempt's identity,
        # the task's span as the parent).
        task_span = test_tracing.random_hex(8)
        traceparent = f"00-{test_tracing.airflow_trace_id(dag, 'shared', 'manual__1', 1)}-{task_span}-01"
        for proxy in proxies[:2]:
            self.run_query(self.stub(proxy, separate=True),
                           metadata=airflow_headers(dag, "shared") + [("traceparent", traceparent)])
        for proxy in proxies:
            self.stop_proxy(proxy)  # SIGTERM exports every queue

        attempts = {a["task_id"]: a for a in self.traces_list("--dag", dag)}
        self.assertEqual(sorted(attempts), ["shared", "task-0", "task-1", "task-2"])
        shared = attempts["shared"]
        self.assertEqual(len(shared["trace_ids"]), 1, shared)
        trace = self.show(shared["trace_ids"][0])
        operations = trace.named(test_tracing.OPERATION)
        self.assertEqual(len(operations), 2, trace.summary())
        # One tree: both proxies' operations hang under the task's span.
        self.assertEqual({op["parent_span_id"] for op in operations}, {task_span}, trace.summary())
        self.assertEqual(len({op["attributes"]["spark.connect.operation_id"] for op in operations}), 2)

        base = self.start_ui()
        with urllib.request.urlopen(base + "/api/v1/tasks?limit=200", timeout=10) as response:
            tasks = json.load(response)["tasks"]
        shown = {t["task_id"] for t in tasks if t.get("dag_id") == dag}
        self.assertEqual(shown, {"shared", "task-0", "task-1", "task-2"})
        # The ui checks its store on a thread of its own (every 5 s, the first time as it starts):
        # until that first check is done /readyz says "not checked yet", which on a loaded machine can
        # outlast the requests above.
        harness.wait_until(lambda: self.status_of(base + "/readyz") == 200, 15, message="the ui ready")
        self.assert_consistent_pg()

    @staticmethod
    def status_of(url):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def show(self, trace_id):
        result = subprocess.run([BIN, "traces", "show", trace_id, "--store", self.url, "--json"], capture_output=True,
                                text=True, timeout=30, env=proxy_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        return test_tracing.Trace(json.loads(result.stdout))


class OutageTest(SharedStoreCase):
    def test_postgres_down_for_ten_seconds_loses_nothing(self):
        proxy = self.start_pg_proxy(Path(self.tmp.name) / "spool")
        stub = self.stub(proxy)
        dag = new_id("dag")
        calls = {"ok": 0, "failed": []}
        stop = threading.Event()

        def load():
            while not stop.is_set():
                try:
                    self.config_get(stub, metadata=airflow_headers(dag, "load"))
                    calls["ok"] += 1
                except Exception as e:  # noqa: BLE001 (any failure is the test's finding)
                    calls["failed"].append(repr(e))
                time.sleep(0.01)

        worker = threading.Thread(target=load)
        worker.start()
        try:
            wait_until(lambda: self.span_count() > 0, SPAN_WAIT, interval=0.1, message="first spans in PostgreSQL")
            PG.stop()
            stopped_at = time.monotonic()
            wait_until(lambda: time.monotonic() - stopped_at >= 10, 15, interval=0.2, message="10 s of outage")
            metrics = self.metrics(proxy)
            spooled = metrics.value("sparktrace_spans_spooled_total", sink="postgresql")
            self.assertGreater(spooled, 0, "spans waited in the spool during the outage")
            PG.start()
        finally:
            stop.set()
            worker.join(30)
        self.assertEqual(calls["failed"], [], "no call failed while the store was down")
        self.assertGreater(calls["ok"], 100)
        expected = calls["ok"]  # one RPC span per Config call
        wait_until(lambda: self.span_count() >= expected, SPAN_WAIT, interval=0.2,
                   message=f"{expected} spans in PostgreSQL after the outage")
        after = self.metrics(proxy)
        self.stop_proxy(proxy)
        self.assertEqual(self.span_count(), expected)
        dropped = {k: v for k, v in self.dropped(after).items() if v}
        self.assertEqual(dropped, {})
        self.assert_consistent_pg()

    @staticmethod
    def dropped(proxy_metrics):
        return {reason: proxy_metrics.value("sparktrace_spans_dropped_total", reason=reason, sink="postgresql")
                for reason in ("queue_full", "shutdown", "export_failed", "spool_full")}


class KillNineTest(SharedStoreCase):
    ROUNDS = 4

    def kill_loop(self, store_args, spool, count_spans):
        """Rounds of: start a proxy, make calls, SIGKILL it mid-write. Returns the calls made."""
        made = 0
        for round_number in range(self.ROUNDS):
            proxy = harness.Proxy(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--upstream",
                                   test_tracing.SIM.address, "--span-batch-delay", "10ms", "--spool-dir", str(spool),
                                   *store_args])
            self.addCleanup(proxy.close)
            proxy.wait_ready()
            proxy.expect_exit = True
            stub = self.stub(proxy, separate=True)
            before = count_spans()
            for i in range(40):
                self.config_get(stub, metadata=airflow_headers("kill9", f"round-{round_number}"))
                made += 1
            # Kill once some of this round's spans are stored, while the rest are in flight.
            wait_until(lambda: count_spans() > before, SPAN_WAIT, interval=0.02, message="spans stored")
            os.kill(proxy.pid, signal.SIGKILL)
            proxy.proc.wait(10)
        return made

    def test_sqlite_store_stays_consistent(self):
        path = Path(self.tmp.name) / "kill9.db"

        def count_spans():
            if not path.exists():
                return 0
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
                try:
                    return db.execute("SELECT count(*) FROM spans").fetchone()[0]
                except sqlite3.OperationalError:
                    return 0

        self.kill_loop(["--store", str(path)], Path(self.tmp.name) / "spool", count_spans)
        with sqlite3.connect(str(path), timeout=5) as db:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            for query in SQLITE_CONSISTENCY_QUERIES:
                self.assertEqual(db.execute(query).fetchall(), [], query)

    def test_postgres_store_stays_consistent(self):
        spool = Path(self.tmp.name) / "spool"
        self.kill_loop(["--store", self.url], spool, self.span_count)
        self.assert_consistent_pg()
        # What the last proxy left in its spool goes in with the next start, once.
        proxy = self.start_pg_proxy(spool)
        wait_until(lambda: self.metrics(proxy).value("sparktrace_span_spool_bytes", sink="postgresql") == 0,
                   SPAN_WAIT, interval=0.1, message="the spool drained")
        self.stop_proxy(proxy)
        self.assert_consistent_pg()


if __name__ == "__main__":
    unittest.main()
