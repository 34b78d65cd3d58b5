"""What Spark's SQL UI shows for every SQL execution of an event log, recomputed in plain Python.

An oracle for `sparktrace diagnose --json`'s `sql_executions` (issue 31), written from Spark's own
code and nothing of sparktrace's. It replays an event log the way the History Server does: each
JSON line goes, in order, to a re-implementation of `SQLAppStatusListener` (below: `Replay`), and
each accumulator's task values become the figures `SQLMetrics.stringValue` prints (`stats`).

What it follows in apache/spark (read through the search tools; "3.0", "3.1-3.5", "4.x" are the
versions whose copy of the file was read):

* sql/core/.../execution/ui/SQLAppStatusListener.scala
  - An execution is created by SQLExecutionStart (description, `time` = start) and ended by
    SQLExecutionEnd (`time`); its jobs are the JobStarts whose Properties carry
    `spark.sql.execution.id`, its stages those jobs' "Stage IDs".
  - exec.metrics: the metrics of the nodes of the start plan's SparkPlanGraph; an
    SQLAdaptiveExecutionUpdate *adds* its plan's metrics (3.1+: `exec.metrics ++=`; 3.0 replaced
    them: `semantics="3.0"`), so does SQLAdaptiveSQLMetricUpdates (`sqlPlanMetrics`).
  - onJobStart: when the execution already has metrics, every stage in the job's "Stage Infos"
    gets a fresh LiveStageMetrics(attempt 0, "Number of Tasks") -- replacing what an earlier job
    recorded for the same stage id. The accumulator ids it tracks are a snapshot of
    exec.metrics at that JobStart in 3.x (`semantics="3.x"`); since 4.0 (SPARK-45439) the map is
    shared with the execution, so metrics added later are tracked from then on (`"4.x"`, default).
  - onStageSubmitted: a new attempt number replaces the stage's LiveStageMetrics (values of the
    earlier attempt are dropped); TaskEnd / ExecutorMetricsUpdate of other attempts are ignored.
  - onTaskEnd: only for stages of a live execution; each accumulable of "Task Info"
    "Accumulables" with an "Update" whose id is tracked sets values[id][task "Index"] (a later
    attempt of the same index overwrites, a speculative copy too), until a *successful* task
    (Finish Time != 0, not Failed, not Killed) completes that index; updates for a completed
    index are ignored. Arrays have "Number of Tasks" slots: indices nobody reported count as 0.
  - SparkListenerDriverAccumUpdates ("accumUpdates" [[id, value]...]) of a live execution are
    appended (3.0: kept in a Map, the last value per id wins) and count as one more value.
  - Aggregation happens at SQLExecutionEnd (later task updates do not change it); an execution
    whose end never comes is aggregated at the end of the log (kvstore.onFlush). An execution
    leaves the live set once its end and all its jobs' ends arrived (then its stages' data is
    dropped, and driver updates for it are ignored).
* sql/core/.../execution/metric/SQLMetrics.scala (3.x) / core/.../util/MetricUtils.scala (4.x),
  `stringValue`:
  - "sum": total = sum of all values; nothing else shown.
  - "size", "timing", "nsTiming": valid values are those >= 0 (-1 is "never set", SPARK-11013);
    total = their sum, min / median / max = sorted[0], sorted[n / 2] (upper median), sorted[n-1].
    With a single valid value Spark 3.1+ prints just that value (3.0 printed it as all four).
    Units are raw: bytes, ms, ns ("nsTiming" is shown by Spark converted to ms).
  - "average": valid values are those > 0; Spark shows min / median / max of value / 10 (the
    metric stores value * 10), no total. Here min / median / max are the stored longs.
  - any other type (DSv2 "v2Custom_<class>", Databricks' "count" / "minimum" / "maximum"):
    Spark defines no figure (a custom class aggregates its own; Apache Spark's stringValue throws
    on a vendor type). Convention here: total = plain sum of every value, no min / median / max;
    such metrics carry `spark_defined` False.
* sql/core/.../execution/ui/SparkPlanGraph.scala: which nodes' metrics enter exec.metrics
  (InputAdapter, *QueryStage and a ReusedExchange / Subquery equal to one already seen add no
  metrics of their own; WholeStageCodegen clusters add theirs); SparkPlanInfo equality is
  nodeName + simpleString + children (sql/core/.../execution/SparkPlanInfo.scala).
* core/.../util/JsonProtocol.scala: Task Info "Accumulables" entries {"ID", "Name", "Update",
  "Value", ...}; SQL metric updates are strings of a Long ("Update": "123").

On the shared logs (2026) the "4.x" and "3.x" semantics give the same figures everywhere; "3.0"
differs on seven logs, all written by Spark 3.1+, where AQE would have dropped metrics. Taking
every plan node's metrics instead of SparkPlanGraph's also changes nothing there.

The plan reported per execution is the last SQLAdaptiveExecutionUpdate's sparkPlanInfo, else the
start's, as the raw tree (nodeName, metrics in plan order, children in order). Each metric gets
the aggregate of its accumulator id; an id Spark has no value for (never tracked, or no task
reported it) has total 0 and min / median / max None, and `shown` False (the UI prints no line).

Differences from a real History Server, on purpose: malformed JSON lines are skipped and counted
(the History Server gives up on a log whose bad line is not the last); aggregation at
SQLExecutionEnd is synchronous here (the History Server's is asynchronous, kvstore.doAsync, so a
task event right after the end may or may not count there).

Reading logs: plain JSON lines; `.zstd`/`.zst` through the `zstd` program; `.lz4` (lz4-java's
LZ4BlockOutputStream format, which the `lz4` program cannot read) and `.snappy` (snappy-java's
stream) decoded here; `.gz` through gzip; a trailing `.inprogress` is ignored; an
`eventlog_v2_*` directory is its `events_<n>_*` files in index order.

Stdlib only. `python3 sql_oracle.py [LOG...]` prints a summary per log (default: every log with
SQL under $SPARKTRACE_DATA_DIR, default <repo>/../shared/data).
"""

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

SUM, SIZE, TIMING, NS_TIMING, AVERAGE = "sum", "size", "timing", "nsTiming", "average"
STAT_TYPES = (SIZE, TIMING, NS_TIMING)
SPARK_TYPES = (SUM, SIZE, TIMING, NS_TIMING, AVERAGE)
SEMANTICS = ("4.x", "3.x", "3.0")
EXECUTION_ID_KEY = "spark.sql.execution.id"
CONNECT_TAG = re.compile(r"SparkConnect_OperationTag_User_.*_Session_.*_Operation_(.+)$")

SQL_PREFIX = "org.apache.spark.sql.execution.ui."
EV_START = SQL_PREFIX + "SparkListenerSQLExecutionStart"
EV_END = SQL_PREFIX + "SparkListenerSQLExecutionEnd"
EV_AQE = SQL_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate"
EV_AQE_METRICS = SQL_PREFIX + "SparkListenerSQLAdaptiveSQLMetricUpdates"
EV_DRIVER = SQL_PREFIX + "SparkListenerDriverAccumUpdates"


# ---------------------------------------------------------------------------------------------
# Reading event logs


def _lz4_length(src, i, length):
    """A token's 4-bit length and, when it is 15, the bytes that extend it (each added, until one
    below 255); (length, index past them)."""
    if length == 15:
        while True:
            b = src[i]
            i += 1
            length += b
            if b != 255:
                break
    return length, i


def _lz4_block(src, size):
    """One raw LZ4 block (the LZ4 block format) of `size` decoded bytes."""
    dst = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        length, i = _lz4_length(src, i + 1, token >> 4)
        dst += src[i:i + length]
        i += length
        if i >= n:
            break
        offset = src[i] | (src[i + 1] << 8)
        length, i = _lz4_length(src, i + 2, token & 15)
        length += 4
        start = len(dst) - offset
        if offset >= length:
            dst += dst[start:start + length]
        else:  # overlapping copy: the last `offset` bytes repeat
            pattern = bytes(dst[start:])
            dst += (pattern * (length // offset + 1))[:length]
    if len(dst) != size:
        raise ValueError(f"lz4 block decoded to {len(dst)} bytes, header says {size}")
    return bytes(dst)


def decode_lz4_block_stream(data):
    """lz4-java LZ4BlockOutputStream: blocks of 'LZ4Block' + token + compressed length +
    decoded length + checksum (little-endian ints), RAW (0x10) or LZ4 (0x20); stops at a
    truncated block."""
    out, i = [], 0
    while i + 21 <= len(data) and data[i:i + 8] == b"LZ4Block":
        method = data[i + 8] & 0xF0
        clen = int.from_bytes(data[i + 9:i + 13], "little")
        dlen = int.from_bytes(data[i + 13:i + 17], "little")
        i += 21
        if i + clen > len(data):
            break
        block = data[i:i + clen]
        i += clen
        if method == 0x10:
            out.append(block)
        elif method == 0x20:
            out.append(_lz4_block(block, dlen))
        else:
            raise ValueError(f"unknown LZ4Block method {method:#x}")
    return b"".join(out)


def _snappy_raw(src):
    i, shift, size = 0, 0, 0
    while True:
        b = src[i]
        i += 1
        size |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    dst = bytearray()
    n = len(src)
    while i < n:
        tag = src[i]
        i += 1
        kind = tag & 3
        if kind == 0:
            length = tag >> 2
            if length < 60:
                length += 1
            else:
                width = length - 59
                length = int.from_bytes(src[i:i + width], "little") + 1
                i += width
            dst += src[i:i + length]
            i += length
            continue
        if kind == 1:
            length = ((tag >> 2) & 7) + 4
            offset = ((tag >> 5) << 8) | src[i]
            i += 1
        elif kind == 2:
            length = (tag >> 2) + 1
            offset = int.from_bytes(src[i:i + 2], "little")
            i += 2
        else:
            length = (tag >> 2) + 1
            offset = int.from_bytes(src[i:i + 4], "little")
            i += 4
        start = len(dst) - offset
        if offset >= length:
            dst += dst[start:start + length]
        else:
            pattern = bytes(dst[start:])
            dst += (pattern * (length // offset + 1))[:length]
    if len(dst) != size:
        raise ValueError(f"snappy block decoded to {len(dst)} bytes, header says {size}")
    return bytes(dst)


SNAPPY_MAGIC = b"\x82SNAPPY\x00"


def decode_xerial_snappy(data):
    """snappy-java SnappyOutputStream: an 8-byte magic + 2 big-endian ints, then chunks of a
    big-endian length + one raw snappy block; stops at a truncated chunk."""
    out, i = [], 0
    while i < len(data):
        if data[i:i + 8] == SNAPPY_MAGIC:
            i += 16
            continue
        if i + 4 > len(data):
            break
        clen = int.from_bytes(data[i:i + 4], "big")
        i += 4
        if i + clen > len(data):
            break
        out.append(_snappy_raw(data[i:i + clen]))
        i += clen
    return b"".join(out)


def decode_file(path):
    """The decoded bytes of one event-log file, by its codec suffix."""
    name = path.name
    if name.endswith(".inprogress"):
        name = name[:-len(".inprogress")]
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    if suffix in ("zstd", "zst"):
        # A file cut inside a frame makes zstd fail at the end; what it decoded still counts.
        return subprocess.run(["zstd", "-dcq", str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, check=False, timeout=120).stdout
    raw = path.read_bytes()
    if suffix == "lz4":
        return decode_lz4_block_stream(raw)
    if suffix == "snappy":
        return decode_xerial_snappy(raw)
    if suffix == "gz":
        return gzip.decompress(raw)
    return raw


def rolling_parts(directory):
    """events_<n>_* files of an eventlog_v2_* directory, in index order."""
    parts = []
    for child in directory.iterdir():
        match = re.match(r"events_(\d+)_", child.name)
        if match and child.is_file():
            parts.append((int(match.group(1)), child))
    return [p for _, p in sorted(parts)]


def log_bytes(path):
    path = Path(path)
    if path.is_dir():
        return b"".join(decode_file(p) for p in rolling_parts(path))
    return decode_file(path)


def discover_logs(data_dir):
    """Every event log under the four event directories of the shared data: single files and
    eventlog_v2_* directories (not the files inside them). Skipped: checksums, READMEs, tool
    expectations (CSV, the Sparklens JSON dump) and appstatus markers."""
    logs = []
    for top in ("spark-events", "spark-events-problems", "spark-events-thirdparty",
                "spark-events-derived"):
        root = Path(data_dir) / top
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            keep = []
            for d in sorted(dirnames):
                if d.startswith("eventlog_v2_"):
                    logs.append(here / d)
                elif d != "expectations":
                    keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if f.startswith("appstatus_") or f.endswith((".csv", ".json", ".md")):
                    continue
                logs.append(here / f)
    return sorted(logs)


# ---------------------------------------------------------------------------------------------
# Spark's aggregation (SQLMetrics.stringValue / MetricUtils.stringValue), as numbers


def stats(metric_type, values):
    """(total, min, median, max, shown_values) of one accumulator's values, as the SQL UI
    computes them. For "sum" only the total exists. For "average" the total is None (Spark shows
    none) and min/median/max are the stored longs (value * 10)."""
    if metric_type == SUM:
        return sum(values), None, None, None, len(values)
    if metric_type == AVERAGE:
        valid = sorted(v for v in values if v > 0)
    elif metric_type in STAT_TYPES:
        valid = sorted(v for v in values if v >= 0)
    else:
        # Not one of Spark's types: a DSv2 custom metric ("v2Custom_<class>", aggregated by that
        # class, "N/A" in a History Server without it) or a vendor's ("count", "minimum",
        # "maximum" in Databricks logs; Apache Spark's stringValue throws on them). Spark defines
        # no figure; the convention here is the plain sum of every value, nothing else.
        return sum(values), None, None, None, len(values)
    if not valid:
        total = None if metric_type == AVERAGE else 0
        return total, None, None, None, 0
    total = None if metric_type == AVERAGE else sum(valid)
    n = len(valid)
    return total, valid[0], valid[n // 2], valid[n - 1], n


# ---------------------------------------------------------------------------------------------
# The plan: SparkPlanGraph's choice of metrics, and the raw tree


def _plan_key(info):
    """SparkPlanInfo equality: nodeName, simpleString and children (metrics ignored)."""
    return (info.get("nodeName"), info.get("simpleString"),
            tuple(_plan_key(c) for c in info.get("children") or ()))


def graph_metrics(plan_info):
    """The (accumulatorId, name, metricType) of every node SparkPlanGraph builds from this plan
    (SparkPlanGraph.buildSparkPlanGraphNode, Spark 3.4+ cases)."""
    found = []
    exchanges = set()
    keys = {}

    def key(info):
        k = keys.get(id(info))
        if k is None:
            k = keys[id(info)] = _plan_key(info)
        return k

    def add(info):
        for m in info.get("metrics") or ():
            found.append((int(m["accumulatorId"]), m.get("name"), m.get("metricType")))

    def build(info, in_cluster):
        name = info.get("nodeName") or ""
        children = info.get("children") or []
        if name.startswith("WholeStageCodegen"):
            add(info)
            if children:
                build(children[0], True)
        elif name == "InputAdapter":
            if children:
                build(children[0], False)
        elif name in ("BroadcastQueryStage", "ShuffleQueryStage"):
            if children and key(children[0]) not in exchanges:
                build(children[0], False)
        elif name == "TableCacheQueryStage":
            if children:
                build(children[0], False)
        elif name in ("Subquery", "SubqueryBroadcast") and in_cluster:
            build(info, False)
        elif name in ("Subquery", "SubqueryBroadcast") and key(info) in exchanges:
            pass
        elif name == "ReusedSubquery":
            if children:
                build(children[0], in_cluster)
        elif name == "ReusedExchange" and children and key(children[0]) in exchanges:
            pass
        else:
            add(info)
            if "Exchange" in name or "Subquery" in name:
                exchanges.add(key(info))
            for child in children:
                build(child, in_cluster)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    build(plan_info, False)
    return found


# ---------------------------------------------------------------------------------------------
# SQLAppStatusListener


def _update_value(acc):
    """An accumulable's "Update" as Spark's listener reads it (`s.toLong`), or None."""
    if "Update" not in acc:
        return None
    v = acc["Update"]
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    return None


class StageMetrics:
    """LiveStageMetrics: one stage attempt's values per tracked accumulator, by task index."""

    __slots__ = ("stage_id", "attempt", "num_tasks", "tracked", "values", "completed",
                 "task_index")

    def __init__(self, stage_id, attempt, num_tasks, tracked):
        self.stage_id = stage_id
        self.attempt = attempt
        self.num_tasks = num_tasks
        self.tracked = tracked  # accumulator id -> type (shared with the execution in 4.x)
        self.values = {}  # accumulator id -> {task index: value}
        self.completed = set()
        self.task_index = {}

    def update(self, task_id, index, finished, accumulables):
        if index is None:
            index = self.task_index.get(task_id)
            if index is None:
                return  # missed the start event: ignored, as Spark does
        else:
            self.task_index[task_id] = index
        if index in self.completed:
            return
        for acc in accumulables or ():
            acc_id = acc.get("ID")
            if acc_id not in self.tracked:
                continue
            value = _update_value(acc)
            if value is None:
                continue
            self.values.setdefault(acc_id, {})[index] = value
        if finished:
            self.completed.add(index)

    def array(self, acc_id):
        """The stage's Array[Long] for one accumulator: num_tasks slots, 0 where unreported."""
        by_index = self.values.get(acc_id)
        if by_index is None:
            return None
        out = list(by_index.values())
        missing = self.num_tasks - len(by_index)
        if missing > 0:
            out.extend([0] * missing)
        return out


class Execution:
    def __init__(self, execution_id):
        self.execution_id = execution_id
        self.description = None
        self.start_ms = None
        self.end_ms = None
        self.plan = None  # the last sparkPlanInfo seen (start, then adaptive updates)
        self.has_start = False
        self.types = {}  # metricAccumulatorIdToMetricType (exec.metrics)
        self.jobs = {}  # job id -> status
        self.stages = set()
        self.driver_updates = []  # [(id, value)]; a dict in 3.0
        self.values = None  # accumulator id -> stats, once aggregated
        self.end_events = 0
        self.job_tags = []
        self.adaptive_updates = 0


class Replay:
    """SQLAppStatusListener fed with one log's events in order."""

    def __init__(self, semantics="4.x"):
        if semantics not in SEMANTICS:
            raise ValueError(f"semantics must be one of {SEMANTICS}")
        self.semantics = semantics
        self.executions = {}  # every execution ever seen, by id
        self.live = {}
        self.stage_metrics = {}
        self.app_id = None
        self.spark_version = None
        self.lines = 0
        self.malformed = 0
        self.notes = []

    # -- the listener's helpers

    def _get_or_create(self, execution_id):
        exec_ = self.live.get(execution_id)
        if exec_ is None:
            exec_ = Execution(execution_id)
            self.live[execution_id] = exec_
            self.executions.setdefault(execution_id, exec_)
            if self.executions[execution_id] is not exec_:
                self.notes.append(f"execution {execution_id} created again after it ended")
                self.executions[execution_id] = exec_
        return exec_

    def _add_metrics(self, exec_, metrics, replace=False):
        if replace:
            exec_.types = {}
        for acc_id, _name, metric_type in metrics:
            exec_.types[acc_id] = metric_type

    def _is_sql_stage(self, stage_id):
        return any(stage_id in e.stages for e in self.live.values())

    def _remove_stale(self, exec_):
        active = set()
        for other in self.live.values():
            if other is not exec_:
                active |= other.stages
        for stage_id in [s for s in self.stage_metrics if s not in active]:
            del self.stage_metrics[stage_id]

    def _update(self, exec_):
        if exec_.end_events >= len(exec_.jobs) + 1:
            self._remove_stale(exec_)
            self.live.pop(exec_.execution_id, None)

    def _aggregate(self, exec_):
        if exec_.values is not None:
            return
        types = exec_.types
        stages = [self.stage_metrics[s] for s in exec_.stages if s in self.stage_metrics]
        driver_items = exec_.driver_updates
        if isinstance(driver_items, dict):  # 3.0: a Map, the last value per id
            driver_items = list(driver_items.items())
        driver = {}
        for acc_id, value in driver_items:
            if acc_id in types:
                driver.setdefault(acc_id, []).append(value)
        ids = set()
        for sm in stages:
            ids.update(k for k in sm.values if k in types)
        ids.update(driver)
        result = {}
        for acc_id in ids:
            values = []
            for sm in stages:
                arr = sm.array(acc_id)
                if arr is not None:
                    values.extend(arr)
            values.extend(driver.get(acc_id, ()))
            result[acc_id] = stats(types[acc_id], values)
        exec_.values = result

    # -- events

    def on_event(self, e):
        kind = e.get("Event")
        handler = self.HANDLERS.get(kind)
        if handler is not None:
            handler(self, e)

    def on_log_start(self, e):
        self.spark_version = e.get("Spark Version")

    def on_app_start(self, e):
        self.app_id = e.get("App ID")

    def on_sql_start(self, e):
        exec_ = self._get_or_create(int(e["executionId"]))
        exec_.has_start = True
        exec_.description = e.get("description")
        exec_.start_ms = e.get("time")
        exec_.plan = e.get("sparkPlanInfo") or {}
        exec_.job_tags = list(e.get("jobTags") or ())
        self._add_metrics(exec_, graph_metrics(exec_.plan))
        self._update(exec_)

    def on_aqe_update(self, e):
        exec_ = self._get_or_create(int(e["executionId"]))
        exec_.plan = e.get("sparkPlanInfo") or {}
        exec_.adaptive_updates += 1
        self._add_metrics(exec_, graph_metrics(exec_.plan), replace=self.semantics == "3.0")
        self._update(exec_)

    def on_aqe_metrics(self, e):
        exec_ = self._get_or_create(int(e["executionId"]))
        metrics = [(int(m["accumulatorId"]), m.get("name"), m.get("metricType"))
                   for m in e.get("sqlPlanMetrics") or ()]
        self._add_metrics(exec_, metrics)
        self._update(exec_)

    def on_sql_end(self, e):
        exec_ = self.live.get(int(e["executionId"]))
        if exec_ is None:
            return
        exec_.end_ms = e.get("time")
        self._update(exec_)
        self._aggregate(exec_)
        self._remove_stale(exec_)
        exec_.end_events += 1
        self._update(exec_)

    def on_driver_updates(self, e):
        exec_ = self.live.get(int(e["executionId"]))
        if exec_ is None:
            return
        pairs = [(int(a), int(b)) for a, b in e.get("accumUpdates") or ()]
        if self.semantics == "3.0":
            if isinstance(exec_.driver_updates, list):
                exec_.driver_updates = dict(exec_.driver_updates)
            exec_.driver_updates.update(pairs)
        else:
            exec_.driver_updates.extend(pairs)
        self._update(exec_)

    def on_job_start(self, e):
        props = e.get("Properties") or {}
        raw = props.get(EXECUTION_ID_KEY)
        if raw is None:
            return
        execution_id = int(raw)
        job_id = e["Job ID"]
        exec_ = self.live.get(execution_id)
        if exec_ is None:
            known = self.executions.get(execution_id)
            if known is not None:
                # Read back from the store: frozen figures, its jobs' ends already counted.
                exec_ = known
                exec_.end_events = len(exec_.jobs) + 1
                self.live[execution_id] = exec_
            else:
                exec_ = self._get_or_create(execution_id)
        tags = props.get("spark.job.tags")
        if tags:
            exec_.job_tags.extend(t for t in tags.split(",") if t)
        if exec_.types:
            tracked = exec_.types if self.semantics == "4.x" else dict(exec_.types)
            for info in e.get("Stage Infos") or ():
                stage_id = info["Stage ID"]
                self.stage_metrics[stage_id] = StageMetrics(
                    stage_id, 0, info.get("Number of Tasks", 0), tracked)
        exec_.jobs[job_id] = "RUNNING"
        exec_.stages.update(e.get("Stage IDs") or ())
        self._update(exec_)

    def on_stage_submitted(self, e):
        info = e.get("Stage Info") or {}
        stage_id = info.get("Stage ID")
        if not self._is_sql_stage(stage_id):
            return
        sm = self.stage_metrics.get(stage_id)
        attempt = info.get("Stage Attempt ID", 0)
        if sm is not None and sm.attempt != attempt:
            self.stage_metrics[stage_id] = StageMetrics(stage_id, attempt, sm.num_tasks,
                                                        sm.tracked)

    def on_job_end(self, e):
        job_id = e.get("Job ID")
        result = (e.get("Job Result") or {}).get("Result")
        for exec_ in list(self.live.values()):
            if job_id in exec_.jobs:
                exec_.jobs[job_id] = "SUCCEEDED" if result == "JobSucceeded" else "FAILED"
                exec_.end_events += 1
                self._update(exec_)

    def on_task_start(self, e):
        sm = self.stage_metrics.get(e.get("Stage ID"))
        info = e.get("Task Info") or {}
        if sm is not None and sm.attempt == e.get("Stage Attempt ID", 0):
            sm.task_index[info.get("Task ID")] = info.get("Index")

    def on_task_end(self, e):
        stage_id = e.get("Stage ID")
        if not self._is_sql_stage(stage_id):
            return
        sm = self.stage_metrics.get(stage_id)
        if sm is None or sm.attempt != e.get("Stage Attempt ID", 0):
            return
        info = e.get("Task Info") or {}
        successful = (info.get("Finish Time", 0) != 0 and not info.get("Failed", False)
                      and not info.get("Killed", False))
        sm.update(info.get("Task ID"), info.get("Index"), successful, info.get("Accumulables"))

    def on_executor_metrics_update(self, e):
        for upd in e.get("Metrics Updated") or ():
            sm = self.stage_metrics.get(upd.get("Stage ID"))
            if sm is not None and sm.attempt == upd.get("Stage Attempt ID", 0):
                sm.update(upd.get("Task ID"), None, False, upd.get("Accumulator Updates"))

    def finish(self):
        """The end of the log: executions still live are aggregated as they stand."""
        for exec_ in self.live.values():
            self._aggregate(exec_)

    HANDLERS = {
        "SparkListenerLogStart": on_log_start,
        "SparkListenerApplicationStart": on_app_start,
        EV_START: on_sql_start,
        EV_AQE: on_aqe_update,
        EV_AQE_METRICS: on_aqe_metrics,
        EV_END: on_sql_end,
        EV_DRIVER: on_driver_updates,
        "SparkListenerJobStart": on_job_start,
        "SparkListenerJobEnd": on_job_end,
        "SparkListenerStageSubmitted": on_stage_submitted,
        "SparkListenerTaskStart": on_task_start,
        "SparkListenerTaskEnd": on_task_end,
        "SparkListenerExecutorMetricsUpdate": on_executor_metrics_update,
    }

    # -- the result

    def operation_id(self, exec_):
        for tag in exec_.job_tags:
            match = CONNECT_TAG.match(tag)
            if match:
                return match.group(1)
        return None

    def plan_tree(self, exec_, info):
        values = exec_.values or {}
        metrics = []
        for m in info.get("metrics") or ():
            acc_id = int(m["accumulatorId"])
            got = values.get(acc_id)
            if got is None:
                total, lo, med, hi, n = (None if m.get("metricType") == AVERAGE else 0,
                                         None, None, None, 0)
            else:
                total, lo, med, hi, n = got
            metrics.append({"name": m.get("name"), "accumulator_id": acc_id,
                            "type": m.get("metricType"), "total": total, "min": lo,
                            "median": med, "max": hi, "values": n, "shown": got is not None,
                            "spark_defined": m.get("metricType") in SPARK_TYPES})
        return {"name": info.get("nodeName"), "metrics": metrics,
                "children": [self.plan_tree(exec_, c) for c in info.get("children") or ()]}

    def result(self):
        executions = []
        for execution_id in sorted(self.executions):
            exec_ = self.executions[execution_id]
            if not exec_.has_start:
                continue
            executions.append({
                "execution_id": execution_id,
                "description": exec_.description,
                "operation_id": self.operation_id(exec_),
                "job_ids": sorted(exec_.jobs),
                "start_ms": exec_.start_ms,
                "end_ms": exec_.end_ms,
                "adaptive_updates": exec_.adaptive_updates,
                "plan": self.plan_tree(exec_, exec_.plan),
            })
        orphans = sorted(i for i, e in self.executions.items() if not e.has_start)
        return {"app_id": self.app_id, "spark_version": self.spark_version,
                "lines": self.lines, "malformed_lines": self.malformed,
                "sql_executions": executions, "executions_without_start": orphans,
                "notes": self.notes}


def replay_bytes(data, semantics="4.x"):
    replay = Replay(semantics)
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        replay.lines += 1
        try:
            event = json.loads(line)
        except ValueError:
            replay.malformed += 1
            continue
        if not isinstance(event, dict) or "Event" not in event:
            replay.malformed += 1
            continue
        replay.on_event(event)
    replay.finish()
    return replay.result()


def has_sql(data):
    return b"SparkListenerSQLExecutionStart" in data


def analyze(path, semantics="4.x"):
    """The oracle's answer for one log (a file or an eventlog_v2_* directory)."""
    return replay_bytes(log_bytes(path), semantics)


# ---------------------------------------------------------------------------------------------
# Summaries


def walk(node, path=()):
    """(path, node) for every node of a plan tree, depth first; path = names from the root."""
    here = path + (node["name"],)
    yield here, node
    for child in node["children"]:
        yield from walk(child, here)


def summary(result):
    nodes = metrics = shown = 0
    totals = 0
    for exec_ in result["sql_executions"]:
        for _, node in walk(exec_["plan"]):
            nodes += 1
            for m in node["metrics"]:
                metrics += 1
                if m["shown"]:
                    shown += 1
                if m["total"] is not None:
                    totals += m["total"]
    return {"executions": len(result["sql_executions"]), "nodes": nodes, "metrics": metrics,
            "metrics_with_value": shown, "sum_of_totals": totals,
            "malformed_lines": result["malformed_lines"]}


def main(argv):
    here = Path(__file__).resolve().parent
    data_dir = Path(os.environ.get("SPARKTRACE_DATA_DIR") or here.parents[2] / "shared" / "data")
    semantics = "4.x"
    args = list(argv)
    if args[:1] == ["--semantics"]:
        semantics, args = args[1], args[2:]
    paths = [Path(a) for a in args] or discover_logs(data_dir)
    for path in paths:
        data = log_bytes(path)
        if not has_sql(data):
            continue
        s = summary(replay_bytes(data, semantics))
        name = os.path.relpath(path, data_dir) if str(path).startswith(str(data_dir)) else path
        print(f"{name}: {s['executions']} executions, {s['nodes']} nodes, {s['metrics']} metrics "
              f"({s['metrics_with_value']} with a value), sum of totals {s['sum_of_totals']}, "
              f"{s['malformed_lines']} malformed lines")


if __name__ == "__main__":
    main(sys.argv[1:])
