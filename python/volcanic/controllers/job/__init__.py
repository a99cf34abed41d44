"""Volcano's job controller."""
