#include "widgets/banner.h"

#include "widgets/qt_util.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QTextLayout>
#include <QToolButton>

namespace ql {

Banner::Banner(const QString& style, QWidget* parent)
    : QFrame(parent)
    , m_text(new QLabel(this))
    , m_close(new QToolButton(this)) {
    setStyleSheet(style);                 // the frame, its text and its button alike
    m_text->setTextFormat(Qt::PlainText); // messages quote names from files: never read as HTML
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setMargin(2);
    // The lines are laid out here (fit), so the label never asks for the message's whole width.
    m_text->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_text->setMinimumWidth(1);
    m_close->setText(QStringLiteral("✕"));
    m_close->setAutoRaise(true);
    m_close->setToolTip(tr("Close this message (it comes back when there is news)"));
    connect(m_close, &QToolButton::clicked, this, [this] {
        m_dismissed = true;
        hide();
    });
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(2);
    row->addWidget(m_text, 1);
    row->addWidget(m_close, 0, Qt::AlignTop);
    setVisible(false);
}

void Banner::setMessage(const QString& text) {
    if (text == m_message) return;
    m_message = text;
    m_dismissed = false;
    fit();
    setVisible(!text.isEmpty());
}

void Banner::setHint(const QString& hint) {
    m_hint = hint;
    fit();
}

void Banner::setMaxLines(int lines) {
    m_maxLines = std::max(lines, 1);
    fit();
}

QString Banner::shownText() const {
    return m_text->text();
}

void Banner::resizeEvent(QResizeEvent* event) {
    QFrame::resizeEvent(event);
    fit();
}

// The message wrapped at the label's width; past the last line allowed, the rest elided into it.
void Banner::fit() {
    const int width = std::max(m_text->contentsRect().width() - 2 * m_text->margin(), 40);
    const QFontMetrics metrics(m_text->font());
    const QStringList paragraphs = m_message.split(QLatin1Char('\n'));
    QStringList lines;
    bool cut = false;
    for (qsizetype p = 0; p < paragraphs.size() && !cut; ++p) {
        if (static_cast<int>(lines.size()) == m_maxLines) { // a paragraph left over
            cut = true;
            break;
        }
        const QString& paragraph = paragraphs[p];
        QTextLayout layout(paragraph, m_text->font());
        layout.beginLayout();
        for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
            line.setLineWidth(width);
            if (static_cast<int>(lines.size()) + 1 == m_maxLines) { // the last line allowed takes the rest
                const QString rest = paragraph.mid(line.textStart());
                const QString shown = metrics.elidedText(rest, Qt::ElideRight, width);
                cut = shown != rest || p + 1 < paragraphs.size();
                lines << shown;
                break;
            }
            lines << paragraph.mid(line.textStart(), line.textLength()).trimmed();
        }
        layout.endLayout();
    }
    if (cut && !lines.isEmpty() && !lines.last().endsWith(QStringLiteral("…")))
        lines.last() = metrics.elidedText(lines.last() + QStringLiteral(" …"), Qt::ElideRight, width);
    m_text->setText(lines.join(QLatin1Char('\n')));
    setToolTip(cut ? plainToolTip(m_message) : m_hint);
}

} // namespace ql
