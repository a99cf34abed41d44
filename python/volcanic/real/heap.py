"""The cyclic garbage collector's policy for the long-running components.

The collector's full passes walk every object the process holds: kopf, the kubernetes client
and the imported modules (hundreds of thousands of objects) as well as the caches. In a burst
of 1,000 pods they took 0.25 s each, 0.6 s of the controller-manager's 1.5 CPU-seconds, on
the CPU the API server needs. What exists once a component has started lives as long as
the process, so it is frozen out of the collector's passes (gc.freeze, the pattern Python's
documentation gives for long-lived servers), and no pass runs while the first lists fill the
caches; the objects made afterwards are collected as usual.
"""

from __future__ import annotations

import gc


def loading() -> None:
    """A component is about to list its caches: collect what loading the modules left as
    garbage and freeze the rest, then pause collection while the lists come. Every object
    they bring stays alive in the caches, so each pass would walk a growing heap for nothing:
    at 140,000 pods the passes took seconds before the first session."""
    gc.collect()
    gc.freeze()
    gc.disable()


def started() -> None:
    """The caches are listed: what they hold lives as long as the process too, frozen out of
    the passes, which resume for what comes later."""
    gc.freeze()
    gc.enable()
