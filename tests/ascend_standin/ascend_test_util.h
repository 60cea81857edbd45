#pragma once
// Helpers of tst_ascend_backend: environment scopes, sample data, specs, code comparison.
#include "backend/backend.h"
#include "quant/calibration.h"

#include <QByteArray>
#include <QString>
#include <random>
#include <string>
#include <vector>

namespace qltest {

using namespace ql;

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class EnvGuard {
public:
    EnvGuard(const char* name, const char* value)
        : m_name(name)
        , m_had(qEnvironmentVariableIsSet(name)) {
        if (m_had) m_old = qgetenv(name);
        if (value)
            qputenv(name, QByteArray(value));
        else
            qunsetenv(name);
    }
    ~EnvGuard() {
        if (m_had)
            qputenv(m_name, m_old);
        else
            qunsetenv(m_name);
    }

private:
    const char* m_name;
    bool m_had;
    QByteArray m_old;
};

inline std::vector<float> sampleValues(std::int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v)
        x = d(rng);
    // Exact halves, zeros and an outlier, so ties, signs and saturation all occur.
    for (std::size_t i = 0; i < v.size(); i += 7)
        v[i] = static_cast<float>(static_cast<int>(i % 9) - 4) + 0.5f;
    if (n > 5) v[5] = 0.0f;
    if (n > 11) v[11] = -40.0f;
    return v;
}

inline QuantSpec makeSpec(const QString& preset, const QString& dtype, const QString& scheme, int axis,
                          bool symmetric) {
    QuantSpec s;
    s.preset = *presetFromName(preset.toStdString());
    s.target = *targetFromName(dtype.toStdString());
    s.scheme = *schemeFromName(scheme.toStdString());
    s.axes = s.scheme == Scheme::PerTensor ? std::vector<int>{} : std::vector<int>{axis};
    s.symmetric = symmetric;
    if (!symmetric) s.calibration.method = CalibMethod::MinMax;
    return s;
}

// npu_group_quant takes its one offset from the caller (it is not calibrated): calibrated scales
// plus a fixed offset that makes ties.
inline void supplyGroupOffset(BackendTask& job, const std::vector<float>& values) {
    const QuantSpec& spec = job.plan.spec;
    if (spec.preset != Preset::NpuGroupQuant || spec.symmetric) return;
    QuantSpec scalesOnly = spec;
    scalesOnly.symmetric = true;
    scalesOnly.calibration.method = CalibMethod::AbsMax;
    QuantParams p = calibrate(resolveSpec(scalesOnly, job.plan.shape), values);
    p.zeroPoints = {-1.25f};
    job.params = p;
}

inline std::string firstMismatch(const Codes& a, const Codes& b, std::int64_t& count) {
    std::string first;
    count = 0;
    for (std::int64_t i = 0; i < a.size() && i < b.size(); ++i)
        if (a.at(i) != b.at(i) && count++ == 0)
            first = "element " + std::to_string(i) + ": ascend " + std::to_string(a.at(i)) + ", reference " +
                    std::to_string(b.at(i));
    return first;
}

} // namespace qltest
