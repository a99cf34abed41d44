#!/bin/bash
# Runs one of Volcano v1.15.1's e2e suites, unmodified, against volcanic on a fresh dev cluster.
#
#   tools/volcano-e2e/run.sh SUITE [extra test-binary flags, e.g. --ginkgo.focus=REGEX]
#   (after tools/volcano-e2e/build.sh; SCHED_EXTRA: more flags for `volcanic scheduler`)
#   SUITE: jobp jobseq schedulingbase schedulingaction admission schedulinggates vcctl
#          hypernode gangevict
#
# What it sets up, after Volcano's hack/run-e2e-kind.sh and Makefile (e2e-test-<suite>):
#   - volcanic's dev cluster (etcd, kube-apiserver, kube-controller-manager, kwok) in its own
#     directory on free ports, kwok started with volcanic's stages plus kwok-command-stage.yaml
#     (plays the containers' `sleep N [&& exit K]`);
#   - 4 untainted kwok worker nodes of 4 CPU / 16Gi / 110 pods and a tainted control-plane node
#     of the same shape (Volcano's CI: kind, 1 control plane and 4 workers on a 4-CPU runner).
#     The suites skip tainted nodes when they size their Jobs, but the scheduler counts the
#     control plane in the cluster's total: without it overcommit (factor 1.2) refuses to
#     enqueue the preemptor of "preemption only works in the same queue" (16 of 16 CPUs used,
#     8 asked for, 3.2 idle), in Volcano as in volcanic;
#   - for hypernode 8, for gangevict 4 more kwok nodes kwok-node-<i> of KWOK_NODE_CPU (8) /
#     KWOK_NODE_MEMORY (8Gi) / 110 pods, label type=kwok, role agent, tainted
#     kwok.x-k8s.io/node=fake:NoSchedule (CI's E2E_TYPE=HYPERNODE / GANGEVICT, install-kwok-nodes
#     in run-e2e-kind.sh); the suites build their HyperNode trees over them, and gangevict
#     replaces the whole volcano-scheduler-ci.conf key of the ConfigMap below with its own conf.
#     Each holds a pod kindnet-kwok-node-<i> (kube-system, 100m CPU / 50Mi): kind's kindnet
#     DaemonSet tolerates every taint and so runs on CI's kwok nodes too, and hypernode's
#     "Case 1.2", "2.1" and "3.1" size their filler pods around it (without it volcanic
#     places the Jobs on nodes those specs mean to be full). KINDNET_PODS=0 leaves them out;
#   - `volcanic install`, then those of Volcano's CRDs volcanic does not install (HyperNode,
#     JobFlow, JobTemplate, CronJob), from Volcano's config/crd;
#   - ConfigMap volcano-system/integration-scheduler-configmap, key volcano-scheduler-ci.conf,
#     holding Volcano's CI scheduler conf (installer/helm/chart/volcano/config/); a loop copies
#     it to the file volcanic's scheduler reads (--scheduler-conf, re-read on change), as the
#     kubelet does for Volcano's mounted ConfigMap (the preemption/reclaim specs edit it);
#   - volcanic's scheduler, controller-manager and webhook as separate processes (Volcano CI's
#     three Deployments); the webhook registers CI's admission paths (chart value
#     enabled_admissions for ADMISSION_WEBHOOK) that volcanic serves, others are logged as
#     dropped. VOLCANIC_MODE=up runs `volcanic up` instead (chart-default admissions).
#   - FEATURE_GATES (default: SchedulingGatesQueueAdmission=true for schedulinggates, as
#     Volcano's Makefile) goes to the scheduler and the webhook.
# Then runs ~/.cache/volcanic/volcano-e2e/SUITE.test with KUBECONFIG and VC_BIN (vcctl) set,
# ginkgo verbose, serially (CI runs jobp with 4 ginkgo procs), skipping the k8s framework's
# [sig-*] specs linked into schedulingbase/schedulingaction, as CI does.
#
# Output: ~/.cache/volcanic/volcano-e2e/logs/SUITE.log (ginkgo -v), SUITE.json (ginkgo report),
# SUITE.summary (passed/failed spec names); component and cluster logs stay in
# ~/.cache/volcanic/volcano-e2e/runs/SUITE-<time>/. Everything started is stopped on exit.
set -u

SUITE=${1:?usage: run.sh SUITE [test flags...]}
shift
ROOT=$(cd "$(dirname "$0")" && pwd)
BIN=${VOLCANO_E2E_BIN:-$HOME/.cache/volcanic/volcano-e2e}
MAIN=${VOLCANIC_REPO:-$(cd "$ROOT/../.." && pwd)}
VSRC=${VOLCANO_SRC:-$HOME/.cache/volcanic/volcano-src}
MODE=${VOLCANIC_MODE:-components}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-6h}
RUN=$BIN/runs/$SUITE-$(date +%Y%m%d-%H%M%S)
LOGS=$BIN/logs
LOG=$LOGS/$SUITE.log
REPORT=$LOGS/$SUITE.json
SUMMARY=$LOGS/$SUITE.summary
CLUSTER=$RUN/cluster
KUBECONFIG=$CLUSTER/admin.kubeconfig
KUBECTL=$HOME/.cache/volcanic/k8s/v1.34.4/bin/kubectl
KWOK_NODE_CPU=${KWOK_NODE_CPU:-8}
KWOK_NODE_MEMORY=${KWOK_NODE_MEMORY:-8Gi}
export PYTHONPATH=$MAIN/python PYTHONUNBUFFERED=1

case "$SUITE" in
  jobp|jobseq|schedulingbase|schedulingaction|admission|schedulinggates|vcctl|hypernode|gangevict) ;;
  *) echo "run.sh: unknown suite $SUITE" >&2; exit 2 ;;
esac
[ -x "$BIN/$SUITE.test" ] || { echo "run.sh: $BIN/$SUITE.test missing; run $ROOT/build.sh" >&2; exit 2; }
if [ -z "${FEATURE_GATES+x}" ]; then
  FEATURE_GATES=""
  [ "$SUITE" = schedulinggates ] && FEATURE_GATES="SchedulingGatesQueueAdmission=true"
fi

mkdir -p "$RUN" "$LOGS"
rm -f "$LOG" "$REPORT" "$SUMMARY"
PIDS=()
say() { echo "[run.sh $(date +%T)] $*" | tee -a "$RUN/run.log" >&2; }
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

cleanup() {
  say "tearing down"
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null
  done
  python3 "$ROOT/cluster.py" down "$CLUSTER" >>"$RUN/run.log" 2>&1
  say "done; logs in $RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until "$2" is in file "$1" (the process $3 still alive), at most $4 seconds.
wait_logged() {
  local file=$1 line=$2 pid=$3 limit=${4:-120} i
  for i in $(seq $((limit * 2))); do
    grep -qF "$line" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { say "process $pid exited; see $file"; tail -20 "$file" >&2; return 1; }
    sleep 0.5
  done
  say "no '$line' in $file after ${limit}s"; return 1
}

# 1. Dev cluster with the command-playing kwok stages.
STAGES=$RUN/kwok-stages.yaml
{ cat "$MAIN/python/volcanic/real/devcluster/kwok-stages.yaml"; echo "---"; cat "$ROOT/kwok-command-stage.yaml"; } >"$STAGES"
say "starting dev cluster in $CLUSTER"
python3 "$ROOT/cluster.py" up "$CLUSTER" "$STAGES" >>"$RUN/run.log" 2>&1 || { say "dev cluster failed"; tail -30 "$RUN/run.log" >&2; exit 1; }

# 2. Four untainted workers and a tainted control plane, shaped as Volcano CI's kind nodes,
#    and the suite's kwok nodes.
for name in control-plane worker-1 worker-2 worker-3 worker-4; do
  if [ "$name" = control-plane ]; then
    role='    node-role.kubernetes.io/control-plane: ""'
    taints='spec: {taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}'
  else
    role='' taints=''
  fi
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
$role
    type: kwok
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    beta.kubernetes.io/arch: amd64
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110", ephemeral-storage: 100Gi}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110", ephemeral-storage: 100Gi}
$taints
---
EOF
done | kc apply -f - >>"$RUN/run.log" 2>&1 || { say "creating nodes failed"; exit 1; }
# The suite's kwok nodes (run-e2e-kind.sh's create-kwok-node), for the suites CI gives them.
KWOK_NODES=0
case "$SUITE" in hypernode) KWOK_NODES=8 ;; gangevict) KWOK_NODES=4 ;; esac
if [ "$KWOK_NODES" -gt 0 ]; then
  for i in $(seq 0 $((KWOK_NODES - 1))); do
    cat <<EOF
apiVersion: v1
kind: Node
metadata:
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    beta.kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/role: agent
    node-role.kubernetes.io/agent: ""
    type: kwok
  name: kwok-node-$i
spec:
  taints:
  - effect: NoSchedule
    key: kwok.x-k8s.io/node
    value: fake
status:
  capacity: {cpu: "$KWOK_NODE_CPU", memory: $KWOK_NODE_MEMORY, pods: "110"}
  allocatable: {cpu: "$KWOK_NODE_CPU", memory: $KWOK_NODE_MEMORY, pods: "110"}
---
EOF
  done | kc apply -f - >>"$RUN/run.log" 2>&1 || { say "creating kwok nodes failed"; exit 1; }
  say "kwok nodes kwok-node-0..$((KWOK_NODES - 1)): $KWOK_NODE_CPU CPU / $KWOK_NODE_MEMORY each"
  # kind's kindnet DaemonSet tolerates every taint, so in CI each kwok node also holds a kindnet
  # pod requesting 100m CPU / 50Mi; the hypernode specs size their filler pods around it.
  if [ "${KINDNET_PODS:-1}" = 1 ]; then
    for i in $(seq 0 $((KWOK_NODES - 1))); do
      cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: kindnet-kwok-node-$i, namespace: kube-system, labels: {app: kindnet}}
spec:
  nodeName: kwok-node-$i
  tolerations: [{operator: Exists}]
  containers:
  - {name: kindnet-cni, image: kindnet, resources: {requests: {cpu: 100m, memory: 50Mi}}}
---
EOF
    done | kc apply -f - >>"$RUN/run.log" 2>&1 || { say "creating kindnet pods failed"; exit 1; }
  fi
fi
kc wait --for=condition=Ready node --all --timeout=120s >>"$RUN/run.log" 2>&1 || { say "nodes not Ready"; exit 1; }

# 3. volcanic install, Volcano's CRDs volcanic lacks, Volcano CI's scheduler ConfigMap.
python3 -m volcanic.cli.main install --kubeconfig "$KUBECONFIG" >>"$RUN/run.log" 2>&1 || { say "volcanic install failed"; exit 1; }
for crd in volcano/bases/topology.volcano.sh_hypernodes.yaml jobflow/bases/flow.volcano.sh_jobflows.yaml \
           jobflow/bases/flow.volcano.sh_jobtemplates.yaml volcano/bases/batch.volcano.sh_cronjobs.yaml; do
  name=$(basename "$crd" .yaml | sed 's/^\([^_]*\)_\(.*\)$/\2.\1/')
  if kc get crd "$name" >/dev/null 2>&1; then
    say "CRD $name: volcanic's"
  else
    kc create -f "$VSRC/config/crd/$crd" >>"$RUN/run.log" 2>&1 && say "CRD $name: Volcano's config/crd/$crd"
  fi
done
kc wait --for=condition=Established crd --all --timeout=60s >>"$RUN/run.log" 2>&1
# Kubernetes' garbage collector watches a new CRD's kind from its next discovery sync (every
# 30 s); until then a foreground delete of a Job or PodGroup hangs on its finalizer, and the
# suites' cleanup (each Job foreground-deleted, its namespace deleted meanwhile) finds the
# Jobs gone under it. Volcano's CI installs long before its first spec; wait for the sync.
kc create -f - >>"$RUN/run.log" 2>&1 <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: gc-probe, namespace: default}
spec: {minMember: 1}
EOF
kc delete podgroup gc-probe -n default --cascade=foreground --timeout=120s >>"$RUN/run.log" 2>&1 \
  || { say "the garbage collector never took PodGroups' foreground deletes"; exit 1; }
CIConf=$VSRC/installer/helm/chart/volcano/config/volcano-scheduler-ci.conf
kc create configmap integration-scheduler-configmap -n volcano-system \
  --from-file=volcano-scheduler-ci.conf="$CIConf" >>"$RUN/run.log" 2>&1 || { say "configmap failed"; exit 1; }
CONF=$RUN/volcano-scheduler.conf
cp "$CIConf" "$CONF"

# The ConfigMap -> file copy (kubelet's part for Volcano's mounted ConfigMap).
(
  while sleep 1; do
    if kc get configmap integration-scheduler-configmap -n volcano-system \
         -o go-template='{{index .data "volcano-scheduler-ci.conf"}}' >"$CONF.new" 2>/dev/null \
       && [ -s "$CONF.new" ] && ! cmp -s "$CONF.new" "$CONF"; then
      mv "$CONF.new" "$CONF"
      echo "[conf-sync $(date +%T.%N)] scheduler conf changed:" >>"$RUN/conf-sync.log"
      cat "$CONF" >>"$RUN/conf-sync.log"
    fi
  done
) &
PIDS+=($!)

# 4. volcanic's components.
read -r P_SCHED P_CM P_HOOK P_HOOKM < <(python3 "$ROOT/cluster.py" ports 4)
GATES=()
[ -n "$FEATURE_GATES" ] && GATES=(--feature-gates "$FEATURE_GATES")
start() {  # start NAME ARGS...: volcanic ARGS, output in $RUN/NAME.log
  local name=$1; shift
  python3 -m volcanic.cli.main "$@" --kubeconfig "$KUBECONFIG" >"$RUN/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_${name//-/_}=$!"
}
if [ "$MODE" = up ]; then
  start up up --scheduler-conf "$CONF" --metrics-address "127.0.0.1:$P_SCHED" \
    --webhook-url "https://127.0.0.1:$P_HOOK" "${GATES[@]}"
  wait_logged "$RUN/up.log" "scheduler: caches synced" "$PID_up" 180 || exit 1
  wait_logged "$RUN/up.log" "controllers started" "$PID_up" 180 || exit 1
  wait_logged "$RUN/up.log" "webhook: registered" "$PID_up" 180 || exit 1
else
  CI_ADMISSIONS=/pods/mutate,/queues/mutate,/podgroups/mutate,/jobs/mutate,/jobs/validate,/jobflows/validate,/pods/validate,/queues/validate,/podgroups/validate,/hypernodes/validate,/cronjobs/validate
  ADMISSIONS=$(python3 - "$CI_ADMISSIONS" <<'EOF'
import sys
from volcanic.real.manifests.webhooks import WEBHOOKS
paths = sys.argv[1].split(",")
dropped = [p for p in paths if p not in WEBHOOKS]
if dropped:
    print("volcanic serves no " + ", ".join(dropped) + "; not registered", file=sys.stderr)
print(",".join(p for p in paths if p in WEBHOOKS))
EOF
  ) 2>>"$RUN/run.log"
  [ -n "$ADMISSIONS" ] || { say "no admission paths (see $RUN/run.log)"; exit 1; }
  say "admission paths: $ADMISSIONS"
  start scheduler scheduler --scheduler-conf "$CONF" --metrics-address "127.0.0.1:$P_SCHED" "${GATES[@]}" ${SCHED_EXTRA:-}
  start controller-manager controller-manager --metrics-address "127.0.0.1:$P_CM"
  start webhook webhook --register --url "https://127.0.0.1:$P_HOOK" --listen "127.0.0.1:$P_HOOK" \
    --enabled-admission "$ADMISSIONS" --metrics-address "127.0.0.1:$P_HOOKM" "${GATES[@]}"
  wait_logged "$RUN/scheduler.log" "scheduler: caches synced" "$PID_scheduler" 180 || exit 1
  wait_logged "$RUN/controller-manager.log" "controllers started" "$PID_controller_manager" 180 || exit 1
  wait_logged "$RUN/webhook.log" "webhook: registered" "$PID_webhook" 180 || exit 1
fi
say "volcanic ($MODE) up; feature gates: ${FEATURE_GATES:-none}"

# 5. The suite.
SKIP=()
case "$SUITE" in schedulingbase|schedulingaction) SKIP=("--ginkgo.skip=\\[sig-.*\\]") ;; esac
say "running $SUITE.test; log $LOG"
start_s=$(date +%s)
(
  cd "$RUN" && exec env KUBECONFIG="$KUBECONFIG" VC_BIN="$BIN" ARTIFACTS_PATH="$RUN/artifacts" \
    "$BIN/$SUITE.test" -test.v -test.timeout=0 --ginkgo.v --ginkgo.no-color \
    --ginkgo.timeout="$SUITE_TIMEOUT" --ginkgo.json-report="$REPORT" "${SKIP[@]}" "$@"
) >"$LOG" 2>&1 &
TEST_PID=$!
PIDS+=($TEST_PID)
wait $TEST_PID
rc=$?
say "$SUITE.test exited $rc after $(( $(date +%s) - start_s ))s"
python3 "$ROOT/summarize.py" "$REPORT" "$SUITE" >"$SUMMARY" 2>&1
echo "exit code $rc; components' logs in $RUN" >>"$SUMMARY"
head -1 "$SUMMARY" >&2
exit $rc
