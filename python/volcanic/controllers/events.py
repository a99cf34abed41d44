"""The vc-controller-manager's event recorder (Recorder itself is in volcanic.kube.events)."""

from __future__ import annotations

from typing import Any

from volcanic.kube.events import Recorder

CONTROLLER_MANAGER = "vc-controller-manager"


def controller_manager_recorder(ctx: Any) -> Recorder:
    """The vc-controller-manager's one Recorder, shared by its controllers (kept in
    ctx.extra), as Volcano's controllers share one event broadcaster. Events go to
    ctx.extra["event_sink"] when there is one (a real cluster sends them in the background)."""
    key = f"recorder/{CONTROLLER_MANAGER}"
    if key not in ctx.extra:
        ctx.extra[key] = Recorder(ctx.extra.get("event_sink", ctx.store), ctx.clock.now, CONTROLLER_MANAGER)
    return ctx.extra[key]
