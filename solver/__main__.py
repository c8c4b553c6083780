"""`python -m dra_solver` runs the `dra-solver` command line (same as the console script)."""

from .cli.main import entry

if __name__ == "__main__":
    entry()
