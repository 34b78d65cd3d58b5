#!/usr/bin/env python3
"""Side-by-side benchmark of sparktrace against a direct connection and nginx.

Starts one upstream (`sparktrace-loadgen server`), sparktrace and nginx in front of it, and runs
the same `sparktrace-loadgen client` workloads against all three, interleaved round by round.
Optional phases on fresh proxy processes afterwards: --scaling (unary throughput by worker
count) and --slow-reader-gib (memory while a slow client reads one long stream).
Writes bench/results/proxy.json and prints a table with PASS/FAIL per target.

Exit status: 0 when the benchmark ran (whatever the verdicts), 2 on a harness error (a tool is
missing, the upstream or a proxy would not start), 130 when interrupted.

Run with Debian's /usr/bin/python3; only the standard library is used.
"""

import argparse
import json
import os
import platform
import re
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
LEGS = ("direct", "sparktrace", "nginx")

GIB = 1 << 30
# Target thresholds (see bench/README.md).
STREAM_MIN_VS_DIRECT = 0.8
STREAM_MIN_VS_NGINX = 1.0
IDLE_RSS_MAX_MIB = 64
SCALING_MIN_SPEEDUP = 3.0           # unary_c64 calls/s with 4 workers / with 1
SCALING_WORKERS = (1, 4)            # the worker counts the scaling target compares
SCALING_MIN_CPUS = 8                # fewer usable CPUs: the scaling target is SKIP
SLOW_READER_MAX_GROWTH_MIB = 8      # max RSS after the first GiB read - RSS at the first GiB
SLOW_READER_MAX_RSS_MIB = 64
SLOW_READER_MESSAGE_BYTES = 4 * MIB
SLOW_READER_SAMPLE_S = 0.25
SLOW_READER_DEFAULT_RATE = "512m"   # bytes/s the slow client reads at: 10 GiB in 20 s
# The nginx buffer for reading upstream responses; see README ("nginx configuration").
NGINX_GRPC_BUFFER = "64k"


class HarnessError(Exception):
    """Something the benchmark itself needs is missing or broken."""


class Interrupted(Exception):
    pass


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Workloads. Each is one `sparktrace-loadgen client` run per leg per round.

def workloads(quick, idle_streams):
    u_dur, u_warm = (0.5, 0.2) if quick else (2.0, 0.5)
    s_dur = 0.5 if quick else 2.0
    big_msgs, small_msgs = (8, 512) if quick else (32, 2048)  # 32 MiB / 32 MiB vs 128 MiB / 128 MiB per call
    return [
        dict(name="unary_c1", kind="unary",
             args=["--mode", "unary", "--concurrency", "1", "--duration", str(u_dur), "--warmup", str(u_warm)],
             timeout=u_dur + u_warm + 40),
        dict(name="unary_c16", kind="unary",
             args=["--mode", "unary", "--concurrency", "16", "--duration", str(u_dur), "--warmup", str(u_warm)],
             timeout=u_dur + u_warm + 40),
        dict(name="stream_4m", kind="stream",
             args=["--mode", "stream", "--message-bytes", str(4 * MIB), "--messages", str(big_msgs),
                   "--duration", str(s_dur)],
             timeout=s_dur + 80),
        dict(name="stream_64k", kind="stream",
             args=["--mode", "stream", "--message-bytes", str(64 << 10), "--messages", str(small_msgs),
                   "--duration", str(s_dur)],
             timeout=s_dur + 80),
        dict(name="idle", kind="idle",
             args=["--mode", "idle", "--streams", str(idle_streams), "--establish-timeout", "30",
                   "--hold-max", "120"],
             timeout=60),
    ]


def scaling_workload(quick):
    """unary_c64: 64 calls in flight over 8 connections, so SO_REUSEPORT spreads them over workers."""
    u_dur, u_warm = (0.5, 0.2) if quick else (2.0, 0.5)
    return dict(name="unary_c64", kind="unary",
                args=["--mode", "unary", "--concurrency", "64", "--streams-per-channel", "8",
                      "--duration", str(u_dur), "--warmup", str(u_warm)],
                timeout=u_dur + u_warm + 40)


# ----------------------------------------------------------------------------------------------
# /proc accounting

def _stat(pid):
    """(ppid, utime+stime in ticks) of one process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[11]) + int(rest[12])


def process_tree(root):
    """root and all its descendants that are alive now."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st:
                children.setdefault(st[0], []).append(int(entry))
    tree, todo = [], [root]
    while todo and len(tree) < 10000:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def tree_cpu_seconds(root):
    """User + system CPU seconds of root and its descendants (all threads included)."""
    total = 0
    for pid in process_tree(root):
        st = _stat(pid)
        if st:
            total += st[1]
    return total / CLK_TCK


def vm_rss_kib(pid):
    """VmRSS of one process in KiB, or None if it is gone (cheaper than tree_memory's Pss)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def tree_rss_kib(root):
    """VmRSS summed over root and its descendants in KiB, None if root is gone."""
    if vm_rss_kib(root) is None:
        return None
    return sum(vm_rss_kib(pid) or 0 for pid in process_tree(root))


def tree_memory(root):
    """VmRSS and Pss summed over root and its descendants, in KiB, and the process count."""
    rss = pss = 0
    pids = process_tree(root)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return {"rss_kib": rss, "pss_kib": pss, "processes": len(pids)}


# ----------------------------------------------------------------------------------------------
# Child processes

def read_line(fd, buf, deadline):
    """Next line from a pipe fd, or None on EOF or deadline. buf is a bytearray kept by the caller."""
    while True:
        nl = buf.find(b"\n")
        if nl >= 0:
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            return line.decode(errors="replace")
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            buf.extend(chunk)


class Child:
    """A long-lived process in its own session, its stderr (and stdout once ready) in a log file."""

    def __init__(self, name, argv, logdir):
        self.name = name
        self.argv = argv
        self.log_path = os.path.join(logdir, f"{name}.log")
        self._log = open(self.log_path, "ab")
        self._buf = bytearray()
        log(f"starting {name}: {' '.join(argv)}")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._log, start_new_session=True)
        self.pid = self.proc.pid

    def wait_for_line(self, pattern, timeout):
        """Reads stdout until a line matches; then hands stdout to a drain thread."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            line = read_line(self.proc.stdout.fileno(), self._buf, deadline)
            if line is None:
                raise HarnessError(f"{self.name} did not print a line matching {pattern!r} within "
                                   f"{timeout}s (exit={self.proc.poll()}); stdout so far: {seen[-5:]}; "
                                   f"log tail: {self.log_tail()}")
            seen.append(line)
            m = re.search(pattern, line)
            if m:
                self._log.write(("\n".join(seen) + "\n").encode())
                self._log.flush()
                threading.Thread(target=self._drain, daemon=True).start()
                return m

    def _drain(self):
        fd = self.proc.stdout.fileno()
        try:
            if self._buf:
                self._log.write(self._buf)
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self._log.write(chunk)
                self._log.flush()
        except (OSError, ValueError):
            pass

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, lines=8):
        try:
            with open(self.log_path, "rb") as f:
                return " | ".join(f.read().decode(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        try:
            # nginx workers (same process group) can outlive a killed master.
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# ----------------------------------------------------------------------------------------------
# The three legs

def start_upstream(loadgen, logdir):
    child = Child("upstream", [loadgen, "server", "--listen", "127.0.0.1:0"], logdir)
    port = int(child.wait_for_line(r"^listening (\d+)$", 15).group(1))
    return child, port


def start_sparktrace(binary, upstream_port, logdir, threads, name="sparktrace"):
    child = Child(name, [binary, "proxy", "--upstream", f"127.0.0.1:{upstream_port}",
                         "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
                         # N relay workers, each its own event loop and SO_REUSEPORT listener.
                         "--threads", str(threads),
                         # Forwarding alone, as nginx does; tracing_bench.py measures tracing.
                         "--no-tracing", "--log-level", "warn"], logdir)
    m = child.wait_for_line(r"listening grpc=([0-9.]+):(\d+) admin=([0-9.]+):(\d+)", 20)
    return child, f"{m.group(1)}:{m.group(2)}", f"{m.group(3)}:{m.group(4)}"


def nginx_reuseport(workers):
    """More than one worker: one SO_REUSEPORT listener per worker, as sparktrace has."""
    return str(workers) != "1"


def nginx_config(tmp, port, upstream_port, workers, grpc_buffer):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nofile = 16384 if hard == resource.RLIM_INFINITY else min(16384, hard)
    reuseport = " reuseport" if nginx_reuseport(workers) else ""
    return f"""# Generated by bench/proxy_bench.py; see bench/README.md for the reasoning.
worker_processes {workers};
worker_rlimit_nofile {nofile};
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
daemon off;
master_process on;

events {{
    # 1000 idle streams through nginx hold 1000 upstream connections (one per stream).
    worker_connections {max(1024, nofile // 2)};
}}

http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;

    upstream loadgen {{
        server 127.0.0.1:{upstream_port};
        # Reuse upstream connections instead of a TCP + HTTP/2 handshake per call.
        keepalive 64;
        keepalive_requests 1000000;
        keepalive_timeout 300s;
    }}

    server {{
        listen 127.0.0.1:{port} http2{reuseport};
        # Default 1000 would send GOAWAY mid-run and force client reconnects.
        keepalive_requests 1000000;
        keepalive_timeout 300s;
        client_max_body_size 0;
        client_body_timeout 300s;

        location / {{
            grpc_pass grpc://loadgen;
            # Responses are passed on unbuffered; this is the read buffer for upstream data.
            grpc_buffer_size {grpc_buffer};
            grpc_connect_timeout 5s;
            grpc_read_timeout 300s;
            grpc_send_timeout 300s;
        }}
    }}
}}
"""


def start_nginx(binary, upstream_port, tmp, workers, grpc_buffer, name="nginx"):
    """tmp: a directory of this instance's own (config, pid file, temp paths, logs)."""
    os.makedirs(tmp, exist_ok=True)
    os.chmod(tmp, 0o755)  # workers run as an unprivileged user when the master is root
    last = ""
    for attempt in range(3):  # the free port can be taken between probe and bind
        port = free_port()
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(nginx_config(tmp, port, upstream_port, workers, grpc_buffer))
        child = Child(f"{name}-{attempt}", [binary, "-p", tmp, "-c", conf, "-e",
                                           os.path.join(tmp, "nginx-error.log")], tmp)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and child.alive():
            if port_open(port) and len(process_tree(child.pid)) > 1:
                threading.Thread(target=child._drain, daemon=True).start()
                return child, f"127.0.0.1:{port}"
            time.sleep(0.1)
        last = child.log_tail()
        try:
            with open(os.path.join(tmp, "nginx-error.log")) as f:
                last += " | " + " | ".join(f.read().strip().splitlines()[-5:])
        except OSError:
            pass
        child.stop()
    raise HarnessError(f"nginx did not start: {last}")


# ----------------------------------------------------------------------------------------------
# One measurement

def run_client(loadgen, target, workload, proxy_root, upstream_root, idle_settle):
    """Runs one client; returns a dict of figures (or with an 'error' key)."""
    argv = [loadgen, "client", "--target", target] + workload["args"]
    res = {"target": target}
    proxy_cpu0 = tree_cpu_seconds(proxy_root) if proxy_root else None
    up_cpu0 = tree_cpu_seconds(upstream_root)
    t0 = time.monotonic()
    if workload["kind"] == "idle":
        before = tree_memory(proxy_root or upstream_root)
        out, rc, err = run_idle_client(argv, workload["timeout"], proxy_root or upstream_root,
                                       idle_settle, res)
        res["rss_before_kib"] = before["rss_kib"]
    else:
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=workload["timeout"])
            out, rc, err = p.stdout.decode(errors="replace"), p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
            rc, err = "timeout", f"client ran over {workload['timeout']}s and was killed"
    res["wall_s"] = round(time.monotonic() - t0, 3)
    if proxy_root:
        res["proxy_cpu_s"] = round(tree_cpu_seconds(proxy_root) - proxy_cpu0, 3)
    res["upstream_cpu_s"] = round(tree_cpu_seconds(upstream_root) - up_cpu0, 3)

    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        res["error"] = f"client printed no result (rc={rc}): {err.strip()[-300:]}"
        return res
    client = json.loads(lines[0])
    res["client"] = client
    if "error" in client:
        res["error"] = client["error"]
    elif workload["kind"] == "idle" and client.get("established") != client.get("streams"):
        res["error"] = (f"only {client.get('established')} of {client.get('streams')} idle streams "
                        f"established within the timeout ({client.get('first_error', 'no error reported')})")
    elif rc != 0:
        res["error"] = f"client rc={rc}: {client.get('first_error', err.strip()[-300:])}"

    if workload["kind"] == "unary" and client.get("calls_total"):
        if proxy_root:
            res["proxy_cpu_us_per_call"] = res["proxy_cpu_s"] / client["calls_total"] * 1e6
        res["upstream_cpu_us_per_call"] = res["upstream_cpu_s"] / client["calls_total"] * 1e6
    if workload["kind"] == "stream" and client.get("bytes_total"):
        if proxy_root:
            res["proxy_cpu_s_per_gb"] = res["proxy_cpu_s"] / (client["bytes_total"] / 1e9)
    return res


def run_parallel_clients(loadgen, target, workload, count, proxy_root, upstream_root):
    """`count` unary clients at once against `target`; one result as run_client gives, with the
    clients' figures combined: calls summed, p50/p90 the median of the clients', p99 the worst."""
    if count <= 1:
        return run_client(loadgen, target, workload, proxy_root, upstream_root, 0)
    argv = [loadgen, "client", "--target", target] + workload["args"]
    res = {"target": target, "clients": count}
    proxy_cpu0 = tree_cpu_seconds(proxy_root) if proxy_root else None
    up_cpu0 = tree_cpu_seconds(upstream_root)
    t0 = time.monotonic()
    procs = [subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(count)]
    outputs = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=max(1.0, workload["timeout"] - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        outputs.append((proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")))
    res["wall_s"] = round(time.monotonic() - t0, 3)
    if proxy_root:
        res["proxy_cpu_s"] = round(tree_cpu_seconds(proxy_root) - proxy_cpu0, 3)
    res["upstream_cpu_s"] = round(tree_cpu_seconds(upstream_root) - up_cpu0, 3)
    clients = []
    for rc, out, err in outputs:
        lines = [l for l in out.splitlines() if l.startswith("{")]
        if not lines or rc != 0:
            res["error"] = f"a client failed (rc={rc}): {(lines[0] if lines else err.strip())[-300:]}"
            return res
        clients.append(json.loads(lines[0]))
    res["clients_raw"] = clients
    res["client"] = {
        "calls_per_s": sum(c["calls_per_s"] for c in clients),
        "calls_total": sum(c["calls_total"] for c in clients),
        "p50_us": statistics.median(c["p50_us"] for c in clients),
        "p90_us": statistics.median(c["p90_us"] for c in clients),
        "p99_us": max(c["p99_us"] for c in clients),
    }
    total = res["client"]["calls_total"]
    if proxy_root:
        res["proxy_cpu_us_per_call"] = res["proxy_cpu_s"] / total * 1e6
    res["upstream_cpu_us_per_call"] = res["upstream_cpu_s"] / total * 1e6
    return res


def run_idle_client(argv, timeout, mem_root, settle, res):
    """Idle mode: wait for the JSON line, let memory settle, sample RSS, then release."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    buf = bytearray()
    try:
        line = read_line(proc.stdout.fileno(), buf, time.monotonic() + timeout)
        if line is not None:
            time.sleep(settle)
            mem = tree_memory(mem_root)
            res["rss_kib"], res["pss_kib"], res["processes"] = mem["rss_kib"], mem["pss_kib"], mem["processes"]
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        return (line or ""), rc, ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if err.strip() and "releasing idle streams" not in err:
            res["client_stderr"] = err.strip()[-300:]
        for f in (proc.stdout, proc.stderr):
            if f:
                f.close()


# ----------------------------------------------------------------------------------------------
# Aggregation

# Per workload kind: (key in the run record, where it lives) -> headline figures.
FIGURES = {
    "unary": [("p50_us", "client"), ("p90_us", "client"), ("p99_us", "client"), ("calls_per_s", "client"),
              ("proxy_cpu_us_per_call", "run"), ("upstream_cpu_us_per_call", "run")],
    "stream": [("bytes_per_s", "client"), ("proxy_cpu_s_per_gb", "run"), ("proxy_cpu_s", "run")],
    "idle": [("rss_kib", "run"), ("pss_kib", "run"), ("rss_before_kib", "run"), ("establish_s", "client")],
}


def figure(run, key, where):
    if run is None or "error" in run:
        return None
    src = run.get("client", {}) if where == "client" else run
    return src.get(key)


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def aggregate(raw, wl_list, legs):
    medians, ratios, added = {}, {}, {}
    for wl in wl_list:
        name, kind = wl["name"], wl["kind"]
        medians[name] = {}
        for leg in legs:
            runs = raw[name][leg]
            medians[name][leg] = {k: median_or_none([figure(r, k, w) for r in runs]) for k, w in FIGURES[kind]}
            medians[name][leg]["ok_rounds"] = sum(1 for r in runs if r and "error" not in r)
        st = medians[name].get("sparktrace", {})
        ratios[name] = {}
        for base in ("direct", "nginx"):
            b = medians[name].get(base)
            if not b or base not in legs or "sparktrace" not in legs:
                continue
            ratios[name][f"sparktrace_vs_{base}"] = {k: ratio(st.get(k), b.get(k)) for k, _ in FIGURES[kind]}
        if kind == "unary":
            # Latency a proxy adds: per round, proxy minus the direct run of the same round.
            added[name] = {}
            for leg in legs:
                if leg == "direct":
                    continue
                for pct in ("p50_us", "p99_us"):
                    diffs = []
                    for d_run, p_run in zip(raw[name]["direct"], raw[name][leg]):
                        d, p = figure(d_run, pct, "client"), figure(p_run, pct, "client")
                        if d is not None and p is not None:
                            diffs.append(p - d)
                    added[name].setdefault(leg, {})[f"added_{pct}"] = median_or_none(diffs)
                    added[name][leg][f"added_{pct}_rounds"] = diffs
    return medians, ratios, added


def verdicts(medians, added, legs, errors_by_leg):
    targets = []

    def target(name, desc, value, threshold, ok, needs, detail=""):
        missing = [leg for leg in needs if leg not in legs]
        if missing:
            verdict = "SKIP"
            detail = f"leg not run: {', '.join(missing)}"
        elif ok is None:
            verdict = "FAIL"
            detail = detail or "no data (see errors)"
        else:
            verdict = "PASS" if ok else "FAIL"
        targets.append(dict(name=name, description=desc, value=value, threshold=threshold,
                            verdict=verdict, detail=detail))

    def med(wl, leg, key):
        return medians.get(wl, {}).get(leg, {}).get(key)

    for wl, label in (("stream_4m", "4 MiB"), ("stream_64k", "64 KiB")):
        st, d, n = med(wl, "sparktrace", "bytes_per_s"), med(wl, "direct", "bytes_per_s"), med(wl, "nginx", "bytes_per_s")
        r = ratio(st, d)
        target(f"{wl}_vs_direct", f"streaming {label} throughput >= {STREAM_MIN_VS_DIRECT}x direct",
               r, STREAM_MIN_VS_DIRECT, None if r is None else r >= STREAM_MIN_VS_DIRECT, ("sparktrace", "direct"))
        r = ratio(st, n)
        target(f"{wl}_vs_nginx", f"streaming {label} throughput >= {STREAM_MIN_VS_NGINX}x nginx",
               r, STREAM_MIN_VS_NGINX, None if r is None else r >= STREAM_MIN_VS_NGINX, ("sparktrace", "nginx"))
    for wl in ("unary_c1", "unary_c16"):
        s = added.get(wl, {}).get("sparktrace", {}).get("added_p50_us")
        n = added.get(wl, {}).get("nginx", {}).get("added_p50_us")
        ok = None if s is None or n is None else s <= n
        target(f"{wl}_added_p50", f"{wl}: added p50 (proxy - direct) <= nginx's added p50 (us)",
               s, n, ok, ("sparktrace", "nginx", "direct"))
    for wl, conc in (("unary_c1", 1), ("unary_c16", 16)):
        s, n = med(wl, "sparktrace", "proxy_cpu_us_per_call"), med(wl, "nginx", "proxy_cpu_us_per_call")
        target(f"{wl}_cpu_per_call", f"proxy CPU per unary call (concurrency {conc}) <= nginx's (us/call)",
               s, n, None if s is None or n is None else s <= n, ("sparktrace", "nginx"))
    rss = med("idle", "sparktrace", "rss_kib")
    ok_rounds = medians.get("idle", {}).get("sparktrace", {}).get("ok_rounds", 0)
    fresh = med("idle_fresh", "sparktrace", "rss_kib")
    target("idle_rss", f"sparktrace VmRSS with all idle streams open <= {IDLE_RSS_MAX_MIB} MiB (MiB)",
           None if rss is None else rss / 1024, IDLE_RSS_MAX_MIB,
           None if rss is None or ok_rounds == 0 else rss / 1024 <= IDLE_RSS_MAX_MIB, ("sparktrace",),
           "; ".join(x for x in (
               "" if ok_rounds else "no round had every idle stream established",
               "" if fresh is None else f"fresh process before any other traffic: {fresh / 1024:.1f} MiB") if x))
    failed = sum(errors_by_leg.values())
    if failed:
        for t in targets:
            if t["verdict"] != "SKIP":
                t["detail"] = (t["detail"] + "; " if t["detail"] else "") + \
                    f"{failed} run(s) failed, medians are over the rest"
    return targets


# ----------------------------------------------------------------------------------------------
# Scaling phase: unary_c64 against sparktrace --threads W and nginx worker_processes W

def run_scaling(args, loadgen, sparktrace, nginx, up_port, upstream, tmp, children, errors):
    """Fresh proxies for every W in --scaling, all started up front (idle ones cost nothing),
    then rounds: direct once (the reference), then for each W sparktrace and nginx."""
    wl = scaling_workload(args.quick)
    workers = args.scaling
    legs = [("direct", None)]
    procs, targets, start_errors = {}, {}, {}
    for w in workers:
        if sparktrace:
            legs.append(("sparktrace", w))
        if nginx:
            legs.append(("nginx", w))
    for leg, w in legs:
        if leg == "direct":
            targets[(leg, w)] = f"127.0.0.1:{up_port}"
            continue
        try:
            if leg == "sparktrace":
                child, grpc_target, _ = start_sparktrace(sparktrace, up_port, tmp, w, name=f"sparktrace-scaling-w{w}")
            else:
                child, grpc_target = start_nginx(nginx, up_port, os.path.join(tmp, f"nginx-scaling-w{w}"), w,
                                                 args.nginx_grpc_buffer_size, name=f"nginx-scaling-w{w}")
            children.append(child)
            procs[(leg, w)], targets[(leg, w)] = child, grpc_target
        except HarnessError as e:
            # Not a harness error at this point: the main phase's results are kept.
            start_errors[f"{leg}_w{w}"] = str(e)
            errors.append(f"scaling {leg} with {w} worker(s) did not start: {e}")
            log(f"scaling {leg} w{w} did not start: {e}")
    log(f"scaling: {wl['name']} against {', '.join(f'{l}' + ('' if w is None else f'/w{w}') for l, w in legs)}; "
        f"{args.rounds} round(s)")
    raw = {"direct": [], "sparktrace": {str(w): [] for w in workers}, "nginx": {str(w): [] for w in workers}}
    phase_start = time.monotonic()
    rounds_done = 0
    for rnd in range(args.rounds):
        if time.monotonic() - phase_start > args.max_minutes * 60:
            errors.append(f"scaling stopped after {rnd} round(s): --max-minutes {args.max_minutes} reached")
            break
        if not upstream.alive():
            raise HarnessError(f"upstream exited (rc={upstream.proc.returncode}): {upstream.log_tail()}")
        for leg, w in legs:
            child = procs.get((leg, w))
            if leg != "direct" and child is None:
                run = {"error": f"{leg} with {w} worker(s) did not start: {start_errors.get(f'{leg}_w{w}')}"}
            elif child is not None and not child.alive():
                run = {"error": f"{leg} is not running (exit {child.proc.returncode}): {child.log_tail(3)}"}
            else:
                run = run_parallel_clients(loadgen, targets[(leg, w)], wl, args.scaling_clients,
                                           child.pid if child else None, upstream.pid)
            run["round"] = rnd
            (raw["direct"] if leg == "direct" else raw[leg][str(w)]).append(run)
            name = leg if w is None else f"{leg}/w{w}"
            if "error" in run:
                if child is not None or leg == "direct":
                    errors.append(f"scaling round {rnd} {wl['name']} {name}: {run['error']}")
                log(f"scaling round {rnd} {wl['name']} {name:<14} ERROR {run['error']}")
            else:
                log(f"scaling round {rnd} {wl['name']} {name:<14} {summary('unary', run)}")
        rounds_done = rnd + 1
    for key, child in procs.items():
        if not child.alive():
            errors.append(f"scaling {key[0]} with {key[1]} worker(s) exited (rc={child.proc.returncode}): "
                          f"{child.log_tail(3)}")
        child.stop()
        children.remove(child)

    keys = [k for k, _ in FIGURES["unary"]]

    def meds(runs):
        out = {k: median_or_none([figure(r, k, w) for r in runs]) for k, w in FIGURES["unary"]}
        out["ok_rounds"] = sum(1 for r in runs if "error" not in r)
        return out

    medians = {"direct": meds(raw["direct"]),
               "sparktrace": {str(w): meds(raw["sparktrace"][str(w)]) for w in workers} if sparktrace else {},
               "nginx": {str(w): meds(raw["nginx"][str(w)]) for w in workers} if nginx else {}}
    base = str(min(workers))
    speedup = {leg: {str(w): ratio(medians[leg][str(w)]["calls_per_s"], medians[leg][base]["calls_per_s"])
                     for w in workers}
               for leg in ("sparktrace", "nginx") if medians[leg]}
    return {
        "workers": workers,
        "workload": {"name": wl["name"], "args": wl["args"], "client_processes": args.scaling_clients},
        "rounds_done": rounds_done,
        "order": "per round: direct, then for each W: sparktrace --threads W, nginx worker_processes W",
        "cpus_usable": len(os.sched_getaffinity(0)),
        "endpoints": {("direct" if w is None else f"{leg}_w{w}"): t for (leg, w), t in targets.items()},
        "start_errors": start_errors,
        "medians": medians,
        "speedup_vs_fewest_workers": speedup,
        "figures": keys,
        "raw": raw,
    }


def phase_target(name, description, threshold, requested, sparktrace_run, flag):
    """The target of an optional phase, SKIP until judged; (target, whether there is anything to judge)."""
    t = dict(name=name, description=description, value=None, threshold=threshold, verdict="SKIP", detail="")
    if not requested:
        t["detail"] = f"not run ({flag} not given)"
    elif not sparktrace_run:
        t["detail"] = "leg not run: sparktrace"
    return t, requested and sparktrace_run


def scaling_target(scaling, sparktrace_run, requested):
    w0, w1 = SCALING_WORKERS
    t, judged = phase_target("scaling_unary_c64",
                             f"unary_c64 calls/s with {w1} workers / with {w0} (sparktrace --threads)",
                             SCALING_MIN_SPEEDUP, requested, sparktrace_run, "--scaling")
    if not judged:
        return t
    if scaling is None:
        t["verdict"], t["detail"] = "FAIL", "the scaling phase did not run (see errors)"
        return t
    skip, notes = [], []
    st, ngx = scaling["medians"]["sparktrace"], scaling["medians"]["nginx"]
    if str(w0) in st and str(w1) in st:
        a, b = st[str(w0)]["calls_per_s"], st[str(w1)]["calls_per_s"]
        t["value"] = ratio(b, a)
        notes.append(f"calls/s {fmt(a, 'int')} -> {fmt(b, 'int')}")
        if ngx:
            notes.append(f"nginx {fmt(ratio(ngx[str(w1)]['calls_per_s'], ngx[str(w0)]['calls_per_s']), 'ratio')} "
                         "for reference")
        failed = sum(1 for w in (w0, w1) for r in scaling["raw"]["sparktrace"][str(w)] if "error" in r)
        if failed:
            notes.append(f"{failed} run(s) failed, medians are over the rest")
    else:
        skip.append(f"--scaling must include {w0} and {w1}")
    if scaling["cpus_usable"] < SCALING_MIN_CPUS:
        skip.append(f"only {scaling['cpus_usable']} CPUs usable, needs >= {SCALING_MIN_CPUS}")
    if skip:
        t["detail"] = "; ".join(skip + notes)
    elif t["value"] is None:
        t["verdict"], t["detail"] = "FAIL", "; ".join(["no data (see errors)"] + notes)
    else:
        t["verdict"] = "PASS" if t["value"] >= SCALING_MIN_SPEEDUP else "FAIL"
        t["detail"] = "; ".join(notes)
    return t


# ----------------------------------------------------------------------------------------------
# Slow reader: one long server-streaming call through sparktrace, read at a capped rate

def run_slow_reader(args, loadgen, sparktrace, up_port, upstream, tmp, children, errors):
    total = int(args.slow_reader_gib * GIB)
    messages = max(1, total // SLOW_READER_MESSAGE_BYTES)
    total = messages * SLOW_READER_MESSAGE_BYTES
    rate = args.slow_reader_rate
    # RSS is compared against the sample at the first GiB read (a quarter of the call if shorter).
    reference = min(GIB, total // 4)
    expected_s = total / rate
    call_timeout = expected_s * 2 + 60
    # Progress after every message, so that a stall says where it happened.
    progress_every = SLOW_READER_MESSAGE_BYTES
    # No progress for this long: the call is stuck (flow control never reopened); stop waiting.
    stall_s = max(20.0, 4 * progress_every / rate)
    client_args = ["--mode", "stream", "--message-bytes", str(SLOW_READER_MESSAGE_BYTES),
                   "--messages", str(messages), "--calls", "1", "--concurrency", "1", "--duration", "1",
                   "--call-timeout", f"{call_timeout:.0f}", "--read-bytes-per-s", str(rate),
                   "--progress-bytes", str(progress_every)]
    res = {"gib": args.slow_reader_gib, "bytes_requested": total, "message_bytes": SLOW_READER_MESSAGE_BYTES,
           "messages": messages, "read_bytes_per_s_cap": rate, "reference_bytes": reference,
           "sample_interval_s": SLOW_READER_SAMPLE_S, "stall_limit_s": stall_s, "workers": args.workers,
           "client_args": client_args,
           "samples_columns": ["t_s", "bytes_read", "proxy_rss_kib", "client_rss_kib"], "samples": []}
    try:
        st, st_target, _ = start_sparktrace(sparktrace, up_port, tmp, args.workers, name="sparktrace-slow-reader")
    except HarnessError as e:
        res["error"] = f"sparktrace did not start: {e}"
        errors.append(f"slow reader: {res['error']}")
        return res
    children.append(st)
    log(f"slow reader: {total / GIB:.2f} GiB in {messages} x 4 MiB through sparktrace --threads {args.workers} "
        f"at <= {rate / 1e6:.0f} MB/s (~{expected_s:.0f} s)")
    argv = [loadgen, "client", "--target", st_target] + client_args
    progress = {"bytes": 0, "other": []}

    def read_stderr(pipe):
        for raw_line in iter(pipe.readline, b""):
            line = raw_line.decode(errors="replace").strip()
            parts = line.split()
            if len(parts) == 3 and parts[0] == "progress":
                progress["bytes"] = int(parts[1])
            elif line:
                progress["other"].append(line)

    proxy_cpu0, up_cpu0 = tree_cpu_seconds(st.pid), tree_cpu_seconds(upstream.pid)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader = threading.Thread(target=read_stderr, args=(proc.stderr,), daemon=True)
    reader.start()
    samples = res["samples"]
    # The client's own limit is a warm-up call plus the long call, each up to call_timeout.
    deadline = t0 + 2 * call_timeout + 30
    last_bytes, last_change = -1, t0
    try:
        while proc.poll() is None:
            now = time.monotonic()
            seen = progress["bytes"]
            samples.append([round(now - t0, 3), seen, tree_rss_kib(st.pid), vm_rss_kib(proc.pid)])
            if seen != last_bytes:
                last_bytes, last_change = seen, now
            if now - last_change > stall_s:
                res["error"] = (f"stalled: no progress for {now - last_change:.0f}s after {seen} bytes read "
                                f"(client killed)")
                res["stalled_at_bytes"] = seen
                break
            if now > deadline:
                res["error"] = f"client ran over {deadline - t0:.0f}s and was killed"
                break
            try:
                proc.wait(timeout=SLOW_READER_SAMPLE_S)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
    out = proc.stdout.read().decode(errors="replace")
    reader.join(timeout=5)
    proc.stdout.close()
    proc.stderr.close()
    res["wall_s"] = round(time.monotonic() - t0, 3)
    res["proxy_cpu_s"] = round(tree_cpu_seconds(st.pid) - proxy_cpu0, 3)
    res["upstream_cpu_s"] = round(tree_cpu_seconds(upstream.pid) - up_cpu0, 3)
    res["proxy_rss_after_kib"] = tree_rss_kib(st.pid)
    if progress["other"]:
        res["client_stderr"] = " | ".join(progress["other"])[-500:]
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if lines:
        client = json.loads(lines[0])
        res["client"] = client
        if "error" not in res:
            if "error" in client:
                res["error"] = client["error"]
            elif proc.returncode != 0:
                res["error"] = f"client rc={proc.returncode}: {client.get('first_error', '')}"
            elif client.get("bytes") != total:
                res["error"] = f"read {client.get('bytes')} of {total} bytes"
        res["bytes_per_s"] = client.get("bytes_per_s")
    elif "error" not in res:
        res["error"] = f"client printed no result (rc={proc.returncode}): {res.get('client_stderr', '')}"
    if not st.alive():
        res.setdefault("error", f"sparktrace exited (rc={st.proc.returncode}): {st.log_tail(3)}")
        res["proxy_exited"] = f"rc={st.proc.returncode}: {st.log_tail(3)}"
    st.stop()
    children.remove(st)

    rss = [(s[1], s[2]) for s in samples if s[2] is not None]
    at_ref = next(((b, r) for b, r in rss if b >= reference), None)
    if rss:
        res["rss_max_kib"] = max(r for _, r in rss)
        res["rss_last_kib"] = rss[-1][1]
        res["rss_first_kib"] = rss[0][1]
    if at_ref:
        after = [r for b, r in rss if b >= at_ref[0]]
        res["rss_at_reference_kib"] = at_ref[1]
        res["bytes_at_reference"] = at_ref[0]
        res["rss_max_after_reference_kib"] = max(after)
        res["rss_growth_after_reference_kib"] = max(after) - at_ref[1]
        res["samples_after_reference"] = len(after)
    client_rss = [s[3] for s in samples if s[3] is not None]
    if client_rss:
        res["client_rss_max_kib"] = max(client_rss)
    if "error" in res:
        errors.append(f"slow reader: {res['error']}")
        log(f"slow reader ERROR {res['error']}")
    else:
        log(f"slow reader: {res['bytes_per_s'] / 1e6:.0f} MB/s; sparktrace RSS at "
            f"{reference / GIB:.2f} GiB {res.get('rss_at_reference_kib', 0) / 1024:.1f} MiB, max after "
            f"{res.get('rss_max_after_reference_kib', 0) / 1024:.1f} MiB, max {res.get('rss_max_kib', 0) / 1024:.1f} MiB, "
            f"last {res.get('rss_last_kib', 0) / 1024:.1f} MiB ({len(samples)} samples)")
    return res


def slow_reader_target(slow, sparktrace_run, requested):
    t, judged = phase_target("slow_reader_rss_growth",
                             (f"slow reader: sparktrace max RSS after the first GiB - RSS at it <= "
                              f"{SLOW_READER_MAX_GROWTH_MIB} MiB, and max <= {SLOW_READER_MAX_RSS_MIB} MiB (MiB)"),
                             SLOW_READER_MAX_GROWTH_MIB, requested, sparktrace_run, "--slow-reader-gib")
    if not judged:
        return t
    growth = slow.get("rss_growth_after_reference_kib")
    if growth is not None:
        t["value"] = growth / 1024
    notes = []
    if "rss_at_reference_kib" in slow:
        notes.append(f"RSS at {slow['bytes_at_reference'] / GIB:.2f} GiB read "
                     f"{slow['rss_at_reference_kib'] / 1024:.1f} MiB, max after it "
                     f"{slow['rss_max_after_reference_kib'] / 1024:.1f} MiB")
    if "rss_max_kib" in slow:
        notes.append(f"max {slow['rss_max_kib'] / 1024:.1f} MiB, last {slow['rss_last_kib'] / 1024:.1f} MiB")
    bps = slow.get("bytes_per_s")
    if bps:
        notes.append(f"{bps / 1e6:,.0f} MB/s read, cap {slow['read_bytes_per_s_cap'] / 1e6:,.0f} MB/s")
        if bps < 0.9 * slow["read_bytes_per_s_cap"]:
            notes.append("slower than the cap: the reader was not the bottleneck, lower --slow-reader-rate")
    if "error" in slow:
        t["verdict"] = "FAIL"
        t["detail"] = "; ".join([f"error: {slow['error']}"] + notes)
        return t
    if growth is None or "rss_max_kib" not in slow:
        t["verdict"], t["detail"] = "FAIL", "; ".join(["no RSS samples after the reference point"] + notes)
        return t
    ok = growth / 1024 <= SLOW_READER_MAX_GROWTH_MIB and slow["rss_max_kib"] / 1024 <= SLOW_READER_MAX_RSS_MIB
    t["verdict"] = "PASS" if ok else "FAIL"
    t["detail"] = "; ".join(notes)
    return t


# ----------------------------------------------------------------------------------------------
# Machine info and report

def command_output(argv, timeout=5):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        text = (p.stdout + p.stderr).decode(errors="replace").strip()
        return text.splitlines()[0] if text else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def machine_info(loadgen, sparktrace, nginx, build_dir):
    cpu_model = None
    try:
        with open("/proc/cpuinfo") as f:
            cpu_model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        pass
    mem_kib = None
    try:
        with open("/proc/meminfo") as f:
            mem_kib = int(next(l for l in f if l.startswith("MemTotal")).split()[1])
    except (OSError, StopIteration):
        pass
    compiler = None
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            cxx = next((l.split("=", 1)[1].strip() for l in f if l.startswith("CMAKE_CXX_COMPILER:")), None)
        compiler = command_output([cxx, "--version"]) if cxx else None
    except OSError:
        pass
    debian = None
    try:
        with open("/etc/debian_version") as f:
            debian = f.read().strip()
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "cpu_model": cpu_model,
        "mem_total_kib": mem_kib,
        "kernel": platform.release(),
        "debian": debian,
        "loadavg_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "compiler": compiler,
        "loadgen": command_output([loadgen, "version"]),
        "sparktrace": command_output([sparktrace, "--version"]) if sparktrace else None,
        "nginx": command_output([nginx, "-v"]) if nginx else None,
        "git_commit": command_output(["git", "-C", REPO, "rev-parse", "HEAD"]),
    }


def fmt(v, kind):
    if v is None:
        return "-"
    if kind == "ratio":
        return f"{v:.2f}x"
    if kind == "bytes":
        return f"{v / 1e6:,.0f} MB/s"
    if kind == "kib":
        return f"{v / 1024:,.1f} MiB"
    if kind == "int":
        return f"{v:,.0f}"
    return f"{v:,.1f}"


TABLE = [
    ("unary_c1", "p50_us", "p50 latency (us)", "num"),
    ("unary_c1", "p99_us", "p99 latency (us)", "num"),
    ("unary_c1", "calls_per_s", "calls/s", "int"),
    ("unary_c1", "proxy_cpu_us_per_call", "proxy CPU (us/call)", "num"),
    ("unary_c16", "p50_us", "p50 latency (us)", "num"),
    ("unary_c16", "p99_us", "p99 latency (us)", "num"),
    ("unary_c16", "calls_per_s", "calls/s", "int"),
    ("unary_c16", "proxy_cpu_us_per_call", "proxy CPU (us/call)", "num"),
    ("stream_4m", "bytes_per_s", "throughput", "bytes"),
    ("stream_4m", "proxy_cpu_s_per_gb", "proxy CPU (s/GB)", "num"),
    ("stream_64k", "bytes_per_s", "throughput", "bytes"),
    ("stream_64k", "proxy_cpu_s_per_gb", "proxy CPU (s/GB)", "num"),
    ("idle_fresh", "rss_before_kib", "RSS before streams", "kib"),
    ("idle_fresh", "rss_kib", "RSS with streams open", "kib"),
    ("idle", "rss_before_kib", "RSS before streams", "kib"),
    ("idle", "rss_kib", "RSS with streams open", "kib"),
    ("idle", "pss_kib", "PSS with streams open", "kib"),
]


def scaling_rows(scaling):
    w = [46, 14, 14, 14, 20, 14]
    clients = scaling["workload"].get("client_processes", 1)
    title = "scaling: unary_c64, 8 connections" + (f" x {clients} clients" if clients > 1 else "")
    head = (f"{title:<{w[0]}}{'calls/s':>{w[1]}}{'p50 (us)':>{w[2]}}"
            f"{'p99 (us)':>{w[3]}}{'proxy CPU (us/call)':>{w[4]}}{'vs fewest':>{w[5]}}")
    out = ["", head + f"   medians over {scaling['rounds_done']} round(s)", "-" * len(head)]

    def row(label, m, speedup=None):
        m = m or {}
        return (f"  {label:<{w[0] - 2}}{fmt(m.get('calls_per_s'), 'int'):>{w[1]}}{fmt(m.get('p50_us'), 'num'):>{w[2]}}"
                f"{fmt(m.get('p99_us'), 'num'):>{w[3]}}{fmt(m.get('proxy_cpu_us_per_call'), 'num'):>{w[4]}}"
                f"{fmt(speedup, 'ratio'):>{w[5]}}")

    out.append(row("direct (reference)", scaling["medians"]["direct"]))
    for leg, label in (("sparktrace", "sparktrace --threads {}"), ("nginx", "nginx worker_processes {}")):
        for wk, m in scaling["medians"][leg].items():
            out.append(row(label.format(wk), m, scaling["speedup_vs_fewest_workers"].get(leg, {}).get(wk)))
    return out


def slow_reader_rows(slow):
    gib = slow["bytes_requested"] / GIB
    out = ["", f"slow reader: one {gib:g} GiB stream (4 MiB messages) through sparktrace, "
               f"read at <= {slow['read_bytes_per_s_cap'] / 1e6:,.0f} MB/s", "-" * 60]
    if slow.get("bytes_per_s") is not None:
        out.append(f"  read {fmt(slow['bytes_per_s'], 'bytes')} in {slow.get('wall_s', 0):.1f} s, "
                   f"proxy CPU {slow.get('proxy_cpu_s', 0):.2f} s, upstream CPU {slow.get('upstream_cpu_s', 0):.2f} s")
    if "rss_max_kib" in slow:
        ref = slow.get("bytes_at_reference")
        out.append(f"  sparktrace RSS: first sample {fmt(slow['rss_first_kib'], 'kib')}, "
                   + (f"at {ref / GIB:.2f} GiB read {fmt(slow['rss_at_reference_kib'], 'kib')}, "
                      f"max after it {fmt(slow['rss_max_after_reference_kib'], 'kib')}, " if ref is not None else "")
                   + f"max {fmt(slow['rss_max_kib'], 'kib')}, last {fmt(slow['rss_last_kib'], 'kib')} "
                   f"({len(slow['samples'])} samples)")
    if "client_rss_max_kib" in slow:
        out.append(f"  client RSS max {fmt(slow['client_rss_max_kib'], 'kib')}")
    if "error" in slow:
        out.append(f"  ERROR {slow['error']}")
    return out


def print_table(medians, ratios, added, legs, targets, rounds, idle_streams, scaling=None, slow=None):
    out = []
    cols = list(legs) + [c for c in ("st/direct", "st/nginx")
                         if "sparktrace" in legs and c.split("/")[1] in legs]
    widths = [34] + [14] * len(cols)
    head = f"{'medians over ' + str(rounds) + ' round(s)':<{widths[0]}}" + "".join(f"{c:>14}" for c in cols)
    out += ["", head, "-" * len(head)]
    last_wl = None
    for wl, key, label, kind in TABLE:
        if wl not in medians:
            continue
        if wl != last_wl:
            title = {"unary_c1": "unary, concurrency 1", "unary_c16": "unary, concurrency 16",
                     "stream_4m": "server streaming, 4 MiB messages",
                     "stream_64k": "server streaming, 64 KiB messages",
                     "idle_fresh": f"{idle_streams} idle streams, first thing after start (direct = upstream)",
                     "idle": f"{idle_streams} idle streams, after the other tests (direct = upstream)"}[wl]
            out.append(f"{title}")
            last_wl = wl
        row = f"  {label:<{widths[0] - 2}}"
        for leg in legs:
            row += f"{fmt(medians[wl][leg].get(key), kind):>14}"
        for base in ("direct", "nginx"):
            if f"st/{base}" in cols:
                r = ratios.get(wl, {}).get(f"sparktrace_vs_{base}", {}).get(key)
                row += f"{fmt(r, 'ratio'):>14}"
        out.append(row)
        if key == "p50_us" and wl in added:
            row = f"  {'added p50 vs direct (us)':<{widths[0] - 2}}{'':>14}"
            for leg in legs[1:]:
                row += f"{fmt(added[wl].get(leg, {}).get('added_p50_us'), 'num'):>14}"
            out.append(row)
    if scaling:
        out += scaling_rows(scaling)
    if slow:
        out += slow_reader_rows(slow)
    out += ["", "targets"]
    for t in targets:
        val = "-" if t["value"] is None else f"{t['value']:.3g}"
        thr = "-" if t["threshold"] is None else f"{t['threshold']:.3g}"
        out.append(f"  {t['verdict']:<5} {t['description']}: {val} (threshold {thr})"
                   + (f" [{t['detail']}]" if t["detail"] else ""))
    print("\n".join(out), flush=True)


# ----------------------------------------------------------------------------------------------

def find_binary(explicit, candidates, what):
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise HarnessError(f"{what} not executable: {explicit}")
        return explicit
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    p.add_argument("--quick", action="store_true", help="1 round, short runs: a smoke test")
    p.add_argument("--rounds", type=int, help="rounds (default 5, or 1 with --quick)")
    p.add_argument("--skip-nginx", action="store_true")
    p.add_argument("--skip-sparktrace", action="store_true",
                   help="run without the proxy leg (its targets are SKIP)")
    p.add_argument("--sparktrace-bin", help="default BUILD_DIR/sparktrace")
    p.add_argument("--loadgen-bin", help="default BUILD_DIR/sparktrace-loadgen")
    p.add_argument("--nginx-bin", help="default: nginx on PATH or /usr/sbin/nginx")
    p.add_argument("--workers", type=int, default=1,
                   help="proxy workers: sparktrace --threads N and nginx worker_processes N (default 1)")
    p.add_argument("--nginx-workers", default=None,
                   help="nginx worker_processes, overriding --workers for nginx only (a number or auto)")
    p.add_argument("--scaling", metavar="W,W,...", default=None,
                   help="extra phase: unary_c64 against sparktrace --threads W and nginx worker_processes W "
                        f"for each W, on fresh processes (target compares {SCALING_WORKERS[0]} and "
                        f"{SCALING_WORKERS[1]}; off by default)")
    p.add_argument("--scaling-clients", type=int, default=1, metavar="K",
                   help="scaling phase: K client processes at once, each running unary_c64 (default 1). "
                        "One client and one upstream top out near what one worker forwards; more clients "
                        "make the proxy, not its peers, the limit")
    p.add_argument("--slow-reader-gib", type=float, default=0,
                   help="extra phase: one stream of G GiB through sparktrace read at --slow-reader-rate, "
                        "its RSS sampled (default 0: off)")
    p.add_argument("--slow-reader-rate", default=SLOW_READER_DEFAULT_RATE,
                   help=f"bytes/s the slow reader reads at; k/m/g suffixes are powers of 1024 "
                        f"(default {SLOW_READER_DEFAULT_RATE})")
    p.add_argument("--nginx-grpc-buffer-size", default=NGINX_GRPC_BUFFER,
                   help=f"grpc_buffer_size (default {NGINX_GRPC_BUFFER}; see README)")
    p.add_argument("--idle-streams", type=int, default=1000)
    p.add_argument("--output", default=os.path.join(REPO, "bench", "results", "proxy.json"))
    p.add_argument("--max-minutes", type=float, default=15,
                   help="stop starting new rounds after this long (default 15)")
    p.add_argument("--keep-temp", action="store_true", help="keep the temp dir with logs and nginx.conf")
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    if not 1 <= args.workers <= 256:
        p.error("--workers must be 1..256")
    if args.nginx_workers is None:
        args.nginx_workers = str(args.workers)
    elif args.nginx_workers != "auto" and not (args.nginx_workers.isdigit() and int(args.nginx_workers) >= 1):
        p.error("--nginx-workers must be a positive number or auto")
    if args.scaling is not None:
        try:
            args.scaling = sorted({int(w) for w in args.scaling.split(",") if w.strip()})
        except ValueError:
            p.error("--scaling takes worker counts separated by commas, e.g. 1,4")
        if not args.scaling or not all(1 <= w <= 256 for w in args.scaling):
            p.error("--scaling: worker counts must be 1..256")
    if not 0 <= args.slow_reader_gib <= 1024:
        p.error("--slow-reader-gib must be 0..1024")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", args.slow_reader_rate.strip())
    if not m:
        p.error("--slow-reader-rate: bytes/s, e.g. 536870912 or 512m")
    args.slow_reader_rate = int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()])
    if args.slow_reader_rate < 1 << 20:
        p.error("--slow-reader-rate must be at least 1 MiB/s")
    if not 1 <= args.rounds <= 50:
        p.error("--rounds must be 1..50")
    if not 1 <= args.idle_streams <= 20000:
        p.error("--idle-streams must be 1..20000")
    return args


def main(argv):
    args = parse_args(argv)
    build = os.path.abspath(args.build_dir)
    loadgen = find_binary(args.loadgen_bin, [os.path.join(build, "sparktrace-loadgen"),
                                             os.path.join(build, "bench", "sparktrace-loadgen")], "loadgen")
    if not loadgen:
        raise HarnessError(f"sparktrace-loadgen not found in {build}: "
                           f"run `cmake --build {args.build_dir} --target sparktrace-loadgen`")
    sparktrace = None
    if not args.skip_sparktrace:
        sparktrace = find_binary(args.sparktrace_bin, [os.path.join(build, "sparktrace")], "sparktrace")
        if not sparktrace:
            raise HarnessError(f"{build}/sparktrace not found: build it, or pass --skip-sparktrace")
    nginx = None
    if not args.skip_nginx:
        nginx = find_binary(args.nginx_bin, [shutil.which("nginx"), "/usr/sbin/nginx"], "nginx")
        if not nginx:
            raise HarnessError("nginx not found: install it, or pass --skip-nginx")
    legs = tuple(l for l in LEGS if (l != "sparktrace" or sparktrace) and (l != "nginx" or nginx))
    wl_list = workloads(args.quick, args.idle_streams)
    idle_settle = 0.5 if args.quick else 1.0

    # Children inherit this: a thousand streams through nginx means a thousand upstream sockets.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    info = machine_info(loadgen, sparktrace, nginx, build)
    tmp = tempfile.mkdtemp(prefix="sparktrace-bench-")
    os.chmod(tmp, 0o755)  # nginx workers run as an unprivileged user when the master is root
    children = []
    started = time.monotonic()
    # The idle test once more, first thing, on processes that have carried no traffic yet: it
    # separates what the streams cost from memory kept from the earlier streaming tests.
    fresh_wl = dict(next(wl for wl in wl_list if wl["kind"] == "idle"), name="idle_fresh")
    all_wls = [fresh_wl] + wl_list
    raw = {wl["name"]: {leg: [] for leg in legs} for wl in all_wls}
    errors = []
    endpoints = {}
    rounds_done = 0
    scaling = slow = None
    try:
        upstream, up_port = start_upstream(loadgen, tmp)
        children.append(upstream)
        endpoints["upstream"] = f"127.0.0.1:{up_port}"
        roots = {"direct": None}
        targets = {"direct": f"127.0.0.1:{up_port}"}
        if sparktrace:
            st, st_grpc, st_admin = start_sparktrace(sparktrace, up_port, tmp, args.workers)
            children.append(st)
            roots["sparktrace"], targets["sparktrace"] = st.pid, st_grpc
            endpoints["sparktrace"] = {"grpc": st_grpc, "admin": st_admin}
        if nginx:
            ngx, ngx_target = start_nginx(nginx, up_port, tmp, args.nginx_workers, args.nginx_grpc_buffer_size)
            children.append(ngx)
            roots["nginx"], targets["nginx"] = ngx.pid, ngx_target
            endpoints["nginx"] = ngx_target
        by_name = {"sparktrace": st if sparktrace else None, "nginx": ngx if nginx else None}
        log(f"legs: {', '.join(f'{l}={targets[l]}' for l in legs)}; {args.rounds} round(s)")

        for rnd in range(-1, args.rounds):
            if time.monotonic() - started > args.max_minutes * 60:
                errors.append(f"stopped after {rnd} round(s): --max-minutes {args.max_minutes} reached")
                break
            if not upstream.alive():
                raise HarnessError(f"upstream exited (rc={upstream.proc.returncode}): {upstream.log_tail()}")
            for wl in ([fresh_wl] if rnd < 0 else wl_list):
                for leg in legs:
                    child = by_name.get(leg)
                    if child is not None and not child.alive():
                        run = {"error": f"{leg} is not running (exit {child.proc.returncode}): {child.log_tail(3)}"}
                    else:
                        run = run_client(loadgen, targets[leg], wl, roots[leg], upstream.pid, idle_settle)
                    run["round"] = rnd
                    raw[wl["name"]][leg].append(run)
                    if "error" in run:
                        errors.append(f"round {rnd} {wl['name']} {leg}: {run['error']}")
                        log(f"round {rnd} {wl['name']:<10} {leg:<10} ERROR {run['error']}")
                    else:
                        log(f"round {rnd} {wl['name']:<10} {leg:<10} {summary(wl['kind'], run)}")
                    if time.monotonic() - started > args.max_minutes * 60 + 300:
                        raise HarnessError("benchmark ran far over --max-minutes; giving up")
                    if wl["kind"] == "idle":
                        time.sleep(0.5)  # let the proxy tear the streams down before the next leg
            rounds_done = max(rnd + 1, 0)

        # The main phase's proxies go; each further phase starts its own.
        for leg in ("sparktrace", "nginx"):
            child = by_name.get(leg)
            if child is not None:
                if not child.alive():
                    errors.append(f"{leg} exited during the main phase (rc={child.proc.returncode}): "
                                  f"{child.log_tail(3)}")
                child.stop()
                children.remove(child)
        if args.scaling:
            scaling = run_scaling(args, loadgen, sparktrace, nginx, up_port, upstream, tmp, children, errors)
        if args.slow_reader_gib > 0 and sparktrace:
            slow = run_slow_reader(args, loadgen, sparktrace, up_port, upstream, tmp, children, errors)
    finally:
        for child in reversed(children):
            child.stop()
        if args.keep_temp:
            log(f"temp dir kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    errors_by_leg = {leg: sum(1 for wl in all_wls for r in raw[wl["name"]][leg] if "error" in r) for leg in legs}
    medians, ratios, added = aggregate(raw, all_wls, legs)
    targets_out = verdicts(medians, added, legs, errors_by_leg)
    targets_out.append(scaling_target(scaling, bool(sparktrace), bool(args.scaling)))
    targets_out.append(slow_reader_target(slow or {}, bool(sparktrace), args.slow_reader_gib > 0))
    result = {
        "schema": 1,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.monotonic() - started, 1),
        "config": {
            "quick": args.quick, "rounds_requested": args.rounds, "rounds_done": rounds_done,
            "legs": list(legs), "idle_streams": args.idle_streams,
            "workers": args.workers,
            "workloads": {wl["name"]: wl["args"] for wl in all_wls},
            "sparktrace": {"threads": args.workers} if sparktrace else None,
            "nginx": {"worker_processes": args.nginx_workers, "grpc_buffer_size": args.nginx_grpc_buffer_size,
                      "reuseport": nginx_reuseport(args.nginx_workers)}
            if nginx else None,
            "scaling": {"workers": args.scaling, "workload": scaling_workload(args.quick)["args"]}
            if args.scaling else None,
            "slow_reader": {"gib": args.slow_reader_gib, "read_bytes_per_s": args.slow_reader_rate}
            if args.slow_reader_gib > 0 else None,
            "endpoints": endpoints,
            "units": {"bytes_per_s": "bytes/s", "proxy_cpu_s_per_gb": "CPU s per 1e9 bytes",
                      "latency": "microseconds", "rss_kib": "KiB (VmRSS summed over the proxy's processes)"},
        },
        "machine": info,
        "medians": medians,
        "added_latency": added,
        "ratios": ratios,
        "targets": targets_out,
        "scaling": scaling,
        "slow_reader": slow,
        "errors": errors,
        "raw": raw,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp_out = args.output + ".tmp"
    with open(tmp_out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp_out, args.output)

    print_table(medians, ratios, added, legs, targets_out, rounds_done, args.idle_streams, scaling, slow)
    if errors:
        print(f"\n{len(errors)} run error(s):", *(f"  {e}" for e in errors[:20]), sep="\n")
    print(f"\nwrote {os.path.relpath(args.output)} in {result['duration_s']:.0f}s", flush=True)
    return 0


def summary(kind, run):
    c = run.get("client", {})
    if kind == "unary":
        s = f"p50 {c.get('p50_us', 0):8.1f}us p99 {c.get('p99_us', 0):8.1f}us {c.get('calls_per_s', 0):9.0f}/s"
        if "proxy_cpu_us_per_call" in run:
            s += f" proxy {run['proxy_cpu_us_per_call']:.1f}us/call"
        return s
    if kind == "stream":
        s = f"{c.get('bytes_per_s', 0) / 1e6:8.0f} MB/s"
        if "proxy_cpu_s_per_gb" in run:
            s += f" proxy {run['proxy_cpu_s_per_gb']:.2f}s/GB"
        return s
    return (f"{c.get('established')}/{c.get('streams')} open in {c.get('establish_s', 0):.2f}s, "
            f"RSS {run.get('rss_before_kib', 0) / 1024:.1f} -> {run.get('rss_kib', 0) / 1024:.1f} MiB")


def _on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


if __name__ == "__main__":
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    try:
        sys.exit(main(sys.argv[1:]))
    except HarnessError as e:
        print(f"proxy_bench: harness error: {e}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as e:
        print(f"proxy_bench: interrupted ({e}); children stopped", file=sys.stderr)
        sys.exit(130)
