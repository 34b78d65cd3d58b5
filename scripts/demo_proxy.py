#!/usr/bin/env python3
"""`make run`: the sparktrace proxy in front of a stand-in upstream, with sample traffic.

Until the Spark Connect simulator exists, the upstream is the generic gRPC peer the end-to-end
tests use (tests/e2e/peers/upstream_server.py): it is *not* Spark, it echoes and streams bytes.
The demo starts it and `sparktrace proxy` on free loopback ports, sends a unary call, a
server stream, a client stream and a failing call through the proxy, shows the access log and
metrics that resulted, then keeps the proxy serving until Ctrl-C (`--once` exits instead).
"""

import argparse
import os
import signal
import subprocess
import sys
import urllib.request

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "..", "tests", "e2e", "peers", "upstream_server.py")
SERVICE = "sparktrace.demo.StandIn"  # the peer serves /<any service>/{Unary,ServerStream,ClientStream,Bidi}


def start(command, **kwargs):
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, **kwargs)
    line = process.stdout.readline()
    if not line.startswith("listening"):
        process.kill()
        sys.exit(f"demo: {command[0]} did not start (said {line!r})")
    return process, line.split()


def send_sample_traffic(address):
    channel = grpc.insecure_channel(address)
    airflow = (("x-airflow-dag-id", "daily_sales"), ("x-airflow-task-id", "aggregate"),
               ("authorization", "Bearer demo-token-never-logged"))
    unary = channel.unary_unary(f"/{SERVICE}/Unary")
    print("  unary                 ->", len(unary(b"x" * 64, metadata=airflow)), "bytes back")
    stream = channel.unary_stream(f"/{SERVICE}/ServerStream")
    responses = list(stream(b"plan", metadata=airflow + (("x-test-stream-count", "8"),
                                                          ("x-test-message-bytes", str(1 << 20)))))
    print("  server stream         ->", len(responses), "messages,", sum(map(len, responses)), "bytes")
    upload = channel.stream_unary(f"/{SERVICE}/ClientStream")
    print("  client stream         ->", len(upload(iter([b"a" * 1000] * 5), metadata=airflow)), "bytes back")
    try:
        unary(b"", metadata=airflow + (("x-test-status-code", "13"), ("x-test-status-message", "demo failure")))
    except grpc.RpcError as error:
        print("  failing call          ->", error.code().name, repr(error.details()))
    channel.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sparktrace", default="build/sparktrace")
    parser.add_argument("--once", action="store_true", help="exit after the sample traffic")
    args = parser.parse_args()

    upstream, upstream_words = start([sys.executable, PEER, "--port", "0"])
    upstream_address = "127.0.0.1:" + upstream_words[1]
    proxy, proxy_words = start([args.sparktrace, "proxy", "--upstream", upstream_address,
                                "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
    fields = dict(word.split("=", 1) for word in proxy_words[1:])
    try:
        print(f"\nsparktrace proxy on {fields['grpc']} -> stand-in upstream {upstream_address}")
        print("sending sample traffic through the proxy (access log lines appear on stderr):")
        send_sample_traffic(fields["grpc"])
        metrics = urllib.request.urlopen(f"http://{fields['admin']}/metrics").read().decode()
        print("\nmetrics (sparktrace_rpc_calls_total):")
        for line in metrics.splitlines():
            if line.startswith("sparktrace_rpc_calls_total"):
                print("  " + line)
        print(f"\nadmin: http://{fields['admin']}/metrics  /readyz  /healthz")
        print(f"point a client at it: grpc target {fields['grpc']}, e.g. sc://{fields['grpc']}")
        if not args.once:
            print("serving until Ctrl-C")
            # Blocked only now: a mask set before the children started would be inherited by them.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        proxy.send_signal(signal.SIGTERM)
        code = proxy.wait(timeout=30)
        upstream.terminate()
        upstream.wait(timeout=10)
    return code


if __name__ == "__main__":
    sys.exit(main())
