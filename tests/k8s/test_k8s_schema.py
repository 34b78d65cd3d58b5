"""Every object of every k8s/ kustomization is valid against its pinned JSON schema, offline.

The schemas come from the npm registry, pinned by tests/k8s/schema/package-lock.json (installed by
scripts/deps.sh): kubernetes-models (the Kubernetes API) and @kubernetes-models/prometheus-operator
(ServiceMonitor, PrometheusRule); SparkApplication and SparkConnect, which no package carries, are
described field by field from the Spark operator's Go types in tests/k8s/schema/spark-operator-schema.mjs.
tests/k8s/schema/validate.mjs validates strictly (unknown fields are errors, like
`kubectl apply --validate=strict`).

With kubectl installed each kustomization is rendered (`kubectl kustomize`) and everything it
prints is validated, plus the objects stored in its ConfigMaps (the driver pod template); without
it, the plain objects each kustomization lists (its patches left out). Run by CTest as k8s.schema.
"""

import copy
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import yaml

import k8s_docs

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
VALIDATOR = os.path.join(SCHEMA_DIR, "validate.mjs")


def run_validator(documents):
    """[(status, kind, name, errors)] from validate.mjs --json over these documents, and its exit code."""
    node = shutil.which("node")
    if not node:
        raise AssertionError("node is not installed: run scripts/deps.sh")
    if not os.path.isdir(os.path.join(SCHEMA_DIR, "node_modules", "kubernetes-models")):
        raise AssertionError("tests/k8s/schema/node_modules is missing: run scripts/deps.sh (npm ci there)")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as stream:
        yaml.safe_dump_all(documents, stream, sort_keys=False)
        stream.flush()
        result = subprocess.run([node, VALIDATOR, "--json", stream.name], capture_output=True, text=True, timeout=120)
    if result.returncode not in (0, 1):
        raise AssertionError(f"validate.mjs failed ({result.returncode}): {result.stderr}")
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    if len(reports) != len(documents):
        raise AssertionError(f"{len(documents)} documents, {len(reports)} reports: {result.stdout}{result.stderr}")
    return reports, result.returncode


def describe(report):
    return "; ".join(f"{report['kind']}/{report['name']} {e['instancePath'] or '/'} {e['message']}"
                     for e in report["errors"])


def as_the_apiserver_decodes(document):
    """kustomize folds a long base64 value of a generated Secret over several lines; the API server
    decodes `data` with Go's encoding/base64, which skips newlines. The schema's "byte" format
    does not: validate the value as one line."""
    if document.get("kind") != "Secret" or not document.get("data"):
        return document
    document = copy.deepcopy(document)
    document["data"] = {k: "".join(v.split()) if isinstance(v, str) else v for k, v in document["data"].items()}
    return document


class SchemaTest(unittest.TestCase):
    def assert_all_valid(self, documents, what):
        self.assertTrue(documents, f"{what}: nothing to validate")
        reports, code = run_validator(documents)
        invalid = [describe(r) for r in reports if r["status"] != "valid"]
        self.assertEqual(invalid, [], f"{what}: invalid objects")
        self.assertEqual(code, 0)
        return reports

    def test_every_kustomization_is_valid(self):
        for name in k8s_docs.OVERLAYS:
            with self.subTest(kustomization=name):
                rendered = k8s_docs.render(name)
                if rendered is not None:
                    embedded = [d for _, _, d in k8s_docs.embedded_documents(rendered)]
                    self.assert_all_valid([as_the_apiserver_decodes(d) for d in rendered] + embedded,
                                          f"kubectl kustomize k8s/{name}")
                else:
                    self.assert_all_valid([d for _, d in k8s_docs.raw_documents(name)], f"raw files of k8s/{name}")

    def test_every_overlay_is_validated(self):
        # k8s_docs.OVERLAYS is a list: an overlay missing from it would be checked by nothing.
        on_disk = {os.path.relpath(os.path.dirname(path), k8s_docs.K8S)
                   for path in glob.glob(os.path.join(k8s_docs.K8S, "overlays", "*", "kustomization.yaml"))}
        self.assertTrue(on_disk)
        self.assertLessEqual(on_disk, set(k8s_docs.OVERLAYS))

    def test_the_driver_pod_template_is_validated_as_a_pod(self):
        # It reaches Spark as a file in a ConfigMap: validated as the Pod it is, both ways.
        raw = [d for path, d in k8s_docs.raw_documents("overlays/driver-sidecar") if path.endswith("driver-pod-template.yaml")]
        self.assertEqual([d["kind"] for d in raw], ["Pod"])
        reports = self.assert_all_valid(raw, "driver-pod-template.yaml")
        self.assertEqual(reports[0]["kind"], "Pod")
        rendered = k8s_docs.render("overlays/driver-sidecar")
        if rendered is not None:
            embedded = k8s_docs.embedded_documents(rendered)
            self.assertEqual([(c, k, d["kind"]) for c, k, d in embedded],
                             [("sparktrace-driver-pod-template", "driver-pod-template.yaml", "Pod")])
            self.assertEqual(embedded[0][2], raw[0])

    @unittest.skipUnless(k8s_docs.have_kubectl(), "kubectl not installed")
    def test_every_kustomization_renders(self):
        for name in k8s_docs.OVERLAYS:
            with self.subTest(kustomization=name):
                self.assertTrue(k8s_docs.render(name))

    def test_the_validator_rejects_broken_objects(self):
        # Copies of real objects from the overlays, each with one mistake, and objects of kinds
        # nobody defined. Each must be reported invalid at the mistake; the untouched copies valid.
        base = {d["kind"]: d for d in k8s_docs.documents("base")}
        deployment = base["Deployment"]
        sparkapp = k8s_docs.find(k8s_docs.documents("overlays/spark-operator"), "SparkApplication")[0]
        sparkconnect = k8s_docs.find(k8s_docs.documents("overlays/spark-operator-sparkconnect"), "SparkConnect")[0]
        monitor = k8s_docs.find(k8s_docs.documents("overlays/prometheus-operator"), "ServiceMonitor")[0]
        pod_template = next(d for p, d in k8s_docs.raw_documents("overlays/driver-sidecar") if d["kind"] == "Pod")

        def broken(document, mutate):
            copy_ = copy.deepcopy(document)
            mutate(copy_)
            return copy_

        def container(d):
            return d["spec"]["template"]["spec"]["containers"][0]

        cases = [
            ("unknown container field", broken(deployment, lambda d: container(d).update(imagePullPolice="Always")),
             "/spec/template/spec/containers/0/imagePullPolice"),
            ("port as a string", broken(deployment, lambda d: container(d)["ports"][0].update(containerPort="15002")),
             "/spec/template/spec/containers/0/ports/0/containerPort"),
            ("misspelt securityContext field",
             broken(deployment, lambda d: container(d)["securityContext"].update(readOnlyRootFileSystem=True)),
             "/spec/template/spec/containers/0/securityContext/readOnlyRootFileSystem"),
            ("PDB field misspelt", broken(base["PodDisruptionBudget"], lambda d: d["spec"].update(maxUnavailible=1)),
             "/spec/maxUnavailible"),
            ("NetworkPolicy port as a list", broken(base["NetworkPolicy"],
                                                    lambda d: d["spec"]["egress"][1]["ports"][0].update(port=[15002])),
             "/spec/egress/1/ports/0/port"),
            ("ServiceMonitor endpoint field misspelt",
             broken(monitor, lambda d: d["spec"]["endpoints"][0].update(intervall="30s")),
             "/spec/endpoints/0/intervall"),
            ("SparkApplication: driver.sidecar", broken(sparkapp, lambda d: d["spec"]["driver"].update(
                sidecar=d["spec"]["driver"].pop("sidecars"))), "/spec/driver/sidecar"),
            ("SparkApplication: a sidecar's unknown field", broken(sparkapp, lambda d: d["spec"]["driver"]["sidecars"][0]
                                                                   .update(argz=[])), "/spec/driver/sidecars/0/argz"),
            ("SparkApplication: no mainApplicationFile",
             broken(sparkapp, lambda d: d["spec"].pop("mainApplicationFile")), "/spec"),
            ("SparkApplication: bad type", broken(sparkapp, lambda d: d["spec"].update(type="PySpark")), "/spec/type"),
            ("SparkApplication: volume of no known type", broken(sparkapp, lambda d: d["spec"]["volumes"][0].update(
                emptydir={})), "/spec/volumes/0/emptydir"),
            ("SparkConnect: template container field misspelt",
             broken(sparkconnect, lambda d: d["spec"]["server"]["template"]["spec"]["containers"][1].update(
                 volumeMount=[])), "/spec/server/template/spec/containers/1/volumeMount"),
            ("Pod template: emptyDir size as a list",
             broken(pod_template, lambda d: d["spec"]["volumes"][0]["emptyDir"].update(sizeLimit=["2Gi"])),
             "/spec/volumes/0/emptyDir/sizeLimit"),
            ("unknown kind", {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}, "/"),
            ("misspelt apiVersion", broken(deployment, lambda d: d.update(apiVersion="apps/v2")), "/"),
        ]
        untouched = [deployment, sparkapp, sparkconnect, monitor, pod_template]
        reports, code = run_validator([c[1] for c in cases] + untouched)
        self.assertEqual(code, 1)
        for (what, _, path), report in zip(cases, reports):
            with self.subTest(case=what):
                self.assertNotEqual(report["status"], "valid", what)
                paths = [e["instancePath"] or "/" for e in report["errors"]]
                self.assertIn(path, paths, f"{what}: {describe(report)}")
        for report in reports[len(cases):]:
            self.assertEqual(report["status"], "valid", describe(report))


if __name__ == "__main__":
    unittest.main()
