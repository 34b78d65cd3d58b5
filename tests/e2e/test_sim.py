"""`sparktrace sim`, the Spark Connect protocol simulator, driven by a grpcio client built from
our own protos (proto/spark/connect/*.proto, compiled to Python into a temp dir at test time).

Checks the protocol behaviour the proxy's tests rely on: batches + result_complete, stream cuts
resumed by ReattachExecute without lost or duplicated responses, ReleaseExecute, Interrupt,
Spark-style errors, and stable server-side session ids.
"""

import atexit
import importlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid
from pathlib import Path

import grpc

from harness import BIN, READY_TIMEOUT, channel, proxy_env, run_cli

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parents[1] / "proto"
CALL_TIMEOUT = 20  # seconds; every RPC is bounded

_STUBS_DIR = None


def load_stubs():
    """(base_pb2, base_pb2_grpc) generated from our protos into a temp dir. grpc_tools when
    installed, else protoc with grpc_python_plugin (Debian: protobuf-compiler-grpc)."""
    global _STUBS_DIR
    if _STUBS_DIR is None:
        _STUBS_DIR = tempfile.mkdtemp(prefix="sparktrace-sim-stubs-")
        # At exit, not in a tearDownModule: the other modules that import the stubs from here
        # never run this module's teardown.
        atexit.register(shutil.rmtree, _STUBS_DIR, ignore_errors=True)
        protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / "spark" / "connect").glob("*.proto"))
        try:
            import grpc_tools  # noqa: F401
            cmd = [sys.executable, "-m", "grpc_tools.protoc"]
            plugin = []
        except ImportError:
            protoc = shutil.which("protoc")
            grpc_plugin = shutil.which("grpc_python_plugin")
            if not protoc or not grpc_plugin:
                raise AssertionError("need grpc_tools or protoc + grpc_python_plugin to build the stubs")
            cmd = [protoc]
            plugin = [f"--plugin=protoc-gen-grpc_python={grpc_plugin}"]
        subprocess.run([*cmd, f"-I{PROTO_ROOT}", f"--python_out={_STUBS_DIR}", *plugin,
                        f"--grpc_python_out={_STUBS_DIR}", *protos],
                       check=True, cwd=PROTO_ROOT, timeout=60)
        sys.path.insert(0, _STUBS_DIR)
    return (importlib.import_module("spark.connect.base_pb2"),
            importlib.import_module("spark.connect.base_pb2_grpc"))


class Sim:
    """One `sparktrace sim` process; stop() checks it exits 0 on SIGTERM."""

    def __init__(self, *args):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([BIN, "sim", "--listen", "127.0.0.1:0", *args], env=proxy_env(),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=READY_TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"sim printed no listening line\n{self.stderr_text()}")
        prefix = "listening grpc="
        if not line.startswith(prefix):
            self.proc.kill()
            raise AssertionError(f"bad first line {line!r}\n{self.stderr_text()}")
        self.address = line[len(prefix):].strip()

    def stderr_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def stop(self):
        try:
            if self.proc.poll() is not None:
                raise AssertionError(f"sim exited early ({self.proc.returncode})\n{self.stderr_text()}")
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                raise AssertionError("sim ignored SIGTERM for 10s")
            if code != 0:
                raise AssertionError(f"sim exited {code} on SIGTERM\n{self.stderr_text()}")
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.stderr.close()


class SimCase(unittest.TestCase):
    SIM_ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.pb, cls.pb_grpc = load_stubs()
        cls.sim = Sim(*cls.SIM_ARGS)
        cls.addClassCleanup(cls.sim.stop)
        cls.channel = channel(cls.sim.address)
        cls.addClassCleanup(cls.channel.close)
        cls.stub = cls.pb_grpc.SparkConnectServiceStub(cls.channel)

    def setUp(self):
        self.session_id = str(uuid.uuid4())
        self.user = self.pb.UserContext(user_id="alice")

    def execute(self, reattachable=True, operation_id=None, tags=(), metadata=()):
        request = self.pb.ExecutePlanRequest(session_id=self.session_id, user_context=self.user,
                                             tags=list(tags))
        if operation_id:
            request.operation_id = operation_id
        if reattachable:
            request.request_options.add().reattach_options.reattachable = True
        return self.stub.ExecutePlan(request, metadata=list(metadata), timeout=CALL_TIMEOUT)

    def reattach(self, operation_id, last_response_id=None):
        request = self.pb.ReattachExecuteRequest(session_id=self.session_id, user_context=self.user,
                                                 operation_id=operation_id)
        if last_response_id is not None:
            request.last_response_id = last_response_id
        return self.stub.ReattachExecute(request, timeout=CALL_TIMEOUT)

    def release(self, operation_id, until=None):
        request = self.pb.ReleaseExecuteRequest(session_id=self.session_id, user_context=self.user,
                                                operation_id=operation_id)
        if until is None:
            request.release_all.SetInParent()
        else:
            request.release_until.response_id = until
        return self.stub.ReleaseExecute(request, timeout=CALL_TIMEOUT)

    def assert_spark_error(self, call, error_class):
        with self.assertRaises(grpc.RpcError) as raised:
            list(call)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INTERNAL, raised.exception.details())
        self.assertIn(error_class, raised.exception.details())


class ExecuteTest(SimCase):
    SIM_ARGS = ("--batches", "3", "--batch-bytes", "100")

    def test_reattachable_execution_streams_batches_then_result_complete(self):
        op = str(uuid.uuid4())
        responses = list(self.execute(operation_id=op, metadata=[("x-sim-batches", "4"),
                                                                 ("x-sim-batch-bytes", "2000")]))
        self.assertEqual([r.WhichOneof("response_type") for r in responses],
                         ["arrow_batch"] * 4 + ["result_complete"])
        for r in responses[:4]:
            self.assertEqual(len(r.arrow_batch.data), 2000)
            self.assertGreater(r.arrow_batch.row_count, 0)
        self.assertEqual({r.operation_id for r in responses}, {op})
        self.assertEqual({r.session_id for r in responses}, {self.session_id})
        self.assertEqual(len({r.response_id for r in responses}), 5)
        server_side = {r.server_side_session_id for r in responses}
        self.assertEqual(len(server_side), 1)
        self.assertNotIn("", server_side)

    def test_non_reattachable_execution_ends_without_result_complete(self):
        responses = list(self.execute(reattachable=False))
        self.assertEqual([r.WhichOneof("response_type") for r in responses], ["arrow_batch"] * 3)
        self.assertEqual(len(responses[0].arrow_batch.data), 100)
        # No client-side id: the server names the operation, the same on every response.
        ids = {r.operation_id for r in responses}
        self.assertEqual(len(ids), 1)
        self.assertNotIn("", ids)
        # It is over with its stream: nothing to reattach to.
        self.assert_spark_error(self.reattach(ids.pop()), "INVALID_HANDLE.OPERATION_NOT_FOUND")

    def test_reattach_to_unknown_operation_is_operation_not_found(self):
        self.assert_spark_error(self.reattach(str(uuid.uuid4())), "INVALID_HANDLE.OPERATION_NOT_FOUND")

    def test_duplicate_operation_id_is_rejected(self):
        op = str(uuid.uuid4())
        list(self.execute(operation_id=op))
        self.assert_spark_error(self.execute(operation_id=op), "INVALID_HANDLE.OPERATION_ALREADY_EXISTS")

    def test_release_until_frees_replay_and_release_all_forgets_the_operation(self):
        op = str(uuid.uuid4())
        responses = list(self.execute(operation_id=op, metadata=[("x-sim-batches", "5")]))
        ids = [r.response_id for r in responses]
        self.assertEqual(len(ids), 6)
        # Still held: replay from the start.
        self.assertEqual([r.response_id for r in self.reattach(op, ids[0])], ids[1:])
        reply = self.release(op, until=ids[2])
        self.assertEqual(reply.operation_id, op)
        self.assertEqual(reply.server_side_session_id, responses[0].server_side_session_id)
        # Response ids[1] and ids[2] are gone now; resuming after ids[2] still works.
        self.assert_spark_error(self.reattach(op, ids[0]), "INVALID_CURSOR.POSITION_NOT_AVAILABLE")
        self.assertEqual([r.response_id for r in self.reattach(op, ids[2])], ids[3:])
        self.release(op)
        self.assert_spark_error(self.reattach(op, ids[2]), "INVALID_HANDLE.OPERATION_NOT_FOUND")

    def test_interrupt_by_tag_ends_a_running_stream(self):
        op = str(uuid.uuid4())
        # One batch now, the next a minute later: the operation is running when interrupted.
        call = self.execute(operation_id=op, tags=["nightly"],
                            metadata=[("x-sim-batches", "5"), ("x-sim-batch-interval-ms", "60000")])
        first = next(call)
        self.assertEqual(first.WhichOneof("response_type"), "arrow_batch")
        other = self.pb.InterruptRequest(session_id=self.session_id, user_context=self.user,
                                         interrupt_type=self.pb.InterruptRequest.INTERRUPT_TYPE_TAG,
                                         operation_tag="other-tag")
        self.assertEqual(list(self.stub.Interrupt(other, timeout=CALL_TIMEOUT).interrupted_ids), [])
        request = self.pb.InterruptRequest(session_id=self.session_id, user_context=self.user,
                                           interrupt_type=self.pb.InterruptRequest.INTERRUPT_TYPE_TAG,
                                           operation_tag="nightly")
        reply = self.stub.Interrupt(request, timeout=CALL_TIMEOUT)
        self.assertEqual(list(reply.interrupted_ids), [op])
        self.assertEqual(reply.server_side_session_id, first.server_side_session_id)
        self.assert_spark_error(call, "OPERATION_CANCELED")

    def test_interrupt_by_operation_id_and_all(self):
        running = []
        for _ in range(2):
            op = str(uuid.uuid4())
            call = self.execute(operation_id=op, metadata=[("x-sim-batch-interval-ms", "60000")])
            next(call)
            running.append((op, call))
        by_id = self.pb.InterruptRequest(session_id=self.session_id, user_context=self.user,
                                         interrupt_type=self.pb.InterruptRequest.INTERRUPT_TYPE_OPERATION_ID,
                                         operation_id=running[0][0])
        self.assertEqual(list(self.stub.Interrupt(by_id, timeout=CALL_TIMEOUT).interrupted_ids), [running[0][0]])
        self.assert_spark_error(running[0][1], "OPERATION_CANCELED")
        everything = self.pb.InterruptRequest(session_id=self.session_id, user_context=self.user,
                                              interrupt_type=self.pb.InterruptRequest.INTERRUPT_TYPE_ALL)
        self.assertEqual(list(self.stub.Interrupt(everything, timeout=CALL_TIMEOUT).interrupted_ids),
                         [running[1][0]])
        self.assert_spark_error(running[1][1], "OPERATION_CANCELED")

    def test_failure_on_demand(self):
        call = self.execute(metadata=[("x-sim-fail", "14"), ("x-sim-fail-after", "2")])
        got = []
        with self.assertRaises(grpc.RpcError) as raised:
            for response in call:
                got.append(response.WhichOneof("response_type"))
        self.assertEqual(got, ["arrow_batch", "arrow_batch"])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("sparktrace-sim", raised.exception.details())
        trailers = dict(raised.exception.trailing_metadata() or ())
        self.assertIn("grpc-status-details-bin", trailers)

    def test_bad_override_metadata_is_invalid_argument(self):
        with self.assertRaises(grpc.RpcError) as raised:
            list(self.execute(metadata=[("x-sim-batches", "many")]))
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)


class SessionTest(SimCase):
    def config_get(self, session_id, user_id="alice", observed=None):
        request = self.pb.ConfigRequest(session_id=session_id, user_context=self.pb.UserContext(user_id=user_id))
        request.operation.get.keys.append("spark.sql.shuffle.partitions")
        if observed is not None:
            request.client_observed_server_side_session_id = observed
        return self.stub.Config(request, timeout=CALL_TIMEOUT)

    def test_server_side_session_id_is_stable_per_session(self):
        first = self.config_get(self.session_id)
        self.assertEqual(first.session_id, self.session_id)
        self.assertEqual(list(first.pairs), [])
        server_side = first.server_side_session_id
        self.assertTrue(server_side)
        self.assertEqual(self.config_get(self.session_id, observed=server_side).server_side_session_id, server_side)
        responses = list(self.execute(reattachable=False))
        self.assertEqual({r.server_side_session_id for r in responses}, {server_side})
        analyze = self.stub.AnalyzePlan(
            self.pb.AnalyzePlanRequest(session_id=self.session_id, user_context=self.user,
                                       spark_version=self.pb.AnalyzePlanRequest.SparkVersion()),
            timeout=CALL_TIMEOUT)
        self.assertEqual(analyze.server_side_session_id, server_side)
        self.assertIn("sparktrace-sim", analyze.spark_version.version)
        # Another session, or the same session id of another user, is another session.
        self.assertNotEqual(self.config_get(str(uuid.uuid4())).server_side_session_id, server_side)
        self.assertNotEqual(self.config_get(self.session_id, user_id="bob").server_side_session_id, server_side)

    def test_released_session_gets_a_new_server_side_id(self):
        server_side = self.config_get(self.session_id).server_side_session_id
        reply = self.stub.ReleaseSession(self.pb.ReleaseSessionRequest(session_id=self.session_id,
                                                                       user_context=self.user),
                                         timeout=CALL_TIMEOUT)
        self.assertEqual(reply.server_side_session_id, server_side)
        with self.assertRaises(grpc.RpcError) as raised:
            self.config_get(self.session_id, observed=server_side)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INTERNAL)
        self.assertIn("INVALID_HANDLE.SESSION_CHANGED", raised.exception.details())


class StreamCutTest(SimCase):
    # Every batch response is a little over 1000 bytes: a cut after about every third one.
    SIM_ARGS = ("--batches", "10", "--batch-bytes", "1000", "--stream-cut-bytes", "3000")

    def test_cut_streams_resume_without_lost_or_duplicated_responses(self):
        op = str(uuid.uuid4())
        streams = [list(self.execute(operation_id=op))]
        while streams[-1][-1].WhichOneof("response_type") != "result_complete":
            self.assertLess(len(streams), 20, "no result_complete after 20 streams")
            last = streams[-1][-1].response_id
            # Like the Python client: release what has arrived, then resume after it.
            self.release(op, until=last)
            streams.append(list(self.reattach(op, last)))
        responses = [r for stream in streams for r in stream]
        self.assertGreater(len(streams), 2, "the stream was never cut")
        self.assertEqual([r.WhichOneof("response_type") for r in responses],
                         ["arrow_batch"] * 10 + ["result_complete"])
        self.assertEqual(len({r.response_id for r in responses}), 11)
        # Row offsets run on without a gap or overlap across the cuts.
        offset = 0
        for r in responses[:10]:
            self.assertEqual(r.arrow_batch.start_offset, offset)
            offset += r.arrow_batch.row_count
        self.release(op)

    def test_non_reattachable_streams_are_never_cut(self):
        responses = list(self.execute(reattachable=False))
        self.assertEqual(len(responses), 10)


class StreamCutAfterTest(SimCase):
    # 10 batches 40ms apart take ~360ms; streams are cut after 100ms, so there must be several.
    SIM_ARGS = ("--batches", "10", "--batch-interval", "40ms", "--stream-cut-after", "100ms")

    def test_time_cut_streams_resume_in_order(self):
        op = str(uuid.uuid4())
        streams = [list(self.execute(operation_id=op))]
        while not streams[-1] or streams[-1][-1].WhichOneof("response_type") != "result_complete":
            self.assertLess(len(streams), 50, "no result_complete after 50 streams")
            last = next(r.response_id for stream in reversed(streams) for r in reversed(stream))
            streams.append(list(self.reattach(op, last)))
        responses = [r for stream in streams for r in stream]
        self.assertGreater(len(streams), 1, "the stream was never cut")
        self.assertEqual([r.WhichOneof("response_type") for r in responses],
                         ["arrow_batch"] * 10 + ["result_complete"])
        self.assertEqual(len({r.response_id for r in responses}), 11)


class ShutdownTest(unittest.TestCase):
    def test_sigterm_ends_running_streams_and_exits_0(self):
        pb, pb_grpc = load_stubs()
        sim = Sim("--batch-interval", "1m")
        ch = channel(sim.address)
        self.addCleanup(ch.close)
        request = pb.ExecutePlanRequest(session_id=str(uuid.uuid4()), operation_id=str(uuid.uuid4()))
        request.request_options.add().reattach_options.reattachable = True
        call = pb_grpc.SparkConnectServiceStub(ch).ExecutePlan(request, timeout=CALL_TIMEOUT)
        next(call)
        sim.stop()  # asserts exit code 0 within 10s
        with self.assertRaises(grpc.RpcError) as raised:
            list(call)
        self.assertNotEqual(raised.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)


class CliTest(unittest.TestCase):
    def test_help_says_it_simulates_the_protocol(self):
        result = run_cli(["sim", "--help"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Simulates the Spark Connect gRPC protocol, not Spark", result.stdout)
        self.assertIn("--stream-cut-after", result.stdout)

    def test_bad_flags_exit_2(self):
        for args in (["--batches", "-1"], ["--batch-bytes", "lots"], ["--listen", "nowhere"],
                     ["--stream-cut-after", "soon"], ["extra"]):
            result = run_cli(["sim", *args])
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn("sparktrace sim", result.stderr)

    def test_flag_from_environment(self):
        result = run_cli(["sim"], env={"SPARKTRACE_BATCHES": "nope"})
        self.assertEqual(result.returncode, 2)
        self.assertIn("--batches", result.stderr)


if __name__ == "__main__":
    unittest.main()
