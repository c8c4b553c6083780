"""What-if plans: which nodes to add so that the pods fit, and plans about plans.

`templates` copies a template Node and its ResourceSlices under new names, `model` decides how
many copies of each template a plan adds (the aggregated model with template multiplicities,
or first fit over the candidate copies), `filling` answers how many more replicas of a pod fit
once the pending pods are placed (`fill`), and `sweep` runs one plan per scenario
(`plan --scenario`).
"""
