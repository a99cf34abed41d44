"""Loading volcano-scheduler.conf: YAML text, a dict, or None for Volcano's default."""

from __future__ import annotations

import json
from typing import Any

import yaml

from volcanic.errors import ConfigError


def load_conf(conf: str | dict[str, Any] | None) -> str | None:
    """Returns the configuration as JSON text for the engine, or None for the default.

    A string is YAML in volcano-scheduler.conf format; a dict is its parsed form.
    The engine checks names and arguments; here only the YAML itself is checked.
    """
    if conf is None:
        return None
    if isinstance(conf, str):
        try:
            conf = yaml.safe_load(conf)
        except yaml.YAMLError as e:
            raise ConfigError(f"scheduler configuration: invalid YAML: {e}") from None
    if not isinstance(conf, dict):
        raise ConfigError("scheduler configuration: must be a map with actions and tiers, "
                          f"got {type(conf).__name__}")
    try:
        return json.dumps(conf, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"scheduler configuration: {e}") from None
