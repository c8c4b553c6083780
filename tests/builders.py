"""Small builders for resource.k8s.io/v1 objects as dicts, so rule tests read like the KEP."""

from __future__ import annotations

from typing import Any


def device_class(name: str, driver: str = "gpu.example.com", *extra: str) -> dict[str, Any]:
    selectors = [{"cel": {"expression": f'device.driver == "{driver}"'}}] + [
        {"cel": {"expression": e}} for e in extra
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": selectors},
    }


def device(
    name: str,
    *,
    attrs: dict[str, Any] | None = None,
    capacity: dict[str, Any] | None = None,
    multi: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    if attrs:
        d["attributes"] = {k: _attr(v) for k, v in attrs.items()}
    if capacity:
        d["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in capacity.items()}
    if multi:
        d["allowMultipleAllocations"] = True
    d.update(extra)
    return d


def _attr(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, list):
        return {"ints" if all(isinstance(x, int) for x in v) else "strings": v}
    return {"string": v}


def resource_slice(
    name: str,
    devices: list[dict[str, Any]],
    *,
    driver: str = "gpu.example.com",
    node: str | None = "node-1",
    pool: str | None = None,
    generation: int = 1,
    count: int = 1,
    **spec_extra: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or name, "generation": generation, "resourceSliceCount": count},
        "devices": devices,
    }
    if node is not None:
        spec["nodeName"] = node
    spec.update(spec_extra)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def request(name: str, class_name: str = "gpu", **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": class_name, **exactly}}


def claim(
    name: str,
    requests: list[dict[str, Any]],
    constraints: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": requests}},
    }
    if constraints:
        obj["spec"]["devices"]["constraints"] = constraints
    if status:
        obj["status"] = status
    return obj


def allocated(name: str, results: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """A claim that already holds devices (models what is in use)."""
    reqs = sorted({r["request"] for r in results})
    return claim(
        name, [request(r) for r in reqs], status={"allocation": {"devices": {"results": results}}}, **kw
    )


def result(
    device_name: str, *, request: str = "gpu", driver: str = "gpu.example.com", pool: str = "s1", **extra: Any
) -> dict[str, Any]:
    return {"request": request, "driver": driver, "pool": pool, "device": device_name, **extra}
