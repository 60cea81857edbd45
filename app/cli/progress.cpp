#include "cli/progress.h"

#include "io/printable.h"

#include <cstdio>
#include <unistd.h>

namespace ql::cli {

ProgressPrinter::ProgressPrinter(bool quiet)
    : m_enabled(!quiet && ::isatty(STDERR_FILENO)) {}

ProgressPrinter::~ProgressPrinter() {
    finish();
}

void ProgressPrinter::begin(int index, int total, const std::string& label) {
    m_label = "[" + std::to_string(index + 1) + "/" + std::to_string(total) + "] " + printable(label);
    // Cut by bytes, escaped again: a cut through a UTF-8 sequence shows as \xNN, never as raw bytes.
    if (m_label.size() > 60) m_label = printable("..." + m_label.substr(m_label.size() - 57));
    m_lastPermille = -1;
    draw(0.0);
}

ProgressFn ProgressPrinter::callback() {
    return [this](double done) {
        draw(done);
        return true; // the CLI never cancels; Ctrl-C ends the process
    };
}

void ProgressPrinter::draw(double done) {
    if (!m_enabled) return;
    const int permille = static_cast<int>(done * 1000);
    if (permille == m_lastPermille) return;
    m_lastPermille = permille;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(done * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, ' ');
    std::fprintf(stderr, "\r\033[K[%s] %5.1f%% %s", bar.c_str(), done * 100.0, m_label.c_str());
    std::fflush(stderr);
    m_drawn = true;
}

void ProgressPrinter::finish() {
    if (!m_drawn) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    m_drawn = false;
}

} // namespace ql::cli
