# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/lint/_pitfall_rules.py: the registry, and each rule on manifests of real repositories.

Fixtures: tests/local/fixtures/{awsome-distributed-training,mpi-operator} (SOURCES.md there: repository,
commit, licence). A case marked `derived` is a real manifest with one field changed, named in the test,
where neither repository has the pitfall itself.
"""

from __future__ import annotations

import copy
import os
import re
import sys

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _pitfall_rules as r
from ansible_collections.rlstack.validation.plugins.module_utils.lint import _shell_syntax
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_all
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import real_repos  # noqa: E402 pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FIXTURES = str(real_repos())
ADT = os.path.join(FIXTURES, "awsome-distributed-training")
MPI = os.path.join(FIXTURES, "mpi-operator")
FSDP = os.path.join(ADT, "3.test_cases", "pytorch", "FSDP", "kubernetes", "llama3_1_8b-fsdp.yaml")
TEAM_A = os.path.join(ADT, "1.architectures", "7.sagemaker-hyperpod-eks", "task-governance", "1-imagenet-gpu-team-a.yaml")
RAYCLUSTER = os.path.join(ADT, "3.test_cases", "pytorch", "verl", "kubernetes", "rlvr", "setup", "raycluster.yaml")
NCCL = os.path.join(ADT, "micro-benchmarks", "nccl-tests", "kubernetes", "nccl-tests.yaml")
NCCL_GB200 = os.path.join(ADT, "micro-benchmarks", "nccl-tests", "kubernetes", "nccl-tests-gb200.yaml")
NSIGHT = os.path.join(ADT, "4.validation_and_observability", "5.nsight", "EKS", "fsdp.yaml")
PI = os.path.join(MPI, "examples", "v2beta1", "pi", "pi.yaml")
PI_INTEL = os.path.join(MPI, "examples", "v2beta1", "pi", "pi-intel.yaml")
TF_BENCH = os.path.join(MPI, "examples", "v2beta1", "tensorflow-benchmarks", "tensorflow-benchmarks.yaml")
HOROVOD = os.path.join(MPI, "examples", "v2beta1", "horovod", "tensorflow-mnist.yaml")

# openvla/openvla experiments/robot/libero/run_libero_eval.py, its usage docstring (the LIBERO evaluation)
OPENVLA_LIBERO_EVAL = ["python", "experiments/robot/libero/run_libero_eval.py", "--model_family", "openvla",
                       "--pretrained_checkpoint", "openvla/openvla-7b-finetuned-libero-spatial",
                       "--task_suite_name", "libero_spatial", "--center_crop", "True"]


def docs(path):
    with open(path) as handle:
        return [d for d in yaml.safe_load_all(handle) if isinstance(d, dict) and d.get("kind")]


def one(path, kind=None):
    return [d for d in docs(path) if kind is None or d["kind"] == kind][0]


def found(doc, rule, **options):
    opts = dict(options, rules=[rule])
    return [f for f in r.lint_document(doc, opts) if f["rule"] == rule]


def first_container(doc):
    return r.pod_specs(doc)[0][1]["containers"][0]


# ------------------------------------------------------------------------------------------ the registry


def test_one_table_drives_names_severity_fix_and_choices():
    names = [rule.name for rule in r.RULES]
    assert tuple(names) == r.RULE_NAMES and len(set(names)) == len(names)
    assert all(rule.severity in ("error", "warning", "info") for rule in r.RULES)
    assert all(rule.fix and rule.summary for rule in r.RULES)
    assert r.DEFAULT_OPTIONS["rules"] == list(r.RULE_NAMES)


def test_yaml_copies_of_the_rule_names_equal_the_table():
    with open(os.path.join(ROOT, "roles", "local_checks", "meta", "argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert spec["local_checks_pitfall_rules"]["choices"] == list(r.RULE_NAMES)
    with open(os.path.join(ROOT, "roles", "local_checks", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    assert defaults["local_checks_pitfall_rules"] == list(r.RULE_NAMES)
    with open(os.path.join(ROOT, "docs", "local-mode.md")) as handle:
        table = re.findall(r"^\| `(\w+)` \| (error|warning|info) \|", handle.read(), re.M)
    assert table == [(rule.name, rule.severity) for rule in r.RULES]


@pytest.mark.parametrize("options, text", [
    ({"rules": ["nope"]}, "unknown pitfall rule"),
    ({"severity": {"deadline": "fatal"}}, "must be one of"),
    ({"severity": {"nope": "error"}}, "unknown rule"),
    ({"min_deadline_s": "x"}, "must be an integer"),
    ({"bogus": 1}, "unknown pitfall option"),
])
def test_bad_options(options, text):
    with pytest.raises(LintError, match=text):
        r.options_with_defaults(options)


def test_severity_override_and_switch():
    doc = one(PI_INTEL)
    assert {f["severity"] for f in found(doc, "image_pull_policy")} == {"warning"}
    assert {f["severity"] for f in found(doc, "image_pull_policy", severity={"image_pull_policy": "error"})} == {"error"}
    assert r.lint_document(doc, {"rules": ["deadline"]}) == []


# ------------------------------------------------------------------------------------------ deadline


def test_deadline_true_derived_from_the_mpijob_run_policy():
    doc = one(PI)  # derived: mpi-operator's pi.yaml with runPolicy.activeDeadlineSeconds 300
    doc["spec"]["runPolicy"]["activeDeadlineSeconds"] = 300
    hits = found(doc, "deadline")
    assert [(h["path"], h["actual"], h["expected"], h["severity"]) for h in hits] == [
        ("spec.runPolicy.activeDeadlineSeconds", 300, 600, "error")]


def test_deadline_false_on_real_manifests_and_on_a_placeholder():
    for path in (PI, FSDP, TEAM_A):
        assert found(one(path), "deadline") == []
    doc = one(PI)
    doc["spec"]["runPolicy"]["activeDeadlineSeconds"] = "${DEADLINE}"  # unset: not a number of seconds
    assert found(doc, "deadline") == []


# ------------------------------------------------------------------------------------------ image_pull_policy


def test_image_pull_policy_true_and_false():
    hits = found(one(PI_INTEL), "image_pull_policy")
    assert [h["container"] for h in hits] == ["mpi-launcher", "mpi-worker"]
    assert found(one(PI), "image_pull_policy") == []  # not set
    assert found(one(NCCL), "image_pull_policy") == []  # IfNotPresent


# ------------------------------------------------------------------------------------------ image_tag


def test_latest_is_named_with_its_effective_pull_policy():
    hits = found(one(TF_BENCH), "image_tag")  # mpioperator/tensorflow-benchmarks:latest, no imagePullPolicy
    assert len(hits) == 2
    assert "uses the tag latest" in hits[0]["message"]
    assert "imagePullPolicy is not set, so the API server makes it Always" in hits[0]["message"]
    explicit = found(one(TEAM_A, "PyTorchJob"), "image_tag")  # kubeflow/...imagenet:latest with IfNotPresent
    assert len(explicit) == 1 and "imagePullPolicy: IfNotPresent" in explicit[0]["message"]
    # the fix fits the object (issue 31): no "without an explicit imagePullPolicy" on a container that sets one
    assert "without an explicit imagePullPolicy" in hits[0]["fix"]
    assert "imagePullPolicy" not in explicit[0]["fix"] and "pin a digest" in explicit[0]["fix"]


def test_latest_behind_a_placeholder_registry_is_still_latest():
    doc = one(NCCL_GB200, "MPIJob")
    container = r.pod_specs(doc)[0][1]["containers"][0]
    container["image"] = "${ECR_URI}:latest"  # derived: the image form
    del container["imagePullPolicy"]
    hits = found(doc, "image_tag")
    assert hits and "tag latest" in hits[0]["message"] and "Always" in hits[0]["message"]


def test_untagged_image_true():
    hits = found(one(HOROVOD), "image_tag")  # docker.io/kubeflow/mpi-horovod-mnist
    assert hits and "untagged" in hits[0]["message"] and hits[0]["actual"] == "untagged"


def test_image_tag_false_pinned_placeholder_and_sed_token():
    assert found(one(PI), "image_tag") == []  # mpioperator/mpi-pi:openmpi
    assert found(one(FSDP), "image_tag") == []  # ${IMAGE_URI}: the unset variable rule reports it
    assert found(one(RAYCLUSTER), "image_tag") == []  # PLACEHOLDER_IMAGE, replaced by sed in its README
    assert found(one(NCCL), "image_tag") == []  # <account>.dkr.ecr.<region>.amazonaws.com/<image>:<tag>


@pytest.mark.parametrize("image, policy", [
    ("busybox", "Always"), ("busybox:latest", "Always"), ("busybox:1.36", "IfNotPresent"),
    ("busybox@sha256:abc", "IfNotPresent"), ("registry:5000/team/img", "Always"),
])
def test_effective_pull_policy_as_the_api_server_defaults_it(image, policy):
    # Kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Container (ParseImageName: no tag and no digest -> latest)
    assert r.effective_pull_policy({"image": image}) == (policy, True)


# ------------------------------------------------------------------------------------------ dev_shm


def test_dev_shm_true_on_real_gpu_pods_without_it():
    hits = found(one(TEAM_A, "PyTorchJob"), "dev_shm")
    assert [h["container"] for h in hits] == ["pytorch"]
    ray = found(one(RAYCLUSTER), "dev_shm")  # GPU count PLACEHOLDER_NUM_GPU_PER_NODE still asks for GPUs
    assert [h["container"] for h in ray] == ["ray-worker"]
    assert found(one(TF_BENCH), "dev_shm")


def test_dev_shm_false_host_path_and_cpu_only():
    assert found(one(FSDP), "dev_shm") == []  # hostPath /dev/shm: the node's memory-backed /dev/shm
    assert found(one(NSIGHT), "dev_shm") == []
    assert found(one(PI), "dev_shm") == []  # no GPU


# ------------------------------------------------------------------------------------------ inline_script


def test_inline_script_false_on_real_one_liners_and_straight_lines():
    assert found(one(TEAM_A, "PyTorchJob"), "inline_script") == []  # wget ...; torchrun ... (one line)
    assert found(one(NSIGHT), "inline_script") == []
    doc = one(TEAM_A, "PyTorchJob")
    container = first_container(doc)
    # derived: eleven straight lines whose only braces are ${...} (the false alarm)
    container["command"] = ["bash", "-c", "\n".join(
        ["export NCCL_DEBUG=${NCCL_DEBUG:-INFO}", "cd /workspace", "pip install -r ${REQS}"]
        + ["echo step %d ${HOSTNAME}" % i for i in range(7)] + ["torchrun --nproc_per_node=${GPUS} train.py"])]
    assert found(doc, "inline_script") == []


def test_inline_script_true_by_control_flow():
    doc = one(TEAM_A, "PyTorchJob")
    container = first_container(doc)
    # derived: the team-a command split into a script with a branch and a loop
    container["command"] = ["bash", "-c", "set -e\nif [ ! -f /workspace/examples/imagenet.py ]; then\n"
                            "  wget https://raw.githubusercontent.com/pytorch/elastic/master/examples/imagenet/main.py "
                            "-O /workspace/examples/imagenet.py\nfi\nfor i in 1 2 3; do echo try $i; done\n"
                            "/usr/local/bin/torchrun --nproc_per_node=1 /workspace/examples/imagenet.py\n"]
    hits = found(doc, "inline_script")
    assert len(hits) == 1 and "control flow (if, for)" in hits[0]["message"]
    assert hits[0]["path"] == "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].command"


@pytest.mark.parametrize("script, constructs", [
    ("echo 'if then'; echo \"for x\"", []),
    ("x=${A:-if}\necho done", []),
    ("cat <<EOF\nif this is data\nEOF\necho ok", []),
    ("f() {\n echo\n}\nf", ["function f"]),
    ("case $1 in a) echo;; esac", ["case"]),
    ("while read l; do echo $l; done < f", ["while"]),
])
def test_control_flow(script, constructs):
    assert r.control_flow(script) == constructs


# ------------------------------------------------------------------------------------------ simulator_config


def libero_job(argv, env=None, mounts=None):
    doc = one(TEAM_A, "PyTorchJob")  # the container of a real GPU job, running the command given
    container = first_container(doc)
    container["command"] = argv
    container["env"] = env or []
    if mounts:
        container["volumeMounts"] = mounts
    return doc


def test_simulator_true_libero_eval_without_config():
    hits = found(libero_job(OPENVLA_LIBERO_EVAL), "simulator_config")
    assert len(hits) == 1
    message = hits[0]["message"]
    assert "runs LIBERO (runs experiments/robot/libero/run_libero_eval.py)" in message
    assert "/root/.libero/config.yaml" in message and "input()" in message and "EOFError" in message


def test_simulator_true_config_path_arrives_through_env_without_a_volume():
    doc = libero_job(["python", "eval.py"], env=[{"name": "LIBERO_CONFIG_PATH", "value": "/etc/libero"}])
    hits = found(doc, "simulator_config")
    assert hits and "sets LIBERO_CONFIG_PATH" in hits[0]["message"] and "/etc/libero/config.yaml" in hits[0]["message"]


def test_simulator_true_hangs_with_stdin_open():
    doc = libero_job(["python", "-m", "libero.lifelong.main"])
    first_container(doc)["stdin"] = True
    assert "waits forever" in found(doc, "simulator_config")[0]["message"]


def test_simulator_false_when_the_pod_provides_the_config():
    doc = libero_job(OPENVLA_LIBERO_EVAL, env=[{"name": "LIBERO_CONFIG_PATH", "value": "/etc/libero"}],
                     mounts=[{"name": "libero-config", "mountPath": "/etc/libero"}])
    assert found(doc, "simulator_config") == []


def test_simulator_false_on_paths_model_names_and_repo_ids():
    # the six false alarms: libero only in a dataset path, a model name or a repository id
    for argv in (["torchrun", "train.py", "--dataset=/fsx/data/libero_spatial_no_noops"],
                 ["python", "serve.py", "--pretrained_checkpoint", "openvla/openvla-7b-finetuned-libero-spatial"],
                 ["huggingface-cli", "download", "openvla/modified_libero_rlds"]):
        assert found(libero_job(argv), "simulator_config") == [], argv
    assert found(libero_job(["python", "train.py"], env=[{"name": "DATASET", "value": "/data/libero_10"}]),
                 "simulator_config") == []
    for path in (FSDP, TEAM_A, PI):
        assert found(one(path), "simulator_config") == []


def test_simulator_detected_in_inline_python_and_env_type_arguments():
    heredoc = libero_job(["bash", "-c", "python - <<'EOF'\nfrom libero.libero import benchmark\nEOF\n"])
    assert "heredoc" in found(heredoc, "simulator_config")[0]["message"]
    # an argument that picks the environment counts whatever the program; the policy's repository id does not
    lerobot = libero_job(["lerobot-eval", "--env.type=libero", "--policy.path=lerobot/pi0_libero"])
    assert "selects the LIBERO environment (--env.type=libero)" in found(lerobot, "simulator_config")[0]["message"]
    other = libero_job(["lerobot-eval", "--env.type=aloha", "--policy.path=lerobot/pi0_libero"])
    assert found(other, "simulator_config") == []


def test_simulator_source_is_the_real_package():
    # libero 0.1.1 (PyPI) libero/libero/__init__.py: LIBERO_CONFIG_PATH, default ~/.libero, config.yaml
    libero = r.SIMULATORS[0]
    assert (libero["config_env"], libero["config_default"], libero["config_file"]) == (
        "LIBERO_CONFIG_PATH", "~/.libero", "config.yaml")


def test_simulator_inventory_findings():
    assert r.simulator_inventory_findings("libero.libero", {"LIBERO_CONFIG_PATH": "/x"}) == []
    hits = r.simulator_inventory_findings("libero.libero", {"LIBERO_DATASET_DIR": "/d"})
    assert hits and hits[0]["file"] == "inventory" and "LIBERO_CONFIG_PATH" in hits[0]["message"]
    assert r.simulator_inventory_findings("maniskill", {}) == []


# ------------------------------------------------------------------------------------------ helpers


def test_parse_image():
    assert r.parse_image("${ECR_URI}:latest")["tag"] == "latest"
    assert r.parse_image("${IMAGE_URI}")["placeholder"] and r.parse_image("${IMAGE_URI}")["tag"] is None
    assert r.parse_image("PLACEHOLDER_IMAGE")["placeholder"]
    assert r.parse_image("img:${TAG}")["tag_placeholder"]
    assert r.parse_image("registry:5000/team/img")["tag"] is None
    assert r.parse_image("img:1.0@sha256:abc") == {"tag": "1.0", "digest": "sha256:abc", "placeholder": False,
                                                   "tag_placeholder": False}


def test_pod_specs_cover_every_template_of_real_kinds():
    assert len(r.pod_specs(one(PI))) == 2  # MPIJob launcher and worker
    assert len(r.pod_specs(one(RAYCLUSTER))) == 2  # RayCluster head and worker group
    assert len(r.pod_specs(one(FSDP))) == 1  # PyTorchJob worker


def test_unset_variable_findings_one_per_variable():
    hits = r.unset_variable_findings({"IMAGE_URI": [("a.yaml", 38), ("b.yaml", 38)], "HF_TOKEN": [("a.yaml", 80)]})
    assert [(h["path"], h["file"], h["line"]) for h in hits] == [("HF_TOKEN", "a.yaml", 80), ("IMAGE_URI", "a.yaml", 38)]
    assert "used at a.yaml:38, b.yaml:38" in hits[1]["message"]
    assert r.unset_variable_findings({"X": [("a", 1)]}, r.options_with_defaults({"rules": ["deadline"]})) == []


def test_copy_is_not_changed():
    doc = one(PI)
    before = copy.deepcopy(doc)
    r.lint_document(doc)
    assert doc == before


# ------------------------------------------------------------------------------------------ the node rules
# Context: the node groups of the repository (_node_groups). adt-terraform-eks is awsome-distributed-training's
# Terraform EKS architecture (branch adding-tf-eks) with its own example workloads; eks-g4dn.yaml and
# eks-p5-odcr-vpc.yaml are eksctl ClusterConfigs of the same repository as the nccl-tests MPIJob.

TF_EKS = os.path.join(FIXTURES, "adt-terraform-eks", "1.architectures", "4.amazon-eks", "terraform")
GPU_WORKLOAD = os.path.join(TF_EKS, "examples", "gpu-workload.yaml")
KARPENTER_WORKLOADS = os.path.join(TF_EKS, "examples", "karpenter-workloads.yaml")
EKS_G4DN = os.path.join(ADT, "1.architectures", "4.amazon-eks", "eks-g4dn.yaml")
EKS_P5 = os.path.join(ADT, "1.architectures", "4.amazon-eks", "eks-p5-odcr-vpc.yaml")


def groups_of(*paths):
    from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups as ng
    from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups_tf as ngtf
    out, texts = [], {}
    for path in paths:
        if path.endswith(".tf"):
            with open(path) as handle:
                texts[os.path.relpath(path, TF_EKS)] = handle.read()
        else:
            for doc in docs(path):
                out.extend(ng.from_yaml_document(doc, os.path.basename(path)))
    return out + ngtf.from_terraform(texts)


def tf_eks_groups():
    return groups_of(*[os.path.join(TF_EKS, p) for p in ("main.tf", "modules/eks/main.tf", "modules/addons/main.tf")])


def named(path, kind, name):
    return [d for d in docs(path) if d["kind"] == kind and d["metadata"]["name"] == name][0]


def test_node_selector_true_instance_type_no_node_group_has():
    hits = found(one(NCCL), "node_selector", node_groups=groups_of(EKS_G4DN))  # p5.48xlarge on c5/g4dn groups
    assert len(hits) == 1 and hits[0]["severity"] == "warning"
    assert hits[0]["path"] == "spec.mpiReplicaSpecs.Worker.template.spec.nodeSelector"
    assert "node.kubernetes.io/instance-type=p5.48xlarge" in hits[0]["message"]
    assert "g4dn (eksctl managed node group, eks-g4dn.yaml" in hits[0]["message"]  # says what exists


def test_node_selector_false_on_real_repositories():
    assert found(one(NCCL), "node_selector", node_groups=groups_of(EKS_P5)) == []  # the p5 node group
    groups = tf_eks_groups()
    assert found(one(GPU_WORKLOAD, "Deployment"), "node_selector", node_groups=groups) == []  # nvidia.com/gpu=true
    for doc in docs(KARPENTER_WORKLOADS):  # node-type: default / gpu, labelled by the Karpenter NodePools
        assert found(doc, "node_selector", node_groups=groups) == [], doc["metadata"]["name"]
    # sagemaker.amazonaws.com/node-health-status (HyperPod sets it) and PLACEHOLDER_INSTANCE_TYPE
    assert found(one(RAYCLUSTER), "node_selector", node_groups=groups_of(EKS_G4DN)) == []
    assert found(one(NCCL), "node_selector") == []  # no node groups declared: nothing to judge against


def test_toleration_true_derived_a_cpu_pod_on_the_tainted_gpu_pool():
    doc = named(KARPENTER_WORKLOADS, "Deployment", "karpenter-example-app")
    doc["spec"]["template"]["spec"]["nodeSelector"] = {"node-type": "gpu"}  # derived: one field changed
    hits = found(doc, "toleration", node_groups=tf_eks_groups())
    assert len(hits) == 1 and hits[0]["path"] == "spec.template.spec.tolerations"
    assert "gpu has nvidia.com/gpu=true:NoSchedule" in hits[0]["message"]


def test_toleration_false_real_and_extended_resource_toleration():
    groups = tf_eks_groups()
    gpu = one(GPU_WORKLOAD, "Deployment")
    assert found(gpu, "toleration", node_groups=groups) == []  # tolerates nvidia.com/gpu=true:NoSchedule
    for doc in docs(KARPENTER_WORKLOADS):
        assert found(doc, "toleration", node_groups=groups) == [], doc["metadata"]["name"]
    del gpu["spec"]["template"]["spec"]["tolerations"]  # derived: EKS's admission plugin adds it (nvidia.com/gpu)
    assert found(gpu, "toleration", node_groups=groups) == []
    hits = found(gpu, "toleration", node_groups=groups, extended_resource_toleration=False)
    assert len(hits) == 1 and hits[0]["path"] == "spec.template.spec"


def test_gpu_efa_request_true_more_efa_than_the_instance_type_has():
    doc = one(NCCL)
    worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["nodeSelector"]["node.kubernetes.io/instance-type"] = "p4d.24xlarge"  # derived: one field changed
    hits = found(doc, "gpu_efa_request")
    assert len(hits) == 1 and hits[0]["actual"] == 32 and hits[0]["expected"] == 4
    assert "vpc.amazonaws.com/efa: 32" in hits[0]["message"] and "p4d.24xlarge 4" in hits[0]["message"]


def test_gpu_efa_request_true_fi_provider_efa_without_the_device():
    doc = one(NSIGHT)
    ctr = first_container(doc)
    for section in ("limits", "requests"):
        ctr["resources"][section] = {"nvidia.com/gpu": 8}  # derived: vpc.amazonaws.com/efa removed
    hits = found(doc, "gpu_efa_request")
    assert len(hits) == 1 and "FI_PROVIDER=efa" in hits[0]["message"]


def test_gpu_efa_request_false_on_real_manifests():
    assert found(one(NCCL), "gpu_efa_request") == []  # p5.48xlarge: 8 GPUs, 32 EFA devices
    assert found(one(NSIGHT), "gpu_efa_request") == []  # FI_PROVIDER=efa with vpc.amazonaws.com/efa: 4
    assert found(one(RAYCLUSTER), "gpu_efa_request") == []  # the head sets FI_PROVIDER=efa but has no GPU
    assert found(one(GPU_WORKLOAD, "Deployment"), "gpu_efa_request", node_groups=tf_eks_groups()) == []


def test_efa_hugepages_true_and_false():
    hits = found(one(NSIGHT), "efa_hugepages")  # vpc.amazonaws.com/efa: 4, no hugepages
    assert len(hits) == 1 and hits[0]["severity"] == "info" and hits[0]["path"].endswith("resources")
    assert found(one(NCCL), "efa_hugepages") == []  # hugepages-2Mi: 5120Mi, as AWS's sample asks
    doc = one(NSIGHT)
    first_container(doc)["env"].append({"name": "FI_EFA_USE_HUGE_PAGE", "value": "0"})  # derived
    assert found(doc, "efa_hugepages") == []
    assert found(one(PI), "efa_hugepages") == []  # no EFA


# ------------------------------------------------------------------------------------------ job_retries


def gpu_job(spec_extra, gpus="8"):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"}, "spec": dict(spec_extra, template={
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x:1", "resources": {
            "limits": {"nvidia.com/gpu": gpus}}}]}})}


def test_job_retries_true_without_backoff_limit_or_deadline():
    hits = found(gpu_job({}), "job_retries")
    assert len(hits) == 1 and hits[0]["severity"] == "warning" and hits[0]["path"] == "spec"
    assert "Job/train requests 8 GPU(s)" in hits[0]["message"] and "retries 6 times" in hits[0]["message"]
    assert hits[0]["fix"].startswith("add backoffLimit: 0 and activeDeadlineSeconds: <longest expected run, s> "
                                     "under spec of Job/train")
    only_deadline = found(gpu_job({"backoffLimit": 0}), "job_retries")
    assert [h["actual"] for h in only_deadline] == [["activeDeadlineSeconds"]]
    assert "backoffLimit" not in only_deadline[0]["fix"] and "at least 600 s" in only_deadline[0]["fix"]


def test_job_retries_in_job_templates_cronjob_and_jobset():
    job = gpu_job({"activeDeadlineSeconds": 3600})
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": job["spec"]}}}
    hits = found(cron, "job_retries")
    assert [h["path"] for h in hits] == ["spec.jobTemplate.spec"] and hits[0]["actual"] == ["backoffLimit"]
    assert "Job template spec.jobTemplate.spec of CronJob/nightly" in hits[0]["message"]
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "rl"},
              "spec": {"replicatedJobs": [{"name": "workers", "template": {"spec": job["spec"]}}]}}
    assert [h["path"] for h in found(jobset, "job_retries")] == ["spec.replicatedJobs[0].template.spec"]


def test_job_retries_false_with_both_fields_placeholders_or_without_gpus():
    assert found(gpu_job({"backoffLimit": 0, "activeDeadlineSeconds": 1200}), "job_retries") == []
    assert found(gpu_job({"backoffLimit": "${RETRIES}", "activeDeadlineSeconds": "${DEADLINE}"}), "job_retries") == []
    assert found(gpu_job({}, gpus="${GPUS}"), "job_retries") != []  # a placeholder count still asks for GPUs
    cpu = gpu_job({})
    cpu["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "4"}}
    assert found(cpu, "job_retries") == []
    # a Deployment's pods are not a Job's: no backoffLimit there
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": gpu_job({})["spec"]}
    assert found(deploy, "job_retries") == []


# ------------------------------------------------------------------------------------------ shell_syntax

BROKEN_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
        - name: main
          image: x:1
          command:
            - bash
            - -c
            - |
              set -e
              if [ -n "$RANK" ]; then
                echo rank
              fi fi
              echo done
"""


def test_shell_syntax_true_at_the_scripts_line():
    (doc, marks, first), = load_all(BROKEN_JOB, "job.yaml")
    hits = r.lint_document(doc, {"rules": ["shell_syntax"]}, file="job.yaml", marks=marks, first_line=first)
    assert [(h["line"], h["severity"], h["path"]) for h in hits] == [
        (18, "error", "spec.template.spec.containers[0].command[2]")]
    assert "near unexpected token `fi'" in hits[0]["message"] and "at its line 4" in hits[0]["message"]
    # in args, without marks: the item is named, the line is the script's own
    doc["spec"]["template"]["spec"]["containers"][0].update(
        command=["sh"], args=["-c", doc["spec"]["template"]["spec"]["containers"][0]["command"][2]])
    hits = found(doc, "shell_syntax")
    assert [h["path"] for h in hits] == ["spec.template.spec.containers[0].args[1]"]


def test_shell_syntax_false_on_valid_scripts_other_shells_and_no_bash(monkeypatch):
    doc = yaml.safe_load(BROKEN_JOB)
    ctr = doc["spec"]["template"]["spec"]["containers"][0]
    ctr["command"][2] = ctr["command"][2].replace("fi fi", "fi")
    assert found(doc, "shell_syntax") == []
    ctr["command"] = ["zsh", "-c", "if x; then fi fi"]
    assert found(doc, "shell_syntax") == []
    ctr["command"] = ["bash", "-c", "if x; then fi fi"]
    assert len(found(doc, "shell_syntax")) == 1
    monkeypatch.setattr(_shell_syntax, "bash_n", lambda script: None)  # bash not installed, or timed out
    assert found(doc, "shell_syntax") == []


def test_bash_n_reads_bash_itself():
    s = _shell_syntax
    assert s.bash_n("echo a\nif x; then\n echo\nfi fi\n") == [(4, "syntax error near unexpected token `fi': `fi fi'")]
    assert s.bash_n("echo ${HOSTNAME##*-}; [[ -n $X ]] && echo y") == []
    assert s.bash_n("echo", bash="/nonexistent/bash") is None
    assert s.bash_n("sleep 5", timeout=0.001) in ([], None)  # -n never runs the script; a timeout answers None
