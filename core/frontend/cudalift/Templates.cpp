// Instantiating template kernels and device functions at their calls (Templates.h).
#include "core/frontend/cudalift/Templates.h"

#include "core/frontend/cudalift/ExprTools.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace stitch::frontend::cudalift {

namespace {

struct TemplateParameter {
    std::string name;
    bool isType = false;
    std::string defaultText; ///< empty: none
};

struct FunctionTemplate {
    std::string name;
    TSNode definition{};     ///< the function_definition inside the template_declaration
    TSNode nameNode{};       ///< its declarator's identifier
    std::vector<TemplateParameter> parameters;
};

struct Argument {
    std::string text;
    bool isType = false;
};

TSNode functionDeclarator(TSNode def)
{
    TSNode d = field(def, "declarator");
    while (!ts_node_is_null(d) && kind(d) != "function_declarator")
        d = field(d, "declarator");
    return d;
}

/// The declarator's pointer depth and name ("*const *p" -> 2, "p").
std::pair<int, TSNode> declaratorName(TSNode d)
{
    int depth = 0;
    while (!ts_node_is_null(d)) {
        const auto k = kind(d);
        if (k == "identifier")
            return {depth, d};
        if (k == "pointer_declarator")
            ++depth;
        else if (k != "init_declarator" && k != "reference_declarator" && k != "parenthesized_declarator")
            return {depth, TSNode{}};
        TSNode next = field(d, "declarator");
        if (ts_node_is_null(next) && ts_node_named_child_count(d) > 0)
            next = ts_node_named_child(d, ts_node_named_child_count(d) - 1);
        d = next;
    }
    return {depth, TSNode{}};
}

class Instantiator {
public:
    Instantiator(const SyntaxTree &tree, const TemplateInstances &previous) : m_tree(tree), m_out(previous)
    {
        m_out.grew = false;
    }

    TemplateInstances run()
    {
        collectTemplates(m_tree.root());
        if (m_templates.empty())
            return std::move(m_out);
        collectFunctionNames(m_tree.root());
        findCalls(m_tree.root(), false);
        return std::move(m_out);
    }

private:
    std::string text(TSNode n) const { return std::string(m_tree.text(n)); }

    void collectTemplates(TSNode n)
    {
        for (TSNode c : namedChildren(n)) {
            const auto k = kind(c);
            if (k == "template_declaration") {
                addTemplate(c);
            } else if (k == "preproc_ifdef" || k == "preproc_if" || k == "preproc_else" || k == "preproc_elif" ||
                       k == "linkage_specification" || k == "declaration_list" || k == "namespace_definition" ||
                       k == "ERROR") {
                collectTemplates(c);
            }
        }
    }

    void addTemplate(TSNode decl)
    {
        TSNode def{};
        for (TSNode c : namedChildren(decl)) {
            if (kind(c) == "function_definition")
                def = c;
        }
        if (ts_node_is_null(def))
            return;
        const TSNode fd = functionDeclarator(def);
        if (ts_node_is_null(fd) || kind(field(fd, "declarator")) != "identifier")
            return;
        // Only device code: what precedes the declarator names __global__ or __device__.
        const std::string head(m_tree.text(def).substr(0, ts_node_start_byte(fd) - ts_node_start_byte(def)));
        if (head.find("__global__") == std::string::npos && head.find("__device__") == std::string::npos)
            return;
        FunctionTemplate t;
        t.definition = def;
        t.nameNode = field(fd, "declarator");
        t.name = text(t.nameNode);
        for (TSNode p : namedChildren(field(decl, "parameters"))) {
            TemplateParameter tp;
            const auto k = kind(p);
            if (k == "type_parameter_declaration" || k == "optional_type_parameter_declaration") {
                tp.isType = true;
                TSNode nameNode = field(p, "name");
                if (ts_node_is_null(nameNode) && ts_node_named_child_count(p) > 0)
                    nameNode = ts_node_named_child(p, 0);
                tp.name = text(nameNode);
                if (k == "optional_type_parameter_declaration")
                    tp.defaultText = text(field(p, "default_type"));
            } else if (k == "parameter_declaration" || k == "optional_parameter_declaration") {
                tp.name = text(declaratorName(field(p, "declarator")).second);
                if (k == "optional_parameter_declaration")
                    tp.defaultText = text(field(p, "default_value"));
            } else {
                return; // a template template parameter or a parameter pack: not instantiated
            }
            if (tp.name.empty())
                return;
            t.parameters.push_back(std::move(tp));
        }
        m_templates[t.name] = std::move(t);
    }

    void collectFunctionNames(TSNode n)
    {
        if (kind(n) == "function_definition") {
            const TSNode fd = functionDeclarator(n);
            if (!ts_node_is_null(fd))
                m_names.insert(text(field(fd, "declarator")));
        }
        for (TSNode c : namedChildren(n))
            collectFunctionNames(c);
    }

    void findCalls(TSNode n, bool insideTemplate)
    {
        const auto k = kind(n);
        if (k == "template_declaration")
            insideTemplate = true;
        if (k == "call_expression" && !insideTemplate)
            call(n);
        for (TSNode c : namedChildren(n))
            findCalls(c, insideTemplate);
    }

    void refuse(TSNode callNode, std::string why, std::string advice)
    {
        m_out.refused[ts_node_start_byte(callNode)] =
            Refusal{m_tree.location(callNode), fragment(m_tree.text(callNode)), std::move(why), std::move(advice)};
    }

    void call(TSNode callNode)
    {
        const std::uint32_t at = ts_node_start_byte(callNode);
        if (m_out.calls.count(at) || m_out.refused.count(at))
            return;
        const TSNode fn = field(callNode, "function");
        std::vector<Argument> explicitArgs;
        std::string name;
        if (kind(fn) == "template_function") {
            name = text(field(fn, "name"));
            for (TSNode a : namedChildren(field(fn, "arguments")))
                explicitArgs.push_back({text(a), kind(a) == "type_descriptor"});
        } else if (kind(fn) == "identifier") {
            name = text(fn);
        }
        const auto it = m_templates.find(name);
        if (it == m_templates.end())
            return;
        const FunctionTemplate &t = it->second;
        if (explicitArgs.size() > t.parameters.size()) {
            refuse(callNode, "'" + name + "' takes " + std::to_string(t.parameters.size()) + " template arguments", {});
            return;
        }
        std::map<std::string, std::string> deduced = deduce(t, callNode);
        std::vector<std::string> values;
        for (std::size_t i = 0; i < t.parameters.size(); ++i) {
            const TemplateParameter &p = t.parameters[i];
            if (i < explicitArgs.size())
                values.push_back(explicitArgs[i].text);
            else if (deduced.count(p.name))
                values.push_back(deduced[p.name]);
            else if (!p.defaultText.empty())
                values.push_back(p.defaultText);
            else {
                refuse(callNode,
                       "the template argument '" + p.name + "' of '" + name + "' is neither given nor deducible from "
                           "the call's arguments",
                       "name it at the call (" + name + "<...>), or keep the kernel opaque");
                return;
            }
        }
        std::string key = name + "<";
        for (std::size_t i = 0; i < values.size(); ++i)
            key += (i ? ", " : "") + values[i];
        key += ">";
        auto known = m_out.instances.find(key);
        if (known == m_out.instances.end()) {
            const std::string instance = instanceName(name, values);
            instantiate(t, values, instance);
            known = m_out.instances.emplace(key, instance).first;
        }
        m_out.calls[at] = known->second;
        m_out.templatesUsed.insert(name);
    }

    /// Template type parameters used bare as a function parameter's type, from the arguments' types.
    std::map<std::string, std::string> deduce(const FunctionTemplate &t, TSNode callNode) const
    {
        std::map<std::string, std::string> out;
        const TSNode params = field(functionDeclarator(t.definition), "parameters");
        const auto ps = namedChildren(params);
        const auto args = namedChildren(field(callNode, "arguments"));
        for (std::size_t i = 0; i < ps.size() && i < args.size(); ++i) {
            if (kind(ps[i]) != "parameter_declaration")
                continue;
            const std::string typeName = text(field(ps[i], "type"));
            const bool isParam = std::any_of(t.parameters.begin(), t.parameters.end(),
                                             [&](const TemplateParameter &p) { return p.isType && p.name == typeName; });
            if (!isParam || out.count(typeName))
                continue;
            const int depth = declaratorName(field(ps[i], "declarator")).first;
            if (auto type = argumentType(args[i], callNode, depth))
                out[typeName] = *type;
        }
        return out;
    }

    /// The type an argument gives a parameter of `depth` pointers, when its declaration says.
    std::optional<std::string> argumentType(TSNode arg, TSNode callNode, int depth) const
    {
        const auto k = kind(arg);
        if (k == "number_literal" && depth == 0) {
            const std::string s = text(arg);
            const bool hex = s.size() > 1 && (s[1] == 'x' || s[1] == 'X');
            const bool isFloat = !hex && (s.find('.') != std::string::npos || s.find('e') != std::string::npos ||
                                          s.find('E') != std::string::npos);
            if (isFloat)
                return (s.back() == 'f' || s.back() == 'F') ? "float" : "double";
            return std::string("int");
        }
        if (k != "identifier")
            return std::nullopt;
        const std::string name = text(arg);
        // The enclosing function's parameters and declarations before the call.
        TSNode f = callNode;
        while (!ts_node_is_null(f) && kind(f) != "function_definition")
            f = ts_node_parent(f);
        if (ts_node_is_null(f))
            return std::nullopt;
        std::optional<std::string> found;
        std::vector<TSNode> stack{f};
        while (!stack.empty()) {
            const TSNode n = stack.back();
            stack.pop_back();
            if (ts_node_start_byte(n) > ts_node_start_byte(callNode))
                continue;
            const auto nk = kind(n);
            if (nk == "declaration" || nk == "parameter_declaration") {
                for (TSNode d : namedChildren(n)) {
                    if (d.id == field(n, "type").id)
                        continue;
                    const auto [ptr, id] = declaratorName(d);
                    if (!ts_node_is_null(id) && text(id) == name && ptr == depth)
                        found = text(field(n, "type"));
                }
            }
            for (TSNode c : namedChildren(n))
                stack.push_back(c);
        }
        if (found && (*found == "auto" || found->empty()))
            return std::nullopt;
        return found;
    }

    std::string instanceName(const std::string &name, const std::vector<std::string> &values)
    {
        std::string out = name;
        for (const std::string &v : values)
            out += "_" + identifierFrom(v);
        std::string unique = out;
        for (int n = 2; m_names.count(unique); ++n)
            unique = out + "_" + std::to_string(n);
        m_names.insert(unique);
        return unique;
    }

    /// The definition with its name replaced and every use of a template parameter substituted.
    void instantiate(const FunctionTemplate &t, const std::vector<std::string> &values, const std::string &instance)
    {
        struct Edit {
            std::uint32_t begin, end;
            std::string text;
        };
        std::vector<Edit> edits{{ts_node_start_byte(t.nameNode), ts_node_end_byte(t.nameNode), instance}};
        std::map<std::string, std::string> bySubstitution;
        for (std::size_t i = 0; i < t.parameters.size(); ++i)
            bySubstitution[t.parameters[i].name] = t.parameters[i].isType ? values[i] : "(" + values[i] + ")";
        std::vector<TSNode> stack{t.definition};
        while (!stack.empty()) {
            const TSNode n = stack.back();
            stack.pop_back();
            const auto k = kind(n);
            if ((k == "identifier" || k == "type_identifier") && n.id != t.nameNode.id) {
                const auto s = bySubstitution.find(text(n));
                if (s != bySubstitution.end())
                    edits.push_back({ts_node_start_byte(n), ts_node_end_byte(n), s->second});
            }
            for (TSNode c : namedChildren(n))
                stack.push_back(c);
        }
        std::sort(edits.begin(), edits.end(), [](const Edit &a, const Edit &b) { return a.begin > b.begin; });
        const std::uint32_t base = ts_node_start_byte(t.definition);
        std::string body = text(t.definition);
        for (const Edit &e : edits)
            body.replace(e.begin - base, e.end - e.begin, e.text);
        const SourceLocation where = m_tree.location(t.definition);
        std::string file;
        for (char c : where.file) {
            if (c == '"' || c == '\\')
                file += '\\';
            file += c;
        }
        m_out.appendix += "\n#line " + std::to_string(where.line) + " \"" + file + "\"\n" + body + "\n";
        m_out.grew = true;
    }

    const SyntaxTree &m_tree;
    TemplateInstances m_out;
    std::map<std::string, FunctionTemplate> m_templates;
    std::set<std::string> m_names;
};

} // namespace

TemplateInstances instantiateTemplates(const SyntaxTree &tree, const TemplateInstances &previous)
{
    return Instantiator(tree, previous).run();
}

} // namespace stitch::frontend::cudalift
