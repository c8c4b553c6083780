"""dra-solver: optimal allocation for Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1).

Public API: load objects into a `Cluster`, then `allocate()` claims on a node with the
upstream-faithful reference allocator or the CP-SAT optimiser.
"""

from dra_solver.allocate import AllocationOutcome, allocate
from dra_solver.api.cluster import Cluster
from dra_solver.gates import FeatureGates

__all__ = ["AllocationOutcome", "Cluster", "FeatureGates", "allocate"]
