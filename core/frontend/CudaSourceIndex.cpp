#include "core/frontend/CudaSourceIndex.h"

#include "core/frontend/CudaParser.h"
#include "core/frontend/SourceExpansion.h"
#include "core/frontend/TreeWalk.h"

#include <tree_sitter/api.h>

#include <string_view>

extern "C" const TSLanguage *tree_sitter_cuda(void);

namespace stitch::frontend {

namespace {

class Indexer {
public:
    Indexer(const std::string &source, const std::string &fileName) : m_src(source), m_file(fileName), m_lines(source) {}

    /// Every node in pre-order, with a tree cursor rather than recursion: the tree is as deep as the
    /// user's nesting (tests/lift: 2,000 nested parentheses), and a recursive walk overflowed the
    /// stack under ASan at -O1, where each frame took 5.5 KB.
    void run(TSNode root, SourceIndex &out)
    {
        m_out = &out;
        walkPreorder(root, [this](TSNode node, unsigned) { return visit(node) ? Walk::Descend : Walk::Skip; });
    }

private:
    std::string_view text(TSNode n) const
    {
        const uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        return std::string_view(m_src).substr(b, e - b);
    }
    SourceLocation loc(TSPoint p) const { return m_lines.at(m_file, p.row, p.column); }
    SourceRange range(TSNode n) const
    {
        return {loc(ts_node_start_point(n)), loc(ts_node_end_point(n)), ts_node_start_byte(n), ts_node_end_byte(n)};
    }

    static std::string_view type(TSNode n) { return ts_node_type(n); }

    /// Indexes one node; false when its children are not to be walked.
    bool visit(TSNode n)
    {
        const auto t = type(n);
        if (ts_node_is_missing(n)) {
            m_out->syntaxErrors.push_back({Severity::Warning, loc(ts_node_start_point(n)), grammarLimitMessage(n, m_src)});
            return false;
        }
        if (t == "ERROR") {
            reportError(n);
            // Keep walking: tree-sitter often recovers whole functions inside an ERROR node.
        } else if (t == "function_definition") {
            indexFunction(n);
        } else if (t == "call_expression") {
            indexLaunch(n);
        } else if (t == "preproc_include") {
            indexInclude(n);
        }
        return true;
    }

    /// An ERROR node is the grammar's limit, not the user's error: a located warning.
    void reportError(TSNode n)
    {
        m_out->syntaxErrors.push_back({Severity::Warning, loc(ts_node_start_point(n)), grammarLimitMessage(n, m_src)});
    }

    static TSNode findFunctionDeclarator(TSNode n)
    {
        // declarator chains: pointer_declarator -> function_declarator, reference_declarator, ...
        while (!ts_node_is_null(n) && type(n) != "function_declarator")
            n = ts_node_child_by_field_name(n, "declarator", 10);
        return n;
    }

    void indexFunction(TSNode fn)
    {
        KernelInfo k;
        const uint32_t count = ts_node_child_count(fn);
        for (uint32_t i = 0; i < count; ++i) {
            const auto tok = type(ts_node_child(fn, i));
            if (tok == "__global__" || tok == "__device__") {
                if (k.qualifier != "__global__")
                    k.qualifier = std::string(tok);
            }
        }
        const TSNode parent = ts_node_parent(fn);
        const bool templated = !ts_node_is_null(parent) && type(parent) == "template_declaration";
        if (k.qualifier.empty()) {
            m_out->hostFunctions.push_back(range(templated ? parent : fn));
            return;
        }
        const TSNode decl = findFunctionDeclarator(ts_node_child_by_field_name(fn, "declarator", 10));
        if (ts_node_is_null(decl))
            return;
        const TSNode nameNode = ts_node_child_by_field_name(decl, "declarator", 10);
        k.name = std::string(text(nameNode));
        k.nameLocation = loc(ts_node_start_point(nameNode));
        const TSNode params = ts_node_child_by_field_name(decl, "parameters", 10);
        const uint32_t pc = ts_node_named_child_count(params);
        for (uint32_t i = 0; i < pc; ++i) {
            const TSNode p = ts_node_named_child(params, i);
            if (type(p) != "parameter_declaration")
                continue;
            KernelParameter param;
            const TSNode pd = ts_node_child_by_field_name(p, "declarator", 10);
            // The parameter's name is the innermost identifier of its declarator; the type is the
            // declaration text with the name cut out ("const float *A" -> "const float *").
            TSNode inner = pd;
            while (!ts_node_is_null(inner) && type(inner) != "identifier") {
                const TSNode next = ts_node_child_by_field_name(inner, "declarator", 10);
                if (ts_node_is_null(next))
                    break;
                inner = next;
            }
            std::string full(text(p));
            if (!ts_node_is_null(inner) && type(inner) == "identifier") {
                param.name = std::string(text(inner));
                const uint32_t off = ts_node_start_byte(inner) - ts_node_start_byte(p);
                full.erase(off, param.name.size());
            }
            while (!full.empty() && (full.back() == ' ' || full.back() == '\t'))
                full.pop_back();
            param.type = full;
            k.parameters.push_back(std::move(param));
        }
        const TSNode body = ts_node_child_by_field_name(fn, "body", 4);
        const std::string_view bodyText = ts_node_is_null(body) ? std::string_view() : text(body);
        k.hasSharedMemory = bodyText.find("__shared__") != std::string_view::npos;
        k.hasSyncThreads = bodyText.find("__syncthreads") != std::string_view::npos;
        // A template kernel's definition starts at its template<...> line.
        k.range = range(templated ? parent : fn);
        m_out->kernels.push_back(std::move(k));
    }

    void indexInclude(TSNode n)
    {
        const TSNode path = ts_node_child_by_field_name(n, "path", 4);
        if (ts_node_is_null(path))
            return;
        std::string_view p = text(path);
        IncludeDirective inc;
        inc.system = type(path) == "system_lib_string";
        if (p.size() >= 2)
            p = p.substr(1, p.size() - 2);
        inc.path = std::string(p);
        inc.range = range(n);
        m_out->includes.push_back(std::move(inc));
    }

    void indexLaunch(TSNode call)
    {
        const uint32_t count = ts_node_named_child_count(call);
        for (uint32_t i = 0; i < count; ++i) {
            const TSNode child = ts_node_named_child(call, i);
            if (type(child) != "kernel_call_syntax")
                continue;
            LaunchSite site;
            site.kernel = std::string(launchedKernelName(text(ts_node_child_by_field_name(call, "function", 8))));
            site.location = loc(ts_node_start_point(call));
            const uint32_t args = ts_node_named_child_count(child);
            if (args > 0)
                site.grid = std::string(text(ts_node_named_child(child, 0)));
            if (args > 1)
                site.block = std::string(text(ts_node_named_child(child, 1)));
            m_out->launches.push_back(std::move(site));
        }
    }

    const std::string &m_src;
    std::string m_file;
    LineMap m_lines;
    SourceIndex *m_out = nullptr;
};

} // namespace

SourceIndex indexCudaTree(TSNode root, const std::string &source, const std::string &fileName)
{
    SourceIndex out;
    Indexer(source, fileName).run(root, out);
    return out;
}

SourceIndex indexCudaSource(const std::string &source, const std::string &fileName, const CudaParseLimits &limits)
{
    auto tree = parseCuda(source, fileName, limits);
    if (!tree) {
        SourceIndex out;
        out.syntaxErrors.push_back({Severity::Error, tree.error().location.value_or(SourceLocation{fileName, 1, 1}),
                                    tree.error().message});
        return out;
    }
    return indexCudaTree(tree->root(), source, fileName);
}

std::string treeSitterVersionInfo()
{
    return cudaGrammarName() + ", grammar ABI " + std::to_string(ts_language_abi_version(tree_sitter_cuda())) + " (runtime accepts " +
           std::to_string(TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION) + "-" +
           std::to_string(TREE_SITTER_LANGUAGE_VERSION) + ")";
}

} // namespace stitch::frontend
