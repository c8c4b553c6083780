"""First fit's words: a pod's reasons per node, grouped and counted into one line.

Why apart from the search: the same wording serves the batch plan, the resumable plan and the
solo answers, with claim refs as placeholders put in per pod (`with_refs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache

DETAIL_NODES = 4
"""Up to this many candidate nodes, an unplaced pod's reason names every node's reason; above
it, the reason is one line of counts by reason (the per-node detail is `PodPlan.node_reasons`)."""


_CLAIM = "\x00claim{}\x00"
_NODE = "\x00node\x00"
"""Placeholders for names in a reason computed once per (shape, node, version)."""


class NodeReasons(Mapping[str | None, str]):
    """`PodPlan.node_reasons` of a pod first fit could not place: node -> why that node did not
    take it. The texts are shared by the pods of one shape; each pod's claim refs are put in
    when a text is read, so that a full cluster costs no per-pod, per-node strings."""

    def __init__(self, texts: dict[str | None, str], refs: list[str]) -> None:
        self._texts = texts
        self._refs = refs

    def __getitem__(self, node: str | None) -> str:
        return with_refs(self._texts[node], self._refs)

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return repr(dict(self))


def why_not(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str] | None = None) -> str:
    """One line for a pod that fits nowhere: the node's reason when there is one node, every
    node's reason when there are few, else the counts of the two most common reasons
    (`templates`: the reasons with node names taken out, so that equal reasons group)."""
    if len(reasons) == 1:
        return reasons[0][1]
    if len(reasons) <= DETAIL_NODES or templates is None:
        return "no node fits the pod: " + "; ".join(f"{n}: {r}" for n, r in reasons)
    return f"no node fits the pod (0 of {len(reasons)} nodes): " + "; ".join(
        reason_groups(reasons, templates)
    )


def reason_groups(reasons: Sequence[tuple[str | None, str]], templates: Sequence[str]) -> list[str]:
    """The parts of `why_not`'s line over many nodes: the two most common reasons with their
    node counts, then how many nodes are left for how many other reasons."""
    return counted_groups(template_counts(templates), len(reasons))


def template_counts(templates: Iterable[str]) -> dict[str, int]:
    """Each distinct template with the number of nodes that have it, in order of first
    appearance: all that `reason_groups` reads of the node-ordered list (`counted_groups`)."""
    counts: dict[str, int] = {}
    for text in templates:
        counts[text] = counts.get(text, 0) + 1
    return counts


def counted_groups(counts: Mapping[str, int], total: int) -> list[str]:
    """`reason_groups` from the distinct templates and their node counts (`template_counts`)
    over `total` nodes. Why: a group's size, its first text and its distinct texts in order of
    first appearance are all the wording uses, so pods that share the templates but not the
    claim names put their names into the few distinct texts, not into every node's."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for text, n in counts.items():  # reasons that differ only in numbers group, numbers as ranges
        groups.setdefault(_numberless(text), []).append((text, n))
    sized = [(sum(n for _, n in members), members) for members in groups.values()]
    top = sorted(sized, key=lambda g: g[0], reverse=True)[:2]  # stable: ties in node order
    parts = [
        f"{size} node{'s' if size != 1 else ''}: {_ranges([t for t, _ in members])}" for size, members in top
    ]
    rest = total - sum(size for size, _ in top)
    if rest:
        others = len(groups) - len(top)
        parts.append(f"{rest} more node{'s' if rest != 1 else ''} for {others} other reason(s)")
    return parts


_TOKENS = re.compile(r"\x00claim\d+\x00|\d+")
"""A claim placeholder (`_CLAIM`, kept whole: its index names a claim, it is no count) or a
number. Why: two claims' reasons that differ only in their numbers are different reasons;
grouped as one, they printed the placeholder itself and mixed the claims' counts."""


def _is_number(token: str) -> bool:
    return not token.startswith("\x00")


@lru_cache(maxsize=1 << 16)
def _numberless(text: str) -> str:
    """`text` with its numbers as `#` (claim placeholders kept). Cached: the same reason text
    recurs on every node of a kind, for every pod of a shape (first fit words a full cluster
    pod after pod)."""
    return _TOKENS.sub(lambda m: "#" if _is_number(m[0]) else m[0], text)


@lru_cache(maxsize=1 << 16)
def _numbers(text: str) -> tuple[str, ...]:
    """The numbers in `text`, in order, claim placeholders left out (cached as `_numberless`)."""
    return tuple(t for t in _TOKENS.findall(text) if _is_number(t))


def _ranges(texts: list[str]) -> str:
    """Texts equal but for their numbers, as one text: a number that varies becomes `low-high`."""
    numbers = list(zip(*(_numbers(t) for t in dict.fromkeys(texts)), strict=True))
    out, at, i = [], 0, 0
    for m in _TOKENS.finditer(texts[0]):
        out.append(texts[0][at : m.start()])
        at = m.end()
        if not _is_number(m[0]):
            out.append(m[0])
            continue
        values = numbers[i]
        i += 1
        low, high = min(values, key=int), max(values, key=int)
        out.append(values[0] if len(set(values)) == 1 else f"{int(low)}-{int(high)}")
    out.append(texts[0][at:])
    return "".join(out)


def with_refs(text: str, refs: list[str]) -> str:
    for i, ref in enumerate(refs):
        text = text.replace("/" + _CLAIM.format(i), ref)
    return text
