#include "core/error.h"

namespace tern {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kIo:
      return "io";
    case ErrorKind::kFormat:
      return "format";
    case ErrorKind::kContract:
      return "contract";
    case ErrorKind::kConfig:
      return "config";
    case ErrorKind::kInput:
      return "input";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kCapacity:
      return "capacity";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace tern
