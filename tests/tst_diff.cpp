// diff: two checkpoints of one model, tensor by tensor. Names matched exactly and through the
// Hugging Face <-> GGUF naming (either way round), the error statistics of B against A equal the
// ones ErrorStats gives directly, ULPs counted in the tensors' own format, pairs that cannot be
// compared said, and the CLI's report gated by `check` rules.
#include "backend_test_util.h"
#include "cli_test_util.h"
#include "io/safetensors_writer.h"
#include "job/tensor_diff.h"
#include "tensor/float_formats.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>

using namespace ql;

namespace {

Tensor bf16Of(const std::vector<float>& v, const Shape& shape) {
    return qltest::tensorOf(v, shape, DType::BF16);
}

} // namespace

class TestDiff : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void ggufNames_data();
    void ggufNames();
    void matchesBothWays();
    void matchesQdqNames();
    void statisticsAndUlps();
    void cliGatesWithRules();
    void shardsMergeIntoTheWholeDiff();

private:
    QTemporaryDir m_dir;
    std::string m_hf, m_gguf;
    std::vector<float> m_up;
};

void TestDiff::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_up = qltest::normalValues(8 * 16, 5);
    std::vector<float> upB = m_up;
    upB[3] = std::nextafter(upB[3], 10.0f);                          // one element one ULP away
    upB[7] = std::nextafter(std::nextafter(upB[7], -10.0f), -10.0f); // another two
    const auto embed = qltest::normalValues(10 * 4, 6);
    m_hf = m_dir.filePath(QStringLiteral("hf.safetensors")).toStdString();
    m_gguf = m_dir.filePath(QStringLiteral("gguf-named.safetensors")).toStdString();
    writeSafetensors(m_hf, {{"model.layers.0.mlp.up_proj.weight", Tensor::fromFloats({8, 16}, m_up)},
                            {"model.embed_tokens.weight", bf16Of(embed, {10, 4})},
                            {"model.norm.weight", Tensor::fromFloats({4}, qltest::normalValues(4, 7))},
                            {"only.in.a", Tensor::fromFloats({2}, qltest::normalValues(2, 8))}});
    writeSafetensors(m_gguf, {{"blk.0.ffn_up.weight", Tensor::fromFloats({8, 16}, upB)},
                              {"token_embd.weight", bf16Of(embed, {10, 4})},
                              {"output_norm.weight", Tensor::fromFloats({5}, qltest::normalValues(5, 7))},
                              {"only.in.b", Tensor::fromFloats({2}, qltest::normalValues(2, 9))}});
}

void TestDiff::ggufNames_data() {
    QTest::addColumn<QString>("hf");
    QTest::addColumn<QString>("gguf");
    QTest::newRow("q") << "model.layers.12.self_attn.q_proj.weight"
                       << "blk.12.attn_q.weight";
    QTest::newRow("o") << "model.layers.0.self_attn.o_proj.weight"
                       << "blk.0.attn_output.weight";
    QTest::newRow("down") << "model.layers.3.mlp.down_proj.weight"
                          << "blk.3.ffn_down.weight";
    QTest::newRow("bias") << "model.layers.3.self_attn.k_proj.bias"
                          << "blk.3.attn_k.bias";
    QTest::newRow("norm") << "model.layers.1.post_attention_layernorm.weight"
                          << "blk.1.ffn_norm.weight";
    QTest::newRow("embed") << "model.embed_tokens.weight"
                           << "token_embd.weight";
    QTest::newRow("head") << "lm_head.weight"
                          << "output.weight";
    QTest::newRow("unknown module") << "model.layers.1.mlp.experts.weight"
                                    << "";
    QTest::newRow("not a layer index") << "model.layers.x.mlp.up_proj.weight"
                                       << "";
    QTest::newRow("no suffix") << "model.norm"
                               << "";
}

void TestDiff::ggufNames() {
    QFETCH(QString, hf);
    QFETCH(QString, gguf);
    QCOMPARE(QString::fromStdString(ggufNameOf(hf.toStdString())), gguf);
}

void TestDiff::matchesBothWays() {
    const auto hf = openTensorSource(m_hf), gguf = openTensorSource(m_gguf);
    for (bool hfFirst : {true, false}) {
        const TensorMatch m = hfFirst ? matchTensors(*hf, *gguf) : matchTensors(*gguf, *hf);
        QCOMPARE(m.pairs.size(), std::size_t{3});
        for (const auto& p : m.pairs)
            QCOMPARE(p.how, std::string("gguf"));
        QCOMPARE(m.onlyA, std::vector<std::string>{hfFirst ? "only.in.a" : "only.in.b"});
        QCOMPARE(m.onlyB, std::vector<std::string>{hfFirst ? "only.in.b" : "only.in.a"});
    }
    const TensorMatch self = matchTensors(*hf, *hf);
    QCOMPARE(self.pairs.size(), hf->tensors().size());
    QCOMPARE(self.pairs.front().how, std::string("exact"));
}

// A float weight W and the DequantizeLinear output onnxruntime's quantizer names W_DequantizeLinear_Output.
void TestDiff::matchesQdqNames() {
    const std::string fl = m_dir.filePath(QStringLiteral("float.safetensors")).toStdString();
    const std::string qdq = m_dir.filePath(QStringLiteral("qdq-named.safetensors")).toStdString();
    const auto w = qltest::normalValues(6, 10);
    const std::vector<float> bias(w.begin(), w.begin() + 2);
    writeSafetensors(
        fl, {{"fc.weight", Tensor::fromFloats({2, 3}, w)}, {"fc.bias", Tensor::fromFloats({2}, bias)}});
    writeSafetensors(qdq, {{"fc.weight_DequantizeLinear_Output", Tensor::fromFloats({2, 3}, w)},
                           {"fc.weight_scale", Tensor::fromFloats({}, std::vector<float>{0.5f})},
                           {"fc.bias", Tensor::fromFloats({2}, bias)}});
    const auto a = openTensorSource(fl), b = openTensorSource(qdq);
    for (bool floatFirst : {true, false}) {
        const TensorMatch m = floatFirst ? matchTensors(*a, *b) : matchTensors(*b, *a);
        QCOMPARE(m.pairs.size(), std::size_t{2});
        const TensorPair& p = m.pairs[0];
        QCOMPARE(floatFirst ? p.a : p.b, std::string("fc.weight"));
        QCOMPARE(floatFirst ? p.b : p.a, std::string("fc.weight_DequantizeLinear_Output"));
        QCOMPARE(p.how, std::string("qdq"));
        QCOMPARE(m.pairs[1].how, std::string("exact"));
        QCOMPARE(floatFirst ? m.onlyB : m.onlyA, std::vector<std::string>{"fc.weight_scale"});
    }
}

void TestDiff::statisticsAndUlps() {
    const auto hf = openTensorSource(m_hf), gguf = openTensorSource(m_gguf);
    const TensorDiff up =
        diffTensors(*hf, *gguf, {"model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", "gguf"});
    QVERIFY2(up.failure.empty(), up.failure.c_str());
    QCOMPARE(up.maxUlp, std::int64_t{2});
    // The same statistics ErrorStats gives on the two value lists.
    ErrorStats direct;
    const auto b = gguf->load("blk.0.ffn_up.weight").toFloatVector();
    for (std::size_t i = 0; i < m_up.size(); ++i)
        direct.addElement(m_up[i], b[i], static_cast<std::int64_t>(i));
    QCOMPARE(up.stats.sqnrDb(), direct.sqnrDb());
    QCOMPARE(up.stats.maxAbsError(), direct.maxAbsError());
    QCOMPARE(up.stats.worstIndex(), std::int64_t{7});
    QCOMPARE(up.error.total(), static_cast<std::int64_t>(m_up.size()));

    const TensorDiff embed =
        diffTensors(*hf, *gguf, {"model.embed_tokens.weight", "token_embd.weight", "gguf"});
    QCOMPARE(embed.maxUlp, std::int64_t{0});
    QVERIFY(std::isinf(embed.stats.sqnrDb())); // identical
    QVERIFY(embed.note.empty());

    // Integer tensors of one dtype: ULPs in f32, and the note says why without claiming the dtypes differ.
    const std::string ints = m_dir.filePath(QStringLiteral("ints.safetensors")).toStdString();
    Tensor codes(DType::I8, {4, 4});
    for (std::size_t i = 0; i < 16; ++i)
        codes.mutableData()[i] = static_cast<std::byte>(i * 7);
    writeSafetensors(ints, {{"codes", codes}});
    const auto intSource = openTensorSource(ints);
    const TensorDiff same = diffTensors(*intSource, *intSource, {"codes", "codes", "exact"});
    QVERIFY2(same.failure.empty(), same.failure.c_str());
    QVERIFY2(same.note.find("int8 values have no ULP of their own") != std::string::npos, same.note.c_str());
    QVERIFY2(same.note.find("dtypes differ") == std::string::npos, same.note.c_str());

    const TensorDiff norm = diffTensors(*hf, *gguf, {"model.norm.weight", "output_norm.weight", "gguf"});
    QVERIFY(QString::fromStdString(norm.failure).contains(QStringLiteral("shapes differ")));

    const auto report = diffReport(m_hf, m_gguf, {up, embed, norm});
    QCOMPARE(report["tensors"].size(), std::size_t{3});
    QCOMPARE(report["tensors"][0]["stats"]["max_ulp"].get<int>(), 2);
    QVERIFY(report["tensors"][2].contains("error"));
}

void TestDiff::cliGatesWithRules() {
    auto run = [&](const QStringList& args, QByteArray* out = nullptr) {
        const qltest::CliRun r = qltest::runCli(args, m_dir.path());
        if (out) *out = r.out + r.err;
        return r.code;
    };
    const QString hf = QString::fromStdString(m_hf), gguf = QString::fromStdString(m_gguf);
    QByteArray out;
    // The norm pair cannot be compared (shapes differ): exit 1 without rules.
    QCOMPARE(
        run({QStringLiteral("diff"), hf, gguf, QStringLiteral("--report"), QStringLiteral("d.json")}, &out),
        1);
    QVERIFY2(out.contains("shapes differ") && out.contains("only in"), out.constData());
    QVERIFY(out.contains("model.layers.0.mlp.up_proj.weight ~ blk.0.ffn_up.weight"));
    const QStringList upOnly{QStringLiteral("diff"), hf, gguf, QStringLiteral("--match"),
                             QStringLiteral("up_proj|embed")};
    QCOMPARE(run(upOnly, &out), 0);
    QCOMPARE(run(upOnly + QStringList{QStringLiteral("--rule"), QStringLiteral("max_ulp > 1")}, &out), 1);
    QVERIFY2(out.contains("FAIL  model.layers.0.mlp.up_proj.weight: max_ulp > 1 (max_ulp = 2)"),
             out.constData());
    QCOMPARE(run(upOnly + QStringList{QStringLiteral("--rule"), QStringLiteral("max_ulp > 2")}), 0);
    // The report is one `check` reads.
    QCOMPARE(run({QStringLiteral("check"), QStringLiteral("d.json"), QStringLiteral("--rule"),
                  QStringLiteral("sqnr < 300")},
                 &out),
             1);
    QVERIFY2(out.contains("FAIL  model.layers.0.mlp.up_proj.weight") &&
                 out.contains("not measured: shapes differ"),
             out.constData());
    QCOMPARE(run({QStringLiteral("diff"), hf, gguf, QStringLiteral("--tensor"), QStringLiteral("only.in.a")},
                 &out),
             1);
    QVERIFY(out.contains("no counterpart"));
    // A real GGUF (written by ggml, every common type) against ggml's own dequantization of it.
    const QString fixtures = QStringLiteral(QUANTLENS_SOURCE_DIR "/tests/data/gguf/");
    QCOMPARE(run({QStringLiteral("diff"), fixtures + QStringLiteral("types_4x256.expected.safetensors"),
                  fixtures + QStringLiteral("types_4x256.gguf"), QStringLiteral("--rule"),
                  QStringLiteral("max_ulp > 0")},
                 &out),
             0);
    QVERIFY2(out.contains("13 pairs compared (0 could not be)"), out.constData());
}

// A diff fanned out as quantize is: the parts merge into the one-process report, byte for byte.
void TestDiff::shardsMergeIntoTheWholeDiff() {
    auto run = [&](const QStringList& args) { return qltest::runCli(args, m_dir.path()).code; };
    auto read = [&](const char* name) {
        QFile f(m_dir.filePath(QLatin1String(name)));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    // B is a copy: a model against itself is refused (core/job/diff_job's refuseSelfDiff).
    const QString copy = m_dir.filePath(
        QStringLiteral("hf-copy") + QString::fromStdString(std::filesystem::path(m_hf).extension().string()));
    QFile::remove(copy);
    QVERIFY(QFile::copy(QString::fromStdString(m_hf), copy));
    const QStringList diff{QStringLiteral("diff"), QString::fromStdString(m_hf), copy, QStringLiteral("-q")};
    QCOMPARE(run(diff + QStringList{QStringLiteral("--report"), QStringLiteral("whole.json")}), 0);
    for (const char* shard : {"0/2", "1/2"})
        QCOMPARE(run(diff + QStringList{QStringLiteral("--shard"), QLatin1String(shard),
                                        QStringLiteral("--report"),
                                        QStringLiteral("part-%1.json").arg(QLatin1Char(shard[0]))}),
                 0);
    QCOMPARE(run({QStringLiteral("merge"), QStringLiteral("part-1.json"), QStringLiteral("part-0.json"),
                  QStringLiteral("-o"), QStringLiteral("merged.json"), QStringLiteral("-q")}),
             0);
    QCOMPARE(read("merged.json"), read("whole.json"));
    QVERIFY(read("whole.json").contains("\"file_b\""));
}

QTEST_GUILESS_MAIN(TestDiff)
#include "tst_diff.moc"
