// The torch preset against PyTorch itself (Debian python3-torch): random tensors, several scales and
// zero points, qint8 / quint8 / qint32, per-tensor and per-channel. Zero mismatched codes.
#include "quant_test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <random>

using namespace ql;

namespace {

struct Case {
    QString name;
    Target target;
    QString torchDtype;
    bool perChannel;
    int axis;
    Shape shape;
    std::vector<float> x, scales, zeroPoints;
};

std::vector<float> randomTensor(std::mt19937& rng, std::int64_t n, float scale) {
    // A mix of smooth values, exact ties (k + 0.5) * scale, and outliers beyond the range.
    std::normal_distribution<float> normal(0.0f, 40.0f * scale);
    std::uniform_int_distribution<int> kind(0, 9), tie(-300, 300);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x) {
        const int k = kind(rng);
        v = k < 6 ? normal(rng)
                  : (k < 9 ? (static_cast<float>(tie(rng)) + 0.5f) * scale : normal(rng) * 50.0f);
    }
    return x;
}

} // namespace

class TestTorchOracle : public QObject {
    Q_OBJECT
private slots:
    void matchesPyTorch();
};

void TestTorchOracle::matchesPyTorch() {
    std::mt19937 rng(20261121);
    std::uniform_real_distribution<float> scaleDist(0.001f, 0.5f);
    std::vector<Case> cases;
    const struct {
        Target target;
        const char* dtype;
        int zpLo, zpHi;
    } types[] = {{Target::Int8, "qint8", -20, 20},
                 {Target::UInt8, "quint8", 0, 255},
                 {Target::Int32, "qint32", -1000, 1000}};
    for (const auto& t : types) {
        for (int trial = 0; trial < 3; ++trial) {
            std::uniform_int_distribution<int> zpDist(t.zpLo, t.zpHi);
            const float s = scaleDist(rng);
            Case pt{QStringLiteral("%1/per-tensor/%2").arg(QLatin1String(t.dtype)).arg(trial),
                    t.target,
                    QLatin1String(t.dtype),
                    false,
                    0,
                    {33, 65},
                    randomTensor(rng, 33 * 65, s),
                    {s},
                    {float(zpDist(rng))}};
            cases.push_back(pt);
            for (int axis : {0, 1}) {
                Case pc{QStringLiteral("%1/per-channel-axis%2/%3")
                            .arg(QLatin1String(t.dtype))
                            .arg(axis)
                            .arg(trial),
                        t.target,
                        QLatin1String(t.dtype),
                        true,
                        axis,
                        {17, 31},
                        {},
                        {},
                        {}};
                const auto channels = pc.shape[axis];
                for (int c = 0; c < channels; ++c) {
                    pc.scales.push_back(scaleDist(rng));
                    pc.zeroPoints.push_back(float(zpDist(rng)));
                }
                pc.x = randomTensor(rng, 17 * 31, pc.scales[0]);
                cases.push_back(pc);
            }
        }
    }

    QTemporaryDir dir;
    QJsonArray jobs;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const QString input = dir.filePath(QStringLiteral("case%1.f32").arg(i));
        std::ofstream(input.toStdString(), std::ios::binary)
            .write(reinterpret_cast<const char*>(cases[i].x.data()), std::streamsize(cases[i].x.size() * 4));
        QJsonArray shape, scales, zps;
        for (auto d : cases[i].shape)
            shape.append(qint64(d));
        for (float s : cases[i].scales)
            scales.append(double(s));
        for (float z : cases[i].zeroPoints)
            zps.append(double(z));
        jobs.append(QJsonObject{{QStringLiteral("input"), input},
                                {QStringLiteral("shape"), shape},
                                {QStringLiteral("dtype"), cases[i].torchDtype},
                                {QStringLiteral("mode"), cases[i].perChannel ? QStringLiteral("per_channel")
                                                                             : QStringLiteral("per_tensor")},
                                {QStringLiteral("axis"), cases[i].axis},
                                {QStringLiteral("scales"), scales},
                                {QStringLiteral("zero_points"), zps}});
    }
    const QString jobFile = dir.filePath(QStringLiteral("job.json"));
    QFile f(jobFile);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(QJsonObject{{QStringLiteral("cases"), jobs}}).toJson());
    f.close();

    QProcess python;
    python.start(QStringLiteral(QUANTLENS_PYTHON),
                 {QStringLiteral(QUANTLENS_TEST_SCRIPTS "/torch_oracle.py"), jobFile});
    QVERIFY(python.waitForFinished(300000));
    if (python.exitCode() == 3)
        QSKIP(qPrintable(QStringLiteral("python3-torch cannot be imported: ") +
                         QString::fromLocal8Bit(python.readAllStandardError()).trimmed()));
    QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());

    int mismatches = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        auto s = qltest::spec(Preset::Torch, c.target, c.perChannel ? Scheme::PerChannel : Scheme::PerTensor,
                              {c.axis}, false);
        const auto ours = qltest::quantize(s, c.shape, c.x, c.scales, c.zeroPoints);
        std::vector<std::int64_t> theirs(ours.size());
        std::ifstream(dir.filePath(QStringLiteral("case%1.f32.codes").arg(i)).toStdString(), std::ios::binary)
            .read(reinterpret_cast<char*>(theirs.data()), std::streamsize(theirs.size() * 8));
        for (std::size_t k = 0; k < ours.size(); ++k)
            if (ours[k] != theirs[k]) {
                if (++mismatches < 10)
                    qWarning("%s: element %zu x=%.9g ours %d torch %lld", qPrintable(c.name), k,
                             double(c.x[k]), ours[k], static_cast<long long>(theirs[k]));
            }
    }
    QCOMPARE(mismatches, 0);
}

QTEST_GUILESS_MAIN(TestTorchOracle)
#include "tst_torch_oracle.moc"
