#include "core/frontend/CudaParser.h"

#include "core/frontend/SourceExpansion.h"
#include "core/frontend/TreeWalk.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>

extern "C" const TSLanguage *tree_sitter_cuda(void);

namespace stitch::frontend {

namespace {

struct ParserDeleter {
    void operator()(TSParser *parser) const { ts_parser_delete(parser); }
};

std::string sizeText(std::size_t bytes)
{
    if (bytes < (std::size_t{1} << 20))
        return std::to_string(bytes) + " bytes";
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return text;
}

Error fileError(ErrorKind kind, const std::string &fileName, std::string message)
{
    Error error = makeError(kind, std::move(message), SourceLocation{fileName, 1, 1});
    error.diagnostics.push_back(Diagnostic{Severity::Error, *error.location, error.message});
    return error;
}

/// The source with each launch attribute the grammar does not know (`__cluster_dims__(8, 1, 1)`,
/// `__maxnreg__(64)`) blanked to spaces of the same length: tree-sitter-cuda (0.20.4 and 0.21.1
/// alike) cannot read them and reads the kernel after them as a host function (the index then
/// left it out of the device compilation, the lifter out of the kernels). The tree's byte
/// offsets, lines and columns stay those of the source, so callers read node text from their own
/// copy.
std::string maskUnknownLaunchAttributes(std::string_view source)
{
    std::string out(source);
    for (const std::string attribute : {"__cluster_dims__", "__maxnreg__"}) {
        for (auto at = out.find(attribute); at != std::string::npos; at = out.find(attribute, at + 1)) {
            std::size_t end = at + attribute.size();
            while (end < out.size() && (out[end] == ' ' || out[end] == '\t'))
                ++end;
            if (end >= out.size() || out[end] != '(')
                continue;
            int depth = 0;
            for (; end < out.size(); ++end) {
                depth += out[end] == '(' ? 1 : out[end] == ')' ? -1 : 0;
                if (depth == 0)
                    break;
            }
            if (end >= out.size())
                break;
            for (std::size_t i = at; i <= end; ++i)
                if (out[i] != '\n')
                    out[i] = ' ';
        }
    }
    return out;
}

/// The first node, in pre-order, more than maxDepth levels below root.
std::optional<TSNode> firstNodeDeeperThan(TSNode root, unsigned maxDepth)
{
    std::optional<TSNode> found;
    walkPreorder(root, [&](TSNode node, unsigned depth) {
        if (depth <= maxDepth)
            return Walk::Descend;
        found = node;
        return Walk::Stop;
    });
    return found;
}

} // namespace

std::chrono::microseconds CudaParseLimits::budgetFor(std::size_t bytes) const
{
    const auto proportional =
        std::chrono::duration_cast<std::chrono::microseconds>(budgetPerByte * static_cast<std::int64_t>(bytes));
    return std::max<std::chrono::microseconds>(minBudget, proportional);
}

Result<CudaTree> parseCudaUntil(std::string_view source, const std::string &fileName, ParseClock::time_point deadline,
                                std::size_t maxSourceBytes)
{
    if (source.size() > maxSourceBytes) {
        return fileError(ErrorKind::Parse, fileName,
                         fileName + " is " + sizeText(source.size()) + "; CUDA files over " + sizeText(maxSourceBytes)
                             + " are not parsed (the file is probably not CUDA source)");
    }
    const auto budget = std::chrono::duration_cast<std::chrono::microseconds>(deadline - ParseClock::now());
    const auto timeoutMessage = [&] {
        return "parsing " + fileName + " took longer than " + std::to_string((budget.count() + 999) / 1000)
               + " ms for " + sizeText(source.size())
               + "; the file is probably not CUDA (tree-sitter's error recovery is slow on other text)";
    };
    // tree-sitter reads a timeout of 0 as "no limit".
    if (budget.count() <= 0)
        return fileError(ErrorKind::Timeout, fileName, timeoutMessage());

    std::unique_ptr<TSParser, ParserDeleter> parser(ts_parser_new());
    if (!ts_parser_set_language(parser.get(), tree_sitter_cuda()))
        return fileError(ErrorKind::Parse, fileName, "the CUDA grammar's ABI does not match the tree-sitter runtime");
    ts_parser_set_timeout_micros(parser.get(), static_cast<std::uint64_t>(budget.count()));
    const std::string parsed = maskUnknownLaunchAttributes(source);
    TSTree *tree =
        ts_parser_parse_string(parser.get(), nullptr, parsed.data(), static_cast<std::uint32_t>(parsed.size()));
    if (!tree)
        return fileError(ErrorKind::Timeout, fileName, timeoutMessage());
    CudaTree owned(tree);
    if (const auto deep = firstNodeDeeperThan(owned.root(), kMaxCudaSyntaxDepth)) {
        const TSPoint at = ts_node_start_point(*deep);
        Error error = makeError(ErrorKind::Unsupported,
                                "the code is nested more than " + std::to_string(kMaxCudaSyntaxDepth)
                                    + " levels deep here (syntax tree levels: parentheses, calls, blocks, "
                                      "statements); files nested so deeply are not read",
                                LineMap(source).at(fileName, at.row, at.column));
        error.diagnostics.push_back(Diagnostic{Severity::Error, *error.location, error.message});
        return error;
    }
    return owned;
}

std::string cudaGrammarName()
{
#ifdef STITCH_TS_CUDA_VERSION
    return std::string("tree-sitter-cuda ") + STITCH_TS_CUDA_VERSION;
#else
    return "tree-sitter-cuda";
#endif
}

std::string grammarLimitMessage(TSNode node, std::string_view source)
{
    const std::string head = "the CUDA grammar (" + cudaGrammarName() + ") cannot read this construct";
    // Not "syntax error": the grammar misreads code nvcc accepts. It cannot tell which case this is.
    const std::string tail = "; nvcc/NVRTC is the authority on whether it is valid CUDA";
    if (ts_node_is_missing(node))
        return head + " (it expected '" + std::string(ts_node_type(node)) + "' here)" + tail;
    const uint32_t b = ts_node_start_byte(node), e = ts_node_end_byte(node);
    std::string snippet;
    if (b < e && e <= source.size()) {
        // One line, blanks squeezed, at most 40 characters.
        bool space = false;
        for (char c : source.substr(b, std::min<uint32_t>(e - b, 80))) {
            if (c == '\n' && !snippet.empty())
                break;
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                space = !snippet.empty();
                continue;
            }
            if (space)
                snippet += ' ';
            space = false;
            snippet += c;
        }
        if (snippet.size() > 40)
            snippet = snippet.substr(0, 37) + "...";
    }
    return head + (snippet.empty() ? std::string() : " near '" + snippet + "'") + tail;
}

std::vector<Diagnostic> grammarLimits(TSNode node, std::string_view source, const std::string &fileName,
                                      std::size_t max, const LineMap *lines)
{
    std::vector<Diagnostic> out;
    if (ts_node_is_null(node))
        return out;
    std::vector<TSNode> stack{node};
    while (!stack.empty() && out.size() < max) {
        const TSNode n = stack.back();
        stack.pop_back();
        const bool missing = ts_node_is_missing(n);
        if (missing || std::string_view(ts_node_type(n)) == "ERROR") {
            const TSPoint p = ts_node_start_point(n);
            out.push_back({Severity::Warning,
                           lines ? lines->at(fileName, p.row, p.column)
                                 : SourceLocation{fileName, static_cast<int>(p.row) + 1, static_cast<int>(p.column) + 1},
                           grammarLimitMessage(n, source)});
            if (missing)
                continue;
        }
        if (!ts_node_has_error(n))
            continue;
        const uint32_t count = ts_node_child_count(n);
        for (uint32_t i = count; i-- > 0;)
            stack.push_back(ts_node_child(n, i));
    }
    return out;
}

std::string_view launchedKernelName(std::string_view functionText)
{
    if (functionText.starts_with("::"))
        functionText.remove_prefix(2);
    return functionText;
}

Result<CudaTree> parseCuda(std::string_view source, const std::string &fileName, const CudaParseLimits &limits)
{
    return parseCudaUntil(source, fileName, ParseClock::now() + limits.budgetFor(source.size()),
                          limits.maxSourceBytes);
}

} // namespace stitch::frontend
