"""The planning code's ground floor: the plan's data and the stages around every planner.

`job` (what a run is given: Options, Job, Unit, Member, Gang), `outcome` (what it returns:
PodPlan, PlanOutcome, and the summary's reading of it), `gangs` (every gang rule), `resolve`
(pods and nodes in, `make_job`), `triage` (what one bad object costs), `ledger` (placements
checked and recorded), `finish` (per-pod plans out). The planners (`solver.planners`) sit above
it; `solver.pipeline` runs them in order.
"""
