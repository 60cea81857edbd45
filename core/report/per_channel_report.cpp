#include "report/per_channel_report.h"

#include "base/mapped_memory.h"
#include "base/workers.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

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

// nlohmann::json's pretty printing with an indent of one. Its numbers come from the library's own
// shortest-digits routine, so a merged report, which the library prints, reads byte for byte as a
// whole one (tst_analysis_report checks the two against each other). The columns are printed in
// finish(), each into its own stretch of one buffer, those of many rows on several threads (printing
// fifty thousand numbers was most of writing a report), then put in order: appended to `out`, or,
// given `put`, passed to it one by one after the text before them.
class TextSink {
public:
    TextSink(std::string& out, int depth, const TextPut* put)
        : m_out(out)
        , m_object(out, depth)
        , m_depth(depth)
        , m_put(put) {}
    template <typename Fn> void numbers(const char* key, std::size_t n, Fn at) {
        column(key, n, [at](std::size_t g, char* p) {
            const double v = at(g);
            if (!std::isfinite(v)) return std::copy_n("null", 4, p);
            return nlohmann::detail::to_chars(p, p + kNumber, v);
        });
    }
    template <typename Fn> void counts(const char* key, std::size_t n, Fn at) {
        column(key, n, [at](std::size_t g, char* p) {
            return std::to_chars(p, p + kNumber, static_cast<std::int64_t>(at(g))).ptr;
        });
    }
    void value(const char* key, const json& v) { m_members.push_back({key, 0, {}, v.dump()}); }
    void finish() {
        std::vector<std::size_t> at(m_members.size() + 1, 0); // each member's stretch of the buffer
        std::size_t rows = 0;
        for (std::size_t i = 0; i < m_members.size(); ++i) {
            at[i + 1] = at[i] + roomFor(m_members[i].rows);
            rows += m_members[i].rows;
        }
        const mapped::Scratch scratch(std::max<std::size_t>(at.back(), 1)); // a megabyte for 4096 rows
        char* const buffer = static_cast<char*>(scratch.data());
        std::vector<std::size_t> lengths(m_members.size(), 0);
        constexpr std::size_t kRowsPerThread = 4096; // fewer: starting a thread costs more than it saves
        const auto threads =
            static_cast<unsigned>(std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()),
                                                         m_members.size(), rows / kRowsPerThread + 1}));
        std::atomic<std::size_t> next{0};
        runOnWorkers(threads, [&](unsigned) {
            for (std::size_t i; (i = next.fetch_add(1)) < m_members.size();)
                if (m_members[i].print) lengths[i] = m_members[i].print(buffer + at[i]);
        });
        for (std::size_t i = 0; i < m_members.size(); ++i) {
            const Member& m = m_members[i];
            m_object.key(m.key);
            const std::string_view text = m.print ? std::string_view(buffer + at[i], lengths[i]) : m.text;
            if (m_put && m.print) {
                (*m_put)(m_out);
                m_out.clear();
                (*m_put)(text);
            } else {
                m_out += text;
            }
        }
        m_object.close();
    }

private:
    // Room for a number: a sign and the 24 characters nlohmann::detail::to_chars asks for (it prints at
    // most that many).
    static constexpr int kNumber = 25;
    struct Member {
        const char* key;
        std::size_t rows;
        std::function<std::size_t(char*)> print; // a column: its text at the pointer; returns its length
        std::string text;                        // else the value's text
    };
    // The room a column of `rows` takes at most: a line each (the indent, a number, a comma and a
    // newline) and its brackets.
    std::size_t roomFor(std::size_t rows) const {
        return rows * (static_cast<std::size_t>(m_depth) + 2 + kNumber + 2) +
               static_cast<std::size_t>(m_depth) + 4;
    }
    // Each number on a line of its own: put(g, p) writes row g's number at p and returns its end.
    template <typename Put> void column(const char* key, std::size_t n, Put put) {
        const auto depth = static_cast<std::size_t>(m_depth);
        m_members.push_back({key,
                             n,
                             [n, put, depth](char* start) {
                                 char* p = start;
                                 if (n == 0) return static_cast<std::size_t>(std::copy_n("[]", 2, p) - start);
                                 p = std::copy_n("[\n", 2, p);
                                 for (std::size_t g = 0; g < n; ++g) {
                                     p = std::fill_n(p, depth + 2, ' ');
                                     p = put(g, p);
                                     if (g + 1 < n) *p++ = ',';
                                     *p++ = '\n';
                                 }
                                 p = std::fill_n(p, depth + 1, ' ');
                                 *p++ = ']';
                                 return static_cast<std::size_t>(p - start);
                             },
                             {}});
    }

    std::string& m_out;
    JsonObjectText m_object;
    int m_depth;
    const TextPut* m_put;
    std::vector<Member> m_members;
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

void appendPerChannelText(std::string& out, const TensorReport& r, const ReportOptions& opt, int depth,
                          const TextPut* put) {
    TextSink sink(out, depth, put);
    perChannelColumns(r, opt, sink);
    sink.finish();
}

} // namespace ql
