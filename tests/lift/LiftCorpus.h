#pragma once
// The CUDA lifting corpus: which programs lift, at what small sizes to test them, and which must
// be refused with which located diagnostic.
//   tests/lift/corpus/*.cu -> liftableCorpus() / refusedCorpus() -> test_lift (CPU), test_gpu (GPU)
// Shared by the interpreter tests and the GPU test so both exercise the same programs and sizes.

#include "core/frontend/cudalift/CudaLift.h"
#include "core/ir/Shape.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::testing {

/// A program that must lift completely, with small bindings for every size of its graph
/// (deliberately not multiples of the programs' block sizes).
struct CorpusProgram {
    std::string name; ///< file stem in tests/lift/corpus
    ir::SizeBindings small;
};

/// A refusal the lifter must report: the kernel, where (line:col) and a fragment of the message.
struct ExpectedRefusal {
    std::string kernel;
    int line = 0;
    int column = 0;
    std::string fragment;
};

struct RefusedProgram {
    std::string name;
    std::vector<ExpectedRefusal> refusals;
    std::vector<std::string> liftedOps; ///< ops that still lift around the refused kernels
};

const std::vector<CorpusProgram> &liftableCorpus();
const std::vector<RefusedProgram> &refusedCorpus();

std::string corpusPath(const std::string &name);
std::string readTextFile(const std::string &path);

/// The program with its file-scope size definitions (#define N 1024, const int N = 1024) set to
/// the given values, byte for byte elsewhere, so device code compiled from it uses those sizes.
std::string resizeProgram(const std::string &source, const std::vector<frontend::cudalift::SizeDefinition> &sizes,
                          const ir::SizeBindings &values);

/// -D options for the host-header constants textbook device code uses (FLT_MAX, INFINITY):
/// compileProgram blanks <cfloat> and <math.h>, and NVRTC does not define them itself.
std::vector<std::string> hostConstantDefines();

/// Mangled name of each __global__ function in PTX, by its plain name (vectorAdd -> _Z9vectorAdd...),
/// read from the `.entry` lines so it does not depend on the ptxas report.
std::map<std::string, std::string> ptxEntryNames(const std::string &ptx);

/// Every binding the program needs: its own sizes, with the graph's sizes replaced by `small`.
ir::SizeBindings testBindings(const frontend::cudalift::CudaLiftDetail &detail, const ir::SizeBindings &small);

} // namespace stitch::testing
