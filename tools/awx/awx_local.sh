#!/usr/bin/env bash
# A real AWX on this machine, without a container engine (make awx-up / awx-down / awx-status; docs/awx.md).
#
#   tools/awx/awx_local.sh install   Debian packages, AWX + django-ansible-base sources, AWX's venv, receptor
#   tools/awx/awx_local.sh up        install, then PostgreSQL, Redis, receptor and AWX (API, dispatcher,
#                                    callback receiver) as local processes; waits until AWX can run jobs
#   tools/awx/awx_local.sh down      stops every process `up` started (the database is kept)
#   tools/awx/awx_local.sh status    what runs
#   tools/awx/awx_local.sh env       CONTROLLER_* variables for awx.awx (eval "$(tools/awx/awx_local.sh env)")
#
# Versions: AWX 24.6.1 (git tag), django-ansible-base 2024.7.1 (git tag), receptor 1.4.4 (Go module),
# ansible-runner 2.4.0, PostgreSQL 15 and Redis 7 from Debian 12. Jobs run as AWX runs them: receptor's
# `local` work type, `ansible-runner worker`, process isolation with `podman`, which here is
# tools/awx/podman (bubblewrap). The AWX sources come from a git clone of ansible/awx (RLSTACK_AWX_GIT).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AWX_VERSION=24.6.1
DAB_VERSION=2024.7.1
RECEPTOR_VERSION=1.4.4
AWX_HOME=${RLSTACK_AWX_HOME:-$HOME/.cache/rlstack-awx}    # software: sources, venv, receptor
STATE=${RLSTACK_AWX_STATE:-/var/lib/rlstack-awx}          # database, sockets, logs, job dirs (postgres must reach it)
PORT=${RLSTACK_AWX_PORT:-8052}
AWX_GIT=${RLSTACK_AWX_GIT:-/work/.mirror/ansible+awx/repo}
DAB_GIT=${RLSTACK_DAB_GIT:-/work/.mirror/ansible+django-ansible-base/repo}
# The execution environment's Python: the collection's pinned virtualenv (ee/ pins the same versions).
EE_VENV=${RLSTACK_AWX_EE_VENV:-$(readlink -f "$ROOT/.venv")}
PG_BIN=/usr/lib/postgresql/15/bin
VENV=$AWX_HOME/venv
SRC=$AWX_HOME/src/awx-$AWX_VERSION
RUN=$STATE/run
LOGS=$STATE/logs
RECEPTOR_CONF=/etc/receptor/receptor.conf   # AWX 24.6.1 reads this path (awx/main/tasks/receptor.py)
APT_PACKAGES=(postgresql-15 redis-server bubblewrap git libldap2-dev libsasl2-dev libxmlsec1-dev libxmlsec1-openssl
              pkg-config libpq-dev)

say() { echo "==> $*"; }
die() { echo "awx_local.sh: $*" >&2; exit 1; }

awx_env() {
    export DJANGO_SETTINGS_MODULE=awx.settings.production
    export AWX_SETTINGS_FILE=$ROOT/tools/awx/settings.py AWX_SETTINGS_DIR=$STATE/conf.d
    export RLSTACK_AWX_STATE=$STATE AWX_LOGGING_MODE=stdout PYTHONPATH=$SRC
    export PATH=$AWX_HOME/shim:$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    export RLSTACK_AWX_EE_VENV=$EE_VENV RLSTACK_AWX_PODMAN_STATE=$STATE/podman
}

awx_manage() { (awx_env; "$VENV/bin/python" -c 'import awx; awx.manage()' "$@"); }

install_packages() {
    local missing=()
    for pkg in "${APT_PACKAGES[@]}"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    if ((${#missing[@]})); then
        say "apt-get install ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive nice apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

install_sources() {
    [[ -f $SRC/VERSION && -d $AWX_HOME/src/dab-$DAB_VERSION ]] && return 0
    [[ -d $AWX_GIT && -d $DAB_GIT ]] || die "AWX sources: need git clones of ansible/awx and ansible/django-ansible-base (RLSTACK_AWX_GIT=$AWX_GIT, RLSTACK_DAB_GIT=$DAB_GIT)"
    say "AWX $AWX_VERSION and django-ansible-base $DAB_VERSION from their git tags"
    mkdir -p "$AWX_HOME/src"
    rm -rf "$SRC" "$AWX_HOME/src/dab-$DAB_VERSION"
    git -C "$AWX_GIT" archive --prefix="awx-$AWX_VERSION/" "$AWX_VERSION" awx requirements setup.cfg pyproject.toml \
        | tar -x -C "$AWX_HOME/src"
    echo "$AWX_VERSION" > "$SRC/VERSION"   # awx.get_version() reads it (no .git here)
    rm -f "$SRC/awx/devonly.py"   # as AWX's release package (MANIFEST.in): production mode, no dev-only URLs
    git -C "$DAB_GIT" archive --prefix="dab-$DAB_VERSION/" "$DAB_VERSION" | tar -x -C "$AWX_HOME/src"
}

install_venv() {
    local stamp
    stamp=$VENV/.installed-$(sha256sum "$ROOT/tools/awx/requirements-awx.txt" | cut -c1-12)
    [[ -f $stamp ]] && return 0
    say "AWX's Python requirements into $VENV (first time: ~10 minutes on 2 cores)"
    [[ -x $VENV/bin/python ]] || python3.11 -m venv "$VENV"
    nice -n 10 "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/tools/awx/requirements-awx.txt"
    SETUPTOOLS_SCM_PRETEND_VERSION=$DAB_VERSION nice -n 10 "$VENV/bin/pip" install -q --disable-pip-version-check \
        --no-deps "$AWX_HOME/src/dab-$DAB_VERSION"
    touch "$stamp"
}

install_receptor() {
    [[ -x $AWX_HOME/bin/receptor ]] && return 0
    say "receptor $RECEPTOR_VERSION from the Go module proxy"
    local gopath; gopath=$(go env GOMODCACHE)
    (cd "$AWX_HOME" && GOFLAGS=-mod=mod go mod download "github.com/ansible/receptor@v$RECEPTOR_VERSION")
    rm -rf "$AWX_HOME/receptor-src"
    cp -r "$gopath/github.com/ansible/receptor@v$RECEPTOR_VERSION" "$AWX_HOME/receptor-src"
    chmod -R u+w "$AWX_HOME/receptor-src"
    # cmd/receptor-cl is receptor's main package (its Makefile builds it the same way).
    (cd "$AWX_HOME/receptor-src" && CGO_ENABLED=0 nice -n 10 go build -o "$AWX_HOME/bin/receptor" \
        -ldflags "-X 'github.com/ansible/receptor/internal/version.Version=$RECEPTOR_VERSION'" ./cmd/receptor-cl)
}

install_all() {
    install_packages
    install_sources
    install_venv
    install_receptor
    mkdir -p "$AWX_HOME/shim"
    ln -sf "$ROOT/tools/awx/podman" "$AWX_HOME/shim/podman"
}

pidof_file() { [[ -f $RUN/$1.pid ]] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null && cat "$RUN/$1.pid"; }

start_bg() {  # name, command...: a session of its own, so `down` ends it with its children
    local name=$1; shift
    pidof_file "$name" >/dev/null && return 0
    setsid "$@" >"$LOGS/$name.log" 2>&1 < /dev/null &
    echo $! > "$RUN/$name.pid"
}

start_postgres() {
    if [[ ! -f $STATE/pg/PG_VERSION ]]; then
        say "PostgreSQL cluster in $STATE/pg"
        install -d -o postgres -g postgres -m 700 "$STATE/pg"
        runuser -u postgres -- "$PG_BIN/initdb" -D "$STATE/pg" -U postgres --auth=trust -E UTF8 >/dev/null
    fi
    if ! runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$STATE/pg" status >/dev/null 2>&1; then
        touch "$LOGS/postgres.log" && chown postgres "$LOGS/postgres.log"
        # Unix socket only, in $RUN: no TCP port to collide with anyone's.
        runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$STATE/pg" -l "$LOGS/postgres.log" -w -t 60 start \
            -o "-c listen_addresses='' -c unix_socket_directories=$RUN -c max_connections=200" >/dev/null
    fi
    local psql=(runuser -u postgres -- psql -h "$RUN" -U postgres -tAq)
    [[ $("${psql[@]}" -c "select 1 from pg_roles where rolname='awx'") == 1 ]] || "${psql[@]}" -c "create role awx login"
    [[ $("${psql[@]}" -c "select 1 from pg_database where datname='awx'") == 1 ]] || "${psql[@]}" -c "create database awx owner awx"
}

start_redis() {
    pidof_file redis >/dev/null && return 0
    redis-server --port 0 --unixsocket "$RUN/redis.sock" --unixsocketperm 700 --daemonize yes \
        --pidfile "$RUN/redis.pid" --logfile "$LOGS/redis.log" --dir "$STATE" --save '' --appendonly no
    for _ in $(seq 50); do [[ -S $RUN/redis.sock ]] && return 0; sleep 0.2; done
    die "redis did not open $RUN/redis.sock in 10 s (see $LOGS/redis.log)"
}

start_receptor() {
    mkdir -p "$(dirname "$RECEPTOR_CONF")"
    cat > "$RECEPTOR_CONF" <<EOF
---
# Written by rlstack.validation tools/awx/awx_local.sh (removed by \`down\`).
- node:
    id: awx-local
- log-level: info
# One node, no peers: receptor exits with "no backends are running" unless told it is alone.
- local-only:
- control-service:
    service: control
    filename: $RUN/receptor.sock
- work-command:
    worktype: local
    command: ansible-runner
    params: worker
    allowruntimeparams: true
EOF
    (awx_env; start_bg receptor "$AWX_HOME/bin/receptor" --config "$RECEPTOR_CONF")
    for _ in $(seq 50); do [[ -S $RUN/receptor.sock ]] && return 0; sleep 0.2; done
    die "receptor did not open $RUN/receptor.sock in 10 s (see $LOGS/receptor.log)"
}

configure_awx() {
    say "database migrations (first time: several minutes)"
    awx_manage migrate --noinput > "$LOGS/migrate.log" 2>&1 || { tail -20 "$LOGS/migrate.log"; die "migrate failed"; }
    [[ -f $STATE/admin_password ]] || (umask 077; "$VENV/bin/python" -c 'import secrets; print(secrets.token_urlsafe(18))' > "$STATE/admin_password")
    RLSTACK_AWX_ADMIN_PASSWORD=$(cat "$STATE/admin_password") awx_manage shell -c '
import os
from django.contrib.auth.models import User
user = User.objects.filter(username="admin").first() or User.objects.create_superuser("admin", "admin@localhost", "x")
user.set_password(os.environ["RLSTACK_AWX_ADMIN_PASSWORD"]); user.save()'
    awx_manage provision_instance --hostname=awx-local --node_type=hybrid
    awx_manage register_queue --queuename=controlplane --instance_percent=100
    awx_manage register_queue --queuename=default --instance_percent=100
    awx_manage register_default_execution_environments
}

wait_ready() {  # the API answers and the instance has capacity (its dispatcher heartbeat ran)
    local deadline=$((SECONDS + ${1:-300})) body
    while ((SECONDS < deadline)); do
        body=$(curl -fsS -m 10 -u "admin:$(cat "$STATE/admin_password")" \
            "http://127.0.0.1:$PORT/api/v2/instances/?hostname=awx-local" 2>/dev/null || true)
        if [[ $body == *'"capacity":'* && $body != *'"capacity":0,'* ]]; then
            say "AWX $AWX_VERSION is up: http://127.0.0.1:$PORT/api/v2/ (admin, password in $STATE/admin_password)"
            return 0
        fi
        sleep 3
    done
    die "AWX did not report an instance with capacity in ${1:-300} s (logs in $LOGS)"
}

up() {
    install_all
    install -d -m 755 "$STATE" "$LOGS" "$STATE/conf.d" "$STATE/projects" "$STATE/job_status" "$STATE/jobs" "$STATE/podman"
    install -d -o postgres -g postgres -m 755 "$RUN"
    [[ -f $STATE/SECRET_KEY ]] || (umask 077; "$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(32))' > "$STATE/SECRET_KEY")
    start_postgres
    start_redis
    start_receptor
    configure_awx
    say "AWX processes (API on 127.0.0.1:$PORT, dispatcher, callback receiver)"
    local manage=("$VENV/bin/python" -c 'import awx; awx.manage()')
    (awx_env
     start_bg dispatcher "${manage[@]}" run_dispatcher
     start_bg callback_receiver "${manage[@]}" run_callback_receiver
     start_bg web "${manage[@]}" runserver "127.0.0.1:$PORT" --noreload)
    wait_ready 300
}

stop_pid() {  # name: its session first (SIGTERM), then SIGKILL after 15 s
    local pid; pid=$(pidof_file "$1") || { rm -f "$RUN/$1.pid"; return 0; }
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$RUN/$1.pid"
}

down() {
    for name in web callback_receiver dispatcher receptor; do stop_pid "$name"; done
    if pid=$(pidof_file redis); then kill -TERM "$pid"; for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done; fi
    if [[ -f $STATE/pg/PG_VERSION ]] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$STATE/pg" status >/dev/null 2>&1; then
        runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$STATE/pg" -m fast -w -t 60 stop >/dev/null
    fi
    [[ -f $RECEPTOR_CONF ]] && grep -q rlstack.validation "$RECEPTOR_CONF" && rm -f "$RECEPTOR_CONF" "$RECEPTOR_CONF.lock"
    say "AWX stopped (database kept in $STATE/pg)"
}

status() {
    local rc=0
    for name in web dispatcher callback_receiver receptor redis; do
        if pid=$(pidof_file "$name"); then echo "$name: running (pid $pid)"; else echo "$name: stopped"; rc=3; fi
    done
    if runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$STATE/pg" status >/dev/null 2>&1; then echo "postgres: running"; else echo "postgres: stopped"; rc=3; fi
    return $rc
}

[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0   # sourced: the functions only
case ${1:-} in
    install) install_all ;;
    up) up ;;
    down) down ;;
    status) status ;;
    env) echo "export CONTROLLER_HOST=http://127.0.0.1:$PORT CONTROLLER_USERNAME=admin CONTROLLER_PASSWORD=$(cat "$STATE/admin_password")" ;;
    manage) shift; awx_manage "$@" ;;
    *) sed -n '2,9p' "$0"; exit 2 ;;
esac
