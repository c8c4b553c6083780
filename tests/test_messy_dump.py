"""What a messy dump showed when read as a new user would (issue #39, docs/semantics.md,
"Messy clusters"): each answer names the real cause — a stale slice of a deleted node is not a
node `explain` offers, an unreadable pod's hint is a command that works, a node taint of an
effect the API server refuses blocks (named) rather than being silently ignored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner
from yaml_text import read_yaml

import dra_solver
from dra_solver.cli.main import app

runner = CliRunner()
Items = list[dict[str, Any]]


def _node(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
            **spec,
        },
    }


GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}


def _slice(name: str, pool: str, devices: Items, **scope: Any) -> dict[str, Any]:
    """A gpu.example.com slice of one pool (`scope`: nodeName=..., nodeSelector=...)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            **scope,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _claim(name: str, exactly: dict[str, Any] | None = None, **rest: Any) -> dict[str, Any]:
    """A claim of one request `g` of the GPU class (`exactly`: more of the request)."""
    request = {"name": "g", "exactly": {"deviceClassName": "gpu.example.com", **(exactly or {})}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [request]}},
        **rest,
    }


def _write(tmp_path: Path, items: Items) -> Path:
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_explain_offers_only_the_plans_nodes_not_a_stale_slices(tmp_path: Path) -> None:
    """A slice naming a node the dump's Node objects do not include (its node was deleted) is
    not a node: `plan` never places there, so `explain` must not say the pod fits there."""
    stale = _slice("gone-gpu", "gone", [{"name": "gpu-0"}], nodeName="gone")
    claim = _claim("g")
    pod = _pod("p", resourceClaims=[{"name": "g", "resourceClaimName": "g"}])
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), stale, claim, pod])
    outcome = dra_solver.plan(dra_solver.load([path], strict=False))
    assert not outcome.pod("default/p").placed
    got = runner.invoke(app, ["explain", str(path), "--pod", "default/p"])
    assert got.exit_code == 0, got.stderr
    assert "gone" not in got.stdout and "fits on" not in got.stdout, got.stdout
    assert "node n1: " in got.stdout


def test_an_unreadable_pods_hint_is_explain_pod(tmp_path: Path) -> None:
    bad = _pod("c")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    path = _write(tmp_path, [_node("n1"), bad])
    got = runner.invoke(app, ["plan", str(path), "-o", "name"])
    line = next(x for x in got.stderr.splitlines() if x.startswith("default/c: "))
    assert line.endswith("(details: dra-solver explain --pod default/c)"), line
    explained = runner.invoke(app, ["explain", str(path), "--pod", "default/c"])
    assert (
        explained.exit_code == 0
        and "pod default/c is not planned: the pod could not be read" in explained.stdout
    )


def test_a_node_taint_of_an_unknown_effect_blocks_named_and_validate_refuses_it(tmp_path: Path) -> None:
    taint = {"key": "maintenance", "value": "soon", "effect": "NoScheduleSoon"}
    tolerating = _pod("tolerating", tolerations=[{"key": "maintenance", "operator": "Exists"}])
    path = _write(tmp_path, [_node("n1", taints=[taint]), _pod("plain"), tolerating])
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1
    assert "Node n1: spec.taints[0].effect: unsupported taint effect 'NoScheduleSoon'" in checked.stderr
    cluster = dra_solver.load([path], strict=False)
    assert list(cluster.nodes) == ["n1"]  # kept: only what does not tolerate the taint is refused
    assert any("the taint counts as blocking" in w for w in cluster.warnings), cluster.warnings
    outcome = dra_solver.plan(cluster)
    assert outcome.pod("default/tolerating").node == "n1"
    plain = outcome.pod("default/plain")
    assert not plain.placed and "maintenance=soon:NoScheduleSoon" in (plain.reason or ""), plain.reason


def test_validate_lists_the_unreadable_and_the_invalid_at_once(tmp_path: Path) -> None:
    """An object that cannot be read no longer hides every other problem: `validate` prints
    them all, a reference to the unreadable object said as what it is."""
    future = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "old", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "g", "deviceClassName": "gpu.example.com"}]}}},
    }
    users = [
        _pod("uses-old", resourceClaims=[{"name": "g", "resourceClaimTemplateName": "old"}]),
        _pod("uses-missing", resourceClaims=[{"name": "g", "resourceClaimTemplateName": "missing"}]),
    ]
    got = runner.invoke(app, ["validate", str(_write(tmp_path, [GPU_CLASS, _node("n1"), future, *users]))])
    assert got.exit_code == 1
    lines = [x.split(": ", 1)[1] for x in got.stderr.splitlines() if ": " in x]
    assert lines[0].startswith("ResourceClaimTemplate default/old: apiVersion: unsupported apiVersion")
    assert any(
        x.startswith("Pod default/uses-old: spec.resourceClaims[0].resourceClaimTemplateName: ")
        and "ResourceClaimTemplate default/old could not be read" in x
        for x in lines
    ), lines
    assert any("ResourceClaimTemplate default/missing not found in the input" in x for x in lines), lines
    assert got.stderr.rstrip().endswith("3 errors")


def test_a_nominated_pod_is_warned_about_once(tmp_path: Path) -> None:
    """`status.nominatedNodeName` is read by the scheduler (the nominated node first, its room
    held): not modelled, so said — one warning for every pod that sets it."""
    pods = [{**_pod(f"p{i}"), "status": {"phase": "Pending", "nominatedNodeName": "n1"}} for i in range(2)]
    cluster = dra_solver.load([_write(tmp_path, [_node("n1"), *pods, _pod("plain")])], strict=False)
    (warned,) = [w for w in cluster.warnings if "status.nominatedNodeName" in w]
    assert warned.startswith(
        "status.nominatedNodeName set by 2 pending pods (default/p0, default/p1): not read"
    )
    assert dra_solver.plan(cluster).placed == 3


BAD_SELECTOR = {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Inn", "values": ["a"]}]}]
}
INN = "unsupported operator 'Inn': must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt"


def test_an_unknown_node_selector_operator_costs_only_what_reads_it(tmp_path: Path) -> None:
    """An operator the API server refuses stopped the whole plan (`unsupported node selector
    operator 'Inn'`, exit 1) wherever it was: a pod's required node affinity, a slice's node
    selector, an allocated claim's. Now each is a validation problem of its object: the pod is
    held, the pool left out, the claim's pending users held; the rest is planned."""
    slice_ = _slice("typo", "net", [{"name": "x"}], nodeSelector=BAD_SELECTOR)
    result = {"request": "g", "driver": "gpu.example.com", "pool": "net", "device": "x"}
    allocation = {"devices": {"results": [result]}, "nodeSelector": BAD_SELECTOR}
    claim = _claim("held", status={"allocation": allocation})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": BAD_SELECTOR}}
    pods = [
        _pod("affinity", affinity=affinity),
        _pod("toleration", tolerations=[{"key": "k", "operator": "Sometimes"}]),
        _pod("user", resourceClaims=[{"name": "g", "resourceClaimName": "held"}]),
        _pod("plain"),
    ]
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, claim, *pods])
    got = runner.invoke(app, ["plan", str(path), "-o", "name"])
    assert got.exit_code == 2, got.stderr
    lines = dict(x.split(": ", 1) for x in got.stderr.splitlines() if x.startswith("default/"))
    assert lines["default/plain"] == "node n1"
    assert lines["default/affinity"].startswith(
        "not placed: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        f".nodeSelectorTerms[0].matchExpressions[0].operator: {INN}"
    )
    assert "spec.tolerations[0].operator: unsupported operator 'Sometimes'" in lines["default/toleration"]
    assert "ResourceClaim default/held is not valid: status.allocation.nodeSelector" in lines["default/user"]
    assert any(
        "ResourceSlice typo: spec.nodeSelector" in x and "left out" in x for x in got.stderr.splitlines()
    )
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1 and checked.stderr.rstrip().endswith("4 errors"), checked.stderr
    explained = runner.invoke(app, ["explain", str(path), "--pod", "default/plain"])
    assert explained.exit_code == 0, explained.stderr


def test_a_gang_short_of_a_held_member_names_it(tmp_path: Path) -> None:
    """A gang of minCount 2 whose second pod is held (a deleted template, a scheduling gate)
    cannot start: its healthy pod's reason names the held sibling and why, not only `1 of its
    pods fit` (which read as if the sibling did not fit)."""

    def group(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        }

    member = {"podGroupName": "g1"}
    broken = _pod(
        "broken", schedulingGroup=member, resourceClaims=[{"name": "x", "resourceClaimTemplateName": "gone"}]
    )
    gated = _pod("gated", schedulingGroup={"podGroupName": "g2"}, schedulingGates=[{"name": "wait"}])
    items = [_node("n1"), group("g1"), group("g2"), _pod("ok1", schedulingGroup=member), broken, gated]
    items.append(_pod("ok2", schedulingGroup={"podGroupName": "g2"}))
    for allocator in ("cpsat", "reference"):
        outcome = dra_solver.plan(
            dra_solver.load([_write(tmp_path, items)], strict=False), allocator=allocator
        )
        ok1, ok2 = outcome.pod("default/ok1"), outcome.pod("default/ok2")
        assert not ok1.placed and not ok2.placed
        assert (ok1.reason or "").endswith(
            "fewer than its gang minCount 2; its pod default/broken is left pending: "
            "spec.resourceClaims[0].resourceClaimTemplateName: "
            "ResourceClaimTemplate default/gone not found in the input"
        ), ok1.reason
        assert "its pod default/gated is left pending: waiting for scheduling gates wait" in (
            ok2.reason or ""
        )


def test_a_pod_bound_to_a_deleted_node_is_said(tmp_path: Path) -> None:
    """A dump whose Nodes do not include a bound pod's node (deleted, the pod not yet garbage
    collected): one warning, the pod's claims keep their devices, nothing is planned there."""
    bound = {**_pod("orphan", nodeName="gone"), "status": {"phase": "Running"}}
    cluster = dra_solver.load([_write(tmp_path, [_node("n1"), bound, _pod("plain")])], strict=False)
    (warned,) = [w for w in cluster.warnings if "orphan" in w]
    assert warned.startswith(
        "Pod default/orphan: spec.nodeName: bound to gone, which is not among the input's Nodes"
    )
    outcome = dra_solver.plan(cluster)
    assert outcome.pod("default/plain").node == "n1"


def test_an_unreadable_taint_rule_says_what_leaving_it_out_costs(tmp_path: Path) -> None:
    """Read with a problem or not read at all, a DeviceTaintRule left out means its devices
    count as untainted: the warning says so either way (it said only `left out of the plan`)."""
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "rule"},
        "spec": {"deviceSelector": {"selectors": []}, "taint": {"key": "k", "effect": "NoSchedule"}},
    }
    cluster = dra_solver.load([_write(tmp_path, [_node("n1"), rule, _pod("plain")])], strict=False)
    (warned,) = [w for w in cluster.warnings if "DeviceTaintRule rule" in w]
    assert warned.endswith("; its taints are not applied: the devices it selects count as untainted"), warned


def test_a_claim_that_cannot_be_read_is_named_with_why_not_not_found(tmp_path: Path) -> None:
    """`explain --claim` and `allocate --claim` of a claim the loader could not read said
    `ResourceClaim default/bad not found in the input` (exit 1): it is in the input. Now they
    say why it is not planned; a plan of an input without Pods lists it with that reason."""
    bad = _claim("bad", {"count": "two"})
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), bad])
    why = (
        "the claim could not be read: spec.devices.requests[0].exactly.count: Input should be a valid integer"
    )
    explained = runner.invoke(app, ["explain", str(path), "--claim", "default/bad"])
    assert explained.exit_code == 0, explained.stderr
    assert explained.stdout.startswith(f"claim default/bad is not planned: {why}")
    allocated = runner.invoke(app, ["allocate", str(path), "--claim", "default/bad", "--node", "n1"])
    assert f"ResourceClaim default/bad: left out of the plan: {why}" in allocated.stderr, allocated.stderr
    assert "Traceback" not in allocated.stderr
    planned = runner.invoke(app, ["plan", str(path), "-o", "name"])
    line = next(x for x in planned.stderr.splitlines() if x.startswith("default/bad: "))
    assert line.startswith(f"default/bad: not placed: {why}") and "explain --claim default/bad" in line
    full = runner.invoke(app, ["plan", str(path), "--output-mode", "full"])
    claims = [o for o in read_yaml(full.stdout)["items"] if o["kind"] == "ResourceClaim"]
    assert [c["spec"] for c in claims] == [bad["spec"]]  # written back as given, no stand-in


def test_a_cel_runtime_error_costs_its_pod_not_the_plan(tmp_path: Path) -> None:
    """A selector reading an attribute some devices lack (`no such key`) failed the whole plan
    (exit 1), where upstream fails only that pod's scheduling attempt and schedules the rest.
    Now the pod is listed with the error (and its hint) as its reason; the others are planned —
    with either allocator."""
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}, {"name": "gpu-1"}], nodeName="n1")
    reads = {"selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].index > 1"}}]}
    items = [GPU_CLASS, _node("n1"), slice_, _claim("reads-index", reads), _claim("plain")]
    items += [
        _pod("p-index", resourceClaims=[{"name": "g", "resourceClaimName": "reads-index"}]),
        _pod("p-plain", resourceClaims=[{"name": "g", "resourceClaimName": "plain"}]),
    ]
    path = _write(tmp_path, items)
    planner = dra_solver.Planner(dra_solver.load([path], strict=False))  # `plan --watch`'s
    assert planner.plan().pod("default/p-plain").placed
    after = planner.update(remove=[("Pod", "default", "p-plain")])  # room released: retried
    assert "CEL runtime error: no such key: index" in (after.pod("default/p-index").reason or "")
    for allocator in ("cpsat", "reference"):
        got = runner.invoke(app, ["plan", str(path), "-o", "name", "--allocator", allocator])
        assert got.exit_code == 2, got.stderr
        lines = dict(x.split(": ", 1) for x in got.stderr.splitlines() if x.startswith("default/"))
        assert lines["default/p-plain"] == "node n1"
        assert lines["default/p-index"].startswith(
            "not placed: claim default/reads-index: request g: selector #0, device gpu.example.com/n1/gpu-0, "
            "expression \"device.attributes['gpu.example.com'].index > 1\": "
            "CEL runtime error: no such key: index; hint: "
        ), lines["default/p-index"]


def test_a_container_claim_naming_no_pod_claim_holds_only_that_pod(tmp_path: Path) -> None:
    """`containers[].resources.claims[].name` must name a `spec.resourceClaims` entry (the API
    server refuses the pod otherwise; the kubelet could not give the container its claim).
    `validate` passed it; now it names the pod, the field and why, and a plan holds that pod
    alone with that reason."""
    bad = _pod("typo", resourceClaims=[{"name": "g", "resourceClaimName": "g"}])
    bad["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}, {"name": "gpu-1"}], nodeName="n1")
    ok = _pod("ok", resourceClaims=[{"name": "g", "resourceClaimName": "h"}])
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, _claim("g"), _claim("h"), bad, ok])
    why = (
        "spec.containers[0].resources.claims[0].name: 'gpu' names no entry of the pod's "
        "spec.resourceClaims (it has: g), so the API server refuses the pod"
    )
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1 and f"Pod default/typo: {why}" in checked.stderr, checked.stderr
    outcome = dra_solver.plan(dra_solver.load([path], strict=False))
    assert outcome.pod("default/ok").node == "n1"
    held = outcome.pod("default/typo")
    assert not held.placed and held.reason == why, held.reason


PRIORITY = "scheduling.k8s.io/v1"


def _priority_class(name: str, value: int, default: bool, created: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"creationTimestamp": created} if created else {})}
    return {
        "apiVersion": PRIORITY,
        "kind": "PriorityClass",
        "metadata": meta,
        "value": value,
        "globalDefault": default,
    }


def test_two_global_default_priority_classes_are_refused_and_the_lowest_is_read(tmp_path: Path) -> None:
    """The API server refuses a second `globalDefault: true` PriorityClass; two can still race
    past it, and upstream's admission then gives pods without a class the lowest value. The
    plan read the highest: the default pod (1000) took the last GPU from a pod of class `mid`
    (50). Now `validate` names the second (the newer by creationTimestamp), the plan keeps both
    classes and reads 10, so `mid`'s pod gets the GPU."""
    classes = [
        _priority_class("low", 10, True, "2026-01-02T00:00:00Z"),
        _priority_class("high", 1000, True, "2026-01-01T00:00:00Z"),
        _priority_class("mid", 50, False, "2026-01-01T00:00:00Z"),
    ]
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}], nodeName="n1")
    pods = [
        _pod("plain", resourceClaims=[{"name": "g", "resourceClaimName": "a"}]),
        _pod("named", priorityClassName="mid", resourceClaims=[{"name": "g", "resourceClaimName": "b"}]),
    ]
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, _claim("a"), _claim("b"), *classes, *pods])
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 1
    assert (
        "PriorityClass low: globalDefault: PriorityClass high is the global default already: the API "
        "server allows only one and refuses the second"
    ) in checked.stderr, checked.stderr
    cluster = dra_solver.load([path], strict=False)
    assert set(cluster.priority_classes) == {"low", "high", "mid"}
    (warned,) = [w for w in cluster.warnings if "globalDefault" in w]
    assert warned.endswith(
        "gets the lowest global default's value, 10 (PriorityClass low), as upstream's admission picks"
    )
    for allocator in ("cpsat", "reference"):
        outcome = dra_solver.plan(cluster, allocator=allocator)
        assert outcome.pod("default/named").placed and not outcome.pod("default/plain").placed, allocator


def test_check_names_an_allocations_unreadable_node_selector(tmp_path: Path) -> None:
    """`check` said of a node-local device allocated to a claim whose nodeSelector cannot be
    read only `it is not visible without a node`: now it names the field and why."""
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}], nodeName="n1")
    selector = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "Within", "values": ["n1"]}]}
        ]
    }
    result = {"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    claim = _claim("odd", status={"allocation": {"devices": {"results": [result]}, "nodeSelector": selector}})
    got = runner.invoke(app, ["check", str(_write(tmp_path, [GPU_CLASS, _node("n1"), slice_, claim]))])
    assert got.exit_code == 3, got.stderr
    assert got.stdout.splitlines() == [
        "[unknown-device] claim default/odd, request g: device gpu.example.com/n1/gpu-0: the claim's node "
        "cannot be told, its allocation's node selector cannot be read (status.allocation.nodeSelector"
        ".nodeSelectorTerms[0].matchFields[0].operator: unsupported operator 'Within': must be one of In, "
        "NotIn, Exists, DoesNotExist, Gt, Lt)"
    ]


def test_check_reports_a_pod_bound_to_a_deleted_node(tmp_path: Path) -> None:
    bound = {**_pod("orphan", nodeName="gone"), "status": {"phase": "Running"}}
    got = runner.invoke(app, ["check", str(_write(tmp_path, [_node("n1"), bound]))])
    assert got.exit_code == 3, got.stderr
    assert got.stdout.splitlines() == [
        "[pod-node-missing] pod default/orphan: is bound to node gone (spec.nodeName), which is not among "
        "the input's Nodes (deleted? upstream's pod garbage collector deletes a pod whose node is gone)"
    ]
    fine = runner.invoke(
        app,
        [
            "check",
            str(_write(tmp_path, [_node("n1"), {**bound, "spec": {**bound["spec"], "nodeName": "n1"}}])),
        ],
    )
    assert fine.exit_code == 0, fine.stdout


def test_a_gang_with_fewer_pods_than_its_min_count_says_so(tmp_path: Path) -> None:
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
    }
    pods = [_pod(f"w-{i}", schedulingGroup={"podGroupName": "train"}) for i in range(2)]
    cluster = dra_solver.load([_write(tmp_path, [_node("n1"), group, *pods])], strict=False)
    for allocator in ("cpsat", "reference"):
        reason = dra_solver.plan(cluster, allocator=allocator).pod("default/w-0").reason
        assert reason == (
            "PodGroup default/train not placed: 2 of its pods fit, fewer than its gang minCount 3 "
            "(the input has only 2 pods of the group)"
        ), reason
    enough = dra_solver.load(
        [
            _write(
                tmp_path,
                [
                    _node("n1"),
                    group,
                    *pods,
                    _pod("w-2", schedulingGroup={"podGroupName": "train"}, nodeSelector={"x": "y"}),
                ],
            )
        ],
        strict=False,
    )
    reason = dra_solver.plan(enough).pod("default/w-0").reason or ""
    assert "fewer than its gang minCount 3" in reason and "only" not in reason, reason


def test_a_request_larger_than_any_device_says_so_with_the_numbers(tmp_path: Path) -> None:
    """A capacity request no device could serve even unused read `not enough capacity left`,
    as if waiting would help: now the device's capacity and the amount asked are said."""
    devices = [{"name": f"gpu-{i}", "capacity": {"memory": {"value": "40Gi"}}} for i in range(2)]
    slice_ = _slice("n1-gpu", "n1", devices, nodeName="n1")
    big = _claim("big", {"capacity": {"requests": {"memory": "80Gi"}}})
    small = _claim("small", {"capacity": {"requests": {"memory": "30Gi"}}})
    pods = [_pod(n, resourceClaims=[{"name": "g", "resourceClaimName": n}]) for n in ("big", "small")]
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, big, small, *pods])
    outcome = dra_solver.plan(dra_solver.load([path], strict=False))
    assert outcome.pod("default/small").placed
    assert outcome.pod("default/big").reason == (
        "claim default/big: request g: needs 1 device(s), 2 match the selectors; of those 2 have memory "
        "40Gi, less than the 80Gi asked (on node n1)"
    ), outcome.pod("default/big").reason


def _made_from_template(
    claim: str = "p-g-x1y2z", template: str = "tpl"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pending pod whose claim the ResourceClaim controller made from `template` (recorded in
    the pod's status, as a dump has it), and that claim."""
    pod = _pod("p", resourceClaims=[{"name": "g", "resourceClaimTemplateName": template}])
    pod["status"] = {"phase": "Pending", "resourceClaimStatuses": [{"name": "g", "resourceClaimName": claim}]}
    return pod, _claim(claim)


def test_a_deleted_template_costs_nothing_once_its_claim_is_made(tmp_path: Path) -> None:
    """Upstream's scheduler reads the claim a pod's status records for a template entry, never
    the template again: a template deleted after its claims were made holds nothing. It held
    the pod (and `validate` refused it)."""
    pod, made = _made_from_template()
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}], nodeName="n1")
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, made, pod])
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 0, checked.stderr
    outcome = dra_solver.plan(dra_solver.load([path]))
    assert outcome.pod("default/p").node == "n1"
    not_made = {**pod, "status": {"phase": "Pending"}}  # no claim yet: the template is needed
    checked = runner.invoke(
        app, ["validate", str(_write(tmp_path, [GPU_CLASS, _node("n1"), slice_, not_made]))]
    )
    assert "ResourceClaimTemplate default/tpl not found in the input" in checked.stderr


def test_a_pod_whose_made_claim_is_broken_names_the_claim_not_the_template(tmp_path: Path) -> None:
    """A deleted DeviceClass breaks the template and the claim made from it; the scheduler reads
    the claim, so the pod's reason (and the warning naming the pods it holds) is the claim's."""
    pod, made = _made_from_template()
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "tpl", "namespace": "default"},
        "spec": {"spec": made["spec"]},
    }
    cluster = dra_solver.load([_write(tmp_path, [_node("n1"), template, made, pod])], strict=False)
    reason = dra_solver.plan(cluster).pod("default/p").reason or ""
    assert reason.startswith("spec.resourceClaims[0]: ResourceClaim default/p-g-x1y2z is not valid: "), reason
    (claim_warning,) = [w for w in cluster.warnings if w.startswith("ResourceClaim default/p-g-x1y2z")]
    assert claim_warning.endswith("pending pod default/p depends on it and stays pending"), claim_warning


def test_an_unreadable_allocated_claim_keeps_its_devices_in_use(tmp_path: Path) -> None:
    """A claim in an apiVersion dra-solver does not read was left out whole: its allocation too,
    so the plan gave its devices to another pod (a double booking). Its status alone is read
    now: the devices stay in use, the pod whose status records it is held when pending, and
    `--output-mode full` writes it back once, as given."""
    slice_ = _slice("n1-gpu", "n1", [{"name": "gpu-0"}, {"name": "gpu-1"}], nodeName="n1")
    result = {"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    selector = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    future = _claim(
        "future", status={"allocation": {"devices": {"results": [result]}, "nodeSelector": selector}}
    )
    future["apiVersion"] = "resource.k8s.io/v2"
    owner, _ = _made_from_template("future")
    users = [_pod(f"u{i}", resourceClaims=[{"name": "g", "resourceClaimName": f"c{i}"}]) for i in range(2)]
    items = [GPU_CLASS, _node("n1"), slice_, future, owner, _claim("c0"), _claim("c1"), *users]
    path = _write(tmp_path, items)
    cluster = dra_solver.load([path], strict=False)
    assert any(
        "ResourceClaim default/future: apiVersion: unsupported apiVersion" in w
        and w.endswith("its allocation is read from its status alone: the devices it names stay in use")
        for w in cluster.warnings
    ), cluster.warnings
    outcome = dra_solver.plan(cluster)
    assert sorted(p.name for p in outcome.pods if p.placed) in (["default/u0"], ["default/u1"])
    held = outcome.pod("default/p")
    assert not held.placed and "ResourceClaim default/future could not be read" in (held.reason or "")
    full = runner.invoke(app, ["plan", str(path), "--output-mode", "full"])
    written = [o for o in read_yaml(full.stdout)["items"] if o["metadata"]["name"] == "future"]
    assert written == [future]
    checked = runner.invoke(app, ["check", str(path)])
    assert checked.exit_code == 0, checked.stdout


def test_a_device_taint_of_an_unknown_effect_blocks_that_device_not_its_pool(tmp_path: Path) -> None:
    """One device's taint of an effect the API server refuses (`Evict`: a newer version's, or a
    typo) left the whole pool out — every device of the node unusable. Now the slice is kept and
    the taint counts as blocking, as a node's does: only a request tolerating it gets the device.
    A DeviceTaintRule of such an effect likewise taints what it selects (it was left out, its
    devices then counted as untainted)."""
    devices = [
        {"name": "gpu-0", "taints": [{"key": "bad", "effect": "Evict"}]},
        {"name": "gpu-1"},
        {"name": "gpu-2"},
    ]
    slice_ = _slice("n1-gpu", "n1", devices, nodeName="n1")
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-2"},
            "taint": {"key": "drain", "effect": "SoonNoSchedule"},
        },
    }
    tolerant = _claim("tolerant", {"tolerations": [{"key": "bad", "operator": "Exists"}]})
    claims = [_claim("a"), _claim("b"), tolerant]
    pods = [
        _pod(
            c["metadata"]["name"], resourceClaims=[{"name": "g", "resourceClaimName": c["metadata"]["name"]}]
        )
        for c in claims
    ]
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), slice_, rule, *claims, *pods])
    checked = runner.invoke(app, ["validate", str(path)])
    assert (
        "ResourceSlice n1-gpu: spec.devices[0].taints[0].effect: unsupported taint effect 'Evict'"
        in checked.stderr
    )
    assert (
        "DeviceTaintRule drain: spec.taint.effect: unsupported taint effect 'SoonNoSchedule'"
        in checked.stderr
    )
    cluster = dra_solver.load([path], strict=False)
    assert [s.left_out for s in cluster.slices] == [None] and list(cluster.taint_rules) == ["drain"]
    assert any(
        w.endswith("the taint counts as blocking: only requests that tolerate it get the device")
        for w in cluster.warnings
    )
    for allocator in ("cpsat", "reference"):
        outcome = dra_solver.plan(cluster, allocator=allocator, feature_gates="DRADeviceTaintRules=true")
        devices_of = {
            p.name: [
                r.device
                for c in p.claims
                if c.status and c.status.allocation
                for r in c.status.allocation.devices.results
            ]
            for p in outcome.pods
            if p.placed
        }
        assert devices_of.get("default/tolerant") == ["gpu-0"], devices_of
        assert sorted(devices_of) == ["default/a", "default/tolerant"] or sorted(devices_of) == [
            "default/b",
            "default/tolerant",
        ]
        assert all(d != ["gpu-2"] for d in devices_of.values()), devices_of


def test_an_int_attribute_beyond_int64_costs_its_pool_not_the_plan(tmp_path: Path) -> None:
    """An int attribute the API server cannot hold (beyond int64) passed `validate`, then every
    CEL selector reaching the device stopped the whole plan (exit 1, `integer value out of int64
    range`). Now `validate` names it, and the plan leaves only its pool out."""
    big = _slice("n1-gpu", "n1", [{"name": "gpu-0", "attributes": {"big": {"int": 2**70}}}], nodeName="n1")
    fine = _slice("n2-gpu", "n2", [{"name": "gpu-0"}], nodeName="n2")
    pods = [_pod(n, resourceClaims=[{"name": "g", "resourceClaimName": n}]) for n in ("a", "b")]
    path = _write(tmp_path, [GPU_CLASS, _node("n1"), _node("n2"), big, fine, _claim("a"), _claim("b"), *pods])
    checked = runner.invoke(app, ["validate", str(path)])
    assert (
        "ResourceSlice n1-gpu: spec.devices[0].attributes.big.int: "
        "1180591620717411303424 is out of the int64 range" in checked.stderr
    ), checked.stderr
    got = runner.invoke(app, ["plan", str(path), "-o", "name"])
    assert got.exit_code == 2, got.stderr
    lines = dict(x.split(": ", 1) for x in got.stderr.splitlines() if x.startswith("default/"))
    assert sorted(lines.values())[0] == "node n2", lines
    assert any("ResourceSlice n1-gpu is not valid" in v for v in lines.values()), lines


def test_an_object_without_a_name_is_said_with_its_position(tmp_path: Path) -> None:
    """An object that cannot be named (metadata null) cannot be left out as itself: the input is
    refused, and the error said only `Pod <unnamed>` — in a dump of thousands of lines. It now
    says where: the document and the list item."""
    nameless = {**_pod("x"), "metadata": None}
    path = _write(tmp_path, [_node("n1"), _pod("a"), nameless])
    got = runner.invoke(app, ["plan", str(path)])
    assert got.exit_code == 1
    assert f"{path} (document 1, items[2]): Pod <unnamed>: metadata: " in got.stderr, got.stderr
