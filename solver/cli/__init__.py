"""The command line, `dra-solver validate | check | allocate | plan | explain`: loads,
validates, calls the pipeline, prints; a module per command, the app in `main`.

`console` is the console script (`dra_solver.cli:console` in pyproject.toml) and `python -m
dra_solver`: `run`, then, for a run given `--timeout`, the process's end at once (`main.end_now`).
"""

from .main import app, console, run

__all__ = ["app", "console", "run"]
