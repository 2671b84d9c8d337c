#pragma once
// The Device dock: compiler and GPU facts the other panels depend on.
//   NVRTC version + DriverApi (probed on a worker) + ArchDatabase limits of the chosen arch -> HTML
// Loading the driver can take seconds (or hang on a broken install), so it never runs on the GUI
// thread; without a driver the panel says why, and everything else keeps working.

#include "core/arch/ArchDatabase.h"
#include "core/cuda/DriverApi.h"

#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QTextBrowser;
QT_END_NAMESPACE

namespace stitch::views {

/// What the driver probe found: GPUs, or why there are none.
struct DeviceProbe {
    bool driverLoaded = false;
    int driverVersion = 0;
    std::vector<cuda::DeviceInfo> devices;
    QString problem; ///< set when there is no usable GPU
};

class DevicePanel final : public QWidget {
    Q_OBJECT
public:
    /// The probe function runs on a worker thread; tests replace it.
    using ProbeFunction = std::function<DeviceProbe()>;

    /// `database` must outlive the panel.
    explicit DevicePanel(const ArchDatabase &database, QWidget *parent = nullptr);
    ~DevicePanel() override;

    void setProbeFunction(ProbeFunction probe);
    /// Starts a probe unless one is running.
    void refresh();
    bool isProbing() const { return m_probing; }
    bool hasProbed() const { return m_probe.has_value(); }
    const DeviceProbe *probe() const { return m_probe ? &*m_probe : nullptr; }

    void setArchitecture(const QString &arch);
    QString text() const; ///< the panel as plain text

    /// The real probe: DriverApi::load() and devices().
    static DeviceProbe probeDriver();

signals:
    void probeFinished();

private:
    void render();
    QString archHtml() const;
    QString devicesHtml() const;

    const ArchDatabase &m_database;
    QTextBrowser *m_view = nullptr;
    QString m_compilerHtml; ///< NVRTC facts; fixed for the process, so built once
    ProbeFunction m_probeFunction;
    std::optional<DeviceProbe> m_probe;
    QString m_arch = QStringLiteral("sm_90");
    bool m_probing = false;
};

} // namespace stitch::views
