"""The k8s/ overlays must agree with the binary, with Spark and with each other.

For every pod that runs sparktrace (the base Deployment, the driver pod template, the
SparkApplication's driver, the SparkConnect server): the real binary starts with exactly the
container's arguments and environment (paths and listen addresses moved to a temporary directory
and free ports), every flag and SPARKTRACE_* variable is one `sparktrace proxy --help` lists, the
probes hit the admin endpoints on the declared ports, the trace store sits on a writable volume,
the event-log directory is a read-only mount of the volume the driver writes, the drain ends
within the pod's grace period, and the resources are the measured ones of the base. In the sidecar
overlays, sparktrace forwards to the port the driver's Spark Connect server is configured to listen
on, and a Service reaches it; in the observability overlay, every hop (sparktrace → collector →
Tempo, Prometheus → sparktrace, Grafana → both, dashboards) points at a port that is served. Base
NetworkPolicy, PodDisruptionBudget and the ServiceMonitor select what they mean to. A proxy whose
store is PostgreSQL (the shared-store overlays) starts with its database unreachable, its spool on a
writable volume; test_shared_store.py starts it against a real PostgreSQL. Every proxy built on k8s/base
requires the admin token of the Secret generated from admin-token.env, and the base's proxy refuses a
task report without it.

Run by CTest as k8s.overlays with SPARKTRACE_BIN; tests that need kustomize's labels are skipped
without kubectl; python3-yaml, and promtool when installed.
"""

import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import yaml

import k8s_docs
from k8s_docs import K8S, ROOT

HELP_FLAG = re.compile(r"^\s+(--[a-z0-9-]+)", re.MULTILINE)
DURATION = re.compile(r"^(\d+)(ms|s|m|h)$")
QUANTITY = re.compile(r"^(\d+)(Ki|Mi|Gi)?B?$")
SPARK_SUBMIT_CONF = re.compile(r"--conf\s+([A-Za-z0-9_.]+)=(\S+)")
DRIVER_SIDECAR_README = os.path.join(K8S, "overlays", "driver-sidecar", "README.md")
BENCH_RESOURCES = os.path.join(ROOT, "bench", "results", "k8s_resources.json")


def binary():
    return os.environ["SPARKTRACE_BIN"]


_help = None


def proxy_flags():
    global _help
    if _help is None:
        result = subprocess.run([binary(), "proxy", "--help"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        _help = set(HELP_FLAG.findall(result.stdout))
        assert "--upstream" in _help and "--event-log-dir" in _help, _help
    return _help


def flag_of(variable):
    return "--" + variable.removeprefix("SPARKTRACE_").lower().replace("_", "-")


def arg(container, name):
    args = container.get("args", [])
    return args[args.index(name) + 1] if name in args else None


def env(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def setting(container, flag, values=None):
    """The value a flag gets from the container's args or its SPARKTRACE_ variable (args win);
    values: the variables as k8s_docs.env_values resolves them (Secrets), else the plain ones."""
    value = arg(container, flag)
    if value is None:
        value = (env(container) if values is None else values).get("SPARKTRACE_" + flag[2:].upper().replace("-", "_"))
    return value


def is_postgres(store):
    return bool(store) and store.startswith(("postgresql://", "postgres://"))


def postgres_url_at(url, host=None, port=None, socket_dir=None):
    """A manifest's PostgreSQL URL (its user, database and parameters) pointed at another server:
    HOST:PORT, or the unix socket in SOCKET_DIR."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "host"]
    if socket_dir:
        netloc = f"{parts.username}@"
        query.append(("host", socket_dir))
    else:
        netloc = f"{parts.username}@{host}:{port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, urllib.parse.urlencode(query, safe="/"), ""))


def closed_port():
    """A TCP port on 127.0.0.1 that nothing listens on (connections are refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def container_command(container, values, tmp, store=None):
    """argv and environment to run a container's sparktrace as the pod would: listen addresses on
    free ports; the SQLite store, the spool and the event logs moved into TMP (the spool directory
    not created, as on a fresh emptyDir); a PostgreSQL store pointed at STORE, or else at a closed
    port (the binary must start while its database is unreachable). VALUES: k8s_docs.env_values of
    the container (a variable it leaves out, an optional Secret key, is not set)."""
    args = list(container["args"])
    for flag in ("--listen", "--admin"):
        if flag in args:
            args[args.index(flag) + 1] = "127.0.0.1:0"
    for flag in ("--store", "--event-log-dir", "--spool-dir"):
        assert flag not in args, "the test moves paths given as SPARKTRACE_ variables only"
    variables = {}
    for entry in container.get("env", []):
        name = entry["name"]
        if name not in values:
            continue
        value = values[name] if values[name] is not None else "from-the-downward-api"
        if name == "SPARKTRACE_STORE":
            if is_postgres(value):
                value = store or postgres_url_at(value, "127.0.0.1", closed_port())
            else:
                value = os.path.join(tmp, os.path.basename(value))
        elif name == "SPARKTRACE_SPOOL_DIR":
            value = os.path.join(tmp, os.path.basename(value))
        elif name == "SPARKTRACE_EVENT_LOG_DIR":
            value = os.path.join(tmp, "events")
            os.makedirs(value, exist_ok=True)
        elif name in ("SPARKTRACE_LISTEN", "SPARKTRACE_ADMIN"):
            value = "127.0.0.1:0"
        variables[name] = value
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SPARKTRACE_", "K8S_", "PG"))}
    return [binary(), *args], {**clean, **variables}


def seconds(duration):
    match = DURATION.match(duration)
    assert match, f"unexpected duration {duration!r}"
    return int(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def mebibytes(quantity):
    match = QUANTITY.match(str(quantity))
    assert match, f"unexpected quantity {quantity!r}"
    return int(match.group(1)) * {None: 1 / 2**20, "Ki": 1 / 1024, "Mi": 1, "Gi": 1024}[match.group(2)]


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def spark_conf_of_driver_sidecar_readme():
    with open(DRIVER_SIDECAR_README) as handle:
        text = handle.read()
    block = re.search(r"```sh\n(spark-submit.*?)```", text, re.DOTALL)
    assert block, "no spark-submit block in k8s/overlays/driver-sidecar/README.md"
    command = block.group(1)
    confs = dict(SPARK_SUBMIT_CONF.findall(command))
    main = command.strip().split()[-1]
    return confs, main, command


def all_pods():
    pods = []
    confs, _, _ = spark_conf_of_driver_sidecar_readme()
    for name in k8s_docs.OVERLAYS:
        docs = k8s_docs.documents(name)
        # Rendered: the driver pod template is inside its ConfigMap; raw: the generator's file.
        embedded = [d for _, _, d in k8s_docs.embedded_documents(docs)]
        for pod in k8s_docs.sparktrace_pods(docs + embedded, spark_conf=confs):
            pod.overlay = name
            pod.values = k8s_docs.env_values(pod.container, docs)
            pods.append(pod)
    return pods


def selector_matches(selector, labels):
    """A LabelSelector (matchLabels, matchExpressions In/NotIn/Exists/DoesNotExist) against labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


class SparktraceContainerTest(unittest.TestCase):
    """Every pod that runs sparktrace, in every overlay."""

    @classmethod
    def setUpClass(cls):
        cls.pods = all_pods()
        cls.base = next(p for p in cls.pods if p.overlay == "base")

    def test_every_overlay_with_sparktrace_is_covered(self):
        self.assertEqual({p.overlay for p in self.pods}, set(k8s_docs.OVERLAYS))
        wheres = " ".join(p.where for p in self.pods)
        for what in ("Deployment sparktrace", "driver pod template", "SparkApplication spark-connect driver",
                     "SparkConnect spark-connect server"):
            self.assertIn(what, wheres)

    def test_flags_and_variables_are_the_binarys(self):
        flags = proxy_flags()
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                container = pod.container
                self.assertEqual(container["args"][0], "proxy")
                for name in [a for a in container["args"] if a.startswith("--")]:
                    self.assertIn(name, flags)
                for variable in [v for v in env(container) if v.startswith("SPARKTRACE_")]:
                    self.assertIn(flag_of(variable), flags, f"{variable} is not a flag")

    def start(self, pod, extra_args=(), timeout=20, written=None):
        """Runs the proxy with the pod's container args and env; returns (exit code, stdout, stderr).
        WRITTEN, a list, receives the names the proxy left in its temporary directory."""
        with tempfile.TemporaryDirectory(prefix="sparktrace-k8s-") as tmp:
            command, variables = container_command(pod.container, pod.values, tmp)
            before = set(os.listdir(tmp))
            process = subprocess.Popen([*command, *extra_args], env=variables, cwd=tmp,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            watchdog = threading.Timer(timeout, process.kill)  # a proxy that never says "listening"
            watchdog.start()
            try:
                line = process.stdout.readline()
                if line.startswith("listening grpc="):
                    process.send_signal(signal.SIGTERM)
                out, err = process.communicate(timeout=timeout)
            finally:
                watchdog.cancel()
                if process.poll() is None:
                    process.kill()
                    process.communicate(timeout=10)  # EOF comes with the exit, unless a child kept the pipes
                if written is not None:
                    written += sorted(set(os.listdir(tmp)) - before)
            return process.returncode, line + out, err

    def test_the_binary_starts_with_the_container_configuration(self):
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                written = []
                code, out, err = self.start(pod, written=written)
                self.assertTrue(out.startswith("listening grpc="), f"did not start: {err[-2000:]}")
                self.assertEqual(code, 0, err[-2000:])
                if is_postgres(setting(pod.container, "--store", pod.values)):
                    # With its database unreachable: nothing on the pod but the spool (a binary that
                    # took the URL for a SQLite path would have made a directory "postgresql:").
                    spool = os.path.basename(setting(pod.container, "--spool-dir", pod.values) or "")
                    self.assertLessEqual(set(written), {spool}, f"written besides the spool: {written}")

    def test_a_wrong_flag_would_be_caught(self):
        code, out, err = self.start(self.base, extra_args=["--event-log-dirs", "/tmp"])
        self.assertEqual(code, 2, err)
        self.assertIn("--event-log-dirs", err)

    def test_probes_and_ports(self):
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                container = pod.container
                ports = {p["name"]: p["containerPort"] for p in container["ports"]}
                self.assertEqual(port_of(setting(container, "--admin")), ports["admin"])
                self.assertEqual(port_of(setting(container, "--listen")), ports["grpc"])
                self.assertTrue(setting(container, "--admin").startswith("0.0.0.0:"), "kubelet probes the pod IP")
                self.assertEqual(container["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "admin"})
                self.assertEqual(container["livenessProbe"]["httpGet"], {"path": "/healthz", "port": "admin"})
                names = [p["name"] for c in pod.pod["containers"] for p in c.get("ports", [])]
                self.assertEqual(len(names), len(set(names)), "port names must be unique in a pod")

    def test_store_on_a_writable_volume_and_read_only_root(self):
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                container = pod.container
                security = container["securityContext"]
                self.assertTrue(security["readOnlyRootFilesystem"])
                self.assertTrue(security["runAsNonRoot"])
                self.assertFalse(security["allowPrivilegeEscalation"])
                store = setting(container, "--store", pod.values)
                self.assertTrue(store, "no --store")
                mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
                # A PostgreSQL store keeps only its spool on the pod (test_shared_store.py: its size).
                path = setting(container, "--spool-dir", pod.values) if is_postgres(store) else store
                self.assertTrue(path, f"{store}: no --spool-dir")
                holding = [m for mount, m in mounts.items() if path.startswith(mount.rstrip("/") + "/")]
                self.assertTrue(holding, f"{path} is on no volume")
                self.assertFalse(holding[0].get("readOnly", False))
                volumes = pod.volumes()
                for mount in container["volumeMounts"]:
                    self.assertIn(mount["name"], volumes, f"volume {mount['name']} is not in the pod")

    def test_the_drain_fits_in_the_grace_period(self):
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                drain = seconds(setting(pod.container, "--drain-timeout") or "150s")
                grace = pod.pod.get("terminationGracePeriodSeconds", 30)
                self.assertLess(drain, grace)

    def test_resources_are_the_base_ones(self):
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                self.assertEqual(pod.container["resources"], self.base.container["resources"])

    def test_downward_api_variables(self):
        expected = {"K8S_POD_NAME": "metadata.name", "K8S_POD_UID": "metadata.uid",
                    "K8S_NAMESPACE_NAME": "metadata.namespace", "K8S_NODE_NAME": "spec.nodeName"}
        for pod in self.pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                downward = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"]
                            for e in pod.container.get("env", []) if "fieldRef" in e.get("valueFrom", {})}
                self.assertEqual(downward, expected)
                self.assertEqual(env(pod.container).get("K8S_CONTAINER_NAME"), "sparktrace")

    def test_event_logs_are_read_only_and_shared_with_the_driver(self):
        sidecars = [p for p in self.pods if p.overlay in k8s_docs.SIDECAR_OVERLAYS]
        self.assertEqual(len(sidecars), 3)
        for pod in self.pods:
            directory = setting(pod.container, "--event-log-dir")
            if not directory:
                continue
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                mounts = {m["mountPath"]: m for m in pod.container["volumeMounts"]}
                self.assertIn(directory, mounts)
                self.assertTrue(mounts[directory].get("readOnly"), "sparktrace only reads the driver's logs")
                # Spark writes the logs 660 in 770 directories: sparktrace must be in the writer's group.
                security = pod.pod.get("securityContext", {})
                if pod.overlay not in k8s_docs.SIDECAR_OVERLAYS:
                    if k8s_docs.have_kubectl():  # the group comes from the overlay's patch
                        self.assertIn(185, security.get("supplementalGroups", []))
                    continue
                volume = pod.volumes()[mounts[directory]["name"]]
                self.assertIn("emptyDir", volume)
                writers = [m for c in pod.other_containers() for m in c.get("volumeMounts", [])
                           if m["name"] == volume["name"] and not m.get("readOnly")]
                self.assertTrue(writers, "no driver container writes the event-log volume")
                self.assertEqual(pod.spark_conf.get("spark.eventLog.enabled"), "true")
                self.assertEqual(pod.spark_conf["spark.eventLog.dir"].removeprefix("file://"), writers[0]["mountPath"])
                self.assertEqual(writers[0]["mountPath"], directory)
                # The pod's fsGroup makes the emptyDir and the files in it group-owned by it.
                self.assertIn("fsGroup", security)


class SidecarTest(unittest.TestCase):
    """sparktrace in the driver's pod: ports, the Service, and the Spark side of each variant."""

    @classmethod
    def setUpClass(cls):
        cls.pods = {p.overlay: p for p in all_pods() if p.overlay in k8s_docs.SIDECAR_OVERLAYS}
        cls.confs, cls.main, cls.command = spark_conf_of_driver_sidecar_readme()

    def test_sparktrace_forwards_to_the_drivers_connect_port(self):
        for overlay, pod in self.pods.items():
            with self.subTest(overlay=overlay):
                upstream = setting(pod.container, "--upstream")
                host, port = upstream.rsplit(":", 1)
                self.assertIn(host, ("127.0.0.1", "localhost"))
                self.assertEqual(pod.spark_conf["spark.connect.grpc.binding.port"], port)
                self.assertNotEqual(int(port), port_of(setting(pod.container, "--listen")))
                self.assertEqual(port_of(setting(pod.container, "--listen")), 15002, "clients keep port 15002")

    def test_a_service_reaches_the_sidecar(self):
        for overlay, pod in self.pods.items():
            with self.subTest(overlay=overlay):
                service = k8s_docs.find(k8s_docs.documents(overlay), "Service", "sparktrace")[0]
                for key, value in service["spec"]["selector"].items():
                    self.assertEqual(pod.labels.get(key), value, f"selector {key}={value} misses the pod")
                ports = {p["name"]: p["containerPort"] for p in pod.container["ports"]}
                by_name = {p["name"]: p for p in service["spec"]["ports"]}
                self.assertEqual(by_name["grpc"]["port"], 15002)
                self.assertEqual(by_name["grpc"]["targetPort"], "grpc")
                self.assertEqual(by_name["admin"]["targetPort"], "admin")
                for port in service["spec"]["ports"]:
                    self.assertIn(port["targetPort"], ports)
                self.assertEqual(service["metadata"]["labels"]["app.kubernetes.io/name"], "sparktrace")

    def test_spark_connect_starts_in_the_driver(self):
        # spark-submit refuses cluster mode for SparkConnectServer: the cluster-mode variants start
        # the server with the plugin from spark_connect_server.py, mounted from its ConfigMap.
        with open(os.path.join(K8S, "components", "spark-connect-main", "kustomization.yaml")) as handle:
            component = yaml.safe_load(handle)
        main_files = component["configMapGenerator"][0]["files"]
        self.assertEqual(component["configMapGenerator"][0]["name"], "spark-connect-main")
        for overlay in ("overlays/driver-sidecar", "overlays/spark-operator"):
            with self.subTest(overlay=overlay):
                pod = self.pods[overlay]
                self.assertEqual(pod.spark_conf["spark.plugins"], "org.apache.spark.sql.connect.SparkConnectPlugin")
                if overlay == "overlays/driver-sidecar":
                    main = self.main
                    mounts = {m["name"]: m["mountPath"] for c in pod.other_containers() for m in c["volumeMounts"]}
                    configmaps = {v["name"]: v["configMap"]["name"] for v in pod.pod["volumes"] if "configMap" in v}
                    mount_path = next(mounts[v] for v, cm in configmaps.items() if cm == "spark-connect-main")
                else:
                    app = k8s_docs.find(k8s_docs.documents(overlay), "SparkApplication")[0]
                    self.assertEqual(app["spec"]["mode"], "cluster")
                    self.assertEqual(app["spec"]["type"], "Python")
                    self.assertNotEqual(app["spec"].get("mainClass"),
                                        "org.apache.spark.sql.connect.service.SparkConnectServer")
                    main = app["spec"]["mainApplicationFile"]
                    mount_path = next(c["path"] for c in app["spec"]["driver"]["configMaps"]
                                      if c["name"] == "spark-connect-main")
                self.assertEqual(main, f"local://{mount_path.rstrip('/')}/{os.path.basename(main)}")
                self.assertIn(os.path.basename(main), main_files)

    def test_driver_sidecar_readme_matches_the_template(self):
        pod = self.pods["overlays/driver-sidecar"]
        confs = self.confs
        self.assertIn("--deploy-mode cluster", self.command)
        self.assertEqual(confs["spark.kubernetes.driver.podTemplateContainerName"],
                         [c["name"] for c in pod.other_containers()][0])
        with open(os.path.join(K8S, "overlays", "driver-sidecar", "kustomization.yaml")) as handle:
            kustomization = yaml.safe_load(handle)
        generator = next(g for g in kustomization["configMapGenerator"] if g["name"] == "sparktrace-driver-pod-template")
        self.assertIn(os.path.basename(confs["spark.kubernetes.driver.podTemplateFile"]), generator["files"])
        with open(DRIVER_SIDECAR_README) as handle:
            readme = handle.read()
        mount = re.search(r"name: sparktrace-driver-pod-template\s+mountPath: (\S+)", readme)
        self.assertTrue(mount)
        self.assertEqual(os.path.dirname(confs["spark.kubernetes.driver.podTemplateFile"]), mount.group(1))
        self.assertEqual(self.main.split("://")[0], "local")

    def test_spark_operator_volumes_reach_the_pod(self):
        # The webhook adds a volume of spec.volumes only when driver.volumeMounts names it
        # (internal/webhook/sparkpod_defaulter.go, addVolumes): the sidecar's volumes must be named there.
        app = k8s_docs.find(k8s_docs.documents("overlays/spark-operator"), "SparkApplication")[0]
        driver = app["spec"]["driver"]
        named = {m["name"] for m in driver["volumeMounts"]}
        for sidecar in driver["sidecars"]:
            for mount in sidecar.get("volumeMounts", []):
                self.assertIn(mount["name"], named)
        self.assertEqual({v["name"] for v in app["spec"]["volumes"]}, named)

    def test_sparkconnect_probes_spark_not_the_proxy(self):
        # The operator's default probes dial 15002, sparktrace's port here.
        pod = self.pods["overlays/spark-operator-sparkconnect"]
        spark = next(c for c in pod.other_containers() if c["name"] == k8s_docs.SPARK_DRIVER_CONTAINER)
        port = int(pod.spark_conf["spark.connect.grpc.binding.port"])
        for probe in ("startupProbe", "readinessProbe"):
            self.assertEqual(spark[probe]["tcpSocket"]["port"], port)


@unittest.skipUnless(k8s_docs.have_kubectl(), "kubectl not installed (selectors come from kustomize's labels)")
class PolicyTest(unittest.TestCase):
    """The base's NetworkPolicy and PodDisruptionBudget, and the ServiceMonitor."""

    @classmethod
    def setUpClass(cls):
        cls.docs = {d["kind"]: d for d in k8s_docs.render("base")}
        cls.deployment = cls.docs["Deployment"]
        cls.pod_labels = cls.deployment["spec"]["template"]["metadata"]["labels"]
        cls.container = cls.deployment["spec"]["template"]["spec"]["containers"][0]

    def test_network_policy_selects_sparktrace(self):
        policy = self.docs["NetworkPolicy"]["spec"]
        self.assertTrue(policy["podSelector"]["matchLabels"])
        self.assertEqual(policy["podSelector"]["matchLabels"], self.deployment["spec"]["selector"]["matchLabels"])
        self.assertEqual(set(policy["policyTypes"]), {"Ingress", "Egress"})

    def test_network_policy_ingress(self):
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        ingress = self.docs["NetworkPolicy"]["spec"]["ingress"]
        for rule in ingress:
            for port in rule["ports"]:
                self.assertIn(port["port"], ports)
        open_rules = [r for r in ingress if "from" not in r]
        self.assertEqual([p["port"] for r in open_rules for p in r["ports"]], ["grpc"], "only gRPC is open to all")
        admin = next(r for r in ingress if any(p["port"] == "admin" for p in r["ports"]))
        # The observability overlay's Prometheus may scrape; the proxy itself may not reach its own admin port.
        prometheus = k8s_docs.find(k8s_docs.render("overlays/observability"), "Deployment", "prometheus")[0]
        prometheus_labels = prometheus["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(any(selector_matches(peer["podSelector"], prometheus_labels) for peer in admin["from"]))
        self.assertFalse(any(selector_matches(peer["podSelector"], self.pod_labels) for peer in admin["from"]))

    def test_network_policy_egress(self):
        egress = self.docs["NetworkPolicy"]["spec"]["egress"]
        allowed = {(p["port"], p.get("protocol", "TCP")) for rule in egress for p in rule["ports"]}
        self.assertIn((53, "UDP"), allowed)
        self.assertIn((53, "TCP"), allowed)
        upstream = env(self.container)["SPARKTRACE_UPSTREAM"]
        self.assertIn((port_of(upstream), "TCP"), allowed)
        self.assertIn((4040, "TCP"), allowed, "--spark-ui http://driver:4040")
        observability = k8s_docs.find(k8s_docs.render("overlays/observability"), "Deployment", "sparktrace")[0]
        otlp = env(observability["spec"]["template"]["spec"]["containers"][0])["SPARKTRACE_OTLP_ENDPOINT"]
        self.assertIn((port_of(otlp), "TCP"), allowed)

    def test_disruption_budget(self):
        pdb = self.docs["PodDisruptionBudget"]["spec"]
        self.assertTrue(selector_matches(pdb["selector"], self.pod_labels))
        self.assertTrue(pdb["selector"]["matchLabels"])
        replicas = self.deployment["spec"]["replicas"]
        # A budget that forbids every eviction of the single replica would block node drains forever.
        if "minAvailable" in pdb:
            self.assertLess(pdb["minAvailable"], replicas)
        else:
            self.assertGreaterEqual(pdb["maxUnavailable"], 1)
        strategy = self.deployment["spec"]["strategy"]["rollingUpdate"]
        self.assertEqual((strategy["maxSurge"], strategy["maxUnavailable"]), (1, 0))

    def test_service_monitor_scrapes_every_sparktrace_service(self):
        rendered = k8s_docs.render("overlays/prometheus-operator")
        monitor = k8s_docs.find(rendered, "ServiceMonitor")[0]["spec"]
        services = [k8s_docs.find(rendered, "Service", "sparktrace")[0]]
        services += [k8s_docs.find(k8s_docs.render(o), "Service", "sparktrace")[0] for o in k8s_docs.SIDECAR_OVERLAYS]
        for service in services:
            with self.subTest(service=service["metadata"]["labels"]):
                self.assertTrue(selector_matches(monitor["selector"], service["metadata"]["labels"]))
                names = {p["name"] for p in service["spec"]["ports"]}
                for endpoint in monitor["endpoints"]:
                    self.assertIn(endpoint["port"], names)
                    self.assertEqual(endpoint["path"], "/metrics")
        kinds = [d["kind"] for d in rendered]
        self.assertIn("PrometheusRule", kinds)
        # The other overlays stay applicable without the Prometheus Operator's CRDs.
        for name in k8s_docs.OVERLAYS:
            if name != "overlays/prometheus-operator":
                self.assertFalse([d for d in k8s_docs.render(name) if d["apiVersion"].startswith("monitoring.coreos.com")],
                                 name)


def http(method, url, body=None, headers=None, timeout=10):
    """(status, body) of one request; HTTP errors are answers too."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


@unittest.skipUnless(k8s_docs.have_kubectl(), "kubectl not installed (the Secret comes from kustomize's generator)")
class AdminTokenOverlayTest(unittest.TestCase):
    """The admin token is on in every overlay built on k8s/base (docs/threat-model.md)."""

    TOKEN = re.compile(r"^[A-Za-z0-9._~-]{16,}$")

    def test_every_proxy_built_on_the_base_requires_the_generated_token(self):
        def resources(name):
            with open(os.path.join(K8S, name, "kustomization.yaml")) as handle:
                return yaml.safe_load(handle).get("resources") or []

        built_on_base = [name for name in k8s_docs.OVERLAYS if name == "base" or "../../base" in resources(name)]
        self.assertEqual(len(built_on_base), 6, built_on_base)
        for name in built_on_base:
            with self.subTest(kustomization=name):
                docs = k8s_docs.render(name)
                secret = k8s_docs.secret_data(docs, k8s_docs.ADMIN_TOKEN_SECRET)
                self.assertIsNotNone(secret, f"no Secret {k8s_docs.ADMIN_TOKEN_SECRET}")
                self.assertRegex(secret["token"], self.TOKEN)
                container = k8s_docs.find(docs, "Deployment", "sparktrace")[0]["spec"]["template"]["spec"]["containers"][0]
                entry = next(e for e in container["env"] if e["name"] == "SPARKTRACE_ADMIN_TOKEN")
                reference = entry["valueFrom"]["secretKeyRef"]
                self.assertFalse(reference.get("optional", False), "the token is required")
                self.assertEqual(k8s_docs.env_values(container, docs)["SPARKTRACE_ADMIN_TOKEN"], secret["token"])

    def test_the_base_proxy_refuses_a_report_without_the_token(self):
        docs = k8s_docs.render("base")
        pod = k8s_docs.sparktrace_pods(docs)[0]
        values = k8s_docs.env_values(pod.container, docs)
        token = values["SPARKTRACE_ADMIN_TOKEN"]
        now = time.time_ns()
        report = json.dumps({"dag_id": "etl", "task_id": "load", "run_id": "manual__k8s", "try_number": 1,
                             "map_index": -1, "state": "running", "operator": "SparkSubmitOperator",
                             "start_time_unix_nano": now - 10**9, "end_time_unix_nano": now}).encode()
        json_type = {"Content-Type": "application/json"}
        with tempfile.TemporaryDirectory(prefix="sparktrace-k8s-token-") as tmp:
            command, variables = container_command(pod.container, values, tmp)
            process = subprocess.Popen(command, env=variables, cwd=tmp, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            watchdog = threading.Timer(60, process.kill)
            watchdog.start()
            try:
                line = process.stdout.readline()
                match = re.search(r"admin=(\S+)", line)
                self.assertTrue(match, f"did not start: {line!r}")
                admin = f"http://{match.group(1)}"
                route = admin + "/api/v1/airflow/task-attempts"
                self.assertEqual(http("POST", route, report, json_type)[0], 401, "a report without the token")
                self.assertEqual(http("POST", route, report, {**json_type, "Authorization": "Bearer " + "x" * 32})[0],
                                 401, "a report with another token")
                self.assertEqual(http("GET", admin + "/api/v1/tasks")[0], 401, "the trace view's API without it")
                status, body = http("POST", route, report, {**json_type, "Authorization": f"Bearer {token}"})
                self.assertEqual(status, 202, body)
                # Open without it: the probes and Prometheus. Event pushes need it (docs/threat-model.md).
                self.assertEqual(http("GET", admin + "/healthz")[0], 200)
                self.assertEqual(http("GET", admin + "/metrics")[0], 200)
                push = admin + "/api/v1/events?app=k8s-test"
                ndjson = {"Content-Type": "application/x-ndjson"}
                self.assertEqual(http("POST", push, b"{}\n", ndjson)[0], 401, "an event push without the token")
                self.assertNotEqual(http("POST", push, b"{}\n", {**ndjson, "Authorization": f"Bearer {token}"})[0],
                                    401, "an event push with the token")
            finally:
                watchdog.cancel()
                process.send_signal(signal.SIGTERM)
                _, err = process.communicate(timeout=60)
            self.assertNotIn(token, line + err, "the token is never logged")


class ResourcesTest(unittest.TestCase):
    """The base's requests and limits against the measurements they cite (bench/k8s_resources.py)."""

    def test_resources_cover_the_measured_peaks(self):
        with open(BENCH_RESOURCES) as handle:
            measured = json.load(handle)["workloads"]
        deployment = next(d for d in k8s_docs.raw_documents("base") if d[1]["kind"] == "Deployment")[1]
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        resources = container["resources"]
        peak = lambda name: measured[name]["VmHWM_kib"] / 1024  # noqa: E731
        # Requests: ordinary traffic (4 MiB Arrow batches, Spark's default) fits.
        self.assertGreaterEqual(mebibytes(resources["requests"]["memory"]), peak("execute_4m"))
        # Limits: the largest message (--max-message-bytes, default 256 MiB) held as measured with
        # 128 MiB messages (the peak above idle, scaled to the limit), plus the idle footprint.
        max_message = mebibytes(setting(container, "--max-message-bytes") or "256MiB")
        per_message = (peak("execute_128m") - measured["idle"]["VmRSS_kib"] / 1024) / 128
        self.assertGreaterEqual(mebibytes(resources["limits"]["memory"]), peak("idle") + per_message * max_message)
        self.assertNotIn("cpu", resources["limits"], "no CPU limit (throttling delays every call)")
        self.assertIn("cpu", resources["requests"])
        with open(os.path.join(K8S, "base", "deployment.yaml")) as handle:
            self.assertIn("bench/k8s_resources.py", handle.read())


class ObservabilityTest(unittest.TestCase):
    """k8s/overlays/observability: every hop points at a port that is served, images are pinned."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(K8S, "overlays", "observability")

        def config(name):
            with open(os.path.join(cls.dir, name)) as handle:
                return yaml.safe_load(handle)

        cls.collector = config("otel-collector-config.yaml")
        cls.tempo = config("tempo-config.yaml")
        cls.prometheus = config("prometheus-config.yml")
        cls.datasources = config("grafana-datasources.yaml")
        cls.providers = config("grafana-dashboards.yaml")
        cls.docs = k8s_docs.render("overlays/observability") or \
            [d for _, d in k8s_docs.raw_documents("overlays/observability")]
        cls.base_docs = k8s_docs.documents("base")

    def workload(self, name):
        return k8s_docs.find(self.docs, "Deployment", name)[0]["spec"]["template"]["spec"]

    def service_target(self, address):
        """host:port of a Service → (the Deployment's pod spec, its container port number)."""
        host, port = address.rsplit(":", 1)
        service = k8s_docs.find(self.docs + self.base_docs, "Service", host)[0]
        service_port = next(p for p in service["spec"]["ports"] if p["port"] == int(port))
        deployment = next(d for d in self.docs + self.base_docs if d["kind"] == "Deployment"
                          and d["metadata"]["name"] == host)
        spec = deployment["spec"]["template"]["spec"]
        ports = {p["name"]: p["containerPort"] for c in spec["containers"] for p in c.get("ports", [])}
        target = service_port["targetPort"]
        return spec, ports[target] if isinstance(target, str) else target

    def test_sparktrace_exports_to_the_collector(self):
        with open(os.path.join(self.dir, "sparktrace-otlp.yaml")) as handle:
            patch = yaml.safe_load(handle)
        endpoint = env(patch["spec"]["template"]["spec"]["containers"][0])["SPARKTRACE_OTLP_ENDPOINT"]
        self.assertIn("--otlp-endpoint", proxy_flags())
        _, port = self.service_target(endpoint)
        receiver = self.collector["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
        self.assertEqual(receiver, f"0.0.0.0:{port}")
        rendered = k8s_docs.render("overlays/observability")
        if rendered is not None:
            sparktrace = k8s_docs.find(rendered, "Deployment", "sparktrace")[0]["spec"]["template"]["spec"]
            self.assertEqual(env(sparktrace["containers"][0])["SPARKTRACE_OTLP_ENDPOINT"], endpoint)

    def test_the_collector_pipeline_ends_in_tempo(self):
        service = self.collector["service"]
        pipeline = service["pipelines"]["traces"]
        for section, names in (("receivers", pipeline["receivers"]), ("processors", pipeline["processors"]),
                               ("exporters", pipeline["exporters"]), ("extensions", service["extensions"])):
            for name in names:
                self.assertIn(name, self.collector[section], f"{section} {name} is not defined")
        exporter = self.collector["exporters"][pipeline["exporters"][0]]
        self.assertTrue(pipeline["exporters"][0].split("/")[0] == "otlp")
        _, port = self.service_target(exporter["endpoint"])
        self.assertEqual(self.tempo["distributor"]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"], f"0.0.0.0:{port}")
        self.assertEqual(self.tempo["storage"]["trace"]["backend"], "local")
        tempo = self.workload("tempo")
        data = next(m["mountPath"] for m in tempo["containers"][0]["volumeMounts"] if m["name"] == "data")
        for path in (self.tempo["storage"]["trace"]["wal"]["path"], self.tempo["storage"]["trace"]["local"]["path"]):
            self.assertTrue(path.startswith(data + "/"), f"{path} is not on the data volume")
        health = self.collector["extensions"]["health_check"]["endpoint"]
        collector = self.workload("otel-collector")["containers"][0]
        self.assertIn(port_of(health), [p["containerPort"] for p in collector["ports"]])

    def test_prometheus_scrapes_sparktrace(self):
        target = self.prometheus["scrape_configs"][0]["static_configs"][0]["targets"][0]
        spec, port = self.service_target(target)
        admin = spec["containers"][0]
        self.assertEqual(port, next(p["containerPort"] for p in admin["ports"] if p["name"] == "admin"))
        self.assertEqual(self.prometheus["scrape_configs"][0]["metrics_path"], "/metrics")
        promtool = shutil.which("promtool")
        if promtool:
            result = subprocess.run([promtool, "check", "config", os.path.join(self.dir, "prometheus-config.yml")],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_grafana_datasources_and_dashboards(self):
        urls = {d["type"]: d["url"] for d in self.datasources["datasources"]}
        self.assertEqual(set(urls), {"prometheus", "tempo"})
        self.service_target(urls["prometheus"].removeprefix("http://"))
        _, tempo_port = self.service_target(urls["tempo"].removeprefix("http://"))
        self.assertEqual(tempo_port, self.tempo["server"]["http_listen_port"])
        grafana = self.workload("grafana")
        mounts = {m["name"]: m["mountPath"] for m in grafana["containers"][0]["volumeMounts"]}
        volumes = {v["name"]: v for v in grafana["volumes"]}
        dashboards = next(n for n, v in volumes.items()
                          if v.get("configMap", {}).get("name") == "sparktrace-grafana-dashboard")
        self.assertEqual(self.providers["providers"][0]["options"]["path"], mounts[dashboards])
        provisioning = {"/etc/grafana/provisioning/datasources", "/etc/grafana/provisioning/dashboards"}
        self.assertTrue(provisioning <= set(mounts.values()))
        rendered = k8s_docs.render("overlays/observability")
        if rendered is not None:
            # Every dashboard of k8s/grafana reaches Grafana, however many it holds.
            configmap = k8s_docs.find(rendered, "ConfigMap", "sparktrace-grafana-dashboard")[0]
            files = {os.path.basename(p) for p in glob.glob(os.path.join(K8S, "grafana", "*.json"))}
            self.assertTrue(files)
            self.assertEqual(files, set(configmap["data"]))
            names = {d["metadata"]["name"] for d in rendered if d["kind"] == "ConfigMap"}
            for spec in (d["spec"]["template"]["spec"] for d in rendered if d["kind"] == "Deployment"):
                for volume in spec.get("volumes", []):
                    if "configMap" in volume:
                        self.assertIn(volume["configMap"]["name"], names)

    def test_images_are_pinned(self):
        pinned = re.compile(r"^[a-z0-9./-]+:v?\d+\.\d+\.\d+$")
        for name in k8s_docs.OVERLAYS:
            for document in k8s_docs.documents(name):
                for pod in k8s_docs.sparktrace_pods([document]) or []:
                    self.assertRegex(pod.container["image"], pinned)
                if document["kind"] == "Deployment":
                    for container in document["spec"]["template"]["spec"]["containers"]:
                        with self.subTest(image=container["image"]):
                            self.assertRegex(container["image"], pinned)
                            self.assertNotIn("latest", container["image"])


if __name__ == "__main__":
    unittest.main()
