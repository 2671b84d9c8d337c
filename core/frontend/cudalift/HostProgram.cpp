// Host walk: follows main's straight-line code, evaluating sizes, allocations and launches.
// Locals and members: HostLocals.cpp; allocations and copies: HostMemory.cpp; values: HostExpressions.cpp.
#include "core/frontend/cudalift/HostWalker.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <set>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

constexpr std::size_t kMaxHostCallDepth = 8;


bool startsWith(std::string_view s, std::string_view p)
{
    return s.substr(0, p.size()) == p;
}

bool isIgnoredCall(const std::string &name)
{
    static const std::set<std::string> kIgnored = {
        "cudaFree", "cudaDeviceSynchronize", "cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceReset",
        "cudaSetDevice", "cudaGetDevice", "cudaGetDeviceProperties", "cudaGetDeviceCount", "cudaGetErrorString",
        "cudaEventCreate", "cudaEventRecord", "cudaEventSynchronize", "cudaEventElapsedTime", "cudaEventDestroy",
        "cudaFreeHost", "printf", "fprintf", "puts", "putchar", "free", "malloc", "calloc", "srand", "rand", "exit",
        "time", "clock", "fflush", "abort", "assert"};
    return kIgnored.count(name) > 0;
}

} // namespace

TSNode stripCastsAndParens(TSNode e)
{
    for (;;) {
        if (kind(e) == "parenthesized_expression" && ts_node_named_child_count(e) == 1)
            e = ts_node_named_child(e, 0);
        else if (kind(e) == "cast_expression")
            e = field(e, "value");
        else
            return e;
    }
}

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

/// The factors of a byte count as the program multiplies them; a named size defined as a product
/// (size_t bytes = M * K * sizeof(float)) contributes its own factors.
void flattenProduct(const Expr &e, const SizeTable &sizes, std::vector<Expr> &out, int depth)
{
    if (e.kind() == ir::ExprKind::Binary && e.binaryOp() == ir::BinaryOp::Mul) {
        flattenProduct(e.operand(0), sizes, out, depth);
        flattenProduct(e.operand(1), sizes, out, depth);
        return;
    }
    if (e.kind() == ir::ExprKind::Cast && ir::isInteger(e.dtype())) {
        flattenProduct(e.operand(0), sizes, out, depth);
        return;
    }
    if (e.kind() == ir::ExprKind::SizeVar && depth < 8) {
        auto it = sizes.derived().find(e.name());
        if (it != sizes.derived().end() && it->second.kind() == ir::ExprKind::Binary
            && (it->second.binaryOp() == ir::BinaryOp::Mul)) {
            flattenProduct(it->second, sizes, out, depth + 1);
            return;
        }
    }
    out.push_back(e);
}

HostWalker::HostWalker(ProgramContext &program) : m_program(program), m_tree(program.file)
{
    for (const SizeDefinition &d : program.sizes->definitions())
        m_math.setSizeLowerBound(d.name, std::min<std::int64_t>(d.value, 1));
    m_math.setDerived(&program.sizes->derived());
}

HostProgram HostWalker::run()
{
    declareDeviceGlobals();
    auto mainIt = m_program.functions.find("main");
    if (mainIt != m_program.functions.end()) {
        walkFunction("main", mainIt->second, {});
        return std::move(m_out);
    }
    // Without main, start from host functions that launch kernels and that nothing calls.
    std::set<std::string> called;
    for (const auto &[name, fn] : m_program.functions) {
        if (m_program.kernels.count(name))
            continue;
        const std::string_view body = m_tree->text(field(fn, "body"));
        for (const auto &[other, unused] : m_program.functions) {
            if (other != name && body.find(other + "(") != std::string_view::npos)
                called.insert(other);
        }
    }
    for (const auto &[name, fn] : m_program.functions) {
        if (m_program.kernels.count(name) || called.count(name))
            continue;
        if (m_tree->text(field(fn, "body")).find("<<<") == std::string_view::npos)
            continue;
        walkFunction(name, fn, entryParameters(fn));
    }
    return std::move(m_out);
}

std::vector<std::pair<std::string, HostValue>> HostWalker::entryParameters(TSNode fn)
{
    // An entry point's integers are sizes nobody set (symbols without values); its pointers point
    // to memory this file does not allocate.
    TSNode decl = field(fn, "declarator");
    while (!ts_node_is_null(decl) && kind(decl) != "function_declarator")
        decl = field(decl, "declarator");
    std::vector<std::pair<std::string, HostValue>> params;
    for (TSNode p : namedChildren(field(decl, "parameters"))) {
        if (kind(p) != "parameter_declaration")
            continue;
        const TSNode declarator = field(p, "declarator");
        const std::string name(m_tree->text(innermostIdentifier(declarator)));
        const auto type = scalarTypeFromText(m_tree->text(field(p, "type")));
        HostValue v = HostValue::unknown("a parameter of the entry function");
        if (kind(declarator) == "pointer_declarator") {
            v.kind = HostValue::Kind::Pointer;
            v.pointer.buffer = -1;
            v.pointer.dtype = type.value_or(ir::DType::F32);
        } else if (type && ir::isInteger(*type)) {
            v = HostValue::ofInt(ir::sizeVar(name));
        }
        params.emplace_back(name, v);
    }
    return params;
}

void HostWalker::note(TSNode at, std::string message)
{
    m_out.notes.push_back({Severity::Note, m_tree->location(at), std::move(message)});
}

void HostWalker::declareDeviceGlobals()
{
    // `__constant__ float mask[MASK_WIDTH];` is device memory the program fills by name.
    for (TSNode decl : namedChildren(m_tree->root())) {
        if (kind(decl) != "declaration" || !(hasToken(decl, "__constant__") || hasToken(decl, "__device__")))
            continue;
        const auto type = scalarTypeFromText(m_tree->text(field(decl, "type")));
        for (TSNode d : namedChildren(decl)) {
            TSNode target = kind(d) == "init_declarator" ? field(d, "declarator") : d;
            if (kind(target) != "array_declarator" && kind(target) != "identifier")
                continue;
            BufferInfo b;
            b.name = std::string(m_tree->text(innermostIdentifier(target)));
            b.dtype = type.value_or(ir::DType::F32);
            b.allocation = m_tree->location(decl);
            bool known = type.has_value();
            std::vector<Expr> dims;
            for (TSNode a = target; kind(a) == "array_declarator"; a = field(a, "declarator")) {
                HostValue size = eval(field(a, "size"));
                known = known && size.kind == HostValue::Kind::Int;
                dims.insert(dims.begin(), known ? m_math.simplify(size.value) : Expr());
            }
            if (!known) {
                note(decl, "device variable '" + b.name + "' has a size or type the lifter does not know");
                continue;
            }
            Expr elements = Expr(1);
            for (const Expr &dim : dims)
                elements = elements.isIntConst(1) ? dim : elements * dim;
            b.elements = m_math.simplify(elements);
            b.factors = dims.empty() ? std::vector<Expr>{Expr(1)} : dims;
            HostValue v;
            v.kind = HostValue::Kind::Pointer;
            v.pointer.buffer = static_cast<int>(m_out.buffers.size());
            v.pointer.dtype = b.dtype;
            m_globals[b.name] = v;
            m_out.globals[b.name] = v.pointer.buffer;
            m_out.buffers.push_back(std::move(b));
        }
    }
}

void HostWalker::walkFunction(const std::string &name, TSNode fn, std::vector<std::pair<std::string, HostValue>> params)
{
    if (m_callStack.size() >= kMaxHostCallDepth
        || std::find(m_callStack.begin(), m_callStack.end(), name) != m_callStack.end())
        return;
    std::vector<Scope> saved = std::move(m_scopes);
    m_scopes.assign(1, {});
    for (auto &[pname, value] : params)
        m_scopes.back()[pname] = std::move(value);
    m_callStack.push_back(name);
    walkBlock(field(fn, "body"));
    m_callStack.pop_back();
    m_scopes = std::move(saved);
}

void HostWalker::walkBlock(TSNode block)
{
    m_scopes.emplace_back();
    for (TSNode s : namedChildren(block)) {
        if (kind(s) == "return_statement" && m_controlDepth == 0) {
            walkExpressions(s);
            break;
        }
        try {
            walkStatement(s);
        } catch (const std::exception &e) {
            // Index arithmetic overflow and similar limits: skip the statement, say so.
            note(s, std::string("this statement was not followed: ") + e.what());
        }
    }
    m_scopes.pop_back();
}

void HostWalker::walkStatement(TSNode s)
{
    const auto k = kind(s);
    const bool container = k == "compound_statement" || k == "for_statement" || k == "while_statement"
                           || k == "do_statement" || k == "if_statement" || k == "switch_statement"
                           || k == "for_range_loop" || k == "else_clause" || k == "case_statement";
    if (k == "ERROR" || (ts_node_has_error(s) && !container)) {
        // The grammar's limit, not the user's error; but what the statement does is unknown.
        if (!m_out.unreadable) {
            m_out.unreadable = m_tree->grammarLimitRefusal(s, "every kernel launched after it");
            if (m_out.unreadable) // located where the grammar gave up, shown as the whole statement
                m_out.unreadable->construct = fragment(m_tree->text(s));
        }
        return;
    }
    if (k == "compound_statement") {
        walkBlock(s);
    } else if (k == "declaration") {
        declare(s);
    } else if (k == "expression_statement") {
        for (TSNode e : namedChildren(s))
            walkExpression(e);
    } else if (k == "for_statement" || k == "while_statement" || k == "do_statement" || k == "if_statement"
               || k == "switch_statement" || k == "for_range_loop") {
        // Runs an unknown number of times: launches inside are refused, memory effects kept.
        const bool loop = k != "if_statement" && k != "switch_statement";
        ++m_controlDepth;
        m_loopDepth += loop ? 1 : 0;
        m_scopes.emplace_back();
        for (TSNode child : namedChildren(s))
            walkStatement(child);
        m_scopes.pop_back();
        m_loopDepth -= loop ? 1 : 0;
        --m_controlDepth;
    } else if (k == "condition_clause" || k == "parenthesized_expression" || k == "binary_expression"
               || k == "assignment_expression" || k == "update_expression" || k == "call_expression") {
        walkExpression(s);
    } else if (k == "else_clause" || k == "case_statement") {
        for (TSNode child : namedChildren(s))
            walkStatement(child);
    } else if (k == "return_statement") {
        walkExpressions(s);
    }
}

void HostWalker::walkExpressions(TSNode n)
{
    for (TSNode e : namedChildren(n))
        walkExpression(e);
}

HostValue HostWalker::handleCall(TSNode call)
{
    const TSNode fn = field(call, "function");
    const auto args = namedChildren(field(call, "arguments"));
    for (TSNode child : namedChildren(call)) {
        if (kind(child) == "kernel_call_syntax") {
            recordLaunch(call, child);
            return HostValue::unknown("a launch");
        }
    }
    const std::string name(m_tree->text(fn));
    if (name == "dim3") {
        std::vector<HostValue> parts;
        for (TSNode a : args)
            parts.push_back(eval(a));
        return dim3Of(parts);
    }
    if (name == "cudaMalloc" || name == "cudaMallocManaged") {
        allocate(call, args, name == "cudaMallocManaged");
        return HostValue::unknown("status");
    }
    if (name == "cudaMemcpy") {
        copy(call, args);
        return HostValue::unknown("status");
    }
    if (name == "cudaMemcpyToSymbol" || name == "cudaMemcpyFromSymbol") {
        // The symbol is the destination of ToSymbol and the source of FromSymbol.
        const int b = args.size() >= 2 ? bufferOf(args[name == "cudaMemcpyToSymbol" ? 0 : 1]) : -1;
        if (b >= 0)
            m_out.events.push_back({name == "cudaMemcpyToSymbol" ? HostEvent::Kind::CopyIn : HostEvent::Kind::CopyOut,
                                    b, -1, -1, m_tree->location(call)});
        return HostValue::unknown("status");
    }
    if (name == "cudaMemset") {
        setMemory(call, args);
        return HostValue::unknown("status");
    }
    if ((name == "min" || name == "max" || name == "std::min" || name == "std::max") && args.size() == 2) {
        HostValue a = eval(args[0]), b = eval(args[1]);
        if (a.kind == HostValue::Kind::Int && b.kind == HostValue::Kind::Int)
            return HostValue::ofInt(m_math.simplify(name.find("min") != std::string::npos ? ir::min(a.value, b.value)
                                                                                        : ir::max(a.value, b.value)));
    }
    if (const NamedConstant *c = m_program.macros->find(name); c && c->functionLike && !ts_node_is_null(c->value)) {
        std::vector<HostValue> values;
        for (TSNode a : args)
            values.push_back(eval(a));
        return evalNamed(*c, values);
    }
    auto fnIt = m_program.functions.find(name);
    if (fnIt != m_program.functions.end() && !m_program.kernels.count(name)) {
        inlineCall(name, fnIt->second, args);
        return HostValue::unknown("result of '" + name + "'");
    }
    std::vector<int> buffers;
    for (TSNode a : args) {
        noteHostReads(a);
        HostValue v = eval(a); // also performs calls nested in the argument, once
        if (v.kind == HostValue::Kind::Pointer && v.pointer.buffer >= 0)
            buffers.push_back(v.pointer.buffer);
    }
    if (!isIgnoredCall(name) && !startsWith(name, "std::")) {
        for (int b : buffers) {
            // A function we cannot see may read and write the buffer.
            m_out.events.push_back({HostEvent::Kind::HostRead, b, -1, -1, m_tree->location(call)});
            m_out.events.push_back({HostEvent::Kind::ExternalWrite, b, -1, -1, m_tree->location(call)});
            note(call, "'" + name + "' receives buffer '" + m_out.buffers[static_cast<std::size_t>(b)].name
                           + "'; the lifter assumes it may read and overwrite it");
        }
    }
    return HostValue::unknown("result of '" + name + "'");
}

void HostWalker::inlineCall(const std::string &name, TSNode fn, const std::vector<TSNode> &args)
{
    TSNode decl = field(fn, "declarator");
    while (!ts_node_is_null(decl) && kind(decl) != "function_declarator")
        decl = field(decl, "declarator");
    std::vector<std::pair<std::string, HostValue>> params;
    std::size_t i = 0;
    for (TSNode p : namedChildren(field(decl, "parameters"))) {
        if (kind(p) != "parameter_declaration")
            continue;
        const std::string pname(m_tree->text(innermostIdentifier(field(p, "declarator"))));
        params.emplace_back(pname, i < args.size() ? eval(args[i]) : HostValue::unknown("missing argument"));
        ++i;
    }
    walkFunction(name, fn, std::move(params));
}


void HostWalker::walkCalls(TSNode e)
{
    if (kind(e) == "call_expression") {
        (void)handleCall(e);
        return;
    }
    for (TSNode c : namedChildren(e))
        walkCalls(c);
}

void HostWalker::recordLaunch(TSNode call, TSNode config)
{
    HostLaunch launch;
    launch.binding.index = static_cast<int>(m_out.launches.size());
    launch.binding.location = m_tree->location(call);
    const TSNode fn = field(call, "function");
    launch.binding.kernel =
        std::string(launchedKernelName(m_tree->text(kind(fn) == "template_function" ? field(fn, "name") : fn)));
    auto refuseLaunch = [&](TSNode at, std::string why, std::string advice) {
        if (!launch.refusal)
            launch.refusal = Refusal{m_tree->location(at), fragment(m_tree->text(at)), std::move(why), std::move(advice)};
    };
    // A template kernel runs as its instance at this call (Templates.h), or is refused saying why.
    bool instantiated = false;
    if (m_program.templates) {
        const std::uint32_t at = ts_node_start_byte(call);
        if (const auto it = m_program.templates->calls.find(at); it != m_program.templates->calls.end()) {
            launch.binding.kernel = it->second;
            instantiated = true;
        } else if (const auto r = m_program.templates->refused.find(at); r != m_program.templates->refused.end()) {
            launch.refusal = r->second;
        }
    }
    if (kind(fn) == "template_function" && !instantiated)
        refuseLaunch(call, "the kernel is a template the lifter cannot instantiate",
                     "define the template in this file (or an included one) with __global__");
    auto kernel = m_program.kernels.find(launch.binding.kernel);
    if (kernel == m_program.kernels.end() || kernel->second.qualifier != "__global__")
        refuseLaunch(call, "no __global__ function '" + launch.binding.kernel + "' is defined in this file", {});
    const auto parts = namedChildren(config);
    auto dims = [&](std::size_t i, std::array<Expr, 3> &out, std::string &text) {
        if (i >= parts.size())
            return;
        text = std::string(m_tree->text(parts[i]));
        HostValue v = eval(parts[i]);
        if (v.kind == HostValue::Kind::Int)
            v = dim3Of({v});
        if (v.kind != HostValue::Kind::Dim3) {
            refuseLaunch(parts[i], "the launch configuration '" + text + "' is not known statically (" + v.why + ")",
                         "compute grid and block sizes from constants and sizes");
            return;
        }
        for (std::size_t d = 0; d < 3; ++d)
            out[d] = m_math.simplify(v.dims[d]);
    };
    dims(0, launch.binding.grid, launch.gridText);
    dims(1, launch.binding.block, launch.blockText);
    if (parts.size() > 3) {
        const std::string stream(m_tree->text(parts[3]));
        if (stream != "0" && stream != "NULL" && stream != "nullptr" && stream != "cudaStreamDefault")
            refuseLaunch(parts[3], "the kernel runs on stream '" + stream + "' and may overlap other work",
                         "launch on the default stream, or keep the kernel opaque");
    }
    for (TSNode a : namedChildren(field(call, "arguments"))) {
        launch.argumentTexts.emplace_back(m_tree->text(a));
        HostValue v = eval(a);
        KernelArgument arg;
        arg.text = launch.argumentTexts.back();
        int buffer = -1;
        if (v.kind == HostValue::Kind::Pointer) {
            if (v.pointer.buffer < 0)
                refuseLaunch(a, "argument '" + arg.text + "' is not device memory allocated in this program",
                             "pass a pointer obtained from cudaMalloc");
            arg.kind = KernelArgument::Kind::Buffer;
            arg.pointer = v.pointer;
            buffer = v.pointer.buffer;
            if (buffer >= 0 && !m_out.buffers[static_cast<std::size_t>(buffer)].unmodelledType.empty())
                refuseLaunch(a, "buffer '" + m_out.buffers[static_cast<std::size_t>(buffer)].name + "' holds '" +
                                    m_out.buffers[static_cast<std::size_t>(buffer)].unmodelledType +
                                    "' elements, a type the graph does not express (it has float, double, __half, "
                                    "__nv_bfloat16, int, long long and bool)",
                             "keep the data in one of those types, or keep this kernel opaque");
            if (buffer >= 0 && !m_out.buffers[static_cast<std::size_t>(buffer)].elements.defined())
                refuseLaunch(a, "the size of buffer '" + m_out.buffers[static_cast<std::size_t>(buffer)].name
                                    + "' is not known statically",
                             "allocate it with a byte count computed from sizes and sizeof");
        } else if (v.kind == HostValue::Kind::Int || v.kind == HostValue::Kind::Float) {
            arg.scalar = m_math.simplify(v.value);
            if (!arg.scalar.defined())
                refuseLaunch(a, "the value of argument '" + arg.text + "' is computed at run time", {});
        } else {
            refuseLaunch(a, "the value of argument '" + arg.text + "' is not known (" + v.why + ")", {});
        }
        launch.bufferArguments.push_back(buffer);
        launch.binding.arguments.push_back(std::move(arg));
    }
    if (m_out.unreadable && !launch.refusal) {
        launch.refusal = *m_out.unreadable;
        launch.refusal->why += " (what that host code does to sizes and buffers is unknown)";
    }
    if (m_controlDepth > 0)
        refuseLaunch(call, "the kernel is launched inside a loop or branch of the host program, so how often it "
                           "runs is not known statically",
                     "unroll the host loop, or keep the kernel opaque");
    m_out.events.push_back({HostEvent::Kind::Launch, -1, -1, static_cast<int>(m_out.launches.size()),
                            launch.binding.location});
    m_out.launches.push_back(std::move(launch));
}


HostProgram walkHostProgram(ProgramContext &program)
{
    HostWalker walker(program);
    HostProgram host = walker.run();
    return host;
}

} // namespace stitch::frontend::cudalift
