"""Error types users see.

Why: bad input must end in one clear message naming the object, the field and the rule,
never a traceback from deep inside pydantic, cel-python or OR-tools. Every layer raises
one of these; the CLI prints them and maps them to exit code 1.
"""

from __future__ import annotations

import re


class DRASolverError(Exception):
    """Base class of every error dra-solver raises on purpose."""


class InputError(DRASolverError):
    """Invalid input: names the object (kind namespace/name), the field path and the reason."""

    def __init__(self, reason: str, *, obj: str = "", field: str = "", source: str = "") -> None:
        self.reason = reason
        self.obj = obj
        self.field = field
        self.source = source
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = ": ".join(p for p in (self.source, self.obj, self.field) if p)
        return f"{where}: {self.reason}" if where else self.reason


class CutShort(DRASolverError):
    """The run's deadline (`--timeout`) passed before there was a plan to return: no plan, and
    the message says where it stopped (docs/semantics.md, "Limits and determinism")."""


class StoppedReading(CutShort):
    """The run was stopped (`--timeout` passed, `interrupt.request`) before its input was read:
    there is no cluster to plan, so no plan."""


class ValidationErrors(DRASolverError):
    """Several InputErrors reported together (all errors of a file, not only the first)."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(e.message for e in self.errors))


_OPS = r"(?P<op>_(?:>=|<=|>|<)_)"
_CMP = {"_>=_": ">= 0", "_<=_": "<= 0", "_>_": "> 0", "_<_": "< 0"}

CEL_HINTS: tuple[tuple[str, str], ...] = (
    (
        rf"no matching overload for '{_OPS}' applied to '\(kubernetes\.Quantity, kubernetes\.Quantity\)'",
        'compare quantities with `.compareTo(quantity("40Gi")) {cmp}` (or .isGreaterThan / '
        ".isLessThan): CEL's <, <=, >, >= do not apply to quantities",
    ),
    (
        r"no matching overload for '_(?:==|!=|>=|<=|>|<)_' applied to "
        r"'\(kubernetes\.Quantity, (?:int|uint|double|string)\)'",
        'a capacity is a quantity: compare it with a quantity, `.compareTo(quantity("40Gi")) >= 0` '
        '(`== quantity("40Gi")` for equality), not with a number or a string',
    ),
    (
        r"no matching overload for '_[^']*_' applied to '\(map\(string, dyn\), ",
        'attributes are keyed by domain: `device.attributes["gpu.example.com"].model`',
    ),
    (
        r"no matching overload for '_[^']*_' applied to '\(map\(string, kubernetes\.Quantity\), ",
        'capacities are keyed by domain: `device.capacity["gpu.example.com"].memory`',
    ),
    (
        r"undeclared reference to '(?P<name>attributes|capacity|driver|allowMultipleAllocations)'",
        "a device's fields are read through `device`: `device.{name}`",
    ),
    (
        r"Syntax error: token recognition error at: '='",
        "CEL compares with `==`; a single `=` is not an operator",
    ),
    (
        r"Syntax error: mismatched input '(?P<word>and|or|not)'",
        "CEL's logic operators are `&&`, `||` and `!`, not `{word}`",
    ),
    (
        r"no such key: (?P<key>\S+)$",
        "a device without the attribute {key} stops the allocation: guard the read with "
        '`"{key}" in device.attributes["DOMAIN"] && ...` (DOMAIN: the attribute\'s domain)',
    ),
)
"""Common mistakes in DRA selectors: (pattern of the error, the fix in words), one row each.
`CelError` adds the first matching row's fix to its message as a hint; `{cmp}` is the
comparison the expression meant, and named groups of the pattern fill the other fields."""


def cel_hint(reason: str) -> str | None:
    """The fix for a CEL error message, from `CEL_HINTS` (None: no known mistake)."""
    for pattern, hint in CEL_HINTS:
        m = re.search(pattern, reason, re.MULTILINE)
        if m:
            fields = {k: v for k, v in m.groupdict().items() if v is not None}
            return hint.format(cmp=_CMP.get(fields.get("op", ""), ">= 0"), **fields)
    return None


class CelError(DRASolverError):
    """A CEL compile or runtime error, with the expression and (at runtime) the device; the
    message ends in a hint when the error is a known mistake (`CEL_HINTS`)."""

    def __init__(
        self, reason: str, *, expression: str, device: str = "", where: str = "", claim: str = ""
    ) -> None:
        self.reason = reason
        self.expression = expression
        self.device = device
        self.where = where
        self.claim = claim
        """The claim (`namespace/name`) whose request met the error at runtime ('' when none):
        a fact, so that no one reads it back out of `where`'s words."""
        self.hint = cel_hint(reason)
        parts = [where] if where else []
        if device:
            parts.append(f"device {device}")
        parts.append(f"expression {expression!r}")
        super().__init__(f"{', '.join(parts)}: {self.reason_and_hint}")

    @property
    def reason_and_hint(self) -> str:
        """The reason, and the fix on a line of its own when the mistake is a known one."""
        return f"{self.reason}\nhint: {self.hint}" if self.hint else self.reason


class CelCompileError(CelError):
    """The expression does not parse or type-check in the DRA CEL environment."""

    line: int | None = None
    column: int | None = None
    """Where in the expression (1-based), when the compiler names a place."""


class CelRuntimeError(CelError):
    """Evaluation failed (missing key, wrong type, cost limit); aborts the allocation."""


class AllocationError(DRASolverError):
    """A fatal allocation error as upstream raises it (e.g. All mode on an incomplete pool)."""


class InputRefused(AllocationError):
    """Upstream's allocator refuses this input with an error rather than "does not fit" (All
    mode on a pool being updated, more devices than a claim may hold, more than 256 consumers
    of one claim, a constraint All mode cannot meet): the input's doing, unlike `CheckFailed`
    (also an AllocationError), which is a wrong answer of ours. A class of its own so that a
    caller filtering bad inputs can name them without also catching `CheckFailed`."""


class FailedOnNode(AllocationError):
    """Upstream's per-node error (`ErrFailedAllocationOnNode`): the call fails on this node, but
    the scheduler goes on with other nodes (on a single node it is the call's error)."""


class InvalidPools(FailedOnNode):
    """No solution on this node, and some of its pools were invalid (upstream's per-node error
    `ErrFailedAllocationOnNode`): the node is unsuitable, other nodes may still work."""


class SearchAborted(AllocationError):
    """The search gave up before finding an answer (upstream: its filter timeout)."""
