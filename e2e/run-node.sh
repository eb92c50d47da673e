#!/usr/bin/env bash
# The end-to-end suite on the local node (bin/node) instead of Kind, for a machine without Docker:
# the same JUnit scenarios (e2e/pom.xml, profile e2e) against the same chart, on a real kubelet,
# containerd and runc. What Kind brings and the node lacks is made here:
#   images      bin/images builds them with podman; `podman save` into containerd (`ctr import`)
#   helm        bin/helm (built from its Go module when none is on PATH)
#   PostgreSQL  a throw-away server of the host's PostgreSQL binaries, listening on the node's
#               address, with the roles of e2e/manifests/queen-roles.sql and random passwords
#   fixtures    e2e/node-fixtures: local volumes for the brokers' spool claims, the Service
#               "postgres" pointing at that server, the owner and runtime Secrets
# The database outage scenario stops and starts that server with `e2e/run-node.sh --postgres-stop`
# and `--postgres-start` (data kept). Every phase prints its duration; on failure the cluster's objects, events and every pod's log go
# to e2e/target/e2e-state/; the node and the server are stopped on the way out.
#
# Runs as root (bin/node). Needs what `bin/node deps` and `bin/podman-setup` install, Debian's
# postgresql package (its binaries only: no cluster of it is touched), Go, Maven and a JDK 21+.
# Environment:
#   QUEEN_E2E_KEEP_NODE=1   leave the node and the server running afterwards (bin/node down, then
#                           e2e/run-node.sh --postgres-remove)
#   QUEEN_E2E_PG_PORT       the server's port on the node address (default 15432)
#   QUEEN_E2E_TESTS         a failsafe -Dit.test pattern (default: every scenario)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
W="${QUEEN_NODE_DIR:-/tmp/queen-node}"
namespace=queen-e2e
release=queen
state_dir=$root/e2e/target/e2e-state
pg_dir=/tmp/queen-e2e-postgres
pg_port=${QUEEN_E2E_PG_PORT:-15432}
volume_count=4

log() { echo "[e2e-node] $*" >&2; }
die() { log "FAILED: $*"; exit 1; }

timings=()
phase_name="" phase_start=0
phase() { phase_end; phase_name=$1; phase_start=$(date +%s); log "== $1"; }
phase_end() {
  [ -n "$phase_name" ] || return 0
  local took=$(( $(date +%s) - phase_start ))
  timings+=("$(printf '%-44s %4d s' "$phase_name" "$took")")
  log "   $phase_name: ${took} s"
  phase_name=""
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
pg_ctl() { runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$pg_dir/data" "$@"; }
postgres_running() { # the server of $pg_dir, not whatever now holds the id a stale postmaster.pid names
  local pid
  pid=$(head -n 1 "$pg_dir/data/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] \
    && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pg_dir/data"
}
postgres_stop() { # fast: clients' connections are cut, as in a real outage
  if [ -n "$(pg_bin)" ] && postgres_running; then pg_ctl -m fast -w stop > /dev/null; fi
}
postgres_start() {
  pg_ctl -l "$pg_dir/server.log" -w -t 60 start > /dev/null || { tail -n 30 "$pg_dir/server.log" >&2; die "PostgreSQL did not start"; }
}
postgres_remove() { postgres_stop 2>/dev/null || true; rm -rf "$pg_dir"; }
case "${1:-}" in
  --postgres-stop) postgres_stop; log "PostgreSQL stopped"; exit 0 ;;
  --postgres-start) postgres_start; log "PostgreSQL started"; exit 0 ;;
  --postgres-remove) postgres_remove; exit 0 ;;
  "") ;;
  *) echo "usage: e2e/run-node.sh [--postgres-stop|--postgres-start|--postgres-remove]" >&2; exit 2 ;;
esac

# --- Preflight: name what is missing, before anything starts ---------------------------------------
[ "$(id -u)" = 0 ] || die "runs as root (bin/node needs it)"
command -v podman > /dev/null 2>&1 || die "no podman: bin/podman-setup installs and configures it"
command -v containerd > /dev/null 2>&1 || die "no containerd: bin/node deps installs the node's packages"
[ -n "$(pg_bin)" ] || die "no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)"
id postgres > /dev/null 2>&1 || die "no postgres user to run the server as (Debian's postgresql package makes it)"
command -v mvn > /dev/null 2>&1 || die "no mvn (Maven 3.8+)"
command -v python3 > /dev/null 2>&1 || die "no python3 (reads the API's JSON here)"
. bin/java-env

api() { # path [curl args...]: the node's API as its admin
  local path=$1; shift
  curl -fsS --cacert "$W/pki/ca.crt" -H "Authorization: Bearer $(cat "$W/admin.token")" "$@" "https://127.0.0.1:6443$path"
}
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

dump_state() {
  log "dumping the cluster's state into $state_dir"
  rm -rf "$state_dir"; mkdir -p "$state_dir"
  local what
  for what in pods services endpoints persistentvolumeclaims events; do
    api "/api/v1/namespaces/$namespace/$what" > "$state_dir/$what.json" 2>&1 || true
  done
  api /api/v1/persistentvolumes > "$state_dir/persistentvolumes.json" 2>&1 || true
  api /api/v1/nodes > "$state_dir/nodes.json" 2>&1 || true
  api "/apis/apps/v1/namespaces/$namespace/statefulsets" > "$state_dir/statefulsets.json" 2>&1 || true
  api "/apis/apps/v1/namespaces/$namespace/deployments" > "$state_dir/deployments.json" 2>&1 || true
  api "/apis/batch/v1/namespaces/$namespace/jobs" > "$state_dir/jobs.json" 2>&1 || true
  api "/apis/queen.io/v1alpha1/namespaces/$namespace/queues" > "$state_dir/queues.json" 2>&1 || true
  api "/apis/queen.io/v1alpha1/namespaces/$namespace/tenants" > "$state_dir/tenants.json" 2>&1 || true
  # The kubelet writes every container's log under its pod log folder: read straight from there,
  # so that the logs of pods already deleted (rolled brokers, killed operators) are kept too.
  cp -r "$W/pod-logs" "$state_dir/pod-logs" 2>/dev/null || true
  cp -r "$W/logs" "$state_dir/node-logs" 2>/dev/null || true
  cp "$pg_dir/server.log" "$state_dir/postgres.log" 2>/dev/null || true
  "$helm" -n "$namespace" status "$release" > "$state_dir/helm-status.txt" 2>&1 || true
}

finish() {
  local rc=$?
  trap - EXIT
  phase_end
  [ "$rc" -eq 0 ] || dump_state
  if [ "${QUEEN_E2E_KEEP_NODE:-}" = 1 ]; then
    log "keeping the node and PostgreSQL: eval \"\$(bin/node env)\"; stop with bin/node down; e2e/run-node.sh --postgres-remove"
  else
    bin/node down > /dev/null 2>&1 || log "bin/node down failed (see $W/logs)"
    postgres_remove
  fi
  log "phases:"
  local line
  for line in "${timings[@]}"; do log "   $line"; done
  if [ "$rc" -eq 0 ]; then log "local-node suite passed"; else log "local-node suite FAILED (exit $rc); state in $state_dir"; fi
  exit "$rc"
}
trap finish EXIT

# --- Tools and images -------------------------------------------------------------------------------
phase "helm"
helm=$(bin/helm)
export PATH="$(dirname "$helm"):$PATH" # QueenCluster.helmUpgrade runs "helm"
log "helm: $helm ($("$helm" version --short))"

phase "images (bin/images, podman)"
version=$(bin/images --version)
upgrade_tag="${version}-e2e-upgrade"
bin/images
# The upgrade scenario needs a second tag: the same broker under a new name is a new pod template,
# so a full schema Job and roll.
podman tag "localhost/queen-broker:${version}" "localhost/queen-broker:${upgrade_tag}"
mkdir -p e2e/target
archive=e2e/target/node-images.tar
rm -f "$archive"
podman save --multi-image-archive -o "$archive" "localhost/queen-broker:${version}" \
  "localhost/queen-broker:${upgrade_tag}" "localhost/queen-operator:${version}"
log "image archive: $(du -h "$archive" | cut -f1)"

# --- The node ----------------------------------------------------------------------------------------
phase "node (bin/node up)"
bin/node down > /dev/null 2>&1 || true
bin/node up
export KUBECONFIG="$W/admin.kubeconfig"
node_ip=$(cat "$W/node-ip")
node_name=$(api /api/v1/nodes | json 'd["items"][0]["metadata"]["name"]')

phase "images into containerd"
ctr --address "$W/containerd/containerd.sock" -n k8s.io images import "$archive" > "$W/logs/e2e-import.log" 2>&1 \
  || { cat "$W/logs/e2e-import.log" >&2; die "ctr images import of $archive"; }
ctr --address "$W/containerd/containerd.sock" -n k8s.io images ls -q | grep '^localhost/queen-' | sed 's/^/[e2e-node]   /' >&2
rm -f "$archive"

# --- PostgreSQL on the host, for the pods ---------------------------------------------------------
phase "PostgreSQL (host server on $node_ip:$pg_port)"
postgres_remove
bin=$(pg_bin)
mkdir -p "$pg_dir"; chown postgres: "$pg_dir"
runuser -u postgres -- "$bin/initdb" -D "$pg_dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
  > "$pg_dir/initdb.log" 2>&1 || { cat "$pg_dir/initdb.log" >&2; die "initdb"; }
# Pods connect from the pod network; their packets reach the node address unmasqueraded.
echo "host all all 10.244.0.0/16 scram-sha-256" >> "$pg_dir/data/pg_hba.conf"
# In its configuration file, so that --postgres-start brings back the same server.
cat >> "$pg_dir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1,$node_ip'
port = $pg_port
unix_socket_directories = '$pg_dir'
max_connections = 200
timezone = 'UTC'
fsync = off
EOF
postgres_start
owner_password=$(openssl rand -hex 16)
app_password=$(openssl rand -hex 16)
runuser -u postgres -- "$bin/psql" -h "$pg_dir" -p "$pg_port" -U postgres -d postgres -qX -v ON_ERROR_STOP=1 \
  -v owner_password="$owner_password" -v app_password="$app_password" < e2e/manifests/queen-roles.sql \
  || die "creating the roles (e2e/manifests/queen-roles.sql)"

# --- Fixtures and the chart ----------------------------------------------------------------------------
phase "fixtures (volumes, postgres Service, Secrets)"
for i in $(seq 0 $((volume_count - 1))); do mkdir -p "$W/volumes/pv-$i"; done
"$helm" install queen-e2e-node-fixtures e2e/node-fixtures --namespace "$namespace" --create-namespace \
  --set "node.name=$node_name" --set "node.ip=$node_ip" --set "volumes.dir=$W/volumes" \
  --set "volumes.count=$volume_count" --set "postgres.port=$pg_port" \
  --set "postgres.owner.password=$owner_password" --set "postgres.runtime.password=$app_password"

phase "chart (helm install, brokers Ready)"
"$helm" install "$release" charts/queen --namespace "$namespace" -f e2e/values-kind.yaml -f e2e/values-node.yaml \
  --set "broker.image.tag=${version}" --set "operator.image.tag=${version}" --wait --timeout 5m
# Helm does not wait for an OnDelete StatefulSet. Brokers serve once the operator's schema Job has
# run (until then they exit and restart with back-off), so allow for a few back-off rounds.
sts="/apis/apps/v1/namespaces/$namespace/statefulsets/${release}-broker"
replicas=$(api "$sts" | json 'd["spec"]["replicas"]')
deadline=$((SECONDS + 600))
until [ "$(api "$sts" | json 'd["status"].get("readyReplicas", 0)')" = "$replicas" ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "brokers not Ready after 10 minutes"
  sleep 3
done
api "/api/v1/namespaces/$namespace/pods" | json '"\n".join("%-28s %-10s restarts=%s" % (p["metadata"]["name"], p["status"]["phase"], sum(c.get("restartCount", 0) for c in p["status"].get("containerStatuses", []))) for p in d["items"])' \
  | sed 's/^/[e2e-node]   /' >&2

# --- Scenarios -----------------------------------------------------------------------------------
phase "scenarios (mvn -f e2e/pom.xml -Pe2e verify)"
rm -rf e2e/target/failsafe-reports
mvn -B -f e2e/pom.xml -Pe2e verify \
  "-Dqueen.e2e.namespace=$namespace" "-Dqueen.e2e.release=$release" \
  "-Dqueen.e2e.brokerUrl=http://$node_ip:30632" "-Dqueen.e2e.upgradeTag=$upgrade_tag" \
  "-Dqueen.e2e.databaseStop=$root/e2e/run-node.sh --postgres-stop" \
  "-Dqueen.e2e.databaseStart=$root/e2e/run-node.sh --postgres-start" \
  ${QUEEN_E2E_TESTS:+"-Dit.test=$QUEEN_E2E_TESTS"}
phase_end
grep -h -o 'testcase name="[^"]*" classname="[^"]*" time="[^"]*"' e2e/target/failsafe-reports/TEST-*.xml 2>/dev/null \
  | sed -E 's/testcase name="([^"]*)" classname="io.queen.e2e.([^"]*)" time="([^"]*)"/\2.\1: \3 s/' \
  | sed 's/^/[e2e-node] scenario /' >&2 || true
