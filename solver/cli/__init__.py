"""The command line, `dra-solver validate | check | allocate | plan | explain`: loads,
validates, calls the pipeline, prints; a module per command, the app in `main`.

`run` is the console script (`dra_solver.cli:run` in pyproject.toml) and `python -m dra_solver`.
"""

from .main import app, run

__all__ = ["app", "run"]
