"""Bucket layouts of the Prometheus Go client, for the histograms the daemons serve on /metrics
under Volcano's names: the same buckets, so Volcano's dashboards and alerts read the same
quantiles."""

from __future__ import annotations


def exponential_buckets_range(low: float, high: float, count: int) -> tuple[float, ...]:
    """Go's prometheus.ExponentialBucketsRange: `count` buckets from low to high."""
    factor = (high / low) ** (1 / (count - 1))
    return tuple(low * factor ** i for i in range(count))
