"""Plans: what a plan file holds once validated, and how it is loaded."""

from __future__ import annotations

from toolrun.plan.loader import load_plan, load_plans
from toolrun.plan.models import Call, Plan, Turn

__all__ = ["Call", "Plan", "Turn", "load_plan", "load_plans"]
