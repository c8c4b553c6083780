"""Plans about plans, above the pipeline.

`filling` answers how many more replicas of a pod fit once the pending pods are placed
(`fill`), and `sweep` runs one plan per scenario (`plan --scenario`). Node templates are
objects (`api.templates`); which copies a plan adds is a planner (`planners.whatif`).
"""
