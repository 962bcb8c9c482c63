#!/usr/bin/env node
// node validate.js [--restricted] FILE.yaml...  (or - for standard input)
//
// Validates every object of the YAML streams offline, with no cluster:
//  1. against its kind's schema: Kubernetes' OpenAPI as the npm package
//     kubernetes-models compiles it, or the Prometheus Operator's CRDs as
//     @kubernetes-models/prometheus-operator does (types, formats such as
//     quantities, enums, required fields);
//  2. for unknown fields, which an API server rejects (kubectl's default
//     strict field validation) but the schema itself does not forbid: a
//     field is known when the validator complains at that very field once
//     it is given a value of no JSON type at all;
//  3. with --restricted, every pod template against the Pod Security
//     Standards' "restricted" profile (the rules its fields can break), and
//     a read-only root file system besides.
// One line per object, "ok: KIND NAME" or "FAIL: KIND NAME: why"; exits 1
// if any object failed, 2 on a bad command line or unreadable input.
"use strict";

const fs = require("fs");
const YAML = require("yaml");

// Only the kinds hello-family renders; anything else is a failure, never a
// silent pass.
const MODELS = {
  "v1/Service": () => require("kubernetes-models/v1/Service").Service,
  "v1/ConfigMap": () => require("kubernetes-models/v1/ConfigMap").ConfigMap,
  "v1/Pod": () => require("kubernetes-models/v1/Pod").Pod,
  "apps/v1/Deployment": () => require("kubernetes-models/apps/v1/Deployment").Deployment,
  "monitoring.coreos.com/v1/PodMonitor": () =>
    require("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor").PodMonitor,
};

// No JSON type matches it: not a string, number, boolean, null, array or
// object, so every typed schema refuses it.
const NO_TYPE = Symbol("no JSON type");

function schema_errors(Model, data) {
  try {
    new Model(data).validate();
    return [];
  } catch (err) {
    if (!Array.isArray(err.errors)) throw err;
    return err.errors;
  }
}

function pointer_token(key) {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

// The fields under node (at JSON pointer path) that the schema does not
// know, as dotted paths; node is changed in place and restored.
function unknown_fields(Model, root, node, path, found) {
  if (Array.isArray(node)) {
    node.forEach((item, i) => unknown_fields(Model, root, item, `${path}/${i}`, found));
    return found;
  }
  if (node === null || typeof node !== "object") return found;
  for (const key of Object.keys(node)) {
    const here = `${path}/${pointer_token(key)}`;
    const value = node[key];
    node[key] = NO_TYPE;
    const known = schema_errors(Model, root).some(
      (e) => e.instancePath === here || e.instancePath.startsWith(`${here}/`));
    node[key] = value;
    if (known) {
      unknown_fields(Model, root, value, here, found);
    } else {
      found.push(here.slice(1).replace(/\//g, "."));
    }
  }
  return found;
}

const ALLOWED_VOLUMES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                                 "persistentVolumeClaim", "projected", "secret"]);

// The Pod Security Standards, "restricted" (which includes "baseline"), as
// far as a pod template's fields decide them; returns the broken rules.
function restricted_violations(pod) {
  const broken = [];
  const psc = pod.securityContext || {};
  const containers = [...(pod.initContainers || []), ...(pod.containers || [])];
  for (const f of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (pod[f]) broken.push(`${f} is true`);
  }
  for (const v of pod.volumes || []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (!ALLOWED_VOLUMES.has(type)) broken.push(`volume ${v.name} is ${type}`);
  }
  const seccomp = (sc) => sc.seccompProfile && sc.seccompProfile.type;
  if (psc.runAsUser === 0) broken.push("the pod's runAsUser is 0");
  if (seccomp(psc) === "Unconfined") broken.push("the pod's seccompProfile is Unconfined");
  for (const c of containers) {
    const sc = c.securityContext || {};
    const caps = sc.capabilities || {};
    const name = `container ${c.name}`;
    if (sc.privileged) broken.push(`${name} is privileged`);
    if (sc.allowPrivilegeEscalation !== false) broken.push(`${name}: allowPrivilegeEscalation is not false`);
    const non_root = sc.runAsNonRoot !== undefined ? sc.runAsNonRoot : psc.runAsNonRoot;
    if (non_root !== true) broken.push(`${name}: runAsNonRoot is not true`);
    if (sc.runAsUser === 0) broken.push(`${name}: runAsUser is 0`);
    const profile = seccomp(sc) || seccomp(psc);
    if (profile !== "RuntimeDefault" && profile !== "Localhost") {
      broken.push(`${name}: seccompProfile is ${profile || "unset"}, not RuntimeDefault or Localhost`);
    }
    if (!(caps.drop || []).includes("ALL")) broken.push(`${name}: capabilities do not drop ALL`);
    for (const cap of caps.add || []) {
      if (cap !== "NET_BIND_SERVICE") broken.push(`${name}: adds capability ${cap}`);
    }
    for (const p of c.ports || []) {
      if (p.hostPort) broken.push(`${name}: hostPort ${p.hostPort}`);
    }
    if (sc.readOnlyRootFilesystem !== true) broken.push(`${name}: readOnlyRootFilesystem is not true`);
  }
  return broken;
}

function pod_template(object) {
  if (object.kind === "Pod") return object.spec;
  return object.spec && object.spec.template && object.spec.template.spec;
}

function check(object, restricted) {
  const key = `${object.apiVersion}/${object.kind}`;
  if (!MODELS[key]) return [`no schema for ${key} here (add its model to validate.js)`];
  const Model = MODELS[key]();
  const problems = schema_errors(Model, object).map((e) => `${e.instancePath || "/"} ${e.message}`);
  if (problems.length) return problems;  // the probe below needs a valid object
  const copy = JSON.parse(JSON.stringify(object));
  for (const field of unknown_fields(Model, copy, copy, "", [])) {
    problems.push(`unknown field ${field}`);
  }
  const pod = pod_template(object);
  if (restricted && pod) problems.push(...restricted_violations(pod));
  return problems;
}

function main(argv) {
  const restricted = argv.includes("--restricted");
  const files = argv.filter((a) => a !== "--restricted");
  if (!files.length || files.some((f) => f.startsWith("--"))) {
    console.error("usage: node validate.js [--restricted] FILE.yaml... (- for standard input)");
    return 2;
  }
  let failed = 0;
  let objects = 0;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file === "-" ? 0 : file, "utf8");
    } catch (err) {
      console.error(`validate.js: cannot read ${file}: ${err.message}`);
      return 2;
    }
    for (const doc of YAML.parseAllDocuments(text)) {
      if (doc.errors.length) {
        console.log(`FAIL: ${file}: not YAML: ${doc.errors[0].message}`);
        failed++;
        continue;
      }
      const object = doc.toJS();
      if (object === null) continue;  // an empty document between two ---
      objects++;
      const name = `${object.kind} ${(object.metadata || {}).name}`;
      const problems = check(object, restricted);
      if (problems.length) {
        failed++;
        console.log(`FAIL: ${name}: ${problems.join("; ")}`);
      } else {
        console.log(`ok: ${name}`);
      }
    }
  }
  if (!objects) {
    console.log("FAIL: no objects in the input");
    return 1;
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
