"""`python -m dra_solver` runs the `dra-solver` command line (same as the console script)."""

from dra_solver.cli.main import run

if __name__ == "__main__":
    run()
