#!/usr/bin/env bash
# Writes the hand-edited twins of generated programs that a run record keeps as diffs (NAME.cu.diff
# or NAME.cuh.diff beside where NAME.cu or NAME.cuh stood, its "---" line naming the program it
# edits, relative to the diff's folder) back as NAME.cu / NAME.cuh, byte for byte:
#   bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants4096 [more folders]
# Where the program a twin edits is a generated one that the record does not keep either, the diff's
# first line says which commit holds it, as "# base not kept: git show COMMIT:PATH" (PATH from the
# repository's root); where that program is missing, it is written first, exactly as COMMIT holds it
# (so run this inside a clone that has COMMIT). A base that is there and differs from COMMIT's is
# used as it is, with a warning.
set -euo pipefail
for dir in "$@"; do
    for d in "$dir"/*.cu.diff "$dir"/*.cuh.diff; do
        [ -e "$d" ] || continue
        base=$(sed -n '/^--- /{s/^--- //p;q}' "$d")
        from=$(sed -n '1s/^# base not kept: git show //p' "$d")
        if [ -n "$from" ]; then
            if [ ! -e "$dir/$base" ]; then
                git show "$from" > "$dir/$base"
            elif ! git show "$from" | cmp -s - "$dir/$base"; then
                echo "restore_twins.sh: $dir/$base differs from $from; ${d%.diff} is written against it" >&2
            fi
        fi
        patch -s -o "${d%.diff}" "$dir/$base" < "$d"
    done
done
