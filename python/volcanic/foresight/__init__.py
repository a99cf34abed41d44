"""Foresight: why a job is pending, where it stands, and when it will start (docs/foresight.md)."""

from volcanic.foresight.forecast import Forecast, JobForecast, forecast
from volcanic.foresight.what_if import JobChange, WhatIf, what_if

__all__ = ["Forecast", "JobChange", "JobForecast", "WhatIf", "forecast", "what_if"]
