"""deviceshare for NVIDIA vGPU: per-card fit, the card order of each policy, the binding's
annotations and the accounting of cards pods already hold (Volcano's
pkg/scheduler/api/devices/nvidia/vgpu/utils.go checkNodeGPUSharingPredicateAndScore,
device_info.go; reference §4.6 deviceshare)."""

from __future__ import annotations

import pytest

from builders import node, pod
import volcanic

NOW = 1_700_000_000.0


def conf(policy: str = "", weight: int = 0) -> dict:
    args = {"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": policy,
            "deviceshare.ScheduleWeight": weight}
    return {"actions": "enqueue, allocate",
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                      {"plugins": [{"name": "predicates"}, {"name": "deviceshare", "arguments": args}]}]}


def gpu_node(name: str, cards: int = 2, memory: int = 1000, number: int = 10, card_type: str = "NVIDIA-V100",
             **extra) -> dict:
    n = node(name, cpu="32", memory="64Gi", **{"volcano.sh/vgpu-number": str(cards * number),
                                                "volcano.sh/vgpu-cores": str(cards * 100),
                                                "volcano.sh/vgpu-memory": str(cards * memory)})
    register = "".join(f"GPU-{name}-{i},{number},{memory},{card_type},true,hami-core:" for i in range(cards))
    n["metadata"]["annotations"] = {"volcano.sh/node-vgpu-register": register, **extra}
    return n


def gpu_pod(name: str, number: int = 1, cores: int | None = None, memory: int | None = None, **meta) -> dict:
    p = pod(name, None, cpu="1", memory="1Gi", **meta)
    limits = {"volcano.sh/vgpu-number": str(number)}
    if cores is not None:
        limits["volcano.sh/vgpu-cores"] = str(cores)
    if memory is not None:
        limits["volcano.sh/vgpu-memory"] = str(memory)
    p["spec"]["containers"][0]["resources"]["limits"] = limits
    return p


def cards(d: volcanic.Decisions, key: str) -> str:
    return d.bind_annotations[key]["volcano.sh/vgpu-ids-new"]


def test_default_policy_takes_the_last_card_first_and_cores_limit_sharing() -> None:
    # Default order: card index descending; 60 + 60 cores do not fit one card.
    objs = [gpu_node("n1"), gpu_pod("a", cores=60, memory=100, creationTimestamp="2024-01-01T00:00:00Z"),
            gpu_pod("b", cores=60, memory=100, creationTimestamp="2024-01-01T00:00:01Z"),
            gpu_pod("c", cores=60, memory=100, creationTimestamp="2024-01-01T00:00:02Z")]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert cards(d, "ns/a") == "GPU-n1-1,NVIDIA,100,60:"
    assert cards(d, "ns/b") == "GPU-n1-0,NVIDIA,100,60:"
    assert "ns/c" not in d.binds
    assert "hami-vgpuDeviceSharing error" in d.unschedulable["ns/c"]
    ann = d.bind_annotations["ns/a"]
    assert ann["volcano.sh/devices-to-allocate"] == ann["volcano.sh/vgpu-ids-new"]
    assert ann["volcano.sh/vgpu-node"] == "n1" and ann["volcano.sh/bind-phase"] == "allocating"
    assert ann["volcano.sh/vgpu-time"] == str(int(NOW))


def test_binpack_packs_the_fullest_card_and_scores_nodes_by_memory_used() -> None:
    # Binpack orders cards by memory used, most first, and scores a node by the memory its
    # chosen cards would then use: the second pod joins the first one's card and node.
    objs = [gpu_node("n1"), gpu_node("n2"),
            gpu_pod("a", cores=20, memory=300, creationTimestamp="2024-01-01T00:00:00Z"),
            gpu_pod("b", cores=20, memory=300, creationTimestamp="2024-01-01T00:00:01Z")]
    d = volcanic.schedule(objs, conf("binpack", weight=10), now=NOW, bare_pods_as_groups=True)
    first = d.binds["ns/a"]
    assert d.binds["ns/b"] == first
    assert cards(d, "ns/a").split(",")[0] == cards(d, "ns/b").split(",")[0]


def test_spread_spreads_over_cards_by_sharers() -> None:
    objs = [gpu_node("n1"), gpu_pod("a", cores=20, memory=100, creationTimestamp="2024-01-01T00:00:00Z"),
            gpu_pod("b", cores=20, memory=100, creationTimestamp="2024-01-01T00:00:01Z")]
    d = volcanic.schedule(objs, conf("spread"), now=NOW, bare_pods_as_groups=True)
    # Spread: fewest sharers first, index ascending among equals.
    assert cards(d, "ns/a").startswith("GPU-n1-0,")
    assert cards(d, "ns/b").startswith("GPU-n1-1,")


def test_a_hundred_cores_needs_a_card_alone() -> None:
    objs = [gpu_node("n1", cards=1), gpu_pod("a", cores=10, memory=100, creationTimestamp="2024-01-01T00:00:00Z"),
            gpu_pod("b", cores=100, memory=100, creationTimestamp="2024-01-01T00:00:01Z")]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert "ns/a" in d.binds and "ns/b" not in d.binds


def test_no_memory_asked_takes_the_whole_card() -> None:
    # Without vgpu-memory a container takes 100% of each card's memory.
    objs = [gpu_node("n1", cards=1, memory=1000), gpu_pod("a", creationTimestamp="2024-01-01T00:00:00Z"),
            gpu_pod("b", cores=0, memory=1, creationTimestamp="2024-01-01T00:00:01Z")]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert cards(d, "ns/a") == "GPU-n1-0,NVIDIA,1000,0:"
    assert "ns/b" not in d.binds


def test_several_cards_per_container_are_distinct() -> None:
    objs = [gpu_node("n1", cards=2), gpu_pod("a", number=2, cores=10, memory=100),
            gpu_pod("b", number=3, cores=10, memory=100)]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert cards(d, "ns/a") == "GPU-n1-1,NVIDIA,100,10:GPU-n1-0,NVIDIA,100,10:"
    assert "ns/b" not in d.binds  # three cards asked of a node with two


def test_cards_pods_hold_are_counted_from_their_annotation() -> None:
    held = gpu_pod("held", cores=90, memory=100, node_name="n1", phase="Running",
                   annotations={"volcano.sh/vgpu-ids-new": "GPU-n1-1,NVIDIA,100,90:"})
    objs = [gpu_node("n1"), held, gpu_pod("a", cores=20, memory=100)]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert cards(d, "ns/a").startswith("GPU-n1-0,")  # card 1 has 10 cores left


def test_gpu_type_annotations_choose_cards() -> None:
    objs = [gpu_node("v", card_type="NVIDIA-V100"), gpu_node("t", card_type="NVIDIA-T4"),
            gpu_pod("a", cores=10, memory=10, annotations={"nvidia.com/use-gputype": "t4"}),
            gpu_pod("b", cores=10, memory=10, annotations={"nvidia.com/nouse-gputype": "T4,A100"})]
    d = volcanic.schedule(objs, conf(), now=NOW, bare_pods_as_groups=True)
    assert d.binds["ns/a"] == "t" and d.binds["ns/b"] == "v"


def test_a_node_without_vgpu_allocatable_registers_no_cards() -> None:
    # Volcano ignores the registration unless the node has all three resources (device_info.go).
    bare = gpu_node("n1")
    del bare["status"]["allocatable"]["volcano.sh/vgpu-cores"]
    d = volcanic.schedule([bare, gpu_pod("a", cores=10, memory=10)], conf(), now=NOW)
    assert "ns/a" not in d.binds


def test_without_vgpu_enabled_cards_are_not_accounted() -> None:
    # Only the node sums count then: three pods of 60 cores fit two cards' 200.
    objs = [gpu_node("n1"), *(gpu_pod(name, cores=60, memory=100) for name in "abc")]
    off = conf()
    off["tiers"][1]["plugins"][1]["arguments"] = {}
    d = volcanic.schedule(objs, off, now=NOW, bare_pods_as_groups=True)
    assert set(d.binds) == {"ns/a", "ns/b", "ns/c"} and d.bind_annotations == {}


def test_the_embedded_cluster_writes_the_cards_on_the_pod_and_counts_them_later() -> None:
    c = volcanic.Cluster(conf())
    c.api.create(gpu_node("n1", cards=1))
    c.api.create(gpu_pod("a", cores=70, memory=100))
    c.run(5)
    a = c.api.get("Pod", "a", "ns")
    assert a["metadata"]["annotations"]["volcano.sh/vgpu-ids-new"] == "GPU-n1-0,NVIDIA,100,70:"
    c.api.create(gpu_pod("b", cores=70, memory=100))  # a later session: card 0 has 30 cores left
    c.api.create(gpu_pod("d", cores=30, memory=100))
    c.run(5)
    assert c.api.get("Pod", "b", "ns")["spec"].get("nodeName") is None
    assert c.api.get("Pod", "d", "ns")["spec"]["nodeName"] == "n1"


def test_bad_vgpu_quantity_names_the_field() -> None:
    p = gpu_pod("a")
    p["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-cores"] = "lots"
    with pytest.raises(ValueError, match=r"Pod ns/a.*spec\.containers\[0\]\.resources\.limits\.volcano\.sh/vgpu-cores"):
        volcanic.schedule([gpu_node("n1"), p], conf(), now=NOW)


def test_unsupported_device_kinds_are_refused() -> None:
    bad = conf()
    bad["tiers"][1]["plugins"][1]["arguments"]["deviceshare.GPUSharingEnable"] = True
    with pytest.raises(volcanic.ConfigError, match="deviceshare.GPUSharingEnable"):
        volcanic.schedule([], bad, now=NOW)
