"""A job that restarts when one of its pods is evicted (policy PodEvicted -> RestartJob).

Run: python examples/restart_on_eviction.py
"""

import pathlib

import volcanic

HERE = pathlib.Path(__file__).parent
JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: resilient}
spec:
  minAvailable: 2
  maxRetry: 3
  policies:
  - {event: PodEvicted, action: RestartJob}
  tasks:
  - name: worker
    replicas: 2
    template:
      metadata: {annotations: {volcanic/sim-duration: 10m}}
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: "1"}}}]
"""


def phase(c: volcanic.Cluster) -> str:
    return c.get("Job", "resilient")["status"]["state"]["phase"]


def main() -> None:
    c = volcanic.Cluster()
    c.apply((HERE / "cluster.yaml").read_text())
    c.apply(JOB)
    c.run(60)
    print(f"t={c.now:g}s  {phase(c)}, pods on {sorted(p['spec']['nodeName'] for p in c.list('Pod'))}")
    c.evict("resilient-worker-0")
    print(f"t={c.now:g}s  evicted resilient-worker-0")
    c.run(5)
    job = c.get("Job", "resilient")
    print(f"t={c.now:g}s  {phase(c)}, retryCount {job['status'].get('retryCount')}, "
          f"version {job['status'].get('version')}")
    c.run_until(lambda c: phase(c) in ("Completed", "Failed"), limit=3600)
    print(f"t={c.now:g}s  {phase(c)}")
    for e in c.list("Event"):
        if e["involvedObject"]["kind"] == "Job":
            print(f"  event {e['reason']}: {e['message']}")


if __name__ == "__main__":
    main()
