// How tensoracle writes the files a caller names: run outputs, converted checkpoints,
// npy/npz/safetensors, engines, bundle manifests.
//
//   TO_RETURN_IF_ERROR(check_output_path("out.npz", {"in.npz", "engine.bin"}));
//   ... long work ...
//   TO_RETURN_IF_ERROR(write_npz("out.npz", outputs));
//
// Every writer goes through one path: a temporary file ".NAME.tmp-*" in the target's directory,
// fsync, rename over the target, fsync of the directory. So
//   - a reader sees the old file or the complete new one, never a part;
//   - only a regular file is ever replaced: a directory, a device node (/dev/null), a FIFO, a
//     socket or a symbolic link at the path is refused, not replaced (a symbolic link would
//     otherwise be swapped for a file, and its target left alone);
//   - on an error nothing is left behind; on SIGINT, SIGTERM or SIGHUP neither, once
//     remove_temporary_files_on_signals() is installed (the CLI installs it; a crash or SIGKILL
//     can still leave a ".NAME.tmp-*" file, which is safe to delete).
// The new file gets mode 0666 minus the umask, like a plain open(2).
#pragma once

#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle {

// Checks, before any work is spent, that `path` can receive an output: its directory exists, the
// path does not name anything but a regular file, and it is none of `inputs` (compared by device
// and inode, so another spelling of the same file, or a hard link to it, is caught). Writers
// repeat the type check just before they replace the file.
Status check_output_path(const std::string& path, const std::vector<std::string>& inputs = {});

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files of writes in
// progress, then re-raise the signal with its default disposition, so the process ends as it
// would have. Signals the process ignores, or handles itself already, are left alone. Idempotent.
void remove_temporary_files_on_signals();

// The same removal, for an application's own signal handler: async-signal-safe.
void remove_temporary_files_now() noexcept;

}  // namespace tensoracle
