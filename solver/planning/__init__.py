"""The planning code's ground floor: the plan's data and the stages around every planner.

`job` (the data: Options, Job, Unit, Member, Gang, PodPlan, PlanOutcome), `gangs` (every gang
rule), `resolve` (pods and nodes in, `make_job`), `ledger` (placements checked and recorded),
`finish` (per-pod plans out). The planners (`solver.firstfit`, `solver.allocators`,
`solver.aggregate`, `solver.whatif`) sit above it; `solver.pipeline` runs them in order.
"""
