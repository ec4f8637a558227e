# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which cluster a run talks to, and with what credentials: the one place that decides it.

Every module of the run builds its client with kubernetes.core's get_api_client (kubernetes.core 6.2.0,
plugins/module_utils/k8s/client.py), the interrupt watchdog with the same functions, and the plan reads
``resolve`` to say which access the run uses (and to refuse a run that has none, in one sentence, before
anything is created). ``resolve`` follows kubernetes.core 6.2.0 step by step, so what it says is what the
modules do; tests/unit/plugins/module_utils/test_cluster_access.py checks it against kubernetes.core's own
code on the same inputs:

1. each auth option from the settings (validation_kubeconfig / validation_context, passed to every module
   by the playbooks' module_defaults), else from the environment: K8S_AUTH_<OPTION> or K8S_AUTH_<NAME>
   (_create_auth_spec; AWX credentials inject K8S_AUTH_KUBECONFIG or K8S_AUTH_HOST + K8S_AUTH_API_KEY);
2. a host with a token, user and password, or client certificate and key: those alone;
3. else a kubeconfig or a context: that kubeconfig (the default one when only a context is given);
4. else the in-cluster service account when the process runs in a pod, else the default kubeconfig:
   the first file of KUBECONFIG, else ~/.kube/config (kubernetes/config/kube_config.py,
   KUBE_CONFIG_DEFAULT_LOCATION; _create_configuration tries in-cluster first).

Standard library only.
"""

from __future__ import annotations

import os

# kubernetes.core 6.2.0 plugins/module_utils/args_common.py AUTH_ARG_MAP: the client's name -> the option's name.
AUTH_ARG_MAP = {
    "kubeconfig": "kubeconfig", "context": "context", "host": "host", "api_key": "api_key",
    "username": "username", "password": "password", "verify_ssl": "validate_certs", "ssl_ca_cert": "ca_cert",
    "cert_file": "client_cert", "key_file": "client_key", "proxy": "proxy", "no_proxy": "no_proxy",
    "persist_config": "persist_config",
}
BOOL_OPTIONS = ("validate_certs", "persist_config")
# Options that carry a secret: never copied into facts, messages or the watchdog's events.
SECRET_OPTIONS = ("api_key", "password", "client_key")
# The settings of the collection that map to kubernetes.core options (module_defaults in playbooks/*.yml).
SETTINGS = {"kubeconfig": "validation_kubeconfig", "context": "validation_context"}
# kubernetes/config/incluster_config.py SERVICE_TOKEN_FILENAME, SERVICE_CERT_FILENAME
IN_CLUSTER_FILES = ("/var/run/secrets/kubernetes.io/serviceaccount/token",
                    "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")


def _env_value(env, true_name, option):
    # kubernetes.core: os.getenv("K8S_AUTH_" + option) or os.getenv("K8S_AUTH_" + true name), a bool unless 0/false/no
    name = "K8S_AUTH_" + option.upper()
    value = env.get(name) or None
    if value is None and env.get("K8S_AUTH_" + true_name.upper()) is not None:
        name = "K8S_AUTH_" + true_name.upper()
        value = env.get(name)
    if value is not None and option in BOOL_OPTIONS:
        value = value.lower() not in ("0", "false", "no")
    return name, value


def auth_options(settings=None, env=None):
    """{option: (value, where it came from)}: each kubernetes.core auth option from `settings` (the module's
    arguments; None and "" count as unset), else from the K8S_AUTH_* environment."""
    env = os.environ if env is None else env
    settings = settings or {}
    found = {}
    for true_name, option in AUTH_ARG_MAP.items():
        value = settings.get(option)
        if value not in (None, ""):
            found[option] = (value, SETTINGS.get(option, option))
            continue
        name, value = _env_value(env, true_name, option)
        if value is not None:
            found[option] = (value, name)
    return found


def default_kubeconfig(env=None, home=None):
    """(path, where from): the first file of KUBECONFIG, else ~/.kube/config (the kubernetes client's default)."""
    env = os.environ if env is None else env
    listed = [p for p in (env.get("KUBECONFIG") or "").split(os.pathsep) if p]
    if listed:
        return os.path.expanduser(listed[0]), "KUBECONFIG"
    home = env.get("HOME") or os.path.expanduser("~") if home is None else home
    return os.path.join(home, ".kube", "config"), "~/.kube/config"


def in_cluster(env=None, exists=os.path.exists):
    """Whether the in-cluster config loads here (kubernetes/config/incluster_config.py: the service host and
    port in the environment, and the service account's token and CA files)."""
    env = os.environ if env is None else env
    return bool(env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT")
                and all(exists(path) for path in IN_CLUSTER_FILES))


def resolve(settings=None, env=None, home=None, exists=os.path.exists):
    """The cluster access a module gets from `settings` (kubernetes.core option names) in this environment.

    Returns {"mode": "host" | "kubeconfig" | "in-cluster" | "none", "auth": {option: value} (what to hand
    kubernetes.core's _create_auth_spec; may hold secrets), "kubeconfig": path or "", "context": name or "",
    "source": the setting or variable that chose it, "public": the same without secrets, "sentence": one
    sentence that says which access the run uses, or why there is none}."""
    env = os.environ if env is None else env
    found = auth_options(settings, env)
    auth = {option: value for option, (value, _where) in found.items()}
    where = {option: src for option, (_value, src) in found.items()}

    def given(*options):
        return all(auth.get(o) for o in options)

    kubeconfig, context, source = "", str(auth.get("context") or ""), ""
    if given("host") and (given("username", "password") or given("api_key") or given("client_cert", "client_key")):
        mode, source = "host", where["host"]
        what = "the API server %s (%s)" % (auth["host"], source)
    else:
        if given("kubeconfig") or given("context"):
            mode = "kubeconfig"
            if given("kubeconfig"):
                kubeconfig, source = (auth["kubeconfig"], where["kubeconfig"]) if isinstance(auth["kubeconfig"], str) \
                    else ("", where["kubeconfig"])
            else:
                kubeconfig, source = default_kubeconfig(env, home)
        elif in_cluster(env, exists):
            mode, source = "in-cluster", "the pod's service account"
        else:
            kubeconfig, source = default_kubeconfig(env, home)
            mode = "kubeconfig" if exists(kubeconfig) else "none"
        if mode == "in-cluster":
            what = "the in-cluster config (%s)" % source
        else:
            what = "the kubeconfig %s (%s), %s" % (kubeconfig or "given inline", source, (
                "context %s (%s)" % (context, where["context"]) if context else "its current context"))
    if mode == "none":
        sentence = ("No cluster access: validation_kubeconfig is not set, no K8S_AUTH_* variable is, KUBECONFIG "
                    "is not set, %s does not exist and this is not a pod; set validation_kubeconfig (and "
                    "validation_context) in the inventory, or KUBECONFIG, or attach the cluster's credential "
                    "(docs/getting-started.md)." % kubeconfig)
    elif mode == "kubeconfig" and kubeconfig and not exists(os.path.expanduser(kubeconfig)):
        sentence = "The kubeconfig %s (%s) does not exist; set %s to the cluster's kubeconfig file." % (
            kubeconfig, source, "validation_kubeconfig" if source == "validation_kubeconfig" else source)
        mode = "none"
    else:
        sentence = "Cluster access: " + what + "."
    # a kubeconfig given inline (a dict) holds credentials too
    public = {k: v for k, v in auth.items() if k not in SECRET_OPTIONS and (k != "kubeconfig" or isinstance(v, str))}
    return {"mode": mode, "auth": auth, "public": public, "kubeconfig": kubeconfig, "context": context,
            "source": source, "sentence": sentence}
