// PCF files on disk: how mpcf_pcfs_save puts a file in place and how
// mpcf_pcfs_load reads one (mpcf.h, "Files", states the promises; this is
// where they are kept). The format itself is pcf_file.hpp's.
//
// Saving (POSIX):
//  1. Follow symbolic links from the path to the file they end at (which
//     need not exist: a dangling link creates its target). Refuse anything
//     there but a regular file (directory, FIFO, socket, device), and a
//     regular file the caller may not write.
//  2. Remove stale temporaries of earlier, killed saves from the target's
//     directory: names ".mpcf-save-XXXXXX" that no process holds (flock)
//     and that nobody has written to for an hour (kStaleSeconds). A save
//     holds its temporary locked from its creation to its end, so a save in
//     progress is never taken for stale. A directory is listed only when it
//     changed since this process last found it clean (its mtime), so many
//     saves into one large directory do not list it each time.
//  3. Write the bytes into an unnamed file in that directory (Linux
//     O_TMPFILE), or, where the file system has none, into a named
//     temporary ".mpcf-save-XXXXXX" (6 random letters and digits: never
//     longer than any final name); give it the mode (and, best effort, the
//     owner) of the file it replaces; fsync it.
//  4. Give the unnamed file a short temporary name (linkat) and rename()
//     it over the target; fsync the directory.
// A crash before 4 leaves the old file and, with O_TMPFILE, nothing else;
// a crash between the link and the rename (or a named temporary) leaves a
// ".mpcf-save-" file that a later save removes once it is stale.
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <string>

#include "mpcf/core/pcf_file.hpp"

namespace mpcf::pcf_file {

// A temporary nobody holds is stale once it is this old (seconds since its
// last write).
inline constexpr std::time_t kStaleSeconds = 3600;

// Writes a file of exactly `size` bytes, produced by `write` through the
// sink, to `path` as described above. Throws InvalidArgument naming the path
// and the problem; then `path` is as it was. The testing hooks of mpcf.h
// are read here: MPCF_DEBUG_SAVE_NAMED (use a named temporary, as without
// O_TMPFILE) and MPCF_DEBUG_SAVE_STOP (write half the bytes, then SIGKILL).
void save_file(const std::string& path, std::uint64_t size,
               const std::function<void(Sink&)>& write);

// Reads the file at `path`: a regular file by its length, anything else (a
// pipe, a device) up to the length its header declares (read() with
// kUnknownSize). Throws as read() does, and InvalidArgument for a file that
// cannot be opened or read, or a directory.
Loaded load_file(const std::string& path);

}  // namespace mpcf::pcf_file
