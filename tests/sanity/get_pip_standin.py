"""Stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

That host is not reachable from this project's machines, so tests/sanity.sh puts this file in
ansible-test's cache instead: it installs pip with the standard library's ensurepip, then runs
`pip install` with the arguments ansible-test gives get-pip.py (pinned pip, setuptools, wheel).
ansible-test runs pip with a reduced environment (no PIP_* variables), so the CA bundle of the
machine is written into the new virtual environment's own pip.conf, where every later pip call in
it finds it.
"""
import ensurepip
import os
import subprocess
import sys

for bundle in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"):
    if bundle and os.path.exists(bundle):
        with open(os.path.join(sys.prefix, "pip.conf"), "w", encoding="utf-8") as conf:
            conf.write("[global]\ncert = %s\n" % bundle)
        break

ensurepip.bootstrap(upgrade=False)
# ensurepip sets PIP_CONFIG_FILE=/dev/null in this process; the real install must read pip.conf again.
os.environ.pop("PIP_CONFIG_FILE", None)
args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + args))
