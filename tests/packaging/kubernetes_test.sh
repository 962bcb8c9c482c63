#!/usr/bin/env bash
# tests/packaging/kubernetes_test.sh: packaging/kubernetes/ rendered, checked
# offline and run (docs/containers.md, "Kubernetes"):
#
#  1. every persona of servers/personas.txt has an overlay (and there is no
#     other) and a rendered file, packaging/kubernetes/rendered/hello-NAME.yaml,
#     with the persona's binary in the command and both probes, its port in
#     the Deployment and the Service, its names and selectors, and the image
#     tagged with CMakeLists.txt's version; where kubectl is found, kubectl
#     kustomize renders each overlay to exactly its committed file
#     (scripts/kube-render writes them);
#  2. every rendered object validates offline (tests/packaging/k8s-validate,
#     installed with npm ci): the Kubernetes and Prometheus Operator
#     schemas, no unknown field, the restricted Pod Security profile; and
#     broken copies of one are refused;
#  3. rendered/hello-sanic.yaml's Deployment runs under podman kube play --network host
#     (the image from scripts/image): it serves, its exec probes pass when
#     run in the container as the kubelet would, and on stop /readyz turns
#     503 while a request in flight is still answered, then the server
#     exits 0.
#
# Run by ctest (kubernetes_manifests), or alone from anywhere. Exit 0: all
# passed; 1: a check failed; 77 (skipped): no check failed but a part could
# not run here (no npm, podman cannot run, no kubectl to render the
# overlays again and compare), each reason printed.
# Traffic goes to 127.0.0.1 only; podman uses the host's network, never a
# bridge, and nothing under /etc changes (CONTAINERS_CONF).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
kube=$root/packaging/kubernetes
validator=$root/tests/packaging/k8s-validate
started=$SECONDS

failures=0
skipped=()
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "SKIP: $*"; skipped+=("$*"); }

# podman set up as scripts/image does it, before anything else (in a chroot
# it runs this script again where / is a mount): podman, runc and npm
# installed where missing, CONTAINERS_CONF, vfs storage where overlay
# mounts cannot work.
podman_why=
# Not redirected: in a chroot podman-env runs this script again in its
# place, and that run's output is this test's.
# shellcheck source=scripts/podman-env
# shellcheck disable=SC1091
if ! . "$root/scripts/podman-env"; then
  podman_why="scripts/podman-env failed (its output is above)"
elif ! podman_info=$(timeout 60 podman info 2>&1); then
  podman_why="podman info fails here: $(tail -1 <<<"$podman_info")"
fi

tmp=$(mktemp -d)
play_yaml=
cleanup() {
  if [[ -n $play_yaml ]]; then
    timeout 60 podman kube down "$play_yaml" >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

version=$(sed -n 's/^project([a-z_]* VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ -n $version ]] || { echo "FAIL: no project(... VERSION) in CMakeLists.txt"; exit 1; }
image="localhost/hello-family:$version"
mapfile -t personas < <(awk '!/^#/ && NF { print $1 " " $2 }' "$root/servers/personas.txt")
((${#personas[@]})) || { echo "FAIL: no personas in servers/personas.txt"; exit 1; }

manifest() { python3 "$root/tests/packaging/manifest.py" "$@"; }

expected_summary() {
  local name=$1 port=$2
  echo "Service hello-$name selector=hello-$name pods= port=$port image= command= liveness= readiness="
  echo "Deployment hello-$name selector=hello-$name pods=hello-$name port=$port image=$image" \
       "command=[\"hello-$name\"] liveness=[\"hello-$name\",\"--probe\",\"/healthz\"]" \
       "readiness=[\"hello-$name\",\"--probe\",\"/readyz\"]"
  echo "PodMonitor hello-$name selector=hello-$name pods= port= image= command= liveness= readiness="
}

# --- 0. What reads the files (python3-yaml) and the validator (npm ci). -------
have_yaml=0
if python3 -c 'import yaml' 2>/dev/null; then
  have_yaml=1
else
  skip "read the rendered files: no python3 with yaml (apt-get install python3-yaml)"
fi
have_node=0
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  skip "validate: npm or node not found (apt-get install npm)"
else
  # npm ci again only when the lock file changed since the last install.
  stamp=$validator/node_modules/.hello-family-lock
  if ! cmp -s "$validator/package-lock.json" "$stamp" 2>/dev/null; then
    if (cd "$validator" && timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.log" 2>&1; then
      cp "$validator/package-lock.json" "$stamp"
    elif code=$(grep -oE 'code (E[A-Z_]+|[A-Z_]*CERT[A-Z_]*)' "$tmp/npm.log" | head -1) &&
         grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|CERT' <<<"$code"; then
      # The registry out of reach (no network, a proxy whose CA this
      # machine lacks) is this machine's, not the validator's.
      skip "validate: npm ci cannot reach the npm registry from here (${code#code })"
    else
      fail "npm ci in tests/packaging/k8s-validate: $(grep -m3 'ERR' "$tmp/npm.log")"
    fi
  fi
  [[ -f $stamp ]] && have_node=1
fi

# --- 1. An overlay and a rendered file per persona, each as it should be. ------
for overlay in "$kube"/overlays/*/; do
  name=$(basename "$overlay")
  printf '%s\n' "${personas[@]}" | grep -q "^$name " || fail "overlays/$name is not a persona of servers/personas.txt"
done
for file in "$kube"/rendered/*.yaml; do
  name=$(basename "$file" .yaml)
  [[ -d $kube/overlays/${name#hello-} ]] || fail "rendered/$name.yaml has no overlay: scripts/kube-render"
done

have_kubectl=0
# HELLO_KUBECTL=none tries the path of a machine without it.
if command -v "${HELLO_KUBECTL:-kubectl}" >/dev/null 2>&1; then
  have_kubectl=1
else
  # A part left out, so a skip (77) at the end, though the committed files
  # are checked, validated and run below all the same.
  skip "render: kubectl not found (not in Debian 12's archive; the Kubernetes project's own apt repository has it): the overlays are not rendered again to compare with rendered/"
fi
rendered=()
for line in "${personas[@]}"; do
  read -r name port <<<"$line"
  file=$kube/rendered/hello-$name.yaml
  if [[ ! -d $kube/overlays/$name ]]; then
    fail "no overlay for hello-$name: packaging/kubernetes/overlays/$name"; continue
  elif [[ ! -f $file ]]; then
    fail "no packaging/kubernetes/rendered/hello-$name.yaml: run scripts/kube-render"; continue
  fi
  if ((have_kubectl)); then
    if ! "$root/scripts/kube-render" --stdout "$name" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
      fail "kubectl kustomize overlays/$name: $(tail -1 "$tmp/$name.err")"; continue
    elif ! diff -u "$file" "$tmp/$name.yaml" >"$tmp/$name.render.diff"; then
      fail "rendered/hello-$name.yaml is not what overlays/$name renders now (run scripts/kube-render):"
      sed -n '3,12p' "$tmp/$name.render.diff"; continue
    fi
  fi
  if grep -q PERSONA "$file"; then
    fail "overlays/$name leaves the base's hello-PERSONA: $(grep -m1 -n PERSONA "$file")"
  elif ((have_yaml)) && ! diff -u <(expected_summary "$name" "$port") <(manifest summary "$file") >"$tmp/$name.diff"; then
    fail "rendered/hello-$name.yaml has the wrong fields (- wanted, + rendered):"
    sed -n '3,$p' "$tmp/$name.diff"
  else
    rendered+=("$file")
    what="rendered/hello-$name.yaml"
    ((have_kubectl)) && what="overlays/$name renders rendered/hello-$name.yaml"
    pass "$what: $(grep -c '^kind:' "$file") objects, $(wc -c <"$file") bytes: hello-$name on port $port, $image"
  fi
done

# --- 2. Validate them offline, and see broken ones refused. ---------------------
# Fails with the validator's output unless it exits 1 and says $2.
refused() {
  local what=$1 expected=$2 file=$3 out rc=0
  out=$(node "$validator/validate.js" --restricted "$file" 2>&1) || rc=$?
  if ((rc == 1)) && grep -qF -- "$expected" <<<"$out"; then
    pass "validate.js refuses $what: $(grep -m1 -F -- "$expected" <<<"$out" | cut -c1-160)"
  else
    fail "validate.js on $what exited $rc without '$expected':"
    printf '%s\n' "$out"
  fi
}

if ((${#rendered[@]} == 0)); then
  ((failures)) || skip "validate: nothing to validate"
elif ((have_node)); then
  if out=$(node "$validator/validate.js" --restricted "${rendered[@]}" 2>&1); then
    pass "validate.js --restricted: $(grep -c '^ok:' <<<"$out") objects of ${#rendered[@]} overlays valid"
  else
    fail "validate.js --restricted on the rendered overlays:"
    grep -v '^ok:' <<<"$out"
  fi
  # The negative cases, each a copy of the rendered sanic broken one way.
  sanic=$kube/rendered/hello-sanic.yaml
  broken() {  # broken NAME SED-EXPRESSION: a copy of $sanic, which must differ
    sed "$2" "$sanic" >"$tmp/$1.yaml"
    if cmp -s "$sanic" "$tmp/$1.yaml"; then fail "negative case $1: the sed expression changed nothing"; return 1; fi
  }
  if [[ -f $sanic ]]; then
    broken replicas-string 's/^  replicas: 2$/  replicas: "2"/' &&
      refused "a string for replicas" "/spec/replicas must be integer" "$tmp/replicas-string.yaml"
    broken unknown-field 's/readOnlyRootFilesystem: true/readOnlyRootFilesytem: true/' &&
      refused "a misspelt field" "unknown field spec.template.spec.containers.0.securityContext.readOnlyRootFilesytem" "$tmp/unknown-field.yaml"
    broken crd-unknown-field 's|^    path: /metrics$|    path: /metrics\n    scrapeTimout: 5s|' &&
      refused "a misspelt PodMonitor field" "unknown field spec.podMetricsEndpoints.0.scrapeTimout" "$tmp/crd-unknown-field.yaml"
    broken bad-quantity 's/cpu: "2"/cpu: two/' &&
      refused "a CPU limit that is no quantity" 'must match format "quantity"' "$tmp/bad-quantity.yaml"
    broken escalation 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' &&
      refused "privilege escalation (restricted profile)" "allowPrivilegeEscalation is not false" "$tmp/escalation.yaml"
  fi
fi

# --- 3. Run rendered/hello-sanic.yaml's Deployment with podman kube play. -------------------
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# http_get PORT PATH: the status line and body of one GET to 127.0.0.1:PORT.
http_get() {
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  timeout "${3:-5}" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" "$2" >&3
    cat <&3' _ "$1" "$2" 2>/dev/null | tr -d '\r' | sed -n '1p; /^$/,$p' | sed '/^$/d' || true
}
accepted() {  # connections the server has accepted, from its /metrics
  http_get "$1" /metrics 2 | awk '/^hello_connections_accepted_total/ { n += $2 } END { print n + 0 }'
}

run_play() {
  local sanic=$kube/rendered/hello-sanic.yaml
  if [[ ! -f $sanic ]]; then skip "podman kube play: no rendered/hello-sanic.yaml"; return; fi
  if ((!have_yaml)); then skip "podman kube play: no python3-yaml to prepare the manifest"; return; fi
  if ! command -v podman >/dev/null 2>&1; then skip "podman kube play: podman not found (scripts/setup --image)"; return; fi
  if [[ -n $podman_why ]]; then skip "podman kube play: $podman_why"; return; fi
  local ref
  ref=$("$root/scripts/image" --ref)
  [[ $ref == "$image" ]] || fail "scripts/image --ref is $ref, the manifests run $image"
  echo "building $ref with scripts/image (a no-op when nothing changed)"
  if ! timeout 1200 "$root/scripts/image" >"$tmp/image.log" 2>&1; then
    fail "scripts/image: $(tail -3 "$tmp/image.log")"; return
  fi

  # The rendered Deployment with what the host's network needs: loopback
  # ports chosen free a moment ago (podman 4.3 refuses containerPorts under
  # --network host, so they go too), one replica; and --shape, for a
  # request that is still in flight when the stop begins. The Service and
  # the PodMonitor have no meaning to podman (manifest.py play).
  local port admin
  port=$(free_port)
  admin=$(free_port)
  play_yaml=$tmp/play.yaml
  manifest play "$sanic" "$port" "$admin" >"$play_yaml"
  local pod=hello-sanic-test-pod-0 ctr=hello-sanic-test-pod-0-hello
  timeout 60 podman kube down "$play_yaml" >/dev/null 2>&1 || true  # a run killed before its clean-up
  local t0=$SECONDS
  if ! timeout 120 podman kube play --network host "$play_yaml" >"$tmp/play.log" 2>&1; then
    fail "podman kube play --network host: $(grep -v 'level=error msg="unable to get systemd' "$tmp/play.log" | tail -2)"
    return
  fi

  local answer=''
  # At most 50 tries and 10 s: a container starts in about a second here.
  local deadline=$((SECONDS + 10))
  for _ in $(seq 50); do
    ((SECONDS < deadline)) || break
    answer=$(http_get "$port" / 2)
    [[ $answer == $'HTTP/1.1 200 OK\nHello!!!' ]] && break
    sleep 0.2
  done
  if [[ $answer == $'HTTP/1.1 200 OK\nHello!!!' ]]; then
    pass "podman kube play: hello-sanic serves on 127.0.0.1:$port within $((SECONDS - t0)) s: $(podman logs "$ctr" 2>&1 | grep -m1 '^listening on')"
  else
    fail "podman kube play: no 'Hello!!!' on 127.0.0.1:$port within 10 s; its log: $(podman logs "$ctr" 2>&1 | tail -3)"
    return
  fi

  # What podman made of the restricted securityContext and the resources.
  local user ro quota period pid uids
  read -r user ro quota period pid < <(podman inspect "$ctr" --format \
    '{{.Config.User}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CpuQuota}} {{.HostConfig.CpuPeriod}} {{.State.Pid}}')
  uids=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
  if [[ $user == 65532:65532 && $uids == 65532 && $ro == true && $quota == 200000 && $period == 100000 ]]; then
    pass "runs as $user (uid $uids), read-only root, CPU quota $quota of $period (limits.cpu 2)"
  else
    fail "podman inspect: user $user (uid $uids), read-only root $ro, CPU quota $quota of $period (want 65532:65532, true, 200000 of 100000)"
  fi

  # The probes as the kubelet runs exec probes: the command, in the
  # container. (podman 4.3 turns an exec liveness probe into a CMD-SHELL
  # health check, which needs a /bin/sh the image does not have.) In a
  # chroot that scripts/podman-env re-rooted, podman exec cannot enter a
  # container (docs/containers.md): the command then runs in a second
  # container of the image on the same network, with the pod's HELLO_ADMIN.
  in_pod() {
    if [[ -z ${HELLO_PODMAN_REROOTED:-} ]]; then
      timeout 10 podman exec "$ctr" "$@"
    else
      timeout 30 podman run --rm --network host --no-healthcheck -e HELLO_ADMIN="127.0.0.1:$admin" "$image" "$@"
    fi
  }
  local where="in the container"
  [[ -n ${HELLO_PODMAN_REROOTED:-} ]] && where="in a second container (podman exec cannot enter one from this re-rooted chroot)"
  local probe cmd out rc
  for probe in liveness readiness; do
    mapfile -t cmd < <(manifest get "$play_yaml" Deployment "spec.template.spec.containers.0.${probe}Probe.exec.command")
    rc=0
    out=$(in_pod "${cmd[@]}" 2>&1) || rc=$?
    if ((rc == 0)); then pass "$probe probe '${cmd[*]}' exits 0 $where: $out"; else fail "$probe probe '${cmd[*]}' exited $rc $where: $out"; fi
  done
  rc=0
  out=$(in_pod hello-sanic --probe /no-such-path 2>&1) || rc=$?
  if ((rc == 1)); then pass "a probe of a 404 exits 1: $out"; else fail "hello-sanic --probe /no-such-path exited $rc (want 1): $out"; fi

  # A request the server is still answering when the stop begins.
  local before
  before=$(accepted "$admin")
  http_get "$port" "/?delay=3s" 15 >"$tmp/in-flight.txt" &
  local request=$!
  deadline=$((SECONDS + 5))
  for _ in $(seq 50); do
    ((SECONDS < deadline)) || break
    (($(accepted "$admin") > before)) && break  # the admin port's own connections are not counted
    sleep 0.1
  done

  local grace
  grace=$(manifest get "$play_yaml" Deployment spec.template.spec.terminationGracePeriodSeconds)
  local t_stop=$SECONDS
  timeout $((grace + 30)) podman pod stop -t "$grace" "$pod" >"$tmp/stop.log" 2>&1 &
  local stopper=$!
  local ready='' waited=0
  deadline=$((SECONDS + 10))
  for _ in $(seq 100); do
    ((SECONDS < deadline)) || break
    ready=$(http_get "$admin" /readyz 1 | head -1)
    [[ $ready == "HTTP/1.1 503"* ]] && break
    sleep 0.1
  done
  waited=$((SECONDS - t_stop))
  if [[ $ready == "HTTP/1.1 503"* ]]; then
    pass "on podman pod stop /readyz answers '$ready' within $waited s"
  else
    fail "on podman pod stop /readyz never turned 503 in 10 s (last: '$ready')"
  fi
  wait "$request" || true
  if [[ $(head -1 "$tmp/in-flight.txt") == "HTTP/1.1 200 OK" ]]; then
    pass "the request in flight at the stop is answered: $(tr '\n' ' ' <"$tmp/in-flight.txt")"
  else
    fail "the request in flight at the stop got '$(head -1 "$tmp/in-flight.txt")'"
  fi
  wait "$stopper" || fail "podman pod stop -t $grace: $(tail -1 "$tmp/stop.log")"
  local code
  code=$(podman inspect "$ctr" --format '{{.State.ExitCode}}')
  if [[ $code == 0 ]]; then
    pass "stopped in $((SECONDS - t_stop)) s (terminationGracePeriodSeconds $grace), exit code 0: $(podman logs "$ctr" 2>&1 | grep -m1 'total:' | sed 's/^ *//')"
  else
    fail "exit code $code after podman pod stop; its log: $(podman logs "$ctr" 2>&1 | tail -3)"
  fi
}
run_play

echo "took $((SECONDS - started)) s"
if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
if ((${#skipped[@]})); then
  echo "skipped in part (no check failed):"
  printf '  %s\n' "${skipped[@]}"
  exit 77
fi
echo "all checks passed"
