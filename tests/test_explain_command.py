"""`explain` (issue #11): one test per reason kind and for the minimal blocking set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import allocated, claim, device, device_class, request, resource_slice, result
from typer.testing import CliRunner

from dra_solver import Cluster, NodeTemplate
from dra_solver import why as explain
from dra_solver.cli.main import app
from dra_solver.explain.diagnosis import ALONE
from dra_solver.reasons.words import WITH_PLAN

A100 = {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}


def gpus(node: str = "n1", n: int = 4, **extra: Any) -> dict[str, Any]:
    devs = [
        device(f"gpu-{i}", attrs={"model": "a100" if i < 2 else "h100", "numa": i % 2}, **extra)
        for i in range(n)
    ]
    return resource_slice(f"{node}-s", devs, node=node, pool="s1" if node == "n1" else node)


def test_explain_names_the_selector_that_rejects_devices_with_an_example() -> None:
    c = Cluster.from_objects(
        [device_class("gpu"), gpus(), claim("big", [request("gpu", count=3, selectors=[A100])])]
    )
    text = explain(c, claim="big").text()
    assert "selector `device.attributes" in text and "rejects 2 (e.g. s1/gpu-2), 2 left" in text


def test_explain_names_the_claims_holding_matching_devices_and_the_release_fix() -> None:
    c = Cluster.from_objects(
        [
            device_class("gpu"),
            gpus(n=1),
            allocated("held", [result("gpu-0")]),
            claim("want", [request("gpu")]),
        ]
    )
    text = explain(c, claim="want").text()
    assert "held (by default/held)" in text
    assert "fix: claim default/held released" in text


def test_explain_suggests_fewer_devices() -> None:
    c = Cluster.from_objects([device_class("gpu"), gpus(), claim("big", [request("gpu", count=6)])])
    assert "fix: fewer devices: request gpu of claim big with count 4" in explain(c, claim="big").text()


def test_explain_counts_devices_with_untolerated_taints() -> None:
    taint = {"taints": [{"key": "broken", "effect": "NoSchedule"}]}
    c = Cluster.from_objects([device_class("gpu"), gpus(n=2, **taint), claim("want", [request("gpu")])])
    text = explain(c, claim="want").text()
    assert "2 have the taint broken:NoSchedule, which the request does not tolerate" in text


def pod_on(spec: dict[str, Any], node_spec: dict[str, Any] | None = None, **labels: str) -> Cluster:
    """Node n1 (with `labels` and `node_spec`) and pod `web` with `spec` added to its own."""
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": labels}}
    if node_spec:
        node["spec"] = node_spec
    node["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }
    return Cluster.from_objects([node, pod])


def test_explain_node_affinity_of_the_pod() -> None:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    affinity = {"nodeAffinity": required}
    text = explain(pod_on({"affinity": affinity}, zone="a"), pod="web").text()
    assert (
        text
        == f"{ALONE}\nnode n1: node constraints: the node does not match the pod's required node affinity"
    )


def test_explain_node_taint_the_pod_does_not_tolerate() -> None:
    taints = {"taints": [{"key": "gpu-only", "value": "yes", "effect": "NoSchedule"}]}
    text = explain(pod_on({}, taints), pod="web").text()
    assert (
        "node n1: node constraints: the node has the taint gpu-only=yes:NoSchedule, "
        "which the pod does not tolerate" in text
    )


def test_explain_unschedulable_node() -> None:
    text = explain(pod_on({}, {"unschedulable": True}), pod="web").text()
    assert "node n1: node constraints: the node is unschedulable (spec.unschedulable)" in text


def test_explain_node_resources_the_pod_needs() -> None:
    containers = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "6"}}}]
    text = explain(pod_on({"containers": containers}), pod="web").text()
    assert text.startswith(f"{ALONE}\nnode n1: node resources:") and "cpu" in text


def test_explain_node_constraints_of_the_pod() -> None:
    text = explain(pod_on({"nodeSelector": {"zone": "b"}}, zone="a"), pod="web").text()
    assert (
        text == f"{ALONE}\nnode n1: node constraints: the node does not match the pod's nodeSelector zone=b"
    )


def test_explain_minimal_blocking_set_of_interacting_constraints() -> None:
    """match and distinct on the same attribute: each alone fits, together they block."""
    cons = [
        {"requests": ["a", "b"], "matchAttribute": "gpu.example.com/numa"},
        {"requests": ["a", "b"], "distinctAttribute": "gpu.example.com/numa"},
    ]
    c = Cluster.from_objects([device_class("gpu"), gpus(), claim("pair", [request("a"), request("b")], cons)])
    text = explain(c, claim="pair").text()
    line = next(x for x in text.splitlines() if "minimal blocking set" in x)
    assert "matchAttribute gpu.example.com/numa (values available: 0, 1)" in line
    assert "distinctAttribute gpu.example.com/numa" in line


def test_explain_minimal_blocking_set_leaves_out_claims_that_do_not_block() -> None:
    """x (2) and y (2) exceed the 3 GPUs; z (1) fits beside either, so it is not in the set."""
    c = Cluster.from_objects(
        [
            device_class("gpu"),
            gpus(n=3),
            claim("x", [request("gpu", count=2)]),
            claim("y", [request("gpu", count=2)]),
            claim("z", [request("gpu")]),
        ]
    )
    text = explain(c, claim=["x", "y", "z"]).text()
    line = next(x for x in text.splitlines() if "minimal blocking set" in x)
    assert line.endswith("minimal blocking set: claim default/x + claim default/y")


def test_explain_groups_nodes_with_the_same_reason_and_says_where_it_fits() -> None:
    c = Cluster.from_objects(
        [
            device_class("gpu"),
            gpus("n1", 1),
            gpus("n2", 1),
            gpus("n3", 4),
            claim("two", [request("gpu", count=2)]),
        ]
    )
    text = explain(c, claim="two").text()
    assert "fits on: n3" in text and "2 node(s) (n1, n2): claim default/two" in text


def test_explain_names_the_values_of_a_constraint_that_alone_blocks() -> None:
    """Two requests on one NUMA node, but the two A100s are on NUMA 0 and 1."""
    cons = [{"requests": ["a", "b"], "matchAttribute": "gpu.example.com/numa"}]
    c = Cluster.from_objects(
        [device_class("gpu"), gpus(n=2), claim("pair", [request("a"), request("b")], cons)]
    )
    text = explain(c, claim="pair").text()
    assert (
        "node n1: claim default/pair: constraints cannot be satisfied: matchAttribute gpu.example.com/numa"
        in text
    )
    assert (
        "minimal blocking set: claim default/pair: its requests and "
        "matchAttribute gpu.example.com/numa (values available: 0, 1)"
    ) in text


def test_explain_says_which_template_would_take_it() -> None:
    c = Cluster.from_objects([device_class("gpu"), gpus(n=1), claim("two", [request("gpu", count=2)])])
    t = NodeTemplate.from_cluster(
        Cluster.from_objects(
            [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big"}}, gpus("big", 8)]
        )
    )
    answer = explain(c, claim="two", node_templates=[t])
    assert answer.template == "big" and "it fits on a new node of template big" in answer.text()


def test_cli_explain_exit_codes(tmp_path: Any) -> None:
    import yaml

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([device_class("gpu"), gpus(), claim("big", [request("gpu", count=9)])]))
    res = CliRunner().invoke(app, ["explain", str(f), "--claim", "big"])
    assert res.exit_code == 0 and "needs 9 device(s)" in res.stdout
    res = CliRunner().invoke(app, ["explain", str(f), "--claim", "nope"])
    assert res.exit_code == 1
    f.write_text(yaml.safe_dump_all([device_class("gpu"), gpus(), claim("small", [request("gpu")])]))
    res = CliRunner().invoke(app, ["explain", str(f), "--claim", "small"])
    assert res.exit_code == 0 and res.stdout.startswith(f"{ALONE}\nclaim default/small fits on: n1")
    assert "default/small: the plan places it on n1" in res.stdout


EXAMPLE = str(Path(__file__).resolve().parent.parent / "docs" / "examples" / "cluster-dump.yaml")


def test_cli_explain_says_it_assumes_the_pod_alone_then_why_the_plan_leaves_it_out() -> None:
    # trainer-3 fits on the A100 nodes alone; the plan gives their GPUs to trainer-1 and -2.
    res = CliRunner().invoke(app, ["explain", EXAMPLE, "--pod", "ml-training/trainer-3"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == ALONE
    assert lines[1] == "pod ml-training/trainer-3 fits on: gpu-a100-1, gpu-a100-2"
    at = lines.index(f"{WITH_PLAN} the plan places 7 of 8 pending pods")
    why = lines[at + 1]
    assert why.startswith(
        "  ml-training/trainer-3: the plan does not place it: no node fits the pod (0 of 5 nodes): "
        "fits on gpu-a100-1 and gpu-a100-2 alone, but other pods of this plan take the room there"
    )
    assert "on gpu-a100-1, devices it could use go to ml-training/trainer-2" in why
    assert (
        "on gpu-a100-2, devices it could use go to "
        "inference/llm-server-6d9f7c8b5-tq4vx, ml-training/trainer-1" in why
    )
    placed = CliRunner().invoke(app, ["explain", EXAMPLE, "--pod", "ml-training/trainer-1"])
    assert "  ml-training/trainer-1: the plan places it on gpu-a100-2" in placed.stdout.splitlines()
    alone = CliRunner().invoke(app, ["explain", EXAMPLE, "--pod", "ml-training/trainer-3", "--alone"])
    assert alone.exit_code == 0 and alone.stdout.startswith(ALONE) and WITH_PLAN not in alone.stdout


def test_plan_names_first_the_nodes_where_only_the_plans_other_pods_stand_in_the_way() -> None:
    for allocator, words in [
        ("cpsat", "CP-SAT places the most pods, by priority, that fit together"),
        ("reference", "first fit: the same or a higher priority, earlier in the queue"),
    ]:
        res = CliRunner().invoke(app, ["plan", EXAMPLE, "--allocator", allocator])
        assert res.exit_code == 2
        line = next(x for x in res.stderr.splitlines() if x.startswith("ml-training/trainer-3: not placed"))
        assert line.startswith(
            "ml-training/trainer-3: not placed: no node fits the pod (0 of 5 nodes): fits on gpu-a100-1 "
            "and gpu-a100-2 alone, but other pods of this plan take the room there "
            f"({words}): on gpu-a100-1, "
        ), line
        # then the nodes where the pod or the cluster would have to change, on the input's cluster
        assert line.index("control-plane-1: the node has the taint") > line.index("gpu-a100-2, ")
        assert "cpu-worker-1 and gpu-example-1: Insufficient cpu, Insufficient memory" in line
        assert "other reason(s)" not in line


def test_explain_says_capacity_left_per_shared_device_after_rounding() -> None:
    """25Gi is rounded up to 30Gi by the 10Gi step; 60Gi of the 80Gi GPU is held: 20Gi left."""
    policy = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
    shared = device("gpu-0", capacity={"memory": {"value": "80Gi", "requestPolicy": policy}}, multi=True)
    share = "00000000-0000-4000-8000-000000000001"
    held = allocated("held", [result("gpu-0", shareID=share, consumedCapacity={"memory": "60Gi"})])
    want = claim("want", [request("gpu", capacity={"requests": {"memory": "25Gi"}})])
    c = Cluster.from_objects([device_class("gpu"), resource_slice("n1-s", [shared], pool="s1"), held, want])
    assert "needs 30Gi memory, 20Gi left on s1/gpu-0" in explain(c, claim="want").text()


def test_cli_allocate_points_to_explain_when_the_claims_do_not_fit(tmp_path: Any) -> None:
    import yaml

    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([device_class("gpu"), gpus(), claim("big", [request("gpu", count=9)])]))
    res = CliRunner().invoke(app, ["allocate", str(f), "--node", "n1"])
    assert res.exit_code == 2
    assert "(details: dra-solver explain --claim default/big)" in res.stderr


def test_cli_explain_names_each_claims_own_blocker_before_the_joint_minimal_set(tmp_path: Any) -> None:
    # nine-gpus asks for 9 of 8 GPUs, big-memory for a GPU of 80Gi where each has 40Gi: both are
    # impossible alone, while the minimal blocking set (one irreducible set) names one of them.
    import yaml

    mem = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'
    objs = [
        device_class("gpu"),
        resource_slice("s", [device(f"gpu-{i}", capacity={"memory": "40Gi"}) for i in range(8)], node="n1"),
        claim("nine-gpus", [request("gpu", count=9)]),
        claim("big-memory", [request("gpu", selectors=[{"cel": {"expression": mem}}])]),
        claim("one-gpu", [request("gpu")]),
    ]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    args = ["explain", str(f), "--claim", "nine-gpus", "--claim", "big-memory", "--claim", "one-gpu"]
    res = CliRunner().invoke(app, [*args, "--alone"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    own = [
        "  - claim default/nine-gpus alone: does not fit (its own blocker)",
        "  - claim default/big-memory alone: does not fit (its own blocker)",
        "  - claim default/one-gpu alone: fits",
        "  - minimal blocking set: claim default/nine-gpus",
    ]
    at = lines.index(own[0])
    assert lines[at : at + len(own)] == own
