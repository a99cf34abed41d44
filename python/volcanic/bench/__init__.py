"""The benchmark: synthetic clusters from a seed, timed through the public API."""

from volcanic.bench.admission import ADMISSION_PRESETS, run_admission
from volcanic.bench.e2e import E2E_PRESETS, run_e2e
from volcanic.bench.run import PRESETS, run_bench
from volcanic.bench.synth import synthetic_cluster

__all__ = ["ADMISSION_PRESETS", "E2E_PRESETS", "PRESETS", "run_admission", "run_bench", "run_e2e", "synthetic_cluster"]
