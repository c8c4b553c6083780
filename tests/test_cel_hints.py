"""CEL errors of common selector mistakes end in the fix (`errors.CEL_HINTS`), one test per row.

Each mistake is written in a DeviceClass selector and read as a user reads it: compile errors
from `dra-solver validate` (exit 1), the runtime error from `dra-solver allocate` (exit 1).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from builders import claim, device, device_class, request, resource_slice
from typer.testing import CliRunner

from dra_solver.cli.main import app
from dra_solver.errors import CEL_HINTS

runner = CliRunner()

# expression -> the hint line the user must see; the same order as CEL_HINTS
COMPILE = [
    (
        'device.capacity["gpu.example.com"].memory >= quantity("40Gi")',
        'hint: compare quantities with `.compareTo(quantity("40Gi")) >= 0` (or .isGreaterThan / '
        ".isLessThan): CEL's <, <=, >, >= do not apply to quantities",
    ),
    (
        'device.capacity["gpu.example.com"].memory > 40',
        'hint: a capacity is a quantity: compare it with a quantity, `.compareTo(quantity("40Gi")) >= 0` '
        '(`== quantity("40Gi")` for equality), not with a number or a string',
    ),
    (
        'device.attributes["gpu.example.com"] == "a100"',
        'hint: attributes are keyed by domain: `device.attributes["gpu.example.com"].model`',
    ),
    (
        'device.capacity["gpu.example.com"] == "40Gi"',
        'hint: capacities are keyed by domain: `device.capacity["gpu.example.com"].memory`',
    ),
    (
        'attributes["gpu.example.com"].model == "a100"',
        "hint: a device's fields are read through `device`: `device.attributes`",
    ),
    ('device.driver = "gpu.example.com"', "hint: CEL compares with `==`; a single `=` is not an operator"),
    (
        'device.driver == "gpu.example.com" and true',
        "hint: CEL's logic operators are `&&`, `||` and `!`, not `and`",
    ),
]
RUNTIME = (
    'device.attributes["gpu.example.com"].model == "a100"',
    'hint: a device without the attribute model stops the allocation: guard the read with `"model" in '
    'device.attributes["DOMAIN"] && ...` (DOMAIN: the attribute\'s domain)',
)


def _write(tmp_path: Path, expression: str) -> str:
    cls = device_class("gpu")
    cls["spec"]["selectors"].append({"cel": {"expression": expression}})
    objs = [cls, resource_slice("a", [device("gpu-0")], node="n1"), claim("c", [request("gpu")])]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def test_every_row_of_the_table_has_a_test() -> None:
    assert len(CEL_HINTS) == len(COMPILE) + 1
    for (pattern, _), (_, hint) in zip(CEL_HINTS, [*COMPILE, RUNTIME], strict=True):
        assert hint.startswith("hint: "), pattern


@pytest.mark.parametrize(("expression", "hint"), COMPILE, ids=[f"row{i}" for i in range(len(COMPILE))])
def test_a_compile_error_of_a_common_mistake_ends_in_its_fix(
    tmp_path: Path, expression: str, hint: str
) -> None:
    result = runner.invoke(app, ["validate", _write(tmp_path, expression)])
    assert result.exit_code == 1
    text = re.sub(r"\s+", " ", result.stderr)  # the console wraps long lines
    assert hint in text, result.stderr


def test_a_runtime_error_of_a_missing_attribute_ends_in_its_fix(tmp_path: Path) -> None:
    expression, hint = RUNTIME
    result = runner.invoke(app, ["allocate", _write(tmp_path, expression), "--node", "n1"])
    assert result.exit_code == 1
    text = re.sub(r"\s+", " ", result.stderr)
    assert "no such key: model" in text and hint in text, result.stderr


def test_an_error_that_is_no_known_mistake_has_no_hint(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", _write(tmp_path, "device.driver.size()")])
    assert result.exit_code == 1 and "hint:" not in result.stderr
