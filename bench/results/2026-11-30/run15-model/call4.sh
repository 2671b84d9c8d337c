#!/usr/bin/env bash
# Run 15, call 4 (session 13; device tool, carry [".devcarry"]): call 3 again, with the same 11
# processes at once, after the runner fix (the launch stream waits for the buffers' uploads and
# fills; docs/RUNNER.md).
exec bash "$(dirname "$0")/call3.sh"
