"""First fit: the scheduler's pod-after-pod plan, incremental over nodes.

`engine` answers one pod on one node (worlds, node states, cached answers), `batch` plans a
whole job (`FirstFit`), `resumable` keeps a plan between calls (`Resumable`), `solo` answers
where a pod fits alone (`Solo`), and `words` words the reasons.
"""
