"""`sparktrace diagnose --json`'s `sql_executions` against an independent oracle (issue 31).

For every real event log in $SPARKTRACE_DATA_DIR (default <repo>/../shared/data: spark-events,
spark-events-problems, spark-events-thirdparty, spark-events-derived) that has a
SparkListenerSQLExecutionStart, `sparktrace diagnose --json LOG` must list, per application, the
SQL executions Spark's SQL UI shows, with the same figures. The expected answer is computed by
sql_oracle.py, a re-implementation of Spark's SQLAppStatusListener / SQLMetrics.stringValue /
SparkPlanGraph written from Spark's source (its docstring says which rules and files), reading the
raw JSON lines itself; nothing comes from sparktrace.

Compared, execution by execution (ordered by id): description, operation_id, job_ids, start_ms,
end_ms; the plan tree (node names, child order); for every metric of every node: name, type,
accumulator id, unit, values (how many were aggregated), total (exact integer equality), and
min / median / max where Spark computes them (size, timing, nsTiming; exact, and never
`approximate`: the thinning bound is far above these logs' stages). Units are docs/diagnose-sql.md's,
Spark's raw ones (nsTiming in ns). Where Spark defines no figure, the doc's convention is checked:
"average" metrics / 10 with total = median, unknown types (v2Custom_*, Databricks' count / minimum /
maximum) = plain sum. A description longer than 1024 bytes may be cut there (documented). Mismatches
are reported as
`LOG: execution N: PATH: metric "NAME" (#ID): FIELD expected X, got Y`, PATH being the node names
from the root with each node's index among its siblings.

Not compared: `db_sim_eventlog/eventlog-...gz` (gzip is no Spark event-log codec and sparktrace
refuses it; the same bytes are eventlog_v2_local-1623876083964, which is compared).

The tests that need no binary (TestOracle) check the oracle itself against hand-read raw JSON and
against the figures the RAPIDS tools assert on these logs (README-rapids.md).

Stdlib only. Binary: $SPARKTRACE_BIN (default build/sparktrace). Skipped when the logs are absent.
"""

import json
import os
import subprocess
import unittest
from pathlib import Path

import deadline
import sql_oracle

deadline.install()  # the per-test deadline and dump the other modules get from harness

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("SPARKTRACE_BIN") or str(HERE.parents[1] / "build" / "sparktrace")
DATA = Path(os.environ.get("SPARKTRACE_DATA_DIR") or HERE.parents[2] / "shared" / "data")
TIMEOUT = 60  # seconds per sparktrace run; the largest log (142 MB decoded) takes a few

# So that the comparison cannot pass vacuously (figures of the 2026 shared data: 34 logs with SQL,
# 235 executions, 2,581 plan nodes, 14,316 metrics, 9,411 of which Spark shows a value for).
MIN_LOGS = 30
MIN_METRICS = 12000
MIN_METRICS_WITH_VALUE = 8000
MAX_REPORTED = 60  # mismatch lines printed (all are counted)

NO_SQL_LOGS = ["spark-events/local-1422981780767", "spark-events/application_1553914137147_0018",
               "spark-events-thirdparty/rapids/empty_eventlog"]
MISSING = "diagnose --json has no sql_executions"

needs_data = unittest.skipUnless((DATA / "spark-events").is_dir(), f"no event logs under {DATA}")


def sql_logs():
    """(path, decoded bytes) of every log with SQL executions that sparktrace can read."""
    out = []
    for path in sql_oracle.discover_logs(DATA):
        if path.suffix == ".gz":
            continue
        data = sql_oracle.log_bytes(path)
        if sql_oracle.has_sql(data):
            out.append((path, data))
    return out


def diagnose(path):
    """The single application `diagnose --json` reports for one log."""
    result = subprocess.run([BIN, "diagnose", "--json", str(path)], capture_output=True, text=True,
                            timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise AssertionError(f"{path}: exit {result.returncode}: {result.stderr[-2000:]}")
    apps = json.loads(result.stdout)["applications"]
    if len(apps) != 1:
        raise AssertionError(f"{path}: {len(apps)} applications, wanted 1")
    return apps[0]


UNITS = {"sum": "count", "size": "bytes", "timing": "ms", "nsTiming": "ns", "average": "average"}
DESCRIPTION_BYTES = 1024  # docs/diagnose-sql.md: sparktrace keeps the first 1024 bytes


def expected_figures(metric):
    """{field: value} the JSON must carry for one oracle metric, in docs/diagnose-sql.md's
    conventions, which keep Spark's raw units (bytes, ms, ns: nsTiming is *not* converted to ms
    as the UI prints it). Two kinds of metric Spark gives no total for get the doc's convention:
    "average" metrics, stored by Spark x10 and shown as (min, med, max) / 10 without a total,
    are reported / 10 with total = the median; types outside Spark's five (v2Custom_*, Databricks'
    count / minimum / maximum) are the plain sum of their values (the oracle's convention too)."""
    total, lo, med, hi = metric["total"], metric["min"], metric["median"], metric["max"]
    if metric["type"] == sql_oracle.AVERAGE:
        lo, med, hi = (None if v is None else v / 10 for v in (lo, med, hi))
        total = 0 if med is None else med
    return {"total": total, "min": lo, "median": med, "max": hi, "values": metric["values"],
            "unit": UNITS.get(metric["type"], "")}


def same_number(want, have):
    """Exact equality: integers must be JSON integers; the /10 of average metrics the same double."""
    if isinstance(want, bool) or isinstance(have, bool):
        return False
    if isinstance(want, int):
        return isinstance(have, int) and have == want
    return isinstance(have, (int, float)) and float(have) == want


def description_matches(want, have):
    """Equal, or the documented cut of a longer description to its first DESCRIPTION_BYTES bytes
    (at a character boundary, perhaps with an ellipsis)."""
    if have == want:
        return True
    if want is None or not isinstance(have, str):
        return False
    encoded = want.encode()
    if len(encoded) <= DESCRIPTION_BYTES:
        return False
    kept = have.rstrip("\u2026").rstrip(".")
    return want.startswith(kept) and len(encoded[:DESCRIPTION_BYTES]) - len(kept.encode()) <= 4


class Comparison:
    """Collects mismatches between the oracle and sparktrace for one log."""

    def __init__(self, name):
        self.name = name
        self.mismatches = []
        self.metrics = 0
        self.metrics_with_value = 0
        self.nodes = 0

    def add(self, where, text):
        self.mismatches.append(f"{self.name}: {where}: {text}")

    def executions(self, expected, got):
        got_ids = [e.get("execution_id") for e in got]
        want_ids = [e["execution_id"] for e in expected]
        if got_ids != sorted(got_ids, key=lambda i: (i is None, i)):
            self.add("sql_executions", f"not ordered by execution id: {got_ids}")
        by_id = {e.get("execution_id"): e for e in got}
        missing = [i for i in want_ids if i not in by_id]
        extra = [i for i in got_ids if i not in set(want_ids)]
        if missing or extra:
            self.add("sql_executions", f"execution ids expected {want_ids}, got {got_ids}")
        for exec_ in expected:
            if exec_["execution_id"] in by_id:
                self.execution(exec_, by_id[exec_["execution_id"]])

    def execution(self, want, got):
        where = f"execution {want['execution_id']}"
        if not description_matches(want["description"], got.get("description", "<absent>")):
            self.add(where, f"description expected {want['description']!r}, "
                            f"got {got.get('description', '<absent>')!r}")
        for field in ("operation_id", "start_ms", "end_ms"):
            if got.get(field, "<absent>") != want[field]:
                self.add(where, f"{field} expected {want[field]!r}, got {got.get(field, '<absent>')!r}")
        job_ids = got.get("job_ids")
        if not isinstance(job_ids, list) or sorted(job_ids) != want["job_ids"]:
            self.add(where, f"job_ids expected {want['job_ids']}, got {job_ids!r}")
        if not isinstance(got.get("plan"), dict):
            self.add(where, f"plan expected a node, got {got.get('plan')!r}")
            return
        self.node(where, "", 0, want["plan"], got["plan"])

    def node(self, where, parent_path, index, want, got):
        path = f"{parent_path}/{index}:{want['name']}"
        self.nodes += 1
        if got.get("name") != want["name"]:
            self.add(where, f"{path}: node name expected {want['name']!r}, got {got.get('name')!r} "
                            "(subtree not compared)")
            return
        self.node_metrics(where, path, want["metrics"], got.get("metrics"))
        got_children = got.get("children") or []
        if len(got_children) != len(want["children"]):
            self.add(where, f"{path}: {len(want['children'])} children expected "
                            f"({[c['name'] for c in want['children']]}), got {len(got_children)} "
                            f"({[c.get('name') for c in got_children]})")
        for i, (w, g) in enumerate(zip(want["children"], got_children)):
            self.node(where, path, i, w, g)

    def node_metrics(self, where, path, want, got):
        if not isinstance(got, list):
            self.add(where, f"{path}: metrics expected a list, got {got!r}")
            return
        by_id = {}
        for m in got:
            by_id.setdefault(m.get("accumulator_id"), []).append(m)
        want_ids = [m["accumulator_id"] for m in want]
        extra = [m.get("accumulator_id") for m in got if m.get("accumulator_id") not in want_ids]
        if extra:
            self.add(where, f"{path}: metrics not in the plan: {extra}")
        for m in want:
            candidates = by_id.get(m["accumulator_id"], [])
            label = f"{path}: metric {m['name']!r} (#{m['accumulator_id']})"
            if len(candidates) != 1:
                self.add(where, f"{label}: {len(candidates)} entries with this accumulator id")
                continue
            self.compare_metric(where, label, m, candidates[0])

    def compare_metric(self, where, label, want, got):
        self.metrics += 1
        if want["shown"]:
            self.metrics_with_value += 1
        for field in ("name", "type"):
            if got.get(field) != want[field]:
                self.add(where, f"{label}: {field} expected {want[field]!r}, got {got.get(field)!r}")
        if got.get("approximate"):
            # The bound that thins values (--sql-max-task-values, 100,000 per stage and metric) is
            # far above the largest stage here (2,185 tasks): every figure must be exact.
            self.add(where, f"{label}: approximate, wanted exact figures")
        for field, value in expected_figures(want).items():
            have = got.get(field, "<absent>")
            if field == "unit":
                if have != value:
                    self.add(where, f"{label}: unit expected {value!r}, got {have!r}")
            elif value is None:
                if have is not None:
                    self.add(where, f"{label}: {field} expected null, got {have!r}")
            elif not same_number(value, have):
                self.add(where, f"{label}: {field} expected {value}, got {have!r}")


@needs_data
class TestOracle(unittest.TestCase):
    """The oracle against figures read by hand from the raw JSON and the RAPIDS tools' answers."""

    @staticmethod
    def metric(result, execution_id, accumulator_id):
        for exec_ in result["sql_executions"]:
            if exec_["execution_id"] != execution_id:
                continue
            for _, node in sql_oracle.walk(exec_["plan"]):
                for m in node["metrics"]:
                    if m["accumulator_id"] == accumulator_id:
                        return node["name"], m
        raise AssertionError(f"no accumulator {accumulator_id} in execution {execution_id}")

    def test_decoders_give_the_source_bytes(self):
        # README.md: the derived files decode to the source logs byte for byte.
        derived = DATA / "spark-events-derived"
        for name, source in [("local-1642039451826.lz4", "local-1642039451826"),
                             ("local-1642039451826.zstd", "local-1642039451826"),
                             ("app-20200706201101-0003.snappy", "app-20200706201101-0003"),
                             ("eventlog_v2_application_1628109047826_1317105",
                              "application_1628109047826_1317105")]:
            with self.subTest(name):
                self.assertEqual(sql_oracle.log_bytes(derived / name),
                                 (DATA / "spark-events" / source).read_bytes())

    def test_hand_read_figures_of_app_20200706201101_0003(self):
        # Read by hand from the 16 TaskEnd lines of stage 2 and the two DriverAccumUpdates lines:
        # accumulator 1 (BroadcastHashJoin rows) is 375000 in each of the 16 tasks; 14 (the
        # outer LocalTableScan rows) 6250 each; 8 (the inner scan) twelve 6s and four 7s;
        # 0 (WholeStageCodegen (2) duration, ms) 1467 1562 1563 1563 1564 1564 1566 1566 1566
        # 1574 1578 1583 1587 1587 1593 1593; 2 (BroadcastExchange data size) only the driver's
        # 1048616.
        result = sql_oracle.analyze(DATA / "spark-events" / "app-20200706201101-0003")
        exec_ = result["sql_executions"][0]
        self.assertEqual((exec_["execution_id"], exec_["description"], exec_["job_ids"]),
                         (0, "foreach at <console>:26", [0, 1, 2]))
        self.assertEqual((exec_["start_ms"], exec_["end_ms"]), (1594091478577, 1594091483045))
        name, m = self.metric(result, 0, 1)
        self.assertEqual((name, m["name"], m["total"]), ("BroadcastHashJoin", "number of output rows",
                                                         16 * 375000))
        name, m = self.metric(result, 0, 14)
        self.assertEqual((name, m["total"]), ("LocalTableScan", 16 * 6250))
        self.assertEqual(self.metric(result, 0, 8)[1]["total"], 12 * 6 + 4 * 7)
        name, m = self.metric(result, 0, 0)
        durations = [1467, 1562, 1563, 1563, 1564, 1564, 1566, 1566, 1566, 1574, 1578, 1583, 1587,
                     1587, 1593, 1593]
        self.assertEqual((name, m["type"], m["total"], m["min"], m["median"], m["max"]),
                         ("WholeStageCodegen (2)", "timing", sum(durations), 1467, 1566, 1593))
        name, m = self.metric(result, 0, 2)
        self.assertEqual((name, m["total"], m["min"], m["median"], m["max"]),
                         ("BroadcastExchange", 1048616, 1048616, 1048616, 1048616))

    def test_hand_read_figures_of_local_1642039451826(self):
        # Spark 3.3 with AQE: the plan is the last SQLAdaptiveExecutionUpdate's (three per
        # execution). Execution 0: Range's "number of output rows" (accumulator 36) is the sum of
        # its tasks' updates (8 x 12 or 13 = 100); the first Exchange's "number of partitions"
        # (62) comes from the driver alone (DriverAccumUpdates [[62, 10]]); its "shuffle write
        # time" (72, nsTiming) keeps Spark's nanoseconds.
        path = DATA / "spark-events" / "local-1642039451826"
        result = sql_oracle.analyze(path)
        self.assertEqual([e["execution_id"] for e in result["sql_executions"]], [0, 1])
        self.assertEqual([e["job_ids"] for e in result["sql_executions"]], [[0, 1, 2], [3, 4, 5]])
        self.assertEqual([e["adaptive_updates"] for e in result["sql_executions"]], [3, 3])
        self.assertEqual(result["sql_executions"][0]["plan"]["name"], "AdaptiveSparkPlan")
        name, m = self.metric(result, 0, 36)
        self.assertEqual((name, m["name"], m["total"]), ("Range", "number of output rows", 100))
        self.assertEqual(hand_sum(path, 36), 100)
        name, m = self.metric(result, 0, 62)
        self.assertEqual((name, m["name"], m["total"]), ("Exchange", "number of partitions", 10))
        name, m = self.metric(result, 0, 72)
        self.assertEqual((m["type"], m["total"]), ("nsTiming", hand_sum(path, 72)))

    def test_resubmitted_task_ends_count_once(self):
        # tasks_executors_fail: stage 238 re-reports finished tasks as "Resubmitted" TaskEnds and
        # reruns lost ones; Spark counts each task index once (the first success), so accumulator
        # 5684 of execution 27 is 12 where a plain sum of every successful TaskEnd gives 16.
        result = sql_oracle.analyze(DATA / "spark-events-problems" /
                                    "tasks_executors_fail_compressed_eventlog.zstd")
        self.assertEqual(self.metric(result, 27, 5684)[1]["total"], 12)

    def test_rapids_figures(self):
        # README-rapids.md: per-SQL durations the RAPIDS tools assert (persql.csv,
        # rapids_duration_and_cpu_expectation.csv) and the AQEShuffleRead count of SqlPlanParserSuite.
        problems = DATA / "spark-events-problems"
        durations = {
            "truncated_eventlog": [1306, None],
            "complex_dec_eventlog.zstd": [1260, 259, 130, 76, 65, 479, 95, 65],
            "join_missing_sql_end": [None],
        }
        for name, want in durations.items():
            with self.subTest(name):
                result = sql_oracle.analyze(problems / name)
                got = [None if e["end_ms"] is None else e["end_ms"] - e["start_ms"]
                       for e in result["sql_executions"]]
                self.assertEqual(got, want)
        result = sql_oracle.analyze(problems / "aqeshuffle_eventlog.zstd")
        names = [n["name"] for _, n in sql_oracle.walk(result["sql_executions"][0]["plan"])]
        self.assertEqual(names.count("AQEShuffleRead"), 2)

    def test_malformed_line_is_skipped_and_counted(self):
        result = sql_oracle.analyze(DATA / "spark-events-problems" / "malformed_json_eventlog.zstd")
        self.assertEqual((result["lines"], result["malformed_lines"]), (477, 1))
        self.assertEqual(len(result["sql_executions"]), 1)


def hand_sum(path, accumulator_id):
    """Sum of the "Update" of one accumulator over every successful TaskEnd of a plain log: the
    simple reading, right for a log without retries or resubmitted tasks."""
    total = 0
    with open(path, "rb") as f:
        for line in f:
            event = json.loads(line)
            if event.get("Event") != "SparkListenerTaskEnd":
                continue
            info = event["Task Info"]
            if info.get("Failed") or info.get("Killed"):
                continue
            for acc in info.get("Accumulables", []):
                if acc["ID"] == accumulator_id:
                    total += int(acc["Update"])
    return total


@needs_data
class TestSqlExecutions(unittest.TestCase):
    logs = None

    @classmethod
    def setUpClass(cls):
        cls.logs = []
        for path, data in sql_logs():
            cls.logs.append((path, sql_oracle.replay_bytes(data)))

    def app_sql(self, path):
        app = diagnose(path)
        if "sql_executions" not in app:
            self.fail(f"{MISSING} ({path})")
        self.assertIsInstance(app["sql_executions"], list)
        return app["sql_executions"]

    def test_logs_without_sql_have_an_empty_list(self):
        for name in NO_SQL_LOGS:
            with self.subTest(name):
                self.assertEqual(self.app_sql(DATA / name), [])

    def test_every_sql_log_matches_the_oracle(self):
        self.assertGreaterEqual(len(self.logs), MIN_LOGS, "too few logs with SQL executions")
        mismatches, metrics, with_value, nodes, executions = [], 0, 0, 0, 0
        for path, expected in self.logs:
            name = str(path.relative_to(DATA))
            comparison = Comparison(name)
            comparison.executions(expected["sql_executions"], self.app_sql(path))
            mismatches += comparison.mismatches
            metrics += comparison.metrics
            with_value += comparison.metrics_with_value
            nodes += comparison.nodes
            executions += len(expected["sql_executions"])
        if mismatches:
            shown = "\n".join(mismatches[:MAX_REPORTED])
            more = len(mismatches) - MAX_REPORTED
            self.fail(f"{len(mismatches)} mismatches over {len(self.logs)} logs, {executions} "
                      f"executions, {nodes} nodes, {metrics} metrics:\n{shown}"
                      + (f"\n... and {more} more" if more > 0 else ""))
        self.assertGreaterEqual(metrics, MIN_METRICS, "too few metrics compared")
        self.assertGreaterEqual(with_value, MIN_METRICS_WITH_VALUE,
                                "too few metrics with a value compared")


if __name__ == "__main__":
    unittest.main()
