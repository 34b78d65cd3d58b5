"""The per-test deadline every e2e module gets from harness (deadline.py): a test, or a class
fixture, that blocks past it is ended within seconds, exit code deadline.EXIT_CODE, with a dump
naming the phase and the function it blocked in, the stderr tail of each proxy still running and
(gdb permitting) its backtraces; the proxy does not outlive it. Tests that finish in time never
hear of it, however long the module runs.

Each case runs a small unittest module in a child Python with a tiny deadline; the "proxy" is a
shell script that prints the listening line and sleeps, so no sparktrace binary is needed.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

import deadline

deadline.install()

HERE = Path(__file__).resolve().parent
CHILD_TIMEOUT = 90  # seconds: far beyond what any case here needs, so a watchdog that fails is seen
DUMP_BUDGET = 30  # seconds from start to exit for a hanging child: deadline + gdb + slack for load

FAKE_PROXY = """#!/bin/sh
echo "fake proxy started: $*" >&2
echo "listening grpc=127.0.0.1:1 admin=127.0.0.1:2"
exec sleep 300
"""

HANGS_IN_TEST = """
import threading
import unittest

import harness


def blocked_in_the_test():
    threading.Event().wait()


class Hangs(unittest.TestCase):
    def test_blocks(self):
        proxy = harness.start_proxy(self, None)
        print("fake proxy pid", proxy.pid, flush=True)
        blocked_in_the_test()
"""

HANGS_IN_SET_UP_CLASS = """
import threading
import unittest

import harness


def blocked_in_set_up_class():
    threading.Event().wait()


class Hangs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        blocked_in_set_up_class()

    def test_never_runs(self):
        pass
"""

# Each test takes most of the deadline and the two together more than it: the deadline is per test.
IN_TIME = """
import threading
import unittest

import harness


class InTime(unittest.TestCase):
    def test_first(self):
        threading.Event().wait(2.5)

    def test_second(self):
        threading.Event().wait(2.5)
"""


def run_child(source, deadline_seconds):
    """Runs `source` as a unittest module with the deadline set; (exit code, stdout, stderr,
    seconds)."""
    with tempfile.TemporaryDirectory(prefix="sparktrace-watchdog-") as tmp:
        fake = Path(tmp) / "fake-sparktrace"
        fake.write_text(FAKE_PROXY)
        fake.chmod(0o755)
        (Path(tmp) / "child_module.py").write_text(textwrap.dedent(source))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SPARKTRACE_")}
        # TMPDIR: a child ended at its deadline keeps its proxy's files (harness's dump says where);
        # here they are the case's own, removed with this directory.
        env.update(PYTHONPATH=str(HERE), PYTHONDONTWRITEBYTECODE="1", SPARKTRACE_BIN=str(fake), TMPDIR=tmp,
                   **{deadline.ENV: str(deadline_seconds)})
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "unittest", "-v", "child_module"], cwd=tmp,
                                env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=CHILD_TIMEOUT)
        return result.returncode, result.stdout, result.stderr, time.monotonic() - started


def process_gone(pid):
    """True once `pid` has exited (gone, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


class WatchdogTest(unittest.TestCase):
    def test_a_blocked_test_is_ended_with_a_dump_and_its_proxy_with_it(self):
        code, out, err, seconds = run_child(HANGS_IN_TEST, 1)
        self.assertEqual(code, deadline.EXIT_CODE, err[-3000:])
        self.assertLess(seconds, DUMP_BUDGET, err[-3000:])
        self.assertIn(f"{deadline.MARKER} child_module.Hangs.test_blocks still running", err)
        self.assertIn("in blocked_in_the_test", err, "the stack names where the test blocked")
        self.assertIn("fake proxy started: proxy --listen", err, "the live proxy's stderr tail")
        if shutil.which("gdb"):
            self.assertIn("gdb thread apply all bt", err)
        self.assertIn(f"{deadline.MARKER} end of dump", err)
        pid = int(out.split("fake proxy pid", 1)[1].split()[0])
        self.assertTrue(process_gone(pid), f"the proxy {pid} outlived the test process")

    def test_a_blocked_class_fixture_is_ended_with_a_dump(self):
        code, _, err, seconds = run_child(HANGS_IN_SET_UP_CLASS, 1)
        self.assertEqual(code, deadline.EXIT_CODE, err[-3000:])
        self.assertLess(seconds, DUMP_BUDGET, err[-3000:])
        self.assertIn(f"{deadline.MARKER} setUpClass of child_module.Hangs still running", err)
        self.assertIn("in blocked_in_set_up_class", err)
        self.assertIn("(no proxy running)", err)

    def test_tests_that_finish_in_time_pass_however_long_the_module_runs(self):
        code, _, err, seconds = run_child(IN_TIME, 4)
        self.assertEqual(code, 0, err[-3000:])
        self.assertGreater(seconds, 4, "the module as a whole outlasted the deadline")
        self.assertNotIn(deadline.MARKER, err)
        self.assertIn("Ran 2 tests", err)

    def test_the_deadline_setting(self):
        self.assertEqual(deadline.configured_seconds({}), deadline.DEFAULT_SECONDS)
        self.assertEqual(deadline.configured_seconds({"SPARKTRACE_SANITIZED": "1"}),
                         deadline.SANITIZED_SECONDS)
        self.assertEqual(deadline.configured_seconds({deadline.ENV: "42.5"}), 42.5)
        self.assertIsNone(deadline.configured_seconds({deadline.ENV: "0"}), "0 turns it off")
        with self.assertRaises(ValueError):
            deadline.configured_seconds({deadline.ENV: "soon"})


if __name__ == "__main__":
    unittest.main()
