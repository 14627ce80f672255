"""`bench run --ray ADDRESS` against a real two-node Ray cluster on this machine: a head node and a worker
node, each its own `ray start --block` process tree (own --temp-dir, own free ports, one CPU each), joined
into one cluster. The run is the real CLI in a subprocess pointed at the head's address; its agents are real
(the OpenAI-compatible backends talking HTTP to the loopback server of evals/throughput_benchmark.py, a
fixed delay per reply so an item takes about two seconds). Mid-run the worker node is killed (SIGKILL to its
whole process tree: raylet, agents and the actor's worker process): the item it was answering runs again on
the head, and results.jsonl holds every item exactly once.

Teardown stops exactly the processes this test started (never `ray stop`, which would take down every Ray
instance on the machine, another test's included)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from audiomind import synth

REPO = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None or not RAY.exists(),
                                reason="ray (with its `ray` CLI) is not installed: a Ray cluster cannot be started here")


def _load_benchmark_module():
    spec = importlib.util.spec_from_file_location("throughput_benchmark", REPO / "evals" / "throughput_benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _free_ports(n: int) -> list[int]:
    """n distinct ports free right now (held open together, so none repeats)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name (in parentheses) may hold spaces
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def _tree(pid: int) -> list[int]:
    """pid and every process below it (Ray's workers live in their own process groups, so a process-group
    kill would miss them; parentage does not)."""
    kids, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _kill(pids: list[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, sig)


class RayNode:
    """One `ray start --block` (head or joining node) and everything it starts, in its own session."""

    def __init__(self, name: str, *, head_address: str | None, resources: dict[str, float], env: dict[str, str]):
        self.name = name
        self.temp = tempfile.mkdtemp(prefix=f"r{name}", dir="/tmp")  # short: socket paths must stay < 108 chars
        self.log = Path(self.temp) / "start.log"
        ports = iter(_free_ports(16))
        cmd = [str(RAY), "start", "--block", "--num-cpus=1", "--num-gpus=0", f"--temp-dir={self.temp}",
               "--node-ip-address=127.0.0.1", "--object-store-memory=100000000", "--disable-usage-stats",
               f"--resources={json.dumps(resources)}", f"--node-manager-port={next(ports)}",
               f"--object-manager-port={next(ports)}", f"--runtime-env-agent-port={next(ports)}",
               f"--dashboard-agent-grpc-port={next(ports)}", f"--dashboard-agent-listen-port={next(ports)}",
               f"--metrics-export-port={next(ports)}",
               f"--worker-port-list={','.join(str(next(ports)) for _ in range(6))}"]
        if head_address is None:
            self.port = next(ports)
            self.address = f"127.0.0.1:{self.port}"
            cmd += ["--head", f"--port={self.port}", "--include-dashboard=false", f"--dashboard-port={next(ports)}",
                    f"--ray-client-server-port={next(ports)}"]
        else:
            self.address = head_address
            cmd += [f"--address={head_address}"]
        self._out = open(self.log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, env=env, cwd=REPO,
                                     start_new_session=True)

    def wait_started(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while b"Ray runtime started" not in self.log.read_bytes():
            assert self.proc.poll() is None, f"ray start ({self.name}) exited: {self.log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"ray start ({self.name}) not up in {timeout} s: {self.log.read_text()[-3000:]}"
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL the whole tree at once: the node is gone as if its machine had been switched off."""
        _kill(_tree(self.proc.pid), signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM `ray start --block` (it stops its raylet, which stops its workers), then SIGKILL whatever
        of the tree is left; the temp dir goes too."""
        try:
            tree = _tree(self.proc.pid)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=20)
            deadline = time.monotonic() + 10
            while any(_alive(p) for p in tree) and time.monotonic() < deadline:
                time.sleep(0.2)
            _kill([p for p in tree if _alive(p)], signal.SIGKILL)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        finally:
            self._out.close()
            shutil.rmtree(self.temp, ignore_errors=True)


def _node_ids(address: str, env: dict[str, str]) -> dict[str, str]:
    """custom resource name -> node id, asked of the cluster by a separate driver."""
    code = ("import json, sys, ray; ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False); "
            "print(json.dumps({r: n['NodeID'] for n in ray.nodes() if n['Alive'] for r in n['Resources'] "
            "if r.endswith('_node')})); ray.shutdown()")
    done = subprocess.run([sys.executable, "-c", code, address], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_node_cluster_spreads_items_and_retries_a_killed_nodes_item(tmp_path):
    tb = _load_benchmark_module()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           # a dead node is noticed in ~2-3 s, not the default ~30 s
           "RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "1000",
           "RAY_health_check_failure_threshold": "4", "RAY_health_check_initial_delay_ms": "0"}
    env.pop("RAY_ADDRESS", None)
    llm = tb.FakeLLMServer(delay_s=0.35, prompt_tokens=1000, completion_tokens=50).start()  # ~6 calls: ~2 s an item
    clips = tmp_path / "clips"
    clips.mkdir()
    rows = []
    for i in range(12):
        synth.beeps(2 + i % 4, clips / f"b{i}.wav", freq_hz=500.0 + 60 * i, beep_s=0.12, gap_s=0.3)
        rows.append({"id": f"beeps_{i}", "audio": f"b{i}.wav", "question": "How many beeps are there?",
                     "choices": ["2", "3", "4", "5"], "answer": str(2 + i % 4), "category": "counting"})
    (clips / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "run"
    results = out / "results.jsonl"
    spec = f"openai:x@{llm.url}"

    nodes: list[RayNode] = []
    proc = None
    try:
        head = RayNode("head", head_address=None, resources={"head_node": 1}, env=env)
        nodes.append(head)
        head.wait_started(180)
        second = RayNode("second", head_address=head.address, resources={"second_node": 1}, env=env)
        nodes.append(second)
        second.wait_started(180)
        ids = _node_ids(head.address, env)
        assert set(ids) == {"head_node", "second_node"}, ids
        head_id, second_id = ids["head_node"], ids["second_node"]

        cmd = [sys.executable, "-m", "audiomind.bench.cli", "run", "--items", str(clips / "items.jsonl"),
               "--out", str(out), "--planner", spec, "--frontend", spec, "--workers", "2",
               "--ray", head.address, "--no-progress"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while not any((r.get("worker") or {}).get("node_id") == second_id for r in _lines(results)):
            assert proc.poll() is None, f"the run ended before the second node answered: {proc.communicate()}"
            assert time.monotonic() < deadline, f"the second node answered nothing in 300 s: {_lines(results)}"
            time.sleep(0.05)
        second.kill()  # it was handed its next item the moment it answered one: that item is in flight
        killed_after = len(_lines(results))
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr[-3000:]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()
        for node in reversed(nodes):
            node.stop()
        llm.close()
    for node in nodes:  # nothing of either node is left running
        assert not any(_alive(p) for p in _tree(node.proc.pid))

    assert killed_after < len(rows), "the kill came after the run: nothing tested"
    lines = _lines(results)
    assert sorted(r["id"] for r in lines) == sorted(r["id"] for r in rows), "every item exactly once"
    assert all(r["status"] == "answered" for r in lines), [(r["id"], r["status"], r["error"]) for r in lines]
    for r in lines:
        assert (out / r["trace_path"]).is_file()
        assert r["worker"]["node_id"] in (head_id, second_id) and r["worker"]["pid"] > 0
    by_node = {n: [r["id"] for r in lines if r["worker"]["node_id"] == n] for n in (head_id, second_id)}
    assert by_node[head_id] and by_node[second_id], f"items not spread over both nodes: {by_node}"
    # The item the second node was answering when it died ran again on the head, the loss on its record.
    retried = [r for r in lines if r["worker"]["attempt"] > 1]
    assert len(retried) == 1, [r["worker"] for r in lines]
    w = retried[0]["worker"]
    assert w["node_id"] == head_id and w["attempt"] == 2 and len(w["lost"]) == 1
    # ActorDiedError once the cluster has marked the node dead; ActorUnavailableError when the driver saw
    # the actor's connection drop first (the item may or may not have run there: only its retry is
    # committed); an ObjectLostError kind when the answer was ready but still on the dead node.
    assert re.match(rf"node {second_id}: (ActorDiedError|ActorUnavailableError|ObjectLostError|OwnerDiedError|"
                    r"ObjectFetchTimedOutError|ObjectReconstructionFailedError): ", w["lost"][0]), w["lost"]
    after = lines[killed_after:]  # everything committed after the kill was answered on the head
    assert after and all(r["worker"]["node_id"] == head_id for r in after)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == "ray" and summary["statuses"] == {"answered": len(rows)} and summary["remaining"] == 0
