#!/usr/bin/env bash
# The Kind end-to-end suite, for a machine with Docker:
#   builds the broker and operator images (bin/images), creates a Kind cluster, loads the images,
#   installs PostgreSQL (e2e/manifests/postgres.yaml) and the chart (charts/queen with
#   e2e/values-kind.yaml), runs the JUnit scenarios (e2e/pom.xml, profile e2e), dumps the cluster's
#   state into e2e/target/e2e-state/ when anything fails, and deletes the cluster.
#
# Needs docker (with a running engine), kind, kubectl, helm, Maven and a JDK 21+.
# Environment:
#   QUEEN_E2E_CLUSTER         Kind cluster name (default queen-e2e)
#   QUEEN_E2E_KEEP_CLUSTER=1  keep the cluster afterwards, for a look around (kind delete cluster --name ...)
#   KIND_NODE_IMAGE           node image for `kind create cluster --image` (default: kind's own)
#   QUEEN_E2E_SKIP_WITHOUT_DOCKER=1  exit 0 (skipped) instead of failing when no Docker engine answers
# Host port 30632 must be free: the broker Service is reached there (e2e/kind-config.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."

cluster=${QUEEN_E2E_CLUSTER:-queen-e2e}
namespace=queen-e2e
release=queen
state_dir=e2e/target/e2e-state
kubeconfig=e2e/target/kubeconfig

# --- Preflight ------------------------------------------------------------------------------------
# Without Docker the suite cannot run, and a silent exit 0 would read as a pass: fail unless the
# caller opted out explicitly.
no_docker() {
  if [ "${QUEEN_E2E_SKIP_WITHOUT_DOCKER:-}" = "1" ]; then
    echo "e2e: Kind suite SKIPPED (QUEEN_E2E_SKIP_WITHOUT_DOCKER=1): $1"
    exit 0
  fi
  echo "e2e: Kind suite cannot run: $1. Set QUEEN_E2E_SKIP_WITHOUT_DOCKER=1 to skip it on purpose." >&2
  exit 1
}
if ! command -v docker >/dev/null 2>&1; then
  no_docker "docker is not installed"
fi
if ! docker info >/dev/null 2>&1; then
  no_docker "no Docker engine answers (docker info failed)"
fi
missing=0
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "e2e: $1 is missing. $2" >&2
    missing=1
  fi
}
need kind "Install it: https://kind.sigs.k8s.io/docs/user/quick-start/#installation (or: go install sigs.k8s.io/kind@latest)"
need kubectl "Install it: https://kubernetes.io/docs/tasks/tools/#kubectl"
need helm "Install it: https://helm.sh/docs/intro/install/"
need mvn "Install Maven 3.8+ (Debian/Ubuntu: apt-get install maven)"
if [ "$missing" -ne 0 ]; then
  exit 1
fi
. bin/java-env

# --- Images ---------------------------------------------------------------------------------------
version=$(bin/images --version)
upgrade_tag="${version}-e2e-upgrade"
bin/images
# The upgrade scenario needs a second tag: the same broker under a new name is a new pod template,
# so a full schema Job + rollout.
docker tag "queen-broker:${version}" "queen-broker:${upgrade_tag}"

# --- Cluster, with state dump and deletion on the way out ------------------------------------------
mkdir -p "$(dirname "$kubeconfig")"
export KUBECONFIG="$PWD/$kubeconfig"

dump_state() {
  echo "e2e: dumping cluster state into $state_dir"
  rm -rf "$state_dir"
  mkdir -p "$state_dir/logs"
  kubectl get nodes -o wide > "$state_dir/nodes.txt" 2>&1 || true
  kubectl get all,queues,tenants,jobs,pdb,pvc,leases,events -A -o wide > "$state_dir/get-all.txt" 2>&1 || true
  kubectl -n "$namespace" get statefulsets,pods,jobs,queues,tenants -o yaml > "$state_dir/objects.yaml" 2>&1 || true
  kubectl -n "$namespace" describe statefulsets,pods,jobs,queues,tenants > "$state_dir/describe.txt" 2>&1 || true
  kubectl -n "$namespace" get events --sort-by=.lastTimestamp > "$state_dir/events.txt" 2>&1 || true
  for pod in $(kubectl -n "$namespace" get pods -o name 2>/dev/null); do
    name=${pod#pod/}
    kubectl -n "$namespace" logs "$pod" --all-containers > "$state_dir/logs/$name.log" 2>&1 || true
    kubectl -n "$namespace" logs "$pod" --all-containers --previous > "$state_dir/logs/$name.previous.log" 2>/dev/null || true
  done
  helm -n "$namespace" status "$release" > "$state_dir/helm-status.txt" 2>&1 || true
  helm -n "$namespace" get values --all "$release" > "$state_dir/helm-values.yaml" 2>&1 || true
  kind export logs "$state_dir/kind-logs" --name "$cluster" >/dev/null 2>&1 || true
}

finish() {
  rc=$?
  trap - EXIT
  if [ "$rc" -ne 0 ]; then
    dump_state
  fi
  if [ "${QUEEN_E2E_KEEP_CLUSTER:-}" = "1" ]; then
    echo "e2e: keeping cluster $cluster (KUBECONFIG=$KUBECONFIG)"
  else
    kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
  fi
  if [ "$rc" -eq 0 ]; then
    echo "e2e: Kind suite passed"
  else
    echo "e2e: Kind suite FAILED (exit $rc); state in $state_dir"
  fi
  exit "$rc"
}

kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
trap finish EXIT
kind create cluster --name "$cluster" --config e2e/kind-config.yaml --kubeconfig "$KUBECONFIG" --wait 180s \
  ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"}
images=("queen-broker:${version}" "queen-broker:${upgrade_tag}" "queen-operator:${version}")
# With Docker's containerd image store `kind load docker-image` fails ("content digest ... not
# found"): the save it runs names every platform of the image's index, and the node's import wants
# them all. An archive of the engine's own platform alone loads with either store.
if ! kind load docker-image --name "$cluster" "${images[@]}"; then
  echo "e2e: kind load docker-image failed; loading a single-platform docker save archive instead"
  archive=e2e/target/images.tar
  platform=$(docker version -f '{{.Server.Os}}/{{.Server.Arch}}')
  docker save --platform "$platform" -o "$archive" "${images[@]}"
  kind load image-archive --name "$cluster" "$archive"
  rm -f "$archive"
fi

# --- PostgreSQL ----------------------------------------------------------------------------------
kubectl create namespace "$namespace"
# The init script and the roles it creates (queen-roles.sql, shared with e2e/run-node.sh). Named
# .psql in the pod so that the image's entrypoint runs only the .sh, which passes the passwords.
kubectl -n "$namespace" create configmap postgres-init \
  --from-file=10-queen-roles.sh=e2e/manifests/postgres-init.sh --from-file=queen-roles.psql=e2e/manifests/queen-roles.sql
kubectl -n "$namespace" apply -f e2e/manifests/postgres.yaml
kubectl -n "$namespace" rollout status statefulset/postgres --timeout=300s

# --- The chart -----------------------------------------------------------------------------------
helm install "$release" charts/queen --namespace "$namespace" -f e2e/values-kind.yaml \
  --set "broker.image.tag=${version}" --set "operator.image.tag=${version}" --wait --timeout 5m

# Helm does not wait for an OnDelete StatefulSet. Brokers serve once the operator's schema Job has
# run (until then they exit and restart with back-off), so allow for a few back-off rounds.
echo "e2e: waiting for the brokers"
replicas=$(kubectl -n "$namespace" get statefulset "${release}-broker" -o jsonpath='{.spec.replicas}')
deadline=$((SECONDS + 600))
until [ "$(kubectl -n "$namespace" get statefulset "${release}-broker" -o jsonpath='{.status.readyReplicas}')" = "$replicas" ]; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "e2e: brokers not Ready after 10 minutes" >&2
    exit 1
  fi
  sleep 5
done
kubectl -n "$namespace" get pods -o wide

# --- Scenarios -----------------------------------------------------------------------------------
mvn -B -f e2e/pom.xml -Pe2e verify \
  "-Dqueen.e2e.namespace=$namespace" "-Dqueen.e2e.release=$release" \
  "-Dqueen.e2e.brokerUrl=http://127.0.0.1:30632" "-Dqueen.e2e.upgradeTag=$upgrade_tag" \
  "-Dqueen.e2e.databaseStop=kubectl -n $namespace scale statefulset/postgres --replicas=0 && kubectl -n $namespace wait --for=delete pod/postgres-0 --timeout=180s" \
  "-Dqueen.e2e.databaseStart=kubectl -n $namespace scale statefulset/postgres --replicas=1 && kubectl -n $namespace rollout status statefulset/postgres --timeout=300s"
