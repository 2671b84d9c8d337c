#pragma once
// The subcommands of `stitchcuda`. Each returns the process exit code: 0 success, 1 the input was
// rejected (compile errors, syntax errors), 2 usage or I/O errors.

#include <string>

namespace stitch::cli {

struct InfoOptions {
    bool json = false;
};
int runInfo(const InfoOptions &options);

struct CompileOptions {
    std::string file;
    std::string arch = "sm_90";
    int blockSize = 256;       ///< threads per block assumed for the occupancy column
    bool json = false;
    std::string ptxOut;        ///< write the PTX here when set
    std::string cubinOut;      ///< write the CUBIN here when set
};
int runCompile(const CompileOptions &options);

struct OutlineOptions {
    std::string file;
    bool json = false;
};
int runOutline(const OutlineOptions &options);

/// Reads a whole file; on failure prints "stitchcuda: cannot read FILE: reason" and returns false.
bool readFile(const std::string &path, std::string &out);

} // namespace stitch::cli
