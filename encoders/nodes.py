"""Node co-location: the claims of one pod land together, on one node.

Active for multi-node Problems (`Problem.nodes` non-empty, built by
`solver.problem.merge`); for claims with a `group` (pod index) it also ties their placed
flags in single-node Problems. Single-node Problems without groups are unchanged.

Math (booleans), for every group (pod) g with claims C(g) and allowed nodes N(g) (all of
`Problem.nodes` unless `Problem.group_nodes` restricts them):
- y[g, n] for n in N(g): pod g runs on node n;
- sum_{n in N(g)} y[g, n] = placed[c] for every c in C(g): a placed pod is on exactly one
  node, and its claims are all placed or none (single-node: placed[c] = placed[c'] for
  c, c' in C(g));
- x[a, d] <= sum_{n in N(g(a)) ∩ nodes(a, d)} y[g(a), n], where nodes(a, d) is
  `Candidate.nodes` (the nodes on which d is a candidate of a — a subset of the nodes that
  see d): a device serves a pod only if the pod's node sees it and allows it there;
- for a group of interchangeable devices G (`encoders.groups` keys groups by these node
  sets, so they are equal over G): n[a, G] <= |G| * sum_{n in ...} y[g(a), n].
- allocationMode All (`Alternative.all_sets`: S_n per node where the request is usable, only
  sets whose members are all allowed count): chosen[a] + y[g, n] <= 1 for nodes without
  such a set; otherwise, for every column (device d or group G, of size s) of a:
  col <= s * chosen[a]; col >= s * (chosen[a] + y[g, n] - 1) when it lies in S_n, and
  col <= s * (1 - y[g, n]) when not (groups share their node sets, so a group lies wholly
  inside or outside S_n) — a chosen All request on node n takes exactly S_n.
A claim without a group in a multi-node Problem is its own group. A bare group (a pod
without claims, `Problem.bare_groups`) has its own boolean: sum_{n in N(g)} y[g, n] =
pod_placed[g].
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from dra_solver.problem.flat import Assignment, Problem

from .model import Allowed, Cover, IntVar, Model, total, viable_all_sets


def group_key(problem: Problem, claim: int) -> int:
    """The group of a claim; claims without one get a private negative key."""
    g = problem.claims[claim].group
    return g if g is not None else -1 - claim


def group_claims(problem: Problem) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for c in problem.claims:
        out.setdefault(group_key(problem, c.index), []).append(c.index)
    return out


def pod_flags(m: Model) -> dict[int, IntVar]:
    """group -> the boolean "this pod is placed": placed[first claim] of a group with claims,
    pod_placed[g] of a bare group (families that constrain pods, not devices, read these)."""
    out = {g: m.placed[cs[0]] for g, cs in group_claims(m.problem).items()}
    out.update(m.pod_placed)
    return out


def allowed_nodes(problem: Problem, g: int) -> tuple[str, ...]:
    return problem.group_nodes.get(g, problem.nodes)


def add(m: Model) -> None:
    """y[g, n], one node per placed pod, and devices only from the pod's node."""
    p, cp = m.problem, m.cp
    groups = group_claims(p)
    if not p.nodes:
        for g, cs in groups.items():
            if g >= 0:
                for c in cs[1:]:
                    cp.add(m.placed[c] == m.placed[cs[0]])
        return
    for g, cs in groups.items():
        ys: list[IntVar] = []
        for n in allowed_nodes(p, g):
            y = cp.new_bool_var(f"y[{g},{n}]")
            m.node_y[(g, n)] = y
            ys.append(y)
        for c in cs:
            cp.add(total(ys) == m.placed[c])
    for g in sorted(p.bare_groups):
        placed = cp.new_bool_var(f"pod_placed[{g}]")
        m.pod_placed[g] = placed
        ys = []
        for n in allowed_nodes(p, g):
            y = cp.new_bool_var(f"y[{g},{n}]")
            m.node_y[(g, n)] = y
            ys.append(y)
        cp.add(total(ys) == placed)
    for alt in p.alternatives:
        a = alt.index
        g = group_key(p, alt.claim)
        for d, v in m.x_by_alt.get(a, []):
            cp.add(v <= total(_ys(m, g, a, d)))
        for grp, v in m.n_by_alt.get(a, []):
            size = len(m.groups[grp].devices)
            cp.add(v <= size * total(_ys(m, g, a, m.groups[grp].devices[0])))
        if alt.mode == "All" and alt.all_sets is not None and a not in m.impossible:
            _all(m, a, g)


def _all(m: Model, a: int, g: int) -> None:
    """Multi-node All: exactly the set of the pod's node (see the module docstring)."""
    cp, chosen = m.cp, m.chosen[a]
    sets = viable_all_sets(m.problem.alternatives[a], m.allowed[a])
    cols = [(d, 1, v) for d, v in m.x_by_alt.get(a, [])]
    cols += [(m.groups[grp].devices[0], len(m.groups[grp].devices), v) for grp, v in m.n_by_alt.get(a, [])]
    for _, size, v in cols:
        cp.add(v <= size * chosen)
    for n in allowed_nodes(m.problem, g):
        y = m.node_y[(g, n)]
        members = sets.get(n)
        if members is None:
            cp.add(chosen + y <= 1)  # the request can not be served on n
            continue
        inside = set(members)
        for d, size, v in cols:
            if d in inside:
                cp.add(v >= size * (chosen + y - 1))
            else:
                cp.add(v <= size * (1 - y))


def _ys(m: Model, g: int, a: int, d: int) -> list[IntVar]:
    where = _cand_nodes(m, a, d)
    return [m.node_y[(g, n)] for n in allowed_nodes(m.problem, g) if n in where]


def _cand_nodes(m: Model, a: int, d: int) -> frozenset[str]:
    cand = m.allowed[a][d]
    if cand.nodes is not None:
        return cand.nodes
    dev = m.problem.devices[d]
    return dev.nodes if dev.nodes is not None else frozenset(m.problem.nodes)


def decode_nodes(m: Model, value: Callable[[IntVar], int]) -> dict[int, str]:
    """group -> the node chosen for it (placed groups only)."""
    return {g: n for (g, n), y in m.node_y.items() if value(y)}


def hint_nodes(m: Model, assignment: Assignment, nodes: dict[int, str] | None) -> list[tuple[IntVar, int]]:
    """Values of y implied by `assignment`: the given node per group, else the first allowed
    node on which every placement of the group is possible."""
    p = m.problem
    if not p.nodes:
        return []
    chosen: dict[int, str] = {g: nodes[g] for g in p.bare_groups if nodes is not None and g in nodes}
    for g, cs in group_claims(p).items():
        if not all(c in assignment for c in cs):
            continue
        if nodes is not None and g in nodes:
            chosen[g] = nodes[g]
            continue
        for n in allowed_nodes(p, g):
            pls = [pl for c in cs for pl in assignment[c]]
            if all(pl.device in m.allowed.get(pl.alternative, {}) for pl in pls) and all(
                n in _cand_nodes(m, pl.alternative, pl.device) for pl in pls
            ):
                chosen[g] = n
                break
    ys = [(y, int(chosen.get(g) == n)) for (g, n), y in m.node_y.items()]
    return ys + [(v, int(g in chosen)) for g, v in m.pod_placed.items()]


def device_key(problem: Problem, d: int, alts: list[int], allowed: Allowed, cover: Cover) -> Hashable | None:
    """What this family reads of a device (`encoders.groups`): the nodes that see it and, per
    alternative, the nodes that allow it, so `add` treats a group's devices alike."""
    dev = problem.devices[d]
    where = tuple(_sorted_or_none(allowed[a][d].nodes) for a in alts)
    return (_sorted_or_none(dev.nodes), where)


def _sorted_or_none(nodes: frozenset[str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(nodes)) if nodes is not None else None
