#include "core/frontend/LiftJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string_view>

namespace stitch::frontend {

namespace {

using nlohmann::json;

/// Length of the valid UTF-8 sequence at text[i], or 0 if there is none (overlong forms,
/// surrogates and code points beyond U+10FFFF are invalid too).
std::size_t utf8SequenceLength(std::string_view text, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80)
        return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf; // allowed range of the second byte
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        low = lead == 0xe0 ? 0xa0 : 0x80;
        high = lead == 0xed ? 0x9f : 0xbf;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        low = lead == 0xf0 ? 0x90 : 0x80;
        high = lead == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high)
        return 0;
    for (std::size_t k = 2; k < length; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xbf)
            return 0;
    }
    return length;
}

/// JSON strings must be UTF-8, but messages and "as written" fields quote source text, which may
/// be any bytes: each invalid byte becomes U+FFFD so that dump() never throws.
std::string validUtf8(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = utf8SequenceLength(text, i);
        if (length == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text, i, length);
            i += length;
        }
    }
    return out;
}

/// Applies validUtf8 to every string value of a document (its keys are ours, plain ASCII).
void sanitizeStrings(json &value)
{
    if (value.is_string()) {
        const std::string &text = value.get_ref<const std::string &>();
        if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
            value = validUtf8(text);
    } else if (value.is_structured()) {
        for (json &element : value)
            sanitizeStrings(element);
    }
}

json locationToJson(const SourceLocation &location)
{
    if (!location.known())
        return nullptr;
    return {{"file", location.file}, {"line", location.line}, {"column", location.column}};
}

json rangeToJson(const SourceLocation &begin, const SourceLocation &end)
{
    if (!begin.known())
        return nullptr;
    return {{"file", begin.file}, {"line", begin.line}, {"column", begin.column},
            {"endLine", end.line}, {"endColumn", end.column}};
}

json iterVarToJson(const ir::IterVar &var)
{
    return {{"name", var.name}, {"lower", var.lowerBound.toString()}, {"extent", var.extent.toString()}};
}

json stringsToJson(const std::vector<std::string> &strings)
{
    json list = json::array();
    for (const std::string &s : strings)
        list.push_back(s);
    return list;
}

json opToJson(const ir::ComputeOp &op)
{
    json domain = json::array();
    for (const ir::IterVar &var : op.domain)
        domain.push_back(iterVarToJson(var));
    json reduction = nullptr;
    if (op.reduction) {
        json vars = json::array();
        for (const ir::IterVar &var : op.reduction->vars)
            vars.push_back(iterVarToJson(var));
        reduction = {{"kind", ir::reduceKindName(op.reduction->kind)},
                     {"vars", vars},
                     {"init", op.reduction->init.defined() ? json(op.reduction->init.toString()) : json(nullptr)}};
    }
    json inputs = json::array();
    for (const ir::TensorRef &t : op.inputs())
        inputs.push_back(t.name);
    return {{"name", op.name},
            {"output", op.output.name},
            {"text", op.toString()},
            {"domain", domain},
            {"reduction", reduction},
            {"body", op.body.toString()},
            {"inputs", inputs},
            {"source", op.source ? rangeToJson(op.source->begin, op.source->end) : json(nullptr)},
            {"stage", op.stage}};
}

json graphToJson(const LiftedProgram &program)
{
    const ir::Graph &graph = program.graph;
    json sizes = json::array();
    std::vector<std::string> names = graph.sizeVars();
    for (const auto &[name, value] : program.sizes) {
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    }
    for (const std::string &name : names) {
        auto it = program.sizes.find(name);
        sizes.push_back({{"name", name}, {"value", it != program.sizes.end() ? json(it->second) : json(nullptr)}});
    }
    json tensors = json::array();
    for (const ir::Tensor &t : graph.tensors()) {
        json shape = json::array();
        for (const ir::Expr &dim : t.shape.dims())
            shape.push_back(dim.toString());
        tensors.push_back({{"id", t.id}, {"name", t.name}, {"role", ir::tensorRoleName(t.role)},
                           {"dtype", ir::dtypeName(t.dtype)}, {"shape", shape}});
    }
    json ops = json::array();
    for (const ir::ComputeOp &op : graph.ops())
        ops.push_back(opToJson(op));
    return {{"name", graph.name()}, {"sizes", sizes}, {"tensors", tensors}, {"ops", ops}};
}

std::string languageOf(const std::string &file)
{
    const std::string base = file.substr(file.find_last_of("/\\") + 1);
    const auto dot = base.rfind('.');
    std::string extension = dot == std::string::npos ? std::string() : base.substr(dot + 1);
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
    if (extension == "te")
        return "te";
    if (extension == "cu" || extension == "cuh")
        return "cuda";
    return {};
}

} // namespace

json diagnosticToJson(const Diagnostic &diagnostic)
{
    json j = {{"severity", severityName(diagnostic.severity)}, {"file", diagnostic.location.file},
              {"line", diagnostic.location.line}, {"column", diagnostic.location.column},
              {"message", diagnostic.message}};
    sanitizeStrings(j);
    return j;
}

json liftToJson(const LiftedProgram &program)
{
    json launches = json::array();
    for (const LiftedLaunch &launch : program.launches) {
        launches.push_back({{"kernel", launch.kernel}, {"grid", launch.grid}, {"block", launch.block},
                            {"arguments", stringsToJson(launch.arguments)}, {"ops", stringsToJson(launch.ops)},
                            {"location", locationToJson(launch.location)}, {"inferred", launch.inferred}});
    }
    json opaque = json::array();
    for (const OpaqueKernel &kernel : program.opaque) {
        opaque.push_back({{"name", kernel.name}, {"range", rangeToJson(kernel.range.begin, kernel.range.end)},
                          {"reads", stringsToJson(kernel.reads)}, {"writes", stringsToJson(kernel.writes)},
                          {"why", diagnosticToJson(kernel.why)}});
    }
    json diagnostics = json::array();
    for (const Diagnostic &d : program.diagnostics)
        diagnostics.push_back(diagnosticToJson(d));
    json document = {{"schema", kLiftJsonSchema},
            {"file", program.sourceFile},
            {"language", program.language},
            {"ok", true},
            {"graph", graphToJson(program)},
            {"launches", launches},
            {"opaque", opaque},
            {"included_files", stringsToJson(program.includedFiles)},
            {"diagnostics", diagnostics},
            {"error", nullptr}};
    sanitizeStrings(document);
    return document;
}

json liftFailureToJson(const std::string &file, const Error &error)
{
    json diagnostics = json::array();
    for (const Diagnostic &d : error.diagnostics)
        diagnostics.push_back(diagnosticToJson(d));
    const std::string language = languageOf(file);
    json document = {{"schema", kLiftJsonSchema},
            {"file", file},
            {"language", language.empty() ? json(nullptr) : json(language)},
            {"ok", false},
            {"graph", nullptr},
            {"launches", json::array()},
            {"opaque", json::array()},
            {"diagnostics", diagnostics},
            {"error", {{"kind", errorKindName(error.kind)},
                       {"message", error.message},
                       {"location", error.location ? locationToJson(*error.location) : json(nullptr)}}}};
    sanitizeStrings(document);
    return document;
}

json liftResultToJson(const Result<LiftedProgram> &result, const std::string &file)
{
    return result ? liftToJson(*result) : liftFailureToJson(file, result.error());
}

} // namespace stitch::frontend
