// HostWalker: values of host expressions (integer sizes, dim3, float constants, pointers).
#include "core/frontend/cudalift/HostWalker.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>

namespace stitch::frontend::cudalift {

using ir::Expr;

Expr HostWalker::constantAsFloat(const HostValue &v, ir::DType t)
{
    const Expr e = m_math.simplify(v.value);
    if (e.kind() == ir::ExprKind::IntConst || e.kind() == ir::ExprKind::FloatConst)
        return convertTo(e, t);
    return Expr();
}

HostValue HostWalker::integerLocal(const std::string &name, const HostValue &init, TSNode value, bool isConst)
{
    (void)isConst;
    if (init.kind == HostValue::Kind::Int) {
        const Expr simplified = m_math.simplify(init.value);
        // A host integer set to a constant is a size of the program: keep it symbolic.
        if (m_controlDepth == 0 && simplified.kind() == ir::ExprKind::IntConst && simplified.intValue() >= 0) {
            std::string sizeName = name;
            for (int n = 2; m_program.sizes->find(sizeName) && m_program.sizes->find(sizeName)->value
                                                              != simplified.intValue(); ++n)
                sizeName = name + "_" + std::to_string(n);
            SizeDefinition def{sizeName, simplified.intValue(), m_tree->location(value),
                               SourceRange{m_tree->location(value), m_tree->endLocation(value),
                                           ts_node_start_byte(value), ts_node_end_byte(value)},
                               false};
            m_math.setSizeLowerBound(sizeName, std::min<std::int64_t>(simplified.intValue(), 1));
            return HostValue::ofInt(m_program.sizes->define(def));
        }
        if (m_controlDepth == 0 && isSizeExpression(init.value))
            return HostValue::ofInt(m_program.sizes->defineDerived(name, init.value, false));
        return init;
    }
    if (init.kind == HostValue::Kind::Float)
        return HostValue::unknown("a floating-point value assigned to an integer");
    if (m_controlDepth == 0 && !ts_node_is_null(value)) {
        note(value, "size '" + name + "' is computed at run time (" + fragment(m_tree->text(value))
                        + "); bind it when running the graph");
        return HostValue::ofInt(ir::sizeVar(name));
    }
    return init;
}

HostValue HostWalker::evalDim3Init(TSNode value)
{
    if (ts_node_is_null(value))
        return dim3Of({});
    if (kind(value) == "argument_list" || kind(value) == "initializer_list") {
        std::vector<HostValue> parts;
        for (TSNode a : namedChildren(value))
            parts.push_back(eval(a));
        return dim3Of(parts);
    }
    return eval(value);
}

HostValue HostWalker::dim3Of(const std::vector<HostValue> &parts)
{
    HostValue v;
    v.kind = HostValue::Kind::Dim3;
    for (std::size_t i = 0; i < parts.size() && i < 3; ++i) {
        if (parts[i].kind != HostValue::Kind::Int)
            return HostValue::unknown("a dim3 component is not a known integer");
        v.dims[i] = parts[i].value;
    }
    return v;
}

HostValue HostWalker::evalNamed(const NamedConstant &c, const std::vector<HostValue> &args)
{
    if (ts_node_is_null(c.value) || m_macroDepth > 32)
        return HostValue::unknown("macro '" + c.name + "' is not an expression");
    const SyntaxTree *saved = m_tree;
    m_tree = c.tree;
    ++m_macroDepth;
    m_scopes.emplace_back();
    for (std::size_t i = 0; i < args.size() && i < c.parameters.size(); ++i)
        m_scopes.back()[c.parameters[i]] = args[i];
    HostValue v = eval(c.value);
    m_scopes.pop_back();
    --m_macroDepth;
    m_tree = saved;
    if (!c.functionLike && v.kind == HostValue::Kind::Int) {
        const Expr simplified = m_math.simplify(v.value);
        if (simplified.kind() == ir::ExprKind::IntConst && simplified.intValue() >= 0) {
            SizeDefinition def{c.name, simplified.intValue(), c.location, c.valueRange, true};
            m_math.setSizeLowerBound(c.name, std::min<std::int64_t>(simplified.intValue(), 1));
            return HostValue::ofInt(m_program.sizes->define(def));
        }
        if (isSizeExpression(v.value))
            return HostValue::ofInt(m_program.sizes->defineDerived(c.name, v.value, true));
    }
    return v;
}

bool HostWalker::isSizeExpression(const Expr &e)
{
    return ir::isInteger(e.dtype()) && !ir::collectSizeVars(e).empty() && ir::collectIterVars(e).empty()
        && !readsAny(e, [](const ir::TensorRef &) { return true; });
}

HostValue HostWalker::evalName(const std::string &name)
{
    if (HostValue *v = lookup(name))
        return *v;
    if (const NamedConstant *c = m_program.macros->find(name); c && !c->functionLike)
        return evalNamed(*c, {});
    if (auto n = parseNumber(name); n && !n->isFloat)
        return HostValue::ofInt(ir::intConst(n->intValue, n->dtype));
    return HostValue::unknown("'" + name + "' is not known");
}

HostValue HostWalker::eval(TSNode e)
{
    if (++m_evalDepth > 400) {
        --m_evalDepth;
        return HostValue::unknown("an expression nested too deeply");
    }
    HostValue v = evalNode(e);
    --m_evalDepth;
    return v;
}

HostValue HostWalker::evalNode(TSNode e)
{
    const auto k = kind(e);
    if (k == "number_literal") {
        auto n = parseNumber(m_tree->text(e));
        if (!n)
            return HostValue::unknown("unreadable number");
        return n->isFloat ? HostValue::ofFloat(ir::floatConst(n->floatValue, n->dtype))
                          : HostValue::ofInt(ir::intConst(n->intValue, n->dtype));
    }
    if (k == "parenthesized_expression" && ts_node_named_child_count(e) == 1)
        return eval(ts_node_named_child(e, 0));
    if (k == "identifier") {
        const std::string name(m_tree->text(e));
        if (HostValue *v = lookup(name))
            return *v;
        if (const NamedConstant *c = m_program.macros->find(name); c && !c->functionLike)
            return evalNamed(*c, {});
        if (name == "NULL") {
            HostValue p;
            p.kind = HostValue::Kind::Pointer;
            p.pointer.buffer = -1;
            return p;
        }
        return HostValue::unknown("'" + name + "' is not known");
    }
    if (k == "nullptr") {
        HostValue p;
        p.kind = HostValue::Kind::Pointer;
        p.pointer.buffer = -1;
        return p;
    }
    if (k == "sizeof_expression") {
        TSNode t = field(e, "type");
        // sizeof(__half): the grammar does not know __half is a type and reads an expression.
        for (t = ts_node_is_null(t) ? field(e, "value") : t; kind(t) == "parenthesized_expression";)
            t = ts_node_named_child(t, 0);
        const std::string_view typeText = ts_node_is_null(t) ? std::string_view() : m_tree->text(t);
        if (auto type = scalarTypeFromText(typeText))
            return HostValue::ofInt(ir::intConst(ir::dtypeSize(*type)));
        if (lookup(std::string(typeText)) == nullptr && !typeText.empty())
            return HostValue::unknown("sizeof(" + fragment(typeText) + "): not an element type the graph expresses");
        return HostValue::unknown("sizeof of an unknown type");
    }
    if (k == "cast_expression") {
        const std::string typeText(m_tree->text(field(e, "type")));
        HostValue v = eval(field(e, "value"));
        if (typeText.find('*') != std::string::npos)
            return v;
        auto t = scalarTypeFromText(typeText);
        if (t && ir::isInteger(*t) && v.kind == HostValue::Kind::Int)
            return v;
        if (t && ir::isFloat(*t) && (v.kind == HostValue::Kind::Int || v.kind == HostValue::Kind::Float)) {
            const Expr f = constantAsFloat(v, *t);
            return f.defined() ? HostValue::ofFloat(f) : HostValue::unknown("a run-time floating-point value");
        }
        return HostValue::unknown("cast to '" + typeText + "'");
    }
    if (k == "unary_expression") {
        HostValue v = eval(field(e, "argument"));
        if (operatorOf(e) == "-" && (v.kind == HostValue::Kind::Int || v.kind == HostValue::Kind::Float))
            v.value = m_math.simplify(ir::neg(v.value));
        else if (operatorOf(e) != "+")
            return HostValue::unknown("unary operator");
        return v;
    }
    if (k == "binary_expression")
        return evalBinary(e);
    if (k == "field_expression") {
        HostValue base = eval(field(e, "argument"));
        const std::string member(m_tree->text(field(e, "field")));
        const int d = member == "x" ? 0 : member == "y" ? 1 : member == "z" ? 2 : -1;
        if (base.kind == HostValue::Kind::Dim3 && d >= 0)
            return HostValue::ofInt(base.dims[static_cast<std::size_t>(d)]);
        if (base.kind != HostValue::Kind::Dim3 && base.kind != HostValue::Kind::Pointer) {
            if (auto v = memberValue(e))
                return *v;
        }
        return HostValue::unknown("member '" + member + "'");
    }
    if (k == "subscript_expression") {
        // An element of a local integer array with a constant index (`dims[0]`), as declared.
        const TSNode base = field(e, "argument");
        const auto indices = namedChildren(field(e, "indices"));
        if (kind(base) == "identifier" && indices.size() == 1) {
            const HostValue i = eval(indices[0]);
            const Expr iv = i.kind == HostValue::Kind::Int ? m_math.simplify(i.value) : Expr();
            if (iv.defined() && iv.kind() == ir::ExprKind::IntConst) {
                if (HostValue *v = lookup(std::string(m_tree->text(base)) + "[" + std::to_string(iv.intValue()) + "]"))
                    return *v;
            }
        }
        return HostValue::unknown("an array element");
    }
    if (k == "conditional_expression") {
        HostValue c = eval(field(e, "condition"));
        const Expr cv = c.kind == HostValue::Kind::Int ? m_math.simplify(c.value) : Expr();
        if (cv.defined() && cv.kind() == ir::ExprKind::IntConst)
            return eval(field(e, cv.intValue() != 0 ? "consequence" : "alternative"));
        return HostValue::unknown("a run-time choice");
    }
    if (k == "call_expression")
        return handleCall(e);
    if (k == "assignment_expression" || k == "update_expression") {
        walkExpression(e);
        return HostValue::unknown("assignment");
    }
    return HostValue::unknown("expression of kind " + std::string(k));
}

HostValue HostWalker::evalBinary(TSNode e)
{
    const std::string op(operatorOf(e));
    HostValue a = eval(field(e, "left"));
    HostValue b = eval(field(e, "right"));
    using K = HostValue::Kind;
    // What made an operand unknown says more than "a run-time value" (sizeof of an unmodelled type).
    if (a.kind == K::Unknown && !a.why.empty() && a.why.starts_with("sizeof("))
        return a;
    if (b.kind == K::Unknown && !b.why.empty() && b.why.starts_with("sizeof("))
        return b;
    if (a.kind == K::Pointer && b.kind == K::Int && (op == "+" || op == "-")) {
        a.pointer.offset = m_math.simplify(op == "+" ? a.pointer.offset + b.value : a.pointer.offset - b.value);
        return a;
    }
    if (a.kind == K::Int && b.kind == K::Int) {
        if (op == "+") return HostValue::ofInt(a.value + b.value);
        if (op == "-") return HostValue::ofInt(a.value - b.value);
        if (op == "*") return HostValue::ofInt(a.value * b.value);
        if (op == "/") return HostValue::ofInt(a.value / b.value);
        if (op == "%") return HostValue::ofInt(a.value % b.value);
        const Expr sb = m_math.simplify(b.value);
        if ((op == "<<" || op == ">>") && sb.kind() == ir::ExprKind::IntConst && sb.intValue() >= 0
            && sb.intValue() < 62) {
            const Expr power = ir::intConst(std::int64_t{1} << sb.intValue(), ir::DType::I64);
            return HostValue::ofInt(m_math.simplify(op == "<<" ? a.value * power : a.value / power));
        }
        return HostValue::unknown("integer operator '" + op + "'");
    }
    if ((a.kind == K::Int || a.kind == K::Float) && (b.kind == K::Int || b.kind == K::Float)) {
        const Expr x = m_math.simplify(a.value), y = m_math.simplify(b.value);
        if (x.isConst() && y.isConst()) {
            const double fx = x.kind() == ir::ExprKind::IntConst ? static_cast<double>(x.intValue()) : x.floatValue();
            const double fy = y.kind() == ir::ExprKind::IntConst ? static_cast<double>(y.intValue()) : y.floatValue();
            const ir::DType t = ir::promoteTypes(x.dtype(), y.dtype());
            if (op == "+") return HostValue::ofFloat(ir::floatConst(fx + fy, t));
            if (op == "-") return HostValue::ofFloat(ir::floatConst(fx - fy, t));
            if (op == "*") return HostValue::ofFloat(ir::floatConst(fx * fy, t));
            if (op == "/") return HostValue::ofFloat(ir::floatConst(fx / fy, t));
        }
    }
    return HostValue::unknown("a run-time value");
}

} // namespace stitch::frontend::cudalift
