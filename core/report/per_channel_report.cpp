#include "report/per_channel_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ql {
namespace {

using nlohmann::json;

// The columns, to sink.numbers / sink.counts (key, rows, value of row g) and sink.value(key, json),
// in the order the library's sorted objects print their keys.
template <typename Sink> void perChannelColumns(const TensorReport& r, const ReportOptions& opt, Sink& sink) {
    const GroupRows& rows = r.analysis.clipping.groups();
    const QuantParams& params = r.params;
    const std::size_t all = r.analysis.clipping.groupCount();
    const std::size_t n = std::min(rows.size(), opt.maxGroups);
    auto of = [&rows](auto field) { return [&rows, field](std::size_t g) { return field(rows[g]); }; };
    sink.numbers("clip_error_sq", n, of([](const GroupClipping& c) { return c.clipErrorSq; }));
    sink.numbers("clipped_fraction", n, of([](const GroupClipping& c) { return c.clippedFraction(); }));
    sink.counts("clipped_high", n, of([](const GroupClipping& c) { return c.clippedHigh; }));
    sink.counts("clipped_low", n, of([](const GroupClipping& c) { return c.clippedLow; }));
    sink.counts("count", n, of([](const GroupClipping& c) { return c.count; }));
    sink.counts("flushed_to_zero", n, of([](const GroupClipping& c) { return c.flushedToZero; }));
    sink.value("groups", json(all));
    sink.numbers("max_abs_error", n, of([](const GroupClipping& c) { return c.maxAbsError; }));
    sink.numbers("round_error_sq", n, of([](const GroupClipping& c) { return c.roundErrorSq; }));
    sink.numbers("scale", n, [&params](std::size_t g) {
        return g < params.scales.size() ? static_cast<double>(params.scales[g]) : std::nan("");
    });
    sink.numbers("sqnr_db", n, of([](const GroupClipping& c) { return c.sqnrDb(); }));
    sink.numbers("sum_sq_x", n, of([](const GroupClipping& c) { return c.sumSqX; }));
    sink.value("truncated", json(all > n));
    sink.numbers("zero_point", n, [&params](std::size_t g) {
        return static_cast<double>(params.zeroPointOf(static_cast<std::int64_t>(g)));
    });
}

struct TreeSink {
    json object = json::object();
    template <typename Fn> void numbers(const char* key, std::size_t n, Fn at) {
        json column = json::array();
        for (std::size_t g = 0; g < n; ++g)
            column.push_back(jsonNumber(at(g)));
        object[key] = std::move(column);
    }
    template <typename Fn> void counts(const char* key, std::size_t n, Fn at) {
        json column = json::array();
        for (std::size_t g = 0; g < n; ++g)
            column.push_back(at(g));
        object[key] = std::move(column);
    }
    void value(const char* key, const json& v) { object[key] = v; }
};

// nlohmann::json's pretty printing with an indent of one, appended to one string. Its numbers come
// from the library's own shortest-digits routine, so a merged report, which the library prints,
// reads byte for byte as a whole one (tst_analysis_report checks the two against each other).
class TextSink {
public:
    TextSink(std::string& out, int depth)
        : m_out(out)
        , m_object(out, depth)
        , m_depth(depth) {}
    template <typename Fn> void numbers(const char* key, std::size_t n, Fn at) {
        column(key, n, [&](std::size_t g, char* p, char* end) {
            const double v = at(g);
            if (!std::isfinite(v)) return std::copy_n("null", 4, p);
            return nlohmann::detail::to_chars(p, end, v);
        });
    }
    template <typename Fn> void counts(const char* key, std::size_t n, Fn at) {
        column(key, n, [&](std::size_t g, char* p, char* end) {
            return std::to_chars(p, end, static_cast<std::int64_t>(at(g))).ptr;
        });
    }
    void value(const char* key, const json& v) {
        m_object.key(key);
        m_out += v.dump();
    }
    void finish() { m_object.close(); }

private:
    // Each number on a line of its own, the line made in a buffer and appended at once:
    // put(g, p, end) writes row g's number at p and returns its end.
    template <typename Put> void column(const char* key, std::size_t n, Put&& put) {
        m_object.key(key);
        if (n == 0) {
            m_out += "[]";
            return;
        }
        m_out += "[\n";
        const auto indent = static_cast<std::size_t>(m_depth) + 2;
        char line[128];
        if (indent + 40 > sizeof line) throw std::logic_error("JSON text: nested too deep for a column");
        std::fill_n(line, indent, ' ');
        for (std::size_t g = 0; g < n; ++g) {
            char* p = put(g, line + indent, line + sizeof line - 2);
            if (g + 1 < n) *p++ = ',';
            *p++ = '\n';
            m_out.append(line, static_cast<std::size_t>(p - line));
        }
        m_out.append(static_cast<std::size_t>(m_depth) + 1, ' ');
        m_out += ']';
    }

    std::string& m_out;
    JsonObjectText m_object;
    int m_depth;
};

} // namespace

JsonObjectText::JsonObjectText(std::string& out, int depth)
    : m_out(out)
    , m_depth(depth) {
    m_out += '{';
}

void JsonObjectText::key(const std::string& k) {
    if (!m_first && !(m_last < k)) throw std::logic_error("JSON text: key \"" + k + "\" out of order");
    m_out += m_first ? "\n" : ",\n";
    m_first = false;
    m_last = k;
    m_out.append(static_cast<std::size_t>(m_depth) + 1, ' ');
    m_out += json(k).dump(-1, ' ', false, json::error_handler_t::replace);
    m_out += ": ";
}

void JsonObjectText::close() {
    if (m_first) { // the library prints an empty object as {}
        m_out += '}';
        return;
    }
    m_out += '\n';
    m_out.append(static_cast<std::size_t>(m_depth), ' ');
    m_out += '}';
}

json perChannelJson(const TensorReport& r, const ReportOptions& opt) {
    TreeSink sink;
    perChannelColumns(r, opt, sink);
    return std::move(sink.object);
}

void appendPerChannelText(std::string& out, const TensorReport& r, const ReportOptions& opt, int depth) {
    TextSink sink(out, depth);
    perChannelColumns(r, opt, sink);
    sink.finish();
}

} // namespace ql
