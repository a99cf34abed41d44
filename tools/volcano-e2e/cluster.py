"""Dev-cluster helper for run.sh: `up DIR STAGES`, `down DIR`, `ports N`.

Uses volcanic's own DevCluster (PYTHONPATH must hold volcanic's python/ directory), so the
cluster is the one the project's e2e suite runs on; only the kwok stages file differs."""

from pathlib import Path
import sys

from volcanic.real.devcluster.cluster import DevCluster
from volcanic.real.devcluster.ports import free_ports


def main(argv):
    cmd = argv[0]
    if cmd == "up":
        DevCluster(argv[1]).up(nodes=0, stages=Path(argv[2]), log=lambda s: print(s, file=sys.stderr))
    elif cmd == "down":
        DevCluster(argv[1]).down(purge=True)
    elif cmd == "ports":
        print(" ".join(str(p) for p in free_ports(int(argv[1]))))
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
