"""Feeding a plan back always works (issue #27 §4): `plan A --output-mode full > B; plan B` exits
0 or 2 and places nothing twice — also when A's plan holds shares of multi-allocatable devices
(KEP-5075 consumable capacity), whose shareIDs the next run must take as used."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver.api.cluster import Cluster
from dra_solver.api.models import ResourceClaim
from dra_solver.cli.main import app
from dra_solver.pipeline import plan
from dra_solver.results import ShareIDs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "gpu-cluster.yaml"
"""Two nodes, each with two shared GPUs (allowMultipleAllocations, 80Gi in 10Gi steps)."""
runner = CliRunner()


def _shared_claim(name: str) -> dict[str, Any]:
    """A 25Gi slice of a shared GPU, as the example's `shared-gpu`."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "selectors": [{"cel": {"expression": "device.allowMultipleAllocations"}}],
                            "capacity": {"requests": {"memory": "25Gi"}},
                        },
                    }
                ]
            }
        },
    }


def _plan_full(tmp_path: Path, name: str, *inputs: str, extra: tuple[str, ...] = ()) -> tuple[int, Path]:
    """`dra-solver plan INPUTS --output-mode full > name`: the exit code and the file."""
    result = runner.invoke(app, ["plan", *inputs, "--output-mode", "full", *extra])
    assert result.exit_code in (0, 2), result.stderr[-2000:]
    out = tmp_path / name
    out.write_text(result.stdout)
    return result.exit_code, out


def _claims(path: Path) -> dict[str, ResourceClaim]:
    cluster = Cluster.from_paths([path])
    return {c.namespaced_name: c for c in cluster.claims.values()}


def _results(claims: dict[str, ResourceClaim]) -> list[tuple[str, tuple[str, str, str], str | None]]:
    out = []
    for ref, c in claims.items():
        alloc = c.status.allocation if c.status else None
        for r in alloc.devices.results if alloc else []:
            out.append((ref, (r.driver, r.pool, r.device), r.share_id))
    return out


def _nothing_twice(claims: dict[str, ResourceClaim]) -> None:
    """No dedicated device in two results, no shareID twice on one device."""
    results = _results(claims)
    dedicated = Counter(dev for _, dev, sid in results if sid is None)
    shares = Counter((dev, sid) for _, dev, sid in results if sid is not None)
    assert max(dedicated.values(), default=1) == 1, dedicated
    assert max(shares.values(), default=1) == 1, shares


def test_a_full_plan_fed_back_places_nothing_twice(tmp_path: Path) -> None:
    code, after = _plan_full(tmp_path, "b.yaml", str(EXAMPLE))
    assert code == 2  # gpu-with-nic needs DRADerivedAttributes
    first = _claims(after)
    assert first["default/shared-gpu"].status is not None
    again_code, again = _plan_full(tmp_path, "c.yaml", str(after))
    assert again_code == 2
    second = _claims(again)
    _nothing_twice(second)
    for ref, c in first.items():  # what the first run allocated stays as it is
        if c.status is not None and c.status.allocation is not None:
            assert second[ref].status == c.status, ref


def test_a_second_share_of_a_device_shared_in_the_input_gets_a_new_share_id(tmp_path: Path) -> None:
    """Before: exit 1, `shareID … is already used by claim default/shared-gpu (existing)` — the
    second run drew the first run's shareID again from the same seed."""
    _, after = _plan_full(tmp_path, "b.yaml", str(EXAMPLE))
    more = tmp_path / "more.yaml"
    more.write_text(yaml.safe_dump_all([_shared_claim("shared-gpu-2"), _shared_claim("shared-gpu-3")]))
    for allocator in ("cpsat", "reference"):
        code, again = _plan_full(
            tmp_path, f"c-{allocator}.yaml", str(after), str(more), extra=("--allocator", allocator)
        )
        assert code == 2  # still gpu-with-nic
        claims = _claims(again)
        _nothing_twice(claims)
        taken = {sid for ref, _, sid in _results(_claims(after)) if sid}
        new = [sid for ref, _, sid in _results(claims) if ref.startswith("default/shared-gpu-")]
        assert len(new) == 2 and all(sid and sid not in taken for sid in new)
        # the third run takes the second's shares as used too, with the derived-attribute gate on
        gates = ("--feature-gates", "DRADerivedAttributes=true")
        code, third = _plan_full(tmp_path, f"d-{allocator}.yaml", str(again), extra=gates)
        assert code == 0
        _nothing_twice(_claims(third))


def test_share_ids_are_the_same_for_the_same_input_and_seed(tmp_path: Path) -> None:
    _, after = _plan_full(tmp_path, "b.yaml", str(EXAMPLE))
    cluster = Cluster.from_objects([*read_yaml(after.read_text())["items"], _shared_claim("x")])
    ids = [
        [sid for ref, _, sid in _results({c.namespaced_name: c for p in out.pods for c in p.claims}) if sid]
        for out in (plan(cluster), plan(cluster))
    ]
    assert ids[0] == ids[1] and len(ids[0]) == 1


def test_share_ids_skip_the_taken_ones_deterministically() -> None:
    fresh = ShareIDs(7)
    drawn = [fresh.next() for _ in range(3)]
    skipping = ShareIDs(7, taken=drawn[:2])
    assert skipping.next() == drawn[2]
    gap = ShareIDs(7, taken=[drawn[1]])
    assert [gap.next(), gap.next()] == [drawn[0], drawn[2]]
