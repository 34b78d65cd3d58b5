#!/usr/bin/env python3
"""Soak benchmark: sparktrace's memory and descriptors under hostile and careless clients, and what
that costs the other clients.

One upstream (`sparktrace-loadgen server`), one sparktrace (tracing on, as deployed) in front of it.
Phase by phase, a hostile mix runs against the proxy while bystanders use it as a polite client
does (`sparktrace-loadgen client`: 16 unary calls in flight, and 4 MiB-message streams). Each phase
is compared with the quiet phase before it, side by side on the same processes:
  stalled_readers     300 ExecutePlan-like streams (3 connections x 100) whose client announces
                      the largest windows HTTP/2 allows and never reads
  oversized_metadata  calls with 9,000- and 20,000-byte metadata values, as fast as answered
  silent_connections  1,100 connections that never send the HTTP/2 preface
  idle_connections    1,100 connections that finish the preface, then say nothing
  admin_header_flood  header lines sent to the admin port without end (300 MB at most)
Sampled every 50 ms: the proxy's RSS and open descriptors; per phase: their peaks, bystander
errors, throughput and latency (p50, p99) and their ratio to the quiet phase, and the
sparktrace_relay_limit_hits_total counters that moved.

Writes bench/results/soak.json and prints a table. Exit 0 when it ran (whatever the verdicts),
2 on a harness error. Only the standard library (run with Debian's /usr/bin/python3).
"""

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import proxy_bench  # noqa: E402  (Child, start_upstream, run_client, machine facts)

MIB = 1 << 20
RSS_BUDGET_MIB = 512        # documented: README, "Memory budget" (the deployment's limit is 1 GiB)
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- hand-made HTTP/2 (no HPACK library needed: literal fields without indexing) -------------

def frame(frame_type, flags, stream_id, payload=b""):
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", frame_type, flags, stream_id) + payload


def hpack_literal(name, value):
    """A literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    def length(n):
        if n < 127:
            return bytes([n])
        out, n = bytearray([127]), n - 127
        while n >= 128:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)
    name, value = name.encode(), value.encode()
    return b"\x00" + length(len(name)) + name + length(len(value)) + value


def request_block(path, extra=()):
    fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "soak"),
              ("content-type", "application/grpc"), ("te", "trailers"), *extra]
    return b"".join(hpack_literal(k, v) for k, v in fields)


def headers_frames(stream_id, block, chunk=16_384):
    pieces = [block[i:i + chunk] for i in range(0, len(block), chunk)]
    out = []
    for i, piece in enumerate(pieces):
        flags = 0x4 if i == len(pieces) - 1 else 0
        out.append(frame(0x1 if i == 0 else 0x9, flags, stream_id, piece))
    return b"".join(out)


def grpc_message(payload):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


def connect(address, receive_buffer=None):
    host, port = address.rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(10)
    sock.connect((host, int(port)))
    return sock


def handshake(sock, settings=b""):
    sock.sendall(PREFACE + frame(0x4, 0, 0, settings))
    sock.sendall(frame(0x4, 0x1, 0))  # ACK theirs without reading it: they do not wait for it


# --- hostile mixes: each a context with start() and stop() --------------------------------------

class StalledReaders:
    name = "stalled_readers"

    def __init__(self, grpc_address, connections=3, streams=100):
        self.address, self.connections, self.streams = grpc_address, connections, streams
        self.socks = []

    def start(self):
        big_window = struct.pack(">HI", 0x4, 0x7FFF_FFFF)
        for _ in range(self.connections):
            sock = connect(self.address, receive_buffer=16 * 1024)
            handshake(sock, big_window)
            out = [frame(0x8, 0, 0, struct.pack(">I", 0x7FFF_FFFF - 65_535))]
            block = request_block("/bench.Load/Stream", [("x-bench-messages", "1000000"),
                                                         ("x-bench-message-bytes", str(MIB))])
            for i in range(self.streams):
                out.append(headers_frames(1 + 2 * i, block))
                out.append(frame(0x0, 0x1, 1 + 2 * i, grpc_message(b"")))
            sock.sendall(b"".join(out))
            self.socks.append(sock)

    def stop(self):
        for sock in self.socks:
            sock.close()


class OversizedMetadata:
    name = "oversized_metadata"

    def __init__(self, grpc_address):
        self.address = grpc_address
        self.stop_event = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()

    def run(self):
        sock = connect(self.address)
        handshake(sock)
        sock.settimeout(0.2)
        stream_id = 1
        while not self.stop_event.is_set() and stream_id < 2_000_000:
            size = 9_000 if stream_id % 4 else 20_000
            block = request_block("/bench.Load/Unary", [("x-big", "v" * size)])
            try:
                sock.sendall(headers_frames(stream_id, block) + frame(0x0, 0x1, stream_id, grpc_message(b"x")))
                sock.recv(1 << 16)  # drain answers so that this client is merely rude, not stalled
            except socket.timeout:
                pass
            except OSError:
                sock.close()
                sock = connect(self.address)
                handshake(sock)
                sock.settimeout(0.2)
                stream_id = -1
            stream_id += 2
            self.sent += 1
        sock.close()

    def stop(self):
        self.stop_event.set()
        self.thread.join(10)


class ManyConnections:
    def __init__(self, grpc_address, count, preface):
        self.address, self.count, self.preface = grpc_address, count, preface
        self.name = "idle_connections" if preface else "silent_connections"
        self.socks = []
        self.refused = 0

    def start(self):
        for _ in range(self.count):
            try:
                sock = connect(self.address)
                if self.preface:
                    handshake(sock)
                self.socks.append(sock)
            except OSError:
                self.refused += 1

    def stop(self):
        for sock in self.socks:
            sock.close()


class AdminHeaderFlood:
    name = "admin_header_flood"

    def __init__(self, admin_address, limit_bytes=300 * MIB):
        self.address, self.limit = admin_address, limit_bytes
        self.sent = 0
        self.closed_by_server = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()

    def run(self):
        sock = connect(self.address)
        line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
        chunk = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + line * 1000
        try:
            while self.sent < self.limit:
                sock.sendall(chunk)
                self.sent += len(chunk)
                chunk = line * 1000
        except OSError:
            self.closed_by_server = True
        sock.close()

    def stop(self):
        self.thread.join(60)


# --- measurement --------------------------------------------------------------------------------

class Sampler:
    """Peak RSS and open descriptors of one process, sampled every 50 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.lock = threading.Lock()
        self.rss_peak = self.fds_peak = 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_event.wait(0.05):
            rss = (proxy_bench.vm_rss_kib(self.pid) or 0) * 1024
            try:
                fds = len(os.listdir(f"/proc/{self.pid}/fd"))
            except OSError:
                fds = 0
            with self.lock:
                self.rss_peak = max(self.rss_peak, rss)
                self.fds_peak = max(self.fds_peak, fds)

    def take_peaks(self):
        with self.lock:
            peaks = (self.rss_peak, self.fds_peak)
            self.rss_peak = self.fds_peak = 0
        return peaks

    def close(self):
        self.stop_event.set()
        self.thread.join(2)


def limit_hits(admin_address):
    try:
        with urllib.request.urlopen(f"http://{admin_address}/metrics", timeout=10) as answer:
            text = answer.read().decode()
    except OSError:  # a scrape that fails is reported as no figures
        return {}
    hits = {}
    for line in text.splitlines():
        if line.startswith("sparktrace_relay_limit_hits_total{"):
            label = line.split('limit="', 1)[1].split('"', 1)[0]
            hits[label] = float(line.rsplit(" ", 1)[1])
    return hits


def bystanders(loadgen, target, seconds):
    unary = proxy_bench.run_client(loadgen, target, dict(
        name="unary_c16", kind="unary", timeout=seconds + 40,
        args=["--mode", "unary", "--concurrency", "16", "--duration", str(seconds), "--warmup", "0.2"]),
        None, None, 0)
    stream = proxy_bench.run_client(loadgen, target, dict(
        name="stream_4m", kind="stream", timeout=seconds + 60,
        args=["--mode", "stream", "--message-bytes", str(4 * MIB), "--messages", "16", "--duration", str(seconds)]),
        None, None, 0)
    return unary, stream


def summarise(unary, stream):
    uc, sc = unary.get("client", {}), stream.get("client", {})
    return {
        "unary_calls_per_s": uc.get("calls_per_s"),
        "unary_p50_us": uc.get("p50_us"),
        "unary_p99_us": uc.get("p99_us"),
        "unary_errors": uc.get("errors", 0) + (1 if "error" in unary else 0),
        "stream_mb_per_s": round(sc["bytes_per_s"] / 1e6, 1) if sc.get("bytes_per_s") else None,
        "stream_errors": sc.get("errors", 0) + (1 if "error" in stream else 0),
        "first_error": unary.get("error") or stream.get("error"),
    }


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--sparktrace-bin")
    parser.add_argument("--loadgen-bin")
    parser.add_argument("--seconds", type=float, default=3.0, help="bystander run per phase")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "soak.json"))
    args = parser.parse_args(argv)
    sparktrace = args.sparktrace_bin or os.path.join(args.build_dir, "sparktrace")
    loadgen = args.loadgen_bin or os.path.join(args.build_dir, "sparktrace-loadgen")
    for binary in (sparktrace, loadgen):
        if not os.access(binary, os.X_OK):
            log(f"missing {binary} (build first)")
            return 2

    tmp = tempfile.TemporaryDirectory(prefix="sparktrace-soak-")
    children = []
    try:
        upstream, up_port = proxy_bench.start_upstream(loadgen, tmp.name)
        children.append(upstream)
        proxy = proxy_bench.Child("sparktrace", [
            sparktrace, "proxy", "--upstream", f"127.0.0.1:{up_port}", "--listen", "127.0.0.1:0",
            "--admin", "127.0.0.1:0", "--store", os.path.join(tmp.name, "traces.db"), "--log-level", "warn"], tmp.name)
        children.append(proxy)
        m = proxy.wait_for_line(r"listening grpc=([0-9.]+:\d+) admin=([0-9.]+:\d+)", 20)
        grpc_address, admin_address = m.group(1), m.group(2)
        pid = proxy.proc.pid
        sampler = Sampler(pid)

        phases = []
        mixes = [lambda: StalledReaders(grpc_address), lambda: OversizedMetadata(grpc_address),
                 lambda: ManyConnections(grpc_address, 1100, preface=False),
                 lambda: ManyConnections(grpc_address, 1100, preface=True),
                 lambda: AdminHeaderFlood(admin_address)]
        for make in mixes:
            sampler.take_peaks()
            quiet = summarise(*bystanders(loadgen, grpc_address, args.seconds))
            quiet_rss, quiet_fds = sampler.take_peaks()
            mix = make()
            log(f"{mix.name}: starting")
            hits_before = limit_hits(admin_address)
            mix.start()
            loud = summarise(*bystanders(loadgen, grpc_address, args.seconds))
            rss, fds = sampler.take_peaks()
            hits_after = limit_hits(admin_address)
            mix.stop()
            alive = proxy.proc.poll() is None
            phases.append({
                "mix": mix.name,
                "proxy_alive": alive,
                "quiet": quiet,
                "hostile": loud,
                "unary_calls_per_s_ratio": ratio(loud["unary_calls_per_s"], quiet["unary_calls_per_s"]),
                "unary_p50_ratio": ratio(loud["unary_p50_us"], quiet["unary_p50_us"]),
                "stream_mb_per_s_ratio": ratio(loud["stream_mb_per_s"], quiet["stream_mb_per_s"]),
                "rss_peak_mib_quiet": round(quiet_rss / MIB, 1),
                "rss_peak_mib_hostile": round(rss / MIB, 1),
                "fds_peak_quiet": quiet_fds,
                "fds_peak_hostile": fds,
                "limit_hits": {k: v - hits_before.get(k, 0) for k, v in hits_after.items()
                               if v - hits_before.get(k, 0) > 0},
                "extra": {k: getattr(mix, k) for k in ("sent", "refused", "closed_by_server") if hasattr(mix, k)},
            })
            log(f"{mix.name}: rss peak {rss / MIB:.0f} MiB, fds {fds}, bystander errors "
                f"{loud['unary_errors']}+{loud['stream_errors']}")
            if not alive:
                break
        sampler.close()

        verdicts = {
            "no_bystander_errors": all(p["hostile"]["unary_errors"] == 0 and p["hostile"]["stream_errors"] == 0
                                       for p in phases),
            "proxy_survived": all(p["proxy_alive"] for p in phases),
            f"rss_under_{RSS_BUDGET_MIB}_mib": all(p["rss_peak_mib_hostile"] < RSS_BUDGET_MIB for p in phases),
        }
        result = {"machine": proxy_bench.machine_info(loadgen, sparktrace, None, args.build_dir),
                  "bystander_seconds": args.seconds, "phases": phases, "verdicts": verdicts}
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"{'mix':<20} {'rss MiB q/h':>14} {'fds q/h':>11} {'unary/s ratio':>14} {'p50 ratio':>10} "
              f"{'stream ratio':>13} {'errors':>7}  limits")
        for p in phases:
            print(f"{p['mix']:<20} {p['rss_peak_mib_quiet']:>6}/{p['rss_peak_mib_hostile']:<7} "
                  f"{p['fds_peak_quiet']:>5}/{p['fds_peak_hostile']:<5} {str(p['unary_calls_per_s_ratio']):>14} "
                  f"{str(p['unary_p50_ratio']):>10} {str(p['stream_mb_per_s_ratio']):>13} "
                  f"{p['hostile']['unary_errors'] + p['hostile']['stream_errors']:>7}  {p['limit_hits']}")
        print("verdicts:", ", ".join(f"{k}={'PASS' if v else 'FAIL'}" for k, v in verdicts.items()))
        return 0
    except proxy_bench.HarnessError as error:
        log(f"harness error: {error}")
        return 2
    finally:
        for child in reversed(children):
            child.stop()
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
