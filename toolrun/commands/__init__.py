"""Command functions: plain values in, a report with an exit code out (no click, no printing)."""
