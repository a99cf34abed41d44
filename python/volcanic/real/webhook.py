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

Run from Volcano's Helm chart (`fill_ca_bundle`, without --register), it does what Volcano's
webhook-manager does (cmd/webhook-manager/app/util.go addCaCertForWebhook): the chart has
created the configurations, `volcano-admission-service-<resource>-<operation>`; for each
enabled path it waits for its configuration (up to 5 minutes, checking every second) and sets
every webhook's caBundle to `--ca-cert-file`'s certificate. Volcano's paths of kinds volcanic
has no rules for (JobTemplates) may be enabled too: those reviews are allowed as sent
(UNRULED), so such writes are not refused by a configuration's failurePolicy Fail.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import tempfile
import threading
import time
from typing import Any
from urllib.parse import urlparse

from volcanic.admission import AdmissionConf, volcano_chain
from volcanic.admission import review as codec
from volcanic.admission.volcano import read_resource_groups
from volcanic.httpd.tls import self_signed_cert, tls_context
from volcanic.httpd.wire import Request, Response
from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.informers import Informers
from volcanic.real.client import KubeClient
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, DEFAULT_SERVICE, configuration_name, service_hosts
from volcanic.real.registrations import register, unregister
from volcanic.real.serving import Health, host_port
from volcanic.real.store import KubeStore
from volcanic.webhook import WebhookServer

log = logging.getLogger("volcanic.webhook")

WEBHOOK_KINDS = ("Queue", "Namespace", "Job", "PodGroup", "QueueBinding")
CERT_DAYS = 365
# Volcano v1.15.1's admission paths (pkg/webhooks/admission/*) of kinds volcanic has no rules
# for: a review there is allowed as sent.
UNRULED = ("/jobtemplates/validate",)
CA_BUNDLE_WAIT = 300.0  # Volcano polls for a configuration for 5 minutes, then fails
ADMISSION_API = "/apis/admissionregistration.k8s.io/v1"


class DaemonWebhookServer(WebhookServer):
    """The admission paths, and UNRULED's reviews allowed."""

    def handle(self, request: Request) -> Response:
        if request.head.path in UNRULED and request.head.method == "POST":
            try:
                uid = codec.parse(request.body)["request"]["uid"]
            except (codec.ReviewError, KeyError, TypeError) as e:
                return self.error(400, f"not an AdmissionReview: {e}")
            return Response(200, json.dumps(codec.allowed_response(uid)).encode())
        return super().handle(request)


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
                 register: bool = True, limits: dict[str, Any] | None = None, ca_cert: str | None = None,
                 fill_ca_bundle: bool = False, service: tuple[str, str] = DEFAULT_SERVICE,
                 admission_conf: str | None = None) -> None:
        self.store, self.url, self.health = store, url, health or Health()
        self.limits = limits or {}  # httpd.server.Limits' fields
        self.paths, self.register, self.fill_ca_bundle = paths, register, fill_ca_bundle
        self.service = service  # (name, namespace) the configurations call: --webhook-service-name, --webhook-namespace
        self.conf_file, self._conf_stamp = admission_conf, _stamp(admission_conf)
        self.ca_cert = ca_cert  # the caBundle's file (Volcano's --ca-cert-file); None: the certificate's
        self.host, self.port = host_port(listen)
        self._lock = threading.Lock()
        self.informers = Informers(store, WEBHOOK_KINDS)
        self.lister = LockedLister(self.informers, self._lock)
        self.conf = conf or AdmissionConf()
        self._tmp = None
        if tls is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="volcanic-webhook-")
            hosts = service_hosts(service) + ([urlparse(url).hostname] if url else [])
            tls = self_signed_cert(self._tmp.name, hosts, days=CERT_DAYS)
        self.cert, self.key = tls
        self.server = None
        self.registered: list[dict] = []  # the configurations applied, for unregister()

    def run(self, stop: threading.Event) -> None:
        while not self.informers.watch.synced.wait(0.2):
            if stop.is_set():
                return
        self._pump()
        self.server = DaemonWebhookServer((self.host, self.port), tls_context(self.cert, self.key),
                                          volcano_chain(self.conf), self.lister, **self.limits)
        threading.Thread(target=self.server.serve_forever, name="webhook", daemon=True).start()
        log.info("webhook: serving on %s:%d", self.host, self.server.port)
        try:
            with open(self.ca_cert or self.cert, "rb") as f:
                ca = f.read()
            if self.register:
                self.registered = register(self.store.client, ca, self.url, self.paths, self.conf.scheduler_names,
                                           self.service)
                log.info("webhook: registered %s (%s)", ", ".join(self.paths),
                         self.url or f"Service {self.service[1]}/{self.service[0]}")
            elif self.fill_ca_bundle:
                fill_ca_bundles(self.store.client, self.paths, ca, stop)
                log.info("webhook: caBundle set in the configurations of %s", ", ".join(self.paths))
            while not stop.is_set():
                self.health.beat("webhook")
                self.informers.watch.wait(1.0)
                self._pump()
                self.reload_conf()
        finally:
            self.server.shutdown()
            self.server.server_close()
            if self._tmp is not None:
                self._tmp.cleanup()

    def reload_conf(self) -> None:
        """--admission-conf read again once its file changed, as Volcano's webhook-manager
        watches it (pkg/webhooks/config): the resource groups of the next reviews are the new
        ones. A file that does not read keeps the running ones, logged."""
        stamp = _stamp(self.conf_file)
        if self.conf_file is None or stamp == self._conf_stamp or self.server is None:
            return
        self._conf_stamp = stamp
        try:
            groups = read_resource_groups(self.conf_file)
        except ValueError as e:
            log.error("webhook: --admission-conf not reloaded, keeping the running one: %s", e)
            return
        self.conf = dataclasses.replace(self.conf, resource_groups=groups)
        self.server.chain = volcano_chain(self.conf)
        log.info("webhook: --admission-conf %s reloaded (%d resource groups)", self.conf_file, len(groups))

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


def fill_ca_bundles(client: KubeClient, paths: tuple[str, ...], ca: bytes, stop: threading.Event,
                    wait: float = CA_BUNDLE_WAIT) -> None:
    """Sets caBundle in every webhook of each path's configuration (mutating for */mutate,
    validating otherwise), waiting for each to exist; StoreError if one does not appear within
    `wait` seconds or cannot be updated (the process then exits, as Volcano's does)."""
    bundle = base64.b64encode(ca).decode()
    for path in paths:
        kind = "mutatingwebhookconfigurations" if path.endswith("/mutate") else "validatingwebhookconfigurations"
        url = f"{ADMISSION_API}/{kind}/{configuration_name(path)}"
        deadline = time.monotonic() + wait
        while True:
            try:
                config = client.request("GET", url)
                break
            except NotFound:
                if time.monotonic() > deadline:
                    raise StoreError("", "", "", f"webhook configuration {configuration_name(path)} not found "
                                     f"after {wait:g}s (it is made by Volcano's chart)") from None
                log.warning("webhook: waiting for %s %s", kind, configuration_name(path))
                if stop.wait(1.0):
                    return
        webhooks = config.get("webhooks") or []
        if all((w.get("clientConfig") or {}).get("caBundle") == bundle for w in webhooks):
            continue
        for w in webhooks:
            w.setdefault("clientConfig", {})["caBundle"] = bundle
        client.request("PUT", url, config)


def _stamp(path: str | None) -> float | None:
    """The file's modification time, None for no file or one that cannot be read."""
    try:
        return os.stat(path).st_mtime if path else None
    except OSError:
        return None
