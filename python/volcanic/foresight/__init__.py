"""Foresight: why a job is pending, where it stands, and when it will start (docs/foresight.md)."""

from volcanic.foresight.forecast import Forecast, JobForecast, forecast

__all__ = ["Forecast", "JobForecast", "forecast"]
