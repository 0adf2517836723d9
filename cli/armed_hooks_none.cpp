// The product's armed_test_hooks (armed_hooks.h): nothing is ever armed and
// nothing reads the environment.
#include "armed_hooks.h"

namespace dot::cli {

Result<core::TestHooks> armed_test_hooks() { return core::TestHooks{}; }

}  // namespace dot::cli
