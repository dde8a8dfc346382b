// The registry of temporary files and the signal handler that removes them.
//
// Async-signal safety: the handler only reads lock-free atomics and fixed char arrays and calls
// unlink(2), sigaction(2) and raise(3), all async-signal-safe. A slot is filled completely before
// it is published (release store), so the handler never unlinks a half-written path. It is retired
// only after its file was renamed into place or removed: at worst the handler then unlinks a
// temporary name that no longer exists (the names hold the pid, so no other process has it).
#include "io/temporary_files.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "tensoracle/output_files.h"

namespace tensoracle {
namespace {

// Enough for every write one process runs at once (each thread writes one file at a time).
constexpr int kSlots = 64;

enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};

Slot g_slots[kSlots];

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

void remove_and_reraise(int signal_number) {
  const int saved_errno = errno;
  remove_temporary_files_now();
  errno = saved_errno;
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  // Blocked while this handler runs; delivered with the default disposition when it returns.
  ::raise(signal_number);
}

}  // namespace

TemporaryFileRegistration::TemporaryFileRegistration(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TemporaryFileRegistration::~TemporaryFileRegistration() {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
}

void remove_temporary_files_now() noexcept {
  for (Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kLive) ::unlink(slot.path);
}

void remove_temporary_files_on_signals() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    for (const int signal_number : kCleanupSignals) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0) continue;
      const bool is_default = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
      if (!is_default) continue;  // ignored (nohup, a background job) or the application's own
      struct sigaction action {};
      action.sa_handler = remove_and_reraise;
      sigemptyset(&action.sa_mask);
      for (const int other : kCleanupSignals) sigaddset(&action.sa_mask, other);
      ::sigaction(signal_number, &action, nullptr);
    }
  });
}

}  // namespace tensoracle
