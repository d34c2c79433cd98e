// The files a command reads whole (a text to score, token ids, a request, JSON lines): one reader, so
// every command names the path and what is wrong with it in the same words.
#pragma once

#include <string>

namespace tern::app {

// The bytes of `path`; a pipe or /dev/stdin works. A directory, a path that cannot be opened and a read
// that fails end as "PATH: is a directory", "PATH: cannot open: REASON" or "PATH: cannot read: REASON".
std::string read_input_file(const std::string& path);

}  // namespace tern::app
