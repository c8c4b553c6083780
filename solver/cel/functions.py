"""Function overloads: how the libraries declare functions and how calls resolve.

Why a registry of typed overloads (like cel-go's ``cel.Function(name, overloads...)``)
instead of cel-python's ``functions={name: callable}``: celpy binds one Python callable
per name and lets it guess from the argument types, so ``indexOf`` on a string and on a
list, or ``compareTo`` on a quantity and on a semver, would all have to live in one
function, and nothing would tell a member call (``q.sign()``) from a global one. Here
each overload names its receiver style, its parameter types (used by the checker at
compile time and as runtime guards for ``dyn`` arguments), its result type and an
optional cost function for operations whose cost grows with their input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from .typesys import Type, runtime_check
from .values import CostLimitExceeded, EvalError

__all__ = ["MAX_SIZE", "Overload", "REGISTRY", "check_size", "fail", "register"]

#: Largest string/list/bytes a single operation may build. Anything bigger would cost
#: more than the whole evaluation budget (cost = size / 10), so refuse before building.
MAX_SIZE: Final = 10_000_000


def check_size(n: int) -> None:
    """Raise the cost-limit error before building an oversized value."""
    if n > MAX_SIZE:
        raise CostLimitExceeded("actual cost limit exceeded")


def fail(message: str) -> EvalError:
    """Build an :class:`EvalError` (``raise fail(...)`` reads well in library code)."""
    return EvalError(message)


@dataclass(frozen=True)
class Overload:
    """One overload of a CEL function.

    ``params`` include the receiver first when ``member`` is true. ``result`` is a type or
    a function of the argument types (for generic functions such as ``list.min()``).
    ``cost`` returns the extra cost of one call from its arguments and result (the base
    cost of every call is 1). ``pure`` overloads with constant arguments are folded at
    compile time when they succeed.
    """

    name: str
    member: bool
    params: tuple[Type, ...]
    result: Type | Callable[[tuple[Type, ...]], Type]
    impl: Callable[..., Any]
    cost: Callable[[tuple[Any, ...], Any], int] | None = None
    pure: bool = True
    checks: tuple[Callable[[Any], bool] | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(runtime_check(p) for p in self.params))

    def result_type(self, args: tuple[Type, ...]) -> Type:
        r = self.result
        return r(args) if callable(r) else r

    def accepts(self, values: tuple[Any, ...]) -> bool:
        """Do the runtime values meet the parameter types?"""
        for check, v in zip(self.checks, values, strict=True):
            if check is not None and not check(v):
                return False
        return True


#: name -> overloads, in declaration order
REGISTRY: Final[dict[str, list[Overload]]] = {}


def register(overloads: Iterable[Overload]) -> None:
    for o in overloads:
        REGISTRY.setdefault(o.name, []).append(o)
