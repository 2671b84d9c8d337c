// MainWindow's welcome page: the central area is a stack of the welcome page and the document's
// tabs (Source, Code). The studio started without a file, and File > Welcome, show the page;
// opening anything (an example, a recent file, Open, a project, New) shows the document again.
//   WelcomePage::exampleChosen -> openInteractively; recentChosen -> openRecent (a missing file is dropped)
#include "views/MainWindow.h"

#include "views/CodeEditor.h"
#include "views/WelcomePage.h"

#include <QAction>
#include <QStackedWidget>
#include <QTabWidget>

namespace stitch::views {

void MainWindow::createWelcome()
{
    m_welcome = new WelcomePage(m_recentFiles, m_openAction, m_openProjectAction, this);
    connect(m_welcome, &WelcomePage::exampleChosen, this, &MainWindow::openInteractively);
    connect(m_welcome, &WelcomePage::recentChosen, this, &MainWindow::openRecent);

    m_centralStack = new QStackedWidget(this);
    m_centralStack->setObjectName(QStringLiteral("centralStack"));
    QWidget *document = takeCentralWidget(); // the Source / Code tabs (createCodeDiff)
    m_centralStack->addWidget(m_welcome);
    m_centralStack->addWidget(document);
    m_centralStack->setCurrentWidget(document);
    setCentralWidget(m_centralStack);
}

void MainWindow::showWelcome()
{
    m_centralStack->setCurrentWidget(m_welcome);
    m_welcome->focusFirstList();
}

bool MainWindow::isWelcomeShown() const
{
    return m_centralStack && m_centralStack->currentWidget() == m_welcome;
}

void MainWindow::showDocument()
{
    if (!isWelcomeShown())
        return;
    m_centralStack->setCurrentWidget(m_centralTabs);
    m_editor->setFocus(Qt::OtherFocusReason);
}

} // namespace stitch::views
