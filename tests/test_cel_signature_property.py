"""Property: the signature cache never changes a result (value or error) of any evaluation."""

from __future__ import annotations

from typing import Any

from example_counts import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_solver.api.quantity import Quantity
from dra_solver.cel import DeviceView, EvalCache, Semver, compile_expression
from dra_solver.errors import CelRuntimeError

D = "gpu.example.com"

EXPRESSIONS = [
    f'device.attributes["{D}"].model == "a100"',
    f'has(device.attributes["{D}"].model) && device.attributes["{D}"].model.startsWith("a")',
    f'"count" in device.attributes["{D}"] ? device.attributes["{D}"].count : -1',
    f'device.attributes["{D}"].?count.orValue(0) + 1',
    f'device.capacity["{D}"].memory.isGreaterThan(quantity("1Gi"))',
    "device.attributes[device.driver].model",
    "device.driver.replace('gpu', '')",
    f'device.attributes["{D}"].size()',
    "device.attributes.exists(d, d == 'other.example.com')",
    f'device.attributes["{D}"].tags.exists(t, t == "x")',
    f'device.attributes["{D}"].version.isGreaterThan(semver("1.0.0"))',
    "[device.driver, device.driver].size()",
    "device.allowMultipleAllocations || device.driver == 'other'",
    f'cel.bind(a, device.attributes["{D}"], a.model + string(a.count))',
]
PROGRAMS = [compile_expression(e) for e in EXPRESSIONS]

values = st.one_of(
    st.sampled_from(["a100", "h100", "1", ""]),
    st.integers(-2, 2),
    st.booleans(),
    st.sampled_from([Semver("1.0.0"), Semver("2.0.0-rc.1"), Semver("1.0")]),
    st.lists(st.sampled_from(["x", "y"]), max_size=2).map(tuple),
)
attribute_maps = st.dictionaries(st.sampled_from(["model", "count", "tags", "version"]), values, max_size=4)


@st.composite
def devices(draw: st.DrawFn) -> DeviceView:
    driver = draw(st.sampled_from([D, "other.example.com"]))
    attrs: dict[str, dict[str, Any]] = {D: draw(attribute_maps)}
    if draw(st.booleans()):
        attrs["other.example.com"] = draw(attribute_maps)
    caps = {D: {"memory": Quantity.parse(draw(st.sampled_from(["512Mi", "1Gi", "1024Mi", "80Gi"])))}}
    return DeviceView(
        driver,
        draw(st.sampled_from(["gpu0", "gpu1"])),
        attrs,
        caps if draw(st.booleans()) else {},
        draw(st.booleans()),
    )


def outcome(fn: Any, *args: Any) -> tuple[str, str]:
    """The result in a form where True != 1 and Quantity("1Ki") != Quantity("1024")."""
    try:
        return ("ok", repr(fn(*args)))
    except CelRuntimeError as ex:
        return ("error", ex.reason)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(devices(), min_size=2, max_size=12))
def test_cached_results_equal_direct_results(batch: list[DeviceView]) -> None:
    cache = EvalCache()
    for device in batch:
        for p in PROGRAMS:
            assert outcome(cache.evaluate, p, device) == outcome(p.evaluate, device)
