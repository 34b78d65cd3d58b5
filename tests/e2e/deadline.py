"""A deadline for every test of the end-to-end modules, with a dump when one is missed.

CTest kills a module after 300 s and says no more than "Timeout": which test hung, on what, and
what the proxy was doing at the time are lost. install() (harness calls it, so every e2e module
that imports harness has it) arms a watchdog around each test (TestCase.run: setUp, the test,
tearDown and cleanups), around class and module fixtures, and around the interpreter's exit once
the tests are done. A phase still running after the deadline gets, on stderr:

  - a line starting with MARKER that names the phase;
  - every Python thread's stack (faulthandler);
  - what the registered sections add (harness: each live proxy's stderr tail and its threads'
    backtraces from gdb);
  - the child processes of this one, which are then killed (they would outlive it as orphans);

and the process exits EXIT_CODE: seconds after the deadline rather than at CTest's kill.

The deadline is $SPARKTRACE_TEST_DEADLINE seconds (0: no watchdog). The default, 150 s (200 s
when $SPARKTRACE_SANITIZED=1, AddressSanitizer builds being about twice as slow), is well above
the longest single test (about 60 s) and below CTest's 300 s for a whole module, so that a hang
is reported by this dump rather than by CTest's kill.

Should the watchdog thread never get to run (a wedged extension holding the GIL), faulthandler's
own C thread dumps the Python stacks one to two BACKSTOP_GRACE later and exits 1 ("Timeout
(...)!").

Standard library only: test_diagnose and test_thirdparty_logs import it without grpc.
"""

import contextlib
import faulthandler
import functools
import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

ENV = "SPARKTRACE_TEST_DEADLINE"
DEFAULT_SECONDS = 150.0
SANITIZED_SECONDS = 200.0
EXIT_CODE = 124  # as timeout(1)
MARKER = "sparktrace test deadline:"
BACKSTOP_GRACE = 60.0
GDB_TIMEOUT = 20.0  # seconds for one process's backtraces
DUMP_LIMIT = 120.0  # seconds for the whole dump (gdb included: harness gives it 60 s in all)

_watchdog = None


def configured_seconds(environ=os.environ):
    """The deadline in seconds, or None when $SPARKTRACE_TEST_DEADLINE turns the watchdog off."""
    value = environ.get(ENV, "").strip()
    if not value:
        return SANITIZED_SECONDS if environ.get("SPARKTRACE_SANITIZED") == "1" else DEFAULT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{ENV}={value!r} is not a number of seconds") from None
    return seconds if seconds > 0 else None


class Watchdog:
    """One thread that sleeps until the earliest armed deadline. Arming and disarming are a dict
    update under one lock (a notify only when the thread sleeps with nothing armed), so a test
    that finishes in time costs a few microseconds: the deadline is the same for every phase,
    so a phase armed later never has the earliest one, and the thread finds out what ended when
    it wakes."""

    def __init__(self, seconds):
        self.seconds = seconds
        self._cond = threading.Condition()
        self._armed = {}  # token -> (label, monotonic deadline)
        self._tokens = itertools.count()
        self._sections = []
        self._thread = None
        self._idle = False  # the thread waits with nothing armed: an arm must wake it
        self._backstop = None  # when faulthandler's own dump is due (monotonic); None: not armed

    def add_section(self, section):
        """`section(say)` adds to the dump; `say(text)` writes a line to stderr."""
        self._sections.append(section)

    @contextlib.contextmanager
    def armed(self, label):
        token = self.arm(label)
        try:
            yield
        finally:
            self.disarm(token)

    def arm(self, label):
        with self._cond:
            token = next(self._tokens)
            self._armed[token] = (label, time.monotonic() + self.seconds)
            if self._backstop is None:  # here, not by the thread: it may never get the GIL
                self._move_backstop(self._armed[token][1])
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="sparktrace-test-deadline")
                self._thread.start()
            elif self._idle:
                self._cond.notify()
        return token

    def disarm(self, token):
        with self._cond:
            self._armed.pop(token, None)

    def _watch(self):
        with self._cond:
            while True:
                if not self._armed:
                    self._move_backstop(None)
                    self._idle = True
                    self._cond.wait()
                    self._idle = False
                    continue
                label, deadline = min(self._armed.values(), key=lambda entry: entry[1])
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._move_backstop(deadline)
                self._cond.wait(remaining)
            # This thread runs, so the dump is ours; the backstop now only bounds the dump itself.
            if sys.__stderr__ is not None:
                faulthandler.dump_traceback_later(DUMP_LIMIT, exit=True, file=sys.__stderr__)
        self._fire(label)

    def _move_backstop(self, deadline):
        """Keeps faulthandler's dump between one and two BACKSTOP_GRACE after `deadline` (None:
        off), moving it only when it would fire sooner: a thread started each time costs more
        than the test phases it would guard."""
        if deadline is None:
            if self._backstop is not None:
                faulthandler.cancel_dump_traceback_later()
                self._backstop = None
            return
        if sys.__stderr__ is None or (self._backstop is not None
                                      and self._backstop >= deadline + BACKSTOP_GRACE):
            return
        self._backstop = deadline + 2 * BACKSTOP_GRACE
        faulthandler.dump_traceback_later(self._backstop - time.monotonic(), exit=True,
                                          file=sys.__stderr__)

    def _fire(self, label):
        out = sys.__stderr__

        def say(text):
            out.write(text.rstrip("\n") + "\n")
            out.flush()

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        say(f"\n{MARKER} {label} still running after {self.seconds:g} s ({ENV}); "
            f"dumping, then exiting {EXIT_CODE}")
        say("--- Python threads (most recent call first) ---")
        faulthandler.dump_traceback(file=out, all_threads=True)
        for section in self._sections:
            try:
                section(say)
            except Exception as error:  # noqa: BLE001 (the dump goes on; the exit must happen)
                say(f"({getattr(section, '__name__', section)} failed: {error!r})")
        kill_children(say)
        say(f"{MARKER} end of dump")
        os._exit(EXIT_CODE)


def processes():
    """(pid, fields) of every process in /proc, `fields` being its stat line after the command name:
    state, ppid, pgrp, session, ... (proc(5)). Processes that end meanwhile are left out."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                yield int(entry), f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue


def child_pids(parent=None):
    """The live processes whose parent is `parent` (default: this process), from /proc."""
    parent = os.getpid() if parent is None else parent
    return [pid for pid, fields in processes() if int(fields[1]) == parent and fields[0] != "Z"]


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def kill_children(say, reap_seconds=5.0):
    """SIGKILL this process's children: the exit that follows would leave them running. Then reaps
    them (for up to `reap_seconds`): a SIGKILL is only delivered when the child is next scheduled,
    which on a loaded machine can be after this process has exited."""
    children = child_pids()
    for pid in children:
        say(f"killing child pid {pid}: {command_line(pid)[:300]}")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + reap_seconds
    for pid in children:
        while True:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    break
            except ChildProcessError:  # reaped already, or not ours to reap
                break
            if time.monotonic() >= end:
                say(f"child pid {pid} still not gone {reap_seconds:g} s after SIGKILL")
                break
            time.sleep(0.01)  # polling a process's death: there is no event to wait on here


def gdb_backtraces(pid, timeout=GDB_TIMEOUT):
    """Every thread's backtrace of process `pid` from `gdb -batch` (bounded by `timeout`), or
    why there is none."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(no gdb on PATH: no native backtraces)"
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}  # never the network
    command = [gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-p", str(pid),
               "-ex", "thread apply all bt"]
    try:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, timeout=timeout, env=env)
        text = result.stdout
    except subprocess.TimeoutExpired as expired:
        text = (expired.stdout or b"") + f"\n(gdb stopped after {timeout:g} s)".encode()
    return text.decode(errors="replace")


def _guard(owner, name, describe):
    """Runs owner.name under the watchdog, labelled describe(*args); once per owner and name."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_sparktrace_deadline", False):
        return

    @functools.wraps(original)
    def guarded(*args, **kwargs):
        with _watchdog.armed(describe(*args)):
            return original(*args, **kwargs)

    guarded._sparktrace_deadline = True
    setattr(owner, name, guarded)


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}" if cls is not None else "?"


def _arm_for_exit(owner, name):
    """After unittest.main's run (it raises SystemExit), the exit itself is watched: a
    non-daemon thread that never ends would hold it forever."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_sparktrace_deadline", False):
        return

    @functools.wraps(original)
    def guarded(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        finally:
            _watchdog.arm("interpreter exit after the tests (non-daemon threads, atexit)")

    guarded._sparktrace_deadline = True
    setattr(owner, name, guarded)


def install():
    """Arms the watchdog around every test from now on (idempotent); returns it, or None when
    $SPARKTRACE_TEST_DEADLINE=0 turned it off."""
    global _watchdog
    if _watchdog is not None:
        return _watchdog
    seconds = configured_seconds()
    if seconds is None:
        return None
    _watchdog = Watchdog(seconds)
    suite = unittest.suite.TestSuite
    _guard(unittest.TestCase, "run", lambda test, *_: test.id())
    _guard(suite, "_handleModuleFixture", lambda _, test, *__: f"setUpModule of {type(test).__module__}")
    _guard(suite, "_handleClassSetUp", lambda _, test, *__: f"setUpClass of {_class_name(type(test))}")
    _guard(suite, "_tearDownPreviousClass", lambda _, test, result: "tearDownClass (and class cleanups) of "
           + _class_name(getattr(result, "_previousTestClass", None)))
    _guard(suite, "_handleModuleTearDown", lambda _, result: "tearDownModule of "
           + _class_name(getattr(result, "_previousTestClass", None)).rsplit(".", 1)[0])
    _arm_for_exit(unittest.TestProgram, "runTests")
    return _watchdog


def add_section(section):
    """Adds `section(say)` to the dump (nothing when the watchdog is off)."""
    if _watchdog is not None:
        _watchdog.add_section(section)
