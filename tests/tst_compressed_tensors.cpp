// compressed-tensors export: a model run through quantlens-cli with several presets and dtypes is read
// by an independent reader of the library's layout (scripts/ct_reader.py), which must dequantize to
// QuantLens's own x̂; config.json holds the exact quantization_config; the export reads back through
// QuantLens to the same codes and x̂; presets compressed-tensors cannot express are refused and
// write nothing.
//
// Where the results may differ, and by how much:
//  - f32 models: the scale is stored as f32 and x̂ = (q - zp) * s in f32, the same operation as
//    dequantizeValue: bit for bit.
//  - bf16 (f16) models: the scale is stored in the weight's dtype, so the step is rounded to bf16,
//    and the product is rounded to bf16 (compressed-tensors computes in the scale's dtype). The
//    reader's x̂ is then exactly bf16(dequantizeValue(q, bf16(s), zp)), and within 2^-7 (1 + 2^-8) |x̂|
//    of QuantLens's f32 x̂: two roundings to bf16's 8 significant bits, at most 2^-8 relative each.
//  - NVFP4: FP4 values are unpacked to bf16 and the block scale is divided by the stored global
//    scale 1/s_g in f32, where QuantLens multiplies by s_g: x̂ is exactly bf16(v * (S_b / G)) and
//    within 2^-8 (1 + 2^-16) |x̂| of QuantLens's (one bf16 rounding; the f32 quotient is off by an ulp
//    at most).
//  - MXFP4: scales are powers of two, so x̂ is exact in bf16: bit for bit.
#include "base/error.h"
#include "builtin_backends.h"
#include "io/export.h"
#include "io/export_compressed_tensors.h"
#include "io/safetensors_source.h"
#include "io/safetensors_writer.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "job/job.h"
#include "quant/layout.h"
#include "quant/packing.h"
#include "quant/reference.h"
#include "quant/spec_json.h"
#include "tensor/float_formats.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

using namespace ql;
using namespace qltest;
namespace fs = std::filesystem;

namespace {

const char* const kModules[] = {"model.layers.0.self_attn.q_proj", "model.layers.0.mlp.down_proj",
                                "model.layers.0.mlp.gate_proj"};
const Shape kShapes[] = {
    {128, 256}, {64, 256}, {64, 200}}; // gate_proj: 200 columns fit no group of 128, 16 or 32

template <typename T> std::vector<T> values(const Tensor& t) {
    std::vector<T> v(t.byteSize() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), t.data(), t.byteSize());
    return v;
}

float bf16Round(float x) {
    return bf16ToFloat(floatToBf16(x));
}

// What an export holds for one tensor, read back through QuantLens's own safetensors source and
// brought back to QuantLens's meaning (codes and zero points unshifted, one zero point per scale).
struct ReadBack {
    Codes codes;
    std::vector<float> scales;
    std::vector<float> zeroPoints;
    float globalScale = 0.0f;
};

ReadBack readBack(const TensorSource& src, const QuantizedTensor& q, std::int64_t offset) {
    ReadBack r;
    const Target t = q.codes.target();
    const Shape& shape = q.plan.shape;
    const std::string& n = q.name;
    const std::int64_t count = elementCount(shape);
    if (t == Target::Int4 || t == Target::UInt4) {
        r.codes = unpackCompressedTensors(values<std::int32_t>(src.load(n + "_packed")), shape, t);
    } else if (t == Target::Fp4E2M1) {
        const auto bytes = values<std::uint8_t>(src.load(n + "_packed"));
        r.codes = Codes(t, count);
        for (std::int64_t i = 0; i < count; ++i)
            r.codes.set(i, (bytes[static_cast<std::size_t>(i / 2)] >> (4 * (i % 2))) & 0xF);
    } else if (t == Target::Fp8E4M3) {
        const auto bytes = values<std::uint8_t>(src.load(n));
        r.codes = Codes(t, count);
        for (std::int64_t i = 0; i < count; ++i)
            r.codes.set(i, bytes[static_cast<std::size_t>(i)]);
    } else {
        const auto stored = values<std::int8_t>(src.load(n));
        r.codes = Codes(t, count);
        for (std::int64_t i = 0; i < count; ++i)
            r.codes.set(i, stored[static_cast<std::size_t>(i)] - offset);
    }
    const Tensor scale = src.load(n + "_scale");
    if (scale.dtype() == DType::F8E4M3 || scale.dtype() == DType::U8) {
        for (std::uint8_t c : values<std::uint8_t>(scale))
            r.scales.push_back(scale.dtype() == DType::U8 ? decodeE8M0(c)
                                                          : decodeMiniFloat(c, MiniFloat::E4M3FN));
    } else {
        r.scales = scale.toFloatVector();
    }
    if (const TensorInfo* g = src.find(n + "_global_scale"))
        r.globalScale = src.load(g->name).toFloatVector()[0];
    if (const TensorInfo* z = src.find(n + "_zero_point")) {
        const Tensor zt = src.load(z->name);
        const std::int64_t groups = static_cast<std::int64_t>(r.scales.size());
        if (zt.dtype() == DType::I32) { // packed along the rows, +8
            const auto words = values<std::int32_t>(zt);
            const std::int64_t cols = zt.shape()[1];
            for (std::int64_t g = 0; g < groups; ++g) {
                const std::int64_t row = g / cols, col = g % cols;
                const auto w =
                    static_cast<std::uint32_t>(words[static_cast<std::size_t>((row / 8) * cols + col)]);
                r.zeroPoints.push_back(
                    static_cast<float>(static_cast<int>((w >> (4 * (row % 8))) & 0xF) - 8 - offset));
            }
        } else {
            for (std::int8_t z8 : values<std::int8_t>(zt))
                r.zeroPoints.push_back(static_cast<float>(z8 - offset));
        }
    }
    return r;
}

bool runCli(const QStringList& args, QString* err) {
    QProcess p;
    p.start(QStringLiteral(QUANTLENS_CLI), args);
    p.waitForFinished(300000);
    *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

} // namespace

class TestCompressedTensors : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::shared_ptr<BackendRegistry> m_registry = std::make_shared<BackendRegistry>();
    std::string path(const QString& name) const {
        return QString(m_dir.path() + QLatin1Char('/') + name).toStdString();
    }
    std::string model(const QString& dtype) const {
        return path(QStringLiteral("model-") + dtype + QStringLiteral("/model.safetensors"));
    }

    static nlohmann::json sourceConfig() {
        return {{"architectures", {"LlamaForCausalLM"}},
                {"hidden_size", 256},
                {"model_type", "llama"},
                {"torch_dtype", "bfloat16"}};
    }

private slots:
    void initTestCase() {
        registerBuiltinBackends(*m_registry);
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.0f, 0.02f);
        for (const QString& dtype : {QStringLiteral("f32"), QStringLiteral("bf16")}) {
            fs::create_directories(fs::path(model(dtype)).parent_path());
            std::vector<NamedTensor> tensors;
            for (std::size_t m = 0; m < std::size(kModules); ++m) {
                std::vector<float> x(static_cast<std::size_t>(elementCount(kShapes[m])));
                for (auto& v : x)
                    v = normal(rng);
                x[3] = 0.31f; // an outlier, a zero and a row of zeros
                x[5] = 0.0f;
                std::fill(x.begin() + kShapes[m][1], x.begin() + 2 * kShapes[m][1], 0.0f);
                Tensor t = Tensor::fromFloats(kShapes[m], x);
                if (dtype == QLatin1String("bf16")) {
                    t = Tensor(DType::BF16, kShapes[m]);
                    auto* out = reinterpret_cast<std::uint16_t*>(t.mutableData());
                    for (std::size_t i = 0; i < x.size(); ++i)
                        out[i] = floatToBf16(x[i]);
                }
                tensors.push_back({std::string(kModules[m]) + ".weight", std::move(t)});
            }
            const std::vector<float> norm(256, 1.0f);
            tensors.push_back({"model.norm.weight", Tensor::fromFloats({256}, norm)});
            writeSafetensors(model(dtype), tensors);
            writeFile((fs::path(model(dtype)).parent_path() / "config.json").string(),
                      sourceConfig().dump(2));
        }
    }

    void loadersReadWhatQuantLensComputed_data() {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("weights"); // config_groups.group_0.weights, exactly
        // gate_proj (200 columns): "quantized"; "kept" (a dividing block does not fit: passed through and
        // listed in ignore); "absent" (not selected: a short group would be refused)
        QTest::addColumn<QString>("gate");
        QTest::addColumn<QString>("compare"); // exact, bf16-scale, nvfp4

        const auto args = [](const char* text) { return QString::fromLatin1(text).split(QLatin1Char(' ')); };
        const auto weights = [](int bits, const char* type, bool symmetric, const char* strategy, int group,
                                const char* observer) {
            nlohmann::json w = {{"num_bits", bits},       {"type", type},
                                {"symmetric", symmetric}, {"group_size", nullptr},
                                {"strategy", strategy},   {"block_structure", nullptr},
                                {"dynamic", false},       {"actorder", nullptr},
                                {"observer", observer},   {"observer_kwargs", nlohmann::json::object()}};
            if (group) w["group_size"] = group;
            return QString::fromStdString(w.dump());
        };
        for (const QString& dtype : {QStringLiteral("f32"), QStringLiteral("bf16")}) {
            const QString exact =
                dtype == QLatin1String("f32") ? QStringLiteral("exact") : QStringLiteral("bf16-scale");
            const QByteArray d = dtype.toLatin1();
            QTest::addRow("%s/torch-int8-per-channel", d.data())
                << dtype << args("--preset torch --dtype int8 --scheme per-channel --axis 0")
                << "int-quantized" << weights(8, "int", true, "channel", 0, "minmax") << "quantized" << exact;
            QTest::addRow("%s/torch-uint8-asymmetric-per-channel", d.data())
                << dtype
                << args("--preset torch --dtype uint8 --scheme per-channel --axis 0 --asymmetric --calib "
                        "minmax")
                << "int-quantized" << weights(8, "int", false, "channel", 0, "minmax") << "quantized"
                << exact;
            QTest::addRow("%s/tensorrt-int4-block1x128", d.data())
                << dtype << args("--preset tensorrt --dtype int4 --scheme block --block 1,128")
                << "pack-quantized" << weights(4, "int", true, "group", 128, "minmax") << "kept" << exact;
            QTest::addRow("%s/custom-uint4-group128-asymmetric", d.data())
                << dtype
                << args("--preset custom --dtype uint4 --scheme per-group --group-size 128 --axis -1 "
                        "--asymmetric --calib minmax")
                << "pack-quantized" << weights(4, "int", false, "group", 128, "minmax") << "absent" << exact;
            QTest::addRow("%s/tensorrt-fp8-per-tensor", d.data())
                << dtype << args("--preset tensorrt --dtype fp8-e4m3 --scheme per-tensor")
                << "float-quantized" << weights(8, "float", true, "tensor", 0, "minmax") << "quantized"
                << exact;
            QTest::addRow("%s/tensorrt-fp8-per-channel", d.data())
                << dtype << args("--preset tensorrt --dtype fp8-e4m3 --scheme per-channel --axis 0")
                << "float-quantized" << weights(8, "float", true, "channel", 0, "minmax") << "quantized"
                << exact;
            QTest::addRow("%s/nvfp4", d.data())
                << dtype << args("--preset nvfp4") << "nvfp4-pack-quantized"
                << weights(4, "float", true, "tensor_group", 16, "static_minmax") << "kept"
                << "nvfp4";
            QTest::addRow("%s/mxfp4", d.data())
                << dtype << args("--preset mx --dtype fp4-e2m1") << "mxfp4-pack-quantized"
                << weights(4, "float", true, "group", 32, "minmax") << "absent"
                << "exact";
        }
    }

    void loadersReadWhatQuantLensComputed() {
        QFETCH(QString, dtype);
        QFETCH(QStringList, args);
        QFETCH(QString, format);
        QFETCH(QString, weights);
        QFETCH(QString, gate);
        const bool gateKept = gate == QLatin1String("kept");
        QFETCH(QString, compare);
        const QString outDir =
            m_dir.path() + QStringLiteral("/out-") +
            QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char('/'), QLatin1Char('-'));
        fs::create_directories(outDir.toStdString());
        const std::string out = (outDir.toStdString() + "/quantized.safetensors");
        QString err;
        const QStringList cli =
            QStringList{QStringLiteral("quantize"), QString::fromStdString(model(dtype)),
                        QStringLiteral("--match"),
                        gate == QLatin1String("absent") ? QStringLiteral("(q|down)_proj\\.weight$")
                                                        : QStringLiteral("proj\\.weight$")} +
            args + QStringList{QStringLiteral("--out"), QString::fromStdString(out), QStringLiteral("-q")};
        QVERIFY2(runCli(cli, &err), qPrintable(err));

        // (b) config.json: the source's own keys, and quantization_config exactly.
        const nlohmann::json config =
            nlohmann::json::parse(readFile((outDir.toStdString() + "/config.json")));
        const nlohmann::json source = sourceConfig();
        for (const auto& [key, value] : source.items())
            QCOMPARE(config.at(key), value);
        const nlohmann::json& qc = config.at("quantization_config");
        std::vector<std::string> targets = {kModules[0], kModules[1]};
        if (gate == QLatin1String("quantized")) targets.emplace_back(kModules[2]);
        const nlohmann::json ignore = gateKept ? nlohmann::json{kModules[2]} : nlohmann::json::array();
        const nlohmann::json expected = {{"config_groups",
                                          {{"group_0",
                                            {{"targets", targets},
                                             {"weights", nlohmann::json::parse(weights.toStdString())},
                                             {"input_activations", nullptr},
                                             {"output_activations", nullptr},
                                             {"format", format.toStdString()}}}}},
                                         {"format", format.toStdString()},
                                         {"global_compression_ratio", nullptr},
                                         {"ignore", ignore},
                                         {"kv_cache_scheme", nullptr},
                                         {"quant_method", "compressed-tensors"},
                                         {"quantization_status", "compressed"},
                                         {"sparsity_config", nlohmann::json::object()},
                                         {"transform_config", nlohmann::json::object()},
                                         {"version", "0.12.2"}};
        QVERIFY2(qc == expected, (qc.dump() + "\n  expected\n" + expected.dump()).c_str());

        // QuantLens's own x̂: the same spec (from the export's metadata) run in this process.
        const auto src = SafetensorsSource::openFile(out);
        const auto meta = nlohmann::json::parse(src->metadata().at("quantlens"));
        QCOMPARE(meta["layout"].get<std::string>(), std::string("compressed-tensors"));
        JobRequest request;
        request.source = openTensorSource(model(dtype));
        request.registry = m_registry;
        request.spec = specFromJson(meta["tensors"][0]["plan"]); // the plan holds the spec's keys
        std::vector<std::string> names;
        for (const auto& t : meta["tensors"])
            names.push_back(t["name"].get<std::string>());
        ModelJobOptions options;
        options.keepCodes = true;
        const ModelOutcome outcome = runModelJob(request, names, options);
        QCOMPARE(outcome.quantized.size(), targets.size());

        // (a) the independent reader's x̂.
        if (!pythonHas(QStringLiteral("numpy, torch")))
            QSKIP("python3 with numpy and torch is not available");
        const std::string xhatPath = (outDir.toStdString() + "/xhat.safetensors");
        const QByteArray summary = runPython({pythonScript("ct_reader.py"), QStringLiteral("dequantize"),
                                              QString::fromStdString(out), QString::fromStdString(xhatPath)},
                                             &err);
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const auto readerSummary = parseJson(summary);
        QCOMPARE(readerSummary.size(), targets.size());
        const auto xhat = SafetensorsSource::openFile(xhatPath);

        for (std::size_t k = 0; k < outcome.quantized.size(); ++k) {
            const QuantizedTensor& q = outcome.quantized[k];
            const ResolvedSpec& plan = q.plan;
            const std::vector<float> ours = dequantizeReference(plan, q.params, q.codes);
            const std::int64_t offset = meta["tensors"][k]["codes_offset"].get<std::int64_t>();
            QCOMPARE(meta["tensors"][k]["name"].get<std::string>(), q.name);

            // (c) read back through QuantLens: the same codes, zero points and scales.
            const ReadBack back = readBack(*src, q, offset);
            QVERIFY2(back.codes == q.codes, q.name.c_str());
            for (std::size_t g = 0; g < back.zeroPoints.size(); ++g)
                QCOMPARE(back.zeroPoints[g], q.params.zeroPointOf(static_cast<std::int64_t>(g)));
            const bool nvfp4 = compare == QLatin1String("nvfp4");
            const ScaleIndexer index(plan.layout, plan.shape);
            std::vector<float> readX(ours.size());
            for (std::size_t i = 0; i < ours.size(); ++i) {
                const auto g = static_cast<std::size_t>(index.scaleIndexOf(static_cast<std::int64_t>(i)));
                const float zp = back.zeroPoints.empty() ? 0.0f : back.zeroPoints[g];
                readX[i] = dequantizeValue(q.codes.at(static_cast<std::int64_t>(i)),
                                           nvfp4 ? q.params.scales[g] : back.scales[g], zp, plan);
            }
            if (nvfp4) {
                QCOMPARE(back.globalScale,
                         static_cast<float>(1.0 / static_cast<double>(q.params.tensorScale)));
                for (std::size_t g = 0; g < back.scales.size(); ++g)
                    QCOMPARE(back.scales[g] * q.params.tensorScale, q.params.scales[g]);
            }
            if (compare != QLatin1String("bf16-scale"))
                QVERIFY2(std::memcmp(readX.data(), ours.data(), ours.size() * sizeof(float)) == 0,
                         q.name.c_str());

            const Tensor theirsT = xhat->load(q.name);
            QCOMPARE(theirsT.shape(), plan.shape);
            const std::vector<float> theirs = theirsT.toFloatVector();
            std::int64_t sameAsBf16 = 0;
            for (std::size_t i = 0; i < ours.size(); ++i) {
                const auto g = static_cast<std::size_t>(index.scaleIndexOf(static_cast<std::int64_t>(i)));
                float expect = ours[i];
                if (compare == QLatin1String("bf16-scale")) {
                    expect = bf16Round(readX[i]); // the bf16 step, the product rounded to bf16
                } else if (nvfp4) {
                    const float v = decodeMiniFloat(
                        static_cast<std::uint8_t>(q.codes.at(static_cast<std::int64_t>(i))), MiniFloat::E2M1);
                    expect = bf16Round(v * (back.scales[g] / back.globalScale));
                }
                if (floatBits(theirs[i]) != floatBits(expect))
                    QFAIL(qPrintable(QStringLiteral("%1[%2]: reader %3, expected %4 (QuantLens x̂ %5)")
                                         .arg(QString::fromStdString(q.name))
                                         .arg(i)
                                         .arg(double(theirs[i]), 0, 'g', 9)
                                         .arg(double(expect), 0, 'g', 9)
                                         .arg(double(ours[i]), 0, 'g', 9)));
                // The documented tolerance against QuantLens's own f32 x̂ (0 where it is exact).
                const double tolerance = compare == QLatin1String("bf16-scale")
                                             ? std::ldexp(1.0, -7) * (1 + std::ldexp(1.0, -8))
                                         : nvfp4 ? std::ldexp(1.0, -8) * (1 + std::ldexp(1.0, -16))
                                                 : 0.0;
                if (std::fabs(double(theirs[i]) - double(ours[i])) > tolerance * std::fabs(double(ours[i])))
                    QFAIL(qPrintable(
                        QStringLiteral("%1[%2]: %3 is further than the documented tolerance from %4")
                            .arg(QString::fromStdString(q.name))
                            .arg(i)
                            .arg(double(theirs[i]), 0, 'g', 9)
                            .arg(double(ours[i]), 0, 'g', 9)));
                sameAsBf16 += floatBits(theirs[i]) == floatBits(bf16Round(ours[i]));
            }
            if (compare != QLatin1String("exact"))
                qInfo("%s: %lld of %zu values equal QuantLens's x̂ rounded to bf16", q.name.c_str(),
                      static_cast<long long>(sameAsBf16), ours.size());
        }
    }

    void refusedPresetsWriteNothing_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        const auto args = [](const char* text) { return QString::fromLatin1(text).split(QLatin1Char(' ')); };
        QTest::addRow("ascend-quant-inverse-step")
            << args("--preset ascend-quant --dtype int8 --scheme per-channel --axis 0") << "inverse step";
        QTest::addRow("ascend-quant-sqrt-mode")
            << args("--preset ascend-quant --dtype int8 --scheme per-tensor --sqrt-mode") << "sqrt mode";
        QTest::addRow("aclnn-fp8-e5m2")
            << args("--preset aclnn-quantize --dtype fp8-e5m2 --scheme per-tensor") << "E4M3 only";
        QTest::addRow("torch-per-column")
            << args("--preset torch --dtype int8 --scheme per-channel --axis 1") << "not each column";
    }

    void refusedPresetsWriteNothing() {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        const QString outDir =
            m_dir.path() + QStringLiteral("/refused-") + QString::fromLatin1(QTest::currentDataTag());
        fs::create_directories(outDir.toStdString());
        const QString out = outDir + QStringLiteral("/quantized.safetensors");
        QString err;
        const QStringList cli =
            QStringList{QStringLiteral("quantize"), QString::fromStdString(model(QStringLiteral("f32"))),
                        QStringLiteral("--match"), QStringLiteral("proj\\.weight$")} +
            args + QStringList{QStringLiteral("--out"), out, QStringLiteral("-q")};
        QVERIFY(!runCli(cli, &err));
        QVERIFY2(err.contains(QLatin1String("model.layers.0.")) && err.contains(reason) &&
                     err.contains(QLatin1String("--export-layout native")) && err.contains(args[1]),
                 qPrintable(err));
        QVERIFY2(fs::is_empty(outDir.toStdString()), "a refused export left files behind");
        // native stays available for the same spec.
        QVERIFY2(runCli(cli + QStringList{QStringLiteral("--export-layout"), QStringLiteral("native")}, &err),
                 qPrintable(err));
        QVERIFY(fs::exists(out.toStdString()));
        QVERIFY(!fs::exists((outDir.toStdString() + "/config.json")));
    }

    // Never the model's own config.json; never a foreign one; a copy of the source's is updated.
    void configJsonIsWrittenOnlyWhereItMay() {
        const std::string f32 = model(QStringLiteral("f32"));
        const std::string modelConfig = (fs::path(f32).parent_path() / "config.json").string();
        const std::string before = readFile(modelConfig);
        QString err;
        const auto cli = [&](const std::string& out) {
            return QStringList{
                QStringLiteral("quantize"),       QString::fromStdString(f32), QStringLiteral("--match"),
                QStringLiteral("proj\\.weight$"), QStringLiteral("--preset"),  QStringLiteral("torch"),
                QStringLiteral("--out"),          QString::fromStdString(out), QStringLiteral("-q")};
        };
        const std::string inModel = (fs::path(f32).parent_path() / "quantized.safetensors").string();
        QVERIFY(!runCli(cli(inModel), &err));
        QVERIFY2(err.contains(QLatin1String("in the input model's own folder")), qPrintable(err));
        QCOMPARE(readFile(modelConfig), before);
        QVERIFY(!fs::exists(inModel));
        // Nor into a model's folder that has no config.json: one there would make the model itself
        // read as a compressed checkpoint (and loaders take every .safetensors of a folder).
        const std::string bareDir = path(QStringLiteral("bare"));
        fs::create_directories(bareDir);
        fs::copy_file(f32, bareDir + "/model.safetensors");
        QVERIFY(!runCli(QStringList{QStringLiteral("quantize"),
                                    QString::fromStdString(bareDir + "/model.safetensors"),
                                    QStringLiteral("--all"), QStringLiteral("--out"),
                                    QString::fromStdString(bareDir + "/q.safetensors"), QStringLiteral("-q")},
                        &err));
        QVERIFY2(err.contains(QLatin1String("in the input model's own folder")), qPrintable(err));
        QVERIFY(!fs::exists(bareDir + "/config.json") && !fs::exists(bareDir + "/q.safetensors"));
        // The same model opened as its folder (the Hugging Face layout): still its own folder.
        QVERIFY(!runCli(QStringList{QStringLiteral("quantize"), QString::fromStdString(bareDir),
                                    QStringLiteral("--all"), QStringLiteral("--out"),
                                    QString::fromStdString(bareDir + "/q.safetensors"), QStringLiteral("-q")},
                        &err));
        QVERIFY2(err.contains(QLatin1String("in the input model's own folder")), qPrintable(err));
        QVERIFY(!fs::exists(bareDir + "/config.json") && !fs::exists(bareDir + "/q.safetensors"));

        const std::string foreignDir = path(QStringLiteral("foreign"));
        fs::create_directories(foreignDir);
        writeFile(foreignDir + "/config.json", R"({"model_type": "bert"})");
        QVERIFY(!runCli(cli(foreignDir + "/q.safetensors"), &err));
        QVERIFY2(err.contains(QLatin1String("neither a QuantLens export's nor a copy")), qPrintable(err));
        QCOMPARE(readFile(foreignDir + "/config.json"), std::string(R"({"model_type": "bert"})"));
        QVERIFY(!fs::exists(foreignDir + "/q.safetensors"));

        const std::string copyDir = path(QStringLiteral("copy"));
        fs::create_directories(copyDir);
        writeFile(copyDir + "/config.json", before);
        QVERIFY2(runCli(cli(copyDir + "/q.safetensors"), &err), qPrintable(err));
        auto config = nlohmann::json::parse(readFile(copyDir + "/config.json"));
        QCOMPARE(config["quantization_config"]["format"].get<std::string>(), std::string("int-quantized"));
        QCOMPARE(config["model_type"].get<std::string>(), std::string("llama"));
        // Ours now: a second export there replaces it.
        QVERIFY2(runCli(cli(copyDir + "/q.safetensors") +
                            QStringList{QStringLiteral("--dtype"), QStringLiteral("uint8"),
                                        QStringLiteral("--asymmetric"), QStringLiteral("--calib"),
                                        QStringLiteral("minmax")},
                        &err),
                 qPrintable(err));
        config = nlohmann::json::parse(readFile(copyDir + "/config.json"));
        QCOMPARE(
            config["quantization_config"]["config_groups"]["group_0"]["weights"]["symmetric"].get<bool>(),
            false);
    }

    // Without a source config.json the file is minimal; two formats make "mixed-precision".
    void minimalConfigAndMixedPrecision() {
        QuantSpec int8;
        int8.preset = Preset::Torch;
        QuantSpec fp8;
        fp8.preset = Preset::TensorRT;
        fp8.target = Target::Fp8E4M3;
        fp8.scheme = Scheme::PerTensor;
        fp8.axes = {};
        std::vector<QuantizedTensor> tensors;
        const std::vector<float> x(64, 0.5f);
        for (const auto& [name, spec] :
             {std::pair{"a.weight", int8}, std::pair{"b.weight", fp8}, std::pair{"c.weight", int8}}) {
            QuantizedTensor q;
            q.name = name;
            q.plan = resolveSpec(spec, {8, 8});
            q.params.scales.assign(static_cast<std::size_t>(q.plan.scaleCount), 0.25f);
            q.codes = quantizeReference(q.plan, q.params, x);
            tensors.push_back(q);
        }
        const std::string dir = path(QStringLiteral("mixed"));
        fs::create_directories(dir);
        ExportExtras extras;
        extras.kept.push_back({"lm_head.weight", Tensor::fromFloats({2, 2}, std::vector<float>(4, 1.0f))});
        extras.kept.push_back({"d.bias", Tensor::fromFloats({2}, std::vector<float>(2, 1.0f))});
        const auto config =
            compressedTensorsConfig(dir + "/m.safetensors", tensors, extras,
                                    path(QStringLiteral("elsewhere")) + "/no-such-model.safetensors");
        const auto j = nlohmann::json::parse(config.text);
        QCOMPARE(j.size(), std::size_t{2}); // quantization_config and quantlens_export only
        const auto& qc = j["quantization_config"];
        QCOMPARE(qc["format"].get<std::string>(), std::string("mixed-precision"));
        QCOMPARE(qc["config_groups"]["group_0"]["targets"], nlohmann::json({"a", "c"}));
        QCOMPARE(qc["config_groups"]["group_0"]["format"].get<std::string>(), std::string("int-quantized"));
        QCOMPARE(qc["config_groups"]["group_1"]["targets"], nlohmann::json({"b"}));
        QCOMPARE(qc["config_groups"]["group_1"]["format"].get<std::string>(), std::string("float-quantized"));
        QCOMPARE(qc["ignore"], nlohmann::json({"lm_head"}));

        // A name that is not a module's weight is stored as "<name>.weight", its module the target.
        tensors[0].name = "a.kernel";
        const auto mapped = nlohmann::json::parse(
            compressedTensorsConfig(dir + "/m.safetensors", tensors, extras, {}).text)["quantization_config"];
        QCOMPARE(mapped["config_groups"]["group_0"]["targets"], nlohmann::json({"a.kernel", "c"}));
        // Two names that would meet are refused with the reason.
        tensors[1].name = "a.kernel.weight";
        QVERIFY_THROWS_EXCEPTION(FileError,
                                 compressedTensorsConfig(dir + "/m.safetensors", tensors, extras, {}));
    }
};

QTEST_GUILESS_MAIN(TestCompressedTensors)
#include "tst_compressed_tensors.moc"
