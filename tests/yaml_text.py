"""YAML text the tests read back (the CLI's output, a dump), parsed by libyaml where PyYAML has it.

Why: PyYAML's `safe_load` is pure Python, about 0.2 CPU s over a plan or a dump of the example
cluster, and several tests read one or more of those; its C loader (`CSafeLoader`, the same
constructors over libyaml's parser) gives the same data in a tenth of that. Where PyYAML was
built without libyaml, the pure-Python loader reads it as before."""

from __future__ import annotations

from typing import Any

import yaml

SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """The one YAML document in `text`, as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=SAFE_LOADER)  # a safe loader: the C one, or SafeLoader
