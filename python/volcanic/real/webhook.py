"""`volcanic webhook --register`: Volcano's admission on a real cluster.

The HTTPS server of volcanic.webhook, its rules reading informers over the API server
(queues, namespaces, jobs, podgroups), and the Mutating/ValidatingWebhookConfigurations
Volcano's webhook-manager registers (made by manifests/webhooks.py, applied by
registrations.py). Without a certificate it makes a self-signed one, valid for the
Service's DNS names and the --url host, and puts it in each configuration's caBundle.
Order: caches synced, then serving, then registered, so the API server never calls a webhook
that cannot answer or would answer from an empty cache.
`volcanic up` removes the registrations again on a clean stop (unregister); a production
`volcanic webhook --register` leaves them for the replica that replaces it.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from typing import Any
from urllib.parse import urlparse

from volcanic.admission import AdmissionConf
from volcanic.httpd.tls import self_signed_cert
from volcanic.kube.informers import Informers
from volcanic.real.manifests.names import NAMESPACE, SERVICE
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, service_hosts
from volcanic.real.registrations import register, unregister
from volcanic.real.serving import Health
from volcanic.real.store import KubeStore
from volcanic.webhook import make_server

log = logging.getLogger("volcanic.webhook")

WEBHOOK_KINDS = ("Queue", "Namespace", "Job", "PodGroup")
CERT_DAYS = 365


class LockedLister:
    """The informers' Lister for the server's threads, while the pump thread fills them."""

    def __init__(self, informers: Informers, lock: threading.Lock) -> None:
        self._informers, self._lock = informers, lock

    def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
        with self._lock:
            return self._informers.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list:
        with self._lock:
            return self._informers.list(kind, namespace)

    def by_index(self, kind: str, index: str, value: str) -> list:
        with self._lock:
            return self._informers.by_index(kind, index, value)


class WebhookDaemon:
    """Serves admission and registers it; run() until stop is set."""

    def __init__(self, store: KubeStore, listen: str = "0.0.0.0:8443", url: str | None = None,
                 tls: tuple[str, str] | None = None, conf: AdmissionConf | None = None,
                 health: Health | None = None, paths: tuple[str, ...] = DEFAULT_ADMISSIONS,
                 register: bool = True, limits: dict[str, Any] | None = None) -> None:
        self.store, self.url, self.health = store, url, health or Health()
        self.limits = limits or {}  # httpd.server.Limits' fields
        self.paths, self.register = paths, register
        self.host, _, port = listen.rpartition(":")
        self.port = int(port)
        self._lock = threading.Lock()
        self.informers = Informers(store, WEBHOOK_KINDS)
        self.lister = LockedLister(self.informers, self._lock)
        self.conf = conf or AdmissionConf()
        self._tmp = None
        if tls is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="volcanic-webhook-")
            hosts = service_hosts() + ([urlparse(url).hostname] if url else [])
            tls = self_signed_cert(self._tmp.name, hosts, days=CERT_DAYS)
        self.cert, self.key = tls
        self.server = None
        self.registered: list[dict] = []  # the configurations applied, for unregister()

    def run(self, stop: threading.Event) -> None:
        while not self.informers.watch.synced.wait(0.2):
            if stop.is_set():
                return
        self._pump()
        self.server = make_server(self.cert, self.key, self.conf, self.lister, self.host or "0.0.0.0", self.port,
                                  **self.limits)
        threading.Thread(target=self.server.serve_forever, name="webhook", daemon=True).start()
        log.info("webhook: serving on %s:%d", self.host or "0.0.0.0", self.server.port)
        try:
            if self.register:
                with open(self.cert, "rb") as f:
                    self.registered = register(self.store.client, f.read(), self.url, self.paths,
                                               self.conf.scheduler_names)
                log.info("webhook: registered %s (%s)", ", ".join(self.paths),
                         self.url or f"Service {NAMESPACE}/{SERVICE}")
            while not stop.is_set():
                self.health.beat("webhook")
                self.informers.watch.wait(1.0)
                self._pump()
        finally:
            self.server.shutdown()
            self.server.server_close()
            if self._tmp is not None:
                self._tmp.cleanup()

    def unregister(self) -> None:
        """Removes the configurations run() registered that still call this webhook (the
        clean stop of `volcanic up`: they have failurePolicy Fail, and would refuse every
        Queue and Job write once nothing answers them)."""
        if not self.registered:
            return
        removed = unregister(self.store.client, self.registered)
        self.registered = []
        log.info("webhook: removed %s", ", ".join(removed) if removed else "nothing (registered again since)")

    def _pump(self) -> None:
        with self._lock:
            self.informers.pump()
