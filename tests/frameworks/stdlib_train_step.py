"""One real optimisation step in pure Python (no torch): the L5 example of the exec-mode sim test.

Reads its dataset directory the way a LIBERO training script does (libero.libero.get_libero_path, so the
import needs LIBERO's config.yaml: mounted from the run's ConfigMap, or absent and LIBERO asks with input()),
then fits a logistic regression on a small seeded dataset with one gradient step and prints the loss before
and after. Exit 0 only when the step lowered the loss. tests/sim/test_sim_exec_host.py runs it as a Job."""
import math
import random
import sys

from libero import libero  # asks for a dataset path with input() when its config.yaml is missing

print("datasets: %s" % libero.get_libero_path("datasets"), flush=True)
rng = random.Random(0)
points = [[rng.gauss(0, 1), rng.gauss(0, 1)] for _index in range(256)]
labels = [1.0 if 1.5 * x - y + 0.2 > 0 else 0.0 for x, y in points]
weights, bias, rate = [0.0, 0.0], 0.0, 0.5


def loss_and_grad(w, b):
    loss, gw, gb = 0.0, [0.0, 0.0], 0.0
    for (x, y), t in zip(points, labels):
        p = 1.0 / (1.0 + math.exp(-(w[0] * x + w[1] * y + b)))
        loss -= t * math.log(p + 1e-12) + (1 - t) * math.log(1 - p + 1e-12)
        gw[0] += (p - t) * x
        gw[1] += (p - t) * y
        gb += p - t
    n = len(points)
    return loss / n, [g / n for g in gw], gb / n


before, grad_w, grad_b = loss_and_grad(weights, bias)
weights = [w - rate * g for w, g in zip(weights, grad_w)]
bias -= rate * grad_b
after = loss_and_grad(weights, bias)[0]
print("step 1/1 loss %.6f -> %.6f" % (before, after), flush=True)
sys.exit(0 if after < before else 1)
