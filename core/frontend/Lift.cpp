// Entry points of Lift.h that do not belong to one frontend: the .te frontend and the dispatch by
// file extension. liftCudaProgram lives in cudalift/.
#include "core/frontend/Lift.h"

#include "core/frontend/te/TeFrontend.h"

#include <algorithm>
#include <cctype>

namespace stitch::frontend {

Result<LiftedProgram> liftTensorExpressions(const std::string &source, const std::string &fileName)
{
    return te::parseTensorExpressions(source, fileName);
}

namespace {
/// The file name's extension without the dot, lower case ("" when it has none).
std::string extensionOf(const std::string &fileName)
{
    const std::string base = fileName.substr(fileName.find_last_of("/\\") + 1);
    const auto dot = base.rfind('.');
    std::string extension = dot == std::string::npos ? std::string() : base.substr(dot + 1);
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension;
}
} // namespace

bool isCudaFileName(const std::string &fileName)
{
    const std::string extension = extensionOf(fileName);
    return extension == "cu" || extension == "cuh";
}

Result<LiftedProgram> liftFile(const std::string &source, const std::string &fileName, const SourceOptions &options)
{
    const std::string extension = extensionOf(fileName);
    if (extension == "te")
        return liftTensorExpressions(source, fileName);
    if (isCudaFileName(fileName))
        return liftCudaProgram(source, fileName, options);
    const std::string base = fileName.substr(fileName.find_last_of("/\\") + 1);
    const auto dot = base.rfind('.');
    const std::string what = extension.empty() ? "a file without an extension"
                                               : "extension '." + base.substr(dot + 1) + "'";
    return makeError(ErrorKind::Unsupported,
                     "cannot lift " + base + ": unsupported " + what + " (expected .te, .cu or .cuh)",
                     SourceLocation{fileName, 0, 0});
}

} // namespace stitch::frontend
