#include "views/DevicePanel.h"

#include "core/cuda/NvrtcCompiler.h"
#include "core/frontend/CudaSourceIndex.h"

#include <QFutureWatcher>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace stitch::views {

namespace {

QString row(const QString &label, const QString &value)
{
    return QStringLiteral("<tr><td class='key'>%1</td><td>%2</td></tr>").arg(label.toHtmlEscaped(), value);
}

QString kib(long long bytes)
{
    return QStringLiteral("%1 KiB").arg(bytes / 1024);
}

} // namespace

DevicePanel::DevicePanel(const ArchDatabase &database, QWidget *parent)
    : QWidget(parent), m_database(database), m_view(new QTextBrowser(this)), m_probeFunction(&DevicePanel::probeDriver)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    m_view->setOpenLinks(false);
    m_view->setFrameShape(QFrame::NoFrame);
    const QColor keyColor = palette().color(QPalette::PlaceholderText);
    m_view->document()->setDefaultStyleSheet(
        QStringLiteral(".key { color: %1; padding-right: 12px; } p { margin-top: 8px; }").arg(keyColor.name()));
    const auto version = cuda::nvrtcVersion();
    const auto targets = cuda::supportedArchitectures();
    const QString targetText =
        targets.empty() ? tr("none")
                        : tr("%1 to %2 (%3)")
                              .arg(QString::fromStdString(targets.front()), QString::fromStdString(targets.back()))
                              .arg(targets.size());
    m_compilerHtml =
        QStringLiteral("<table>") + row(tr("NVRTC"), QStringLiteral("%1.%2").arg(version.major).arg(version.minor)) +
        row(tr("Targets"), targetText) +
        row(tr("Parser"),
            tr("tree-sitter, %1").arg(QString::fromStdString(frontend::treeSitterVersionInfo()).toHtmlEscaped())) +
        QStringLiteral("</table>");
    render();
}

DevicePanel::~DevicePanel() = default;

void DevicePanel::setProbeFunction(ProbeFunction probe)
{
    m_probeFunction = std::move(probe);
}

DeviceProbe DevicePanel::probeDriver()
{
    DeviceProbe probe;
    auto api = cuda::DriverApi::load();
    if (!api) {
        probe.problem = QString::fromStdString(api.error().message);
        return probe;
    }
    probe.driverLoaded = true;
    probe.driverVersion = (*api)->driverVersion();
    auto devices = (*api)->devices();
    if (!devices) {
        probe.problem = QString::fromStdString(devices.error().message);
        return probe;
    }
    probe.devices = std::move(devices.value());
    if (probe.devices.empty())
        probe.problem = tr("the driver reports no CUDA device");
    return probe;
}

void DevicePanel::refresh()
{
    if (m_probing)
        return;
    m_probing = true;
    render();
    auto *watcher = new QFutureWatcher<DeviceProbe>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_probe = watcher->result();
        m_probing = false;
        render();
        emit probeFinished();
    });
    watcher->setFuture(QtConcurrent::run(m_probeFunction));
}

void DevicePanel::setArchitecture(const QString &arch)
{
    if (arch == m_arch)
        return;
    m_arch = arch;
    render();
}

QString DevicePanel::text() const
{
    return m_view->toPlainText();
}

QString DevicePanel::devicesHtml() const
{
    if (!m_probe)
        return QStringLiteral("<p><i>%1</i></p>").arg(tr("Querying the CUDA driver…"));
    QString html;
    if (!m_probe->problem.isEmpty())
        html += QStringLiteral("<p><b>%1</b></p>").arg(tr("No GPU: %1").arg(m_probe->problem).toHtmlEscaped());
    if (m_probe->driverLoaded) {
        html += QStringLiteral("<table>") +
                row(tr("Driver"), QStringLiteral("CUDA %1.%2")
                                      .arg(m_probe->driverVersion / 1000)
                                      .arg(m_probe->driverVersion % 1000 / 10)) +
                QStringLiteral("</table>");
    }
    for (const auto &d : m_probe->devices) {
        html += QStringLiteral("<p><b>GPU %1: %2</b></p><table>")
                    .arg(d.ordinal)
                    .arg(QString::fromStdString(d.name).toHtmlEscaped());
        html += row(tr("Architecture"), QString::fromStdString(d.arch()));
        html += row(tr("Multiprocessors"), QString::number(d.multiprocessors));
        html += row(tr("Memory"), QStringLiteral("%1 GiB").arg(double(d.totalMemoryBytes) / (1 << 30), 0, 'f', 1));
        html += row(tr("SM clock"), QStringLiteral("%1 MHz").arg(d.clockRateKHz / 1000));
        html += row(tr("L2 cache"), kib(d.l2CacheBytes));
        html += row(tr("Shared mem / block (opt-in)"), kib(d.sharedMemoryPerBlockOptin));
        html += QStringLiteral("</table>");
    }
    return html;
}

QString DevicePanel::archHtml() const
{
    const ArchLimits *a = m_database.arch(m_arch.toStdString());
    QString html = QStringLiteral("<p><b>%1</b></p>").arg(tr("Target %1").arg(m_arch).toHtmlEscaped());
    if (!a)
        return html + QStringLiteral("<p>%1</p>").arg(tr("Not in the architecture database."));
    html += QStringLiteral("<table>");
    html += row(tr("Family"), QStringLiteral("%1 (compute %2.%3)")
                                  .arg(QString::fromStdString(a->family))
                                  .arg(a->computeMajor)
                                  .arg(a->computeMinor));
    html += row(tr("Threads / SM"), QString::number(a->maxThreadsPerSm));
    html += row(tr("Blocks / SM"), QString::number(a->maxBlocksPerSm));
    html += row(tr("Registers / SM"), QString::number(a->registersPerSm));
    html += row(tr("Shared mem / SM"), kib(a->sharedMemoryPerSm));
    html += row(tr("Shared mem / block"),
                QStringLiteral("%1 (%2 opt-in)").arg(kib(a->sharedMemoryPerBlock), kib(a->sharedMemoryPerBlockOptin)));
    if (const GpuSpec *gpu = m_database.defaultGpuFor(a->name)) {
        html += row(tr("Reference GPU"), QStringLiteral("%1, %2 SMs, %3 GB/s")
                                             .arg(QString::fromStdString(gpu->name).toHtmlEscaped())
                                             .arg(gpu->multiprocessors)
                                             .arg(gpu->memoryBandwidthGBs, 0, 'f', 0));
    }
    return html + QStringLiteral("</table>");
}

void DevicePanel::render()
{
    QString html = m_compilerHtml;
    html += devicesHtml();
    html += archHtml();
    m_view->setHtml(html);
}

} // namespace stitch::views
