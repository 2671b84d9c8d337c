#!/usr/bin/env bash
# Run 16, call 4 (session 14; device tool, carry [".devcarry"]): the final head's GPU tests of
# generated code, the 11 processes of run 15 call 3 at once (the eight sampled programs, the
# stream-K shapes, the lifting corpus): after the stream-K tile rule moved to one expression.
exec bash bench/results/2026-11-30/run15-model/call3.sh
