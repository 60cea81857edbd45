#include "widgets/headline_strip.h"

#include "job/job.h"
#include "report/model_table.h"
#include "widgets/banner.h"
#include "widgets/qt_util.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace ql {
namespace {

QLabel* tile(QWidget* parent, QHBoxLayout* layout, const QString& tip) {
    auto* l = new QLabel(parent);
    l->setToolTip(tip);
    l->setFrameShape(QFrame::StyledPanel);
    l->setMargin(4);
    l->setTextFormat(Qt::RichText);
    // A | B figures wrap at their spaces rather than widening the window's centre, which would take
    // the width from the tensor names in the dock.
    l->setWordWrap(true);
    layout->addWidget(l, 1);
    return l;
}

QString both(const QString& a, const std::optional<QString>& b) {
    return b ? a + QStringLiteral(" | ") + *b : a;
}

} // namespace

HeadlineStrip::HeadlineStrip(QWidget* parent)
    : QWidget(parent) {
    auto* rows = new QVBoxLayout(this);
    rows->setContentsMargins(0, 0, 0, 0);
    rows->setSpacing(2);
    auto* layout = new QHBoxLayout;
    layout->setContentsMargins(0, 0, 0, 0);
    rows->addLayout(layout);
    m_sqnr = tile(this, layout,
                  tr("Signal-to-quantization-noise ratio in dB: 10·log10(Σx² / Σ(x−x̂)²); higher is better"));
    m_maxError = tile(this, layout, tr("Largest absolute error |x − x̂| over the tensor"));
    m_clipped = tile(this, layout, tr("Share of elements cut off by the code range"));
    m_codes =
        tile(this, layout, tr("How many of the target's codes occur, and their entropy (effective bits)"));
    m_cosine = tile(this, layout, tr("Cosine similarity between x and x̂"));
    // Lines under the tiles, hidden until there is something to say, closable, two lines at most
    // (a small window keeps its plots).
    m_stale = new Banner(QStringLiteral("background: #fff4ce; color: #5c4400;"), this);
    m_stale->setHint(tr("The figures and plots are from the last run; the settings have changed since. Run "
                        "(Ctrl+R) to update them."));
    m_nonFinite = new Banner(QStringLiteral("background: #fde7e9; color: #8a0018;"), this);
    rows->addWidget(m_stale);
    rows->addWidget(m_nonFinite);
    clear();
}

void HeadlineStrip::setStale(const QString& why) {
    m_staleWhy = why;
    m_stale->setMessage(why.isEmpty()
                            ? QString()
                            : tr("Out of date: %1 Run (Ctrl+R) to update the figures and plots.").arg(why));
    for (QLabel* l : {m_sqnr, m_maxError, m_clipped, m_codes, m_cosine})
        l->setEnabled(why.isEmpty());
}

bool HeadlineStrip::isStale() const {
    return !m_staleWhy.isEmpty(); // closing the banner does not make the figures current
}

void HeadlineStrip::clear() {
    for (QLabel* l : {m_sqnr, m_maxError, m_clipped, m_codes, m_cosine})
        l->setText(QStringLiteral("—"));
    m_nonFinite->setMessage({});
    setStale({});
}

QString HeadlineStrip::sqnrText() const {
    return m_sqnr->text();
}

void HeadlineStrip::setOutcome(const TensorOutcome& o) {
    setStale({});
    auto field = [&](auto get) -> std::pair<QString, std::optional<QString>> {
        std::optional<QString> b;
        if (o.b) b = get(o.b->report.analysis);
        return {get(o.a.report.analysis), b};
    };
    auto show = [](QLabel* l, const QString& name, const std::pair<QString, std::optional<QString>>& v) {
        l->setText(QStringLiteral("<small>%1</small><br><b>%2</b>").arg(name, both(v.first, v.second)));
    };
    show(m_sqnr, tr("SQNR"), field([](const TensorAnalysis& a) -> QString {
             return fmtNumber(a.stats.sqnrDb(), 4) + tr(" dB");
         }));
    if (o.a.report.weighted) { // the layer output's SQNR, from the importance file
        QString w = fmtNumber(o.a.report.weighted->sqnrDb(), 4);
        if (o.b && o.b->report.weighted)
            w += QStringLiteral(" | ") + fmtNumber(o.b->report.weighted->sqnrDb(), 4);
        m_sqnr->setText(m_sqnr->text() + tr("<br><small>weighted</small> <b>%1 dB</b>").arg(w));
    }
    show(m_maxError, tr("max |error|"),
         field([](const TensorAnalysis& a) -> QString { return fmtNumber(a.stats.maxAbsError()); }));
    show(m_clipped, tr("clipped"), field([](const TensorAnalysis& a) -> QString {
             return fmtNumber(100.0 * a.clipping.total().clippedFraction(), 3) + tr(" %");
         }));
    show(m_codes, tr("codes used"), field([](const TensorAnalysis& a) -> QString {
             return tr("%1 / %2 (%3 bits)")
                 .arg(a.codes.codesUsed())
                 .arg(fmtNumber(a.codes.possibleCodes(), 6), fmtNumber(a.codes.entropyBits(), 3));
         }));
    show(m_cosine, tr("cosine"),
         field([](const TensorAnalysis& a) -> QString { return fmtNumber(a.stats.cosine(), 6); }));
    auto note = [](const SideOutcome& run, const QString& side) {
        const ErrorStats& s = run.report.analysis.stats;
        const std::string n = nonFiniteNote(s.nanCount() + s.infCount(), s.nonFiniteOutputCount());
        return n.empty() ? QString() : side + qs(n) + QStringLiteral(".");
    };
    QStringList notes{note(o.a, o.b ? QStringLiteral("A: ") : QString())};
    if (o.b) notes << note(*o.b, QStringLiteral("B: "));
    notes.removeAll(QString());
    m_nonFinite->setMessage({}); // each run's news shows, even in the words a closed one used
    m_nonFinite->setMessage(notes.join(QLatin1Char(' ')));
}

} // namespace ql
