#include "apps/tern/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <system_error>

#include "core/error.h"

namespace tern::app {

std::string read_input_file(const std::string& path) {
  std::error_code error;
  // Without this check a directory opens and then fails inside the first read, in libstdc++'s words.
  if (std::filesystem::is_directory(path, error)) fail(ErrorKind::kInput, "{}: is a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, "{}: cannot open: {}", path, std::strerror(errno));
  try {
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  } catch (const std::ios_base::failure&) {  // libstdc++'s filebuf throws where read(2) fails
    fail(ErrorKind::kIo, "{}: cannot read: {}", path, std::strerror(errno));
  }
}

}  // namespace tern::app
