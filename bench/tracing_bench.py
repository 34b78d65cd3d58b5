#!/usr/bin/env python3
"""What tracing costs: sparktrace with tracing off vs on, same run, in front of `sparktrace sim`.

Starts one Spark Connect simulator (`sparktrace sim`) and, in front of it, sparktrace with
`--no-tracing` (off), with the default tracing config writing a SQLite store (on), unless
--skip-postgres writing the shared PostgreSQL store (on_pg: Debian's postgresql-15, started here on a
unix socket by tests/support/postgres_server.py) and, unless --skip-otlp, with the SQLite store plus
OTLP/HTTP export to a local sink that discards (on_otlp). The same
`sparktrace-loadgen client` runs real Spark Connect calls (hand-encoded ConfigRequest and
ExecutePlanRequest) against every leg and against the simulator directly, interleaved round by
round. Checks that the traced legs really recorded every span, writes bench/results/tracing.json
and prints a table of medians and ON/OFF ratios.

Exit status: 0 when the benchmark ran (whatever the figures and checks say), 2 on a harness error
(a tool is missing or too old, the simulator, a proxy or the sink would not start), 130 when
interrupted.

Run with Debian's /usr/bin/python3; only the standard library is used.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "support"))
from postgres_server import PostgresServer  # noqa: E402
import proxy_bench as pb  # noqa: E402  (process helpers, /proc accounting, machine info)
from proxy_bench import HarnessError, Interrupted, log  # noqa: E402

REPO = pb.REPO
SERVICE = "/spark.connect.SparkConnectService"
LEGS = ("direct", "off", "on", "on_pg", "on_otlp")
PROXY_LEGS = ("off", "on", "on_pg", "on_otlp")
TRACED_LEGS = ("on", "on_pg", "on_otlp")
PG_SERVERS = []  # the on_pg leg's server, stopped when the benchmark ends however it ends
# The store sink of each traced leg, as /metrics labels it.
STORE_SINK = {"on": "sqlite", "on_pg": "postgresql", "on_otlp": "sqlite"}
# Stand-in for the operation id in the ExecutePlan request file; the loadgen puts a fresh uuid4
# there for every call (--fresh-uuid), as PySpark names its operations.
OPERATION_PLACEHOLDER = "ffffffff-ffff-4fff-bfff-ffffffffffff"
SESSION_ID = "3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70"
EXEC_BATCHES = 16
EXEC_BATCH_BYTES = 64 << 10


# ----------------------------------------------------------------------------------------------
# Spark Connect requests, hand-encoded (field numbers from proto/spark/connect/*.proto). The
# traced legs check that the proxy decoded them (attributes in the stored spans).

def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _ld(field, payload):
    """A length-delimited field (string, bytes, message)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _int(field, value):
    return _varint(field << 3) + _varint(value)


def config_request():
    """ConfigRequest{session_id, user_context{user_id}, operation{get{keys}}, client_type}."""
    return (_ld(1, SESSION_ID) + _ld(2, _ld(1, "bench"))
            + _ld(3, _ld(2, _ld(1, "spark.sql.shuffle.partitions")))
            + _ld(4, "sparktrace-bench"))


def execute_plan_request():
    """ExecutePlanRequest{session_id, user_context, plan{root{common{plan_id}, sql{query}}},
    client_type, operation_id}; not reattachable, so one stream is the whole operation."""
    relation = _ld(1, _int(2, 1)) + _ld(10, _ld(1, "SELECT id FROM range(1000000)"))
    return (_ld(1, SESSION_ID) + _ld(2, _ld(1, "bench")) + _ld(3, _ld(1, relation))
            + _ld(4, "sparktrace-bench") + _ld(6, OPERATION_PLACEHOLDER))


# ----------------------------------------------------------------------------------------------
# Workloads: one `sparktrace-loadgen client` run per leg per round.

def workloads(quick, files):
    u_dur, u_warm = (0.5, 0.2) if quick else (2.0, 0.5)
    e_dur = 0.5 if quick else 2.0
    config = ["--method", f"{SERVICE}/Config", "--request-file", files["config"]]
    execute = ["--mode", "stream", "--method", f"{SERVICE}/ExecutePlan", "--request-file", files["execute"],
               "--fresh-uuid", OPERATION_PLACEHOLDER,
               "--metadata", f"x-sim-batches={EXEC_BATCHES}", "--metadata", f"x-sim-batch-bytes={EXEC_BATCH_BYTES}",
               "--messages", str(EXEC_BATCHES)]
    return [
        dict(name="config_c1", kind="unary", spans_per_call=1,
             args=["--mode", "unary", "--concurrency", "1", "--duration", str(u_dur), "--warmup", str(u_warm)]
             + config, timeout=u_dur + u_warm + 40),
        dict(name="config_c16", kind="unary", spans_per_call=1,
             args=["--mode", "unary", "--concurrency", "16", "--duration", str(u_dur), "--warmup", str(u_warm)]
             + config, timeout=u_dur + u_warm + 40),
        # RPC span + operation span per ExecutePlan.
        dict(name="execute_c4", kind="execute", spans_per_call=2,
             args=execute + ["--concurrency", "4", "--duration", str(e_dur)], timeout=e_dur + 80),
    ]


def warmup_variant(wl):
    """A short unrecorded run of the same workload (first calls, store file creation, allocator)."""
    args = list(wl["args"])
    i = args.index("--duration")
    args[i + 1] = "0.3"
    if "--warmup" in args:
        j = args.index("--warmup")
        args[j + 1] = "0.1"
    return dict(wl, args=args)


# ----------------------------------------------------------------------------------------------
# The OTLP/HTTP sink: a separate process (its CPU is not the proxy's nor ours) that answers 200
# with an empty ExportTraceServiceResponse and appends each body, length-prefixed, to a file
# that is decoded only at the end.

def serve_otlp_sink(out_dir):
    body_file = open(os.path.join(out_dir, "otlp-bodies.bin"), "ab")
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server naming)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                body_file.write(struct.pack("<I", len(body)) + body)
                body_file.flush()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()
    body_file.close()
    return 0


def _fields(buf):
    """(field number, wire type, value) of one protobuf message; values of LEN fields as bytes."""
    i, n = 0, len(buf)
    while i < n:
        key = shift = 0
        while True:
            b = buf[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        field, wire = key >> 3, key & 7
        if wire == 0:
            while buf[i] & 0x80:
                i += 1
            i += 1
            yield field, wire, None
        elif wire == 1:
            i += 8
            yield field, wire, None
        elif wire == 5:
            i += 4
            yield field, wire, None
        elif wire == 2:
            length = shift = 0
            while True:
                b = buf[i]
                i += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            yield field, wire, buf[i:i + length]
            i += length
        else:
            raise ValueError(f"unexpected wire type {wire}")


def count_otlp_spans(path):
    """Requests and spans in the sink's file: ExportTraceServiceRequest.resource_spans(1) ->
    ResourceSpans.scope_spans(2) -> ScopeSpans.spans(2)."""
    requests = spans = body_bytes = 0
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {"requests": 0, "spans": 0, "bytes": 0}
    i = 0
    while i + 4 <= len(data):
        (length,) = struct.unpack_from("<I", data, i)
        body = data[i + 4:i + 4 + length]
        i += 4 + length
        requests += 1
        body_bytes += length
        for f1, _, rs in _fields(body):
            if f1 != 1 or rs is None:
                continue
            for f2, _, ss in _fields(rs):
                if f2 != 2 or ss is None:
                    continue
                spans += sum(1 for f3, _, _ in _fields(ss) if f3 == 2)
    return {"requests": requests, "spans": spans, "bytes": body_bytes}


# ----------------------------------------------------------------------------------------------
# Processes

def start_sim(binary, logdir):
    child = pb.Child("sim", [binary, "sim", "--listen", "127.0.0.1:0", "--log-level", "warn"], logdir)
    m = child.wait_for_line(r"listening grpc=([0-9.]+):(\d+)", 20)
    return child, f"{m.group(1)}:{m.group(2)}"


def start_proxy(binary, leg, upstream, tmp, otlp_port, pg_url=None, wrapper=(), start_timeout=20, extra=()):
    """`wrapper`: a command the proxy runs under, `extra`: more flags (bench/tracing_instructions.py's)."""
    argv = list(wrapper) + [binary, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
            "--log-level", "warn"]
    store = None
    if leg == "off":
        argv.append("--no-tracing")
    else:
        os.makedirs(os.path.join(tmp, leg), exist_ok=True)
        store = pg_url if leg == "on_pg" else os.path.join(tmp, leg, "traces.db")
        argv += ["--store", store, "--spool-dir", os.path.join(tmp, leg, "spool")]
        if leg == "on_otlp":
            argv += ["--otlp-endpoint", f"http://127.0.0.1:{otlp_port}/v1/traces", "--otlp-protocol", "http"]
    argv += list(extra)
    child = pb.Child(f"proxy_{leg}", argv, tmp)
    m = child.wait_for_line(r"listening grpc=([0-9.]+):(\d+) admin=([0-9.]+):(\d+)", start_timeout)
    return child, f"{m.group(1)}:{m.group(2)}", f"{m.group(3)}:{m.group(4)}", store, argv


def start_otlp_sink(tmp):
    child = pb.Child("otlp_sink", [sys.executable, os.path.abspath(__file__), "--serve-otlp-sink", tmp], tmp)
    port = int(child.wait_for_line(r"^listening (\d+)$", 15).group(1))
    return child, port


def thread_snapshot(pid):
    """{tid: {comm, cpu_s, rchar, wchar, syscr, syscw}} of every thread of a process. The proxy's
    threads all share one name, so the JSON keeps them by tid: the SQLite exporter is the thread
    that writes a lot with few calls in flight (see README)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{base}/stat") as f:
                data = f.read()
            rest = data[data.rindex(")") + 2:].split()
            rec = {"comm": data[data.index("(") + 1:data.rindex(")")],
                   "cpu_s": (int(rest[11]) + int(rest[12])) / pb.CLK_TCK}
            with open(f"{base}/io") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k in ("rchar", "wchar", "syscr", "syscw"):
                        rec[k] = int(v)
        except (OSError, ValueError):
            continue
        out[int(tid)] = rec
    return out


def thread_delta(before, after):
    """Per-thread use between two snapshots, busiest first."""
    rows = []
    for tid, a in after.items():
        b = before.get(tid, {})
        row = {"tid": tid, "comm": a["comm"]}
        for k in ("cpu_s", "rchar", "wchar", "syscr", "syscw"):
            if k in a:
                row[k] = round(a[k] - b.get(k, 0), 3) if k == "cpu_s" else a[k] - b.get(k, 0)
        rows.append(row)
    return sorted(rows, key=lambda r: -r.get("cpu_s", 0))


def check_loadgen(loadgen):
    """The Spark Connect workloads need the loadgen's --request-file & co. (added with this script)."""
    p = subprocess.run([loadgen, "client", "--target", "127.0.0.1:1", "--request-file", "/nonexistent",
                        "--mode", "unary"], capture_output=True, timeout=10)
    err = p.stderr.decode(errors="replace")
    if "unknown option" in err:
        raise HarnessError(f"{loadgen} predates --request-file/--method/--metadata/--fresh-uuid: rebuild it "
                           f"(cmake --build BUILD_DIR --target sparktrace-loadgen)")


# ----------------------------------------------------------------------------------------------
# One measurement

def busy_cpu_seconds():
    """CPU seconds the whole machine spent busy (all CPUs), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]) / pb.CLK_TCK


def own_cpu_seconds(pids):
    """CPU seconds of this script and of the long-lived processes it started."""
    t = os.times()
    total = t.user + t.system
    for pid in pids:
        st = pb._stat(pid)
        if st:
            total += st[1] / pb.CLK_TCK
    return total


def run_client(loadgen, target, wl, proxy_pid, sim_pid, settle=None, our_pids=()):
    """One client run. `settle(calls)`, for traced legs, waits until the proxy has exported the
    spans of these calls, so the proxy CPU delta includes the (asynchronous) export work of this
    run and none of it spills into the next run's delta."""
    argv = [loadgen, "client", "--target", target] + wl["args"]
    res = {"target": target}
    p_cpu0 = pb.tree_cpu_seconds(proxy_pid) if proxy_pid else None
    s_cpu0 = pb.tree_cpu_seconds(sim_pid)
    busy0, own0 = busy_cpu_seconds(), own_cpu_seconds(our_pids)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=wl["timeout"])
        out, rc, err = p.stdout.decode(errors="replace"), p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        rc, err = "timeout", f"client ran over {wl['timeout']}s and was killed"
    res["wall_s"] = round(time.monotonic() - t0, 3)
    res["sim_cpu_s"] = round(pb.tree_cpu_seconds(sim_pid) - s_cpu0, 3)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    client = json.loads(lines[0]) if lines else {}
    # CPU that neither the client nor anything this script started used during the run: other
    # work on the machine (builds, tests). A share of a core; above ~0.25 the run was disturbed.
    foreign = (busy_cpu_seconds() - busy0) - (own_cpu_seconds(our_pids) - own0) - client.get("client_cpu_s", 0)
    res["foreign_cpu_cores"] = round(max(foreign, 0) / max(res["wall_s"], 1e-3), 3)
    if settle:
        res.update(settle(client.get("calls_total") or 0))
    if proxy_pid:
        res["proxy_cpu_s"] = round(pb.tree_cpu_seconds(proxy_pid) - p_cpu0, 3)

    if not lines:
        res["error"] = f"client printed no result (rc={rc}): {err.strip()[-300:]}"
        return res
    res["client"] = client
    if "error" in client:
        res["error"] = client["error"]
    elif rc != 0:
        res["error"] = f"client rc={rc}: {client.get('first_error', err.strip()[-300:])}"
    calls = client.get("calls_total") or 0
    res["calls_total"] = calls
    if calls:
        if proxy_pid:
            res["proxy_cpu_us_per_call"] = res["proxy_cpu_s"] / calls * 1e6
        res["sim_cpu_us_per_call"] = res["sim_cpu_s"] / calls * 1e6
    if wl["kind"] == "execute":
        res["mb_per_s"] = client.get("bytes_per_s", 0) / 1e6
    return res


# ----------------------------------------------------------------------------------------------
# Metrics and store checks

METRIC_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)')


def read_metrics(admin):
    """{name: [(labels dict, value)]} from the proxy's /metrics, the sparktrace_* lines only."""
    with urllib.request.urlopen(f"http://{admin}/metrics", timeout=5) as r:
        text = r.read().decode(errors="replace")
    out = {}
    for line in text.splitlines():
        m = METRIC_RE.match(line)
        if not m or not m.group(1).startswith("sparktrace_") or m.group(1).endswith("_bucket"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def metric_sum(metrics, name, **want):
    return sum(v for labels, v in metrics.get(name, []) if all(labels.get(k) == w for k, w in want.items()))


def wait_exported(admin, sinks, expected, timeout):
    """Polls /metrics until every sink has exported (or dropped) `expected` spans in total."""
    t0 = time.monotonic()
    done, dropped = {}, {}
    while True:
        try:
            m = read_metrics(admin)
            dropped = {sink: int(metric_sum(m, "sparktrace_spans_dropped_total", sink=sink)) for sink in sinks}
            done = {sink: int(metric_sum(m, "sparktrace_spans_exported_total", sink=sink)) + dropped[sink]
                    for sink in sinks}
        except OSError:
            pass
        res = {"export_wait_s": round(time.monotonic() - t0, 3), "spans_dropped_so_far": dropped}
        if done and all(v >= expected for v in done.values()):
            return res
        if time.monotonic() - t0 > timeout:
            res["export_lag"] = f"after {timeout}s: {done} of {expected} spans exported or dropped"
            return res
        time.sleep(0.05)


def tracing_metrics(metrics):
    dropped = {}
    for labels, v in metrics.get("sparktrace_spans_dropped_total", []):
        dropped[f"{labels.get('sink')}/{labels.get('reason')}"] = int(v)
    return {
        "spans_exported": {l.get("sink"): int(v) for l, v in metrics.get("sparktrace_spans_exported_total", [])},
        "spans_dropped": dropped,
        "spans_dropped_reported": "sparktrace_spans_dropped_total" in metrics,
        "export_batches": {f"{l.get('sink')}/{l.get('result')}": int(v)
                           for l, v in metrics.get("sparktrace_span_export_batches_total", [])},
        "traced_calls": int(metric_sum(metrics, "sparktrace_traced_calls_total")),
        "undecodable_messages": int(metric_sum(metrics, "sparktrace_undecodable_messages_total")),
        "operations": {l.get("outcome"): int(v) for l, v in metrics.get("sparktrace_operations_total", [])},
        "operations_active": int(metric_sum(metrics, "sparktrace_operations_active")),
    }


# The span names the stores keep as one byte each (SQLite schema 16, PostgreSQL trace schema 11), read
# from their one definition, StoredWholeNames' table (append-only), to spell a store's names whole in SQL.
# A name of a build before them never starts with these bytes.
RPC = "spark.connect.SparkConnectService/"


def stored_whole_names():
    path = os.path.join(REPO, "tracing", "store", "span_rows", "compact_attribute_dictionary.cc")
    with open(path, encoding="utf-8") as source:
        names = {int(code, 16): name for code, name in re.findall(r"\{'\\x([0-9a-f]{2})', \"([^\"]+)\"\}", source.read())}
    if not names:
        raise RuntimeError(f"no stored whole names in {path}")
    return names


def name_sql(char):
    """SQL reading spans.name whole (StoredName undone: tracing/store/span_rows/stored_span.h); `char` is
    the backend's function from a code to its character ("char" in SQLite, "chr" in PostgreSQL)."""
    whole = " ".join(f"WHEN {char}({code}) THEN '{name}'" for code, name in stored_whole_names().items())
    return (f"CASE substr(name, 1, 1) WHEN {char}(1) THEN '{RPC}' || substr(name, 2) "
            f"WHEN {char}(2) THEN substr(name, 2) {whole} ELSE name END")


def read_pg_store(pg, database, sparktrace):
    """read_store's figures from the shared PostgreSQL store, through psql (attributes through sparktrace:
    compact bytea since trace schema 3)."""
    def one(sql):
        return pg.psql(sql, database=database)
    out = {"path": pg.url(database),
           "bytes": int(one("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                            "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'") or 0),
           "spans": int(one("SELECT count(*) FROM spans")), "traces": int(one("SELECT count(*) FROM traces"))}
    name = name_sql("chr")
    out["spans_by_name"] = {span_name: int(n) for span_name, n in
                            (line.split("|") for line in one(f"SELECT {name}, count(*) FROM spans GROUP BY 1").splitlines())}
    sample = {}
    for span_name in ("spark.connect.SparkConnectService/Config",
                      "spark.connect.SparkConnectService/ExecutePlan", "spark_connect.operation"):
        # Ids are hex text before trace schema 3, bytea ('\x…' as text) before 13, uuid (dashed) since:
        # any build can be the one measured, and a CASE over the types would fail to cast the others.
        row = one("SELECT translate(trace_id::text, '-\\x', '') "
                  f"FROM spans WHERE {name} = '{span_name}' LIMIT 1")
        sample[span_name] = sample_span_attributes(sparktrace, pg.url(database), row, span_name) if row else None
    out["sample_attributes"] = sample
    out["operation_ids_placeholder"] = int(one(f"SELECT count(*) FROM spans WHERE operation_id = '{OPERATION_PLACEHOLDER}'"))
    out["operation_ids_distinct"] = int(one(f"SELECT count(DISTINCT operation_id) FROM spans WHERE {name} = "
                                            "'spark_connect.operation'"))
    return out


def sample_span_attributes(sparktrace, path, trace_id, name):
    """One span's attributes as `sparktrace traces show` decodes them: the SQLite store keeps them in a
    compact binary form (schema version 6), which only sparktrace reads."""
    shown = subprocess.run([sparktrace, "traces", "show", "--store", path, "--json", trace_id],
                           capture_output=True, text=True, timeout=60, check=True)
    return next((span["attributes"] for span in json.loads(shown.stdout)["spans"] if span["name"] == name), None)


def read_store(path, sparktrace):
    """Span counts by name and a decoded-attributes sample from a (stopped) proxy's store."""
    out = {"path": path, "bytes": sum(os.path.getsize(path + s) for s in ("", "-wal", "-shm")
                                      if os.path.exists(path + s))}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        out["spans"] = con.execute("SELECT count(*) FROM spans").fetchone()[0]
        out["traces"] = con.execute("SELECT count(*) FROM traces").fetchone()[0]
        name = name_sql("char")
        out["spans_by_name"] = dict(con.execute(f"SELECT {name}, count(*) FROM spans GROUP BY 1"))
        sample = {}
        for span_name in ("spark.connect.SparkConnectService/Config",
                          "spark.connect.SparkConnectService/ExecutePlan", "spark_connect.operation"):
            # Ids are BLOBs from trace schema 10 on, hex text before: either build can be the one measured.
            row = con.execute("SELECT CASE WHEN typeof(trace_id) = 'blob' THEN lower(hex(trace_id)) ELSE trace_id END "
                              f"FROM spans WHERE {name} = ? LIMIT 1", (span_name,)).fetchone()
            sample[span_name] = sample_span_attributes(sparktrace, path, row[0], span_name) if row else None
        out["sample_attributes"] = sample
        out["operation_ids_placeholder"] = con.execute(
            "SELECT count(*) FROM spans WHERE operation_id = ?", (OPERATION_PLACEHOLDER,)).fetchone()[0]
        out["operation_ids_distinct"] = con.execute(
            f"SELECT count(DISTINCT operation_id) FROM spans WHERE {name} = 'spark_connect.operation'").fetchone()[0]
    finally:
        con.close()
    return out


def _attr(attrs, key):
    """A value from the store's attribute JSON, whatever shape a value takes there."""
    if not isinstance(attrs, dict):
        return None
    v = attrs.get(key)
    if isinstance(v, dict) and len(v) == 1:
        v = next(iter(v.values()))
    return v


def checks_for(leg, expected_spans, metrics, store, otlp):
    """Did the tracer record what it was asked to? A bench of a tracer that dropped spans lies."""
    checks = []

    def check(name, ok, detail):
        checks.append({"leg": leg, "name": name, "ok": bool(ok), "detail": detail})

    tm = metrics or {}
    dropped = sum((tm.get("spans_dropped") or {}).values())
    check("spans_dropped_reported", tm.get("spans_dropped_reported"),
          "sparktrace_spans_dropped_total present in /metrics" if tm.get("spans_dropped_reported")
          else "sparktrace_spans_dropped_total missing from /metrics")
    check("no_spans_dropped", tm and dropped == 0, f"sparktrace_spans_dropped_total = {tm.get('spans_dropped')}")
    check("no_undecodable_messages", tm and tm.get("undecodable_messages") == 0,
          f"sparktrace_undecodable_messages_total = {tm.get('undecodable_messages')}")
    sink = STORE_SINK[leg]
    exported = (tm.get("spans_exported") or {}).get(sink)
    check("store_has_every_span", store and store.get("spans") == expected_spans == exported,
          f"expected {expected_spans} (calls made x spans per call), exported({sink}) {exported}, "
          f"rows in store {store.get('spans') if store else None}")
    if store:
        cfg = store["sample_attributes"].get("spark.connect.SparkConnectService/Config")
        exe = store["sample_attributes"].get("spark.connect.SparkConnectService/ExecutePlan")
        op = store["sample_attributes"].get("spark_connect.operation")
        decoded = (_attr(cfg, "spark.connect.config.operation") == "get"
                   and _attr(cfg, "spark.connect.session_id") == SESSION_ID
                   and str(_attr(exe, "spark.connect.response.batches")) == str(EXEC_BATCHES)
                   and _attr(op, "spark.connect.operation.outcome") == "completed")
        check("requests_decoded", decoded and store["operation_ids_placeholder"] == 0,
              f"Config span config.operation={_attr(cfg, 'spark.connect.config.operation')!r}; ExecutePlan span "
              f"response.batches={_attr(exe, 'spark.connect.response.batches')!r}; operation outcome="
              f"{_attr(op, 'spark.connect.operation.outcome')!r}; distinct operation ids "
              f"{store['operation_ids_distinct']}, placeholder ids {store['operation_ids_placeholder']}")
    if otlp is not None:
        o_exp = (tm.get("spans_exported") or {}).get("otlp")
        check("otlp_sink_has_every_span", otlp["spans"] == expected_spans == o_exp,
              f"expected {expected_spans}, exported(otlp) {o_exp}, received by the sink {otlp['spans']} "
              f"in {otlp['requests']} request(s)")
    return checks


# ----------------------------------------------------------------------------------------------
# Aggregation

FIGURES = {
    "unary": ["p50_us", "p90_us", "p99_us", "calls_per_s", "proxy_cpu_us_per_call", "sim_cpu_us_per_call",
              "client_cpu_s"],
    "execute": ["p50_us", "p99_us", "calls_per_s", "mb_per_s", "proxy_cpu_us_per_call", "sim_cpu_us_per_call",
                "client_cpu_s"],
}


def figure(run, key):
    if run is None or "error" in run:
        return None
    return run[key] if key in run else run.get("client", {}).get(key)


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


RATIO_PAIRS = (("on_vs_off", "on", "off"), ("on_vs_direct", "on", "direct"), ("off_vs_direct", "off", "direct"),
               ("on_pg_vs_off", "on_pg", "off"), ("on_otlp_vs_off", "on_otlp", "off"),
               ("on_otlp_vs_on", "on_otlp", "on"))


def aggregate(raw, wls, legs):
    medians, ratios, added = {}, {}, {}
    for wl in wls:
        name, keys = wl["name"], FIGURES[wl["kind"]]
        medians[name] = {}
        for leg in legs:
            runs = raw[name][leg]
            medians[name][leg] = {k: median_or_none([figure(r, k) for r in runs]) for k in keys}
            medians[name][leg]["ok_rounds"] = sum(1 for r in runs if "error" not in r)
        ratios[name] = {}
        for label, a, b in RATIO_PAIRS:
            if a in legs and b in legs:
                ratios[name][label] = {k: ratio(medians[name][a][k], medians[name][b][k]) for k in keys
                                       if k not in ("client_cpu_s",)}
        # What tracing adds, paired per round (same round = same machine state), then the median.
        added[name] = {}
        for leg in TRACED_LEGS:
            if leg not in legs:
                continue
            for key in ("p50_us", "p99_us", "proxy_cpu_us_per_call"):
                diffs = [figure(t, key) - figure(o, key) for o, t in zip(raw[name]["off"], raw[name][leg])
                         if figure(o, key) is not None and figure(t, key) is not None]
                added[name].setdefault(f"{leg}_minus_off", {})[key] = median_or_none(diffs)
                added[name][f"{leg}_minus_off"][f"{key}_rounds"] = [round(d, 2) for d in diffs]
    return medians, ratios, added


# ----------------------------------------------------------------------------------------------
# Report

TABLE = [
    ("config_c1", "p50_us", "p50 latency (us)", "num"),
    ("config_c1", "p99_us", "p99 latency (us)", "num"),
    ("config_c1", "calls_per_s", "calls/s", "int"),
    ("config_c1", "proxy_cpu_us_per_call", "proxy CPU (us/call)", "num"),
    ("config_c16", "p50_us", "p50 latency (us)", "num"),
    ("config_c16", "p99_us", "p99 latency (us)", "num"),
    ("config_c16", "calls_per_s", "calls/s", "int"),
    ("config_c16", "proxy_cpu_us_per_call", "proxy CPU (us/call)", "num"),
    ("execute_c4", "calls_per_s", "operations/s", "num"),
    ("execute_c4", "p50_us", "p50 operation (us)", "num"),
    ("execute_c4", "p99_us", "p99 operation (us)", "num"),
    ("execute_c4", "mb_per_s", "MB/s", "num"),
    ("execute_c4", "proxy_cpu_us_per_call", "proxy CPU (us/operation)", "num"),
]
TITLES = {
    "config_c1": "Config (unary), concurrency 1",
    "config_c16": "Config (unary), concurrency 16",
    "execute_c4": f"ExecutePlan, {EXEC_BATCHES} x {EXEC_BATCH_BYTES >> 10} KiB batches, concurrency 4",
}


def fmt(v, kind):
    if v is None:
        return "-"
    if kind == "ratio":
        return f"{v:.2f}x"
    if kind == "int":
        return f"{v:,.0f}"
    if kind == "mib":
        return f"{v / 1024:,.1f} MiB"
    return f"{v:,.1f}"


def print_report(medians, ratios, added, legs, rounds, rss, checks, tracing, threads):
    ratio_cols = [c for c in (("on/off", "on_vs_off"), ("on/direct", "on_vs_direct"), ("pg/off", "on_pg_vs_off"),
                              ("otlp/off", "on_otlp_vs_off")) if c[1].split("_vs_")[0] in legs]
    cols = list(legs) + [c[0] for c in ratio_cols]
    head = f"{'medians over ' + str(rounds) + ' round(s)':<30}" + "".join(f"{c:>12}" for c in cols)
    out = ["", head, "-" * len(head)]
    last = None
    for wl, key, label, kind in TABLE:
        if wl not in medians:
            continue
        if wl != last:
            out.append(TITLES[wl])
            last = wl
        row = f"  {label:<28}"
        for leg in legs:
            row += f"{fmt(medians[wl][leg].get(key), kind):>12}"
        for _, rk in ratio_cols:
            row += f"{fmt(ratios[wl].get(rk, {}).get(key), 'ratio'):>12}"
        out.append(row)
    out.append("proxy memory")
    for key, label in (("rss_start_kib", "VmRSS at start"), ("rss_end_kib", "VmRSS after the run"),
                       ("pss_end_kib", "Pss after the run")):
        row = f"  {label:<28}{'-':>12}"
        for leg in legs[1:]:
            row += f"{fmt(rss.get(leg, {}).get(key), 'mib'):>12}"
        on, off = rss.get("on", {}).get(key), rss.get("off", {}).get(key)
        row += f"{fmt(ratio(on, off), 'ratio'):>12}"
        out.append(row)

    out += ["", "proxy threads, whole run incl. warm-up (CPU s / MB written by write syscalls, busiest first)"]
    for leg in legs[1:]:
        rows = (threads.get(leg) or [])[:3]
        out.append(f"  {leg:<8} " + ", ".join(f"tid {r['tid']}: {r.get('cpu_s', 0):.2f}s / {r.get('wchar', 0) / 1e6:,.0f} MB"
                                              for r in rows))

    out += ["", "tracing's added cost (on - off, paired per round, median)"]
    for wl in medians:
        a = added.get(wl, {}).get("on_minus_off", {})
        b = added.get(wl, {}).get("on_otlp_minus_off", {})
        g = added.get(wl, {}).get("on_pg_minus_off", {})
        unit = "operation" if wl.startswith("execute") else "call"
        line = (f"  {wl:<12} p50 {fmt(a.get('p50_us'), 'num'):>8} us   proxy CPU "
                f"{fmt(a.get('proxy_cpu_us_per_call'), 'num'):>7} us/{unit}")
        if g:
            line += (f"   (PostgreSQL: p50 {fmt(g.get('p50_us'), 'num')} us, CPU "
                     f"{fmt(g.get('proxy_cpu_us_per_call'), 'num')} us/{unit})")
        if b:
            line += (f"   (+otlp: p50 {fmt(b.get('p50_us'), 'num')} us, CPU "
                     f"{fmt(b.get('proxy_cpu_us_per_call'), 'num')} us/{unit})")
        out.append(line)

    out += ["", "tracer checks (the traced legs must have recorded every span)"]
    for leg, t in tracing.items():
        m = t.get("metrics") or {}
        st = t.get("store") or {}
        out.append(f"  {leg}: spans expected {t.get('expected_spans')}, exported {m.get('spans_exported')}, "
                   f"dropped {m.get('spans_dropped')}, rows in store {st.get('spans')} "
                   f"({fmt(st.get('bytes', 0) / 1024, 'mib') if st else '-'})"
                   + (f", OTLP sink received {t['otlp_sink']['spans']} spans in {t['otlp_sink']['requests']} "
                      f"POSTs" if t.get("otlp_sink") else ""))
    for c in checks:
        out.append(f"  {'PASS' if c['ok'] else 'FAIL'}  {c['leg']:<8} {c['name']}: {c['detail']}")
    print("\n".join(out), flush=True)


# ----------------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    p.add_argument("--quick", action="store_true", help="1 round, short runs, no warm-up pass: a smoke test")
    p.add_argument("--rounds", type=int, help="rounds (default 5, or 1 with --quick)")
    p.add_argument("--skip-otlp", action="store_true", help="leave out the on_otlp leg")
    p.add_argument("--skip-postgres", action="store_true", help="leave out the on_pg leg (PostgreSQL store)")
    p.add_argument("--sparktrace-bin", help="default BUILD_DIR/sparktrace")
    p.add_argument("--loadgen-bin", help="default BUILD_DIR/sparktrace-loadgen")
    p.add_argument("--output", default=os.path.join(REPO, "bench", "results", "tracing.json"))
    p.add_argument("--max-minutes", type=float, default=15,
                   help="stop starting new rounds after this long (default 15)")
    p.add_argument("--keep-temp", action="store_true", help="keep the temp dir (logs, stores, sink file)")
    p.add_argument("--serve-otlp-sink", metavar="DIR", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    if not 1 <= args.rounds <= 50:
        p.error("--rounds must be 1..50")
    return args


def main(argv):
    args = parse_args(argv)
    if args.serve_otlp_sink:
        return serve_otlp_sink(args.serve_otlp_sink)
    build = os.path.abspath(args.build_dir)
    loadgen = pb.find_binary(args.loadgen_bin, [os.path.join(build, "sparktrace-loadgen"),
                                                os.path.join(build, "bench", "sparktrace-loadgen")], "loadgen")
    if not loadgen:
        raise HarnessError(f"sparktrace-loadgen not found in {build}: "
                           f"run `cmake --build {args.build_dir} --target sparktrace-loadgen`")
    sparktrace = pb.find_binary(args.sparktrace_bin, [os.path.join(build, "sparktrace")], "sparktrace")
    if not sparktrace:
        raise HarnessError(f"{build}/sparktrace not found: build it")
    check_loadgen(loadgen)
    legs = tuple(l for l in LEGS if not (args.skip_otlp and l == "on_otlp") and not (args.skip_postgres and l == "on_pg"))

    info = pb.machine_info(loadgen, sparktrace, None, build)
    info.pop("nginx", None)
    # The tree may be dirty and rebuilt between runs: say which binaries were measured.
    for key, path in (("sparktrace_binary", sparktrace), ("loadgen_binary", loadgen)):
        st = os.stat(path)
        info[key] = {"path": path, "size": st.st_size,
                     "mtime": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(st.st_mtime))}
    info["git_dirty"] = bool(pb.command_output(["git", "-C", REPO, "status", "--porcelain"]))
    if info["loadavg_at_start"][0] > 2.5:
        log(f"warning: load average {info['loadavg_at_start'][0]:.2f} at start; figures will be noisy")
    tmp = tempfile.mkdtemp(prefix="sparktrace-tracing-bench-")
    try:
        return measure(args, tmp, loadgen, sparktrace, legs, info)
    finally:
        for pg in PG_SERVERS:
            pg.cleanup()
        if args.keep_temp:
            log(f"temp dir kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def measure(args, tmp, loadgen, sparktrace, legs, info):
    """Starts everything, runs the rounds, checks the tracers, writes the report."""
    started = time.monotonic()
    files = {"config": os.path.join(tmp, "config.bin"), "execute": os.path.join(tmp, "execute.bin")}
    with open(files["config"], "wb") as f:
        f.write(config_request())
    with open(files["execute"], "wb") as f:
        f.write(execute_plan_request())
    wls = workloads(args.quick, files)

    children = []
    pg = pg_database = None
    raw = {wl["name"]: {leg: [] for leg in legs} for wl in wls}
    warm = {wl["name"]: {leg: [] for leg in legs} for wl in wls}
    errors, endpoints, argvs, rss, tracing, threads = [], {}, {}, {}, {}, {}
    rounds_done = 0
    proxies = {}
    try:
        sim, sim_target = start_sim(sparktrace, tmp)
        children.append(sim)
        endpoints["sim"] = sim_target
        otlp_port = None
        sink = None
        pg_url = None
        if "on_pg" in legs:
            # Its own temp dir: the cluster's user (postgres, when we are root) cannot enter ours.
            pg = PostgresServer()
            PG_SERVERS.append(pg)  # stopped by main()
            pg.start()
            pg_database = pg.create_database("bench")
            pg_url = pg.url(pg_database)
        if "on_otlp" in legs:
            sink, otlp_port = start_otlp_sink(tmp)
            children.append(sink)
            endpoints["otlp_sink"] = f"http://127.0.0.1:{otlp_port}/v1/traces"
        targets = {"direct": sim_target}
        for leg in PROXY_LEGS:
            if leg not in legs:
                continue
            child, grpc_ep, admin, store, argv = start_proxy(sparktrace, leg, sim_target, tmp, otlp_port, pg_url)
            children.append(child)
            proxies[leg] = dict(child=child, admin=admin, store=store)
            targets[leg] = grpc_ep
            endpoints[leg] = {"grpc": grpc_ep, "admin": admin}
            argvs[leg] = argv
        time.sleep(0.5)
        threads0 = {}
        for leg in proxies:
            m = pb.tree_memory(proxies[leg]["child"].pid)
            rss[leg] = {"rss_start_kib": m["rss_kib"], "pss_start_kib": m["pss_kib"]}
            threads0[leg] = thread_snapshot(proxies[leg]["child"].pid)
        log(f"legs: {', '.join(f'{l}={targets[l]}' for l in legs)}; {args.rounds} round(s)")

        spans_sent = {leg: 0 for leg in TRACED_LEGS}

        def settler(leg, wl):
            if leg not in TRACED_LEGS:
                return None
            sinks = (STORE_SINK[leg], "otlp") if leg == "on_otlp" else (STORE_SINK[leg],)

            def settle(calls):
                spans_sent[leg] += calls * wl["spans_per_call"]
                # --span-batch-delay is 1 s; 10 s means the exporter is far behind.
                return wait_exported(proxies[leg]["admin"], sinks, spans_sent[leg], 10)
            return settle

        def one(wl, leg, rnd, sink_dict):
            proxy = proxies.get(leg)
            if proxy and not proxy["child"].alive():
                run = {"error": f"proxy {leg} is not running (exit {proxy['child'].proc.returncode}): "
                                f"{proxy['child'].log_tail(3)}"}
            else:
                run = run_client(loadgen, targets[leg], wl, proxy["child"].pid if proxy else None, sim.pid,
                                 settler(leg, wl), [c.pid for c in children])
                if "export_lag" in run:
                    errors.append(f"round {rnd} {wl['name']} {leg}: export lag: {run['export_lag']}")
            run["round"] = rnd
            sink_dict[wl["name"]][leg].append(run)
            if "error" in run:
                errors.append(f"round {rnd} {wl['name']} {leg}: {run['error']}")
                log(f"round {rnd} {wl['name']:<10} {leg:<8} ERROR {run['error']}")
            else:
                log(f"round {rnd} {wl['name']:<10} {leg:<8} {summary(wl['kind'], run)}")

        # Warm-up pass: first calls on fresh processes (store creation, pools) are not measured.
        if not args.quick:
            for wl in wls:
                for leg in legs:
                    one(warmup_variant(wl), leg, -1, warm)
        for rnd in range(args.rounds):
            if time.monotonic() - started > args.max_minutes * 60:
                errors.append(f"stopped after {rnd} round(s): --max-minutes {args.max_minutes} reached")
                break
            if not sim.alive():
                raise HarnessError(f"sim exited (rc={sim.proc.returncode}): {sim.log_tail()}")
            # Legs alternate order (ABBA): drift over a round does not always favour the same leg.
            order = legs if rnd % 2 == 0 else tuple(reversed(legs))
            for wl in wls:
                for leg in order:
                    one(wl, leg, rnd, raw)
                    if time.monotonic() - started > args.max_minutes * 60 + 300:
                        raise HarnessError("benchmark ran far over --max-minutes; giving up")
            rounds_done = rnd + 1

        # Memory after the run, then the tracers' own account (every run already waited for its
        # spans to be exported).
        for leg, proxy in proxies.items():
            if proxy["child"].alive():
                m = pb.tree_memory(proxy["child"].pid)
                rss[leg].update(rss_end_kib=m["rss_kib"], pss_end_kib=m["pss_kib"])
        time.sleep(0.5)
        for leg, proxy in proxies.items():
            if proxy["child"].alive():
                threads[leg] = thread_delta(threads0[leg], thread_snapshot(proxy["child"].pid))
        for leg in TRACED_LEGS:
            if leg in proxies and proxies[leg]["child"].alive():
                try:
                    tracing.setdefault(leg, {})["metrics"] = tracing_metrics(read_metrics(proxies[leg]["admin"]))
                except OSError as e:
                    errors.append(f"{leg}: /metrics unreadable: {e}")
    finally:
        for child in reversed(children):
            child.stop()

    # Stopped (SIGTERM exports every queue); now the stores and the sink's file are complete.
    checks = []
    for leg in TRACED_LEGS:
        if leg not in proxies:
            continue
        t = tracing.setdefault(leg, {})
        t["expected_spans"] = sum(r.get("calls_total", 0) * wl["spans_per_call"]
                                  for wl in wls for runs in (raw[wl["name"]][leg], warm[wl["name"]][leg])
                                  for r in runs)
        try:
            t["store"] = read_pg_store(pg, pg_database, sparktrace) if leg == "on_pg" else read_store(proxies[leg]["store"], sparktrace)
        except (sqlite3.Error, OSError, RuntimeError, ValueError) as e:
            errors.append(f"{leg}: store unreadable: {e}")
        if leg == "on_otlp":
            t["otlp_sink"] = count_otlp_spans(os.path.join(tmp, "otlp-bodies.bin"))
        checks += checks_for(leg, t["expected_spans"], t.get("metrics"), t.get("store"), t.get("otlp_sink"))

    medians, ratios, added = aggregate(raw, wls, legs)
    disturbed = [f"round {r['round']} {wl['name']} {leg}: {r['foreign_cpu_cores']:.2f} cores"
                 for wl in wls for leg in legs for r in raw[wl["name"]][leg] if r.get("foreign_cpu_cores", 0) > 0.25]
    info["loadavg_at_end"] = os.getloadavg()
    result = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.monotonic() - started, 1),
        "rounds": rounds_done,
        "config": {
            "quick": args.quick, "rounds_requested": args.rounds, "legs": list(legs),
            "order": "legs alternate order per round (even rounds as listed, odd rounds reversed)",
            "warmup_pass": not args.quick,
            "workloads": {wl["name"]: wl["args"] for wl in wls},
            "requests": {"config_hex": config_request().hex(), "execute_plan_hex": execute_plan_request().hex(),
                         "operation_id_placeholder": OPERATION_PLACEHOLDER},
            "proxy_argv": argvs,
            "endpoints": endpoints,
            "units": {"latency": "microseconds", "proxy_cpu_us_per_call": "proxy CPU us per call (unary) or "
                      "per ExecutePlan operation, warm-up calls included", "mb_per_s": "1e6 bytes/s",
                      "rss": "KiB"},
        },
        "legs": {leg: {"endpoint": targets.get(leg) if leg in targets else None,
                       "medians": {wl["name"]: medians[wl["name"]][leg] for wl in wls},
                       "memory": rss.get(leg),
                       "threads": threads.get(leg),
                       "tracing": tracing.get(leg),
                       "runs": {wl["name"]: raw[wl["name"]][leg] for wl in wls},
                       "warmup_runs": {wl["name"]: warm[wl["name"]][leg] for wl in wls}} for leg in legs},
        "ratios": {**ratios, "memory": {"rss_end_on_vs_off": ratio(rss.get("on", {}).get("rss_end_kib"),
                                                                    rss.get("off", {}).get("rss_end_kib")),
                                        "rss_end_on_otlp_vs_off": ratio(
                                            rss.get("on_otlp", {}).get("rss_end_kib"),
                                            rss.get("off", {}).get("rss_end_kib"))}},
        "added": added,
        "checks": checks,
        "disturbed_runs": disturbed,
        "errors": errors,
        "environment": info,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp_out = args.output + ".tmp"
    with open(tmp_out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp_out, args.output)

    print_report(medians, ratios, added, legs, rounds_done, rss, checks, tracing, threads)
    n_runs = sum(len(raw[wl["name"]][leg]) for wl in wls for leg in legs)
    print(f"\nother work on the machine took > 0.25 cores during {len(disturbed)} of {n_runs} runs"
          + (": " + "; ".join(disturbed[:8]) + (" ..." if len(disturbed) > 8 else "") if disturbed else ""))
    if errors:
        print(f"\n{len(errors)} run error(s):", *(f"  {e}" for e in errors[:20]), sep="\n")
    print(f"\nwrote {os.path.relpath(args.output)} in {result['duration_s']:.0f}s", flush=True)
    return 0


def summary(kind, run):
    c = run.get("client", {})
    s = f"p50 {c.get('p50_us', 0):8.1f}us p99 {c.get('p99_us', 0):8.1f}us {c.get('calls_per_s', 0):8.0f}/s"
    if kind == "execute":
        s += f" {run.get('mb_per_s', 0):6.0f} MB/s"
    if "proxy_cpu_us_per_call" in run:
        s += f" proxy {run['proxy_cpu_us_per_call']:.1f}us/call"
    if "export_wait_s" in run:
        s += f" (export wait {run['export_wait_s']:.2f}s)"
    if any(run.get("spans_dropped_so_far", {}).values()):
        s += f" DROPPED so far: {run['spans_dropped_so_far']}"
    if run.get("foreign_cpu_cores", 0) > 0.25:
        s += f" [other work on the machine: {run['foreign_cpu_cores']:.2f} cores]"
    return s


def _on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


if __name__ == "__main__":
    if "--serve-otlp-sink" in sys.argv:
        sys.exit(main(sys.argv[1:]))
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    try:
        sys.exit(main(sys.argv[1:]))
    except HarnessError as e:
        print(f"tracing_bench: harness error: {e}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as e:
        print(f"tracing_bench: interrupted ({e}); children stopped", file=sys.stderr)
        sys.exit(130)
