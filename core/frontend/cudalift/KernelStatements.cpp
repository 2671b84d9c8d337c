// KernelExec: statements of device code (declarations, assignments, if/else, return, continue).
#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/KernelExec.h"

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

TSNode innermostIdentifier(TSNode d)
{
    while (!ts_node_is_null(d) && kind(d) != "identifier") {
        const TSNode next = field(d, "declarator");
        if (ts_node_is_null(next))
            break;
        d = next;
    }
    return d;
}

TSNode stripParentheses(TSNode e)
{
    while (kind(e) == "parenthesized_expression" && ts_node_named_child_count(e) == 1)
        e = ts_node_named_child(e, 0);
    return e;
}

} // namespace

KernelExec::Flow KernelExec::exec(TSNode stmt, State &s)
{
    const auto k = kind(stmt);
    if (k == "compound_statement")
        return execBlock(stmt, s, true);
    if (k == "declaration") {
        execDeclaration(stmt, s);
        return Flow::Normal;
    }
    if (k == "expression_statement") {
        const auto parts = namedChildren(stmt);
        for (TSNode e : parts) {
            if (kind(e) != "comment")
                execExpression(e, s, stmt);
        }
        return Flow::Normal;
    }
    if (k == "if_statement")
        return execIf(stmt, s);
    if (k == "for_statement")
        return execFor(stmt, s);
    if (k == "return_statement") {
        if (m_loopDepth > 0)
            refuse(stmt, "return inside a loop: the trip count would depend on the data",
                   "restructure the loop so it always runs to its bound");
        const auto value = namedChildren(stmt);
        if (!value.empty() && kind(value.front()) != "comment") {
            Local *ret = lookup(s, "%ret");
            if (!ret)
                refuse(stmt, "a kernel cannot return a value");
            ret->value = convertTo(eval(value.front(), s), ret->type);
        }
        return exitWith(m_returnSink, s, stmt, "return");
    }
    if (k == "continue_statement")
        return exitWith(m_continueSink, s, stmt, "continue");
    if (k == "break_statement")
        refuse(stmt, "break: the loop's trip count depends on the data",
               "loop to the bound and guard the body with an if instead");
    if (k == "while_statement" || k == "do_statement")
        refuse(stmt, "while/do loops have no known trip count", "write the loop as `for (int i = a; i < b; i++)`");
    if (k == "switch_statement" || k == "goto_statement" || k == "labeled_statement")
        refuse(stmt, "this control flow is not supported", "use if/else");
    if (k == "comment" || k == "preproc_call" || k == "preproc_def" || k == ";")
        return Flow::Normal;
    refuse(stmt, "this kind of statement (" + std::string(k) + ") is not supported by the lifter");
}

KernelExec::Flow KernelExec::execBlock(TSNode block, State &s, bool newScope)
{
    if (newScope)
        s.scopes.emplace_back();
    for (TSNode child : namedChildren(block)) {
        if (kind(child) == "comment")
            continue;
        if (exec(child, s) == Flow::Exit)
            return Flow::Exit;
    }
    if (newScope)
        s.scopes.pop_back();
    return Flow::Normal;
}

KernelExec::Flow KernelExec::exitWith(ExitSink *sink, State &s, TSNode stmt, const char *what)
{
    if (!sink)
        refuse(stmt, std::string(what) + " is not supported here");
    sink->states.push_back(s);
    return Flow::Exit;
}

void KernelExec::syncThreads(State &s, TSNode site)
{
    if (!s.conditions.empty())
        refuse(site, "__syncthreads() under a condition (" + conjunction(s.conditions).toString()
                         + "): threads that skip it race or deadlock",
               "move the barrier out of the branch and guard only the loads and stores");
    ++s.phase;
}

void KernelExec::execDeclaration(TSNode decl, State &s)
{
    const TSNode typeNode = field(decl, "type");
    const std::string typeText = textOf(typeNode);
    const bool isShared = hasToken(decl, "__shared__");
    const bool isConst = hasToken(decl, "const") || hasToken(decl, "constexpr");
    if (hasToken(decl, "extern"))
        refuse(decl, "dynamically sized shared memory (extern __shared__)", "give the array a constant size");
    if (hasToken(decl, "static"))
        refuse(decl, "a static variable keeps its value across threads");
    const auto scalarType = scalarTypeFromText(typeText);
    for (TSNode d : namedChildren(decl)) {
        const auto dk = kind(d);
        if (d.id == typeNode.id || dk == "type_qualifier" || dk == "storage_class_specifier" || dk == "comment"
            || dk == "attribute_specifier" || dk == "ms_declspec_modifier")
            continue;
        TSNode target = dk == "init_declarator" ? field(d, "declarator") : d;
        const TSNode value = dk == "init_declarator" ? field(d, "value") : TSNode{};
        const TSNode nameNode = innermostIdentifier(target);
        Local local;
        local.name = textOf(nameNode);
        local.isConst = isConst;
        if (kind(target) == "array_declarator") {
            if (!isShared)
                refuse(decl, "a thread-local array: registers indexed at run time are not modelled",
                       "use scalar variables, or keep the kernel opaque");
            std::vector<Expr> dims;
            TSNode a = target;
            while (kind(a) == "array_declarator") {
                const TSNode size = field(a, "size");
                if (ts_node_is_null(size))
                    refuse(decl, "shared array without a size");
                dims.insert(dims.begin(), m_math.simplify(eval(size, s)));
                a = field(a, "declarator");
            }
            if (!scalarType)
                refuse(decl, "shared array of unsupported type '" + typeText + "'");
            local.kind = LocalKind::Shared;
            local.shared = static_cast<int>(m_sharedArrays.size());
            m_sharedArrays.push_back(SharedArray{local.name, *scalarType, std::move(dims)});
            declare(s, std::move(local));
            continue;
        }
        if (isShared)
            refuse(decl, "a shared scalar: one value written by some threads and read by others",
                   "keep the kernel opaque, or compute the value in every thread");
        if (kind(target) == "pointer_declarator") {
            local.kind = LocalKind::Pointer;
            if (!ts_node_is_null(value))
                local.pointer = evalPointer(value, s);
            else
                local.pointer.buffer = -1;
            declare(s, std::move(local));
            continue;
        }
        if (kind(target) != "identifier")
            refuse(decl, "this declarator is not supported");
        if (typeText == "auto") {
            if (ts_node_is_null(value))
                refuse(decl, "'auto' without an initializer");
            local.value = eval(value, s);
            local.type = local.value.dtype();
        } else {
            if (!scalarType)
                refuse(decl, "variables of type '" + typeText + "' are not modelled");
            local.type = *scalarType;
            if (!ts_node_is_null(value)) {
                TSNode v = value;
                if (kind(v) == "argument_list" || kind(v) == "initializer_list") {
                    const auto items = namedChildren(v);
                    if (items.size() != 1)
                        refuse(decl, "unsupported initializer");
                    v = items.front();
                }
                local.value = convertTo(eval(v, s), local.type);
            }
        }
        if (local.value.defined() && ir::isInteger(local.type))
            m_effects.hints.emplace_back(m_math.simplify(local.value), local.name);
        declare(s, std::move(local));
    }
}

void KernelExec::execExpression(TSNode e, State &s, TSNode stmt)
{
    const auto k = kind(e);
    if (k == "assignment_expression") {
        assign(field(e, "left"), std::string(operatorOf(e)), field(e, "right"), s, stmt);
        return;
    }
    if (k == "update_expression") {
        const std::string op(operatorOf(e));
        assign(field(e, "argument"), op == "++" ? "++" : "--", TSNode{}, s, stmt);
        return;
    }
    if (k == "comma_expression") {
        execExpression(field(e, "left"), s, stmt);
        execExpression(field(e, "right"), s, stmt);
        return;
    }
    if (k == "call_expression") {
        const std::string name = textOf(field(e, "function"));
        if (name == "__syncthreads") {
            syncThreads(s, e);
            return;
        }
        if (name == "printf" || name == "assert")
            return; // output only: it does not change any buffer
    }
    (void)eval(e, s);
}

void KernelExec::assign(TSNode targetNode, const std::string &op, TSNode valueNode, State &s, TSNode stmt)
{
    const TSNode target = stripParentheses(targetNode);
    auto combine = [&](const Expr &old, const Expr &rhs) -> Expr {
        if (op == "=") return rhs;
        if (op == "+=" || op == "++") return old + rhs;
        if (op == "-=" || op == "--") return old - rhs;
        if (op == "*=") return old * rhs;
        if (op == "/=") return old / rhs;
        if (op == "%=") return old % rhs;
        refuse(stmt, "compound assignment '" + op + "' is not supported");
    };
    auto rhsValue = [&]() -> Expr { return valueNode.id ? eval(valueNode, s) : Expr(1); };

    if (kind(target) == "identifier") {
        const std::string name = textOf(target);
        Local *local = lookup(s, name);
        if (!local)
            refuse(stmt, "assignment to '" + name + "', which is not a local variable of the kernel");
        if (local->kind == LocalKind::Pointer && local->globalScalar) {
            const PointerValue p = local->pointer;
            const Expr old = op == "=" ? Expr() : readBuffer(p, Expr(0), s, target);
            writeBuffer(p, Expr(0), combine(old, rhsValue()), s, stmt, name);
            return;
        }
        if (local->kind == LocalKind::Pointer) {
            if (op == "=") {
                local->pointer = evalPointer(valueNode, s);
            } else if (op == "+=" || op == "-=" || op == "++" || op == "--") {
                const Expr delta = rhsValue();
                local->pointer.offset = m_math.simplify(op == "+=" || op == "++" ? local->pointer.offset + delta
                                                                                 : local->pointer.offset - delta);
            } else {
                refuse(stmt, "unsupported pointer update");
            }
            return;
        }
        if (local->kind != LocalKind::Scalar)
            refuse(stmt, "assignment to array '" + name + "'");
        if (local->isConst)
            refuse(stmt, "assignment to constant '" + name + "'");
        const Expr rhs = rhsValue();
        const Expr old = op == "=" ? Expr() : (local->value.defined() ? local->value : ir::var("%uninit"));
        // eval() may push and pop scopes (macro arguments), so look the variable up again.
        Local *again = lookup(s, name);
        again->value = convertTo(combine(old, rhs), again->type);
        return;
    }
    if (kind(target) == "subscript_expression") {
        std::vector<TSNode> indexNodes;
        const TSNode base = subscriptBase(target, indexNodes);
        if (kind(base) == "identifier") {
            Local *local = lookup(s, textOf(base));
            if (local && local->kind == LocalKind::Shared) {
                if (op != "=" && !m_recordOnly)
                    refuse(stmt, "read-modify-write of shared memory: threads may race on the element",
                           "accumulate in a register and store once");
                const int array = local->shared;
                std::vector<Expr> index;
                for (TSNode i : indexNodes)
                    index.push_back(m_math.simplify(eval(i, s)));
                if (op != "=") // record-only: the element is read, then written
                    recordShared(array, index, false, s, stmt);
                for (const Expr &i : index)
                    checkIndex(i, stmt, "the shared-memory index");
                const SharedArray &a = m_sharedArrays[static_cast<std::size_t>(array)];
                recordShared(array, index, true, s, stmt);
                SharedStore store;
                store.array = array;
                store.index = index;
                store.value = convertTo(rhsValue(), a.dtype);
                store.guard = s.conditions;
                store.phase = s.phase;
                store.where = where(stmt);
                std::string key = std::to_string(array);
                for (const Expr &i : index)
                    key += "#" + i.toString();
                s.shared[key] = std::move(store);
                return;
            }
        }
        if (indexNodes.size() != 1)
            refuse(stmt, "multi-dimensional subscript of a pointer");
        const PointerValue p = evalPointer(base, s);
        if (p.buffer < 0)
            refuse(stmt, "store through a pointer that does not point to a buffer");
        const Expr index = eval(indexNodes.front(), s);
        const Expr old = op == "=" ? Expr() : readBuffer(p, index, s, target);
        const Expr value = combine(old, rhsValue());
        writeBuffer(p, index, value, s, stmt, kind(base) == "identifier" ? textOf(base) : std::string());
        return;
    }
    if (kind(target) == "pointer_expression" && operatorOf(target) == "*") {
        const PointerValue p = evalPointer(field(target, "argument"), s);
        const Expr old = op == "=" ? Expr() : readBuffer(p, Expr(0), s, target);
        writeBuffer(p, Expr(0), combine(old, rhsValue()), s, stmt, {});
        return;
    }
    refuse(stmt, "assignment to this kind of target is not supported");
}

KernelExec::Flow KernelExec::execIf(TSNode stmt, State &s)
{
    TSNode condNode = field(stmt, "condition");
    if (kind(condNode) == "condition_clause") {
        const TSNode v = field(condNode, "value");
        condNode = ts_node_is_null(v) ? ts_node_named_child(condNode, 0) : v;
    }
    const Expr cond = evalCondition(condNode, s);
    const TSNode thenNode = field(stmt, "consequence");
    TSNode elseNode = field(stmt, "alternative");
    if (kind(elseNode) == "else_clause")
        elseNode = ts_node_named_child(elseNode, 0);
    if (isBoolConst(cond, true))
        return exec(thenNode, s);
    if (isBoolConst(cond, false))
        return ts_node_is_null(elseNode) ? Flow::Normal : exec(elseNode, s);
    m_effects.branches.push_back({cond, s.conditions, where(stmt), textOf(condNode)});

    State thenState = s;
    for (const Expr &c : conjuncts(cond))
        thenState.conditions.push_back(c);
    State elseState = s;
    const Expr negated = m_math.simplify(negateCondition(cond));
    for (const Expr &c : conjuncts(negated))
        elseState.conditions.push_back(c);
    const Flow thenFlow = exec(thenNode, thenState);
    const Flow elseFlow = ts_node_is_null(elseNode) ? Flow::Normal : exec(elseNode, elseState);
    if (thenFlow == Flow::Exit && elseFlow == Flow::Exit)
        return Flow::Exit;
    if (thenFlow == Flow::Exit) {
        s = std::move(elseState);
        return Flow::Normal;
    }
    if (elseFlow == Flow::Exit) {
        s = std::move(thenState);
        return Flow::Normal;
    }
    s = merge(s, {std::move(thenState), std::move(elseState)}, stmt);
    return Flow::Normal;
}

} // namespace stitch::frontend::cudalift
