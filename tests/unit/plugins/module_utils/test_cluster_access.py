# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one decision of which cluster a run talks to (plugins/module_utils/k8s/_cluster_access.py), checked against
kubernetes.core 6.2.0's own client code (plugins/module_utils/k8s/client.py) on the same inputs: for every way
of giving access, the API server that kubernetes.core's configuration points at is the one resolve() names."""
from __future__ import annotations

import pytest

import kubernetes
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_MAP as CORE_MAP
from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as core_client
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _cluster_access as access

ACCESS_VARS = ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")


def kubeconfig(path, server, context="sim"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: %s\n"
        "clusters:\n- name: c\n  cluster: {server: '%s'}\n"
        "users:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: %s\n  context: {cluster: c, user: u}\n- name: other\n  context: {cluster: c, user: u}\n"
        % (context, server, context))
    return str(path)


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A clean environment: no K8S_AUTH_*, no KUBECONFIG, HOME in a temp dir, not in a pod."""
    import os
    for name in list(os.environ):
        if name.startswith("K8S_AUTH_") or name in ACCESS_VARS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path


def core_host(monkeypatch, settings):
    """The API server kubernetes.core's client would use with these module arguments, here and now."""
    import os
    # the kubernetes client reads KUBECONFIG when it is imported; a module is a fresh process, so read it now
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION",
                        os.environ.get("KUBECONFIG", "~/.kube/config"))
    return core_client._create_configuration(core_client._create_auth_spec(**settings)).host


def test_the_option_map_is_kubernetes_core_s():
    assert access.AUTH_ARG_MAP == {k: v for k, v in CORE_MAP.items() if k != "proxy_headers"}


@pytest.mark.parametrize("way", ["validation_kubeconfig", "K8S_AUTH_KUBECONFIG", "KUBECONFIG", "~/.kube/config"])
def test_each_way_names_the_server_kubernetes_core_uses(world, monkeypatch, way):
    files = {name: kubeconfig(world / name / "config", "https://%s.example:6443" % i)
             for i, name in enumerate(("explicit", "k8s_auth", "env"))}
    home = kubeconfig(world / "home" / ".kube" / "config", "https://home.example:6443")
    settings = {}
    # every way below it in the order is present too, so each case also proves the order
    if way != "~/.kube/config":
        monkeypatch.setenv("KUBECONFIG", files["env"])
    if way in ("validation_kubeconfig", "K8S_AUTH_KUBECONFIG"):
        monkeypatch.setenv("K8S_AUTH_KUBECONFIG", files["k8s_auth"])
    if way == "validation_kubeconfig":
        settings = {"kubeconfig": files["explicit"]}
    got = access.resolve(settings)
    expected = {"validation_kubeconfig": files["explicit"], "K8S_AUTH_KUBECONFIG": files["k8s_auth"],
                "KUBECONFIG": files["env"], "~/.kube/config": home}[way]
    assert (got["mode"], got["kubeconfig"], got["source"]) == ("kubeconfig", expected, way)
    assert got["sentence"].startswith("Cluster access: the kubeconfig %s (%s), its current context" % (expected, way))
    server = {files["explicit"]: "0", files["k8s_auth"]: "1", files["env"]: "2", home: "home"}[expected]
    assert core_host(monkeypatch, settings) == "https://%s.example:6443" % server


def test_a_context_alone_reads_the_default_kubeconfig(world, monkeypatch):
    path = kubeconfig(world / "home" / ".kube" / "config", "https://home.example:6443")
    monkeypatch.setenv("K8S_AUTH_CONTEXT", "other")
    got = access.resolve({})
    assert (got["kubeconfig"], got["context"], got["source"]) == (path, "other", "~/.kube/config")
    assert "context other (K8S_AUTH_CONTEXT)" in got["sentence"]
    assert core_host(monkeypatch, {}) == "https://home.example:6443"


def test_a_host_and_token_need_no_kubeconfig_and_stay_out_of_public(world, monkeypatch):
    kubeconfig(world / "home" / ".kube" / "config", "https://home.example:6443")
    monkeypatch.setenv("K8S_AUTH_HOST", "https://token.example:443/")
    monkeypatch.setenv("K8S_AUTH_API_KEY", "secret-token")
    monkeypatch.setenv("K8S_AUTH_VERIFY_SSL", "no")
    got = access.resolve({})
    assert (got["mode"], got["source"], got["auth"]["api_key"]) == ("host", "K8S_AUTH_HOST", "secret-token")
    assert got["auth"]["validate_certs"] is False and "api_key" not in got["public"]
    assert "secret-token" not in got["sentence"]
    assert core_host(monkeypatch, {}) == "https://token.example:443"


def test_an_empty_setting_counts_as_unset(world, monkeypatch):
    path = kubeconfig(world / "k" / "config", "https://k.example:6443")
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", path)
    got = access.resolve({"kubeconfig": "", "context": None})
    assert (got["kubeconfig"], got["source"]) == (path, "K8S_AUTH_KUBECONFIG")


def test_in_a_pod_without_settings_the_service_account_comes_before_the_default_kubeconfig(world, monkeypatch):
    kubeconfig(world / "home" / ".kube" / "config", "https://home.example:6443")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "HOME": str(world / "home")}
    got = access.resolve({}, env=env, exists=lambda path: True)
    assert (got["mode"], got["kubeconfig"]) == ("in-cluster", "")
    # a kubeconfig given explicitly wins over the pod's service account, as in kubernetes.core
    env["K8S_AUTH_KUBECONFIG"] = "/x/config"
    assert access.resolve({}, env=env, exists=lambda path: True)["mode"] == "kubeconfig"


def test_no_access_at_all_is_one_sentence(world):
    got = access.resolve({})
    assert got["mode"] == "none" and got["sentence"].startswith("No cluster access: validation_kubeconfig is not set")
    assert "\n" not in got["sentence"]


def test_a_missing_kubeconfig_file_is_named(world):
    got = access.resolve({"kubeconfig": str(world / "nope")})
    assert got["mode"] == "none"
    assert got["sentence"] == ("The kubeconfig %s (validation_kubeconfig) does not exist; set validation_kubeconfig "
                               "to the cluster's kubeconfig file." % (world / "nope"))
