// HostWalker: device allocations, copies, fills and the host's reads of device buffers.
#include "core/frontend/cudalift/HostWalker.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cctype>

namespace stitch::frontend::cudalift {

using ir::Expr;

void HostWalker::allocate(TSNode call, const std::vector<TSNode> &args, bool managed)
{
    if (args.size() < 2)
        return;
    TSNode target = stripCastsAndParens(args[0]);
    if (kind(target) == "pointer_expression" && operatorOf(target) == "&")
        target = stripCastsAndParens(field(target, "argument"));
    const std::string name(m_tree->text(target));
    HostValue *var = kind(target) == "identifier" ? lookup(name) : nullptr;
    if (!var || var->kind != HostValue::Kind::Pointer) {
        note(call, "allocation into '" + name + "' is not followed (not a local pointer variable)");
        return;
    }
    BufferInfo b;
    b.name = name;
    b.dtype = var->pointer.dtype;
    b.unmodelledType = var->pointer.unmodelledType;
    if (var->pointer.unsignedType)
        note(call, "'" + name + "' holds unsigned elements, lifted as " + ir::dtypeName(b.dtype) +
                       ": the same bits for +, - and *, but division, shifts and comparisons of values from 2^" +
                       (ir::dtypeSize(b.dtype) == 8 ? "63" : "31") + " up differ");
    b.allocation = m_tree->location(call);
    b.managed = managed;
    HostValue bytes = eval(args[1]);
    if (m_controlDepth > 0 || bytes.kind != HostValue::Kind::Int) {
        note(call, "the size of '" + name + "' is not known statically" +
                       (m_controlDepth == 0 && !bytes.why.empty() ? " (" + bytes.why + ")" : std::string()));
    } else {
        std::vector<Expr> factors;
        flattenProduct(bytes.value, *m_program.sizes, factors);
        const std::int64_t size = ir::dtypeSize(b.dtype);
        bool removed = false;
        for (auto it = factors.begin(); it != factors.end(); ++it) {
            const Expr f = m_math.simplify(*it);
            if (f.kind() == ir::ExprKind::IntConst && f.intValue() == size) {
                factors.erase(it);
                removed = true;
                break;
            }
        }
        for (Expr &f : factors)
            f = m_math.simplify(f);
        Expr elements = factors.empty() ? Expr(1) : factors.front();
        for (std::size_t i = 1; i < factors.size(); ++i)
            elements = elements * factors[i];
        elements = m_math.simplify(elements);
        if (!removed) {
            auto p = m_math.toPoly(elements);
            auto q = p ? p->dividedBy(IntPoly::constant(size)) : std::nullopt;
            if (q) {
                elements = m_math.toExpr(*q);
                factors = {elements};
            } else {
                note(call, "the byte count of '" + name + "' is not a multiple of sizeof(" + ir::cudaTypeName(b.dtype) + ")");
                elements = Expr();
            }
        }
        b.elements = elements;
        b.factors = factors;
    }
    var->pointer.buffer = static_cast<int>(m_out.buffers.size());
    var->pointer.offset = Expr(0);
    m_out.buffers.push_back(std::move(b));
}

int HostWalker::bufferOf(TSNode arg)
{
    HostValue v = eval(arg);
    return v.kind == HostValue::Kind::Pointer ? v.pointer.buffer : -1;
}

void HostWalker::copy(TSNode call, const std::vector<TSNode> &args)
{
    if (args.size() < 4)
        return;
    const std::string direction(m_tree->text(args[3]));
    const int dst = bufferOf(args[0]);
    const int src = bufferOf(args[1]);
    const SourceLocation at = m_tree->location(call);
    if (dst >= 0 && src >= 0)
        m_out.events.push_back({HostEvent::Kind::DeviceCopy, dst, src, -1, at});
    else if (dst >= 0)
        m_out.events.push_back({HostEvent::Kind::CopyIn, dst, -1, -1, at});
    else if (src >= 0)
        m_out.events.push_back({HostEvent::Kind::CopyOut, src, -1, -1, at});
    else
        note(call, "cudaMemcpy between pointers the lifter does not know (" + direction + ")");
}

void HostWalker::setMemory(TSNode call, const std::vector<TSNode> &args)
{
    if (args.size() < 3)
        return;
    const int b = bufferOf(args[0]);
    if (b < 0)
        return;
    HostValue value = eval(args[1]);
    const Expr v = value.kind == HostValue::Kind::Int ? m_math.simplify(value.value) : Expr();
    // A zero fill is a graph op only over a buffer the graph can hold (known count, modelled type).
    const BufferInfo &info = m_out.buffers[static_cast<std::size_t>(b)];
    const bool zero = v.defined() && v.isIntConst(0) && info.elements.defined() && info.unmodelledType.empty();
    m_out.events.push_back({zero ? HostEvent::Kind::Zero : HostEvent::Kind::ExternalWrite, b, -1, -1,
                            m_tree->location(call)});
}

void HostWalker::noteHostReads(TSNode e)
{
    std::vector<TSNode> stack{e};
    while (!stack.empty()) {
        const TSNode n = stack.back();
        stack.pop_back();
        if (kind(n) == "subscript_expression") {
            const int b = bufferOf(field(n, "argument"));
            if (b >= 0)
                m_out.events.push_back({HostEvent::Kind::HostRead, b, -1, -1, m_tree->location(n)});
        }
        if (kind(n) == "call_expression")
            continue; // calls are walked (and their buffer arguments noted) on their own
        for (TSNode c : namedChildren(n))
            stack.push_back(c);
    }
}

} // namespace stitch::frontend::cudalift
