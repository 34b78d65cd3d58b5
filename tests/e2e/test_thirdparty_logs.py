"""`sparktrace diagnose` against the answers other tools assert on 16 real third-party event logs.

The logs and those answers are in $SPARKTRACE_DATA_DIR (default <repo>/../shared/data):
spark-events-thirdparty/ and README-thirdparty.md. The comparison, log by log, with the reason for
every difference, is docs/thirdparty-logs.md.

Where an expected value comes from:
  * README-thirdparty.md: each figure is read out of a sentence quoted from it (FACTS below), and
    every quote is checked to be in the README, so a figure cannot drift from its source;
  * the tools' own expectation files listed there (rapids' apps_summary.csv, Sparklens' dump);
  * this file's own reading of the raw log (RawLog: Python's json over the lines; the two .zstd
    logs through the `zstd -dc` command, there being no zstd module in the standard library),
    with sparktrace's documented definitions re-implemented here (documented_phases: the phase
    rules of listener/correlate/phases.h; stage times as listener/correlate/application_model.cc
    documents them; task-duration quantiles by nearest rank). Nothing is copied from
    sparktrace's own output.
Where a tool defines a figure differently from sparktrace (sparklint's idle time, Sparklens' stage
span, the README's driver-less "wait"), the tool's figure is checked against the raw log with the
tool's definition and sparktrace's against the raw log with sparktrace's, and the difference is
written down in docs/thirdparty-logs.md; agreement is not forced.

Every log here is a finished file: an application with its ApplicationEnd "ended", one without
"truncated" (its unended jobs and stages "unknown"), checked against the raw log.

Stdlib only. Binary: $SPARKTRACE_BIN (default build/sparktrace). Every test is skipped when the
third-party logs are absent.
"""

import csv
import json
import math
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import deadline

deadline.install()  # the per-test deadline and dump the other modules get from harness

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("SPARKTRACE_BIN") or str(HERE.parents[1] / "build" / "sparktrace")
DATA = Path(os.environ.get("SPARKTRACE_DATA_DIR") or HERE.parents[2] / "shared" / "data")
THIRD = DATA / "spark-events-thirdparty"
README = DATA / "README-thirdparty.md"
TIMEOUT = 60  # seconds per sparktrace run; each of these logs takes well under one

LOGS = {
    "kubeflow_pi": "kubeflow-mcp-shs/eventlog_v2_spark-bcec39f6201b42b9925124595baad260",
    "kubeflow_taxi_110be": "kubeflow-mcp-shs/eventlog_v2_spark-110be3a8424d4a2789cb88134418217b",
    "kubeflow_taxi_cc4d": "kubeflow-mcp-shs/eventlog_v2_spark-cc4d115f011443d787f03a71a476a745",
    "emr_shell": "aws-emr-advisor/job_spark_shell",
    "rapids_java_udf": "rapids/java_udf_eventlog",
    "rapids_no_app_start": "rapids/incorrect_app_status_eventlog.zstd",
    "rapids_streaming": "rapids/streaming_eventlog.zstd",
    "rapids_driver_only": "rapids/eventlog_driver_only",
    "rapids_empty": "rapids/empty_eventlog",
    "sparkscope_stages": "sparkscope/app-20231122115433-0000-eventLog-finished-stages",
    "sparkscope_exec_removed": "sparkscope/app-20231025121456-0004-eventLog-finished-exec-removed",
    "sparkscope_incomplete": "sparkscope/app-20231025121456-0004-eventLog-running-incomplete",
    "sparkscope_corrupted": "sparkscope/app-20231122115433-0000-eventLog-corrupted-events",
    "sparklens": "sparklens/local-1532512550423",
    "sparklint": "sparklint/spark_event_log_example",
    "dr_elephant": "dr-elephant/event_log_1",
}

# Figures from README-thirdparty.md: (sentence quoted from it, regex whose group 1 is the figure).
def facts_in(sentence, **patterns):
    """{figure: (sentence, pattern)} for the figures read out of one sentence quoted from it."""
    return {name: (sentence, pattern) for name, pattern in patterns.items()}


FACTS = {
    "kubeflow_pi": {
        **facts_in('PythonPi: 1 job, 1 stage, 2 tasks, 1 executor, wait 5.4 s',
                   jobs=r"(\d+) job",
                   stages=r"(\d+) stage",
                   tasks=r"(\d+) tasks",
                   executors=r"(\d+) executor",
                   wait_s=r"wait ([\d.]+) s"),
    },
    "kubeflow_taxi_110be": {
        **facts_in('NewYorkTaxiData job on K8s: 6 jobs, 6 stages, 39 tasks',
                   jobs=r"(\d+) jobs",
                   stages=r"(\d+) stages",
                   tasks=r"(\d+) tasks"),
        **facts_in('4 executors added; **wait 69.3 s**',
                   executors=r"(\d+) executors",
                   wait_s=r"wait ([\d.]+) s"),
        **facts_in('39 tasks, 3 SQL executions with AQE updates',
                   sql=r"(\d+) SQL"),
    },
    "kubeflow_taxi_cc4d": {
        **facts_in('6 jobs, 73 tasks, 3 SQL, 4 executors; **wait 64.0 s**; 508.6 s app',
                   jobs=r"(\d+) jobs",
                   tasks=r"(\d+) tasks",
                   executors=r"(\d+) executors",
                   wait_s=r"wait ([\d.]+) s",
                   app_s=r"([\d.]+) s app",
                   sql=r"(\d+) SQL"),
    },
    "emr_shell": {
        **facts_in('2 jobs × 8 tasks',
                   jobs=r"(\d+) jobs",
                   tasks_per_job=r"× (\d+) tasks"),
        **facts_in('executorsLaunched=1',
                   executors=r"=(\d+)"),
        **facts_in('totalTasksProcessed=16',
                   total_tasks=r"=(\d+)"),
        **facts_in('diskBytesSpilled=0',
                   disk_spilled=r"=(\d+)"),
        **facts_in('1 executor with 4 cores; wait 17.7 s',
                   wait_s=r"wait ([\d.]+) s"),
        **facts_in('real job duration 4 min',
                   job_minutes=r"(\d+) min"),
    },
    "rapids_java_udf": {
        **facts_in('2 jobs, 2 tasks, 3 SQL executions',
                   jobs=r"(\d+) jobs",
                   tasks=r"(\d+) tasks"),
        **facts_in('sql_id 2, stage 1',
                   udf_sql_id=r"sql_id (\d+)",
                   udf_stage=r"stage (\d+)"),
        **facts_in('**app_task_duration_ms = 176**',
                   app_task_duration_ms=r"= (\d+)"),
    },
    "rapids_driver_only": {
        **facts_in('(0 `ExecutorAdded`), 3 jobs, 3 tasks, 2 SQL, 355.6 s app',
                   executors=r"\((\d+) `ExecutorAdded`",
                   jobs=r"(\d+) jobs",
                   tasks=r"(\d+) tasks",
                   app_s=r"([\d.]+) s app"),
    },
    "rapids_empty": {
        **facts_in('**no jobs at all** (7 events), 22.9 s',
                   events=r"\((\d+) events\)",
                   app_s=r"([\d.]+) s$"),
    },
    "sparkscope_stages": {
        **facts_in('exactly 10 stage timelines, e.g. stage 0 = 1700654082972→1700654087848 with 2 tasks; stage 3 = 20 tasks, parent 2',
                   timelines=r"exactly (\d+) stage"),
        **facts_in('stage 0 = 1700654082972→1700654087848 with 2 tasks',
                   stage0_start=r"= (\d+)→",
                   stage0_end=r"→(\d+)",
                   stage0_tasks=r"with (\d+) tasks"),
        **facts_in('stage 3 = 20 tasks, parent 2',
                   stage3_tasks=r"= (\d+) tasks",
                   stage3_parent=r"parent (\d+)"),
    },
    "sparkscope_exec_removed": {
        **facts_in('2 ExecutorAdded, 2 TaskEnd, 2 ExecutorRemoved; GC time sum 11 ms (max 11, mean 5.5); spill 0',
                   added=r"(\d+) ExecutorAdded"),
        **facts_in('2 ExecutorAdded, 2 TaskEnd, 2 ExecutorRemoved',
                   task_ends=r"(\d+) TaskEnd",
                   removed=r"(\d+) ExecutorRemoved"),
        **facts_in('GC time sum 11 ms (max 11, mean 5.5); spill 0',
                   gc_sum_ms=r"sum (\d+) ms",
                   spill=r"spill (\d+)"),
    },
    "sparkscope_incomplete": {
        **facts_in('1 JobStart, 1 TaskEnd, 0 JobEnd, 0 ApplicationEnd',
                   job_starts=r"(\d+) JobStart",
                   task_ends=r"(\d+) TaskEnd",
                   job_ends=r"(\d+) JobEnd",
                   app_ends=r"(\d+) ApplicationEnd"),
    },
    "sparkscope_corrupted": {
        **facts_in('corrupted events ignored: 9 stage timelines',
                   timelines=r"(\d+) stage timelines"),
        **facts_in('executorMap has 1 executor ("1", start 1700654079478, no end, 2 cores)',
                   executors=r"has (\d+) executor",
                   executor_id='\\("(\\w+)"',
                   executor_start=r"start (\d+)"),
    },
    "sparklens": {
        **facts_in('spark-shell, 2 jobs, 8 tasks',
                   jobs=r"(\d+) jobs",
                   tasks=r"(\d+) tasks"),
    },
    "sparklint": {
        **facts_in('YARN, 3 jobs, 204 tasks, 3 executors',
                   jobs=r"(\d+) jobs",
                   tasks=r"(\d+) tasks",
                   executors=r"(\d+) executors"),
        **facts_in('**time until first task = 102,096 ms** (1466087848562 − 1466087746466)',
                   first_task_ms=r"= ([\d,]+) ms"),
        **facts_in('(1466087848562 − 1466087746466)',
                   first_task_at=r"\((\d+) −"),
        **facts_in('max allocated cores 6',
                   max_cores=r"cores (\d+)"),
    },
    "dr_elephant": {
        **facts_in('YARN PythonPi, 1 job, 10 tasks, 2 executors; wait 43.3 s',
                   jobs=r"(\d+) job",
                   tasks=r"(\d+) tasks",
                   executors=r"(\d+) executors",
                   wait_s=r"wait ([\d.]+) s"),
    },
}

# The README rounds times to 0.1 s: a figure within half of that agrees.
README_ROUNDING_MS = 50

PHASES = ("resource_wait_ms", "compute_ms", "io_write_ms", "idle_ms")

_readme_text = None


def fact(log, name):
    """The figure `name` of `log`, read out of its sentence in README-thirdparty.md."""
    global _readme_text
    if _readme_text is None:
        _readme_text = README.read_text(encoding="utf-8")
    quote, pattern = FACTS[log][name]
    if quote not in _readme_text:
        raise AssertionError(f"README-thirdparty.md no longer says {quote!r}")
    match = re.search(pattern, quote)
    if not match:
        raise AssertionError(f"{pattern!r} finds nothing in {quote!r}")
    text = match.group(1).replace(",", "")
    if re.fullmatch(r"\d+", text):
        return int(text)
    if re.fullmatch(r"\d+\.\d+", text):
        return float(text)
    return text


# ---- The raw log, read by this test ----------------------------------------------------------

def read_log_text(path):
    """Every line of a log (a file, a .zstd file, or a rolling eventlog_v2_ directory), in order."""
    path = Path(path)
    if path.is_dir():
        parts = sorted((p for p in path.iterdir() if p.name.startswith("events_")),
                       key=lambda p: int(p.name.split("_")[1]))
        lines = []
        for part in parts:
            lines += read_log_text(part)
        return lines
    if path.name.endswith(".zstd"):
        data = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True,
                              timeout=TIMEOUT).stdout
    else:
        data = path.read_bytes()
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


# Fields sparktrace's parser requires (listener/events/core_event_readers.cc: a line without them
# is malformed), for the event types this test relies on.
REQUIRED = {
    "SparkListenerApplicationStart": ("Timestamp",),
    "SparkListenerApplicationEnd": ("Timestamp",),
    "SparkListenerExecutorAdded": ("Timestamp", "Executor ID"),
    "SparkListenerExecutorRemoved": ("Timestamp", "Executor ID"),
    "SparkListenerJobStart": ("Job ID",),
    "SparkListenerJobEnd": ("Job ID", "Job Result"),
    "SparkListenerStageSubmitted": ("Stage Info",),
    "SparkListenerStageCompleted": ("Stage Info",),
}


def has_required(event):
    kind = event.get("Event")
    if any(key not in event for key in REQUIRED.get(kind, ())):
        return False
    if kind in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
        return "Stage ID" in event["Stage Info"]
    return True


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


class RawLog:
    """What the log's lines say, read with Python's json module."""

    TIME_KEYS = ("Timestamp", "Submission Time", "Completion Time", "time", "eventTime")

    def __init__(self, path):
        self.lines = read_log_text(path)
        self.nonblank = sum(1 for line in self.lines if line.strip())
        self.events = []          # every JSON object with an "Event", in order
        self.bad_json = 0         # non-blank lines that are not JSON
        self.missing_required = []  # line numbers of events without a field the parser requires
        for number, line in enumerate(self.lines, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                self.bad_json += 1
                continue
            if not isinstance(event, dict) or "Event" not in event:
                self.bad_json += 1
                continue
            if not has_required(event):
                self.missing_required.append(number)
                continue
            self.events.append(event)
        self.counts = {}
        for event in self.events:
            self.counts[event["Event"]] = self.counts.get(event["Event"], 0) + 1
        self._model()

    def count(self, kind):
        return self.counts.get(kind, 0)

    def of(self, kind):
        return [event for event in self.events if event["Event"] == kind]

    def _model(self):
        self.app_start = self.app_end = None
        self.latest = None
        self.executors = []   # [id, added, removed], in order of ExecutorAdded
        self.jobs = {}        # id -> {submission, completion, status, stage_ids, sql}
        self.stages = {}      # (id, attempt) -> record
        for event in self.events:
            kind = event["Event"]
            for value in self._times(event):
                self.latest = value if self.latest is None else max(self.latest, value)
            if kind == "SparkListenerApplicationStart" and self.app_start is None:
                self.app_start = event["Timestamp"]
            elif kind == "SparkListenerApplicationEnd":
                self.app_end = event["Timestamp"]
            elif kind == "SparkListenerExecutorAdded":
                self.executors.append([event["Executor ID"], event["Timestamp"], None])
            elif kind == "SparkListenerExecutorRemoved":
                # The latest live executor of that id; a removal of one never added is ignored.
                for executor in reversed(self.executors):
                    if executor[0] == event["Executor ID"] and executor[2] is None:
                        executor[2] = event["Timestamp"]
                        break
            elif kind == "SparkListenerJobStart":
                sql = (event.get("Properties") or {}).get("spark.sql.execution.id")
                self.jobs[event["Job ID"]] = {"submission": event.get("Submission Time"), "completion": None,
                                              "status": "running", "stage_ids": event.get("Stage IDs", []),
                                              "sql": int(sql) if sql is not None else None}
            elif kind == "SparkListenerJobEnd":
                job = self.jobs.setdefault(event["Job ID"], {"submission": None, "stage_ids": [], "sql": None})
                job["completion"] = event.get("Completion Time")
                result = event["Job Result"].get("Result")
                job["status"] = "succeeded" if result == "JobSucceeded" else "failed"
            elif kind in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
                info = event["Stage Info"]
                stage = self._stage(info["Stage ID"], info.get("Stage Attempt ID", 0))
                stage["num_tasks"] = info.get("Number of Tasks", 0)
                if info.get("Parent IDs") is not None:
                    stage["parents"] = info["Parent IDs"]
                if info.get("Submission Time") is not None:
                    stage["submission"] = info["Submission Time"]
                if kind == "SparkListenerStageCompleted":
                    # application_model.cc: without a Completion Time, the last task's end, else
                    # the submission, bounds the stage.
                    stage["completed"] = True
                    stage["failure"] = info.get("Failure Reason")
                    stage["completion"] = (info.get("Completion Time") or stage["last_finish"]
                                           or stage["submission"])
            elif kind == "SparkListenerTaskEnd":
                stage = self._stage(event["Stage ID"], event.get("Stage Attempt ID", 0))
                stage["task_ends"].append(event)
                info = event.get("Task Info", {})
                launch, finish = info.get("Launch Time", 0), info.get("Finish Time", 0)
                if launch > 0:
                    stage["first_launch"] = min(filter(None, (stage["first_launch"], launch)))
                if finish > 0:
                    stage["last_finish"] = max(filter(None, (stage["last_finish"], finish)))
        for stage in self.stages.values():
            stage["start"] = stage["submission"] if stage["submission"] is not None else stage["first_launch"]

    def _times(self, event):
        for key in self.TIME_KEYS:
            if isinstance(event.get(key), int) and event[key] > 0:
                yield event[key]
        for key in ("Submission Time", "Completion Time"):
            value = (event.get("Stage Info") or {}).get(key)
            if isinstance(value, int) and value > 0:
                yield value
        if event["Event"] == "SparkListenerTaskEnd":
            value = (event.get("Task Info") or {}).get("Finish Time")
            if isinstance(value, int) and value > 0:
                yield value

    def _stage(self, stage_id, attempt):
        return self.stages.setdefault((stage_id, attempt), {
            "num_tasks": 0, "parents": [], "submission": None, "completed": False, "failure": None, "completion": None,
            "first_launch": None, "last_finish": None, "task_ends": []})

    # -- figures derived with sparktrace's documented definitions --

    def task_ends(self):
        return sum(len(stage["task_ends"]) for stage in self.stages.values())

    def wait_for_first_non_driver_executor(self):
        """README-thirdparty.md's "wait": ApplicationStart → first non-driver ExecutorAdded."""
        added = [added for executor_id, added, _ in self.executors if executor_id != "driver"]
        return min(added) - self.app_start if added and self.app_start is not None else None

    def application_status(self):
        """Every log here is a finished file (none is .inprogress): with its ApplicationEnd it ended,
        without one it was cut short and nothing more will come."""
        return "ended" if self.app_end is not None else "truncated"

    def unended_status(self):
        """A job or stage without its end event in a log that will not say more: not "running"."""
        return "unknown"

    def window(self):
        if self.app_start is None:
            return None
        end = self.app_end if self.app_end is not None else (self.latest or self.app_start)
        return self.app_start, max(end, self.app_start)

    def stage_figures(self, key):
        stage = self.stages[key]
        successful, failed, output, memory_spilled, disk_spilled = [], 0, 0, 0, 0
        for task in stage["task_ends"]:
            info = task.get("Task Info", {})
            reason = (task.get("Task End Reason") or {}).get("Reason", "Success")
            if reason not in ("Success", "Resubmitted", "TaskKilled", "TaskCommitDenied") and not info.get("Killed"):
                failed += 1
            launch, finish = info.get("Launch Time", 0), info.get("Finish Time", 0)
            if (reason == "Success" and not info.get("Failed") and not info.get("Killed") and launch > 0
                    and finish > 0):
                successful.append(max(0, finish - launch))
            metrics = task.get("Task Metrics") or {}
            output += (metrics.get("Output Metrics") or {}).get("Bytes Written", 0)
            memory_spilled += metrics.get("Memory Bytes Spilled", 0)
            disk_spilled += metrics.get("Disk Bytes Spilled", 0)
        start, completion = stage["start"], stage["completion"]
        status = "failed" if stage["failure"] else "complete" if stage["completed"] else self.unended_status()
        return {
            "status": status, "start_ms": start, "completion_ms": completion,
            "duration_ms": completion - start if start is not None and completion is not None else None,
            "num_tasks": stage["num_tasks"], "tasks_ended": len(stage["task_ends"]), "failed_tasks": failed,
            "task_duration_ms": {"p50": nearest_rank(successful, 0.5), "p95": nearest_rank(successful, 0.95),
                                 "max": max(successful)} if successful else None,
            "output_bytes": output, "memory_spilled_bytes": memory_spilled, "disk_spilled_bytes": disk_spilled,
        }

    def gc_by_stage(self):
        """Σ JVM GC Time of the TaskEnds, per stage attempt that has any."""
        return {key: sum((task.get("Task Metrics") or {}).get("JVM GC Time", 0) for task in stage["task_ends"])
                for key, stage in self.stages.items() if stage["task_ends"]}

    def writes_output(self, stage):
        for task in stage["task_ends"]:
            out = ((task.get("Task Metrics") or {}).get("Output Metrics") or {})
            if out.get("Bytes Written", 0) > 0 or out.get("Records Written", 0) > 0:
                return True
        return False

    def documented_phases(self):
        """The application's phases by listener/correlate/phases.h, computed here from the raw events.

        resource_wait: before the first ExecutorAdded (any executor, "driver" included), or a stage
        running while no executor is alive (only when the log has any ExecutorAdded at all);
        io_write: a running stage whose tasks report output bytes or records; compute: some stage
        running; idle: the rest. A stage runs from its submission (else first task launch) to its
        completion, or to the window's end when it never completed.
        """
        window = self.window()
        if window is None:
            return None
        t0, t1 = window
        clip = lambda t: min(max(t, t0), t1)  # noqa: E731
        runs = []
        for stage in self.stages.values():
            start = stage["start"]
            if start is None:
                continue
            end = stage["completion"] if stage["completion"] is not None else t1
            if end < start or end < t0 or start > t1:
                continue
            runs.append((clip(start), clip(end), self.writes_output(stage)))
        known = bool(self.executors)
        lives = [(clip(added), clip(removed) if removed is not None and removed <= t1 else None)
                 for _, added, removed in self.executors if added <= t1]
        first = min(added for _, added, _ in self.executors) if known else None
        waits = known and first > self.app_start
        points = {t0, t1}
        if waits:
            points.add(clip(first))
        for start, end, _ in runs:
            points |= {start, end}
        for added, removed in lives:
            points.add(added)
            if removed is not None:
                points.add(removed)
        points = sorted(points)
        totals = dict.fromkeys(PHASES, 0)
        for a, b in zip(points, points[1:]):
            running = [run for run in runs if run[0] <= a < run[1]]
            live = sum(1 for added, removed in lives if added <= a and (removed is None or a < removed))
            if waits and a < first:
                phase = "resource_wait_ms"
            elif known and running and live <= 0:
                phase = "resource_wait_ms"
            elif any(writes for _, _, writes in running):
                phase = "io_write_ms"
            elif running:
                phase = "compute_ms"
            else:
                phase = "idle_ms"
            totals[phase] += b - a
        return totals


# ---- sparktrace -------------------------------------------------------------------------------

def run_diagnose(*args):
    return subprocess.run([BIN, "diagnose", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


needs_data = unittest.skipUnless(THIRD.is_dir() and README.is_file(), f"no third-party event logs under {DATA}")


@needs_data
class ThirdPartyLogsTest(unittest.TestCase):
    maxDiff = None
    _runs = {}
    _raw = {}

    def diagnose(self, log):
        """(the one application's JSON, the whole document) of `sparktrace diagnose --json LOG`."""
        if log not in self._runs:
            result = run_diagnose("--json", THIRD / LOGS[log])
            # Documented: exit 0 with or without findings; 1 only when an input cannot be read.
            self.assertEqual(result.returncode, 0, f"{log}: {result.stderr}")
            doc = json.loads(result.stdout)
            self.assertEqual(doc["schema"], "sparktrace.diagnose/1")
            self.assertEqual(doc["errors"], [], log)
            self.assertEqual(len(doc["applications"]), 1, log)
            self._runs[log] = (doc["applications"][0], doc)
        return self._runs[log][0]

    def run_text(self, log):
        """`sparktrace diagnose LOG` as the text a user reads."""
        result = run_diagnose(THIRD / LOGS[log])
        self.assertEqual(result.returncode, 0, f"{log}: {result.stderr}")
        return result.stdout

    def raw(self, log):
        if log not in self._raw:
            self._raw[log] = RawLog(THIRD / LOGS[log])
        return self._raw[log]

    def stages(self, app):
        return {(stage["stage_id"], stage["attempt_id"]): stage for job in app["jobs"] for stage in job["stages"]}

    def assert_agrees_with_raw(self, log):
        """Everything the JSON shows of `log` against the raw log read here; returns (app, raw)."""
        app, raw = self.diagnose(log), self.raw(log)
        with self.subTest(log=log, what="jobs"):
            self.assertEqual([job["job_id"] for job in app["jobs"]], sorted(raw.jobs))
            for job in app["jobs"]:
                expected = raw.jobs[job["job_id"]]
                status = raw.unended_status() if expected["status"] == "running" else expected["status"]
                self.assertEqual((job["status"], job["submission_ms"], job["completion_ms"], job["sql_execution_id"]),
                                 (status, expected["submission"], expected["completion"], expected["sql"]),
                                 f"job {job['job_id']}")
        with self.subTest(log=log, what="status"):
            self.assertEqual(app["status"], raw.application_status())
            self.assertEqual(app["log"]["state"], "complete", "the file")
        with self.subTest(log=log, what="stages"):
            job_stage_ids = {stage_id for job in raw.jobs.values() for stage_id in job["stage_ids"]}
            visible = {key for key in raw.stages if key[0] in job_stage_ids}
            stages = self.stages(app)
            self.assertEqual(sorted(stages), sorted(visible))
            for key, stage in stages.items():
                shown = {name: stage[name] for name in raw.stage_figures(key)}
                self.assertEqual(shown, raw.stage_figures(key), f"stage {key}")
        with self.subTest(log=log, what="executors"):
            self.assertEqual(app["executors"], {"added": len(raw.executors),
                                                "removed": sum(1 for e in raw.executors if e[2] is not None)})
        with self.subTest(log=log, what="window and phases"):
            window = raw.window()
            if window is None:
                self.assertIsNone(app["window"])
                self.assertIsNone(app["phases"])
            else:
                self.assertEqual(app["window"], {"start_ms": window[0], "end_ms": window[1],
                                                 "duration_ms": window[1] - window[0]})
                self.assertEqual(app["phases"], raw.documented_phases())
        self.assertEqual(app["operations"], [], "none of these logs comes from a Spark Connect server")
        return app, raw

    def assert_wait(self, log):
        """README's "wait" (ApplicationStart → first non-driver executor) against resource_wait."""
        app, raw = self.diagnose(log), self.raw(log)
        readme_ms = fact(log, "wait_s") * 1000
        self.assertLessEqual(abs(raw.wait_for_first_non_driver_executor() - readme_ms), README_ROUNDING_MS,
                             "the raw log against the README")
        self.assertLessEqual(abs(app["phases"]["resource_wait_ms"] - readme_ms), README_ROUNDING_MS)

    def visible_task_ends(self, app):
        return sum(stage["tasks_ended"] for stage in self.stages(app).values())

    # ---- the logs ----

    def test_every_log_is_covered(self):
        found = {str(p.relative_to(THIRD)) for p in THIRD.glob("*/*")
                 if "expectations" not in p.parts and not p.name.endswith(".sparklens.json")}
        self.assertEqual(found, set(LOGS.values()))
        self.assertEqual(len(LOGS), 16)

    def test_every_quoted_figure_is_in_the_readme(self):
        for log, figures in FACTS.items():
            for name in figures:
                with self.subTest(log=log, figure=name):
                    fact(log, name)

    def test_kubeflow_pi(self):
        app, raw = self.assert_agrees_with_raw("kubeflow_pi")
        self.assertEqual(len(app["jobs"]), fact("kubeflow_pi", "jobs"))
        self.assertEqual(len(self.stages(app)), fact("kubeflow_pi", "stages"))
        self.assertEqual(self.visible_task_ends(app), fact("kubeflow_pi", "tasks"))
        self.assertEqual(app["executors"]["added"], fact("kubeflow_pi", "executors"))
        self.assert_wait("kubeflow_pi")
        self.assertEqual(app["findings"], [], "a 7 s PythonPi: 5.4 s of wait is under every floor")

    def test_kubeflow_taxi_runs(self):
        for log in ("kubeflow_taxi_110be", "kubeflow_taxi_cc4d"):
            with self.subTest(log=log):
                app, raw = self.assert_agrees_with_raw(log)
                self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
                self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
                self.assertEqual(raw.task_ends(), fact(log, "tasks"))
                self.assertEqual(app["executors"]["added"], fact(log, "executors"))
                self.assert_wait(log)
                # SQL executions: the README counts SQLExecutionStart events, the JSON shows the
                # execution of each job; here every execution ran jobs, so the two counts meet.
                self.assertEqual(raw.count("org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"),
                                 fact(log, "sql"))
                self.assertEqual(len({job["sql_execution_id"] for job in app["jobs"]} - {None}), fact(log, "sql"))
        self.assertEqual(len(self.stages(self.diagnose("kubeflow_taxi_110be"))), fact("kubeflow_taxi_110be", "stages"))
        cc4d = self.diagnose("kubeflow_taxi_cc4d")
        self.assertLessEqual(abs(cc4d["window"]["duration_ms"] - fact("kubeflow_taxi_cc4d", "app_s") * 1000),
                             README_ROUNDING_MS)

    def test_emr_shell(self):
        log = "emr_shell"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        for job in app["jobs"]:
            self.assertEqual(sum(stage["tasks_ended"] for stage in job["stages"]), fact(log, "tasks_per_job"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "total_tasks"))
        self.assertEqual(app["executors"]["added"], fact(log, "executors"))
        self.assertEqual(sum(s["disk_spilled_bytes"] for s in self.stages(app).values()), fact(log, "disk_spilled"))
        self.assert_wait(log)
        # "real job duration 4 min": the two jobs' wall time, to the minute.
        minutes = sum(job["duration_ms"] for job in app["jobs"]) / 60000
        self.assertEqual(round(minutes), fact(log, "job_minutes"))

    def test_rapids_java_udf(self):
        log = "rapids_java_udf"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
        # The UDF runs in SQL execution 2, stage 1; rapids' app task duration (176 ms) is the task
        # time of the SQL executions' stages: here that one stage's one task.
        sql_jobs = [job for job in app["jobs"] if job["sql_execution_id"] is not None]
        self.assertEqual([job["sql_execution_id"] for job in sql_jobs], [fact(log, "udf_sql_id")])
        (stage,) = sql_jobs[0]["stages"]
        self.assertEqual(stage["stage_id"], fact(log, "udf_stage"))
        self.assertEqual(stage["tasks_ended"], 1)
        self.assertEqual(stage["task_duration_ms"]["max"], fact(log, "app_task_duration_ms"))
        # Local mode: sparktrace's resource_wait ends at the driver's ExecutorAdded; README's "wait"
        # (non-driver executors) is undefined here.
        self.assertIsNone(raw.wait_for_first_non_driver_executor())
        self.assertEqual([e[0] for e in raw.executors], ["driver"])
        self.assertEqual(app["phases"]["resource_wait_ms"], raw.executors[0][1] - raw.app_start)

    def test_rapids_log_without_application_start(self):
        log = "rapids_no_app_start"
        raw = self.raw(log)
        self.assertEqual(raw.count("SparkListenerApplicationStart"), 0)
        self.assertEqual(raw.count("SparkListenerApplicationEnd"), 1)
        # rapids raises "Missing AppInfo"; sparktrace's documented answer: the application is read
        # (jobs, stages, executors) with window and phases null, exit 0, no error.
        app, _ = self.assert_agrees_with_raw(log)
        self.assertIsNone(app["window"])
        self.assertIsNone(app["phases"])
        self.assertEqual(app["app_id"], "")
        self.assertEqual(app["findings"], [])
        text = run_diagnose(THIRD / LOGS[log])
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("no start event", text.stdout)

    def test_rapids_streaming_log_is_analysed(self):
        log = "rapids_streaming"
        app, raw = self.assert_agrees_with_raw(log)
        # rapids skips Structured Streaming applications; sparktrace reads their batch jobs and
        # counts the streaming events as ignored, by type.
        streaming = {kind: n for kind, n in raw.counts.items() if "StreamingQueryListener" in kind}
        self.assertEqual(len(streaming), 3)
        for kind, n in streaming.items():
            self.assertEqual(app["log"]["ignored_event_types"].get(kind), n, kind)
        self.assertEqual(len(app["jobs"]), raw.count("SparkListenerJobStart"))

    def test_rapids_driver_only(self):
        log = "rapids_driver_only"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(app["executors"], {"added": fact(log, "executors"), "removed": 0})
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
        self.assertLessEqual(abs(app["window"]["duration_ms"] - fact(log, "app_s") * 1000), README_ROUNDING_MS)
        # phases.h: a log without any ExecutorAdded has no executor information, so nothing is
        # resource_wait (rapids: cluster information None).
        self.assertEqual(app["phases"]["resource_wait_ms"], 0)

    def test_rapids_empty_log(self):
        log = "rapids_empty"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(raw.nonblank, fact(log, "events"))
        self.assertEqual(app["log"]["lines"], fact(log, "events"))
        self.assertEqual(app["jobs"], [])
        with open(THIRD / "rapids/expectations/empty_eventlog/apps_summary.csv", newline="", encoding="utf-8") as f:
            (summary,) = list(csv.DictReader(f))
        self.assertEqual(summary["App ID"], app["app_id"])
        self.assertEqual(app["window"]["duration_ms"], int(summary["App Duration"]))
        self.assertLessEqual(abs(app["window"]["duration_ms"] - fact(log, "app_s") * 1000), README_ROUNDING_MS)
        self.assertEqual((app["phases"]["compute_ms"], app["phases"]["io_write_ms"]), (0, 0))
        self.assertEqual(app["findings"], [])

    def test_sparkscope_finished_stages(self):
        log = "sparkscope_stages"
        app, raw = self.assert_agrees_with_raw(log)
        # sparkscope's 10 stage timelines, read here from the raw events.
        self.assertEqual(len(raw.stages), fact(log, "timelines"))
        stage0, stage3 = raw.stages[(0, 0)], raw.stages[(3, 0)]
        self.assertEqual((stage0["start"], stage0["completion"], stage0["num_tasks"]),
                         (fact(log, "stage0_start"), fact(log, "stage0_end"), fact(log, "stage0_tasks")))
        self.assertEqual((stage3["num_tasks"], stage3["parents"]),
                         (fact(log, "stage3_tasks"), [fact(log, "stage3_parent")]))
        # The log has no JobStart, and the JSON lists stages only under their jobs: the 10 stages
        # are not in it (docs/thirdparty-logs.md); they do make the phases, which
        # assert_agrees_with_raw checked against the union of the raw timelines.
        self.assertEqual(raw.count("SparkListenerJobStart"), 0)
        self.assertEqual(app["jobs"], [])
        self.assertGreater(app["phases"]["compute_ms"], 0)

    def test_sparkscope_exec_removed(self):
        log = "sparkscope_exec_removed"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(raw.count("SparkListenerExecutorAdded"), fact(log, "added"))
        self.assertEqual(raw.count("SparkListenerTaskEnd"), fact(log, "task_ends"))
        self.assertEqual(app["executors"], {"added": fact(log, "added"), "removed": fact(log, "removed")})
        self.assertEqual(sum(s["memory_spilled_bytes"] + s["disk_spilled_bytes"] for s in self.stages(app).values()),
                         fact(log, "spill"))
        # resource_wait is more than ApplicationStart → first executor: both executors are removed
        # while stage 0 still runs, and that time is resource_wait too (phases.h).
        first_executor = min(added for _, added, _ in raw.executors) - raw.app_start
        self.assertGreater(app["phases"]["resource_wait_ms"], first_executor)
        # GC is not in the stage JSON; the gc-pressure rule's evidence gives it per stage when its
        # thresholds are all 0. The second TaskEnd belongs to a stage 20 that no job has (a
        # hand-edited line): it is not among the JSON's stages, but its GC (0) is in the evidence.
        gc = self.gc_by_stage(log)
        self.assertEqual(gc, {key[0]: value for key, value in raw.gc_by_stage().items() if key[0] in gc})
        self.assertEqual(sum(gc.values()), fact(log, "gc_sum_ms"))
        self.assertEqual(sum(raw.gc_by_stage().values()), fact(log, "gc_sum_ms"))

    def test_sparkscope_running_incomplete(self):
        log = "sparkscope_incomplete"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(raw.count("SparkListenerJobStart"), fact(log, "job_starts"))
        self.assertEqual(raw.count("SparkListenerTaskEnd"), fact(log, "task_ends"))
        self.assertEqual(raw.count("SparkListenerJobEnd"), fact(log, "job_ends"))
        self.assertEqual(raw.count("SparkListenerApplicationEnd"), fact(log, "app_ends"))
        self.assertEqual(raw.bad_json, 1, "the last line is cut off mid-JSON")
        # Not "complete": the application never ended and its log will not say more.
        self.assertEqual(app["status"], "truncated")
        self.assertIs(app["log"]["last_line_malformed"], True)
        self.assertEqual([job["status"] for job in app["jobs"]], ["unknown"])
        self.assertEqual(self.visible_task_ends(app), fact(log, "task_ends"))
        self.assertEqual(app["log"]["malformed_lines"], 1, "the cut-off line")
        self.assertEqual(app["log"]["dropped_lines"], 0)
        # No idle tail invented after the last event: the window ends there.
        self.assertEqual(app["window"]["end_ms"], raw.latest)
        text = self.run_text(log)
        self.assertIn("(truncated: no ApplicationEnd, its last line not an event;", text)

    def test_sparkscope_corrupted_events(self):
        log = "sparkscope_corrupted"
        app, raw = self.assert_agrees_with_raw(log)
        # sparkscope's 9 stage timelines: the stages with an intact StageSubmitted (Stage ID,
        # Number of Tasks and Submission Time all present).
        intact = set()
        for line in raw.lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            info = event.get("Stage Info") or {}
            if event.get("Event") == "SparkListenerStageSubmitted" and all(
                    key in info for key in ("Stage ID", "Number of Tasks", "Submission Time")):
                intact.add(info["Stage ID"])
        self.assertEqual(len(intact), fact(log, "timelines"))
        stages = self.stages(app)
        self.assertTrue(intact <= {stage_id for stage_id, _ in stages})
        # sparktrace keeps one more: stage 16, whose StageSubmitted lacks only "Number of Tasks"
        # (optional to sparktrace) and whose StageCompleted lacks both times, so it is complete with
        # completion = submission (application_model.cc).
        extra = {stage_id for stage_id, _ in stages} - intact
        self.assertEqual(extra, {16})
        self.assertEqual(stages[(16, 0)]["duration_ms"], 0)
        # Executors: the corrupt ExecutorAdded is skipped; "1" stays, never removed.
        self.assertEqual(app["executors"], {"added": fact(log, "executors"), "removed": 0})
        self.assertEqual([e[:2] for e in raw.executors],
                         [[str(fact(log, "executor_id")), fact(log, "executor_start")]])
        # Corrupt lines are counted, not fatal: the terminated lines missing a required field are
        # malformed, the blank line dropped, the unknown event type ignored; the unterminated last
        # line (also missing its fields) is counted once, as malformed or dropped.
        self.assertFalse((THIRD / LOGS[log]).read_bytes().endswith(b"\n"), "the last line is unterminated")
        self.assertEqual(raw.missing_required[-1], len(raw.lines), "the last line misses a required field")
        terminated = raw.missing_required[:-1]
        self.assertEqual(len(terminated), 3)
        self.assertGreaterEqual(app["log"]["malformed_lines"], len(terminated))
        self.assertTrue(app["log"]["first_malformed"].startswith(f"line {terminated[0]}:"))
        blank = sum(1 for line in raw.lines if not line.strip())
        self.assertEqual(app["log"]["malformed_lines"] + app["log"]["dropped_lines"],
                         len(raw.missing_required) + blank)
        self.assertEqual(app["log"]["ignored_event_types"].get("SparkListenerStageSubmittedBAD"),
                         raw.count("SparkListenerStageSubmittedBAD"))

    def test_sparklens(self):
        log = "sparklens"
        app, raw = self.assert_agrees_with_raw(log)
        dump = json.loads((THIRD / "sparklens/local-1532512550423.sparklens.json").read_text(encoding="utf-8"))
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
        self.assertEqual(app["app_id"], dump["appInfo"]["applicationID"])
        self.assertEqual((app["window"]["start_ms"], app["window"]["end_ms"]),
                         (dump["appInfo"]["startTime"], dump["appInfo"]["endTime"]))
        self.assertEqual(app["executors"]["added"], len(dump["executorMap"]))
        for job in app["jobs"]:
            theirs = dump["jobMap"][str(job["job_id"])]
            self.assertEqual((job["submission_ms"], job["completion_ms"]), (theirs["startTime"], theirs["endTime"]))
            for stage in job["stages"]:
                self.assertEqual(dump["stageIDToJobID"][str(stage["stage_id"])], job["job_id"])
        for (stage_id, attempt), stage in self.stages(app).items():
            theirs = dump["stageMap"][str(stage_id)]
            self.assertEqual(stage["num_tasks"], theirs["numberOfTasks"])
            self.assertEqual(stage["tasks_ended"], theirs["stageMetrics"]["count"])
            self.assertEqual(stage["task_duration_ms"]["max"], theirs["stageMetrics"]["map"]["taskDuration"]["max"])
            # Different spans: Sparklens' stage is first task launch → last task finish; ours is
            # Submission Time → Completion Time (assert_agrees_with_raw checked ours).
            ours_raw = raw.stages[(stage_id, attempt)]
            self.assertEqual((theirs["startTime"], theirs["endTime"]),
                             (ours_raw["first_launch"], ours_raw["last_finish"]))
        gc = self.gc_by_stage(log)
        self.assertEqual(gc, {key[0]: value for key, value in raw.gc_by_stage().items()})
        self.assertEqual(sum(gc.values()), dump["appMetrics"]["map"]["jvmGCTime"]["value"])

    def test_sparklint(self):
        log = "sparklint"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
        self.assertEqual(app["executors"]["added"], fact(log, "executors"))
        # Sparklint's "time until first task" (ApplicationStart → first task launch), from the raw
        # log; sparktrace's resource_wait ends at the first ExecutorAdded instead, before it.
        first_launch = min(stage["first_launch"] for stage in raw.stages.values())
        self.assertEqual(first_launch, fact(log, "first_task_at"))
        self.assertEqual(first_launch - raw.app_start, fact(log, "first_task_ms"))
        first_executor = min(added for _, added, _ in raw.executors) - raw.app_start
        self.assertEqual(app["phases"]["resource_wait_ms"], first_executor)
        self.assertLess(app["phases"]["resource_wait_ms"], fact(log, "first_task_ms"))
        # "max allocated cores 6": the executors' cores, from the raw log (sparktrace shows counts only).
        cores = sum(e["Executor Info"]["Total Cores"] for e in raw.of("SparkListenerExecutorAdded"))
        self.assertEqual(cores, fact(log, "max_cores"))

    def test_dr_elephant(self):
        log = "dr_elephant"
        app, raw = self.assert_agrees_with_raw(log)
        self.assertEqual(len(app["jobs"]), fact(log, "jobs"))
        self.assertEqual(self.visible_task_ends(app), fact(log, "tasks"))
        self.assertEqual(app["executors"]["added"], fact(log, "executors"))
        self.assert_wait(log)

    def test_all_logs_in_one_run_and_as_text(self):
        paths = [THIRD / path for path in LOGS.values()]
        result = run_diagnose("--json", *paths)
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["errors"], [])
        together = [{k: v for k, v in app.items() if k != "log"} for app in doc["applications"]]
        alone = [{k: v for k, v in self.diagnose(log).items() if k != "log"} for log in LOGS]
        self.assertEqual(together, alone)
        text = run_diagnose(*paths)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertEqual(text.stdout.count("\napplication ") + text.stdout.startswith("application "), len(LOGS))

    # ---- helpers ----

    def gc_by_stage(self, log):
        """JVM GC ms per stage, from gc-pressure's evidence with every threshold at 0."""
        with tempfile.TemporaryDirectory() as tmp:
            rules = Path(tmp) / "gc.json"
            rules.write_text(json.dumps({"gc-pressure": {"min_gc_share": 0, "min_run_seconds": 0,
                                                         "min_impact_seconds": 0, "min_impact_share": 0}}))
            result = run_diagnose("--json", "--rules", rules, THIRD / LOGS[log])
        self.assertEqual(result.returncode, 0, result.stderr)
        (app,) = json.loads(result.stdout)["applications"]
        gc = {}
        for finding in app["findings"]:
            if finding["id"] == "gc-pressure":
                self.assertEqual(finding["scope"]["kind"], "stage")
                evidence = {item["name"]: item["value"] for item in finding["evidence"]}
                gc[finding["scope"]["stage_id"]] = evidence["jvm_gc_time_ms"]
        return gc


if __name__ == "__main__":
    unittest.main()
