"""The tiny app plans/guarded/plan.yaml builds and tests."""

PORT = 8080


def address(host: str) -> str:
    return f"{host}:{PORT}"
