#pragma once
// A line of news above the plots ("Out of date: …", "3 NaN in the file"): at most a few lines high
// however long the text or small the window (the rest in its tooltip), and closable until the
// message changes.
#include <QFrame>

class QLabel;
class QToolButton;

namespace ql {

class Banner : public QFrame {
    Q_OBJECT
public:
    /// `style`: the banner's colours as a style sheet ("background: …; color: …").
    explicit Banner(const QString& style, QWidget* parent = nullptr);

    /// Shows `text` (plain) again even if an earlier message was closed; empty hides the banner.
    /// The same text as now changes nothing, a closed banner stays closed.
    void setMessage(const QString& text);
    QString message() const { return m_message; }
    /// What the tooltip says while the whole message fits; a shortened one shows the message there.
    void setHint(const QString& hint);
    /// Lines shown at most (2 by default); a longer message ends in "…".
    void setMaxLines(int lines);
    /// The text as shown, shortened or not (tests).
    QString shownText() const;
    /// True after the user closed it, until the next message.
    bool isDismissed() const { return m_dismissed; }
    QToolButton* closeButton() const { return m_close; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fit();

    QLabel* m_text;
    QToolButton* m_close;
    QString m_message;
    QString m_hint;
    int m_maxLines = 2;
    bool m_dismissed = false;
};

} // namespace ql
