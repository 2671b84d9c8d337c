#include "core/codegen/Carry.h"

#include "core/codegen/AsWritten.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/DeviceCode.h"
#include "core/frontend/cudalift/CudaLift.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace stitch::codegen {

using frontend::cudalift::CudaLiftDetail;
using frontend::cudalift::HostEvent;
using frontend::cudalift::OpaqueBufferUse;

namespace {

/// Spaces over [begin, end), newlines kept, so lines and columns stay the input's.
void blank(std::string &text, std::size_t begin, std::size_t end)
{
    for (std::size_t i = begin; i < std::min(end, text.size()); ++i)
        if (text[i] != '\n')
            text[i] = ' ';
}

/// Whether the definition starting at `begin` is declared extern "C" (its name is then unmangled).
bool externC(const std::string &text, std::size_t begin)
{
    std::size_t i = begin;
    while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1])))
        --i;
    static const std::string kExtern = "extern \"C\"";
    if (i >= kExtern.size() && text.compare(i - kExtern.size(), kExtern.size(), kExtern) == 0)
        return true;
    // Inside an extern "C" { ... } block: the nearest unclosed '{' before it follows extern "C".
    int depth = 0;
    for (std::size_t j = begin; j-- > 0;) {
        if (text[j] == '}')
            ++depth;
        else if (text[j] == '{' && depth-- == 0) {
            std::size_t k = j;
            while (k > 0 && std::isspace(static_cast<unsigned char>(text[k - 1])))
                --k;
            return k >= kExtern.size() && text.compare(k - kExtern.size(), kExtern.size(), kExtern) == 0;
        }
    }
    return false;
}

/// Union-find over buffer nodes: "t:<tensor>" (a graph tensor) and "b:<index>" (a host buffer
/// while no tensor stands for its contents).
class Classes {
public:
    std::string find(const std::string &n)
    {
        auto it = m_parent.find(n);
        if (it == m_parent.end()) {
            m_parent[n] = n;
            return n;
        }
        if (it->second == n)
            return n;
        const std::string root = find(it->second);
        m_parent[n] = root;
        return root;
    }
    void unite(const std::string &a, const std::string &b)
    {
        const std::string ra = find(a), rb = find(b);
        if (ra != rb)
            m_parent[std::max(ra, rb)] = std::min(ra, rb);
    }
    std::map<std::string, std::vector<std::string>> members()
    {
        std::map<std::string, std::vector<std::string>> out;
        for (const auto &entry : m_parent)
            out[find(entry.first)].push_back(entry.first);
        return out;
    }

private:
    std::map<std::string, std::string> m_parent;
};

/// The input's device code for the carried kernels, in namespace stitch_input; the system headers
/// it includes are returned apart (they cannot be included inside a namespace).
Result<std::string> carriedSection(const CudaLiftDetail &detail, const std::string &fileName,
                                   const ir::SizeBindings &sizes, const std::set<std::string> &carried,
                                   std::vector<std::string> &includes, std::set<std::string> &cNames)
{
    auto resized = resizeSource(detail.source, detail.sizes, sizes);
    if (!resized)
        return resized.error();
    const frontend::SourceIndex index = frontend::indexCudaSource(*resized, fileName);
    std::string text = frontend::deviceTranslationUnit(*resized, index).source;
    // The lifted kernels are generated anew: only the carried ones (and the device functions,
    // variables and types they may use) stay.
    for (const frontend::KernelInfo &k : index.kernels) {
        if (k.qualifier != "__global__")
            continue;
        if (!carried.count(k.name))
            blank(text, k.range.beginByte, k.range.endByte);
        else if (externC(text, k.range.beginByte))
            cNames.insert(k.name);
    }
    for (const frontend::IncludeDirective &inc : index.includes) {
        const std::size_t b = inc.range.beginByte, e = inc.range.endByte;
        if (e <= b || e > text.size() || text.find("#include", b) >= e)
            continue; // blanked already: a host-only header
        includes.push_back("#include " + std::string(inc.system ? "<" : "\"") + inc.path + (inc.system ? ">" : "\""));
        blank(text, b, e);
    }
    // Blanked lines become empty (lines keep their numbers) and the blank tail goes.
    std::string tidy;
    std::istringstream rows(text);
    for (std::string row; std::getline(rows, row);) {
        row.erase(row.find_last_not_of(" \t") + 1);
        tidy += row + "\n";
    }
    tidy.erase(tidy.find_last_not_of('\n') + 1);
    text = tidy + "\n";
    std::string out;
    for (const std::string &define : hostConstantDefines()) {
        const std::string name = define.substr(0, define.find('='));
        if (std::regex_search(text, std::regex("\\b" + name + "\\b")))
            out += "#ifndef " + name + "\n#define " + name + " " + define.substr(define.find('=') + 1) + "\n#endif\n";
    }
    out += "namespace " + std::string(kCarriedNamespace) + " {\n#line 1 \"" + fileName + "\"\n" + text;
    if (!text.empty() && text.back() != '\n')
        out += "\n";
    out += "} // namespace " + std::string(kCarriedNamespace) + "\n";
    // Its macros stop here: the generated host launcher names sizes like them (N, M, ...).
    static const std::regex defineRe(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z_0-9]*))");
    std::set<std::string> macros;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, defineRe))
            macros.insert(m[1]);
    }
    for (const std::string &m : macros)
        out += "#undef " + m + "\n";
    return out;
}

std::string whyOpaque(const CudaLiftDetail &detail, const std::string &kernel)
{
    for (const auto &o : detail.program.opaque)
        if (o.name == kernel)
            return o.why.message;
    return "the lifter refused it";
}

} // namespace

std::string CarriedKernels::bufferFor(const std::string &tensor) const
{
    auto it = planBuffer.find(tensor);
    return it == planBuffer.end() ? tensor : it->second;
}

Result<CarriedKernels> carryOpaqueKernels(const CudaLiftDetail &detail, const std::string &fileName,
                                          const ir::SizeBindings &sizes)
{
    CarriedKernels out;
    out.fileName = fileName;
    ir::SizeBindings bound = detail.program.sizes;
    for (const auto &[name, value] : sizes)
        bound[name] = value;
    const ir::Graph &graph = detail.program.graph;

    // The opaque launches in program order; the c-th sits between stages c and c + 1.
    std::vector<std::size_t> opaqueLaunches;
    std::set<std::string> launchedOpaque;
    for (const HostEvent &ev : detail.events) {
        if (ev.kind != HostEvent::Kind::Launch || ev.launch < 0 ||
            static_cast<std::size_t>(ev.launch) >= detail.launches.size())
            continue;
        if (!detail.launches[static_cast<std::size_t>(ev.launch)].lifted)
            opaqueLaunches.push_back(static_cast<std::size_t>(ev.launch));
    }
    for (std::size_t l : opaqueLaunches)
        launchedOpaque.insert(detail.launches[l].kernel);
    for (const auto &o : detail.program.opaque) {
        if (launchedOpaque.count(o.name))
            continue;
        if (detail.unreadableHost)
            return makeError(ErrorKind::Unsupported,
                             "kernel '" + o.name + "' stays opaque (" + o.why.message +
                                 ") and may be launched by host code the CUDA grammar cannot read (" +
                                 detail.unreadableHost->location.toString() +
                                 "): it cannot be carried unchanged into the generated program, which would lose its work",
                             o.why.location);
        out.notes.push_back({Severity::Note, o.why.location,
                             "kernel '" + o.name + "' is not in the generated program: " +
                                 (detail.loneKernels ? "no host code launches it (a kernel lifted alone)"
                                                     : "the program never launches it")});
    }
    if (opaqueLaunches.empty())
        return out;

    const frontend::SourceIndex index = frontend::indexCudaSource(detail.source, fileName);
    // Which memory each launch's buffer arguments are: one class per buffer and time.
    Classes classes;
    std::map<std::pair<std::size_t, int>, std::string> nodeOf; // (launch, buffer) -> node
    for (const OpaqueBufferUse &u : detail.opaqueUses) {
        const std::string node = u.before.empty() ? "b:" + std::to_string(u.buffer) : "t:" + u.before;
        classes.find(node);
        if (!u.after.empty())
            classes.unite(node, "t:" + u.after);
        nodeOf[{static_cast<std::size_t>(u.launch), u.buffer}] = node;
        if (!u.after.empty())
            out.carriedTensors.insert(u.after);
    }
    // A class's plan buffer: its first graph tensor (graph order), else the host buffer's name.
    std::map<std::string, std::string> nameOf; // class root -> plan buffer
    for (const auto &[root, members] : classes.members()) {
        std::string name;
        for (const ir::Tensor &t : graph.tensors())
            if (name.empty() && std::find(members.begin(), members.end(), "t:" + t.name) != members.end())
                name = t.name;
        if (!name.empty()) {
            for (const std::string &m : members)
                if (m.rfind("t:", 0) == 0 && m.substr(2) != name)
                    out.planBuffer[m.substr(2)] = name;
            nameOf[root] = name;
            continue;
        }
        const std::size_t b = std::stoul(members.front().substr(2));
        const auto &bp = detail.buffers.at(b);
        name = bp.name;
        while (graph.findTensor(name))
            name += "_buffer";
        nameOf[root] = name;
        runner::BufferSpec spec;
        spec.name = name;
        spec.dtype = bp.dtype;
        auto count = ir::evaluateSizeExpr(bp.elements, bound);
        if (!count || *count < 1)
            return makeError(ErrorKind::Unsupported, "buffer '" + bp.name + "', which kernel(s) carried unchanged use, has " +
                                                         (count ? std::to_string(*count) + " elements" : "an unknown size: " + count.error().message));
        spec.count = static_cast<std::uint64_t>(*count);
        bool filled = false, read = false;
        for (const HostEvent &ev : detail.events) {
            if (ev.buffer != static_cast<int>(b))
                continue;
            filled = filled || ev.kind == HostEvent::Kind::CopyIn || ev.kind == HostEvent::Kind::HostWrite;
            read = read || ev.kind == HostEvent::Kind::CopyOut || ev.kind == HostEvent::Kind::HostRead;
            if (ev.kind == HostEvent::Kind::Zero && !filled)
                spec.init.kind = runner::BufferInit::Kind::Zero;
        }
        spec.role = filled ? (read ? runner::BufferRole::InOut : runner::BufferRole::Input)
                    : read ? runner::BufferRole::Output
                           : runner::BufferRole::Scratch;
        out.buffers.push_back(std::move(spec));
    }
    for (const OpaqueBufferUse &u : detail.opaqueUses)
        if (u.writes)
            out.written.insert(nameOf.at(classes.find(nodeOf.at({static_cast<std::size_t>(u.launch), u.buffer}))));

    std::set<std::string> carriedNames;
    for (std::size_t l : opaqueLaunches)
        carriedNames.insert(detail.launches[l].kernel);
    std::set<std::string> cNames;
    auto section = carriedSection(detail, fileName, bound, carriedNames, out.includes, cNames);
    if (!section)
        return section.error();
    out.section = std::move(*section);

    for (std::size_t c = 0; c < opaqueLaunches.size(); ++c) {
        const std::size_t l = opaqueLaunches[c];
        const auto &plan = detail.launches[l];
        CarriedLaunch carried;
        carried.kernel = plan.kernel;
        carried.afterStage = static_cast<int>(c);
        carried.where = l < detail.program.launches.size() ? detail.program.launches[l].location : SourceLocation{};
        carried.why = whyOpaque(detail, plan.kernel);
        auto launch = evaluateLaunch(detail.source, detail, index, l, bound);
        if (!launch) {
            Error e = launch.error();
            e.message = "kernel '" + plan.kernel + "' stays opaque (" + carried.why +
                        ") and cannot be carried unchanged into the generated program, which would lose its work: " +
                        e.message;
            return e;
        }
        carried.launch = std::move(*launch);
        carried.launch.kernel = cNames.count(plan.kernel) ? plan.kernel : std::string(kCarriedNamespace) + "::" + plan.kernel;
        std::size_t a = 0;
        for (const auto &arg : plan.arguments) {
            if (arg.kind == frontend::cudalift::KernelArgument::Kind::Buffer) {
                auto node = nodeOf.find({l, arg.pointer.buffer});
                if (node == nodeOf.end())
                    return makeError(ErrorKind::Unsupported,
                                     "kernel '" + plan.kernel + "': argument '" + arg.text +
                                         "' is a buffer the lifter did not follow into the launch; it cannot be carried unchanged",
                                     carried.where);
                carried.launch.args[a] = runner::KernelArg::buffer(nameOf.at(classes.find(node->second)));
            }
            ++a;
        }
        out.launches.push_back(std::move(carried));
    }
    return out;
}

std::set<std::string> uncheckedBuffers(const CarriedKernels &carried, const ir::Graph &graph)
{
    std::set<std::string> unchecked = carried.written;
    std::set<std::string> tainted = carried.carriedTensors;
    for (const ir::ComputeOp &op : graph.ops())
        for (const ir::TensorRef &in : op.inputs())
            if (tainted.count(in.name)) {
                tainted.insert(op.output.name);
                break;
            }
    for (const std::string &t : tainted)
        unchecked.insert(carried.bufferFor(t));
    for (const runner::BufferSpec &b : carried.buffers)
        unchecked.insert(b.name);
    return unchecked;
}

std::vector<LaunchStep> launchOrder(const std::vector<int> &kernelStages, const CarriedKernels &carried)
{
    std::vector<LaunchStep> steps;
    std::size_t next = 0;
    for (std::size_t k = 0; k < kernelStages.size(); ++k) {
        while (next < carried.launches.size() && carried.launches[next].afterStage < kernelStages[k])
            steps.push_back({true, next++});
        steps.push_back({false, k});
    }
    while (next < carried.launches.size())
        steps.push_back({true, next++});
    return steps;
}

} // namespace stitch::codegen
