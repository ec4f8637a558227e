"""The simulated cluster as `simctl.py up` leaves it: versions, nodes, CRD, add-ons, storage, sockets."""
from __future__ import annotations

import ipaddress
import json
import os
import urllib.request
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

GPU_TAINT = ("nvidia.com/gpu", "present", "NoSchedule")
NODES = {
    # name: (instance type, role label, GPUs, EFA devices, tainted)
    "p5-node-0": ("p5.48xlarge", "gpu-training", "8", "32", True),
    "p5-node-1": ("p5.48xlarge", "gpu-training", "8", "32", True),
    "g6-node-0": ("g6.8xlarge", "gpu-phase0", "1", "1", True),
    "g6-node-1": ("g6.8xlarge", "gpu-phase0", "1", "1", True),
    "system-node-0": ("m5.2xlarge", "system", None, None, False),
}


def test_apiserver_version(api_client):
    from kubernetes import client
    info = client.VersionApi(api_client).get_code()
    k8s = simkit.versions()["SIM_K8S_VERSION"]  # 1.36.3
    assert info.git_version == f"v{k8s}"
    assert (info.major, info.minor) == tuple(k8s.split(".")[:2])


def test_etcd_version():
    """etcd answers on loopback with the pinned version (its URL from kube-apiserver's command line)."""
    pid = int((_kwok_pid_dir() / "kube-apiserver.pid").read_text())
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    url = next(a.split("=", 1)[1] for a in argv if a.startswith("--etcd-servers=")).split(",")[0]
    assert url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(url + "/version", timeout=5) as resp:
        got = json.load(resp)
    assert got["etcdserver"] == simkit.versions()["SIM_ETCD_VERSION"]


def test_nodes_ready_with_capacity_labels_taints(core):
    nodes = {n.metadata.name: n for n in core.list_node().items}
    assert sorted(nodes) == sorted(NODES)
    for name, (itype, role, gpus, efa, tainted) in NODES.items():
        node = nodes[name]
        labels = node.metadata.labels
        assert simkit.condition_true(node.status.conditions, "Ready"), name
        assert not node.spec.unschedulable, f"{name} is cordoned under healthy"
        assert labels[simkit.INSTANCE_TYPE] == itype
        assert labels["role"] == role
        assert labels["kubernetes.io/hostname"] == name
        for res, want in (("nvidia.com/gpu", gpus), ("vpc.amazonaws.com/efa", efa)):
            assert node.status.capacity.get(res) == want, (name, res)
            assert node.status.allocatable.get(res) == want, (name, res)
        taints = {(t.key, t.value, t.effect) for t in node.spec.taints or []}
        assert taints == ({GPU_TAINT} if tainted else set()), name
        assert (labels.get("nvidia.com/gpu.present") == "true") == tainted
    # Phase 0 nodes are the g6 ones.
    phase0 = core.list_node(label_selector="role=gpu-phase0").items
    assert sorted(n.metadata.name for n in phase0) == ["g6-node-0", "g6-node-1"]


def test_mpijob_crd_established(apiext):
    crd = apiext.read_custom_resource_definition("mpijobs.kubeflow.org")
    assert simkit.condition_true(crd.status.conditions, "Established")
    served = {v.name for v in crd.spec.versions if v.served}
    assert "v2beta1" in served


def test_fsx_claim_bound(core):
    pvc = core.read_namespaced_persistent_volume_claim("fsx-claim", "default")
    assert pvc.status.phase == "Bound"
    assert pvc.spec.volume_name == "fsx-pv"
    assert "ReadWriteMany" in pvc.status.access_modes


@pytest.mark.parametrize("namespace_, name", [
    ("gpu-operator", "nvidia-device-plugin-daemonset"),
    ("gpu-operator", "nvidia-dcgm-exporter"),
    ("kube-system", "aws-efa-k8s-device-plugin-daemonset"),
])
def test_daemonsets_ready_on_every_gpu_node(apps, core, namespace_, name):
    def ready():
        ds = apps.read_namespaced_daemon_set(name, namespace_)
        s = ds.status
        return s.desired_number_scheduled == 4 and s.number_ready == 4 and s.number_available == 4 and ds
    ds = simkit.wait_until(ready, 30, f"DaemonSet {namespace_}/{name} ready on the 4 GPU nodes")
    selector = ",".join(f"{k}={v}" for k, v in ds.spec.selector.match_labels.items())
    pods = core.list_namespaced_pod(namespace_, label_selector=selector).items
    assert sorted(p.spec.node_name for p in pods) == ["g6-node-0", "g6-node-1", "p5-node-0", "p5-node-1"]
    assert all(simkit.condition_true(p.status.conditions, "Ready") for p in pods)


def test_gpu_operator_deployment_available(apps):
    dep = apps.read_namespaced_deployment("gpu-operator", "gpu-operator")
    assert dep.status.available_replicas == 1


# --------------------------------------------------------------------------- sockets

def _kwok_pid_dir() -> Path:
    dirs = sorted(simkit.STATE.glob("kwok/clusters/*/pids"))
    assert dirs, f"no kwok pid directory under {simkit.STATE}"
    return dirs[0]


def _recorded_pids() -> dict:
    files = sorted(simkit.STATE.glob("pids/*.pid")) + sorted(simkit.STATE.glob("kwok/clusters/*/pids/*.pid"))
    return {f.stem: int(f.read_text().strip()) for f in files}


def _children() -> dict:
    kids: dict = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def _tree(pid: int, kids: dict) -> list:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _socket_inodes(pid: int) -> set:
    inodes = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _decode(addr: str, v6: bool):
    host, port = addr.split(":")
    raw = bytes.fromhex(host)
    # /proc/net/tcp* print each 32-bit word in host (little-endian) order.
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.IPv6Address(raw) if v6 else ipaddress.IPv4Address(raw)
    return ip, int(port, 16)


def _listening(net_dir: Path) -> dict:
    """inode -> (ip, port) of the TCP sockets in LISTEN state of one network namespace."""
    out = {}
    for name, v6 in (("tcp", False), ("tcp6", True)):
        path = net_dir / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                out[int(fields[9])] = _decode(fields[1], v6)
    return out


def test_sim_processes_listen_on_loopback_only():
    recorded = _recorded_pids()
    assert {"kube-apiserver", "etcd", "kwok-controller", "mpi-operator", "runtime"} <= set(recorded)
    kids = _children()
    host_listen = _listening(Path("/proc/self/net"))
    host_netns = os.readlink("/proc/self/ns/net")
    seen = []
    for name, pid in recorded.items():
        assert Path(f"/proc/{pid}").exists(), f"{name} (pid {pid}) is not running"
        for p in _tree(pid, kids):
            for inode in _socket_inodes(p) & host_listen.keys():
                ip, port = host_listen[inode]
                seen.append((name, p, str(ip), port))
                assert ip.is_loopback, f"{name} (pid {p}) listens on {ip}:{port}, not on loopback"
                assert port != 8080 or name != "mpi-operator", "the MPI operator's :8080 is in the host namespace"
    # Not vacuous: the control plane's ports were found (etcd client+peer, kube-apiserver, kwok...).
    names = {s[0] for s in seen}
    assert {"etcd", "kube-apiserver", "kwok-controller"} <= names, seen

    # The MPI operator (and the unshare wrapper it runs under) live in a network namespace of their own;
    # its health server's :8080 on every interface is there, not here.
    tree = _tree(recorded["mpi-operator"], kids)
    # by the name it runs as: the binary is the rlstack-sim multi-call program (sim/multicall), its symlink
    # mpi-operator is argv[0]
    argv0 = {p: Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0].decode()
             for p in tree if Path(f"/proc/{p}/cmdline").exists()}
    operator = [p for p, name in argv0.items() if os.path.basename(name) == "mpi-operator"]
    assert operator, f"no mpi-operator binary in the process tree {tree}"
    for p in tree:
        assert os.readlink(f"/proc/{p}/ns/net") != host_netns, f"pid {p} of the MPI operator is in the host netns"
    inner = _listening(Path(f"/proc/{operator[0]}/net"))
    assert 8080 in {port for _ip, port in inner.values()}, "the operator's health server is not listening in its netns"
    own_inodes = _socket_inodes(operator[0])
    assert not own_inodes & host_listen.keys()
