// HostWalker: local variables, struct members and integer arrays: declarations, assignments and their values.
#include "core/frontend/cudalift/HostWalker.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cctype>

namespace stitch::frontend::cudalift {

using ir::Expr;

HostValue *HostWalker::lookup(const std::string &name)
{
    for (auto it = m_scopes.rbegin(); it != m_scopes.rend(); ++it) {
        auto found = it->find(name);
        if (found != it->end())
            return &found->second;
    }
    auto global = m_globals.find(name);
    return global != m_globals.end() ? &global->second : nullptr;
}

std::map<std::string, HostValue> *HostWalker::scopeOf(const std::string &name)
{
    for (auto it = m_scopes.rbegin(); it != m_scopes.rend(); ++it) {
        if (it->count(name))
            return &*it;
    }
    return nullptr;
}


std::optional<HostValue> HostWalker::memberValue(TSNode e)
{
    const TSNode base = stripCastsAndParens(field(e, "argument"));
    if (kind(base) != "identifier")
        return std::nullopt;
    const std::string baseName(m_tree->text(base));
    auto *scope = scopeOf(baseName);
    if (!scope)
        return std::nullopt;
    const std::string key(fragment(m_tree->text(e)));
    if (auto it = scope->find(key); it != scope->end())
        return it->second;
    if (m_controlDepth > 0)
        return HostValue::unknown("member '" + key + "' read inside a loop or branch");
    // Read before the program sets it here (a config filled by a function, parsed arguments): a
    // size computed at run time, one symbol for every read until the member is assigned.
    const std::string name = identifierFrom(key);
    note(e, "size '" + name + "' is computed at run time (" + key + "); bind it when running the graph");
    HostValue v = HostValue::ofInt(ir::sizeVar(name));
    (*scope)[key] = v;
    return v;
}

bool HostWalker::assignMember(TSNode left, TSNode right, const std::string &op)
{
    if (kind(left) != "field_expression")
        return false;
    const TSNode base = stripCastsAndParens(field(left, "argument"));
    if (kind(base) != "identifier")
        return false;
    const std::string baseName(m_tree->text(base));
    auto *scope = scopeOf(baseName);
    if (!scope)
        return false;
    HostValue &var = (*scope)[baseName];
    const std::string member(m_tree->text(field(left, "field")));
    HostValue v = op == "=" && !ts_node_is_null(right) && m_controlDepth == 0 ? eval(right)
                                                                            : HostValue::unknown("changes inside a loop or branch");
    if (var.kind == HostValue::Kind::Dim3) {
        const int d = member == "x" ? 0 : member == "y" ? 1 : member == "z" ? 2 : -1;
        if (d >= 0 && v.kind == HostValue::Kind::Int)
            var.dims[static_cast<std::size_t>(d)] = m_math.simplify(v.value);
        else
            var = HostValue::unknown("dim3 member '" + member + "' set to a value that is not a known integer");
        return true;
    }
    const std::string key(fragment(m_tree->text(left)));
    (*scope)[key] = v.kind == HostValue::Kind::Int ? integerLocal(identifierFrom(key), v, right, false) : v;
    return true;
}

void HostWalker::declare(TSNode decl)
{
    const std::string typeText(m_tree->text(field(decl, "type")));
    const bool isConst = hasToken(decl, "const") || hasToken(decl, "constexpr");
    for (TSNode d : namedChildren(decl)) {
        const auto dk = kind(d);
        if (dk != "init_declarator" && dk != "identifier" && dk != "pointer_declarator" && dk != "array_declarator"
            && dk != "function_declarator")
            continue;
        const TSNode target = dk == "init_declarator" ? field(d, "declarator") : d;
        const TSNode value = dk == "init_declarator" ? field(d, "value") : TSNode{};
        const std::string name(m_tree->text(innermostIdentifier(target)));
        if (!ts_node_is_null(value))
            noteHostReads(value);
        HostValue v;
        if (kind(target) == "array_declarator" && !ts_node_is_null(value) && kind(value) == "initializer_list"
            && scalarTypeFromText(typeText) && ir::isInteger(*scalarTypeFromText(typeText))) {
            // `int dims[2] = {cols, rows};`: each element is a value of its own (dims[0], dims[1]).
            int i = 0;
            for (TSNode element : namedChildren(value)) {
                const HostValue ev = eval(element);
                m_scopes.back()[name + "[" + std::to_string(i++) + "]"] =
                    m_controlDepth == 0 ? ev : HostValue::unknown("set inside a loop or branch");
            }
        }
        if (kind(target) == "pointer_declarator" || kind(target) == "array_declarator") {
            v.kind = HostValue::Kind::Pointer;
            v.pointer.buffer = -1;
            const auto elementType = scalarTypeFromText(typeText);
            v.pointer.dtype = elementType.value_or(ir::DType::F32);
            if (!elementType)
                v.pointer.unmodelledType = fragment(typeText);
            v.pointer.unsignedType = elementType && typeText.find("unsigned") != std::string::npos;
            if (!ts_node_is_null(value) && kind(target) == "pointer_declarator") {
                HostValue init = eval(value);
                if (init.kind == HostValue::Kind::Pointer)
                    v.pointer = init.pointer;
            }
        } else if (typeText == "dim3" && kind(target) == "function_declarator") {
            // `dim3 block(TILE, TILE);` parses as a function declaration (the most vexing
            // parse): its "parameter types" are the constructor's arguments.
            std::vector<HostValue> parts;
            for (TSNode p : namedChildren(field(target, "parameters")))
                parts.push_back(evalName(std::string(m_tree->text(p))));
            v = dim3Of(parts);
        } else if (typeText == "dim3") {
            v = evalDim3Init(value);
        } else if (auto t = scalarTypeFromText(typeText)) {
            HostValue init = ts_node_is_null(value) ? HostValue::unknown("uninitialized") : eval(value);
            if (ir::isInteger(*t))
                v = integerLocal(name, init, value, isConst);
            else if (init.kind == HostValue::Kind::Int || init.kind == HostValue::Kind::Float)
                v = HostValue::ofFloat(constantAsFloat(init, *t));
            else
                v = init;
        } else {
            if (!ts_node_is_null(value))
                (void)eval(value); // `cudaError_t e = cudaMalloc(...)` still allocates
            v = HostValue::unknown("type '" + typeText + "' is not modelled");
        }
        m_scopes.back()[name] = std::move(v);
    }
}

void HostWalker::walkExpression(TSNode e)
{
    const auto k = kind(e);
    if (k == "call_expression") {
        (void)handleCall(e);
        return;
    }
    if (k == "assignment_expression" || k == "update_expression") {
        const TSNode left = stripCastsAndParens(field(e, k == "update_expression" ? "argument" : "left"));
        const TSNode right = field(e, "right");
        if (!ts_node_is_null(right))
            noteHostReads(right);
        if (kind(left) != "identifier" && !ts_node_is_null(right))
            walkCalls(right);
        if (kind(left) == "subscript_expression") {
            // An element of a local integer array (dims[0] = ...): no longer what it was declared as.
            if (kind(field(left, "argument")) == "identifier") {
                const std::string base(m_tree->text(field(left, "argument")));
                if (auto *scope = scopeOf(base)) {
                    for (auto &[key, value] : *scope) {
                        if (key.starts_with(base + "["))
                            value = HostValue::unknown("an array element assigned after its declaration");
                    }
                }
            }
            const int b = bufferOf(field(left, "argument"));
            if (b >= 0)
                m_out.events.push_back({HostEvent::Kind::HostWrite, b, -1, -1, m_tree->location(e)});
            if (operatorOf(e) != "=")
                noteHostReads(left);
            return;
        }
        if (assignMember(left, right, std::string(operatorOf(e))))
            return;
        if (kind(left) == "identifier") {
            const std::string op(operatorOf(e));
            HostValue *var = lookup(std::string(m_tree->text(left)));
            if (!var || op != "=") {
                if (!ts_node_is_null(right))
                    walkCalls(right);
                if (!var)
                    return;
            }
            const std::string varName(m_tree->text(left));
            const bool namedSize = var->kind == HostValue::Kind::Int && var->value.defined()
                                   && var->value.kind() == ir::ExprKind::SizeVar && var->value.name() == varName
                                   && m_program.sizes->find(varName);
            if (m_controlDepth > 0 && m_loopDepth == 0 && namedSize) {
                // `int w = 1920; if (argc > 2) w = atoi(argv[1]);`: a size the run may change; its
                // value in the source is the default, and the user binds another.
                note(e, "size '" + varName + "' may change at run time (set in a branch here); " +
                            std::to_string(m_program.sizes->find(varName)->value) +
                            " is its value when the branch does not run; bind another with --size " + varName + "=VALUE");
            } else if (m_controlDepth > 0 && var->kind != HostValue::Kind::Pointer) {
                *var = HostValue::unknown("changes inside a loop or branch");
            } else if (op == "=" && !ts_node_is_null(right)) {
                HostValue v = eval(right);
                if (m_controlDepth > 0 && (var->kind == HostValue::Kind::Pointer || v.kind == HostValue::Kind::Pointer))
                    *var = HostValue::unknown("a pointer reassigned inside a loop or branch");
                else
                    *var = v;
            } else {
                *var = HostValue::unknown("updated with '" + op + "'");
            }
        }
        return;
    }
    noteHostReads(e);
    walkCalls(e);
}

} // namespace stitch::frontend::cudalift
