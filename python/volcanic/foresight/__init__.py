"""Foresight: why a job is pending, where it stands, and when it will start (docs/foresight.md)."""

from volcanic.foresight.forecast import Forecast, JobForecast, forecast
from volcanic.foresight.outlook import Answers, Explanation, Foresight, Outlook
from volcanic.foresight.what_if import JobChange, WhatIf, what_if

__all__ = ["Answers", "Explanation", "Forecast", "Foresight", "JobChange", "JobForecast", "Outlook", "WhatIf",
           "forecast", "what_if"]
