"""The benchmark: synthetic clusters from a seed, timed through the public API."""

from volcanic.bench.run import PRESETS, run_bench
from volcanic.bench.synth import synthetic_cluster

__all__ = ["PRESETS", "run_bench", "synthetic_cluster"]
