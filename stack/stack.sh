#!/usr/bin/env bash
# The local stack: real servers on loopback for development and tests.
#   up      build what is missing, start every component that is not running (a no-op when all are up)
#   down    stop every component (state under $SLIPWAY_HOME is kept; `down --purge` removes it)
#   status  one line per component
#   ensure C...  start only the named components if they are not running (they must already be built)
#   restart C... stop and start the named components (kwok: forget nodes whose deletion it missed)
#   env     shell exports for KUBECONFIG, TEMPORAL_ADDRESS and the AWS endpoint
# Components: etcd, kube-apiserver (RBAC + audit log), kube-controller-manager, kube-scheduler,
# kwok (fake kubelets), temporal (CLI dev server + Web UI, SQLite), moto (AWS), aws-node-sync (glue).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
. "$HERE/lib.sh"

ETCD_PORT="${SLIPWAY_ETCD_PORT:-2379}"
APISERVER_PORT="${SLIPWAY_APISERVER_PORT:-6443}"
KCM_PORT="${SLIPWAY_KCM_PORT:-10257}"
SCHEDULER_PORT="${SLIPWAY_SCHEDULER_PORT:-10259}"
KWOK_PORT="${SLIPWAY_KWOK_PORT:-10247}"
TEMPORAL_PORT="${SLIPWAY_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${SLIPWAY_TEMPORAL_UI_PORT:-8233}"
MOTO_PORT="${SLIPWAY_MOTO_PORT:-5000}"
# The audit log rotates at this size (MB), keeping this many old files; tests read across rotations
# (stack/audit-log.ts). A small size makes rotations frequent, to try that reader on the real apiserver.
AUDIT_LOG_MAXSIZE_MB="${SLIPWAY_AUDIT_LOG_MAXSIZE_MB:-200}"
AUDIT_LOG_MAXBACKUP="${SLIPWAY_AUDIT_LOG_MAXBACKUP:-2}"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok temporal moto aws-node-sync)
# Search attributes the workflows use (workflows/search-attributes.ts is the source; a test checks both agree).
SEARCH_ATTRIBUTES=(SlipwayNodeGroup=Keyword SlipwayNodes=KeywordList SlipwayPhase=Keyword SlipwayObject=Keyword)

token() { cat "$PKI/admin.token"; }

# --- process bookkeeping -------------------------------------------------------------------------
pid_of() { [ -f "$RUN/$1.pid" ] && cat "$RUN/$1.pid" || true; }
alive() {
  local pid; pid=$(pid_of "$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  local cmd; cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ "$cmd" == *"$2"* ]]  # the pid was not reused by something else
}
launch() { # name, command... ; detached from this shell so it outlives the caller
  local name="$1"; shift
  echo "---- start $(date -Is)" >> "$LOGS/$name.log"
  setsid nohup "$@" >> "$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
}
wait_for() { # name, seconds, probe command...
  local name="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      log "$name did not become healthy within ${secs}s; last log lines:"; tail -n 30 "$LOGS/$name.log" >&2; return 1
    fi
    sleep 0.5
  done
}

# --- health probes -------------------------------------------------------------------------------
probe_etcd() { curl -sf "http://127.0.0.1:$ETCD_PORT/health"; }
probe_apiserver() { curl -sf --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(token)" "https://127.0.0.1:$APISERVER_PORT/readyz"; }
probe_kcm() { curl -skf "https://127.0.0.1:$KCM_PORT/healthz"; }
probe_scheduler() { curl -skf "https://127.0.0.1:$SCHEDULER_PORT/healthz"; }
probe_kwok() { curl -sf "http://127.0.0.1:$KWOK_PORT/healthz"; }
probe_temporal() { "$BIN/temporal" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT" && curl -sf "http://127.0.0.1:$TEMPORAL_UI_PORT/" ; }
probe_moto() { curl -sf "http://127.0.0.1:$MOTO_PORT/moto-api/"; }

# --- one-time setup ------------------------------------------------------------------------------
ensure_pki() {
  [ -f "$PKI/admin.token" ] && return
  log "generating PKI and admin credentials in $PKI"
  mkdir -p "$PKI"; ( cd "$PKI"
    openssl genrsa -out ca.key 2048 2>/dev/null
    openssl req -x509 -new -key ca.key -subj "/CN=slipway-local-ca" -days 3650 -out ca.crt 2>/dev/null
    openssl genrsa -out apiserver.key 2048 2>/dev/null
    openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' > san.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile san.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n' > admin.token
    echo "$(cat admin.token),admin,admin,\"system:masters\"" > tokens.csv )
}
write_kubeconfig() {
  cat > "$KUBECONFIG_FILE" <<KCFG
apiVersion: v1
kind: Config
clusters: [{name: slipway-local, cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$PKI/ca.crt"}}]
users: [{name: admin, user: {token: "$(token)"}}]
contexts: [{name: slipway-local, context: {cluster: slipway-local, user: admin}}]
current-context: slipway-local
KCFG
}
kwok_stages() {
  # kwok's own node stages (from the module it was built from) plus our pod stages.
  local src; src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
  { cat "$src/node/fast/node-initialize.yaml"; echo '---'; cat "$src/node/heartbeat/node-heartbeat.yaml"; echo '---'
    cat "$HERE/kwok/pod-stages.yaml"; } > "$SLIPWAY_HOME/kwok-stages.yaml"
}

# --- components ----------------------------------------------------------------------------------
start_etcd() {
  launch etcd "$BIN/etcd" --name=slipway --data-dir="$DATA/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$((ETCD_PORT + 1))" --initial-advertise-peer-urls="http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster="slipway=http://127.0.0.1:$((ETCD_PORT + 1))" --unsafe-no-fsync=true --quota-backend-bytes=4294967296
  wait_for etcd 30 probe_etcd
}
start_kube-apiserver() {
  launch kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
    --cert-dir="$DATA/apiserver-certs" --token-auth-file="$PKI/tokens.csv" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true \
    --audit-policy-file="$HERE/kube/audit-policy.yaml" --audit-log-path="$LOGS/audit.log" \
    --audit-log-format=json --audit-log-maxsize="$AUDIT_LOG_MAXSIZE_MB" --audit-log-maxbackup="$AUDIT_LOG_MAXBACKUP"
  wait_for kube-apiserver 90 probe_apiserver
}
start_kube-controller-manager() {
  launch kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false --controllers='*' \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --kube-api-qps=200 --kube-api-burst=400 --concurrent-deployment-syncs=10 --concurrent-replicaset-syncs=10
  wait_for kube-controller-manager 60 probe_kcm
}
start_kube-scheduler() {
  launch kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false
  wait_for kube-scheduler 60 probe_scheduler
}
start_kwok() {
  kwok_stages
  launch kwok "$BIN/kwok" --kubeconfig="$KUBECONFIG_FILE" --config="$SLIPWAY_HOME/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --manage-nodes-with-label-selector= --manage-single-node= \
    --node-lease-duration-seconds=40 --cidr=10.0.0.1/16 --node-ip=10.0.0.1 \
    --server-address="127.0.0.1:$KWOK_PORT"
  wait_for kwok 30 probe_kwok
}
start_temporal() {
  local sa=() a; for a in "${SEARCH_ATTRIBUTES[@]}"; do sa+=(--search-attribute "$a"); done
  launch temporal "$BIN/temporal" server start-dev --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$DATA/temporal.sqlite" --sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=OFF \
    --namespace default --log-level warn "${sa[@]}"
  wait_for temporal 60 probe_temporal
}
start_moto() {
  # MOTO_ALLOW_NONEXISTENT_REGION is not needed: we stay in us-east-1. Moto's request recorder
  # (off until a test starts it through /moto-api/recorder/) writes here: the AWS side's audit log.
  launch moto env MOTO_RECORDER_FILEPATH="$LOGS/moto-recording.jsonl" "$VENV/bin/moto_server" -H 127.0.0.1 -p "$MOTO_PORT"
  wait_for moto 30 probe_moto
}
start_aws-node-sync() {
  [ -f "$REPO/dist/stack/aws/node-sync.js" ] || (cd "$REPO" && npm run -s build:dev)
  KUBECONFIG="$KUBECONFIG_FILE" AWS_ENDPOINT_URL="http://127.0.0.1:$MOTO_PORT" AWS_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
    launch aws-node-sync node "$REPO/dist/stack/aws/node-sync.js"
  sleep 1; alive aws-node-sync node-sync.js || { tail -n 30 "$LOGS/aws-node-sync.log" >&2; return 1; }
}

# name -> the word its command line contains, and its health probe
match_of() { case "$1" in aws-node-sync) echo node-sync.js ;; moto) echo moto_server ;; temporal) echo start-dev ;; *) echo "$1" ;; esac; }
probe_of() {
  case "$1" in etcd) echo probe_etcd ;; kube-apiserver) echo probe_apiserver ;; kube-controller-manager) echo probe_kcm ;;
    kube-scheduler) echo probe_scheduler ;; kwok) echo probe_kwok ;; temporal) echo probe_temporal ;; moto) echo probe_moto ;;
    *) echo true ;; esac
}
healthy() { alive "$1" "$(match_of "$1")" && $(probe_of "$1") >/dev/null 2>&1; }

ensure() {
  local name="$1"
  if healthy "$name"; then echo "  $name: running (pid $(pid_of "$name"))"; return; fi
  if alive "$name" "$(match_of "$name")"; then
    # Alive but not answering: give it a moment (it may be starting), then replace it.
    if wait_for "$name" 20 "$(probe_of "$name")" 2>/dev/null; then echo "  $name: running (pid $(pid_of "$name"))"; return; fi
    log "$name is alive but unhealthy; restarting it"; stop_one "$name"
  fi
  "start_$name"; echo "  $name: started (pid $(pid_of "$name"))"
}

stop_one() {
  local name="$1" pid; pid=$(pid_of "$name")
  if [ -n "$pid" ] && alive "$name" "$(match_of "$name")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
}

print_endpoints() {
  cat <<EOT
Slipway local stack is up (state and logs in $SLIPWAY_HOME):
  Kubernetes API    https://127.0.0.1:$APISERVER_PORT   KUBECONFIG=$KUBECONFIG_FILE
  Audit log         $LOGS/audit.log
  Temporal          127.0.0.1:$TEMPORAL_PORT (namespace default)
  Temporal Web UI   http://127.0.0.1:$TEMPORAL_UI_PORT
  AWS (moto)        http://127.0.0.1:$MOTO_PORT   (region us-east-1, keys testing/testing)
Load it into a shell with:  eval "\$(bash stack/stack.sh env)"
EOT
}

cmd_up() {
  mkdir -p "$RUN" "$LOGS" "$DATA"
  bash "$HERE/build.sh" all
  ensure_pki; write_kubeconfig
  local c; for c in "${COMPONENTS[@]}"; do ensure "$c"; done
  print_endpoints
}
cmd_down() {
  local i; for ((i=${#COMPONENTS[@]}-1; i>=0; i--)); do stop_one "${COMPONENTS[$i]}"; echo "  ${COMPONENTS[$i]}: stopped"; done
  if [ "${1:-}" = "--purge" ]; then rm -rf "$DATA" "$LOGS" "$RUN" "$PKI" "$KUBECONFIG_FILE"; echo "  state removed"; fi
}
cmd_status() {
  local c rc=0; for c in "${COMPONENTS[@]}"; do
    if healthy "$c"; then echo "  $c: running (pid $(pid_of "$c"))"; else echo "  $c: down"; rc=1; fi
  done; return $rc
}
cmd_recover() {
  # After a control-plane outage (the apiserver stopped): bring the cluster to where a real one
  # would be once its apiserver is back. kwok is restarted (it lists nodes and pods afresh and its
  # heartbeats land at once; its stage pod-ready-again turns Ready the running pods left Ready=False
  # while their node's heartbeats could not land), and kube-controller-manager too (fresh informer
  # caches, as a leader change would give). Then check: every node kwok manages Ready and every
  # running pod on them Ready, within 90 s; exit 1 naming what is not.
  ensure kube-apiserver >/dev/null
  stop_one kwok; ensure kwok >/dev/null
  stop_one kube-controller-manager; ensure kube-controller-manager >/dev/null
  local i out
  for i in $(seq 1 90); do
    out=$(not_ready) && { echo "  cluster recovered: every kwok node and its running pods Ready"; return 0; }
    sleep 1
  done
  echo "stack.sh recover: still not Ready after 90 s: $out" >&2; return 1
}
not_ready() { # prints what is not Ready among kwok's nodes and their running pods; false when something is
  local api="https://127.0.0.1:$APISERVER_PORT" auth=(--cacert "$PKI/ca.crt" -H "Authorization: Bearer $(token)")
  { curl -sf "${auth[@]}" "$api/api/v1/nodes"; echo; curl -sf "${auth[@]}" "$api/api/v1/pods?fieldSelector=status.phase=Running"; } | python3 -c '
import json, sys
text = sys.stdin.read(); d = json.JSONDecoder()
nodes, end = d.raw_decode(text); pods, _ = d.raw_decode(text, end + 1)
ready = lambda o: any(c["type"] == "Ready" and c["status"] == "True" for c in o.get("status", {}).get("conditions", []))
kwok = {n["metadata"]["name"] for n in nodes["items"] if "kwok.x-k8s.io/node" in n["metadata"].get("annotations", {}) and not n["metadata"].get("deletionTimestamp")}
bad = [f"node {n}" for n in sorted(kwok) if not ready(next(x for x in nodes["items"] if x["metadata"]["name"] == n))]
key = lambda p: p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
bad += ["pod " + key(p) for p in pods["items"] if p["spec"].get("nodeName") in kwok and not p["metadata"].get("deletionTimestamp") and not ready(p)]
print(", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else ""))
sys.exit(1 if bad else 0)'
}
cmd_env() {
  cat <<EOT
export KUBECONFIG="$KUBECONFIG_FILE"
export TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
export TEMPORAL_NAMESPACE=default
export AWS_ENDPOINT_URL="http://127.0.0.1:$MOTO_PORT"
export AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
export SLIPWAY_AUDIT_LOG="$LOGS/audit.log"
EOT
}

case "${1:-}" in
  up) cmd_up ;;
  ensure) shift; mkdir -p "$RUN" "$LOGS" "$DATA"; ensure_pki; write_kubeconfig; for c in "$@"; do ensure "$c"; done ;;
  recover) cmd_recover ;;
  check) out=$(not_ready) && echo "  every kwok node and its running pods Ready" || { echo "not Ready: $out" >&2; exit 1; } ;;
  stop) shift; for c in "$@"; do stop_one "$c"; echo "  $c: stopped"; done ;;
  restart) shift; mkdir -p "$RUN" "$LOGS" "$DATA"; ensure_pki; write_kubeconfig; for c in "$@"; do stop_one "$c"; ensure "$c"; done ;;
  down) shift; cmd_down "${1:-}" ;; status) cmd_status ;; env) cmd_env ;;
  *) echo "usage: stack.sh up|ensure COMPONENT...|stop COMPONENT...|recover|check|restart COMPONENT...|down [--purge]|status|env" >&2; exit 2 ;;
esac
