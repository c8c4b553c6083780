"""Error types users see.

Why: bad input must end in one clear message naming the object, the field and the rule,
never a traceback from deep inside pydantic, cel-python or OR-tools. Every layer raises
one of these; the CLI prints them and maps them to exit code 1.
"""

from __future__ import annotations


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


class ValidationErrors(DRASolverError):
    """Several InputErrors reported together (all errors of a file, not only the first)."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(e.message for e in self.errors))


class CelError(DRASolverError):
    """A CEL compile or runtime error, with the expression and (at runtime) the device."""

    def __init__(self, reason: str, *, expression: str, device: str = "", where: str = "") -> None:
        self.reason = reason
        self.expression = expression
        self.device = device
        self.where = where
        parts = [where] if where else []
        if device:
            parts.append(f"device {device}")
        parts.append(f"expression {expression!r}")
        super().__init__(f"{', '.join(parts)}: {reason}")


class CelCompileError(CelError):
    """The expression does not parse or type-check in the DRA CEL environment."""

    line: int | None = None
    column: int | None = None
    """Where in the expression (1-based), when the compiler names a place."""


class CelRuntimeError(CelError):
    """Evaluation failed (missing key, wrong type, cost limit); aborts the allocation."""


class AllocationError(DRASolverError):
    """A fatal allocation error as upstream raises it (e.g. All mode on an incomplete pool)."""


class InvalidPools(AllocationError):
    """No solution on this node, and some of its pools were invalid (upstream's per-node error
    `ErrFailedAllocationOnNode`): the node is unsuitable, other nodes may still work."""


class SearchAborted(AllocationError):
    """The search gave up before finding an answer (upstream: its filter timeout)."""
