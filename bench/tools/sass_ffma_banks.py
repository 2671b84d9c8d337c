#!/usr/bin/env python3
"""Register-bank sharing of a kernel's accumulating FFMAs, from `cuobjdump -sass` output.

    python3 bench/tools/sass_ffma_banks.py KERNEL.sass [...]

For every `FFMA Rd, Ra, Rb, Rd` (the GEMM's multiply-adds: the accumulator is both source and
destination), counts the instructions whose source registers not marked `.reuse` (those come from
the operand reuse cache) fall in the same bank, with the bank taken as the register number modulo
2 and modulo 4: a pair or all three. Two kernels with the same k-loop source can differ here by a
factor of two, as ptxas allocates the accumulators (run 13, bench/results/2026-11-30/run13-fused).
"""
import re
import sys
from collections import Counter

INSTR = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?(FFMA\S*)\s+([^;]*);")
REG = re.compile(r"^-?\|?R(\d+)(\.reuse)?\|?$")


def stats(path):
    ffmas = 0
    shared = {2: [0, 0], 4: [0, 0]}
    reuse = 0
    with open(path, errors="replace") as f:
        for line in f:
            m = INSTR.match(line)
            if not m:
                continue
            ops = [o.strip() for o in m.group(2).split(",")]
            if len(ops) != 4 or ops[0].split(".")[0] != ops[3].split(".")[0].lstrip("-"):
                continue
            ffmas += 1
            regs = []
            for o in ops[1:]:
                r = REG.match(o)
                if r and r.group(2):
                    reuse += 1
                elif r:
                    regs.append(int(r.group(1)))
            for mod in (2, 4):
                most = max(Counter(x % mod for x in regs).values()) if regs else 0
                if most == 2:
                    shared[mod][0] += 1
                elif most >= 3:
                    shared[mod][1] += 1
    return ffmas, shared, reuse


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip())
        return 2
    for path in sys.argv[1:]:
        n, s, reuse = stats(path)
        print(f"{path}: {n} accumulating FFMA, {reuse} reused operands; same bank (mod 2) pairs {s[2][0]} "
              f"triples {s[2][1]}; (mod 4) pairs {s[4][0]} triples {s[4][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
