"""The shared-store overlays: every proxy writes to one PostgreSQL, `sparktrace ui` reads it.

k8s/overlays/shared-store (PostgreSQL as a StatefulSet) and k8s/overlays/shared-store-external (your
own database), both built on k8s/components/shared-store, and the driver-sidecar change that
docs/shared-store.md documents. Checked here:

- the proxies write as the role sparktrace and the ui reads as sparktrace_reader, each with its own
  password from the Secret sparktrace-store, whose keys exist; no password or token is ever in an
  argument, a plain variable or a URL; the files users write their passwords in are examples in
  git and ignored by it;
- flags and SPARKTRACE_ variables are those `sparktrace proxy --help` / `sparktrace ui --help` list
  (the PostgreSQL store, --spool-dir and --spool-max-bytes: these tests fail until the binary has
  them); the spool fits in its volume; probes, Services, the PodDisruptionBudget, the StatefulSet
  and its claim, and which pods each NetworkPolicy selects and lets through;
- against a real PostgreSQL 15 (tests/support/postgres_server.py): the overlay's init script
  creates the roles (and refuses the placeholder passwords); every proxy configuration (the
  Deployment of both overlays, the three driver sidecars with the documented change) starts on it and
  migrates it; the ui starts on it as the reader, is ready, and the reader may read every table the
  migrations created and write none; proxy and ui start while the database is unreachable (/readyz
  503 for the ui).

The manifests' host and port are replaced by the test server's unix socket; user, database and
parameters are the manifests'. Run by CTest as k8s.shared_store with SPARKTRACE_BIN; needs kubectl
(the Secrets come from kustomize's generators) and postgresql-15.
"""

import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from unittest import mock

import yaml

import k8s_docs
import test_k8s_schema
from k8s_docs import K8S, ROOT
from test_k8s_overlays import (all_pods, binary, closed_port, container_command, is_postgres, mebibytes,
                               postgres_url_at, selector_matches, setting)

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import postgres_server  # noqa: E402

IN_CLUSTER = "overlays/shared-store"
EXTERNAL = "overlays/shared-store-external"
SHARED = k8s_docs.SHARED_STORE_OVERLAYS
DOC = os.path.join(ROOT, "docs", "shared-store.md")
INIT_SCRIPT = os.path.join(K8S, "overlays", "shared-store", "postgres-init.sh")
HELP_FLAG = re.compile(r"^\s+(--[a-z0-9-]+)", re.MULTILINE)
WRITER, READER = "sparktrace", "sparktrace_reader"
SECRET = "sparktrace-store"

_help = {}


def flags_of(command):
    if command not in _help:
        result = subprocess.run([binary(), command, "--help"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        _help[command] = set(HELP_FLAG.findall(result.stdout))
    return _help[command]


def flag_of(variable):
    return "--" + variable.removeprefix("SPARKTRACE_").lower().replace("_", "-")


def workload(documents, name, kind="Deployment"):
    return k8s_docs.find(documents, kind, name)[0]


def pod_spec(document):
    return document["spec"]["template"]["spec"]


def pod_labels(document):
    return document["spec"]["template"]["metadata"]["labels"]


def container(document, name):
    return next(c for c in pod_spec(document)["containers"] if c["name"] == name)


def secret_ref(container_, variable):
    entry = next(e for e in container_.get("env", []) if e["name"] == variable)
    return entry.get("valueFrom", {}).get("secretKeyRef")


def volume_size_limit(pod, path):
    """The sizeLimit (MiB) of the emptyDir the container's mount holding PATH is on."""
    mounts = [m for c in pod["containers"] for m in c.get("volumeMounts", [])
              if path.startswith(m["mountPath"].rstrip("/") + "/")]
    assert mounts, f"{path} is on no volume"
    volume = next(v for v in pod["volumes"] if v["name"] == mounts[0]["name"])
    assert "emptyDir" in volume, volume
    return mebibytes(volume["emptyDir"]["sizeLimit"]), mounts[0]


def doc_text():
    with open(DOC) as handle:
        return handle.read()


def documented_sidecar_change():
    """The env entries docs/shared-store.md tells to put in a driver sidecar, and the writer URL of
    the `kubectl create secret` command that goes with them."""
    section = doc_text().split("## Driver sidecars", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block, "no yaml block under '## Driver sidecars' in docs/shared-store.md"
    change = yaml.safe_load(block.group(1))
    url = re.search(r"--from-literal=writer-url='([^']+)'", section)
    assert url, "no `kubectl create secret ... --from-literal=writer-url='...'` under '## Driver sidecars'"
    return change["env"], url.group(1)


def with_sidecar_change(container_, change):
    """The container with the documented env entries replacing its own of the same name."""
    names = {e["name"] for e in change}
    changed = dict(container_)
    changed["env"] = [e for e in container_.get("env", []) if e["name"] not in names] + change
    return changed


def http_get(url, host=None, timeout=5):
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


class Running:
    """One sparktrace process with a container's configuration: `with Running(...) as run:` waits
    for its first line (`listening grpc=...` or `trace view http://...`); SIGTERM on leaving."""

    def __init__(self, container_, values, store=None, timeout=20):
        self.tmp = tempfile.TemporaryDirectory(prefix="sparktrace-shared-store-")  # the pod's volumes
        command, variables = container_command(container_, values, self.tmp.name, store=store)
        self.before = set(os.listdir(self.tmp.name))  # what the test put there (event-log directory)
        self.process = subprocess.Popen(command, env=variables, cwd=self.tmp.name, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.timeout = timeout
        self.first_line = ""
        self.code = None
        self.err = ""

    def __enter__(self):
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if selector.select(timeout=0.2):
                    self.first_line = self.process.stdout.readline()  # "" once it exited
                    break
        return self

    def failure(self):
        """Why it did not start: its first line and the end of its log."""
        self.stop()
        return f"did not start: {self.first_line!r} {self.err[-2000:]}"

    @property
    def url(self):
        """The admin (proxy) or trace-view (ui) base URL from the first line."""
        match = re.search(r"admin=(\S+)", self.first_line)
        if match:
            return f"http://{match.group(1)}"
        match = re.search(r"(http://\S+?)/?$", self.first_line.strip())
        return match.group(1) if match else None

    def written(self):
        """What the process created on the pod's volumes."""
        return sorted(set(os.listdir(self.tmp.name)) - self.before)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, self.err = self.process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.err = self.process.communicate()
        self.code = self.process.returncode
        return self.code

    def __exit__(self, *exc):
        self.stop()
        self.tmp.cleanup()


@unittest.skipUnless(k8s_docs.have_kubectl(), "kubectl not installed (the Secrets come from kustomize's generators)")
class SharedStoreManifestTest(unittest.TestCase):
    """The objects of both overlays, without a database."""

    @classmethod
    def setUpClass(cls):
        cls.docs = {name: k8s_docs.render(name) for name in SHARED}
        cls.secrets = {name: k8s_docs.secret_data(docs, SECRET) for name, docs in cls.docs.items()}

    def proxy(self, overlay):
        return container(workload(self.docs[overlay], "sparktrace"), "sparktrace")

    def ui(self, overlay):
        return container(workload(self.docs[overlay], "sparktrace-ui"), "sparktrace-ui")

    def values(self, overlay, container_):
        return k8s_docs.env_values(container_, self.docs[overlay])

    def test_proxies_write_as_the_writer_and_the_ui_reads_as_the_reader(self):
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                proxy, ui = self.proxy(overlay), self.ui(overlay)
                writer = urllib.parse.urlsplit(setting(proxy, "--store", self.values(overlay, proxy)))
                reader = urllib.parse.urlsplit(setting(ui, "--store", self.values(overlay, ui)))
                self.assertIn(writer.scheme, ("postgresql", "postgres"))
                self.assertEqual((writer.username, reader.username), (WRITER, READER))
                self.assertEqual((reader.scheme, reader.hostname, reader.port, reader.path),
                                 (writer.scheme, writer.hostname, writer.port, writer.path), "one database")
                self.assertEqual(secret_ref(proxy, "PGPASSWORD"), {"name": SECRET, "key": "writer-password"})
                self.assertEqual(secret_ref(ui, "PGPASSWORD"), {"name": SECRET, "key": "reader-password"})
                self.assertEqual(secret_ref(proxy, "SPARKTRACE_STORE")["name"], SECRET)
                self.assertEqual(pod_spec(workload(self.docs[overlay], "sparktrace-ui"))["containers"][0]["args"][0],
                                 "ui")
        # In the cluster: the headless Service of the StatefulSet, as the init script names them.
        docs = self.docs[IN_CLUSTER]
        writer = urllib.parse.urlsplit(self.secrets[IN_CLUSTER]["writer-url"])
        service = workload(docs, writer.hostname, "Service")
        self.assertEqual([p["port"] for p in service["spec"]["ports"]], [writer.port])
        self.assertEqual(writer.path, "/sparktrace")
        with open(INIT_SCRIPT) as handle:
            script = handle.read()
        for statement in (f"CREATE ROLE {WRITER} LOGIN", f"CREATE ROLE {READER} LOGIN",
                          f"CREATE DATABASE sparktrace OWNER {WRITER}"):
            self.assertIn(statement, script)

    def test_passwords_are_never_in_arguments_plain_variables_or_urls(self):
        for overlay in SHARED:
            secret = self.secrets[overlay]
            hidden = [v for k, v in secret.items() if "password" in k or "token" in k]
            self.assertTrue(hidden)
            for document in self.docs[overlay]:
                if document["kind"] not in ("Deployment", "StatefulSet"):
                    continue
                for container_ in pod_spec(document)["containers"]:
                    with self.subTest(overlay=overlay, container=container_["name"]):
                        words = container_.get("args", []) + container_.get("command", [])
                        plain = [e.get("value", "") for e in container_.get("env", []) if "valueFrom" not in e]
                        for text in words + plain:
                            self.assertNotIn("password", text.lower())
                            for value in hidden:
                                self.assertNotIn(value, text)
                        for entry in container_.get("env", []):
                            if re.search(r"PASSWORD|TOKEN", entry["name"]):
                                self.assertIn("secretKeyRef", entry.get("valueFrom", {}), entry["name"])
                        for value in self.values(overlay, container_).values():
                            if value and is_postgres(value):
                                url = urllib.parse.urlsplit(value)
                                self.assertIsNone(url.password, "the password comes from PGPASSWORD")
                                self.assertNotIn("password", urllib.parse.parse_qs(url.query))

    def test_every_secret_reference_resolves(self):
        for overlay in SHARED:
            for document in self.docs[overlay]:
                if document["kind"] not in ("Deployment", "StatefulSet"):
                    continue
                for container_ in pod_spec(document)["containers"]:
                    for entry in container_.get("env", []):
                        reference = entry.get("valueFrom", {}).get("secretKeyRef")
                        if reference and not reference.get("optional"):
                            with self.subTest(overlay=overlay, container=container_["name"], variable=entry["name"]):
                                data = k8s_docs.secret_data(self.docs[overlay], reference["name"])
                                self.assertIsNotNone(data, f"no Secret {reference['name']}")
                                self.assertIn(reference["key"], data)

    def test_user_written_files_stay_out_of_git(self):
        # The Secret comes from a file the user writes; git has only its example, with placeholders.
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                directory = os.path.join(K8S, overlay)
                with open(os.path.join(directory, "kustomization.yaml")) as handle:
                    kustomization = yaml.safe_load(handle)
                generator = next(g for g in kustomization["secretGenerator"] if g["name"] == SECRET)
                self.assertTrue(generator["options"]["disableNameSuffixHash"], "sidecars name the Secret")
                with open(os.path.join(directory, ".gitignore")) as handle:
                    ignored = handle.read().split()
                for written in generator["envs"]:
                    self.assertIn(written, ignored)
                    with open(os.path.join(directory, written + ".example")) as handle:
                        lines = [line for line in handle.read().splitlines() if line and not line.startswith("#")]
                    for line in lines:
                        key, value = line.split("=", 1)
                        if "password" in key:
                            self.assertTrue(value.startswith("REPLACE_ME"), f"{written}.example: {key}")

    def test_flags_and_variables_are_the_binarys(self):
        for overlay in SHARED:
            for command, container_ in (("proxy", self.proxy(overlay)), ("ui", self.ui(overlay))):
                with self.subTest(overlay=overlay, command=command):
                    flags = flags_of(command)
                    self.assertEqual(container_["args"][0], command)
                    for name in [a for a in container_["args"] if a.startswith("--")]:
                        self.assertIn(name, flags)
                    for variable in [e["name"] for e in container_["env"] if e["name"].startswith("SPARKTRACE_")]:
                        self.assertIn(flag_of(variable), flags, f"{variable} is not a flag of sparktrace {command}")
        for name in ("--store", "--spool-dir", "--spool-max-bytes"):
            self.assertIn(name, flags_of("proxy"))

    def test_the_spool_fits_in_its_volume(self):
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                deployment = workload(self.docs[overlay], "sparktrace")
                proxy = self.proxy(overlay)
                values = self.values(overlay, proxy)
                spool = setting(proxy, "--spool-dir", values)
                limit, mount = volume_size_limit(pod_spec(deployment), spool)
                self.assertFalse(mount.get("readOnly", False))
                self.assertLess(mebibytes(setting(proxy, "--spool-max-bytes", values)), limit,
                                "an emptyDir over its sizeLimit gets the pod evicted")

    def test_the_ui_deployment_service_and_budget(self):
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                docs = self.docs[overlay]
                deployment = workload(docs, "sparktrace-ui")
                ui = self.ui(overlay)
                labels = pod_labels(deployment)
                self.assertEqual(deployment["spec"]["replicas"], 2)
                self.assertEqual(deployment["spec"]["selector"]["matchLabels"], labels)
                ports = {p["name"]: p["containerPort"] for p in ui["ports"]}
                self.assertEqual(setting(ui, "--listen"), f"0.0.0.0:{ports['admin']}", "kubelet probes the pod IP")
                self.assertEqual(ui["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "admin"})
                self.assertEqual(ui["livenessProbe"]["httpGet"], {"path": "/healthz", "port": "admin"})
                security = ui["securityContext"]
                self.assertTrue(security["readOnlyRootFilesystem"] and security["runAsNonRoot"])
                self.assertFalse(security["allowPrivilegeEscalation"])
                self.assertEqual(security["capabilities"]["drop"], ["ALL"])
                self.assertNotIn("cpu", ui["resources"]["limits"])
                service = workload(docs, "sparktrace-ui", "Service")
                self.assertEqual(service["spec"]["selector"], labels)
                self.assertFalse(selector_matches({"matchLabels": service["spec"]["selector"]},
                                                  pod_labels(workload(docs, "sparktrace"))), "the ui Service hits proxies")
                for port in service["spec"]["ports"]:
                    self.assertIn(port["targetPort"], ports)
                self.assertEqual(service["metadata"]["labels"]["app.kubernetes.io/name"], "sparktrace")
                budget = workload(docs, "sparktrace-ui", "PodDisruptionBudget")["spec"]
                self.assertTrue(selector_matches(budget["selector"], labels))
                self.assertFalse(selector_matches(budget["selector"], pod_labels(workload(docs, "sparktrace"))))
                self.assertLess(budget["maxUnavailable"], deployment["spec"]["replicas"])
                # The Host names the trace view answers include the Service's (else 421).
                allowed = self.values(overlay, ui)["SPARKTRACE_ADMIN_ALLOWED_HOSTS"].split(",")
                self.assertIn(service["metadata"]["name"], allowed)

    def test_the_postgres_statefulset(self):
        docs = self.docs[IN_CLUSTER]
        statefulset = workload(docs, "sparktrace-postgres", "StatefulSet")
        pod = pod_spec(statefulset)
        postgres = container(statefulset, "postgres")
        values = self.values(IN_CLUSTER, postgres)
        self.assertRegex(postgres["image"], r"^postgres:15\.\d+$")
        service = workload(docs, statefulset["spec"]["serviceName"], "Service")
        self.assertEqual(service["spec"]["clusterIP"], "None", "headless: the name is the pod")
        self.assertTrue(selector_matches({"matchLabels": service["spec"]["selector"]}, pod_labels(statefulset)))
        self.assertEqual(statefulset["spec"]["selector"]["matchLabels"], service["spec"]["selector"])
        ports = {p["name"]: p["containerPort"] for p in postgres["ports"]}
        self.assertEqual([(p["port"], ports[p["targetPort"]]) for p in service["spec"]["ports"]], [(5432, 5432)])
        mounts = {m["mountPath"]: m for m in postgres["volumeMounts"]}
        claims = {c["metadata"]["name"] for c in statefulset["spec"]["volumeClaimTemplates"]}
        data = os.path.dirname(values["PGDATA"])
        self.assertIn(mounts[data]["name"], claims, "PGDATA on the claim")
        init = mounts["/docker-entrypoint-initdb.d"]
        volume = next(v for v in pod["volumes"] if v["name"] == init["name"])
        configmap = k8s_docs.find(docs, "ConfigMap", volume["configMap"]["name"])[0]
        with open(INIT_SCRIPT) as handle:
            self.assertEqual(list(configmap["data"].values()), [handle.read()])
        self.assertTrue(list(configmap["data"])[0].endswith(".sh"))
        self.assertEqual(volume["configMap"]["defaultMode"] & 0o555, 0o555, "executable: run, not sourced")
        security = postgres["securityContext"]
        self.assertTrue(security["readOnlyRootFilesystem"] and security["runAsNonRoot"])
        self.assertFalse(security["allowPrivilegeEscalation"])
        for writable in ("/var/run/postgresql", "/tmp", data):
            self.assertIn(writable, mounts)
            self.assertFalse(mounts[writable].get("readOnly", False))
        # The variables the init script reads come from the Secret; the superuser's too.
        with open(INIT_SCRIPT) as handle:
            read = set(re.findall(r"\\getenv \w+ (\w+)", handle.read()))
        self.assertTrue(read)
        for variable in read | {"POSTGRES_PASSWORD"}:
            self.assertEqual(secret_ref(postgres, variable)["name"], SECRET, variable)
        self.assertEqual(values["POSTGRES_USER"], "postgres")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            self.assertEqual(postgres[probe]["exec"]["command"][0], "pg_isready")
        stop = postgres["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(stop[:2], ["pg_ctl", "stop"])
        self.assertIn(f"--pgdata={values['PGDATA']}", stop)
        self.assertIn("--mode=fast", stop)

    def test_network_policies(self):
        docs = self.docs[IN_CLUSTER]
        policies = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "NetworkPolicy"}
        proxy = pod_labels(workload(docs, "sparktrace"))
        ui = pod_labels(workload(docs, "sparktrace-ui"))
        database = pod_labels(workload(docs, "sparktrace-postgres", "StatefulSet"))
        prometheus = pod_labels(workload(k8s_docs.render("overlays/observability"), "prometheus"))
        sidecars = [p.labels for p in all_pods() if p.overlay in k8s_docs.SIDECAR_OVERLAYS]
        self.assertEqual(len(sidecars), 3)
        stranger = {"app.kubernetes.io/name": "something-else"}

        def selected(policy):
            return [name for name, labels in (("proxy", proxy), ("ui", ui), ("database", database))
                    if selector_matches(policy["podSelector"], labels)]

        def admitted(rules, labels, same_namespace=True):
            return [rule for rule in rules for peer in rule.get("from", rule.get("to", [{}]))
                    if selector_matches(peer.get("podSelector", {}), labels)
                    and (same_namespace or "namespaceSelector" in peer or "podSelector" not in peer)]

        # PostgreSQL: only sparktrace reaches it (proxies, ui, driver sidecars anywhere), on 5432; no egress.
        database_policy = next(p for p in policies.values() if selected(p) == ["database"])
        self.assertEqual(set(database_policy["policyTypes"]), {"Ingress", "Egress"})
        self.assertFalse(database_policy.get("egress"))
        ingress = database_policy["ingress"]
        for labels in (proxy, ui):
            self.assertTrue(admitted(ingress, labels))
        for labels in sidecars:
            self.assertTrue(admitted(ingress, labels, same_namespace=False), labels)
        for labels in (prometheus, stranger, database):
            self.assertFalse(admitted(ingress, labels), labels)
        self.assertEqual({p["port"] for rule in ingress for p in rule["ports"]}, {"postgresql"})
        # Proxies and ui may reach it: an egress rule to its pods on 5432 selects both.
        clients = [p for p in policies.values() if "Egress" in p["policyTypes"]
                   and any(5432 in [port["port"] for port in rule.get("ports", [])] for rule in p.get("egress", []))]
        for who, labels in (("proxy", proxy), ("ui", ui)):
            rules = [rule for p in clients if selector_matches(p["podSelector"], labels) for rule in p["egress"]
                     if 5432 in [port["port"] for port in rule["ports"]]]
            self.assertTrue(admitted(rules, database), who)
            self.assertFalse(admitted(rules, stranger), f"{who}: 5432 open to anything")
        # The base's policy still selects the proxies only.
        self.assertEqual(selected(policies["sparktrace"]), ["proxy"])
        # The ui: its admin port open to Prometheus only (as the base's), DNS out.
        ui_policy = next(p for p in policies.values() if selected(p) == ["ui"] and "ingress" in p)
        self.assertEqual(set(ui_policy["policyTypes"]), {"Ingress", "Egress"})
        self.assertTrue(all("from" in rule for rule in ui_policy["ingress"]), "nothing open to all")
        self.assertTrue(admitted(ui_policy["ingress"], prometheus, same_namespace=False))
        for labels in (proxy, stranger):
            self.assertFalse(admitted(ui_policy["ingress"], labels, same_namespace=False))
        self.assertEqual({p["port"] for rule in ui_policy["ingress"] for p in rule["ports"]}, {"admin"})
        allowed = {(p["port"], p.get("protocol", "TCP")) for rule in ui_policy["egress"] for p in rule["ports"]}
        self.assertLessEqual({(53, "UDP"), (53, "TCP")}, allowed)
        # Your own database: the proxies and the ui may reach 5432 wherever it is.
        external = [d["spec"] for d in self.docs[EXTERNAL] if d["kind"] == "NetworkPolicy"]
        for labels in (proxy, ui):
            rules = [rule for p in external if selector_matches(p["podSelector"], labels) for rule in p.get("egress", [])]
            self.assertTrue([rule for rule in rules if "to" not in rule
                             and 5432 in [port["port"] for port in rule["ports"]]])

    def test_the_external_overlay_has_no_database(self):
        kinds = {(d["kind"], d["metadata"]["name"]) for d in self.docs[EXTERNAL]}
        self.assertNotIn(("StatefulSet", "sparktrace-postgres"), kinds)
        self.assertNotIn(("Service", "sparktrace-postgres"), kinds)
        self.assertIn(("Deployment", "sparktrace-ui"), kinds)

    def test_the_docs_match_the_manifests(self):
        text = doc_text()
        for overlay in SHARED:
            self.assertIn(f"k8s/{overlay}", text)
        service = workload(self.docs[IN_CLUSTER], "sparktrace-ui", "Service")
        self.assertIn(f"svc/sparktrace-ui {service['spec']['ports'][0]['port']}", text)
        # Sizing quotes measured figures (bench/store_bench.py), never placeholders.
        self.assertIn("bench/results/store.json", text)
        self.assertNotRegex(text, r"<[A-Z_]{4,}>")
        # The example Ingress sends the Airflow link's host to the ui Service's port.
        ingress = next(d for d in (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL))
                       if isinstance(d, dict) and d.get("kind") == "Ingress")
        backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
        self.assertEqual(backend["name"], service["metadata"]["name"])
        self.assertIn(backend["port"].get("number"), [p["port"] for p in service["spec"]["ports"]])
        reports, _ = test_k8s_schema.run_validator([ingress])
        self.assertEqual(reports[0]["status"], "valid", test_k8s_schema.describe(reports[0]))
        # The documented sidecar change: the same Secret and store, and retention, as the Deployment.
        change, writer_url = documented_sidecar_change()
        proxy = self.proxy(IN_CLUSTER)
        values = self.values(IN_CLUSTER, proxy)
        mine = urllib.parse.urlsplit(values["SPARKTRACE_STORE"])
        theirs = urllib.parse.urlsplit(writer_url)
        self.assertEqual((theirs.username, theirs.port, theirs.path), (mine.username, mine.port, mine.path))
        self.assertEqual(theirs.hostname.split(".")[0], mine.hostname, "the Service, from another namespace")
        by_name = {e["name"]: e for e in change}
        self.assertEqual(by_name["SPARKTRACE_STORE"]["valueFrom"]["secretKeyRef"], {"name": SECRET, "key": "writer-url"})
        self.assertEqual(by_name["PGPASSWORD"]["valueFrom"]["secretKeyRef"], {"name": SECRET, "key": "writer-password"})
        self.assertEqual(by_name["SPARKTRACE_STORE_MAX_BYTES"]["value"], values["SPARKTRACE_STORE_MAX_BYTES"],
                         "every writer applies the retention: the same for all")


class SharedStorePostgresTest(unittest.TestCase):
    """Every sparktrace configuration of the shared-store overlays on a real PostgreSQL 15."""

    @classmethod
    def setUpClass(cls):
        if not k8s_docs.have_kubectl():
            raise unittest.SkipTest("kubectl not installed (the Secrets come from kustomize's generators)")
        cls.docs = {name: k8s_docs.render(name) for name in SHARED}
        # The cluster's superuser is `postgres`, as in the postgres image, so that the roles the init
        # script creates (sparktrace among them) are ordinary ones.
        with mock.patch.object(postgres_server, "ROLE", "postgres"):
            cls.pg = postgres_server.PostgresServer().start()
        cls.migrated = False
        try:
            code, _, err = cls.run_init({"STORE_WRITER_PASSWORD": "writer-secret-1",
                                         "STORE_READER_PASSWORD": "reader-secret-1"})
            assert code == 0, err
        except BaseException:
            cls.pg.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.pg.cleanup()

    @classmethod
    def run_init(cls, passwords):
        """The overlay's init script, as the postgres image runs it: with the StatefulSet's
        variables (Secret values from PASSWORDS), psql on PATH, the superuser over the socket."""
        statefulset = workload(cls.docs[IN_CLUSTER], "sparktrace-postgres", "StatefulSet")
        postgres = container(statefulset, "postgres")
        variables = {e["name"]: e["value"] for e in postgres["env"] if "value" in e}
        for entry in postgres["env"]:
            if "secretKeyRef" in entry.get("valueFrom", {}) and entry["name"] in passwords:
                variables[entry["name"]] = passwords[entry["name"]]
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "POSTGRES_", "STORE_"))}
        environment = {**clean, **variables, "PGHOST": str(cls.pg.socket_dir),
                       "PATH": f"{postgres_server.BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        environment.pop("PGDATA", None)
        result = subprocess.run(["bash", INIT_SCRIPT], env=environment, capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout, result.stderr

    def sql(self, statement, user="postgres", database="sparktrace"):
        return self.pg.psql(statement, database=database, user=user)

    def store_url(self, container_, values):
        """The container's store URL with its host and port replaced by the test server's socket."""
        return postgres_url_at(setting(container_, "--store", values), socket_dir=str(self.pg.socket_dir))

    def tables(self):
        rows = self.sql(f"SELECT schemaname || '.' || tablename FROM pg_tables WHERE tableowner = '{WRITER}'")
        return [row for row in rows.splitlines() if row]

    def run_proxy(self, container_, values):
        """Starts the proxy on the test database; once it has migrated the schema, stops it."""
        with Running(container_, values, store=self.store_url(container_, values)) as run:
            if not run.first_line.startswith("listening grpc="):
                self.fail(run.failure())
            deadline = time.monotonic() + 20
            while not self.tables() and time.monotonic() < deadline:
                time.sleep(0.2)
            code = run.stop()
            self.assertEqual(code, 0, run.err[-2000:])
            self.assertTrue(self.tables(), f"the proxy created no table as {WRITER}: {run.err[-2000:]}")
            spool = os.path.basename(setting(container_, "--spool-dir", values) or "")
            self.assertLessEqual(set(run.written()), {spool}, "nothing on the pod but the spool")
            if values.get("PGPASSWORD"):
                self.assertNotIn(values["PGPASSWORD"], run.err + run.first_line, "a password in the log")
        type(self).migrated = True

    def ensure_migrated(self):
        if not self.migrated:
            docs = self.docs[IN_CLUSTER]
            proxy = container(workload(docs, "sparktrace"), "sparktrace")
            self.run_proxy(proxy, k8s_docs.env_values(proxy, docs))

    def test_the_init_script_creates_the_roles(self):
        roles = self.sql(f"SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                         f"WHERE rolname IN ('{WRITER}', '{READER}') ORDER BY rolname")
        self.assertEqual(roles.splitlines(), [f"{WRITER}|f|f|f", f"{READER}|f|f|f"])
        self.assertEqual(self.sql("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'sparktrace'"),
                         WRITER)
        self.assertIn("default_transaction_read_only=on",
                      self.sql(f"SELECT rolconfig FROM pg_roles WHERE rolname = '{READER}'"))
        # Idempotent: run again, e.g. with new passwords.
        code, _, err = self.run_init({"STORE_WRITER_PASSWORD": "writer-secret-2", "STORE_READER_PASSWORD": "reader-secret-2"})
        self.assertEqual(code, 0, err)
        # Another role may not even connect.
        self.sql("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'stranger') "
                 "THEN CREATE ROLE stranger LOGIN; END IF; END $$", database="postgres")
        with self.assertRaisesRegex(RuntimeError, "CONNECT"):
            self.sql("SELECT 1", user="stranger")

    def test_the_init_script_refuses_the_placeholders(self):
        with open(os.path.join(K8S, IN_CLUSTER, "passwords.env.example")) as handle:
            example = dict(line.split("=", 1) for line in handle.read().splitlines() if line and line[0] != "#")
        code, _, err = self.run_init({"STORE_WRITER_PASSWORD": example["writer-password"],
                                      "STORE_READER_PASSWORD": example["reader-password"]})
        self.assertNotEqual(code, 0)
        self.assertIn("passwords.env", err)

    def test_every_proxy_configuration_starts_on_the_shared_store(self):
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                proxy = container(workload(self.docs[overlay], "sparktrace"), "sparktrace")
                self.run_proxy(proxy, k8s_docs.env_values(proxy, self.docs[overlay]))

    def test_the_driver_sidecars_start_on_the_shared_store(self):
        change, writer_url = documented_sidecar_change()
        # What `kubectl create secret` puts in the driver's namespace.
        secret = [{"kind": "Secret", "metadata": {"name": SECRET}, "stringData": {"writer-url": writer_url,
                                                                                "writer-password": "writer-secret-1"}}]
        pods = [p for p in all_pods() if p.overlay in k8s_docs.SIDECAR_OVERLAYS]
        self.assertEqual(len(pods), 3)
        for pod in pods:
            with self.subTest(pod=f"{pod.overlay}: {pod.where}"):
                sidecar = with_sidecar_change(pod.container, change)
                values = k8s_docs.env_values(sidecar, secret)
                flags = flags_of("proxy")
                for variable in [v for v in values if v.startswith("SPARKTRACE_")]:
                    self.assertIn(flag_of(variable), flags, f"{variable} is not a flag")
                limit, mount = volume_size_limit(pod.pod, setting(sidecar, "--spool-dir", values))
                self.assertFalse(mount.get("readOnly", False))
                self.assertLess(mebibytes(setting(sidecar, "--spool-max-bytes", values)), limit)
                self.run_proxy(sidecar, values)

    def test_the_ui_reads_as_the_reader(self):
        self.ensure_migrated()
        for overlay in SHARED:
            with self.subTest(overlay=overlay):
                docs = self.docs[overlay]
                ui = container(workload(docs, "sparktrace-ui"), "sparktrace-ui")
                values = k8s_docs.env_values(ui, docs)
                with Running(ui, values, store=self.store_url(ui, values)) as run:
                    if not run.url:
                        self.fail(run.failure())
                    self.assertEqual(http_get(run.url + "/healthz")[0], 200)
                    deadline = time.monotonic() + 15
                    while http_get(run.url + "/readyz")[0] != 200 and time.monotonic() < deadline:
                        time.sleep(0.2)
                    self.assertEqual(http_get(run.url + "/readyz")[0], 200, "not ready on a reachable store")
                    # As the Service's name reaches it (SPARKTRACE_ADMIN_ALLOWED_HOSTS).
                    self.assertEqual(http_get(run.url + "/", host="sparktrace-ui:9464")[0], 200)
                    self.assertEqual(run.stop(), 0, run.err[-2000:])
        # The reader reads every table the migrations created, and writes none.
        tables = self.tables()
        self.assertTrue(tables)
        for table in tables:
            schema, name = table.split(".", 1)
            quoted = f'"{schema}"."{name}"'
            self.sql(f"SELECT count(*) FROM {quoted}", user=READER)
            with self.assertRaisesRegex(RuntimeError, "permission denied|read-only"):
                self.sql(f"BEGIN READ WRITE; DELETE FROM {quoted}; COMMIT", user=READER)

    def test_proxy_and_ui_start_while_the_store_is_unreachable(self):
        for overlay in SHARED:
            docs = self.docs[overlay]
            ui = container(workload(docs, "sparktrace-ui"), "sparktrace-ui")
            with self.subTest(overlay=overlay, container="ui"):
                values = k8s_docs.env_values(ui, docs)
                down = postgres_url_at(setting(ui, "--store", values), "127.0.0.1", closed_port())
                with Running(ui, values, store=down) as run:
                    if not run.url:
                        self.fail(run.failure())
                    self.assertEqual(http_get(run.url + "/healthz")[0], 200)
                    self.assertEqual(http_get(run.url + "/readyz")[0], 503)
                    self.assertEqual(run.written(), [], "the ui writes nothing")
            # The proxy's case is test_k8s_overlays' start test (its store on a closed port).


if __name__ == "__main__":
    unittest.main()
