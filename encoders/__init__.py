"""CP-SAT encoders: one module per constraint family over the flat solver.problem.Problem."""
