#!/usr/bin/env python3
"""Where the k8s/ resource requests and limits come from: sparktrace as deployed, measured.

Starts `sparktrace sim` (writing a simulated event log) and, in front of it, `sparktrace proxy`
configured as k8s/base deploys it (SQLite trace store, --event-log-dir following the simulator's
log, JSON logs), then runs real Spark Connect calls through it with `sparktrace-loadgen` (the
hand-encoded requests of tracing_bench.py):

  idle          nothing for 3 s after start
  config_c16    Config, 16 calls in flight, 5 s
  execute_4m    ExecutePlan streaming 16 x 4 MiB batches (Spark's default Arrow batch size,
                spark.connect.grpc.arrow.maxBatchSize), 4 calls in flight, 5 s
  execute_32m   ExecutePlan streaming 4 x 32 MiB batches, 2 calls in flight, 3 s
  execute_128m  ExecutePlan streaming 2 x 128 MiB batches (Spark's own message limit), 1 call in
                flight, 3 calls

and records per workload the proxy's CPU seconds / wall seconds (= cores busy) and, after it,
VmHWM (peak resident memory so far) and VmRSS (5.5 s later, once the memory trimmer has run).
Writes bench/results/k8s_resources.json and prints a table. The loadgen, the simulator and the
proxy share the machine's cores: the CPU figures are what the proxy used at the load the
machine could generate, not its ceiling.

Run with Debian's /usr/bin/python3 after building (build/sparktrace, build/sparktrace-loadgen).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy_bench as pb  # noqa: E402  (child processes, /proc accounting)
import tracing_bench as tb  # noqa: E402  (hand-encoded Spark Connect requests)

SERVICE = "/spark.connect.SparkConnectService"


def proc_status(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS", "Threads"):
                values[key] = int(rest.split()[0])
    return values


def workloads(files):
    execute = ["--mode", "stream", "--method", f"{SERVICE}/ExecutePlan", "--request-file", files["execute"],
               "--fresh-uuid", tb.OPERATION_PLACEHOLDER]
    return [
        ("config_c16", ["--mode", "unary", "--method", f"{SERVICE}/Config", "--request-file", files["config"],
                        "--concurrency", "16", "--duration", "5", "--warmup", "0.5"]),
        ("execute_4m", execute + ["--metadata", "x-sim-batches=16", "--metadata", f"x-sim-batch-bytes={4 << 20}",
                                  "--messages", "16", "--concurrency", "4", "--duration", "5"]),
        ("execute_32m", execute + ["--metadata", "x-sim-batches=4", "--metadata", f"x-sim-batch-bytes={32 << 20}",
                                   "--messages", "4", "--concurrency", "2", "--duration", "3"]),
        ("execute_128m", execute + ["--metadata", "x-sim-batches=2", "--metadata", f"x-sim-batch-bytes={128 << 20}",
                                    "--messages", "2", "--concurrency", "1", "--calls", "3", "--duration", "20"]),
    ]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(pb.REPO, "build"))
    parser.add_argument("--out", default=os.path.join(pb.REPO, "bench", "results", "k8s_resources.json"))
    args = parser.parse_args(argv)
    sparktrace = os.path.join(args.build_dir, "sparktrace")
    loadgen = os.path.join(args.build_dir, "sparktrace-loadgen")
    children = []
    with tempfile.TemporaryDirectory(prefix="sparktrace-k8s-res-") as tmp:
        try:
            events = os.path.join(tmp, "events")
            os.makedirs(events)
            files = {}
            for name, body in (("config", tb.config_request()), ("execute", tb.execute_plan_request())):
                files[name] = os.path.join(tmp, f"{name}.bin")
                with open(files[name], "wb") as f:
                    f.write(body)
            sim = pb.Child("sim", [sparktrace, "sim", "--listen", "127.0.0.1:0", "--log-level", "warn",
                                   "--event-log-dir", events, "--time-scale", "0.001",
                                   "--max-message-bytes", "256MiB"], tmp)
            children.append(sim)
            upstream = sim.wait_for_line(r"listening grpc=([0-9.]+:\d+)", 20).group(1)
            proxy_argv = [sparktrace, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0",
                          "--admin", "127.0.0.1:0", "--log-format", "json", "--log-level", "warn",
                          "--store", os.path.join(tmp, "traces.db"), "--event-log-dir", events]
            proxy = pb.Child("proxy", proxy_argv, tmp)
            children.append(proxy)
            m = proxy.wait_for_line(r"listening grpc=([0-9.]+:\d+) admin=([0-9.]+:\d+)", 20)
            target = m.group(1)
            time.sleep(3)
            idle = proc_status(proxy.pid)
            results = {"idle": {"VmHWM_kib": idle["VmHWM"], "VmRSS_kib": idle["VmRSS"], "threads": idle["Threads"],
                                "proxy_cpu_s_since_start": round(pb.tree_cpu_seconds(proxy.pid), 2)}}
            for name, client_args in workloads(files):
                cpu0, t0 = pb.tree_cpu_seconds(proxy.pid), time.monotonic()
                run = subprocess.run([loadgen, "client", "--target", target, *client_args], capture_output=True,
                                     text=True, timeout=120)
                wall = time.monotonic() - t0
                cpu = pb.tree_cpu_seconds(proxy.pid) - cpu0
                peak = proc_status(proxy.pid)
                time.sleep(5.5)
                after = proc_status(proxy.pid)
                client = json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else {}
                results[name] = {"wall_s": round(wall, 2), "proxy_cpu_s": round(cpu, 2),
                                 "proxy_cores": round(cpu / wall, 3), "VmHWM_kib": peak["VmHWM"],
                                 "VmRSS_kib_at_end": peak["VmRSS"], "VmRSS_kib_5s_later": after["VmRSS"],
                                 "threads": peak["Threads"], "client_rc": run.returncode,
                                 "client": {k: client.get(k) for k in ("calls", "errors", "bytes_per_s",
                                                                        "calls_per_s") if k in client}}
            if not proxy.alive():
                raise pb.HarnessError(f"proxy exited: {proxy.log_tail()}")
        finally:
            for child in reversed(children):
                child.stop()
    report = {"schema": 1, "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "machine": {"nproc": os.cpu_count(), "kernel": platform.release()},
              "proxy_argv": [os.path.basename(a) if a.startswith(tmp) else a for a in proxy_argv[1:]],
              "units": {"kib": "KiB", "proxy_cores": "proxy CPU seconds / wall seconds"},
              "workloads": results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"{'workload':<12} {'cores':>6} {'VmHWM MiB':>10} {'RSS after MiB':>14}  client")
    print(f"{'idle':<12} {'':>6} {results['idle']['VmHWM_kib'] / 1024:>10.1f} {results['idle']['VmRSS_kib'] / 1024:>14.1f}")
    for name, r in results.items():
        if name != "idle":
            print(f"{name:<12} {r['proxy_cores']:>6.2f} {r['VmHWM_kib'] / 1024:>10.1f} "
                  f"{r['VmRSS_kib_5s_later'] / 1024:>14.1f}  rc={r['client_rc']} {r['client']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
