"""Device compatibility groups (KEP-5963, DRADeviceCompatibilityGroups; docs/semantics.md,
"Device compatibility groups (KEP-5963)").

Math, per counter set S (`DeviceInfo.compat`): a device *joins* S when it is used and not
already allocated (neither busy nor a multi device with existing shares: those are in the
baseline `Problem.compat_baseline[S]`). With G(d) the groups of d on S (maybe empty), the
joining devices J and the baseline B, upstream's running intersection accepts exactly when
either every member of B and J has no groups, or every member has groups and they share one.
So, for the devices that may join S:
- B holds only devices without groups: used[d] = 0 for every d with G(d) non-empty;
- B holds devices with groups, intersection I: used[d] = 0 for every d with G(d) ∩ I empty
  (those without groups included); the common group is chosen from C = I;
- no B: C = union of the G(d), and a boolean h ("grouped members"): used[d] <= |d| h for d
  with groups, used[d] <= |d| (1 - h) for d without (|d|: a group variable's size);
- a common group: booleans z_c for c in C, sum z_c = 1, and z_c => used[d] = 0 for every
  d with groups that lacks c (used[d] <= |d| (1 - z_c)).
Nothing is added where it cannot bind (every candidate without groups and no grouped
baseline, or the candidates' groups and I share a group). Static part (`forbidden`): a
joining device the baseline alone refuses is never placed.
"""

from __future__ import annotations

from collections.abc import Hashable

from dra_solver.problem.flat import Alternative, Candidate, CompatKey, DeviceInfo, Problem, compat_admits

from .model import Allowed, Cover, IntVar, Model


def joins(dev: DeviceInfo) -> bool:
    """Using the device adds it to its counter sets' members in this call."""
    return bool(dev.compat) and not (dev.busy or dev.shared_in_use)


def forbidden(problem: Problem, alt: Alternative, cand: Candidate) -> bool:
    """A joining device whose groups the counter set's allocated devices already refuse."""
    dev = problem.devices[cand.device]
    return joins(dev) and not all(compat_admits(problem.compat_baseline.get(k), g) for k, g in dev.compat)


def add(m: Model) -> None:
    """Per counter set with possible joiners: the rules of the module docstring."""
    p = m.problem
    members: dict[CompatKey, list[Member]] = {}
    for d, used in m.used.items():
        dev = p.devices[d]
        if joins(dev):
            for k, g in dev.compat:
                members.setdefault(k, []).append((used, 1, g))
    for grp in m.groups:
        dev = p.devices[grp.devices[0]]  # members share their groups (`device_key`)
        if joins(dev):
            for k, g in dev.compat:
                members.setdefault(k, []).append((m.group_used[grp.index], len(grp.devices), g))
    for key in sorted(members):
        _add_set(m, key, members[key])


Member = tuple[IntVar, int, frozenset[str]]
"""A possible joiner of a counter set: its used variable, its size (1, or a group's), its groups."""


def _add_set(m: Model, key: CompatKey, members: list[Member]) -> None:
    cp = m.cp
    base = m.problem.compat_baseline.get(key)
    grouped = [(u, size, g) for u, size, g in members if g]
    plain = [(u, size) for u, size, g in members if not g]
    if base is not None and base.groups is None:  # only devices without groups so far
        for u, _, _ in grouped:
            cp.add(u == 0)
        return
    if base is not None:
        for u, _ in plain:
            cp.add(u == 0)
        common = set(base.groups or ())
        for u, _, g in grouped:
            if not g & common:
                cp.add(u == 0)
        grouped = [(u, size, g) for u, size, g in grouped if g & common]
    else:
        common = set().union(*(g for _, _, g in grouped)) if grouped else set()
        if grouped and plain:
            _grouped_or_plain(m, key, grouped, plain)
    _common_group(m, key, grouped, common)


def _grouped_or_plain(
    m: Model, key: CompatKey, grouped: list[Member], plain: list[tuple[IntVar, int]]
) -> None:
    """No baseline: the joiners either all declare groups (h) or all declare none."""
    cp = m.cp
    h = cp.new_bool_var(f"compat_grouped[{'/'.join(key)}]")
    for u, size, _ in grouped:
        cp.add(u <= size * h)
    for u, size in plain:
        cp.add(u <= size * (1 - h))


def _common_group(m: Model, key: CompatKey, grouped: list[Member], common: set[str]) -> None:
    """The grouped joiners (and the baseline, through `common`) share one group."""
    if not grouped:
        return
    shared = set(common)
    for _, _, g in grouped:
        shared &= g
    if shared:
        return  # every candidate declares one group the baseline (if any) allows: always fits
    cp = m.cp
    z = {c: cp.new_bool_var(f"compat_common[{'/'.join(key)},{c}]") for c in sorted(common)}
    cp.add_exactly_one(list(z.values()))
    for c, zc in z.items():
        for u, size, g in grouped:
            if c not in g:
                cp.add(u <= size * (1 - zc))


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): its groups per counter set."""
    return problem.devices[d].compat
