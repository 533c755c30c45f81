#!/usr/bin/env bash
# Runs one benchmark and keeps its whole output, per-run lines included, under
# bench/results/raw/<date>-<name>.txt, with the command as the file's first line.
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
out="$root/bench/results/raw/$(date -u +%Y-%m-%d)-$name.txt"
mkdir -p "$(dirname "$out")"
cd "$root"
{
    echo "\$ $*"
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out"
"$@" >> "$out" 2>&1
echo "kept in ${out#"$root"/}"
