"""Durations are parsed by the engine's Go time.ParseDuration (src/volcanic/api/duration.h), the
one the scheduler's sla plugin uses; volcanic also takes a plain number of seconds."""

from __future__ import annotations

import pytest

from volcanic.kube.duration import format_duration, parse_duration


def test_go_durations_and_plain_seconds():
    assert parse_duration("1h30m", "f") == 5400
    assert parse_duration("1.5m", "f") == 90
    assert parse_duration("300ms", "f") == 0.3
    assert parse_duration("2\u03bcs", "f") == 2e-6  # Go takes both micro signs
    assert parse_duration("2\u00b5s", "f") == 2e-6
    assert parse_duration("0", "f") == 0
    assert parse_duration(" 90s ", "f") == 90
    assert parse_duration("90", "f") == 90
    assert parse_duration(12.5, "f") == 12.5


@pytest.mark.parametrize("bad", ["", "-5m", "1x", "m", "1h-2m", True, None, float("inf"), "9999999999h"])
def test_bad_durations_name_the_field(bad):
    with pytest.raises(ValueError, match=r"^metadata\.annotations\[volcanic/sim-duration\]: invalid duration"):
        parse_duration(bad, "metadata.annotations[volcanic/sim-duration]")


def test_format_duration_is_gos():
    assert format_duration(90) == "1m30s"
    assert format_duration(3600) == "1h0m0s"
    assert format_duration(0.5) == "500ms"
    assert format_duration(0) == "0s"
