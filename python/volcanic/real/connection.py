"""Keep-alive HTTP(S) connections to one API server, one per thread, over the standard
library's http.client.

Why not the kubernetes client's urllib3 pool: its machinery (pool bookkeeping, retries,
header dicts, response wrappers) cost 0.74 ms of CPU per request against 0.32 ms here, and
the scheduler and the controller-manager send thousands of requests per thousand pods on
CPU the API server needs. The kubernetes client still loads the kubeconfig; this module
only moves bytes, with the TLS settings and proxy it found.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from typing import Any, Iterator
from urllib.parse import urlsplit

# What a keep-alive connection the server closed meanwhile raises on reuse (when the close
# races the request, after _dropped() looked); the request never reached the server, so it
# is sent again once on a new connection.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError,
          ssl.SSLEOFError, ssl.SSLZeroReturnError)


class Connections:
    """Thread-safe: each thread has its own connection, reused while the server keeps it."""

    def __init__(self, configuration: Any) -> None:
        url = urlsplit(configuration.host)
        self.https = url.scheme == "https"
        self.host, self.port = url.hostname or "localhost", url.port or (443 if self.https else 80)
        self._context = _tls_context(configuration) if self.https else None
        self._server_name = getattr(configuration, "tls_server_name", None) or None
        self._proxy = _proxy_of(configuration)
        self._proxy_headers = dict(configuration.proxy_headers or {})
        self._local = threading.local()

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                timeout: float) -> tuple[int, bytes]:
        """(status, body) of one request on this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and _dropped(conn):
            conn.close()
            conn = None
        reused = conn is not None
        if conn is None:
            conn = self._local.conn = self.open(timeout)
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        except _STALE:
            conn.close()
            self._local.conn = None
            if not reused:
                raise
            return self.request(method, path, body, headers, timeout)
        except BaseException:
            conn.close()
            self._local.conn = None
            raise

    def stream(self, path: str, headers: dict[str, str], timeout: float) -> tuple[int, Iterator[bytes], Any]:
        """A long request (a watch) on a connection of its own: (status, its body's chunks as
        they come, a close function)."""
        conn = self.open(timeout)
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
        except BaseException:
            conn.close()
            raise
        return resp.status, _chunks(resp), conn.close

    def open(self, timeout: float) -> http.client.HTTPConnection:
        target = self._proxy or (self.host, self.port)
        if self.https:
            conn: http.client.HTTPConnection = _HTTPS(*target, timeout=timeout, context=self._context)
            conn.server_name = self._server_name
        else:
            conn = http.client.HTTPConnection(*target, timeout=timeout)
        if self._proxy:
            conn.set_tunnel(self.host, self.port, headers=self._proxy_headers)
        return conn


class _HTTPS(http.client.HTTPSConnection):
    """HTTPSConnection that checks the certificate against tls-server-name when the
    kubeconfig sets one (a server reached by IP with a certificate for its name)."""

    server_name: str | None = None

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        name = self.server_name or self._tunnel_host or self.host
        self.sock = self._context.wrap_socket(self.sock, server_hostname=name)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """An idle keep-alive connection that has something to read was closed by the server
    (Go's idle timeout, a restart), as urllib3 checks before reusing one."""
    if conn.sock is None:
        return True
    readable, _, _ = select.select([conn.sock], [], [], 0)
    return bool(readable)


def _chunks(resp: http.client.HTTPResponse) -> Iterator[bytes]:
    while True:
        chunk = resp.read1(1 << 16)
        if not chunk:
            return
        yield chunk


def _tls_context(configuration: Any) -> ssl.SSLContext:
    if not configuration.verify_ssl:
        context = ssl._create_unverified_context()  # noqa: S323 - the kubeconfig asked for it
    else:
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if configuration.assert_hostname is False:
            context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def _proxy_of(configuration: Any) -> tuple[str, int] | None:
    """The HTTP proxy the kubernetes client would use (kubeconfig's proxy-url or the
    environment's, unless no_proxy names the server), reached with CONNECT."""
    proxy = configuration.proxy
    if not proxy:
        return None
    from kubernetes.client.rest import should_bypass_proxies

    if should_bypass_proxies(configuration.host, configuration.no_proxy or ""):
        return None
    url = urlsplit(proxy)
    if url.scheme not in ("http", ""):
        raise ValueError(f"proxy {proxy!r}: only http:// proxies (CONNECT) are supported")
    return url.hostname or "localhost", url.port or 80
