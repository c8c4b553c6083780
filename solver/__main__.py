"""`python -m dra_solver` runs the `dra-solver` command line (same as the console script)."""

from .cli.main import console

if __name__ == "__main__":
    console()
