"""deviceshare's vGPU cards on a real API server: the cards the scheduler chose reach the pod
through its Binding's annotations (merged by the API server), and later sessions count them
from there (tests/python/test_deviceshare.py has the rules in the embedded cluster)."""

from __future__ import annotations

from volcanic.real.devcluster.cluster import KWOK_TOLERATION, kwok_node

DEVICESHARE = "  - name: deviceshare\n    arguments: {deviceshare.VGPUEnable: true}\n"


def gpu_pod(name: str, namespace: str, node: str, cores: int) -> dict:
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": str(cores), "volcano.sh/vgpu-memory": "1000"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION],
                     "nodeSelector": {"kubernetes.io/hostname": node},
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "1", **limits}, "limits": limits}}]}}


def test_vgpu_cards_go_on_the_pod_and_free_when_it_goes(env, up, namespace):
    conf = up.conf.read_text()
    up.conf.write_text(conf.replace("  - name: predicates\n", "  - name: predicates\n" + DEVICESHARE))
    node = f"gpu-{namespace}"[:60]
    gpu = kwok_node(node)
    extra = {"volcano.sh/vgpu-number": "20", "volcano.sh/vgpu-cores": "200", "volcano.sh/vgpu-memory": "32000"}
    for field in ("allocatable", "capacity"):
        gpu["status"][field].update(extra)
    gpu["metadata"]["annotations"]["volcano.sh/node-vgpu-register"] = "".join(
        f"GPU-{node}-{i},10,16000,NVIDIA-T4,true,hami-core:" for i in range(2))
    get = lambda name: env.store.get("Pod", name, namespace) or {}
    bound = lambda name: get(name).get("spec", {}).get("nodeName") == node
    try:
        env.wait_logged(up.proc, "reloaded")
        env.apply(gpu)
        env.apply(gpu_pod("a", namespace, node, 60), namespace=namespace)
        assert env.wait(lambda: bound("a"), timeout=30), get("a")
        annotations = get("a")["metadata"]["annotations"]
        assert annotations["volcano.sh/vgpu-ids-new"] == f"GPU-{node}-1,NVIDIA,1000,60:"  # the last card first
        assert annotations["volcano.sh/vgpu-node"] == node and annotations["volcano.sh/bind-phase"] == "allocating"
        env.apply(gpu_pod("b", namespace, node, 60), namespace=namespace)
        assert env.wait(lambda: bound("b"), timeout=30), get("b")
        assert get("b")["metadata"]["annotations"]["volcano.sh/vgpu-ids-new"].startswith(f"GPU-{node}-0,")
        # 180 of the node's 200 cores, but no card has 60 left: c waits for a card.
        env.apply(gpu_pod("c", namespace, node, 60), namespace=namespace)
        env.wait(lambda: False, timeout=3)
        assert not bound("c")
        env.kubectl("delete", "pod", "a", "-n", namespace, "--grace-period=0", "--force")
        assert env.wait(lambda: bound("c"), timeout=30), get("c")
        assert get("c")["metadata"]["annotations"]["volcano.sh/vgpu-ids-new"].startswith(f"GPU-{node}-1,")
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "node", node, "--wait=false", check=False)
