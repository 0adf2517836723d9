#pragma once
// The crash, fault and pause points armed for this process (core's
// test_hooks.h). Each executable links exactly one definition:
//   armed_hooks_none.cpp  dot-core and dot-core-docgen: never anything armed;
//   armed_hooks_env.cpp   the test-only dot-core-hooked: the DOT_TEST_*
//                         variables, read by the test-only dot_core_test_hooks.
// So the engine commands are compiled once and the product cannot be armed.
#include "dot/base/result.h"
#include "dot/core/test_hooks.h"

namespace dot::cli {

Result<core::TestHooks> armed_test_hooks();

}  // namespace dot::cli
