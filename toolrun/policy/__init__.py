"""Tools for people who maintain permission rules: self-tests, lint and policy diffs."""
