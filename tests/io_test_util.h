#pragma once
// Shared by the I/O suites: temporary files, raw safetensors bytes, and running the Python peers
// (numpy / h5py readers and writers under tests/scripts) that check files independently.
#include "tensor/tensor.h"

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTest>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

using ql::Tensor;
Q_DECLARE_METATYPE(std::vector<std::int64_t>)

namespace qltest {

inline std::string toHex(const std::byte* p, std::size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = std::to_integer<unsigned>(p[i]);
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}
inline std::string toHex(const Tensor& t) {
    return toHex(t.data(), t.byteSize());
}

inline std::string fromHex(const std::string& hex) {
    std::string out(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    return out;
}

/// safetensors bytes: 8-byte little-endian length, the header text as given, then the data.
inline std::string safetensorsBytes(const std::string& header, const std::string& data = {}) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i)
        out[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
}

inline void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline QString pythonScript(const char* name) {
    return QStringLiteral(QUANTLENS_TEST_SCRIPTS "/") + QString::fromUtf8(name);
}

/// Runs python3 with a tests/scripts script; returns stdout, or sets `error` (empty on success).
inline QByteArray runPython(const QStringList& args, QString* error, int timeoutMs = 120000) {
    QProcess p;
    p.start(QStringLiteral(QUANTLENS_PYTHON), args);
    if (!p.waitForStarted(10000)) {
        *error = QStringLiteral("cannot start python: ") + p.errorString();
        return {};
    }
    p.waitForFinished(timeoutMs);
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        *error = QStringLiteral("python failed: ") + QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    error->clear();
    return p.readAllStandardOutput();
}

/// True when python3 has the modules a peer script needs.
inline bool pythonHas(const QString& modules) {
    QString err;
    runPython({QStringLiteral("-c"), QStringLiteral("import ") + modules}, &err, 60000);
    return err.isEmpty();
}

inline nlohmann::json parseJson(const QByteArray& bytes) {
    return nlohmann::json::parse(bytes.begin(), bytes.end());
}

} // namespace qltest
