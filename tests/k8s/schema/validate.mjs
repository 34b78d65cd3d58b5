#!/usr/bin/env node
// Offline schema validation of Kubernetes objects, e.g. `kubectl kustomize k8s/overlays/X | node validate.mjs`.
//
//   node validate.mjs [--json] [FILE...]     (no FILE, or -: standard input)
//
// Reads YAML or JSON streams (several documents each) and validates every object against the JSON
// schema of its apiVersion and kind:
//   - Kubernetes' own API (v1, apps/v1, policy/v1, networking.k8s.io/v1, ...): kubernetes-models,
//     generated from the Kubernetes OpenAPI spec, with its compiled validators;
//   - monitoring.coreos.com/v1 (ServiceMonitor, PodMonitor, PrometheusRule, ...):
//     @kubernetes-models/prometheus-operator, generated from the operator's CRDs;
//   - sparkoperator.k8s.io SparkApplication (v1beta2) and SparkConnect (v1alpha1): no npm package
//     carries their CRDs, so spark-operator-schema.mjs describes the fields of the operator's Go
//     types (named there, with the commit they were read at) and hands every embedded Kubernetes
//     type (containers, volumes, pod templates, ...) to the kubernetes-models validators.
// Like `kubectl apply --validate=strict`, a field the schema does not define is an error (the
// generated validators alone ignore unknown fields: a typo such as `imagePullPolice` would pass).
// An object of a kind without a schema is an error too.
//
// Prints one line per object, `OK kind/name (source)` or `INVALID kind/name (source): <path> <message>`
// (with --json: one JSON object per line), and exits 0 when every object is valid, 1 otherwise,
// 2 when an input cannot be read or parsed.

import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { sparkOperatorValidator } from "./spark-operator-schema.mjs";
import { validateStrict } from "./strict.mjs";

// ---------------------------------------------------------------------------------------------
// Which validator for which apiVersion/kind.

const PACKAGES = [
  // [test on the API group, module path of kind K in version V of group G]
  [(group) => group === "monitoring.coreos.com",
    (group, version, kind) => `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`],
  [(group) => !group.includes(".") || group.endsWith(".k8s.io"),
    (group, version, kind) => `kubernetes-models/${group ? group + "/" : ""}${version}/${kind}`],
];

const cache = new Map();

async function validatorFor(apiVersion, kind) {
  const key = `${apiVersion} ${kind}`;
  if (cache.has(key)) return cache.get(key);
  let result = null;
  const custom = sparkOperatorValidator(apiVersion, kind);
  if (custom) {
    result = custom;
  } else if (typeof apiVersion === "string" && typeof kind === "string" && /^[A-Za-z0-9]+$/.test(kind)) {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    for (const [matches, modulePath] of PACKAGES) {
      if (!matches(group)) continue;
      try {
        const module = await import(modulePath(group, version, kind));
        const model = module[kind];
        if (model && model.apiVersion === apiVersion && model.kind === kind) {
          // setValidateFunc put the compiled validator behind Model.prototype.validate, which
          // throws a ValidationError carrying ajv's errors.
          result = (object) => {
            const validate = (data) => {
              try {
                model.prototype.validate.call(data);
                return true;
              } catch (error) {
                validate.errors = error.errors || [{ instancePath: "", message: String(error.message || error) }];
                return false;
              }
            };
            return validateStrict(validate, object);
          };
        }
      } catch (error) {
        if (error.code !== "ERR_MODULE_NOT_FOUND" && error.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw error;
      }
      break;
    }
  }
  cache.set(key, result);
  return result;
}

export async function validateObject(object) {
  if (object === null || typeof object !== "object" || Array.isArray(object)) {
    return { status: "invalid", errors: [{ instancePath: "", message: "is not an object" }] };
  }
  const validate = await validatorFor(object.apiVersion, object.kind);
  if (!validate) {
    return { status: "no-schema", errors: [{ instancePath: "", message: `no schema for apiVersion ${JSON.stringify(object.apiVersion)} kind ${JSON.stringify(object.kind)}` }] };
  }
  const errors = validate(object);
  return { status: errors.length ? "invalid" : "valid", errors };
}

// ---------------------------------------------------------------------------------------------

function readDocuments(text, source) {
  const documents = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`${source}: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    // A kubectl List (kubectl kustomize -o json is not one, but `kubectl get -o yaml` is).
    if (value && value.kind === "List" && Array.isArray(value.items)) documents.push(...value.items);
    else documents.push(value);
  }
  return documents;
}

async function main(argv) {
  const json = argv.includes("--json");
  const files = argv.filter((a) => a !== "--json");
  if (files.some((f) => f.startsWith("--"))) {
    process.stderr.write("usage: node validate.mjs [--json] [FILE...]\n");
    return 2;
  }
  let failed = 0;
  for (const file of files.length ? files : ["-"]) {
    let documents;
    try {
      const text = readFileSync(file === "-" ? 0 : file, "utf8");
      documents = readDocuments(text, file);
    } catch (error) {
      process.stderr.write(`validate: ${error.message}\n`);
      return 2;
    }
    for (const [index, object] of documents.entries()) {
      const { status, errors } = await validateObject(object);
      const name = object?.metadata?.name ?? "(no name)";
      const kind = object?.kind ?? "(no kind)";
      if (status !== "valid") failed++;
      if (json) {
        process.stdout.write(JSON.stringify({ source: file, index, apiVersion: object?.apiVersion, kind, name, status, errors }) + "\n");
      } else if (status === "valid") {
        process.stdout.write(`OK ${kind}/${name} (${file})\n`);
      } else {
        for (const e of errors) process.stdout.write(`INVALID ${kind}/${name} (${file}): ${e.instancePath || "/"} ${e.message}\n`);
      }
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}
