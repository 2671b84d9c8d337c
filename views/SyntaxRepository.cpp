#include "views/SyntaxRepository.h"

#include <QFileInfo>
#include <QPalette>

// qt_add_resources on a static library needs an explicit initializer in the consumer.
static void initSyntaxResources()
{
    Q_INIT_RESOURCE(stitchcuda_syntax);
}

namespace stitch::views {

QString SyntaxRepository::searchPath()
{
    return QStringLiteral(":/stitchcuda/highlighting");
}

SyntaxRepository::SyntaxRepository()
{
    initSyntaxResources();
    m_repository.addCustomSearchPath(searchPath());
}

KSyntaxHighlighting::Definition SyntaxRepository::cudaDefinition() const
{
    return m_repository.definitionForName(QStringLiteral("CUDA"));
}

KSyntaxHighlighting::Definition SyntaxRepository::ptxDefinition() const
{
    return m_repository.definitionForName(QStringLiteral("PTX"));
}

KSyntaxHighlighting::Definition SyntaxRepository::definitionForFile(const QString &fileName) const
{
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("ptx"))
        return ptxDefinition();
    if (suffix.isEmpty() || suffix == QLatin1String("cu") || suffix == QLatin1String("cuh"))
        return cudaDefinition();
    const auto def = m_repository.definitionForFileName(fileName);
    return def.isValid() ? def : cudaDefinition();
}

KSyntaxHighlighting::Theme SyntaxRepository::themeFor(const QPalette &palette) const
{
    // Breeze Light/Dark: readable on both palettes, and what KDE and Qt Creator users know.
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    return m_repository.defaultTheme(dark ? KSyntaxHighlighting::Repository::DarkTheme
                                          : KSyntaxHighlighting::Repository::LightTheme);
}

} // namespace stitch::views
