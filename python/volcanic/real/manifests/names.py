"""The names every manifest shares: volcanic's namespace, its components' service
accounts, and the webhook's Service (Volcano's names, so Volcano's tools find them)."""

from __future__ import annotations

NAMESPACE = "volcano-system"
# The admission webhook's Service, as Volcano's chart names it.
SERVICE = "volcano-admission-service"
# The scheduler's /metrics and /foresight/ (vcctl reaches it through the API server's proxy).
SCHEDULER_SERVICE = "volcano-scheduler-service"


def account(component: str) -> str:
    """The ServiceAccount (and ClusterRole, Deployment) of a component."""
    return f"volcanic-{component}"
