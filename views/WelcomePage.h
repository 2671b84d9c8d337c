#pragma once
// The welcome page: what the central area shows when the studio starts without a file (and on
// File > Welcome): the bundled examples and the recent files, each opened by a click or Enter,
// and the Open and Open Project actions.
//   ExamplesModel, RecentFilesModel (WelcomeModels.h) -> two lists -> openRequested(path)
//   -> MainWindow opens it (asking about unsaved changes) and shows the editor

#include <QWidget>

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QAbstractItemView;
QT_END_NAMESPACE

namespace stitch::views {

class ExamplesModel;
class RecentFiles;
class RecentFilesModel;

class WelcomePage final : public QWidget {
    Q_OBJECT
public:
    /// `recent` is the window's recent-files list; `open` and `openProject` the window's actions.
    WelcomePage(RecentFiles &recent, QAction *open, QAction *openProject, QWidget *parent = nullptr);

    /// Lists the examples of `directory` (bundledExamplesDirectory() at construction).
    void setExamplesDirectory(const QString &directory);

    ExamplesModel *examples() const { return m_examples; }
    RecentFilesModel *recent() const { return m_recent; }
    /// The two lists (list views over column 0 of the models, two lines per entry).
    QAbstractItemView *examplesView() const { return m_examplesView; }
    QAbstractItemView *recentView() const { return m_recentView; }
    /// Keyboard focus on the first list with an entry, its current row set.
    void focusFirstList();

signals:
    /// An example was chosen (a click, or Enter on the current row).
    void exampleChosen(const QString &path);
    /// A recent file was chosen.
    void recentChosen(const QString &path);

private:
    void updateSections();

    ExamplesModel *m_examples;
    RecentFilesModel *m_recent;
    QAbstractItemView *m_examplesView, *m_recentView;
    QLabel *m_examplesTitle, *m_examplesNote, *m_recentTitle;
};

} // namespace stitch::views
