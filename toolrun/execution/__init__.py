"""Execution: partition, decisions before runs, capacity, file locks, ordered results, journal."""
