#pragma once
// KSyntaxHighlighting definitions and themes, plus the studio's own CUDA and PTX definitions.
//   resources/syntax/{cuda,ptx}.xml (Qt resource) -> SyntaxRepository -> CodeEditor highlighters
// Loading a repository parses every bundled definition's index, so the studio makes one and
// passes it to each editor instead of every editor making its own.

#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/Theme>

#include <QString>

QT_BEGIN_NAMESPACE
class QPalette;
QT_END_NAMESPACE

namespace stitch::views {

class SyntaxRepository final {
public:
    /// Resource folder registered as a custom search path; holds syntax/cuda.xml and syntax/ptx.xml.
    static QString searchPath();

    SyntaxRepository();
    SyntaxRepository(const SyntaxRepository &) = delete;
    SyntaxRepository &operator=(const SyntaxRepository &) = delete;

    KSyntaxHighlighting::Repository &repository() { return m_repository; }

    KSyntaxHighlighting::Definition cudaDefinition() const;
    KSyntaxHighlighting::Definition ptxDefinition() const;
    /// Definition for a file name, CUDA for .cu/.cuh and anything unknown.
    KSyntaxHighlighting::Definition definitionForFile(const QString &fileName) const;
    /// A light or dark theme matching the palette's base colour.
    KSyntaxHighlighting::Theme themeFor(const QPalette &palette) const;

private:
    KSyntaxHighlighting::Repository m_repository;
};

} // namespace stitch::views
