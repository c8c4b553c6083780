"""First fit's per-node words of a pod it could not place, shared by the pods of a shape.

Why apart from the search: the texts are worded once per (shape, node, state), with the claim
refs as placeholders (`reasons.words.with_refs`), and read per pod; the wording itself is in
`reasons.words`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...reasons.words import with_refs


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

    def of_claims(self, refs: list[str]) -> NodeReasons:
        """The same words for a pod of the same shape with these claim refs."""
        return NodeReasons(self._texts, refs)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return repr(dict(self))


__all__ = ["NodeReasons"]
