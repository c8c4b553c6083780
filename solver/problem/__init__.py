"""PRECOMPUTE and the flat Problem.

`dra_solver.problem.flat` is the plain, integer-indexed Problem that the allocators and the
encoders read: it imports no pydantic, no CEL and no checker, so `dra_solver.encoders` stays
light. The other modules turn API objects into that Problem: `build` (one allocation call on
one node), `merge` (many pods over many nodes), `devices`, `requests` and `constraints` (the
parts of `build`), `capacity` and `taints` (the KEP-5075 rounding and the toleration rule),
`pods` (a pod's claims and the nodes it may run on).

This `__init__` imports nothing, so importing the flat Problem loads nothing else.
"""
