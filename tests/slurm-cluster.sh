#!/bin/sh
# tests/slurm-cluster.sh - a one-node Slurm cluster on localhost, for the test
# of scenarios/sweeps/slurm-array.sh (tests/test_slurm.c).
#
#   tests/slurm-cluster.sh start DIR   starts munged, slurmctld and slurmd with
#                                      everything in DIR; prints the SLURM_CONF
#                                      to use; exit 77 when Slurm cannot be
#                                      started here (the reason in DIR/why)
#   tests/slurm-cluster.sh stop DIR    stops the daemons it started (by pid)
#
# As root (Debian's slurm-wlm and munge; `make deps` installs them).  The
# daemons use their own munge key and socket, ports, state and spool folders
# in DIR, so nothing of a system Slurm or munge is touched.  The node is this
# machine as `slurmd -C` sees it (its CPUs and RealMemory, which jobs' --mem
# requests need); process tracking by /proc, no cgroups, no accounting.
# Reference: the slurm.conf(5) and munged(8) manual pages of Slurm 22.05 and
# MUNGE 0.5 (https://slurm.schedmd.com/slurm.conf.html).
set -u
cmd=${1:?usage: slurm-cluster.sh start|stop DIR}
dir=${2:?usage: slurm-cluster.sh start|stop DIR}

why() { echo "$*" > "$dir/why"; exit 77; }

stop() {
	for d in slurmd slurmctld munged; do
		[ -f "$dir/$d.pid" ] && kill "$(cat "$dir/$d.pid")" 2>/dev/null
	done
	for d in slurmd slurmctld munged; do
		[ -f "$dir/$d.pid" ] || continue
		pid=$(cat "$dir/$d.pid")
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null
		rm -f "$dir/$d.pid"
	done
	return 0
}

if [ "$cmd" = stop ]; then
	stop
	exit 0
fi

[ "$(id -u)" -eq 0 ] || why "not root: the test starts slurmctld and slurmd as root"
for c in munged slurmctld slurmd sbatch squeue sinfo; do
	command -v "$c" >/dev/null 2>&1 || why "$c is not installed (make deps installs slurm-wlm and munge)"
done
mkdir -p "$dir/state" "$dir/spool" || why "cannot create folders in $dir"
chmod 700 "$dir"

# MUNGE: a key of our own, a socket in DIR.
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
	--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" \
	>"$dir/munged.out" 2>&1 || why "munged did not start: $(tail -n 3 "$dir/munged.out" "$dir/munged.log" 2>/dev/null)"

host=$(hostname -s)
node=$(slurmd -C 2>/dev/null | head -n 1 | sed 's/^NodeName=[^ ]* //')
case $node in *RealMemory=*) ;; *) stop; why "slurmd -C does not describe this machine: $node" ;; esac
# Ports of our own, from the process id, so that two checkouts do not collide.
port=$((20000 + ($$ % 5000) * 2))
cat > "$dir/slurm.conf" <<EOF
ClusterName=gpuplantest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
KillWait=5
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 $node State=UNKNOWN
PartitionName=gpuplan Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i >"$dir/slurmctld.out" 2>&1 ||
	{ stop; why "slurmctld did not start: $(tail -n 3 "$dir/slurmctld.log" 2>/dev/null)"; }
slurmd -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 ||
	{ stop; why "slurmd did not start: $(tail -n 3 "$dir/slurmd.log" 2>/dev/null)"; }
# Up when the node is idle (registered, nothing running): a few seconds.
for _ in $(seq 1 100); do
	state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1)
	[ "$state" = idle ] && { echo "$SLURM_CONF"; exit 0; }
	sleep 0.2
done
stop
why "the node did not become idle (state '${state:-none}'): $(tail -n 3 "$dir/slurmd.log" "$dir/slurmctld.log" 2>/dev/null)"
