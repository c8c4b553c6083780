"""`python -m dra_solver` runs the `dra-solver` command line (same as the console script)."""

from .cli.main import run

if __name__ == "__main__":
    run()
