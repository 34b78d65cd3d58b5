"""The k8s manifests must agree with the binary: probe paths, ports, flags and grace period.

Run by CTest with SPARKTRACE_BIN; reads k8s/base/*.yaml with python3-yaml (and renders the
kustomization with `kubectl kustomize` when kubectl is installed).
"""

import glob
import os
import re
import shutil
import subprocess
import unittest

import yaml

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
                        for e in cls.container.get("env", []) if "valueFrom" in e}

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
        for variable in [v for v in self.env if v.startswith("SPARKTRACE_")]:
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
        rendered = subprocess.run(["kubectl", "kustomize", BASE], capture_output=True, text=True, timeout=60,
                                  check=True).stdout
        docs = {d["kind"]: d for d in yaml.safe_load_all(rendered)}
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
        rendered = subprocess.run(["kubectl", "kustomize", EVENT_LOG_OVERLAY], capture_output=True, text=True,
                                  timeout=60, check=True).stdout
        kinds = [d["kind"] for d in yaml.safe_load_all(rendered)]
        self.assertIn("PersistentVolumeClaim", kinds)


if __name__ == "__main__":
    unittest.main()
