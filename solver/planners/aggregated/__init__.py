"""The plan at scale: pods and nodes grouped into classes, and how many nodes of each class take
which pattern of pods (docs/architecture.md, "The plan at scale").

`classes` groups interchangeable pods and nodes, `patterns` decides what fits on one node of a
class (the per-device CP-SAT model), `allpatterns` lists every maximal pattern where there are
few, `master` is the aggregated model over the classes (column generation), `pools` the same
model over network-attached pools, and `expansion` turns the model's plan into pods on nodes
with devices, checked.
"""
