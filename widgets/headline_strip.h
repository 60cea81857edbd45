#pragma once
// The headline strip: SQNR, max error, clipped %, codes used (and B's, when comparing).
#include <QWidget>

class QLabel;

namespace ql {

struct TensorOutcome;
class Banner;

class HeadlineStrip : public QWidget {
    Q_OBJECT
public:
    explicit HeadlineStrip(QWidget* parent = nullptr);
    void setOutcome(const TensorOutcome& outcome);
    void clear();
    /// Marks the figures as out of date (`why` says since what), or current again (empty).
    void setStale(const QString& why);
    bool isStale() const;
    /// The SQNR text shown (tests).
    QString sqnrText() const;
    /// The out-of-date and the NaN/Inf lines (tests).
    Banner* staleBanner() const { return m_stale; }
    Banner* nonFiniteBanner() const { return m_nonFinite; }

private:
    QLabel* m_sqnr;
    QLabel* m_maxError;
    QLabel* m_clipped;
    QLabel* m_codes;
    QLabel* m_cosine;
    Banner* m_stale;
    Banner* m_nonFinite; // what the figures leave out: NaN/Inf in the file or in x̂
    QString m_staleWhy;
};

} // namespace ql
