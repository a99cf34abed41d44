"""Trace replay (volcanic/sim): the openb reader, the replay driver, its metrics and
`volcanic simulate` (docs/simulation.md)."""

from __future__ import annotations

import csv
import json
import os
import pathlib
import re

import pytest

from test_scheduler_cycles import _every_period
import volcanic
from volcanic.cli.main import main
from volcanic.errors import InvalidObject
from volcanic.sim.jobs import read_jobs
from volcanic.sim.metrics import gpu_timeline, summary
from volcanic.sim.openb import find_openb, read_openb
from volcanic.sim.policies import policy_conf
from volcanic.sim.replay import replay

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16384,2,T4\nn1,4000,8192,0,\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "p0,4000,4096,1,1000,,LS,Running,0,100,0\n"
        "p1,2000,4096,1,500,T4|P100,LS,Running,10,40,10\n"
        "p2,4000,1024,0,0,,BE,Running,10,70,10\n"
        "p3,6000,1024,1,300,,LS,Running,20,50,20\n")  # waits for CPU: p0 holds 4 of n0's 8 cores


def _write(tmp_path, nodes: str = NODES, pods: str = PODS) -> tuple[str, str]:
    (tmp_path / "nodes.csv").write_text(nodes)
    (tmp_path / "pods.csv").write_text(pods)
    return str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv")


def test_openb_maps_nodes_and_pods(tmp_path):
    trace = read_openb(*_write(tmp_path))
    n0 = trace.nodes[0]
    # A GPU is a vGPU card: 100 sharers at most, 100 cores, a nominal 16,000 MiB.
    assert n0["status"]["allocatable"] == {"cpu": "8000m", "memory": "16384Mi", "pods": "110",
                                           "volcano.sh/vgpu-number": "200", "volcano.sh/vgpu-cores": "200",
                                           "volcano.sh/vgpu-memory": "32000"}
    assert n0["metadata"]["annotations"] == {"volcano.sh/node-vgpu-register":
                                             "GPU-n0-0,100,16000,NVIDIA-T4,true,hami-core:"
                                             "GPU-n0-1,100,16000,NVIDIA-T4,true,hami-core:"}
    assert n0["metadata"]["labels"] == {"gpu-model": "T4"} and trace.nodes[1]["metadata"]["labels"] == {}
    assert trace.nodes[1]["status"]["allocatable"] == {"cpu": "4000m", "memory": "8192Mi", "pods": "110"}
    a = {a.objects[0]["metadata"]["name"]: a for a in trace.arrivals}
    p1 = a["p1"].objects[0]
    assert a["p1"].time == 10 and a["p1"].gpus == 0.5
    # Half a GPU: one card, half its cores and memory.
    assert p1["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "2000m", "memory": "4096Mi", "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": "50",
        "volcano.sh/vgpu-memory": "8000"}
    assert a["p0"].objects[0]["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-cores"] == "100"
    assert p1["metadata"]["annotations"] == {"volcanic/sim-duration": "30"}
    terms = p1["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [{"key": "gpu-model", "operator": "In",
                                                                  "values": ["T4", "P100"]}]
    assert a["p2"].objects[0]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "4000m",
                                                                                   "memory": "1024Mi"}
    assert [x.time for x in trace.arrivals] == [0, 10, 10, 20]  # ties keep the file's order
    assert [x.objects[0]["metadata"]["name"] for x in trace.arrivals][1:3] == ["p1", "p2"]


@pytest.mark.parametrize("pods, message", [
    ("name,cpu_milli,memory_mib,num_gpu\np,1,1,1\n", "missing columns gpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,x,1,0,0\n", "pods.csv line 2: cpu_milli: must be a whole number, got 'x'"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,2,500\n", "pods.csv line 2: gpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np,1,1,0,0,5,4\n",
     "pods.csv line 2: deletion_time: before creation_time"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1,1,0,0\n", "pods.csv line 2: name: is required"),
])
def test_openb_refuses_bad_rows_naming_line_and_column(tmp_path, pods, message):
    with pytest.raises(InvalidObject, match=message.replace("|", r"\|")):
        read_openb(*_write(tmp_path, pods=pods))


def test_replay_runs_each_pod_for_its_lifetime_and_records_it(tmp_path):
    run = replay(read_openb(*_write(tmp_path)), policy_conf("volcano"))
    r = run.pods
    assert {k: v.phase for k, v in r.items()} == {f"default/p{i}": "Succeeded" for i in range(4)}
    # Sessions at period boundaries: a pod created at t is bound at the boundary after it
    # and Running then (no start delay); it ends its lifetime later.
    assert (r["default/p0"].arrival, r["default/p0"].start, r["default/p0"].end) == (0, 1, 101)
    assert (r["default/p1"].start, r["default/p1"].end, r["default/p1"].node) == (11, 41, "n0")
    assert r["default/p2"].node == "n1"  # n0 has 4 cores left after p0 and p1 takes 2 of them
    # p3 needs 6 cores: only n0 has them, once p1 (t=41) and p0 (t=101) have gone. The
    # session at 101 comes after p0's exit at that instant (docs/cluster.md, Time).
    assert (r["default/p3"].arrival, r["default/p3"].start, r["default/p3"].node) == (20, 101, "n0")
    assert run.cluster.list("Pod") == [] and run.cluster.list("PodGroup") == []  # ended pods are deleted
    m = summary(run, "volcano")
    assert m["pods_total"] == m["pods_scheduled"] == m["pods_succeeded"] == 4 and m["pods_unschedulable"] == 0
    assert (m["wait_p50_s"], m["wait_p99_s"]) == (1, 81)
    assert m["simulated_s"] == 131  # p3's 30 s from t=101
    # GPU: p0 1000 for 100 s, p1 500 for 30 s, p3 300 for 30 s, of 2000 for 131 s.
    assert m["gpu_allocated_share"] == pytest.approx((100_000 + 15_000 + 9_000) / (2000 * 131), abs=1e-6)
    assert m["utilization"]["gpu"] == m["gpu_allocated_share"]
    assert not any(name.startswith("volcano.sh/") for name in m["utilization"])
    # Cards: p0 a whole one; p1 half of the other, where p3's 30% joins it (each card alone).
    assert r["default/p0"].gpu_cards == "GPU-n0-1,NVIDIA,16000,100:"
    assert r["default/p1"].gpu_cards == "GPU-n0-0,NVIDIA,8000,50:"
    assert r["default/p3"].gpu_cards.startswith("GPU-n0-")
    # The GPU timeline, from the cards the pods held (n0's two cards; n1 has none).
    timeline = gpu_timeline(run)
    assert [(row["time"], row["allocated"]) for row in timeline] == [
        (0, 0), (1, 0.5), (11, 0.75), (41, 0.5), (71, 0.5), (101, 0.15), (131, 0)]  # 71: p2 (no GPU) ends
    idle = timeline[0]["fragmented"]  # an idle cluster: the CPU-only shape (p2, 1/4) can use no GPU
    assert idle == pytest.approx(0.25)
    assert m["gpu_fragmentation"] == pytest.approx(sum(
        a["fragmented"] * (b["time"] - a["time"]) for a, b in zip(timeline, timeline[1:])) / 131, abs=1e-6)
    assert m["utilization"]["cpu"] == pytest.approx((4 * 100 + 2 * 30 + 4 * 60 + 6 * 30) / (12 * 131), abs=1e-6)


def test_replay_decides_as_a_loop_woken_every_period(tmp_path):
    """Issue 13: the replay's lazy cycles give the decisions, and their times, of a session
    every period."""
    trace = read_openb(*_write(tmp_path))

    def played(every_period: bool) -> tuple[dict, list]:
        c = volcanic.Cluster()
        if every_period:
            _every_period(c)
        binds: list = []
        c.scheduler.on_session = lambda d, *_: binds.append((c.now, sorted(d.binds.items())) if d.binds else None)
        run = replay(trace, cluster=c)
        return {k: (v.start, v.end, v.node) for k, v in run.pods.items()}, [b for b in binds if b]
    assert played(every_period=False) == played(every_period=True)


def test_simulate_cli_prints_one_json_line_per_configuration(tmp_path, capsys):
    nodes, pods = _write(tmp_path)
    conf = tmp_path / "mine.conf"
    conf.write_text("actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n")
    assert main(["simulate", "--nodes", nodes, "--pods", pods, "--policy", "volcano", "--policy", "binpack",
                 "--conf", str(conf), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["policy"] for r in lines] == ["volcano", "binpack", "mine.conf"]
    assert all(r["pods_succeeded"] == 4 and r["sessions"] > 0 for r in lines)


def test_simulate_cli_names_an_unknown_policy(tmp_path, capsys):
    nodes, pods = _write(tmp_path)
    assert main(["simulate", "--nodes", nodes, "--pods", pods, "--policy", "fastest"]) == 1
    assert "policy 'fastest': unknown; known policies: volcano, binpack, random, fgd" in capsys.readouterr().err


OPENB = find_openb() or next((str(p) for p in [pathlib.Path(__file__).parents[3] / "shared" / "traces" /
                                                 "alibaba-gpu-v2023"] if p.is_dir()), None)


@pytest.mark.skipif(OPENB is None, reason="the openb trace (../shared/traces) is not on this machine")
def test_a_sample_of_the_real_trace_runs_to_the_end(tmp_path):
    root = OPENB
    with open(os.path.join(root, "openb_pod_list_default.csv"), encoding="utf-8") as f:
        sample = "".join(f.readlines()[:301])
    (tmp_path / "pods.csv").write_text(sample)
    run = replay(read_openb(os.path.join(root, "openb_node_list_all_node.csv"), str(tmp_path / "pods.csv")))
    assert sum(r.phase == "Succeeded" for r in run.pods.values()) == 300 and not run.cluster.errors


def test_simulate_out_writes_a_row_per_pod_and_the_summary(tmp_path, capsys):
    nodes, pods = _write(tmp_path)
    out = tmp_path / "out"
    assert main(["simulate", "--nodes", nodes, "--pods", pods, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads((out / "volcano" / "summary.json").read_text()) == printed
    with open(out / "volcano" / "pods.csv", newline="") as f:
        rows = {r["pod"]: r for r in csv.DictReader(f)}
    assert rows["default/p3"]["arrival"] == "20.0" and rows["default/p3"]["wait"] == "81.0"
    assert rows["default/p3"]["node"] == "n0" and rows["default/p3"]["req_volcano.sh/vgpu-cores"] == "30.0"
    assert rows["default/p2"]["req_volcano.sh/vgpu-cores"] == "0.0"
    gpu = (out / "volcano" / "gpu.csv").read_text().splitlines()
    assert gpu[0] == "time,allocated,fragmented" and gpu[2].startswith("1.0,0.5,")


def test_simulate_plot_draws_every_configuration(tmp_path, capsys):
    image = pytest.importorskip("matplotlib.image")
    nodes, pods = _write(tmp_path)
    png = tmp_path / "runs.png"
    assert main(["simulate", "--nodes", nodes, "--pods", pods, "--policy", "volcano", "--policy", "fgd",
                 "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("GPU fragmented") == 2
    assert image.imread(str(png)).shape[:2] == (720, 1680)  # 2 runs x (utilization, GPU) at 120 dpi


def test_replay_and_cluster_as_dataframes(tmp_path):
    arrivals: list = []
    run = replay(read_openb(*_write(tmp_path)), progress=arrivals.append)
    assert arrivals == [1, 1, 1, 1]  # told of each arrival
    pods = run.frame()
    assert list(pods.loc["default/p3", ["arrival", "start", "wait", "node"]]) == [20.0, 101.0, 81.0, "n0"]
    assert pods["wait"].max() == 81.0
    nodes = run.cluster.frame("Node")
    assert list(nodes["metadata.name"]) == ["n0", "n1"] and (nodes["created"] == 0).all()
    assert nodes.loc[0, "status.allocatable.volcano.sh/vgpu-cores"] == "200"
    assert run.cluster.frame("Pod").empty  # every pod has ended and been deleted


JOB_NODES = "name,cpu,memory,gpu,labels\nn0,8,16Gi,2,zone=a;rack=1\nn1,8,16Gi,,\n"
SETUP = """apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec: {weight: 1}
"""


def test_jobs_format_jsonl_runs_volcano_jobs_with_gangs_and_queues(tmp_path):
    """docs/simulation.md "Bring your own trace": a job is a Volcano Job (its pods arrive with
    it, run `duration` once started), deleted once finished; its queue comes from the setup."""
    (tmp_path / "setup.yaml").write_text(SETUP)
    (tmp_path / "jobs.jsonl").write_text(
        '{"name": "a", "arrival": 0, "duration": 100, "queue": "team", '
        '"tasks": [{"name": "ps", "replicas": 1, "requests": {"cpu": "2"}}, '
        '{"name": "worker", "replicas": 2, "requests": {"cpu": "2", "memory": "1Gi"}}]}\n'
        '\n{"name": "b", "arrival": 10, "duration": 50, "queue": "team", '
        '"tasks": [{"replicas": 2, "requests": {"cpu": "3"}}]}\n')
    trace = read_jobs(str(tmp_path / "setup.yaml"), str(tmp_path / "jobs.jsonl"))
    assert trace.pods == 5 and [o["kind"] for o in trace.setup] == ["Queue"]
    run = replay(trace)
    r = run.pods
    assert sorted(r) == ["default/a-ps-0", "default/a-worker-0", "default/a-worker-1", "default/b-task-0",
                         "default/b-task-1"]
    assert all(p.phase == "Succeeded" for p in r.values()) and not run.cluster.errors
    assert r["default/a-ps-0"].arrival == 0 and r["default/a-ps-0"].end - r["default/a-ps-0"].start == 100
    # b's gang of 2 x 3 CPUs waits for a (6 of the node's 8 CPUs) to end: both pods at once.
    assert r["default/b-task-0"].arrival == 10
    assert r["default/b-task-0"].start == r["default/b-task-1"].start > r["default/a-ps-0"].end
    assert run.cluster.list("Job") == [] and run.cluster.list("Pod") == []  # finished Jobs are deleted
    assert summary(run, "volcano")["pods_total"] == 5


def test_jobs_format_csv_and_node_csv(tmp_path):
    (tmp_path / "nodes.csv").write_text(JOB_NODES)
    (tmp_path / "jobs.csv").write_text("name,arrival,duration,replicas,cpu,memory,gpu,queue,priority,min_available\n"
                                       "j1,5,60,2,1,1Gi,1,,,1\nj0,0,30,1,500m,,,,,\n")
    trace = read_jobs(str(tmp_path / "nodes.csv"), str(tmp_path / "jobs.csv"))
    assert trace.nodes[0]["metadata"]["labels"] == {"zone": "a", "rack": "1"}
    assert trace.nodes[0]["status"]["allocatable"] == {"pods": "110", "cpu": "8", "memory": "16Gi",
                                                       "nvidia.com/gpu": "2"}
    assert [a.objects[0]["metadata"]["name"] for a in trace.arrivals] == ["j0", "j1"]
    j1 = trace.arrivals[1]
    assert (j1.pods, j1.gpus, j1.objects[0]["spec"]["minAvailable"]) == (2, 2.0, 1)
    m = summary(replay(trace), "volcano")
    assert (m["pods_total"], m["pods_succeeded"]) == (3, 3)


@pytest.mark.parametrize("line, message", [
    ('{"name": "a", "arrival": 0, "duration": 1}', "jobs.jsonl line 1 (job a): tasks: must be a non-empty list"),
    ('{"name": "a", "arrival": -1, "duration": 1, "tasks": [{}]}', "arrival: must be >= 0"),
    ('{"name": "a", "arrival": 0, "duration": 1, "tasks": [{"requests": {"cpu": "x"}}]}',
     "tasks[0]: requests.cpu"),
    ('{"name": "a", "arrival": 0, "duration": 1, "gpus": 2, "tasks": [{}]}', "unknown field 'gpus'"),
    ('[1]', "jobs.jsonl line 1: must be a JSON object"),
    ('{"name": "a", "arrival": 0, "duration": 1, "tasks": [{"replicas": "two"}]}',
     "tasks[0]: replicas: must be a whole number"),
])
def test_jobs_format_refuses_bad_jobs_naming_line_and_field(tmp_path, line, message):
    (tmp_path / "nodes.csv").write_text(JOB_NODES)
    (tmp_path / "jobs.jsonl").write_text(line + "\n")
    with pytest.raises(InvalidObject, match=re.escape(message)):
        read_jobs(str(tmp_path / "nodes.csv"), str(tmp_path / "jobs.jsonl"))


def test_simulate_cli_reads_the_jobs_format(tmp_path, capsys):
    (tmp_path / "nodes.csv").write_text(JOB_NODES)
    (tmp_path / "jobs.csv").write_text("name,arrival,duration,replicas,cpu\nj,0,30,3,2\n")
    assert main(["simulate", "--format", "jobs", "--nodes", str(tmp_path / "nodes.csv"),
                 "--pods", str(tmp_path / "jobs.csv"), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["pods_total"], r["pods_succeeded"], r["trace"]) == (3, 3, "jobs.csv")
