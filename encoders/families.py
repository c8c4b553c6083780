"""The encoder families, in the order `encoders.build` adds them.

Why a list: every family that adds rules over devices must also say which device facts it
reads (`device_key`), or `encoders.groups` would merge devices the family tells apart. Being
in this list is how a family gets built, so a family cannot be added without its key (a test
checks every encoder module with an `add` is listed and has one).

Each family module provides:
- `add(m)`: its variables and constraints (module docstring states the math);
- `device_key(problem, d, alts, allowed, cover)`: the hashable facts of device `d` the family
  reads (over the alternatives `alts` that may take it), or None if `d` must stay on its own.
"""

from __future__ import annotations

from . import capacity, compat, constraints, counters, exclusive, gangs, nodes, requests, resources

FAMILIES = (requests, nodes, resources, gangs, exclusive, capacity, counters, compat, constraints)
