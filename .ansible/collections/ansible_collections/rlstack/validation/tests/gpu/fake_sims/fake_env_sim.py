"""A stand-in for a simulation library that needs an environment variable at import time and exposes a
LIBERO-like benchmark registry. Used by tests of probe_sim_import.py; never imported by pytest."""
import os

DATASET_DIR = os.environ["FAKE_SIM_DATASET_DIR"]


class _Benchmark(object):
    def __init__(self, n):
        self.n_tasks = n

    def get_task_names(self):
        return ["task_%d" % i for i in range(self.n_tasks)]


class LIBERO_10(_Benchmark):
    def __init__(self):
        _Benchmark.__init__(self, 10)


class LIBERO_SPATIAL(_Benchmark):
    def __init__(self):
        _Benchmark.__init__(self, 10)


_REGISTRY = {"libero_10": LIBERO_10, "libero_spatial": LIBERO_SPATIAL}


def get_benchmark(name):
    """Like libero.libero.benchmark.get_benchmark: returns the benchmark class."""
    return _REGISTRY[name.lower()]
