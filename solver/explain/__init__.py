"""Why not: reasons, in words, for claims and pods that get no allocation.

`reasons` words why one precomputed Problem has no allocation in one line (what `allocate` and
`plan` print), `blocking` finds a minimal set of rule groups that together block a node (CP-SAT
assumptions), `crowding` orders a left-out pod's reasons by what would have to change (first
the nodes where only the plan's other pods stand in the way), and `diagnosis` is
`dra-solver explain` / `dra_solver.why`: per node, grouped, with the detail behind a reason.
"""
