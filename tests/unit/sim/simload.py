"""Load a module of sim/ by its file (sim/ is not a package), as the unit tests of the simulated cluster do."""
import importlib.util
from pathlib import Path

SIM = Path(__file__).resolve().parents[3] / "sim"


def load(name):
    """sim/<name>.py as module sim_<name> (simctl.py imports its siblings, e.g. node_runtime, by their own names)."""
    spec = importlib.util.spec_from_file_location(f"sim_{name}", SIM / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
