// Every export round-trips: for each preset family and each format QuantLens writes
// (compressed-tensors, the operator's native layout, HDF5), the CLI quantizes a fixture, the export is
// opened with the reader QuantLens uses (io/export_reader.h) and must give back the job's own codes and
// dequantized values, and `quantlens-cli diff --requantize` of the original against it must match every
// tensor to its source and report 0 mismatched codes, scales and zero points. The fixture holds a
// Hugging Face name ("fc.weight"), a Paddle one ("conv2d_42.w_0", which compressed-tensors stores as
// "conv2d_42.w_0.weight") and a bias kept unquantized.
#include "cli_test_util.h"
#include "io/export_reader.h"
#include "io/safetensors_writer.h"
#include "job_test_util.h"
#include "quant/reference.h"
#include "quant/spec_json.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

using namespace ql;
using qltest::runCli;

namespace {

const std::vector<std::string> kQuantized = {"fc.weight", "conv2d_42.w_0"};

std::vector<float> gaussian(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 0.05f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v)
        x = d(rng);
    return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

QStringList split(const char* args) {
    return QString::fromLatin1(args).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

} // namespace

class TestExportRoundtrip : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_model, m_groups;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath(QStringLiteral("model/model.safetensors"));
        m_groups = m_dir.filePath(QStringLiteral("groups.safetensors"));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("model")));
        std::vector<NamedTensor> t;
        t.push_back({"fc.weight", Tensor::fromFloats(Shape{64, 128}, gaussian(64 * 128, 1))});
        t.push_back({"fc.bias", Tensor::fromFloats(Shape{64}, gaussian(64, 2))});
        t.push_back({"conv2d_42.w_0", Tensor::fromFloats(Shape{64, 64}, gaussian(64 * 64, 3))});
        writeSafetensors(m_model.toStdString(), t);
        // npu_group_quant's group_index: cumulative row ends.
        Tensor ends(DType::I64, Shape{3});
        const std::int64_t e[] = {10, 40, 64};
        std::memcpy(ends.mutableData(), e, sizeof e);
        writeSafetensors(m_groups.toStdString(), {{"ends", std::move(ends)}});
    }

    void roundTrip_data() {
        QTest::addColumn<QString>("format"); // ct, native, hdf5
        QTest::addColumn<QStringList>("spec");
        struct Family {
            const char* name;
            const char* args;
            bool compressedTensors; // expressible as compressed-tensors
        };
        const Family families[] = {
            {"torch-int8", "--preset torch --dtype int8", true},
            {"torch-uint8", "--preset torch --dtype uint8 --asymmetric", true},
            {"tensorrt-int8", "--preset tensorrt --dtype int8", true},
            {"tensorrt-int4-block", "--preset tensorrt --dtype int4 --scheme block --block 1,32", true},
            {"tensorrt-fp8", "--preset tensorrt --dtype fp8-e4m3", true},
            {"tensorrt-fp8-block", "--preset tensorrt --dtype fp8-e4m3 --scheme block --block 1,32", true},
            {"aclnn-int8", "--preset aclnn-quantize --dtype int8", true},
            {"aclnn-uint8", "--preset aclnn-quantize --dtype uint8 --asymmetric", true},
            {"ascend-quant-int8", "--preset ascend-quant --dtype int8", false},
            {"ascend-quant-int4", "--preset ascend-quant --dtype int4", false},
            {"ascend-quant-int32", "--preset ascend-quant --dtype int32", false},
            {"npu-group-quant-int8", "--preset npu-group-quant --dtype int8 --scheme ragged", false},
            {"npu-group-quant-int32", "--preset npu-group-quant --dtype int32 --scheme ragged", false},
            {"pypto-int8", "--preset pypto --dtype int8", false},
            {"pypto-uint8", "--preset pypto --dtype uint8 --asymmetric", false},
            {"mx-fp8", "--preset mx --dtype fp8-e4m3", false},
            {"mx-fp4", "--preset mx --dtype fp4-e2m1", true},
            {"nvfp4", "--preset nvfp4", true},
        };
        for (const Family& f : families) {
            QStringList spec = split(f.args);
            if (QString::fromLatin1(f.args).contains(QLatin1String("ragged")))
                spec << QStringLiteral("--group-index") << m_groups + QStringLiteral(":ends");
            if (f.compressedTensors)
                QTest::newRow((std::string(f.name) + " ct").c_str()) << QStringLiteral("ct") << spec;
            QTest::newRow((std::string(f.name) + " native").c_str()) << QStringLiteral("native") << spec;
#ifdef QUANTLENS_HAS_HDF5
            QTest::newRow((std::string(f.name) + " hdf5").c_str()) << QStringLiteral("hdf5") << spec;
#endif
        }
    }

    void roundTrip() {
        QFETCH(QString, format);
        QFETCH(QStringList, spec);
        const qltest::CliExport e = qltest::exportWholeModel(
            m_model, m_dir.path(), QString::fromLatin1(QTest::currentDataTag()), format, spec);
        QVERIFY2(e.run.code == 0, e.run.err.constData());
        const QString& out = e.out;

        // Read back as QuantLens reads it: every quantized tensor under its source name.
        const auto exported = openTensorSource(out.toStdString());
        const std::vector<ExportedEntry> entries = exportedEntries(*exported);
        std::vector<std::string> names; // the weights, and the bias where the layout takes 1-D tensors
        names.reserve(entries.size());
        for (const auto& e : entries)
            names.push_back(e.name);
        for (const auto& n : kQuantized)
            QVERIFY2(std::find(names.begin(), names.end(), n) != names.end(), n.c_str());

        // The job's own codes and dequantization, in this process, with each tensor's spec as exported.
        for (const ExportedEntry& entry : entries) {
            JobRequest request =
                qltest::jobRequest(m_model.toStdString(), specFromJson(entry.description["plan"]));
            if (spec.contains(QStringLiteral("--group-index")))
                QCOMPARE(request.spec.groupEnds,
                         (std::vector<std::int64_t>{10, 40, 64})); // recorded in the plan
            ModelJobOptions options;
            options.keepCodes = true;
            const ModelOutcome outcome = runModelJob(request, {entry.name}, options);
            QCOMPARE(outcome.quantized.size(), std::size_t{1});
            const QuantizedTensor back = readExported(*exported, entry);
            const QuantizedTensor& ours = outcome.quantized.front();
            QCOMPARE(back.name, ours.name);
            QCOMPARE(back.plan.shape, ours.plan.shape);
            QVERIFY2(back.codes == ours.codes, ours.name.c_str());
            QVERIFY2(sameBits(back.params.scales, ours.params.scales), ours.name.c_str());
            QVERIFY2(sameBits(exportedValues(back), dequantizeReference(ours.plan, ours.params, ours.codes)),
                     ours.name.c_str());
        }

        // diff --requantize: every tensor matched to its source, no code differs.
        const QString report = QFileInfo(out).dir().filePath(QStringLiteral("diff.json"));
        const auto d =
            runCli(QStringList{QStringLiteral("diff"), m_model, out, QStringLiteral("--requantize")} + spec +
                       QStringList{QStringLiteral("--report"), report},
                   m_dir.path());
        QVERIFY2(d.code == 0, d.err.constData());
        QFile f(report);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto r = nlohmann::json::parse(f.readAll().toStdString());
        int matched = 0;
        for (const auto& t : r["tensors"]) {
            const std::string name = t["name"].get<std::string>();
            if (std::find(names.begin(), names.end(), name) == names.end()) {
                QCOMPARE(t["matched"].get<std::string>(), std::string("exact")); // the kept bias
                QCOMPARE(t["stats"]["max_abs_error"].get<double>(), 0.0);
                continue;
            }
            ++matched;
            QVERIFY2(!t.contains("error"), t.dump().c_str());
            QCOMPARE(t["matched"].get<std::string>(), std::string("quantlens-export"));
            QVERIFY2(t.contains("codes"), t.dump().c_str());
            const auto& c = t["codes"];
            QCOMPARE(c["compared"].get<std::int64_t>(), elementCount(t["shape"].get<Shape>()));
            QCOMPARE(c["code_mismatches"].get<std::int64_t>(), std::int64_t{0});
            QCOMPARE(c["code_scale_mismatches"].get<std::int64_t>(), std::int64_t{0});
            QCOMPARE(c["code_zero_point_mismatches"].get<std::int64_t>(), std::int64_t{0});
        }
        QCOMPARE(matched, static_cast<int>(names.size()));
    }

    // A name compressed-tensors cannot hold is stored as "<name>.weight" and recorded; two names that
    // would meet are refused with the reason, pointing to the native layout.
    void compressedTensorsNames() {
        const QString out = m_dir.filePath(QStringLiteral("names/q.safetensors"));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("names")));
        const auto q =
            runCli({QStringLiteral("quantize"), m_model, QStringLiteral("--all"), QStringLiteral("--preset"),
                    QStringLiteral("torch"), QStringLiteral("--out"), out},
                   m_dir.path());
        QVERIFY2(q.code == 0, q.err.constData());
        const auto src = openTensorSource(out.toStdString());
        QVERIFY(src->find("conv2d_42.w_0.weight"));
        QVERIFY(src->find("conv2d_42.w_0.weight_scale"));
        QVERIFY(!src->find("conv2d_42.w_0"));
        const auto entries = exportedEntries(*src);
        QCOMPARE(entries.size(), std::size_t{2});
        QCOMPARE(entries[1].description["stored_as"].get<std::string>(), std::string("conv2d_42.w_0.weight"));

        const QString clash = m_dir.filePath(QStringLiteral("clash.safetensors"));
        writeSafetensors(clash.toStdString(), {{"a.weight", Tensor::fromFloats(Shape{8, 8}, gaussian(64, 4))},
                                               {"a", Tensor::fromFloats(Shape{8, 8}, gaussian(64, 5))}});
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("clash")));
        const auto c =
            runCli({QStringLiteral("quantize"), clash, QStringLiteral("--all"), QStringLiteral("--out"),
                    m_dir.filePath(QStringLiteral("clash/q.safetensors"))},
                   m_dir.path());
        QCOMPARE(c.code, 1);
        QVERIFY2(c.err.contains("would both be stored as 'a.weight'") &&
                     c.err.contains("--export-layout native"),
                 c.err.constData());
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("clash/q.safetensors"))));
    }
};

QTEST_GUILESS_MAIN(TestExportRoundtrip)
#include "tst_export_roundtrip.moc"
