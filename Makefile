# rlstack.validation — developer entry points. `make demo` and `make test` set themselves up.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SIM_SCENARIO ?= healthy
SIM_NODES ?= 2
SIM_EXEC ?= replay
INVENTORY ?= inventories/sim
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help venv demo test test-unit lint sanity test-sim test-sim-extended test-molecule test-gpu sim-build sim-pack sim-up sim-down \
        sim-status sim-scenario sim-exec-deps trl-cpu-venv test-trl-cpu bench bench-fleet changelog clean test-faults test-html test-fleet test-isolate \
        awx-up awx-down awx-status test-awx terminal

help:
	@echo "make demo     validate the built-in simulated EKS cluster and print the results table"
	@echo "make test     run every test (lint, sanity, unit, simulated cluster, molecule)"
	@echo "make test-isolate   every bad-node isolation case on simulated clusters of 8, 16 and 64 nodes"
	@echo "make sim-pack   the sim as one xz archive for a machine without Go (sim/device_up.sh starts it there)"
	@echo "make sim-up [SIM_SCENARIO=healthy] [SIM_NODES=2] [SIM_EXEC=replay|host] | sim-down | sim-status | sim-scenario SIM_SCENARIO=name"
	@echo "make awx-up | awx-down | awx-status   a real AWX 24.6.1 on this machine; make test-awx   the collection on it"
	@echo "make test-trl-cpu   L5/L6 with real TRL (one GRPO step on CPU) as Jobs on an exec-mode sim (builds .venv-trl: several GB)"

venv: $(VENV)/.installed

COMPILED = ansible ansible_collections/kubernetes/core kubernetes jinja2 yaml markupsafe

# --no-compile: pip would compile every .py file it installs to bytecode (the `ansible` package alone holds some
# 15,000 of its collections'), minutes of CPU while make demo builds the simulated cluster beside it. What a run
# imports is compiled after it (2 s): ansible-core, the kubernetes client, kubernetes.core, Jinja2, PyYAML (without
# it the first make demo's playbook took 105 s instead of 62 s; docs/performance.md).
$(VENV)/.installed: requirements.txt test-requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	@echo "==> creating $(VENV) and installing pinned dependencies (first run: a few minutes)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on --disable-pip-version-check -q --upgrade pip==26.3
	$(BIN)/pip install --progress-bar on --disable-pip-version-check --no-compile -r requirements.txt -r test-requirements.txt \
		| grep -E '^(Collecting|Successfully)' | sed 's/^/    /' || true
	$(BIN)/python -c 'import ansible, kubernetes, jmespath, pytest'
	site=$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') && \
		$(BIN)/python -m compileall -q -j 0 $$(printf "$$site/%s " $(COMPILED)) >/dev/null
	@touch $@

sim-build:
	bash sim/build.sh

# One xz archive of the simulated cluster for a machine without Go or a network (the GPU machine): the
# multi-call program and the module files simctl.py reads. sim/device_up.sh starts it there (sim/README.md).
SIM_PACK ?= .cache/sim-pack/rlstack-sim-pack.tar.xz
sim-pack:
	bash sim/pack.sh $(SIM_PACK)

# The real LIBERO 0.1.1 (its sdist, pure Python; libero.libero needs only PyYAML) that the exec-mode sim test
# imports in its pods (tests/sim/test_sim_exec_host.py, sim/README.md "Exec mode"): about 3 MB, a few seconds.
SIM_CACHE_DIR := $(or $(SIM_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rlstack-sim)
sim-exec-deps: $(SIM_CACHE_DIR)/exec/libero-0.1.1/.unpacked

# The TRL environment the exec-mode sim test runs L5/L6 with, on CPU (tests/sim/test_sim_exec_trl.py): PyPI torch
# 2.15.0 and the CUDA libraries it loads at import even without a GPU, trl 1.16.0, datasets 5.2.0 (the freeze of
# tests/unit/fixtures/frameworks/trl/pip-freeze.txt). Several GB: not part of `make test`, which skips that test.
TRL_VENV := .venv-trl
trl-cpu-venv: $(TRL_VENV)/.installed

$(TRL_VENV)/.installed: tests/unit/fixtures/frameworks/trl/pip-freeze.txt
	@echo "==> creating $(TRL_VENV) with PyPI torch 2.15.0 (and its CUDA libraries), trl 1.16.0 (several GB)"
	$(PYTHON) -m venv $(TRL_VENV)
	$(TRL_VENV)/bin/pip install --progress-bar on --disable-pip-version-check -r $< \
		| grep -E '^(Collecting|Successfully)' | sed 's/^/    /' || true
	$(TRL_VENV)/bin/python -c 'import torch, trl, datasets'
	@touch $@

test-trl-cpu: venv sim-build trl-cpu-venv
	bash tests/with_sim.sh $(BIN)/pytest -q -p no:cacheprovider tests/sim/test_sim_exec_trl.py

$(SIM_CACHE_DIR)/exec/libero-0.1.1/.unpacked: | venv
	@echo "==> downloading LIBERO 0.1.1 (sdist, 3 MB) for the exec-mode sim test into $(SIM_CACHE_DIR)/exec"
	mkdir -p $(SIM_CACHE_DIR)/exec
	$(BIN)/pip download --progress-bar on --disable-pip-version-check --no-deps --no-binary :all: \
		-d $(SIM_CACHE_DIR)/exec libero==0.1.1
	tar -xzf $(SIM_CACHE_DIR)/exec/libero-0.1.1.tar.gz -C $(SIM_CACHE_DIR)/exec
	@touch $@

sim-up: venv
	$(BIN)/python sim/simctl.py up --scenario $(SIM_SCENARIO) --nodes $(SIM_NODES) --exec $(SIM_EXEC)

sim-scenario: venv
	$(BIN)/python sim/simctl.py scenario $(SIM_SCENARIO)

sim-down: venv
	$(BIN)/python sim/simctl.py down

sim-status: venv
	$(BIN)/python sim/simctl.py status

# On a fresh machine the .venv (pip: mostly the network) and the cluster's programs (Go: mostly the CPU) are made
# side by side; then the cluster starts (docs/performance.md, "A cold make demo").
demo:
	@$(MAKE) -s --no-print-directory -j2 venv sim-build
	@$(MAKE) --no-print-directory sim-up
	@echo "==> validating the simulated cluster ($(INVENTORY)); each level prints as it runs"
	$(BIN)/ansible-playbook playbooks/validate.yml -i $(INVENTORY) -e validation_report_dir=$(CURDIR)/report

test: venv sim-build sim-exec-deps terminal
	bash tests/run_all.sh

# The console's terminal test (tests/sim/test_sim_console.py) drives a real terminal: tmux, from Debian's archive
# when missing and we may install it (CI runs as root on Debian); without it that test is skipped, saying why.
terminal:
	@command -v tmux >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& { apt-get install -y -q tmux >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q tmux >/dev/null; }; }; } \
		|| echo "tmux is missing: the terminal test of the console will be skipped"

test-unit: venv
	$(BIN)/pytest tests/unit -q

lint: venv
	bash tests/lint.sh

sanity: venv
	bash tests/sanity.sh

test-sim: venv sim-build
	bash tests/with_sim.sh $(BIN)/pytest tests/sim -q -m "sim and not sim_extended"

# The longer sim tests (whole playbook runs, e.g. L3 as a TrainJob under healthy and nccl-crash; ~2-3 min).
test-sim-extended: venv sim-build
	bash tests/with_sim.sh $(BIN)/pytest tests/sim -q -p no:cacheprovider -m sim_extended

# Every fault of tests/faults (about 15 minutes on 2 cores); make test runs them all too, on a cluster of their own
# beside the other sim tests (tests/run_all.sh).
test-faults: venv sim-build
	bash tests/with_sim.sh $(BIN)/pytest tests/faults -q -p no:cacheprovider -m faults

# report.html in headless Chromium from Debian's archive (fetched once into ~/.cache, ~45 s on a fresh machine).
test-html: venv
	bash tests/html/get_chromium.sh >/dev/null
	$(BIN)/pytest tests/html -q -s -p no:cacheprovider -m browser

# The longer fleet-scale sim tests (baselines: three L3 runs, about 200 s); make test leaves them out.
test-fleet: venv sim-build
	bash tests/with_sim.sh $(BIN)/pytest tests/sim -q -p no:cacheprovider -m fleet_extended

# Every bad-node isolation case (8, 16 and 64 nodes; each node count starts its own simulated cluster,
# docs/isolation.md); make test runs the 8-node case.
test-isolate: venv sim-build
	$(BIN)/pytest tests/sim/test_sim_isolate.py -q -p no:cacheprovider -m sim

test-molecule: venv sim-build
	bash tests/with_sim.sh $(BIN)/pytest tests/molecule -q -m molecule

test-gpu: venv
	$(BIN)/pytest tests/gpu -q -m gpu

bench: venv
	$(BIN)/python benchmarks/parse_throughput/run.py

bench-fleet: venv sim-build
	$(BIN)/python benchmarks/fleet_scale/run.py --nodes 2,16,64,256

changelog: venv
	$(BIN)/antsibull-changelog release

clean:
	rm -rf $(VENV) tests/output report .pytest_cache

# A real AWX 24.6.1 from its source release on this machine (PostgreSQL, Redis, receptor, jobs in bubblewrap
# through a podman stand-in; tools/awx/, docs/awx.md). First run ~15 minutes on 2 cores, then ~1 minute.
awx-up: venv
	bash tools/awx/awx_local.sh up

awx-down:
	bash tools/awx/awx_local.sh down

awx-status:
	bash tools/awx/awx_local.sh status

# The collection on that AWX: awx_configure.yml, survey launches, every level, cancels mid-L3 and mid-L5.
test-awx: venv sim-build
	eval "$$(bash tools/awx/awx_local.sh env)" && RLSTACK_AWX_TEST=1 \
		bash tests/with_sim.sh $(BIN)/pytest tests/awx/test_awx_server.py -v -s -p no:cacheprovider -m awx_server
