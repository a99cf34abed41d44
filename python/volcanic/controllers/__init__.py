"""Volcano's controllers as reconcile logic over a Store (embedded or a real API server)."""
