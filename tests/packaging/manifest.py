#!/usr/bin/python3
"""Reads and adapts rendered Kubernetes manifests for kubernetes_test.sh.

    manifest.py summary FILE.yaml
        One line per object: the fields an overlay must set (kind, name,
        selector, pod labels, port, image, command, both probes' commands).
    manifest.py get FILE.yaml KIND FIELD.PATH
        The value at FIELD.PATH (dots; numbers index lists) of the first
        object of KIND: a list one item a line, anything else as it is.
    manifest.py play FILE.yaml PORT ADMIN_PORT
        The Deployment alone, as podman kube play --network host needs it:
        named NAME-test, one replica, on 127.0.0.1:PORT with the admin port
        on 127.0.0.1:ADMIN_PORT and --shape on (a request can then be kept
        in flight), and no containerPorts (podman 4.3 refuses them on the
        host's network).

What kubectl's jsonpath and a Kustomize patch would do, for a machine
without kubectl (Debian 12 has none) or without the npm registry: Python
and Debian's python3-yaml only.
"""
import json
import sys

import yaml

NAME = "app.kubernetes.io/name"


def dig(value, *keys):
    for key in keys:
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = value[key]
        else:
            return None
    return value


def compact(value):
    return "" if value is None else json.dumps(value, separators=(",", ":"))


def summary(o):
    spec = o.get("spec") or {}
    c = dig(spec, "template", "spec", "containers", 0) or {}
    selector = spec.get("selector") or {}
    selector = selector.get("matchLabels", selector)
    pods = dig(spec, "template", "metadata", "labels", NAME) or ""
    http = [p for p in c.get("ports") or [] if p.get("name") == "http"]
    if o["kind"] == "Service":
        port = spec["ports"][0]["port"]
    else:
        port = http[0]["containerPort"] if http else ""
    probe = lambda p: compact(dig(c, p, "exec", "command"))
    return (f"{o['kind']} {o['metadata']['name']} selector={selector.get(NAME, '')} pods={pods}"
            f" port={port} image={c.get('image', '')} command={compact(c.get('command'))}"
            f" liveness={probe('livenessProbe')} readiness={probe('readinessProbe')}")


def play(o, port, admin):
    o["metadata"]["name"] += "-test"
    o["spec"]["replicas"] = 1
    c = o["spec"]["template"]["spec"]["containers"][0]
    wanted = {"HELLO_HOST": "127.0.0.1", "HELLO_PORT": port, "HELLO_ADMIN": f"127.0.0.1:{admin}",
              "HELLO_SHAPE": "1"}
    c["env"] = [e for e in c.get("env") or [] if e["name"] not in wanted]
    c["env"] += [{"name": k, "value": str(v)} for k, v in wanted.items()]
    c.pop("ports", None)
    return o


def main(argv):
    usage = "usage: manifest.py summary FILE | get FILE KIND PATH | play FILE PORT ADMIN_PORT"
    if len(argv) < 2:
        sys.exit(usage)
    what, path, rest = argv[0], argv[1], argv[2:]
    with open(path, encoding="utf-8") as f:
        objects = [o for o in yaml.safe_load_all(f) if o]
    if what == "summary" and not rest:
        for o in objects:
            print(summary(o))
    elif what == "get" and len(rest) == 2:
        o = next((x for x in objects if x.get("kind") == rest[0]), None)
        keys = [int(k) if k.isdigit() else k for k in rest[1].split(".")]
        value = dig(o, *keys)
        if value is None:
            sys.exit(f"manifest.py: no {rest[1]} in a {rest[0]} of {path}")
        print("\n".join(map(str, value)) if isinstance(value, list) else value)
    elif what == "play" and len(rest) == 2:
        d = next((x for x in objects if x.get("kind") == "Deployment"), None)
        if d is None:
            sys.exit(f"manifest.py: no Deployment in {path}")
        sys.stdout.write(yaml.safe_dump(play(d, rest[0], rest[1]), sort_keys=False))
    else:
        sys.exit(usage)


if __name__ == "__main__":
    main(sys.argv[1:])
