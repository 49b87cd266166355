"""The check's memo of decisions is keyed by the whole input, exactly (issue 31)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolrun.commands.check_decide import _input_key


@pytest.mark.parametrize(
    "values",
    [
        [1, True, 1.0, "1"],  # equal as Python values (1 == True == 1.0), not as inputs
        [0, False, 0.0, "0", "", None],
        [["a"], ("a",), "['a']", "a"],
        [{"x": "1"}, {"x": 1}, "{'x': '1'}", {"x": True}],
    ],
)
def test_inputs_that_differ_in_type_only_never_share_a_key(values: list[Any]) -> None:
    keys = [_input_key({"file_path": "a.txt", "limit": v}) for v in values]
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            assert a != b


def test_inputs_of_equal_strings_share_a_key_in_the_same_order_only() -> None:
    one = _input_key({"pattern": "x", "path": "src"})
    assert one == _input_key(json.loads('{"pattern": "x", "path": "src"}'))
    # another key order only costs a second decision
    assert one != _input_key({"path": "src", "pattern": "x"})
    assert _input_key({"pattern": "x"}) != _input_key({"pattern": "x", "path": "src"})
