"""GPU fragmentation (the FGD paper's definition), the fgd and random plugins, and `fill`
mode (docs/simulation.md; Weng et al., USENIX ATC'23; the authors' simulator
hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go)."""

from __future__ import annotations

import csv
import json
import os

import pytest

from builders import node, pod
from test_deviceshare import NOW, gpu_node, gpu_pod
import volcanic
from volcanic.cli.main import main
from volcanic.sim.fill import fill
from volcanic.sim.fragmentation import GpuNode, Shape, fragmentation, typical_shapes
from volcanic.sim.openb import DEFAULT_PODS_CSV, NODES_CSV, find_openb, read_openb
from volcanic.sim.policies import policy_conf
from volcanic.sim.trace import Trace


def test_fragmentation_counts_what_each_shape_cannot_use():
    n = GpuNode("T4", cpu_left=8000, uuids=["a", "b"], free=[100, 30])
    shapes = [Shape(1000, 1, 50, (), 0.5),          # fits card a: card b's 30 is too small for it
              Shape(0, 0, 0, (), 0.25),             # asks no GPU: all 130 free is lost to it
              Shape(16000, 1, 10, (), 0.125),       # not enough CPU: all 130
              Shape(1000, 1, 10, ("V100",), 0.125)]  # another model: all 130
    assert fragmentation(n, shapes) == pytest.approx(0.5 * 30 + 0.5 * 130)
    assert fragmentation(GpuNode("T4", 8000, ["a"], [100]), [Shape(1000, 2, 100, (), 1.0)]) == 100  # one card of two


def test_typical_shapes_keep_the_most_popular_covering_95_percent():
    a, b, c, d, e = (Shape(i, 1, 100) for i in range(5))
    shapes = typical_shapes([a] * 10 + [b] * 5 + [c] * 3 + [d] + [e])
    assert [(s.cpu, s.weight) for s in shapes] == [(0, 10 / 19), (1, 5 / 19), (2, 3 / 19), (3, 1 / 19)]


def fgd_conf(shapes: list[dict]) -> dict:
    return {"actions": "enqueue, allocate",
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                      {"plugins": [{"name": "predicates"},
                                   {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True}},
                                   {"name": "fgd", "arguments": {"fgd.shapes": shapes}}]}]}


def test_fgd_keeps_cpu_pods_off_gpu_nodes_they_would_strand():
    # With 2 CPUs left, the GPU node's card serves no pod of the workload (each wants 4 CPUs).
    objs = [gpu_node("a-gpu", cards=1), node("b-cpu", cpu="32", memory="64Gi"), pod("p", None, cpu="30", memory="1Gi")]
    without = fgd_conf([])
    without["tiers"][1]["plugins"].pop()
    # the tie goes to the first name
    assert volcanic.schedule(objs, without, now=NOW, bare_pods_as_groups=True).binds["ns/p"] == "a-gpu"
    d = volcanic.schedule(objs, fgd_conf([{"cpu": "4", "gpus": 1, "cores": 100, "weight": 1}]), now=NOW,
                          bare_pods_as_groups=True)
    assert d.binds["ns/p"] == "b-cpu"


def test_fgd_puts_a_share_on_the_card_it_fragments_least():
    # Card 0 has 40 cores left, card 1 all 100. A 40-core pod on card 0 uses up what no
    # 50-core pod could use; on card 1 it would leave 60, still usable: fgd takes card 0,
    # where the default card order (last first) would take card 1.
    held = gpu_pod("held", cores=60, memory=100, node_name="n1", phase="Running",
                   annotations={"volcano.sh/vgpu-ids-new": "GPU-n1-0,NVIDIA,100,60:"})
    objs = [gpu_node("n1"), held, gpu_pod("a", cores=40, memory=100)]
    d = volcanic.schedule(objs, fgd_conf([{"cpu": "1", "gpus": 1, "cores": 50, "weight": 1}]), now=NOW,
                          bare_pods_as_groups=True)
    assert d.bind_annotations["ns/a"]["volcano.sh/vgpu-ids-new"] == "GPU-n1-0,NVIDIA,100,40:"


@pytest.mark.parametrize("shapes, message", [
    ("many", "fgd.shapes must be a list"),
    ([{"cpu": "x"}], r"fgd.shapes\[0\].cpu: must be a CPU quantity"),
    ([{"cores": 101}], r"fgd.shapes\[0\].cores: must be an integer in \[0, 100\]"),
    ([{"gpu": 1}], r"fgd.shapes\[0\].gpu: unknown"),
])
def test_fgd_refuses_bad_shapes_naming_them(shapes, message):
    with pytest.raises(volcanic.ConfigError, match=message):
        volcanic.schedule([], fgd_conf(shapes), now=NOW)


def random_conf(seed: int) -> dict:
    return {"actions": "allocate", "tiers": [{"plugins": [{"name": "predicates"},
                                                          {"name": "random", "arguments": {"random.seed": seed}}]}]}


def test_random_fit_is_the_same_for_a_seed_and_differs_between_seeds():
    objs = [node(f"n{i}") for i in range(8)] + [pod(f"p{i}", None, cpu="1") for i in range(8)]
    placements = [volcanic.schedule(objs, random_conf(seed), now=NOW, bare_pods_as_groups=True).binds
                  for seed in (1, 1, 2)]
    assert placements[0] == placements[1] != placements[2]
    assert len(set(placements[0].values())) > 1  # not one node for all: no packing


NODES = "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(f"n{i},32000,65536,{2 + i % 3},{'T4' if i % 2 else 'V100'}\n"
                                                          for i in range(6))
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n" + "".join(
    f"p{i},{(i % 5 + 1) * 2000},4096,{1 if i % 4 else 2},{[1000, 300, 500, 250][i % 4] if i % 4 else 1000},"
    f"{'T4' if i % 7 == 0 else ''}\n" for i in range(40))


def _trace(tmp_path) -> Trace:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    return read_openb(str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))


@pytest.mark.parametrize("policy", ["volcano", "binpack", "random", "fgd"])
def test_fill_places_a_batch_exactly_as_one_session_per_pod(tmp_path, policy):
    trace = _trace(tmp_path)
    one_by_one = fill(trace, policy_conf(policy, trace), seed=5, batch=1)
    batched = fill(trace, policy_conf(policy, trace), seed=5, batch=16)
    assert batched.curve == one_by_one.curve and batched.sessions < one_by_one.sessions
    assert one_by_one.curve[-1]["arrived"] >= 1.3 > one_by_one.curve[-2]["arrived"]  # until 130%
    assert 0 < batched.pods_scheduled < batched.pods_total  # the last pods found no room


def test_fill_is_deterministic_for_a_seed(tmp_path):
    trace = _trace(tmp_path)
    runs = [fill(trace, policy_conf("fgd", trace), seed=s).curve for s in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]


def test_simulate_fill_writes_curves_summaries_and_the_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    _trace(tmp_path)
    out, png = tmp_path / "out", tmp_path / "fill.png"
    assert main(["simulate", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv"),
                 "--mode", "fill", "--policy", "binpack", "--policy", "fgd", "--seed", "3", "--json",
                 "--out", str(out), "--plot", str(png)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["policy"] for r in lines] == ["binpack", "fgd"]
    for r in lines:
        assert r["mode"] == "fill" and r["pods_scheduled"] + r["pods_unschedulable"] == r["pods_total"]
        assert 0 <= r["gpu_fragmentation"] <= 1 and 0 <= r["gpu_unallocated_at_full"] <= 1
        with open(out / r["policy"] / "curve.csv", newline="") as f:
            curve = list(csv.DictReader(f))
        assert len(curve) == r["pods_total"] and list(curve[0]) == ["pods", "arrived", "allocated", "fragmented"]
        assert json.loads((out / r["policy"] / "summary.json").read_text()) == r
    assert png.stat().st_size > 10_000


OPENB = find_openb()


@pytest.mark.skipif(OPENB is None, reason="the openb trace (../shared/traces) is not on this machine")
def test_fgd_leaves_less_gpu_unallocated_than_best_fit_and_random_on_the_trace():
    """The paper's finding on a sample of the default trace (a sixth of its GPU nodes, and
    the pods in trace order): at the arrived workload of 100% of the GPU capacity."""
    full = read_openb(os.path.join(OPENB, NODES_CSV), os.path.join(OPENB, DEFAULT_PODS_CSV))
    gpu_nodes = [n for n in full.nodes if n["metadata"]["annotations"]][::6]
    trace = Trace("sample", gpu_nodes, full.arrivals)
    unallocated = {p: 1 - fill(trace, policy_conf(p, trace), until=1.0).at(1.0)["allocated"]
                   for p in ("random", "binpack", "fgd")}
    assert unallocated["fgd"] < unallocated["binpack"] < unallocated["random"], unallocated
