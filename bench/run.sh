#!/usr/bin/env bash
# Runs one benchmark and keeps its whole output, per-run lines included, under
# bench/results/raw/<date>-<name>.txt (-2, -3... if that is taken: a kept run is never
# overwritten). The file starts with the command, the time, the load average, the commit (and
# whether the work tree had uncommitted changes), the machine and the CPU counters of
# /proc/stat; it ends with the counters and the load average again, the exit status and the
# share of CPU time the hypervisor stole during the run. render-tables reads those lines
# (feign_bench::figures::raw) for the line under each table.
# Usage: bench/run.sh <name> <command...>
#   e.g. bench/run.sh per-call cargo run --release -p feign-bench --bin per-call
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bench/run.sh <name> <command...>" >&2
    exit 2
fi
name="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="$root/bench/results/raw/$(date -u +%Y-%m-%d)-$name"
out="$base.txt"
count=1
while [ -e "$out" ]; do
    count=$((count + 1))
    out="$base-$count.txt"
done
mkdir -p "$(dirname "$out")"
cd "$root"

now() { date -u +%Y-%m-%dT%H:%MZ; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# The aggregate CPU line: user nice system idle iowait irq softirq steal guest guest_nice.
cpu_counters() { head -1 /proc/stat; }

commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if ! git diff --quiet HEAD 2>/dev/null; then
    commit="$commit with uncommitted changes"
fi
model="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
memory="$(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
toolchain="$(rustc -V 2>/dev/null || echo 'rustc unknown')"
start_counters="$(cpu_counters)"
{
    echo "\$ $*"
    echo "# $(now), $(nproc) cores, load average $(load)"
    echo "# commit $commit"
    echo "# machine: $(nproc) cores, ${model:-unknown CPU}, $memory, $(uname -sr), $toolchain"
    echo "# /proc/stat at start: $start_counters"
} > "$out"

status=0
"$@" >> "$out" 2>&1 || status=$?

end_counters="$(cpu_counters)"
# Steal over the run: its share of all CPU time that passed (guest time is already in user).
steal="$(printf '%s\n%s\n' "$start_counters" "$end_counters" | awk '
    { total = 0; for (i = 2; i <= 9; i++) total += $i; t[NR] = total; s[NR] = $9 }
    END { d = t[2] - t[1]; printf "%.2f", (d > 0 ? 100 * (s[2] - s[1]) / d : 0) }')"
{
    echo "# /proc/stat at end: $end_counters"
    echo "# end $(now), load average $(load), exit status $status, cpu steal $steal %"
} >> "$out"
echo "kept in ${out#"$root"/}"
exit "$status"
