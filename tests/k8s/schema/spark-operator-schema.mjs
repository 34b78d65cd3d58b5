// The Kubeflow Spark operator's SparkApplication (sparkoperator.k8s.io/v1beta2) and SparkConnect
// (sparkoperator.k8s.io/v1alpha1), for validate.mjs. No npm package carries these CRDs, so this
// file states their fields as the operator's Go types declare them (the CRDs are generated from
// those types by controller-gen; json tags = field names, no `omitempty` and no `+optional` =
// required, kubebuilder markers = enums and minimums), read in github.com/kubeflow/spark-operator:
//   api/v1beta2/sparkapplication_types.go  at 420a2485eecd4e386dde7549f3fc939744d360aa
//   api/v1alpha1/sparkconnect_types.go     at 4799c0028455f1776d48ba679dd22c823ea28716
// Only the fields listed here are accepted: a field of a newer (or older) operator release that is
// missing here is reported as unknown, on purpose, so that a manifest only uses fields checked
// against the source. Every Kubernetes type embedded in them (containers, volumes, pod templates,
// security contexts, ...) is validated with kubernetes-models' schema of that type, strictly.

import { validate as Affinity } from "kubernetes-models/_schemas/IoK8sApiCoreV1Affinity";
import { validate as Container } from "kubernetes-models/_schemas/IoK8sApiCoreV1Container";
import { validate as EnvFromSource } from "kubernetes-models/_schemas/IoK8sApiCoreV1EnvFromSource";
import { validate as EnvVar } from "kubernetes-models/_schemas/IoK8sApiCoreV1EnvVar";
import { validate as HostAlias } from "kubernetes-models/_schemas/IoK8sApiCoreV1HostAlias";
import { validate as Lifecycle } from "kubernetes-models/_schemas/IoK8sApiCoreV1Lifecycle";
import { validate as PodDNSConfig } from "kubernetes-models/_schemas/IoK8sApiCoreV1PodDNSConfig";
import { validate as PodSecurityContext } from "kubernetes-models/_schemas/IoK8sApiCoreV1PodSecurityContext";
import { validate as PodTemplateSpec } from "kubernetes-models/_schemas/IoK8sApiCoreV1PodTemplateSpec";
import { validate as SecurityContext } from "kubernetes-models/_schemas/IoK8sApiCoreV1SecurityContext";
import { validate as Service } from "kubernetes-models/_schemas/IoK8sApiCoreV1Service";
import { validate as Toleration } from "kubernetes-models/_schemas/IoK8sApiCoreV1Toleration";
import { validate as Volume } from "kubernetes-models/_schemas/IoK8sApiCoreV1Volume";
import { validate as VolumeMount } from "kubernetes-models/_schemas/IoK8sApiCoreV1VolumeMount";
import { validate as ObjectMeta } from "@kubernetes-models/apimachinery/_schemas/IoK8sApimachineryPkgApisMetaV1ObjectMeta";
import { validateStrict } from "./strict.mjs";

// A small schema language: {type, properties, required, additionalProperties, items, enum, minimum}
// or {k8s: compiledValidator}.
const str = { type: "string" };
const int = (minimum) => ({ type: "integer", ...(minimum === undefined ? {} : { minimum }) });
const bool = { type: "boolean" };
const strMap = { type: "object", additionalProperties: str };
const arrayOf = (items) => ({ type: "array", items });
const obj = (properties, required = []) => ({ type: "object", properties, required });
const k8s = (validate) => ({ k8s: validate });

// v1beta2.SparkPodSpec
const sparkPodSpecV1beta2 = {
  template: k8s(PodTemplateSpec),
  cores: int(1),
  coreLimit: str,
  memory: str,
  memoryOverhead: str,
  gpu: obj({ name: str, quantity: int() }, ["name", "quantity"]),
  image: str,
  configMaps: arrayOf(obj({ name: str, path: str }, ["name", "path"])),
  secrets: arrayOf(obj({ name: str, path: str, secretType: str }, ["name", "path", "secretType"])),
  env: arrayOf(k8s(EnvVar)),
  envVars: strMap,
  envFrom: arrayOf(k8s(EnvFromSource)),
  envSecretKeyRefs: { type: "object", additionalProperties: obj({ name: str, key: str }, ["name", "key"]) },
  labels: strMap,
  annotations: strMap,
  volumeMounts: arrayOf(k8s(VolumeMount)),
  affinity: k8s(Affinity),
  tolerations: arrayOf(k8s(Toleration)),
  podSecurityContext: k8s(PodSecurityContext),
  securityContext: k8s(SecurityContext),
  schedulerName: str,
  sidecars: arrayOf(k8s(Container)),
  initContainers: arrayOf(k8s(Container)),
  hostNetwork: bool,
  nodeSelector: strMap,
  dnsConfig: k8s(PodDNSConfig),
  terminationGracePeriodSeconds: int(),
  serviceAccount: str,
  hostAliases: arrayOf(k8s(HostAlias)),
  shareProcessNamespace: bool,
};
const port = obj({ name: str, protocol: str, containerPort: int() }, ["name", "protocol", "containerPort"]);

const sparkApplicationSpec = obj({
  type: { type: "string", enum: ["Java", "Python", "Scala", "R"] },
  sparkVersion: str,
  mode: { type: "string", enum: ["cluster", "client"] },
  proxyUser: str,
  image: str,
  imagePullPolicy: str,
  imagePullSecrets: arrayOf(str),
  mainClass: str,
  mainApplicationFile: str,
  arguments: arrayOf(str),
  sparkConf: strMap,
  hadoopConf: strMap,
  sparkConfigMap: str,
  hadoopConfigMap: str,
  volumes: arrayOf(k8s(Volume)),
  driver: obj({
    ...sparkPodSpecV1beta2,
    podName: str,
    coreRequest: str,
    javaOptions: str,
    lifecycle: k8s(Lifecycle),
    kubernetesMaster: str,
    serviceAnnotations: strMap,
    serviceLabels: strMap,
    ports: arrayOf(port),
    priorityClassName: str,
  }),
  executor: obj({
    ...sparkPodSpecV1beta2,
    instances: int(1),
    coreRequest: str,
    javaOptions: str,
    lifecycle: k8s(Lifecycle),
    deleteOnTermination: bool,
    ports: arrayOf(port),
    priorityClassName: str,
  }),
  deps: obj({
    jars: arrayOf(str), files: arrayOf(str), pyFiles: arrayOf(str), packages: arrayOf(str),
    excludePackages: arrayOf(str), repositories: arrayOf(str), archives: arrayOf(str),
  }),
  restartPolicy: obj({
    type: { type: "string", enum: ["Never", "Always", "OnFailure"] },
    onSubmissionFailureRetries: int(0),
    onFailureRetries: int(0),
    onSubmissionFailureRetryInterval: int(1),
    onFailureRetryInterval: int(1),
  }),
  nodeSelector: strMap,
  failureRetries: int(),
  retryInterval: int(),
  pythonVersion: { type: "string", enum: ["2", "3"] },
  memoryOverheadFactor: str,
  batchScheduler: str,
  timeToLiveSeconds: int(),
}, ["type", "sparkVersion", "mainApplicationFile", "driver", "executor"]);

// v1alpha1.SparkPodSpec (SparkConnect)
const sparkPodSpecV1alpha1 = { cores: int(1), memory: str, template: k8s(PodTemplateSpec) };
const sparkConnectSpec = obj({
  sparkVersion: str,
  image: str,
  hadoopConf: strMap,
  sparkConf: strMap,
  server: obj({ ...sparkPodSpecV1alpha1, service: k8s(Service) }),
  executor: obj({ ...sparkPodSpecV1alpha1, instances: int(0) }),
}, ["sparkVersion", "server", "executor"]);

const KINDS = {
  "sparkoperator.k8s.io/v1beta2 SparkApplication": sparkApplicationSpec,
  "sparkoperator.k8s.io/v1alpha1 SparkConnect": sparkConnectSpec,
};

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function check(schema, value, path, errors) {
  if (schema.k8s) {
    errors.push(...validateStrict(schema.k8s, value, path));
    return;
  }
  const actual = typeOf(value);
  if (schema.type && !(actual === schema.type || (schema.type === "number" && actual === "integer"))) {
    errors.push({ instancePath: path, message: `must be ${schema.type}` });
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    errors.push({ instancePath: path, message: `must be one of ${JSON.stringify(schema.enum)}` });
  }
  if (schema.minimum !== undefined && value < schema.minimum) {
    errors.push({ instancePath: path, message: `must be >= ${schema.minimum}` });
  }
  if (schema.type === "array") {
    value.forEach((item, i) => check(schema.items, item, `${path}/${i}`, errors));
  }
  if (schema.type === "object") {
    for (const key of schema.required || []) {
      if (!(key in value)) errors.push({ instancePath: path, message: `must have required property '${key}'` });
    }
    for (const [key, item] of Object.entries(value)) {
      const child = `${path}/${key}`;
      if (schema.properties && key in schema.properties) check(schema.properties[key], item, child, errors);
      else if (schema.additionalProperties) check(schema.additionalProperties, item, child, errors);
      else errors.push({ instancePath: child, message: "is not a field of this object's schema" });
    }
  }
}

export function sparkOperatorValidator(apiVersion, kind) {
  const spec = KINDS[`${apiVersion} ${kind}`];
  if (!spec) return null;
  const root = obj({
    apiVersion: str,
    kind: str,
    metadata: k8s(ObjectMeta),
    spec,
  }, ["apiVersion", "kind", "metadata", "spec"]);
  return (object) => {
    const errors = [];
    check(root, object, "", errors);
    return errors;
  };
}
