"""Command-line tools: `volcanic` (schedule, bench)."""
