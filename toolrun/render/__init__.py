"""Renderers: results and reports as text, tables, JSON, JUnit, GitHub annotations."""
