// run_external_measure (measures.h): a user's program judging candidate against reference.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "io/strict_json.h"
#include "tensoracle/npy.h"
#include "workflow/measures.h"

extern char** environ;

namespace tensoracle::workflow {

namespace {

constexpr size_t kMaxOutputBytes = 1 << 16;

struct Captured {
  std::string out;
  int status = 0;
  bool timed_out = false;
};

// Runs argv (looked up in PATH) with stdout captured, stderr shared and stdin closed; kills it
// after `timeout_seconds`.
Result<Captured> run_captured(const std::vector<std::string>& argv, double timeout_seconds) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return io_error("pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return io_error("cannot run '{}': {}", argv[0], std::strerror(spawned));
  }
  Captured c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      c.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      if (c.out.size() < kMaxOutputBytes) c.out.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  while (waitpid(pid, &c.status, 0) < 0)
    if (errno != EINTR) return io_error("waiting for '{}': {}", argv[0], std::strerror(errno));
  return c;
}

}  // namespace

Result<double> run_external_measure(const MeasureSpec& measure, const ArrayView& candidate, const ArrayView& reference,
                                    const std::string& scratch_directory) {
  static std::atomic<int> counter{0};
  const int n = counter++;
  const std::string candidate_path = fmt::format("{}/{}-{}-candidate.npy", scratch_directory, measure.name, n);
  const std::string reference_path = fmt::format("{}/{}-{}-reference.npy", scratch_directory, measure.name, n);
  TO_RETURN_IF_ERROR(write_npy(candidate_path, candidate));
  TO_RETURN_IF_ERROR(write_npy(reference_path, reference));
  std::vector<std::string> argv;
  bool placed = false;
  for (std::string arg : measure.command) {
    for (const auto& [token, path] : {std::pair<std::string, std::string>{"{candidate}", candidate_path},
                                      std::pair<std::string, std::string>{"{reference}", reference_path}}) {
      for (size_t at; (at = arg.find(token)) != std::string::npos; placed = true) arg.replace(at, token.size(), path);
    }
    argv.push_back(arg);
  }
  if (!placed) {
    argv.push_back(candidate_path);
    argv.push_back(reference_path);
  }
  const std::string shown = fmt::format("measure '{}' ({})", measure.name, fmt::join(argv, " "));
  TO_ASSIGN_OR_RETURN(Captured run, run_captured(argv, measure.timeout_seconds));
  unlink(candidate_path.c_str());
  unlink(reference_path.c_str());
  if (run.timed_out) return invalid_argument("{}: no answer within {:g} s (killed)", shown, measure.timeout_seconds);
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0)
    return invalid_argument("{}: {}", shown,
                            WIFEXITED(run.status) ? fmt::format("exit status {}", WEXITSTATUS(run.status))
                                                  : fmt::format("killed by signal {}", WTERMSIG(run.status)));
  auto parsed = parse_strict_json(run.out, shown + " output", 2, StatusCode::kInvalidArgument);
  const nlohmann::json value = parsed.is_ok() ? *std::move(parsed) : nlohmann::json();
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {  // the report convention for values JSON has no numbers for
    const std::string s = value.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  std::string shown_output = run.out.substr(0, 200);
  return invalid_argument("{}: printed '{}', not one JSON number", shown, shown_output);
}

}  // namespace tensoracle::workflow
