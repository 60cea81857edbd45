#pragma once
// What analyzer_fast.h uses: each per-ISA build includes it before it changes the target, so the
// shared headers' inline functions are compiled for the baseline ISA everywhere.
#include "analysis/analyzer_isa.h"
#include "analysis/analyzer_steps.h"
#include "analysis/clipping.h"
#include "analysis/error_cells.h"
#include "analysis/error_stats.h"
#include "analysis/histogram_filler.h"
#include "analysis/slice_groups.h"
#include "analysis/worker_counts.h"
#include "base/error.h"
#include "base/workers.h"
#include "quant/inverse_scale.h"
#include "quant/reference.h"
#include "quant/row_walker.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h> // (the AVX2 build widens FP4 codes with one intrinsic)
#endif
