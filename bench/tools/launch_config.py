#!/usr/bin/env python3
"""Prints "GRID BLOCK" of a generated single-kernel program's host launcher for given sizes, by
evaluating its grid expression (the first `grid0_` array) and reading its block size from the launch
line: for bench/tools/gemm_program_driver.cu's NVRTC launch.

    python3 bench/tools/launch_config.py programs/x/matmul.cu M=4096 N=4096 K=4096
"""
import re
import sys

src = open(sys.argv[1]).read()
sizes = dict(kv.split("=") for kv in sys.argv[2:])
grid = re.search(r"grid0_\[3\] = \{(.*?), 1, 1\};", src).group(1)
expr = grid.replace("(long long)", "")
for name, value in sizes.items():
    expr = re.sub(r"\b%s\b" % name, value, expr)
expr = expr.replace("/", "//")
block = re.search(r"::C<<<grid_, dim3\((\d+), 1, 1\)", src).group(1)
print(eval(expr, {"max": max, "min": min}), block)
