// The one source of dot_test_pch (cmake/DotTarget.cmake): the target exists
// to make the precompiled header every test file uses; it compiles nothing.
