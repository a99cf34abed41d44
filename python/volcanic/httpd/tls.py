"""TLS for volcanic's HTTPS endpoints: the server context, and a self-signed certificate for
tests, the benchmark and a webhook run without one (volcanic.real.webhook)."""

from __future__ import annotations

import ssl
from typing import Iterable


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server context, TLS 1.2 at least, serving the PEM certificate chain `cert` with `key`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def self_signed_cert(directory: str, hosts: Iterable[str] = ("localhost", "127.0.0.1"),
                     days: int = 1) -> tuple[str, str]:
    """Writes a self-signed certificate for `hosts` (names or IP addresses) and its key
    (ECDSA P-256) as PEM files in `directory`; returns their paths. For tests and the
    benchmark: a real deployment uses the certificate the API server is given as caBundle."""
    import datetime
    import ipaddress
    import os

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    hosts = list(hosts)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "volcanic-webhook")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path
