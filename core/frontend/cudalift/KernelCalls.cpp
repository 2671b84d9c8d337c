// KernelExec: calls in device code: CUDA math built-ins, function-like macros, inlined
// __device__ functions, and the calls that block lifting (atomics, warp intrinsics, fences).
#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/KernelExec.h"

#include <algorithm>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

constexpr int kMaxMacroDepth = 32;
constexpr std::size_t kMaxCallDepth = 16;

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

} // namespace

std::optional<Expr> KernelExec::evalMathCall(const std::string &name, const std::vector<Expr> &args, TSNode call)
{
    struct UnaryFn {
        const char *names[4];
        ir::UnaryOp op;
    };
    static const UnaryFn kUnary[] = {
        {{"expf", "exp", "__expf", nullptr}, ir::UnaryOp::Exp},
        {{"logf", "log", "__logf", nullptr}, ir::UnaryOp::Log},
        {{"sqrtf", "sqrt", "__fsqrt_rn", nullptr}, ir::UnaryOp::Sqrt},
        {{"rsqrtf", "rsqrt", "__frsqrt_rn", nullptr}, ir::UnaryOp::Rsqrt},
        {{"tanhf", "tanh", nullptr, nullptr}, ir::UnaryOp::Tanh},
        {{"fabsf", "fabs", "abs", nullptr}, ir::UnaryOp::Abs},
        {{"erff", "erf", nullptr, nullptr}, ir::UnaryOp::Erf},
        {{"floorf", "floor", nullptr, nullptr}, ir::UnaryOp::Floor},
        {{"ceilf", "ceil", nullptr, nullptr}, ir::UnaryOp::Ceil},
        {{"sinf", "sin", "__sinf", nullptr}, ir::UnaryOp::Sin},
        {{"cosf", "cos", "__cosf", nullptr}, ir::UnaryOp::Cos},
    };
    auto arity = [&](std::size_t n) {
        if (args.size() != n)
            refuse(call, "'" + name + "' expects " + std::to_string(n) + " arguments");
    };
    for (const UnaryFn &fn : kUnary) {
        for (const char *n : fn.names) {
            if (n && name == n) {
                arity(1);
                return ir::unary(fn.op, args[0]);
            }
        }
    }
    if (name == "fmaxf" || name == "fmax" || name == "max" || name == "fminf" || name == "fmin" || name == "min") {
        arity(2);
        const ir::DType t = ir::promoteTypes(args[0].dtype(), args[1].dtype());
        const Expr a = convertTo(args[0], t), b = convertTo(args[1], t);
        return name.find("max") != std::string::npos ? ir::max(a, b) : ir::min(a, b);
    }
    if (name == "powf" || name == "pow" || name == "__powf") {
        arity(2);
        return ir::pow(args[0], args[1]);
    }
    if (name == "__fdividef" || name == "fdividef" || name == "__fdiv_rn") {
        arity(2);
        return args[0] / args[1];
    }
    if (name == "fmaf" || name == "fma" || name == "__fmaf_rn") {
        arity(3);
        return args[0] * args[1] + args[2];
    }
    if (name == "exp2f" || name == "exp2") {
        arity(1);
        return ir::pow(ir::floatConst(2.0, ir::isFloat(args[0].dtype()) ? args[0].dtype() : ir::DType::F32), args[0]);
    }
    // Half and bfloat16 conversions and arithmetic (cuda_fp16.h, cuda_bf16.h).
    if (name == "__float2half" || name == "__float2half_rn" || name == "__double2half") {
        arity(1);
        return ir::cast(ir::DType::F16, args[0]);
    }
    if (name == "__float2bfloat16" || name == "__float2bfloat16_rn") {
        arity(1);
        return ir::cast(ir::DType::BF16, args[0]);
    }
    if (name == "__half2float" || name == "__bfloat162float") {
        arity(1);
        return ir::cast(ir::DType::F32, args[0]);
    }
    if (name == "__hadd" || name == "__hsub" || name == "__hmul" || name == "__hdiv") {
        arity(2);
        return name == "__hadd" ? args[0] + args[1] : name == "__hsub" ? args[0] - args[1]
             : name == "__hmul" ? args[0] * args[1] : args[0] / args[1];
    }
    if (name == "__hfma") {
        arity(3);
        return args[0] * args[1] + args[2];
    }
    if (name == "__int2float_rn" || name == "__uint2float_rn") {
        arity(1);
        return ir::cast(ir::DType::F32, args[0]);
    }
    if (name == "__float2int_rz") {
        arity(1);
        return ir::cast(ir::DType::I32, args[0]);
    }
    return std::nullopt;
}

Expr KernelExec::evalCall(TSNode e, State &s)
{
    const TSNode fn = field(e, "function");
    const TSNode argList = field(e, "arguments");
    for (TSNode child : namedChildren(e)) {
        if (kind(child) == "kernel_call_syntax")
            refuse(e, "a kernel launched from device code (dynamic parallelism)",
                   "launch the child kernel from the host instead, or keep this kernel opaque");
    }
    std::string name;
    const TemplateInstances *templates = m_program.templates;
    const auto instance = templates ? templates->calls.find(ts_node_start_byte(e)) : std::map<std::uint32_t, std::string>::const_iterator{};
    if (templates && instance != templates->calls.end()) {
        name = instance->second; // a device function template, instantiated for this call
    } else if (templates && templates->refused.count(ts_node_start_byte(e))) {
        throw LiftRefusal(templates->refused.at(ts_node_start_byte(e)));
    } else if (kind(fn) == "identifier") {
        name = textOf(fn);
    } else if (kind(fn) == "template_function") {
        name = textOf(field(fn, "name"));
        if (name == "static_cast") {
            const auto targs = namedChildren(field(fn, "arguments"));
            const auto args = namedChildren(argList);
            auto t = targs.size() == 1 ? scalarTypeFromText(m_tree->text(targs[0])) : std::nullopt;
            if (!t || args.size() != 1)
                refuse(e, "unsupported static_cast");
            return convertTo(eval(args[0], s), *t);
        }
        refuse(e, "call of template function '" + name + "', which is not a __device__ template of this file",
               "define it as a __device__ template here or in an included file");
    } else if (kind(fn) == "primitive_type" || kind(fn) == "type_identifier") {
        // A functional cast, float(3) or T(3) in a template instance.
        const auto args = namedChildren(argList);
        const auto t = scalarTypeFromText(m_tree->text(fn));
        if (!t || args.size() != 1)
            refuse(e, "the conversion '" + textOf(fn) + "(...)' is not to a scalar type the lifter models");
        return convertTo(eval(args[0], s), *t);
    } else {
        refuse(e, "this call form is not supported");
    }

    if (startsWith(name, "atomic"))
        refuse(e, "'" + name + "' is an atomic update: the result depends on the order in which threads run, "
                      "which a tensor expression cannot express",
               "compute each output element in one thread (loop over the inputs that contribute to it), or keep "
               "the kernel opaque");
    static const char *const kWarp[] = {"__shfl", "__ballot", "__any", "__all", "__activemask", "__syncwarp",
                                         "__reduce_", "__match"};
    for (const char *w : kWarp) {
        if (startsWith(name, w))
            refuse(e, "'" + name + "' is a warp-level intrinsic: a thread's result depends on other threads' "
                          "registers",
                   "write the reduction as a loop over the inputs in one thread, or keep the kernel opaque");
    }
    if (startsWith(name, "__threadfence"))
        refuse(e, "a memory fence: the kernel communicates between blocks", "split it into separate kernels");
    if (name == "__syncthreads")
        refuse(e, "__syncthreads() inside an expression");
    if (name == "malloc" || name == "free" || name == "printf" || name == "assert")
        refuse(e, "'" + name + "' used as a value");

    if (const NamedConstant *macro = m_program.macros->find(name); macro && macro->functionLike) {
        const auto args = namedChildren(argList);
        if (args.size() != macro->parameters.size())
            refuse(e, "macro '" + name + "' expects " + std::to_string(macro->parameters.size()) + " arguments");
        if (ts_node_is_null(macro->value))
            refuse(e, "macro '" + name + "' (" + fragment(macro->text) + ") is not an expression");
        if (++m_macroDepth > kMaxMacroDepth)
            refuse(e, "macro expansion is too deep (recursive #define?)");
        // Arguments are evaluated here, at the use site; the body sees them by parameter name.
        std::map<std::string, Local> params;
        for (std::size_t i = 0; i < args.size(); ++i) {
            Local local;
            local.name = macro->parameters[i];
            if (isPointerExpression(args[i], s)) {
                local.kind = LocalKind::Pointer;
                local.pointer = evalPointer(args[i], s);
            } else {
                local.value = eval(args[i], s);
                local.type = local.value.dtype();
                local.isConst = true;
            }
            params[local.name] = std::move(local);
        }
        const SyntaxTree *savedTree = m_tree;
        const auto savedSite = m_site;
        if (!m_site)
            m_site = where(e);
        m_tree = macro->tree;
        s.scopes.push_back(std::move(params));
        Expr value;
        try {
            value = eval(macro->value, s);
        } catch (...) {
            s.scopes.pop_back();
            m_tree = savedTree;
            m_site = savedSite;
            --m_macroDepth;
            throw;
        }
        s.scopes.pop_back();
        m_tree = savedTree;
        m_site = savedSite;
        --m_macroDepth;
        return value;
    }

    auto fnIt = m_program.functions.find(name);
    if (fnIt != m_program.functions.end()) {
        auto info = m_program.kernels.find(name);
        if (info == m_program.kernels.end() || info->second.qualifier != "__device__")
            refuse(e, "call of '" + name + "', which is not a __device__ function");
        return callFunction(name, e, s);
    }
    std::vector<Expr> args;
    for (TSNode a : namedChildren(argList))
        args.push_back(eval(a, s));
    if (auto math = evalMathCall(name, args, e))
        return *math;
    refuse(e, "call of unknown function '" + name + "'",
           "only CUDA math functions and __device__ functions defined in this file can be lifted");
}

Expr KernelExec::callFunction(const std::string &name, TSNode call, State &s)
{
    if (std::find(m_callStack.begin(), m_callStack.end(), name) != m_callStack.end())
        refuse(call, "'" + name + "' calls itself (recursion): the call depth depends on the data",
               "rewrite the recursion as a loop, or keep the kernel opaque");
    if (m_callStack.size() > kMaxCallDepth)
        refuse(call, "device functions are nested too deeply");
    const TSNode fn = m_program.functions.at(name);
    const KernelInfo &info = m_program.kernels.at(name);
    if (auto limit = m_program.file->grammarLimitRefusal(fn, "the kernel calling '" + name + "'")) {
        if (m_site)
            limit->location = *m_site; // inside a macro expansion, the expansion's site
        throw LiftRefusal(std::move(*limit));
    }
    const auto args = namedChildren(field(call, "arguments"));
    if (args.size() != info.parameters.size())
        refuse(call, "'" + name + "' expects " + std::to_string(info.parameters.size()) + " arguments");

    State fs;
    fs.scopes.emplace_back();
    for (std::size_t i = 0; i < args.size(); ++i) {
        const KernelParameter &param = info.parameters[i];
        Local local;
        local.name = param.name;
        auto type = scalarTypeFromText(param.type);
        if (!type)
            refuse(call, "parameter '" + param.name + "' of '" + name + "' has an unsupported type");
        if (param.type.find('&') != std::string::npos)
            refuse(call, "reference parameter '" + param.name + "' of '" + name + "'",
                   "return the value instead of writing through a reference");
        if (param.type.find('*') != std::string::npos) {
            local.kind = LocalKind::Pointer;
            local.pointer = evalPointer(args[i], s);
        } else {
            local.type = *type;
            local.value = convertTo(eval(args[i], s), *type);
        }
        fs.scopes.back()[local.name] = std::move(local);
    }
    const std::string returnText = textOf(field(fn, "type"));
    const auto returnType = scalarTypeFromText(returnText);
    Local ret;
    ret.name = "%ret";
    ret.type = returnType.value_or(ir::DType::I32);
    fs.scopes.back()["%ret"] = ret;
    fs.cells = std::move(s.cells);
    fs.shared = std::move(s.shared);
    fs.conditions = s.conditions;
    fs.phase = s.phase;
    fs.lastSharedReadPhase = s.lastSharedReadPhase;
    const State entry = fs;

    ExitSink returns;
    ExitSink *savedReturn = m_returnSink;
    ExitSink *savedContinue = m_continueSink;
    const int savedLoopDepth = m_loopDepth;
    const std::string savedContext = m_inlineContext;
    m_returnSink = &returns;
    m_continueSink = nullptr;
    m_loopDepth = 0;
    m_inlineContext += "@" + std::to_string(ts_node_start_byte(call));
    m_callStack.push_back(name);
    auto restore = [&] {
        m_returnSink = savedReturn;
        m_continueSink = savedContinue;
        m_loopDepth = savedLoopDepth;
        m_inlineContext = savedContext;
        m_callStack.pop_back();
    };
    State merged;
    try {
        const Flow flow = execBlock(field(fn, "body"), fs, true);
        std::vector<State> ends = std::move(returns.states);
        if (flow == Flow::Normal)
            ends.push_back(std::move(fs));
        merged = merge(entry, std::move(ends), call);
    } catch (...) {
        restore();
        throw;
    }
    restore();
    s.cells = std::move(merged.cells);
    s.shared = std::move(merged.shared);
    s.phase = merged.phase;
    s.lastSharedReadPhase = merged.lastSharedReadPhase;
    const Expr value = merged.scopes.front().at("%ret").value;
    if (!returnType)
        return ir::intConst(0);
    return value.defined() ? value : ir::var("%uninit");
}

} // namespace stitch::frontend::cudalift
