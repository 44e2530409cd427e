#!/usr/bin/env bash
# A one-node SLURM on this machine, for trying the cluster path before spending an allocation and
# for the tests marked `slurm` (.ci/run starts it, runs them, stops it):
#
#   tools/slurm-local.sh start    # installs what is missing (root, apt-get), starts the daemons,
#                                 # waits until the node is idle, prints the line below
#   export SLURM_CONF=/tmp/hpo-slurm/slurm.conf   # then sbatch, squeue, sacct, run.py reach it
#   tools/slurm-local.sh status   # the daemons it started and the node's state; exit 1 if down
#   tools/slurm-local.sh stop     # cancels this cluster's jobs, stops the daemons `start` started
#
# Everything lives in one state folder, $HPO_SLURM_DIR (default /tmp/hpo-slurm): the
# configuration, munge's key and socket, the database, the daemons' pid files, logs and spool.
# `start` leaves a running daemon as it is and `stop` stops only the processes named by the pid
# files in that folder, so both can be run twice.
#
# The node is sized to what this process may use: CPUs = `nproc` (the CPU affinity: started
# under `taskset -c 0`, the node has one CPU, and every job inherits that affinity, as
# TaskPlugin=task/none sets none) and memory = the machine's, less 1 GiB.
#
# Accounting: submitit polls job states with `sacct`, which with
# AccountingStorageType=accounting_storage/none fails ("Slurm accounting storage is disabled",
# exit 1, for each poll; job completion logging, jobcomp/filetxt, only serves `sacct -c`, which
# submitit does not call). So accounting goes through slurmdbd to a MariaDB server started here
# on 127.0.0.1 (Debian's slurmdbd and mariadb-server; about 30 s to install, 3 s to start).
#
# Memory limits: each job's memory is sampled every second (jobacct_gather/linux) and a job
# over its --mem is killed (OverMemoryKill; its state OUT_OF_MEMORY). cgroups are not used: they
# need a writable cgroup tree, which containers rarely have.
set -euo pipefail

STATE="${HPO_SLURM_DIR:-/tmp/hpo-slurm}"
CONF="$STATE/slurm.conf"
SOCKET="$STATE/munge/munge.socket"
PORT_CTLD="${HPO_SLURM_PORT:-6917}"  # slurmctld; slurmd, MariaDB, slurmdbd: the next three
PORT_D=$((PORT_CTLD + 1))
PORT_DB=$((PORT_CTLD + 2))
PORT_DBD=$((PORT_CTLD + 3))
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)  # in starting order
NODE="$(hostname -s)"
USER_NAME="$(id -un)"

log() { echo "slurm-local: $*" >&2; }

alive() {  # alive <daemon>: its pid file names a running process
    local pid
    [ -f "$STATE/$1.pid" ] || return 1
    pid="$(cat "$STATE/$1.pid")"
    [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null
}

have() { command -v "$1" > /dev/null; }

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
        >> "$STATE/log/apt.log" 2>&1
}

install() {
    local missing=()
    have munged || missing+=(munge)
    have slurmctld && have slurmd && have sbatch || missing+=(slurm-wlm)
    have slurmdbd || missing+=(slurmdbd)
    have mariadbd && have mariadb-install-db || missing+=(mariadb-server)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        log "error: ${missing[*]} not installed; installing needs root: apt-get install ${missing[*]}"
        exit 1
    fi
    log "installing ${missing[*]} (apt-get, about 30 s)"
    apt_install "${missing[@]}" \
        || { apt-get update -q >> "$STATE/log/apt.log" 2>&1 && apt_install "${missing[@]}"; } \
        || { log "error: apt-get install ${missing[*]} failed; see $STATE/log/apt.log"; exit 1; }
}

write_config() {
    local cpus mem_mb
    cpus="$(nproc)"
    mem_mb=$(($(awk '/^MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024))
    cat > "$CONF" << EOF
# Written by tools/slurm-local.sh: one node, this machine, every daemon and job as $USER_NAME.
ClusterName=hpo-local
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT_CTLD
SlurmdPort=$PORT_D
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MaxArraySize=1001
# accounting, which submitit's sacct polls read: slurmdbd, on the MariaDB server started here
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$PORT_DBD
AccountingStoragePass=$SOCKET
# memory: sampled every second, a job over its --mem is killed
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
# turnaround of seconds (tests): kills, requeues, the records squeue keeps of ended jobs
KillWait=5
MinJobAge=300
SlurmdTimeout=30
InactiveLimit=0
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    cat > "$STATE/slurmdbd.conf" << EOF
# Written by tools/slurm-local.sh; slurmdbd reads it from the folder of \$SLURM_CONF.
AuthType=auth/munge
AuthInfo=socket=$SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$PORT_DBD
SlurmUser=$USER_NAME
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$PORT_DB
StorageUser=$USER_NAME
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$STATE/slurmdbd.conf"
    [ -f "$STATE/munge/munge.key" ] || {
        dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1 count=1024 status=none
        chmod 400 "$STATE/munge/munge.key"
    }
}

wait_port() {  # a daemon writes its pid file before its port listens
    for _ in $(seq 100); do
        (: < "/dev/tcp/127.0.0.1/$1") 2> /dev/null && return 0
        sleep 0.1
    done
    log "error: nothing listens on port $1 after 10 s; logs: $STATE/log"
    exit 1
}

start_daemon() {  # start_daemon <daemon>: unless running, start it and wait for its pid file
    alive "$1" && return 0
    case "$1" in
        munged)
            munged --force --socket="$SOCKET" --key-file="$STATE/munge/munge.key" \
                --pid-file="$STATE/munged.pid" --log-file="$STATE/log/munged.log" \
                --seed-file="$STATE/munge/seed"
            ;;
        mariadbd)
            [ -d "$STATE/db/mysql" ] || mariadb-install-db --no-defaults --datadir="$STATE/db" \
                --user="$USER_NAME" --auth-root-authentication-method=normal --skip-test-db \
                > "$STATE/log/mariadb-install.log" 2>&1
            mariadbd --no-defaults --datadir="$STATE/db" --user="$USER_NAME" \
                --bind-address=127.0.0.1 --port="$PORT_DB" --socket="$STATE/db.sock" \
                --pid-file="$STATE/mariadbd.pid" --log-error="$STATE/log/mariadbd.log" \
                --innodb-buffer-pool-size=64M --innodb-lock-wait-timeout=900 \
                --skip-name-resolve > /dev/null 2>&1 &
            ;;
        slurmdbd) SLURM_CONF="$CONF" slurmdbd ;;
        slurmctld) slurmctld -f "$CONF" ;;
        slurmd) slurmd -f "$CONF" ;;
    esac
    for _ in $(seq 100); do alive "$1" && return 0; sleep 0.1; done
    log "error: $1 did not start; logs: $STATE/log"
    exit 1
}

wait_idle() {  # up to 30 s; a daemon that died ends the wait at once
    local state="" deadline=$((SECONDS + 30))
    while [ "$SECONDS" -lt "$deadline" ]; do
        for daemon in slurmctld slurmd; do
            alive "$daemon" || { log "error: $daemon died; its log: $STATE/log/$daemon.log"; exit 1; }
        done
        state="$(SLURM_CONF="$CONF" timeout 5 sinfo -h -n "$NODE" -o %T 2> /dev/null || true)"
        case "$state" in
            idle | mixed | allocated) return 0 ;;
        esac
        sleep 0.5
    done
    log "error: node $NODE not idle after 30 s (state: ${state:-unknown}); logs: $STATE/log"
    exit 1
}

start() {
    mkdir -p "$STATE/munge" "$STATE/ctld" "$STATE/d" "$STATE/log"
    chmod 700 "$STATE" "$STATE/munge"
    install
    alive slurmctld || write_config
    for daemon in "${DAEMONS[@]}"; do
        start_daemon "$daemon"
        case "$daemon" in
            mariadbd) wait_port "$PORT_DB" ;;
            slurmdbd) wait_port "$PORT_DBD" ;;
        esac
    done
    wait_idle
    log "up: node $NODE, $(SLURM_CONF="$CONF" sinfo -h -n "$NODE" -o '%c CPUs, %m MB'); $STATE"
    echo "export SLURM_CONF=$CONF"
}

stop() {
    local pid daemon
    if alive slurmctld; then  # this cluster's jobs: their steps would outlive slurmd
        SLURM_CONF="$CONF" scancel --quiet --partition=local 2> /dev/null || true
    fi
    for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
        daemon="${DAEMONS[i]}"
        if alive "$daemon"; then
            pid="$(cat "$STATE/$daemon.pid")"
            kill "$pid"
            for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
            kill -0 "$pid" 2> /dev/null && kill -9 "$pid"
            log "stopped $daemon ($pid)"
        fi
        rm -f "$STATE/$daemon.pid"
    done
}

status() {
    local down=0
    for daemon in "${DAEMONS[@]}"; do
        if alive "$daemon"; then
            echo "$daemon: running (pid $(cat "$STATE/$daemon.pid"))"
        else
            echo "$daemon: not running"
            down=1
        fi
    done
    [ "$down" -eq 0 ] || return 1
    echo "node: $(SLURM_CONF="$CONF" sinfo -h -n "$NODE" -o '%n %T, %c CPUs, %m MB')"
    echo "export SLURM_CONF=$CONF"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *)
        echo "usage: $0 start|stop|status" >&2
        exit 2
        ;;
esac
