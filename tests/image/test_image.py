"""The container image: `make image` builds it (scripts/image/build.sh), and it runs.

Builds the image from $SPARKTRACE_BIN with the same script `make image` runs, then starts it with
podman: `sparktrace --version`, the proxy on a read-only root filesystem as user 65532 answering
/readyz and forwarding a call byte-exact to an upstream on the host, and the image's runtime
configuration against the Dockerfile's final stage (the two must not drift).

Podman runs here with runc and cgroupfs and without its default rlimits: this VM mounts cgroups in
hybrid mode, which crun refuses, and does not let a container raise RLIMIT_NOFILE/NPROC. Those
options change how the container is started, not what the image holds.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import grpc  # noqa: E402

from harness import free_port, http_get, md, wait_until  # noqa: E402
from peers.upstream_server import Upstream  # noqa: E402

BIN = os.environ.get("SPARKTRACE_BIN") or str(ROOT / "build" / "sparktrace")
TOOLS = ("podman", "buildah", "mmdebstrap")
ECHO = "/sparktrace.test.Echo/Unary"


def podman(env, *args, timeout=60, storage=None):
    """Runs podman (runc, cgroupfs: see the module's doc); `storage`: a separate image store."""
    store = ["--root", str(storage / "root"), "--runroot", str(storage / "run")] if storage else []
    return subprocess.run(["podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", *store, *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def missing_tools():
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def dockerfile_runtime_config():
    """USER, ENTRYPOINT, CMD, EXPOSE, WORKDIR and ENV of the Dockerfile's last stage."""
    text = (ROOT / "Dockerfile").read_text()
    # Join continued lines, then keep what follows the last FROM.
    lines = re.sub(r"\\\n\s*", " ", text).splitlines()
    last_from = max(i for i, line in enumerate(lines) if line.upper().startswith("FROM "))
    config = {"EXPOSE": [], "ENV": {}}
    for line in lines[last_from + 1:]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, value = line.partition(" ")
        instruction = instruction.upper()
        if instruction == "EXPOSE":
            config["EXPOSE"] += value.split()
        elif instruction == "ENV":
            key, _, env_value = value.partition("=")
            config["ENV"][key.strip()] = env_value.strip()
        elif instruction in ("USER", "ENTRYPOINT", "CMD", "WORKDIR"):
            config[instruction] = json.loads(value) if value.startswith("[") else value
    return config


@unittest.skipIf(missing_tools(), f"needs {', '.join(TOOLS)} (scripts/deps.sh installs them)")
@unittest.skipUnless(os.geteuid() == 0, "podman and mmdebstrap --mode=root need root here")
class ImageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="sparktrace-image-"))
        containers_conf = cls.tmp / "containers.conf"
        containers_conf.write_text("[containers]\ndefault_ulimits = []\n")
        cls.env = dict(os.environ, CONTAINERS_CONF=str(containers_conf))
        cls.tag = f"localhost/sparktrace-test:{uuid.uuid4().hex[:10]}"
        cls.archive = cls.tmp / "image.oci.tar"
        cls.containers = []
        build = subprocess.run(
            [str(ROOT / "scripts" / "image" / "build.sh"), "--binary", BIN, "--tag", cls.tag,
             "--archive", str(cls.archive)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, env=cls.env)
        if build.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise AssertionError(f"scripts/image/build.sh failed:\n{build.stdout}\n{build.stderr}")

    @classmethod
    def tearDownClass(cls):
        for name in cls.containers:
            podman(cls.env, "rm", "-f", "-t", "0", name)
        podman(cls.env, "rmi", "-f", cls.tag)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def podman(self, *args, timeout=60, storage=None):
        return podman(self.env, *args, timeout=timeout, storage=storage)

    def inspect(self):
        result = self.podman("image", "inspect", self.tag)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)[0]

    def start(self, *args):
        name = f"sparktrace-test-{uuid.uuid4().hex[:10]}"
        type(self).containers.append(name)
        result = self.podman("run", "-d", "--name", name, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return name

    def test_prints_the_binarys_version(self):
        expected = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=10).stdout
        result = self.podman("run", "--rm", "--network", "none", self.tag, "--version")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, expected)
        self.assertRegex(result.stdout, r"^sparktrace \d+\.\d+\.\d+\n$")

    def test_has_no_shell_and_runs_as_nonroot(self):
        config = self.inspect()["Config"]
        self.assertEqual(config["User"], "65532:65532")
        for shell in ("/bin/sh", "/bin/bash", "/usr/bin/dash"):
            result = self.podman("run", "--rm", "--network", "none", "--entrypoint", shell, self.tag, "-c", "true")
            self.assertNotEqual(result.returncode, 0, f"{shell} exists in the image")

    def test_runtime_configuration_is_the_dockerfiles(self):
        config = self.inspect()["Config"]
        dockerfile = dockerfile_runtime_config()
        self.assertEqual(config["User"], dockerfile["USER"])
        self.assertEqual(config["Entrypoint"], dockerfile["ENTRYPOINT"])
        self.assertEqual(config["Cmd"], dockerfile["CMD"])
        self.assertEqual(config.get("WorkingDir"), dockerfile["WORKDIR"])
        self.assertEqual(sorted(config["ExposedPorts"]), sorted(f"{port}/tcp" for port in dockerfile["EXPOSE"]))
        env = dict(entry.split("=", 1) for entry in config.get("Env", []))
        for key, value in dockerfile["ENV"].items():
            self.assertEqual(env.get(key), value, key)

    def test_the_oci_archive_runs_from_an_empty_image_store(self):
        # What a user does with the archive on another machine (podman load, kind load image-archive).
        storage = self.tmp / "other-store"
        self.addCleanup(shutil.rmtree, storage, True)
        self.addCleanup(self.podman, "rmi", "-a", "-f", storage=storage)
        loaded = self.podman("load", "-i", str(self.archive), timeout=120, storage=storage)
        self.assertEqual(loaded.returncode, 0, loaded.stderr)
        self.assertIn(self.tag, loaded.stdout)
        result = self.podman("run", "--rm", "--network", "none", self.tag, "--version", storage=storage)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("sparktrace "), result.stdout)

    def test_proxy_on_a_read_only_root_is_ready_and_forwards(self):
        upstream = Upstream()
        upstream.start()
        self.addCleanup(upstream.stop)
        listen, admin = free_port(), free_port()
        # The volume Kubernetes mounts there (k8s/base: an emptyDir), owned by the image's user.
        store = self.tmp / "store"
        store.mkdir()
        os.chown(store, 65532, 65532)
        name = self.start(
            "--network", "host", "--read-only", "--volume", f"{store}:/var/lib/sparktrace",
            self.tag, "proxy", "--listen", f"127.0.0.1:{listen}", "--admin", f"127.0.0.1:{admin}",
            "--upstream", upstream.address, "--drain-timeout", "5s", "--log-format", "json")

        def ready():
            try:
                return http_get(f"127.0.0.1:{admin}", "/readyz", timeout=1)[0] == 200
            except OSError:
                return False
        try:
            wait_until(ready, 30, interval=0.1, message="the container's /readyz")
        except AssertionError:
            self.fail(f"not ready; container log:\n{self.podman('logs', name).stderr}")

        payload = os.urandom(70_000)
        with grpc.insecure_channel(f"127.0.0.1:{listen}") as channel:
            response, call = channel.unary_unary(ECHO).with_call(
                payload, metadata=[("x-test-id", "image")], timeout=20)
        self.assertEqual(hashlib.sha256(response).digest(), hashlib.sha256(payload).digest())
        self.assertEqual(md(call.trailing_metadata(), "x-request-sha256"), [hashlib.sha256(payload).hexdigest()])

        # The proxy counts a call once it has wound down, which may be just after the client has its
        # answer: wait for the count rather than reading /metrics once.
        call_counted = re.compile(r'sparktrace_rpc_calls_total\{[^}]*method="/sparktrace.test.Echo/Unary"[^}]*\} 1$', re.M)

        def counted():
            status, _, metrics = http_get(f"127.0.0.1:{admin}", "/metrics")
            return status == 200 and call_counted.search(metrics) is not None
        wait_until(counted, 10, interval=0.05, message="the forwarded call on the container's /metrics")
        # The default store (the image's ENV) is on the volume, written by user 65532.
        self.assertEqual((store / "traces.db").stat().st_uid, 65532)
        # As PID 1 the proxy gets SIGTERM with no default action: it must drain and exit 0 itself,
        # well before podman's kill after 20 s.
        stopped_at = time.monotonic()
        stop = self.podman("stop", "-t", "20", name, timeout=40)
        self.assertEqual(stop.returncode, 0, stop.stderr)
        self.assertLess(time.monotonic() - stopped_at, 15, "SIGTERM did not stop the proxy before the kill")
        exit_code = self.podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
        self.assertEqual(exit_code, "0", self.podman("logs", name).stderr)


if __name__ == "__main__":
    unittest.main()
