"""The k8s/ kustomizations as documents, for test_k8s_schema.py and test_k8s_overlays.py.

render(name) renders one with `kubectl kustomize` (None when kubectl is not installed);
raw_documents(name) reads the plain objects its kustomization lists (resources, recursively, and
the YAML objects of its ConfigMap generators), without kustomize: patches are left out, labels
are not applied. embedded_documents() finds objects stored in ConfigMaps (the driver pod template).

Files a user writes and never commits (the shared-store overlays' passwords.env, store.env) have a
NAME.example beside them: render() renders a copy of k8s/ in which every NAME.example is NAME, so the
tests never see (nor print) what a user wrote in a checkout. env_values() resolves a container's
variables from the Secrets and ConfigMaps of the rendered documents.
"""

import atexit
import base64
import glob
import os
import shutil
import subprocess
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
K8S = os.path.join(ROOT, "k8s")

# Every kustomization meant for `kubectl apply -k`, relative to k8s/.
OVERLAYS = [
    "base",
    "overlays/event-log-volume",
    "overlays/driver-sidecar",
    "overlays/spark-operator",
    "overlays/spark-operator-sparkconnect",
    "overlays/observability",
    "overlays/prometheus-operator",
    "overlays/shared-store",
    "overlays/shared-store-external",
]
SHARED_STORE_OVERLAYS = ["overlays/shared-store", "overlays/shared-store-external"]
SIDECAR_OVERLAYS = ["overlays/driver-sidecar", "overlays/spark-operator", "overlays/spark-operator-sparkconnect"]
KUSTOMIZATION_KINDS = {"Kustomization", "Component"}


def have_kubectl():
    return shutil.which("kubectl") is not None


_rendered = {}
_render_root = None


def render_root():
    """A copy of k8s/ with every user-written file (NAME beside NAME.example) set to its example."""
    global _render_root
    if _render_root is None:
        parent = tempfile.mkdtemp(prefix="sparktrace-k8s-render-")
        atexit.register(shutil.rmtree, parent, ignore_errors=True)
        root = os.path.join(parent, "k8s")
        shutil.copytree(K8S, root, symlinks=False)
        for example in glob.glob(os.path.join(root, "**", "*.example"), recursive=True):
            shutil.copyfile(example, example.removesuffix(".example"))
        _render_root = root
    return _render_root


def render(name):
    """The documents `kubectl kustomize k8s/NAME` prints, or None without kubectl."""
    if not have_kubectl():
        return None
    if name not in _rendered:
        result = subprocess.run(["kubectl", "kustomize", os.path.join(render_root(), name)], capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError(f"kubectl kustomize k8s/{name} failed: {result.stderr}")
        _rendered[name] = [d for d in yaml.safe_load_all(result.stdout) if d]
    return _rendered[name]


def load_yaml_documents(path):
    with open(path) as handle:
        return [d for d in yaml.safe_load_all(handle) if d]


def is_object(document):
    return (isinstance(document, dict) and isinstance(document.get("apiVersion"), str)
            and isinstance(document.get("kind"), str) and document["kind"] not in KUSTOMIZATION_KINDS)


def _kustomization(directory):
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return load_yaml_documents(path)[0]
    raise AssertionError(f"no kustomization in {directory}")


def raw_documents(name, _directory=None):
    """(source path, document) for every plain object the kustomization k8s/NAME lists."""
    directory = _directory or os.path.join(K8S, name)
    kustomization = _kustomization(directory)
    found = []
    for entry in kustomization.get("resources", []) + kustomization.get("components", []):
        path = os.path.normpath(os.path.join(directory, entry))
        if os.path.isdir(path):
            found += raw_documents(None, path)
        else:
            found += [(path, d) for d in load_yaml_documents(path) if is_object(d)]
    for generator in kustomization.get("configMapGenerator", []):
        for entry in generator.get("files", []):
            path = os.path.join(directory, entry.split("=", 1)[-1])
            if path.endswith((".yaml", ".yml")):
                try:
                    found += [(path, d) for d in load_yaml_documents(path) if is_object(d)]
                except yaml.YAMLError:
                    pass
    return found


def embedded_documents(documents):
    """(ConfigMap name, key, object) for every Kubernetes object stored in a ConfigMap's data."""
    found = []
    for document in documents:
        if document.get("kind") != "ConfigMap":
            continue
        for key, value in (document.get("data") or {}).items():
            if not key.endswith((".yaml", ".yml")):
                continue
            try:
                parsed = [d for d in yaml.safe_load_all(value) if d]
            except yaml.YAMLError:
                continue
            found += [(document["metadata"]["name"], key, d) for d in parsed if is_object(d)]
    return found


def documents(name):
    """Rendered documents with kubectl, else the raw plain objects (patches not applied)."""
    rendered = render(name)
    if rendered is not None:
        return rendered
    return [d for _, d in raw_documents(name)]


def find(documents_, kind, name=None):
    matches = [d for d in documents_
               if d.get("kind") == kind and (name is None or d.get("metadata", {}).get("name") == name)]
    if not matches:
        raise AssertionError(f"no {kind} {name or ''} among "
                             f"{[(d['kind'], d.get('metadata', {}).get('name')) for d in documents_]}")
    return matches


def secret_data(documents_, name):
    """The decoded data (and stringData) of the Secret NAME among these documents, or None."""
    for document in documents_:
        if document.get("kind") == "Secret" and document.get("metadata", {}).get("name") == name:
            data = {k: base64.b64decode(v).decode() for k, v in (document.get("data") or {}).items()}
            data.update(document.get("stringData") or {})
            return data
    return None


def env_values(container, documents_):
    """{name: value} of a container's variables: plain values, and secretKeyRef/configMapKeyRef
    resolved from these documents. An optional key that is missing is left out, as the kubelet does;
    a fieldRef (downward API) or a reference that cannot be resolved here becomes None."""
    values = {}
    for entry in container.get("env", []):
        if "valueFrom" not in entry:
            values[entry["name"]] = entry.get("value", "")
            continue
        source = entry["valueFrom"]
        reference = source.get("secretKeyRef") or source.get("configMapKeyRef")
        if reference is None:
            values[entry["name"]] = None
            continue
        if "secretKeyRef" in source:
            data = secret_data(documents_, reference["name"])
        else:
            data = next((d.get("data") or {} for d in documents_ if d.get("kind") == "ConfigMap"
                         and d.get("metadata", {}).get("name") == reference["name"]), None)
        if data is not None and reference["key"] in data:
            values[entry["name"]] = data[reference["key"]]
        elif not reference.get("optional"):
            values[entry["name"]] = None
    return values


# --------------------------------------------------------------------------------------------------
# The pods sparktrace runs in, whichever object describes them.

SPARK_DRIVER_CONTAINER = "spark-kubernetes-driver"


class SparktracePod:
    """One pod spec holding a sparktrace container, as the cluster will run it.

    where: a description; pod: the pod spec (containers, volumes, securityContext, ...); labels: the
    pod's labels; spark_conf: the Spark configuration of the driver in that pod (sidecar cases)."""

    def __init__(self, where, pod, labels, spark_conf=None):
        self.where = where
        self.pod = pod
        self.labels = labels
        self.spark_conf = spark_conf or {}

    @property
    def container(self):
        return next(c for c in self.pod["containers"] if c["name"] == "sparktrace")

    def other_containers(self):
        return [c for c in self.pod["containers"] if c["name"] != "sparktrace"]

    def volumes(self):
        return {v["name"]: v for v in self.pod.get("volumes", [])}


def sparktrace_pods(documents_, spark_conf=None):
    """Every pod with a sparktrace container described by these documents."""
    pods = []
    for document in documents_:
        kind = document["kind"]
        name = document.get("metadata", {}).get("name", "(unnamed)")
        if kind == "Deployment":
            template = document["spec"]["template"]
            if any(c["name"] == "sparktrace" for c in template["spec"]["containers"]):
                pods.append(SparktracePod(f"Deployment {name}", template["spec"],
                                          template.get("metadata", {}).get("labels", {})))
        elif kind == "SparkApplication":
            # What the operator's webhook makes of it (internal/webhook/sparkpod_defaulter.go): the
            # driver container gets driver.volumeMounts, the pod gets the spec.volumes those name,
            # the sidecars as they are, podSecurityContext and terminationGracePeriodSeconds.
            spec = document["spec"]
            driver = spec["driver"]
            mounts = driver.get("volumeMounts", [])
            named = {m["name"] for m in mounts}
            pod = {
                "containers": [{"name": SPARK_DRIVER_CONTAINER, "volumeMounts": mounts}] + driver.get("sidecars", []),
                "volumes": [v for v in spec.get("volumes", []) if v["name"] in named],
            }
            if "podSecurityContext" in driver:
                pod["securityContext"] = driver["podSecurityContext"]
            if "terminationGracePeriodSeconds" in driver:
                pod["terminationGracePeriodSeconds"] = driver["terminationGracePeriodSeconds"]
            if any(c["name"] == "sparktrace" for c in pod["containers"]):
                # Spark labels its driver pod spark-role=driver.
                labels = {**driver.get("labels", {}), "spark-role": "driver"}
                pods.append(SparktracePod(f"SparkApplication {name} driver", pod, labels, spec.get("sparkConf", {})))
        elif kind == "SparkConnect":
            template = document["spec"]["server"]["template"]
            if any(c["name"] == "sparktrace" for c in template["spec"]["containers"]):
                pods.append(SparktracePod(f"SparkConnect {name} server", template["spec"],
                                          template.get("metadata", {}).get("labels", {}),
                                          document["spec"].get("sparkConf", {})))
        elif kind == "Pod":
            if any(c["name"] == "sparktrace" for c in document["spec"]["containers"]):
                labels = {**document.get("metadata", {}).get("labels", {}), "spark-role": "driver"}
                pods.append(SparktracePod(f"driver pod template {name}", document["spec"], labels, spark_conf))
    return pods
