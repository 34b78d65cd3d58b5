"""Shared traces, exact attempts (issue 32, step 1), through the real proxy, on SQLite and PostgreSQL.

Airflow 2.10 with OpenTelemetry puts every task of a DAG run in one trace, and gives each task
instance a span id derived from (dag, run, task, try): the mapped instances of a task share it
(integrations/airflow: ``airflow_210_task_span_id``). The Airflow plugin sends that trace context and
the attempt's x-airflow-* headers on every Spark Connect call, and reports the attempt to
POST /api/v1/airflow/task-attempts. Played here by hand, one DAG run:

- ``load_orders`` try 1 (unmapped): a call, its "running" report, a second call, its final report;
- ``publish`` map 3 and map 4, try 1, under the one task span id: each reports "running" before its
  calls and its final state after them, and each report takes a span id of its own (derived from its
  identity) under that shared one;
- ``load_orders`` try 2, the retry.

The test waits for the trace to hold the first call, then the "running" reports, before going on:
the trace reaches the store in several writes, and each later one makes the store's task index
re-read it (where map 3 and map 4 were once indexed as one unmapped attempt on SQLite). Then
``traces list`` and ``/api/v1/tasks`` list every attempt once with its own map index; each
attempt's link (``/attempt?…&map=N``, the "Spark trace" link) and its ``/api/v1/attempt`` answer
200, with its own identity and only its own spans.
"""

import hashlib
import json
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import harness
import test_tracing
from harness import BIN, new_id, proxy_env
from test_airflow_task_report import derived_task_span_id, post
from test_tracing import OPERATION, TracingCase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from postgres_server import PostgresServer  # noqa: E402

PG = None
UI_LINE = "trace view http://"
RUN_ID = "scheduled__2026-11-27T00:00:00+00:00"


def setUpModule():
    global PG
    test_tracing.setUpModule()  # the simulator and the Spark Connect stubs
    PG = PostgresServer()
    PG.start()
    unittest.addModuleCleanup(PG.cleanup)


def airflow_210_task_span_id(dag_id, run_id, task_id, try_number):
    """Airflow 2.10's task span id (airflow/traces/utils.py gen_span_id): no map index in it."""
    return hashlib.md5(f"{dag_id}_{run_id}_{task_id}_{try_number - 1}".encode()).hexdigest()[16:]


class Attempt:
    def __init__(self, dag_id, trace_id, task_id, try_number=1, map_index=-1):
        self.dag_id, self.trace_id, self.task_id = dag_id, trace_id, task_id
        self.try_number, self.map_index = try_number, map_index
        self.task_span = airflow_210_task_span_id(dag_id, RUN_ID, task_id, try_number)
        self.traceparent = f"00-{trace_id}-{self.task_span}-01"
        self.started = time.time_ns()  # Airflow started the task before its first call
        self.reported = False
        self.operations = []

    def key(self):
        return (self.task_id, self.try_number, self.map_index)

    def report_span(self):
        """The span id of its airflow.task span: Airflow's task span, except for a mapped instance,
        which shares that with its siblings and so gets its own derived id under it."""
        if self.map_index == -1:
            return self.task_span
        return derived_task_span_id(self.dag_id, self.task_id, RUN_ID, self.try_number, self.map_index)

    def metadata(self):
        headers = [("x-airflow-dag-id", self.dag_id), ("x-airflow-task-id", self.task_id),
                   ("x-airflow-run-id", RUN_ID), ("x-airflow-try-number", str(self.try_number)),
                   ("traceparent", self.traceparent)]
        if self.map_index != -1:
            headers.append(("x-airflow-map-index", str(self.map_index)))
        return headers

    def report(self, state):
        self.reported = True
        return {"dag_id": self.dag_id, "task_id": self.task_id, "run_id": RUN_ID, "try_number": self.try_number,
                "map_index": self.map_index, "state": state, "operator": "PythonOperator",
                "hostname": "worker-1", "airflow_version": "2.10.5", "start_time_unix_nano": self.started,
                "end_time_unix_nano": time.time_ns(), "traceparent": self.traceparent}

    def link(self):
        """The plugin's "Spark trace" link: the ids in the query, map only for a mapped instance."""
        params = [("dag", self.dag_id), ("task", self.task_id), ("run", RUN_ID), ("try", str(self.try_number))]
        if self.map_index != -1:
            params.append(("map", str(self.map_index)))
        return "/attempt?" + "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in params)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@harness.proxy_only
class SharedTraceAttemptsTest(TracingCase):
    def play_dag_run(self, proxy, store):
        """One Airflow 2.10 DAG run through `proxy`, writing to `store`; its attempts."""
        dag = new_id("dag")
        trace_id = uuid.uuid4().hex  # the DAG run's trace
        load1 = Attempt(dag, trace_id, "load_orders", try_number=1)
        map3 = Attempt(dag, trace_id, "publish", map_index=3)
        map4 = Attempt(dag, trace_id, "publish", map_index=4)
        load2 = Attempt(dag, trace_id, "load_orders", try_number=2)
        self.assertEqual(map3.task_span, map4.task_span, "Airflow 2.10: mapped instances share the task span")
        stub = self.stub(proxy)

        def call(attempt):
            op, _ = self.run_query(stub, metadata=attempt.metadata())
            attempt.operations.append(op)

        def report(attempt, state):
            status, answer = post(proxy.admin_address, attempt.report(state))
            self.assertEqual(status, 202, answer)
            self.assertEqual((answer["trace_id"], answer["span_id"]), (trace_id, attempt.report_span()))

        call(load1)                     # the report between the calls
        store.wait(trace_id, op=1)
        report(load1, "running")
        report(map3, "running")         # the report before the calls
        report(map4, "running")         # its sibling too: its own span, not map 3's
        store.wait(trace_id, **{"airflow.task": 3})
        call(map3)
        call(map4)
        call(load1)
        call(map3)
        call(map4)
        store.wait(trace_id, op=6)
        report(load1, "up_for_retry")
        report(map3, "success")         # and after them
        report(map4, "failed")
        call(load2)
        self.config_get(stub, metadata=load2.metadata())
        return dag, trace_id, [load1, map3, map4, load2]

    def check_attempts(self, store_arg, base, dag, trace_id, attempts):
        # The terminal: one row per attempt, each with its own map index.
        listed = subprocess.run([BIN, "traces", "list", "--store", store_arg, "--dag", dag, "--limit", "0", "--json"],
                                capture_output=True, text=True, timeout=30, env=proxy_env())
        self.assertEqual(listed.returncode, 0, listed.stderr)
        rows = json.loads(listed.stdout)["attempts"]
        self.assertEqual(sorted((r["task_id"], r["try_number"], r["map_index"]) for r in rows),
                         sorted(a.key() for a in attempts), rows)
        publish = subprocess.run([BIN, "traces", "list", "--store", store_arg, "--task", "publish", "--dag", dag,
                                  "--json"], capture_output=True, text=True, timeout=30, env=proxy_env())
        self.assertEqual(publish.returncode, 0, publish.stderr)
        self.assertEqual(sorted(r["map_index"] for r in json.loads(publish.stdout)["attempts"]), [3, 4])

        # The task list: every attempt once, its own map index, its own link.
        status, body = get(f"{base}/api/v1/tasks?dag={dag}&limit=200")
        self.assertEqual(status, 200, body)
        tasks = json.loads(body)["tasks"]
        by_key = {}
        for task in tasks:
            key = (task["task_id"], task["try_number"], task["map_index"])
            self.assertNotIn(key, by_key, f"listed twice: {key}")
            by_key[key] = task
        self.assertEqual(sorted(by_key), sorted(a.key() for a in attempts))

        for attempt in attempts:
            with self.subTest(attempt=attempt.key()):
                task = by_key[attempt.key()]
                self.assertEqual(task["href"], attempt.link())
                self.assertEqual(task["trace_ids"], [trace_id])
                status, body = get(base + attempt.link())
                self.assertEqual(status, 200, body)
                status, body = get(base + "/api/v1" + attempt.link())
                self.assertEqual(status, 200, body)
                answer = json.loads(body)
                self.assertEqual(answer["identity"], {"dag_id": dag, "task_id": attempt.task_id, "run_id": RUN_ID,
                                                      "try_number": attempt.try_number,
                                                      "map_index": attempt.map_index})
                self.assertEqual(answer["trace_ids"], [trace_id])
                # Only its own spans: every span with an identity carries this one, and its
                # operations are the calls it made.
                for span in answer["spans"]:
                    attributes = span["attributes"]
                    if "airflow.task_id" not in attributes:
                        continue
                    self.assertEqual((attributes["airflow.task_id"], attributes["airflow.try_number"],
                                      attributes.get("airflow.map_index", -1)), attempt.key(), span["name"])
                operations = sorted(s["attributes"]["spark.connect.operation_id"] for s in answer["spans"]
                                    if s["name"] == OPERATION)
                self.assertEqual(operations, sorted(attempt.operations))
                self.assertEqual(answer["airflow_task"] is not None, attempt.reported, answer["airflow_task"])
                if attempt.reported:
                    self.assertEqual(answer["airflow_task"]["span_id"], attempt.report_span())
                    self.assertEqual(answer["start_ms"], answer["airflow_task"]["start_ms"])

    def start_ui(self, store_arg):
        ui = subprocess.Popen([BIN, "ui", "--store", store_arg, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=proxy_env())
        self.addCleanup(lambda: (ui.kill(), ui.wait(10), ui.stdout.close(), ui.stderr.close()))
        line = harness.first_line(ui).strip()
        self.assertTrue(line.startswith(UI_LINE), f"unexpected first line {line!r}")
        return line[len("trace view "):].rstrip("/")

    def run_on(self, store_arg, *proxy_args):
        proxy = harness.start_proxy(self, test_tracing.SIM.address, "--store", store_arg,
                                    "--span-batch-delay", "50ms", *proxy_args)
        dag, trace_id, attempts = self.play_dag_run(proxy, test_tracing.Store(store_arg))
        self.stop_proxy(proxy)  # SIGTERM: every span exported to the store before it exits
        self.check_attempts(store_arg, self.start_ui(store_arg), dag, trace_id, attempts)

    def test_sqlite(self):
        self.run_on(self.store.path)

    def test_postgresql(self):
        database = PG.create_database()
        self.addCleanup(lambda: PG.psql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        self.run_on(PG.url(database), "--spool-dir", str(Path(self.tmp.name) / "spool"))


if __name__ == "__main__":
    unittest.main()
