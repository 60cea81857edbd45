// The fast analysis pass for the baseline ISA: four float lanes (analyzer_fast.h).
#include "analysis/analyzer_fast_deps.h"

#define QL_ANALYZER_NS baseline
#define QL_ANALYZER_LANES 4
#include "analysis/analyzer_fast.h"
