#include "tests/support/process_temp.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>

namespace tern::testing_support {

namespace {

struct Registry {
  std::mutex mutex;
  std::set<std::string> paths;
  pid_t owner = ::getpid();
};

// Never destroyed: the exit handler reads it after static destructors may have run.
Registry& registry() {
  static Registry* const instance = new Registry;
  return *instance;
}

void remove_registered() {
  Registry& r = registry();
  if (::getpid() != r.owner) return;  // a forked child that exits leaves its parent's files
  const std::lock_guard lock(r.mutex);
  std::error_code ignored;  // a path no test made a file at
  for (const std::string& path : r.paths) std::filesystem::remove(path, ignored);
}

}  // namespace

std::string process_temp_path(const std::string& name) {
  std::string path =
      (std::filesystem::path(::testing::TempDir()) / fmt::format("tern_{}_{}", ::getpid(), name)).string();
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  static const bool handler_installed = std::atexit(remove_registered) == 0;
  (void)handler_installed;
  r.paths.insert(path);
  return path;
}

}  // namespace tern::testing_support
