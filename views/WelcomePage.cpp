#include "views/WelcomePage.h"

#include "views/WelcomeModels.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListView>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QToolButton>
#include <QVBoxLayout>

#include <functional>

namespace stitch::views {

namespace {

// A list whose entries are opened by a click or by Enter on the current row (the arrow keys move
// it). Not QAbstractItemView::activated: a double click would open twice (click, then activate).
class ChoiceList final : public QListView {
public:
    explicit ChoiceList(QWidget *parent) : QListView(parent)
    {
        setUniformItemSizes(true);
        setAlternatingRowColors(true);
        setSelectionBehavior(QAbstractItemView::SelectRows);
        setSelectionMode(QAbstractItemView::SingleSelection);
        setEditTriggers(QAbstractItemView::NoEditTriggers);
        setTabKeyNavigation(false);
        connect(this, &QListView::clicked, this, [this](const QModelIndex &index) { choose(index); });
    }

    std::function<void(const QModelIndex &)> onChosen;

protected:
    void keyPressEvent(QKeyEvent *event) override
    {
        const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
        if (enter && (event->modifiers() & ~Qt::KeypadModifier) == Qt::NoModifier && currentIndex().isValid()) {
            choose(currentIndex());
            event->accept();
            return;
        }
        QListView::keyPressEvent(event);
    }

private:
    void choose(const QModelIndex &index)
    {
        if (index.isValid() && (index.flags() & Qt::ItemIsEnabled) && onChosen)
            onChosen(index);
    }
};

// Two lines per entry, from a row of the table models: the name (bold) and its kind, then the
// detail (an example's description, a recent file's folder), elided to the width.
class EntryDelegate final : public QStyledItemDelegate {
public:
    EntryDelegate(int kindColumn, int detailColumn, QObject *parent)
        : QStyledItemDelegate(parent), m_kindColumn(kindColumn), m_detailColumn(detailColumn)
    {
    }

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        QStyleOptionViewItem opt = option;
        initStyleOption(&opt, index);
        opt.text.clear();
        const QWidget *widget = opt.widget;
        QStyle *style = widget ? widget->style() : QApplication::style();
        style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget); // background, selection, focus

        const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
                                           : (opt.state & QStyle::State_Active) ? QPalette::Active
                                                                                : QPalette::Inactive;
        const bool selected = opt.state & QStyle::State_Selected;
        const QColor text = opt.palette.color(group, selected ? QPalette::HighlightedText : QPalette::Text);
        const QColor dim = selected ? text : opt.palette.color(group, QPalette::PlaceholderText);
        QFont bold = opt.font;
        bold.setBold(true);
        const QFontMetrics boldMetrics(bold), metrics(opt.font);
        const QRect r = opt.rect.adjusted(kPad, kPad, -kPad, -kPad);
        const QRect first(r.left(), r.top(), r.width(), boldMetrics.height());
        const QRect second(r.left(), first.bottom() + 1 + kGap, r.width(), metrics.height());

        painter->save();
        const QString name = index.siblingAtColumn(0).data().toString();
        painter->setFont(bold);
        painter->setPen(text);
        painter->drawText(first, Qt::AlignLeft | Qt::AlignVCenter, boldMetrics.elidedText(name, Qt::ElideMiddle, first.width()));
        const int kindLeft = first.left() + boldMetrics.horizontalAdvance(name) + 2 * kPad;
        painter->setFont(opt.font);
        painter->setPen(dim);
        if (kindLeft < first.right())
            painter->drawText(QRect(kindLeft, first.top(), first.right() - kindLeft, first.height()),
                              Qt::AlignLeft | Qt::AlignVCenter,
                              metrics.elidedText(index.siblingAtColumn(m_kindColumn).data().toString(), Qt::ElideRight,
                                                 first.right() - kindLeft));
        painter->setPen(text);
        painter->drawText(second, Qt::AlignLeft | Qt::AlignVCenter,
                          metrics.elidedText(index.siblingAtColumn(m_detailColumn).data().toString(), Qt::ElideRight,
                                             second.width()));
        painter->restore();
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &) const override
    {
        QFont bold = option.font;
        bold.setBold(true);
        return {200, QFontMetrics(bold).height() + kGap + QFontMetrics(option.font).height() + 2 * kPad};
    }

private:
    static constexpr int kPad = 4, kGap = 2;
    int m_kindColumn, m_detailColumn;
};

QLabel *sectionTitle(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.15);
    label->setFont(font);
    return label;
}

QToolButton *actionButton(QAction *action, QWidget *parent)
{
    auto *button = new QToolButton(parent);
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setAutoRaise(false);
    return button;
}

} // namespace

WelcomePage::WelcomePage(RecentFiles &recent, QAction *open, QAction *openProject, QWidget *parent)
    : QWidget(parent), m_examples(new ExamplesModel(this)), m_recent(new RecentFilesModel(recent, this)),
      m_examplesView(new ChoiceList(this)), m_recentView(new ChoiceList(this)),
      m_examplesTitle(sectionTitle(tr("Examples"), this)), m_examplesNote(new QLabel(this)),
      m_recentTitle(sectionTitle(tr("Recent files"), this))
{
    setObjectName(QStringLiteral("welcomePage"));
    m_examplesView->setObjectName(QStringLiteral("welcomeExamples"));
    m_recentView->setObjectName(QStringLiteral("welcomeRecent"));
    m_examplesView->setModel(m_examples);
    m_recentView->setModel(m_recent);
    m_examplesView->setItemDelegate(
        new EntryDelegate(ExamplesModel::KindColumn, ExamplesModel::DescriptionColumn, m_examplesView));
    m_recentView->setItemDelegate(new EntryDelegate(RecentFilesModel::KindColumn, RecentFilesModel::FolderColumn, m_recentView));
    static_cast<ChoiceList *>(m_examplesView)->onChosen = [this](const QModelIndex &index) {
        emit exampleChosen(m_examples->path(index));
    };
    static_cast<ChoiceList *>(m_recentView)->onChosen = [this](const QModelIndex &index) {
        emit recentChosen(m_recent->path(index));
    };
    m_examplesView->setToolTip(tr("A click or Enter opens the example"));
    m_recentView->setToolTip(tr("A click or Enter opens the file"));
    connect(m_recent, &QAbstractItemModel::modelReset, this, &WelcomePage::updateSections);
    connect(m_examples, &QAbstractItemModel::modelReset, this, &WelcomePage::updateSections);

    auto *title = new QLabel(tr("StitchCUDA Studio"), this);
    QFont titleFont = title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.8);
    title->setFont(titleFont);
    auto *intro = new QLabel(tr("Open a CUDA program or a tensor-expression file: the studio compiles it with NVRTC, "
                                "lifts it into a graph, scores it with the rubric, and Optimize (Ctrl+R) lets the "
                                "agents turn it into fast CUDA, step by step."),
                             this);
    intro->setWordWrap(true);
    m_examplesNote->setWordWrap(true);
    m_examplesNote->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(actionButton(open, this));
    buttons->addWidget(actionButton(openProject, this));
    buttons->addStretch();

    auto *column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(intro);
    column->addSpacing(8);
    column->addLayout(buttons);
    column->addSpacing(8);
    column->addWidget(m_examplesTitle);
    column->addWidget(m_examplesNote);
    column->addWidget(m_examplesView, 3);
    column->addSpacing(8);
    column->addWidget(m_recentTitle);
    column->addWidget(m_recentView, 2);

    // A readable column in the middle of a wide window.
    auto *content = new QWidget(this);
    content->setLayout(column);
    content->setMaximumWidth(1100);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(24, 16, 24, 16);
    layout->addStretch(1);
    layout->addWidget(content, 20);
    layout->addStretch(1);

    setTabOrder(m_examplesView, m_recentView);
    setExamplesDirectory(bundledExamplesDirectory());
}

void WelcomePage::setExamplesDirectory(const QString &directory)
{
    m_examples->setDirectory(directory);
}

void WelcomePage::updateSections()
{
    const bool hasExamples = m_examples->rowCount() > 0;
    m_examplesView->setVisible(hasExamples);
    m_examplesNote->setVisible(!hasExamples);
    m_examplesNote->setText(
        m_examples->directory().isEmpty()
            ? tr("The bundled examples were not found: neither share/stitchcuda/examples beside this program nor "
                 "the source tree's examples folder exists.")
            : tr("No examples (*.cu, *.te) in %1.").arg(QDir::toNativeSeparators(m_examples->directory())));
    // No recent files yet: the section is left out rather than shown empty.
    const bool hasRecent = m_recent->rowCount() > 0;
    m_recentTitle->setVisible(hasRecent);
    m_recentView->setVisible(hasRecent);
}

void WelcomePage::focusFirstList()
{
    QAbstractItemView *view = m_examples->rowCount() > 0 ? m_examplesView : m_recentView;
    if (view->model()->rowCount() == 0)
        return;
    if (!view->currentIndex().isValid())
        view->setCurrentIndex(view->model()->index(0, 0));
    view->setFocus(Qt::OtherFocusReason);
}

} // namespace stitch::views
