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
    quant/spec_json.cpp)
