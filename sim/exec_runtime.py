"""Exec mode of the simulated node runtime: every pod's command runs for real on this machine.

`make sim-up SIM_EXEC=host` (`simctl.py up --exec host`) starts the cluster in this mode; replay stays the
default (sim/README.md, "Exec mode"). What a kubelet and a container runtime would do, this module does:

* admission: the pod's ConfigMap/Secret/emptyDir/hostPath/projected/downwardAPI/PVC volumes are
  materialised under `$SIM_STATE/pods/<ns>_<name>_<uid>/`; a missing ConfigMap or Secret keeps the pod
  Pending (FailedMount, as the kubelet); the pod's `nvidia.com/gpu` request takes that many free devices of
  this machine (`SIM_EXEC_GPUS`), else it stays Pending until enough are free;
* start: the pod is let through kwok's pod-ready stage (annotation sim.rlstack.io/exec=start), and once
  Running its command and args run in a mount namespace of their own (`unshare --mount`, util-linux, which
  the sim already needs for the MPI operator), where every volume is bind-mounted at its mountPath
  (read-only where the pod says so) and /tmp is the pod's own; env and envFrom resolved, $(VAR) expanded,
  workingDir honoured, CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES set to the pod's devices;
* stdout and stderr stream into the pod's log (CRI format, served by kwok's Logs object); the exit code
  becomes the container's terminated state and the pod's phase;
* deletion: SIGTERM to the pod's process group, SIGKILL after the grace period; activeDeadlineSeconds
  ends the pod the same way (Failed, DeadlineExceeded).

Why a mount namespace and not a per-pod root with rewritten paths: the collection's commands name absolute
paths (/opt/rlstack/probe_*.py, /fsx, $LIBERO_CONFIG_PATH) inside scripts and variables as well as in argv,
and only a mount namespace makes every one of them resolve as in a pod. Why not bubblewrap: it is not
installed here nor on the GPU machine (one more .deb to carry), and a mount namespace with bind mounts is
all it would add. Mount points that do not exist on this machine are created for the pod and removed
(when empty) once no running pod needs them.

Standard library only; `python3 exec_runtime.py init SPEC` is the pod's first process inside its namespace.
"""
from __future__ import annotations

import base64
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

MODE_FILE = "exec.json"
EXEC_ANNOTATION = "sim.rlstack.io/exec"
GPU = "nvidia.com/gpu"
DEFAULT_GRACE_S = 30
RETRY_S = 2.0
# A home of the pod's own, as an image's user has: this machine's ~ (a ~/.libero, caches) must not leak into pods.
POD_HOME = "/tmp/home"
# kwok's stage that ends deleted pods; every other pod stage is kept off the pods this runtime runs.
KWOK_DELETE_STAGE = "pod-delete"
KWOK_READY_STAGE = "pod-ready"


# --------------------------------------------------------------------------- mode (simctl's hooks)

def configure(state: Path, mode: str) -> str | None:
    """Record the runtime mode at `simctl up`; an error sentence when a running cluster has another mode."""
    if mode not in ("replay", "host"):
        return f"SIM_EXEC must be 'replay' or 'host', not {mode!r}"
    path = state / MODE_FILE
    if path.exists():
        running = json.loads(path.read_text()).get("mode", "replay")
        if running != mode:
            return (f"the running simulated cluster runs pods in {running!r} mode, not {mode!r}; "
                    "stop it first with `make sim-down`")
        return None
    settings = {"mode": mode}
    if mode == "host":
        settings["gpus"] = machine_gpus()
        settings["volumes"] = dict(item.split("=", 1) for item in
                                   os.environ.get("SIM_EXEC_VOLUMES", "").split(",") if "=" in item)
    state.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings) + "\n")
    return None


def settings(state: Path) -> dict:
    path = state / MODE_FILE
    return json.loads(path.read_text()) if path.exists() else {"mode": "replay"}


def enabled(state: Path) -> bool:
    return settings(state).get("mode") == "host"


def machine_gpus() -> list:
    """This machine's GPUs the pods may have: SIM_EXEC_GPUS (comma-separated indices; empty = none), else
    every GPU nvidia-smi lists, else none (a CPU machine: every pod that asks for a GPU stays Pending)."""
    if "SIM_EXEC_GPUS" in os.environ:
        return [g.strip() for g in os.environ["SIM_EXEC_GPUS"].split(",") if g.strip()]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().isdigit()]


def adapt_stage(obj: dict, state: Path, system_namespaces) -> dict:
    """In host mode, kwok's pod stages act only on system pods; pod-ready also lets through the pods this
    runtime has admitted, and pod-delete stays as it is (a deleted pod goes away; the runtime ends its
    processes). Replay mode: unchanged."""
    spec = obj.get("spec") or {}
    if (obj.get("kind") != "Stage" or (spec.get("resourceRef") or {}).get("kind") != "Pod"
            or obj["metadata"]["name"] == KWOK_DELETE_STAGE or not enabled(state)):
        return obj
    obj = json.loads(json.dumps(obj))
    allowed = sorted(system_namespaces)
    if obj["metadata"]["name"] == KWOK_READY_STAGE:
        allowed.append("start")
    selector = obj["spec"].setdefault("selector", {})
    selector.setdefault("matchExpressions", []).append(
        {"key": f'(.metadata.annotations["{EXEC_ANNOTATION}"] // .metadata.namespace)', "operator": "In",
         "values": allowed})
    return obj


# --------------------------------------------------------------------------- helpers

def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def expand(text: str, env: dict) -> str:
    """Kubernetes' $(VAR) expansion of env values, command and args ($$ escapes; unknown names stay)."""
    return re.sub(r"\$\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: m.group(0)[1:] if m.group(0).startswith("$$")
                  else (env.get(m.group(2), m.group(0))), text)


def field_value(pod: dict, path: str) -> str:
    """A downward API fieldRef (metadata.name, metadata.labels['k'], spec.nodeName, status.hostIP, ...)."""
    match = re.match(r"metadata\.(labels|annotations)\['(.+)'\]$", path)
    if match:
        return (pod["metadata"].get(match.group(1)) or {}).get(match.group(2), "")
    node = pod
    for part in path.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""
    if isinstance(node, list):  # status.podIPs / hostIPs
        return ",".join(i.get("ip", "") for i in node)
    return str(node)


class Missing(Exception):
    """A ConfigMap/Secret (or key) the pod needs does not exist: the kubelet keeps the pod waiting."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def cri_line(stream: str, text: str) -> str:
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return f"{ts} {stream} F {text}\n"


# --------------------------------------------------------------------------- one pod

class PodRun:
    """One pod of this runtime: waiting (volumes or GPUs), admitted, running, then done."""

    def __init__(self, pod: dict, root: Path, log_path: Path):
        self.pod = pod
        self.ns, self.name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.uid = pod["metadata"]["uid"]
        self.root = root
        self.log_path = log_path
        self.state = "new"          # new -> waiting -> admitted -> running -> done
        self.devices: list = []
        self.binds: list = []       # [source, mountPath, readOnly]
        self.waiting_reported = ""
        self.proc = None
        self.started = 0.0
        self.deleted = False
        self.kill_reason = ""
        self.created_paths: list = []

    def gpus_wanted(self) -> int:
        total = 0
        for container in self.pod["spec"].get("containers") or []:
            res = container.get("resources") or {}
            total += int((res.get("limits") or {}).get(GPU) or (res.get("requests") or {}).get(GPU) or 0)
        return total


class Runtime:
    """Watches every pod of the cluster and runs the ones on simulated nodes outside the system namespaces."""

    def __init__(self, clients, state: Path, system_namespaces):
        from kubernetes import client as k8s
        self.k8s = k8s
        self.client, self.api, self.dyn = clients()
        self.core = k8s.CoreV1Api(self.api)
        self.state = state
        self.system = set(system_namespaces)
        conf = settings(state)
        self.free = list(conf.get("gpus") or [])
        self.all_gpus = list(self.free)
        self.pv_dirs = conf.get("volumes") or {}
        self.pods: dict = {}
        self.lock = threading.RLock()
        self.mountpoints: dict = {}   # path this runtime created -> number of running pods that need it
        server = self.api.configuration.host
        self.api_host, _sep, self.api_port = server.split("://", 1)[-1].rpartition(":")

    # ---- API helpers
    def plain(self, obj) -> dict:
        return self.api.sanitize_for_serialization(obj)

    def event(self, run: PodRun, kind: str, reason: str, message: str) -> None:
        body = {"metadata": {"generateName": run.name + ".", "namespace": run.ns},
                "involvedObject": {"kind": "Pod", "name": run.name, "namespace": run.ns, "uid": run.uid,
                                   "apiVersion": "v1"},
                "reason": reason, "message": message, "type": kind,
                "source": {"component": "kubelet", "host": run.pod["spec"].get("nodeName")},
                "firstTimestamp": now_rfc3339(), "lastTimestamp": now_rfc3339(), "count": 1}
        try:
            self.core.create_namespaced_event(run.ns, body, _request_timeout=10)
        except Exception as exc:  # the namespace may be going away
            print(f"exec: event for {run.ns}/{run.name}: {exc}", flush=True)

    def patch_status(self, run: PodRun, status: dict) -> None:
        try:
            self.core.patch_namespaced_pod_status(run.name, run.ns, {"status": status}, _request_timeout=10)
        except Exception as exc:  # deleted meanwhile
            print(f"exec: status of {run.ns}/{run.name}: {type(exc).__name__}: {exc}", flush=True)

    def read_object(self, kind: str, name: str, ns: str):
        """A ConfigMap's or Secret's data as {key: bytes}, or None when it does not exist."""
        try:
            if kind == "configmap":
                obj = self.core.read_namespaced_config_map(name, ns, _request_timeout=10)
                data = {k: v.encode() for k, v in (obj.data or {}).items()}
                data.update({k: base64.b64decode(v) for k, v in (obj.binary_data or {}).items()})
                return data
            obj = self.core.read_namespaced_secret(name, ns, _request_timeout=10)
            data = {k: base64.b64decode(v) for k, v in (obj.data or {}).items()}
            data.update({k: v.encode() for k, v in (obj.string_data or {}).items()})
            return data
        except self.k8s.exceptions.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    # ---- volumes
    def write_keys(self, dest: Path, data: dict, items, mode) -> None:
        pairs = [(i["key"], i.get("path") or i["key"], i.get("mode")) for i in items] if items else \
            [(k, k, None) for k in data]
        for key, rel, item_mode in pairs:
            if key not in data:
                continue
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data[key])
            path.chmod(int(item_mode if item_mode is not None else (mode if mode is not None else 0o644)))

    def source_data(self, run: PodRun, kind: str, ref: dict, vol_name: str):
        name = ref.get("name") if kind == "configmap" else (ref.get("secretName") or ref.get("name"))
        data = self.read_object(kind, name, run.ns)
        if data is None:
            if ref.get("optional"):
                return {}
            raise Missing("FailedMount", f'MountVolume.SetUp failed for volume "{vol_name}" : {kind} "{name}" not found')
        for item in ref.get("items") or []:
            if item["key"] not in data and not ref.get("optional"):
                raise Missing("FailedMount", f'MountVolume.SetUp failed for volume "{vol_name}" : {kind} '
                                             f'"{name}" has no key "{item["key"]}"')
        return data

    def token(self, run: PodRun, src: dict) -> bytes:
        spec = {"expirationSeconds": int(src.get("expirationSeconds") or 3600),
                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": run.name, "uid": run.uid}}
        if src.get("audience"):
            spec["audiences"] = [src["audience"]]
        sa = run.pod["spec"].get("serviceAccountName") or "default"
        try:
            got = self.core.create_namespaced_service_account_token(sa, run.ns, {"spec": spec}, _request_timeout=10)
            return got.status.token.encode()
        except Exception as exc:  # no token: the pod still runs, as one with automountServiceAccountToken off
            print(f"exec: token for {run.ns}/{run.name}: {exc}", flush=True)
            return b""

    def materialise(self, run: PodRun) -> dict:
        """{volume name: directory or file on this machine} for every volume of the pod."""
        out = {}
        for vol in run.pod["spec"].get("volumes") or []:
            name = vol["name"]
            dest = run.root / "volumes" / name
            if "hostPath" in vol:
                path = Path(vol["hostPath"]["path"])
                kind = vol["hostPath"].get("type") or ""
                if kind == "DirectoryOrCreate":
                    path.mkdir(parents=True, exist_ok=True)
                elif kind == "FileOrCreate" and not path.exists():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch()
                elif kind and not path.exists():
                    raise Missing("FailedMount", f'MountVolume.SetUp failed for volume "{name}" : hostPath type '
                                                 f'check failed: {path} does not exist')
                out[name] = path
                continue
            if "persistentVolumeClaim" in vol:
                out[name] = self.claim_dir(run, vol["persistentVolumeClaim"]["claimName"], name)
                continue
            dest.mkdir(parents=True, exist_ok=True)
            if "configMap" in vol:
                ref = vol["configMap"]
                self.write_keys(dest, self.source_data(run, "configmap", ref, name), ref.get("items"),
                                ref.get("defaultMode"))
            elif "secret" in vol:
                ref = vol["secret"]
                self.write_keys(dest, self.source_data(run, "secret", ref, name), ref.get("items"),
                                ref.get("defaultMode"))
            elif "downwardAPI" in vol:
                self.downward(run, dest, vol["downwardAPI"].get("items") or [])
            elif "projected" in vol:
                self.projected(run, dest, vol["projected"], name)
            out[name] = dest  # emptyDir (any medium) and unknown kinds: an empty directory of the pod's own
        return out

    def downward(self, run: PodRun, dest: Path, items: list) -> None:
        for item in items:
            if "fieldRef" in item:
                path = dest / item["path"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(field_value(run.pod, item["fieldRef"]["fieldPath"]))

    def projected(self, run: PodRun, dest: Path, spec: dict, name: str) -> None:
        mode = spec.get("defaultMode")
        for src in spec.get("sources") or []:
            if "configMap" in src:
                self.write_keys(dest, self.source_data(run, "configmap", src["configMap"], name),
                                src["configMap"].get("items"), mode)
            elif "secret" in src:
                self.write_keys(dest, self.source_data(run, "secret", src["secret"], name),
                                src["secret"].get("items"), mode)
            elif "downwardAPI" in src:
                self.downward(run, dest, src["downwardAPI"].get("items") or [])
            elif "serviceAccountToken" in src:
                (dest / src["serviceAccountToken"]["path"]).write_bytes(self.token(run, src["serviceAccountToken"]))

    def claim_dir(self, run: PodRun, claim: str, vol_name: str) -> Path:
        """A claim's bound volume: SIM_EXEC_VOLUMES' directory for it, its hostPath, else a directory of the
        simulated cluster that every pod of that volume shares (shared storage such as FSx)."""
        try:
            pvc = self.core.read_namespaced_persistent_volume_claim(claim, run.ns, _request_timeout=10)
        except self.k8s.exceptions.ApiException as exc:
            raise Missing("FailedMount", f'persistentvolumeclaim "{claim}" not found') from exc
        pv_name = pvc.spec.volume_name
        if not pv_name:
            raise Missing("FailedMount", f'volume "{vol_name}": persistentvolumeclaim "{claim}" is not bound')
        if pv_name in self.pv_dirs:
            path = Path(self.pv_dirs[pv_name])
        else:
            pv = self.core.read_persistent_volume(pv_name, _request_timeout=10)
            path = Path(pv.spec.host_path.path) if pv.spec.host_path else self.state / "volumes" / pv_name
        path.mkdir(parents=True, exist_ok=True)
        return path

    # ---- environment
    def container_env(self, run: PodRun, container: dict) -> dict:
        """The container's environment as the kubelet builds it: base, envFrom, env ($(VAR) expanded), devices."""
        env = {"PATH": os.environ.get("SIM_EXEC_PATH") or os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
               "HOSTNAME": run.name, "HOME": POD_HOME,
               "KUBERNETES_SERVICE_HOST": self.api_host, "KUBERNETES_SERVICE_PORT": self.api_port}
        for src in container.get("envFrom") or []:
            prefix = src.get("prefix") or ""
            for kind, key in (("configmap", "configMapRef"), ("secret", "secretRef")):
                if key in src:
                    data = self.read_object(kind, src[key]["name"], run.ns)
                    if data is None and not src[key].get("optional"):
                        raise Missing("CreateContainerConfigError", f'{kind} "{src[key]["name"]}" not found')
                    env.update({prefix + k: v.decode(errors="replace") for k, v in (data or {}).items()})
        for item in container.get("env") or []:
            env[item["name"]] = self.env_value(run, container, item, env)
        if run.gpus_wanted() or run.devices:
            visible = ",".join(run.devices)
            env.update({"CUDA_VISIBLE_DEVICES": visible, "NVIDIA_VISIBLE_DEVICES": visible or "void"})
        else:  # a pod without a GPU request sees none, as with the NVIDIA device plugin
            env.update({"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void"})
        return env

    def env_value(self, run: PodRun, container: dict, item: dict, env: dict) -> str:
        if "valueFrom" not in item:
            return expand(item.get("value") or "", env)
        ref = item["valueFrom"]
        if "fieldRef" in ref:
            return field_value(run.pod, ref["fieldRef"]["fieldPath"])
        if "resourceFieldRef" in ref:
            kind, _sep, res = ref["resourceFieldRef"]["resource"].partition(".")
            return str(((container.get("resources") or {}).get(kind) or {}).get(res, "0"))
        for kind, key in (("configmap", "configMapKeyRef"), ("secret", "secretKeyRef")):
            if key in ref:
                data = self.read_object(kind, ref[key]["name"], run.ns)
                if data is None or ref[key]["key"] not in data:
                    if ref[key].get("optional"):
                        return ""
                    what = f'{kind} "{ref[key]["name"]}"'
                    what += " not found" if data is None else f' has no key "{ref[key]["key"]}"'
                    raise Missing("CreateContainerConfigError", what)
                return data[ref[key]["key"]].decode(errors="replace")
        return ""

    # ---- admission and start
    def admit(self, run: PodRun) -> None:
        """Volumes, then devices; when both are there let kwok's pod-ready stage make the pod Running."""
        try:
            volumes = self.materialise(run)
            container = run.pod["spec"]["containers"][0]
            self.container_env(run, container)  # a missing ConfigMap/Secret key shows now, before any device
        except Missing as exc:
            return self.wait(run, exc.reason, exc.message)
        wanted = run.gpus_wanted()
        with self.lock:
            if wanted > len(self.free):
                return self.wait(run, "SimGPUsBusy",
                                 f"needs {wanted} GPU(s) of this machine, {len(self.free)} free of "
                                 f"{len(self.all_gpus)} ({','.join(self.all_gpus) or 'none: SIM_EXEC_GPUS is empty'})")
            run.devices, self.free = self.free[:wanted], self.free[wanted:]
        run.binds = []
        for mount in container.get("volumeMounts") or []:
            src = volumes.get(mount["name"])
            if src is None:
                continue
            if mount.get("subPath"):
                src = Path(src) / mount["subPath"]
            run.binds.append([str(src), mount["mountPath"], bool(mount.get("readOnly"))])
        run.state = "admitted"
        try:
            self.core.patch_namespaced_pod(run.name, run.ns, {"metadata": {"annotations": {EXEC_ANNOTATION: "start"}}},
                                           _request_timeout=10)
        except Exception as exc:  # deleted meanwhile: the DELETED event releases the devices
            print(f"exec: admitting {run.ns}/{run.name}: {exc}", flush=True)

    def wait(self, run: PodRun, reason: str, message: str) -> None:
        run.state = "waiting"
        if run.waiting_reported == message:
            return
        run.waiting_reported = message
        print(f"exec: {run.ns}/{run.name} waits: {message}", flush=True)
        self.event(run, "Warning", reason, message)
        waiting_reason = reason if reason == "CreateContainerConfigError" else "ContainerCreating"
        self.patch_status(run, {"phase": "Pending", "containerStatuses": [
            {"name": c["name"], "image": c.get("image", ""), "ready": False, "restartCount": 0,
             "state": {"waiting": {"reason": waiting_reason, "message": message}}}
            for c in run.pod["spec"]["containers"]]})

    def mount_points(self, run: PodRun) -> None:
        """Create the mount points (and workingDir) this machine lacks; remembered for removal. /tmp is the pod's own."""
        container = run.pod["spec"]["containers"][0]
        wanted = [(dst, Path(src).is_file()) for src, dst, _ro in run.binds]
        if container.get("workingDir"):
            wanted.append((container["workingDir"], False))
        with self.lock:
            tops = set()
            for dst, is_file in wanted:
                path = Path(dst)
                if path == Path("/tmp") or Path("/tmp") in path.parents:
                    continue
                # under a mount point another running pod needs: count this pod too, so it is not removed under it
                top = next((Path(t) for t in self.mountpoints if Path(t) == path or Path(t) in path.parents), None)
                if top is None:
                    if path.exists():
                        continue
                    top = path
                    while not top.parent.exists():
                        top = top.parent
                if not path.exists():
                    if is_file:
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.touch()
                    else:
                        path.mkdir(parents=True, exist_ok=True)
                tops.add(str(top))
            for top in tops:
                self.mountpoints[top] = self.mountpoints.get(top, 0) + 1
                run.created_paths.append(top)

    def release_mount_points(self, run: PodRun) -> None:
        with self.lock:
            for top in run.created_paths:
                self.mountpoints[top] -= 1
                if self.mountpoints[top] <= 0:
                    del self.mountpoints[top]
                    remove_empty_tree(Path(top))
            run.created_paths = []

    def start(self, run: PodRun) -> None:
        container = run.pod["spec"]["containers"][0]
        try:
            env = self.container_env(run, container)
        except Missing as exc:
            return self.finish(run, 1, "CreateContainerConfigError", exc.message)
        argv = [expand(a, env) for a in (container.get("command") or []) + (container.get("args") or [])]
        if not container.get("command"):
            return self.finish(run, 127, "Error", "sim exec mode: the container has no command; the image's "
                                                  "entrypoint is not known on this machine")
        (run.root / "tmp").mkdir(parents=True, exist_ok=True)
        self.mount_points(run)
        spec = {"binds": run.binds, "tmp": str(run.root / "tmp"), "argv": argv, "env": env,
                "cwd": container.get("workingDir") or POD_HOME}  # no image WORKDIR here: the pod's own home
        (run.root / "init.json").write_text(json.dumps(spec))
        run.state = "running"
        run.started = time.monotonic()
        cmd = [shutil.which("unshare") or "unshare", "--mount", "--propagation", "private", "--fork", "--",
               sys.executable, str(Path(__file__).resolve()), "init", str(run.root / "init.json")]
        try:
            run.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True)  # init execs the command with `env`
        except OSError as exc:  # no unshare on this machine
            return self.finish(run, 128, "StartError", f"sim exec mode could not start the pod: {exc}")
        print(f"exec: {run.ns}/{run.name} started pid {run.proc.pid} on {run.pod['spec'].get('nodeName')} "
              f"devices [{','.join(run.devices)}]: {argv}", flush=True)
        threading.Thread(target=self.supervise, args=(run,), daemon=True, name=f"pod-{run.name}").start()

    def supervise(self, run: PodRun) -> None:
        lock = threading.Lock()
        with open(run.log_path, "a", encoding="utf-8") as out:
            def pump(pipe, stream):
                for raw in iter(pipe.readline, b""):
                    with lock:
                        out.write(cri_line(stream, raw.decode("utf-8", errors="replace").rstrip("\n")))
                        out.flush()
            readers = [threading.Thread(target=pump, args=(run.proc.stdout, "stdout"), daemon=True),
                       threading.Thread(target=pump, args=(run.proc.stderr, "stderr"), daemon=True)]
            for reader in readers:
                reader.start()
            rc = run.proc.wait()
            for reader in readers:
                reader.join(10)
        code = rc if rc >= 0 else 128 - rc  # killed by a signal: 128 + its number, as a container runtime reports
        if run.kill_reason == "DeadlineExceeded":
            self.finish(run, code, "DeadlineExceeded", "Pod was active on the node longer than the specified deadline",
                        pod_reason="DeadlineExceeded")
        else:
            self.finish(run, code, "Completed" if code == 0 else "Error", "")

    def finish(self, run: PodRun, code: int, reason: str, message: str, pod_reason: str = "") -> None:
        with self.lock:
            self.free.extend(d for d in run.devices if d not in self.free)
            run.devices = []
        self.release_mount_points(run)
        run.state = "done"
        print(f"exec: {run.ns}/{run.name} exited {code} ({reason})", flush=True)
        if run.deleted:
            return
        stamp = now_rfc3339()
        terminated = {"exitCode": code, "reason": reason, "startedAt": stamp, "finishedAt": stamp}
        if message:
            terminated["message"] = message
        status = {"phase": "Succeeded" if code == 0 else "Failed",
                  "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": stamp},
                                 {"type": "ContainersReady", "status": "False", "reason": "PodCompleted",
                                  "lastTransitionTime": stamp}],
                  "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "ready": False,
                                         "restartCount": 0, "started": False, "state": {"terminated": terminated}}
                                        for c in run.pod["spec"]["containers"]]}
        if pod_reason:
            status.update({"reason": pod_reason, "message": terminated.get("message", "")})
        self.patch_status(run, status)

    def stop(self, run: PodRun, grace: float, reason: str = "") -> None:
        """SIGTERM to the pod's process group, SIGKILL after `grace` seconds (the kubelet's order)."""
        if run.proc is None or run.proc.poll() is not None:
            return
        run.kill_reason = run.kill_reason or reason
        try:
            os.killpg(run.proc.pid, signal.SIGTERM)
        except OSError:
            return

        def kill_later():
            try:
                run.proc.wait(timeout=max(grace, 0))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(run.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        threading.Thread(target=kill_later, daemon=True).start()

    # ---- the loop
    def on_event(self, kind: str, pod: dict) -> None:
        meta = pod["metadata"]
        node = pod["spec"].get("nodeName")
        if meta["namespace"] in self.system or not node:
            return
        with self.lock:
            run = self.pods.get(meta["uid"])
            if run is None:
                if kind == "DELETED" or meta.get("deletionTimestamp") or pod.get("status", {}).get("phase") in (
                        "Succeeded", "Failed"):
                    return
                root = self.state / "pods" / f"{meta['namespace']}_{meta['name']}_{meta['uid'][:8]}"
                root.mkdir(parents=True, exist_ok=True)
                log_path = self.state / "podlogs" / f"{meta['namespace']}_{meta['name']}.log"
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text("")
                run = self.pods[meta["uid"]] = PodRun(pod, root, log_path)
                self.logs_object(run)
            run.pod = pod
        if kind == "DELETED" or meta.get("deletionTimestamp"):
            self.delete(run, kind == "DELETED")
        elif run.state == "new":
            self.admit(run)
        elif run.state == "admitted" and pod.get("status", {}).get("phase") == "Running":
            self.start(run)

    def delete(self, run: PodRun, gone: bool) -> None:
        if not run.deleted:
            run.deleted = True
            grace = run.pod["metadata"].get("deletionGracePeriodSeconds")
            if grace is None:
                grace = run.pod["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_S)
            if run.state == "running":
                self.stop(run, float(grace))
            elif run.state in ("admitted", "waiting", "new"):
                with self.lock:
                    self.free.extend(d for d in run.devices if d not in self.free)
                    run.devices = []
                run.state = "done"
        if gone:
            threading.Thread(target=self.forget, args=(run,), daemon=True).start()

    def forget(self, run: PodRun) -> None:
        """Once the pod object and its processes are gone: its directory (and log) go too."""
        if run.proc is not None:
            try:
                run.proc.wait(timeout=DEFAULT_GRACE_S + 30)
            except subprocess.TimeoutExpired:
                pass
        for _attempt in range(100):  # the supervisor thread's last status patch and release
            if run.state == "done":
                break
            time.sleep(0.1)
        shutil.rmtree(run.root, ignore_errors=True)
        run.log_path.unlink(missing_ok=True)
        with self.lock:
            self.pods.pop(run.uid, None)

    def logs_object(self, run: PodRun) -> None:
        body = {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
                "metadata": {"name": run.name, "namespace": run.ns,
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": run.name, "uid": run.uid}]},
                "spec": {"logs": [{"logsFile": str(run.log_path), "previousLogsFile": str(run.log_path)}]}}
        try:
            res = self.dyn.resources.get(api_version="kwok.x-k8s.io/v1alpha1", kind="Logs")
            res.server_side_apply(body=body, name=run.name, namespace=run.ns, field_manager="rlstack-sim", force_conflicts=True)
        except Exception as exc:
            print(f"exec: Logs object of {run.ns}/{run.name}: {exc}", flush=True)

    def tick(self) -> None:
        """Every RETRY_S: waiting pods try again (devices freed, ConfigMap created), deadlines are enforced."""
        while True:
            time.sleep(RETRY_S)
            with self.lock:
                runs = list(self.pods.values())
            for run in runs:
                try:
                    if run.state == "waiting" and not run.deleted:
                        self.admit(run)
                    deadline = run.pod["spec"].get("activeDeadlineSeconds")
                    if run.state == "running" and deadline and time.monotonic() - run.started > float(deadline):
                        self.stop(run, float(run.pod["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_S)),
                                  "DeadlineExceeded")
                except Exception as exc:  # one pod's trouble must not stop the others
                    print(f"exec: {run.ns}/{run.name}: {type(exc).__name__}: {exc}", flush=True)

    def shutdown(self, *_args) -> None:
        """The runtime is stopped (simctl down): no pod process outlives it."""
        with self.lock:
            runs = list(self.pods.values())
        for run in runs:
            if run.proc is not None and run.proc.poll() is None:
                try:
                    os.killpg(run.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        for run in runs:
            self.release_mount_points(run)
        os._exit(0)

    def serve(self) -> None:
        from kubernetes import watch
        signal.signal(signal.SIGTERM, self.shutdown)
        signal.signal(signal.SIGINT, self.shutdown)
        print(f"exec: host mode, devices [{','.join(self.all_gpus)}], claims {self.pv_dirs or 'in ' + str(self.state / 'volumes')}",
              flush=True)
        threading.Thread(target=self.tick, daemon=True, name="tick").start()
        while True:
            try:
                for event in watch.Watch().stream(self.core.list_pod_for_all_namespaces, timeout_seconds=60):
                    self.on_event(event["type"], self.plain(event["object"]))
            except Exception as exc:  # keep serving: the API server may restart or a watch may expire
                print(f"exec: {type(exc).__name__}: {exc}", flush=True)
                time.sleep(1)


def run(clients, state: Path, system_namespaces) -> None:
    Runtime(clients, state, system_namespaces).serve()


def remove_empty_tree(top: Path) -> None:
    """Remove `top` if it holds nothing but empty directories (or empty files this runtime made as mount points)."""
    if not top.exists() or top.is_symlink():
        return
    if top.is_file():
        if top.stat().st_size == 0:
            top.unlink()
        return
    for child in top.iterdir():
        remove_empty_tree(child)
    try:
        top.rmdir()
    except OSError:
        pass  # something else was put there: leave it


# --------------------------------------------------------------------------- inside the pod's mount namespace

def bind(fd: int, target: str, read_only: bool) -> None:
    subprocess.run(["mount", "--bind", f"/proc/self/fd/{fd}", target], check=True, pass_fds=[fd])
    if read_only:
        subprocess.run(["mount", "-o", "remount,bind,ro", target], check=True)


def init(spec_path: str) -> None:
    """The pod's first process: bind its volumes at their mount paths and a /tmp of its own, then exec its command.

    Every source is opened before /tmp is covered, so a source under /tmp (a test's SIM_STATE) still mounts."""
    spec = json.loads(Path(spec_path).read_text())
    sources = [(os.open(src, os.O_PATH), dst, ro) for src, dst, ro in spec["binds"]]
    tmp = os.open(spec["tmp"], os.O_PATH)
    for fd in [tmp] + [s[0] for s in sources]:
        os.set_inheritable(fd, True)
    bind(tmp, "/tmp", False)
    for fd, dst, read_only in sources:
        target = Path(dst)
        if not target.exists():  # under /tmp, which is the pod's own now
            if Path(f"/proc/self/fd/{fd}").is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
        bind(fd, dst, read_only)
    for fd in [tmp] + [s[0] for s in sources]:
        os.close(fd)
    if spec["env"].get("HOME") == POD_HOME:
        Path(POD_HOME).mkdir(parents=True, exist_ok=True)
    cwd = Path(spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    os.chdir(cwd)
    argv = spec["argv"]
    try:
        os.execvpe(argv[0], argv, spec["env"])
    except OSError as exc:  # what a container runtime says for a missing executable
        print(f'exec: "{argv[0]}": {exc.strerror}', file=sys.stderr, flush=True)
        sys.exit(127 if isinstance(exc, FileNotFoundError) else 126)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "init":
        init(sys.argv[2])
    else:
        sys.exit("usage: exec_runtime.py init SPEC (the node runtime runs it; see sim/README.md)")
