"""Validation that needs the CEL compiler, and the one validation entry point for users.

Why here and not in `solver.api.validate`: the data flow runs api -> cel, so the api
layer must not import the CEL package. The structural rules (names, limits, one-of
fields, references, pools) stay in `api.validate`; this module supplies the compiler
(`cel_compile_problem`) and runs both in one walk (`validate_object`, `validate_all`),
so every error of an object, CEL included, comes out in field order. The CLI and the
library's `dra_solver.load` use `validate_all`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from ..api import validate as structural
from ..api.cluster import Cluster
from ..api.models import TypeMeta
from ..errors import CelCompileError, InputError
from ..gates import FeatureGates
from . import compile_expression

__all__ = ["cel_compile_problem", "validate_all", "validate_object"]


@lru_cache(maxsize=4096)
def cel_compile_problem(expression: str, expect_bool: bool = False) -> str | None:
    """The compile error of `expression` in the DRA CEL environment, or None.

    `expect_bool` for selectors: their static type must be bool (or dyn), as upstream
    requires; derived attributes may yield any scalar or list. Cached because clusters
    repeat the same few expressions across many classes and claims.
    """
    try:
        compile_expression(expression, expect_bool=expect_bool)
    except CelCompileError as exc:
        return _one_line(exc.reason) + (f" (hint: {exc.hint})" if exc.hint else "")
    except RecursionError:
        return "expression is nested too deeply"
    return None


def _one_line(reason: str) -> str:
    """First line of a CEL error, without the caret picture: errors print one per line."""
    first = reason.strip().splitlines()[0] if reason.strip() else reason
    first = first.removeprefix("compilation failed: ")
    return first.replace("ERROR: <input>:", "at ", 1)


def validate_object(obj: TypeMeta, source: str = "") -> list[InputError]:
    """Every rule violation of one object, CEL compile errors included, in field order."""
    return structural.validate_object(obj, source, cel_compile_problem)


def validate_all(
    cluster: Cluster,
    source_of: Callable[[TypeMeta], str] | None = None,
    *,
    pools: bool = False,
    gates: FeatureGates | None = None,
) -> list[InputError]:
    """Every error of the cluster: structural, cross-object references and CEL; with
    `pools` also incomplete and invalid pools (`api.validate.pool_problems`).

    Why pools are opt-in here: this is what the CLI runs before `allocate` and `plan`,
    and a snapshot with an incomplete or invalid pool is a real cluster state that
    upstream allocates around (the pool is skipped; the conformance cases
    up-no-allocation-from-incomplete-pool, up-obsolete-slice, up-invalid-pool-* expect
    exactly that), so refusing the input would be wrong there. A caller that wants to be
    told (a linter, `dra-solver validate` for its warnings) asks with `pools=True`.
    `gates`: also refuse fields of disabled features (`api.validate.gate_problems`).
    """
    return structural.validate_cluster(cluster, source_of, cel_compile_problem, pools=pools, gates=gates)
