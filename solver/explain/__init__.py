"""Why not, per node: `dra-solver explain` and `dra_solver.why`.

`diagnosis` answers per node, grouped, with the detail behind a reason; `blocking` finds a
minimal set of rule groups that together block a node (CP-SAT assumptions). One Problem's "no"
in one line is the reference's own (`reference.reasons`); the reasons of pods a plan leaves
out are the planners' (`planners.crowding`).
"""
