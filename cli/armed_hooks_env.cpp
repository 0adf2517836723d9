// The test-only dot-core-hooked's armed_test_hooks (armed_hooks.h): the
// DOT_TEST_* variables of this process.
#include "armed_hooks.h"

namespace dot::cli {

Result<core::TestHooks> armed_test_hooks() { return core::TestHooks::from_environment(); }

}  // namespace dot::cli
