target_sources(quantlens_core PRIVATE
    quant/target.cpp
    quant/layout.cpp
    quant/convention.cpp
    quant/spec.cpp
    quant/presets.cpp
    quant/calibration.cpp
    quant/calibration_search.cpp
    quant/calibration_scan.cpp
    quant/calibration_fast.cpp
    quant/reference.cpp
    quant/packing.cpp
    quant/spec_json.cpp
    quant/weight_role.cpp
    quant/weight_view.cpp)
# The fast calibrators' loops (widening 16-bit input, min / max, key histograms) want the vectoriser;
# they do integer and min / max work only, so their results do not depend on the optimisation level.
set_source_files_properties(quant/calibration_scan.cpp quant/calibration_fast.cpp PROPERTIES COMPILE_OPTIONS ${QUANTLENS_HOT_OPT})
