"""`sparktrace diagnose`: offline event-log reading, phase figures, JSON schema, errors.

Stdlib only. Binary: $SPARKTRACE_BIN (default build/sparktrace). Event logs: $SPARKTRACE_DATA_DIR
(default <repo>/../shared/data); every test is skipped when they are absent.
"""

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import deadline

deadline.install()  # the per-test deadline and dump the other modules get from harness

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("SPARKTRACE_BIN") or str(HERE.parents[1] / "build" / "sparktrace")
DATA = Path(os.environ.get("SPARKTRACE_DATA_DIR") or HERE.parents[2] / "shared" / "data")
TIMEOUT = 60  # seconds per run; a Debug build reads the largest directory in a few seconds

YARN_APP = DATA / "spark-events" / "application_1553914137147_0018"
PLAIN = DATA / "spark-events" / "local-1642039451826"
DERIVED = DATA / "spark-events-derived"
MALFORMED = DATA / "spark-events-problems" / "malformed_json_eventlog.zstd"
PHASE_KEYS = {"resource_wait_ms", "compute_ms", "io_write_ms", "idle_ms"}

needs_data = unittest.skipUnless(YARN_APP.is_file(), f"no event logs under {DATA}")


def run(*args):
    return subprocess.run([BIN, "diagnose", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def run_json(*args, expect_code=0):
    result = run("--json", *args)
    if result.returncode != expect_code:
        raise AssertionError(f"exit {result.returncode}, wanted {expect_code}: {result.stderr}")
    return json.loads(result.stdout)


def without_log_path(app):
    """An application's JSON minus what names the file it was read from."""
    app = dict(app)
    app["log"] = {key: value for key, value in app["log"].items() if key != "path"}
    return app


@needs_data
class DiagnoseTest(unittest.TestCase):
    def test_text_shows_hand_computed_phases(self):
        # The hand computation is in tests/unit/listener/correlate/listener_correlate_phases_test.cc
        # (YarnApplicationWithThreeExecutors): window 62,168 ms.
        result = run(YARN_APP)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout
        self.assertIn("application application_1553914137147_0018", out)
        self.assertRegex(out, r"resource_wait\s+10310 ms\s+16\.6%")
        self.assertRegex(out, r"compute\s+50647 ms\s+81\.5%")
        self.assertRegex(out, r"io_write\s+0 ms\s+0\.0%")
        self.assertRegex(out, r"idle\s+1211 ms\s+1\.9%")
        self.assertIn("(62.168s)", out)
        self.assertRegex(out, r"executors 3 added, 0 removed")
        for job in ("job 0", "job 1", "job 2"):
            self.assertRegex(out, rf"\n\s+{job}\s+succeeded")

    def test_json_schema_and_figures(self):
        doc = run_json(YARN_APP)
        self.assertEqual(set(doc), {"schema", "applications", "errors"})
        self.assertEqual(doc["schema"], "sparktrace.diagnose/1")
        self.assertEqual(doc["errors"], [])
        self.assertEqual(len(doc["applications"]), 1)
        app = doc["applications"][0]
        for key in ("log", "app_id", "attempt_id", "app_name", "spark_user", "spark_version", "window",
                    "phases", "executors", "jobs", "operations"):
            self.assertIn(key, app)
        self.assertEqual(app["app_id"], "application_1553914137147_0018")
        self.assertTrue(app["spark_version"].startswith("3.0.0"), app["spark_version"])
        self.assertEqual(app["window"], {"start_ms": 1554755984286, "end_ms": 1554756046454,
                                         "duration_ms": 62168})
        self.assertEqual(app["phases"], {"resource_wait_ms": 10310, "compute_ms": 50647,
                                         "io_write_ms": 0, "idle_ms": 1211})
        self.assertEqual(app["executors"], {"added": 3, "removed": 0})
        self.assertEqual(app["log"]["state"], "complete")
        self.assertEqual(app["log"]["malformed_lines"], 0)
        self.assertEqual([job["job_id"] for job in app["jobs"]], [0, 1, 2])
        stage_keys = {"stage_id", "attempt_id", "status", "start_ms", "completion_ms", "duration_ms",
                      "num_tasks", "tasks_ended", "failed_tasks", "killed_tasks", "task_duration_ms",
                      "input_bytes", "shuffle_read_bytes", "shuffle_write_bytes", "output_bytes",
                      "memory_spilled_bytes", "disk_spilled_bytes"}
        stages = [stage for job in app["jobs"] for stage in job["stages"]]
        self.assertTrue(stages)
        for stage in stages:
            self.assertEqual(set(stage), stage_keys)
            self.assertEqual(stage["status"], "complete")
        # Stage 0.0 runs [1554755995763, 1554756012379] (see the unit test's comment).
        stage0 = next(stage for stage in stages if stage["stage_id"] == 0)
        self.assertEqual(stage0["duration_ms"], 1554756012379 - 1554755995763)
        self.assertGreater(stage0["tasks_ended"], 0)

    def test_compressed_copies_equal_the_plain_log(self):
        plain = run_json(PLAIN)["applications"]
        self.assertEqual(len(plain), 1)
        self.assertEqual(plain[0]["app_id"], "local-1642039451826")
        self.assertTrue(plain[0]["jobs"], "the log has jobs")
        for codec in ("zstd", "lz4"):
            with self.subTest(codec=codec):
                copy = run_json(DERIVED / f"local-1642039451826.{codec}")["applications"]
                self.assertEqual([without_log_path(app) for app in copy],
                                 [without_log_path(app) for app in plain])

    def test_directory_processes_every_application(self):
        doc = run_json(DERIVED)
        ids = sorted(app["app_id"] for app in doc["applications"])
        # Single files (snappy, lz4, zstd, zstd.inprogress) and rolling eventlog_v2_ directories.
        for expected in ("app-20200706201101-0003", "application_1628109047826_1317105",
                         "local-1430917381534", "local-1596020211915", "local-1642039451826"):
            self.assertIn(expected, ids)
        self.assertGreaterEqual(len(ids), 7)
        for app in doc["applications"]:
            self.assertEqual(set(app["phases"] or PHASE_KEYS), PHASE_KEYS)
        rolling = [app for app in doc["applications"] if "eventlog_v2_" in app["log"]["path"]]
        self.assertEqual(len(rolling), 2)
        # In-progress prefixes (README.md "Derived files"): 100 events, and 5 events of a file cut
        # inside a zstd frame; both read as far as they go, neither an error.
        by_path = {Path(app["log"]["path"]).name: app for app in doc["applications"]}
        self.assertEqual(by_path["local-1596020211915.zstd"]["log"]["lines"], 100)
        self.assertEqual(by_path["local-1430917381534.zstd"]["log"]["lines"], 5)
        self.assertEqual(by_path["local-1430917381534.zstd"]["log"]["state"], "in_progress")
        self.assertEqual(doc["errors"], [])

    def test_rolling_directory_argument_is_one_log(self):
        plain = run_json(DATA / "spark-events" / "application_1628109047826_1317105")["applications"]
        rolling = run_json(DERIVED / "eventlog_v2_application_1628109047826_1317105")["applications"]
        self.assertEqual(len(rolling), 1)
        self.assertEqual([without_log_path(app) for app in rolling], [without_log_path(app) for app in plain])

    def test_missing_path_is_an_error_but_others_are_processed(self):
        missing = DATA / "no-such-event-log"
        result = run(missing, YARN_APP)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"sparktrace diagnose: {missing}: No such file or directory", result.stderr)
        self.assertIn("application application_1553914137147_0018", result.stdout)
        self.assertRegex(result.stdout, r"compute\s+50647 ms")

        doc = run_json(YARN_APP, missing, expect_code=1)
        self.assertEqual([app["app_id"] for app in doc["applications"]], ["application_1553914137147_0018"])
        self.assertEqual(doc["errors"], [{"path": str(missing), "message": "No such file or directory"}])

    def test_malformed_line_is_counted_not_fatal(self):
        # README-rapids.md: line 4 of 477 is invalid JSON; the other 476 lines parse.
        doc = run_json(MALFORMED)
        self.assertEqual(doc["errors"], [])
        app = doc["applications"][0]
        self.assertEqual(app["app_id"], "application_1603128018386_7759")
        self.assertEqual(app["log"]["malformed_lines"], 1)
        self.assertEqual(app["log"]["lines"], 477)
        self.assertTrue(app["log"]["first_malformed"].startswith("line 4:"), app["log"]["first_malformed"])
        self.assertTrue(app["jobs"])
        text = run(MALFORMED)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("1 malformed", text.stdout)

    def test_a_log_says_whether_its_application_ended_runs_or_was_cut_short(self):
        """The same lines as a log still being written (.inprogress), then as a finished file
        without ApplicationEnd whose last line was cut mid-JSON, then with its ApplicationEnd."""
        lines = PLAIN.read_text().splitlines(keepends=True)
        end = [i for i, line in enumerate(lines) if '"SparkListenerApplicationEnd"' in line]
        self.assertEqual(len(end), 1)
        job_ends = [i for i, line in enumerate(lines) if '"SparkListenerJobEnd"' in line]
        cut = job_ends[-1]  # the last JobEnd, cut in half: its job never ends
        head, last_line = "".join(lines[:cut]), lines[cut]
        with tempfile.TemporaryDirectory() as work:
            running = Path(work) / "local-1.inprogress"
            running.write_text(head + last_line[: len(last_line) // 2])
            app = run_json(running)["applications"][0]
            self.assertEqual(app["status"], "in_progress")
            self.assertEqual(app["log"]["state"], "in_progress")
            self.assertIn("running", [job["status"] for job in app["jobs"]])
            self.assertIn("(in progress: no ApplicationEnd yet;", run(running).stdout)

            truncated = Path(work) / "local-2"
            truncated.write_text(head + last_line[: len(last_line) // 2])
            app = run_json(truncated)["applications"][0]
            self.assertEqual(app["status"], "truncated")
            self.assertEqual(app["log"]["state"], "complete", "the file is finished, the application is not")
            self.assertIs(app["log"]["last_line_malformed"], True)
            statuses = [job["status"] for job in app["jobs"]]
            self.assertNotIn("running", statuses)
            self.assertIn("unknown", statuses)
            self.assertIn("(truncated: no ApplicationEnd, its last line not an event;", run(truncated).stdout)

        app = run_json(PLAIN)["applications"][0]
        self.assertEqual(app["status"], "ended")
        self.assertIs(app["log"]["last_line_malformed"], False)
        self.assertIn("(ended;", run(PLAIN).stdout)

    def test_unreadable_files_are_errors_but_others_are_processed(self):
        with tempfile.TemporaryDirectory() as tmp:
            garbage = Path(tmp) / "garbage.zstd"
            garbage.write_bytes(b"\x00not a zstd frame\n" * 100)
            empty = Path(tmp) / "empty"
            empty.write_bytes(b"")
            doc = run_json(garbage, empty, YARN_APP, expect_code=1)
            self.assertEqual([app["app_id"] for app in doc["applications"]], ["application_1553914137147_0018"])
            self.assertEqual([error["path"] for error in doc["errors"]], [str(garbage), str(empty)])
            self.assertIn("zstd", doc["errors"][0]["message"])
            result = run(garbage, YARN_APP)
            self.assertEqual(result.returncode, 1)
            self.assertIn(f"sparktrace diagnose: {garbage}: ", result.stderr)

    def test_connect_operation_phases_and_jobs(self):
        # A Spark 3.5 Connect operation (event shapes as in tests/unit/listener/events/listener_event_parser_test.cc)
        # whose one job runs stage 11 for 1,000 ms of the operation's 1,260 ms window
        # [Started 9,240, Finished 10,500]: compute 1,000, idle 260; no ExecutorAdded, so no
        # resource_wait (phases.h).
        pkg = "org.apache.spark.sql.connect.service."
        op = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59"
        session = "8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f"
        tag = f"SparkConnect_OperationTag_User_data_eng_Session_{session}_Operation_{op}"
        t0 = 1732262600000

        def stage(submitted=None, completed=None):
            info = {"Stage ID": 11, "Stage Attempt ID": 0, "Stage Name": "collect", "Number of Tasks": 1,
                    "RDD Info": [], "Parent IDs": [], "Details": "", "Accumulables": []}
            if submitted:
                info["Submission Time"] = submitted
            if completed:
                info["Completion Time"] = completed
            return info

        events = [
            {"Event": "SparkListenerLogStart", "Spark Version": "3.5.2"},
            {"Event": "SparkListenerApplicationStart", "App Name": "connect", "App ID": "local-1732262600000",
             "Timestamp": t0, "User": "spark"},
            {"Event": pkg + "SparkListenerConnectOperationStarted", "jobTag": tag, "operationId": op,
             "eventTime": t0 + 9240, "sessionId": session, "userId": "data_eng", "userName": "x",
             "statementText": "", "sparkSessionTags": [], "extraTags": {}},
            {"Event": pkg + "SparkListenerConnectOperationAnalyzed", "jobTag": tag, "operationId": op,
             "eventTime": t0 + 9260, "extraTags": {}},
            {"Event": pkg + "SparkListenerConnectOperationReadyForExecution", "jobTag": tag, "operationId": op,
             "eventTime": t0 + 9290},
            {"Event": "SparkListenerJobStart", "Job ID": 7, "Submission Time": t0 + 9300, "Stage Infos": [stage()],
             "Stage IDs": [11], "Properties": {"spark.job.tags": tag}},
            {"Event": "SparkListenerStageSubmitted", "Stage Info": stage(t0 + 9310), "Properties": {}},
            {"Event": "SparkListenerStageCompleted", "Stage Info": stage(t0 + 9310, t0 + 10310)},
            {"Event": "SparkListenerJobEnd", "Job ID": 7, "Completion Time": t0 + 10400,
             "Job Result": {"Result": "JobSucceeded"}},
            {"Event": pkg + "SparkListenerConnectOperationFinished", "jobTag": tag, "operationId": op,
             "eventTime": t0 + 10500},
            {"Event": pkg + "SparkListenerConnectOperationClosed", "jobTag": tag, "operationId": op,
             "eventTime": t0 + 10600},
            {"Event": "SparkListenerApplicationEnd", "Timestamp": t0 + 20000},
        ]
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "local-1732262600000"
            log.write_text("".join(json.dumps(event) + "\n" for event in events))
            doc = run_json(log)
            text = run(log)
        app = doc["applications"][0]
        self.assertEqual(app["log"]["malformed_lines"], 0)
        self.assertEqual(app["jobs"][0]["operation_id"], op)
        self.assertEqual(len(app["operations"]), 1)
        operation = app["operations"][0]
        self.assertEqual(operation["operation_id"], op)
        self.assertEqual(operation["session_id"], session)
        self.assertEqual(operation["user_id"], "data_eng")
        self.assertEqual(operation["status"], "finished")
        self.assertEqual(operation["window"], {"start_ms": t0 + 9240, "end_ms": t0 + 10500, "duration_ms": 1260})
        self.assertEqual(operation["phases"], {"resource_wait_ms": 0, "compute_ms": 1000, "io_write_ms": 0,
                                               "idle_ms": 260})
        self.assertEqual(operation["job_ids"], [7])
        # The server's own split: Started → Analyzed → ReadyForExecution → Finished → Closed.
        self.assertEqual(operation["server_phases"], {"analysis_ms": 20, "planning_ms": 30, "execution_ms": 1210,
                                                      "results_ms": 100})
        self.assertEqual(operation["findings"], [])  # a healthy one-second operation
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(f"connect operation {op} (finished)", text.stdout)
        self.assertIn("server   analysis 20 ms, planning 30 ms, execution 1210 ms, results 100 ms", text.stdout)
        self.assertRegex(text.stdout, r"compute\s+1000 ms\s+79\.4%")

    def test_usage_errors(self):
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("--bogus", YARN_APP).returncode, 2)
        help_result = run("--help")
        self.assertEqual(help_result.returncode, 0)
        self.assertIn("sparktrace.diagnose/1", help_result.stdout)


FAILED_JOB_APP = DATA / "spark-events" / "local-1422981780767"
FINDING_KEYS = {"id", "key", "severity", "scope", "title", "evidence", "impact_seconds", "fix", "recipe", "related",
                "suppressed"}


@needs_data
class DiagnoseFindingsTest(unittest.TestCase):
    def test_findings_in_text_after_the_phases(self):
        result = run(FAILED_JOB_APP)
        self.assertEqual(result.returncode, 0, result.stderr)  # findings are no error
        out = result.stdout
        self.assertRegex(out, r"findings \(1, most impactful first\)\n\s+1\. \[critical\] task-failures  application")
        self.assertLess(out.index("phases"), out.index("findings ("))
        self.assertIn("1 task attempts failed (1 ExceptionFailure java.lang.RuntimeException)", out)
        self.assertIn("recipe   docs/recipes/troubleshoot/slow-spark-jobs.md#task-failures", out)
        self.assertRegex(run(YARN_APP).stdout, r"\n  findings none\n")

    def test_findings_in_json(self):
        app = run_json(FAILED_JOB_APP)["applications"][0]
        self.assertEqual(len(app["findings"]), 1)
        finding = app["findings"][0]
        self.assertEqual(set(finding), FINDING_KEYS)
        self.assertEqual(finding["id"], "task-failures")
        self.assertEqual(finding["key"], "task-failures@application")
        self.assertEqual(finding["severity"], "critical")
        self.assertEqual(finding["scope"]["kind"], "application")
        self.assertEqual(finding["scope"]["app_id"], "local-1422981780767")
        evidence = {item["name"]: item for item in finding["evidence"]}
        self.assertEqual(evidence["failed_tasks"]["value"], 1)
        self.assertEqual(evidence["failed_tasks"]["threshold"], 1)
        self.assertEqual(evidence["failed_tasks"]["comparison"], ">=")
        self.assertEqual(evidence["failed_jobs"]["value"], 1)
        self.assertTrue(finding["fix"])
        self.assertEqual(run_json(YARN_APP)["applications"][0]["findings"], [])

    def test_rules_file_overrides_and_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            quiet = Path(tmp) / "quiet.yaml"
            quiet.write_text("task-failures:\n  enabled: false\n")
            self.assertEqual(run_json("--rules", quiet, FAILED_JOB_APP)["applications"][0]["findings"], [])
            stricter = Path(tmp) / "rules.json"
            stricter.write_text('{"task-failures": {"min_failed_tasks": 5}}')
            # A failed job still fires, whatever the task count.
            doc = run_json("--rules", stricter, FAILED_JOB_APP)
            self.assertEqual([f["id"] for f in doc["applications"][0]["findings"]], ["task-failures"])
            for text, wanted in (('{"task-failures": {"min_failed": 5}}', 'unknown key "task-failures.min_failed"'),
                                 ("gc-pressure:\n  min_gc_share: high\n", '"gc-pressure.min_gc_share": expected a number')):
                bad = Path(tmp) / "bad.rules"
                bad.write_text(text)
                result = run("--rules", bad, FAILED_JOB_APP)
                self.assertEqual(result.returncode, 2)
                self.assertIn(f"--rules: {bad}: {wanted}", result.stderr)
                self.assertEqual(result.stdout, "")
            missing = Path(tmp) / "missing.yaml"
            result = run("--rules", missing, FAILED_JOB_APP)
            self.assertEqual(result.returncode, 2)
            self.assertIn(str(missing), result.stderr)


    def test_suppressions_for_every_task_mute_findings_and_expired_ones_are_named(self):
        """An event log names no Airflow task: only dag "*" and task "*" suppressions apply here."""
        with tempfile.TemporaryDirectory() as tmp:
            rules = Path(tmp) / "rules.yaml"
            rules.write_text(
                "suppressions:\n"
                "  - {id: task-failures, dag: '*', task: '*', reason: 'known flaky source', until: '2099-12-31'}\n"
                "  - {id: '*', dag: '*', task: '*', reason: 'old', until: '2020-01-01'}\n"
                "  - {id: task-failures, dag: etl, task: '*', reason: 'needs a task', until: '2099-12-31'}\n")
            result = run("--json", "--rules", rules, FAILED_JOB_APP)
            self.assertEqual(result.returncode, 0, result.stderr)
            finding = json.loads(result.stdout)["applications"][0]["findings"][0]
            self.assertEqual(finding["id"], "task-failures")
            self.assertEqual(finding["suppressed"], {"reason": "known flaky source", "until": "2099-12-31"})
            self.assertIn("suppression #2 (* on dag *, task *) expired on 2020-01-01: ignored", result.stderr)
            text = run("--rules", rules, FAILED_JOB_APP).stdout
            self.assertIn("suppressed until 2099-12-31: known flaky source", text)
            # Without the file the same finding is not suppressed.
            self.assertIsNone(run_json(FAILED_JOB_APP)["applications"][0]["findings"][0]["suppressed"])


def executor_core_seconds_of(path):
    """The executors' core-seconds over the application's window, straight from the log's lines."""
    start = end = None
    added, removed = {}, {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerApplicationStart":
                start = event["Timestamp"]
            elif kind == "SparkListenerApplicationEnd":
                end = event["Timestamp"]
            elif kind == "SparkListenerExecutorAdded":
                added[event["Executor ID"]] = (event["Timestamp"], event["Executor Info"]["Total Cores"])
            elif kind == "SparkListenerExecutorRemoved":
                removed[event["Executor ID"]] = event["Timestamp"]
    total_ms = 0
    for executor, (at, cores) in added.items():
        alive_from, alive_to = max(at, start), min(removed.get(executor, end), end)
        total_ms += max(0, alive_to - alive_from) * cores
    return total_ms / 1000, (end - start) / 1000


@needs_data
class DiagnoseCostTest(unittest.TestCase):
    def test_cost_figures_match_the_log_and_prices_turn_them_into_money(self):
        executor_core_s, wall_s = executor_core_seconds_of(YARN_APP)
        app = run_json(YARN_APP)["applications"][0]
        cost = app["cost"]
        self.assertAlmostEqual(cost["executor_core_seconds"], executor_core_s, places=3)
        # The driver: spark.driver.cores (default 1) over the whole window.
        self.assertAlmostEqual(cost["driver_core_seconds"], wall_s, places=3)
        self.assertAlmostEqual(cost["core_seconds"], executor_core_s + wall_s, places=3)
        self.assertGreater(cost["used_core_seconds"], 0)
        self.assertLessEqual(cost["used_core_seconds"], executor_core_s)
        self.assertAlmostEqual(cost["idle_fraction"], 1 - cost["used_core_seconds"] / executor_core_s, places=6)
        self.assertGreater(cost["gib_seconds"], 0)
        self.assertIsNone(cost["money"])
        self.assertFalse(cost["shared"])

        priced = run_json("--cost-core-hour", "0.5", "--cost-gib-hour", "0.01", YARN_APP)["applications"][0]
        money = priced["cost"]["money"]
        self.assertAlmostEqual(money["cores"], cost["core_seconds"] / 3600 * 0.5, places=9)
        self.assertAlmostEqual(money["memory"], cost["gib_seconds"] / 3600 * 0.01, places=9)
        self.assertAlmostEqual(money["total"], money["cores"] + money["memory"], places=9)
        text = run("--cost-core-hour", "0.5", YARN_APP).stdout
        self.assertRegex(text, r"\n  cost     [0-9,]+ core-s allocated \([0-9,]+ used by tasks, [0-9]+% of the "
                               r"executors' idle\), [0-9,]+ GiB-s; [0-9.]+ in money")

    def test_rules_file_prices_apply_unless_a_flag_sets_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            rules = Path(tmp) / "rules.yaml"
            rules.write_text("cost: {core_hour: 2, gib_hour: 0}\n")
            cost = run_json("--rules", rules, YARN_APP)["applications"][0]["cost"]
            self.assertAlmostEqual(cost["money"]["cores"], cost["core_seconds"] / 3600 * 2, places=9)
            self.assertEqual(cost["money"]["core_hour"], 2)
            flagged = run_json("--rules", rules, "--cost-core-hour", "1", YARN_APP)["applications"][0]["cost"]
            self.assertEqual(flagged["money"]["core_hour"], 1)
            self.assertEqual(flagged["money"]["gib_hour"], 0)
            rules.write_text("cost: {core_hour: -2}\n")
            bad = run("--rules", rules, YARN_APP)
            self.assertEqual(bad.returncode, 2)
            self.assertIn('"cost.core_hour"', bad.stderr)
        bad_flag = run("--cost-gib-hour", "cheap", YARN_APP)
        self.assertEqual(bad_flag.returncode, 2)
        self.assertIn("--cost-gib-hour", bad_flag.stderr)

    def test_each_operation_is_costed_on_a_connect_server(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = generate_log(tmp, "--sessions", "2", "--operations", "6")
            app = run_json(log)["applications"][0]
            self.assertTrue(app["operations"])
            for operation in app["operations"]:
                cost = operation["cost"]
                self.assertIsNotNone(cost, operation["operation_id"])
                self.assertGreater(cost["core_seconds"], 0)
                self.assertGreater(cost["share"], 0)
                self.assertLessEqual(cost["share"], 1)
            # Two sessions at once share the server: at least one operation was split by task time.
            self.assertTrue(any(op["cost"]["shared"] for op in app["operations"]))
            self.assertTrue(all(op["cost"]["core_seconds"] < app["cost"]["core_seconds"] for op in app["operations"]))


def generate_log(directory, *flags):
    """A simulated Spark Connect server's event log (sparktrace sim generate-log), its path."""
    out = Path(directory) / f"log-{len(list(Path(directory).iterdir()))}"
    out.mkdir()
    result = subprocess.run([BIN, "sim", "generate-log", "--out-dir", str(out), *flags], capture_output=True,
                            text=True, timeout=TIMEOUT, check=True)
    return result.stdout.strip()


class DiagnoseWhatIfTest(unittest.TestCase):
    def test_estimates_for_another_executor_count_match_that_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            flags = ("--seed", "4", "--scenario", "slow-executor-allocation", "--strength", "0.5")
            small = run_json(generate_log(tmp, *flags))["applications"][0]
            large = run_json(generate_log(tmp, *flags, "--executors", "8"))["applications"][0]
            self.assertNotEqual(small["app_id"], large["app_id"])
            estimates = {e["name"]: e for e in small["what_if"]["estimates"]}
            self.assertEqual(small["what_if"]["anchoring"], "ratio")
            self.assertEqual(list(estimates)[0], "executors-ready")
            self.assertEqual({"executors-2", "executors-4", "executors-8", "executors-16"} - set(estimates), set())
            eight = estimates["executors-8"]
            self.assertEqual(eight["measured_ms"], small["window"]["duration_ms"])
            self.assertAlmostEqual(eight["saving_ms"], eight["measured_ms"] - eight["estimated_ms"], delta=1)
            self.assertIn("slow-spark-jobs", eight["answers"])
            # The 8-executor run, less its own wait for executors (the estimate has them from the start).
            truth = large["window"]["duration_ms"] - large["phases"]["resource_wait_ms"]
            self.assertLess(abs(eight["estimated_ms"] - truth) / truth, 0.15)
            self.assertTrue(all(op["what_if"] is None or op["what_if"]["estimates"] for op in small["operations"]))

    def test_text_prints_estimates_under_the_findings_they_answer(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = generate_log(tmp, "--seed", "2", "--scenario", "slow-executor-allocation", "--strength", "1")
            out = run(log).stdout
            finding = out.index("resource-wait-long  application")
            self.assertRegex(out[finding:], r"^resource-wait-long[^\n]*\n(?:\s{7}[^\n]*\n)*?\s{7}what if  with "
                             r"executors ready at the start: ~\d[^\n]* instead of \d")
            self.assertIn("  what if (simulated from the log's own tasks", out)

    @needs_data
    def test_real_log_with_late_executors(self):
        what_if = run_json(YARN_APP)["applications"][0]["what_if"]
        ready = what_if["estimates"][0]
        self.assertEqual(ready["name"], "executors-ready")
        self.assertAlmostEqual(ready["saving_ms"], 10310, delta=2)  # its wait for executors before its first job
        self.assertEqual(what_if["replay"]["jobs"], 3)
        # Spark 1.2 local mode: no executor events, so no slots to simulate.
        self.assertIsNone(run_json(DATA / "spark-events" / "local-1422981759269")["applications"][0]["what_if"])


class DiagnoseRegressionTest(unittest.TestCase):
    def test_a_run_much_slower_than_earlier_ones_of_its_name_is_a_regression(self):
        day_ms = 86_400_000
        with tempfile.TemporaryDirectory() as tmp:
            runs = [generate_log(tmp, "--seed", str(seed), "--start-ms", str(1_735_689_600_000 + seed * day_ms),
                                 "--app-id", f"spark-run-{seed}", "--app-name", "nightly etl")
                    for seed in (1, 2, 3)]
            slow = generate_log(tmp, "--seed", "4", "--start-ms", str(1_735_689_600_000 + 4 * day_ms),
                                "--app-id", "spark-run-4", "--app-name", "nightly etl",
                                "--scenario", "slow-executor-allocation", "--strength", "1")
            apps = {app["app_id"]: app for app in run_json("--regressions", *runs, slow)["applications"]}
            regressions = {app_id: [f for f in app["findings"] if f["id"] == "regression"]
                           for app_id, app in apps.items()}
            self.assertEqual([len(regressions[f"spark-run-{seed}"]) for seed in (1, 2, 3)], [0, 0, 0])
            self.assertEqual(len(regressions["spark-run-4"]), 1, apps["spark-run-4"]["findings"])
            finding = regressions["spark-run-4"][0]
            self.assertIn("resource wait grew most", finding["title"])
            medians = sorted(apps[f"spark-run-{seed}"]["window"]["duration_ms"] for seed in (1, 2, 3))
            evidence = {item["name"]: item["value"] for item in finding["evidence"]}
            self.assertEqual(evidence["baseline_median_ms"], medians[1])
            self.assertEqual(evidence["baseline_runs"], 3)
            self.assertAlmostEqual(finding["impact_seconds"],
                                   (apps["spark-run-4"]["window"]["duration_ms"] - medians[1]) / 1000, places=2)
            self.assertEqual(finding["recipe"], "troubleshoot/regression.md")
            # Without --regressions, logs are not compared.
            self.assertFalse(any(f["id"] == "regression" for app in run_json(*runs, slow)["applications"]
                                 for f in app["findings"]))


if __name__ == "__main__":
    unittest.main()
