// PCF files on disk: how mpcf_pcfs_load reads one (mpcf.h, "Files", states
// the promises; this is where they are kept). The format itself is
// pcf_file.hpp's.
#pragma once

#include <string>

#include "mpcf/core/pcf_file.hpp"

namespace mpcf::pcf_file {

// Reads the file at `path`: a regular file by its length, anything else (a
// pipe, a device) up to the length its header declares (read() with
// kUnknownSize). Throws as read() does, and InvalidArgument for a file that
// cannot be opened or read, or a directory.
Loaded load_file(const std::string& path);

}  // namespace mpcf::pcf_file
