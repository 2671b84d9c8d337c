// liftCudaProgram: parse, walk the host, evaluate each launch's kernel, assemble one graph.
// A file that launches nothing gets one inferred launch per kernel first (LoneKernels.h).
#include "core/frontend/cudalift/CudaLift.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/HostProgram.h"
#include "core/frontend/cudalift/KernelExec.h"
#include "core/frontend/cudalift/LoneKernels.h"
#include "core/frontend/cudalift/SyntaxTree.h"
#include "core/frontend/cudalift/ThreadSpace.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <regex>
#include <set>

namespace stitch::frontend {

using cudalift::LiftRefusal;
using cudalift::Refusal;
using ir::Expr;

namespace {

std::string graphNameOf(const std::string &fileName)
{
    std::string name = fileName.substr(fileName.find_last_of("/\\") + 1);
    if (auto dot = name.rfind('.'); dot != std::string::npos)
        name = name.substr(0, dot);
    return name.empty() ? "cuda_program" : name;
}

void collectFunctions(TSNode n, cudalift::ProgramContext &ctx, const cudalift::SyntaxTree &tree)
{
    for (TSNode child : cudalift::namedChildren(n)) {
        const auto k = cudalift::kind(child);
        if (k == "function_definition") {
            TSNode d = cudalift::field(child, "declarator");
            while (!ts_node_is_null(d) && cudalift::kind(d) != "function_declarator")
                d = cudalift::field(d, "declarator");
            if (!ts_node_is_null(d))
                ctx.functions[std::string(tree.text(cudalift::field(d, "declarator")))] = child;
        } else if (k == "preproc_ifdef" || k == "preproc_if" || k == "preproc_else" || k == "linkage_specification"
                   || k == "declaration_list" || k == "ERROR") {
            // tree-sitter often recovers whole functions inside an ERROR node: they are kept, and
            // each is checked for what the grammar could not read where it is used.
            collectFunctions(child, ctx, tree);
        }
    }
}

/// File-scope typedefs, alias declarations and object-like macros that name a type.
std::map<std::string, std::string> typeAliasesOf(const cudalift::SyntaxTree &tree, const cudalift::Preprocessor &macros)
{
    std::map<std::string, std::string> out;
    std::vector<TSNode> stack{tree.root()};
    while (!stack.empty()) {
        const TSNode n = stack.back();
        stack.pop_back();
        const auto k = cudalift::kind(n);
        if (k == "type_definition") {
            const std::string type(tree.text(cudalift::field(n, "type")));
            for (TSNode d : cudalift::namedChildren(n)) {
                if (cudalift::kind(d) == "type_identifier" && d.id != cudalift::field(n, "type").id)
                    out[std::string(tree.text(d))] = type;
            }
        } else if (k == "alias_declaration") {
            out[std::string(tree.text(cudalift::field(n, "name")))] = std::string(tree.text(cudalift::field(n, "type")));
        } else if (k == "translation_unit" || k == "preproc_if" || k == "preproc_ifdef" || k == "preproc_else"
                   || k == "preproc_elif" || k == "namespace_definition" || k == "declaration_list"
                   || k == "linkage_specification") {
            for (TSNode c : cudalift::namedChildren(n))
                stack.push_back(c);
        }
    }
    for (const auto &[name, c] : macros.constants()) {
        if (!c.functionLike && !out.count(name) && cudalift::scalarTypeFromText(c.text))
            out[name] = c.text;
    }
    return out;
}

/// Parameters an opaque kernel may write: stored through, atomically updated, or handed on.
std::set<std::string> writtenParameters(TSNode kernel, const cudalift::SyntaxTree &tree, const KernelInfo &info)
{
    std::set<std::string> params, written;
    for (const KernelParameter &p : info.parameters) {
        // const float * (or float const *): the kernel cannot write through it.
        const std::size_t star = p.type.find('*');
        const bool pointsToConst = star != std::string::npos &&
                                   std::regex_search(p.type.substr(0, star), std::regex("\\bconst\\b"));
        if (star != std::string::npos && !pointsToConst)
            params.insert(p.name);
    }
    auto baseName = [&](TSNode e) {
        while (cudalift::kind(e) == "subscript_expression" || cudalift::kind(e) == "parenthesized_expression"
               || cudalift::kind(e) == "pointer_expression" || cudalift::kind(e) == "binary_expression"
               || cudalift::kind(e) == "cast_expression") {
            const auto k = cudalift::kind(e);
            e = k == "subscript_expression" || k == "pointer_expression" ? cudalift::field(e, "argument")
                : k == "binary_expression"                              ? cudalift::field(e, "left")
                : k == "cast_expression"                                ? cudalift::field(e, "value")
                                                                        : ts_node_named_child(e, 0);
        }
        return std::string(tree.text(e));
    };
    std::vector<TSNode> stack{cudalift::field(kernel, "body")};
    while (!stack.empty()) {
        const TSNode n = stack.back();
        stack.pop_back();
        const auto k = cudalift::kind(n);
        std::string target;
        if (k == "assignment_expression")
            target = baseName(cudalift::field(n, "left"));
        else if (k == "update_expression")
            target = baseName(cudalift::field(n, "argument"));
        if (!target.empty()) {
            if (params.count(target))
                written.insert(target);
            else if (cudalift::kind(cudalift::field(n, k == "update_expression" ? "argument" : "left")) != "identifier")
                return params; // a store through a derived pointer: assume every buffer may change
        }
        if (k == "call_expression") {
            for (TSNode a : cudalift::namedChildren(cudalift::field(n, "arguments"))) {
                const std::string b = baseName(a);
                if (params.count(b))
                    written.insert(b);
            }
        }
        for (TSNode c : cudalift::namedChildren(n))
            stack.push_back(c);
    }
    return written;
}

Diagnostic refusalDiagnostic(const std::string &kernel, const Refusal &r)
{
    return {Severity::Warning, r.location, "cannot lift kernel '" + kernel + "': " + r.message()};
}

/// The graph with derived sizes (OH, outW, ...) replaced by their definitions over base sizes.
ir::Graph inlineDerivedSizes(const ir::Graph &graph, const cudalift::SizeTable &sizes)
{
    auto inl = [&](const ir::Expr &e) { return sizes.inlineDerived(e); };
    ir::Graph out(graph.name());
    for (const ir::Tensor &t : graph.tensors()) {
        std::vector<ir::Expr> dims;
        for (const ir::Expr &d : t.shape.dims())
            dims.push_back(inl(d));
        out.addTensor(t.name, t.dtype, ir::Shape(dims), t.role);
    }
    for (ir::ComputeOp op : graph.ops()) {
        for (ir::IterVar &v : op.domain) {
            v.extent = inl(v.extent);
            v.lowerBound = inl(v.lowerBound);
        }
        if (op.reduction) {
            for (ir::IterVar &v : op.reduction->vars) {
                v.extent = inl(v.extent);
                v.lowerBound = inl(v.lowerBound);
            }
            op.reduction->init = inl(op.reduction->init);
        }
        op.body = inl(op.body);
        out.addOp(std::move(op));
    }
    return out;
}

void addSizesOf(const ir::Expr &e, std::set<std::string> &names)
{
    for (const std::string &n : ir::collectSizeVars(e))
        names.insert(n);
}

/// The refused launch evaluated again for its accesses only (KernelExec::setRecordOnly); nullopt
/// when that fails too (an atomic, a loop the evaluator does not follow, ...).
std::optional<cudalift::LaunchAccesses> recordAccesses(cudalift::ProgramContext &ctx, const cudalift::LaunchBinding &binding)
{
    try {
        cudalift::KernelExec exec(ctx, binding, ctx.functions.at(binding.kernel));
        exec.setRecordOnly(true);
        return cudalift::LaunchAccesses{exec.run(), true};
    } catch (const std::exception &) {
        return std::nullopt;
    }
}

} // namespace

namespace cudalift {

Result<CudaLiftDetail> liftCudaProgramDetailed(const std::string &fileText, const std::string &fileName,
                                               const CudaParseLimits &limits, const SourceOptions &options)
{
    // Includes, conditionals and -D first (SourceExpansion.h): the text lifted is self-contained.
    ExpandedSource expanded = expandCudaSource(fileText, fileName, options);
    const std::string &source = expanded.text;
    // One parse serves the outline (indexCudaTree), the macros and the walks; macro bodies are
    // parsed within what is left of the same time budget.
    auto tree = SyntaxTree::parse(source, fileName, limits);
    if (tree->failure())
        return *tree->failure();
    // Templates called with arguments the lifter can name: each instance appended to the text and
    // the whole parsed again, a few rounds for templates called from instances (Templates.h).
    TemplateInstances templates;
    std::string liftedText = source;
    for (int round = 0; round < 4; ++round) {
        templates = instantiateTemplates(*tree, templates);
        if (!templates.grew)
            break;
        liftedText = source + templates.appendix;
        tree = SyntaxTree::parse(liftedText, fileName, limits);
        if (tree->failure())
            return *tree->failure();
    }
    // What the grammar cannot read is its limit, not the user's error (nvcc/NVRTC is the authority
    // on syntax): the file is never refused for it. Each place is a located warning; a kernel
    // whose own subtree has one stays opaque with it (KernelExec), host code after one does not
    // launch anything the lifter follows (HostWalker).
    const std::vector<Diagnostic> grammarLimits = tree->grammarLimits();
    const SourceIndex index = indexCudaTree(tree->root(), tree->text(), fileName);
    ProgramContext ctx;
    ctx.file = tree.get();
    ctx.templates = &templates;
    Preprocessor macros(*tree);
    if (macros.failure())
        return *macros.failure();
    // typedef float real_t; using idx_t = int; #define real_t float: element types by their names.
    TypeAliasScope typeAliases(typeAliasesOf(*tree, macros));
    SizeTable sizes;
    ctx.macros = &macros;
    ctx.sizes = &sizes;
    collectFunctions(tree->root(), ctx, *tree);
    for (const KernelInfo &k : index.kernels)
        ctx.kernels[k.name] = k;
    if (std::none_of(index.kernels.begin(), index.kernels.end(), [](const KernelInfo &k) { return k.qualifier == "__global__"; })) {
        std::string message = "no __global__ kernel in " + fileName;
        for (const Diagnostic &d : expanded.diagnostics)
            message += "; " + d.location.toString() + ": " + d.message; // e.g. the header holding it was not found
        return makeError(ErrorKind::Unsupported, message, SourceLocation{fileName, 1, 1});
    }

    CudaLiftDetail detail;
    LiftedProgram &program = detail.program;
    program.sourceFile = fileName;
    program.language = "cuda";
    program.diagnostics = std::move(expanded.diagnostics);
    detail.includedFiles = std::move(expanded.includedFiles);

    HostProgram host = walkHostProgram(ctx);
    ctx.buffers = &host.buffers;
    ctx.globals = host.globals;
    // A file that launches nothing (a kernel on its own): each kernel is lifted with a launch
    // inferred from its guards, its integer parameters as sizes (LoneKernels.h).
    std::optional<LoneKernels> lone;
    if (host.launches.empty() && index.launches.empty())
        lone = synthesizeLoneLaunches(ctx, index.kernels, host);
    const std::size_t launchCount = host.launches.size();
    std::vector<std::optional<LaunchOps>> lifted(launchCount);
    std::vector<std::optional<Refusal>> refused(launchCount);
    std::vector<std::set<int>> opaqueWrites(launchCount);
    std::vector<Diagnostic> notes = host.notes;
    detail.accesses.resize(launchCount);

    for (std::size_t l = 0; l < launchCount; ++l) {
        const HostLaunch &hl = host.launches[l];
        if (hl.refusal) {
            refused[l] = hl.refusal;
            continue;
        }
        if (!ctx.functions.count(hl.binding.kernel)) {
            refused[l] = Refusal{hl.binding.location, hl.binding.kernel,
                                 "the kernel's definition is not in this file (or is a template)", {}};
            continue;
        }
        try {
            KernelExec exec(ctx, hl.binding, ctx.functions.at(hl.binding.kernel));
            KernelEffects effects = exec.run();
            detail.accesses[l] = LaunchAccesses{effects};
            LaunchOps ops = buildFlatOps(std::move(effects), hl.binding, host.buffers, exec.math());
            if (lone)
                sizeLoneBuffers(ops, hl, host.buffers, exec.math());
            notes.insert(notes.end(), ops.notes.begin(), ops.notes.end());
            lifted[l] = std::move(ops);
        } catch (const LiftRefusal &r) {
            refused[l] = r.refusal();
            detail.accesses[l] = recordAccesses(ctx, hl.binding);
        } catch (const std::exception &e) {
            refused[l] = Refusal{hl.binding.location, hl.binding.kernel, std::string("internal limit: ") + e.what(), {}};
        }
    }

    // Kernels may have named more sizes (their #defines); the assembly's proofs need them all.
    IndexMath math;
    for (const SizeDefinition &d : sizes.definitions())
        math.setSizeLowerBound(d.name, std::min<std::int64_t>(d.value, 1));
    math.setDerived(&sizes.derived());

    // Shapes and the graph; a launch that fails here becomes opaque and everything is redone.
    std::optional<Assembled> assembled;
    for (std::size_t attempt = 0; attempt <= launchCount && !assembled; ++attempt) {
        for (std::size_t l = 0; l < launchCount; ++l) {
            if (refused[l]) {
                lifted[l].reset();
                const HostLaunch &hl = host.launches[l];
                auto it = ctx.kernels.find(hl.binding.kernel);
                const auto written = it != ctx.kernels.end() && ctx.functions.count(hl.binding.kernel)
                    ? writtenParameters(ctx.functions.at(hl.binding.kernel), *tree, it->second)
                    : std::set<std::string>();
                opaqueWrites[l].clear();
                for (std::size_t a = 0; a < hl.bufferArguments.size(); ++a) {
                    const int b = hl.bufferArguments[a];
                    const bool knownParam = it != ctx.kernels.end() && a < it->second.parameters.size();
                    if (b >= 0 && (!knownParam || written.count(it->second.parameters[a].name)))
                        opaqueWrites[l].insert(b);
                }
            }
        }
        std::vector<LaunchOps *> active;
        for (std::size_t l = 0; l < launchCount; ++l) {
            if (lifted[l]) {
                active.push_back(&*lifted[l]);
            }
        }
        // A 1-D index over a whole multi-dimensional buffer is split first, by the allocation's
        // stated layout; shapes are then chosen to make the (split) accesses multi-dimensional.
        const ShapeMap stated = allocationShapes(host.buffers, math);
        for (LaunchOps *ops : active) {
            (void)splitLaunchVars(*ops, stated, math);
            (void)splitDivModVars(*ops, math);
        }
        std::vector<std::size_t> unexpressible; // assemble() reports these with the store's location
        ShapeMap shapes = chooseShapes(host.buffers, active, math, lone ? lone->scalarShapes : ShapeMap{}, unexpressible);
        if (lone)
            shapes.insert(lone->scalarShapes.begin(), lone->scalarShapes.end());
        std::set<std::string> reserved = lone ? lone->sizeNames : std::set<std::string>{};
        for (const SizeDefinition &d : sizes.definitions())
            reserved.insert(d.name);
        for (const auto &[name, definition] : sizes.derived())
            reserved.insert(name);
        auto result = assemble(host, lifted, opaqueWrites, shapes, graphNameOf(fileName), math, reserved);
        if (auto *failure = std::get_if<LaunchFailure>(&result)) {
            refused[failure->launch] = failure->refusal;
            continue;
        }
        assembled = std::move(std::get<Assembled>(result));
    }
    if (!assembled)
        return makeError(ErrorKind::Unsupported, "the lifted launches could not be assembled into one graph");

    program.graph = inlineDerivedSizes(assembled->graph, sizes);
    if (Status valid = program.graph.validate(); !valid) {
        Error e = valid.error();
        e.kind = ErrorKind::Unsupported;
        e.message = "internal error: the lifted graph is not valid: " + e.message;
        return e;
    }
    detail.buffers = std::move(assembled->buffers);
    detail.opaqueUses = std::move(assembled->opaqueUses);
    detail.loneKernels = lone.has_value();
    detail.unreadableHost = host.unreadable;
    for (BufferPlan &b : detail.buffers) {
        b.elements = sizes.inlineDerived(b.elements);
        for (Expr &d : b.shape)
            d = sizes.inlineDerived(d);
    }

    // Launches, opaque kernels and their diagnostics.
    std::set<std::string> launchedKernels, reportedKernels;
    std::set<std::string> sizeNames;
    for (const std::string &n : program.graph.sizeVars())
        sizeNames.insert(n);
    for (const std::string &t : templates.templatesUsed)
        launchedKernels.insert(t); // a template is reported through its instances
    for (std::size_t l = 0; l < launchCount; ++l) {
        const HostLaunch &hl = host.launches[l];
        launchedKernels.insert(hl.binding.kernel);
        LiftedLaunch out;
        out.kernel = hl.binding.kernel;
        out.grid = hl.gridText;
        out.block = hl.blockText;
        out.arguments = hl.argumentTexts;
        out.location = hl.binding.location;
        out.inferred = lone.has_value();
        if (!refused[l])
            out.ops = assembled->launchOps[l];
        if (lone && !refused[l]) {
            notes.push_back(loneLaunchNote(hl, lone->sizeNames));
            if (host.unreadable) // "launched by no host code" the lifter can read
                notes.back().message += " (the host code at " + host.unreadable->location.toString()
                                        + ", which the CUDA grammar cannot read, may launch it with other sizes)";
        }
        program.launches.push_back(std::move(out));

        LaunchPlan plan;
        plan.kernel = hl.binding.kernel;
        plan.arguments = hl.binding.arguments;
        for (int d = 0; d < 3; ++d) {
            plan.grid[static_cast<std::size_t>(d)] = sizes.inlineDerived(hl.binding.grid[static_cast<std::size_t>(d)]);
            plan.block[static_cast<std::size_t>(d)] = sizes.inlineDerived(hl.binding.block[static_cast<std::size_t>(d)]);
        }
        for (KernelArgument &a : plan.arguments) {
            a.scalar = sizes.inlineDerived(a.scalar);
            a.pointer.offset = sizes.inlineDerived(a.pointer.offset);
        }
        plan.lifted = !refused[l];
        for (int d = 0; d < 3; ++d) {
            addSizesOf(plan.grid[static_cast<std::size_t>(d)], sizeNames);
            addSizesOf(plan.block[static_cast<std::size_t>(d)], sizeNames);
        }
        for (const KernelArgument &a : plan.arguments)
            addSizesOf(a.scalar, sizeNames);
        detail.launches.push_back(std::move(plan));

        if (!refused[l])
            continue;
        auto existing = std::find_if(program.opaque.begin(), program.opaque.end(),
                                     [&](const OpaqueKernel &k) { return k.name == hl.binding.kernel; });
        if (existing == program.opaque.end()) {
            OpaqueKernel k;
            k.name = hl.binding.kernel;
            if (auto it = ctx.kernels.find(k.name); it != ctx.kernels.end())
                k.range = it->second.range;
            k.why = refusalDiagnostic(k.name, *refused[l]);
            program.opaque.push_back(std::move(k));
            existing = program.opaque.end() - 1;
        }
        for (int b : hl.bufferArguments) {
            if (b < 0)
                continue;
            const std::string &name = host.buffers[static_cast<std::size_t>(b)].name;
            if (std::find(existing->reads.begin(), existing->reads.end(), name) == existing->reads.end())
                existing->reads.push_back(name);
            if (opaqueWrites[l].count(b)
                && std::find(existing->writes.begin(), existing->writes.end(), name) == existing->writes.end())
                existing->writes.push_back(name);
        }
        const Diagnostic d = refusalDiagnostic(hl.binding.kernel, *refused[l]);
        const std::string key = d.toString();
        if (reportedKernels.insert(key).second)
            program.diagnostics.push_back(d);
    }
    for (const BufferPlan &b : detail.buffers)
        addSizesOf(b.elements, sizeNames);
    detail.events = host.events;
    for (const KernelInfo &k : index.kernels) {
        if (k.qualifier != "__global__" || launchedKernels.count(k.name))
            continue;
        OpaqueKernel o;
        o.name = k.name;
        o.range = k.range;
        o.why = {Severity::Warning, k.nameLocation,
                 "cannot lift kernel '" + k.name + "': it is never launched from host code the lifter follows, so "
                 "its sizes are unknown. Launch it from main with sizes known at compile time"};
        if (host.unreadable) // the launch may be in host code the grammar could not read
            o.why.message += " (the host code at " + host.unreadable->location.toString()
                             + ", which the CUDA grammar cannot read, may launch it)";
        program.diagnostics.push_back(o.why);
        program.opaque.push_back(std::move(o));
    }
    for (const Diagnostic &d : grammarLimits)
        program.diagnostics.push_back(d);
    for (const Diagnostic &d : assembled->diagnostics)
        program.diagnostics.push_back(d);
    for (const Diagnostic &d : notes)
        program.diagnostics.push_back(d);
    // The recorded accesses over the same sizes as the plan (derived sizes inlined), and their sizes bound.
    for (std::optional<LaunchAccesses> &la : detail.accesses) {
        if (!la)
            continue;
        auto inl = [&](Expr &e) {
            if (e.defined())
                e = sizes.inlineDerived(e);
        };
        KernelEffects &fx = la->effects;
        for (AccessRecord &a : fx.accesses) {
            inl(a.index);
            for (Expr &g : a.guard)
                inl(g);
        }
        for (BranchRecord &b : fx.branches) {
            inl(b.condition);
            for (Expr &g : b.guard)
                inl(g);
        }
        for (auto &[name, v] : fx.loopVars) {
            inl(v.lo);
            inl(v.hi);
        }
        for (auto &[name, st] : fx.strideLoops) {
            inl(st.start);
            inl(st.step);
        }
    }
    for (const SizeDefinition &d : sizes.definitions())
        detail.definedSizes[d.name] = d.value;
    if (expanded.changed) // templates are instantiated again from it: no instances in it
        program.expandedSource = expanded.text;
    program.includedFiles = detail.includedFiles;
    detail.source = std::move(liftedText);
    for (const SizeDefinition &d : sizes.definitions()) {
        if (sizeNames.count(d.name)) {
            program.sizes[d.name] = d.value;
            detail.sizes.push_back(d);
        }
    }
    return detail;
}

Result<LiftedFile> liftFileDetailed(const std::string &source, const std::string &fileName, const SourceOptions &options)
{
    if (!isCudaFileName(fileName)) {
        auto lifted = liftFile(source, fileName, options);
        if (!lifted)
            return lifted.error();
        return LiftedFile{std::move(*lifted), std::nullopt};
    }
    try {
        auto detail = liftCudaProgramDetailed(source, fileName, {}, options);
        if (!detail)
            return detail.error();
        LiftedProgram program = detail->program;
        return LiftedFile{std::move(program), std::move(*detail)};
    } catch (const std::exception &e) {
        // As liftCudaProgram: the lifter refuses by value; this catches resource exhaustion only.
        return makeError(ErrorKind::Unsupported, std::string("internal error while lifting: ") + e.what(),
                         SourceLocation{fileName, 0, 0});
    }
}

} // namespace cudalift

Result<LiftedProgram> liftCudaProgram(const std::string &source, const std::string &fileName,
                                      const SourceOptions &options)
{
    try {
        auto detail = cudalift::liftCudaProgramDetailed(source, fileName, {}, options);
        if (!detail)
            return detail.error();
        return std::move(detail->program);
    } catch (const std::exception &e) {
        // The lifter refuses by value; this only catches resource exhaustion and internal limits.
        return makeError(ErrorKind::Unsupported, std::string("internal error while lifting: ") + e.what(),
                         SourceLocation{fileName, 0, 0});
    }
}

} // namespace stitch::frontend
