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

std::mutex registry_mutex;
// Never destroyed: the exit handler reads it after static destructors may have run.
std::set<std::string>* const registered = new std::set<std::string>;
const pid_t owner = ::getpid();

void remove_registered() {
  if (::getpid() != owner) return;  // a forked child that exits leaves its parent's files
  const std::lock_guard lock(registry_mutex);
  std::error_code ignored;  // a path no test made a file at
  for (const std::string& path : *registered) std::filesystem::remove(path, ignored);
}

}  // namespace

std::string process_temp_path(const std::string& name) {
  std::string path =
      (std::filesystem::path(::testing::TempDir()) / fmt::format("tern_{}_{}", ::getpid(), name)).string();
  const std::lock_guard lock(registry_mutex);
  static const bool handler_installed = std::atexit(remove_registered) == 0;
  (void)handler_installed;
  registered->insert(path);
  return path;
}

}  // namespace tern::testing_support
