// Crafted names, through the CLI. What QuantLens writes for another reader is read
// back the way that reader reads it: llama-quantize rules (tests/llama_rules_reader.h), the recipe by
// PyYAML and compressed-tensors' target matching (scripts/recipe_targets.py), check's JUnit XML by
// python's xml parser and its HTML by python's html.parser, check's terminal lines one per subject.
// And what a file names (GGUF keys and tensor names, imatrix entries, ONNX external-data locations,
// resume journals) reaches the terminal only through printable(): no raw control byte on either stream.
#include "cli_test_util.h"
#include "gguf_test_util.h"
#include "io/printable.h"
#include "io/safetensors_writer.h"
#include "io_test_util.h"
#include "job/tensor_diff.h"
#include "llama_rules_reader.h"
#include "quantlens/config.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <set>

using namespace ql;
using namespace qltest;
using namespace qltest::gguf_bytes;
using nlohmann::json;

namespace {

const char kLs[] = "\xe2\x80\xa8";   // U+2028 LINE SEPARATOR
const char kRlo[] = "\xe2\x80\xae";  // U+202E RIGHT-TO-LEFT OVERRIDE
const char kFffe[] = "\xef\xbf\xbe"; // U+FFFE, no XML character

// The planned model: two weights with llama.cpp names, and names crafted to inject.
std::vector<std::string> plannedNames() {
    return {"model.layers.0.self_attn.q_proj.weight",
            "model.layers.0.self_attn.k_proj.weight",
            "a=q8_0 attn=q2_k b.weight",
            std::string("q") + kLs + "evil_stage: 1.weight",
            "Linear.weight",
            "re:.*.weight",
            "quo\"te\\" + std::string(kRlo) + ".weight"};
}

std::string moduleOf(const std::string& weight) {
    return weight.substr(0, weight.size() - 7);
}

// No byte a terminal acts on: C0 controls but the line ends, DEL, and none of C1, U+2028/2029, bidi.
bool terminalSafe(const QByteArray& out) {
    for (const QByteArray& line : out.split('\n'))
        if (needsEscaping(line.toStdString())) return false;
    return true;
}

} // namespace

class TestCraftedNames : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string path(const std::string& name) const {
        return m_dir.filePath(QString::fromStdString(name)).toStdString();
    }
    CliRun cli(const QStringList& args) const { return runCli(args, m_dir.path()); }

    // Runs `script` on a recipe and the modules; the reader's view as JSON.
    json readRecipe(const std::string& recipe, const std::vector<std::string>& modules) {
        QString err;
        const QByteArray out = runPython({pythonScript("recipe_targets.py"), QString::fromStdString(recipe),
                                          QString::fromStdString(json(modules).dump())},
                                         &err);
        if (!err.isEmpty()) qWarning("%s", qPrintable(err));
        return err.isEmpty() ? parseJson(out) : json();
    }

    // The llama-quantize reader over the rules, checked against the plan: each planned tensor gets its
    // chosen type through its llama.cpp name (or its own), no other name any type.
    void checkRules(const std::string& rulesFile, const json& plan, std::vector<std::string> others = {}) {
        const LlamaRules rules(readFile(rulesFile));
        QVERIFY2(rules.malformed.empty(), rules.malformed.empty() ? "" : rules.malformed.front().c_str());
        std::map<std::string, std::string> candidateType;
        for (const auto& c : plan["candidates"])
            candidateType[c["name"].get<std::string>()] = c["ggml_type"].get<std::string>();
        std::set<std::string> planned;
        for (std::size_t t = 0; t < plan["tensors"].size(); ++t) {
            const std::string name = plan["tensors"][t]["name"].get<std::string>();
            const std::string candidate = plan["choice"][t]["candidate"].get<std::string>();
            std::string want = candidateType[candidate];
            if (want.empty()) want = plan["tensors"][t]["dtype"].get<std::string>(); // kept: its own dtype
            const std::string gguf = ggufNameOf(name).empty() ? name : ggufNameOf(name);
            planned.insert(gguf);
            QVERIFY2(rules.typeOf(gguf) == want, qPrintable(QString::fromStdString(printable(gguf))));
        }
        QCOMPARE(rules.rules.size(), planned.size()); // one rule each, no more
        for (const char* other : {"blk.0.attn_v.weight", "blk.0.attn_output.weight", "attn", "b.weight",
                                  "blk.1.attn_q.weight", "Linear", "linear.weight", "evil_stage: 1.weight"})
            others.emplace_back(other);
        for (const std::string& other : others)
            QVERIFY2(rules.typeOf(other).empty(), qPrintable(QString::fromStdString(printable(other))));
    }

    // The recipe read by PyYAML and compressed-tensors' matching: one top-level stage, and each
    // module selected by exactly one entry, the ignore list when it is kept.
    void checkRecipe(const std::string& recipe, const json& plan) {
        if (!pythonHas(QStringLiteral("yaml"))) QSKIP("python3 with yaml (python3-yaml) is not available");
        std::vector<std::string> modules;
        for (const auto& t : plan["tensors"])
            modules.push_back(moduleOf(t["name"].get<std::string>()));
        const json view = readRecipe(recipe, modules);
        QVERIFY(!view.is_null());
        QVERIFY2(view["top"] == json::array({"quant_stage"}), view["top"].dump().c_str());
        std::map<std::string, bool> kept;
        for (const auto& c : plan["candidates"])
            kept[c["name"].get<std::string>()] = c["spec"].is_null();
        for (std::size_t t = 0; t < modules.size(); ++t) {
            const json& hits = view["modules"][modules[t]];
            QVERIFY2(hits.size() == 1,
                     qPrintable(QString::fromStdString(printable(modules[t]) + " " + hits.dump())));
            const bool isKept = kept[plan["choice"][t]["candidate"].get<std::string>()];
            QCOMPARE(hits[0] == "ignore", isKept);
        }
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        std::vector<NamedTensor> weights;
        float seed = 0.25f;
        for (const std::string& name : plannedNames()) {
            std::vector<float> w(16 * 64);
            for (std::size_t i = 0; i < w.size(); ++i)
                w[i] = std::sin(seed * static_cast<float>(i + 1)) * (i % 13 == 0 ? 4.0f : 1.0f);
            seed += 0.37f;
            weights.push_back({name, Tensor::fromFloats({16, 64}, w)});
        }
        writeSafetensors(path("model.safetensors"), weights);
    }

    // A weight named "a=q8_0 attn=q2_k b.weight" (and a U+2028, a class name, "re:" and quotes):
    // plan's rules match each tensor alone, its recipe selects each module alone.
    void planOutputsReadBackAsThemselves() {
        const CliRun run =
            cli({QStringLiteral("plan"), QStringLiteral("model.safetensors"), QStringLiteral("--candidates"),
                 QStringLiteral("int8-channel,int4-g32,keep"), QStringLiteral("--bits-per-weight"),
                 QStringLiteral("8"), QStringLiteral("--report"), QStringLiteral("plan.json"),
                 QStringLiteral("--llama-rules"), QStringLiteral("rules.txt"), QStringLiteral("--recipe"),
                 QStringLiteral("recipe.yaml"), QStringLiteral("-q")});
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(terminalSafe(run.out) && terminalSafe(run.err), run.out.constData());
        QVERIFY2(run.out.contains("q\\u2028evil_stage: 1.weight"), run.out.constData());
        const json plan = json::parse(readFile(path("plan.json")));
        QCOMPARE(plan["tensors"].size(), plannedNames().size());
        checkRules(path("rules.txt"), plan);
        checkRecipe(path("recipe.yaml"), plan);
    }

    // A plan file whose names hold line breaks and whose file name holds U+2028 (the recipe's comment
    // line): re-planned, the rules and the recipe still read back as the plan.
    void craftedPlanFileReadsBackAsItself() {
        if (!QFile::exists(QString::fromStdString(path("plan.json"))))
            QSKIP("needs planOutputsReadBackAsThemselves");
        json plan = json::parse(readFile(path("plan.json")));
        const std::vector<std::string> renamed = {"a=b\nattn=q2_k\nc.weight",
                                                  "x\nblk.0.attn_q.weight=q2_k\ty.weight"};
        for (std::size_t t = 0; t < renamed.size(); ++t) {
            plan["tensors"][t]["name"] = renamed[t];
            plan["choice"][t]["name"] = renamed[t];
        }
        plan["file"] = std::string("m") + kLs + "evil_stage: 1" + kLs + "#";
        writeFile(path("crafted-plan.json"), plan.dump(1));
        const CliRun run = cli(
            {QStringLiteral("plan"), QStringLiteral("model.safetensors"), QStringLiteral("--from"),
             QStringLiteral("crafted-plan.json"), QStringLiteral("--bits-per-weight"), QStringLiteral("8"),
             QStringLiteral("--report"), QStringLiteral("replanned.json"), QStringLiteral("--llama-rules"),
             QStringLiteral("rules2.txt"), QStringLiteral("--recipe"), QStringLiteral("recipe2.yaml")});
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(terminalSafe(run.out) && terminalSafe(run.err), run.out.constData());
        QVERIFY2(run.out.contains("a=b\\nattn=q2_k\\nc.weight"), run.out.constData());
        const json replanned = json::parse(readFile(path("replanned.json")));
        QCOMPARE(replanned["tensors"][0]["name"].get<std::string>(), renamed[0]);
        checkRules(path("rules2.txt"), replanned, {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "c.weight"});
        checkRecipe(path("recipe2.yaml"), replanned);
    }

    // check: one line per subject whatever its name holds; JUnit XML and HTML that parse, names as
    // printable() shows them.
    void checkOutputsOneLinePerSubject() {
        struct Subject {
            std::string name;
            double sqnr;
        };
        const std::vector<Subject> subjects = {
            {"good", 40},
            {"x\nFAIL  good: sqnr < 30 (sqnr_db = 1)", 40},
            {"noisy\npass  fake", 10},
            {std::string("ls") + kLs + "FAIL  z", 40},
            {std::string("nc") + kFffe + "x", 10},
            {std::string("bidi") + kRlo + "evil", 40},
            {"tab\tname<&>", 10},
        };
        json tensors = json::array();
        for (const Subject& s : subjects)
            tensors.push_back({{"name", s.name},
                               {"shape", {4, 4}},
                               {"dtype", "f32"},
                               {"stats",
                                {{"count", 16},
                                 {"nan_count", 0},
                                 {"inf_count", 0},
                                 {"mse", 1e-4},
                                 {"sqnr_db", s.sqnr},
                                 {"cosine", 0.99},
                                 {"max_abs_error", 0.01},
                                 {"clipped_fraction", 0.0}}}});
        writeFile(path("report.json"), json{{"file", "model.safetensors"}, {"tensors", tensors}}.dump());
        const CliRun run =
            cli({QStringLiteral("check"), QStringLiteral("report.json"), QStringLiteral("--rule"),
                 QStringLiteral("sqnr < 30"), QStringLiteral("--junit"), QStringLiteral("check.xml"),
                 QStringLiteral("--html"), QStringLiteral("check.html")});
        QVERIFY2(run.code == 1 && !run.out.isEmpty(), run.err.constData()); // failures, not a refusal
        QVERIFY2(terminalSafe(run.out) && terminalSafe(run.err), run.out.constData());
        QByteArray expected;
        for (const Subject& s : subjects)
            expected += QByteArray::fromStdString(s.sqnr < 30 ? "FAIL  " + printable(s.name) +
                                                                    ": sqnr < 30 (sqnr_db = 10)\n"
                                                              : "pass  " + printable(s.name) + "\n");
        QCOMPARE(run.out, expected);

        QString err;
        const QByteArray junit = runPython(
            {QStringLiteral("-c"),
             QStringLiteral("import json,sys,xml.etree.ElementTree as E\n"
                            "r=E.parse(sys.argv[1]).getroot()\n"
                            "print(json.dumps([[c.get('name'), c.find('failure') is not None] for c in "
                            "r.iter('testcase')]))"),
             QString::fromStdString(path("check.xml"))},
            &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        json want = json::array();
        for (const Subject& s : subjects)
            want.push_back({printable(s.name), s.sqnr < 30});
        QVERIFY2(parseJson(junit) == want, junit.constData());

        const QByteArray html =
            runPython({QStringLiteral("-c"),
                       QStringLiteral("import json,sys\nfrom html.parser import HTMLParser\n"
                                      "class P(HTMLParser):\n"
                                      "    def __init__(s):\n"
                                      "        super().__init__(); s.rows=[]; s.cell=None\n"
                                      "    def handle_starttag(s,t,a):\n"
                                      "        if t=='tr': s.rows.append([])\n"
                                      "        if t=='td': s.cell=''\n"
                                      "    def handle_endtag(s,t):\n"
                                      "        if t=='td': s.rows[-1].append(s.cell); s.cell=None\n"
                                      "    def handle_data(s,d):\n"
                                      "        if s.cell is not None: s.cell+=d\n"
                                      "p=P(); p.feed(open(sys.argv[1],encoding='utf-8').read())\n"
                                      "print(json.dumps([r[0] for r in p.rows if r]))"),
                       QString::fromStdString(path("check.html"))},
                      &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        json names = json::array();
        for (const Subject& s : subjects)
            names.push_back(printable(s.name));
        QVERIFY2(parseJson(html) == names, html.constData());
        QVERIFY(terminalSafe(QByteArray::fromStdString(readFile(path("check.html")))));
        QVERIFY(terminalSafe(QByteArray::fromStdString(readFile(path("check.xml")))));
    }

    // Error lines: a GGUF metadata key or tensor name, an imatrix entry name, an ONNX external-data
    // location, each with ESC sequences, reach stderr escaped; inspect shows a location escaped.
    void errorLinesAreEscaped_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("shown");
        std::string kv;
        str(kv, "k\x1b[31m");
        u32(kv, 4);
        u32(kv, 1);
        writeFile(path("dupkey.gguf"), gguf(2, kv + kv, 0, {}, 64));
        QTest::addRow("gguf-metadata-key")
            << QStringList{QStringLiteral("inspect"), QStringLiteral("dupkey.gguf")}
            << QByteArray("metadata key 'k\\x1B[31m' appears twice");
        std::string info;
        str(info, "w\x1b]0;t\x07");
        u32(info, 5);
        writeFile(path("dims.gguf"), gguf(0, {}, 1, info, 64));
        QTest::addRow("gguf-tensor-name")
            << QStringList{QStringLiteral("inspect"), QStringLiteral("dims.gguf")}
            << QByteArray("tensor 'w\\x1B]0;t\\x07': 5 dimensions");
        // A legacy imatrix: one entry "blk<ESC>[2J" with a negative ncall.
        std::string dat;
        u32(dat, 1);
        u32(dat, 7);
        dat += "blk\x1b[2J";
        u32(dat, static_cast<std::uint32_t>(-1));
        writeFile(path("bad.imatrix"), dat + std::string(16, '\0'));
        QTest::addRow("imatrix-entry")
            << QStringList{QStringLiteral("quantize"),     QStringLiteral("model.safetensors"),
                           QStringLiteral("--tensor"),     QStringLiteral("Linear.weight"),
                           QStringLiteral("--importance"), QStringLiteral("bad.imatrix")}
            << QByteArray("entry 'blk\\x1B[2J': negative ncall -1");
        QTest::addRow("onnx-location")
            << QStringList{QStringLiteral("inspect"), QStringLiteral("onnx/missing.onnx")}
            << QByteArray("'w\\x1B]0;pwned\\x07.bin'");
    }
    void errorLinesAreEscaped() {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, shown);
        if (args.last().startsWith(QLatin1String("onnx/")) && !makeOnnx()) QSKIP("no ONNX fixtures");
        const CliRun run = cli(args);
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.startsWith("quantlens-cli: error: ") && run.err.count('\n') == 1 &&
                     terminalSafe(run.err),
                 run.err.constData());
        QVERIFY2(run.err.contains(shown), run.err.constData());
    }

    void inspectShowsLocationsEscaped() {
        if (!makeOnnx()) QSKIP("no ONNX fixtures (python3 with onnx, and a build with ONNX)");
        const CliRun run = cli({QStringLiteral("inspect"), QStringLiteral("onnx/stored.onnx")});
        QVERIFY2(run.code == 0, run.err.constData());
        QVERIFY2(run.out.contains("external d\\x1B[31m.bin @ 0") && terminalSafe(run.out),
                 run.out.constData());
    }

    // A resume journal is read back into the shard's table: its texts are shown escaped.
    void resumeJournalIsShownEscaped() {
        const QStringList args = {QStringLiteral("quantize"), QStringLiteral("model.safetensors"),
                                  QStringLiteral("--all"),    QStringLiteral("--dtype"),
                                  QStringLiteral("int8"),     QStringLiteral("-q"),
                                  QStringLiteral("--shard"),  QStringLiteral("0/1"),
                                  QStringLiteral("--report"), QStringLiteral("part.json")};
        CliRun run = cli(args);
        QVERIFY2(run.code == 0, run.err.constData());
        const json part = json::parse(readFile(path("part.json")));
        json shard = part["shard"];
        shard.erase("positions");
        shard.erase("export");
        // The journal the run would have left had it been stopped: its header, then every entry, each
        // given an error carrying escape sequences.
        std::string journal = json{{"journal", "quantlens report journal 1"},
                                   {"format_version", part["format_version"]},
                                   {"run", {{"file", part["file"]}, {"shard", shard}}}}
                                  .dump() +
                              "\n";
        for (std::size_t i = 0; i < part["tensors"].size(); ++i) {
            json entry = {{"name", part["tensors"][i]["name"]},
                          {"shape", part["tensors"][i]["shape"]},
                          {"dtype", part["tensors"][i]["dtype"]},
                          {"error", "\x1b]0;pwned\x07\x1b[2J boom"}};
            journal += json{{"position", part["shard"]["positions"][i]}, {"entry", entry}}.dump() + "\n";
        }
        QVERIFY(QFile::remove(QString::fromStdString(path("part.json"))));
        writeFile(path("part.json.journal"), journal);
        run = cli(args + QStringList{QStringLiteral("--resume")});
        QVERIFY2(run.err.contains("already done, 0 to run"), run.err.constData());
        QCOMPARE(run.code, 1); // every tensor failed, as the journal says
        QVERIFY2(run.out.contains("FAILED: \\x1B]0;pwned\\x07\\x1B[2J boom") && terminalSafe(run.out) &&
                     terminalSafe(run.err),
                 run.out.constData());
    }

private:
    bool m_onnxTried = false, m_onnx = false;
    bool makeOnnx() {
        if (m_onnxTried) return m_onnx;
        m_onnxTried = true;
        if (!QUANTLENS_HAVE_ONNX || !pythonHas(QStringLiteral("onnx")) ||
            !QDir(m_dir.path()).mkpath(QStringLiteral("onnx")))
            return false;
        QString err;
        runPython({pythonScript("crafted_names_onnx.py"), m_dir.filePath(QStringLiteral("onnx"))}, &err);
        if (!err.isEmpty()) qWarning("%s", qPrintable(err));
        m_onnx = err.isEmpty();
        return m_onnx;
    }
};

QTEST_GUILESS_MAIN(TestCraftedNames)
#include "tst_crafted_names.moc"
