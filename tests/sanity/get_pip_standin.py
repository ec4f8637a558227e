"""Stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

That host is not reachable from this project's machines, so tests/sanity.sh puts this file in
ansible-test's cache instead: it installs pip with the standard library's ensurepip, then runs
`pip install` with the arguments ansible-test gives get-pip.py (pinned pip, setuptools, wheel).
"""
import ensurepip
import subprocess
import sys

ensurepip.bootstrap(upgrade=False)
args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + args))
