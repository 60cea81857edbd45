#pragma once
// Checks of what a person sees of a plot, shared by the window suites.
#include "widgets/qcp.h"

#include <QFontMetrics>
#include <QString>
#include <QTest>
#include <cmath>

namespace qltest {

/// Tick labels never run into each other: along x, neighbours' texts leave a gap; along y, a line of
/// text fits between neighbours. `which` names the plot in a failure.
inline void verifyTickLabelsApart(QCustomPlot* plot, const QString& which) {
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        const QVector<double> ticks = axis->tickVector();
        const QVector<QString> labels = axis->tickVectorLabels();
        const QFontMetrics fm(axis->tickLabelFont());
        for (qsizetype i = 1; i < ticks.size() && i < labels.size(); ++i) {
            const double apart = std::abs(axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1]));
            const double needs =
                axis == plot->xAxis
                    ? (fm.horizontalAdvance(labels[i]) + fm.horizontalAdvance(labels[i - 1])) / 2.0
                    : 0.8 * fm.height();
            QVERIFY2(apart >= needs,
                     qPrintable(QStringLiteral("%1: labels '%2' and '%3' %4 px apart, need %5")
                                    .arg(which, labels[i - 1], labels[i])
                                    .arg(apart)
                                    .arg(needs)));
        }
    }
}

} // namespace qltest
