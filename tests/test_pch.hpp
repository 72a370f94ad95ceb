// The headers every test source parses, precompiled once for all test targets
// (tests/CMakeLists.txt): Catch2 v2's single header and nlohmann-json cost seconds
// a source, and a few standard headers most tests use. Sources still include what
// they use; this only saves the parsing.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>
