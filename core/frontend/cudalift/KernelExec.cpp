// KernelExec: per-thread state (locals, written buffer cells, shared tiles), merging of paths.
#include "core/frontend/cudalift/KernelExec.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/DType.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <set>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

// A merged value bigger than this comes from a long if/else chain over data; refusing keeps
// the lifter linear in the source instead of exponential.
constexpr std::size_t kMaxValueNodes = 4000;

bool containsCondition(const std::vector<Expr> &list, const Expr &c)
{
    return std::any_of(list.begin(), list.end(), [&](const Expr &x) { return x.sameAs(c) || x.equals(c); });
}

bool sameGuard(const std::vector<Expr> &a, const std::vector<Expr> &b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Expr &x, const Expr &y) {
               return x.sameAs(y) || x.equals(y);
           });
}

} // namespace

namespace {
thread_local const std::map<std::string, std::string> *t_typeAliases = nullptr;
thread_local int t_aliasDepth = 0;
} // namespace

TypeAliasScope::TypeAliasScope(std::map<std::string, std::string> aliases)
    : m_aliases(std::move(aliases)), m_previous(t_typeAliases)
{
    t_typeAliases = &m_aliases;
}

TypeAliasScope::~TypeAliasScope()
{
    t_typeAliases = m_previous;
}

std::optional<ir::DType> scalarTypeFromText(std::string_view text)
{
    std::string t;
    std::string word;
    auto flush = [&] {
        static const char *const kIgnored[] = {"const", "volatile", "__restrict__", "__restrict", "restrict",
                                               "static", "register", "signed", "constexpr", "inline",
                                               "__forceinline__", "__device__", "__host__"};
        if (word.empty())
            return;
        if (std::none_of(std::begin(kIgnored), std::end(kIgnored), [&](const char *k) { return word == k; }))
            t += (t.empty() ? "" : " ") + word;
        word.clear();
    };
    for (char c : text) {
        if (c == '*' || c == '&' || c == ' ' || c == '\t' || c == '\n') {
            flush();
            continue;
        }
        word += c;
    }
    flush();
    if (t == "unsigned" || t == "unsigned int" || t == "uint" || t == "uint32_t" || t == "int32_t" || t == "short"
        || t == "unsigned short")
        return ir::DType::I32;
    if (t == "size_t" || t == "long" || t == "unsigned long" || t == "long long" || t == "unsigned long long"
        || t == "int64_t" || t == "uint64_t" || t == "ptrdiff_t" || t == "long int")
        return ir::DType::I64;
    auto parsed = ir::parseDType(t);
    if (parsed)
        return *parsed;
    if (t_typeAliases && t_aliasDepth < 8) {
        if (const auto it = t_typeAliases->find(t); it != t_typeAliases->end()) {
            ++t_aliasDepth;
            auto resolved = scalarTypeFromText(it->second);
            --t_aliasDepth;
            return resolved;
        }
    }
    return std::nullopt;
}

KernelExec::KernelExec(ProgramContext &program, const LaunchBinding &launch, TSNode definition)
    : m_program(program), m_launch(launch), m_definition(definition), m_tree(program.file)
{
    for (const SizeDefinition &d : program.sizes->definitions())
        m_math.setSizeLowerBound(d.name, std::min<std::int64_t>(d.value, 1));
    m_math.setDerived(&program.sizes->derived());
}

SourceLocation KernelExec::where(TSNode node) const
{
    if (m_site)
        return *m_site;
    return m_tree->location(node);
}

std::string KernelExec::textOf(TSNode node) const
{
    return std::string(m_tree->text(node));
}

void KernelExec::refuse(TSNode at, const std::string &why, const std::string &advice) const
{
    throw LiftRefusal(Refusal{where(at), fragment(m_tree->text(at)), why, advice});
}

KernelExec::Local *KernelExec::lookup(State &s, const std::string &name)
{
    for (auto it = s.scopes.rbegin(); it != s.scopes.rend(); ++it) {
        auto found = it->find(name);
        if (found != it->end())
            return &found->second;
    }
    return nullptr;
}

void KernelExec::declare(State &s, Local local)
{
    s.scopes.back()[local.name] = std::move(local);
}

void KernelExec::checkIndex(const Expr &index, TSNode site, const char *what) const
{
    if (readsAny(index, [](const ir::TensorRef &) { return true; })) {
        refuse(site, std::string(what) + " depends on data read from memory",
               "the graph needs indices that are affine in thread and loop indices; keep this kernel opaque "
               "or gather the data in a separate step");
    }
    if (mentionsVar(index, "%uninit"))
        refuse(site, std::string(what) + " uses a variable that may be uninitialized");
}

std::string KernelExec::cellKey(int buffer, const Expr &index) const
{
    return std::to_string(buffer) + "#" + index.toString();
}

Expr KernelExec::readCell(const Cell &cell, const State &s) const
{
    std::vector<Expr> missing;
    for (const Expr &g : cell.guard) {
        if (!containsCondition(s.conditions, g))
            missing.push_back(g);
    }
    if (missing.empty())
        return cell.value;
    const BufferInfo &b = (*m_program.buffers)[static_cast<std::size_t>(cell.buffer)];
    return selectOrFold(conjunction(missing), cell.value, ir::read(b.ref(cell.buffer), {cell.index}));
}

void KernelExec::recordShared(int array, const std::vector<Expr> &index, bool store, const State &s, TSNode site)
{
    const SharedArray &a = m_sharedArrays[static_cast<std::size_t>(array)];
    Expr flat(0);
    for (std::size_t d = 0; d < index.size(); ++d)
        flat = d == 0 ? index[d] : flat * (d < a.dims.size() ? a.dims[d] : Expr(1)) + index[d];
    m_effects.accesses.push_back({true, store, array, a.name, m_math.simplify(flat), s.conditions,
                                  ir::dtypeSize(a.dtype), where(site)});
}

Expr KernelExec::readBuffer(const PointerValue &p, const Expr &index, State &s, TSNode site)
{
    const Expr flat = m_math.simplify(p.offset.isIntConst(0) ? index : p.offset + index);
    checkIndex(flat, site, "the index");
    m_effects.accesses.push_back({false, false, p.buffer, (*m_program.buffers)[static_cast<std::size_t>(p.buffer)].name,
                                  flat, s.conditions, ir::dtypeSize(p.dtype), where(site)});
    auto it = s.cells.find(cellKey(p.buffer, flat));
    if (it != s.cells.end())
        return readCell(it->second, s);
    const BufferInfo &b = (*m_program.buffers)[static_cast<std::size_t>(p.buffer)];
    return ir::read(b.ref(p.buffer), {flat});
}

std::vector<Expr> KernelExec::unionGuard(const std::vector<Expr> &a, const std::vector<Expr> &b) const
{
    // Where a cell is written: the common prefix of both paths, then either remainder.
    std::size_t common = 0;
    while (common < a.size() && common < b.size() && (a[common].sameAs(b[common]) || a[common].equals(b[common])))
        ++common;
    std::vector<Expr> out(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(common));
    if (common == a.size() || common == b.size())
        return out;
    const Expr restA = conjunction({a.begin() + static_cast<std::ptrdiff_t>(common), a.end()});
    const Expr restB = conjunction({b.begin() + static_cast<std::ptrdiff_t>(common), b.end()});
    out.push_back(ir::logicalOr(restA, restB));
    return out;
}

void KernelExec::writeBuffer(const PointerValue &p, const Expr &index, Expr value, State &s, TSNode site,
                             const std::string &parameter)
{
    const Expr flat = m_math.simplify(p.offset.isIntConst(0) ? index : p.offset + index);
    checkIndex(flat, site, "the index of this store");
    const BufferInfo &b = (*m_program.buffers)[static_cast<std::size_t>(p.buffer)];
    m_effects.accesses.push_back({false, true, p.buffer, b.name, flat, s.conditions, ir::dtypeSize(p.dtype), where(site)});
    value = convertTo(value, b.dtype);
    if (nodeCount(value, kMaxValueNodes) > kMaxValueNodes)
        refuse(site, "the stored value grows too large to lift (many data-dependent branches)");
    const std::string key = cellKey(p.buffer, flat);
    Cell cell;
    cell.buffer = p.buffer;
    cell.index = flat;
    cell.value = std::move(value);
    cell.span = m_tree->span(site);
    if (m_site)
        cell.span = ir::SourceSpan{*m_site, *m_site};
    cell.parameter = parameter;
    auto it = s.cells.find(key);
    if (it == s.cells.end()) {
        cell.guard = s.conditions;
    } else {
        const bool covered = std::all_of(it->second.guard.begin(), it->second.guard.end(),
                                         [&](const Expr &g) { return containsCondition(s.conditions, g); });
        cell.guard = covered ? it->second.guard : unionGuard(it->second.guard, s.conditions);
    }
    s.cells[key] = std::move(cell);
}

Expr KernelExec::relativeCondition(const State &base, const State &branch) const
{
    std::vector<Expr> rest(branch.conditions.begin() + static_cast<std::ptrdiff_t>(
                               std::min(base.conditions.size(), branch.conditions.size())),
                           branch.conditions.end());
    return conjunction(rest);
}

KernelExec::State KernelExec::merge(const State &base, std::vector<State> branches, TSNode site)
{
    if (branches.empty())
        return base;
    if (branches.size() == 1) {
        State only = std::move(branches.front());
        only.conditions = base.conditions;
        only.scopes.resize(base.scopes.size());
        return only;
    }
    std::vector<Expr> rel;
    for (const State &b : branches) {
        // In select(rel0, v0, select(rel1, v1, ...)) rel1 is only tested where rel0 failed, so an
        // atom of rel1 that is exactly !rel0 (an earlier early return) says nothing new.
        std::vector<Expr> atoms;
        for (const Expr &c : conjuncts(relativeCondition(base, b))) {
            const bool implied = std::any_of(rel.begin(), rel.end(), [&](const Expr &earlier) {
                return conjuncts(earlier).size() == 1 && negateCondition(earlier).equals(c);
            });
            if (!implied)
                atoms.push_back(c);
        }
        rel.push_back(conjunction(atoms));
    }

    // Later branches are the defaults of earlier ones: select(rel0, v0, select(rel1, v1, ... vN)).
    auto chain = [&](const std::vector<std::optional<Expr>> &values) {
        Expr acc;
        for (std::size_t i = values.size(); i-- > 0;) {
            if (!values[i])
                continue;
            acc = acc.defined() ? selectOrFold(rel[i], *values[i], acc) : *values[i];
        }
        if (nodeCount(acc, kMaxValueNodes) > kMaxValueNodes)
            refuse(site, "values grow too large to lift (many data-dependent branches)");
        return acc;
    };

    State out;
    out.conditions = base.conditions;
    out.scopes = base.scopes;
    out.phase = branches.front().phase;
    out.lastSharedReadPhase = base.lastSharedReadPhase;
    for (const State &b : branches) {
        if (b.phase != out.phase)
            refuse(site, "__syncthreads() is reached on some paths and not on others",
                   "every thread of a block must reach the same barriers; move the barrier out of the branch");
        out.lastSharedReadPhase = std::max(out.lastSharedReadPhase, b.lastSharedReadPhase);
    }
    for (std::size_t d = 0; d < out.scopes.size(); ++d) {
        for (auto &[name, local] : out.scopes[d]) {
            if (local.kind == LocalKind::Shared)
                continue;
            std::vector<std::optional<Expr>> values;
            bool same = true;
            for (const State &b : branches) {
                const Local &other = b.scopes[d].at(name);
                if (local.kind == LocalKind::Pointer) {
                    if (other.pointer.buffer != local.pointer.buffer || !other.pointer.offset.equals(local.pointer.offset))
                        refuse(site, "pointer '" + name + "' points to different places on different paths");
                    continue;
                }
                values.emplace_back(other.value.defined() ? other.value : ir::var("%uninit"));
                same = same && other.value.defined() && other.value.sameAs(branches.front().scopes[d].at(name).value);
            }
            if (local.kind == LocalKind::Scalar)
                local.value = same ? branches.front().scopes[d].at(name).value : chain(values);
        }
    }

    std::set<std::string> keys;
    for (const State &b : branches) {
        for (const auto &[k, c] : b.cells)
            keys.insert(k);
    }
    for (const std::string &key : keys) {
        std::vector<std::optional<Expr>> values;
        const Cell *first = nullptr;
        bool same = true, allPresent = true;
        for (const State &b : branches) {
            auto it = b.cells.find(key);
            if (it == b.cells.end()) {
                values.emplace_back();
                allPresent = false;
                continue;
            }
            values.emplace_back(it->second.value);
            if (!first)
                first = &it->second;
            else
                same = same && it->second.value.sameAs(first->value) && sameGuard(it->second.guard, first->guard);
        }
        Cell cell = *first;
        if (same && allPresent) {
            out.cells[key] = cell;
            continue;
        }
        cell.value = chain(values);
        // Written on every path, each time under exactly that path's own conditions: written
        // wherever the merge point is reached.
        std::vector<Expr> guard;
        bool covering = allPresent;
        for (std::size_t i = 0; i < branches.size() && covering; ++i) {
            const auto &g = branches[i].cells.at(key).guard;
            covering = g.size() >= base.conditions.size()
                && std::equal(base.conditions.begin(), base.conditions.end(), g.begin(),
                              [](const Expr &x, const Expr &y) { return x.sameAs(y) || x.equals(y); })
                && std::all_of(g.begin() + static_cast<std::ptrdiff_t>(base.conditions.size()), g.end(),
                               [&](const Expr &c) { return containsCondition(branches[i].conditions, c); });
        }
        if (covering) {
            guard = base.conditions;
        } else {
            for (std::size_t i = 0; i < branches.size(); ++i) {
                auto it = branches[i].cells.find(key);
                if (it == branches[i].cells.end())
                    continue;
                std::vector<Expr> g = it->second.guard;
                if (!containsCondition(g, rel[i]) && !isBoolConst(rel[i], true))
                    g.push_back(rel[i]);
                guard = guard.empty() && &it->second == first ? g : unionGuard(guard, g);
            }
        }
        cell.guard = std::move(guard);
        out.cells[key] = std::move(cell);
    }

    std::set<std::string> sharedKeys;
    for (const State &b : branches) {
        for (const auto &[k, st] : b.shared)
            sharedKeys.insert(k);
    }
    for (const std::string &key : sharedKeys) {
        std::vector<std::optional<Expr>> values;
        const SharedStore *first = nullptr;
        bool allPresent = true;
        for (const State &b : branches) {
            auto it = b.shared.find(key);
            if (it == b.shared.end()) {
                values.emplace_back();
                allPresent = false;
                continue;
            }
            if (!first)
                first = &it->second;
            values.emplace_back(it->second.value);
        }
        SharedStore store = *first;
        store.value = chain(values);
        // Partially written tiles are detected when read (the guard is not the kernel's).
        if (!allPresent)
            store.guard.push_back(ir::boolConst(false));
        else
            store.guard = base.conditions;
        out.shared[key] = std::move(store);
    }
    return out;
}

Expr KernelExec::placeholder(const std::string &name, ir::DType type)
{
    const int id = kPlaceholderBase - (m_placeholders++);
    return ir::read(ir::TensorRef{id, "%acc_" + name, type}, {});
}

Expr KernelExec::pendingRead(const PendingReduction &p) const
{
    return ir::read(ir::TensorRef{pendingTensorId(p.id), "%red_" + p.hint, p.dtype}, {});
}

KernelEffects KernelExec::run()
{
    const TSNode body = field(m_definition, "body");
    const KernelInfo &info = m_program.kernels.at(m_launch.kernel);
    if (auto limit = m_program.file->grammarLimitRefusal(m_definition, "the kernel"))
        throw LiftRefusal(std::move(*limit));
    if (m_launch.arguments.size() != info.parameters.size())
        refuse(m_definition, "the launch passes " + std::to_string(m_launch.arguments.size())
                                 + " arguments but the kernel has " + std::to_string(info.parameters.size())
                                 + " parameters");
    for (int d = 0; d < 3; ++d) {
        m_math.setRange(blockVar(d), Expr(0), m_launch.grid[static_cast<std::size_t>(d)]);
        m_math.setRange(threadVar(d), Expr(0), m_launch.block[static_cast<std::size_t>(d)]);
    }
    State s;
    s.scopes.emplace_back();
    for (const auto &[name, buffer] : m_program.globals) {
        Local global;
        global.name = name;
        global.kind = LocalKind::Pointer;
        global.pointer.buffer = buffer;
        const BufferInfo &info = (*m_program.buffers)[static_cast<std::size_t>(buffer)];
        global.pointer.dtype = info.dtype;
        global.globalScalar = info.factors.size() == 1 && info.factors.front().isIntConst(1);
        declare(s, std::move(global));
    }
    s.scopes.emplace_back(); // parameters shadow file-scope names
    for (std::size_t i = 0; i < info.parameters.size(); ++i) {
        const KernelParameter &param = info.parameters[i];
        const KernelArgument &arg = m_launch.arguments[i];
        Local local;
        local.name = param.name;
        const bool isPointer = param.type.find('*') != std::string::npos || param.type.find('[') != std::string::npos;
        auto type = scalarTypeFromText(param.type);
        if (!type)
            refuse(m_definition, "parameter '" + param.name + "' has type '" + param.type + "', which the lifter does not model");
        if (isPointer) {
            if (arg.kind != KernelArgument::Kind::Buffer)
                refuse(m_definition, "parameter '" + param.name + "' is a pointer but the launch passes '" + arg.text
                                         + "', which is not a buffer this program allocates");
            local.kind = LocalKind::Pointer;
            local.pointer = arg.pointer;
            const BufferInfo &b = (*m_program.buffers)[static_cast<std::size_t>(arg.pointer.buffer)];
            if (b.dtype != *type)
                refuse(m_definition, "parameter '" + param.name + "' is " + ir::dtypeName(*type) + " but buffer '"
                                         + b.name + "' holds " + ir::dtypeName(b.dtype));
        } else {
            if (arg.kind != KernelArgument::Kind::Scalar || !arg.scalar.defined())
                refuse(m_definition, "the value passed for '" + param.name + "' ('" + arg.text + "') is not known");
            local.type = *type;
            local.value = convertTo(arg.scalar, *type);
            local.isConst = true;
        }
        declare(s, std::move(local));
    }
    const State entry = s;
    ExitSink returns;
    std::vector<StoreEffect> loopStores;
    m_returnSink = &returns;
    m_storeSink = &loopStores;
    m_callStack.push_back(m_launch.kernel);
    const Flow flow = execBlock(body, s, true);
    std::vector<State> ends = std::move(returns.states);
    if (flow == Flow::Normal)
        ends.push_back(std::move(s));
    const State final = merge(entry, std::move(ends), body);

    for (const auto &[key, cell] : final.cells) {
        StoreEffect store;
        store.buffer = cell.buffer;
        store.index = cell.index;
        store.value = cell.value;
        store.guard = cell.guard;
        store.span = cell.span;
        store.parameter = cell.parameter;
        m_effects.stores.push_back(std::move(store));
    }
    for (StoreEffect &st : loopStores)
        m_effects.stores.push_back(std::move(st));
    for (const StoreEffect &st : m_effects.stores) {
        bool uninit = mentionsVar(st.value, "%uninit");
        for (const Expr &g : st.guard)
            uninit = uninit || mentionsVar(g, "%uninit");
        if (uninit)
            throw LiftRefusal(Refusal{st.span.begin, "store", "the stored value may use an uninitialized variable",
                                      "initialize the variable on every path"});
    }
    return std::move(m_effects);
}

} // namespace stitch::frontend::cudalift
