#include "core/frontend/cudalift/Preprocessor.h"

#include "core/frontend/cudalift/ExprTools.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>

namespace stitch::frontend::cudalift {

namespace {

// The first expression of `int __stitch_value = (<text>);` in a snippet tree.
TSNode snippetExpression(const SyntaxTree &tree)
{
    if (!tree.valid() || ts_node_has_error(tree.root()))
        return TSNode{};
    for (TSNode decl : namedChildren(tree.root())) {
        if (kind(decl) != "declaration")
            continue;
        const TSNode init = field(decl, "declarator");
        if (kind(init) != "init_declarator")
            continue;
        TSNode value = field(init, "value");
        if (kind(value) == "parenthesized_expression" && ts_node_named_child_count(value) == 1)
            value = ts_node_named_child(value, 0);
        return value;
    }
    return TSNode{};
}

SourceRange rangeOf(const SyntaxTree &tree, TSNode n)
{
    return {tree.location(n), tree.endLocation(n), ts_node_start_byte(n), ts_node_end_byte(n)};
}

} // namespace

Preprocessor::Preprocessor(const SyntaxTree &file) : m_file(file)
{
    if (!file.valid())
        return;
    std::vector<TSNode> stack{file.root()};
    while (!stack.empty()) {
        const TSNode n = stack.back();
        stack.pop_back();
        const auto k = kind(n);
        if (k == "preproc_def") {
            addDefine(n, false);
        } else if (k == "preproc_function_def") {
            addDefine(n, true);
        } else if (k == "declaration" && kind(ts_node_parent(n)) == "translation_unit") {
            addGlobalConst(n);
        } else if (k == "translation_unit" || k == "preproc_ifdef" || k == "preproc_if" || k == "preproc_else"
                   || k == "linkage_specification" || k == "declaration_list") {
            const auto kids = namedChildren(n);
            for (auto it = kids.rbegin(); it != kids.rend(); ++it)
                stack.push_back(*it);
        }
    }
}

void Preprocessor::addDefine(TSNode node, bool functionLike)
{
    NamedConstant c;
    c.name = std::string(m_file.text(field(node, "name")));
    c.functionLike = functionLike;
    c.location = m_file.location(node);
    const TSNode value = field(node, "value");
    if (ts_node_is_null(value))
        return; // `#define FLAG` defines nothing the lifter could use
    c.text = std::string(m_file.text(value));
    while (!c.text.empty() && std::isspace(static_cast<unsigned char>(c.text.back())))
        c.text.pop_back();
    c.valueRange = rangeOf(m_file, value);
    if (functionLike) {
        for (TSNode p : namedChildren(field(node, "parameters")))
            c.parameters.emplace_back(m_file.text(p));
    }
    // Later #defines of the same name win, as after an #undef; conditional branches are rare here.
    auto snippet = m_file.parseSnippet("int __stitch_value = (" + c.text + ");", c.location);
    if (!snippet->valid() && !m_failure) {
        m_failure = makeError(ErrorKind::Timeout,
                              "parsing the macro bodies of " + m_file.fileName()
                                  + " ran past the file's parse time budget; the file is probably not CUDA",
                              c.location);
    }
    c.value = snippetExpression(*snippet);
    c.tree = snippet.get();
    m_snippets.push_back(std::move(snippet));
    m_constants[c.name] = std::move(c);
}

void Preprocessor::addGlobalConst(TSNode declaration)
{
    if (!hasToken(declaration, "const") && !hasToken(declaration, "constexpr"))
        return;
    for (TSNode d : namedChildren(declaration)) {
        if (kind(d) != "init_declarator")
            continue;
        const TSNode name = field(d, "declarator");
        const TSNode value = field(d, "value");
        if (kind(name) != "identifier" || ts_node_is_null(value))
            continue;
        NamedConstant c;
        c.name = std::string(m_file.text(name));
        c.tree = &m_file;
        c.value = value;
        c.text = std::string(m_file.text(value));
        c.location = m_file.location(d);
        c.valueRange = rangeOf(m_file, value);
        m_constants[c.name] = std::move(c);
    }
}

const NamedConstant *Preprocessor::find(const std::string &name) const
{
    auto it = m_constants.find(name);
    return it != m_constants.end() ? &it->second : nullptr;
}

ir::Expr SizeTable::define(const SizeDefinition &definition)
{
    if (!find(definition.name))
        m_definitions.push_back(definition);
    return ir::sizeVar(definition.name);
}

const SizeDefinition *SizeTable::find(const std::string &name) const
{
    for (const SizeDefinition &d : m_definitions) {
        if (d.name == name)
            return &d;
    }
    return nullptr;
}

ir::SizeBindings SizeTable::bindings() const
{
    ir::SizeBindings b;
    for (const SizeDefinition &d : m_definitions)
        b[d.name] = d.value;
    return b;
}

ir::Expr SizeTable::defineDerived(const std::string &name, const ir::Expr &definition, bool global)
{
    if (global && m_derived.count(name))
        return ir::sizeVar(name);
    std::string unique = name;
    for (int n = 2;; ++n) {
        auto it = m_derived.find(unique);
        if (it == m_derived.end() && !find(unique)) {
            m_derived.emplace(unique, definition);
            break;
        }
        if (it != m_derived.end() && it->second.equals(definition))
            break;
        unique = name + "_" + std::to_string(n);
    }
    return ir::sizeVar(unique);
}

ir::Expr SizeTable::inlineDerived(const ir::Expr &e) const
{
    if (m_derived.empty() || !e.defined())
        return e;
    std::function<ir::Expr(const ir::Expr &, int)> expand = [&](const ir::Expr &x, int depth) {
        return rewrite(x, [&](const ir::Expr &node) -> std::optional<ir::Expr> {
            if (node.kind() != ir::ExprKind::SizeVar || depth > 16)
                return std::nullopt;
            auto it = m_derived.find(node.name());
            if (it == m_derived.end())
                return std::nullopt;
            return expand(it->second, depth + 1);
        });
    };
    return expand(e, 0);
}

std::optional<NumberValue> parseNumber(std::string_view text)
{
    std::string t(text);
    t.erase(std::remove(t.begin(), t.end(), '\''), t.end());
    if (t.empty())
        return std::nullopt;
    NumberValue v;
    const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    const bool floating = !hex && t.find_first_of(".eE") != std::string::npos;
    if (floating) {
        v.isFloat = true;
        v.dtype = ir::DType::F64;
        if (t.back() == 'f' || t.back() == 'F') {
            v.dtype = ir::DType::F32;
            t.pop_back();
        }
        char *end = nullptr;
        v.floatValue = std::strtod(t.c_str(), &end);
        if (end != t.c_str() + t.size())
            return std::nullopt;
        return v;
    }
    bool isLong = false;
    while (!t.empty() && std::string_view("uUlL").find(t.back()) != std::string_view::npos) {
        if (t.back() == 'l' || t.back() == 'L')
            isLong = true;
        t.pop_back();
    }
    char *end = nullptr;
    errno = 0;
    const unsigned long long raw = std::strtoull(t.c_str(), &end, 0);
    if (end != t.c_str() + t.size() || errno != 0 || raw > static_cast<unsigned long long>(INT64_MAX))
        return std::nullopt;
    v.intValue = static_cast<std::int64_t>(raw);
    v.dtype = isLong || v.intValue > INT32_MAX ? ir::DType::I64 : ir::DType::I32;
    return v;
}

} // namespace stitch::frontend::cudalift
