"""Trace replay, metrics, DataFrames and plots on the embedded cluster; see docs/simulation.md."""
