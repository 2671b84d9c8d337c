#!/usr/bin/env python3
"""Register-bank sharing of a kernel's accumulating FFMAs, from `cuobjdump -sass` output.

    python3 bench/tools/sass_ffma_banks.py KERNEL.sass [...]
    python3 bench/tools/sass_ffma_banks.py --stalls FROM TO KERNEL.sass   (addresses in hex)

For every FFMA whose three sources are registers (the GEMM's multiply-adds), counts those that
write another register than the one they add (the accumulator moves: `FFMA R143, R28, R36, R40`)
and those whose source registers not marked `.reuse` (those come from the operand reuse cache)
fall in the same bank, with the bank taken as the register number modulo 2 and modulo 4: a pair
or all three. Two kernels with the same k-loop source can differ here by a
factor of two, as ptxas allocates the accumulators (run 13, bench/results/2026-11-30/run13-fused).

--stalls sums, over the instructions at addresses FROM..TO (a k-loop), the stall counts ptxas
encoded in each instruction's control bits (bits 41-44 of the second 64-bit word, sm_70 and
later): the cycles the static schedule waits. Equal sums with different times point at what the
static schedule does not see, such as register bank conflicts.
"""
import gzip
import re
import sys
from collections import Counter

INSTR = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?(FFMA\S*)\s+([^;]*);")
REG = re.compile(r"^-?\|?R(\d+)(\.reuse)?\|?$")


def open_text(path):
    """A text file, gunzipped when its name ends with .gz (as the SASS listings under bench/results are)."""
    return gzip.open(path, "rt", errors="replace") if path.endswith(".gz") else open(path, errors="replace")


def stats(path):
    ffmas = moved = 0
    shared = {2: [0, 0], 4: [0, 0]}
    reuse = 0
    with open_text(path) as f:
        for line in f:
            m = INSTR.match(line)
            if not m:
                continue
            ops = [o.strip() for o in m.group(2).split(",")]
            if len(ops) != 4 or not all(REG.match(o) for o in ops[1:]):
                continue
            ffmas += 1
            if ops[0].split(".")[0] != ops[3].split(".")[0].lstrip("-|"):
                moved += 1
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
    return ffmas, moved, shared, reuse


CODE = re.compile(r"^\s+/\*([0-9a-f]{4,6})\*/\s+(.*?)\s*;?\s+/\* (0x[0-9a-f]{16}) \*/")
HIGH = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/")


def stalls(path, first, last):
    with open_text(path) as f:
        lines = f.readlines()
    count = cycles = 0
    for i, line in enumerate(lines[:-1]):
        m, h = CODE.match(line), HIGH.match(lines[i + 1])
        if m and h and first <= int(m.group(1), 16) <= last:
            count += 1
            cycles += (int(h.group(1), 16) >> 41) & 0xF
    return count, cycles


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip())
        return 2
    if sys.argv[1] == "--stalls" and len(sys.argv) == 5:
        n, c = stalls(sys.argv[4], int(sys.argv[2], 16), int(sys.argv[3], 16))
        print(f"{sys.argv[4]}: {n} instructions at {sys.argv[2]}..{sys.argv[3]}, {c} stall cycles encoded")
        return 0
    for path in sys.argv[1:]:
        n, moved, s, reuse = stats(path)
        print(f"{path}: {n} FFMA on registers, {moved} writing another register than the added one, "
              f"{reuse} reused operands; same bank (mod 2) pairs {s[2][0]} triples {s[2][1]}; "
              f"(mod 4) pairs {s[4][0]} triples {s[4][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
