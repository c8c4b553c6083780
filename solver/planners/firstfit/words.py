"""A pod's per-node reasons as values (`NodeReasons`), shared by the pods of a shape.

Why apart from the search: the reasons are found once per (shape, node, state), with the claim
refs and the node as placeholders, and read per pod; the wording is in `reasons.words`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...reasons import Reason
from ...reasons.words import node_words, with_refs


class NodeReasons(Mapping[str | None, str]):
    """`PodPlan.node_reasons` of a pod no node takes: node -> why that node did not take it,
    in words. Holds the values (`whys`: one `Reason` per node, shared by the pods of one
    shape, the claim refs and the node as placeholders); a node's words are made when read,
    with this pod's claim refs and the node's name put in, so that a full cluster costs no
    per-pod, per-node strings."""

    def __init__(self, whys: Mapping[str | None, Reason], refs: list[str]) -> None:
        self.whys = whys
        """Node -> why it did not take the pod (a value; `reasons.words.node_words` words it)."""
        self._refs = refs

    def __getitem__(self, node: str | None) -> str:
        return with_refs(node_words(node, self.whys[node]), self._refs)

    def __iter__(self) -> Iterator[str | None]:
        return iter(self.whys)

    def of_claims(self, refs: list[str]) -> NodeReasons:
        """The same reasons for a pod of the same shape with these claim refs."""
        return NodeReasons(self.whys, refs)

    def __len__(self) -> int:
        return len(self.whys)

    def __repr__(self) -> str:
        return repr(dict(self))


__all__ = ["NodeReasons"]
