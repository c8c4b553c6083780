"""Every way a plan is made, one floor per module or folder (docs/architecture.md).

From the ground up: `bounds` (what a plan may claim: the valid bound, OPTIMAL), `firstfit/`
(the scheduler's pod-after-pod plan), `aggregated/` (the plan at scale), `perdevice` (the exact
model over devices), `policy` (which model plans a job), `crowding` (the reasons of pods left
out), `whatif` (which node templates to add), `run` (one run), `partition` (`--partitions`).
"""
