# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The custom EKS credential type (awx/credential_types.yml): AWX's rules, the kubeconfig it injects,
and that the kubernetes client (what kubernetes.core uses) gets a token from it through `aws eks get-token`."""
from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml

import awx_data
import awx_rules

DATA = awx_data.load()
EKS = next(t for t in DATA["awx_credential_types"] if t["name"].startswith("Amazon EKS kubeconfig"))
BUILTIN_TYPES = {"OpenShift or Kubernetes API Bearer Token": {"host", "bearer_token", "verify_ssl", "ssl_ca_cert"}}
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
INPUTS = {
    "cluster_name": "rlinf-use2",
    "region": "us-east-2",
    "endpoint": "https://ABCDEF0123456789.gr7.us-east-2.eks.amazonaws.com",
    "certificate_authority_data": base64.b64encode(CA_PEM).decode(),
    "context_name": "",
    "role_arn": "",
    "aws_access_key_id": "AKIAEXAMPLEEXAMPLE",
    "aws_secret_access_key": "example/secret/key",
    "aws_session_token": "",
}


def test_inputs_follow_awx_rules():
    assert awx_rules.credential_type_input_errors(EKS["inputs"]) == []


def test_injectors_follow_awx_rules():
    assert awx_rules.credential_type_injector_errors(EKS["inputs"], EKS["injectors"]) == []


@pytest.mark.parametrize("ctype", DATA["awx_credential_types"], ids=lambda t: t["name"])
def test_every_type_follows_awx_rules(ctype):
    assert awx_rules.credential_type_input_errors(ctype["inputs"]) == []
    assert awx_rules.credential_type_injector_errors(ctype["inputs"], ctype["injectors"]) == []


def test_the_rules_catch_bad_injectors():
    fields = {"fields": [{"id": "a", "label": "A", "type": "string"}]}
    assert awx_rules.credential_type_injector_errors(fields, {"env": {"X": "{{ b }}"}})  # undefined field
    assert awx_rules.credential_type_injector_errors(fields, {"env": {"ANSIBLE_X": "{{ a }}"}})
    assert awx_rules.credential_type_injector_errors(fields, {"env": {"PATH": "{{ a }}"}})
    assert awx_rules.credential_type_injector_errors(fields, {"env": {"X": "{{ tower.filename }}"}})  # no file
    assert awx_rules.credential_type_injector_errors(fields, {"file": {"template": "x", "template.b": "y"}})
    assert awx_rules.credential_type_input_errors({"fields": [{"id": "a", "label": "A"}]})  # type left out
    assert awx_rules.credential_type_input_errors({"fields": [{"id": "a-b", "label": "A", "type": "string"}]})


def test_secrets_are_secret_and_required_inputs_exist():
    fields = {f["id"]: f for f in EKS["inputs"]["fields"]}
    assert fields["aws_secret_access_key"].get("secret") is True
    assert fields["aws_session_token"].get("secret") is True
    assert EKS["kind"] in ("cloud", "net")  # the kinds AWX allows for custom types
    assert set(EKS["inputs"]["required"]) == set(fields) - {"context_name", "role_arn", "aws_session_token"}


def test_env_injectors_are_the_ones_kubernetes_core_and_the_aws_cli_read():
    assert set(EKS["injectors"]["env"]) == {
        "K8S_AUTH_KUBECONFIG", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"}


def _render(tmp_path, **changes):
    env, files = awx_rules.inject(EKS, {**INPUTS, **changes}, str(tmp_path))
    path, content = files["template.kubeconfig"]
    return env, path, yaml.safe_load(content)


def test_the_injected_kubeconfig(tmp_path):
    env, path, config = _render(tmp_path)
    assert env["K8S_AUTH_KUBECONFIG"] == path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert env["AWS_ACCESS_KEY_ID"] == INPUTS["aws_access_key_id"]
    assert env["AWS_SECRET_ACCESS_KEY"] == INPUTS["aws_secret_access_key"]
    assert env["AWS_DEFAULT_REGION"] == "us-east-2"
    assert env["AWS_SESSION_TOKEN"] == ""  # unset optional input: empty, which the AWS CLI ignores
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == INPUTS["endpoint"]
    assert base64.b64decode(cluster["certificate-authority-data"]) == CA_PEM
    assert config["current-context"] == config["contexts"][0]["name"] == "eks"
    assert config["contexts"][0]["context"] == {"cluster": "eks", "user": "eks"}
    exec_ = config["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws"
    assert exec_["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert exec_["args"] == ["--region", "us-east-2", "eks", "get-token", "--cluster-name", "rlinf-use2"]


def test_context_name_for_inventories_that_set_validation_context(tmp_path):
    arn = "arn:aws:eks:us-east-2:123456789012:cluster/rl-training"
    _env, _path, config = _render(tmp_path, context_name=arn)
    assert config["current-context"] == arn
    assert config["contexts"][0] == {"name": arn, "context": {"cluster": arn, "user": arn}}
    assert config["clusters"][0]["name"] == arn and config["users"][0]["name"] == arn


def test_role_arn_and_awkward_values(tmp_path):
    wrapped = "\n".join(INPUTS["certificate_authority_data"][i:i + 16]
                        for i in range(0, len(INPUTS["certificate_authority_data"]), 16)) + "\n"
    _env, _path, config = _render(tmp_path, role_arn="arn:aws:iam::123456789012:role/validator",
                                  cluster_name='odd "name": yes', certificate_authority_data=wrapped)
    args = config["users"][0]["user"]["exec"]["args"]
    assert args[-2:] == ["--role-arn", "arn:aws:iam::123456789012:role/validator"]
    assert args[args.index("--cluster-name") + 1] == 'odd "name": yes'
    assert base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]) == CA_PEM


def _fake_aws(bin_dir: Path, log: Path) -> None:
    bin_dir.mkdir()
    script = bin_dir / "aws"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open({str(log)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'key': os.environ.get('AWS_ACCESS_KEY_ID'),"
        " 'region': os.environ.get('AWS_DEFAULT_REGION')}))\n"
        "print(json.dumps({'kind': 'ExecCredential', 'apiVersion': 'client.authentication.k8s.io/v1beta1',"
        " 'spec': {}, 'status': {'token': 'k8s-aws-v1.fake', 'expirationTimestamp': '2099-01-01T00:00:00Z'}}))\n")
    script.chmod(0o755)


def _load_token(kubeconfig: str, env: dict) -> str:
    """What kubernetes.core does with K8S_AUTH_KUBECONFIG: load it with the kubernetes client (the exec
    plugin runs here) and read the bearer token it will send."""
    code = (
        "import sys, kubernetes\n"
        "c = kubernetes.client.Configuration()\n"
        "kubernetes.config.load_kube_config(config_file=sys.argv[1], client_configuration=c)\n"
        "print(c.host); print(c.api_key['authorization'])\n")
    proc = subprocess.run([sys.executable, "-c", code, kubeconfig], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    host, header = proc.stdout.strip().splitlines()[-2:]
    assert host == INPUTS["endpoint"]
    assert header.startswith("Bearer ")
    return header[len("Bearer "):]


def test_the_kubernetes_client_runs_the_exec_plugin(tmp_path):
    env, path, _config = _render(tmp_path)
    log = tmp_path / "aws.json"
    _fake_aws(tmp_path / "bin", log)
    run_env = {**os.environ, **env, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    assert _load_token(path, run_env) == "k8s-aws-v1.fake"
    called = json.loads(log.read_text())
    assert called["argv"] == ["--region", "us-east-2", "eks", "get-token", "--cluster-name", "rlinf-use2"]
    assert called["key"] == INPUTS["aws_access_key_id"] and called["region"] == "us-east-2"


def _real_aws():
    candidate = os.environ.get("RLSTACK_AWS_CLI") or shutil.which("aws")
    return candidate if candidate and os.access(candidate, os.X_OK) else None


@pytest.mark.skipif(_real_aws() is None, reason="no AWS CLI here (set RLSTACK_AWS_CLI=/path/to/aws to run it)")
def test_the_real_aws_cli_signs_a_token_offline(tmp_path):
    """`aws eks get-token` presigns an STS URL locally (no network): the exec plugin works with the
    injected environment, an empty AWS_SESSION_TOKEN included."""
    env, path, _config = _render(tmp_path)
    aws = Path(_real_aws())
    run_env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    run_env.update(env, PATH=f"{aws.parent}:{os.environ['PATH']}", AWS_CONFIG_FILE=os.devnull,
                   AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    token = _load_token(path, run_env)
    assert token.startswith("k8s-aws-v1.")
    url = base64.urlsafe_b64decode(token[len("k8s-aws-v1."):] + "==").decode()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert urllib.parse.urlsplit(url).netloc == "sts.us-east-2.amazonaws.com"
    assert query["X-Amz-Credential"][0].startswith(INPUTS["aws_access_key_id"] + "/")
    assert "X-Amz-Security-Token" not in query
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0]


def test_credentials_use_known_types_and_fields():
    custom = {t["name"]: {f["id"] for f in t["inputs"]["fields"]} for t in DATA["awx_credential_types"]}
    types = {**BUILTIN_TYPES, **custom}
    names = [c["name"] for c in DATA["awx_credentials"]]
    assert len(names) == len(set(names))
    for cred in DATA["awx_credentials"]:
        fields = types[cred["credential_type"]]
        given = set(cred.get("inputs", {})) | set(cred.get("inputs_from_env", {}))
        assert given <= fields, cred["name"]
        assert set(cred.get("optional_inputs", [])) <= set(cred.get("inputs_from_env", {})), cred["name"]
        for env_name in cred.get("inputs_from_env", {}).values():
            assert env_name.startswith("RLSTACK_") and env_name.isupper(), env_name
        if cred["credential_type"] in custom:
            required = set(next(t for t in DATA["awx_credential_types"]
                                if t["name"] == cred["credential_type"])["inputs"]["required"])
            assert required <= given - set(cred.get("optional_inputs", [])), cred["name"]
    cluster_creds = {c for cluster in DATA["awx_clusters"] for c in cluster["credentials"]}
    assert cluster_creds <= set(names)
