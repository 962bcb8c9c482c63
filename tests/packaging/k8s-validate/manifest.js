#!/usr/bin/env node
// node manifest.js summary FILE.yaml
//   One line per object: the fields an overlay must set (kind, name,
//   selector, pod labels, port, image, command, both probes' commands).
// node manifest.js get FILE.yaml KIND FIELD.PATH
//   The value at FIELD.PATH (dots; numbers index lists) of the first object
//   of KIND: a list one item a line, anything else as it is.
// node manifest.js play FILE.yaml PORT ADMIN_PORT
//   The Deployment alone, as podman kube play --network host needs it for
//   kubernetes_test.sh: named NAME-test, one replica, on 127.0.0.1:PORT
//   with the admin port on 127.0.0.1:ADMIN_PORT and --shape on (a request
//   can then be kept in flight), and no containerPorts (podman 4.3 refuses
//   them on the host's network).
// What kubectl's jsonpath and a Kustomize patch would do, for a machine
// without kubectl (Debian 12 has none): the committed rendered manifests
// are read with the same YAML library as validate.js.
"use strict";

const fs = require("fs");
const YAML = require("yaml");

function objects(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))
    .map((d) => d.toJS())
    .filter((o) => o);
}

const NAME = "app.kubernetes.io/name";

function summary(o) {
  const c = (((o.spec || {}).template || {}).spec || { containers: [{}] }).containers[0];
  const sel = ((o.spec || {}).selector || {}).matchLabels || (o.spec || {}).selector || {};
  const pods = ((((o.spec || {}).template || {}).metadata || {}).labels || {})[NAME] || "";
  const http = (c.ports || []).find((p) => p.name === "http");
  const port = o.kind === "Service" ? o.spec.ports[0].port : http ? http.containerPort : "";
  const json = (v) => (v === undefined ? "" : JSON.stringify(v));
  const probe = (p) => json(p && p.exec && p.exec.command);
  return (
    `${o.kind} ${o.metadata.name} selector=${sel[NAME] || ""} pods=${pods} port=${port}` +
    ` image=${c.image || ""} command=${json(c.command)}` +
    ` liveness=${probe(c.livenessProbe)} readiness=${probe(c.readinessProbe)}`
  );
}

function get(o, path) {
  return path.split(".").reduce((v, k) => (v === undefined ? v : v[k]), o);
}

function play(o, port, admin) {
  o.metadata.name += "-test";
  o.spec.replicas = 1;
  const c = o.spec.template.spec.containers[0];
  const set = {
    HELLO_HOST: "127.0.0.1",
    HELLO_PORT: port,
    HELLO_ADMIN: `127.0.0.1:${admin}`,
    HELLO_SHAPE: "1",
  };
  c.env = (c.env || []).filter((e) => !(e.name in set));
  for (const [name, value] of Object.entries(set)) c.env.push({ name, value: String(value) });
  delete c.ports;
  return o;
}

const [what, file, ...rest] = process.argv.slice(2);
try {
  const all = objects(file);
  if (what === "summary" && rest.length === 0) {
    for (const o of all) console.log(summary(o));
  } else if (what === "get" && rest.length === 2) {
    const o = all.find((x) => x.kind === rest[0]);
    const v = o && get(o, rest[1]);
    if (v === undefined) throw new Error(`no ${rest[1]} in a ${rest[0]} of ${file}`);
    console.log(Array.isArray(v) ? v.join("\n") : String(v));
  } else if (what === "play" && rest.length === 2) {
    const d = all.find((x) => x.kind === "Deployment");
    if (!d) throw new Error(`no Deployment in ${file}`);
    process.stdout.write(YAML.stringify(play(d, rest[0], rest[1])));
  } else {
    console.error("usage: manifest.js summary FILE | get FILE KIND PATH | play FILE PORT ADMIN_PORT");
    process.exit(2);
  }
} catch (e) {
  console.error(`manifest.js: ${e.message}`);
  process.exit(1);
}
