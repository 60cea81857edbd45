// Export: quantized tensors written as compressed-tensors / native safetensors and as HDF5 are read
// back bit for bit by QuantLens and by Python (struct+json, h5py); failures leave no file behind.
#include "base/error.h"
#include "io/export.h"
#include "io/safetensors_source.h"
#include "io/tensor_source.h"
#include "io_test_util.h"
#include "quant/calibration.h"
#include "quant/packing.h"
#include "quant/reference.h"
#include "quantlens/config.h"

#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

using namespace ql;
using namespace qltest;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(ql::QuantSpec)

namespace {

QuantSpec makeSpec(Preset p, Target t, Scheme s, std::vector<int> axes, bool symmetric = true) {
    QuantSpec spec;
    spec.preset = p;
    spec.target = t;
    spec.scheme = s;
    spec.axes = std::move(axes);
    spec.symmetric = symmetric;
    if (!symmetric) spec.calibration.method = CalibMethod::MinMax;
    return spec;
}

QuantizedTensor quantize(const std::string& name, const QuantSpec& spec, const Shape& shape) {
    std::vector<float> x(static_cast<std::size_t>(elementCount(shape)));
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = std::sin(0.37f * float(i) + 0.1f) * (1.0f + float(i % 7));
    QuantizedTensor q;
    q.name = name;
    q.plan = resolveSpec(spec, shape);
    q.params = calibrate(q.plan, x);
    q.codes = quantizeReference(q.plan, q.params, x);
    return q;
}

template <typename T> std::vector<T> values(const Tensor& t) {
    std::vector<T> v(t.byteSize() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), t.data(), t.byteSize());
    return v;
}

std::vector<std::uint8_t> codeBytes(const Codes& c) {
    return {c.data(), c.data() + c.size() * c.width()};
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const QString& name) const {
        return QString(m_dir.path() + QLatin1Char('/') + name).toStdString();
    }

private slots:
    void roundTrips_data() {
        QTest::addColumn<QuantSpec>("spec");
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<bool>("native");
        QTest::addColumn<QString>("codesName"); // the tensor holding the codes
        QTest::addColumn<QString>("codesDtype");
        QTest::addColumn<QString>("zeroPointDtype"); // empty: symmetric

        const auto torch8 = makeSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0});
        const auto torchU8 = makeSpec(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false);
        const auto ascend4 = makeSpec(Preset::AscendQuant, Target::Int32, Scheme::PerChannel, {1});
        auto group4 = makeSpec(Preset::Custom, Target::Int4, Scheme::PerGroup, {-1});
        group4.groupSize = 8;
        group4.custom = Convention{};
        const auto trtFp8 = makeSpec(Preset::TensorRT, Target::Fp8E4M3, Scheme::PerTensor, {});
        const auto mx4 = makeSpec(Preset::MX, Target::Fp4E2M1, Scheme::Block, {-1});
        const auto nv4 = makeSpec(Preset::NVFP4, Target::Fp4E2M1, Scheme::Block, {-1});
        for (bool native : {false, true}) {
            const char* l = native ? "native" : "compressed-tensors";
            QTest::addRow("%s/torch-int8-per-channel", l) << torch8 << Shape{4, 8} << native << "layer.weight"
                                                          << "I8"
                                                          << "";
            // compressed-tensors keeps integers signed: uint8 codes and zero points shifted by -128.
            QTest::addRow("%s/torch-uint8-asymmetric", l)
                << torchU8 << Shape{3, 5} << native << "layer.weight" << (native ? "U8" : "I8")
                << (native ? "U8" : "I8");
            if (native) // compressed-tensors cannot express an inverse step (tst_compressed_tensors)
                QTest::addRow("%s/ascend-int4-in-int32", l)
                    << ascend4 << Shape{3, 16} << native << "layer.weight_packed"
                    << "I32"
                    << "";
            QTest::addRow("%s/custom-int4-group8", l)
                << group4 << Shape{2, 24} << native << (native ? "layer.weight" : "layer.weight_packed")
                << (native ? "I8" : "I32") << "";
            QTest::addRow("%s/tensorrt-fp8", l) << trtFp8 << Shape{2, 6} << native << "layer.weight"
                                                << "F8_E4M3"
                                                << "";
            QTest::addRow("%s/mx-fp4", l) << mx4 << Shape{2, 64} << native << "layer.weight_packed"
                                          << "U8"
                                          << "";
            QTest::addRow("%s/nvfp4", l) << nv4 << Shape{2, 32} << native << "layer.weight_packed"
                                         << "U8"
                                         << "";
        }
    }
    void roundTrips() {
        QFETCH(QuantSpec, spec);
        QFETCH(Shape, shape);
        QFETCH(bool, native);
        QFETCH(QString, codesName);
        QFETCH(QString, codesDtype);
        QFETCH(QString, zeroPointDtype);
        QuantizedTensor q;
        const std::string file = path(QStringLiteral("export.safetensors"));
        try {
            q = quantize("layer.weight", spec, shape);
            exportSafetensors(file, {q}, native ? ExportLayout::Native : ExportLayout::CompressedTensors);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }

        const auto src = SafetensorsSource::openFile(file);
        const std::string codes = codesName.toStdString();
        const TensorInfo* info = src->find(codes);
        QVERIFY2(info, codes.c_str());
        QCOMPARE(QString::fromLatin1(safetensorsName(info->dtype)), codesDtype);
        const Tensor stored = src->load(codes);
        const bool packed = codesName.endsWith(QLatin1String("_packed"));
        // compressed-tensors' FP4 formats carry no weight_shape: the packed rows give it.
        const bool fp4Rows = !native && q.codes.target() == Target::Fp4E2M1;
        QCOMPARE(src->find("layer.weight_shape") != nullptr, packed && !fp4Rows);
        if (packed && !fp4Rows) QCOMPARE(values<std::int64_t>(src->load("layer.weight_shape")), shape);

        // The codes unpack to exactly what the quantizer produced.
        const Target t = q.codes.target();
        Codes back;
        if (!packed && !native && t == Target::UInt8) {
            std::vector<std::uint8_t> shifted = codeBytes(q.codes);
            for (auto& b : shifted)
                b = static_cast<std::uint8_t>(b - 128);
            QCOMPARE(values<std::uint8_t>(stored), shifted);
        } else if (!packed) {
            QCOMPARE(values<std::uint8_t>(stored), codeBytes(q.codes));
        } else if (!native && (t == Target::Int4 || t == Target::UInt4)) {
            QCOMPARE(unpackCompressedTensors(values<std::int32_t>(stored), shape, t), q.codes);
        } else if (q.plan.convention.packing == Packing::Int32Words) {
            QCOMPARE(unpackInt32Words(values<std::int32_t>(stored), shape), q.codes);
        } else {
            QCOMPARE(unpackNibbles(values<std::uint8_t>(stored), t, q.codes.size()),
                     q.codes); // rows are even here
        }

        // Scales: fp32 values or, for MX / NVFP4, their codes.
        const Tensor scale = src->load("layer.weight_scale");
        if (spec.preset == Preset::MX || spec.preset == Preset::NVFP4) {
            QCOMPARE(values<std::uint8_t>(scale), q.params.scaleCodes);
            QCOMPARE(scale.dtype(), spec.preset == Preset::MX ? DType::U8 : DType::F8E4M3);
        } else {
            QCOMPARE(values<float>(scale), q.params.scales);
        }
        if (spec.preset == Preset::NVFP4) // compressed-tensors divides by its global scale: 1 / s_g
            QCOMPARE(values<float>(src->load("layer.weight_global_scale")),
                     std::vector<float>{native ? q.params.tensorScale
                                               : float(1.0 / double(q.params.tensorScale))});
        if (spec.scheme == Scheme::PerTensor) QCOMPARE(scale.shape(), Shape{1});
        const TensorInfo* zp = src->find("layer.weight_zero_point");
        QCOMPARE(zp != nullptr, !zeroPointDtype.isEmpty());
        if (zp) QCOMPARE(QString::fromLatin1(safetensorsName(zp->dtype)), zeroPointDtype);

        // __metadata__ carries the full plan, and which layout was written.
        const auto meta = nlohmann::json::parse(src->metadata().at("quantlens"));
        QCOMPARE(meta["layout"].get<std::string>(), std::string(native ? "native" : "compressed-tensors"));
        QCOMPARE(meta["tensors"][0]["codes"].get<std::string>(), codes);
        QVERIFY(meta["tensors"][0]["plan"].is_object());
        QCOMPARE(src->metadata().at("format"), std::string("pt"));

        // Python reads the same bytes.
        if (!pythonHas(QStringLiteral("numpy"))) QSKIP("python3 with numpy is not available");
        QString err;
        const auto dump = parseJson(runPython(
            {pythonScript("io_safetensors.py"), QStringLiteral("dump"), QString::fromStdString(file)}, &err));
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(dump["tensors"].size(), src->tensors().size());
        for (const auto& ti : src->tensors()) {
            QCOMPARE(dump["tensors"][ti.name]["hex"].get<std::string>(), toHex(src->load(ti.name)));
            QCOMPARE(dump["tensors"][ti.name]["dtype"].get<std::string>(),
                     std::string(safetensorsName(ti.dtype)));
        }
    }

    void hdf5ReadByH5py() {
        if (!QUANTLENS_HAVE_HDF5) QSKIP("built without HDF5");
        if (!pythonHas(QStringLiteral("h5py, numpy"))) QSKIP("python3 with h5py is not available");
        const QuantizedTensor a =
            quantize("model.layers.0.q_proj.weight",
                     makeSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {4, 8});
        const QuantizedTensor b =
            quantize("model/dense/kernel:0",
                     makeSpec(Preset::Torch, Target::UInt8, Scheme::PerTensor, {}, false), {3, 5});
        const std::string file = path(QStringLiteral("export.h5"));
        exportHdf5(file, {a, b});
        QString err;
        const auto dump = parseJson(runPython(
            {pythonScript("io_hdf5.py"), QStringLiteral("dump"), QString::fromStdString(file)}, &err));
        QVERIFY2(err.isEmpty(), qPrintable(err));
        const auto& d = dump["datasets"];
        QCOMPARE(d["model.layers.0.q_proj.weight/codes"]["hex"].get<std::string>(),
                 toHex(reinterpret_cast<const std::byte*>(a.codes.data()), std::size_t(a.codes.size())));
        QCOMPARE(d["model.layers.0.q_proj.weight/codes"]["shape"].get<Shape>(), (Shape{4, 8}));
        QCOMPARE(
            d["model.layers.0.q_proj.weight/scale"]["hex"].get<std::string>(),
            toHex(reinterpret_cast<const std::byte*>(a.params.scales.data()), a.params.scales.size() * 4));
        QCOMPARE(d["model/dense/kernel:0/zero_point"]["dtype"].get<std::string>(), std::string("|u1"));
        const auto spec =
            nlohmann::json::parse(d["model.layers.0.q_proj.weight"]["attrs"]["spec"].get<std::string>());
        QVERIFY(spec.is_object());
        QCOMPARE(d["model/dense/kernel:0"]["attrs"]["name"].get<std::string>(),
                 std::string("model/dense/kernel:0"));
        // ...and QuantLens' own HDF5 reader lists what it wrote.
        const auto src = openTensorSource(file);
        QVERIFY(src->find("model.layers.0.q_proj.weight/codes"));
        QCOMPARE(src->load("model/dense/kernel:0/codes").dtype(), DType::U8);
    }

    void refusesTheSourceAndLeavesNoPartialFile() {
        const QuantizedTensor good =
            quantize("w", makeSpec(Preset::Torch, Target::Int8, Scheme::PerChannel, {0}), {2, 4});
        QuantizedTensor bad = good;
        bad.name = "broken";
        bad.params.scales.pop_back(); // fewer scales than the plan needs
        const std::string file = path(QStringLiteral("keep.safetensors"));
        writeFile(file, "previous");
        for (bool hdf5 : {false, true}) {
            if (hdf5 && !QUANTLENS_HAVE_HDF5) continue;
            try {
                hdf5 ? exportHdf5(file, {good, bad})
                     : exportSafetensors(file, {good, bad}, ExportLayout::CompressedTensors);
                QFAIL("a broken tensor was exported");
            } catch (const FileError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("'broken'")), e.what());
            }
            QVERIFY_THROWS_EXCEPTION(FileError,
                                     hdf5 ? exportHdf5(file, {good}, file)
                                          : exportSafetensors(file, {good}, ExportLayout::Native, file));
            QCOMPARE(readFile(file), std::string("previous"));
        }
        for (const auto& e : fs::directory_iterator(m_dir.path().toStdString()))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     "temporary file left behind");
    }

    void namesFollowCompressedTensors() {
        const ExportNames n = exportNames("model.layers.0.mlp.down_proj.weight", true);
        QCOMPARE(n.codes, std::string("model.layers.0.mlp.down_proj.weight_packed"));
        QCOMPARE(n.shape, std::string("model.layers.0.mlp.down_proj.weight_shape"));
        QCOMPARE(n.scale, std::string("model.layers.0.mlp.down_proj.weight_scale"));
        QCOMPARE(n.zeroPoint, std::string("model.layers.0.mlp.down_proj.weight_zero_point"));
        QCOMPARE(exportNames("bias", false).codes, std::string("bias"));
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
