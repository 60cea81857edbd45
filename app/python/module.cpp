// The quantlens Python module: core's jobs for NumPy users. Errors are Python
// exceptions carrying the CLI's one-line messages.
#include "backends.h"
#include "base/error.h"
#include "convert.h"
#include "job/spec_options.h"
#include "model.h"
#include "quantize.h"
#include "quantlens/config.h"
#include "spec_keywords.h"

#include <pybind11/pybind11.h>

namespace pb = pybind11;

PYBIND11_MODULE(_quantlens, m) {
    m.doc() = "QuantLens: see what quantization does to model weights (core's jobs from Python).";
    m.attr("__version__") = QUANTLENS_VERSION;
    pb::register_exception_translator(
        [](std::exception_ptr p) { // NOLINT(performance-unnecessary-value-param): pybind11 takes it so
            try {
                if (p) std::rethrow_exception(p);
            } catch (const ql::FileError& e) {
                PyErr_SetString(PyExc_OSError, e.what());
            } catch (const ql::QuantError& e) { // SpecError, UnknownBackend and impossible jobs alike
                PyErr_SetString(PyExc_ValueError, e.what());
            } catch (const ql::Cancelled& e) {
                PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
            } catch (const nlohmann::json::exception& e) {
                PyErr_SetString(PyExc_ValueError, e.what());
            }
        });
    ql::py::registerQuantize(m);
    ql::py::registerModel(m);
    m.def("spec_keywords", &ql::py::specKeywords,
          "The spec keywords, from the table the CLI's SPEC flags come from: (keyword, flag, help, kind)");
    m.def(
        "backends",
        [] {
            pb::list out;
            for (const auto& b : ql::py::registry()->backends()) {
                pb::dict d;
                d["name"] = b->name();
                d["device"] = b->deviceDescription();
                const auto why = b->unavailableReason();
                d["available"] = !why.has_value();
                d["reason"] = why ? pb::object(pb::str(*why)) : pb::object(pb::none());
                out.append(d);
            }
            return out;
        },
        "The backends of this build, as `quantlens-cli backends` lists them");
}
