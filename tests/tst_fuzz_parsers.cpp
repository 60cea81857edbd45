// Fuzzing the readers of untrusted files for a few seconds each: GGUF headers drawn from the format's
// grammar, ONNX graphs built with the protobuf classes (If nesting, Constant nodes, external data,
// initializers of every element type), and mutations of real plans, partial reports, journals and
// rules files that QuantLens wrote. Every input must either be read or refused with FileError /
// QuantError naming the file; anything else (another exception, a crash, an ASan or UBSan report in
// the asan preset) fails, and the input is kept in the build folder to replay. Each target must also
// accept some of its inputs, so the generators are shown to reach past the first checks.
#include "base/error.h"
#include "fuzz_generators.h"
#include "io/gguf_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "job/plan_output.h"
#include "job/report_journal.h"
#include "job/report_parts.h"
#include "report/check.h"
#include "report/model_table.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>
#include <onnx/onnx_pb.h>

using namespace ql;
using qlfuzz::Rng;

namespace {

// Seconds per target: QUANTLENS_FUZZ_SECONDS, default 3 (a longer local run: export it).
double fuzzSeconds() {
    bool ok = false;
    const double s = qEnvironmentVariable("QUANTLENS_FUZZ_SECONDS").toDouble(&ok);
    return ok && s > 0 ? s : 3.0;
}

struct Tally {
    int runs = 0, accepted = 0, refused = 0;
};

// Runs `read` on generated inputs until the time is up. A refusal must be a FileError or QuantError
// whose message names the file; any other outcome stops the run with the input saved.
Tally fuzz(const QString& name, const QString& path, const std::function<std::string(Rng&)>& make,
           const std::function<void(const std::string&)>& read) {
    Tally t;
    QElapsedTimer clock;
    clock.start();
    Rng rng(0x51ED + static_cast<std::uint64_t>(qHash(name)));
    const std::string file = path.toStdString();
    while (clock.elapsed() < fuzzSeconds() * 1000) {
        const std::string input = make(rng);
        qltest::writeFile(file, input);
        ++t.runs;
        QString failure;
        try {
            read(file);
            ++t.accepted;
        } catch (const FileError& e) {
            ++t.refused;
            if (!QString::fromUtf8(e.what()).contains(QStringLiteral("fuzz"))) // the file's name
                failure = QStringLiteral("a refusal that names no file: ") + QString::fromUtf8(e.what());
        } catch (const QuantError&) {
            ++t.refused;
        } catch (const std::exception& e) {
            failure = QStringLiteral("%1: %2").arg(QString::fromLatin1(typeid(e).name()),
                                                   QString::fromUtf8(e.what()));
        }
        if (!failure.isEmpty()) {
            const QString kept = QStringLiteral(QUANTLENS_BINARY_DIR "/fuzz-failure-") + name;
            qltest::writeFile(kept.toStdString(), input);
            QTest::qFail(qPrintable(name + QStringLiteral(" (input kept as ") + kept + QStringLiteral("): ") +
                                    failure.left(400)),
                         __FILE__, __LINE__);
            return t;
        }
    }
    qInfo("%s: %d inputs, %d read, %d refused", qPrintable(name), t.runs, t.accepted, t.refused);
    return t;
}

// ---- JSON mutations ----------------------------------------------------------------------------

nlohmann::json randomJson(Rng& r, int depth = 0) {
    switch (r.below(depth > 2 ? 9 : 11)) {
    case 0:
        return nullptr;
    case 1:
        return r.chance(50);
    case 2:
        return -static_cast<std::int64_t>(r.size() >> 1);
    case 3:
        return r.size();
    case 4:
        return 1e308 * (r.chance(50) ? 1 : -1);
    case 5:
        return 0.5 + static_cast<double>(r.below(100));
    case 6:
        return r.name();
    case 7:
        return std::string(r.below(2000), 'a');
    case 8:
        return "";
    case 9: {
        nlohmann::json a = nlohmann::json::array();
        for (std::uint64_t i = r.below(5); i > 0; --i)
            a.push_back(randomJson(r, depth + 1));
        return a;
    }
    default: {
        nlohmann::json o = nlohmann::json::object();
        for (std::uint64_t i = r.below(4); i > 0; --i)
            o[r.name()] = randomJson(r, depth + 1);
        return o;
    }
    }
}

// Every node of the tree, by pointer, for picking one to change.
void nodesOf(nlohmann::json& j, std::vector<nlohmann::json*>& out) {
    out.push_back(&j);
    if (j.is_structured())
        for (auto& child : j)
            nodesOf(child, out);
}

std::string mutateJson(const nlohmann::json& seed, Rng& r) {
    nlohmann::json j = seed;
    const int edits = 1 + static_cast<int>(r.below(3));
    for (int e = 0; e < edits; ++e) {
        std::vector<nlohmann::json*> nodes;
        nodesOf(j, nodes);
        nlohmann::json& node = *nodes[r.below(nodes.size())];
        switch (r.below(4)) {
        case 0:
            node = randomJson(r);
            break;
        case 1:
            if (node.is_object() && !node.empty())
                node.erase(std::next(node.begin(), static_cast<long>(r.below(node.size()))).key());
            break;
        case 2:
            if (node.is_array() && !node.empty()) // a repeated entry (a tensor listed twice)
                node.push_back(node[r.below(node.size())]);
            break;
        default:
            if (node.is_object()) node[r.name()] = randomJson(r);
            break;
        }
    }
    const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return r.chance(15) ? qlfuzz::mutateBytes(text, r) : text;
}

nlohmann::json readSeed(const QString& path) {
    return nlohmann::json::parse(qltest::readFile(path.toStdString()));
}

// ---- ONNX graphs --------------------------------------------------------------------------------

void randomTensor(onnx::TensorProto& t, Rng& r, const std::string& name) {
    t.set_name(name);
    const int dataType = static_cast<int>(
        r.chance(10) ? r.below(30) : std::vector<int>{1, 10, 16, 3, 2, 6, 7, 11}[r.below(8)]);
    t.set_data_type(dataType);
    std::uint64_t elements = 1;
    for (std::uint64_t d = r.below(r.chance(5) ? 40 : 4); d > 0; --d) {
        const std::int64_t dim = r.chance(10) ? static_cast<std::int64_t>(r.size()) * (r.chance(30) ? -1 : 1)
                                              : static_cast<std::int64_t>(1 + r.below(6));
        t.add_dims(dim);
        elements *= static_cast<std::uint64_t>(dim > 0 ? dim : 1);
    }
    const std::uint64_t bytes = r.chance(20) ? r.below(64) : std::min<std::uint64_t>(elements * 4, 4096);
    switch (r.below(4)) {
    case 0:
        for (std::uint64_t i = 0; i < std::min<std::uint64_t>(elements, 512); ++i)
            t.add_float_data(static_cast<float>(r.below(100)) / 8.0f);
        break;
    case 1: {
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        static const char* places[] = {"w.bin", "../w.bin", "/etc/passwd", "sub/../../x", "\x1b[2J.bin", ""};
        auto* kv = t.add_external_data();
        kv->set_key("location");
        kv->set_value(places[r.below(6)]);
        auto* off = t.add_external_data();
        off->set_key(r.chance(50) ? "offset" : "length");
        off->set_value(std::to_string(r.size()));
        break;
    }
    default:
        t.set_raw_data(std::string(bytes, static_cast<char>(r.below(256))));
        break;
    }
}

void randomGraph(onnx::GraphProto& g, Rng& r, int depth) {
    g.set_name(r.name());
    std::vector<std::string> names;
    for (std::uint64_t i = r.below(6); i > 0; --i) {
        const std::string name =
            r.chance(15) && !names.empty() ? names[0] : "w" + std::to_string(r.below(1000));
        randomTensor(*g.add_initializer(), r, name);
        names.push_back(name);
    }
    static const char* ops[] = {"MatMul",           "Gemm",           "Conv", "Constant", "If",  "Loop",
                                "DequantizeLinear", "QuantizeLinear", "GRU",  "LSTM",     "Relu"};
    for (std::uint64_t i = r.below(6); i > 0; --i) {
        onnx::NodeProto& n = *g.add_node();
        const std::string op = ops[r.below(sizeof ops / sizeof ops[0])];
        n.set_op_type(op);
        n.set_name(r.name());
        for (std::uint64_t k = r.below(4); k > 0; --k)
            n.add_input(!names.empty() && r.chance(70) ? names[r.below(names.size())] : r.name());
        n.add_output("y" + std::to_string(r.below(1000)));
        if (op == "Constant") {
            auto* a = n.add_attribute();
            a->set_name(r.chance(80) ? "value" : r.name());
            a->set_type(onnx::AttributeProto::TENSOR);
            randomTensor(*a->mutable_t(), r, r.name());
        } else if ((op == "If" || op == "Loop") && depth < 6) {
            for (const char* branch : {"then_branch", "else_branch", "body"}) {
                auto* a = n.add_attribute();
                a->set_name(branch);
                a->set_type(onnx::AttributeProto::GRAPH);
                randomGraph(*a->mutable_g(), r, depth + 1);
            }
        } else if (r.chance(50)) {
            auto* a = n.add_attribute();
            a->set_name(r.chance(50) ? "transB" : "axis");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(static_cast<std::int64_t>(r.size()) - 4);
        }
    }
}

std::string onnxModel(Rng& r) {
    onnx::ModelProto m;
    m.set_ir_version(r.chance(5) ? static_cast<std::int64_t>(r.size()) : 8);
    auto* opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(r.chance(10) ? static_cast<std::int64_t>(r.size()) : 17);
    m.set_producer_name(r.name());
    randomGraph(*m.mutable_graph(), r, 0);
    std::string bytes;
    m.SerializeToString(&bytes);
    return r.chance(10) ? qlfuzz::mutateBytes(bytes, r) : bytes;
}

// Everything a user can do with an opened model: list, load whole and by rows.
void readAllTensors(const TensorSource& s) {
    for (const auto& t : s.tensors()) {
        try {
            (void)s.load(t.name);
            if (!t.shape.empty() && t.shape[0] > 1) (void)s.loadRows(t.name, 1, 1);
        } catch (const FileError&) {
        } catch (const QuantError&) {
        }
        s.release(t.name);
    }
    (void)s.unlisted();
}

} // namespace

class TestFuzzParsers : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void ggufHeaders();
    void onnxGraphs();
    void planFiles();
    void partialReports();
    void journals();
    void rulesFiles();
    void findingsReplay();
    void partFewerTensorsThanItsRunNamesIt();

private:
    QTemporaryDir m_dir;
    QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }
    nlohmann::json m_part, m_plan;
};

void TestFuzzParsers::initTestCase() {
    QVERIFY(m_dir.isValid());
    // Seeds written by QuantLens itself, from the CLI's own fixture runs in tests/data.
    m_part = readSeed(QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/fuzz/corpus_readers/part.json"));
    m_plan = readSeed(QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/fuzz/corpus_readers/plan.json"));
}

void TestFuzzParsers::ggufHeaders() {
    const Tally t = fuzz(
        QStringLiteral("gguf"), path("fuzz.gguf"),
        [](Rng& r) {
            const std::string f = qlfuzz::ggufFile(r);
            return r.chance(30) ? qlfuzz::mutateBytes(f, r) : f;
        },
        [](const std::string& p) {
            const auto s = GgufSource::open(p);
            for (const auto& [key, value] : s->metadata())
                (void)value.toString();
            readAllTensors(*s);
        });
    QVERIFY2(t.accepted > 0, "no generated GGUF file was read: the generator stops at the first checks");
}

void TestFuzzParsers::onnxGraphs() {
    const Tally t = fuzz(QStringLiteral("onnx"), path("fuzz.onnx"), onnxModel,
                         [](const std::string& p) { readAllTensors(*openTensorSource(p)); });
    QVERIFY2(t.accepted > 0, "no generated ONNX model was read");
}

void TestFuzzParsers::planFiles() {
    const Tally t = fuzz(
        QStringLiteral("plan"), path("fuzz-plan.json"), [&](Rng& r) { return mutateJson(m_plan, r); },
        [](const std::string& p) { (void)planMeasurementsFromJson(readReportFile(p), p); });
    QVERIFY2(t.accepted > 0, "no mutated plan was read");
}

void TestFuzzParsers::partialReports() {
    const Tally t = fuzz(
        QStringLiteral("part"), path("fuzz-part.json"), [&](Rng& r) { return mutateJson(m_part, r); },
        [](const std::string& p) {
            const nlohmann::json j = readReportFile(p);
            try {
                const MergedReport m = mergeReports({p}, {j});
                (void)modelRows(m.report["tensors"], p);
                (void)exportIndexOf(m.exports, j["shard"]["count"].get<std::int64_t>());
            } catch (const nlohmann::json::exception& e) { // as merge says it
                throw FileError(p + ": not a well-formed QuantLens report: " + e.what());
            }
        });
    QVERIFY2(t.accepted > 0, "no mutated part was merged");
}

void TestFuzzParsers::journals() {
    const nlohmann::json header = {{"file", "m.safetensors"}, {"shard", {{"index", 0}, {"count", 1}}}};
    // A journal of the run, as a shard writes it: the header line, then an entry per finished tensor.
    const std::string journalPath = path("fuzz-seed.journal").toStdString();
    {
        ReportJournal j(journalPath, header, false);
        for (std::size_t i = 0; i < m_part["tensors"].size(); ++i)
            j.append(static_cast<std::int64_t>(i), m_part["tensors"][i]);
    }
    const std::string seed = qltest::readFile(journalPath);
    QVERIFY(!seed.empty());
    const Tally t = fuzz(
        QStringLiteral("journal"), path("fuzz.journal"),
        [&](Rng& r) {
            if (r.chance(50)) return qlfuzz::mutateBytes(seed, r);
            std::string lines; // line by line: a mutated entry among good ones
            std::size_t from = 0;
            while (from < seed.size()) {
                const std::size_t end = seed.find('\n', from);
                const std::string line = seed.substr(from, end - from);
                lines += (r.chance(from > 0 ? 20 : 30) // the header line too
                              ? mutateJson(nlohmann::json::parse(line, nullptr, false), r)
                              : line) +
                         "\n";
                from = end == std::string::npos ? seed.size() : end + 1;
            }
            return lines;
        },
        [&](const std::string& p) { ReportJournal j(p, header, true); });
    QVERIFY2(t.accepted > 0, "no mutated journal was resumed");
}

void TestFuzzParsers::rulesFiles() {
    const std::string seed = "# gate\nsqnr < 30\ncosine < 0.99 and max_abs > 0.001\nmin(sqnr) < 35\n"
                             "mismatched_codes > 0\nclipped_percent > 1 or nan_count > 0\n";
    const nlohmann::json report =
        readSeed(QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/fuzz/corpus_readers/part.json"));
    const Tally t = fuzz(
        QStringLiteral("rules"), path("fuzz-rules.txt"),
        [&](Rng& r) {
            std::string s = qlfuzz::mutateBytes(seed, r);
            if (r.chance(30)) s.insert(r.below(s.size() + 1), r.name());
            return s;
        },
        [&](const std::string& p) {
            const auto rules = readRules(p);
            if (!rules.empty()) (void)runChecks(report, rules);
        });
    QVERIFY2(t.accepted > 0, "no mutated rules file was read");
}

// What the fuzzers found, replayed as plain cases: each must be refused naming the file.
void TestFuzzParsers::findingsReplay() {
    const std::string journal = path("finding.journal").toStdString();
    const nlohmann::json header = {{"file", "m.safetensors"}};
    // A header line whose tag is not a string: a bare JSON type error that named no file.
    qltest::writeFile(journal, R"({"journal":["quantlens report journal 1"],"run":{"file":"m.safetensors"}})"
                               "\n");
    try {
        ReportJournal j(journal, header, true);
        QFAIL("a journal whose tag is an array was resumed");
    } catch (const FileError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(
                     QStringLiteral("finding.journal: not a QuantLens report journal")),
                 e.what());
    }
}

// A part whose tensors are fewer than the run it names: the refusal names the part.
void TestFuzzParsers::partFewerTensorsThanItsRunNamesIt() {
    nlohmann::json part = m_part;
    part["shard"]["selected"] = part["tensors"].size() + 3;
    const std::string p = path("finding-part.json").toStdString();
    qltest::writeFile(p, part.dump());
    try {
        (void)mergeReports({p}, {readReportFile(p)});
        QFAIL("a part holding fewer tensors than its run was merged");
    } catch (const FileError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).startsWith(QString::fromStdString(p) +
                                                        QStringLiteral(": the parts hold")),
                 e.what());
    }
}

QTEST_GUILESS_MAIN(TestFuzzParsers)
#include "tst_fuzz_parsers.moc"
