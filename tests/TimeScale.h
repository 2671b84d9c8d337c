#pragma once
// Wall-clock bounds in the tests ("not a hang", "cut off by its budget") are set for optimized
// builds. Under AddressSanitizer (the asan-ubsan preset, a Debug build; asan-ubsan-ci, -O1) the same
// code runs up to 5-10x slower: LiftRobustness.DeepNestingAndHugeConstantsAreRefusedNotFatal took
// 1.1 s in the dev build and 5-10 s under Debug ASan on a 2-core machine. Bounds there are 10x
// wider, still far from a hang.

namespace stitch::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kTimeScale = 10.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kTimeScale = 10.0;
#else
inline constexpr double kTimeScale = 1.0;
#endif
#else
inline constexpr double kTimeScale = 1.0;
#endif

} // namespace stitch::testing
