"""The multi-call program and `make sim-pack` (sim/build.sh, sim/multicall/, sim/pack.sh, sim/device_up.sh) carry
every binary and module file the simulated cluster starts from, and simctl.py finds the module files of a pack
through $GOMODCACHE on a machine without Go."""
import importlib.util
import re
from pathlib import Path

SIM = Path(__file__).resolve().parents[3] / "sim"


def load_simctl():
    spec = importlib.util.spec_from_file_location("sim_simctl_pack", SIM / "simctl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_components():
    text = (SIM / "build.sh").read_text()
    names = set(re.search(r'^COMPONENTS="([^"]+)"', text, re.M).group(1).split())
    names |= set(re.findall(r"^link_components rlstack-sim ([a-z-]+)$", text, re.M))
    return names


def test_every_binary_simctl_and_kwokctl_start_is_a_component_of_the_multicall_program():
    simctl = load_simctl()
    assert set(simctl.BINARIES) == _build_components()
    named = set(re.findall(r"\$\{SIM_BIN\}/([a-z-]+)", (SIM / "kwok.yaml.in").read_text()))
    assert named <= _build_components()


def test_the_program_dispatches_on_the_components_build_sh_links_to_it():
    text = (SIM / "build.sh").read_text()
    main = (SIM / "multicall" / "main.go").read_text()
    table = re.search(r"var commands = map\[string\][^{]*\{(.*?)\n\}", main, re.S).group(1)
    # kwok-controller: the name kwokctl's binary runtime runs kwok by (its copy in the cluster's bin folder)
    assert set(re.findall(r'^\s+"([a-z-]+)":', table, re.M)) - {"kwok-controller"} == set(
        re.search(r'^COMPONENTS="([^"]+)"', text, re.M).group(1).split())


def test_the_pack_holds_every_module_file_simctl_reads_at_up():
    pack = (SIM / "pack.sh").read_text()
    simctl_src = (SIM / "simctl.py").read_text()
    stages = re.search(r'for rel in \(([^)]*)\)', simctl_src).group(1)
    for rel in re.findall(r'"([^"]+\.yaml)"', stages):
        assert f"kustomize/stage/{rel}" in pack, rel
    for crd in re.findall(r'"((?:kubeflow\.org|jobset\.x-k8s\.io)_[a-z]+\.yaml)"', simctl_src):
        assert crd in pack, crd
    for kind in re.search(r'for kind in \(([^)]*)\)', simctl_src).group(1).replace('"', "").split(","):
        assert f"trainer.kubeflow.org_{kind.strip()}.yaml" in pack, kind


def test_gomodcache_from_the_environment_needs_no_go(monkeypatch, tmp_path):
    simctl = load_simctl()
    (tmp_path / "sigs.k8s.io" / "kwok@v0.8.0").mkdir(parents=True)
    monkeypatch.setenv("GOMODCACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "no-go-here"))
    assert simctl.module_dir("sigs.k8s.io/kwok", "0.8.0") == tmp_path / "sigs.k8s.io" / "kwok@v0.8.0"


def test_device_up_refuses_a_pack_of_other_pins():
    text = (SIM / "device_up.sh").read_text()
    assert 'cmp -s "$dest/versions.env" "$root/sim/versions.env"' in text
