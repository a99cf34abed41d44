"""The Kubernetes-neutral core: what every part of volcanic shares, whichever API server is
underneath (the embedded one in `volcanic.cluster`, a real one in `volcanic.real`).

- objects: the dict form of an object, its key, accessors, deep copies
- errors: the API errors a Store raises, and the two errors users see for bad objects
- kinds: the kinds volcanic reads and writes, with their API group, version and plural
- clock: the one clock, in Unix seconds, and RFC 3339 stamps
- store: the Store protocol and its watch stream
- informers: cached listers fed by a Store's watch, with indexes
- quantity, duration: Kubernetes quantities, pod requests and Go durations, by the engine's rules
- pflag: command lines read as Go's spf13/pflag reads them (Volcano's daemons, vcctl)

It imports nothing else of volcanic but the engine (`volcanic._core`), whose quantity, duration
and pod-request rules it shares with the scheduler, and whose native deep copy `clone` uses.
"""
