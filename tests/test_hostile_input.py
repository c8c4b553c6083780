"""Issue #16: hostile and broken input ends in a clear error, in bounded time and memory.

Why these cases: each is a text a cluster dump, a copy-paste mistake or an attacker can
produce, and each used to end badly — an alias bomb in a free-form field ran past 5 GB,
deep nesting killed the process with a segfault, an empty file and `count: 10^12` passed
`validate`, Ctrl-C during `plan` threw the plan away. The CLI runs in a subprocess where
the process's death by a signal or a traceback is what is being tested; every run is
bounded by an address-space limit (2 GiB) and a timeout that only guards against a hang.

"Bounded time" is CPU time, measured for the child (`getrusage` of the children, `/proc` of a
running one): it is what the work costs, the same on an idle and on a busy machine, where the
wall clock of two suites on two cores is anything (no test asserts wall-clock time, issue #40).
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from console_run import run_cli
from typer.testing import CliRunner
from yaml_text import read_yaml

from dra_solver import Cluster, interrupt, plan
from dra_solver.api.bounded import MAX_DEPTH, MAX_OBJECT_CHARS, allowed_alias_ratio
from dra_solver.api.load import load_paths, load_text
from dra_solver.cel.checks import validate_all
from dra_solver.cli.main import app
from dra_solver.errors import InputError, ValidationErrors

GIB = 1024**3
HANG = 600.0
"""Wall-clock seconds after which a child is taken for hung: a guard, never a measurement."""

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu"'}
"""


def node_yaml(n: int) -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: node-{n}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node-{n}-gpu}}
spec:
  driver: gpu
  nodeName: node-{n}
  pool: {{name: node-{n}, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
"""


def claim_yaml(name: str, count: int = 1, parameters: str = "{}") -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}}}
spec:
  devices:
    requests:
    - name: r
      exactly: {{deviceClassName: gpu, count: {count}}}
    config:
    - opaque:
        driver: gpu
        parameters: {parameters}
"""


def cluster(*claims: str, nodes: int = 1) -> str:
    return "---\n".join([CLASS, *(node_yaml(n) for n in range(nodes)), *claims])


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * GIB, 2 * GIB))


def cli(*args: str, stdin: str | None = None, timeout: float = HANG) -> subprocess.CompletedProcess[str]:
    """`dra-solver ARGS` in a subprocess under 2 GiB of address space (the ortools library
    alone maps several hundred MiB; the Python heap stays well below 1 GiB). The timeout only
    guards against a hang: on a loaded 2-core machine the imports alone took seconds, and 10 s
    failed there."""
    return subprocess.run(
        [sys.executable, "-m", "dra_solver", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
    )


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's children that have ended."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system, every thread) the running process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli_cpu(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`cli(*args)` and the CPU seconds the child used."""
    before = children_cpu()
    run = cli(*args)
    return run, children_cpu() - before


def assert_clean_failure(run: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 1 (never a signal), no traceback, every word in stderr."""
    assert run.returncode == 1, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in run.stderr, run.stderr[-2000:]


# --- bounded reading --------------------------------------------------------------------


def alias_bomb(levels: int = 9, fan_out: int = 10) -> str:
    """The "billion laughs": level k holds `fan_out` aliases of level k-1."""
    lines = ["{a0: &a0 [" + ", ".join(['"lol"'] * fan_out) + "],"]
    for k in range(1, levels):
        lines.append(f" a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * fan_out) + "],")
    lines.append(f" top: *a{levels - 1}}}")
    return "\n          ".join(lines)


def test_alias_bomb_in_opaque_parameters_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(cluster(claim_yaml("c", parameters=alias_bomb())), encoding="utf-8")
    run, cpu = cli_cpu("validate", str(path))
    assert_clean_failure(run, str(path), "document 4", "excessive YAML aliasing")
    assert cpu < 10  # the imports take about 2 s of it; expanding the bomb would take hours
    planned = CliRunner().invoke(app, ["plan", str(path)])  # the same reader: in-process is enough
    assert planned.exit_code == 1 and "excessive YAML aliasing" in planned.stderr


def test_modest_aliasing_is_kept_and_written_back() -> None:
    """A few aliases (a config block reused) are normal YAML and load as the data they name."""
    params = "{base: &b {mode: fast, sizes: [1, 2, 3]}, copy: *b, again: *b}"
    objects, _ = load_text(cluster(claim_yaml("c", parameters=params)), "in.yaml")
    claim = objects[-1].dump()
    parameters = claim["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert parameters["copy"] == parameters["again"] == {"mode": "fast", "sizes": [1, 2, 3]}


def test_alias_ratio_follows_go_yaml() -> None:
    assert allowed_alias_ratio(1_000) == 0.99
    assert allowed_alias_ratio(4_000_000) == 0.10
    assert 0.10 < allowed_alias_ratio(2_000_000) < 0.99


def test_alias_cycle_is_refused() -> None:
    """`&a [*a]` is a list that contains itself: an object no JSON can hold."""
    with pytest.raises(InputError) as info:
        load_text(cluster(claim_yaml("c", parameters="&a [1, *a]")), "in.yaml")
    assert "document 4" in info.value.reason and "cycle" in info.value.reason


DEEP = 10_000
NESTED = {
    "flow.yaml": "a: " + "[" * DEEP + "]" * DEEP + "\n",
    # block nesting costs its depth squared in indentation (10,000 levels are 50 MB, a CPU
    # second to read): 2,000 is still twice Python's recursion limit and 20 times the bound
    "block.yaml": "".join(" " * i + f"k{i}:\n" for i in range(DEEP // 5)) + " " * (DEEP // 5) + "v: 1\n",
    "seq.yaml": "- " * DEEP + "x\n",
    "deep.json": json.dumps({"kind": "ResourceClaim"})[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}",
}
IN_A_CHILD = ("flow.yaml", "deep.json")
"""The issue's two rows: read in a subprocess (a regression would kill the test run otherwise),
one `validate` of both files (each file's error is its own line); the other shapes in-process."""


@pytest.fixture(scope="module")
def nested_in_a_child(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The folder of the files of `IN_A_CHILD`, and the run of `validate` over them."""
    folder = tmp_path_factory.mktemp("nested")
    for name in IN_A_CHILD:
        (folder / name).write_text(NESTED[name], encoding="utf-8")
    return folder, cli("validate", *(str(folder / name) for name in IN_A_CHILD))


@pytest.mark.parametrize("name", list(NESTED))
def test_deep_nesting_is_an_error_not_a_crash(
    tmp_path: Path, name: str, request: pytest.FixtureRequest
) -> None:
    words = ("document 1", f"nested more than {MAX_DEPTH} levels")
    if name in IN_A_CHILD:
        folder, run = request.getfixturevalue("nested_in_a_child")
        assert_clean_failure(run, *words)
        (line,) = [x for x in run.stderr.splitlines() if x.startswith(f"{folder / name}: ")]
        assert all(word in line for word in words), run.stderr[-2000:]
        return
    path = tmp_path / name
    path.write_text(NESTED[name], encoding="utf-8")
    run = CliRunner().invoke(app, ["validate", str(path)])
    assert run.exit_code == 1 and all(word in run.stderr for word in words), run.stderr


def test_nesting_below_the_bound_goes_through_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Free-form data nested almost to the bound is kept and written back as given. In-process:
    the data is below the bound, what is tested is what is written (the crash of data past
    the bound is test_deep_nesting_is_an_error_not_a_crash's, in a subprocess)."""
    depth = MAX_DEPTH - 12  # the claim itself is 8 levels deep at its parameters
    params = "{x: " + "[" * depth + "1" + "]" * depth + "}"
    path = tmp_path / "in.yaml"
    path.write_text(cluster(claim_yaml("c", parameters=params)), encoding="utf-8")
    run = run_cli(capsys, "plan", str(path))
    assert run.returncode == 0, run.stderr
    (claim,) = read_yaml(run.stdout)["items"]
    value = claim["spec"]["devices"]["config"][0]["opaque"]["parameters"]["x"]
    for _ in range(depth - 1):
        (value,) = value
    assert value == [1]


def test_object_larger_than_the_api_servers_request_limit_is_refused(tmp_path: Path) -> None:
    big = "x" * (MAX_OBJECT_CHARS + 10)
    path = tmp_path / "big.yaml"
    path.write_text(cluster(claim_yaml("c", parameters=f"{{blob: {big}}}")), encoding="utf-8")
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    (err,) = info.value.errors
    assert err.source == str(path)
    assert "document 4" in err.reason and "3.0 MiB per object" in err.reason


def test_a_large_list_of_small_objects_is_fine() -> None:
    """A dump (`kind: List`) may exceed the per-object limit; its items are measured."""
    items = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"m{i}"}, "data": {"k": "v" * 100_000}}
        for i in range(40)
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    assert len(text) > MAX_OBJECT_CHARS
    objects, warnings = load_text(text, "dump.json")
    assert objects == [] and len(warnings) == 40


# --- one identity per object, empty input -----------------------------------------------


def test_duplicate_names_both_files_and_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(cluster(claim_yaml("c")), encoding="utf-8")
    listed = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(node_yaml(1).split("---")[1])]}
    b.write_text(node_yaml(1) + "---\n" + json.dumps(listed), encoding="utf-8")
    run = run_cli(capsys, "validate", str(a), str(b))  # exit code and text only: in-process
    assert_clean_failure(run, "ResourceSlice node-1-gpu", "defined twice")
    assert f"{b} (document 2)" in run.stderr and f"{b} (document 3, items[0])" in run.stderr


def test_count_above_the_claim_limit_is_refused_by_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(cluster(claim_yaml("c", count=1_000_000_000_000)), encoding="utf-8")
    words = ("ResourceClaim c", "requests[0].exactly.count", "exceeds the claim limit of 32")
    assert_clean_failure(run_cli(capsys, "validate", str(path)), *words)  # in-process: a count, no memory
    (err,) = validate_all(Cluster.from_yaml(cluster(claim_yaml("c", count=33))))
    assert (err.obj, err.field) == ("ResourceClaim c", "spec.devices.requests[0].exactly.count")
    assert "number of requested devices 33 exceeds the claim limit of 32" in err.reason


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "---\n---\n"])
def test_no_objects_is_an_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    assert [e.reason for e in info.value.errors] == [f"no objects in {path} (empty input)"]


def test_empty_file_and_stdin_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert_clean_failure(run_cli(capsys, "validate", str(path)), f"no objects in {path}")
    assert_clean_failure(run_cli(capsys, "plan", "-", stdin=""), "no objects in <stdin>")


def test_directory_without_objects_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not yaml", encoding="utf-8")
    with pytest.raises(ValidationErrors) as info:
        load_paths([tmp_path])
    assert f"no objects in {tmp_path}" in info.value.errors[0].reason


def test_out_of_memory_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(cluster(claim_yaml("c")), encoding="utf-8")

    def exhausted(self: Path, encoding: str | None = None) -> str:
        raise MemoryError

    monkeypatch.setattr(Path, "read_text", exhausted)
    with pytest.raises(ValidationErrors) as info:
        load_paths([path])
    (err,) = info.value.errors
    assert isinstance(err, InputError) and err.source == str(path)
    assert "out of memory" in err.reason and "too large" in err.reason


# --- interrupts keep the plan -----------------------------------------------------------


def slow_cluster(tmp_path: Path) -> Path:
    """Many pods over many nodes, most fitting nowhere: first fit alone takes far longer
    than the signal delay (each pod is tried, and explained, on every node). Every claim's
    spec differs (its opaque parameters), so first fit cannot reuse one pod's answers for
    the next (`solver.planners.firstfit` shares them between pods of one claim shape), and
    every node's device differs (an attribute of its own), so no node borrows another's answer
    (nodes equal up to names share theirs: `inventory.node_up_to_name`)."""
    claims = [claim_yaml(f"c{i}", count=1 if i < 50 else 2, parameters=f"{{i: {i}}}") for i in range(400)]
    nodes = [
        node_yaml(n).replace("- name: gpu-0\n", f"- name: gpu-0\n    attributes: {{index: {{int: {n}}}}}\n")
        for n in range(200)
    ]
    path = tmp_path / "slow.yaml"
    path.write_text("---\n".join([CLASS, *nodes, *claims]), encoding="utf-8")
    return path


def packing_cluster(tmp_path: Path) -> Path:
    """150 shares of random size over 20 shared GPUs: first fit is quick (~1 s), CP-SAT then
    searches for tens of seconds (bin packing) before it proves its plan."""
    rng = random.Random(2)
    slices = [
        f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node-{n}-gpu}}
spec:
  driver: gpu
  nodeName: node-{n}
  pool: {{name: node-{n}, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory: {{value: "1000"}}
"""
        for n in range(20)
    ]
    claims = [
        f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{i}}}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu
        capacity: {{requests: {{memory: "{rng.randint(90, 350)}"}}}}
"""
        for i in range(150)
    ]
    path = tmp_path / "packing.yaml"
    path.write_text("---\n".join([CLASS, *slices, *claims]), encoding="utf-8")
    return path


def plan_interrupted(
    path: Path, *signals: signal.Signals, delay: float = 0.5, args: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """Run `plan`, send the signals once planning has used `delay` CPU seconds (the same point
    of the search at any load); (exit code, stdout, stderr). The child must end within 3 CPU
    seconds of the first signal."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dra_solver", "plan", str(path), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_memory,
    )
    assert proc.stderr is not None
    while "planning" not in (line := proc.stderr.readline()):  # loaded and validated
        assert line, "plan ended before planning started"
    planning = cpu_of(proc.pid)
    waited = time.monotonic()
    while cpu_of(proc.pid) - planning < delay:  # into the search: first fit, or CP-SAT after it
        assert proc.poll() is None, "the plan finished before the signal: make the input slower"
        assert time.monotonic() - waited < HANG, "the plan uses no CPU: hung?"
        time.sleep(0.01)
    before = children_cpu()
    at_signal = cpu_of(proc.pid)
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.05)
    out, err = proc.communicate(timeout=HANG)
    assert children_cpu() - before - at_signal < 3, "the plan stops soon after the signal"
    return proc.returncode, out, err


def assert_valid_partial_plan(out: str, err: str, claims: int) -> None:
    doc = read_yaml(out)  # a plan of hundreds of claims: libyaml
    assert doc["kind"] == "List" and len(doc["items"]) == claims
    placed = [c for c in doc["items"] if (c.get("status") or {}).get("allocation")]
    assert placed, "the pods placed before the signal are kept"
    results = [r for c in placed for r in c["status"]["allocation"]["devices"]["results"]]
    devices = [(r["pool"], r["device"], r.get("shareID")) for r in results]
    assert len(devices) == len(set(devices)), "no device (or share) is given twice"
    assert "Traceback" not in err
    assert "interrupted: placed" in err.splitlines()[-1]
    # stderr is a pipe: the final line is the one interrupt message (issue #29)
    assert [line for line in err.splitlines() if line.startswith("interrupted")] == [err.splitlines()[-1]]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_plan_prints_the_best_plan_so_far(tmp_path: Path, sig: signal.Signals) -> None:
    # the reference allocator: first fit is what runs when the signal comes (with cpsat, on
    # this many pods x nodes the aggregated model runs first: test_plan_status covers it)
    code, out, err = plan_interrupted(slow_cluster(tmp_path), sig, args=("--allocator", "reference"))
    assert code == 130, err[-2000:]
    assert_valid_partial_plan(out, err, 400)
    # stderr names at most 10 pods not placed and counts the others (issue #12): the pods the
    # signal left untried are named, or counted once the first 10 were tried and failed
    assert "not tried: the run was interrupted" in err or "more pods not placed" in err, err[-2000:]


def test_interrupted_cpsat_search_keeps_its_best_plan(tmp_path: Path) -> None:
    """The signal arrives while CP-SAT searches: first fit and CP-SAT's import take under 0.8 CPU
    s of planning (the signal came in the search from there on, measured busy), the search
    then runs for tens."""
    path = packing_cluster(tmp_path)
    code, out, err = plan_interrupted(path, signal.SIGINT, delay=1.5, args=("--time-limit", "60"))
    assert code == 130, err[-2000:]
    assert_valid_partial_plan(out, err, 150)
    assert "not tried" not in err
    assert "(cpsat, status " in err.splitlines()[-1], err[-2000:]  # the search's plan, not first fit's


def test_stop_request_ends_cpsat_in_process(tmp_path: Path) -> None:
    """The Python API: `interrupt.request()` from another thread (what the signal watcher
    does while the main thread is inside CP-SAT's C++), once the plan has used 1.5 CPU
    seconds, ends the search with its best plan within 10 CPU seconds of the start (its
    deterministic budget alone would take tens). The search runs from under 0.7 CPU s on, in
    a fresh process (measured busy); a request in first fit leaves no pod placed."""
    c = Cluster.from_paths([packing_cluster(tmp_path)])
    start = time.process_time()  # this process's CPU seconds, every thread
    done = threading.Event()

    def stop_later() -> None:
        while not done.wait(0.01):
            if time.process_time() - start >= 1.5:
                interrupt.request()
                return

    watcher = threading.Thread(target=stop_later, daemon=True)
    watcher.start()
    try:
        outcome = plan(c, time_limit=60.0)
    finally:
        done.set()
        watcher.join()
        interrupt.reset()
    assert time.process_time() - start < 10
    assert outcome.placed > 0 and outcome.allocator == "cpsat"


def test_second_interrupt_exits_at_once(tmp_path: Path) -> None:
    code, out, err = plan_interrupted(slow_cluster(tmp_path), signal.SIGINT, signal.SIGINT)
    assert code == 130, (code, out[-300:], err[-1500:])
    assert "Traceback" not in err


# --- validate refuses what the allocator refuses ----------------------------------------


def test_validate_with_feature_gates_refuses_disabled_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate --feature-gates` refuses what `allocate`/`plan` (and `check`) with the same
    gates refuse."""
    claim = claim_yaml("c").replace(
        "exactly: {deviceClassName: gpu, count: 1}",
        "exactly: {deviceClassName: gpu, capacity: {requests: {memory: 1Gi}}}",
    )
    path = tmp_path / "in.yaml"
    path.write_text(cluster(claim), encoding="utf-8")
    words = ("ResourceClaim c", "requests[0].exactly.capacity", "DRAConsumableCapacity feature is disabled")
    off = ("--feature-gates", "DRAConsumableCapacity=false")
    assert_clean_failure(run_cli(capsys, "validate", str(path), *off), *words)
    # `plan` and `check` hold what the gates refuse, said once (docs/semantics.md, "Messy clusters").
    for command in ("plan", "check"):
        run = run_cli(capsys, command, str(path), *off)
        assert run.returncode in (0, 2, 3) and "Traceback" not in run.stderr, run.stderr[-2000:]
        assert all(w in run.stderr for w in words), run.stderr[-2000:]
    assert validate_all(Cluster.from_paths([path])) == []  # the default gates allow it


def test_claim_shared_by_more_pods_than_reserved_for_holds_is_refused() -> None:
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}"},
            "spec": {"containers": [], "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]},
        }
        for i in range(257)
    ]
    c = Cluster.from_objects([*yaml.safe_load_all(cluster(claim_yaml("c"))), *pods])
    (err,) = validate_all(c)
    assert err.obj == "ResourceClaim c" and err.field == "status.reservedFor"
    assert "257 consumers" in err.reason and "at most 256" in err.reason
