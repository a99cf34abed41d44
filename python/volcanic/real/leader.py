"""Lease-based leader election, as client-go's leaderelection with a Lease lock.

Volcano's components run it with `--leader-elect` (on by default): the scheduler holds the
Lease `volcano` and the controller-manager `vc-controller-manager`, both in volcano-system,
with a lease of 15 s, a renew deadline of 10 s and a retry period of 2 s
(pkg/util/util.go LeaderElectionDefault; cmd/scheduler/app/server.go), each changed by
component-base's `--leader-elect-*` flags (LeaderElection).

Rules, as client-go's: a candidate takes the Lease when nobody holds it or when its record
has not changed for a lease duration as seen on the candidate's own monotonic clock (never
by comparing the holder's timestamps with ours, so clock skew is harmless); writes use the
Lease's resourceVersion, so of two candidates at most one wins. The leader renews every
retry period; when it has not renewed for the renew deadline, shorter than the lease, it
stops working before anyone else may take over. A leader that stops cleanly hands the Lease
back (empty holder) so a successor starts at once instead of after a lease.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import socket
import threading
import time
from typing import Callable
import uuid

from volcanic.kube.clock import rfc3339_micro
from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.objects import spec_of
from volcanic.real.client import KubeClient
from volcanic.real.manifests.names import NAMESPACE

log = logging.getLogger("volcanic.leader")

SCHEDULER_LEASE = "volcano"
CONTROLLER_MANAGER_LEASE = "vc-controller-manager"


@dataclass(frozen=True)
class LeaderElection:
    """component-base's LeaderElectionConfiguration, as Volcano's flags set it: the Lease's
    namespace, its name (None: the component's own), and the timings in seconds."""

    namespace: str = NAMESPACE
    name: str | None = None
    lease: float = 15.0
    renew_deadline: float = 10.0
    retry: float = 2.0


class LostLease(RuntimeError):
    """The leader could not renew its Lease in time: it stopped working (Volcano exits)."""


class LeaderElector:
    """One candidate for one Lease."""

    def __init__(self, client: KubeClient, name: str, namespace: str = NAMESPACE, lease: float = 15.0,
                 renew_deadline: float = 10.0, retry: float = 2.0, identity: str | None = None) -> None:
        self.client, self.name, self.namespace = client, name, namespace
        self.lease, self.renew_deadline, self.retry = lease, renew_deadline, retry
        self.identity = identity or f"{socket.gethostname()}_{uuid.uuid4()}"
        self._observed: tuple[dict, float] | None = None  # the last record seen, and when (monotonic)

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def run(self, stop: threading.Event, work: Callable[[threading.Event], None]) -> None:
        """Waits to lead, then runs work(until) while leading; raises LostLease if leadership
        was lost before `stop` was set."""
        while not self._try():
            if stop.wait(self.retry):
                return
        log.info("%s: leading as %s", self.name, self.identity)
        until = threading.Event()
        lost = threading.Event()
        keeper = threading.Thread(target=self._keep, args=(stop, until, lost), name=f"lease-{self.name}", daemon=True)
        keeper.start()
        try:
            work(until)
        finally:
            until.set()
            keeper.join()
        if lost.is_set():
            raise LostLease(f"lease {self.namespace}/{self.name}: not renewed within {self.renew_deadline:g}s")
        self._release()

    def _keep(self, stop: threading.Event, until: threading.Event, lost: threading.Event) -> None:
        """Renews every retry period (every second after a failure) until `until` or `stop`;
        sets `lost` and `until` once the renew deadline passed without a renewal."""
        renewed = attempted = time.monotonic()
        while not until.wait(0.5) and not stop.is_set():
            now = time.monotonic()
            if now - renewed > self.renew_deadline:
                log.error("%s: lease lost", self.name)
                lost.set()
                break
            if now - attempted >= (self.retry if attempted == renewed else 1.0):
                attempted = time.monotonic()
                if self._try():
                    renewed = attempted
        until.set()

    def _try(self) -> bool:
        """client-go's tryAcquireOrRenew: True if this candidate holds the Lease now."""
        now = rfc3339_micro(time.time())
        try:
            lease = self.client.request("GET", self.path, timeout=self.retry)
        except NotFound:
            return self._write("POST", self._lease({}, now, transitions=0))
        except StoreError as e:
            log.warning("%s: %s", self.name, e)
            return False
        spec = spec_of(lease)
        if self._observed is None or self._observed[0] != spec:
            self._observed = (spec, time.monotonic())
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity and time.monotonic() - self._observed[1] < self.lease:
            return False
        transitions = int(spec.get("leaseTransitions") or 0) + (holder != self.identity)
        acquired = spec.get("acquireTime") if holder == self.identity else now
        return self._write("PUT", self._lease(lease, now, transitions, acquired))

    def _lease(self, lease: dict, now: str, transitions: int, acquired: str | None = None) -> dict:
        meta = dict(lease.get("metadata") or {"name": self.name, "namespace": self.namespace})
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease),
                         "acquireTime": acquired or now, "renewTime": now, "leaseTransitions": transitions}}

    def _write(self, method: str, lease: dict) -> bool:
        path = self.path if method == "PUT" else self.path.rpartition("/")[0]
        try:
            written = self.client.request(method, path, lease, timeout=self.retry)
        except StoreError:
            return False  # another candidate wrote first
        self._observed = (spec_of(written), time.monotonic())
        return True

    def _release(self) -> None:
        try:
            lease = self.client.request("GET", self.path)
            spec = spec_of(lease)
            if spec.get("holderIdentity") == self.identity:
                lease["spec"] = {"leaseDurationSeconds": 1, "leaseTransitions": spec.get("leaseTransitions", 0)}
                self.client.request("PUT", self.path, lease)
        except StoreError as e:
            log.warning("%s: lease not released: %s", self.name, e)


def run_maybe_elected(client: KubeClient, lease: str | None, stop: threading.Event,
                      work: Callable[[threading.Event], None], election: LeaderElection | None = None) -> None:
    """work(stop) directly, or under leader election for `lease` (the component's Lease name)
    when it is given, with `election`'s namespace, name and timings (default: Volcano's)."""
    if lease is None:
        work(stop)
        return
    e = election or LeaderElection()
    LeaderElector(client, e.name or lease, e.namespace, e.lease, e.renew_deadline, e.retry).run(stop, work)
