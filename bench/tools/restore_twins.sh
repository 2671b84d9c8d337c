#!/usr/bin/env bash
# Writes the hand-edited twins of generated programs that a run record keeps as diffs (NAME.cu.diff
# beside where NAME.cu stood, its "---" line naming the program it edits, relative to the diff's
# folder) back as NAME.cu, byte for byte:
#   bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants4096 [more folders]
# A twin whose program is itself not kept needs that program first (the run's README says how).
set -euo pipefail
for dir in "$@"; do
    for d in "$dir"/*.cu.diff; do
        [ -e "$d" ] || continue
        base=$(sed -n '1s/^--- //p' "$d")
        patch -s -o "${d%.diff}" "$dir/$base" < "$d"
    done
done
