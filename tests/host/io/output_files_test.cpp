// Output files (output_files.h): only regular files are replaced, never an input, and a signal
// removes the temporary file of a write in progress.
#include "tensoracle/output_files.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "io/atomic_file.h"
#include "io_test_support.h"

namespace tensoracle {
namespace {

using testing::TempDir;

size_t entries_in(const std::string& directory) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(directory), {}));
}

// Both the early check and the writer refuse `path`, with `what` in the message, and leave it
// as it was.
void expect_refused(const std::string& path, const std::string& what) {
  struct stat before {};
  ASSERT_EQ(::lstat(path.c_str(), &before), 0);
  const Status early = check_output_path(path);
  EXPECT_EQ(early.code(), StatusCode::kInvalidArgument) << early.to_string();
  EXPECT_NE(early.message().find("cannot write '" + path + "': it is " + what), std::string::npos) << early.message();
  const Status written = write_file_atomically(path, "replaced", 8);
  EXPECT_EQ(written.code(), StatusCode::kInvalidArgument) << written.to_string();
  struct stat after {};
  ASSERT_EQ(::lstat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << path << " was replaced";
  EXPECT_EQ(after.st_mode, before.st_mode);
}

TEST(OutputFiles, RefusesEverythingButARegularFile) {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, "a FIFO (named pipe)");

  const std::string directory = dir.file("sub");
  std::filesystem::create_directory(directory);
  expect_refused(directory, "a directory");

  testing::write_bytes(dir.file("target"), "kept");
  const std::string link = dir.file("link");
  std::filesystem::create_symlink(dir.file("target"), link);
  expect_refused(link, "a symbolic link (to '" + dir.file("target") + "')");
  EXPECT_EQ(testing::read_bytes(dir.file("target")), "kept");

  const std::string socket_path = dir.file("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof address.sun_path);
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  expect_refused(socket_path, "a socket");
  ::close(fd);

  // A device node like /dev/null (made here, where a test may: as root, and not in every container).
  const std::string device = dir.file("null");
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) expect_refused(device, "a character device");
  EXPECT_EQ(entries_in(dir.path()), 6u - (std::filesystem::exists(device) ? 0u : 1u)) << "no temporary left behind";
}

TEST(OutputFiles, RefusesAnInputUnderAnySpelling) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("d"));
  const std::string input = dir.file("d/in.npz");
  testing::write_bytes(input, "inputs");
  std::filesystem::create_hard_link(input, dir.file("hard.npz"));
  for (const std::string& output : {input, dir.file("d/../d/./in.npz"), dir.file("hard.npz")}) {
    const Status status = check_output_path(output, {dir.file("other.npz"), input});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << output;
    EXPECT_NE(status.message().find("it is the input '" + input + "'"), std::string::npos) << status.message();
  }
  testing::write_bytes(dir.file("copy.npz"), "inputs");
  EXPECT_TRUE(check_output_path(dir.file("copy.npz"), {input}).is_ok()) << "equal contents are another file";
  EXPECT_TRUE(check_output_path(dir.file("new.npz"), {input}).is_ok());
}

TEST(OutputFiles, NamesAMissingDirectory) {
  TempDir dir;
  const Status status = check_output_path(dir.file("no/out.npz"));
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("its directory '" + dir.file("no") + "' does not exist"), std::string::npos)
      << status.message();
}

// In a child process: a write that is interrupted by `signal_number` halfway through.
[[noreturn]] void write_until_signalled(const std::string& path, int signal_number) {
  remove_temporary_files_on_signals();
  (void)write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
    TO_RETURN_IF_ERROR(writer.write_zeros(size_t{1} << 20));
    ::raise(signal_number);
    return writer.write("never reached");
  });
  ::_exit(0);
}

TEST(OutputFiles, ASignalRemovesTheTemporaryFileAndStillEndsTheProcess) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    TempDir dir;
    const std::string path = dir.file("big.safetensors");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) write_until_signalled(path, signal_number);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << signal_number << ": the child exited with " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_EQ(entries_in(dir.path()), 0u) << "signal " << signal_number << " left the temporary file";
  }
}

TEST(OutputFiles, AnIgnoredSignalStaysIgnored) {
  TempDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGHUP, SIG_IGN);  // as nohup leaves it
    write_until_signalled(dir.file("out.npz"), SIGHUP);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(testing::read_bytes(dir.file("out.npz")).size(), (size_t{1} << 20) + 13);
}

}  // namespace
}  // namespace tensoracle
