#!/bin/sh
# Runs a libFuzzer target for a bounded time over a seed corpus; CTest's fuzz.frontends.
#   run_fuzzer.sh FUZZER SEED_DIR WORK_DIR SECONDS [DICT]
# New inputs go to WORK_DIR/corpus (never into the seeds in git); a crash, leak, timeout or
# out-of-memory leaves its reproducer in WORK_DIR/artifacts and fails the test. Exit 77: skipped.
fuzzer=$1 seeds=$2 work=$3 seconds=$4 dict=$5
if [ ! -x "$fuzzer" ]; then
    echo "fuzz.frontends skipped: $fuzzer is not built"
    exit 77
fi
mkdir -p "$work/corpus" "$work/artifacts"
# -timeout=20, not 5: under ASan on a loaded machine, tree-sitter's error recovery alone takes
# seconds on 4 KB of garbage (corpus/slow-treesitter-error-recovery); a real hang still fails.
set -- -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1
if [ -n "$dict" ]; then
    set -- "$@" -dict="$dict"
fi
"$fuzzer" "$@" "$work/corpus" "$seeds"
status=$?
if [ $status -ne 0 ]; then
    echo "fuzz.frontends: the fuzzer failed (exit $status); reproducers:" >&2
    ls -l "$work/artifacts" >&2
    echo "replay one with: $fuzzer ARTIFACT" >&2
fi
exit $status
