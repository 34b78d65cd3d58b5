"""A real PostgreSQL server for the tests: Debian's postgresql-15, a fresh cluster in a temporary
directory, reachable on a unix socket in that directory (no TCP port to collide with other tests),
stopped by PID.

PostgreSQL refuses to run as root; when the tests run as root (CI), the cluster belongs to the
`postgres` system user the Debian package creates, and root connects through the socket as the
cluster's superuser role. Durability is turned off (fsync, full_page_writes): the tests kill our
processes, never the server's machine.

Used three ways:
- from Python: `with PostgresServer() as pg: pg.create_database("x"); pg.url("x")`;
- by CTest as a fixture: `postgres_server.py start DIR` leaves a server running and writes its base
  URL to DIR/url; `postgres_server.py stop DIR` stops it (tests/CMakeLists.txt);
- by hand: `python3 tests/support/postgres_server.py start /tmp/pg && cat /tmp/pg/url`.
"""

import argparse
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

# SPARKTRACE_PG_BIN: another copy of these programs (bench/device_bundle.sh --with-postgres carries
# one to a machine without the package).
BIN = Path(os.environ.get("SPARKTRACE_PG_BIN", "/usr/lib/postgresql/15/bin"))
ROLE = "sparktrace"
READY_TIMEOUT = 30  # seconds; a fresh cluster starts in about one


def _owner():
    """The user the cluster runs as: ourselves, or `postgres` when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root and there is no 'postgres' user: install postgresql-15")


def _run_as(owner, command, **kwargs):
    if owner is not None:
        kwargs.update(user=owner.pw_uid, group=owner.pw_gid, extra_groups=[])
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {result.returncode}: {result.stderr.strip()}")
    return result


class PostgresServer:
    def __init__(self, directory=None, keep=False):
        if not (BIN / "postgres").exists():
            raise RuntimeError(f"{BIN / 'postgres'} is missing: install postgresql-15 (scripts/deps.sh)")
        self.owner = _owner()
        self.created_directory = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="sparktrace-pg-"))
        self.keep = keep
        self.data = self.directory / "data"
        self.socket_dir = self.directory
        self.process = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self):
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.owner is not None:
            for ancestor in self.directory.resolve().parents:
                if not os.stat(ancestor).st_mode & 0o001:
                    raise RuntimeError(f"{ancestor} is not traversable by the 'postgres' user the cluster runs as: "
                                       f"put the cluster elsewhere (under /tmp) or chmod o+x it")
            os.chown(self.directory, self.owner.pw_uid, self.owner.pw_gid)
        os.chmod(self.directory, 0o755)
        if not self.data.exists():
            _run_as(self.owner, [str(BIN / "initdb"), "-D", str(self.data), "-U", ROLE, "--auth=trust",
                                 "-E", "UTF8", "--locale=C", "--no-sync"], timeout=120)
        log = open(self.directory / "server.log", "ab")
        kwargs = {}
        if self.owner is not None:
            kwargs.update(user=self.owner.pw_uid, group=self.owner.pw_gid, extra_groups=[])
        self.process = subprocess.Popen(
            [str(BIN / "postgres"), "-D", str(self.data), "-k", str(self.socket_dir), "-c", "listen_addresses=",
             "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
             "-c", "max_connections=200", "-c", "shared_buffers=128MB"],
            stdout=log, stderr=log, start_new_session=True, **kwargs)
        log.close()
        self._wait_ready()
        return self

    def _wait_ready(self):
        """postmaster.pid's 8th line says 'ready' once the server accepts connections."""
        pid_file = self.data / "postmaster.pid"
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.process.returncode}: {self.log_tail()}")
            try:
                lines = pid_file.read_text().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"postgres not ready after {READY_TIMEOUT}s: {self.log_tail()}")

    def pid(self):
        try:
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return None

    def stop(self, mode=signal.SIGINT, timeout=30):
        """SIGINT is PostgreSQL's fast shutdown (sessions ended, a clean checkpoint)."""
        pid = self.process.pid if self.process is not None else self.pid()
        if pid is not None:
            try:
                os.kill(pid, mode)
            except ProcessLookupError:
                pid = None
        if self.process is not None:
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        elif pid is not None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.05)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)

    def cleanup(self):
        self.stop()
        if self.created_directory and not self.keep:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()

    # --- use ---------------------------------------------------------------------------------
    def url(self, database="postgres", user=ROLE):
        """A libpq URL for the socket; sslmode=disable because a unix socket has no TLS."""
        return f"postgresql://{user}@/{database}?host={self.socket_dir}&sslmode=disable"

    def psql(self, sql, database="postgres", user=ROLE):
        result = subprocess.run([str(BIN / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                 "-h", str(self.socket_dir), "-U", user, "-d", database, "-c", sql],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {result.stderr.strip()}")
        return result.stdout.strip()

    def create_database(self, name=None):
        name = name or "t_" + uuid.uuid4().hex[:12]
        self.psql(f'CREATE DATABASE "{name}"')
        return name

    def log_tail(self, lines=20):
        try:
            return "\n".join((self.directory / "server.log").read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no server log)"


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("directory")
    args = parser.parse_args(argv)
    directory = Path(args.directory)
    if args.action == "start":
        # A cluster left by an interrupted run is stopped and replaced.
        if directory.exists():
            PostgresServer(directory).stop()
            shutil.rmtree(directory)
        server = PostgresServer(directory)
        server.start()
        server.process = None  # left running for the tests; `stop` finds it by postmaster.pid
        (directory / "url").write_text(server.url())
        os.chmod(directory / "url", 0o644)
        print(server.url())
    else:
        if directory.exists():
            PostgresServer(directory).stop()
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
