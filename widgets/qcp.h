#pragma once
// The one include of QCustomPlot. Its header uses Q_FOREACH in inline code, which a build with
// QT_NO_FOREACH would reject (Hotspot wraps it the same way).
#ifdef QT_NO_FOREACH
#undef QT_NO_FOREACH
#define QL_RESTORE_NO_FOREACH
#endif
#include <qcustomplot.h>
#ifdef QL_RESTORE_NO_FOREACH
#define QT_NO_FOREACH
#undef QL_RESTORE_NO_FOREACH
#endif
