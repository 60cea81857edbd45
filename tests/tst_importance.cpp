// Importance files: llama.cpp imatrix files written the way llama-imatrix writes them
// (tests/data/imatrix, made by make_imatrix_fixtures.c with ggml's gguf writer) read to the means
// llama-quantize derives; QuantLens's safetensors statistics against a double computation; and one
// row per class of malformed input, each a FileError naming the file.
#include "analysis/weighted_error.h"
#include "base/error.h"
#include "io/importance_file.h"
#include "io/safetensors_source.h"
#include "io/safetensors_writer.h"
#include "io_test_util.h"
#include "job/importance.h"

#include <QTemporaryDir>
#include <QTest>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

using namespace ql;
using qltest::readFile;
using qltest::writeFile;

namespace {

const std::string kData = QUANTLENS_SOURCE_DIR "/tests/data/imatrix/";
const char* const kFixtures[] = {"imatrix.gguf", "imatrix.dat"};

// Little-endian pieces of the legacy layout and of GGUF headers, for crafting files.
void i32(std::string& s, std::int32_t v) {
    for (int i = 0; i < 4; ++i)
        s += static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * i)) & 0xff);
}
void u32(std::string& s, std::uint32_t v) {
    i32(s, static_cast<std::int32_t>(v));
}
void u64(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void f32(std::string& s, float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    u32(s, b);
}

struct LegacyEntry {
    std::string name;
    std::int32_t ncall;
    std::vector<float> values;
};
/// save_imatrix_legacy's layout; `trailer` false leaves out the chunk count and dataset name.
std::string legacy(const std::vector<LegacyEntry>& entries, bool trailer = true) {
    std::string s;
    i32(s, static_cast<std::int32_t>(entries.size()));
    for (const auto& e : entries) {
        i32(s, static_cast<std::int32_t>(e.name.size()));
        s += e.name;
        i32(s, e.ncall);
        i32(s, static_cast<std::int32_t>(e.values.size()));
        for (float v : e.values)
            f32(s, v);
    }
    if (trailer) {
        i32(s, 3);
        i32(s, 8);
        s += "data.txt";
    }
    return s;
}

struct GgufTensor {
    std::string name;
    std::vector<std::uint64_t> ne;
    std::vector<float> values;
    std::uint32_t type = 0; // F32; F16 (1) stores each value's low half, enough to be refused
};
void str(std::string& s, const std::string& text) {
    u64(s, text.size());
    s += text;
}
std::string kvString(const std::string& key, const std::string& value) {
    std::string s;
    str(s, key);
    u32(s, 8);
    str(s, value);
    return s;
}
std::string kvU32(const std::string& key, std::uint32_t v) {
    std::string s;
    str(s, key);
    u32(s, 4);
    u32(s, v);
    return s;
}
std::string kvStrings(const std::string& key, const std::vector<std::string>& values) {
    std::string s;
    str(s, key);
    u32(s, 9);
    u32(s, 8);
    u64(s, values.size());
    for (const auto& v : values)
        str(s, v);
    return s;
}
/// A GGUF v3 file: the key-value pairs as given, then the tensors (32-byte aligned).
std::string gguf(const std::vector<std::string>& kvs, const std::vector<GgufTensor>& tensors) {
    std::string s = "GGUF";
    u32(s, 3);
    u64(s, tensors.size());
    u64(s, kvs.size());
    for (const auto& kv : kvs)
        s += kv;
    std::string data;
    for (const auto& t : tensors) {
        str(s, t.name);
        u32(s, static_cast<std::uint32_t>(t.ne.size()));
        for (auto n : t.ne)
            u64(s, n);
        u32(s, t.type);
        u64(s, data.size());
        for (float v : t.values) {
            if (t.type == 1) {
                std::uint32_t b;
                std::memcpy(&b, &v, 4);
                data += static_cast<char>(b & 0xff);
                data += static_cast<char>((b >> 8) & 0xff);
            } else {
                f32(data, v);
            }
        }
        while (data.size() % 32)
            data += '\0';
    }
    while (s.size() % 32)
        s += '\0';
    return s + data;
}
/// An imatrix GGUF as save_imatrix writes it, with the tensors given.
std::string imatrixGguf(const std::vector<GgufTensor>& tensors, const std::string& type = "imatrix") {
    return gguf({kvString("general.type", type), kvStrings("imatrix.datasets", {"data.txt"}),
                 kvU32("imatrix.chunk_count", 2), kvU32("imatrix.chunk_size", 512)},
                tensors);
}

std::vector<float> ramp(int n, float from = 0.5f) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = from + 0.25f * static_cast<float>(i);
    return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b, std::string* where) {
    if (a.size() != b.size()) {
        *where = "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
            *where =
                "value " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
            return false;
        }
    return true;
}

} // namespace

class TestImportance : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return m_dir.path().toStdString() + "/" + name; }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Every entry of both llama.cpp forms, value for value, against the means llama-quantize's
    // loader computes (the generator's .expected.safetensors).
    void readsLlamaCppFiles_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("entry");
        for (const char* f : kFixtures) {
            const auto expected = SafetensorsSource::openFile(kData + f + ".expected.safetensors");
            for (const auto& t : expected->tensors())
                QTest::addRow("%s/%s", f, t.name.c_str())
                    << QString::fromLatin1(f) << QString::fromStdString(t.name);
        }
    }
    void readsLlamaCppFiles() {
        QFETCH(QString, fixture);
        QFETCH(QString, entry);
        const std::string file = kData + fixture.toStdString();
        const std::string name = entry.toStdString();
        const ImportanceFile imp = readImportanceFile(file);
        const auto expected = SafetensorsSource::openFile(file + ".expected.safetensors");
        QCOMPARE(imp.path, file);
        QCOMPARE(imp.format, expected->metadata().at("format"));
        QCOMPARE(imp.chunks, std::stoll(expected->metadata().at("chunks")));
        QCOMPARE(imp.datasets, std::vector<std::string>{expected->metadata().at("dataset")});
        QCOMPARE(imp.entries.size(), expected->tensors().size());
        const auto it = imp.entries.find(name);
        QVERIFY(it != imp.entries.end());
        const ImportanceEntry& e = it->second;
        const Tensor want = expected->load(name);
        QCOMPARE(e.matrices, static_cast<int>(want.shape()[0]));
        QCOMPARE(e.channels(), want.shape()[1]);
        std::string where;
        QVERIFY2(sameBits(e.sqMean, want.toFloatVector(), &where), where.c_str());
        QCOMPARE(e.counts.size(),
                 fixture.endsWith(QLatin1String(".gguf")) ? std::size_t(e.matrices) : std::size_t(0));
    }

    // What the fixtures hold, spelled out: the MoE entry with an expert that saw no token.
    void expertsAndPartialData() {
        const ImportanceFile g = readImportanceFile(kData + "imatrix.gguf");
        QCOMPARE(g.format, std::string("imatrix (GGUF)"));
        const ImportanceEntry& moe = g.entries.at("blk.1.ffn_up_exps.weight");
        QCOMPARE(moe.matrices, 4);
        QCOMPARE(moe.channels(), std::int64_t(64));
        QCOMPARE(moe.counts, (std::vector<double>{150, 70, 0, 36}));
        for (int j = 0; j < 64; ++j)
            QCOMPARE(moe.sqMean[static_cast<std::size_t>(2 * 64 + j)],
                     1.0f); // llama.cpp fills partial data with ones
        QCOMPARE(g.entries.at("blk.0.attn_q.weight").counts, std::vector<double>{256});
        QCOMPARE(g.entries.at("blk.1.ffn_down_exps.weight").counts, (std::vector<double>{0, 0, 0, 0}));

        // The legacy writer skips entries without data and keeps no per-expert split.
        const ImportanceFile d = readImportanceFile(kData + "imatrix.dat");
        QCOMPARE(d.format, std::string("imatrix (legacy .dat)"));
        QVERIFY(!d.entries.count("blk.1.ffn_down_exps.weight"));
        const ImportanceEntry& flat = d.entries.at("blk.1.ffn_up_exps.weight");
        QCOMPARE(flat.matrices, 1);
        QCOMPARE(flat.sqMean.size(), std::size_t(256));
        QCOMPARE(flat.sqMean[2 * 64], 1.0f);
        // Both forms describe the same statistics: the means agree to float rounding.
        for (const auto& [name, e] : d.entries) {
            const auto& other = g.entries.at(name).sqMean;
            QCOMPARE(e.sqMean.size(), other.size());
            for (std::size_t i = 0; i < other.size(); ++i)
                QVERIFY2(std::fabs(e.sqMean[i] - other[i]) <= 1e-5f * std::max(1.0f, other[i]), name.c_str());
        }
        // The readers agree with the dispatcher.
        QCOMPARE(readImatrixGguf(kData + "imatrix.gguf").entries.size(), g.entries.size());
        QCOMPARE(readImatrixLegacy(kData + "imatrix.dat").entries.size(), d.entries.size());
    }

    // Legacy details llama.cpp's loaders accept: no trailer (older files), ncall 0 (used as stored).
    void legacyVariants() {
        const std::string p = path("variants.dat");
        writeFile(p,
                  legacy({{"blk.0.attn_q.weight", 4, ramp(8)}, {"blk.0.attn_k.weight", 0, ramp(8)}}, false));
        const ImportanceFile f = readImportanceFile(p);
        QCOMPARE(f.chunks, std::int64_t(0));
        QVERIFY(f.datasets.empty());
        for (std::size_t i = 0; i < 8; ++i) {
            QCOMPARE(f.entries.at("blk.0.attn_q.weight").sqMean[i], ramp(8)[i] / 4.0f);
            QCOMPARE(f.entries.at("blk.0.attn_k.weight").sqMean[i], ramp(8)[i]);
        }
        writeFile(p, legacy({{"blk.0.attn_q.weight", 2, ramp(8)}}));
        const ImportanceFile t = readImportanceFile(p);
        QCOMPARE(t.chunks, std::int64_t(3));
        QCOMPARE(t.datasets, std::vector<std::string>{"data.txt"});
    }

    // QuantLens's own form, both tensors kinds, against means of squares computed here in double.
    void readsSafetensorsStatistics() {
        std::mt19937 rng(16);
        std::normal_distribution<float> normal(0.0f, 1.5f);
        std::vector<float> sq(48), samples(37 * 40), batched(3 * 5 * 24);
        for (auto& v : sq)
            v = std::fabs(normal(rng));
        for (auto& v : samples)
            v = normal(rng);
        for (auto& v : batched)
            v = normal(rng);
        std::vector<double> wide(9 * 16);
        for (auto& v : wide)
            v = static_cast<double>(normal(rng)) * 1e-3 + 1e-9;
        Tensor f64(DType::F64, Shape{9, 16});
        std::memcpy(f64.mutableData(), wide.data(), wide.size() * sizeof(double));
        const std::string p = path("stats.safetensors");
        writeSafetensors(
            p,
            {{"model.layers.0.self_attn.q_proj.input_sq_mean", Tensor::fromFloats(Shape{48}, sq)},
             {"model.layers.0.mlp.up_proj.inputs", Tensor::fromFloats(Shape{37, 40}, samples)},
             {"model.layers.0.mlp.down_proj.inputs", Tensor::fromFloats(Shape{3, 5, 24}, batched)},
             {"model.layers.1.mlp.gate_proj.inputs", f64},
             {"model.layers.0.mlp.up_proj.weight",
              Tensor::fromFloats(Shape{2, 40}, std::span(samples).first(80))}},
            {{"dataset", "wikitext-2 train"}, {"chunks", "12"}});
        const ImportanceFile f = readImportanceFile(p);
        QCOMPARE(f.format, std::string("safetensors statistics"));
        QCOMPARE(f.datasets, std::vector<std::string>{"wikitext-2 train"});
        QCOMPARE(f.chunks, std::int64_t(12));
        QCOMPARE(f.entries.size(), std::size_t(4)); // the stray weight is not a statistic

        const ImportanceEntry& q = f.entries.at("model.layers.0.self_attn.q_proj.weight");
        QCOMPARE(q.sqMean, sq);
        QVERIFY(q.counts.empty());
        QCOMPARE(q.matrices, 1);

        const auto check = [&](const std::string& weight, const auto& x, std::int64_t rows,
                               std::int64_t cols) {
            const ImportanceEntry& e = f.entries.at(weight);
            QCOMPARE(e.matrices, 1);
            QCOMPARE(e.counts, std::vector<double>{static_cast<double>(rows)});
            QCOMPARE(e.sqMean.size(), static_cast<std::size_t>(cols));
            for (std::int64_t j = 0; j < cols; ++j) {
                double s = 0;
                for (std::int64_t r = 0; r < rows; ++r) {
                    const double v = x[static_cast<std::size_t>(r * cols + j)];
                    s += v * v;
                }
                QCOMPARE(e.sqMean[static_cast<std::size_t>(j)],
                         static_cast<float>(s / static_cast<double>(rows)));
            }
        };
        check("model.layers.0.mlp.up_proj.weight", samples, 37, 40);
        check("model.layers.0.mlp.down_proj.weight", batched, 15, 24);
        check("model.layers.1.mlp.gate_proj.weight", wide, 9, 16);
    }

    // One row per class of malformed input: a FileError naming the file and saying why.
    void refusesMalformed_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        const auto row = [](const char* name, const std::string& bytes, const char* reason) {
            QTest::addRow("%s", name) << QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size()))
                                      << QString::fromLatin1(reason);
        };
        const std::string good = legacy({{"blk.0.attn_q.weight", 2, ramp(8)}});
        const std::size_t values = 8 + 19 + 8; // where the first entry's values start
        row("empty", "", "empty file");
        // The fixture cut short at several points: inside the count, a name, the values, the trailer.
        const std::string dat = readFile(kData + "imatrix.dat");
        const std::size_t size = dat.size(); // the trailer: 4 + 4 + 26 bytes
        row("dat/truncated-count", dat.substr(0, 2),
            "truncated at byte 0: the entry count needs 4 bytes, 2 left");
        row("dat/truncated-early", dat.substr(0, 40), "entry count 6 cannot fit in a file of 40 bytes");
        row("dat/truncated-name", dat.substr(0, 585),
            "truncated at byte 582: entry 3 of 6's name needs 21 bytes");
        row("dat/truncated-values", dat.substr(0, 1000),
            "'blk.0.ffn_down.weight': 256 values need 1024 bytes");
        row("dat/truncated-last-values", dat.substr(0, size - 40),
            "'blk.1.ffn_up_exps.weight': 256 values need");
        row("dat/truncated-chunk-count", dat.substr(0, size - 32),
            "the chunk count after the entries needs 4 bytes, 2 left");
        row("dat/truncated-dataset-length", dat.substr(0, size - 28),
            "the dataset name's length needs 4 bytes, 2 left");
        row("dat/truncated-dataset-name", dat.substr(0, size - 5),
            "the dataset name needs 26 bytes, 21 left");
        row("dat/trailing-bytes", dat + "xy", "2 unexpected bytes after the dataset name");
        {
            std::string huge = good;
            std::memcpy(huge.data(), "\xff\xff\xff\x7f", 4);
            row("dat/huge-entry-count", huge, "entry count 2147483647 cannot fit");
            std::memcpy(huge.data(), "\x00\x00\x00\x80", 4);
            row("dat/negative-entry-count", huge, "entry count -2147483648");
            std::memcpy(huge.data(), "\x00\x00\x00\x00", 4);
            row("dat/zero-entries", huge, "entry count 0");
        }
        {
            std::string s = good;
            std::memcpy(s.data() + values - 4, "\xff\xff\xff\x7f", 4);
            row("dat/huge-value-count", s, "2147483647 values need 8589934588 bytes");
            std::memcpy(s.data() + values - 4, "\xfe\xff\xff\xff", 4);
            row("dat/negative-value-count", s, "value count -2");
            std::memcpy(s.data() + values - 4, "\x00\x00\x00\x00", 4);
            row("dat/zero-value-count", s, "value count 0");
        }
        {
            std::string s = good;
            std::memcpy(s.data() + 4, "\xf0\xff\xff\xff", 4);
            row("dat/negative-name-length", s, "entry 1 of 1: name length -16");
            std::memcpy(s.data() + 4, "\xff\xff\xff\x7f", 4);
            row("dat/huge-name-length", s, "entry 1 of 1's name needs 2147483647 bytes");
        }
        row("dat/negative-ncall", legacy({{"blk.0.attn_q.weight", -1, ramp(8)}}), "negative ncall -1");
        row("dat/nan-mean", legacy({{"blk.0.attn_q.weight", 2, {1, std::nanf(""), 3}}}),
            "entry 'blk.0.attn_q.weight': mean of squares nan at matrix 0, channel 1 is not finite");
        row("dat/inf-mean", legacy({{"blk.0.attn_q.weight", 2, {1, 2, INFINITY}}}),
            "channel 2 is not finite");
        row("dat/negative-mean", legacy({{"blk.0.attn_q.weight", 2, {1, -2, 3}}}), "channel 1 is negative");
        row("dat/duplicate",
            legacy({{"blk.0.attn_q.weight", 2, ramp(4)}, {"blk.0.attn_q.weight", 2, ramp(4)}}),
            "entry 'blk.0.attn_q.weight' appears twice");
        {
            std::string s = legacy({{"blk.0.attn_q.weight", 2, ramp(4)}}, false);
            i32(s, 1);
            i32(s, -5);
            row("dat/negative-dataset-length", s, "negative dataset name length -5");
        }

        // GGUF: llama.cpp's layout with one thing wrong.
        const auto sums = [](const std::string& w, std::uint64_t c, std::uint64_t m, float first = 1.0f) {
            std::vector<float> v(c * m, 2.0f);
            v[0] = first;
            return GgufTensor{w + ".in_sum2", {c, m}, v};
        };
        const auto counts = [](const std::string& w, const std::vector<float>& c) {
            return GgufTensor{w + ".counts", {1, c.size()}, c};
        };
        const std::string w = "blk.0.ffn_up_exps.weight";
        row("gguf/wrong-general-type", imatrixGguf({sums(w, 8, 2), counts(w, {4, 4})}, "model"),
            "general.type is \"model\", not \"imatrix\"");
        row("gguf/no-general-type",
            gguf({kvStrings("imatrix.datasets", {"d"})}, {sums(w, 8, 2), counts(w, {4, 4})}),
            "without general.type");
        row("gguf/in_sum2-without-counts", imatrixGguf({sums(w, 8, 2)}),
            "entry 'blk.0.ffn_up_exps.weight': in_sum2 without counts");
        row("gguf/counts-without-in_sum2", imatrixGguf({counts(w, {4, 4})}), "counts without in_sum2");
        row("gguf/mismatched-matrices", imatrixGguf({sums(w, 8, 2), counts(w, {4, 4, 4})}),
            "in_sum2 holds 2 matrices of 8 channels, but counts holds 3 values");
        row("gguf/mismatched-in_sum",
            imatrixGguf({sums(w, 8, 2), counts(w, {4, 4}), {w + ".in_sum", {8}, ramp(8)}}),
            "in_sum holds 8 values, in_sum2 16");
        row("gguf/nan-sum", imatrixGguf({sums(w, 8, 2, std::nanf("")), counts(w, {4, 4})}),
            "sum of squares nan at value 0 is not finite");
        row("gguf/negative-sum", imatrixGguf({sums(w, 8, 2, -1.0f), counts(w, {4, 4})}), "is negative");
        row("gguf/negative-count", imatrixGguf({sums(w, 8, 2), counts(w, {4, -4})}),
            "token count -4.000000 of matrix 1 is not a count");
        row("gguf/nan-count", imatrixGguf({sums(w, 8, 2), counts(w, {std::nanf(""), 4})}),
            "of matrix 0 is not a count");
        {
            GgufTensor half = sums(w, 8, 2);
            half.type = 1;
            row("gguf/f16-sums", imatrixGguf({half, counts(w, {4, 4})}), "has ggml type 1, not F32");
        }
        row("gguf/no-weight-name", imatrixGguf({sums("", 8, 1), counts("", {4})}), "names no weight");
        row("gguf/no-entries", imatrixGguf({{"token_embd.weight", {8}, ramp(8)}}), "no <weight>.in_sum2");
        row("gguf/datasets-not-strings",
            gguf({kvString("general.type", "imatrix"), kvU32("imatrix.datasets", 3)},
                 {sums(w, 8, 2), counts(w, {4, 4})}),
            "imatrix.datasets is not an array of strings");
        const std::string fixture = readFile(kData + "imatrix.gguf");
        row("gguf/truncated-header", fixture.substr(0, 100), "more than the file can hold");
        row("gguf/truncated-data", fixture.substr(0, fixture.size() - 100), "runs past the end of the file");

        // safetensors statistics.
        const auto st = [this](const char* file, const std::vector<NamedTensor>& tensors) {
            writeSafetensors(path(file), tensors);
            return readFile(path(file));
        };
        const std::string m = "model.layers.0.mlp.up_proj";
        row("st/inputs-rank-1", st("a.safetensors", {{m + ".inputs", Tensor::fromFloats(Shape{8}, ramp(8))}}),
            "tensor 'model.layers.0.mlp.up_proj.inputs': shape [8], expected [samples, in_features]");
        row("st/sq-mean-rank-2",
            st("b.safetensors", {{m + ".input_sq_mean", Tensor::fromFloats(Shape{2, 4}, ramp(8))}}),
            "expected [in_features]");
        row("st/nan-sq-mean",
            st("c.safetensors",
               {{m + ".input_sq_mean", Tensor::fromFloats(Shape{3}, std::vector<float>{1, NAN, 2})}}),
            "entry 'model.layers.0.mlp.up_proj.weight': mean of squares nan at matrix 0, channel 1 is not "
            "finite");
        row("st/negative-sq-mean",
            st("d.safetensors",
               {{m + ".input_sq_mean", Tensor::fromFloats(Shape{3}, std::vector<float>{1, 2, -2})}}),
            "channel 2 is negative");
        row("st/inputs-overflow",
            st("e.safetensors",
               {{m + ".inputs", Tensor::fromFloats(Shape{2, 2}, std::vector<float>{1e30f, 1, 1e30f, 1})}}),
            "channel 0 is not finite");
        row("st/nan-inputs",
            st("f.safetensors",
               {{m + ".inputs", Tensor::fromFloats(Shape{2, 2}, std::vector<float>{1, 1, NAN, 1})}}),
            "channel 0 is not finite");
        row("st/duplicate",
            st("g.safetensors", {{m + ".input_sq_mean", Tensor::fromFloats(Shape{8}, ramp(8))},
                                 {m + ".inputs", Tensor::fromFloats(Shape{1, 8}, ramp(8))}}),
            "entry 'model.layers.0.mlp.up_proj.weight' appears twice");
        row("st/no-statistics", st("h.safetensors", {{m + ".weight", Tensor::fromFloats(Shape{8}, ramp(8))}}),
            "no <module>.input_sq_mean or <module>.inputs tensors");
        row("st/integer-dtype", st("i.safetensors", {{m + ".input_sq_mean", Tensor(DType::I32, Shape{4})}}),
            "dtype int32, expected f64, f32, f16 or bf16");
        row("st/no-samples", st("j.safetensors", {{m + ".inputs", Tensor(DType::F32, Shape{0, 8})}}),
            "holds no samples");
        row("st/no-module", st("k.safetensors", {{".inputs", Tensor::fromFloats(Shape{1, 8}, ramp(8))}}),
            "no module name");
        const std::string sts =
            st("l.safetensors", {{m + ".inputs", Tensor::fromFloats(Shape{1, 8}, ramp(8))}});
        row("st/truncated", sts.substr(0, sts.size() - 4), "run past the end of the data");
    }
    void refusesMalformed() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        std::string tag = QTest::currentDataTag();
        for (char& c : tag)
            if (c == '/') c = '-';
        const std::string fileName = path("bad-" + tag + ".imatrix");
        writeFile(fileName, bytes.toStdString());
        try {
            const ImportanceFile f = readImportanceFile(fileName);
            QFAIL(qPrintable(QStringLiteral("accepted, %1 entries").arg(f.entries.size())));
        } catch (const FileError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(fileName) != std::string::npos, e.what());
            QVERIFY2(what.find(reason.toStdString()) != std::string::npos, e.what());
        }
    }

    // The crafting helper makes a file the reader takes, so each row above fails for its one defect.
    void craftedGgufControl() {
        const std::string w = "blk.0.ffn_up_exps.weight";
        const std::string p = path("control.gguf");
        writeFile(p, imatrixGguf({{w + ".in_sum2", {8, 2}, ramp(16)},
                                  {w + ".counts", {1, 2}, {4, 0}},
                                  {w + ".in_sum", {8, 2}, ramp(16)},
                                  {"unrelated", {4}, ramp(4)}}));
        const ImportanceFile f = readImportanceFile(p);
        QCOMPARE(f.chunks, std::int64_t(2));
        QCOMPARE(f.datasets, std::vector<std::string>{"data.txt"});
        QCOMPARE(f.entries.size(), std::size_t(1));
        QCOMPARE(f.entries.at(w).matrices, 2);
        QCOMPARE(f.entries.at(w).counts, (std::vector<double>{4, 0}));
        QCOMPARE(f.entries.at(w).sqMean[1], ramp(16)[1] / 4.0f);
        QCOMPARE(f.entries.at(w).sqMean[9], 1.0f);
    }

    // Deterministic mutations of each form (flipped bytes, extreme int32s, cuts): every outcome is
    // a file read or a FileError, never another exception or a crash (run it under the asan preset).
    void mutatedFilesNeverCrash_data() {
        QTest::addColumn<QString>("source");
        QTest::addRow("dat") << QString::fromStdString(kData + "imatrix.dat");
        QTest::addRow("gguf") << QString::fromStdString(kData + "imatrix.gguf");
        const std::string st = path("mutate.safetensors");
        writeSafetensors(st, {{"m.a.input_sq_mean", Tensor::fromFloats(Shape{16}, ramp(16))},
                              {"m.b.inputs", Tensor::fromFloats(Shape{4, 8}, ramp(32))}});
        QTest::addRow("safetensors") << QString::fromStdString(st);
    }
    void mutatedFilesNeverCrash() {
        QFETCH(QString, source);
        const std::string original = readFile(source.toStdString());
        QVERIFY(!original.empty());
        std::mt19937 rng(1616);
        const std::string p = path("mutant.bin");
        int read = 0, refused = 0;
        for (int round = 0; round < 600; ++round) {
            std::string s = original;
            const auto at = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
            switch (round % 3) {
            case 0:
                for (int k = 0; k < 1 + round % 4; ++k)
                    s[at(s.size())] ^= static_cast<char>(1 + rng() % 255);
                break;
            case 1: {
                static const std::uint32_t extremes[] = {0x7fffffffu, 0x80000000u, 0xffffffffu, 0u,
                                                         0x7fc00000u};
                const std::size_t pos = at(s.size() / 4) * 4;
                std::memcpy(s.data() + pos, &extremes[rng() % 5], 4);
                break;
            }
            default:
                s.resize(at(s.size()));
            }
            writeFile(p, s);
            try {
                (void)readImportanceFile(p);
                ++read;
            } catch (const FileError& e) {
                ++refused;
                QVERIFY2(std::string(e.what()).find(p) != std::string::npos, e.what());
            }
        }
        QVERIFY(refused > 0);
        qInfo("%d mutants read, %d refused", read, refused);
    }

    // The weighted error weighs each element by its input channel's importance, the channel being on
    // the axis the weight's role reduces over. Each row's expected sums are computed here, element by
    // element from the multi-index, with the channel named by the layout itself.
    void weightsAlongTheRoleAxis_data() {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<QByteArray>("op"); // the consuming ONNX operator; empty: the shape decides
        QTest::addColumn<qint64>("group");
        QTest::addColumn<int>("inputAxis"); // where the layout keeps the input channel
        QTest::newRow("conv [O, I, kh, kw]")
            << QByteArray("conv1.weight") << QList<qint64>{3, 4, 2, 3} << QByteArray("Conv") << 1LL << 1;
        QTest::newRow("conv by shape")
            << QByteArray("conv1.weight") << QList<qint64>{5, 2, 3, 3} << QByteArray("") << 1LL << 1;
        QTest::newRow("conv1d [O, I, k]")
            << QByteArray("c.weight") << QList<qint64>{4, 3, 5} << QByteArray("Conv") << 1LL << 1;
        QTest::newRow("depthwise [O, 1, k, k]")
            << QByteArray("dw.weight") << QList<qint64>{4, 1, 3, 3} << QByteArray("Conv") << 4LL << 0;
        QTest::newRow("MatMul [in, out]")
            << QByteArray("fc.weight") << QList<qint64>{5, 3} << QByteArray("MatMul") << 1LL << 0;
        // Square: the wrong axis fits in size, and only the sums tell (the last axis was assumed).
        QTest::newRow("square MatMul [in, out]")
            << QByteArray("sq.weight") << QList<qint64>{4, 4} << QByteArray("MatMul") << 1LL << 0;
        QTest::newRow("Gemm transB=0")
            << QByteArray("g.weight") << QList<qint64>{6, 2} << QByteArray("Gemm") << 1LL << 0;
        QTest::newRow("Linear [out, in]")
            << QByteArray("lin.weight") << QList<qint64>{3, 5} << QByteArray("") << 1LL << 1;
        QTest::newRow("Gemm transB=1")
            << QByteArray("gt.weight") << QList<qint64>{4, 4} << QByteArray("GemmT") << 1LL << 1;
    }
    void weightsAlongTheRoleAxis() {
        QFETCH(QByteArray, name);
        QFETCH(QList<qint64>, shape);
        QFETCH(QByteArray, op);
        QFETCH(qint64, group);
        QFETCH(int, inputAxis);
        const Shape dims(shape.begin(), shape.end());
        std::optional<WeightUse> use;
        if (!op.isEmpty()) {
            use = WeightUse{op == "GemmT" ? "Gemm" : op.toStdString(), 1, op == "GemmT", group};
        }
        std::int64_t n = 1;
        for (const auto d : dims)
            n *= d;
        const std::int64_t channels = dims[static_cast<std::size_t>(inputAxis)];
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> x(static_cast<std::size_t>(n)), xhat(x.size()),
            s(static_cast<std::size_t>(channels));
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = u(rng);
            xhat[i] = x[i] + 0.1f * u(rng);
        }
        for (std::size_t j = 0; j < s.size(); ++j)
            s[j] = static_cast<float>((j + 1) * (j + 1)); // unequal, so a wrong axis changes the sums

        // Expected: walk the multi-index in row-major order; the channel is its inputAxis coordinate.
        double err = 0, sig = 0;
        std::vector<std::int64_t> index(dims.size(), 0);
        for (std::int64_t i = 0; i < n; ++i) {
            const double sj = s[static_cast<std::size_t>(index[static_cast<std::size_t>(inputAxis)])];
            const double a = x[static_cast<std::size_t>(i)],
                         d = a - static_cast<double>(xhat[static_cast<std::size_t>(i)]);
            err += sj * d * d;
            sig += sj * a * a;
            for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
                if (++index[static_cast<std::size_t>(k)] < dims[static_cast<std::size_t>(k)]) break;
                index[static_cast<std::size_t>(k)] = 0;
            }
        }

        ImportanceFile file;
        file.path = "stats.safetensors";
        file.entries[name.toStdString()].sqMean = s;
        const Importance importance(std::move(file));
        const TensorInfo info{name.toStdString(), DType::F32, dims, static_cast<std::uint64_t>(n) * 4, ""};
        std::string why;
        const auto weights = importance.forTensor(info, weightRole(info.name, dims, use), why);
        QVERIFY2(weights, why.c_str());
        QCOMPARE(weights->channels, channels);
        const WeightedError w =
            weightedError(x, xhat, weights->sqMean, weights->channels, weights->matrices, weights->inner);
        QCOMPARE(w.count, n);
        QVERIFY2(std::abs(w.sumWeightedSqError - err) <= 1e-9 * err,
                 (std::to_string(w.sumWeightedSqError) + " vs " + std::to_string(err)).c_str());
        QVERIFY(std::abs(w.sumWeightedSqX - sig) <= 1e-9 * sig);
    }

    // An entry whose size is the weight's last axis but not its input channels is refused, naming the axis.
    void refusesAnEntryOnTheWrongAxis() {
        ImportanceFile file;
        file.path = "stats.safetensors";
        file.entries["fc.weight"].sqMean = {1.0f, 2.0f, 3.0f};
        const Importance importance(std::move(file));
        const Shape dims{5, 3}; // MatMul [in, out]: 5 input channels
        std::string why;
        QVERIFY(!importance.forTensor({"fc.weight", DType::F32, dims, 60, ""},
                                      weightRole("fc.weight", dims, WeightUse{"MatMul", 1, false, 1}), why));
        QVERIFY2(why.find("5 input channels on axis 0") != std::string::npos, why.c_str());
    }

    // Statistics keyed by module reach weights not named "<module>.weight": Paddle's "X.w_0", and an
    // ONNX initializer whose whole name is the statistics' module.
    void matchesPaddleAndInitializerNames() {
        ImportanceFile file;
        file.path = "stats.safetensors";
        file.entries["linear_0.weight"].sqMean = {1.0f, 2.0f};
        file.entries["onnx::MatMul_12.weight"].sqMean = {1.0f, 2.0f, 3.0f};
        const Importance importance(std::move(file));
        std::string why;
        const auto paddle = importance.forTensor({"linear_0.w_0", DType::F32, {3, 2}, 24, ""},
                                                 weightRole("linear_0.w_0", {3, 2}), why);
        QVERIFY2(paddle, why.c_str());
        QCOMPARE(paddle->origin, std::string("stats.safetensors: linear_0.weight"));
        const auto onnx = importance.forTensor(
            {"onnx::MatMul_12", DType::F32, {3, 4}, 48, ""},
            weightRole("onnx::MatMul_12", {3, 4}, WeightUse{"MatMul", 1, false, 1}), why);
        QVERIFY2(onnx, why.c_str());
        QCOMPARE(onnx->inner, std::int64_t{4});
        QVERIFY(!importance.forTensor({"linear_0.w_0x", DType::F32, {3, 2}, 24, ""},
                                      weightRole("linear_0.w_0x", {3, 2}), why));
    }

    void missingFile() {
        QVERIFY_THROWS_EXCEPTION(FileError, readImportanceFile(path("absent.imatrix")));
        QVERIFY_THROWS_EXCEPTION(FileError, readImportanceFile(m_dir.path().toStdString()));
    }
};

QTEST_GUILESS_MAIN(TestImportance)
#include "tst_importance.moc"
