// The whole-model summary (core/report/model_summary.h): the weights' size and bits per weight before
// and after quantization, from each run's reports, against figures worked out by hand; the same
// figures from a report read back (the app opening a report file), and the parameters' bits as the
// export writes them.
#include "backend_test_util.h"
#include "io/export_tensors.h"
#include "io/safetensors_writer.h"
#include "job/job.h"
#include "job_test_util.h"
#include "report/model_summary.h"
#include "report/report_read.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace ql;

namespace {

QuantSpec calibrated(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric = true) {
    return qltest::calibratedSpec(p, t, s, std::move(axes), symmetric);
}

} // namespace

class TestModelSummary : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void sizesWorkedOutByHand_data();
    void sizesWorkedOutByHand();
    void summaryLine();
    void nothingQuantized();
    void ggufBlocksCountAsStored();

private:
    // A whole-model run (weights only) of `spec` over `names`, with the codes kept.
    ModelOutcome run(const QuantSpec& spec, const std::vector<std::string>& names) const;
    QTemporaryDir m_dir;
    std::string m_model;
};

void TestModelSummary::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = m_dir.filePath(QStringLiteral("model.safetensors")).toStdString();
    std::vector<NamedTensor> t;
    t.push_back({"fc.weight", Tensor::fromFloats({16, 32}, qltest::normalValues(16 * 32, 1))});
    t.push_back({"fc.bias", Tensor::fromFloats({16}, qltest::normalValues(16, 2))});
    t.push_back({"mx.weight", Tensor::fromFloats({4, 64}, qltest::normalValues(4 * 64, 3))});
    t.push_back({"half.weight", qltest::tensorOf(qltest::normalValues(16 * 32, 4), {16, 32}, DType::BF16)});
    writeSafetensors(m_model, t);
}

ModelOutcome TestModelSummary::run(const QuantSpec& spec, const std::vector<std::string>& names) const {
    ModelJobOptions options;
    options.keepCodes = true;
    options.weightsOnly = true;
    return runModelJob(qltest::jobRequest(m_model, spec), names, options);
}

void TestModelSummary::sizesWorkedOutByHand_data() {
    QTest::addColumn<QuantSpec>("spec");
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<qint64>("elements");
    QTest::addColumn<qint64>("before");
    QTest::addColumn<qint64>("after");
    // f32 [16, 32]: 512 elements of 32 bits = 16384. int8 per-channel along axis 0: 8 bits a code and
    // an f32 scale per row, 8·512 + 32·16 = 4608 bits, (8·512 + 32·16) / 512 = 9 bits per weight.
    QTest::newRow("int8 per-channel") << calibrated(Preset::Torch, Target::Int8, Scheme::PerChannel, {0})
                                      << "fc.weight" << qint64(512) << qint64(16384) << qint64(4608);
    // f32 [4, 64]: 256 elements, 8192 bits. MXFP4 blocks of 32 along the rows: 4·2 = 8 blocks, an E8M0
    // byte each; 4·256 + 8·8 = 1088 bits, 4.25 bits per weight.
    QTest::newRow("mxfp4") << calibrated(Preset::MX, Target::Fp4E2M1, Scheme::Block, {-1}) << "mx.weight"
                           << qint64(256) << qint64(8192) << qint64(1088);
    // NVFP4 blocks of 16: 4·4 = 16 blocks, an FP8 E4M3 scale each, and one f32 tensor scale;
    // 4·256 + 16·8 + 32 = 1184 bits, 4.625 bits per weight.
    QTest::newRow("nvfp4") << calibrated(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {-1}) << "mx.weight"
                           << qint64(256) << qint64(8192) << qint64(1184);
    // bf16 [16, 32]: 16·512 = 8192 bits before. uint8 per-channel, asymmetric: codes 8·512, an f32 scale
    // and a uint8 zero point per row: 4096 + 32·16 + 8·16 = 4736 bits, 9.25 bits per weight.
    QTest::newRow("uint8 asymmetric, bf16 weight")
        << calibrated(Preset::Torch, Target::UInt8, Scheme::PerChannel, {0}, false) << "half.weight"
        << qint64(512) << qint64(8192) << qint64(4736);
}

void TestModelSummary::sizesWorkedOutByHand() {
    QFETCH(QuantSpec, spec);
    QFETCH(QString, tensor);
    QFETCH(qint64, elements);
    QFETCH(qint64, before);
    QFETCH(qint64, after);
    // The bias is kept (not a weight): [16] f32, 512 bits before and after.
    const ModelOutcome out = run(spec, {tensor.toStdString(), "fc.bias"});
    QCOMPARE(out.reports.size(), std::size_t{2});
    QVERIFY2(out.reports[0].quantized(), out.reports[0].error.c_str());
    QVERIFY(!out.reports[1].passedThrough.empty());

    const ModelSummary s = summarizeModel(out.reports);
    QCOMPARE(s.quantizedSize.elements, elements);
    QCOMPARE(s.quantizedSize.bitsBefore, before);
    QCOMPARE(s.quantizedSize.bitsAfter, after);
    QCOMPARE(s.quantizedSize.bitsPerWeightAfter(), double(after) / double(elements));
    QCOMPARE(s.model.elements, elements + 16);
    QCOMPARE(s.model.bitsBefore, before + 512);
    QCOMPARE(s.model.bitsAfter, after + 512);

    // The parameters' bits are what the export writes for them (one rule: io/export_tensors.h).
    QCOMPARE(out.quantized.size(), std::size_t{1});
    const QuantizedTensor& q = out.quantized[0];
    const ScaleTensors written = scaleTensors(q, m_model);
    std::int64_t paramBits = static_cast<std::int64_t>(written.scale.byteSize()) * 8;
    if (written.hasGlobalScale()) paramBits += static_cast<std::int64_t>(written.globalScale.byteSize()) * 8;
    if (written.hasZeroPoint()) paramBits += static_cast<std::int64_t>(written.zeroPoint.byteSize()) * 8;
    const std::int64_t codeBits = q.plan.codeTarget == Target::Fp4E2M1 ? 4 : 8;
    QCOMPARE(paramBits, after - elements * codeBits);

    // A report read back (the app opening a report file) gives the same figures.
    std::vector<TensorReport> read;
    read.reserve(out.reports.size());
    for (const TensorReport& r : out.reports)
        read.push_back(reportFromJson(toJson(r)));
    const ModelSummary back = summarizeModel(read);
    QCOMPARE(back.model.bitsBefore, s.model.bitsBefore);
    QCOMPARE(back.model.bitsAfter, s.model.bitsAfter);
    QCOMPARE(back.quantizedSize.bitsAfter, s.quantizedSize.bitsAfter);
}

void TestModelSummary::summaryLine() {
    // fc.weight (int8 per-channel, 16384 -> 4608 bits) and the kept bias (512 bits): 16896 bits =
    // 2112 bytes = 2.1 KB before, 5120 bits = 640 bytes after. Quantized: 32 -> 4608/512 = 9 bits per
    // weight; whole model: 16896/528 = 32 -> 5120/528 = 9.697 bits per weight.
    const ModelOutcome out =
        run(calibrated(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {"fc.weight", "fc.bias"});
    const std::string text = summaryText(summarizeModel(out.reports));
    const std::string line = "\nWeights 2.1 KB → 640 B; quantized tensors 32.00 → 9.00 bits per weight; "
                             "whole model 32.00 → 9.70 bits per weight.\n";
    QVERIFY2(text.find(line) != std::string::npos, text.c_str());
    QVERIFY2(text.rfind("Overall SQNR ", 0) == 0, text.c_str()); // the error first, then the sizes
}

void TestModelSummary::nothingQuantized() {
    // The bias alone, kept: [16] f32 = 64 bytes, unchanged; no quantized tensors to speak of.
    const ModelOutcome out =
        run(calibrated(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {"fc.bias"});
    const ModelSummary s = summarizeModel(out.reports);
    QCOMPARE(s.quantizedSize.elements, std::int64_t{0});
    QVERIFY(std::isnan(s.quantizedSize.bitsPerWeightAfter()));
    const std::string text = summaryText(s);
    QVERIFY2(text.rfind("No tensor quantized.\nWeights 64 B → 64 B; whole model 32.00 → 32.00 bits per "
                        "weight.\nKept unquantized, 1 tensor(s): ",
                        0) == 0,
             text.c_str());
}

// A GGUF file's Q8_0 tensor is read as f32, but it takes 34 bytes per block of 32 in the file: that
// is its size before. [4, 256] = 32 blocks: 32 × 34 × 8 = 8704 bits, 8.5 bits per weight; the f32
// tensor beside it 1024 × 32 = 32768. Without the source both count at their dtype's 32 bits.
void TestModelSummary::ggufBlocksCountAsStored() {
    JobRequest request = qltest::jobRequest(QUANTLENS_SOURCE_DIR "/tests/data/gguf/types_4x256.gguf",
                                            calibrated(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}));
    const ModelOutcome out = runModelJob(request, {"q8_0.4x256", "f32.4x256"}, ModelJobOptions{});
    QCOMPARE(out.reports.size(), std::size_t{2});
    QVERIFY2(out.reports[0].quantized(), out.reports[0].error.c_str());
    const ModelSummary s = summarizeModel(out.reports, request.source.get());
    QCOMPARE(s.model.elements, std::int64_t{2048});
    QCOMPARE(s.model.bitsBefore, std::int64_t{8704 + 32768});
    QCOMPARE(s.quantizedSize.bitsBefore, std::int64_t{8704 + 32768});
    QCOMPARE(summarizeModel(out.reports).model.bitsBefore, std::int64_t{2 * 32768});
}

QTEST_APPLESS_MAIN(TestModelSummary)
#include "tst_model_summary.moc"
