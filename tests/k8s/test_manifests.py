"""The k8s manifests must agree with the binary: probe paths, ports, flags and grace period.

Run by CTest with SPARKTRACE_BIN; reads k8s/base/*.yaml with python3-yaml (and renders the
kustomization with `kubectl kustomize` when kubectl is installed: a copy of k8s/ with the user-written
files made as a user makes them, k8s_docs.render). AdminTokenTest: the admin token is on by default,
from a Secret generated from a file nobody commits.
"""

import glob
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

import yaml

import k8s_docs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BASE = os.path.join(ROOT, "k8s", "base")
EVENT_LOG_OVERLAY = os.path.join(ROOT, "k8s", "overlays", "event-log-volume")


def load_documents():
    documents = {}
    for path in sorted(glob.glob(os.path.join(BASE, "*.yaml"))):
        with open(path) as handle:
            for document in yaml.safe_load_all(handle):
                documents[document["kind"]] = document
    return documents


def seconds(duration):
    match = re.fullmatch(r"(\d+)s", duration)
    if not match:
        raise AssertionError(f"unexpected duration {duration!r}")
    return int(match.group(1))


class ManifestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = load_documents()
        cls.pod = cls.docs["Deployment"]["spec"]["template"]["spec"]
        cls.container = cls.pod["containers"][0]
        cls.env = {e["name"]: e["value"] for e in cls.container.get("env", []) if "value" in e}
        cls.downward = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"]
                        for e in cls.container.get("env", []) if "fieldRef" in e.get("valueFrom", {})}
        cls.variables = [e["name"] for e in cls.container.get("env", [])]

    def flag(self, name):
        args = self.container["args"]
        return args[args.index(f"--{name}") + 1]

    def test_probes_hit_the_admin_endpoints(self):
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        self.assertEqual(self.container["readinessProbe"]["httpGet"]["path"], "/readyz")
        self.assertEqual(self.container["livenessProbe"]["httpGet"]["path"], "/healthz")
        self.assertEqual(self.container["readinessProbe"]["httpGet"]["port"], "admin")
        self.assertEqual(self.flag("admin"), f"0.0.0.0:{ports['admin']}")
        self.assertEqual(self.flag("listen"), f"0.0.0.0:{ports['grpc']}")

    def test_grace_period_outlasts_the_drain(self):
        drain = seconds(self.env["SPARKTRACE_DRAIN_TIMEOUT"])
        self.assertGreater(self.pod["terminationGracePeriodSeconds"], drain)
        self.assertGreaterEqual(drain, 120, "drain must outlast Spark's 2-minute reattach segments")

    def test_service_targets_named_container_ports(self):
        names = {p["name"] for p in self.container["ports"]}
        for port in self.docs["Service"]["spec"]["ports"]:
            self.assertIn(port["targetPort"], names)

    def test_the_binary_accepts_the_manifest_flags(self):
        binary = os.environ["SPARKTRACE_BIN"]
        result = subprocess.run([binary, *self.container["args"], "--help"], capture_output=True, text=True,
                                timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in [a for a in self.container["args"] if a.startswith("--")]:
            self.assertIn(name, result.stdout)
        for variable in [v for v in self.variables if v.startswith("SPARKTRACE_")]:
            flag = "--" + variable.removeprefix("SPARKTRACE_").lower().replace("_", "-")
            self.assertIn(flag, result.stdout, f"{variable} is not a flag")

    def test_trace_store_is_on_a_writable_volume(self):
        # With a read-only root filesystem the default ./sparktrace.db cannot be created and the
        # proxy would exit 2: the store must sit under a mounted volume.
        self.assertTrue(self.container["securityContext"]["readOnlyRootFilesystem"])
        store = self.env.get("SPARKTRACE_STORE")
        self.assertTrue(store, "SPARKTRACE_STORE not set")
        mounts = [m["mountPath"].rstrip("/") + "/" for m in self.container.get("volumeMounts", [])]
        self.assertTrue(any(store.startswith(m) for m in mounts), f"{store} is not under {mounts}")
        volumes = {v["name"] for v in self.pod.get("volumes", [])}
        for mount in self.container["volumeMounts"]:
            self.assertIn(mount["name"], volumes)

    def test_downward_api_feeds_the_otlp_resource(self):
        # tracing/otlp/resource_attributes.cc reads these names; a rename on either side breaks the k8s.* attributes.
        with open(os.path.join(ROOT, "tracing", "otlp", "resource_attributes.cc")) as source:
            reader = source.read()
        self.assertEqual(self.downward.get("K8S_POD_NAME"), "metadata.name")
        self.assertEqual(self.downward.get("K8S_NAMESPACE_NAME"), "metadata.namespace")
        for variable in list(self.downward) + ["K8S_CONTAINER_NAME"]:
            self.assertIn(f'"{variable}"', reader, f"{variable} is not read by the resource")

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl not installed")
    def test_kustomize_renders_with_matching_selectors(self):
        docs = {d["kind"]: d for d in k8s_docs.render("base")}
        selector = docs["Deployment"]["spec"]["selector"]["matchLabels"]
        self.assertTrue(selector)
        self.assertEqual(docs["Service"]["spec"]["selector"], selector)
        self.assertEqual(docs["Deployment"]["spec"]["template"]["metadata"]["labels"], selector)


def load_yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


class EventLogOverlayTest(unittest.TestCase):
    """The overlay that shares the driver's event-log directory must agree with the binary and the driver."""

    @classmethod
    def setUpClass(cls):
        patch = load_yaml(os.path.join(EVENT_LOG_OVERLAY, "deployment-event-log-volume.yaml"))
        cls.pod = patch["spec"]["template"]["spec"]
        cls.container = cls.pod["containers"][0]
        cls.env = {e["name"]: e["value"] for e in cls.container["env"]}
        cls.claim = load_yaml(os.path.join(EVENT_LOG_OVERLAY, "spark-events-pvc.yaml"))
        cls.driver = load_yaml(os.path.join(EVENT_LOG_OVERLAY, "spark-connect-driver-example.yaml"))

    def test_kustomization_lists_its_files(self):
        kustomization = load_yaml(os.path.join(EVENT_LOG_OVERLAY, "kustomization.yaml"))
        files = kustomization["resources"][1:] + [p["path"] for p in kustomization["patches"]]
        for name in files:
            self.assertTrue(os.path.isfile(os.path.join(EVENT_LOG_OVERLAY, name)), name)
        self.assertEqual(kustomization["resources"][0], "../../base")

    def test_patch_targets_the_base_container(self):
        base = load_documents()["Deployment"]
        self.assertEqual(self.container["name"], base["spec"]["template"]["spec"]["containers"][0]["name"])

    def test_event_log_dir_is_a_flag_and_a_read_only_mount_of_the_claim(self):
        directory = self.env["SPARKTRACE_EVENT_LOG_DIR"]
        result = subprocess.run([os.environ["SPARKTRACE_BIN"], "proxy", "--help"], capture_output=True,
                                text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("--event-log-dir", result.stdout)
        mounts = {m["mountPath"]: m for m in self.container["volumeMounts"]}
        self.assertIn(directory, mounts)
        self.assertTrue(mounts[directory].get("readOnly"), "sparktrace only reads the driver's logs")
        volumes = {v["name"]: v for v in self.pod["volumes"]}
        volume = volumes[mounts[directory]["name"]]
        self.assertEqual(volume["persistentVolumeClaim"]["claimName"], self.claim["metadata"]["name"])
        self.assertIn("ReadWriteMany", self.claim["spec"]["accessModes"])

    def test_driver_example_writes_where_sparktrace_reads(self):
        pod = self.driver["spec"]["template"]["spec"]
        container = pod["containers"][0]
        confs = dict(arg.split("=", 1) for arg in container["args"] if "=" in arg)
        self.assertEqual(confs["spark.eventLog.enabled"], "true")
        directory = confs["spark.eventLog.dir"].removeprefix("file://")
        self.assertEqual(directory, self.env["SPARKTRACE_EVENT_LOG_DIR"])
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
        self.assertEqual(claims[mounts[directory]], self.claim["metadata"]["name"])

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl not installed")
    def test_overlay_renders(self):
        kinds = [d["kind"] for d in k8s_docs.render("overlays/event-log-volume")]
        self.assertIn("PersistentVolumeClaim", kinds)


ADMIN_TOKEN_SECRET = k8s_docs.ADMIN_TOKEN_SECRET
ADMIN_TOKEN_ENV = "admin-token.env"
GENERATOR = os.path.join(BASE, "generate-admin-token.sh")
TOKEN = re.compile(r"^[A-Za-z0-9._~-]{16,}$")  # what --admin-token accepts (README "Who may open it")


def env_file(path):
    """{key: value} of a kustomize env file (comments and blank lines skipped)."""
    with open(path) as handle:
        return dict(line.split("=", 1) for line in handle.read().splitlines() if line.strip() and line[0] != "#")


def start_proxy(token, cwd):
    """Runs `sparktrace proxy` on loopback with SPARKTRACE_ADMIN_TOKEN=TOKEN: (exit code or None while it
    runs, its first line, its stderr). A running proxy is stopped before returning."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SPARKTRACE_")}
    process = subprocess.Popen([os.environ["SPARKTRACE_BIN"], "proxy", "--listen", "127.0.0.1:0", "--admin",
                                "127.0.0.1:0", "--upstream", "127.0.0.1:9"],
                               env={**clean, "SPARKTRACE_ADMIN_TOKEN": token}, cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        code = process.poll()
        if line.startswith("listening grpc="):
            process.terminate()
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)
    return (None if line.startswith("listening grpc=") else process.returncode if code is None else code), line, err


class AdminTokenTest(unittest.TestCase):
    """k8s/base turns the admin token on: the proxy reads SPARKTRACE_ADMIN_TOKEN from the Secret
    sparktrace-admin-token (not optional), which kustomize generates from admin-token.env, a file the
    user generates (generate-admin-token.sh) and git ignores; the committed example's placeholder is
    one the proxy refuses. test_k8s_overlays.AdminTokenOverlayTest runs the rendered proxy with it."""

    @classmethod
    def setUpClass(cls):
        cls.container = load_documents()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
        cls.kustomization = load_yaml(os.path.join(BASE, "kustomization.yaml"))

    def test_the_proxy_reads_the_token_from_the_generated_secret(self):
        entries = [e for e in self.container["env"] if e["name"] == "SPARKTRACE_ADMIN_TOKEN"]
        self.assertEqual(len(entries), 1, "SPARKTRACE_ADMIN_TOKEN once in the base's container")
        self.assertNotIn("value", entries[0], "a token is never written in a manifest")
        # Exactly this reference: `optional: true` would start a proxy without a token when the key is missing.
        self.assertEqual(entries[0]["valueFrom"], {"secretKeyRef": {"name": ADMIN_TOKEN_SECRET, "key": "token"}})
        self.assertNotIn("--admin-token", self.container["args"])
        generators = [g for g in self.kustomization.get("secretGenerator", []) if g["name"] == ADMIN_TOKEN_SECRET]
        self.assertEqual(len(generators), 1, f"no secretGenerator {ADMIN_TOKEN_SECRET} in k8s/base")
        generator = generators[0]
        self.assertEqual(generator.get("envs"), [ADMIN_TOKEN_ENV])
        self.assertFalse(generator.get("literals") or generator.get("files"), "no committed value")
        self.assertTrue(generator["options"]["disableNameSuffixHash"], "Airflow's copy names the Secret")

    def test_no_token_is_committed(self):
        with open(os.path.join(BASE, ".gitignore")) as handle:
            self.assertIn(ADMIN_TOKEN_ENV, handle.read().split())
        example = env_file(os.path.join(BASE, ADMIN_TOKEN_ENV + ".example"))
        self.assertEqual(set(example), {"token"})
        self.assertTrue(example["token"].startswith("REPLACE_ME"), example)
        git = shutil.which("git")
        if git and os.path.isdir(os.path.join(ROOT, ".git")):
            ignored = subprocess.run([git, "-C", ROOT, "check-ignore", "-q", f"k8s/base/{ADMIN_TOKEN_ENV}"], timeout=30)
            self.assertEqual(ignored.returncode, 0, f"k8s/base/{ADMIN_TOKEN_ENV} is not ignored by git")
            tracked = subprocess.run([git, "-C", ROOT, "ls-files", "k8s"], capture_output=True, text=True, timeout=30,
                                     check=True).stdout.split()
            self.assertEqual([f for f in tracked if f.endswith(".env")], [], "an env file is committed")
        # A copied example never runs: the proxy refuses its placeholder.
        with tempfile.TemporaryDirectory(prefix="sparktrace-admin-token-") as tmp:
            code, line, err = start_proxy(example["token"], tmp)
        self.assertEqual(code, 2, f"the proxy started with the example's placeholder: {line!r} {err[-500:]}")
        self.assertIn("--admin-token", err)

    def test_the_generator_writes_a_token_the_proxy_accepts(self):
        with tempfile.TemporaryDirectory(prefix="sparktrace-admin-token-") as tmp:
            script = os.path.join(tmp, "generate-admin-token.sh")
            shutil.copyfile(GENERATOR, script)
            written = os.path.join(tmp, ADMIN_TOKEN_ENV)
            result = k8s_docs.generate(script)
            self.assertEqual(stat.S_IMODE(os.stat(written).st_mode), 0o600, "readable by its owner only")
            with open(written) as handle:
                text = handle.read()
            self.assertRegex(text, r"^token=[A-Za-z0-9_-]{32}\n$")
            token = env_file(written)["token"]
            self.assertRegex(token, TOKEN)
            self.assertNotIn(token, result.stdout + result.stderr, "the token is never printed")
            # Run again: kept. --rotate: a new one.
            self.assertIn("kept", k8s_docs.generate(script).stderr)
            self.assertEqual(env_file(written)["token"], token)
            k8s_docs.generate(script, "--rotate")
            self.assertNotEqual(env_file(written)["token"], token)
            self.assertRegex(env_file(written)["token"], TOKEN)
            self.assertEqual(subprocess.run(["sh", script, "--rotat"], capture_output=True, timeout=30).returncode, 2)
            code, line, err = start_proxy(env_file(written)["token"], tmp)
            self.assertIsNone(code, f"the proxy refused the generated token: {line!r} {err[-500:]}")

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl not installed")
    def test_apply_stops_without_the_env_file(self):
        with tempfile.TemporaryDirectory(prefix="sparktrace-admin-token-") as tmp:
            base = os.path.join(tmp, "base")
            shutil.copytree(BASE, base, ignore=shutil.ignore_patterns(ADMIN_TOKEN_ENV))
            result = subprocess.run(["kubectl", "kustomize", base], capture_output=True, text=True, timeout=60)
            self.assertNotEqual(result.returncode, 0, "rendered without admin-token.env")
            self.assertIn(ADMIN_TOKEN_ENV, result.stderr)
            self.assertIn("no such file or directory", result.stderr)
            k8s_docs.generate(os.path.join(base, "generate-admin-token.sh"))
            result = subprocess.run(["kubectl", "kustomize", base], capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            token = env_file(os.path.join(base, ADMIN_TOKEN_ENV))["token"]
            data = k8s_docs.secret_data([d for d in yaml.safe_load_all(result.stdout) if d], ADMIN_TOKEN_SECRET)
            self.assertEqual(data, {"token": token})


if __name__ == "__main__":
    unittest.main()
