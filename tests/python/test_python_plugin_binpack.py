"""examples/binpack_plugin.py, Volcano's binpack (reference §4.6) as a Python plugin through
batch_node_order, decides exactly what the built-in binpack decides, with the same arguments;
and `volcanic bench --plugin ... --scorer ...` runs it (docs/benchmark.md)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

from builders import node, pod, podgroup
from pyplugin_helpers import NOW, decisions
import volcanic
from volcanic.bench import synthetic_cluster
from volcanic.bench.run import scorer_conf
from volcanic.scheduler.plugins import plugin_names

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_example():
    spec = importlib.util.spec_from_file_location("binpack_plugin_example", ROOT / "examples" / "binpack_plugin.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # registers "py-binpack"
    return module


example = load_example()


def with_arguments(scorer: str, arguments: dict) -> dict:
    """Volcano's default configuration with the scorer and its arguments beside nodeorder, so
    that binpack.weight matters against nodeorder's scores. (Two scores add up exactly the
    same in either order, so the Python plugin, a batch score added after the node-order
    scores, sums like the native one.)"""
    c = scorer_conf(scorer)
    for tier in c["tiers"]:
        for p in tier["plugins"]:
            if p["name"] == scorer:
                p["arguments"] = arguments
        if any(p["name"] == scorer for p in tier["plugins"]):
            tier["plugins"].append({"name": "nodeorder"})
    return c


def busy_cluster() -> list[dict]:
    """A synthetic cluster (four node shapes, one with GPUs; five task shapes, one with a GPU)
    with some pods of other schedulers already running, so nodes start unevenly used."""
    objs = synthetic_cluster(40, 400, seed=7)
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    for i, name in enumerate(nodes[::3]):
        p = pod(f"busy-{i}", None, cpu=f"{1 + i % 5}", memory=f"{1 + i % 7}Gi", ns="other", node_name=name,
                phase="Running")
        p["spec"]["schedulerName"] = "default-scheduler"
        objs.append(p)
    return objs


ARGUMENTS = [
    {},
    {"binpack.weight": 2, "binpack.cpu": 3, "binpack.memory": "0.5"},
    {"binpack.cpu": -4, "binpack.memory": 2, "binpack.resources": "nvidia.com/gpu",
     "binpack.resources.nvidia.com/gpu": 5},
    {"binpack.weight": 0},
]


def test_the_example_is_a_registered_plugin():
    assert issubclass(example.BinpackPlugin, volcanic.Plugin)
    assert example.BinpackPlugin.name == "py-binpack" and example.BinpackPlugin.node_local
    assert "py-binpack" in plugin_names()


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_python_binpack_decides_what_native_binpack_decides(arguments):
    objs = busy_cluster()
    native = volcanic.schedule(objs, with_arguments("binpack", arguments), now=NOW)
    python = volcanic.schedule(objs, with_arguments("py-binpack", arguments), now=NOW)
    assert len(native.binds) > 100
    assert decisions(python) == decisions(native)


def test_python_binpack_packs_onto_the_fuller_node():
    # Volcano's binpack case: the node the task fills most wins.
    objs = [node("n1", cpu="4", memory="8Gi"), node("n2", cpu="4", memory="8Gi"),
            pod("busy", None, cpu="2", memory="4Gi", ns="other", node_name="n2", phase="Running"),
            podgroup("pg"), pod("p", "pg")]
    objs[2]["spec"]["schedulerName"] = "default-scheduler"
    for scorer in ("binpack", "py-binpack"):
        assert volcanic.schedule(objs, scorer_conf(scorer), now=NOW).binds == {"ns/p": "n2"}


def test_scores_match_the_formula():
    plugin = example.BinpackPlugin({"binpack.cpu": 2})
    got = {}

    class Probe(volcanic.Plugin):
        name = "binpack-probe"

        def on_session_open(self, session):
            task = next(j for j in session.jobs).tasks[0]
            got["scores"] = plugin.batch_node_order(task, session.nodes)
    volcanic.register_plugin(Probe)
    objs = [node("n1", cpu="4", memory="8Gi"), node("n2", cpu="1", memory="8Gi"), podgroup("pg"),
            pod("p", "pg", cpu="2", memory="2Gi")]
    volcanic.schedule(objs, {"actions": "allocate", "tiers": [{"plugins": [{"name": "binpack-probe"}]}]}, now=NOW)
    # n1: (2000/4000 * 2 + 2Gi/8Gi * 1) / 3 * 100; n2 would overflow cpu: 0.
    assert got["scores"] == [(0.5 * 2 + 0.25 * 1) / 3 * 100, 0.0]


@pytest.mark.parametrize("arguments, message", [
    ({"binpack.wieght": 1}, 'plugin py-binpack: unknown argument "binpack.wieght"'),
    ({"binpack.cpu": "lots"}, "plugin py-binpack: argument binpack.cpu must be a finite number, got 'lots'"),
    ({"binpack.memory": "inf"}, "plugin py-binpack: argument binpack.memory must be a finite number, got 'inf'"),
])
def test_bad_arguments_are_config_errors(arguments, message):
    with pytest.raises(volcanic.ConfigError) as e:
        volcanic.Scheduler(with_arguments("py-binpack", arguments))
    assert message in str(e.value)


def test_bench_runs_the_python_plugin_from_a_file():
    def bench(*args):
        r = subprocess.run([sys.executable, "-m", "volcanic.cli.main", "bench", "--preset", "small", "--json", *args],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    python = bench("--plugin", "examples/binpack_plugin.py", "--scorer", "py-binpack")
    native = bench("--scorer", "binpack")
    assert python["scorer"] == "py-binpack" and native["scorer"] == "binpack"
    assert python["placed"] == native["placed"] > 0
