// Files a test binary's process shares across its tests (the tiny model every test maps, a command's
// captured output): one path per process, since ctest runs a binary's tests in parallel processes, and
// removed when the process exits, so a run of the suite leaves no files behind.
#pragma once

#include <string>

namespace tern::testing_support {

// `name` under the test temp directory, prefixed with this process's id; the file there, if one is made,
// is removed at exit.
std::string process_temp_path(const std::string& name);

}  // namespace tern::testing_support
