from pathlib import Path

def test_format():
    assert "%Y" in Path("src/dates.py").read_text() and False, "2026-11-30 != 30/11"
