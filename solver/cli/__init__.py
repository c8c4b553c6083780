"""The command line, `dra-solver validate | check | allocate | plan | explain`: loads,
validates, calls the pipeline, prints; a module per command, the app in `main`.

`entry` is the console script (`dra_solver.cli:entry` in pyproject.toml) and `python -m
dra_solver`: `run`, then, for a run given `--timeout`, the process's end at once (`main.end_now`).
"""

from .main import app, entry, run

__all__ = ["app", "entry", "run"]
