// The headers nearly every suite parses: Qt Test and Qt Core, nlohmann::json and the standard library.
// Precompiled once per build (tests/CMakeLists.txt) instead of once per suite. Only system headers
// belong here: a project header would rebuild every suite each time it changes.
#pragma once

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>
