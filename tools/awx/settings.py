# AWX settings for the local, container-less AWX of tools/awx/awx_local.sh (AWX_SETTINGS_FILE).
# Loaded by awx/settings/production.py (AWX 24.6.1) after its defaults, like /etc/tower/settings.py.
# Paths come from the environment awx_local.sh sets, so nothing is written under /etc/tower or /var/lib/awx.
import os

_STATE = os.environ["RLSTACK_AWX_STATE"]
_RUN = os.path.join(_STATE, "run")

with open(os.path.join(_STATE, "SECRET_KEY"), encoding="utf-8") as _key:
    SECRET_KEY = _key.read().strip()
ALLOWED_HOSTS = ["*"]
CLUSTER_HOST_ID = "awx-local"
SYSTEM_UUID = "00000000-0000-0000-0000-000000000000"
BROADCAST_WEBSOCKET_SECRET = SECRET_KEY

DATABASES = {
    "default": {
        "ENGINE": "awx.main.db.profiled_pg",
        "NAME": "awx",
        "USER": "awx",
        "PASSWORD": "",
        "HOST": _RUN,  # the Unix socket directory of the cluster awx_local.sh starts
        "PORT": os.environ.get("RLSTACK_AWX_PGPORT", "5432"),
        "OPTIONS": {"sslmode": "disable"},
    }
}

BROKER_URL = f"unix://{_RUN}/redis.sock"
CACHES = {"default": {"BACKEND": "awx.main.cache.AWXRedisCache", "LOCATION": f"unix://{_RUN}/redis.sock?db=1"}}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [BROKER_URL], "capacity": 10000, "group_expiry": 157784760},
    }
}

PROJECTS_ROOT = os.path.join(_STATE, "projects")
JOBOUTPUT_ROOT = os.path.join(_STATE, "job_status")
STATIC_ROOT = os.path.join(_STATE, "static")
AWX_ISOLATION_BASE_PATH = os.path.join(_STATE, "jobs")
LOG_AGGREGATOR_MAX_DISK_USAGE_PATH = _STATE
# production.py shows /etc/pki paths to every job; this machine has none of them. The default changes with it,
# so the setting stays editable through the API (/api/v2/settings/jobs/), where make test-awx exposes its
# report directory.
AWX_ISOLATION_SHOW_PATHS = []
globals()["DEFAULTS_SNAPSHOT"]["AWX_ISOLATION_SHOW_PATHS"] = []  # DEFAULTS_SNAPSHOT: awx/settings/production.py
# The host's network (tools/awx/podman ignores --network; the default slirp4netns option is dropped to say so).
DEFAULT_CONTAINER_RUN_OPTIONS = []
