"""The cyclic garbage collector's policy for the long-running components.

The collector's full passes walk every object the process holds: kopf, the kubernetes client
and the imported modules (hundreds of thousands of objects) as well as the caches. In a burst
of 1,000 pods they took 0.25 s each, 0.6 s of the controller-manager's 1.5 CPU-seconds, on
the CPU the API server needs. What exists once a component has started lives as long as
the process, so it is frozen out of the collector's passes (gc.freeze, the pattern Python's
documentation gives for long-lived servers); the objects made afterwards are collected as
usual.
"""

from __future__ import annotations

import gc


def started() -> None:
    """A component has started (its modules loaded and its caches listed): collect what the
    start-up left as garbage, then freeze the rest."""
    gc.collect()
    gc.freeze()
