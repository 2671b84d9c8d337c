#include "views/CodeDiffSources.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/cuda/SourceCompiler.h"
#include "core/rubric/PerfModel.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryFile>

#include <cctype>

namespace stitch::views {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("CodeDiff", text);
}

Result<TimelineProgram> generated(const agents::SourceResult &result, const schedule::Schedule &schedule, QString title)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(result.trace.arch);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture '" + result.trace.arch + "' in the trace");
    const schedule::Problem problem{result.lifted.graph, result.sizes, *arch, schedule.precision};
    auto program = codegen::generateProgram(problem, schedule);
    if (!program)
        return program.error();
    return TimelineProgram{std::move(title), std::move(program->source), false};
}

bool isHex(std::string_view s)
{
    if (s.empty())
        return false;
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            return false;
    return true;
}

} // namespace

int timelineRows(const agents::SourceResult &result)
{
    return static_cast<int>(result.trace.decisions.size()) + 2;
}

Result<TimelineProgram> programAt(const agents::SourceResult &result, int row)
{
    const agents::Trace &t = result.trace;
    const int decisions = static_cast<int>(t.decisions.size());
    if (row < 0 || row > decisions + 1)
        return makeError(ErrorKind::InvalidArgument, "no step " + std::to_string(row) + " in the agents' timeline");
    if (row == decisions + 1) {
        const QString title = t.keptInput ? tr("Optimized: the agents' program (the input as written is kept: it is "
                                               "not slower)")
                                          : tr("Optimized: the agents' program");
        return TimelineProgram{title, result.program.source, false};
    }
    if (row >= 1) {
        const agents::TraceDecision &d = t.decisions[std::size_t(row - 1)];
        if (d.schedule.groups.empty())
            return makeError(ErrorKind::InvalidArgument,
                             "the trace holds no schedule for step " + std::to_string(row) +
                                 " (written before the steps were recorded)");
        return generated(result, d.schedule, tr("After step %1: %2").arg(row).arg(stepName(result, row).section(QStringLiteral(": "), 1)));
    }
    const QString file = QFileInfo(QString::fromStdString(t.source)).fileName();
    if (result.lifted.language == "cuda")
        return TimelineProgram{tr("As written: %1").arg(file), t.sourceText, true};
    // A .te has no CUDA of its own: the generic schedule stands for the input (as the trace's
    // input time does).
    const ArchLimits *arch = ArchDatabase::builtin().arch(t.arch);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture '" + t.arch + "' in the trace");
    const schedule::Problem problem{result.lifted.graph, result.sizes, *arch, t.schedule.precision};
    return generated(result, rubric::genericSchedule(problem),
                     tr("As written: %1 has no CUDA; the generic schedule's program").arg(file));
}

QString stepName(const agents::SourceResult &result, int row)
{
    const auto &decisions = result.trace.decisions;
    if (row == static_cast<int>(decisions.size()) + 1)
        return tr("Stitch: the final program");
    if (row < 1 || row > static_cast<int>(decisions.size()))
        return {};
    const agents::TraceDecision &d = decisions[std::size_t(row - 1)];
    const QString value = d.chosen >= 0 && d.chosen < static_cast<int>(d.options.size())
                              ? QString::fromStdString(d.options[std::size_t(d.chosen)].text)
                              : QStringLiteral("?");
    return tr("Step %1: %2 = %3%4")
        .arg(row)
        .arg(QString::fromStdString(d.id), value, d.pinned ? tr(" (pinned)") : QString());
}

Result<std::string> codeOf(const TimelineProgram &program, CodeForm form, const std::string &arch,
                           const std::string &fileName)
{
    if (form == CodeForm::Cuda)
        return program.source;
    // No -lineinfo: its .loc lines name source lines, which an insertion above shifts everywhere.
    Result<cuda::CompileResult> compiled = [&]() -> Result<cuda::CompileResult> {
        if (program.asWritten) {
            cuda::CompileOptions o;
            o.arch = arch;
            o.fileName = fileName.empty() ? "program.cu" : fileName;
            o.lineInfo = false;
            o.wantCubin = form == CodeForm::Sass;
            return cuda::compileProgram(program.source, o);
        }
        return codegen::compileGenerated(program.source, "generated.cu", arch, false);
    }();
    if (!compiled)
        return compiled.error();
    if (form == CodeForm::Ptx)
        return std::move(compiled->ptx);

    const QString tool = sassTool();
    if (tool.isEmpty())
        return makeError(ErrorKind::Unsupported, "neither cuobjdump nor nvdisasm is installed (CUDA toolkit bin or PATH)");
    if (compiled->cubin.empty())
        return makeError(ErrorKind::Compile, "NVRTC gave no CUBIN for " + arch);
    QTemporaryFile cubin(QDir::temp().filePath(QStringLiteral("stitchcuda-XXXXXX.cubin")));
    if (!cubin.open() || cubin.write(compiled->cubin.data(), static_cast<qint64>(compiled->cubin.size())) !=
                             static_cast<qint64>(compiled->cubin.size()))
        return makeError(ErrorKind::Io, "cannot write the CUBIN to a temporary file");
    cubin.flush();
    QProcess process;
    const bool cuobjdump = QFileInfo(tool).baseName() == QLatin1String("cuobjdump");
    process.start(tool, cuobjdump ? QStringList{QStringLiteral("-sass"), cubin.fileName()} : QStringList{cubin.fileName()});
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        process.kill();
        return makeError(ErrorKind::Io, QFileInfo(tool).fileName().toStdString() + " failed: " +
                                            QString::fromLocal8Bit(process.readAllStandardError()).trimmed().toStdString());
    }
    return normalizeSassListing(process.readAllStandardOutput().toStdString());
}

QString sassTool()
{
    QStringList dirs;
    for (const std::string &include : cuda::toolkitIncludeDirs())
        dirs << QDir(QString::fromStdString(include)).absoluteFilePath(QStringLiteral("../bin"));
    dirs << QStringLiteral("/usr/local/cuda/bin");
    for (const QString &name : {QStringLiteral("cuobjdump"), QStringLiteral("nvdisasm")}) {
        QString path = QStandardPaths::findExecutable(name, dirs);
        if (path.isEmpty())
            path = QStandardPaths::findExecutable(name);
        if (!path.isEmpty())
            return path;
    }
    return {};
}

std::string normalizeSassListing(const std::string &listing)
{
    std::string out;
    std::size_t begin = 0;
    while (begin < listing.size()) {
        std::size_t end = listing.find('\n', begin);
        if (end == std::string::npos)
            end = listing.size();
        const std::string_view line(listing.data() + begin, end - begin);
        std::string kept;
        bool instruction = false;
        for (std::size_t i = 0; i < line.size();) {
            if (line.compare(i, 2, "/*") == 0) {
                const std::size_t close = line.find("*/", i + 2);
                if (close != std::string_view::npos) {
                    std::string_view inner = line.substr(i + 2, close - i - 2);
                    while (!inner.empty() && inner.front() == ' ')
                        inner.remove_prefix(1);
                    while (!inner.empty() && inner.back() == ' ')
                        inner.remove_suffix(1);
                    const bool address = isHex(inner);
                    if (address || (inner.size() > 2 && inner.substr(0, 2) == "0x" && isHex(inner.substr(2)))) {
                        instruction = instruction || address;
                        i = close + 2;
                        continue;
                    }
                }
            }
            const char c = line[i++];
            if (c == ' ' || c == '\t' || c == '\r') {
                if (!kept.empty() && kept.back() != ' ')
                    kept += ' ';
            } else {
                kept += c;
            }
        }
        while (!kept.empty() && kept.back() == ' ')
            kept.pop_back();
        const bool wasBlank = line.find_first_not_of(" \t\r") == std::string_view::npos;
        if (!kept.empty() || wasBlank) // a line of encodings alone goes; a blank line stays
            out += (instruction ? "    " : "") + kept + '\n';
        if (end == listing.size())
            break;
        begin = end + 1;
    }
    return out;
}

} // namespace stitch::views
