"""The HTTP/1.1 server volcanic's endpoints share: the admission webhook over TLS
(volcanic.webhook) and each daemon's /metrics and /healthz over plain HTTP
(volcanic.real.serving). server.py: the selectors loop (TLS handshakes, deadlines,
connection bounds, a worker pool fed only complete requests); wire.py: request heads and
answers as bytes; tls.py: server contexts and self-signed certificates. Kubernetes-neutral:
it imports nothing else of volcanic, and knows nothing of admission."""
