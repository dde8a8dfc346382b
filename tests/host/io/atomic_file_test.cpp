// write_file_atomically: the target holds the old or the complete new contents, never a mix, and
// failures leave nothing behind.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "io_test_support.h"

namespace tensoracle {
namespace {

using testing::TempDir;

size_t entries_in(const std::string& directory) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(directory), {}));
}

TEST(WriteFileAtomically, CreatesAndReplaces) {
  TempDir dir;
  const std::string path = dir.file("f.bin");
  ASSERT_TRUE(write_file_atomically(path, "first", 5).is_ok());
  EXPECT_EQ(testing::read_bytes(path), "first");
  ASSERT_TRUE(write_file_atomically(path, [](AtomicFileWriter& writer) -> Status {
                TO_RETURN_IF_ERROR(writer.write("se"));
                TO_RETURN_IF_ERROR(writer.write_zeros(3));
                EXPECT_EQ(writer.size(), 5u);
                return writer.write("cond");
              }).is_ok());
  EXPECT_EQ(testing::read_bytes(path), std::string("se\0\0\0cond", 9));
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(WriteFileAtomically, AFailingWriterLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("f.bin");
  ASSERT_TRUE(write_file_atomically(path, "old", 3).is_ok());
  Status status = write_file_atomically(path, [](AtomicFileWriter& writer) -> Status {
    TO_RETURN_IF_ERROR(writer.write("partial new contents"));
    return Status(StatusCode::kInvalidArgument, "the producer gave up");
  });
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.message(), "the producer gave up");
  EXPECT_EQ(testing::read_bytes(path), "old");
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(WriteFileAtomically, OverwriteReplacesBytesAlreadyWrittenAndNothingElse) {
  TempDir dir;
  const std::string path = dir.file("f.bin");
  ASSERT_TRUE(write_file_atomically(path, [](AtomicFileWriter& writer) -> Status {
                TO_RETURN_IF_ERROR(writer.write("head:????:tail"));
                TO_RETURN_IF_ERROR(writer.overwrite(5, "1234"));
                EXPECT_EQ(writer.size(), 14u);
                EXPECT_FALSE(writer.overwrite(12, "abc").is_ok()) << "past the end";
                EXPECT_FALSE(writer.overwrite(15, "").is_ok()) << "starts past the end";
                return writer.write("!");
              }).is_ok());
  EXPECT_EQ(testing::read_bytes(path), "head:1234:tail!");
}

// Large files start writeback while being written; the content must not care.
TEST(WriteFileAtomically, WritesLargeFilesInFull) {
  TempDir dir;
  const std::string path = dir.file("big.bin");
  std::string chunk(size_t{3} << 20, '\0');
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>(i * 2654435761u >> 24);
  std::string expected;
  ASSERT_TRUE(write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
                for (int i = 0; i < 9; ++i) {
                  chunk[0] = static_cast<char>(i);
                  expected += chunk;
                  TO_RETURN_IF_ERROR(writer.write(chunk));
                }
                expected.replace(1, 3, "abc");
                return writer.overwrite(1, "abc");
              }).is_ok());
  EXPECT_EQ(testing::read_bytes(path), expected);
}

TEST(WriteFileAtomically, CopyFromAppendsBytesOfAnotherFile) {
  TempDir dir;
  testing::write_bytes(dir.file("source.bin"), "0123456789");
  const int source = ::open(dir.file("source.bin").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(source, 0);
  const std::string path = dir.file("f.bin");
  ASSERT_TRUE(write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
                TO_RETURN_IF_ERROR(writer.write("<"));
                // What the kernel did not copy (all of it, where it cannot), the caller writes.
                TO_ASSIGN_OR_RETURN(const size_t copied, writer.copy_from(source, 3, 4));
                TO_RETURN_IF_ERROR(writer.write(std::string_view("3456").substr(copied)));
                // Past the end of the source: copies what there is.
                TO_ASSIGN_OR_RETURN(const size_t tail, writer.copy_from(source, 8, 5));
                EXPECT_LE(tail, 2u);
                TO_RETURN_IF_ERROR(writer.write(std::string_view("89").substr(tail)));
                EXPECT_EQ(writer.size(), 7u);
                return writer.write(">");
              }).is_ok());
  ::close(source);
  EXPECT_EQ(testing::read_bytes(path), "<345689>");
}

TEST(WriteFileAtomically, HonoursTheUmaskLikeOpen) {
  TempDir dir;
  const mode_t previous = ::umask(022);
  ASSERT_TRUE(write_file_atomically(dir.file("f.bin"), "x", 1).is_ok());
  ::umask(previous);
  struct stat info {};
  ASSERT_EQ(::stat(dir.file("f.bin").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(WriteFileAtomically, ReportsAMissingDirectory) {
  TempDir dir;
  Status status = write_file_atomically(dir.file("no/such/dir/f.bin"), "x", 1);
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("its directory '" + dir.file("no/such/dir") + "' does not exist"), std::string::npos)
      << status.message();
}

TEST(WriteFileAtomically, RefusesADirectoryPath) {
  TempDir dir;
  Status status = write_file_atomically(dir.path() + "/", "x", 1);
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensoracle
