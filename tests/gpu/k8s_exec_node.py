"""Make the simulated cluster's GPU node advertise the machine the pods really run on (exec mode on a lent GPU
machine, tests/gpu/run_k8s_exec_on_gpu.sh): `nvidia.com/gpu` = this machine's GPU count, no EFA devices, and an
instance type AWS does not have, so L0 judges by the inventory's expectations instead of the p5.48xlarge profile.

    python3 tests/gpu/k8s_exec_node.py KUBECONFIG NODE GPUS
"""
import sys

from kubernetes import client, config

INSTANCE_TYPE = "lent-gpu-vm"  # not an EC2 type: plugins/module_utils/gpu/_profiles.py has no profile for it


def main(argv):
    kubeconfig, node, gpus = argv[1], argv[2], argv[3]
    api = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    api.patch_node(node, {"metadata": {"labels": {"node.kubernetes.io/instance-type": INSTANCE_TYPE,
                                                  "beta.kubernetes.io/instance-type": INSTANCE_TYPE}}},
                   _request_timeout=30)
    resources = {"nvidia.com/gpu": gpus, "vpc.amazonaws.com/efa": "0"}
    api.patch_node_status(node, {"status": {"capacity": resources, "allocatable": resources}}, _request_timeout=30)
    got = api.read_node(node, _request_timeout=30)
    print(f"{node}: instance type {got.metadata.labels.get('node.kubernetes.io/instance-type')}, "
          f"allocatable nvidia.com/gpu={got.status.allocatable.get('nvidia.com/gpu')} "
          f"vpc.amazonaws.com/efa={got.status.allocatable.get('vpc.amazonaws.com/efa')}")


if __name__ == "__main__":
    main(sys.argv)
