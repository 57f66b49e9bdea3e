#pragma once
// The version of this build, from CMake's project(VERSION): `--version` of both binaries, the
// `reverify_build_info` metric and the HTTP `Server:` header.

namespace reverify {

const char* reverify_version();  // "0.1.0"

}  // namespace reverify
