// The one source of the precompiled-header targets in tests/CMakeLists.txt: compiling it builds the
// header that the suites reuse.
