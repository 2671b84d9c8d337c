#include "core/frontend/cudalift/SyntaxTree.h"

#include "core/frontend/cudalift/LiftRefusal.h"

#include <cctype>
#include <cstring>

namespace stitch::frontend::cudalift {

std::string Refusal::message() const
{
    std::string text = "'" + construct + "': " + why;
    if (!advice.empty()) {
        std::string a = advice;
        a[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(a[0])));
        text += ". " + a;
    }
    return text;
}

std::string fragment(std::string_view text)
{
    std::string out;
    bool space = false;
    for (char c : text) {
        if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
            space = !out.empty();
            continue;
        }
        if (space)
            out += ' ';
        space = false;
        out += c;
    }
    if (out.size() > 60)
        out = out.substr(0, 57) + "...";
    return out;
}

std::unique_ptr<SyntaxTree> SyntaxTree::parse(std::string text, std::string fileName, const CudaParseLimits &limits)
{
    std::unique_ptr<SyntaxTree> tree(new SyntaxTree());
    tree->m_text = std::move(text);
    tree->m_file = std::move(fileName);
    tree->m_lines.emplace(tree->m_text);
    tree->parseUntil(ParseClock::now() + limits.budgetFor(tree->m_text.size()), limits.maxSourceBytes);
    return tree;
}

std::unique_ptr<SyntaxTree> SyntaxTree::parseSnippet(std::string text, SourceLocation origin) const
{
    std::unique_ptr<SyntaxTree> tree(new SyntaxTree());
    tree->m_text = std::move(text);
    tree->m_file = m_file;
    tree->m_origin = std::move(origin);
    tree->parseUntil(m_deadline, m_maxSourceBytes);
    return tree;
}

void SyntaxTree::parseUntil(ParseClock::time_point deadline, std::size_t maxSourceBytes)
{
    m_deadline = deadline;
    m_maxSourceBytes = maxSourceBytes;
    auto parsed = parseCudaUntil(m_text, m_file, deadline, maxSourceBytes);
    if (parsed)
        m_tree = std::move(parsed).value();
    else
        m_failure = parsed.error();
}

SyntaxTree::~SyntaxTree() = default;

TSNode SyntaxTree::root() const
{
    return m_tree->root();
}

std::string_view SyntaxTree::text(TSNode node) const
{
    if (ts_node_is_null(node))
        return {};
    const uint32_t b = ts_node_start_byte(node), e = ts_node_end_byte(node);
    if (b > m_text.size() || e > m_text.size() || e < b)
        return {};
    return std::string_view(m_text).substr(b, e - b);
}

SourceLocation SyntaxTree::location(TSNode node) const
{
    if (m_origin)
        return *m_origin;
    if (ts_node_is_null(node))
        return {m_file, 0, 0};
    const TSPoint p = ts_node_start_point(node);
    if (m_lines)
        return m_lines->at(m_file, p.row, p.column);
    return {m_file, static_cast<int>(p.row) + 1, static_cast<int>(p.column) + 1};
}

SourceLocation SyntaxTree::endLocation(TSNode node) const
{
    if (m_origin)
        return *m_origin;
    if (ts_node_is_null(node))
        return {m_file, 0, 0};
    const TSPoint p = ts_node_end_point(node);
    if (m_lines)
        return m_lines->at(m_file, p.row, p.column);
    return {m_file, static_cast<int>(p.row) + 1, static_cast<int>(p.column) + 1};
}

ir::SourceSpan SyntaxTree::span(TSNode node) const
{
    return {location(node), endLocation(node)};
}

std::vector<Diagnostic> SyntaxTree::grammarLimits(TSNode node, std::size_t max) const
{
    if (!m_tree)
        return {};
    if (ts_node_is_null(node))
        node = root();
    if (!ts_node_has_error(node))
        return {};
    std::vector<Diagnostic> out = frontend::grammarLimits(node, m_text, m_file, max, m_lines ? &*m_lines : nullptr);
    if (m_origin) {
        for (Diagnostic &d : out)
            d.location = *m_origin;
    }
    return out;
}

std::optional<Refusal> SyntaxTree::grammarLimitRefusal(TSNode subtree, const std::string &what) const
{
    if (ts_node_is_null(subtree) || !ts_node_has_error(subtree))
        return std::nullopt;
    // The first ERROR or MISSING node in source order.
    std::vector<TSNode> stack{subtree};
    while (!stack.empty()) {
        const TSNode n = stack.back();
        stack.pop_back();
        if (ts_node_is_missing(n) || kind(n) == "ERROR") {
            const TSNode shown = ts_node_is_missing(n) && !ts_node_is_null(ts_node_parent(n)) ? ts_node_parent(n) : n;
            const std::string expected =
                ts_node_is_missing(n) ? " (it expected '" + std::string(kind(n)) + "' here)" : std::string();
            return Refusal{location(n), fragment(text(shown)),
                           "the CUDA grammar (" + cudaGrammarName() + ") cannot read this construct" + expected + ", so "
                               + what + " stays opaque",
                           "this is the grammar's limit, not a verdict on the code: nvcc/NVRTC is the authority on "
                           "whether it is valid CUDA"};
        }
        if (!ts_node_has_error(n))
            continue;
        const uint32_t count = ts_node_child_count(n);
        for (uint32_t i = count; i-- > 0;)
            stack.push_back(ts_node_child(n, i));
    }
    return std::nullopt;
}

std::string_view kind(TSNode node)
{
    return ts_node_is_null(node) ? std::string_view() : std::string_view(ts_node_type(node));
}

TSNode field(TSNode node, const char *name)
{
    return ts_node_child_by_field_name(node, name, static_cast<uint32_t>(std::strlen(name)));
}

std::vector<TSNode> namedChildren(TSNode node)
{
    std::vector<TSNode> out;
    if (ts_node_is_null(node))
        return out;
    const uint32_t count = ts_node_named_child_count(node);
    for (uint32_t i = 0; i < count; ++i)
        out.push_back(ts_node_named_child(node, i));
    return out;
}

std::vector<TSNode> children(TSNode node)
{
    std::vector<TSNode> out;
    if (ts_node_is_null(node))
        return out;
    const uint32_t count = ts_node_child_count(node);
    for (uint32_t i = 0; i < count; ++i)
        out.push_back(ts_node_child(node, i));
    return out;
}

std::string_view operatorOf(TSNode node)
{
    const TSNode op = field(node, "operator");
    if (!ts_node_is_null(op))
        return kind(op);
    // update_expression in some grammar versions has no operator field: the token is unnamed.
    for (TSNode child : children(node)) {
        if (!ts_node_is_named(child))
            return kind(child);
    }
    return {};
}

bool hasToken(TSNode node, std::string_view token)
{
    for (TSNode child : children(node)) {
        if (kind(child) == token)
            return true;
        // Qualifiers such as __shared__ and const sit inside a type_qualifier node.
        if (kind(child) == "type_qualifier" || kind(child) == "storage_class_specifier") {
            for (TSNode inner : children(child)) {
                if (kind(inner) == token)
                    return true;
            }
        }
    }
    return false;
}

} // namespace stitch::frontend::cudalift
